//! Authorization and administration at the [`State::handle`] level: the stranger test of
//! issue 16, the ACL APIs, group configs over the wire, Metadata auto-creation, and the log
//! round trip (restart) of ACLs and group configs.

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use super::*;
use crate::config::CoordinatorConfig;
use crate::config_keys::{AUTHORIZER_CLASSES, AuthorizerKeys};
use crate::protocol::{StreamsGroupDescribeRequest, Subtopology, TopicInfo, Topology};
use crate::server::acl::AclChange;
use crate::server::peer::Principal;

const NOW: Millis = Millis(1_000_000);

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// A state with the authorizer on (`User:admin` is a super user).
fn secured() -> State {
    let config = CoordinatorConfig {
        initial_rebalance_delay_ms: 0,
        assignment_interval_ms: 0,
        ..Default::default()
    };
    let mut st = State::new(Coordinator::new(config), "127.0.0.1".into(), 9092);
    st.authorizer = Authorizer::new(&AuthorizerKeys {
        class_name: AUTHORIZER_CLASSES[0].into(),
        super_users: vec!["User:admin".into()],
        allow_everyone_if_no_acl_found: false,
    });
    st
}

fn open_state() -> State {
    let config = CoordinatorConfig {
        initial_rebalance_delay_ms: 0,
        assignment_interval_ms: 0,
        ..Default::default()
    };
    State::new(Coordinator::new(config), "127.0.0.1".into(), 9092)
}

fn peer(name: &str) -> Peer {
    Peer::anonymous("10.0.0.1").authenticated(Principal::user(name))
}

fn stranger() -> Peer {
    Peer::anonymous("10.6.6.6")
}

fn call(st: &mut State, who: &Peer, key: ApiKey, v: i16, req: RequestKind) -> Handled {
    let h = Header {
        api_key: key as i16,
        api_version: v,
        correlation_id: 1,
        client_id: Some("t".into()),
    };
    st.handle(NOW, &h, who, &Req::Kafka(req))
}

fn kafka_resp(h: Handled) -> ResponseKind {
    match h.resp {
        Resp::Kafka(k) => k,
        other => panic!("not a kafka response: {other:?}"),
    }
}

fn creation(rt: i8, name: &str, pt: i8, principal: &str, op: i8, perm: i8) -> AclCreation {
    let mut c = AclCreation::default();
    c.resource_type = rt;
    c.resource_name = s(name);
    c.resource_pattern_type = pt;
    c.principal = s(principal);
    c.host = s("*");
    c.operation = op;
    c.permission_type = perm;
    c
}

const TOPIC: i8 = 2;
const GROUP: i8 = 3;
const LITERAL: i8 = 3;
const PREFIXED: i8 = 4;
const ALLOW: i8 = 3;
const DENY: i8 = 2;
const READ: i8 = 3;
const WRITE: i8 = 4;
const CREATE: i8 = 5;
const DESCRIBE: i8 = 8;

fn create_acls(
    st: &mut State,
    who: &Peer,
    cs: Vec<AclCreation>,
) -> (CreateAclsResponse, Vec<LogEntry>) {
    let mut r = CreateAclsRequest::default();
    r.creations = cs;
    let h = call(st, who, ApiKey::CreateAcls, 3, RequestKind::CreateAcls(r));
    let entries = h.entries.clone();
    let ResponseKind::CreateAcls(resp) = kafka_resp(h) else {
        panic!("not CreateAcls");
    };
    (resp, entries)
}

fn create_topic(st: &mut State, who: &Peer, name: &str, partitions: i32) -> CreateTopicsResponse {
    let mut t = create_topics_request::CreatableTopic::default();
    t.name = TopicName(s(name));
    t.num_partitions = partitions;
    t.replication_factor = 1;
    let mut r = CreateTopicsRequest::default();
    r.topics = vec![t];
    let ResponseKind::CreateTopics(resp) = kafka_resp(call(
        st,
        who,
        ApiKey::CreateTopics,
        7,
        RequestKind::CreateTopics(r),
    )) else {
        panic!("not CreateTopics");
    };
    resp
}

fn heartbeat(
    st: &mut State,
    who: &Peer,
    r: StreamsGroupHeartbeatRequest,
) -> StreamsGroupHeartbeatResponse {
    let h = Header {
        api_key: 88,
        api_version: 0,
        correlation_id: 1,
        client_id: Some("t".into()),
    };
    match st.handle(NOW, &h, who, &Req::Heartbeat(r)).resp {
        Resp::Heartbeat(r) => r,
        other => panic!("not a heartbeat response: {other:?}"),
    }
}

