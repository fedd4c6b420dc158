//! The consumer-group generator (KIP-848): seeded sequences of ConsumerGroupHeartbeat (68, v0 and
//! v1) and ConsumerGroupDescribe (69, v0 and v1) from several members of one group, some
//! subscribing by regex, with classic members joining the same group through JoinGroup /
//! SyncGroup / Heartbeat (a mixed group), and in every fourth sequence a classic group that a
//! consumer member upgrades (see tests/differential/README.md, "Consumer groups").
//!
//! Members behave as the Java KafkaConsumer does with `group.protocol=consumer`: join with epoch 0
//! and the full subscription, then heartbeat with the epoch they got, reporting the partitions
//! they own once they changed (a member reconciles at once to the assignment it receives), leave
//! with -1 (static members -2); a fenced or unknown member rejoins with epoch 0. A quarter of the
//! steps are deviations.

use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;
use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;
use uuid::Uuid;

use super::classic_generate::subscription;
use super::wire::{Dice, Generate, Planned, gid, planned, s};

/// Topics the sequences subscribe to (created on both sides before the first sequence).
pub const TOPICS: &[(&str, i32)] = &[("ktopic-a", 3), ("ktopic-b", 2), ("ktopic-c", 4)];

const REBALANCE_TIMEOUTS: [i32; 3] = [3_075, 5_025, 30_075];

#[derive(Debug, Clone, PartialEq)]
enum Subscription {
    Names(Vec<String>),
    Regex(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Out,
    In,
    Gone,
}

/// A KIP-848 member.
#[derive(Debug, Clone)]
struct Member {
    client_id: String,
    version: i16,
    id: String,
    epoch: i32,
    instance: Option<String>,
    rack: Option<String>,
    subscription: Subscription,
    assignor: Option<String>,
    rebalance_ms: i32,
    /// What it owns (topic id, partitions), as last assigned.
    owned: Vec<(Uuid, Vec<i32>)>,
    /// Whether `owned` changed since the last heartbeat that reported it.
    owned_changed: bool,
    phase: Phase,
}

/// A classic member of the same group (JoinGroup protocol type "consumer").
#[derive(Debug, Clone)]
struct Classic {
    client_id: String,
    id: String,
    generation: i32,
    protocol: Option<String>,
    /// 0 = out, 1 = must rejoin with id, 2 = must sync, 3 = stable.
    phase: u8,
    pending: bool,
    topics: Vec<&'static str>,
}

#[derive(Debug, Clone, Copy)]
enum Api {
    Heartbeat(usize),
    Join(usize),
    Sync(usize),
    ClassicHeartbeat(usize),
    Other,
}

pub struct ConsumerGenerator {
    rng: Pcg64Mcg,
    group: String,
    members: Vec<Member>,
    classic: Vec<Classic>,
    apis: Vec<(Api, i16)>,
    remaining: u32,
    /// Upgrade sequences: the classic members go first (a classic group), then consumers join.
    upgrade: bool,
}

fn uuid_like(rng: &mut Pcg64Mcg) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    (0..22)
        .map(|_| ALPHABET[(rng.next_u32() % 64) as usize] as char)
        .collect()
}

