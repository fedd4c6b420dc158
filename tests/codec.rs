//! Wire codec of API keys 88 (StreamsGroupHeartbeat) and 89 (StreamsGroupDescribe), v0-1.
//!
//! Golden vectors are written by hand from the Kafka 4.4 JSON schemas (field by field, see the
//! comments), not produced by the codec, so a layout mistake fails them.
// Native only: plain `#[test]`s (and proptest) do not run under wasm-bindgen-test; the wasm
// API has its browser tests in tests/wasm_browser.rs.
#![cfg(not(target_arch = "wasm32"))]

use groupcoord::protocol::*;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn s(v: &str) -> String {
    v.to_owned()
}

fn tag(tag: u32, data: &[u8]) -> RawTaggedField {
    RawTaggedField {
        tag,
        data: data.to_vec(),
    }
}

/// Compact string bytes.
fn cs(v: &str) -> Vec<u8> {
    assert!(v.len() < 127);
    let mut out = vec![v.len() as u8 + 1];
    out.extend_from_slice(v.as_bytes());
    out
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn kv(k: &str, v: &str) -> KeyValue {
    KeyValue {
        key: s(k),
        value: s(v),
        unknown_tagged_fields: vec![],
    }
}

fn task_ids(id: &str, partitions: &[i32]) -> TaskIds {
    TaskIds {
        subtopology_id: s(id),
        partitions: partitions.to_vec(),
        unknown_tagged_fields: vec![],
    }
}

fn task_offset(id: &str, partition: i32, offset: i64) -> TaskOffset {
    TaskOffset {
        subtopology_id: s(id),
        partition,
        offset,
        unknown_tagged_fields: vec![],
    }
}

fn endpoint(host: &str, port: u16) -> Endpoint {
    Endpoint {
        host: s(host),
        port,
        unknown_tagged_fields: vec![],
    }
}

fn topic_info(name: &str, partitions: i32, rf: i16, configs: Vec<KeyValue>) -> TopicInfo {
    TopicInfo {
        name: s(name),
        partitions,
        replication_factor: rf,
        topic_configs: configs,
        unknown_tagged_fields: vec![],
    }
}

// ---------------------------------------------------------------------------------------------
// Fully populated messages (every field non-default, unknown tagged fields at several depths)
// ---------------------------------------------------------------------------------------------

fn full_heartbeat_request() -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: s("app"),
        member_id: s("member-1"),
        member_epoch: 7,
        endpoint_information_epoch: 3,
        instance_id: Some(s("instance-a")),
        rack_id: Some(s("rack-1")),
        rebalance_timeout_ms: 30_000,
        topology: Some(Topology {
            epoch: 2,
            subtopologies: vec![
                Subtopology {
                    subtopology_id: s("0"),
                    source_topics: vec![s("input"), s("other")],
                    source_topic_regex: vec![s("in-.*")],
                    state_changelog_topics: vec![topic_info(
                        "app-store-changelog",
                        0,
                        3,
                        vec![kv("cleanup.policy", "compact")],
                    )],
                    repartition_sink_topics: vec![s("app-repartition")],
                    repartition_source_topics: vec![],
                    copartition_groups: vec![CopartitionGroup {
                        source_topics: vec![0, 1],
                        source_topic_regex: vec![0],
                        repartition_source_topics: vec![],
                        unknown_tagged_fields: vec![tag(9, &[1, 2, 3])],
                    }],
                    unknown_tagged_fields: vec![],
                },
                Subtopology {
                    subtopology_id: s("1"),
                    source_topics: vec![],
                    source_topic_regex: vec![],
                    state_changelog_topics: vec![],
                    repartition_sink_topics: vec![],
                    repartition_source_topics: vec![topic_info("app-repartition", 4, 0, vec![])],
                    copartition_groups: vec![],
                    unknown_tagged_fields: vec![],
                },
            ],
            unknown_tagged_fields: vec![tag(0, b"topology-tag")],
        }),
        active_tasks: Some(vec![task_ids("0", &[0, 1, 2]), task_ids("1", &[3])]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![task_ids("1", &[0])]),
        process_id: Some(s("process-uuid")),
        user_endpoint: Some(endpoint("localhost", 8080)),
        client_tags: Some(vec![kv("az", "eu-1a")]),
        task_offsets: Some(vec![task_offset("0", 1, 42)]),
        task_end_offsets: Some(vec![task_offset("0", 1, i64::MAX)]),
        shutdown_application: true,
        unknown_tagged_fields: vec![tag(1, &[0xaa]), tag(300, &[])],
    }
}

fn full_heartbeat_response(version: i16) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        throttle_time_ms: 10,
        error_code: 0,
        error_message: Some(s("all good")),
        member_id: s("member-1"),
        member_epoch: 8,
        heartbeat_interval_ms: 5_000,
        acceptable_recovery_lag_legacy: if version == 0 { 10_000 } else { 0 },
        task_offset_interval_ms: 60_000,
        acceptable_recovery_lag: if version == 0 { -1 } else { 1 << 40 },
        status: Some(vec![Status {
            status_code: status_code::MISSING_INTERNAL_TOPICS,
            status_detail: s("Internal topics are missing: [x]"),
            unknown_tagged_fields: vec![tag(2, &[9])],
        }]),
        active_tasks: Some(vec![task_ids("0", &[0, 1])]),
        standby_tasks: Some(vec![task_ids("0", &[2])]),
        warmup_tasks: Some(vec![]),
        topology_description_required: version >= 1,
        endpoint_information_epoch: 4,
        partitions_by_user_endpoint: Some(vec![EndpointToPartitions {
            user_endpoint: endpoint("h1", u16::MAX),
            active_partitions: vec![TopicPartition {
                topic: s("input"),
                partitions: vec![0, 1],
                unknown_tagged_fields: vec![],
            }],
            standby_partitions: vec![TopicPartition {
                topic: s("app-store-changelog"),
                partitions: vec![2],
                unknown_tagged_fields: vec![],
            }],
            unknown_tagged_fields: vec![],
        }]),
        unknown_tagged_fields: vec![tag(5, b"x")],
    }
}

fn full_describe_request(version: i16) -> StreamsGroupDescribeRequest {
    StreamsGroupDescribeRequest {
        group_ids: vec![s("app"), s("other")],
        include_authorized_operations: true,
        include_topology_description: version >= 1,
        unknown_tagged_fields: vec![tag(4, &[4, 4])],
    }
}

