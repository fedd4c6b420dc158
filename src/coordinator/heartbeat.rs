//! StreamsGroupHeartbeat handling (spec §3.1-§3.5, §3.11, §3.12, §3.14).
//!
//! The request is validated, then a plan (records, member, statuses) is computed against the
//! current state without touching it; only a successful plan is applied, through replay. Soft
//! state (task offsets, configured topology, shutdown flag, endpoint epoch) is updated after.

use crate::util::map::{BTreeMap, BTreeSet};
use std::borrow::Cow;

use super::group::{MemberTaskOffsets, StreamsGroup, StreamsMember};
use super::reconcile::{self, ReconcileInput};
use super::target::{self, TargetRequest};
use super::{Coordinator, Outcome, RequestContext, TimerChange, TimerKey};
use crate::assignor::AssignmentConfigs;
use crate::config::EffectiveGroupConfig;
use crate::error::{ApiError, ErrorCode};
use crate::protocol::{
    Endpoint, EndpointToPartitions, Status, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse, TaskIds, TaskOffset, TopicPartition, status_code,
};
use crate::records::{
    CurrentMemberAssignmentValue, GroupMetadataValue, MemberState, Record, UserEndpoint,
};
use crate::topic;
use crate::topology::{self, ConfiguredTopology, InternalTopic, StreamsTopology};
use crate::types::{Millis, TaskId, TaskSet, TasksTuple};
use crate::util::sort;

pub const JOIN_EPOCH: i32 = 0;
pub const LEAVE_EPOCH: i32 = -1;
pub const STATIC_LEAVE_EPOCH: i32 = -2;

/// Whether `s` is empty once trimmed (`trim().is_empty()`, without scanning from both ends).
fn blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// Broker-level topology checks (spec §3.1 step 3).
pub(super) fn validate_topology_topics(req: &StreamsGroupHeartbeatRequest) -> Result<(), ApiError> {
    let Some(t) = &req.topology else {
        return Ok(());
    };
    let mut names = BTreeSet::new();
    for s in &t.subtopologies {
        names.extend(s.source_topics.iter().map(String::as_str));
        names.extend(s.repartition_sink_topics.iter().map(String::as_str));
        names.extend(s.repartition_source_topics.iter().map(|t| t.name.as_str()));
        names.extend(s.state_changelog_topics.iter().map(|t| t.name.as_str()));
    }
    let internal: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| topic::is_internal(n))
        .collect();
    if !internal.is_empty() {
        return Err(ApiError::new(
            ErrorCode::STREAMS_INVALID_TOPOLOGY,
            format!(
                "Use of Kafka internal topics {} in a Kafka Streams topology is prohibited.",
                internal.join(",")
            ),
        ));
    }
    let invalid: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !topic::is_valid_name(n))
        .collect();
    if !invalid.is_empty() {
        return Err(ApiError::new(
            ErrorCode::STREAMS_INVALID_TOPOLOGY,
            format!(
                "Topic names {} are not valid topic names.",
                invalid.join(",")
            ),
        ));
    }
    Ok(())
}

/// Request validation (spec §3.2), in Kafka's order. `topology_on_join`: a join must carry the
/// topology (false only for the draft dialect, docs/draft-dialect.md §D2).
pub(super) fn validate_request(
    req: &StreamsGroupHeartbeatRequest,
    topology_on_join: bool,
) -> Result<(), ApiError> {
    fn bad(m: impl Into<String>) -> ApiError {
        ApiError::invalid_request(m)
    }
    if let Some(t) = &req.topology
        && t.subtopologies
            .iter()
            .any(|s| !s.source_topic_regex.is_empty())
    {
        return Err(bad(
            "Regular expressions for source topics are not supported yet.",
        ));
    }
    if blank(&req.member_id) {
        return Err(bad("MemberId can't be empty."));
    }
    if blank(&req.group_id) {
        return Err(bad("GroupId can't be empty."));
    }
    if req.instance_id.as_deref().is_some_and(blank) {
        return Err(bad("InstanceId can't be empty."));
    }
    if req.rack_id.as_deref().is_some_and(blank) {
        return Err(bad("RackId can't be empty."));
    }
    if req.member_epoch == JOIN_EPOCH {
        if req.rebalance_timeout_ms == -1 {
            return Err(bad("RebalanceTimeoutMs must be provided in first request."));
        }
        for (name, list) in [
            ("ActiveTasks", &req.active_tasks),
            ("StandbyTasks", &req.standby_tasks),
            ("WarmupTasks", &req.warmup_tasks),
        ] {
            if list.as_ref().is_none_or(|l| !l.is_empty()) {
                return Err(bad(format!("{name} must be empty when (re-)joining.")));
            }
        }
        let t = match &req.topology {
            Some(t) => t,
            None if topology_on_join => {
                return Err(bad("Topology must be non-null when (re-)joining."));
            }
            None => return Ok(()),
        };
        for s in &t.subtopologies {
            for c in &s.state_changelog_topics {
                if c.partitions != 0 {
                    return Err(ApiError::new(
                        ErrorCode::STREAMS_INVALID_TOPOLOGY,
                        format!(
                            "Changelog topic {} must have an undefined partition count, but it is \
                             set to {}.",
                            c.name, c.partitions
                        ),
                    ));
                }
            }
        }
    } else if req.member_epoch == STATIC_LEAVE_EPOCH {
        if req.instance_id.is_none() {
            return Err(bad("InstanceId can't be null."));
        }
    } else if req.member_epoch < STATIC_LEAVE_EPOCH {
        return Err(bad(format!(
            "MemberEpoch is {}, but must be greater than or equal to -2.",
            req.member_epoch
        )));
    }
    let present = [&req.active_tasks, &req.standby_tasks, &req.warmup_tasks]
        .iter()
        .filter(|l| l.is_some())
        .count();
    if present != 0 && present != 3 {
        return Err(bad("If one task-type is non-null, all must be non-null."));
    }
    if req.member_epoch != JOIN_EPOCH && req.topology.is_some() {
        return Err(bad("Topology can only be provided when (re-)joining."));
    }
    Ok(())
}

