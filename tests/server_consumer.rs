//! KIP-848 consumer groups through the server over TCP (docs/consumer-protocol.md §K1, §K9):
//! ConsumerGroupHeartbeat and ConsumerGroupDescribe advertised and served, assignments by topic
//! id that Metadata resolves, revoke-before-assign between two members, offsets checked by member
//! epoch, ListGroups / DescribeGroups / DeleteGroups, and a restart that replays the group.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{http_get, live_group, s, temp_dir};

use std::path::PathBuf;

use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, ServerHandle, start};
use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;

const GROUP: &str = "kg";
const NONE: i16 = 0;
const STALE_MEMBER_EPOCH: i16 = 113;
const UNSUPPORTED_ASSIGNOR: i16 = 112;
const INVALID_REQUEST: i16 = 42;
const NON_EMPTY_GROUP: i16 = 68;

fn options(dir: PathBuf) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
    o.owners = common::test_owners();
    o.topics = vec![("t".into(), 4)];
    o.coordinator.consumer.assignment_interval_ms = 0;
    o
}

async fn connect(h: &ServerHandle, client_id: &str) -> Client {
    let mut c = Client::connect(h.addr).await.expect("connect");
    c.client_id = Some(client_id.into());
    c
}

fn join_request(member_id: &str) -> ConsumerGroupHeartbeatRequest {
    let mut r = ConsumerGroupHeartbeatRequest::default();
    r.group_id = GroupId(s(GROUP));
    r.member_id = s(member_id);
    r.member_epoch = 0;
    r.rebalance_timeout_ms = 60_000;
    r.subscribed_topic_names = Some(vec![TopicName(s("t"))]);
    r.topic_partitions = Some(Vec::new());
    r
}

fn heartbeat_request(
    member_id: &str,
    epoch: i32,
    owned: &ConsumerGroupHeartbeatResponse,
) -> ConsumerGroupHeartbeatRequest {
    let mut r = ConsumerGroupHeartbeatRequest::default();
    r.group_id = GroupId(s(GROUP));
    r.member_id = s(member_id);
    r.member_epoch = epoch;
    r.rebalance_timeout_ms = -1;
    r.topic_partitions = owned.assignment.as_ref().map(|a| {
        a.topic_partitions
            .iter()
            .map(|t| {
                let mut p = TopicPartitions::default();
                p.topic_id = t.topic_id;
                p.partitions = t.partitions.clone();
                p
            })
            .collect()
    });
    r
}

fn partitions(r: &ConsumerGroupHeartbeatResponse) -> Vec<i32> {
    let mut out: Vec<i32> = r
        .assignment
        .iter()
        .flat_map(|a| a.topic_partitions.iter())
        .flat_map(|t| t.partitions.iter().copied())
        .collect();
    out.sort_unstable();
    out
}

