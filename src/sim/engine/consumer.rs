//! The engine's KIP-848 side: simulated consumers ([`Kip848Consumer`]) sending
//! ConsumerGroupHeartbeat (v1) to the coordinator over the simulated network, with the same
//! faults as the other group types (crash, leave, network cut, loss, coordinator restart, stall).

use crate::assignor::consumer::TopicId;
use crate::coordinator::RequestContext;
use crate::error::ErrorCode;
use crate::protocol::consumer::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
use crate::types::Millis;

use super::super::SimError;
use super::super::api::*;
use super::super::client::ClientStatus;
use super::super::consumer_client::{Kip848Consumer, Next};
use super::{Ev, Simulation};

/// The ConsumerGroupHeartbeat version the simulated consumers send.
const CONSUMER_HEARTBEAT_VERSION: i16 = 1;

/// KIP-848 consumer events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ConsumerEv {
    Heartbeat {
        member: String,
        generation: u64,
    },
    Request {
        member: String,
        seq: u64,
        coord: u64,
        req: Box<ConsumerGroupHeartbeatRequest>,
    },
    Response {
        member: String,
        seq: u64,
        coord: u64,
        resp: Box<ConsumerGroupHeartbeatResponse>,
    },
    Timeout {
        member: String,
        seq: u64,
    },
    /// The poll loop is back after a stall: reconcile what waited, rejoin if it had left.
    StallEnd {
        member: String,
    },
    /// `max.poll.interval.ms` passed without a poll.
    PollTimeout {
        member: String,
    },
}

impl Simulation {
    pub(super) fn is_consumer(&self) -> bool {
        self.spec.group_type == GroupType::Consumer
    }

    pub(crate) fn kip848_consumers(&self) -> impl Iterator<Item = &Kip848Consumer> {
        self.kip848.values()
    }

    #[cfg(test)]
    pub(crate) fn kip848_mut(&mut self, name: &str) -> &mut Kip848Consumer {
        self.kip848.get_mut(name).expect("a consumer of that name")
    }

    /// The consumer group's state name (`Dead` when absent).
    pub(super) fn consumer_state(&self) -> String {
        self.coord
            .consumer_group(&self.spec.group_id)
            .map_or("Dead", |g| g.state().name())
            .to_string()
    }

    /// A (new) consumer for thread `thread` of a process; it joins right away.
    pub(super) fn new_kip848_incarnation(&mut self, process_id: &str, thread: u32) {
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
        if let Some(o) = self.kip848.get_mut(&old)
            && o.status == ClientStatus::Bouncing
        {
            o.status = ClientStatus::Left;
        }
        self.kip848.insert(Kip848Consumer::new(
            name.clone(),
            process_id,
            thread,
            instance_id,
        ));
        let j = self.jitter(50);
        self.schedule_kip848_heartbeat(&name, j);
    }

    fn schedule_kip848_heartbeat(&mut self, member: &str, delay: i64) {
        let at = self.now + delay;
        let Some(c) = self.kip848.get_mut(member) else {
            return;
        };
        c.hb_gen += 1;
        c.next_hb_ms = Some(at);
        let generation = c.hb_gen;
        self.schedule(
            at,
            Ev::Consumer(ConsumerEv::Heartbeat {
                member: member.to_string(),
                generation,
            }),
        );
    }

