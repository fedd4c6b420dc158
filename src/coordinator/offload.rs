//! Target assignments computed off the coordinator's thread (groupcoord; Kafka 4.4 has the
//! `group.streams.assignor.offload.enable` switch but runs the assignor inline).
//!
//! The core stays deterministic: a heartbeat that needs a large assignment (members x tasks at
//! least the driver's threshold) does not run the assignor; it answers `ASSIGNMENT_DELAYED` and
//! hands the driver an [`AssignmentJob`] carrying the assignor's whole input. The driver runs it
//! anywhere and gives the result back with [`Coordinator::complete_assignment`], which writes the
//! new targets as records (the same records an inline assignment writes) if the group is still at
//! the epoch and with the members the job was computed for; otherwise the result is dropped and
//! the next heartbeat asks again. Nothing of this is persisted: after a restart the next
//! heartbeat asks again. Off by default: without a threshold every assignment runs inline.

use crate::util::map::BTreeSet;

use super::target::{AssignmentJob, AssignmentResult};
use super::{Coordinator, Outcome};
use crate::records::{Record, TargetAssignmentMetadataValue};
use crate::types::Millis;

/// The offload settings and the computations handed out and not yet completed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offload {
    /// Offload when members x tasks reaches this; `None`: always inline.
    pub(crate) min_work: Option<u64>,
    /// Groups with a job handed out (at most one each).
    in_flight: BTreeSet<String>,
    /// Jobs not yet taken by the driver.
    queue: Vec<AssignmentJob>,
}

impl Offload {
    pub(crate) fn is_in_flight(&self, group_id: &str) -> bool {
        !self.in_flight.is_empty() && self.in_flight.contains(group_id)
    }

    pub(crate) fn submit(&mut self, job: AssignmentJob) {
        self.in_flight.insert(job.group_id.clone());
        self.queue.push(job);
    }
}

impl Coordinator {
    /// Compute a streams group's new target assignment off the caller's thread when its
    /// members x tasks reaches `min_work` (`None`, the default: always inline, as Kafka 4.4).
    /// The driver then takes the jobs with [`Coordinator::take_assignment_jobs`], runs them and
    /// hands the results to [`Coordinator::complete_assignment`].
    pub fn set_assignment_offload(&mut self, min_work: Option<u64>) {
        self.offload.min_work = min_work;
    }

    /// Assignment computations requested since the last call, to run with
    /// [`AssignmentJob::run`] (on any thread).
    pub fn take_assignment_jobs(&mut self) -> Vec<AssignmentJob> {
        std::mem::take(&mut self.offload.queue)
    }

    /// Accept a computed assignment: its targets are written (as an inline assignment writes
    /// them) when the group is still at the job's epoch with the same members; a stale result
    /// writes nothing (the next heartbeat asks again).
    #[must_use = "the records are already applied: persist them"]
    pub fn complete_assignment(&mut self, now: Millis, result: AssignmentResult) -> Outcome<()> {
        let mut out = Outcome::new(());
        self.offload.in_flight.remove(&result.group_id);
        let Ok(targets) = result.targets else {
            return out;
        };
        let Some(g) = self.groups.streams(&result.group_id) else {
            return out;
        };
        let current = g.group_epoch == result.group_epoch
            && g.assignment_epoch < result.group_epoch
            && g.members.len() == targets.len()
            && g.members.keys().eq(targets.keys());
        if !current {
            return out;
        }
        for (id, tasks) in targets {
            if g.target_assignment.get(&id) != Some(&tasks) {
                out.records.push(Record::TargetAssignmentMember {
                    group_id: g.group_id.clone(),
                    member_id: id,
                    value: Some(tasks),
                });
            }
        }
        out.records.push(Record::TargetAssignmentMetadata {
            group_id: g.group_id.clone(),
            value: Some(TargetAssignmentMetadataValue {
                assignment_epoch: result.group_epoch,
                assignment_timestamp: now.0,
            }),
        });
        let group_id = result.group_id;
        if self.apply_group_records(&group_id, &out.records).is_err() {
            // `apply` changed nothing: nothing to persist.
            out.records.clear();
        }
        out
    }
}

