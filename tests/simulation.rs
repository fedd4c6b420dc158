//! Simulation test suite: random scenarios with random faults, every invariant checked after
//! every event, liveness after the faults stop, determinism and replay.
//!
//! * CI: `cargo test --test simulation` runs `GROUPCOORD_SEEDS` seeds (default 1000) from
//!   `GROUPCOORD_SEED_START` (default 0) on two threads.
//! * A failing seed prints its repro command:
//!   `GROUPCOORD_SEED=<n> cargo test --test simulation -- --exact seed_repro --nocapture`
//! * Long soak: `GROUPCOORD_SEEDS=100000 cargo test --release --test simulation -- --ignored soak`
// Native only: plain `#[test]`s do not run under wasm-bindgen-test; the wasm API has its
// browser tests in tests/wasm_browser.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::time::Instant;

use groupcoord::sim::{
    Action, ScenarioSpec, SeedFailure, SeedReport, SimError, Simulation, TimedAction, presets,
    random_classic_scenario, random_consumer_scenario, repro_command, run_classic_seed,
    run_consumer_seed, run_seed,
};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Run seeds `start..start+count` on `threads` threads; panics with every failure's repro.
fn run_parallel(start: u64, count: u64, threads: u64) {
    run_parallel_with(start, count, threads, run_seed)
}

/// [`run_parallel`] with another seed runner (classic groups).
fn run_parallel_with(
    start: u64,
    count: u64,
    threads: u64,
    run_seed: fn(u64) -> Result<SeedReport, SeedFailure>,
) {
    let t0 = Instant::now();
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    let mut failures = Vec::new();
                    let mut max_conv = 0;
                    let mut bound = 0;
                    let mut tally = std::collections::BTreeMap::<String, u64>::new();
                    let mut seed = start + k;
                    while seed < start + count {
                        match run_seed(seed) {
                            Ok(r) => {
                                max_conv = max_conv.max(r.converged_after_ms);
                                bound = bound.max(r.bound_ms);
                                for (k, v) in r.tally {
                                    *tally.entry(k).or_default() += v;
                                }
                            }
                            Err(f) => failures.push(f),
                        }
                        seed += threads;
                    }
                    (failures, max_conv, bound, tally)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("seed thread panicked"))
            .collect()
    });
    let mut failures = Vec::new();
    let mut max_conv = 0;
    let mut bound = 0;
    let mut tally = std::collections::BTreeMap::<String, u64>::new();
    for (f, m, b, t) in results {
        for (k, v) in t {
            *tally.entry(k).or_default() += v;
        }
        failures.extend(f);
        max_conv = max_conv.max(m);
        bound = bound.max(b);
    }
    eprintln!(
        "{count} seeds from {start} in {:.1?}; slowest convergence {max_conv} ms after the faults \
         (bound {bound} ms); {} failed",
        t0.elapsed(),
        failures.len()
    );
    eprintln!("tally: {tally:?}");
    if !failures.is_empty() {
        failures.sort_by_key(|f| f.seed);
        for f in failures.iter().take(10) {
            eprintln!("{f}\n");
        }
        panic!(
            "{} of {count} seeds failed; first: seed {}: {}\nreproduce: {}",
            failures.len(),
            failures[0].seed,
            failures[0].reason,
            failures[0].repro
        );
    }
}

#[test]
fn random_seeds() {
    let start = env_u64("GROUPCOORD_SEED_START", 0);
    let count = env_u64("GROUPCOORD_SEEDS", 1000);
    run_parallel(start, count, 2);
}

/// Classic consumer groups: `GROUPCOORD_CLASSIC_SEEDS` random classic groups (default 150, a few
/// seconds) from `GROUPCOORD_CLASSIC_SEED_START` (default 0), with faults, every invariant,
/// liveness and replay checked; a failure prints its repro command (`classic_seed_repro`).
#[test]
fn classic_random_seeds() {
    let start = env_u64("GROUPCOORD_CLASSIC_SEED_START", 0);
    let count = env_u64("GROUPCOORD_CLASSIC_SEEDS", 150);
    run_parallel_with(start, count, 2, run_classic_seed);
}

