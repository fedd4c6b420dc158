//! `groupcoord bench hostile --addr HOST:PORT --pid PID`: an adversarial run against a running
//! server, with a well-behaved client heartbeating throughout.
//!
//! Phases, in order: mutated frames (valid requests of many keys with random byte flips,
//! overwritten words and truncation; the length prefix is kept consistent so each frame is judged
//! on its content), idle connections opened then closed, the poison requests of issue 11
//! (CreateTopics of 2^31-1 partitions, a heartbeat whose repartition topic declares 2^31-1
//! partitions, each followed by a Metadata request), and connections each claiming a huge body
//! and sending nothing more (last: on a server without incremental frame reads this is the phase
//! most likely to kill it). Prints crashes (the server stopped answering or its pid is gone),
//! RSS before / peak / after from `/proc/PID/status`, and the well-behaved client's latency.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::protocol::{StreamsGroupHeartbeatRequest, Subtopology, TopicInfo, Topology};

use super::client::Client;
use crate::server::wire::{self, Header, Req, RequestKind};

/// Arguments of `groupcoord bench hostile`.
#[derive(Debug, Clone, clap::Args)]
pub struct HostileArgs {
    /// The server under test.
    #[arg(long)]
    pub addr: SocketAddr,
    /// Its process id (RSS from /proc/PID/status; a vanished pid counts as a crash).
    #[arg(long)]
    pub pid: Option<u32>,
    /// Mutated frames to send.
    #[arg(long, default_value_t = 100_000)]
    pub frames: usize,
    /// Connections each claiming a huge body.
    #[arg(long, default_value_t = 200)]
    pub claims: usize,
    /// The body size each of those connections claims.
    #[arg(long, default_value_t = 100 * 1024 * 1024)]
    pub claim_bytes: u32,
    /// Idle connections opened, held, then closed.
    #[arg(long, default_value_t = 5_000)]
    pub idle: usize,
    /// Seed of the mutations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

const GOOD_TOPIC: &str = "hostile-bench-input";

/// Resident set size of `pid` in bytes.
fn rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn frame(key: i16, version: i16, req: Req) -> Vec<u8> {
    let h = Header {
        api_key: key,
        api_version: version,
        correlation_id: 1,
        client_id: Some("hostile".into()),
    };
    wire::encode_request(&h, &req)
        .map(|b| b.to_vec())
        .unwrap_or_default()
}

fn topology(repartition_partitions: i32) -> Topology {
    Topology {
        epoch: 0,
        subtopologies: vec![
            Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec![GOOD_TOPIC.into()],
                repartition_sink_topics: vec!["hostile-rep".into()],
                ..Default::default()
            },
            Subtopology {
                subtopology_id: "1".into(),
                repartition_source_topics: vec![TopicInfo {
                    name: "hostile-rep".into(),
                    partitions: repartition_partitions,
                    ..Default::default()
                }],
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

fn join(group: &str, member: &str, t: Topology) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        topology: Some(t),
        process_id: Some(format!("{member}-process")),
        active_tasks: Some(vec![]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    }
}

/// Valid request frames (length prefix included) to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for v in [0, 3, 4] {
        let mut r = ApiVersionsRequest::default();
        if v >= 3 {
            r.client_software_name = s("hostile");
            r.client_software_version = s("1");
        }
        out.push(frame(18, v, Req::ApiVersions(r)));
    }
    for v in [1, 9, 12] {
        let mut t = MetadataRequestTopic::default();
        t.name = Some(TopicName(s(GOOD_TOPIC)));
        let mut r = MetadataRequest::default();
        r.topics = Some(vec![t.clone(), t]);
        out.push(frame(3, v, Req::Kafka(RequestKind::Metadata(r))));
    }
    for v in [2, 7] {
        let mut t = CreatableTopic::default();
        t.name = TopicName(s("hostile-created"));
        t.num_partitions = 2;
        t.replication_factor = -1;
        let mut r = CreateTopicsRequest::default();
        r.topics = vec![t];
        out.push(frame(19, v, Req::Kafka(RequestKind::CreateTopics(r))));
    }
    for v in [2, 9] {
        let mut p = OffsetCommitRequestPartition::default();
        p.committed_offset = 5;
        let mut t = OffsetCommitRequestTopic::default();
        t.name = TopicName(s(GOOD_TOPIC));
        t.partitions = vec![p];
        let mut r = OffsetCommitRequest::default();
        r.group_id = GroupId(s("hostile-g"));
        r.member_id = s("m");
        r.topics = vec![t];
        out.push(frame(8, v, Req::Kafka(RequestKind::OffsetCommit(r))));
    }
    let mut r = ListGroupsRequest::default();
    r.states_filter = vec![s("Stable")];
    out.push(frame(16, 4, Req::Kafka(RequestKind::ListGroups(r))));
    let mut r = FindCoordinatorRequest::default();
    r.coordinator_keys = vec![s("hostile-g")];
    out.push(frame(10, 4, Req::Kafka(RequestKind::FindCoordinator(r))));
    for v in [0, 1] {
        out.push(frame(
            88,
            v,
            Req::Heartbeat(join("hostile-mutant", "m", topology(4))),
        ));
    }
    out.retain(|f| !f.is_empty());
    out
}

fn mutate(rng: &mut Pcg64, seed: &[u8]) -> Vec<u8> {
    let mut f = seed.to_vec();
    let edits = 1 + rng.next_u32() % 4;
    for _ in 0..edits {
        // Leave the length prefix and the api key/version alone: mutate what the decoders see.
        if f.len() <= 8 {
            break;
        }
        let i = 8 + (rng.next_u32() as usize) % (f.len() - 8);
        match rng.next_u32() % 4 {
            0 => f[i] ^= 1 << (rng.next_u32() % 8),
            1 => {
                let w = rng.next_u32().to_be_bytes();
                for (k, b) in w.iter().enumerate() {
                    if let Some(x) = f.get_mut(i + k) {
                        *x = *b;
                    }
                }
            }
            2 => f[i] = 0xff,
            _ => {
                let keep = i.max(8);
                f.truncate(keep);
            }
        }
    }
    let len = (f.len() - 4) as u32;
    f[0..4].copy_from_slice(&len.to_be_bytes());
    f
}

/// Send one frame on a fresh connection, half-close, read until the server closes.
async fn send_one(addr: SocketAddr, f: &[u8]) -> Result<(), String> {
    let mut c = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
        .await
        .map_err(|_| "connect timed out".to_string())?
        .map_err(|e| e.to_string())?;
    let _ = c.write_all(f).await;
    let _ = c.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Ok(n) = c.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
    Ok(())
}

/// The well-behaved client: a streams member heartbeating every 20 ms, and a Metadata request
/// after each heartbeat; every round trip's latency is kept.
async fn well_behaved(
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    errors: Arc<AtomicU64>,
) -> Vec<Duration> {
    let mut lat = Vec::new();
    let Ok(mut c) = Client::connect(addr).await else {
        errors.fetch_add(1, Relaxed);
        return lat;
    };
    let mut req = join("hostile-good", "good-member", {
        let mut t = topology(4);
        t.subtopologies.truncate(1);
        t.subtopologies[0].repartition_sink_topics.clear();
        t
    });
    let mut meta = MetadataRequest::default();
    let mut mt = MetadataRequestTopic::default();
    mt.name = Some(TopicName(s(GOOD_TOPIC)));
    meta.topics = Some(vec![mt]);
    while !stop.load(Relaxed) {
        let t0 = Instant::now();
        match tokio::time::timeout(Duration::from_secs(10), c.heartbeat(1, &req)).await {
            Ok(Ok(r)) if r.error_code == 0 => {
                lat.push(t0.elapsed());
                req.member_epoch = r.member_epoch;
                req.topology = None;
                req.rebalance_timeout_ms = -1;
                req.process_id = None;
                if let Some(a) = r.active_tasks {
                    req.active_tasks = Some(a);
                    req.standby_tasks = Some(vec![]);
                    req.warmup_tasks = Some(vec![]);
                } else {
                    req.active_tasks = None;
                    req.standby_tasks = None;
                    req.warmup_tasks = None;
                }
            }
            _ => {
                errors.fetch_add(1, Relaxed);
                lat.push(t0.elapsed());
                match Client::connect(addr).await {
                    Ok(n) => c = n,
                    Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                }
                continue;
            }
        }
        let t0 = Instant::now();
        match tokio::time::timeout(Duration::from_secs(10), c.call(12, &meta)).await {
            Ok(Ok(_)) => lat.push(t0.elapsed()),
            _ => {
                errors.fetch_add(1, Relaxed);
                lat.push(t0.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    lat
}

async fn alive(addr: SocketAddr, pid: Option<u32>) -> bool {
    if let Some(p) = pid
        && !std::path::Path::new(&format!("/proc/{p}")).exists()
    {
        return false;
    }
    let Ok(Ok(mut c)) = tokio::time::timeout(Duration::from_secs(5), Client::connect(addr)).await
    else {
        return false;
    };
    let r = ApiVersionsRequest::default();
    matches!(
        tokio::time::timeout(Duration::from_secs(5), c.call(0, &r)).await,
        Ok(Ok(_))
    )
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

/// Runs `groupcoord bench hostile` against the server at `--addr` and prints the report.
pub async fn run(a: HostileArgs) -> ExitCode {
    let addr = a.addr;
    let pid = a.pid;
    let peak = Arc::new(AtomicU64::new(0));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = pid.map(|p| {
        let peak = peak.clone();
        let sampling = sampling.clone();
        tokio::spawn(async move {
            while sampling.load(Relaxed) {
                if let Some(r) = rss(p) {
                    peak.fetch_max(r, Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    });
    let before = pid.and_then(rss);
    if !alive(addr, pid).await {
        eprintln!("bench hostile: no server answering on {addr}");
        return ExitCode::from(2);
    }
    // The well-behaved client's topic.
    if let Ok(mut c) = Client::connect(addr).await {
        let mut t = CreatableTopic::default();
        t.name = TopicName(s(GOOD_TOPIC));
        t.num_partitions = 4;
        t.replication_factor = -1;
        let mut r = CreateTopicsRequest::default();
        r.topics = vec![t];
        let _ = c.call(7, &r).await;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let good_errors = Arc::new(AtomicU64::new(0));
    let good = tokio::spawn(well_behaved(addr, stop.clone(), good_errors.clone()));
    let mut crashes = 0u32;
    let mut rows: Vec<(String, String)> = Vec::new();

    // 1. Mutated frames.
    let t0 = Instant::now();
    let seeds = Arc::new(seeds());
    let workers = 32;
    let failed = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for w in 0..workers {
        let seeds = seeds.clone();
        let failed = failed.clone();
        let n = a.frames / workers + usize::from(w < a.frames % workers);
        let seed = a.seed.wrapping_mul(1000).wrapping_add(w as u64);
        tasks.push(tokio::spawn(async move {
            let mut rng = Pcg64::seed_from_u64(seed);
            for _ in 0..n {
                let base = &seeds[(rng.next_u32() as usize) % seeds.len()];
                let f = mutate(&mut rng, base);
                if send_one(addr, &f).await.is_err() {
                    failed.fetch_add(1, Relaxed);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let ok = alive(addr, pid).await;
    crashes += u32::from(!ok);
    rows.push((
        format!("{} mutated frames", a.frames),
        format!(
            "{:.1} s, {} connect failures, server {}",
            t0.elapsed().as_secs_f64(),
            failed.load(Relaxed),
            if ok { "alive" } else { "DOWN" }
        ),
    ));

    // 2. Idle connections, then closed.
    let t0 = Instant::now();
    let mut idle = Vec::with_capacity(a.idle);
    let mut refused = 0usize;
    for _ in 0..a.idle {
        match tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr)).await {
            Ok(Ok(c)) => idle.push(c),
            _ => refused += 1,
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let held = pid.and_then(rss);
    drop(idle);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ok = alive(addr, pid).await;
    crashes += u32::from(!ok);
    rows.push((
        format!("{} idle connections", a.idle),
        format!(
            "{:.1} s, {refused} not opened, RSS while held {}, after close {}, server {}",
            t0.elapsed().as_secs_f64(),
            held.map(mb).unwrap_or("-".into()),
            pid.and_then(rss).map(mb).unwrap_or("-".into()),
            if ok { "alive" } else { "DOWN" }
        ),
    ));

    // 3. Poison requests, each followed by Metadata.
    let mut poison = String::new();
    if let Ok(mut c) = Client::connect(addr).await {
        let mut t = CreatableTopic::default();
        t.name = TopicName(s("hostile-poison"));
        t.num_partitions = i32::MAX;
        t.replication_factor = -1;
        let mut r = CreateTopicsRequest::default();
        r.topics = vec![t];
        match c.call(7, &r).await {
            Ok(resp) => poison.push_str(&format!(
                "CreateTopics 2^31-1 -> error {}",
                resp.topics[0].error_code
            )),
            Err(e) => poison.push_str(&format!("CreateTopics: {e}")),
        }
        let hb = join("hostile-poison", "m", topology(i32::MAX));
        match c.heartbeat(1, &hb).await {
            Ok(r) => poison.push_str(&format!("; heartbeat 2^31-1 -> error {}", r.error_code)),
            Err(e) => poison.push_str(&format!("; heartbeat: {e}")),
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let all = MetadataRequest::default();
        match tokio::time::timeout(Duration::from_secs(10), c.call(12, &all)).await {
            Ok(Ok(m)) => poison.push_str(&format!("; Metadata ok ({} topics)", m.topics.len())),
            _ => poison.push_str("; Metadata FAILED"),
        }
    }
    let ok = alive(addr, pid).await;
    crashes += u32::from(!ok);
    rows.push((
        "poison CreateTopics / heartbeat".into(),
        format!("{poison}; server {}", if ok { "alive" } else { "DOWN" }),
    ));

    // 4. Connections claiming a huge body each.
    let t0 = Instant::now();
    let mut claims = Vec::with_capacity(a.claims);
    for _ in 0..a.claims {
        if let Ok(Ok(mut c)) =
            tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr)).await
        {
            let mut b = BytesMut::new();
            b.put_u32(a.claim_bytes);
            b.put_slice(&[0, 3, 0, 12, 0, 0, 0, 1]);
            let _ = c.write_all(&b).await;
            claims.push(c);
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let held = pid.and_then(rss);
    drop(claims);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ok = alive(addr, pid).await;
    crashes += u32::from(!ok);
    rows.push((
        format!("{} connections claiming {} bytes", a.claims, a.claim_bytes),
        format!(
            "{:.1} s, RSS while held {}, server {}",
            t0.elapsed().as_secs_f64(),
            held.map(mb).unwrap_or("-".into()),
            if ok { "alive" } else { "DOWN" }
        ),
    ));

    stop.store(true, Relaxed);
    let mut lat = good.await.unwrap_or_default();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = pid.and_then(rss);
    sampling.store(false, Relaxed);
    if let Some(s) = sampler {
        let _ = s.await;
    }
    lat.sort();
    let pct = |q: f64| -> String {
        if lat.is_empty() {
            return "-".into();
        }
        let i = ((lat.len() as f64 * q).ceil() as usize).clamp(1, lat.len()) - 1;
        format!("{:.2} ms", lat[i].as_secs_f64() * 1e3)
    };

    println!("| phase | result |");
    println!("|---|---|");
    for (k, v) in &rows {
        println!("| {k} | {v} |");
    }
    println!("| crashes | {crashes} |");
    println!(
        "| server RSS before / peak / after | {} / {} / {} |",
        before.map(mb).unwrap_or("-".into()),
        if pid.is_some() {
            mb(peak.load(Relaxed))
        } else {
            "-".into()
        },
        after.map(mb).unwrap_or("-".into())
    );
    println!(
        "| well-behaved client | {} round trips, {} errors, p50 {}, p99 {}, max {} |",
        lat.len(),
        good_errors.load(Relaxed),
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    println!(
        "bench-hostile crashes={crashes} rss_before={} rss_peak={} rss_after={} p99_ms={}",
        before.unwrap_or(0),
        peak.load(Relaxed),
        after.unwrap_or(0),
        pct(0.99).trim_end_matches(" ms")
    );
    if crashes == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
