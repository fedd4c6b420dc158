//! Binary encoding of [`Record`]s in Kafka's coordinator record layout (spec §6), and a simple
//! framing of record sequences.
//!
//! * Key bytes: int16 record type (the key schema's `apiKey`), then the key struct at version 0
//!   (non-flexible: int16-length strings).
//! * Value bytes: int16 value version, then the value struct. Streams values (types 17, 19-23)
//!   are version 0, flexible (compact strings and arrays, a tagged-fields section per struct).
//!   Committed offsets (type 1) are written at version 3 and read at versions 0-4. A tombstone
//!   has no value.
//!
//! Tagged fields are written as Kafka's generated writers do (only when not at their default;
//! `LastAssignmentConfigs` always, as Kafka's coordinator always sets it) and read whatever
//! their order; unknown tags are skipped, since records are never re-encoded verbatim.
//!
//! Every byte goes through the crate's wire layer ([`crate::wire`]): decoding never panics and
//! never trusts a length (element counts are checked against the bytes left before anything is
//! allocated), strings must be UTF-8 and at most 32767 bytes (Kafka's limit) on both sides, tags
//! of a tagged-field section must ascend, and a key or value must be consumed exactly. A record
//! Kafka's layout cannot represent (a string longer than 32767 bytes) is an encoding error,
//! never cut. Errors name the field path, e.g. `StreamsGroupTopologyValue.Subtopologies[0].Name`.
//!
//! Batches ([`encode_batch`], [`decode_batch`]): per record, the key as Kafka `bytes` (int32
//! length, then the bytes) and the value as `nullable_bytes` (-1 = tombstone); no header.

mod classic;
mod consumer;
#[cfg(not(target_arch = "wasm32"))]
mod fast;
mod offsets;
mod streams;

use super::{Record, record_type};
use crate::wire::{Reader, WireError, Writer};

/// A record that cannot be decoded or encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordCodecError {
    /// The key's record type is not one groupcoord knows.
    #[error("unknown record type {0}")]
    UnknownType(i16),
    /// The value version is not one the record type has.
    #[error("{record}: unsupported value version {version}")]
    UnsupportedVersion {
        /// The value schema's name.
        record: &'static str,
        /// The version the value declares.
        version: i16,
    },
    /// Bytes that do not follow the record's schema (truncated, null where not nullable,
    /// invalid UTF-8, a string longer than 32767 bytes, a malformed varint or tagged field,
    /// trailing bytes), or a value the schema cannot represent; the path names the record and
    /// the field.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A record of a batch failed; `index` counts from 0.
    #[error("batch record {index}: {source}")]
    InBatch {
        /// The record's position in the batch.
        index: usize,
        /// What went wrong with it.
        #[source]
        source: Box<RecordCodecError>,
    },
}