pub(super) fn error_response(e: &ApiError) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        error_code: e.code.0,
        error_message: e.message.clone(),
        // Kafka answers errors with the schema default of the non-nullable status list.
        status: Some(Vec::new()),
        ..Default::default()
    }
}

pub(super) fn status(code: i8, detail: impl Into<String>) -> Status {
    Status {
        status_code: code,
        status_detail: detail.into(),
        unknown_tagged_fields: Vec::new(),
    }
}

/// Owned tasks of the request: known only when all three lists are present.
fn owned_tasks(req: &StreamsGroupHeartbeatRequest) -> Option<TasksTuple> {
    match (&req.active_tasks, &req.standby_tasks, &req.warmup_tasks) {
        (Some(a), Some(s), Some(w)) => Some(TasksTuple {
            active: TaskSet::from_task_ids(a),
            standby: TaskSet::from_task_ids(s),
            warmup: TaskSet::from_task_ids(w),
        }),
        _ => None,
    }
}

fn task_offsets_map(list: &[TaskOffset]) -> Result<BTreeMap<TaskId, i64>, ApiError> {
    let mut out = BTreeMap::new();
    for o in list {
        if out
            .insert(TaskId::new(&o.subtopology_id, o.partition), o.offset)
            .is_some()
        {
            return Err(ApiError::invalid_request(format!(
                "Task offsets contain a duplicate entry for subtopology {} and partition {}.",
                o.subtopology_id, o.partition
            )));
        }
    }
    Ok(out)
}

pub(super) fn fenced_epoch(kind: &str, request: i32, member: i32) -> ApiError {
    ApiError::new(
        ErrorCode::FENCED_MEMBER_EPOCH,
        format!(
            "The streams group member has a {kind} member epoch ({request}) than the one known by \
             the group coordinator ({member}). The member must abandon all its partitions and \
             rejoin."
        ),
    )
}

/// Member epoch validation (spec §3.5).
fn validate_member_epoch(
    member: &StreamsMember,
    req: &StreamsGroupHeartbeatRequest,
) -> Result<(), ApiError> {
    let r = req.member_epoch;
    if r == JOIN_EPOCH {
        return Ok(());
    }
    if r > member.member_epoch {
        return Err(fenced_epoch("greater", r, member.member_epoch));
    }
    if r < member.member_epoch {
        // Every listed entry, even one without partitions, must name a subtopology the member
        // is assigned in that role (Kafka's `areOwnedTasksContainedInAssignedTasks`).
        let contained = |owned: &Option<Vec<TaskIds>>, assigned: &TaskSet| {
            owned.as_ref().is_some_and(|list| {
                list.iter().all(|t| {
                    assigned.subtopologies().any(|(s, _)| s == t.subtopology_id)
                        && t.partitions
                            .iter()
                            .all(|p| assigned.contains(&t.subtopology_id, *p))
                })
            })
        };
        let subset = contained(&req.active_tasks, &member.assigned.active.task_set())
            && contained(&req.standby_tasks, &member.assigned.standby)
            && contained(&req.warmup_tasks, &member.assigned.warmup);
        if r != member.previous_member_epoch || !subset {
            return Err(fenced_epoch("smaller", r, member.member_epoch));
        }
    }
    Ok(())
}

