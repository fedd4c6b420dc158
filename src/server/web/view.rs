//! The live view's reading of a group: the same [`GroupView`] the simulation shows the
//! explorer, built from the coordinator's real state (member states and epochs, pending
//! revocations, the target assignment, the armed timers) instead of guessed from describe.
//!
//! The server only sees the coordinator's side: the client-side fields (`owned_*`,
//! `next_heartbeat_ms`) are empty and `client_status` is `unknown`.

use crate::coordinator::{Coordinator, TimerKey};
use crate::sim::{GroupType, GroupView, MemberView, TaskList};
use crate::types::{TaskSet, TasksWithEpochs};

fn tasks(t: &TaskSet) -> TaskList {
    t.iter().map(|t| t.to_string()).collect()
}

/// Tasks waiting for revocation, standbys and warm-ups marked as the simulation marks them.
fn pending(t: &TasksWithEpochs) -> TaskList {
    let mut v = tasks(&t.active.task_set());
    v.extend(
        tasks(&t.standby)
            .into_iter()
            .map(|s| format!("{s} (standby)")),
    );
    v.extend(
        tasks(&t.warmup)
            .into_iter()
            .map(|s| format!("{s} (warmup)")),
    );
    v
}

/// The streams group `group_id` as the explorer shows it, or `None` when the coordinator has
/// no such streams group.
pub fn group_view(coord: &Coordinator, group_id: &str) -> Option<GroupView> {
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

/// A classic group as the explorer shows it, from the coordinator alone: each member's
/// partitions are the ones the leader's SyncGroup assigned it (the consumer protocol's
/// assignment, decoded), the generation stands for the epochs, and the client side (what a
/// consumer actually owns right now) is unknown. `None` when there is no such classic group, or
/// when it has neither members nor a generation (a group that only holds committed offsets).
pub fn classic_group_view(coord: &Coordinator, group_id: &str) -> Option<GroupView> {
    use crate::sim::{ClassicGroupView, ClassicMemberView};
    let g = coord.classic_group(group_id)?;
    if g.members.is_empty() && g.generation == 0 {
        return None;
    }
    let timer = |k: TimerKey| coord.timer_deadline(&k).map(|d| d.0);
    let assigned = |bytes: &[u8]| -> Vec<String> {
        let mut v: Vec<String> = crate::assignor::client::protocol::decode_assignment(bytes)
            .map(|tps| tps.iter().map(|tp| format!("{}-{}", tp.0, tp.1)).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let members: Vec<MemberView> = g
        .members
        .values()
        .map(|m| {
            let owned = assigned(&m.assignment);
            MemberView {
                member_id: m.member_id.clone(),
                process_id: m.client_id.clone(),
                instance_id: m.group_instance_id.clone(),
                rack: None,
                client_status: "unknown".to_string(),
                state: None,
                member_epoch: Some(g.generation),
                previous_member_epoch: None,
                active: owned.clone(),
                standby: Vec::new(),
                warmup: Vec::new(),
                pending_revocation: Vec::new(),
                target_active: owned.clone(),
                target_standby: Vec::new(),
                target_warmup: Vec::new(),
                owned_active: Vec::new(),
                owned_standby: Vec::new(),
                owned_warmup: Vec::new(),
                session_deadline_ms: timer(TimerKey::ClassicHeartbeat {
                    group_id: group_id.to_string(),
                    member_id: m.member_id.clone(),
                }),
                session_timeout_ms: i64::from(m.session_timeout_ms),
                rebalance_deadline_ms: None,
                next_heartbeat_ms: None,
                classic: Some(ClassicMemberView {
                    coordinator_member_id: m.member_id.clone(),
                    // As far as the coordinator can tell: a member with a JoinGroup or SyncGroup
                    // waiting, or one of a Stable group (it has its assignment).
                    client_state: if m.awaiting_join.is_some() {
                        "joining"
                    } else if m.awaiting_sync.is_some() {
                        "awaiting_sync"
                    } else if g.state.name() == "Stable" {
                        "stable"
                    } else {
                        "unknown"
                    }
                    .to_string(),
                    generation: g.generation,
                    known_to_coordinator: true,
                    is_leader: g.leader.as_deref() == Some(m.member_id.as_str()),
                    owned_partitions: owned,
                    revoked_partitions: Vec::new(),
                    protocol: String::new(),
                    assignor: g.protocol_name.clone(),
                    stalled_until_ms: None,
                }),
            }
        })
        .collect();
    // The subscribed partitions, as far as the coordinator knows the topics.
    let mut partitions: Vec<String> = g
        .subscribed_topics
        .iter()
        .flatten()
        .flat_map(|t| {
            let n = coord.metadata().partitions(t).unwrap_or(0).max(0);
            (0..n).map(move |p| format!("{t}-{p}"))
        })
        .collect();
    partitions.sort();
    let given: std::collections::BTreeSet<&String> =
        members.iter().flat_map(|m| &m.active).collect();
    let unassigned = partitions
        .iter()
        .filter(|p| !given.contains(p))
        .cloned()
        .collect();
    let state = g.state.name().to_string();
    Some(GroupView {
        group_id: group_id.to_string(),
        state: state.clone(),
        group_epoch: g.generation,
        assignment_epoch: g.generation,
        topology_epoch: None,
        validated_topology_epoch: -1,
        assignor: g.protocol_name.clone().unwrap_or_default(),
        num_standby_replicas: 0,
        tasks: Vec::new(),
        stateful_subtopologies: Vec::new(),
        members,
        statuses: Vec::new(),
        initial_rebalance_deadline_ms: None,
        group_type: GroupType::Classic,
        classic: Some(ClassicGroupView {
            state,
            generation: g.generation,
            protocol_type: g.protocol_type.clone(),
            protocol_name: g.protocol_name.clone(),
            leader: g.leader.clone(),
            partitions,
            // What the leader left unassigned; what consumers really own is client side.
            owned_by_nobody: unassigned,
            rebalance_deadline_ms: timer(TimerKey::ClassicJoin {
                group_id: group_id.to_string(),
            })
            .or_else(|| {
                timer(TimerKey::ClassicSync {
                    group_id: group_id.to_string(),
                })
            }),
        }),
    })
}
