//! Random classic-group operation sequences (docs/classic-protocol.md): no input panics the
//! coordinator (its state transitions are checked), every deferred answer goes to a request in
//! flight and only once (§C3.4), the group stays well-formed, generations never go back, and
//! replaying the records rebuilds every settled group and the persistent state hash (§C7).
//! Shrinks to a minimal failing sequence.
//! (A unit test: it checks the classic group's internal invariants.)

use crate::util::map::{BTreeMap, BTreeSet};

use crate::config::CoordinatorConfig;
use crate::coordinator::classic::{ClassicReply, ClassicState, RequestToken};
use crate::coordinator::{
    Coordinator, OffsetCommitInput, OffsetCommitPartition, OffsetCommitTopic, RequestContext,
};
use crate::error::ErrorCode;
use crate::protocol::classic::{
    HeartbeatRequest, JoinGroupRequest, JoinProtocol, LeaveGroupRequest, LeavingMember,
    SyncGroupRequest,
};
use crate::records::{ClassicGroupMetadataValue, Record};
use crate::types::Millis;
use proptest::prelude::*;

const CLIENTS: u8 = 5;

#[derive(Debug, Clone)]
enum Op {
    Join {
        client: u8,
        known: bool,
        instance: bool,
        v9: bool,
        protocols: u8,
    },
    Sync {
        client: u8,
        assign: bool,
        generation_skew: i32,
    },
    Heartbeat {
        client: u8,
        generation_skew: i32,
    },
    Leave {
        clients: u8,
        by_instance: bool,
    },
    Commit {
        client: u8,
        generation_skew: i32,
    },
    Advance(i64),
    Delete,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let client = 0..CLIENTS;
    prop_oneof![
        // Clients 0 and 1 are static; most joins know their member id; protocol 2 rarely.
        4 => (client.clone(), prop::bool::weighted(0.75), any::<bool>(), prop_oneof![4 => 0u8..2, 1 => Just(2u8)]).prop_map(
            |(client, known, v9, protocols)| Op::Join { client, known, instance: client < 2, v9, protocols }
        ),
        3 => (client.clone(), any::<bool>(), -1i32..=1).prop_map(|(client, assign, generation_skew)| Op::Sync { client, assign, generation_skew }),
        2 => (client.clone(), -1i32..=1).prop_map(|(client, generation_skew)| Op::Heartbeat { client, generation_skew }),
        1 => (1u8..32, any::<bool>()).prop_map(|(clients, by_instance)| Op::Leave { clients, by_instance }),
        1 => (client, -1i32..=1).prop_map(|(client, generation_skew)| Op::Commit { client, generation_skew }),
        3 => prop_oneof![Just(0i64), 1i64..5_000, 5_000i64..40_000].prop_map(Op::Advance),
        1 => Just(Op::Delete),
        1 => Just(Op::Restart),
    ]
}

#[derive(Debug, Default, Clone)]
struct Client {
    member_id: String,
    generation: i32,
}

struct World {
    coord: Coordinator,
    config: CoordinatorConfig,
    now: Millis,
    log: Vec<Record>,
    clients: BTreeMap<u8, Client>,
    in_flight: BTreeSet<u64>,
    /// Token -> the client that sent the request.
    owner: BTreeMap<u64, u8>,
    next_token: u64,
    last_generation: Option<i32>,
}

fn protocols(kind: u8) -> Vec<JoinProtocol> {
    let p = |name: &str| JoinProtocol {
        name: name.into(),
        metadata: vec![0, 0, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff],
    };
    match kind {
        0 => vec![p("range")],
        1 => vec![p("roundrobin"), p("range")],
        _ => vec![p("sticky")],
    }
}

fn strip(v: ClassicGroupMetadataValue) -> ClassicGroupMetadataValue {
    ClassicGroupMetadataValue {
        current_state_timestamp: -1,
        ..v
    }
}