    pub(super) fn handle_consumer(&mut self, ev: ConsumerEv) {
        match ev {
            ConsumerEv::Heartbeat { member, generation } => {
                let ok = self.kip848.get(&member).is_some_and(|c| {
                    c.hb_gen == generation && c.is_alive() && c.in_flight.is_none()
                });
                if ok {
                    self.send_kip848_heartbeat(&member);
                }
            }
            ConsumerEv::Request {
                member,
                seq,
                coord,
                req,
            } => self.deliver_kip848_request(&member, seq, coord, *req),
            ConsumerEv::Response {
                member,
                seq,
                coord,
                resp,
            } => self.deliver_kip848_response(&member, seq, coord, *resp),
            ConsumerEv::Timeout { member, seq } => {
                let backoff = self.knobs.retry_backoff_ms;
                let Some(c) = self.kip848.get_mut(&member) else {
                    return;
                };
                if c.in_flight.is_some_and(|f| f.0 == seq) {
                    c.on_failure();
                    if c.is_alive() {
                        self.schedule_kip848_heartbeat(&member, backoff);
                    }
                }
            }
            ConsumerEv::PollTimeout { member } => {
                let now = self.now;
                let Some(c) = self.kip848.get_mut(&member) else {
                    return;
                };
                if !c.is_alive() || !c.stalled(now) || c.left_on_poll_timeout {
                    return;
                }
                // The background thread leaves; the member rejoins once the poll loop returns.
                c.left_on_poll_timeout = true;
                c.last_error = Some("max.poll.interval.ms exceeded".to_string());
                let epoch = c.leave_epoch();
                c.rejoin();
                c.hb_gen += 1;
                c.next_hb_ms = None;
                c.in_flight = None;
                self.send_kip848_leave(&member, epoch);
            }
            ConsumerEv::StallEnd { member } => {
                let now = self.now;
                let Some(c) = self.kip848.get_mut(&member) else {
                    return;
                };
                if !c.is_alive() || c.stalled(now) {
                    return;
                }
                c.stalled_until = None;
                let ack = if c.left_on_poll_timeout {
                    c.left_on_poll_timeout = false;
                    true
                } else {
                    c.pending_target.take().is_some_and(|t| c.reconcile(t))
                };
                if ack && c.in_flight.is_none() {
                    self.schedule_kip848_heartbeat(&member, 0);
                }
            }
        }
    }

    fn send_kip848_heartbeat(&mut self, member: &str) {
        let group_id = self.spec.group_id.clone();
        let subscription = self.classic_subscription();
        let rebalance_timeout = self.spec.classic.max_poll_interval_ms;
        let now = self.now;
        let Some(c) = self.kip848.get_mut(member) else {
            return;
        };
        if c.left_on_poll_timeout {
            return;
        }
        c.next_hb_ms = None;
        let req = c.heartbeat(&group_id, &subscription, rebalance_timeout);
        let seq = self.transmit_kip848(member, req);
        if let Some(c) = self.kip848.get_mut(member) {
            c.in_flight = Some((seq, now));
        }
        let at = now + self.knobs.request_timeout_ms;
        self.schedule(
            at,
            Ev::Consumer(ConsumerEv::Timeout {
                member: member.to_string(),
                seq,
            }),
        );
    }

    /// A leave heartbeat (-1, or -2 for a static member); no answer is awaited.
    fn send_kip848_leave(&mut self, member: &str, epoch: i32) {
        let Some(c) = self.kip848.get(member) else {
            return;
        };
        let req = ConsumerGroupHeartbeatRequest {
            group_id: self.spec.group_id.clone(),
            member_id: c.name.clone(),
            member_epoch: epoch,
            instance_id: c.instance_id.clone(),
            ..Default::default()
        };
        self.transmit_kip848(member, req);
    }

    fn transmit_kip848(&mut self, member: &str, req: ConsumerGroupHeartbeatRequest) -> u64 {
        let request = serde_json::to_value(&req).unwrap_or(serde_json::Value::Null);
        let cut = self.kip848.get(member).is_some_and(|c| c.net_cut);
        let api = ("ConsumerGroupHeartbeat", CONSUMER_HEARTBEAT_VERSION);
        let (seq, lost) = self.log_request(member, api, request, String::new(), None, cut);
        if !lost {
            let at = self.now + self.latency();
            let coord = self.coord_incarnation;
            self.schedule(
                at,
                Ev::Consumer(ConsumerEv::Request {
                    member: member.to_string(),
                    seq,
                    coord,
                    req: Box::new(req),
                }),
            );
        }
        seq
    }

