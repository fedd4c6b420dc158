//! Values of the consumer group records 3-8 and 16 (docs/consumer-protocol.md §K6): version 0,
//! flexible, as Kafka 4.4 writes them. Topic ids are Kafka `uuid`s (16 bytes, big-endian halves).

use super::RecordCodecError;
use super::streams::{Encoded, decode_value, encode_value, tagged, write_i32s};
use crate::assignor::consumer::TopicId;
use crate::records::{
    ConsumerClassicMemberMetadata, ConsumerCurrentAssignmentValue, ConsumerGroupMetadataValue,
    ConsumerMemberMetadataValue, ConsumerMemberState, ConsumerPartitionMetadataValue,
    ConsumerRegexValue, PartitionEpochs,
};
use crate::wire::{Reader, WireError, Writer};

pub(crate) const GROUP_METADATA: &str = "ConsumerGroupMetadataValue";
pub(crate) const PARTITION_METADATA: &str = "ConsumerGroupPartitionMetadataValue";
pub(crate) const MEMBER_METADATA: &str = "ConsumerGroupMemberMetadataValue";
pub(crate) const TARGET_ASSIGNMENT_METADATA: &str = "ConsumerGroupTargetAssignmentMetadataValue";
pub(crate) const TARGET_ASSIGNMENT_MEMBER: &str = "ConsumerGroupTargetAssignmentMemberValue";
pub(crate) const CURRENT_MEMBER_ASSIGNMENT: &str = "ConsumerGroupCurrentMemberAssignmentValue";
pub(crate) const REGULAR_EXPRESSION: &str = "ConsumerGroupRegularExpressionValue";

fn write_uuid(w: &mut Writer, id: &TopicId) {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&id.most_significant_bits.to_be_bytes());
    b[8..].copy_from_slice(&id.least_significant_bits.to_be_bytes());
    w.uuid(&b);
}

fn read_uuid(r: &mut Reader<'_>, name: &'static str) -> Result<TopicId, WireError> {
    let b = r.uuid(name)?;
    let half = |s: &[u8]| i64::from_be_bytes(s.try_into().unwrap_or([0; 8]));
    Ok(TopicId::new(half(&b[..8]), half(&b[8..])))
}

// 3 ConsumerGroupMetadataValue: Epoch, tag 0 MetadataHash (default 0).

pub(crate) fn encode_group_metadata(v: &ConsumerGroupMetadataValue) -> Encoded {
    encode_value(GROUP_METADATA, |w| {
        w.i32(v.epoch);
        let mut tags = Vec::new();
        if v.metadata_hash != 0 {
            tags.push(tagged(w, 0, |t| {
                t.i64(v.metadata_hash);
                Ok(())
            })?);
        }
        w.tagged_fields_with(tags, &[])
    })
}

