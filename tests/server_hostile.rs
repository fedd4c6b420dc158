//! Hostile input over the wire and on disk (issue 11): the poison requests are refused and
//! never persisted, and what start-up cannot load stops it with a way out.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{s, temp_dir};

use std::path::PathBuf;

use groupcoord::protocol::{StreamsGroupHeartbeatRequest, Subtopology, TopicInfo, Topology};
use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, start};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::*;

fn options(dir: PathBuf) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
    o.owners = common::test_owners();
    o.topics = vec![("input".into(), 3)];
    o
}

async fn all_topics(c: &mut Client) -> Vec<(String, usize)> {
    let mut all = MetadataRequest::default();
    all.topics = None;
    let m: MetadataResponse = c.call(12, &all).await.unwrap();
    let mut got: Vec<(String, usize)> = m
        .topics
        .iter()
        .map(|t| (t.name.as_ref().unwrap().0.to_string(), t.partitions.len()))
        .collect();
    got.sort();
    got
}

#[tokio::test]
async fn create_topics_with_2pow31_partitions_is_refused_and_not_persisted() {
    let dir = temp_dir("poison-create");
    let srv = start(options(dir.clone())).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let mut t = CreatableTopic::default();
    t.name = TopicName(s("poison"));
    t.num_partitions = i32::MAX;
    t.replication_factor = -1;
    let mut req = CreateTopicsRequest::default();
    req.topics = vec![t];
    let r: CreateTopicsResponse = c.call(7, &req).await.unwrap();
    assert_eq!(r.topics[0].error_code, 37, "INVALID_PARTITIONS");
    let msg = r.topics[0].error_message.as_ref().unwrap().to_string();
    assert!(msg.contains("groupcoord.max.partitions.per.topic"), "{msg}");
    assert_eq!(all_topics(&mut c).await, vec![("input".into(), 3)]);
    srv.shutdown().await;
    let srv = start(options(dir)).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    assert_eq!(all_topics(&mut c).await, vec![("input".into(), 3)]);
    srv.shutdown().await;
}

#[tokio::test]
async fn heartbeat_with_2pow31_repartition_partitions_creates_nothing() {
    let dir = temp_dir("poison-hb");
    let srv = start(options(dir)).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let topology = Topology {
        epoch: 0,
        subtopologies: vec![
            Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                repartition_sink_topics: vec!["app-rep".into()],
                ..Default::default()
            },
            Subtopology {
                subtopology_id: "1".into(),
                repartition_source_topics: vec![TopicInfo {
                    name: "app-rep".into(),
                    partitions: i32::MAX,
                    ..Default::default()
                }],
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let req = StreamsGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: "m".into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        topology: Some(topology),
        process_id: Some("p".into()),
        active_tasks: Some(vec![]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    };
    let r = c.heartbeat(1, &req).await.unwrap();
    assert_eq!(r.error_code, 130, "STREAMS_INVALID_TOPOLOGY");
    assert_eq!(all_topics(&mut c).await, vec![("input".into(), 3)]);
    srv.shutdown().await;
}

#[tokio::test]
async fn a_log_with_a_poison_topic_stops_startup_naming_it_and_truncate_after_is_the_way_out() {
    use groupcoord::server::storage::log::{LoadError, Log, LogEntry, TopicChange};
    use groupcoord::server::{StartError, storage::log_tool};
    let dir = temp_dir("poison-log");
    // What an older version accepted and persisted.
    let poison_at = {
        let (mut log, _) = Log::open(&dir, u64::MAX, |_| Ok(())).unwrap();
        log.append(&[LogEntry::Topics(vec![TopicChange::Set {
            name: "ok".into(),
            partitions: 2,
        }])])
        .unwrap();
        log.sync().unwrap();
        let at = std::fs::metadata(log.current_segment()).unwrap().len();
        log.append(&[LogEntry::Topics(vec![TopicChange::Set {
            name: "poison".into(),
            partitions: i32::MAX,
        }])])
        .unwrap();
        log.sync().unwrap();
        at
    };
    let o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.clone());
    for _ in 0..2 {
        match start(o.clone()).await {
            Err(StartError::Load(LoadError::Replay { offset, reason, .. })) => {
                assert_eq!(offset, poison_at);
                assert!(reason.contains("poison"), "{reason}");
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("a log holding a topic of 2^31-1 partitions loaded"),
        }
    }
    let listing = log_tool::inspect(&dir, false).unwrap();
    assert!(
        listing.contains(&format!("offset {poison_at:>10}")),
        "{listing}"
    );
    assert!(listing.contains("set poison=2147483647"), "{listing}");
    log_tool::truncate_after(&dir, poison_at, None).unwrap();
    let srv = start(o)
        .await
        .expect("starts after the poison batch was dropped");
    let mut c = Client::connect(srv.addr).await.unwrap();
    assert_eq!(all_topics(&mut c).await, vec![("ok".into(), 2)]);
    srv.shutdown().await;
}

fn batch(values: &[&str]) -> bytes::Bytes {
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };
    let recs: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: -1,
            timestamp: 1_700_000_000_000 + i as i64,
            key: None,
            value: Some(bytes::Bytes::from(v.to_string())),
            headers: Default::default(),
        })
        .collect();
    let mut buf = bytes::BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &recs,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf.freeze()
}

