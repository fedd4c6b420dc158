//! Safety invariants checked after every simulation event. The names show in the explorer.

use std::collections::BTreeMap;

use crate::records::MemberState;
use crate::types::{TaskId, TaskSet};

use super::api::InvariantResult;
use super::engine::Simulation;

/// No active task is owned by two running clients at once (client side).
pub const ACTIVE_TASK_SINGLE_OWNER: &str = "active-task-single-owner";
/// Every member's epoch is at most the group epoch (coordinator side).
pub const MEMBER_EPOCH_LE_GROUP_EPOCH: &str = "member-epoch-le-group-epoch";
/// The target assignment epoch is at most the group epoch.
pub const ASSIGNMENT_EPOCH_LE_GROUP_EPOCH: &str = "assignment-epoch-le-group-epoch";
/// In a Stable group every member is assigned exactly its target, and every client that is in
/// sync with the coordinator (last exchange answered, none in flight) runs exactly that.
pub const STABLE_GROUP_MEMBERS_OWN_TARGET: &str = "stable-group-members-own-target";
/// A fresh coordinator that replays every record so far has the live coordinator's state hash.
pub const REPLAY_EQUALS_LIVE: &str = "replay-equals-live";
/// No process holds a standby (or warm-up) of a task whose active runs on the same process, in
/// what clients run and in the target assignment.
pub const STANDBY_NOT_WITH_ACTIVE: &str = "standby-not-with-active";

/// Every invariant name, in display order.
pub const ALL: &[&str] = &[
    ACTIVE_TASK_SINGLE_OWNER,
    MEMBER_EPOCH_LE_GROUP_EPOCH,
    ASSIGNMENT_EPOCH_LE_GROUP_EPOCH,
    STABLE_GROUP_MEMBERS_OWN_TARGET,
    STANDBY_NOT_WITH_ACTIVE,
    REPLAY_EQUALS_LIVE,
];

fn result(name: &str, problems: Vec<String>, ok_detail: String) -> InvariantResult {
    InvariantResult {
        name: name.to_string(),
        ok: problems.is_empty(),
        detail: if problems.is_empty() {
            ok_detail
        } else {
            problems.join("; ")
        },
    }
}

/// The cheap invariants (everything but replay-equals-live).
pub(crate) fn check(sim: &Simulation) -> Vec<InvariantResult> {
    let view = sim.view();
    let mut out = Vec::with_capacity(ALL.len());

    // active-task-single-owner
    let mut owners: BTreeMap<TaskId, &str> = BTreeMap::new();
    let mut problems = Vec::new();
    for m in sim.clients().filter(|m| m.is_alive()) {
        for t in m.owned.active.iter() {
            if let Some(other) = owners.get(&t) {
                problems.push(format!("{t} active on {other} and {}", m.member_id));
            } else {
                owners.insert(t, &m.member_id);
            }
        }
    }
    out.push(result(
        ACTIVE_TASK_SINGLE_OWNER,
        problems,
        format!("{} active tasks, one owner each", owners.len()),
    ));

    // member-epoch-le-group-epoch
    let problems: Vec<String> = view
        .live_members()
        .filter(|(_, m)| m.epoch() > view.group_epoch)
        .map(|(id, m)| {
            format!(
                "{id} epoch {} > group epoch {}",
                m.epoch(),
                view.group_epoch
            )
        })
        .collect();
    out.push(result(
        MEMBER_EPOCH_LE_GROUP_EPOCH,
        problems,
        format!("group epoch {}", view.group_epoch),
    ));

    // assignment-epoch-le-group-epoch
    let problems = if view.exists && view.assignment_epoch > view.group_epoch {
        vec![format!(
            "assignment epoch {} > group epoch {}",
            view.assignment_epoch, view.group_epoch
        )]
    } else {
        Vec::new()
    };
    out.push(result(
        ASSIGNMENT_EPOCH_LE_GROUP_EPOCH,
        problems,
        format!(
            "assignment epoch {}, group epoch {}",
            view.assignment_epoch, view.group_epoch
        ),
    ));

    // stable-group-members-own-target
    let mut problems = Vec::new();
    let state = view.state();
    if state == "Stable" {
        let clients: BTreeMap<&str, _> = sim.clients().map(|m| (m.member_id.as_str(), m)).collect();
        for (id, m) in view.live_members() {
            let target = view.targets.get(id).cloned().unwrap_or_default();
            let assigned = m
                .current
                .as_ref()
                .map(|c| c.assigned.tasks())
                .unwrap_or_default();
            if m.state() != MemberState::Stable {
                problems.push(format!("{id} is {}", m.state().name()));
            }
            if assigned != target {
                problems.push(format!("{id} assigned differs from its target"));
            }
            if let Some(c) = clients.get(id.as_str())
                && c.is_alive()
                && c.in_sync
                && c.in_flight.is_none()
                && !c.net_cut
                && c.owned != target
            {
                problems.push(format!(
                    "{id} runs active {:?} standby {:?}, target active {:?} standby {:?}",
                    names(&c.owned.active),
                    names(&c.owned.standby),
                    names(&target.active),
                    names(&target.standby)
                ));
            }
        }
    }
    out.push(result(
        STABLE_GROUP_MEMBERS_OWN_TARGET,
        problems,
        format!("group {state}"),
    ));

    // standby-not-with-active
    let mut problems = Vec::new();
    let mut by_process: BTreeMap<&str, (TaskSet, TaskSet)> = BTreeMap::new();
    for m in sim.clients().filter(|m| m.is_alive()) {
        let e = by_process.entry(m.process_id.as_str()).or_default();
        e.0 = e.0.union(&m.owned.active);
        e.1 = e.1.union(&m.owned.standby).union(&m.owned.warmup);
    }
    for (p, (a, s)) in &by_process {
        let both = a.intersection(s);
        if !both.is_empty() {
            problems.push(format!(
                "process {p} runs {:?} as active and standby",
                names(&both)
            ));
        }
    }
    let mut targets: BTreeMap<&str, (TaskSet, TaskSet)> = BTreeMap::new();
    for (id, m) in view.live_members() {
        let (Some(md), Some(t)) = (&m.metadata, view.targets.get(id)) else {
            continue;
        };
        let e = targets.entry(md.process_id.as_str()).or_default();
        e.0 = e.0.union(&t.active);
        e.1 = e.1.union(&t.standby).union(&t.warmup);
    }
    for (p, (a, s)) in &targets {
        let both = a.intersection(s);
        if !both.is_empty() {
            problems.push(format!(
                "target gives process {p} {:?} as active and standby",
                names(&both)
            ));
        }
    }
    out.push(result(STANDBY_NOT_WITH_ACTIVE, problems, "ok".to_string()));
    out
}

fn names(t: &TaskSet) -> Vec<String> {
    t.iter().map(|t| t.to_string()).collect()
}
