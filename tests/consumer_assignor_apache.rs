#![cfg(not(target_arch = "wasm32"))]
//! groupcoord's consumer group assignors against Apache Kafka 4.4.0's, case by case, on the
//! groups recorded by `tests/interop/consumer-assignor/record.sh` (no Java needed here). Every
//! case must give the identical assignment (or the identical error message).
//!
//! The recording holds the input as Kafka's coordinator holds it (members in insertion order,
//! subscriptions as topic-name lists, current assignments in record order) and the Java side
//! built the assignor input through Kafka's own hash-based collections, so this test also checks
//! that `java_order` reproduces those iteration orders.
//!
//! One case in detail: `CONSUMER_ASSIGNOR_CASE=<n> cargo test --test consumer_assignor_apache -- --nocapture`

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};

use groupcoord::assignor::consumer::{
    GroupAssignment, GroupSpec, MemberSpec, PartitionAssignor, RangeAssignor, SubscriptionType,
    TopicDescription, TopicId, TopicMetadata, UniformAssignor,
};
use groupcoord::assignor::consumer::{string_hash_map_order, string_hash_set_copy_order};
use serde::Deserialize;

const RECORDING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/interop/consumer-assignor/apache-4.4-outputs.jsonl.gz"
);
const RACKS: [&str; 3] = ["rack-a", "rack-b", "rack-c"];

#[derive(Debug, Deserialize)]
struct Case {
    case: u32,
    previous: String,
    topics: Vec<RecordedTopic>,
    members: Vec<RecordedMember>,
    subscription_type: SubscriptionType,
    uniform: Outcome,
    range: Outcome,
}

#[derive(Debug, Deserialize)]
struct RecordedTopic {
    name: String,
    msb: i64,
    lsb: i64,
    partitions: i32,
    #[serde(default = "yes")]
    exists: bool,
    /// One digit per partition, bit i = a replica in RACKS[i].
    #[serde(default)]
    racks: String,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
struct RecordedMember {
    id: String,
    instance: Option<String>,
    rack: Option<String>,
    subscription: Vec<usize>,
    #[serde(default)]
    assignment: RecordedPartitions,
}

/// Partitions by topic index.
type RecordedPartitions = Vec<(usize, Vec<i32>)>;

#[derive(Debug, Deserialize)]
struct Outcome {
    assignment: Option<BTreeMap<String, RecordedPartitions>>,
    error: Option<String>,
}

type Normalized = BTreeMap<String, BTreeMap<TopicId, BTreeSet<i32>>>;
/// Per member, topics and partitions in Kafka's iteration order (the target assignment record).
type RecordOrders = BTreeMap<String, Vec<(TopicId, Vec<i32>)>>;

fn load_cases() -> Vec<Case> {
    let file = std::fs::File::open(RECORDING).expect("recording present");
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|line| serde_json::from_str(&line.expect("readable")).expect("valid case"))
        .collect()
}

impl Case {
    fn topic_id(&self, index: usize) -> TopicId {
        let topic = &self.topics[index];
        TopicId::new(topic.msb, topic.lsb)
    }

