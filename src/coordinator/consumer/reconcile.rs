//! Reconciliation of one consumer group member toward its target (Kafka's consumer
//! `CurrentAssignmentBuilder`, docs/consumer-protocol.md §K4).
//!
//! The same revoke-before-assign machine as streams groups (spec §4), on partitions: a member
//! first gives up what its target no longer holds (UNREVOKED_PARTITIONS, epoch kept), and only
//! when it reports them gone receives the new epoch and the partitions nobody else holds; one
//! still held by another member waits (UNRELEASED_PARTITIONS). Each partition remembers the epoch
//! it was assigned at, which fences offset commits of zombies (docs/consumer-protocol.md §K7).

use crate::util::map::{BTreeMap, BTreeSet};

use super::group::ConsumerMember;
use crate::assignor::consumer::TopicId;
use crate::error::{ApiError, ErrorCode};
use crate::protocol::consumer::TopicIdPartitions;
use crate::records::{ConsumerMemberState, PartitionEpochs};

/// Everything reconciliation reads besides the member.
pub struct ReconcileInput<'a> {
    pub target_epoch: i32,
    pub target: &'a BTreeMap<TopicId, BTreeSet<i32>>,
    /// The ids of the topics the member subscribes to that exist.
    pub subscribed: &'a BTreeSet<TopicId>,
    pub subscription_changed: bool,
    /// Owned partitions reported by this heartbeat; `None` when not sent.
    pub owned: Option<&'a [TopicIdPartitions]>,
    /// Whether some member (this one included) holds the partition.
    pub is_owned: &'a dyn Fn(&TopicId, i32) -> bool,
}

/// The member after reconciliation (possibly unchanged), or a fencing error.
pub fn reconcile(
    member: &ConsumerMember,
    input: &ReconcileInput<'_>,
) -> Result<ConsumerMember, ApiError> {
    match member.state {
        ConsumerMemberState::Stable => {
            if member.member_epoch != input.target_epoch {
                Ok(next_assignment(member, member.member_epoch, input))
            } else if input.subscription_changed {
                Ok(drop_unsubscribed(member, input))
            } else {
                Ok(member.clone())
            }
        }
        ConsumerMemberState::UnrevokedPartitions => {
            if still_owns(&member.pending_revocation, input.owned) {
                if input.subscription_changed {
                    Ok(drop_unsubscribed(member, input))
                } else {
                    Ok(member.clone())
                }
            } else {
                Ok(next_assignment(member, member.member_epoch, input))
            }
        }
        ConsumerMemberState::UnreleasedPartitions => {
            Ok(next_assignment(member, member.member_epoch, input))
        }
        ConsumerMemberState::Unknown => {
            if input.owned.is_none_or(|o| !o.is_empty()) {
                Err(ApiError::new(
                    ErrorCode::FENCED_MEMBER_EPOCH,
                    "The consumer group member is in a unknown state. The member must abandon all \
                     its partitions and rejoin.",
                ))
            } else {
                Ok(next_assignment(member, input.target_epoch, input))
            }
        }
    }
}

/// `ownsRevokedPartitions`: unknown ownership (no list sent) counts as still owning.
fn still_owns(pending: &PartitionEpochs, owned: Option<&[TopicIdPartitions]>) -> bool {
    let Some(owned) = owned else { return true };
    owned.iter().any(|t| {
        pending
            .get(&t.topic_id)
            .is_some_and(|ps| t.partitions.iter().any(|p| ps.contains_key(p)))
    })
}

fn set_epoch(m: &mut ConsumerMember, epoch: i32) {
    m.previous_member_epoch = m.member_epoch;
    m.member_epoch = epoch;
}

/// `updateCurrentAssignment`: a subscription change at the same epoch revokes the partitions of
/// topics no longer subscribed to, at once.
fn drop_unsubscribed(member: &ConsumerMember, input: &ReconcileInput<'_>) -> ConsumerMember {
    let (assigned, pending) = if input.subscribed.is_empty() && member.pending_revocation.is_empty()
    {
        (PartitionEpochs::new(), member.assigned.clone())
    } else {
        let mut assigned = member.assigned.clone();
        let mut pending = member.pending_revocation.clone();
        for (topic, partitions) in &member.assigned {
            if !input.subscribed.contains(topic) {
                assigned.remove(topic);
                pending
                    .entry(*topic)
                    .or_default()
                    .extend(partitions.iter().map(|(p, e)| (*p, *e)));
            }
        }
        (assigned, pending)
    };
    if assigned == member.assigned {
        return member.clone();
    }
    let mut next = member.clone();
    set_epoch(&mut next, member.member_epoch);
    next.assigned = assigned;
    if !pending.is_empty() && still_owns(&pending, input.owned) {
        next.state = ConsumerMemberState::UnrevokedPartitions;
        next.pending_revocation = pending;
    }
    next
}

