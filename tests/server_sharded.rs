//! The server with two owners (`--owners 2`, docs/sharding.md) in one process: groups on both
//! owners answer as one server (offsets, consumer groups, multi-group requests split and merged
//! in request order, a topic created on owner 0 seen by owner 1's groups), a restart replays both
//! shards, and a data directory is only loaded whole, with the owner count it was written with
//! or migrated to another count (`--migrate-owners`).
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{s, temp_dir};

use std::path::PathBuf;

use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, ServerHandle, StartError, start};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::*;

// Placement with 50 coordinator partitions over 2 owners (Java's String.hashCode):
// g-a -> partition 25 (owner 1), g-b -> 26 (owner 0), g-c -> 27 (owner 1), cons-b -> 48 (owner 0),
// cons-a -> 49 (owner 1).
const ON_1: &str = "g-a";
const ON_0: &str = "g-b";
const ALSO_ON_1: &str = "g-c";

fn options(dir: PathBuf, owners: usize) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
    o.topics = vec![("t".into(), 4)];
    o.coordinator.consumer.assignment_interval_ms = 0;
    o.owners = owners;
    o
}

async fn commit(c: &mut Client, group: &str, offset: i64) {
    let mut p = OffsetCommitRequestPartition::default();
    p.partition_index = 0;
    p.committed_offset = offset;
    let mut t = OffsetCommitRequestTopic::default();
    t.name = TopicName(s("t"));
    t.partitions = vec![p];
    let mut r = OffsetCommitRequest::default();
    r.group_id = GroupId(s(group));
    r.generation_id_or_member_epoch = -1;
    r.topics = vec![t];
    let resp = c.call(8, &r).await.expect("commit");
    assert_eq!(resp.topics[0].partitions[0].error_code, 0, "{group}");
}

/// An OffsetFetch (v8 and later: several groups) of partition t-0 for each of `groups`.
fn offset_fetch(groups: &[&str]) -> OffsetFetchRequest {
    let mut r = OffsetFetchRequest::default();
    r.groups = groups
        .iter()
        .map(|g| {
            let mut t = OffsetFetchRequestTopics::default();
            t.name = TopicName(s("t"));
            t.partition_indexes = vec![0];
            let mut rg = OffsetFetchRequestGroup::default();
            rg.group_id = GroupId(s(g));
            rg.topics = Some(vec![t]);
            rg
        })
        .collect();
    r
}

/// OffsetFetch v8 for several groups in one request: (group, offset of t-0) in response order.
async fn fetch(c: &mut Client, groups: &[&str]) -> Vec<(String, i64)> {
    let resp = c
        .call(8, &offset_fetch(groups))
        .await
        .expect("offset fetch");
    resp.groups
        .iter()
        .map(|g| {
            assert_eq!(g.error_code, 0);
            (
                g.group_id.to_string(),
                g.topics[0].partitions[0].committed_offset,
            )
        })
        .collect()
}

async fn listed(c: &mut Client) -> Vec<String> {
    let resp = c
        .call(4, &ListGroupsRequest::default())
        .await
        .expect("list groups");
    assert_eq!(resp.error_code, 0);
    let mut ids: Vec<String> = resp.groups.iter().map(|g| g.group_id.to_string()).collect();
    ids.sort();
    ids
}

/// Creates topic `fresh` (3 partitions) and joins member m-1 of consumer group cons-a (owner 1
/// of 2) subscribed to it; returns the heartbeat's response.
async fn fresh_topic_and_consumer_member(c: &mut Client) -> ConsumerGroupHeartbeatResponse {
    let mut ct = CreatableTopic::default();
    ct.name = TopicName(s("fresh"));
    ct.num_partitions = 3;
    ct.replication_factor = 1;
    let mut cr = CreateTopicsRequest::default();
    cr.topics = vec![ct];
    cr.timeout_ms = 1000;
    let created = c.call(5, &cr).await.expect("create topics");
    assert_eq!(created.topics[0].error_code, 0);
    let mut hb = ConsumerGroupHeartbeatRequest::default();
    hb.group_id = GroupId(s("cons-a"));
    hb.member_id = s("m-1");
    hb.member_epoch = 0;
    hb.rebalance_timeout_ms = 60_000;
    hb.subscribed_topic_names = Some(vec![TopicName(s("fresh"))]);
    hb.topic_partitions = Some(Vec::new());
    let r = c.call(0, &hb).await.expect("consumer heartbeat");
    assert_eq!(r.error_code, 0, "{:?}", r.error_message);
    r
}

