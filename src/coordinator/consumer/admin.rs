//! ConsumerGroupDescribe (docs/consumer-protocol.md §K9) and the consumer parts of ListGroups,
//! DeleteGroups and the offset validation (docs/consumer-protocol.md §K7).

use crate::util::map::BTreeMap;

use super::group::{ConsumerGroup, ConsumerMember, target_sets};
use crate::assignor::consumer::TopicId;
use crate::coordinator::Coordinator;
use crate::coordinator::describe::GROUP_OPERATIONS_WITHOUT_AUTHORIZER;
use crate::error::{ApiError, ErrorCode};
use crate::protocol::consumer::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, DescribedConsumerGroup,
    DescribedConsumerMember, DescribedTopicPartitions,
};
use crate::records::{PartitionEpochs, Record};

/// Topic names by id, for the topics of the metadata.
fn names_by_id(c: &Coordinator) -> BTreeMap<TopicId, String> {
    c.metadata
        .topics
        .keys()
        .map(|n| (c.topic_id(n), n.clone()))
        .collect()
}

fn described_partitions(
    sets: impl IntoIterator<Item = (TopicId, Vec<i32>)>,
    names: &BTreeMap<TopicId, String>,
) -> Vec<DescribedTopicPartitions> {
    // Topics deleted from the metadata are left out, as Kafka's image lookup does.
    sets.into_iter()
        .filter_map(|(id, partitions)| {
            Some(DescribedTopicPartitions {
                topic_id: id,
                topic_name: names.get(&id)?.clone(),
                partitions,
            })
        })
        .collect()
}

fn owned_partitions(
    assigned: &PartitionEpochs,
    pending: &PartitionEpochs,
) -> Vec<(TopicId, Vec<i32>)> {
    let mut all: BTreeMap<TopicId, Vec<i32>> = BTreeMap::new();
    for set in [assigned, pending] {
        for (t, ps) in set {
            all.entry(*t).or_default().extend(ps.keys().copied());
        }
    }
    all.into_iter().collect()
}

fn described_member(
    g: &ConsumerGroup,
    m: &ConsumerMember,
    names: &BTreeMap<TopicId, String>,
    api_version: i16,
) -> DescribedConsumerMember {
    let target = g
        .target_assignment
        .get(&m.member_id)
        .map(|t| target_sets(t))
        .unwrap_or_default()
        .into_iter()
        .map(|(t, ps)| (t, ps.into_iter().collect()));
    DescribedConsumerMember {
        member_id: m.member_id.clone(),
        instance_id: m.instance_id.clone(),
        rack_id: m.rack_id.clone(),
        member_epoch: m.member_epoch,
        client_id: m.client_id.clone(),
        client_host: m.client_host.clone(),
        subscribed_topic_names: m.subscribed_topic_names.iter().cloned().collect(),
        subscribed_topic_regex: Some(m.subscribed_topic_regex.clone()),
        assignment: described_partitions(
            owned_partitions(&m.assigned, &m.pending_revocation),
            names,
        ),
        target_assignment: described_partitions(target, names),
        member_type: if api_version < 1 {
            -1
        } else if m.uses_classic_protocol() {
            0
        } else {
            1
        },
    }
}

impl Coordinator {
    /// ConsumerGroupDescribe (docs/consumer-protocol.md §K9). groupcoord has no authorizer: requested authorized
    /// operations are what Kafka answers without one.
    pub fn consumer_group_describe(
        &self,
        req: &ConsumerGroupDescribeRequest,
        api_version: i16,
    ) -> ConsumerGroupDescribeResponse {
        let names = names_by_id(self);
        let default_assignor = self
            .config
            .consumer
            .assignors
            .first()
            .cloned()
            .unwrap_or_default();
        // Empty ids first (INVALID_GROUP_ID, no message), then the others in request order.
        let empty =
            req.group_ids
                .iter()
                .filter(|id| id.is_empty())
                .map(|_| DescribedConsumerGroup {
                    error_code: ErrorCode::INVALID_GROUP_ID.0,
                    authorized_operations: i32::MIN,
                    ..Default::default()
                });
        let named = req.group_ids.iter().filter(|id| !id.is_empty()).map(|id| {
            let g = match self.groups.get(id) {
                None => Err(format!("Group {id} not found.")),
                Some(g) => g
                    .as_consumer()
                    .ok_or_else(|| format!("Group {id} is not a consumer group.")),
            };
            let g = match g {
                Ok(g) => g,
                Err(message) => {
                    return DescribedConsumerGroup {
                        error_code: ErrorCode::GROUP_ID_NOT_FOUND.0,
                        error_message: Some(message),
                        group_id: id.clone(),
                        // Kafka leaves its default (INT_MIN) in a group it could not describe.
                        authorized_operations: i32::MIN,
                        ..Default::default()
                    };
                }
            };
            DescribedConsumerGroup {
                error_code: 0,
                error_message: None,
                group_id: id.clone(),
                group_state: g.state().name().to_string(),
                group_epoch: g.group_epoch,
                assignment_epoch: g.assignment_epoch,
                assignor_name: g
                    .preferred_assignor()
                    .unwrap_or_else(|| default_assignor.clone()),
                members: g
                    .members
                    .values()
                    .map(|m| described_member(g, m, &names, api_version))
                    .collect(),
                authorized_operations: if req.include_authorized_operations {
                    GROUP_OPERATIONS_WITHOUT_AUTHORIZER
                } else {
                    i32::MIN
                },
            }
        });
        ConsumerGroupDescribeResponse {
            groups: empty.chain(named).collect(),
        }
    }

