//! Bounds on every size and count a client can make the coordinator store.
//!
//! Kafka bounds most of these implicitly (its controller refuses an operation of more than 10,000
//! records, so a single topic creation cannot exceed ~10,000 partitions; its JVM heap bounds the
//! rest). A coordinator that persists whatever it accepts must bound them explicitly: one
//! repartition topic declaring 2^31-1 partitions would otherwise make the assignor (and after a
//! restart, the replay) allocate terabytes. Each bound is a broker key (`groupcoord.max.*`) with
//! a default and a range; a request beyond a bound is refused before anything is written.

use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};
use crate::protocol::{StreamsGroupHeartbeatRequest, TaskIds};
use crate::topology::{ConfiguredTopology, StreamsTopology};

/// Bounds on what clients can make the coordinator store, set with the `groupcoord.max.*` keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Partitions of one topic: CreateTopics, auto-created internal topics, and every partition
    /// count a streams topology declares.
    pub max_partitions_per_topic: i32,
    /// Topics in the registry.
    pub max_topics: i32,
    /// Groups on this coordinator.
    pub max_groups: i32,
    /// Subtopologies of one topology.
    pub max_subtopologies: i32,
    /// Tasks of one configured topology (the sum of the subtopologies' task counts).
    pub max_tasks_per_group: i32,
    /// Tasks a member reports owning in one heartbeat (active + standby + warm-up).
    pub max_tasks_per_member: i32,
    /// MiB the server's in-memory data plane (Produce/Fetch) may hold.
    pub max_data_plane_mb: i32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_partitions_per_topic: 10_000,
            max_topics: 10_000,
            max_groups: 100_000,
            max_subtopologies: 1_000,
            max_tasks_per_group: 100_000,
            max_tasks_per_member: 100_000,
            max_data_plane_mb: 256,
        }
    }
}

/// `(key, min, max)` of every bound.
pub const KEYS: &[(&str, i32, i32)] = &[
    ("groupcoord.max.partitions.per.topic", 1, 1_000_000),
    ("groupcoord.max.topics", 1, 1_000_000),
    ("groupcoord.max.groups", 1, 10_000_000),
    ("groupcoord.max.subtopologies", 1, 100_000),
    ("groupcoord.max.tasks.per.group", 1, 10_000_000),
    ("groupcoord.max.tasks.per.member", 1, 10_000_000),
    ("groupcoord.max.data.plane.mb", 1, 1_048_576),
];

impl Limits {
    /// Set a bound by key; `Err` = out of range (the caller names the key), `None` = not a
    /// limit key.
    pub fn set(&mut self, key: &str, value: i32) -> Option<Result<(), String>> {
        let &(_, lo, hi) = KEYS.iter().find(|(k, _, _)| *k == key)?;
        if !(lo..=hi).contains(&value) {
            return Some(Err(format!("must be between {lo} and {hi}, got {value}")));
        }
        let field = match key {
            "groupcoord.max.partitions.per.topic" => &mut self.max_partitions_per_topic,
            "groupcoord.max.topics" => &mut self.max_topics,
            "groupcoord.max.groups" => &mut self.max_groups,
            "groupcoord.max.subtopologies" => &mut self.max_subtopologies,
            "groupcoord.max.tasks.per.group" => &mut self.max_tasks_per_group,
            "groupcoord.max.tasks.per.member" => &mut self.max_tasks_per_member,
            _ => &mut self.max_data_plane_mb,
        };
        *field = value;
        Some(Ok(()))
    }

    /// A partition count a peer asks for, or `Err(message)` naming the bound.
    pub fn check_partitions(&self, what: &str, partitions: i32) -> Result<(), String> {
        if partitions > self.max_partitions_per_topic {
            return Err(format!(
                "{what} has {partitions} partitions, more than the maximum of {} \
                 (groupcoord.max.partitions.per.topic).",
                self.max_partitions_per_topic
            ));
        }
        Ok(())
    }

    /// The sizes of a topology: its subtopology count and every partition count it declares.
    fn check_topology_sizes<'a>(
        &self,
        subtopologies: usize,
        mut declared: impl Iterator<Item = (&'a str, i32)>,
    ) -> Result<(), String> {
        if subtopologies > self.max_subtopologies.max(0) as usize {
            return Err(format!(
                "The topology has {subtopologies} subtopologies, more than the maximum of {} \
                 (groupcoord.max.subtopologies).",
                self.max_subtopologies
            ));
        }
        declared.try_for_each(|(name, partitions)| {
            self.check_partitions(&format!("Topic {name}"), partitions)
        })
    }