/// Validate owned task lists against the configured topology (spec §3.4 step F).
fn validate_owned_tasks(
    req: &StreamsGroupHeartbeatRequest,
    configured: &ConfiguredTopology,
) -> Result<(), ApiError> {
    let Some(subs) = &configured.subtopologies else {
        return Ok(());
    };
    for list in [&req.active_tasks, &req.standby_tasks, &req.warmup_tasks]
        .into_iter()
        .flatten()
    {
        for t in list {
            let Some(s) = subs.get(&t.subtopology_id) else {
                return Err(ApiError::invalid_request(format!(
                    "Subtopology {} does not exist in the topology.",
                    t.subtopology_id
                )));
            };
            for p in &t.partitions {
                if *p < 0 || *p >= s.number_of_tasks {
                    return Err(ApiError::invalid_request(format!(
                        "Task {p} for subtopology {} is invalid. Number of tasks for this \
                         subtopology: {}",
                        t.subtopology_id, s.number_of_tasks
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Soft-state changes of a successful heartbeat, applied after its records.
struct SoftUpdates {
    configured: Option<ConfiguredTopology>,
    refresh_deadline: Option<(Millis, i32)>,
    task_offsets: Option<MemberTaskOffsets>,
    endpoint_changed: bool,
}

impl Coordinator {
    /// Handle one StreamsGroupHeartbeat (spec §3). Never panics; errors change nothing (except
    /// the soft shutdown flag on a leave, as Kafka does).
    pub fn streams_group_heartbeat(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &StreamsGroupHeartbeatRequest,
    ) -> Outcome<StreamsGroupHeartbeatResponse> {
        self.heartbeat_in_dialect(now, ctx, req, true)
    }

    /// The heartbeat path; `topology_on_join` false lets the draft dialect join a group whose
    /// topology was initialized separately (docs/draft-dialect.md §D2).
    pub(super) fn heartbeat_in_dialect(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &StreamsGroupHeartbeatRequest,
        topology_on_join: bool,
    ) -> Outcome<StreamsGroupHeartbeatResponse> {
        // Kafka converts an Empty classic group when a streams member joins
        // (docs/classic-protocol.md §C6.3); restored if the heartbeat fails.
        let converted = (req.member_epoch == JOIN_EPOCH)
            .then(|| self.take_empty_classic_group(&req.group_id))
            .flatten();
        let result = if !self.config.streams_enabled {
            Err(ApiError::new(
                ErrorCode::UNSUPPORTED_VERSION,
                "The streams group protocol is not enabled on this coordinator.",
            ))
        } else {
            validate_topology_topics(req)
                .and_then(|_| self.config.limits.check_heartbeat(req))
                .and_then(|_| validate_request(req, topology_on_join))
                .and_then(|_| {
                    // Both paths first refuse a group of another type (spec §8), with the
                    // lookup they need anyway.
                    if req.member_epoch == LEAVE_EPOCH || req.member_epoch == STATIC_LEAVE_EPOCH {
                        self.leave(now, req)
                    } else {
                        self.join_or_heartbeat(now, ctx, req, topology_on_join)
                    }
                })
        };
        let result = match (result, converted) {
            (Ok(mut out), Some(classic)) => {
                let tombstone = Record::ClassicGroupMetadata {
                    group_id: classic.group_id,
                    value: None,
                };
                out.records.insert(0, tombstone);
                Ok(out)
            }
            (Err(e), Some(classic)) => {
                self.groups.insert_classic(classic);
                Err(e)
            }
            (result, None) => result,
        };
        result.unwrap_or_else(|e| Outcome::new(error_response(&e)))
    }

    /// Leave paths (spec §3.3).
    fn leave(
        &mut self,
        _now: Millis,
        req: &StreamsGroupHeartbeatRequest,
    ) -> Result<Outcome<StreamsGroupHeartbeatResponse>, ApiError> {
        let gid = &req.group_id;
        if self
            .groups
            .get(gid)
            .is_some_and(|g| g.as_streams().is_none())
        {
            return Err(not_a_streams_group(gid));
        }
        let Some(group) = self.groups.streams_mut(gid) else {
            // Kafka's leave looks the group up with its generic lookup (not the heartbeat's).
            return Err(ApiError::new(
                ErrorCode::GROUP_ID_NOT_FOUND,
                format!("Group {gid} not found."),
            ));
        };
        if req.shutdown_application && group.shutdown_request_member_id.is_none() {
            group.shutdown_request_member_id = Some(req.member_id.clone());
        }
        let group = &*group;
        let member = match &req.instance_id {
            None => group.members.get(&req.member_id).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::UNKNOWN_MEMBER_ID,
                    format!("Member {} is not a member of group {gid}.", req.member_id),
                )
            })?,
            Some(instance) => {
                let m = group.static_member(instance).ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::UNKNOWN_MEMBER_ID,
                        format!("Instance id {instance} is unknown."),
                    )
                })?;
                if m.member_id != req.member_id {
                    return Err(fenced_instance(&req.member_id, instance, &m.member_id));
                }
                m
            }
        };
        let mut out = Outcome::new(StreamsGroupHeartbeatResponse {
            member_id: req.member_id.clone(),
            member_epoch: req.member_epoch,
            status: Some(Vec::new()),
            ..Default::default()
        });
        if req.member_epoch == STATIC_LEAVE_EPOCH {
            let value = CurrentMemberAssignmentValue {
                member_epoch: STATIC_LEAVE_EPOCH,
                previous_member_epoch: member.previous_member_epoch,
                state: member.state,
                assigned: crate::types::TasksWithEpochs {
                    active: member.assigned.active.reset_epochs(0),
                    standby: member.assigned.standby.clone(),
                    warmup: member.assigned.warmup.clone(),
                },
                pending_revocation: Default::default(),
            };
            if value != member.assignment_value() {
                out.records.push(Record::CurrentMemberAssignment {
                    group_id: gid.clone(),
                    member_id: member.member_id.clone(),
                    value: Some(value),
                });
            }
            self.apply_group_records(gid, &out.records)?;
        } else {
            let member_id = member.member_id.clone();
            let fenced = self.fence_member(gid, &member_id)?;
            out.records = fenced.records;
            out.timers = fenced.timers;
        }
        Ok(out)
    }

    /// Fence a member (spec §3.3): tombstones, group epoch bump, timers cancelled. Fails, with
    /// nothing changed, when its records cannot be applied.
    pub(super) fn fence_member(
        &mut self,
        group_id: &str,
        member_id: &str,
    ) -> Result<Outcome<()>, ApiError> {
        let mut out = Outcome::new(());
        let Some(group) = self.groups.streams(group_id) else {
            return Ok(out);
        };
        if !group.members.contains_key(member_id) {
            return Ok(out);
        }
        let gid = group_id.to_string();
        let mid = member_id.to_string();
        out.records.push(Record::CurrentMemberAssignment {
            group_id: gid.clone(),
            member_id: mid.clone(),
            value: None,
        });
        out.records.push(Record::TargetAssignmentMember {
            group_id: gid.clone(),
            member_id: mid.clone(),
            value: None,
        });
        out.records.push(Record::MemberMetadata {
            group_id: gid.clone(),
            member_id: mid.clone(),
            value: None,
        });
        let new_epoch = group.group_epoch + 1;
        out.records.push(Record::GroupMetadata {
            group_id: gid.clone(),
            value: Some(GroupMetadataValue {
                epoch: new_epoch,
                ..group.group_metadata_value()
            }),
        });
        if group.members.len() == 1 {
            out.records.push(Record::TargetAssignmentMetadata {
                group_id: gid.clone(),
                value: Some(crate::records::TargetAssignmentMetadataValue {
                    assignment_epoch: new_epoch,
                    assignment_timestamp: 0,
                }),
            });
        }
        self.apply_group_records(group_id, &out.records)?;
        let mut timers = Vec::new();
        self.timer_cancel(
            &mut timers,
            &TimerKey::SessionTimeout {
                group_id: gid.clone(),
                member_id: mid.clone(),
            },
        );
        self.timer_cancel(
            &mut timers,
            &TimerKey::RebalanceTimeout {
                group_id: gid,
                member_id: mid,
            },
        );
        out.timers = timers;
        Ok(out)
    }

    /// Join (epoch 0) or regular heartbeat (spec §3.4).
    fn join_or_heartbeat(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &StreamsGroupHeartbeatRequest,
        topology_on_join: bool,
    ) -> Result<Outcome<StreamsGroupHeartbeatResponse>, ApiError> {
        let gid = &req.group_id;
        let joining = req.member_epoch == JOIN_EPOCH;
        let cfg = self.config.for_group(gid);
        let existing = match self.groups.get(gid) {
            Some(g) => Some(g.as_streams().ok_or_else(|| not_a_streams_group(gid))?),
            None => None,
        };
        let group_existed = existing.is_some();
        let new_group;
        let group: &StreamsGroup = match existing {
            Some(g) => g,
            None if joining => {
                self.config.limits.check_new_group(self.groups.len())?;
                new_group = StreamsGroup::new(gid);
                &new_group
            }
            None => {
                return Err(ApiError::new(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Streams group {gid} not found."),
                ));
            }
        };
        let owned = owned_tasks(req);
        let mut records: Vec<Record> = Vec::new();

        // Step A: size check.
        if joining {
            let registered_static = req
                .instance_id
                .as_deref()
                .is_some_and(|i| group.static_members.contains_key(i));
            if !registered_static
                && group.members.len() >= self.config.max_size.max(0) as usize
                && !group.members.contains_key(&req.member_id)
            {
                return Err(ApiError::new(
                    ErrorCode::GROUP_MAX_SIZE_REACHED,
                    format!(
                        "The streams group has reached its maximum capacity of {} members.",
                        self.config.max_size
                    ),
                ));
            }
        }

        // Step B: member lookup or creation, static replacement.
        let mut replaced: Option<String> = None;
        let member: Cow<'_, StreamsMember> = match &req.instance_id {
            None => match group.members.get(&req.member_id) {
                Some(m) => {
                    validate_member_epoch(m, req)?;
                    Cow::Borrowed(m)
                }
                None if joining => Cow::Owned(StreamsMember::new(&req.member_id)),
                None => {
                    return Err(ApiError::new(
                        ErrorCode::UNKNOWN_MEMBER_ID,
                        format!("Member {} is not a member of group {gid}.", req.member_id),
                    ));
                }
            },
            Some(instance) if joining => match group.static_member(instance) {
                None => match group.members.get(&req.member_id) {
                    Some(m) => Cow::Borrowed(m),
                    None => Cow::Owned(StreamsMember::new(&req.member_id)),
                },
                Some(old) => {
                    if old.member_epoch != STATIC_LEAVE_EPOCH {
                        return Err(ApiError::new(
                            ErrorCode::UNRELEASED_INSTANCE_ID,
                            format!(
                                "Static member {} with instance id {instance} cannot join the \
                                 group because the instance id is owned by {} member.",
                                req.member_id, old.member_id
                            ),
                        ));
                    }
                    let mut copy = old.clone();
                    copy.member_id = req.member_id.clone();
                    copy.member_epoch = 0;
                    copy.previous_member_epoch = 0;
                    let old_id = old.member_id.clone();
                    for r in [
                        Record::CurrentMemberAssignment {
                            group_id: gid.clone(),
                            member_id: old_id.clone(),
                            value: None,
                        },
                        Record::TargetAssignmentMember {
                            group_id: gid.clone(),
                            member_id: old_id.clone(),
                            value: None,
                        },
                        Record::MemberMetadata {
                            group_id: gid.clone(),
                            member_id: old_id.clone(),
                            value: None,
                        },
                        Record::MemberMetadata {
                            group_id: gid.clone(),
                            member_id: copy.member_id.clone(),
                            value: Some(copy.metadata_value()),
                        },
                        Record::TargetAssignmentMember {
                            group_id: gid.clone(),
                            member_id: copy.member_id.clone(),
                            value: Some(group.target_of(&old_id)),
                        },
                        Record::CurrentMemberAssignment {
                            group_id: gid.clone(),
                            member_id: copy.member_id.clone(),
                            value: Some(copy.assignment_value()),
                        },
                    ] {
                        records.push(r);
                    }
                    replaced = Some(old_id);
                    Cow::Owned(copy)
                }
            },
            Some(instance) => {
                let m = group.static_member(instance).ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::UNKNOWN_MEMBER_ID,
                        format!("Instance id {instance} is unknown."),
                    )
                })?;
                if m.member_id != req.member_id {
                    return Err(fenced_instance(&req.member_id, instance, &m.member_id));
                }
                validate_member_epoch(m, req)?;
                Cow::Borrowed(m)
            }
        };

        // Step C: the updated member. Copied only when a field actually changes: a steady
        // heartbeat changes nothing and must not pay for a copy of the member's task sets.
        let mut updated: Cow<'_, StreamsMember> = Cow::Borrowed(member.as_ref());
        if let Some(i) = &req.instance_id
            && updated.instance_id.as_ref() != Some(i)
        {
            updated.to_mut().instance_id = Some(i.clone());
        }
        if let Some(r) = &req.rack_id
            && updated.rack_id.as_ref() != Some(r)
        {
            updated.to_mut().rack_id = Some(r.clone());
        }
        if req.rebalance_timeout_ms != -1
            && updated.rebalance_timeout_ms != req.rebalance_timeout_ms
        {
            updated.to_mut().rebalance_timeout_ms = req.rebalance_timeout_ms;
        }
        let joined_topology_epoch = match (&req.topology, &group.topology) {
            (Some(t), _) => Some(t.epoch),
            // Draft dialect (docs/draft-dialect.md §D2): a join without it takes the group's.
            (None, Some(g)) if joining && !topology_on_join => Some(g.epoch),
            _ => None,
        };
        if let Some(e) = joined_topology_epoch
            && updated.topology_epoch != e
        {
            updated.to_mut().topology_epoch = e;
        }
        if updated.client_id != ctx.client_id {
            updated.to_mut().client_id = ctx.client_id.clone();
        }
        if updated.client_host != ctx.client_host {
            updated.to_mut().client_host = ctx.client_host.clone();
        }
        if let Some(p) = &req.process_id
            && updated.process_id != *p
        {
            updated.to_mut().process_id = p.clone();
        }
        if let Some(tags) = &req.client_tags {
            let tags: BTreeMap<String, String> =
                sort::collect_map(tags.iter().map(|kv| (kv.key.clone(), kv.value.clone())));
            if updated.client_tags != tags {
                updated.to_mut().client_tags = tags;
            }
        }
        let endpoint = req.user_endpoint.as_ref().map(|e| UserEndpoint {
            host: e.host.clone(),
            port: e.port,
        });
        if (joining || endpoint.is_some()) && updated.user_endpoint != endpoint {
            updated.to_mut().user_endpoint = endpoint;
        }
        // Still borrowed: no field was written, so nothing to compare.
        let untouched = matches!(updated, Cow::Borrowed(_));
        let metadata_changed = !untouched && !updated.same_metadata(&member);
        let mut bump = if metadata_changed {
            records.push(Record::MemberMetadata {
                group_id: gid.clone(),
                member_id: updated.member_id.clone(),
                value: Some(updated.metadata_value()),
            });
            // Kafka asks whether the *request* names an instance id, not the member: a static
            // member's heartbeat without it (null = unchanged) bumps on any metadata change.
            if req.instance_id.is_some() {
                updated.topology_epoch != member.topology_epoch
                    || updated.rack_id != member.rack_id
                    || updated.client_tags != member.client_tags
                    || updated.process_id != member.process_id
            } else {
                true
            }
        } else {
            false
        };
        let endpoint_changed = !untouched && updated.user_endpoint != member.user_endpoint;

        // Step D: topology.
        let had_topology = group.topology.is_some();
        let topology: Cow<'_, StreamsTopology> = match (&req.topology, &group.topology) {
            (Some(t), None) => {
                let t = StreamsTopology::from_request(t);
                records.push(Record::Topology {
                    group_id: gid.clone(),
                    value: Some(t.clone()),
                });
                Cow::Owned(t)
            }
            (Some(t), Some(g)) => {
                if g.epoch <= t.epoch && StreamsTopology::from_request(t) != *g {
                    return Err(ApiError::invalid_request(
                        "Topology updates are not supported yet.",
                    ));
                }
                Cow::Borrowed(g)
            }
            (None, Some(g)) => Cow::Borrowed(g),
            (None, None) => return Err(ApiError::unknown_server_error()),
        };
        let mut statuses = Vec::new();
        if updated.topology_epoch < topology.epoch {
            statuses.push(status(
                status_code::STALE_TOPOLOGY,
                format!(
                    "The member's topology epoch {} is behind the group's topology epoch {}.",
                    updated.topology_epoch, topology.epoch
                ),
            ));
        }

        // Step E: configured topology and metadata hash.
        let mut reconfigure = !had_topology;
        let mut hash = group.metadata_hash;
        let cached = group
            .configured_topology
            .as_ref()
            .filter(|c| c.topology_epoch == topology.epoch);
        let mut fresh_configured = None;
        if reconfigure || cached.is_none() || group.has_metadata_expired(now) {
            hash = topology::metadata_hash(&topology.required_topics(), &self.metadata);
            if hash != group.metadata_hash {
                bump = true;
                reconfigure = true;
            }
            if reconfigure || cached.is_none() {
                let mut c = topology::configure_topics(&topology, &self.metadata)
                    .map_err(|e| ApiError::new(ErrorCode::STREAMS_INVALID_TOPOLOGY, e.message))?;
                self.config.limits.check_tasks(&c)?;
                c.metadata_hash = hash;
                fresh_configured = Some(c);
            }
        }
        let configured: &ConfiguredTopology = match (&fresh_configured, cached) {
            (Some(c), _) => c,
            (None, Some(c)) => c,
            (None, None) => return Err(ApiError::unknown_server_error()),
        };

        // Step F: validated topology epoch and owned tasks.
        let validated_epoch = if configured.is_ready() {
            topology.epoch
        } else {
            -1
        };
        if configured.is_ready() {
            validate_owned_tasks(req, configured)?;
        }

        // Step G: task offsets (validated before anything is stored). A null list keeps the
        // previous value of that kind; the merged offsets feed this heartbeat's assignment.
        let merged_offsets = if req.task_offsets.is_some() || req.task_end_offsets.is_some() {
            let mut merged = group
                .task_offsets
                .get(&updated.member_id)
                .cloned()
                .unwrap_or_default();
            if let Some(list) = &req.task_offsets {
                merged.offsets = task_offsets_map(list)?;
            }
            if let Some(list) = &req.task_end_offsets {
                merged.end_offsets = task_offsets_map(list)?;
            }
            Some(merged)
        } else {
            None
        };

        // Step H: more bump triggers.
        if validated_epoch != group.validated_topology_epoch
            || !cfg.assignment_configs_match(&group.last_assignment_configs)
        {
            bump = true;
        }
        // groupcoord extension (KIP-441, only reachable with a warm-up placing assignor such as
        // `sticky-warmups`): a warm-up task whose reported lag is now within
        // acceptable.recovery.lag triggers a new assignment, so the task can move to it. Kafka 4.4
        // assigns no warm-ups, so this never fires against its behaviour.
        if !bump
            && let Some(offsets) = &merged_offsets
            && let Some(target) = group.target_assignment.get(&updated.member_id)
            && target.warmup.iter().any(|t| {
                match (offsets.offsets.get(&t), offsets.end_offsets.get(&t)) {
                    (Some(o), Some(e)) => e.saturating_sub(*o) <= cfg.acceptable_recovery_lag,
                    _ => false,
                }
            })
        {
            bump = true;
        }

        // Step I: bump.
        let mut group_epoch = group.group_epoch;
        let mut refresh_deadline = None;
        if bump {
            group_epoch += 1;
            records.push(Record::GroupMetadata {
                group_id: gid.clone(),
                value: Some(GroupMetadataValue {
                    epoch: group_epoch,
                    metadata_hash: hash,
                    validated_topology_epoch: validated_epoch,
                    last_assignment_configs: cfg.assignment_configs_map(),
                    stored_description_topology_epoch: group.stored_description_topology_epoch,
                    failed_description_topology_epoch: group.failed_description_topology_epoch,
                }),
            });
            refresh_deadline = Some((now.plus(i32::MAX as i64), group_epoch));
        }

        // Step J: initial rebalance delay.
        let initial_armed = self.timers.initial_rebalance_armed(gid);
        let schedule_initial =
            group.members.is_empty() && cfg.initial_rebalance_delay_ms > 0 && !initial_armed;
        let initial_pending = schedule_initial || initial_armed;

        // Step K: target assignment.
        let mut target = target::update_target(&TargetRequest {
            group,
            group_epoch,
            updated_member: Some(&updated),
            replaced_member_id: replaced.as_deref(),
            configured: Some(configured),
            configs: assignment_configs(&cfg),
            assignor_name: &cfg.assignor_name,
            now,
            initial_delay_pending: initial_pending,
            updated_member_offsets: merged_offsets.as_ref(),
            assignment_interval_ms: cfg.assignment_interval_ms,
            offload_min_work: self.offload.min_work,
            offload_in_flight: self.offload.is_in_flight(gid),
        })?;
        records.append(&mut target.records);
        let offload_job = target.offload.take();
        if let Some(d) = target.delayed {
            statuses.push(status(status_code::ASSIGNMENT_DELAYED, d));
        }
        if let Some(issue) = &configured.issue {
            statuses.push(status(issue.status_code, issue.detail.clone()));
        }

        // Step M: reconciliation.
        let reconciled: Cow<'_, StreamsMember> =
            if updated.is_reconciled_to(target.assignment_epoch) {
                // Spec §4 shortcut: STABLE at the target epoch, nothing to do (no copy either).
                Cow::Borrowed(&updated)
            } else {
                Cow::Owned(reconcile::reconcile(
                    &updated,
                    &ReconcileInput {
                        target_epoch: target.assignment_epoch,
                        target: &target.member_target,
                        index: &group.index,
                        owned: owned.as_ref(),
                    },
                )?)
            };
        // A borrowed `reconciled` is `updated` itself: nothing to compare.
        let unchanged = matches!(reconciled, Cow::Borrowed(_));
        let assignment_changed = !unchanged && !reconciled.same_assignment(&updated);
        if assignment_changed {
            records.push(Record::CurrentMemberAssignment {
                group_id: gid.clone(),
                member_id: reconciled.member_id.clone(),
                value: Some(reconciled.assignment_value()),
            });
        }
        let tasks_changed = !unchanged && reconciled.assigned != updated.assigned;
        let topics_to_create: Vec<InternalTopic> = if configured
            .issue
            .as_ref()
            .is_some_and(|i| i.status_code == status_code::MISSING_INTERNAL_TOPICS)
        {
            configured
                .internal_topics_to_create
                .values()
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let soft = SoftUpdates {
            configured: fresh_configured.clone(),
            refresh_deadline,
            task_offsets: merged_offsets.clone(),
            endpoint_changed: endpoint_changed
                || (tasks_changed && reconciled.user_endpoint.is_some()),
        };

        // What the response and timers need of the reconciled member, taken before applying
        // (the reconciled member may borrow from the group's current state).
        let member_id = reconciled.member_id.clone();
        let new_state = reconciled.state;
        let new_epoch = reconciled.member_epoch;
        let rebalance_timeout_ms = reconciled.rebalance_timeout_ms;
        let missing_tags: Vec<String> = if ctx.api_version >= 1 {
            cfg.rack_aware_assignment_tags
                .iter()
                .filter(|t| !reconciled.client_tags.contains_key(*t))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let task_lists = (joining || tasks_changed).then(|| {
            (
                reconciled.assigned.active.task_set().to_task_ids(),
                reconciled.assigned.standby.to_task_ids(),
                reconciled.assigned.warmup.to_task_ids(),
            )
        });

        // Kafka builds the response before its records are replayed: a static replacement that
        // empties the group for a moment clears a shutdown request only after this answer.
        // (`group` is the registered group as it is before them, or a fresh one that has neither
        // a shutdown request nor members: the same answers as a second lookup, without it.)
        let shutdown_before = group.shutdown_request_member_id.clone();
        // ...and lists the endpoints in its member map's order as it was before them. Only
        // needed when the answer carries endpoints: the epoch the member knows differs from the
        // group's, or is about to (a steady heartbeat skips this copy of every member id).
        let endpoints_answered = !group_existed
            || soft.endpoint_changed
            || group.endpoint_information_epoch != req.endpoint_information_epoch;
        let member_order_before = if endpoints_answered {
            group.member_order.iteration_order()
        } else {
            Vec::new()
        };

        // Apply: records, soft state, timers.
        self.apply_group_records(gid, &records)?;
        if let Some(job) = offload_job {
            self.offload.submit(job);
        }
        let mut timers: Vec<TimerChange> = Vec::new();
        if schedule_initial {
            self.timer_schedule(
                &mut timers,
                TimerKey::InitialRebalance {
                    group_id: gid.clone(),
                },
                now.plus(cfg.initial_rebalance_delay_ms as i64),
                0,
            );
        }
        if assignment_changed {
            let key = TimerKey::RebalanceTimeout {
                group_id: gid.clone(),
                member_id: member_id.clone(),
            };
            if new_state == MemberState::UnrevokedTasks {
                let at = now.plus(rebalance_timeout_ms.max(0) as i64);
                self.timer_schedule(&mut timers, key, at, new_epoch);
            } else {
                self.timer_cancel(&mut timers, &key);
            }
        }
        self.timer_schedule(
            &mut timers,
            TimerKey::SessionTimeout {
                group_id: gid.clone(),
                member_id: member_id.clone(),
            },
            now.plus(cfg.session_timeout_ms as i64),
            0,
        );
        let group = self
            .groups
            .streams_mut(gid)
            .ok_or_else(ApiError::unknown_server_error)?;
        if let Some(c) = soft.configured {
            group.configured_topology = Some(c);
            group.configured_topology_described = !records.is_empty();
        }
        if let Some(d) = soft.refresh_deadline {
            group.metadata_refresh_deadline = d;
        }
        if let Some(o) = soft.task_offsets {
            group.task_offsets.insert(member_id.clone(), o);
        }
        if soft.endpoint_changed {
            group.endpoint_information_epoch += 1;
        }
        if req.shutdown_application && group.shutdown_request_member_id.is_none() {
            group.shutdown_request_member_id = Some(member_id.clone());
        }

        // Step O: response.
        let shutdown_requester =
            shutdown_before.or_else(|| group.shutdown_request_member_id.clone());
        if let Some(requester) = &shutdown_requester {
            statuses.push(status(
                status_code::SHUTDOWN_APPLICATION,
                format!(
                    "Streams group member {requester} encountered a fatal error and requested a \
                     shutdown for the entire application."
                ),
            ));
        }
        if !missing_tags.is_empty() {
            statuses.push(status(
                status_code::MISSING_CLIENT_TAGS,
                format!(
                    "Missing required client tags for rack-aware standby assignment: [{}]. \
                     Configure them via 'client.tag.<tagKey>' in your Streams config.",
                    missing_tags.join(", ")
                ),
            ));
        }
        let (active, standby, warmup) = match task_lists {
            Some((a, s, w)) => (Some(a), Some(s), Some(w)),
            None => (None, None, None),
        };
        let endpoint_epoch = if group_existed {
            group.endpoint_information_epoch
        } else {
            0
        };
        let partitions_by_user_endpoint = (group.endpoint_information_epoch
            != req.endpoint_information_epoch)
            .then(|| endpoint_information(group, &member_order_before, &member_id, &self.metadata));
        if !group_existed {
            // Kafka 4.4 runs the heartbeat that creates a group on a group object it never
            // registers; replaying that heartbeat's records registers a fresh one. The soft state
            // set above is therefore seen by this response only: the next heartbeat configures the
            // topology again (describe shows the topology as sent until then), the
            // endpoint-information epoch stays 0, task offsets and a shutdown request are dropped.
            group.configured_topology = None;
            group.configured_topology_described = false;
            group.metadata_refresh_deadline = Default::default();
            group.task_offsets.remove(&member_id);
            group.endpoint_information_epoch = 0;
            group.shutdown_request_member_id = None;
        }
        let response = StreamsGroupHeartbeatResponse {
            member_id,
            member_epoch: new_epoch,
            heartbeat_interval_ms: cfg.heartbeat_interval_ms,
            task_offset_interval_ms: cfg.task_offset_interval_ms,
            acceptable_recovery_lag: cfg.acceptable_recovery_lag,
            status: Some(statuses),
            active_tasks: active,
            standby_tasks: standby,
            warmup_tasks: warmup,
            endpoint_information_epoch: endpoint_epoch,
            partitions_by_user_endpoint,
            ..Default::default()
        };
        Ok(Outcome {
            response,
            records,
            timers,
            topics_to_create,
        })
    }
}

