//! The classic-group generator: seeded sequences of JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
//! OffsetCommit, OffsetFetch, DescribeGroups, ListGroups and DeleteGroups from several members
//! of two groups, with time advancing (see tests/differential/README.md, "Classic groups").
//!
//! A client model: each member reacts to the answers it got (a MEMBER_ID_REQUIRED join is
//! repeated with the id, a joined member syncs, the leader sends an assignment, a member told to
//! rebalance rejoins, a fenced or unknown member starts over), and a share of the steps are
//! deviations (wrong generations and protocols, unknown members, bad timeouts, ...).

use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;
use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

use super::wire::{Dice, Generate, Planned, gid, planned, s};

/// Topics the sequences commit offsets for (created on both sides before the first sequence).
pub const TOPICS: &[(&str, i32)] = &[("ctopic-a", 3), ("ctopic-b", 2)];

// The normal pace is `PACE_MS` (150 ms; Kafka answers within a few ms); waits are whole
// multiples of it, so steps go out on a 150 ms grid.
// Every timeout is 75 ms off the grid (an odd multiple of 75): a deadline started by a request
// falls halfway between two steps, far from both, whatever the jitter of either side.
const SESSION_LONG: i32 = 30_075;
const SESSION_SHORT: i32 = 2_025;
const REBALANCE_TIMEOUTS: [i32; 3] = [3_075, 5_025, 2_475];

/// `ConsumerProtocolSubscription` v0: the topics, no user data.
pub fn subscription(topics: &[&str]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&(topics.len() as i32).to_be_bytes());
    for t in topics {
        b.extend_from_slice(&(t.len() as i16).to_be_bytes());
        b.extend_from_slice(t.as_bytes());
    }
    b.extend_from_slice(&(-1i32).to_be_bytes());
    b
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not in the group (never joined, left, or told it is unknown): joins with `member_id`.
    Out,
    /// Must (re)join with its id.
    Rejoin,
    /// Joined generation `generation`: must sync.
    Sync,
    Stable,
    /// Gave up (fenced static member, or too many failures).
    Gone,
}

#[derive(Debug, Clone)]
struct Member {
    client_id: String,
    group: usize,
    instance: Option<String>,
    id: String,
    generation: i32,
    protocol: Option<String>,
    leader: bool,
    /// From the leader's join answer.
    members: Vec<String>,
    phase: Phase,
    pending: Option<usize>,
    session_ms: i32,
    rebalance_ms: i32,
    protocols: Vec<(String, Vec<u8>)>,
    join_version: i16,
}

#[derive(Debug, Clone, Copy)]
enum Api {
    Join(usize),
    Sync(usize),
    Heartbeat(usize),
    Leave(usize),
    Commit(usize),
    Other,
}

pub struct ClassicGenerator {
    rng: Pcg64Mcg,
    seq: u32,
    groups: Vec<String>,
    /// Per group: protocol type.
    types: Vec<String>,
    members: Vec<Member>,
    /// Per step: what it was for.
    apis: Vec<(Api, i16)>,
    remaining: u32,
    next_offset: i64,
}

impl ClassicGenerator {
    pub fn new(seq: u32) -> ClassicGenerator {
        let mut rng = Pcg64Mcg::new(0xc1a5_51c0_0000 + seq as u128 * 7919);
        let groups = vec![format!("cdiff-{seq}-a"), format!("cdiff-{seq}-b")];
        let types = vec![
            "consumer".to_string(),
            if seq.is_multiple_of(3) {
                "connect"
            } else {
                "consumer"
            }
            .to_string(),
        ];
        let count = 3 + (rng.next_u32() % 3) as usize; // 3-5 members
        let mut members = Vec::new();
        for i in 0..count {
            let group = if i < 3 || rng.next_u32().is_multiple_of(2) {
                0
            } else {
                1
            };
            let instance = (rng.next_u32().is_multiple_of(3)).then(|| format!("inst-{seq}-{i}"));
            let session_ms = if rng.next_u32().is_multiple_of(4) {
                SESSION_SHORT
            } else {
                SESSION_LONG
            };
            let rebalance_ms = REBALANCE_TIMEOUTS[(rng.next_u32() % 3) as usize];
            let protocols = protocols_for(&mut rng, &types[group]);
            members.push(Member {
                client_id: format!("c{seq}-{i}"),
                group,
                instance,
                id: String::new(),
                generation: -1,
                protocol: None,
                leader: false,
                members: Vec::new(),
                phase: Phase::Out,
                pending: None,
                session_ms,
                rebalance_ms,
                protocols,
                join_version: 0,
            });
        }
        let remaining = 28 + rng.next_u32() % 14;
        ClassicGenerator {
            rng,
            seq,
            groups,
            types,
            members,
            apis: Vec::new(),
            remaining,
            next_offset: 10,
        }
    }

