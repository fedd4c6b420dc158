//! Kafka's `range` assignor: per topic, its subscribers (static members by instance id, then the
//! others by member id) take consecutive ranges; the first `partitions % subscribers` get one extra.
//! Neither sticky nor rack-aware in Kafka 4.4, so only the member sort matters.

use crate::util::map::{BTreeMap, BTreeSet};
use std::cmp::Ordering;

use super::java_order::{JavaHashTable, java_string_cmp};
use super::{
    AssignorError, GroupAssignment, GroupSpec, MemberAssignment, MemberSpec, PartitionAssignor,
    SubscriptionType, TopicId, TopicMetadata,
};

/// Kafka's `range` assignor: per topic, consecutive partition ranges to the subscribed members.
#[derive(Debug, Clone, Copy, Default)]
pub struct RangeAssignor;

impl RangeAssignor {
    /// The name Kafka gives it.
    pub const NAME: &'static str = "range";
}

/// Ranges still to hand out for one topic.
struct TopicRanges {
    num_partitions: i32,
    subscribers: i32,
    next_start: i32,
    extra_left: i32,
}

impl TopicRanges {
    fn next_range(&mut self) -> std::ops::Range<i32> {
        let mut quota = self.num_partitions / self.subscribers;
        if self.extra_left > 0 {
            quota += 1;
            self.extra_left -= 1;
        }
        let start = self.next_start;
        let end = start.saturating_add(quota).min(self.num_partitions);
        self.next_start = end;
        start..end
    }
}

fn member_order(a: &MemberSpec, b: &MemberSpec) -> Ordering {
    match (&a.instance_id, &b.instance_id) {
        (Some(x), Some(y)) => java_string_cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => java_string_cmp(&a.member_id, &b.member_id),
    }
}

fn unknown_topic() -> AssignorError {
    AssignorError::PartitionAssignor("Member is subscribed to a non-existent topic".to_string())
}

impl PartitionAssignor for RangeAssignor {
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
        let mut members: Vec<&MemberSpec> = group.members.iter().collect();
        crate::util::sort::by(&mut members, |a, b| member_order(a, b));

        let mut ranges: BTreeMap<TopicId, TopicRanges> = BTreeMap::new();
        let mut add_subscriber = |topic: &TopicId, count: i32| -> Result<(), AssignorError> {
            let num_partitions = topics.num_partitions(topic).ok_or_else(unknown_topic)?;
            ranges
                .entry(*topic)
                .or_insert(TopicRanges {
                    num_partitions,
                    subscribers: 0,
                    next_start: 0,
                    extra_left: 0,
                })
                .subscribers += count;
            Ok(())
        };
        match group.subscription_type {
            // Everyone has the first member's topics.
            SubscriptionType::Homogeneous => {
                for topic in distinct(&members[0].subscribed_topics) {
                    add_subscriber(topic, members.len() as i32)?;
                }
            }
            SubscriptionType::Heterogeneous => {
                for member in &members {
                    for topic in distinct(&member.subscribed_topics) {
                        add_subscriber(topic, 1)?;
                    }
                }
            }
        }
        for topic in ranges.values_mut() {
            topic.extra_left = topic.num_partitions % topic.subscribers;
        }

        let mut assignment = GroupAssignment::default();
        for member in &members {
            let member_topics = match group.subscription_type {
                SubscriptionType::Homogeneous => &members[0].subscribed_topics,
                SubscriptionType::Heterogeneous => &member.subscribed_topics,
            };
            // Kafka puts each range into a HashMap sized for the member's topics.
            let topic_count = distinct(member_topics).count();
            let mut topic_order =
                JavaHashTable::with_capacity((topic_count as f32 / 0.75f32 + 1.0f32) as usize);
            let mut ranges_of_member = BTreeMap::new();
            for topic in distinct(member_topics) {
                let range = ranges.get_mut(topic).expect("counted above").next_range();
                if !range.is_empty() {
                    topic_order.insert(topic.java_hash_code(), *topic);
                    ranges_of_member.insert(*topic, range);
                }
            }
            let record_order = topic_order
                .into_keys()
                .into_iter()
                .map(|topic| (topic, ranges_of_member[&topic].clone().collect()))
                .collect();
            assignment.members.insert(
                member.member_id.clone(),
                MemberAssignment::from_record_order(record_order),
            );
        }
        Ok(assignment)
    }
}

/// A subscription's topics, each once.
fn distinct(topics: &[TopicId]) -> impl Iterator<Item = &TopicId> {
    let mut seen = BTreeSet::new();
    topics.iter().filter(move |t| seen.insert(**t))
}
