//! The Kafka request handling, pure: [`State`] holds the coordinator, the topic registry and the
//! small data plane ([`data_plane`]), and [`State::handle`] answers one decoded request at a given
//! time with the response and the log entries the caller must make durable before sending it. No
//! sockets, no clock, no threads: the owner task drives it, and the unit tests (`tests.rs`) call it
//! directly.

mod classic;
pub mod data_plane;
pub mod prevalidate;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::list_groups_response::ListedGroup as KListedGroup;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use crate::error::ErrorCode;
use crate::protocol::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};
use crate::records::Record;
use crate::topic;
use crate::topology::MetadataImage;
use crate::types::Millis;

use crate::coordinator::{
    Coordinator, OffsetCommitInput, OffsetCommitPartition, OffsetCommitTopic, OffsetFetchInput,
    Outcome, RequestContext,
};
use crate::server::peer::Peer;
use crate::server::security::admin as scram_admin;
use crate::server::security::scram::ScramCredentials;
use crate::server::storage::log::{LogEntry, ScramChange, TopicChange};
use crate::server::wire::{Header, Req, RequestKind, Resp, ResponseKind};
use std::sync::{Arc, RwLock};

fn s(v: impl Into<String>) -> StrBytes {
    StrBytes::from_string(v.into())
}

/// Counters the owner maintains (exported by /metrics).
#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub heartbeats: u64,
    pub requests: u64,
}

/// What the owner task owns.
pub struct State {
    pub coord: Coordinator,
    pub topics: BTreeMap<String, i32>,
    pub host: String,
    pub port: i32,
    pub counters: Counters,
    /// In-memory partition logs (Produce/Fetch/ListOffsets/...; not durable).
    pub data: data_plane::DataPlane,
    /// The last heartbeat's request context, reused while client id and host stay the same
    /// (consecutive requests mostly come from one connection's batch): no allocation per
    /// heartbeat.
    ctx: RequestContext,
    /// JoinGroup / SyncGroup requests waiting for their answer.
    deferred: classic::Deferred,
    /// SCRAM credentials, replayed from the log; shared with the connections' SASL exchanges
    /// (which only read them).
    pub scram: Arc<RwLock<ScramCredentials>>,
    /// Advertised (host, port) per listener name; a listener not named here advertises
    /// `host`/`port`.
    pub advertised: BTreeMap<String, (String, i32)>,
}

/// The result of one request.
pub struct Handled {
    pub resp: Resp,
    pub entries: Vec<LogEntry>,
}

impl State {
    pub fn new(coord: Coordinator, host: String, port: i32) -> State {
        let mut data = data_plane::DataPlane::new();
        data.set_max_bytes(coord.config().limits.max_data_plane_mb.max(0) as usize * 1024 * 1024);
        State {
            coord,
            topics: BTreeMap::new(),
            host,
            port,
            counters: Counters::default(),
            data,
            ctx: RequestContext::default(),
            deferred: classic::Deferred::default(),
            scram: Arc::default(),
            advertised: BTreeMap::new(),
        }
    }

    /// The address advertised to a client of `peer`'s listener.
    fn endpoint(&self, peer: &Peer) -> (&str, i32) {
        match self.advertised.get(&*peer.listener) {
            Some((h, p)) => (h.as_str(), *p),
            None => (self.host.as_str(), self.port),
        }
    }

    /// Apply SCRAM credential changes (replay and live path).
    pub fn apply_scram(&mut self, changes: &[ScramChange]) {
        let mut creds = self.scram.write().unwrap_or_else(|e| e.into_inner());
        changes.iter().for_each(|c| c.apply(&mut creds));
    }

    /// After the log was replayed: the data plane is in memory and empty, so every partition's
    /// offsets restart above the highest offset any group committed for it.
    pub fn after_replay(&mut self) {
        let mut floors = Vec::new();
        for g in self.coord.group_ids() {
            if let Some(offsets) = self.coord.offsets(&g) {
                floors.extend(offsets.iter().map(|(k, v)| (k.clone(), v.offset)));
            }
        }
        self.data.set_offset_floors(floors);
    }