fn sample_description_content() -> TopologyDescriptionContent {
    let node = |name: &str, node_type: i8| TopologyDescriptionNode {
        name: s(name),
        node_type,
        source_topics: vec![],
        sink_topic: None,
        stores: vec![],
        successors: vec![],
        unknown_tagged_fields: vec![],
    };
    TopologyDescriptionContent {
        subtopologies: vec![TopologyDescriptionSubtopology {
            subtopology_id: s("0"),
            nodes: vec![
                TopologyDescriptionNode {
                    source_topics: vec![s("input")],
                    successors: vec![s("KSTREAM-PROCESSOR-0000000001")],
                    ..node("KSTREAM-SOURCE-0000000000", 1)
                },
                TopologyDescriptionNode {
                    stores: vec![s("store")],
                    successors: vec![s("KSTREAM-SINK-0000000002")],
                    ..node("KSTREAM-PROCESSOR-0000000001", 2)
                },
                TopologyDescriptionNode {
                    sink_topic: Some(s("output")),
                    ..node("KSTREAM-SINK-0000000002", 3)
                },
            ],
            unknown_tagged_fields: vec![],
        }],
        global_stores: vec![TopologyDescriptionGlobalStore {
            source: TopologyDescriptionNode {
                source_topics: vec![s("global-topic")],
                ..node("KSTREAM-SOURCE-0000000003", 1)
            },
            processor: TopologyDescriptionNode {
                stores: vec![s("global-store")],
                ..node("KTABLE-SOURCE-0000000004", 2)
            },
            unknown_tagged_fields: vec![tag(1, &[1])],
        }],
        unknown_tagged_fields: vec![],
    }
}

fn full_described_group(version: i16) -> DescribedGroup {
    let assignment = |active: &[i32]| Assignment {
        active_tasks: vec![task_ids("0", active)],
        standby_tasks: vec![task_ids("1", &[0])],
        warmup_tasks: vec![],
        unknown_tagged_fields: vec![],
    };
    DescribedGroup {
        error_code: 0,
        error_message: None,
        group_id: s("app"),
        group_state: s("Stable"),
        group_epoch: 5,
        assignment_epoch: 5,
        topology: Some(DescribedTopology {
            epoch: 2,
            subtopologies: Some(vec![DescribedSubtopology {
                subtopology_id: s("0"),
                source_topics: vec![s("input")],
                repartition_sink_topics: vec![s("app-repartition")],
                state_changelog_topics: vec![topic_info("app-store-changelog", 4, 0, vec![])],
                repartition_source_topics: vec![topic_info(
                    "app-repartition",
                    4,
                    3,
                    vec![kv("retention.ms", "-1")],
                )],
                unknown_tagged_fields: vec![],
            }]),
            unknown_tagged_fields: vec![],
        }),
        members: vec![DescribedMember {
            member_id: s("member-1"),
            member_epoch: 5,
            instance_id: Some(s("instance-a")),
            rack_id: None,
            client_id: s("client"),
            client_host: s("/127.0.0.1"),
            topology_epoch: 2,
            process_id: s("process-uuid"),
            user_endpoint: Some(endpoint("localhost", 8080)),
            client_tags: vec![kv("az", "eu-1a")],
            task_offsets: vec![task_offset("0", 0, 100)],
            task_end_offsets: vec![task_offset("0", 0, 120)],
            assignment: assignment(&[0, 1]),
            target_assignment: assignment(&[0, 1, 2]),
            is_classic: false,
            unknown_tagged_fields: vec![tag(0, &[])],
        }],
        authorized_operations: 0x0000_0b38,
        topology_description: (version >= 1)
            .then(|| TopologyDescription::from_content(&sample_description_content()).unwrap()),
        topology_description_status: if version >= 1 { 3 } else { 0 },
        assignor_name: (version >= 1).then(|| s("sticky")),
        unknown_tagged_fields: vec![],
    }
}

fn full_describe_response(version: i16) -> StreamsGroupDescribeResponse {
    StreamsGroupDescribeResponse {
        throttle_time_ms: 1,
        groups: vec![
            full_described_group(version),
            DescribedGroup {
                error_code: 69,
                error_message: Some(s("Group other not found.")),
                group_id: s("other"),
                ..DescribedGroup::default()
            },
        ],
        unknown_tagged_fields: vec![],
    }
}

/// Encodes every fully populated message at `version`.
fn all_full_messages(version: i16) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "heartbeat request",
            full_heartbeat_request().encode(version).unwrap(),
        ),
        (
            "heartbeat response",
            full_heartbeat_response(version).encode(version).unwrap(),
        ),
        (
            "describe request",
            full_describe_request(version).encode(version).unwrap(),
        ),
        (
            "describe response",
            full_describe_response(version).encode(version).unwrap(),
        ),
    ]
}

