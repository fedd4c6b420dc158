//! Values of the streams group records 17 and 19-23 (spec §6): version 0, flexible.

use crate::util::map::BTreeMap;

use super::RecordCodecError;
use crate::records::{
    CurrentMemberAssignmentValue, GroupMetadataValue, MemberMetadataValue, MemberState,
    TargetAssignmentMetadataValue, UserEndpoint,
};
use crate::topology::{CopartitionGroup, KeyValue, StreamsTopology, Subtopology, TopicInfo};
use crate::types::{ActiveTasks, TaskSet, TasksTuple, TasksWithEpochs};
use crate::wire::{Reader, WireError, Writer};

/// The only value version of every streams record.
pub(crate) const VALUE_VERSION: i16 = 0;

pub(crate) const GROUP_METADATA: &str = "StreamsGroupMetadataValue";
pub(crate) const MEMBER_METADATA: &str = "StreamsGroupMemberMetadataValue";
pub(crate) const TARGET_ASSIGNMENT_METADATA: &str = "StreamsGroupTargetAssignmentMetadataValue";
pub(crate) const TARGET_ASSIGNMENT_MEMBER: &str = "StreamsGroupTargetAssignmentMemberValue";
pub(crate) const CURRENT_MEMBER_ASSIGNMENT: &str = "StreamsGroupCurrentMemberAssignmentValue";
pub(crate) const TOPOLOGY: &str = "StreamsGroupTopologyValue";

/// Schema defaults of the tagged fields.
const DEFAULT_EPOCH: i32 = -1;
const DEFAULT_ASSIGNMENT_TIMESTAMP: i64 = 0;

pub(crate) type Encoded = Result<Vec<u8>, WireError>;

/// A value: its version, then the struct written by `body`.
pub(crate) fn encode_value(
    record: &'static str,
    body: impl FnOnce(&mut Writer) -> Result<(), WireError>,
) -> Encoded {
    let mut w = Writer::new(record);
    w.i16(VALUE_VERSION);
    body(&mut w)?;
    Ok(w.into_bytes())
}