    /// Apply a replayed or new topic change to the registry (no logging).
    pub fn apply_topics(&mut self, changes: &[TopicChange]) {
        for c in changes {
            match c {
                TopicChange::Set { name, partitions } => {
                    self.topics.insert(name.clone(), *partitions);
                }
                TopicChange::Delete { name } => {
                    self.topics.remove(name);
                }
            }
        }
        self.coord.set_metadata(MetadataImage {
            topics: self.topics.clone(),
        });
        self.data.retain_topics(&self.topics);
    }

    /// Apply topic changes read back from the log, refusing what this version would never have
    /// accepted (a log written before the bounds existed): start-up stops and names the batch.
    pub fn replay_topics(&mut self, changes: &[TopicChange]) -> Result<(), String> {
        let limits = self.coord.config().limits;
        for c in changes {
            if let TopicChange::Set { name, partitions } = c {
                limits.check_partitions(&format!("Topic {name}"), *partitions)?;
            }
        }
        self.apply_topics(changes);
        Ok(())
    }

    /// Create topics on the registry and return the log entry.
    fn change_topics(&mut self, changes: Vec<TopicChange>, entries: &mut Vec<LogEntry>) {
        if changes.is_empty() {
            return;
        }
        self.apply_topics(&changes);
        entries.push(LogEntry::Topics(changes));
    }

    fn absorb<R>(&mut self, o: Outcome<R>, entries: &mut Vec<LogEntry>) -> R {
        if !o.records.is_empty() {
            entries.push(LogEntry::Records(o.records));
        }
        let limits = self.coord.config().limits;
        let mut creates: Vec<TopicChange> = Vec::new();
        for t in o.topics_to_create {
            if self.topics.contains_key(&t.name) {
                continue;
            }
            // The core refuses topologies beyond the bounds; this is the last line before the
            // registry (and the log).
            let full = self.topics.len() + creates.len() >= limits.max_topics.max(0) as usize;
            if let Err(e) = limits.check_partitions(&t.name, t.partitions) {
                tracing::warn!("internal topic not created: {e}");
                continue;
            }
            if full {
                tracing::warn!(topic = %t.name, "internal topic not created: {}", limits.topics_full());
                continue;
            }
            creates.push(TopicChange::Set {
                name: t.name,
                partitions: t.partitions.max(1),
            });
        }
        self.change_topics(creates, entries);
        o.response
    }

    /// Fire due timers; returns their log entries.
    pub fn fire_timers(&mut self, now: Millis) -> Vec<LogEntry> {
        let mut entries = Vec::new();
        for o in self.coord.fire_due_timers(now) {
            self.absorb(o, &mut entries);
        }
        entries
    }