/// Decodes `bytes` as the message named `kind`, discarding the value.
fn decode_kind(kind: &str, bytes: &[u8], version: i16) -> Result<(), CodecError> {
    match kind {
        "heartbeat request" => StreamsGroupHeartbeatRequest::decode(bytes, version).map(drop),
        "heartbeat response" => StreamsGroupHeartbeatResponse::decode(bytes, version).map(drop),
        "describe request" => StreamsGroupDescribeRequest::decode(bytes, version).map(drop),
        "describe response" => StreamsGroupDescribeResponse::decode(bytes, version).map(drop),
        other => panic!("unknown kind {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

#[test]
fn heartbeat_request_round_trips_at_v0_and_v1() {
    let msg = full_heartbeat_request();
    for version in [0, 1] {
        let bytes = msg.encode(version).unwrap();
        assert_eq!(
            StreamsGroupHeartbeatRequest::decode(&bytes, version).unwrap(),
            msg
        );
    }
    // The request is identical at both versions.
    assert_eq!(msg.encode(0).unwrap(), msg.encode(1).unwrap());
}

#[test]
fn heartbeat_request_with_nulls_round_trips() {
    let msg = StreamsGroupHeartbeatRequest {
        group_id: s("g"),
        member_id: s("m"),
        member_epoch: -1,
        ..StreamsGroupHeartbeatRequest::default()
    };
    for version in [0, 1] {
        let bytes = msg.encode(version).unwrap();
        assert_eq!(
            StreamsGroupHeartbeatRequest::decode(&bytes, version).unwrap(),
            msg
        );
    }
}

#[test]
fn heartbeat_response_round_trips_at_v0_and_v1() {
    for version in [0, 1] {
        let msg = full_heartbeat_response(version);
        let bytes = msg.encode(version).unwrap();
        assert_eq!(
            StreamsGroupHeartbeatResponse::decode(&bytes, version).unwrap(),
            msg
        );
    }
}

#[test]
fn describe_request_round_trips_at_v0_and_v1() {
    for version in [0, 1] {
        let msg = full_describe_request(version);
        let bytes = msg.encode(version).unwrap();
        assert_eq!(
            StreamsGroupDescribeRequest::decode(&bytes, version).unwrap(),
            msg
        );
    }
}

#[test]
fn describe_response_round_trips_at_v0_and_v1() {
    for version in [0, 1] {
        let msg = full_describe_response(version);
        let bytes = msg.encode(version).unwrap();
        let decoded = StreamsGroupDescribeResponse::decode(&bytes, version).unwrap();
        assert_eq!(decoded, msg);
        // Re-encoding is byte-identical.
        assert_eq!(decoded.encode(version).unwrap(), bytes);
    }
}

#[test]
fn topology_description_content_round_trips_through_raw() {
    let content = sample_description_content();
    let description = TopologyDescription::from_content(&content).unwrap();
    assert_eq!(description.decode_content().unwrap(), content);

    let msg = full_describe_response(1);
    let bytes = msg.encode(1).unwrap();
    let decoded = StreamsGroupDescribeResponse::decode(&bytes, 1).unwrap();
    let got = decoded.groups[0].topology_description.as_ref().unwrap();
    assert_eq!(got.decode_content().unwrap(), content);
}

// ---------------------------------------------------------------------------------------------
// Golden vectors (hand-built from the schemas)
// ---------------------------------------------------------------------------------------------

fn golden_heartbeat_request() -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: s("g"),
        member_id: s("m"),
        member_epoch: 0,
        endpoint_information_epoch: 5,
        instance_id: None,
        rack_id: Some(s("r")),
        rebalance_timeout_ms: 30_000,
        topology: Some(Topology {
            epoch: 1,
            subtopologies: vec![Subtopology {
                subtopology_id: s("0"),
                source_topics: vec![s("in")],
                source_topic_regex: vec![],
                state_changelog_topics: vec![topic_info("c", 0, 0, vec![kv("k", "v")])],
                repartition_sink_topics: vec![],
                repartition_source_topics: vec![],
                copartition_groups: vec![CopartitionGroup {
                    source_topics: vec![0],
                    ..CopartitionGroup::default()
                }],
                unknown_tagged_fields: vec![],
            }],
            unknown_tagged_fields: vec![],
        }),
        active_tasks: Some(vec![task_ids("0", &[0, 1])]),
        standby_tasks: Some(vec![]),
        warmup_tasks: None,
        process_id: Some(s("p")),
        user_endpoint: Some(endpoint("h", 8080)),
        client_tags: None,
        task_offsets: Some(vec![task_offset("0", 1, 42)]),
        task_end_offsets: None,
        shutdown_application: false,
        unknown_tagged_fields: vec![],
    }
}

/// `golden_heartbeat_request()` on the wire, without its final tagged-field section.
fn golden_heartbeat_request_bytes_without_tags() -> Vec<u8> {
    cat(&[
        &cs("g"),            // GroupId
        &cs("m"),            // MemberId
        &[0, 0, 0, 0],       // MemberEpoch 0
        &[0, 0, 0, 5],       // EndpointInformationEpoch 5
        &[0x00],             // InstanceId null
        &cs("r"),            // RackId
        &[0, 0, 0x75, 0x30], // RebalanceTimeoutMs 30000
        &[0x01],             // Topology present
        &[0, 0, 0, 1],       //   Epoch 1
        &[0x02],             //   Subtopologies: 1 element
        &cs("0"),            //     SubtopologyId
        &[0x02],             //     SourceTopics: 1 element
        &cs("in"),
        &[0x01],       //     SourceTopicRegex: empty
        &[0x02],       //     StateChangelogTopics: 1 element
        &cs("c"),      //       Name
        &[0, 0, 0, 0], //       Partitions 0
        &[0, 0],       //       ReplicationFactor 0
        &[0x02],       //       TopicConfigs: 1 element
        &cs("k"),
        &cs("v"),
        &[0x00],       //         KeyValue tags
        &[0x00],       //       TopicInfo tags
        &[0x01],       //     RepartitionSinkTopics: empty
        &[0x01],       //     RepartitionSourceTopics: empty
        &[0x02],       //     CopartitionGroups: 1 element
        &[0x02, 0, 0], //       SourceTopics [0] (int16)
        &[0x01],       //       SourceTopicRegex []
        &[0x01],       //       RepartitionSourceTopics []
        &[0x00],       //       CopartitionGroup tags
        &[0x00],       //     Subtopology tags
        &[0x00],       //   Topology tags
        &[0x02],       // ActiveTasks: 1 element
        &cs("0"),
        &[0x03, 0, 0, 0, 0, 0, 0, 0, 1], //   Partitions [0, 1]
        &[0x00],                         //   TaskIds tags
        &[0x01],                         // StandbyTasks: empty
        &[0x00],                         // WarmupTasks null
        &cs("p"),                        // ProcessId
        &[0x01],                         // UserEndpoint present
        &cs("h"),
        &[0x1f, 0x90], //   Port 8080 (uint16)
        &[0x00],       //   Endpoint tags
        &[0x00],       // ClientTags null
        &[0x02],       // TaskOffsets: 1 element
        &cs("0"),
        &[0, 0, 0, 1],              //   Partition 1
        &[0, 0, 0, 0, 0, 0, 0, 42], // Offset 42
        &[0x00],                    //   TaskOffset tags
        &[0x00],                    // TaskEndOffsets null
        &[0x00],                    // ShutdownApplication false
    ])
}

#[test]
fn golden_heartbeat_request_v0_v1() {
    let expected = cat(&[&golden_heartbeat_request_bytes_without_tags(), &[0x00]]);
    let msg = golden_heartbeat_request();
    for version in [0, 1] {
        assert_eq!(msg.encode(version).unwrap(), expected, "v{version}");
        assert_eq!(
            StreamsGroupHeartbeatRequest::decode(&expected, version).unwrap(),
            msg
        );
    }
}

#[test]
fn unknown_tagged_fields_are_preserved_byte_for_byte() {
    // Two top-level tagged fields: tag 1 = [aa bb], tag 200 (varint c8 01) = [].
    let wire = cat(&[
        &golden_heartbeat_request_bytes_without_tags(),
        &[0x02, 0x01, 0x02, 0xaa, 0xbb, 0xc8, 0x01, 0x00],
    ]);
    let decoded = StreamsGroupHeartbeatRequest::decode(&wire, 0).unwrap();
    assert_eq!(
        decoded.unknown_tagged_fields,
        vec![tag(1, &[0xaa, 0xbb]), tag(200, &[])]
    );
    assert_eq!(decoded.encode(0).unwrap(), wire);

    // Given out of order, they are written in ascending tag order.
    let mut shuffled = decoded.clone();
    shuffled.unknown_tagged_fields.reverse();
    assert_eq!(shuffled.encode(0).unwrap(), wire);

    // The same tag twice cannot be encoded.
    let mut dup = decoded;
    dup.unknown_tagged_fields.push(tag(1, &[]));
    let err = dup.encode(0).unwrap_err();
    assert!(
        matches!(err, CodecError::DuplicateTaggedField { tag: 1, .. }),
        "{err}"
    );
}

#[test]
fn nested_unknown_tagged_fields_are_preserved() {
    // Endpoint gets tag 3 = [7]: replace the endpoint's empty tag section.
    let mut msg = golden_heartbeat_request();
    msg.user_endpoint.as_mut().unwrap().unknown_tagged_fields = vec![tag(3, &[7])];
    let bytes = msg.encode(1).unwrap();
    let plain = golden_heartbeat_request().encode(1).unwrap();
    assert_eq!(bytes.len(), plain.len() + 3);
    let needle = [0x1f, 0x90, 0x01, 0x03, 0x01, 0x07];
    assert!(bytes.windows(needle.len()).any(|w| w == needle));
    assert_eq!(
        StreamsGroupHeartbeatRequest::decode(&bytes, 1).unwrap(),
        msg
    );
}

#[test]
fn duplicate_or_decreasing_tags_on_the_wire_are_rejected() {
    let base = golden_heartbeat_request_bytes_without_tags();
    let dup = cat(&[&base, &[0x02, 0x01, 0x00, 0x01, 0x00]]);
    let err = StreamsGroupHeartbeatRequest::decode(&dup, 0).unwrap_err();
    assert_eq!(
        err,
        CodecError::DuplicateTaggedField {
            path: s("StreamsGroupHeartbeatRequest.TaggedFields"),
            tag: 1
        }
    );
    let dec = cat(&[&base, &[0x02, 0x05, 0x00, 0x02, 0x00]]);
    let err = StreamsGroupHeartbeatRequest::decode(&dec, 0).unwrap_err();
    assert!(
        matches!(
            err,
            CodecError::TaggedFieldsOutOfOrder {
                previous: 5,
                tag: 2,
                ..
            }
        ),
        "{err}"
    );
}

fn golden_heartbeat_response(version: i16) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        throttle_time_ms: 0,
        error_code: 0,
        error_message: None,
        member_id: s("m"),
        member_epoch: 3,
        heartbeat_interval_ms: 5_000,
        acceptable_recovery_lag_legacy: if version == 0 { 7 } else { 0 },
        task_offset_interval_ms: 60_000,
        acceptable_recovery_lag: if version == 0 { -1 } else { 10_000 },
        status: Some(vec![Status {
            status_code: 5,
            status_detail: s("d"),
            unknown_tagged_fields: vec![],
        }]),
        active_tasks: Some(vec![task_ids("0", &[2])]),
        standby_tasks: Some(vec![]),
        warmup_tasks: None,
        topology_description_required: version >= 1,
        endpoint_information_epoch: 2,
        partitions_by_user_endpoint: Some(vec![EndpointToPartitions {
            user_endpoint: endpoint("h", 9092),
            active_partitions: vec![TopicPartition {
                topic: s("t"),
                partitions: vec![0],
                unknown_tagged_fields: vec![],
            }],
            standby_partitions: vec![],
            unknown_tagged_fields: vec![],
        }]),
        unknown_tagged_fields: vec![],
    }
}

