//! Does a large assignment hold up other groups? An owner loop (one thread, as the server's
//! owner) answers a small group's heartbeats arriving every 200 µs for 2 s; 100 ms in, a
//! member of a 5,000-member streams group over 50,000 tasks heartbeats and needs a new target
//! assignment. Latency = answer time - arrival time of each small-group heartbeat.
//!
//! Both modes in one run: `inline` (Kafka 4.4: the assignor runs inside that heartbeat) and
//! `offload` (the assignor runs on a worker thread; the owner applies the result as records
//! when it comes back, `Coordinator::complete_assignment`).
//! `cargo bench --bench offload [-- --members 5000 --tasks 50000]`.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use groupcoord::config::CoordinatorConfig;
use groupcoord::coordinator::{AssignmentResult, Coordinator, RequestContext};
use groupcoord::protocol::{StreamsGroupHeartbeatRequest, Subtopology, Topology};
use groupcoord::topology::MetadataImage;
use groupcoord::types::Millis;

const SMALL_MEMBERS: usize = 10;
const ARRIVAL_EVERY: Duration = Duration::from_micros(200);
const WINDOW: Duration = Duration::from_secs(2);
const BIG_AT: Duration = Duration::from_millis(100);

fn ctx() -> RequestContext {
    RequestContext {
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        api_version: 1,
    }
}

fn join(group: &str, member: &str, topic: &str) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 60_000,
        process_id: Some(member.into()),
        topology: Some(Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec![topic.into()],
                ..Default::default()
            }],
            ..Default::default()
        }),
        active_tasks: Some(vec![]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    }
}

/// The coordinator with both groups joined; the big group's members joined while assignments
/// were held back by the interval, so its next heartbeat computes the whole assignment.
fn setup(members: usize, tasks: i32) -> (Coordinator, Vec<StreamsGroupHeartbeatRequest>, Millis) {
    let config = CoordinatorConfig {
        initial_rebalance_delay_ms: 0,
        assignment_interval_ms: 0,
        ..CoordinatorConfig::default()
    };
    let mut c = Coordinator::new(config.clone());
    let mut meta = MetadataImage::default();
    meta.topics.insert("big".into(), tasks);
    meta.topics.insert("small".into(), SMALL_MEMBERS as i32);
    c.set_metadata(meta);
    let mut now = Millis(1);
    for m in 0..SMALL_MEMBERS {
        let _join =
            c.streams_group_heartbeat(now, &ctx(), &join("small", &format!("s{m}"), "small"));
    }
    // Converge the small group.
    let mut steady = Vec::new();
    for _ in 0..4 {
        steady.clear();
        for m in 0..SMALL_MEMBERS {
            let id = format!("s{m}");
            let member = c.group("small").unwrap().members[&id].clone();
            let req = StreamsGroupHeartbeatRequest {
                group_id: "small".into(),
                member_id: id,
                member_epoch: member.member_epoch,
                active_tasks: Some(member.assigned.active.task_set().to_task_ids()),
                standby_tasks: Some(vec![]),
                warmup_tasks: Some(vec![]),
                ..Default::default()
            };
            let _ack = c.streams_group_heartbeat(now, &ctx(), &req);
            steady.push(req);
        }
    }
    for r in &mut steady {
        let m = &c.group("small").unwrap().members[&r.member_id];
        r.member_epoch = m.member_epoch;
        r.active_tasks = None;
        r.standby_tasks = None;
        r.warmup_tasks = None;
    }
    // The big group: the first join assigns, the others wait for the interval.
    c.set_config(CoordinatorConfig {
        assignment_interval_ms: 3_600_000,
        max_assignment_interval_ms: 3_600_000,
        ..config.clone()
    });
    for m in 0..members {
        now = now.plus(1);
        let _join = c.streams_group_heartbeat(now, &ctx(), &join("big", &format!("b{m}"), "big"));
    }
    c.set_config(config);
    (c, steady, now)
}

/// One run of the owner loop; returns the small group's latencies (µs, sorted) and how long the
/// big group's assignment took to land.
fn run(members: usize, tasks: i32, offload: bool) -> (Vec<u64>, Duration) {
    let (mut c, steady, base) = setup(members, tasks);
    c.set_assignment_offload(offload.then_some(1_000_000));
    let (job_tx, job_rx) = mpsc::channel::<groupcoord::coordinator::AssignmentJob>();
    let (res_tx, res_rx) = mpsc::channel::<AssignmentResult>();
    let worker = std::thread::spawn(move || {
        while let Ok(job) = job_rx.recv() {
            if res_tx.send(job.run()).is_err() {
                break;
            }
        }
    });
    let big = StreamsGroupHeartbeatRequest {
        group_id: "big".into(),
        member_id: "b0".into(),
        member_epoch: c.group("big").unwrap().members["b0"].member_epoch,
        ..Default::default()
    };
    let big_epoch = c.group("big").unwrap().group_epoch;
    let start = Instant::now();
    let mut latencies = Vec::new();
    let mut next = 0u32;
    let mut big_sent = false;
    let mut landed = None;
    let now = |at: Duration| base.plus(at.as_millis() as i64);
    while start.elapsed() < WINDOW {
        if !big_sent && start.elapsed() >= BIG_AT {
            big_sent = true;
            let _big = c.streams_group_heartbeat(now(start.elapsed()), &ctx(), &big);
            for job in c.take_assignment_jobs() {
                job_tx.send(job).unwrap();
            }
        }
        while let Ok(result) = res_rx.try_recv() {
            let _applied = c.complete_assignment(now(start.elapsed()), result);
        }
        if landed.is_none() && c.group("big").unwrap().assignment_epoch >= big_epoch {
            landed = Some(start.elapsed() - BIG_AT);
        }
        let arrival = ARRIVAL_EVERY * next;
        if start.elapsed() < arrival {
            std::hint::spin_loop();
            continue;
        }
        let r = &steady[next as usize % steady.len()];
        let answer = c.streams_group_heartbeat(now(start.elapsed()), &ctx(), r);
        assert_eq!(answer.response.error_code, 0, "{:?}", answer.response);
        latencies.push((start.elapsed() - arrival).as_micros() as u64);
        next += 1;
    }
    drop(job_tx);
    worker.join().unwrap();
    latencies.sort_unstable();
    (latencies, landed.unwrap_or(WINDOW))
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let members = arg("--members", 5_000);
    let tasks = arg("--tasks", 50_000) as i32;
    let rounds = arg("--rounds", 2);
    println!("small-group heartbeat latency while a {members} x {tasks} assignment runs");
    for round in 0..rounds {
        for offload in [false, true] {
            let (l, landed) = run(members, tasks, offload);
            let pct = |p: f64| l[((l.len() as f64 * p) as usize).min(l.len() - 1)];
            println!(
                "round {round} {:<8} heartbeats {:>6}  p50 {:>6} us  p99 {:>6} us  max {:>6} us  \
                 (big assignment landed after {:.1} ms)",
                if offload { "offload" } else { "inline" },
                l.len(),
                pct(0.50),
                pct(0.99),
                l[l.len() - 1],
                landed.as_secs_f64() * 1e3
            );
        }
    }
}