/// Key bytes and value bytes (`None` = tombstone).
///
/// Fails with [`RecordCodecError::Wire`] for a record Kafka's layout cannot represent (a string
/// longer than 32767 bytes, which Kafka itself would refuse to write): nothing is cut.
pub fn encode_record(record: &Record) -> Result<(Vec<u8>, Option<Vec<u8>>), RecordCodecError> {
    use record_type::*;
    let (key, value) = match record {
        Record::GroupMetadata { group_id, value } => (
            group_key(STREAMS_GROUP_METADATA, GROUP_METADATA_KEY, group_id)?,
            value.as_ref().map(streams::encode_group_metadata),
        ),
        Record::MemberMetadata {
            group_id,
            member_id,
            value,
        } => (
            member_key(
                STREAMS_GROUP_MEMBER_METADATA,
                MEMBER_METADATA_KEY,
                group_id,
                member_id,
            )?,
            value.as_ref().map(streams::encode_member_metadata),
        ),
        Record::TargetAssignmentMetadata { group_id, value } => (
            group_key(
                STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA,
                TARGET_ASSIGNMENT_METADATA_KEY,
                group_id,
            )?,
            value
                .as_ref()
                .map(streams::encode_target_assignment_metadata),
        ),
        Record::TargetAssignmentMember {
            group_id,
            member_id,
            value,
        } => (
            member_key(
                STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
                TARGET_ASSIGNMENT_MEMBER_KEY,
                group_id,
                member_id,
            )?,
            value.as_ref().map(streams::encode_target_assignment_member),
        ),
        Record::CurrentMemberAssignment {
            group_id,
            member_id,
            value,
        } => (
            member_key(
                STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                CURRENT_MEMBER_ASSIGNMENT_KEY,
                group_id,
                member_id,
            )?,
            value
                .as_ref()
                .map(streams::encode_current_member_assignment),
        ),
        Record::Topology { group_id, value } => (
            group_key(STREAMS_GROUP_TOPOLOGY, TOPOLOGY_KEY, group_id)?,
            value.as_ref().map(streams::encode_topology),
        ),
        Record::OffsetCommit {
            group_id,
            topic,
            partition,
            value,
        } => {
            let mut w = Writer::new(OFFSET_COMMIT_KEY);
            w.i16(OFFSET_COMMIT);
            w.string("group", group_id)?;
            w.string("topic", topic)?;
            w.i32(*partition);
            (
                w.into_bytes(),
                value.as_ref().map(offsets::encode_offset_commit),
            )
        }
        Record::ClassicGroupMetadata { group_id, value } => (
            group_key(
                CLASSIC_GROUP_METADATA,
                classic::GROUP_METADATA_KEY,
                group_id,
            )?,
            value.as_ref().map(classic::encode_group_metadata),
        ),
        Record::ConsumerGroupMetadata { group_id, value } => (
            group_key(CONSUMER_GROUP_METADATA, C_GROUP_METADATA_KEY, group_id)?,
            value.as_ref().map(consumer::encode_group_metadata),
        ),
        Record::ConsumerGroupPartitionMetadata { group_id, value } => (
            group_key(
                CONSUMER_GROUP_PARTITION_METADATA,
                C_PARTITION_METADATA_KEY,
                group_id,
            )?,
            value.as_ref().map(consumer::encode_partition_metadata),
        ),
        Record::ConsumerMemberMetadata {
            group_id,
            member_id,
            value,
        } => (
            member_key(
                CONSUMER_GROUP_MEMBER_METADATA,
                C_MEMBER_METADATA_KEY,
                group_id,
                member_id,
            )?,
            value.as_ref().map(consumer::encode_member_metadata),
        ),
        Record::ConsumerTargetAssignmentMetadata { group_id, value } => (
            group_key(
                CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
                C_TARGET_ASSIGNMENT_METADATA_KEY,
                group_id,
            )?,
            value.as_ref().map(|v| {
                streams::encode_assignment_metadata(consumer::TARGET_ASSIGNMENT_METADATA, v)
            }),
        ),
        Record::ConsumerTargetAssignmentMember {
            group_id,
            member_id,
            value,
        } => (
            member_key(
                CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                C_TARGET_ASSIGNMENT_MEMBER_KEY,
                group_id,
                member_id,
            )?,
            value
                .as_deref()
                .map(consumer::encode_target_assignment_member),
        ),
        Record::ConsumerCurrentMemberAssignment {
            group_id,
            member_id,
            value,
        } => (
            member_key(
                CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                C_CURRENT_MEMBER_ASSIGNMENT_KEY,
                group_id,
                member_id,
            )?,
            value
                .as_ref()
                .map(consumer::encode_current_member_assignment),
        ),
        Record::ConsumerRegularExpression {
            group_id,
            regex,
            value,
        } => {
            let mut w = Writer::new(C_REGULAR_EXPRESSION_KEY);
            w.i16(CONSUMER_GROUP_REGULAR_EXPRESSION);
            w.string("GroupId", group_id)?;
            w.string("RegularExpression", regex)?;
            (
                w.into_bytes(),
                value.as_ref().map(consumer::encode_regular_expression),
            )
        }
    };
    Ok((key, value.transpose()?))
}

