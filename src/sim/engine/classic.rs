//! The engine's classic side: simulated classic consumers ([`ClassicConsumer`]) talking
//! JoinGroup / SyncGroup / Heartbeat / LeaveGroup to the coordinator over the simulated network,
//! every message encoded to its real bytes and decoded again (`wire.rs`).
//!
//! JoinGroup and SyncGroup are deferred in the core: each request gets a [`RequestToken`], and
//! after every coordinator operation and timer the engine drains `take_completed` and sends each
//! answer back to the consumer whose token it names.

use crate::coordinator::RequestContext;
use crate::coordinator::classic::{ClassicReply, RequestToken};
use crate::error::ErrorCode;
use crate::protocol::classic::{LeaveGroupRequest, LeavingMember};
use crate::types::Millis;

use super::super::SimError;
use super::super::api::*;
use super::super::classic_client::{ClassicConsumer, Consumers, Next, Pending, Phase};
use super::super::client::ClientStatus;
use super::super::wire::{
    ClassicRequest, ClassicResponse, classic_request_roundtrip, classic_response_roundtrip,
};
use super::{Ev, Simulation};

/// Kafka's `JOIN_GROUP_TIMEOUT_LAPSE`: a JoinGroup waits up to the rebalance timeout + 5 s.
const JOIN_TIMEOUT_LAPSE_MS: i64 = 5_000;
/// Delay before the leader notices a metadata change (its next metadata refresh).
const METADATA_REFRESH_MS: i64 = 100;

/// Classic events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ClassicEv {
    /// The poll loop: send a queued SyncGroup, or (re)join if needed.
    Poll {
        member: String,
        generation: u64,
    },
    Heartbeat {
        member: String,
        generation: u64,
    },
    Request {
        member: String,
        seq: u64,
        coord: u64,
        req: Box<ClassicRequest>,
    },
    Response {
        member: String,
        seq: u64,
        coord: u64,
        /// (generation, member id) the request was sent with.
        sent: (i32, String),
        resp: Box<ClassicResponse>,
    },
    Timeout {
        member: String,
        seq: u64,
    },
    /// `max.poll.interval.ms` passed without a poll (a stall).
    PollTimeout {
        member: String,
    },
}

/// A deferred request the coordinator holds a token for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct TokenOwner {
    member: String,
    seq: u64,
    sent: (i32, String),
}

/// Classic state of the engine.
#[derive(Debug, Clone, Default)]
pub(super) struct ClassicWorld {
    pub consumers: Consumers,
    /// Deferred requests by token (a few at a time).
    tokens: Vec<(u64, TokenOwner)>,
    next_token: u64,
}

impl ClassicWorld {
    /// Deferred requests die with the coordinator.
    pub fn coordinator_restarted(&mut self) {
        self.tokens.clear();
        // A new coordinator resumes from the last generation written; generations a member
        // joined but that were never written come again (Kafka's behaviour on failover).
        for c in self.consumers.values_mut() {
            c.max_generation = -1;
        }
    }

    pub fn hash_into(&self, s: &mut String) {
        use std::fmt::Write;
        for c in self.consumers.values() {
            let _ = write!(
                s,
                "{}:{}:{}:{}:{}:{}:{}:{}:{}:{}:{}:{}:",
                c.name,
                c.status_name(),
                c.net_cut,
                c.member_id,
                c.generation,
                c.state_name(),
                c.rejoin_needed,
                c.pending.map_or(0, |p| p.seq),
                c.heartbeat_in_flight.unwrap_or(0),
                c.next_hb_ms.unwrap_or(-1),
                c.stalled_until.unwrap_or(-1),
                c.queued_sync.is_some(),
            );
            for (t, p) in &c.owned {
                let _ = write!(s, "{t}-{p},");
            }
            s.push(';');
        }
        s.push_str(&format!("|tokens={}", self.tokens.len()));
    }
}

impl Simulation {
    pub(super) fn is_classic(&self) -> bool {
        self.spec.group_type == GroupType::Classic
    }

    /// The topics every consumer subscribes to.
    pub(crate) fn classic_subscription(&self) -> Vec<String> {
        if self.spec.classic.subscription.is_empty() {
            self.spec.topics.keys().cloned().collect()
        } else {
            self.spec.classic.subscription.clone()
        }
    }

