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

#[cfg(test)]
mod tests {
    //! The worked example of spec §4.3 (`testStreamsReconciliationProcess`), step by step, with
    //! the group's process index maintained as the coordinator maintains it.

    use super::*;
    use crate::coordinator::group::StreamsGroup;

    fn tasks(spec: &[(&str, &[i32])]) -> TaskSet {
        let mut t = TaskSet::new();
        for (s, ps) in spec {
            for p in *ps {
                t.insert(s, *p);
            }
        }
        t
    }

    fn member(id: &str, epoch: i32, active: TaskSet) -> StreamsMember {
        let mut m = StreamsMember::new(id);
        m.process_id = format!("process-{id}");
        m.member_epoch = epoch;
        m.previous_member_epoch = epoch - 1;
        m.assigned.active = ActiveTasks::with_epoch(&active, epoch);
        m
    }

    fn step(
        g: &mut StreamsGroup,
        id: &str,
        target: &TasksTuple,
        owned: Option<&TasksTuple>,
    ) -> StreamsMember {
        let m = g.members[id].clone();
        let next = reconcile(
            &m,
            &ReconcileInput {
                target_epoch: 11,
                target,
                index: &g.index,
                owned,
            },
        )
        .unwrap();
        g.put_member(next.clone());
        next
    }

    fn active_only(t: TaskSet) -> TasksTuple {
        TasksTuple {
            active: t,
            ..Default::default()
        }
    }

    #[test]
    fn worked_example_of_spec_4_3() {
        let mut g = StreamsGroup::new("g");
        g.put_member(member(
            "m1",
            10,
            tasks(&[("sub1", &[0, 1, 2]), ("sub2", &[0, 1])]),
        ));
        g.put_member(member(
            "m2",
            10,
            tasks(&[("sub1", &[3, 4, 5]), ("sub2", &[2])]),
        ));
        let mut m3 = StreamsMember::new("m3");
        m3.process_id = "process-m3".into();
        g.put_member(m3);
        let t1 = active_only(tasks(&[("sub1", &[0, 1]), ("sub2", &[0])]));
        let t2 = active_only(tasks(&[("sub1", &[2, 3]), ("sub2", &[2])]));
        let t3 = active_only(tasks(&[("sub1", &[4, 5]), ("sub2", &[1])]));

        // 1. m3 joins: epoch 11, UNRELEASED_TASKS, nothing yet.
        let s = step(&mut g, "m3", &t3, Some(&TasksTuple::default()));
        assert_eq!(
            (s.state, s.member_epoch),
            (MemberState::UnreleasedTasks, 11)
        );
        assert!(s.assigned.active.is_empty());

        // 2. m1 (owned unknown): stays at 10, must revoke sub1:2 and sub2:1.
        let s = step(&mut g, "m1", &t1, None);
        assert_eq!(
            (s.state, s.member_epoch, s.previous_member_epoch),
            (MemberState::UnrevokedTasks, 10, 10)
        );
        assert_eq!(s.assigned.active.task_set(), t1.active);
        assert_eq!(
            s.pending_revocation.active.task_set(),
            tasks(&[("sub1", &[2]), ("sub2", &[1])])
        );

        // 3. m2 likewise.
        let s = step(&mut g, "m2", &t2, None);
        assert_eq!((s.state, s.member_epoch), (MemberState::UnrevokedTasks, 10));
        assert_eq!(
            s.assigned.active.task_set(),
            tasks(&[("sub1", &[3]), ("sub2", &[2])])
        );
        assert_eq!(
            s.pending_revocation.active.task_set(),
            tasks(&[("sub1", &[4, 5])])
        );

        // 4. m3 again: still nothing (everything still owned); previous epoch 0 -> 11.
        let s = step(&mut g, "m3", &t3, None);
        assert!(s.assigned.active.is_empty());
        assert_eq!(s.previous_member_epoch, 11);

        // 5. m1 acks: epoch 11 STABLE; kept tasks keep epoch 10.
        let s = step(&mut g, "m1", &t1, Some(&t1));
        assert_eq!((s.state, s.member_epoch), (MemberState::Stable, 11));
        assert_eq!(s.assigned.active.epoch_of("sub1", 0), Some(10));

        // 6. m2 without ack: unchanged.
        let before = g.members["m2"].clone();
        let s = step(&mut g, "m2", &t2, None);
        assert_eq!(s, before);

        // 7. m3 gets sub2:1 (released by m1) at epoch 11, still UNRELEASED.
        let s = step(&mut g, "m3", &t3, Some(&TasksTuple::default()));
        assert_eq!(s.state, MemberState::UnreleasedTasks);
        assert_eq!(s.assigned.active.task_set(), tasks(&[("sub2", &[1])]));
        assert_eq!(s.assigned.active.epoch_of("sub2", 1), Some(11));

        // 8. m2 acks: gets sub1:2 at epoch 11, keeps sub1:3 and sub2:2 at epoch 10.
        let owned2 = active_only(tasks(&[("sub1", &[3]), ("sub2", &[2])]));
        let s = step(&mut g, "m2", &t2, Some(&owned2));
        assert_eq!((s.state, s.member_epoch), (MemberState::Stable, 11));
        assert_eq!(s.assigned.active.epoch_of("sub1", 2), Some(11));
        assert_eq!(s.assigned.active.epoch_of("sub1", 3), Some(10));

        // 9. m3 reports sub2:1: gets sub1:4,5, STABLE.
        let owned3 = active_only(tasks(&[("sub2", &[1])]));
        let s = step(&mut g, "m3", &t3, Some(&owned3));
        assert_eq!((s.state, s.member_epoch), (MemberState::Stable, 11));
        assert_eq!(s.assigned.active.task_set(), t3.active);
    }

    #[test]
    fn unknown_state_is_fenced_unless_it_owns_nothing() {
        let mut m = StreamsMember::new("m");
        m.state = MemberState::Unknown;
        let target = TasksTuple::default();
        let index = ProcessIndex::default();
        let input = ReconcileInput {
            target_epoch: 3,
            target: &target,
            index: &index,
            owned: None,
        };
        assert_eq!(
            reconcile(&m, &input).unwrap_err().code,
            ErrorCode::FENCED_MEMBER_EPOCH
        );
        let empty = TasksTuple::default();
        let input = ReconcileInput {
            owned: Some(&empty),
            ..input
        };
        assert_eq!(reconcile(&m, &input).unwrap().state, MemberState::Stable);
    }

    #[test]
    fn standby_promoted_in_place_once_its_active_is_free() {
        // KAFKA-20665: a member's own standby wanted as active is not revoked.
        let mut g = StreamsGroup::new("g");
        let mut m = StreamsMember::new("m");
        m.process_id = "p".into();
        m.member_epoch = 5;
        m.assigned.standby = tasks(&[("s", &[0])]);
        g.put_member(m);
        let target = active_only(tasks(&[("s", &[0])]));
        let s = step(
            &mut g,
            "m",
            &target,
            Some(&TasksTuple {
                standby: tasks(&[("s", &[0])]),
                ..Default::default()
            }),
        );
        assert_eq!(s.state, MemberState::Stable);
        assert_eq!(s.assigned.active.task_set(), tasks(&[("s", &[0])]));
        assert!(s.assigned.standby.is_empty());
        assert!(s.pending_revocation.is_empty());
    }
}