    fn version(&mut self, lo: i16, hi: i16) -> i16 {
        lo + (self.rng.next_u32() % (hi - lo + 1) as u32) as i16
    }

    fn plan<M: kafka_protocol::protocol::Encodable>(
        &mut self,
        note: String,
        client_id: String,
        key: ApiKey,
        version: i16,
        m: &M,
        api: Api,
    ) -> Planned {
        self.apis.push((api, version));
        planned(note, client_id, key, version, m)
    }

    fn join(&mut self, i: usize, note: &str) -> Planned {
        let m = &self.members[i];
        let lo = if m.instance.is_some() { 5 } else { 2 };
        // Mostly v4+ (the MEMBER_ID_REQUIRED round trip); a few v2/v3 members join directly.
        let version = if self.members[i].join_version != 0 {
            self.members[i].join_version
        } else {
            let v = if self.rng.chance(15) {
                self.version(lo, 3.max(lo))
            } else {
                self.version(4.max(lo), 9)
            };
            self.members[i].join_version = v;
            v
        };
        let m = &self.members[i];
        let req = JoinGroupRequest::default()
            .with_group_id(gid(&self.groups[m.group]))
            .with_session_timeout_ms(m.session_ms)
            .with_rebalance_timeout_ms(m.rebalance_ms)
            .with_member_id(s(&m.id))
            .with_group_instance_id(if version >= 5 {
                m.instance.as_deref().map(s)
            } else {
                None
            })
            .with_protocol_type(s(&self.types[m.group]))
            .with_protocols(
                m.protocols
                    .iter()
                    .map(|(n, md)| {
                        JoinGroupRequestProtocol::default()
                            .with_name(s(n))
                            .with_metadata(md.clone().into())
                    })
                    .collect(),
            )
            .with_reason((version >= 8).then(|| s("differential")));
        let note = format!("{note} {} (join v{version})", m.client_id);
        let cid = m.client_id.clone();
        self.plan(note, cid, ApiKey::JoinGroup, version, &req, Api::Join(i))
    }

    fn sync(&mut self, i: usize, generation: i32, note: &str) -> Planned {
        let version = self.version(0, 5);
        let m = &self.members[i];
        let mut assignments = Vec::new();
        if m.leader {
            for (k, id) in m.members.iter().enumerate() {
                assignments.push(
                    SyncGroupRequestAssignment::default()
                        .with_member_id(s(id))
                        .with_assignment(vec![k as u8, 0xa5, generation as u8].into()),
                );
            }
        }
        let req = SyncGroupRequest::default()
            .with_group_id(gid(&self.groups[m.group]))
            .with_generation_id(generation)
            .with_member_id(s(&m.id))
            .with_group_instance_id(if version >= 3 {
                m.instance.as_deref().map(s)
            } else {
                None
            })
            .with_protocol_type((version >= 5).then(|| s(&self.types[m.group])))
            .with_protocol_name(if version >= 5 {
                m.protocol.as_deref().map(s)
            } else {
                None
            })
            .with_assignments(assignments);
        let note = format!("{note} {} (sync v{version})", m.client_id);
        let cid = m.client_id.clone();
        self.plan(note, cid, ApiKey::SyncGroup, version, &req, Api::Sync(i))
    }

