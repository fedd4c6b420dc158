//! The passes of the sticky assignor over the interned [`Model`]; see the parent module's docs
//! for the rules. Every loop runs over indices in a fixed order, so the result is a function of
//! the input alone.

use super::loads::{Loads, ProcKey};
use super::model::{HAS_OFFSET, Holder, Model, NONE, PREV_ACTIVE, PREV_STANDBY, PREV_WARMUP};
use crate::util::sort;

/// Upper bound on the standbys inspected by the repair searches of one assignment, so that a
/// pathological input cannot make them quadratic.
const REPAIR_BUDGET: usize = 1 << 20;

/// Upper bound on the standbys inspected by one diversity-keeping augmenting search.
const STRICT_AUGMENT_BUDGET: usize = 256;

/// The computed target, by index.
pub(crate) struct Outcome {
    /// Active owner of each task (a member index; [`NONE`] only if there are no members).
    pub owner: Vec<u32>,
    /// Standby members of each task: `standby[t * stride .. t * stride + n_standby[t]]`.
    pub standby: Vec<u32>,
    pub n_standby: Vec<u32>,
    pub stride: usize,
    /// Warm-up member of each task, or [`NONE`].
    pub warmup: Vec<u32>,
}

/// Assignment parameters, sanitised.
pub(crate) struct Params {
    pub standbys: usize,
    pub acceptable_lag: i64,
    pub warmups: usize,
}

/// Per-member quota bookkeeping: `floor` tasks each, and `extras` members may have one more.
struct Quota {
    floor: u32,
    extras: u32,
}

impl Quota {
    fn new(total: usize, members: usize) -> Quota {
        Quota {
            floor: (total / members) as u32,
            extras: (total % members) as u32,
        }
    }

    fn has_room(&self, count: u32) -> bool {
        count < self.floor || (count == self.floor && self.extras > 0)
    }

    /// Books one more task for a member at `count`.
    fn take(&mut self, count: u32) {
        if count == self.floor && self.extras > 0 {
            self.extras -= 1;
        }
    }
}

/// Sort key (partition, subtopology) as one integer.
fn part_sub_key(model: &Model<'_>, t: u32) -> u64 {
    (u64::from(model.task_part[t as usize] as u32) << 32) | u64::from(model.task_sub[t as usize])
}

pub(crate) fn assign(model: &Model<'_>, params: &Params) -> Outcome {
    let n_tasks = model.n_tasks();
    let (owner, active_count) = assign_actives(model, params);
    let mut out = Outcome {
        owner,
        standby: Vec::new(),
        n_standby: vec![0; n_tasks],
        stride: 0,
        warmup: vec![NONE; n_tasks],
    };
    let s_eff = params.standbys.min(model.n_procs().saturating_sub(1));
    if s_eff > 0 {
        Standbys::new(model, &mut out, active_count, s_eff, params.acceptable_lag).run();
    }
    if params.warmups > 0 && params.acceptable_lag >= 0 {
        assign_warmups(model, params, &mut out);
    }
    out
}

