//! Safety invariants checked after every simulation event. The names show in the explorer.

use crate::util::map::{BTreeMap, BTreeSet};

use crate::records::MemberState;
use crate::types::TaskSet;

use super::api::InvariantResult;
use super::engine::Simulation;
use crate::util::sort;

/// No active task is owned by two running clients at once (client side).
pub const ACTIVE_TASK_SINGLE_OWNER: &str = "active-task-single-owner";
/// Coordinator side: no active task is assigned to, or pending revocation from, two members at
/// once (spec §4.2: an active task is granted only once every previous owner released it).
pub const ASSIGNED_ACTIVE_SINGLE_OWNER: &str = "assigned-active-single-owner";
/// Every member's epoch is at most the group epoch (coordinator side).
pub const MEMBER_EPOCH_LE_GROUP_EPOCH: &str = "member-epoch-le-group-epoch";
/// Group and assignment epochs never go down while the group exists (records in order).
pub const EPOCHS_MONOTONIC: &str = "epochs-monotonic";
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

/// Classic groups: among the consumers of the group's current generation (running, known to
/// the coordinator, generation equal to the group's), no partition has two owners — what the
/// assignor hands out after a SyncGroup never overlaps, and cooperative consumers give up a
/// partition before anyone else gets it.
pub const CLASSIC_PARTITION_SINGLE_OWNER: &str = "classic-partition-single-owner";
/// Classic groups: no consumer joins a lower generation than one it joined before, the
/// generations in the group's records never go down, and the live generation is never below
/// the last one written.
pub const CLASSIC_GENERATION_MONOTONIC: &str = "classic-generation-monotonic";

/// Consumer groups (KIP-848): no partition is consumed by two running consumers at the same
/// member epoch (revoke before assign; a zombie cut off from the coordinator keeps an older
/// epoch until it is fenced).
pub const CONSUMER_PARTITION_SINGLE_OWNER: &str = "consumer-partition-single-owner";
/// Consumer groups, coordinator side: no partition is assigned to, or pending revocation from,
/// two members at once (docs/consumer-protocol.md §K4).
pub const CONSUMER_ASSIGNED_SINGLE_OWNER: &str = "consumer-assigned-single-owner";
/// Consumer groups: member epochs and the assignment epoch are at most the group epoch, and no
/// consumer is handed a lower epoch than one it had (but 0 on a rejoin).
pub const CONSUMER_EPOCHS: &str = "consumer-epochs";

