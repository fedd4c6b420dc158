//! StreamsGroupDescribe (spec §1.4), ListGroups and DeleteGroups (§8), and timer firing (§3.13).

use serde::{Deserialize, Serialize};

use super::group::{GroupState, StreamsGroup, StreamsMember};
use super::target::{self, TargetRequest};
use super::{Coordinator, Outcome, TimerKey};
use crate::assignor::AssignmentConfigs;
use crate::error::{ApiError, ErrorCode};
use crate::protocol::{
    Assignment, DescribedGroup, DescribedMember, DescribedSubtopology, DescribedTopology, Endpoint,
    KeyValue, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, TaskOffset, TopicInfo,
};
use crate::records::Record;
use crate::topology::{self, InternalTopic};
use crate::types::{Millis, TaskId, TasksTuple, TasksWithEpochs};
use crate::util::sort;

/// Kafka's coordinator runtime re-runs a failed timer operation scheduled with retry (session
/// and rebalance timeouts) after this backoff.
const TIMER_RETRY_BACKOFF_MS: i64 = 500;

/// A ListGroups state filter against a classic state name: case-insensitive, trimmed,
/// underscores ignored.
fn classic_state_matches(filter: &str, state: &str) -> bool {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace('_', "");
    norm(filter) == norm(state)
}

/// One row of ListGroups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedGroup {
    /// The group id.
    pub group_id: String,
    /// `consumer` for classic consumer groups, `""` for streams groups (as Kafka answers).
    pub protocol_type: String,
    /// Kafka's state name.
    pub group_state: String,
    /// `classic` or `streams`.
    pub group_type: String,
}

/// READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10) and ALTER_CONFIGS (11) as a bit set:
/// the GROUP operations Kafka reports when no authorizer is configured.
pub(crate) const GROUP_OPERATIONS_WITHOUT_AUTHORIZER: i32 =
    (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: value.to_string(),
        unknown_tagged_fields: Vec::new(),
    }
}

fn internal_info(t: &InternalTopic) -> TopicInfo {
    TopicInfo {
        name: t.name.clone(),
        partitions: t.partitions,
        replication_factor: t.replication_factor.unwrap_or(0),
        topic_configs: t.configs.iter().map(|(k, v)| kv(k, v)).collect(),
        unknown_tagged_fields: Vec::new(),
    }
}

fn declared_info(t: &topology::TopicInfo) -> TopicInfo {
    let mut configs: Vec<KeyValue> = t
        .topic_configs
        .iter()
        .map(|c| kv(&c.key, &c.value))
        .collect();
    sort::by(&mut configs, |a, b| a.key.cmp(&b.key));
    TopicInfo {
        name: t.name.clone(),
        partitions: t.partitions,
        replication_factor: t.replication_factor,
        topic_configs: configs,
        unknown_tagged_fields: Vec::new(),
    }
}

fn sorted(v: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = v.into_iter().collect();
    sort::sort(&mut v);
    v
}

fn described_topology(g: &StreamsGroup) -> Option<DescribedTopology> {
    let topo = g.topology.as_ref()?;
    let ready = g
        .configured_topology
        .as_ref()
        .filter(|_| g.configured_topology_described)
        .filter(|c| c.is_ready() && c.topology_epoch == topo.epoch)
        .and_then(|c| c.subtopologies.as_ref());
    let subtopologies = match ready {
        Some(subs) => subs
            .iter()
            .map(|(id, s)| DescribedSubtopology {
                subtopology_id: id.clone(),
                source_topics: sorted(s.source_topics.iter().cloned()),
                repartition_sink_topics: sorted(s.repartition_sink_topics.iter().cloned()),
                state_changelog_topics: s
                    .state_changelog_topics
                    .values()
                    .map(internal_info)
                    .collect(),
                repartition_source_topics: s
                    .repartition_source_topics
                    .values()
                    .map(internal_info)
                    .collect(),
                unknown_tagged_fields: Vec::new(),
            })
            .collect(),
        None => {
            let mut subs: Vec<DescribedSubtopology> = topo
                .subtopologies
                .iter()
                .map(|s| {
                    let mut changelogs: Vec<TopicInfo> =
                        s.state_changelog_topics.iter().map(declared_info).collect();
                    sort::by(&mut changelogs, |a, b| a.name.cmp(&b.name));
                    let mut repartition: Vec<TopicInfo> = s
                        .repartition_source_topics
                        .iter()
                        .map(declared_info)
                        .collect();
                    sort::by(&mut repartition, |a, b| a.name.cmp(&b.name));
                    DescribedSubtopology {
                        subtopology_id: s.subtopology_id.clone(),
                        source_topics: sorted(s.source_topics.iter().cloned()),
                        repartition_sink_topics: sorted(s.repartition_sink_topics.iter().cloned()),
                        state_changelog_topics: changelogs,
                        repartition_source_topics: repartition,
                        unknown_tagged_fields: Vec::new(),
                    }
                })
                .collect();
            sort::by(&mut subs, |a, b| a.subtopology_id.cmp(&b.subtopology_id));
            subs
        }
    };
    Some(DescribedTopology {
        epoch: topo.epoch,
        subtopologies: Some(subtopologies),
        unknown_tagged_fields: Vec::new(),
    })
}

