//! `--demo`: a `demo-input` topic (6 partitions) and a streams group of 3 simulated members that
//! heartbeat in-process through the same owner channel as network clients, so the web view shows
//! a live group. Members join with a topology, then heartbeat every interval acknowledging the
//! tasks they were assigned.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::{info, warn};

use crate::config::CoordinatorConfig;
use crate::protocol::{
    STREAMS_GROUP_HEARTBEAT_KEY, StreamsGroupHeartbeatRequest, Subtopology, TaskIds, TopicInfo,
    Topology,
};

use crate::server::Shared;
use crate::server::peer::Peer;
use crate::server::wire::{Header, Req, Resp};

pub const DEMO_TOPIC: &str = "demo-input";
pub const DEMO_PARTITIONS: i32 = 6;
pub const DEMO_GROUP: &str = "demo-app";

pub fn demo_topology() -> Topology {
    Topology {
        epoch: 0,
        subtopologies: vec![Subtopology {
            subtopology_id: "0".into(),
            source_topics: vec![DEMO_TOPIC.into()],
            state_changelog_topics: vec![TopicInfo {
                name: format!("{DEMO_GROUP}-counts-changelog"),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub async fn run(shared: Arc<Shared>, config: CoordinatorConfig, shutdown: watch::Receiver<bool>) {
    info!(
        group = DEMO_GROUP,
        topic = DEMO_TOPIC,
        "demo: starting 3 simulated streams members"
    );
    for i in 0..3 {
        let shared = shared.clone();
        let sd = shutdown.clone();
        let hb = config.heartbeat_interval_ms;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(700 * i as u64)).await;
            member(shared, i, hb, sd).await
        });
    }
}

async fn call(
    shared: &Shared,
    req: StreamsGroupHeartbeatRequest,
) -> Option<crate::protocol::StreamsGroupHeartbeatResponse> {
    let header = Header {
        api_key: STREAMS_GROUP_HEARTBEAT_KEY,
        api_version: 1,
        correlation_id: 0,
        client_id: Some("demo".into()),
    };
    let answer = shared
        .owner
        .send(
            vec![(header, Req::Heartbeat(req))],
            Arc::new(Peer::anonymous("127.0.0.1")),
        )
        .await
        .ok()?;
    match answer.await.ok()?.resps.pop()? {
        Resp::Heartbeat(r) => Some(r),
        _ => None,
    }
}

async fn member(
    shared: Arc<Shared>,
    i: usize,
    default_interval: i32,
    mut shutdown: watch::Receiver<bool>,
) {
    let member_id = format!("demo-member-{i}");
    let process_id = format!("demo-process-{i}");
    let mut epoch = 0;
    let mut active: Vec<TaskIds> = Vec::new();
    let mut standby: Vec<TaskIds> = Vec::new();
    let mut warmup: Vec<TaskIds> = Vec::new();
    let mut interval = default_interval.max(100) as u64;
    loop {
        let joining = epoch == 0;
        let req = StreamsGroupHeartbeatRequest {
            group_id: DEMO_GROUP.into(),
            member_id: member_id.clone(),
            member_epoch: epoch,
            rebalance_timeout_ms: if joining { 60_000 } else { -1 },
            topology: joining.then(demo_topology),
            process_id: joining.then(|| process_id.clone()),
            active_tasks: Some(active.clone()),
            standby_tasks: Some(standby.clone()),
            warmup_tasks: Some(warmup.clone()),
            ..Default::default()
        };
        let Some(resp) = call(&shared, req).await else {
            return;
        };
        if resp.error_code != 0 {
            warn!(member = %member_id, error = resp.error_code, msg = ?resp.error_message, "demo member rejoins");
            epoch = 0;
            active.clear();
            standby.clear();
            warmup.clear();
        } else {
            epoch = resp.member_epoch;
            if resp.heartbeat_interval_ms > 0 {
                interval = resp.heartbeat_interval_ms as u64;
            }
            if let Some(a) = resp.active_tasks {
                active = a;
            }
            if let Some(s) = resp.standby_tasks {
                standby = s;
            }
            if let Some(w) = resp.warmup_tasks {
                warmup = w;
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(interval)) => {}
            _ = shutdown.changed() => return,
        }
    }
}
