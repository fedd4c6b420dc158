//! Values of the consumer group records 3-8 and 16 (docs/consumer-protocol.md §K6): version 0,
//! flexible, as Kafka 4.4 writes them. Topic ids are Kafka `uuid`s (16 bytes, big-endian halves).

use super::RecordCodecError;
use super::streams::{Encoded, decode_value, encode_value, tagged, write_i32s};
use crate::assignor::consumer::TopicId;
use crate::records::{
    ConsumerClassicMemberMetadata, ConsumerCurrentAssignmentValue, ConsumerGroupMetadataValue,
    ConsumerMemberMetadataValue, ConsumerMemberState, ConsumerPartitionMetadataValue,
    ConsumerRegexValue, ConsumerTopicMetadata, PartitionEpochs,
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
        w.compact_array("Topics", &v.topics, |w, t| {
            write_uuid(w, &t.topic_id);
            w.compact_string("TopicName", &t.name)?;
            w.i32(t.num_partitions);
            w.compact_array("PartitionMetadata", &t.partition_racks, |w, (p, racks)| {
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
            Ok(ConsumerTopicMetadata {
                topic_id: id,
                name,
                num_partitions: n,
                partition_racks: racks,
            })
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

/// One `TopicPartitions` entry as read: the epochs only where tag 0 was present.
type RawTopicPartitions = (TopicId, Vec<i32>, Option<Vec<i32>>);

/// As Kafka reads them: epochs missing or of another length fall back to the member epoch
/// (at least 0) for every partition of the topic.
fn read_partition_epochs(
    r: &mut Reader<'_>,
    field: &'static str,
) -> Result<Vec<RawTopicPartitions>, WireError> {
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

fn with_epochs(entries: Vec<RawTopicPartitions>, member_epoch: i32) -> PartitionEpochs {
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

#[cfg(test)]
mod tests {
    use crate::util::map::BTreeMap;

    use crate::assignor::consumer::TopicId;
    use crate::records::{
        ConsumerClassicMemberMetadata, ConsumerCurrentAssignmentValue, ConsumerGroupMetadataValue,
        ConsumerMemberMetadataValue, ConsumerMemberState, ConsumerPartitionMetadataValue,
        ConsumerRegexValue, Record, TargetAssignmentMetadataValue, decode_record, encode_record,
    };

    fn round_trip(record: Record) {
        let (key, value) = encode_record(&record).unwrap();
        assert_eq!(decode_record(&key, value.as_deref()).unwrap(), record);
    }

    #[test]
    fn group_metadata_layout() {
        let record = Record::ConsumerGroupMetadata {
            group_id: "g".into(),
            value: Some(ConsumerGroupMetadataValue {
                epoch: 3,
                metadata_hash: 0x0102,
            }),
        };
        let (key, value) = encode_record(&record).unwrap();
        assert_eq!(key, [0, 3, 0, 1, b'g']);
        assert_eq!(
            value.unwrap(),
            [0, 0, 0, 0, 0, 3, 1, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2]
        );
        round_trip(record);
        // The hash is tagged with default 0: not written then.
        let (_, value) = encode_record(&Record::ConsumerGroupMetadata {
            group_id: "g".into(),
            value: Some(ConsumerGroupMetadataValue {
                epoch: 3,
                metadata_hash: 0,
            }),
        })
        .unwrap();
        assert_eq!(value.unwrap(), [0, 0, 0, 0, 0, 3, 0]);
    }

    #[test]
    fn current_assignment_layout_with_epochs() {
        let t = TopicId::new(0, 7);
        let record = Record::ConsumerCurrentMemberAssignment {
            group_id: "g".into(),
            member_id: "m".into(),
            value: Some(ConsumerCurrentAssignmentValue {
                member_epoch: 2,
                previous_member_epoch: 1,
                state: ConsumerMemberState::UnrevokedPartitions,
                assigned: BTreeMap::from([(t, BTreeMap::from([(0, 1), (3, 2)]))]),
                pending_revocation: BTreeMap::new(),
            }),
        };
        let (key, value) = encode_record(&record).unwrap();
        assert_eq!(key, [0, 8, 0, 1, b'g', 0, 1, b'm']);
        let mut want = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 1, 2];
        want.extend_from_slice(&[0; 15]);
        want.push(7);
        // Partitions [0, 3], tag 0 (AssignmentEpochs [1, 2], 9 bytes), empty pending list.
        want.extend_from_slice(&[
            3, 0, 0, 0, 0, 0, 0, 0, 3, 1, 0, 9, 3, 0, 0, 0, 1, 0, 0, 0, 2,
        ]);
        want.extend_from_slice(&[1, 0]);
        assert_eq!(value.unwrap(), want);
        round_trip(record);
    }

    #[test]
    fn missing_assignment_epochs_default_to_the_member_epoch() {
        // An older writer: partitions without tag 0.
        let mut value = vec![0, 0, 0, 0, 0, 5, 0, 0, 0, 4, 0, 2];
        value.extend_from_slice(&[0; 15]);
        value.push(7);
        value.extend_from_slice(&[2, 0, 0, 0, 1, 0, 1, 0]);
        let record = decode_record(&[0, 8, 0, 1, b'g', 0, 1, b'm'], Some(&value)).unwrap();
        let Record::ConsumerCurrentMemberAssignment { value: Some(v), .. } = record else {
            panic!("{record:?}");
        };
        assert_eq!(v.assigned[&TopicId::new(0, 7)], BTreeMap::from([(1, 5)]));
        assert_eq!(v.state, ConsumerMemberState::Stable);
    }

    #[test]
    fn every_record_round_trips() {
        let t = TopicId::new(-5, 9);
        round_trip(Record::ConsumerMemberMetadata {
            group_id: "g".into(),
            member_id: "m".into(),
            value: Some(ConsumerMemberMetadataValue {
                instance_id: Some("i".into()),
                rack_id: None,
                client_id: "c".into(),
                client_host: "/h".into(),
                subscribed_topic_names: vec!["a".into(), "b".into()],
                subscribed_topic_regex: Some(String::new()),
                rebalance_timeout_ms: 300_000,
                server_assignor: Some("range".into()),
                classic_member_metadata: Some(ConsumerClassicMemberMetadata {
                    session_timeout_ms: 45_000,
                    supported_protocols: vec![("range".into(), vec![1, 2])],
                }),
            }),
        });
        round_trip(Record::ConsumerTargetAssignmentMember {
            group_id: "g".into(),
            member_id: "m".into(),
            value: Some(vec![(t, vec![3, 1])]),
        });
        round_trip(Record::ConsumerTargetAssignmentMetadata {
            group_id: "g".into(),
            value: Some(TargetAssignmentMetadataValue {
                assignment_epoch: 4,
                assignment_timestamp: 99,
            }),
        });
        round_trip(Record::ConsumerGroupPartitionMetadata {
            group_id: "g".into(),
            value: Some(ConsumerPartitionMetadataValue {
                topics: vec![crate::records::ConsumerTopicMetadata {
                    topic_id: t,
                    name: "a".into(),
                    num_partitions: 2,
                    partition_racks: vec![(0, vec!["r1".into()])],
                }],
            }),
        });
        round_trip(Record::ConsumerRegularExpression {
            group_id: "g".into(),
            regex: "a.*".into(),
            value: Some(ConsumerRegexValue {
                topics: vec!["a1".into()],
                version: 3,
                timestamp: 4,
            }),
        });
        for tombstone in [
            Record::ConsumerGroupMetadata {
                group_id: "g".into(),
                value: None,
            },
            Record::ConsumerCurrentMemberAssignment {
                group_id: "g".into(),
                member_id: "m".into(),
                value: None,
            },
            Record::ConsumerRegularExpression {
                group_id: "g".into(),
                regex: "x".into(),
                value: None,
            },
        ] {
            round_trip(tombstone);
        }
    }

    #[test]
    fn truncated_values_are_errors() {
        let (key, value) = encode_record(&Record::ConsumerTargetAssignmentMember {
            group_id: "g".into(),
            member_id: "m".into(),
            value: Some(vec![(TopicId::new(1, 2), vec![1, 2, 3])]),
        })
        .unwrap();
        let value = value.unwrap();
        for cut in 0..value.len() {
            assert!(decode_record(&key, Some(&value[..cut])).is_err(), "{cut}");
        }
    }
}
