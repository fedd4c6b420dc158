//! A simulated KIP-848 consumer: the Java `AsyncKafkaConsumer`'s membership manager (Kafka 4.4,
//! `group.protocol=consumer`) reduced to what it sends and how it reacts to each answer
//! (docs/consumer-protocol.md §K3-§K5). The engine (`engine/consumer.rs`) moves the messages
//! and runs the clock.
//!
//! * Join: epoch 0, the member id the client generated, the subscription, the rebalance timeout
//!   (`max.poll.interval.ms`), and an empty owned-partitions list.
//! * Heartbeat every `HeartbeatIntervalMs` of the last response; at most one in flight. Fields
//!   that did not change since the last answered heartbeat are sent as null; after a failure
//!   everything is sent again (which makes the coordinator send the whole assignment again).
//! * Reconciliation: an assignment in a response is the member's new target. The client first
//!   revokes what it owns and is no longer listed, then takes what is new, then acknowledges
//!   with a heartbeat right away carrying what it owns. Revocation runs the application's
//!   callbacks on the poll thread: while the poll loop stalls the reconciliation waits.
//! * `FENCED_MEMBER_EPOCH` / `UNKNOWN_MEMBER_ID`: every partition is lost, rejoin with epoch 0.
//! * A poll loop stalled longer than `max.poll.interval.ms`: the background thread leaves the
//!   group (epoch -1, static members -2) and the member rejoins when the poll loop returns.
//! * Close: leave with -1 (dynamic) or -2 (static).

use crate::assignor::consumer::TopicId;
use crate::error::ErrorCode;
use crate::protocol::consumer::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, TopicIdPartitions,
};

use super::client::ClientStatus;

/// A partition by topic name.
pub(crate) type Partition = (String, i32);

/// What the engine does next for a consumer after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Heartbeat after this many ms (0 = right away, the reconciliation's acknowledgement).
    HeartbeatIn(i64),
    /// A fatal error: the consumer stops.
    Stop,
}

/// One simulated KIP-848 consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kip848Consumer {
    /// The simulation's name `<process>-t<thread>-<incarnation>`, also the member id it sends.
    pub name: String,
    pub process_id: String,
    pub thread: u32,
    pub instance_id: Option<String>,
    pub status: ClientStatus,
    pub net_cut: bool,
    /// The member id the coordinator answered with (`""` before the first answer).
    pub member_id: String,
    /// 0 while (re)joining.
    pub epoch: i32,
    /// Highest epoch this incarnation was given (epochs never go down but to 0 on a rejoin).
    pub max_epoch: i32,
    pub epoch_regressions: Vec<String>,
    /// Partitions consumed now.
    pub owned: Vec<Partition>,
    /// A target the poll loop has not reconciled yet (stalled).
    pub pending_target: Option<Vec<Partition>>,
    pub revoked_last: Vec<Partition>,
    /// Owned partitions as last acknowledged (`None` = send them with the next heartbeat).
    pub last_sent_owned: Option<Vec<Partition>>,
    /// Send every field with the next heartbeat (join, or after a failure).
    pub send_full: bool,
    pub in_flight: Option<(u64, i64)>,
    pub hb_gen: u64,
    pub next_hb_ms: Option<i64>,
    pub heartbeat_interval_ms: i64,
    pub stalled_until: Option<i64>,
    /// Left after a poll timeout; rejoins when the stall ends.
    pub left_on_poll_timeout: bool,
    pub last_error: Option<String>,
}

/// The consumers, in creation order (a `Vec`, as for classic consumers: small in wasm).
#[derive(Debug, Clone, Default)]
pub(crate) struct Kip848Consumers(Vec<Kip848Consumer>);

impl Kip848Consumers {
    pub fn get(&self, name: &str) -> Option<&Kip848Consumer> {
        self.0.iter().find(|c| c.name == name)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Kip848Consumer> {
        self.0.iter_mut().find(|c| c.name == name)
    }

    pub fn insert(&mut self, c: Kip848Consumer) {
        self.0.push(c);
    }

    pub fn values(&self) -> std::slice::Iter<'_, Kip848Consumer> {
        self.0.iter()
    }
}

/// Partitions by topic id, as the wire carries them.
pub(crate) fn to_wire(parts: &[Partition]) -> Vec<TopicIdPartitions> {
    let mut out: Vec<TopicIdPartitions> = Vec::new();
    for (t, p) in parts {
        let id = TopicId::from_name(t);
        match out.iter_mut().find(|x| x.topic_id == id) {
            Some(x) => x.partitions.push(*p),
            None => out.push(TopicIdPartitions {
                topic_id: id,
                partitions: vec![*p],
            }),
        }
    }
    out
}

impl Kip848Consumer {
    pub fn new(
        name: String,
        process_id: &str,
        thread: u32,
        instance_id: Option<String>,
    ) -> Kip848Consumer {
        Kip848Consumer {
            name,
            process_id: process_id.to_string(),
            thread,
            instance_id,
            status: ClientStatus::Alive,
            net_cut: false,
            member_id: String::new(),
            epoch: 0,
            max_epoch: 0,
            epoch_regressions: Vec::new(),
            owned: Vec::new(),
            pending_target: None,
            revoked_last: Vec::new(),
            last_sent_owned: None,
            send_full: true,
            in_flight: None,
            hb_gen: 0,
            next_hb_ms: None,
            heartbeat_interval_ms: 5_000,
            stalled_until: None,
            left_on_poll_timeout: false,
            last_error: None,
        }
    }

