//! The default `sticky` task assignor: Apache Kafka 4.4's `StickyTaskAssignor`, reproduced so
//! that the same input gives the same target assignment, tie-breaks included (checked against
//! the real Kafka 4.4.0 jar on recorded random groups by `tests/assignor_apache.rs`).
//!
//! # The algorithm (Kafka 4.4)
//!
//! Quotas: `ceil(tasks / members)` for actives and `ceil((tasks + standby replicas) / members)`
//! for all tasks; whenever a member reaches a quota exactly, it leaves the pool and the quota is
//! recomputed over the remaining tasks and members.
//!
//! 1. **Actives**, tasks ordered by (partition, subtopology): (a) the previous active owner
//!    takes the task while under the active quota; (b) then, for the tasks left, the best
//!    previous standby holder / offset reporter (see below) takes it while under the active
//!    quota; (c) the rest, ordered by (subtopology, partition), go one by one to the process
//!    polled from a priority queue ordered by load (tasks / members of the process) only, and
//!    there to its member polled from a queue ordered by task count only.
//! 2. **Standbys** (stateful subtopologies, `num_standby_replicas > 0`), tasks ordered by
//!    (partition, subtopology) descending, one replica after another: the previous active
//!    owner if its process does not hold the task yet and it is under the total quota, else the
//!    best previous standby holder / offset reporter whose process does not hold the task and
//!    that is under the total quota; at the first replica neither takes, the task's remaining
//!    replicas are deferred. Deferred tasks, ordered by (subtopology, partition) descending, go
//!    to the least-loaded process (same kind of queue, rebuilt) that does not hold the task,
//!    over the quota if need be; replicas that fit nowhere are dropped.
//!
//! Candidates for 1b and 2 are, per task, the members that held it as standby (ranked first)
//! and those that reported an offset for it, by reported offset descending (a standby without a
//! reported offset counts as 0; `-2`, "caught up", counts as the number -2), then in member
//! order. Among them the first one wins unless a later one has both a strictly lower process
//! load and a strictly lower task count. Warm-up tasks, rack tags and end offsets are ignored.
//!
//! # Orders that decide ties
//!
//! The group coordinator hands the assignor its members in a `java.util.HashMap`, so "member
//! order" above, the order processes enter the process queue and members the per-process member
//! queue are `HashMap` iteration orders of member and process ids; equal loads then come out of
//! the queues in binary-heap order. [`java_compat`] reproduces both. The map of members is
//! filled in the iteration order of the coordinator's own member map (a `TimelineHashMap`,
//! [`java_compat::TimelineHashMapOrder`]); [`assign_with_member_order`] and
//! [`TaskAssignor::assign_in_member_order`] take that order, and [`KafkaStickyAssignor::assign`]
//! assumes member-id order (the two differ only when two member ids share a hash bucket). A task
//! claimed active by several members belongs to the last one in member order, as in Kafka.
//!
//! # Bad input
//!
//! Tasks outside the topology are ignored; counts wrap like Java `int`s; with tasks and no
//! members the result is Kafka's error (`No process available to assign active task ...`).
//! Nothing panics.

use crate::util::map::BTreeMap;
use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use super::java_compat::{HashMapOrder, PriorityQueue, cmp_strings, string_hash};
use super::*;

/// Kafka 4.4's `StickyTaskAssignor` (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct KafkaStickyAssignor;

impl TaskAssignor for KafkaStickyAssignor {
    fn name(&self) -> &'static str {
        "sticky"
    }

    fn assign(
        &self,
        group: &GroupSpec,
        topology: &TopologySpec,
    ) -> Result<GroupAssignment, AssignorError> {
        assign_with_member_order(group, topology, &[])
    }

    fn assign_in_member_order(
        &self,
        group: &GroupSpec,
        topology: &TopologySpec,
        member_order: &[&str],
    ) -> Result<GroupAssignment, AssignorError> {
        assign_with_member_order(group, topology, member_order)
    }
}

