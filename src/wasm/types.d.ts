// The JSON shapes the wasm API (`WasmSimulation`) takes and returns. Hand-written to match the
// serde data of src/sim/api.rs, src/protocol/messages.rs and src/records/mod.rs; wasm-bindgen
// copies this text into the generated groupcoord.d.ts. Field names are snake_case as in the
// Rust structs; integers are JS numbers; `Option` is `null`.

/** A topic configuration entry. */
export interface KeyValue {
  key: string;
  value: string;
}

/** A changelog or repartition topic of a subtopology (StreamsGroupHeartbeat's TopicInfo). */
export interface TopicInfo {
  name: string;
  /** 0 = not enforced (always 0 for changelogs). */
  partitions: number;
  /** 0 = broker default. */
  replication_factor: number;
  topic_configs: KeyValue[];
}

/** Indexes into the subtopology's topic lists that must be co-partitioned. */
export interface CopartitionGroup {
  source_topics: number[];
  source_topic_regex: number[];
  repartition_source_topics: number[];
}

export interface Subtopology {
  subtopology_id: string;
  source_topics: string[];
  source_topic_regex: string[];
  state_changelog_topics: TopicInfo[];
  repartition_sink_topics: string[];
  repartition_source_topics: TopicInfo[];
  copartition_groups: CopartitionGroup[];
}

/** The topology a Kafka Streams member sends in StreamsGroupHeartbeat. */
export interface Topology {
  epoch: number;
  subtopologies: Subtopology[];
}

/** One Kafka Streams process (an application instance) with `threads` members. */
export interface ProcessSpec {
  process_id: string;
  /** Default 1. */
  threads?: number;
  rack?: string | null;
  client_tags?: Record<string, string>;
  /** Static membership: members get `group.instance.id` `<process_id>-<thread>`. */
  static_members?: boolean;
  /** Time at which the process starts (ms). Default 0. */
  start_at_ms?: number;
}

/** A simulated run's starting point. Optional fields are always present in outputs. */
export interface ScenarioSpec {
  name: string;
  description?: string;
  seed: number;
  group_id: string;
  /** Existing topics: name -> partition count. */
  topics: Record<string, number>;
  /** Streams only (may be omitted for classic groups). */
  topology?: Topology;
  processes: ProcessSpec[];
  /** Kafka broker config keys -> value, over the defaults. */
  configs?: Record<string, string>;
  /** Network delay of each heartbeat leg, ms: [min, max]. Default [0, 0]. */
  latency_ms?: [number, number];
  /** The coordinator creates missing internal topics (as a broker does). Default true. */
  auto_create_internal_topics?: boolean;
  /** `streams` (default: `topology` applies) or `classic` (`classic` applies; each process's
   * `threads` are its consumers, `static_members` gives them `group.instance.id`). */
  group_type?: GroupType;
  /** Classic consumer configs (used when `group_type` is `classic`). */
  classic?: ClassicSpec;
}

/** `consumer`: KIP-848 consumers (ConsumerGroupHeartbeat); `classic.subscription` and
 * `classic.max_poll_interval_ms` apply, the assignor is the broker's `group.consumer.assignors`. */
export type GroupType = "streams" | "classic" | "consumer";

/** Consumer configs of every simulated classic consumer. Every field is optional in inputs. */
export interface ClassicSpec {
  /** `partition.assignment.strategy` by preference: `range`, `roundrobin`, `sticky`,
   * `cooperative-sticky`. Protocol `cooperative` when every one supports it, else `eager`.
   * Default `["range"]`. */
  assignors?: string[];
  /** Subscribed topics; empty = every topic. */
  subscription?: string[];
  /** Default 45000. */
  session_timeout_ms?: number;
  /** Default 3000. */
  heartbeat_interval_ms?: number;
  /** `max.poll.interval.ms` (the rebalance timeout). Default 300000. */
  max_poll_interval_ms?: number;
}

