//! The coordinator record codec against hand-built Kafka bytes (spec §6), round trips of every
//! record type, and hostile input.
// Native only: plain `#[test]`s (and proptest) do not run under wasm-bindgen-test; the wasm
// API has its browser tests in tests/wasm_browser.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use groupcoord::WireError;
use groupcoord::records::{
    CurrentMemberAssignmentValue, GroupMetadataValue, MemberMetadataValue, MemberState,
    OffsetCommitValue, Record, TargetAssignmentMetadataValue, UserEndpoint,
};
use groupcoord::records::{
    RecordCodecError, decode_batch, decode_record, encode_batch, encode_record,
};
use groupcoord::topology::{CopartitionGroup, KeyValue, StreamsTopology, Subtopology, TopicInfo};
use groupcoord::types::{ActiveTasks, TaskSet, TasksTuple, TasksWithEpochs};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// The largest allocation each thread asks for, to show that hostile lengths allocate nothing big
// ---------------------------------------------------------------------------------------------

struct TrackingAllocator;

thread_local! {
    static LARGEST_ALLOCATION: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only records the requested size.
unsafe impl std::alloc::GlobalAlloc for TrackingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = LARGEST_ALLOCATION.try_with(|m| m.set(m.get().max(layout.size())));
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let _ = LARGEST_ALLOCATION.try_with(|m| m.set(m.get().max(new_size)));
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator;

/// The largest single allocation `f` makes on this thread.
fn largest_allocation_of(f: impl FnOnce()) -> usize {
    LARGEST_ALLOCATION.with(|m| m.set(0));
    f();
    LARGEST_ALLOCATION.with(|m| m.get())
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn tasks(entries: &[(&str, &[i32])]) -> TaskSet {
    let mut out = TaskSet::new();
    for (s, ps) in entries {
        for p in *ps {
            out.insert(s, *p);
        }
    }
    out
}

fn active(entries: &[(&str, &[(i32, i32)])]) -> ActiveTasks {
    let mut out = ActiveTasks::new();
    for (s, ps) in entries {
        for (p, e) in *ps {
            out.insert(s, *p, *e);
        }
    }
    out
}

fn decode(key: &[u8], value: &[u8]) -> Record {
    decode_record(key, Some(value)).unwrap_or_else(|e| panic!("decode failed: {e}"))
}

/// Encodes, checks the bytes, decodes back.
fn assert_golden(record: &Record, key: &[u8], value: Option<&[u8]>) {
    let (k, v) = encode_record(record).unwrap();
    assert_eq!(k, key, "key bytes of {}", record.summary());
    assert_eq!(v.as_deref(), value, "value bytes of {}", record.summary());
    assert_eq!(&decode_record(key, value).unwrap(), record);
}

/// Every proper prefix of the key, and of the value, fails to decode.
fn assert_prefixes_fail(key: &[u8], value: Option<&[u8]>) {
    for n in 0..key.len() {
        assert!(
            decode_record(&key[..n], value).is_err(),
            "key prefix {n} of {key:?} decoded"
        );
    }
    if let Some(value) = value {
        for n in 0..value.len() {
            assert!(
                decode_record(key, Some(&value[..n])).is_err(),
                "value prefix {n} of {value:?} decoded"
            );
        }
    }
}

const KEY_17: &[u8] = &[0, 17, 0, 1, b'g'];
const KEY_20: &[u8] = &[0, 20, 0, 1, b'g'];
const KEY_22: &[u8] = &[0, 22, 0, 1, b'g', 0, 1, b'm'];

// ---------------------------------------------------------------------------------------------
// Golden vectors, hand-built from the 4.4 schemas
// ---------------------------------------------------------------------------------------------

fn golden_17() -> (Record, Vec<u8>) {
    let record = Record::GroupMetadata {
        group_id: "g".into(),
        value: Some(GroupMetadataValue {
            epoch: 5,
            metadata_hash: 0x0102_0304_0506_0708,
            validated_topology_epoch: 3,
            last_assignment_configs: BTreeMap::from([(
                "num.standby.replicas".to_string(),
                "1".to_string(),
            )]),
            stored_description_topology_epoch: -1,
            failed_description_topology_epoch: 7,
        }),
    };
    let mut value = vec![
        0, 0, // value version 0
        0, 0, 0, 5, // Epoch
        1, 2, 3, 4, 5, 6, 7, 8, // MetadataHash
        3, // three tagged fields; tag 2 (StoredDescriptionTopologyEpoch) is at its default
        0, 4, 0, 0, 0, 3, // tag 0 ValidatedTopologyEpoch, 4 bytes
        1, 25, // tag 1 LastAssignmentConfigs, 25 bytes:
        2,  // one entry (compact: n + 1)
        21, // key, 20 bytes
    ];
    value.extend_from_slice(b"num.standby.replicas");
    value.extend_from_slice(&[
        2, b'1', // value
        0,    // entry tagged fields
        3, 4, 0, 0, 0, 7, // tag 3 FailedDescriptionTopologyEpoch
    ]);
    (record, value)
}

/// Spec §6, record 17: tagged 0-3, each written only when not at its default.
#[test]
fn golden_group_metadata_with_tagged_fields() {
    let (record, value) = golden_17();
    assert_golden(&record, KEY_17, Some(&value));
}

/// Spec §6, record 17: Kafka's coordinator always sets `LastAssignmentConfigs`, so tag 1 is
/// written even when empty.
#[test]
fn golden_group_metadata_at_defaults_still_writes_last_assignment_configs() {
    let record = Record::GroupMetadata {
        group_id: "g".into(),
        value: Some(GroupMetadataValue {
            epoch: 1,
            ..GroupMetadataValue::default()
        }),
    };
    let value = [
        0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, // version, Epoch, MetadataHash
        1, 1, 1, 1, // one tagged field: tag 1, 1 byte, empty array
    ];
    assert_golden(&record, KEY_17, Some(&value));
}

/// Spec §6 replay of 17: `LastAssignmentConfigs` null -> empty map.
#[test]
fn group_metadata_without_tagged_fields_reads_defaults() {
    // Null LastAssignmentConfigs (tag 1 holding compact null) and no tags at all: both read as
    // the defaults, configs empty.
    let expected = Record::GroupMetadata {
        group_id: "g".into(),
        value: Some(GroupMetadataValue {
            epoch: 1,
            ..GroupMetadataValue::default()
        }),
    };
    let head = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(decode(KEY_17, &[&head[..], &[0]].concat()), expected);
    assert_eq!(
        decode(KEY_17, &[&head[..], &[1, 1, 1, 0]].concat()),
        expected
    );
}

/// Spec §6, record 20: tagged 0 `AssignmentTimestamp`, default 0.
#[test]
fn golden_target_assignment_metadata() {
    let record = |assignment_timestamp| Record::TargetAssignmentMetadata {
        group_id: "g".into(),
        value: Some(TargetAssignmentMetadataValue {
            assignment_epoch: 12,
            assignment_timestamp,
        }),
    };
    // AssignmentTimestamp at its default 0: omitted.
    assert_golden(&record(0), KEY_20, Some(&[0, 0, 0, 0, 0, 12, 0]));
    // Set: tag 0, 8 bytes.
    assert_golden(
        &record(0x0102_0304_0506_0708),
        KEY_20,
        Some(&[0, 0, 0, 0, 0, 12, 1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8]),
    );
}

fn golden_22() -> (Record, Vec<u8>) {
    let record = Record::CurrentMemberAssignment {
        group_id: "g".into(),
        member_id: "m".into(),
        value: Some(CurrentMemberAssignmentValue {
            member_epoch: 7,
            previous_member_epoch: 6,
            state: MemberState::UnrevokedTasks,
            assigned: TasksWithEpochs {
                active: active(&[("0", &[(1, 5), (3, 7)])]),
                standby: tasks(&[("1", &[0])]),
                warmup: TaskSet::new(),
            },
            pending_revocation: TasksWithEpochs {
                active: active(&[("2", &[(4, 6)])]),
                standby: TaskSet::new(),
                warmup: tasks(&[("0", &[2])]),
            },
        }),
    };
    #[rustfmt::skip]
    let value = vec![
        0, 0, // value version 0
        0, 0, 0, 7, // MemberEpoch
        0, 0, 0, 6, // PreviousMemberEpoch
        2, // State UNREVOKED_TASKS
        // ActiveTasks: one TaskIds
        2,
        2, b'0', // SubtopologyId
        3, 0, 0, 0, 1, 0, 0, 0, 3, // Partitions [1, 3]
        1, 0, 9, 3, 0, 0, 0, 5, 0, 0, 0, 7, // tag 0 AssignmentEpochs [5, 7]
        // StandbyTasks
        2, 2, b'1', 2, 0, 0, 0, 0, 0,
        // WarmupTasks: empty
        1,
        // ActiveTasksPendingRevocation
        2, 2, b'2', 2, 0, 0, 0, 4, 1, 0, 5, 2, 0, 0, 0, 6,
        // StandbyTasksPendingRevocation: empty
        1,
        // WarmupTasksPendingRevocation
        2, 2, b'0', 2, 0, 0, 0, 2, 0,
        0, // tagged fields
    ];
    (record, value)
}

/// Spec §6, record 22: `AssignmentEpochs` (TaskIds tag 0) on both active lists only.
#[test]
fn golden_current_member_assignment_with_assignment_epochs() {
    let (record, value) = golden_22();
    assert_golden(&record, KEY_22, Some(&value));
}

/// A 22 value with one active TaskIds `{"0": [1, 3]}`, whose tagged section is `active_tags`.
fn value_22_with_active_tags(member_epoch: i32, active_tags: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 0];
    v.extend_from_slice(&member_epoch.to_be_bytes());
    v.extend_from_slice(&[0, 0, 0, 6, 1]);
    v.extend_from_slice(&[2, 2, b'0', 3, 0, 0, 0, 1, 0, 0, 0, 3]);
    v.extend_from_slice(active_tags);
    v.extend_from_slice(&[1, 1, 1, 1, 1, 0]);
    v
}

fn active_of(record: &Record) -> ActiveTasks {
    match record {
        Record::CurrentMemberAssignment { value: Some(v), .. } => v.assigned.active.clone(),
        other => panic!("not a current assignment: {other:?}"),
    }
}

/// Spec §6 replay of 22: epochs null or not parallel to `Partitions` -> the record's
/// `MemberEpoch`.
#[test]
fn current_assignment_without_usable_epochs_uses_member_epoch() {
    let expected = active(&[("0", &[(1, 9), (3, 9)])]);
    for (case, tags) in [
        ("no AssignmentEpochs", &[0u8][..]),
        ("null AssignmentEpochs", &[1, 0, 1, 0][..]),
        (
            "fewer epochs than partitions",
            &[1, 0, 5, 2, 0, 0, 0, 4][..],
        ),
        (
            "more epochs than partitions",
            &[1, 0, 13, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4][..],
        ),
    ] {
        let record = decode(KEY_22, &value_22_with_active_tags(9, tags));
        assert_eq!(active_of(&record), expected, "{case}");
    }
    // Parallel epochs are used as they are.
    let record = decode(
        KEY_22,
        &value_22_with_active_tags(9, &[1, 0, 9, 3, 0, 0, 0, 4, 0, 0, 0, 2]),
    );
    assert_eq!(active_of(&record), active(&[("0", &[(1, 4), (3, 2)])]));
}

/// Spec §2.2 and §6 replay of 22: an unrecognised `State` byte is `UNKNOWN`.
#[test]
fn unknown_member_state_byte_reads_as_unknown() {
    let (_, value) = golden_22();
    for byte in [0u8, 4, 5, 126, 127, 0x80, 0xff] {
        let mut v = value.clone();
        v[10] = byte;
        match decode(KEY_22, &v) {
            Record::CurrentMemberAssignment { value: Some(v), .. } => {
                assert_eq!(v.state, MemberState::Unknown, "byte {byte}")
            }
            other => panic!("{other:?}"),
        }
    }
    for (byte, state) in [
        (1u8, MemberState::Stable),
        (2, MemberState::UnrevokedTasks),
        (3, MemberState::UnreleasedTasks),
    ] {
        let mut v = value.clone();
        v[10] = byte;
        match decode(KEY_22, &v) {
            Record::CurrentMemberAssignment { value: Some(v), .. } => assert_eq!(v.state, state),
            other => panic!("{other:?}"),
        }
    }
}

/// Spec §6, record 19: `UserEndpoint` nullable struct, `ClientTags` sorted by key.
#[test]
fn golden_member_metadata() {
    let record = Record::MemberMetadata {
        group_id: "g".into(),
        member_id: "m".into(),
        value: Some(MemberMetadataValue {
            instance_id: None,
            rack_id: Some("r".into()),
            client_id: "c".into(),
            client_host: "h".into(),
            rebalance_timeout_ms: 1000,
            topology_epoch: 2,
            process_id: "p".into(),
            user_endpoint: Some(UserEndpoint {
                host: "x".into(),
                port: 9092,
            }),
            client_tags: BTreeMap::from([
                ("b".to_string(), "2".to_string()),
                ("a".to_string(), "1".to_string()),
            ]),
        }),
    };
    #[rustfmt::skip]
    let value = [
        0, 0,
        0, // InstanceId null
        2, b'r', // RackId
        2, b'c', // ClientId
        2, b'h', // ClientHost
        0, 0, 3, 0xe8, // RebalanceTimeoutMs 1000
        0, 0, 0, 2, // TopologyEpoch
        2, b'p', // ProcessId
        1, 2, b'x', 0x23, 0x84, 0, // UserEndpoint present: Host, Port 9092, tags
        3, 2, b'a', 2, b'1', 0, 2, b'b', 2, b'2', 0, // ClientTags sorted by key
        0,
    ];
    assert_golden(&record, &[0, 19, 0, 1, b'g', 0, 1, b'm'], Some(&value));

    // A null endpoint is the presence byte -1; Kafka reads any negative byte as null.
    let Record::MemberMetadata {
        value: Some(mut v), ..
    } = record.clone()
    else {
        unreachable!()
    };
    v.user_endpoint = None;
    let null_endpoint = Record::MemberMetadata {
        group_id: "g".into(),
        member_id: "m".into(),
        value: Some(v),
    };
    let (key, bytes) = encode_record(&null_endpoint).unwrap();
    let bytes = bytes.unwrap();
    assert_eq!(&bytes[19..20], &[0xff]);
    let mut other_negative = bytes.clone();
    other_negative[19] = 0x80;
    assert_eq!(decode(&key, &other_negative), null_endpoint);
}

#[test]
fn golden_target_assignment_member() {
    let record = Record::TargetAssignmentMember {
        group_id: "g".into(),
        member_id: "m".into(),
        value: Some(TasksTuple {
            active: tasks(&[("0", &[1, 0])]),
            standby: TaskSet::new(),
            warmup: tasks(&[("1", &[2])]),
        }),
    };
    #[rustfmt::skip]
    let value = [
        0, 0,
        2, 2, b'0', 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, // ActiveTasks, partitions sorted, no epochs
        1, // StandbyTasks
        2, 2, b'1', 2, 0, 0, 0, 2, 0, // WarmupTasks
        0,
    ];
    assert_golden(&record, &[0, 21, 0, 1, b'g', 0, 1, b'm'], Some(&value));
}

fn golden_23() -> (Record, Vec<u8>) {
    let record = Record::Topology {
        group_id: "g".into(),
        value: Some(StreamsTopology {
            epoch: 1,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["in".into()],
                source_topic_regex: vec![],
                state_changelog_topics: vec![TopicInfo {
                    name: "c".into(),
                    partitions: 0,
                    replication_factor: 0,
                    topic_configs: vec![KeyValue {
                        key: "k".into(),
                        value: "v".into(),
                    }],
                }],
                repartition_sink_topics: vec!["r".into()],
                repartition_source_topics: vec![TopicInfo {
                    name: "r".into(),
                    partitions: 4,
                    replication_factor: 3,
                    topic_configs: vec![],
                }],
                copartition_groups: vec![CopartitionGroup {
                    source_topics: vec![0],
                    source_topic_regex: vec![],
                    repartition_source_topics: vec![0],
                }],
            }],
        }),
    };
    #[rustfmt::skip]
    let value = vec![
        0, 0,
        0, 0, 0, 1, // Epoch
        2, // one subtopology
        2, b'0', // SubtopologyId
        2, 3, b'i', b'n', // SourceTopics
        1, // SourceTopicRegex
        2, 2, b'c', 0, 0, 0, 0, 0, 0, 2, 2, b'k', 2, b'v', 0, 0, // StateChangelogTopics
        2, 2, b'r', // RepartitionSinkTopics
        2, 2, b'r', 0, 0, 0, 4, 0, 3, 1, 0, // RepartitionSourceTopics
        2, 2, 0, 0, 1, 2, 0, 0, 0, // CopartitionGroups
        0, // subtopology tags
        0,
    ];
    (record, value)
}

