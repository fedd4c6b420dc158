//! The explorer's "break it" switches: each one makes an invariant fail at a deterministic
//! moment of the same run that stays clean with the switch off.

use super::*;

/// Runs the `scale-out` preset (plus `extra`) to `until` in 100 ms steps and returns the first
/// violated invariant with its time.
fn first_violation(break_it: BreakIt, extra: &[TimedAction], until: i64) -> Vec<(String, i64)> {
    let (mut spec, mut actions) = presets()
        .into_iter()
        .find(|(s, _)| s.name == "scale-out")
        .expect("preset exists");
    spec.break_it = break_it;
    actions.extend(extra.iter().cloned());
    actions.sort_by_key(|a| a.at_ms);
    let mut sim = Simulation::new(spec).unwrap();
    let mut next = actions.into_iter().peekable();
    while sim.now() < until {
        let mut events = Vec::new();
        while let Some(a) = next.next_if(|a| a.at_ms <= sim.now()) {
            events.extend(sim.apply(a.action).unwrap());
        }
        events.extend(sim.step(100));
        let violated: Vec<(String, i64)> = events
            .into_iter()
            .filter_map(|e| match e {
                SimEvent::InvariantViolated { at_ms, name, .. } => Some((name, at_ms)),
                _ => None,
            })
            .collect();
        if !violated.is_empty() {
            return violated;
        }
    }
    Vec::new()
}

fn check(break_it: BreakIt, extra: &[TimedAction], expected: &str) -> i64 {
    assert_eq!(
        first_violation(BreakIt::default(), extra, 90_000),
        Vec::new()
    );
    let first = first_violation(break_it, extra, 90_000);
    let at_ms = first
        .iter()
        .find(|(name, _)| name == expected)
        .unwrap_or_else(|| panic!("{expected} not in {first:?}"))
        .1;
    assert_eq!(
        first_violation(break_it, extra, 90_000),
        first,
        "deterministic"
    );
    at_ms
}

#[test]
fn buggy_assignor_gives_a_task_to_two_members() {
    let b = BreakIt {
        double_assign: true,
        ..BreakIt::default()
    };
    check(b, &[], invariants::ACTIVE_TASK_SINGLE_OWNER);
}

#[test]
fn skipping_revocation_runs_a_task_twice_when_p2_joins() {
    let b = BreakIt {
        skip_revocation: true,
        ..BreakIt::default()
    };
    let at = check(b, &[], invariants::ACTIVE_TASK_SINGLE_OWNER);
    // Only a rebalance that moves tasks can break it: p2 joins at 20 s.
    assert!(at >= 20_000, "{at}");
}

#[test]
fn without_fencing_a_cut_off_member_keeps_its_tasks() {
    let b = BreakIt {
        no_fencing: true,
        ..BreakIt::default()
    };
    let cut = TimedAction {
        at_ms: 10_000,
        action: Action::CutNetwork {
            member: "p1-t0".to_string(),
        },
    };
    let at = check(b, &[cut], invariants::ACTIVE_TASK_SINGLE_OWNER);
    // Its tasks move only once the session timed out.
    assert!(at >= 45_000, "{at}");
}

#[test]
fn a_restart_that_drops_records_differs_from_the_log() {
    let b = BreakIt {
        drop_records_on_restart: true,
        ..BreakIt::default()
    };
    let restart = TimedAction {
        at_ms: 30_000,
        action: Action::RestartCoordinator,
    };
    let at = check(b, &[restart], invariants::REPLAY_EQUALS_LIVE);
    // Checked when the restart is applied, not at the end of the step after it.
    assert_eq!(at, 30_000);
}

#[test]
fn break_it_is_left_out_of_a_correct_spec() {
    let (spec, _) = presets().remove(0);
    let json = serde_json::to_string(&spec).unwrap();
    assert!(!json.contains("break_it"), "{json}");
    let mut broken = spec;
    broken.break_it.no_fencing = true;
    let back: ScenarioSpec =
        serde_json::from_str(&serde_json::to_string(&broken).unwrap()).unwrap();
    assert_eq!(back.break_it, broken.break_it);
}