impl Coordinator {
    /// Apply the records an operation wrote for a group. Kafka's describe reads the group as of
    /// the last committed write; a topology configured by a heartbeat that wrote nothing becomes
    /// visible with the group's next write.
    pub(super) fn apply_group_records(
        &mut self,
        group_id: &str,
        records: &[Record],
    ) -> Result<(), ApiError> {
        self.apply(records)?;
        if !records.is_empty()
            && let Some(g) = self.groups.streams_mut(group_id)
        {
            g.configured_topology_described = true;
        }
        Ok(())
    }
}

/// Spec §8: a heartbeat for a group of another type.
fn not_a_streams_group(group_id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::GROUP_ID_NOT_FOUND,
        format!("Group {group_id} is not a streams group."),
    )
}

fn fenced_instance(member_id: &str, instance: &str, owner: &str) -> ApiError {
    ApiError::new(
        ErrorCode::FENCED_INSTANCE_ID,
        format!(
            "Static member {member_id} with instance id {instance} was fenced by member {owner}."
        ),
    )
}

/// Assignor configs in force for a group (spec §3.9 plus the warm-up knobs).
pub(super) fn assignment_configs(cfg: &EffectiveGroupConfig) -> AssignmentConfigs {
    AssignmentConfigs {
        num_standby_replicas: cfg.num_standby_replicas,
        rack_aware_assignment_tags: cfg.rack_aware_assignment_tags.clone(),
        acceptable_recovery_lag: cfg.acceptable_recovery_lag,
        num_warmup_replicas: cfg.num_warmup_replicas,
    }
}

