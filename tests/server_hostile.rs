//! Hostile input over the wire and on disk (issue 11): the poison requests are refused and
//! never persisted, and what start-up cannot load stops it with a way out.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{s, temp_dir};

use std::path::PathBuf;

use groupcoord::protocol::{StreamsGroupHeartbeatRequest, Subtopology, TopicInfo, Topology};
use groupcoord::server::client::Client;
use groupcoord::server::{ServeOptions, start};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::*;

fn options(dir: PathBuf) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
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
    use groupcoord::server::log::{LoadError, Log, LogEntry, TopicChange};
    use groupcoord::server::{StartError, log_tool};
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