impl ConsumerGenerator {
    pub fn new(seq: u32) -> ConsumerGenerator {
        let mut rng = Pcg64Mcg::new(0xc0a5_0e00_0000 + seq as u128 * 104_729);
        let upgrade = seq % 4 == 3;
        let count = 2 + (rng.next_u32() % 3) as usize;
        let mut members = Vec::new();
        for i in 0..count {
            let version = if rng.next_u32().is_multiple_of(5) {
                0
            } else {
                1
            };
            let subscription = match rng.next_u32() % 5 {
                0 => Subscription::Regex("ktopic-[ab]".into()),
                1 => Subscription::Regex("ktopic-.*".into()),
                2 => Subscription::Names(vec!["ktopic-a".into(), "ktopic-c".into()]),
                _ => Subscription::Names(vec!["ktopic-a".into(), "ktopic-b".into()]),
            };
            let assignor = match rng.next_u32() % 4 {
                0 => Some("range".to_string()),
                1 => Some("uniform".to_string()),
                _ => None,
            };
            members.push(Member {
                client_id: format!("k{seq}-{i}"),
                version,
                id: if version >= 1 {
                    uuid_like(&mut rng)
                } else {
                    String::new()
                },
                epoch: 0,
                instance: (rng.next_u32().is_multiple_of(4)).then(|| format!("kinst-{seq}-{i}")),
                rack: (rng.next_u32().is_multiple_of(3)).then(|| format!("rack-{}", i % 2)),
                subscription,
                assignor,
                rebalance_ms: REBALANCE_TIMEOUTS[(rng.next_u32() % 3) as usize],
                owned: Vec::new(),
                owned_changed: false,
                phase: Phase::Out,
            });
        }
        let classic_count = if upgrade {
            2
        } else {
            (rng.next_u32() % 3) as usize
        };
        let classic = (0..classic_count)
            .map(|i| Classic {
                client_id: format!("k{seq}-c{i}"),
                id: String::new(),
                generation: -1,
                protocol: None,
                phase: 0,
                pending: false,
                topics: if i % 2 == 0 {
                    vec!["ktopic-a"]
                } else {
                    vec!["ktopic-a", "ktopic-b"]
                },
            })
            .collect();
        let remaining = 30 + rng.next_u32() % 12;
        ConsumerGenerator {
            rng,
            group: format!("kdiff-{seq}"),
            members,
            classic,
            apis: Vec::new(),
            remaining,
            upgrade,
        }
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

    /// A heartbeat of member `i` with `epoch`; `full` sends every field (a join does).
    fn heartbeat(&mut self, i: usize, epoch: i32, full: bool, note: &str) -> Planned {
        let m = self.members[i].clone();
        let mut req = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(gid(&self.group))
            .with_member_id(s(&m.id))
            .with_member_epoch(epoch)
            .with_instance_id(m.instance.as_deref().map(s))
            .with_rebalance_timeout_ms(-1);
        if full {
            req.rack_id = m.rack.as_deref().map(s);
            req.rebalance_timeout_ms = m.rebalance_ms;
            match &m.subscription {
                Subscription::Names(n) => {
                    req.subscribed_topic_names = Some(n.iter().map(|t| TopicName(s(t))).collect())
                }
                // Regexes are v1+ (KIP-848's v0 has only topic names).
                Subscription::Regex(_) if m.version == 0 => {
                    req.subscribed_topic_names =
                        Some(vec![TopicName(s("ktopic-a")), TopicName(s("ktopic-b"))])
                }
                Subscription::Regex(r) => req.subscribed_topic_regex = Some(s(r)),
            }
            req.server_assignor = m.assignor.as_deref().map(s);
        }
        if full || m.owned_changed {
            req.topic_partitions = Some(
                m.owned
                    .iter()
                    .map(|(t, p)| {
                        TopicPartitions::default()
                            .with_topic_id(*t)
                            .with_partitions(p.clone())
                    })
                    .collect(),
            );
            self.members[i].owned_changed = false;
        }
        let note = format!("{note} {} (epoch {epoch}, v{})", m.client_id, m.version);
        self.plan(
            note,
            m.client_id,
            ApiKey::ConsumerGroupHeartbeat,
            m.version,
            &req,
            Api::Heartbeat(i),
        )
    }

    fn describe(&mut self) -> Planned {
        let version = (self.rng.next_u32() % 2) as i16;
        let mut ids = vec![gid(&self.group)];
        if self.rng.chance(25) {
            ids.push(gid("no-such-group"));
        }
        if self.rng.chance(10) {
            ids.push(gid(""));
        }
        let req = ConsumerGroupDescribeRequest::default()
            .with_group_ids(ids)
            .with_include_authorized_operations(self.rng.chance(30));
        let note = format!("consumer describe (v{version})");
        self.plan(
            note,
            "admin".into(),
            ApiKey::ConsumerGroupDescribe,
            version,
            &req,
            Api::Other,
        )
    }

    fn classic_describe(&mut self) -> Planned {
        let version = (self.rng.next_u32() % 6) as i16;
        let req = DescribeGroupsRequest::default().with_groups(vec![gid(&self.group)]);
        let note = format!("classic describe (v{version})");
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
        let version = 5;
        let mut req = ListGroupsRequest::default();
        if self.rng.chance(50) {
            req.types_filter = vec![s(["consumer", "classic"][self.rng.pick(2)])];
        }
        self.plan(
            "list groups (v5)".into(),
            "admin".into(),
            ApiKey::ListGroups,
            version,
            &req,
            Api::Other,
        )
    }

    fn join(&mut self, c: usize, note: &str) -> Planned {
        let version = 5 + (self.rng.next_u32() % 5) as i16;
        let m = &self.classic[c];
        let md = subscription(&m.topics);
        let req = JoinGroupRequest::default()
            .with_group_id(gid(&self.group))
            .with_session_timeout_ms(45_075)
            .with_rebalance_timeout_ms(5_025)
            .with_member_id(s(&m.id))
            .with_protocol_type(s("consumer"))
            .with_protocols(
                ["cooperative-sticky", "range"]
                    .iter()
                    .map(|n| {
                        JoinGroupRequestProtocol::default()
                            .with_name(s(n))
                            .with_metadata(md.clone().into())
                    })
                    .collect(),
            );
        let note = format!("{note} {} (join v{version})", m.client_id);
        let cid = m.client_id.clone();
        self.classic[c].pending = true;
        self.plan(note, cid, ApiKey::JoinGroup, version, &req, Api::Join(c))
    }

    fn sync(&mut self, c: usize) -> Planned {
        let version = 5;
        let m = &self.classic[c];
        let req = SyncGroupRequest::default()
            .with_group_id(gid(&self.group))
            .with_generation_id(m.generation)
            .with_member_id(s(&m.id))
            .with_protocol_type(Some(s("consumer")))
            .with_protocol_name(m.protocol.as_deref().map(s));
        let note = format!("sync {} (v{version})", m.client_id);
        let cid = m.client_id.clone();
        self.classic[c].pending = true;
        self.plan(note, cid, ApiKey::SyncGroup, version, &req, Api::Sync(c))
    }

    fn classic_heartbeat(&mut self, c: usize) -> Planned {
        let version = 4;
        let m = &self.classic[c];
        let req = HeartbeatRequest::default()
            .with_group_id(gid(&self.group))
            .with_generation_id(m.generation)
            .with_member_id(s(&m.id));
        let note = format!("classic heartbeat {} (v{version})", m.client_id);
        let cid = m.client_id.clone();
        self.plan(
            note,
            cid,
            ApiKey::Heartbeat,
            version,
            &req,
            Api::ClassicHeartbeat(c),
        )
    }

    fn classic_leave(&mut self, c: usize) -> Planned {
        let version = 5;
        let m = self.classic[c].clone();
        let req = LeaveGroupRequest::default()
            .with_group_id(gid(&self.group))
            .with_members(vec![MemberIdentity::default().with_member_id(s(&m.id))]);
        self.classic[c].phase = 0;
        self.classic[c].id = String::new();
        let note = format!("classic leave {} (v{version})", m.client_id);
        self.plan(
            note,
            m.client_id,
            ApiKey::LeaveGroup,
            version,
            &req,
            Api::Other,
        )
    }

    fn classic_natural(&mut self, c: usize) -> Option<Planned> {
        let m = &self.classic[c];
        if m.pending {
            return None;
        }
        Some(match m.phase {
            0 => self.join(c, "classic join"),
            1 => self.join(c, "classic rejoin"),
            2 => self.sync(c),
            _ => {
                if self.rng.chance(8) {
                    self.classic_leave(c)
                } else {
                    self.classic_heartbeat(c)
                }
            }
        })
    }

    fn natural(&mut self, i: usize) -> Option<Planned> {
        let m = &self.members[i];
        match m.phase {
            Phase::Gone => None,
            Phase::Out => Some(self.heartbeat(i, 0, true, "join")),
            Phase::In => {
                let epoch = m.epoch;
                let leave_epoch = if m.instance.is_some() { -2 } else { -1 };
                Some(match self.rng.pick(14) {
                    0 => {
                        let p = self.heartbeat(i, leave_epoch, false, "leave");
                        self.members[i].phase = Phase::Out;
                        self.members[i].owned.clear();
                        if self.members[i].version == 0 && leave_epoch == -1 {
                            self.members[i].id = String::new();
                        }
                        p
                    }
                    1 => self.heartbeat(i, epoch, true, "full heartbeat"),
                    _ => self.heartbeat(i, epoch, false, "heartbeat"),
                })
            }
        }
    }

    fn deviation(&mut self) -> Option<Planned> {
        let joined: Vec<usize> = (0..self.members.len())
            .filter(|&i| self.members[i].phase == Phase::In)
            .collect();
        let any = self.rng.pick(self.members.len());
        let i = if joined.is_empty() {
            any
        } else {
            joined[self.rng.pick(joined.len())]
        };
        let epoch = self.members[i].epoch;
        Some(match self.rng.pick(10) {
            0 => self.heartbeat(i, epoch + 1, false, "future epoch"),
            1 => self.heartbeat(i, (epoch - 1).max(1), false, "stale epoch"),
            2 => {
                let saved = std::mem::replace(&mut self.members[i].id, "unknown-member-id".into());
                let p = self.heartbeat(i, epoch.max(1), false, "unknown member");
                self.members[i].id = saved;
                p
            }
            3 => {
                let saved = self.members[i].subscription.clone();
                self.members[i].subscription = Subscription::Regex("ktopic-[".into());
                let p = self.heartbeat(i, epoch, true, "invalid regex");
                self.members[i].subscription = saved;
                p
            }
            4 => {
                let saved = self.members[i].assignor.clone();
                self.members[i].assignor = Some("no-such-assignor".into());
                let p = self.heartbeat(i, epoch, true, "unknown assignor");
                self.members[i].assignor = saved;
                p
            }
            5 => {
                // A join without the subscription or the rebalance timeout.
                let mut p = self.heartbeat(i, 0, false, "join without subscription");
                p.note.push_str(" (bare)");
                p
            }
            6 => {
                // Another member claims a static member's instance id.
                let owner = (0..self.members.len()).find(|&k| self.members[k].instance.is_some());
                let k = owner.unwrap_or(i);
                let mut m = self.members[k].clone();
                m.client_id = format!("{}-x", m.client_id);
                m.id = if m.version >= 1 {
                    uuid_like(&mut self.rng)
                } else {
                    String::new()
                };
                m.phase = Phase::Out;
                m.owned.clear();
                self.members.push(m);
                let n = self.members.len() - 1;
                self.heartbeat(n, 0, true, "another member (same instance id, if any)")
            }
            7 => {
                // A subscription change of a running member.
                self.members[i].subscription = match self.members[i].subscription {
                    Subscription::Names(_) => Subscription::Regex("ktopic-[bc]".into()),
                    Subscription::Regex(_) => Subscription::Names(vec!["ktopic-b".into()]),
                };
                self.heartbeat(i, epoch, true, "subscription change")
            }
            8 => {
                let saved = std::mem::take(&mut self.members[i].id);
                let p = self.heartbeat(i, epoch.max(1), false, "empty member id");
                self.members[i].id = saved;
                p
            }
            _ => {
                // Owned partitions the member was never given.
                let saved = self.members[i].owned.clone();
                self.members[i].owned = vec![(Uuid::from_u128(0x1234), vec![0])];
                self.members[i].owned_changed = true;
                let p = self.heartbeat(i, epoch, false, "owns an unknown topic");
                self.members[i].owned = saved;
                self.members[i].owned_changed = true;
                p
            }
        })
    }
}

impl Generate for ConsumerGenerator {
    fn next(&mut self) -> Option<Planned> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // Upgrade sequences: the classic members form their group first.
        if self.upgrade && self.classic.iter().any(|c| c.phase < 3) {
            let n = self.classic.len();
            let start = self.rng.pick(n);
            if let Some(p) = (0..n).find_map(|k| self.classic_natural((start + k) % n)) {
                return Some(p);
            }
        }
        let roll = self.rng.pick(100);
        let p = if roll < 5 {
            let wait = [1_200, 3_600, 6_000][self.rng.pick(3)];
            let mut p = self.describe();
            p.note = format!("{} then wait {wait} ms", p.note);
            p.then_wait_ms = wait;
            Some(p)
        } else if roll < 14 {
            Some(self.describe())
        } else if roll < 16 {
            Some(self.classic_describe())
        } else if roll < 18 {
            Some(self.list())
        } else if roll < 40 {
            self.deviation()
        } else if roll < 55 && !self.classic.is_empty() {
            let c = self.rng.pick(self.classic.len());
            self.classic_natural(c)
        } else {
            None
        };
        Some(
            p.or_else(|| {
                let n = self.members.len();
                let start = self.rng.pick(n);
                (0..n).find_map(|k| self.natural((start + k) % n))
            })
            .unwrap_or_else(|| self.describe()),
        )
    }

