//! Kafka error codes groupcoord answers with (spec §1.6), the coordinator's and the server's
//! alike: each is defined here once. And the error type that carries them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A Kafka protocol error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i16);

impl ErrorCode {
    /// No error.
    pub const NONE: ErrorCode = ErrorCode(0);
    /// An unexpected failure; also an operation whose records could not be stored or replayed.
    pub const UNKNOWN_SERVER_ERROR: ErrorCode = ErrorCode(-1);
    /// A fetch offset outside the partition's log.
    pub const OFFSET_OUT_OF_RANGE: ErrorCode = ErrorCode(1);
    /// A record batch that fails its checks.
    pub const CORRUPT_MESSAGE: ErrorCode = ErrorCode(2);
    /// The partition has no leader right now (e.g. a topic still being created).
    pub const LEADER_NOT_AVAILABLE: ErrorCode = ErrorCode(5);
    /// The topic or partition does not exist.
    pub const UNKNOWN_TOPIC_OR_PARTITION: ErrorCode = ErrorCode(3);
    /// Commit metadata longer than `offset.metadata.max.bytes`.
    pub const OFFSET_METADATA_TOO_LARGE: ErrorCode = ErrorCode(12);
    /// The coordinator is still loading its log.
    pub const COORDINATOR_LOAD_IN_PROGRESS: ErrorCode = ErrorCode(14);
    /// No coordinator is available for the group.
    pub const COORDINATOR_NOT_AVAILABLE: ErrorCode = ErrorCode(15);
    /// This broker is not the group's coordinator.
    pub const NOT_COORDINATOR: ErrorCode = ErrorCode(16);
    /// An invalid topic name, or an internal topic where clients may not write.
    pub const INVALID_TOPIC_EXCEPTION: ErrorCode = ErrorCode(17);
    /// A classic member's generation is not the group's.
    pub const ILLEGAL_GENERATION: ErrorCode = ErrorCode(22);
    /// The member's protocol type or protocols do not match the group's.
    pub const INCONSISTENT_GROUP_PROTOCOL: ErrorCode = ErrorCode(23);
    /// The group id is empty or invalid.
    pub const INVALID_GROUP_ID: ErrorCode = ErrorCode(24);
    /// The member is not (or no longer) in the group.
    pub const UNKNOWN_MEMBER_ID: ErrorCode = ErrorCode(25);
    /// The session timeout is outside the broker's allowed range.
    pub const INVALID_SESSION_TIMEOUT: ErrorCode = ErrorCode(26);
    /// The classic group is rebalancing: the member must rejoin.
    pub const REBALANCE_IN_PROGRESS: ErrorCode = ErrorCode(27);
    /// Produce `acks` other than -1, 0 or 1.
    pub const INVALID_REQUIRED_ACKS: ErrorCode = ErrorCode(21);
    /// Not authorized for the topic.
    pub const TOPIC_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(29);
    /// Not authorized for the group.
    pub const GROUP_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(30);
    /// Not authorized for the cluster.
    pub const CLUSTER_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(31);
    /// The API version is not served.
    pub const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(35);
    /// The topic already exists.
    pub const TOPIC_ALREADY_EXISTS: ErrorCode = ErrorCode(36);
    /// An invalid partition count.
    pub const INVALID_PARTITIONS: ErrorCode = ErrorCode(37);
    /// An invalid replication factor.
    pub const INVALID_REPLICATION_FACTOR: ErrorCode = ErrorCode(38);
    /// A malformed or inconsistent request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(42);
    /// An invalid configuration value.
    pub const INVALID_CONFIG: ErrorCode = ErrorCode(40);
    /// A record format this broker does not handle.
    pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: ErrorCode = ErrorCode(43);
    /// The request breaks a broker policy.
    pub const POLICY_VIOLATION: ErrorCode = ErrorCode(44);
    /// An idempotent producer's sequence number has a gap.
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: ErrorCode = ErrorCode(45);
    /// Not authorized for the transactional id.
    pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: ErrorCode = ErrorCode(53);
    /// The request needs security features (an authorizer) that are not enabled.
    pub const SECURITY_DISABLED: ErrorCode = ErrorCode(54);
    /// The group does not exist.
    pub const GROUP_ID_NOT_FOUND: ErrorCode = ErrorCode(69);
    /// The group still has members.
    pub const NON_EMPTY_GROUP: ErrorCode = ErrorCode(68);
    /// A new classic member must rejoin with the member id the coordinator gave it.
    pub const MEMBER_ID_REQUIRED: ErrorCode = ErrorCode(79);
    /// The group already has `group.max.size` members.
    pub const GROUP_MAX_SIZE_REACHED: ErrorCode = ErrorCode(81);
    /// Another member now holds the static instance id.
    pub const FENCED_INSTANCE_ID: ErrorCode = ErrorCode(82);
    /// The group still consumes the topic, so its offsets cannot be deleted.
    pub const GROUP_SUBSCRIBED_TO_TOPIC: ErrorCode = ErrorCode(86);
    /// The topic id does not exist.
    pub const UNKNOWN_TOPIC_ID: ErrorCode = ErrorCode(100);
    /// The member's epoch is not current: it must rejoin with epoch 0.
    pub const FENCED_MEMBER_EPOCH: ErrorCode = ErrorCode(110);
    /// The static instance id is still held by another member.
    pub const UNRELEASED_INSTANCE_ID: ErrorCode = ErrorCode(111);
    /// The member names an assignor the group does not support.
    pub const UNSUPPORTED_ASSIGNOR: ErrorCode = ErrorCode(112);
    /// An offset commit's member epoch does not match the member's.
    pub const STALE_MEMBER_EPOCH: ErrorCode = ErrorCode(113);
    /// A subscription regular expression that does not compile.
    pub const INVALID_REGULAR_EXPRESSION: ErrorCode = ErrorCode(128);
    /// The streams topology is invalid.
    pub const STREAMS_INVALID_TOPOLOGY: ErrorCode = ErrorCode(130);
    /// The topology epoch a member sent is invalid.
    pub const STREAMS_INVALID_TOPOLOGY_EPOCH: ErrorCode = ErrorCode(131);
    /// The topology epoch a member sent is outdated.
    pub const STREAMS_TOPOLOGY_FENCED: ErrorCode = ErrorCode(132);

