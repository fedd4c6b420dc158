//! Seeded random request sequences for one streams group each: well-behaved Kafka Streams members
//! (join with a topology, heartbeat reporting the tasks the responses gave them, leave, static
//! leave and return, several members per process, user endpoints) interleaved with the deviations
//! a client can send (wrong epochs, unknown members, missing or forbidden fields, bad topologies,
//! missing topics, unknown groups).
//!
//! The generator is a client model: it decides each request from the answers to the previous ones
//! (`observe`), so it runs against Apache Kafka while recording. The checker never runs it; it
//! replays the recorded requests verbatim, so both servers see byte-identical traffic.

use groupcoord::protocol::{
    CopartitionGroup, Endpoint, KeyValue, StreamsGroupDescribeRequest,
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, Subtopology, TaskIds, TaskOffset,
    TopicInfo, Topology,
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::model::{Request, Response};

/// Topics both sides know before the first sequence (name, partitions). Internal topics of every
/// topology are among them with the partition count Kafka derives, so no sequence makes either
/// server create a topic: creation is asynchronous in Kafka and would make answers timing-dependent.
pub const TOPICS: &[(&str, i32)] = &[
    ("diff-in-a", 4),
    ("diff-in-b", 3),
    ("diff-in-c", 2),
    ("diff-rep-a", 4),
    ("diff-store-a-changelog", 4),
    ("diff-store-b-changelog", 4),
    ("diff-store-c-changelog", 3),
];

/// A source topic that never exists.
const ABSENT_TOPIC: &str = "diff-absent";

/// Requests per sequence (before the closing describe).
const STEPS: std::ops::RangeInclusive<u32> = 26..=40;

/// Kafka Streams' default rebalance timeout (`max.poll.interval.ms`): never reached in a run.
const REBALANCE_TIMEOUT_MS: i32 = 300_000;

struct Rng(Pcg64Mcg);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        (self.0.next_u64() % n as u64) as u32
    }
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u32) as usize]
    }
}

#[derive(Clone)]
struct Member {
    id: String,
    instance_id: Option<String>,
    process_id: String,
    endpoint: Option<Endpoint>,
    rack_id: Option<String>,
    client_tags: Vec<KeyValue>,
    version: i16,
    /// 0 = not in the group (yet, or again after a fence / leave).
    epoch: i32,
    /// Tasks the member runs: what the last response that carried an assignment gave it.
    owned: [Vec<TaskIds>; 3],
    /// Owned tasks changed since the last heartbeat that reported them.
    owned_dirty: bool,
    endpoint_epoch: i32,
    /// Left for good (dynamic leave) or statically (may come back with a new member id).
    gone: bool,
}

pub struct Generator {
    rng: Rng,
    seq: u32,
    pub group_id: String,
    topology: Topology,
    members: Vec<Member>,
    next_member: u32,
    steps_left: u32,
    closed: bool,
    /// The member and the kind of the last heartbeat, for `observe`.
    last: Option<(usize, Kind)>,
    /// A fixed plan instead of random steps (`Generator::refused_static_join`).
    script: std::collections::VecDeque<Scripted>,
    scripted: bool,
}

/// A step of a fixed plan; members are indices into the generator's members.
#[derive(Clone, Copy)]
enum Scripted {
    Join(usize),
    Heartbeat(usize),
    StaticLeave(usize),
    Describe,
}

/// The group-level configuration the refused-static-join sequence runs with (both sides): with
/// warm-ups enabled Kafka 4.4 caches the refined assignment, which the refused join re-labels.
pub const REFUSED_STATIC_JOIN_GROUP_CONFIG: (&str, &str) = ("streams.num.warmup.replicas", "2");

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A request a real client sends; the member follows the answer.
    Regular,
    /// A deliberate deviation; the member's state stays as it was.
    Deviation,
    Leave,
}