/// Reads the value version, which must be 0, then the struct with `body`; every byte must be
/// read.
pub(crate) fn decode_value<T>(
    bytes: &[u8],
    record: &'static str,
    body: impl FnOnce(&mut Reader<'_>) -> Result<T, WireError>,
) -> Result<T, RecordCodecError> {
    let mut r = Reader::new(bytes, record);
    match r.i16("version")? {
        VALUE_VERSION => {}
        version => return Err(RecordCodecError::UnsupportedVersion { record, version }),
    }
    let value = body(&mut r)?;
    r.finish()?;
    Ok(value)
}

/// One tagged field's payload, written apart at `w`'s path.
pub(crate) fn tagged(
    w: &Writer,
    tag: u32,
    value: impl FnOnce(&mut Writer) -> Result<(), WireError>,
) -> Result<(u32, Vec<u8>), WireError> {
    let mut payload = w.nested();
    value(&mut payload)?;
    Ok((tag, payload.into_bytes()))
}

fn tagged_i32(w: &Writer, tag: u32, v: i32) -> Result<(u32, Vec<u8>), WireError> {
    tagged(w, tag, |t| {
        t.i32(v);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// 17 StreamsGroupMetadataValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_group_metadata(v: &GroupMetadataValue) -> Encoded {
    encode_value(GROUP_METADATA, |w| {
        w.i32(v.epoch);
        w.i64(v.metadata_hash);
        let mut tags = Vec::new();
        if v.validated_topology_epoch != DEFAULT_EPOCH {
            tags.push(tagged_i32(w, 0, v.validated_topology_epoch)?);
        }
        // Nullable with a null default, but Kafka's coordinator always sets it (possibly
        // empty), so it is always written.
        tags.push(tagged(w, 1, |t| {
            write_key_values(t, "LastAssignmentConfigs", &v.last_assignment_configs)
        })?);
        if v.stored_description_topology_epoch != DEFAULT_EPOCH {
            tags.push(tagged_i32(w, 2, v.stored_description_topology_epoch)?);
        }
        if v.failed_description_topology_epoch != DEFAULT_EPOCH {
            tags.push(tagged_i32(w, 3, v.failed_description_topology_epoch)?);
        }
        w.tagged_fields_with(tags, &[])
    })
}

pub(crate) fn decode_group_metadata(bytes: &[u8]) -> Result<GroupMetadataValue, RecordCodecError> {
    decode_value(bytes, GROUP_METADATA, |r| {
        let mut v = GroupMetadataValue {
            epoch: r.i32("Epoch")?,
            metadata_hash: r.i64("MetadataHash")?,
            ..GroupMetadataValue::default()
        };
        r.tagged_fields_with(|tag, t| {
            match tag {
                0 => v.validated_topology_epoch = t.i32("ValidatedTopologyEpoch")?,
                1 => {
                    v.last_assignment_configs = t
                        .compact_nullable_array("LastAssignmentConfigs", read_key_value)?
                        .map(BTreeMap::from_iter)
                        .unwrap_or_default()
                }
                2 => {
                    v.stored_description_topology_epoch = t.i32("StoredDescriptionTopologyEpoch")?
                }
                3 => {
                    v.failed_description_topology_epoch = t.i32("FailedDescriptionTopologyEpoch")?
                }
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(v)
    })
}

/// `[]{Key, Value}` from a sorted map, each entry with an empty tagged-fields section.
fn write_key_values(
    w: &mut Writer,
    field: &'static str,
    map: &BTreeMap<String, String>,
) -> Result<(), WireError> {
    w.compact_array(field, map, |w, (k, v)| {
        w.compact_string("Key", k)?;
        w.compact_string("Value", v)?;
        w.no_tagged_fields();
        Ok(())
    })
}

/// One `{Key, Value}` entry (a repeated key keeps the last value when collected into a map).
fn read_key_value(r: &mut Reader<'_>) -> Result<(String, String), WireError> {
    let k = r.compact_string("Key")?;
    let v = r.compact_string("Value")?;
    r.skip_tagged_fields()?;
    Ok((k, v))
}

// ---------------------------------------------------------------------------------------------
// 19 StreamsGroupMemberMetadataValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_member_metadata(v: &MemberMetadataValue) -> Encoded {
    encode_value(MEMBER_METADATA, |w| {
        w.compact_nullable_string("InstanceId", v.instance_id.as_deref())?;
        w.compact_nullable_string("RackId", v.rack_id.as_deref())?;
        w.compact_string("ClientId", &v.client_id)?;
        w.compact_string("ClientHost", &v.client_host)?;
        w.i32(v.rebalance_timeout_ms);
        w.i32(v.topology_epoch);
        w.compact_string("ProcessId", &v.process_id)?;
        w.nullable_struct_with("UserEndpoint", v.user_endpoint.as_ref(), |w, e| {
            w.compact_string("Host", &e.host)?;
            w.u16(e.port);
            w.no_tagged_fields();
            Ok(())
        })?;
        write_key_values(w, "ClientTags", &v.client_tags)?;
        w.no_tagged_fields();
        Ok(())
    })
}

pub(crate) fn decode_member_metadata(
    bytes: &[u8],
) -> Result<MemberMetadataValue, RecordCodecError> {
    decode_value(bytes, MEMBER_METADATA, |r| {
        let instance_id = r.compact_nullable_string("InstanceId")?;
        let rack_id = r.compact_nullable_string("RackId")?;
        let client_id = r.compact_string("ClientId")?;
        let client_host = r.compact_string("ClientHost")?;
        let rebalance_timeout_ms = r.i32("RebalanceTimeoutMs")?;
        let topology_epoch = r.i32("TopologyEpoch")?;
        let process_id = r.compact_string("ProcessId")?;
        let user_endpoint = r.nullable_struct_with("UserEndpoint", |r| {
            let host = r.compact_string("Host")?;
            let port = r.u16("Port")?;
            r.skip_tagged_fields()?;
            Ok(UserEndpoint { host, port })
        })?;
        let client_tags = r
            .compact_array("ClientTags", read_key_value)?
            .into_iter()
            .collect();
        r.skip_tagged_fields()?;
        Ok(MemberMetadataValue {
            instance_id,
            rack_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            topology_epoch,
            process_id,
            user_endpoint,
            client_tags,
        })
    })
}

// ---------------------------------------------------------------------------------------------
// 20 StreamsGroupTargetAssignmentMetadataValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_target_assignment_metadata(v: &TargetAssignmentMetadataValue) -> Encoded {
    encode_assignment_metadata(TARGET_ASSIGNMENT_METADATA, v)
}

/// Records 6 and 20 share this layout: `AssignmentEpoch`, tag 0 `AssignmentTimestamp`.
pub(crate) fn encode_assignment_metadata(
    record: &'static str,
    v: &TargetAssignmentMetadataValue,
) -> Encoded {
    encode_value(record, |w| {
        w.i32(v.assignment_epoch);
        let mut tags = Vec::new();
        if v.assignment_timestamp != DEFAULT_ASSIGNMENT_TIMESTAMP {
            tags.push(tagged(w, 0, |t| {
                t.i64(v.assignment_timestamp);
                Ok(())
            })?);
        }
        w.tagged_fields_with(tags, &[])
    })
}

pub(crate) fn decode_target_assignment_metadata(
    bytes: &[u8],
) -> Result<TargetAssignmentMetadataValue, RecordCodecError> {
    decode_assignment_metadata(bytes, TARGET_ASSIGNMENT_METADATA)
}

/// See [`encode_assignment_metadata`].
pub(crate) fn decode_assignment_metadata(
    bytes: &[u8],
    record: &'static str,
) -> Result<TargetAssignmentMetadataValue, RecordCodecError> {
    decode_value(bytes, record, |r| {
        let assignment_epoch = r.i32("AssignmentEpoch")?;
        let mut assignment_timestamp = DEFAULT_ASSIGNMENT_TIMESTAMP;
        r.tagged_fields_with(|tag, t| match tag {
            0 => {
                assignment_timestamp = t.i64("AssignmentTimestamp")?;
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok(TargetAssignmentMetadataValue {
            assignment_epoch,
            assignment_timestamp,
        })
    })
}

// ---------------------------------------------------------------------------------------------
// TaskIds, shared by 21 and 22
// ---------------------------------------------------------------------------------------------

/// One `TaskIds` entry as read: the epochs only where tag 0 was present.
struct TaskIdsEntry {
    subtopology_id: String,
    partitions: Vec<i32>,
    assignment_epochs: Option<Vec<i32>>,
}

fn read_task_ids(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<TaskIdsEntry>, WireError> {
    r.compact_array(field, |r| {
        let subtopology_id = r.compact_string("SubtopologyId")?;
        let partitions = r.compact_array("Partitions", |r| r.i32(""))?;
        let mut assignment_epochs = None;
        r.tagged_fields_with(|tag, t| match tag {
            0 => {
                assignment_epochs = t.compact_nullable_array("AssignmentEpochs", |r| r.i32(""))?;
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok(TaskIdsEntry {
            subtopology_id,
            partitions,
            assignment_epochs,
        })
    })
}

pub(crate) fn write_i32s(
    w: &mut Writer,
    field: &'static str,
    values: impl ExactSizeIterator<Item = i32>,
) -> Result<(), WireError> {
    w.compact_array(field, values, |w, v| {
        w.i32(v);
        Ok(())
    })
}

fn write_task_set(w: &mut Writer, field: &'static str, tasks: &TaskSet) -> Result<(), WireError> {
    let subtopologies: Vec<_> = tasks.subtopologies().collect();
    w.compact_array(field, subtopologies, |w, (subtopology, partitions)| {
        w.compact_string("SubtopologyId", subtopology)?;
        write_i32s(w, "Partitions", partitions.iter().copied())?;
        w.no_tagged_fields();
        Ok(())
    })
}

/// Active tasks with tag 0 `AssignmentEpochs`, parallel to `Partitions`.
fn write_active_tasks(
    w: &mut Writer,
    field: &'static str,
    tasks: &ActiveTasks,
) -> Result<(), WireError> {
    let subtopologies: Vec<_> = tasks.subtopologies().collect();
    w.compact_array(field, subtopologies, |w, (subtopology, partitions)| {
        w.compact_string("SubtopologyId", subtopology)?;
        write_i32s(w, "Partitions", partitions.keys().copied())?;
        let epochs = tagged(w, 0, |t| {
            write_i32s(t, "AssignmentEpochs", partitions.values().copied())
        })?;
        w.tagged_fields_with(vec![epochs], &[])
    })
}

fn task_set(entries: Vec<TaskIdsEntry>) -> TaskSet {
    let mut out = TaskSet::new();
    for e in entries {
        for p in e.partitions {
            out.insert(&e.subtopology_id, p);
        }
    }
    out
}

/// Spec §6: epochs from `AssignmentEpochs`; if null or not parallel to `Partitions`, every
/// partition of the entry gets the record's `MemberEpoch`.
fn active_tasks(entries: Vec<TaskIdsEntry>, member_epoch: i32) -> ActiveTasks {
    let mut out = ActiveTasks::new();
    for e in entries {
        match e.assignment_epochs {
            Some(epochs) if epochs.len() == e.partitions.len() => {
                for (p, epoch) in e.partitions.into_iter().zip(epochs) {
                    out.insert(&e.subtopology_id, p, epoch);
                }
            }
            _ => {
                for p in e.partitions {
                    out.insert(&e.subtopology_id, p, member_epoch);
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// 21 StreamsGroupTargetAssignmentMemberValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_target_assignment_member(v: &TasksTuple) -> Encoded {
    encode_value(TARGET_ASSIGNMENT_MEMBER, |w| {
        write_task_set(w, "ActiveTasks", &v.active)?;
        write_task_set(w, "StandbyTasks", &v.standby)?;
        write_task_set(w, "WarmupTasks", &v.warmup)?;
        w.no_tagged_fields();
        Ok(())
    })
}

pub(crate) fn decode_target_assignment_member(
    bytes: &[u8],
) -> Result<TasksTuple, RecordCodecError> {
    decode_value(bytes, TARGET_ASSIGNMENT_MEMBER, |r| {
        let active = task_set(read_task_ids(r, "ActiveTasks")?);
        let standby = task_set(read_task_ids(r, "StandbyTasks")?);
        let warmup = task_set(read_task_ids(r, "WarmupTasks")?);
        r.skip_tagged_fields()?;
        Ok(TasksTuple {
            active,
            standby,
            warmup,
        })
    })
}

// ---------------------------------------------------------------------------------------------
// 22 StreamsGroupCurrentMemberAssignmentValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_current_member_assignment(v: &CurrentMemberAssignmentValue) -> Encoded {
    encode_value(CURRENT_MEMBER_ASSIGNMENT, |w| {
        w.i32(v.member_epoch);
        w.i32(v.previous_member_epoch);
        w.i8(v.state.value());
        let (assigned, pending) = (&v.assigned, &v.pending_revocation);
        write_active_tasks(w, "ActiveTasks", &assigned.active)?;
        write_task_set(w, "StandbyTasks", &assigned.standby)?;
        write_task_set(w, "WarmupTasks", &assigned.warmup)?;
        write_active_tasks(w, "ActiveTasksPendingRevocation", &pending.active)?;
        write_task_set(w, "StandbyTasksPendingRevocation", &pending.standby)?;
        write_task_set(w, "WarmupTasksPendingRevocation", &pending.warmup)?;
        w.no_tagged_fields();
        Ok(())
    })
}

pub(crate) fn decode_current_member_assignment(
    bytes: &[u8],
) -> Result<CurrentMemberAssignmentValue, RecordCodecError> {
    decode_value(bytes, CURRENT_MEMBER_ASSIGNMENT, |r| {
        let member_epoch = r.i32("MemberEpoch")?;
        let previous_member_epoch = r.i32("PreviousMemberEpoch")?;
        let state = MemberState::from_value(r.i8("State")?);
        let active = active_tasks(read_task_ids(r, "ActiveTasks")?, member_epoch);
        let standby = task_set(read_task_ids(r, "StandbyTasks")?);
        let warmup = task_set(read_task_ids(r, "WarmupTasks")?);
        let pending_active = active_tasks(
            read_task_ids(r, "ActiveTasksPendingRevocation")?,
            member_epoch,
        );
        let pending_standby = task_set(read_task_ids(r, "StandbyTasksPendingRevocation")?);
        let pending_warmup = task_set(read_task_ids(r, "WarmupTasksPendingRevocation")?);
        r.skip_tagged_fields()?;
        Ok(CurrentMemberAssignmentValue {
            member_epoch,
            previous_member_epoch,
            state,
            assigned: TasksWithEpochs {
                active,
                standby,
                warmup,
            },
            pending_revocation: TasksWithEpochs {
                active: pending_active,
                standby: pending_standby,
                warmup: pending_warmup,
            },
        })
    })
}

// ---------------------------------------------------------------------------------------------
// 23 StreamsGroupTopologyValue
// ---------------------------------------------------------------------------------------------

fn write_topic_infos(
    w: &mut Writer,
    field: &'static str,
    topics: &[TopicInfo],
) -> Result<(), WireError> {
    w.compact_array(field, topics, |w, t| {
        w.compact_string("Name", &t.name)?;
        w.i32(t.partitions);
        w.i16(t.replication_factor);
        w.compact_array("TopicConfigs", &t.topic_configs, |w, kv| {
            w.compact_string("Key", &kv.key)?;
            w.compact_string("Value", &kv.value)?;
            w.no_tagged_fields();
            Ok(())
        })?;
        w.no_tagged_fields();
        Ok(())
    })
}

fn read_topic_infos(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<TopicInfo>, WireError> {
    r.compact_array(field, |r| {
        let name = r.compact_string("Name")?;
        let partitions = r.i32("Partitions")?;
        let replication_factor = r.i16("ReplicationFactor")?;
        let topic_configs = r.compact_array("TopicConfigs", |r| {
            let (key, value) = read_key_value(r)?;
            Ok(KeyValue { key, value })
        })?;
        r.skip_tagged_fields()?;
        Ok(TopicInfo {
            name,
            partitions,
            replication_factor,
            topic_configs,
        })
    })
}

fn read_strings(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<String>, WireError> {
    r.compact_array(field, |r| r.compact_string(""))
}

fn read_i16s(r: &mut Reader<'_>, field: &'static str) -> Result<Vec<i16>, WireError> {
    r.compact_array(field, |r| r.i16(""))
}

fn write_i16s(w: &mut Writer, field: &'static str, values: &[i16]) -> Result<(), WireError> {
    w.compact_array(field, values, |w, v| {
        w.i16(*v);
        Ok(())
    })
}

pub(crate) fn encode_topology(v: &StreamsTopology) -> Encoded {
    encode_value(TOPOLOGY, |w| {
        w.i32(v.epoch);
        w.compact_array("Subtopologies", &v.subtopologies, |w, s| {
            w.compact_string("SubtopologyId", &s.subtopology_id)?;
            w.compact_strings("SourceTopics", &s.source_topics)?;
            w.compact_strings("SourceTopicRegex", &s.source_topic_regex)?;
            write_topic_infos(w, "StateChangelogTopics", &s.state_changelog_topics)?;
            w.compact_strings("RepartitionSinkTopics", &s.repartition_sink_topics)?;
            write_topic_infos(w, "RepartitionSourceTopics", &s.repartition_source_topics)?;
            w.compact_array("CopartitionGroups", &s.copartition_groups, |w, g| {
                write_i16s(w, "SourceTopics", &g.source_topics)?;
                write_i16s(w, "SourceTopicRegex", &g.source_topic_regex)?;
                write_i16s(w, "RepartitionSourceTopics", &g.repartition_source_topics)?;
                w.no_tagged_fields();
                Ok(())
            })?;
            w.no_tagged_fields();
            Ok(())
        })?;
        w.no_tagged_fields();
        Ok(())
    })
}

pub(crate) fn decode_topology(bytes: &[u8]) -> Result<StreamsTopology, RecordCodecError> {
    decode_value(bytes, TOPOLOGY, |r| {
        let epoch = r.i32("Epoch")?;
        let subtopologies = r.compact_array("Subtopologies", |r| {
            let subtopology_id = r.compact_string("SubtopologyId")?;
            let source_topics = read_strings(r, "SourceTopics")?;
            let source_topic_regex = read_strings(r, "SourceTopicRegex")?;
            let state_changelog_topics = read_topic_infos(r, "StateChangelogTopics")?;
            let repartition_sink_topics = read_strings(r, "RepartitionSinkTopics")?;
            let repartition_source_topics = read_topic_infos(r, "RepartitionSourceTopics")?;
            let copartition_groups = r.compact_array("CopartitionGroups", |r| {
                let source_topics = read_i16s(r, "SourceTopics")?;
                let source_topic_regex = read_i16s(r, "SourceTopicRegex")?;
                let repartition_source_topics = read_i16s(r, "RepartitionSourceTopics")?;
                r.skip_tagged_fields()?;
                Ok(CopartitionGroup {
                    source_topics,
                    source_topic_regex,
                    repartition_source_topics,
                })
            })?;
            r.skip_tagged_fields()?;
            Ok(Subtopology {
                subtopology_id,
                source_topics,
                source_topic_regex,
                state_changelog_topics,
                repartition_sink_topics,
                repartition_source_topics,
                copartition_groups,
            })
        })?;
        r.skip_tagged_fields()?;
        Ok(StreamsTopology {
            epoch,
            subtopologies,
        })
    })
}
