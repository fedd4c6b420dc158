//! The KIP-848 consumer group RPCs on the wire: ConsumerGroupHeartbeat (68) and
//! ConsumerGroupDescribe (69), v0-1 (docs/consumer-protocol.md §K1), mapped between the
//! `kafka-protocol` messages and the core's version-free structs (`crate::protocol::consumer`).
//! Topic ids on the wire are Kafka `Uuid`s; the core's [`TopicId`] is the same two halves.

use kafka_protocol::messages::consumer_group_describe_response::{
    Assignment as KDescribedAssignment, DescribedGroup as KDescribedGroup, Member as KMember,
    TopicPartitions as KDescribedPartitions,
};
use kafka_protocol::messages::consumer_group_heartbeat_response::{
    Assignment as KAssignment, TopicPartitions as KTopicPartitions,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::assignor::consumer::TopicId;
use crate::protocol::consumer as core;
use crate::server::peer::Peer;
use crate::server::storage::log::LogEntry;
use crate::server::wire::Header;
use crate::types::Millis;

use super::State;

fn s(v: impl Into<String>) -> StrBytes {
    StrBytes::from_string(v.into())
}

fn opt(v: &Option<StrBytes>) -> Option<String> {
    v.as_ref().map(|x| x.to_string())
}

/// The core's topic id of a wire `Uuid`.
pub(super) fn topic_id(u: &Uuid) -> TopicId {
    let (hi, lo) = u.as_u64_pair();
    TopicId::new(hi as i64, lo as i64)
}

/// The wire `Uuid` of a topic id.
pub(super) fn uuid(t: &TopicId) -> Uuid {
    Uuid::from_u64_pair(
        t.most_significant_bits as u64,
        t.least_significant_bits as u64,
    )
}

/// The wire `Uuid` of a topic name (derived from the name unless the coordinator was given ids).
pub(super) fn uuid_of_name(coord: &crate::coordinator::Coordinator, name: &str) -> Uuid {
    uuid(&coord.topic_id(name))
}

impl State {
    pub(super) fn consumer_group_heartbeat(
        &mut self,
        now: Millis,
        h: &Header,
        peer: &Peer,
        r: &ConsumerGroupHeartbeatRequest,
        entries: &mut Vec<LogEntry>,
    ) -> ConsumerGroupHeartbeatResponse {
        let req = core_heartbeat(r);
        self.update_ctx(h, peer);
        self.counters.heartbeats += 1;
        let o = self.coord.consumer_group_heartbeat(now, &self.ctx, &req);
        let out = self.absorb(o, entries);
        let mut resp = ConsumerGroupHeartbeatResponse::default();
        resp.error_code = out.error_code;
        resp.error_message = out.error_message.map(s);
        resp.member_id = out.member_id.map(s);
        resp.member_epoch = out.member_epoch;
        resp.heartbeat_interval_ms = out.heartbeat_interval_ms;
        resp.assignment = out.assignment.map(|tps| {
            let mut a = KAssignment::default();
            a.topic_partitions = tps
                .iter()
                .map(|t| {
                    let mut k = KTopicPartitions::default();
                    k.topic_id = uuid(&t.topic_id);
                    k.partitions = t.partitions.clone();
                    k
                })
                .collect();
            a
        });
        resp
    }

    pub(super) fn consumer_group_describe(
        &self,
        v: i16,
        r: &ConsumerGroupDescribeRequest,
    ) -> ConsumerGroupDescribeResponse {
        let req = core::ConsumerGroupDescribeRequest {
            group_ids: r.group_ids.iter().map(|g| g.0.to_string()).collect(),
            include_authorized_operations: r.include_authorized_operations,
        };
        let out = self.coord.consumer_group_describe(&req, v);
        let partitions = |list: &[core::DescribedTopicPartitions]| {
            let mut a = KDescribedAssignment::default();
            a.topic_partitions = list
                .iter()
                .map(|t| {
                    let mut k = KDescribedPartitions::default();
                    k.topic_id = uuid(&t.topic_id);
                    k.topic_name = TopicName(s(t.topic_name.clone()));
                    k.partitions = t.partitions.clone();
                    k
                })
                .collect();
            a
        };
        let mut resp = ConsumerGroupDescribeResponse::default();
        resp.groups = out
            .groups
            .iter()
            .map(|g| {
                let mut d = KDescribedGroup::default();
                d.error_code = g.error_code;
                d.error_message = g.error_message.clone().map(s);
                d.group_id = GroupId(s(g.group_id.clone()));
                d.group_state = s(g.group_state.clone());
                d.group_epoch = g.group_epoch;
                d.assignment_epoch = g.assignment_epoch;
                d.assignor_name = s(g.assignor_name.clone());
                d.authorized_operations = g.authorized_operations;
                d.members = g
                    .members
                    .iter()
                    .map(|m| {
                        let mut k = KMember::default();
                        k.member_id = s(m.member_id.clone());
                        k.instance_id = m.instance_id.clone().map(s);
                        k.rack_id = m.rack_id.clone().map(s);
                        k.member_epoch = m.member_epoch;
                        k.client_id = s(m.client_id.clone());
                        k.client_host = s(m.client_host.clone());
                        k.subscribed_topic_names = m
                            .subscribed_topic_names
                            .iter()
                            .map(|n| TopicName(s(n.clone())))
                            .collect();
                        k.subscribed_topic_regex = m.subscribed_topic_regex.clone().map(s);
                        k.assignment = partitions(&m.assignment);
                        k.target_assignment = partitions(&m.target_assignment);
                        k.member_type = m.member_type;
                        k
                    })
                    .collect();
                d
            })
            .collect();
        resp
    }
}

/// The core's ConsumerGroupHeartbeat request of a wire one.
pub(crate) fn core_heartbeat(
    r: &ConsumerGroupHeartbeatRequest,
) -> core::ConsumerGroupHeartbeatRequest {
    core::ConsumerGroupHeartbeatRequest {
        group_id: r.group_id.0.to_string(),
        member_id: r.member_id.to_string(),
        member_epoch: r.member_epoch,
        instance_id: opt(&r.instance_id),
        rack_id: opt(&r.rack_id),
        rebalance_timeout_ms: r.rebalance_timeout_ms,
        subscribed_topic_names: r
            .subscribed_topic_names
            .as_ref()
            .map(|names| names.iter().map(|n| n.0.to_string()).collect()),
        subscribed_topic_regex: opt(&r.subscribed_topic_regex),
        server_assignor: opt(&r.server_assignor),
        topic_partitions: r.topic_partitions.as_ref().map(|tps| {
            tps.iter()
                .map(|t| core::TopicIdPartitions {
                    topic_id: topic_id(&t.topic_id),
                    partitions: t.partitions.clone(),
                })
                .collect()
        }),
    }
}
