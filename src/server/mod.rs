//! Native server: `groupcoord serve`. Kafka wire protocol over TCP, a durable log, a web view.
//!
//! The public surface is [`start`] with [`ServeOptions`] (returning a [`ServerHandle`]), the
//! served API table [`SUPPORTED`], [`decode_request_frame`] (the fuzz targets' entry), the log
//! ([`storage`]), the CLI's [`tools`], the SCRAM and test-certificate helpers of [`security`],
//! and the pure request handler: [`kafka::State::handle`] with its inputs ([`peer::Peer`],
//! [`wire::Header`], [`wire::Req`]) and codec ([`wire`]), unit-testable without sockets.
//! Inside, one concern per module (after mini-redis):
//!
//! * `listener`: the accept loop and the connection limits.
//! * `connection`: one client connection: reads frames (`frame`, within the memory budget),
//!   answers the few requests that need no state itself, sends the rest to the owner in batches
//!   and writes every response back in request order (pipelining allowed).
//! * `owner`: the only place the pure [`Coordinator`] lives,
//!   on a thread of its own: it runs batches of requests through `kafka::State::handle` (pure:
//!   request in, response and log entries out), fires the coordinator's timers and keeps the live
//!   view.
//! * `commit`: the group-commit thread: appends and fsyncs the log entries of every batch, and
//!   only then releases the responses that depend on them.
//! * [`storage`]: the log (segments, snapshots; compaction is the core's
//!   [`records::compact`](crate::records::compact)).
//! * `web`: static files, the live view (`/api/groups`, SSE), `/metrics`.
//! * [`tools`]: a small client, `bench load` and the `--demo` members.

pub mod acl;
mod codec88;
mod commit;
mod connection;
mod frame;
pub mod kafka;
mod listener;
mod owner;
pub mod peer;
mod routing;
pub mod security;
mod shards;
pub mod storage;
pub mod tools;
mod web;
pub mod wire;

/// Each classic group's rebalance phases for the live view (public for `benches/classic_phases.rs`).
pub use web::phases;
pub use wire::SUPPORTED;

use std::any::Any;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::{error, info};

use crate::config::CoordinatorConfig;
use crate::config_keys::ServerKeys;
use crate::coordinator::Coordinator;
use crate::security_config::{Endpoint, ListenerConfig, SecurityProtocol};
use crate::types::Millis;

