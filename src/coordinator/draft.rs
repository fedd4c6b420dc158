//! The draft KIP-1071 design as a dialect (docs/draft-dialect.md): members join with a topology
//! id instead of the topology, a group without a topology is INITIALIZING, and the member the
//! coordinator asks sends the topology once with StreamsGroupInitialize.
//!
//! Only the simulation and the scenario runner speak it; the Kafka wire of `groupcoord serve`
//! keeps Kafka 4.4's heartbeat. Everything after the initialization is the shipped heartbeat
//! path: a draft join is a shipped join without the topology (§D2).

use serde::{Deserialize, Serialize};

use super::heartbeat::{self, JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH};
use super::{Coordinator, Outcome, RequestContext, TimerKey};
use crate::error::{ApiError, ErrorCode};
use crate::protocol::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, Topology, status_code,
};
use crate::records::{GroupMetadataValue, Record};
use crate::topology::{self, StreamsTopology};
use crate::types::Millis;
use crate::util::sort;

/// Which design of KIP-1071 the streams clients speak (docs/draft-dialect.md §D1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// Kafka 4.4: the topology travels in the joining heartbeat.
    #[default]
    Shipped,
    /// The KIP's draft: a topology id in the heartbeat, StreamsGroupInitialize for the topology.
    Draft,
}

/// A draft StreamsGroupHeartbeat: the shipped fields without `topology`, plus the topology id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DraftHeartbeatRequest {
    /// The shipped fields; `topology` must be null.
    pub heartbeat: StreamsGroupHeartbeatRequest,
    /// Sent only with epoch 0, non-empty then (§D2).
    pub topology_id: Option<String>,
}

/// A draft StreamsGroupHeartbeat response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DraftHeartbeatResponse {
    /// The shipped fields.
    pub heartbeat: StreamsGroupHeartbeatResponse,
    /// This member must send StreamsGroupInitialize (§D3).
    pub should_initialize_topology: bool,
    /// The group's topology id on a join; empty while INITIALIZING; null otherwise.
    pub group_topology_id: Option<String>,
}

/// StreamsGroupInitialize: the topology of a group (§D5).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DraftInitializeRequest {
    /// The group.
    pub group_id: String,
    /// The topology (its epoch is ignored: the draft has no topology epochs).
    pub topology: Topology,
}

/// StreamsGroupInitialize's answer. The draft never numbered its new error codes, so errors go
/// by name (§D5).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DraftInitializeResponse {
    /// `NONE` or the error's name.
    pub error: String,
    /// The error message, if any.
    pub error_message: Option<String>,
}

/// The topology id a client derives from its topology and the coordinator from the stored one
/// (§D2): a hash of the subtopologies, so equal topologies have equal ids.
pub fn topology_id(topology: &Topology) -> String {
    stored_topology_id(&StreamsTopology::from_request(topology))
}

fn stored_topology_id(t: &StreamsTopology) -> String {
    let json = serde_json::to_vec(&t.subtopologies).unwrap_or_default();
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&json))
}

fn init_error(name: &str, message: impl Into<String>) -> DraftInitializeResponse {
    DraftInitializeResponse {
        error: name.to_string(),
        error_message: Some(message.into()),
    }
}

fn draft_response(heartbeat: StreamsGroupHeartbeatResponse) -> DraftHeartbeatResponse {
    DraftHeartbeatResponse {
        heartbeat,
        ..Default::default()
    }
}