    fn heartbeat(&mut self, i: usize, generation: i32, note: &str) -> Planned {
        let version = self.version(0, 4);
        let m = &self.members[i];
        let req = HeartbeatRequest::default()
            .with_group_id(gid(&self.groups[m.group]))
            .with_generation_id(generation)
            .with_member_id(s(&m.id))
            .with_group_instance_id(if version >= 3 {
                m.instance.as_deref().map(s)
            } else {
                None
            });
        let note = format!("{note} {} (heartbeat v{version})", m.client_id);
        let cid = m.client_id.clone();
        self.plan(
            note,
            cid,
            ApiKey::Heartbeat,
            version,
            &req,
            Api::Heartbeat(i),
        )
    }

    fn leave(&mut self, i: usize) -> Planned {
        let version = self.version(0, 5);
        let group = self.members[i].group;
        let mut req = LeaveGroupRequest::default().with_group_id(gid(&self.groups[group]));
        let mut note = format!("leave {} (v{version})", self.members[i].client_id);
        if version >= 3 {
            let mut batch = vec![i];
            // Batched: other members of the group, an unknown member, an instance id alone.
            for (k, other) in self.members.iter().enumerate() {
                if k != i && other.group == group && other.pending.is_none() && !other.id.is_empty()
                {
                    batch.push(k);
                }
            }
            let take = 1 + self.rng.pick(batch.len());
            batch.truncate(take);
            let mut identities: Vec<MemberIdentity> = batch
                .iter()
                .map(|&k| {
                    let m = &self.members[k];
                    MemberIdentity::default()
                        .with_member_id(s(&m.id))
                        .with_group_instance_id(m.instance.as_deref().map(s))
                        .with_reason((version >= 5).then(|| s("bye")))
                })
                .collect();
            if self.rng.chance(20) {
                identities.push(MemberIdentity::default().with_member_id(s("unknown-member")));
                note.push_str(" + unknown member");
            }
            if self.rng.chance(15)
                && let Some(inst) = self.members[i].instance.clone()
            {
                identities[0].member_id = s("");
                identities[0].group_instance_id = Some(s(&inst));
                note.push_str(" (by instance id alone)");
            }
            note.push_str(&format!(" batch of {}", identities.len()));
            req.members = identities;
            for &k in &batch[1..] {
                self.members[k].phase = Phase::Out;
                self.members[k].id = String::new();
            }
        } else {
            req.member_id = s(&self.members[i].id);
        }
        let cid = self.members[i].client_id.clone();
        self.members[i].phase = Phase::Out;
        self.members[i].id = String::new();
        self.plan(note, cid, ApiKey::LeaveGroup, version, &req, Api::Leave(i))
    }

    fn commit(&mut self, i: usize) -> Planned {
        let version = self.version(2, 9);
        let m = self.members[i].clone();
        let (generation, member, note) = match self.rng.pick(6) {
            0 => (-1, String::new(), "simple commit"),
            1 => (
                m.generation + 1,
                m.id.clone(),
                "commit with a future generation",
            ),
            2 => (
                m.generation,
                "unknown-member".to_string(),
                "commit by an unknown member",
            ),
            _ => (m.generation, m.id.clone(), "commit"),
        };
        let topic = if self.rng.chance(8) {
            "no-such-topic"
        } else {
            TOPICS[self.rng.pick(TOPICS.len())].0
        };
        self.next_offset += 1 + self.rng.pick(20) as i64;
        let partitions = (0..1 + self.rng.pick(2) as i32)
            .map(|p| {
                OffsetCommitRequestPartition::default()
                    .with_partition_index(p)
                    .with_committed_offset(self.next_offset)
                    .with_committed_metadata(Some(s("md")))
            })
            .collect();
        let req = OffsetCommitRequest::default()
            .with_group_id(gid(&self.groups[m.group]))
            .with_generation_id_or_member_epoch(generation)
            .with_member_id(s(&member))
            .with_group_instance_id(if version >= 7 {
                m.instance.as_deref().map(s)
            } else {
                None
            })
            .with_topics(vec![
                OffsetCommitRequestTopic::default()
                    .with_name(TopicName(s(topic)))
                    .with_partitions(partitions),
            ]);
        let note = format!("{note} {} {topic} (v{version})", m.client_id);
        self.plan(
            note,
            m.client_id,
            ApiKey::OffsetCommit,
            version,
            &req,
            Api::Commit(i),
        )
    }

