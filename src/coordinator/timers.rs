//! The timer table (spec §3.13): timers are data. Operations schedule and cancel; the caller
//! asks for the earliest deadline and fires due timers with its own `now`.
//!
//! Rescheduling a session timeout is on every heartbeat's path, so that path allocates nothing,
//! moves no key and costs O(1): each armed key owns a slot (found through a hash index with a
//! fixed-key hasher: no randomness, no system RNG under wasm), and a slot waits in one of two
//! places. Timers of one kind are mostly armed with one duration at a non-decreasing `now`, so
//! their deadlines arrive in order: such a timer is appended to its kind's *lane*, a linked list
//! sorted by construction (a reschedule unlinks and appends: O(1)). A deadline earlier than its
//! lane's last one (another duration, or time going back) goes to an indexed binary heap
//! instead, where every slot knows its position (O(log n) in place, no stale entries). The
//! earliest timer is the least of the lanes' heads and the heap's top, by `(deadline, sequence)`:
//! timers with equal deadlines fire in scheduling order.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;

use super::{TimerChange, TimerKey};
use crate::types::Millis;
use crate::util::sort;

/// No slot (an end of a lane).
const NIL: u32 = u32::MAX;

/// One lane per kind of timer key.
const LANES: usize = 9;

/// The lane of a key's kind.
fn lane_of(key: &TimerKey) -> usize {
    match key {
        TimerKey::SessionTimeout { .. } => 0,
        TimerKey::RebalanceTimeout { .. } => 1,
        TimerKey::InitialRebalance { .. } => 2,
        TimerKey::ClassicHeartbeat { .. } => 3,
        TimerKey::ClassicJoin { .. } => 4,
        TimerKey::ClassicSync { .. } => 5,
        TimerKey::ConsumerRegex { .. } => 6,
        TimerKey::ConsumerClassicJoin { .. } => 7,
        TimerKey::ConsumerClassicSync { .. } => 8,
    }
}

/// Where an armed slot waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In its kind's lane, between these slots (`NIL`: an end).
    Lane { prev: u32, next: u32 },
    /// At this position of the heap.
    Heap(u32),
}

/// One armed timer.
#[derive(Debug, Clone)]
struct Armed {
    key: TimerKey,
    deadline: Millis,
    seq: u64,
    tag: i32,
    place: Place,
}

impl Armed {
    fn order(&self) -> (Millis, u64) {
        (self.deadline, self.seq)
    }
}

/// A heap entry: the firing order of a slot, kept inline so a sift compares adjacent memory.
#[derive(Debug, Clone, Copy)]
struct Entry {
    deadline: Millis,
    seq: u64,
    slot: u32,
}

impl Entry {
    fn order(&self) -> (Millis, u64) {
        (self.deadline, self.seq)
    }
}

/// A lane's ends (`NIL` when empty).
#[derive(Debug, Clone, Copy)]
struct Lane {
    head: u32,
    tail: u32,
}

impl Default for Lane {
    fn default() -> Self {
        Lane {
            head: NIL,
            tail: NIL,
        }
    }
}

