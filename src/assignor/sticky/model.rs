//! The assignor's input, interned into dense integer indices.
//!
//! Members are numbered in member-id order, processes in process-id order, subtopologies in id
//! order and tasks as `subtopology base + partition`, so every later step works on `Vec`s and
//! every tie broken by index is a tie broken by id. Nothing here iterates a hash map.

use crate::util::map::BTreeMap;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::assignor::{GroupSpec, TopologySpec};
use crate::util::sort;

/// "No member / no process" in index vectors.
pub(crate) const NONE: u32 = u32::MAX;

/// Offset a member reports for a task it runs as active and is fully caught up on (Kafka Streams'
/// `Task.LATEST_OFFSET`).
pub(crate) const LATEST_OFFSET: i64 = -2;

/// A member's relation to one task in the previous (current) assignment.
pub(crate) const PREV_ACTIVE: u8 = 1;
pub(crate) const PREV_STANDBY: u8 = 2;
pub(crate) const PREV_WARMUP: u8 = 4;
/// Reported an offset for the task (has some local state for it).
pub(crate) const HAS_OFFSET: u8 = 8;

/// One member's claim on a task: what it held and how far its local state is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Holder {
    pub member: u32,
    pub flags: u8,
    /// Rank of the reported offset: `i64::MAX` for [`LATEST_OFFSET`], the offset if `>= 0`,
    /// `-1` if nothing (or another negative value) was reported.
    pub offset_rank: i64,
}

/// FNV-1a, for the subtopology-id lookup table (looked up, never iterated).
#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Subtopology id -> index.
struct SubIndex<'a>(HashMap<&'a str, u32, BuildHasherDefault<Fnv>>);

impl SubIndex<'_> {
    fn task(&self, model: &Model<'_>, sub: &str, partition: i32) -> Option<u32> {
        let s = *self.0.get(sub)? as usize;
        let base = model.sub_base[s];
        let len = model.sub_base[s + 1] - base;
        (partition >= 0 && (partition as u32) < len).then(|| base + partition as u32)
    }
}

/// The interned problem.
pub(crate) struct Model<'a> {
    pub member_ids: Vec<&'a str>,
    pub member_proc: Vec<u32>,
    pub proc_members: Vec<Vec<u32>>,
    /// Rack-awareness group (distinct tuple of tag values) of each process.
    pub proc_group: Vec<u32>,
    /// `group_values[g * n_keys + k]`: interned value of tag key `k` in group `g`, [`NONE`] if
    /// the process does not report that key.
    pub group_values: Vec<u32>,
    pub n_groups: usize,
    pub n_keys: usize,

    pub sub_ids: Vec<&'a str>,
    pub sub_base: Vec<u32>,
    pub sub_stateful: Vec<bool>,
    pub task_sub: Vec<u32>,
    pub task_part: Vec<i32>,

    /// Previous active owner of each task, [`NONE`] if none.
    pub prev_active: Vec<u32>,
    /// Holders of each task (CSR: `holder_start[t]..holder_start[t + 1]`), sorted by offset rank
    /// descending, then member index.
    pub holder_start: Vec<u32>,
    pub holders: Vec<Holder>,
    /// Highest end offset any member reported for the task, `i64::MIN` if none.
    pub end_offset: Vec<i64>,
}

impl<'a> Model<'a> {
    pub fn n_members(&self) -> usize {
        self.member_ids.len()
    }

    pub fn n_procs(&self) -> usize {
        self.proc_members.len()
    }

    pub fn n_tasks(&self) -> usize {
        self.task_sub.len()
    }

    pub fn stateful(&self, t: u32) -> bool {
        self.sub_stateful[self.task_sub[t as usize] as usize]
    }

    pub fn holders_of(&self, t: u32) -> &[Holder] {
        let t = t as usize;
        &self.holders[self.holder_start[t] as usize..self.holder_start[t + 1] as usize]
    }

