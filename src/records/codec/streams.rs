//! Values of the streams group records 17 and 19-23 (spec §6): version 0, flexible.

use std::collections::BTreeMap;

use super::RecordCodecError;
use super::wire::{Reader, Writer};
use crate::records::{
    CurrentMemberAssignmentValue, GroupMetadataValue, MemberMetadataValue, MemberState,
    TargetAssignmentMetadataValue, UserEndpoint,
};
use crate::topology::{CopartitionGroup, KeyValue, StreamsTopology, Subtopology, TopicInfo};
use crate::types::{ActiveTasks, TaskSet, TasksTuple, TasksWithEpochs};

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

fn writer(record: &'static str) -> Writer {
    let mut w = Writer::new(record);
    w.i16(VALUE_VERSION);
    w
}

/// Reads the value version, which must be 0.
fn reader<'a>(bytes: &'a [u8], record: &'static str) -> Result<Reader<'a>, RecordCodecError> {
    let mut r = Reader::new(bytes, record);
    match r.i16("version")? {
        VALUE_VERSION => Ok(r),
        version => Err(RecordCodecError::UnsupportedVersion { record, version }),
    }
}

fn tagged_i32(record: &'static str, v: i32) -> Writer {
    let mut w = Writer::new(record);
    w.i32(v);
    w
}

// ---------------------------------------------------------------------------------------------
// 17 StreamsGroupMetadataValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_group_metadata(v: &GroupMetadataValue) -> Writer {
    let mut w = writer(GROUP_METADATA);
    w.i32(v.epoch);
    w.i64(v.metadata_hash);
    let mut tags = Vec::new();
    if v.validated_topology_epoch != DEFAULT_EPOCH {
        tags.push((0, tagged_i32(GROUP_METADATA, v.validated_topology_epoch)));
    }
    // Nullable with a null default, but Kafka's coordinator always sets it (possibly empty),
    // so it is always written.
    let mut configs = Writer::new(GROUP_METADATA);
    write_key_values(
        &mut configs,
        "LastAssignmentConfigs",
        &v.last_assignment_configs,
    );
    tags.push((1, configs));
    if v.stored_description_topology_epoch != DEFAULT_EPOCH {
        tags.push((
            2,
            tagged_i32(GROUP_METADATA, v.stored_description_topology_epoch),
        ));
    }
    if v.failed_description_topology_epoch != DEFAULT_EPOCH {
        tags.push((
            3,
            tagged_i32(GROUP_METADATA, v.failed_description_topology_epoch),
        ));
    }
    w.tagged_fields(tags);
    w
}