/// Active tasks: keep previous owners up to the quota, give orphans to members with state for
/// them, then to the least-loaded member.
fn assign_actives(model: &Model<'_>, params: &Params) -> (Vec<u32>, Vec<u32>) {
    let n_tasks = model.n_tasks();
    let n_members = model.n_members();
    let mut quota = Quota::new(n_tasks, n_members);
    let mut count = vec![0u32; n_members];
    let mut owner = vec![NONE; n_tasks];

    // 1. Previous owners keep their tasks while below the quota. A member over the quota sheds
    //    first the tasks that another member is warming up (so the migration completes), then
    //    the highest (partition, subtopology).
    let mut keep: Vec<(u64, u32)> = (0..n_tasks as u32)
        .filter(|&t| model.prev_active[t as usize] != NONE)
        .map(|t| {
            let prev = model.prev_active[t as usize];
            let warmed_elsewhere = model
                .holders_of(t)
                .iter()
                .any(|h| h.flags & PREV_WARMUP != 0 && h.member != prev);
            (u64::from(warmed_elsewhere), t)
        })
        .collect();
    sort::unstable_by_key(&mut keep, |&(w, t)| (w, part_sub_key(model, t)));
    for &(warmed, t) in &keep {
        let m = model.prev_active[t as usize];
        let c = count[m as usize];
        // A task warmed up elsewhere never takes one of the "+1" slots: the warm-up holder
        // should get it as soon as it is caught up.
        if quota.has_room(c) && (warmed == 0 || c < quota.floor) {
            quota.take(count[m as usize]);
            count[m as usize] += 1;
            owner[t as usize] = m;
        }
    }

    // 2. Orphaned stateful tasks go to the best-ranked member with state for them and room:
    //    caught-up first, then previous standby / warm-up holders, then by reported offset.
    let mut orphans: Vec<u32> = (0..n_tasks as u32)
        .filter(|&t| owner[t as usize] == NONE)
        .collect();
    sort::unstable_by_key(&mut orphans, |&t| part_sub_key(model, t));
    let mut ranked: Vec<(u8, Holder)> = Vec::new();
    let mut rest = Vec::with_capacity(orphans.len());
    for &t in &orphans {
        if model.stateful(t) {
            ranked.clear();
            for h in model.holders_of(t) {
                if h.member == model.prev_active[t as usize]
                    || h.flags & (PREV_STANDBY | PREV_WARMUP | HAS_OFFSET) == 0
                {
                    continue;
                }
                let class = u8::from(!model.caught_up(h, t, params.acceptable_lag)) * 2
                    + u8::from(h.flags & (PREV_STANDBY | PREV_WARMUP) == 0);
                ranked.push((class, *h));
            }
            sort::by_key(&mut ranked, |(c, _)| *c);
            if let Some((_, h)) = ranked
                .iter()
                .find(|(_, h)| quota.has_room(count[h.member as usize]))
            {
                let m = h.member;
                quota.take(count[m as usize]);
                count[m as usize] += 1;
                owner[t as usize] = m;
                continue;
            }
        }
        rest.push(t);
    }

    // 3. The rest, in (subtopology, partition) order, to the least-loaded member of the
    //    least-loaded process.
    sort::unstable(&mut rest);
    let all_in_one = vec![0; model.n_procs()];
    let mut loads = Loads::new(model, count, &all_in_one, 1);
    for t in rest {
        let Some(k) = loads.best_in_group(0, |_| false) else {
            break;
        };
        let m = loads.min_member(k.proc);
        quota.take(loads.count[m as usize]);
        loads.add(m);
        owner[t as usize] = m;
    }
    (owner, loads.count)
}

/// Standby placement state.
struct Standbys<'m, 'a> {
    model: &'m Model<'a>,
    out: &'m mut Outcome,
    loads: Loads<'m>,
    quota: Quota,
    s_eff: usize,
    /// Processes holding each task (active first, then standbys), stride `s_eff + 1`.
    hold: Vec<u32>,
    n_hold: Vec<u32>,
    /// Standby tasks of each member (for the repair searches).
    member_standbys: Vec<Vec<u32>>,
    /// Processes of each rack-awareness group.
    group_procs: Vec<Vec<u32>>,
    order: Vec<u32>,
    budget: usize,
    scores: Vec<u32>,
    best: Vec<Option<ProcKey>>,
    acceptable_lag: i64,
}

impl<'m, 'a> Standbys<'m, 'a> {
    fn new(
        model: &'m Model<'a>,
        out: &'m mut Outcome,
        active_count: Vec<u32>,
        s_eff: usize,
        acceptable_lag: i64,
    ) -> Self {
        let n_tasks = model.n_tasks();
        let mut order: Vec<u32> = (0..n_tasks as u32).filter(|&t| model.stateful(t)).collect();
        sort::unstable_by_key(&mut order, |&t| part_sub_key(model, t));
        let total = n_tasks + s_eff * order.len();
        let mut quota = Quota::new(total, model.n_members());
        // Members already above the floor through their actives use up extras.
        for &c in &active_count {
            if c > quota.floor {
                quota.extras = quota.extras.saturating_sub(1);
            }
        }
        let stride = s_eff + 1;
        let mut hold = vec![NONE; n_tasks * stride];
        let mut n_hold = vec![0u32; n_tasks];
        for t in 0..n_tasks {
            let o = out.owner[t];
            if o != NONE {
                hold[t * stride] = model.member_proc[o as usize];
                n_hold[t] = 1;
            }
        }
        let mut group_procs = vec![Vec::new(); model.n_groups];
        for (p, &g) in model.proc_group.iter().enumerate() {
            group_procs[g as usize].push(p as u32);
        }
        out.stride = s_eff;
        out.standby = vec![NONE; n_tasks * s_eff];
        let loads = Loads::new(model, active_count, &model.proc_group, model.n_groups);
        Standbys {
            model,
            out,
            loads,
            quota,
            s_eff,
            hold,
            n_hold,
            member_standbys: vec![Vec::new(); model.n_members()],
            group_procs,
            order,
            budget: REPAIR_BUDGET,
            scores: vec![0; model.n_groups],
            best: Vec::with_capacity(model.n_groups),
            acceptable_lag,
        }
    }