    pub fn handle(&mut self, now: Millis, h: &Header, peer: &Peer, req: &Req) -> Handled {
        self.counters.requests += 1;
        let mut entries = Vec::new();
        let v = h.api_version;
        let resp = match req {
            Req::Heartbeat(r) => {
                self.counters.heartbeats += 1;
                Resp::Heartbeat(self.heartbeat(now, h, peer, r, &mut entries))
            }
            Req::Describe(r) => Resp::Describe(if self.coord.config().streams_enabled {
                self.coord.streams_group_describe(r, v)
            } else {
                let mut d = crate::protocol::StreamsGroupDescribeResponse::default();
                for g in &r.group_ids {
                    d.groups.push(crate::protocol::DescribedGroup {
                        group_id: g.clone(),
                        error_code: ErrorCode::UNSUPPORTED_VERSION.0,
                        ..Default::default()
                    });
                }
                d
            }),
            Req::ApiVersions(_) => Resp::Kafka(ResponseKind::ApiVersions(
                crate::server::wire::api_versions_response(
                    0,
                    v,
                    self.coord.config().streams_enabled,
                ),
            )),
            Req::Kafka(k) => Resp::Kafka(match k {
                // Deferred: the answer comes from `take_answers`.
                RequestKind::JoinGroup(r) => {
                    let resp = self.join_group(now, h, peer, r, &mut entries);
                    return Handled { resp, entries };
                }
                RequestKind::SyncGroup(r) => {
                    let resp = self.sync_group(now, h, r, &mut entries);
                    return Handled { resp, entries };
                }
                RequestKind::Heartbeat(r) => {
                    ResponseKind::Heartbeat(self.classic_heartbeat(now, r, &mut entries))
                }
                RequestKind::LeaveGroup(r) => {
                    ResponseKind::LeaveGroup(self.leave_group(now, v, r, &mut entries))
                }
                RequestKind::OffsetDelete(r) => {
                    ResponseKind::OffsetDelete(self.offset_delete(now, r, &mut entries))
                }
                RequestKind::Metadata(r) => ResponseKind::Metadata(self.metadata(v, peer, r)),
                RequestKind::FindCoordinator(r) => {
                    let (host, port) = self.endpoint(peer);
                    ResponseKind::FindCoordinator(find_coordinator(host, port, v, r))
                }
                // Answered by the connection (its SASL exchange); here only after it.
                RequestKind::SaslHandshake(_) | RequestKind::SaslAuthenticate(_) => {
                    match crate::server::security::sasl::after_authentication(h) {
                        Some(r) => r,
                        None => unreachable!("keys 17 and 36"),
                    }
                }
                RequestKind::DescribeUserScramCredentials(r) => {
                    let creds = self.scram.read().unwrap_or_else(|e| e.into_inner());
                    ResponseKind::DescribeUserScramCredentials(scram_admin::describe(&creds, r))
                }
                RequestKind::AlterUserScramCredentials(r) => {
                    let (resp, changes) = {
                        let creds = self.scram.read().unwrap_or_else(|e| e.into_inner());
                        scram_admin::alter(&creds, r)
                    };
                    if !changes.is_empty() {
                        self.apply_scram(&changes);
                        entries.push(LogEntry::Scram(changes));
                    }
                    ResponseKind::AlterUserScramCredentials(resp)
                }
                RequestKind::ListGroups(r) => ResponseKind::ListGroups(self.list_groups(r)),
                RequestKind::DescribeGroups(r) => {
                    ResponseKind::DescribeGroups(self.describe_groups(v, r))
                }
                RequestKind::DeleteGroups(r) => {
                    ResponseKind::DeleteGroups(self.delete_groups(now, r, &mut entries))
                }
                RequestKind::CreateTopics(r) => {
                    ResponseKind::CreateTopics(self.create_topics(v, r, &mut entries))
                }
                RequestKind::DeleteTopics(r) => {
                    ResponseKind::DeleteTopics(self.delete_topics(v, r, &mut entries))
                }
                RequestKind::OffsetCommit(r) => {
                    ResponseKind::OffsetCommit(self.offset_commit(now, v, r, &mut entries))
                }
                RequestKind::OffsetFetch(r) => ResponseKind::OffsetFetch(self.offset_fetch(v, r)),
                RequestKind::ListOffsets(r) => {
                    ResponseKind::ListOffsets(self.data.list_offsets(&self.topics, r, v))
                }
                RequestKind::Fetch(r) => ResponseKind::Fetch(self.data.fetch(&self.topics, r, v)),
                RequestKind::Produce(r) => {
                    ResponseKind::Produce(self.data.produce(&self.topics, r, v))
                }
                RequestKind::InitProducerId(r) => {
                    ResponseKind::InitProducerId(self.data.init_producer_id(r, v))
                }
                RequestKind::DeleteRecords(r) => {
                    ResponseKind::DeleteRecords(self.data.delete_records(&self.topics, r, v))
                }
                RequestKind::OffsetForLeaderEpoch(r) => ResponseKind::OffsetForLeaderEpoch(
                    self.data.offset_for_leader_epoch(&self.topics, r, v),
                ),
            }),
        };
        Handled { resp, entries }
    }

    fn heartbeat(
        &mut self,
        now: Millis,
        h: &Header,
        peer: &Peer,
        r: &StreamsGroupHeartbeatRequest,
        entries: &mut Vec<LogEntry>,
    ) -> StreamsGroupHeartbeatResponse {
        // Broker-layer checks (streams enabled, internal/invalid topic names, spec §3.1) are
        // done by the coordinator itself.
        self.update_ctx(h, peer);
        let o = self.coord.streams_group_heartbeat(now, &self.ctx, r);
        self.absorb(o, entries)
    }