    fn metadata(&self) -> TopicMetadata {
        let topics = self
            .topics
            .iter()
            .filter(|t| t.exists)
            .map(|t| {
                let partition_racks = t
                    .racks
                    .bytes()
                    .map(|digit| {
                        let mask = digit - b'0';
                        RACKS
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| mask & (1 << i) != 0)
                            .map(|(_, r)| r.to_string())
                            .collect()
                    })
                    .collect();
                let description = TopicDescription {
                    name: t.name.clone(),
                    num_partitions: t.partitions,
                    partition_racks,
                };
                (TopicId::new(t.msb, t.lsb), description)
            })
            .collect();
        TopicMetadata { topics }
    }

    /// The GroupSpec in the iteration orders Kafka's coordinator would hand to the assignor.
    fn group_spec(&self) -> GroupSpec {
        let by_id: BTreeMap<&str, &RecordedMember> =
            self.members.iter().map(|m| (m.id.as_str(), m)).collect();
        let order = string_hash_map_order(self.members.iter().map(|m| m.id.as_str()));
        let members: Vec<MemberSpec> = order
            .into_iter()
            .map(|id| {
                let member = by_id[id];
                let names = string_hash_set_copy_order(
                    member
                        .subscription
                        .iter()
                        .map(|t| self.topics[*t].name.as_str()),
                );
                let subscribed_topics = names
                    .into_iter()
                    .map(|name| {
                        let index = self.topics.iter().position(|t| t.name == name).unwrap();
                        self.topic_id(index)
                    })
                    .collect();
                let record: Vec<(TopicId, Vec<i32>)> = member
                    .assignment
                    .iter()
                    .map(|(t, partitions)| (self.topic_id(*t), partitions.clone()))
                    .collect();
                MemberSpec {
                    member_id: member.id.clone(),
                    instance_id: member.instance.clone(),
                    rack_id: member.rack.clone(),
                    subscribed_topics,
                    assignment: MemberSpec::assignment_from_record(&record),
                }
            })
            .collect();
        let subscription_type = GroupSpec::subscription_type_of(&members);
        assert_eq!(
            subscription_type, self.subscription_type,
            "case {}: subscription type",
            self.case
        );
        GroupSpec {
            members,
            subscription_type,
        }
    }

    fn expected_record_orders(&self, outcome: &Outcome) -> Option<RecordOrders> {
        let assignment = outcome.assignment.as_ref()?;
        Some(
            assignment
                .iter()
                .map(|(member, topics)| {
                    let order = topics
                        .iter()
                        .map(|(t, p)| (self.topic_id(*t), p.clone()))
                        .collect();
                    (member.clone(), order)
                })
                .collect(),
        )
    }

    fn expected(&self, outcome: &Outcome) -> Result<Normalized, String> {
        if let Some(error) = &outcome.error {
            return Err(error.clone());
        }
        let assignment = outcome.assignment.as_ref().expect("assignment or error");
        Ok(assignment
            .iter()
            .map(|(member, topics)| {
                let topics = topics
                    .iter()
                    .map(|(t, p)| (self.topic_id(*t), p.iter().copied().collect()))
                    .collect();
                (member.clone(), topics)
            })
            .collect())
    }
}

fn record_orders(assignment: &GroupAssignment) -> RecordOrders {
    assignment
        .members
        .iter()
        .map(|(member, a)| (member.clone(), a.record_order.clone()))
        .collect()
}

fn normalize(assignment: GroupAssignment) -> Normalized {
    assignment
        .members
        .into_iter()
        .map(|(member, mut a)| {
            a.partitions.retain(|_, p| !p.is_empty());
            (member, a.partitions)
        })
        .collect()
}

