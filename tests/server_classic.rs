//! Classic consumer groups through the server over TCP: deferred JoinGroup / SyncGroup answers
//! routed to the waiting connections, heartbeats, leave, a closed connection while waiting, and a
//! restart that replays the group's generation and offsets.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::{http_get, live_group, s, temp_dir};

use std::path::PathBuf;
use std::time::Duration;

use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, ServerHandle, start};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::leave_group_request::MemberIdentity;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::*;

const GROUP: &str = "cg";
const NONE: i16 = 0;
const ILLEGAL_GENERATION: i16 = 22;
const REBALANCE_IN_PROGRESS: i16 = 27;
const MEMBER_ID_REQUIRED: i16 = 79;
const GROUP_ID_NOT_FOUND: i16 = 69;
const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;

fn options(dir: PathBuf) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir);
    o.owners = common::test_owners();
    o.topics = vec![("t".into(), 6)];
    // Long enough for two members to join one generation, short for the test.
    o.coordinator.classic.initial_rebalance_delay_ms = 300;
    o
}

async fn connect(h: &ServerHandle, client_id: &str) -> Client {
    let mut c = Client::connect(h.addr).await.expect("connect");
    c.client_id = Some(client_id.into());
    c
}

fn join_request(member_id: &str, version: i16) -> JoinGroupRequest {
    let mut p = JoinGroupRequestProtocol::default();
    p.name = s("range");
    // ConsumerProtocolSubscription v0: topics ["t"], null user data.
    p.metadata = bytes::Bytes::from_static(b"\x00\x00\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff");
    let mut r = JoinGroupRequest::default();
    r.group_id = GroupId(s(GROUP));
    r.session_timeout_ms = 30_000;
    r.rebalance_timeout_ms = 10_000;
    r.member_id = s(member_id);
    r.protocol_type = s("consumer");
    r.protocols = vec![p];
    if version >= 8 {
        r.reason = Some(s("test"));
    }
    r
}

/// JoinGroup at `version` until the member has an id (MEMBER_ID_REQUIRED from v4), then the
/// join that waits for the generation.
async fn get_member_id(c: &mut Client, version: i16) -> String {
    let r = c
        .call(version, &join_request("", version))
        .await
        .expect("join");
    assert_eq!(r.error_code, MEMBER_ID_REQUIRED);
    assert!(!r.member_id.is_empty());
    r.member_id.to_string()
}

async fn join(c: &mut Client, member_id: &str, version: i16) -> JoinGroupResponse {
    c.call(version, &join_request(member_id, version))
        .await
        .expect("join")
}

