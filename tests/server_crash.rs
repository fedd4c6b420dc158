//! Crash test: a heartbeat storm from many members against the spawned binary, SIGKILLed at
//! seeded random points (>= 20 times). After each restart every acknowledged change is present,
//! and when the kill followed a quiescent describe, the describe output equals it.
#![cfg(all(unix, not(target_arch = "wasm32")))]

mod common;
use common::{normalize, temp_dir};

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use groupcoord::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest,
    Subtopology, TaskIds, Topology,
};
use groupcoord::server::tools::client::{self, Client};
use rand_core::{RngCore, SeedableRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const GROUPS: [&str; 2] = ["crash-a", "crash-b"];
const MEMBERS: usize = 24;
const CONNECTIONS: usize = 4;
const KILLS: usize = 22;

fn spawn(dir: &Path) -> (Child, std::net::SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_groupcoord"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .args([
            "--topic",
            "input:12",
            "--set",
            "group.streams.initial.rebalance.delay.ms=0",
            "--set",
            "group.streams.assignment.interval.ms=0",
            // Small snapshot threshold: compaction happens during the test too.
            "--snapshot-bytes",
            "20000",
        ])
        .args(["--owners", &common::test_owners().to_string()])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn groupcoord");
    let out = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(out).read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("groupcoord listening on ")
        .unwrap_or_else(|| panic!("start line: {line:?}"));
    (child, addr.parse().unwrap())
}

