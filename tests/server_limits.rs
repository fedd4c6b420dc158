//! Limits against a running server: request memory (nothing is allocated from a peer's declared
//! length; `queued.max.request.bytes`), connection limits (`max.connections.per.ip`), the live
//! view computed only when watched, and a dead owner thread stopping the server.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{s, temp_dir};

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use groupcoord::protocol::{StreamsGroupHeartbeatRequest, Subtopology, Topology};
use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, ServerError, ServerHandle, start};
use kafka_protocol::messages::{ApiVersionsRequest, ListGroupsRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The system allocator, remembering the largest single allocation.
struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Relaxed);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Relaxed);
        unsafe { System.realloc(p, l, new_size) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

fn options(tag: &str) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), temp_dir(tag));
    o.owners = common::test_owners();
    o.topics = vec![("input".into(), 4)];
    o.coordinator.initial_rebalance_delay_ms = 0;
    o.coordinator.assignment_interval_ms = 0;
    o
}

async fn api_versions_ok(addr: std::net::SocketAddr) -> bool {
    let Ok(mut c) = Client::connect(addr).await else {
        return false;
    };
    let req = ApiVersionsRequest::default();
    let call = c.call(3, &req);
    matches!(
        tokio::time::timeout(Duration::from_secs(5), call).await,
        Ok(Ok(r)) if r.error_code == 0
    )
}

/// Every request byte is given back once the connections closed.
async fn released(srv: &ServerHandle) {
    for _ in 0..100 {
        if srv.request_bytes_in_use() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{} request bytes still held 5 s after close",
        srv.request_bytes_in_use()
    );
}

/// A frame header claiming this many bytes, then a few bytes of body.
fn claim(len: i32) -> Vec<u8> {
    let mut f = len.to_be_bytes().to_vec();
    f.extend_from_slice(&[0, 18, 0, 3, 0, 0, 0, 1]);
    f
}

/// Issue 11 item 2: 12 bytes claiming a 100 MiB body cost a few KiB, not 100 MiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_body_is_not_allocated_before_it_arrives() {
    let srv = start(options("limits-claim")).await.unwrap();
    LARGEST.store(0, Relaxed);
    let mut held = Vec::new();
    for _ in 0..20 {
        let mut c = TcpStream::connect(srv.addr).await.unwrap();
        c.write_all(&claim(100 << 20)).await.unwrap();
        held.push(c);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Other tests of this binary run meanwhile (a panic's backtrace takes a few MiB): the bound
    // is far below what one claim would have cost.
    let largest = LARGEST.load(Relaxed);
    assert!(
        largest < 32 << 20,
        "largest allocation {largest} bytes after 20 claims of 100 MiB"
    );
    assert!(
        srv.request_bytes_in_use() < 2 << 20,
        "{} request bytes held",
        srv.request_bytes_in_use()
    );
    // A well-behaved client is served meanwhile.
    assert!(api_versions_ok(srv.addr).await);
    drop(held);
    released(&srv).await;
    srv.shutdown().await;
}

/// Issue 11 item 2: bodies that do arrive are bounded by `queued.max.request.bytes`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bytes_stay_within_queued_max_request_bytes() {
    let mut o = options("limits-queued");
    o.server.socket_request_max_bytes = 1 << 20;
    o.server.queued_max_request_bytes = 2 << 20;
    let srv = start(o).await.unwrap();
    let mut held = Vec::new();
    for _ in 0..8 {
        let mut c = TcpStream::connect(srv.addr).await.unwrap();
        c.write_all(&claim(1 << 20)).await.unwrap();
        // Not awaited to completion: the server stops reading when the budget is spent.
        let body = vec![0u8; 600 << 10];
        let w = tokio::spawn(async move {
            let _ = c.write_all(&body).await;
            c
        });
        held.push(w);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let in_use = srv.request_bytes_in_use();
    assert!(in_use > 1 << 20, "bodies were read: {in_use}");
    assert!(in_use <= 2 << 20, "{in_use} bytes held, budget 2 MiB");
    for w in held {
        w.abort();
    }
    released(&srv).await;
    srv.shutdown().await;
}

/// Issue 11 item 4: `max.connections.per.ip`; a slot is given back when a connection closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_per_ip_are_limited() {
    let mut o = options("limits-per-ip");
    o.server.max_connections_per_ip = 2;
    let srv = start(o).await.unwrap();
    let a = Client::connect(srv.addr).await.unwrap();
    let _b = Client::connect(srv.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The third is accepted and closed at once.
    let mut third = TcpStream::connect(srv.addr).await.unwrap();
    let mut buf = [0u8; 1];
    let n = tokio::time::timeout(Duration::from_secs(5), third.read(&mut buf))
        .await
        .expect("closed, not left hanging");
    assert!(matches!(n, Ok(0) | Err(_)), "{n:?}");
    drop(a);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(api_versions_ok(srv.addr).await, "a slot is free again");
    assert!(srv.connections_refused() >= 1);
    srv.shutdown().await;
}

#[test]
fn connection_limits_have_sane_defaults_and_kafka_keys() {
    use groupcoord::config_keys::{self, ServerKeys};
    let d = ServerKeys::default();
    assert!((1..=65_536).contains(&d.max_connections), "{d:?}");
    assert!(d.queued_max_request_bytes >= i64::from(d.socket_request_max_bytes));
    let keys = [
        ("max.connections.per.ip", "10"),
        ("queued.max.request.bytes", "-1"),
    ];
    let parsed = config_keys::build(
        &keys
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
    .unwrap();
    assert_eq!(parsed.server.max_connections_per_ip, 10);
    assert_eq!(parsed.server.queued_max_request_bytes, -1);
    // Kafka's rule: a positive queue budget must hold a maximal request.
    let err = config_keys::build(
        &[("queued.max.request.bytes".to_string(), "1000".to_string())]
            .into_iter()
            .collect(),
    )
    .unwrap_err();
    assert_eq!(err.key, "queued.max.request.bytes");
}

fn join(group: &str) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: format!("{group}-m"),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        process_id: Some("p".into()),
        topology: Some(Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                ..Default::default()
            }],
            ..Default::default()
        }),
        active_tasks: Some(Vec::new()),
        standby_tasks: Some(Vec::new()),
        warmup_tasks: Some(Vec::new()),
        ..Default::default()
    }
}

