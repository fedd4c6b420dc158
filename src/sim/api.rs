//! The simulation's public data types: scenario spec, user actions, snapshot and logs.
//! Everything here is serde data: the wasm layer hands it to JavaScript as plain objects, the
//! explorer's permalinks store `ScenarioSpec` + `Vec<TimedAction>`.

use crate::util::map::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protocol::Topology;

/// One Kafka Streams process (an application instance) with `threads` members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSpec {
    /// The process id the members report (Kafka Streams' process UUID).
    pub process_id: String,
    /// Stream threads, one member each.
    #[serde(default = "one")]
    pub threads: u32,
    /// The rack all its members report.
    #[serde(default)]
    pub rack: Option<String>,
    /// Client tags all its members report (`rack.aware.assignment.tags`).
    #[serde(default)]
    pub client_tags: BTreeMap<String, String>,
    /// Static membership: members get `group.instance.id` `<process_id>-<thread>`.
    #[serde(default)]
    pub static_members: bool,
    /// Time at which the process starts (ms).
    #[serde(default)]
    pub start_at_ms: i64,
}

fn one() -> u32 {
    1
}

/// A whole simulated run's starting point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioSpec {
    /// A short name (the explorer's preset list shows it).
    pub name: String,
    /// What the scenario shows.
    #[serde(default)]
    pub description: String,
    /// Seeds the RNG that draws latencies and message loss: same seed, same run.
    pub seed: u64,
    /// The group every member joins.
    pub group_id: String,
    /// Existing topics: name -> partition count.
    pub topics: BTreeMap<String, i32>,
    /// The streams topology (ignored, and may be omitted, for classic groups).
    #[serde(default)]
    pub topology: Topology,
    /// The processes, each with its members.
    pub processes: Vec<ProcessSpec>,
    /// Broker config keys (Kafka names, spec §7) -> value, applied over the defaults.
    #[serde(default)]
    pub configs: BTreeMap<String, String>,
    /// Network delay of each heartbeat leg, ms (min, max), drawn from the seeded RNG.
    #[serde(default)]
    pub latency_ms: (i64, i64),
    /// The coordinator creates missing internal topics automatically (as a broker does).
    #[serde(default = "yes")]
    pub auto_create_internal_topics: bool,
    /// Which protocol the simulated members speak: `streams` (default; `topology` applies) or
    /// `classic` (consumers of a classic group; `classic` applies, `topology` is ignored). Each
    /// process's `threads` are then its consumers, `static_members` gives them
    /// `group.instance.id` `<process_id>-<thread>`.
    #[serde(default)]
    pub group_type: GroupType,
    /// Settings of the simulated classic consumers (used when `group_type` is `classic`).
    #[serde(default)]
    pub classic: ClassicSpec,
    /// The explorer's "break it" switches (all off by default; never used by the server).
    #[serde(default, skip_serializing_if = "BreakIt::is_off")]
    pub break_it: BreakIt,
    /// Which KIP-1071 design the streams members speak: `shipped` (Kafka 4.4, default) or
    /// `draft` (topology id, INITIALIZING, StreamsGroupInitialize; docs/draft-dialect.md).
    #[serde(default, skip_serializing_if = "is_shipped")]
    pub dialect: crate::coordinator::Dialect,
}

fn is_shipped(d: &crate::coordinator::Dialect) -> bool {
    *d == crate::coordinator::Dialect::Shipped
}

/// Deliberate bugs for the explorer's "break it" mode: each removes one rule of the protocol so
/// that a reviewer sees which invariant it protects. They act in the simulation only (on the
/// responses, the clients and the restart path); the coordinator itself stays correct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BreakIt {
    /// Buggy assignor: every response with task lists also gives the member one active task
    /// that the target assignment gives to another member.
    pub double_assign: bool,
    /// Skip revocation: a response with task lists gives the member its whole target at once,
    /// before the previous owners revoked (spec §4.2 not respected).
    pub skip_revocation: bool,
    /// No fencing: a member that lost its session keeps its tasks (no local session expiry,
    /// `FENCED_MEMBER_EPOCH` / `UNKNOWN_MEMBER_ID` ignored), as if stale epochs were accepted.
    pub no_fencing: bool,
    /// Dropped records on restart: a coordinator restart loses the last records of the log.
    pub drop_records_on_restart: bool,
}

impl BreakIt {
    /// Whether every switch is off (the normal, correct simulation).
    pub fn is_off(&self) -> bool {
        *self == BreakIt::default()
    }
}

