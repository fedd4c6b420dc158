//! KIP-848 consumer groups (`group.protocol=consumer`, docs/consumer-protocol.md): the
//! ConsumerGroupHeartbeat (docs/consumer-protocol.md §K3), reconciliation (§K4), leave and fencing (§K5), records and
//! replay (docs/consumer-protocol.md §K6), offset validation (§K7) and ConsumerGroupDescribe (§K9).
//!
//! The machinery is the streams groups' (member epochs, a target assignment computed when the
//! group epoch moves, revoke-before-assign, session and rebalance timeouts under the same timer
//! keys, static membership), on topic partitions instead of tasks, with the server-side assignors
//! of [`crate::assignor::consumer`]. Like every operation of the core, a heartbeat computes its
//! records against the current state without touching it and applies them through replay.

mod admin;
pub(super) use admin::partition_commit_error;
pub mod group;
mod migration;
pub mod reconcile;
mod regex;
mod replay;
pub mod target;

use crate::util::map::{BTreeMap, BTreeSet};

use super::heartbeat::{JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH};
use super::{Coordinator, Outcome, RequestContext, TimerChange, TimerKey};
use crate::assignor::consumer::{TopicId, builtin_assignor};
use crate::error::{ApiError, ErrorCode};
use crate::protocol::consumer::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, TopicIdPartitions,
};
use crate::records::{
    ConsumerGroupMetadataValue, ConsumerMemberState, PartitionEpochs, Record,
    TargetAssignmentMetadataValue,
};
use crate::types::Millis;

pub use group::{ConsumerGroup, ConsumerMember};
use reconcile::ReconcileInput;
use target::TargetRequest;

/// A topic's id: the one given from outside, else derived from its name.
pub(crate) fn topic_id_of(ids: &BTreeMap<String, TopicId>, name: &str) -> TopicId {
    ids.get(name)
        .copied()
        .unwrap_or_else(|| TopicId::from_name(name))
}

fn blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// The service-level checks of Kafka's `GroupCoordinatorService` (docs/consumer-protocol.md §K3.1), in its order and with
/// its messages.
fn validate_request(
    req: &ConsumerGroupHeartbeatRequest,
    api_version: i16,
    assignors: &[String],
) -> Result<(), ApiError> {
    let bad = ApiError::invalid_request;
    if (api_version >= 1 || req.member_epoch > 0 || req.member_epoch == LEAVE_EPOCH)
        && blank(&req.member_id)
    {
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
        if req.topic_partitions.as_ref().is_none_or(|t| !t.is_empty()) {
            return Err(bad("TopicPartitions must be empty when (re-)joining."));
        }
        if req.subscribed_topic_names.is_none() && req.subscribed_topic_regex.is_none() {
            return Err(bad(
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when \
                 (re-)joining.",
            ));
        }
    } else if req.member_epoch == STATIC_LEAVE_EPOCH {
        if req.instance_id.is_none() {
            return Err(bad("InstanceId can't be null."));
        }
    } else if req.member_epoch < STATIC_LEAVE_EPOCH {
        return Err(bad("MemberEpoch is invalid."));
    }
    if let Some(a) = &req.server_assignor
        && !assignors.contains(a)
    {
        return Err(ApiError::new(
            ErrorCode::UNSUPPORTED_ASSIGNOR,
            format!(
                "ServerAssignor {a} is not supported. Supported assignors: {}.",
                supported_assignors(assignors)
            ),
        ));
    }
    Ok(())
}

/// The supported assignors as Kafka lists them: the names in a Java `HashSet`'s order.
fn supported_assignors(assignors: &[String]) -> String {
    crate::assignor::consumer::java_order::string_hash_set_copy_order(
        assignors.iter().map(String::as_str),
    )
    .join(", ")
}

fn error_response(e: &ApiError) -> ConsumerGroupHeartbeatResponse {
    ConsumerGroupHeartbeatResponse {
        error_code: e.code.0,
        error_message: e.message.clone(),
        ..Default::default()
    }
}

fn fenced_epoch(kind: &str, request: i32, member: i32) -> ApiError {
    ApiError::new(
        ErrorCode::FENCED_MEMBER_EPOCH,
        format!(
            "The consumer group member has a {kind} member epoch ({request}) than the one known by \
             the group coordinator ({member}). The member must abandon all its partitions and \
             rejoin."
        ),
    )
}

/// `isSubset`: every owned partition is assigned to the member.
fn owned_within(owned: Option<&[TopicIdPartitions]>, assigned: &PartitionEpochs) -> bool {
    let Some(owned) = owned else { return false };
    owned.iter().all(|t| {
        assigned
            .get(&t.topic_id)
            .is_some_and(|ps| t.partitions.iter().all(|p| ps.contains_key(p)))
    })
}

