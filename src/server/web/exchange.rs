//! One group-membership exchange as the owner served it (StreamsGroupHeartbeat,
//! ConsumerGroupHeartbeat, and the classic JoinGroup, SyncGroup, Heartbeat and LeaveGroup), and
//! how the live view shows it: the simulation's [`MessageLogEntry`], with the request and the
//! response as JSON in the shape the simulation logs them (the core's protocol structs) and
//! their wire bytes as hex.

use bytes::BytesMut;
use kafka_protocol::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, JoinGroupRequest,
    JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, SyncGroupRequest, SyncGroupResponse,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use serde::Serialize;

use crate::ErrorCode;
use crate::assignor::consumer::TopicId;
use crate::protocol::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, classic, consumer,
};
use crate::server::kafka;
use crate::server::wire::{Req, RequestKind, Resp, ResponseKind};
use crate::sim::MessageLogEntry;

/// A request the live view's swimlanes show.
#[derive(Debug)]
pub(super) enum Request {
    Streams(StreamsGroupHeartbeatRequest),
    Consumer(ConsumerGroupHeartbeatRequest),
    Join(JoinGroupRequest),
    Sync(SyncGroupRequest),
    Heartbeat(kafka_protocol::messages::HeartbeatRequest),
    Leave(LeaveGroupRequest),
}

/// The answer to a [`Request`].
#[derive(Debug)]
pub(super) enum Response {
    Streams(StreamsGroupHeartbeatResponse),
    Consumer(ConsumerGroupHeartbeatResponse),
    Join(JoinGroupResponse),
    Sync(SyncGroupResponse),
    Heartbeat(kafka_protocol::messages::HeartbeatResponse),
    Leave(LeaveGroupResponse),
}

impl Request {
    /// The exchange `req` starts, when it is one of a group's members (else `None`).
    pub(super) fn of(req: &Req) -> Option<Request> {
        Some(match req {
            Req::Heartbeat(r) => Request::Streams(r.clone()),
            Req::Kafka(RequestKind::ConsumerGroupHeartbeat(r)) => Request::Consumer(r.clone()),
            Req::Kafka(RequestKind::JoinGroup(r)) => Request::Join(r.clone()),
            Req::Kafka(RequestKind::SyncGroup(r)) => Request::Sync(r.clone()),
            Req::Kafka(RequestKind::Heartbeat(r)) => Request::Heartbeat(r.clone()),
            Req::Kafka(RequestKind::LeaveGroup(r)) => Request::Leave(r.clone()),
            _ => return None,
        })
    }

    /// The API's name, as the simulation's message log names it.
    pub(super) fn api(&self) -> &'static str {
        match self {
            Request::Streams(_) => "StreamsGroupHeartbeat",
            Request::Consumer(_) => "ConsumerGroupHeartbeat",
            Request::Join(_) => "JoinGroup",
            Request::Sync(_) => "SyncGroup",
            Request::Heartbeat(_) => "Heartbeat",
            Request::Leave(_) => "LeaveGroup",
        }
    }

    /// The group the exchange is about.
    pub(super) fn group_id(&self) -> &str {
        match self {
            Request::Streams(r) => &r.group_id,
            Request::Consumer(r) => &r.group_id.0,
            Request::Join(r) => &r.group_id.0,
            Request::Sync(r) => &r.group_id.0,
            Request::Heartbeat(r) => &r.group_id.0,
            Request::Leave(r) => &r.group_id.0,
        }
    }

    /// The member the request names ("" for a first join; a batch leave: its first member).
    fn member_id(&self) -> &str {
        match self {
            Request::Streams(r) => &r.member_id,
            Request::Consumer(r) => &r.member_id,
            Request::Join(r) => &r.member_id,
            Request::Sync(r) => &r.member_id,
            Request::Heartbeat(r) => &r.member_id,
            Request::Leave(r) => r.members.first().map_or(&r.member_id, |m| &m.member_id),
        }
    }

    /// The request as the core sees it (the server's own conversion), as JSON.
    fn json(&self, version: i16) -> serde_json::Value {
        match self {
            Request::Streams(r) => json(r),
            Request::Consumer(r) => json(&kafka::consumer::core_heartbeat(r)),
            Request::Join(r) => json(&kafka::classic::core_join(version, r)),
            Request::Sync(r) => json(&kafka::classic::core_sync(r)),
            Request::Heartbeat(r) => json(&kafka::classic::core_heartbeat(r)),
            Request::Leave(r) => json(&kafka::classic::core_leave(version, r)),
        }
    }

    fn hex(&self, version: i16) -> String {
        match self {
            Request::Streams(r) => r.encode(version).ok().map(|b| hex(&b)),
            Request::Consumer(r) => encoded(r, version),
            Request::Join(r) => encoded(r, version),
            Request::Sync(r) => encoded(r, version),
            Request::Heartbeat(r) => encoded(r, version),
            Request::Leave(r) => encoded(r, version),
        }
        .unwrap_or_default()
    }
}

