//! A simulated classic consumer: the Java `KafkaConsumer`'s `ConsumerCoordinator` (Kafka 4.4,
//! `group.protocol=classic`) reduced to its group membership — what it sends and how it reacts
//! to each answer. The engine (`engine/classic.rs`) moves the messages and runs the clock.
//!
//! * Poll loop: a consumer that needs to (re)join first runs `onJoinPrepare` — a reset
//!   generation or member id loses every partition; otherwise eager revokes everything and
//!   cooperative only partitions it no longer subscribes to — then sends JoinGroup with one
//!   protocol per assignor (subscription v3 with owned partitions and generation).
//! * JoinGroup: MEMBER_ID_REQUIRED → rejoin with the given id; UNKNOWN_MEMBER_ID → reset and
//!   rejoin; success → the leader runs the assignor over the members' subscriptions (unless
//!   `skip_assignment`), everyone sends SyncGroup.
//! * SyncGroup: success → owns the assignment (cooperative: partitions no longer assigned are
//!   revoked and, if any, the consumer rejoins at once — the second rebalance);
//!   REBALANCE_IN_PROGRESS → rejoin; ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID → reset generation
//!   (and member id for the latter) and rejoin.
//! * Heartbeat every `heartbeat.interval.ms` once joined: REBALANCE_IN_PROGRESS → rejoin;
//!   ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID → reset and rejoin; FENCED_INSTANCE_ID → stop.
//! * Close: a dynamic member sends LeaveGroup, a static member just stops (Kafka's default).

use crate::util::map::BTreeMap;

use crate::assignor::client::protocol::{
    decode_assignment, decode_subscription, encode_assignment,
};
use crate::assignor::client::{
    ClientAssignor, RebalanceProtocol, Subscription, TopicPartition, common_protocol, protocol,
};
use crate::error::ErrorCode;
use crate::protocol::classic::{
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, JoinProtocol, SyncGroupRequest,
    SyncGroupResponse,
};

use super::api::ClassicSpec;
use super::client::ClientStatus;

/// `consumer`: the protocol type of every consumer group.
pub(crate) const PROTOCOL_TYPE: &str = "consumer";

/// Where the consumer is in its membership.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Phase {
    /// Needs to send JoinGroup (after `onJoinPrepare`).
    Unjoined,
    /// JoinGroup in flight.
    Joining,
    /// SyncGroup in flight.
    AwaitingSync,
    /// Has its assignment for `generation`.
    Stable,
}

/// The JoinGroup or SyncGroup a consumer waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Pending {
    pub seq: u64,
    pub sent_ms: i64,
}

/// What the engine does next for a consumer after an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// Nothing to send now.
    Nothing,
    /// Run the poll loop's join (after `onJoinPrepare`) after this many ms.
    Rejoin(i64),
    /// Send this SyncGroup.
    Sync(Box<SyncGroupRequest>),
    /// A fatal error: the consumer stops.
    Stop,
}

/// One simulated classic consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassicConsumer {
    /// The simulation's name: `<process>-t<thread>-<incarnation>`.
    pub name: String,
    pub process_id: String,
    pub thread: u32,
    pub instance_id: Option<String>,
    pub status: ClientStatus,
    pub net_cut: bool,
    pub assignors: Vec<ClientAssignor>,
    pub protocol: RebalanceProtocol,
    /// The coordinator's member id (`""` unknown).
    pub member_id: String,
    /// -1 when not in a generation.
    pub generation: i32,
    pub protocol_name: Option<String>,
    pub leader_id: String,
    pub phase: Phase,
    /// The next poll must (re)join (`requestRejoin`); the phase stays until the JoinGroup goes.
    pub rejoin_needed: bool,
    /// Partitions consumed now, in assignment order.
    pub owned: Vec<TopicPartition>,
    pub revoked_last: Vec<TopicPartition>,
    /// JoinGroup or SyncGroup in flight.
    pub pending: Option<Pending>,
    pub heartbeat_in_flight: Option<u64>,
    /// Invalidates scheduled heartbeats / polls.
    pub hb_gen: u64,
    pub poll_gen: u64,
    pub next_hb_ms: Option<i64>,
    pub stalled_until: Option<i64>,
    /// `StickyAssignor`'s memory: last assignment and its generation.
    pub sticky_memory: Option<(Vec<TopicPartition>, i32)>,
    /// `CooperativeStickyAssignor`'s generation.
    pub cooperative_generation: i32,
    /// Highest generation joined (generations never go back for one consumer).
    pub max_generation: i32,
    pub generation_regressions: Vec<String>,
    pub last_error: Option<String>,
    /// The leader's metadata when it last assigned (Kafka's `assignmentSnapshot`): a change
    /// makes it rejoin.
    pub assignment_snapshot: Option<Vec<(String, i32)>>,
    /// A SyncGroup waiting for the poll loop (the consumer was stalled when its JoinGroup
    /// answer came).
    pub queued_sync: Option<Box<SyncGroupRequest>>,
}

