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
/// groupcoord: the new target is being computed off the coordinator's thread (docs/deviations.md).
pub const DELAYED_OFFLOADED: &str =
    "Assignment delayed: the new target assignment is being computed in the background.";

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
    /// Offload the computation when members x tasks reaches this (None: always inline).
    pub offload_min_work: Option<u64>,
    /// An offloaded computation for this group is running: wait for it.
    pub offload_in_flight: bool,
}

/// The decision: the epoch and target the member reconciles toward, and the records written.
pub struct TargetResult<'a> {
    pub assignment_epoch: i32,
    pub member_target: Cow<'a, TasksTuple>,
    pub records: Vec<Record>,
    /// `ASSIGNMENT_DELAYED` detail, when delayed.
    pub delayed: Option<&'static str>,
    /// The computation to run off the coordinator's thread (with `delayed` set).
    pub offload: Option<AssignmentJob>,
}

/// An assignment computed off the coordinator's thread: the assignor's whole input, owned, so
/// that it can run anywhere; [`AssignmentJob::run`] gives the result the coordinator accepts
/// later (`Coordinator::complete_assignment`) if the group has not moved on meanwhile.
#[derive(Debug, Clone)]
pub struct AssignmentJob {
    pub(crate) group_id: String,
    pub(crate) group_epoch: i32,
    input: AssignorInput,
}

/// What [`AssignmentJob::run`] computed: every member's new target.
#[derive(Debug, Clone)]
pub struct AssignmentResult {
    pub(crate) group_id: String,
    pub(crate) group_epoch: i32,
    pub(crate) targets: Result<BTreeMap<String, TasksTuple>, ApiError>,
}

impl AssignmentJob {
    /// The group the assignment is for.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// Run the assignor (pure; may run on any thread).
    pub fn run(self) -> AssignmentResult {
        AssignmentResult {
            targets: self.input.run(),
            group_id: self.group_id,
            group_epoch: self.group_epoch,
        }
    }
}

impl AssignmentResult {
    /// The group the assignment is for.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }
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
            offload: None,
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
            offload: None,
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
            offload: None,
        });
    }
    // groupcoord: a computation already running for this group is awaited, not duplicated.
    if req.offload_in_flight {
        return Ok(TargetResult {
            assignment_epoch: g.assignment_epoch,
            member_target: current,
            records: Vec::new(),
            delayed: Some(DELAYED_OFFLOADED),
            offload: None,
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
    let input = assignor_input(g, &members, req);
    if let Some(min) = req.offload_min_work
        && input.work() >= min
    {
        return Ok(TargetResult {
            assignment_epoch: g.assignment_epoch,
            member_target: current,
            records: Vec::new(),
            delayed: Some(DELAYED_OFFLOADED),
            offload: Some(AssignmentJob {
                group_id: g.group_id.clone(),
                group_epoch: req.group_epoch,
                input,
            }),
        });
    }
    let new_targets = input.run()?;
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
        offload: None,
    })
}

/// The assignor's input (spec §5.1), owned: an unready topology gives everyone an empty target.
#[derive(Debug, Clone)]
enum AssignorInput {
    Unready(Vec<String>),
    Ready {
        assignor: String,
        spec: GroupSpec,
        topology: TopologySpec,
        member_order: Vec<String>,
    },
}

impl AssignorInput {
    /// How big the computation is: members x tasks.
    fn work(&self) -> u64 {
        match self {
            AssignorInput::Unready(_) => 0,
            AssignorInput::Ready { spec, topology, .. } => {
                let tasks: u64 = topology
                    .subtopologies
                    .values()
                    .map(|s| s.number_of_tasks.max(0) as u64)
                    .sum();
                spec.members.len() as u64 * tasks
            }
        }
    }

    /// Run the assignor: every member's new target.
    fn run(self) -> Result<BTreeMap<String, TasksTuple>, ApiError> {
        let (assignor_name, spec, topology, member_order) = match self {
            AssignorInput::Unready(ids) => {
                return Ok(sort::collect_map(
                    ids.into_iter().map(|id| (id, TasksTuple::default())),
                ));
            }
            AssignorInput::Ready {
                assignor,
                spec,
                topology,
                member_order,
            } => (assignor, spec, topology, member_order),
        };
        let assignor = assignor::builtin(&assignor_name)
            .or_else(|| assignor::builtin(assignor::BUILTIN_ASSIGNORS[0]))
            .ok_or_else(ApiError::unknown_server_error)?;
        let order: Vec<&str> = member_order.iter().map(String::as_str).collect();
        let mut out = assignor
            .assign_in_member_order(&spec, &topology, &order)
            .map_err(|_| ApiError::unknown_server_error())?;
        Ok(sort::collect_map(spec.members.into_keys().map(|id| {
            let a = out.members.remove(&id).unwrap_or_default();
            (
                id,
                TasksTuple {
                    active: a.active,
                    standby: a.standby,
                    warmup: a.warmup,
                },
            )
        })))
    }
}

/// Collect the assignor's input from the group view.
fn assignor_input(
    g: &StreamsGroup,
    members: &BTreeMap<&str, &StreamsMember>,
    req: &TargetRequest<'_>,
) -> AssignorInput {
    let ready = req
        .configured
        .filter(|c| c.is_ready())
        .and_then(|c| c.subtopologies.as_ref());
    let Some(subtopologies) = ready else {
        return AssignorInput::Unready(members.keys().map(|id| id.to_string()).collect());
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
    // Kafka fills the assignor's member map by iterating its own member map with the updated
    // member overlaid: present members in the map's order (a replaced static member skipped),
    // then the updated member if it is new.
    let member_order: Vec<String> = g
        .member_order
        .iteration_order()
        .into_iter()
        .chain(req.updated_member.map(|m| m.member_id.clone()))
        .collect();
    AssignorInput::Ready {
        assignor: req.assignor_name.to_string(),
        spec,
        topology,
        member_order,
    }
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
            offload_min_work: None,
            offload_in_flight: false,
        })
        .unwrap();
        assert!(
            out.member_target.active.contains("0", 0),
            "{:?}",
            out.records
        );
    }
}
