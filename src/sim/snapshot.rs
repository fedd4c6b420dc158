//! The explorer's view of the current state.

use crate::util::map::BTreeSet;

use crate::coordinator::TimerKey;
use crate::types::{TaskSet, TasksWithEpochs};

use super::api::*;
use super::client::task_strings;
use super::engine::Simulation;
use crate::util::sort;

/// Tasks waiting for revocation, standbys and warm-ups marked as such.
pub(super) fn pending(t: &TasksWithEpochs) -> TaskList {
    let mut v: Vec<String> = task_strings(&t.active.task_set());
    v.extend(
        task_strings(&t.standby)
            .into_iter()
            .map(|s| format!("{s} (standby)")),
    );
    v.extend(
        task_strings(&t.warmup)
            .into_iter()
            .map(|s| format!("{s} (warmup)")),
    );
    v
}

impl Simulation {
    /// A full snapshot at the current time.
    pub fn snapshot(&self) -> SimSnapshot {
        if self.spec().group_type == GroupType::Classic {
            return self.classic_snapshot();
        }
        if self.spec().group_type == GroupType::Consumer {
            return self.consumer_snapshot();
        }
        let view = self.view();
        let cfg = self.config().for_group(&view.group_id);
        let group_id = view.group_id.clone();
        let clients: crate::util::map::BTreeMap<&str, _> =
            sort::collect_map(self.clients().map(|m| (m.member_id.as_str(), m)));
        let mut ids: BTreeSet<String> =
            sort::collect_set(view.live_members().map(|(id, _)| id.clone()));
        for c in self.clients() {
            if c.is_alive() || c.status_name() == "bouncing" {
                ids.insert(c.member_id.clone());
            }
        }
        let timer = |k: TimerKey| self.timers().get(&k).map(|d| d.0);
        let members = ids
            .into_iter()
            .map(|id| {
                let vm = view.members.get(&id).filter(|m| m.metadata.is_some());
                let c = clients.get(id.as_str());
                let md = vm.and_then(|m| m.metadata.as_ref());
                let cur = vm.and_then(|m| m.current.as_ref());
                let target = view.targets.get(&id).cloned().unwrap_or_default();
                let empty = TaskSet::new();
                MemberView {
                    member_id: id.clone(),
                    process_id: c
                        .map(|c| c.process_id.clone())
                        .or_else(|| md.map(|m| m.process_id.clone()))
                        .unwrap_or_default(),
                    instance_id: c
                        .and_then(|c| c.instance_id.clone())
                        .or_else(|| md.and_then(|m| m.instance_id.clone())),
                    rack: c
                        .and_then(|c| c.rack.clone())
                        .or_else(|| md.and_then(|m| m.rack_id.clone())),
                    client_status: c.map(|c| c.status_name()).unwrap_or("unknown").to_string(),
                    state: vm.map(|m| m.state().name().to_string()),
                    member_epoch: vm.map(|m| m.epoch()),
                    previous_member_epoch: cur.map(|c| c.previous_member_epoch),
                    active: task_strings(
                        &cur.map(|c| c.assigned.active.task_set())
                            .unwrap_or_default(),
                    ),
                    standby: task_strings(cur.map(|c| &c.assigned.standby).unwrap_or(&empty)),
                    warmup: task_strings(cur.map(|c| &c.assigned.warmup).unwrap_or(&empty)),
                    pending_revocation: cur
                        .map(|c| pending(&c.pending_revocation))
                        .unwrap_or_default(),
                    target_active: if vm.is_some() {
                        task_strings(&target.active)
                    } else {
                        vec![]
                    },
                    target_standby: if vm.is_some() {
                        task_strings(&target.standby)
                    } else {
                        vec![]
                    },
                    target_warmup: if vm.is_some() {
                        task_strings(&target.warmup)
                    } else {
                        vec![]
                    },
                    owned_active: c.map(|c| task_strings(&c.owned.active)).unwrap_or_default(),
                    owned_standby: c
                        .map(|c| task_strings(&c.owned.standby))
                        .unwrap_or_default(),
                    owned_warmup: c.map(|c| task_strings(&c.owned.warmup)).unwrap_or_default(),
                    session_deadline_ms: timer(TimerKey::SessionTimeout {
                        group_id: group_id.clone(),
                        member_id: id.clone(),
                    }),
                    session_timeout_ms: cfg.session_timeout_ms as i64,
                    rebalance_deadline_ms: timer(TimerKey::RebalanceTimeout {
                        group_id: group_id.clone(),
                        member_id: id.clone(),
                    }),
                    next_heartbeat_ms: c.and_then(|c| c.next_hb_ms),
                    classic: None,
                }
            })
            .collect();
        let state = if view.exists {
            self.describe_state()
        } else {
            "Dead".to_string()
        };
        let group = GroupView {
            group_id: group_id.clone(),
            state,
            group_epoch: view.group_epoch,
            assignment_epoch: view.assignment_epoch,
            topology_epoch: view.topology.as_ref().map(|t| t.epoch),
            validated_topology_epoch: view.validated_topology_epoch,
            assignor: cfg.assignor_name.clone(),
            num_standby_replicas: cfg.num_standby_replicas,
            tasks: self.all_tasks().iter().map(|t| t.to_string()).collect(),
            stateful_subtopologies: self.stateful_subtopologies(),
            members,
            statuses: self.last_statuses().to_vec(),
            initial_rebalance_deadline_ms: timer(TimerKey::InitialRebalance { group_id }),
            group_type: GroupType::Streams,
            classic: None,
        };
        SimSnapshot {
            now_ms: self.now(),
            group,
            topics: self.topics().clone(),
            state_hash: self.state_hash(),
            steps: self.steps(),
        }
    }
}

