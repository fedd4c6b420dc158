//! Property tests of the sticky assignors on random groups of up to 200 members and 2,000 tasks.
//!
//! * groupcoord's extensions `sticky-rack-aware` / `sticky-warmups` (`assignor::sticky`, the rules
//!   in its module docs): exactly-once actives, standby placement, balance, stickiness, minimum
//!   movement, determinism, rack diversity and warm-ups.
//! * The default `sticky` (`assignor::kafka_sticky`, Kafka 4.4's algorithm, whose exact outputs
//!   `tests/assignor_apache.rs` checks against the Kafka jar): the subset of those rules Kafka's
//!   algorithm satisfies (the `kafka_` properties at the end).
// Native only: plain `#[test]`s (and proptest) do not run under wasm-bindgen-test; the wasm
// API has its browser tests in tests/wasm_browser.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};

use groupcoord::assignor::KafkaStickyAssignor;
use groupcoord::assignor::StickyTaskAssignor;
use groupcoord::assignor::{
    AssignmentConfigs, GroupAssignment, GroupSpec, MemberSpec, SubtopologySpec, TaskAssignor,
    TopologySpec,
};
use groupcoord::types::TaskId;
use proptest::prelude::*;

/// Shape of a random group; every field shrinks towards a smaller problem.
#[derive(Debug, Clone)]
struct Shape {
    members: usize,
    /// Members per process are `1 + (member index * 7 + salt) % max_per_proc`-ish groups.
    max_per_proc: usize,
    salt: usize,
    subtopologies: Vec<(i32, bool)>,
    standbys: i32,
    racks: usize,
}

fn shape(max_members: usize, max_tasks: i32) -> impl Strategy<Value = Shape> {
    (
        1..=max_members,
        1usize..=4,
        0usize..1000,
        prop::collection::vec((1..=max_tasks / 8, any::<bool>()), 1..=8),
        0i32..=3,
        0usize..=4,
    )
        .prop_map(
            |(members, max_per_proc, salt, subtopologies, standbys, racks)| Shape {
                members,
                max_per_proc,
                salt,
                subtopologies,
                standbys,
                racks,
            },
        )
}

fn member_id(i: usize) -> String {
    format!("m{i:04}")
}

/// Processes of `shape`: consecutive members share a process, sizes between 1 and `max_per_proc`.
fn process_of(shape: &Shape) -> Vec<usize> {
    let mut out = Vec::with_capacity(shape.members);
    let (mut p, mut left) = (0, 0);
    for i in 0..shape.members {
        if left == 0 {
            if i > 0 {
                p += 1;
            }
            left = 1 + (i * 7 + shape.salt) % shape.max_per_proc;
        }
        out.push(p);
        left -= 1;
    }
    out
}

fn topology(shape: &Shape) -> TopologySpec {
    let mut t = TopologySpec::default();
    for (i, &(n, stateful)) in shape.subtopologies.iter().enumerate() {
        t.subtopologies.insert(
            format!("s{i}"),
            SubtopologySpec {
                number_of_tasks: n,
                stateful,
            },
        );
    }
    t
}

fn group(shape: &Shape) -> GroupSpec {
    let procs = process_of(shape);
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = shape.standbys;
    if shape.racks > 0 {
        g.configs.rack_aware_assignment_tags = vec!["rack".into()];
    }
    for (i, &p) in procs.iter().enumerate() {
        let mut m = MemberSpec {
            process_id: format!("p{p:04}"),
            ..Default::default()
        };
        if shape.racks > 0 {
            m.client_tags
                .insert("rack".into(), format!("r{}", p % shape.racks));
        }
        g.members.insert(member_id(i), m);
    }
    g
}

/// `sticky-warmups` (with a warm-up budget of 0 it is `sticky-rack-aware`).
fn assign(g: &GroupSpec, t: &TopologySpec) -> GroupAssignment {
    StickyTaskAssignor { warmups: true }
        .assign(g, t)
        .expect("sticky never fails")
}

/// The default `sticky` (Kafka 4.4's algorithm).
fn assign_kafka(g: &GroupSpec, t: &TopologySpec) -> GroupAssignment {
    KafkaStickyAssignor
        .assign(g, t)
        .expect("groups with members")
}

fn process(g: &GroupSpec, member: &str) -> String {
    let p = &g.members[member].process_id;
    if p.is_empty() {
        member.to_string()
    } else {
        p.clone()
    }
}