fn join_request(
    group: &str,
    member: &str,
    changelog: Option<&str>,
) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        process_id: Some(format!("process-{member}")),
        topology: Some(Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                state_changelog_topics: changelog
                    .map(|c| {
                        vec![TopicInfo {
                            name: c.into(),
                            partitions: 0,
                            replication_factor: 0,
                            topic_configs: Vec::new(),
                            unknown_tagged_fields: Vec::new(),
                        }]
                    })
                    .unwrap_or_default(),
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

fn describe_streams(st: &mut State, who: &Peer, group: &str) -> crate::protocol::DescribedGroup {
    let h = Header {
        api_key: 89,
        api_version: 0,
        correlation_id: 1,
        client_id: Some("t".into()),
    };
    let req = StreamsGroupDescribeRequest {
        group_ids: vec![group.into()],
        include_authorized_operations: true,
        ..Default::default()
    };
    match st.handle(NOW, &h, who, &Req::Describe(req)).resp {
        Resp::Describe(mut d) => d.groups.remove(0),
        other => panic!("not a describe response: {other:?}"),
    }
}

/// The application `User:app` may use group `app` and the topics `app-*` and `input`.
fn app_acls(st: &mut State) {
    let (resp, _) = create_acls(
        st,
        &peer("admin"),
        vec![
            creation(GROUP, "app", LITERAL, "User:app", READ, ALLOW),
            creation(TOPIC, "input", LITERAL, "User:app", READ, ALLOW),
            creation(TOPIC, "app-", PREFIXED, "User:app", 2, ALLOW), // ALL
        ],
    );
    assert!(resp.results.iter().all(|r| r.error_code == 0), "{resp:?}");
}

/// Issue 16's stranger, refused at every step while the app keeps working.
#[test]
fn the_stranger_is_refused_at_every_step() {
    let mut st = secured();
    let admin = peer("admin");
    let app = peer("app");
    let who = stranger();
    assert_eq!(
        create_topic(&mut st, &admin, "input", 2).topics[0].error_code,
        0
    );
    app_acls(&mut st);
    let joined = heartbeat(&mut st, &app, join_request("app", "m1", None));
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    let epoch = joined.member_epoch;

    // Describe reveals nothing.
    let d = describe_streams(&mut st, &who, "app");
    assert_eq!(d.error_code, ErrorCode::GROUP_AUTHORIZATION_FAILED.0);
    assert!(d.members.is_empty() && d.topology.is_none());
    let mut dg = DescribeGroupsRequest::default();
    dg.groups = vec![GroupId(s("app"))];
    let ResponseKind::DescribeGroups(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::DescribeGroups,
        5,
        RequestKind::DescribeGroups(dg),
    )) else {
        panic!()
    };
    assert_eq!(
        r.groups[0].error_code,
        ErrorCode::GROUP_AUTHORIZATION_FAILED.0
    );
    assert!(r.groups[0].members.is_empty());
    let ResponseKind::ListGroups(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::ListGroups,
        5,
        RequestKind::ListGroups(ListGroupsRequest::default()),
    )) else {
        panic!()
    };
    assert!(r.groups.is_empty(), "{:?}", r.groups);
    let mut fc = FindCoordinatorRequest::default();
    fc.coordinator_keys = vec![s("app")];
    let ResponseKind::FindCoordinator(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::FindCoordinator,
        4,
        RequestKind::FindCoordinator(fc),
    )) else {
        panic!()
    };
    assert_eq!(
        r.coordinators[0].error_code,
        ErrorCode::GROUP_AUTHORIZATION_FAILED.0
    );
    assert_eq!(r.coordinators[0].node_id, BrokerId(-1));
    let mut of = OffsetFetchRequest::default();
    let mut g = offset_fetch_request::OffsetFetchRequestGroup::default();
    g.group_id = GroupId(s("app"));
    of.groups = vec![g];
    let ResponseKind::OffsetFetch(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::OffsetFetch,
        8,
        RequestKind::OffsetFetch(of),
    )) else {
        panic!()
    };
    assert_eq!(
        r.groups[0].error_code,
        ErrorCode::GROUP_AUTHORIZATION_FAILED.0
    );

    // Commit as the member: refused, nothing logged.
    let mut p = OffsetCommitRequestPartition::default();
    p.partition_index = 0;
    p.committed_offset = 99;
    let mut t = OffsetCommitRequestTopic::default();
    t.name = TopicName(s("input"));
    t.partitions = vec![p];
    let mut oc = OffsetCommitRequest::default();
    oc.group_id = GroupId(s("app"));
    oc.member_id = s("m1");
    oc.generation_id_or_member_epoch = epoch;
    oc.topics = vec![t];
    let h = call(
        &mut st,
        &who,
        ApiKey::OffsetCommit,
        9,
        RequestKind::OffsetCommit(oc),
    );
    assert!(h.entries.is_empty());
    let ResponseKind::OffsetCommit(r) = kafka_resp(h) else {
        panic!()
    };
    assert_eq!(
        r.topics[0].partitions[0].error_code,
        ErrorCode::GROUP_AUTHORIZATION_FAILED.0
    );

    // The member's leave: refused, the member stays.
    let leave = StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m1".into(),
        member_epoch: -1,
        ..Default::default()
    };
    assert_eq!(
        heartbeat(&mut st, &who, leave).error_code,
        ErrorCode::GROUP_AUTHORIZATION_FAILED.0
    );
    assert_eq!(st.coord.group("app").unwrap().members.len(), 1);

    // Delete the group, delete the input topic: refused.
    let mut dgr = DeleteGroupsRequest::default();
    dgr.groups_names = vec![GroupId(s("app"))];
    let ResponseKind::DeleteGroups(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::DeleteGroups,
        2,
        RequestKind::DeleteGroups(dgr),
    )) else {
        panic!()
    };
    assert_eq!(
        r.results[0].error_code,
        ErrorCode::GROUP_AUTHORIZATION_FAILED.0
    );
    assert!(st.coord.group("app").is_some());
    let mut dt = DeleteTopicsRequest::default();
    dt.topic_names = vec![TopicName(s("input"))];
    let ResponseKind::DeleteTopics(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::DeleteTopics,
        5,
        RequestKind::DeleteTopics(dt),
    )) else {
        panic!()
    };
    assert_eq!(
        r.responses[0].error_code,
        ErrorCode::TOPIC_AUTHORIZATION_FAILED.0
    );
    assert!(st.topics.contains_key("input"));
    // Nor may the stranger grant itself anything.
    let (r, entries) = create_acls(
        &mut st,
        &who,
        vec![creation(GROUP, "app", LITERAL, "User:ANONYMOUS", 2, ALLOW)],
    );
    assert_eq!(
        r.results[0].error_code,
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED.0
    );
    assert!(entries.is_empty());

    // The app itself still sees its group, with the operations its ACLs allow.
    let d = describe_streams(&mut st, &app, "app");
    assert_eq!(d.error_code, 0);
    assert_eq!(d.members.len(), 1);
    assert_eq!(
        d.authorized_operations,
        (1 << 3) | (1 << 8),
        "READ and DESCRIBE"
    );
}

