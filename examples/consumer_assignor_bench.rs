//! Times the consumer group assignors on a large group: M members subscribed to T topics sharing
//! P partitions, first a fresh assignment, then a sticky one after the last member left. The same
//! group as `tests/interop/consumer-assignor/record.sh bench`, which times Apache Kafka 4.4.
//!
//!   cargo run --release --example consumer_assignor_bench [members] [partitions] [topics]

use std::time::{Duration, Instant};

use groupcoord::assignor::consumer::{
    GroupAssignment, GroupSpec, MemberSpec, PartitionAssignor, RangeAssignor, TopicDescription,
    TopicId, TopicMetadata, UniformAssignor,
};
use groupcoord::assignor::consumer::{string_hash_map_order, string_hash_set_copy_order};

/// A member's partitions by topic, in record order.
type Owned = Vec<(TopicId, Vec<i32>)>;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numeric argument"))
        .collect();
    let members = args.first().copied().unwrap_or(1000);
    let partitions = args.get(1).copied().unwrap_or(10_000);
    let topic_count = args.get(2).copied().unwrap_or(10);

    let names: Vec<String> = (0..topic_count).map(|t| format!("topic-{t}")).collect();
    let id_of = |t: usize| TopicId::new(t as i64 + 1, 42);
    let metadata = TopicMetadata {
        topics: (0..topic_count)
            .map(|t| {
                let count = partitions / topic_count + usize::from(t < partitions % topic_count);
                let description = TopicDescription {
                    name: names[t].clone(),
                    num_partitions: count as i32,
                    partition_racks: Vec::new(),
                };
                (id_of(t), description)
            })
            .collect(),
    };
    let index_of = |name: &str| names.iter().position(|n| n == name).expect("known topic");

    let assignors: [&dyn PartitionAssignor; 2] = [&UniformAssignor, &RangeAssignor];
    for assignor in assignors {
        for heterogeneous in [false, true] {
            let member_ids: Vec<String> = (0..members).map(|m| format!("member-{m:04}")).collect();
            let subscription = |m: usize| -> Vec<TopicId> {
                let subscribed = (0..topic_count)
                    .filter(|t| !(heterogeneous && topic_count > 1 && *t == m % topic_count))
                    .map(|t| names[t].as_str());
                string_hash_set_copy_order(subscribed)
                    .into_iter()
                    .map(|name| id_of(index_of(name)))
                    .collect()
            };
            let spec_of = |ids: &[String], assignment: &dyn Fn(&str) -> Owned| {
                let members: Vec<MemberSpec> =
                    string_hash_map_order(ids.iter().map(String::as_str))
                        .into_iter()
                        .map(|id| {
                            let m: usize = id["member-".len()..].parse().expect("numbered member");
                            MemberSpec {
                                member_id: id.to_string(),
                                subscribed_topics: subscription(m),
                                assignment: MemberSpec::assignment_from_record(&assignment(id)),
                                ..MemberSpec::default()
                            }
                        })
                        .collect();
                let subscription_type = GroupSpec::subscription_type_of(&members);
                GroupSpec {
                    members,
                    subscription_type,
                }
            };
            let fresh = spec_of(&member_ids, &|_| Vec::new());
            let first = assignor.assign(&fresh, &metadata).expect("assignable");
            let remaining = &member_ids[..member_ids.len() - 1];
            let sticky = spec_of(remaining, &|id| {
                // Kafka's record order, as the Java side passes it.
                first.members[id].record_order.clone()
            });
            let label = format!(
                "{} {}",
                assignor.name(),
                if heterogeneous {
                    "heterogeneous"
                } else {
                    "homogeneous"
                }
            );
            report(&format!("{label} fresh "), || {
                assignor.assign(&fresh, &metadata).expect("assignable");
            });
            report(&format!("{label} sticky"), || {
                assignor.assign(&sticky, &metadata).expect("assignable");
            });
            let second = assignor.assign(&sticky, &metadata).expect("assignable");
            println!(
                "rust {label:<32} digest fresh {:x} sticky {:x}",
                digest(&first),
                digest(&second)
            );
        }
    }
}

fn report(label: &str, mut run: impl FnMut()) {
    for _ in 0..5 {
        run();
    }
    let mut samples: Vec<Duration> = (0..30)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    samples.sort();
    println!(
        "rust {label:<32} median {:8.3} ms  min {:8.3} ms",
        samples[samples.len() / 2].as_secs_f64() * 1e3,
        samples[0].as_secs_f64() * 1e3
    );
}

/// FNV-1a (64 bit) of the assignment in record order; the Java recorder's bench mode prints the
/// same digest for Apache's output (see `RecordAssignments.digest`).
fn digest(assignment: &GroupAssignment) -> u64 {
    let mut text = String::new();
    for (member, owned) in &assignment.members {
        text += member;
        text.push(':');
        for (topic, partitions) in &owned.record_order {
            text += &format!("{}/", topic.most_significant_bits);
            for p in partitions {
                text += &format!("{p},");
            }
            text.push(';');
        }
        text.push('\n');
    }
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