    /// Kafka's constant name, for logs, scenario files and the explorer.
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "NONE",
            -1 => "UNKNOWN_SERVER_ERROR",
            1 => "OFFSET_OUT_OF_RANGE",
            2 => "CORRUPT_MESSAGE",
            3 => "UNKNOWN_TOPIC_OR_PARTITION",
            12 => "OFFSET_METADATA_TOO_LARGE",
            14 => "COORDINATOR_LOAD_IN_PROGRESS",
            15 => "COORDINATOR_NOT_AVAILABLE",
            16 => "NOT_COORDINATOR",
            17 => "INVALID_TOPIC_EXCEPTION",
            21 => "INVALID_REQUIRED_ACKS",
            22 => "ILLEGAL_GENERATION",
            23 => "INCONSISTENT_GROUP_PROTOCOL",
            24 => "INVALID_GROUP_ID",
            25 => "UNKNOWN_MEMBER_ID",
            26 => "INVALID_SESSION_TIMEOUT",
            27 => "REBALANCE_IN_PROGRESS",
            29 => "TOPIC_AUTHORIZATION_FAILED",
            30 => "GROUP_AUTHORIZATION_FAILED",
            31 => "CLUSTER_AUTHORIZATION_FAILED",
            35 => "UNSUPPORTED_VERSION",
            36 => "TOPIC_ALREADY_EXISTS",
            37 => "INVALID_PARTITIONS",
            38 => "INVALID_REPLICATION_FACTOR",
            40 => "INVALID_CONFIG",
            42 => "INVALID_REQUEST",
            43 => "UNSUPPORTED_FOR_MESSAGE_FORMAT",
            44 => "POLICY_VIOLATION",
            45 => "OUT_OF_ORDER_SEQUENCE_NUMBER",
            53 => "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
            68 => "NON_EMPTY_GROUP",
            69 => "GROUP_ID_NOT_FOUND",
            79 => "MEMBER_ID_REQUIRED",
            81 => "GROUP_MAX_SIZE_REACHED",
            82 => "FENCED_INSTANCE_ID",
            86 => "GROUP_SUBSCRIBED_TO_TOPIC",
            100 => "UNKNOWN_TOPIC_ID",
            110 => "FENCED_MEMBER_EPOCH",
            111 => "UNRELEASED_INSTANCE_ID",
            112 => "UNSUPPORTED_ASSIGNOR",
            113 => "STALE_MEMBER_EPOCH",
            128 => "INVALID_REGULAR_EXPRESSION",
            130 => "STREAMS_INVALID_TOPOLOGY",
            131 => "STREAMS_INVALID_TOPOLOGY_EPOCH",
            132 => "STREAMS_TOPOLOGY_FENCED",
            _ => "UNKNOWN_ERROR_CODE",
        }
    }

    /// The code for a constant name (scenario files use names).
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        (-1..=140).map(ErrorCode).find(|c| c.name() == name)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

/// An error answered to a request: a Kafka code and the message Kafka would send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {}", message.as_deref().unwrap_or(""))]
pub struct ApiError {
    /// The Kafka error code.
    pub code: ErrorCode,
    /// The message Kafka would send with it, if any.
    pub message: Option<String>,
}

impl ApiError {
    /// An error with a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: Some(message.into()),
        }
    }

    /// `INVALID_REQUEST` with a message.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `UNKNOWN_SERVER_ERROR` carries no message on the wire (spec §1.6).
    pub fn unknown_server_error() -> Self {
        ApiError {
            code: ErrorCode::UNKNOWN_SERVER_ERROR,
            message: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn every_named_code_round_trips_through_its_name() {
        let named: Vec<ErrorCode> = (-1..=140)
            .map(ErrorCode)
            .filter(|c| c.name() != "UNKNOWN_ERROR_CODE")
            .collect();
        for code in &named {
            assert_eq!(ErrorCode::from_name(code.name()), Some(*code), "{code}");
        }
        // The codes the data plane answers with are among them.
        for code in [
            ErrorCode::OFFSET_OUT_OF_RANGE,
            ErrorCode::INVALID_REQUIRED_ACKS,
            ErrorCode::UNSUPPORTED_FOR_MESSAGE_FORMAT,
            ErrorCode::POLICY_VIOLATION,
            ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER,
            ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ] {
            assert!(named.contains(&code), "{code}");
        }
    }
}
