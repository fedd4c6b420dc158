//! Coordinator records (spec §6): the only way group state changes.
//!
//! Every operation of the coordinator returns the records it wrote; applying them through
//! [`crate::coordinator::Coordinator::replay`] is how the live state changes too, so a restart is
//! a replay. [`encode_record`] encodes them in Kafka's binary layout (key: int16 type + struct v0;
//! value: int16 version + struct), tombstones as a null value.

pub(crate) mod codec;
mod compact;

use crate::util::map::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::assignor::consumer::TopicId;
use crate::topology::StreamsTopology;
use crate::types::{TasksTuple, TasksWithEpochs};

pub use codec::{RecordCodecError, decode_batch, decode_record, encode_batch, encode_record};
pub use compact::{Compaction, compact};

/// Record type numbers (the `apiKey` of the coordinator key schemas).
pub mod record_type {
    /// Committed offset of one partition.
    pub const OFFSET_COMMIT: i16 = 1;
    /// A classic group with its members.
    pub const CLASSIC_GROUP_METADATA: i16 = 2;
    /// A consumer group's epoch and metadata hash (KIP-848).
    pub const CONSUMER_GROUP_METADATA: i16 = 3;
    /// A consumer group's subscribed topic metadata (KIP-848).
    pub const CONSUMER_GROUP_PARTITION_METADATA: i16 = 4;
    /// A consumer group member's metadata.
    pub const CONSUMER_GROUP_MEMBER_METADATA: i16 = 5;
    /// The epoch of a consumer group's target assignment.
    pub const CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: i16 = 6;
    /// One member's partitions in a consumer group's target assignment.
    pub const CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: i16 = 7;
    /// A consumer group member's current assignment.
    pub const CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: i16 = 8;
    /// A regular expression a consumer group subscribes with, and the topics it matched.
    pub const CONSUMER_GROUP_REGULAR_EXPRESSION: i16 = 16;
    /// A streams group's epoch and metadata hash.
    pub const STREAMS_GROUP_METADATA: i16 = 17;
    /// A streams member's metadata.
    pub const STREAMS_GROUP_MEMBER_METADATA: i16 = 19;
    /// The epoch of a streams group's target assignment.
    pub const STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA: i16 = 20;
    /// One member's tasks in the target assignment.
    pub const STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER: i16 = 21;
    /// A member's current assignment and reconciliation state.
    pub const STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT: i16 = 22;
    /// A streams group's topology.
    pub const STREAMS_GROUP_TOPOLOGY: i16 = 23;
}

/// One coordinator record: a key and a value, or a tombstone (`value: None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Record {
    /// Type 17.
    GroupMetadata {
        /// The group.
        group_id: String,
        /// The value; `None` deletes the group.
        value: Option<GroupMetadataValue>,
    },
    /// Type 19.
    MemberMetadata {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The value; `None` removes the member.
        value: Option<MemberMetadataValue>,
    },
    /// Type 20.
    TargetAssignmentMetadata {
        /// The group.
        group_id: String,
        /// The value; `None` with the group's deletion.
        value: Option<TargetAssignmentMetadataValue>,
    },
    /// Type 21.
    TargetAssignmentMember {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The member's target tasks; `None` removes the member from the target.
        value: Option<TasksTuple>,
    },
    /// Type 22.
    CurrentMemberAssignment {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The value; `None` removes the member's assignment.
        value: Option<CurrentMemberAssignmentValue>,
    },
    /// Type 23.
    Topology {
        /// The group.
        group_id: String,
        /// The topology; `None` with the group's deletion.
        value: Option<StreamsTopology>,
    },
    /// Type 2: a classic group (docs/classic-protocol.md §C7), Kafka's `GroupMetadata`.
    ClassicGroupMetadata {
        /// The group.
        group_id: String,
        /// The value; `None` deletes the group.
        value: Option<ClassicGroupMetadataValue>,
    },
    /// Type 3: a consumer group's epoch and metadata hash (docs/consumer-protocol.md §K6).
    ConsumerGroupMetadata {
        /// The group.
        group_id: String,
        /// The value; `None` deletes the group.
        value: Option<ConsumerGroupMetadataValue>,
    },
    /// Type 4: the subscription metadata of Kafka 3.x; 4.4 only writes its tombstone, and reads
    /// (and ignores) an old value.
    ConsumerGroupPartitionMetadata {
        /// The group.
        group_id: String,
        /// The value; `None` deletes it.
        value: Option<ConsumerPartitionMetadataValue>,
    },
    /// Type 5: a consumer group member's subscription.
    ConsumerMemberMetadata {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The value; `None` removes the member.
        value: Option<ConsumerMemberMetadataValue>,
    },
    /// Type 6: the epoch of a consumer group's target assignment (same layout as type 20).
    ConsumerTargetAssignmentMetadata {
        /// The group.
        group_id: String,
        /// The value; `None` with the group's deletion.
        value: Option<TargetAssignmentMetadataValue>,
    },
    /// Type 7: one member's target partitions, in the order Kafka's assignor output lists them.
    ConsumerTargetAssignmentMember {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The member's target partitions by topic id; `None` removes the member from the target.
        value: Option<Vec<(TopicId, Vec<i32>)>>,
    },
    /// Type 8: one member's epochs, state and partitions (with their assignment epochs).
    ConsumerCurrentMemberAssignment {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The value; `None` removes the member's assignment.
        value: Option<ConsumerCurrentAssignmentValue>,
    },
    /// Type 16: a resolved regular expression subscription.
    ConsumerRegularExpression {
        /// The group.
        group_id: String,
        /// The regular expression.
        regex: String,
        /// The value; `None` deletes it.
        value: Option<ConsumerRegexValue>,
    },
    /// Type 1 (committed offsets, spec §8).
    OffsetCommit {
        /// The group.
        group_id: String,
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The committed offset; `None` deletes it.
        value: Option<OffsetCommitValue>,
    },
}

