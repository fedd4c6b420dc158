//! Replay of coordinator records (spec §6): the only way state changes, live or on load.
//! Tolerates compaction and interleaving; enforces the ordering checks Kafka enforces.
//!
//! The live path applies an operation's records with `Coordinator::apply`: all of them or
//! none, so a record the log could not store or replay is never acknowledged.

use super::classic::ClassicGroup;
use super::group::StreamsGroup;
use super::registry::Group;
use super::{Coordinator, GroupOffsets};
use crate::error::ApiError;
use crate::records::Record;
use crate::records::codec::encode_record;

/// A record that cannot be applied in the current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A streams record for a group of another type.
    #[error("group {group_id} exists and is not a streams group")]
    NotAStreamsGroup {
        /// The group.
        group_id: String,
    },
    /// A classic record for a group of another type.
    #[error("group {group_id} exists and is not a classic group")]
    NotAClassicGroup {
        /// The group.
        group_id: String,
    },
    /// A consumer group record for a group of another type.
    #[error("group {group_id} exists and is not a consumer group")]
    NotAConsumerGroup {
        /// The group.
        group_id: String,
    },
    /// A group tombstone while the group still has members.
    #[error("cannot delete streams group {group_id}: it still has {members} members")]
    GroupHasMembers {
        /// The group.
        group_id: String,
        /// How many members remain.
        members: usize,
    },
    /// A group tombstone while its target assignment is still set.
    #[error("cannot delete streams group {group_id}: assignment epoch is {epoch}, not -1")]
    GroupStillAssigned {
        /// The group.
        group_id: String,
        /// The assignment epoch still set.
        epoch: i32,
    },
    /// A member tombstone before its current assignment's tombstone.
    #[error(
        "cannot remove member {member_id} of {group_id}: its current assignment (epoch {epoch}) \
         was not tombstoned first"
    )]
    MemberStillAssigned {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The epoch of its remaining assignment.
        epoch: i32,
    },
    /// A member tombstone before its target assignment's tombstone.
    #[error(
        "cannot remove member {member_id} of {group_id}: its target assignment was not \
         tombstoned first"
    )]
    MemberStillTargeted {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
    },
    /// A target assignment metadata tombstone while member targets remain.
    #[error(
        "cannot clear the target assignment metadata of {group_id}: {remaining} member targets \
         remain"
    )]
    TargetAssignmentRemains {
        /// The group.
        group_id: String,
        /// Member targets left.
        remaining: usize,
    },
    /// A topology record beyond the `groupcoord.max.*` limits.
    #[error("topology of {group_id} is beyond this coordinator's limits: {reason}")]
    BeyondLimits {
        /// The group.
        group_id: String,
        /// Which limit.
        reason: String,
    },
}

/// The state an operation's records may change (their groups and committed offsets), saved
/// before applying them.
type Saved = Vec<(String, Option<Group>, Option<GroupOffsets>)>;

impl Coordinator {
    /// Apply the records of one live operation through [`Coordinator::replay`], all or none.
    ///
    /// Every record must encode to Kafka's layout unchanged (the log stores what the response
    /// acknowledges) and replay. If one does not, the state is put back as it was and the
    /// operation fails with UNKNOWN_SERVER_ERROR, as a failed write does in Kafka: the caller
    /// answers with the error and persists nothing.
    pub(super) fn apply(&mut self, records: &[Record]) -> Result<(), ApiError> {
        for r in records {
            encode_record(r).map_err(|_| ApiError::unknown_server_error())?;
        }
        // Only a record that `replay` can reject needs the state saved; the common operations
        // (joins, acknowledgements, commits) write none and pay nothing.
        let saved = if records.iter().any(|r| self.may_reject(r)) {
            self.save(records)
        } else {
            Vec::new()
        };
        for r in records {
            if self.replay(r).is_err() {
                self.restore(saved);
                return Err(ApiError::unknown_server_error());
            }
        }
        Ok(())
    }

