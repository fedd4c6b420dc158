//! Each request checked as a Kafka 4.4 broker checks it (`KafkaApis` / `ControllerApis`): the
//! operation on the group, topic or cluster it needs, and Kafka's answer when the caller may
//! not. With the authorizer off every check allows, so nothing changes.
//!
//! Two kinds of check: [`State::refused`] answers a request refused as a whole (a group API
//! without READ on its group, ...) before it reaches the coordinator; the per-topic and
//! per-group filters (`split_*`, [`State::allowed`]) are used by the handlers that answer
//! part of a request and refuse the rest.

use kafka_protocol::messages::*;

use crate::error::ErrorCode;
use crate::protocol::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, status_code};
use crate::server::acl::{CLUSTER_NAME, Operation, ResourceType};
use crate::server::peer::Peer;
use crate::server::wire::{Header, Req, RequestKind, Resp, ResponseKind};
use crate::topic;

use super::State;

impl State {
    /// May `peer` perform `op` on the resource?
    pub(crate) fn allowed(&self, peer: &Peer, op: Operation, rt: ResourceType, name: &str) -> bool {
        self.authorizer
            .authorize(&peer.principal, &peer.host, op, rt, name)
    }

    /// May `peer` perform `op` on the cluster?
    pub(crate) fn cluster_allowed(&self, peer: &Peer, op: Operation) -> bool {
        self.allowed(peer, op, ResourceType::Cluster, CLUSTER_NAME)
    }

    /// The `authorized_operations` bit field of a group for `peer`.
    pub(crate) fn group_operations(&self, peer: &Peer, group: &str) -> i32 {
        self.authorizer.authorized_operations(
            &peer.principal,
            &peer.host,
            ResourceType::Group,
            group,
        )
    }

    fn group_allowed(&self, peer: &Peer, op: Operation, group: &str) -> bool {
        self.allowed(peer, op, ResourceType::Group, group)
    }

    pub(crate) fn topic_allowed(&self, peer: &Peer, op: Operation, topic: &str) -> bool {
        self.allowed(peer, op, ResourceType::Topic, topic)
    }

    /// The answer to a request refused as a whole, or `None` when it may go on (possibly to be
    /// answered in part: the handlers filter topics and groups themselves).
    pub(super) fn refused(&self, h: &Header, peer: &Peer, req: &Req) -> Option<Resp> {
        if !self.authorizer.enabled {
            return None;
        }
        let v = h.api_version;
        let group_denied = ErrorCode::GROUP_AUTHORIZATION_FAILED.0;
        let read = |g: &GroupId| !self.group_allowed(peer, Operation::Read, g);
        let kind = match req {
            Req::Heartbeat(r) => {
                return self.streams_heartbeat_refused(peer, r).map(Resp::Heartbeat);
            }
            Req::Kafka(k) => k,
            _ => return None,
        };
        Some(Resp::Kafka(match kind {
            RequestKind::JoinGroup(r) if read(&r.group_id) => {
                let mut k = JoinGroupResponse::default();
                k.error_code = group_denied;
                k.generation_id = -1;
                k.protocol_name = if v >= 7 {
                    None
                } else {
                    Some(Default::default())
                };
                ResponseKind::JoinGroup(k)
            }
            RequestKind::SyncGroup(r) if read(&r.group_id) => {
                let mut k = SyncGroupResponse::default();
                k.error_code = group_denied;
                ResponseKind::SyncGroup(k)
            }
            RequestKind::Heartbeat(r) if read(&r.group_id) => {
                let mut k = HeartbeatResponse::default();
                k.error_code = group_denied;
                ResponseKind::Heartbeat(k)
            }
            RequestKind::LeaveGroup(r) if read(&r.group_id) => {
                let mut k = LeaveGroupResponse::default();
                k.error_code = group_denied;
                ResponseKind::LeaveGroup(k)
            }
            RequestKind::OffsetCommit(r) if read(&r.group_id) => ResponseKind::OffsetCommit(
                super::offset_commit_error(r, ErrorCode::GROUP_AUTHORIZATION_FAILED),
            ),
            RequestKind::OffsetDelete(r)
                if !self.group_allowed(peer, Operation::Delete, &r.group_id) =>
            {
                let mut k = OffsetDeleteResponse::default();
                k.error_code = group_denied;
                ResponseKind::OffsetDelete(k)
            }
            RequestKind::InitProducerId(r)
                if r.transactional_id.is_none()
                    && !self.cluster_allowed(peer, Operation::IdempotentWrite)
                    && !self.may_write_some_topic(peer) =>
            {
                let mut k = InitProducerIdResponse::default();
                k.error_code = ErrorCode::CLUSTER_AUTHORIZATION_FAILED.0;
                k.producer_id = ProducerId(-1);
                k.producer_epoch = -1;
                ResponseKind::InitProducerId(k)
            }
            _ => return None,
        }))
    }