    pub fn is_alive(&self) -> bool {
        self.status == ClientStatus::Alive
    }

    pub fn stalled(&self, now: i64) -> bool {
        self.stalled_until.is_some_and(|u| u > now)
    }

    /// The epoch a leave sends: -2 keeps a static member's assignment for its return.
    pub fn leave_epoch(&self) -> i32 {
        if self.instance_id.is_some() { -2 } else { -1 }
    }

    /// Loses every partition and rejoins with epoch 0 on the next heartbeat.
    pub fn rejoin(&mut self) {
        self.owned.clear();
        self.pending_target = None;
        self.epoch = 0;
        self.max_epoch = 0;
        self.last_sent_owned = None;
        self.send_full = true;
    }

    /// The next heartbeat (a join when the epoch is 0).
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        subscription: &[String],
        rebalance_timeout_ms: i32,
    ) -> ConsumerGroupHeartbeatRequest {
        let full = self.send_full || self.epoch == 0;
        let mut req = ConsumerGroupHeartbeatRequest {
            group_id: group_id.to_string(),
            member_id: self.name.clone(),
            member_epoch: self.epoch,
            instance_id: self.instance_id.clone(),
            ..Default::default()
        };
        if full {
            req.rebalance_timeout_ms = rebalance_timeout_ms;
            req.subscribed_topic_names = Some(subscription.to_vec());
        }
        if full || self.last_sent_owned.as_ref() != Some(&self.owned) {
            req.topic_partitions = Some(to_wire(&self.owned));
            self.last_sent_owned = Some(self.owned.clone());
        }
        self.send_full = false;
        req
    }

    /// The heartbeat failed without an answer (lost, or timed out).
    pub fn on_failure(&mut self) {
        self.in_flight = None;
        self.send_full = true;
        self.last_sent_owned = None;
    }

    /// Reconciles to `target`: revoke, then assign. Returns whether anything changed.
    pub fn reconcile(&mut self, target: Vec<Partition>) -> bool {
        let revoked: Vec<Partition> = self
            .owned
            .iter()
            .filter(|p| !target.contains(p))
            .cloned()
            .collect();
        let changed = !revoked.is_empty() || target.iter().any(|p| !self.owned.contains(p));
        if !revoked.is_empty() {
            self.revoked_last = revoked;
        }
        self.owned = target;
        changed
    }

    /// Reacts to an answered heartbeat (the in-flight entry was already taken).
    pub fn on_response(
        &mut self,
        resp: &ConsumerGroupHeartbeatResponse,
        name_of: &dyn Fn(&TopicId) -> Option<String>,
        now: i64,
    ) -> Next {
        let code = ErrorCode(resp.error_code);
        if code != ErrorCode::NONE {
            let mut e = code.name().to_string();
            if let Some(m) = &resp.error_message {
                e.push_str(": ");
                e.push_str(m);
            }
            self.last_error = Some(e);
            return match code {
                ErrorCode::FENCED_MEMBER_EPOCH | ErrorCode::UNKNOWN_MEMBER_ID => {
                    self.rejoin();
                    Next::HeartbeatIn(0)
                }
                ErrorCode::UNRELEASED_INSTANCE_ID
                | ErrorCode::COORDINATOR_NOT_AVAILABLE
                | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
                | ErrorCode::NOT_COORDINATOR => {
                    self.send_full = true;
                    Next::HeartbeatIn(self.heartbeat_interval_ms.min(1000))
                }
                _ => {
                    self.owned.clear();
                    self.status = ClientStatus::Stopped;
                    Next::Stop
                }
            };
        }
        self.last_error = None;
        if let Some(id) = &resp.member_id {
            self.member_id = id.clone();
        }
        if resp.member_epoch < self.max_epoch {
            self.epoch_regressions.push(format!(
                "t={now} {}: epoch {} after {}",
                self.name, resp.member_epoch, self.max_epoch
            ));
        }
        self.epoch = resp.member_epoch;
        self.max_epoch = self.max_epoch.max(resp.member_epoch);
        if resp.heartbeat_interval_ms > 0 {
            self.heartbeat_interval_ms = resp.heartbeat_interval_ms as i64;
        }
        if let Some(a) = &resp.assignment {
            let mut target: Vec<Partition> = Vec::new();
            for t in a {
                if let Some(name) = name_of(&t.topic_id) {
                    target.extend(t.partitions.iter().map(|p| (name.clone(), *p)));
                }
            }
            target.sort();
            if self.stalled(now) {
                self.pending_target = Some(target);
            } else if self.reconcile(target) {
                return Next::HeartbeatIn(0);
            }
        }
        Next::HeartbeatIn(self.heartbeat_interval_ms)
    }

    /// Display name of the client's life cycle status.
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
}
