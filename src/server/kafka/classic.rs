//! The classic group RPCs on the wire: JoinGroup (11), Heartbeat (12), LeaveGroup (13),
//! SyncGroup (14), DescribeGroups (15) and OffsetDelete (47), mapped between the `kafka-protocol`
//! messages of every served version and the core's version-free structs
//! (`crate::protocol::classic`).
//!
//! JoinGroup and SyncGroup are deferred: [`State::handle`] answers them with
//! [`Resp::Deferred`] and a token of its own; the core queues their answers (immediate or late)
//! and [`State::take_answers`] hands them out, encoded for the request's version, after every
//! request and every timer. The owner parks the request under its token until then.

use std::collections::HashMap;

use bytes::Bytes;
use kafka_protocol::messages::describe_groups_response::{
    DescribedGroup as KDescribedGroup, DescribedGroupMember,
};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::coordinator::classic::{ClassicReply, RequestToken};
use crate::error::ErrorCode;
use crate::protocol::classic as core;
use crate::server::acl::{Operation, ResourceType};
use crate::server::peer::Peer;
use crate::server::storage::log::LogEntry;
use crate::server::wire::{Header, Resp, ResponseKind};
use crate::types::Millis;

use super::State;

fn s(v: impl Into<String>) -> StrBytes {
    StrBytes::from_string(v.into())
}

fn opt(v: &Option<StrBytes>) -> Option<String> {
    v.as_ref().map(|x| x.to_string())
}

/// The deferred requests the state has handed out tokens for: the version to answer at.
#[derive(Debug, Default)]
pub struct Deferred {
    next: u64,
    versions: HashMap<RequestToken, i16>,
}

impl Deferred {
    fn issue(&mut self, version: i16) -> RequestToken {
        self.next += 1;
        let t = RequestToken(self.next);
        self.versions.insert(t, version);
        t
    }

    /// Requests still waiting for their answer.
    pub fn len(&self) -> usize {
        self.versions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
    }
}

impl State {
    pub(super) fn join_group(
        &mut self,
        now: Millis,
        h: &Header,
        peer: &Peer,
        r: &JoinGroupRequest,
        entries: &mut Vec<LogEntry>,
    ) -> Resp {
        let req = core_join(h.api_version, r);
        self.update_ctx(h, peer);
        let token = self.deferred.issue(h.api_version);
        let o = self.coord.classic_join(now, &self.ctx, &req, token);
        self.absorb(o, entries);
        Resp::Deferred(token)
    }

