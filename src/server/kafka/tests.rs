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
    let mut config = CoordinatorConfig::default();
    config.initial_rebalance_delay_ms = 0;
    config.assignment_interval_ms = 0;
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
        "10.0.0.1",
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
    state.handle(NOW, &header(88, 0), "10.0.0.1", &Req::Heartbeat(r))
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
