//! Task assignors (spec §5): the pluggable function from group and topology to a target
//! assignment. Selected by name (`group.streams.assignors`, `streams.assignor.name`).

#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
pub mod client;
pub mod consumer;
pub(crate) mod java_compat;
mod kafka_sticky;
mod mock;
mod sticky;

pub use kafka_sticky::KafkaStickyAssignor;
pub use mock::MockAssignor;
pub use sticky::StickyTaskAssignor;

use crate::util::map::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::{TaskId, TaskSet};

/// Assignment configs handed to the assignor (spec §3.9, §5.2).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AssignmentConfigs {
    /// Standby replicas per stateful task.
    pub num_standby_replicas: i32,
    /// Client tags standbys are spread over (rack awareness).
    pub rack_aware_assignment_tags: Vec<String>,
    /// Not epoch-relevant; used for warm-up decisions only.
    pub acceptable_recovery_lag: i64,
    /// Not epoch-relevant; warm-up budget per group.
    pub num_warmup_replicas: i32,
}

/// One member as the assignor sees it (spec §5.2 `MemberAssignmentMetadata` + state).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberSpec {
    /// Static membership id, if any.
    pub instance_id: Option<String>,
    /// Rack, if any.
    pub rack_id: Option<String>,
    /// The process the member runs in; tasks of one process are not placed twice.
    pub process_id: String,
    /// Client tags (for rack-aware standbys).
    pub client_tags: BTreeMap<String, String>,
    /// Currently owned (assigned) tasks, not the target.
    pub active_tasks: TaskSet,
    /// Currently owned standby tasks.
    pub standby_tasks: TaskSet,
    /// Currently owned warm-up tasks.
    pub warmup_tasks: TaskSet,
    /// Reported cumulative changelog offsets per task.
    pub task_offsets: BTreeMap<TaskId, i64>,
    /// Reported changelog end offsets per task.
    pub task_end_offsets: BTreeMap<TaskId, i64>,
}

/// The group as the assignor sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupSpec {
    /// By member id (sorted, so iteration never depends on insertion order).
    pub members: BTreeMap<String, MemberSpec>,
    /// The group's assignment configs.
    pub configs: AssignmentConfigs,
}

/// One subtopology as the assignor sees it (spec §5.2 `TopologyDescriber`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubtopologySpec {
    /// Tasks are partitions `0..number_of_tasks`.
    pub number_of_tasks: i32,
    /// Has at least one changelog topic; only stateful tasks get standbys.
    pub stateful: bool,
}

/// The configured topology as the assignor sees it, by subtopology id (sorted).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologySpec {
    /// Subtopology id -> its task count and statefulness.
    pub subtopologies: BTreeMap<String, SubtopologySpec>,
}

impl TopologySpec {
    /// Whether `task` exists in the topology.
    pub fn contains(&self, task: &TaskId) -> bool {
        self.subtopologies
            .get(&task.subtopology)
            .is_some_and(|s| task.partition >= 0 && task.partition < s.number_of_tasks)
    }

    /// Every task, sorted by (subtopology, partition).
    pub fn tasks(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.subtopologies
            .iter()
            .flat_map(|(id, s)| (0..s.number_of_tasks).map(move |p| TaskId::new(id.clone(), p)))
    }
}

/// One member's new target.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberAssignment {
    /// Active tasks.
    pub active: TaskSet,
    /// Standby tasks.
    pub standby: TaskSet,
    /// Warm-up tasks.
    pub warmup: TaskSet,
}

/// The assignor's output: every member of the spec appears (possibly empty).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupAssignment {
    /// Member id -> its new target.
    pub members: BTreeMap<String, MemberAssignment>,
}

/// The assignor could not produce an assignment (Kafka's `TaskAssignorException`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task assignor failed: {0}")]
pub struct AssignorError(pub String);

/// A task assignor. Must be deterministic: same inputs, same output.
pub trait TaskAssignor: Send + Sync {
    /// The assignor's name (`group.streams.assignors`).
    fn name(&self) -> &'static str;
    /// Computes the target assignment of `group` for `topology`.
    fn assign(
        &self,
        group: &GroupSpec,
        topology: &TopologySpec,
    ) -> Result<GroupAssignment, AssignorError>;

    /// [`TaskAssignor::assign`] when the caller knows the order in which Kafka's coordinator
    /// would put the members into the assignor's member map: its own member map's iteration
    /// order (a Java `TimelineHashMap` fed with every `put` and `remove` of member
    /// ids), then a member not in it yet. Only Kafka's `sticky` depends on it (for member ids
    /// sharing a `HashMap` bucket); the default ignores it.
    fn assign_in_member_order(
        &self,
        group: &GroupSpec,
        topology: &TopologySpec,
        member_order: &[&str],
    ) -> Result<GroupAssignment, AssignorError> {
        let _ = member_order;
        self.assign(group, topology)
    }
}

/// Names of the built-in assignors, the default first. `sticky` is Kafka 4.4's assignor,
/// tie-breaks included; the groupcoord extensions have their own names: `sticky-rack-aware`
/// (balanced, minimum-movement, standbys spread over `rack.aware.assignment.tags`) and
/// `sticky-warmups` (the same plus KIP-441 warm-ups).
pub const BUILTIN_ASSIGNORS: &[&str] = &["sticky", "sticky-rack-aware", "sticky-warmups", "mock"];

/// A built-in assignor by name.
pub fn builtin(name: &str) -> Option<Box<dyn TaskAssignor>> {
    match name {
        "sticky" => Some(Box::new(kafka_sticky::KafkaStickyAssignor)),
        "sticky-rack-aware" => Some(Box::new(sticky::StickyTaskAssignor { warmups: false })),
        "sticky-warmups" => Some(Box::new(sticky::StickyTaskAssignor { warmups: true })),
        "mock" => Some(Box::new(mock::MockAssignor)),
        _ => None,
    }
}
