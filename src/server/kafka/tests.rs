//! [`State::handle`] called directly: no sockets, no threads, time passed in.

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;

use super::*;
use crate::config::CoordinatorConfig;
use crate::protocol::{StreamsGroupDescribeRequest, Subtopology, Topology};

const NOW: Millis = Millis(1_000_000);

fn state() -> State {
    let config = CoordinatorConfig {
        initial_rebalance_delay_ms: 0,
        assignment_interval_ms: 0,
        ..Default::default()
    };
    State::new(Coordinator::new(config), "127.0.0.1".into(), 9092)
}

fn header(api_key: i16, api_version: i16) -> Header {
    Header {
        api_key,
        api_version,
        correlation_id: 7,
        client_id: Some("unit".into()),
    }
}

fn kafka(state: &mut State, key: ApiKey, version: i16, req: RequestKind) -> Handled {
    state.handle(
        NOW,
        &header(key as i16, version),
        &Peer::anonymous("10.0.0.1"),
        &Req::Kafka(req),
    )
}

fn create_topic(state: &mut State, name: &str, partitions: i32) -> Handled {
    let mut t = CreatableTopic::default();
    t.name = TopicName(StrBytes::from_string(name.into()));
    t.num_partitions = partitions;
    t.replication_factor = 1;
    let mut r = CreateTopicsRequest::default();
    r.topics = vec![t];
    kafka(state, ApiKey::CreateTopics, 5, RequestKind::CreateTopics(r))
}

fn join(state: &mut State, group: &str, member: &str) -> Handled {
    let r = StreamsGroupHeartbeatRequest {
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
                ..Default::default()
            }],
            ..Default::default()
        }),
        active_tasks: Some(Vec::new()),
        standby_tasks: Some(Vec::new()),
        warmup_tasks: Some(Vec::new()),
        ..Default::default()
    };
    state.handle(
        NOW,
        &header(88, 0),
        &Peer::anonymous("10.0.0.1"),
        &Req::Heartbeat(r),
    )
}

fn describe(state: &State, group: &str) -> crate::protocol::DescribedGroup {
    let req = StreamsGroupDescribeRequest {
        group_ids: vec![group.into()],
        ..Default::default()
    };
    state.coord.streams_group_describe(&req, 0).groups.remove(0)
}