use self::commit::{CommitError, Committer};
use self::frame::MemoryBudget;
use self::kafka::State;
use self::listener::Listener;
use self::owner::{Job, Owner};
use self::storage::log::{LogEntry, TopicChange};
use self::web::LiveSnapshot;
use self::web::metrics::Metrics;

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
    /// The PLAINTEXT listener when `listeners` is empty (`--listen`; port 0 picks a free port).
    pub listen: SocketAddr,
    /// Kafka's `listeners` (with their advertised addresses, TLS and SASL settings); when
    /// empty, one PLAINTEXT listener on `listen`.
    pub listeners: Vec<ListenerConfig>,
    /// Bearer token the web view requires from clients that are not on loopback
    /// (`--http-token`, `groupcoord.http.token`).
    pub http_token: Option<String>,
    /// The log's directory (created if missing; locked while the server runs).
    pub data_dir: PathBuf,
    /// Topics to create at start-up if they do not exist: (name, partitions).
    pub topics: Vec<(String, i32)>,
    /// The coordinator's configuration.
    pub coordinator: CoordinatorConfig,
    /// Socket-server keys (`max.connections`, `queued.max.request.bytes`, ...).
    pub server: ServerKeys,
    /// Where the web UI listens, if at all.
    pub http: Option<SocketAddr>,
    /// The explorer's static files, served by the web UI.
    pub www_dir: PathBuf,
    /// Run demo members against the server (`--demo`).
    pub demo: bool,
    /// Write a compacted snapshot once this many bytes were appended since the last one.
    pub snapshot_bytes: u64,
    /// Requests in flight per connection before the server stops reading it.
    pub max_inflight_per_connection: usize,
    /// How long the owner keeps looking for new work after a batch before it parks (not at all
    /// when there are several owners and as many owners as cores).
    pub owner_spin: Duration,
    /// Benchmark hook: spin `owner_spin` whatever the owner count (`bench load --owner-spin-us`),
    /// to compare spins side by side.
    #[doc(hidden)]
    pub owner_spin_always: bool,
    /// Fault injection for tests: the owner thread panics when it handles a request from this
    /// client id (proves that a dead owner stops the server instead of leaving a zombie).
    /// `None` (the default) in production.
    pub panic_owner_on_client_id: Option<String>,
    /// Streams-group assignments of at least this many members x tasks run on a worker thread,
    /// so the owner keeps answering other groups (`None`: always inline, as Kafka 4.4).
    pub assignment_offload_min_work: Option<u64>,
    /// Owner threads the groups are sharded over (`group.coordinator.threads`, `--owners`):
    /// 1 (the default) is one owner and one log in the data directory itself; N > 1 gives each
    /// owner the coordinator partitions `p % N`, its own timers and its own log in
    /// `shard-NNN/` (see docs/sharding.md).
    pub owners: usize,
    /// Move the groups of a data directory written with another owner count to `owners`
    /// owners at start-up (`--migrate-owners`; docs/sharding.md, "Changing the owner count").
    /// Without it another count is refused.
    pub migrate_owners: bool,
    /// Fault injection for tests: a migration stops (start-up fails) right after its staging
    /// directory is complete (`Some(false)`) or right after the switch (`Some(true)`), as a
    /// crash there would. `None` (the default) in production.
    #[doc(hidden)]
    pub migrate_crash: Option<bool>,
    /// Threads a migration reads old shards with (`None`: one per core; `Some(1)`: the
    /// sequential migration). For benchmarks and tests.
    #[doc(hidden)]
    pub migrate_threads: Option<usize>,
}

/// Members x tasks from which an assignment leaves the owner thread: 1,000 members x 1,000
/// tasks take about a millisecond with the default assignor; below that, a round trip through a
/// worker costs more than it saves.
pub const DEFAULT_OFFLOAD_MIN_WORK: u64 = 1_000_000;

impl ServeOptions {
    /// Defaults for everything but the listen address and the data directory.
    pub fn new(listen: SocketAddr, data_dir: PathBuf) -> ServeOptions {
        ServeOptions {
            listen,
            listeners: Vec::new(),
            http_token: None,
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
            owner_spin_always: false,
            panic_owner_on_client_id: None,
            assignment_offload_min_work: Some(DEFAULT_OFFLOAD_MIN_WORK),
            owners: 1,
            migrate_owners: false,
            migrate_crash: None,
            migrate_threads: None,
        }
    }
}

/// Shared between the owner, the connections and the web view.
pub(crate) struct Shared {
    pub metrics: Metrics,
    /// The live view as last published by the owner; subscribers count as watchers.
    pub live: watch::Sender<Arc<LiveSnapshot>>,
    /// Ask an owner for its up-to-date part of the live view (computed only for groups that
    /// changed); one queue per owner.
    pub live_requests: Vec<mpsc::Sender<oneshot::Sender<Arc<LiveSnapshot>>>>,
    /// Each owner's last published part of the live view (several owners only: `live` is
    /// their merge).
    pub live_parts: Vec<std::sync::Mutex<Arc<LiveSnapshot>>>,
    /// The owners' job queues, behind the placement rule.
    pub owner: routing::Router,
    pub streams_enabled: bool,
    /// Request bytes held by all connections (`queued.max.request.bytes`).
    pub request_memory: MemoryBudget,
    /// An authorizer is configured: every request but ApiVersions goes to the owner, which
    /// holds the ACLs.
    pub authorize: bool,
    /// SCRAM credentials (the owner's state writes them, SASL exchanges read them).
    pub scram: Arc<std::sync::RwLock<security::scram::ScramCredentials>>,
    /// Recent exchanges and records per group for the live view (written by the owner while
    /// `watch` says someone looks, read by `/api/history`).
    pub history: std::sync::Mutex<web::history::History>,
    pub watch: web::history::Watch,
    /// Each classic group's recent rebalance phases (written by the owners whether or not
    /// anyone watches, read by `/api/history`).
    pub phases: std::sync::Mutex<web::phases::Phases>,
}

