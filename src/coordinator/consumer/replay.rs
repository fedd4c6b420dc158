//! Replay of the consumer group records 3-8 and 16 (docs/consumer-protocol.md §K6), with the
//! ordering checks Kafka's replay enforces.

use super::group::ConsumerGroup;
use crate::coordinator::Coordinator;
use crate::coordinator::replay::ReplayError;
use crate::records::Record;

impl Coordinator {
    fn consumer_or_create(&mut self, group_id: &str) -> Result<&mut ConsumerGroup, ReplayError> {
        self.groups
            .consumer_or_create(group_id)
            .ok_or_else(|| ReplayError::NotAConsumerGroup {
                group_id: group_id.to_string(),
            })
    }

    /// Apply one consumer group record; `Ok(false)` when `record` is of another kind.
    pub(in crate::coordinator) fn replay_consumer(
        &mut self,
        record: &Record,
    ) -> Result<bool, ReplayError> {
        match record {
            Record::ConsumerGroupMetadata { group_id, value } => match value {
                Some(v) => {
                    let g = self.consumer_or_create(group_id)?;
                    g.group_epoch = v.epoch;
                    g.metadata_hash = v.metadata_hash;
                }
                None => {
                    let Some(g) = self.groups.consumer(group_id) else {
                        return Ok(true);
                    };
                    if !g.members.is_empty() {
                        return Err(ReplayError::GroupHasMembers {
                            group_id: group_id.clone(),
                            members: g.members.len(),
                        });
                    }
                    if g.assignment_epoch != -1 {
                        return Err(ReplayError::GroupStillAssigned {
                            group_id: group_id.clone(),
                            epoch: g.assignment_epoch,
                        });
                    }
                    self.groups.remove(group_id);
                }
            },
            Record::ConsumerGroupPartitionMetadata { group_id, value } => {
                // Kafka 4.4 ignores the old subscription metadata but remembers to delete it.
                if value.is_some() {
                    self.consumer_or_create(group_id)?
                        .has_partition_metadata_record = true;
                } else if let Some(g) = self.groups.consumer_mut(group_id) {
                    g.has_partition_metadata_record = false;
                }
            }
            Record::ConsumerMemberMetadata {
                group_id,
                member_id,
                value,
            } => match value {
                Some(v) => self
                    .consumer_or_create(group_id)?
                    .update_member(member_id, |m| m.apply_metadata(v)),
                None => {
                    let Some(g) = self.groups.consumer_mut(group_id) else {
                        return Ok(true);
                    };
                    let Some(m) = g.members.get(member_id) else {
                        return Ok(true);
                    };
                    if m.member_epoch != -1 {
                        return Err(ReplayError::MemberStillAssigned {
                            group_id: group_id.clone(),
                            member_id: member_id.clone(),
                            epoch: m.member_epoch,
                        });
                    }
                    if g.target_assignment.contains_key(member_id) {
                        return Err(ReplayError::MemberStillTargeted {
                            group_id: group_id.clone(),
                            member_id: member_id.clone(),
                        });
                    }
                    g.remove_member(member_id);
                }
            },
            Record::ConsumerTargetAssignmentMetadata { group_id, value } => match value {
                Some(v) => {
                    let g = self.consumer_or_create(group_id)?;
                    g.assignment_epoch = v.assignment_epoch;
                    g.assignment_timestamp = v.assignment_timestamp;
                }
                None => {
                    let Some(g) = self.groups.consumer_mut(group_id) else {
                        return Ok(true);
                    };
                    if !g.target_assignment.is_empty() {
                        return Err(ReplayError::TargetAssignmentRemains {
                            group_id: group_id.clone(),
                            remaining: g.target_assignment.len(),
                        });
                    }
                    g.assignment_epoch = -1;
                    g.assignment_timestamp = 0;
                }
            },
            Record::ConsumerTargetAssignmentMember {
                group_id,
                member_id,
                value,
            } => match value {
                Some(v) => {
                    self.consumer_or_create(group_id)?
                        .target_assignment
                        .insert(member_id.clone(), v.clone());
                }
                None => {
                    if let Some(g) = self.groups.consumer_mut(group_id) {
                        g.target_assignment.remove(member_id);
                    }
                }
            },
            Record::ConsumerCurrentMemberAssignment {
                group_id,
                member_id,
                value,
            } => match value {
                Some(v) => self
                    .consumer_or_create(group_id)?
                    .update_member(member_id, |m| m.apply_assignment(v)),
                None => {
                    let Some(g) = self.groups.consumer_mut(group_id) else {
                        return Ok(true);
                    };
                    if g.members.contains_key(member_id) {
                        g.update_member(member_id, |m| {
                            m.member_epoch = -1;
                            m.previous_member_epoch = -1;
                            m.assigned = Default::default();
                            m.pending_revocation = Default::default();
                        });
                    }
                }
            },
            Record::ConsumerRegularExpression {
                group_id,
                regex,
                value,
            } => match value {
                Some(v) => {
                    self.consumer_or_create(group_id)?
                        .resolved_regexes
                        .insert(regex.clone(), v.clone());
                    // The topic-view version survives a restart through the resolutions.
                    self.metadata_versions.current = self.metadata_versions.current.max(v.version);
                }
                None => {
                    if let Some(g) = self.groups.consumer_mut(group_id) {
                        g.resolved_regexes.remove(regex);
                    }
                }
            },
            _ => return Ok(false),
        }
        Ok(true)
    }
}
