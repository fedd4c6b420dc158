//! # groupcoord
//!
//! Apache Kafka 4.4's streams group coordinator (KIP-1071) as a pure, deterministic state
//! machine. The core does no I/O, reads no clock and no global RNG: every operation takes `now`
//! and returns a response, the records it wrote and the timer changes. State changes only by
//! replaying records, so a restart is a replay.
//!
//! Main types: [`coordinator::Coordinator`], [`records::Record`], [`protocol`] (wire messages of
//! API keys 88/89), [`assignor::TaskAssignor`], [`topology::configure_topics`].

pub mod assignor;
pub mod config;
pub mod config_keys;
pub mod coordinator;
pub mod error;
pub mod protocol;
pub mod records;
pub mod scenario;
pub mod sim;
pub mod topology;
pub mod types;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

#[cfg(not(target_arch = "wasm32"))]
pub mod server;
