//! Native server: `groupcoord serve`. Kafka wire protocol over TCP, a durable log, a web view.
//!
//! Shape: one owner task holds the pure [`Coordinator`](core::Coordinator), the topic registry and
//! the coordinator's timers (it sleeps until `next_deadline()` and fires due timers). Connection tasks
//! read frames, decode them and send requests to the owner over a bounded channel; each
//! connection writes responses back in request order (pipelining allowed). The owner hands every
//! batch of log entries with the responses that depend on them to the commit thread, which
//! appends, fsyncs once per group of batches (group commit) and only then releases the responses.

pub mod bench;
pub mod bench_hostile;
pub mod client;
mod codec88;
pub mod commit_mark;
pub mod core;
pub mod data_plane;
pub mod demo;
pub mod handlers;
pub mod http;
pub mod lock;
pub mod log;
pub mod log_tool;
pub mod metrics;
pub mod prevalidate;
pub mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use tracing::{debug, error, info, warn};

use crate::config::CoordinatorConfig;
use crate::config_keys::ServerKeys;
use crate::protocol::{DescribedGroup, StreamsGroupDescribeRequest};
use crate::records::Record;
use crate::types::Millis;

use self::core::Coordinator;
use self::handlers::State;
use self::log::{Log, LogEntry, TopicChange};
use self::metrics::Metrics;
use self::wire::{Decoded, Header, Req, RequestKind, Resp, ResponseKind};

/// Wall-clock time in ms since the UNIX epoch.
pub fn now_ms() -> Millis {
    Millis(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0),
    )
}

/// Everything `serve` needs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    pub topics: Vec<(String, i32)>,
    pub coordinator: CoordinatorConfig,
    pub server: ServerKeys,
    pub http: Option<SocketAddr>,
    pub www_dir: PathBuf,
    pub demo: bool,
    /// Write a compacted snapshot once this many bytes were appended since the last one.
    pub snapshot_bytes: u64,
    /// Requests in flight per connection before the server stops reading it.
    pub max_inflight_per_connection: usize,
    /// How long the owner keeps looking for new work after a batch before it parks.
    pub owner_spin: Duration,
}

impl ServeOptions {
    pub fn new(listen: SocketAddr, data_dir: PathBuf) -> ServeOptions {
        ServeOptions {
            listen,
            data_dir,
            topics: Vec::new(),
            coordinator: CoordinatorConfig::default(),
            server: ServerKeys::default(),
            http: None,
            www_dir: PathBuf::from("www"),
            demo: false,
            snapshot_bytes: 64 * 1024 * 1024,
            max_inflight_per_connection: 256,
            owner_spin: Duration::from_micros(50),
        }
    }
}

/// A request for the owner task.
pub struct Job {
    /// Requests of one connection, answered together in this order.
    pub items: Vec<(Header, Req)>,
    pub peer: Arc<str>,
    pub reply: oneshot::Sender<Reply>,
}

/// The answer to a [`Job`]: its requests come back too, so that they are dropped (freed) by the
/// connection task rather than by the owner.
pub struct Reply {
    pub items: Vec<(Header, Req)>,
    pub resps: Vec<Resp>,
}

/// What the owner hands to the commit thread.
struct Commit {
    entries: Vec<LogEntry>,
    replies: Vec<(oneshot::Sender<Reply>, Reply)>,
}

/// One group in the live view.
#[derive(Debug, Clone, Serialize)]
pub struct LiveGroup {
    pub group_id: String,
    pub group_state: String,
    pub group_type: String,
    pub describe: DescribedGroup,
}

/// The live view pushed to `/api/events` and served by `/api/groups`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveSnapshot {
    pub seq: u64,
    pub time_ms: i64,
    pub topics: std::collections::BTreeMap<String, i32>,
    pub groups: Vec<LiveGroup>,
}