#[test]
fn golden_topology() {
    let (record, value) = golden_23();
    assert_golden(&record, &[0, 23, 0, 1, b'g'], Some(&value));
}

#[test]
fn golden_offset_commit() {
    let record = Record::OffsetCommit {
        group_id: "g".into(),
        topic: "t".into(),
        partition: 3,
        value: Some(OffsetCommitValue {
            offset: 42,
            leader_epoch: 5,
            metadata: String::new(),
            commit_timestamp: 1000,
        }),
    };
    #[rustfmt::skip]
    let value = [
        0, 3, // value version 3
        0, 0, 0, 0, 0, 0, 0, 42,
        0, 0, 0, 5,
        0, 0, // metadata ""
        0, 0, 0, 0, 0, 0, 3, 0xe8,
    ];
    assert_golden(
        &record,
        &[0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 3],
        Some(&value),
    );
}

#[test]
fn tombstones_have_no_value() {
    for record in [
        Record::GroupMetadata {
            group_id: "g".into(),
            value: None,
        },
        Record::MemberMetadata {
            group_id: "g".into(),
            member_id: "m".into(),
            value: None,
        },
        Record::TargetAssignmentMetadata {
            group_id: "g".into(),
            value: None,
        },
        Record::TargetAssignmentMember {
            group_id: "g".into(),
            member_id: "m".into(),
            value: None,
        },
        Record::CurrentMemberAssignment {
            group_id: "g".into(),
            member_id: "m".into(),
            value: None,
        },
        Record::Topology {
            group_id: "g".into(),
            value: None,
        },
        Record::OffsetCommit {
            group_id: "g".into(),
            topic: "t".into(),
            partition: 0,
            value: None,
        },
    ] {
        let (key, value) = encode_record(&record).unwrap();
        assert_eq!(value, None);
        assert_eq!(key[..2], record.record_type().to_be_bytes());
        assert_eq!(decode_record(&key, None).unwrap(), record);
        assert_prefixes_fail(&key, None);
        // An empty value is not a tombstone.
        assert!(decode_record(&key, Some(&[])).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// Tagged fields, versions, errors
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_tagged_fields_are_skipped() {
    // 17 with an extra tag 9 after the known ones.
    let (record, mut value) = golden_17();
    value[14] = 4;
    value.extend_from_slice(&[9, 3, 0xaa, 0xbb, 0xcc]);
    assert_eq!(decode(KEY_17, &value), record);

    // 22 with an unknown tag 5 inside the standby TaskIds, and an unknown tag 200 (varint
    // [0xc8, 0x01]) with an empty payload at the end.
    let (record, value) = golden_22();
    let standby_tags = 43; // the standby TaskIds' tagged-fields count
    assert_eq!(value[35..44], [2, 2, b'1', 2, 0, 0, 0, 0, 0]);
    let mut v = value[..standby_tags].to_vec();
    v.extend_from_slice(&[1, 5, 2, 0xde, 0xad]);
    v.extend_from_slice(&value[standby_tags + 1..value.len() - 1]);
    v.extend_from_slice(&[1, 0xc8, 0x01, 0]);
    assert_eq!(decode(KEY_22, &v), record);
}

#[test]
fn known_tagged_field_with_wrong_size_is_an_error() {
    // ValidatedTopologyEpoch declared as 5 bytes.
    let value = [
        0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 5, 0, 0, 0, 3, 0,
    ];
    let e = decode_record(KEY_17, Some(&value)).unwrap_err();
    assert!(e.to_string().contains("StreamsGroupMetadataValue"), "{e}");
    // And as 3 bytes.
    let value = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 0, 0, 0];
    let e = decode_record(KEY_17, Some(&value)).unwrap_err();
    assert!(e.to_string().contains("ValidatedTopologyEpoch"), "{e}");
}

#[test]
fn unknown_value_version_is_an_error() {
    let (_, value) = golden_17();
    for version in [1i16, -1, 0x7fff] {
        let mut v = value.clone();
        v[..2].copy_from_slice(&version.to_be_bytes());
        assert_eq!(
            decode_record(KEY_17, Some(&v)).unwrap_err(),
            RecordCodecError::UnsupportedVersion {
                record: "StreamsGroupMetadataValue",
                version
            }
        );
    }
}

#[test]
fn unknown_record_types_are_errors() {
    // 9-15 are share-group records (out of scope, docs/consumer-protocol.md §K6).
    for t in [-1i16, 9, 15, 18, 24, 100, i16::MAX] {
        let key = [&t.to_be_bytes()[..], &[0, 1, b'g']].concat();
        assert_eq!(
            decode_record(&key, None).unwrap_err(),
            RecordCodecError::UnknownType(t)
        );
    }
}

#[test]
fn invalid_utf8_and_nulls_are_errors() {
    // Key GroupId with invalid UTF-8.
    let e = decode_record(&[0, 17, 0, 1, 0xff], None).unwrap_err();
    assert!(
        e.to_string().contains("GroupId") && e.to_string().contains("UTF-8"),
        "{e}"
    );
    // Key GroupId null.
    let e = decode_record(&[0, 17, 0xff, 0xff], None).unwrap_err();
    assert_eq!(
        e,
        RecordCodecError::Wire(WireError::UnexpectedNull {
            path: "StreamsGroupMetadataKey.GroupId".into()
        })
    );
    // Trailing key bytes.
    let e = decode_record(&[0, 17, 0, 1, b'g', 0], None).unwrap_err();
    assert_eq!(
        e,
        RecordCodecError::Wire(WireError::TrailingBytes {
            message: "StreamsGroupMetadataKey",
            count: 1
        })
    );
    // 22 with a null ActiveTasks array.
    let mut v = value_22_with_active_tags(1, &[0]);
    v[11] = 0;
    v.drain(12..23);
    let e = decode_record(KEY_22, Some(&v)).unwrap_err();
    assert_eq!(
        e,
        RecordCodecError::Wire(WireError::UnexpectedNull {
            path: "StreamsGroupCurrentMemberAssignmentValue.ActiveTasks".into()
        })
    );
}

#[test]
fn hostile_counts_fail_without_allocating_for_them() {
    // 2^32 - 2 elements (compact varint 0xffffffff) in the first array of each value, and as
    // a tagged-field count.
    const HUGE: [u8; 5] = [0xff, 0xff, 0xff, 0xff, 0x0f];
    let head_17 = [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    let configs_17 = [&head_17[..], &[1, 1, 5], &HUGE].concat();
    let tags_17 = [&head_17[..], &HUGE].concat();
    let clients_19 = [
        &[0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff][..],
        &HUGE,
    ]
    .concat();
    let tasks_21 = [&[0, 0][..], &HUGE].concat();
    let partitions_22 = [&[0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 2, b'0'][..], &HUGE].concat();
    let subtopologies_23 = [&[0, 0, 0, 0, 0, 1][..], &HUGE].concat();
    let topics_23 = [&[0, 0, 0, 0, 0, 1, 2, 2, b'0', 1, 1][..], &HUGE].concat();
    let cases: [(&[u8], &[u8], &str); 7] = [
        (
            KEY_17,
            &configs_17,
            "StreamsGroupMetadataValue.TaggedFields.LastAssignmentConfigs",
        ),
        (KEY_17, &tags_17, "StreamsGroupMetadataValue.TaggedFields"),
        (
            &[0, 19, 0, 1, b'g', 0, 1, b'm'],
            &clients_19,
            "StreamsGroupMemberMetadataValue.ClientTags",
        ),
        (
            &[0, 21, 0, 1, b'g', 0, 1, b'm'],
            &tasks_21,
            "StreamsGroupTargetAssignmentMemberValue.ActiveTasks",
        ),
        (
            KEY_22,
            &partitions_22,
            "StreamsGroupCurrentMemberAssignmentValue.ActiveTasks[0].Partitions",
        ),
        (
            &[0, 23, 0, 1, b'g'],
            &subtopologies_23,
            "StreamsGroupTopologyValue.Subtopologies",
        ),
        (
            &[0, 23, 0, 1, b'g'],
            &topics_23,
            "StreamsGroupTopologyValue.Subtopologies[0].StateChangelogTopics",
        ),
    ];
    for (key, value, field) in cases {
        let mut result = None;
        let largest = largest_allocation_of(|| result = Some(decode_record(key, Some(value))));
        let e = result.unwrap().unwrap_err();
        assert!(
            matches!(e, RecordCodecError::Wire(WireError::LengthExceedsRemaining {
                ref path, remaining: 0, .. }) if path == field),
            "{e}"
        );
        assert!(largest < 4096, "{e}: allocated {largest} bytes");
    }
    // A batch frame announcing a 2 GiB key.
    let batch = [0x7f, 0xff, 0xff, 0xff, 0, 17];
    let mut result = None;
    let largest = largest_allocation_of(|| result = Some(decode_batch(&batch)));
    assert!(result.unwrap().is_err());
    assert!(largest < 4096, "allocated {largest} bytes");
}

#[test]
fn every_truncated_prefix_of_the_goldens_fails() {
    let (r17, v17) = golden_17();
    let (r22, v22) = golden_22();
    let (r23, v23) = golden_23();
    for (record, value) in [(r17, v17), (r22, v22), (r23, v23)] {
        let (key, _) = encode_record(&record).unwrap();
        assert_prefixes_fail(&key, Some(&value));
    }
}

// ---------------------------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------------------------

fn text() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[a-z0-9._-]{0,8}", 1 => "\\PC{0,6}"]
}

fn task_set() -> impl Strategy<Value = TaskSet> {
    prop::collection::btree_map(
        "[0-9]{1,2}",
        prop::collection::btree_set(any::<i32>(), 1..4),
        0..3,
    )
    .prop_map(|m| {
        let mut out = TaskSet::new();
        for (s, ps) in m {
            for p in ps {
                out.insert(&s, p);
            }
        }
        out
    })
}

fn active_tasks() -> impl Strategy<Value = ActiveTasks> {
    prop::collection::btree_map(
        "[0-9]{1,2}",
        prop::collection::btree_map(any::<i32>(), any::<i32>(), 1..4),
        0..3,
    )
    .prop_map(|m| {
        let mut out = ActiveTasks::new();
        for (s, ps) in m {
            for (p, e) in ps {
                out.insert(&s, p, e);
            }
        }
        out
    })
}

fn tasks_with_epochs() -> impl Strategy<Value = TasksWithEpochs> {
    (active_tasks(), task_set(), task_set()).prop_map(|(active, standby, warmup)| TasksWithEpochs {
        active,
        standby,
        warmup,
    })
}

fn string_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(text(), text(), 0..3)
}

fn epoch() -> impl Strategy<Value = i32> {
    prop_oneof![Just(-1), Just(0), any::<i32>()]
}

fn topic_info() -> impl Strategy<Value = TopicInfo> {
    (
        text(),
        any::<i32>(),
        any::<i16>(),
        prop::collection::vec((text(), text()), 0..2),
    )
        .prop_map(
            |(name, partitions, replication_factor, configs)| TopicInfo {
                name,
                partitions,
                replication_factor,
                topic_configs: configs
                    .into_iter()
                    .map(|(key, value)| KeyValue { key, value })
                    .collect(),
            },
        )
}

fn topology() -> impl Strategy<Value = StreamsTopology> {
    let group = (
        prop::collection::vec(any::<i16>(), 0..3),
        prop::collection::vec(any::<i16>(), 0..2),
        prop::collection::vec(any::<i16>(), 0..2),
    )
        .prop_map(
            |(source_topics, source_topic_regex, repartition_source_topics)| CopartitionGroup {
                source_topics,
                source_topic_regex,
                repartition_source_topics,
            },
        );
    let subtopology = (
        text(),
        prop::collection::vec(text(), 0..3),
        prop::collection::vec(text(), 0..2),
        prop::collection::vec(topic_info(), 0..2),
        prop::collection::vec(text(), 0..2),
        prop::collection::vec(topic_info(), 0..2),
        prop::collection::vec(group, 0..2),
    )
        .prop_map(
            |(id, sources, regex, changelogs, sinks, repartitions, groups)| Subtopology {
                subtopology_id: id,
                source_topics: sources,
                source_topic_regex: regex,
                state_changelog_topics: changelogs,
                repartition_sink_topics: sinks,
                repartition_source_topics: repartitions,
                copartition_groups: groups,
            },
        );
    (any::<i32>(), prop::collection::vec(subtopology, 0..3)).prop_map(|(epoch, subtopologies)| {
        StreamsTopology {
            epoch,
            subtopologies,
        }
    })
}

fn member_state() -> impl Strategy<Value = MemberState> {
    prop_oneof![
        Just(MemberState::Stable),
        Just(MemberState::UnrevokedTasks),
        Just(MemberState::UnreleasedTasks),
        Just(MemberState::Unknown),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    let group_metadata = (
        text(),
        prop::option::of((
            epoch(),
            any::<i64>(),
            epoch(),
            string_map(),
            epoch(),
            epoch(),
        )),
    )
        .prop_map(|(group_id, v)| Record::GroupMetadata {
            group_id,
            value: v.map(
                |(epoch, metadata_hash, validated, configs, stored, failed)| GroupMetadataValue {
                    epoch,
                    metadata_hash,
                    validated_topology_epoch: validated,
                    last_assignment_configs: configs,
                    stored_description_topology_epoch: stored,
                    failed_description_topology_epoch: failed,
                },
            ),
        });
    let member_metadata = (
        text(),
        text(),
        prop::option::of((
            (
                prop::option::of(text()),
                prop::option::of(text()),
                text(),
                text(),
            ),
            (epoch(), epoch(), text()),
            prop::option::of((text(), any::<u16>())),
            string_map(),
        )),
    )
        .prop_map(|(group_id, member_id, v)| Record::MemberMetadata {
            group_id,
            member_id,
            value: v.map(
                |(
                    (instance_id, rack_id, client_id, client_host),
                    (rebalance_timeout_ms, topology_epoch, process_id),
                    endpoint,
                    client_tags,
                )| MemberMetadataValue {
                    instance_id,
                    rack_id,
                    client_id,
                    client_host,
                    rebalance_timeout_ms,
                    topology_epoch,
                    process_id,
                    user_endpoint: endpoint.map(|(host, port)| UserEndpoint { host, port }),
                    client_tags,
                },
            ),
        });
    let target_metadata = (
        text(),
        prop::option::of((epoch(), prop_oneof![Just(0i64), any::<i64>()])),
    )
        .prop_map(|(group_id, v)| Record::TargetAssignmentMetadata {
            group_id,
            value: v.map(|(assignment_epoch, assignment_timestamp)| {
                TargetAssignmentMetadataValue {
                    assignment_epoch,
                    assignment_timestamp,
                }
            }),
        });
    let target_member = (
        text(),
        text(),
        prop::option::of((task_set(), task_set(), task_set())),
    )
        .prop_map(|(group_id, member_id, v)| Record::TargetAssignmentMember {
            group_id,
            member_id,
            value: v.map(|(active, standby, warmup)| TasksTuple {
                active,
                standby,
                warmup,
            }),
        });
    let current = (
        text(),
        text(),
        prop::option::of((
            epoch(),
            epoch(),
            member_state(),
            tasks_with_epochs(),
            tasks_with_epochs(),
        )),
    )
        .prop_map(|(group_id, member_id, v)| Record::CurrentMemberAssignment {
            group_id,
            member_id,
            value: v.map(
                |(member_epoch, previous_member_epoch, state, assigned, pending)| {
                    CurrentMemberAssignmentValue {
                        member_epoch,
                        previous_member_epoch,
                        state,
                        assigned,
                        pending_revocation: pending,
                    }
                },
            ),
        });
    let topology = (text(), prop::option::of(topology()))
        .prop_map(|(group_id, value)| Record::Topology { group_id, value });
    let offset = (
        text(),
        text(),
        any::<i32>(),
        prop::option::of((any::<i64>(), epoch(), text(), any::<i64>())),
    )
        .prop_map(|(group_id, topic, partition, v)| Record::OffsetCommit {
            group_id,
            topic,
            partition,
            value: v.map(
                |(offset, leader_epoch, metadata, commit_timestamp)| OffsetCommitValue {
                    offset,
                    leader_epoch,
                    metadata,
                    commit_timestamp,
                },
            ),
        });
    prop_oneof![
        group_metadata,
        member_metadata,
        target_metadata,
        target_member,
        current,
        topology,
        offset
    ]
}

/// The record types groupcoord reads, as key prefixes, so garbage reaches the value decoders.
const TYPES: [i16; 8] = [0, 1, 17, 19, 20, 21, 22, 23];

proptest! {
    #[test]
    fn every_record_round_trips(record in record()) {
        let (key, value) = encode_record(&record).unwrap();
        prop_assert_eq!(decode_record(&key, value.as_deref()).unwrap(), record);
    }

    #[test]
    fn every_truncated_prefix_fails(record in record()) {
        let (key, value) = encode_record(&record).unwrap();
        assert_prefixes_fail(&key, value.as_deref());
    }

    #[test]
    fn garbage_never_panics(
        key in prop::collection::vec(any::<u8>(), 0..40),
        value in prop::option::of(prop::collection::vec(any::<u8>(), 0..200)),
    ) {
        let _ = decode_record(&key, value.as_deref());
        let _ = decode_batch(&key);
        if let Some(v) = &value {
            let _ = decode_batch(v);
        }
    }

    #[test]
    fn garbage_values_of_known_types_never_panic(
        t in prop::sample::select(&TYPES[..]),
        key_rest in prop::collection::vec(any::<u8>(), 0..12),
        value in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let key = [&t.to_be_bytes()[..], &key_rest].concat();
        let _ = decode_record(&key, Some(&value));
        // With a valid key and a valid version prefix, so the struct decoders see the garbage.
        let key = match t {
            0 | 1 => [&t.to_be_bytes()[..], &[0, 1, b'g', 0, 1, b't', 0, 0, 0, 0]].concat(),
            19 | 21 | 22 => [&t.to_be_bytes()[..], &[0, 1, b'g', 0, 1, b'm']].concat(),
            _ => [&t.to_be_bytes()[..], &[0, 1, b'g']].concat(),
        };
        for version in [0u8, 1, 3, 4] {
            let value = [&[0, version][..], &value].concat();
            let _ = decode_record(&key, Some(&value));
        }
    }

    /// Valid encodings with bytes changed, inserted or removed: never a panic, and whatever
    /// still decodes re-encodes to a record that decodes to itself.
    #[test]
    fn mutated_records_never_panic(
        record in record(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        let (key, value) = encode_record(&record).unwrap();
        let Some(mut value) = value else { return Ok(()) };
        for (at, byte, op) in edits {
            if value.is_empty() {
                break;
            }
            let i = at.index(value.len());
            match op {
                0 => value[i] = byte,
                1 => value.insert(i, byte),
                _ => { value.remove(i); }
            }
        }
        if let Ok(decoded) = decode_record(&key, Some(&value)) {
            let (k, v) = encode_record(&decoded).unwrap();
            prop_assert_eq!(decode_record(&k, v.as_deref()).unwrap(), decoded);
        }
    }

    #[test]
    fn batches_round_trip(records in prop::collection::vec(record(), 0..6)) {
        let bytes = encode_batch(&records).unwrap();
        prop_assert_eq!(decode_batch(&bytes).unwrap(), records.clone());
        // A prefix decodes only when it ends on a record boundary, to those records.
        for n in 0..bytes.len() {
            if let Ok(prefix) = decode_batch(&bytes[..n]) {
                prop_assert_eq!(&prefix[..], &records[..prefix.len()]);
                prop_assert_eq!(encode_batch(&prefix).unwrap().len(), n);
            }
        }
    }
}

#[test]
fn batch_of_goldens_round_trips_and_reports_the_bad_record() {
    let records = vec![golden_17().0, golden_22().0, golden_23().0];
    let bytes = encode_batch(&records).unwrap();
    assert_eq!(decode_batch(&bytes).unwrap(), records);

    // Record 1's key type becomes 18.
    let (key, value) = encode_record(&records[0]).unwrap();
    let first_len = key.len() + value.unwrap().len() + 8;
    let mut bad = bytes.clone();
    bad[first_len + 5] = 18;
    let e = decode_batch(&bad).unwrap_err();
    assert_eq!(
        e,
        RecordCodecError::InBatch {
            index: 1,
            source: Box::new(RecordCodecError::UnknownType(18))
        }
    );
    assert_eq!(e.to_string(), "batch record 1: unknown record type 18");
}