/// Every invariant name, in display order.
pub const ALL: &[&str] = &[
    ACTIVE_TASK_SINGLE_OWNER,
    ASSIGNED_ACTIVE_SINGLE_OWNER,
    MEMBER_EPOCH_LE_GROUP_EPOCH,
    ASSIGNMENT_EPOCH_LE_GROUP_EPOCH,
    EPOCHS_MONOTONIC,
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

/// The cheap invariants of a classic group (everything but replay-equals-live).
fn check_classic(sim: &Simulation) -> Vec<InvariantResult> {
    let group_id = &sim.spec().group_id;
    let g = sim.coordinator().classic_group(group_id);
    let mut owners: BTreeMap<(&str, i32), &str> = BTreeMap::new();
    let mut problems = Vec::new();
    if let Some(g) = g {
        for c in sim.consumers().filter(|c| {
            c.is_alive() && c.generation == g.generation && g.members.contains_key(&c.member_id)
        }) {
            for tp in &c.owned {
                if let Some(other) = owners.insert((&tp.0, tp.1), &c.name) {
                    problems.push(format!(
                        "{}-{} owned by {other} and {} in generation {}",
                        tp.0, tp.1, c.name, g.generation
                    ));
                }
            }
        }
    }
    let mut out = vec![result(
        CLASSIC_PARTITION_SINGLE_OWNER,
        problems,
        format!(
            "{} partitions owned in generation {}, one owner each",
            owners.len(),
            g.map_or(-1, |g| g.generation)
        ),
    )];
    let view = sim.view();
    let mut problems: Vec<String> = view.epoch_regressions.clone();
    for c in sim.consumers() {
        problems.extend(c.generation_regressions.iter().cloned());
    }
    if let Some(g) = g
        && g.generation < view.classic_generation
    {
        problems.push(format!(
            "live generation {} below the last written {}",
            g.generation, view.classic_generation
        ));
    }
    out.push(result(
        CLASSIC_GENERATION_MONOTONIC,
        problems,
        format!("generation {}", g.map_or(-1, |g| g.generation)),
    ));
    out
}

/// The cheap invariants of a consumer group (everything but replay-equals-live).
fn check_consumer(sim: &Simulation) -> Vec<InvariantResult> {
    let g = sim.coordinator().consumer_group(&sim.spec().group_id);
    let mut owners: BTreeMap<(&str, i32), (&str, i32)> = BTreeMap::new();
    let mut problems = Vec::new();
    for c in sim.kip848_consumers().filter(|c| c.is_alive()) {
        for (t, p) in &c.owned {
            if let Some((other, epoch)) = owners.insert((t, *p), (&c.name, c.epoch))
                && epoch == c.epoch
            {
                problems.push(format!(
                    "{t}-{p} consumed by {other} and {} at epoch {epoch}",
                    c.name
                ));
            }
        }
    }
    let mut out = vec![result(
        CONSUMER_PARTITION_SINGLE_OWNER,
        problems,
        format!("{} partitions consumed", owners.len()),
    )];
    let mut assigned: BTreeMap<(String, i32), &str> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut epochs = Vec::new();
    for c in sim.kip848_consumers() {
        epochs.extend(c.epoch_regressions.iter().cloned());
    }
    if let Some(g) = g {
        for (id, m) in &g.members {
            let both = m.assigned.iter().chain(m.pending_revocation.iter());
            for (t, parts) in both {
                for p in parts.keys() {
                    if let Some(other) = assigned.insert((t.to_string(), *p), id)
                        && other != id
                    {
                        problems.push(format!("{t}-{p} held by {other} and {id}"));
                    }
                }
            }
            if m.member_epoch > g.group_epoch {
                epochs.push(format!(
                    "{id} epoch {} > group epoch {}",
                    m.member_epoch, g.group_epoch
                ));
            }
        }
        if g.assignment_epoch > g.group_epoch {
            epochs.push(format!(
                "assignment epoch {} > group epoch {}",
                g.assignment_epoch, g.group_epoch
            ));
        }
    }
    out.push(result(
        CONSUMER_ASSIGNED_SINGLE_OWNER,
        problems,
        format!("{} partitions assigned, one owner each", assigned.len()),
    ));
    out.push(result(
        CONSUMER_EPOCHS,
        epochs,
        format!("group epoch {}", g.map_or(0, |g| g.group_epoch)),
    ));
    out
}

/// The cheap invariants (everything but replay-equals-live).
pub(crate) fn check(sim: &Simulation) -> Vec<InvariantResult> {
    if sim.spec().group_type == super::api::GroupType::Classic {
        return check_classic(sim);
    }
    if sim.spec().group_type == super::api::GroupType::Consumer {
        return check_consumer(sim);
    }
    let view = sim.view();
    let mut out = Vec::with_capacity(ALL.len());

    // active-task-single-owner
    let mut owners: BTreeMap<(&str, i32), &str> = BTreeMap::new();
    let mut problems = Vec::new();
    for m in sim.clients().filter(|m| m.is_alive()) {
        for (sub, parts) in m.owned.active.subtopologies() {
            for p in parts {
                if let Some(other) = owners.insert((sub, *p), &m.member_id) {
                    problems.push(format!("{sub}_{p} active on {other} and {}", m.member_id));
                }
            }
        }
    }
    out.push(result(
        ACTIVE_TASK_SINGLE_OWNER,
        problems,
        format!("{} active tasks, one owner each", owners.len()),
    ));

    // assigned-active-single-owner
    let mut owners: BTreeMap<(&str, i32), &str> = BTreeMap::new();
    let mut problems = Vec::new();
    for (id, m) in view.live_members() {
        let Some(c) = &m.current else { continue };
        let both = c
            .assigned
            .active
            .iter()
            .chain(c.pending_revocation.active.iter());
        for (sub, p, _) in both {
            if let Some(other) = owners.insert((sub, p), id)
                && other != id
            {
                problems.push(format!(
                    "{sub}_{p} assigned to or revoking from {other} and {id}"
                ));
            }
        }
    }
    out.push(result(
        ASSIGNED_ACTIVE_SINGLE_OWNER,
        problems,
        format!("{} active tasks assigned, one owner each", owners.len()),
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

    // epochs-monotonic
    out.push(result(
        EPOCHS_MONOTONIC,
        view.epoch_regressions.clone(),
        "no epoch went down".to_string(),
    ));

    // stable-group-members-own-target
    let mut problems = Vec::new();
    let state = view.state();
    if state == "Stable" {
        let clients: BTreeMap<&str, _> =
            sort::collect_map(sim.clients().map(|m| (m.member_id.as_str(), m)));
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
    type Roles<'a> = (BTreeSet<(&'a str, i32)>, Vec<(&'a str, i32)>);
    let mut by_process: BTreeMap<&str, Roles<'_>> = BTreeMap::new();
    for m in sim.clients().filter(|m| m.is_alive()) {
        let e = by_process.entry(m.process_id.as_str()).or_default();
        collect(&m.owned.active, |t| {
            e.0.insert(t);
        });
        collect(&m.owned.standby, |t| e.1.push(t));
        collect(&m.owned.warmup, |t| e.1.push(t));
    }
    for (p, (a, s)) in &by_process {
        for (sub, part) in s.iter().filter(|t| a.contains(t)) {
            problems.push(format!(
                "process {p} runs {sub}_{part} as active and standby"
            ));
        }
    }
    let mut targets: BTreeMap<&str, Roles<'_>> = BTreeMap::new();
    for (id, m) in view.live_members() {
        let (Some(md), Some(t)) = (&m.metadata, view.targets.get(id)) else {
            continue;
        };
        let e = targets.entry(md.process_id.as_str()).or_default();
        collect(&t.active, |t| {
            e.0.insert(t);
        });
        collect(&t.standby, |t| e.1.push(t));
        collect(&t.warmup, |t| e.1.push(t));
    }
    for (p, (a, s)) in &targets {
        for (sub, part) in s.iter().filter(|t| a.contains(t)) {
            problems.push(format!(
                "target gives process {p} {sub}_{part} as active and standby"
            ));
        }
    }
    out.push(result(STANDBY_NOT_WITH_ACTIVE, problems, "ok".to_string()));
    out
}

fn collect<'a>(t: &'a TaskSet, mut f: impl FnMut((&'a str, i32))) {
    for (sub, parts) in t.subtopologies() {
        for p in parts {
            f((sub, *p));
        }
    }
}

fn names(t: &TaskSet) -> Vec<String> {
    t.iter().map(|t| t.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::presets;

    fn failing(sim: &Simulation) -> Vec<String> {
        check(sim)
            .into_iter()
            .filter(|r| !r.ok)
            .map(|r| r.name)
            .collect()
    }

    #[test]
    fn invariants_hold_on_a_preset_and_catch_a_double_owner() {
        let (spec, _) = presets()
            .into_iter()
            .find(|p| p.0.name == "crash-standby-failover")
            .unwrap();
        let mut sim = Simulation::new(spec).unwrap();
        sim.step(20_000);
        assert!(failing(&sim).is_empty(), "{:?}", check(&sim));
        // Make the second client also run the first client's active tasks.
        let first = sim.clients().next().unwrap().owned.active.clone();
        assert!(!first.is_empty());
        let second = sim.clients_mut().nth(1).unwrap();
        second.owned.active = second.owned.active.union(&first);
        let f = failing(&sim);
        assert!(f.contains(&ACTIVE_TASK_SINGLE_OWNER.to_string()), "{f:?}");
        // The group is Stable and that client is in sync: it no longer runs its target.
        assert!(
            f.contains(&STABLE_GROUP_MEMBERS_OWN_TARGET.to_string()),
            "{f:?}"
        );
    }

    #[test]
    fn standby_with_active_on_one_process_is_caught() {
        let (spec, _) = presets()
            .into_iter()
            .find(|p| p.0.name == "crash-standby-failover")
            .unwrap();
        let mut sim = Simulation::new(spec).unwrap();
        sim.step(20_000);
        let m = sim.clients_mut().next().unwrap();
        m.owned.standby = m.owned.active.clone();
        let f = failing(&sim);
        assert!(f.contains(&STANDBY_NOT_WITH_ACTIVE.to_string()), "{f:?}");
    }
}