#[test]
fn a_topology_naming_a_topic_the_member_may_not_describe_is_refused() {
    let mut st = secured();
    create_topic(&mut st, &peer("admin"), "input", 1);
    let (r, _) = create_acls(
        &mut st,
        &peer("admin"),
        vec![creation(GROUP, "app", LITERAL, "User:app", READ, ALLOW)],
    );
    assert_eq!(r.results[0].error_code, 0);
    let resp = heartbeat(&mut st, &peer("app"), join_request("app", "m1", None));
    assert_eq!(resp.error_code, ErrorCode::TOPIC_AUTHORIZATION_FAILED.0);
    assert!(st.coord.group("app").is_none());
}

#[test]
fn internal_topics_need_create_and_the_status_says_so() {
    let mut st = secured();
    create_topic(&mut st, &peer("admin"), "input", 2);
    let (r, _) = create_acls(
        &mut st,
        &peer("admin"),
        vec![
            creation(GROUP, "app", LITERAL, "User:app", READ, ALLOW),
            creation(TOPIC, "*", LITERAL, "User:app", DESCRIBE, ALLOW),
        ],
    );
    assert!(r.results.iter().all(|x| x.error_code == 0));
    let resp = heartbeat(
        &mut st,
        &peer("app"),
        join_request("app", "m1", Some("app-store-changelog")),
    );
    assert_eq!(resp.error_code, 0, "{:?}", resp.error_message);
    let status = resp.status.unwrap_or_default();
    let missing = status
        .iter()
        .find(|s| s.status_code == crate::protocol::status_code::MISSING_INTERNAL_TOPICS)
        .expect("MISSING_INTERNAL_TOPICS");
    assert!(
        missing
            .status_detail
            .ends_with("Unauthorized to CREATE on topics app-store-changelog."),
        "{}",
        missing.status_detail
    );
    assert!(!st.topics.contains_key("app-store-changelog"));
    // With CREATE on the topic prefix the next heartbeat creates it.
    create_acls(
        &mut st,
        &peer("admin"),
        vec![creation(TOPIC, "app-", PREFIXED, "User:app", CREATE, ALLOW)],
    );
    let mut again = join_request("app", "m2", Some("app-store-changelog"));
    again.process_id = Some("p2".into());
    let resp = heartbeat(&mut st, &peer("app"), again);
    assert_eq!(resp.error_code, 0);
    assert!(st.topics.contains_key("app-store-changelog"));
}