impl Shared {
    /// An up-to-date live view (also published to the SSE subscribers); `None` once the owner
    /// stopped.
    pub async fn fresh_live(&self) -> Option<Arc<LiveSnapshot>> {
        let mut parts = Vec::with_capacity(self.live_requests.len());
        for q in &self.live_requests {
            let (tx, rx) = oneshot::channel();
            q.send(tx).await.ok()?;
            parts.push(rx);
        }
        let mut got = Vec::with_capacity(parts.len());
        for rx in parts {
            got.push(rx.await.ok()?);
        }
        if got.len() == 1 {
            return got.pop();
        }
        Some(merge_live(&got))
    }
}

/// The live view of several owners: every owner's groups (each group is on one owner), by id.
pub(crate) fn merge_live(parts: &[Arc<LiveSnapshot>]) -> Arc<LiveSnapshot> {
    let mut groups: Vec<Arc<web::LiveGroup>> = parts
        .iter()
        .flat_map(|p| p.groups.iter().cloned())
        .collect();
    groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    Arc::new(LiveSnapshot {
        seq: parts.iter().map(|p| p.seq).sum(),
        time_ms: parts.iter().map(|p| p.time_ms).max().unwrap_or(0),
        topics: parts.first().map(|p| p.topics.clone()).unwrap_or_default(),
        groups,
    })
}

/// Why a running server stopped by itself.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServerError {
    /// The thread that owns the coordinator panicked (the message is the panic's).
    #[error("the coordinator owner thread panicked: {0}; server stopped")]
    OwnerPanicked(String),
    /// An append or fsync of the log failed: nothing more can be acknowledged.
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// The group-commit thread panicked (the message is the panic's).
    #[error("the commit thread panicked: {0}; server stopped")]
    CommitPanicked(String),
}

/// A running server. Dropping the handle stops it too (see the `Drop` impl), without waiting.
pub struct ServerHandle {
    /// The first listener's bound address (the real port when it asked for port 0).
    pub addr: SocketAddr,
    /// Every listener: (name, security protocol, bound address).
    pub listeners: Vec<(String, SecurityProtocol, SocketAddr)>,
    /// The web UI's address, if it was enabled.
    pub http_addr: Option<SocketAddr>,
    pub(crate) shared: Arc<Shared>,
    shutdown: Arc<watch::Sender<bool>>,
    done: Option<tokio::task::JoinHandle<Result<(), ServerError>>>,
    result: Option<Result<(), ServerError>>,
}

impl ServerHandle {
    /// Stop accepting, flush the log, wait for the owner and commit thread to finish.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        if let Err(e) = self.finish().await {
            error!("{e}");
        }
    }

    /// Resolves when the server stopped by itself, which only a failure does (a dead owner
    /// thread, a failed append or fsync): the error says which.
    pub async fn wait(&mut self) -> Result<(), ServerError> {
        self.finish().await
    }

    /// Request bytes the connections hold right now, within `queued.max.request.bytes`.
    pub fn request_bytes_in_use(&self) -> u64 {
        self.shared.request_memory.in_use()
    }

    /// Connections refused so far by `max.connections` / `max.connections.per.ip`.
    pub fn connections_refused(&self) -> u64 {
        self.shared
            .metrics
            .connections_refused
            .load(Ordering::Relaxed)
    }

    /// Groups the live view has described so far (it describes only watched, changed groups).
    pub fn live_groups_described(&self) -> u64 {
        self.shared
            .metrics
            .live_groups_described
            .load(Ordering::Relaxed)
    }

    /// The number of groups in an up-to-date live view (what `/api/groups` serves); `None` once
    /// the owner stopped.
    pub async fn live_group_count(&self) -> Option<usize> {
        Some(self.shared.fresh_live().await?.groups.len())
    }

    /// Subscribes to the live view as the web page's SSE stream does: the subscriber counts as
    /// a watcher, so the owner publishes every change to it.
    pub fn watch_live(&self) -> LiveWatch {
        let mut rx = self.shared.live.subscribe();
        rx.borrow_and_update();
        LiveWatch(rx)
    }

    async fn finish(&mut self) -> Result<(), ServerError> {
        if let Some(d) = self.done.take() {
            self.result = Some(d.await.unwrap_or(Ok(())));
        }
        self.result.clone().unwrap_or(Ok(()))
    }
}