    fn deliver_kip848_request(
        &mut self,
        member: &str,
        seq: u64,
        coord: u64,
        req: ConsumerGroupHeartbeatRequest,
    ) {
        let cut = self.kip848.get(member).is_some_and(|c| c.net_cut);
        if coord != self.coord_incarnation || cut {
            self.lose(member, seq, "lost_request");
            return;
        }
        let ctx = RequestContext {
            client_id: format!("consumer-{}", self.spec.group_id),
            client_host: "/127.0.0.1".to_string(),
            api_version: CONSUMER_HEARTBEAT_VERSION,
        };
        let o = self
            .coord
            .consumer_group_heartbeat(Millis(self.now), &ctx, &req);
        let resp = o.response;
        self.absorb(
            o.records,
            o.timers,
            o.topics_to_create,
            &format!("heartbeat {member}"),
        );
        let code = ErrorCode(resp.error_code);
        // A leave can find the instance id taken over (its earlier -2 leave was lost and the
        // new incarnation was let in by the session timeout): FENCED_INSTANCE_ID, as Kafka.
        let expected = matches!(
            code,
            ErrorCode::NONE
                | ErrorCode::FENCED_MEMBER_EPOCH
                | ErrorCode::UNKNOWN_MEMBER_ID
                | ErrorCode::UNRELEASED_INSTANCE_ID
        ) || (code == ErrorCode::FENCED_INSTANCE_ID && req.member_epoch < 0);
        if !expected {
            self.unexpected_errors
                .push(format!("t={} {member}: {}", self.now, code.name()));
        }
        let now = self.now;
        if let Some(e) = self.log_entry(seq) {
            e.received_ms = now;
            e.response = serde_json::to_value(&resp).ok();
            if code != ErrorCode::NONE {
                e.error = Some(code.name().to_string());
            }
        }
        if self.kip848.get(member).is_some_and(|c| c.net_cut) || self.lost_at_random() {
            self.lose(member, seq, "lost_response");
            return;
        }
        let at = self.now + self.latency();
        let coord = self.coord_incarnation;
        self.schedule(
            at,
            Ev::Consumer(ConsumerEv::Response {
                member: member.to_string(),
                seq,
                coord,
                resp: Box::new(resp),
            }),
        );
    }

    fn deliver_kip848_response(
        &mut self,
        member: &str,
        seq: u64,
        coord: u64,
        resp: ConsumerGroupHeartbeatResponse,
    ) {
        let cut = self.kip848.get(member).is_some_and(|c| c.net_cut);
        if coord != self.coord_incarnation || cut {
            self.lose(member, seq, "lost_response");
            return;
        }
        let err = (resp.error_code != 0).then(|| ErrorCode(resp.error_code).name().to_string());
        if let Some(e) = self.log_entry(seq) {
            e.fate = "delivered".to_string();
        }
        self.out.push(SimEvent::Heartbeat {
            seq,
            member_id: member.to_string(),
            at_ms: self.now,
            error: err,
        });
        let now = self.now;
        let topics: Vec<String> = self.topics.keys().cloned().collect();
        let name_of = |id: &TopicId| {
            topics
                .iter()
                .find(|t| TopicId::from_name(t) == *id)
                .cloned()
        };
        let Some(c) = self.kip848.get_mut(member) else {
            return;
        };
        if c.in_flight.is_none_or(|f| f.0 != seq) {
            return;
        }
        c.in_flight = None;
        if !c.is_alive() {
            return;
        }
        match c.on_response(&resp, &name_of, now) {
            Next::HeartbeatIn(d) => self.schedule_kip848_heartbeat(member, d),
            Next::Stop => {}
        }
    }