    /// Whether [`Coordinator::replay`] can reject `record` in some state: the tombstones it
    /// checks the order of, and any record of a group whose id another group type holds. Keep
    /// in step with the `Err` returns of `replay`.
    fn may_reject(&self, record: &Record) -> bool {
        let id = record.group_id();
        let other_type = self
            .groups
            .get(id)
            .is_some_and(|g| g.as_streams().is_none());
        match record {
            Record::GroupMetadata { value, .. } => value.is_none() || other_type,
            Record::MemberMetadata { value, .. } => value.is_none() || other_type,
            Record::TargetAssignmentMetadata { value, .. } => value.is_none() || other_type,
            Record::TargetAssignmentMember { .. }
            | Record::CurrentMemberAssignment { .. }
            | Record::Topology { .. } => other_type,
            Record::OffsetCommit { .. } => false,
            Record::ClassicGroupMetadata { .. } => {
                self.groups.streams(id).is_some() || self.groups.consumer(id).is_some()
            }
            Record::ConsumerGroupMetadata { .. }
            | Record::ConsumerGroupPartitionMetadata { .. }
            | Record::ConsumerMemberMetadata { .. }
            | Record::ConsumerTargetAssignmentMetadata { .. }
            | Record::ConsumerTargetAssignmentMember { .. }
            | Record::ConsumerCurrentMemberAssignment { .. }
            | Record::ConsumerRegularExpression { .. } => {
                record.is_tombstone()
                    || self
                        .groups
                        .get(id)
                        .is_some_and(|g| g.as_consumer().is_none())
            }
        }
    }

    fn save(&self, records: &[Record]) -> Saved {
        let mut saved: Saved = Vec::new();
        for r in records {
            let id = r.group_id();
            if !saved.iter().any(|(g, _, _)| g == id) {
                let group = self.groups.get(id).cloned();
                let offsets = self.offsets.get(id).cloned();
                saved.push((id.to_string(), group, offsets));
            }
        }
        saved
    }

    fn restore(&mut self, saved: Saved) {
        for (id, group, offsets) in saved {
            self.groups.put(&id, group);
            self.offsets.restore(id, offsets);
        }
    }

