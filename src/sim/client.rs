//! A simulated Kafka Streams member (one stream thread's consumer): what it owns, what it last
//! reported, and how it reacts to heartbeat responses (client-side reconciliation).

use crate::util::map::BTreeMap;

use crate::error::ErrorCode;
use crate::protocol::{
    Endpoint, KeyValue, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, TaskIds,
    TaskOffset, Topology, status_code,
};
use crate::types::{TaskSet, TasksTuple};

/// Life cycle of a simulated client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum ClientStatus {
    Alive,
    /// Stopped silently (no leave).
    Crashed,
    /// Left the group (epoch -1) or was replaced.
    Left,
    /// Static member away (-2), rejoins as a new incarnation.
    Bouncing,
    /// Stopped after a fatal error or an application shutdown.
    Stopped,
}

/// The heartbeat a client is waiting for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct InFlight {
    pub seq: u64,
    pub sent_ms: i64,
    pub epoch_sent: i32,
}

/// One simulated member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SimMember {
    pub member_id: String,
    pub process_id: String,
    pub thread: u32,
    pub incarnation: u32,
    pub instance_id: Option<String>,
    pub rack: Option<String>,
    pub client_tags: BTreeMap<String, String>,
    pub status: ClientStatus,
    pub net_cut: bool,
    /// The member epoch the client believes it has (0 = (re)joining).
    pub epoch: i32,
    pub topology_epoch: i32,
    /// What the client runs now.
    pub owned: TasksTuple,
    /// Task lists as last sent (`None` = send them with the next heartbeat).
    pub last_sent: Option<TasksTuple>,
    pub in_flight: Option<InFlight>,
    pub hb_gen: u64,
    pub next_hb_ms: Option<i64>,
    pub heartbeat_interval_ms: i64,
    pub task_offset_interval_ms: i64,
    pub last_offsets_ms: Option<i64>,
    /// Send time of the last heartbeat that got a successful response.
    pub last_success_send_ms: Option<i64>,
    pub expiry_gen: u64,
    /// A heartbeat failed without a response: an assignment may have been lost with it.
    pub maybe_missed: bool,
    /// The last exchange was delivered and answered without error.
    pub in_sync: bool,
    pub shutdown_requested: bool,
    pub endpoint_epoch: i32,
    pub last_error: Option<String>,
    pub resyncs: u32,
}

/// What the engine must do after a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reaction {
    /// Next heartbeat after this many ms (0 = right away).
    HeartbeatIn(i64),
    /// Leave the group with epoch -1 and stop (application shutdown).
    LeaveAndStop,
    /// Nothing more (stopped).
    Stop,
    /// Static member resync: leave with -2, then rejoin with epoch 0.
    ResyncStatic,
}

/// Display form of a task set: `"sub_partition"` strings, sorted.
pub(crate) fn task_strings(t: &TaskSet) -> Vec<String> {
    t.iter().map(|t| t.to_string()).collect()
}

fn tuple_from(resp: &StreamsGroupHeartbeatResponse) -> Option<TasksTuple> {
    match (&resp.active_tasks, &resp.standby_tasks, &resp.warmup_tasks) {
        (Some(a), Some(s), Some(w)) => Some(TasksTuple {
            active: TaskSet::from_task_ids(a),
            standby: TaskSet::from_task_ids(s),
            warmup: TaskSet::from_task_ids(w),
        }),
        _ => None,
    }
}

fn ids(t: &TaskSet) -> Vec<TaskIds> {
    t.to_task_ids()
}

/// Synthetic changelog offset of a task at `now`: grows with time, differs per task.
fn synthetic_end_offset(sub: &str, partition: i32, now: i64) -> i64 {
    let salt = sub.bytes().fold(0i64, |a, b| a * 31 + b as i64) + partition as i64 * 7;
    now / 10 + salt % 97
}

