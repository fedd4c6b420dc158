//! What noting a classic group's rebalance phases costs the owner (the server's live view,
//! `groupcoord::server::phases`): rebalance rounds of lone-member classic groups (the leader's
//! JoinGroup: Stable → PreparingRebalance → CompletingRebalance; its SyncGroup: → Stable) in
//! the pure coordinator, without and with `phases::observe` after each request as the owner
//! does: every round records two transitions, the worst case. Heartbeats are never observed.
//! Alternating rounds of both, medians; prints ns per request and the ratio.
//! `cargo bench --bench classic_phases`.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::Instant;

use groupcoord::config::{ClassicConfig, CoordinatorConfig};
use groupcoord::coordinator::{Coordinator, RequestContext, RequestToken};
use groupcoord::protocol::classic::{JoinGroupRequest, JoinProtocol, SyncGroupRequest};
use groupcoord::server::phases::{self, Phases};
use groupcoord::types::Millis;

const GROUPS: usize = 1_000;
const ROUNDS: usize = 20;

fn group_id(g: usize) -> String {
    format!("com.example.orders-enrichment-app-{g}")
}

fn join(g: usize, member_id: &str) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: group_id(g),
        session_timeout_ms: 30_000,
        rebalance_timeout_ms: 30_000,
        member_id: member_id.to_string(),
        group_instance_id: None,
        protocol_type: "consumer".into(),
        protocols: vec![JoinProtocol {
            name: "range".into(),
            metadata: b"\x00\x00\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff".to_vec(),
        }],
        reason: None,
    }
}

fn sync(g: usize, member_id: &str, generation: i32) -> SyncGroupRequest {
    SyncGroupRequest {
        group_id: group_id(g),
        generation_id: generation,
        member_id: member_id.to_string(),
        group_instance_id: None,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignments: vec![(member_id.to_string(), vec![0; 24])],
    }
}

/// `GROUPS` Stable classic groups of one member each: (coordinator, member ids, generations).
fn setup() -> (Coordinator, Vec<String>, Vec<i32>, Millis) {
    let config = CoordinatorConfig {
        classic: ClassicConfig {
            initial_rebalance_delay_ms: 0,
            ..ClassicConfig::default()
        },
        ..CoordinatorConfig::default()
    };
    let mut c = Coordinator::new(config);
    let ctx = RequestContext {
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        api_version: 9,
    };
    let mut now = Millis(1_000);
    let mut ids = Vec::new();
    for g in 0..GROUPS {
        let _ = c.classic_join(now, &ctx, &join(g, ""), RequestToken(1));
        let first = c.take_completed().pop().expect("MEMBER_ID_REQUIRED");
        let groupcoord::coordinator::ClassicReply::Join(r) = first.reply else {
            panic!("a join answer")
        };
        let _ = c.classic_join(now, &ctx, &join(g, &r.member_id), RequestToken(2));
        ids.push(r.member_id);
    }
    now = now.plus(1);
    let _ = c.fire_due_timers(now); // the initial delay (0 ms) ends every join phase
    let _ = c.take_completed();
    for (g, id) in ids.iter().enumerate() {
        let _ = c.classic_sync(now, &sync(g, id, 1), RequestToken(3));
    }
    assert!(
        c.take_completed().len() == GROUPS,
        "every leader's SyncGroup answered"
    );
    (c, ids, vec![1; GROUPS], now)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`: no criterion tests here
    }
    let (mut c, ids, mut generations, mut now) = setup();
    let ctx = RequestContext {
        client_id: "bench".into(),
        client_host: "/127.0.0.1".into(),
        api_version: 9,
    };
    let table = Mutex::new(Phases::default());
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        for observe in [round % 2 == 1, round % 2 == 0] {
            let start = Instant::now();
            for (g, id) in ids.iter().enumerate() {
                now = now.plus(1);
                let gid = group_id(g);
                let _ = black_box(c.classic_join(now, &ctx, &join(g, id), RequestToken(4)));
                if observe {
                    black_box(phases::observe(&table, &c, &gid, now.0));
                }
                let _ = black_box(c.take_completed());
                generations[g] += 1;
                let _ =
                    black_box(c.classic_sync(now, &sync(g, id, generations[g]), RequestToken(5)));
                if observe {
                    black_box(phases::observe(&table, &c, &gid, now.0));
                }
                let answers = c.take_completed();
                debug_assert_eq!(answers.len(), 1);
            }
            times[observe as usize].push(start.elapsed().as_nanos() as f64 / (2 * GROUPS) as f64);
        }
    }
    // Measured what was meant: every round went through both phases and was recorded.
    let p = table.lock().unwrap().of(&group_id(0));
    assert!(p.iter().any(|p| p.state == "CompletingRebalance"), "{p:?}");
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (without, with) = (median(&mut times[0]), median(&mut times[1]));
    println!(
        "classic JoinGroup/SyncGroup of {GROUPS} lone-member groups, {} rounds each: {without:.0} ns per request without noting phases, {with:.0} ns with (+{:.0} ns); ratio {:.3}",
        ROUNDS / 2,
        with - without,
        with / without
    );
}
