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