/** A user action (fault injection and operations), applied at the current simulated time. */
export type Action =
  | { action: "add_member"; process_id: string }
  | { action: "add_process"; process: ProcessSpec }
  | { action: "crash_member"; member: string }
  | { action: "leave_member"; member: string }
  | { action: "static_bounce"; member: string; down_ms: number }
  | { action: "cut_network"; member: string }
  | { action: "heal_network"; member: string }
  | { action: "restart_coordinator" }
  | { action: "bump_topology_epoch" }
  /** `partitions` is the new total count, not a delta. */
  | { action: "add_partitions"; topic: string; partitions: number }
  | { action: "create_topic"; topic: string; partitions: number }
  | { action: "request_shutdown"; member: string }
  | { action: "set_standby_replicas"; replicas: number }
  | { action: "set_assignor"; name: string }
  | { action: "restart_member"; member: string }
  /** Classic consumers only: the poll loop stalls for `ms` (heartbeats go on, no rejoin). */
  | { action: "stall_member"; member: string; ms: number }
  /** Every heartbeat leg is lost with this probability (0-100). */
  | { action: "set_message_loss"; percent: number };

/** An action with the simulated time (ms) at which it is applied. */
export type TimedAction = Action & { at_ms: number };

/** Tasks of one role as sorted `"<subtopology>_<partition>"` strings. */
export type TaskList = string[];

/** `unknown`: a member the coordinator knows and no simulated client runs. */
export type ClientStatus =
  | "alive"
  | "crashed"
  | "partitioned"
  | "left"
  | "bouncing"
  | "stopped"
  | "unknown";

/** Group states of KIP-1071 and of classic groups, plus `Dead` when the group does not exist. */
export type GroupState =
  | "Empty"
  | "NotReady"
  | "Assigning"
  | "Reconciling"
  | "Stable"
  | "PreparingRebalance"
  | "CompletingRebalance"
  | "Dead";

/** A classic consumer's client side. */
export type ClassicClientState =
  | "unjoined"
  | "joining"
  | "awaiting_sync"
  | "stable"
  | "revoking"
  | "stopped";

/** A classic consumer (`MemberView.member_id` is the simulation's name for it). */
export interface ClassicMemberView {
  /** The member id the coordinator gave (`""` until the first JoinGroup answer). */
  coordinator_member_id: string;
  client_state: ClassicClientState;
  /** The generation the consumer last joined (-1 before the first). */
  generation: number;
  known_to_coordinator: boolean;
  /** This member is the group's leader (it runs the assignor). */
  is_leader: boolean;
  /** `topic-partition`, sorted. */
  owned_partitions: string[];
  /** Revoked in the consumer's last rebalance. */
  revoked_partitions: string[];
  protocol: "eager" | "cooperative";
  /** The assignor the group selected, once joined. */
  assignor: string | null;
  stalled_until_ms: number | null;
}

/** A classic group (the coordinator's soft state). */
export interface ClassicGroupView {
  state: "Empty" | "PreparingRebalance" | "CompletingRebalance" | "Stable" | "Dead";
  generation: number;
  protocol_type: string | null;
  protocol_name: string | null;
  /** The leader's `MemberView.member_id`. */
  leader: string | null;
  /** Every subscribed partition, `topic-partition`, sorted. */
  partitions: string[];
  /** Subscribed partitions no running consumer owns now (the stop-the-world gap). */
  owned_by_nobody: string[];
  /** Deadline of the join or sync phase, when armed. */
  rebalance_deadline_ms: number | null;
}

/** From `at_ms` on, `owned_by_nobody` of `partitions` were owned by no consumer. */
export interface OwnershipSample {
  at_ms: number;
  partitions: number;
  owned_by_nobody: number;
  /** Partitions (streams: active tasks) that went to another member than their last one, so far. */
  moved: number;
}

/** One member: the coordinator's view and the client's. */
export interface MemberView {
  member_id: string;
  process_id: string;
  instance_id: string | null;
  rack: string | null;
  client_status: ClientStatus;
  /** Coordinator side (`null` when the coordinator does not know the member). */
  state: "STABLE" | "UNREVOKED_TASKS" | "UNRELEASED_TASKS" | "UNKNOWN" | null;
  member_epoch: number | null;
  previous_member_epoch: number | null;
  active: TaskList;
  standby: TaskList;
  warmup: TaskList;
  pending_revocation: TaskList;
  target_active: TaskList;
  target_standby: TaskList;
  target_warmup: TaskList;
  /** Client side: what the member currently runs. */
  owned_active: TaskList;
  owned_standby: TaskList;
  owned_warmup: TaskList;
  session_deadline_ms: number | null;
  session_timeout_ms: number;
  rebalance_deadline_ms: number | null;
  next_heartbeat_ms: number | null;
  /** Classic consumers only (`null` for streams members; their task lists are empty). */
  classic: ClassicMemberView | null;
}

