//! Online migration between classic and consumer groups (docs/consumer-protocol.md §K11),
//! as Kafka 4.4's `group.consumer.migration.policy` allows it:
//!
//! * **upgrade** (§K11.2): a consumer-protocol member joining a live classic group whose members
//!   use the `consumer` protocol type turns it into a consumer group; every classic member keeps
//!   its partitions at the classic generation, which becomes the group and member epoch;
//! * **classic members inside a consumer group** (§K11.3): JoinGroup, SyncGroup, Heartbeat and
//!   LeaveGroup of a member that still speaks the classic protocol are served from the consumer
//!   group: its subscription comes from the JoinGroup metadata, the coordinator computes its
//!   assignment (SyncGroup only hands it out), and a rebalance reaches it as
//!   REBALANCE_IN_PROGRESS on Heartbeat;
//! * **downgrade** (§K11.4): when the last consumer-protocol member leaves (or is fenced), the
//!   group becomes a classic group again, with the target assignment as its members'
//!   assignment, and starts a rebalance.
//!
//! Every conversion writes the records Kafka writes (tombstones of one type, then the group
//! of the other), so a restart in the middle of a mixed group replays into the same group.

use crate::util::map::{BTreeMap, BTreeSet};

use super::group::{ConsumerGroup, ConsumerMember, TargetPartitions};
use super::reconcile::{self, ReconcileInput};
use super::target::{self, TargetRequest};
use super::{fenced_instance, group_full, new_member_id, replace_static_member, topic_id_of};
use crate::assignor::client::protocol::{
    decode_assignment_with_user_data, decode_subscription, encode_assignment_at, payload_version,
};
use crate::assignor::consumer::{TopicId, builtin_assignor};
use crate::config::MigrationPolicy;
use crate::coordinator::classic::group::{ClassicMember, ClassicState};
use crate::coordinator::classic::{ClassicGroup, ClassicReply, Completed, RequestToken};
use crate::coordinator::{Coordinator, Outcome, RequestContext, TimerChange, TimerKey};
use crate::error::{ApiError, ErrorCode};
use crate::protocol::classic::{
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, JoinProtocol, LeaveGroupRequest,
    LeaveGroupResponse, LeftMember, SyncGroupRequest, SyncGroupResponse,
};
use crate::protocol::consumer::TopicIdPartitions;
use crate::records::{
    ConsumerClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberState, Record,
    TargetAssignmentMetadataValue,
};
use crate::types::Millis;

/// JoinGroup v4+ requires a known member id (KIP-394), for classic members of consumer groups
/// too.
const JOIN_REQUIRES_KNOWN_MEMBER_ID_VERSION: i16 = 4;

/// The protocol type every member of a consumer group speaks on the classic APIs.
const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

/// A classic group converted by a consumer heartbeat that has not answered yet: what to
/// restore if it fails.
pub(super) struct PendingUpgrade {
    classic: ClassicGroup,
    records: Vec<Record>,
}

fn cannot_upgrade(group_id: &str, why: &str) -> ApiError {
    ApiError::new(
        ErrorCode::GROUP_ID_NOT_FOUND,
        format!("Cannot upgrade classic group {group_id} to consumer group because {why}."),
    )
}

fn inconsistent(message: String) -> ApiError {
    ApiError::new(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, message)
}

/// Partitions by topic name as topic ids, for the topics that exist (Kafka's
/// `Utils.toTopicPartitionMap`: unknown topics are dropped).
fn partitions_by_id(
    partitions: &[(String, i32)],
    metadata: &crate::topology::MetadataImage,
    ids: &BTreeMap<String, TopicId>,
) -> BTreeMap<TopicId, BTreeSet<i32>> {
    let mut out: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
    for (topic, p) in partitions {
        if metadata.topics.contains_key(topic) {
            out.entry(topic_id_of(ids, topic)).or_default().insert(*p);
        }
    }
    out
}

/// Partitions by topic id as (name, partition), for the topics that exist.
fn partitions_by_name<'a>(
    partitions: impl Iterator<Item = (&'a TopicId, Vec<i32>)>,
    metadata: &crate::topology::MetadataImage,
    ids: &BTreeMap<String, TopicId>,
) -> Vec<(String, i32)> {
    let names: BTreeMap<TopicId, &String> = metadata
        .topics
        .keys()
        .map(|n| (topic_id_of(ids, n), n))
        .collect();
    let mut out = Vec::new();
    for (id, ps) in partitions {
        if let Some(name) = names.get(id) {
            out.extend(ps.into_iter().map(|p| ((*name).clone(), p)));
        }
    }
    crate::util::sort::sort(&mut out);
    out
}

