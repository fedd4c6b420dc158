//! Specific outcomes of groupcoord's `sticky-rack-aware` / `sticky-warmups` assignor.

use super::*;
use crate::types::TaskId;

fn topo(subs: &[(&str, i32, bool)]) -> TopologySpec {
    let mut t = TopologySpec::default();
    for &(id, n, stateful) in subs {
        t.subtopologies.insert(
            id.into(),
            SubtopologySpec {
                number_of_tasks: n,
                stateful,
            },
        );
    }
    t
}

fn member(process: &str) -> MemberSpec {
    MemberSpec {
        process_id: process.into(),
        ..Default::default()
    }
}

fn set(tasks: &[(&str, i32)]) -> TaskSet {
    tasks.iter().map(|&(s, p)| TaskId::new(s, p)).collect()
}

fn run(g: &GroupSpec, t: &TopologySpec) -> GroupAssignment {
    StickyTaskAssignor { warmups: true }.assign(g, t).unwrap()
}

#[test]
fn balances_by_process_capacity() {
    let mut g = GroupSpec::default();
    for (m, p) in [("a", "p1"), ("b", "p1"), ("c", "p1"), ("d", "p2")] {
        g.members.insert(m.into(), member(p));
    }
    let out = run(&g, &topo(&[("0", 8, false)]));
    for a in out.members.values() {
        assert_eq!(a.active.len(), 2);
    }
}

#[test]
fn previous_owners_keep_and_orphans_go_to_standby_holders() {
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    let mut a = member("p1");
    a.active_tasks = set(&[("0", 0), ("0", 1)]);
    let mut b = member("p2");
    b.standby_tasks = set(&[("0", 2)]);
    let mut c = member("p3");
    c.active_tasks = set(&[("0", 3)]);
    g.members.insert("a".into(), a);
    g.members.insert("b".into(), b);
    g.members.insert("c".into(), c);
    // Task 0_2's owner left; b has its standby.
    let out = run(&g, &topo(&[("0", 4, true)]));
    assert!(out.members["a"].active.contains("0", 0));
    assert!(out.members["a"].active.contains("0", 1));
    assert!(out.members["b"].active.contains("0", 2));
    assert!(out.members["c"].active.contains("0", 3));
}

#[test]
fn cold_start_returns_tasks_to_the_state_on_disk() {
    // Restarted members: fresh ids, empty assignments, offsets of their local state.
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    let t = topo(&[("0", 6, true)]);
    for (m, p, tasks) in [("x", "p1", [0, 1, 2]), ("y", "p2", [3, 4, 5])] {
        let mut s = member(p);
        for part in tasks {
            s.task_offsets.insert(TaskId::new("0", part), 500);
        }
        // and stale state of one of the other's tasks
        s.task_offsets
            .insert(TaskId::new("0", (tasks[0] + 3) % 6), 10);
        g.members.insert(m.into(), s);
    }
    let out = run(&g, &t);
    assert_eq!(
        out.members["x"].active,
        set(&[("0", 0), ("0", 1), ("0", 2)])
    );
    assert_eq!(
        out.members["y"].active,
        set(&[("0", 3), ("0", 4), ("0", 5)])
    );
    assert_eq!(
        out.members["x"].standby,
        set(&[("0", 3), ("0", 4), ("0", 5)])
    );
}

#[test]
fn empty_process_id_is_the_member_id() {
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    g.members.insert("a".into(), member(""));
    g.members.insert("b".into(), member(""));
    let out = run(&g, &topo(&[("0", 2, true)]));
    // Two processes: each task has a standby on the other member.
    for a in out.members.values() {
        assert_eq!(a.active.len(), 1);
        assert_eq!(a.standby.len(), 1);
        assert!(!a.active.intersects(&a.standby));
    }
}

#[test]
fn tasks_outside_the_topology_are_ignored() {
    let mut g = GroupSpec::default();
    let mut a = member("p1");
    a.active_tasks = set(&[("0", 0), ("0", 7), ("zz", 0), ("0", -1)]);
    a.task_offsets.insert(TaskId::new("nope", 3), 5);
    g.members.insert("a".into(), a);
    g.members.insert("b".into(), member("p2"));
    let out = run(&g, &topo(&[("0", 2, true)]));
    assert_eq!(out.members["a"].active, set(&[("0", 0)]));
    assert_eq!(out.members["b"].active, set(&[("0", 1)]));
}

#[test]
fn zero_tasks_and_zero_members() {
    let mut g = GroupSpec::default();
    assert!(run(&g, &topo(&[("0", 3, true)])).members.is_empty());
    g.members.insert("a".into(), member("p"));
    let out = run(&g, &TopologySpec::default());
    assert_eq!(out.members["a"], MemberAssignment::default());
}

#[test]
fn standbys_prefer_another_rack() {
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    g.configs.rack_aware_assignment_tags = vec!["zone".into()];
    // p1, p2 in zone a; p3, p4 in zone b.
    for (m, p, z) in [
        ("m1", "p1", "a"),
        ("m2", "p2", "a"),
        ("m3", "p3", "b"),
        ("m4", "p4", "b"),
    ] {
        let mut s = member(p);
        s.client_tags.insert("zone".into(), z.into());
        g.members.insert(m.into(), s);
    }
    let out = run(&g, &topo(&[("0", 8, true)]));
    let zone = |m: &str| g.members[m].client_tags["zone"].clone();
    for (id, a) in &out.members {
        assert_eq!(a.active.len(), 2);
        assert_eq!(a.standby.len(), 2);
        for t in a.standby.iter() {
            let owner = out
                .members
                .iter()
                .find(|(_, x)| x.active.contains_task(&t))
                .unwrap()
                .0;
            assert_ne!(zone(owner), zone(id), "standby {t} on {id}");
        }
    }
}