    /// Whether member `m` holds caught-up state for stateful task `t`: it ran the task as active,
    /// reported [`LATEST_OFFSET`], or reported an offset within `acceptable_lag` of the task's
    /// highest reported end offset.
    pub fn caught_up(&self, h: &Holder, t: u32, acceptable_lag: i64) -> bool {
        if h.flags & PREV_ACTIVE != 0 || h.offset_rank == i64::MAX {
            return true;
        }
        let end = self.end_offset[t as usize];
        h.offset_rank >= 0 && end != i64::MIN && end.saturating_sub(h.offset_rank) <= acceptable_lag
    }

    pub fn build(group: &'a GroupSpec, topology: &'a TopologySpec) -> Model<'a> {
        // Topology.
        let mut sub_ids = Vec::with_capacity(topology.subtopologies.len());
        let mut sub_base = Vec::with_capacity(topology.subtopologies.len() + 1);
        let mut sub_stateful = Vec::with_capacity(topology.subtopologies.len());
        let mut n_tasks: u32 = 0;
        for (id, s) in &topology.subtopologies {
            sub_ids.push(id.as_str());
            sub_base.push(n_tasks);
            sub_stateful.push(s.stateful);
            n_tasks += s.number_of_tasks.max(0) as u32;
        }
        sub_base.push(n_tasks);
        let mut task_sub = Vec::with_capacity(n_tasks as usize);
        let mut task_part = Vec::with_capacity(n_tasks as usize);
        for s in 0..sub_ids.len() {
            for p in 0..(sub_base[s + 1] - sub_base[s]) {
                task_sub.push(s as u32);
                task_part.push(p as i32);
            }
        }