#[test]
fn acl_apis_round_trip_and_replay() {
    let mut st = secured();
    let admin = peer("admin");
    let (r, mut log) = create_acls(
        &mut st,
        &admin,
        vec![
            creation(GROUP, "app", LITERAL, "User:app", READ, ALLOW),
            creation(GROUP, "app", LITERAL, "User:app", READ, ALLOW), // duplicate: one ACL
            creation(TOPIC, "t-", PREFIXED, "User:*", WRITE, DENY),
            creation(4, "not-the-cluster", LITERAL, "User:a", 3, ALLOW),
            creation(GROUP, "g", LITERAL, "nocolon", READ, ALLOW),
        ],
    );
    let codes: Vec<i16> = r.results.iter().map(|x| x.error_code).collect();
    assert_eq!(codes, [0, 0, 0, 42, 42]);
    assert_eq!(
        r.results[3].error_message.as_deref(),
        Some("The only valid name for the CLUSTER resource is kafka-cluster")
    );
    assert_eq!(st.authorizer.len(), 2);

    // DescribeAcls: grouped by resource pattern; MATCH finds the prefixed ACL for "t-1".
    let mut d = DescribeAclsRequest::default();
    d.resource_type_filter = TOPIC;
    d.resource_name_filter = Some(s("t-1"));
    d.pattern_type_filter = 2;
    d.principal_filter = None;
    d.host_filter = None;
    d.operation = 1;
    d.permission_type = 1;
    let ResponseKind::DescribeAcls(r) = kafka_resp(call(
        &mut st,
        &admin,
        ApiKey::DescribeAcls,
        3,
        RequestKind::DescribeAcls(d.clone()),
    )) else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
    assert_eq!(r.resources.len(), 1);
    assert_eq!(r.resources[0].resource_name.as_str(), "t-");
    assert_eq!(r.resources[0].acls[0].permission_type, DENY);
    // A user without DESCRIBE on the cluster may not read them.
    let ResponseKind::DescribeAcls(r) = kafka_resp(call(
        &mut st,
        &peer("app"),
        ApiKey::DescribeAcls,
        3,
        RequestKind::DescribeAcls(d),
    )) else {
        panic!()
    };
    assert_eq!(r.error_code, ErrorCode::CLUSTER_AUTHORIZATION_FAILED.0);

    // Restart: the log rebuilds the ACLs.
    let fresh = replay(&log);
    assert_eq!(fresh.authorizer.acls().count(), 2);

    // DeleteAcls: every ACL on groups.
    let mut f = delete_acls_request::DeleteAclsFilter::default();
    f.resource_type_filter = GROUP;
    f.pattern_type_filter = 1;
    f.resource_name_filter = None;
    f.principal_filter = None;
    f.host_filter = None;
    f.operation = 1;
    f.permission_type = 1;
    let mut del = DeleteAclsRequest::default();
    del.filters = vec![f];
    let h = call(
        &mut st,
        &admin,
        ApiKey::DeleteAcls,
        3,
        RequestKind::DeleteAcls(del),
    );
    log.extend(h.entries.clone());
    let ResponseKind::DeleteAcls(r) = kafka_resp(h) else {
        panic!()
    };
    assert_eq!(r.filter_results[0].matching_acls.len(), 1);
    assert_eq!(st.authorizer.len(), 1);
    assert_eq!(replay(&log).authorizer.len(), 1);
}

#[test]
fn without_an_authorizer_acl_apis_say_security_disabled_and_nothing_changes() {
    let mut st = open_state();
    let (r, entries) = create_acls(
        &mut st,
        &stranger(),
        vec![creation(GROUP, "app", LITERAL, "User:app", READ, ALLOW)],
    );
    assert_eq!(r.results[0].error_code, ErrorCode::SECURITY_DISABLED.0);
    assert!(entries.is_empty());
    // Everything is allowed: the stranger may describe and delete, as before.
    create_topic(&mut st, &stranger(), "input", 1);
    heartbeat(&mut st, &stranger(), join_request("app", "m1", None));
    let d = describe_streams(&mut st, &stranger(), "app");
    assert_eq!((d.error_code, d.authorized_operations), (0, 3400));
}