#[test]
fn warmup_keeps_task_on_caught_up_owner() {
    let t = topo(&[("0", 4, true)]);
    let mut g = GroupSpec::default();
    g.configs.num_warmup_replicas = 1;
    g.configs.acceptable_recovery_lag = 10;
    let mut a = member("p1");
    a.active_tasks = set(&[("0", 0), ("0", 1), ("0", 2), ("0", 3)]);
    for p in 0..4 {
        a.task_offsets.insert(TaskId::new("0", p), 100);
        a.task_end_offsets.insert(TaskId::new("0", p), 100);
    }
    g.members.insert("a".into(), a);
    g.members.insert("b".into(), member("p2"));
    let out = run(&g, &t);
    // Balanced target: b gets two tasks; one warm-up fits the budget.
    assert_eq!(out.members["a"].active.len(), 3);
    assert_eq!(out.members["b"].active.len(), 1);
    assert_eq!(out.members["b"].warmup.len(), 1);
    assert!(!out.members["b"].warmup.intersects(&out.members["b"].active));
    // `sticky-rack-aware` (like the default `sticky`, Kafka 4.4) never places warm-ups, whatever
    // the budget.
    let plain = StickyTaskAssignor { warmups: false }
        .assign(&g, &t)
        .unwrap();
    assert_eq!(plain.members["b"].active.len(), 2);
    assert!(plain.members.values().all(|m| m.warmup.is_empty()));
    // With no budget, the task moves directly (as in Kafka 4.4).
    g.configs.num_warmup_replicas = 0;
    let out = run(&g, &t);
    assert_eq!(out.members["b"].active.len(), 2);
    assert!(out.members["b"].warmup.is_empty());
}

#[test]
fn warmup_replaces_the_keepers_standby() {
    // a runs 0_0..0_3, b holds caught-up standbys of all of them, c joins with nothing.
    let t = topo(&[("0", 3, true)]);
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    g.configs.num_warmup_replicas = 3;
    g.configs.acceptable_recovery_lag = 10;
    let mut a = member("p1");
    a.active_tasks = set(&[("0", 0), ("0", 1), ("0", 2)]);
    let mut b = member("p2");
    b.active_tasks = TaskSet::new();
    b.standby_tasks = set(&[("0", 0), ("0", 1), ("0", 2)]);
    for p in 0..3 {
        a.task_end_offsets.insert(TaskId::new("0", p), 100);
        b.task_offsets.insert(TaskId::new("0", p), 95);
    }
    g.members.insert("a".into(), a);
    g.members.insert("b".into(), b);
    g.members.insert("c".into(), member("p3"));
    let out = run(&g, &t);
    // b is caught up, so the tasks moving off a go to b first; c (no state) warms up instead of
    // running anything stateful.
    assert!(out.members["c"].active.is_empty(), "{out:?}");
    let holders: usize = out.members.values().map(|x| x.active.len()).sum();
    assert_eq!(holders, 3);
}

#[test]
fn standbys_differ_in_every_tag_key_when_possible() {
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    g.configs.rack_aware_assignment_tags = vec!["zone".into(), "rack".into()];
    for (m, z, r) in [
        ("a", "z1", "r1"),
        ("b", "z1", "r2"),
        ("c", "z2", "r1"),
        ("d", "z2", "r2"),
    ] {
        let mut s = member(&format!("p-{m}"));
        s.client_tags.insert("zone".into(), z.into());
        s.client_tags.insert("rack".into(), r.into());
        g.members.insert(m.into(), s);
    }
    let out = run(&g, &topo(&[("0", 8, true), ("1", 4, false)]));
    let tags = |m: &str| g.members[m].client_tags.clone();
    for (id, a) in &out.members {
        assert_eq!(a.active.len(), 3);
        assert_eq!(a.standby.len(), 2);
        for t in a.standby.iter() {
            let owner = out
                .members
                .iter()
                .find(|(_, x)| x.active.contains_task(&t))
                .unwrap()
                .0;
            assert_ne!(tags(owner)["zone"], tags(id)["zone"], "standby {t} on {id}");
            assert_ne!(tags(owner)["rack"], tags(id)["rack"], "standby {t} on {id}");
        }
    }
}

#[test]
fn member_without_tags_never_counts_as_diverse() {
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    g.configs.rack_aware_assignment_tags = vec!["zone".into()];
    let mut a = member("p1");
    a.client_tags.insert("zone".into(), "z1".into());
    a.active_tasks = set(&[("0", 0)]);
    let mut b = member("p2");
    b.client_tags.insert("zone".into(), "z2".into());
    g.members.insert("a".into(), a);
    g.members.insert("b".into(), b);
    g.members.insert("c".into(), member("p3"));
    let out = run(&g, &topo(&[("0", 1, true)]));
    assert!(out.members["a"].active.contains("0", 0));
    assert!(out.members["b"].standby.contains("0", 0), "{out:?}");
}
