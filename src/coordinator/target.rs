//! Target assignment (spec §3.10 and §5.1): decide whether to compute a new target now, and if
//! so run the assignor over the group view and write the changed member targets.

use crate::util::map::BTreeMap;
use std::borrow::Cow;

use super::group::{MemberTaskOffsets, StreamsGroup, StreamsMember};
use crate::assignor::{
    self, AssignmentConfigs, GroupSpec, MemberSpec, SubtopologySpec, TopologySpec,
};
use crate::error::ApiError;
use crate::records::{Record, TargetAssignmentMetadataValue};
use crate::topology::ConfiguredTopology;
use crate::types::{Millis, TasksTuple};
use crate::util::sort;

pub const DELAYED_INITIAL: &str =
    "Assignment delayed due to the configured initial rebalance delay.";
pub const DELAYED_INTERVAL: &str = "Assignment delayed due to the configured assignment interval.";

/// Inputs of one target-assignment decision.
pub struct TargetRequest<'a> {
    pub group: &'a StreamsGroup,
    pub group_epoch: i32,
    /// The heartbeating member as updated by this request (None for the delayed assignment).
    pub updated_member: Option<&'a StreamsMember>,
    /// A static member being replaced by `updated_member`.
    pub replaced_member_id: Option<&'a str>,
    pub configured: Option<&'a ConfiguredTopology>,
    pub configs: AssignmentConfigs,
    pub assignor_name: &'a str,
    pub now: Millis,
    pub initial_delay_pending: bool,
    /// The updated member's task offsets including this heartbeat's report (spec §3.4 step G
    /// comes before the assignment).
    pub updated_member_offsets: Option<&'a MemberTaskOffsets>,
    pub assignment_interval_ms: i32,
}

/// The decision: the epoch and target the member reconciles toward, and the records written.
pub struct TargetResult<'a> {
    pub assignment_epoch: i32,
    pub member_target: Cow<'a, TasksTuple>,
    pub records: Vec<Record>,
    /// `ASSIGNMENT_DELAYED` detail, when delayed.
    pub delayed: Option<&'static str>,
}

pub fn update_target<'a>(req: &TargetRequest<'a>) -> Result<TargetResult<'a>, ApiError> {
    let g = req.group;
    let member_id = req.updated_member.map(|m| m.member_id.as_str());
    // 1. Initial rebalance delay: reconcile toward nothing at the old epoch.
    if req.initial_delay_pending {
        return Ok(TargetResult {
            assignment_epoch: g.assignment_epoch,
            member_target: Cow::Owned(TasksTuple::default()),
            records: Vec::new(),
            delayed: Some(DELAYED_INITIAL),
        });
    }
    // 2. The member's target in the view (a replacing static member inherits the old target).
    let view_target = |id: &str| -> Cow<'a, TasksTuple> {
        match g.target_assignment.get(id).or_else(|| {
            req.replaced_member_id
                .and_then(|old| g.target_assignment.get(old))
        }) {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(TasksTuple::default()),
        }
    };
    let current = member_id.map(view_target).unwrap_or_default();
    // 3. Up to date.
    if g.assignment_epoch >= req.group_epoch {
        return Ok(TargetResult {
            assignment_epoch: g.assignment_epoch,
            member_target: current,
            records: Vec::new(),
            delayed: None,
        });
    }
    // 5. Assignment interval.
    if g.assignment_timestamp != 0
        && req.assignment_interval_ms != 0
        && req.now.0
            < g.assignment_timestamp
                .saturating_add(req.assignment_interval_ms as i64)
    {
        return Ok(TargetResult {
            assignment_epoch: g.assignment_epoch,
            member_target: current,
            records: Vec::new(),
            delayed: Some(DELAYED_INTERVAL),
        });
    }
    // 6. Compute.
    let mut members: BTreeMap<&str, &StreamsMember> =
        sort::collect_map(g.members.iter().map(|(id, m)| (id.as_str(), m)));
    if let Some(old) = req.replaced_member_id {
        members.remove(old);
    }
    if let Some(m) = req.updated_member {
        members.insert(m.member_id.as_str(), m);
    }
    let new_targets = compute(g, &members, req)?;
    let mut records = Vec::new();
    for (id, tasks) in &new_targets {
        let previous = if Some(id.as_str()) == member_id {
            Some(current.clone().into_owned()).filter(|_| {
                g.target_assignment.contains_key(id.as_str()) || req.replaced_member_id.is_some()
            })
        } else {
            g.target_assignment.get(id).cloned()
        };
        if previous.as_ref() != Some(tasks) {
            records.push(Record::TargetAssignmentMember {
                group_id: g.group_id.clone(),
                member_id: id.clone(),
                value: Some(tasks.clone()),
            });
        }
    }
    records.push(Record::TargetAssignmentMetadata {
        group_id: g.group_id.clone(),
        value: Some(TargetAssignmentMetadataValue {
            assignment_epoch: req.group_epoch,
            assignment_timestamp: req.now.0,
        }),
    });
    let member_target = Cow::Owned(
        member_id
            .and_then(|id| new_targets.get(id).cloned())
            .unwrap_or_default(),
    );
    Ok(TargetResult {
        assignment_epoch: req.group_epoch,
        member_target,
        records,
        delayed: None,
    })
}

