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
    /// The protocol (assignor) name, e.g. `range`.
    pub name: String,
    /// The member's subscription for this protocol, opaque to the coordinator.
    pub metadata: Vec<u8>,
}

/// JoinGroup request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JoinGroupRequest {
    /// The group id.
    pub group_id: String,
    /// The session timeout the member asks for.
    pub session_timeout_ms: i32,
    /// -1 (v0, which has no such field) means "the session timeout", as Kafka does for v0.
    pub rebalance_timeout_ms: i32,
    /// `""` for a member that does not know its id yet.
    pub member_id: String,
    /// The static membership id (`group.instance.id`), if any.
    pub group_instance_id: Option<String>,
    /// The protocol type, e.g. `consumer`; all members must agree.
    pub protocol_type: String,
    /// Duplicated names keep their first entry (Kafka's protocol collection is keyed by name).
    pub protocols: Vec<JoinProtocol>,
    /// Why the member (re)joins, for the log (v8+).
    pub reason: Option<String>,
}

/// One member in the leader's JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinGroupResponseMember {
    /// The member id.
    pub member_id: String,
    /// Its static membership id, if any.
    pub group_instance_id: Option<String>,
    /// Its subscription for the chosen protocol.
    pub metadata: Vec<u8>,
}

/// JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinGroupResponse {
    /// 0 (NONE) or Kafka's error code.
    pub error_code: ErrorCode,
    /// -1 on most errors.
    pub generation_id: i32,
    /// `None` = null (v7+); older versions do not have the field.
    pub protocol_type: Option<String>,
    /// `None` = null; before v7 the handler writes `""`.
    pub protocol_name: Option<String>,
    /// The leader's member id.
    pub leader: String,
    /// v9+: the static leader rejoined without a rebalance and must not compute an assignment.
    pub skip_assignment: bool,
    /// The member id (the one the coordinator generated for a new member).
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
    /// The group id.
    pub group_id: String,
    /// The generation the member belongs to.
    pub generation_id: i32,
    /// The member id.
    pub member_id: String,
    /// The static membership id, if any.
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
    /// 0 (NONE) or Kafka's error code.
    pub error_code: ErrorCode,
    /// The group's protocol type (v5+).
    pub protocol_type: Option<String>,
    /// The group's chosen protocol (v5+).
    pub protocol_name: Option<String>,
    /// The member's assignment, as the leader computed it.
    pub assignment: Vec<u8>,
}

impl SyncGroupResponse {
    /// An error answer with no assignment.
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
    /// The group id.
    pub group_id: String,
    /// The generation the member belongs to.
    pub generation_id: i32,
    /// The member id.
    pub member_id: String,
    /// The static membership id, if any.
    pub group_instance_id: Option<String>,
}

/// One member leaving (LeaveGroup v3+ batches them; v0-2 is one member id, no instance id).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeavingMember {
    /// The member id (`""` for a static member that leaves by instance id).
    pub member_id: String,
    /// The static membership id, if any.
    pub group_instance_id: Option<String>,
    /// Why the member leaves, for the log (v5+).
    pub reason: Option<String>,
}

/// LeaveGroup request: one or more members leave.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeaveGroupRequest {
    /// The group id.
    pub group_id: String,
    /// The members leaving.
    pub members: Vec<LeavingMember>,
}

/// One member's result in a LeaveGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftMember {
    /// The member id.
    pub member_id: String,
    /// The static membership id, if any.
    pub group_instance_id: Option<String>,
    /// 0 (NONE) or Kafka's error code.
    pub error_code: ErrorCode,
}

/// LeaveGroup response. Before v3 the handler answers `members[0].error_code` (or the top-level
/// code when it is not NONE) as the single error code, as Kafka's request conversion does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaveGroupResponse {
    /// 0 (NONE) or Kafka's error code.
    pub error_code: ErrorCode,
    /// One result per leaving member (v3+).
    pub members: Vec<LeftMember>,
}

/// One member of a described classic group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribedClassicMember {
    /// The member id.
    pub member_id: String,
    /// The static membership id, if any.
    pub group_instance_id: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client host, in Java's format.
    pub client_host: String,
    /// The member's metadata for the group's protocol (empty unless the group is Stable).
    pub member_metadata: Vec<u8>,
    /// The member's assignment (empty unless the group is Stable).
    pub member_assignment: Vec<u8>,
}

/// One group of a DescribeGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribedClassicGroup {
    /// 0 (NONE) or Kafka's error code.
    pub error_code: ErrorCode,
    /// v6+ only.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: String,
    /// `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Stable` or `Dead`.
    pub group_state: String,
    /// The protocol type, e.g. `consumer` (`""` for a group that never had one).
    pub protocol_type: String,
    /// The protocol name when Stable, else `""`.
    pub protocol_data: String,
    /// The members.
    pub members: Vec<DescribedClassicMember>,
}

/// One partition result of OffsetDelete.
pub type OffsetDeletePartitionResult = (i32, ErrorCode);

/// OffsetDelete response: a group-level error, or per topic the per-partition codes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetDeleteResponse {
    /// 0 (NONE) or Kafka's error code.
    pub error_code: ErrorCode,
    /// Per topic, the per-partition results.
    pub topics: Vec<(String, Vec<OffsetDeletePartitionResult>)>,
}