async fn start_at(dir: &std::path::Path, owners: usize) -> ServerHandle {
    start(options(dir.to_path_buf(), owners))
        .await
        .expect("server starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_owners_answer_as_one_server_and_restart_whole() {
    let dir = temp_dir("sharded");
    let srv = start_at(&dir, 2).await;
    assert!(dir.join("SHARDS").is_file() && dir.join("shard-001").is_dir());
    let mut c = Client::connect(srv.addr).await.unwrap();

    // Offsets on both owners, fetched in one request in the request's order.
    commit(&mut c, ON_1, 11).await;
    commit(&mut c, ON_0, 22).await;
    commit(&mut c, ALSO_ON_1, 33).await;
    let got = fetch(&mut c, &[ON_0, ON_1, ALSO_ON_1]).await;
    assert_eq!(
        got,
        vec![(ON_0.into(), 22), (ON_1.into(), 11), (ALSO_ON_1.into(), 33)]
    );
    assert_eq!(listed(&mut c).await, vec![ON_1, ON_0, ALSO_ON_1]);

    // DescribeGroups across owners keeps the request's order.
    let mut dg = DescribeGroupsRequest::default();
    dg.groups = vec![GroupId(s(ALSO_ON_1)), GroupId(s(ON_0)), GroupId(s(ON_1))];
    let d = c.call(5, &dg).await.expect("describe groups");
    let ids: Vec<&str> = d.groups.iter().map(|g| g.group_id.as_str()).collect();
    assert_eq!(ids, vec![ALSO_ON_1, ON_0, ON_1]);

    // A topic created through owner 0 is known to owner 1's groups before the reply came back.
    let r = fresh_topic_and_consumer_member(&mut c).await;
    let assigned: usize = r
        .assignment
        .as_ref()
        .map(|a| a.topic_partitions.iter().map(|t| t.partitions.len()).sum())
        .unwrap_or(0);
    assert_eq!(assigned, 3, "owner 1 sees the topic owner 0 created");

    // ConsumerGroupDescribe across owners, in request order.
    let mut cd = ConsumerGroupDescribeRequest::default();
    cd.group_ids = vec![GroupId(s("cons-a")), GroupId(s("cons-b"))];
    let d = c.call(0, &cd).await.expect("consumer group describe");
    let ids: Vec<(&str, i16)> = d
        .groups
        .iter()
        .map(|g| (g.group_id.as_str(), g.error_code))
        .collect();
    assert_eq!(
        ids,
        vec![("cons-a", 0), ("cons-b", 69)],
        "cons-b: GROUP_ID_NOT_FOUND"
    );

    // DeleteGroups across owners: results in request order.
    let mut del = DeleteGroupsRequest::default();
    del.groups_names = vec![GroupId(s(ON_1)), GroupId(s(ON_0))];
    let dr = c.call(2, &del).await.expect("delete groups");
    let results: Vec<(&str, i16)> = dr
        .results
        .iter()
        .map(|r| (r.group_id.as_str(), r.error_code))
        .collect();
    assert_eq!(results, vec![(ON_1, 0), (ON_0, 0)]);
    srv.shutdown().await;

    // Both shards replay: what was acknowledged on either owner is back.
    let srv = start_at(&dir, 2).await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    assert_eq!(listed(&mut c).await, vec!["cons-a", ALSO_ON_1]);
    assert_eq!(
        fetch(&mut c, &[ALSO_ON_1]).await,
        vec![(ALSO_ON_1.into(), 33)]
    );
    let mut md = MetadataRequest::default();
    md.topics = None;
    let m = c.call(9, &md).await.expect("metadata");
    assert!(
        m.topics
            .iter()
            .any(|t| t.name.as_ref().map(|n| n.as_str()) == Some("fresh"))
    );
    srv.shutdown().await;

    // Any other owner count is refused, naming the directory and both counts.
    for n in [1, 3] {
        match start(options(dir.clone(), n)).await {
            Err(StartError::Shards(e)) => {
                assert!(e.contains(&dir.display().to_string()), "{e}");
                assert!(
                    e.contains("2 owners") && e.contains(&format!("started with {n}")),
                    "{e}"
                );
            }
            Err(e) => panic!("other error: {e}"),
            Ok(_) => panic!("started with {n} owners on a 2-owner directory"),
        }
    }
}

/// Requests pipelined in one write, so that the connection hands them over as one batch that
/// spans both owners (single-group requests on either owner and multi-group requests split over
/// both): the responses come back in request order, each multi-group one in its groups' order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipelined_batch_over_both_owners_is_answered_in_request_order() {
    use groupcoord::server::tools::client::raw_frame;
    use kafka_protocol::protocol::{Decodable, Encodable};
    let dir = temp_dir("sharded-batch");
    let srv = start_at(&dir, 2).await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    commit(&mut c, ON_1, 11).await;
    commit(&mut c, ON_0, 22).await;
    commit(&mut c, ALSO_ON_1, 33).await;

    let describe = |groups: &[&str]| {
        let mut r = DescribeGroupsRequest::default();
        r.groups = groups.iter().map(|g| GroupId(s(g))).collect();
        r
    };
    // (key, version, body): fetches of one group on each owner, then requests split over both.
    let mut requests: Vec<(i16, i16, Vec<u8>)> = Vec::new();
    let mut push = |key: i16, version: i16, enc: &dyn Fn(&mut bytes::BytesMut)| {
        let mut b = bytes::BytesMut::new();
        enc(&mut b);
        requests.push((key, version, b.to_vec()));
    };
    for groups in [
        vec![ON_1],
        vec![ON_0],
        vec![ALSO_ON_1, ON_0, ON_1],
        vec![ON_0, ALSO_ON_1],
    ] {
        let r = offset_fetch(&groups);
        push(9, 8, &|b| r.encode(b, 8).unwrap());
    }
    let d = describe(&[ALSO_ON_1, ON_0, ON_1]);
    push(15, 5, &|b| d.encode(b, 5).unwrap());
    let r = offset_fetch(&[ALSO_ON_1]);
    push(9, 8, &|b| r.encode(b, 8).unwrap());

    let mut frames = Vec::new();
    let mut corrs = Vec::new();
    for (key, version, body) in &requests {
        let corr = c.next_correlation();
        corrs.push(corr);
        frames.extend(raw_frame(*key, *version, corr, Some("batch"), body).unwrap());
    }
    c.write_raw(&frames).await.unwrap();

    let mut got = Vec::new();
    for ((key, version, _), corr) in requests.iter().zip(&corrs) {
        let mut body = bytes::Bytes::from(c.read_body(*key, *version, *corr).await.unwrap());
        got.push(match key {
            9 => {
                let r = OffsetFetchResponse::decode(&mut body, *version).unwrap();
                r.groups
                    .iter()
                    .map(|g| {
                        format!(
                            "{}={}",
                            g.group_id.as_str(),
                            g.topics[0].partitions[0].committed_offset
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            }
            _ => {
                let r = DescribeGroupsResponse::decode(&mut body, *version).unwrap();
                r.groups
                    .iter()
                    .map(|g| g.group_id.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            }
        });
    }
    assert_eq!(
        got,
        vec![
            "g-a=11",
            "g-b=22",
            "g-c=33,g-b=22,g-a=11",
            "g-b=22,g-c=33",
            "g-c,g-b,g-a",
            "g-c=33"
        ]
    );
    srv.shutdown().await;
}

/// A missing shard directory, or a damaged shard log, stops start-up with an error naming it:
/// never an empty shard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_damaged_shard_stops_start_up_by_name() {
    let dir = temp_dir("sharded-hostile");
    let srv = start_at(&dir, 2).await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    commit(&mut c, ON_1, 5).await;
    srv.shutdown().await;

    // Damage shard-001's segment in the middle of its first batch (after the commit mark
    // covered it): acknowledged bytes that do not check out.
    let shard = dir.join("shard-001");
    let seg = std::fs::read_dir(&shard)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .expect("a segment in shard-001");
    let mut bytes = std::fs::read(&seg).unwrap();
    assert!(bytes.len() > 20);
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    match start(options(dir.clone(), 2)).await {
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("shard-001"), "{msg}");
        }
        Ok(_) => panic!("a damaged shard loaded"),
    }

    std::fs::remove_dir_all(&shard).unwrap();
    match start(options(dir.clone(), 2)).await {
        Err(StartError::Shards(e)) => {
            assert!(e.contains("shard-001") && e.contains("missing"), "{e}")
        }
        Err(e) => panic!("other error: {e}"),
        Ok(_) => panic!("started without shard-001"),
    }
    assert!(!shard.exists(), "the missing shard is not recreated empty");
}

/// `groupcoord.max.groups` bounds the server, not each owner: with two owners each holds its
/// half, so the server never holds more groups than the bound (each owner counting only its own
/// groups would let two owners hold twice the bound).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_group_bound_is_the_servers_not_each_owners() {
    let dir = temp_dir("sharded-max-groups");
    let mut o = options(dir.clone(), 2);
    o.coordinator.limits.max_groups = 2;
    let srv = start(o).await.expect("server starts");
    let mut c = Client::connect(srv.addr).await.unwrap();
    let join = |group: &str| {
        let mut hb = ConsumerGroupHeartbeatRequest::default();
        hb.group_id = GroupId(s(group));
        hb.member_id = s("m-1");
        hb.member_epoch = 0;
        hb.rebalance_timeout_ms = 60_000;
        hb.subscribed_topic_names = Some(vec![TopicName(s("t"))]);
        hb.topic_partitions = Some(Vec::new());
        hb
    };
    let mut codes = Vec::new();
    for g in [ON_1, ALSO_ON_1, ON_0] {
        let r = c.call(0, &join(g)).await.expect("consumer heartbeat");
        codes.push((g, r.error_code));
    }
    let groups = listed(&mut c).await;
    srv.shutdown().await;
    // INVALID_REQUEST (42): owner 1 already holds its share when g-c arrives.
    assert_eq!(codes, vec![(ON_1, 0), (ALSO_ON_1, 42), (ON_0, 0)]);
    assert_eq!(groups, vec![ON_1, ON_0]);
}

