//! The explorer's view of the current state.

use std::collections::BTreeSet;

use crate::coordinator::TimerKey;
use crate::types::{TaskSet, TasksWithEpochs};

use super::api::*;
use super::client::task_strings;
use super::engine::Simulation;
use crate::util::sort;

fn pending(t: &TasksWithEpochs) -> TaskList {
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
        let view = self.view();
        let cfg = self.config().for_group(&view.group_id);
        let group_id = view.group_id.clone();
        let clients: std::collections::BTreeMap<&str, _> =
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