async fn produce(c: &mut Client, values: &[&str]) -> (i16, i64) {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    let mut p = PartitionProduceData::default();
    p.index = 0;
    p.records = Some(batch(values));
    let mut t = TopicProduceData::default();
    t.name = TopicName(s("input"));
    t.partition_data = vec![p];
    let mut r = ProduceRequest::default();
    r.acks = -1;
    r.timeout_ms = 5000;
    r.topic_data = vec![t];
    let resp: ProduceResponse = c.call(9, &r).await.unwrap();
    let p = &resp.responses[0].partition_responses[0];
    (p.error_code, p.base_offset)
}

/// Issue 11 item 7: the data plane is in memory, committed offsets are durable. After a restart
/// new records must not land below a committed offset, or the consumer silently skips them.
#[tokio::test]
async fn after_a_restart_new_records_land_above_the_committed_offset() {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    let dir = temp_dir("dp-restart");
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
    o.owners = common::test_owners();
    o.topics = vec![("input".into(), 1)];
    o.coordinator.initial_rebalance_delay_ms = 0;
    o.coordinator.assignment_interval_ms = 0;
    let srv = start(o.clone()).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    // A member of a streams group (its epoch lets it commit).
    let mut req = StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m".into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        topology: Some(Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                ..Default::default()
            }],
            ..Default::default()
        }),
        process_id: Some("p".into()),
        active_tasks: Some(vec![]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    };
    let r = c.heartbeat(1, &req).await.unwrap();
    assert_eq!(r.error_code, 0, "{:?}", r.error_message);
    req.member_epoch = r.member_epoch;
    assert_eq!(produce(&mut c, &["a", "b", "c"]).await, (0, 0));
    // The consumer processed a and b and committed 2.
    let mut p = OffsetCommitRequestPartition::default();
    p.partition_index = 0;
    p.committed_offset = 2;
    let mut t = OffsetCommitRequestTopic::default();
    t.name = TopicName(s("input"));
    t.partitions = vec![p];
    let mut oc = OffsetCommitRequest::default();
    oc.group_id = GroupId(s("app"));
    oc.member_id = s("m");
    oc.generation_id_or_member_epoch = req.member_epoch;
    oc.topics = vec![t];
    let r: OffsetCommitResponse = c.call(9, &oc).await.unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    srv.shutdown().await;

    let srv = start(o).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    // The records produced after the restart are 2 and 3, where the consumer resumes.
    assert_eq!(produce(&mut c, &["d", "e"]).await, (0, 2));
    let mut fp = FetchPartition::default();
    fp.partition = 0;
    fp.fetch_offset = 2;
    fp.partition_max_bytes = 1 << 20;
    let mut ft = FetchTopic::default();
    ft.topic = TopicName(s("input"));
    ft.partitions = vec![fp];
    let mut f = FetchRequest::default();
    f.replica_id = BrokerId(-1);
    f.max_bytes = 1 << 20;
    f.topics = vec![ft];
    let r: FetchResponse = c.call(12, &f).await.unwrap();
    let pd = &r.responses[0].partitions[0];
    assert_eq!((pd.error_code, pd.high_watermark), (0, 4));
    let mut records = pd.records.clone().unwrap();
    let got: Vec<(i64, String)> =
        kafka_protocol::records::RecordBatchDecoder::decode_all(&mut records)
            .unwrap()
            .into_iter()
            .flat_map(|set| set.records)
            .map(|r| {
                (
                    r.offset,
                    String::from_utf8(r.value.unwrap().to_vec()).unwrap(),
                )
            })
            .collect();
    assert_eq!(got, vec![(2, "d".to_string()), (3, "e".to_string())]);
    srv.shutdown().await;
}
