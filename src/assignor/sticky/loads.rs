//! Per-member task counts with heaps to find the least-loaded process and member.
//!
//! "Least loaded" is a total order: a process ranks by the task count of its least-loaded member,
//! then by its load (tasks / members, compared exactly as fractions), then by process index; a
//! member inside a process by task count, then member index. Heaps hold stale entries lazily
//! (counts only grow): an entry whose key no longer matches is dropped when it reaches the top.
//! The heaps are built on the first query, so runs that only keep previous tasks never pay for
//! them.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::model::Model;

/// Heap key of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcKey {
    pub min_count: u32,
    pub sum: u32,
    pub cap: u32,
    pub proc: u32,
}

impl Ord for ProcKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.min_count
            .cmp(&other.min_count)
            .then_with(|| {
                (u64::from(self.sum) * u64::from(other.cap))
                    .cmp(&(u64::from(other.sum) * u64::from(self.cap)))
            })
            .then(self.proc.cmp(&other.proc))
    }
}

impl PartialOrd for ProcKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

pub(crate) struct Loads<'m> {
    pub count: Vec<u32>,
    proc_sum: Vec<u32>,
    proc_cap: Vec<u32>,
    proc_members: &'m [Vec<u32>],
    member_proc: &'m [u32],
    proc_group: &'m [u32],
    n_groups: usize,
    /// Empty until the first query.
    member_heaps: Vec<BinaryHeap<Reverse<(u32, u32)>>>,
    group_heaps: Vec<BinaryHeap<Reverse<ProcKey>>>,
    /// Reused buffer for entries popped while looking past excluded processes.
    popped: Vec<Reverse<ProcKey>>,
}

impl<'m> Loads<'m> {
    /// Counts start at `count`; processes are grouped by `proc_group` (one heap per group).
    pub fn new(
        model: &'m Model<'_>,
        count: Vec<u32>,
        proc_group: &'m [u32],
        n_groups: usize,
    ) -> Self {
        let mut proc_sum = vec![0u32; model.n_procs()];
        for (p, members) in model.proc_members.iter().enumerate() {
            proc_sum[p] = members.iter().map(|&m| count[m as usize]).sum();
        }
        Loads {
            count,
            proc_sum,
            proc_cap: model
                .proc_members
                .iter()
                .map(|m| m.len().max(1) as u32)
                .collect(),
            proc_members: &model.proc_members,
            member_proc: &model.member_proc,
            proc_group,
            n_groups,
            member_heaps: Vec::new(),
            group_heaps: Vec::new(),
            popped: Vec::new(),
        }
    }

    fn heaps_built(&self) -> bool {
        !self.member_heaps.is_empty()
    }

    fn build_heaps(&mut self) {
        if self.heaps_built() {
            return;
        }
        self.member_heaps = self
            .proc_members
            .iter()
            .map(|ms| {
                ms.iter()
                    .map(|&m| Reverse((self.count[m as usize], m)))
                    .collect()
            })
            .collect();
        self.group_heaps = (0..self.n_groups).map(|_| BinaryHeap::new()).collect();
        for p in 0..self.proc_members.len() as u32 {
            self.push_proc(p);
        }
    }

    /// The least-loaded member of process `p` (count, then index).
    pub fn min_member(&mut self, p: u32) -> u32 {
        self.build_heaps();
        let heap = &mut self.member_heaps[p as usize];
        while let Some(&Reverse((c, m))) = heap.peek() {
            if self.count[m as usize] == c {
                return m;
            }
            heap.pop();
        }
        // Unreachable: every member always has a current entry. Fall back to a scan.
        let members = &self.proc_members[p as usize];
        members
            .iter()
            .copied()
            .min_by_key(|&m| (self.count[m as usize], m))
            .unwrap_or(0)
    }

    fn key(&mut self, p: u32) -> ProcKey {
        let m = self.min_member(p);
        ProcKey {
            min_count: self.count[m as usize],
            sum: self.proc_sum[p as usize],
            cap: self.proc_cap[p as usize],
            proc: p,
        }
    }

    fn is_current(&mut self, k: &ProcKey) -> bool {
        let m = self.min_member(k.proc);
        self.count[m as usize] == k.min_count && self.proc_sum[k.proc as usize] == k.sum
    }

    /// Gives member `m` one more task.
    pub fn add(&mut self, m: u32) {
        self.count[m as usize] += 1;
        let p = self.member_proc[m as usize];
        self.proc_sum[p as usize] += 1;
        if self.heaps_built() {
            let c = self.count[m as usize];
            self.member_heaps[p as usize].push(Reverse((c, m)));
            self.push_proc(p);
        }
    }

    fn push_proc(&mut self, p: u32) {
        let key = self.key(p);
        let g = self.proc_group[p as usize] as usize;
        self.group_heaps[g].push(Reverse(key));
    }

    /// The least-loaded process of group `g` for which `excluded` is false.
    pub fn best_in_group(
        &mut self,
        g: usize,
        mut excluded: impl FnMut(u32) -> bool,
    ) -> Option<ProcKey> {
        self.build_heaps();
        let mut found = None;
        while let Some(&Reverse(k)) = self.group_heaps[g].peek() {
            if !self.is_current(&k) {
                self.group_heaps[g].pop();
                continue;
            }
            if excluded(k.proc) {
                if let Some(e) = self.group_heaps[g].pop() {
                    self.popped.push(e);
                }
                continue;
            }
            found = Some(k);
            break;
        }
        let heap = &mut self.group_heaps[g];
        heap.extend(self.popped.drain(..));
        found
    }
}
