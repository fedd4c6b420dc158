//! Cases from Apache Kafka's own assignor tests (inputs and expected outputs re-stated here), plus
//! the error paths. The broad comparison with Apache is `tests/consumer_assignor_apache.rs`.

use crate::util::map::{BTreeMap, BTreeSet};

use super::*;

fn topic(name: &str) -> TopicId {
    TopicId::from_name(name)
}

fn metadata(topics: &[(&str, i32)]) -> TopicMetadata {
    TopicMetadata {
        topics: topics
            .iter()
            .map(|(name, count)| {
                let description = TopicDescription {
                    name: name.to_string(),
                    num_partitions: *count,
                    partition_racks: Vec::new(),
                };
                (topic(name), description)
            })
            .collect(),
    }
}

fn member(id: &str, subscribed: &[&str], owned: &[(&str, &[i32])]) -> MemberSpec {
    MemberSpec {
        member_id: id.to_string(),
        subscribed_topics: subscribed.iter().map(|t| topic(t)).collect(),
        assignment: owned
            .iter()
            .map(|(t, partitions)| (topic(t), partitions.to_vec()))
            .collect(),
        ..MemberSpec::default()
    }
}

fn group(members: Vec<MemberSpec>) -> GroupSpec {
    let subscription_type = GroupSpec::subscription_type_of(&members);
    GroupSpec {
        members,
        subscription_type,
    }
}

/// Partitions per topic name.
type Owned<'a> = &'a [(&'a str, &'a [i32])];

type Sets = BTreeMap<String, BTreeMap<TopicId, BTreeSet<i32>>>;