/// The `consumer` protocol assignment a classic member is handed, written at the version of its
/// subscription (Kafka's `prepareAssignment`).
fn classic_assignment_bytes(
    partitions: Vec<(String, i32)>,
    subscription: &[u8],
) -> Result<Vec<u8>, ApiError> {
    let version = payload_version(subscription).map_err(|_| ApiError::unknown_server_error())?;
    encode_assignment_at(&partitions, version).map_err(|_| ApiError::unknown_server_error())
}

/// The first protocol a classic member of a consumer group listed (its protocol name).
fn first_protocol(member: &ConsumerMember) -> Option<&(String, Vec<u8>)> {
    member
        .classic_member_metadata
        .as_ref()
        .and_then(|c| c.supported_protocols.first())
}

impl Coordinator {
    /// `validateOnlineUpgrade` and `convertToConsumerGroup` (§K11.2): when `group_id` is a live
    /// classic group, replace it by the consumer group its members make (records applied);
    /// `None` when there is no live classic group to upgrade.
    pub(super) fn consumer_upgrade_classic(
        &mut self,
        group_id: &str,
    ) -> Result<Option<PendingUpgrade>, ApiError> {
        let Some(classic) = self.groups.classic(group_id) else {
            return Ok(None);
        };
        if classic.is(ClassicState::Empty) {
            return Ok(None);
        }
        if !self.config.consumer.migration_policy.upgrade_enabled() {
            return Err(cannot_upgrade(group_id, "online upgrade is disabled"));
        }
        if classic.protocol_type.as_deref() != Some(CONSUMER_PROTOCOL_TYPE) {
            return Err(cannot_upgrade(
                group_id,
                "the group does not use the consumer embedded protocol",
            ));
        }
        if classic.members.len() > self.config.consumer.max_size.max(0) as usize {
            return Err(cannot_upgrade(
                group_id,
                "the group size exceeds the consumer group maximum size",
            ));
        }
        let classic = classic.clone();
        let records = self.upgrade_records(&classic)?;
        self.apply(&records)?;
        Ok(Some(PendingUpgrade { classic, records }))
    }

    /// The classic group's tombstone, then Kafka's `createConsumerGroupRecords` of the group
    /// `ConsumerGroup.fromClassicGroup` builds.
    fn upgrade_records(&self, classic: &ClassicGroup) -> Result<Vec<Record>, ApiError> {
        let gid = classic.group_id.as_str();
        let generation = classic.generation;
        let protocol = classic.protocol_name.clone().unwrap_or_default();
        let mut members = Vec::with_capacity(classic.members.len());
        let mut topics = BTreeSet::new();
        for cm in classic.members.values() {
            let (assigned, user_data) = decode_assignment_with_user_data(&cm.assignment)
                .map_err(|_| cannot_upgrade(gid, "the embedded consumer protocol is malformed"))?;
            if user_data.is_some_and(|u| !u.is_empty()) {
                return Err(cannot_upgrade(
                    gid,
                    "an unsupported custom assignor is in use. Please refer to the documentation \
                     or switch to a default assignor before re-attempting the upgrade",
                ));
            }
            let subscription = decode_subscription(cm.metadata(&protocol))
                .map_err(|_| cannot_upgrade(gid, "the embedded consumer protocol is malformed"))?;
            let assigned = partitions_by_id(&assigned, &self.metadata, &self.topic_ids);
            let mut m = ConsumerMember::new(&cm.member_id);
            m.member_epoch = generation;
            m.previous_member_epoch = generation;
            m.state = ConsumerMemberState::Stable;
            m.instance_id = cm.group_instance_id.clone();
            m.rack_id = subscription.rack_id.clone();
            m.rebalance_timeout_ms = cm.rebalance_timeout_ms;
            m.client_id = cm.client_id.clone();
            m.client_host = cm.client_host.clone();
            m.subscribed_topic_names = subscription.topics.iter().cloned().collect();
            m.classic_member_metadata = Some(ConsumerClassicMemberMetadata {
                session_timeout_ms: cm.session_timeout_ms,
                supported_protocols: cm
                    .protocols
                    .iter()
                    .map(|p| (p.name.clone(), p.metadata.clone()))
                    .collect(),
            });
            m.assigned = assigned
                .iter()
                .map(|(t, ps)| (*t, ps.iter().map(|p| (*p, generation)).collect()))
                .collect();
            topics.extend(m.subscribed_topic_names.iter().cloned());
            let target: TargetPartitions = assigned
                .into_iter()
                .map(|(t, ps)| (t, ps.into_iter().collect()))
                .collect();
            members.push((m, target));
        }
        let hash = crate::topology::metadata_hash(&topics, &self.metadata);
        let gid = gid.to_string();
        let mut records = vec![Record::ClassicGroupMetadata {
            group_id: gid.clone(),
            value: None,
        }];
        for (m, _) in &members {
            records.push(Record::ConsumerMemberMetadata {
                group_id: gid.clone(),
                member_id: m.member_id.clone(),
                value: Some(m.metadata_value()),
            });
        }
        records.push(Record::ConsumerGroupMetadata {
            group_id: gid.clone(),
            value: Some(ConsumerGroupMetadataValue {
                epoch: generation,
                metadata_hash: hash,
            }),
        });
        for (m, target) in &members {
            records.push(Record::ConsumerTargetAssignmentMember {
                group_id: gid.clone(),
                member_id: m.member_id.clone(),
                value: Some(target.clone()),
            });
        }
        records.push(Record::ConsumerTargetAssignmentMetadata {
            group_id: gid.clone(),
            value: Some(TargetAssignmentMetadataValue {
                assignment_epoch: generation,
                assignment_timestamp: 0,
            }),
        });
        for (m, _) in &members {
            records.push(Record::ConsumerCurrentMemberAssignment {
                group_id: gid.clone(),
                member_id: m.member_id.clone(),
                value: Some(m.assignment_value()),
            });
        }
        Ok(records)
    }