fn partition_strings(v: &[(String, i32)]) -> Vec<String> {
    let mut v: Vec<(String, i32)> = v.to_vec();
    sort::sort(&mut v);
    v.into_iter().map(|(t, p)| format!("{t}-{p}")).collect()
}

impl Simulation {
    /// The snapshot of a classic group: the coordinator's soft state and every consumer.
    fn classic_snapshot(&self) -> SimSnapshot {
        let group_id = self.spec().group_id.clone();
        let cfg = &self.spec().classic;
        let g = self.coordinator().classic_group(&group_id);
        let timer = |k: TimerKey| self.timers().get(&k).map(|d| d.0);
        // Coordinator member id -> the running consumer that holds it now.
        let holder = |member_id: &str| {
            self.consumers()
                .find(|c| c.is_alive() && !c.member_id.is_empty() && c.member_id == member_id)
                .map(|c| c.name.clone())
        };
        let mut members: Vec<MemberView> = Vec::new();
        let empty = || Vec::new();
        let view = |member_id: String,
                    process_id: String,
                    instance_id: Option<String>,
                    client_status: &str,
                    classic: ClassicMemberView,
                    next_hb: Option<i64>| {
            let known = g.is_some_and(|g| g.members.contains_key(&classic.coordinator_member_id));
            MemberView {
                session_deadline_ms: known
                    .then(|| {
                        timer(TimerKey::ClassicHeartbeat {
                            group_id: group_id.clone(),
                            member_id: classic.coordinator_member_id.clone(),
                        })
                    })
                    .flatten(),
                member_id,
                process_id,
                instance_id,
                rack: None,
                client_status: client_status.to_string(),
                state: None,
                member_epoch: known.then(|| g.map_or(0, |g| g.generation)),
                previous_member_epoch: None,
                active: empty(),
                standby: empty(),
                warmup: empty(),
                pending_revocation: empty(),
                target_active: empty(),
                target_standby: empty(),
                target_warmup: empty(),
                owned_active: empty(),
                owned_standby: empty(),
                owned_warmup: empty(),
                session_timeout_ms: cfg.session_timeout_ms as i64,
                rebalance_deadline_ms: None,
                next_heartbeat_ms: next_hb,
                classic: Some(ClassicMemberView {
                    known_to_coordinator: known,
                    ..classic
                }),
            }
        };
        for c in self.consumers() {
            if !(c.is_alive() || c.status_name() == "bouncing") {
                continue;
            }
            let cv = ClassicMemberView {
                coordinator_member_id: c.member_id.clone(),
                client_state: c.state_name().to_string(),
                generation: c.generation,
                known_to_coordinator: false,
                is_leader: g.is_some_and(|g| {
                    !c.member_id.is_empty() && g.leader.as_deref() == Some(c.member_id.as_str())
                }),
                owned_partitions: partition_strings(&c.owned),
                revoked_partitions: partition_strings(&c.revoked_last),
                protocol: c.protocol.name().to_string(),
                assignor: c.protocol_name.clone(),
                stalled_until_ms: c.stalled_until.filter(|u| *u > self.now()),
            };
            members.push(view(
                c.name.clone(),
                c.process_id.clone(),
                c.instance_id.clone(),
                c.status_name(),
                cv,
                c.next_hb_ms,
            ));
        }
        // Members the coordinator has and no running consumer holds (crashed, cut off).
        if let Some(g) = g {
            for (id, m) in &g.members {
                if holder(id).is_some() {
                    continue;
                }
                let cv = ClassicMemberView {
                    coordinator_member_id: id.clone(),
                    client_state: "stopped".to_string(),
                    generation: -1,
                    known_to_coordinator: true,
                    is_leader: g.leader.as_deref() == Some(id.as_str()),
                    owned_partitions: Vec::new(),
                    revoked_partitions: Vec::new(),
                    protocol: String::new(),
                    assignor: None,
                    stalled_until_ms: None,
                };
                members.push(view(
                    id.clone(),
                    String::new(),
                    m.group_instance_id.clone(),
                    "unknown",
                    cv,
                    None,
                ));
            }
        }
        let partitions = self.classic_partitions();
        let owned: Vec<&(String, i32)> = self
            .consumers()
            .filter(|c| c.is_alive())
            .flat_map(|c| c.owned.iter())
            .collect();
        let nobody: Vec<(String, i32)> = partitions
            .iter()
            .filter(|tp| !owned.contains(tp))
            .cloned()
            .collect();
        let state = g.map_or("Dead", |g| g.state.name()).to_string();
        let leader = g
            .and_then(|g| g.leader.clone())
            .map(|l| holder(&l).unwrap_or(l));
        let rebalance_deadline_ms = timer(TimerKey::ClassicJoin {
            group_id: group_id.clone(),
        })
        .or_else(|| {
            timer(TimerKey::ClassicSync {
                group_id: group_id.clone(),
            })
        });
        let group = GroupView {
            group_id: group_id.clone(),
            state: state.clone(),
            group_epoch: g.map_or(0, |g| g.generation),
            assignment_epoch: g.map_or(0, |g| g.generation),
            topology_epoch: None,
            validated_topology_epoch: -1,
            assignor: g
                .and_then(|g| g.protocol_name.clone())
                .unwrap_or_else(|| cfg.assignors.first().cloned().unwrap_or_default()),
            num_standby_replicas: 0,
            tasks: Vec::new(),
            stateful_subtopologies: Vec::new(),
            members,
            statuses: Vec::new(),
            initial_rebalance_deadline_ms: None,
            group_type: GroupType::Classic,
            classic: Some(ClassicGroupView {
                state,
                generation: g.map_or(0, |g| g.generation),
                protocol_type: g.and_then(|g| g.protocol_type.clone()),
                protocol_name: g.and_then(|g| g.protocol_name.clone()),
                leader,
                partitions: partition_strings(&partitions),
                owned_by_nobody: partition_strings(&nobody),
                rebalance_deadline_ms,
            }),
        };
        SimSnapshot {
            now_ms: self.now(),
            group,
            topics: self.topics().clone(),
            state_hash: self.state_hash(),
            steps: self.steps(),
        }
    }
}