    /// Apply `records` in order, exactly as [`Coordinator::replay`] one by one: a run of offset
    /// commits of one group and topic (a commit request writes one per partition) finds the
    /// group and topic once. On error: the record that failed, and why.
    pub fn replay_all<'r>(
        &mut self,
        records: &'r [Record],
    ) -> Result<(), (&'r Record, ReplayError)> {
        let mut rest = records;
        while let Some(first) = rest.first() {
            let run = match first {
                Record::OffsetCommit {
                    group_id, topic, ..
                } => {
                    let run = rest
                        .iter()
                        .take_while(|r| {
                            matches!(r, Record::OffsetCommit { group_id: g, topic: t, .. }
                                if g == group_id && t == topic)
                        })
                        .count();
                    Some((group_id, topic, run))
                }
                _ => None,
            };
            if let Some((group_id, topic, run)) = run.filter(|r| r.2 > 1) {
                self.offsets.apply_run(group_id, topic, &rest[..run]);
                rest = &rest[run..];
            } else {
                self.replay(first).map_err(|e| (first, e))?;
                rest = &rest[1..];
            }
        }
        Ok(())
    }

    /// Apply one record. State changes only through here (spec §6).
    pub fn replay(&mut self, record: &Record) -> Result<(), ReplayError> {
        if self.replay_consumer(record)? {
            return Ok(());
        }
        match record {
            Record::GroupMetadata { group_id, value } => match value {
                Some(v) => {
                    self.group_mut_or_create(group_id)?.apply_group_metadata(v);
                }
                None => {
                    let Some(g) = self.groups.streams(group_id) else {
                        return Ok(());
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
            Record::MemberMetadata {
                group_id,
                member_id,
                value,
            } => match value {
                Some(v) => {
                    self.group_mut_or_create(group_id)?
                        .update_member(member_id, |m| m.apply_metadata(v));
                }
                None => {
                    let Some(g) = self.groups.streams_mut(group_id) else {
                        return Ok(());
                    };
                    let Some(m) = g.members.get(member_id) else {
                        return Ok(());
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
            Record::TargetAssignmentMetadata { group_id, value } => match value {
                Some(v) => {
                    let g = self.group_mut_or_create(group_id)?;
                    g.assignment_epoch = v.assignment_epoch;
                    g.assignment_timestamp = v.assignment_timestamp;
                }
                None => {
                    let Some(g) = self.groups.streams_mut(group_id) else {
                        return Ok(());
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
            Record::TargetAssignmentMember {
                group_id,
                member_id,
                value,
            } => match value {
                Some(v) => {
                    self.group_mut_or_create(group_id)?
                        .target_assignment
                        .insert(member_id.clone(), v.clone());
                }
                None => {
                    if let Some(g) = self.groups.streams_mut(group_id) {
                        g.target_assignment.remove(member_id);
                    }
                }
            },
            Record::CurrentMemberAssignment {
                group_id,
                member_id,
                value,
            } => match value {
                Some(v) => {
                    self.group_mut_or_create(group_id)?
                        .update_member(member_id, |m| m.apply_assignment(v));
                }
                None => {
                    let Some(g) = self.groups.streams_mut(group_id) else {
                        return Ok(());
                    };
                    let Some(m) = g.members.get(member_id) else {
                        return Ok(());
                    };
                    let mut m = m.clone();
                    m.member_epoch = -1;
                    m.previous_member_epoch = -1;
                    m.assigned = Default::default();
                    m.pending_revocation = Default::default();
                    g.put_member(m);
                }
            },
            Record::Topology { group_id, value } => match value {
                Some(v) => {
                    // A topology beyond the bounds was never accepted by this version; one in an
                    // older log must stop the load rather than the assignor later.
                    self.config.limits.check_topology(v).map_err(|reason| {
                        ReplayError::BeyondLimits {
                            group_id: group_id.clone(),
                            reason,
                        }
                    })?;
                    let g = self.group_mut_or_create(group_id)?;
                    g.topology = Some(v.clone());
                    g.configured_topology = None;
                }
                None => {
                    if let Some(g) = self.groups.streams_mut(group_id) {
                        g.topology = None;
                        g.configured_topology = None;
                    }
                }
            },
            Record::ClassicGroupMetadata { group_id, value } => {
                if self.groups.streams(group_id).is_some()
                    || self.groups.consumer(group_id).is_some()
                {
                    return Err(ReplayError::NotAClassicGroup {
                        group_id: group_id.clone(),
                    });
                }
                match value {
                    // The whole group is in the record: it replaces what was there (§C7).
                    Some(v) => self
                        .groups
                        .insert_classic(ClassicGroup::from_record(group_id, v)),
                    None => {
                        self.groups.remove(group_id);
                    }
                }
            }
            Record::OffsetCommit {
                group_id,
                topic,
                partition,
                value,
            } => self
                .offsets
                .apply(group_id, topic, *partition, value.as_ref()),
            // Applied by `replay_consumer` above.
            Record::ConsumerGroupMetadata { .. }
            | Record::ConsumerGroupPartitionMetadata { .. }
            | Record::ConsumerMemberMetadata { .. }
            | Record::ConsumerTargetAssignmentMetadata { .. }
            | Record::ConsumerTargetAssignmentMember { .. }
            | Record::ConsumerCurrentMemberAssignment { .. }
            | Record::ConsumerRegularExpression { .. } => {}
        }
        Ok(())
    }

    fn group_mut_or_create(&mut self, group_id: &str) -> Result<&mut StreamsGroup, ReplayError> {
        self.groups
            .streams_or_create(group_id)
            .ok_or_else(|| ReplayError::NotAStreamsGroup {
                group_id: group_id.to_string(),
            })
    }
}