/// The assignment Kafka 4.4 computes when the coordinator's member map iterates the members in
/// `member_order` (the order `TargetAssignmentBuilder` inserts them into the assignor's
/// `HashMap`). Members of `group` missing from `member_order` follow in member-id order; ids not
/// in `group` and repeats are ignored.
pub fn assign_with_member_order(
    group: &GroupSpec,
    topology: &TopologySpec,
    member_order: &[&str],
) -> Result<GroupAssignment, AssignorError> {
    let tasks = Tasks::new(topology);
    let mut state = State::new(group, &tasks, member_order);
    state.assign_actives()?;
    if state.standby_replicas > 0 {
        state.assign_standbys();
    }
    Ok(state.into_assignment(group))
}

const NONE: u32 = u32::MAX;

/// The topology, interned: subtopologies in Java `String` order, task `t` of subtopology `s` is
/// `base[s] + partition`, so task index order is (subtopology, partition) order.
struct Tasks<'a> {
    sub_ids: Vec<&'a str>,
    base: Vec<u32>,
    stateful: Vec<bool>,
    task_sub: Vec<u32>,
    task_part: Vec<i32>,
    /// Subtopology id -> index.
    index: FxHashMap<&'a str, u32>,
    /// Sum of partitions, and of partitions times (1 + standbys) for stateful ones, as Java
    /// `int`s (`maxNumInputPartitions` is trusted, negative counts included).
    partition_sum: i32,
    stateful_partition_sum: i32,
}

impl<'a> Tasks<'a> {
    fn new(topology: &'a TopologySpec) -> Self {
        let mut subs: Vec<(&str, SubtopologySpec)> = topology
            .subtopologies
            .iter()
            .map(|(id, s)| (id.as_str(), *s))
            .collect();
        crate::util::sort::by(&mut subs, |a, b| cmp_strings(a.0, b.0));
        let mut t = Tasks {
            sub_ids: Vec::with_capacity(subs.len()),
            base: Vec::with_capacity(subs.len() + 1),
            stateful: Vec::with_capacity(subs.len()),
            task_sub: Vec::new(),
            task_part: Vec::new(),
            index: FxHashMap::default(),
            partition_sum: 0,
            stateful_partition_sum: 0,
        };
        for (i, (id, s)) in subs.into_iter().enumerate() {
            t.index.insert(id, i as u32);
            t.sub_ids.push(id);
            t.base.push(t.task_sub.len() as u32);
            t.stateful.push(s.stateful);
            t.partition_sum = t.partition_sum.wrapping_add(s.number_of_tasks);
            if s.stateful {
                t.stateful_partition_sum = t.stateful_partition_sum.wrapping_add(s.number_of_tasks);
            }
            for p in 0..s.number_of_tasks.max(0) {
                t.task_sub.push(i as u32);
                t.task_part.push(p);
            }
        }
        t.base.push(t.task_sub.len() as u32);
        t
    }

    fn len(&self) -> usize {
        self.task_sub.len()
    }

    /// Task `partition` of subtopology index `s`, if it exists.
    fn task_in(&self, s: u32, partition: i32) -> Option<u32> {
        let s = s as usize;
        let (lo, hi) = (self.base[s], self.base[s + 1]);
        (partition >= 0 && (partition as u32) < hi - lo).then(|| lo + partition as u32)
    }

    /// The tasks of `partitions` of `subtopology` that exist.
    fn tasks_of<'s>(
        &'s self,
        subtopology: &str,
        partitions: &'s crate::util::map::BTreeSet<i32>,
    ) -> impl Iterator<Item = u32> + 's {
        let s = self.index.get(subtopology).copied();
        partitions
            .iter()
            .filter_map(move |&p| s.and_then(|s| self.task_in(s, p)))
    }

    fn name(&self, t: u32) -> String {
        let t = t as usize;
        format!(
            "{}_{}",
            self.sub_ids[self.task_sub[t] as usize], self.task_part[t]
        )
    }
}

/// Kafka's `ProcessState`.
struct Process {
    /// Members in the iteration order of the process's member map.
    members: Vec<u32>,
    task_count: i32,
    load: f64,
    /// The per-process member queue (member, task count), built lazily and dropped whenever a
    /// task is added to a chosen member (Kafka's `membersByLoad`).
    by_load: Option<PriorityQueue<(u32, i32)>>,
}