    fn fetch(&mut self) -> Planned {
        let version = self.version(1, 9);
        let g = self.rng.pick(2);
        let group = self.groups[g].clone();
        let all = version >= 2 && self.rng.chance(40);
        let topics = || {
            TOPICS
                .iter()
                .map(|(t, n)| (t.to_string(), (0..*n).collect::<Vec<i32>>()))
                .collect::<Vec<_>>()
        };
        let mut req = OffsetFetchRequest::default();
        if version >= 8 {
            let mut groups = vec![
                OffsetFetchRequestGroup::default()
                    .with_group_id(gid(&group))
                    .with_topics((!all).then(|| {
                        topics()
                            .into_iter()
                            .map(|(t, p)| {
                                OffsetFetchRequestTopics::default()
                                    .with_name(TopicName(s(&t)))
                                    .with_partition_indexes(p)
                            })
                            .collect()
                    })),
            ];
            if self.rng.chance(30) {
                groups.push(OffsetFetchRequestGroup::default().with_group_id(gid("no-such-group")));
            }
            req.groups = groups;
        } else {
            req.group_id = gid(&group);
            req.topics = (!all).then(|| {
                topics()
                    .into_iter()
                    .map(|(t, p)| {
                        OffsetFetchRequestTopic::default()
                            .with_name(TopicName(s(&t)))
                            .with_partition_indexes(p)
                    })
                    .collect()
            });
        }
        let note = format!(
            "offset fetch {group}{} (v{version})",
            if all { " all" } else { "" }
        );
        self.plan(
            note,
            "admin".into(),
            ApiKey::OffsetFetch,
            version,
            &req,
            Api::Other,
        )
    }

    fn describe(&mut self) -> Planned {
        let version = self.version(0, 5);
        let mut groups: Vec<GroupId> = self.groups.iter().map(|g| gid(g)).collect();
        if self.rng.chance(30) {
            groups.push(gid("no-such-group"));
        }
        if self.rng.chance(10) {
            groups.push(gid(""));
        }
        let req = DescribeGroupsRequest::default()
            .with_groups(groups)
            .with_include_authorized_operations(version >= 3 && self.rng.chance(30));
        let note = format!("describe (v{version})");
        self.plan(
            note,
            "admin".into(),
            ApiKey::DescribeGroups,
            version,
            &req,
            Api::Other,
        )
    }

    fn list(&mut self) -> Planned {
        let version = self.version(0, 5);
        let mut req = ListGroupsRequest::default();
        let mut note = format!("list groups (v{version})");
        if version >= 4 && self.rng.chance(60) {
            let states = [
                "Empty",
                "Stable",
                "PreparingRebalance",
                "CompletingRebalance",
                "Dead",
            ];
            let a = states[self.rng.pick(states.len())];
            let b = states[self.rng.pick(states.len())];
            req.states_filter = vec![s(a), s(b)];
            note.push_str(&format!(" states {a},{b}"));
        }
        if version >= 5 && self.rng.chance(50) {
            let types = ["classic", "consumer", "streams", "Classic"];
            let t = types[self.rng.pick(types.len())];
            req.types_filter = vec![s(t)];
            note.push_str(&format!(" type {t}"));
        }
        self.plan(
            note,
            "admin".into(),
            ApiKey::ListGroups,
            version,
            &req,
            Api::Other,
        )
    }

    fn delete(&mut self) -> Planned {
        let version = self.version(0, 2);
        let g = self.rng.pick(2);
        let mut names = vec![gid(&self.groups[g])];
        if self.rng.chance(30) {
            names.push(gid("no-such-group"));
        }
        let req = DeleteGroupsRequest::default().with_groups_names(names);
        let note = format!("delete {} (v{version})", self.groups[g]);
        self.plan(
            note,
            "admin".into(),
            ApiKey::DeleteGroups,
            version,
            &req,
            Api::Other,
        )
    }