const GROUP_METADATA_KEY: &str = "StreamsGroupMetadataKey";
const MEMBER_METADATA_KEY: &str = "StreamsGroupMemberMetadataKey";
const TARGET_ASSIGNMENT_METADATA_KEY: &str = "StreamsGroupTargetAssignmentMetadataKey";
const TARGET_ASSIGNMENT_MEMBER_KEY: &str = "StreamsGroupTargetAssignmentMemberKey";
const CURRENT_MEMBER_ASSIGNMENT_KEY: &str = "StreamsGroupCurrentMemberAssignmentKey";
const TOPOLOGY_KEY: &str = "StreamsGroupTopologyKey";
const OFFSET_COMMIT_KEY: &str = "OffsetCommitKey";
const C_GROUP_METADATA_KEY: &str = "ConsumerGroupMetadataKey";
const C_PARTITION_METADATA_KEY: &str = "ConsumerGroupPartitionMetadataKey";
const C_MEMBER_METADATA_KEY: &str = "ConsumerGroupMemberMetadataKey";
const C_TARGET_ASSIGNMENT_METADATA_KEY: &str = "ConsumerGroupTargetAssignmentMetadataKey";
const C_TARGET_ASSIGNMENT_MEMBER_KEY: &str = "ConsumerGroupTargetAssignmentMemberKey";
const C_CURRENT_MEMBER_ASSIGNMENT_KEY: &str = "ConsumerGroupCurrentMemberAssignmentKey";
const C_REGULAR_EXPRESSION_KEY: &str = "ConsumerGroupRegularExpressionKey";
const LEGACY_OFFSET_COMMIT_KEY: &str = "LegacyOffsetCommitKey";
/// Root of the error path while the record type is not known yet.
const RECORD_KEY: &str = "RecordKey";
/// Record type 0: Kafka's legacy offset commit key, same layout as type 1. Read, never written.
const LEGACY_OFFSET_COMMIT: i16 = 0;

fn group_key(record_type: i16, name: &'static str, group_id: &str) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new(name);
    w.i16(record_type);
    w.string("GroupId", group_id)?;
    Ok(w.into_bytes())
}

fn member_key(
    record_type: i16,
    name: &'static str,
    group_id: &str,
    member_id: &str,
) -> Result<Vec<u8>, WireError> {
    let mut w = Writer::new(name);
    w.i16(record_type);
    w.string("GroupId", group_id)?;
    w.string("MemberId", member_id)?;
    Ok(w.into_bytes())
}

