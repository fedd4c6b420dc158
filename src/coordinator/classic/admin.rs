//! DescribeGroups, OffsetDelete and the classic parts of ListGroups, DeleteGroups and the offset
//! validation (docs/classic-protocol.md §C6).

use super::group::{ClassicGroup, ClassicState};
use super::ops::{heartbeat_key, join_key, sync_key};
use crate::coordinator::{Coordinator, Outcome};
use crate::error::{ApiError, ErrorCode};
use crate::protocol::classic::{
    DescribedClassicGroup, DescribedClassicMember, OffsetDeleteResponse,
};
use crate::records::Record;
use crate::types::Millis;

/// DescribeGroups v6+ reports unknown groups as errors; older versions as Dead groups.
const DESCRIBE_ERROR_VERSION: i16 = 6;

impl Coordinator {
    /// The classic group with this id (`None` when absent or of another type).
    pub(crate) fn classic_group(&self, group_id: &str) -> Option<&ClassicGroup> {
        self.groups.classic(group_id)
    }

    /// DescribeGroups (§C6), one entry per requested id, in request order.
    pub fn describe_groups(
        &self,
        group_ids: &[String],
        api_version: i16,
    ) -> Vec<DescribedClassicGroup> {
        group_ids
            .iter()
            .map(|id| self.describe_group(id, api_version))
            .collect()
    }

    fn describe_group(&self, id: &str, api_version: i16) -> DescribedClassicGroup {
        let mut d = DescribedClassicGroup {
            error_code: ErrorCode::NONE,
            error_message: None,
            group_id: id.to_string(),
            group_state: ClassicState::Empty.name().to_string(),
            protocol_type: String::new(),
            protocol_data: String::new(),
            members: Vec::new(),
        };
        // An empty id is looked up like any other (not found): only a null id, which the wire
        // cannot carry here, is INVALID_GROUP_ID in Kafka.
        let Some(g) = self.groups.classic(id) else {
            if !self.groups.contains(id) && self.offsets.contains_key(id) {
                // Only committed offsets: an Empty classic group, as in Kafka.
                return d;
            }
            d.group_state = ClassicState::Dead.name().to_string();
            if api_version >= DESCRIBE_ERROR_VERSION {
                d.error_code = ErrorCode::GROUP_ID_NOT_FOUND;
                d.error_message = Some(if self.groups.contains(id) {
                    format!("Group {id} is not a classic group.")
                } else {
                    format!("Group {id} not found.")
                });
            }
            return d;
        };
        d.group_state = g.state.name().to_string();
        d.protocol_type = g.protocol_type.clone().unwrap_or_default();
        let stable = g.is(ClassicState::Stable);
        let protocol = g.protocol_name.clone().unwrap_or_default();
        if stable {
            d.protocol_data = protocol.clone();
        }
        d.members = g
            .members
            .values()
            .map(|m| DescribedClassicMember {
                member_id: m.member_id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                member_metadata: if stable {
                    m.metadata(&protocol).to_vec()
                } else {
                    Vec::new()
                },
                member_assignment: m.assignment.clone(),
            })
            .collect();
        d
    }

    /// OffsetDelete (§C6): per partition NONE (tombstoned when committed) or
    /// GROUP_SUBSCRIBED_TO_TOPIC; group errors GROUP_ID_NOT_FOUND / NON_EMPTY_GROUP.
    pub fn offset_delete(
        &mut self,
        _now: Millis,
        group_id: &str,
        topics: &[(String, Vec<i32>)],
    ) -> Outcome<OffsetDeleteResponse> {
        let mut out = Outcome::new(OffsetDeleteResponse {
            error_code: ErrorCode::NONE,
            topics: Vec::new(),
        });
        let subscribed: Box<dyn Fn(&str) -> bool + '_> = if let Some(g) =
            self.groups.classic(group_id)
        {
            let non_empty = matches!(
                g.state,
                ClassicState::Stable
                    | ClassicState::PreparingRebalance
                    | ClassicState::CompletingRebalance
            );
            if non_empty && g.protocol_type.as_deref() != Some("consumer") {
                out.response.error_code = ErrorCode::NON_EMPTY_GROUP;
                return out;
            }
            Box::new(move |t: &str| g.is_subscribed_to(t))
        } else if let Some(s) = self.groups.streams(group_id) {
            let active = !s.members.is_empty();
            let sources = s.topology.as_ref().map(|t| t.source_topic_map());
            Box::new(move |t: &str| active && sources.as_ref().is_some_and(|m| m.contains_key(t)))
        } else if self.offsets.contains_key(group_id) {
            Box::new(|_: &str| false)
        } else {
            out.response.error_code = ErrorCode::GROUP_ID_NOT_FOUND;
            return out;
        };
        let committed = self.offsets.get(group_id);
        let mut records = Vec::new();
        for (topic, partitions) in topics {
            let is_subscribed = subscribed(topic);
            let mut results = Vec::with_capacity(partitions.len());
            for &p in partitions {
                if is_subscribed {
                    results.push((p, ErrorCode::GROUP_SUBSCRIBED_TO_TOPIC));
                    continue;
                }
                results.push((p, ErrorCode::NONE));
                if committed.is_some_and(|c| c.contains(topic, p)) {
                    records.push(Record::OffsetCommit {
                        group_id: group_id.to_string(),
                        topic: topic.clone(),
                        partition: p,
                        value: None,
                    });
                }
            }
            out.response.topics.push((topic.clone(), results));
        }
        drop(subscribed);
        if let Err(e) = self.apply(&records) {
            // Nothing was stored: every partition reports the failure (as OffsetCommit does).
            for (_, results) in &mut out.response.topics {
                for (_, code) in results {
                    *code = e.code;
                }
            }
            records.clear();
        }
        out.records = records;
        out
    }

