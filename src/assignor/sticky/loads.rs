//! Per-member task counts with heaps to find the least-loaded process and member.
//!
//! "Least loaded" is a total order: a process ranks by the task count of its least-loaded member,
//! then by its load (tasks / members, compared exactly as fractions), then by process index; a
//! member inside a process by task count, then member index. Heaps hold stale entries lazily
//! (counts only grow while a heap is in use): an entry whose key no longer matches is dropped
//! when it reaches the top.

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

pub(crate) struct Loads {
    pub count: Vec<u32>,
    proc_sum: Vec<u32>,
    proc_cap: Vec<u32>,
    member_proc: Vec<u32>,
    member_heaps: Vec<BinaryHeap<Reverse<(u32, u32)>>>,
    proc_group: Vec<u32>,
    group_heaps: Vec<BinaryHeap<Reverse<ProcKey>>>,
    /// Reused buffer for entries popped while looking past excluded processes.
    popped: Vec<Reverse<ProcKey>>,
}

impl Loads {
    /// Counts start at `count`; processes are grouped by `proc_group` (one heap per group).
    pub fn new(model: &Model<'_>, count: Vec<u32>, proc_group: Vec<u32>, n_groups: usize) -> Loads {
        let n_procs = model.n_procs();
        let mut proc_sum = vec![0u32; n_procs];
        let mut member_heaps = Vec::with_capacity(n_procs);
        for (p, members) in model.proc_members.iter().enumerate() {
            let mut h = BinaryHeap::with_capacity(members.len());
            for &m in members {
                proc_sum[p] += count[m as usize];
                h.push(Reverse((count[m as usize], m)));
            }
            member_heaps.push(h);
        }
        let mut loads = Loads {
            count,
            proc_sum,
            proc_cap: model
                .proc_members
                .iter()
                .map(|m| m.len().max(1) as u32)
                .collect(),
            member_proc: model.member_proc.clone(),
            member_heaps,
            proc_group,
            group_heaps: (0..n_groups).map(|_| BinaryHeap::new()).collect(),
            popped: Vec::new(),
        };
        for p in 0..n_procs as u32 {
            let key = loads.key(p);
            let g = loads.proc_group[p as usize] as usize;
            loads.group_heaps[g].push(Reverse(key));
        }
        loads
    }

    /// The least-loaded member of process `p` (count, then index).
    pub fn min_member(&mut self, p: u32) -> u32 {
        let heap = &mut self.member_heaps[p as usize];
        loop {
            let Reverse((c, m)) = *heap.peek().expect("every process has a member");
            if self.count[m as usize] == c {
                return m;
            }
            heap.pop();
        }
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
        let c = self.count[m as usize];
        self.member_heaps[p as usize].push(Reverse((c, m)));
        self.push_proc(p);
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
        let mut found = None;
        while let Some(&Reverse(k)) = self.group_heaps[g].peek() {
            if !self.is_current(&k) {
                self.group_heaps[g].pop();
                continue;
            }
            if excluded(k.proc) {
                let e = self.group_heaps[g].pop().expect("peeked");
                self.popped.push(e);
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