impl Response {
    /// The answer `resp` gives, when it is one to show (`None` for a deferred one).
    pub(super) fn of(resp: &Resp) -> Option<Response> {
        Some(match resp {
            Resp::Heartbeat(r) => Response::Streams(r.clone()),
            Resp::Kafka(ResponseKind::ConsumerGroupHeartbeat(r)) => Response::Consumer(r.clone()),
            Resp::Kafka(ResponseKind::JoinGroup(r)) => Response::Join(r.clone()),
            Resp::Kafka(ResponseKind::SyncGroup(r)) => Response::Sync(r.clone()),
            Resp::Kafka(ResponseKind::Heartbeat(r)) => Response::Heartbeat(r.clone()),
            Resp::Kafka(ResponseKind::LeaveGroup(r)) => Response::Leave(r.clone()),
            _ => return None,
        })
    }

    /// The member id the coordinator gave (a first join's), if any.
    fn member_id(&self) -> Option<&str> {
        match self {
            Response::Streams(r) => Some(r.member_id.as_str()),
            Response::Consumer(r) => r.member_id.as_deref(),
            Response::Join(r) => Some(r.member_id.as_str()),
            _ => None,
        }
        .filter(|m| !m.is_empty())
    }

    /// The error (name, and message when there is one), `None` for success.
    fn error(&self) -> Option<String> {
        let (code, message) = match self {
            Response::Streams(r) => (r.error_code, r.error_message.as_deref()),
            Response::Consumer(r) => (r.error_code, r.error_message.as_deref()),
            Response::Join(r) => (r.error_code, None),
            Response::Sync(r) => (r.error_code, None),
            Response::Heartbeat(r) => (r.error_code, None),
            // A batch leave's error may be per member.
            Response::Leave(r) => (
                r.members
                    .iter()
                    .map(|m| m.error_code)
                    .find(|c| *c != 0)
                    .filter(|_| r.error_code == 0)
                    .unwrap_or(r.error_code),
                None,
            ),
        };
        (code != 0).then(|| {
            let name = ErrorCode(code).name();
            match message {
                Some(m) => format!("{name}: {m}"),
                None => name.to_string(),
            }
        })
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Response::Streams(r) => json(r),
            Response::Consumer(r) => consumer_json(r),
            Response::Join(r) => join_json(r),
            Response::Sync(r) => sync_json(r),
            Response::Heartbeat(r) => {
                serde_json::json!({ "error_code": r.error_code })
            }
            Response::Leave(r) => leave_json(r),
        }
    }

    fn hex(&self, version: i16) -> Option<String> {
        match self {
            Response::Streams(r) => r.encode(version).ok().map(|b| hex(&b)),
            Response::Consumer(r) => encoded(r, version),
            Response::Join(r) => encoded(r, version),
            Response::Sync(r) => encoded(r, version),
            Response::Heartbeat(r) => encoded(r, version),
            Response::Leave(r) => encoded(r, version),
        }
    }
}

