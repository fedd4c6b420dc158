//! TEMPORARY stand-in for `crate::sim::Simulation` while `src/sim/` is being written.
//!
//! Same signatures as the real simulation, crude behaviour (round-robin target, one-step
//! revocation). Removed once the real simulation lands on main.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::records::{
    CurrentMemberAssignmentValue, GroupMetadataValue, MemberMetadataValue, MemberState, Record,
    TargetAssignmentMetadataValue,
};
use crate::sim::{
    Action, GroupView, InvariantResult, MemberView, MessageLogEntry, ProcessSpec, RecordLogEntry,
    ScenarioSpec, SimEvent, SimSnapshot, TimedAction,
};
use crate::types::{ActiveTasks, TaskSet, TasksWithEpochs};

#[derive(Debug)]
pub struct SimError(String);

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone)]
struct M {
    id: String,
    process: String,
    rack: Option<String>,
    instance: Option<String>,
    status: String,
    known: bool,
    state: String,
    epoch: i32,
    prev: i32,
    active: BTreeSet<String>,
    standby: BTreeSet<String>,
    pending: BTreeSet<String>,
    next_hb: i64,
    session_deadline: i64,
    rejoin_at: Option<i64>,
}

pub struct Simulation {
    spec: ScenarioSpec,
    now: i64,
    steps: u64,
    members: Vec<M>,
    group_epoch: i32,
    assignment_epoch: i32,
    target: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>,
    standby: i32,
    assignor: String,
    statuses: Vec<String>,
    msgs: Vec<MessageLogEntry>,
    recs: Vec<RecordLogEntry>,
    actions: Vec<TimedAction>,
    hb: i64,
    session: i64,
    next_id: u32,
}