impl Record {
    /// Kafka's record type number (the `record_type` constants).
    pub fn record_type(&self) -> i16 {
        use record_type::*;
        match self {
            Record::GroupMetadata { .. } => STREAMS_GROUP_METADATA,
            Record::MemberMetadata { .. } => STREAMS_GROUP_MEMBER_METADATA,
            Record::TargetAssignmentMetadata { .. } => STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA,
            Record::TargetAssignmentMember { .. } => STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
            Record::CurrentMemberAssignment { .. } => STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT,
            Record::Topology { .. } => STREAMS_GROUP_TOPOLOGY,
            Record::OffsetCommit { .. } => OFFSET_COMMIT,
            Record::ClassicGroupMetadata { .. } => CLASSIC_GROUP_METADATA,
            Record::ConsumerGroupMetadata { .. } => CONSUMER_GROUP_METADATA,
            Record::ConsumerGroupPartitionMetadata { .. } => CONSUMER_GROUP_PARTITION_METADATA,
            Record::ConsumerMemberMetadata { .. } => CONSUMER_GROUP_MEMBER_METADATA,
            Record::ConsumerTargetAssignmentMetadata { .. } => {
                CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA
            }
            Record::ConsumerTargetAssignmentMember { .. } => {
                CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER
            }
            Record::ConsumerCurrentMemberAssignment { .. } => {
                CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT
            }
            Record::ConsumerRegularExpression { .. } => CONSUMER_GROUP_REGULAR_EXPRESSION,
        }
    }

