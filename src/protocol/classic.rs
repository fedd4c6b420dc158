//! The classic group RPCs as the pure core sees them: JoinGroup (11), Heartbeat (12), LeaveGroup
//! (13), SyncGroup (14), DescribeGroups (15), ListGroups (16) and OffsetDelete (47).
//!
//! These are version-free: the server handler decodes any wire version with the `kafka-protocol`
//! crate and fills these structs (the request's version goes in `RequestContext::api_version`),
//! then encodes the answer at the request's version. Fields the wire cannot carry at a version
//! (a null protocol name before JoinGroup v7, per-member LeaveGroup results before v3) are the
//! handler's to map; the notes on each field say how.
//!
//! Byte payloads (subscriptions, assignments) are opaque to the coordinator, as in Kafka.

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;

/// One protocol a member supports (`JoinGroupRequestProtocol`), in the member's preference order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinProtocol {
    pub name: String,
    pub metadata: Vec<u8>,
}

/// JoinGroup request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JoinGroupRequest {
    pub group_id: String,
    pub session_timeout_ms: i32,
    /// -1 (v0, which has no such field) means "the session timeout", as Kafka does for v0.
    pub rebalance_timeout_ms: i32,
    /// `""` for a member that does not know its id yet.
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub protocol_type: String,
    /// Duplicated names keep their first entry (Kafka's protocol collection is keyed by name).
    pub protocols: Vec<JoinProtocol>,
    pub reason: Option<String>,
}

/// One member in the leader's JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinGroupResponseMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub metadata: Vec<u8>,
}

/// JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinGroupResponse {
    pub error_code: ErrorCode,
    /// -1 on most errors.
    pub generation_id: i32,
    /// `None` = null (v7+); older versions do not have the field.
    pub protocol_type: Option<String>,
    /// `None` = null; before v7 the handler writes `""`.
    pub protocol_name: Option<String>,
    pub leader: String,
    /// v9+: the static leader rejoined without a rebalance and must not compute an assignment.
    pub skip_assignment: bool,
    pub member_id: String,
    /// The members and their metadata: only in the leader's response.
    pub members: Vec<JoinGroupResponseMember>,
}

impl JoinGroupResponse {
    /// An error answer, shaped as Kafka's `new JoinGroupResponseData().setMemberId(..)
    /// .setErrorCode(..)`: generation -1, null protocol type, empty protocol name and leader.
    pub fn error(member_id: &str, code: ErrorCode) -> JoinGroupResponse {
        JoinGroupResponse {
            error_code: code,
            generation_id: -1,
            protocol_type: None,
            protocol_name: Some(String::new()),
            leader: String::new(),
            skip_assignment: false,
            member_id: member_id.to_string(),
            members: Vec::new(),
        }
    }
}

/// SyncGroup request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SyncGroupRequest {
    pub group_id: String,
    pub generation_id: i32,
    pub member_id: String,
    pub group_instance_id: Option<String>,
    /// v5+; `None` (null or older versions) skips the check.
    pub protocol_type: Option<String>,
    /// v5+; `None` skips the check.
    pub protocol_name: Option<String>,
    /// The leader's assignment: (member id, assignment bytes). Followers send none.
    pub assignments: Vec<(String, Vec<u8>)>,
}

/// SyncGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncGroupResponse {
    pub error_code: ErrorCode,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub assignment: Vec<u8>,
}

impl SyncGroupResponse {
    pub fn error(code: ErrorCode) -> SyncGroupResponse {
        SyncGroupResponse {
            error_code: code,
            protocol_type: None,
            protocol_name: None,
            assignment: Vec::new(),
        }
    }
}

/// Heartbeat request (the response is only an error code).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HeartbeatRequest {
    pub group_id: String,
    pub generation_id: i32,
    pub member_id: String,
    pub group_instance_id: Option<String>,
}

/// One member leaving (LeaveGroup v3+ batches them; v0-2 is one member id, no instance id).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeavingMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeaveGroupRequest {
    pub group_id: String,
    pub members: Vec<LeavingMember>,
}

/// One member's result in a LeaveGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub error_code: ErrorCode,
}

/// LeaveGroup response. Before v3 the handler answers `members[0].error_code` (or the top-level
/// code when it is not NONE) as the single error code, as Kafka's request conversion does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaveGroupResponse {
    pub error_code: ErrorCode,
    pub members: Vec<LeftMember>,
}

/// One member of a described classic group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribedClassicMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    /// The member's metadata for the group's protocol (empty unless the group is Stable).
    pub member_metadata: Vec<u8>,
    /// The member's assignment (empty unless the group is Stable).
    pub member_assignment: Vec<u8>,
}

/// One group of a DescribeGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribedClassicGroup {
    pub error_code: ErrorCode,
    /// v6+ only.
    pub error_message: Option<String>,
    pub group_id: String,
    /// `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Stable` or `Dead`.
    pub group_state: String,
    pub protocol_type: String,
    /// The protocol name when Stable, else `""`.
    pub protocol_data: String,
    pub members: Vec<DescribedClassicMember>,
}

/// One partition result of OffsetDelete.
pub type OffsetDeletePartitionResult = (i32, ErrorCode);

/// OffsetDelete response: a group-level error, or per topic the per-partition codes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetDeleteResponse {
    pub error_code: ErrorCode,
    pub topics: Vec<(String, Vec<OffsetDeletePartitionResult>)>,
}
