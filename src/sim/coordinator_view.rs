//! A streams group as the explorer shows it (the simulation's [`GroupView`]), read from a
//! coordinator's real state: member states and epochs, pending revocations, the target
//! assignment, the armed timers. The live view of `groupcoord serve` and the replay of a
//! server's records in the explorer (`WasmRecordReplay`) both use it.
//!
//! Only the coordinator's side is known here: the client-side fields (`owned_*`,
//! `next_heartbeat_ms`) are empty and `client_status` is `unknown`.

use super::client::task_strings;
use super::snapshot::pending;
use crate::coordinator::{Coordinator, TimerKey};
use crate::sim::{GroupType, GroupView, MemberView, TaskList};
use crate::types::TaskSet;

fn tasks(t: &TaskSet) -> TaskList {
    task_strings(t)
}

/// The streams group `group_id` as the explorer shows it, or `None` when the coordinator has
/// no such streams group.
pub fn coordinator_group_view(coord: &Coordinator, group_id: &str) -> Option<GroupView> {
    let g = coord.group(group_id)?;
    let cfg = coord.config().for_group(group_id);
    let timer = |k: TimerKey| coord.timer_deadline(&k).map(|d| d.0);
    let members = g
        .members
        .values()
        .map(|m| {
            let target = g.target_of(&m.member_id);
            MemberView {
                member_id: m.member_id.clone(),
                process_id: m.process_id.clone(),
                instance_id: m.instance_id.clone(),
                rack: m.rack_id.clone(),
                client_status: "unknown".to_string(),
                state: Some(m.state.name().to_string()),
                member_epoch: Some(m.member_epoch),
                previous_member_epoch: Some(m.previous_member_epoch),
                active: tasks(&m.assigned.active.task_set()),
                standby: tasks(&m.assigned.standby),
                warmup: tasks(&m.assigned.warmup),
                pending_revocation: pending(&m.pending_revocation),
                target_active: tasks(&target.active),
                target_standby: tasks(&target.standby),
                target_warmup: tasks(&target.warmup),
                owned_active: Vec::new(),
                owned_standby: Vec::new(),
                owned_warmup: Vec::new(),
                session_deadline_ms: timer(TimerKey::SessionTimeout {
                    group_id: group_id.to_string(),
                    member_id: m.member_id.clone(),
                }),
                session_timeout_ms: cfg.session_timeout_ms as i64,
                rebalance_deadline_ms: timer(TimerKey::RebalanceTimeout {
                    group_id: group_id.to_string(),
                    member_id: m.member_id.clone(),
                }),
                next_heartbeat_ms: None,
                classic: None,
            }
        })
        .collect();
    Some(GroupView {
        group_id: group_id.to_string(),
        state: g.state().name().to_string(),
        group_epoch: g.group_epoch,
        assignment_epoch: g.assignment_epoch,
        topology_epoch: g.topology.as_ref().map(|t| t.epoch),
        validated_topology_epoch: g.validated_topology_epoch,
        assignor: cfg.assignor_name.clone(),
        num_standby_replicas: cfg.num_standby_replicas,
        tasks: tasks(&g.all_tasks()),
        stateful_subtopologies: g
            .topology
            .iter()
            .flat_map(|t| &t.subtopologies)
            .filter(|s| !s.state_changelog_topics.is_empty())
            .map(|s| s.subtopology_id.clone())
            .collect(),
        members,
        statuses: Vec::new(),
        initial_rebalance_deadline_ms: timer(TimerKey::InitialRebalance {
            group_id: group_id.to_string(),
        }),
        group_type: GroupType::Streams,
        classic: None,
    })
}
