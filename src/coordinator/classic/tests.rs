//! The core API as a server drives it (docs/classic-protocol.md §C3.4): tokens in, answers out of
//! `take_completed`, records to a log, restart by replay.

use super::{ClassicReply, ClassicState, Completed, RequestToken};
use crate::config::CoordinatorConfig;
use crate::coordinator::{Coordinator, RequestContext};
use crate::error::ErrorCode;
use crate::protocol::classic::{JoinGroupRequest, JoinProtocol, SyncGroupRequest};
use crate::records::Record;
use crate::types::Millis;

fn ctx(client: &str) -> RequestContext {
    RequestContext {
        client_id: client.into(),
        client_host: "/10.0.0.1".into(),
        api_version: 5,
    }
}

fn join(member_id: &str) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: "g".into(),
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 20_000,
        member_id: member_id.into(),
        protocol_type: "consumer".into(),
        protocols: vec![JoinProtocol {
            name: "range".into(),
            metadata: vec![0, 0, 0, 0, 0, 0],
        }],
        ..Default::default()
    }
}

fn only_join(done: Vec<Completed>, token: u64) -> crate::protocol::classic::JoinGroupResponse {
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0].token, RequestToken(token));
    match &done[0].reply {
        ClassicReply::Join(r) => r.clone(),
        other => panic!("expected a JoinGroup answer, got {other:?}"),
    }
}

/// Two members form a group; the log of records rebuilds it after a restart.
#[test]
fn answers_arrive_by_token_and_the_log_rebuilds_the_group() {
    let config = CoordinatorConfig {
        classic: crate::config::ClassicConfig {
            initial_rebalance_delay_ms: 100,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut c = Coordinator::new(config.clone());
    let mut log: Vec<Record> = Vec::new();
    let now = Millis(0);

    // v5: MEMBER_ID_REQUIRED first, answered at once.
    log.extend(
        c.classic_join(now, &ctx("a"), &join(""), RequestToken(1))
            .records,
    );
    let a = only_join(c.take_completed(), 1);
    assert_eq!(a.error_code, ErrorCode::MEMBER_ID_REQUIRED);
    assert!(a.member_id.starts_with("a-"), "{}", a.member_id);
    log.extend(
        c.classic_join(now, &ctx("b"), &join(""), RequestToken(2))
            .records,
    );
    let b = only_join(c.take_completed(), 2);

    // Rejoining with the ids: both wait for the initial delay.
    log.extend(
        c.classic_join(now, &ctx("a"), &join(&a.member_id), RequestToken(3))
            .records,
    );
    log.extend(
        c.classic_join(now, &ctx("b"), &join(&b.member_id), RequestToken(4))
            .records,
    );
    assert!(c.take_completed().is_empty());
    assert_eq!(c.next_deadline(), Some(Millis(100)));
    // b joined during the delay: it runs once more, to t=200 (§C2.4).
    assert!(
        c.fire_due_timers(Millis(100))
            .iter()
            .all(|o| o.records.is_empty())
    );
    assert!(c.take_completed().is_empty());
    for out in c.fire_due_timers(Millis(200)) {
        log.extend(out.records);
    }
    let done = c.take_completed();
    let tokens: Vec<u64> = done.iter().map(|d| d.token.0).collect();
    assert_eq!(tokens.len(), 2);
    assert!(tokens.contains(&3) && tokens.contains(&4));
    let leader = c.classic_group("g").and_then(|g| g.leader.clone()).unwrap();
    let follower = if leader == a.member_id {
        &b.member_id
    } else {
        &a.member_id
    };

    // The follower's SyncGroup waits; the leader's completes both.
    let sync = |member: &str, assignments: Vec<(String, Vec<u8>)>| SyncGroupRequest {
        group_id: "g".into(),
        generation_id: 1,
        member_id: member.into(),
        assignments,
        ..Default::default()
    };
    log.extend(
        c.classic_sync(Millis(150), &sync(follower, vec![]), RequestToken(5))
            .records,
    );
    assert!(c.take_completed().is_empty());
    let out = c.classic_sync(
        Millis(160),
        &sync(
            &leader,
            vec![(follower.clone(), vec![7]), (leader.clone(), vec![8])],
        ),
        RequestToken(6),
    );
    assert_eq!(out.records.len(), 1);
    log.extend(out.records);
    let done = c.take_completed();
    let mut got: Vec<(u64, Vec<u8>)> = done
        .iter()
        .map(|d| match &d.reply {
            ClassicReply::Sync(r) => (d.token.0, r.assignment.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    got.sort();
    assert_eq!(got, vec![(5, vec![7]), (6, vec![8])]);
    assert!(c.take_completed().is_empty(), "drained");

    // Restart: replay the log, arm the timers.
    let mut fresh = Coordinator::new(config);
    for r in &log {
        fresh.replay(r).unwrap();
    }
    assert_eq!(fresh.state_hash(), c.state_hash());
    let live = c.classic_group("g").unwrap();
    let loaded = fresh.classic_group("g").unwrap();
    assert_eq!(loaded.state, ClassicState::Stable);
    let strip = |mut v: crate::records::ClassicGroupMetadataValue| {
        v.current_state_timestamp = -1;
        v
    };
    assert_eq!(
        loaded.settled_view().map(strip),
        live.settled_view().map(strip)
    );
    let timers = fresh.on_loaded(Millis(1_000));
    assert_eq!(timers.len(), 2, "a session timer per member: {timers:?}");
}

/// A group loaded over `group.max.size` rebalances at once (Kafka's onLoaded).
#[test]
fn a_group_loaded_over_max_size_rebalances() {
    let mut c = Coordinator::new(CoordinatorConfig::default());
    let mut log = Vec::new();
    let v3 = |client: &str| RequestContext {
        api_version: 3,
        ..ctx(client)
    };
    log.extend(
        c.classic_join(Millis(0), &v3("a"), &join(""), RequestToken(1))
            .records,
    );
    log.extend(
        c.classic_join(Millis(0), &v3("b"), &join(""), RequestToken(2))
            .records,
    );
    // The second member joined during the initial delay, which therefore runs twice (§C2.4).
    for at in [3_000, 6_000] {
        for out in c.fire_due_timers(Millis(at)) {
            log.extend(out.records);
        }
    }
    let leader = c.classic_group("g").and_then(|g| g.leader.clone()).unwrap();
    let req = SyncGroupRequest {
        group_id: "g".into(),
        generation_id: 1,
        member_id: leader,
        ..Default::default()
    };
    log.extend(c.classic_sync(Millis(6_000), &req, RequestToken(3)).records);

    let mut small = CoordinatorConfig::default();
    small.classic.max_size = 1;
    let mut fresh = Coordinator::new(small);
    for r in &log {
        fresh.replay(r).unwrap();
    }
    assert_eq!(
        fresh.classic_group("g").unwrap().state,
        ClassicState::Stable
    );
    let _timers = fresh.on_loaded(Millis(7_000));
    let g = fresh.classic_group("g").unwrap();
    assert_eq!(g.state, ClassicState::PreparingRebalance);
    assert_eq!(
        fresh.timer_deadline(&crate::coordinator::TimerKey::ClassicJoin {
            group_id: "g".into()
        }),
        Some(Millis(27_000))
    );
}
