//! Outcomes that cannot be damaged: offset commit metadata is bounded by
//! `offset.metadata.max.bytes` (OFFSET_METADATA_TOO_LARGE per partition, as Kafka), and an
//! operation whose records the log could not store as sent, or that cannot replay, fails with
//! UNKNOWN_SERVER_ERROR, writes nothing and leaves the state as it was.
// Native only: plain `#[test]`s do not run under wasm-bindgen-test; the wasm API has its
// browser tests in tests/wasm_browser.rs.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use groupcoord::config::CoordinatorConfig;
use groupcoord::coordinator::{
    Coordinator, OffsetCommitInput, OffsetCommitPartition, OffsetCommitTopic, RequestContext,
    TimerChange, TimerKey,
};
use groupcoord::error::ErrorCode;
use groupcoord::protocol::{StreamsGroupHeartbeatRequest, Subtopology, Topology};
use groupcoord::records::{
    GroupMetadataValue, MemberMetadataValue, OffsetCommitValue, Record,
    TargetAssignmentMetadataValue,
};
use groupcoord::topology::MetadataImage;
use groupcoord::types::{Millis, TasksTuple};

const FORTY_KB: usize = 40 * 1024;

fn partition(partition: i32, metadata: Option<String>) -> OffsetCommitPartition {
    OffsetCommitPartition {
        partition,
        offset: 100 + partition as i64,
        leader_epoch: 1,
        metadata,
    }
}

/// A commit outside any group membership (member epoch -1, as an admin client commits).
fn commit(partitions: Vec<OffsetCommitPartition>) -> OffsetCommitInput {
    OffsetCommitInput {
        group_id: "g".into(),
        member_id: String::new(),
        member_epoch: -1,
        group_instance_id: None,
        api_version: 9,
        transactional: false,
        topics: vec![OffsetCommitTopic {
            name: "t".into(),
            partitions,
        }],
    }
}

fn codes(response: &[(String, Vec<(i32, ErrorCode)>)]) -> Vec<(i32, ErrorCode)> {
    response.iter().flat_map(|(_, p)| p.clone()).collect()
}

#[test]
fn metadata_over_the_limit_gets_offset_metadata_too_large_per_partition() {
    let mut c = Coordinator::new(CoordinatorConfig::default());
    let at_limit = "m".repeat(4096);
    let out = c.offset_commit(
        Millis(7),
        &commit(vec![
            partition(0, Some("x".repeat(FORTY_KB))),
            partition(1, Some(at_limit.clone())),
            partition(2, None),
            partition(3, Some("m".repeat(4097))),
        ]),
    );
    assert_eq!(
        codes(&out.response),
        [
            (0, ErrorCode::OFFSET_METADATA_TOO_LARGE),
            (1, ErrorCode::NONE),
            (2, ErrorCode::NONE),
            (3, ErrorCode::OFFSET_METADATA_TOO_LARGE),
        ]
    );
    // Only the accepted partitions are written, with the metadata exactly as sent.
    assert_eq!(out.records.len(), 2);
    let stored = c.offsets("g").expect("offsets of g");
    assert_eq!(
        stored.iter().map(|(t, p, _)| (t, p)).collect::<Vec<_>>(),
        [("t", 1), ("t", 2)]
    );
    assert_eq!(
        stored.get("t", 1).map(|v| v.metadata.as_str()),
        Some(at_limit.as_str())
    );
    assert_eq!(stored.get("t", 2).map(|v| v.metadata.as_str()), Some(""));
}

#[test]
fn metadata_length_counts_utf16_code_units_as_kafka_does() {
    let mut c = Coordinator::new(CoordinatorConfig::default());
    // 4096 two-byte characters: 8192 UTF-8 bytes but 4096 Java chars, accepted by Kafka.
    // 2049 emoji: 8196 bytes and 4098 Java chars (surrogate pairs), refused.
    let out = c.offset_commit(
        Millis(1),
        &commit(vec![
            partition(0, Some("é".repeat(4096))),
            partition(1, Some("😀".repeat(2049))),
        ]),
    );
    assert_eq!(
        codes(&out.response),
        [
            (0, ErrorCode::NONE),
            (1, ErrorCode::OFFSET_METADATA_TOO_LARGE)
        ]
    );
}

#[test]
fn the_limit_is_the_configured_one() {
    let config = CoordinatorConfig {
        offset_metadata_max_bytes: 3,
        ..CoordinatorConfig::default()
    };
    let mut c = Coordinator::new(config);
    let out = c.offset_commit(
        Millis(1),
        &commit(vec![
            partition(0, Some("abc".into())),
            partition(1, Some("abcd".into())),
        ]),
    );
    assert_eq!(
        codes(&out.response),
        [
            (0, ErrorCode::NONE),
            (1, ErrorCode::OFFSET_METADATA_TOO_LARGE)
        ]
    );
}

/// With the limit raised above what Kafka's record layout can hold (a string of at most 32767
/// bytes), 40 KB of metadata passes the check but cannot be stored as sent: the commit must not
/// be acknowledged, and nothing is written, not even the other partitions.
#[test]
fn metadata_the_log_cannot_store_as_sent_is_not_acknowledged() {
    let config = CoordinatorConfig {
        offset_metadata_max_bytes: 1 << 20,
        ..CoordinatorConfig::default()
    };
    let mut c = Coordinator::new(config);
    let before = c.state_hash();
    let out = c.offset_commit(
        Millis(1),
        &commit(vec![
            partition(0, Some("small".into())),
            partition(1, Some("x".repeat(FORTY_KB))),
        ]),
    );
    assert_eq!(
        codes(&out.response),
        [
            (0, ErrorCode::UNKNOWN_SERVER_ERROR),
            (1, ErrorCode::UNKNOWN_SERVER_ERROR)
        ]
    );
    assert!(out.records.is_empty(), "{:?}", out.records.len());
    assert!(c.offsets("g").is_none());
    assert_eq!(c.state_hash(), before);
}

