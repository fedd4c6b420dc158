//! Specific outcomes of Kafka 4.4's sticky assignor. Expected assignments were printed by the
//! Kafka 4.4.0 jar (`StickyTaskAssignor` through `GroupSpecImpl`, members put into a `HashMap`
//! in the order listed); the recorded random groups in `tests/assignor_apache.rs` cover the rest.

use super::*;

fn topo(n: i32, stateful: bool) -> TopologySpec {
    let mut t = TopologySpec::default();
    t.subtopologies.insert(
        "0".into(),
        SubtopologySpec {
            number_of_tasks: n,
            stateful,
        },
    );
    t
}

fn parts(set: &TaskSet) -> Vec<i32> {
    set.iter().map(|t| t.partition).collect()
}

/// Members `m1..` on processes `p1..` join one after the other, each owning its previous target.
fn join_in_turn(members: usize, t: &TopologySpec, standbys: i32) -> GroupAssignment {
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = standbys;
    let mut out = GroupAssignment::default();
    for i in 1..=members {
        g.members.insert(
            format!("m{i}"),
            MemberSpec {
                process_id: format!("p{i}"),
                ..Default::default()
            },
        );
        for (id, m) in g.members.iter_mut() {
            if let Some(a) = out.members.get(id) {
                m.active_tasks = a.active.clone();
                m.standby_tasks = a.standby.clone();
            }
        }
        out = KafkaStickyAssignor.assign(&g, t).unwrap();
    }
    out
}

#[test]
fn three_members_joining_in_turn_get_kafkas_ties() {
    let out = join_in_turn(3, &topo(6, false), 0);
    // Kafka's leftover tasks 2 and 5 go to the least-loaded process from its queue (m3).
    assert_eq!(parts(&out.members["m1"].active), [0, 1]);
    assert_eq!(parts(&out.members["m2"].active), [3, 4]);
    assert_eq!(parts(&out.members["m3"].active), [2, 5]);
}

#[test]
fn standbys_follow_kafkas_order() {
    let out = join_in_turn(3, &topo(4, true), 1);
    let got: Vec<(Vec<i32>, Vec<i32>)> = ["m1", "m2", "m3"]
        .iter()
        .map(|m| {
            let a = &out.members[*m];
            (parts(&a.active), parts(&a.standby))
        })
        .collect();
    assert_eq!(
        got,
        [
            (vec![0, 1], vec![2]),
            (vec![2], vec![1, 3]),
            (vec![3], vec![0])
        ]
    );
}

#[test]
fn no_members_is_kafkas_error_unless_there_is_nothing_to_assign() {
    let g = GroupSpec::default();
    let err = KafkaStickyAssignor.assign(&g, &topo(2, false)).unwrap_err();
    assert_eq!(err.0, "No process available to assign active task 0_0.");
    let out = KafkaStickyAssignor
        .assign(&g, &TopologySpec::default())
        .unwrap();
    assert!(out.members.is_empty());
}

#[test]
fn warmups_and_rack_tags_are_ignored() {
    let mut g = GroupSpec::default();
    g.configs.num_standby_replicas = 1;
    g.configs.num_warmup_replicas = 2;
    g.configs.rack_aware_assignment_tags = vec!["rack".into()];
    for (m, p, rack) in [("a", "p1", "r1"), ("b", "p2", "r1"), ("c", "p3", "r2")] {
        let mut spec = MemberSpec {
            process_id: p.into(),
            ..Default::default()
        };
        spec.client_tags.insert("rack".into(), rack.into());
        spec.warmup_tasks.insert("0", 0);
        g.members.insert(m.into(), spec);
    }
    let with_tags = KafkaStickyAssignor.assign(&g, &topo(3, true)).unwrap();
    for m in g.members.values_mut() {
        m.client_tags.clear();
        m.warmup_tasks = TaskSet::new();
    }
    g.configs.rack_aware_assignment_tags.clear();
    let without = KafkaStickyAssignor.assign(&g, &topo(3, true)).unwrap();
    assert_eq!(with_tags, without);
    assert!(with_tags.members.values().all(|a| a.warmup.is_empty()));
}

/// Two members on their own processes, both claiming 0_0 active; topology `0` of 2 tasks.
fn two_claimants(ids: [&str; 2]) -> (GroupSpec, TopologySpec) {
    let mut g = GroupSpec::default();
    for (m, p) in ids.into_iter().zip(["p1", "p2"]) {
        let mut spec = MemberSpec {
            process_id: p.into(),
            ..Default::default()
        };
        spec.active_tasks.insert("0", 0);
        g.members.insert(m.into(), spec);
    }
    (g, topo(2, false))
}

fn owner_of_0_0(out: &GroupAssignment) -> &str {
    out.members
        .iter()
        .find(|(_, a)| a.active.contains("0", 0))
        .map(|(id, _)| id.as_str())
        .unwrap()
}

#[test]
fn last_active_claim_in_member_order_wins() {
    // In Kafka's member map "a" (bucket 1) iterates before "b" (bucket 2) whatever the insertion
    // order, so "b" is the previous owner and keeps 0_0.
    let (g, t) = two_claimants(["a", "b"]);
    let out = KafkaStickyAssignor.assign(&g, &t).unwrap();
    assert_eq!(owner_of_0_0(&out), "b");
    let again = assign_with_member_order(&g, &t, &["b", "a"]).unwrap();
    assert_eq!(out, again);
}

#[test]
fn insertion_order_decides_within_a_hash_bucket() {
    // "Aa" and "BB" have the same String.hashCode, so a HashMap iterates them in insertion
    // order; the later one in that order keeps 0_0.
    let (g, t) = two_claimants(["Aa", "BB"]);
    let owner = |order: &[&str]| {
        owner_of_0_0(&assign_with_member_order(&g, &t, order).unwrap()).to_string()
    };
    assert_eq!(owner(&["Aa", "BB"]), "BB");
    assert_eq!(owner(&["BB", "Aa"]), "Aa");
}
