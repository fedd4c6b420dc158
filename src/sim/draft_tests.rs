//! The draft dialect in the simulation (docs/draft-dialect.md): the same workload runs in both
//! dialects, the draft one passes through Initializing, initializes once and ends as stable as
//! the shipped one; random seeds keep every invariant.

use super::*;
use crate::coordinator::Dialect;

struct Run {
    states: Vec<String>,
    violations: Vec<String>,
    sim: Simulation,
}

fn run(dialect: Dialect, until: i64) -> Run {
    let (mut spec, actions) = presets()
        .into_iter()
        .find(|(s, _)| s.name == "scale-out")
        .expect("preset exists");
    spec.dialect = dialect;
    let mut sim = Simulation::new(spec).unwrap();
    let mut next = actions.into_iter().peekable();
    let mut states = Vec::new();
    let mut violations = Vec::new();
    while sim.now() < until {
        let mut events = Vec::new();
        while let Some(a) = next.next_if(|a| a.at_ms <= sim.now()) {
            events.extend(sim.apply(a.action).unwrap());
        }
        events.extend(sim.step(100));
        for e in events {
            match e {
                SimEvent::StateChange { to, .. } => states.push(to),
                SimEvent::InvariantViolated { name, detail, .. } => {
                    violations.push(format!("{name}: {detail}"))
                }
                _ => {}
            }
        }
    }
    Run {
        states,
        violations,
        sim,
    }
}

fn first_assignment_ms(sim: &Simulation) -> Option<i64> {
    sim.message_log()
        .iter()
        .filter(|m| m.fate == "delivered")
        .find(|m| {
            m.response
                .as_ref()
                .and_then(|r| r.get("active_tasks"))
                .and_then(|t| t.as_array())
                .is_some_and(|t| !t.is_empty())
        })
        .map(|m| m.received_ms)
}

#[test]
fn draft_initializes_once_and_ends_like_shipped() {
    let mut shipped = run(Dialect::Shipped, 90_000);
    let mut draft = run(Dialect::Draft, 90_000);
    for r in [&mut shipped, &mut draft] {
        assert_eq!(r.violations, Vec::<String>::new());
        assert_eq!(r.sim.unexpected_errors(), &[] as &[String]);
        assert!(r.sim.check_replay());
        assert_eq!(r.states.last().map(String::as_str), Some("Stable"));
    }
    assert!(!shipped.states.iter().any(|s| s == "Initializing"));
    assert_eq!(
        draft.states.first().map(String::as_str),
        Some("Initializing")
    );
    let inits: Vec<_> = draft
        .sim
        .message_log()
        .iter()
        .filter(|m| m.api == "StreamsGroupInitialize")
        .collect();
    assert_eq!(inits.len(), 1, "one member asked, once");
    assert_eq!(inits[0].error, None);
    assert!(
        draft
            .sim
            .message_log()
            .iter()
            .filter(|m| m.api.starts_with("StreamsGroupHeartbeat"))
            .all(|m| m.api.ends_with("(draft)") && m.request.get("topology").is_none())
    );
    // Every task has an owner in the end, in both: only the way there differs.
    let assigned = |s: &Simulation| {
        let g = s.coordinator().groups().next().expect("a group");
        let active: usize = g.target_assignment.values().map(|t| t.active.len()).sum();
        (g.members.len(), active, s.all_tasks().len())
    };
    assert_eq!(assigned(&shipped.sim), assigned(&draft.sim));
    let (members, active, all) = assigned(&draft.sim);
    assert_eq!((members, active), (6, all));
    let (s, d) = (
        first_assignment_ms(&shipped.sim).unwrap(),
        first_assignment_ms(&draft.sim).unwrap(),
    );
    eprintln!("first assignment: shipped {s} ms, draft {d} ms");
    // The draft's extra round trip: the first answer asks its member to initialize, and that
    // member's next request is StreamsGroupInitialize.
    let log = draft.sim.message_log();
    let first = &log[0];
    let asked = first
        .response
        .as_ref()
        .and_then(|r| r.get("should_initialize_topology"));
    assert_eq!(asked, Some(&serde_json::Value::Bool(true)), "{first:?}");
    let next = log
        .iter()
        .find(|m| m.member_id == first.member_id && m.seq > first.seq);
    assert_eq!(next.map(|m| m.api.as_str()), Some("StreamsGroupInitialize"));
}

#[test]
fn draft_random_seeds_keep_the_invariants() {
    for seed in 0..12 {
        let mut spec = random_scenario(seed);
        spec.dialect = Dialect::Draft;
        if let Err(f) = random::run_spec(seed, spec) {
            panic!("draft seed {seed}: {} at {} ms", f.reason, f.at_ms);
        }
    }
}