    /// The end of an upgrade: on success its records lead the heartbeat's, the classic group's
    /// waiting requests are answered and each converted member gets its classic session timeout;
    /// on failure the classic group is put back as it was.
    pub(super) fn consumer_finish_upgrade<R>(
        &mut self,
        now: Millis,
        upgrade: PendingUpgrade,
        result: Result<Outcome<R>, ApiError>,
    ) -> Result<Outcome<R>, ApiError> {
        let PendingUpgrade { classic, records } = upgrade;
        let mut out = match result {
            Ok(out) => out,
            Err(e) => {
                self.groups.remove(&classic.group_id);
                self.groups.insert_classic(classic);
                return Err(e);
            }
        };
        let mut timers = self.classic_release_upgraded(&classic);
        for m in classic.members.values() {
            let key = TimerKey::SessionTimeout {
                group_id: classic.group_id.clone(),
                member_id: m.member_id.clone(),
            };
            let at = now.plus(i64::from(m.session_timeout_ms.max(0)));
            timers.push(self.timers.schedule(key, at, 0));
        }
        // Kafka sets no metadata refresh deadline on the group the records rebuild.
        if let Some(g) = self.groups.consumer_mut(&classic.group_id) {
            g.metadata_refresh_deadline = (Millis(0), 0);
        }
        out.records.splice(0..0, records);
        out.timers.splice(0..0, timers);
        Ok(out)
    }

    /// Cancel every timer of a consumer group member (Kafka's `cancelTimers`).
    pub(super) fn consumer_cancel_member_timers(
        &mut self,
        group_id: &str,
        member_id: &str,
    ) -> Vec<TimerChange> {
        let (g, m) = (group_id.to_string(), member_id.to_string());
        [
            TimerKey::SessionTimeout {
                group_id: g.clone(),
                member_id: m.clone(),
            },
            TimerKey::RebalanceTimeout {
                group_id: g.clone(),
                member_id: m.clone(),
            },
            TimerKey::ConsumerClassicJoin {
                group_id: g.clone(),
                member_id: m.clone(),
            },
            TimerKey::ConsumerClassicSync {
                group_id: g,
                member_id: m,
            },
        ]
        .iter()
        .filter_map(|k| self.timers.cancel(k))
        .collect()
    }

    /// `validateOnlineDowngradeWithFencedMembers` (§K11.4): only classic members would remain,
    /// at least one, the policy allows a downgrade and they fit in a classic group.
    pub(super) fn consumer_may_downgrade(
        &self,
        group: &ConsumerGroup,
        leaving: &[&ConsumerMember],
    ) -> bool {
        let leaving_classic = leaving.iter().filter(|m| m.uses_classic_protocol()).count();
        let remaining = group.members.len() - leaving.len();
        group.classic_member_count() - leaving_classic == remaining
            && remaining > 0
            && self.config.consumer.migration_policy.downgrade_enabled()
            && remaining <= self.config.classic.max_size.max(0) as usize
    }

