//! Small domain types shared by every module: time, task ids and task sets.

use crate::util::map::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::protocol::TaskIds;

/// Milliseconds on the caller's clock. The core never reads a clock: every operation takes `now`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Millis(pub i64);

impl Millis {
    /// Time zero, where simulations and scenarios start.
    pub const ZERO: Millis = Millis(0);

    /// `self + ms`, saturating (Kafka adds `Integer.MAX_VALUE` ms for "never").
    pub fn plus(self, ms: i64) -> Millis {
        Millis(self.0.saturating_add(ms))
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// A task: one partition of one subtopology.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaskId {
    /// The subtopology id.
    pub subtopology: String,
    /// The partition number (the task's index within its subtopology).
    pub partition: i32,
}

impl TaskId {
    /// The task `partition` of `subtopology`.
    pub fn new(subtopology: impl Into<String>, partition: i32) -> Self {
        TaskId {
            subtopology: subtopology.into(),
            partition,
        }
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.subtopology, self.partition)
    }
}

/// A set of tasks, grouped by subtopology. Iteration is sorted (subtopology, then partition),
/// which is the order Kafka writes them in records and responses. Empty subtopologies are never
/// stored, so structural equality is set equality.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskSet(BTreeMap<String, BTreeSet<i32>>);

impl TaskSet {
    /// An empty set.
    pub fn new() -> Self {
        TaskSet(BTreeMap::new())
    }

    /// Whether the set has no task.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.0.values().map(BTreeSet::len).sum()
    }

    /// Whether the set holds task `partition` of `subtopology`.
    pub fn contains(&self, subtopology: &str, partition: i32) -> bool {
        self.0
            .get(subtopology)
            .is_some_and(|p| p.contains(&partition))
    }

    /// Whether the set holds `task`.
    pub fn contains_task(&self, task: &TaskId) -> bool {
        self.contains(&task.subtopology, task.partition)
    }

    /// Adds a task; `false` if it was there already.
    pub fn insert(&mut self, subtopology: &str, partition: i32) -> bool {
        match self.0.get_mut(subtopology) {
            Some(p) => p.insert(partition),
            None => {
                let mut p = BTreeSet::new();
                p.insert(partition);
                self.0.insert(subtopology.to_string(), p);
                true
            }
        }
    }

    /// Removes a task; `false` if it was not there.
    pub fn remove(&mut self, subtopology: &str, partition: i32) -> bool {
        let Some(p) = self.0.get_mut(subtopology) else {
            return false;
        };
        let removed = p.remove(&partition);
        if p.is_empty() {
            self.0.remove(subtopology);
        }
        removed
    }

    /// Subtopologies with their (non-empty, sorted) partitions.
    pub fn subtopologies(&self) -> impl Iterator<Item = (&str, &BTreeSet<i32>)> {
        self.0.iter().map(|(s, p)| (s.as_str(), p))
    }

    /// The tasks, sorted.
    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.0
            .iter()
            .flat_map(|(s, ps)| ps.iter().map(move |p| TaskId::new(s.clone(), *p)))
    }

    /// Tasks in either set.
    pub fn union(&self, other: &TaskSet) -> TaskSet {
        let mut out = self.clone();
        for (s, ps) in &other.0 {
            out.0
                .entry(s.clone())
                .or_default()
                .extend(ps.iter().copied());
        }
        out
    }

    /// Tasks in `self` but not in `other`.
    pub fn difference(&self, other: &TaskSet) -> TaskSet {
        let mut out = TaskSet::new();
        for (s, ps) in &self.0 {
            for p in ps {
                if !other.contains(s, *p) {
                    out.insert(s, *p);
                }
            }
        }
        out
    }

    /// Tasks in both sets.
    pub fn intersection(&self, other: &TaskSet) -> TaskSet {
        let mut out = TaskSet::new();
        for (s, ps) in &self.0 {
            for p in ps {
                if other.contains(s, *p) {
                    out.insert(s, *p);
                }
            }
        }
        out
    }

    /// Whether every task of `self` is in `other`.
    pub fn is_subset(&self, other: &TaskSet) -> bool {
        self.0
            .iter()
            .all(|(s, ps)| ps.iter().all(|p| other.contains(s, *p)))
    }

    /// Whether the sets share a task.
    pub fn intersects(&self, other: &TaskSet) -> bool {
        self.0
            .iter()
            .any(|(s, ps)| ps.iter().any(|p| other.contains(s, *p)))
    }

    /// From the wire form. Duplicates collapse; empty partition lists leave no entry.
    pub fn from_task_ids(ids: &[TaskIds]) -> TaskSet {
        let mut out = TaskSet::new();
        for t in ids {
            for p in &t.partitions {
                out.insert(&t.subtopology_id, *p);
            }
        }
        out
    }

    /// To the wire form, sorted by subtopology and partition.
    pub fn to_task_ids(&self) -> Vec<TaskIds> {
        self.0
            .iter()
            .map(|(s, ps)| TaskIds {
                subtopology_id: s.clone(),
                partitions: ps.iter().copied().collect(),
                unknown_tagged_fields: Vec::new(),
            })
            .collect()
    }
}