/// Armed timers, by key and by deadline.
#[derive(Debug, Clone, Default)]
pub struct Timers {
    /// key -> slot index.
    by_key: HashMap<TimerKey, u32, FxBuildHasher>,
    /// Slot storage; `None` slots are free (listed in `free`).
    slots: Vec<Option<Armed>>,
    free: Vec<u32>,
    /// Per kind of key, slots in `(deadline, seq)` order.
    lanes: [Lane; LANES],
    /// Min-heap of the other slots by `(deadline, seq)`; `slots[heap[i].slot]` is at `Heap(i)`.
    heap: Vec<Entry>,
    next_seq: u64,
    /// How many `InitialRebalance` timers are armed: a heartbeat asks whether its group's is,
    /// and when none is (all but a new group's first seconds) it need not build the key.
    initial_rebalances: usize,
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
                self.unplace(slot);
                let a = self.armed_mut(slot);
                a.deadline = deadline;
                a.seq = seq;
                a.tag = tag;
                slot
            }
            None => {
                if matches!(key, TimerKey::InitialRebalance { .. }) {
                    self.initial_rebalances += 1;
                }
                let armed = Some(Armed {
                    key: key.clone(),
                    deadline,
                    seq,
                    tag,
                    place: Place::Heap(0),
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
        self.place(slot, lane_of(&key));
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

    /// Whether the group's initial-rebalance delay is armed; builds no key while none is.
    pub fn initial_rebalance_armed(&self, group_id: &str) -> bool {
        self.initial_rebalances > 0
            && self.is_scheduled(&TimerKey::InitialRebalance {
                group_id: group_id.to_string(),
            })
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
        let slot = self.top_slot()?;
        if self.armed(slot).deadline > now {
            return None;
        }
        let a = self.release(slot)?;
        self.by_key.remove(&a.key);
        Some((a.key, a.tag))
    }

    /// Armed keys in firing order.
    pub fn keys(&self) -> impl Iterator<Item = &TimerKey> {
        let mut armed: Vec<&Armed> = self.slots.iter().flatten().collect();
        sort::unstable_by_key(&mut armed, |a| a.order());
        armed.into_iter().map(|a| &a.key)
    }

    fn armed(&self, slot: u32) -> &Armed {
        match &self.slots[slot as usize] {
            Some(a) => a,
            None => unreachable!("a placed slot is armed"),
        }
    }

    fn armed_mut(&mut self, slot: u32) -> &mut Armed {
        match &mut self.slots[slot as usize] {
            Some(a) => a,
            None => unreachable!("a placed slot is armed"),
        }
    }

    /// The slot that fires first: the least of the lanes' heads and the heap's top.
    fn top_slot(&self) -> Option<u32> {
        let heads = self.lanes.iter().map(|l| l.head).filter(|&h| h != NIL);
        heads
            .chain(self.heap.first().map(|e| e.slot))
            .min_by_key(|&s| self.armed(s).order())
    }

    fn top(&self) -> Option<&Armed> {
        self.top_slot().map(|s| self.armed(s))
    }

    /// Put an armed, unplaced slot where it waits: at the end of its lane when that keeps the
    /// lane in order, else in the heap.
    fn place(&mut self, slot: u32, lane: usize) {
        let tail = self.lanes[lane].tail;
        let (deadline, seq) = self.armed(slot).order();
        // `seq` only grows, so a deadline no earlier than the tail's sorts after it.
        if tail == NIL || self.armed(tail).deadline <= deadline {
            self.armed_mut(slot).place = Place::Lane {
                prev: tail,
                next: NIL,
            };
            match tail {
                NIL => self.lanes[lane].head = slot,
                t => self.set_next(t, slot),
            }
            self.lanes[lane].tail = slot;
        } else {
            let pos = self.heap.len();
            self.heap.push(Entry {
                deadline,
                seq,
                slot,
            });
            self.sift_up(pos);
        }
    }

    /// Take an armed slot out of its lane or the heap.
    fn unplace(&mut self, slot: u32) {
        match self.armed(slot).place {
            Place::Lane { prev, next } => {
                let lane = lane_of(&self.armed(slot).key);
                match prev {
                    NIL => self.lanes[lane].head = next,
                    p => self.set_next(p, next),
                }
                match next {
                    NIL => self.lanes[lane].tail = prev,
                    n => self.set_prev(n, prev),
                }
            }
            Place::Heap(pos) => {
                let pos = pos as usize;
                let last = self.heap.len() - 1;
                self.heap.swap_remove(pos);
                if pos < last {
                    self.set_pos(pos);
                    // The moved entry came from the bottom: it may belong above or below `pos`.
                    self.sift_up(pos);
                    self.sift_down(pos);
                }
            }
        }
    }

    fn set_next(&mut self, slot: u32, to: u32) {
        if let Place::Lane { next, .. } = &mut self.armed_mut(slot).place {
            *next = to;
        }
    }

    fn set_prev(&mut self, slot: u32, to: u32) {
        if let Place::Lane { prev, .. } = &mut self.armed_mut(slot).place {
            *prev = to;
        }
    }

    /// Free a slot and take it out of where it waits.
    fn release(&mut self, slot: u32) -> Option<Armed> {
        self.slots[slot as usize].as_ref()?;
        self.unplace(slot);
        let a = self.slots[slot as usize].take()?;
        self.free.push(slot);
        if matches!(a.key, TimerKey::InitialRebalance { .. }) {
            self.initial_rebalances -= 1;
        }
        Some(a)
    }

    /// Record in its slot where the heap entry at position `i` now is.
    fn set_pos(&mut self, i: usize) {
        let slot = self.heap[i].slot;
        self.armed_mut(slot).place = Place::Heap(i as u32);
    }

    /// Move the entry at `i` up to its place: parents it beats move down into the hole.
    fn sift_up(&mut self, mut i: usize) {
        let moving = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if moving.order() >= self.heap[parent].order() {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.set_pos(i);
            i = parent;
        }
        self.heap[i] = moving;
        self.set_pos(i);
    }

    /// Move the entry at `i` down to its place: smaller children move up into the hole.
    fn sift_down(&mut self, mut i: usize) {
        let moving = self.heap[i];
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let least = if r < n && self.heap[r].order() < self.heap[l].order() {
                r
            } else {
                l
            };
            if moving.order() <= self.heap[least].order() {
                break;
            }
            self.heap[i] = self.heap[least];
            self.set_pos(i);
            i = least;
        }
        self.heap[i] = moving;
        self.set_pos(i);
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

    /// Every armed slot waits in exactly one place: the lanes are linked both ways and sorted,
    /// the heap keeps its invariant and its positions, the counters agree.
    fn check_heap(t: &Timers) {
        let armed = t.slots.iter().flatten().count();
        assert_eq!(t.by_key.len(), armed);
        let mut placed = 0;
        for (k, lane) in t.lanes.iter().enumerate() {
            let (mut prev, mut at) = (NIL, lane.head);
            while at != NIL {
                let a = t.armed(at);
                assert_eq!(lane_of(&a.key), k);
                let Place::Lane { prev: p, next } = a.place else {
                    panic!("a lane holds a slot placed elsewhere")
                };
                assert_eq!(p, prev);
                if prev != NIL {
                    assert!(t.armed(prev).order() < a.order(), "lane {k} out of order");
                }
                placed += 1;
                (prev, at) = (at, next);
            }
            assert_eq!(lane.tail, prev);
        }
        for (i, e) in t.heap.iter().enumerate() {
            let a = t.armed(e.slot);
            assert_eq!(a.place, Place::Heap(i as u32));
            assert_eq!(a.order(), e.order());
            if i > 0 {
                assert!(t.heap[(i - 1) / 2].order() <= e.order());
            }
        }
        placed += t.heap.len();
        assert_eq!(placed, armed, "every armed slot waits in one place");
        let initial = t
            .slots
            .iter()
            .flatten()
            .filter(|a| matches!(a.key, TimerKey::InitialRebalance { .. }))
            .count();
        assert_eq!(t.initial_rebalances, initial);
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
            // Some keys of another kind, which the table counts apart.
            let key = if (x >> 8).is_multiple_of(3) {
                TimerKey::InitialRebalance { group_id: m }
            } else {
                session(&m)
            };
            if x.is_multiple_of(5) {
                let _ = t.cancel(&key);
            } else {
                arm(&mut t, key, Millis(i + (x % 1_000) as i64), 0);
            }
            if i % 97 == 0 {
                check_heap(&t);
            }
            if i % 250 == 0 {
                // Fire what is due now: exactly the armed keys up to `i`, in firing order.
                let expected: Vec<TimerKey> = t
                    .keys()
                    .filter(|k| t.deadline(k) <= Some(Millis(i)))
                    .cloned()
                    .collect();
                let fired: Vec<TimerKey> = drain(&mut t, i).into_iter().map(|f| f.0).collect();
                assert_eq!(fired, expected);
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
        check_heap(&t);
        assert_eq!(t.slots.len(), 10, "one slot per armed timer");
        assert!(t.heap.is_empty(), "deadlines in order all wait in the lane");
        assert_eq!(t.keys().count(), 10);
        let fired = drain(&mut t, i64::MAX);
        assert_eq!(fired.len(), 10);
        assert_eq!(fired[0].0, session("m0"));
    }
}