fn expect(members: &[(&str, Owned<'_>)]) -> Sets {
    members
        .iter()
        .map(|(id, owned)| {
            let partitions: BTreeMap<TopicId, BTreeSet<i32>> = owned
                .iter()
                .map(|(t, p)| (topic(t), p.iter().copied().collect()))
                .collect();
            (id.to_string(), partitions)
        })
        .collect()
}

/// The partitions of an assignment, without Kafka's iteration order.
fn sets(assignment: Result<GroupAssignment, AssignorError>) -> Sets {
    assignment
        .unwrap()
        .members
        .into_iter()
        .map(|(id, a)| (id, a.partitions))
        .collect()
}

#[test]
fn uniform_homogeneous_rebalances_an_unbalanced_previous_assignment() {
    // OptimizedUniformAssignmentBuilderTest.testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment
    let topics = metadata(&[("t1", 3), ("t2", 3)]);
    let spec = group(vec![
        member("A", &["t1", "t2"], &[("t1", &[0, 1]), ("t2", &[0, 1])]),
        member("B", &["t1", "t2"], &[("t1", &[2]), ("t2", &[2])]),
    ]);
    assert_eq!(spec.subscription_type, SubscriptionType::Homogeneous);
    assert_eq!(
        sets(UniformAssignor.assign(&spec, &topics)),
        expect(&[
            ("A", &[("t1", &[0, 1]), ("t2", &[0])]),
            ("B", &[("t1", &[2]), ("t2", &[1, 2])]),
        ])
    );
}

#[test]
fn uniform_heterogeneous_rebalances_three_members_three_topics() {
    // UniformHeterogeneousAssignmentBuilderTest.testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment
    let topics = metadata(&[("t1", 6), ("t2", 4), ("t3", 4)]);
    let spec = group(vec![
        member("A", &["t1"], &[("t1", &[0, 1, 2])]),
        member("B", &["t1", "t2"], &[("t1", &[3]), ("t2", &[0])]),
        member(
            "C",
            &["t1", "t2", "t3"],
            &[("t1", &[4, 5]), ("t2", &[1, 2, 3]), ("t3", &[0, 1, 2, 3])],
        ),
    ]);
    assert_eq!(spec.subscription_type, SubscriptionType::Heterogeneous);
    assert_eq!(
        sets(UniformAssignor.assign(&spec, &topics)),
        expect(&[
            ("A", &[("t1", &[0, 1, 2, 5])]),
            ("B", &[("t1", &[3]), ("t2", &[0, 1, 2, 3])]),
            ("C", &[("t1", &[4]), ("t3", &[0, 1, 2, 3])]),
        ])
    );
}

#[test]
fn uniform_heterogeneous_hands_out_a_removed_members_partitions() {
    // UniformHeterogeneousAssignmentBuilderTest.testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics
    let topics = metadata(&[("t1", 3), ("t2", 8), ("t3", 3)]);
    let spec = group(vec![
        member("A", &["t1", "t3"], &[("t1", &[0, 1, 2]), ("t3", &[0, 1])]),
        member("B", &["t2"], &[("t2", &[3, 4, 5, 6])]),
    ]);
    assert_eq!(
        sets(UniformAssignor.assign(&spec, &topics)),
        expect(&[
            ("A", &[("t1", &[0, 1, 2]), ("t3", &[0, 1, 2])]),
            ("B", &[("t2", &[0, 1, 2, 3, 4, 5, 6, 7])]),
        ])
    );
}

#[test]
fn range_orders_static_members_first_by_instance_id() {
    // RangeAssignorTest.testMixedStaticMembership: a static member rejoining under a new member id
    // gets the same range.
    let topics = metadata(&[("t1", 5)]);
    let with_instance = |id: &str, instance: Option<&str>| MemberSpec {
        instance_id: instance.map(str::to_string),
        ..member(id, &["t1"], &[])
    };
    let before = group(vec![
        with_instance("A", Some("instanceA")),
        with_instance("B", None),
        with_instance("C", Some("instanceC")),
    ]);
    assert_eq!(
        sets(RangeAssignor.assign(&before, &topics)),
        expect(&[
            ("A", &[("t1", &[0, 1])]),
            ("B", &[("t1", &[4])]),
            ("C", &[("t1", &[2, 3])]),
        ])
    );
    let after = group(vec![
        with_instance("B", None),
        with_instance("C", Some("instanceC")),
        with_instance("memberA1", Some("instanceA")),
    ]);
    assert_eq!(
        sets(RangeAssignor.assign(&after, &topics)),
        expect(&[
            ("B", &[("t1", &[4])]),
            ("C", &[("t1", &[2, 3])]),
            ("memberA1", &[("t1", &[0, 1])]),
        ])
    );
}

#[test]
fn range_heterogeneous_splits_each_topic_among_its_subscribers() {
    let topics = metadata(&[("t1", 3), ("t2", 3), ("t3", 2)]);
    let spec = group(vec![
        member("A", &["t1", "t2"], &[]),
        member("B", &["t3"], &[]),
        member("C", &["t2", "t3"], &[]),
    ]);
    assert_eq!(
        sets(RangeAssignor.assign(&spec, &topics)),
        expect(&[
            ("A", &[("t1", &[0, 1, 2]), ("t2", &[0, 1])]),
            ("B", &[("t3", &[0])]),
            ("C", &[("t2", &[2]), ("t3", &[1])]),
        ])
    );
}

#[test]
fn unknown_topics_fail_with_kafkas_messages() {
    let topics = metadata(&[("t1", 3)]);
    let missing = TopicId::new(0, 1);
    let mut spec = group(vec![member("A", &["t1"], &[])]);
    spec.members[0].subscribed_topics.push(missing);
    assert_eq!(
        UniformAssignor
            .assign(&spec, &topics)
            .unwrap_err()
            .to_string(),
        "Members are subscribed to topic AAAAAAAAAAAAAAAAAAAAAQ which doesn't exist in the topic metadata."
    );
    assert_eq!(
        RangeAssignor
            .assign(&spec, &topics)
            .unwrap_err()
            .to_string(),
        "Member is subscribed to a non-existent topic"
    );
    spec.members.push(member("B", &["t1"], &[]));
    spec.subscription_type = SubscriptionType::Heterogeneous;
    assert!(matches!(
        UniformAssignor.assign(&spec, &topics),
        Err(AssignorError::PartitionAssignor(_))
    ));
}

#[test]
fn empty_groups_and_subscriptions() {
    let topics = metadata(&[("t1", 3)]);
    let empty = group(Vec::new());
    assert_eq!(
        UniformAssignor.assign(&empty, &topics).unwrap(),
        GroupAssignment::default()
    );
    assert_eq!(
        RangeAssignor.assign(&empty, &topics).unwrap(),
        GroupAssignment::default()
    );
    // Nobody subscribes: uniform returns no members at all, range every member with nothing.
    let idle = group(vec![member("A", &[], &[]), member("B", &[], &[])]);
    assert_eq!(
        UniformAssignor.assign(&idle, &topics).unwrap(),
        GroupAssignment::default()
    );
    assert_eq!(
        sets(RangeAssignor.assign(&idle, &topics)),
        expect(&[("A", &[]), ("B", &[])])
    );
}

#[test]
fn hostile_inputs_are_errors_not_panics() {
    let topics = metadata(&[("t1", 3), ("t2", 1)]);
    let twice = group(vec![member("A", &["t1"], &[]), member("A", &["t1"], &[])]);
    assert!(matches!(
        UniformAssignor.assign(&twice, &topics),
        Err(AssignorError::InvalidInput(_))
    ));
    let beyond = group(vec![
        member("A", &["t1"], &[("t1", &[7])]),
        member("B", &["t2"], &[("t2", &[-1])]),
    ]);
    assert!(matches!(
        UniformAssignor.assign(&beyond, &topics),
        Err(AssignorError::InvalidInput(_))
    ));
}

#[test]
fn builtin_names() {
    assert_eq!(DEFAULT_ASSIGNORS, ["uniform", "range"]);
    for name in DEFAULT_ASSIGNORS {
        assert_eq!(builtin_assignor(name).map(|a| a.name()), Some(name));
    }
    assert!(builtin_assignor("sticky").is_none());
}