async fn heartbeat(c: &mut Client, group: &str, epoch: i32) -> i32 {
    let mut r = join(group);
    if epoch > 0 {
        r.member_epoch = epoch;
        r.topology = None;
        r.process_id = None;
        r.rebalance_timeout_ms = -1;
    }
    let resp = c.heartbeat(0, &r).await.unwrap();
    assert_eq!(resp.error_code, 0, "{:?}", resp.error_message);
    resp.member_epoch
}

fn described(srv: &ServerHandle) -> u64 {
    srv.live_groups_described()
}

/// Issue 11 item 8: the live view describes groups only when watched, and only changed ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_view_is_computed_only_when_watched_and_only_for_changed_groups() {
    let srv = start(options("limits-live")).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let mut epochs = Vec::new();
    for g in 0..10 {
        epochs.push(heartbeat(&mut c, &format!("g{g}"), 0).await);
    }
    for (g, e) in epochs.iter().enumerate() {
        heartbeat(&mut c, &format!("g{g}"), *e).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(described(&srv), 0, "nobody watches: nothing described");
    // A request for the view describes every group once...
    assert_eq!(srv.live_group_count().await, Some(10));
    assert_eq!(described(&srv), 10);
    // ... and after one group changed, only that one.
    heartbeat(&mut c, "g3", epochs[3]).await;
    assert_eq!(srv.live_group_count().await, Some(10));
    assert_eq!(described(&srv), 11);
    // Nothing changed: nothing described.
    srv.live_group_count().await.unwrap();
    assert_eq!(described(&srv), 11);
    // An SSE subscriber gets changes pushed, again only the changed group.
    let mut live = srv.watch_live();
    heartbeat(&mut c, "g5", epochs[5]).await;
    assert!(
        tokio::time::timeout(Duration::from_secs(2), live.changed())
            .await
            .expect("published to the subscriber")
    );
    assert_eq!(described(&srv), 12);
    srv.shutdown().await;
}

/// Issue 10: a panicking owner stops the server (no zombie that accepts and cannot answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_owner_stops_the_server() {
    let mut o = options("limits-panic");
    o.panic_owner_on_client_id = Some("boom".into());
    let mut srv = start(o).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    c.client_id = Some("boom".into());
    let mut r = ListGroupsRequest::default();
    r.states_filter = vec![s("stable")];
    let answered = c.call(4, &r).await;
    assert!(answered.is_err(), "no answer from a dead owner");
    let stopped = tokio::time::timeout(Duration::from_secs(5), srv.wait())
        .await
        .expect("the server stops by itself");
    match stopped {
        Err(ServerError::OwnerPanicked(msg)) => assert!(msg.contains("fault injection"), "{msg}"),
        other => panic!("{other:?}"),
    }
    // Nothing accepts connections any more.
    let refused = match TcpStream::connect(srv.addr).await {
        Err(_) => true,
        Ok(mut s) => {
            let mut buf = [0u8; 1];
            matches!(
                tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf)).await,
                Ok(Ok(0) | Err(_))
            )
        }
    };
    assert!(refused, "listener closed");
}