/// The simulation's consumers, in creation order (a `Vec`: a map type of its own would cost the
/// wasm module more than the linear lookups cost a handful of consumers).
#[derive(Debug, Clone, Default)]
pub(crate) struct Consumers(Vec<ClassicConsumer>);

impl Consumers {
    pub fn get(&self, name: &str) -> Option<&ClassicConsumer> {
        self.0.iter().find(|c| c.name == name)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut ClassicConsumer> {
        self.0.iter_mut().find(|c| c.name == name)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn insert(&mut self, c: ClassicConsumer) {
        self.0.push(c);
    }

    pub fn values(&self) -> std::slice::Iter<'_, ClassicConsumer> {
        self.0.iter()
    }

    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, ClassicConsumer> {
        self.0.iter_mut()
    }
}

impl ClassicConsumer {
    pub fn new(
        name: String,
        process_id: &str,
        thread: u32,
        instance_id: Option<String>,
        spec: &ClassicSpec,
    ) -> ClassicConsumer {
        let assignors: Vec<ClientAssignor> = spec
            .assignors
            .iter()
            .filter_map(|a| ClientAssignor::from_name(a))
            .collect();
        ClassicConsumer {
            name,
            process_id: process_id.to_string(),
            thread,
            instance_id,
            status: ClientStatus::Alive,
            net_cut: false,
            protocol: common_protocol(&assignors),
            assignors,
            member_id: String::new(),
            generation: -1,
            protocol_name: None,
            leader_id: String::new(),
            phase: Phase::Unjoined,
            rejoin_needed: true,
            owned: Vec::new(),
            revoked_last: Vec::new(),
            pending: None,
            heartbeat_in_flight: None,
            hb_gen: 0,
            poll_gen: 0,
            next_hb_ms: None,
            stalled_until: None,
            sticky_memory: None,
            cooperative_generation: -1,
            max_generation: -1,
            generation_regressions: Vec::new(),
            last_error: None,
            assignment_snapshot: None,
            queued_sync: None,
        }
    }

    pub fn is_alive(&self) -> bool {
        self.status == ClientStatus::Alive
    }

    /// `alive`, `crashed`, `partitioned`, `left`, `bouncing`, `stopped` (as streams members).
    pub fn status_name(&self) -> &'static str {
        match self.status {
            ClientStatus::Alive if self.net_cut => "partitioned",
            ClientStatus::Alive => "alive",
            ClientStatus::Crashed => "crashed",
            ClientStatus::Left => "left",
            ClientStatus::Bouncing => "bouncing",
            ClientStatus::Stopped => "stopped",
        }
    }

    pub fn is_leader(&self) -> bool {
        !self.member_id.is_empty() && self.leader_id == self.member_id
    }