/// The kind of group a simulation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupType {
    /// Kafka Streams members (KIP-1071, StreamsGroupHeartbeat).
    #[default]
    Streams,
    /// Classic consumers (JoinGroup / SyncGroup / Heartbeat / LeaveGroup).
    Classic,
    /// KIP-848 consumers (ConsumerGroupHeartbeat; `classic.subscription` and
    /// `classic.max_poll_interval_ms` apply, the assignor is the broker's
    /// `group.consumer.assignors`).
    Consumer,
}

/// The consumer configs of every simulated classic consumer (Kafka's consumer config names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClassicSpec {
    /// `partition.assignment.strategy`: client-side assignors by preference, among `range`,
    /// `roundrobin`, `sticky`, `cooperative-sticky`. The rebalance protocol follows Kafka's
    /// rule: `cooperative` when every listed assignor supports it (only `cooperative-sticky`
    /// does), else `eager`. Default `["range"]`.
    pub assignors: Vec<String>,
    /// Topics every consumer subscribes to; empty = every topic in `topics`.
    pub subscription: Vec<String>,
    /// `session.timeout.ms`, default 45000.
    pub session_timeout_ms: i32,
    /// `heartbeat.interval.ms`, default 3000.
    pub heartbeat_interval_ms: i32,
    /// `max.poll.interval.ms` (the JoinGroup rebalance timeout), default 300000.
    pub max_poll_interval_ms: i32,
}

impl Default for ClassicSpec {
    fn default() -> Self {
        ClassicSpec {
            assignors: vec!["range".to_string()],
            subscription: Vec::new(),
            session_timeout_ms: 45_000,
            heartbeat_interval_ms: 3_000,
            max_poll_interval_ms: 300_000,
        }
    }
}

fn yes() -> bool {
    true
}

/// A user action (fault injection and operations), applied at the simulation's current time.
///
/// JSON: `{"action": "<snake_case variant>", ...fields}`. Deserialized through a flat `RawAction`
/// (same format, same messages for a missing field or an unknown action): serde's internally
/// tagged enums buffer the input and instantiate each variant's visitor again for the buffer,
/// which made action parsing a large part of the wasm module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", try_from = "RawAction")]
#[non_exhaustive]
pub enum Action {
    /// A new member (thread) in an existing process.
    AddMember {
        /// The process to add it to.
        process_id: String,
    },
    /// A new process with its members.
    AddProcess {
        /// The process.
        process: ProcessSpec,
    },
    /// Stops heartbeating without leaving; the session timeout fences it.
    CrashMember {
        /// The member, by its simulation name (`<process>-t<thread>`).
        member: String,
    },
    /// Leaves the group (epoch -1).
    LeaveMember {
        /// The member.
        member: String,
    },
    /// Static member: leave with epoch -2, then rejoin after `down_ms`.
    StaticBounce {
        /// The member.
        member: String,
        /// How long it stays away.
        down_ms: i64,
    },
    /// Heartbeats of this member are lost (both directions) until healed.
    CutNetwork {
        /// The member.
        member: String,
    },
    /// Ends a [`Action::CutNetwork`].
    HealNetwork {
        /// The member.
        member: String,
    },
    /// Drop the coordinator's memory and rebuild it by replaying the record log.
    RestartCoordinator,
    /// Every member restarts with the topology epoch + 1 (a rolling upgrade).
    BumpTopologyEpoch,
    /// `partitions` is the new total partition count (as Kafka's CreatePartitions), not a delta.
    AddPartitions {
        /// The topic.
        topic: String,
        /// The new partition count.
        partitions: i32,
    },
    /// Creates a topic, e.g. a missing source topic.
    CreateTopic {
        /// The topic.
        topic: String,
        /// Its partition count.
        partitions: i32,
    },
    /// The member asks the whole application to shut down.
    RequestShutdown {
        /// The member that asks.
        member: String,
    },
    /// Sets `num.standby.replicas` for the group.
    SetStandbyReplicas {
        /// The new count.
        replicas: i32,
    },
    /// Switches the group's assignor (`group.streams.assignor` / a built-in name).
    SetAssignor {
        /// The assignor's name.
        name: String,
    },
    /// Start a new incarnation (new member id, same thread and instance id) of a crashed, left or
    /// stopped member.
    RestartMember {
        /// The member.
        member: String,
    },
    /// Classic consumers only: the member's poll loop stalls for `ms` (a slow record handler).
    /// Its heartbeat thread keeps heartbeating, but it sends no JoinGroup / SyncGroup until the
    /// stall ends; a stall longer than `max.poll.interval.ms` during a rebalance gets it removed
    /// by the rebalance timeout, and it rejoins as a new member afterwards.
    StallMember {
        /// The member.
        member: String,
        /// How long the poll loop stalls.
        ms: i64,
    },
    /// Every heartbeat leg (request or response) is lost with this probability (0-100 %,
    /// drawn from the seeded RNG) until set back to 0.
    SetMessageLoss {
        /// 0 to 100.
        percent: u32,
    },
}

