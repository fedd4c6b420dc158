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

fn check_clean(sim: &Simulation, events: &[SimEvent]) {
    for e in events {
        assert!(
            !matches!(e, SimEvent::InvariantViolated { .. }),
            "{e:?} at {}",
            sim.now()
        );
    }
    assert!(
        sim.unexpected_errors().is_empty(),
        "{:?}",
        sim.unexpected_errors()
    );
}

/// Runs a preset to `until` in 100 ms steps, asserting the invariants after each step.
fn run_checked(name: &str, until: i64, extra: &[TimedAction]) -> Simulation {
    let (spec, mut actions) = preset(name);
    actions.extend(extra.iter().cloned());
    actions.sort_by_key(|a| a.at_ms);
    let mut sim = Simulation::new(spec).unwrap();
    let mut next = actions.into_iter().peekable();
    while sim.now() < until {
        while let Some(a) = next.next_if(|a| a.at_ms <= sim.now()) {
            let ev = sim.apply(a.action).unwrap();
            check_clean(&sim, &ev);
        }
        let ev = sim.step(100);
        check_clean(&sim, &ev);
    }
    sim
}

fn generation(sim: &Simulation) -> i32 {
    sim.snapshot().group.classic.unwrap().generation
}

fn nobody_between(sim: &Simulation, from: i64, to: i64) -> u32 {
    sim.ownership_history()
        .iter()
        .filter(|s| s.at_ms >= from && s.at_ms < to)
        .map(|s| s.owned_by_nobody)
        .max()
        .unwrap_or(0)
}

#[test]
fn classic_presets_converge_with_every_invariant_holding() {
    for (spec, actions) in presets()
        .into_iter()
        .filter(|(s, _)| s.group_type == GroupType::Classic)
    {
        let end = actions.iter().map(|a| a.at_ms).max().unwrap_or(0) + 120_000;
        let sim = run_checked(&spec.name, end, &[]);
        assert_eq!(sim.convergence(), Ok(()), "{}", spec.name);
        assert!(
            sim.invariants().iter().all(|r| r.ok),
            "{}: {:?}",
            spec.name,
            sim.invariants()
        );
        assert_eq!(
            sim.full_replay_hash().unwrap(),
            sim.coordinator().state_hash()
        );
    }
}

#[test]
fn the_live_view_of_a_classic_group_names_each_members_step_of_the_rebalance() {
    // The coordinator-only view (the live view's): during the rebalance that c2's join starts,
    // every member is joining, unjoined (to rejoin), awaiting_sync or stable: never "unknown".
    let (spec, actions) = preset("classic-eager-range");
    let mut sim = Simulation::new(spec.clone()).unwrap();
    let mut next = actions.into_iter().peekable();
    let mut seen = std::collections::BTreeSet::new();
    while sim.now() < 25_000 {
        while let Some(a) = next.next_if(|a| a.at_ms <= sim.now()) {
            sim.apply(a.action).unwrap();
        }
        sim.step(50);
        let Some(v) = classic_group_view(sim.coordinator(), &spec.group_id) else {
            continue; // before the first JoinGroup
        };
        for m in &v.members {
            let c = m.classic.as_ref().unwrap();
            assert_ne!(
                c.client_state,
                "unknown",
                "{} in {} at {}",
                m.member_id,
                v.state,
                sim.now()
            );
            seen.insert((v.state.clone(), c.client_state.clone()));
        }
    }
    for pair in [
        ("PreparingRebalance", "unjoined"),
        ("PreparingRebalance", "joining"),
        ("CompletingRebalance", "awaiting_sync"),
        ("Stable", "stable"),
    ] {
        assert!(
            seen.contains(&(pair.0.to_string(), pair.1.to_string())),
            "{pair:?} in {seen:?}"
        );
    }
}

#[test]
fn eager_range_revokes_everything_on_a_join() {
    let sim = run_checked("classic-eager-range", 25_000, &[]);
    // c2 joins at 15 s: c1 gives up all six partitions before its JoinGroup.
    assert_eq!(nobody_between(&sim, 15_000, 25_000), 6);
    assert_eq!(
        sim.snapshot().group.classic.unwrap().owned_by_nobody.len(),
        0
    );
    let apis: Vec<&str> = sim.message_log().iter().map(|m| m.api.as_str()).collect();
    for api in ["JoinGroup", "SyncGroup", "Heartbeat"] {
        assert!(apis.contains(&api), "{api}");
    }
    // The first JoinGroup of a consumer is answered MEMBER_ID_REQUIRED (v4+).
    let first = &sim.message_log()[0];
    assert_eq!(first.api, "JoinGroup");
    assert_eq!(first.api_version, 9);
    assert_eq!(first.error.as_deref(), Some("MEMBER_ID_REQUIRED"));
    assert!(first.request_hex.len() > 20);
}