    fn holds(&self, t: u32, p: u32) -> bool {
        let stride = self.s_eff + 1;
        let base = t as usize * stride;
        self.hold[base..base + self.n_hold[t as usize] as usize].contains(&p)
    }

    fn holder_procs(&self, t: u32) -> &[u32] {
        let stride = self.s_eff + 1;
        let base = t as usize * stride;
        &self.hold[base..base + self.n_hold[t as usize] as usize]
    }

    fn has_room(&self, m: u32) -> bool {
        self.quota.has_room(self.loads.count[m as usize])
    }

    /// Books a standby of `t` on `m`.
    fn place(&mut self, t: u32, m: u32) {
        self.quota.take(self.loads.count[m as usize]);
        self.loads.add(m);
        self.record(t, m);
    }

    /// Records a standby of `t` on `m` without touching the counts.
    fn record(&mut self, t: u32, m: u32) {
        let ti = t as usize;
        let p = self.model.member_proc[m as usize];
        let stride = self.s_eff + 1;
        self.hold[ti * stride + self.n_hold[ti] as usize] = p;
        self.n_hold[ti] += 1;
        self.out.standby[ti * self.s_eff + self.out.n_standby[ti] as usize] = m;
        self.out.n_standby[ti] += 1;
        self.member_standbys[m as usize].push(t);
    }

    /// Moves the standby of `t` from member `from` to member `to` (counts untouched).
    fn relocate(&mut self, t: u32, from: u32, to: u32) {
        let ti = t as usize;
        let (pf, pt) = (
            self.model.member_proc[from as usize],
            self.model.member_proc[to as usize],
        );
        let stride = self.s_eff + 1;
        let n = self.n_hold[ti] as usize;
        for slot in &mut self.hold[ti * stride..ti * stride + n] {
            if *slot == pf {
                *slot = pt;
            }
        }
        let n = self.out.n_standby[ti] as usize;
        for slot in &mut self.out.standby[ti * self.s_eff..ti * self.s_eff + n] {
            if *slot == from {
                *slot = to;
            }
        }
        let list = &mut self.member_standbys[from as usize];
        if let Some(i) = list.iter().position(|&x| x == t) {
            list.swap_remove(i);
        }
        self.member_standbys[to as usize].push(t);
    }

    /// A standby of `t` on process `p` adds no tag value the task's copies lack, while another
    /// rack group would.
    fn adds_no_diversity(&self, t: u32, p: u32) -> bool {
        let model = self.model;
        let holders = self.holder_procs(t).to_vec();
        let own = self.score(model.proc_group[p as usize], holders.iter().copied());
        own == 0 && (0..model.n_groups as u32).any(|g| self.score(g, holders.iter().copied()) > 0)
    }

    /// Number of tag keys for which group `g` has a value that none of `procs` has.
    fn score(&self, g: u32, procs: impl Iterator<Item = u32> + Clone) -> u32 {
        let model = self.model;
        let nk = model.n_keys;
        let mut s = 0;
        for k in 0..nk {
            let v = model.group_values[g as usize * nk + k];
            if v != NONE
                && procs.clone().all(|p| {
                    model.group_values[model.proc_group[p as usize] as usize * nk + k] != v
                })
            {
                s += 1;
            }
        }
        s
    }