export interface GroupView {
  group_id: string;
  state: GroupState;
  group_epoch: number;
  assignment_epoch: number;
  topology_epoch: number | null;
  validated_topology_epoch: number;
  assignor: string;
  num_standby_replicas: number;
  /** Every task of the configured topology, sorted. */
  tasks: TaskList;
  stateful_subtopologies: string[];
  members: MemberView[];
  /** Last statuses the coordinator reported, as `NAME: detail`. */
  statuses: string[];
  initial_rebalance_deadline_ms: number | null;
  group_type: GroupType;
  /** Classic groups only: then `state` is the classic state and `group_epoch` the generation. */
  classic: ClassicGroupView | null;
}

export interface SimSnapshot {
  now_ms: number;
  group: GroupView;
  /** Topic name -> partition count. */
  topics: Record<string, number>;
  state_hash: string;
  steps: number;
}

/** A StreamsGroupHeartbeat request or response as JSON (snake_case fields of Kafka's schema). */
export type HeartbeatJson = { [field: string]: unknown };

/** One request/response exchange (or one lost message). */
export interface MessageLogEntry {
  seq: number;
  sent_ms: number;
  received_ms: number;
  member_id: string;
  /** `StreamsGroupHeartbeat` (key 88), or `JoinGroup` (11, v9), `SyncGroup` (14, v5),
   * `Heartbeat` (12, v4), `LeaveGroup` (13, v5) for classic groups. */
  api: "StreamsGroupHeartbeat" | "JoinGroup" | "SyncGroup" | "Heartbeat" | "LeaveGroup";
  /** The request version used. */
  api_version: number;
  request: HeartbeatJson;
  response: HeartbeatJson | null;
  /** Wire bytes (body, no header) as lowercase hex. */
  request_hex: string;
  response_hex: string | null;
  error: string | null;
  fate: "delivered" | "lost_request" | "lost_response" | "in_flight";
}

/** A record value's fields (snake_case, as in Kafka's record schemas). */
export type RecordValue = { [field: string]: unknown };

/** A coordinator record; `value: null` is a tombstone. */
export type CoordinatorRecord =
  | { type: "GroupMetadata"; group_id: string; value: RecordValue | null }
  | { type: "MemberMetadata"; group_id: string; member_id: string; value: RecordValue | null }
  | { type: "TargetAssignmentMetadata"; group_id: string; value: RecordValue | null }
  | { type: "TargetAssignmentMember"; group_id: string; member_id: string; value: RecordValue | null }
  | { type: "CurrentMemberAssignment"; group_id: string; member_id: string; value: RecordValue | null }
  | { type: "Topology"; group_id: string; value: RecordValue | null }
  | { type: "OffsetCommit"; group_id: string; topic: string; partition: number; value: RecordValue | null }
  | { type: "ClassicGroupMetadata"; group_id: string; value: RecordValue | null };

/** One coordinator record as written, with the operation that caused it. */
export interface RecordLogEntry {
  seq: number;
  at_ms: number;
  /** e.g. `heartbeat m1`, `session-timeout m2`, `initial-rebalance`. */
  cause: string;
  summary: string;
  record: CoordinatorRecord;
}

export interface InvariantResult {
  name: string;
  ok: boolean;
  detail: string;
}

/** Something that happened during a step. */
export type SimEvent =
  | { kind: "heartbeat"; seq: number; member_id: string; at_ms: number; error: string | null }
  | { kind: "timer"; at_ms: number; timer: string }
  | { kind: "action"; at_ms: number; action: Action }
  | { kind: "state_change"; at_ms: number; from: string; to: string }
  | { kind: "invariant_violated"; at_ms: number; name: string; detail: string };

export interface PresetInfo {
  name: string;
  description: string;
  spec: ScenarioSpec;
  actions: TimedAction[];
}

/** What `frame()` returns: one animation frame's worth of data. */
export interface Frame {
  events: SimEvent[];
  snapshot: SimSnapshot;
  messages: MessageLogEntry[];
  records: RecordLogEntry[];
  invariants: InvariantResult[];
}