fn live_snapshot(state: &State, seq: u64) -> LiveSnapshot {
    let listed = state.coord.list_groups(&[], &[]);
    let ids: Vec<String> = listed.iter().map(|g| g.group_id.clone()).collect();
    let described = state.coord.streams_group_describe(
        &StreamsGroupDescribeRequest {
            group_ids: ids,
            ..Default::default()
        },
        1,
    );
    let groups = listed
        .into_iter()
        .zip(described.groups)
        .map(|(l, d)| LiveGroup {
            group_id: l.group_id,
            group_state: l.group_state,
            group_type: l.group_type,
            describe: d,
        })
        .collect();
    LiveSnapshot {
        seq,
        time_ms: now_ms().0,
        topics: state.topics.clone(),
        groups,
    }
}

/// Shared between the owner, the connections and the web view.
pub struct Shared {
    pub metrics: Metrics,
    pub live: watch::Receiver<Arc<LiveSnapshot>>,
    pub owner: mpsc::Sender<Job>,
    pub streams_enabled: bool,
    /// The advertised address (this server is node 0).
    pub host: String,
    pub port: i32,
}

/// A running server.
pub struct ServerHandle {
    pub addr: SocketAddr,
    pub http_addr: Option<SocketAddr>,
    pub shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    done: Option<tokio::task::JoinHandle<()>>,
}

impl ServerHandle {
    /// Stop accepting, flush the log, wait for the owner and commit thread to finish.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        if let Some(d) = self.done.take() {
            let _ = d.await;
        }
    }

    /// Resolves when the server stopped by itself (never, unless it failed).
    pub async fn wait(&mut self) {
        if let Some(d) = self.done.as_mut() {
            let _ = d.await;
        }
        self.done = None;
    }
}

/// Errors that stop start-up.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Load(#[from] log::LoadError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