    fn observe(&mut self, step: usize, body: &[u8]) {
        let (api, version) = self.apis[step];
        let mut b = bytes::Bytes::copy_from_slice(body);
        match api {
            Api::Heartbeat(i) => {
                let Ok(r) = ConsumerGroupHeartbeatResponse::decode(&mut b, version) else {
                    return;
                };
                let m = &mut self.members[i];
                match r.error_code {
                    0 => {
                        if m.phase == Phase::Out && r.member_epoch <= 0 {
                            return; // the answer to a leave
                        }
                        if let Some(id) = &r.member_id {
                            m.id = id.to_string();
                        }
                        m.epoch = r.member_epoch;
                        m.phase = Phase::In;
                        if let Some(a) = r.assignment {
                            m.owned = a
                                .topic_partitions
                                .into_iter()
                                .map(|t| (t.topic_id, t.partitions))
                                .collect();
                            m.owned_changed = true;
                        }
                    }
                    110 | 25 => {
                        m.epoch = 0;
                        m.phase = Phase::Out;
                        m.owned.clear();
                        if m.version == 0 && r.error_code == 25 {
                            m.id = String::new();
                        }
                    }
                    111 => m.phase = Phase::Gone,
                    _ => {}
                }
            }
            Api::Join(c) => {
                let Ok(r) = JoinGroupResponse::decode(&mut b, version) else {
                    return;
                };
                let m = &mut self.classic[c];
                m.pending = false;
                match r.error_code {
                    0 => {
                        m.id = r.member_id.to_string();
                        m.generation = r.generation_id;
                        m.protocol = r.protocol_name.map(|p| p.to_string());
                        m.phase = 2;
                    }
                    79 => {
                        m.id = r.member_id.to_string();
                        m.phase = 1;
                    }
                    25 => {
                        m.id = String::new();
                        m.phase = 0;
                    }
                    _ => {}
                }
            }
            Api::Sync(c) => {
                let code = SyncGroupResponse::decode(&mut b, version).map_or(0, |r| r.error_code);
                let m = &mut self.classic[c];
                m.pending = false;
                classic_react(m, code, 3);
            }
            Api::ClassicHeartbeat(c) => {
                let code = HeartbeatResponse::decode(&mut b, version).map_or(0, |r| r.error_code);
                let m = &mut self.classic[c];
                let phase = m.phase;
                classic_react(m, code, phase);
            }
            Api::Other => {}
        }
    }

    fn groups(&self) -> Vec<String> {
        vec![self.group.clone()]
    }
}

fn classic_react(m: &mut Classic, code: i16, ok: u8) {
    match code {
        0 => m.phase = ok,
        27 | 22 => m.phase = 1,
        25 => {
            m.id = String::new();
            m.phase = 0;
        }
        _ => {}
    }
}
