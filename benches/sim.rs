//! Native half of `pkg-scripts/bench-wasm.sh`: the same 10,000-step simulation that
//! `www/bench-node.mjs` runs in wasm (a preset, `STEPS` x `step(STEP_MS)`, the preset's actions
//! applied at their times), best of `ROUNDS`. Prints `native_ms=<ms> hash=<state hash>`; the hash
//! must equal the wasm run's.
//!
//! `cargo bench --bench sim` (env: BENCH_PRESET, STEPS, STEP_MS, ROUNDS).

use std::time::Instant;

use groupcoord::sim::{Simulation, TimedAction, presets};

fn env(k: &str, d: i64) -> i64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// Steps `d` ms, applying the scheduled actions inside at their times (as `WasmSimulation::step`).
fn advance(sim: &mut Simulation, scheduled: &mut Vec<TimedAction>, d: i64) {
    let end = sim.now() + d;
    while scheduled.first().is_some_and(|a| a.at_ms <= end) {
        let a = scheduled.remove(0);
        let now = sim.now();
        if a.at_ms > now {
            sim.step(a.at_ms - now);
        }
        sim.apply(a.action).expect("preset action");
    }
    let now = sim.now();
    if end > now {
        sim.step(end - now);
    }
}

fn main() {
    let (steps, step_ms, rounds) = (env("STEPS", 10_000), env("STEP_MS", 100), env("ROUNDS", 3));
    let all = presets();
    let name = std::env::var("BENCH_PRESET").unwrap_or_else(|_| all[0].0.name.clone());
    let (spec, actions) = all
        .into_iter()
        .find(|(s, _)| s.name == name)
        .expect("preset");
    let mut best = f64::INFINITY;
    let mut hash = String::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        let mut sim = Simulation::replay_to(spec.clone(), &actions, 0).expect("preset");
        let mut scheduled: Vec<TimedAction> =
            actions.iter().filter(|a| a.at_ms > 0).cloned().collect();
        scheduled.sort_by_key(|a| a.at_ms);
        for _ in 0..steps {
            advance(&mut sim, &mut scheduled, step_ms);
        }
        hash = sim.state_hash();
        best = best.min(t0.elapsed().as_secs_f64() * 1000.0);
    }
    println!("preset={name} steps={steps} step_ms={step_ms} native_ms={best:.2} hash={hash}");
}