fn tasks(sub: &str, partitions: &[i32]) -> TaskIds {
    TaskIds {
        subtopology_id: sub.into(),
        partitions: partitions.to_vec(),
        ..Default::default()
    }
}

fn topic_info(name: &str) -> TopicInfo {
    TopicInfo {
        name: name.into(),
        ..Default::default()
    }
}

/// The topologies of well-behaved groups.
fn good_topology(rng: &mut Rng) -> Topology {
    let subtopologies = match rng.below(3) {
        // One stateful subtopology.
        0 => vec![Subtopology {
            subtopology_id: "0".into(),
            source_topics: vec!["diff-in-a".into()],
            state_changelog_topics: vec![topic_info("diff-store-a-changelog")],
            ..Default::default()
        }],
        // A repartition between a stateless and a stateful subtopology.
        1 => vec![
            Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["diff-in-a".into()],
                repartition_sink_topics: vec!["diff-rep-a".into()],
                ..Default::default()
            },
            Subtopology {
                subtopology_id: "1".into(),
                repartition_source_topics: vec![topic_info("diff-rep-a")],
                state_changelog_topics: vec![topic_info("diff-store-b-changelog")],
                ..Default::default()
            },
        ],
        // Two independent subtopologies, one stateless.
        _ => vec![
            Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["diff-in-b".into()],
                state_changelog_topics: vec![topic_info("diff-store-c-changelog")],
                ..Default::default()
            },
            Subtopology {
                subtopology_id: "1".into(),
                source_topics: vec!["diff-in-c".into()],
                ..Default::default()
            },
        ],
    };
    Topology {
        epoch: 0,
        subtopologies,
        ..Default::default()
    }
}

/// A topology a client should not send, or one the group cannot run yet.
fn bad_topology(rng: &mut Rng, good: &Topology) -> (Topology, &'static str) {
    let mut t = good.clone();
    let first = &mut t.subtopologies[0];
    let what = match rng.below(7) {
        0 => {
            first.source_topics = vec![ABSENT_TOPIC.into()];
            "missing source topic"
        }
        1 => {
            first.source_topics.clear();
            first.source_topic_regex = vec!["diff-in-.*".into()];
            "source regex"
        }
        2 => {
            first.source_topics.push("bad topic!".into());
            "invalid topic name"
        }
        3 => {
            first.source_topics.push("__consumer_offsets".into());
            "internal topic"
        }
        4 => {
            first.state_changelog_topics = vec![TopicInfo {
                name: "diff-store-a-changelog".into(),
                partitions: 4,
                ..Default::default()
            }];
            "changelog with a partition count"
        }
        5 => {
            first.source_topics = vec!["diff-in-a".into(), "diff-in-c".into()];
            first.copartition_groups = vec![CopartitionGroup {
                source_topics: vec![0, 1],
                ..Default::default()
            }];
            "copartitioned topics of different sizes"
        }
        _ => {
            first.copartition_groups = vec![CopartitionGroup {
                source_topics: vec![7],
                ..Default::default()
            }];
            "copartition index out of range"
        }
    };
    (t, what)
}

fn all_tasks(t: &Topology) -> Vec<TaskIds> {
    t.subtopologies
        .iter()
        .map(|s| {
            let n = s
                .source_topics
                .iter()
                .chain(s.repartition_source_topics.iter().map(|r| &r.name))
                .filter_map(|name| TOPICS.iter().find(|(t, _)| t == name).map(|(_, n)| *n))
                .max()
                .unwrap_or(1);
            tasks(&s.subtopology_id, &(0..n).collect::<Vec<_>>())
        })
        .collect()
}

