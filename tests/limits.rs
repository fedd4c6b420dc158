//! Bounds on what a client can make the coordinator store (issue 11 item 1), in the pure core:
//! a request beyond a bound is refused with Kafka's error code and writes no record, and a
//! record beyond a bound in an old log stops the replay instead of the assignor.
// Native only: uses native-only dev-dependencies (proptest, tokio, flate2) or the server.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use groupcoord::config::CoordinatorConfig;
use groupcoord::coordinator::{Coordinator, RequestContext};
use groupcoord::error::ErrorCode;
use groupcoord::protocol::{
    StreamsGroupHeartbeatRequest, Subtopology, TaskIds, TopicInfo, Topology,
};
use groupcoord::records::Record;
use groupcoord::topology::{MetadataImage, StreamsTopology};
use groupcoord::types::Millis;

fn coordinator(config: CoordinatorConfig) -> Coordinator {
    let mut c = Coordinator::new(config);
    c.set_metadata(MetadataImage {
        topics: BTreeMap::from([("input".to_string(), 4)]),
    });
    c
}

fn topology(repartition_partitions: i32, subtopologies: usize) -> Topology {
    let mut subs = vec![
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
                partitions: repartition_partitions,
                ..Default::default()
            }],
            ..Default::default()
        },
    ];
    for i in 2..subtopologies {
        subs.push(Subtopology {
            subtopology_id: i.to_string(),
            source_topics: vec!["input".into()],
            ..Default::default()
        });
    }
    Topology {
        epoch: 0,
        subtopologies: subs,
        ..Default::default()
    }
}

fn join(group: &str, member: &str, t: Topology) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        topology: Some(t),
        process_id: Some("p".into()),
        active_tasks: Some(vec![]),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    }
}

#[test]
fn repartition_topic_with_2pow31_partitions_is_refused_and_not_persisted() {
    let mut c = coordinator(CoordinatorConfig::default());
    let o = c.streams_group_heartbeat(
        Millis(0),
        &RequestContext::default(),
        &join("g", "m", topology(i32::MAX, 2)),
    );
    assert_eq!(o.response.error_code, ErrorCode::STREAMS_INVALID_TOPOLOGY.0);
    let msg = o.response.error_message.unwrap();
    assert!(msg.contains("groupcoord.max.partitions.per.topic"), "{msg}");
    assert!(o.records.is_empty());
    assert!(o.topics_to_create.is_empty());
    assert!(c.group_ids().is_empty());
    // Within the bound it is accepted and the topic is handed out for creation.
    let o = c.streams_group_heartbeat(
        Millis(0),
        &RequestContext::default(),
        &join("g", "m", topology(8, 2)),
    );
    assert_eq!(o.response.error_code, 0, "{:?}", o.response.error_message);
    assert!(
        o.topics_to_create
            .iter()
            .any(|t| t.name == "app-rep" && t.partitions == 8)
    );
}

#[test]
fn too_many_subtopologies_tasks_and_owned_tasks_are_refused() {
    let mut config = CoordinatorConfig::default();
    config.limits.max_subtopologies = 3;
    config.limits.max_tasks_per_group = 20;
    config.limits.max_tasks_per_member = 5;
    let mut c = coordinator(config);
    let ctx = RequestContext::default();
    let o = c.streams_group_heartbeat(Millis(0), &ctx, &join("g", "m", topology(4, 4)));
    assert_eq!(o.response.error_code, ErrorCode::STREAMS_INVALID_TOPOLOGY.0);
    assert!(o.records.is_empty());
    // 4 tasks of subtopology 0 + 17 of subtopology 1 > 20.
    let o = c.streams_group_heartbeat(Millis(0), &ctx, &join("g", "m", topology(17, 2)));
    assert_eq!(o.response.error_code, ErrorCode::STREAMS_INVALID_TOPOLOGY.0);
    let msg = o.response.error_message.unwrap();
    assert!(msg.contains("groupcoord.max.tasks.per.group"), "{msg}");
    assert!(o.records.is_empty());
    // A heartbeat reporting more owned tasks than the bound.
    let mut hb = join("g", "m", topology(4, 2));
    hb.member_epoch = 1;
    hb.topology = None;
    hb.rebalance_timeout_ms = -1;
    hb.active_tasks = Some(vec![TaskIds {
        subtopology_id: "0".into(),
        partitions: (0..6).collect(),
        ..Default::default()
    }]);
    let o = c.streams_group_heartbeat(Millis(0), &ctx, &hb);
    assert_eq!(o.response.error_code, ErrorCode::INVALID_REQUEST.0);
    assert!(o.records.is_empty());
}

#[test]
fn groups_beyond_the_bound_are_refused() {
    let mut config = CoordinatorConfig::default();
    config.limits.max_groups = 2;
    let mut c = coordinator(config);
    let ctx = RequestContext::default();
    for g in ["a", "b"] {
        let o = c.streams_group_heartbeat(Millis(0), &ctx, &join(g, "m", topology(4, 2)));
        assert_eq!(o.response.error_code, 0);
    }
    let o = c.streams_group_heartbeat(Millis(0), &ctx, &join("c", "m", topology(4, 2)));
    assert_eq!(o.response.error_code, ErrorCode::INVALID_REQUEST.0);
    assert!(o.records.is_empty());
    assert_eq!(c.group_ids().len(), 2);
    // Members of existing groups still join.
    let o = c.streams_group_heartbeat(Millis(0), &ctx, &join("a", "m2", topology(4, 2)));
    assert_eq!(o.response.error_code, 0);
}

#[test]
fn replaying_a_topology_beyond_the_bounds_fails_instead_of_loading() {
    let mut c = coordinator(CoordinatorConfig::default());
    let record = Record::Topology {
        group_id: "g".into(),
        value: Some(StreamsTopology::from_request(&topology(i32::MAX, 2))),
    };
    let e = c.replay(&record).unwrap_err().to_string();
    assert!(e.contains("groupcoord.max.partitions.per.topic"), "{e}");
    assert!(c.group_ids().is_empty());
}

/// Hostile input: a 32 KiB `SubscribedTopicRegex` (the most a wire string holds) is refused
/// before it is compiled, with Kafka's INVALID_REGULAR_EXPRESSION and message shape, and writes
/// nothing (docs/consumer-protocol.md §K3.9).
#[test]
fn oversized_subscription_regex_is_refused_and_not_persisted() {
    use groupcoord::protocol::consumer::ConsumerGroupHeartbeatRequest;
    let mut c = coordinator(CoordinatorConfig::default());
    let ctx = RequestContext {
        api_version: 1,
        ..Default::default()
    };
    let join = |regex: String| ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: "m".into(),
        rebalance_timeout_ms: 30_000,
        subscribed_topic_regex: Some(regex),
        topic_partitions: Some(Vec::new()),
        ..Default::default()
    };
    let huge = format!("input|{}", "x".repeat(i16::MAX as usize - 6));
    let o = c.consumer_group_heartbeat(Millis(0), &ctx, &join(huge.clone()));
    assert_eq!(
        o.response.error_code,
        ErrorCode::INVALID_REGULAR_EXPRESSION.0
    );
    assert_eq!(
        o.response.error_message.unwrap(),
        format!(
            "SubscribedTopicRegex `{huge}` is not a valid regular expression: expression too large."
        )
    );
    assert!(o.records.is_empty());
    assert!(c.group_ids().is_empty());
    // A short one is accepted.
    let o = c.consumer_group_heartbeat(Millis(0), &ctx, &join("in.*".into()));
    assert_eq!(o.response.error_code, 0, "{:?}", o.response.error_message);
}