    /// `convertToClassicGroup` (§K11.4): the consumer group's tombstones, then the classic
    /// group `ClassicGroup.fromConsumerGroup` builds (the remaining members, each with its
    /// target assignment) in a GroupMetadata record, and a rebalance of that group.
    pub(super) fn consumer_downgrade(
        &mut self,
        now: Millis,
        group_id: &str,
        leaving: &[String],
    ) -> Result<Outcome<()>, ApiError> {
        let group = self
            .groups
            .consumer(group_id)
            .ok_or_else(ApiError::unknown_server_error)?;
        let mut classic = ClassicGroup::new(group_id, now);
        classic.state = ClassicState::Stable;
        classic.previous_state = ClassicState::Empty;
        classic.generation = group.group_epoch;
        classic.protocol_type = Some(CONSUMER_PROTOCOL_TYPE.to_string());
        let members: Vec<&ConsumerMember> = group
            .members
            .values()
            .filter(|m| !leaving.contains(&m.member_id))
            .collect();
        for m in &members {
            let Some(meta) = &m.classic_member_metadata else {
                return Err(ApiError::unknown_server_error());
            };
            classic.add(ClassicMember {
                member_id: m.member_id.clone(),
                group_instance_id: m.instance_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                session_timeout_ms: meta.session_timeout_ms,
                protocol_type: CONSUMER_PROTOCOL_TYPE.to_string(),
                protocols: meta
                    .supported_protocols
                    .iter()
                    .map(|(name, metadata)| JoinProtocol {
                        name: name.clone(),
                        metadata: metadata.clone(),
                    })
                    .collect(),
                assignment: Vec::new(),
                awaiting_join: None,
                awaiting_sync: None,
                is_new: false,
            });
        }
        classic.protocol_name = classic.select_protocol();
        classic.subscribed_topics = classic.compute_subscribed_topics();
        let protocol = classic.protocol_name.clone().unwrap_or_default();
        let mut assignments = BTreeMap::new();
        for m in &members {
            let target = group.target_assignment.get(&m.member_id);
            let partitions = partitions_by_name(
                target.into_iter().flatten().map(|(t, ps)| (t, ps.clone())),
                &self.metadata,
                &self.topic_ids,
            );
            let subscription = classic
                .members
                .get(&m.member_id)
                .map(|c| c.metadata(&protocol))
                .unwrap_or_default();
            let bytes = classic_assignment_bytes(partitions, subscription)?;
            assignments.insert(m.member_id.clone(), bytes);
        }
        for (id, bytes) in &assignments {
            if let Some(cm) = classic.members.get_mut(id) {
                cm.assignment = bytes.clone();
            }
        }
        let value = classic.metadata_value(&assignments);
        classic.persisted = Some(value.clone());
        let all_members: Vec<String> = group.members.keys().cloned().collect();
        let tombstones = self
            .consumer_group_tombstones(group_id)
            .ok_or_else(ApiError::unknown_server_error)?;
        self.apply(&tombstones)?;
        let mut out = Outcome::new(());
        for m in &all_members {
            out.timers
                .extend(self.consumer_cancel_member_timers(group_id, m));
        }
        self.groups.insert_classic(classic);
        out.records = tombstones;
        out.records.push(Record::ClassicGroupMetadata {
            group_id: group_id.to_string(),
            value: Some(value),
        });
        let started = self.classic_start_downgraded(now, group_id);
        out.records.extend(started.records);
        out.timers.extend(started.timers);
        Ok(out)
    }

    fn answer_classic(&mut self, token: RequestToken, reply: ClassicReply) {
        self.classic.outbox.push(Completed { token, reply });
    }