/// A record from its key bytes and value bytes (`None` = tombstone).
///
/// A type 0 (legacy offset commit) key is read as [`Record::OffsetCommit`].
pub fn decode_record(key: &[u8], value: Option<&[u8]>) -> Result<Record, RecordCodecError> {
    use record_type::*;
    let record_type = Reader::new(key, RECORD_KEY).i16("RecordType")?;
    let record = match record_type {
        STREAMS_GROUP_METADATA => {
            let group_id = read_group_key(key, GROUP_METADATA_KEY)?;
            Record::GroupMetadata {
                group_id,
                value: value.map(streams::decode_group_metadata).transpose()?,
            }
        }
        STREAMS_GROUP_MEMBER_METADATA => {
            let (group_id, member_id) = read_member_key(key, MEMBER_METADATA_KEY)?;
            Record::MemberMetadata {
                group_id,
                member_id,
                value: value.map(streams::decode_member_metadata).transpose()?,
            }
        }
        STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA => {
            let group_id = read_group_key(key, TARGET_ASSIGNMENT_METADATA_KEY)?;
            Record::TargetAssignmentMetadata {
                group_id,
                value: value
                    .map(streams::decode_target_assignment_metadata)
                    .transpose()?,
            }
        }
        STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER => {
            let (group_id, member_id) = read_member_key(key, TARGET_ASSIGNMENT_MEMBER_KEY)?;
            Record::TargetAssignmentMember {
                group_id,
                member_id,
                value: value
                    .map(streams::decode_target_assignment_member)
                    .transpose()?,
            }
        }
        STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT => {
            let (group_id, member_id) = read_member_key(key, CURRENT_MEMBER_ASSIGNMENT_KEY)?;
            Record::CurrentMemberAssignment {
                group_id,
                member_id,
                value: value
                    .map(streams::decode_current_member_assignment)
                    .transpose()?,
            }
        }
        STREAMS_GROUP_TOPOLOGY => {
            let group_id = read_group_key(key, TOPOLOGY_KEY)?;
            Record::Topology {
                group_id,
                value: value.map(streams::decode_topology).transpose()?,
            }
        }
        OFFSET_COMMIT | LEGACY_OFFSET_COMMIT => {
            let legacy = record_type == LEGACY_OFFSET_COMMIT;
            let name = if legacy {
                LEGACY_OFFSET_COMMIT_KEY
            } else {
                OFFSET_COMMIT_KEY
            };
            let mut r = key_reader(key, name)?;
            let group_id = r.string("group")?;
            let topic = r.string("topic")?;
            let partition = r.i32("partition")?;
            r.finish()?;
            Record::OffsetCommit {
                group_id,
                topic,
                partition,
                value: value
                    .map(|v| offsets::decode_offset_commit(v, legacy))
                    .transpose()?,
            }
        }
        CLASSIC_GROUP_METADATA => {
            let group_id = read_group_key(key, classic::GROUP_METADATA_KEY)?;
            Record::ClassicGroupMetadata {
                group_id,
                value: value.map(classic::decode_group_metadata).transpose()?,
            }
        }
        CONSUMER_GROUP_METADATA => Record::ConsumerGroupMetadata {
            group_id: read_group_key(key, C_GROUP_METADATA_KEY)?,
            value: value.map(consumer::decode_group_metadata).transpose()?,
        },
        CONSUMER_GROUP_PARTITION_METADATA => Record::ConsumerGroupPartitionMetadata {
            group_id: read_group_key(key, C_PARTITION_METADATA_KEY)?,
            value: value.map(consumer::decode_partition_metadata).transpose()?,
        },
        CONSUMER_GROUP_MEMBER_METADATA => {
            let (group_id, member_id) = read_member_key(key, C_MEMBER_METADATA_KEY)?;
            Record::ConsumerMemberMetadata {
                group_id,
                member_id,
                value: value.map(consumer::decode_member_metadata).transpose()?,
            }
        }
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA => Record::ConsumerTargetAssignmentMetadata {
            group_id: read_group_key(key, C_TARGET_ASSIGNMENT_METADATA_KEY)?,
            value: value
                .map(|v| {
                    streams::decode_assignment_metadata(v, consumer::TARGET_ASSIGNMENT_METADATA)
                })
                .transpose()?,
        },
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER => {
            let (group_id, member_id) = read_member_key(key, C_TARGET_ASSIGNMENT_MEMBER_KEY)?;
            Record::ConsumerTargetAssignmentMember {
                group_id,
                member_id,
                value: value
                    .map(consumer::decode_target_assignment_member)
                    .transpose()?,
            }
        }
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT => {
            let (group_id, member_id) = read_member_key(key, C_CURRENT_MEMBER_ASSIGNMENT_KEY)?;
            Record::ConsumerCurrentMemberAssignment {
                group_id,
                member_id,
                value: value
                    .map(consumer::decode_current_member_assignment)
                    .transpose()?,
            }
        }
        CONSUMER_GROUP_REGULAR_EXPRESSION => {
            let mut r = key_reader(key, C_REGULAR_EXPRESSION_KEY)?;
            let group_id = r.string("GroupId")?;
            let regex = r.string("RegularExpression")?;
            r.finish()?;
            Record::ConsumerRegularExpression {
                group_id,
                regex,
                value: value.map(consumer::decode_regular_expression).transpose()?,
            }
        }
        other => return Err(RecordCodecError::UnknownType(other)),
    };
    Ok(record)
}

/// A reader over the key struct, past the record type.
fn key_reader<'a>(key: &'a [u8], name: &'static str) -> Result<Reader<'a>, RecordCodecError> {
    let mut r = Reader::new(key, name);
    r.i16("RecordType")?;
    Ok(r)
}

fn read_group_key(key: &[u8], name: &'static str) -> Result<String, RecordCodecError> {
    let mut r = key_reader(key, name)?;
    let group_id = r.string("GroupId")?;
    r.finish()?;
    Ok(group_id)
}

fn read_member_key(key: &[u8], name: &'static str) -> Result<(String, String), RecordCodecError> {
    let mut r = key_reader(key, name)?;
    let group_id = r.string("GroupId")?;
    let member_id = r.string("MemberId")?;
    r.finish()?;
    Ok((group_id, member_id))
}

// ---------------------------------------------------------------------------------------------
// Batches
// ---------------------------------------------------------------------------------------------

const BATCH: &str = "RecordBatch";

