//! `groupcoord bench load`: heartbeat load over TCP (many connections, pipelined), then the same
//! shape of load with ApiVersions only (the I/O baseline), and their ratio; with
//! `--compare-kafka`, the same heartbeat load against a real Apache Kafka 4.4 broker, alternating;
//! with `--compare-ceiling` (implied by `--compare-kafka`), also against a minimal responder that
//! answers with canned frames (`ceiling`): the most any server could show on this machine with
//! this generator.
//!
//! Every simulated member keeps exactly one heartbeat in flight: it sends the next one as soon as
//! the previous response arrives, acknowledging the tasks it was assigned. Members are spread
//! over the connections; each connection pipelines the heartbeats of its members. Two modes:
//! one connection per member (what Kafka clients do, the default) and 20 members multiplexed on
//! each connection.
//!
//! The generator is `--client-threads` OS threads (default 1), each driving its connections on
//! one poller (`load_driver`). Besides throughput and latency, every load reports the CPU time
//! per request of the server (all its threads; in-process the generator's threads are
//! subtracted; `--server-pid` for one at `--addr`, the broker's pid for Kafka) and of the
//! generator: on a shared 2-core machine throughput ratios swing with whatever else runs, CPU per
//! request much less. Each load also prints its responses per second (warm-up included) to
//! stderr, with the time of day, so that a stalled load shows when and how long it stalled.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::protocol::{StreamsGroupHeartbeatRequest, Subtopology, TaskIds, Topology};

use super::ceiling::Ceiling;
use super::load_driver::{self, Clock, Measured};
use crate::server::ServeOptions;

/// Arguments of `groupcoord bench load`.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadArgs {
    /// Simulated streams members (each keeps one heartbeat in flight).
    #[arg(long, default_value_t = 1000)]
    pub members: usize,
    /// Streams groups the members are spread over.
    #[arg(long, default_value_t = 10)]
    pub groups: usize,
    /// Measured seconds per load (after a warm-up in which the groups form).
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// TCP connections. Default: both modes, one connection per member (as Kafka clients
    /// connect) and 20 members multiplexed per connection.
    #[arg(long)]
    pub connections: Option<usize>,
    /// Warm-up seconds before measuring.
    #[arg(long, default_value_t = 3)]
    pub warmup: u64,
    /// Use a running server instead of starting one (with a temporary data dir).
    #[arg(long)]
    pub addr: Option<SocketAddr>,
    /// Measure each load this many times, alternating heartbeat and baseline rounds, so that a
    /// change in the machine's load hits both sides; the ratio is taken of the medians.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: u32,
    /// Also run the heartbeat load against a real Apache Kafka 4.4 broker (started with
    /// `--kafka-script`, its topic created), alternating with groupcoord in every round.
    #[arg(long)]
    pub compare_kafka: bool,
    /// The broker script (`start DIR` / `stop DIR`; needs the interop artifacts built).
    #[arg(long, default_value = "tests/interop/streams/kafka-broker.sh")]
    pub kafka_script: PathBuf,
    /// Port of the broker started for `--compare-kafka` (its controller takes the next one).
    #[arg(long, default_value_t = 19790)]
    pub kafka_port: u16,
    /// With `--compare-kafka`: a broker already running there instead of starting one.
    #[arg(long)]
    pub kafka_addr: Option<SocketAddr>,
    /// The pid of the server at `--addr`, to report its CPU time per request.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Load generator threads; each drives its share of the connections with non-blocking
    /// sockets on one poller.
    #[arg(long, default_value_t = 1)]
    pub client_threads: usize,
    /// Owner threads of the server it starts (`serve --owners`; not with `--addr`).
    #[arg(long, default_value_t = 1)]
    pub owners: usize,
    /// Put each connection's members in different groups: member i in group
    /// `(i + i / connections) % groups` instead of `i % groups`. With 20 members per connection
    /// and 10 groups a connection then carries 2 members of every group, so that with several
    /// owners every batch spans them (is split and merged); by default a connection's members
    /// are all in one group whenever the connections are a multiple of the groups.
    #[arg(long)]
    pub mix_groups: bool,
    /// Benchmark hook: the server's owners spin this long for work before parking, whatever
    /// the owner count (default: the server's rule, `owner_spin` in server/mod.rs).
    #[arg(long, hide = true)]
    pub owner_spin_us: Option<u64>,
    /// Also run the heartbeat load against a minimal responder in this process (canned answers,
    /// no decoding, no coordinator; implied by `--compare-kafka`), alternating with the others
    /// in every round: the most any server could show on this machine with this generator.
    #[arg(long)]
    pub compare_ceiling: bool,
    /// Threads of that responder (each runs one poller).
    #[arg(long, default_value_t = 1)]
    pub ceiling_threads: usize,
}