    /// The sizes of a topology from a replayed record.
    pub fn check_topology(&self, t: &StreamsTopology) -> Result<(), String> {
        self.check_topology_sizes(
            t.subtopologies.len(),
            t.subtopologies.iter().flat_map(|s| {
                s.repartition_source_topics
                    .iter()
                    .chain(&s.state_changelog_topics)
                    .map(|t| (t.name.as_str(), t.partitions))
            }),
        )
    }

    /// The sizes of a heartbeat request, before anything is looked up or stored.
    pub fn check_heartbeat(&self, req: &StreamsGroupHeartbeatRequest) -> Result<(), ApiError> {
        if let Some(t) = &req.topology {
            self.check_topology_sizes(
                t.subtopologies.len(),
                t.subtopologies.iter().flat_map(|s| {
                    s.repartition_source_topics
                        .iter()
                        .chain(&s.state_changelog_topics)
                        .map(|t| (t.name.as_str(), t.partitions))
                }),
            )
            .map_err(|m| ApiError::new(ErrorCode::STREAMS_INVALID_TOPOLOGY, m))?;
        }
        let count = |l: &Option<Vec<TaskIds>>| -> usize {
            l.iter().flatten().map(|t| t.partitions.len().max(1)).sum()
        };
        let owned = count(&req.active_tasks) + count(&req.standby_tasks) + count(&req.warmup_tasks);
        if owned > self.max_tasks_per_member.max(0) as usize {
            return Err(ApiError::invalid_request(format!(
                "The member reports {owned} owned tasks, more than the maximum of {} \
                 (groupcoord.max.tasks.per.member).",
                self.max_tasks_per_member
            )));
        }
        Ok(())
    }

    /// The sizes of a ConsumerGroupHeartbeat: subscribed topic names (at most
    /// `groupcoord.max.topics`) and owned partitions (at most `groupcoord.max.tasks.per.member`).
    pub fn check_consumer_heartbeat(
        &self,
        req: &crate::protocol::consumer::ConsumerGroupHeartbeatRequest,
    ) -> Result<(), ApiError> {
        let names = req.subscribed_topic_names.as_ref().map_or(0, Vec::len);
        if names > self.max_topics.max(0) as usize {
            return Err(ApiError::invalid_request(format!(
                "The member subscribes to {names} topics, more than the maximum of {} \
                 (groupcoord.max.topics).",
                self.max_topics
            )));
        }
        let owned: usize = req
            .topic_partitions
            .iter()
            .flatten()
            .map(|t| t.partitions.len().max(1))
            .sum();
        if owned > self.max_tasks_per_member.max(0) as usize {
            return Err(ApiError::invalid_request(format!(
                "The member reports {owned} owned partitions, more than the maximum of {} \
                 (groupcoord.max.tasks.per.member).",
                self.max_tasks_per_member
            )));
        }
        Ok(())
    }

    /// The task count of a configured topology (partition counts decided from the metadata).
    pub fn check_tasks(&self, c: &ConfiguredTopology) -> Result<(), ApiError> {
        let tasks: i64 = c
            .subtopologies
            .as_ref()
            .map(|s| s.values().map(|s| s.number_of_tasks.max(0) as i64).sum())
            .unwrap_or(0);
        if tasks > self.max_tasks_per_group as i64 {
            return Err(ApiError::new(
                ErrorCode::STREAMS_INVALID_TOPOLOGY,
                format!(
                    "The topology has {tasks} tasks, more than the maximum of {} \
                     (groupcoord.max.tasks.per.group).",
                    self.max_tasks_per_group
                ),
            ));
        }
        Ok(())
    }

    /// The message when the topic registry is full.
    pub fn topics_full(&self) -> String {
        format!(
            "The server already holds the maximum of {} topics (groupcoord.max.topics).",
            self.max_topics
        )
    }

    /// A new group when `existing` groups are there already.
    pub fn check_new_group(&self, existing: usize) -> Result<(), ApiError> {
        if existing >= self.max_groups.max(0) as usize {
            return Err(ApiError::invalid_request(format!(
                "The coordinator already holds the maximum of {} groups (groupcoord.max.groups).",
                self.max_groups
            )));
        }
        Ok(())
    }
}