/// Issue 11 item 4: out of file descriptors, the accept loop backs off (it neither spins nor
/// floods the log) and serves clients again once descriptors are free.
#[cfg(unix)]
#[test]
fn out_of_file_descriptors_backs_off_and_recovers() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Mutex};

    let dir = temp_dir("limits-emfile");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 48 && exec "$0" serve --listen 127.0.0.1:0 --data-dir "$1""#)
        .arg(env!("CARGO_BIN_EXE_groupcoord"))
        .arg(dir.join("data"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr: std::net::SocketAddr = line
        .trim()
        .strip_prefix("groupcoord listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .parse()
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let stderr = child.stderr.take().unwrap();
    let lines = log.clone();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            lines.lock().unwrap().push(l);
        }
    });
    // More connections than descriptors: the kernel completes them, the server cannot accept.
    let flood: Vec<_> = (0..80)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    let logged = log.lock().unwrap().clone();
    let failures = logged
        .iter()
        .filter(|l| l.contains("accept failed"))
        .count();
    assert!(
        (1..=2).contains(&failures),
        "{failures} accept failures logged in 3 s: {logged:?}"
    );
    drop(flood);
    // Descriptors are free again: a new client is served.
    let mut c = std::net::TcpStream::connect(addr)
        .unwrap_or_else(|e| panic!("{e}; server log: {:?}", log.lock().unwrap()));
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let frame = groupcoord::server::tools::client::raw_frame(18, 0, 1, Some("t"), &[]).unwrap();
    c.write_all(&frame).unwrap();
    let mut len = [0u8; 4];
    let served = c.read_exact(&mut len).is_ok();
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
    assert!(served, "served after descriptors were freed");
}

/// Issue 10: a failed commit (here: the segment a snapshot rolls to cannot be created; the
/// snapshot itself is written off the commit path) stops the server with the error, returned to
/// the caller instead of exiting the process; nothing is acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_stops_the_server_with_the_error() {
    let mut o = options("limits-commit");
    o.snapshot_bytes = 1;
    let dir = o.data_dir.clone();
    let mut srv = start(o).await.unwrap();
    // A directory where the next segment must go (after the log was loaded): creating it fails.
    // (With GC_TEST_OWNERS > 1: in every shard's log directory.)
    let mut logs = vec![dir.clone()];
    logs.extend((0..common::test_owners()).map(|i| dir.join(format!("shard-{i:03}"))));
    for d in logs.iter().filter(|d| d.is_dir()) {
        std::fs::create_dir_all(d.join("segment-00000000000000000001.log")).unwrap();
    }
    let mut c = Client::connect(srv.addr).await.unwrap();
    let answered = c.heartbeat(0, &join("g")).await;
    assert!(answered.is_err(), "not acknowledged: {answered:?}");
    let stopped = tokio::time::timeout(Duration::from_secs(5), srv.wait())
        .await
        .expect("the server stops by itself");
    match stopped {
        Err(ServerError::Commit(e)) => assert!(e.0.contains("segment roll"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// Issue 17: a connection is one task that reads and writes (no writer task and channel beside
/// it), so 1,000 members on 1,000 connections cost one task wake-up per request and its reply,
/// not three. Counted with the runtime's live tasks around 40 open connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_is_one_task() {
    let srv = start(options("limits-one-task")).await.unwrap();
    let metrics = tokio::runtime::Handle::current().metrics();
    let mut warm = Client::connect(srv.addr).await.unwrap();
    warm.call(3, &ApiVersionsRequest::default()).await.unwrap();
    let before = metrics.num_alive_tasks();
    let mut clients = Vec::new();
    for _ in 0..40 {
        let mut c = Client::connect(srv.addr).await.unwrap();
        let r = c.call(3, &ApiVersionsRequest::default()).await.unwrap();
        assert_eq!(r.error_code, 0);
        clients.push(c);
    }
    let during = metrics.num_alive_tasks();
    assert_eq!(
        during - before,
        40,
        "live tasks {before} -> {during} for 40 connections"
    );
    drop(clients);
    drop(warm);
    srv.shutdown().await;
}
