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
