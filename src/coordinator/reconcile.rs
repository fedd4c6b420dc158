//! Reconciliation of one member toward its target (Kafka's `CurrentAssignmentBuilder`, spec §4).
//!
//! Revoke before assign: a member keeps what it may keep, gives up what it must, and only then
//! receives new tasks; a task is held back ("unreleased") while another member still owns it.
//! Includes the trunk in-place role changes (KAFKA-20665): demotion active -> standby, standby <->
//! warm-up conversion, promotion standby/warm-up -> active.

use crate::error::{ApiError, ErrorCode};
use crate::records::MemberState;
use crate::types::{ActiveTasks, TaskId, TaskSet, TasksTuple, TasksWithEpochs};

use super::group::{ProcessIndex, StreamsMember};

/// Everything reconciliation reads besides the member.
pub struct ReconcileInput<'a> {
    pub target_epoch: i32,
    pub target: &'a TasksTuple,
    pub index: &'a ProcessIndex,
    /// Owned tasks reported in this heartbeat; `None` when unknown (any list null).
    pub owned: Option<&'a TasksTuple>,
}

/// The member after reconciliation (possibly unchanged), or a fencing error.
pub fn reconcile(
    member: &StreamsMember,
    input: &ReconcileInput<'_>,
) -> Result<StreamsMember, ApiError> {
    let t = input.target_epoch;
    match member.state {
        MemberState::Stable if member.member_epoch == t => Ok(member.clone()),
        MemberState::Stable => Ok(next_assignment(member, member.member_epoch, input)),
        MemberState::UnrevokedTasks => {
            if !released(&member.pending_revocation, input.owned) {
                Ok(member.clone())
            } else {
                Ok(next_assignment(member, member.member_epoch + 1, input))
            }
        }
        MemberState::UnreleasedTasks => Ok(next_assignment(member, member.member_epoch, input)),
        MemberState::Unknown => {
            if input.owned.is_none_or(|o| !o.is_empty()) {
                Err(ApiError::new(
                    ErrorCode::FENCED_MEMBER_EPOCH,
                    "The streams group member is in a unknown state. The member must abandon all \
                     its tasks and rejoin.",
                ))
            } else {
                Ok(next_assignment(member, t, input))
            }
        }
    }
}

/// Pending revocations are released when the member reports owning none of them (same role).
fn released(pending: &TasksWithEpochs, owned: Option<&TasksTuple>) -> bool {
    let Some(owned) = owned else { return false };
    !pending.active.task_set().intersects(&owned.active)
        && !pending.standby.intersects(&owned.standby)
        && !pending.warmup.intersects(&owned.warmup)
}

struct Blockers<'a> {
    index: &'a ProcessIndex,
    process: &'a str,
    member: &'a StreamsMember,
}

impl Blockers<'_> {
    fn own_active(&self, t: &TaskId) -> bool {
        self.member
            .assigned
            .active
            .contains(&t.subtopology, t.partition)
            || self
                .member
                .pending_revocation
                .active
                .contains(&t.subtopology, t.partition)
    }
    fn own_standby(&self, t: &TaskId) -> bool {
        self.member.assigned.standby.contains_task(t)
            || self.member.pending_revocation.standby.contains_task(t)
    }
    fn own_warmup(&self, t: &TaskId) -> bool {
        self.member.assigned.warmup.contains_task(t)
            || self.member.pending_revocation.warmup.contains_task(t)
    }
    fn process_active(&self, t: &TaskId) -> bool {
        self.index.active.get(t).is_some_and(|p| p == self.process)
    }
    fn process_standby(&self, t: &TaskId) -> bool {
        self.index
            .standby
            .get(t)
            .is_some_and(|ps| ps.contains(self.process))
    }
    fn process_warmup(&self, t: &TaskId) -> bool {
        self.index
            .warmup
            .get(t)
            .is_some_and(|ps| ps.contains(self.process))
    }

    /// Trunk rule for an active task (spec §4.2).
    fn active_unreleased(&self, t: &TaskId) -> bool {
        self.index.active.contains_key(t)
            || (self.process_standby(t) && !self.own_standby(t))
            || (self.process_warmup(t) && !self.own_warmup(t))
    }

    fn standby_unreleased(&self, t: &TaskId) -> bool {
        (self.process_active(t) && !self.own_active(t))
            || self.process_standby(t)
            || (self.process_warmup(t) && !self.own_warmup(t))
    }

    fn warmup_unreleased(&self, t: &TaskId) -> bool {
        self.process_active(t)
            || (self.process_standby(t) && !self.own_standby(t))
            || self.process_warmup(t)
    }
}

