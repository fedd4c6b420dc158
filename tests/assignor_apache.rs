//! groupcoord's default `sticky` assignor against Apache Kafka 4.4.0's `StickyTaskAssignor`:
//! every group recorded from the real jar in `tests/interop/assignor/apache-4.4-outputs.jsonl`
//! (inputs and outputs; re-record with `tests/interop/assignor/record.sh`) must get exactly the
//! same assignment (or the same error). No Java needed.
#![cfg(not(target_arch = "wasm32"))] // native only: reads a recording from disk; proptest-free but std::fs

use std::collections::BTreeMap;

use groupcoord::assignor::{
    AssignmentConfigs, GroupAssignment, GroupSpec, MemberSpec, SubtopologySpec, TopologySpec,
    builtin,
};
use groupcoord::types::{TaskId, TaskSet};
use serde::Deserialize;

const RECORDING: &str = include_str!("interop/assignor/apache-4.4-outputs.jsonl");

#[derive(Deserialize)]
struct Case {
    seed: u64,
    standbys: i32,
    tags: Vec<String>,
    subtopologies: Vec<(String, i32, bool)>,
    /// In the order Kafka's member map was filled.
    members: Vec<Member>,
    /// Member id -> [active, standby], tasks as `sub_partition` separated by spaces.
    result: Option<BTreeMap<String, (String, String)>>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Member {
    id: String,
    process: String,
    #[serde(default)]
    tags: BTreeMap<String, String>,
    #[serde(default)]
    active: String,
    #[serde(default)]
    standby: String,
    #[serde(default)]
    warmup: String,
    #[serde(default)]
    offsets: String,
    #[serde(default)]
    end_offsets: String,
}

fn task(s: &str) -> TaskId {
    let (sub, p) = s.rsplit_once('_').expect("task is sub_partition");
    TaskId::new(sub, p.parse().expect("partition"))
}

fn tasks(s: &str) -> TaskSet {
    s.split_whitespace().map(task).collect()
}

fn offsets(s: &str) -> BTreeMap<TaskId, i64> {
    s.split_whitespace()
        .map(|e| {
            let (t, o) = e.split_once('=').expect("task=offset");
            (task(t), o.parse().expect("offset"))
        })
        .collect()
}

fn input(c: &Case) -> (GroupSpec, TopologySpec) {
    let mut topology = TopologySpec::default();
    for (id, n, stateful) in &c.subtopologies {
        topology.subtopologies.insert(
            id.clone(),
            SubtopologySpec {
                number_of_tasks: *n,
                stateful: *stateful,
            },
        );
    }
    let mut group = GroupSpec {
        configs: AssignmentConfigs {
            num_standby_replicas: c.standbys,
            rack_aware_assignment_tags: c.tags.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    for m in &c.members {
        group.members.insert(
            m.id.clone(),
            MemberSpec {
                process_id: m.process.clone(),
                client_tags: m.tags.clone(),
                active_tasks: tasks(&m.active),
                standby_tasks: tasks(&m.standby),
                warmup_tasks: tasks(&m.warmup),
                task_offsets: offsets(&m.offsets),
                task_end_offsets: offsets(&m.end_offsets),
                ..Default::default()
            },
        );
    }
    (group, topology)
}

fn render(out: &GroupAssignment) -> String {
    let join = |s: &TaskSet| {
        s.iter()
            .map(|t| format!("{}_{}", t.subtopology, t.partition))
            .collect::<Vec<_>>()
            .join(" ")
    };
    out.members
        .iter()
        .map(|(id, a)| {
            format!(
                "  {id}: active [{}] standby [{}]\n",
                join(&a.active),
                join(&a.standby)
            )
        })
        .collect()
}

fn expected(c: &Case) -> Result<String, String> {
    match (&c.result, &c.error) {
        (Some(r), None) => Ok(r
            .iter()
            .map(|(id, (a, s))| format!("  {id}: active [{a}] standby [{s}]\n"))
            .collect()),
        (None, Some(e)) => Err(e.clone()),
        _ => panic!("seed {}: a case has either a result or an error", c.seed),
    }
}

/// The default assignor's result for `c`, with Kafka's member-map order when the recording used
/// one other than member-id order.
fn actual(c: &Case) -> Result<String, String> {
    let (group, topology) = input(c);
    let order: Vec<&str> = c.members.iter().map(|m| m.id.as_str()).collect();
    let sorted = order.windows(2).all(|w| w[0] < w[1]);
    let sticky = builtin("sticky").expect("default assignor");
    let out = if sorted {
        sticky.assign(&group, &topology)
    } else {
        sticky.assign_in_member_order(&group, &topology, &order)
    };
    out.map(|a| render(&a)).map_err(|e| e.0)
}

#[test]
fn sticky_matches_apache_kafka_4_4_on_every_recorded_group() {
    let cases: Vec<Case> = RECORDING
        .lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)))
        .collect();
    assert!(cases.len() >= 1000, "only {} recorded groups", cases.len());
    let mut first_diff = None;
    let mut agree = 0;
    for c in &cases {
        let (want, got) = (expected(c), actual(c));
        if want == got {
            agree += 1;
        } else if first_diff.is_none() {
            first_diff = Some((c.seed, want, got));
        }
    }
    println!(
        "sticky vs Apache Kafka 4.4.0: {agree} of {} groups identical",
        cases.len()
    );
    if let Some((seed, want, got)) = first_diff {
        let show = |r: Result<String, String>| r.unwrap_or_else(|e| format!("  error: {e}\n"));
        panic!(
            "{} of {} groups differ; first: seed {seed}\nApache Kafka 4.4.0:\n{}groupcoord:\n{}\
             reproduce: ASSIGNOR_SEED={seed} cargo test --test assignor_apache -- one_seed --nocapture",
            cases.len() - agree,
            cases.len(),
            show(want),
            show(got),
        );
    }
}

/// One recorded group in full (`ASSIGNOR_SEED=N`), for debugging a difference.
#[test]
fn one_seed() {
    let Some(seed) = std::env::var("ASSIGNOR_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return;
    };
    let line = RECORDING
        .lines()
        .find(|l| serde_json::from_str::<Case>(l).is_ok_and(|c| c.seed == seed))
        .unwrap_or_else(|| panic!("seed {seed} is not recorded"));
    let c: Case = serde_json::from_str(line).unwrap();
    println!("input: {line}");
    let (want, got) = (expected(&c), actual(&c));
    println!("Apache Kafka 4.4.0: {want:#?}\ngroupcoord: {got:#?}");
    assert_eq!(want, got);
}