    /// The request context of `h` from `peer`, kept in `self.ctx`.
    fn update_ctx(&mut self, h: &Header, peer: &Peer) {
        let peer: &str = &peer.host;
        let client_id = h.client_id.as_deref().unwrap_or_default();
        if self.ctx.client_id != client_id {
            client_id.clone_into(&mut self.ctx.client_id);
        }
        // Java's InetAddress.toString() form: "/" + address.
        if self.ctx.client_host.strip_prefix('/') != Some(peer) {
            self.ctx.client_host = format!("/{peer}");
        }
        self.ctx.api_version = h.api_version;
    }

    fn metadata(&self, v: i16, peer: &Peer, r: &MetadataRequest) -> MetadataResponse {
        let mut resp = MetadataResponse::default();
        let mut b = MetadataResponseBroker::default();
        let (host, port) = self.endpoint(peer);
        b.node_id = BrokerId(0);
        b.host = s(host);
        b.port = port;
        resp.brokers = vec![b];
        if v >= 2 {
            resp.cluster_id = Some(s("groupcoord"));
        }
        resp.controller_id = BrokerId(if v >= 1 { 0 } else { -1 });
        let names: Vec<String> = match &r.topics {
            None => self.topics.keys().cloned().collect(),
            Some(ts) if ts.is_empty() && v == 0 => self.topics.keys().cloned().collect(),
            Some(ts) => ts
                .iter()
                .filter_map(|t| t.name.as_ref().map(|n| n.0.to_string()))
                .collect(),
        };
        for name in names {
            let mut t = MetadataResponseTopic::default();
            t.name = Some(TopicName(s(name.clone())));
            t.is_internal = topic::is_internal(&name);
            match self.topics.get(&name) {
                Some(&n) => {
                    t.partitions = (0..n)
                        .map(|p| {
                            let mut mp = MetadataResponsePartition::default();
                            mp.partition_index = p;
                            mp.leader_id = BrokerId(0);
                            mp.leader_epoch = 0;
                            mp.replica_nodes = vec![BrokerId(0)];
                            mp.isr_nodes = vec![BrokerId(0)];
                            mp
                        })
                        .collect();
                }
                None => {
                    t.error_code = if topic::is_valid_name(&name) {
                        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
                    } else {
                        ErrorCode::INVALID_TOPIC_EXCEPTION.0
                    };
                }
            }
            resp.topics.push(t);
        }
        resp
    }

    fn list_groups(&self, r: &ListGroupsRequest) -> ListGroupsResponse {
        let states: Vec<String> = r.states_filter.iter().map(|x| snake(x.as_str())).collect();
        let types: Vec<String> = r
            .types_filter
            .iter()
            .map(|x| x.as_str().to_lowercase())
            .collect();
        let mut resp = ListGroupsResponse::default();
        resp.groups = self
            .coord
            .list_groups(&states, &types)
            .into_iter()
            .map(|g| {
                let mut l = KListedGroup::default();
                l.group_id = GroupId(s(g.group_id));
                l.protocol_type = s(g.protocol_type);
                l.group_state = s(g.group_state);
                l.group_type = s(g.group_type);
                l
            })
            .collect();
        resp
    }