fn replay(entries: &[LogEntry]) -> State {
    let mut fresh = secured();
    for e in entries {
        match e {
            LogEntry::Records(rs) => rs.iter().for_each(|r| fresh.coord.replay(r).unwrap()),
            LogEntry::Topics(ts) => fresh.apply_topics(ts),
            LogEntry::Acls(cs) => cs.iter().for_each(|c| fresh.authorizer.apply(c)),
            LogEntry::GroupConfigs(cs) => fresh.replay_group_configs(cs).unwrap(),
            LogEntry::Scram(cs) => fresh.apply_scram(cs),
        }
    }
    fresh
}

fn alter_group(
    st: &mut State,
    who: &Peer,
    group: &str,
    key: &str,
    value: &str,
) -> (i16, Option<String>, Vec<LogEntry>) {
    let mut c = AlterableConfig::default();
    c.name = s(key);
    c.config_operation = 0;
    c.value = Some(s(value));
    let mut res = AlterConfigsResource::default();
    res.resource_type = 32;
    res.resource_name = s(group);
    res.configs = vec![c];
    let mut r = IncrementalAlterConfigsRequest::default();
    r.resources = vec![res];
    let h = call(
        st,
        who,
        ApiKey::IncrementalAlterConfigs,
        1,
        RequestKind::IncrementalAlterConfigs(r),
    );
    let entries = h.entries.clone();
    let ResponseKind::IncrementalAlterConfigs(r) = kafka_resp(h) else {
        panic!()
    };
    let out = &r.responses[0];
    (
        out.error_code,
        out.error_message.as_ref().map(|m| m.to_string()),
        entries,
    )
}

#[test]
fn group_configs_over_the_wire_apply_to_the_running_group_and_replay() {
    let mut st = open_state();
    let anyone = stranger();
    create_topic(&mut st, &anyone, "input", 4);
    let joined = heartbeat(&mut st, &anyone, join_request("app", "m1", None));
    let epoch_before = st.coord.group("app").unwrap().group_epoch;
    let (code, msg, log) =
        alter_group(&mut st, &anyone, "app", "streams.num.standby.replicas", "1");
    assert_eq!(code, 0, "{msg:?}");
    assert_eq!(st.coord.config().for_group("app").num_standby_replicas, 1);
    // The next heartbeat sees the new assignment configs: a new group epoch (new target).
    let mut hb = StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: joined.member_id.clone(),
        member_epoch: joined.member_epoch,
        ..Default::default()
    };
    hb.active_tasks = None;
    heartbeat(&mut st, &anyone, hb);
    assert!(st.coord.group("app").unwrap().group_epoch > epoch_before);
    // Restart: the log brings the override back.
    let fresh = replay(&log);
    assert_eq!(
        fresh.coord.config().for_group("app").num_standby_replicas,
        1
    );

    // Kafka's validation against the broker bounds.
    let (code, msg, entries) =
        alter_group(&mut st, &anyone, "app", "streams.num.standby.replicas", "3");
    assert_eq!(code, ErrorCode::INVALID_CONFIG.0);
    assert_eq!(
        msg.as_deref(),
        Some("streams.num.standby.replicas must be less than or equal to 2")
    );
    assert!(entries.is_empty());
    let (code, msg, _) = alter_group(
        &mut st,
        &anyone,
        "app",
        "streams.session.timeout.ms",
        "1000",
    );
    assert_eq!(code, ErrorCode::INVALID_CONFIG.0);
    assert_eq!(
        msg.as_deref(),
        Some("streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.")
    );
    let (code, msg, _) = alter_group(&mut st, &anyone, "app", "no.such.key", "1");
    assert_eq!(
        (code, msg.as_deref()),
        (40, Some("Unknown group config name: no.such.key"))
    );
    let (code, _, _) = alter_group(
        &mut st,
        &anyone,
        "app",
        "consumer.session.timeout.ms",
        "50000",
    );
    assert_eq!(code, 0);

    // DescribeConfigs shows the override as a group config.
    let mut res = describe_configs_request::DescribeConfigsResource::default();
    res.resource_type = 32;
    res.resource_name = s("app");
    let mut dc = DescribeConfigsRequest::default();
    dc.resources = vec![res];
    let ResponseKind::DescribeConfigs(r) = kafka_resp(call(
        &mut st,
        &anyone,
        ApiKey::DescribeConfigs,
        4,
        RequestKind::DescribeConfigs(dc),
    )) else {
        panic!()
    };
    let standby = r.results[0]
        .configs
        .iter()
        .find(|c| c.name.as_str() == "streams.num.standby.replicas")
        .unwrap();
    assert_eq!(standby.value.as_deref(), Some("1"));
    assert_eq!(standby.config_source, 8);
    let consumer = r.results[0]
        .configs
        .iter()
        .find(|c| c.name.as_str() == "consumer.session.timeout.ms")
        .unwrap();
    assert_eq!(consumer.value.as_deref(), Some("50000"));
}