/// A handle dropped without [`ServerHandle::shutdown`] (a panicking test, an early return)
/// still stops the server, without waiting for it: otherwise its owner threads keep running and
/// the runtime that drops it (a `#[tokio::test]`'s) waits for them forever, so a failing
/// assertion would hang the test binary instead of failing it.
impl Drop for ServerHandle {
    fn drop(&mut self) {
        if self.done.is_some() {
            let _ = self.shutdown.send(true);
        }
    }
}

/// A subscription to the server's live view (see [`ServerHandle::watch_live`]).
pub struct LiveWatch(watch::Receiver<Arc<LiveSnapshot>>);

impl LiveWatch {
    /// Waits until the owner publishes a new live view; `false` once the server stopped.
    pub async fn changed(&mut self) -> bool {
        self.0.changed().await.is_ok()
    }
}

/// Errors that stop start-up.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The log could not be loaded.
    #[error(transparent)]
    Load(#[from] storage::log::LoadError),
    /// A listening socket could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The data directory's shards do not match the owner count, or one is missing or damaged
    /// (the message names the directory).
    #[error("{0}")]
    Shards(String),
    /// Anything else that stops start-up (the start-up topics, a thread that would not start).
    #[error("{0}")]
    Other(String),
}

/// Decodes one request frame (after its 4-byte size prefix) exactly as a connection does:
/// header, pre-validation, body. `Ok((api_key, api_version))` when the server would handle the
/// request, `Err(why)` when it would answer with an error or close the connection. No input
/// makes it panic or allocate beyond the frame's size: the fuzz targets drive it.
pub fn decode_request_frame(frame: &[u8]) -> Result<(i16, i16), String> {
    match wire::decode_frame(bytes::Bytes::copy_from_slice(frame), true) {
        wire::Decoded::Request(h, _) => Ok((h.api_key, h.api_version)),
        wire::Decoded::ApiVersionsUnsupported(h) => {
            Err(format!("ApiVersions v{} is not served", h.api_version))
        }
        wire::Decoded::Close(why) => Err(why),
    }
}

/// The listeners of `opts`: `listeners`, or one PLAINTEXT listener on `listen`.
fn listener_configs(opts: &ServeOptions) -> Vec<ListenerConfig> {
    if !opts.listeners.is_empty() {
        return opts.listeners.clone();
    }
    let ep = Endpoint {
        name: "PLAINTEXT".into(),
        host: opts.listen.ip().to_string(),
        port: opts.listen.port(),
    };
    let advertised = if opts.listen.ip().is_unspecified() {
        // Never advertise 0.0.0.0: clients could not connect to it.
        Endpoint {
            host: String::new(),
            ..ep.clone()
        }
    } else {
        ep.clone()
    };
    vec![ListenerConfig {
        bind: ep,
        protocol: SecurityProtocol::Plaintext,
        advertised,
        tls: None,
        sasl: None,
    }]
}