fn golden_heartbeat_response_bytes(version: i16) -> Vec<u8> {
    let head = cat(&[
        &[0, 0, 0, 0],       // ThrottleTimeMs 0
        &[0, 0],             // ErrorCode 0
        &[0x00],             // ErrorMessage null
        &cs("m"),            // MemberId
        &[0, 0, 0, 3],       // MemberEpoch 3
        &[0, 0, 0x13, 0x88], // HeartbeatIntervalMs 5000
    ]);
    let assignment = cat(&[
        &[0x02, 0x05], // Status: 1 element; StatusCode 5
        &cs("d"),      //   StatusDetail
        &[0x00],       //   Status tags
        &[0x02],       // ActiveTasks: 1 element
        &cs("0"),
        &[0x02, 0, 0, 0, 2], //   Partitions [2]
        &[0x00],             //   TaskIds tags
        &[0x01],             // StandbyTasks: empty
        &[0x00],             // WarmupTasks null
    ]);
    let tail = cat(&[
        &[0, 0, 0, 2], // EndpointInformationEpoch 2
        &[0x02],       // PartitionsByUserEndpoint: 1 element
        &cs("h"),      //   UserEndpoint (non-nullable struct: no marker)
        &[0x23, 0x84], //     Port 9092
        &[0x00],       //     Endpoint tags
        &[0x02],       //   ActivePartitions: 1 element
        &cs("t"),
        &[0x02, 0, 0, 0, 0], //     Partitions [0]
        &[0x00],             //     TopicPartition tags
        &[0x01],             //   StandbyPartitions: empty
        &[0x00],             //   EndpointToPartitions tags
        &[0x00],             // response tags
    ]);
    if version == 0 {
        cat(&[
            &head,
            &[0, 0, 0, 7],       // AcceptableRecoveryLagLegacy 7 (v0 only)
            &[0, 0, 0xea, 0x60], // TaskOffsetIntervalMs 60000
            &assignment,
            &tail,
        ])
    } else {
        cat(&[
            &head,
            &[0, 0, 0xea, 0x60],             // TaskOffsetIntervalMs 60000
            &[0, 0, 0, 0, 0, 0, 0x27, 0x10], // AcceptableRecoveryLag 10000 (int64, v1+)
            &assignment,
            &[0x01], // TopologyDescriptionRequired true (v1+)
            &tail,
        ])
    }
}