    /// Every subscribed partition that exists now.
    pub(crate) fn classic_partitions(&self) -> Vec<(String, i32)> {
        let mut out = Vec::new();
        for t in self.classic_subscription() {
            if let Some(n) = self.topics.get(&t) {
                out.extend((0..*n).map(|p| (t.clone(), p)));
            }
        }
        out
    }

    pub(crate) fn consumers(&self) -> impl Iterator<Item = &ClassicConsumer> {
        self.classic.consumers.values()
    }

    #[cfg(test)]
    pub(crate) fn consumers_mut(&mut self) -> impl Iterator<Item = &mut ClassicConsumer> {
        self.classic.consumers.values_mut()
    }

    /// Spec checks for classic groups.
    pub(super) fn validate_classic(spec: &ScenarioSpec) -> Result<(), SimError> {
        if spec.group_type != GroupType::Classic {
            return Ok(());
        }
        let c = &spec.classic;
        if c.assignors.is_empty() {
            return Err(SimError::InvalidSpec(
                "classic.assignors must name at least one assignor".to_string(),
            ));
        }
        for a in &c.assignors {
            if crate::assignor::client::ClientAssignor::from_name(a).is_none() {
                return Err(SimError::InvalidSpec(format!(
                    "unknown classic assignor {a} (range, roundrobin, sticky, cooperative-sticky)"
                )));
            }
        }
        if c.heartbeat_interval_ms < 1
            || c.session_timeout_ms < 1
            || c.max_poll_interval_ms < 1
            || c.heartbeat_interval_ms >= c.session_timeout_ms
        {
            return Err(SimError::InvalidSpec(
                "classic timeouts must be >= 1 ms and heartbeat.interval.ms < session.timeout.ms"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// A (new) consumer for thread `thread` of a process; it joins right away.
    pub(super) fn new_classic_incarnation(&mut self, process_id: &str, thread: u32) {
        let Some(p) = self.processes.get_mut(process_id) else {
            return;
        };
        let t = thread as usize;
        while p.threads.len() <= t {
            p.threads.push(String::new());
            p.incarnations.push(0);
        }
        p.incarnations[t] += 1;
        let name = format!("{process_id}-t{thread}-{}", p.incarnations[t]);
        let old = std::mem::replace(&mut p.threads[t], name.clone());
        let instance_id = p
            .spec
            .static_members
            .then(|| format!("{process_id}-{thread}"));
        if let Some(o) = self.classic.consumers.get_mut(&old)
            && o.status == ClientStatus::Bouncing
        {
            o.status = ClientStatus::Left;
        }
        let c = ClassicConsumer::new(
            name.clone(),
            process_id,
            thread,
            instance_id,
            &self.spec.classic,
        );
        self.classic.consumers.insert(c);
        let j = self.jitter(50);
        self.schedule_poll(&name, j);
    }

    fn schedule_poll(&mut self, member: &str, delay: i64) {
        let now = self.now;
        let Some(c) = self.classic.consumers.get_mut(member) else {
            return;
        };
        c.poll_gen += 1;
        let at = (now + delay).max(c.stalled_until.unwrap_or(0));
        let generation = c.poll_gen;
        self.schedule(
            at,
            Ev::Classic(ClassicEv::Poll {
                member: member.to_string(),
                generation,
            }),
        );
    }

    /// Starts the heartbeat loop if it is not running.
    fn ensure_heartbeats(&mut self, member: &str) {
        let interval = self.spec.classic.heartbeat_interval_ms as i64;
        let now = self.now;
        let Some(c) = self.classic.consumers.get_mut(member) else {
            return;
        };
        if c.next_hb_ms.is_some() || !c.heartbeats() {
            return;
        }
        c.hb_gen += 1;
        c.next_hb_ms = Some(now + interval);
        let generation = c.hb_gen;
        self.schedule(
            now + interval,
            Ev::Classic(ClassicEv::Heartbeat {
                member: member.to_string(),
                generation,
            }),
        );
    }

    pub(super) fn handle_classic(&mut self, ev: ClassicEv) {
        match ev {
            ClassicEv::Poll { member, generation } => self.poll(&member, generation),
            ClassicEv::Heartbeat { member, generation } => {
                let ok = self
                    .classic
                    .consumers
                    .get(&member)
                    .is_some_and(|c| c.hb_gen == generation && c.is_alive());
                if !ok {
                    return;
                }
                if let Some(c) = self.classic.consumers.get_mut(&member) {
                    c.next_hb_ms = None;
                }
                self.check_leader_metadata(&member, 0);
                let send = self
                    .classic
                    .consumers
                    .get(&member)
                    .is_some_and(|c| c.heartbeats() && c.heartbeat_in_flight.is_none());
                if send {
                    let c = &self.classic.consumers.get(&member).expect("exists");
                    let req = ClassicRequest::Heartbeat(c.heartbeat_request(&self.spec.group_id));
                    let seq = self.transmit_classic(&member, req);
                    if let Some(c) = self.classic.consumers.get_mut(&member) {
                        c.heartbeat_in_flight = Some(seq);
                    }
                    let at = self.now + self.knobs.request_timeout_ms;
                    self.schedule(
                        at,
                        Ev::Classic(ClassicEv::Timeout {
                            member: member.clone(),
                            seq,
                        }),
                    );
                }
                self.ensure_heartbeats(&member);
            }
            ClassicEv::Request {
                member,
                seq,
                coord,
                req,
            } => self.deliver_classic_request(&member, seq, coord, *req),
            ClassicEv::Response {
                member,
                seq,
                coord,
                sent,
                resp,
            } => self.deliver_classic_response(&member, seq, coord, sent, *resp),
            ClassicEv::Timeout { member, seq } => {
                let backoff = self.knobs.retry_backoff_ms;
                let Some(c) = self.classic.consumers.get_mut(&member) else {
                    return;
                };
                if c.heartbeat_in_flight == Some(seq) {
                    c.heartbeat_in_flight = None;
                } else if c.pending.is_some_and(|p| p.seq == seq) && c.is_alive() {
                    // A JoinGroup or SyncGroup without an answer: join again.
                    c.pending = None;
                    c.phase = Phase::Unjoined;
                    c.rejoin_needed = true;
                    c.last_error = Some("request timed out".to_string());
                    self.schedule_poll(&member, backoff);
                }
            }
            ClassicEv::PollTimeout { member } => {
                let now = self.now;
                let Some(c) = self.classic.consumers.get(&member) else {
                    return;
                };
                let stalled = c.stalled_until.is_some_and(|u| u > now);
                if !c.is_alive() || !stalled {
                    return;
                }
                // `handlePollTimeoutExpiry`: a dynamic member leaves; both reset their membership.
                if c.instance_id.is_none() && !c.member_id.is_empty() && c.phase != Phase::Unjoined
                {
                    self.send_leave(&member, "consumer poll timeout has expired.");
                }
                if let Some(c) = self.classic.consumers.get_mut(&member) {
                    c.reset_generation(true);
                    c.pending = None;
                    c.hb_gen += 1;
                    c.next_hb_ms = None;
                }
            }
        }
    }

    /// The poll loop: a queued SyncGroup goes first; else a consumer that must (re)join runs
    /// `onJoinPrepare` and sends JoinGroup.
    fn poll(&mut self, member: &str, generation: u64) {
        let now = self.now;
        let subscription = self.classic_subscription();
        let group_id = self.spec.group_id.clone();
        let Some(c) = self.classic.consumers.get_mut(member) else {
            return;
        };
        if c.poll_gen != generation || !c.is_alive() {
            return;
        }
        if let Some(until) = c.stalled_until.filter(|u| *u > now) {
            let at = until;
            self.schedule(
                at,
                Ev::Classic(ClassicEv::Poll {
                    member: member.to_string(),
                    generation,
                }),
            );
            return;
        }
        if let Some(sync) = c.queued_sync.take() {
            self.send_pending(member, ClassicRequest::Sync(*sync), false);
            return;
        }
        if !(c.rejoin_needed || c.phase == Phase::Unjoined) || c.pending.is_some() {
            return;
        }
        c.prepare_join(&subscription);
        c.joining();
        let req = c.join_request(&group_id, &self.spec.classic, &subscription);
        self.send_pending(member, ClassicRequest::Join(req), true);
    }

    /// Sends a JoinGroup or SyncGroup and arms its client-side timeout.
    fn send_pending(&mut self, member: &str, req: ClassicRequest, join: bool) {
        let seq = self.transmit_classic(member, req);
        let now = self.now;
        let timeout = if join {
            self.spec.classic.max_poll_interval_ms as i64 + JOIN_TIMEOUT_LAPSE_MS
        } else {
            self.knobs.request_timeout_ms
        };
        if let Some(c) = self.classic.consumers.get_mut(member) {
            c.pending = Some(Pending { seq, sent_ms: now });
        }
        self.schedule(
            now + timeout.max(self.knobs.request_timeout_ms),
            Ev::Classic(ClassicEv::Timeout {
                member: member.to_string(),
                seq,
            }),
        );
    }

    /// A dynamic member's LeaveGroup (no answer expected by the consumer).
    fn send_leave(&mut self, member: &str, reason: &str) {
        let Some(c) = self.classic.consumers.get(member) else {
            return;
        };
        let req = ClassicRequest::Leave(LeaveGroupRequest {
            group_id: self.spec.group_id.clone(),
            members: vec![LeavingMember {
                member_id: c.member_id.clone(),
                group_instance_id: c.instance_id.clone(),
                reason: Some(reason.to_string()),
            }],
        });
        self.transmit_classic(member, req);
    }

    /// Puts a classic request on the network; returns its sequence number.
    fn transmit_classic(&mut self, member: &str, req: ClassicRequest) -> u64 {
        let api = req.api();
        let request = serde_json::to_value(&req).unwrap_or(serde_json::Value::Null);
        let (hex, decoded, codec_err) = classic_request_roundtrip(req);
        let cut = self
            .classic
            .consumers
            .get(member)
            .is_some_and(|c| c.net_cut);
        let (seq, lost) = self.log_request(member, api, request, hex, codec_err, cut);
        if !lost {
            let at = self.now + self.latency();
            let coord = self.coord_incarnation;
            self.schedule(
                at,
                Ev::Classic(ClassicEv::Request {
                    member: member.to_string(),
                    seq,
                    coord,
                    req: Box::new(decoded),
                }),
            );
        }
        seq
    }

    fn deliver_classic_request(&mut self, member: &str, seq: u64, coord: u64, req: ClassicRequest) {
        let cut = self
            .classic
            .consumers
            .get(member)
            .is_some_and(|c| c.net_cut);
        if coord != self.coord_incarnation || cut {
            self.lose(member, seq, "lost_request");
            return;
        }
        let now = Millis(self.now);
        let ctx = RequestContext {
            client_id: format!("consumer-{}", self.spec.group_id),
            client_host: "/127.0.0.1".to_string(),
            api_version: req.api().1,
        };
        let sent = match &req {
            ClassicRequest::Join(r) => (-1, r.member_id.clone()),
            ClassicRequest::Sync(r) => (r.generation_id, r.member_id.clone()),
            ClassicRequest::Heartbeat(r) => (r.generation_id, r.member_id.clone()),
            ClassicRequest::Leave(_) => (-1, String::new()),
        };
        match req {
            ClassicRequest::Join(r) => {
                let token = self.issue_token(member, seq, sent);
                let o = self.coord.classic_join(now, &ctx, &r, token);
                self.absorb(
                    o.records,
                    o.timers,
                    o.topics_to_create,
                    &format!("join {member}"),
                );
            }
            ClassicRequest::Sync(r) => {
                let token = self.issue_token(member, seq, sent);
                let o = self.coord.classic_sync(now, &r, token);
                self.absorb(
                    o.records,
                    o.timers,
                    o.topics_to_create,
                    &format!("sync {member}"),
                );
            }
            ClassicRequest::Heartbeat(r) => {
                let o = self.coord.classic_heartbeat(now, &r);
                let code = o.response;
                self.absorb(
                    o.records,
                    o.timers,
                    o.topics_to_create,
                    &format!("heartbeat {member}"),
                );
                self.respond_classic(
                    member,
                    seq,
                    sent,
                    ClassicResponse::Heartbeat { error_code: code },
                );
            }
            ClassicRequest::Leave(r) => {
                let o = self.coord.classic_leave(now, &r);
                let resp = o.response;
                self.absorb(
                    o.records,
                    o.timers,
                    o.topics_to_create,
                    &format!("leave {member}"),
                );
                self.respond_classic(member, seq, sent, ClassicResponse::Leave(resp));
            }
        }
        self.drain_completed();
    }

    fn issue_token(&mut self, member: &str, seq: u64, sent: (i32, String)) -> RequestToken {
        self.classic.next_token += 1;
        let t = self.classic.next_token;
        self.classic.tokens.push((
            t,
            TokenOwner {
                member: member.to_string(),
                seq,
                sent,
            },
        ));
        RequestToken(t)
    }

    /// Sends every JoinGroup / SyncGroup answer the coordinator completed.
    pub(super) fn drain_completed(&mut self) {
        for done in self.coord.take_completed() {
            let Some(k) = self.classic.tokens.iter().position(|t| t.0 == done.token.0) else {
                continue;
            };
            let owner = self.classic.tokens.remove(k).1;
            let resp = match done.reply {
                ClassicReply::Join(r) => ClassicResponse::Join(r),
                ClassicReply::Sync(r) => ClassicResponse::Sync(r),
            };
            self.respond_classic(&owner.member, owner.seq, owner.sent, resp);
        }
    }

    fn respond_classic(
        &mut self,
        member: &str,
        seq: u64,
        sent: (i32, String),
        resp: ClassicResponse,
    ) {
        let code = resp.error_code();
        let expected = matches!(
            code,
            ErrorCode::NONE
                | ErrorCode::MEMBER_ID_REQUIRED
                | ErrorCode::UNKNOWN_MEMBER_ID
                | ErrorCode::ILLEGAL_GENERATION
                | ErrorCode::REBALANCE_IN_PROGRESS
                | ErrorCode::FENCED_INSTANCE_ID
                | ErrorCode::COORDINATOR_NOT_AVAILABLE
                | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
        );
        if !expected {
            self.unexpected_errors
                .push(format!("t={} {member}: {}", self.now, code.name()));
        }
        let json = serde_json::to_value(&resp).ok();
        let (hex, decoded, codec_err) = classic_response_roundtrip(resp);
        if let Some(e) = &codec_err {
            self.unexpected_errors
                .push(format!("t={} {member} response codec: {e}", self.now));
        }
        let now = self.now;
        let cut = self
            .classic
            .consumers
            .get(member)
            .is_some_and(|c| c.net_cut)
            || self.lost_at_random();
        let leave_errors: Vec<String> = match &decoded {
            ClassicResponse::Leave(l) => l
                .members
                .iter()
                .filter(|m| m.error_code != ErrorCode::NONE)
                .map(|m| m.error_code.name().to_string())
                .collect(),
            _ => Vec::new(),
        };
        if let Some(e) = self.log_entry(seq) {
            e.received_ms = now;
            e.response = json;
            e.response_hex = Some(hex);
            if code != ErrorCode::NONE {
                e.error = Some(code.name().to_string());
            } else if !leave_errors.is_empty() {
                e.error = Some(leave_errors.join(", "));
            }
            if let Some(c) = codec_err {
                e.error = Some(format!("response codec: {c}"));
            }
        }
        if cut {
            self.lose(member, seq, "lost_response");
            return;
        }
        let at = now + self.latency();
        let coord = self.coord_incarnation;
        self.schedule(
            at,
            Ev::Classic(ClassicEv::Response {
                member: member.to_string(),
                seq,
                coord,
                sent,
                resp: Box::new(decoded),
            }),
        );
    }

    fn deliver_classic_response(
        &mut self,
        member: &str,
        seq: u64,
        coord: u64,
        sent: (i32, String),
        resp: ClassicResponse,
    ) {
        let cut = self
            .classic
            .consumers
            .get(member)
            .is_some_and(|c| c.net_cut);
        if coord != self.coord_incarnation || cut {
            self.lose(member, seq, "lost_response");
            return;
        }
        let code = resp.error_code();
        if let Some(e) = self.log_entry(seq) {
            e.fate = "delivered".to_string();
        }
        self.out.push(SimEvent::Heartbeat {
            seq,
            member_id: member.to_string(),
            at_ms: self.now,
            error: (code != ErrorCode::NONE).then(|| code.name().to_string()),
        });
        let group_id = self.spec.group_id.clone();
        let backoff = self.knobs.retry_backoff_ms;
        let topics = self.topics.clone();
        let Some(c) = self.classic.consumers.get_mut(member) else {
            return;
        };
        if !c.is_alive() {
            return;
        }
        let next = match resp {
            ClassicResponse::Join(r) => {
                if c.pending.is_none_or(|p| p.seq != seq) {
                    return;
                }
                c.on_join(&r, &group_id, &topics, backoff)
            }
            ClassicResponse::Sync(r) => {
                if c.pending.is_none_or(|p| p.seq != seq) {
                    return;
                }
                c.on_sync(&r, backoff)
            }
            ClassicResponse::Heartbeat { error_code } => {
                if c.heartbeat_in_flight != Some(seq) {
                    return;
                }
                c.on_heartbeat(error_code, (sent.0, sent.1.as_str()))
            }
            ClassicResponse::Leave(_) => Next::Nothing,
        };
        self.classic_next(member, next);
    }

    fn classic_next(&mut self, member: &str, next: Next) {
        match next {
            Next::Nothing => {}
            Next::Rejoin(delay) => self.schedule_poll(member, delay),
            Next::Sync(req) => {
                let stalled = self
                    .classic
                    .consumers
                    .get(member)
                    .and_then(|c| c.stalled_until)
                    .is_some_and(|u| u > self.now);
                if stalled {
                    // The answer is handled in poll(): the SyncGroup waits for the stall.
                    if let Some(c) = self.classic.consumers.get_mut(member) {
                        c.queued_sync = Some(req);
                    }
                    self.schedule_poll(member, 0);
                } else {
                    self.send_pending(member, ClassicRequest::Sync(*req), false);
                }
            }
            Next::Stop => {
                if let Some(c) = self.classic.consumers.get_mut(member) {
                    c.stop(ClientStatus::Stopped);
                }
            }
        }
        self.ensure_heartbeats(member);
    }

    /// Classic actions; `Ok(false)` for actions the shared code handles.
    pub(super) fn apply_classic(&mut self, action: &Action) -> Result<bool, SimError> {
        let running = |c: &ClassicConsumer, name: &str| {
            if c.is_alive() {
                Ok(())
            } else {
                Err(SimError::InvalidAction(format!("{name} is not running")))
            }
        };
        match action {
            Action::CrashMember { member } => {
                let id = self.classic_member(member)?;
                let c = self.classic.consumers.get_mut(&id).expect("resolved");
                running(c, member)?;
                c.stop(ClientStatus::Crashed);
            }
            Action::LeaveMember { member } => {
                let id = self.classic_member(member)?;
                let c = &self.classic.consumers.get(&id).expect("resolved");
                running(c, member)?;
                // `close()`: only a dynamic member sends LeaveGroup (Kafka's default).
                if c.instance_id.is_none() && !c.member_id.is_empty() {
                    self.send_leave(&id, "the consumer is being closed");
                }
                if let Some(c) = self.classic.consumers.get_mut(&id) {
                    c.stop(ClientStatus::Left);
                }
            }
            Action::StaticBounce { member, down_ms } => {
                let id = self.classic_member(member)?;
                let c = self.classic.consumers.get_mut(&id).expect("resolved");
                if c.instance_id.is_none() {
                    return Err(SimError::InvalidAction(format!(
                        "{member} is not a static member"
                    )));
                }
                running(c, member)?;
                c.stop(ClientStatus::Bouncing);
                let (process_id, thread) = (c.process_id.clone(), c.thread);
                let at = self.now + (*down_ms).max(0);
                self.schedule(at, Ev::Rejoin { process_id, thread });
            }
            Action::CutNetwork { member } | Action::HealNetwork { member } => {
                let id = self.classic_member(member)?;
                let c = self.classic.consumers.get_mut(&id).expect("resolved");
                c.net_cut = matches!(action, Action::CutNetwork { .. });
            }
            Action::RestartMember { member } => {
                let id = self.classic_member(member)?;
                let c = &self.classic.consumers.get(&id).expect("resolved");
                if c.is_alive() || c.status == ClientStatus::Bouncing {
                    return Err(SimError::InvalidAction(format!("{member} is running")));
                }
                let (p, t) = (c.process_id.clone(), c.thread);
                let current = self
                    .processes
                    .get(&p)
                    .and_then(|pr| pr.threads.get(t as usize));
                if current
                    .is_some_and(|n| self.classic.consumers.get(n).is_some_and(|c| c.is_alive()))
                {
                    return Err(SimError::InvalidAction(format!(
                        "thread {p}-t{t} already runs a newer incarnation"
                    )));
                }
                self.new_classic_incarnation(&p, t);
            }
            Action::StallMember { member, ms } => {
                if *ms < 0 {
                    return Err(SimError::InvalidAction("ms must be >= 0".to_string()));
                }
                let id = self.classic_member(member)?;
                let now = self.now;
                let max_poll = self.spec.classic.max_poll_interval_ms as i64;
                let c = self.classic.consumers.get_mut(&id).expect("resolved");
                running(c, member)?;
                let until = now + ms;
                c.stalled_until = Some(c.stalled_until.unwrap_or(0).max(until));
                let generation = c.poll_gen;
                if *ms > max_poll {
                    self.schedule(
                        now + max_poll,
                        Ev::Classic(ClassicEv::PollTimeout { member: id.clone() }),
                    );
                }
                // The poll after the stall (rejoins if anything asked for it meanwhile).
                self.schedule(
                    until,
                    Ev::Classic(ClassicEv::Poll {
                        member: id,
                        generation,
                    }),
                );
            }
            Action::AddPartitions { .. } | Action::CreateTopic { .. } => return Ok(false),
            Action::AddMember { .. }
            | Action::AddProcess { .. }
            | Action::RestartCoordinator
            | Action::SetMessageLoss { .. } => return Ok(false),
            Action::BumpTopologyEpoch
            | Action::RequestShutdown { .. }
            | Action::SetStandbyReplicas { .. }
            | Action::SetAssignor { .. } => {
                return Err(SimError::InvalidAction(
                    "this action applies to streams groups only".to_string(),
                ));
            }
        }
        Ok(true)
    }

    /// After a metadata change the leader's next poll sees a new metadata snapshot and rejoins
    /// (`ConsumerCoordinator.rejoinNeededOrPending`).
    pub(super) fn classic_metadata_changed(&mut self) {
        let leaders: Vec<String> = self
            .classic
            .consumers
            .values()
            .filter(|c| c.assignment_snapshot.is_some())
            .map(|c| c.name.clone())
            .collect();
        for l in leaders {
            self.check_leader_metadata(&l, METADATA_REFRESH_MS);
        }
    }

    /// A stable leader whose metadata moved since it assigned rejoins.
    fn check_leader_metadata(&mut self, member: &str, delay: i64) {
        let subscription = self.classic_subscription();
        let subscribed = |v: &mut dyn Iterator<Item = (&String, &i32)>| -> Vec<(String, i32)> {
            v.filter(|(t, n)| subscription.contains(t) && **n > 0)
                .map(|(t, n)| (t.clone(), *n))
                .collect()
        };
        let current = subscribed(&mut self.topics.iter());
        let Some(c) = self.classic.consumers.get_mut(member) else {
            return;
        };
        let moved = c
            .assignment_snapshot
            .as_ref()
            .is_some_and(|s| subscribed(&mut s.iter().map(|(t, n)| (t, n))) != current);
        if moved && c.is_alive() && c.phase == Phase::Stable && !c.rejoin_needed {
            c.request_rejoin();
            self.schedule_poll(member, delay);
        }
    }

    fn classic_member(&self, name: &str) -> Result<String, SimError> {
        self.resolve_member(name)
            .filter(|id| self.classic.consumers.contains_key(id))
            .ok_or_else(|| SimError::UnknownMember(name.to_string()))
    }

    /// The classic group's state name (`Dead` when absent).
    pub(super) fn classic_state(&self) -> String {
        self.coord
            .classic_group(&self.spec.group_id)
            .map_or("Dead", |g| g.state.name())
            .to_string()
    }
}