/// IQ endpoint information (spec §3.12): one entry per member with an endpoint, in the order
/// of Kafka's member map before this heartbeat (`member_order`; a replaced static member is gone
/// from `group`), the heartbeating member last.
fn endpoint_information(
    group: &StreamsGroup,
    member_order: &[String],
    member_id: &str,
    metadata: &crate::topology::MetadataImage,
) -> Vec<EndpointToPartitions> {
    let subs = group
        .configured_topology
        .as_ref()
        .and_then(|c| c.subtopologies.as_ref());
    let partitions = |tasks: &TaskSet| -> Vec<TopicPartition> {
        let Some(subs) = subs else { return Vec::new() };
        let mut by_topic: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for (s, ps) in tasks.subtopologies() {
            let Some(sub) = subs.get(s) else { continue };
            for (topic, parts) in
                crate::topology::endpoints::partitions_for_tasks(sub, ps, metadata)
            {
                by_topic.entry(topic).or_default().extend(parts);
            }
        }
        by_topic
            .into_iter()
            .map(|(topic, ps)| TopicPartition {
                topic,
                partitions: ps.into_iter().collect(),
                unknown_tagged_fields: Vec::new(),
            })
            .collect()
    };
    let entry = |m: &StreamsMember| -> Option<EndpointToPartitions> {
        let e = m.user_endpoint.as_ref()?;
        Some(EndpointToPartitions {
            user_endpoint: Endpoint {
                host: e.host.clone(),
                port: e.port,
                unknown_tagged_fields: Vec::new(),
            },
            active_partitions: partitions(&m.assigned.active.task_set()),
            standby_partitions: partitions(&m.assigned.standby.union(&m.assigned.warmup)),
            unknown_tagged_fields: Vec::new(),
        })
    };
    let mut out: Vec<EndpointToPartitions> = member_order
        .iter()
        .filter(|id| id.as_str() != member_id)
        .filter_map(|id| group.members.get(id))
        .filter_map(entry)
        .collect();
    if let Some(m) = group.members.get(member_id) {
        out.extend(entry(m));
    }
    out
}