#[test]
fn configs_need_describe_configs_and_alter_configs() {
    let mut st = secured();
    let (code, _, entries) = alter_group(
        &mut st,
        &peer("app"),
        "app",
        "streams.num.standby.replicas",
        "1",
    );
    assert_eq!(code, ErrorCode::GROUP_AUTHORIZATION_FAILED.0);
    assert!(entries.is_empty());
    create_acls(
        &mut st,
        &peer("admin"),
        vec![creation(GROUP, "app", LITERAL, "User:app", 11, ALLOW)], // ALTER_CONFIGS
    );
    let (code, _, _) = alter_group(
        &mut st,
        &peer("app"),
        "app",
        "streams.num.standby.replicas",
        "1",
    );
    assert_eq!(code, 0);
    // ALTER_CONFIGS implies DESCRIBE_CONFIGS; the broker needs it on the cluster.
    let mut g = describe_configs_request::DescribeConfigsResource::default();
    g.resource_type = 32;
    g.resource_name = s("app");
    let mut b = describe_configs_request::DescribeConfigsResource::default();
    b.resource_type = 4;
    b.resource_name = s("0");
    let mut dc = DescribeConfigsRequest::default();
    dc.resources = vec![g, b];
    let ResponseKind::DescribeConfigs(r) = kafka_resp(call(
        &mut st,
        &peer("app"),
        ApiKey::DescribeConfigs,
        4,
        RequestKind::DescribeConfigs(dc),
    )) else {
        panic!()
    };
    assert_eq!(r.results[0].error_code, 0);
    assert_eq!(
        r.results[1].error_code,
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED.0
    );
}

fn metadata(
    st: &mut State,
    who: &Peer,
    topic: &str,
    auto: bool,
) -> (MetadataResponse, Vec<LogEntry>) {
    let mut t = MetadataRequestTopic::default();
    t.name = Some(TopicName(s(topic)));
    let mut r = MetadataRequest::default();
    r.topics = Some(vec![t]);
    r.allow_auto_topic_creation = auto;
    let h = call(st, who, ApiKey::Metadata, 12, RequestKind::Metadata(r));
    let entries = h.entries.clone();
    let ResponseKind::Metadata(m) = kafka_resp(h) else {
        panic!()
    };
    (m, entries)
}

#[test]
fn metadata_auto_creates_topics_as_kafka_does() {
    let mut st = open_state();
    let (m, entries) = metadata(&mut st, &stranger(), "fresh", false);
    assert_eq!(
        m.topics[0].error_code,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
    );
    assert!(entries.is_empty());
    let (m, entries) = metadata(&mut st, &stranger(), "fresh", true);
    assert_eq!(m.topics[0].error_code, ErrorCode::LEADER_NOT_AVAILABLE.0);
    assert_eq!(entries.len(), 1);
    assert_eq!(st.topics.get("fresh"), Some(&1), "num.partitions");
    let (m, _) = metadata(&mut st, &stranger(), "fresh", true);
    assert_eq!(
        (m.topics[0].error_code, m.topics[0].partitions.len()),
        (0, 1)
    );
    // auto.create.topics.enable=false
    st.topic_defaults.auto_create_topics_enable = false;
    let (m, _) = metadata(&mut st, &stranger(), "other", true);
    assert_eq!(
        m.topics[0].error_code,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.0
    );
}

