//! Wire messages of the streams group RPCs (API keys 88 and 89) and their codec.
//!
//! The native server uses the `kafka-protocol` crate for every other key; that crate does not know
//! these two (and its header decoder rejects key 88), so they have their own codec here, pinned to
//! the Kafka 4.4 schemas.

pub mod classic;
pub mod codec;
pub mod consumer;
pub mod messages;

pub use codec::*;
pub use messages::*;

/// API key of StreamsGroupHeartbeat.
pub const STREAMS_GROUP_HEARTBEAT_KEY: i16 = 88;
/// API key of StreamsGroupDescribe.
pub const STREAMS_GROUP_DESCRIBE_KEY: i16 = 89;
/// Highest version served of both keys.
pub const STREAMS_MAX_VERSION: i16 = 1;

/// `StreamsGroupHeartbeatResponse.Status` codes (spec §1.3).
pub mod status_code {
    pub const STALE_TOPOLOGY: i8 = 0;
    pub const MISSING_SOURCE_TOPICS: i8 = 1;
    pub const INCORRECTLY_PARTITIONED_TOPICS: i8 = 2;
    pub const MISSING_INTERNAL_TOPICS: i8 = 3;
    pub const SHUTDOWN_APPLICATION: i8 = 4;
    pub const ASSIGNMENT_DELAYED: i8 = 5;
    pub const MISSING_CLIENT_TAGS: i8 = 6;

    pub fn name(code: i8) -> &'static str {
        match code {
            STALE_TOPOLOGY => "STALE_TOPOLOGY",
            MISSING_SOURCE_TOPICS => "MISSING_SOURCE_TOPICS",
            INCORRECTLY_PARTITIONED_TOPICS => "INCORRECTLY_PARTITIONED_TOPICS",
            MISSING_INTERNAL_TOPICS => "MISSING_INTERNAL_TOPICS",
            SHUTDOWN_APPLICATION => "SHUTDOWN_APPLICATION",
            ASSIGNMENT_DELAYED => "ASSIGNMENT_DELAYED",
            MISSING_CLIENT_TAGS => "MISSING_CLIENT_TAGS",
            _ => "UNKNOWN_STATUS",
        }
    }

    pub fn from_name(name: &str) -> Option<i8> {
        (0..=6).find(|c| self::name(*c) == name)
    }
}
