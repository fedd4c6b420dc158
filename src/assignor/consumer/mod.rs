//! Server-side partition assignors of consumer groups (KIP-848): `uniform` (Kafka 4.4's default,
//! first in `group.consumer.assignors`) and `range`. Each gives Apache Kafka 4.4's exact
//! assignment for the same input, which is why the input carries iteration orders: wherever the
//! Java code iterates a hash-based collection and the order changes the result, [`GroupSpec`]
//! takes that order explicitly and [`string_hash_map_order`] and its siblings compute it the way Kafka's coordinator builds
//! those collections.
//!
//! The output keeps, besides the partition sets, Kafka's iteration order of each member's
//! assignment ([`MemberAssignment::record_order`]): Kafka writes the target assignment record in
//! that order and the next run reads it back from there, so a caller that writes its records in
//! this order and rebuilds inputs with [`MemberSpec::assignment_from_record`] stays on Kafka's path
//! round after round.
//!
//! Topic ids: the assignors break ties and iterate by topic id, so Kafka's assignment for a group
//! depends on its topics' ids. A caller without Kafka's ids can use [`TopicId::from_name`]
//! (deterministic); it then gets Kafka's assignment for a cluster whose topics carry those ids.
//!
//! Racks: Kafka 4.4's `uniform` and `range` assignors read neither member racks nor partition
//! racks (rack-aware assignment was dropped from them before 4.0), so racks are carried in the input
//! for future assignors but never change the result here — the Apache comparison checks this with
//! racks on and off.

pub(crate) mod java_order;
mod range;
#[cfg(test)]
mod tests;
mod topic_id;
mod uniform_heterogeneous;
mod uniform_homogeneous;

use crate::util::map::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub use java_order::{string_hash_map_order, string_hash_set_copy_order};
pub use range::RangeAssignor;
pub use topic_id::TopicId;

/// Names in the order of Kafka 4.4's default `group.consumer.assignors`; the first is the default.
pub const DEFAULT_ASSIGNORS: [&str; 2] = [UniformAssignor::NAME, RangeAssignor::NAME];

/// Whether every member subscribes to the same topics (Kafka's `SubscriptionType`); the group
/// keeps this up to date and the assignors pick their algorithm by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubscriptionType {
    /// Every member subscribes to the same topics.
    Homogeneous,
    /// Members subscribe to different topics.
    Heterogeneous,
}

/// One member as the assignor sees it (Kafka's `MemberSubscription` + `MemberAssignment`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberSpec {
    /// The member id.
    pub member_id: String,
    /// The static membership id, if any.
    pub instance_id: Option<String>,
    /// The member's rack, for rack-aware placement.
    pub rack_id: Option<String>,
    /// Subscribed topics in the order Kafka iterates the member's subscription (for Kafka's
    /// coordinator: the topic names in `java_order::string_hash_set_copy_order`, mapped to ids).
    pub subscribed_topics: Vec<TopicId>,
    /// The member's current target assignment, topics and partitions in Kafka's iteration order
    /// (for an assignment replayed from its record: see [`MemberSpec::assignment_from_record`]).
    pub assignment: Vec<(TopicId, Vec<i32>)>,
}

impl MemberSpec {
    /// The iteration order Kafka has for an assignment replayed from a
    /// `ConsumerGroupTargetAssignmentMember` record (`Assignment.fromRecord`: a `HashMap` filled in
    /// record order, each partition list copied into a `HashSet`).
    pub fn assignment_from_record(record: &[(TopicId, Vec<i32>)]) -> Vec<(TopicId, Vec<i32>)> {
        let mut topics = java_order::JavaHashTable::new();
        // Collectors.toMap rejects a repeated topic (a record never has one); here the first wins.
        let mut partitions_of: rustc_hash::FxHashMap<TopicId, &Vec<i32>> = Default::default();
        for (topic, partitions) in record {
            topics.insert(topic.java_hash_code(), *topic);
            partitions_of.entry(*topic).or_insert(partitions);
        }
        topics
            .into_keys()
            .into_iter()
            .map(|topic| {
                let partitions = partitions_of[&topic].iter().copied();
                (topic, java_order::int_hash_set_copy_order(partitions))
            })
            .collect()
    }
}

/// The group handed to an assignor: members in the order Kafka's `GroupSpec.memberIds()`
/// iterates them (for Kafka's coordinator: `java_order::string_hash_map_order` of the members).
///
/// Kafka's homogeneous `uniform` asks the group's inverted target assignment whether a partition
/// has an owner; here that is derived from the members' assignments, which is the same as long as
/// the caller has dropped departed members' target assignments (as Kafka's tombstones do) first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSpec {
    /// The members, in the order Kafka's group iterates them.
    pub members: Vec<MemberSpec>,
    /// Whether the subscriptions are all the same.
    pub subscription_type: SubscriptionType,
}

impl GroupSpec {
    /// The subscription type Kafka's group would report for these members.
    pub fn subscription_type_of(members: &[MemberSpec]) -> SubscriptionType {
        let mut sets = members
            .iter()
            .map(|m| crate::util::sort::collect_set(m.subscribed_topics.iter()));
        match sets.next() {
            Some(first) if sets.all(|s| s == first) => SubscriptionType::Homogeneous,
            Some(_) => SubscriptionType::Heterogeneous,
            None => SubscriptionType::Homogeneous,
        }
    }

    fn check_unique_members(&self) -> Result<(), AssignorError> {
        let mut seen = BTreeSet::new();
        for member in &self.members {
            if !seen.insert(member.member_id.as_str()) {
                return Err(AssignorError::InvalidInput(format!(
                    "member {} appears twice",
                    member.member_id
                )));
            }
        }
        Ok(())
    }
}