/// Replay every entry into a fresh state, as the server does at start-up.
fn replayed(entries: &[LogEntry]) -> State {
    let mut fresh = state();
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

#[test]
fn create_topics_answers_and_logs_the_registry_change() {
    let mut st = state();
    let h = create_topic(&mut st, "input", 3);
    let Resp::Kafka(ResponseKind::CreateTopics(resp)) = h.resp else {
        panic!("not a CreateTopics response");
    };
    assert_eq!(resp.topics[0].error_code, 0);
    assert_eq!(
        h.entries,
        vec![LogEntry::Topics(vec![TopicChange::Set {
            name: "input".into(),
            partitions: 3
        }])]
    );
    assert_eq!(st.topics.get("input"), Some(&3));
    // A second create is refused and logs nothing.
    let again = create_topic(&mut st, "input", 3);
    let Resp::Kafka(ResponseKind::CreateTopics(resp)) = again.resp else {
        panic!("not a CreateTopics response");
    };
    assert_eq!(resp.topics[0].error_code, ErrorCode::TOPIC_ALREADY_EXISTS.0);
    assert!(again.entries.is_empty());
}

#[test]
fn read_only_requests_log_nothing() {
    let mut st = state();
    create_topic(&mut st, "input", 2);
    let mut md = MetadataRequest::default();
    md.topics = None;
    let h = kafka(&mut st, ApiKey::Metadata, 9, RequestKind::Metadata(md));
    assert!(h.entries.is_empty());
    let Resp::Kafka(ResponseKind::Metadata(resp)) = h.resp else {
        panic!("not a Metadata response");
    };
    assert_eq!(resp.topics.len(), 1);
    assert_eq!(resp.topics[0].partitions.len(), 2);
    let h = kafka(
        &mut st,
        ApiKey::ListGroups,
        4,
        RequestKind::ListGroups(ListGroupsRequest::default()),
    );
    assert!(h.entries.is_empty());
    assert_eq!(st.counters.requests, 3);
}

#[test]
fn a_join_is_answered_and_its_records_replay_to_the_same_group() {
    let mut st = state();
    let mut log = create_topic(&mut st, "input", 4).entries;
    let h = join(&mut st, "app", "m1");
    let Resp::Heartbeat(resp) = &h.resp else {
        panic!("not a heartbeat response");
    };
    assert_eq!(resp.error_code, 0, "{:?}", resp.error_message);
    assert!(resp.member_epoch > 0);
    assert!(
        h.entries
            .iter()
            .any(|e| matches!(e, LogEntry::Records(rs) if !rs.is_empty())),
        "a join writes records"
    );
    log.extend(h.entries);
    assert_eq!(st.counters.heartbeats, 1);
    // Restart = replay: the replayed coordinator describes the group as the live one does.
    let fresh = replayed(&log);
    let live = describe(&st, "app");
    assert_eq!(live.error_code, 0);
    assert_eq!(live.members.len(), 1);
    let again = describe(&fresh, "app");
    assert_eq!(
        (again.group_epoch, again.members.len()),
        (live.group_epoch, 1)
    );
}

#[test]
fn committed_offsets_are_logged_and_read_back() {
    let mut st = state();
    create_topic(&mut st, "input", 2);
    let mut p = OffsetCommitRequestPartition::default();
    p.partition_index = 1;
    p.committed_offset = 42;
    let mut t = OffsetCommitRequestTopic::default();
    t.name = TopicName(StrBytes::from_static_str("input"));
    t.partitions = vec![p];
    let mut commit = OffsetCommitRequest::default();
    commit.group_id = GroupId(StrBytes::from_static_str("plain"));
    commit.generation_id_or_member_epoch = -1;
    commit.topics = vec![t];
    let h = kafka(
        &mut st,
        ApiKey::OffsetCommit,
        8,
        RequestKind::OffsetCommit(commit),
    );
    let Resp::Kafka(ResponseKind::OffsetCommit(resp)) = &h.resp else {
        panic!("not an OffsetCommit response");
    };
    assert_eq!(resp.topics[0].partitions[0].error_code, 0);
    assert!(matches!(
        h.entries.as_slice(),
        [LogEntry::Records(rs)] if matches!(rs.as_slice(), [crate::records::Record::OffsetCommit { partition: 1, .. }])
    ));
    let mut ft = OffsetFetchRequestTopic::default();
    ft.name = TopicName(StrBytes::from_static_str("input"));
    ft.partition_indexes = vec![1];
    let mut fetch = OffsetFetchRequest::default();
    fetch.group_id = GroupId(StrBytes::from_static_str("plain"));
    fetch.topics = Some(vec![ft]);
    let h = kafka(
        &mut st,
        ApiKey::OffsetFetch,
        7,
        RequestKind::OffsetFetch(fetch),
    );
    assert!(h.entries.is_empty());
    let Resp::Kafka(ResponseKind::OffsetFetch(resp)) = h.resp else {
        panic!("not an OffsetFetch response");
    };
    assert_eq!(resp.topics[0].partitions[0].committed_offset, 42);
}

// Classic groups: JoinGroup and SyncGroup answers are deferred and come out of `take_answers`.

fn join_group(state: &mut State, now: Millis, member_id: &str) -> Handled {
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    let mut p = JoinGroupRequestProtocol::default();
    p.name = StrBytes::from_static_str("range");
    p.metadata = bytes::Bytes::from_static(b"sub");
    let mut r = JoinGroupRequest::default();
    r.group_id = GroupId(StrBytes::from_static_str("cg"));
    r.session_timeout_ms = 45_000;
    r.rebalance_timeout_ms = 60_000;
    r.member_id = StrBytes::from_string(member_id.into());
    r.protocol_type = StrBytes::from_static_str("consumer");
    r.protocols = vec![p];
    state.handle(
        now,
        &header(11, 9),
        &Peer::anonymous("10.0.0.1"),
        &Req::Kafka(RequestKind::JoinGroup(r)),
    )
}

fn sync_group(
    state: &mut State,
    now: Millis,
    member_id: &str,
    generation: i32,
    assignments: &[(&str, &'static [u8])],
) -> Handled {
    use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
    let mut r = SyncGroupRequest::default();
    r.group_id = GroupId(StrBytes::from_static_str("cg"));
    r.generation_id = generation;
    r.member_id = StrBytes::from_string(member_id.into());
    r.protocol_type = Some(StrBytes::from_static_str("consumer"));
    r.protocol_name = Some(StrBytes::from_static_str("range"));
    r.assignments = assignments
        .iter()
        .map(|(m, a)| {
            let mut x = SyncGroupRequestAssignment::default();
            x.member_id = StrBytes::from_string(m.to_string());
            x.assignment = bytes::Bytes::from_static(a);
            x
        })
        .collect();
    state.handle(
        now,
        &header(14, 5),
        &Peer::anonymous("10.0.0.1"),
        &Req::Kafka(RequestKind::SyncGroup(r)),
    )
}

fn classic_heartbeat(state: &mut State, now: Millis, member_id: &str, generation: i32) -> i16 {
    let mut r = HeartbeatRequest::default();
    r.group_id = GroupId(StrBytes::from_static_str("cg"));
    r.generation_id = generation;
    r.member_id = StrBytes::from_string(member_id.into());
    let h = state.handle(
        now,
        &header(12, 4),
        &Peer::anonymous("10.0.0.1"),
        &Req::Kafka(RequestKind::Heartbeat(r)),
    );
    let Resp::Kafka(ResponseKind::Heartbeat(resp)) = h.resp else {
        panic!("not a heartbeat response")
    };
    resp.error_code
}

fn deferred_token(h: &Handled) -> crate::coordinator::classic::RequestToken {
    match h.resp {
        Resp::Deferred(t) => t,
        ref other => panic!("expected a deferred answer, got {other:?}"),
    }
}

fn answers(state: &mut State) -> Vec<(crate::coordinator::classic::RequestToken, Resp)> {
    state.take_answers()
}

fn join_answer(resp: Resp) -> JoinGroupResponse {
    match resp {
        Resp::Kafka(ResponseKind::JoinGroup(j)) => j,
        other => panic!("expected a JoinGroup response, got {other:?}"),
    }
}

fn sync_answer(resp: Resp) -> SyncGroupResponse {
    match resp {
        Resp::Kafka(ResponseKind::SyncGroup(s)) => s,
        other => panic!("expected a SyncGroup response, got {other:?}"),
    }
}

/// Two members: MEMBER_ID_REQUIRED, both joins held until the initial delay ends (a timer), the
/// leader's SyncGroup answers the waiting follower too, then heartbeats; a third member's join
/// makes the next heartbeat answer REBALANCE_IN_PROGRESS.
#[test]
fn classic_join_sync_heartbeat_round_with_two_members() {
    let mut state = state();
    let mut member_ids = Vec::new();
    let mut tokens = Vec::new();
    for _ in 0..2 {
        // v4+: the first join only hands out a member id.
        let first = join_group(&mut state, NOW, "");
        let t = deferred_token(&first);
        let mut got = answers(&mut state);
        assert_eq!(got.len(), 1);
        let (token, resp) = got.remove(0);
        assert_eq!(token, t);
        let j = join_answer(resp);
        assert_eq!(j.error_code, ErrorCode::MEMBER_ID_REQUIRED.0);
        assert!(!j.member_id.is_empty());
        // The rejoin waits for the join phase to end.
        let again = join_group(&mut state, NOW, &j.member_id);
        tokens.push(deferred_token(&again));
        assert!(
            answers(&mut state).is_empty(),
            "join answered before the phase ended"
        );
        member_ids.push(j.member_id.to_string());
    }
    assert_eq!(state.deferred().len(), 2);
    // The initial rebalance delay (3 s, extended once for the second member) ends the phase:
    // a timer answers both joins.
    let mut done = Vec::new();
    let mut ended_at = 0;
    for second in 1..=10 {
        state.fire_timers(Millis(NOW.0 + second * 1_000));
        done = answers(&mut state);
        if !done.is_empty() {
            ended_at = second;
            break;
        }
    }
    assert_eq!(ended_at, 6, "initial delay 3 s, extended by 3 s");
    assert_eq!(done.len(), 2);
    let mut leader = String::new();
    let mut generation = -1;
    for (token, resp) in done {
        assert!(tokens.contains(&token));
        let j = join_answer(resp);
        assert_eq!(j.error_code, 0);
        assert_eq!(j.protocol_name.as_deref(), Some("range"));
        leader = j.leader.to_string();
        generation = j.generation_id;
        if j.member_id == j.leader {
            assert_eq!(j.members.len(), 2, "the leader gets every member");
        } else {
            assert!(j.members.is_empty());
        }
    }
    assert_eq!(generation, 1);
    assert!(state.deferred().is_empty());
    let follower = member_ids.iter().find(|m| **m != leader).unwrap().clone();
    let t = Millis(NOW.0 + 6_100);
    // The follower's SyncGroup waits for the leader's.
    let f = sync_group(&mut state, t, &follower, generation, &[]);
    let follower_token = deferred_token(&f);
    assert!(answers(&mut state).is_empty());
    let l = sync_group(
        &mut state,
        t,
        &leader,
        generation,
        &[(leader.as_str(), b"a0"), (follower.as_str(), b"a1")],
    );
    let leader_token = deferred_token(&l);
    assert!(
        !l.entries.is_empty(),
        "the assignment is written (GroupMetadata)"
    );
    let mut got: std::collections::HashMap<_, _> = answers(&mut state)
        .into_iter()
        .map(|(t, r)| (t, sync_answer(r)))
        .collect();
    assert_eq!(got.len(), 2);
    let fa = got.remove(&follower_token).unwrap();
    assert_eq!((fa.error_code, &fa.assignment[..]), (0, &b"a1"[..]));
    let la = got.remove(&leader_token).unwrap();
    assert_eq!((la.error_code, &la.assignment[..]), (0, &b"a0"[..]));
    assert_eq!(classic_heartbeat(&mut state, t, &leader, generation), 0);
    assert_eq!(classic_heartbeat(&mut state, t, &follower, generation), 0);
    assert_eq!(
        classic_heartbeat(&mut state, t, &follower, generation + 1),
        ErrorCode::ILLEGAL_GENERATION.0
    );
    // A third member: MEMBER_ID_REQUIRED, then its join starts a rebalance.
    let third = join_group(&mut state, t, "");
    deferred_token(&third);
    let id = join_answer(answers(&mut state).remove(0).1).member_id;
    join_group(&mut state, t, &id);
    assert_eq!(
        classic_heartbeat(&mut state, t, &leader, generation),
        ErrorCode::REBALANCE_IN_PROGRESS.0
    );
}

/// Answers for tokens the server forgot (the connection closed) are dropped.
#[test]
fn classic_forgotten_token_is_not_answered() {
    let mut state = state();
    let first = join_group(&mut state, NOW, "");
    deferred_token(&first);
    let id = join_answer(answers(&mut state).remove(0).1).member_id;
    let again = join_group(&mut state, NOW, &id);
    state.forget(deferred_token(&again));
    for second in 1..=10 {
        state.fire_timers(Millis(NOW.0 + second * 1_000));
        assert!(answers(&mut state).is_empty());
    }
    // The join phase did end (the answer existed and was dropped).
    let g = state.coord.classic_group("cg").unwrap();
    assert_eq!(g.state.name(), "CompletingRebalance");
    assert!(state.deferred().is_empty());
}

/// DescribeGroups of a classic group is the core's answer (state, protocol, members).
#[test]
fn classic_describe_groups_lists_the_group() {
    let mut state = state();
    let first = join_group(&mut state, NOW, "");
    deferred_token(&first);
    let id = join_answer(answers(&mut state).remove(0).1).member_id;
    join_group(&mut state, NOW, &id);
    let mut r = DescribeGroupsRequest::default();
    r.groups = vec![GroupId(StrBytes::from_static_str("cg"))];
    let h = kafka(
        &mut state,
        ApiKey::DescribeGroups,
        5,
        RequestKind::DescribeGroups(r),
    );
    let Resp::Kafka(ResponseKind::DescribeGroups(d)) = h.resp else {
        panic!("not a DescribeGroups response")
    };
    assert_eq!(d.groups[0].group_state.as_str(), "PreparingRebalance");
    assert_eq!(d.groups[0].protocol_type.as_str(), "consumer");
    assert_eq!(d.groups[0].members.len(), 1);
    assert_eq!(d.groups[0].members[0].member_id, id);
}

fn describe_groups(
    state: &mut State,
    version: i16,
    ids: &[&str],
    ops: bool,
) -> DescribeGroupsResponse {
    let mut r = DescribeGroupsRequest::default();
    r.groups = ids
        .iter()
        .map(|g| GroupId(StrBytes::from_string(g.to_string())))
        .collect();
    r.include_authorized_operations = ops;
    let h = kafka(
        state,
        ApiKey::DescribeGroups,
        version,
        RequestKind::DescribeGroups(r),
    );
    let Resp::Kafka(ResponseKind::DescribeGroups(d)) = h.resp else {
        panic!("not a DescribeGroups response")
    };
    d
}

/// Found by the classic differential run: Kafka 4.4 sends the authorized operations of every
/// group it answers without error (v3+, when asked; no authorizer: every group operation), and
/// looks an empty group id up like any other (Dead before v6, GROUP_ID_NOT_FOUND from v6).
#[test]
fn classic_describe_groups_authorized_operations_and_empty_id() {
    let mut state = state();
    join_group(&mut state, NOW, "");
    let d = describe_groups(&mut state, 5, &["cg", "nope", ""], true);
    let ops: Vec<i32> = d.groups.iter().map(|g| g.authorized_operations).collect();
    assert_eq!(ops, vec![3400, 3400, 3400]);
    assert_eq!(d.groups[2].error_code, 0);
    assert_eq!(d.groups[2].group_state.as_str(), "Dead");
    let d = describe_groups(&mut state, 6, &["cg", ""], true);
    assert_eq!(d.groups[0].authorized_operations, 3400);
    assert_eq!(d.groups[1].error_code, ErrorCode::GROUP_ID_NOT_FOUND.0);
    assert_eq!(d.groups[1].authorized_operations, i32::MIN);
    let d = describe_groups(&mut state, 5, &["cg"], false);
    assert_eq!(d.groups[0].authorized_operations, i32::MIN);
    let d = describe_groups(&mut state, 2, &["cg"], true);
    assert_eq!(d.groups[0].authorized_operations, i32::MIN);
}

/// Found by the classic differential run: from v7 Kafka's JoinGroupResponse turns an empty
/// protocol name into null (MEMBER_ID_REQUIRED and every other error answer).
#[test]
fn classic_join_error_answers_have_a_null_protocol_name_from_v7() {
    let mut state = state();
    deferred_token(&join_group(&mut state, NOW, ""));
    let j = join_answer(answers(&mut state).remove(0).1);
    assert_eq!(j.error_code, ErrorCode::MEMBER_ID_REQUIRED.0);
    assert_eq!(j.protocol_name, None);
}

/// Found by the classic differential run: Kafka 4.4 answers a partition of a topic it does not
/// have UNKNOWN_TOPIC_OR_PARTITION before the coordinator sees the commit (listed first), and
/// commits the rest; with nothing left it asks the coordinator nothing (no group checks).
#[test]
fn offset_commit_of_an_unknown_topic_or_partition() {
    let mut st = state();
    create_topic(&mut st, "input", 2);
    let commit = |topics: &[(&str, &[i32])], generation: i32| {
        let mut c = OffsetCommitRequest::default();
        c.group_id = GroupId(StrBytes::from_static_str("plain"));
        c.generation_id_or_member_epoch = generation;
        c.member_id = StrBytes::from_static_str(if generation < 0 { "" } else { "nobody" });
        c.topics = topics
            .iter()
            .map(|(name, ps)| {
                let mut t = OffsetCommitRequestTopic::default();
                t.name = TopicName(StrBytes::from_string(name.to_string()));
                t.partitions = ps
                    .iter()
                    .map(|p| {
                        let mut x = OffsetCommitRequestPartition::default();
                        x.partition_index = *p;
                        x.committed_offset = 7;
                        x
                    })
                    .collect();
                t
            })
            .collect();
        RequestKind::OffsetCommit(c)
    };
    let codes = |h: Handled| -> Vec<(String, i32, i16)> {
        let Resp::Kafka(ResponseKind::OffsetCommit(resp)) = h.resp else {
            panic!("not an OffsetCommit response");
        };
        resp.topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.name.to_string(), p.partition_index, p.error_code))
            })
            .collect()
    };
    let h = kafka(
        &mut st,
        ApiKey::OffsetCommit,
        8,
        commit(&[("nope", &[0]), ("input", &[1, 2])], -1),
    );
    assert_eq!(h.entries.len(), 1, "the valid partition is committed");
    assert_eq!(
        codes(h),
        vec![
            ("nope".to_string(), 0, 3),
            ("input".to_string(), 2, 3),
            ("input".to_string(), 1, 0)
        ]
    );
    // Nothing valid: no group checks (an unknown member of an unknown group is not refused).
    let h = kafka(
        &mut st,
        ApiKey::OffsetCommit,
        8,
        commit(&[("nope", &[0])], 3),
    );
    assert!(h.entries.is_empty());
    assert_eq!(codes(h), vec![("nope".to_string(), 0, 3)]);
}