    /// Kafka's `authorizeByResourceType(WRITE, TOPIC)`, simplified: some ALLOW (WRITE or ALL)
    /// on a topic pattern for the caller, unless a DENY of the same operation covers every topic
    /// (the literal `*`).
    fn may_write_some_topic(&self, peer: &Peer) -> bool {
        use crate::server::acl::{PatternType, Permission, WILDCARD};
        let who = peer.principal.to_string();
        let mine = |a: &&crate::server::acl::Acl| {
            a.resource_type == ResourceType::Topic
                && (a.principal == who || a.principal == "User:*")
                && (a.host == WILDCARD || *a.host == *peer.host)
                && matches!(a.operation, Operation::Write | Operation::All)
        };
        let denied_all = self.authorizer.acls().filter(mine).any(|a| {
            a.permission == Permission::Deny
                && a.pattern_type == PatternType::Literal
                && a.resource_name == WILDCARD
        });
        !denied_all
            && self
                .authorizer
                .acls()
                .filter(mine)
                .any(|a| a.permission == Permission::Allow)
    }

    /// StreamsGroupHeartbeat: READ on the group; with a topology, DESCRIBE on every topic it
    /// names (after the coordinator's own checks of internal and invalid names, which come
    /// first in Kafka too: a topology naming one is left to the coordinator).
    fn streams_heartbeat_refused(
        &self,
        peer: &Peer,
        r: &StreamsGroupHeartbeatRequest,
    ) -> Option<StreamsGroupHeartbeatResponse> {
        let mut resp = StreamsGroupHeartbeatResponse::default();
        if !self.group_allowed(peer, Operation::Read, &r.group_id) {
            resp.error_code = ErrorCode::GROUP_AUTHORIZATION_FAILED.0;
            return Some(resp);
        }
        let topology = r.topology.as_ref()?;
        let mut required: Vec<&str> = Vec::new();
        for s in &topology.subtopologies {
            required.extend(s.source_topics.iter().map(String::as_str));
            required.extend(s.repartition_sink_topics.iter().map(String::as_str));
            required.extend(s.repartition_source_topics.iter().map(|t| t.name.as_str()));
            required.extend(s.state_changelog_topics.iter().map(|t| t.name.as_str()));
        }
        if required
            .iter()
            .any(|t| topic::is_internal(t) || !topic::is_valid_name(t))
        {
            return None;
        }
        if required
            .iter()
            .any(|t| !self.topic_allowed(peer, Operation::Describe, t))
        {
            resp.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
            return Some(resp);
        }
        None
    }

    /// The internal topics of a streams heartbeat the caller may not create (CREATE on the
    /// cluster, else on each topic); Kafka then creates none of them and says so in the
    /// MISSING_INTERNAL_TOPICS status.
    pub(super) fn uncreatable<'a>(&self, peer: &Peer, topics: &'a [String]) -> Vec<&'a str> {
        if topics.is_empty() || self.cluster_allowed(peer, Operation::Create) {
            return Vec::new();
        }
        topics
            .iter()
            .filter(|t| !self.topic_allowed(peer, Operation::Create, t))
            .map(String::as_str)
            .collect()
    }
}

/// Add Kafka's "Unauthorized to CREATE" detail to a heartbeat response's
/// MISSING_INTERNAL_TOPICS status (creating the status if the coordinator did not report one).
pub(super) fn note_uncreatable(resp: &mut StreamsGroupHeartbeatResponse, topics: &[&str]) {
    let detail = format!("Unauthorized to CREATE on topics {}.", topics.join(", "));
    let status = resp.status.get_or_insert_with(Vec::new);
    match status
        .iter_mut()
        .find(|s| s.status_code == status_code::MISSING_INTERNAL_TOPICS)
    {
        Some(s) => s.status_detail = format!("{}; {detail}", s.status_detail),
        None => status.push(crate::protocol::Status {
            status_code: status_code::MISSING_INTERNAL_TOPICS,
            status_detail: detail,
            unknown_tagged_fields: Vec::new(),
        }),
    }
}

// ---- Describes and the data plane: answered in part ----

use crate::protocol::{DescribedGroup, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse};

