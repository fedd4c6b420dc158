//! KIP-848 consumer groups in the simulation: the preset reaches Stable with every partition
//! consumed once, a slow member holds up only what it must give up, and the invariants catch a
//! partition consumed twice at one epoch.

use super::*;

fn preset() -> (ScenarioSpec, Vec<TimedAction>) {
    presets()
        .into_iter()
        .find(|(s, _)| s.name == "consumer-uniform")
        .expect("preset exists")
}

/// Runs the preset to `until` in 100 ms steps, asserting the invariants after each step.
fn run_checked(until: i64) -> Simulation {
    let (spec, actions) = preset();
    let mut sim = Simulation::new(spec).unwrap();
    let mut next = actions.into_iter().peekable();
    while sim.now() < until {
        while let Some(a) = next.next_if(|a| a.at_ms <= sim.now()) {
            let ev = sim.apply(a.action).unwrap();
            assert!(
                !ev.iter()
                    .any(|e| matches!(e, SimEvent::InvariantViolated { .. }))
            );
        }
        for e in sim.step(100) {
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
    sim
}

fn owned(sim: &Simulation) -> Vec<(String, Vec<(String, i32)>)> {
    sim.kip848_consumers()
        .filter(|c| c.is_alive())
        .map(|c| (c.name.clone(), c.owned.clone()))
        .collect()
}

#[test]
fn preset_settles_with_every_partition_consumed_once() {
    let sim = run_checked(45_000);
    let g = sim.snapshot().group;
    assert_eq!(g.state, "Stable");
    assert_eq!(g.group_type, GroupType::Consumer);
    let o = owned(&sim);
    assert_eq!(o.len(), 3);
    let mut all: Vec<(String, i32)> = o.iter().flat_map(|(_, p)| p.clone()).collect();
    all.sort();
    let want: Vec<(String, i32)> = (0..6).map(|p| ("orders".to_string(), p)).collect();
    assert_eq!(all, want);
    // `uniform` over 3 members and 6 partitions: two each.
    assert!(o.iter().all(|(_, p)| p.len() == 2), "{o:?}");
    assert_eq!(sim.ownership_history().last().unwrap().owned_by_nobody, 0);
    assert!(
        sim.message_log()
            .iter()
            .all(|m| m.api == "ConsumerGroupHeartbeat")
    );
}

#[test]
fn a_slow_member_holds_up_only_its_own_partitions() {
    // c2 crashed at 50 s and was removed after the session timeout: c1 and c3 own 3 each. At
    // 110 s c1's poll loop stalls 15 s and c4 joins: c3 gives up one partition to c4 at once;
    // c1's partition for c4 waits for the stall to end.
    let sim = run_checked(118_000);
    let last = *sim.ownership_history().last().unwrap();
    assert_eq!(
        last.owned_by_nobody, 0,
        "nobody lost a partition: c1 still consumes what it must give up"
    );
    let c4 = owned(&sim)
        .into_iter()
        .find(|(n, _)| n.starts_with("c4-"))
        .unwrap();
    assert_eq!(
        c4.1.len(),
        1,
        "c4 got c3's partition while c1 stalls: {c4:?}"
    );
    let sim = run_checked(140_000);
    let o = owned(&sim);
    assert!(o.iter().all(|(_, p)| p.len() == 2), "{o:?}");
    assert_eq!(sim.snapshot().group.state, "Stable");
}

#[test]
fn a_partition_consumed_twice_at_one_epoch_is_a_violation() {
    let mut sim = run_checked(45_000);
    let names: Vec<String> = owned(&sim).into_iter().map(|(n, _)| n).collect();
    let stolen = sim
        .kip848_consumers()
        .find(|c| c.name == names[0])
        .unwrap()
        .owned[0]
        .clone();
    let thief = sim.kip848_mut(&names[1]);
    thief.owned.push(stolen);
    let bad = sim
        .invariants()
        .into_iter()
        .find(|r| r.name == "consumer-partition-single-owner")
        .unwrap();
    assert!(!bad.ok, "{bad:?}");
}

#[test]
fn replay_gives_the_same_state() {
    let sim = run_checked(60_000);
    let (spec, _) = preset();
    let again = Simulation::replay_to(spec, sim.actions(), sim.now()).unwrap();
    assert_eq!(again.state_hash(), sim.state_hash());
}

#[test]
fn the_record_log_and_snapshot_convert_to_json() {
    // The explorer takes both as JSON; record 8's partition epochs are keyed by topic id.
    let sim = run_checked(45_000);
    let records = serde_json::to_string(sim.record_log()).unwrap();
    assert!(records.contains("\"assigned\":[["), "{records:.300}");
    serde_json::to_string(&sim.snapshot()).unwrap();
}