/// Every field any action has, for deserializing [`Action`] and [`TimedAction`] in one pass.
/// Unknown fields are ignored (as by the derived deserializer); a field of another action must
/// still have its type.
#[derive(Deserialize)]
struct RawAction {
    action: String,
    at_ms: Option<i64>,
    process_id: Option<String>,
    process: Option<ProcessSpec>,
    member: Option<String>,
    down_ms: Option<i64>,
    topic: Option<String>,
    partitions: Option<i32>,
    replicas: Option<i32>,
    name: Option<String>,
    percent: Option<u32>,
    ms: Option<i64>,
}

/// The snake_case names of [`Action`]'s variants, in declaration order.
pub(crate) const ACTION_NAMES: [&str; 17] = [
    "add_member",
    "add_process",
    "crash_member",
    "leave_member",
    "static_bounce",
    "cut_network",
    "heal_network",
    "restart_coordinator",
    "bump_topology_epoch",
    "add_partitions",
    "create_topic",
    "request_shutdown",
    "set_standby_replicas",
    "set_assignor",
    "restart_member",
    "stall_member",
    "set_message_loss",
];

fn need<T>(v: Option<T>, field: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("missing field `{field}`"))
}

impl TryFrom<RawAction> for Action {
    type Error = String;

    fn try_from(r: RawAction) -> Result<Action, String> {
        let member = || need(r.member.clone(), "member");
        let topic_partitions = || {
            Ok::<_, String>((
                need(r.topic.clone(), "topic")?,
                need(r.partitions, "partitions")?,
            ))
        };
        Ok(match r.action.as_str() {
            "add_member" => Action::AddMember {
                process_id: need(r.process_id, "process_id")?,
            },
            "add_process" => Action::AddProcess {
                process: need(r.process, "process")?,
            },
            "crash_member" => Action::CrashMember { member: member()? },
            "leave_member" => Action::LeaveMember { member: member()? },
            "static_bounce" => Action::StaticBounce {
                member: member()?,
                down_ms: need(r.down_ms, "down_ms")?,
            },
            "cut_network" => Action::CutNetwork { member: member()? },
            "heal_network" => Action::HealNetwork { member: member()? },
            "restart_coordinator" => Action::RestartCoordinator,
            "bump_topology_epoch" => Action::BumpTopologyEpoch,
            "add_partitions" => {
                let (topic, partitions) = topic_partitions()?;
                Action::AddPartitions { topic, partitions }
            }
            "create_topic" => {
                let (topic, partitions) = topic_partitions()?;
                Action::CreateTopic { topic, partitions }
            }
            "request_shutdown" => Action::RequestShutdown { member: member()? },
            "set_standby_replicas" => Action::SetStandbyReplicas {
                replicas: need(r.replicas, "replicas")?,
            },
            "set_assignor" => Action::SetAssignor {
                name: need(r.name, "name")?,
            },
            "restart_member" => Action::RestartMember { member: member()? },
            "stall_member" => Action::StallMember {
                member: member()?,
                ms: need(r.ms, "ms")?,
            },
            "set_message_loss" => Action::SetMessageLoss {
                percent: need(r.percent, "percent")?,
            },
            other => {
                let expected = ACTION_NAMES.map(|n| format!("`{n}`")).join(", ");
                return Err(format!(
                    "unknown variant `{other}`, expected one of {expected}"
                ));
            }
        })
    }
}

impl TryFrom<RawAction> for TimedAction {
    type Error = String;

    fn try_from(mut r: RawAction) -> Result<TimedAction, String> {
        let at_ms = need(r.at_ms.take(), "at_ms")?;
        Ok(TimedAction {
            at_ms,
            action: Action::try_from(r)?,
        })
    }
}