#[test]
fn golden_heartbeat_response_v0_and_v1() {
    for version in [0, 1] {
        let msg = golden_heartbeat_response(version);
        let wire = golden_heartbeat_response_bytes(version);
        assert_eq!(msg.encode(version).unwrap(), wire, "v{version}");
        assert_eq!(
            StreamsGroupHeartbeatResponse::decode(&wire, version).unwrap(),
            msg,
            "v{version}"
        );
    }
}

#[test]
fn golden_describe_request_v0_and_v1() {
    let msg = |include| StreamsGroupDescribeRequest {
        group_ids: vec![s("g")],
        include_authorized_operations: true,
        include_topology_description: include,
        unknown_tagged_fields: vec![],
    };
    let v0 = [0x02, 0x02, b'g', 0x01, 0x00];
    let v1 = [0x02, 0x02, b'g', 0x01, 0x01, 0x00];
    assert_eq!(msg(false).encode(0).unwrap(), v0);
    assert_eq!(msg(true).encode(1).unwrap(), v1);
    assert_eq!(
        StreamsGroupDescribeRequest::decode(&v0, 0).unwrap(),
        msg(false)
    );
    assert_eq!(
        StreamsGroupDescribeRequest::decode(&v1, 1).unwrap(),
        msg(true)
    );
}

#[test]
fn golden_describe_response_v0_and_v1() {
    let group = |version: i16| DescribedGroup {
        group_id: s("g"),
        group_state: s("Stable"),
        group_epoch: 1,
        assignment_epoch: 1,
        topology: Some(DescribedTopology {
            epoch: 1,
            subtopologies: None,
            unknown_tagged_fields: vec![],
        }),
        topology_description_status: if version >= 1 { 1 } else { 0 },
        assignor_name: (version >= 1).then(|| s("sticky")),
        ..DescribedGroup::default()
    };
    let msg = |version| StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![group(version)],
        unknown_tagged_fields: vec![],
    };
    let common = cat(&[
        &[0, 0, 0, 0],       // ThrottleTimeMs
        &[0x02],             // Groups: 1 element
        &[0, 0],             //   ErrorCode
        &[0x00],             //   ErrorMessage null
        &cs("g"),            //   GroupId
        &cs("Stable"),       //   GroupState
        &[0, 0, 0, 1],       //   GroupEpoch
        &[0, 0, 0, 1],       //   AssignmentEpoch
        &[0x01, 0, 0, 0, 1], //   Topology present, Epoch 1
        &[0x00, 0x00],       //     Subtopologies null, Topology tags
        &[0x01],             //   Members: empty
        &[0x80, 0, 0, 0],    //   AuthorizedOperations i32::MIN
    ]);
    let v0 = cat(&[&common, &[0x00, 0x00]]); // group tags, response tags
    let v1 = cat(&[
        &common,
        &[0xff],       //   TopologyDescription null
        &[0x01],       //   TopologyDescriptionStatus 1 (NOT_STORED)
        &cs("sticky"), //   AssignorName
        &[0x00, 0x00], // group tags, response tags
    ]);
    assert_eq!(msg(0).encode(0).unwrap(), v0);
    assert_eq!(msg(1).encode(1).unwrap(), v1);
    assert_eq!(
        StreamsGroupDescribeResponse::decode(&v0, 0).unwrap(),
        msg(0)
    );
    assert_eq!(
        StreamsGroupDescribeResponse::decode(&v1, 1).unwrap(),
        msg(1)
    );
}

#[test]
fn golden_topology_description_bytes() {
    let content = TopologyDescriptionContent {
        subtopologies: vec![TopologyDescriptionSubtopology {
            subtopology_id: s("0"),
            nodes: vec![TopologyDescriptionNode {
                name: s("n"),
                node_type: 3,
                source_topics: vec![],
                sink_topic: Some(s("out")),
                stores: vec![s("st")],
                successors: vec![],
                unknown_tagged_fields: vec![],
            }],
            unknown_tagged_fields: vec![],
        }],
        global_stores: vec![],
        unknown_tagged_fields: vec![],
    };
    let expected = cat(&[
        &[0x02],    // Subtopologies: 1 element
        &cs("0"),   //   SubtopologyId
        &[0x02],    //   Nodes: 1 element
        &cs("n"),   //     Name
        &[0x03],    //     NodeType SINK
        &[0x01],    //     SourceTopics: empty
        &cs("out"), //     SinkTopic
        &[0x02],    //     Stores: 1 element
        &cs("st"),
        &[0x01], //     Successors: empty
        &[0x00], //     node tags
        &[0x00], //   subtopology tags
        &[0x01], // GlobalStores: empty
        &[0x00], // tags
    ]);
    let description = TopologyDescription::from_content(&content).unwrap();
    assert_eq!(description.raw, expected);

    // Inside a describe response it follows AuthorizedOperations after a presence marker.
    let msg = StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![DescribedGroup {
            topology_description: Some(description.clone()),
            topology_description_status: 3,
            ..DescribedGroup::default()
        }],
        unknown_tagged_fields: vec![],
    };
    let bytes = msg.encode(1).unwrap();
    let marker_and_raw = cat(&[&[0x80, 0, 0, 0, 0x01], &expected, &[0x03, 0x00, 0x00, 0x00]]);
    assert!(bytes.ends_with(&marker_and_raw));
    assert_eq!(
        StreamsGroupDescribeResponse::decode(&bytes, 1).unwrap(),
        msg
    );
}

// ---------------------------------------------------------------------------------------------
// Version differences
// ---------------------------------------------------------------------------------------------

#[test]
fn heartbeat_response_v0_drops_ignorable_acceptable_recovery_lag() {
    let msg = StreamsGroupHeartbeatResponse {
        acceptable_recovery_lag: 123,
        ..golden_heartbeat_response(0)
    };
    let bytes = msg.encode(0).unwrap();
    assert_eq!(bytes, golden_heartbeat_response_bytes(0));
    // Decoding v0 yields the default (-1).
    let decoded = StreamsGroupHeartbeatResponse::decode(&bytes, 0).unwrap();
    assert_eq!(decoded.acceptable_recovery_lag, -1);
}

