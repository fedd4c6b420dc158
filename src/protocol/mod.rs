//! Wire messages of the streams group RPCs (API keys 88 and 89) and their codec.
//!
//! The native server uses the `kafka-protocol` crate for every other key; that crate does not know
//! these two (and its header decoder rejects key 88), so they have their own codec here, pinned to
//! the Kafka 4.4 schemas.

pub mod classic;
pub(crate) mod codec;
pub mod consumer;
mod messages;

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
    /// The member's topology epoch is behind the group's.
    pub const STALE_TOPOLOGY: i8 = 0;
    /// Source topics of the topology do not exist.
    pub const MISSING_SOURCE_TOPICS: i8 = 1;
    /// Co-partitioned topics have different partition counts.
    pub const INCORRECTLY_PARTITIONED_TOPICS: i8 = 2;
    /// Internal topics are missing (the coordinator asks for their creation).
    pub const MISSING_INTERNAL_TOPICS: i8 = 3;
    /// A member asked the application to shut down.
    pub const SHUTDOWN_APPLICATION: i8 = 4;
    /// The assignment is held back (initial rebalance delay or assignment interval).
    pub const ASSIGNMENT_DELAYED: i8 = 5;
    /// The member lacks client tags that rack-aware standby assignment needs (v1+).
    pub const MISSING_CLIENT_TAGS: i8 = 6;
    /// Draft dialect only (docs/draft-dialect.md §D3): the group waits for StreamsGroupInitialize.
    pub const GROUP_INITIALIZING: i8 = 100;
    /// Draft dialect only (docs/draft-dialect.md §D4): the member's topology id is not the group's.
    pub const INCONSISTENT_TOPOLOGY: i8 = 101;

    /// Kafka's name of a status code.
    pub fn name(code: i8) -> &'static str {
        match code {
            STALE_TOPOLOGY => "STALE_TOPOLOGY",
            MISSING_SOURCE_TOPICS => "MISSING_SOURCE_TOPICS",
            INCORRECTLY_PARTITIONED_TOPICS => "INCORRECTLY_PARTITIONED_TOPICS",
            MISSING_INTERNAL_TOPICS => "MISSING_INTERNAL_TOPICS",
            SHUTDOWN_APPLICATION => "SHUTDOWN_APPLICATION",
            ASSIGNMENT_DELAYED => "ASSIGNMENT_DELAYED",
            MISSING_CLIENT_TAGS => "MISSING_CLIENT_TAGS",
            GROUP_INITIALIZING => "GROUP_INITIALIZING",
            INCONSISTENT_TOPOLOGY => "INCONSISTENT_TOPOLOGY",
            _ => "UNKNOWN_STATUS",
        }
    }

    /// The status code of a name, if it is one.
    pub fn from_name(name: &str) -> Option<i8> {
        (0..=6)
            .chain([GROUP_INITIALIZING, INCONSISTENT_TOPOLOGY])
            .find(|c| self::name(*c) == name)
    }
}