    pub(super) fn sync_group(
        &mut self,
        now: Millis,
        h: &Header,
        r: &SyncGroupRequest,
        entries: &mut Vec<LogEntry>,
    ) -> Resp {
        // Kafka's request handler, before the coordinator: v5+ must name both the protocol type
        // and the protocol name (`areMandatoryProtocolTypeAndNamePresent`).
        if h.api_version >= 5 && (r.protocol_type.is_none() || r.protocol_name.is_none()) {
            let refused = core::SyncGroupResponse::error(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
            return Resp::Kafka(ResponseKind::SyncGroup(sync_response(
                refused,
                h.api_version,
            )));
        }
        let req = core_sync(r);
        let token = self.deferred.issue(h.api_version);
        let o = self.coord.classic_sync(now, &req, token);
        self.absorb(o, entries);
        Resp::Deferred(token)
    }

    pub(super) fn classic_heartbeat(
        &mut self,
        now: Millis,
        r: &HeartbeatRequest,
        entries: &mut Vec<LogEntry>,
    ) -> HeartbeatResponse {
        let req = core_heartbeat(r);
        let o = self.coord.classic_heartbeat(now, &req);
        let code = self.absorb(o, entries);
        if code != ErrorCode::NONE {
            tracing::debug!(group = %req.group_id, member = %req.member_id,
                generation = req.generation_id, "Heartbeat answered {}", code.name());
        }
        let mut resp = HeartbeatResponse::default();
        resp.error_code = code.0;
        resp
    }

    pub(super) fn leave_group(
        &mut self,
        now: Millis,
        v: i16,
        r: &LeaveGroupRequest,
        entries: &mut Vec<LogEntry>,
    ) -> LeaveGroupResponse {
        let req = core_leave(v, r);
        let o = self.coord.classic_leave(now, &req);
        let res = self.absorb(o, entries);
        let mut resp = LeaveGroupResponse::default();
        if v >= 3 {
            resp.error_code = res.error_code.0;
            resp.members = res
                .members
                .into_iter()
                .map(|m| {
                    let mut k = MemberResponse::default();
                    k.member_id = s(m.member_id);
                    k.group_instance_id = m.group_instance_id.map(s);
                    k.error_code = m.error_code.0;
                    k
                })
                .collect();
        } else {
            // One member, one code: the group's error, else the member's (Kafka's conversion).
            resp.error_code = if res.error_code.0 != 0 {
                res.error_code.0
            } else {
                res.members.first().map_or(0, |m| m.error_code.0)
            };
        }
        resp
    }

    /// DescribeGroups: DESCRIBE on each group (refused ones first, as Kafka answers them);
    /// `authorized_operations` (v3+, when asked) computed from the ACLs.
    pub(super) fn describe_groups(
        &self,
        peer: &Peer,
        v: i16,
        r: &DescribeGroupsRequest,
    ) -> DescribeGroupsResponse {
        let (ids, denied): (Vec<String>, Vec<String>) = r
            .groups
            .iter()
            .map(|g| g.0.to_string())
            .partition(|g| self.allowed(peer, Operation::Describe, ResourceType::Group, g));
        let mut resp = DescribeGroupsResponse::default();
        resp.groups = denied
            .into_iter()
            .map(|g| {
                let mut k = KDescribedGroup::default();
                k.error_code = ErrorCode::GROUP_AUTHORIZATION_FAILED.0;
                k.group_id = GroupId(s(g));
                k.authorized_operations = i32::MIN;
                k
            })
            .collect();
        let with_ops = v >= 3 && r.include_authorized_operations;
        let described = if ids.is_empty() {
            Vec::new()
        } else {
            self.coord.describe_groups(&ids, v)
        };
        resp.groups.extend(described.into_iter().map(|d| {
            let mut k = KDescribedGroup::default();
            k.error_code = d.error_code.0;
            if v >= 6 {
                k.error_message = d.error_message.map(s);
            }
            k.group_id = GroupId(s(d.group_id));
            k.group_state = s(d.group_state);
            k.protocol_type = s(d.protocol_type);
            k.protocol_data = s(d.protocol_data);
            k.members = d
                .members
                .into_iter()
                .map(|m| {
                    let mut km = DescribedGroupMember::default();
                    km.member_id = s(m.member_id);
                    if v >= 4 {
                        km.group_instance_id = m.group_instance_id.map(s);
                    }
                    km.client_id = s(m.client_id);
                    km.client_host = s(m.client_host);
                    km.member_metadata = Bytes::from(m.member_metadata);
                    km.member_assignment = Bytes::from(m.member_assignment);
                    km
                })
                .collect();
            k.authorized_operations = if with_ops && d.error_code.0 == 0 {
                self.group_operations(peer, &k.group_id)
            } else {
                i32::MIN
            };
            k
        }));
        resp
    }

    /// OffsetDelete (DELETE on the group is checked by `State::refused`): READ on each topic;
    /// refused topics answered TOPIC_AUTHORIZATION_FAILED per partition.
    pub(super) fn offset_delete(
        &mut self,
        now: Millis,
        peer: &Peer,
        r: &OffsetDeleteRequest,
        entries: &mut Vec<LogEntry>,
    ) -> OffsetDeleteResponse {
        let (allowed, denied): (Vec<_>, Vec<_>) = r
            .topics
            .iter()
            .partition(|t| self.topic_allowed(peer, Operation::Read, &t.name));
        let refused = denied.into_iter().map(|t| {
            let mut k = OffsetDeleteResponseTopic::default();
            k.name = t.name.clone();
            k.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut kp = OffsetDeleteResponsePartition::default();
                    kp.partition_index = p.partition_index;
                    kp.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
                    kp
                })
                .collect();
            k
        });
        let refused: Vec<OffsetDeleteResponseTopic> = refused.collect();
        if allowed.is_empty() && !refused.is_empty() {
            let mut resp = OffsetDeleteResponse::default();
            resp.topics = refused;
            return resp;
        }
        let topics: Vec<(String, Vec<i32>)> = allowed
            .into_iter()
            .map(|t| {
                let ps = t.partitions.iter().map(|p| p.partition_index).collect();
                (t.name.0.to_string(), ps)
            })
            .collect();
        let o = self.coord.offset_delete(now, &r.group_id.0, &topics);
        let res = self.absorb(o, entries);
        let mut resp = OffsetDeleteResponse::default();
        resp.error_code = res.error_code.0;
        resp.topics = res
            .topics
            .into_iter()
            .map(|(name, ps)| {
                let mut t = OffsetDeleteResponseTopic::default();
                t.name = TopicName(s(name));
                t.partitions = ps
                    .into_iter()
                    .map(|(p, code)| {
                        let mut kp = OffsetDeleteResponsePartition::default();
                        kp.partition_index = p;
                        kp.error_code = code.0;
                        kp
                    })
                    .collect();
                t
            })
            .collect();
        resp.topics.extend(refused);
        resp
    }

    /// The answers to deferred requests completed since the last call (by requests or timers),
    /// in completion order, each encoded for its request's version. Call after every
    /// [`State::handle`] batch and every [`State::fire_timers`].
    pub fn take_answers(&mut self) -> Vec<(RequestToken, Resp)> {
        let mut out = Vec::new();
        for done in self.coord.take_completed() {
            // A token the server forgot (its connection closed) is dropped.
            let Some(v) = self.deferred.versions.remove(&done.token) else {
                continue;
            };
            let (what, code) = match &done.reply {
                ClassicReply::Join(j) => ("JoinGroup", j.error_code),
                ClassicReply::Sync(r) => ("SyncGroup", r.error_code),
            };
            tracing::debug!(token = done.token.0, "{what} answered {}", code.name());
            let resp = match done.reply {
                ClassicReply::Join(j) => ResponseKind::JoinGroup(join_response(j, v)),
                ClassicReply::Sync(r) => ResponseKind::SyncGroup(sync_response(r, v)),
            };
            out.push((done.token, Resp::Kafka(resp)));
        }
        out
    }

    /// Stop waiting for a deferred request (its connection closed). Kafka leaves some requests
    /// unanswered for good (a JoinGroup replaced by the same member's newer one), so the owner
    /// forgets the tokens of closed connections.
    pub fn forget(&mut self, token: RequestToken) {
        self.deferred.versions.remove(&token);
    }

    /// Deferred requests not answered yet.
    pub fn deferred(&self) -> &Deferred {
        &self.deferred
    }
}

