//! Classic consumer groups: JoinGroup / SyncGroup / Heartbeat / LeaveGroup (docs/classic-protocol.md).
//!
//! # Deferred answers (§C3.4)
//!
//! Kafka answers JoinGroup and SyncGroup late: a JoinGroup waits until every member has rejoined
//! (or the rebalance timeout), a follower's SyncGroup waits for the leader's. Another member's
//! request or a timer completes them. The core models this purely:
//!
//! * the caller tags each JoinGroup and SyncGroup with a [`RequestToken`] of its choice (unique
//!   among its requests in flight, e.g. connection id and correlation id);
//! * every answer to a JoinGroup or SyncGroup, immediate or late, is queued in the coordinator's
//!   outbox as a [`Completed`] (token + response), never returned directly;
//! * after *any* operation (a JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DeleteGroups, a fired
//!   timer, ...) the caller drains the outbox with `Coordinator::take_completed` and sends each
//!   answer to the request its token names.
//!
//! A server handler is therefore: call the operation, write `outcome.records` to the log, apply
//! `outcome.timers`, then drain `take_completed()` and answer each token. Answers come out in the
//! order Kafka completes its futures. A token may never be answered: Kafka leaves a JoinGroup
//! unanswered when the same member sends a newer one before the join phase ends (the newer one
//! replaces it), and a member removed while waiting for SyncGroup gets no answer. The server drops
//! such tokens when their connection closes.
//!
//! # Records (§C7)
//!
//! Classic state is mostly soft; Kafka writes a `GroupMetadata` record (type 2) for a new group,
//! when a generation ends Empty, when the leader's assignment arrives and when a static member is
//! replaced without a rebalance, and does not replay them live. groupcoord does the same: the
//! records are in the outcome (for the log) and the group keeps the last value written
//! (`ClassicGroup::persisted`), which is what a replay rebuilds. Tombstones (DeleteGroups) go
//! through replay like every other record.

mod admin;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod fuzz_tests;
pub mod group;
mod ops;
pub(crate) mod subscription;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::protocol::classic::{JoinGroupResponse, SyncGroupResponse};

pub(crate) use group::ClassicGroup;
#[cfg(test)]
pub(crate) use group::ClassicState;

/// The caller's name for one JoinGroup or SyncGroup request in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RequestToken(pub u64);

/// An answer to a deferred request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "api")]
pub enum ClassicReply {
    /// A JoinGroup answer.
    Join(JoinGroupResponse),
    /// A SyncGroup answer.
    Sync(SyncGroupResponse),
}

/// An answer and the request it is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completed {
    /// The request it answers.
    pub token: RequestToken,
    /// The answer.
    pub reply: ClassicReply,
}

/// Coordinator-wide classic state that is not a group: the outbox and the member id sequence.
#[derive(Debug, Clone, Default)]
pub struct ClassicRuntime {
    pub(crate) outbox: Vec<Completed>,
    /// Feeds member id generation (Kafka draws a random UUID; the pure core derives one).
    pub(crate) member_seq: u64,
    /// The id the next member that joins without one gets instead of a derived one
    /// ([`crate::coordinator::Coordinator::supply_member_id`]).
    pub(crate) supplied_member_id: Option<String>,
}