    /// `validateConsumerGroupMember`: the member by id, or by instance id (fenced when another
    /// member id owns the instance).
    fn classic_member_of<'a>(
        group: &'a ConsumerGroup,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> Result<&'a ConsumerMember, ApiError> {
        let member = match instance_id {
            None => group
                .members
                .get(member_id)
                .ok_or_else(|| super::unknown_member(member_id, &group.group_id))?,
            Some(instance) => {
                let m = group.static_member(instance).ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::UNKNOWN_MEMBER_ID,
                        format!(
                            "Member with instance id {instance} is not a member of group {}.",
                            group.group_id
                        ),
                    )
                })?;
                if m.member_id != member_id {
                    return Err(fenced_instance(member_id, instance, &m.member_id));
                }
                m
            }
        };
        if !member.uses_classic_protocol() {
            return Err(ApiError::new(
                ErrorCode::UNKNOWN_MEMBER_ID,
                format!(
                    "Member {} does not use the classic protocol.",
                    member.member_id
                ),
            ));
        }
        Ok(member)
    }

    fn illegal_generation(member: &ConsumerMember, generation: i32) -> Result<(), ApiError> {
        if member.member_epoch != generation {
            return Err(ApiError::new(
                ErrorCode::ILLEGAL_GENERATION,
                format!(
                    "The request generation id {generation} is not equal to the member epoch {} \
                     of member {}.",
                    member.member_epoch, member.member_id
                ),
            ));
        }
        Ok(())
    }

    /// `scheduleConsumerGroupJoinTimeoutIfAbsent`: the member told to rejoin must do so within
    /// its rebalance timeout.
    fn schedule_classic_join_timeout(
        &mut self,
        now: Millis,
        member: &ConsumerMember,
        group_id: &str,
    ) -> Vec<TimerChange> {
        let key = TimerKey::ConsumerClassicJoin {
            group_id: group_id.to_string(),
            member_id: member.member_id.clone(),
        };
        if self.timers.deadline(&key).is_some() {
            return Vec::new();
        }
        let at = now.plus(i64::from(member.rebalance_timeout_ms.max(0)));
        vec![self.timers.schedule(key, at, 0)]
    }

    fn schedule_classic_session(
        &mut self,
        now: Millis,
        member: &ConsumerMember,
        group_id: &str,
    ) -> TimerChange {
        let session = member.classic_member_metadata.as_ref().map_or_else(
            || self.config.consumer_timings(group_id).session_timeout_ms,
            |c| c.session_timeout_ms,
        );
        let key = TimerKey::SessionTimeout {
            group_id: group_id.to_string(),
            member_id: member.member_id.clone(),
        };
        self.timers
            .schedule(key, now.plus(i64::from(session.max(0))), 0)
    }

    /// JoinGroup of a classic member into a live consumer group (§K11.3, Kafka's
    /// `classicGroupJoinToConsumerGroup`); the answer goes to the outbox under `token`.
    pub(in crate::coordinator) fn classic_join_to_consumer_group(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &JoinGroupRequest,
        token: RequestToken,
    ) -> Outcome<()> {
        let (reply, out) = match self.classic_join_consumer(now, ctx, req) {
            Ok(done) => done,
            Err(e) => (JoinGroupResponse::error("", e.code), Outcome::new(())),
        };
        self.answer_classic(token, ClassicReply::Join(reply));
        out
    }

    fn classic_join_consumer(
        &mut self,
        now: Millis,
        ctx: &RequestContext,
        req: &JoinGroupRequest,
    ) -> Result<(JoinGroupResponse, Outcome<()>), ApiError> {
        let gid = req.group_id.clone();
        if self.config.consumer.migration_policy == MigrationPolicy::Disabled {
            return Err(inconsistent(format!(
                "Cannot join the consumer group {gid} with the classic protocol because the \
                 group migration is disabled."
            )));
        }
        let unknown = req.member_id.is_empty();
        let member_id = if unknown {
            self.classic.supplied_member_id.take().unwrap_or_else(|| {
                self.classic.member_seq += 1;
                new_member_id(&gid, self.classic.member_seq, now)
            })
        } else {
            req.member_id.clone()
        };
        let group = self
            .groups
            .consumer(&gid)
            .ok_or_else(|| super::unknown_member(&member_id, &gid))?;

        // Kafka's `throwIfConsumerGroupIsFull`, then `throwIfClassicProtocolIsNotSupported`.
        let registered_static = req
            .group_instance_id
            .as_deref()
            .is_some_and(|i| group.static_members.contains_key(i));
        if !registered_static
            && group.members.len() >= self.config.consumer.max_size.max(0) as usize
            && !group.members.contains_key(&member_id)
        {
            return Err(group_full(self.config.consumer.max_size));
        }
        let mut protocols: Vec<JoinProtocol> = Vec::new();
        for p in &req.protocols {
            if !protocols.iter().any(|q| q.name == p.name) {
                protocols.push(p.clone());
            }
        }
        let classic_count = group.classic_member_count();
        let supported = req.protocol_type == CONSUMER_PROTOCOL_TYPE
            && protocols.iter().any(|p| {
                group
                    .members
                    .values()
                    .filter_map(|m| m.classic_member_metadata.as_ref())
                    .filter(|c| c.supported_protocols.iter().any(|(n, _)| *n == p.name))
                    .count()
                    == classic_count
            });
        if !supported {
            return Err(inconsistent(format!(
                "Member {member_id}'s protocols are not supported."
            )));
        }
        if unknown
            && req.group_instance_id.is_none()
            && ctx.api_version >= JOIN_REQUIRES_KNOWN_MEMBER_ID_VERSION
        {
            let reply = JoinGroupResponse::error(&member_id, ErrorCode::MEMBER_ID_REQUIRED);
            return Ok((reply, Outcome::new(())));
        }

        // The member: dynamic (created when new), or static (a new instance replaces the one
        // that held the id, as for consumer members, §K3.4).
        let mut records: Vec<Record> = Vec::new();
        let mut replaced: Option<String> = None;
        let member: ConsumerMember = match &req.group_instance_id {
            None => group
                .members
                .get(&member_id)
                .cloned()
                .unwrap_or_else(|| ConsumerMember::new(&member_id)),
            Some(instance) if unknown => match group.static_member(instance) {
                None => group
                    .members
                    .get(&member_id)
                    .cloned()
                    .unwrap_or_else(|| ConsumerMember::new(&member_id)),
                Some(old) => {
                    replaced = Some(old.member_id.clone());
                    replace_static_member(group, old, &member_id, &mut records)
                }
            },
            Some(instance) => {
                let m = group
                    .static_member(instance)
                    .ok_or_else(|| super::unknown_instance(instance))?;
                if m.member_id != member_id {
                    return Err(fenced_instance(&member_id, instance, &m.member_id));
                }
                m.clone()
            }
        };

        let first = protocols.first().ok_or_else(|| {
            inconsistent(format!("Member {member_id}'s protocols are not supported."))
        })?;
        let subscription = decode_subscription(&first.metadata).map_err(|_| {
            inconsistent(
                "Malformed embedded consumer protocol in subscription deserialization.".into(),
            )
        })?;
        let rebalance_timeout_ms = if req.rebalance_timeout_ms == -1 {
            req.session_timeout_ms
        } else {
            req.rebalance_timeout_ms
        };
        let mut updated = member.clone();
        if let Some(i) = &req.group_instance_id {
            updated.instance_id = Some(i.clone());
        }
        if let Some(r) = &subscription.rack_id {
            updated.rack_id = Some(r.clone());
        }
        updated.rebalance_timeout_ms = rebalance_timeout_ms;
        updated.subscribed_topic_names = subscription.topics.iter().cloned().collect();
        updated.subscribed_topic_regex = String::new();
        updated.client_id = ctx.client_id.clone();
        updated.client_host = ctx.client_host.clone();
        updated.classic_member_metadata = Some(ConsumerClassicMemberMetadata {
            session_timeout_ms: req.session_timeout_ms,
            supported_protocols: protocols
                .iter()
                .map(|p| (p.name.clone(), p.metadata.clone()))
                .collect(),
        });
        let mut names_changed = false;
        if !updated.same_metadata(&member) {
            records.push(Record::ConsumerMemberMetadata {
                group_id: gid.clone(),
                member_id: member_id.clone(),
                value: Some(updated.metadata_value()),
            });
            names_changed = updated.subscribed_topic_names != member.subscribed_topic_names;
        }
        let bump = names_changed || updated.subscribed_topic_regex != member.subscribed_topic_regex;
        let old_for_counts = group
            .members
            .get(&member.member_id)
            .or_else(|| replaced.as_deref().and_then(|old| group.members.get(old)));

        // Subscription metadata and the group epoch (§K3.6).
        let mut group_epoch = group.group_epoch;
        let mut refresh_deadline = None;
        let mut subscription_type = group.stored_subscription_type;
        if bump || group.has_metadata_expired(now) {
            subscription_type = group.subscription_type_with(old_for_counts, Some(&updated));
            let topics = group.subscribed_topics_with(old_for_counts, Some(&updated));
            let hash = crate::topology::metadata_hash(&topics, &self.metadata);
            if bump || hash != group.metadata_hash {
                group_epoch += 1;
                records.push(Record::ConsumerGroupMetadata {
                    group_id: gid.clone(),
                    value: Some(ConsumerGroupMetadataValue {
                        epoch: group_epoch,
                        metadata_hash: hash,
                    }),
                });
            }
            refresh_deadline = Some((now.plus(i64::from(i32::MAX)), group_epoch));
            if group.has_partition_metadata_record {
                records.push(Record::ConsumerGroupPartitionMetadata {
                    group_id: gid.clone(),
                    value: None,
                });
            }
        }

        // Target assignment (§K3.7) and reconciliation (§K4) with the partitions the member says
        // it owns in its subscription.
        let default_assignor = self.default_consumer_assignor();
        let preferred = group
            .compute_preferred_assignor(Some(&member), Some(&updated))
            .unwrap_or_else(|| default_assignor.clone());
        let assignor = builtin_assignor(&preferred)
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
            assignment_interval_ms: self.config.consumer_timings(&gid).assignment_interval_ms,
            subscription_type,
        })?;
        records.extend(target.records);
        let owned: Vec<TopicIdPartitions> = partitions_by_id(
            &subscription.owned_partitions,
            &self.metadata,
            &self.topic_ids,
        )
        .into_iter()
        .map(|(topic_id, ps)| TopicIdPartitions {
            topic_id,
            partitions: ps.into_iter().collect(),
        })
        .collect();
        let reconciled = if !bump && updated.is_reconciled_to(target.assignment_epoch) {
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
                    subscription_changed: bump,
                    owned: Some(&owned),
                    is_owned: &is_owned,
                },
            )?
        };
        if !reconciled.same_assignment(&updated) {
            records.push(Record::ConsumerCurrentMemberAssignment {
                group_id: gid.clone(),
                member_id: member_id.clone(),
                value: Some(reconciled.assignment_value()),
            });
        }
        self.apply(&records)?;

        // Timers: no more join deadline; the classic session and the SyncGroup deadline.
        let mut timers: Vec<TimerChange> = Vec::new();
        timers.extend(self.timers.cancel(&TimerKey::ConsumerClassicJoin {
            group_id: gid.clone(),
            member_id: member_id.clone(),
        }));
        timers.push(self.schedule_classic_session(now, &reconciled, &gid));
        timers.push(self.timers.schedule(
            TimerKey::ConsumerClassicSync {
                group_id: gid.clone(),
                member_id: member_id.clone(),
            },
            now.plus(i64::from(rebalance_timeout_ms.max(0))),
            0,
        ));
        if let Some(d) = refresh_deadline
            && let Some(g) = self.groups.consumer_mut(&gid)
        {
            g.metadata_refresh_deadline = d;
        }
        let reply = JoinGroupResponse {
            error_code: ErrorCode::NONE,
            generation_id: reconciled.member_epoch,
            protocol_type: Some(CONSUMER_PROTOCOL_TYPE.to_string()),
            protocol_name: Some(first.name.clone()),
            leader: String::new(),
            skip_assignment: false,
            member_id,
            members: Vec::new(),
        };
        let mut out = Outcome::new(());
        out.records = records;
        out.timers = timers;
        Ok((reply, out))
    }

    /// SyncGroup of a classic member of a consumer group (§K11.3, Kafka's
    /// `classicGroupSyncToConsumerGroup`): hands out the member's current assignment.
    pub(in crate::coordinator) fn classic_sync_to_consumer_group(
        &mut self,
        now: Millis,
        req: &SyncGroupRequest,
        token: RequestToken,
    ) -> Outcome<()> {
        let mut out = Outcome::new(());
        let reply = match self.classic_sync_consumer(now, req, &mut out.timers) {
            Ok(reply) => reply,
            Err(e) => SyncGroupResponse::error(e.code),
        };
        self.answer_classic(token, ClassicReply::Sync(reply));
        out
    }

    fn classic_sync_consumer(
        &mut self,
        now: Millis,
        req: &SyncGroupRequest,
        timers: &mut Vec<TimerChange>,
    ) -> Result<SyncGroupResponse, ApiError> {
        let gid = req.group_id.as_str();
        let group = self
            .groups
            .consumer(gid)
            .ok_or_else(|| super::unknown_member(&req.member_id, gid))?;
        let member =
            Self::classic_member_of(group, &req.member_id, req.group_instance_id.as_deref())?;
        Self::illegal_generation(member, req.generation_id)?;
        let (protocol, subscription) = first_protocol(member)
            .map(|(n, m)| (n.clone(), m.clone()))
            .unwrap_or_default();
        if let Some(t) = &req.protocol_type
            && t != CONSUMER_PROTOCOL_TYPE
        {
            return Err(inconsistent(format!(
                "The protocol type {t} from member {} request is not equal to the group \
                 protocol type {CONSUMER_PROTOCOL_TYPE}.",
                member.member_id
            )));
        }
        if let Some(n) = &req.protocol_name
            && *n != protocol
        {
            return Err(inconsistent(format!(
                "The protocol name {n} from member {} request is not equal to the protocol \
                 name {protocol} returned in the join response.",
                member.member_id
            )));
        }
        let member = member.clone();
        if group.assignment_epoch > member.member_epoch
            && member.state != ConsumerMemberState::UnrevokedPartitions
        {
            timers.extend(self.schedule_classic_join_timeout(now, &member, gid));
            return Err(ApiError::new(
                ErrorCode::REBALANCE_IN_PROGRESS,
                format!(
                    "A new rebalance is triggered in group {gid} and member {} should rejoin to \
                     catch up.",
                    member.member_id
                ),
            ));
        }
        let partitions = partitions_by_name(
            member
                .assigned
                .iter()
                .map(|(t, ps)| (t, ps.keys().copied().collect())),
            &self.metadata,
            &self.topic_ids,
        );
        let assignment = classic_assignment_bytes(partitions, &subscription)?;
        timers.extend(self.timers.cancel(&TimerKey::ConsumerClassicSync {
            group_id: gid.to_string(),
            member_id: member.member_id.clone(),
        }));
        timers.push(self.schedule_classic_session(now, &member, gid));
        Ok(SyncGroupResponse {
            error_code: ErrorCode::NONE,
            protocol_type: req.protocol_type.clone(),
            protocol_name: req.protocol_name.clone(),
            assignment,
        })
    }

    /// Heartbeat of a classic member of a consumer group (§K11.3, Kafka's
    /// `classicGroupHeartbeatToConsumerGroup`): REBALANCE_IN_PROGRESS tells it to rejoin.
    pub(in crate::coordinator) fn classic_heartbeat_to_consumer_group(
        &mut self,
        now: Millis,
        req: &HeartbeatRequest,
    ) -> Outcome<ErrorCode> {
        let gid = req.group_id.as_str();
        let found = match self.groups.consumer(gid) {
            None => Err(ErrorCode::UNKNOWN_MEMBER_ID),
            Some(g) => Self::classic_member_of(g, &req.member_id, req.group_instance_id.as_deref())
                .and_then(|m| {
                    Self::illegal_generation(m, req.generation_id)?;
                    Ok((m.clone(), must_rejoin(g, m)))
                })
                .map_err(|e| e.code),
        };
        let (member, rejoin) = match found {
            Ok(found) => found,
            Err(code) => return Outcome::new(code),
        };
        let mut out = Outcome::new(ErrorCode::NONE);
        out.timers
            .push(self.schedule_classic_session(now, &member, gid));
        if rejoin {
            out.response = ErrorCode::REBALANCE_IN_PROGRESS;
            out.timers
                .extend(self.schedule_classic_join_timeout(now, &member, gid));
        }
        out
    }

    /// LeaveGroup against a consumer group (§K11.3, Kafka's `classicGroupLeaveToConsumerGroup`):
    /// each identity is checked on its own; the valid ones are fenced together (which may
    /// downgrade the group, §K11.4).
    pub(in crate::coordinator) fn classic_leave_to_consumer_group(
        &mut self,
        now: Millis,
        req: &LeaveGroupRequest,
    ) -> Outcome<LeaveGroupResponse> {
        let gid = req.group_id.as_str();
        let Some(group) = self.groups.consumer(gid) else {
            return Outcome::new(LeaveGroupResponse {
                error_code: ErrorCode::UNKNOWN_MEMBER_ID,
                members: Vec::new(),
            });
        };
        let mut members = Vec::with_capacity(req.members.len());
        let mut valid: Vec<String> = Vec::new();
        for who in &req.members {
            let found = match &who.group_instance_id {
                None => group
                    .members
                    .get(&who.member_id)
                    .ok_or(ErrorCode::UNKNOWN_MEMBER_ID),
                Some(instance) => match group.static_member(instance) {
                    None => Err(ErrorCode::UNKNOWN_MEMBER_ID),
                    Some(m) if !who.member_id.is_empty() && m.member_id != who.member_id => {
                        Err(ErrorCode::FENCED_INSTANCE_ID)
                    }
                    Some(m) => Ok(m),
                },
            };
            let error_code = match found {
                Ok(m) => {
                    valid.push(m.member_id.clone());
                    ErrorCode::NONE
                }
                Err(code) => code,
            };
            members.push(LeftMember {
                member_id: who.member_id.clone(),
                group_instance_id: who.group_instance_id.clone(),
                error_code,
            });
        }
        let fenced = self.consumer_fence_members(now, gid, &valid);
        match fenced {
            Ok(done) => {
                let mut out = Outcome::new(LeaveGroupResponse {
                    error_code: ErrorCode::NONE,
                    members,
                });
                out.records = done.records;
                out.timers = done.timers;
                out
            }
            Err(e) => Outcome::new(LeaveGroupResponse {
                error_code: e.code,
                members: Vec::new(),
            }),
        }
    }
}

/// Whether a classic member's Heartbeat must answer REBALANCE_IN_PROGRESS: it is behind the
/// assignment epoch, must revoke partitions, or waits for partitions nobody holds any more
/// (Kafka's heartbeat check with `waitingOnUnreleasedPartition`).
fn must_rejoin(group: &ConsumerGroup, member: &ConsumerMember) -> bool {
    match member.state {
        _ if member.member_epoch < group.assignment_epoch => true,
        ConsumerMemberState::UnrevokedPartitions => true,
        ConsumerMemberState::UnreleasedPartitions => !waiting_on_unreleased(group, member),
        _ => false,
    }
}

/// `waitingOnUnreleasedPartition`: some target partition the member lacks is still held by
/// another member.
fn waiting_on_unreleased(group: &ConsumerGroup, member: &ConsumerMember) -> bool {
    let empty = BTreeMap::new();
    group
        .target_assignment
        .get(&member.member_id)
        .into_iter()
        .flatten()
        .any(|(topic, partitions)| {
            let assigned: &BTreeMap<i32, i32> = member.assigned.get(topic).unwrap_or(&empty);
            partitions
                .iter()
                .any(|p| !assigned.contains_key(p) && group.is_partition_owned(topic, *p))
        })
}
