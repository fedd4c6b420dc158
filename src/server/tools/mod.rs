//! Tools around the server: a small Kafka client ([`client`]), the heartbeat load benchmark
//! ([`bench`](mod@bench)), the adversarial benchmark ([`bench_hostile`]) and the `--demo` members (`demo`).

pub mod bench;
pub mod bench_hostile;
pub mod bench_replay;
mod ceiling;
pub mod client;
pub(crate) mod demo;
mod load_driver;