/// The machine's host name (advertised for listeners bound to every interface), as Kafka
/// advertises the canonical host name.
fn local_host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Bind every listener (host names resolved; an empty host binds every interface) and build
/// its TLS configuration.
async fn bind_listeners(
    configs: &[ListenerConfig],
) -> Result<Vec<(TcpListener, listener::Endpoint)>, StartError> {
    let mut out = Vec::new();
    for c in configs {
        let host = if c.bind.host.is_empty() {
            "0.0.0.0"
        } else {
            c.bind.host.as_str()
        };
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, c.bind.port))
            .await
            .map_err(|e| {
                StartError::Other(format!("listener {}: cannot resolve {host}: {e}", c.bind))
            })?
            .collect();
        // Prefer IPv4 (localhost resolves to ::1 first on some machines; Kafka clients on
        // 127.0.0.1 would then miss the listener).
        let Some(addr) = addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or(addrs.first())
            .copied()
        else {
            return Err(StartError::Other(format!(
                "listener {}: {host} resolves to no address",
                c.bind
            )));
        };
        let socket = TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Bind { addr, source })?;
        let bound = socket
            .local_addr()
            .map_err(|e| StartError::Other(e.to_string()))?;
        let tls = match &c.tls {
            Some(t) => Some(tokio_rustls::TlsAcceptor::from(
                security::tls::server_config(t)
                    .map_err(|e| StartError::Other(format!("listener {}: {e}", c.bind.name)))?,
            )),
            None => None,
        };
        let adv_host = if c.advertised.host.is_empty() {
            local_host_name()
        } else {
            c.advertised.host.clone()
        };
        let adv_port = if c.advertised.port == 0 {
            bound.port()
        } else {
            c.advertised.port
        };
        out.push((
            socket,
            listener::Endpoint::new(
                c.bind.name.clone(),
                c.protocol,
                bound,
                (adv_host, adv_port as i32),
                tls,
                c.sasl.clone().map(Arc::new),
            ),
        ));
    }
    Ok(out)
}

