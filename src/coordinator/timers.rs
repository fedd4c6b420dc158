//! The timer table (spec §3.13): timers are data. Operations schedule and cancel; the caller
//! asks for the earliest deadline and fires due timers with its own `now`.

use std::collections::{BTreeMap, BTreeSet};

use super::{TimerChange, TimerKey};
use crate::types::Millis;

/// Armed timers, by key and by deadline.
#[derive(Debug, Clone, Default)]
pub struct Timers {
    by_key: BTreeMap<TimerKey, (Millis, i32)>,
    by_deadline: BTreeSet<(Millis, TimerKey)>,
}

impl Timers {
    /// Arm (or re-arm) a timer. `tag` is carried to the firing (the member epoch for rebalance
    /// timeouts).
    pub fn schedule(&mut self, key: TimerKey, deadline: Millis, tag: i32) -> TimerChange {
        if let Some((old, _)) = self.by_key.insert(key.clone(), (deadline, tag)) {
            self.by_deadline.remove(&(old, key.clone()));
        }
        self.by_deadline.insert((deadline, key.clone()));
        TimerChange::Schedule { key, deadline }
    }

    /// Disarm a timer; `None` when it was not armed.
    pub fn cancel(&mut self, key: &TimerKey) -> Option<TimerChange> {
        let (deadline, _) = self.by_key.remove(key)?;
        self.by_deadline.remove(&(deadline, key.clone()));
        Some(TimerChange::Cancel { key: key.clone() })
    }

    pub fn is_scheduled(&self, key: &TimerKey) -> bool {
        self.by_key.contains_key(key)
    }

    pub fn deadline(&self, key: &TimerKey) -> Option<Millis> {
        self.by_key.get(key).map(|(d, _)| *d)
    }

    pub fn next(&self) -> Option<(Millis, TimerKey)> {
        self.by_deadline.iter().next().cloned()
    }

    /// Remove and return the earliest timer due at `now`, with its tag.
    pub fn pop_due(&mut self, now: Millis) -> Option<(TimerKey, i32)> {
        let (deadline, key) = self.by_deadline.iter().next().cloned()?;
        if deadline > now {
            return None;
        }
        self.by_deadline.remove(&(deadline, key.clone()));
        let (_, tag) = self.by_key.remove(&key)?;
        Some((key, tag))
    }

    pub fn keys(&self) -> impl Iterator<Item = &TimerKey> {
        self.by_key.keys()
    }

    pub fn clear(&mut self) {
        self.by_key.clear();
        self.by_deadline.clear();
    }
}