/// Load the log, bind, and run the server in the background.
pub async fn start(opts: ServeOptions) -> Result<ServerHandle, StartError> {
    let listener = TcpListener::bind(opts.listen)
        .await
        .map_err(|source| StartError::Bind {
            addr: opts.listen,
            source,
        })?;
    let addr = listener
        .local_addr()
        .map_err(|e| StartError::Other(e.to_string()))?;
    let coord = Coordinator::new(opts.coordinator.clone());
    let mut state = State::new(coord, addr.ip().to_string(), addr.port() as i32);

    // Replay.
    let t0 = Instant::now();
    let dir = opts.data_dir.clone();
    let threshold = opts.snapshot_bytes;
    let (mut log, report) = {
        let state = &mut state;
        Log::open(&dir, threshold, |entry| match entry {
            LogEntry::Records(rs) => {
                for r in rs {
                    state
                        .coord
                        .replay(r)
                        .map_err(|e| format!("{} ({e})", r.summary()))?;
                }
                Ok(())
            }
            LogEntry::Topics(ts) => state.replay_topics(ts),
        })?
    };
    if let Some((path, offset, dropped, reason)) = &report.truncated {
        warn!(file = %path.display(), offset, dropped, reason = %reason, "torn log tail truncated");
    }
    info!(
        snapshot = ?report.snapshot,
        segments = report.segments,
        batches = report.batches,
        records = report.records,
        bytes = report.bytes,
        groups = state.coord.group_ids().len(),
        topics = state.topics.len(),
        ms = t0.elapsed().as_millis() as u64,
        "log replayed"
    );
    state.coord.on_loaded(now_ms());
    state.after_replay();
    info!(
        max_mb = opts.coordinator.limits.max_data_plane_mb,
        "data plane (Produce/Fetch) is in memory only: produced records are lost on restart, \
         and partition offsets then restart above the highest committed offset"
    );
    // Topics from the command line (and the demo's).
    let mut wanted = opts.topics.clone();
    if opts.demo {
        wanted.push((demo::DEMO_TOPIC.to_string(), demo::DEMO_PARTITIONS));
    }
    let missing: Vec<TopicChange> = wanted
        .iter()
        .filter(|(n, _)| !state.topics.contains_key(n))
        .map(|(n, p)| TopicChange::Set {
            name: n.clone(),
            partitions: *p,
        })
        .collect();
    if !missing.is_empty() {
        state.apply_topics(&missing);
        log.append(&[LogEntry::Topics(missing)])
            .map_err(|e| StartError::Other(format!("log append: {e}")))?;
        log.sync()
            .map_err(|e| StartError::Other(format!("log fsync: {e}")))?;
    }

    let (live_tx, live_rx) = watch::channel(Arc::new(live_snapshot(&state, 0)));
    let (owner_tx, owner_rx) = mpsc::channel::<Job>(4096);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        metrics: Metrics::default(),
        live: live_rx,
        owner: owner_tx,
        streams_enabled: opts.coordinator.streams_enabled,
        host: addr.ip().to_string(),
        port: addr.port() as i32,
    });
    shared.metrics.log_bytes.store(log.total_bytes(), Relaxed);

    // Commit thread.
    let (commit_tx, commit_rx) = std::sync::mpsc::channel::<Commit>();
    let in_flight = Arc::new(AtomicU64::new(0));
    let commit_thread = {
        let shared = shared.clone();
        let in_flight = in_flight.clone();
        std::thread::Builder::new()
            .name("groupcoord-commit".into())
            .spawn(move || commit_loop(log, commit_rx, shared, in_flight))
            .map_err(|e| StartError::Other(e.to_string()))?
    };

    // The owner runs on a thread of its own (a current-thread runtime): it never competes with
    // connection tasks for a worker, and it is the only place the coordinator lives.
    let owner = {
        let shared = shared.clone();
        let owner_spin = opts.owner_spin;
        let shutdown_rx = shutdown_rx.clone();
        std::thread::Builder::new()
            .name("groupcoord-owner".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("owner runtime");
                rt.block_on(owner_loop(
                    state,
                    owner_rx,
                    commit_tx,
                    in_flight,
                    live_tx,
                    shared,
                    shutdown_rx,
                    owner_spin,
                ));
            })
            .map_err(|e| StartError::Other(e.to_string()))?
    };
    let acceptor = tokio::spawn(accept_loop(
        listener,
        shared.clone(),
        opts.clone(),
        shutdown_rx.clone(),
    ));
    let http_addr = match opts.http {
        Some(a) => Some(
            http::start(a, shared.clone(), opts.www_dir.clone(), shutdown_rx.clone())
                .await
                .map_err(|source| StartError::Bind { addr: a, source })?,
        ),
        None => None,
    };
    if opts.demo {
        tokio::spawn(demo::run(
            shared.clone(),
            opts.coordinator.clone(),
            shutdown_rx.clone(),
        ));
    }
    info!(%addr, http = ?http_addr, data_dir = %opts.data_dir.display(), "groupcoord serving");
    let done = tokio::spawn(async move {
        let _ = acceptor.await;
        let _ = tokio::task::spawn_blocking(move || owner.join()).await;
        let _ = tokio::task::spawn_blocking(move || commit_thread.join()).await;
        info!("log flushed; server stopped");
    });
    Ok(ServerHandle {
        addr,
        http_addr,
        shared,
        shutdown: shutdown_tx,
        done: Some(done),
    })
}

