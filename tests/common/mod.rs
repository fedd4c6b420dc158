//! Helpers shared by the server integration tests (`mod common;` in each test file).
#![allow(dead_code)]

use groupcoord::protocol::StreamsGroupDescribeResponse;

/// The configured topology is soft state (Kafka rebuilds it at the next heartbeat after a load,
/// describe shows the stored one until then): compare topologies by epoch only.
pub fn normalize(mut d: StreamsGroupDescribeResponse) -> StreamsGroupDescribeResponse {
    for g in &mut d.groups {
        if let Some(t) = &mut g.topology {
            t.subtopologies = None;
        }
    }
    d
}

/// A fresh directory under the system temp dir, unique per process, tag and time.
pub fn temp_dir(tag: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let d = std::env::temp_dir().join(format!("groupcoord-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A Kafka string.
pub fn s(x: &str) -> kafka_protocol::protocol::StrBytes {
    kafka_protocol::protocol::StrBytes::from_string(x.to_string())
}

/// The owner count of the servers the tests start: `GC_TEST_OWNERS` (default 1), so that the
/// server suites run sharded with `GC_TEST_OWNERS=2` (docs/sharding.md).
pub fn test_owners() -> usize {
    std::env::var("GC_TEST_OWNERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}
