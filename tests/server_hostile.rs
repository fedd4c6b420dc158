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