    /// Deviations: a request a well-behaved client would not send.
    fn deviation(&mut self) -> Option<Planned> {
        let idle: Vec<usize> = (0..self.members.len())
            .filter(|&i| self.members[i].pending.is_none() && self.members[i].phase != Phase::Gone)
            .collect();
        if idle.is_empty() {
            return None;
        }
        let i = idle[self.rng.pick(idle.len())];
        let generation = self.members[i].generation;
        Some(match self.rng.pick(11) {
            0 => self.heartbeat(i, generation + 1, "wrong generation"),
            1 => self.sync(i, generation - 1, "stale generation"),
            2 => {
                let saved = self.members[i].session_ms;
                self.members[i].session_ms = if self.rng.chance(50) { 500 } else { 70_000 };
                let p = self.join(i, "bad session timeout");
                self.members[i].session_ms = saved;
                p
            }
            3 => {
                let saved = std::mem::take(&mut self.groups[self.members[i].group]);
                let p = self.heartbeat(i, generation, "empty group id");
                self.groups[self.members[i].group] = saved;
                p
            }
            4 => {
                let g = self.members[i].group;
                let saved = std::mem::replace(&mut self.types[g], "other-type".into());
                let p = self.join(i, "inconsistent protocol type");
                self.types[g] = saved;
                p
            }
            5 => {
                let saved = std::mem::replace(
                    &mut self.members[i].protocols,
                    vec![("lonely".into(), vec![1, 2, 3])],
                );
                let p = self.join(i, "no common protocol");
                self.members[i].protocols = saved;
                p
            }
            6 => {
                let saved = std::mem::replace(&mut self.members[i].id, "unknown-member".into());
                let p = self.heartbeat(i, generation, "unknown member");
                self.members[i].id = saved;
                p
            }
            7 => {
                let saved = std::mem::replace(&mut self.members[i].id, "unknown-member".into());
                let p = self.join(i, "join with an unknown member id");
                self.members[i].id = saved;
                p
            }
            8 => {
                // Another client claims a static member's instance id (or a new dynamic member).
                let owner = (0..self.members.len()).find(|&k| self.members[k].instance.is_some());
                let k = owner.unwrap_or(i);
                let mut claimant = self.members[k].clone();
                claimant.client_id = format!("{}-x", claimant.client_id);
                claimant.id = String::new();
                claimant.phase = Phase::Out;
                claimant.pending = None;
                claimant.join_version = 0;
                self.members.push(claimant);
                let n = self.members.len() - 1;
                if k != i || self.members[k].instance.is_none() {
                    self.join(n, "another dynamic member")
                } else {
                    self.join(n, "claims a held instance id")
                }
            }
            9 => {
                let saved = self.members[i].protocol.clone();
                self.members[i].protocol = Some("wrong-protocol".into());
                let p = self.sync(i, generation, "wrong protocol name");
                self.members[i].protocol = saved;
                p
            }
            _ => {
                let p = self.join(i, "rejoin");
                self.members[i].pending = Some(self.apis.len() - 1);
                p
            }
        })
    }

    /// The natural next request of a member, if any.
    fn natural(&mut self, i: usize) -> Option<Planned> {
        let m = &self.members[i];
        if m.pending.is_some() {
            return None;
        }
        let generation = m.generation;
        let p = match m.phase {
            Phase::Gone => return None,
            Phase::Out | Phase::Rejoin => {
                self.join(i, if m.id.is_empty() { "join" } else { "rejoin" })
            }
            Phase::Sync => self.sync(i, generation, if m.leader { "leader" } else { "follower" }),
            Phase::Stable => match self.rng.pick(10) {
                0 => self.leave(i),
                1 | 2 => self.commit(i),
                _ => self.heartbeat(i, generation, "heartbeat"),
            },
        };
        if matches!(p.api_key, 11 | 14) {
            self.members[i].pending = Some(self.apis.len() - 1);
        }
        Some(p)
    }
}