impl World {
    fn new() -> World {
        let mut config = CoordinatorConfig::default();
        config.classic.initial_rebalance_delay_ms = 1_000;
        config.classic.max_size = 4;
        World {
            coord: Coordinator::new(config.clone()),
            config,
            now: Millis(0),
            log: Vec::new(),
            clients: BTreeMap::new(),
            in_flight: BTreeSet::new(),
            owner: BTreeMap::new(),
            next_token: 0,
            last_generation: None,
        }
    }

    fn token(&mut self, client: u8) -> RequestToken {
        self.next_token += 1;
        self.in_flight.insert(self.next_token);
        self.owner.insert(self.next_token, client);
        RequestToken(self.next_token)
    }

    fn client(&self, c: u8) -> Client {
        self.clients.get(&c).cloned().unwrap_or_default()
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Join {
                client,
                known,
                instance,
                v9,
                protocols: kind,
            } => {
                let c = self.client(*client);
                let req = JoinGroupRequest {
                    group_id: "g".into(),
                    session_timeout_ms: 10_000,
                    rebalance_timeout_ms: 15_000,
                    member_id: if *known {
                        c.member_id.clone()
                    } else {
                        String::new()
                    },
                    group_instance_id: instance.then(|| format!("i{client}")),
                    protocol_type: "consumer".into(),
                    protocols: protocols(*kind),
                    reason: None,
                };
                let ctx = RequestContext {
                    client_id: format!("c{client}"),
                    client_host: "/h".into(),
                    api_version: if *v9 { 9 } else { 3 },
                };
                let token = self.token(*client);
                let out = self.coord.classic_join(self.now, &ctx, &req, token);
                self.log.extend(out.records);
            }
            Op::Sync {
                client,
                assign,
                generation_skew,
            } => {
                let c = self.client(*client);
                let assignments = if *assign {
                    self.clients
                        .values()
                        .map(|o| (o.member_id.clone(), o.member_id.as_bytes().to_vec()))
                        .collect()
                } else {
                    Vec::new()
                };
                let req = SyncGroupRequest {
                    group_id: "g".into(),
                    generation_id: c.generation + generation_skew,
                    member_id: c.member_id.clone(),
                    assignments,
                    ..Default::default()
                };
                let token = self.token(*client);
                let out = self.coord.classic_sync(self.now, &req, token);
                self.log.extend(out.records);
            }
            Op::Heartbeat {
                client,
                generation_skew,
            } => {
                let c = self.client(*client);
                let req = HeartbeatRequest {
                    group_id: "g".into(),
                    generation_id: c.generation + generation_skew,
                    member_id: c.member_id.clone(),
                    group_instance_id: None,
                };
                let out = self.coord.classic_heartbeat(self.now, &req);
                prop_assert!(out.records.is_empty(), "a heartbeat wrote records");
            }
            Op::Leave {
                clients,
                by_instance,
            } => {
                let members = (0..CLIENTS)
                    .filter(|i| clients & (1 << i) != 0)
                    .map(|i| LeavingMember {
                        member_id: if *by_instance {
                            String::new()
                        } else {
                            self.client(i).member_id
                        },
                        group_instance_id: by_instance.then(|| format!("i{i}")),
                        reason: None,
                    })
                    .collect();
                let out = self.coord.classic_leave(
                    self.now,
                    &LeaveGroupRequest {
                        group_id: "g".into(),
                        members,
                    },
                );
                self.log.extend(out.records);
            }
            Op::Commit {
                client,
                generation_skew,
            } => {
                let c = self.client(*client);
                let input = OffsetCommitInput {
                    group_id: "g".into(),
                    member_id: c.member_id.clone(),
                    member_epoch: c.generation + generation_skew,
                    group_instance_id: None,
                    api_version: 8,
                    transactional: false,
                    topics: vec![OffsetCommitTopic {
                        name: "t".into(),
                        partitions: vec![OffsetCommitPartition {
                            partition: 0,
                            offset: 1,
                            leader_epoch: -1,
                            metadata: None,
                        }],
                    }],
                };
                let out = self.coord.offset_commit(self.now, &input);
                self.log.extend(out.records);
            }
            Op::Advance(ms) => {
                self.now = self.now.plus(*ms);
                for out in self.coord.fire_due_timers(self.now) {
                    self.log.extend(out.records);
                }
            }
            Op::Delete => {
                let out = self.coord.delete_groups(self.now, &["g".into()]);
                if out.response[0].1 == ErrorCode::NONE {
                    self.last_generation = None;
                }
                self.log.extend(out.records);
            }
            Op::Restart => {
                let mut fresh = Coordinator::new(self.config.clone());
                for r in &self.log {
                    fresh
                        .replay(r)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
                let _rearmed = fresh.on_loaded(self.now);
                self.coord = fresh;
                // Requests in flight died with the old coordinator.
                self.in_flight.clear();
                self.owner.clear();
                // Generations that ended without a record are not persisted (as in Kafka): the
                // group comes back at its last written generation.
                self.last_generation = None;
            }
        }
        self.deliver()?;
        self.check()
    }

