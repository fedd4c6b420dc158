#![cfg(not(target_arch = "wasm32"))]
//! Properties Kafka's consumer assignors guarantee, on random groups: every subscribed partition
//! goes to exactly one subscriber; `uniform` balances homogeneous groups to within one partition and
//! lets members keep what they own up to their quota; a settled assignment is a fixed point; `range`
//! gives each subscriber one contiguous range per topic, sized within one of the others.

use std::collections::{BTreeMap, BTreeSet};

use groupcoord::assignor::consumer::{
    GroupAssignment, GroupSpec, MemberSpec, PartitionAssignor, RangeAssignor, SubscriptionType,
    TopicDescription, TopicId, TopicMetadata, UniformAssignor,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Group {
    partitions: Vec<i32>,
    /// Per member, a bit per topic.
    subscriptions: Vec<u32>,
}

fn groups(homogeneous: bool) -> impl Strategy<Value = Group> {
    (prop::collection::vec(0i32..40, 1..6), 1usize..20).prop_flat_map(move |(partitions, n)| {
        let all = (1u32 << partitions.len()) - 1;
        let subscriptions = if homogeneous {
            (1..=all).prop_map(move |mask| vec![mask; n]).boxed()
        } else {
            prop::collection::vec(0..=all, n).boxed()
        };
        subscriptions.prop_map(move |subscriptions| Group {
            partitions: partitions.clone(),
            subscriptions,
        })
    })
}

fn topic(t: usize) -> TopicId {
    TopicId::from_name(&format!("topic-{t}"))
}

impl Group {
    fn metadata(&self) -> TopicMetadata {
        let topics = self
            .partitions
            .iter()
            .enumerate()
            .map(|(t, count)| {
                let description = TopicDescription {
                    name: format!("topic-{t}"),
                    num_partitions: *count,
                    partition_racks: Vec::new(),
                };
                (topic(t), description)
            })
            .collect();
        TopicMetadata { topics }
    }

    fn subscribed(&self, member: usize) -> Vec<TopicId> {
        (0..self.partitions.len())
            .filter(|t| self.subscriptions[member] & (1 << t) != 0)
            .map(topic)
            .collect()
    }

    /// The group with `previous` as each member's current assignment (members missing from it own
    /// nothing), leaving out the members in `gone`.
    fn spec(&self, previous: &GroupAssignment, gone: &BTreeSet<usize>) -> GroupSpec {
        let members: Vec<MemberSpec> = (0..self.subscriptions.len())
            .filter(|m| !gone.contains(m))
            .map(|m| {
                let id = format!("member-{m}");
                let assignment = previous
                    .members
                    .get(&id)
                    // As Kafka would after writing and replaying the target assignment record.
                    .map(|a| MemberSpec::assignment_from_record(&a.record_order))
                    .unwrap_or_default();
                MemberSpec {
                    member_id: id,
                    subscribed_topics: self.subscribed(m),
                    assignment,
                    ..MemberSpec::default()
                }
            })
            .collect();
        let subscription_type = GroupSpec::subscription_type_of(&members);
        GroupSpec {
            members,
            subscription_type,
        }
    }
}

/// Every partition of a subscribed topic is assigned once, to a subscriber; nothing else is.
fn check_valid(spec: &GroupSpec, topics: &TopicMetadata, assignment: &GroupAssignment) {
    let mut expected: BTreeSet<(TopicId, i32)> = BTreeSet::new();
    for member in &spec.members {
        for t in &member.subscribed_topics {
            expected.extend((0..topics.num_partitions(t).unwrap()).map(|p| (*t, p)));
        }
    }
    let mut seen = BTreeSet::new();
    for (id, owned) in &assignment.members {
        let member = spec.members.iter().find(|m| &m.member_id == id).unwrap();
        for (t, partitions) in &owned.partitions {
            assert!(
                member.subscribed_topics.contains(t),
                "{id} got an unsubscribed topic"
            );
            for p in partitions {
                assert!(seen.insert((*t, *p)), "{t} {p} assigned twice");
            }
        }
    }
    assert_eq!(seen, expected, "assigned partitions");
}

/// Partitions per member, without Kafka's iteration order.
fn sets(assignment: &GroupAssignment) -> BTreeMap<&str, &BTreeMap<TopicId, BTreeSet<i32>>> {
    assignment
        .members
        .iter()
        .map(|(id, a)| (id.as_str(), &a.partitions))
        .collect()
}

fn loads(spec: &GroupSpec, assignment: &GroupAssignment) -> Vec<usize> {
    spec.members
        .iter()
        .map(|m| assignment.members.get(&m.member_id).map_or(0, |a| a.len()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn uniform_homogeneous_is_valid_balanced_and_sticky(
        group in groups(true),
        gone in prop::collection::btree_set(0usize..20, 0..3),
    ) {
        let topics = group.metadata();
        let fresh = group.spec(&GroupAssignment::default(), &BTreeSet::new());
        prop_assert_eq!(fresh.subscription_type, SubscriptionType::Homogeneous);
        let first = UniformAssignor.assign(&fresh, &topics).unwrap();
        check_valid(&fresh, &topics, &first);
        let first_loads = loads(&fresh, &first);
        prop_assert!(first_loads.iter().max().unwrap() - first_loads.iter().min().unwrap() <= 1);

        // Settled: a rerun changes nothing.
        let again = UniformAssignor.assign(&group.spec(&first, &BTreeSet::new()), &topics).unwrap();
        prop_assert_eq!(sets(&again), sets(&first));

        // Members leave: still valid and balanced, and each stayer keeps what it owned up to the
        // smaller quota.
        let gone: BTreeSet<usize> = gone.into_iter().filter(|m| *m < group.subscriptions.len()).collect();
        let after = group.spec(&first, &gone);
        if after.members.is_empty() {
            return Ok(());
        }
        let second = UniformAssignor.assign(&after, &topics).unwrap();
        check_valid(&after, &topics, &second);
        let second_loads = loads(&after, &second);
        prop_assert!(second_loads.iter().max().unwrap() - second_loads.iter().min().unwrap() <= 1);
        let total: usize = second_loads.iter().sum();
        let quota = total / after.members.len();
        for member in &after.members {
            let before = &first.members[&member.member_id];
            let now = &second.members[&member.member_id];
            let kept = before
                .partitions
                .iter()
                .map(|(t, p)| now.partitions.get(t).map_or(0, |n| n.intersection(p).count()))
                .sum::<usize>();
            prop_assert!(kept >= before.len().min(quota), "{} kept {kept} of {}", member.member_id, before.len());
        }
    }

    #[test]
    fn uniform_heterogeneous_is_valid_and_settles(group in groups(false)) {
        let topics = group.metadata();
        let fresh = group.spec(&GroupAssignment::default(), &BTreeSet::new());
        let first = UniformAssignor.assign(&fresh, &topics).unwrap();
        check_valid(&fresh, &topics, &first);
        let again = UniformAssignor.assign(&group.spec(&first, &BTreeSet::new()), &topics).unwrap();
        check_valid(&fresh, &topics, &again);
        // No member gains or loses partitions of a topic once settled.
        let third = UniformAssignor.assign(&group.spec(&again, &BTreeSet::new()), &topics).unwrap();
        prop_assert_eq!(sets(&third), sets(&again));
    }

    #[test]
    fn range_gives_contiguous_balanced_ranges(group in groups(false)) {
        let topics = group.metadata();
        let spec = group.spec(&GroupAssignment::default(), &BTreeSet::new());
        let assignment = RangeAssignor.assign(&spec, &topics).unwrap();
        check_valid(&spec, &topics, &assignment);
        let mut sizes: BTreeMap<TopicId, Vec<usize>> = BTreeMap::new();
        for member in &spec.members {
            let owned = &assignment.members[&member.member_id];
            for t in &member.subscribed_topics {
                let partitions = owned.partitions.get(t);
                let size = partitions.map_or(0, BTreeSet::len);
                if let Some(p) = partitions {
                    let (first, last) = (*p.first().unwrap(), *p.last().unwrap());
                    prop_assert_eq!((last - first + 1) as usize, size, "not contiguous");
                }
                sizes.entry(*t).or_default().push(size);
            }
        }
        for s in sizes.values() {
            prop_assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }
}

/// The same group with racks on every member and on every partition's replicas.
fn with_racks(spec: &GroupSpec, topics: &TopicMetadata) -> (GroupSpec, TopicMetadata) {
    let rack = |i: usize| format!("rack-{}", i % 3);
    let mut spec = spec.clone();
    for (i, m) in spec.members.iter_mut().enumerate() {
        m.rack_id = Some(rack(i));
    }
    let mut topics = topics.clone();
    for d in topics.topics.values_mut() {
        d.partition_racks = (0..d.num_partitions.max(0) as usize)
            .map(|p| [rack(p), rack(p + 1)].into_iter().collect())
            .collect();
    }
    (spec, topics)
}

/// A member's partitions in Kafka's record order.
type RecordOrder = Vec<(TopicId, Vec<i32>)>;

/// Partitions per member in Kafka's record order too: equal outputs, not only equal sets.
fn exact(assignment: &GroupAssignment) -> Vec<(&str, &RecordOrder)> {
    assignment
        .members
        .iter()
        .map(|(id, a)| (id.as_str(), &a.record_order))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Kafka 4.4's `uniform` and `range` read no rack (docs/consumer-protocol.md §K3.7): the same
    /// group with member and partition racks gets exactly the same assignment, round after round.
    #[test]
    fn racks_change_no_assignment(group in prop_oneof![groups(true), groups(false)]) {
        let topics = group.metadata();
        let assignors: [&dyn PartitionAssignor; 2] = [&UniformAssignor, &RangeAssignor];
        for assignor in assignors {
            let fresh = group.spec(&GroupAssignment::default(), &BTreeSet::new());
            let (racked, racked_topics) = with_racks(&fresh, &topics);
            let plain = assignor.assign(&fresh, &topics).unwrap();
            let with = assignor.assign(&racked, &racked_topics).unwrap();
            prop_assert_eq!(sets(&plain), sets(&with));
            prop_assert_eq!(exact(&plain), exact(&with));
            // A second round from the first round's assignment.
            let next = group.spec(&plain, &BTreeSet::new());
            let (racked_next, _) = with_racks(&next, &topics);
            let plain2 = assignor.assign(&next, &topics).unwrap();
            let with2 = assignor.assign(&racked_next, &racked_topics).unwrap();
            prop_assert_eq!(exact(&plain2), exact(&with2));
        }
    }
}