#[test]
fn metadata_answers_refused_topics_as_kafka_does() {
    let mut st = secured();
    create_topic(&mut st, &peer("admin"), "hidden", 1);
    create_acls(
        &mut st,
        &peer("admin"),
        vec![creation(
            TOPIC, "mine", PREFIXED, "User:app", DESCRIBE, ALLOW,
        )],
    );
    // No DESCRIBE: TOPIC_AUTHORIZATION_FAILED, existing or not.
    let (m, _) = metadata(&mut st, &peer("app"), "hidden", true);
    assert_eq!(
        m.topics[0].error_code,
        ErrorCode::TOPIC_AUTHORIZATION_FAILED.0
    );
    assert!(m.topics[0].partitions.is_empty());
    // DESCRIBE but no CREATE: the auto-creation is refused, nothing is created.
    let (m, entries) = metadata(&mut st, &peer("app"), "mine-1", true);
    assert_eq!(
        m.topics[0].error_code,
        ErrorCode::TOPIC_AUTHORIZATION_FAILED.0
    );
    assert!(entries.is_empty());
    // An all-topics request leaves refused topics out.
    let mut r = MetadataRequest::default();
    r.topics = None;
    let ResponseKind::Metadata(m) = kafka_resp(call(
        &mut st,
        &peer("app"),
        ApiKey::Metadata,
        12,
        RequestKind::Metadata(r),
    )) else {
        panic!()
    };
    assert!(m.topics.is_empty());
}

