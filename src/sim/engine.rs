//! The event loop: simulated time, network, clients and the coordinator.

use crate::util::map::{BTreeMap, BTreeSet};

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

use crate::config::CoordinatorConfig;
use crate::coordinator::{Coordinator, Outcome, RequestContext, TimerChange, TimerKey};
use crate::error::ErrorCode;
use crate::protocol::{
    StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
    status_code,
};
use crate::records::{self, Record};
use crate::topology::{MetadataImage, StreamsTopology, configure_topics};
use crate::types::{Millis, TaskId, TaskSet};

use super::api::*;
use super::client::{ClientStatus, InFlight, Reaction, SimMember};
use super::config::{SimKnobs, build_config};
use super::view::GroupRecordView;
use super::wire;
use super::{SimError, invariants};
use crate::util::sort;

mod classic;
mod consumer;
mod draft;

use super::consumer_client::Kip848Consumers;
use classic::{ClassicEv, ClassicWorld};
use consumer::ConsumerEv;

/// How many message log entries are kept.
pub const MESSAGE_LOG_CAPACITY: usize = 5000;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    ProcessStart {
        process_id: String,
    },
    Heartbeat {
        member: String,
        generation: u64,
    },
    Request {
        member: String,
        seq: u64,
        coord: u64,
        leave: bool,
        req: Box<StreamsGroupHeartbeatRequest>,
    },
    Response {
        member: String,
        seq: u64,
        coord: u64,
        leave: bool,
        resp: Box<StreamsGroupHeartbeatResponse>,
    },
    RequestTimeout {
        member: String,
        seq: u64,
    },
    LocalExpiry {
        member: String,
        generation: u64,
    },
    /// A new incarnation of a thread joins (static bounce, rolling restart).
    Rejoin {
        process_id: String,
        thread: u32,
    },
    /// Rolling upgrade: this member leaves and its thread rejoins with the new topology epoch.
    RollingRestart {
        member: String,
    },
    CreateTopics {
        topics: Vec<(String, i32)>,
    },
    /// Classic consumers' events.
    Classic(ClassicEv),
    /// KIP-848 consumers' events.
    Consumer(ConsumerEv),
    /// Draft dialect: StreamsGroupInitialize and its answer (docs/draft-dialect.md §D5).
    Draft(draft::DraftEv),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct SimProcess {
    spec: ProcessSpec,
    started: bool,
    /// Current member id of each thread.
    threads: Vec<String>,
    incarnations: Vec<u32>,
}

/// How many records a restart loses with [`BreakIt::drop_records_on_restart`].
const DROPPED_ON_RESTART: usize = 4;

/// A deterministic simulation of Kafka Streams members against the coordinator.
pub struct Simulation {
    spec: ScenarioSpec,
    config: CoordinatorConfig,
    knobs: SimKnobs,
    coord: Coordinator,
    coord_incarnation: u64,
    shadow: Coordinator,
    /// Compare the live coordinator against a replay of the record log after every step.
    replay_check: bool,
    replay_result: Option<(bool, String)>,
    /// Record count at the last replay check (state only changes through records).
    replay_checked_records: Option<usize>,
    rng: Pcg64,
    now: i64,
    steps: u64,
    topics: BTreeMap<String, i32>,
    pending_creations: BTreeSet<String>,
    processes: BTreeMap<String, SimProcess>,
    members: BTreeMap<String, SimMember>,
    /// Classic consumers (classic groups only).
    classic: ClassicWorld,
    /// KIP-848 consumers (consumer groups only).
    kip848: Kip848Consumers,
    queue: BTreeMap<(i64, u64), Ev>,
    queue_seq: u64,
    msg_log: Vec<MessageLogEntry>,
    msg_seq: u64,
    record_log: Vec<RecordLogEntry>,
    actions: Vec<TimedAction>,
    view: GroupRecordView,
    timers: BTreeMap<TimerKey, Millis>,
    last_statuses: Vec<String>,
    loss_percent: u32,
    topology_epoch: i32,
    last_state: String,
    failing: BTreeMap<String, String>,
    unexpected_errors: Vec<String>,
    /// Partitions (streams: active tasks) owned by nobody, one sample per change.
    ownership: Vec<OwnershipSample>,
    /// The partitions (streams: active tasks) the ownership samples count, computed once per
    /// metadata change.
    ownership_universe: Option<Vec<(String, i32)>>,
    /// The last running owner of each partition that ever had one (to count moves).
    last_owner: Vec<((String, i32), String)>,
    moved: u32,
    out: Vec<SimEvent>,
    /// Draft dialect: heartbeat responses (by sequence number) that asked their member to
    /// initialize the topology.
    draft_asked: BTreeSet<u64>,
}

fn timer_name(k: &TimerKey) -> String {
    match k {
        TimerKey::SessionTimeout { member_id, .. } => format!("session-timeout {member_id}"),
        TimerKey::RebalanceTimeout { member_id, .. } => format!("rebalance-timeout {member_id}"),
        TimerKey::InitialRebalance { .. } => "initial-rebalance".to_string(),
        TimerKey::ClassicHeartbeat { member_id, .. } => format!("classic-heartbeat {member_id}"),
        TimerKey::ClassicJoin { .. } => "classic-join".to_string(),
        TimerKey::ClassicSync { .. } => "classic-sync".to_string(),
        TimerKey::ConsumerRegex { .. } => "consumer-regex".to_string(),
        TimerKey::ConsumerClassicJoin { member_id, .. } => format!("classic-join {member_id}"),
        TimerKey::ConsumerClassicSync { member_id, .. } => format!("classic-sync {member_id}"),
    }
}

