//! The streams group coordinator state machine (spec §2-§4, §6, §8).
//!
//! Public contract (stable; the server and the simulation code against it):
//! * `Coordinator::new(CoordinatorConfig)`
//! * `streams_group_heartbeat(now, &RequestContext, &StreamsGroupHeartbeatRequest) -> Outcome<StreamsGroupHeartbeatResponse>`
//! * `streams_group_describe(&StreamsGroupDescribeRequest, api_version) -> StreamsGroupDescribeResponse`
//! * `list_groups(&ListGroupsFilter) -> Vec<ListedGroup>`
//! * `delete_groups(now, &[String]) -> Outcome<Vec<(String, ErrorCode)>>`
//! * `offset_commit(now, &OffsetCommitInput) -> Outcome<Vec<...>>`, `offset_fetch(...)`
//! * `set_metadata(MetadataImage)`: topic changes (the caller owns the topic registry)
//! * `next_timer() -> Option<(Millis, TimerKey)>`, `fire_timer(now, &TimerKey) -> Outcome<()>`
//! * `replay(&Record) -> Result<(), ReplayError>` and `on_loaded(now) -> Vec<TimerChange>`

use serde::{Deserialize, Serialize};

use crate::records::Record;
use crate::topology::InternalTopic;
use crate::types::Millis;

/// Who sent a request (spec §3.4 step C: client id and host come from the request context).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RequestContext {
    pub client_id: String,
    /// Java format, e.g. `/127.0.0.1`.
    pub client_host: String,
    /// The request's API version (status 6 only for v1+).
    pub api_version: i16,
}

/// A timer, by Kafka's key (spec §3.13).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind")]
#[non_exhaustive]
pub enum TimerKey {
    SessionTimeout { group_id: String, member_id: String },
    RebalanceTimeout { group_id: String, member_id: String },
    InitialRebalance { group_id: String },
}

/// A change to the timer table, returned by every operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op")]
#[non_exhaustive]
pub enum TimerChange {
    Schedule { key: TimerKey, deadline: Millis },
    Cancel { key: TimerKey },
}

/// What an operation produced: the response, the records it wrote (already applied), the timer
/// changes (already applied to the table) and internal topics the caller should create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome<R> {
    pub response: R,
    pub records: Vec<Record>,
    pub timers: Vec<TimerChange>,
    pub topics_to_create: Vec<InternalTopic>,
}