/// An action with the simulated time at which it was applied (permalinks, step back).
/// JSON: the action's object with an `at_ms` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawAction")]
pub struct TimedAction {
    /// Simulated time in ms.
    pub at_ms: i64,
    /// The action.
    #[serde(flatten)]
    pub action: Action,
}

/// Tasks of one role, as `"subtopology_partition"` strings sorted, for display.
pub type TaskList = Vec<String>;

/// One member as the explorer shows it: the coordinator's view plus the client's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberView {
    /// The member id.
    pub member_id: String,
    /// Its process.
    pub process_id: String,
    /// Its static membership id, if any.
    pub instance_id: Option<String>,
    /// Its rack, if any.
    pub rack: Option<String>,
    /// `alive`, `crashed`, `partitioned`, `left`, `bouncing`, `stopped` (fatal error or
    /// application shutdown).
    pub client_status: String,
    /// Coordinator side (None when the coordinator does not know the member).
    pub state: Option<String>,
    /// Epoch per the coordinator.
    pub member_epoch: Option<i32>,
    /// The epoch before the last change.
    pub previous_member_epoch: Option<i32>,
    /// Active tasks the coordinator considers owned.
    pub active: TaskList,
    /// Standby tasks the coordinator considers owned.
    pub standby: TaskList,
    /// Warm-up tasks the coordinator considers owned.
    pub warmup: TaskList,
    /// Tasks the member must give up before it gets new ones.
    pub pending_revocation: TaskList,
    /// Active tasks of the target assignment.
    pub target_active: TaskList,
    /// Standby tasks of the target assignment.
    pub target_standby: TaskList,
    /// Warm-up tasks of the target assignment.
    pub target_warmup: TaskList,
    /// Client side: what the member currently runs.
    pub owned_active: TaskList,
    /// Standby tasks the client runs.
    pub owned_standby: TaskList,
    /// Warm-up tasks the client runs.
    pub owned_warmup: TaskList,
    /// When the coordinator's session timer fences the member.
    pub session_deadline_ms: Option<i64>,
    /// The session timeout in force.
    pub session_timeout_ms: i64,
    /// When the rebalance timer fences the member, if one is armed.
    pub rebalance_deadline_ms: Option<i64>,
    /// When the client sends its next heartbeat.
    pub next_heartbeat_ms: Option<i64>,
    /// Classic groups only (`None` for streams members): the consumer's side. For a classic
    /// member the task lists above are empty, `state` is `None` and `member_epoch` is the
    /// generation the coordinator has for the group when it knows the member.
    #[serde(default)]
    pub classic: Option<ClassicMemberView>,
}

/// A classic consumer as the explorer shows it. `MemberView::member_id` is the simulation's name
/// of the consumer (`<process>-t<thread>-<incarnation>`); the coordinator's member id is here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicMemberView {
    /// The member id the coordinator gave (`""` until the first JoinGroup answer).
    pub coordinator_member_id: String,
    /// Client side: `unjoined` (about to send JoinGroup), `joining` (JoinGroup in flight,
    /// including the MEMBER_ID_REQUIRED round trip), `awaiting_sync` (SyncGroup in flight),
    /// `stable` (has its assignment, heartbeats), `revoking` (giving up partitions before
    /// rejoining: all of them under eager, the revoked ones under cooperative), `stopped`
    /// (crashed, left or stopped).
    pub client_state: String,
    /// The generation the consumer last joined (-1 before the first).
    pub generation: i32,
    /// The coordinator knows this member in the current group.
    pub known_to_coordinator: bool,
    /// The coordinator's leader is this member (it runs the assignor).
    pub is_leader: bool,
    /// Partitions the consumer owns (consumes), `topic-partition`, sorted.
    pub owned_partitions: Vec<String>,
    /// Partitions revoked in the consumer's last rebalance, sorted (cooperative: they trigger
    /// the follow-up rebalance).
    pub revoked_partitions: Vec<String>,
    /// `eager` or `cooperative`.
    pub protocol: String,
    /// The assignor the group selected (JoinGroup's protocol name), once joined.
    pub assignor: Option<String>,
    /// The poll loop is stalled until this time (see `Action::StallMember`).
    pub stalled_until_ms: Option<i64>,
}