/// Records framed one after the other: the key as `bytes` (int32 length), the value as
/// `nullable_bytes` (-1 = tombstone). Records are encoded with [`encode_record`]; the first
/// that cannot be fails the batch with [`RecordCodecError::InBatch`].
pub fn encode_batch(records: &[Record]) -> Result<Vec<u8>, RecordCodecError> {
    let mut w = Writer::new(BATCH);
    for (index, record) in records.iter().enumerate() {
        let in_batch = |e: RecordCodecError| RecordCodecError::InBatch {
            index,
            source: Box::new(e),
        };
        let (key, value) = encode_record(record).map_err(in_batch)?;
        w.bytes("Key", &key)
            .and_then(|()| w.nullable_bytes("Value", value.as_deref()))
            .map_err(|e| in_batch(e.into()))?;
    }
    Ok(w.into_bytes())
}

/// The records of [`encode_batch`] bytes. The first bad record fails the whole batch with
/// [`RecordCodecError::InBatch`].
pub fn decode_batch(bytes: &[u8]) -> Result<Vec<Record>, RecordCodecError> {
    // Natively, the common case first (a restart decodes a million records); the explorer's
    // batches are small and its module size counts.
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(records) = fast::decode_batch(bytes) {
        return Ok(records);
    }
    decode_batch_checked(bytes)
}

