//! The target assignment of a consumer group (Kafka's `TargetAssignmentBuilder` for consumer
//! groups, docs/consumer-protocol.md §K3): the server-side assignor (`uniform` or `range`) runs
//! over every member's subscription and current target, in the orders Kafka hands them over, and
//! the members whose target changed get a record 7.

use crate::util::map::{BTreeMap, BTreeSet};

use super::group::{ConsumerGroup, ConsumerMember, TargetPartitions, target_sets};
use crate::assignor::consumer::java_order::{string_hash_map_order, string_hash_set_copy_order};
use crate::assignor::consumer::{
    GroupSpec, MemberSpec, PartitionAssignor, SubscriptionType, TopicDescription, TopicId,
    TopicMetadata,
};
use crate::error::{ApiError, ErrorCode};
use crate::records::{Record, TargetAssignmentMetadataValue};
use crate::topology::MetadataImage;
use crate::types::Millis;

/// Inputs of one target-assignment decision.
pub struct TargetRequest<'a> {
    pub group: &'a ConsumerGroup,
    pub group_epoch: i32,
    /// The heartbeating member as updated by this request.
    pub updated_member: &'a ConsumerMember,
    /// A static member being replaced by `updated_member`.
    pub replaced_member_id: Option<&'a str>,
    pub assignor: &'a dyn PartitionAssignor,
    pub metadata: &'a MetadataImage,
    /// Topic ids given from outside (`Coordinator::set_topic_ids`).
    pub topic_ids: &'a BTreeMap<String, TopicId>,
    pub now: Millis,
    pub assignment_interval_ms: i32,
    /// What the assignor is told of the subscriptions
    /// ([`ConsumerGroup::subscription_type_with`]).
    pub subscription_type: SubscriptionType,
}

/// The decision: the epoch and target the member reconciles toward, and the records written.
pub struct TargetResult {
    pub assignment_epoch: i32,
    pub member_target: BTreeMap<TopicId, BTreeSet<i32>>,
    pub records: Vec<Record>,
}

/// The ids of the existing topics a member subscribes to, in the order Kafka iterates them
/// (its subscription is a `HashSet` of names).
pub fn subscribed_topic_ids(
    group: &ConsumerGroup,
    member: &ConsumerMember,
    metadata: &MetadataImage,
    ids: &BTreeMap<String, TopicId>,
) -> Vec<TopicId> {
    let mut names: BTreeSet<&str> = member
        .subscribed_topic_names
        .iter()
        .map(String::as_str)
        .collect();
    if let Some(r) = group.resolved_regexes.get(&member.subscribed_topic_regex) {
        names.extend(r.topics.iter().map(String::as_str));
    }
    string_hash_set_copy_order(names)
        .into_iter()
        .filter(|n| metadata.topics.contains_key(*n))
        .map(|n| super::topic_id_of(ids, n))
        .collect()
}

/// `canComputeNextTargetAssignment`.
fn may_compute(last: i64, interval_ms: i32, now: Millis) -> bool {
    last == 0 || interval_ms == 0 || now.0 >= last.saturating_add(i64::from(interval_ms))
}

pub fn update_target(req: &TargetRequest<'_>) -> Result<TargetResult, ApiError> {
    let g = req.group;
    let member_id = req.updated_member.member_id.as_str();
    let current = g
        .target_assignment
        .get(member_id)
        .or_else(|| {
            req.replaced_member_id
                .and_then(|old| g.target_assignment.get(old))
        })
        .map(|t| target_sets(t))
        .unwrap_or_default();
    if g.assignment_epoch >= req.group_epoch
        || !may_compute(g.assignment_timestamp, req.assignment_interval_ms, req.now)
    {
        return Ok(TargetResult {
            assignment_epoch: g.assignment_epoch,
            member_target: current,
            records: Vec::new(),
        });
    }
    // The members as Kafka's view has them: the group's map order, the replaced static member
    // gone (its target moved to its replacement), the updated member overlaid or appended.
    let map_order = g.member_order.iteration_order();
    let mut insertion: Vec<&str> = map_order
        .iter()
        .map(String::as_str)
        .filter(|id| Some(*id) != req.replaced_member_id)
        .collect();
    if !insertion.contains(&member_id) {
        insertion.push(member_id);
    }
    let member = |id: &str| -> &ConsumerMember {
        if id == member_id {
            req.updated_member
        } else {
            &g.members[id]
        }
    };
    let old_target = |id: &str| -> Option<&TargetPartitions> {
        g.target_assignment.get(id).or_else(|| {
            (id == member_id)
                .then_some(req.replaced_member_id)
                .flatten()
                .and_then(|old| g.target_assignment.get(old))
        })
    };
    let order = string_hash_map_order(insertion.iter().copied());
    let mut topics = TopicMetadata::default();
    let mut specs = Vec::with_capacity(order.len());
    for id in &order {
        let m = member(id);
        let subscribed = subscribed_topic_ids(g, m, req.metadata, req.topic_ids);
        for (name, n) in &req.metadata.topics {
            let tid = super::topic_id_of(req.topic_ids, name);
            if subscribed.contains(&tid) {
                topics
                    .topics
                    .entry(tid)
                    .or_insert_with(|| TopicDescription {
                        name: name.clone(),
                        num_partitions: *n,
                        partition_racks: Vec::new(),
                    });
            }
        }
        specs.push(MemberSpec {
            member_id: id.to_string(),
            instance_id: m.instance_id.clone(),
            rack_id: m.rack_id.clone(),
            subscribed_topics: subscribed,
            assignment: old_target(id)
                .map(|t| MemberSpec::assignment_from_record(t))
                .unwrap_or_default(),
        });
    }
    let spec = GroupSpec {
        members: specs,
        subscription_type: req.subscription_type,
    };
    let out = req.assignor.assign(&spec, &topics).map_err(|e| {
        ApiError::new(
            ErrorCode::UNKNOWN_SERVER_ERROR,
            format!(
                "Failed to compute a new target assignment for epoch {}: {e}",
                req.group_epoch
            ),
        )
    })?;
    let mut records = Vec::new();
    let mut member_target = BTreeMap::new();
    for id in &order {
        let new = out.members.get(*id);
        let new_sets = new.map(|a| a.partitions.clone()).unwrap_or_default();
        let old_sets = old_target(id).map(|t| target_sets(t));
        if old_sets.as_ref() != Some(&new_sets) {
            let value: TargetPartitions = new
                .map(|a| {
                    a.record_order
                        .iter()
                        .filter(|(_, ps)| !ps.is_empty())
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            records.push(Record::ConsumerTargetAssignmentMember {
                group_id: g.group_id.clone(),
                member_id: id.to_string(),
                value: Some(value),
            });
        }
        if *id == member_id {
            member_target = new_sets;
        }
    }
    records.push(Record::ConsumerTargetAssignmentMetadata {
        group_id: g.group_id.clone(),
        value: Some(TargetAssignmentMetadataValue {
            assignment_epoch: req.group_epoch,
            assignment_timestamp: req.now.0,
        }),
    });
    Ok(TargetResult {
        assignment_epoch: req.group_epoch,
        member_target,
        records,
    })
}