/// A test that fails (panics) while its server runs must fail, not hang: the dropped handle stops
/// the owners, so the runtime's drop does not wait for them forever. Runs the runtime on a thread
/// of its own so that a hang shows as a timeout here instead of hanging this binary.
#[test]
fn a_dropped_handle_stops_the_server_so_a_failing_test_ends() {
    let dir = temp_dir("sharded-dropped-handle");
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let d = dir.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let addr = rt.block_on(async {
            let srv = start(options(d, 2)).await.expect("server starts");
            let mut c = Client::connect(srv.addr).await.unwrap();
            commit(&mut c, ON_1, 7).await;
            let addr = srv.addr;
            drop(srv); // what a panicking assertion does to the handle
            addr
        });
        drop(rt);
        let _ = done_tx.send(addr);
    });
    let addr = done_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the runtime holding a dropped server handle ends");
    // The server is gone (its listener closed) and what it acknowledged is in the log.
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "still listening"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let srv = start(options(dir, 2)).await.expect("restarts");
        let mut c = Client::connect(srv.addr).await.unwrap();
        let got = fetch(&mut c, &[ON_1]).await;
        srv.shutdown().await;
        assert_eq!(got, vec![(ON_1.to_string(), 7)]);
    });
}

/// What a client can see of the groups and topics: listed groups, committed offsets, classic
/// and consumer group descriptions, topics with their partition counts.
async fn observed(c: &mut Client) -> String {
    let mut out = format!("{:?}\n", listed(c).await);
    out += &format!("{:?}\n", fetch(c, &[ON_0, ON_1, ALSO_ON_1, "d-1"]).await);
    let mut dg = DescribeGroupsRequest::default();
    dg.groups = vec![GroupId(s(ON_0)), GroupId(s(ON_1)), GroupId(s(ALSO_ON_1))];
    out += &format!("{:?}\n", c.call(5, &dg).await.expect("describe").groups);
    let mut cd = ConsumerGroupDescribeRequest::default();
    cd.group_ids = vec![GroupId(s("cons-a")), GroupId(s("cons-b"))];
    out += &format!("{:?}\n", c.call(0, &cd).await.expect("describe").groups);
    let mut md = MetadataRequest::default();
    md.topics = None;
    let m = c.call(9, &md).await.expect("metadata");
    let mut topics: Vec<(String, usize)> = m
        .topics
        .iter()
        .map(|t| (format!("{:?}", t.name), t.partitions.len()))
        .collect();
    topics.sort();
    out + &format!("{topics:?}")
}

