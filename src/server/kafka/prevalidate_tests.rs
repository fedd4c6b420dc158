//! Requests are pre-validated before `kafka-protocol` decodes them (issue 11 item 3): a count or
//! length the frame cannot hold never reaches the crate's `Vec::with_capacity`. Measured with a
//! counting global allocator: decoding any frame, valid or mutated, allocates at most a small
//! constant times the frame's size. Also checked: every valid frame of every served key and
//! version passes the walker, and the walker never refuses a body the crate itself decodes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use crate::server::kafka::prevalidate::check_body;
use crate::server::wire::{self, Decoded, Header, Req, RequestKind, SUPPORTED};
use bytes::Bytes;
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_records_request::{
    DeleteRecordsPartition, DeleteRecordsTopic,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic, ForgottenTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use proptest::prelude::*;

/// Counts the bytes this thread asks for while `COUNTING` is set; refuses (null) any single
/// request above 1 GiB so that a regression fails the test instead of exhausting the machine.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNTING.try_with(|c| {
            if c.get() {
                ALLOCATED.with(|a| a.set(a.get() + layout.size()));
                LARGEST.with(|l| l.set(l.get().max(layout.size())));
            }
        });
        if layout.size() > 1 << 30 {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes allocated while decoding `frame` (without its length prefix).
fn decode_counting(frame: &[u8]) -> (usize, Decoded) {
    let frame = Bytes::copy_from_slice(frame);
    ALLOCATED.with(|a| a.set(0));
    COUNTING.with(|c| c.set(true));
    let d = wire::decode_frame(frame, true);
    COUNTING.with(|c| c.set(false));
    (ALLOCATED.with(|a| a.get()), d)
}

/// The bound: a constant per byte of frame plus a fixed allowance for the decoded message's
/// own structs and error strings.
fn budget(frame_len: usize) -> usize {
    64 * frame_len + 16 * 1024
}

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

/// A request of `key` with every array holding elements (nested ones too), for any version.
fn populated(key: i16, v: i16) -> RequestKind {
    let topic = TopicName(s("orders"));
    match key {
        0 => {
            let mut p = PartitionProduceData::default();
            p.index = 1;
            p.records = Some(Bytes::from_static(b"not a record batch"));
            let mut t = TopicProduceData::default();
            t.name = topic;
            t.partition_data = vec![p.clone(), p];
            let mut r = ProduceRequest::default();
            r.acks = -1;
            r.topic_data = vec![t];
            RequestKind::Produce(r)
        }
        1 => {
            let mut p = FetchPartition::default();
            p.partition = 2;
            let mut t = FetchTopic::default();
            let mut f = ForgottenTopic::default();
            // v13+ carry topic ids (left nil) instead of names.
            if v <= 12 {
                t.topic = topic.clone();
                f.topic = topic;
            }
            t.partitions = vec![p.clone(), p];
            f.partitions = vec![1, 2, 3];
            let mut r = FetchRequest::default();
            r.topics = vec![t];
            if v >= 7 {
                r.forgotten_topics_data = vec![f];
            }
            if v >= 11 {
                r.rack_id = s("rack");
            }
            if v >= 12 {
                r.cluster_id = Some(s("cluster"));
            }
            RequestKind::Fetch(r)
        }
        2 => {
            let mut t = ListOffsetsTopic::default();
            t.name = topic;
            t.partitions = vec![ListOffsetsPartition::default(); 2];
            let mut r = ListOffsetsRequest::default();
            r.topics = vec![t];
            RequestKind::ListOffsets(r)
        }
        3 => {
            let mut t = MetadataRequestTopic::default();
            t.name = Some(topic);
            let mut r = MetadataRequest::default();
            r.topics = Some(vec![t.clone(), t]);
            RequestKind::Metadata(r)
        }
        8 => {
            let mut p = OffsetCommitRequestPartition::default();
            p.committed_metadata = Some(s("meta"));
            let mut t = OffsetCommitRequestTopic::default();
            t.name = topic;
            t.partitions = vec![p.clone(), p];
            let mut r = OffsetCommitRequest::default();
            r.group_id = GroupId(s("g"));
            r.member_id = s("m");
            r.topics = vec![t];
            RequestKind::OffsetCommit(r)
        }
        9 => {
            let mut t = OffsetFetchRequestTopic::default();
            t.name = topic.clone();
            t.partition_indexes = vec![0, 1];
            let mut ts = OffsetFetchRequestTopics::default();
            ts.name = topic;
            ts.partition_indexes = vec![0, 1];
            let mut g = OffsetFetchRequestGroup::default();
            g.group_id = GroupId(s("g"));
            g.topics = Some(vec![ts]);
            let mut r = OffsetFetchRequest::default();
            if v <= 7 {
                r.group_id = GroupId(s("g"));
                r.topics = Some(vec![t]);
            } else {
                r.groups = vec![g];
            }
            RequestKind::OffsetFetch(r)
        }
        10 => {
            let mut r = FindCoordinatorRequest::default();
            if v <= 3 {
                r.key = s("g");
            } else {
                r.coordinator_keys = vec![s("g"), s("h")];
            }
            RequestKind::FindCoordinator(r)
        }
        15 => {
            let mut r = DescribeGroupsRequest::default();
            r.groups = vec![GroupId(s("g")), GroupId(s("h"))];
            RequestKind::DescribeGroups(r)
        }
        16 => {
            let mut r = ListGroupsRequest::default();
            if v >= 4 {
                r.states_filter = vec![s("Stable")];
            }
            if v >= 5 {
                r.types_filter = vec![s("streams")];
            }
            RequestKind::ListGroups(r)
        }
        19 => {
            let mut a = CreatableReplicaAssignment::default();
            a.broker_ids = vec![BrokerId(0), BrokerId(1)];
            let mut c = CreatableTopicConfig::default();
            c.name = s("cleanup.policy");
            c.value = Some(s("compact"));
            let mut t = CreatableTopic::default();
            t.name = topic;
            t.num_partitions = 3;
            t.assignments = vec![a];
            t.configs = vec![c.clone(), c];
            let mut r = CreateTopicsRequest::default();
            r.topics = vec![t];
            RequestKind::CreateTopics(r)
        }
        20 => {
            let mut st = DeleteTopicState::default();
            st.name = Some(topic.clone());
            let mut r = DeleteTopicsRequest::default();
            if v >= 6 {
                r.topics = vec![st];
            } else {
                r.topic_names = vec![topic];
            }
            RequestKind::DeleteTopics(r)
        }
        21 => {
            let mut t = DeleteRecordsTopic::default();
            t.name = topic;
            t.partitions = vec![DeleteRecordsPartition::default(); 2];
            let mut r = DeleteRecordsRequest::default();
            r.topics = vec![t];
            RequestKind::DeleteRecords(r)
        }
        22 => {
            let mut r = InitProducerIdRequest::default();
            r.transactional_id = None;
            RequestKind::InitProducerId(r)
        }
        23 => {
            let mut t = OffsetForLeaderTopic::default();
            t.topic = topic;
            t.partitions = vec![OffsetForLeaderPartition::default(); 2];
            let mut r = OffsetForLeaderEpochRequest::default();
            r.topics = vec![t];
            RequestKind::OffsetForLeaderEpoch(r)
        }
        11 => {
            let mut pr = join_group_request::JoinGroupRequestProtocol::default();
            pr.name = s("range");
            pr.metadata = Bytes::from_static(&[0, 1, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 0]);
            let mut pr2 = pr.clone();
            pr2.name = s("roundrobin");
            let mut r = JoinGroupRequest::default();
            r.group_id = GroupId(s("g"));
            r.session_timeout_ms = 10_000;
            r.rebalance_timeout_ms = if v >= 1 { 30_000 } else { -1 };
            r.member_id = s("m");
            if v >= 5 {
                r.group_instance_id = Some(s("i"));
            }
            r.protocol_type = s("consumer");
            r.protocols = vec![pr, pr2];
            if v >= 8 {
                r.reason = Some(s("why"));
            }
            RequestKind::JoinGroup(r)
        }
        12 => {
            let mut r = HeartbeatRequest::default();
            r.group_id = GroupId(s("g"));
            r.generation_id = 3;
            r.member_id = s("m");
            if v >= 3 {
                r.group_instance_id = Some(s("i"));
            }
            RequestKind::Heartbeat(r)
        }
        13 => {
            let mut r = LeaveGroupRequest::default();
            r.group_id = GroupId(s("g"));
            if v <= 2 {
                r.member_id = s("m");
            } else {
                let mut m = leave_group_request::MemberIdentity::default();
                m.member_id = s("m");
                m.group_instance_id = Some(s("i"));
                if v >= 5 {
                    m.reason = Some(s("bye"));
                }
                r.members = vec![m.clone(), m];
            }
            RequestKind::LeaveGroup(r)
        }
        14 => {
            let mut a = sync_group_request::SyncGroupRequestAssignment::default();
            a.member_id = s("m");
            a.assignment = Bytes::from_static(&[0, 1, 0, 0, 0, 0]);
            let mut r = SyncGroupRequest::default();
            r.group_id = GroupId(s("g"));
            r.generation_id = 3;
            r.member_id = s("m");
            if v >= 3 {
                r.group_instance_id = Some(s("i"));
            }
            if v >= 5 {
                r.protocol_type = Some(s("consumer"));
                r.protocol_name = Some(s("range"));
            }
            r.assignments = vec![a.clone(), a];
            RequestKind::SyncGroup(r)
        }
        47 => {
            let mut pt = offset_delete_request::OffsetDeleteRequestPartition::default();
            pt.partition_index = 1;
            let mut t = offset_delete_request::OffsetDeleteRequestTopic::default();
            t.name = topic;
            t.partitions = vec![pt.clone(), pt];
            let mut r = OffsetDeleteRequest::default();
            r.group_id = GroupId(s("g"));
            r.topics = vec![t];
            RequestKind::OffsetDelete(r)
        }
        68 => {
            let mut tp = consumer_group_heartbeat_request::TopicPartitions::default();
            tp.partitions = vec![0, 1];
            let mut r = ConsumerGroupHeartbeatRequest::default();
            r.group_id = GroupId(s("g"));
            r.member_id = s("m");
            r.instance_id = Some(s("i"));
            r.rack_id = Some(s("r"));
            r.subscribed_topic_names = Some(vec![topic.clone(), topic]);
            if v >= 1 {
                r.subscribed_topic_regex = Some(s("o.*"));
            }
            r.server_assignor = Some(s("uniform"));
            r.topic_partitions = Some(vec![tp.clone(), tp]);
            RequestKind::ConsumerGroupHeartbeat(r)
        }
        69 => {
            let mut r = ConsumerGroupDescribeRequest::default();
            r.group_ids = vec![GroupId(s("g")), GroupId(s("h"))];
            r.include_authorized_operations = true;
            RequestKind::ConsumerGroupDescribe(r)
        }
        42 => {
            let mut r = DeleteGroupsRequest::default();
            r.groups_names = vec![GroupId(s("g")), GroupId(s("h"))];
            RequestKind::DeleteGroups(r)
        }
        29 => {
            let mut r = DescribeAclsRequest::default();
            r.resource_type_filter = 2;
            r.resource_name_filter = Some(s("t"));
            r.pattern_type_filter = 3;
            r.principal_filter = Some(s("User:alice"));
            r.host_filter = Some(s("*"));
            r.operation = 3;
            r.permission_type = 3;
            RequestKind::DescribeAcls(r)
        }
        30 => {
            let mut c = create_acls_request::AclCreation::default();
            c.resource_type = 3;
            c.resource_name = s("g");
            c.resource_pattern_type = 3;
            c.principal = s("User:alice");
            c.host = s("*");
            c.operation = 3;
            c.permission_type = 3;
            let mut r = CreateAclsRequest::default();
            r.creations = vec![c.clone(), c];
            RequestKind::CreateAcls(r)
        }
        31 => {
            let mut f = delete_acls_request::DeleteAclsFilter::default();
            f.resource_type_filter = 1;
            f.resource_name_filter = Some(s("g"));
            f.pattern_type_filter = 1;
            f.principal_filter = Some(s("User:alice"));
            f.operation = 1;
            f.permission_type = 1;
            let mut r = DeleteAclsRequest::default();
            r.filters = vec![f.clone(), f];
            RequestKind::DeleteAcls(r)
        }
        32 => {
            let mut res = describe_configs_request::DescribeConfigsResource::default();
            res.resource_type = 32;
            res.resource_name = s("g");
            res.configuration_keys = Some(vec![s("streams.num.standby.replicas"), s("x")]);
            let mut r = DescribeConfigsRequest::default();
            r.resources = vec![res.clone(), res];
            r.include_synonyms = v >= 1;
            RequestKind::DescribeConfigs(r)
        }
        44 => {
            let mut c = incremental_alter_configs_request::AlterableConfig::default();
            c.name = s("streams.num.standby.replicas");
            c.value = Some(s("1"));
            let mut res = incremental_alter_configs_request::AlterConfigsResource::default();
            res.resource_type = 32;
            res.resource_name = s("g");
            res.configs = vec![c.clone(), c];
            let mut r = IncrementalAlterConfigsRequest::default();
            r.resources = vec![res];
            RequestKind::IncrementalAlterConfigs(r)
        }
        17 => {
            let mut r = SaslHandshakeRequest::default();
            r.mechanism = s("SCRAM-SHA-512");
            RequestKind::SaslHandshake(r)
        }
        36 => {
            let mut r = SaslAuthenticateRequest::default();
            r.auth_bytes = Bytes::from_static(b"n,,n=user,r=nonce");
            RequestKind::SaslAuthenticate(r)
        }
        50 => {
            let mut u = describe_user_scram_credentials_request::UserName::default();
            u.name = s("alice");
            let mut r = DescribeUserScramCredentialsRequest::default();
            r.users = Some(vec![u.clone(), u]);
            RequestKind::DescribeUserScramCredentials(r)
        }
        51 => {
            let mut d = alter_user_scram_credentials_request::ScramCredentialDeletion::default();
            d.name = s("bob");
            d.mechanism = 1;
            let mut u = alter_user_scram_credentials_request::ScramCredentialUpsertion::default();
            u.name = s("alice");
            u.mechanism = 2;
            u.iterations = 4096;
            u.salt = Bytes::from_static(b"salt");
            u.salted_password = Bytes::from_static(&[7; 64]);
            let mut r = AlterUserScramCredentialsRequest::default();
            r.deletions = vec![d.clone(), d];
            r.upsertions = vec![u.clone(), u];
            RequestKind::AlterUserScramCredentials(r)
        }
        k => panic!("no populated request for key {k}"),
    }
}

/// Every valid frame (length prefix stripped) of every served standard key and version.
fn valid_frames() -> Vec<(i16, i16, Vec<u8>)> {
    let mut out = Vec::new();
    for &(key, lo, hi) in SUPPORTED {
        if key == 88 || key == 89 {
            continue;
        }
        for v in lo..=hi {
            let h = Header {
                api_key: key,
                api_version: v,
                correlation_id: 7,
                client_id: Some("client".into()),
            };
            let req = if key == 18 {
                let mut r = ApiVersionsRequest::default();
                if v >= 3 {
                    r.client_software_name = s("groupcoord-test");
                    r.client_software_version = s("1");
                }
                Req::ApiVersions(r)
            } else {
                Req::Kafka(populated(key, v))
            };
            let frame = wire::encode_request(&h, &req)
                .unwrap_or_else(|e| panic!("key {key} v{v} encodes: {e}"));
            out.push((key, v, frame[4..].to_vec()));
        }
    }
    out
}

#[test]
fn metadata_declaring_2pow31_topics_in_19_bytes_allocates_nothing_large() {
    // Metadata v1: header (key, version, correlation id, client id null) + topics count.
    let mut frame = Vec::new();
    frame.extend_from_slice(&3i16.to_be_bytes());
    frame.extend_from_slice(&1i16.to_be_bytes());
    frame.extend_from_slice(&1i32.to_be_bytes());
    frame.extend_from_slice(&(-1i16).to_be_bytes());
    frame.extend_from_slice(&i32::MAX.to_be_bytes());
    frame.extend_from_slice(&[0, 0, 0, 0, 0]);
    assert_eq!(frame.len() + 4, 23);
    let (allocated, d) = decode_counting(&frame);
    assert!(matches!(d, Decoded::Close(_)), "{d:?}");
    assert!(
        allocated <= budget(frame.len()),
        "{allocated} bytes allocated for a {}-byte frame",
        frame.len()
    );
    // The same in a flexible version (compact array length 2^32-1).
    let mut flex = Vec::new();
    flex.extend_from_slice(&3i16.to_be_bytes());
    flex.extend_from_slice(&12i16.to_be_bytes());
    flex.extend_from_slice(&1i32.to_be_bytes());
    flex.extend_from_slice(&(-1i16).to_be_bytes());
    flex.push(0); // header tagged fields
    flex.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
    let (allocated, d) = decode_counting(&flex);
    assert!(matches!(d, Decoded::Close(_)), "{d:?}");
    assert!(allocated <= budget(flex.len()), "{allocated}");
}

#[test]
fn every_valid_frame_of_every_served_key_and_version_passes() {
    let frames = valid_frames();
    assert!(frames.len() > 100, "{}", frames.len());
    for (key, v, frame) in frames {
        let (allocated, d) = decode_counting(&frame);
        match d {
            Decoded::Request(h, _) => assert_eq!((h.api_key, h.api_version), (key, v)),
            other => panic!("key {key} v{v}: {other:?}"),
        }
        assert!(
            allocated <= budget(frame.len()),
            "key {key} v{v}: {allocated}"
        );
    }
}

/// The body of a frame: after the header (v1 or v2 as the key and version say).
fn body_of(frame: &[u8]) -> Option<&[u8]> {
    let (_, off) = wire::parse_header(frame).ok()?;
    Some(&frame[off..])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Random mutations of valid frames (byte flips, overwritten 4-byte words such as counts,
    /// truncation) never panic, never allocate more than the budget, and the walker never
    /// refuses a body the crate decodes (a walker stricter than the crate would refuse valid
    /// requests).
    #[test]
    fn mutated_frames_never_panic_and_stay_within_the_budget(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u32>(), 0u8..3), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let frames = valid_frames();
        let (key, v, frame) = &frames[pick.index(frames.len())];
        let mut f = frame.clone();
        for (at, value, kind) in edits {
            let i = at.index(f.len());
            match kind {
                0 => f[i] ^= (value as u8) | 1,
                1 => {
                    let word = value.to_be_bytes();
                    for (k, b) in word.iter().enumerate() {
                        if let Some(x) = f.get_mut(i + k) { *x = *b; }
                    }
                }
                _ => f[i] = 0xff,
            }
        }
        // Keep key and version: mutate the message, not the routing.
        f[0..2].copy_from_slice(&key.to_be_bytes());
        f[2..4].copy_from_slice(&v.to_be_bytes());
        if truncate {
            let n = 8.max(cut.index(f.len() + 1));
            f.truncate(n);
        }
        let (allocated, _) = decode_counting(&f);
        prop_assert!(allocated <= budget(f.len()), "key {} v{}: {} bytes for {}", key, v, allocated, f.len());
        // The crate itself is asked only about bodies the walker refuses for a reason other than
        // an array count (given one, the crate would try to allocate for it).
        if let Some(body) = body_of(&f)
            && let Err(e) = check_body(*key, *v, body)
            && !e.starts_with("array of")
            && RequestKind::decode(*key, &mut Bytes::copy_from_slice(body), *v).is_ok()
        {
            prop_assert!(
                check_body(*key, *v, body).is_ok(),
                "key {} v{}: the crate decodes a body the walker refuses: {:?}",
                key, v, check_body(*key, *v, body)
            );
        }
    }
}

/// Writes the fuzzers' seed corpus (`fuzz/corpus/`): every valid frame of every served key and
/// version, built with the crate's encoders, plus records and a small log. Run by hand after a
/// protocol change: `cargo test --lib prevalidate_tests -- --ignored write_fuzz_seed_corpus`.
#[test]
#[ignore]
fn write_fuzz_seed_corpus() {
    use crate::server::tools::client::heartbeat_body;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let write = |target: &str, name: String, bytes: &[u8]| {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    let pairs: Vec<(i16, i16)> = SUPPORTED
        .iter()
        .flat_map(|&(k, lo, hi)| (lo..=hi).map(move |v| (k, v)))
        .collect();
    for (key, v, frame) in valid_frames() {
        write("frame", format!("k{key}-v{v}"), &frame);
        let (_, off) = wire::parse_header(&frame).unwrap();
        let pick = pairs.iter().position(|p| *p == (key, v)).unwrap() as u8;
        let mut req = vec![pick];
        req.extend_from_slice(&frame[off..]);
        write("request", format!("k{key}-v{v}"), &req);
    }
    // Streams heartbeats (keys 88) as a real client sends them: a join with a topology.
    let hb = crate::protocol::StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m".into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        process_id: Some("p".into()),
        topology: Some(crate::protocol::Topology {
            epoch: 0,
            subtopologies: vec![crate::protocol::Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                state_changelog_topics: vec![crate::protocol::TopicInfo {
                    name: "app-store-changelog".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }),
        active_tasks: Some(vec![]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    };
    for v in [0, 1] {
        let body = heartbeat_body(&hb, v).unwrap();
        let frame = crate::server::tools::client::raw_frame(88, v, 1, Some("c"), &body).unwrap();
        write("frame", format!("k88-v{v}"), &frame[4..]);
        let pick = pairs.iter().position(|p| *p == (88, v)).unwrap() as u8;
        let mut req = vec![pick];
        req.extend_from_slice(&body);
        write("request", format!("k88-v{v}"), &req);
    }
    // Records and a log, from the core's own heartbeat.
    let mut c = crate::coordinator::Coordinator::new(Default::default());
    c.set_metadata(crate::topology::MetadataImage {
        topics: [("input".to_string(), 2)].into_iter().collect(),
    });
    let o = c.streams_group_heartbeat(crate::types::Millis(0), &Default::default(), &hb);
    assert!(!o.records.is_empty());
    write(
        "records",
        "batch".into(),
        &crate::records::encode_batch(&o.records).unwrap(),
    );
    for (i, r) in o.records.iter().enumerate() {
        let (k, v) = crate::records::encode_record(r).unwrap();
        let mut b = vec![k.len().min(255) as u8];
        b.extend_from_slice(&k);
        b.extend_from_slice(v.as_deref().unwrap_or(&[]));
        write("records", format!("record-{i}"), &b);
    }
    let entry = crate::server::storage::log::LogEntry::Records(o.records.clone());
    let seg = crate::server::storage::log::encode_entry(&entry).unwrap();
    let mut b = vec![0u8];
    b.extend_from_slice(&seg);
    write("log_loader", "segment".into(), &b);
}