impl State {
    /// StreamsGroupDescribe: DESCRIBE on each group (refused ones first), the computed
    /// `authorized_operations`, and a group whose topology names a topic the caller may not
    /// DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED without members or topology.
    pub(super) fn streams_describe(
        &self,
        peer: &Peer,
        r: &StreamsGroupDescribeRequest,
        v: i16,
    ) -> StreamsGroupDescribeResponse {
        if !self.authorizer.enabled {
            return self.coord.streams_group_describe(r, v);
        }
        let (ids, denied): (Vec<String>, Vec<String>) = r
            .group_ids
            .iter()
            .cloned()
            .partition(|g| self.group_allowed(peer, Operation::Describe, g));
        let mut groups: Vec<DescribedGroup> = denied
            .into_iter()
            .map(|g| DescribedGroup {
                group_id: g,
                error_code: ErrorCode::GROUP_AUTHORIZATION_FAILED.0,
                authorized_operations: i32::MIN,
                ..Default::default()
            })
            .collect();
        let mut allowed = self.coord.streams_group_describe(
            &StreamsGroupDescribeRequest {
                group_ids: ids,
                ..r.clone()
            },
            v,
        );
        for g in &mut allowed.groups {
            if r.include_authorized_operations && g.error_code == 0 {
                g.authorized_operations = self.group_operations(peer, &g.group_id);
            }
            let hidden = g
                .topology
                .as_ref()
                .and_then(|t| t.subtopologies.as_ref())
                .is_some_and(|subs| {
                    subs.iter().any(|s| {
                        s.source_topics
                            .iter()
                            .chain(&s.repartition_sink_topics)
                            .chain(s.repartition_source_topics.iter().map(|t| &t.name))
                            .chain(s.state_changelog_topics.iter().map(|t| &t.name))
                            .any(|t| !self.topic_allowed(peer, Operation::Describe, t))
                    })
                });
            if hidden {
                *g = DescribedGroup {
                    group_id: std::mem::take(&mut g.group_id),
                    error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED.0,
                    error_message: Some(
                        "The described group uses topics that the client is not authorized to describe."
                            .into(),
                    ),
                    authorized_operations: g.authorized_operations,
                    ..Default::default()
                };
            }
        }
        groups.extend(allowed.groups);
        StreamsGroupDescribeResponse { groups, ..allowed }
    }