    fn run(mut self) {
        let model = self.model;
        // 1. Previous standby holders keep their standbys while they have room. With rack tags,
        //    a previous standby that shares every tag value with the task's other copies is not
        //    kept when some rack group would add diversity: step 2 places it (rack awareness over
        //    standby stickiness; a same-rack standby protects little).
        let rack_aware = model.n_keys > 0 && model.n_groups > 1;
        for i in 0..self.order.len() {
            let t = self.order[i];
            for h in model.holders_of(t) {
                if self.out.n_standby[t as usize] as usize == self.s_eff {
                    break;
                }
                let p = model.member_proc[h.member as usize];
                if h.flags & PREV_STANDBY != 0 && !self.holds(t, p) && self.has_room(h.member) {
                    if rack_aware && self.adds_no_diversity(t, p) {
                        continue;
                    }
                    self.place(t, h.member);
                }
            }
        }
        // 2. The remaining replicas, most constrained tasks first: those whose active runs on a
        //    process with many members have the fewest members left to go to.
        let mut pending: Vec<u32> = self
            .order
            .iter()
            .copied()
            .filter(|&t| (self.out.n_standby[t as usize] as usize) < self.s_eff)
            .collect();
        let cap_of_owner = |t: u32| {
            let o = self.out.owner[t as usize];
            if o == NONE {
                0
            } else {
                model.proc_members[model.member_proc[o as usize] as usize].len()
            }
        };
        // Stable: equal capacities keep (partition, subtopology) order.
        sort::by_key(&mut pending, |&t| std::cmp::Reverse(cap_of_owner(t)));
        for t in pending {
            while (self.out.n_standby[t as usize] as usize) < self.s_eff {
                if !self.place_one(t) {
                    break;
                }
            }
        }
        // 3. Rack diversity: swap standbys between tasks where that makes one more diverse.
        if model.n_keys > 0 && model.n_groups > 1 {
            for _ in 0..8 {
                if !self.diversity_round() {
                    break;
                }
            }
        }
    }

    /// Places one standby of `t`; false if no process can take it.
    fn place_one(&mut self, t: u32) -> bool {
        let mut best = std::mem::take(&mut self.best);
        let placed = self.place_one_with(t, &mut best);
        self.best = best;
        placed
    }

    fn place_one_with(&mut self, t: u32, best: &mut Vec<Option<ProcKey>>) -> bool {
        let model = self.model;
        let n_groups = model.n_groups;
        if model.n_keys > 0 {
            for g in 0..n_groups {
                self.scores[g] = self.score(g as u32, self.holder_procs(t).iter().copied());
            }
        }
        // Least-loaded eligible process of each group.
        best.clear();
        for g in 0..n_groups {
            let stride = self.s_eff + 1;
            let base = t as usize * stride;
            let held = &self.hold[base..base + self.n_hold[t as usize] as usize];
            best.push(self.loads.best_in_group(g, |p| held.contains(&p)));
        }
        let room = |k: &ProcKey| self.quota.has_room(k.min_count);
        let top_score = (0..n_groups)
            .filter(|&g| best[g].as_ref().is_some_and(room))
            .map(|g| self.scores[g])
            .max();
        if let Some(top) = top_score {
            // A member with state for the task (previous active owner, warm-up, reported offset)
            // first, caught-up ones before the others.
            let mut chosen = None;
            for pass in 0..2 {
                for h in model.holders_of(t) {
                    if h.flags & (PREV_ACTIVE | PREV_WARMUP | HAS_OFFSET | PREV_STANDBY) == 0 {
                        continue;
                    }
                    if (pass == 0) != model.caught_up(h, t, self.acceptable_lag) {
                        continue;
                    }
                    let p = model.member_proc[h.member as usize];
                    if !self.holds(t, p)
                        && self.has_room(h.member)
                        && self.scores[model.proc_group[p as usize] as usize] == top
                    {
                        chosen = Some(h.member);
                        break;
                    }
                }
                if chosen.is_some() {
                    break;
                }
            }
            let m = match chosen {
                Some(m) => m,
                None => {
                    let k = (0..n_groups)
                        .filter(|&g| self.scores[g] == top)
                        .filter_map(|g| best[g].filter(room))
                        .min()
                        .expect("a group reached the top score");
                    self.loads.min_member(k.proc)
                }
            };
            self.place(t, m);
            return true;
        }
        // Balance before diversity: try a move that keeps the other task as diverse, then any.
        if self.augment(t, true) || (model.n_keys > 0 && self.augment(t, false)) {
            return true;
        }
        // Nobody eligible has room (balance is impossible): best effort. The previous standby
        // holder keeps it if it can (no churn), else the least-loaded eligible member.
        let prev = model.holders_of(t).iter().find(|h| {
            h.flags & PREV_STANDBY != 0 && !self.holds(t, model.member_proc[h.member as usize])
        });
        if let Some(h) = prev {
            self.place(t, h.member);
            return true;
        }
        match best.iter().flatten().min() {
            Some(k) => {
                let m = self.loads.min_member(k.proc);
                self.place(t, m);
                true
            }
            None => false,
        }
    }