    /// Remove an Empty classic group that a streams join converts (§C6.3); `None` when the id
    /// holds no Empty classic group. The caller writes its tombstone, or puts it back with
    /// `GroupRegistry::insert_classic` if the join fails.
    pub(in crate::coordinator) fn take_empty_classic_group(
        &mut self,
        group_id: &str,
    ) -> Option<ClassicGroup> {
        if !self.groups.classic(group_id)?.is(ClassicState::Empty) {
            return None;
        }
        match self.groups.remove(group_id) {
            Some(crate::coordinator::registry::Group::Classic(g)) => Some(g),
            _ => None,
        }
    }

    /// Tombstones that delete an empty streams group (a classic JoinGroup converts it), applied;
    /// `Err` (nothing applied) when they cannot be stored or replayed.
    pub(super) fn streams_group_tombstones(
        &mut self,
        group_id: &str,
    ) -> Result<Vec<Record>, crate::error::ApiError> {
        let records = vec![
            Record::TargetAssignmentMetadata {
                group_id: group_id.to_string(),
                value: None,
            },
            Record::GroupMetadata {
                group_id: group_id.to_string(),
                value: None,
            },
            Record::Topology {
                group_id: group_id.to_string(),
                value: None,
            },
        ];
        self.apply(&records)?;
        Ok(records)
    }

    /// DeleteGroups of a classic group: `Err` with the code when it cannot be deleted, else
    /// the tombstone (the caller adds the offsets' and applies them) and the timers cancelled.
    pub(in crate::coordinator) fn classic_delete_check(&self, group_id: &str) -> Option<ErrorCode> {
        let g = self.groups.classic(group_id)?;
        Some(match g.state {
            ClassicState::Empty => ErrorCode::NONE,
            ClassicState::Dead => ErrorCode::GROUP_ID_NOT_FOUND,
            _ => ErrorCode::NON_EMPTY_GROUP,
        })
    }

    /// Cancel every timer of a classic group about to be deleted.
    pub(in crate::coordinator) fn classic_cancel_timers(
        &mut self,
        group_id: &str,
        out: &mut Vec<crate::coordinator::TimerChange>,
    ) {
        let done = self.on_classic(Millis(0), group_id, |step, g| {
            step.cancel(&join_key(group_id));
            step.cancel(&sync_key(group_id));
            for id in g.members.keys().chain(g.pending_join.iter()) {
                step.cancel(&heartbeat_key(group_id, id));
            }
        });
        out.extend(done.into_iter().flat_map(|d| d.timers));
    }

    /// OffsetCommit checks of a classic group (Kafka's `ClassicGroup.validateOffsetCommit`).
    pub(in crate::coordinator) fn classic_validate_commit(
        g: &ClassicGroup,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        transactional: bool,
    ) -> Result<(), ApiError> {
        let err = |code: ErrorCode, msg: &str| Err(ApiError::new(code, msg));
        if g.is(ClassicState::Dead) {
            return err(
                ErrorCode::COORDINATOR_NOT_AVAILABLE,
                "The coordinator is not available.",
            );
        }
        if generation < 0 && g.is(ClassicState::Empty) {
            return Ok(());
        }
        if generation >= 0 || !member_id.is_empty() || instance_id.is_some() {
            if let Some(i) = instance_id {
                match g.static_members.get(i) {
                    None => {
                        return err(
                            ErrorCode::UNKNOWN_MEMBER_ID,
                            "The coordinator is not aware of this member.",
                        );
                    }
                    Some(existing) if existing != member_id => {
                        return err(
                            ErrorCode::FENCED_INSTANCE_ID,
                            "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.",
                        );
                    }
                    Some(_) => {}
                }
            }
            if !g.members.contains_key(member_id) {
                return err(
                    ErrorCode::UNKNOWN_MEMBER_ID,
                    "The coordinator is not aware of this member.",
                );
            }
            if generation != g.generation {
                return err(
                    ErrorCode::ILLEGAL_GENERATION,
                    "Specified group generation id is not valid.",
                );
            }
        } else if !transactional && !g.is(ClassicState::Empty) {
            return err(
                ErrorCode::UNKNOWN_MEMBER_ID,
                "The coordinator is not aware of this member.",
            );
        }
        if !transactional && g.is(ClassicState::CompletingRebalance) {
            return err(
                ErrorCode::REBALANCE_IN_PROGRESS,
                "The group is rebalancing, so a rejoin is needed.",
            );
        }
        Ok(())
    }

    /// A valid commit from a member of a Stable or rebalancing group counts as a heartbeat.
    pub(in crate::coordinator) fn classic_commit_heartbeat(
        &mut self,
        now: Millis,
        group_id: &str,
        member_id: &str,
        out: &mut Vec<crate::coordinator::TimerChange>,
    ) {
        let Some(g) = self.groups.classic(group_id) else {
            return;
        };
        if !matches!(
            g.state,
            ClassicState::Stable | ClassicState::PreparingRebalance
        ) {
            return;
        }
        let Some(m) = g.members.get(member_id) else {
            return;
        };
        let deadline = now.plus(m.session_timeout_ms.max(0) as i64);
        out.push(
            self.timers
                .schedule(heartbeat_key(group_id, member_id), deadline, 0),
        );
    }
}