async fn observed_at(dir: &std::path::Path, owners: usize, migrate: bool) -> String {
    let mut o = options(dir.to_path_buf(), owners);
    o.migrate_owners = migrate;
    let srv = start(o).await.expect("server starts");
    let mut c = Client::connect(srv.addr).await.unwrap();
    let seen = observed(&mut c).await;
    srv.shutdown().await;
    seen
}

/// Groups, members, offsets and topics written by one owner (the one-owner layout).
async fn one_owner_data(dir: &std::path::Path) -> String {
    let srv = start_at(dir, 1).await;
    let mut c = Client::connect(srv.addr).await.unwrap();
    commit(&mut c, ON_1, 11).await;
    commit(&mut c, ON_0, 22).await;
    commit(&mut c, ALSO_ON_1, 33).await;
    // Two groups deleted in one request: their tombstones must not come back.
    commit(&mut c, "d-1", 1).await;
    commit(&mut c, "d-2", 2).await;
    let mut del = DeleteGroupsRequest::default();
    del.groups_names = vec![GroupId(s("d-1")), GroupId(s("d-2"))];
    let dr = c.call(2, &del).await.expect("delete groups");
    assert!(dr.results.iter().all(|r| r.error_code == 0));
    fresh_topic_and_consumer_member(&mut c).await;
    let seen = observed(&mut c).await;
    assert!(seen.contains("m-1") && seen.contains("fresh"), "{seen}");
    srv.shutdown().await;
    seen
}

