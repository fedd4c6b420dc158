//! The web view: static files, /api/groups, /api/events (SSE), /metrics.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::time::Duration;

use groupcoord::server::{ServeOptions, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn get(addr: std::net::SocketAddr, path: &str) -> String {
    get_as(addr, path, "localhost").await
}

async fn get_as(addr: std::net::SocketAddr, path: &str, host: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_view_with_demo_group() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("groupcoord-http-{}-{nanos}", std::process::id()));
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("index.html"), "<h1>groupcoord</h1>").unwrap();
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.join("data"));
    o.http = Some("127.0.0.1:0".parse().unwrap());
    o.www_dir = www;
    o.demo = true;
    o.owners = common::test_owners();
    o.coordinator.initial_rebalance_delay_ms = 0;
    o.coordinator.heartbeat_interval_ms = 5000;
    let srv = start(o).await.unwrap();
    let http = srv.http_addr.unwrap();
    let index = get(http, "/").await;
    assert!(
        index.starts_with("HTTP/1.1 200") && index.contains("<h1>groupcoord</h1>"),
        "{index}"
    );
    assert!(get(http, "/../etc/passwd").await.starts_with("HTTP/1.1 4"));
    // DNS rebinding: a page on another domain that resolves here is refused.
    let rebound = get_as(http, "/api/groups", "evil.example:8080").await;
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    let ip = get_as(http, "/api/groups", &http.to_string()).await;
    assert!(ip.starts_with("HTTP/1.1 200"), "{ip}");
    assert!(get(http, "/healthz").await.starts_with("HTTP/1.1 200"));
    let ready = get(http, "/readyz").await;
    assert!(
        ready.starts_with("HTTP/1.1 200") && ready.contains("ready"),
        "{ready}"
    );
    assert!(get(http, "/missing.js").await.starts_with("HTTP/1.1 404"));
    // The demo group shows up in the live view.
    let mut found = false;
    for _ in 0..50 {
        let g = get(http, "/api/groups").await;
        if g.contains("\"group_id\":\"demo-app\"") && g.contains("\"member_id\":\"demo-member-2\"")
        {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(found, "demo group with 3 members in /api/groups");
    // The view model is the coordinator's real state: member states are Kafka's member states
    // (never guessed), and once the group is Stable every member is at the assignment epoch.
    let mut stable_view = None;
    for _ in 0..100 {
        let body = get(http, "/api/groups").await;
        let json: serde_json::Value =
            serde_json::from_str(body.split("\r\n\r\n").nth(1).unwrap_or("")).unwrap_or_default();
        let view = json["groups"]
            .as_array()
            .and_then(|gs| gs.iter().find(|g| g["group_id"] == "demo-app"))
            .map(|g| g["view"].clone());
        if let Some(v) = view.filter(|v| {
            v["state"] == "Stable" && v["members"].as_array().is_some_and(|m| m.len() == 3)
        }) {
            stable_view = Some(v);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let view = stable_view.expect("the demo group becomes Stable in the view model");
    for m in view["members"].as_array().unwrap() {
        assert_eq!(m["state"], "STABLE", "{m}");
        assert_eq!(m["member_epoch"], view["assignment_epoch"], "{m}");
        assert!(m["session_deadline_ms"].as_i64().is_some(), "{m}");
        assert!(!m["active"].as_array().unwrap().is_empty(), "{m}");
    }
    assert_eq!(view["tasks"].as_array().unwrap().len(), 6, "{view}");
    // The history: the members' real heartbeats and the records they caused (a fresh server
    // records from its start).
    let body = get(http, "/api/history?group=demo-app").await;
    let page: serde_json::Value =
        serde_json::from_str(body.split("\r\n\r\n").nth(1).unwrap_or("")).unwrap();
    let msgs = page["messages"].as_array().unwrap();
    assert!(
        msgs.iter().any(|m| m["request"]["member_epoch"] == 0),
        "the joins: {page}"
    );
    assert!(
        msgs.iter().all(|m| m["api"] == "StreamsGroupHeartbeat"
            && !m["request_hex"].as_str().unwrap().is_empty())
    );
    let recs = page["records"].as_array().unwrap();
    assert!(
        recs.iter()
            .any(|r| r["record"]["type"] == "TargetAssignmentMetadata"),
        "{page}"
    );
    assert!(
        recs.iter().all(
            |r| r["cause"].as_str().unwrap().starts_with("heartbeat ") || r["cause"] == "timer"
        ),
        "{page}"
    );
    let last = recs.last().unwrap()["seq"].as_u64().unwrap();
    let after = get(
        http,
        &format!("/api/history?group=demo-app&after_rec={last}"),
    )
    .await;
    assert!(
        after.contains("\"records\":[]"),
        "only newer records: {after}"
    );
    assert!(get(http, "/api/history").await.starts_with("HTTP/1.1 400"));
    // SSE: the stream starts with the current snapshot.
    let mut s = TcpStream::connect(http).await.unwrap();
    s.write_all(
        b"GET /api/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
    )
    .await
    .unwrap();
    let mut buf = vec![0u8; 65536];
    let mut got = String::new();
    for _ in 0..20 {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        got.push_str(&String::from_utf8_lossy(&buf[..n]));
        if got.contains("event: groups") && got.contains("demo-app") {
            break;
        }
    }
    assert!(got.contains("text/event-stream"), "{got}");
    assert!(
        got.contains("event: groups") && got.contains("demo-app"),
        "{got}"
    );
    let m = get(http, "/metrics").await;
    for needle in [
        "groupcoord_heartbeats_total",
        "groupcoord_rebalances_total",
        "groupcoord_log_bytes",
        "groupcoord_log_flush_seconds_bucket",
        "groupcoord_groups{type=\"streams\"",
        "groupcoord_members{type=\"streams\"",
    ] {
        assert!(m.contains(needle), "{needle} in {m}");
    }
    srv.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}