#[derive(Clone)]
pub(super) struct Slot {
    pub(super) group: String,
    pub(super) id: String,
    pub(super) epoch: i32,
    pub(super) active: Vec<TaskIds>,
    /// Owned tasks changed since they were last sent (a Kafka client sends the task lists only
    /// when they changed; `null` = unchanged).
    pub(super) send_tasks: bool,
    /// The last steady heartbeat frame (no task lists) and the epoch it was built for: a steady
    /// member sends the same bytes but the correlation id, so the load generator spends its CPU
    /// on the server's work rather than its own encoding.
    pub(super) steady_frame: Option<(i32, Vec<u8>)>,
}

pub(super) const TOPIC: &str = "bench-input";

fn topology() -> Topology {
    Topology {
        epoch: 0,
        subtopologies: vec![Subtopology {
            subtopology_id: "0".into(),
            source_topics: vec![TOPIC.into()],
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub(super) fn heartbeat(s: &Slot) -> StreamsGroupHeartbeatRequest {
    let joining = s.epoch <= 0;
    StreamsGroupHeartbeatRequest {
        group_id: s.group.clone(),
        member_id: s.id.clone(),
        member_epoch: s.epoch.max(0),
        rebalance_timeout_ms: if joining { 60_000 } else { -1 },
        topology: joining.then(topology),
        process_id: joining.then(|| format!("proc-{}", s.id)),
        active_tasks: (joining || s.send_tasks).then(|| s.active.clone()),
        standby_tasks: (joining || s.send_tasks).then(Vec::new),
        warmup_tasks: (joining || s.send_tasks).then(Vec::new),
        ..Default::default()
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Heartbeat,
    ApiVersions,
}

impl Kind {
    /// The request's api key and version.
    pub(super) fn api(self) -> (i16, i16) {
        match self {
            Kind::Heartbeat => (88, 1),
            Kind::ApiVersions => (18, 3),
        }
    }
}

/// The body of the baseline's ApiVersions request (v3).
pub(super) fn api_versions_body() -> Result<Vec<u8>, String> {
    use kafka_protocol::protocol::Encodable;
    let mut b = bytes::BytesMut::new();
    kafka_protocol::messages::ApiVersionsRequest::default()
        .encode(&mut b, 3)
        .map_err(|e| e.to_string())?;
    Ok(b.to_vec())
}

/// One measured row.
pub(crate) struct Row {
    pub(crate) server: &'static str,
    pub(crate) name: &'static str,
    pub(crate) connections: usize,
    pub(crate) slots: usize,
    pub(crate) per_sec: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) errors: u64,
    /// The server's CPU time per request over the measured window, µs (all its threads).
    pub(crate) server_us: Option<f64>,
    /// The load generator's CPU time per request, µs.
    pub(crate) client_us: f64,
    /// Responses in each second since the load started (warm-up included).
    pub(crate) per_second: Vec<u64>,
}

/// Where the server's CPU time is read.
#[derive(Clone)]
enum ServerCpu {
    /// The server runs in the bench's own process (its generator threads are subtracted).
    InProcess,
    /// A process of its own.
    Process(u32),
    /// The ceiling responder's threads.
    Ceiling(Arc<Ceiling>),
    Unknown,
}

impl ServerCpu {
    /// CPU time used so far by each thread, ns (the generator's threads included for
    /// `InProcess`).
    fn sample(&self) -> Option<Vec<(u32, u64)>> {
        match self {
            ServerCpu::InProcess => load_driver::process_threads_cpu_ns(std::process::id()),
            ServerCpu::Process(pid) => load_driver::process_threads_cpu_ns(*pid),
            ServerCpu::Ceiling(c) => c.threads_cpu_ns(),
            ServerCpu::Unknown => None,
        }
    }
}

/// The group of member `i` (`--mix-groups`: see [`LoadArgs::mix_groups`]).
fn group_of(i: usize, conns: usize, groups: usize, mix: bool) -> usize {
    let groups = groups.max(1);
    if mix {
        (i + i / conns.max(1)) % groups
    } else {
        i % groups
    }
}

async fn run_kind(
    addr: SocketAddr,
    a: &LoadArgs,
    kind: Kind,
    conns: usize,
    tag: &str,
    server_cpu: ServerCpu,
) -> Result<Row, String> {
    let conns = conns.clamp(1, a.members.max(1));
    let group_of = |i: usize| group_of(i, conns, a.groups, a.mix_groups);
    let slots: Vec<Slot> = (0..a.members)
        .map(|i| Slot {
            group: format!("bench-{tag}-group-{}", group_of(i)),
            id: format!("bench-member-{i}"),
            epoch: 0,
            active: vec![],
            send_tasks: false,
            steady_frame: None,
        })
        .collect();
    // Connection c carries the members i with i % conns == c; thread t drives the connections
    // c with c % threads == t.
    let threads = a.client_threads.clamp(1, conns);
    let mut per_thread: Vec<Vec<Vec<Slot>>> = vec![Vec::new(); threads];
    for c in 0..conns {
        let mine: Vec<Slot> = slots.iter().skip(c).step_by(conns).cloned().collect();
        per_thread[c % threads].push(mine);
    }
    let clock = Arc::new(Clock {
        connected: std::sync::Barrier::new(threads),
        start: std::sync::OnceLock::new(),
    });
    let times = (
        Duration::from_secs(a.warmup),
        Duration::from_secs(a.duration),
    );
    let mut tasks = Vec::new();
    for conns in per_thread {
        let clock = clock.clone();
        tasks.push(tokio::task::spawn_blocking(move || {
            load_driver::drive(addr, conns, kind, times, &clock)
        }));
    }
    // The load starts once every connection is up.
    let start = loop {
        if let Some(s) = clock.start.get() {
            break Some(*s);
        }
        if tasks.iter().all(|t| t.is_finished()) {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // The server's CPU time over the measured window (its threads' schedstat).
    let (mut cpu_from, mut cpu_to) = (None, None);
    if let Some(start) = start {
        tokio::time::sleep_until((start + times.0).into()).await;
        cpu_from = server_cpu.sample();
        tokio::time::sleep_until((start + times.0 + times.1).into()).await;
        cpu_to = server_cpu.sample();
    }
    let mut total = Measured::default();
    for t in tasks {
        total.merge(t.await.map_err(|e| e.to_string())??);
    }
    let server_cpu_ns = match (cpu_from, cpu_to) {
        // In-process, the generator's threads are the process's too.
        (Some(a), Some(b)) if matches!(server_cpu, ServerCpu::InProcess) => {
            Some(load_driver::cpu_ns_between(&a, &b).saturating_sub(total.cpu_ns))
        }
        (Some(a), Some(b)) => Some(load_driver::cpu_ns_between(&a, &b)),
        _ => None,
    };
    let per_request_us = |ns: u64| ns as f64 / 1000.0 / total.done.max(1) as f64;
    total.latencies_us.sort_unstable();
    let pct = |p: f64| -> f64 {
        if total.latencies_us.is_empty() {
            return 0.0;
        }
        let i = ((total.latencies_us.len() as f64 - 1.0) * p).round() as usize;
        total.latencies_us[i] as f64 / 1000.0
    };
    Ok(Row {
        server: "groupcoord",
        name: match kind {
            Kind::Heartbeat => "StreamsGroupHeartbeat",
            Kind::ApiVersions => "ApiVersions (baseline)",
        },
        connections: conns,
        slots: a.members,
        per_sec: total.done as f64 / a.duration.max(1) as f64,
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        errors: total.errors,
        server_us: server_cpu_ns.map(per_request_us),
        client_us: per_request_us(total.cpu_ns),
        per_second: total.per_second,
    })
}

/// A broker started for `--compare-kafka`: stopped, and its directory removed, when dropped.
struct Broker {
    script: PathBuf,
    dir: PathBuf,
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Start a single-node Apache Kafka 4.4 broker with the interop script.
fn start_broker(a: &LoadArgs) -> Result<(Broker, SocketAddr), String> {
    let dir = std::env::temp_dir().join(format!("groupcoord-bench-kafka-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let broker = Broker {
        script: a.kafka_script.clone(),
        dir: dir.clone(),
    };
    let out = Command::new("bash")
        .arg(&a.kafka_script)
        .arg("start")
        .arg(&dir)
        .env("KAFKA_PORT", a.kafka_port.to_string())
        .env("KAFKA_CONTROLLER_PORT", (a.kafka_port + 1).to_string())
        // groupcoord's defaults: no standbys, no warm-ups.
        .env("STREAMS_STANDBY", "0")
        .env("STREAMS_WARMUPS", "0")
        .output()
        .map_err(|e| format!("{}: {e}", a.kafka_script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} start failed: {}",
            a.kafka_script.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let addr = stdout
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("no broker address in {stdout:?}"))?;
    Ok((broker, addr))
}

/// Create the bench topic on the broker and wait until its group coordinator answers streams
/// heartbeats (the offsets topic is created on the first FindCoordinator).
async fn prepare_kafka(addr: SocketAddr, partitions: i32) -> Result<(), String> {
    use kafka_protocol::messages::create_topics_request::CreatableTopic;
    use kafka_protocol::messages::{CreateTopicsRequest, FindCoordinatorRequest, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let mut c = super::client::Client::connect(addr).await?;
    let mut t = CreatableTopic::default();
    t.name = TopicName(StrBytes::from_static_str(TOPIC));
    t.num_partitions = partitions;
    t.replication_factor = 1;
    let mut r = CreateTopicsRequest::default();
    r.topics = vec![t];
    r.timeout_ms = 30_000;
    let resp = c.call(5, &r).await?;
    // 36: TOPIC_ALREADY_EXISTS (a broker given with --kafka-addr).
    if let Some(e) = resp
        .topics
        .iter()
        .find(|t| t.error_code != 0 && t.error_code != 36)
    {
        return Err(format!("CreateTopics on Kafka: error {}", e.error_code));
    }
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let mut f = FindCoordinatorRequest::default();
        f.key_type = 0;
        f.coordinator_keys = vec![StrBytes::from_static_str("bench-probe")];
        let ok = c
            .call(4, &f)
            .await?
            .coordinators
            .first()
            .is_some_and(|x| x.error_code == 0);
        if ok {
            let mut probe = Slot {
                group: "bench-probe".into(),
                id: "bench-probe-member".into(),
                epoch: 0,
                active: vec![],
                send_tasks: false,
                steady_frame: None,
            };
            let r = c.heartbeat(1, &heartbeat(&probe)).await?;
            if r.error_code == 0 {
                probe.epoch = -1;
                let mut leave = heartbeat(&probe);
                leave.member_epoch = -1;
                c.heartbeat(1, &leave).await?;
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            return Err("Kafka's group coordinator did not come up in 90 s".into());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The time of day, UTC (hh:mm:ss), for the per-load lines.
fn utc_clock() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Runs `groupcoord bench load` (starting a server of its own unless `--addr` is given) and prints the report.
pub async fn run_load(a: LoadArgs) -> ExitCode {
    let mut tmp = None;
    let parts = (a.members / a.groups.max(1)).max(8) as i32;
    let (addr, server) = match a.addr {
        Some(addr) => (addr, None),
        None => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let dir = std::env::temp_dir()
                .join(format!("groupcoord-bench-{}-{nanos}", std::process::id()));
            let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.clone());
            o.topics = vec![(TOPIC.to_string(), parts)];
            o.coordinator.initial_rebalance_delay_ms = 0;
            o.max_inflight_per_connection = 1024;
            o.owners = a.owners.max(1);
            if let Some(us) = a.owner_spin_us {
                o.owner_spin = Duration::from_micros(us);
                o.owner_spin_always = true;
            }
            tmp = Some(dir);
            match crate::server::start(o).await {
                Ok(h) => (h.addr, Some(h)),
                Err(e) => {
                    eprintln!("bench: cannot start server: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    };
    let mut _broker: Option<Broker> = None;
    let kafka = if a.compare_kafka {
        let kafka_addr = match a.kafka_addr {
            Some(k) => k,
            None => match start_broker(&a) {
                Ok((b, k)) => {
                    _broker = Some(b);
                    k
                }
                Err(e) => {
                    eprintln!("bench: {e}");
                    return stop(server, tmp, ExitCode::from(1)).await;
                }
            },
        };
        if let Err(e) = prepare_kafka(kafka_addr, parts).await {
            eprintln!("bench: {e}");
            return stop(server, tmp, ExitCode::from(1)).await;
        }
        Some(kafka_addr)
    } else {
        None
    };
    // The broker's pid (the script writes it), for its CPU time per request.
    let kafka_cpu = _broker
        .as_ref()
        .and_then(|b| std::fs::read_to_string(b.dir.join("broker.pid")).ok())
        .and_then(|p| p.trim().parse().ok())
        .map_or(ServerCpu::Unknown, ServerCpu::Process);
    let ceiling = if a.compare_ceiling || a.compare_kafka {
        match Ceiling::start(a.ceiling_threads) {
            Ok(c) => Some(Arc::new(c)),
            Err(e) => {
                eprintln!("bench: ceiling responder: {e}");
                return stop(server, tmp, ExitCode::from(1)).await;
            }
        }
    } else {
        None
    };
    let mut modes = match a.connections {
        Some(c) => vec![c],
        None => vec![a.members, a.members.div_ceil(20)],
    };
    modes
        .iter_mut()
        .for_each(|c| *c = (*c).clamp(1, a.members.max(1)));
    modes.dedup();
    println!(
        "groupcoord bench load: {} members in {} groups, {}s warm-up + {}s measured per load, server {}{}{}",
        a.members,
        a.groups,
        a.warmup,
        a.duration,
        if server.is_some() {
            format!("in-process at {addr}")
        } else {
            format!("at {addr}")
        },
        kafka
            .map(|k| format!(", Apache Kafka 4.4 at {k}"))
            .unwrap_or_default(),
        ceiling
            .as_ref()
            .map(|c| format!(
                ", ceiling (canned answers, {} thread(s)) at {}",
                a.ceiling_threads.max(1),
                c.addr
            ))
            .unwrap_or_default()
    );
    // (round, row)
    let mut rows: Vec<(u32, Row)> = Vec::new();
    for round in 0..a.rounds {
        for &conns in &modes {
            let tag = format!("r{round}c{conns}");
            let ours = match (&server, a.server_pid) {
                (Some(_), _) => ServerCpu::InProcess,
                (None, Some(pid)) => ServerCpu::Process(pid),
                (None, None) => ServerCpu::Unknown,
            };
            let mut loads = vec![
                (addr, Kind::Heartbeat, "groupcoord", ours.clone()),
                (addr, Kind::ApiVersions, "groupcoord", ours),
            ];
            if let Some(k) = kafka {
                loads.push((k, Kind::Heartbeat, "kafka", kafka_cpu.clone()));
            }
            if let Some(c) = &ceiling {
                loads.push((
                    c.addr,
                    Kind::Heartbeat,
                    "ceiling",
                    ServerCpu::Ceiling(c.clone()),
                ));
            }
            for (target, kind, who, cpu) in loads {
                match run_kind(target, &a, kind, conns, &tag, cpu).await {
                    Ok(mut r) => {
                        r.server = who;
                        // A timeline per load: a stall shows as a run of small counts.
                        eprintln!(
                            "[{}] round {} {who} {} on {conns} connections: {:.0}/s (generator {:.0}% of a core{}); responses per second (warm-up included): {}",
                            utc_clock(),
                            round + 1,
                            r.name,
                            r.per_sec,
                            r.client_us * r.per_sec / 1e4,
                            r.server_us
                                .map(|us| format!(", server {:.0}%", us * r.per_sec / 1e4))
                                .unwrap_or_default(),
                            r.per_second
                                .iter()
                                .map(u64::to_string)
                                .collect::<Vec<_>>()
                                .join(" ")
                        );
                        rows.push((round + 1, r));
                    }
                    Err(e) => {
                        eprintln!("bench: {who}: {e}");
                        return stop(server, tmp, ExitCode::from(1)).await;
                    }
                }
            }
        }
    }
    println!();
    println!(
        "| load | round | connections | in flight | requests/s | p50 ms | p99 ms | errors | server CPU µs/request | generator CPU µs/request |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (round, r) in &rows {
        let name = match r.server {
            "kafka" => "StreamsGroupHeartbeat, Apache Kafka 4.4",
            "ceiling" => "StreamsGroupHeartbeat, ceiling (canned answers)",
            _ => r.name,
        };
        let server_us = r.server_us.map_or("?".to_string(), |us| format!("{us:.1}"));
        println!(
            "| {name} | {round} | {} | {} | {:.0} | {:.2} | {:.2} | {} | {server_us} | {:.1} |",
            r.connections, r.slots, r.per_sec, r.p50_ms, r.p99_ms, r.errors, r.client_us
        );
    }
    println!();
    let mut first_ratio = None;
    for &conns in &modes {
        let pick = |server: &str, kind: &str| -> Vec<f64> {
            rows.iter()
                .filter(|(_, r)| r.connections == conns && r.server == server && r.name == kind)
                .map(|(_, r)| r.per_sec)
                .collect()
        };
        let cpu = |server: &str, kind: &str| -> Option<f64> {
            let v: Vec<f64> = rows
                .iter()
                .filter(|(_, r)| r.connections == conns && r.server == server && r.name == kind)
                .filter_map(|(_, r)| r.server_us)
                .collect();
            (!v.is_empty()).then(|| median(v))
        };
        let hb = pick("groupcoord", "StreamsGroupHeartbeat");
        let api = pick("groupcoord", "ApiVersions (baseline)");
        let per_round = |x: &[f64], y: &[f64]| -> String {
            x.iter()
                .zip(y)
                .map(|(a, b)| format!("{:.2}", a / b.max(1.0)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ratio = median(hb.clone()) / median(api.clone()).max(1.0);
        first_ratio.get_or_insert(ratio);
        println!(
            "{conns} connections: median heartbeats/s {:.0}, median baseline/s {:.0}; \
             heartbeat / baseline {ratio:.2} (per-round ratios {})",
            median(hb.clone()),
            median(api.clone()),
            per_round(&hb, &api)
        );
        if kafka.is_some() {
            let k = pick("kafka", "StreamsGroupHeartbeat");
            println!(
                "{conns} connections: median Kafka 4.4 heartbeats/s {:.0}; groupcoord / Kafka {:.2} \
                 (per-round ratios {})",
                median(k.clone()),
                median(hb.clone()) / median(k.clone()).max(1.0),
                per_round(&hb, &k)
            );
        }
        if ceiling.is_some() {
            let top = pick("ceiling", "StreamsGroupHeartbeat");
            let k = pick("kafka", "StreamsGroupHeartbeat");
            let top_median = median(top.clone());
            println!(
                "{conns} connections: median ceiling heartbeats/s {top_median:.0} (canned answers: \
                 the most any server could show on this machine with this generator); \
                 groupcoord / ceiling {:.2} (per-round ratios {}){}",
                median(hb.clone()) / top_median.max(1.0),
                per_round(&hb, &top),
                if k.is_empty() {
                    String::new()
                } else {
                    let ceiling_over_kafka = top_median / median(k.clone()).max(1.0);
                    format!(
                        "; ceiling / Kafka {ceiling_over_kafka:.2} (per-round ratios {}): \
                         5× Kafka is {}",
                        per_round(&top, &k),
                        if ceiling_over_kafka >= 5.0 {
                            "within this machine's reach"
                        } else {
                            "beyond this machine with this generator, whatever the server does"
                        }
                    )
                }
            );
            if let Some(c) = cpu("ceiling", "StreamsGroupHeartbeat") {
                let generator = median(
                    rows.iter()
                        .filter(|(_, r)| r.connections == conns && r.server == "ceiling")
                        .map(|(_, r)| r.client_us)
                        .collect(),
                );
                // Generator and responder together cannot use more than every core.
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                let bound = cores as f64 * 1e6 / (c + generator).max(1e-9);
                println!(
                    "{conns} connections: median ceiling CPU per request {c:.1} µs (server side), \
                     generator {generator:.1} µs: even with all {cores} cores busy at that cost, \
                     at most {bound:.0} requests/s{}",
                    if k.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " ({:.2}× Kafka's median)",
                            bound / median(k.clone()).max(1.0)
                        )
                    }
                );
            }
        }
        // CPU per request does not depend on how much of the machine the servers got.
        if let (Some(h), Some(b)) = (
            cpu("groupcoord", "StreamsGroupHeartbeat"),
            cpu("groupcoord", "ApiVersions (baseline)"),
        ) {
            let k = cpu("kafka", "StreamsGroupHeartbeat");
            println!(
                "{conns} connections: median server CPU per request: heartbeat {h:.1} µs, \
                 ApiVersions {b:.1} µs (baseline / heartbeat {:.2}){}",
                b / h.max(1e-9),
                k.map(|k| format!(
                    ", Kafka 4.4 heartbeat {k:.1} µs (Kafka / groupcoord {:.2})",
                    k / h.max(1e-9)
                ))
                .unwrap_or_default()
            );
        }
    }
    println!(
        "heartbeat / baseline throughput ratio: {:.2}",
        first_ratio.unwrap_or(0.0)
    );
    stop(server, tmp, ExitCode::SUCCESS).await
}

/// Stop the in-process server (if any) and remove its data dir. Also on an error: a server left
/// running keeps the runtime (and so the process) from ending.
async fn stop(
    server: Option<crate::server::ServerHandle>,
    tmp: Option<PathBuf>,
    code: ExitCode,
) -> ExitCode {
    if let Some(h) = server {
        h.shutdown().await;
    }
    if let Some(d) = tmp {
        let _ = std::fs::remove_dir_all(d);
    }
    code
}

#[cfg(test)]
mod group_tests {
    use super::group_of;
    use std::collections::BTreeMap;

    /// Per connection (members i with i % conns == c): members per group.
    fn per_connection(conns: usize, mix: bool) -> Vec<BTreeMap<usize, usize>> {
        let mut out = vec![BTreeMap::new(); conns];
        for i in 0..1000 {
            *out[i % conns]
                .entry(group_of(i, conns, 10, mix))
                .or_default() += 1;
        }
        out
    }

    /// 50 connections, 10 groups: by default a connection's 20 members are all in one group;
    /// with --mix-groups 2 of every group. Every group keeps 100 members either way.
    #[test]
    fn mix_groups_spreads_a_connections_members_over_every_group() {
        for c in per_connection(50, false) {
            assert_eq!(c.len(), 1, "{c:?}");
        }
        for c in per_connection(50, true) {
            assert_eq!(c.len(), 10, "{c:?}");
            assert!(c.values().all(|n| *n == 2), "{c:?}");
        }
        for mix in [false, true] {
            let mut total = BTreeMap::new();
            for i in 0..1000 {
                *total.entry(group_of(i, 50, 10, mix)).or_insert(0) += 1;
            }
            assert!(total.values().all(|n| *n == 100), "{total:?}");
            // One member per connection: the same groups as without the flag.
            assert!((0..1000).all(|i| group_of(i, 1000, 10, mix) == i % 10));
        }
    }
}