/// `GROUPCOORD_CLASSIC_SEED=<n> cargo test --test simulation -- --exact classic_seed_repro
/// --nocapture`
#[test]
fn classic_seed_repro() {
    let seed = env_u64("GROUPCOORD_CLASSIC_SEED", 0);
    match run_classic_seed(seed) {
        Ok(r) => eprintln!(
            "classic seed {seed} passed: {} faults, {} records, converged {} ms after the faults \
             (bound {} ms); {:?}",
            r.faults, r.records, r.converged_after_ms, r.bound_ms, r.tally
        ),
        Err(f) => {
            let spec = random_classic_scenario(seed);
            eprintln!("spec: {}", serde_json::to_string(&spec).unwrap());
            eprintln!("actions: {}", serde_json::to_string(&f.actions).unwrap());
            if let Ok(sim) = Simulation::replay_to(spec, &f.actions, f.at_ms) {
                eprintln!(
                    "group at failure: {}",
                    serde_json::to_string_pretty(&sim.snapshot().group).unwrap()
                );
                for m in sim.message_log().iter().rev().take(20).rev() {
                    eprintln!(
                        "msg {} t={} {} {} {} -> {}",
                        m.seq,
                        m.sent_ms,
                        m.member_id,
                        m.api,
                        m.fate,
                        m.error.clone().unwrap_or_default()
                    );
                }
            }
            panic!("{f}");
        }
    }
}

/// KIP-848 consumer groups: `GROUPCOORD_CONSUMER_SEEDS` random consumer groups (default 100, ~30 s in debug)
/// from `GROUPCOORD_CONSUMER_SEED_START` (default 0) through the real coordinator with the
/// classic runs' faults (crash, leave, static bounce, network cut, coordinator restart, new
/// members and partitions, stalls), every invariant (`consumer-partition-single-owner`,
/// `consumer-assigned-single-owner`, `consumer-epochs`, `replay-equals-live`), liveness and
/// replay checked; a failure prints its repro command (`consumer_seed_repro`).
#[test]
fn consumer_random_seeds() {
    let start = env_u64("GROUPCOORD_CONSUMER_SEED_START", 0);
    let count = env_u64("GROUPCOORD_CONSUMER_SEEDS", 100);
    run_parallel_with(start, count, 2, run_consumer_seed);
}

/// `GROUPCOORD_CONSUMER_SEED=<n> cargo test --test simulation -- --exact consumer_seed_repro
/// --nocapture`
#[test]
fn consumer_seed_repro() {
    let seed = env_u64("GROUPCOORD_CONSUMER_SEED", 0);
    match run_consumer_seed(seed) {
        Ok(r) => eprintln!(
            "consumer seed {seed} passed: {} faults, {} records, converged {} ms after the \
             faults (bound {} ms); {:?}",
            r.faults, r.records, r.converged_after_ms, r.bound_ms, r.tally
        ),
        Err(f) => {
            let spec = random_consumer_scenario(seed);
            eprintln!("spec: {}", serde_json::to_string(&spec).unwrap());
            eprintln!("actions: {}", serde_json::to_string(&f.actions).unwrap());
            if let Ok(sim) = Simulation::replay_to(spec, &f.actions, f.at_ms) {
                eprintln!(
                    "group at failure: {}",
                    serde_json::to_string_pretty(&sim.snapshot().group).unwrap()
                );
                for m in sim.message_log().iter().rev().take(30).rev() {
                    eprintln!(
                        "msg {} t={} {} {} {} -> {} {}",
                        m.seq,
                        m.sent_ms,
                        m.member_id,
                        m.api,
                        m.fate,
                        m.error.clone().unwrap_or_default(),
                        m.response
                            .as_ref()
                            .map(|r| r.to_string())
                            .unwrap_or_default()
                    );
                }
            }
            panic!("{f}");
        }
    }
}