/// The group with `out` as every member's current tasks.
fn with_owned(g: &GroupSpec, out: &GroupAssignment) -> GroupSpec {
    let mut g = g.clone();
    for (id, m) in g.members.iter_mut() {
        if let Some(a) = out.members.get(id) {
            m.active_tasks = a.active.clone();
            m.standby_tasks = a.standby.clone();
            m.warmup_tasks = a.warmup.clone();
        }
    }
    g
}

fn owners(out: &GroupAssignment) -> BTreeMap<TaskId, String> {
    let mut o = BTreeMap::new();
    for (id, a) in &out.members {
        for t in a.active.iter() {
            o.insert(t, id.clone());
        }
    }
    o
}

fn spread(counts: impl Iterator<Item = usize>) -> usize {
    let v: Vec<usize> = counts.collect();
    v.iter().max().copied().unwrap_or(0) - v.iter().min().copied().unwrap_or(0)
}

fn active_spread(out: &GroupAssignment) -> usize {
    spread(out.members.values().map(|a| a.active.len()))
}

fn total_spread(out: &GroupAssignment) -> usize {
    spread(
        out.members
            .values()
            .map(|a| a.active.len() + a.standby.len()),
    )
}

/// Adds random current tasks and offsets: `(member, subtopology, partition, role)`, role 0-2
/// active / standby / warm-up, 3 an offset (from -2, "caught up", upwards). Tasks may lie
/// outside the topology and be claimed twice; with `clear_processes`, every 17th claim also
/// clears its member's process id.
fn add_claims(g: &mut GroupSpec, claims: Vec<(usize, usize, i32, u8)>, clear_processes: bool) {
    let ids: Vec<String> = g.members.keys().cloned().collect();
    for (i, (m, sub, p, role)) in claims.into_iter().enumerate() {
        let m = g.members.get_mut(&ids[m % ids.len()]).expect("member");
        let sub = format!("s{sub}");
        match role {
            0 => {
                m.active_tasks.insert(&sub, p);
            }
            1 => {
                m.standby_tasks.insert(&sub, p);
            }
            2 => {
                m.warmup_tasks.insert(&sub, p);
            }
            _ => {
                m.task_offsets.insert(TaskId::new(sub, p), i as i64 - 2);
            }
        }
        if clear_processes && i % 17 == 0 {
            m.process_id.clear();
        }
    }
}

/// Exactly-once actives and the process constraint for standbys and warm-ups.
fn check_invariants(
    g: &GroupSpec,
    t: &TopologySpec,
    out: &GroupAssignment,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        out.members.keys().collect::<Vec<_>>(),
        g.members.keys().collect::<Vec<_>>(),
        "every member appears"
    );
    let mut active: BTreeMap<TaskId, usize> = BTreeMap::new();
    let mut holders: BTreeMap<TaskId, Vec<String>> = BTreeMap::new();
    for (id, a) in &out.members {
        for task in a.active.iter() {
            *active.entry(task.clone()).or_default() += 1;
            holders.entry(task).or_default().push(process(g, id));
        }
    }
    let all: Vec<TaskId> = t.tasks().collect();
    if !g.members.is_empty() {
        prop_assert_eq!(active.len(), all.len(), "every task active");
        prop_assert!(active.values().all(|&c| c == 1), "every task active once");
    }
    for (id, a) in &out.members {
        for task in a.standby.iter().chain(a.warmup.iter()) {
            prop_assert!(t.contains(&task));
            prop_assert!(
                t.subtopologies[&task.subtopology].stateful,
                "standby of stateless {task}"
            );
            holders.entry(task).or_default().push(process(g, id));
        }
    }
    for (task, procs) in &holders {
        let distinct: BTreeSet<&String> = procs.iter().collect();
        prop_assert_eq!(
            distinct.len(),
            procs.len(),
            "task {} twice on one process",
            task
        );
    }
    Ok(())
}

fn n_procs(g: &GroupSpec) -> usize {
    g.members
        .keys()
        .map(|m| process(g, m))
        .collect::<BTreeSet<_>>()
        .len()
}

/// Fewest active moves from `prev` (task -> owner) to any balanced assignment over `members`.
fn min_moves(prev: &BTreeMap<TaskId, String>, members: &BTreeSet<String>, tasks: usize) -> usize {
    let m = members.len();
    let (q, r) = (tasks / m, tasks % m);
    let mut counts: Vec<usize> = members
        .iter()
        .map(|id| prev.values().filter(|o| *o == id).count())
        .collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let kept: usize = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| c.min(q + usize::from(i < r)))
        .sum();
    tasks - kept
}