#[test]
fn heartbeat_response_non_default_fields_absent_at_the_version_are_errors() {
    let err = StreamsGroupHeartbeatResponse {
        topology_description_required: true,
        ..golden_heartbeat_response(0)
    }
    .encode(0)
    .unwrap_err();
    assert_eq!(
        err,
        CodecError::FieldNotInVersion {
            path: s("StreamsGroupHeartbeatResponse.TopologyDescriptionRequired"),
            version: 0
        }
    );
    let err = StreamsGroupHeartbeatResponse {
        acceptable_recovery_lag_legacy: 5,
        ..golden_heartbeat_response(1)
    }
    .encode(1)
    .unwrap_err();
    assert!(
        matches!(err, CodecError::FieldNotInVersion { ref path, version: 1 }
            if path == "StreamsGroupHeartbeatResponse.AcceptableRecoveryLagLegacy"),
        "{err}"
    );
}

#[test]
fn heartbeat_response_defaults_for_fields_absent_at_the_version() {
    let v1 = StreamsGroupHeartbeatResponse::decode(&golden_heartbeat_response_bytes(1), 1).unwrap();
    assert_eq!(v1.acceptable_recovery_lag_legacy, 0);
    let v0 = StreamsGroupHeartbeatResponse::decode(&golden_heartbeat_response_bytes(0), 0).unwrap();
    assert_eq!(v0.acceptable_recovery_lag, -1);
    assert!(!v0.topology_description_required);
    // The v1 body is 8 + 1 - 4 = 5 bytes longer than v0.
    assert_eq!(
        golden_heartbeat_response_bytes(1).len(),
        golden_heartbeat_response_bytes(0).len() + 5
    );
}

#[test]
fn describe_request_include_topology_description_needs_v1() {
    let msg = full_describe_request(1);
    let err = msg.encode(0).unwrap_err();
    assert_eq!(
        err,
        CodecError::FieldNotInVersion {
            path: s("StreamsGroupDescribeRequest.IncludeTopologyDescription"),
            version: 0
        }
    );
    assert_eq!(
        err.to_string(),
        "cannot encode StreamsGroupDescribeRequest.IncludeTopologyDescription at version 0: the \
         field does not exist at that version and its value is not the default"
    );
}

#[test]
fn describe_response_v1_fields_at_v0() {
    // AssignorName is ignorable: dropped at v0.
    let mut msg = full_describe_response(0);
    msg.groups[0].assignor_name = Some(s("sticky"));
    let bytes = msg.encode(0).unwrap();
    assert_eq!(bytes, full_describe_response(0).encode(0).unwrap());
    assert_eq!(
        StreamsGroupDescribeResponse::decode(&bytes, 0)
            .unwrap()
            .groups[0]
            .assignor_name,
        None
    );

    // TopologyDescriptionStatus and TopologyDescription are not ignorable.
    let mut msg = full_describe_response(0);
    msg.groups[1].topology_description_status = 1;
    let err = msg.encode(0).unwrap_err();
    assert_eq!(
        err.path(),
        Some("StreamsGroupDescribeResponse.Groups[1].TopologyDescriptionStatus")
    );
    let mut msg = full_describe_response(0);
    msg.groups[0].topology_description = Some(TopologyDescription::default());
    let err = msg.encode(0).unwrap_err();
    assert_eq!(
        err.path(),
        Some("StreamsGroupDescribeResponse.Groups[0].TopologyDescription")
    );
}

#[test]
fn v1_bytes_do_not_decode_as_v0_and_vice_versa() {
    for (kind, bytes) in all_full_messages(1) {
        if kind == "heartbeat request" {
            continue; // identical at both versions
        }
        assert!(decode_kind(kind, &bytes, 0).is_err(), "{kind} v1 as v0");
    }
    for (kind, bytes) in all_full_messages(0) {
        if kind == "heartbeat request" {
            continue;
        }
        assert!(decode_kind(kind, &bytes, 1).is_err(), "{kind} v0 as v1");
    }
}

#[test]
fn unsupported_versions_are_errors() {
    for version in [-1, 2, i16::MAX] {
        let err = full_heartbeat_request().encode(version).unwrap_err();
        assert!(
            matches!(err, CodecError::UnsupportedVersion { .. }),
            "{err}"
        );
        let err = StreamsGroupDescribeResponse::decode(&[], version).unwrap_err();
        assert_eq!(
            err,
            CodecError::UnsupportedVersion {
                message: "StreamsGroupDescribeResponse",
                version,
                min: 0,
                max: 1
            }
        );
    }
}