fn join_response(j: core::JoinGroupResponse, v: i16) -> JoinGroupResponse {
    let mut k = JoinGroupResponse::default();
    k.error_code = j.error_code.0;
    k.generation_id = j.generation_id;
    if v >= 7 {
        k.protocol_type = j.protocol_type.map(s);
        // Kafka's JoinGroupResponse turns an empty protocol name into null from v7 on.
        k.protocol_name = j.protocol_name.filter(|p| !p.is_empty()).map(s);
    } else {
        // Not nullable before v7.
        k.protocol_name = Some(s(j.protocol_name.unwrap_or_default()));
    }
    k.leader = s(j.leader);
    k.skip_assignment = v >= 9 && j.skip_assignment;
    k.member_id = s(j.member_id);
    k.members = j
        .members
        .into_iter()
        .map(|m| {
            let mut km = JoinGroupResponseMember::default();
            km.member_id = s(m.member_id);
            if v >= 5 {
                km.group_instance_id = m.group_instance_id.map(s);
            }
            km.metadata = Bytes::from(m.metadata);
            km
        })
        .collect();
    k
}

fn sync_response(r: core::SyncGroupResponse, v: i16) -> SyncGroupResponse {
    let mut k = SyncGroupResponse::default();
    k.error_code = r.error_code.0;
    if v >= 5 {
        k.protocol_type = r.protocol_type.map(s);
        k.protocol_name = r.protocol_name.map(s);
    }
    k.assignment = Bytes::from(r.assignment);
    k
}

/// The core's JoinGroup request of a wire one (v0 has no rebalance timeout: -1).
pub(crate) fn core_join(version: i16, r: &JoinGroupRequest) -> core::JoinGroupRequest {
    core::JoinGroupRequest {
        group_id: r.group_id.0.to_string(),
        session_timeout_ms: r.session_timeout_ms,
        rebalance_timeout_ms: if version >= 1 {
            r.rebalance_timeout_ms
        } else {
            -1
        },
        member_id: r.member_id.to_string(),
        group_instance_id: opt(&r.group_instance_id),
        protocol_type: r.protocol_type.to_string(),
        protocols: r
            .protocols
            .iter()
            .map(|p| core::JoinProtocol {
                name: p.name.to_string(),
                metadata: p.metadata.to_vec(),
            })
            .collect(),
        reason: opt(&r.reason),
    }
}

/// The core's SyncGroup request of a wire one.
pub(crate) fn core_sync(r: &SyncGroupRequest) -> core::SyncGroupRequest {
    core::SyncGroupRequest {
        group_id: r.group_id.0.to_string(),
        generation_id: r.generation_id,
        member_id: r.member_id.to_string(),
        group_instance_id: opt(&r.group_instance_id),
        protocol_type: opt(&r.protocol_type),
        protocol_name: opt(&r.protocol_name),
        assignments: r
            .assignments
            .iter()
            .map(|a| (a.member_id.to_string(), a.assignment.to_vec()))
            .collect(),
    }
}

/// The core's Heartbeat request of a wire one.
pub(crate) fn core_heartbeat(r: &HeartbeatRequest) -> core::HeartbeatRequest {
    core::HeartbeatRequest {
        group_id: r.group_id.0.to_string(),
        generation_id: r.generation_id,
        member_id: r.member_id.to_string(),
        group_instance_id: opt(&r.group_instance_id),
    }
}

/// The core's LeaveGroup request of a wire one: v0-v2 name one member at the top level, v3+ a
/// batch.
pub(crate) fn core_leave(version: i16, r: &LeaveGroupRequest) -> core::LeaveGroupRequest {
    let members = if version >= 3 {
        r.members
            .iter()
            .map(|m| core::LeavingMember {
                member_id: m.member_id.to_string(),
                group_instance_id: opt(&m.group_instance_id),
                reason: opt(&m.reason),
            })
            .collect()
    } else {
        vec![core::LeavingMember {
            member_id: r.member_id.to_string(),
            group_instance_id: None,
            reason: None,
        }]
    };
    core::LeaveGroupRequest {
        group_id: r.group_id.0.to_string(),
        members,
    }
}