/// `GROUPCOORD_SEED=<n> cargo test --test simulation -- --exact seed_repro --nocapture`
#[test]
fn seed_repro() {
    let seed = env_u64("GROUPCOORD_SEED", 0);
    match run_seed(seed) {
        Ok(r) => eprintln!(
            "seed {seed} passed: {} faults, {} records, converged {} ms after the faults \
             (bound {} ms); {:?}",
            r.faults, r.records, r.converged_after_ms, r.bound_ms, r.tally
        ),
        Err(f) => {
            eprintln!(
                "spec: {}",
                serde_json::to_string(&groupcoord::sim::random_scenario(seed)).unwrap()
            );
            eprintln!("actions: {}", serde_json::to_string(&f.actions).unwrap());
            let spec = groupcoord::sim::random_scenario(seed);
            if let Ok(sim) = Simulation::replay_to(spec, &f.actions, f.at_ms) {
                let snap = sim.snapshot();
                eprintln!(
                    "group at failure: {}",
                    serde_json::to_string_pretty(&snap.group).unwrap()
                );
                eprintln!("topics: {:?}", snap.topics);
                for m in sim.message_log().iter().rev().take(12).rev() {
                    eprintln!(
                        "msg {} t={} {} {} -> {}",
                        m.seq,
                        m.sent_ms,
                        m.member_id,
                        m.fate,
                        m.error.clone().unwrap_or_default()
                    );
                }
            }
            panic!("{f}");
        }
    }
}

/// `GROUPCOORD_SEEDS=100000 cargo test --release --test simulation -- --ignored soak`
#[test]
#[ignore = "long soak; run explicitly"]
fn soak() {
    let start = env_u64("GROUPCOORD_SEED_START", 1_000_000);
    let count = env_u64("GROUPCOORD_SEEDS", 100_000);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get() as u64);
    run_parallel(start, count, threads);
}