impl Process {
    fn recompute_load(&mut self) {
        self.load = f64::from(self.task_count) / self.members.len() as f64;
    }
}

/// Kafka's `ceil(tasks / members)`, 0 without members, in Java `int` arithmetic.
fn tasks_per_member(tasks: i32, members: i32) -> i32 {
    if members == 0 {
        return 0;
    }
    let q = tasks.wrapping_div(members);
    if tasks.wrapping_rem(members) > 0 {
        q.wrapping_add(1)
    } else {
        q
    }
}

/// A quota and the pool it is computed over (Kafka's `activeTasksPerMember` and
/// `totalTasksPerMember` with their task and member counts).
struct Quota {
    tasks: i32,
    members: i32,
    per_member: i32,
}

impl Quota {
    fn new(tasks: i32, members: i32) -> Self {
        Quota {
            tasks,
            members,
            per_member: tasks_per_member(tasks, members),
        }
    }

    /// A member now holds `count` tasks: if that is exactly the quota, it leaves the pool.
    fn note(&mut self, count: i32) {
        if count == self.per_member {
            self.members = self.members.wrapping_sub(1);
            self.tasks = self.tasks.wrapping_sub(count);
            self.per_member = tasks_per_member(self.tasks, self.members);
        }
    }
}

struct State<'a, 't> {
    tasks: &'t Tasks<'a>,
    /// Members in the iteration order of the assignor's member map.
    member_ids: Vec<&'a str>,
    member_proc: Vec<u32>,
    member_count: Vec<i32>,
    /// Processes in the iteration order of the process map.
    procs: Vec<Process>,
    /// Processes holding each task (active or standby).
    holders: Vec<Vec<u32>>,
    prev_active: Vec<u32>,
    /// Ranked standby candidates of each task (CSR over `candidates`).
    candidate_start: Vec<u32>,
    candidates: Vec<u32>,
    standby_replicas: i32,
    active_quota: Quota,
    total_quota: Quota,
    active: Vec<Vec<u32>>,
    standby: Vec<Vec<u32>>,
}

