//! The `sticky-rack-aware` and `sticky-warmups` task assignors: groupcoord's extensions of the
//! sticky assignor (spec §5.3). The default `sticky` is Kafka 4.4's own algorithm,
//! [`super::kafka_sticky`]; this one trades Kafka's exact tie-breaks for tighter guarantees
//! (balanced totals, minimum movement), KIP-925-style rack-aware standbys and, under the
//! `sticky-warmups` name, KIP-441 warm-ups.
//!
//! # What it guarantees
//!
//! * **Actives**: every task of the topology is active on exactly one member (if there are
//!   members). Active counts per member differ by at most one: each member gets
//!   `floor(A / M)` or `floor(A / M) + 1` of the `A` tasks.
//! * **Standbys** (stateful subtopologies only, `num_standby_replicas` each): a process never
//!   holds the same task twice (active and standby, or two standbys). Best effort: with `P`
//!   processes at most `P - 1` standbys of a task fit; what does not fit is left out, never an
//!   error.
//! * **Balance**: total tasks (active + standby) per member are `floor(T / M)` or one more,
//!   where `T` counts the standbys that fit, unless the process constraint makes that impossible
//!   (then the least-loaded member that may take a standby gets it). Since every member of a
//!   process is within one task of every other member, process loads (tasks per member) are
//!   balanced by capacity too. Among equally loaded members, the one on the less loaded process
//!   (tasks / members, compared exactly) wins.
//! * **Stickiness**: previous active owners keep their tasks up to the quota; feeding an
//!   assignment back in as the members' current tasks moves no active task, and no standby
//!   either when totals were balanced (if the process constraint makes balance impossible, which
//!   standbys of an overloaded member fit its quota depends on order, so a rerun may move some;
//!   over the quota, a previous standby holder is still preferred). The quota's "+1" slots go
//!   to the members that held the most tasks, so after one member joins or leaves the number of
//!   moved active tasks is the minimum any balanced assignment needs. Previous standbys stay
//!   while the member has room.
//! * **State locality** (KAFKA-20719 semantics): an active task without a remaining owner goes to
//!   a member with state for it: caught-up members first, then members holding it as standby or
//!   warm-up, then by reported offset, highest first. A new standby prefers (at equal rack
//!   diversity and with room) the previous active owner and members reporting offsets for it, so
//!   a restarted member (fresh member id, empty assignment, state on disk) gets its tasks back.
//!
//! # Rack awareness (beyond Kafka 4.4)
//!
//! Kafka 4.4 accepts `rack.aware.assignment.tags` but its sticky assignor ignores them. Here, a
//! process's tags are the `client_tags` of its first member (by member id) for the configured
//! keys; a missing key never counts as different. A new standby goes, among the processes whose
//! least-loaded member has room under the quota, to one maximising the number of tag keys whose
//! value differs from every other holder of the task (KIP-925 style), then by the locality and
//! load rules above. Afterwards standbys are swapped between tasks (loads unchanged) while a swap
//! makes one standby more diverse and the other no less diverse. Existing standbys are kept
//! rather than moved for diversity alone, unless such a swap exists.
//!
//! # Warm-ups (KIP-441; Kafka 4.4 never assigns any; only the `sticky-warmups` assignor places them)
//!
//! Kafka 4.4's assignor API returns only active and standby tasks, and the "assignment refiner"
//! that would add warm-ups is an identity function (spec §3.15, §5.6): moving an active task to a
//! member without its state makes that member restore it while the task is down. This assignor
//! implements KIP-441 instead, when `num_warmup_replicas > 0` and `acceptable_recovery_lag >= 0`:
//!
//! * A member is *caught up* on a stateful task if it was its active owner, reported
//!   `LATEST_OFFSET` (-2) for it, or reported an offset within `acceptable_recovery_lag` of the
//!   highest end offset any member reported for it. A process is caught up if a member is.
//! * After the balanced target is computed, for each stateful task whose target owner's process
//!   is not caught up while another process is, the task stays active on a caught-up member (the
//!   previous owner first, then the least lag) and the intended owner gets it as a **warm-up**
//!   (`MemberAssignment::warmup`). A standby of the task on the keeper's process is dropped, so
//!   the process constraint holds for actives, standbys and warm-ups together.
//! * At most `num_warmup_replicas` warm-ups per group; warm-ups already in progress are renewed
//!   first. Past the budget, tasks move directly (as in Kafka 4.4).
//! * Once the warm-up member reports it is caught up, the next assignment moves the task to it:
//!   a member over its quota sheds first the tasks another member is warming up.
//!
//! Warm-ups trade balance for availability: until they catch up, the keepers run more tasks than
//! the quota.
//!
//! # Differences from Kafka 4.4's `StickyTaskAssignor` (spec §5.3)
//!
//! Same three active steps (previous owner, member with state, least-loaded process) and the same
//! process constraint, with these deliberate changes:
//!
//! * Quotas: Kafka recomputes `ceil(remaining / members left)` as members fill up, so which
//!   members end at the higher count depends on task order, and a join or leave can move more
//!   than needed. Here the `A mod M` "+1" slots go to the first previous owners that reach the
//!   floor while keeping tasks, which keeps the maximum possible number of tasks in place.
//! * Candidates for an orphaned active: Kafka ranks previous standbys, then offset reporters,
//!   and picks with a "strictly less loaded on both counts" rule. Here: caught-up members first
//!   (see warm-ups), then previous standby or warm-up holders, then by offset; the first with room
//!   wins. Kafka 4.4 ignores `warmupTasks`; here they count like standbys (as in Kafka trunk).
//!   `LATEST_OFFSET` (-2) ranks as the most caught up (Kafka compares it as the number -2).
//! * Standbys: previous standby holders keep theirs first; the previous active owner and members
//!   reporting offsets are preferred only for standbys not kept that way (Kafka tries the
//!   previous active owner first, which can move a previous standby for no gain).
//! * Balance of totals: new standbys are placed most constrained first (tasks whose active runs
//!   on a process with more members, which leaves fewer members to go to), and when every
//!   eligible member is over the quota, another standby is first moved out of the way if that
//!   keeps every member within one task of the others. Kafka places standbys in task order and
//!   then on the least-loaded eligible process, over the quota if need be.
//! * Duplicate active claims: Kafka's last writer (hash-map order) wins; here the smallest
//!   member id. Heap ties: arbitrary in Kafka; explicit total orders here.
//! * Rack awareness and warm-ups as described above (Kafka 4.4 has neither).
//!
//! # Bad input
//!
//! A member with an empty process id is its own process (its member id is the process id). Tasks
//! outside the topology in owned sets or offsets are ignored. A task claimed active by several
//! members belongs to the smallest member id. No members: empty assignment. Negative
//! `num_standby_replicas` / `num_warmup_replicas` count as zero. Nothing panics.
//!
//! # Determinism
//!
//! Members, processes, subtopologies and tag values are interned in sorted order; all ties break
//! by process id, then member id, then task (subtopology, partition). No hash map is iterated.