/// Load the log, bind, and run the server in the background.
pub async fn start(opts: ServeOptions) -> Result<ServerHandle, StartError> {
    let bound = bind_listeners(&listener_configs(&opts)).await?;
    let addr = bound[0].1.bound;
    let (host, port) = bound[0].1.advertised.clone();
    let owner_count = opts.owners.max(1);
    let stop = match opts.migrate_crash {
        None => storage::migrate::StopAt::Never,
        Some(false) => storage::migrate::StopAt::AfterStaging,
        Some(true) => storage::migrate::StopAt::AfterSwitch,
    };
    let dirs = storage::layout::prepare(
        &opts.data_dir,
        owner_count,
        routing::COORDINATOR_PARTITIONS,
        opts.migrate_owners,
        storage::migrate::Migration {
            stop,
            threads: opts.migrate_threads,
        },
    )
    .map_err(StartError::Shards)?;
    // `groupcoord.max.groups` bounds the server, not each owner: every owner counts only its
    // own groups, so each gets its share (docs/sharding.md, "Limits").
    let mut coordinator = opts.coordinator.clone();
    coordinator.limits.max_groups = owner_share(coordinator.limits.max_groups, owner_count);
    let mut states: Vec<State> = (0..owner_count)
        .map(|_| {
            let mut coord = Coordinator::new(coordinator.clone());
            coord.set_assignment_offload(opts.assignment_offload_min_work);
            let mut state = State::new(coord, host.clone(), port);
            state.advertised = bound
                .iter()
                .map(|(_, e)| (e.name.clone(), e.advertised.clone()))
                .collect();
            state.authorizer = acl::Authorizer::new(&opts.server.authorizer);
            state.topic_defaults = opts.server.topic_defaults.clone();
            state
        })
        .collect();
    let mut logs = load_owners(&dirs, opts.snapshot_bytes, &mut states)?;

    // Topics from the command line (and the demo's).
    let mut wanted = opts.topics.clone();
    if opts.demo {
        wanted.push((
            tools::demo::DEMO_TOPIC.to_string(),
            tools::demo::DEMO_PARTITIONS,
        ));
    }
    let missing: Vec<TopicChange> = wanted
        .iter()
        .filter(|(n, _)| !states[0].topics.contains_key(n))
        .map(|(n, p)| TopicChange::Set {
            name: n.clone(),
            partitions: *p,
        })
        .collect();
    if !missing.is_empty() {
        states.iter_mut().for_each(|s| s.apply_topics(&missing));
        logs[0]
            .append(&[LogEntry::Topics(missing)])
            .map_err(|e| StartError::Other(format!("log append: {e}")))?;
        logs[0]
            .sync()
            .map_err(|e| StartError::Other(format!("log fsync: {e}")))?;
    }

    let (live_tx, _) = watch::channel(Arc::new(LiveSnapshot::default()));
    let mut live_req_txs = Vec::with_capacity(owner_count);
    let mut live_req_rxs = Vec::with_capacity(owner_count);
    let mut owner_txs = Vec::with_capacity(owner_count);
    let mut owner_rxs = Vec::with_capacity(owner_count);
    for _ in 0..owner_count {
        let (tx, rx) = mpsc::channel(64);
        live_req_txs.push(tx);
        live_req_rxs.push(rx);
        let (tx, rx) = mpsc::channel::<Job>(4096);
        owner_txs.push(tx);
        owner_rxs.push(rx);
    }
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let shutdown_tx = Arc::new(shutdown_tx);
    let shared = Arc::new(Shared {
        metrics: Metrics::default(),
        live: live_tx,
        live_requests: live_req_txs,
        live_parts: (0..owner_count).map(|_| Default::default()).collect(),
        owner: routing::Router::new(owner_txs),
        streams_enabled: opts.coordinator.streams_enabled,
        request_memory: MemoryBudget::new(server_budget(&opts.server)),
        authorize: opts.server.authorizer.enabled(),
        scram: states[0].scram.clone(),
        history: Default::default(),
        watch: Default::default(),
        phases: Default::default(),
    });
    // With --demo the history records from the start, before anyone looks: the demo group's
    // joins show when the page is opened. (Not otherwise: a benchmark right after start-up
    // would pay for it.)
    if opts.demo {
        shared.watch.looked(now_ms().0);
    }
    shared.metrics.log_bytes.store(
        logs.iter().map(|l| l.total_bytes()).sum(),
        std::sync::atomic::Ordering::Relaxed,
    );

    // With several owners: a registry queue per owner (owner 0 receives the others' registry
    // writes; the others receive owner 0's broadcasts).
    let (registry_txs, mut registry_rxs): (Vec<_>, Vec<_>) = (0..owner_count)
        .map(|_| {
            let (tx, rx) = mpsc::unbounded_channel::<owner::RegistryMsg>();
            (tx, Some(rx))
        })
        .unzip();
    let mut owner_threads = Vec::with_capacity(owner_count);
    let mut commit_threads = Vec::with_capacity(owner_count);
    let sharded = owner_count > 1;
    let spin = if opts.owner_spin_always {
        opts.owner_spin
    } else {
        owner_spin(opts.owner_spin, owner_count)
    };
    let parts = states
        .into_iter()
        .zip(logs)
        .zip(owner_rxs.into_iter().zip(live_req_rxs));
    for (i, ((state, log), (jobs, live_requests))) in parts.enumerate() {
        let peers = if sharded && i == 0 {
            registry_txs[1..].to_vec()
        } else {
            Vec::new()
        };
        let suffix = if sharded {
            format!("-{i}")
        } else {
            String::new()
        };
        let (committer, commit_thread) = Committer::spawn(
            log,
            shared.clone(),
            shutdown_tx.clone(),
            peers,
            format!("groupcoord-commit{suffix}"),
        )
        .map_err(|e| StartError::Other(format!("commit thread: {e}")))?;
        let owner = Owner {
            index: i,
            state,
            jobs,
            live_requests,
            committer,
            shared: shared.clone(),
            shutdown: shutdown_rx.clone(),
            spin,
            panic_on_client_id: opts.panic_owner_on_client_id.clone(),
            parked: Default::default(),
            assignments: owner::AssignmentWorker::spawn()
                .map_err(|e| StartError::Other(format!("assignment thread: {e}")))?,
            registry: if sharded {
                registry_rxs[i].take()
            } else {
                None
            },
            to_registry: (sharded && i > 0).then(|| registry_txs[0].clone()),
        };
        owner_threads.push(
            owner
                .spawn(format!("groupcoord-owner{suffix}"))
                .map_err(|e| StartError::Other(format!("owner thread: {e}")))?,
        );
        commit_threads.push(commit_thread);
    }
    drop(registry_txs);
    let open = listener::OpenConnections::default();
    let mut listeners = Vec::new();
    let mut acceptors = Vec::new();
    for (socket, endpoint) in bound {
        info!(
            listener = %endpoint.name,
            protocol = %endpoint.protocol,
            bound = %endpoint.bound,
            advertised = %format!("{}:{}", endpoint.advertised.0, endpoint.advertised.1),
            "listening"
        );
        listeners.push((endpoint.name.clone(), endpoint.protocol, endpoint.bound));
        acceptors.push(tokio::spawn(
            Listener::new(
                socket,
                shared.clone(),
                opts.clone(),
                shutdown_rx.clone(),
                Arc::new(endpoint),
                open.clone(),
            )
            .run(),
        ));
    }
    let acceptor = futures::future::join_all(acceptors);
    let http_addr = match opts.http {
        Some(a) => Some(
            web::http::start(
                a,
                shared.clone(),
                opts.www_dir.clone(),
                opts.data_dir.clone(),
                opts.http_token.clone(),
                shutdown_rx.clone(),
            )
            .await
            .map_err(|source| StartError::Bind { addr: a, source })?,
        ),
        None => None,
    };
    if opts.demo {
        tokio::spawn(tools::demo::run(
            shared.clone(),
            opts.coordinator.clone(),
            shutdown_rx.clone(),
        ));
    }
    info!(%addr, http = ?http_addr, data_dir = %opts.data_dir.display(), "groupcoord serving");
    let stop = shutdown_tx.clone();
    let done = tokio::spawn(async move {
        // An owner ends on shutdown, or on its own when it failed: either way everything else
        // stops with it, so that a dead owner never leaves a server that accepts connections
        // and cannot answer them.
        let (first, _, others) = futures::future::select_all(
            owner_threads
                .into_iter()
                .map(|t| tokio::task::spawn_blocking(move || t.join())),
        )
        .await;
        let _ = stop.send(true);
        let mut owner_results = vec![first.unwrap_or(Ok(()))];
        for r in futures::future::join_all(others).await {
            owner_results.push(r.unwrap_or(Ok(())));
        }
        let _ = acceptor.await;
        let mut commit_results = Vec::new();
        for t in commit_threads {
            commit_results.push(
                tokio::task::spawn_blocking(move || t.join())
                    .await
                    .unwrap_or(Ok(Ok(()))),
            );
        }
        let owner_panic = owner_results.into_iter().find_map(|r| r.err());
        let commit_failure = commit_results
            .into_iter()
            .find(|r| !matches!(r, Ok(Ok(()))));
        let result = match (owner_panic, commit_failure) {
            (Some(panic), _) => Err(ServerError::OwnerPanicked(panic_message(&panic))),
            (_, Some(Err(panic))) => Err(ServerError::CommitPanicked(panic_message(&panic))),
            (_, Some(Ok(Err(e)))) => Err(ServerError::Commit(e)),
            _ => Ok(()),
        };
        match &result {
            Ok(()) => info!("log flushed; server stopped"),
            Err(e) => error!("{e}"),
        }
        result
    });
    Ok(ServerHandle {
        addr,
        listeners,
        http_addr,
        shared,
        shutdown: shutdown_tx,
        done: Some(done),
        result: None,
    })
}