fn commit_loop(
    mut log: Log,
    rx: std::sync::mpsc::Receiver<Commit>,
    shared: Arc<Shared>,
    in_flight: Arc<AtomicU64>,
) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while let Ok(c) = rx.try_recv() {
            batch.push(c);
        }
        let mut durable = 0;
        for c in &batch {
            if c.entries.is_empty() {
                continue;
            }
            durable += 1;
            match log.append(&c.entries) {
                Ok(_) => {
                    shared
                        .metrics
                        .log_batches
                        .fetch_add(c.entries.len() as u64, Relaxed);
                }
                Err(e) => fail_stop(&format!("log append failed: {e}")),
            }
        }
        let t = Instant::now();
        match log.sync() {
            Ok(true) => shared.metrics.observe_flush(t.elapsed().as_secs_f64()),
            Ok(false) => {}
            Err(e) => fail_stop(&format!("log fsync failed: {e}")),
        }
        if log.needs_snapshot() {
            let t = Instant::now();
            match log.snapshot() {
                Ok(p) => {
                    info!(file = %p.display(), bytes = log.total_bytes(), ms = t.elapsed().as_millis() as u64, "compacted snapshot written")
                }
                Err(e) => fail_stop(&format!("snapshot failed: {e}")),
            }
        }
        shared.metrics.log_bytes.store(log.total_bytes(), Relaxed);
        for c in batch {
            for (tx, r) in c.replies {
                let _ = tx.send(r);
            }
        }
        in_flight.fetch_sub(durable, Relaxed);
    }
    if let Err(e) = log.sync() {
        error!("final fsync failed: {e}");
    }
}

/// Memory is ahead of disk and cannot be rolled back: stop rather than acknowledge.
fn fail_stop(msg: &str) -> ! {
    error!("{msg}; stopping (state in memory is ahead of the log)");
    std::process::exit(1);
}

#[allow(clippy::too_many_arguments)]
async fn owner_loop(
    mut state: State,
    mut rx: mpsc::Receiver<Job>,
    commit_tx: std::sync::mpsc::Sender<Commit>,
    in_flight: Arc<AtomicU64>,
    live_tx: watch::Sender<Arc<LiveSnapshot>>,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
    owner_spin: Duration,
) {
    let mut jobs = Vec::with_capacity(1024);
    let mut dirty = false;
    let mut seq = 0u64;
    let mut last_publish = Instant::now();
    let publish_every = Duration::from_millis(100);
    let send = |entries: Vec<LogEntry>, replies: Vec<(oneshot::Sender<Reply>, Reply)>| {
        if entries.is_empty() && in_flight.load(Relaxed) == 0 {
            for (tx, r) in replies {
                let _ = tx.send(r);
            }
            return;
        }
        if !entries.is_empty() {
            in_flight.fetch_add(1, Relaxed);
        }
        if commit_tx.send(Commit { entries, replies }).is_err() {
            fail_stop("commit thread gone");
        }
    };
    let process = |state: &mut State, jobs: &mut Vec<Job>, dirty: &mut bool| {
        let now = now_ms();
        let mut entries = Vec::new();
        let mut replies = Vec::with_capacity(jobs.len());
        for job in jobs.drain(..) {
            let mut resps = Vec::with_capacity(job.items.len());
            for (header, req) in &job.items {
                let h = state.handle(now, header, &job.peer, req);
                entries.extend(h.entries);
                resps.push(h.resp);
            }
            replies.push((
                job.reply,
                Reply {
                    items: job.items,
                    resps,
                },
            ));
        }
        let hb = std::mem::take(&mut state.counters.heartbeats);
        let rq = std::mem::take(&mut state.counters.requests);
        shared.metrics.heartbeats.fetch_add(hb, Relaxed);
        shared.metrics.requests.fetch_add(rq, Relaxed);
        if !entries.is_empty() {
            count_rebalances(&shared, &entries);
            *dirty = true;
        }
        send(entries, replies);
    };
    let fire = |state: &mut State, dirty: &mut bool| {
        let entries = state.fire_timers(now_ms());
        if !entries.is_empty() {
            count_rebalances(&shared, &entries);
            *dirty = true;
            send(entries, Vec::new());
        }
    };
    let publish = |state: &State, seq: &mut u64, last: &mut Instant, dirty: &mut bool| {
        *seq += 1;
        let _ = live_tx.send(Arc::new(live_snapshot(state, *seq)));
        *last = Instant::now();
        *dirty = false;
    };
    loop {
        // Busy: take what arrived while the last batch ran, spinning (and yielding the core)
        // up to `owner_spin` before parking: under load a park/unpark round trip through the
        // runtime costs more than the wait, and it adds to every heartbeat's latency. Timers
        // and the live view are served here too, so a busy owner never starves them.
        let spin_until = Instant::now() + owner_spin;
        loop {
            match rx.try_recv() {
                Ok(job) => {
                    jobs.push(job);
                    while jobs.len() < 1024 {
                        match rx.try_recv() {
                            Ok(j) => jobs.push(j),
                            Err(_) => break,
                        }
                    }
                    break;
                }
                Err(mpsc::error::TryRecvError::Empty)
                    if Instant::now() < spin_until && !shutdown.has_changed().unwrap_or(true) =>
                {
                    std::thread::yield_now();
                }
                Err(_) => break,
            }
        }
        if !jobs.is_empty() {
            process(&mut state, &mut jobs, &mut dirty);
            if state.coord.next_deadline().is_some_and(|t| t <= now_ms()) {
                fire(&mut state, &mut dirty);
            }
            if dirty && last_publish.elapsed() >= publish_every {
                publish(&state, &mut seq, &mut last_publish, &mut dirty);
            }
            if *shutdown.borrow() {
                break;
            }
            continue;
        }
        let timer = state.coord.next_deadline();
        let wake = timer.map(|t| {
            let d = (t.0 - now_ms().0).max(0) as u64;
            tokio::time::Instant::now() + Duration::from_millis(d)
        });
        let publish_at = if dirty {
            Some(tokio::time::Instant::from_std(last_publish + publish_every))
        } else {
            None
        };
        tokio::select! {
            n = rx.recv_many(&mut jobs, 1024) => {
                if n == 0 { break; }
                process(&mut state, &mut jobs, &mut dirty);
            }
            _ = async { tokio::time::sleep_until(wake.unwrap()).await }, if wake.is_some() => {
                fire(&mut state, &mut dirty);
            }
            _ = async { tokio::time::sleep_until(publish_at.unwrap()).await }, if publish_at.is_some() => {
                publish(&state, &mut seq, &mut last_publish, &mut dirty);
            }
            _ = shutdown.changed() => break,
        }
    }
    // Answer what is queued? Connections are closing; just drop. The commit thread drains and
    // fsyncs when `commit_tx` is dropped here.
    drop(commit_tx);
    debug!("owner stopped");
}