fn assignment_of(t: &TasksWithEpochs) -> Assignment {
    Assignment {
        active_tasks: t.active.task_set().to_task_ids(),
        standby_tasks: t.standby.to_task_ids(),
        warmup_tasks: t.warmup.to_task_ids(),
        unknown_tagged_fields: Vec::new(),
    }
}

fn target_of(t: &TasksTuple) -> Assignment {
    Assignment {
        active_tasks: t.active.to_task_ids(),
        standby_tasks: t.standby.to_task_ids(),
        warmup_tasks: t.warmup.to_task_ids(),
        unknown_tagged_fields: Vec::new(),
    }
}

fn offsets_list(m: &crate::util::map::BTreeMap<TaskId, i64>) -> Vec<TaskOffset> {
    m.iter()
        .map(|(t, o)| TaskOffset {
            subtopology_id: t.subtopology.clone(),
            partition: t.partition,
            offset: *o,
            unknown_tagged_fields: Vec::new(),
        })
        .collect()
}

fn described_member(g: &StreamsGroup, m: &StreamsMember) -> DescribedMember {
    let offsets = g.task_offsets.get(&m.member_id);
    DescribedMember {
        member_id: m.member_id.clone(),
        member_epoch: m.member_epoch,
        instance_id: m.instance_id.clone(),
        rack_id: m.rack_id.clone(),
        client_id: m.client_id.clone(),
        client_host: m.client_host.clone(),
        topology_epoch: m.topology_epoch,
        process_id: m.process_id.clone(),
        user_endpoint: m.user_endpoint.as_ref().map(|e| Endpoint {
            host: e.host.clone(),
            port: e.port,
            unknown_tagged_fields: Vec::new(),
        }),
        client_tags: m.client_tags.iter().map(|(k, v)| kv(k, v)).collect(),
        task_offsets: offsets
            .map(|o| offsets_list(&o.offsets))
            .unwrap_or_default(),
        task_end_offsets: offsets
            .map(|o| offsets_list(&o.end_offsets))
            .unwrap_or_default(),
        assignment: assignment_of(&m.assigned),
        target_assignment: target_of(&g.target_of(&m.member_id)),
        is_classic: false,
        unknown_tagged_fields: Vec::new(),
    }
}