    /// The short record name used in scenario files and the explorer.
    pub fn name(&self) -> &'static str {
        match self {
            Record::GroupMetadata { .. } => "GroupMetadata",
            Record::MemberMetadata { .. } => "MemberMetadata",
            Record::TargetAssignmentMetadata { .. } => "TargetAssignmentMetadata",
            Record::TargetAssignmentMember { .. } => "TargetAssignmentMember",
            Record::CurrentMemberAssignment { .. } => "CurrentMemberAssignment",
            Record::Topology { .. } => "Topology",
            Record::OffsetCommit { .. } => "OffsetCommit",
            Record::ClassicGroupMetadata { .. } => "ClassicGroupMetadata",
            Record::ConsumerGroupMetadata { .. } => "ConsumerGroupMetadata",
            Record::ConsumerGroupPartitionMetadata { .. } => "ConsumerGroupPartitionMetadata",
            Record::ConsumerMemberMetadata { .. } => "ConsumerGroupMemberMetadata",
            Record::ConsumerTargetAssignmentMetadata { .. } => {
                "ConsumerGroupTargetAssignmentMetadata"
            }
            Record::ConsumerTargetAssignmentMember { .. } => "ConsumerGroupTargetAssignmentMember",
            Record::ConsumerCurrentMemberAssignment { .. } => {
                "ConsumerGroupCurrentMemberAssignment"
            }
            Record::ConsumerRegularExpression { .. } => "ConsumerGroupRegularExpression",
        }
    }

    /// The group the record belongs to.
    pub fn group_id(&self) -> &str {
        match self {
            Record::GroupMetadata { group_id, .. }
            | Record::MemberMetadata { group_id, .. }
            | Record::TargetAssignmentMetadata { group_id, .. }
            | Record::TargetAssignmentMember { group_id, .. }
            | Record::CurrentMemberAssignment { group_id, .. }
            | Record::Topology { group_id, .. }
            | Record::OffsetCommit { group_id, .. }
            | Record::ClassicGroupMetadata { group_id, .. }
            | Record::ConsumerGroupMetadata { group_id, .. }
            | Record::ConsumerGroupPartitionMetadata { group_id, .. }
            | Record::ConsumerMemberMetadata { group_id, .. }
            | Record::ConsumerTargetAssignmentMetadata { group_id, .. }
            | Record::ConsumerTargetAssignmentMember { group_id, .. }
            | Record::ConsumerCurrentMemberAssignment { group_id, .. }
            | Record::ConsumerRegularExpression { group_id, .. } => group_id,
        }
    }

    /// Whether the record deletes its key (no value).
    pub fn is_tombstone(&self) -> bool {
        match self {
            Record::GroupMetadata { value, .. } => value.is_none(),
            Record::MemberMetadata { value, .. } => value.is_none(),
            Record::TargetAssignmentMetadata { value, .. } => value.is_none(),
            Record::TargetAssignmentMember { value, .. } => value.is_none(),
            Record::CurrentMemberAssignment { value, .. } => value.is_none(),
            Record::Topology { value, .. } => value.is_none(),
            Record::OffsetCommit { value, .. } => value.is_none(),
            Record::ClassicGroupMetadata { value, .. } => value.is_none(),
            Record::ConsumerGroupMetadata { value, .. } => value.is_none(),
            Record::ConsumerGroupPartitionMetadata { value, .. } => value.is_none(),
            Record::ConsumerMemberMetadata { value, .. } => value.is_none(),
            Record::ConsumerTargetAssignmentMetadata { value, .. } => value.is_none(),
            Record::ConsumerTargetAssignmentMember { value, .. } => value.is_none(),
            Record::ConsumerCurrentMemberAssignment { value, .. } => value.is_none(),
            Record::ConsumerRegularExpression { value, .. } => value.is_none(),
        }
    }

    /// `Name(key fields)` or `Name(key fields) tombstone`: how scenario files name a record.
    pub fn summary(&self) -> String {
        let key = match self {
            Record::MemberMetadata { member_id, .. }
            | Record::TargetAssignmentMember { member_id, .. }
            | Record::CurrentMemberAssignment { member_id, .. }
            | Record::ConsumerMemberMetadata { member_id, .. }
            | Record::ConsumerTargetAssignmentMember { member_id, .. }
            | Record::ConsumerCurrentMemberAssignment { member_id, .. } => member_id.clone(),
            Record::ConsumerRegularExpression { regex, .. } => regex.clone(),
            Record::OffsetCommit {
                topic, partition, ..
            } => format!("{topic}-{partition}"),
            Record::GroupMetadata { .. }
            | Record::TargetAssignmentMetadata { .. }
            | Record::Topology { .. }
            | Record::ClassicGroupMetadata { .. }
            | Record::ConsumerGroupMetadata { .. }
            | Record::ConsumerGroupPartitionMetadata { .. }
            | Record::ConsumerTargetAssignmentMetadata { .. } => String::new(),
        };
        let mut s = if key.is_empty() {
            self.name().to_string()
        } else {
            format!("{}({key})", self.name())
        };
        if self.is_tombstone() {
            s.push_str(" tombstone");
        }
        s
    }
}

/// Value of record 17 `StreamsGroupMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupMetadataValue {
    /// The group epoch.
    pub epoch: i32,
    /// Hash of the subscribed topics' metadata the group last configured with (§3.8).
    pub metadata_hash: i64,
    /// Tagged 0, default -1.
    pub validated_topology_epoch: i32,
    /// Tagged 1, nullable; read as empty when null.
    pub last_assignment_configs: BTreeMap<String, String>,
    /// Tagged 2, default -1 (KIP-1331; groupcoord keeps what it reads).
    pub stored_description_topology_epoch: i32,
    /// Tagged 3, default -1.
    pub failed_description_topology_epoch: i32,
}

impl Default for GroupMetadataValue {
    fn default() -> Self {
        GroupMetadataValue {
            epoch: 0,
            metadata_hash: 0,
            validated_topology_epoch: -1,
            last_assignment_configs: BTreeMap::new(),
            stored_description_topology_epoch: -1,
            failed_description_topology_epoch: -1,
        }
    }
}

/// An IQ endpoint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct UserEndpoint {
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
}