/// `computeNextAssignment`.
fn next_assignment(
    member: &ConsumerMember,
    epoch: i32,
    input: &ReconcileInput<'_>,
) -> ConsumerMember {
    let empty_target = BTreeSet::new();
    let empty_assigned = BTreeMap::new();
    let topics: BTreeSet<TopicId> = input
        .target
        .keys()
        .chain(member.assigned.keys())
        .copied()
        .collect();
    let mut assigned = PartitionEpochs::new();
    let mut pending = PartitionEpochs::new();
    let mut to_assign: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
    let mut unreleased = false;
    for topic in topics {
        let target = if input.subscribed.contains(&topic) {
            input.target.get(&topic).unwrap_or(&empty_target)
        } else {
            &empty_target
        };
        let current = member.assigned.get(&topic).unwrap_or(&empty_assigned);
        let kept: BTreeMap<i32, i32> = current
            .iter()
            .filter(|(p, _)| target.contains(p))
            .map(|(p, e)| (*p, *e))
            .collect();
        let revoked: BTreeMap<i32, i32> = current
            .iter()
            .filter(|(p, _)| !kept.contains_key(p))
            .map(|(p, e)| (*p, *e))
            .collect();
        let was_pending = member.pending_revocation.get(&topic);
        let mut new: BTreeSet<i32> = BTreeSet::new();
        for p in target.iter().filter(|p| !kept.contains_key(p)) {
            let held_elsewhere =
                (input.is_owned)(&topic, *p) && !was_pending.is_some_and(|ps| ps.contains_key(p));
            if held_elsewhere {
                unreleased = true;
            } else {
                new.insert(*p);
            }
        }
        if !kept.is_empty() {
            assigned.insert(topic, kept);
        }
        if !revoked.is_empty() {
            pending.insert(topic, revoked);
        }
        if !new.is_empty() {
            to_assign.insert(topic, new);
        }
    }
    let mut next = member.clone();
    if !pending.is_empty() && still_owns(&pending, input.owned) {
        next.state = ConsumerMemberState::UnrevokedPartitions;
        set_epoch(&mut next, epoch);
        next.assigned = assigned;
        next.pending_revocation = pending;
        return next;
    }
    for (topic, partitions) in to_assign {
        let epochs = assigned.entry(topic).or_default();
        for p in partitions {
            epochs.insert(p, input.target_epoch);
        }
    }
    next.state = if unreleased {
        ConsumerMemberState::UnreleasedPartitions
    } else {
        ConsumerMemberState::Stable
    };
    set_epoch(&mut next, input.target_epoch);
    next.assigned = assigned;
    next.pending_revocation = PartitionEpochs::new();
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(n: i64) -> TopicId {
        TopicId::new(0, n + 2)
    }

    fn member(epoch: i32, assigned: &[(i64, &[i32])]) -> ConsumerMember {
        let mut m = ConsumerMember::new("m");
        m.member_epoch = epoch;
        for (topic, ps) in assigned {
            m.assigned
                .insert(t(*topic), ps.iter().map(|p| (*p, epoch)).collect());
        }
        m
    }

    fn target(parts: &[(i64, &[i32])]) -> BTreeMap<TopicId, BTreeSet<i32>> {
        parts
            .iter()
            .map(|(topic, ps)| (t(*topic), ps.iter().copied().collect()))
            .collect()
    }

    /// docs/consumer-protocol.md §K4: a partition leaving the target is revoked first, at the old epoch; the new epoch
    /// and the new partition come once the member reports the revoked one gone.
    #[test]
    fn revoke_before_assign() {
        let m = member(1, &[(0, &[0, 1])]);
        let target = target(&[(0, &[1, 2])]);
        let subscribed: BTreeSet<TopicId> = [t(0)].into();
        let nobody = |_: &TopicId, _: i32| false;
        let owned = [TopicIdPartitions {
            topic_id: t(0),
            partitions: vec![0, 1],
        }];
        let input = ReconcileInput {
            target_epoch: 2,
            target: &target,
            subscribed: &subscribed,
            subscription_changed: false,
            owned: Some(&owned),
            is_owned: &nobody,
        };
        let next = reconcile(&m, &input).unwrap();
        assert_eq!(next.state, ConsumerMemberState::UnrevokedPartitions);
        assert_eq!(next.member_epoch, 1);
        assert_eq!(
            next.pending_revocation[&t(0)].keys().collect::<Vec<_>>(),
            [&0]
        );
        assert!(!next.assigned[&t(0)].contains_key(&2));
        // Still owned: nothing moves.
        assert_eq!(reconcile(&next, &input).unwrap(), next);
        let released = [TopicIdPartitions {
            topic_id: t(0),
            partitions: vec![1],
        }];
        let done = reconcile(
            &next,
            &ReconcileInput {
                owned: Some(&released),
                ..input
            },
        )
        .unwrap();
        assert_eq!(done.state, ConsumerMemberState::Stable);
        assert_eq!((done.member_epoch, done.previous_member_epoch), (2, 1));
        assert_eq!(done.assigned[&t(0)], BTreeMap::from([(1, 1), (2, 2)]));
    }

    /// docs/consumer-protocol.md §K4: a target partition another member still holds is withheld (UNRELEASED).
    #[test]
    fn held_partition_is_unreleased() {
        let m = member(1, &[]);
        let target = target(&[(0, &[0, 1])]);
        let subscribed: BTreeSet<TopicId> = [t(0)].into();
        let holds_0 = |_: &TopicId, p: i32| p == 0;
        let next = reconcile(
            &m,
            &ReconcileInput {
                target_epoch: 2,
                target: &target,
                subscribed: &subscribed,
                subscription_changed: false,
                owned: Some(&[]),
                is_owned: &holds_0,
            },
        )
        .unwrap();
        assert_eq!(next.state, ConsumerMemberState::UnreleasedPartitions);
        assert_eq!(next.member_epoch, 2);
        assert_eq!(next.assigned[&t(0)], BTreeMap::from([(1, 2)]));
    }
}