pub(crate) fn decode_group_metadata(
    bytes: &[u8],
) -> Result<ConsumerGroupMetadataValue, RecordCodecError> {
    decode_value(bytes, GROUP_METADATA, |r| {
        let epoch = r.i32("Epoch")?;
        let mut metadata_hash = 0;
        r.tagged_fields_with(|tag, t| match tag {
            0 => {
                metadata_hash = t.i64("MetadataHash")?;
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok(ConsumerGroupMetadataValue {
            epoch,
            metadata_hash,
        })
    })
}

// 4 ConsumerGroupPartitionMetadataValue: Topics[TopicId, TopicName, NumPartitions,
// PartitionMetadata[Partition, Racks[]]].

pub(crate) fn encode_partition_metadata(v: &ConsumerPartitionMetadataValue) -> Encoded {
    encode_value(PARTITION_METADATA, |w| {
        w.compact_array("Topics", &v.topics, |w, (id, name, n, racks)| {
            write_uuid(w, id);
            w.compact_string("TopicName", name)?;
            w.i32(*n);
            w.compact_array("PartitionMetadata", racks, |w, (p, racks)| {
                w.i32(*p);
                w.compact_strings("Racks", racks)?;
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

pub(crate) fn decode_partition_metadata(
    bytes: &[u8],
) -> Result<ConsumerPartitionMetadataValue, RecordCodecError> {
    decode_value(bytes, PARTITION_METADATA, |r| {
        let topics = r.compact_array("Topics", |r| {
            let id = read_uuid(r, "TopicId")?;
            let name = r.compact_string("TopicName")?;
            let n = r.i32("NumPartitions")?;
            let racks = r.compact_array("PartitionMetadata", |r| {
                let p = r.i32("Partition")?;
                let racks = r.compact_array("Racks", |r| r.compact_string(""))?;
                r.skip_tagged_fields()?;
                Ok((p, racks))
            })?;
            r.skip_tagged_fields()?;
            Ok((id, name, n, racks))
        })?;
        r.skip_tagged_fields()?;
        Ok(ConsumerPartitionMetadataValue { topics })
    })
}

// 5 ConsumerGroupMemberMetadataValue.

pub(crate) fn encode_member_metadata(v: &ConsumerMemberMetadataValue) -> Encoded {
    encode_value(MEMBER_METADATA, |w| {
        w.compact_nullable_string("InstanceId", v.instance_id.as_deref())?;
        w.compact_nullable_string("RackId", v.rack_id.as_deref())?;
        w.compact_string("ClientId", &v.client_id)?;
        w.compact_string("ClientHost", &v.client_host)?;
        w.compact_strings("SubscribedTopicNames", &v.subscribed_topic_names)?;
        w.compact_nullable_string("SubscribedTopicRegex", v.subscribed_topic_regex.as_deref())?;
        w.i32(v.rebalance_timeout_ms);
        w.compact_nullable_string("ServerAssignor", v.server_assignor.as_deref())?;
        let mut tags = Vec::new();
        if let Some(c) = &v.classic_member_metadata {
            tags.push(tagged(w, 0, |t| {
                // A nullable struct: a presence byte, then the struct.
                t.i8(1);
                t.i32(c.session_timeout_ms);
                t.compact_array("SupportedProtocols", &c.supported_protocols, |w, (n, m)| {
                    w.compact_string("Name", n)?;
                    w.compact_bytes("Metadata", m)?;
                    w.no_tagged_fields();
                    Ok(())
                })?;
                t.no_tagged_fields();
                Ok(())
            })?);
        }
        w.tagged_fields_with(tags, &[])
    })
}

pub(crate) fn decode_member_metadata(
    bytes: &[u8],
) -> Result<ConsumerMemberMetadataValue, RecordCodecError> {
    decode_value(bytes, MEMBER_METADATA, |r| {
        let mut v = ConsumerMemberMetadataValue {
            instance_id: r.compact_nullable_string("InstanceId")?,
            rack_id: r.compact_nullable_string("RackId")?,
            client_id: r.compact_string("ClientId")?,
            client_host: r.compact_string("ClientHost")?,
            subscribed_topic_names: r
                .compact_array("SubscribedTopicNames", |r| r.compact_string(""))?,
            subscribed_topic_regex: r.compact_nullable_string("SubscribedTopicRegex")?,
            rebalance_timeout_ms: r.i32("RebalanceTimeoutMs")?,
            server_assignor: r.compact_nullable_string("ServerAssignor")?,
            classic_member_metadata: None,
        };
        r.tagged_fields_with(|tag, t| match tag {
            0 => {
                if t.i8("ClassicMemberMetadata")? >= 0 {
                    let session_timeout_ms = t.i32("SessionTimeoutMs")?;
                    let supported_protocols = t.compact_array("SupportedProtocols", |r| {
                        let name = r.compact_string("Name")?;
                        let metadata = r.compact_bytes("Metadata")?.to_vec();
                        r.skip_tagged_fields()?;
                        Ok((name, metadata))
                    })?;
                    t.skip_tagged_fields()?;
                    v.classic_member_metadata = Some(ConsumerClassicMemberMetadata {
                        session_timeout_ms,
                        supported_protocols,
                    });
                }
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok(v)
    })
}

// 7 ConsumerGroupTargetAssignmentMemberValue: TopicPartitions[TopicId, Partitions[]].

pub(crate) fn encode_target_assignment_member(v: &[(TopicId, Vec<i32>)]) -> Encoded {
    encode_value(TARGET_ASSIGNMENT_MEMBER, |w| {
        w.compact_array("TopicPartitions", v, |w, (id, partitions)| {
            write_uuid(w, id);
            write_i32s(w, "Partitions", partitions.iter().copied())?;
            w.no_tagged_fields();
            Ok(())
        })?;
        w.no_tagged_fields();
        Ok(())
    })
}

pub(crate) fn decode_target_assignment_member(
    bytes: &[u8],
) -> Result<Vec<(TopicId, Vec<i32>)>, RecordCodecError> {
    decode_value(bytes, TARGET_ASSIGNMENT_MEMBER, |r| {
        let topics = r.compact_array("TopicPartitions", |r| {
            let id = read_uuid(r, "TopicId")?;
            let partitions = r.compact_array("Partitions", |r| r.i32(""))?;
            r.skip_tagged_fields()?;
            Ok((id, partitions))
        })?;
        r.skip_tagged_fields()?;
        Ok(topics)
    })
}

// 8 ConsumerGroupCurrentMemberAssignmentValue: partitions with tag 0 AssignmentEpochs.

fn write_partition_epochs(
    w: &mut Writer,
    field: &'static str,
    v: &PartitionEpochs,
) -> Result<(), WireError> {
    w.compact_array(field, v, |w, (id, partitions)| {
        write_uuid(w, id);
        write_i32s(w, "Partitions", partitions.keys().copied())?;
        // Written when non-empty (the schema default is an empty list).
        let tags = if partitions.is_empty() {
            Vec::new()
        } else {
            vec![tagged(w, 0, |t| {
                write_i32s(t, "AssignmentEpochs", partitions.values().copied())
            })?]
        };
        w.tagged_fields_with(tags, &[])
    })
}

/// As Kafka reads them: epochs missing or of another length fall back to the member epoch
/// (at least 0) for every partition of the topic.
fn read_partition_epochs(
    r: &mut Reader<'_>,
    field: &'static str,
) -> Result<Vec<(TopicId, Vec<i32>, Option<Vec<i32>>)>, WireError> {
    r.compact_array(field, |r| {
        let id = read_uuid(r, "TopicId")?;
        let partitions = r.compact_array("Partitions", |r| r.i32(""))?;
        let mut epochs = None;
        r.tagged_fields_with(|tag, t| match tag {
            0 => {
                epochs = t.compact_nullable_array("AssignmentEpochs", |r| r.i32(""))?;
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok((id, partitions, epochs))
    })
}

fn with_epochs(
    entries: Vec<(TopicId, Vec<i32>, Option<Vec<i32>>)>,
    member_epoch: i32,
) -> PartitionEpochs {
    let fallback = member_epoch.max(0);
    let mut out = PartitionEpochs::new();
    for (id, partitions, epochs) in entries {
        let topic = out.entry(id).or_default();
        match epochs {
            Some(e) if e.len() == partitions.len() => topic.extend(partitions.into_iter().zip(e)),
            _ => topic.extend(partitions.into_iter().map(|p| (p, fallback))),
        }
    }
    out
}

pub(crate) fn encode_current_member_assignment(v: &ConsumerCurrentAssignmentValue) -> Encoded {
    encode_value(CURRENT_MEMBER_ASSIGNMENT, |w| {
        w.i32(v.member_epoch);
        w.i32(v.previous_member_epoch);
        w.i8(v.state.value());
        write_partition_epochs(w, "AssignedPartitions", &v.assigned)?;
        write_partition_epochs(w, "PartitionsPendingRevocation", &v.pending_revocation)?;
        w.no_tagged_fields();
        Ok(())
    })
}

pub(crate) fn decode_current_member_assignment(
    bytes: &[u8],
) -> Result<ConsumerCurrentAssignmentValue, RecordCodecError> {
    decode_value(bytes, CURRENT_MEMBER_ASSIGNMENT, |r| {
        let member_epoch = r.i32("MemberEpoch")?;
        let previous_member_epoch = r.i32("PreviousMemberEpoch")?;
        let state = ConsumerMemberState::from_value(r.i8("State")?);
        let assigned = read_partition_epochs(r, "AssignedPartitions")?;
        let pending = read_partition_epochs(r, "PartitionsPendingRevocation")?;
        r.skip_tagged_fields()?;
        Ok(ConsumerCurrentAssignmentValue {
            member_epoch,
            previous_member_epoch,
            state,
            assigned: with_epochs(assigned, member_epoch),
            pending_revocation: with_epochs(pending, member_epoch),
        })
    })
}

// 16 ConsumerGroupRegularExpressionValue: Topics[], Version, Timestamp.

pub(crate) fn encode_regular_expression(v: &ConsumerRegexValue) -> Encoded {
    encode_value(REGULAR_EXPRESSION, |w| {
        w.compact_strings("Topics", &v.topics)?;
        w.i64(v.version);
        w.i64(v.timestamp);
        w.no_tagged_fields();
        Ok(())
    })
}

pub(crate) fn decode_regular_expression(
    bytes: &[u8],
) -> Result<ConsumerRegexValue, RecordCodecError> {
    decode_value(bytes, REGULAR_EXPRESSION, |r| {
        let topics = r.compact_array("Topics", |r| r.compact_string(""))?;
        let version = r.i64("Version")?;
        let timestamp = r.i64("Timestamp")?;
        r.skip_tagged_fields()?;
        Ok(ConsumerRegexValue {
            topics,
            version,
            timestamp,
        })
    })
}
