//! Deterministic simulation of Kafka Streams members or classic consumers against the
//! coordinator.
//!
//! [`Simulation`] drives simulated Kafka Streams members (one per stream thread) against a real
//! [`crate::coordinator::Coordinator`] on simulated time, with a seeded network (latency, lost
//! requests and responses) and user-triggered faults ([`Action`]). Every heartbeat goes through
//! the wire codec, every record is logged with its cause, and the safety invariants of
//! `sim/invariants.rs` are checked after every event. Same spec + same actions = same state hash: the
//! explorer's permalinks, step back and time travel rely on it ([`Simulation::replay_to`]).
//!
//! Client model (what a Kafka Streams 4.4 client does, simplified):
//! * join with epoch 0, the topology, empty task lists and the rebalance timeout
//!   (`sim.rebalance.timeout.ms`, default 30 s); heartbeat every `HeartbeatIntervalMs` after the
//!   last response; at most one heartbeat in flight; a heartbeat without a response after
//!   `sim.request.timeout.ms` has failed and is retried after `sim.retry.backoff.ms`;
//! * on a response with task lists, revoke what is not listed and start what is new at once,
//!   then heartbeat right away to report the owned tasks; task lists are sent only when they
//!   changed since last sent (all of them again after a failure);
//! * `FENCED_MEMBER_EPOCH` / `UNKNOWN_MEMBER_ID`: drop every task and rejoin with epoch 0;
//!   `SHUTDOWN_APPLICATION` status: leave with -1 and stop; other fatal errors: stop;
//! * zombie protection: a client without a successful heartbeat for
//!   min(session timeout, rebalance timeout) measured from the send time of its last answered
//!   heartbeat drops its tasks and rejoins (before the coordinator can fence it, so a network
//!   cut never makes two clients run the same active task);
//! * static members resync with a -2 leave before the rejoin (a plain rejoin would get
//!   `UNRELEASED_INSTANCE_ID` until the old incarnation's session times out);
//! * resync: after a lost response, a later successful response without task lists makes the
//!   client drop its tasks and rejoin, since the lost response may have carried tasks that Kafka
//!   does not send again (spec §3.11).

//!
//! Invariants (names as shown in the explorer, see `sim/invariants.rs`):
//! `active-task-single-owner`,
//! `assigned-active-single-owner`, `member-epoch-le-group-epoch`,
//! `assignment-epoch-le-group-epoch`, `epochs-monotonic`, `stable-group-members-own-target`,
//! `standby-not-with-active`, `replay-equals-live`.
//!
//! Random runs for tests and the CLI: [`run_seed`] / [`run_seeds`] (on [`random_scenario`]);
//! explorer presets: [`presets()`].
//!
//! # Classic consumer groups
//!
//! With [`ScenarioSpec::group_type`] = [`GroupType::Classic`] the members are classic consumers
//! (each process's `threads`), configured by [`ScenarioSpec::classic`] ([`ClassicSpec`]:
//! `partition.assignment.strategy`, subscription, session / heartbeat / max-poll intervals);
//! `static_members` gives them `group.instance.id` `<process_id>-<thread>`. They behave as the
//! Java consumer's `ConsumerCoordinator`: JoinGroup v9 (with the MEMBER_ID_REQUIRED round trip),
//! the leader runs the client-side assignor (`crate::assignor::client`) over the members'
//! subscriptions, SyncGroup v5, Heartbeat v4 every `heartbeat.interval.ms`, rejoin on
//! REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID, LeaveGroup v5 on close
//! (dynamic members only, as Kafka). Eager assignors revoke every partition before rejoining;
//! `cooperative-sticky` keeps what it owns and rejoins once more when partitions were revoked.
//! Every message goes through the wire codec as real bytes.
//!
//! The explorer contract for classic groups (stable; see `src/wasm/types.d.ts`):
//! * spec: [`ScenarioSpec::group_type`], [`ScenarioSpec::classic`]; action
//!   [`Action::StallMember`] (classic only);
//! * presets `classic-eager-range`, `classic-cooperative-sticky`, `classic-static-membership`;
//! * view: [`GroupView::group_type`] and [`GroupView::classic`] ([`ClassicGroupView`]: state,
//!   generation, protocol, leader, partitions, partitions owned by nobody now),
//!   [`MemberView::classic`] ([`ClassicMemberView`]: client state `unjoined` / `joining` /
//!   `awaiting_sync` / `stable` / `revoking` / `stopped`, generation, leader flag, owned and
//!   revoked partitions, protocol, selected assignor);
//! * [`Simulation::ownership_history`] ([`OwnershipSample`]): partitions owned by nobody over
//!   time, the stop-the-world chart; [`MessageLogEntry::api`] names each message's API.
//!
//! Classic invariants: `classic-partition-single-owner` (after a SyncGroup no partition is owned
//! by two consumers of the same generation), `classic-generation-monotonic` (per member and
//! group), and `replay-equals-live` as for streams.