/// [`decode_batch`] through the wire layer only: every error with its field path.
fn decode_batch_checked(bytes: &[u8]) -> Result<Vec<Record>, RecordCodecError> {
    let mut r = Reader::new(bytes, BATCH);
    let mut out = Vec::new();
    while r.remaining() > 0 {
        let index = out.len();
        let in_batch = |e: RecordCodecError| RecordCodecError::InBatch {
            index,
            source: Box::new(e),
        };
        let key = r.bytes("Key").map_err(|e| in_batch(e.into()))?;
        let value = r.nullable_bytes("Value").map_err(|e| in_batch(e.into()))?;
        out.push(decode_record(key, value).map_err(in_batch)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{GroupMetadataValue, OffsetCommitValue, TargetAssignmentMetadataValue};
    use crate::wire::WireError;

    fn round_trip(record: Record) {
        let (key, value) = encode_record(&record).unwrap();
        assert_eq!(decode_record(&key, value.as_deref()).unwrap(), record);
    }

    /// The fast path of [`decode_batch`] answers exactly what the wire layer does, for valid
    /// batches and for every truncation and single-byte change of one.
    #[test]
    fn batch_decoding_fast_path_agrees_with_the_checked_one() {
        let commit = |partition, value: Option<(i64, &str)>| Record::OffsetCommit {
            group_id: "group-1".into(),
            topic: "topic".into(),
            partition,
            value: value.map(|(offset, metadata)| OffsetCommitValue {
                offset,
                leader_epoch: 4,
                metadata: metadata.into(),
                commit_timestamp: 99,
            }),
        };
        let records = vec![
            commit(0, Some((10, ""))),
            commit(1, Some((11, "meta"))),
            commit(2, None),
            Record::GroupMetadata {
                group_id: "s".into(),
                value: Some(GroupMetadataValue {
                    epoch: 3,
                    ..Default::default()
                }),
            },
            commit(3, Some((-1, "é"))),
        ];
        let bytes = encode_batch(&records).unwrap();
        assert_eq!(decode_batch(&bytes).unwrap(), records);
        assert_eq!(decode_batch_checked(&bytes).unwrap(), records);
        for cut in 0..bytes.len() {
            assert_eq!(
                decode_batch(&bytes[..cut]),
                decode_batch_checked(&bytes[..cut]),
                "cut at {cut}"
            );
        }
        for at in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= flip;
                assert_eq!(
                    decode_batch(&b),
                    decode_batch_checked(&b),
                    "byte {at} ^ {flip}"
                );
            }
        }
        // The versions the fast path leaves to the wire layer: 0-2, 4 and the legacy key.
        for version in [0i16, 1, 2, 4] {
            let mut value = version.to_be_bytes().to_vec();
            value.extend(7i64.to_be_bytes());
            if version >= 3 {
                value.extend(1i32.to_be_bytes());
            }
            // metadata "": compact (length + 1) at v4, int16 before.
            value.extend(if version == 4 { &[1][..] } else { &[0, 0][..] });
            value.extend(9i64.to_be_bytes());
            if version == 1 {
                value.extend(5i64.to_be_bytes());
            }
            if version == 4 {
                value.push(0); // no tagged fields
            }
            for key_type in [0i16, 1] {
                let mut key = key_type.to_be_bytes().to_vec();
                key.extend([0, 1, b'g', 0, 1, b't', 0, 0, 0, 2]);
                let mut batch = (key.len() as i32).to_be_bytes().to_vec();
                batch.extend(&key);
                batch.extend((value.len() as i32).to_be_bytes());
                batch.extend(&value);
                let fast = decode_batch(&batch);
                assert_eq!(fast, decode_batch_checked(&batch));
                assert!(fast.is_ok() || key_type == 0, "v{version} type {key_type}");
            }
        }
    }

    #[test]
    fn group_key_layout() {
        let (key, value) = encode_record(&Record::GroupMetadata {
            group_id: "g".into(),
            value: None,
        })
        .unwrap();
        assert_eq!(key, [0, 17, 0, 1, b'g']);
        assert_eq!(value, None);
    }

    #[test]
    fn offset_commit_key_and_value_v3_layout() {
        let record = Record::OffsetCommit {
            group_id: "g".into(),
            topic: "t".into(),
            partition: 2,
            value: Some(OffsetCommitValue {
                offset: 7,
                leader_epoch: -1,
                metadata: "m".into(),
                commit_timestamp: 9,
            }),
        };
        let (key, value) = encode_record(&record).unwrap();
        assert_eq!(key, [0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 2]);
        assert_eq!(
            value.unwrap(),
            [
                0, 3, // version
                0, 0, 0, 0, 0, 0, 0, 7, // offset
                0xff, 0xff, 0xff, 0xff, // leaderEpoch
                0, 1, b'm', // metadata
                0, 0, 0, 0, 0, 0, 0, 9, // commitTimestamp
            ]
        );
        round_trip(record);
    }

    #[test]
    fn offset_commit_older_and_flexible_versions_decode() {
        let key = [0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 2];
        let expected = |leader_epoch| Record::OffsetCommit {
            group_id: "g".into(),
            topic: "t".into(),
            partition: 2,
            value: Some(OffsetCommitValue {
                offset: 7,
                leader_epoch,
                metadata: "m".into(),
                commit_timestamp: 9,
            }),
        };
        let offset = [0, 0, 0, 0, 0, 0, 0, 7];
        let ts = [0, 0, 0, 0, 0, 0, 0, 9];
        let v0 = [&[0, 0][..], &offset, &[0, 1, b'm'], &ts].concat();
        let v1 = [&[0, 1][..], &offset, &[0, 1, b'm'], &ts, &[0xff; 8]].concat();
        let v2 = [&[0, 2][..], &offset, &[0, 1, b'm'], &ts].concat();
        // v4: compact metadata, one unknown tagged field (tag 0, 16 bytes: a topic id).
        let mut v4 = [
            &[0, 4][..],
            &offset,
            &[0, 0, 0, 5],
            &[2, b'm'],
            &ts,
            &[1, 0, 16],
        ]
        .concat();
        v4.extend_from_slice(&[0xab; 16]);
        for (v, epoch) in [(v0, -1), (v1, -1), (v2, -1), (v4, 5)] {
            assert_eq!(
                decode_record(&key, Some(&v)).unwrap(),
                expected(epoch),
                "{v:?}"
            );
        }
        // Legacy type 0 key, value version 0.
        let legacy_key = [0, 0, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 2];
        let v0 = [&[0, 0][..], &offset, &[0, 1, b'm'], &ts].concat();
        assert_eq!(decode_record(&legacy_key, Some(&v0)).unwrap(), expected(-1));
        let v3 = encode_record(&expected(-1)).unwrap().1.unwrap();
        assert!(matches!(
            decode_record(&legacy_key, Some(&v3)),
            Err(RecordCodecError::UnsupportedVersion { version: 3, .. })
        ));
        for version in [-1i16, 5] {
            let v = [&version.to_be_bytes()[..], &v3[2..]].concat();
            assert!(matches!(
                decode_record(&key, Some(&v)),
                Err(RecordCodecError::UnsupportedVersion { .. })
            ));
        }
    }

    #[test]
    fn errors_name_record_and_field() {
        let (key, value) = encode_record(&Record::TargetAssignmentMetadata {
            group_id: "g".into(),
            value: Some(TargetAssignmentMetadataValue {
                assignment_epoch: 3,
                assignment_timestamp: 0,
            }),
        })
        .unwrap();
        let value = value.unwrap();
        let e = decode_record(&key, Some(&value[..4])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "truncated while reading StreamsGroupTargetAssignmentMetadataValue.AssignmentEpoch: needed 4 byte(s), 2 left"
        );
        let e = decode_record(&key[..4], None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "truncated while reading StreamsGroupTargetAssignmentMetadataKey.GroupId: needed 1 byte(s), 0 left"
        );
        let mut extra = value.clone();
        extra.push(0);
        let e = decode_record(&key, Some(&extra)).unwrap_err();
        assert_eq!(
            e,
            RecordCodecError::Wire(WireError::TrailingBytes {
                message: "StreamsGroupTargetAssignmentMetadataValue",
                count: 1
            })
        );
        assert_eq!(
            decode_record(&[0, 18, 0, 0], None).unwrap_err(),
            RecordCodecError::UnknownType(18)
        );
        // Types 3-8 and 16 are the consumer-group records now; 9 (share groups) is not served.
        assert_eq!(
            decode_record(&[0, 9], None).unwrap_err(),
            RecordCodecError::UnknownType(9)
        );
        assert!(matches!(
            decode_record(&[0], None),
            Err(RecordCodecError::Wire(WireError::Truncated { .. }))
        ));
    }

    #[test]
    fn too_long_strings_are_refused_not_cut() {
        // One byte over Kafka's limit, in a key and in a value.
        let long = "g".repeat(0x8000);
        let record = Record::GroupMetadata {
            group_id: long.clone(),
            value: Some(GroupMetadataValue::default()),
        };
        let e = encode_record(&record).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot encode StreamsGroupMetadataKey.GroupId: string of 32768 bytes is longer than the maximum of 32767"
        );
        let record = Record::OffsetCommit {
            group_id: "g".into(),
            topic: "t".into(),
            partition: 0,
            value: Some(OffsetCommitValue {
                offset: 0,
                leader_epoch: -1,
                metadata: long,
                commit_timestamp: 0,
            }),
        };
        let e = encode_record(&record).unwrap_err();
        assert_eq!(
            e,
            RecordCodecError::Wire(WireError::InvalidValue {
                path: "OffsetCommitValue.metadata".into(),
                reason: "string of 32768 bytes is longer than the maximum of 32767".into()
            })
        );
        // In a batch: the record's index.
        let ok = Record::GroupMetadata {
            group_id: "g".into(),
            value: None,
        };
        assert!(matches!(
            encode_batch(&[ok.clone(), record]),
            Err(RecordCodecError::InBatch { index: 1, .. })
        ));
        // Exactly at the limit: written whole.
        round_trip(Record::GroupMetadata {
            group_id: "g".repeat(0x7fff),
            value: None,
        });
    }

    #[test]
    fn batch_framing_layout() {
        let records = [
            Record::GroupMetadata {
                group_id: "g".into(),
                value: None,
            },
            Record::TargetAssignmentMetadata {
                group_id: "g".into(),
                value: Some(TargetAssignmentMetadataValue {
                    assignment_epoch: 1,
                    assignment_timestamp: 0,
                }),
            },
        ];
        let bytes = encode_batch(&records).unwrap();
        assert_eq!(
            bytes,
            [
                0, 0, 0, 5, 0, 17, 0, 1, b'g', 0xff, 0xff, 0xff, 0xff, // tombstone
                0, 0, 0, 5, 0, 20, 0, 1, b'g', 0, 0, 0, 7, 0, 0, 0, 0, 0, 1, 0,
            ]
        );
        assert_eq!(decode_batch(&bytes).unwrap(), records);
        assert_eq!(decode_batch(&[]).unwrap(), vec![]);
        let e = decode_batch(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(
            matches!(e, RecordCodecError::InBatch { index: 1, .. }),
            "{e}"
        );
        let mut bad = bytes.clone();
        bad[9..13].copy_from_slice(&(-2i32).to_be_bytes());
        assert!(matches!(
            decode_batch(&bad),
            Err(RecordCodecError::InBatch { index: 0, .. })
        ));
    }
}