#[test]
fn acls_and_group_configs_survive_a_restart_and_a_compaction() {
    let dir = std::env::temp_dir().join(format!("groupcoord-acl-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut st = secured();
    let mut log = crate::server::storage::recover(&dir, 1 << 30, &mut st).unwrap();
    app_acls(&mut st);
    // app_acls' entries went nowhere: log a fresh set through the log instead.
    let (_, entries) = create_acls(
        &mut st,
        &peer("admin"),
        vec![creation(
            GROUP, "other", LITERAL, "User:bob", DESCRIBE, ALLOW,
        )],
    );
    let (code, _, cfg) = alter_group(
        &mut st,
        &peer("admin"),
        "app",
        "streams.num.standby.replicas",
        "2",
    );
    assert_eq!(code, 0);
    log.append(&entries).unwrap();
    log.append(&cfg).unwrap();
    log.sync().unwrap();
    drop(log);
    let check = |dir: &std::path::Path| {
        let mut fresh = secured();
        let log = crate::server::storage::recover(dir, 1 << 30, &mut fresh).unwrap();
        assert!(
            fresh
                .authorizer
                .acls()
                .any(|a| a.resource_name == "other" && a.principal == "User:bob")
        );
        assert_eq!(
            fresh.coord.config().for_group("app").num_standby_replicas,
            2
        );
        log
    };
    let mut log = check(&dir);
    // Compaction keeps the latest ACL set and configs.
    let gone = AclChange::Create(
        crate::server::acl::validate_new(3, "gone", 3, "User:x", "*", 3, 3).unwrap(),
    );
    log.append(&[LogEntry::Acls(vec![gone.clone()])]).unwrap();
    let AclChange::Create(a) = gone else {
        unreachable!()
    };
    log.append(&[LogEntry::Acls(vec![AclChange::Delete(a)])])
        .unwrap();
    log.snapshot().unwrap();
    drop(log);
    let mut fresh = secured();
    let _log = crate::server::storage::recover(&dir, 1 << 30, &mut fresh).unwrap();
    assert!(fresh.authorizer.acls().any(|a| a.resource_name == "other"));
    assert!(!fresh.authorizer.acls().any(|a| a.resource_name == "gone"));
    assert_eq!(
        fresh.coord.config().for_group("app").num_standby_replicas,
        2
    );
    drop(_log);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn classic_group_requests_need_read_on_the_group() {
    let mut st = secured();
    let who = stranger();
    let mut j = JoinGroupRequest::default();
    j.group_id = GroupId(s("classic"));
    j.session_timeout_ms = 10_000;
    j.rebalance_timeout_ms = 10_000;
    j.protocol_type = s("consumer");
    let h = call(
        &mut st,
        &who,
        ApiKey::JoinGroup,
        9,
        RequestKind::JoinGroup(j.clone()),
    );
    assert!(h.entries.is_empty());
    let ResponseKind::JoinGroup(r) = kafka_resp(h) else {
        panic!()
    };
    assert_eq!((r.error_code, r.generation_id), (30, -1));
    assert!(r.protocol_name.is_none());
    // Before v7 the protocol name is not nullable: the empty string.
    let ResponseKind::JoinGroup(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::JoinGroup,
        5,
        RequestKind::JoinGroup(j),
    )) else {
        panic!()
    };
    assert_eq!(r.protocol_name.as_deref(), Some(""));
    let mut hb = HeartbeatRequest::default();
    hb.group_id = GroupId(s("classic"));
    let ResponseKind::Heartbeat(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::Heartbeat,
        4,
        RequestKind::Heartbeat(hb),
    )) else {
        panic!()
    };
    assert_eq!(r.error_code, 30);
    let mut lv = LeaveGroupRequest::default();
    lv.group_id = GroupId(s("classic"));
    let ResponseKind::LeaveGroup(r) = kafka_resp(call(
        &mut st,
        &who,
        ApiKey::LeaveGroup,
        5,
        RequestKind::LeaveGroup(lv),
    )) else {
        panic!()
    };
    assert_eq!(r.error_code, 30);
    // With READ on the group the join goes to the coordinator (deferred, as usual).
    create_acls(
        &mut st,
        &peer("admin"),
        vec![creation(
            GROUP,
            "classic",
            LITERAL,
            "User:ANONYMOUS",
            READ,
            ALLOW,
        )],
    );
    let mut j = JoinGroupRequest::default();
    j.group_id = GroupId(s("classic"));
    j.session_timeout_ms = 10_000;
    j.rebalance_timeout_ms = 10_000;
    j.protocol_type = s("consumer");
    let h = call(
        &mut st,
        &who,
        ApiKey::JoinGroup,
        9,
        RequestKind::JoinGroup(j),
    );
    assert!(matches!(h.resp, Resp::Deferred(_)));
}

#[test]
fn produce_and_fetch_need_write_and_read_per_topic() {
    let mut st = secured();
    create_topic(&mut st, &peer("admin"), "ok", 1);
    create_topic(&mut st, &peer("admin"), "no", 1);
    create_acls(
        &mut st,
        &peer("admin"),
        vec![
            creation(TOPIC, "ok", LITERAL, "User:app", WRITE, ALLOW),
            creation(TOPIC, "ok", LITERAL, "User:app", READ, ALLOW),
        ],
    );
    let mut f = FetchRequest::default();
    for name in ["ok", "no"] {
        let mut t = fetch_request::FetchTopic::default();
        t.topic = TopicName(s(name));
        t.partitions = vec![fetch_request::FetchPartition::default()];
        f.topics.push(t);
    }
    let ResponseKind::Fetch(r) = kafka_resp(call(
        &mut st,
        &peer("app"),
        ApiKey::Fetch,
        12,
        RequestKind::Fetch(f),
    )) else {
        panic!()
    };
    let code = |name: &str| {
        r.responses
            .iter()
            .find(|t| t.topic.as_str() == name)
            .map(|t| t.partitions[0].error_code)
    };
    assert_eq!(code("ok"), Some(0));
    assert_eq!(code("no"), Some(ErrorCode::TOPIC_AUTHORIZATION_FAILED.0));

    // v13+ (the Java consumer 4.x) names topics by id: checked on the name the id stands for.
    let mut f = FetchRequest::default();
    for name in ["ok", "no"] {
        let mut t = fetch_request::FetchTopic::default();
        t.topic_id = super::consumer::uuid(&crate::assignor::consumer::TopicId::from_name(name));
        t.partitions = vec![fetch_request::FetchPartition::default()];
        f.topics.push(t);
    }
    let ResponseKind::Fetch(r) = kafka_resp(call(
        &mut st,
        &peer("app"),
        ApiKey::Fetch,
        17,
        RequestKind::Fetch(f),
    )) else {
        panic!()
    };
    let code = |name: &str| {
        r.responses
            .iter()
            .find(|t| {
                t.topic_id
                    == super::consumer::uuid(&crate::assignor::consumer::TopicId::from_name(name))
            })
            .map(|t| t.partitions[0].error_code)
    };
    assert_eq!(code("ok"), Some(0));
    assert_eq!(code("no"), Some(ErrorCode::TOPIC_AUTHORIZATION_FAILED.0));
    let mut p = ProduceRequest::default();
    p.acks = 1;
    for name in ["ok", "no"] {
        let mut t = produce_request::TopicProduceData::default();
        t.name = TopicName(s(name));
        let mut pd = produce_request::PartitionProduceData::default();
        pd.records = None;
        t.partition_data = vec![pd];
        p.topic_data.push(t);
    }
    let ResponseKind::Produce(r) = kafka_resp(call(
        &mut st,
        &peer("app"),
        ApiKey::Produce,
        9,
        RequestKind::Produce(p),
    )) else {
        panic!()
    };
    let no = r
        .responses
        .iter()
        .find(|t| t.name.as_str() == "no")
        .unwrap();
    assert_eq!(
        no.partition_responses[0].error_code,
        ErrorCode::TOPIC_AUTHORIZATION_FAILED.0
    );
}