/// What the assignor knows of one topic (Kafka's `SubscribedTopicDescriber`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicDescription {
    /// The topic name.
    pub name: String,
    /// Its partition count.
    pub num_partitions: i32,
    /// Racks of each partition's replicas, by partition (may be empty: unknown).
    pub partition_racks: Vec<BTreeSet<String>>,
}

/// The topics of the cluster, by id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicMetadata {
    /// Topic id -> description.
    pub topics: BTreeMap<TopicId, TopicDescription>,
}

impl TopicMetadata {
    /// `numPartitions`, `None` where Kafka answers -1 (unknown topic).
    pub fn num_partitions(&self, topic: &TopicId) -> Option<i32> {
        self.topics.get(topic).map(|t| t.num_partitions.max(0))
    }

    /// The racks of one partition's replicas, if known.
    pub fn racks_for_partition(
        &self,
        topic: &TopicId,
        partition: i32,
    ) -> Option<&BTreeSet<String>> {
        let index = usize::try_from(partition).ok()?;
        self.topics.get(topic)?.partition_racks.get(index)
    }
}

/// Partitions per topic of one member.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberAssignment {
    /// Topic -> partitions.
    pub partitions: BTreeMap<TopicId, BTreeSet<i32>>,
    /// The same partitions in the order Kafka's assignor output iterates them, which is the order
    /// Kafka writes the member's target assignment record in (and so, after a replay, decides the
    /// next run's input order: see [`MemberSpec::assignment_from_record`]).
    pub record_order: Vec<(TopicId, Vec<i32>)>,
}

impl MemberAssignment {
    /// From the output in Kafka's iteration order.
    pub fn from_record_order(record_order: Vec<(TopicId, Vec<i32>)>) -> Self {
        let mut partitions: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
        for (topic, owned) in &record_order {
            partitions
                .entry(*topic)
                .or_default()
                .extend(owned.iter().copied());
        }
        partitions.retain(|_, p| !p.is_empty());
        MemberAssignment {
            partitions,
            record_order,
        }
    }

    /// The number of partitions.
    pub fn len(&self) -> usize {
        self.partitions.values().map(BTreeSet::len).sum()
    }

    /// Whether the member has no partition.
    pub fn is_empty(&self) -> bool {
        self.partitions.values().all(BTreeSet::is_empty)
    }
}

/// The target assignment by member id. Like Kafka's, it may leave members out (an empty group, or
/// nobody subscribed to anything); a caller treats a missing member as assigned nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupAssignment {
    /// Member id -> its assignment.
    pub members: BTreeMap<String, MemberAssignment>,
}

impl GroupAssignment {
    /// Every member's partitions; the record order is the original's where Kafka never copied the
    /// member's assignment, else the copy's.
    fn from_uniform(
        group: &GroupSpec,
        targets: Vec<BTreeMap<TopicId, BTreeSet<i32>>>,
        copies: Vec<Option<java_order::JavaAssignmentMap>>,
    ) -> Self {
        let members = group
            .members
            .iter()
            .zip(targets.into_iter().zip(copies))
            .map(|(member, (partitions, copy))| {
                let record_order = match copy {
                    Some(copy) => copy.iteration_order(),
                    None => member.assignment.clone(),
                };
                let assignment = MemberAssignment {
                    partitions,
                    record_order,
                };
                (member.member_id.clone(), assignment)
            })
            .collect();
        GroupAssignment { members }
    }
}

/// Why an assignor could not assign.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssignorError {
    /// Kafka's `PartitionAssignorException`, with its message.
    #[error("{0}")]
    PartitionAssignor(String),
    /// An input Kafka's own state can never hold (duplicate members, an owned partition beyond
    /// the topic); Kafka would fail with an unchecked exception.
    #[error("invalid assignor input: {0}")]
    InvalidInput(String),
}

/// A server-side consumer group assignor (Kafka's `ConsumerGroupPartitionAssignor`).
pub trait PartitionAssignor {
    /// The assignor's name, as `group.consumer.assignors` and the protocol name it.
    fn name(&self) -> &'static str;
    /// Computes the target assignment of `group` over `topics`. Deterministic: same input, same output.
    fn assign(
        &self,
        group: &GroupSpec,
        topics: &TopicMetadata,
    ) -> Result<GroupAssignment, AssignorError>;
}

/// Kafka's `uniform` assignor: balanced and sticky; picks its algorithm by subscription type.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformAssignor;

impl UniformAssignor {
    /// The name Kafka gives it.
    pub const NAME: &'static str = "uniform";
}

impl PartitionAssignor for UniformAssignor {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn assign(
        &self,
        group: &GroupSpec,
        topics: &TopicMetadata,
    ) -> Result<GroupAssignment, AssignorError> {
        if group.members.is_empty() {
            return Ok(GroupAssignment::default());
        }
        group.check_unique_members()?;
        match group.subscription_type {
            SubscriptionType::Homogeneous => uniform_homogeneous::assign(group, topics),
            SubscriptionType::Heterogeneous => uniform_heterogeneous::assign(group, topics),
        }
    }
}

/// The built-in assignor of that name.
pub fn builtin_assignor(name: &str) -> Option<&'static dyn PartitionAssignor> {
    match name {
        UniformAssignor::NAME => Some(&UniformAssignor),
        RangeAssignor::NAME => Some(&RangeAssignor),
        _ => None,
    }
}

/// Kafka's message when a subscribed topic is missing from the metadata (uniform assignor).
fn unknown_topic_error(topic: &TopicId) -> AssignorError {
    AssignorError::PartitionAssignor(format!(
        "Members are subscribed to topic {topic} which doesn't exist in the topic metadata."
    ))
}
