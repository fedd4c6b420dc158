//! Steady-state StreamsGroupHeartbeat cost in the pure coordinator (no I/O): 1,000 members in 10
//! groups, each heartbeating with nothing changed, as the server's owner thread sees them.
//! `cargo bench --bench heartbeat` (criterion); `-- --report` prints heartbeats/s, by the wall
//! clock and per core (the thread's CPU time), medians of 5 rounds. `-- --report --rounds N`
//! runs N heartbeats per member and round instead of 200: running it under
//! `valgrind --tool=callgrind` with two values of N and dividing the difference in instructions
//! by the difference in heartbeats gives instructions per steady heartbeat, setup excluded.
//!
//! Ids are realistic: group ids share a long application prefix and member ids are 26
//! characters (as Kafka's Uuid-based ones), so key compares and hashes cost what they cost in
//! production. Time advances 1 ms per heartbeat, so every heartbeat moves its session timer.

use criterion::{Criterion, black_box};
use groupcoord::config::CoordinatorConfig;
use groupcoord::coordinator::{Coordinator, RequestContext};
use groupcoord::protocol::{StreamsGroupHeartbeatRequest, Subtopology, TopicInfo, Topology};
use groupcoord::topology::MetadataImage;
use groupcoord::types::Millis;

const GROUPS: usize = 10;
const MEMBERS_PER_GROUP: usize = 100;

/// A realistic group id: applications share long prefixes.
fn group_id(g: usize) -> String {
    format!("com.example.orders-enrichment-app-{g}")
}

/// A 26-character member id, deterministic (a Uuid-like alphabet, no shared prefix).
fn member_id(g: usize, m: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut x = (g * 1_000_003 + m) as u64 ^ 0x9e37_79b9_7f4a_7c15;
    (0..26)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x % 64) as usize] as char
        })
        .collect()
}

fn setup() -> (Coordinator, Vec<StreamsGroupHeartbeatRequest>, Millis) {
    let config = CoordinatorConfig {
        initial_rebalance_delay_ms: 0,
        assignment_interval_ms: 0,
        ..CoordinatorConfig::default()
    };
    let mut c = Coordinator::new(config);
    let mut meta = MetadataImage::default();
    for g in 0..GROUPS {
        meta.topics.insert(format!("in-{g}"), 200);
        meta.topics.insert(format!("store-{g}-changelog"), 200);
    }
    c.set_metadata(meta);
    let ctx = RequestContext {
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        api_version: 1,
    };
    let mut steady = Vec::new();
    let mut now = Millis(0);
    for g in 0..GROUPS {
        let topology = Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec![format!("in-{g}")],
                state_changelog_topics: vec![TopicInfo {
                    name: format!("store-{g}-changelog"),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        for m in 0..MEMBERS_PER_GROUP {
            let join = StreamsGroupHeartbeatRequest {
                group_id: group_id(g),
                member_id: member_id(g, m),
                member_epoch: 0,
                rebalance_timeout_ms: 60_000,
                process_id: Some(format!("p{}", m / 2)),
                topology: Some(topology.clone()),
                active_tasks: Some(vec![]),
                standby_tasks: Some(vec![]),
                warmup_tasks: Some(vec![]),
                ..Default::default()
            };
            let _setup = c.streams_group_heartbeat(now, &ctx, &join);
            now = now.plus(1);
        }
    }
    // Converge: every member acknowledges what it was given until nothing changes.
    for _ in 0..6 {
        for g in 0..GROUPS {
            for m in 0..MEMBERS_PER_GROUP {
                let gid = group_id(g);
                let mid = member_id(g, m);
                let member = c.group(&gid).unwrap().members[&mid].clone();
                let req = StreamsGroupHeartbeatRequest {
                    group_id: gid,
                    member_id: mid,
                    member_epoch: member.member_epoch,
                    active_tasks: Some(member.assigned.active.task_set().to_task_ids()),
                    standby_tasks: Some(member.assigned.standby.to_task_ids()),
                    warmup_tasks: Some(member.assigned.warmup.to_task_ids()),
                    ..Default::default()
                };
                let _setup = c.streams_group_heartbeat(now, &ctx, &req);
            }
        }
        now = now.plus(1000);
    }
    for g in c.groups() {
        for m in g.members.values() {
            steady.push(StreamsGroupHeartbeatRequest {
                group_id: g.group_id.clone(),
                member_id: m.member_id.clone(),
                member_epoch: m.member_epoch,
                ..Default::default()
            });
        }
    }
    (c, steady, now)
}

/// Nanoseconds this thread has run on a CPU (Linux's schedstat; `None` elsewhere).
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() {
    let (mut c, steady, mut now) = setup();
    let ctx = RequestContext {
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        api_version: 1,
    };
    if std::env::args().any(|a| a == "--report") {
        // Five rounds of 200 heartbeats per member; each round is timed both by the wall clock
        // and by this thread's CPU time (what "per core" means on a machine whose other work
        // preempts the bench: waiting for a core is not heartbeat cost).
        let args: Vec<String> = std::env::args().collect();
        let rounds: usize = args
            .iter()
            .position(|a| a == "--rounds")
            .and_then(|i| args.get(i + 1)?.parse().ok())
            .unwrap_or(200);
        let mut wall = Vec::new();
        let mut cpu = Vec::new();
        for _ in 0..5 {
            let start = std::time::Instant::now();
            let cpu_start = thread_cpu_ns();
            for _ in 0..rounds {
                for r in &steady {
                    now = now.plus(1);
                    let _measured = black_box(c.streams_group_heartbeat(now, &ctx, r));
                }
            }
            let n = (rounds * steady.len()) as f64;
            wall.push(start.elapsed().as_secs_f64() * 1e9 / n);
            if let (Some(a), Some(b)) = (cpu_start, thread_cpu_ns()) {
                cpu.push((b - a) as f64 / n);
            }
        }
        // Measured what was meant: the steady path answers without error.
        now = now.plus(1);
        let check = c.streams_group_heartbeat(now, &ctx, &steady[0]);
        assert_eq!(check.response.error_code, 0, "{:?}", check.response);
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        let show = |v: &[f64]| {
            v.iter()
                .map(|ns| format!("{ns:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let w = median(&mut wall).unwrap_or(0.0);
        println!(
            "steady heartbeats, {} members: wall clock {:.0}/s ({:.0} ns each; rounds {} ns)",
            steady.len(),
            1e9 / w,
            w,
            show(&wall)
        );
        if let Some(t) = median(&mut cpu) {
            println!(
                "steady heartbeats, {} members: per core (thread CPU time) {:.0}/s ({:.0} ns each; rounds {} ns)",
                steady.len(),
                1e9 / t,
                t,
                show(&cpu)
            );
        }
        return;
    }
    let mut crit = Criterion::default().configure_from_args();
    let mut i = 0;
    crit.bench_function("steady heartbeat (1000 members, 10 groups)", |b| {
        b.iter(|| {
            i = (i + 1) % steady.len();
            now = now.plus(1);
            black_box(c.streams_group_heartbeat(now, &ctx, &steady[i]))
        })
    });
    crit.final_summary();
}