fn topology() -> Topology {
    Topology {
        epoch: 0,
        subtopologies: vec![Subtopology {
            subtopology_id: "0".into(),
            source_topics: vec!["input".into()],
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Op {
    Join,
    Beat,
    Leave,
}

#[derive(Clone, Debug)]
struct Member {
    group: &'static str,
    id: String,
    /// Client view.
    epoch: i32,
    active: Vec<TaskIds>,
    /// Last acknowledged: Some(epoch) = present with that epoch, None = absent.
    acked: Option<i32>,
    /// Request in flight (sent, not answered).
    pending: Option<Op>,
}

fn request(m: &Member, op: &Op) -> StreamsGroupHeartbeatRequest {
    let joining = *op == Op::Join;
    StreamsGroupHeartbeatRequest {
        group_id: m.group.into(),
        member_id: m.id.clone(),
        member_epoch: match op {
            Op::Join => 0,
            Op::Beat => m.epoch,
            Op::Leave => -1,
        },
        rebalance_timeout_ms: if joining { 60_000 } else { -1 },
        topology: joining.then(topology),
        process_id: joining.then(|| format!("p-{}", m.id)),
        active_tasks: Some(if joining { vec![] } else { m.active.clone() }),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    }
}

/// One connection's storm: rounds of one pipelined heartbeat per member.
async fn storm(
    addr: std::net::SocketAddr,
    members: Arc<Mutex<Vec<Member>>>,
    mine: Vec<usize>,
    stop: Arc<AtomicBool>,
    seed: u64,
) {
    let Ok(c) = Client::connect(addr).await else {
        return;
    };
    let (mut rd, mut wr) = c.into_split();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut corr = 0i32;
    while !stop.load(Ordering::Relaxed) {
        let mut frames = Vec::new();
        let mut sent = Vec::new();
        {
            let mut ms = members.lock().unwrap();
            for &i in &mine {
                let m = &mut ms[i];
                let op = if m.epoch <= 0 {
                    Op::Join
                } else if rng.next_u32() % 40 == 0 {
                    Op::Leave
                } else {
                    Op::Beat
                };
                corr += 1;
                let body = client::heartbeat_body(&request(m, &op), 1).unwrap();
                frames.extend(client::raw_frame(88, 1, corr, Some("crash"), &body).unwrap());
                m.pending = Some(op.clone());
                sent.push((i, op, corr));
            }
        }
        if wr.write_all(&frames).await.is_err() {
            return;
        }
        for (i, op, c) in sent {
            let mut len = [0u8; 4];
            if rd.read_exact(&mut len).await.is_err() {
                return;
            }
            let mut f = vec![0u8; u32::from_be_bytes(len) as usize];
            if rd.read_exact(&mut f).await.is_err() {
                return;
            }
            let (rc, body) = client::split_response(88, 1, &f).unwrap();
            assert_eq!(rc, c);
            let r = client::decode_heartbeat(body, 1).unwrap();
            let mut ms = members.lock().unwrap();
            let m = &mut ms[i];
            m.pending = None;
            if r.error_code != 0 {
                // Errors change nothing server-side; rejoin.
                m.epoch = 0;
                m.active.clear();
                continue;
            }
            match op {
                Op::Leave => {
                    m.acked = None;
                    m.epoch = 0;
                    m.active.clear();
                }
                _ => {
                    m.acked = Some(r.member_epoch);
                    m.epoch = r.member_epoch;
                    if let Some(a) = r.active_tasks {
                        m.active = a;
                    }
                }
            }
        }
    }
}

async fn describe(addr: std::net::SocketAddr) -> StreamsGroupDescribeResponse {
    let mut c = Client::connect(addr).await.unwrap();
    let req = StreamsGroupDescribeRequest {
        group_ids: GROUPS.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    };
    normalize(c.describe(1, &req).await.unwrap())
}

fn kill(mut child: Child) {
    // SIGKILL: no chance to flush anything.
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_loses_no_acknowledged_change() {
    let dir = temp_dir("crash");
    let mut rng = rand_pcg::Pcg64::seed_from_u64(0x6b_6166_6b61);
    let members: Arc<Mutex<Vec<Member>>> = Arc::new(Mutex::new(
        (0..MEMBERS)
            .map(|i| Member {
                group: GROUPS[i % GROUPS.len()],
                id: format!("member-{i}"),
                epoch: 0,
                active: vec![],
                acked: None,
                pending: None,
            })
            .collect(),
    ));
    let mut quiescent: Option<StreamsGroupDescribeResponse> = None;
    let mut checks = 0;
    for round in 0..KILLS {
        let (child, addr) = spawn(&dir);
        let d = describe(addr).await;
        // 1. Every acknowledged change is present.
        let present: BTreeMap<(String, String), i32> = d
            .groups
            .iter()
            .flat_map(|g| {
                g.members
                    .iter()
                    .map(move |m| ((g.group_id.clone(), m.member_id.clone()), m.member_epoch))
            })
            .collect();
        {
            let mut ms = members.lock().unwrap();
            for m in ms.iter_mut() {
                let got = present.get(&(m.group.to_string(), m.id.clone())).copied();
                match (&m.acked, &m.pending, got) {
                    (Some(e), _, Some(g)) => {
                        assert!(g >= *e, "round {round}: {} epoch {g} < acked {e}", m.id)
                    }
                    (Some(_), Some(Op::Leave), None) => {}
                    (Some(e), p, None) => panic!(
                        "round {round}: acked member {} (epoch {e}, pending {p:?}) lost",
                        m.id
                    ),
                    (None, None, Some(_)) => panic!(
                        "round {round}: member {} present but its leave was acknowledged",
                        m.id
                    ),
                    (None, _, _) => {}
                }
                // Resume from what the server knows.
                m.pending = None;
                match got {
                    Some(g) => {
                        m.acked = Some(g);
                        m.epoch = g;
                        let dm = d
                            .groups
                            .iter()
                            .flat_map(|x| x.members.iter())
                            .find(|x| x.member_id == m.id)
                            .unwrap();
                        m.active = dm.assignment.active_tasks.clone();
                    }
                    None => {
                        m.acked = None;
                        m.epoch = 0;
                        m.active.clear();
                    }
                }
                checks += 1;
            }
        }
        eprintln!(
            "round {round}: {} members present, group epochs {:?}, quiescent check {}",
            present.len(),
            d.groups.iter().map(|g| g.group_epoch).collect::<Vec<_>>(),
            quiescent.is_some()
        );
        // 2. After a quiescent kill, describe equals the last acknowledged describe.
        if let Some(q) = quiescent.take() {
            assert_eq!(
                d, q,
                "round {round}: describe after restart differs from the acknowledged state"
            );
        }
        // Storm.
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for c in 0..CONNECTIONS {
            let mine: Vec<usize> = (0..MEMBERS).filter(|i| i % CONNECTIONS == c).collect();
            tasks.push(tokio::spawn(storm(
                addr,
                members.clone(),
                mine,
                stop.clone(),
                rng.next_u64(),
            )));
        }
        let run_ms = 40 + rng.next_u64() % 300;
        tokio::time::sleep(Duration::from_millis(run_ms)).await;
        if rng.next_u32() % 2 == 0 {
            // Kill mid-storm, requests in flight.
            kill(child);
            stop.store(true, Ordering::Relaxed);
            for t in tasks {
                let _ = t.await;
            }
        } else {
            stop.store(true, Ordering::Relaxed);
            for t in tasks {
                let _ = t.await;
            }
            quiescent = Some(describe(addr).await);
            kill(child);
        }
    }
    assert!(checks >= KILLS * MEMBERS);
    // The log was compacted at least once (with GC_TEST_OWNERS > 1, in a shard's directory).
    let mut logs = vec![dir.clone()];
    logs.extend((0..common::test_owners()).map(|i| dir.join(format!("shard-{i:03}"))));
    let snaps = logs
        .iter()
        .filter(|d| d.is_dir())
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".snap")
        })
        .count();
    assert!(snaps >= 1, "a snapshot was written");
    let _ = std::fs::remove_dir_all(&dir);
}