/// An offloaded assignment writes what the inline one writes, only later; a stale result writes
/// nothing and the next heartbeat asks again.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CoordinatorConfig;
    use crate::protocol::{StreamsGroupHeartbeatRequest, Subtopology, Topology, status_code};
    use crate::topology::MetadataImage;
    use crate::types::TasksTuple;

    fn coordinator() -> Coordinator {
        let mut c = Coordinator::new(CoordinatorConfig {
            initial_rebalance_delay_ms: 0,
            assignment_interval_ms: 0,
            ..CoordinatorConfig::default()
        });
        let mut meta = MetadataImage::default();
        meta.topics.insert("in".into(), 8);
        c.set_metadata(meta);
        c
    }

    fn join(member: &str) -> StreamsGroupHeartbeatRequest {
        StreamsGroupHeartbeatRequest {
            group_id: "g".into(),
            member_id: member.into(),
            member_epoch: 0,
            rebalance_timeout_ms: 60_000,
            process_id: Some(member.into()),
            topology: Some(Topology {
                subtopologies: vec![Subtopology {
                    subtopology_id: "0".into(),
                    source_topics: vec!["in".into()],
                    ..Default::default()
                }],
                ..Default::default()
            }),
            active_tasks: Some(vec![]),
            standby_tasks: Some(vec![]),
            warmup_tasks: Some(vec![]),
            ..Default::default()
        }
    }

    fn targets(c: &Coordinator) -> Vec<(String, TasksTuple)> {
        let g = c.group("g").unwrap();
        g.target_assignment
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    #[test]
    fn offloaded_assignment_lands_later_with_the_inline_targets() {
        let mut off = coordinator();
        off.set_assignment_offload(Some(1));
        let mut log = Vec::new();
        let beat = |c: &mut Coordinator, now: i64, req: &StreamsGroupHeartbeatRequest| {
            let o = c.streams_group_heartbeat(Millis(now), &Default::default(), req);
            assert_eq!(o.response.error_code, 0, "{:?}", o.response);
            let codes: Vec<i8> = o
                .response
                .status
                .unwrap_or_default()
                .iter()
                .map(|s| s.status_code)
                .collect();
            (codes, o.records)
        };
        let (codes, records) = beat(&mut off, 1, &join("a"));
        log.extend(records);
        assert!(
            codes.contains(&status_code::ASSIGNMENT_DELAYED),
            "{codes:?}"
        );
        let behind = |c: &Coordinator| {
            let g = c.group("g").unwrap();
            g.assignment_epoch < g.group_epoch
        };
        assert!(behind(&off));
        let first = off.take_assignment_jobs();
        assert_eq!(first.len(), 1);
        // `b` joins while the job runs: delayed, and no second job for the group.
        let (codes, records) = beat(&mut off, 2, &join("b"));
        log.extend(records);
        assert!(codes.contains(&status_code::ASSIGNMENT_DELAYED));
        assert!(
            off.take_assignment_jobs().is_empty(),
            "one job in flight per group"
        );
        // The job was computed before `b` joined: stale, nothing written.
        for job in first {
            assert!(
                off.complete_assignment(Millis(3), job.run())
                    .records
                    .is_empty()
            );
        }
        assert!(behind(&off));
        // The next heartbeat asks again; the same heartbeat on a copy computes inline.
        let steady = StreamsGroupHeartbeatRequest {
            member_epoch: off.group("g").unwrap().members["a"].member_epoch,
            topology: None,
            active_tasks: None,
            standby_tasks: None,
            warmup_tasks: None,
            rebalance_timeout_ms: -1,
            ..join("a")
        };
        let mut inline = off.clone();
        inline.set_assignment_offload(None);
        let _ = beat(&mut inline, 4, &steady);
        let (_, records) = beat(&mut off, 4, &steady);
        log.extend(records);
        let second = off.take_assignment_jobs();
        assert_eq!(second.len(), 1);
        for job in second {
            let o = off.complete_assignment(Millis(4), job.run());
            assert!(!o.records.is_empty());
            log.extend(o.records);
        }
        assert_eq!(targets(&off), targets(&inline));
        assert_eq!(
            off.group("g").unwrap().assignment_epoch,
            inline.group("g").unwrap().assignment_epoch
        );
        assert!(!targets(&off).iter().all(|(_, t)| t.active.is_empty()));
        // The records rebuild the same state.
        let mut replayed = coordinator();
        for r in &log {
            replayed.replay(r).unwrap();
        }
        assert_eq!(replayed.state_hash(), off.state_hash());
    }

    #[test]
    fn without_a_threshold_everything_is_inline() {
        let mut c = coordinator();
        let o = c.streams_group_heartbeat(Millis(1), &Default::default(), &join("a"));
        assert_eq!(o.response.error_code, 0);
        assert!(c.take_assignment_jobs().is_empty());
        let g = c.group("g").unwrap();
        assert_eq!(g.assignment_epoch, g.group_epoch);
    }
}