impl Simulation {
    /// A simulation at time 0; processes start at their `start_at_ms`.
    pub fn new(spec: ScenarioSpec) -> Result<Simulation, SimError> {
        let (config, knobs) = build_config(&spec.configs)?;
        if spec.latency_ms.0 < 0 || spec.latency_ms.1 < spec.latency_ms.0 {
            return Err(SimError::InvalidSpec(format!(
                "latency_ms must be (min, max) with 0 <= min <= max, got {:?}",
                spec.latency_ms
            )));
        }
        Simulation::validate_classic(&spec)?;
        let mut seen = BTreeSet::new();
        for p in &spec.processes {
            if !seen.insert(p.process_id.clone()) {
                return Err(SimError::InvalidSpec(format!(
                    "duplicate process {}",
                    p.process_id
                )));
            }
        }
        let mut coord = Coordinator::new(config.clone());
        let image = MetadataImage {
            topics: spec.topics.clone(),
        };
        coord.set_metadata(image.clone());
        let mut shadow = Coordinator::new(config.clone());
        shadow.set_metadata(image);
        let mut sim = Simulation {
            rng: Pcg64::seed_from_u64(spec.seed),
            view: GroupRecordView::new(&spec.group_id),
            topics: spec.topics.clone(),
            topology_epoch: spec.topology.epoch,
            config,
            knobs,
            coord,
            coord_incarnation: 0,
            shadow,
            replay_check: true,
            replay_result: None,
            replay_checked_records: None,
            now: 0,
            steps: 0,
            pending_creations: BTreeSet::new(),
            processes: BTreeMap::new(),
            members: BTreeMap::new(),
            classic: ClassicWorld::default(),
            kip848: Kip848Consumers::default(),
            queue: BTreeMap::new(),
            queue_seq: 0,
            msg_log: Vec::new(),
            msg_seq: 0,
            record_log: Vec::new(),
            actions: Vec::new(),
            timers: BTreeMap::new(),
            last_statuses: Vec::new(),
            loss_percent: 0,
            last_state: "Dead".to_string(),
            failing: BTreeMap::new(),
            unexpected_errors: Vec::new(),
            ownership: Vec::new(),
            ownership_universe: None,
            last_owner: Vec::new(),
            moved: 0,
            out: Vec::new(),
            draft_asked: BTreeSet::new(),
            spec,
        };
        for p in sim.spec.processes.clone() {
            sim.add_process(p);
        }
        Ok(sim)
    }

    // -----------------------------------------------------------------------------------------
    // Public API
    // -----------------------------------------------------------------------------------------

    /// Simulated time in ms.
    pub fn now(&self) -> i64 {
        self.now
    }

    /// The scenario the simulation was built from.
    pub fn spec(&self) -> &ScenarioSpec {
        &self.spec
    }

    /// Check replay-equals-live after every step (default on; the explorer may turn it off and
    /// call [`Simulation::check_replay`] now and then).
    pub fn set_replay_check(&mut self, on: bool) {
        self.replay_check = on;
    }

    /// Advance simulated time by `ms`, processing every event in time order.
    pub fn step(&mut self, ms: i64) -> Vec<SimEvent> {
        let target = self.now.saturating_add(ms.max(0));
        loop {
            let next_ev = self.queue.keys().next().map(|k| k.0);
            let next_timer = self.coord.next_timer().map(|(d, k)| (d.0, k));
            let fire_timer = match (&next_timer, next_ev) {
                (Some((d, _)), Some(e)) => *d <= e,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if fire_timer {
                let (d, key) = next_timer.expect("checked");
                if d > target {
                    break;
                }
                self.now = self.now.max(d);
                self.fire_timers(&key);
            } else {
                let (&(t, s), _) = self.queue.iter().next().expect("checked");
                if t > target {
                    break;
                }
                let ev = self.queue.remove(&(t, s)).expect("present");
                self.now = self.now.max(t);
                // Sending a heartbeat or timing one out changes neither records nor tasks.
                let quiet = matches!(ev, Ev::Heartbeat { .. } | Ev::RequestTimeout { .. });
                self.handle(ev);
                if quiet {
                    continue;
                }
            }
            self.after_event();
        }
        self.now = target;
        self.steps += 1;
        self.check_replay_if_due();
        std::mem::take(&mut self.out)
    }

    /// Replay-equals-live, when checking is on and the log changed (or a restart) since the last
    /// check.
    fn check_replay_if_due(&mut self) {
        if self.replay_check && self.replay_checked_records != Some(self.record_log.len()) {
            self.check_replay();
        }
    }

    /// Time of the next thing the simulation will process (a queued event or a coordinator
    /// timer), or `None` when nothing is scheduled: the explorer steps from one such instant to
    /// the next, so step forward and step back stop at the same times.
    pub fn next_event_ms(&self) -> Option<i64> {
        let event = self.queue.keys().next().map(|k| k.0);
        let timer = self.coord.next_timer().map(|(d, _)| d.0);
        match (event, timer) {
            (Some(e), Some(t)) => Some(e.min(t)),
            (e, t) => e.or(t),
        }
    }

    /// Advance to absolute time `t` (no-op if in the past).
    pub fn step_to(&mut self, t: i64) -> Vec<SimEvent> {
        self.step(t - self.now)
    }

    /// Apply a user action at the current time.
    pub fn apply(&mut self, action: Action) -> Result<Vec<SimEvent>, SimError> {
        self.apply_inner(action.clone())?;
        self.actions.push(TimedAction {
            at_ms: self.now,
            action: action.clone(),
        });
        self.out.insert(
            0,
            SimEvent::Action {
                at_ms: self.now,
                action,
            },
        );
        self.after_event();
        // An action can break replay-equals-live by itself (a restart that drops records): check
        // at the action's time, not at the end of the next step (the explorer's step sizes vary).
        self.check_replay_if_due();
        Ok(std::mem::take(&mut self.out))
    }

    /// Every applied action with its time (permalinks: seed + actions).
    pub fn actions(&self) -> &[TimedAction] {
        &self.actions
    }

    /// The last [`MESSAGE_LOG_CAPACITY`] heartbeat exchanges.
    pub fn message_log(&self) -> &[MessageLogEntry] {
        let n = self.msg_log.len();
        &self.msg_log[n.saturating_sub(MESSAGE_LOG_CAPACITY)..]
    }

    /// Every record the coordinator wrote, with its cause.
    pub fn record_log(&self) -> &[RecordLogEntry] {
        &self.record_log
    }

    /// Classic groups: how many subscribed partitions no running consumer owned, one sample per
    /// change, in time order (empty for streams groups).
    pub fn ownership_history(&self) -> &[OwnershipSample] {
        &self.ownership
    }

    /// Heartbeat errors no scenario should produce (e.g. `INVALID_REQUEST`), with member and time.
    pub fn unexpected_errors(&self) -> &[String] {
        &self.unexpected_errors
    }

    /// Rebuild a simulation by replaying the spec and the actions applied up to `t`, then
    /// stepping to `t` (step back, time travel). Same state hash as the original run at `t`.
    pub fn replay_to(
        spec: ScenarioSpec,
        actions: &[TimedAction],
        t: i64,
    ) -> Result<Simulation, SimError> {
        let mut sim = Simulation::new(spec)?;
        sim.replay_check = false;
        for a in actions.iter().filter(|a| a.at_ms <= t) {
            sim.step_to(a.at_ms);
            sim.apply(a.action.clone())?;
        }
        sim.step_to(t);
        sim.replay_check = true;
        Ok(sim)
    }

    /// Hash of the coordinator's state, every client's state, the topics and the time.
    pub fn state_hash(&self) -> String {
        let mut s = String::new();
        s.push_str(&self.coord.state_hash());
        s.push_str(&format!("|now={}|topics={:?}|", self.now, self.topics));
        for m in self.members.values() {
            s.push_str(&format!(
                "{}:{:?}:{}:{}:{:?}:{:?}:{:?}:{:?};",
                m.member_id,
                m.status,
                m.net_cut,
                m.epoch,
                m.owned,
                m.last_sent,
                m.in_flight,
                m.next_hb_ms
            ));
        }
        self.classic.hash_into(&mut s);
        self.kip848_hash_into(&mut s);
        s.push_str(&format!(
            "|q={}|msgs={}|recs={}",
            self.queue.len(),
            self.msg_seq,
            self.record_log.len()
        ));
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(s.as_bytes()))
    }

