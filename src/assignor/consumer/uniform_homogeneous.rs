//! `uniform` when every member subscribes to the same topics (Kafka's
//! `UniformHomogeneousAssignmentBuilder`): each member keeps what it owns up to its quota
//! (total / members, the first `total % members` members that can use it get one more), and the
//! freed and unowned partitions fill the members below quota, in member order.
//!
//! Order-sensitive steps: unowned partitions are listed topic by topic in the iteration order of a
//! Java `HashSet` copied from the first member's subscription; a member over quota keeps the first
//! partitions in its assignment's iteration order; members are visited in `GroupSpec` order.

use crate::util::map::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet;

use super::java_order::{JavaAssignmentMap, JavaHashTable};
use super::{
    AssignorError, GroupAssignment, GroupSpec, TopicId, TopicMetadata, unknown_topic_error,
};

pub(super) fn assign(
    group: &GroupSpec,
    topics: &TopicMetadata,
) -> Result<GroupAssignment, AssignorError> {
    let Some(first) = group.members.first() else {
        return Ok(GroupAssignment::default());
    };
    let subscribed_order = JavaHashTable::copy_of(
        first
            .subscribed_topics
            .iter()
            .map(|topic| (topic.java_hash_code(), *topic)),
    )
    .into_keys();
    if subscribed_order.is_empty() {
        return Ok(GroupAssignment::default());
    }
    let subscribed: FxHashSet<TopicId> = subscribed_order.iter().copied().collect();

    // Kafka asks the group's inverted target assignment whether a partition has an owner.
    let owned: FxHashSet<(TopicId, i32)> = group
        .members
        .iter()
        .flat_map(|m| m.assignment.iter())
        .flat_map(|(topic, partitions)| partitions.iter().map(move |p| (*topic, *p)))
        .collect();

    let mut unassigned: Vec<(TopicId, i32)> = Vec::new();
    let mut total_partitions: i64 = 0;
    for topic in &subscribed_order {
        let count = topics
            .num_partitions(topic)
            .ok_or_else(|| unknown_topic_error(topic))?;
        unassigned.extend(
            (0..count)
                .filter(|p| !owned.contains(&(*topic, *p)))
                .map(|p| (*topic, p)),
        );
        total_partitions += i64::from(count);
    }

    let member_count = group.members.len() as i64;
    let minimum_quota = total_partitions / member_count;
    let mut members_owed_extra = total_partitions % member_count;

    // Revoke what is over quota or no longer subscribed; note who still has room.
    let mut target: Vec<BTreeMap<TopicId, BTreeSet<i32>>> = Vec::with_capacity(group.members.len());
    // Kafka returns an unchanged assignment as it came and copies it before the first change; the
    // copy's iteration order is the output's record order.
    let mut copies: Vec<Option<JavaAssignmentMap>> = vec![None; group.members.len()];
    let mut unfilled: Vec<(usize, i64)> = Vec::new();
    for (index, member) in group.members.iter().enumerate() {
        let mut quota = minimum_quota;
        let mut quota_has_extra = false;
        if members_owed_extra > 0 {
            quota += 1;
            quota_has_extra = true;
        }
        let mut kept: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
        for (topic, partitions) in &member.assignment {
            if !subscribed.contains(topic) {
                JavaAssignmentMap::copy_on_write(&mut copies[index], &member.assignment)
                    .remove_topic(topic);
                continue;
            }
            if partitions.len() as i64 <= quota {
                quota -= partitions.len() as i64;
                kept.entry(*topic)
                    .or_default()
                    .extend(partitions.iter().copied());
                continue;
            }
            for partition in partitions {
                if quota > 0 {
                    quota -= 1;
                    kept.entry(*topic).or_default().insert(*partition);
                } else {
                    JavaAssignmentMap::copy_on_write(&mut copies[index], &member.assignment)
                        .remove_partition(topic, *partition);
                    unassigned.push((*topic, *partition));
                }
            }
        }
        // The extra partition goes to a later member if enough members remain to take all extras.
        if quota > 0 && quota_has_extra && member_count - index as i64 > members_owed_extra {
            quota -= 1;
            quota_has_extra = false;
        }
        if quota > 0 {
            unfilled.push((index, quota));
        }
        if quota_has_extra {
            members_owed_extra -= 1;
        }
        kept.retain(|_, p| !p.is_empty());
        target.push(kept);
    }

    let mut next = unassigned.iter();
    for (index, quota) in unfilled {
        let copy =
            JavaAssignmentMap::copy_on_write(&mut copies[index], &group.members[index].assignment);
        for (topic, partition) in next.by_ref().take(quota as usize) {
            target[index].entry(*topic).or_default().insert(*partition);
            copy.add_partition(*topic, *partition, JavaHashTable::new);
        }
    }
    if next.next().is_some() {
        return Err(AssignorError::PartitionAssignor(
            "Partitions were left unassigned".to_string(),
        ));
    }

    Ok(GroupAssignment::from_uniform(group, target, copies))
}