fn join(process_id: String) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m1".into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        process_id: Some(process_id),
        topology: Some(Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                ..Default::default()
            }],
            ..Default::default()
        }),
        active_tasks: Some(vec![]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    }
}

fn context() -> RequestContext {
    RequestContext {
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        api_version: 1,
    }
}

/// A join whose member record cannot be stored as sent (a 40 KB process id reaches the core
/// through its API; the wire decoders refuse it earlier): UNKNOWN_SERVER_ERROR, no group, no
/// records, no timers.
#[test]
fn a_join_whose_records_cannot_be_stored_fails_and_changes_nothing() {
    let mut c = Coordinator::new(CoordinatorConfig::default());
    let mut topics = MetadataImage::default();
    topics.topics.insert("input".into(), 3);
    c.set_metadata(topics);
    let before = c.state_hash();

    let out = c.streams_group_heartbeat(Millis(0), &context(), &join("p".repeat(FORTY_KB)));
    assert_eq!(out.response.error_code, ErrorCode::UNKNOWN_SERVER_ERROR.0);
    assert!(out.records.is_empty());
    assert!(out.timers.is_empty());
    assert!(c.group("app").is_none());
    assert!(c.timer_keys().is_empty());
    assert_eq!(c.state_hash(), before);

    // The same join with a process id the log can hold succeeds.
    let out = c.streams_group_heartbeat(Millis(0), &context(), &join("p1".into()));
    assert_eq!(out.response.error_code, 0);
    assert!(!out.records.is_empty());
}

/// A state the live path cannot delete cleanly: a target assignment left for a member that is
/// gone (as a damaged or badly compacted log can leave). Deleting the empty group writes
/// tombstones for its offsets, then the target assignment metadata tombstone, which replay
/// refuses while a member target remains. The whole deletion must fail and be undone,
/// including the offset tombstones applied before the refused record.
#[test]
fn a_delete_whose_records_cannot_replay_fails_and_is_rolled_back() {
    let mut c = Coordinator::new(CoordinatorConfig::default());
    let log = [
        Record::GroupMetadata {
            group_id: "g".into(),
            value: Some(GroupMetadataValue::default()),
        },
        Record::TargetAssignmentMember {
            group_id: "g".into(),
            member_id: "gone".into(),
            value: Some(TasksTuple::default()),
        },
        Record::TargetAssignmentMetadata {
            group_id: "g".into(),
            value: Some(TargetAssignmentMetadataValue {
                assignment_epoch: 1,
                assignment_timestamp: 0,
            }),
        },
        Record::OffsetCommit {
            group_id: "g".into(),
            topic: "t".into(),
            partition: 0,
            value: Some(OffsetCommitValue {
                offset: 42,
                leader_epoch: 1,
                metadata: "m".into(),
                commit_timestamp: 0,
            }),
        },
    ];
    for r in &log {
        c.replay(r).expect("the damaged state replays");
    }
    let before = c.state_hash();

    let out = c.delete_groups(Millis(5), &["g".into()]);
    assert_eq!(
        out.response,
        [("g".to_string(), ErrorCode::UNKNOWN_SERVER_ERROR)]
    );
    assert!(
        out.records.is_empty(),
        "nothing to persist: {:?}",
        out.records
    );
    assert!(c.group("g").is_some());
    assert_eq!(
        c.offsets("g").map(|o| o.len()),
        Some(1),
        "offset tombstone undone"
    );
    assert_eq!(c.state_hash(), before);
}

/// A session timeout whose fencing cannot be stored (a member id longer than the log can hold,
/// loaded from a damaged log) changes nothing and is retried after 500 ms, as Kafka's
/// coordinator runtime retries a failed timer operation.
#[test]
fn a_timer_whose_records_cannot_be_stored_changes_nothing_and_is_retried() {
    let mut c = Coordinator::new(CoordinatorConfig::default());
    let member_id = "m".repeat(FORTY_KB);
    let log = [
        Record::GroupMetadata {
            group_id: "g".into(),
            value: Some(GroupMetadataValue::default()),
        },
        Record::MemberMetadata {
            group_id: "g".into(),
            member_id: member_id.clone(),
            value: Some(MemberMetadataValue {
                instance_id: None,
                rack_id: None,
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                rebalance_timeout_ms: 30_000,
                topology_epoch: 0,
                process_id: "p".into(),
                user_endpoint: None,
                client_tags: BTreeMap::new(),
            }),
        },
    ];
    for r in &log {
        c.replay(r).expect("replays");
    }
    let armed = c.on_loaded(Millis(0));
    let session = TimerKey::SessionTimeout {
        group_id: "g".into(),
        member_id: member_id.clone(),
    };
    assert_eq!(
        armed,
        [TimerChange::Schedule {
            key: session.clone(),
            deadline: Millis(45_000)
        }]
    );
    let before = c.state_hash();

    let fired = c.fire_due_timers(Millis(45_000));
    assert_eq!(fired.len(), 1);
    assert!(fired[0].records.is_empty());
    assert_eq!(
        fired[0].timers,
        [TimerChange::Schedule {
            key: session.clone(),
            deadline: Millis(45_500)
        }]
    );
    assert_eq!(c.state_hash(), before);
    assert!(c.group("g").unwrap().members.contains_key(&member_id));
    assert_eq!(c.timer_deadline(&session), Some(Millis(45_500)));
}