/// Replays every owner's log into its state: one log in place with one owner; with several,
/// every shard on a thread of its own, in parallel. Then the other owners take owner 0's
/// registries (only its log holds them), and owner 0's data plane the offset floors of every
/// owner's groups.
fn load_owners(
    dirs: &[PathBuf],
    snapshot_bytes: u64,
    states: &mut [State],
) -> Result<Vec<storage::log::Log>, StartError> {
    if let ([dir], [state]) = (dirs, &mut *states) {
        return Ok(vec![storage::recover(dir, snapshot_bytes, state)?]);
    }
    let t0 = std::time::Instant::now();
    let results: Vec<Result<storage::log::Log, StartError>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(dirs.len());
        for (i, (dir, state)) in dirs.iter().zip(states.iter_mut()).enumerate() {
            let spawned = std::thread::Builder::new()
                .name(format!("groupcoord-replay-{i}"))
                .spawn_scoped(scope, move || storage::recover(dir, snapshot_bytes, state));
            handles.push((dir, spawned));
        }
        handles
            .into_iter()
            .map(|(dir, h)| match h {
                Ok(h) => match h.join() {
                    Ok(r) => r.map_err(StartError::from),
                    Err(p) => Err(StartError::Other(format!(
                        "replay of {} panicked: {}",
                        dir.display(),
                        panic_message(&p)
                    ))),
                },
                Err(e) => Err(StartError::Other(format!(
                    "replay thread for {}: {e}",
                    dir.display()
                ))),
            })
            .collect()
    });
    let logs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let replayed_ms = t0.elapsed().as_millis() as u64;
    let (first, rest) = states.split_first_mut().expect("at least one owner");
    let mut floors = Vec::new();
    for s in rest.iter_mut() {
        s.adopt_registries(first).map_err(StartError::Other)?;
        floors.extend(s.committed_floors());
    }
    first.data.set_offset_floors(floors);
    info!(
        owners = dirs.len(),
        replay_ms = replayed_ms,
        ms = t0.elapsed().as_millis() as u64,
        "every shard replayed"
    );
    Ok(logs)
}