/// Run the assignor (spec §5.1); an unready topology gives everyone an empty target.
fn compute(
    g: &StreamsGroup,
    members: &BTreeMap<&str, &StreamsMember>,
    req: &TargetRequest<'_>,
) -> Result<BTreeMap<String, TasksTuple>, ApiError> {
    let ready = req
        .configured
        .filter(|c| c.is_ready())
        .and_then(|c| c.subtopologies.as_ref());
    let Some(subtopologies) = ready else {
        return Ok(sort::collect_map(
            members
                .keys()
                .map(|id| (id.to_string(), TasksTuple::default())),
        ));
    };
    let topology = TopologySpec {
        subtopologies: sort::collect_map(subtopologies.iter().map(|(id, s)| {
            (
                id.clone(),
                SubtopologySpec {
                    number_of_tasks: s.number_of_tasks,
                    stateful: s.is_stateful(),
                },
            )
        })),
    };
    let spec = GroupSpec {
        members: sort::collect_map(members.iter().map(|(id, m)| {
            let offsets = match req.updated_member_offsets {
                Some(o) if Some(*id) == req.updated_member.map(|m| m.member_id.as_str()) => Some(o),
                _ => g.task_offsets.get(*id),
            };
            (
                id.to_string(),
                MemberSpec {
                    instance_id: m.instance_id.clone(),
                    rack_id: m.rack_id.clone(),
                    process_id: m.process_id.clone(),
                    client_tags: m.client_tags.clone(),
                    active_tasks: m.assigned.active.task_set(),
                    standby_tasks: m.assigned.standby.clone(),
                    warmup_tasks: m.assigned.warmup.clone(),
                    task_offsets: offsets.map(|o| o.offsets.clone()).unwrap_or_default(),
                    task_end_offsets: offsets.map(|o| o.end_offsets.clone()).unwrap_or_default(),
                },
            )
        })),
        configs: req.configs.clone(),
    };
    let assignor = assignor::builtin(req.assignor_name)
        .or_else(|| assignor::builtin(assignor::BUILTIN_ASSIGNORS[0]))
        .ok_or_else(ApiError::unknown_server_error)?;
    // Kafka fills the assignor's member map by iterating its own member map with the updated
    // member overlaid: present members in the map's order (a replaced static member skipped),
    // then the updated member if it is new.
    let map_order = g.member_order.iteration_order();
    let member_order: Vec<&str> = map_order
        .iter()
        .map(String::as_str)
        .chain(req.updated_member.map(|m| m.member_id.as_str()))
        .collect();
    let out = assignor
        .assign_in_member_order(&spec, &topology, &member_order)
        .map_err(|_| ApiError::unknown_server_error())?;
    Ok(sort::collect_map(members.keys().map(|id| {
        let a = out.members.get(*id).cloned().unwrap_or_default();
        (
            id.to_string(),
            TasksTuple {
                active: a.active,
                standby: a.standby,
                warmup: a.warmup,
            },
        )
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::ConfiguredSubtopology;
    use crate::types::ActiveTasks;

    fn claimant(id: &str, process: &str) -> StreamsMember {
        let mut m = StreamsMember::new(id);
        m.process_id = process.into();
        m.member_epoch = 1;
        m.assigned.active = ActiveTasks::new();
        m.assigned.active.insert("0", 0, 1);
        m
    }

    #[test]
    fn assignor_sees_members_in_kafkas_member_map_order() {
        // "Aa" and "BB" share a hash bucket, so Kafka's member map iterates the later-inserted
        // "BB" first, then "Aa"; the assignor's map keeps that order and the last of two active
        // claims of 0_0 wins: "Aa" (in member-id order it would be "BB").
        let mut g = StreamsGroup::new("g");
        g.put_member(claimant("Aa", "p1"));
        g.put_member(claimant("BB", "p2"));
        let configured = ConfiguredTopology {
            topology_epoch: 0,
            metadata_hash: 0,
            subtopologies: Some(BTreeMap::from([(
                "0".to_string(),
                ConfiguredSubtopology {
                    number_of_tasks: 2,
                    source_topics: Default::default(),
                    repartition_sink_topics: Default::default(),
                    repartition_source_topics: Default::default(),
                    state_changelog_topics: Default::default(),
                },
            )])),
            internal_topics_to_create: Default::default(),
            issue: None,
        };
        let updated = g.members["Aa"].clone();
        let out = update_target(&TargetRequest {
            group: &g,
            group_epoch: 2,
            updated_member: Some(&updated),
            replaced_member_id: None,
            configured: Some(&configured),
            configs: AssignmentConfigs::default(),
            assignor_name: "sticky",
            now: Millis(0),
            initial_delay_pending: false,
            updated_member_offsets: None,
            assignment_interval_ms: 0,
        })
        .unwrap();
        assert!(
            out.member_target.active.contains("0", 0),
            "{:?}",
            out.records
        );
    }
}
