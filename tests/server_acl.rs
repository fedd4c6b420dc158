#![cfg(not(target_arch = "wasm32"))]
//! Authorization over the wire (issue 16's stranger): ACLs created with CreateAcls survive a
//! restart, and an unauthenticated client (`User:ANONYMOUS`, not a super user) is refused at
//! every step of the attack on a streams application. Until a listener authenticates clients,
//! every connection is `User:ANONYMOUS`: the "application" of the first phase is therefore a
//! super user, and the second phase restarts the same log with another super user.

mod common;

use common::{s, temp_dir};
use groupcoord::config_keys::{AUTHORIZER_CLASSES, AuthorizerKeys};
use groupcoord::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest, Subtopology, Topology,
};
use groupcoord::server::tools::client::Client;
use groupcoord::server::{ServeOptions, start};
use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;

fn options(dir: &std::path::Path, super_user: &str) -> ServeOptions {
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.to_path_buf());
    o.owners = common::test_owners();
    o.topics = vec![("input".into(), 2)];
    o.coordinator.initial_rebalance_delay_ms = 0;
    o.server.authorizer = AuthorizerKeys {
        class_name: AUTHORIZER_CLASSES[0].into(),
        super_users: vec![super_user.into()],
        allow_everyone_if_no_acl_found: false,
    };
    o
}

fn join() -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m1".into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        process_id: Some("p1".into()),
        topology: Some(Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                ..Default::default()
            }],
            ..Default::default()
        }),
        active_tasks: Some(Vec::new()),
        standby_tasks: Some(Vec::new()),
        warmup_tasks: Some(Vec::new()),
        ..Default::default()
    }
}

fn commit(epoch: i32) -> OffsetCommitRequest {
    let mut p = OffsetCommitRequestPartition::default();
    p.partition_index = 0;
    p.committed_offset = 7;
    let mut t = OffsetCommitRequestTopic::default();
    t.name = TopicName(s("input"));
    t.partitions = vec![p];
    let mut r = OffsetCommitRequest::default();
    r.group_id = GroupId(s("app"));
    r.member_id = s("m1");
    r.generation_id_or_member_epoch = epoch;
    r.topics = vec![t];
    r
}

fn describe_acls() -> DescribeAclsRequest {
    let mut d = DescribeAclsRequest::default();
    d.resource_type_filter = 1;
    d.resource_name_filter = None;
    d.pattern_type_filter = 1;
    d.principal_filter = None;
    d.host_filter = None;
    d.operation = 1;
    d.permission_type = 1;
    d
}

#[tokio::test]
async fn the_stranger_is_refused_over_the_wire_and_acls_survive_a_restart() {
    let dir = temp_dir("acl-stranger");

    // Phase 1: the application (a super user for now) joins and commits; the admin grants
    // User:app READ on its group.
    let srv = start(options(&dir, "User:ANONYMOUS")).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let joined = c.heartbeat(0, &join()).await.unwrap();
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    let r: OffsetCommitResponse = c.call(9, &commit(joined.member_epoch)).await.unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    let mut acl = AclCreation::default();
    acl.resource_type = 3;
    acl.resource_name = s("app");
    acl.resource_pattern_type = 3;
    acl.principal = s("User:app");
    acl.host = s("*");
    acl.operation = 3;
    acl.permission_type = 3;
    let mut create = CreateAclsRequest::default();
    create.creations = vec![acl];
    let r: CreateAclsResponse = c.call(3, &create).await.unwrap();
    assert_eq!(r.results[0].error_code, 0);
    drop(c);
    srv.shutdown().await;

    // Phase 2: same log, User:ANONYMOUS is a stranger now.
    let srv = start(options(&dir, "User:admin")).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let d = c
        .describe(
            0,
            &StreamsGroupDescribeRequest {
                group_ids: vec!["app".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(d.groups[0].error_code, 30, "GROUP_AUTHORIZATION_FAILED");
    assert!(d.groups[0].members.is_empty());
    let r: OffsetCommitResponse = c.call(9, &commit(joined.member_epoch)).await.unwrap();
    assert_eq!(r.topics[0].partitions[0].error_code, 30);
    let leave = StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m1".into(),
        member_epoch: -1,
        ..Default::default()
    };
    assert_eq!(c.heartbeat(0, &leave).await.unwrap().error_code, 30);
    let mut del = DeleteGroupsRequest::default();
    del.groups_names = vec![GroupId(s("app"))];
    let r: DeleteGroupsResponse = c.call(2, &del).await.unwrap();
    assert_eq!(r.results[0].error_code, 30);
    let mut dt = DeleteTopicsRequest::default();
    let mut t = DeleteTopicState::default();
    t.name = Some(TopicName(s("input")));
    dt.topics = vec![t];
    let r: DeleteTopicsResponse = c.call(6, &dt).await.unwrap();
    assert_eq!(r.responses[0].error_code, 29, "TOPIC_AUTHORIZATION_FAILED");
    let mut fc = FindCoordinatorRequest::default();
    fc.coordinator_keys = vec![s("app")];
    let r: FindCoordinatorResponse = c.call(4, &fc).await.unwrap();
    assert_eq!(r.coordinators[0].error_code, 30);
    let r: DescribeAclsResponse = c.call(3, &describe_acls()).await.unwrap();
    assert_eq!(r.error_code, 31, "CLUSTER_AUTHORIZATION_FAILED");
    drop(c);
    srv.shutdown().await;

    // Phase 3: the admin again: the ACL, the group and its offsets are all still there.
    let srv = start(options(&dir, "User:ANONYMOUS")).await.unwrap();
    let mut c = Client::connect(srv.addr).await.unwrap();
    let r: DescribeAclsResponse = c.call(3, &describe_acls()).await.unwrap();
    assert_eq!(r.error_code, 0);
    assert_eq!(r.resources.len(), 1);
    assert_eq!(r.resources[0].acls[0].principal.as_str(), "User:app");
    let mut of = OffsetFetchRequest::default();
    let mut g = offset_fetch_request::OffsetFetchRequestGroup::default();
    g.group_id = GroupId(s("app"));
    g.topics = None;
    of.groups = vec![g];
    let r: OffsetFetchResponse = c.call(9, &of).await.unwrap();
    assert_eq!(r.groups[0].error_code, 0);
    assert_eq!(r.groups[0].topics[0].partitions[0].committed_offset, 7);
    drop(c);
    srv.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