#[test]
fn invalid_raw_topology_description_is_refused_on_encode() {
    let mut msg = full_describe_response(1);
    msg.groups[0].topology_description = Some(TopologyDescription {
        raw: vec![0x05, 0x01],
    });
    let err = msg.encode(1).unwrap_err();
    assert!(
        matches!(err, CodecError::InvalidValue { ref path, .. }
            if path == "StreamsGroupDescribeResponse.Groups[0].TopologyDescription"),
        "{err}"
    );
    // Valid struct followed by junk.
    let mut raw = TopologyDescription::from_content(&sample_description_content())
        .unwrap()
        .raw;
    raw.push(0);
    msg.groups[0].topology_description = Some(TopologyDescription { raw });
    assert!(matches!(
        msg.encode(1),
        Err(CodecError::InvalidValue { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Malformed input
// ---------------------------------------------------------------------------------------------

#[test]
fn every_truncation_of_a_valid_message_is_an_error() {
    for version in [0, 1] {
        for (kind, bytes) in all_full_messages(version) {
            decode_kind(kind, &bytes, version).unwrap();
            for len in 0..bytes.len() {
                let prefix = &bytes[..len];
                assert!(
                    decode_kind(kind, prefix, version).is_err(),
                    "{kind} v{version}: prefix of {len}/{} bytes decoded",
                    bytes.len()
                );
            }
        }
    }
}

#[test]
fn truncation_error_names_the_field() {
    let bytes = full_heartbeat_request().encode(0).unwrap();
    // Cut inside the first subtopology's second source topic name ("other").
    let needle = cs("other");
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
        .unwrap();
    let err = StreamsGroupHeartbeatRequest::decode(&bytes[..at + 3], 0).unwrap_err();
    assert_eq!(
        err.path(),
        Some("StreamsGroupHeartbeatRequest.Topology.Subtopologies[0].SourceTopics[1]")
    );
    assert!(
        err.to_string()
            .starts_with("truncated while reading StreamsGroupHeartbeatRequest.Topology.Subtopologies[0].SourceTopics[1]"),
        "{err}"
    );
}

#[test]
fn trailing_bytes_are_an_error() {
    for version in [0, 1] {
        for (kind, bytes) in all_full_messages(version) {
            let longer = cat(&[&bytes, &[0x00]]);
            let err = decode_kind(kind, &longer, version).unwrap_err();
            assert!(
                matches!(err, CodecError::TrailingBytes { count: 1, .. }),
                "{kind}: {err}"
            );
        }
    }
}

#[test]
fn hostile_array_length_is_an_error() {
    // Describe request whose GroupIds declares 2^32 - 2 elements.
    let bytes = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00];
    let err = StreamsGroupDescribeRequest::decode(&bytes, 0).unwrap_err();
    assert_eq!(
        err,
        CodecError::LengthExceedsRemaining {
            path: s("StreamsGroupDescribeRequest.GroupIds"),
            length: 4_294_967_294,
            remaining: 2
        }
    );
    // Heartbeat response with ActiveTasks declaring 1000 elements and little data behind.
    let mut bytes = golden_heartbeat_response_bytes(1);
    let status_start = 4 + 2 + 1 + 2 + 4 + 4 + 4 + 8;
    bytes.truncate(status_start);
    bytes.extend_from_slice(&[0x00, 0xe9, 0x07, 0x00]); // Status null, ActiveTasks len 1000
    let err = StreamsGroupHeartbeatResponse::decode(&bytes, 1).unwrap_err();
    assert!(
        matches!(err, CodecError::LengthExceedsRemaining { ref path, length: 1000, .. }
            if path == "StreamsGroupHeartbeatResponse.ActiveTasks"),
        "{err}"
    );
}

#[test]
fn varint_overflow_is_an_error() {
    let bytes = [0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
    let err = StreamsGroupDescribeRequest::decode(&bytes, 0).unwrap_err();
    assert_eq!(
        err,
        CodecError::InvalidVarint {
            path: s("StreamsGroupDescribeRequest.GroupIds")
        }
    );
}

#[test]
fn invalid_utf8_is_an_error() {
    let bytes = [0x02, 0x02, 0xff, 0x00, 0x00];
    let err = StreamsGroupDescribeRequest::decode(&bytes, 0).unwrap_err();
    assert!(
        matches!(err, CodecError::InvalidUtf8 { ref path, .. } if path == "StreamsGroupDescribeRequest.GroupIds[0]"),
        "{err}"
    );
}

#[test]
fn null_for_a_non_nullable_field_is_an_error() {
    // MemberId null in a heartbeat response.
    let mut bytes = vec![0, 0, 0, 0, 0, 0, 0x00, 0x00];
    bytes.extend_from_slice(&[0; 32]);
    let err = StreamsGroupHeartbeatResponse::decode(&bytes, 0).unwrap_err();
    assert_eq!(
        err,
        CodecError::UnexpectedNull {
            path: s("StreamsGroupHeartbeatResponse.MemberId")
        }
    );
    // GroupIds null in a describe request.
    let err = StreamsGroupDescribeRequest::decode(&[0x00, 0x00, 0x00], 0).unwrap_err();
    assert_eq!(
        err,
        CodecError::UnexpectedNull {
            path: s("StreamsGroupDescribeRequest.GroupIds")
        }
    );
}

// ---------------------------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------------------------

#[test]
fn request_header_v2_golden_and_round_trip() {
    let header = RequestHeader {
        api_key: STREAMS_GROUP_HEARTBEAT_KEY,
        api_version: 1,
        correlation_id: 0x0102_0304,
        client_id: Some(s("cli")),
        unknown_tagged_fields: vec![],
    };
    let expected = [
        0x00, 0x58, // api key 88
        0x00, 0x01, // version 1
        0x01, 0x02, 0x03, 0x04, // correlation id
        0x00, 0x03, b'c', b'l', b'i', // client id: int16 length, not compact
        0x00, // tagged fields
    ];
    assert_eq!(header.encode().unwrap(), expected);
    let body = [0xde, 0xad];
    let frame = cat(&[&expected, &body]);
    let (decoded, len) = RequestHeader::decode(&frame).unwrap();
    assert_eq!(decoded, header);
    assert_eq!(len, expected.len());
    assert_eq!(&frame[len..], body);
    assert_eq!(peek_api_key_version(&frame), Some((88, 1)));
}

#[test]
fn request_header_null_client_id_and_tags() {
    let header = RequestHeader {
        api_key: STREAMS_GROUP_DESCRIBE_KEY,
        api_version: 0,
        correlation_id: -1,
        client_id: None,
        unknown_tagged_fields: vec![tag(0, &[1])],
    };
    let bytes = header.encode().unwrap();
    assert_eq!(
        bytes,
        [
            0x00, 0x59, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x01, 0x01
        ]
    );
    assert_eq!(
        RequestHeader::decode(&bytes).unwrap(),
        (header, bytes.len())
    );
    for len in 0..bytes.len() {
        assert!(RequestHeader::decode(&bytes[..len]).is_err());
    }
}

#[test]
fn response_header_v1() {
    let bytes = encode_response_header_v1(7);
    assert_eq!(bytes, [0, 0, 0, 7, 0]);
    assert_eq!(decode_response_header_v1(&bytes).unwrap(), (7, 5));
    assert!(decode_response_header_v1(&bytes[..4]).is_err());
}

#[test]
fn peek_needs_four_bytes() {
    assert_eq!(peek_api_key_version(&[]), None);
    assert_eq!(peek_api_key_version(&[0, 88, 0]), None);
    assert_eq!(peek_api_key_version(&[0, 89, 0, 1]), Some((89, 1)));
    assert_eq!(
        peek_api_key_version(&[0xff, 0xff, 0x80, 0x00]),
        Some((-1, i16::MIN))
    );
}

// ---------------------------------------------------------------------------------------------
// Property tests: no input panics; structured values round-trip
// ---------------------------------------------------------------------------------------------

fn decode_everything(bytes: &[u8]) {
    for version in -1..=2 {
        let _ = StreamsGroupHeartbeatRequest::decode(bytes, version);
        let _ = StreamsGroupHeartbeatResponse::decode(bytes, version);
        let _ = StreamsGroupDescribeRequest::decode(bytes, version);
        let _ = StreamsGroupDescribeResponse::decode(bytes, version);
    }
    let _ = RequestHeader::decode(bytes);
    let _ = decode_response_header_v1(bytes);
    let _ = peek_api_key_version(bytes);
    let _ = TopologyDescription {
        raw: bytes.to_vec(),
    }
    .decode_content();
}

fn valid_corpus() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = [0, 1]
        .into_iter()
        .flat_map(|v| all_full_messages(v).into_iter().map(|(_, b)| b))
        .collect();
    out.push(golden_heartbeat_request().encode(0).unwrap());
    out
}

fn opt_string() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(".{0,12}")
}

fn arb_tags() -> impl Strategy<Value = Vec<RawTaggedField>> {
    proptest::collection::btree_map(
        any::<u32>(),
        proptest::collection::vec(any::<u8>(), 0..4),
        0..3,
    )
    .prop_map(|m| {
        m.into_iter()
            .map(|(tag, data)| RawTaggedField { tag, data })
            .collect()
    })
}

fn arb_task_ids() -> impl Strategy<Value = TaskIds> {
    (
        ".{0,8}",
        proptest::collection::vec(any::<i32>(), 0..4),
        arb_tags(),
    )
        .prop_map(
            |(subtopology_id, partitions, unknown_tagged_fields)| TaskIds {
                subtopology_id,
                partitions,
                unknown_tagged_fields,
            },
        )
}

fn arb_task_list() -> impl Strategy<Value = Option<Vec<TaskIds>>> {
    proptest::option::of(proptest::collection::vec(arb_task_ids(), 0..3))
}

fn arb_heartbeat_request() -> impl Strategy<Value = StreamsGroupHeartbeatRequest> {
    (
        (
            ".{0,10}",
            ".{0,10}",
            any::<i32>(),
            any::<i32>(),
            opt_string(),
            opt_string(),
        ),
        (
            any::<i32>(),
            arb_task_list(),
            arb_task_list(),
            arb_task_list(),
            opt_string(),
        ),
        (
            proptest::option::of((".{0,8}", any::<u16>())),
            proptest::option::of(proptest::collection::vec((".{0,5}", ".{0,5}"), 0..3)),
            proptest::option::of(proptest::collection::vec(
                (".{0,5}", any::<i32>(), any::<i64>()),
                0..3,
            )),
            any::<bool>(),
            arb_tags(),
        ),
    )
        .prop_map(|(a, b, c)| StreamsGroupHeartbeatRequest {
            group_id: a.0,
            member_id: a.1,
            member_epoch: a.2,
            endpoint_information_epoch: a.3,
            instance_id: a.4,
            rack_id: a.5,
            rebalance_timeout_ms: b.0,
            topology: None,
            active_tasks: b.1,
            standby_tasks: b.2,
            warmup_tasks: b.3,
            process_id: b.4,
            user_endpoint: c.0.map(|(host, port)| endpoint(&host, port)),
            client_tags: c.1.map(|v| v.iter().map(|(k, v)| kv(k, v)).collect()),
            task_offsets: c
                .2
                .clone()
                .map(|v| v.iter().map(|(id, p, o)| task_offset(id, *p, *o)).collect()),
            task_end_offsets: c
                .2
                .map(|v| v.iter().map(|(id, p, o)| task_offset(id, *p, *o)).collect()),
            shutdown_application: c.3,
            unknown_tagged_fields: c.4,
        })
}

fn arb_heartbeat_response() -> impl Strategy<Value = StreamsGroupHeartbeatResponse> {
    (
        (
            any::<i32>(),
            any::<i16>(),
            opt_string(),
            ".{0,10}",
            any::<i32>(),
            any::<i32>(),
        ),
        (any::<i32>(), any::<i32>(), any::<i64>(), any::<bool>()),
        (
            proptest::option::of(proptest::collection::vec((any::<i8>(), ".{0,10}"), 0..3)),
            arb_task_list(),
            arb_task_list(),
            arb_task_list(),
            arb_tags(),
        ),
    )
        .prop_map(|(a, b, c)| StreamsGroupHeartbeatResponse {
            throttle_time_ms: a.0,
            error_code: a.1,
            error_message: a.2,
            member_id: a.3,
            member_epoch: a.4,
            heartbeat_interval_ms: a.5,
            acceptable_recovery_lag_legacy: b.0,
            task_offset_interval_ms: b.1,
            acceptable_recovery_lag: b.2,
            status: c.0.map(|v| {
                v.into_iter()
                    .map(|(status_code, status_detail)| Status {
                        status_code,
                        status_detail,
                        unknown_tagged_fields: vec![],
                    })
                    .collect()
            }),
            active_tasks: c.1,
            standby_tasks: c.2,
            warmup_tasks: c.3,
            topology_description_required: b.3,
            endpoint_information_epoch: a.0 ^ a.4,
            partitions_by_user_endpoint: None,
            unknown_tagged_fields: c.4,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        decode_everything(&bytes);
    }

    #[test]
    fn mutated_valid_messages_never_panic(
        pick in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let corpus = valid_corpus();
        let mut bytes = pick.get(&corpus).clone();
        for (at, byte) in edits {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        decode_everything(&bytes);
        let keep = cut.index(bytes.len() + 1);
        decode_everything(&bytes[..keep]);
    }

    #[test]
    fn random_heartbeat_requests_round_trip(msg in arb_heartbeat_request(), version in 0i16..=1) {
        let bytes = msg.encode(version).unwrap();
        prop_assert_eq!(StreamsGroupHeartbeatRequest::decode(&bytes, version).unwrap(), msg);
    }

    #[test]
    fn random_heartbeat_responses_round_trip(mut msg in arb_heartbeat_response(), version in 0i16..=1) {
        if version == 0 {
            msg.acceptable_recovery_lag = -1;
            msg.topology_description_required = false;
        } else {
            msg.acceptable_recovery_lag_legacy = 0;
        }
        let bytes = msg.encode(version).unwrap();
        prop_assert_eq!(StreamsGroupHeartbeatResponse::decode(&bytes, version).unwrap(), msg);
    }
}
