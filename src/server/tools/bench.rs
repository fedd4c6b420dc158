//! `groupcoord bench load`: heartbeat load over TCP (many connections, pipelined), then the same
//! shape of load with ApiVersions only (the I/O baseline), and their ratio; with
//! `--compare-kafka`, the same heartbeat load against a real Apache Kafka 4.4 broker, alternating.
//!
//! Every simulated member keeps exactly one heartbeat in flight: it sends the next one as soon as
//! the previous response arrives, acknowledging the tasks it was assigned. Members are spread
//! over the connections; each connection pipelines the heartbeats of its members. Two modes:
//! one connection per member (what Kafka clients do, the default) and 20 members multiplexed on
//! each connection.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::protocol::{StreamsGroupHeartbeatRequest, Subtopology, TaskIds, Topology};

use super::client::{decode_heartbeat, heartbeat_body, raw_frame};
use crate::server::{ServeOptions, wire};

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
}

#[derive(Clone)]
struct Slot {
    group: String,
    id: String,
    epoch: i32,
    active: Vec<TaskIds>,
    /// Owned tasks changed since they were last sent (a Kafka client sends the task lists only
    /// when they changed; `null` = unchanged).
    send_tasks: bool,
    /// The last steady heartbeat frame (no task lists) and the epoch it was built for: a steady
    /// member sends the same bytes but the correlation id, so the load generator spends its CPU
    /// on the server's work rather than its own encoding.
    steady_frame: Option<(i32, Vec<u8>)>,
}

const TOPIC: &str = "bench-input";

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