impl Generator {
    pub fn new(seq: u32) -> Generator {
        let mut rng = Rng(Pcg64Mcg::seed_from_u64(0x5eed_d1ff ^ seq as u64));
        let mut topology = good_topology(&mut rng);
        // Some groups run a topology whose first source topic does not exist.
        if seq % 8 == 5 {
            topology.subtopologies[0].source_topics = vec![ABSENT_TOPIC.into()];
        }
        let steps_left = STEPS.start() + rng.below(STEPS.end() - STEPS.start() + 1);
        Generator {
            rng,
            seq,
            group_id: format!("diff-group-{seq}"),
            topology,
            members: Vec::new(),
            next_member: 0,
            steps_left,
            closed: false,
            last: None,
            script: Default::default(),
            scripted: false,
        }
    }

    /// docs/deviations.md D2: a static join refused because the instance id is in use, while the
    /// group reconciles, in a group with warm-ups enabled; then the owner heartbeats, leaves
    /// temporarily, and a new member id takes the instance over.
    pub fn refused_static_join(seq: u32) -> Generator {
        let mut g = Generator::new(seq);
        g.group_id = format!("diff-relabel-{seq}");
        g.topology = Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["diff-in-a".into()],
                state_changelog_topics: vec![topic_info("diff-store-a-changelog")],
                ..Default::default()
            }],
            ..Default::default()
        };
        let member = |k: u32, instance: &str, process: &str| Member {
            id: format!("member-{seq}-{k}"),
            instance_id: Some(format!("instance-{seq}-{instance}")),
            process_id: format!("process-{seq}-{process}"),
            endpoint: None,
            rack_id: None,
            client_tags: Vec::new(),
            version: 1,
            epoch: 0,
            owned: Default::default(),
            owned_dirty: false,
            endpoint_epoch: 0,
            gone: false,
        };
        // 0 owns instance a, 1 instance b; 2 claims a while 0 holds it; 3 takes a over after 0
        // left temporarily.
        g.members = vec![
            member(0, "a", "0"),
            member(1, "b", "1"),
            member(2, "a", "2"),
            member(3, "a", "0"),
        ];
        g.next_member = 4;
        use Scripted::*;
        g.script = [
            Join(0),
            Heartbeat(0),
            Join(1),
            Describe,
            Join(2),
            Describe,
            Heartbeat(0),
            Heartbeat(1),
            Heartbeat(0),
            Heartbeat(1),
            Describe,
            StaticLeave(0),
            Join(3),
            Heartbeat(3),
            Heartbeat(1),
            Heartbeat(3),
            Heartbeat(1),
            Describe,
        ]
        .into();
        g.scripted = true;
        g
    }

    fn next_scripted(&mut self, step: Scripted) -> (Request, String) {
        self.last = None;
        let heartbeat = |g: &mut Generator, i: usize, body: StreamsGroupHeartbeatRequest, kind| {
            g.last = Some((i, kind));
            Request::Heartbeat {
                version: g.members[i].version,
                body,
            }
        };
        match step {
            Scripted::Join(i) => {
                let body = self.join_request(&self.members[i]);
                let note = format!(
                    "join {} (static {})",
                    self.members[i].id,
                    self.members[i].instance_id.as_deref().unwrap_or("-")
                );
                (heartbeat(self, i, body, Kind::Regular), note)
            }
            Scripted::Heartbeat(i) => {
                let mut body = self.heartbeat_request(i);
                // Always report the owned tasks: the plan must not depend on the random draw.
                let m = &self.members[i];
                body.active_tasks = Some(m.owned[0].clone());
                body.standby_tasks = Some(m.owned[1].clone());
                body.warmup_tasks = Some(m.owned[2].clone());
                let note = format!("heartbeat {}", m.id);
                (heartbeat(self, i, body, Kind::Regular), note)
            }
            Scripted::StaticLeave(i) => {
                let m = &self.members[i];
                let body = StreamsGroupHeartbeatRequest {
                    group_id: self.group_id.clone(),
                    member_id: m.id.clone(),
                    member_epoch: -2,
                    instance_id: m.instance_id.clone(),
                    ..Default::default()
                };
                let note = format!("static leave {}", m.id);
                (heartbeat(self, i, body, Kind::Leave), note)
            }
            Scripted::Describe => (
                Request::Describe {
                    version: 1,
                    body: StreamsGroupDescribeRequest {
                        group_ids: vec![self.group_id.clone()],
                        ..Default::default()
                    },
                },
                "describe".into(),
            ),
        }
    }

    fn new_member(&mut self) -> Member {
        let k = self.next_member;
        self.next_member += 1;
        // Up to three processes; members of one process share its id and endpoint.
        let process = self.rng.below(3);
        // Groups whose source topic is missing run without endpoints but in one sequence: Kafka
        // 4.4 fails such joins (a documented deviation, see docs/deviations.md).
        let with_endpoint = !self.seq.is_multiple_of(3) && (self.seq % 8 != 5 || self.seq == 5);
        let statik = self.rng.chance(30);
        Member {
            id: format!("member-{}-{k}", self.seq),
            instance_id: statik.then(|| format!("instance-{}-{k}", self.seq)),
            process_id: format!("process-{}-{process}", self.seq),
            endpoint: with_endpoint.then(|| Endpoint {
                host: format!("host-{process}"),
                port: 8080 + process as u16,
                ..Default::default()
            }),
            rack_id: self.rng.chance(30).then(|| format!("rack-{}", process % 2)),
            client_tags: if self.rng.chance(30) {
                vec![KeyValue {
                    key: "zone".into(),
                    value: format!("z{}", process % 2),
                    ..Default::default()
                }]
            } else {
                Vec::new()
            },
            version: if self.rng.chance(50) { 1 } else { 0 },
            epoch: 0,
            owned: Default::default(),
            owned_dirty: false,
            endpoint_epoch: 0,
            gone: false,
        }
    }

    fn join_request(&self, m: &Member) -> StreamsGroupHeartbeatRequest {
        StreamsGroupHeartbeatRequest {
            group_id: self.group_id.clone(),
            member_id: m.id.clone(),
            member_epoch: 0,
            endpoint_information_epoch: m.endpoint_epoch,
            instance_id: m.instance_id.clone(),
            rack_id: m.rack_id.clone(),
            rebalance_timeout_ms: REBALANCE_TIMEOUT_MS,
            topology: Some(self.topology.clone()),
            active_tasks: Some(Vec::new()),
            standby_tasks: Some(Vec::new()),
            warmup_tasks: Some(Vec::new()),
            process_id: Some(m.process_id.clone()),
            user_endpoint: m.endpoint.clone(),
            client_tags: Some(m.client_tags.clone()),
            task_offsets: Some(Vec::new()),
            task_end_offsets: Some(Vec::new()),
            ..Default::default()
        }
    }

    /// A steady-state heartbeat as Kafka Streams sends it: unchanged fields null, owned tasks
    /// when they changed (or, like some clients, every time).
    fn heartbeat_request(&mut self, i: usize) -> StreamsGroupHeartbeatRequest {
        let always_full = self.rng.chance(25);
        let m = &self.members[i];
        let report = m.owned_dirty || always_full;
        StreamsGroupHeartbeatRequest {
            group_id: self.group_id.clone(),
            member_id: m.id.clone(),
            member_epoch: m.epoch,
            endpoint_information_epoch: m.endpoint_epoch,
            instance_id: m.instance_id.clone().filter(|_| always_full),
            rack_id: m.rack_id.clone().filter(|_| always_full),
            active_tasks: report.then(|| m.owned[0].clone()),
            standby_tasks: report.then(|| m.owned[1].clone()),
            warmup_tasks: report.then(|| m.owned[2].clone()),
            ..Default::default()
        }
    }

    fn live(&self) -> Vec<usize> {
        (0..self.members.len())
            .filter(|&i| !self.members[i].gone && self.members[i].epoch > 0)
            .collect()
    }

    fn describe(&mut self) -> Request {
        let mut group_ids = vec![self.group_id.clone()];
        if self.rng.chance(20) {
            group_ids.push(format!("diff-unknown-{}", self.seq));
        }
        if self.rng.chance(8) {
            group_ids.push(String::new());
        }
        let version = if self.rng.chance(50) { 1 } else { 0 };
        Request::Describe {
            version,
            body: StreamsGroupDescribeRequest {
                group_ids,
                include_authorized_operations: self.rng.chance(20),
                // A v1 field.
                include_topology_description: version >= 1 && self.rng.chance(30),
                ..Default::default()
            },
        }
    }

    /// The next request, with a note of what it is meant to be; None when the sequence is over.
    pub fn next(&mut self) -> Option<(Request, String)> {
        if let Some(step) = self.script.pop_front() {
            return Some(self.next_scripted(step));
        }
        if self.closed || self.scripted {
            return None;
        }
        if self.steps_left == 0 {
            self.closed = true;
            self.last = None;
            let mut d = self.describe();
            if let Request::Describe { body, .. } = &mut d {
                body.group_ids.truncate(1);
            }
            return Some((d, "closing describe".into()));
        }
        self.steps_left -= 1;
        self.last = None;
        let live = self.live();
        let roll = self.rng.below(100);
        if live.is_empty() || (roll < 14 && self.members.len() < 8) {
            return Some(self.join());
        }
        if roll < 22 {
            return Some((self.describe(), "describe".into()));
        }
        if roll < 30 {
            return Some(self.leave(&live));
        }
        if roll < 55 {
            return Some(self.deviation(&live));
        }
        let i = *self.rng.pick(&live);
        let req = self.heartbeat_request(i);
        self.last = Some((i, Kind::Regular));
        let v = self.members[i].version;
        Some((
            Request::Heartbeat {
                version: v,
                body: req,
            },
            format!("heartbeat {}", self.members[i].id),
        ))
    }

    fn join(&mut self) -> (Request, String) {
        // A static member that left may come back under its instance id with a new member id.
        let returning = (0..self.members.len()).find(|&i| {
            let m = &self.members[i];
            m.gone && m.instance_id.is_some() && m.epoch == -2
        });
        let i = match returning {
            Some(i) if self.rng.chance(70) => {
                let k = self.next_member;
                self.next_member += 1;
                let m = &mut self.members[i];
                m.id = format!("member-{}-{k}", self.seq);
                m.gone = false;
                m.epoch = 0;
                m.owned = Default::default();
                i
            }
            _ => {
                // A fenced or unknown member rejoins with its id before new members come.
                match (0..self.members.len())
                    .find(|&i| !self.members[i].gone && self.members[i].epoch == 0)
                {
                    Some(i) => i,
                    None => {
                        let m = self.new_member();
                        self.members.push(m);
                        self.members.len() - 1
                    }
                }
            }
        };
        let req = self.join_request(&self.members[i]);
        self.last = Some((i, Kind::Regular));
        let m = &self.members[i];
        (
            Request::Heartbeat {
                version: m.version,
                body: req,
            },
            format!(
                "join {}{}",
                m.id,
                m.instance_id
                    .as_deref()
                    .map(|s| format!(" (static {s})"))
                    .unwrap_or_default()
            ),
        )
    }

    fn leave(&mut self, live: &[usize]) -> (Request, String) {
        let i = *self.rng.pick(live);
        let statik = self.members[i].instance_id.is_some() && self.rng.chance(60);
        let epoch = if statik { -2 } else { -1 };
        let m = &self.members[i];
        let req = StreamsGroupHeartbeatRequest {
            group_id: self.group_id.clone(),
            member_id: m.id.clone(),
            member_epoch: epoch,
            instance_id: m.instance_id.clone(),
            ..Default::default()
        };
        self.last = Some((i, Kind::Leave));
        (
            Request::Heartbeat {
                version: m.version,
                body: req,
            },
            format!(
                "{} leave {}",
                if statik { "static" } else { "dynamic" },
                m.id
            ),
        )
    }

    fn deviation(&mut self, live: &[usize]) -> (Request, String) {
        let i = *self.rng.pick(live);
        let mut req = self.heartbeat_request(i);
        let m = self.members[i].clone();
        let mut join = self.join_request(&m);
        let what = self.rng.below(30);
        self.last = Some((i, Kind::Deviation));
        let note: String = match what {
            0 => {
                req.member_epoch = m.epoch - 1;
                "previous epoch".into()
            }
            1 => {
                req.member_epoch = (m.epoch - 2).max(1);
                "stale epoch".into()
            }
            2 => {
                req.member_epoch = m.epoch + 1 + self.rng.below(3) as i32;
                "future epoch".into()
            }
            3 => {
                req.member_id = format!("stranger-{}", self.rng.below(1000));
                "unknown member id".into()
            }
            4 => {
                join.rebalance_timeout_ms = -1;
                req = join;
                "join without rebalance timeout".into()
            }
            5 => {
                join.topology = None;
                req = join;
                "join without topology".into()
            }
            6 => {
                join.active_tasks = Some(vec![tasks("0", &[0])]);
                req = join;
                "join owning tasks".into()
            }
            7 => {
                req.active_tasks = Some(m.owned[0].clone());
                req.standby_tasks = None;
                req.warmup_tasks = None;
                "one task list of three".into()
            }
            8 => {
                req.topology = Some(self.topology.clone());
                "topology outside a join".into()
            }
            9 => {
                req.member_id = "   ".into();
                "blank member id".into()
            }
            10 => {
                req.group_id = String::new();
                "empty group id".into()
            }
            11 => {
                req.instance_id = Some(" ".into());
                "blank instance id".into()
            }
            12 => {
                req.rack_id = Some(String::new());
                "empty rack id".into()
            }
            13 => {
                req.member_epoch = -3 - self.rng.below(5) as i32;
                "epoch below -2".into()
            }
            14 => {
                req.member_epoch = -2;
                req.instance_id = None;
                "static leave without instance id".into()
            }
            15 => {
                req.member_epoch = -1;
                req.member_id = format!("stranger-{}", self.rng.below(1000));
                "leave of an unknown member".into()
            }
            16 => {
                req.active_tasks = Some(vec![tasks("99", &[0])]);
                req.standby_tasks = Some(Vec::new());
                req.warmup_tasks = Some(Vec::new());
                "owns a task of an unknown subtopology".into()
            }
            17 => {
                // Another member claims an instance id in use.
                let taken = self
                    .members
                    .iter()
                    .find(|o| !o.gone && o.epoch > 0 && o.instance_id.is_some())
                    .and_then(|o| o.instance_id.clone());
                let k = self.next_member;
                self.next_member += 1;
                join.member_id = format!("member-{}-{k}", self.seq);
                join.instance_id =
                    Some(taken.unwrap_or_else(|| format!("instance-{}-x", self.seq)));
                req = join;
                "static join with an instance id in use".into()
            }
            18 => {
                req.task_offsets = Some(vec![TaskOffset {
                    subtopology_id: "0".into(),
                    partition: 0,
                    offset: 10,
                    ..Default::default()
                }]);
                req.task_end_offsets = Some(vec![TaskOffset {
                    subtopology_id: "0".into(),
                    partition: 0,
                    offset: 20,
                    ..Default::default()
                }]);
                "task offsets".into()
            }
            19 => {
                req.shutdown_application = true;
                "shutdown application".into()
            }
            20 | 21 => {
                let (t, what) = bad_topology(&mut self.rng, &self.topology);
                join.topology = Some(t);
                if self.rng.chance(50) {
                    // As a brand-new member: the bad topology meets an existing group.
                    let k = self.next_member;
                    self.next_member += 1;
                    join.member_id = format!("member-{}-{k}", self.seq);
                    join.instance_id = None;
                }
                req = join;
                format!("join with a bad topology ({what})")
            }
            22 => {
                let mut t = self.topology.clone();
                t.epoch += 1;
                join.topology = Some(t);
                req = join;
                "rejoin with the next topology epoch".into()
            }
            // Member metadata a running client may change (each a rebalance in Kafka).
            24 => {
                req.rebalance_timeout_ms = 2 * REBALANCE_TIMEOUT_MS;
                "new rebalance timeout".into()
            }
            25 => {
                req.rack_id = Some(format!("rack-moved-{}", self.rng.below(3)));
                "new rack".into()
            }
            26 => {
                req.client_tags = Some(vec![KeyValue {
                    key: "zone".into(),
                    value: format!("moved-{}", self.rng.below(3)),
                    ..Default::default()
                }]);
                "new client tags".into()
            }
            27 => {
                req.user_endpoint = Some(Endpoint {
                    host: format!("moved-{}", self.rng.below(3)),
                    port: 9090,
                    ..Default::default()
                });
                "new user endpoint".into()
            }
            28 => {
                req.group_id = format!("diff-nogroup-{}", self.seq);
                "heartbeat to an unknown group".into()
            }
            29 => {
                req.group_id = format!("diff-nogroup-{}", self.seq);
                req.member_epoch = -1;
                "leave of an unknown group".into()
            }
            _ => {
                // Tasks the member was never given.
                let all = all_tasks(&self.topology);
                req.active_tasks = Some(all);
                req.standby_tasks = Some(Vec::new());
                req.warmup_tasks = Some(Vec::new());
                "claims every task".into()
            }
        };
        (
            Request::Heartbeat {
                version: m.version,
                body: req,
            },
            format!("{note} ({})", m.id),
        )
    }

    /// Follow the answer to the last request as a client would.
    pub fn observe(&mut self, response: &Response) {
        let Some((i, kind)) = self.last.take() else {
            return;
        };
        let Response::Heartbeat(r) = response else {
            return;
        };
        let m = &mut self.members[i];
        match kind {
            Kind::Leave => {
                if r.error_code == 0 {
                    m.gone = true;
                    m.epoch = r.member_epoch;
                    m.owned = Default::default();
                }
            }
            Kind::Regular => follow(m, r),
            // An accepted deviation of the member's own request: follow the answer like any.
            Kind::Deviation if r.error_code == 0 && r.member_id == m.id => follow(m, r),
            Kind::Deviation => {
                // A fenced member rejoins (Kafka Streams does so after these errors).
                if matches!(r.error_code, 25 | 110) {
                    m.epoch = 0;
                    m.owned = Default::default();
                    m.owned_dirty = false;
                }
            }
        }
    }
}

fn follow(m: &mut Member, r: &StreamsGroupHeartbeatResponse) {
    match r.error_code {
        0 => {
            m.epoch = r.member_epoch;
            m.endpoint_epoch = r.endpoint_information_epoch;
            if let (Some(a), Some(s), Some(w)) =
                (&r.active_tasks, &r.standby_tasks, &r.warmup_tasks)
            {
                m.owned = [a.clone(), s.clone(), w.clone()];
                m.owned_dirty = true;
            } else {
                m.owned_dirty = false;
            }
        }
        // Fenced or unknown: drop the tasks and rejoin.
        25 | 110 => {
            m.epoch = 0;
            m.owned = Default::default();
            m.owned_dirty = false;
        }
        // A static member whose instance id is still held (it was fenced without leaving)
        // gives up: Kafka Streams would fail with this error.
        111 if m.epoch == 0 => m.gone = true,
        // Anything else (a refused join: group full, instance id in use, bad topology) leaves
        // the member where it was; a refused joiner tries again at a later join step.
        _ => {}
    }
}