impl<'a, 't> State<'a, 't> {
    fn new(group: &'a GroupSpec, tasks: &'t Tasks<'a>, member_order: &[&str]) -> Self {
        // The assignor's member map: a default HashMap filled in `member_order`.
        let mut inserted: Vec<&'a str> = Vec::with_capacity(group.members.len());
        let mut seen = crate::util::map::BTreeSet::new();
        for id in member_order {
            if let Some((k, _)) = group.members.get_key_value(*id)
                && seen.insert(k.as_str())
            {
                inserted.push(k.as_str());
            }
        }
        for k in group.members.keys() {
            if !seen.contains(k.as_str()) {
                inserted.push(k.as_str());
            }
        }
        let mut member_map = HashMapOrder::new();
        for (i, id) in inserted.iter().enumerate() {
            member_map.put(string_hash(id), i);
        }
        let member_ids: Vec<&'a str> = member_map
            .iteration_order()
            .into_iter()
            .map(|i| inserted[i])
            .collect();
        let n = member_ids.len();
        let specs: Vec<&'a MemberSpec> = member_ids.iter().map(|id| &group.members[*id]).collect();

        // Processes: `computeIfAbsent` per member, in member order, on a HashMap sized for the
        // members; each process's member map a default HashMap `put` in member order.
        let mut proc_index: BTreeMap<&'a str, usize> = BTreeMap::new();
        let mut proc_map = HashMapOrder::with_capacity(n);
        let mut proc_members_inserted: Vec<Vec<u32>> = Vec::new();
        let mut member_first_seen_proc = Vec::with_capacity(n);
        for (m, spec) in specs.iter().enumerate() {
            let pid = spec.process_id.as_str();
            let p = *proc_index.entry(pid).or_insert_with(|| {
                proc_members_inserted.push(Vec::new());
                proc_members_inserted.len() - 1
            });
            proc_map.compute_if_absent(string_hash(pid), p);
            proc_members_inserted[p].push(m as u32);
            member_first_seen_proc.push(p);
        }
        let proc_order = proc_map.iteration_order();
        let mut rank = vec![0u32; proc_order.len()];
        for (r, &p) in proc_order.iter().enumerate() {
            rank[p] = r as u32;
        }
        let procs: Vec<Process> = proc_order
            .iter()
            .map(|&p| {
                let mut map = HashMapOrder::new();
                for &m in &proc_members_inserted[p] {
                    map.put(string_hash(member_ids[m as usize]), m);
                }
                let mut process = Process {
                    members: map.iteration_order(),
                    task_count: 0,
                    load: 0.0,
                    by_load: None,
                };
                process.recompute_load();
                process
            })
            .collect();
        let member_proc: Vec<u32> = member_first_seen_proc.iter().map(|&p| rank[p]).collect();

        // Previous active owners (the last claim in member order wins) and standby candidates.
        let nt = tasks.len();
        let mut prev_active = vec![NONE; nt];
        // (task, is not a previous standby, reported offset descending, member)
        let mut claims: Vec<(u32, bool, std::cmp::Reverse<i64>, u32)> = Vec::new();
        // Per task, the last member that held it as standby / reported an offset for it.
        let mut standby_by = vec![NONE; nt];
        let mut offset_by: Vec<(u32, i64)> = vec![(NONE, 0); nt];
        let mut reported: Vec<(u32, i64)> = Vec::new();
        for (m, spec) in specs.iter().enumerate() {
            let m = m as u32;
            for (sub, parts) in spec.active_tasks.subtopologies() {
                for t in tasks.tasks_of(sub, parts) {
                    prev_active[t as usize] = m;
                }
            }
            // Offsets are sorted by subtopology: look each one up once.
            reported.clear();
            let mut last: Option<(&str, Option<u32>)> = None;
            for (task, &offset) in &spec.task_offsets {
                let s = match last {
                    Some((id, s)) if id == task.subtopology => s,
                    _ => {
                        let s = tasks.index.get(task.subtopology.as_str()).copied();
                        last = Some((task.subtopology.as_str(), s));
                        s
                    }
                };
                if let Some(t) = s.and_then(|s| tasks.task_in(s, task.partition)) {
                    offset_by[t as usize] = (m, offset);
                    reported.push((t, offset));
                }
            }
            for (sub, parts) in spec.standby_tasks.subtopologies() {
                for t in tasks.tasks_of(sub, parts) {
                    standby_by[t as usize] = m;
                    let (by, offset) = offset_by[t as usize];
                    let offset = if by == m { offset } else { 0 };
                    claims.push((t, false, std::cmp::Reverse(offset), m));
                }
            }
            for &(t, offset) in &reported {
                if standby_by[t as usize] != m {
                    claims.push((t, true, std::cmp::Reverse(offset), m));
                }
            }
        }
        // A member claims a task at most once, so ordering ties by member index is the stable
        // order Kafka's list sort keeps (claims are added member by member).
        crate::util::sort::unstable(&mut claims);
        let mut candidate_start = vec![0u32; nt + 1];
        for &(t, ..) in &claims {
            candidate_start[t as usize + 1] += 1;
        }
        for t in 0..nt {
            candidate_start[t + 1] += candidate_start[t];
        }
        let candidates = claims.iter().map(|&(.., m)| m).collect();

        let members = n as i32;
        let standby_replicas = group.configs.num_standby_replicas;
        let total_tasks = tasks
            .partition_sum
            .wrapping_add(tasks.stateful_partition_sum.wrapping_mul(standby_replicas));
        State {
            tasks,
            member_ids,
            member_proc,
            member_count: vec![0; n],
            procs,
            holders: vec![Vec::new(); nt],
            prev_active,
            candidate_start,
            candidates,
            standby_replicas,
            active_quota: Quota::new(tasks.partition_sum, members),
            total_quota: Quota::new(total_tasks, members),
            active: vec![Vec::new(); n],
            standby: vec![Vec::new(); n],
        }
    }

    fn candidates_of(&self, t: u32) -> &[u32] {
        let t = t as usize;
        &self.candidates[self.candidate_start[t] as usize..self.candidate_start[t + 1] as usize]
    }