//! # KIP-848 consumer groups
//!
//! With [`ScenarioSpec::group_type`] = [`GroupType::Consumer`] the members are KIP-848
//! consumers (`sim/consumer_client.rs`, the engine side in `sim/engine/consumer.rs`): a
//! ConsumerGroupHeartbeat v1 loop as the Java `AsyncKafkaConsumer` runs it — join with epoch 0
//! and the subscription (`classic.subscription`) and rebalance timeout
//! (`classic.max_poll_interval_ms`), heartbeat at the interval the response gives, reconcile an
//! assignment by revoking first, then assigning, then acknowledging at once; fenced / unknown
//! member → lose everything and rejoin; leave with -1 (static members -2); a stalled poll loop
//! delays the reconciliation and, past `max.poll.interval.ms`, leaves and later rejoins. The
//! server-side assignor is the broker's `group.consumer.assignors` (preset `consumer-uniform`).
//! Requests are logged as JSON (no wire bytes yet). Invariants:
//! `consumer-partition-single-owner` (no partition consumed by two running consumers at the
//! same member epoch), `consumer-assigned-single-owner` (coordinator side),
//! `consumer-epochs`, and `replay-equals-live`. [`Simulation::ownership_history`] covers every
//! group type (streams: active tasks) and counts partitions moved.

mod api;
#[cfg(test)]
mod break_tests;
mod classic_client;
#[cfg(test)]
mod classic_tests;
mod classic_view;
mod client;
mod config;
mod consumer_client;
mod consumer_snapshot;
#[cfg(test)]
mod consumer_tests;
mod coordinator_view;
#[cfg(test)]
mod draft_tests;
mod engine;
#[cfg(any(target_arch = "wasm32", test))]
pub(crate) mod input;
mod invariants;
mod presets;
mod random;
mod snapshot;
mod view;
mod wire;

pub use api::*;
pub use classic_view::classic_group_view;
pub use config::SimKnobs;
pub use consumer_snapshot::consumer_group_view;
pub use coordinator_view::coordinator_group_view;
pub use engine::{MESSAGE_LOG_CAPACITY, Simulation};
pub use presets::presets;
pub use random::{
    SeedFailure, SeedReport, random_classic_scenario, random_consumer_scenario, random_scenario,
    repro_classic_command, repro_command, repro_consumer_command, run_classic_seed,
    run_consumer_seed, run_seed, run_seeds, run_seeds_with,
};

/// Why a simulation could not be built or an action not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum SimError {
    /// A broker config of the scenario is unknown or out of bounds.
    #[error("config {key}={value}: {reason}")]
    Config {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// The scenario cannot be simulated (e.g. a bad latency range, a duplicate process).
    #[error("invalid scenario: {0}")]
    InvalidSpec(String),
    /// An action names a member the simulation does not have.
    #[error("unknown member {0}")]
    UnknownMember(String),
    /// An action names a process the simulation does not have.
    #[error("unknown process {0}")]
    UnknownProcess(String),
    /// An action that cannot apply now (e.g. to a member that is not running).
    #[error("invalid action: {0}")]
    InvalidAction(String),
    /// Rebuilding the coordinator from its records failed.
    #[error("coordinator replay failed: {0}")]
    Replay(String),
}