    /// Every member with room is on a process holding `t`: move another task's standby from a
    /// member `w` (on a process not holding `t`) to such a member `v`, and give `t` to `w`. With
    /// `keep_diversity`, only moves that leave the other task at least as rack-diverse.
    fn augment(&mut self, t: u32, keep_diversity: bool) -> bool {
        let model = self.model;
        if self.budget == 0 {
            return false;
        }
        // The diversity-keeping search may fail everywhere; cap it so the plain one still runs.
        let mut local = if keep_diversity && model.n_keys > 0 {
            STRICT_AUGMENT_BUDGET
        } else {
            usize::MAX
        };
        // One receiver per process (which task a process can take does not depend on the
        // member): its least-loaded member, if that one has room.
        let mut receivers: Vec<u32> = Vec::new();
        for members in &model.proc_members {
            let least = members
                .iter()
                .copied()
                .min_by_key(|&m| (self.loads.count[m as usize], m));
            if let Some(m) = least.filter(|&m| self.has_room(m)) {
                receivers.push(m);
            }
        }
        sort::unstable_by_key(&mut receivers, |&m| (self.loads.count[m as usize], m));
        if receivers.is_empty() {
            return false;
        }
        // Processes that could take `t`, most diverse first.
        let held = self.holder_procs(t).to_vec();
        let mut targets: Vec<(u32, u32)> = (0..model.n_procs() as u32)
            .filter(|p| !held.contains(p))
            .map(|p| {
                (
                    self.score(model.proc_group[p as usize], held.iter().copied()),
                    p,
                )
            })
            .collect();
        sort::unstable_by_key(&mut targets, |&(s, p)| (std::cmp::Reverse(s), p));
        for &v in &receivers {
            let pv = model.member_proc[v as usize];
            for &(_, py) in &targets {
                for &w in &model.proc_members[py as usize] {
                    for i in 0..self.member_standbys[w as usize].len() {
                        if self.budget == 0 || local == 0 {
                            return false;
                        }
                        self.budget -= 1;
                        local -= 1;
                        let t2 = self.member_standbys[w as usize][i];
                        if t2 == t || self.holds(t2, pv) {
                            continue;
                        }
                        if keep_diversity && model.n_keys > 0 {
                            let others: Vec<u32> = self
                                .holder_procs(t2)
                                .iter()
                                .copied()
                                .filter(|&p| p != py)
                                .collect();
                            let sv =
                                self.score(model.proc_group[pv as usize], others.iter().copied());
                            let sw =
                                self.score(model.proc_group[py as usize], others.iter().copied());
                            if sv < sw {
                                continue;
                            }
                        }
                        self.relocate(t2, w, v);
                        self.quota.take(self.loads.count[v as usize]);
                        self.loads.add(v);
                        self.record(t, w);
                        return true;
                    }
                }
            }
        }
        false
    }

