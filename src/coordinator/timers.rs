//! The timer table (spec §3.13): timers are data. Operations schedule and cancel; the caller
//! asks for the earliest deadline and fires due timers with its own `now`.
//!
//! Rescheduling a session timeout is on every heartbeat's path, so that path allocates nothing
//! and moves no key: each armed key owns a slot (found through a hash index with a fixed-key
//! hasher: no randomness, no system RNG under wasm), and the deadline index is an indexed binary
//! heap of slots ordered by `(deadline, sequence)`: every slot knows its heap position, so a
//! reschedule moves its one entry up or down in place (O(log n), no stale entries, nothing to
//! collect later) and a cancel removes it. Timers with equal deadlines fire in scheduling order.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;

use super::{TimerChange, TimerKey};
use crate::types::Millis;
use crate::util::sort;

/// One armed timer.
#[derive(Debug, Clone)]
struct Armed {
    key: TimerKey,
    deadline: Millis,
    tag: i32,
    seq: u64,
    /// Index of this slot in `Timers::heap`.
    pos: u32,
}

/// Armed timers, by key and by deadline.
#[derive(Debug, Clone, Default)]
pub struct Timers {
    /// key -> slot index.
    by_key: HashMap<TimerKey, u32, FxBuildHasher>,
    /// Slot storage; `None` slots are free (listed in `free`).
    slots: Vec<Option<Armed>>,
    free: Vec<u32>,
    /// Min-heap of armed slots by `(deadline, seq)`; `slots[heap[i]].pos == i`.
    heap: Vec<u32>,
    next_seq: u64,
}

impl Timers {
    /// Arm (or re-arm) a timer. `tag` is carried to the firing (the member epoch for rebalance
    /// timeouts).
    #[must_use]
    pub fn schedule(&mut self, key: TimerKey, deadline: Millis, tag: i32) -> TimerChange {
        let seq = self.next_seq;
        self.next_seq += 1;
        match self.by_key.get(&key) {
            Some(&slot) => {
                let Some(a) = self.slots[slot as usize].as_mut() else {
                    unreachable!("an indexed slot is armed")
                };
                let later = (deadline, seq) > (a.deadline, a.seq);
                a.deadline = deadline;
                a.tag = tag;
                a.seq = seq;
                let pos = a.pos as usize;
                if later {
                    self.sift_down(pos);
                } else {
                    self.sift_up(pos);
                }
            }
            None => {
                let pos = self.heap.len() as u32;
                let armed = Some(Armed {
                    key: key.clone(),
                    deadline,
                    tag,
                    seq,
                    pos,
                });
                let slot = match self.free.pop() {
                    Some(s) => {
                        self.slots[s as usize] = armed;
                        s
                    }
                    None => {
                        self.slots.push(armed);
                        (self.slots.len() - 1) as u32
                    }
                };
                self.by_key.insert(key.clone(), slot);
                self.heap.push(slot);
                self.sift_up(pos as usize);
            }
        }
        TimerChange::Schedule { key, deadline }
    }

    /// Disarm a timer; `None` when it was not armed.
    #[must_use]
    pub fn cancel(&mut self, key: &TimerKey) -> Option<TimerChange> {
        let slot = self.by_key.remove(key)?;
        self.release(slot);
        Some(TimerChange::Cancel { key: key.clone() })
    }

    pub fn is_scheduled(&self, key: &TimerKey) -> bool {
        self.by_key.contains_key(key)
    }

    #[must_use]
    pub fn deadline(&self, key: &TimerKey) -> Option<Millis> {
        let slot = *self.by_key.get(key)?;
        self.slots[slot as usize].as_ref().map(|a| a.deadline)
    }

    /// The earliest deadline, without copying its key.
    #[must_use]
    pub fn next_deadline(&self) -> Option<Millis> {
        self.top().map(|a| a.deadline)
    }

    #[must_use]
    pub fn next(&self) -> Option<(Millis, TimerKey)> {
        self.top().map(|a| (a.deadline, a.key.clone()))
    }

    /// Remove and return the earliest timer due at `now`, with its tag.
    #[must_use]
    pub fn pop_due(&mut self, now: Millis) -> Option<(TimerKey, i32)> {
        if self.top()?.deadline > now {
            return None;
        }
        let slot = self.heap[0];
        let a = self.release(slot)?;
        self.by_key.remove(&a.key);
        Some((a.key, a.tag))
    }

    /// Armed keys in firing order.
    pub fn keys(&self) -> impl Iterator<Item = &TimerKey> {
        let mut armed: Vec<&Armed> = self.slots.iter().flatten().collect();
        sort::unstable_by_key(&mut armed, |a| (a.deadline, a.seq));
        armed.into_iter().map(|a| &a.key)
    }

    fn top(&self) -> Option<&Armed> {
        self.slots[*self.heap.first()? as usize].as_ref()
    }

    /// Free a slot and take its entry out of the heap.
    fn release(&mut self, slot: u32) -> Option<Armed> {
        let a = self.slots[slot as usize].take()?;
        self.free.push(slot);
        let pos = a.pos as usize;
        let last = self.heap.len() - 1;
        self.heap.swap_remove(pos);
        if pos < last {
            self.set_pos(pos);
            // The moved entry came from the bottom: it may belong above or below `pos`.
            self.sift_up(pos);
            self.sift_down(pos);
        }
        Some(a)
    }

    /// The ordering key of the slot at heap position `i`.
    fn order(&self, i: usize) -> (Millis, u64) {
        match &self.slots[self.heap[i] as usize] {
            Some(a) => (a.deadline, a.seq),
            None => unreachable!("heap entries are armed"),
        }
    }

