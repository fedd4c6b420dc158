//! Tools around the server: a small Kafka client ([`client`]), the heartbeat load benchmark
//! ([`bench`]) and the `--demo` members ([`demo`]).

pub mod bench;
pub mod client;
pub mod demo;