    fn process_has(&self, p: u32, t: u32) -> bool {
        self.holders[t as usize].contains(&p)
    }

    fn record(&mut self, m: u32, t: u32, active: bool) -> i32 {
        let p = self.member_proc[m as usize];
        let process = &mut self.procs[p as usize];
        process.task_count = process.task_count.wrapping_add(1);
        process.recompute_load();
        self.holders[t as usize].push(p);
        if active {
            self.active[m as usize].push(t);
        } else {
            self.standby[m as usize].push(t);
        }
        let count = &mut self.member_count[m as usize];
        *count = count.wrapping_add(1);
        *count
    }

    /// Kafka's `ProcessState.addTask`: to a chosen member; drops the process's member queue.
    fn add_to_member(&mut self, m: u32, t: u32, active: bool) -> i32 {
        let p = self.member_proc[m as usize];
        self.procs[p as usize].by_load = None;
        self.record(m, t, active)
    }

    /// Kafka's `ProcessState.addTaskToLeastLoadedMember`.
    fn add_to_least_loaded_member(&mut self, p: u32, t: u32, active: bool) -> i32 {
        let by_count = |a: &(u32, i32), b: &(u32, i32)| a.1.cmp(&b.1);
        let process = &mut self.procs[p as usize];
        if process.members.len() == 1 {
            let m = process.members[0];
            return self.record(m, t, active);
        }
        let mut queue = match process.by_load.take() {
            Some(q) => q,
            None => {
                let mut q = PriorityQueue::with_capacity(process.members.len());
                for &m in &process.members {
                    q.add((m, self.member_count[m as usize]), by_count);
                }
                q
            }
        };
        // Every process has a member, so the queue is never empty.
        let Some((m, _)) = queue.poll(by_count) else {
            return -1;
        };
        let count = self.record(m, t, active);
        queue.add((m, count), by_count);
        self.procs[p as usize].by_load = Some(queue);
        count
    }

    /// Kafka's `findPrevMemberWithLeastLoad`: the first candidate, replaced only by one with
    /// both a strictly lower process load and a strictly lower task count.
    fn best_candidate(&self, t: u32, skip_holding_processes: bool) -> Option<u32> {
        let mut best: Option<(u32, f64, f64)> = None;
        for &m in self.candidates_of(t) {
            let p = self.member_proc[m as usize];
            if skip_holding_processes && self.process_has(p, t) {
                continue;
            }
            let load = self.procs[p as usize].load;
            let count = f64::from(self.member_count[m as usize]);
            match best {
                Some((_, best_load, best_count)) if !(load < best_load && count < best_count) => {}
                _ => best = Some((m, load, count)),
            }
        }
        best.map(|(m, ..)| m)
    }

    fn process_queue(&self) -> PriorityQueue<u32> {
        let mut q = PriorityQueue::with_capacity(self.procs.len());
        for p in 0..self.procs.len() as u32 {
            q.add(p, |a, b| self.by_load(a, b));
        }
        q
    }

    fn by_load(&self, a: &u32, b: &u32) -> Ordering {
        self.procs[*a as usize]
            .load
            .total_cmp(&self.procs[*b as usize].load)
    }

    fn assign_actives(&mut self) -> Result<(), AssignorError> {
        let tasks = self.tasks;
        let mut order: Vec<u32> = (0..tasks.len() as u32).collect();
        let key = |t: &u32| (tasks.task_part[*t as usize], tasks.task_sub[*t as usize]);
        crate::util::sort::unstable_by_key(&mut order, key);

        // a. Previous owners, then b. previous standbys and offset reporters, under the quota.
        order.retain(|&t| {
            let m = self.prev_active[t as usize];
            !(m != NONE && self.try_active(m, t))
        });
        order.retain(|&t| match self.best_candidate(t, false) {
            Some(m) => !self.try_active(m, t),
            None => true,
        });

        // c. The rest by (subtopology, partition) to the least-loaded process.
        crate::util::sort::unstable(&mut order);
        let mut queue = self.process_queue();
        for t in order {
            let Some(p) = queue.poll(|a, b| self.by_load(a, b)) else {
                return Err(AssignorError(format!(
                    "No process available to assign active task {}.",
                    self.tasks.name(t)
                )));
            };
            let count = self.add_to_least_loaded_member(p, t, true);
            if count == -1 {
                return Err(AssignorError(format!(
                    "No member available to assign active task {}.",
                    self.tasks.name(t)
                )));
            }
            self.active_quota.note(count);
            self.total_quota.note(count);
            queue.add(p, |a, b| self.by_load(a, b));
        }
        Ok(())
    }