/// Runs one assignor over every recorded case; fails on the first difference, printing it.
fn compare_all(assignor: &dyn PartitionAssignor, outcome: fn(&Case) -> &Outcome) {
    let only: Option<u32> = std::env::var("CONSUMER_ASSIGNOR_CASE")
        .ok()
        .map(|v| v.parse().expect("CONSUMER_ASSIGNOR_CASE is a case number"));
    let cases = load_cases();
    let mut agreed = 0;
    let mut orders_agreed = 0;
    let mut compared = 0;
    let mut first_difference = None;
    for case in cases.iter().filter(|c| only.is_none_or(|n| c.case == n)) {
        compared += 1;
        let spec = case.group_spec();
        let expected = case.expected(outcome(case));
        let result = assignor.assign(&spec, &case.metadata());
        let actual_orders = result.as_ref().ok().map(record_orders);
        let actual = result.map(normalize).map_err(|e| e.to_string());
        if only.is_some() {
            println!("input: {spec:#?}\nexpected: {expected:?}\nactual:   {actual:?}");
        }
        if actual != expected {
            if first_difference.is_none() {
                first_difference = Some(describe_difference(case, &expected, &actual));
            }
            continue;
        }
        agreed += 1;
        // Same partitions; the record Kafka would write must list them in the same order too.
        let expected_orders = case.expected_record_orders(outcome(case));
        if actual_orders == expected_orders {
            orders_agreed += 1;
        } else if first_difference.is_none() {
            let expected_orders = expected_orders.unwrap_or_default();
            let actual_orders = actual_orders.unwrap_or_default();
            let member = expected_orders
                .keys()
                .find(|m| expected_orders.get(*m) != actual_orders.get(*m))
                .cloned()
                .unwrap_or_default();
            first_difference = Some(format!(
                "case {}\n  same assignment, different record order for member {member}:\n  apache     {:?}\n  groupcoord {:?}",
                case.case,
                expected_orders.get(&member),
                actual_orders.get(&member)
            ));
        }
    }
    println!(
        "{}: {agreed} of {compared} assignments identical to Apache Kafka 4.4, \
         {orders_agreed} of {compared} also in record order",
        assignor.name()
    );
    if let Some(difference) = first_difference {
        panic!(
            "{}: {agreed} of {compared} assignments and {orders_agreed} record orders agree; first difference:\n{difference}\n\
             reproduce: CONSUMER_ASSIGNOR_CASE={} cargo test --test consumer_assignor_apache {} -- --nocapture",
            assignor.name(),
            difference
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("case "),
            assignor.name()
        );
    }
    assert!(compared > 0, "no case selected");
}

fn describe_difference(
    case: &Case,
    expected: &Result<Normalized, String>,
    actual: &Result<Normalized, String>,
) -> String {
    let mut text = format!(
        "case {}\n  {} members, {} topics, {:?}, previous assignment: {}\n",
        case.case,
        case.members.len(),
        case.topics.len(),
        case.subscription_type,
        case.previous
    );
    match (expected, actual) {
        (Ok(expected), Ok(actual)) => {
            let members: BTreeSet<&String> = expected.keys().chain(actual.keys()).collect();
            for member in members {
                if expected.get(member) != actual.get(member) {
                    text += &format!(
                        "  member {member}: apache {:?}\n  {:>width$}  groupcoord {:?}\n",
                        expected.get(member),
                        "",
                        actual.get(member),
                        width = member.len() + 7
                    );
                }
            }
        }
        _ => text += &format!("  apache: {expected:?}\n  groupcoord: {actual:?}\n"),
    }
    text
}

#[test]
fn uniform() {
    compare_all(&UniformAssignor, |case| &case.uniform);
}

#[test]
fn range() {
    compare_all(&RangeAssignor, |case| &case.range);
}

/// The recording covers what the comparison claims to cover.
#[test]
fn recording_covers_the_input_space() {
    let cases = load_cases();
    assert!(cases.len() >= 1000, "{} cases", cases.len());
    let count = |f: &dyn Fn(&Case) -> bool| cases.iter().filter(|c| f(c)).count();
    assert!(count(&|c| c.subscription_type == SubscriptionType::Homogeneous) > 300);
    assert!(count(&|c| c.subscription_type == SubscriptionType::Heterogeneous) > 300);
    assert!(count(&|c| c.topics.iter().any(|t| !t.racks.is_empty())) > 300);
    assert!(count(&|c| c.topics.iter().all(|t| t.racks.is_empty())) > 300);
    assert!(count(&|c| c.members.iter().any(|m| m.instance.is_some())) > 100);
    for previous in ["none", "random", "prior-uniform", "prior-range"] {
        assert!(count(&|c| c.previous == previous) > 200, "{previous}");
    }
    assert!(count(&|c| c.uniform.error.is_some()) > 5);
    assert!(count(&|c| c.members.len() > 40) > 50);
}
