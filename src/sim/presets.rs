//! Named preset scenarios for the explorer, as data: a spec and the actions to apply at their
//! times. Members are named by thread alias `<process>-t<i>` (the current incarnation).

use crate::util::map::BTreeMap;

use crate::protocol::{Subtopology, TopicInfo, Topology};

use super::api::*;

fn process(id: &str, threads: u32, static_members: bool, rack: Option<&str>) -> ProcessSpec {
    ProcessSpec {
        process_id: id.to_string(),
        threads,
        rack: rack.map(str::to_string),
        client_tags: BTreeMap::new(),
        static_members,
        start_at_ms: 0,
    }
}

/// A stateful word-count style topology: `0` reads `source` and repartitions into `1`, which
/// keeps a store.
fn two_stage(source: &str) -> Topology {
    Topology {
        epoch: 0,
        subtopologies: vec![
            Subtopology {
                subtopology_id: "0".to_string(),
                source_topics: vec![source.to_string()],
                repartition_sink_topics: vec!["app-counts-repartition".to_string()],
                ..Default::default()
            },
            Subtopology {
                subtopology_id: "1".to_string(),
                repartition_source_topics: vec![TopicInfo {
                    name: "app-counts-repartition".to_string(),
                    ..Default::default()
                }],
                state_changelog_topics: vec![TopicInfo {
                    name: "app-counts-changelog".to_string(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

fn stateful(source: &str) -> Topology {
    Topology {
        epoch: 0,
        subtopologies: vec![Subtopology {
            subtopology_id: "0".to_string(),
            source_topics: vec![source.to_string()],
            state_changelog_topics: vec![TopicInfo {
                name: "app-store-changelog".to_string(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[allow(clippy::too_many_arguments)]
fn spec(
    name: &str,
    description: &str,
    seed: u64,
    topics: &[(&str, i32)],
    topology: Topology,
    processes: Vec<ProcessSpec>,
    configs: &[(&str, &str)],
) -> ScenarioSpec {
    ScenarioSpec {
        name: name.to_string(),
        description: description.to_string(),
        seed,
        group_id: "app".to_string(),
        topics: topics.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
        topology,
        processes,
        configs: configs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        latency_ms: (2, 30),
        auto_create_internal_topics: true,
        group_type: GroupType::Streams,
        classic: ClassicSpec::default(),
        break_it: BreakIt::default(),
        dialect: Default::default(),
    }
}

fn at(at_ms: i64, action: Action) -> TimedAction {
    TimedAction { at_ms, action }
}

/// A classic consumer group over `topics` with the given assignors.
fn classic(
    name: &str,
    description: &str,
    seed: u64,
    topics: &[(&str, i32)],
    assignors: &[&str],
    processes: Vec<ProcessSpec>,
) -> ScenarioSpec {
    let mut s = spec(
        name,
        description,
        seed,
        topics,
        Topology::default(),
        processes,
        &[],
    );
    s.group_id = "consumers".to_string();
    s.group_type = GroupType::Classic;
    s.classic = ClassicSpec {
        assignors: assignors.iter().map(|a| a.to_string()).collect(),
        max_poll_interval_ms: 30_000,
        ..ClassicSpec::default()
    };
    s
}

fn join(at_ms: i64, id: &str, static_members: bool) -> TimedAction {
    at(
        at_ms,
        Action::AddProcess {
            process: process(id, 1, static_members, None),
        },
    )
}

/// The classic presets: the same joins and a crash under eager `range` and under
/// `cooperative-sticky`, and static members bouncing.
fn classic_presets() -> Vec<(ScenarioSpec, Vec<TimedAction>)> {
    let churn = || {
        vec![
            join(15_000, "c2", false),
            join(30_000, "c3", false),
            at(
                50_000,
                Action::CrashMember {
                    member: "c2-t0".to_string(),
                },
            ),
        ]
    };
    vec![
        (
            classic(
                "classic-eager-range",
                "Classic consumers with the eager `range` assignor: c2 and c3 join, then c2 \
                 crashes. Every rebalance revokes every partition of every consumer before the \
                 JoinGroup: the stop-the-world gap shows as partitions owned by nobody.",
                11,
                &[("orders", 6)],
                &["range"],
                vec![process("c1", 1, false, None)],
            ),
            churn(),
        ),
        (
            classic(
                "classic-cooperative-sticky",
                "The same joins and crash with `cooperative-sticky`: consumers keep what they \
                 own through the rebalance, give up only the partitions that move, and a second \
                 rebalance hands those out. Few partitions are ever owned by nobody.",
                12,
                &[("orders", 6)],
                &["cooperative-sticky"],
                vec![process("c1", 1, false, None)],
            ),
            churn(),
        ),
        (
            classic(
                "classic-static-membership",
                "Three static consumers (group.instance.id) with `range`. c1 restarts within the \
                 session timeout: no rebalance, it gets its partitions back under a new member \
                 id. c2 stalls beyond max.poll.interval.ms during a rebalance and is removed.",
                13,
                &[("orders", 6)],
                &["range"],
                vec![
                    process("c1", 1, true, None),
                    process("c2", 1, true, None),
                    process("c3", 1, true, None),
                ],
            ),
            vec![
                at(
                    20_000,
                    Action::StaticBounce {
                        member: "c1-t0".to_string(),
                        down_ms: 10_000,
                    },
                ),
                at(
                    45_000,
                    Action::StallMember {
                        member: "c2-t0".to_string(),
                        ms: 40_000,
                    },
                ),
                join(46_000, "c4", true),
            ],
        ),
    ]
}

/// The KIP-848 preset: the classic presets' joins and crash, then a slow consumer while a
/// fourth joins, with the coordinator's `uniform` assignor.
fn consumer_presets() -> Vec<(ScenarioSpec, Vec<TimedAction>)> {
    let mut s = classic(
        "consumer-uniform",
        "KIP-848 consumers (ConsumerGroupHeartbeat) with the coordinator's `uniform` assignor: \
         c2 and c3 join, c2 crashes, then c1's poll loop stalls while c4 joins. No JoinGroup \
         barrier: each member revokes what moves and acknowledges in its next heartbeat; only \
         the partitions c1 must give up wait for it.",
        14,
        &[("orders", 6)],
        &["range"],
        vec![process("c1", 1, false, None)],
    );
    s.group_type = GroupType::Consumer;
    s.configs.insert(
        "group.consumer.assignors".to_string(),
        "uniform,range".to_string(),
    );
    let actions = vec![
        join(15_000, "c2", false),
        join(30_000, "c3", false),
        at(
            50_000,
            Action::CrashMember {
                member: "c2-t0".to_string(),
            },
        ),
        at(
            110_000,
            Action::StallMember {
                member: "c1-t0".to_string(),
                ms: 15_000,
            },
        ),
        join(111_000, "c4", false),
    ];
    vec![(s, actions)]
}

/// The explorer's preset scenarios: streams presets, then the classic ones
/// (`classic-eager-range`, `classic-cooperative-sticky`, `classic-static-membership`), then the
/// KIP-848 one (`consumer-uniform`).
pub fn presets() -> Vec<(ScenarioSpec, Vec<TimedAction>)> {
    let mut all = streams_presets();
    all.extend(classic_presets());
    all.extend(consumer_presets());
    all
}

fn streams_presets() -> Vec<(ScenarioSpec, Vec<TimedAction>)> {
    vec![
        (
            spec(
                "scale-out",
                "One process with two threads runs a two-stage stateful topology; two more \
                 processes join one after the other and the sticky assignor spreads the tasks.",
                1,
                &[("words", 6)],
                two_stage("words"),
                vec![process("p1", 2, false, None)],
                &[],
            ),
            vec![
                at(
                    20_000,
                    Action::AddProcess {
                        process: process("p2", 2, false, None),
                    },
                ),
                at(
                    40_000,
                    Action::AddProcess {
                        process: process("p3", 2, false, None),
                    },
                ),
            ],
        ),
        (
            spec(
                "rolling-bounce",
                "Three static members with one standby replica restart one after the other \
                 (leave with epoch -2, rejoin under a new member id). No rebalance: each gets its \
                 tasks back.",
                2,
                &[("orders", 6)],
                stateful("orders"),
                vec![
                    process("p1", 1, true, Some("r1")),
                    process("p2", 1, true, Some("r2")),
                    process("p3", 1, true, Some("r1")),
                ],
                &[("group.streams.num.standby.replicas", "1")],
            ),
            vec![
                at(
                    20_000,
                    Action::StaticBounce {
                        member: "p1-t0".to_string(),
                        down_ms: 8_000,
                    },
                ),
                at(
                    40_000,
                    Action::StaticBounce {
                        member: "p2-t0".to_string(),
                        down_ms: 8_000,
                    },
                ),
                at(
                    60_000,
                    Action::StaticBounce {
                        member: "p3-t0".to_string(),
                        down_ms: 8_000,
                    },
                ),
            ],
        ),
        (
            spec(
                "crash-standby-failover",
                "Three processes, one standby replica. p1 crashes without leaving: its session \
                 times out after 45 s, and its active tasks move to the processes holding their \
                 standbys.",
                3,
                &[("payments", 4)],
                stateful("payments"),
                vec![
                    process("p1", 1, false, None),
                    process("p2", 1, false, None),
                    process("p3", 1, false, None),
                ],
                &[("group.streams.num.standby.replicas", "1")],
            ),
            vec![at(
                25_000,
                Action::CrashMember {
                    member: "p1-t0".to_string(),
                },
            )],
        ),
        (
            spec(
                "topology-upgrade",
                "A rolling upgrade to topology epoch 1: each member leaves and rejoins with the \
                 new epoch. Kafka 4.4 rejects topology updates of a group (INVALID_REQUEST \
                 \"Topology updates are not supported yet.\"), so upgraded members stop.",
                4,
                &[("events", 4)],
                stateful("events"),
                vec![process("p1", 1, false, None), process("p2", 1, false, None)],
                &[],
            ),
            vec![at(20_000, Action::BumpTopologyEpoch)],
        ),
        (
            spec(
                "missing-source-topic",
                "The topology reads `clicks`, which does not exist: the group stays NotReady \
                 with status MISSING_SOURCE_TOPICS until the topic is created.",
                5,
                &[],
                stateful("clicks"),
                vec![process("p1", 1, false, None), process("p2", 1, false, None)],
                &[],
            ),
            vec![at(
                20_000,
                Action::CreateTopic {
                    topic: "clicks".to_string(),
                    partitions: 4,
                },
            )],
        ),
        (
            spec(
                "shutdown-application",
                "A member requests an application shutdown: every member receives status \
                 SHUTDOWN_APPLICATION, leaves with epoch -1 and stops; the group becomes Empty.",
                6,
                &[("logs", 3)],
                stateful("logs"),
                vec![
                    process("p1", 1, false, None),
                    process("p2", 1, false, None),
                    process("p3", 1, false, None),
                ],
                &[],
            ),
            vec![at(
                25_000,
                Action::RequestShutdown {
                    member: "p2-t0".to_string(),
                },
            )],
        ),
    ]
}
