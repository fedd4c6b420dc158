//! Streams groups through the server over TCP: keys 88/89 round trips (v0 and v1), ListGroups,
//! DescribeGroups, DeleteGroups, OffsetCommit/OffsetFetch validation, internal topic creation.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{normalize, s, temp_dir};

use std::collections::BTreeMap;
use std::path::PathBuf;

use groupcoord::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest, Subtopology, TaskIds, TopicInfo,
    Topology,
};
use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, ServerHandle, start};
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;

fn options(dir: PathBuf) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
    o.owners = common::test_owners();
    o.topics = vec![("input".into(), 6)];
    o.coordinator.initial_rebalance_delay_ms = 0;
    o.coordinator.assignment_interval_ms = 0;
    o
}

async fn server(tag: &str) -> ServerHandle {
    start(options(temp_dir(tag))).await.expect("server starts")
}

fn topology() -> Topology {
    Topology {
        epoch: 0,
        subtopologies: vec![Subtopology {
            subtopology_id: "0".into(),
            source_topics: vec!["input".into()],
            state_changelog_topics: vec![TopicInfo {
                name: "app-store-changelog".into(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

struct Member {
    id: String,
    epoch: i32,
    active: Vec<TaskIds>,
}

fn request(group: &str, m: &Member) -> StreamsGroupHeartbeatRequest {
    let joining = m.epoch == 0;
    StreamsGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: m.id.clone(),
        member_epoch: m.epoch,
        rebalance_timeout_ms: if joining { 30_000 } else { -1 },
        topology: joining.then(topology),
        process_id: joining.then(|| format!("proc-{}", m.id)),
        active_tasks: Some(m.active.clone()),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    }
}

/// `n` members `{prefix}0..` that have not joined yet.
fn new_members(prefix: &str, n: usize) -> Vec<Member> {
    (0..n)
        .map(|i| Member {
            id: format!("{prefix}{i}"),
            epoch: 0,
            active: vec![],
        })
        .collect()
}

/// A 600 ms session timeout and 200 ms heartbeats, so timeout tests finish quickly.
fn short_timeouts(o: &mut ServeOptions) {
    o.coordinator.min_session_timeout_ms = 300;
    o.coordinator.session_timeout_ms = 600;
    o.coordinator.min_heartbeat_interval_ms = 100;
    o.coordinator.heartbeat_interval_ms = 200;
}

/// Heartbeat all members until the group is stable (bounded).
async fn converge(c: &mut Client, version: i16, group: &str, members: &mut [Member]) {
    for _round in 0..30 {
        let mut changed = false;
        for m in members.iter_mut() {
            let r = c.heartbeat(version, &request(group, m)).await.unwrap();
            assert_eq!(r.error_code, 0, "{:?}", r.error_message);
            if r.member_epoch != m.epoch {
                changed = true;
            }
            m.epoch = r.member_epoch;
            if let Some(a) = r.active_tasks {
                m.active = a;
                changed = true;
            }
        }
        let d = c
            .describe(
                version,
                &StreamsGroupDescribeRequest {
                    group_ids: vec![group.into()],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        if !changed && d.groups[0].group_state == "Stable" {
            return;
        }
    }
    panic!("group {group} did not converge");
}

#[tokio::test]
async fn streams_group_lifecycle_over_tcp() {
    let srv = server("streams").await;
    for version in [0i16, 1] {
        let group = format!("app-v{version}");
        let mut c = Client::connect(srv.addr).await.unwrap();
        let mut members: Vec<Member> = (0..3)
            .map(|i| Member {
                id: format!("m{i}-v{version}"),
                epoch: 0,
                active: vec![],
            })
            .collect();
        converge(&mut c, version, &group, &mut members).await;
        // Every partition assigned exactly once.
        let mut parts: Vec<i32> = members
            .iter()
            .flat_map(|m| m.active.iter().flat_map(|t| t.partitions.clone()))
            .collect();
        parts.sort();
        assert_eq!(parts, (0..6).collect::<Vec<_>>());
        // Describe v0/v1.
        let d = c
            .describe(
                version,
                &StreamsGroupDescribeRequest {
                    group_ids: vec![group.clone(), "nope".into()],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(d.groups[0].error_code, 0);
        assert_eq!(d.groups[0].members.len(), 3);
        assert_eq!(d.groups[0].group_state, "Stable");
        assert_eq!(d.groups[1].error_code, 69);
        // The changelog topic was created as an internal topic (6 partitions).
        let mut mreq = MetadataRequest::default();
        mreq.topics = None;
        let m: MetadataResponse = c.call(12, &mreq).await.unwrap();
        let names: BTreeMap<String, usize> = m
            .topics
            .iter()
            .map(|t| (t.name.as_ref().unwrap().0.to_string(), t.partitions.len()))
            .collect();
        assert_eq!(names.get("app-store-changelog"), Some(&6), "{names:?}");
        // ListGroups (v5 types filter) sees it.
        let mut lg = ListGroupsRequest::default();
        lg.types_filter = vec![s("streams")];
        lg.states_filter = vec![s("Stable")];
        let l: ListGroupsResponse = c.call(5, &lg).await.unwrap();
        let g = l
            .groups
            .iter()
            .find(|g| g.group_id.0.as_str() == group)
            .expect("listed");
        assert_eq!(g.group_type.as_str(), "streams");
        assert_eq!(g.protocol_type.as_str(), "streams");
        // DescribeGroups on a streams group: not a classic group.
        let mut dg = DescribeGroupsRequest::default();
        dg.groups = vec![GroupId(s(&group))];
        let r: DescribeGroupsResponse = c.call(6, &dg).await.unwrap();
        assert_eq!(r.groups[0].error_code, 69);
        // OffsetCommit v9 with the member epoch is accepted; v8 from a member is rejected.
        let mut oc = OffsetCommitRequest::default();
        oc.group_id = GroupId(s(&group));
        oc.member_id = s(&members[0].id);
        oc.generation_id_or_member_epoch = members[0].epoch;
        let mut p = OffsetCommitRequestPartition::default();
        p.partition_index = members[0].active[0].partitions[0];
        p.committed_offset = 7;
        let mut t = OffsetCommitRequestTopic::default();
        t.name = TopicName(s("input"));
        t.partitions = vec![p];
        oc.topics = vec![t];
        let r: OffsetCommitResponse = c.call(9, &oc).await.unwrap();
        assert_eq!(r.topics[0].partitions[0].error_code, 0);
        let r: OffsetCommitResponse = c.call(8, &oc).await.unwrap();
        assert_eq!(r.topics[0].partitions[0].error_code, 35);
        // DeleteGroups: non-empty refused.
        let mut del = DeleteGroupsRequest::default();
        del.groups_names = vec![GroupId(s(&group))];
        let r: DeleteGroupsResponse = c.call(2, &del).await.unwrap();
        assert_eq!(r.results[0].error_code, 68, "NON_EMPTY_GROUP");
        // Everyone leaves; then the empty group can be deleted.
        for m in &members {
            let mut req = request(&group, m);
            req.member_epoch = -1;
            req.topology = None;
            let r = c.heartbeat(version, &req).await.unwrap();
            assert_eq!(r.error_code, 0);
            assert_eq!(r.member_epoch, -1);
        }
        let r: DeleteGroupsResponse = c.call(2, &del).await.unwrap();
        assert_eq!(r.results[0].error_code, 0);
        let d = c
            .describe(
                version,
                &StreamsGroupDescribeRequest {
                    group_ids: vec![group.clone()],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(d.groups[0].error_code, 69);
    }
    srv.shutdown().await;
}

#[tokio::test]
async fn state_survives_graceful_restart() {
    let dir = temp_dir("streams-restart");
    let srv = start(options(dir.clone())).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let mut members = new_members("m", 4);
    converge(&mut c, 1, "g", &mut members).await;
    let req = StreamsGroupDescribeRequest {
        group_ids: vec!["g".into()],
        ..Default::default()
    };
    let before = c.describe(1, &req).await.unwrap();
    srv.shutdown().await;
    let srv = start(options(dir)).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let after = c.describe(1, &req).await.unwrap();
    assert_eq!(normalize(before), normalize(after));
    srv.shutdown().await;
}

#[tokio::test]
async fn session_timeout_fires_on_the_owner_task() {
    let mut o = options(temp_dir("timeout"));
    short_timeouts(&mut o);
    let srv = start(o).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let mut members = new_members("t", 2);
    converge(&mut c, 1, "tg", &mut members).await;
    // Only t0 keeps heartbeating; t1 is fenced by its session timeout.
    let req = StreamsGroupDescribeRequest {
        group_ids: vec!["tg".into()],
        ..Default::default()
    };
    let mut gone = false;
    for _ in 0..40 {
        let r = c.heartbeat(1, &request("tg", &members[0])).await.unwrap();
        assert_eq!(r.error_code, 0);
        members[0].epoch = r.member_epoch;
        if let Some(a) = r.active_tasks {
            members[0].active = a;
        }
        let d = c.describe(1, &req).await.unwrap();
        if d.groups[0].members.len() == 1 {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(gone, "t1 removed by its session timeout");
    srv.shutdown().await;
}

/// Timers fire while the owner never goes idle: a storm of heartbeats from other connections
/// keeps it on its busy path (it only parks when no work arrives), yet t1's session timeout
/// still removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_timeout_fires_while_the_owner_is_busy() {
    let mut o = options(temp_dir("busy-timeout"));
    // The owner never parks while work keeps arriving within this long: the storm below keeps
    // it on its busy path for the whole test.
    o.owner_spin = std::time::Duration::from_secs(10);
    short_timeouts(&mut o);
    let srv = start(o).await.unwrap();
    let addr = srv.addr;
    let mut c = Client::connect(addr).await.unwrap();
    let mut members = new_members("t", 2);
    converge(&mut c, 1, "bg", &mut members).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut storm = Vec::new();
    for _ in 0..4 {
        let stop = stop.clone();
        let mut m = Member {
            id: members[0].id.clone(),
            epoch: members[0].epoch,
            active: members[0].active.clone(),
        };
        storm.push(tokio::spawn(async move {
            let mut c = Client::connect(addr).await.unwrap();
            let mut sent = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let r = c.heartbeat(1, &request("bg", &m)).await.unwrap();
                if r.error_code == 0 {
                    m.epoch = r.member_epoch;
                }
                sent += 1;
            }
            sent
        }));
    }
    let req = StreamsGroupDescribeRequest {
        group_ids: vec!["bg".into()],
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let mut gone = false;
    while t0.elapsed() < std::time::Duration::from_secs(5) {
        let d = c.describe(1, &req).await.unwrap();
        if d.groups[0].members.iter().all(|m| m.member_id != "t1") {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut sent = 0;
    for s in storm {
        sent += s.await.unwrap();
    }
    assert!(
        sent > 100,
        "the storm kept the owner busy ({sent} heartbeats)"
    );
    assert!(
        gone,
        "t1 removed by its session timeout while the owner was busy"
    );
    srv.shutdown().await;
}
