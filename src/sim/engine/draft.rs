//! The draft dialect's client side (docs/draft-dialect.md): heartbeats carry a topology id
//! instead of the topology, and a member asked to initialize sends StreamsGroupInitialize, then
//! heartbeats at once to get its tasks (§D5).

use serde_json::{Map, Value};

use crate::coordinator::{
    Dialect, DraftHeartbeatRequest, DraftInitializeRequest, Outcome, RequestContext, topology_id,
};
use crate::protocol::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, Topology};
use crate::types::Millis;

use super::super::api::SimEvent;
use super::{Ev, Simulation};

/// StreamsGroupInitialize on the simulated network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DraftEv {
    /// The request reaches the coordinator.
    Initialize {
        member: String,
        seq: u64,
        coord: u64,
        req: Box<DraftInitializeRequest>,
    },
    /// The answer reaches the member.
    Answer {
        member: String,
        seq: u64,
        coord: u64,
        ok: bool,
    },
}

/// The draft form of a heartbeat the client built: the topology replaced by its id (§D2).
pub(super) fn draft_request(req: &StreamsGroupHeartbeatRequest) -> DraftHeartbeatRequest {
    DraftHeartbeatRequest {
        topology_id: req.topology.as_ref().map(topology_id),
        heartbeat: StreamsGroupHeartbeatRequest {
            topology: None,
            ..req.clone()
        },
    }
}

impl Simulation {
    pub(super) fn is_draft(&self) -> bool {
        self.spec.dialect == Dialect::Draft
    }

    /// A draft heartbeat at the coordinator: the shipped part of the answer, and the draft
    /// fields for the message log. Remembers whether the member was asked to initialize.
    pub(super) fn draft_heartbeat(
        &mut self,
        seq: u64,
        ctx: &RequestContext,
        req: &StreamsGroupHeartbeatRequest,
    ) -> (
        Outcome<StreamsGroupHeartbeatResponse>,
        Option<Map<String, Value>>,
    ) {
        let out = self
            .coord
            .draft_heartbeat(Millis(self.now), ctx, &draft_request(req));
        let r = out.response;
        if r.should_initialize_topology {
            self.draft_asked.insert(seq);
        }
        let mut fields = Map::new();
        fields.insert(
            "should_initialize_topology".into(),
            r.should_initialize_topology.into(),
        );
        fields.insert(
            "group_topology_id".into(),
            r.group_topology_id.map_or(Value::Null, Value::String),
        );
        let shipped = Outcome {
            response: r.heartbeat,
            records: out.records,
            timers: out.timers,
            topics_to_create: out.topics_to_create,
        };
        (shipped, Some(fields))
    }

    /// The member was asked to initialize: send StreamsGroupInitialize with its topology.
    pub(super) fn send_initialize(&mut self, member: &str) {
        let req = DraftInitializeRequest {
            group_id: self.spec.group_id.clone(),
            topology: Topology {
                epoch: 0,
                ..self.spec.topology.clone()
            },
        };
        let logged = serde_json::to_value(&req).unwrap_or(Value::Null);
        let cut = self.members.get(member).is_some_and(|m| m.net_cut);
        let (seq, lost) = self.log_request(
            member,
            ("StreamsGroupInitialize", 0),
            logged,
            String::new(),
            None,
            cut,
        );
        if !lost {
            let at = self.now + self.latency();
            let coord = self.coord_incarnation;
            self.schedule(
                at,
                Ev::Draft(DraftEv::Initialize {
                    member: member.to_string(),
                    seq,
                    coord,
                    req: Box::new(req),
                }),
            );
        }
    }

    pub(super) fn handle_draft(&mut self, ev: DraftEv) {
        match ev {
            DraftEv::Initialize {
                member,
                seq,
                coord,
                req,
            } => {
                let cut = self.members.get(&member).is_some_and(|m| m.net_cut);
                if coord != self.coord_incarnation || cut {
                    self.lose(&member, seq, "lost_request");
                    return;
                }
                let out = self.coord.draft_initialize(Millis(self.now), &req);
                let cause = format!("initialize {member}");
                self.absorb(out.records, out.timers, out.topics_to_create, &cause);
                let r = out.response;
                let ok = r.error == "NONE";
                let now = self.now;
                if let Some(e) = self.log_entry(seq) {
                    e.received_ms = now;
                    e.response = serde_json::to_value(&r).ok();
                    if !ok {
                        let message = r.error_message.clone().unwrap_or_default();
                        e.error = Some(format!("{}: {message}", r.error));
                    }
                }
                if self.lost_at_random() {
                    self.lose(&member, seq, "lost_response");
                    return;
                }
                let at = now + self.latency();
                let coord = self.coord_incarnation;
                self.schedule(
                    at,
                    Ev::Draft(DraftEv::Answer {
                        member,
                        seq,
                        coord,
                        ok,
                    }),
                );
            }
            DraftEv::Answer {
                member,
                seq,
                coord,
                ok,
            } => {
                let cut = self.members.get(&member).is_some_and(|m| m.net_cut);
                if coord != self.coord_incarnation || cut {
                    self.lose(&member, seq, "lost_response");
                    return;
                }
                if let Some(e) = self.log_entry(seq) {
                    e.fate = "delivered".to_string();
                }
                self.out.push(SimEvent::Heartbeat {
                    seq,
                    member_id: member.clone(),
                    at_ms: self.now,
                    error: (!ok).then(|| "initialize failed".to_string()),
                });
                // Initialized: heartbeat at once to get the tasks (else the next one asks again).
                let idle = self
                    .members
                    .get(&member)
                    .is_some_and(|m| m.is_alive() && m.in_flight.is_none());
                if ok && idle {
                    self.schedule_heartbeat(&member, 0);
                }
            }
        }
    }
}