/// Member epoch validation (docs/consumer-protocol.md §K3.3).
fn validate_member_epoch(
    member: &ConsumerMember,
    req: &ConsumerGroupHeartbeatRequest,
) -> Result<(), ApiError> {
    let r = req.member_epoch;
    if r == JOIN_EPOCH {
        return Ok(());
    }
    if r > member.member_epoch {
        return Err(fenced_epoch("greater", r, member.member_epoch));
    }
    if r < member.member_epoch
        && (r != member.previous_member_epoch
            || !owned_within(req.topic_partitions.as_deref(), &member.assigned))
    {
        return Err(fenced_epoch("smaller", r, member.member_epoch));
    }
    Ok(())
}

/// Kafka's `throwIfConsumerGroupIsFull`.
fn group_full(max_size: i32) -> ApiError {
    ApiError::new(
        ErrorCode::GROUP_MAX_SIZE_REACHED,
        format!("The consumer group has reached its maximum capacity of {max_size} members."),
    )
}

fn unknown_member(member_id: &str, group_id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::UNKNOWN_MEMBER_ID,
        format!("Member {member_id} is not a member of group {group_id}."),
    )
}

fn unknown_instance(instance: &str) -> ApiError {
    ApiError::new(
        ErrorCode::UNKNOWN_MEMBER_ID,
        format!("Instance id {instance} is unknown."),
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

/// The three tombstones that remove a member (current assignment, target, subscription).
fn member_tombstones(group_id: &str, member_id: &str) -> [Record; 3] {
    [
        Record::ConsumerCurrentMemberAssignment {
            group_id: group_id.to_string(),
            member_id: member_id.to_string(),
            value: None,
        },
        Record::ConsumerTargetAssignmentMember {
            group_id: group_id.to_string(),
            member_id: member_id.to_string(),
            value: None,
        },
        Record::ConsumerMemberMetadata {
            group_id: group_id.to_string(),
            member_id: member_id.to_string(),
            value: None,
        },
    ]
}

/// A new instance of a static member takes the place of the one that held its instance id
/// (docs/consumer-protocol.md §K3.4, Kafka's `replaceStaticMember`), from a heartbeat or from
/// a classic JoinGroup (§K11.3): the old member's tombstones, then the copy under the new id
/// with epoch 0, the old member's target and its current assignment. Returns the copy.
fn replace_static_member(
    group: &ConsumerGroup,
    old: &ConsumerMember,
    member_id: &str,
    records: &mut Vec<Record>,
) -> ConsumerMember {
    let gid = &group.group_id;
    let mut copy = old.clone();
    copy.member_id = member_id.to_string();
    copy.member_epoch = 0;
    copy.previous_member_epoch = 0;
    records.extend(member_tombstones(gid, &old.member_id));
    records.push(Record::ConsumerMemberMetadata {
        group_id: gid.clone(),
        member_id: member_id.to_string(),
        value: Some(copy.metadata_value()),
    });
    records.push(Record::ConsumerTargetAssignmentMember {
        group_id: gid.clone(),
        member_id: member_id.to_string(),
        value: Some(
            group
                .target_assignment
                .get(&old.member_id)
                .cloned()
                .unwrap_or_default(),
        ),
    });
    records.push(Record::ConsumerCurrentMemberAssignment {
        group_id: gid.clone(),
        member_id: member_id.to_string(),
        value: Some(copy.assignment_value()),
    });
    copy
}

/// An assignment as the heartbeat response carries it.
fn response_assignment(assigned: &PartitionEpochs) -> Vec<TopicIdPartitions> {
    assigned
        .iter()
        .map(|(t, ps)| TopicIdPartitions {
            topic_id: *t,
            partitions: ps.keys().copied().collect(),
        })
        .collect()
}

/// A member id for a v0 member that sent none: Kafka draws a random `Uuid` (printed as 22
/// characters of URL-safe base64); the pure core derives one from the group, a sequence number
/// and the time.
fn new_member_id(group_id: &str, seq: u64, now: Millis) -> String {
    let mut input = Vec::with_capacity(group_id.len() + 16);
    input.extend_from_slice(group_id.as_bytes());
    input.extend_from_slice(&seq.to_be_bytes());
    input.extend_from_slice(&now.0.to_be_bytes());
    let h = xxhash_rust::xxh3::xxh3_128(&input);
    TopicId::new((h >> 64) as i64, h as i64).to_string()
}

/// What a heartbeat did to the member's regular expression (Kafka's
/// `UpdateRegularExpressionStatus`, docs/consumer-protocol.md §K3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegexStatus {
    NoChange,
    Updated,
    /// Changed to an expression the group has resolved already, or to none: the subscribed
    /// topics are known now, so the group epoch is bumped at once.
    UpdatedAndResolved,
}

/// The inputs of `maybeUpdateRegularExpressions` that are not the group or the member.
struct RegexContext {
    now: Millis,
    refresh_interval_ms: i32,
    last_version_with_new_topics: i64,
    resolution_scheduled: bool,
}

/// Kafka's `maybeUpdateRegularExpressions` (docs/consumer-protocol.md §K3.9): the status of the
/// member's expression, the tombstone of an expression no member uses any more, and whether a
/// resolution must be scheduled. A new expression that does not compile is refused.
fn regex_update(
    group: &ConsumerGroup,
    member: &ConsumerMember,
    updated: &ConsumerMember,
    cx: &RegexContext,
    records: &mut Vec<Record>,
) -> Result<(RegexStatus, bool), ApiError> {
    let old = member.subscribed_topic_regex.as_str();
    let new = updated.subscribed_topic_regex.as_str();
    let subscribers = |r: &str| {
        group
            .members
            .values()
            .filter(|m| m.subscribed_topic_regex == r)
            .count()
    };
    let mut status = RegexStatus::NoChange;
    let mut require_refresh = false;
    if old != new {
        status = RegexStatus::Updated;
        if !old.is_empty() && subscribers(old) == 1 {
            records.push(Record::ConsumerRegularExpression {
                group_id: group.group_id.clone(),
                regex: old.to_string(),
                value: None,
            });
        }
        if !new.is_empty() {
            if subscribers(new) == 0 {
                regex::validate(new)?;
                require_refresh = true;
            } else if group.resolved_regexes.contains_key(new) {
                status = RegexStatus::UpdatedAndResolved;
            }
        } else if !old.is_empty() {
            status = RegexStatus::UpdatedAndResolved;
        }
    }
    let mut subscribed: BTreeMap<&str, usize> = BTreeMap::new();
    for m in group.members.values() {
        if !m.subscribed_topic_regex.is_empty() {
            *subscribed
                .entry(m.subscribed_topic_regex.as_str())
                .or_default() += 1;
        }
    }
    if !require_refresh && subscribed.is_empty() {
        return Ok((status, false));
    }
    if cx.resolution_scheduled {
        return Ok((status, false));
    }
    // Every expression of a group is resolved in one go: the first one's time and version
    // stand for all (Kafka reads the first of its map).
    let last = group.resolved_regexes.values().next();
    let last_refresh_ms = last.map_or(i64::MIN, |r| r.timestamp);
    if cx.now.0 <= last_refresh_ms.saturating_add(10_000) {
        return Ok((status, false));
    }
    if !old.is_empty()
        && let Some(c) = subscribed.get_mut(old)
    {
        *c -= 1;
        if *c == 0 {
            subscribed.remove(old);
        }
    }
    if !new.is_empty() {
        *subscribed.entry(new).or_default() += 1;
    }
    require_refresh |= subscribed.len() != group.resolved_regexes.len();
    require_refresh |= last.map_or(0, |r| r.version) < cx.last_version_with_new_topics;
    require_refresh |= cx.now.0 > last_refresh_ms.saturating_add(i64::from(cx.refresh_interval_ms));
    Ok((status, require_refresh && !subscribed.is_empty()))
}

impl Coordinator {
    /// The consumer group with this id.
    pub fn consumer_group(&self, group_id: &str) -> Option<&ConsumerGroup> {
        self.groups.consumer(group_id)
    }

    /// Every consumer group, by id.
    pub fn consumer_groups(&self) -> impl Iterator<Item = &ConsumerGroup> {
        self.groups.all_consumer()
    }

    /// The default server assignor: the first of `group.consumer.assignors`.
    fn default_consumer_assignor(&self) -> String {
        self.config
            .consumer
            .assignors
            .first()
            .cloned()
            .unwrap_or_else(|| "uniform".to_string())
    }

    /// Handle one ConsumerGroupHeartbeat (docs/consumer-protocol.md §K3). Never panics; errors
    /// change nothing.
    pub fn consumer_group_heartbeat(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &ConsumerGroupHeartbeatRequest,
    ) -> Outcome<ConsumerGroupHeartbeatResponse> {
        let result = if !self.config.consumer.enabled {
            Err(ApiError::new(
                ErrorCode::UNSUPPORTED_VERSION,
                "The version of API is not supported.",
            ))
        } else {
            self.config
                .limits
                .check_consumer_heartbeat(req)
                .and_then(|_| {
                    validate_request(req, ctx.api_version, &self.config.consumer.assignors)
                })
                .and_then(|_| {
                    if req.member_epoch == LEAVE_EPOCH || req.member_epoch == STATIC_LEAVE_EPOCH {
                        self.consumer_leave(now, req)
                    } else {
                        self.consumer_join_or_heartbeat(now, ctx, req)
                    }
                })
        };
        result.unwrap_or_else(|e| Outcome::new(error_response(&e)))
    }

    /// Leave paths (docs/consumer-protocol.md §K5).
    fn consumer_leave(
        &mut self,
        now: Millis,
        req: &ConsumerGroupHeartbeatRequest,
    ) -> Result<Outcome<ConsumerGroupHeartbeatResponse>, ApiError> {
        let gid = &req.group_id;
        let group = match self.groups.get(gid) {
            None => {
                return Err(ApiError::new(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Group {gid} not found."),
                ));
            }
            Some(g) => g.as_consumer().ok_or_else(|| {
                ApiError::new(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Group {gid} is not a consumer group."),
                )
            })?,
        };
        let member = match &req.instance_id {
            None => group
                .members
                .get(&req.member_id)
                .ok_or_else(|| unknown_member(&req.member_id, gid))?,
            Some(instance) => {
                let m = group
                    .static_member(instance)
                    .ok_or_else(|| unknown_instance(instance))?;
                if m.member_id != req.member_id {
                    return Err(fenced_instance(&req.member_id, instance, &m.member_id));
                }
                m
            }
        };
        let member_id = member.member_id.clone();
        if req.member_epoch == STATIC_LEAVE_EPOCH {
            let mut left = member.clone();
            left.member_epoch = STATIC_LEAVE_EPOCH;
            left.pending_revocation = PartitionEpochs::new();
            for ps in left.assigned.values_mut() {
                ps.values_mut().for_each(|e| *e = 0);
            }
            let records = vec![Record::ConsumerCurrentMemberAssignment {
                group_id: gid.clone(),
                member_id: member_id.clone(),
                value: Some(left.assignment_value()),
            }];
            self.apply(&records)?;
            return Ok(Outcome {
                response: ConsumerGroupHeartbeatResponse {
                    member_id: Some(member_id),
                    member_epoch: STATIC_LEAVE_EPOCH,
                    ..Default::default()
                },
                records,
                timers: Vec::new(),
                topics_to_create: Vec::new(),
            });
        }
        let fenced = self.consumer_fence_member(now, gid, &member_id)?;
        Ok(Outcome {
            response: ConsumerGroupHeartbeatResponse {
                member_id: Some(req.member_id.clone()),
                member_epoch: req.member_epoch,
                ..Default::default()
            },
            records: fenced.records,
            timers: fenced.timers,
            topics_to_create: Vec::new(),
        })
    }

    /// Fence (remove) a member (docs/consumer-protocol.md §K5); see
    /// [`Coordinator::consumer_fence_members`].
    pub(super) fn consumer_fence_member(
        &mut self,
        now: Millis,
        group_id: &str,
        member_id: &str,
    ) -> Result<Outcome<()>, ApiError> {
        self.consumer_fence_members(now, group_id, &[member_id.to_string()])
    }

    /// Fence (remove) members (docs/consumer-protocol.md §K5, Kafka's `consumerGroupFenceMembers`):
    /// their tombstones, one group epoch bump with the metadata hash of the remaining
    /// subscriptions, and their timers cancelled; or, when only classic-protocol members would
    /// remain, the downgrade to a classic group (§K11.4). Nothing changes when the records cannot
    /// be applied. Unknown ids are skipped.
    pub(super) fn consumer_fence_members(
        &mut self,
        now: Millis,
        group_id: &str,
        member_ids: &[String],
    ) -> Result<Outcome<()>, ApiError> {
        let mut out = Outcome::new(());
        let Some(group) = self.groups.consumer(group_id) else {
            return Ok(out);
        };
        let leaving: Vec<&ConsumerMember> = member_ids
            .iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter_map(|id| group.members.get(id))
            .collect();
        if leaving.is_empty() {
            return Ok(out);
        }
        if self.consumer_may_downgrade(group, &leaving) {
            return self.consumer_downgrade(now, group_id, member_ids);
        }
        for member in &leaving {
            out.records
                .extend(member_tombstones(group_id, &member.member_id));
        }
        // A resolved expression no remaining member subscribes to is deleted.
        let gone = |id: &str| leaving.iter().any(|m| m.member_id == id);
        let regexes: BTreeSet<&str> = leaving
            .iter()
            .map(|m| m.subscribed_topic_regex.as_str())
            .filter(|r| !r.is_empty())
            .collect();
        for regex in regexes {
            if !group
                .members
                .values()
                .any(|m| !gone(&m.member_id) && m.subscribed_topic_regex == regex)
            {
                out.records.push(Record::ConsumerRegularExpression {
                    group_id: group_id.to_string(),
                    regex: regex.to_string(),
                    value: None,
                });
            }
        }
        let mut topics = BTreeSet::new();
        for m in group.members.values().filter(|m| !gone(&m.member_id)) {
            topics.extend(group.subscribed_topics_of(m));
        }
        let hash = crate::topology::metadata_hash(&topics, &self.metadata);
        let epoch = group.group_epoch + 1;
        out.records.push(Record::ConsumerGroupMetadata {
            group_id: group_id.to_string(),
            value: Some(ConsumerGroupMetadataValue {
                epoch,
                metadata_hash: hash,
            }),
        });
        if group.members.len() == leaving.len() {
            out.records.push(Record::ConsumerTargetAssignmentMetadata {
                group_id: group_id.to_string(),
                value: Some(TargetAssignmentMetadataValue {
                    assignment_epoch: epoch,
                    assignment_timestamp: 0,
                }),
            });
        }
        let ids: Vec<String> = leaving.iter().map(|m| m.member_id.clone()).collect();
        self.apply(&out.records)?;
        for member_id in &ids {
            out.timers
                .extend(self.consumer_cancel_member_timers(group_id, member_id));
        }
        Ok(out)
    }

    /// The group a heartbeat runs against (Kafka's `getOrMaybeCreateConsumerGroup`): `None` =
    /// a new group. An Empty classic group is converted (its tombstone goes in `records`).
    fn consumer_group_for_heartbeat(
        &mut self,
        gid: &str,
        joining: bool,
        records: &mut Vec<Record>,
    ) -> Result<Option<super::classic::ClassicGroup>, ApiError> {
        match self.groups.get(gid) {
            None if !joining => Err(ApiError::new(
                ErrorCode::GROUP_ID_NOT_FOUND,
                format!("Consumer group {gid} not found."),
            )),
            None => {
                self.config.limits.check_new_group(self.groups.len())?;
                Ok(None)
            }
            Some(g) if g.as_consumer().is_some() => Ok(None),
            Some(g) if joining && g.as_classic().is_some() => {
                if let Some(classic) = self.take_empty_classic_group(gid) {
                    records.push(Record::ClassicGroupMetadata {
                        group_id: gid.to_string(),
                        value: None,
                    });
                    return Ok(Some(classic));
                }
                // Not reached: `consumer_upgrade_classic` converted the live group or refused it
                // with this same answer (§K11.2).
                Err(ApiError::new(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!(
                        "Cannot upgrade classic group {gid} to consumer group because online \
                         upgrade is disabled."
                    ),
                ))
            }
            Some(_) => Err(ApiError::new(
                ErrorCode::GROUP_ID_NOT_FOUND,
                format!("Group {gid} is not a consumer group."),
            )),
        }
    }

    /// Join (epoch 0) or regular heartbeat (docs/consumer-protocol.md §K3.2-§K3.6).
    fn consumer_join_or_heartbeat(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &ConsumerGroupHeartbeatRequest,
    ) -> Result<Outcome<ConsumerGroupHeartbeatResponse>, ApiError> {
        let joining = req.member_epoch == JOIN_EPOCH;
        // A live classic group is upgraded first (§K11.2), and restored if the heartbeat fails.
        let upgrade = if joining {
            self.consumer_upgrade_classic(&req.group_id)?
        } else {
            None
        };
        let mut records: Vec<Record> = Vec::new();
        let converted = self.consumer_group_for_heartbeat(&req.group_id, joining, &mut records)?;
        let result = self.consumer_heartbeat_in_group(now, ctx, req, records);
        if let Some(upgrade) = upgrade {
            return self.consumer_finish_upgrade(now, upgrade, result);
        }
        if result.is_err()
            && let Some(classic) = converted
        {
            self.groups.insert_classic(classic);
        }
        result
    }

    fn consumer_heartbeat_in_group(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &ConsumerGroupHeartbeatRequest,
        mut records: Vec<Record>,
    ) -> Result<Outcome<ConsumerGroupHeartbeatResponse>, ApiError> {
        let gid = req.group_id.clone();
        let joining = req.member_epoch == JOIN_EPOCH;
        // Borrowed values only: this runs on every heartbeat (§K8.1).
        let timings = self.config.consumer_timings(&gid);
        let max_size = self.config.consumer.max_size;
        let regex_refresh_interval_ms = self.config.consumer.regex_refresh_interval_ms;
        let default_assignor = self.default_consumer_assignor();
        let new_group;
        let group_existed = self.groups.consumer(&gid).is_some();
        let member_id = if req.member_id.is_empty() {
            self.classic.supplied_member_id.take().unwrap_or_else(|| {
                self.classic.member_seq += 1;
                new_member_id(&gid, self.classic.member_seq, now)
            })
        } else {
            req.member_id.clone()
        };
        let group: &ConsumerGroup = match self.groups.consumer(&gid) {
            Some(g) => g,
            None => {
                new_group = ConsumerGroup::new(&gid);
                &new_group
            }
        };

        // Size check (Kafka's `throwIfConsumerGroupIsFull`).
        let registered_static = req
            .instance_id
            .as_deref()
            .is_some_and(|i| group.static_members.contains_key(i));
        if !registered_static
            && group.members.len() >= max_size.max(0) as usize
            && (req.member_id.is_empty() || !group.members.contains_key(&member_id))
        {
            return Err(group_full(max_size));
        }

        // Member lookup or creation, static replacement (docs/consumer-protocol.md §K3.4).
        let owned = req.topic_partitions.as_deref();
        let mut replaced: Option<String> = None;
        let member: ConsumerMember = match &req.instance_id {
            None => match group.members.get(&member_id) {
                Some(m) => {
                    validate_member_epoch(m, req)?;
                    m.clone()
                }
                None if joining => ConsumerMember::new(&member_id),
                None => return Err(unknown_member(&member_id, &gid)),
            },
            Some(instance) if joining => match group.static_member(instance) {
                None => group
                    .members
                    .get(&member_id)
                    .cloned()
                    .unwrap_or_else(|| ConsumerMember::new(&member_id)),
                Some(old) => {
                    if old.member_epoch != STATIC_LEAVE_EPOCH && !old.uses_classic_protocol() {
                        return Err(ApiError::new(
                            ErrorCode::UNRELEASED_INSTANCE_ID,
                            format!(
                                "Static member {member_id} with instance id {instance} cannot \
                                 join the group because the instance id is owned by {} member.",
                                old.member_id
                            ),
                        ));
                    }
                    replaced = Some(old.member_id.clone());
                    replace_static_member(group, old, &member_id, &mut records)
                }
            },
            Some(instance) => {
                let m = group
                    .static_member(instance)
                    .ok_or_else(|| unknown_instance(instance))?;
                if m.member_id != member_id {
                    return Err(fenced_instance(&member_id, instance, &m.member_id));
                }
                validate_member_epoch(m, req)?;
                m.clone()
            }
        };

        // The updated member (docs/consumer-protocol.md §K3.5).
        let mut updated = member.clone();
        if let Some(i) = &req.instance_id {
            updated.instance_id = Some(i.clone());
        }
        if let Some(r) = &req.rack_id {
            updated.rack_id = Some(r.clone());
        }
        if req.rebalance_timeout_ms != -1 {
            updated.rebalance_timeout_ms = req.rebalance_timeout_ms;
        }
        if let Some(a) = &req.server_assignor {
            updated.server_assignor = Some(a.clone());
        }
        if let Some(names) = &req.subscribed_topic_names {
            updated.subscribed_topic_names = names.iter().cloned().collect();
        }
        if let Some(r) = &req.subscribed_topic_regex {
            updated.subscribed_topic_regex = r.clone();
        }
        updated.client_id = ctx.client_id.clone();
        updated.client_host = ctx.client_host.clone();
        updated.classic_member_metadata = None;
        let mut names_changed = false;
        if !updated.same_metadata(&member) {
            records.push(Record::ConsumerMemberMetadata {
                group_id: gid.clone(),
                member_id: member_id.clone(),
                value: Some(updated.metadata_value()),
            });
            names_changed = updated.subscribed_topic_names != member.subscribed_topic_names;
        }
        let (regex_status, resolve_regexes) = regex_update(
            group,
            &member,
            &updated,
            &RegexContext {
                now,
                refresh_interval_ms: regex_refresh_interval_ms,
                last_version_with_new_topics: self.metadata_versions.last_with_new_topics,
                resolution_scheduled: self.timers.is_scheduled(&TimerKey::ConsumerRegex {
                    group_id: gid.clone(),
                }),
            },
            &mut records,
        )?;
        let subscription_changed = names_changed || regex_status != RegexStatus::NoChange;
        let old_for_counts = group
            .members
            .get(&member.member_id)
            .or_else(|| replaced.as_deref().and_then(|old| group.members.get(old)));
        let preferred_before = group
            .preferred_assignor()
            .unwrap_or_else(|| default_assignor.clone());
        let preferred_after = group
            .compute_preferred_assignor(Some(&member), Some(&updated))
            .unwrap_or_else(|| default_assignor.clone());
        let mut bump = names_changed
            || regex_status == RegexStatus::UpdatedAndResolved
            || preferred_before != preferred_after;

        // Subscription metadata: the metadata hash of the subscribed topics (docs/consumer-protocol.md §K3.6).
        let mut group_epoch = group.group_epoch;
        let mut refresh_deadline = None;
        let mut subscription_type = group.stored_subscription_type;
        if bump || group.has_metadata_expired(now) {
            subscription_type = group.subscription_type_with(old_for_counts, Some(&updated));
            let topics = group.subscribed_topics_with(old_for_counts, Some(&updated));
            let hash = crate::topology::metadata_hash(&topics, &self.metadata);
            if hash != group.metadata_hash {
                bump = true;
            }
            if bump {
                group_epoch += 1;
                records.push(Record::ConsumerGroupMetadata {
                    group_id: gid.clone(),
                    value: Some(ConsumerGroupMetadataValue {
                        epoch: group_epoch,
                        metadata_hash: hash,
                    }),
                });
            }
            refresh_deadline = Some((now.plus(i32::MAX as i64), group_epoch));
            if group.has_partition_metadata_record {
                records.push(Record::ConsumerGroupPartitionMetadata {
                    group_id: gid.clone(),
                    value: None,
                });
            }
        }

        // Target assignment (docs/consumer-protocol.md §K3.7).
        let assignor = builtin_assignor(&preferred_after)
            .or_else(|| builtin_assignor(&default_assignor))
            .ok_or_else(ApiError::unknown_server_error)?;
        let target = target::update_target(&TargetRequest {
            group,
            group_epoch,
            updated_member: &updated,
            replaced_member_id: replaced.as_deref(),
            assignor,
            metadata: &self.metadata,
            topic_ids: &self.topic_ids,
            now,
            assignment_interval_ms: timings.assignment_interval_ms,
            subscription_type,
        })?;
        records.extend(target.records);

        // Reconciliation (docs/consumer-protocol.md §K4).
        let reconciled =
            if !subscription_changed && updated.is_reconciled_to(target.assignment_epoch) {
                updated.clone()
            } else {
                let subscribed: BTreeSet<TopicId> =
                    target::subscribed_topic_ids(group, &updated, &self.metadata, &self.topic_ids)
                        .into_iter()
                        .collect();
                let is_owned = |t: &TopicId, p: i32| group.is_partition_owned(t, p);
                reconcile::reconcile(
                    &updated,
                    &ReconcileInput {
                        target_epoch: target.assignment_epoch,
                        target: &target.member_target,
                        subscribed: &subscribed,
                        subscription_changed,
                        owned,
                        is_owned: &is_owned,
                    },
                )?
            };
        let assignment_changed = !reconciled.same_assignment(&updated);
        if assignment_changed {
            records.push(Record::ConsumerCurrentMemberAssignment {
                group_id: gid.clone(),
                member_id: member_id.clone(),
                value: Some(reconciled.assignment_value()),
            });
        }
        let partitions_changed = reconciled.assigned != member.assigned;
        let full_request = req.rebalance_timeout_ms != -1
            && (req.subscribed_topic_names.is_some() || req.subscribed_topic_regex.is_some())
            && req.topic_partitions.is_some();
        let assignment = (joining || full_request || partitions_changed)
            .then(|| response_assignment(&reconciled.assigned));
        let new_state = reconciled.state;
        let new_epoch = reconciled.member_epoch;
        let rebalance_timeout_ms = reconciled.rebalance_timeout_ms;

        // Apply: records, soft state, timers.
        self.apply(&records)?;
        let mut timers: Vec<TimerChange> = Vec::new();
        if assignment_changed {
            let key = TimerKey::RebalanceTimeout {
                group_id: gid.clone(),
                member_id: member_id.clone(),
            };
            if new_state == ConsumerMemberState::UnrevokedPartitions {
                let at = now.plus(rebalance_timeout_ms.max(0) as i64);
                self.timer_schedule(&mut timers, key, at, new_epoch);
            } else {
                self.timer_cancel(&mut timers, &key);
            }
        }
        if resolve_regexes {
            let key = TimerKey::ConsumerRegex {
                group_id: gid.clone(),
            };
            self.timer_schedule(&mut timers, key, now, 0);
        }
        self.timer_schedule(
            &mut timers,
            TimerKey::SessionTimeout {
                group_id: gid.clone(),
                member_id: member_id.clone(),
            },
            now.plus(i64::from(timings.session_timeout_ms)),
            0,
        );
        // Kafka sets the refresh deadline on a group object that replay replaces for a new
        // group, so only an existing group keeps it.
        if group_existed
            && let Some(d) = refresh_deadline
            && let Some(g) = self.groups.consumer_mut(&gid)
        {
            g.metadata_refresh_deadline = d;
        }
        Ok(Outcome {
            response: ConsumerGroupHeartbeatResponse {
                error_code: 0,
                error_message: None,
                member_id: Some(member_id),
                member_epoch: new_epoch,
                heartbeat_interval_ms: timings.heartbeat_interval_ms,
                assignment,
            },
            records,
            timers,
            topics_to_create: Vec::new(),
        })
    }

    /// The group's regular expressions resolved against the topics (Kafka's
    /// `handleRegularExpressionsResult`, docs/consumer-protocol.md §K3.9): a record for every
    /// expression a member still subscribes to, and a group epoch bump when an expression's
    /// topics or the metadata hash changed. Nothing when the group is gone.
    fn consumer_resolve_regexes(&mut self, now: Millis, group_id: &str) -> Outcome<()> {
        let mut out = Outcome::new(());
        let Some(group) = self.groups.consumer(group_id) else {
            return out;
        };
        let subscribed: BTreeSet<&str> = group
            .members
            .values()
            .map(|m| m.subscribed_topic_regex.as_str())
            .filter(|r| !r.is_empty())
            .collect();
        let resolved = regex::resolve(subscribed.iter().copied(), &self.metadata);
        let mut bump = false;
        let mut topics: BTreeSet<String> = BTreeSet::new();
        for m in group.members.values() {
            topics.extend(m.subscribed_topic_names.iter().cloned());
        }
        for (regex, now_topics) in &resolved {
            let before = group
                .resolved_regexes
                .get(regex)
                .map(|r| r.topics.as_slice());
            if before.unwrap_or(&[]) != now_topics.as_slice() {
                bump = true;
            }
            topics.extend(now_topics.iter().cloned());
            out.records.push(Record::ConsumerRegularExpression {
                group_id: group_id.to_string(),
                regex: regex.clone(),
                value: Some(crate::records::ConsumerRegexValue {
                    topics: now_topics.clone(),
                    version: self.metadata_versions.current,
                    timestamp: now.0,
                }),
            });
        }
        // Expressions resolved earlier that nobody subscribes to any more keep their topics in
        // Kafka's count until their tombstone is replayed.
        for (regex, r) in &group.resolved_regexes {
            if !resolved.contains_key(regex) {
                topics.extend(r.topics.iter().cloned());
            }
        }
        let hash = crate::topology::metadata_hash(&topics, &self.metadata);
        if hash != group.metadata_hash {
            bump = true;
        }
        let epoch = group.group_epoch + 1;
        if bump {
            out.records.push(Record::ConsumerGroupMetadata {
                group_id: group_id.to_string(),
                value: Some(ConsumerGroupMetadataValue {
                    epoch,
                    metadata_hash: hash,
                }),
            });
        }
        if self.apply(&out.records).is_err() {
            return Outcome::new(());
        }
        if bump && let Some(g) = self.groups.consumer_mut(group_id) {
            g.metadata_refresh_deadline = (now.plus(i32::MAX as i64), epoch);
        }
        out
    }

    /// Arm the timers of consumer groups after loading (docs/consumer-protocol.md §K5): a session timeout for every
    /// member, a rebalance timeout for members in UNREVOKED_PARTITIONS.
    pub(super) fn consumer_on_loaded(&mut self, now: Millis) -> Vec<TimerChange> {
        let mut arm = Vec::new();
        for g in self.groups.all_consumer() {
            // Kafka arms every member, classic ones too, with the group's consumer session.
            let session = self.config.consumer_timings(&g.group_id).session_timeout_ms;
            for m in g.members.values() {
                arm.push((
                    TimerKey::SessionTimeout {
                        group_id: g.group_id.clone(),
                        member_id: m.member_id.clone(),
                    },
                    now.plus(i64::from(session)),
                    0,
                ));
                if m.state == ConsumerMemberState::UnrevokedPartitions {
                    arm.push((
                        TimerKey::RebalanceTimeout {
                            group_id: g.group_id.clone(),
                            member_id: m.member_id.clone(),
                        },
                        now.plus(m.rebalance_timeout_ms.max(0) as i64),
                        m.member_epoch,
                    ));
                }
            }
        }
        let mut changes = Vec::new();
        for (k, d, tag) in arm {
            changes.push(self.timers.schedule(k, d, tag));
        }
        for g in self.groups.all_consumer_mut() {
            g.metadata_refresh_deadline = (Millis(0), 0);
        }
        changes
    }

    /// A session or rebalance timeout of a consumer group member (docs/consumer-protocol.md §K5); `None` when the timer's
    /// group is not a consumer group.
    pub(super) fn consumer_fire(
        &mut self,
        now: Millis,
        key: &TimerKey,
        tag: i32,
    ) -> Option<Result<Outcome<()>, ApiError>> {
        match key {
            TimerKey::SessionTimeout {
                group_id,
                member_id,
            } => {
                self.groups.consumer(group_id)?;
                Some(self.consumer_fence_member(now, group_id, member_id))
            }
            TimerKey::ConsumerRegex { group_id } => {
                Some(Ok(self.consumer_resolve_regexes(now, group_id)))
            }
            TimerKey::RebalanceTimeout {
                group_id,
                member_id,
            } => {
                let g = self.groups.consumer(group_id)?;
                let epoch = g.members.get(member_id).map(|m| m.member_epoch);
                Some(if epoch == Some(tag) {
                    self.consumer_fence_member(now, group_id, member_id)
                } else {
                    Ok(Outcome::new(()))
                })
            }
            _ => None,
        }
    }
}