/// Value of record 19 `StreamsGroupMemberMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberMetadataValue {
    /// Static membership id, if any.
    pub instance_id: Option<String>,
    /// Rack, if any.
    pub rack_id: Option<String>,
    /// Client id of the member's last heartbeat.
    pub client_id: String,
    /// Client host, in Java's format (`/127.0.0.1`).
    pub client_host: String,
    /// Rebalance timeout in ms.
    pub rebalance_timeout_ms: i32,
    /// Topology epoch the member joined with.
    pub topology_epoch: i32,
    /// Process id.
    pub process_id: String,
    /// Interactive-query endpoint, if any.
    pub user_endpoint: Option<UserEndpoint>,
    /// Sorted by key.
    pub client_tags: BTreeMap<String, String>,
}

/// Value of record 20 `StreamsGroupTargetAssignmentMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetAssignmentMetadataValue {
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// Tagged 0, default 0 (KIP-1263).
    pub assignment_timestamp: i64,
}

/// Member states as persisted in record 22 (spec §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum MemberState {
    /// Owns exactly its target tasks.
    Stable,
    /// Must still revoke tasks it owns.
    UnrevokedTasks,
    /// Waits for tasks other members must release first.
    UnreleasedTasks,
    /// A value this version does not know.
    Unknown,
}

impl MemberState {
    /// The byte Kafka persists.
    pub fn value(self) -> i8 {
        match self {
            MemberState::Stable => 1,
            MemberState::UnrevokedTasks => 2,
            MemberState::UnreleasedTasks => 3,
            MemberState::Unknown => 127,
        }
    }

    /// Any unrecognised byte reads as `Unknown` (spec §6 replay of 22).
    pub fn from_value(v: i8) -> MemberState {
        match v {
            1 => MemberState::Stable,
            2 => MemberState::UnrevokedTasks,
            3 => MemberState::UnreleasedTasks,
            _ => MemberState::Unknown,
        }
    }

    /// Kafka's name, e.g. `UNREVOKED_TASKS`.
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Stable => "STABLE",
            MemberState::UnrevokedTasks => "UNREVOKED_TASKS",
            MemberState::UnreleasedTasks => "UNRELEASED_TASKS",
            MemberState::Unknown => "UNKNOWN",
        }
    }
}

/// Value of record 22 `StreamsGroupCurrentMemberAssignment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentMemberAssignmentValue {
    /// The member's epoch.
    pub member_epoch: i32,
    /// Its epoch before the last change.
    pub previous_member_epoch: i32,
    /// Its reconciliation state.
    pub state: MemberState,
    /// Tasks it owns, with the epoch each was assigned at.
    pub assigned: TasksWithEpochs,
    /// Tasks it must revoke.
    pub pending_revocation: TasksWithEpochs,
}

/// Value of record 1 `OffsetCommit` (value version 3 layout).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetCommitValue {
    /// The offset.
    pub offset: i64,
    /// The leader epoch the client saw, or -1.
    pub leader_epoch: i32,
    /// The client's metadata string.
    pub metadata: String,
    /// When the commit was made (ms since the epoch).
    pub commit_timestamp: i64,
}

/// Value of record 2 `GroupMetadata` (a classic group), written at version 3 as Kafka does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicGroupMetadataValue {
    /// `""` for a group without members that never had a type.
    pub protocol_type: String,
    /// The generation.
    pub generation: i32,
    /// The chosen protocol (assignor), once there is one.
    pub protocol: Option<String>,
    /// The leader member, once there is one.
    pub leader: Option<String>,
    /// v2+, -1 when absent.
    pub current_state_timestamp: i64,
    /// The members.
    pub members: Vec<ClassicMemberMetadata>,
}

/// One member in [`ClassicGroupMetadataValue`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicMemberMetadata {
    /// The member id.
    pub member_id: String,
    /// v3+.
    pub group_instance_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host, in Java's format.
    pub client_host: String,
    /// v1+, -1 when absent (the session timeout is used then).
    pub rebalance_timeout: i32,
    /// Session timeout in ms.
    pub session_timeout: i32,
    /// The member's metadata for the group's protocol.
    pub subscription: Vec<u8>,
    /// The assignment the leader gave the member.
    pub assignment: Vec<u8>,
}

/// Value of record 3 `ConsumerGroupMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerGroupMetadataValue {
    /// The group epoch.
    pub epoch: i32,
    /// Tagged 0, default 0.
    pub metadata_hash: i64,
}

/// Value of record 4 `ConsumerGroupPartitionMetadata` (read from old logs only).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConsumerPartitionMetadataValue {
    /// The topics.
    pub topics: Vec<ConsumerTopicMetadata>,
}