fn protocols_for(rng: &mut Pcg64Mcg, protocol_type: &str) -> Vec<(String, Vec<u8>)> {
    let names = ["range", "roundrobin", "cooperative-sticky", "sticky"];
    let n = 1 + (rng.next_u32() % 3) as usize;
    let start = (rng.next_u32() % 4) as usize;
    (0..n)
        .map(|k| {
            let name = names[(start + k) % 4].to_string();
            let md = if protocol_type == "consumer" {
                let topics: &[&str] = if rng.next_u32().is_multiple_of(2) {
                    &["ctopic-a"]
                } else {
                    &["ctopic-a", "ctopic-b"]
                };
                subscription(topics)
            } else {
                vec![k as u8, 7, 7]
            };
            (name, md)
        })
        .collect()
}

impl Generate for ClassicGenerator {
    fn next(&mut self) -> Option<Planned> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let roll = self.rng.pick(100);
        let mut p = if roll < 8 {
            // Time passes: sessions of the silent members, rebalance and sync deadlines.
            let wait = [1_200, 2_550, 3_600, 6_000][self.rng.pick(4)];
            let mut p = self.describe();
            p.note = format!("{} then wait {wait} ms", p.note);
            p.then_wait_ms = wait;
            Some(p)
        } else if roll < 13 {
            Some(self.describe())
        } else if roll < 17 {
            Some(self.list())
        } else if roll < 21 {
            Some(self.fetch())
        } else if roll < 23 {
            Some(self.delete())
        } else if roll < 38 {
            self.deviation()
        } else {
            None
        }
        .or_else(|| {
            // The members' natural behaviour, starting with a random one.
            let n = self.members.len();
            let start = self.rng.pick(n);
            (0..n).find_map(|k| self.natural((start + k) % n))
        })
        .unwrap_or_else(|| self.describe());
        if self.remaining == 0 {
            p.note.push_str(" (last)");
        }
        let _ = self.seq;
        Some(p)
    }

    fn observe(&mut self, step: usize, body: &[u8]) {
        let (api, version) = self.apis[step];
        let mut b = bytes::Bytes::copy_from_slice(body);
        match api {
            Api::Join(i) => {
                let r = JoinGroupResponse::decode(&mut b, version).expect("join answer");
                let m = &mut self.members[i];
                if m.pending == Some(step) {
                    m.pending = None;
                }
                match r.error_code {
                    0 => {
                        m.id = r.member_id.to_string();
                        m.generation = r.generation_id;
                        m.protocol = r.protocol_name.as_ref().map(|p| p.to_string());
                        m.leader = r.leader.as_str() == r.member_id.as_str();
                        m.members = r.members.iter().map(|x| x.member_id.to_string()).collect();
                        m.members.sort();
                        m.phase = Phase::Sync;
                    }
                    79 => {
                        m.id = r.member_id.to_string();
                        m.phase = Phase::Rejoin;
                    }
                    25 => {
                        m.id = String::new();
                        m.phase = Phase::Out;
                    }
                    82 => m.phase = Phase::Gone,
                    _ => {}
                }
            }
            Api::Sync(i) => {
                let r = SyncGroupResponse::decode(&mut b, version).ok();
                let m = &mut self.members[i];
                if m.pending == Some(step) {
                    m.pending = None;
                }
                let code = r.map_or(0, |r| r.error_code);
                react(m, code, Phase::Stable);
            }
            Api::Heartbeat(i) => {
                let code = HeartbeatResponse::decode(&mut b, version).map_or(0, |r| r.error_code);
                let m = &mut self.members[i];
                react(m, code, m.phase);
            }
            Api::Commit(i) | Api::Leave(i) => {
                let _ = i;
            }
            Api::Other => {}
        }
    }

    fn groups(&self) -> Vec<String> {
        self.groups.clone()
    }
}

fn react(m: &mut Member, code: i16, ok: Phase) {
    match code {
        0 if m.phase == Phase::Sync || m.phase == Phase::Stable => m.phase = ok,
        27 | 22 => m.phase = Phase::Rejoin,
        25 => {
            m.id = String::new();
            m.phase = Phase::Out;
        }
        82 => m.phase = Phase::Gone,
        _ => {}
    }
}