impl Coordinator {
    /// StreamsGroupDescribe (spec §1.4, §8). groupcoord has no authorizer, so requested
    /// authorized operations are what Kafka answers without one: every operation a group supports.
    pub fn streams_group_describe(
        &self,
        req: &StreamsGroupDescribeRequest,
        api_version: i16,
    ) -> StreamsGroupDescribeResponse {
        // Kafka answers empty group ids first (INVALID_GROUP_ID, no message), then the others in
        // request order (they all live on its one coordinator partition here).
        let empty = req
            .group_ids
            .iter()
            .filter(|id| id.is_empty())
            .map(|_| DescribedGroup {
                error_code: ErrorCode::INVALID_GROUP_ID.0,
                ..Default::default()
            });
        let named = req.group_ids.iter().filter(|id| !id.is_empty()).map(|id| {
            let Some(g) = self.groups.streams(id) else {
                return DescribedGroup {
                    error_code: ErrorCode::GROUP_ID_NOT_FOUND.0,
                    error_message: Some(format!("Group {id} not found.")),
                    group_id: id.clone(),
                    ..Default::default()
                };
            };
            let cfg = self.config.for_group(id);
            DescribedGroup {
                group_id: id.clone(),
                group_state: g.state().name().to_string(),
                group_epoch: g.group_epoch,
                assignment_epoch: g.assignment_epoch,
                topology: described_topology(g),
                members: g.members.values().map(|m| described_member(g, m)).collect(),
                topology_description_status: if api_version >= 1 && req.include_topology_description
                {
                    1
                } else {
                    0
                },
                assignor_name: (api_version >= 1).then(|| cfg.assignor_name.clone()),
                authorized_operations: if req.include_authorized_operations {
                    GROUP_OPERATIONS_WITHOUT_AUTHORIZER
                } else {
                    i32::MIN
                },
                ..Default::default()
            }
        });
        StreamsGroupDescribeResponse {
            throttle_time_ms: 0,
            groups: empty.chain(named).collect(),
            unknown_tagged_fields: Vec::new(),
        }
    }