/// `computeNextAssignment` (spec §4.2).
fn next_assignment(
    member: &StreamsMember,
    epoch: i32,
    input: &ReconcileInput<'_>,
) -> StreamsMember {
    let target = input.target;
    let t_epoch = input.target_epoch;
    let a = &member.assigned;
    let blockers = Blockers {
        index: input.index,
        process: &member.process_id,
        member,
    };
    let mut withheld = false;

    // Active: kept tasks keep their assignment epoch.
    let mut kept_active = ActiveTasks::new();
    let mut revoke_active = ActiveTasks::new();
    for (s, p, e) in a.active.iter() {
        if target.active.contains(s, p) {
            kept_active.insert(s, p, e);
        } else {
            revoke_active.insert(s, p, e);
        }
    }
    let mut assign_active = TaskSet::new();
    for task in target.active.iter() {
        if kept_active.contains(&task.subtopology, task.partition) {
            continue;
        }
        if blockers.active_unreleased(&task) {
            withheld = true;
        } else {
            assign_active.insert(&task.subtopology, task.partition);
        }
    }

    let kept_standby = a.standby.intersection(&target.standby);
    let mut assign_standby = TaskSet::new();
    for task in target.standby.difference(&kept_standby).iter() {
        if blockers.standby_unreleased(&task) {
            withheld = true;
        } else {
            assign_standby.insert(&task.subtopology, task.partition);
        }
    }

    let kept_warmup = a.warmup.intersection(&target.warmup);
    let mut assign_warmup = TaskSet::new();
    for task in target.warmup.difference(&kept_warmup).iter() {
        if blockers.warmup_unreleased(&task) {
            withheld = true;
        } else {
            assign_warmup.insert(&task.subtopology, task.partition);
        }
    }

    // Role changes granted even while revocations are outstanding: demotion (active or warm-up
    // -> standby) and standby -> warm-up conversion.
    let a_active = a.active.task_set();
    let role_standby = assign_standby.intersection(&a_active.union(&a.warmup));
    let role_warmup = assign_warmup.intersection(&a.standby);
    // Promotion: own standby / warm-up wanted as active is not revoked; held until granted.
    let promoted_standby = a.standby.intersection(&target.active);
    let promoted_warmup = a.warmup.intersection(&target.active);

    let revoke_standby = a
        .standby
        .difference(&kept_standby)
        .difference(&role_warmup)
        .difference(&promoted_standby);
    let revoke_warmup = a
        .warmup
        .difference(&kept_warmup)
        .difference(&role_standby)
        .difference(&promoted_warmup);
    let pending = TasksWithEpochs {
        active: revoke_active,
        standby: revoke_standby,
        warmup: revoke_warmup,
    };

    let mut next = member.clone();
    next.previous_member_epoch = member.member_epoch;
    if !pending.is_empty() && !released(&pending, input.owned) {
        next.state = MemberState::UnrevokedTasks;
        next.member_epoch = epoch;
        next.assigned = TasksWithEpochs {
            active: kept_active,
            standby: kept_standby.union(&role_standby).union(&promoted_standby),
            warmup: kept_warmup.union(&role_warmup).union(&promoted_warmup),
        };
        next.pending_revocation = pending;
        return next;
    }

    let mut active = kept_active;
    for task in assign_active.iter() {
        active.insert(&task.subtopology, task.partition, t_epoch);
    }
    // A promoted standby/warm-up goes away once its active is granted.
    let still_promoting = |set: &TaskSet| -> TaskSet {
        set.iter()
            .filter(|t| !assign_active.contains_task(t))
            .collect()
    };
    next.state = if withheld {
        MemberState::UnreleasedTasks
    } else {
        MemberState::Stable
    };
    next.member_epoch = t_epoch;
    next.assigned = TasksWithEpochs {
        active,
        standby: kept_standby
            .union(&assign_standby)
            .union(&still_promoting(&promoted_standby)),
        warmup: kept_warmup
            .union(&assign_warmup)
            .union(&still_promoting(&promoted_warmup)),
    };
    next.pending_revocation = TasksWithEpochs::default();
    next
}
