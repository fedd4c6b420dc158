//! # groupcoord
//!
//! Apache Kafka 4.4's group coordinator as a pure, deterministic state machine: streams groups
//! (KIP-1071) and classic consumer groups, plus Kafka's server-side consumer assignors. The core
//! does no I/O, reads no clock and no global RNG: every operation takes `now` and returns a
//! response, the records it wrote and the timer changes. State changes only by replaying
//! records, so a restart is a replay.
//!
//! The types most users need are re-exported here:
//!
//! * the core: [`Coordinator`] with its [`RequestContext`] and [`CoordinatorConfig`]; every
//!   operation returns an [`Outcome`] (response, [`Record`]s, [`TimerChange`]s keyed by
//!   [`TimerKey`]); time is [`Millis`], errors are Kafka's [`ErrorCode`]s.
//! * the wire messages of API keys 88/89: [`StreamsGroupHeartbeatRequest`] /
//!   [`StreamsGroupHeartbeatResponse`] and [`StreamsGroupDescribeRequest`] /
//!   [`StreamsGroupDescribeResponse`] (the rest, classic messages included, in [`protocol`]).
//! * storage: [`encode_record`] / [`decode_record`] (Kafka's `__consumer_offsets` format),
//!   [`compact`]; decoders fail with a [`WireError`] that names the field.
//! * topics: [`MetadataImage`] (topic name to partition count) and [`configure_topics`], the
//!   topology check behind a streams heartbeat's status.
//! * assignors: the streams [`TaskAssignor`] trait with [`KafkaStickyAssignor`] (Kafka's
//!   `sticky`) and [`StickyTaskAssignor`] (the rack-aware and warm-up variants); the consumer
//!   [`PartitionAssignor`] trait with [`UniformAssignor`] and [`RangeAssignor`].
//! * testing: the deterministic [`Simulation`] (what the browser explorer runs) and
//!   [`run_scenario`] (the data-driven tests in `tests/scenarios/`).
//! * the native server (not on wasm32): [`start`] with [`ServeOptions`] returns a
//!   [`ServerHandle`]; `server::tools` and `server::storage` hold the CLI's tools.
//!
//! ```
//! use groupcoord::protocol::{Subtopology, Topology};
//! use groupcoord::{
//!     Coordinator, CoordinatorConfig, MetadataImage, Millis, RequestContext,
//!     StreamsGroupHeartbeatRequest,
//! };
//!
//! let mut coordinator = Coordinator::new(CoordinatorConfig::default());
//! let mut topics = MetadataImage::default();
//! topics.topics.insert("input".into(), 3);
//! coordinator.set_metadata(topics);
//!
//! // A Kafka Streams member joins (epoch 0) with its topology.
//! let join = StreamsGroupHeartbeatRequest {
//!     group_id: "app".into(),
//!     member_id: "m1".into(),
//!     member_epoch: 0,
//!     rebalance_timeout_ms: 30_000,
//!     process_id: Some("p1".into()),
//!     topology: Some(Topology {
//!         epoch: 0,
//!         subtopologies: vec![Subtopology {
//!             subtopology_id: "0".into(),
//!             source_topics: vec!["input".into()],
//!             ..Default::default()
//!         }],
//!         ..Default::default()
//!     }),
//!     active_tasks: Some(vec![]),
//!     standby_tasks: Some(vec![]),
//!     warmup_tasks: Some(vec![]),
//!     ..Default::default()
//! };
//! let ctx = RequestContext { client_id: "c".into(), client_host: "/127.0.0.1".into(), api_version: 1 };
//! let out = coordinator.streams_group_heartbeat(Millis(0), &ctx, &join);
//! assert_eq!(out.response.error_code, 0);
//! // New groups start at epoch 1 and the join bumps the group to 2, but the initial rebalance
//! // delay (3 s by default) holds the assignment back: the member stays at assignment epoch 1.
//! assert_eq!(out.response.member_epoch, 1);
//! let (deadline, _timer) = coordinator.next_timer().unwrap();
//! assert_eq!(deadline, Millis(3_000));
//! // The timer fires, but as in Kafka 4.4 the join that created the group configured its
//! // topology on a scratch group that replaying the join's records replaced: nothing to assign
//! // yet (no records, no response).
//! let fired = coordinator.fire_due_timers(Millis(3_000));
//! assert!(fired[0].records.is_empty());
//! // The member's next heartbeat configures the topology again and computes the assignment.
//! let heartbeat = StreamsGroupHeartbeatRequest {
//!     group_id: "app".into(),
//!     member_id: "m1".into(),
//!     member_epoch: 1,
//!     ..Default::default()
//! };
//! let next = coordinator.streams_group_heartbeat(Millis(3_500), &ctx, &heartbeat);
//! assert_eq!(next.response.member_epoch, 2);
//! assert_eq!(next.response.active_tasks.map(|t| t[0].partitions.len()), Some(3));
//!
//! // A restart is a replay of the records written so far.
//! let mut restarted = Coordinator::new(CoordinatorConfig::default());
//! for record in out.records.iter().chain(&next.records) {
//!     restarted.replay(record).unwrap();
//! }
//! assert_eq!(restarted.state_hash(), coordinator.state_hash());
//! ```

// Every public item of the library is documented (the lint covers the library only: test
// files and the binary are not API).
#![deny(missing_docs)]

pub mod assignor;
pub mod config;
pub mod config_keys;
pub mod coordinator;
pub mod error;
pub mod protocol;
pub mod records;
pub mod scenario;
pub mod security_config;
pub mod sim;
pub mod topic;
pub mod topology;
pub mod types;
mod util;
mod wire;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

#[cfg(not(target_arch = "wasm32"))]
pub mod server;

pub use assignor::consumer::{PartitionAssignor, RangeAssignor, UniformAssignor};
pub use assignor::{KafkaStickyAssignor, StickyTaskAssignor, TaskAssignor};
pub use config::CoordinatorConfig;
pub use coordinator::{Coordinator, Outcome, RequestContext, TimerChange, TimerKey};
pub use error::ErrorCode;
pub use protocol::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
};
pub use records::{Record, compact, decode_record, encode_record};
pub use scenario::run_scenario;
pub use sim::Simulation;
pub use topology::{MetadataImage, configure_topics};
pub use types::Millis;
pub use wire::WireError;

#[cfg(not(target_arch = "wasm32"))]
pub use server::{ServeOptions, ServerHandle, start};