fn count_rebalances(shared: &Shared, entries: &[LogEntry]) {
    let n = entries
        .iter()
        .map(|e| match e {
            LogEntry::Records(rs) => rs
                .iter()
                .filter(|r| matches!(r, Record::GroupMetadata { value: Some(_), .. }))
                .count() as u64,
            LogEntry::Topics(_) => 0,
        })
        .sum::<u64>();
    shared.metrics.rebalances.fetch_add(n, Relaxed);
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    opts: ServeOptions,
    mut shutdown: watch::Receiver<bool>,
) {
    let limit = Arc::new(Semaphore::new(opts.server.max_connections.max(0) as usize));
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, peer)) => {
                    let Ok(permit) = limit.clone().try_acquire_owned() else {
                        warn!(%peer, max = opts.server.max_connections, "max.connections reached; closing new connection");
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    shared.metrics.connections_total.fetch_add(1, Relaxed);
                    shared.metrics.connections.fetch_add(1, Relaxed);
                    let shared = shared.clone();
                    let opts = opts.clone();
                    let sd = shutdown.clone();
                    tokio::spawn(async move {
                        connection(stream, peer, shared.clone(), &opts, sd).await;
                        shared.metrics.connections.fetch_sub(1, Relaxed);
                        drop(permit);
                    });
                }
                Err(e) => {
                    warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = shutdown.changed() => break,
        }
    }
}

/// A response slot in a connection's ordered queue.
enum Slot {
    Ready(Bytes),
    Wait(oneshot::Receiver<Reply>),
}