/// A classic group as the explorer shows it (the coordinator's soft state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicGroupView {
    /// `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Stable` or `Dead` (no group).
    pub state: String,
    /// The group's generation.
    pub generation: i32,
    /// The protocol type (`consumer`), once a member joined.
    pub protocol_type: Option<String>,
    /// The selected assignor.
    pub protocol_name: Option<String>,
    /// The leader's simulation name (`MemberView::member_id`), if it has one.
    pub leader: Option<String>,
    /// Every subscribed partition, `topic-partition`, sorted.
    pub partitions: Vec<String>,
    /// Subscribed partitions no running consumer owns right now (the stop-the-world gap).
    pub owned_by_nobody: Vec<String>,
    /// Deadline of the join phase (PreparingRebalance) or of the sync phase
    /// (CompletingRebalance), when armed.
    pub rebalance_deadline_ms: Option<i64>,
}

/// How many partitions nobody owned from `at_ms` on (one sample per change): the
/// stop-the-world chart (streams groups count active tasks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnershipSample {
    /// Simulated time of the change.
    pub at_ms: i64,
    /// Subscribed partitions.
    pub partitions: u32,
    /// Subscribed partitions no running consumer owns.
    pub owned_by_nobody: u32,
    /// Partitions that went to a different consumer than their last one, since the start.
    #[serde(default)]
    pub moved: u32,
}

/// The group as the explorer shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupView {
    /// The group id.
    pub group_id: String,
    /// `Empty`, `NotReady`, `Assigning`, `Reconciling`, `Stable` (or `Dead` when absent).
    pub state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// The epoch of the group's topology, once one was set.
    pub topology_epoch: Option<i32>,
    /// The topology epoch last validated against the topics (-1: none).
    pub validated_topology_epoch: i32,
    /// The assignor in use.
    pub assignor: String,
    /// `num.standby.replicas` in force.
    pub num_standby_replicas: i32,
    /// Every task of the configured topology, `"subtopology_partition"`, sorted.
    pub tasks: TaskList,
    /// Stateful subtopology ids.
    pub stateful_subtopologies: Vec<String>,
    /// Members, coordinator and client view joined.
    pub members: Vec<MemberView>,
    /// Last statuses the coordinator reported, as `NAME: detail`.
    pub statuses: Vec<String>,
    /// When the initial rebalance delay ends, if it is running.
    pub initial_rebalance_deadline_ms: Option<i64>,
    /// `streams` or `classic`.
    #[serde(default)]
    pub group_type: GroupType,
    /// Classic groups only. For them `state` is the classic state and `group_epoch` the
    /// generation; the streams-only fields are empty.
    #[serde(default)]
    pub classic: Option<ClassicGroupView>,
}

/// A full snapshot at the current time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimSnapshot {
    /// Simulated time in ms.
    pub now_ms: i64,
    /// The group.
    pub group: GroupView,
    /// Topics and their partition counts.
    pub topics: BTreeMap<String, i32>,
    /// The coordinator's [`state_hash`](crate::Coordinator::state_hash).
    pub state_hash: String,
    /// Steps taken so far.
    pub steps: u64,
}

/// One request/response exchange (or one lost message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageLogEntry {
    /// Sequence number of the exchange.
    pub seq: u64,
    /// When the member sent the request.
    pub sent_ms: i64,
    /// When the response arrived (-1 while in flight or lost).
    pub received_ms: i64,
    /// The member.
    pub member_id: String,
    /// `StreamsGroupHeartbeat` (api key 88), or for classic groups `JoinGroup` (11, v9),
    /// `SyncGroup` (14, v5), `Heartbeat` (12, v4), `LeaveGroup` (13, v5).
    #[serde(default)]
    pub api: String,
    /// The request version used.
    pub api_version: i16,
    /// The request as JSON.
    pub request: serde_json::Value,
    /// The response as JSON, once one arrived.
    pub response: Option<serde_json::Value>,
    /// Wire bytes (body, no header) as lowercase hex.
    pub request_hex: String,
    /// Response wire bytes as lowercase hex.
    pub response_hex: Option<String>,
    /// A transport error, e.g. a request timeout.
    pub error: Option<String>,
    /// `delivered`, `lost_request`, `lost_response`, or `in_flight` while still on the way.
    pub fate: String,
}

/// One coordinator record as written, with the operation that caused it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordLogEntry {
    /// Sequence number of the record.
    pub seq: u64,
    /// Simulated time at which it was written.
    pub at_ms: i64,
    /// e.g. `heartbeat m1`, `session-timeout m2`, `initial-rebalance`.
    pub cause: String,
    /// The record in one line.
    pub summary: String,
    /// The record.
    pub record: crate::records::Record,
}