fn run_preset(spec: &ScenarioSpec, actions: &[TimedAction], until: i64) -> Simulation {
    let mut sim = Simulation::new(spec.clone()).expect("preset spec is valid");
    for a in actions {
        for e in sim.step_to(a.at_ms) {
            if let groupcoord::sim::SimEvent::InvariantViolated {
                name,
                detail,
                at_ms,
            } = e
            {
                panic!(
                    "{}: invariant {name} violated at {at_ms}: {detail}",
                    spec.name
                );
            }
        }
        sim.apply(a.action.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    }
    while sim.now() < until {
        for e in sim.step(500) {
            if let groupcoord::sim::SimEvent::InvariantViolated {
                name,
                detail,
                at_ms,
            } = e
            {
                panic!(
                    "{}: invariant {name} violated at {at_ms}: {detail}",
                    spec.name
                );
            }
        }
    }
    for r in sim.invariants() {
        assert!(
            r.ok,
            "{}: invariant {} failed: {}",
            spec.name, r.name, r.detail
        );
    }
    sim
}

#[test]
fn presets_run_clean_and_end_as_described() {
    for (spec, actions) in presets() {
        let sim = run_preset(&spec, &actions, 150_000);
        let snap = sim.snapshot();
        let state = snap.group.state.as_str();
        match spec.name.as_str() {
            "shutdown-application" => assert_eq!(state, "Empty", "{}", spec.name),
            "topology-upgrade" => {}
            _ => {
                assert_eq!(state, "Stable", "{}: {:?}", spec.name, sim.convergence());
                sim.convergence()
                    .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            }
        }
        if spec.name != "topology-upgrade" {
            assert!(
                sim.unexpected_errors().is_empty(),
                "{}: {:?}",
                spec.name,
                sim.unexpected_errors()
            );
        }
        assert!(!sim.record_log().is_empty());
        assert!(!sim.message_log().is_empty());
    }
}

#[test]
fn same_spec_and_actions_give_the_same_state_hash() {
    for (spec, actions) in presets() {
        let a = run_preset(&spec, &actions, 90_000);
        let b = run_preset(&spec, &actions, 90_000);
        assert_eq!(a.state_hash(), b.state_hash(), "{}", spec.name);
        // Time travel: rebuild from the recorded actions at several times.
        for t in [0, 10_000, 33_333, 90_000] {
            let back = Simulation::replay_to(spec.clone(), a.actions(), t).unwrap();
            let mut fwd = Simulation::new(spec.clone()).unwrap();
            for x in a.actions().iter().filter(|x| x.at_ms <= t) {
                fwd.step_to(x.at_ms);
                fwd.apply(x.action.clone()).unwrap();
            }
            // A different step granularity must not matter.
            while fwd.now() < t {
                let d = (t - fwd.now()).min(777);
                fwd.step(d);
            }
            assert_eq!(back.state_hash(), fwd.state_hash(), "{} at {t}", spec.name);
        }
    }
}

#[test]
fn unknown_member_and_bad_config_are_errors() {
    let (spec, _) = presets().remove(0);
    let mut sim = Simulation::new(spec.clone()).unwrap();
    let e = sim
        .apply(Action::CrashMember {
            member: "nobody".into(),
        })
        .unwrap_err();
    assert!(matches!(e, SimError::UnknownMember(_)), "{e}");
    let mut bad = spec.clone();
    bad.configs
        .insert("group.streams.heartbeat.interval.ms".into(), "soon".into());
    let e = Simulation::new(bad)
        .err()
        .expect("bad value rejected")
        .to_string();
    assert!(
        e.contains("group.streams.heartbeat.interval.ms") && e.contains("soon"),
        "{e}"
    );
    let mut bad = spec;
    bad.configs.insert("group.streams.bogus".into(), "1".into());
    let e = Simulation::new(bad)
        .err()
        .expect("bad key rejected")
        .to_string();
    assert!(e.contains("group.streams.bogus"), "{e}");
}

#[test]
fn repro_command_names_the_seed() {
    assert!(repro_command(42).contains("GROUPCOORD_SEED=42"));
    assert!(repro_command(42).contains("seed_repro"));
    let c = groupcoord::sim::repro_classic_command(42);
    assert!(c.contains("GROUPCOORD_CLASSIC_SEED=42") && c.contains("classic_seed_repro"));
}

/// Spec §3.3/§3.4 B: a static member that leaves with -2 and rejoins under a new member id gets
/// its tasks back without a rebalance of the others.
#[test]
fn static_bounce_gives_the_tasks_back() {
    let (spec, actions) = presets()
        .into_iter()
        .find(|p| p.0.name == "rolling-bounce")
        .unwrap();
    let mut sim = Simulation::new(spec).unwrap();
    sim.step_to(19_000);
    let before = |sim: &Simulation| {
        let snap = sim.snapshot();
        snap.group
            .members
            .iter()
            .filter(|m| m.client_status == "alive")
            .map(|m| {
                (
                    m.instance_id.clone().unwrap(),
                    (m.owned_active.clone(), m.owned_standby.clone()),
                )
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let start = before(&sim);
    assert_eq!(start.len(), 3);
    for a in &actions {
        sim.step_to(a.at_ms);
        sim.apply(a.action.clone()).unwrap();
    }
    sim.step_to(100_000);
    sim.convergence().unwrap();
    assert_eq!(before(&sim), start);
    // Three bounces, three new incarnations, and no group epoch bump for any of them.
    let snap = sim.snapshot();
    assert!(
        snap.group
            .members
            .iter()
            .all(|m| m.member_id.ends_with("-2"))
    );
    let epochs: Vec<i32> = sim
        .record_log()
        .iter()
        .filter_map(|r| match &r.record {
            groupcoord::records::Record::GroupMetadata { value: Some(v), .. } => Some(v.epoch),
            _ => None,
        })
        .collect();
    let last_before = sim
        .record_log()
        .iter()
        .filter(|r| r.at_ms < 19_000)
        .filter(|r| matches!(r.record, groupcoord::records::Record::GroupMetadata { .. }))
        .count();
    assert_eq!(
        epochs.len(),
        last_before,
        "a static bounce bumped the group epoch: {epochs:?}"
    );
}