        // Members and processes. An empty process id makes the member its own process.
        let member_ids: Vec<&str> = group.members.keys().map(String::as_str).collect();
        let proc_of = |id: &'a str, m: &'a crate::assignor::MemberSpec| -> &'a str {
            if m.process_id.is_empty() {
                id
            } else {
                m.process_id.as_str()
            }
        };
        let mut proc_index: BTreeMap<&str, u32> = BTreeMap::new();
        for (id, m) in &group.members {
            proc_index.entry(proc_of(id, m)).or_insert(0);
        }
        for (i, v) in proc_index.values_mut().enumerate() {
            *v = i as u32;
        }
        let mut proc_members = vec![Vec::new(); proc_index.len()];
        let mut member_proc = Vec::with_capacity(member_ids.len());
        for (i, (id, m)) in group.members.iter().enumerate() {
            let p = proc_index[proc_of(id, m)];
            member_proc.push(p);
            proc_members[p as usize].push(i as u32);
        }

        // Rack-awareness groups: a process's tags are those of its first member (by id).
        let keys = &group.configs.rack_aware_assignment_tags;
        let n_keys = keys.len();
        let mut value_ids: Vec<BTreeMap<&str, u32>> = vec![BTreeMap::new(); n_keys];
        let mut sig_index: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
        let mut proc_sig: Vec<Vec<u32>> = Vec::with_capacity(proc_members.len());
        let members: Vec<&crate::assignor::MemberSpec> = group.members.values().collect();
        for pm in &proc_members {
            let tags = &members[pm[0] as usize].client_tags;
            let sig: Vec<u32> = keys
                .iter()
                .enumerate()
                .map(|(k, key)| match tags.get(key) {
                    Some(v) => {
                        let next = value_ids[k].len() as u32;
                        *value_ids[k].entry(v.as_str()).or_insert(next)
                    }
                    None => NONE,
                })
                .collect();
            sig_index.entry(sig.clone()).or_insert(0);
            proc_sig.push(sig);
        }
        let mut group_values = Vec::with_capacity(sig_index.len() * n_keys);
        for (i, (sig, g)) in sig_index.iter_mut().enumerate() {
            *g = i as u32;
            group_values.extend_from_slice(sig);
        }
        let proc_group: Vec<u32> = proc_sig.iter().map(|s| sig_index[s]).collect();
        let n_groups = sig_index.len();

        let mut model = Model {
            member_ids,
            member_proc,
            proc_members,
            proc_group,
            group_values,
            n_groups,
            n_keys,
            sub_ids,
            sub_base,
            sub_stateful,
            task_sub,
            task_part,
            prev_active: vec![NONE; n_tasks as usize],
            holder_start: Vec::new(),
            holders: Vec::new(),
            end_offset: vec![i64::MIN; n_tasks as usize],
        };

        // Previous roles and reported offsets, as (task, holder) pairs. Sets and offset maps
        // iterate sorted by subtopology, so the last subtopology lookup is cached.
        let mut claims: Vec<(u32, Holder)> = Vec::new();
        let cache = SubIndex(
            model
                .sub_ids
                .iter()
                .enumerate()
                .map(|(i, s)| (*s, i as u32))
                .collect(),
        );
        for (m, spec) in members.iter().enumerate() {
            let m = m as u32;
            for (set, flags) in [
                (&spec.active_tasks, PREV_ACTIVE),
                (&spec.standby_tasks, PREV_STANDBY),
                (&spec.warmup_tasks, PREV_WARMUP),
            ] {
                for t in set.iter() {
                    if let Some(t) = cache.task(&model, &t.subtopology, t.partition) {
                        claims.push((
                            t,
                            Holder {
                                member: m,
                                flags,
                                offset_rank: -1,
                            },
                        ));
                    }
                }
            }
            for (t, off) in &spec.task_offsets {
                if let Some(t) = cache.task(&model, &t.subtopology, t.partition) {
                    let offset_rank = match *off {
                        LATEST_OFFSET => i64::MAX,
                        o if o >= 0 => o,
                        _ => -1,
                    };
                    claims.push((
                        t,
                        Holder {
                            member: m,
                            flags: HAS_OFFSET,
                            offset_rank,
                        },
                    ));
                }
            }
            for (t, end) in &spec.task_end_offsets {
                if let Some(t) = cache.task(&model, &t.subtopology, t.partition) {
                    let e = &mut model.end_offset[t as usize];
                    *e = (*e).max(*end);
                }
            }
        }
        // Bucket the claims by task (counting sort), then merge the claims of one member on one
        // task and rank each bucket by offset (descending), then member.
        let n = n_tasks as usize;
        let mut start = vec![0u32; n + 1];
        for (t, _) in &claims {
            start[*t as usize + 1] += 1;
        }
        for t in 0..n {
            start[t + 1] += start[t];
        }
        let mut fill = start.clone();
        let mut bucketed = vec![
            Holder {
                member: 0,
                flags: 0,
                offset_rank: -1
            };
            claims.len()
        ];
        for (t, h) in claims {
            bucketed[fill[t as usize] as usize] = h;
            fill[t as usize] += 1;
        }
        let mut holders: Vec<Holder> = Vec::with_capacity(bucketed.len());
        let mut holder_start = vec![0u32; n + 1];
        for t in 0..n {
            let bucket = &mut bucketed[start[t] as usize..start[t + 1] as usize];
            sort::unstable_by_key(bucket, |h| h.member);
            let first = holders.len();
            for h in bucket.iter() {
                match holders[first..].last_mut() {
                    Some(last) if last.member == h.member => {
                        last.flags |= h.flags;
                        last.offset_rank = last.offset_rank.max(h.offset_rank);
                    }
                    _ => holders.push(*h),
                }
            }
            let merged = &mut holders[first..];
            // Previous active owner: if several members claim a task, the smallest member id.
            if let Some(owner) = merged
                .iter()
                .find(|h| h.flags & PREV_ACTIVE != 0)
                .map(|h| h.member)
            {
                model.prev_active[t] = owner;
                for h in merged.iter_mut() {
                    if h.member != owner {
                        h.flags &= !PREV_ACTIVE;
                    }
                }
            }
            sort::unstable_by_key(merged, |h| (std::cmp::Reverse(h.offset_rank), h.member));
            holder_start[t + 1] = holders.len() as u32;
        }
        model.holder_start = holder_start;
        model.holders = holders;
        model
    }
}
