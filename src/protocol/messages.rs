//! Message structs of the streams group RPCs, pinned to the Kafka 4.4 schemas (spec §1).
//!
//! One Rust struct per schema struct, fields in schema order and named after the schema field in
//! snake case. Nullable fields are `Option`; `null = unchanged` semantics are the coordinator's
//! business, not the codec's. Every struct keeps the tagged fields it did not recognise so that a
//! decode/encode round trip preserves them byte for byte.

use serde::{Deserialize, Serialize};

pub use crate::wire::{RawTaggedField, UnknownTaggedFields};

// ---------------------------------------------------------------------------------------------
// Shared structs (identical wire shape wherever they appear)
// ---------------------------------------------------------------------------------------------

/// A configuration entry, e.g. a changelog topic's `cleanup.policy`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KeyValue {
    /// The configuration key.
    pub key: String,
    /// The configuration value.
    pub value: String,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// An internal topic the topology needs (changelog or repartition topic).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicInfo {
    /// The topic name.
    pub name: String,
    /// 0 = not enforced (always 0 for changelogs).
    pub partitions: i32,
    /// 0 = broker default.
    pub replication_factor: i16,
    /// Configs to create the topic with.
    pub topic_configs: Vec<KeyValue>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// Where a Kafka Streams instance serves interactive queries (its `application.server`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Endpoint {
    /// Host name.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A member's offset of one task's changelog (for lag-aware assignment).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TaskOffset {
    /// The subtopology of the task.
    pub subtopology_id: String,
    /// The partition (task number) within the subtopology.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// Tasks of one subtopology, by partition number.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TaskIds {
    /// The subtopology.
    pub subtopology_id: String,
    /// The tasks' partition numbers.
    pub partitions: Vec<i32>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

// ---------------------------------------------------------------------------------------------
// StreamsGroupHeartbeat (API key 88, v0-1), spec §1.1 / §1.2
// ---------------------------------------------------------------------------------------------

/// Source topics that must have the same number of partitions, as indexes into the subtopology's
/// lists.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CopartitionGroup {
    /// Indexes into `source_topics`.
    pub source_topics: Vec<i16>,
    /// Indexes into `source_topic_regex`.
    pub source_topic_regex: Vec<i16>,
    /// Indexes into `repartition_source_topics`.
    pub repartition_source_topics: Vec<i16>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// One subtopology of a Kafka Streams topology: its input topics and the internal topics it needs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Subtopology {
    /// The subtopology id, unique in the topology (Kafka Streams uses `"0"`, `"1"`, ...).
    pub subtopology_id: String,
    /// Input topics by name.
    pub source_topics: Vec<String>,
    /// Input topic patterns; Kafka 4.4 rejects a topology that has any (§3.2).
    pub source_topic_regex: Vec<String>,
    /// Changelog topics of the subtopology's state stores.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// Repartition topics the subtopology writes.
    pub repartition_sink_topics: Vec<String>,
    /// Repartition topics the subtopology reads.
    pub repartition_source_topics: Vec<TopicInfo>,
    /// Groups of input topics that must be co-partitioned.
    pub copartition_groups: Vec<CopartitionGroup>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// The topology a member sends when it joins.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Topology {
    /// The topology epoch; members of one group must agree on it.
    pub epoch: i32,
    /// The subtopologies.
    pub subtopologies: Vec<Subtopology>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// StreamsGroupHeartbeat (API key 88): a member joins, heartbeats, reports its tasks or leaves