    /// Every invariant at the current time (spec names; see `sim/invariants.rs`).
    pub fn invariants(&self) -> Vec<InvariantResult> {
        let mut out = invariants::check(self);
        out.push(match &self.replay_result {
            Some((ok, detail)) => InvariantResult {
                name: invariants::REPLAY_EQUALS_LIVE.to_string(),
                ok: *ok,
                detail: detail.clone(),
            },
            None => InvariantResult {
                name: invariants::REPLAY_EQUALS_LIVE.to_string(),
                ok: true,
                detail: "not checked yet".to_string(),
            },
        });
        out
    }

    /// Compare the live coordinator with one that replayed every record so far.
    pub fn check_replay(&mut self) -> bool {
        self.replay_checked_records = Some(self.record_log.len());
        let live = self.coord.state_hash();
        let replayed = self.shadow.state_hash();
        let ok = live == replayed;
        let detail = if ok {
            format!("{} records replayed, hash {live}", self.record_log.len())
        } else {
            format!(
                "live {live} != replayed {replayed} after {} records",
                self.record_log.len()
            )
        };
        let changed = self.replay_result.as_ref().map(|r| r.0) != Some(ok);
        if !ok && changed {
            self.out.push(SimEvent::InvariantViolated {
                at_ms: self.now,
                name: invariants::REPLAY_EQUALS_LIVE.to_string(),
                detail: detail.clone(),
            });
        }
        self.replay_result = Some((ok, detail));
        ok
    }

    /// A from-scratch replay of the whole record log (slower than the per-step check, which
    /// replays incrementally into a second coordinator).
    pub fn full_replay_hash(&self) -> Result<String, String> {
        let mut c = Coordinator::new(self.config.clone());
        c.set_metadata(MetadataImage {
            topics: self.topics.clone(),
        });
        for (i, r) in self.record_log.iter().enumerate() {
            c.replay(&r.record)
                .map_err(|e| format!("record {i} ({}): {e:?}", r.summary))?;
        }
        Ok(c.state_hash())
    }

    /// The coordinator, for reading.
    pub fn coordinator(&self) -> &Coordinator {
        &self.coord
    }

    /// Current member id of a thread alias `<process>-t<i>` or a member id.
    pub fn resolve_member(&self, name: &str) -> Option<String> {
        if self.members.contains_key(name)
            || self.classic.consumers.contains_key(name)
            || self.kip848.get(name).is_some()
        {
            return Some(name.to_string());
        }
        let (p, t) = name.rsplit_once("-t")?;
        let t: usize = t.parse().ok()?;
        self.processes.get(p)?.threads.get(t).cloned()
    }

    // -----------------------------------------------------------------------------------------
    // Internals used by invariants, snapshot and the random runner
    // -----------------------------------------------------------------------------------------

    pub(crate) fn clients(&self) -> impl Iterator<Item = &SimMember> {
        self.members.values()
    }

    #[cfg(test)]
    pub(crate) fn clients_mut(&mut self) -> impl Iterator<Item = &mut SimMember> {
        self.members.values_mut()
    }

    pub(crate) fn view(&self) -> &GroupRecordView {
        &self.view
    }

    pub(crate) fn config(&self) -> &CoordinatorConfig {
        &self.config
    }

    pub(crate) fn knobs(&self) -> &SimKnobs {
        &self.knobs
    }

    pub(crate) fn topics(&self) -> &BTreeMap<String, i32> {
        &self.topics
    }

    pub(crate) fn steps(&self) -> u64 {
        self.steps
    }

    pub(crate) fn timers(&self) -> &BTreeMap<TimerKey, Millis> {
        &self.timers
    }

    pub(crate) fn last_statuses(&self) -> &[String] {
        &self.last_statuses
    }

    /// Every task of the topology as configured against the current topics (empty when the
    /// topology cannot be configured yet).
    pub(crate) fn all_tasks(&self) -> BTreeSet<TaskId> {
        let topo = StreamsTopology::from_request(&self.spec.topology);
        let image = MetadataImage {
            topics: self.topics.clone(),
        };
        match configure_topics(&topo, &image) {
            Ok(ct) => sort::collect_set(ct.subtopologies.iter().flatten().flat_map(|(id, s)| {
                (0..s.number_of_tasks).map(move |p| TaskId::new(id.clone(), p))
            })),
            Err(_) => BTreeSet::new(),
        }
    }

    pub(crate) fn stateful_subtopologies(&self) -> Vec<String> {
        self.spec
            .topology
            .subtopologies
            .iter()
            .filter(|s| !s.state_changelog_topics.is_empty())
            .map(|s| s.subtopology_id.clone())
            .collect()
    }