impl SimMember {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        member_id: String,
        process_id: &str,
        thread: u32,
        incarnation: u32,
        instance_id: Option<String>,
        rack: Option<String>,
        client_tags: BTreeMap<String, String>,
        topology_epoch: i32,
        heartbeat_interval_ms: i64,
        task_offset_interval_ms: i64,
    ) -> Self {
        SimMember {
            member_id,
            process_id: process_id.to_string(),
            thread,
            incarnation,
            instance_id,
            rack,
            client_tags,
            status: ClientStatus::Alive,
            net_cut: false,
            epoch: 0,
            topology_epoch,
            owned: TasksTuple::default(),
            last_sent: None,
            in_flight: None,
            hb_gen: 0,
            next_hb_ms: None,
            heartbeat_interval_ms,
            task_offset_interval_ms,
            last_offsets_ms: None,
            last_success_send_ms: None,
            expiry_gen: 0,
            maybe_missed: false,
            in_sync: false,
            shutdown_requested: false,
            endpoint_epoch: 0,
            last_error: None,
            resyncs: 0,
        }
    }

    pub fn is_alive(&self) -> bool {
        self.status == ClientStatus::Alive
    }

    pub fn client_id(&self) -> String {
        format!(
            "{}-StreamThread-{}-consumer",
            self.process_id,
            self.thread + 1
        )
    }

    pub fn status_name(&self) -> &'static str {
        match self.status {
            ClientStatus::Alive if self.net_cut => "partitioned",
            ClientStatus::Alive => "alive",
            ClientStatus::Crashed => "crashed",
            ClientStatus::Left => "left",
            ClientStatus::Bouncing => "bouncing",
            ClientStatus::Stopped => "stopped",
        }
    }

    /// Abandon every task and rejoin with epoch 0 on the next heartbeat.
    pub fn drop_all_and_rejoin(&mut self) {
        self.owned = TasksTuple::default();
        self.epoch = 0;
        self.last_sent = None;
        self.in_sync = false;
        self.maybe_missed = false;
        self.expiry_gen += 1;
    }

    /// The next regular heartbeat (a join when the epoch is 0).
    pub fn build_heartbeat(
        &mut self,
        group_id: &str,
        topology: &Topology,
        stateful: &dyn Fn(&str) -> bool,
        rebalance_timeout_ms: i32,
        now: i64,
    ) -> StreamsGroupHeartbeatRequest {
        let mut req = StreamsGroupHeartbeatRequest {
            group_id: group_id.to_string(),
            member_id: self.member_id.clone(),
            member_epoch: self.epoch,
            endpoint_information_epoch: self.endpoint_epoch,
            instance_id: self.instance_id.clone(),
            shutdown_application: self.shutdown_requested,
            ..Default::default()
        };
        let full = self.epoch == 0 || self.last_sent.is_none();
        if self.epoch == 0 {
            // A join: topology, empty task lists, rebalance timeout, process metadata.
            self.owned = TasksTuple::default();
            let mut t = topology.clone();
            t.epoch = self.topology_epoch;
            req.topology = Some(t);
            req.rebalance_timeout_ms = rebalance_timeout_ms;
            req.user_endpoint = Some(Endpoint {
                host: self.process_id.clone(),
                port: 8080,
                ..Default::default()
            });
        }
        if full {
            req.rack_id = self.rack.clone();
            req.process_id = Some(self.process_id.clone());
            req.client_tags = Some(
                self.client_tags
                    .iter()
                    .map(|(k, v)| KeyValue {
                        key: k.clone(),
                        value: v.clone(),
                        ..Default::default()
                    })
                    .collect(),
            );
        }
        // A join always sends its (empty) lists: a draft member stays at epoch 0 while its
        // group is initializing and joins again (docs/draft-dialect.md §D3).
        if self.epoch == 0 || self.last_sent.as_ref() != Some(&self.owned) {
            req.active_tasks = Some(ids(&self.owned.active));
            req.standby_tasks = Some(ids(&self.owned.standby));
            req.warmup_tasks = Some(ids(&self.owned.warmup));
            self.last_sent = Some(self.owned.clone());
        }
        let due = self.epoch != 0
            && self
                .last_offsets_ms
                .is_none_or(|t| now - t >= self.task_offset_interval_ms);
        if due {
            let mut offsets = Vec::new();
            let mut ends = Vec::new();
            let all = self
                .owned
                .active
                .union(&self.owned.standby)
                .union(&self.owned.warmup);
            for t in all.iter().filter(|t| stateful(&t.subtopology)) {
                let end = synthetic_end_offset(&t.subtopology, t.partition, now);
                let lag = if self.owned.active.contains_task(&t) {
                    0
                } else {
                    5
                };
                offsets.push(TaskOffset {
                    subtopology_id: t.subtopology.clone(),
                    partition: t.partition,
                    offset: (end - lag).max(0),
                    ..Default::default()
                });
                ends.push(TaskOffset {
                    subtopology_id: t.subtopology.clone(),
                    partition: t.partition,
                    offset: end,
                    ..Default::default()
                });
            }
            req.task_offsets = Some(offsets);
            req.task_end_offsets = Some(ends);
            self.last_offsets_ms = Some(now);
        }
        req
    }

    /// The heartbeat failed without a response (lost, or the request timed out).
    pub fn on_failure(&mut self) {
        self.in_flight = None;
        self.last_sent = None;
        self.in_sync = false;
        self.maybe_missed = true;
    }

    /// React to a delivered response (the in-flight entry was already taken).
    pub fn on_response(
        &mut self,
        resp: &StreamsGroupHeartbeatResponse,
        sent: &InFlight,
    ) -> Reaction {
        let code = ErrorCode(resp.error_code);
        if code != ErrorCode::NONE {
            self.in_sync = false;
            self.last_error = Some(format!(
                "{}{}",
                code.name(),
                resp.error_message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ));
            return match code {
                ErrorCode::FENCED_MEMBER_EPOCH | ErrorCode::UNKNOWN_MEMBER_ID => {
                    self.drop_all_and_rejoin();
                    Reaction::HeartbeatIn(0)
                }
                ErrorCode::UNRELEASED_INSTANCE_ID => {
                    self.drop_all_and_rejoin();
                    Reaction::HeartbeatIn(self.heartbeat_interval_ms)
                }
                ErrorCode::COORDINATOR_NOT_AVAILABLE
                | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
                | ErrorCode::NOT_COORDINATOR => {
                    self.last_sent = None;
                    Reaction::HeartbeatIn(self.heartbeat_interval_ms.min(1000))
                }
                _ => {
                    self.owned = TasksTuple::default();
                    self.status = ClientStatus::Stopped;
                    Reaction::Stop
                }
            };
        }
        self.last_error = None;
        self.last_success_send_ms = Some(sent.sent_ms);
        self.epoch = resp.member_epoch;
        if resp.heartbeat_interval_ms > 0 {
            self.heartbeat_interval_ms = resp.heartbeat_interval_ms as i64;
        }
        if resp.task_offset_interval_ms > 0 {
            self.task_offset_interval_ms = resp.task_offset_interval_ms as i64;
        }
        self.endpoint_epoch = resp.endpoint_information_epoch;
        let shutdown = resp
            .status
            .iter()
            .flatten()
            .any(|s| s.status_code == status_code::SHUTDOWN_APPLICATION);
        if shutdown {
            return Reaction::LeaveAndStop;
        }
        match tuple_from(resp) {
            Some(new) => {
                self.maybe_missed = false;
                self.in_sync = true;
                if new != self.owned {
                    // Revoke what is not listed, start what is new: at once.
                    self.owned = new;
                    return Reaction::HeartbeatIn(0);
                }
            }
            None if self.maybe_missed => {
                // A response lost earlier may have carried tasks this client never saw; Kafka
                // does not resend them (spec §3.11), so the client resynchronises by rejoining.
                self.resyncs += 1;
                self.drop_all_and_rejoin();
                if self.instance_id.is_some() {
                    // A static member rejoining without a -2 leave would get
                    // UNRELEASED_INSTANCE_ID until its session times out.
                    return Reaction::ResyncStatic;
                }
                return Reaction::HeartbeatIn(0);
            }
            None => self.in_sync = true,
        }
        Reaction::HeartbeatIn(self.heartbeat_interval_ms)
    }
}