    /// Active task `t` to member `m` if it is under the active quota.
    fn try_active(&mut self, m: u32, t: u32) -> bool {
        if self.member_count[m as usize] >= self.active_quota.per_member {
            return false;
        }
        let count = self.add_to_member(m, t, true);
        self.active_quota.note(count);
        self.total_quota.note(count);
        true
    }

    /// Standby `t` to member `m` if its process does not hold `t` and it is under the quota.
    fn try_standby(&mut self, m: u32, t: u32) -> bool {
        if self.process_has(self.member_proc[m as usize], t)
            || self.member_count[m as usize] >= self.total_quota.per_member
        {
            return false;
        }
        let count = self.add_to_member(m, t, false);
        self.total_quota.note(count);
        true
    }

    fn assign_standbys(&mut self) {
        let tasks = self.tasks;
        let mut order: Vec<u32> = (0..tasks.len() as u32)
            .filter(|&t| tasks.stateful[tasks.task_sub[t as usize] as usize])
            .collect();
        let key = |t: &u32| (tasks.task_part[*t as usize], tasks.task_sub[*t as usize]);
        crate::util::sort::unstable_by_key(&mut order, |t| std::cmp::Reverse(key(t)));

        let replicas = self.standby_replicas;
        let mut deferred: Vec<(u32, i32)> = Vec::new();
        for t in order {
            for i in 0..replicas {
                let prev = self.prev_active[t as usize];
                if prev != NONE && self.try_standby(prev, t) {
                    continue;
                }
                if let Some(m) = self.best_candidate(t, true)
                    && self.try_standby(m, t)
                {
                    continue;
                }
                deferred.push((t, replicas - i));
                break;
            }
        }

        // Deferred replicas by (subtopology, partition) descending to the least-loaded process
        // not holding the task; processes polled past are put back, the last polled first.
        crate::util::sort::unstable_by_key(&mut deferred, |&(t, _)| std::cmp::Reverse(t));
        let mut queue = self.process_queue();
        let mut polled: Vec<u32> = Vec::new();
        for (t, remaining) in deferred {
            for _ in 0..remaining {
                let mut placed = false;
                while let Some(p) = queue.poll(|a, b| self.by_load(a, b)) {
                    polled.push(p);
                    if !self.process_has(p, t) {
                        let count = self.add_to_least_loaded_member(p, t, false);
                        if count != -1 {
                            placed = true;
                            self.total_quota.note(count);
                        }
                        break;
                    }
                }
                while let Some(p) = polled.pop() {
                    queue.add(p, |a, b| self.by_load(a, b));
                }
                if !placed {
                    // Kafka logs "There is not enough available capacity" and moves on.
                    break;
                }
            }
        }
    }

    fn into_assignment(self, group: &GroupSpec) -> GroupAssignment {
        let to_set = |tasks: &[u32]| {
            let mut set = TaskSet::new();
            for &t in tasks {
                let t = t as usize;
                set.insert(
                    self.tasks.sub_ids[self.tasks.task_sub[t] as usize],
                    self.tasks.task_part[t],
                );
            }
            set
        };
        let mut members: BTreeMap<String, MemberAssignment> = crate::util::sort::collect_map(
            group
                .members
                .keys()
                .map(|id| (id.clone(), MemberAssignment::default())),
        );
        for (m, id) in self.member_ids.iter().enumerate() {
            if let Some(a) = members.get_mut(*id) {
                a.active = to_set(&self.active[m]);
                a.standby = to_set(&self.standby[m]);
            }
        }
        GroupAssignment { members }
    }
}

#[cfg(test)]
mod tests;