    pub(crate) fn describe_state(&self) -> String {
        if self.is_classic() {
            return self.classic_state();
        }
        if self.is_consumer() {
            return self.consumer_state();
        }
        let req = StreamsGroupDescribeRequest {
            group_ids: vec![self.spec.group_id.clone()],
            ..Default::default()
        };
        let resp = self.coord.streams_group_describe(&req, 1);
        match resp.groups.first() {
            Some(g) if g.error_code == 0 => g.group_state.clone(),
            _ => "Dead".to_string(),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Event handling
    // -----------------------------------------------------------------------------------------

    fn schedule(&mut self, at: i64, ev: Ev) {
        self.queue_seq += 1;
        self.queue.insert((at.max(self.now), self.queue_seq), ev);
    }

    fn latency(&mut self) -> i64 {
        let (lo, hi) = self.spec.latency_ms;
        if hi <= lo {
            return lo;
        }
        lo + (self.rng.next_u64() % (hi - lo + 1) as u64) as i64
    }

    /// Whether a message leg is lost to random loss (draws only when loss is on).
    fn lost_at_random(&mut self) -> bool {
        self.loss_percent > 0 && (self.rng.next_u64() % 100) < self.loss_percent as u64
    }

    fn jitter(&mut self, max: i64) -> i64 {
        if max <= 0 {
            0
        } else {
            (self.rng.next_u64() % max as u64) as i64
        }
    }

    fn session_timeout_ms(&self) -> i64 {
        self.config
            .for_group(&self.spec.group_id)
            .session_timeout_ms as i64
    }

    fn after_event(&mut self) {
        self.sample_ownership();
        let state = if self.is_classic() {
            self.classic_state()
        } else if self.is_consumer() {
            self.consumer_state()
        } else {
            self.view.state().to_string()
        };
        if state != self.last_state {
            self.out.push(SimEvent::StateChange {
                at_ms: self.now,
                from: std::mem::replace(&mut self.last_state, state.clone()),
                to: state,
            });
        }
        let results = invariants::check(self);
        for r in results {
            if r.ok {
                self.failing.remove(&r.name);
            } else if !self.failing.contains_key(&r.name) {
                self.out.push(SimEvent::InvariantViolated {
                    at_ms: self.now,
                    name: r.name.clone(),
                    detail: r.detail.clone(),
                });
                self.failing.insert(r.name, r.detail);
            }
        }
    }

    /// Who runs each partition now (streams: each active task), running clients only.
    fn current_owners(&self) -> Vec<((String, i32), &str)> {
        let mut out = Vec::new();
        for c in self.classic.consumers.values().filter(|c| c.is_alive()) {
            out.extend(c.owned.iter().map(|tp| (tp.clone(), c.name.as_str())));
        }
        for c in self.kip848.values().filter(|c| c.is_alive()) {
            out.extend(c.owned.iter().map(|tp| (tp.clone(), c.name.as_str())));
        }
        for m in self.members.values().filter(|m| m.is_alive()) {
            for (sub, parts) in m.owned.active.subtopologies() {
                out.extend(
                    parts
                        .iter()
                        .map(|p| ((sub.to_string(), *p), m.member_id.as_str())),
                );
            }
        }
        out
    }

    /// Records a new ownership sample when the number of orphan partitions or moves changed.
    fn sample_ownership(&mut self) {
        if self.ownership_universe.is_none() {
            self.ownership_universe = Some(if self.spec.group_type == GroupType::Streams {
                self.all_tasks()
                    .into_iter()
                    .map(|t| (t.subtopology, t.partition))
                    .collect()
            } else {
                self.classic_partitions()
            });
        }
        // Sorted vectors and binary search: cheap at hundreds of tasks, and no new map type in
        // the wasm module.
        let mut owners: Vec<((String, i32), String)> = self
            .current_owners()
            .into_iter()
            .map(|(tp, o)| (tp, o.to_string()))
            .collect();
        owners.sort();
        for (tp, o) in &owners {
            match self.last_owner.binary_search_by(|(k, _)| k.cmp(tp)) {
                Ok(i) if self.last_owner[i].1 != *o => {
                    self.moved += 1;
                    self.last_owner[i].1 = o.clone();
                }
                Ok(_) => {}
                Err(i) => self.last_owner.insert(i, (tp.clone(), o.clone())),
            }
        }
        let all = self.ownership_universe.as_deref().unwrap_or_default();
        let nobody = all
            .iter()
            .filter(|tp| owners.binary_search_by(|(k, _)| k.cmp(tp)).is_err())
            .count() as u32;
        let sample = OwnershipSample {
            at_ms: self.now,
            partitions: all.len() as u32,
            owned_by_nobody: nobody,
            moved: self.moved,
        };
        match self.ownership.last_mut() {
            Some(last)
                if last.partitions == sample.partitions
                    && last.owned_by_nobody == sample.owned_by_nobody
                    && last.moved == sample.moved => {}
            Some(last) if last.at_ms == sample.at_ms => *last = sample,
            _ => self.ownership.push(sample),
        }
    }

    fn fire_timers(&mut self, key: &TimerKey) {
        let name = timer_name(key);
        self.out.push(SimEvent::Timer {
            at_ms: self.now,
            timer: name.clone(),
        });
        let outcomes = self.coord.fire_due_timers(Millis(self.now));
        let now = Millis(self.now);
        self.timers.retain(|_, d| *d > now);
        for o in outcomes {
            self.absorb(o.records, o.timers, o.topics_to_create, &name);
        }
        self.drain_completed();
    }

    /// Take in what a coordinator operation produced.
    fn absorb(
        &mut self,
        records: Vec<Record>,
        timers: Vec<TimerChange>,
        topics: Vec<crate::topology::InternalTopic>,
        cause: &str,
    ) {
        for r in records {
            if let Err(e) = self.shadow.replay(&r) {
                self.replay_result =
                    Some((false, format!("replay of {} failed: {e:?}", r.summary())));
            }
            self.view.apply(&r);
            let seq = self.record_log.len() as u64;
            self.record_log.push(RecordLogEntry {
                seq,
                at_ms: self.now,
                cause: cause.to_string(),
                summary: r.summary(),
                record: r,
            });
        }
        self.apply_timer_changes(timers);
        if self.spec.auto_create_internal_topics {
            let mut create = Vec::new();
            for t in topics {
                if !self.topics.contains_key(&t.name)
                    && self.pending_creations.insert(t.name.clone())
                {
                    create.push((t.name, t.partitions.max(1)));
                }
            }
            if !create.is_empty() {
                let at = self.now + self.knobs.topic_creation_delay_ms;
                self.schedule(at, Ev::CreateTopics { topics: create });
            }
        }
    }

    fn apply_timer_changes(&mut self, timers: Vec<TimerChange>) {
        for t in timers {
            match t {
                TimerChange::Schedule { key, deadline } => {
                    self.timers.insert(key, deadline);
                }
                TimerChange::Cancel { key } => {
                    self.timers.remove(&key);
                }
            }
        }
    }

    fn set_metadata(&mut self) {
        self.ownership_universe = None;
        let image = MetadataImage {
            topics: self.topics.clone(),
        };
        self.coord.set_metadata(image.clone());
        self.shadow.set_metadata(image);
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::ProcessStart { process_id } => self.start_process(&process_id),
            Ev::Heartbeat { member, generation } => {
                let ok = self
                    .members
                    .get(&member)
                    .is_some_and(|m| m.hb_gen == generation && m.is_alive());
                if ok {
                    self.send_heartbeat(&member);
                }
            }
            Ev::Request {
                member,
                seq,
                coord,
                leave,
                req,
            } => self.deliver_request(&member, seq, coord, leave, *req),
            Ev::Response {
                member,
                seq,
                coord,
                leave,
                resp,
            } => self.deliver_response(&member, seq, coord, leave, *resp),
            Ev::RequestTimeout { member, seq } => {
                let backoff = self.knobs.retry_backoff_ms;
                let Some(m) = self.members.get_mut(&member) else {
                    return;
                };
                if m.in_flight.as_ref().is_some_and(|f| f.seq == seq) {
                    m.on_failure();
                    if m.is_alive() {
                        self.schedule_heartbeat(&member, backoff);
                    }
                }
            }
            Ev::LocalExpiry { member, generation } => {
                let Some(m) = self.members.get_mut(&member) else {
                    return;
                };
                if m.expiry_gen == generation && m.is_alive() && !self.spec.break_it.no_fencing {
                    // No successful heartbeat for a session: the client considers itself fenced,
                    // abandons its tasks (as a fenced Kafka Streams producer would) and rejoins.
                    m.drop_all_and_rejoin();
                    m.in_flight = None;
                    m.last_error = Some("local session expiry".to_string());
                    self.schedule_heartbeat(&member, 0);
                }
            }
            Ev::Rejoin { process_id, thread } => {
                self.new_incarnation(&process_id, thread);
            }
            Ev::Classic(e) => self.handle_classic(e),
            Ev::Consumer(e) => self.handle_consumer(e),
            Ev::Draft(e) => self.handle_draft(e),
            Ev::RollingRestart { member } => {
                let Some(m) = self.members.get(&member) else {
                    return;
                };
                if !m.is_alive() {
                    return;
                }
                let (p, t) = (m.process_id.clone(), m.thread);
                let epoch = if m.instance_id.is_some() { -2 } else { -1 };
                self.leave(&member, epoch, ClientStatus::Left);
                let at = self.now + 1000;
                self.schedule(
                    at,
                    Ev::Rejoin {
                        process_id: p,
                        thread: t,
                    },
                );
            }
            Ev::CreateTopics { topics } => {
                for (name, partitions) in topics {
                    self.pending_creations.remove(&name);
                    self.topics.entry(name).or_insert(partitions);
                }
                self.set_metadata();
            }
        }
    }

    fn schedule_heartbeat(&mut self, member: &str, delay: i64) {
        let at = self.now + delay;
        let Some(m) = self.members.get_mut(member) else {
            return;
        };
        m.hb_gen += 1;
        m.next_hb_ms = Some(at);
        let generation = m.hb_gen;
        self.schedule(
            at,
            Ev::Heartbeat {
                member: member.to_string(),
                generation,
            },
        );
    }

    fn send_heartbeat(&mut self, member: &str) {
        let group_id = self.spec.group_id.clone();
        let stateful: BTreeSet<String> = sort::collect_set(self.stateful_subtopologies());
        let rebalance_timeout = self.knobs.rebalance_timeout_ms;
        let now = self.now;
        let Some(m) = self.members.get_mut(member) else {
            return;
        };
        if m.in_flight.is_some() || !m.is_alive() {
            return;
        }
        m.next_hb_ms = None;
        let req = m.build_heartbeat(
            &group_id,
            &self.spec.topology,
            &|s: &str| stateful.contains(s),
            rebalance_timeout,
            now,
        );
        let epoch_sent = req.member_epoch;
        let seq = self.transmit(member, req, false);
        if let Some(m) = self.members.get_mut(member) {
            m.in_flight = Some(InFlight {
                seq,
                sent_ms: now,
                epoch_sent,
            });
        }
        let at = now + self.knobs.request_timeout_ms;
        self.schedule(
            at,
            Ev::RequestTimeout {
                member: member.to_string(),
                seq,
            },
        );
    }

    /// Put a request on the network; returns its sequence number.
    fn transmit(&mut self, member: &str, req: StreamsGroupHeartbeatRequest, leave: bool) -> u64 {
        let (api, request, (hex, decoded, codec_err)) = if self.is_draft() {
            // The draft has no wire format (no API key): logged as JSON only.
            let logged = serde_json::to_value(draft::draft_request(&req));
            let api = "StreamsGroupHeartbeat (draft)";
            (api, logged, (String::new(), req, None))
        } else {
            let logged = serde_json::to_value(&req);
            let api = "StreamsGroupHeartbeat";
            (api, logged, wire::request_roundtrip(&req))
        };
        let request = request.unwrap_or(serde_json::Value::Null);
        let cut = self.members.get(member).is_some_and(|m| m.net_cut);
        let (seq, lost) = self.log_request(
            member,
            (api, wire::HEARTBEAT_VERSION),
            request,
            hex,
            codec_err,
            cut,
        );
        if !lost {
            let at = self.now + self.latency();
            let coord = self.coord_incarnation;
            self.schedule(
                at,
                Ev::Request {
                    member: member.to_string(),
                    seq,
                    coord,
                    leave,
                    req: Box::new(decoded),
                },
            );
        }
        seq
    }

    /// Logs a request put on the network (both group types): its sequence number and whether
    /// it is lost (cut off, or random loss).
    fn log_request(
        &mut self,
        member: &str,
        (api, api_version): (&str, i16),
        request: serde_json::Value,
        request_hex: String,
        codec_err: Option<String>,
        cut: bool,
    ) -> (u64, bool) {
        self.msg_seq += 1;
        let seq = self.msg_seq;
        if let Some(e) = &codec_err {
            self.unexpected_errors
                .push(format!("t={} {member} {api} request codec: {e}", self.now));
        }
        let lost = cut || self.lost_at_random();
        self.msg_log.push(MessageLogEntry {
            seq,
            sent_ms: self.now,
            received_ms: -1,
            member_id: member.to_string(),
            api: api.to_string(),
            api_version,
            request,
            response: None,
            request_hex,
            response_hex: None,
            error: codec_err.map(|e| format!("request codec: {e}")),
            fate: if lost { "lost_request" } else { "in_flight" }.to_string(),
        });
        if self.msg_log.len() > MESSAGE_LOG_CAPACITY + MESSAGE_LOG_CAPACITY / 5 {
            let excess = self.msg_log.len() - MESSAGE_LOG_CAPACITY;
            self.msg_log.drain(..excess);
        }
        if lost {
            self.out.push(SimEvent::Heartbeat {
                seq,
                member_id: member.to_string(),
                at_ms: self.now,
                error: Some("lost_request".to_string()),
            });
        }
        (seq, lost)
    }

    fn log_entry(&mut self, seq: u64) -> Option<&mut MessageLogEntry> {
        let first = self.msg_log.first()?.seq;
        let idx = seq.checked_sub(first)? as usize;
        self.msg_log.get_mut(idx)
    }

    fn lose(&mut self, member: &str, seq: u64, fate: &str) {
        self.draft_asked.remove(&seq);
        if let Some(e) = self.log_entry(seq) {
            e.fate = fate.to_string();
        }
        self.out.push(SimEvent::Heartbeat {
            seq,
            member_id: member.to_string(),
            at_ms: self.now,
            error: Some(fate.to_string()),
        });
    }

    fn deliver_request(
        &mut self,
        member: &str,
        seq: u64,
        coord: u64,
        leave: bool,
        req: StreamsGroupHeartbeatRequest,
    ) {
        let cut = self.members.get(member).is_some_and(|m| m.net_cut);
        if coord != self.coord_incarnation || cut {
            self.lose(member, seq, "lost_request");
            return;
        }
        let client_id = self
            .members
            .get(member)
            .map(|m| m.client_id())
            .unwrap_or_default();
        let ctx = RequestContext {
            client_id,
            client_host: "/127.0.0.1".to_string(),
            api_version: wire::HEARTBEAT_VERSION,
        };
        let (
            Outcome {
                response,
                records,
                timers,
                topics_to_create,
            },
            draft_fields,
        ) = if self.is_draft() {
            self.draft_heartbeat(seq, &ctx, &req)
        } else {
            let out = self
                .coord
                .streams_group_heartbeat(Millis(self.now), &ctx, &req);
            (out, None)
        };
        let cause = if leave {
            format!("leave({}) {member}", req.member_epoch)
        } else if req.member_epoch == 0 {
            format!("join {member}")
        } else {
            format!("heartbeat {member}")
        };
        self.absorb(records, timers, topics_to_create, &cause);
        if response.error_code != 0 {
            let code = ErrorCode(response.error_code);
            let expected = matches!(
                code,
                ErrorCode::FENCED_MEMBER_EPOCH
                    | ErrorCode::UNKNOWN_MEMBER_ID
                    | ErrorCode::UNRELEASED_INSTANCE_ID
                    | ErrorCode::FENCED_INSTANCE_ID
                    | ErrorCode::COORDINATOR_NOT_AVAILABLE
                    | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
            ) || (leave
                && matches!(
                    code,
                    // A leave of a member that never got to join (§3.3).
                    ErrorCode::UNKNOWN_MEMBER_ID | ErrorCode::GROUP_ID_NOT_FOUND
                ));
            if !expected {
                self.unexpected_errors.push(format!(
                    "t={} {member} epoch {}: {}: {}",
                    self.now,
                    req.member_epoch,
                    code.name(),
                    response.error_message.clone().unwrap_or_default()
                ));
            }
        } else if !leave {
            self.last_statuses = response
                .status
                .iter()
                .flatten()
                .map(|s| format!("{}: {}", status_code::name(s.status_code), s.status_detail))
                .collect();
        }
        let mut response = response;
        if response.active_tasks.is_some() && !self.spec.break_it.is_off() {
            self.break_assignment(member, &mut response);
        }
        let (hex, decoded, codec_err) = if draft_fields.is_some() {
            (String::new(), response.clone(), None)
        } else {
            wire::response_roundtrip(&response)
        };
        if let Some(e) = &codec_err {
            self.unexpected_errors
                .push(format!("t={} {member} response codec: {e}", self.now));
        }
        let now = self.now;
        let cut = self.members.get(member).is_some_and(|m| m.net_cut) || self.lost_at_random();
        if let Some(e) = self.log_entry(seq) {
            e.received_ms = now;
            e.response = serde_json::to_value(&response).ok();
            if let (Some(serde_json::Value::Object(o)), Some(fields)) =
                (e.response.as_mut(), draft_fields)
            {
                o.extend(fields);
            }
            e.response_hex = Some(hex);
            if response.error_code != 0 {
                e.error = Some(format!(
                    "{}{}",
                    ErrorCode(response.error_code).name(),
                    response
                        .error_message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                ));
            }
            if let Some(c) = codec_err {
                e.error = Some(format!("response codec: {c}"));
            }
        }
        if cut {
            self.lose(member, seq, "lost_response");
            return;
        }
        let at = now + self.latency();
        let coord = self.coord_incarnation;
        self.schedule(
            at,
            Ev::Response {
                member: member.to_string(),
                seq,
                coord,
                leave,
                resp: Box::new(decoded),
            },
        );
    }

    fn deliver_response(
        &mut self,
        member: &str,
        seq: u64,
        coord: u64,
        leave: bool,
        resp: StreamsGroupHeartbeatResponse,
    ) {
        let cut = self.members.get(member).is_some_and(|m| m.net_cut);
        if coord != self.coord_incarnation || cut {
            self.lose(member, seq, "lost_response");
            return;
        }
        let err = (resp.error_code != 0).then(|| ErrorCode(resp.error_code).name().to_string());
        if let Some(e) = self.log_entry(seq) {
            e.fate = "delivered".to_string();
        }
        self.out.push(SimEvent::Heartbeat {
            seq,
            member_id: member.to_string(),
            at_ms: self.now,
            error: err,
        });
        if leave {
            return;
        }
        let expiry = self
            .session_timeout_ms()
            .min(self.knobs.rebalance_timeout_ms as i64)
            - 1;
        let Some(m) = self.members.get_mut(member) else {
            return;
        };
        let Some(inf) = m.in_flight.clone().filter(|f| f.seq == seq) else {
            return;
        };
        m.in_flight = None;
        if !m.is_alive() {
            return;
        }
        let fenced = matches!(
            ErrorCode(resp.error_code),
            ErrorCode::FENCED_MEMBER_EPOCH | ErrorCode::UNKNOWN_MEMBER_ID
        );
        let reaction = if fenced && self.spec.break_it.no_fencing {
            // Break it: the fence is ignored, the member keeps its tasks and epoch.
            m.last_error = Some(format!(
                "{} ignored (no fencing)",
                ErrorCode(resp.error_code).name()
            ));
            Reaction::HeartbeatIn(m.heartbeat_interval_ms)
        } else {
            m.on_response(&resp, &inf)
        };
        if resp.error_code == 0 {
            m.expiry_gen += 1;
            let generation = m.expiry_gen;
            let at = inf.sent_ms + expiry;
            self.schedule(
                at,
                Ev::LocalExpiry {
                    member: member.to_string(),
                    generation,
                },
            );
        }
        if self.draft_asked.remove(&seq) && matches!(reaction, Reaction::HeartbeatIn(_)) {
            self.send_initialize(member);
        }
        match reaction {
            Reaction::HeartbeatIn(d) => self.schedule_heartbeat(member, d),
            Reaction::LeaveAndStop => self.leave(member, -1, ClientStatus::Stopped),
            Reaction::ResyncStatic => {
                // Leave temporarily (-2) and rejoin once the leave has surely arrived: the
                // coordinator hands the member its assignment back (spec §3.4 step B).
                self.send_temporary_leave(member);
                let delay = self.spec.latency_ms.1 + 1;
                self.schedule_heartbeat(member, delay);
            }
            Reaction::Stop => {}
        }
    }

    /// A static member's leave with epoch -2 that keeps it running (resync).
    fn send_temporary_leave(&mut self, member: &str) {
        let group_id = self.spec.group_id.clone();
        let Some(m) = self.members.get(member) else {
            return;
        };
        let req = StreamsGroupHeartbeatRequest {
            group_id,
            member_id: m.member_id.clone(),
            member_epoch: -2,
            instance_id: m.instance_id.clone(),
            ..Default::default()
        };
        self.transmit(member, req, true);
    }

    /// The member drops its tasks, sends a leave heartbeat with `epoch` and takes `status`.
    fn leave(&mut self, member: &str, epoch: i32, status: ClientStatus) {
        let group_id = self.spec.group_id.clone();
        let Some(m) = self.members.get_mut(member) else {
            return;
        };
        m.owned = Default::default();
        m.status = status;
        m.in_flight = None;
        m.next_hb_ms = None;
        m.hb_gen += 1;
        m.expiry_gen += 1;
        m.in_sync = false;
        let req = StreamsGroupHeartbeatRequest {
            group_id,
            member_id: m.member_id.clone(),
            member_epoch: epoch,
            instance_id: m.instance_id.clone(),
            shutdown_application: m.shutdown_requested,
            ..Default::default()
        };
        self.transmit(member, req, true);
    }

    // -----------------------------------------------------------------------------------------
    // Processes and members
    // -----------------------------------------------------------------------------------------

    fn add_process(&mut self, spec: ProcessSpec) {
        let id = spec.process_id.clone();
        let start = spec.start_at_ms.max(self.now);
        self.processes.insert(
            id.clone(),
            SimProcess {
                spec,
                started: false,
                threads: Vec::new(),
                incarnations: Vec::new(),
            },
        );
        if start <= self.now {
            self.start_process(&id);
        } else {
            self.schedule(start, Ev::ProcessStart { process_id: id });
        }
    }

    fn start_process(&mut self, process_id: &str) {
        let Some(p) = self.processes.get_mut(process_id) else {
            return;
        };
        if p.started {
            return;
        }
        p.started = true;
        let n = p.spec.threads;
        for t in 0..n {
            self.new_incarnation(process_id, t);
        }
    }

    /// A (new) member for thread `thread` of a process; joins right away.
    fn new_incarnation(&mut self, process_id: &str, thread: u32) {
        if self.is_classic() {
            self.new_classic_incarnation(process_id, thread);
            return;
        }
        if self.is_consumer() {
            self.new_kip848_incarnation(process_id, thread);
            return;
        }
        let hb = self.config.for_group(&self.spec.group_id);
        let Some(p) = self.processes.get_mut(process_id) else {
            return;
        };
        let t = thread as usize;
        while p.threads.len() <= t {
            p.threads.push(String::new());
            p.incarnations.push(0);
        }
        p.incarnations[t] += 1;
        let inc = p.incarnations[t];
        let member_id = format!("{process_id}-t{thread}-{inc}");
        let old = std::mem::replace(&mut p.threads[t], member_id.clone());
        let instance_id = p
            .spec
            .static_members
            .then(|| format!("{process_id}-{thread}"));
        let m = SimMember::new(
            member_id.clone(),
            process_id,
            thread,
            inc,
            instance_id,
            p.spec.rack.clone(),
            p.spec.client_tags.clone(),
            self.topology_epoch,
            hb.heartbeat_interval_ms as i64,
            hb.task_offset_interval_ms as i64,
        );
        if let Some(o) = self.members.get_mut(&old)
            && o.status == ClientStatus::Bouncing
        {
            o.status = ClientStatus::Left;
        }
        self.members.insert(member_id.clone(), m);
        let j = self.jitter(50);
        self.schedule_heartbeat(&member_id, j);
    }

    fn member_mut(&mut self, name: &str) -> Result<(String, &mut SimMember), SimError> {
        let id = self
            .resolve_member(name)
            .ok_or_else(|| SimError::UnknownMember(name.to_string()))?;
        let m = self
            .members
            .get_mut(&id)
            .ok_or_else(|| SimError::UnknownMember(name.to_string()))?;
        Ok((id, m))
    }

    fn apply_inner(&mut self, action: Action) -> Result<(), SimError> {
        if self.is_classic() && self.apply_classic(&action)? {
            return Ok(());
        }
        if self.is_consumer() && self.apply_consumer(&action)? {
            return Ok(());
        }
        match action {
            Action::AddMember { process_id } => {
                let p = self
                    .processes
                    .get_mut(&process_id)
                    .ok_or_else(|| SimError::UnknownProcess(process_id.clone()))?;
                if !p.started {
                    p.spec.threads += 1;
                    return Ok(());
                }
                let t = p.threads.len() as u32;
                p.spec.threads = t + 1;
                self.new_incarnation(&process_id, t);
            }
            Action::AddProcess { process } => {
                if self.processes.contains_key(&process.process_id) {
                    return Err(SimError::InvalidAction(format!(
                        "process {} exists",
                        process.process_id
                    )));
                }
                self.add_process(process);
            }
            Action::CrashMember { member } => {
                let (_, m) = self.member_mut(&member)?;
                if !m.is_alive() {
                    return Err(SimError::InvalidAction(format!("{member} is not running")));
                }
                m.status = ClientStatus::Crashed;
                m.owned = Default::default();
                m.in_flight = None;
                m.next_hb_ms = None;
                m.hb_gen += 1;
                m.expiry_gen += 1;
                m.in_sync = false;
            }
            Action::LeaveMember { member } => {
                let (id, m) = self.member_mut(&member)?;
                if !m.is_alive() {
                    return Err(SimError::InvalidAction(format!("{member} is not running")));
                }
                self.leave(&id, -1, ClientStatus::Left);
            }
            Action::StaticBounce { member, down_ms } => {
                let (id, m) = self.member_mut(&member)?;
                if m.instance_id.is_none() {
                    return Err(SimError::InvalidAction(format!(
                        "{member} is not a static member"
                    )));
                }
                if !m.is_alive() {
                    return Err(SimError::InvalidAction(format!("{member} is not running")));
                }
                let (p, t) = (m.process_id.clone(), m.thread);
                self.leave(&id, -2, ClientStatus::Bouncing);
                let at = self.now + down_ms.max(0);
                self.schedule(
                    at,
                    Ev::Rejoin {
                        process_id: p,
                        thread: t,
                    },
                );
            }
            Action::CutNetwork { member } => {
                let (_, m) = self.member_mut(&member)?;
                m.net_cut = true;
            }
            Action::HealNetwork { member } => {
                let (_, m) = self.member_mut(&member)?;
                m.net_cut = false;
            }
            Action::RestartCoordinator => self.restart_coordinator()?,
            Action::SetMessageLoss { percent } => {
                if percent > 100 {
                    return Err(SimError::InvalidAction(format!(
                        "message loss must be 0-100 %, got {percent}"
                    )));
                }
                self.loss_percent = percent;
            }
            Action::BumpTopologyEpoch => {
                self.topology_epoch += 1;
                let stagger = self
                    .config
                    .for_group(&self.spec.group_id)
                    .heartbeat_interval_ms as i64;
                let alive: Vec<String> = self
                    .members
                    .values()
                    .filter(|m| m.is_alive())
                    .map(|m| m.member_id.clone())
                    .collect();
                for (i, member) in alive.into_iter().enumerate() {
                    let at = self.now + i as i64 * stagger;
                    self.schedule(at, Ev::RollingRestart { member });
                }
            }
            Action::AddPartitions { topic, partitions } => {
                let cur = *self
                    .topics
                    .get(&topic)
                    .ok_or_else(|| SimError::InvalidAction(format!("unknown topic {topic}")))?;
                if partitions <= cur {
                    return Err(SimError::InvalidAction(format!(
                        "topic {topic} has {cur} partitions; the new count {partitions} must be larger"
                    )));
                }
                self.topics.insert(topic, partitions);
                self.set_metadata();
                if self.is_classic() {
                    self.classic_metadata_changed();
                }
            }
            Action::CreateTopic { topic, partitions } => {
                if self.topics.contains_key(&topic) {
                    return Err(SimError::InvalidAction(format!("topic {topic} exists")));
                }
                if partitions < 1 {
                    return Err(SimError::InvalidAction(
                        "partitions must be >= 1".to_string(),
                    ));
                }
                self.topics.insert(topic, partitions);
                self.set_metadata();
                if self.is_classic() {
                    self.classic_metadata_changed();
                }
            }
            Action::RequestShutdown { member } => {
                let (id, m) = self.member_mut(&member)?;
                if !m.is_alive() {
                    return Err(SimError::InvalidAction(format!("{member} is not running")));
                }
                m.shutdown_requested = true;
                if m.in_flight.is_none() {
                    self.schedule_heartbeat(&id, 0);
                }
            }
            Action::SetStandbyReplicas { replicas } => {
                if replicas < 0 || replicas > self.config.max_standby_replicas {
                    return Err(SimError::InvalidAction(format!(
                        "standby replicas must be within [0, {}]",
                        self.config.max_standby_replicas
                    )));
                }
                self.config.num_standby_replicas = replicas;
                self.push_config();
            }
            Action::SetAssignor { name } => {
                if crate::assignor::builtin(&name).is_none() {
                    return Err(SimError::InvalidAction(format!("unknown assignor {name}")));
                }
                self.config.assignors.retain(|a| *a != name);
                self.config.assignors.insert(0, name);
                self.push_config();
            }
            Action::StallMember { .. } => {
                return Err(SimError::InvalidAction(
                    "stall_member applies to classic consumers only".to_string(),
                ));
            }
            Action::RestartMember { member } => {
                let (_, m) = self.member_mut(&member)?;
                if m.is_alive() || m.status == ClientStatus::Bouncing {
                    return Err(SimError::InvalidAction(format!("{member} is running")));
                }
                let (p, t) = (m.process_id.clone(), m.thread);
                let current = self
                    .processes
                    .get(&p)
                    .and_then(|pr| pr.threads.get(t as usize));
                if current.is_some_and(|c| self.members.get(c).is_some_and(|m| m.is_alive())) {
                    return Err(SimError::InvalidAction(format!(
                        "thread {p}-t{t} already runs a newer incarnation"
                    )));
                }
                self.new_incarnation(&p, t);
            }
        }
        Ok(())
    }

    /// Break it: what a buggy assignor (`double_assign`) or a coordinator that skips revocation
    /// (`skip_revocation`) would answer to `member` instead of the correct task lists.
    fn break_assignment(&self, member: &str, response: &mut StreamsGroupHeartbeatResponse) {
        let b = self.spec.break_it;
        let Some(ids) = &response.active_tasks else {
            return;
        };
        let mut active = TaskSet::from_task_ids(ids);
        if b.skip_revocation
            && let Some(t) = self.view.targets.get(member)
        {
            active = active.union(&t.active);
        }
        if b.double_assign {
            let other = self
                .view
                .targets
                .iter()
                .filter(|(id, _)| id.as_str() != member)
                .flat_map(|(_, t)| t.active.iter())
                .find(|t| !active.contains_task(t));
            if let Some(t) = other {
                active.insert(&t.subtopology, t.partition);
            }
        }
        response.active_tasks = Some(active.to_task_ids());
    }

    fn push_config(&mut self) {
        self.coord.set_config(self.config.clone());
        self.shadow.set_config(self.config.clone());
    }

    /// A restart goes through the server's storage path: the history is encoded with the record
    /// codec (the log), decoded, compacted (the snapshot writer), encoded and decoded again (the
    /// snapshot loader), and only then replayed into a fresh coordinator.
    fn restart_coordinator(&mut self) -> Result<(), SimError> {
        let stored = |records: &[Record], what: &str| {
            let bytes = records::codec::encode_batch(records)
                .map_err(|e| SimError::Replay(format!("{what} does not encode: {e}")))?;
            records::codec::decode_batch(&bytes)
                .map_err(|e| SimError::Replay(format!("{what} does not decode: {e}")))
        };
        let mut history: Vec<Record> = self.record_log.iter().map(|r| r.record.clone()).collect();
        if self.spec.break_it.drop_records_on_restart {
            // Break it: the log's unflushed tail (its last records) is lost.
            history.truncate(history.len().saturating_sub(DROPPED_ON_RESTART));
        }
        let log = stored(&history, "record log")?;
        let snapshot = stored(&records::compact(&log), "compacted snapshot")?;
        let mut c = Coordinator::new(self.config.clone());
        c.set_metadata(MetadataImage {
            topics: self.topics.clone(),
        });
        for (i, r) in snapshot.iter().enumerate() {
            c.replay(r).map_err(|e| {
                SimError::Replay(format!(
                    "snapshot record {i} ({}) failed to replay: {e:?}",
                    r.summary()
                ))
            })?;
        }
        let timers = c.on_loaded(Millis(self.now));
        self.coord = c;
        self.coord_incarnation += 1;
        self.classic.coordinator_restarted();
        self.replay_checked_records = None;
        self.timers.clear();
        self.apply_timer_changes(timers);
        // In-flight heartbeats are lost: their clients time out and retry.
        Ok(())
    }
}