/// One exchange: the request at `sent_ms`, its answer at `received_ms` (-1 while a JoinGroup
/// or SyncGroup waits for the rest of the group).
#[derive(Debug)]
pub(super) struct Exchange {
    pub(super) seq: u64,
    pub(super) sent_ms: i64,
    pub(super) received_ms: i64,
    pub(super) version: i16,
    pub(super) req: Request,
    pub(super) resp: Option<Response>,
}

impl Exchange {
    /// The simulation's shape of a message, with the JSON and wire bytes of both sides.
    pub(super) fn entry(&self) -> MessageLogEntry {
        let resp = self.resp.as_ref();
        // The member id: the request's, or the one the coordinator answered (a first join).
        let member_id = match (self.req.member_id(), resp.and_then(Response::member_id)) {
            ("", Some(given)) => given,
            (asked, _) => asked,
        };
        MessageLogEntry {
            seq: self.seq,
            sent_ms: self.sent_ms,
            received_ms: self.received_ms,
            member_id: member_id.to_string(),
            api: self.req.api().to_string(),
            api_version: self.version,
            request: self.req.json(self.version),
            response: resp.map(Response::json),
            request_hex: self.req.hex(self.version),
            response_hex: resp.and_then(|r| r.hex(self.version)),
            error: resp.and_then(Response::error),
            fate: if resp.is_some() {
                "delivered"
            } else {
                "in_flight"
            }
            .to_string(),
        }
    }
}

/// A kafka-protocol message's body at `version`, as hex.
fn encoded(m: &impl Encodable, version: i16) -> Option<String> {
    let mut buf = BytesMut::new();
    m.encode(&mut buf, version).ok().map(|()| hex(&buf))
}

fn json(v: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or_default()
}

fn opt(v: &Option<StrBytes>) -> Option<String> {
    v.as_ref().map(|s| s.to_string())
}

fn topic_partitions(id: &uuid::Uuid, partitions: &[i32]) -> consumer::TopicIdPartitions {
    let (hi, lo) = id.as_u64_pair();
    consumer::TopicIdPartitions {
        topic_id: TopicId::new(hi as i64, lo as i64),
        partitions: partitions.to_vec(),
    }
}

fn consumer_json(r: &ConsumerGroupHeartbeatResponse) -> serde_json::Value {
    json(&consumer::ConsumerGroupHeartbeatResponse {
        error_code: r.error_code,
        error_message: opt(&r.error_message),
        member_id: opt(&r.member_id),
        member_epoch: r.member_epoch,
        heartbeat_interval_ms: r.heartbeat_interval_ms,
        assignment: r.assignment.as_ref().map(|a| {
            a.topic_partitions
                .iter()
                .map(|tp| topic_partitions(&tp.topic_id, &tp.partitions))
                .collect()
        }),
    })
}

fn join_json(r: &JoinGroupResponse) -> serde_json::Value {
    json(&classic::JoinGroupResponse {
        error_code: ErrorCode(r.error_code),
        generation_id: r.generation_id,
        protocol_type: opt(&r.protocol_type),
        protocol_name: opt(&r.protocol_name),
        leader: r.leader.to_string(),
        skip_assignment: r.skip_assignment,
        member_id: r.member_id.to_string(),
        members: r
            .members
            .iter()
            .map(|m| classic::JoinGroupResponseMember {
                member_id: m.member_id.to_string(),
                group_instance_id: opt(&m.group_instance_id),
                metadata: m.metadata.to_vec(),
            })
            .collect(),
    })
}

fn sync_json(r: &SyncGroupResponse) -> serde_json::Value {
    json(&classic::SyncGroupResponse {
        error_code: ErrorCode(r.error_code),
        protocol_type: opt(&r.protocol_type),
        protocol_name: opt(&r.protocol_name),
        assignment: r.assignment.to_vec(),
    })
}

fn leave_json(r: &LeaveGroupResponse) -> serde_json::Value {
    json(&classic::LeaveGroupResponse {
        error_code: ErrorCode(r.error_code),
        members: r
            .members
            .iter()
            .map(|m| classic::LeftMember {
                member_id: m.member_id.to_string(),
                group_instance_id: opt(&m.group_instance_id),
                error_code: ErrorCode(m.error_code),
            })
            .collect(),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