impl FromIterator<TaskId> for TaskSet {
    fn from_iter<I: IntoIterator<Item = TaskId>>(iter: I) -> Self {
        let mut out = TaskSet::new();
        for t in iter {
            out.insert(&t.subtopology, t.partition);
        }
        out
    }
}

/// Active tasks with the assignment epoch at which each was granted to the member (spec §4.2).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ActiveTasks(BTreeMap<String, BTreeMap<i32, i32>>);

impl ActiveTasks {
    /// An empty set.
    pub fn new() -> Self {
        ActiveTasks(BTreeMap::new())
    }

    /// Whether the set has no task.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.0.values().map(BTreeMap::len).sum()
    }

    /// Whether the set holds task `partition` of `subtopology`.
    pub fn contains(&self, subtopology: &str, partition: i32) -> bool {
        self.0
            .get(subtopology)
            .is_some_and(|p| p.contains_key(&partition))
    }

    /// The assignment epoch of a task, if the set holds it.
    pub fn epoch_of(&self, subtopology: &str, partition: i32) -> Option<i32> {
        self.0
            .get(subtopology)
            .and_then(|p| p.get(&partition).copied())
    }

    /// Adds a task granted at `epoch` (replacing the epoch of a task already there).
    pub fn insert(&mut self, subtopology: &str, partition: i32, epoch: i32) {
        self.0
            .entry(subtopology.to_string())
            .or_default()
            .insert(partition, epoch);
    }

    /// Removes a task; its epoch if it was there.
    pub fn remove(&mut self, subtopology: &str, partition: i32) -> Option<i32> {
        let p = self.0.get_mut(subtopology)?;
        let removed = p.remove(&partition);
        if p.is_empty() {
            self.0.remove(subtopology);
        }
        removed
    }

    /// (subtopology, partition, epoch), sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32, i32)> {
        self.0
            .iter()
            .flat_map(|(s, ps)| ps.iter().map(move |(p, e)| (s.as_str(), *p, *e)))
    }

    /// Subtopologies with their partitions and epochs.
    pub fn subtopologies(&self) -> impl Iterator<Item = (&str, &BTreeMap<i32, i32>)> {
        self.0.iter().map(|(s, p)| (s.as_str(), p))
    }

    /// The tasks without their epochs.
    pub fn task_set(&self) -> TaskSet {
        self.iter().map(|(s, p, _)| TaskId::new(s, p)).collect()
    }

    /// Every task at one epoch.
    pub fn with_epoch(tasks: &TaskSet, epoch: i32) -> ActiveTasks {
        let mut out = ActiveTasks::new();
        for t in tasks.iter() {
            out.insert(&t.subtopology, t.partition, epoch);
        }
        out
    }

    /// The same tasks, every epoch replaced.
    pub fn reset_epochs(&self, epoch: i32) -> ActiveTasks {
        ActiveTasks::with_epoch(&self.task_set(), epoch)
    }
}

/// Active, standby and warm-up tasks of one member (a target assignment).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct TasksTuple {
    /// Active tasks.
    pub active: TaskSet,
    /// Standby tasks.
    pub standby: TaskSet,
    /// Warm-up tasks.
    pub warmup: TaskSet,
}

impl TasksTuple {
    /// Whether all three sets are empty.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty() && self.warmup.is_empty()
    }
}

/// Active (with assignment epochs), standby and warm-up tasks: a member's current assignment or
/// its tasks pending revocation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct TasksWithEpochs {
    /// Active tasks, with the epoch each was granted at.
    pub active: ActiveTasks,
    /// Standby tasks.
    pub standby: TaskSet,
    /// Warm-up tasks.
    pub warmup: TaskSet,
}

impl TasksWithEpochs {
    /// Whether all three sets are empty.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty() && self.warmup.is_empty()
    }

    /// The same tasks without active epochs.
    pub fn tasks(&self) -> TasksTuple {
        TasksTuple {
            active: self.active.task_set(),
            standby: self.standby.clone(),
            warmup: self.warmup.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_set_never_keeps_empty_subtopologies() {
        let mut a = TaskSet::new();
        a.insert("0", 1);
        a.remove("0", 1);
        assert_eq!(a, TaskSet::new());
        assert!(a.to_task_ids().is_empty());
    }

    #[test]
    fn task_set_set_algebra() {
        let a: TaskSet = [
            TaskId::new("0", 0),
            TaskId::new("0", 1),
            TaskId::new("1", 0),
        ]
        .into_iter()
        .collect();
        let b: TaskSet = [TaskId::new("0", 1), TaskId::new("2", 0)]
            .into_iter()
            .collect();
        assert_eq!(a.intersection(&b).len(), 1);
        assert_eq!(a.difference(&b).len(), 2);
        assert_eq!(a.union(&b).len(), 4);
        assert!(!b.is_subset(&a));
        assert!(a.intersection(&b).is_subset(&a));
    }
}