    /// Every answer is for a request in flight, once; clients learn ids and generations.
    fn deliver(&mut self) -> Result<(), TestCaseError> {
        for done in self.coord.take_completed() {
            prop_assert!(
                self.in_flight.remove(&done.token.0),
                "token {} answered twice or never asked",
                done.token.0
            );
            let owner = self.owner.remove(&done.token.0);
            if let ClassicReply::Join(r) = &done.reply {
                if let Some(k) = owner {
                    let c = self.clients.entry(k).or_default();
                    if matches!(
                        r.error_code,
                        ErrorCode::NONE | ErrorCode::MEMBER_ID_REQUIRED
                    ) {
                        c.member_id = r.member_id.clone();
                    }
                    if r.error_code == ErrorCode::NONE {
                        c.generation = r.generation_id;
                    }
                }
                if r.error_code == ErrorCode::NONE {
                    let g = self.coord.classic_group("g");
                    prop_assert!(g.is_some(), "a successful JoinGroup for a missing group");
                    prop_assert!(
                        r.generation_id <= g.map_or(0, |g| g.generation),
                        "answer from the future"
                    );
                }
            }
        }
        Ok(())
    }

    fn check(&mut self) -> Result<(), TestCaseError> {
        if let Some(g) = self.coord.classic_group("g") {
            if let Some(last) = self.last_generation {
                prop_assert!(
                    g.generation >= last,
                    "generation {} -> {}",
                    last,
                    g.generation
                );
            }
            self.last_generation = Some(g.generation);
            match &g.leader {
                Some(l) => prop_assert!(g.members.contains_key(l), "leader {l} not a member"),
                None => prop_assert!(g.members.is_empty(), "members without a leader"),
            }
            for (i, id) in &g.static_members {
                prop_assert_eq!(
                    g.members
                        .get(id)
                        .and_then(|m| m.group_instance_id.as_deref()),
                    Some(i.as_str())
                );
            }
            for m in g.members.values() {
                if let Some(i) = &m.group_instance_id {
                    prop_assert_eq!(g.static_members.get(i), Some(&m.member_id));
                }
            }
            prop_assert!(g.pending_sync.iter().all(|m| g.members.contains_key(m)));
            if g.state == ClassicState::Empty {
                prop_assert!(g.members.is_empty(), "Empty with members");
            }
            if matches!(
                g.state,
                ClassicState::Stable | ClassicState::CompletingRebalance
            ) {
                prop_assert!(g.protocol_name.is_some(), "no protocol in {:?}", g.state);
            }
        }
        // Replay equals live.
        let mut fresh = Coordinator::new(self.config.clone());
        for r in &self.log {
            fresh
                .replay(r)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        prop_assert_eq!(fresh.state_hash(), self.coord.state_hash());
        if let Some(view) = self.coord.classic_group("g").and_then(|g| g.settled_view()) {
            let replayed = fresh.classic_group("g").and_then(|g| g.settled_view());
            prop_assert_eq!(Some(strip(view)), replayed.map(strip));
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn classic_groups_stay_well_formed(ops in proptest::collection::vec(op(), 1..80)) {
        let mut w = World::new();
        for op in &ops {
            w.apply(op)?;
        }
    }
}
