//! Classic consumer groups in the simulation: presets reach Stable with every partition owned
//! once, the cooperative dance, static membership and faults.

use super::*;

fn preset(name: &str) -> (ScenarioSpec, Vec<TimedAction>) {
    presets()
        .into_iter()
        .find(|(s, _)| s.name == name)
        .expect("preset exists")
}

fn run(name: &str, until: i64) -> Simulation {
    let (spec, actions) = preset(name);
    let mut sim = Simulation::new(spec).unwrap();
    for a in &actions {
        sim.step_to(a.at_ms);
        sim.apply(a.action.clone()).unwrap();
    }
    sim.step_to(until);
    sim
}

#[test]
fn debug_print() {
    let sim = run("classic-eager-range", 20_000);
    let s = sim.snapshot();
    eprintln!("{}", serde_json::to_string_pretty(&s.group).unwrap());
    for m in sim.message_log().iter().take(40) {
        eprintln!(
            "{} {} {} {} {:?} {}",
            m.sent_ms, m.received_ms, m.member_id, m.api, m.error, m.fate
        );
    }
    eprintln!("{:?}", sim.ownership_history());
    eprintln!("{:?}", sim.unexpected_errors());
}

#[test]
#[ignore]
fn sweep_debug() {
    let n: u64 = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let t0 = std::time::Instant::now();
    let mut fails = 0;
    for seed in 0..n {
        if let Err(f) = run_classic_seed(seed) {
            fails += 1;
            eprintln!("{f}");
        }
    }
    eprintln!("{n} seeds {fails} failed in {:?}", t0.elapsed());
}

#[test]
#[ignore]
fn seed_debug() {
    let seed: u64 = std::env::var("SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let spec = super::random::random_classic_scenario(seed);
    let f = run_classic_seed(seed).unwrap_err();
    eprintln!("{f}");
    let sim = Simulation::replay_to(spec, &f.actions, f.at_ms).unwrap();
    eprintln!(
        "{}",
        serde_json::to_string_pretty(&sim.snapshot().group).unwrap()
    );
    for a in sim.actions() {
        eprintln!("{a:?}");
    }
    for m in sim.message_log().iter().rev().take(30) {
        eprintln!(
            "{} {} {} {} {:?} {} {}",
            m.sent_ms, m.received_ms, m.member_id, m.api, m.error, m.fate, m.request
        );
    }
}
