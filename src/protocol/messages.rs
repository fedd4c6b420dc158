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

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicInfo {
    pub name: String,
    /// 0 = not enforced (always 0 for changelogs).
    pub partitions: i32,
    /// 0 = broker default.
    pub replication_factor: i16,
    pub topic_configs: Vec<KeyValue>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TaskOffset {
    pub subtopology_id: String,
    pub partition: i32,
    pub offset: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TaskIds {
    pub subtopology_id: String,
    pub partitions: Vec<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

// ---------------------------------------------------------------------------------------------
// StreamsGroupHeartbeat (API key 88, v0-1), spec §1.1 / §1.2
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CopartitionGroup {
    pub source_topics: Vec<i16>,
    pub source_topic_regex: Vec<i16>,
    pub repartition_source_topics: Vec<i16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Subtopology {
    pub subtopology_id: String,
    pub source_topics: Vec<String>,
    pub source_topic_regex: Vec<String>,
    pub state_changelog_topics: Vec<TopicInfo>,
    pub repartition_sink_topics: Vec<String>,
    pub repartition_source_topics: Vec<TopicInfo>,
    pub copartition_groups: Vec<CopartitionGroup>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Topology {
    pub epoch: i32,
    pub subtopologies: Vec<Subtopology>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamsGroupHeartbeatRequest {
    pub group_id: String,
    pub member_id: String,
    pub member_epoch: i32,
    pub endpoint_information_epoch: i32,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    /// -1 = unchanged.
    pub rebalance_timeout_ms: i32,
    pub topology: Option<Topology>,
    pub active_tasks: Option<Vec<TaskIds>>,
    pub standby_tasks: Option<Vec<TaskIds>>,
    pub warmup_tasks: Option<Vec<TaskIds>>,
    pub process_id: Option<String>,
    pub user_endpoint: Option<Endpoint>,
    pub client_tags: Option<Vec<KeyValue>>,
    pub task_offsets: Option<Vec<TaskOffset>>,
    pub task_end_offsets: Option<Vec<TaskOffset>>,
    pub shutdown_application: bool,
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

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Status {
    pub status_code: i8,
    pub status_detail: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicPartition {
    pub topic: String,
    pub partitions: Vec<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EndpointToPartitions {
    pub user_endpoint: Endpoint,
    pub active_partitions: Vec<TopicPartition>,
    pub standby_partitions: Vec<TopicPartition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamsGroupHeartbeatResponse {
    pub throttle_time_ms: i32,
    pub error_code: i16,
    pub error_message: Option<String>,
    pub member_id: String,
    pub member_epoch: i32,
    pub heartbeat_interval_ms: i32,
    /// v0 only; never set by Kafka 4.4 (stays 0).
    pub acceptable_recovery_lag_legacy: i32,
    pub task_offset_interval_ms: i32,
    /// v1+ (ignorable); -1 = not supported.
    pub acceptable_recovery_lag: i64,
    pub status: Option<Vec<Status>>,
    pub active_tasks: Option<Vec<TaskIds>>,
    pub standby_tasks: Option<Vec<TaskIds>>,
    pub warmup_tasks: Option<Vec<TaskIds>>,
    /// v1+.
    pub topology_description_required: bool,
    pub endpoint_information_epoch: i32,
    pub partitions_by_user_endpoint: Option<Vec<EndpointToPartitions>>,
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

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamsGroupDescribeRequest {
    pub group_ids: Vec<String>,
    pub include_authorized_operations: bool,
    /// v1+.
    pub include_topology_description: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedSubtopology {
    pub subtopology_id: String,
    pub source_topics: Vec<String>,
    pub repartition_sink_topics: Vec<String>,
    pub state_changelog_topics: Vec<TopicInfo>,
    pub repartition_source_topics: Vec<TopicInfo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedTopology {
    pub epoch: i32,
    pub subtopologies: Option<Vec<DescribedSubtopology>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Assignment {
    pub active_tasks: Vec<TaskIds>,
    pub standby_tasks: Vec<TaskIds>,
    pub warmup_tasks: Vec<TaskIds>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedMember {
    pub member_id: String,
    pub member_epoch: i32,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub topology_epoch: i32,
    pub process_id: String,
    pub user_endpoint: Option<Endpoint>,
    pub client_tags: Vec<KeyValue>,
    pub task_offsets: Vec<TaskOffset>,
    pub task_end_offsets: Vec<TaskOffset>,
    pub assignment: Assignment,
    pub target_assignment: Assignment,
    pub is_classic: bool,
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribedGroup {
    pub error_code: i16,
    pub error_message: Option<String>,
    pub group_id: String,
    pub group_state: String,
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    pub topology: Option<DescribedTopology>,
    pub members: Vec<DescribedMember>,
    pub authorized_operations: i32,
    /// v1+.
    pub topology_description: Option<TopologyDescription>,
    /// v1+: 0 NOT_REQUESTED, 1 NOT_STORED, 2 ERROR, 3 AVAILABLE.
    pub topology_description_status: i8,
    /// v1+ (ignorable).
    pub assignor_name: Option<String>,
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

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StreamsGroupDescribeResponse {
    pub throttle_time_ms: i32,
    pub groups: Vec<DescribedGroup>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: UnknownTaggedFields,
}