fn heartbeat(s: &Slot) -> StreamsGroupHeartbeatRequest {
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

#[derive(Default)]
struct ConnResult {
    done: u64,
    errors: u64,
    latencies_us: Vec<u32>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Heartbeat,
    ApiVersions,
}

/// Drive one connection until `end`; only responses after `measure_from` count.
async fn drive(
    addr: SocketAddr,
    mut slots: Vec<Slot>,
    kind: Kind,
    measure_from: Instant,
    end: Instant,
) -> Result<ConnResult, String> {
    let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    stream.set_nodelay(true).ok();
    let (rd, mut wr) = stream.into_split();
    let mut rd = BufReader::with_capacity(256 * 1024, rd);
    let api_versions_body = {
        use kafka_protocol::protocol::Encodable;
        let mut b = bytes::BytesMut::new();
        kafka_protocol::messages::ApiVersionsRequest::default()
            .encode(&mut b, 3)
            .map_err(|e| e.to_string())?;
        b.to_vec()
    };
    let (key, version) = match kind {
        Kind::Heartbeat => (88i16, 1i16),
        Kind::ApiVersions => (18, 3),
    };
    let mut corr: i32 = 0;
    // correlation id -> (slot index, sent at); responses come back in order.
    let mut inflight: std::collections::VecDeque<(i32, usize, Instant)> = Default::default();
    let mut out = Vec::with_capacity(64 * 1024);
    let encode = |s: &mut Slot, corr: i32, out: &mut Vec<u8>| -> Result<(), String> {
        let steady = kind == Kind::ApiVersions || (s.epoch > 0 && !s.send_tasks);
        if steady
            && let Some((epoch, frame)) = &s.steady_frame
            && *epoch == s.epoch
        {
            let at = out.len();
            out.extend_from_slice(frame);
            // Frame layout: length (4), api key (2), api version (2), correlation id (4).
            out[at + 8..at + 12].copy_from_slice(&corr.to_be_bytes());
            return Ok(());
        }
        let body = match kind {
            Kind::Heartbeat => heartbeat_body(&heartbeat(s), version)?,
            Kind::ApiVersions => api_versions_body.clone(),
        };
        let frame = raw_frame(key, version, corr, Some("bench"), &body)?;
        out.extend_from_slice(&frame);
        if steady {
            s.steady_frame = Some((s.epoch, frame));
        }
        Ok(())
    };
    for (i, s) in slots.iter_mut().enumerate() {
        corr += 1;
        encode(s, corr, &mut out)?;
        s.send_tasks = false;
        inflight.push_back((corr, i, Instant::now()));
    }
    wr.write_all(&out).await.map_err(|e| e.to_string())?;
    out.clear();
    let mut res = ConnResult::default();
    let mut frame = Vec::new();
    while let Some((c, i, sent)) = inflight.pop_front() {
        let mut len = [0u8; 4];
        rd.read_exact(&mut len).await.map_err(|e| e.to_string())?;
        frame.resize(u32::from_be_bytes(len) as usize, 0);
        rd.read_exact(&mut frame).await.map_err(|e| e.to_string())?;
        let now = Instant::now();
        let (rc, body) = wire::split_response(key, version, &frame)?;
        if rc != c {
            return Err(format!("correlation {rc} != {c}"));
        }
        let mut error = false;
        if kind == Kind::Heartbeat {
            let r = decode_heartbeat(body, version)?;
            let s = &mut slots[i];
            if r.error_code != 0 {
                error = true;
                s.epoch = 0;
                s.active.clear();
            } else {
                s.epoch = r.member_epoch;
                if let Some(a) = r.active_tasks {
                    s.active = a;
                    s.send_tasks = true;
                }
            }
        }
        if now >= measure_from {
            res.done += 1;
            if error {
                res.errors += 1;
            }
            res.latencies_us
                .push(now.duration_since(sent).as_micros().min(u32::MAX as u128) as u32);
        }
        if now < end {
            corr = corr.wrapping_add(1);
            encode(&mut slots[i], corr, &mut out)?;
            slots[i].send_tasks = false;
            inflight.push_back((corr, i, now));
        }
        // Flush when nothing more is already buffered.
        if !out.is_empty() && rd.buffer().is_empty() {
            wr.write_all(&out).await.map_err(|e| e.to_string())?;
            out.clear();
        }
    }
    if kind == Kind::Heartbeat {
        // Leave the group (epoch -1), as a closing client does, so the next round starts from
        // an empty server instead of members waiting out their session timeouts.
        for s in &slots {
            corr = corr.wrapping_add(1);
            let leave = StreamsGroupHeartbeatRequest {
                group_id: s.group.clone(),
                member_id: s.id.clone(),
                member_epoch: -1,
                ..Default::default()
            };
            let body = heartbeat_body(&leave, version)?;
            out.extend_from_slice(&raw_frame(key, version, corr, Some("bench"), &body)?);
        }
        wr.write_all(&out).await.map_err(|e| e.to_string())?;
        for _ in &slots {
            let mut len = [0u8; 4];
            rd.read_exact(&mut len).await.map_err(|e| e.to_string())?;
            frame.resize(u32::from_be_bytes(len) as usize, 0);
            rd.read_exact(&mut frame).await.map_err(|e| e.to_string())?;
        }
    }
    Ok(res)
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
}

async fn run_kind(
    addr: SocketAddr,
    a: &LoadArgs,
    kind: Kind,
    conns: usize,
    tag: &str,
) -> Result<Row, String> {
    let conns = conns.clamp(1, a.members.max(1));
    let slots: Vec<Slot> = (0..a.members)
        .map(|i| Slot {
            group: format!("bench-{tag}-group-{}", i % a.groups.max(1)),
            id: format!("bench-member-{i}"),
            epoch: 0,
            active: vec![],
            send_tasks: false,
            steady_frame: None,
        })
        .collect();
    let start = Instant::now();
    let measure_from = start + Duration::from_secs(a.warmup);
    let end = measure_from + Duration::from_secs(a.duration);
    let mut tasks = Vec::new();
    for c in 0..conns {
        let mine: Vec<Slot> = slots
            .iter()
            .enumerate()
            .filter(|(i, _)| i % conns == c)
            .map(|(_, s)| s.clone())
            .collect();
        tasks.push(tokio::spawn(drive(addr, mine, kind, measure_from, end)));
    }
    let mut total = ConnResult::default();
    for t in tasks {
        let r = t.await.map_err(|e| e.to_string())??;
        total.done += r.done;
        total.errors += r.errors;
        total.latencies_us.extend(r.latencies_us);
    }
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
    let mut _broker = None;
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
                    return ExitCode::from(1);
                }
            },
        };
        if let Err(e) = prepare_kafka(kafka_addr, parts).await {
            eprintln!("bench: {e}");
            return ExitCode::from(1);
        }
        Some(kafka_addr)
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
        "groupcoord bench load: {} members in {} groups, {}s warm-up + {}s measured per load, server {}{}",
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
            .unwrap_or_default()
    );
    // (round, row)
    let mut rows: Vec<(u32, Row)> = Vec::new();
    for round in 0..a.rounds {
        for &conns in &modes {
            let tag = format!("r{round}c{conns}");
            let mut loads = vec![
                (addr, Kind::Heartbeat, "groupcoord"),
                (addr, Kind::ApiVersions, "groupcoord"),
            ];
            if let Some(k) = kafka {
                loads.push((k, Kind::Heartbeat, "kafka"));
            }
            for (target, kind, server) in loads {
                match run_kind(target, &a, kind, conns, &tag).await {
                    Ok(mut r) => {
                        r.server = server;
                        rows.push((round + 1, r));
                    }
                    Err(e) => {
                        eprintln!("bench: {server}: {e}");
                        return ExitCode::from(1);
                    }
                }
            }
        }
    }
    println!();
    println!("| load | round | connections | in flight | requests/s | p50 ms | p99 ms | errors |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (round, r) in &rows {
        let name = if r.server == "kafka" {
            "StreamsGroupHeartbeat, Apache Kafka 4.4"
        } else {
            r.name
        };
        println!(
            "| {name} | {round} | {} | {} | {:.0} | {:.2} | {:.2} | {} |",
            r.connections, r.slots, r.per_sec, r.p50_ms, r.p99_ms, r.errors
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
    }
    println!(
        "heartbeat / baseline throughput ratio: {:.2}",
        first_ratio.unwrap_or(0.0)
    );
    if let Some(h) = server {
        h.shutdown().await;
    }
    if let Some(d) = tmp {
        let _ = std::fs::remove_dir_all(d);
    }
    ExitCode::SUCCESS
}