pub(crate) fn decode_group_metadata(bytes: &[u8]) -> Result<GroupMetadataValue, RecordCodecError> {
    let mut r = reader(bytes, GROUP_METADATA)?;
    let mut v = GroupMetadataValue {
        epoch: r.i32("Epoch")?,
        metadata_hash: r.i64("MetadataHash")?,
        ..GroupMetadataValue::default()
    };
    r.tagged_fields("tagged fields", |tag, t| {
        match tag {
            0 => v.validated_topology_epoch = t.i32("ValidatedTopologyEpoch")?,
            1 => {
                v.last_assignment_configs =
                    read_key_values(t, "LastAssignmentConfigs", true)?.unwrap_or_default()
            }
            2 => v.stored_description_topology_epoch = t.i32("StoredDescriptionTopologyEpoch")?,
            3 => v.failed_description_topology_epoch = t.i32("FailedDescriptionTopologyEpoch")?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    r.finish("value")?;
    Ok(v)
}

/// `[]{Key, Value}` from a sorted map, each entry with an empty tagged-fields section.
fn write_key_values(w: &mut Writer, field: &'static str, map: &BTreeMap<String, String>) {
    w.compact_array_len(field, map.len());
    for (k, v) in map {
        w.compact_string(field, k);
        w.compact_string(field, v);
        w.no_tagged_fields();
    }
}

/// `[]{Key, Value}` into a map (a repeated key keeps the last value); `None` when null and
/// `nullable`.
fn read_key_values(
    r: &mut Reader<'_>,
    field: &'static str,
    nullable: bool,
) -> Result<Option<BTreeMap<String, String>>, RecordCodecError> {
    let Some(count) = r.compact_nullable_array_len(field, 3)? else {
        return if nullable {
            Ok(None)
        } else {
            Err(r.invalid(field, "null for a non-nullable array"))
        };
    };
    let mut out = BTreeMap::new();
    for _ in 0..count {
        let k = r.compact_string(field)?;
        let v = r.compact_string(field)?;
        r.skip_tagged_fields(field)?;
        out.insert(k, v);
    }
    Ok(Some(out))
}

// ---------------------------------------------------------------------------------------------
// 19 StreamsGroupMemberMetadataValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_member_metadata(v: &MemberMetadataValue) -> Writer {
    let mut w = writer(MEMBER_METADATA);
    w.compact_nullable_string("InstanceId", v.instance_id.as_deref());
    w.compact_nullable_string("RackId", v.rack_id.as_deref());
    w.compact_string("ClientId", &v.client_id);
    w.compact_string("ClientHost", &v.client_host);
    w.i32(v.rebalance_timeout_ms);
    w.i32(v.topology_epoch);
    w.compact_string("ProcessId", &v.process_id);
    match &v.user_endpoint {
        // A nullable struct: presence byte -1 (null) or 1, then the struct.
        None => w.i8(-1),
        Some(e) => {
            w.i8(1);
            w.compact_string("UserEndpoint.Host", &e.host);
            w.u16(e.port);
            w.no_tagged_fields();
        }
    }
    write_key_values(&mut w, "ClientTags", &v.client_tags);
    w.no_tagged_fields();
    w
}

pub(crate) fn decode_member_metadata(
    bytes: &[u8],
) -> Result<MemberMetadataValue, RecordCodecError> {
    let mut r = reader(bytes, MEMBER_METADATA)?;
    let instance_id = r.compact_nullable_string("InstanceId")?;
    let rack_id = r.compact_nullable_string("RackId")?;
    let client_id = r.compact_string("ClientId")?;
    let client_host = r.compact_string("ClientHost")?;
    let rebalance_timeout_ms = r.i32("RebalanceTimeoutMs")?;
    let topology_epoch = r.i32("TopologyEpoch")?;
    let process_id = r.compact_string("ProcessId")?;
    // Kafka reads any negative presence byte as null.
    let user_endpoint = if r.i8("UserEndpoint")? < 0 {
        None
    } else {
        let host = r.compact_string("UserEndpoint.Host")?;
        let port = r.u16("UserEndpoint.Port")?;
        r.skip_tagged_fields("UserEndpoint tagged fields")?;
        Some(UserEndpoint { host, port })
    };
    let client_tags = read_key_values(&mut r, "ClientTags", false)?.unwrap_or_default();
    r.skip_tagged_fields("tagged fields")?;
    r.finish("value")?;
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
}

// ---------------------------------------------------------------------------------------------
// 20 StreamsGroupTargetAssignmentMetadataValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_target_assignment_metadata(v: &TargetAssignmentMetadataValue) -> Writer {
    let mut w = writer(TARGET_ASSIGNMENT_METADATA);
    w.i32(v.assignment_epoch);
    let mut tags = Vec::new();
    if v.assignment_timestamp != DEFAULT_ASSIGNMENT_TIMESTAMP {
        let mut t = Writer::new(TARGET_ASSIGNMENT_METADATA);
        t.i64(v.assignment_timestamp);
        tags.push((0, t));
    }
    w.tagged_fields(tags);
    w
}

pub(crate) fn decode_target_assignment_metadata(
    bytes: &[u8],
) -> Result<TargetAssignmentMetadataValue, RecordCodecError> {
    let mut r = reader(bytes, TARGET_ASSIGNMENT_METADATA)?;
    let assignment_epoch = r.i32("AssignmentEpoch")?;
    let mut assignment_timestamp = DEFAULT_ASSIGNMENT_TIMESTAMP;
    r.tagged_fields("tagged fields", |tag, t| match tag {
        0 => {
            assignment_timestamp = t.i64("AssignmentTimestamp")?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    r.finish("value")?;
    Ok(TargetAssignmentMetadataValue {
        assignment_epoch,
        assignment_timestamp,
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

/// `SubtopologyId` (1) + `Partitions` (1) + tagged fields (1).
const MIN_TASK_IDS_LEN: usize = 3;

fn read_task_ids(
    r: &mut Reader<'_>,
    field: &'static str,
) -> Result<Vec<TaskIdsEntry>, RecordCodecError> {
    r.compact_array(field, MIN_TASK_IDS_LEN, |r| {
        let subtopology_id = r.compact_string(field)?;
        let partitions = r.compact_i32_array(field)?;
        let mut assignment_epochs = None;
        r.tagged_fields(field, |tag, t| match tag {
            0 => {
                assignment_epochs = t.compact_nullable_i32_array(field)?;
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

fn write_task_set(w: &mut Writer, field: &'static str, tasks: &TaskSet) {
    let subtopologies: Vec<_> = tasks.subtopologies().collect();
    w.compact_array_len(field, subtopologies.len());
    for (subtopology, partitions) in subtopologies {
        w.compact_string(field, subtopology);
        w.compact_i32_array(field, partitions.iter().copied());
        w.no_tagged_fields();
    }
}

/// Active tasks with tag 0 `AssignmentEpochs`, parallel to `Partitions`.
fn write_active_tasks(w: &mut Writer, field: &'static str, tasks: &ActiveTasks) {
    let subtopologies: Vec<_> = tasks.subtopologies().collect();
    w.compact_array_len(field, subtopologies.len());
    for (subtopology, partitions) in subtopologies {
        w.compact_string(field, subtopology);
        w.compact_i32_array(field, partitions.keys().copied());
        let mut epochs = Writer::new(CURRENT_MEMBER_ASSIGNMENT);
        epochs.compact_i32_array(field, partitions.values().copied());
        w.tagged_fields(vec![(0, epochs)]);
    }
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

pub(crate) fn encode_target_assignment_member(v: &TasksTuple) -> Writer {
    let mut w = writer(TARGET_ASSIGNMENT_MEMBER);
    write_task_set(&mut w, "ActiveTasks", &v.active);
    write_task_set(&mut w, "StandbyTasks", &v.standby);
    write_task_set(&mut w, "WarmupTasks", &v.warmup);
    w.no_tagged_fields();
    w
}

pub(crate) fn decode_target_assignment_member(
    bytes: &[u8],
) -> Result<TasksTuple, RecordCodecError> {
    let mut r = reader(bytes, TARGET_ASSIGNMENT_MEMBER)?;
    let active = task_set(read_task_ids(&mut r, "ActiveTasks")?);
    let standby = task_set(read_task_ids(&mut r, "StandbyTasks")?);
    let warmup = task_set(read_task_ids(&mut r, "WarmupTasks")?);
    r.skip_tagged_fields("tagged fields")?;
    r.finish("value")?;
    Ok(TasksTuple {
        active,
        standby,
        warmup,
    })
}

// ---------------------------------------------------------------------------------------------
// 22 StreamsGroupCurrentMemberAssignmentValue
// ---------------------------------------------------------------------------------------------

pub(crate) fn encode_current_member_assignment(v: &CurrentMemberAssignmentValue) -> Writer {
    let mut w = writer(CURRENT_MEMBER_ASSIGNMENT);
    w.i32(v.member_epoch);
    w.i32(v.previous_member_epoch);
    w.i8(v.state.value());
    write_active_tasks(&mut w, "ActiveTasks", &v.assigned.active);
    write_task_set(&mut w, "StandbyTasks", &v.assigned.standby);
    write_task_set(&mut w, "WarmupTasks", &v.assigned.warmup);
    write_active_tasks(
        &mut w,
        "ActiveTasksPendingRevocation",
        &v.pending_revocation.active,
    );
    write_task_set(
        &mut w,
        "StandbyTasksPendingRevocation",
        &v.pending_revocation.standby,
    );
    write_task_set(
        &mut w,
        "WarmupTasksPendingRevocation",
        &v.pending_revocation.warmup,
    );
    w.no_tagged_fields();
    w
}

pub(crate) fn decode_current_member_assignment(
    bytes: &[u8],
) -> Result<CurrentMemberAssignmentValue, RecordCodecError> {
    let mut r = reader(bytes, CURRENT_MEMBER_ASSIGNMENT)?;
    let member_epoch = r.i32("MemberEpoch")?;
    let previous_member_epoch = r.i32("PreviousMemberEpoch")?;
    let state = MemberState::from_value(r.i8("State")?);
    let active = active_tasks(read_task_ids(&mut r, "ActiveTasks")?, member_epoch);
    let standby = task_set(read_task_ids(&mut r, "StandbyTasks")?);
    let warmup = task_set(read_task_ids(&mut r, "WarmupTasks")?);
    let pending_active = active_tasks(
        read_task_ids(&mut r, "ActiveTasksPendingRevocation")?,
        member_epoch,
    );
    let pending_standby = task_set(read_task_ids(&mut r, "StandbyTasksPendingRevocation")?);
    let pending_warmup = task_set(read_task_ids(&mut r, "WarmupTasksPendingRevocation")?);
    r.skip_tagged_fields("tagged fields")?;
    r.finish("value")?;
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
}

// ---------------------------------------------------------------------------------------------
// 23 StreamsGroupTopologyValue
// ---------------------------------------------------------------------------------------------

fn write_topic_infos(w: &mut Writer, field: &'static str, topics: &[TopicInfo]) {
    w.compact_array_len(field, topics.len());
    for t in topics {
        w.compact_string(field, &t.name);
        w.i32(t.partitions);
        w.i16(t.replication_factor);
        w.compact_array_len(field, t.topic_configs.len());
        for kv in &t.topic_configs {
            w.compact_string(field, &kv.key);
            w.compact_string(field, &kv.value);
            w.no_tagged_fields();
        }
        w.no_tagged_fields();
    }
}

/// `Name` (1) + `Partitions` (4) + `ReplicationFactor` (2) + `TopicConfigs` (1) + tags (1).
const MIN_TOPIC_INFO_LEN: usize = 9;

fn read_topic_infos(
    r: &mut Reader<'_>,
    field: &'static str,
) -> Result<Vec<TopicInfo>, RecordCodecError> {
    r.compact_array(field, MIN_TOPIC_INFO_LEN, |r| {
        let name = r.compact_string(field)?;
        let partitions = r.i32(field)?;
        let replication_factor = r.i16(field)?;
        let topic_configs = r.compact_array(field, 3, |r| {
            let key = r.compact_string(field)?;
            let value = r.compact_string(field)?;
            r.skip_tagged_fields(field)?;
            Ok(KeyValue { key, value })
        })?;
        r.skip_tagged_fields(field)?;
        Ok(TopicInfo {
            name,
            partitions,
            replication_factor,
            topic_configs,
        })
    })
}

pub(crate) fn encode_topology(v: &StreamsTopology) -> Writer {
    let mut w = writer(TOPOLOGY);
    w.i32(v.epoch);
    w.compact_array_len("Subtopologies", v.subtopologies.len());
    for s in &v.subtopologies {
        w.compact_string("Subtopologies.SubtopologyId", &s.subtopology_id);
        w.compact_string_array("Subtopologies.SourceTopics", &s.source_topics);
        w.compact_string_array("Subtopologies.SourceTopicRegex", &s.source_topic_regex);
        write_topic_infos(
            &mut w,
            "Subtopologies.StateChangelogTopics",
            &s.state_changelog_topics,
        );
        w.compact_string_array(
            "Subtopologies.RepartitionSinkTopics",
            &s.repartition_sink_topics,
        );
        write_topic_infos(
            &mut w,
            "Subtopologies.RepartitionSourceTopics",
            &s.repartition_source_topics,
        );
        w.compact_array_len(
            "Subtopologies.CopartitionGroups",
            s.copartition_groups.len(),
        );
        for g in &s.copartition_groups {
            w.compact_i16_array("CopartitionGroups.SourceTopics", &g.source_topics);
            w.compact_i16_array("CopartitionGroups.SourceTopicRegex", &g.source_topic_regex);
            w.compact_i16_array(
                "CopartitionGroups.RepartitionSourceTopics",
                &g.repartition_source_topics,
            );
            w.no_tagged_fields();
        }
        w.no_tagged_fields();
    }
    w.no_tagged_fields();
    w
}

/// `SubtopologyId` + six arrays + tags, one byte each at least.
const MIN_SUBTOPOLOGY_LEN: usize = 8;

pub(crate) fn decode_topology(bytes: &[u8]) -> Result<StreamsTopology, RecordCodecError> {
    let mut r = reader(bytes, TOPOLOGY)?;
    let epoch = r.i32("Epoch")?;
    let subtopologies = r.compact_array("Subtopologies", MIN_SUBTOPOLOGY_LEN, |r| {
        let subtopology_id = r.compact_string("Subtopologies.SubtopologyId")?;
        let source_topics = r.compact_string_array("Subtopologies.SourceTopics")?;
        let source_topic_regex = r.compact_string_array("Subtopologies.SourceTopicRegex")?;
        let state_changelog_topics = read_topic_infos(r, "Subtopologies.StateChangelogTopics")?;
        let repartition_sink_topics =
            r.compact_string_array("Subtopologies.RepartitionSinkTopics")?;
        let repartition_source_topics =
            read_topic_infos(r, "Subtopologies.RepartitionSourceTopics")?;
        let copartition_groups = r.compact_array("Subtopologies.CopartitionGroups", 4, |r| {
            let source_topics = r.compact_i16_array("CopartitionGroups.SourceTopics")?;
            let source_topic_regex = r.compact_i16_array("CopartitionGroups.SourceTopicRegex")?;
            let repartition_source_topics =
                r.compact_i16_array("CopartitionGroups.RepartitionSourceTopics")?;
            r.skip_tagged_fields("CopartitionGroups tagged fields")?;
            Ok(CopartitionGroup {
                source_topics,
                source_topic_regex,
                repartition_source_topics,
            })
        })?;
        r.skip_tagged_fields("Subtopologies tagged fields")?;
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
    r.skip_tagged_fields("tagged fields")?;
    r.finish("value")?;
    Ok(StreamsTopology {
        epoch,
        subtopologies,
    })
}