    /// One pass of diversity-improving swaps; true if anything changed.
    fn diversity_round(&mut self) -> bool {
        let model = self.model;
        let mut changed = false;
        for i in 0..self.order.len() {
            let t = self.order[i];
            let mut slot = 0;
            while slot < self.out.n_standby[t as usize] as usize {
                if self.budget == 0 {
                    return changed;
                }
                let x = self.out.standby[t as usize * self.s_eff + slot];
                slot += 1;
                let px = model.member_proc[x as usize];
                let others = self.holder_procs(t).iter().copied().filter(|&p| p != px);
                let sx = self.score(model.proc_group[px as usize], others.clone());
                if sx as usize == model.n_keys {
                    // Already as diverse as it gets.
                    continue;
                }
                let others: Vec<u32> = others.collect();
                let mut better: Vec<(u32, u32)> = (0..model.n_groups as u32)
                    .map(|g| (self.score(g, others.iter().copied()), g))
                    .filter(|&(s, _)| s > sx)
                    .collect();
                if better.is_empty() {
                    continue;
                }
                sort::unstable_by_key(&mut better, |&(s, g)| (std::cmp::Reverse(s), g));
                if let Some((y, t2)) = self.find_swap(t, x, &better) {
                    self.relocate(t, x, y);
                    self.relocate(t2, y, x);
                    changed = true;
                }
            }
        }
        changed
    }

    /// A member `y` in one of `groups` (not holding `t`) with a standby `t2` that `x`'s process
    /// can take without making `t2` less diverse.
    fn find_swap(&mut self, t: u32, x: u32, groups: &[(u32, u32)]) -> Option<(u32, u32)> {
        let model = self.model;
        let px = model.member_proc[x as usize];
        for &(_, g) in groups {
            for &py in &self.group_procs[g as usize] {
                if self.holds(t, py) {
                    continue;
                }
                for &y in &model.proc_members[py as usize] {
                    for &t2 in &self.member_standbys[y as usize] {
                        if self.budget == 0 {
                            return None;
                        }
                        self.budget -= 1;
                        if t2 == t || self.holds(t2, px) {
                            continue;
                        }
                        let hp = self.holder_procs(t2);
                        let others = hp.iter().copied().filter(|&p| p != py);
                        let sx = self.score(model.proc_group[px as usize], others.clone());
                        let sy = self.score(g, others);
                        if sx >= sy {
                            return Some((y, t2));
                        }
                    }
                }
            }
        }
        None
    }
}

/// KIP-441 warm-ups: a stateful task whose target owner's process is not caught up stays active
/// on a caught-up member while the target owner warms it up, within the group's budget.
fn assign_warmups(model: &Model<'_>, params: &Params, out: &mut Outcome) {
    let lag = params.acceptable_lag;
    let proc_caught_up = |t: u32, p: u32| {
        model
            .holders_of(t)
            .iter()
            .any(|h| model.member_proc[h.member as usize] == p && model.caught_up(h, t, lag))
    };
    // Warm-ups already in progress continue first.
    let mut order: Vec<(bool, u32)> = (0..model.n_tasks() as u32)
        .filter(|&t| model.stateful(t) && out.owner[t as usize] != NONE)
        .map(|t| {
            let d = out.owner[t as usize];
            let continuing = model
                .holders_of(t)
                .iter()
                .any(|h| h.member == d && h.flags & PREV_WARMUP != 0);
            (!continuing, t)
        })
        .collect();
    sort::unstable_by_key(&mut order, |&(c, t)| (c, part_sub_key(model, t)));
    let mut budget = params.warmups;
    for (_, t) in order {
        if budget == 0 {
            break;
        }
        let d = out.owner[t as usize];
        let pd = model.member_proc[d as usize];
        if proc_caught_up(t, pd) {
            continue;
        }
        // The caught-up member to keep the task: the previous owner, else the least lag.
        let keeper = model
            .holders_of(t)
            .iter()
            .filter(|h| model.member_proc[h.member as usize] != pd && model.caught_up(h, t, lag))
            .min_by_key(|h| {
                (
                    h.flags & PREV_ACTIVE == 0,
                    std::cmp::Reverse(h.offset_rank),
                    h.member,
                )
            });
        let Some(c) = keeper.map(|h| h.member) else {
            continue;
        };
        budget -= 1;
        let pc = model.member_proc[c as usize];
        out.owner[t as usize] = c;
        out.warmup[t as usize] = d;
        // The keeper's process now runs the task: drop its standby there, if any.
        let ti = t as usize;
        let n = out.n_standby[ti] as usize;
        let slots = &mut out.standby[ti * out.stride..ti * out.stride + n];
        if let Some(i) = slots
            .iter()
            .position(|&m| model.member_proc[m as usize] == pc)
        {
            slots[i] = slots[n - 1];
            out.n_standby[ti] -= 1;
        }
    }
}