#[test]
fn cooperative_sticky_keeps_partitions_and_rebalances_twice() {
    let sim = run_checked("classic-cooperative-sticky", 14_000, &[]);
    let before = generation(&sim);
    let sim = run_checked("classic-cooperative-sticky", 25_000, &[]);
    // One join, two generations: the second hands out what the first revoked.
    assert_eq!(generation(&sim), before + 2);
    let most = nobody_between(&sim, 15_000, 25_000);
    assert!(most > 0 && most < 6, "{most}");
    let owned: Vec<usize> = sim
        .snapshot()
        .group
        .members
        .iter()
        .map(|m| m.classic.as_ref().unwrap().owned_partitions.len())
        .collect();
    assert_eq!(owned, vec![3, 3]);
}

#[test]
fn static_member_bounce_keeps_the_generation_and_its_partitions() {
    let sim = run_checked("classic-static-membership", 19_000, &[]);
    let before = generation(&sim);
    let owned = |sim: &Simulation| {
        sim.snapshot()
            .group
            .members
            .iter()
            .find(|m| m.process_id == "c1" && m.client_status == "alive")
            .map(|m| m.classic.as_ref().unwrap().owned_partitions.clone())
    };
    let c1_before = owned(&sim);
    let sim = run_checked("classic-static-membership", 40_000, &[]);
    assert_eq!(generation(&sim), before);
    assert_eq!(owned(&sim), c1_before);
    assert_eq!(sim.resolve_member("c1-t0").as_deref(), Some("c1-t0-2"));
}

#[test]
fn a_stall_beyond_max_poll_interval_gets_the_member_removed() {
    let stall = TimedAction {
        at_ms: 20_000,
        action: Action::StallMember {
            member: "c1-t0".to_string(),
            ms: 45_000,
        },
    };
    let sim = run_checked("classic-eager-range", 49_000, std::slice::from_ref(&stall));
    let leaves = |sim: &Simulation| {
        sim.message_log()
            .iter()
            .filter(|m| m.api == "LeaveGroup" && m.member_id == "c1-t0-1")
            .count()
    };
    assert_eq!(leaves(&sim), 0);
    // c1 is dynamic: 30 s after its last poll its heartbeat thread sends LeaveGroup; it rejoins
    // as a new member when the stall ends.
    let sim = run_checked("classic-eager-range", 51_000, std::slice::from_ref(&stall));
    assert_eq!(leaves(&sim), 1);
    let sim = run_checked("classic-eager-range", 100_000, &[stall]);
    assert_eq!(sim.convergence(), Ok(()));
}

#[test]
fn coordinator_restart_goes_through_storage_and_the_group_recovers() {
    let restart = |at_ms| TimedAction {
        at_ms,
        action: Action::RestartCoordinator,
    };
    let sim = run_checked(
        "classic-cooperative-sticky",
        120_000,
        &[restart(10_000), restart(15_100), restart(31_000)],
    );
    assert_eq!(sim.convergence(), Ok(()));
    assert!(sim.record_log().iter().any(|r| matches!(
        r.record,
        crate::records::Record::ClassicGroupMetadata { .. }
    )));
}

#[test]
fn replay_to_reproduces_a_classic_run() {
    let (spec, actions) = preset("classic-eager-range");
    let live = run("classic-eager-range", 70_000);
    let again = Simulation::replay_to(spec, &actions, 70_000).unwrap();
    assert_eq!(again.state_hash(), live.state_hash());
    assert_eq!(again.ownership_history(), live.ownership_history());
}

#[test]
fn single_owner_invariant_catches_a_double_owner() {
    let mut sim = run("classic-eager-range", 40_000);
    assert!(sim.invariants().iter().all(|r| r.ok));
    let names: Vec<String> = sim
        .consumers()
        .filter(|c| c.is_alive())
        .map(|c| c.name.clone())
        .collect();
    let stolen = sim.consumers().find(|c| c.name == names[0]).unwrap().owned[0].clone();
    sim.consumers_mut()
        .find(|c| c.name == names[1])
        .unwrap()
        .owned
        .push(stolen);
    let bad = sim
        .invariants()
        .into_iter()
        .find(|r| r.name == invariants::CLASSIC_PARTITION_SINGLE_OWNER)
        .unwrap();
    assert!(!bad.ok, "{bad:?}");
}

#[test]
fn streams_only_actions_are_refused_for_classic_groups() {
    let (spec, _) = preset("classic-eager-range");
    let mut sim = Simulation::new(spec).unwrap();
    assert!(sim.apply(Action::BumpTopologyEpoch).is_err());
    let (spec, _) = presets().into_iter().next().unwrap();
    let mut streams = Simulation::new(spec).unwrap();
    assert!(
        streams
            .apply(Action::StallMember {
                member: "p1-t0".to_string(),
                ms: 10
            })
            .is_err()
    );
}

#[test]
fn classic_seeds_pass() {
    for seed in 0..20 {
        if let Err(f) = run_classic_seed(seed) {
            panic!("{f}");
        }
    }
}