    fn set_pos(&mut self, i: usize) {
        if let Some(a) = self.slots[self.heap[i] as usize].as_mut() {
            a.pos = i as u32;
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.order(i) >= self.order(parent) {
                break;
            }
            self.heap.swap(i, parent);
            self.set_pos(i);
            self.set_pos(parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < n && self.order(l) < self.order(least) {
                least = l;
            }
            if r < n && self.order(r) < self.order(least) {
                least = r;
            }
            if least == i {
                break;
            }
            self.heap.swap(i, least);
            self.set_pos(i);
            self.set_pos(least);
            i = least;
        }
    }
}

/// Spec §3.13: timers are data; due timers fire in deadline order (ties: scheduling order), a
/// reschedule replaces the deadline, a cancel disarms.
#[cfg(test)]
mod tests {
    use super::*;

    fn session(m: &str) -> TimerKey {
        TimerKey::SessionTimeout {
            group_id: "g".into(),
            member_id: m.into(),
        }
    }

    /// Schedule, checking the change handed back to the caller.
    fn arm(t: &mut Timers, key: TimerKey, deadline: Millis, tag: i32) {
        let change = t.schedule(key.clone(), deadline, tag);
        assert_eq!(change, TimerChange::Schedule { key, deadline });
    }

    fn drain(t: &mut Timers, now: i64) -> Vec<(TimerKey, i32)> {
        std::iter::from_fn(|| t.pop_due(Millis(now))).collect()
    }

    #[test]
    fn fires_by_deadline_then_scheduling_order() {
        let mut t = Timers::default();
        arm(&mut t, session("b"), Millis(20), 1);
        arm(&mut t, session("a"), Millis(10), 2);
        arm(&mut t, session("c"), Millis(20), 3);
        assert_eq!(t.next(), Some((Millis(10), session("a"))));
        assert_eq!(
            t.keys().cloned().collect::<Vec<_>>(),
            [session("a"), session("b"), session("c")]
        );
        assert_eq!(drain(&mut t, 9), []);
        assert_eq!(
            drain(&mut t, 20),
            [(session("a"), 2), (session("b"), 1), (session("c"), 3)]
        );
        assert_eq!(t.next(), None);
    }

    #[test]
    fn reschedule_moves_the_deadline_and_the_tag() {
        let mut t = Timers::default();
        arm(&mut t, session("a"), Millis(10), 1);
        arm(&mut t, session("b"), Millis(15), 1);
        arm(&mut t, session("a"), Millis(30), 7);
        assert_eq!(t.deadline(&session("a")), Some(Millis(30)));
        assert_eq!(t.next(), Some((Millis(15), session("b"))));
        assert_eq!(
            t.next_deadline(),
            Some(Millis(15)),
            "the stale entry at 10 is not the top"
        );
        assert_eq!(drain(&mut t, 29), [(session("b"), 1)]);
        assert_eq!(drain(&mut t, 30), [(session("a"), 7)]);
        // Rescheduled to the same deadline as another: scheduling order decides.
        arm(&mut t, session("x"), Millis(50), 0);
        arm(&mut t, session("y"), Millis(40), 0);
        arm(&mut t, session("y"), Millis(50), 0);
        assert_eq!(drain(&mut t, 50), [(session("x"), 0), (session("y"), 0)]);
    }

    #[test]
    fn cancel_disarms_and_frees_the_slot() {
        let mut t = Timers::default();
        arm(&mut t, session("a"), Millis(10), 0);
        arm(&mut t, session("b"), Millis(20), 0);
        assert!(t.cancel(&session("a")).is_some());
        assert!(t.cancel(&session("a")).is_none());
        assert!(!t.is_scheduled(&session("a")));
        assert_eq!(t.next(), Some((Millis(20), session("b"))));
        arm(&mut t, session("c"), Millis(5), 0);
        assert_eq!(t.slots.len(), 2, "the cancelled slot is reused");
        assert_eq!(drain(&mut t, 100), [(session("c"), 0), (session("b"), 0)]);
    }

    /// The heap invariant and the positions, checked against every slot.
    fn check_heap(t: &Timers) {
        let armed = t.slots.iter().flatten().count();
        assert_eq!(t.heap.len(), armed);
        assert_eq!(t.by_key.len(), armed);
        for (i, &slot) in t.heap.iter().enumerate() {
            assert_eq!(t.slots[slot as usize].as_ref().unwrap().pos as usize, i);
            if i > 0 {
                assert!(t.order((i - 1) / 2) <= t.order(i));
            }
        }
    }

    #[test]
    fn reschedules_and_cancels_keep_the_heap_exact() {
        let mut t = Timers::default();
        let mut x = 7u64;
        for i in 0..5_000i64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let m = format!("m{}", x % 97);
            if x.is_multiple_of(5) {
                let _ = t.cancel(&session(&m));
            } else {
                arm(&mut t, session(&m), Millis(i + (x % 1_000) as i64), 0);
            }
            if i % 97 == 0 {
                check_heap(&t);
            }
        }
        check_heap(&t);
        let expected: Vec<TimerKey> = t.keys().cloned().collect();
        let fired: Vec<TimerKey> = drain(&mut t, i64::MAX).into_iter().map(|f| f.0).collect();
        assert_eq!(fired, expected, "pops follow (deadline, scheduling order)");
    }

    #[test]
    fn stale_entries_stay_bounded_under_constant_rescheduling() {
        let mut t = Timers::default();
        for i in 0..100_000i64 {
            let m = format!("m{}", i % 10);
            arm(&mut t, session(&m), Millis(1_000 + i), 0);
        }
        assert_eq!(t.heap.len(), 10, "one heap entry per armed timer");
        assert_eq!(t.keys().count(), 10);
        let fired = drain(&mut t, i64::MAX);
        assert_eq!(fired.len(), 10);
        assert_eq!(fired[0].0, session("m0"));
    }
}