impl Coordinator {
    /// Handle a draft StreamsGroupHeartbeat (docs/draft-dialect.md §D2-§D4).
    pub fn draft_heartbeat(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &DraftHeartbeatRequest,
    ) -> Outcome<DraftHeartbeatResponse> {
        let hb = &req.heartbeat;
        let joining = hb.member_epoch == JOIN_EPOCH;
        let invalid = if hb.topology.is_some() {
            Some("Topology is sent with StreamsGroupInitialize in the draft dialect.")
        } else if joining
            && req
                .topology_id
                .as_deref()
                .is_none_or(|t| t.trim().is_empty())
        {
            Some("TopologyId must be non-empty when (re-)joining.")
        } else if !joining && req.topology_id.is_some() {
            Some("TopologyId can only be provided when (re-)joining.")
        } else {
            None
        };
        if let Some(m) = invalid {
            let e = ApiError::invalid_request(m);
            return Outcome::new(draft_response(heartbeat::error_response(&e)));
        }
        let leaving = hb.member_epoch == LEAVE_EPOCH || hb.member_epoch == STATIC_LEAVE_EPOCH;
        let group = self.groups.streams(&hb.group_id);
        let stored = group.and_then(|g| g.topology.as_ref());
        let other_type = self
            .groups
            .get(&hb.group_id)
            .is_some_and(|g| g.as_streams().is_none());
        match stored {
            _ if leaving || other_type || !self.config.streams_enabled => {
                let out = self.heartbeat_in_dialect(now, ctx, hb, false);
                map_outcome(out, draft_response)
            }
            Some(t) => {
                let group_id = stored_topology_id(t);
                if joining && req.topology_id.as_deref() != Some(group_id.as_str()) {
                    return self.inconsistent_topology(hb, &group_id);
                }
                let out = self.heartbeat_in_dialect(now, ctx, hb, false);
                map_outcome(out, |r| DraftHeartbeatResponse {
                    group_topology_id: (joining && r.error_code == 0).then_some(group_id),
                    ..draft_response(r)
                })
            }
            None => self
                .heartbeat_while_initializing(now, ctx, hb)
                .unwrap_or_else(|e| Outcome::new(draft_response(heartbeat::error_response(&e)))),
        }
    }

    /// §D4: a join whose topology id is not the group's is not admitted; a member that joined
    /// while the group was INITIALIZING is removed (it would get tasks of a topology it does not
    /// run).
    fn inconsistent_topology(
        &mut self,
        hb: &StreamsGroupHeartbeatRequest,
        group_topology_id: &str,
    ) -> Outcome<DraftHeartbeatResponse> {
        let fenced = match self.fence_member(&hb.group_id, &hb.member_id) {
            Ok(f) => f,
            Err(e) => return Outcome::new(draft_response(heartbeat::error_response(&e))),
        };
        let response = StreamsGroupHeartbeatResponse {
            member_id: hb.member_id.clone(),
            member_epoch: JOIN_EPOCH,
            heartbeat_interval_ms: self.config.for_group(&hb.group_id).heartbeat_interval_ms,
            status: Some(vec![heartbeat::status(
                status_code::INCONSISTENT_TOPOLOGY,
                format!(
                    "The topology id of the member is inconsistent with the topology id {} of \
                     streams group {}.",
                    group_topology_id, hb.group_id
                ),
            )]),
            ..Default::default()
        };
        Outcome {
            response: DraftHeartbeatResponse {
                heartbeat: response,
                should_initialize_topology: false,
                group_topology_id: Some(group_topology_id.to_string()),
            },
            records: fenced.records,
            timers: fenced.timers,
            topics_to_create: Vec::new(),
        }
    }