fn cfg(spec: &ScenarioSpec, k: &str, d: i64) -> i64 {
    spec.configs
        .get(k)
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

impl Simulation {
    pub fn new(spec: ScenarioSpec) -> Result<Simulation, SimError> {
        if spec.group_id.is_empty() {
            return Err(SimError("group_id must not be empty".into()));
        }
        let mut s = Simulation {
            hb: cfg(&spec, "group.streams.heartbeat.interval.ms", 5000),
            session: cfg(&spec, "group.streams.session.timeout.ms", 45000),
            standby: cfg(&spec, "group.streams.num.standby.replicas", 0) as i32,
            spec,
            now: 0,
            steps: 0,
            members: vec![],
            group_epoch: 0,
            assignment_epoch: 0,
            target: BTreeMap::new(),
            assignor: "sticky".into(),
            statuses: vec![],
            msgs: vec![],
            recs: vec![],
            actions: vec![],
            next_id: 0,
        };
        for p in s.spec.processes.clone() {
            s.add_process(&p);
        }
        Ok(s)
    }

    fn add_process(&mut self, p: &ProcessSpec) {
        for t in 0..p.threads {
            self.spawn(
                &p.process_id,
                p.rack.clone(),
                p.static_members.then(|| format!("{}-{t}", p.process_id)),
                p.start_at_ms.max(self.now),
            );
        }
    }

    fn spawn(&mut self, process: &str, rack: Option<String>, instance: Option<String>, at: i64) {
        self.next_id += 1;
        let hb = self.hb;
        self.members.push(M {
            id: format!("m{}", self.next_id),
            process: process.into(),
            rack,
            instance,
            status: "alive".into(),
            known: false,
            state: "STABLE".into(),
            epoch: 0,
            prev: 0,
            active: BTreeSet::new(),
            standby: BTreeSet::new(),
            pending: BTreeSet::new(),
            next_hb: at + (self.next_id as i64 * 37) % hb.max(1) / 10,
            session_deadline: 0,
            rejoin_at: None,
        });
    }

    fn tasks(&self) -> Vec<String> {
        let mut v = vec![];
        for st in &self.spec.topology.subtopologies {
            let n = st
                .source_topics
                .iter()
                .filter_map(|t| self.spec.topics.get(t))
                .copied()
                .max()
                .unwrap_or(0);
            for p in 0..n {
                v.push(format!("{}_{p}", st.subtopology_id));
            }
        }
        v.sort();
        v
    }

    fn rec(&mut self, cause: &str, record: Record) {
        self.recs.push(RecordLogEntry {
            seq: self.recs.len() as u64 + 1,
            at_ms: self.now,
            cause: cause.into(),
            summary: record.summary(),
            record,
        });
    }

    fn bump(&mut self, cause: &str) {
        self.group_epoch += 1;
        let v = GroupMetadataValue {
            epoch: self.group_epoch,
            ..Default::default()
        };
        self.rec(
            cause,
            Record::GroupMetadata {
                group_id: self.spec.group_id.clone(),
                value: Some(v),
            },
        );
    }

    fn assign(&mut self, cause: &str) {
        let ids: Vec<String> = self
            .members
            .iter()
            .filter(|m| m.known)
            .map(|m| m.id.clone())
            .collect();
        self.target.clear();
        for id in &ids {
            self.target.insert(id.clone(), Default::default());
        }
        if !ids.is_empty() {
            for (i, t) in self.tasks().into_iter().enumerate() {
                self.target
                    .get_mut(&ids[i % ids.len()])
                    .unwrap()
                    .0
                    .insert(t.clone());
                for r in 1..=self.standby as usize {
                    if r < ids.len() {
                        self.target
                            .get_mut(&ids[(i + r) % ids.len()])
                            .unwrap()
                            .1
                            .insert(t.clone());
                    }
                }
            }
        }
        self.assignment_epoch = self.group_epoch;
        let v = TargetAssignmentMetadataValue {
            assignment_epoch: self.assignment_epoch,
            assignment_timestamp: self.now,
        };
        self.rec(
            cause,
            Record::TargetAssignmentMetadata {
                group_id: self.spec.group_id.clone(),
                value: Some(v),
            },
        );
    }

    fn heartbeat(&mut self, i: usize) {
        let now = self.now;
        let lost = self.members[i].status == "partitioned";
        let id = self.members[i].id.clone();
        let cause = format!("heartbeat {id}");
        let req_epoch = self.members[i].epoch;
        self.members[i].next_hb = now + self.hb;
        if !lost {
            if !self.members[i].known {
                self.members[i].known = true;
                self.members[i].session_deadline = now + self.session;
                let v = MemberMetadataValue {
                    instance_id: self.members[i].instance.clone(),
                    rack_id: self.members[i].rack.clone(),
                    client_id: String::new(),
                    client_host: String::new(),
                    rebalance_timeout_ms: 30000,
                    topology_epoch: self.spec.topology.epoch,
                    process_id: self.members[i].process.clone(),
                    user_endpoint: None,
                    client_tags: BTreeMap::new(),
                };
                let gid = self.spec.group_id.clone();
                self.rec(
                    &cause,
                    Record::MemberMetadata {
                        group_id: gid,
                        member_id: id.clone(),
                        value: Some(v),
                    },
                );
                self.bump(&cause);
            }
            if self.group_epoch > self.assignment_epoch {
                self.assign(&cause);
            }
            self.reconcile(i, &cause);
            self.members[i].session_deadline = now + self.session;
        }
        let m = &self.members[i];
        let request = serde_json::json!({"group_id": self.spec.group_id, "member_id": id, "member_epoch": req_epoch, "process_id": m.process});
        let response = serde_json::json!({"error_code": 0, "member_epoch": m.epoch, "active_tasks": m.active, "heartbeat_interval_ms": self.hb});
        let seq = self.msgs.len() as u64 + 1;
        let hex = |v: &serde_json::Value| {
            v.to_string()
                .bytes()
                .take(48)
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        self.msgs.push(MessageLogEntry {
            seq,
            sent_ms: now,
            received_ms: now + self.spec.latency_ms.0,
            member_id: id,
            api_version: 1,
            request_hex: hex(&request),
            response_hex: (!lost).then(|| hex(&response)),
            request,
            response: (!lost).then_some(response),
            error: None,
            fate: if lost {
                "lost_request".into()
            } else {
                "delivered".into()
            },
        });
    }

    fn owned_elsewhere(&self, i: usize, t: &str) -> bool {
        self.members
            .iter()
            .enumerate()
            .any(|(j, m)| j != i && m.known && (m.active.contains(t) || m.pending.contains(t)))
    }

    fn reconcile(&mut self, i: usize, cause: &str) {
        let (ta, ts) = self
            .target
            .get(&self.members[i].id)
            .cloned()
            .unwrap_or_default();
        let before = (
            self.members[i].state.clone(),
            self.members[i].epoch,
            self.members[i].active.clone(),
            self.members[i].pending.clone(),
        );
        // The client acks revocations on the heartbeat after it was told.
        self.members[i].pending.clear();
        let revoke: BTreeSet<String> = self.members[i].active.difference(&ta).cloned().collect();
        if !revoke.is_empty() {
            let m = &mut self.members[i];
            m.active = m.active.intersection(&ta).cloned().collect();
            m.pending = revoke;
            m.state = "UNREVOKED_TASKS".into();
        } else {
            let mut withheld = false;
            for t in &ta {
                if self.owned_elsewhere(i, t) {
                    withheld = true;
                } else {
                    self.members[i].active.insert(t.clone());
                }
            }
            let m = &mut self.members[i];
            m.standby = ts;
            m.state = if withheld {
                "UNRELEASED_TASKS".into()
            } else {
                "STABLE".into()
            };
            m.epoch = self.assignment_epoch;
        }
        let m = &self.members[i];
        if before
            != (
                m.state.clone(),
                m.epoch,
                m.active.clone(),
                m.pending.clone(),
            )
        {
            self.members[i].prev = before.1;
            let m = &self.members[i];
            let to_tasks = |s: &BTreeSet<String>, e: i32| {
                let mut a = ActiveTasks::new();
                for t in s {
                    if let Some((st, p)) = t.rsplit_once('_') {
                        a.insert(st, p.parse().unwrap_or(0), e);
                    }
                }
                TasksWithEpochs {
                    active: a,
                    standby: TaskSet::new(),
                    warmup: TaskSet::new(),
                }
            };
            let v = CurrentMemberAssignmentValue {
                member_epoch: m.epoch,
                previous_member_epoch: m.prev,
                state: match m.state.as_str() {
                    "UNREVOKED_TASKS" => MemberState::UnrevokedTasks,
                    "UNRELEASED_TASKS" => MemberState::UnreleasedTasks,
                    _ => MemberState::Stable,
                },
                assigned: to_tasks(&m.active, m.epoch),
                pending_revocation: to_tasks(&m.pending, m.epoch),
            };
            let (gid, mid) = (self.spec.group_id.clone(), m.id.clone());
            self.rec(
                cause,
                Record::CurrentMemberAssignment {
                    group_id: gid,
                    member_id: mid,
                    value: Some(v),
                },
            );
        }
    }

    fn remove(&mut self, i: usize, cause: &str) {
        let m = &mut self.members[i];
        if !m.known {
            return;
        }
        m.known = false;
        m.epoch = 0;
        m.active.clear();
        m.standby.clear();
        m.pending.clear();
        m.state = "STABLE".into();
        let (gid, mid) = (self.spec.group_id.clone(), m.id.clone());
        self.rec(
            cause,
            Record::CurrentMemberAssignment {
                group_id: gid.clone(),
                member_id: mid.clone(),
                value: None,
            },
        );
        self.rec(
            cause,
            Record::MemberMetadata {
                group_id: gid,
                member_id: mid,
                value: None,
            },
        );
        self.bump(cause);
    }

    pub fn step(&mut self, ms: i64) -> Vec<SimEvent> {
        let end = self.now + ms.max(0);
        let mut ev = vec![];
        let before = self.state();
        loop {
            let mut best: Option<(i64, usize, u8)> = None;
            for (i, m) in self.members.iter().enumerate() {
                let cands = [
                    (m.status == "alive" || m.status == "partitioned").then_some((m.next_hb, 0u8)),
                    m.known.then_some((m.session_deadline, 1u8)),
                    m.rejoin_at.map(|t| (t, 2u8)),
                ];
                for (t, k) in cands.into_iter().flatten() {
                    if t <= end && best.is_none_or(|b| t < b.0) {
                        best = Some((t, i, k));
                    }
                }
            }
            let Some((t, i, k)) = best else { break };
            self.now = t.max(self.now);
            self.steps += 1;
            match k {
                0 => {
                    self.heartbeat(i);
                    let m = &self.members[i];
                    ev.push(SimEvent::Heartbeat {
                        seq: self.msgs.len() as u64,
                        member_id: m.id.clone(),
                        at_ms: t,
                        error: None,
                    });
                }
                1 => {
                    let id = self.members[i].id.clone();
                    self.remove(i, &format!("session-timeout {id}"));
                    ev.push(SimEvent::Timer {
                        at_ms: t,
                        timer: format!("session-timeout {id}"),
                    });
                }
                _ => {
                    let m = &mut self.members[i];
                    m.rejoin_at = None;
                    m.status = "alive".into();
                    m.next_hb = t;
                }
            }
        }
        self.now = end;
        let after = self.state();
        if after != before {
            ev.push(SimEvent::StateChange {
                at_ms: self.now,
                from: before,
                to: after,
            });
        }
        ev
    }

    fn find(&self, member: &str) -> Result<usize, SimError> {
        self.members
            .iter()
            .position(|m| m.id == member)
            .ok_or_else(|| SimError(format!("unknown member {member}")))
    }

    pub fn apply(&mut self, action: Action) -> Result<Vec<SimEvent>, SimError> {
        let cause = "action";
        match &action {
            Action::AddMember { process_id } => {
                let p = self
                    .members
                    .iter()
                    .find(|m| &m.process == process_id)
                    .map(|m| m.rack.clone());
                let Some(rack) = p else {
                    return Err(SimError(format!("unknown process {process_id}")));
                };
                self.spawn(process_id, rack, None, self.now);
            }
            Action::AddProcess { process } => {
                if process.threads == 0 {
                    return Err(SimError("threads must be >= 1".into()));
                }
                self.add_process(process)
            }
            Action::CrashMember { member } => {
                let i = self.find(member)?;
                self.members[i].status = "crashed".into();
            }
            Action::LeaveMember { member } => {
                let i = self.find(member)?;
                self.members[i].status = "left".into();
                self.remove(i, cause);
            }
            Action::StaticBounce { member, down_ms } => {
                let i = self.find(member)?;
                self.members[i].status = "bouncing".into();
                self.members[i].rejoin_at = Some(self.now + down_ms);
                self.remove(i, cause);
            }
            Action::CutNetwork { member } => {
                let i = self.find(member)?;
                self.members[i].status = "partitioned".into();
            }
            Action::HealNetwork { member } => {
                let i = self.find(member)?;
                if self.members[i].status == "partitioned" {
                    self.members[i].status = "alive".into();
                }
            }
            Action::RestartCoordinator => {}
            Action::BumpTopologyEpoch => {
                self.spec.topology.epoch += 1;
                self.bump(cause);
            }
            Action::AddPartitions { topic, partitions }
            | Action::CreateTopic { topic, partitions } => {
                *self.spec.topics.entry(topic.clone()).or_insert(0) += partitions;
                self.bump(cause);
            }
            Action::RequestShutdown { .. } => {
                self.statuses.push("SHUTDOWN_APPLICATION: requested".into());
                for i in 0..self.members.len() {
                    self.members[i].status = "left".into();
                    self.remove(i, cause);
                }
            }
            Action::SetStandbyReplicas { replicas } => {
                self.standby = *replicas;
                self.bump(cause);
            }
            Action::SetAssignor { name } => {
                self.assignor = name.clone();
                self.bump(cause);
            }
        }
        self.actions.push(TimedAction {
            at_ms: self.now,
            action: action.clone(),
        });
        Ok(vec![SimEvent::Action {
            at_ms: self.now,
            action,
        }])
    }

    pub fn now(&self) -> i64 {
        self.now
    }

    fn state(&self) -> String {
        let known: Vec<&M> = self.members.iter().filter(|m| m.known).collect();
        if known.is_empty() {
            "Empty"
        } else if self.tasks().is_empty() {
            "NotReady"
        } else if self.group_epoch > self.assignment_epoch {
            "Assigning"
        } else if known
            .iter()
            .any(|m| m.state != "STABLE" || m.epoch != self.assignment_epoch)
        {
            "Reconciling"
        } else {
            "Stable"
        }
        .into()
    }

    fn group(&self) -> GroupView {
        let v = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>();
        let members = self
            .members
            .iter()
            .filter(|m| m.known || m.status != "left")
            .map(|m| {
                let (ta, ts) = self.target.get(&m.id).cloned().unwrap_or_default();
                MemberView {
                    member_id: m.id.clone(),
                    process_id: m.process.clone(),
                    instance_id: m.instance.clone(),
                    rack: m.rack.clone(),
                    client_status: m.status.clone(),
                    state: m.known.then(|| m.state.clone()),
                    member_epoch: m.known.then_some(m.epoch),
                    previous_member_epoch: m.known.then_some(m.prev),
                    active: v(&m.active),
                    standby: v(&m.standby),
                    warmup: vec![],
                    pending_revocation: v(&m.pending),
                    target_active: v(&ta),
                    target_standby: v(&ts),
                    target_warmup: vec![],
                    owned_active: v(&m.active),
                    owned_standby: v(&m.standby),
                    owned_warmup: vec![],
                    session_deadline_ms: m.known.then_some(m.session_deadline),
                    session_timeout_ms: self.session,
                    rebalance_deadline_ms: None,
                    next_heartbeat_ms: Some(m.next_hb),
                }
            })
            .collect();
        GroupView {
            group_id: self.spec.group_id.clone(),
            state: self.state(),
            group_epoch: self.group_epoch,
            assignment_epoch: self.assignment_epoch,
            topology_epoch: Some(self.spec.topology.epoch),
            validated_topology_epoch: self.spec.topology.epoch,
            assignor: self.assignor.clone(),
            num_standby_replicas: self.standby,
            tasks: self.tasks(),
            stateful_subtopologies: vec![],
            members,
            statuses: self.statuses.clone(),
            initial_rebalance_deadline_ms: None,
        }
    }

    pub fn snapshot(&self) -> SimSnapshot {
        SimSnapshot {
            now_ms: self.now,
            group: self.group(),
            topics: self.spec.topics.clone(),
            state_hash: self.state_hash(),
            steps: self.steps,
        }
    }

    pub fn message_log(&self) -> &[MessageLogEntry] {
        &self.msgs
    }

    pub fn record_log(&self) -> &[RecordLogEntry] {
        &self.recs
    }

    pub fn invariants(&self) -> Vec<InvariantResult> {
        let mut owners: BTreeMap<&str, usize> = BTreeMap::new();
        for m in self.members.iter().filter(|m| m.known) {
            for t in m.active.iter().chain(&m.pending) {
                *owners.entry(t).or_default() += 1;
            }
        }
        let dup: Vec<&&str> = owners
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(t, _)| t)
            .collect();
        let bad_epoch = self
            .members
            .iter()
            .any(|m| m.known && m.epoch > self.group_epoch);
        vec![
            InvariantResult {
                name: "ActiveTaskSingleOwner".into(),
                ok: dup.is_empty(),
                detail: format!("{dup:?}"),
            },
            InvariantResult {
                name: "ValidMemberEpoch".into(),
                ok: !bad_epoch,
                detail: String::new(),
            },
        ]
    }

    pub fn state_hash(&self) -> String {
        let s = serde_json::to_string(&(self.now, self.group())).unwrap_or_default();
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(s.as_bytes()))
    }

    pub fn actions(&self) -> &[TimedAction] {
        &self.actions
    }

    pub fn replay_to(
        spec: ScenarioSpec,
        actions: &[TimedAction],
        t: i64,
    ) -> Result<Simulation, SimError> {
        let mut s = Simulation::new(spec)?;
        for a in actions.iter().filter(|a| a.at_ms <= t) {
            s.step(a.at_ms - s.now);
            s.apply(a.action.clone())?;
        }
        s.step(t - s.now);
        Ok(s)
    }
}