/// `--migrate-owners`: a one-owner directory moved to two owners and back keeps every group,
/// member, committed offset and topic; without the switch another count is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_count_migrates_one_to_two_and_back_with_every_group() {
    let dir = temp_dir("sharded-migrate");
    let before = one_owner_data(&dir).await;

    match start(options(dir.clone(), 2)).await {
        Err(StartError::Shards(e)) => assert!(
            e.contains(&dir.display().to_string())
                && e.contains("written by 1 owner ")
                && e.contains("--migrate-owners"),
            "{e}"
        ),
        Err(e) => panic!("other error: {e}"),
        Ok(_) => panic!("started with 2 owners on a 1-owner directory without --migrate-owners"),
    }

    assert_eq!(observed_at(&dir, 2, true).await, before, "1 -> 2");
    assert!(dir.join("shard-001").is_dir() && !dir.join("migrating-2").exists());
    assert!(!dir.join("COMMIT").exists(), "the one-owner log is removed");
    assert_eq!(observed_at(&dir, 2, false).await, before, "2, restarted");

    assert_eq!(observed_at(&dir, 1, true).await, before, "2 -> 1");
    let shards = std::fs::read_to_string(dir.join("SHARDS")).unwrap();
    assert!(shards.contains("owners=1"), "{shards}");
    assert!(!dir.join("shard-001").exists());
    assert_eq!(observed_at(&dir, 1, false).await, before, "1, restarted");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A migration that stops after staging (before `SHARDS` is switched) left the old log intact:
/// the next start discards the staging directory; one that stops after the switch is completed
/// by the next start; a corrupt staging directory is never loaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_migration_is_undone_or_completed_never_half_loaded() {
    let dir = temp_dir("sharded-migrate-crash");
    let before = one_owner_data(&dir).await;

    let mut o = options(dir.clone(), 2);
    o.migrate_owners = true;
    o.migrate_crash = Some(false);
    assert!(start(o).await.is_err(), "stopped after staging");
    assert!(dir.join("migrating-2").is_dir() && !dir.join("SHARDS").exists());
    assert_eq!(
        observed_at(&dir, 1, false).await,
        before,
        "not switched: the old log"
    );
    assert!(!dir.join("migrating-2").exists(), "staging discarded");

    let mut o = options(dir.clone(), 2);
    o.migrate_owners = true;
    o.migrate_crash = Some(true);
    assert!(start(o).await.is_err(), "stopped after the switch");
    assert!(dir.join("SHARDS").is_file() && dir.join("migrating-2").is_dir());
    assert_eq!(
        observed_at(&dir, 2, false).await,
        before,
        "switched: completed by the next start"
    );
    assert!(!dir.join("migrating-2").exists() && !dir.join("COMMIT").exists());

    // Junk staging for 1 owner (never switched): removed, and the migration redone from the
    // two shards.
    let junk = dir.join("migrating-1").join("shard-000");
    std::fs::create_dir_all(&junk).unwrap();
    std::fs::write(junk.join("segment-00000000000000000000.log"), b"not a log").unwrap();
    std::fs::write(junk.join("COMMIT"), b"junk").unwrap();
    assert_eq!(
        observed_at(&dir, 1, true).await,
        before,
        "junk staging ignored"
    );
    assert!(!dir.join("migrating-1").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
