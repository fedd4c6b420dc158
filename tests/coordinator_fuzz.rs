//! Random operation sequences against the coordinator: no input panics it, a rejected request
//! changes no persistent state, and replaying the records rebuilds an identical coordinator
//! (spec §6). Shrinks to a minimal failing sequence.
// Native only: plain `#[test]`s (and proptest) do not run under wasm-bindgen-test; the wasm
// API has its browser tests in tests/wasm_browser.rs.
#![cfg(not(target_arch = "wasm32"))]

use groupcoord::config::CoordinatorConfig;
use groupcoord::coordinator::{Coordinator, RequestContext};
use groupcoord::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest, Subtopology, TaskIds, TaskOffset,
    TopicInfo, Topology,
};
use groupcoord::records::{self, Record};
use groupcoord::topology::MetadataImage;
use groupcoord::types::Millis;
use proptest::prelude::*;

type TaskList = Vec<(u8, i32)>;

#[derive(Debug, Clone)]
enum Op {
    Heartbeat {
        member: u8,
        epoch: i32,
        instance: bool,
        topology: Option<u8>,
        tasks: Option<(TaskList, TaskList, TaskList)>,
        offsets: Vec<(u8, i32, i64)>,
        shutdown: bool,
        rebalance_timeout: i32,
    },
    Advance(i64),
    Topic(u8, i32),
    Delete,
    Restart,
}

fn topology(kind: u8) -> Topology {
    let sub = |id: &str, src: &str, changelog: bool| Subtopology {
        subtopology_id: id.into(),
        source_topics: vec![src.into()],
        state_changelog_topics: if changelog {
            vec![TopicInfo {
                name: format!("{id}-changelog"),
                ..Default::default()
            }]
        } else {
            vec![]
        },
        ..Default::default()
    };
    match kind % 4 {
        0 => Topology {
            epoch: 0,
            subtopologies: vec![sub("0", "a", true)],
            ..Default::default()
        },
        1 => Topology {
            epoch: 0,
            subtopologies: vec![sub("0", "a", false), sub("1", "b", true)],
            ..Default::default()
        },
        2 => Topology {
            epoch: 1,
            subtopologies: vec![sub("0", "a", true)],
            ..Default::default()
        },
        _ => Topology {
            epoch: 0,
            subtopologies: vec![sub("0", "missing", false)],
            ..Default::default()
        },
    }
}

fn task_ids(v: &[(u8, i32)]) -> Vec<TaskIds> {
    v.iter()
        .map(|(s, p)| TaskIds {
            subtopology_id: (s % 3).to_string(),
            partitions: vec![*p],
            ..Default::default()
        })
        .collect()
}

fn op() -> impl Strategy<Value = Op> {
    let tasks = prop::collection::vec((0u8..3, -1i32..5), 0..3);
    prop_oneof![
        6 => (
            0u8..4,
            prop_oneof![Just(0), Just(-1), Just(-2), Just(-3), 1i32..6],
            any::<bool>(),
            prop::option::of(0u8..4),
            prop::option::of((tasks.clone(), tasks.clone(), tasks)),
            prop::collection::vec((0u8..3, 0i32..4, 0i64..100), 0..3),
            prop::bool::weighted(0.05),
            prop_oneof![Just(-1), Just(1000), Just(60000)],
        )
            .prop_map(|(member, epoch, instance, topology, tasks, offsets, shutdown, rt)| {
                Op::Heartbeat { member, epoch, instance, topology, tasks, offsets, shutdown, rebalance_timeout: rt }
            }),
        2 => (0i64..70_000).prop_map(Op::Advance),
        1 => (0u8..3, 1i32..6).prop_map(|(t, n)| Op::Topic(t, n)),
        1 => Just(Op::Delete),
        1 => Just(Op::Restart),
    ]
}

