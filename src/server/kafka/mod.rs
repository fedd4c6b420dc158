//! The Kafka request handling, pure: [`State`] holds the coordinator, the topic registry and the
//! small data plane (`data_plane`), and [`State::handle`] answers one decoded request at a given
//! time with the response and the log entries the caller must make durable before sending it. No
//! sockets, no clock, no threads: the owner task drives it, and the unit tests (`tests.rs`) call it
//! directly.

mod acls;
mod admin;
mod authz;
#[cfg(test)]
mod authz_tests;
pub(crate) mod classic;
pub(crate) mod consumer;
pub(crate) mod data_plane;
pub(crate) mod prevalidate;
#[cfg(test)]
mod prevalidate_tests;
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

use crate::config_keys::TopicDefaults;
use crate::coordinator::{
    Coordinator, OffsetCommitInput, OffsetCommitPartition, OffsetCommitTopic, OffsetFetchInput,
    Outcome, RequestContext, TimerKey,
};
use crate::server::acl::{Authorizer, Operation, ResourceType};
use crate::server::peer::Peer;
use crate::server::security::admin as scram_admin;
use crate::server::security::scram::ScramCredentials;
use crate::server::storage::log::{LogEntry, ScramChange, TopicChange};
use crate::server::wire::{Header, Req, RequestKind, Resp, ResponseKind};
use std::sync::{Arc, RwLock};

fn s(v: impl Into<String>) -> StrBytes {
    StrBytes::from_string(v.into())
}

/// Add a partition's result under its topic (a topic's first result opens its entry).
fn add_result(
    results: &mut Vec<(String, Vec<(i32, ErrorCode)>)>,
    topic: &str,
    partition: i32,
    code: ErrorCode,
) {
    match results.iter_mut().find(|(t, _)| t == topic) {
        Some((_, ps)) => ps.push((partition, code)),
        None => results.push((topic.to_string(), vec![(partition, code)])),
    }
}

/// Counters the owner maintains (exported by /metrics).
#[derive(Debug, Default, Clone)]
pub(crate) struct Counters {
    pub heartbeats: u64,
    pub requests: u64,
}

/// What the owner task owns.
pub struct State {
    /// The coordinator core.
    pub coord: Coordinator,
    pub(crate) topics: BTreeMap<String, i32>,
    pub(crate) host: String,
    pub(crate) port: i32,
    pub(crate) counters: Counters,
    /// In-memory partition logs (Produce/Fetch/ListOffsets/...; not durable).
    pub(crate) data: data_plane::DataPlane,
    /// The last heartbeat's request context, reused while client id and host stay the same
    /// (consecutive requests mostly come from one connection's batch): no allocation per
    /// heartbeat.
    ctx: RequestContext,
    /// JoinGroup / SyncGroup requests waiting for their answer.
    deferred: classic::Deferred,
    /// The ACLs and authorizer settings (off unless `authorizer.class.name` is set).
    pub(crate) authorizer: Authorizer,
    /// `auto.create.topics.enable`, `num.partitions`.
    pub(crate) topic_defaults: TopicDefaults,
    /// Group configs set over the wire (IncrementalAlterConfigs), by group and key.
    pub(crate) group_configs: BTreeMap<String, BTreeMap<String, String>>,
    /// The group overrides of the properties file (the dynamic ones apply on top).
    static_group_overrides: BTreeMap<String, crate::config::GroupConfig>,
    /// SCRAM credentials, replayed from the log; shared with the connections' SASL exchanges
    /// (which only read them).
    pub(crate) scram: Arc<RwLock<ScramCredentials>>,
    /// Advertised (host, port) per listener name; a listener not named here advertises
    /// `host`/`port`.
    pub(crate) advertised: BTreeMap<String, (String, i32)>,
}

/// The result of one request.
pub struct Handled {
    /// The answer (possibly [`Resp::Deferred`]).
    pub resp: Resp,
    /// The log entries the request wrote (appended before the answer is released).
    pub entries: Vec<LogEntry>,
}