    /// ListGroups data (spec §8, docs/classic-protocol.md §C6). Filters: state names and group
    /// types, case-insensitive; empty = all. Ids with committed offsets and no group list as
    /// Empty classic groups, as in Kafka. Sorted by group id.
    pub fn list_groups(
        &self,
        states_filter: &[String],
        types_filter: &[String],
    ) -> Vec<ListedGroup> {
        let mut rows: Vec<ListedGroup> = Vec::new();
        for (id, group) in self.groups.all() {
            let (state, protocol_type, filter_state) = match group {
                super::registry::Group::Streams(g) => (
                    g.state().name(),
                    "streams".to_string(),
                    g.state().filter_name(),
                ),
                super::registry::Group::Classic(g) => (
                    g.state.name(),
                    g.protocol_type.clone().unwrap_or_default(),
                    g.state.name(),
                ),
                super::registry::Group::Consumer(g) => (
                    g.state().name(),
                    "consumer".to_string(),
                    g.state().filter_name(),
                ),
            };
            let wanted = match group {
                super::registry::Group::Streams(_) | super::registry::Group::Consumer(_) => {
                    |f: &str, s: &str| f.trim().eq_ignore_ascii_case(s)
                }
                // Classic names are CamelCase; accept `preparing_rebalance` too.
                super::registry::Group::Classic(_) => classic_state_matches,
            };
            if states_filter.is_empty() || states_filter.iter().any(|f| wanted(f, filter_state)) {
                rows.push(ListedGroup {
                    group_id: id.clone(),
                    protocol_type,
                    group_state: state.into(),
                    group_type: group.group_type().into(),
                });
            }
        }
        for id in self.offsets.group_ids() {
            if !self.groups.contains(id)
                && (states_filter.is_empty()
                    || states_filter
                        .iter()
                        .any(|s| s.trim().eq_ignore_ascii_case("Empty")))
            {
                rows.push(ListedGroup {
                    group_id: id.clone(),
                    protocol_type: String::new(),
                    group_state: "Empty".into(),
                    group_type: "classic".into(),
                });
            }
        }
        rows.retain(|r| {
            types_filter.is_empty()
                || types_filter
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(&r.group_type))
        });
        sort::by(&mut rows, |a, b| a.group_id.cmp(&b.group_id));
        rows
    }

    /// DeleteGroups (spec §8): only `Empty` groups; their offsets go too.
    pub fn delete_groups(
        &mut self,
        _now: Millis,
        group_ids: &[String],
    ) -> Outcome<Vec<(String, ErrorCode)>> {
        let mut out = Outcome::new(Vec::new());
        for id in group_ids {
            let classic = self.classic_delete_check(id);
            let consumer = self.groups.consumer(id).map(|g| g.state());
            let mut code = match self.groups.streams(id) {
                None if consumer.is_some_and(|s| s != GroupState::Empty) => {
                    ErrorCode::NON_EMPTY_GROUP
                }
                None if consumer.is_some() => ErrorCode::NONE,
                None if classic.is_some() => classic.unwrap_or(ErrorCode::NONE),
                None if self.offsets.contains_key(id) => ErrorCode::NONE,
                None => ErrorCode::GROUP_ID_NOT_FOUND,
                Some(g) if g.state() != GroupState::Empty => ErrorCode::NON_EMPTY_GROUP,
                Some(_) => ErrorCode::NONE,
            };
            if code == ErrorCode::NONE {
                let mut records = Vec::new();
                if let Some(offsets) = self.offsets.get(id) {
                    for (topic, partition, _) in offsets.iter() {
                        records.push(Record::OffsetCommit {
                            group_id: id.clone(),
                            topic: topic.to_string(),
                            partition,
                            value: None,
                        });
                    }
                }
                if classic.is_some() {
                    records.push(Record::ClassicGroupMetadata {
                        group_id: id.clone(),
                        value: None,
                    });
                } else if let Some(tombstones) = self.consumer_group_tombstones(id) {
                    records.extend(tombstones);
                } else if self.groups.contains(id) {
                    records.push(Record::TargetAssignmentMetadata {
                        group_id: id.clone(),
                        value: None,
                    });
                    records.push(Record::GroupMetadata {
                        group_id: id.clone(),
                        value: None,
                    });
                    records.push(Record::Topology {
                        group_id: id.clone(),
                        value: None,
                    });
                }
                match self.apply(&records) {
                    Ok(()) => {
                        let mut timers = Vec::new();
                        if classic.is_some() {
                            self.classic_cancel_timers(id, &mut timers);
                        }
                        self.timer_cancel(
                            &mut timers,
                            &TimerKey::InitialRebalance {
                                group_id: id.clone(),
                            },
                        );
                        out.timers.extend(timers);
                        out.records.extend(records);
                    }
                    Err(e) => code = e.code,
                }
            }
            out.response.push((id.clone(), code));
        }
        out
    }

    /// Fire one due timer (spec §3.13). A session or rebalance timeout whose fencing cannot be
    /// applied changes nothing and is re-armed after Kafka's timer retry backoff; a failed
    /// delayed assignment is not retried (Kafka schedules it without retry either).
    pub(super) fn fire(&mut self, now: Millis, key: TimerKey, tag: i32) -> Outcome<()> {
        let consumer = self.consumer_fire(now, &key, tag);
        let fenced = match &key {
            _ if consumer.is_some() => consumer.unwrap_or_else(|| Ok(Outcome::new(()))),
            TimerKey::SessionTimeout {
                group_id,
                member_id,
            } => self.fence_member(group_id, member_id),
            TimerKey::RebalanceTimeout {
                group_id,
                member_id,
            } => {
                let epoch = self
                    .groups
                    .streams(group_id)
                    .and_then(|g| g.members.get(member_id))
                    .map(|m| m.member_epoch);
                if epoch == Some(tag) {
                    self.fence_member(group_id, member_id)
                } else {
                    Ok(Outcome::new(()))
                }
            }
            TimerKey::InitialRebalance { group_id } => {
                return self
                    .delayed_assignment(now, group_id)
                    .unwrap_or_else(|_| Outcome::new(()));
            }
            TimerKey::ClassicHeartbeat { .. }
            | TimerKey::ClassicJoin { .. }
            | TimerKey::ClassicSync { .. } => return self.fire_classic(now, &key, tag),
            // Handled by `consumer_fire` (a group that is no consumer group any more: nothing).
            TimerKey::ConsumerRegex { .. } => Ok(Outcome::new(())),
            // docs/consumer-protocol.md §K11.3: a classic member of a consumer group that did not
            // rejoin or sync in time.
            TimerKey::ConsumerClassicJoin {
                group_id,
                member_id,
            }
            | TimerKey::ConsumerClassicSync {
                group_id,
                member_id,
            } => self.consumer_fence_member(now, group_id, member_id),
        };
        fenced.unwrap_or_else(|_| {
            let mut out = Outcome::new(());
            let retry_at = now.plus(TIMER_RETRY_BACKOFF_MS);
            self.timer_schedule(&mut out.timers, key, retry_at, tag);
            out
        })
    }

    /// The delayed initial assignment (spec §3.10).
    fn delayed_assignment(&mut self, now: Millis, group_id: &str) -> Result<Outcome<()>, ApiError> {
        let mut out = Outcome::new(());
        let Some(g) = self.groups.streams(group_id) else {
            return Ok(out);
        };
        if g.members.is_empty() || g.group_epoch <= g.assignment_epoch {
            return Ok(out);
        }
        let Some(configured) = g.configured_topology.as_ref() else {
            return Ok(out);
        };
        let cfg = self.config.for_group(group_id);
        let stored = &g.last_assignment_configs;
        let configs = AssignmentConfigs {
            num_standby_replicas: stored
                .get("num.standby.replicas")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            rack_aware_assignment_tags: stored
                .get("rack.aware.assignment.tags")
                .map(|v| {
                    v.split(',')
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            acceptable_recovery_lag: cfg.acceptable_recovery_lag,
            num_warmup_replicas: cfg.num_warmup_replicas,
        };
        let result = target::update_target(&TargetRequest {
            group: g,
            group_epoch: g.group_epoch,
            updated_member: None,
            replaced_member_id: None,
            configured: Some(configured),
            configs,
            assignor_name: &cfg.assignor_name,
            now,
            initial_delay_pending: false,
            updated_member_offsets: None,
            assignment_interval_ms: 0,
            offload_min_work: None,
            offload_in_flight: false,
        });
        let records = result.map(|r| r.records).unwrap_or_default();
        self.apply(&records)?;
        out.records = records;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::CoordinatorConfig;
    use crate::coordinator::{Coordinator, RequestContext};
    use crate::protocol::{
        StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest, Subtopology, Topology,
    };
    use crate::types::Millis;

    #[test]
    fn authorized_operations_are_every_group_operation_when_requested() {
        let mut coordinator = Coordinator::new(CoordinatorConfig::default());
        let join = StreamsGroupHeartbeatRequest {
            group_id: "g".into(),
            member_id: "m".into(),
            rebalance_timeout_ms: 1000,
            topology: Some(Topology {
                subtopologies: vec![Subtopology {
                    subtopology_id: "0".into(),
                    source_topics: vec!["input".into()],
                    ..Default::default()
                }],
                ..Default::default()
            }),
            active_tasks: Some(Vec::new()),
            standby_tasks: Some(Vec::new()),
            warmup_tasks: Some(Vec::new()),
            ..Default::default()
        };
        let ctx = RequestContext {
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            api_version: 1,
        };
        let joined = coordinator.streams_group_heartbeat(Millis(0), &ctx, &join);
        assert_eq!(joined.response.error_code, 0);
        let describe = |include| {
            coordinator.streams_group_describe(
                &StreamsGroupDescribeRequest {
                    group_ids: vec!["g".into(), "unknown".into()],
                    include_authorized_operations: include,
                    ..Default::default()
                },
                1,
            )
        };
        // What Apache Kafka 4.4 answers without an authorizer (recorded by the differential run):
        // the operations for a described group, none for a group it did not find.
        let requested = describe(true);
        assert_eq!(requested.groups[0].authorized_operations, 3400);
        assert_eq!(requested.groups[1].authorized_operations, i32::MIN);
        assert_eq!(describe(false).groups[0].authorized_operations, i32::MIN);
    }

    #[test]
    fn empty_group_ids_are_answered_first_without_a_message() {
        let coordinator = Coordinator::new(CoordinatorConfig::default());
        let out = coordinator.streams_group_describe(
            &StreamsGroupDescribeRequest {
                group_ids: vec!["a".into(), "".into(), "b".into()],
                ..Default::default()
            },
            1,
        );
        // As Apache Kafka 4.4 answers (recorded by the differential run).
        let got: Vec<(&str, i16, Option<&str>)> = out
            .groups
            .iter()
            .map(|g| {
                (
                    g.group_id.as_str(),
                    g.error_code,
                    g.error_message.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("", 24, None),
                ("a", 69, Some("Group a not found.")),
                ("b", 69, Some("Group b not found.")),
            ]
        );
    }
}