    /// The tombstones of an Empty consumer group (Kafka's `createGroupTombstoneRecords`), or
    /// `None` when `group_id` is not a consumer group.
    pub(in crate::coordinator) fn consumer_group_tombstones(
        &self,
        group_id: &str,
    ) -> Option<Vec<Record>> {
        let g = self.groups.consumer(group_id)?;
        let gid = || group_id.to_string();
        let mut records = Vec::new();
        for m in g.members.keys() {
            records.push(Record::ConsumerCurrentMemberAssignment {
                group_id: gid(),
                member_id: m.clone(),
                value: None,
            });
        }
        for m in g.members.keys() {
            records.push(Record::ConsumerTargetAssignmentMember {
                group_id: gid(),
                member_id: m.clone(),
                value: None,
            });
        }
        records.push(Record::ConsumerTargetAssignmentMetadata {
            group_id: gid(),
            value: None,
        });
        for m in g.members.keys() {
            records.push(Record::ConsumerMemberMetadata {
                group_id: gid(),
                member_id: m.clone(),
                value: None,
            });
        }
        for regex in g.resolved_regexes.keys() {
            records.push(Record::ConsumerRegularExpression {
                group_id: gid(),
                regex: regex.clone(),
                value: None,
            });
        }
        records.push(Record::ConsumerGroupPartitionMetadata {
            group_id: gid(),
            value: None,
        });
        records.push(Record::ConsumerGroupMetadata {
            group_id: gid(),
            value: None,
        });
        Some(records)
    }

    /// OffsetCommit checks of a consumer group (docs/consumer-protocol.md §K7, Kafka's `ConsumerGroup.validateOffsetCommit`):
    /// `Ok(None)` = every partition may commit; `Ok(Some(member))` = check each partition's
    /// assignment epoch against the request's with [`partition_commit_error`].
    pub(in crate::coordinator) fn consumer_validate_commit<'a>(
        g: &'a ConsumerGroup,
        member_id: &str,
        instance_id: Option<&str>,
        member_epoch: i32,
        transactional: bool,
        api_version: i16,
    ) -> Result<Option<&'a ConsumerMember>, ApiError> {
        if member_epoch < 0 && g.members.is_empty() {
            return Ok(None);
        }
        if transactional && member_epoch == -1 && member_id.is_empty() && instance_id.is_none() {
            return Ok(None);
        }
        let m = g.members.get(member_id).ok_or_else(|| {
            ApiError::new(
                ErrorCode::UNKNOWN_MEMBER_ID,
                format!(
                    "Member {member_id} is not a member of group {}.",
                    g.group_id
                ),
            )
        })?;
        if !transactional && !m.uses_classic_protocol() && api_version < 9 {
            return Err(ApiError::new(
                ErrorCode::UNSUPPORTED_VERSION,
                "OffsetCommit version 9 or above must be used by members using the consumer group \
                 protocol",
            ));
        }
        if member_epoch == m.member_epoch {
            return Ok(None);
        }
        if member_epoch > m.member_epoch {
            // A classic member of the group (docs/consumer-protocol.md §K11.3) sent a generation.
            return Err(if m.uses_classic_protocol() {
                ApiError::new(
                    ErrorCode::ILLEGAL_GENERATION,
                    format!(
                        "Received generation id {member_epoch} is newer than current member \
                         epoch {}.",
                        m.member_epoch
                    ),
                )
            } else {
                ApiError::new(
                    ErrorCode::STALE_MEMBER_EPOCH,
                    format!(
                        "Received member epoch {member_epoch} is newer than current member \
                         epoch {}.",
                        m.member_epoch
                    ),
                )
            });
        }
        Ok(Some(m))
    }

    /// OffsetFetch checks of a consumer group (Kafka's `ConsumerGroup.validateOffsetFetch`).
    pub(in crate::coordinator) fn consumer_validate_fetch(
        g: &ConsumerGroup,
        member_id: Option<&str>,
        member_epoch: i32,
    ) -> Result<(), ApiError> {
        if member_id.is_none() && member_epoch < 0 {
            return Ok(());
        }
        let id = member_id.unwrap_or("null");
        let m = g.members.get(id).ok_or_else(|| {
            ApiError::new(
                ErrorCode::UNKNOWN_MEMBER_ID,
                format!("Member {id} is not a member of group {}.", g.group_id),
            )
        })?;
        if m.member_epoch != member_epoch {
            return Err(if m.uses_classic_protocol() {
                ApiError::new(
                    ErrorCode::ILLEGAL_GENERATION,
                    format!(
                        "The received generation id {member_epoch} does not match the expected \
                         member epoch {}.",
                        m.member_epoch
                    ),
                )
            } else {
                ApiError::new(
                    ErrorCode::STALE_MEMBER_EPOCH,
                    format!(
                        "The received member epoch {member_epoch} does not match the expected \
                         member epoch {}.",
                        m.member_epoch
                    ),
                )
            });
        }
        Ok(())
    }
}

/// The per-partition check of an older-epoch commit (Kafka's assignment epoch validator): the
/// partition must be assigned or pending revocation, at an epoch no newer than the request's.
pub(in crate::coordinator) fn partition_commit_error(
    m: &ConsumerMember,
    member_epoch: i32,
    topic: TopicId,
    partition: i32,
) -> ErrorCode {
    let id = topic;
    let epoch = m
        .assigned
        .get(&id)
        .and_then(|ps| ps.get(&partition))
        .or_else(|| {
            m.pending_revocation
                .get(&id)
                .and_then(|ps| ps.get(&partition))
        });
    match epoch {
        Some(e) if member_epoch >= *e => ErrorCode::NONE,
        _ if m.uses_classic_protocol() => ErrorCode::ILLEGAL_GENERATION,
        _ => ErrorCode::STALE_MEMBER_EPOCH,
    }
}
