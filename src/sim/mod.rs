//! Deterministic simulation of Kafka Streams members against the coordinator. (Being written.)

pub mod api;
pub use api::*;