#[tokio::test]
async fn consumer_group_join_revoke_assign_commit_describe_and_restart() {
    let dir = temp_dir("server-consumer");
    let server = start(options(dir.clone())).await.expect("server starts");
    let mut c1 = connect(&server, "c1").await;
    let mut c2 = connect(&server, "c2").await;

    // ApiVersions advertises 68 and 69, v0-1.
    let versions = c1
        .call(3, &ApiVersionsRequest::default())
        .await
        .expect("api versions");
    for key in [68, 69] {
        let k = versions
            .api_keys
            .iter()
            .find(|k| k.api_key == key)
            .expect("advertised");
        assert_eq!((k.min_version, k.max_version), (0, 1));
    }

    // Validation with Kafka's messages.
    let mut bad = join_request("m1");
    bad.rebalance_timeout_ms = -1;
    let r = c1.call(1, &bad).await.expect("heartbeat");
    assert_eq!(r.error_code, INVALID_REQUEST);
    assert_eq!(
        r.error_message.as_deref(),
        Some("RebalanceTimeoutMs must be provided in first request.")
    );
    let mut bad = join_request("m1");
    bad.server_assignor = Some(s("sticky"));
    let r = c1.call(1, &bad).await.expect("heartbeat");
    assert_eq!(r.error_code, UNSUPPORTED_ASSIGNOR);

    // m1 joins and gets every partition of t, by topic id; Metadata maps the id back to `t`.
    let r1 = c1.call(1, &join_request("m1")).await.expect("join");
    assert_eq!((r1.error_code, r1.member_epoch), (NONE, 2));
    assert_eq!(r1.heartbeat_interval_ms, 5000);
    assert_eq!(partitions(&r1), [0, 1, 2, 3]);
    let topic_id = r1.assignment.as_ref().unwrap().topic_partitions[0].topic_id;
    let mut m = MetadataRequest::default();
    let mut mt = MetadataRequestTopic::default();
    mt.topic_id = topic_id;
    mt.name = None;
    m.topics = Some(vec![mt]);
    let meta = c1.call(12, &m).await.expect("metadata");
    assert_eq!(meta.topics.len(), 1);
    assert_eq!(
        meta.topics[0].name.as_ref().map(|n| n.0.as_str()),
        Some("t")
    );
    assert_eq!(meta.topics[0].topic_id, topic_id);

    // m2 joins: nothing yet (m1 still owns its future partitions).
    let r2 = c2.call(1, &join_request("m2")).await.expect("join");
    assert_eq!((r2.error_code, r2.member_epoch), (NONE, 3));
    assert_eq!(partitions(&r2), Vec::<i32>::new());

    // m1 revokes first at epoch 2, then moves to epoch 3 once it reports the revoked ones gone.
    let r1b = c1
        .call(1, &heartbeat_request("m1", 2, &r1))
        .await
        .expect("heartbeat");
    assert_eq!(r1b.member_epoch, 2);
    let kept = partitions(&r1b);
    assert_eq!(kept.len(), 2);
    let r1c = c1
        .call(1, &heartbeat_request("m1", 2, &r1b))
        .await
        .expect("heartbeat");
    assert_eq!((r1c.error_code, r1c.member_epoch), (NONE, 3));
    let r2b = c2
        .call(1, &heartbeat_request("m2", 3, &r2))
        .await
        .expect("heartbeat");
    assert_eq!(r2b.member_epoch, 3);
    let mut all = kept.clone();
    all.extend(partitions(&r2b));
    all.sort_unstable();
    assert_eq!(all, [0, 1, 2, 3]);

    // Offsets: the current epoch commits; a newer one is stale.
    let commit = |epoch: i32, member: &str, partition: i32| {
        let mut r = OffsetCommitRequest::default();
        r.group_id = GroupId(s(GROUP));
        r.generation_id_or_member_epoch = epoch;
        r.member_id = s(member);
        let mut t = OffsetCommitRequestTopic::default();
        t.name = TopicName(s("t"));
        let mut p = OffsetCommitRequestPartition::default();
        p.partition_index = partition;
        p.committed_offset = 42;
        t.partitions = vec![p];
        r.topics = vec![t];
        r
    };
    let r = c1.call(9, &commit(3, "m1", kept[0])).await.expect("commit");
    assert_eq!(r.topics[0].partitions[0].error_code, NONE);
    let r = c1.call(9, &commit(4, "m1", kept[0])).await.expect("commit");
    assert_eq!(r.topics[0].partitions[0].error_code, STALE_MEMBER_EPOCH);

    // ConsumerGroupDescribe shows the group; ListGroups its type; DeleteGroups refuses it.
    let mut d = ConsumerGroupDescribeRequest::default();
    d.group_ids = vec![GroupId(s(GROUP))];
    let described = c1.call(1, &d).await.expect("describe");
    let g = &described.groups[0];
    assert_eq!(g.error_code, NONE);
    assert_eq!(g.group_state.as_str(), "Stable");
    assert_eq!((g.group_epoch, g.assignment_epoch), (3, 3));
    assert_eq!(g.assignor_name.as_str(), "uniform");
    assert_eq!(g.members.len(), 2);
    assert!(g.members.iter().all(|m| m.member_type == 1));
    assert_eq!(
        g.members[0].assignment.topic_partitions[0]
            .topic_name
            .0
            .as_str(),
        "t"
    );
    let mut l = ListGroupsRequest::default();
    l.types_filter = vec![s("consumer")];
    let listed = c1.call(5, &l).await.expect("list");
    assert_eq!(listed.groups.len(), 1);
    assert_eq!(listed.groups[0].group_type.as_str(), "consumer");
    assert_eq!(listed.groups[0].group_state.as_str(), "Stable");
    let mut del = DeleteGroupsRequest::default();
    del.groups_names = vec![GroupId(s(GROUP))];
    let r = c1.call(2, &del).await.expect("delete");
    assert_eq!(r.results[0].error_code, NON_EMPTY_GROUP);
    server.shutdown().await;

    // A restart replays the group: m2 heartbeats on at epoch 3.
    let server = start(options(dir.clone())).await.expect("server restarts");
    let mut c2 = connect(&server, "c2").await;
    let r = c2
        .call(1, &heartbeat_request("m2", 3, &r2b))
        .await
        .expect("heartbeat");
    assert_eq!((r.error_code, r.member_epoch), (NONE, 3));
    let described = c2.call(1, &d).await.expect("describe");
    assert_eq!(described.groups[0].members.len(), 2);

    // Both leave; the Empty group can be deleted.
    let mut leave = heartbeat_request("m2", -1, &r2b);
    leave.topic_partitions = None;
    let r = c2.call(1, &leave).await.expect("leave");
    assert_eq!((r.error_code, r.member_epoch), (NONE, -1));
    let mut leave = heartbeat_request("m1", -1, &r1c);
    leave.topic_partitions = None;
    let r = c2.call(1, &leave).await.expect("leave");
    assert_eq!(r.error_code, NONE);
    let r = c2.call(2, &del).await.expect("delete");
    assert_eq!(r.results[0].error_code, NONE);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// The web UI's live view shows a real consumer group as the explorer shows a simulated one:
/// the coordinator's member states, epochs, assigned and target partitions by topic name, and
/// session deadlines (it listed streams groups only before).
#[tokio::test]
async fn live_view_shows_a_consumer_group() {
    let dir = temp_dir("server-consumer-live");
    let mut o = options(dir.clone());
    o.http = Some("127.0.0.1:0".parse().unwrap());
    let server = start(o).await.expect("server starts");
    let http = server.http_addr.unwrap();
    let mut c1 = connect(&server, "c1").await;
    let mut c2 = connect(&server, "c2").await;
    let r1 = c1.call(1, &join_request("m1")).await.expect("join");
    assert_eq!(partitions(&r1), [0, 1, 2, 3]);
    // m2 joins: m1 must revoke two partitions before m2 gets them.
    let r2 = c2.call(1, &join_request("m2")).await.expect("join");
    assert_eq!((r2.error_code, r2.member_epoch), (NONE, 3));

    let g = live_group(http, GROUP).await;
    assert_eq!(g["group_type"], "consumer");
    assert_eq!(g["member_count"], 2);
    let v = &g["view"];
    assert_eq!(v["group_type"], "consumer");
    assert_eq!(v["state"], "Reconciling", "{v}");
    assert_eq!(
        (v["group_epoch"].as_i64(), v["assignment_epoch"].as_i64()),
        (Some(3), Some(3))
    );
    assert_eq!(v["assignor"], "uniform");
    let member = |id: &str| {
        v["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["member_id"] == id)
            .unwrap_or_else(|| panic!("{id} in {v}"))
            .clone()
    };
    let (m1, m2) = (member("m1"), member("m2"));
    // m1 is still at epoch 2 owning all four partitions: it learns of the new target on its
    // next heartbeat; m2 waits for the two partitions m1 has to give up.
    assert_eq!(
        (m1["state"].as_str(), m1["member_epoch"].as_i64()),
        (Some("STABLE"), Some(2))
    );
    assert_eq!(
        m1["active"],
        serde_json::json!(["t-0", "t-1", "t-2", "t-3"])
    );
    assert_eq!(m1["target_active"].as_array().unwrap().len(), 2, "{m1}");
    assert_eq!(m2["state"], "UNRELEASED_PARTITIONS", "{m2}");
    assert_eq!(m2["target_active"].as_array().unwrap().len(), 2, "{m2}");
    for m in [&m1, &m2] {
        assert!(m["session_deadline_ms"].as_i64().is_some(), "{m}");
    }
    server.shutdown().await;
}

/// The live view's swimlanes show a consumer group's real ConsumerGroupHeartbeat exchanges
/// (`/api/history`, recorded once someone looks): each member's requests and the answers, as
/// JSON in the simulation's shape and as wire bytes, and the records they wrote.
#[tokio::test]
async fn history_shows_a_consumer_groups_heartbeats() {
    let dir = temp_dir("server-consumer-history");
    let mut o = options(dir.clone());
    o.http = Some("127.0.0.1:0".parse().unwrap());
    let server = start(o).await.expect("server starts");
    let http = server.http_addr.unwrap();
    // Someone looks: the history records from now on.
    http_get(http, "/api/groups").await;
    let mut c1 = connect(&server, "c1").await;
    let mut c2 = connect(&server, "c2").await;
    let r1 = c1.call(1, &join_request("m1")).await.expect("join");
    assert_eq!(partitions(&r1), [0, 1, 2, 3]);
    let r2 = c2.call(1, &join_request("m2")).await.expect("join");
    assert_eq!(r2.error_code, NONE);
    // m1 at a stale epoch: an error the lanes name.
    let mut stale = join_request("m1");
    stale.member_epoch = 99;
    let r3 = c1.call(1, &stale).await.expect("heartbeat");
    assert_ne!(r3.error_code, NONE);

    let body = http_get(http, &format!("/api/history?group={GROUP}")).await;
    let page: serde_json::Value = serde_json::from_str(&body).expect("json");
    let messages = page["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3, "{body}");
    for m in messages {
        assert_eq!(m["api"], "ConsumerGroupHeartbeat", "{m}");
        assert_eq!(m["api_version"], 1);
        assert_eq!(m["fate"], "delivered");
        assert!(m["request_hex"].as_str().unwrap().len() > 20, "{m}");
        assert!(m["response_hex"].as_str().unwrap().len() > 10, "{m}");
        assert_eq!(m["request"]["group_id"], GROUP);
    }
    let members: Vec<&str> = messages
        .iter()
        .map(|m| m["member_id"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["m1", "m2", "m1"]);
    assert_eq!(messages[0]["response"]["member_epoch"], r1.member_epoch);
    assert_eq!(
        messages[0]["request"]["subscribed_topic_names"],
        serde_json::json!(["t"])
    );
    assert!(messages[0]["error"].is_null());
    let error = messages[2]["error"].as_str().expect("an error");
    assert!(error.starts_with("FENCED_MEMBER_EPOCH"), "{error}");
    // The records the joins wrote, caused by them.
    let records = page["records"].as_array().expect("records");
    assert!(
        records
            .iter()
            .any(|r| r["cause"] == "ConsumerGroupHeartbeat"),
        "{body}"
    );
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// One IncrementalAlterConfigs on the group: `value` None deletes the key. Returns the
/// resource's error code and message.
async fn alter_group_config(
    c: &mut Client,
    key: &str,
    value: Option<&str>,
) -> (i16, Option<String>) {
    use kafka_protocol::messages::incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig,
    };
    const GROUP_RESOURCE: i8 = 32;
    let mut config = AlterableConfig::default();
    config.name = s(key);
    config.config_operation = if value.is_some() { 0 } else { 1 };
    config.value = value.map(s);
    let mut res = AlterConfigsResource::default();
    res.resource_type = GROUP_RESOURCE;
    res.resource_name = s(GROUP);
    res.configs = vec![config];
    let mut req = IncrementalAlterConfigsRequest::default();
    req.resources = vec![res];
    let resp = c.call(1, &req).await.expect("IncrementalAlterConfigs");
    let r = &resp.responses[0];
    (
        r.error_code,
        r.error_message.as_ref().map(|m| m.to_string()),
    )
}

/// `kafka-configs --entity-type groups --alter --add-config consumer.heartbeat.interval.ms=...`
/// reaches a running consumer group at its next heartbeat, survives a restart, and a deleted
/// override gives the broker value back (docs/consumer-protocol.md §K8.1).
#[tokio::test]
async fn group_override_changes_the_heartbeat_interval() {
    const INVALID_CONFIG: i16 = 40;
    let dir = temp_dir("server-consumer-override");
    let server = start(options(dir.clone())).await.expect("server starts");
    let mut c = connect(&server, "c1").await;
    let r = c.call(1, &join_request("m1")).await.expect("join");
    assert_eq!((r.error_code, r.heartbeat_interval_ms), (NONE, 5000));

    // Out of the broker's range: refused with Kafka's message, nothing changes.
    let (code, msg) =
        alter_group_config(&mut c, "consumer.heartbeat.interval.ms", Some("3000")).await;
    assert_eq!(code, INVALID_CONFIG);
    assert_eq!(
        msg.as_deref(),
        Some("consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.")
    );
    let (code, msg) = alter_group_config(&mut c, "consumer.session.timeout.ms", Some("4000")).await;
    assert_eq!(code, INVALID_CONFIG, "{msg:?}");

    let (code, msg) =
        alter_group_config(&mut c, "consumer.heartbeat.interval.ms", Some("9000")).await;
    assert_eq!(code, NONE, "{msg:?}");
    let r = c
        .call(1, &heartbeat_request("m1", 2, &r))
        .await
        .expect("heartbeat");
    assert_eq!((r.error_code, r.heartbeat_interval_ms), (NONE, 9000));

    // The override is in the log: a restarted server still answers with it.
    drop(c);
    server.shutdown().await;
    let server = start(options(dir.clone())).await.expect("server restarts");
    let mut c = connect(&server, "c1").await;
    let r = c
        .call(1, &heartbeat_request("m1", 2, &r))
        .await
        .expect("heartbeat");
    assert_eq!((r.error_code, r.heartbeat_interval_ms), (NONE, 9000));

    // Deleted: the broker value again.
    let (code, _) = alter_group_config(&mut c, "consumer.heartbeat.interval.ms", None).await;
    assert_eq!(code, NONE);
    let r = c
        .call(1, &heartbeat_request("m1", 2, &r))
        .await
        .expect("heartbeat");
    assert_eq!((r.error_code, r.heartbeat_interval_ms), (NONE, 5000));
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