    /// Split a request's topics into those `op` is allowed on and the rest.
    fn split_topics<'a, T>(
        &self,
        peer: &Peer,
        op: Operation,
        topics: &'a [T],
        name: impl Fn(&T) -> &str,
    ) -> (Vec<T>, Vec<&'a T>)
    where
        T: Clone,
    {
        let mut allowed = Vec::new();
        let mut denied = Vec::new();
        for t in topics {
            if self.topic_allowed(peer, op, name(t)) {
                allowed.push(t.clone());
            } else {
                denied.push(t);
            }
        }
        (allowed, denied)
    }

    /// Produce: WRITE per topic.
    pub(super) fn produce(&mut self, peer: &Peer, r: &ProduceRequest, v: i16) -> ProduceResponse {
        use kafka_protocol::messages::produce_response::{
            PartitionProduceResponse, TopicProduceResponse,
        };
        let (allowed, denied) =
            self.split_topics(peer, Operation::Write, &r.topic_data, |t| &t.name);
        if denied.is_empty() {
            return self.data.produce(&self.topics, r, v);
        }
        let mut req = r.clone();
        req.topic_data = allowed;
        let mut resp = if req.topic_data.is_empty() {
            ProduceResponse::default()
        } else {
            self.data.produce(&self.topics, &req, v)
        };
        resp.responses.extend(denied.into_iter().map(|t| {
            let mut k = TopicProduceResponse::default();
            k.name = t.name.clone();
            k.topic_id = t.topic_id;
            k.partition_responses = t
                .partition_data
                .iter()
                .map(|p| {
                    let mut kp = PartitionProduceResponse::default();
                    kp.index = p.index;
                    kp.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
                    kp.base_offset = -1;
                    kp.log_append_time_ms = -1;
                    kp.log_start_offset = -1;
                    kp
                })
                .collect();
            k
        }));
        resp
    }

    /// Fetch: READ per topic. From v13 topics are named by id: the check is on the name the id
    /// stands for; an id no topic has is left to the data plane (UNKNOWN_TOPIC_ID, as Kafka).
    pub(super) fn fetch(&self, peer: &Peer, r: &FetchRequest, v: i16) -> FetchResponse {
        use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
        let mut allowed = Vec::new();
        let mut denied = Vec::new();
        for t in &r.topics {
            let name = if v >= 13 {
                self.topics
                    .keys()
                    .find(|n| {
                        super::consumer::uuid(&crate::assignor::consumer::TopicId::from_name(n))
                            == t.topic_id
                    })
                    .map(String::as_str)
            } else {
                Some(t.topic.as_str())
            };
            match name {
                Some(n) if !self.topic_allowed(peer, Operation::Read, n) => denied.push(t),
                _ => allowed.push(t.clone()),
            }
        }
        if denied.is_empty() {
            return self.data.fetch(&self.topics, r, v);
        }
        let mut req = r.clone();
        req.topics = allowed;
        let mut resp = if req.topics.is_empty() {
            FetchResponse::default()
        } else {
            self.data.fetch(&self.topics, &req, v)
        };
        resp.responses.extend(denied.into_iter().map(|t| {
            let mut k = FetchableTopicResponse::default();
            k.topic = t.topic.clone();
            k.topic_id = t.topic_id;
            k.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut kp = PartitionData::default();
                    kp.partition_index = p.partition;
                    kp.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
                    kp.high_watermark = -1;
                    kp.last_stable_offset = -1;
                    kp.log_start_offset = -1;
                    kp.records = Some(Default::default());
                    kp
                })
                .collect();
            k
        }));
        resp
    }

    /// ListOffsets: DESCRIBE per topic.
    pub(super) fn list_offsets(
        &self,
        peer: &Peer,
        r: &ListOffsetsRequest,
        v: i16,
    ) -> ListOffsetsResponse {
        use kafka_protocol::messages::list_offsets_response::{
            ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
        };
        let (allowed, denied) =
            self.split_topics(peer, Operation::Describe, &r.topics, |t| &t.name);
        if denied.is_empty() {
            return self.data.list_offsets(&self.topics, r, v);
        }
        let mut req = r.clone();
        req.topics = allowed;
        let mut resp = self.data.list_offsets(&self.topics, &req, v);
        resp.topics.extend(denied.into_iter().map(|t| {
            let mut k = ListOffsetsTopicResponse::default();
            k.name = t.name.clone();
            k.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut kp = ListOffsetsPartitionResponse::default();
                    kp.partition_index = p.partition_index;
                    kp.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
                    kp.timestamp = -1;
                    kp.offset = -1;
                    kp.leader_epoch = -1;
                    kp
                })
                .collect();
            k
        }));
        resp
    }

    /// DeleteRecords: DELETE per topic.
    pub(super) fn delete_records(
        &mut self,
        peer: &Peer,
        r: &DeleteRecordsRequest,
        v: i16,
    ) -> DeleteRecordsResponse {
        use kafka_protocol::messages::delete_records_response::{
            DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
        };
        let (allowed, denied) = self.split_topics(peer, Operation::Delete, &r.topics, |t| &t.name);
        if denied.is_empty() {
            return self.data.delete_records(&self.topics, r, v);
        }
        let mut req = r.clone();
        req.topics = allowed;
        let mut resp = self.data.delete_records(&self.topics, &req, v);
        resp.topics.extend(denied.into_iter().map(|t| {
            let mut k = DeleteRecordsTopicResult::default();
            k.name = t.name.clone();
            k.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut kp = DeleteRecordsPartitionResult::default();
                    kp.partition_index = p.partition_index;
                    kp.low_watermark = -1;
                    kp.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
                    kp
                })
                .collect();
            k
        }));
        resp
    }

    /// OffsetForLeaderEpoch (clients): DESCRIBE per topic.
    pub(super) fn offset_for_leader_epoch(
        &self,
        peer: &Peer,
        r: &OffsetForLeaderEpochRequest,
        v: i16,
    ) -> OffsetForLeaderEpochResponse {
        use kafka_protocol::messages::offset_for_leader_epoch_response::{
            EpochEndOffset, OffsetForLeaderTopicResult,
        };
        let (allowed, denied) =
            self.split_topics(peer, Operation::Describe, &r.topics, |t| &t.topic);
        if denied.is_empty() {
            return self.data.offset_for_leader_epoch(&self.topics, r, v);
        }
        let mut req = r.clone();
        req.topics = allowed;
        let mut resp = self.data.offset_for_leader_epoch(&self.topics, &req, v);
        resp.topics.extend(denied.into_iter().map(|t| {
            let mut k = OffsetForLeaderTopicResult::default();
            k.topic = t.topic.clone();
            k.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut kp = EpochEndOffset::default();
                    kp.partition = p.partition;
                    kp.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
                    kp.leader_epoch = -1;
                    kp.end_offset = -1;
                    kp
                })
                .collect();
            k
        }));
        resp
    }
}
