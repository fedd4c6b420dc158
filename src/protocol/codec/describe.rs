//! StreamsGroupDescribe (API key 89), request and response, versions 0-1 (spec §1.4).
//!
//! v1 adds the request's `IncludeTopologyDescription` (bool, after
//! `IncludeAuthorizedOperations`) and, after `AuthorizedOperations` in each `DescribedGroup`,
//! `TopologyDescription` (nullable struct), `TopologyDescriptionStatus` (int8) and `AssignorName`
//! (nullable string, ignorable). All are regular (not tagged) fields.

use super::CodecError;
use super::topology_description;
use crate::protocol::messages::{
    Assignment, DescribedGroup, DescribedMember, DescribedSubtopology, DescribedTopology,
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
};
use crate::wire::{Codec, Reader, Writer};

impl Codec for StreamsGroupDescribeRequest {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_strings("GroupIds", &self.group_ids)?;
        w.bool(self.include_authorized_operations);
        if version >= 1 {
            w.bool(self.include_topology_description);
        } else if self.include_topology_description {
            return Err(w.not_in_version("IncludeTopologyDescription", version));
        }
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            group_ids: r.compact_array("GroupIds", |r| r.compact_string(""))?,
            include_authorized_operations: r.bool("IncludeAuthorizedOperations")?,
            include_topology_description: if version >= 1 {
                r.bool("IncludeTopologyDescription")?
            } else {
                false
            },
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `Subtopology { SubtopologyId string, SourceTopics []string, RepartitionSinkTopics []string,
/// StateChangelogTopics []TopicInfo, RepartitionSourceTopics []TopicInfo }`.
impl Codec for DescribedSubtopology {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_string("SubtopologyId", &self.subtopology_id)?;
        w.compact_strings("SourceTopics", &self.source_topics)?;
        w.compact_strings("RepartitionSinkTopics", &self.repartition_sink_topics)?;
        w.compact_structs(
            "StateChangelogTopics",
            &self.state_changelog_topics,
            version,
        )?;
        w.compact_structs(
            "RepartitionSourceTopics",
            &self.repartition_source_topics,
            version,
        )?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            subtopology_id: r.compact_string("SubtopologyId")?,
            source_topics: r.compact_array("SourceTopics", |r| r.compact_string(""))?,
            repartition_sink_topics: r
                .compact_array("RepartitionSinkTopics", |r| r.compact_string(""))?,
            state_changelog_topics: r.compact_structs("StateChangelogTopics", version)?,
            repartition_source_topics: r.compact_structs("RepartitionSourceTopics", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `Topology { Epoch int32, Subtopologies []Subtopology (nullable) }`.
impl Codec for DescribedTopology {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.i32(self.epoch);
        w.compact_nullable_structs("Subtopologies", self.subtopologies.as_deref(), version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            epoch: r.i32("Epoch")?,
            subtopologies: r.compact_nullable_structs("Subtopologies", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `Assignment { ActiveTasks []TaskIds, StandbyTasks []TaskIds, WarmupTasks []TaskIds }`.
impl Codec for Assignment {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_structs("ActiveTasks", &self.active_tasks, version)?;
        w.compact_structs("StandbyTasks", &self.standby_tasks, version)?;
        w.compact_structs("WarmupTasks", &self.warmup_tasks, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            active_tasks: r.compact_structs("ActiveTasks", version)?,
            standby_tasks: r.compact_structs("StandbyTasks", version)?,
            warmup_tasks: r.compact_structs("WarmupTasks", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

/// `Member`; `Assignment` and `TargetAssignment` are non-nullable structs (no marker).
impl Codec for DescribedMember {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.compact_string("MemberId", &self.member_id)?;
        w.i32(self.member_epoch);
        w.compact_nullable_string("InstanceId", self.instance_id.as_deref())?;
        w.compact_nullable_string("RackId", self.rack_id.as_deref())?;
        w.compact_string("ClientId", &self.client_id)?;
        w.compact_string("ClientHost", &self.client_host)?;
        w.i32(self.topology_epoch);
        w.compact_string("ProcessId", &self.process_id)?;
        w.nullable_struct("UserEndpoint", self.user_endpoint.as_ref(), version)?;
        w.compact_structs("ClientTags", &self.client_tags, version)?;
        w.compact_structs("TaskOffsets", &self.task_offsets, version)?;
        w.compact_structs("TaskEndOffsets", &self.task_end_offsets, version)?;
        w.struct_field("Assignment", &self.assignment, version)?;
        w.struct_field("TargetAssignment", &self.target_assignment, version)?;
        w.bool(self.is_classic);
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            member_id: r.compact_string("MemberId")?,
            member_epoch: r.i32("MemberEpoch")?,
            instance_id: r.compact_nullable_string("InstanceId")?,
            rack_id: r.compact_nullable_string("RackId")?,
            client_id: r.compact_string("ClientId")?,
            client_host: r.compact_string("ClientHost")?,
            topology_epoch: r.i32("TopologyEpoch")?,
            process_id: r.compact_string("ProcessId")?,
            user_endpoint: r.nullable_struct("UserEndpoint", version)?,
            client_tags: r.compact_structs("ClientTags", version)?,
            task_offsets: r.compact_structs("TaskOffsets", version)?,
            task_end_offsets: r.compact_structs("TaskEndOffsets", version)?,
            assignment: r.struct_field("Assignment", version)?,
            target_assignment: r.struct_field("TargetAssignment", version)?,
            is_classic: r.bool("IsClassic")?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Codec for DescribedGroup {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.i16(self.error_code);
        w.compact_nullable_string("ErrorMessage", self.error_message.as_deref())?;
        w.compact_string("GroupId", &self.group_id)?;
        w.compact_string("GroupState", &self.group_state)?;
        w.i32(self.group_epoch);
        w.i32(self.assignment_epoch);
        w.nullable_struct("Topology", self.topology.as_ref(), version)?;
        w.compact_structs("Members", &self.members, version)?;
        w.i32(self.authorized_operations);
        if version >= 1 {
            w.nullable_struct_with(
                "TopologyDescription",
                self.topology_description.as_ref(),
                topology_description::write_raw,
            )?;
            w.i8(self.topology_description_status);
            // Ignorable: silently left out below v1.
            w.compact_nullable_string("AssignorName", self.assignor_name.as_deref())?;
        } else if self.topology_description.is_some() {
            return Err(w.not_in_version("TopologyDescription", version));
        } else if self.topology_description_status != 0 {
            return Err(w.not_in_version("TopologyDescriptionStatus", version));
        }
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        let defaults = Self::default();
        let error_code = r.i16("ErrorCode")?;
        let error_message = r.compact_nullable_string("ErrorMessage")?;
        let group_id = r.compact_string("GroupId")?;
        let group_state = r.compact_string("GroupState")?;
        let group_epoch = r.i32("GroupEpoch")?;
        let assignment_epoch = r.i32("AssignmentEpoch")?;
        let topology = r.nullable_struct("Topology", version)?;
        let members = r.compact_structs("Members", version)?;
        let authorized_operations = r.i32("AuthorizedOperations")?;
        let (topology_description, topology_description_status, assignor_name) = if version >= 1 {
            (
                r.nullable_struct_with("TopologyDescription", topology_description::read_raw)?,
                r.i8("TopologyDescriptionStatus")?,
                r.compact_nullable_string("AssignorName")?,
            )
        } else {
            (
                defaults.topology_description,
                defaults.topology_description_status,
                defaults.assignor_name,
            )
        };
        Ok(Self {
            error_code,
            error_message,
            group_id,
            group_state,
            group_epoch,
            assignment_epoch,
            topology,
            members,
            authorized_operations,
            topology_description,
            topology_description_status,
            assignor_name,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}

impl Codec for StreamsGroupDescribeResponse {
    fn encode(&self, w: &mut Writer, version: i16) -> Result<(), CodecError> {
        w.i32(self.throttle_time_ms);
        w.compact_structs("Groups", &self.groups, version)?;
        w.tagged_fields(&self.unknown_tagged_fields)
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, CodecError> {
        Ok(Self {
            throttle_time_ms: r.i32("ThrottleTimeMs")?,
            groups: r.compact_structs("Groups", version)?,
            unknown_tagged_fields: r.tagged_fields()?,
        })
    }
}