/// One topic of [`ConsumerPartitionMetadataValue`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerTopicMetadata {
    /// The topic id.
    pub topic_id: TopicId,
    /// The topic name.
    pub name: String,
    /// Its partition count.
    pub num_partitions: i32,
    /// (partition, racks of its replicas).
    pub partition_racks: Vec<(i32, Vec<String>)>,
}

/// `ClassicMemberMetadata` of record 5: a member that joined through JoinGroup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerClassicMemberMetadata {
    /// Session timeout in ms.
    pub session_timeout_ms: i32,
    /// (name, metadata) in the member's preference order.
    pub supported_protocols: Vec<(String, Vec<u8>)>,
}

/// Value of record 5 `ConsumerGroupMemberMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerMemberMetadataValue {
    /// Static membership id, if any.
    pub instance_id: Option<String>,
    /// Rack, if any.
    pub rack_id: Option<String>,
    /// Client id of the member's last heartbeat.
    pub client_id: String,
    /// Client host, in Java's format.
    pub client_host: String,
    /// In the order Kafka writes them (sorted, as its member keeps a sorted copy).
    pub subscribed_topic_names: Vec<String>,
    /// The subscription's regular expression, if any.
    pub subscribed_topic_regex: Option<String>,
    /// Rebalance timeout in ms.
    pub rebalance_timeout_ms: i32,
    /// The server-side assignor the member asked for, if any.
    pub server_assignor: Option<String>,
    /// Tagged 0.
    pub classic_member_metadata: Option<ConsumerClassicMemberMetadata>,
}

/// Consumer member states as persisted in record 8 (Kafka's `modern.MemberState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ConsumerMemberState {
    /// Owns exactly its target partitions.
    Stable,
    /// Must still revoke partitions it owns.
    UnrevokedPartitions,
    /// Waits for partitions other members must release first.
    UnreleasedPartitions,
    /// A value this version does not know.
    Unknown,
}

impl ConsumerMemberState {
    /// The byte of record 8.
    pub fn value(self) -> i8 {
        match self {
            ConsumerMemberState::Stable => 0,
            ConsumerMemberState::UnrevokedPartitions => 1,
            ConsumerMemberState::UnreleasedPartitions => 2,
            ConsumerMemberState::Unknown => 127,
        }
    }

    /// Any unrecognised byte reads as `Unknown`.
    pub fn from_value(v: i8) -> ConsumerMemberState {
        match v {
            0 => ConsumerMemberState::Stable,
            1 => ConsumerMemberState::UnrevokedPartitions,
            2 => ConsumerMemberState::UnreleasedPartitions,
            _ => ConsumerMemberState::Unknown,
        }
    }

    /// Kafka's name.
    pub fn name(self) -> &'static str {
        match self {
            ConsumerMemberState::Stable => "STABLE",
            ConsumerMemberState::UnrevokedPartitions => "UNREVOKED_PARTITIONS",
            ConsumerMemberState::UnreleasedPartitions => "UNRELEASED_PARTITIONS",
            ConsumerMemberState::Unknown => "UNKNOWN",
        }
    }
}

/// Partitions per topic, each with the epoch it was assigned at.
pub type PartitionEpochs = BTreeMap<TopicId, BTreeMap<i32, i32>>;

/// Value of record 8 `ConsumerGroupCurrentMemberAssignment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerCurrentAssignmentValue {
    /// The member's epoch.
    pub member_epoch: i32,
    /// Its epoch before the last change.
    pub previous_member_epoch: i32,
    /// Its reconciliation state.
    pub state: ConsumerMemberState,
    /// Partitions it owns, with the epoch each was assigned at.
    #[serde(with = "partition_epochs_as_pairs")]
    pub assigned: PartitionEpochs,
    /// Partitions it must revoke.
    #[serde(with = "partition_epochs_as_pairs")]
    pub pending_revocation: PartitionEpochs,
}

/// [`PartitionEpochs`] as a list of `[topic id, {partition: epoch}]` pairs: a topic id is not a
/// JSON object key, so the map form cannot be written as JSON (the explorer's record log).
mod partition_epochs_as_pairs {
    use super::PartitionEpochs;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &PartitionEpochs, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PartitionEpochs, D::Error> {
        type Pairs = Vec<(super::TopicId, crate::util::map::BTreeMap<i32, i32>)>;
        Ok(Pairs::deserialize(d)?.into_iter().collect())
    }
}

/// Value of record 16 `ConsumerGroupRegularExpression`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerRegexValue {
    /// Sorted.
    pub topics: Vec<String>,
    /// The version of the topic metadata the regex was resolved against.
    pub version: i64,
    /// When it was resolved (ms since the epoch).
    pub timestamp: i64,
}
