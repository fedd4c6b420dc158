//! A classic group as the explorer shows it (the simulation's [`GroupView`]), read from a
//! coordinator's real state: the live view of `groupcoord serve` uses it, next to
//! [`super::coordinator_group_view`] (streams) and [`super::consumer_group_view`] (KIP-848).

use crate::coordinator::{Coordinator, TimerKey};
use crate::sim::{ClassicGroupView, ClassicMemberView, GroupType, GroupView, MemberView};
use crate::util::map::BTreeSet;

/// A classic group as the explorer shows it, from the coordinator alone: each member's
/// partitions are the ones the leader's SyncGroup assigned it (the consumer protocol's
/// assignment, decoded), the generation stands for the epochs, and the client side (what a
/// consumer actually owns right now) is unknown. `None` when there is no such classic group, or
/// when it has neither members nor a generation (a group that only holds committed offsets).
pub fn classic_group_view(coord: &Coordinator, group_id: &str) -> Option<GroupView> {
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
                    // waiting; in the join phase one that has not joined again yet (it learns of
                    // the rebalance from its next heartbeat's REBALANCE_IN_PROGRESS), in the sync
                    // phase one that has its JoinGroup answer and is to send SyncGroup (§C3), or
                    // one of a Stable group (it has its assignment).
                    client_state: match (&m.awaiting_join, &m.awaiting_sync, g.state.name()) {
                        (Some(_), _, _) => "joining",
                        (_, Some(_), _) | (_, _, "CompletingRebalance") => "awaiting_sync",
                        (_, _, "PreparingRebalance") => "unjoined",
                        (_, _, "Stable") => "stable",
                        _ => "unknown",
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
    let given: BTreeSet<&String> = members.iter().flat_map(|m| &m.active).collect();
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