    /// §D3: the group has no topology. A join registers the member (MemberMetadata and a group
    /// epoch bump when it is new or changed); the member with the smallest id is asked to
    /// initialize; every member stays at epoch 0 without tasks.
    fn heartbeat_while_initializing(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        hb: &StreamsGroupHeartbeatRequest,
    ) -> Result<Outcome<DraftHeartbeatResponse>, ApiError> {
        self.config.limits.check_heartbeat(hb)?;
        heartbeat::validate_request(hb, false)?;
        let gid = &hb.group_id;
        let cfg = self.config.for_group(gid);
        let group = self.groups.streams(gid);
        let existing = group.and_then(|g| g.members.get(&hb.member_id));
        if hb.member_epoch != JOIN_EPOCH {
            return Err(match existing {
                Some(m) => heartbeat::fenced_epoch("greater", hb.member_epoch, m.member_epoch),
                None if group.is_none() => ApiError::new(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Streams group {gid} not found."),
                ),
                None => ApiError::new(
                    ErrorCode::UNKNOWN_MEMBER_ID,
                    format!("Member {} is not a member of group {gid}.", hb.member_id),
                ),
            });
        }
        if group.is_none() {
            self.config.limits.check_new_group(self.groups.len())?;
        }
        let members = group.map_or(0, |g| g.members.len());
        if existing.is_none() && members >= self.config.max_size.max(0) as usize {
            return Err(ApiError::new(
                ErrorCode::GROUP_MAX_SIZE_REACHED,
                format!(
                    "The streams group has reached its maximum capacity of {} members.",
                    self.config.max_size
                ),
            ));
        }
        let mut member = existing
            .cloned()
            .unwrap_or_else(|| super::StreamsMember::new(&hb.member_id));
        if hb.instance_id.is_some() {
            member.instance_id = hb.instance_id.clone();
        }
        if hb.rack_id.is_some() {
            member.rack_id = hb.rack_id.clone();
        }
        // Draft topologies have no epochs: every one is stored with epoch 0 (§D5).
        member.topology_epoch = 0;
        member.rebalance_timeout_ms = hb.rebalance_timeout_ms;
        member.client_id = ctx.client_id.clone();
        member.client_host = ctx.client_host.clone();
        if let Some(p) = &hb.process_id {
            member.process_id = p.clone();
        }
        if let Some(tags) = &hb.client_tags {
            member.client_tags =
                sort::collect_map(tags.iter().map(|kv| (kv.key.clone(), kv.value.clone())));
        }
        member.user_endpoint = hb
            .user_endpoint
            .as_ref()
            .map(|e| crate::records::UserEndpoint {
                host: e.host.clone(),
                port: e.port,
            });
        let mut records = Vec::new();
        if existing.is_none_or(|m| !m.same_metadata(&member)) {
            let base = group.map(|g| g.group_metadata_value());
            let epoch = base.as_ref().map_or(1, |b| b.epoch) + 1;
            records.push(Record::MemberMetadata {
                group_id: gid.clone(),
                member_id: member.member_id.clone(),
                value: Some(member.metadata_value()),
            });
            records.push(Record::GroupMetadata {
                group_id: gid.clone(),
                value: Some(GroupMetadataValue {
                    epoch,
                    ..base.unwrap_or_else(|| super::StreamsGroup::new(gid).group_metadata_value())
                }),
            });
        }
        self.apply_group_records(gid, &records)?;
        let asked = self
            .groups
            .streams(gid)
            .and_then(|g| g.members.keys().next())
            .is_some_and(|first| *first == hb.member_id);
        let mut timers = Vec::new();
        self.timer_schedule(
            &mut timers,
            TimerKey::SessionTimeout {
                group_id: gid.clone(),
                member_id: hb.member_id.clone(),
            },
            now.plus(cfg.session_timeout_ms as i64),
            0,
        );
        let detail = if asked {
            format!("Streams group {gid} is initializing: this member initializes its topology.")
        } else {
            format!("Streams group {gid} is initializing: waiting for another member.")
        };
        let response = StreamsGroupHeartbeatResponse {
            member_id: hb.member_id.clone(),
            member_epoch: JOIN_EPOCH,
            heartbeat_interval_ms: cfg.heartbeat_interval_ms,
            task_offset_interval_ms: cfg.task_offset_interval_ms,
            acceptable_recovery_lag: cfg.acceptable_recovery_lag,
            status: Some(vec![heartbeat::status(
                status_code::GROUP_INITIALIZING,
                detail,
            )]),
            active_tasks: Some(Vec::new()),
            standby_tasks: Some(Vec::new()),
            warmup_tasks: Some(Vec::new()),
            ..Default::default()
        };
        Ok(Outcome {
            response: DraftHeartbeatResponse {
                heartbeat: response,
                should_initialize_topology: asked,
                group_topology_id: Some(String::new()),
            },
            records,
            timers,
            topics_to_create: Vec::new(),
        })
    }

    /// Handle StreamsGroupInitialize (docs/draft-dialect.md §D5): validate the topology against
    /// the topics, store it (Topology record) with a group epoch bump, ask for the internal
    /// topics to create. Members get their tasks on their next heartbeat.
    pub fn draft_initialize(
        &mut self,
        _now: Millis,
        req: &DraftInitializeRequest,
    ) -> Outcome<DraftInitializeResponse> {
        match self.initialize(req) {
            Ok(out) => out,
            Err(e) => Outcome::new(init_error(e.code.name(), e.message.unwrap_or_default())),
        }
    }