/// How long each owner spins for work after a batch: the configured spin while the owners are
/// fewer than the cores; none (park at once) when they are as many or more. A spinning owner
/// saves a park/unpark round trip under load, but with an owner on every core the spins take
/// the cores from the connection tasks that produce the owners' work (docs/sharding.md,
/// "Measurements").
fn owner_spin(spin: Duration, owners: usize) -> Duration {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if owners > 1 && owners >= cores {
        Duration::ZERO
    } else {
        spin
    }
}

/// One owner's share of a server-wide bound: rounded up, so that a bound of at least `owners`
/// still lets every owner hold something and the total stays under `bound + owners`.
fn owner_share(bound: i32, owners: usize) -> i32 {
    let owners = i32::try_from(owners.max(1)).unwrap_or(i32::MAX);
    let bound = bound.max(0);
    (bound / owners + i32::from(bound % owners != 0)).max(1)
}

/// `queued.max.request.bytes`, raised if needed so that one maximal frame (with its length
/// prefix) always fits: a smaller budget could never complete it.
fn server_budget(keys: &ServerKeys) -> i64 {
    match keys.queued_max_request_bytes {
        q if q <= 0 => -1,
        q => q.max(i64::from(keys.socket_request_max_bytes) + 4),
    }
}

fn panic_message(panic: &Box<dyn Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_share_rounds_up_and_never_reaches_zero() {
        assert_eq!(owner_share(100_000, 1), 100_000);
        assert_eq!(owner_share(100_000, 2), 50_000);
        assert_eq!(owner_share(5, 2), 3);
        assert_eq!(owner_share(1, 4), 1);
    }

    #[test]
    fn one_owner_keeps_its_spin() {
        let spin = Duration::from_micros(50);
        assert_eq!(owner_spin(spin, 1), spin);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(owner_spin(spin, cores.max(2)), Duration::ZERO);
    }
}