/// Fetch through the owner (data_plane), polling every 20 ms while the answer is empty and
/// `max_wait_ms` (capped at 500 ms) has not passed.
async fn long_poll_fetch(
    shared: Arc<Shared>,
    h: Header,
    peer: Arc<str>,
    r: kafka_protocol::messages::FetchRequest,
    out: oneshot::Sender<Reply>,
) {
    let poll = Duration::from_millis(20);
    let deadline =
        tokio::time::Instant::now() + Duration::from_millis(r.max_wait_ms.clamp(0, 500) as u64);
    loop {
        let (tx, rx) = oneshot::channel();
        let job = Job {
            items: vec![(h.clone(), Req::Kafka(RequestKind::Fetch(r.clone())))],
            peer: peer.clone(),
            reply: tx,
        };
        if shared.owner.send(job).await.is_err() {
            return;
        }
        let Ok(reply) = rx.await else { return };
        let empty = match reply.resps.first() {
            Some(Resp::Kafka(ResponseKind::Fetch(f))) => data_plane::fetch_is_empty(f),
            _ => false,
        };
        if !empty || tokio::time::Instant::now() + poll >= deadline {
            let _ = out.send(reply);
            return;
        }
        tokio::time::sleep(poll).await;
    }
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    opts: &ServeOptions,
    mut shutdown: watch::Receiver<bool>,
) {
    let (rd, wr) = stream.into_split();
    let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, rd);
    let (slot_tx, mut slot_rx) = mpsc::channel::<Slot>(opts.max_inflight_per_connection.max(1));
    let writer = tokio::spawn(async move {
        let mut w = BufWriter::with_capacity(64 * 1024, wr);
        while let Some(slot) = slot_rx.recv().await {
            let bytes = match slot {
                Slot::Ready(b) => b,
                Slot::Wait(rx) => {
                    if slot_rx.is_empty() {
                        // Nothing else queued: push out what we have before waiting.
                        if w.flush().await.is_err() {
                            return;
                        }
                    }
                    let Ok(reply) = rx.await else { return };
                    let mut out = bytes::BytesMut::with_capacity(reply.resps.len() * 128);
                    for ((h, _), resp) in reply.items.iter().zip(reply.resps.iter()) {
                        match wire::encode_response_into(h, resp, &mut out) {
                            Ok(()) => {}
                            Err(e) => {
                                error!(
                                    key = h.api_key,
                                    version = h.api_version,
                                    "cannot encode response: {e}"
                                );
                                let _ = w.write_all(&out).await;
                                let _ = w.flush().await;
                                return;
                            }
                        }
                    }
                    out.freeze()
                }
            };
            if w.write_all(&bytes).await.is_err() {
                return;
            }
            if slot_rx.is_empty() && w.flush().await.is_err() {
                return;
            }
        }
        let _ = w.flush().await;
    });
    let max = opts.server.socket_request_max_bytes.max(0) as usize;
    let idle = Duration::from_millis(opts.server.connections_max_idle_ms.max(1) as u64);
    let peer_ip: Arc<str> = Arc::from(peer.ip().to_string());
    let mut batch: Vec<(Header, Req)> = Vec::new();
    'conn: loop {
        // Wait for the next frame (idle timeout applies), then take every complete frame already
        // buffered: requests for the owner go as one batch.
        let mut len = [0u8; 4];
        let r = tokio::select! {
            r = tokio::time::timeout(idle, rd.read_exact(&mut len)) => r,
            _ = shutdown.changed() => break,
        };
        match r {
            Err(_) => {
                debug!(%peer, "idle connection closed (connections.max.idle.ms)");
                break;
            }
            Ok(Err(_)) => break, // EOF or reset
            Ok(Ok(_)) => {}
        }
        loop {
            let n = i32::from_be_bytes(len);
            if n < 0 || n as usize > max {
                warn!(%peer, size = n, max, "request frame size invalid or larger than socket.request.max.bytes; closing connection");
                shared.metrics.closed_bad_frames.fetch_add(1, Relaxed);
                break 'conn;
            }
            let frame = if rd.buffer().len() >= n as usize {
                // Already buffered (the common case under load): one copy, no zero-fill.
                let f = Bytes::copy_from_slice(&rd.buffer()[..n as usize]);
                rd.consume(n as usize);
                f
            } else {
                let mut frame = vec![0u8; n as usize];
                match tokio::time::timeout(idle, rd.read_exact(&mut frame)).await {
                    Ok(Ok(_)) => {}
                    _ => {
                        debug!(%peer, "connection closed mid-frame");
                        break 'conn;
                    }
                }
                Bytes::from(frame)
            };
            let local = match wire::decode_frame(frame, shared.streams_enabled) {
                Decoded::Close(reason) => {
                    warn!(%peer, "closing connection: {reason}");
                    shared.metrics.closed_bad_frames.fetch_add(1, Relaxed);
                    break 'conn;
                }
                Decoded::ApiVersionsUnsupported(h) => Some(Slot::Ready(
                    wire::api_versions_unsupported_frame(h.correlation_id, shared.streams_enabled),
                )),
                Decoded::Request(h, Req::ApiVersions(_)) => {
                    let r = wire::api_versions_response(0, h.api_version, shared.streams_enabled);
                    match wire::encode_response(&h, &Resp::Kafka(ResponseKind::ApiVersions(r))) {
                        Ok(b) => Some(Slot::Ready(b)),
                        Err(e) => {
                            error!("ApiVersions encode: {e}");
                            break 'conn;
                        }
                    }
                }
                Decoded::Request(h, Req::Kafka(RequestKind::FindCoordinator(r))) => {
                    let resp =
                        handlers::find_coordinator(&shared.host, shared.port, h.api_version, &r);
                    match wire::encode_response(
                        &h,
                        &Resp::Kafka(ResponseKind::FindCoordinator(resp)),
                    ) {
                        Ok(b) => Some(Slot::Ready(b)),
                        Err(e) => {
                            error!("FindCoordinator encode: {e}");
                            break 'conn;
                        }
                    }
                }
                Decoded::Request(h, Req::Kafka(RequestKind::Fetch(r))) => {
                    // data_plane: an empty answer is held back and the fetch asked again until
                    // max_wait_ms (capped at 500 ms) has passed, like a broker's fetch purgatory.
                    let (tx, rx) = oneshot::channel();
                    tokio::spawn(long_poll_fetch(shared.clone(), h, peer_ip.clone(), r, tx));
                    Some(Slot::Wait(rx))
                }
                Decoded::Request(h, req) => {
                    batch.push((h, req));
                    None
                }
            };
            if let Some(slot) = local {
                // Keep the order: what is batched for the owner goes first.
                if !batch.is_empty() && !submit(&shared, &peer_ip, &mut batch, &slot_tx).await {
                    break 'conn;
                }
                if slot_tx.send(slot).await.is_err() {
                    break 'conn;
                }
            }
            // Another complete frame already buffered?
            let buf = rd.buffer();
            if buf.len() >= 4 {
                let n = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
                if n >= 0 && buf.len() >= 4 + n as usize && batch.len() < 512 {
                    len.copy_from_slice(&buf[..4]);
                    rd.consume(4);
                    continue;
                }
            }
            break;
        }
        if !batch.is_empty() && !submit(&shared, &peer_ip, &mut batch, &slot_tx).await {
            break;
        }
    }
    drop(slot_tx);
    let _ = writer.await;
}

/// Send a connection's batch to the owner and queue its response slot.
async fn submit(
    shared: &Shared,
    peer: &Arc<str>,
    batch: &mut Vec<(Header, Req)>,
    slot_tx: &mpsc::Sender<Slot>,
) -> bool {
    let items = std::mem::take(batch);
    let (tx, rx) = oneshot::channel();
    if shared
        .owner
        .send(Job {
            items,
            peer: peer.clone(),
            reply: tx,
        })
        .await
        .is_err()
    {
        return false;
    }
    slot_tx.send(Slot::Wait(rx)).await.is_ok()
}