fn moved(prev: &BTreeMap<TaskId, String>, next: &BTreeMap<TaskId, String>) -> usize {
    prev.iter()
        .filter(|(t, o)| next.get(*t) != Some(*o))
        .count()
}

/// `second` (computed with `first` as the current assignment) changed nothing: actives never
/// move; standbys do not either when `first` was balanced. (When the process constraint makes
/// balance impossible, which standbys of an overloaded member fit its quota depends on order, so
/// a rerun may move some.)
fn assert_fixpoint(first: &GroupAssignment, second: &GroupAssignment) -> Result<(), TestCaseError> {
    prop_assert_eq!(owners(first), owners(second), "actives moved");
    if total_spread(first) <= 1 {
        prop_assert_eq!(first, second);
    }
    Ok(())
}

/// `cases` per property, or `ASSIGNOR_PROPTEST_CASES` for a deeper local run.
fn cfg(cases: u32) -> ProptestConfig {
    let cases = std::env::var("ASSIGNOR_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cfg(48))]

    /// From scratch: invariants, all standbys that fit, active spread <= 1, total spread <= 1.
    #[test]
    fn from_scratch_is_valid_and_balanced(s in shape(200, 2000)) {
        let (g, t) = (group(&s), topology(&s));
        let out = assign(&g, &t);
        check_invariants(&g, &t, &out)?;
        prop_assert!(active_spread(&out) <= 1, "active spread {}", active_spread(&out));
        let fit = (s.standbys as usize).min(n_procs(&g) - 1);
        for task in t.tasks().filter(|x| t.subtopologies[&x.subtopology].stateful) {
            let n = out.members.values().filter(|a| a.standby.contains_task(&task)).count();
            prop_assert_eq!(n, fit, "standbys of {}", task);
        }
        // Totals balance whenever the process constraint allows it: a process with `c` of the
        // `M` members must hold `c / M` of all replicas, at most one of each task, so
        // `c * (standbys + 1) <= M`. At equality it also depends on how the stateless actives
        // happen to be spread (actives balance by count), hence the strict bound.
        let max_cap = process_of(&s).iter().fold(BTreeMap::<usize, usize>::new(), |mut m, p| {
            *m.entry(*p).or_default() += 1;
            m
        }).into_values().max().unwrap_or(0);
        if max_cap * (fit + 1) < s.members {
            prop_assert!(total_spread(&out) <= 1, "total spread {}", total_spread(&out));
        }
    }

    /// One large process and many small ones: totals still balance whenever the process
    /// constraint allows it, with and without racks.
    #[test]
    fn skewed_processes_balance_when_feasible(
        members in 2usize..=200,
        big_share in 1usize..=100,
        subtopologies in prop::collection::vec(1i32..=300, 1..=6),
        standbys in 1i32..=2,
        racks in 0usize..=3,
    ) {
        let big = (members * big_share / 100).max(1);
        let mut g = GroupSpec::default();
        g.configs.num_standby_replicas = standbys;
        if racks > 0 {
            g.configs.rack_aware_assignment_tags = vec!["rack".into()];
        }
        for i in 0..members {
            let p = if i < big { 0 } else { i };
            let mut m = MemberSpec { process_id: format!("p{p:04}"), ..Default::default() };
            if racks > 0 {
                m.client_tags.insert("rack".into(), format!("r{}", p % racks));
            }
            g.members.insert(member_id(i), m);
        }
        let mut t = TopologySpec::default();
        for (i, n) in subtopologies.iter().enumerate() {
            t.subtopologies.insert(format!("s{i}"), SubtopologySpec { number_of_tasks: *n, stateful: true });
        }
        let out = assign(&g, &t);
        check_invariants(&g, &t, &out)?;
        prop_assert!(active_spread(&out) <= 1);
        let fit = (standbys as usize).min(n_procs(&g) - 1);
        if big * (fit + 1) <= members {
            prop_assert!(total_spread(&out) <= 1, "total spread {}", total_spread(&out));
        }
        assert_fixpoint(&out, &assign(&with_owned(&g, &out), &t))?;
    }

    /// Feeding the output back in as the current assignment moves nothing.
    #[test]
    fn output_is_a_fixpoint(s in shape(200, 2000)) {
        let (g, t) = (group(&s), topology(&s));
        let first = assign(&g, &t);
        let second = assign(&with_owned(&g, &first), &t);
        assert_fixpoint(&first, &second)?;
    }

    /// The same with the offsets a steady group reports and warm-ups enabled: everybody is
    /// caught up on what it runs, so no warm-up is needed and nothing moves.
    #[test]
    fn output_with_offsets_and_warmups_is_a_fixpoint(s in shape(200, 2000), budget in 0i32..=3) {
        let t = topology(&s);
        let mut g = group(&s);
        g.configs.num_warmup_replicas = budget;
        g.configs.acceptable_recovery_lag = 100;
        let first = assign(&g, &t);
        let mut g2 = with_owned(&g, &first);
        for m in g2.members.values_mut() {
            for task in m.active_tasks.iter() {
                m.task_end_offsets.insert(task.clone(), 1000);
                m.task_offsets.insert(task, 1000);
            }
            for task in m.standby_tasks.iter() {
                m.task_offsets.insert(task, 990);
            }
        }
        let second = assign(&g2, &t);
        assert_fixpoint(&first, &second)?;
    }

    /// One member leaving moves only its own active tasks (the minimum); the rest stays valid.
    #[test]
    fn minimum_movement_on_leave(s in shape(200, 2000), pick in any::<prop::sample::Index>()) {
        prop_assume!(s.members >= 2);
        let (g, t) = (group(&s), topology(&s));
        let first = assign(&g, &t);
        let mut g2 = with_owned(&g, &first);
        let leaver = member_id(pick.index(s.members));
        g2.members.remove(&leaver);
        let second = assign(&g2, &t);
        check_invariants(&g2, &t, &second)?;
        prop_assert!(active_spread(&second) <= 1);
        let (prev, next) = (owners(&first), owners(&second));
        let members: BTreeSet<String> = g2.members.keys().cloned().collect();
        let min = min_moves(&prev, &members, prev.len());
        prop_assert_eq!(moved(&prev, &next), min);
        prop_assert_eq!(min, first.members[&leaver].active.len());
    }

    /// One member joining (on a new or an existing process) moves the minimum number of actives.
    #[test]
    fn minimum_movement_on_join(s in shape(200, 2000), existing_proc in any::<bool>()) {
        let (g, t) = (group(&s), topology(&s));
        let first = assign(&g, &t);
        let mut g2 = with_owned(&g, &first);
        let mut joiner = MemberSpec { process_id: "p9999".into(), ..Default::default() };
        if existing_proc {
            joiner.process_id = g.members[&member_id(0)].process_id.clone();
        }
        if s.racks > 0 {
            joiner.client_tags.insert("rack".into(), "r0".into());
        }
        g2.members.insert("new".into(), joiner);
        let second = assign(&g2, &t);
        check_invariants(&g2, &t, &second)?;
        prop_assert!(active_spread(&second) <= 1);
        let (prev, next) = (owners(&first), owners(&second));
        let members: BTreeSet<String> = g2.members.keys().cloned().collect();
        prop_assert_eq!(moved(&prev, &next), min_moves(&prev, &members, prev.len()));
    }

    /// The output does not depend on the order members were inserted in, nor on repetition.
    #[test]
    fn deterministic_under_member_order(s in shape(120, 1200), seed in any::<u64>()) {
        let (g, t) = (group(&s), topology(&s));
        let base = assign(&with_owned(&g, &assign(&g, &t)), &t);
        // Rebuild the spec inserting members (and their tags) in a shuffled order.
        let mut ids: Vec<String> = g.members.keys().cloned().collect();
        let mut x = seed | 1;
        for i in (1..ids.len()).rev() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            ids.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let prev = with_owned(&g, &assign(&g, &t));
        let mut shuffled = GroupSpec { configs: g.configs.clone(), ..Default::default() };
        for id in &ids {
            shuffled.members.insert(id.clone(), prev.members[id].clone());
        }
        prop_assert_eq!(&assign(&shuffled, &t), &base);
        prop_assert_eq!(&assign(&prev, &t), &base);
    }

    /// With racks of equal size and more racks than replicas, every task's replicas are on
    /// distinct racks.
    #[test]
    fn standbys_on_distinct_racks(
        procs_per_rack in 1usize..=12,
        racks in 2usize..=4,
        per_proc in 1usize..=3,
        subtopologies in prop::collection::vec(1i32..=150, 1..=6),
        standbys in 1i32..=3,
    ) {
        prop_assume!((standbys as usize) < racks);
        let mut g = GroupSpec::default();
        g.configs.num_standby_replicas = standbys;
        g.configs.rack_aware_assignment_tags = vec!["rack".into()];
        for p in 0..procs_per_rack * racks {
            for k in 0..per_proc {
                let mut m = MemberSpec { process_id: format!("p{p:03}"), ..Default::default() };
                m.client_tags.insert("rack".into(), format!("r{}", p % racks));
                g.members.insert(format!("m{p:03}-{k}"), m);
            }
        }
        let mut t = TopologySpec::default();
        for (i, n) in subtopologies.iter().enumerate() {
            t.subtopologies.insert(format!("s{i}"), SubtopologySpec { number_of_tasks: *n, stateful: true });
        }
        let out = assign(&g, &t);
        check_invariants(&g, &t, &out)?;
        prop_assert!(total_spread(&out) <= 1, "total spread {}", total_spread(&out));
        let rack = |m: &str| g.members[m].client_tags["rack"].clone();
        let mut racks_of: BTreeMap<TaskId, Vec<String>> = BTreeMap::new();
        for (id, a) in &out.members {
            for task in a.active.iter().chain(a.standby.iter()) {
                racks_of.entry(task).or_default().push(rack(id));
            }
        }
        for (task, rs) in racks_of {
            let distinct: BTreeSet<&String> = rs.iter().collect();
            prop_assert_eq!(distinct.len(), rs.len(), "task {} racks {:?}", task, rs);
        }
    }
}

proptest! {
    #![proptest_config(cfg(32))]

    /// Random previous assignments (including tasks outside the topology, duplicate claims and
    /// members without a process id) never break the invariants or active balance.
    #[test]
    fn arbitrary_previous_state(s in shape(100, 1000), claims in prop::collection::vec((0usize..100, 0usize..12, 0i32..300, 0u8..4), 0..600)) {
        let t = topology(&s);
        let mut g = group(&s);
        add_claims(&mut g, claims, true);
        let out = assign(&g, &t);
        check_invariants(&g, &t, &out)?;
        prop_assert!(active_spread(&out) <= 1);
    }

    /// Warm-ups: a task moving away from a caught-up owner to a member without its state stays
    /// with a caught-up member and the intended owner warms it up; at most the budget; the
    /// invariants hold; and once the warm-up reports caught up, the task moves to it.
    #[test]
    fn warmups_follow_kip_441(s in shape(60, 600), budget in 1i32..=4) {
        let t = topology(&s);
        let mut g = group(&s);
        g.configs.num_warmup_replicas = budget;
        g.configs.acceptable_recovery_lag = 100;
        let first = assign(&g, &t);
        // Everyone reports its state: actives caught up, standbys 50 behind.
        let mut g2 = with_owned(&g, &first);
        for m in g2.members.values_mut() {
            for task in m.active_tasks.iter() {
                m.task_end_offsets.insert(task.clone(), 1000);
                m.task_offsets.insert(task, 1000);
            }
            for task in m.standby_tasks.iter() {
                m.task_offsets.insert(task, 950);
            }
        }
        g2.members.insert("new".into(), MemberSpec { process_id: "p9999".into(), ..Default::default() });
        let second = assign(&g2, &t);
        check_invariants(&g2, &t, &second)?;
        let warmups: usize = second.members.values().map(|a| a.warmup.len()).sum();
        prop_assert!(warmups <= budget as usize);
        let stateful = |x: &TaskId| t.subtopologies[&x.subtopology].stateful;
        // The newcomer has no state: it gets no stateful active task while it could warm up.
        let new_stateful = second.members["new"].active.iter().filter(stateful).count();
        let prev_owners = owners(&first);
        if warmups < budget as usize {
            prop_assert_eq!(new_stateful, 0);
        }
        for task in second.members["new"].warmup.iter() {
            let owner = owners(&second)[&task].clone();
            prop_assert!(prev_owners.get(&task) == Some(&owner) || first.members[&owner].standby.contains_task(&task));
        }
        // The newcomer catches up: its warm-ups become actives on the next assignment.
        let mut g3 = with_owned(&g2, &second);
        let warm: Vec<TaskId> = second.members["new"].warmup.iter().collect();
        for task in &warm {
            g3.members.get_mut("new").unwrap().task_offsets.insert(task.clone(), 990);
        }
        let third = assign(&g3, &t);
        check_invariants(&g3, &t, &third)?;
        for task in &warm {
            prop_assert!(third.members["new"].active.contains_task(task), "warm-up {} not promoted", task);
        }
    }
}

#[test]
fn zero_members_empty_assignment() {
    let t = topology(&Shape {
        members: 0,
        max_per_proc: 1,
        salt: 0,
        subtopologies: vec![(4, true)],
        standbys: 1,
        racks: 0,
    });
    let out = assign(&GroupSpec::default(), &t);
    assert!(out.members.is_empty());
}

#[test]
fn more_standbys_than_processes_is_best_effort() {
    let mut g = GroupSpec {
        configs: AssignmentConfigs {
            num_standby_replicas: 5,
            ..Default::default()
        },
        ..Default::default()
    };
    for i in 0..3 {
        g.members.insert(
            format!("m{i}"),
            MemberSpec {
                process_id: format!("p{i}"),
                ..Default::default()
            },
        );
    }
    let mut t = TopologySpec::default();
    t.subtopologies.insert(
        "0".into(),
        SubtopologySpec {
            number_of_tasks: 6,
            stateful: true,
        },
    );
    let out = assign(&g, &t);
    for task in t.tasks() {
        let n = out
            .members
            .values()
            .filter(|a| a.standby.contains_task(&task))
            .count();
        assert_eq!(n, 2);
    }
}

/// Every stateful task has `min(standbys, processes - 1)` standbys.
fn check_standbys_that_fit(
    g: &GroupSpec,
    t: &TopologySpec,
    out: &GroupAssignment,
) -> Result<(), TestCaseError> {
    let fit = (g.configs.num_standby_replicas.max(0) as usize).min(n_procs(g) - 1);
    for task in t
        .tasks()
        .filter(|x| t.subtopologies[&x.subtopology].stateful)
    {
        let n = out
            .members
            .values()
            .filter(|a| a.standby.contains_task(&task))
            .count();
        prop_assert_eq!(n, fit, "standbys of {}", task);
    }
    Ok(())
}

proptest! {
    #![proptest_config(cfg(48))]

    /// Kafka's `sticky` from scratch: the invariants, every standby that fits, actives within
    /// one task per member, no warm-ups, and the same output when run again.
    #[test]
    fn kafka_from_scratch_is_valid(s in shape(200, 2000)) {
        let (g, t) = (group(&s), topology(&s));
        let out = assign_kafka(&g, &t);
        check_invariants(&g, &t, &out)?;
        check_standbys_that_fit(&g, &t, &out)?;
        prop_assert!(active_spread(&out) <= 1, "active spread {}", active_spread(&out));
        prop_assert!(out.members.values().all(|a| a.warmup.is_empty()));
        prop_assert_eq!(&assign_kafka(&g, &t), &out);
    }

    /// After a member leaves and another joins (on a new or an existing process), with the
    /// previous output as the current assignment: the invariants and every standby that fits.
    #[test]
    fn kafka_after_leave_and_join_is_valid(
        s in shape(200, 2000),
        pick in any::<prop::sample::Index>(),
        existing_proc in any::<bool>(),
    ) {
        let (g, t) = (group(&s), topology(&s));
        let first = assign_kafka(&g, &t);
        let mut g2 = with_owned(&g, &first);
        if s.members >= 2 {
            g2.members.remove(&member_id(pick.index(s.members)));
        }
        let mut joiner = MemberSpec { process_id: "p9999".into(), ..Default::default() };
        if existing_proc {
            joiner.process_id = g.members[&member_id(0)].process_id.clone();
        }
        g2.members.insert("new".into(), joiner);
        let second = assign_kafka(&g2, &t);
        check_invariants(&g2, &t, &second)?;
        check_standbys_that_fit(&g2, &t, &second)?;
    }

    /// Feeding Kafka's output back in as the current assignment moves no active task.
    #[test]
    fn kafka_output_is_a_fixpoint_for_actives(s in shape(200, 2000)) {
        let (g, t) = (group(&s), topology(&s));
        let first = assign_kafka(&g, &t);
        let second = assign_kafka(&with_owned(&g, &first), &t);
        prop_assert_eq!(owners(&first), owners(&second), "actives moved");
    }

    /// Random previous assignments (tasks outside the topology, duplicate claims, standbys and
    /// warm-ups anywhere, offsets) never break the invariants.
    #[test]
    fn kafka_arbitrary_previous_state(s in shape(100, 1000), claims in prop::collection::vec((0usize..100, 0usize..12, 0i32..300, 0u8..4), 0..600)) {
        let t = topology(&s);
        let mut g = group(&s);
        add_claims(&mut g, claims, false);
        let out = assign_kafka(&g, &t);
        check_invariants(&g, &t, &out)?;
        check_standbys_that_fit(&g, &t, &out)?;
    }
}