async fn sync(
    c: &mut Client,
    version: i16,
    member_id: &str,
    generation: i32,
    assignments: Vec<(String, &'static [u8])>,
) -> SyncGroupResponse {
    let mut r = SyncGroupRequest::default();
    r.group_id = GroupId(s(GROUP));
    r.generation_id = generation;
    r.member_id = s(member_id);
    if version >= 5 {
        r.protocol_type = Some(s("consumer"));
        r.protocol_name = Some(s("range"));
    }
    r.assignments = assignments
        .into_iter()
        .map(|(m, a)| {
            let mut x = SyncGroupRequestAssignment::default();
            x.member_id = s(&m);
            x.assignment = bytes::Bytes::from_static(a);
            x
        })
        .collect();
    c.call(version, &r).await.expect("sync")
}

async fn heartbeat(c: &mut Client, version: i16, member_id: &str, generation: i32) -> i16 {
    let mut r = HeartbeatRequest::default();
    r.group_id = GroupId(s(GROUP));
    r.generation_id = generation;
    r.member_id = s(member_id);
    c.call(version, &r).await.expect("heartbeat").error_code
}

/// LeaveGroup of one member: in `members` from v3, in `member_id` before.
async fn leave(c: &mut Client, version: i16, member_id: &str) -> LeaveGroupResponse {
    let mut r = LeaveGroupRequest::default();
    r.group_id = GroupId(s(GROUP));
    if version >= 3 {
        let mut m = MemberIdentity::default();
        m.member_id = s(member_id);
        r.members = vec![m];
    } else {
        r.member_id = s(member_id);
    }
    c.call(version, &r).await.expect("leave")
}

async fn describe(c: &mut Client) -> describe_groups_response::DescribedGroup {
    let mut r = DescribeGroupsRequest::default();
    r.groups = vec![GroupId(s(GROUP))];
    let mut d = c.call(5, &r).await.expect("describe");
    d.groups.remove(0)
}

async fn commit(c: &mut Client, member_id: &str, generation: i32, offset: i64) -> i16 {
    let mut p = OffsetCommitRequestPartition::default();
    p.partition_index = 0;
    p.committed_offset = offset;
    let mut t = OffsetCommitRequestTopic::default();
    t.name = TopicName(s("t"));
    t.partitions = vec![p];
    let mut r = OffsetCommitRequest::default();
    r.group_id = GroupId(s(GROUP));
    r.generation_id_or_member_epoch = generation;
    r.member_id = s(member_id);
    r.topics = vec![t];
    let resp = c.call(8, &r).await.expect("commit");
    resp.topics[0].partitions[0].error_code
}

async fn fetch_offset(c: &mut Client) -> i64 {
    let mut t = OffsetFetchRequestTopic::default();
    t.name = TopicName(s("t"));
    t.partition_indexes = vec![0];
    let mut r = OffsetFetchRequest::default();
    r.group_id = GroupId(s(GROUP));
    r.topics = Some(vec![t]);
    let resp = c.call(7, &r).await.expect("offset fetch");
    assert_eq!(resp.error_code, NONE);
    resp.topics[0].partitions[0].committed_offset
}

/// The live view shows a classic group from the coordinator (the partitions the leader's
/// SyncGroup assigned each member) and its swimlanes the real exchanges: the MEMBER_ID_REQUIRED
/// round trip, the JoinGroup answered when the join phase ends (a deferred answer: its answer
/// time is later than its request's), SyncGroup, Heartbeat and LeaveGroup.
#[tokio::test]
async fn live_view_and_history_show_a_classic_group() {
    let dir = temp_dir("classic-live");
    let mut o = options(dir.clone());
    o.http = Some("127.0.0.1:0".parse().unwrap());
    let server = start(o).await.expect("server starts");
    let http = server.http_addr.unwrap();
    http_get(http, "/api/groups").await; // someone looks: the history records
    let mut c = connect(&server, "consumer-a").await;
    let id = get_member_id(&mut c, 9).await;
    let j = join(&mut c, &id, 9).await;
    assert_eq!((j.error_code, j.leader.as_str()), (NONE, id.as_str()));
    // ConsumerProtocolAssignment v0: t-0 and t-1, null user data.
    const ASSIGNMENT: &[u8] =
        b"\x00\x00\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\xff\xff\xff\xff";
    let sr = sync(
        &mut c,
        5,
        &id,
        j.generation_id,
        vec![(id.clone(), ASSIGNMENT)],
    )
    .await;
    assert_eq!(sr.error_code, NONE);
    assert_eq!(heartbeat(&mut c, 4, &id, j.generation_id).await, NONE);

    let g = live_group(http, GROUP).await;
    assert_eq!(g["group_type"], "classic");
    let v = &g["view"];
    assert_eq!(
        (v["state"].as_str(), v["group_epoch"].as_i64()),
        (Some("Stable"), Some(1))
    );
    assert_eq!(v["members"][0]["member_id"], id.as_str());
    assert_eq!(v["members"][0]["active"], serde_json::json!(["t-0", "t-1"]));
    assert_eq!(v["classic"]["leader"], id.as_str());
    assert_eq!(
        v["classic"]["owned_by_nobody"],
        serde_json::json!(["t-2", "t-3", "t-4", "t-5"])
    );

    assert_eq!(leave(&mut c, 5, &id).await.error_code, NONE);
    let body = http_get(http, &format!("/api/history?group={GROUP}")).await;
    let page: serde_json::Value = serde_json::from_str(&body).expect("json");
    let messages = page["messages"].as_array().expect("messages");
    let apis: Vec<&str> = messages
        .iter()
        .map(|m| m["api"].as_str().unwrap())
        .collect();
    assert_eq!(
        apis,
        [
            "JoinGroup",
            "JoinGroup",
            "SyncGroup",
            "Heartbeat",
            "LeaveGroup"
        ],
        "{body}"
    );
    for m in messages {
        assert_eq!(m["member_id"], id.as_str(), "{m}");
        assert_eq!(m["fate"], "delivered", "{m}");
        assert!(!m["request_hex"].as_str().unwrap().is_empty(), "{m}");
        assert!(m["response_hex"].as_str().is_some(), "{m}");
    }
    assert!(
        messages[0]["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("MEMBER_ID_REQUIRED")),
        "{}",
        messages[0]
    );
    // The join waited for the initial rebalance delay (300 ms): answered later.
    let (sent, received) = (
        messages[1]["sent_ms"].as_i64().unwrap(),
        messages[1]["received_ms"].as_i64().unwrap(),
    );
    assert!(received >= sent + 250, "sent {sent}, answered {received}");
    assert_eq!(messages[1]["response"]["generation_id"], 1);
    assert_eq!(messages[1]["request"]["protocols"][0]["name"], "range");
    assert_eq!(
        messages[2]["request"]["assignments"][0][1]
            .as_array()
            .map(|b| b.len()),
        Some(ASSIGNMENT.len())
    );
    assert!(
        messages.iter().skip(1).all(|m| m["error"].is_null()),
        "{body}"
    );
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// The server keeps each classic group's state transitions with their times, whether or not
/// anyone watches, and serves them with the group's history: the join phase (ended by the
/// initial rebalance delay's timer), the sync phase (the leader's SyncGroup follows its
/// JoinGroup answer at once: a millisecond or less, too short for a page polling the group's
/// state to see), Stable; a lone member rejoining goes Stable → PreparingRebalance →
/// CompletingRebalance in one JoinGroup, and both transitions are there.
#[tokio::test]
async fn the_history_names_every_rebalance_phase_with_its_time() {
    let dir = temp_dir("classic-phases");
    let mut o = options(dir.clone());
    o.http = Some("127.0.0.1:0".parse().unwrap());
    let server = start(o).await.expect("server starts");
    let http = server.http_addr.unwrap();
    // Nobody looks until the end.
    let mut c = connect(&server, "consumer-a").await;
    let id = get_member_id(&mut c, 9).await;
    let j = join(&mut c, &id, 9).await;
    assert_eq!(j.error_code, NONE);
    let answered_ms = groupcoord::server::now_ms().0;
    // The leader takes 50 ms to assign: the first sync phase is that long at least.
    tokio::time::sleep(Duration::from_millis(50)).await;
    const ASSIGNMENT: &[u8] =
        b"\x00\x00\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff";
    let sr = sync(&mut c, 5, &id, 1, vec![(id.clone(), ASSIGNMENT)]).await;
    assert_eq!(sr.error_code, NONE);
    // The leader joins again: the join phase ends at once (it is the only member).
    let j2 = join(&mut c, &id, 9).await;
    assert_eq!((j2.error_code, j2.generation_id), (NONE, 2));
    let sr = sync(&mut c, 5, &id, 2, vec![(id.clone(), ASSIGNMENT)]).await;
    assert_eq!(sr.error_code, NONE);

    let body = http_get(http, &format!("/api/history?group={GROUP}")).await;
    let page: serde_json::Value = serde_json::from_str(&body).expect("json");
    let phases: Vec<(&str, i64)> = page["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| (p["state"].as_str().unwrap(), p["at_ms"].as_i64().unwrap()))
        .collect();
    let states: Vec<&str> = phases.iter().map(|p| p.0).collect();
    assert_eq!(
        states,
        [
            "Empty",
            "PreparingRebalance",
            "CompletingRebalance",
            "Stable",
            "PreparingRebalance",
            "CompletingRebalance",
            "Stable"
        ],
        "{body}"
    );
    let at = |i: usize| phases[i].1;
    assert!(
        phases.windows(2).all(|w| w[0].1 <= w[1].1),
        "in time order: {body}"
    );
    // The join phase lasted the initial rebalance delay (300 ms); the sync phase is as long as
    // the leader's round trip.
    // The join phase lasted the initial rebalance delay (300 ms); its end (a timer) came
    // before the JoinGroup answer; the first sync phase lasted the leader's 50 ms.
    assert!(at(2) - at(1) >= 250, "join phase {} ms", at(2) - at(1));
    assert!(at(2) <= answered_ms, "{} > {answered_ms}", at(2));
    assert!(at(3) - at(2) >= 50, "sync phase {} ms", at(3) - at(2));
    // The second round: both transitions of the JoinGroup at its time, then a sync phase as
    // long as the leader's round trip.
    assert_eq!(at(4), at(5), "two transitions in one JoinGroup");
    assert!(at(6) - at(5) < 1000, "sync phase {} ms", at(6) - at(5));
    println!(
        "join phase {} ms, sync phases {} ms and {} ms",
        at(2) - at(1),
        at(3) - at(2),
        at(6) - at(5)
    );
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// Two members join concurrently on two connections (v9 and v5, non-flexible), both answers
/// come when the join phase ends; the follower's SyncGroup waits for the leader's; heartbeats;
/// a third member makes the heartbeat answer REBALANCE_IN_PROGRESS; everyone rejoins; the third
/// leaves; a restart replays the generation, the members and the offsets.
#[tokio::test]
async fn two_members_join_sync_heartbeat_rebalance_leave_and_restart() {
    let dir = temp_dir("classic-round");
    let server = start(options(dir.clone())).await.expect("server starts");
    let mut a = connect(&server, "consumer-a").await;
    let mut b = connect(&server, "consumer-b").await;
    let id_a = get_member_id(&mut a, 9).await;
    let id_b = get_member_id(&mut b, 5).await;
    let (ja, jb) = tokio::join!(join(&mut a, &id_a, 9), join(&mut b, &id_b, 5));
    assert_eq!((ja.error_code, jb.error_code), (NONE, NONE));
    assert_eq!(ja.generation_id, 1);
    assert_eq!(jb.generation_id, 1);
    assert_eq!(ja.leader, jb.leader);
    assert_eq!(ja.protocol_name.as_deref(), Some("range"));
    assert_eq!(jb.protocol_name.as_deref(), Some("range"));
    assert_eq!(
        ja.protocol_type.as_deref(),
        Some("consumer"),
        "v7+ carries it"
    );
    let generation = ja.generation_id;
    let (leader, mut lc, follower, mut fc, fv) = if ja.leader.as_str() == id_a {
        assert_eq!(ja.members.len(), 2);
        assert!(jb.members.is_empty());
        (id_a.clone(), a, id_b.clone(), b, 5)
    } else {
        assert_eq!(jb.members.len(), 2);
        assert!(ja.members.is_empty());
        (id_b.clone(), b, id_a.clone(), a, 9)
    };
    let lv = if fv == 5 { 9 } else { 5 };
    // The follower's SyncGroup is held until the leader's arrives.
    let follower_sync = async {
        let r = sync(&mut fc, fv.min(5), &follower, generation, vec![]).await;
        (r, fc)
    };
    let leader_sync = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let assignments = vec![
            (leader.clone(), &b"for-leader"[..]),
            (follower.clone(), &b"for-follower"[..]),
        ];
        let r = sync(&mut lc, lv.min(5), &leader, generation, assignments).await;
        (r, lc)
    };
    let ((fs, fc2), (ls, lc2)) = tokio::join!(follower_sync, leader_sync);
    let (mut fc, mut lc) = (fc2, lc2);
    assert_eq!(fs.error_code, NONE);
    assert_eq!(&fs.assignment[..], b"for-follower");
    assert_eq!(ls.error_code, NONE);
    assert_eq!(&ls.assignment[..], b"for-leader");
    assert_eq!(heartbeat(&mut lc, 4, &leader, generation).await, NONE);
    assert_eq!(heartbeat(&mut fc, 1, &follower, generation).await, NONE);
    assert_eq!(
        heartbeat(&mut fc, 1, &follower, generation + 1).await,
        ILLEGAL_GENERATION
    );
    assert_eq!(commit(&mut lc, &leader, generation, 42).await, NONE);
    assert_eq!(describe(&mut lc).await.group_state.as_str(), "Stable");
    let mut dg = DeleteGroupsRequest::default();
    dg.groups_names = vec![GroupId(s(GROUP))];
    let dr = lc.call(2, &dg).await.expect("delete groups");
    assert_eq!(dr.results[0].error_code, 68, "NON_EMPTY_GROUP");
    // ListGroups v5 with the classic filters, beside the data plane's groups.
    let mut lg = ListGroupsRequest::default();
    lg.states_filter = vec![s("Stable")];
    lg.types_filter = vec![s("classic")];
    let listed = lc.call(5, &lg).await.expect("list groups");
    let row = listed.groups.iter().find(|g| g.group_id.as_str() == GROUP);
    let row = row.expect("the classic group is listed");
    assert_eq!(
        (
            row.group_state.as_str(),
            row.group_type.as_str(),
            row.protocol_type.as_str()
        ),
        ("Stable", "classic", "consumer")
    );
    lg.types_filter = vec![s("streams")];
    let listed = lc.call(5, &lg).await.expect("list groups");
    assert!(listed.groups.iter().all(|g| g.group_id.as_str() != GROUP));

    // A third member: its join waits, and the others learn of the rebalance by heartbeat.
    let mut c = connect(&server, "consumer-c").await;
    let id_c = get_member_id(&mut c, 7).await;
    let third = tokio::spawn(async move {
        let r = join(&mut c, &id_c, 7).await;
        (r, c, id_c)
    });
    let mut saw_rebalance = false;
    for _ in 0..50 {
        if heartbeat(&mut lc, 4, &leader, generation).await == REBALANCE_IN_PROGRESS {
            saw_rebalance = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        saw_rebalance,
        "heartbeat never answered REBALANCE_IN_PROGRESS"
    );
    let (jl, jf) = tokio::join!(join(&mut lc, &leader, lv), join(&mut fc, &follower, fv));
    let (jc, mut c, id_c) = third.await.unwrap();
    for j in [&jl, &jf, &jc] {
        assert_eq!(j.error_code, NONE);
        assert_eq!(j.generation_id, generation + 1);
    }
    let generation = generation + 1;
    assert_eq!(
        [&jl, &jf, &jc]
            .iter()
            .map(|j| j.members.len())
            .sum::<usize>(),
        3,
        "only the leader gets the member list"
    );

    // The third member leaves (v5, batched); the group rebalances again.
    let lr = leave(&mut c, 5, &id_c).await;
    assert_eq!(lr.error_code, NONE);
    assert_eq!(lr.members.len(), 1);
    assert_eq!(lr.members[0].error_code, NONE);
    assert_eq!(
        heartbeat(&mut lc, 4, &leader, generation).await,
        REBALANCE_IN_PROGRESS
    );
    let (jl, jf) = tokio::join!(join(&mut lc, &leader, lv), join(&mut fc, &follower, fv));
    let generation = generation + 1;
    assert_eq!(
        (jl.generation_id, jf.generation_id),
        (generation, generation)
    );
    let leader = jl.leader.to_string();
    let (l, f, lcv) = if leader == jl.member_id.as_str() {
        (&mut lc, &mut fc, lv)
    } else {
        (&mut fc, &mut lc, fv)
    };
    let fid = if leader == jl.member_id.as_str() {
        jf.member_id.to_string()
    } else {
        jl.member_id.to_string()
    };
    let (ls, fs) = tokio::join!(
        sync(
            l,
            lcv.min(5),
            &leader,
            generation,
            vec![(leader.clone(), &b"x"[..]), (fid.clone(), &b"y"[..])]
        ),
        sync(f, 3, &fid, generation, vec![])
    );
    assert_eq!((ls.error_code, fs.error_code), (NONE, NONE));
    assert_eq!(&fs.assignment[..], b"y");
    assert_eq!(commit(&mut lc, &leader, generation, 77).await, NONE);
    drop((lc, fc, c));

    // Restart: the log replays the group (generation, members, assignment) and the offsets.
    server.shutdown().await;
    let server = start(options(dir)).await.expect("server restarts");
    let mut x = connect(&server, "after-restart").await;
    let d = describe(&mut x).await;
    assert_eq!(d.group_state.as_str(), "Stable");
    assert_eq!(d.members.len(), 2);
    assert_eq!(heartbeat(&mut x, 4, &leader, generation).await, NONE);
    assert_eq!(heartbeat(&mut x, 4, &fid, generation).await, NONE);
    assert_eq!(
        heartbeat(&mut x, 4, &leader, generation - 1).await,
        ILLEGAL_GENERATION
    );
    assert_eq!(fetch_offset(&mut x).await, 77);
    // OffsetDelete: refused for a topic the Stable group subscribes to; unknown group.
    let offset_delete = |group: &str, topic: &str| {
        let mut p = offset_delete_request::OffsetDeleteRequestPartition::default();
        p.partition_index = 0;
        let mut t = offset_delete_request::OffsetDeleteRequestTopic::default();
        t.name = TopicName(s(topic));
        t.partitions = vec![p];
        let mut r = OffsetDeleteRequest::default();
        r.group_id = GroupId(s(group));
        r.topics = vec![t];
        r
    };
    let od = x
        .call(0, &offset_delete(GROUP, "t"))
        .await
        .expect("offset delete");
    assert_eq!(od.error_code, NONE);
    assert_eq!(
        od.topics[0].partitions[0].error_code,
        GROUP_SUBSCRIBED_TO_TOPIC
    );
    let od = x
        .call(0, &offset_delete("nope", "t"))
        .await
        .expect("offset delete");
    assert_eq!(od.error_code, GROUP_ID_NOT_FOUND);
    assert_eq!(fetch_offset(&mut x).await, 77);
    server.shutdown().await;
}

/// A member whose connection closes while its JoinGroup waits: the server drops the answer and
/// keeps serving; the other member's join completes; responses on a connection stay in request
/// order behind a deferred one.
#[tokio::test]
async fn a_connection_closed_while_waiting_does_not_block_the_group() {
    let server = start(options(temp_dir("classic-closed")))
        .await
        .expect("server starts");
    let mut a = connect(&server, "consumer-a").await;
    let mut b = connect(&server, "consumer-b").await;
    let id_a = get_member_id(&mut a, 9).await;
    let id_b = get_member_id(&mut b, 9).await;
    // a's join is sent and the connection closed before the answer.
    let mut body = bytes::BytesMut::new();
    kafka_protocol::protocol::Encodable::encode(&join_request(&id_a, 9), &mut body, 9).unwrap();
    a.send_body(11, 9, &body).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(a);
    // b pipelines a JoinGroup and a ListGroups: the ListGroups answer comes after the join's.
    let mut body = bytes::BytesMut::new();
    kafka_protocol::protocol::Encodable::encode(&join_request(&id_b, 9), &mut body, 9).unwrap();
    let join_corr = b.send_body(11, 9, &body).await.unwrap();
    let mut body = bytes::BytesMut::new();
    kafka_protocol::protocol::Encodable::encode(&ListGroupsRequest::default(), &mut body, 4)
        .unwrap();
    let list_corr = b.send_body(16, 4, &body).await.unwrap();
    let first = b
        .read_body(11, 9, join_corr)
        .await
        .expect("join answer first");
    let j = <JoinGroupResponse as kafka_protocol::protocol::Decodable>::decode(
        &mut bytes::Bytes::from(first),
        9,
    )
    .unwrap();
    assert_eq!(j.error_code, NONE);
    assert_eq!(j.generation_id, 1);
    b.read_body(16, 4, list_corr).await.expect("then the list");
    // The closed member is still a member (it expires by session timeout, as in Kafka).
    assert_eq!(describe(&mut b).await.members.len(), 2);
    server.shutdown().await;
}

/// The oldest served versions: JoinGroup v2 (no MEMBER_ID_REQUIRED before v4: the id comes with
/// the generation), SyncGroup v0, Heartbeat v0 and LeaveGroup v0 (one member, one error code).
#[tokio::test]
async fn oldest_versions_join_sync_heartbeat_leave() {
    let server = start(options(temp_dir("classic-old")))
        .await
        .expect("server starts");
    let mut a = connect(&server, "old-a").await;
    let j = join(&mut a, "", 2).await;
    assert_eq!(j.error_code, NONE);
    assert_eq!(j.generation_id, 1);
    assert_eq!(j.leader, j.member_id);
    assert_eq!(j.members.len(), 1);
    let id = j.member_id.to_string();
    let sr = sync(&mut a, 0, &id, 1, vec![(id.clone(), &b"all"[..])]).await;
    assert_eq!((sr.error_code, &sr.assignment[..]), (NONE, &b"all"[..]));
    assert_eq!(heartbeat(&mut a, 0, &id, 1).await, NONE);
    let lr = leave(&mut a, 0, "not-a-member").await;
    assert_eq!(lr.error_code, 25, "UNKNOWN_MEMBER_ID for a stranger");
    let lr = leave(&mut a, 0, &id).await;
    assert_eq!(lr.error_code, NONE);
    assert_eq!(describe(&mut a).await.group_state.as_str(), "Empty");
    // DeleteGroups: an Empty classic group goes (Dead to describe afterwards).
    let mut dg = DeleteGroupsRequest::default();
    dg.groups_names = vec![GroupId(s(GROUP))];
    let dr = a.call(2, &dg).await.expect("delete groups");
    assert_eq!(dr.results[0].error_code, NONE);
    assert_eq!(describe(&mut a).await.group_state.as_str(), "Dead");
    server.shutdown().await;
}

/// The rebalance timeout completes a join phase: a member that does not rejoin is removed when
/// the timer fires, and the waiting joins on the other connections are answered then.
#[tokio::test]
async fn the_rebalance_timeout_answers_the_waiting_joins() {
    let server = start(options(temp_dir("classic-timeout")))
        .await
        .expect("server starts");
    async fn join_fast(c: &mut Client, member_id: &str) -> JoinGroupResponse {
        let mut r = join_request(member_id, 9);
        r.rebalance_timeout_ms = 1_000;
        c.call(9, &r).await.expect("join")
    }
    let mut a = connect(&server, "a").await;
    let mut b = connect(&server, "b").await;
    let id_a = get_member_id(&mut a, 9).await;
    let id_b = get_member_id(&mut b, 9).await;
    let (ja, jb) = tokio::join!(join_fast(&mut a, &id_a), join_fast(&mut b, &id_b));
    assert_eq!((ja.generation_id, jb.generation_id), (1, 1));
    // A third member joins; a rejoins; b stays silent.
    let mut c = connect(&server, "c").await;
    let id_c = get_member_id(&mut c, 9).await;
    let started = std::time::Instant::now();
    let (jc, ja) = tokio::join!(join_fast(&mut c, &id_c), join_fast(&mut a, &id_a));
    let waited = started.elapsed();
    assert_eq!((jc.error_code, ja.error_code), (NONE, NONE));
    assert_eq!((jc.generation_id, ja.generation_id), (2, 2));
    assert!(
        waited >= Duration::from_millis(900),
        "answered after {waited:?}, before the rebalance timeout"
    );
    let leader = if ja.leader == ja.member_id { &ja } else { &jc };
    assert_eq!(leader.members.len(), 2, "b was removed");
    assert_eq!(
        heartbeat(&mut b, 4, &id_b, 1).await,
        25,
        "UNKNOWN_MEMBER_ID"
    );
    server.shutdown().await;
}

/// Every served version of JoinGroup (2-9), SyncGroup (0-5), Heartbeat (0-4) and LeaveGroup
/// (0-5) in a one-member round: join, sync, heartbeat, leave.
#[tokio::test]
async fn every_served_version_round_trips() {
    let server = start(options(temp_dir("classic-versions")))
        .await
        .expect("server starts");
    let mut c = connect(&server, "versions").await;
    for i in 0..8i16 {
        let (jv, sv, hv, lv) = (2 + i, i % 6, i % 5, (i + 3) % 6);
        let id = if jv >= 4 {
            get_member_id(&mut c, jv).await
        } else {
            String::new()
        };
        let j = join(&mut c, &id, jv).await;
        assert_eq!(j.error_code, NONE, "JoinGroup v{jv}");
        assert_eq!(j.leader, j.member_id, "JoinGroup v{jv}");
        assert_eq!(j.protocol_name.as_deref(), Some("range"), "JoinGroup v{jv}");
        let id = j.member_id.to_string();
        let generation = j.generation_id;
        let sr = sync(&mut c, sv, &id, generation, vec![(id.clone(), &b"a"[..])]).await;
        assert_eq!(
            (sr.error_code, &sr.assignment[..]),
            (NONE, &b"a"[..]),
            "SyncGroup v{sv}"
        );
        if sv >= 5 {
            assert_eq!(sr.protocol_name.as_deref(), Some("range"));
        }
        assert_eq!(
            heartbeat(&mut c, hv, &id, generation).await,
            NONE,
            "Heartbeat v{hv}"
        );
        let lr = leave(&mut c, lv, &id).await;
        assert_eq!(lr.error_code, NONE, "LeaveGroup v{lv}");
        assert_eq!(describe(&mut c).await.group_state.as_str(), "Empty");
    }
    server.shutdown().await;
}