/// (§1.1).
///
/// Fields that are `None` (or -1) did not change since the last heartbeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamsGroupHeartbeatRequest {
    /// The group id.
    pub group_id: String,
    /// The member id, generated by the client; empty is invalid.
    pub member_id: String,
    /// 0 to join, -1 to leave, -2 for a static member to leave temporarily, else the current epoch.
    pub member_epoch: i32,
    /// The epoch of the endpoint-to-partitions map the member has.
    pub endpoint_information_epoch: i32,
    /// The static membership id (`group.instance.id`), if any.
    pub instance_id: Option<String>,
    /// The member's rack.
    pub rack_id: Option<String>,
    /// -1 = unchanged.
    pub rebalance_timeout_ms: i32,
    /// The topology, sent when joining.
    pub topology: Option<Topology>,
    /// The active tasks the member owns.
    pub active_tasks: Option<Vec<TaskIds>>,
    /// The standby tasks the member owns.
    pub standby_tasks: Option<Vec<TaskIds>>,
    /// The warm-up tasks the member owns.
    pub warmup_tasks: Option<Vec<TaskIds>>,
    /// The process the member runs in (Kafka Streams' process UUID).
    pub process_id: Option<String>,
    /// The member's interactive-query endpoint.
    pub user_endpoint: Option<Endpoint>,
    /// Client tags for rack-aware standby placement.
    pub client_tags: Option<Vec<KeyValue>>,
    /// Changelog offsets of the member's tasks.
    pub task_offsets: Option<Vec<TaskOffset>>,
    /// Changelog end offsets of the member's tasks.
    pub task_end_offsets: Option<Vec<TaskOffset>>,
    /// Ask every member of the group to shut down.
    pub shutdown_application: bool,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for StreamsGroupHeartbeatRequest {
    fn default() -> Self {
        Self {
            group_id: String::new(),
            member_id: String::new(),
            member_epoch: 0,
            endpoint_information_epoch: 0,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: -1,
            topology: None,
            active_tasks: None,
            standby_tasks: None,
            warmup_tasks: None,
            process_id: None,
            user_endpoint: None,
            client_tags: None,
            task_offsets: None,
            task_end_offsets: None,
            shutdown_application: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

/// A topology problem the coordinator reports to a member (`status_code` module).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Status {
    /// One of [`status_code`](crate::protocol::status_code).
    pub status_code: i8,
    /// A human-readable explanation.
    pub status_detail: String,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// Partitions of one topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicPartition {
    /// The topic.
    pub topic: String,
    /// The partitions.
    pub partitions: Vec<i32>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// The partitions one member's endpoint serves, for interactive queries.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EndpointToPartitions {
    /// The endpoint.
    pub user_endpoint: Endpoint,
    /// Partitions of the member's active tasks.
    pub active_partitions: Vec<TopicPartition>,
    /// Partitions of the member's standby tasks.
    pub standby_partitions: Vec<TopicPartition>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// The coordinator's answer to a [`StreamsGroupHeartbeatRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamsGroupHeartbeatResponse {
    /// Always 0: groupcoord does not throttle.
    pub throttle_time_ms: i32,
    /// 0, or the Kafka error code.
    pub error_code: i16,
    /// Kafka's error message, if any.
    pub error_message: Option<String>,
    /// The member id.
    pub member_id: String,
    /// The member's epoch after this heartbeat.
    pub member_epoch: i32,
    /// How long the member waits before its next heartbeat.
    pub heartbeat_interval_ms: i32,
    /// v0 only; never set by Kafka 4.4 (stays 0).
    pub acceptable_recovery_lag_legacy: i32,
    /// How often the member reports its task offsets.
    pub task_offset_interval_ms: i32,
    /// v1+ (ignorable); -1 = not supported.
    pub acceptable_recovery_lag: i64,
    /// Topology problems the member must act on; `None` when nothing changed.
    pub status: Option<Vec<Status>>,
    /// The active tasks the member must own; `None` when unchanged.
    pub active_tasks: Option<Vec<TaskIds>>,
    /// The standby tasks; `None` when unchanged.
    pub standby_tasks: Option<Vec<TaskIds>>,
    /// The warm-up tasks; `None` when unchanged.
    pub warmup_tasks: Option<Vec<TaskIds>>,
    /// v1+.
    pub topology_description_required: bool,
    /// The epoch of `partitions_by_user_endpoint`.
    pub endpoint_information_epoch: i32,
    /// The endpoint-to-partitions map, when the member's epoch of it is stale.
    pub partitions_by_user_endpoint: Option<Vec<EndpointToPartitions>>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for StreamsGroupHeartbeatResponse {
    fn default() -> Self {
        Self {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: None,
            member_id: String::new(),
            member_epoch: 0,
            heartbeat_interval_ms: 0,
            acceptable_recovery_lag_legacy: 0,
            task_offset_interval_ms: 0,
            acceptable_recovery_lag: -1,
            status: None,
            active_tasks: None,
            standby_tasks: None,
            warmup_tasks: None,
            topology_description_required: false,
            endpoint_information_epoch: 0,
            partitions_by_user_endpoint: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// StreamsGroupDescribe (API key 89, v0-1), spec §1.4
// ---------------------------------------------------------------------------------------------

/// StreamsGroupDescribe (API key 89): the state of one or more streams groups (§1.4).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamsGroupDescribeRequest {
    /// The groups to describe.
    pub group_ids: Vec<String>,
    /// Whether to fill each group's `authorized_operations`.
    pub include_authorized_operations: bool,
    /// v1+.
    pub include_topology_description: bool,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A subtopology as a describe reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedSubtopology {
    /// The subtopology id.
    pub subtopology_id: String,
    /// Input topics.
    pub source_topics: Vec<String>,
    /// Repartition topics it writes.
    pub repartition_sink_topics: Vec<String>,
    /// Changelog topics of its state stores.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// Repartition topics it reads.
    pub repartition_source_topics: Vec<TopicInfo>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A group's configured topology as a describe reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedTopology {
    /// The topology epoch.
    pub epoch: i32,
    /// The subtopologies; `None` while the topology is not configured.
    pub subtopologies: Option<Vec<DescribedSubtopology>>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A member's tasks, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Assignment {
    /// Active tasks.
    pub active_tasks: Vec<TaskIds>,
    /// Standby tasks.
    pub standby_tasks: Vec<TaskIds>,
    /// Warm-up tasks.
    pub warmup_tasks: Vec<TaskIds>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// One member of a described group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedMember {
    /// The member id.
    pub member_id: String,
    /// The member's epoch.
    pub member_epoch: i32,
    /// The static membership id, if any.
    pub instance_id: Option<String>,
    /// The rack, if any.
    pub rack_id: Option<String>,
    /// The client id of the member's last heartbeat.
    pub client_id: String,
    /// The client's host, in Java's format (`/127.0.0.1`).
    pub client_host: String,
    /// The topology epoch the member joined with.
    pub topology_epoch: i32,
    /// The member's process id.
    pub process_id: String,
    /// The interactive-query endpoint, if any.
    pub user_endpoint: Option<Endpoint>,
    /// Client tags.
    pub client_tags: Vec<KeyValue>,
    /// The last reported changelog offsets.
    pub task_offsets: Vec<TaskOffset>,
    /// The last reported changelog end offsets.
    pub task_end_offsets: Vec<TaskOffset>,
    /// The tasks the member owns now.
    pub assignment: Assignment,
    /// The tasks the group's target assignment gives it.
    pub target_assignment: Assignment,
    /// Always false: a classic member cannot join a streams group.
    pub is_classic: bool,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// KIP-1331 topology description (v1+). groupcoord never stores one (status 0/1), but the codec
/// decodes and re-encodes it so a response from Apache Kafka round-trips.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopologyDescription {
    /// The struct's wire bytes after its own header, kept opaque.
    pub raw: Vec<u8>,
}

/// One group of a describe response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribedGroup {
    /// 0, or why this group could not be described (e.g. GROUP_ID_NOT_FOUND).
    pub error_code: i16,
    /// Kafka's error message, if any.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: String,
    /// Kafka's state name: Empty, NotReady, Assigning, Reconciling, Stable or Dead.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// The topology, once one was configured.
    pub topology: Option<DescribedTopology>,
    /// The members.
    pub members: Vec<DescribedMember>,
    /// The ACL operations allowed, or `i32::MIN` when not requested.
    pub authorized_operations: i32,
    /// v1+.
    pub topology_description: Option<TopologyDescription>,
    /// v1+: 0 NOT_REQUESTED, 1 NOT_STORED, 2 ERROR, 3 AVAILABLE.
    pub topology_description_status: i8,
    /// v1+ (ignorable).
    pub assignor_name: Option<String>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

impl Default for DescribedGroup {
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: None,
            group_id: String::new(),
            group_state: String::new(),
            group_epoch: 0,
            assignment_epoch: 0,
            topology: None,
            members: Vec::new(),
            authorized_operations: i32::MIN,
            topology_description: None,
            topology_description_status: 0,
            assignor_name: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

/// The coordinator's answer to a [`StreamsGroupDescribeRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamsGroupDescribeResponse {
    /// Always 0: groupcoord does not throttle.
    pub throttle_time_ms: i32,
    /// One entry per requested group.
    pub groups: Vec<DescribedGroup>,
    /// Tagged fields this codec does not know, kept so that re-encoding preserves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}
