//! StreamsGroupHeartbeat (API key 88), request and response, versions 0-1 (spec §1.1, §1.2).
//!
//! Field order follows `StreamsGroupHeartbeatRequest.json` / `StreamsGroupHeartbeatResponse.json`.
//! The request is identical at v0 and v1. The response differs: `AcceptableRecoveryLagLegacy`
//! (int32) sits after `HeartbeatIntervalMs` at v0 only; `AcceptableRecoveryLag` (int64, default
//! -1, ignorable) follows `TaskOffsetIntervalMs` and `TopologyDescriptionRequired` (bool) follows
//! `WarmupTasks`, both v1+, both regular (not tagged) fields.

use super::CodecError;
use crate::protocol::messages::{
    CopartitionGroup, EndpointToPartitions, Status, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse, Subtopology, TopicPartition, Topology,
};
use crate::wire::{Codec, Reader, Writer};

fn write_i16s(w: &mut Writer, name: &'static str, items: &[i16]) -> Result<(), CodecError> {
    w.compact_array(name, items, |w, v| {
        w.i16(*v);
        Ok(())
    })
}

fn write_i32s(w: &mut Writer, name: &'static str, items: &[i32]) -> Result<(), CodecError> {
    w.compact_array(name, items, |w, v| {
        w.i32(*v);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

/// `CopartitionGroup { SourceTopics []int16, SourceTopicRegex []int16, RepartitionSourceTopics
/// []int16 }`.
impl Codec for CopartitionGroup {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        write_i16s(w, "SourceTopics", &self.source_topics)?;
        write_i16s(w, "SourceTopicRegex", &self.source_topic_regex)?;
        write_i16s(
            w,
            "RepartitionSourceTopics",
            &self.repartition_source_topics,
        )?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            source_topics: r.compact_array("SourceTopics", |r| r.i16(""))?,
            source_topic_regex: r.compact_array("SourceTopicRegex", |r| r.i16(""))?,
            repartition_source_topics: r.compact_array("RepartitionSourceTopics", |r| r.i16(""))?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// Heartbeat request `Subtopology`.
impl Codec for Subtopology {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_string("SubtopologyId", &self.subtopology_id)?;
        w.compact_strings("SourceTopics", &self.source_topics)?;
        w.compact_strings("SourceTopicRegex", &self.source_topic_regex)?;
        w.compact_structs(
            "StateChangelogTopics",
            &self.state_changelog_topics,
            version,
        )?;
        w.compact_strings("RepartitionSinkTopics", &self.repartition_sink_topics)?;
        w.compact_structs(
            "RepartitionSourceTopics",
            &self.repartition_source_topics,
            version,
        )?;
        w.compact_structs("CopartitionGroups", &self.copartition_groups, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.compact_string("SubtopologyId")?,
            source_topics: r.compact_array("SourceTopics", |r| r.compact_string(""))?,
            source_topic_regex: r.compact_array("SourceTopicRegex", |r| r.compact_string(""))?,
            state_changelog_topics: r.compact_structs("StateChangelogTopics", version)?,
            repartition_sink_topics: r
                .compact_array("RepartitionSinkTopics", |r| r.compact_string(""))?,
            repartition_source_topics: r.compact_structs("RepartitionSourceTopics", version)?,
            copartition_groups: r.compact_structs("CopartitionGroups", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// Heartbeat request `Topology { Epoch int32, Subtopologies []Subtopology }`.
impl Codec for Topology {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.i32(self.epoch);
        w.compact_structs("Subtopologies", &self.subtopologies, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            epoch: r.i32("Epoch")?,
            subtopologies: r.compact_structs("Subtopologies", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Codec for StreamsGroupHeartbeatRequest {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_string("GroupId", &self.group_id)?;
        w.compact_string("MemberId", &self.member_id)?;
        w.i32(self.member_epoch);
        w.i32(self.endpoint_information_epoch);
        w.compact_nullable_string("InstanceId", self.instance_id.as_deref())?;
        w.compact_nullable_string("RackId", self.rack_id.as_deref())?;
        w.i32(self.rebalance_timeout_ms);
        w.nullable_struct("Topology", self.topology.as_ref(), version)?;
        w.compact_nullable_structs("ActiveTasks", self.active_tasks.as_deref(), version)?;
        w.compact_nullable_structs("StandbyTasks", self.standby_tasks.as_deref(), version)?;
        w.compact_nullable_structs("WarmupTasks", self.warmup_tasks.as_deref(), version)?;
        w.compact_nullable_string("ProcessId", self.process_id.as_deref())?;
        w.nullable_struct("UserEndpoint", self.user_endpoint.as_ref(), version)?;
        w.compact_nullable_structs("ClientTags", self.client_tags.as_deref(), version)?;
        w.compact_nullable_structs("TaskOffsets", self.task_offsets.as_deref(), version)?;
        w.compact_nullable_structs("TaskEndOffsets", self.task_end_offsets.as_deref(), version)?;
        w.bool(self.shutdown_application);
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            group_id: r.compact_string("GroupId")?,
            member_id: r.compact_string("MemberId")?,
            member_epoch: r.i32("MemberEpoch")?,
            endpoint_information_epoch: r.i32("EndpointInformationEpoch")?,
            instance_id: r.compact_nullable_string("InstanceId")?,
            rack_id: r.compact_nullable_string("RackId")?,
            rebalance_timeout_ms: r.i32("RebalanceTimeoutMs")?,
            topology: r.nullable_struct("Topology", version)?,
            active_tasks: r.compact_nullable_structs("ActiveTasks", version)?,
            standby_tasks: r.compact_nullable_structs("StandbyTasks", version)?,
            warmup_tasks: r.compact_nullable_structs("WarmupTasks", version)?,
            process_id: r.compact_nullable_string("ProcessId")?,
            user_endpoint: r.nullable_struct("UserEndpoint", version)?,
            client_tags: r.compact_nullable_structs("ClientTags", version)?,
            task_offsets: r.compact_nullable_structs("TaskOffsets", version)?,
            task_end_offsets: r.compact_nullable_structs("TaskEndOffsets", version)?,
            shutdown_application: r.bool("ShutdownApplication")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/// `Status { StatusCode int8, StatusDetail string }`.
impl Codec for Status {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.i8(self.status_code);
        w.compact_string("StatusDetail", &self.status_detail)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            status_code: r.i8("StatusCode")?,
            status_detail: r.compact_string("StatusDetail")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `TopicPartition { Topic string, Partitions []int32 }`.
impl Codec for TopicPartition {
    fn encode(&self, w: &mut Writer, _version: i16) -> Result<(), CodecError> {
        w.compact_string("Topic", &self.topic)?;
        write_i32s(w, "Partitions", &self.partitions)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, _version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            topic: r.compact_string("Topic")?,
            partitions: r.compact_array("Partitions", |r| r.i32(""))?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `EndpointToPartitions { UserEndpoint Endpoint, ActivePartitions []TopicPartition,
/// StandbyPartitions []TopicPartition }`; `UserEndpoint` is a non-nullable struct (no marker).
impl Codec for EndpointToPartitions {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.struct_field("UserEndpoint", &self.user_endpoint, version)?;
        w.compact_structs("ActivePartitions", &self.active_partitions, version)?;
        w.compact_structs("StandbyPartitions", &self.standby_partitions, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            user_endpoint: r.struct_field("UserEndpoint", version)?,
            active_partitions: r.compact_structs("ActivePartitions", version)?,
            standby_partitions: r.compact_structs("StandbyPartitions", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Codec for StreamsGroupHeartbeatResponse {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.i32(self.throttle_time_ms);
        w.i16(self.error_code);
        w.compact_nullable_string("ErrorMessage", self.error_message.as_deref())?;
        w.compact_string("MemberId", &self.member_id)?;
        w.i32(self.member_epoch);
        w.i32(self.heartbeat_interval_ms);
        if version == 0 {
            w.i32(self.acceptable_recovery_lag_legacy);
        } else if self.acceptable_recovery_lag_legacy != 0 {
            return Err(w.not_in_version("AcceptableRecoveryLagLegacy", version));
        }
        w.i32(self.task_offset_interval_ms);
        // Ignorable: silently left out below v1.
        if version >= 1 {
            w.i64(self.acceptable_recovery_lag);
        }
        w.compact_nullable_structs("Status", self.status.as_deref(), version)?;
        w.compact_nullable_structs("ActiveTasks", self.active_tasks.as_deref(), version)?;
        w.compact_nullable_structs("StandbyTasks", self.standby_tasks.as_deref(), version)?;
        w.compact_nullable_structs("WarmupTasks", self.warmup_tasks.as_deref(), version)?;
        if version >= 1 {
            w.bool(self.topology_description_required);
        } else if self.topology_description_required {
            return Err(w.not_in_version("TopologyDescriptionRequired", version));
        }
        w.i32(self.endpoint_information_epoch);
        w.compact_nullable_structs(
            "PartitionsByUserEndpoint",
            self.partitions_by_user_endpoint.as_deref(),
            version,
        )?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        let defaults = Self::default();
        let throttle_time_ms = r.i32("ThrottleTimeMs")?;
        let error_code = r.i16("ErrorCode")?;
        let error_message = r.compact_nullable_string("ErrorMessage")?;
        let member_id = r.compact_string("MemberId")?;
        let member_epoch = r.i32("MemberEpoch")?;
        let heartbeat_interval_ms = r.i32("HeartbeatIntervalMs")?;
        let acceptable_recovery_lag_legacy = if version == 0 {
            r.i32("AcceptableRecoveryLagLegacy")?
        } else {
            defaults.acceptable_recovery_lag_legacy
        };
        let task_offset_interval_ms = r.i32("TaskOffsetIntervalMs")?;
        let acceptable_recovery_lag = if version >= 1 {
            r.i64("AcceptableRecoveryLag")?
        } else {
            defaults.acceptable_recovery_lag
        };
        let status = r.compact_nullable_structs("Status", version)?;
        let active_tasks = r.compact_nullable_structs("ActiveTasks", version)?;
        let standby_tasks = r.compact_nullable_structs("StandbyTasks", version)?;
        let warmup_tasks = r.compact_nullable_structs("WarmupTasks", version)?;
        let topology_description_required = if version >= 1 {
            r.bool("TopologyDescriptionRequired")?
        } else {
            defaults.topology_description_required
        };
        Ok(Self {
            throttle_time_ms,
            error_code,
            error_message,
            member_id,
            member_epoch,
            heartbeat_interval_ms,
            acceptable_recovery_lag_legacy,
            task_offset_interval_ms,
            acceptable_recovery_lag,
            status,
            active_tasks,
            standby_tasks,
            warmup_tasks,
            topology_description_required,
            endpoint_information_epoch: r.i32("EndpointInformationEpoch")?,
            partitions_by_user_endpoint: r
                .compact_nullable_structs("PartitionsByUserEndpoint", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}