    /// KIP-848 actions; `Ok(false)` for actions the shared code handles.
    pub(super) fn apply_consumer(&mut self, action: &Action) -> Result<bool, SimError> {
        let member_of = |sim: &Simulation, name: &str| -> Result<String, SimError> {
            let id = sim
                .resolve_member(name)
                .filter(|id| sim.kip848.get(id).is_some())
                .ok_or_else(|| SimError::UnknownMember(name.to_string()))?;
            if sim.kip848.get(&id).is_some_and(|c| c.is_alive()) {
                Ok(id)
            } else {
                Err(SimError::InvalidAction(format!("{name} is not running")))
            }
        };
        let stop = |c: &mut Kip848Consumer, status: ClientStatus| {
            c.status = status;
            c.owned.clear();
            c.pending_target = None;
            c.in_flight = None;
            c.next_hb_ms = None;
            c.hb_gen += 1;
        };
        match action {
            Action::CrashMember { member } => {
                let id = member_of(self, member)?;
                stop(
                    self.kip848.get_mut(&id).expect("resolved"),
                    ClientStatus::Crashed,
                );
            }
            Action::LeaveMember { member } => {
                let id = member_of(self, member)?;
                let c = self.kip848.get_mut(&id).expect("resolved");
                let epoch = c.leave_epoch();
                stop(c, ClientStatus::Left);
                self.send_kip848_leave(&id, epoch);
            }
            Action::StaticBounce { member, down_ms } => {
                let id = member_of(self, member)?;
                let c = self.kip848.get_mut(&id).expect("resolved");
                if c.instance_id.is_none() {
                    return Err(SimError::InvalidAction(format!(
                        "{member} is not a static member"
                    )));
                }
                stop(c, ClientStatus::Bouncing);
                let (process_id, thread) = (c.process_id.clone(), c.thread);
                self.send_kip848_leave(&id, -2);
                let at = self.now + (*down_ms).max(0);
                self.schedule(at, Ev::Rejoin { process_id, thread });
            }
            Action::CutNetwork { member } | Action::HealNetwork { member } => {
                let id = self
                    .resolve_member(member)
                    .filter(|id| self.kip848.get(id).is_some())
                    .ok_or_else(|| SimError::UnknownMember(member.to_string()))?;
                let c = self.kip848.get_mut(&id).expect("resolved");
                c.net_cut = matches!(action, Action::CutNetwork { .. });
            }
            Action::RestartMember { member } => {
                let id = self
                    .resolve_member(member)
                    .filter(|id| self.kip848.get(id).is_some())
                    .ok_or_else(|| SimError::UnknownMember(member.to_string()))?;
                let c = self.kip848.get(&id).expect("resolved");
                if c.is_alive() || c.status == ClientStatus::Bouncing {
                    return Err(SimError::InvalidAction(format!("{member} is running")));
                }
                let (p, t) = (c.process_id.clone(), c.thread);
                let current = self
                    .processes
                    .get(&p)
                    .and_then(|pr| pr.threads.get(t as usize));
                if current.is_some_and(|n| self.kip848.get(n).is_some_and(|c| c.is_alive())) {
                    return Err(SimError::InvalidAction(format!(
                        "thread {p}-t{t} already runs a newer incarnation"
                    )));
                }
                self.new_kip848_incarnation(&p, t);
            }
            Action::StallMember { member, ms } => {
                if *ms < 0 {
                    return Err(SimError::InvalidAction("ms must be >= 0".to_string()));
                }
                let id = member_of(self, member)?;
                let now = self.now;
                let max_poll = self.spec.classic.max_poll_interval_ms as i64;
                let c = self.kip848.get_mut(&id).expect("resolved");
                let until = c.stalled_until.unwrap_or(0).max(now + ms);
                c.stalled_until = Some(until);
                if until - now > max_poll {
                    self.schedule(
                        now + max_poll,
                        Ev::Consumer(ConsumerEv::PollTimeout { member: id.clone() }),
                    );
                }
                self.schedule(until, Ev::Consumer(ConsumerEv::StallEnd { member: id }));
            }
            Action::AddPartitions { .. }
            | Action::CreateTopic { .. }
            | Action::AddMember { .. }
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

    /// Hash input of the consumers' client state.
    pub(super) fn kip848_hash_into(&self, s: &mut String) {
        use std::fmt::Write;
        for c in self.kip848.values() {
            let _ = write!(
                s,
                "{}:{:?}:{}:{}:{}:{:?}:{:?}:{:?}:{:?}:{}:{:?};",
                c.name,
                c.status,
                c.net_cut,
                c.epoch,
                c.heartbeat_interval_ms,
                c.owned,
                c.pending_target,
                c.in_flight,
                c.next_hb_ms,
                c.left_on_poll_timeout,
                c.stalled_until,
            );
        }
    }
}