mod assign;
mod loads;
mod model;

use super::*;
use crate::util::sort;
use model::{Model, NONE};

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct StickyTaskAssignor {
    /// Place KIP-441 warm-ups (`num_warmup_replicas`). Off for `sticky-rack-aware` (as in the
    /// default `sticky`): Kafka 4.4 never assigns
    /// warm-ups and Kafka Streams 4.4 clients do not run them ("Warmup replicas are not supported
    /// yet with the streams protocol"), so a held-back active would never move. On for
    /// `sticky-warmups`, for the explorer and for clients that do support them.
    pub warmups: bool,
}

impl TaskAssignor for StickyTaskAssignor {
    fn name(&self) -> &'static str {
        if self.warmups {
            "sticky-warmups"
        } else {
            "sticky-rack-aware"
        }
    }

    fn assign(
        &self,
        group: &GroupSpec,
        topology: &TopologySpec,
    ) -> Result<GroupAssignment, AssignorError> {
        let warmups = if self.warmups {
            group.configs.num_warmup_replicas
        } else {
            0
        };
        Ok(assign_sticky_with(group, topology, warmups))
    }
}

/// The sticky assignment with an explicit warm-up budget.
pub fn assign_sticky_with(
    group: &GroupSpec,
    topology: &TopologySpec,
    warmup_budget: i32,
) -> GroupAssignment {
    let mut members: BTreeMap<String, MemberAssignment> = sort::collect_map(
        group
            .members
            .keys()
            .map(|m| (m.clone(), MemberAssignment::default())),
    );
    if members.is_empty() {
        return GroupAssignment { members };
    }
    let model = Model::build(group, topology);
    let c = &group.configs;
    let params = assign::Params {
        standbys: c.num_standby_replicas.max(0) as usize,
        acceptable_lag: c.acceptable_recovery_lag,
        warmups: warmup_budget.max(0) as usize,
    };
    let out = assign::assign(&model, &params);

    // Per member, tasks in index order (= sorted by subtopology, partition).
    let n = model.n_members();
    let mut active: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut standby: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut warmup: Vec<Vec<u32>> = vec![Vec::new(); n];
    for t in 0..model.n_tasks() {
        let o = out.owner[t];
        if o != NONE {
            active[o as usize].push(t as u32);
        }
        let base = t * out.stride;
        for &m in &out.standby[base..base + out.n_standby[t] as usize] {
            standby[m as usize].push(t as u32);
        }
        if out.warmup[t] != NONE {
            warmup[out.warmup[t] as usize].push(t as u32);
        }
    }
    let to_set = |tasks: &[u32]| {
        let mut set = TaskSet::new();
        for &t in tasks {
            let s = model.task_sub[t as usize] as usize;
            set.insert(model.sub_ids[s], model.task_part[t as usize]);
        }
        set
    };
    for (i, a) in members.values_mut().enumerate() {
        a.active = to_set(&active[i]);
        a.standby = to_set(&standby[i]);
        a.warmup = to_set(&warmup[i]);
    }
    GroupAssignment { members }
}

#[cfg(test)]
mod tests;