fn replayed(config: &CoordinatorConfig, meta: &MetadataImage, log: &[Record]) -> Coordinator {
    let mut c = Coordinator::new(config.clone());
    c.set_metadata(meta.clone());
    for r in log {
        // Through the binary codec too: what the server's log would hold.
        let (k, v) = records::encode_record(r);
        let decoded = records::decode_record(&k, v.as_deref()).expect("own records decode");
        c.replay(&decoded).expect("own records replay");
    }
    c
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn random_operations_never_panic_and_replay_matches(ops in prop::collection::vec(op(), 1..40)) {
        let config = CoordinatorConfig {
            initial_rebalance_delay_ms: 0,
            num_standby_replicas: 1,
            ..CoordinatorConfig::default()
        };
        let mut meta = MetadataImage::default();
        meta.topics.insert("a".into(), 3);
        let mut c = Coordinator::new(config.clone());
        c.set_metadata(meta.clone());
        let mut log: Vec<Record> = Vec::new();
        let mut now = Millis(0);
        let ctx = RequestContext { client_id: "c".into(), client_host: "/127.0.0.1".into(), api_version: 1 };
        for op in ops {
            match op {
                Op::Heartbeat { member, epoch, instance, topology: t, tasks, offsets, shutdown, rebalance_timeout } => {
                    let (a, s, w) = match tasks {
                        Some((a, s, w)) => (Some(task_ids(&a)), Some(task_ids(&s)), Some(task_ids(&w))),
                        None => (None, None, None),
                    };
                    let req = StreamsGroupHeartbeatRequest {
                        group_id: "g".into(),
                        member_id: format!("m{member}"),
                        member_epoch: epoch,
                        instance_id: instance.then(|| format!("i{member}")),
                        rebalance_timeout_ms: rebalance_timeout,
                        topology: t.map(topology),
                        active_tasks: a,
                        standby_tasks: s,
                        warmup_tasks: w,
                        process_id: Some(format!("p{}", member % 2)),
                        task_offsets: Some(offsets.iter().map(|(s, p, o)| TaskOffset { subtopology_id: (s % 3).to_string(), partition: *p, offset: *o, ..Default::default() }).collect()),
                        shutdown_application: shutdown,
                        ..Default::default()
                    };
                    let before = c.state_hash();
                    let out = c.streams_group_heartbeat(now, &ctx, &req);
                    if out.response.error_code != 0 {
                        prop_assert!(out.records.is_empty(), "error response wrote records");
                        prop_assert_eq!(before, c.state_hash(), "error response changed state");
                    } else {
                        prop_assert!(out.response.status.is_some(), "Status must be a list on success");
                    }
                    for t in &out.topics_to_create {
                        meta.topics.insert(t.name.clone(), t.partitions);
                    }
                    c.set_metadata(meta.clone());
                    log.extend(out.records);
                }
                Op::Advance(ms) => {
                    now = now.plus(ms);
                    for o in c.fire_due_timers(now) {
                        log.extend(o.records);
                    }
                }
                Op::Topic(t, n) => {
                    meta.topics.insert(["a", "b", "missing"][t as usize].into(), n);
                    c.set_metadata(meta.clone());
                }
                Op::Delete => {
                    let out = c.delete_groups(now, &["g".into()]);
                    log.extend(out.records);
                }
                Op::Restart => {
                    let mut fresh = replayed(&config, &meta, &log);
                    let rearmed = fresh.on_loaded(now);
                    prop_assert_eq!(rearmed.len(), fresh.timer_keys().len(), "every armed timer is reported");
                    c = fresh;
                }
            }
            if let Some(g) = c.group("g") {
                for m in g.members.values() {
                    prop_assert!(m.member_epoch <= g.group_epoch, "member epoch above group epoch");
                }
                prop_assert!(g.assignment_epoch <= g.group_epoch, "assignment epoch above group epoch");
            }
        }
        let fresh = replayed(&config, &meta, &log);
        prop_assert_eq!(fresh.state_hash(), c.state_hash());
        let req = StreamsGroupDescribeRequest { group_ids: vec!["g".into()], ..Default::default() };
        let strip = |mut d: groupcoord::protocol::StreamsGroupDescribeResponse| {
            for g in &mut d.groups { g.topology = None; for m in &mut g.members { m.task_offsets.clear(); m.task_end_offsets.clear(); } }
            d
        };
        prop_assert_eq!(strip(fresh.streams_group_describe(&req, 1)), strip(c.streams_group_describe(&req, 1)));
    }
}