/// The result of one invariant after a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvariantResult {
    /// The invariant's name.
    pub name: String,
    /// Whether it holds.
    pub ok: bool,
    /// What is wrong when it does not.
    pub detail: String,
}

/// Something that happened during a step, for the timeline and swimlanes. `Heartbeat` stands for
/// any message exchange (its `seq` names the [`MessageLogEntry`], which has the api).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SimEvent {
    /// A heartbeat exchange completed or failed.
    Heartbeat {
        /// The exchange's sequence number ([`MessageLogEntry::seq`]).
        seq: u64,
        /// The member.
        member_id: String,
        /// When.
        at_ms: i64,
        /// `None` on success, else Kafka's error name or how the exchange was lost.
        error: Option<String>,
    },
    /// A coordinator timer fired.
    Timer {
        /// When.
        at_ms: i64,
        /// The timer's key, e.g. `session-timeout m1`.
        timer: String,
    },
    /// A user action was applied.
    Action {
        /// When.
        at_ms: i64,
        /// The action.
        action: Action,
    },
    /// The group changed state.
    StateChange {
        /// When.
        at_ms: i64,
        /// The previous state.
        from: String,
        /// The new state.
        to: String,
    },
    /// An invariant stopped holding.
    InvariantViolated {
        /// When.
        at_ms: i64,
        /// The invariant.
        name: String,
        /// What is wrong.
        detail: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_action() -> Vec<Action> {
        let m = || "m1".to_string();
        vec![
            Action::AddMember {
                process_id: "p1".into(),
            },
            Action::AddProcess {
                process: ProcessSpec {
                    process_id: "p9".into(),
                    threads: 2,
                    rack: Some("r1".into()),
                    client_tags: BTreeMap::from([("zone".into(), "z1".into())]),
                    static_members: true,
                    start_at_ms: 5,
                },
            },
            Action::CrashMember { member: m() },
            Action::LeaveMember { member: m() },
            Action::StaticBounce {
                member: m(),
                down_ms: 5000,
            },
            Action::CutNetwork { member: m() },
            Action::HealNetwork { member: m() },
            Action::RestartCoordinator,
            Action::BumpTopologyEpoch,
            Action::AddPartitions {
                topic: "t".into(),
                partitions: 6,
            },
            Action::CreateTopic {
                topic: "u".into(),
                partitions: 3,
            },
            Action::RequestShutdown { member: m() },
            Action::SetStandbyReplicas { replicas: 1 },
            Action::SetAssignor {
                name: "sticky".into(),
            },
            Action::RestartMember { member: m() },
            Action::StallMember {
                member: m(),
                ms: 9000,
            },
            Action::SetMessageLoss { percent: 30 },
        ]
    }

    #[test]
    fn actions_round_trip_through_json() {
        let all = every_action();
        assert_eq!(all.len(), ACTION_NAMES.len());
        for (a, name) in all.into_iter().zip(ACTION_NAMES) {
            let json = serde_json::to_string(&a).unwrap();
            assert!(json.contains(&format!(r#""action":"{name}""#)), "{json}");
            assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), a);
            let timed = TimedAction {
                at_ms: 42,
                action: a,
            };
            let json = serde_json::to_string(&timed).unwrap();
            assert_eq!(serde_json::from_str::<TimedAction>(&json).unwrap(), timed);
        }
    }

    #[test]
    fn action_errors_name_the_problem() {
        let err = |s: &str| serde_json::from_str::<Action>(s).unwrap_err().to_string();
        assert!(err(r#"{"action":"crash_member"}"#).starts_with("missing field `member`"));
        assert!(err(r#"{"member":"m1"}"#).starts_with("missing field `action`"));
        assert!(
            err(r#"{"action":"fly_to_moon"}"#)
                .starts_with("unknown variant `fly_to_moon`, expected one of `add_member`, ")
        );
        let timed = serde_json::from_str::<TimedAction>(r#"{"action":"restart_coordinator"}"#);
        assert!(
            timed
                .unwrap_err()
                .to_string()
                .starts_with("missing field `at_ms`")
        );
        // Fields of other actions and unknown fields are ignored.
        let a: Action =
            serde_json::from_str(r#"{"topic":"x","action":"bump_topology_epoch","extra":[1]}"#)
                .unwrap();
        assert_eq!(a, Action::BumpTopologyEpoch);
    }
}
