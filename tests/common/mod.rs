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

/// GET `path` from the web view; the body.
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    text.split("\r\n\r\n").nth(1).unwrap_or("").to_string()
}

/// The entry of `group` in the web view's `GET /api/groups`.
pub async fn live_group(addr: std::net::SocketAddr, group: &str) -> serde_json::Value {
    let body = http_get(addr, "/api/groups").await;
    let json: serde_json::Value = serde_json::from_str(&body).expect("json");
    json["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group_id"] == group)
        .unwrap_or_else(|| panic!("{group} in {body}"))
        .clone()
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