impl State {
    /// A handler around `coord`, advertising `host:port` as the coordinator (node 0).
    pub fn new(coord: Coordinator, host: String, port: i32) -> State {
        let mut data = data_plane::DataPlane::new();
        data.set_max_bytes(coord.config().limits.max_data_plane_mb.max(0) as usize * 1024 * 1024);
        State {
            static_group_overrides: coord.config().group_overrides.clone(),
            coord,
            topics: BTreeMap::new(),
            host,
            port,
            counters: Counters::default(),
            data,
            ctx: RequestContext::default(),
            deferred: classic::Deferred::default(),
            authorizer: Authorizer::default(),
            topic_defaults: TopicDefaults::default(),
            group_configs: BTreeMap::new(),
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
        self.data.set_offset_floors(self.coord.offset_floors());
    }

    /// With several owners: the part of a registry entry another owner wrote that is still news
    /// here, on owner 0 (a topic it asked for may exist by now, made by someone else).
    pub(crate) fn registry_news(&self, entry: LogEntry) -> Option<LogEntry> {
        match entry {
            LogEntry::Topics(ts) => {
                let ts: Vec<TopicChange> = ts
                    .into_iter()
                    .filter(|t| match t {
                        TopicChange::Set { name, .. } => !self.topics.contains_key(name),
                        TopicChange::Delete { .. } => false,
                    })
                    .collect();
                (!ts.is_empty()).then_some(LogEntry::Topics(ts))
            }
            LogEntry::Records(_) => None,
            other => Some(other),
        }
    }

    /// With several owners, after start-up: take owner 0's registries (topics, ACLs, group
    /// configs), which only its log holds, into this owner's state.
    pub(crate) fn adopt_registries(&mut self, from: &State) -> Result<(), String> {
        let topics: Vec<TopicChange> = from
            .topics
            .iter()
            .map(|(name, partitions)| TopicChange::Set {
                name: name.clone(),
                partitions: *partitions,
            })
            .collect();
        self.apply_topics(&topics);
        self.authorizer = from.authorizer.clone();
        let configs: Vec<crate::server::storage::log::GroupConfigChange> = from
            .group_configs
            .iter()
            .flat_map(|(group, keys)| {
                keys.iter().map(
                    |(key, value)| crate::server::storage::log::GroupConfigChange {
                        group: group.clone(),
                        key: key.clone(),
                        value: Some(value.clone()),
                    },
                )
            })
            .collect();
        self.replay_group_configs(&configs)
    }

    /// The highest committed offset of every partition this owner's groups committed (the data
    /// plane's offset floors: with several owners, owner 0's data plane takes every owner's).
    pub(crate) fn committed_floors(&self) -> Vec<((String, i32), i64)> {
        self.coord.offset_floors()
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

    /// Accept an assignment computed off the owner (see `Coordinator::complete_assignment`);
    /// returns its log entries (none when the group moved on meanwhile).
    pub fn complete_assignment(
        &mut self,
        now: Millis,
        result: crate::coordinator::AssignmentResult,
    ) -> Vec<LogEntry> {
        let mut entries = Vec::new();
        let o = self.coord.complete_assignment(now, result);
        self.absorb(o, &mut entries);
        entries
    }

    /// Fire due timers; returns their log entries (the owner fires them one by one with
    /// [`State::fire_next_timer`], to look at each classic group after its timer).
    pub fn fire_timers(&mut self, now: Millis) -> Vec<LogEntry> {
        let mut entries = Vec::new();
        while self.fire_next_timer(now, &mut entries).is_some() {}
        entries
    }

    /// Fire the first timer due at `now`, if any: its key; its log entries join `entries`.
    pub fn fire_next_timer(
        &mut self,
        now: Millis,
        entries: &mut Vec<LogEntry>,
    ) -> Option<TimerKey> {
        let (key, o) = self.coord.fire_next_due(now)?;
        self.absorb(o, entries);
        Some(key)
    }

    /// Handle one request from `peer` at `now`: the answer and the log entries it wrote.
    /// Pure: no I/O, no clock.
    pub fn handle(&mut self, now: Millis, h: &Header, peer: &Peer, req: &Req) -> Handled {
        self.counters.requests += 1;
        let mut entries = Vec::new();
        let v = h.api_version;
        if let Some(resp) = self.refused(h, peer, req) {
            return Handled { resp, entries };
        }
        let resp = match req {
            Req::Heartbeat(r) => {
                self.counters.heartbeats += 1;
                Resp::Heartbeat(self.heartbeat(now, h, peer, r, &mut entries))
            }
            Req::Describe(r) => Resp::Describe(if self.coord.config().streams_enabled {
                self.streams_describe(peer, r, v)
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
                RequestKind::CreateAcls(r) => {
                    ResponseKind::CreateAcls(self.create_acls(peer, r, &mut entries))
                }
                RequestKind::DescribeAcls(r) => {
                    ResponseKind::DescribeAcls(self.describe_acls(peer, r))
                }
                RequestKind::DeleteAcls(r) => {
                    ResponseKind::DeleteAcls(self.delete_acls(peer, r, &mut entries))
                }
                RequestKind::DescribeConfigs(r) => {
                    ResponseKind::DescribeConfigs(self.describe_configs(peer, v, r))
                }
                RequestKind::IncrementalAlterConfigs(r) => ResponseKind::IncrementalAlterConfigs(
                    self.incremental_alter_configs(now, peer, r, &mut entries),
                ),
                RequestKind::LeaveGroup(r) => {
                    ResponseKind::LeaveGroup(self.leave_group(now, v, r, &mut entries))
                }
                RequestKind::OffsetDelete(r) => {
                    ResponseKind::OffsetDelete(self.offset_delete(now, peer, r, &mut entries))
                }
                RequestKind::ConsumerGroupHeartbeat(r) => ResponseKind::ConsumerGroupHeartbeat(
                    self.consumer_group_heartbeat(now, h, peer, r, &mut entries),
                ),
                RequestKind::ConsumerGroupDescribe(r) => {
                    ResponseKind::ConsumerGroupDescribe(self.consumer_group_describe(v, r))
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
                RequestKind::Metadata(r) => {
                    ResponseKind::Metadata(self.metadata(peer, v, r, &mut entries))
                }
                RequestKind::FindCoordinator(r) => {
                    let (host, port) = self.endpoint(peer);
                    ResponseKind::FindCoordinator(find_coordinator(host, port, v, r, |g| {
                        self.allowed(peer, Operation::Describe, ResourceType::Group, g)
                    }))
                }
                RequestKind::ListGroups(r) => ResponseKind::ListGroups(self.list_groups(peer, r)),
                RequestKind::DescribeGroups(r) => {
                    ResponseKind::DescribeGroups(self.describe_groups(peer, v, r))
                }
                RequestKind::DeleteGroups(r) => {
                    ResponseKind::DeleteGroups(self.delete_groups(now, peer, r, &mut entries))
                }
                RequestKind::CreateTopics(r) => {
                    ResponseKind::CreateTopics(self.create_topics(peer, v, r, &mut entries))
                }
                RequestKind::DeleteTopics(r) => {
                    ResponseKind::DeleteTopics(self.delete_topics(peer, v, r, &mut entries))
                }
                RequestKind::OffsetCommit(r) => {
                    ResponseKind::OffsetCommit(self.offset_commit(now, peer, v, r, &mut entries))
                }
                RequestKind::OffsetFetch(r) => {
                    ResponseKind::OffsetFetch(self.offset_fetch(peer, v, r))
                }
                RequestKind::ListOffsets(r) => {
                    ResponseKind::ListOffsets(self.list_offsets(peer, r, v))
                }
                RequestKind::Fetch(r) => ResponseKind::Fetch(self.fetch(peer, r, v)),
                RequestKind::Produce(r) => ResponseKind::Produce(self.produce(peer, r, v)),
                RequestKind::InitProducerId(r) => {
                    ResponseKind::InitProducerId(self.data.init_producer_id(r, v))
                }
                RequestKind::DeleteRecords(r) => {
                    ResponseKind::DeleteRecords(self.delete_records(peer, r, v))
                }
                RequestKind::OffsetForLeaderEpoch(r) => {
                    ResponseKind::OffsetForLeaderEpoch(self.offset_for_leader_epoch(peer, r, v))
                }
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
        let mut o = self.coord.streams_group_heartbeat(now, &self.ctx, r);
        let names: Vec<String> = o.topics_to_create.iter().map(|t| t.name.clone()).collect();
        let refused: Vec<String> = self
            .uncreatable(peer, &names)
            .into_iter()
            .map(str::to_string)
            .collect();
        if !refused.is_empty() {
            // Kafka creates none of them then, and tells the member why.
            o.topics_to_create.clear();
            let refused: Vec<&str> = refused.iter().map(String::as_str).collect();
            authz::note_uncreatable(&mut o.response, &refused);
        }
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

    /// Metadata: DESCRIBE per topic (refused topics answered TOPIC_AUTHORIZATION_FAILED, or
    /// left out of an all-topics answer), and Kafka's auto-creation of unknown topics when the
    /// request allows it and `auto.create.topics.enable` is on (CREATE on the cluster or the
    /// topic): the topic is created and answered LEADER_NOT_AVAILABLE, as a broker does while
    /// the controller creates it, so the client asks again.
    fn metadata(
        &mut self,
        peer: &Peer,
        v: i16,
        r: &MetadataRequest,
        entries: &mut Vec<LogEntry>,
    ) -> MetadataResponse {
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
        let all_topics = match &r.topics {
            None => true,
            Some(ts) => ts.is_empty() && v == 0,
        };
        let mut names: Vec<String> = if all_topics {
            self.topics.keys().cloned().collect()
        } else {
            let mut seen = std::collections::BTreeSet::new();
            r.topics
                .iter()
                .flatten()
                .filter_map(|t| match &t.name {
                    Some(n) => Some(n.0.to_string()),
                    // v10+: a topic asked for by id (consumer group assignments name topics by
                    // id, docs/consumer-protocol.md §K1); an unknown id is left out.
                    None => self
                        .topics
                        .keys()
                        .find(|n| consumer::uuid_of_name(&self.coord, n) == t.topic_id)
                        .cloned(),
                })
                .filter(|n| seen.insert(n.clone()))
                .collect()
        };
        let denied_describe: Vec<String> = names
            .iter()
            .filter(|n| !self.topic_allowed(peer, Operation::Describe, n))
            .cloned()
            .collect();
        names.retain(|n| !denied_describe.contains(n));
        let auto_create = !all_topics
            && (v < 4 || r.allow_auto_topic_creation)
            && self.topic_defaults.auto_create_topics_enable;
        let mut denied_create = Vec::new();
        if auto_create && !self.cluster_allowed(peer, Operation::Create) {
            let missing: Vec<String> = names
                .iter()
                .filter(|n| !self.topics.contains_key(*n))
                .cloned()
                .collect();
            denied_create = missing
                .into_iter()
                .filter(|n| !self.topic_allowed(peer, Operation::Create, n))
                .collect();
            names.retain(|n| !denied_create.contains(n));
        }
        let limits = self.coord.config().limits;
        let mut creates = Vec::new();
        for name in names {
            let mut t = MetadataResponseTopic::default();
            t.name = Some(TopicName(s(name.clone())));
            t.is_internal = topic::is_internal(&name);
            if v >= 10 && self.topics.contains_key(&name) {
                t.topic_id = consumer::uuid_of_name(&self.coord, &name);
            }
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
                None if !topic::is_valid_name(&name) => {
                    t.error_code = ErrorCode::INVALID_TOPIC_EXCEPTION.0;
                }
                None if auto_create
                    && !topic::is_internal(&name)
                    && self.topics.len() + creates.len() < limits.max_topics.max(0) as usize
                    && limits
                        .check_partitions(&name, self.topic_defaults.num_partitions)
                        .is_ok() =>
                {
                    creates.push(TopicChange::Set {
                        name: name.clone(),
                        partitions: self.topic_defaults.num_partitions,
                    });
                    t.error_code = ErrorCode::LEADER_NOT_AVAILABLE.0;
                }
                None => t.error_code = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0,
            }
            resp.topics.push(t);
        }
        self.change_topics(creates, entries);
        let refused = |name: String, internal: bool| {
            let mut t = MetadataResponseTopic::default();
            t.is_internal = internal;
            t.name = Some(TopicName(s(name)));
            t.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
            t
        };
        for name in denied_create {
            let internal = topic::is_internal(&name);
            resp.topics.push(refused(name, internal));
        }
        if !all_topics {
            resp.topics
                .extend(denied_describe.into_iter().map(|n| refused(n, false)));
        }
        resp
    }

    /// ListGroups: everything with DESCRIBE on the cluster, else only the groups the caller
    /// may DESCRIBE.
    fn list_groups(&self, peer: &Peer, r: &ListGroupsRequest) -> ListGroupsResponse {
        let everything = self.cluster_allowed(peer, Operation::Describe);
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
            .filter(|g| {
                everything
                    || self.allowed(peer, Operation::Describe, ResourceType::Group, &g.group_id)
            })
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

    /// DeleteGroups: DELETE on each group; the refused ones are answered after the others.
    fn delete_groups(
        &mut self,
        now: Millis,
        peer: &Peer,
        r: &DeleteGroupsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> DeleteGroupsResponse {
        let (ids, denied): (Vec<String>, Vec<String>) = r
            .groups_names
            .iter()
            .map(|g| g.0.to_string())
            .partition(|g| self.allowed(peer, Operation::Delete, ResourceType::Group, g));
        let res = if ids.is_empty() && !denied.is_empty() {
            Vec::new()
        } else {
            let o = self.coord.delete_groups(now, &ids);
            self.absorb(o, entries)
        };
        let refused = denied
            .into_iter()
            .map(|g| (g, ErrorCode::GROUP_AUTHORIZATION_FAILED));
        let mut resp = DeleteGroupsResponse::default();
        resp.results = res
            .into_iter()
            .chain(refused)
            .map(|(g, e)| {
                let mut d = DeletableGroupResult::default();
                d.group_id = GroupId(s(g));
                d.error_code = e.0;
                d
            })
            .collect();
        resp
    }

    /// CreateTopics: CREATE on the cluster, else on each topic (refused: "Authorization
    /// failed.", as the controller answers).
    fn create_topics(
        &mut self,
        peer: &Peer,
        v: i16,
        r: &CreateTopicsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> CreateTopicsResponse {
        let cluster_create = self.cluster_allowed(peer, Operation::Create);
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
                self.topic_defaults.num_partitions
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
            } else if !cluster_create && !self.topic_allowed(peer, Operation::Create, &name) {
                fail(
                    &mut res,
                    ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                    "Authorization failed.".to_string(),
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

    /// DeleteTopics: DELETE on the cluster or the topic; a topic the caller may not DESCRIBE
    /// is refused the same way whether it exists or not.
    fn delete_topics(
        &mut self,
        peer: &Peer,
        v: i16,
        r: &DeleteTopicsRequest,
        entries: &mut Vec<LogEntry>,
    ) -> DeleteTopicsResponse {
        let cluster_delete = self.cluster_allowed(peer, Operation::Delete);
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
                    let may = |op| cluster_delete || self.topic_allowed(peer, op, &name);
                    if !may(Operation::Describe)
                        || (self.topics.contains_key(&name) && !may(Operation::Delete))
                    {
                        d.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.0;
                        if v >= 5 {
                            d.error_message = Some(s("Topic authorization failed."));
                        }
                    } else if self.topics.contains_key(&name)
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

    /// OffsetCommit (READ on the group is checked by [`State::refused`]): READ on each topic;
    /// the partitions of refused topics are answered TOPIC_AUTHORIZATION_FAILED.
    fn offset_commit(
        &mut self,
        now: Millis,
        peer: &Peer,
        v: i16,
        r: &OffsetCommitRequest,
        entries: &mut Vec<LogEntry>,
    ) -> OffsetCommitResponse {
        let (allowed, denied): (Vec<_>, Vec<_>) = r
            .topics
            .iter()
            .partition(|t| self.topic_allowed(peer, Operation::Read, &t.name));
        let mut refused = OffsetCommitRequest::default();
        refused.topics = denied.into_iter().cloned().collect();
        let refused = offset_commit_error(&refused, ErrorCode::TOPIC_AUTHORIZATION_FAILED);
        if allowed.is_empty() && !refused.topics.is_empty() {
            return refused;
        }
        // As Kafka's KafkaApis: a partition of a topic the broker does not have is answered
        // UNKNOWN_TOPIC_OR_PARTITION before the coordinator sees the request (listed first); when
        // nothing is left, the coordinator is not asked at all (no group checks).
        let mut results: Vec<(String, Vec<(i32, ErrorCode)>)> = Vec::new();
        let mut known = Vec::new();
        for t in allowed {
            let name = t.name.0.to_string();
            let count = self.topics.get(&name).copied();
            let mut valid = Vec::new();
            for p in &t.partitions {
                if count.is_some_and(|n| (0..n).contains(&p.partition_index)) {
                    valid.push(OffsetCommitPartition {
                        partition: p.partition_index,
                        offset: p.committed_offset,
                        leader_epoch: p.committed_leader_epoch,
                        metadata: p.committed_metadata.as_ref().map(|m| m.to_string()),
                    });
                } else {
                    add_result(
                        &mut results,
                        &name,
                        p.partition_index,
                        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                    );
                }
            }
            if !valid.is_empty() {
                known.push(OffsetCommitTopic {
                    name,
                    partitions: valid,
                });
            }
        }
        if !known.is_empty() {
            let input = OffsetCommitInput {
                group_id: r.group_id.0.to_string(),
                member_id: r.member_id.to_string(),
                member_epoch: r.generation_id_or_member_epoch,
                group_instance_id: r.group_instance_id.as_ref().map(|x| x.to_string()),
                api_version: v,
                transactional: false,
                topics: known,
            };
            let o = self.coord.offset_commit(now, &input);
            for (t, ps) in self.absorb(o, entries) {
                for (p, e) in ps {
                    if e != ErrorCode::NONE {
                        tracing::debug!(group = %r.group_id.0, member = %r.member_id,
                            epoch = r.generation_id_or_member_epoch, topic = %t, partition = p,
                            "OffsetCommit answered {}", e.name());
                    }
                    add_result(&mut results, &t, p, e);
                }
            }
        }
        let mut resp = OffsetCommitResponse::default();
        resp.topics = results
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
        resp.topics.extend(refused.topics);
        resp
    }

    fn offset_fetch(&self, peer: &Peer, v: i16, r: &OffsetFetchRequest) -> OffsetFetchResponse {
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
                match self.fetch_offsets(peer, &input) {
                    Ok(offsets) => {
                        let mut by_topic: BTreeMap<String, Vec<OffsetFetchResponsePartitions>> =
                            BTreeMap::new();
                        for (f, code) in offsets {
                            let mut p = OffsetFetchResponsePartitions::default();
                            p.error_code = code.0;
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
        match self.fetch_offsets(peer, &input) {
            Ok(offsets) => {
                let mut by_topic: BTreeMap<String, Vec<OffsetFetchResponsePartition>> =
                    BTreeMap::new();
                for (f, code) in offsets {
                    let mut p = OffsetFetchResponsePartition::default();
                    p.error_code = code.0;
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

    /// OffsetFetch of one group as Kafka authorizes it: DESCRIBE on the group, then DESCRIBE
    /// per topic (requested topics refused: TOPIC_AUTHORIZATION_FAILED on their partitions;
    /// all topics: the refused ones left out).
    fn fetch_offsets(
        &self,
        peer: &Peer,
        input: &OffsetFetchInput,
    ) -> Result<Vec<(crate::coordinator::FetchedOffset, ErrorCode)>, crate::error::ApiError> {
        if !self.allowed(
            peer,
            Operation::Describe,
            ResourceType::Group,
            &input.group_id,
        ) {
            return Err(crate::error::ApiError {
                code: ErrorCode::GROUP_AUTHORIZATION_FAILED,
                message: None,
            });
        }
        let may = |t: &str| self.topic_allowed(peer, Operation::Describe, t);
        let Some(topics) = &input.topics else {
            let all = self.coord.offset_fetch(input)?;
            return Ok(all
                .into_iter()
                .filter(|f| may(&f.topic))
                .map(|f| (f, ErrorCode::NONE))
                .collect());
        };
        let (allowed, denied): (Vec<_>, Vec<_>) = topics.iter().cloned().partition(|(t, _)| may(t));
        let mut out = Vec::new();
        if !allowed.is_empty() || denied.is_empty() {
            let input = OffsetFetchInput {
                topics: Some(allowed),
                ..input.clone()
            };
            out = self
                .coord
                .offset_fetch(&input)?
                .into_iter()
                .map(|f| (f, ErrorCode::NONE))
                .collect();
        }
        for (topic, partitions) in denied {
            for partition in partitions {
                let f = crate::coordinator::FetchedOffset {
                    topic: topic.clone(),
                    partition,
                    offset: -1,
                    leader_epoch: -1,
                    metadata: String::new(),
                };
                out.push((f, ErrorCode::TOPIC_AUTHORIZATION_FAILED));
            }
        }
        Ok(out)
    }

    /// The group ids whose state a log batch touched (for the live view).
    pub fn touched(entries: &[LogEntry]) -> bool {
        entries.iter().any(|e| match e {
            LogEntry::Records(rs) => rs.iter().any(|r| !matches!(r, Record::OffsetCommit { .. })),
            LogEntry::Topics(_) | LogEntry::GroupConfigs(_) => true,
            LogEntry::Acls(_) | LogEntry::Scram(_) => false,
        })
    }
}

/// An OffsetCommit answer with `code` on every partition of the request.
fn offset_commit_error(r: &OffsetCommitRequest, code: ErrorCode) -> OffsetCommitResponse {
    let mut resp = OffsetCommitResponse::default();
    resp.topics = r
        .topics
        .iter()
        .map(|t| {
            let mut rt = OffsetCommitResponseTopic::default();
            rt.name = t.name.clone();
            rt.partitions = t
                .partitions
                .iter()
                .map(|p| {
                    let mut rp = OffsetCommitResponsePartition::default();
                    rp.partition_index = p.partition_index;
                    rp.error_code = code.0;
                    rp
                })
                .collect();
            rt
        })
        .collect();
    resp
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

/// FindCoordinator; `may_describe(group)` is the caller's DESCRIBE on a group key (refused:
/// GROUP_AUTHORIZATION_FAILED and no node, as Kafka answers).
pub(crate) fn find_coordinator(
    host: &str,
    port: i32,
    v: i16,
    r: &FindCoordinatorRequest,
    may_describe: impl Fn(&str) -> bool,
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
                if key_type_ok && !may_describe(k) {
                    c.node_id = BrokerId(-1);
                    c.host = s("");
                    c.port = -1;
                    c.error_code = ErrorCode::GROUP_AUTHORIZATION_FAILED.0;
                } else if key_type_ok {
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
    } else if key_type_ok && !may_describe(&r.key) {
        resp.node_id = BrokerId(-1);
        resp.host = s("");
        resp.port = -1;
        resp.error_code = ErrorCode::GROUP_AUTHORIZATION_FAILED.0;
        if v >= 1 {
            resp.error_message = Some(s("Group authorization failed."));
        }
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