    fn initialize(
        &mut self,
        req: &DraftInitializeRequest,
    ) -> Result<Outcome<DraftInitializeResponse>, ApiError> {
        let gid = &req.group_id;
        // The shipped join's checks of a topology, on a join carrying it.
        let probe = StreamsGroupHeartbeatRequest {
            group_id: gid.clone(),
            member_id: "initialize".to_string(),
            member_epoch: JOIN_EPOCH,
            rebalance_timeout_ms: 0,
            active_tasks: Some(Vec::new()),
            standby_tasks: Some(Vec::new()),
            warmup_tasks: Some(Vec::new()),
            topology: Some(Topology {
                epoch: 0,
                ..req.topology.clone()
            }),
            ..Default::default()
        };
        heartbeat::validate_topology_topics(&probe)?;
        self.config.limits.check_heartbeat(&probe)?;
        heartbeat::validate_request(&probe, true)?;
        if self
            .groups
            .get(gid)
            .is_some_and(|g| g.as_streams().is_none())
        {
            return Err(ApiError::new(
                ErrorCode::GROUP_ID_NOT_FOUND,
                format!("Group {gid} is not a streams group."),
            ));
        }
        let topology =
            StreamsTopology::from_request(probe.topology.as_ref().unwrap_or(&req.topology));
        let group = self.groups.streams(gid);
        if let Some(stored) = group.and_then(|g| g.topology.as_ref()) {
            if stored.subtopologies == topology.subtopologies {
                // A retry after a lost response: already done.
                return Ok(Outcome::new(init_error("NONE", "")).with_message(None));
            }
            if group.is_some_and(|g| g.members.values().any(|m| m.member_epoch > 0)) {
                return Err(ApiError::invalid_request(
                    "Topology updates are not supported yet.",
                ));
            }
        }
        if group.is_none() {
            self.config.limits.check_new_group(self.groups.len())?;
        }
        let configured = topology::configure_topics(&topology, &self.metadata)
            .map_err(|e| ApiError::new(ErrorCode::STREAMS_INVALID_TOPOLOGY, e.message))?;
        if let Some(issue) = &configured.issue {
            let name = match issue.status_code {
                status_code::MISSING_SOURCE_TOPICS => Some("STREAMS_MISSING_SOURCE_TOPICS"),
                status_code::MISSING_INTERNAL_TOPICS => None,
                _ => Some("STREAMS_INCONSISTENT_INTERNAL_TOPICS"),
            };
            if let Some(name) = name {
                return Ok(Outcome::new(init_error(name, issue.detail.clone())));
            }
        }
        let cfg = self.config.for_group(gid);
        let base = group
            .map(|g| g.group_metadata_value())
            .unwrap_or_else(|| super::StreamsGroup::new(gid).group_metadata_value());
        let hash = topology::metadata_hash(&topology.required_topics(), &self.metadata);
        let records = vec![
            Record::Topology {
                group_id: gid.clone(),
                value: Some(topology),
            },
            Record::GroupMetadata {
                group_id: gid.clone(),
                value: Some(GroupMetadataValue {
                    epoch: base.epoch + 1,
                    metadata_hash: hash,
                    validated_topology_epoch: if configured.is_ready() { 0 } else { -1 },
                    last_assignment_configs: cfg.assignment_configs_map(),
                    ..base
                }),
            },
        ];
        self.apply_group_records(gid, &records)?;
        let mut out = Outcome::new(init_error("NONE", "")).with_message(None);
        out.records = records;
        out.topics_to_create = configured
            .internal_topics_to_create
            .values()
            .cloned()
            .collect();
        Ok(out)
    }
}

impl Outcome<DraftInitializeResponse> {
    fn with_message(mut self, message: Option<String>) -> Self {
        self.response.error_message = message;
        self
    }
}

fn map_outcome<A, B>(out: Outcome<A>, f: impl FnOnce(A) -> B) -> Outcome<B> {
    Outcome {
        response: f(out.response),
        records: out.records,
        timers: out.timers,
        topics_to_create: out.topics_to_create,
    }
}