    /// The client state the explorer shows.
    pub fn state_name(&self) -> &'static str {
        if !self.is_alive() {
            return "stopped";
        }
        match self.phase {
            Phase::Stable if self.rejoin_needed => "revoking",
            Phase::Unjoined => "unjoined",
            Phase::Joining => "joining",
            Phase::AwaitingSync => "awaiting_sync",
            Phase::Stable => "stable",
        }
    }

    /// Stops without leaving: drops everything, answers are ignored from now on.
    pub fn stop(&mut self, status: ClientStatus) {
        self.status = status;
        self.owned.clear();
        self.pending = None;
        self.heartbeat_in_flight = None;
        self.next_hb_ms = None;
        self.hb_gen += 1;
        self.poll_gen += 1;
    }

    /// `resetStateAndGeneration`: out of the generation (and the member id when asked).
    pub fn reset_generation(&mut self, reset_member_id: bool) {
        self.generation = -1;
        self.protocol_name = None;
        self.leader_id.clear();
        if reset_member_id {
            self.member_id.clear();
        }
        self.phase = Phase::Unjoined;
        self.rejoin_needed = true;
    }

    /// `requestRejoin`: join again at the next poll, keeping the generation.
    pub fn request_rejoin(&mut self) {
        self.rejoin_needed = true;
    }

    /// Called when the poll loop sends JoinGroup.
    pub fn joining(&mut self) {
        self.phase = Phase::Joining;
        self.rejoin_needed = false;
    }

    /// `onJoinPrepare`: what the consumer gives up before it sends JoinGroup.
    pub fn prepare_join(&mut self, subscription: &[String]) {
        let revoked: Vec<TopicPartition> = if self.generation < 0 || self.member_id.is_empty() {
            // Lost: a reset generation means another consumer may own them already.
            std::mem::take(&mut self.owned)
        } else if self.protocol == RebalanceProtocol::Eager {
            std::mem::take(&mut self.owned)
        } else {
            let (keep, drop) = std::mem::take(&mut self.owned)
                .into_iter()
                .partition(|(t, _)| subscription.contains(t));
            self.owned = keep;
            drop
        };
        if !revoked.is_empty() {
            self.revoked_last = revoked;
        }
    }

    /// The JoinGroup the consumer sends now.
    pub fn join_request(
        &self,
        group_id: &str,
        spec: &ClassicSpec,
        subscription: &[String],
    ) -> JoinGroupRequest {
        let protocols = self
            .assignors
            .iter()
            .map(|a| {
                let user_data = match a {
                    ClientAssignor::Sticky => self
                        .sticky_memory
                        .as_ref()
                        .and_then(|(ps, g)| a.subscription_user_data(Some(ps), *g)),
                    _ => a.subscription_user_data(None, self.cooperative_generation),
                };
                let s = Subscription {
                    topics: subscription.to_vec(),
                    user_data,
                    owned_partitions: self.owned.clone(),
                    generation_id: (self.generation >= 0).then_some(self.generation),
                    rack_id: None,
                    group_instance_id: None,
                };
                JoinProtocol {
                    name: a.name().to_string(),
                    metadata: protocol::encode_subscription(&s).unwrap_or_default(),
                }
            })
            .collect();
        JoinGroupRequest {
            group_id: group_id.to_string(),
            session_timeout_ms: spec.session_timeout_ms,
            rebalance_timeout_ms: spec.max_poll_interval_ms,
            member_id: self.member_id.clone(),
            group_instance_id: self.instance_id.clone(),
            protocol_type: PROTOCOL_TYPE.to_string(),
            protocols,
            reason: None,
        }
    }

    /// The heartbeat the consumer sends now.
    pub fn heartbeat_request(&self, group_id: &str) -> HeartbeatRequest {
        HeartbeatRequest {
            group_id: group_id.to_string(),
            generation_id: self.generation,
            member_id: self.member_id.clone(),
            group_instance_id: self.instance_id.clone(),
        }
    }

    /// Whether the heartbeat thread runs (Kafka's: not unjoined, no JoinGroup out).
    pub fn heartbeats(&self) -> bool {
        self.is_alive()
            && self.generation >= 0
            && !self.member_id.is_empty()
            && matches!(self.phase, Phase::AwaitingSync | Phase::Stable)
    }

    /// JoinGroup answer. `partitions_per_topic`: the leader's metadata.
    pub fn on_join(
        &mut self,
        resp: &JoinGroupResponse,
        group_id: &str,
        partitions_per_topic: &BTreeMap<String, i32>,
        retry_backoff_ms: i64,
    ) -> Next {
        self.pending = None;
        match resp.error_code {
            ErrorCode::NONE => {
                self.member_id = resp.member_id.clone();
                self.generation = resp.generation_id;
                self.protocol_name = resp.protocol_name.clone();
                self.leader_id = resp.leader.clone();
                if resp.generation_id < self.max_generation {
                    self.generation_regressions.push(format!(
                        "{} joined generation {} after {}",
                        self.name, resp.generation_id, self.max_generation
                    ));
                }
                self.max_generation = self.max_generation.max(resp.generation_id);
                self.phase = Phase::AwaitingSync;
                // A returning static leader skips the assignment but takes the current
                // metadata as its snapshot, as Kafka's `onLeaderElected` does.
                self.assignment_snapshot = self.is_leader().then(|| {
                    partitions_per_topic
                        .iter()
                        .map(|(t, n)| (t.clone(), *n))
                        .collect()
                });
                let assignments = if self.is_leader() && !resp.skip_assignment {
                    match self.lead(resp, partitions_per_topic) {
                        Ok(a) => a,
                        Err(e) => {
                            self.last_error = Some(format!("assignor: {e}"));
                            return Next::Stop;
                        }
                    }
                } else {
                    Vec::new()
                };
                Next::Sync(Box::new(SyncGroupRequest {
                    group_id: group_id.to_string(),
                    generation_id: self.generation,
                    member_id: self.member_id.clone(),
                    group_instance_id: self.instance_id.clone(),
                    protocol_type: Some(PROTOCOL_TYPE.to_string()),
                    protocol_name: self.protocol_name.clone(),
                    assignments,
                }))
            }
            ErrorCode::MEMBER_ID_REQUIRED => {
                self.member_id = resp.member_id.clone();
                self.phase = Phase::Unjoined;
                self.rejoin_needed = true;
                Next::Rejoin(0)
            }
            ErrorCode::UNKNOWN_MEMBER_ID => {
                self.reset_generation(true);
                Next::Rejoin(0)
            }
            ErrorCode::COORDINATOR_NOT_AVAILABLE
            | ErrorCode::NOT_COORDINATOR
            | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
            | ErrorCode::REBALANCE_IN_PROGRESS => {
                self.phase = Phase::Unjoined;
                self.rejoin_needed = true;
                Next::Rejoin(retry_backoff_ms)
            }
            other => {
                self.last_error = Some(format!("JoinGroup: {}", other.name()));
                Next::Stop
            }
        }
    }

    /// The leader's `onLeaderElected`: run the group's assignor over every member.
    fn lead(
        &self,
        resp: &JoinGroupResponse,
        partitions_per_topic: &BTreeMap<String, i32>,
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let name = resp.protocol_name.as_deref().unwrap_or_default();
        let assignor = ClientAssignor::from_name(name)
            .ok_or_else(|| format!("the group chose unknown assignor {name}"))?;
        let mut members = Vec::with_capacity(resp.members.len());
        for m in &resp.members {
            let mut s = decode_subscription(&m.metadata).map_err(|e| e.to_string())?;
            s.group_instance_id = m.group_instance_id.clone();
            members.push((m.member_id.clone(), s));
        }
        let out = assignor
            .assign(partitions_per_topic, &members)
            .map_err(|e| e.to_string())?;
        out.into_iter()
            .map(|(m, ps)| Ok((m, encode_assignment(&ps).map_err(|e| e.to_string())?)))
            .collect()
    }

    /// SyncGroup answer.
    pub fn on_sync(&mut self, resp: &SyncGroupResponse, retry_backoff_ms: i64) -> Next {
        self.pending = None;
        match resp.error_code {
            ErrorCode::NONE => {
                let assigned = match decode_assignment(&resp.assignment) {
                    Ok(a) => a,
                    Err(e) => {
                        self.last_error = Some(format!("assignment: {e}"));
                        return Next::Stop;
                    }
                };
                self.phase = Phase::Stable;
                self.rejoin_needed = false;
                let generation = self.generation;
                self.cooperative_generation = generation;
                self.sticky_memory = Some((assigned.clone(), generation));
                match self.protocol {
                    RebalanceProtocol::Eager => {
                        self.owned = assigned;
                        Next::Nothing
                    }
                    RebalanceProtocol::Cooperative => {
                        let revoked: Vec<TopicPartition> = self
                            .owned
                            .iter()
                            .filter(|tp| !assigned.contains(tp))
                            .cloned()
                            .collect();
                        self.owned = assigned;
                        if revoked.is_empty() {
                            Next::Nothing
                        } else {
                            // Revoked partitions must be released before their new owner gets
                            // them: rejoin at once (the second rebalance).
                            self.revoked_last = revoked;
                            self.request_rejoin();
                            Next::Rejoin(0)
                        }
                    }
                }
            }
            ErrorCode::REBALANCE_IN_PROGRESS => {
                self.phase = Phase::Unjoined;
                self.rejoin_needed = true;
                Next::Rejoin(0)
            }
            ErrorCode::UNKNOWN_MEMBER_ID | ErrorCode::ILLEGAL_GENERATION => {
                self.reset_generation(resp.error_code != ErrorCode::ILLEGAL_GENERATION);
                Next::Rejoin(0)
            }
            ErrorCode::COORDINATOR_NOT_AVAILABLE
            | ErrorCode::NOT_COORDINATOR
            | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS => {
                self.phase = Phase::Unjoined;
                self.rejoin_needed = true;
                Next::Rejoin(retry_backoff_ms)
            }
            other => {
                self.last_error = Some(format!("SyncGroup: {}", other.name()));
                Next::Stop
            }
        }
    }

    /// Heartbeat answer to a heartbeat sent for `sent` (generation, member id); answers for an
    /// older generation are ignored, as Kafka's `generationUnchanged` checks do.
    pub fn on_heartbeat(&mut self, code: ErrorCode, sent: (i32, &str)) -> Next {
        self.heartbeat_in_flight = None;
        if sent != (self.generation, self.member_id.as_str()) {
            return Next::Nothing;
        }
        match code {
            ErrorCode::NONE
            | ErrorCode::COORDINATOR_NOT_AVAILABLE
            | ErrorCode::NOT_COORDINATOR
            | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS => Next::Nothing,
            ErrorCode::REBALANCE_IN_PROGRESS => {
                if self.phase == Phase::Stable && !self.rejoin_needed {
                    self.request_rejoin();
                    Next::Rejoin(0)
                } else {
                    Next::Nothing
                }
            }
            ErrorCode::ILLEGAL_GENERATION | ErrorCode::UNKNOWN_MEMBER_ID => {
                // An answer to a JoinGroup / SyncGroup still out no longer counts.
                self.pending = None;
                self.reset_generation(code != ErrorCode::ILLEGAL_GENERATION);
                Next::Rejoin(0)
            }
            other => {
                self.last_error = Some(format!("Heartbeat: {}", other.name()));
                Next::Stop
            }
        }
    }
}