/// Found by the classic differential run: Kafka 4.4's request handler refuses a SyncGroup v5+
/// without a protocol type or name with INCONSISTENT_GROUP_PROTOCOL before the coordinator sees
/// it (here: a group that is Empty, where the coordinator would say UNKNOWN_MEMBER_ID).
#[test]
fn classic_sync_v5_needs_protocol_type_and_name() {
    let mut state = state();
    deferred_token(&join_group(&mut state, NOW, ""));
    let id = join_answer(answers(&mut state).remove(0).1).member_id;
    let sync = |state: &mut State, version: i16, name: Option<&'static str>| {
        let mut r = SyncGroupRequest::default();
        r.group_id = GroupId(StrBytes::from_static_str("cg"));
        r.generation_id = -2;
        r.member_id = id.clone();
        r.protocol_type = Some(StrBytes::from_static_str("consumer"));
        r.protocol_name = name.map(StrBytes::from_static_str);
        state.handle(
            NOW,
            &header(14, version),
            &Peer::anonymous("10.0.0.1"),
            &Req::Kafka(RequestKind::SyncGroup(r)),
        )
    };
    let h = sync(&mut state, 5, None);
    assert_eq!(
        sync_answer(h.resp).error_code,
        ErrorCode::INCONSISTENT_GROUP_PROTOCOL.0
    );
    assert!(answers(&mut state).is_empty());
    // v4 has no such fields: the coordinator answers (the group is Empty).
    let h = sync(&mut state, 4, None);
    let t = deferred_token(&h);
    let (token, resp) = answers(&mut state).remove(0);
    assert_eq!(token, t);
    assert_eq!(sync_answer(resp).error_code, ErrorCode::UNKNOWN_MEMBER_ID.0);
}