    fn delete_groups(
        &mut self,
        now: Millis,
        r: &DeleteGroupsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> DeleteGroupsResponse {
        let ids: Vec<String> = r.groups_names.iter().map(|g| g.0.to_string()).collect();
        let o = self.coord.delete_groups(now, &ids);
        let res = self.absorb(o, entries);
        let mut resp = DeleteGroupsResponse::default();
        resp.results = res
            .into_iter()
            .map(|(g, e)| {
                let mut d = DeletableGroupResult::default();
                d.group_id = GroupId(s(g));
                d.error_code = e.0;
                d
            })
            .collect();
        resp
    }

    fn create_topics(
        &mut self,
        v: i16,
        r: &CreateTopicsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> CreateTopicsResponse {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for t in &r.topics {
            *counts.entry(t.name.0.as_str()).or_default() += 1;
        }
        let dups: Vec<&str> = counts
            .iter()
            .filter(|(_, c)| **c > 1)
            .map(|(n, _)| *n)
            .collect();
        let limits = self.coord.config().limits;
        let mut changes = Vec::new();
        let mut resp = CreateTopicsResponse::default();
        for t in &r.topics {
            let name = t.name.0.to_string();
            let mut res = CreatableTopicResult::default();
            res.name = t.name.clone();
            let partitions = if t.num_partitions == -1 {
                1
            } else {
                t.num_partitions
            };
            let fail = |res: &mut CreatableTopicResult, code: ErrorCode, msg: String| {
                res.error_code = code.0;
                if v >= 1 {
                    res.error_message = Some(s(msg));
                }
            };
            if dups.contains(&name.as_str()) {
                fail(
                    &mut res,
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "Create topics request contains multiple entries for the topic {name}."
                    ),
                );
            } else if !topic::is_valid_name(&name) {
                fail(
                    &mut res,
                    ErrorCode::INVALID_TOPIC_EXCEPTION,
                    format!(
                        "Topic name \"{name}\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
                    ),
                );
            } else if self.topics.contains_key(&name)
                || changes
                    .iter()
                    .any(|c| matches!(c, TopicChange::Set { name: n, .. } if *n == name))
            {
                fail(
                    &mut res,
                    ErrorCode::TOPIC_ALREADY_EXISTS,
                    format!("Topic '{name}' already exists."),
                );
            } else if partitions < 1 {
                fail(
                    &mut res,
                    ErrorCode::INVALID_PARTITIONS,
                    "Number of partitions was set to an invalid non-positive value.".to_string(),
                );
            } else if let Err(msg) = limits.check_partitions(&format!("Topic {name}"), partitions) {
                fail(&mut res, ErrorCode::INVALID_PARTITIONS, msg);
            } else if self.topics.len() + changes.len() >= limits.max_topics.max(0) as usize {
                fail(&mut res, ErrorCode::INVALID_REQUEST, limits.topics_full());
            } else if t.replication_factor != -1 && t.replication_factor != 1 {
                fail(
                    &mut res,
                    ErrorCode::INVALID_REPLICATION_FACTOR,
                    format!(
                        "Unable to replicate the partition {} time(s): The target replication factor of {} cannot be reached because only 1 broker(s) are registered.",
                        t.replication_factor, t.replication_factor
                    ),
                );
            } else {
                if v >= 5 {
                    res.num_partitions = partitions;
                    res.replication_factor = 1;
                    res.configs = Some(Vec::new());
                }
                if !r.validate_only {
                    changes.push(TopicChange::Set {
                        name: name.clone(),
                        partitions,
                    });
                }
            }
            if res.error_code != 0 && v >= 5 {
                res.num_partitions = -1;
                res.replication_factor = -1;
            }
            resp.topics.push(res);
        }
        self.change_topics(changes, entries);
        resp
    }

    fn delete_topics(
        &mut self,
        v: i16,
        r: &DeleteTopicsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> DeleteTopicsResponse {
        let mut resp = DeleteTopicsResponse::default();
        let mut changes = Vec::new();
        let names: Vec<Option<String>> = if v >= 6 {
            r.topics
                .iter()
                .map(|t| t.name.as_ref().map(|n| n.0.to_string()))
                .collect()
        } else {
            r.topic_names
                .iter()
                .map(|n| Some(n.0.to_string()))
                .collect()
        };
        for (i, name) in names.into_iter().enumerate() {
            let mut d = DeletableTopicResult::default();
            match name {
                Some(name) => {
                    d.name = Some(TopicName(s(name.clone())));
                    if self.topics.contains_key(&name)
                        && !changes
                            .iter()
                            .any(|c| matches!(c, TopicChange::Delete { name: n } if *n == name))
                    {
                        changes.push(TopicChange::Delete { name });
                    } else {
                        d.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0;
                        if v >= 5 {
                            d.error_message =
                                Some(s("This server does not host this topic-partition."));
                        }
                    }
                }
                None => {
                    // Topic ids are not tracked (Metadata reports the nil id).
                    d.topic_id = r.topics[i].topic_id;
                    d.error_code = ErrorCode::UNKNOWN_TOPIC_ID.0;
                    d.error_message = Some(s("This server does not host this topic ID."));
                }
            }
            resp.responses.push(d);
        }
        self.change_topics(changes, entries);
        resp
    }

    fn offset_commit(
        &mut self,
        now: Millis,
        v: i16,
        r: &OffsetCommitRequest,
        entries: &mut Vec<LogEntry>,
    ) -> OffsetCommitResponse {
        let input = OffsetCommitInput {
            group_id: r.group_id.0.to_string(),
            member_id: r.member_id.to_string(),
            member_epoch: r.generation_id_or_member_epoch,
            group_instance_id: r.group_instance_id.as_ref().map(|x| x.to_string()),
            api_version: v,
            transactional: false,
            topics: r
                .topics
                .iter()
                .map(|t| OffsetCommitTopic {
                    name: t.name.0.to_string(),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| OffsetCommitPartition {
                            partition: p.partition_index,
                            offset: p.committed_offset,
                            leader_epoch: p.committed_leader_epoch,
                            metadata: p.committed_metadata.as_ref().map(|m| m.to_string()),
                        })
                        .collect(),
                })
                .collect(),
        };
        let o = self.coord.offset_commit(now, &input);
        let res = self.absorb(o, entries);
        let mut resp = OffsetCommitResponse::default();
        resp.topics = res
            .into_iter()
            .map(|(t, ps)| {
                let mut rt = OffsetCommitResponseTopic::default();
                rt.name = TopicName(s(t));
                rt.partitions = ps
                    .into_iter()
                    .map(|(p, e)| {
                        let mut rp = OffsetCommitResponsePartition::default();
                        rp.partition_index = p;
                        rp.error_code = e.0;
                        rp
                    })
                    .collect();
                rt
            })
            .collect();
        resp
    }

    fn offset_fetch(&self, v: i16, r: &OffsetFetchRequest) -> OffsetFetchResponse {
        let mut resp = OffsetFetchResponse::default();
        if v >= 8 {
            for g in &r.groups {
                let input = OffsetFetchInput {
                    group_id: g.group_id.0.to_string(),
                    member_id: g.member_id.as_ref().map(|m| m.to_string()),
                    member_epoch: g.member_epoch,
                    topics: g.topics.as_ref().map(|ts| {
                        ts.iter()
                            .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                            .collect()
                    }),
                };
                let mut rg = OffsetFetchResponseGroup::default();
                rg.group_id = g.group_id.clone();
                match self.coord.offset_fetch(&input) {
                    Ok(offsets) => {
                        let mut by_topic: BTreeMap<String, Vec<OffsetFetchResponsePartitions>> =
                            BTreeMap::new();
                        for f in offsets {
                            let mut p = OffsetFetchResponsePartitions::default();
                            p.partition_index = f.partition;
                            p.committed_offset = f.offset;
                            p.committed_leader_epoch = f.leader_epoch;
                            p.metadata = Some(s(f.metadata));
                            by_topic.entry(f.topic).or_default().push(p);
                        }
                        rg.topics = by_topic
                            .into_iter()
                            .map(|(t, ps)| {
                                let mut rt = OffsetFetchResponseTopics::default();
                                rt.name = TopicName(s(t));
                                rt.partitions = ps;
                                rt
                            })
                            .collect();
                    }
                    Err(e) => rg.error_code = e.code.0,
                }
                resp.groups.push(rg);
            }
            return resp;
        }
        let input = OffsetFetchInput {
            group_id: r.group_id.0.to_string(),
            member_id: None,
            member_epoch: -1,
            topics: r.topics.as_ref().map(|ts| {
                ts.iter()
                    .map(|t| (t.name.0.to_string(), t.partition_indexes.clone()))
                    .collect()
            }),
        };
        match self.coord.offset_fetch(&input) {
            Ok(offsets) => {
                let mut by_topic: BTreeMap<String, Vec<OffsetFetchResponsePartition>> =
                    BTreeMap::new();
                for f in offsets {
                    let mut p = OffsetFetchResponsePartition::default();
                    p.partition_index = f.partition;
                    p.committed_offset = f.offset;
                    if v >= 5 {
                        p.committed_leader_epoch = f.leader_epoch;
                    }
                    p.metadata = Some(s(f.metadata));
                    by_topic.entry(f.topic).or_default().push(p);
                }
                resp.topics = by_topic
                    .into_iter()
                    .map(|(t, ps)| {
                        let mut rt = OffsetFetchResponseTopic::default();
                        rt.name = TopicName(s(t));
                        rt.partitions = ps;
                        rt
                    })
                    .collect();
            }
            Err(e) => {
                if v >= 2 {
                    resp.error_code = e.code.0;
                } else if let Some(ts) = &r.topics {
                    // v1 has no top-level error: report it on every requested partition.
                    resp.topics = ts
                        .iter()
                        .map(|t| {
                            let mut rt = OffsetFetchResponseTopic::default();
                            rt.name = t.name.clone();
                            rt.partitions = t
                                .partition_indexes
                                .iter()
                                .map(|&p| {
                                    let mut rp = OffsetFetchResponsePartition::default();
                                    rp.partition_index = p;
                                    rp.committed_offset = -1;
                                    rp.error_code = e.code.0;
                                    rp
                                })
                                .collect();
                            rt
                        })
                        .collect();
                }
            }
        }
        resp
    }

    /// The group ids whose state a log batch touched (for the live view).
    pub fn touched(entries: &[LogEntry]) -> bool {
        entries.iter().any(|e| match e {
            LogEntry::Records(rs) => rs.iter().any(|r| !matches!(r, Record::OffsetCommit { .. })),
            LogEntry::Topics(_) => true,
            LogEntry::Scram(_) => false,
        })
    }
}

/// `Stable` -> `stable`, `NotReady` -> `not_ready`.
fn snake(state: &str) -> String {
    let mut out = String::new();
    for (i, c) in state.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

pub fn find_coordinator(
    host: &str,
    port: i32,
    v: i16,
    r: &FindCoordinatorRequest,
) -> FindCoordinatorResponse {
    let mut resp = FindCoordinatorResponse::default();
    let key_type_ok = r.key_type == 0;
    if v >= 4 {
        resp.coordinators = r
            .coordinator_keys
            .iter()
            .map(|k| {
                let mut c = find_coordinator_response::Coordinator::default();
                c.key = k.clone();
                if key_type_ok {
                    c.node_id = BrokerId(0);
                    c.host = s(host);
                    c.port = port;
                } else {
                    c.node_id = BrokerId(-1);
                    c.error_code = ErrorCode::COORDINATOR_NOT_AVAILABLE.0;
                    c.error_message = Some(s("This server only coordinates groups."));
                }
                c
            })
            .collect();
    } else if key_type_ok {
        resp.node_id = BrokerId(0);
        resp.host = s(host);
        resp.port = port;
    } else {
        resp.node_id = BrokerId(-1);
        resp.error_code = ErrorCode::COORDINATOR_NOT_AVAILABLE.0;
        if v >= 1 {
            resp.error_message = Some(s("This server only coordinates groups."));
        }
    }
    resp
}

pub fn fetch_empty(r: &FetchRequest) -> FetchResponse {
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    let mut resp = FetchResponse::default();
    resp.responses = r
        .topics
        .iter()
        .map(|t| {
            let mut ft = FetchableTopicResponse::default();
            ft.topic = t.topic.clone();
            ft.topic_id = t.topic_id;
            ft.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut pd = PartitionData::default();
                    pd.partition_index = p.partition;
                    pd.high_watermark = 0;
                    pd.last_stable_offset = 0;
                    pd.log_start_offset = 0;
                    pd.records = Some(bytes::Bytes::new());
                    pd
                })
                .collect();
            ft
        })
        .collect();
    resp
}
