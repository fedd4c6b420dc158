//! The timer table (spec §3.13): timers are data. Operations schedule and cancel; the caller
//! asks for the earliest deadline and fires due timers with its own `now`.
//!
//! Rescheduling a session timeout is on every heartbeat's path, so the key index is a hash map
//! (with a fixed-key hasher: no randomness, no dependency on a system RNG under wasm) and the
//! deadline index is ordered by (deadline, insertion sequence); an existing key is moved without
//! copying it.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

use super::{TimerChange, TimerKey};
use crate::types::Millis;

type FixedHasher = BuildHasherDefault<DefaultHasher>;

/// Armed timers, by key and by deadline.
#[derive(Debug, Clone, Default)]
pub struct Timers {
    /// key -> (deadline, tag, sequence).
    by_key: HashMap<TimerKey, (Millis, i32, u64), FixedHasher>,
    /// (deadline, sequence) -> key: timers with equal deadlines fire in scheduling order.
    by_deadline: BTreeMap<(Millis, u64), TimerKey>,
    next_seq: u64,
}

impl Timers {
    /// Arm (or re-arm) a timer. `tag` is carried to the firing (the member epoch for rebalance
    /// timeouts).
    pub fn schedule(&mut self, key: TimerKey, deadline: Millis, tag: i32) -> TimerChange {
        let seq = self.next_seq;
        self.next_seq += 1;
        match self.by_key.get_mut(&key) {
            Some(entry) => {
                let stored = self.by_deadline.remove(&(entry.0, entry.2));
                *entry = (deadline, tag, seq);
                self.by_deadline
                    .insert((deadline, seq), stored.unwrap_or_else(|| key.clone()));
            }
            None => {
                self.by_deadline.insert((deadline, seq), key.clone());
                self.by_key.insert(key.clone(), (deadline, tag, seq));
            }
        }
        TimerChange::Schedule { key, deadline }
    }

    /// Disarm a timer; `None` when it was not armed.
    pub fn cancel(&mut self, key: &TimerKey) -> Option<TimerChange> {
        let (deadline, _, seq) = self.by_key.remove(key)?;
        self.by_deadline.remove(&(deadline, seq));
        Some(TimerChange::Cancel { key: key.clone() })
    }

    pub fn is_scheduled(&self, key: &TimerKey) -> bool {
        self.by_key.contains_key(key)
    }

    pub fn deadline(&self, key: &TimerKey) -> Option<Millis> {
        self.by_key.get(key).map(|(d, _, _)| *d)
    }

    pub fn next(&self) -> Option<(Millis, TimerKey)> {
        self.by_deadline
            .iter()
            .next()
            .map(|((d, _), k)| (*d, k.clone()))
    }

    /// Remove and return the earliest timer due at `now`, with its tag.
    pub fn pop_due(&mut self, now: Millis) -> Option<(TimerKey, i32)> {
        let (&(deadline, seq), _) = self.by_deadline.iter().next()?;
        if deadline > now {
            return None;
        }
        let key = self.by_deadline.remove(&(deadline, seq))?;
        let (_, tag, _) = self.by_key.remove(&key)?;
        Some((key, tag))
    }

    /// Armed keys in firing order.
    pub fn keys(&self) -> impl Iterator<Item = &TimerKey> {
        self.by_deadline.values()
    }

    pub fn clear(&mut self) {
        self.by_key.clear();
        self.by_deadline.clear();
    }
}