/// Presets of the stub.
pub fn presets() -> Vec<(ScenarioSpec, Vec<TimedAction>)> {
    let topo: crate::protocol::Topology = serde_json::from_value(serde_json::json!({
        "epoch": 0,
        "subtopologies": [
            {"subtopology_id": "0", "source_topics": ["orders"], "source_topic_regex": [], "state_changelog_topics": [], "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []},
            {"subtopology_id": "1", "source_topics": ["payments"], "source_topic_regex": [], "state_changelog_topics": [], "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []}
        ]
    }))
    .expect("static topology");
    let spec = |name: &str, desc: &str, n: u32| ScenarioSpec {
        name: name.into(),
        description: desc.into(),
        seed: 42,
        group_id: "app".into(),
        topics: [("orders".to_string(), 6), ("payments".to_string(), 3)].into(),
        topology: topo.clone(),
        processes: (1..=n)
            .map(|i| ProcessSpec {
                process_id: format!("p{i}"),
                threads: 1,
                rack: None,
                client_tags: BTreeMap::new(),
                static_members: false,
                start_at_ms: 0,
            })
            .collect(),
        configs: [
            (
                "group.streams.heartbeat.interval.ms".to_string(),
                "1000".to_string(),
            ),
            (
                "group.streams.session.timeout.ms".to_string(),
                "6000".to_string(),
            ),
        ]
        .into(),
        latency_ms: (5, 20),
        auto_create_internal_topics: true,
    };
    vec![
        (
            spec("scale-out", "Two members, then a third process joins.", 2),
            vec![],
        ),
        (
            spec(
                "crash-standby-failover",
                "Three members with a standby; one crashes.",
                3,
            ),
            vec![],
        ),
    ]
}
