//! The timer table (spec §3.13): timers are data. Operations schedule and cancel; the caller
//! asks for the earliest deadline and fires due timers with its own `now`.
//!
//! Rescheduling a session timeout is on every heartbeat's path, so that path allocates nothing
//! and moves no key: each armed key owns a slot (found through a hash index with a fixed-key
//! hasher: no randomness, no system RNG under wasm), and the deadline index is a binary heap of
//! `(deadline, sequence, slot)` entries. A reschedule pushes a new entry and leaves the old one
//! behind as stale (its sequence no longer matches the slot's); stale entries are dropped when
//! they reach the top and the heap is rebuilt when they outnumber the live ones, so memory stays
//! bounded by the armed timers. Timers with equal deadlines fire in scheduling order.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

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
}

/// Armed timers, by key and by deadline.
#[derive(Debug, Clone, Default)]
pub struct Timers {
    /// key -> slot index.
    by_key: HashMap<TimerKey, u32, FxBuildHasher>,
    /// Slot storage; `None` slots are free (listed in `free`).
    slots: Vec<Option<Armed>>,
    free: Vec<u32>,
    /// Min-heap of (deadline, sequence, slot); entries whose sequence differs from the slot's
    /// are stale. Invariant after every operation: the top entry, if any, is live.
    by_deadline: BinaryHeap<Reverse<(Millis, u64, u32)>>,
    next_seq: u64,
}

impl Timers {
    /// Arm (or re-arm) a timer. `tag` is carried to the firing (the member epoch for rebalance
    /// timeouts).
    #[must_use]
    pub fn schedule(&mut self, key: TimerKey, deadline: Millis, tag: i32) -> TimerChange {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.by_key.get(&key) {
            Some(&slot) => {
                if let Some(a) = self.slots[slot as usize].as_mut() {
                    a.deadline = deadline;
                    a.tag = tag;
                    a.seq = seq;
                }
                slot
            }
            None => {
                let armed = Some(Armed {
                    key: key.clone(),
                    deadline,
                    tag,
                    seq,
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
                slot
            }
        };
        self.by_deadline.push(Reverse((deadline, seq, slot)));
        self.tidy();
        TimerChange::Schedule { key, deadline }
    }

    /// Disarm a timer; `None` when it was not armed.
    #[must_use]
    pub fn cancel(&mut self, key: &TimerKey) -> Option<TimerChange> {
        let slot = self.by_key.remove(key)?;
        self.slots[slot as usize] = None;
        self.free.push(slot);
        self.tidy();
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
        self.by_deadline.peek().map(|Reverse((d, _, _))| *d)
    }

    #[must_use]
    pub fn next(&self) -> Option<(Millis, TimerKey)> {
        let Reverse((deadline, _, slot)) = *self.by_deadline.peek()?;
        let a = self.slots[slot as usize].as_ref()?;
        Some((deadline, a.key.clone()))
    }

    /// Remove and return the earliest timer due at `now`, with its tag.
    #[must_use]
    pub fn pop_due(&mut self, now: Millis) -> Option<(TimerKey, i32)> {
        let Reverse((deadline, _, slot)) = *self.by_deadline.peek()?;
        if deadline > now {
            return None;
        }
        self.by_deadline.pop();
        let a = self.slots[slot as usize].take()?;
        self.free.push(slot);
        self.by_key.remove(&a.key);
        self.tidy();
        Some((a.key, a.tag))
    }

    /// Armed keys in firing order.
    pub fn keys(&self) -> impl Iterator<Item = &TimerKey> {
        let mut armed: Vec<&Armed> = self.slots.iter().flatten().collect();
        sort::unstable_by_key(&mut armed, |a| (a.deadline, a.seq));
        armed.into_iter().map(|a| &a.key)
    }

    /// Restore the invariants: a live top entry, and stale entries at most about as many as
    /// live ones (a rebuild is O(n) after n reschedules: amortized O(1) each).
    fn tidy(&mut self) {
        let live = |slots: &[Option<Armed>],
                    &Reverse((_, seq, slot)): &Reverse<(Millis, u64, u32)>| {
            slots[slot as usize].as_ref().is_some_and(|a| a.seq == seq)
        };
        if self.by_deadline.len() > 2 * self.by_key.len() + 64 {
            let slots = &self.slots;
            self.by_deadline.retain(|e| live(slots, e));
        }
        while let Some(top) = self.by_deadline.peek() {
            if live(&self.slots, top) {
                break;
            }
            self.by_deadline.pop();
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

    #[test]
    fn stale_entries_stay_bounded_under_constant_rescheduling() {
        let mut t = Timers::default();
        for i in 0..100_000i64 {
            let m = format!("m{}", i % 10);
            arm(&mut t, session(&m), Millis(1_000 + i), 0);
        }
        assert!(
            t.by_deadline.len() <= 2 * 10 + 64 + 1,
            "{}",
            t.by_deadline.len()
        );
        assert_eq!(t.keys().count(), 10);
        let fired = drain(&mut t, i64::MAX);
        assert_eq!(fired.len(), 10);
        assert_eq!(fired[0].0, session("m0"));
    }
}
