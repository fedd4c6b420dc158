//! The explorer's view of a KIP-848 consumer group: the coordinator's members (epochs, states,
//! assigned, pending revocation, target) joined with what each simulated consumer consumes.

use crate::assignor::consumer::TopicId;
use crate::coordinator::TimerKey;

use super::api::*;
use super::engine::Simulation;

impl Simulation {
    /// The snapshot of a consumer group.
    pub(super) fn consumer_snapshot(&self) -> SimSnapshot {
        let group_id = self.spec().group_id.clone();
        let g = self.coordinator().consumer_group(&group_id);
        let names: Vec<(TopicId, &String)> = self
            .topics()
            .keys()
            .map(|t| (TopicId::from_name(t), t))
            .collect();
        let name = |id: &TopicId| {
            names
                .iter()
                .find(|(i, _)| i == id)
                .map_or_else(|| id.to_string(), |(_, n)| n.to_string())
        };
        let strings = |it: &mut dyn Iterator<Item = (&TopicId, i32)>| -> Vec<String> {
            let mut v: Vec<String> = it.map(|(t, p)| format!("{}-{p}", name(t))).collect();
            v.sort();
            v
        };
        let now = self.now();
        let mut members: Vec<MemberView> = Vec::new();
        let mut view = |id: &str, c: Option<&super::consumer_client::Kip848Consumer>| {
            let m = g.and_then(|g| g.members.get(id));
            let target = g.and_then(|g| g.target_assignment.get(id));
            members.push(MemberView {
                member_id: id.to_string(),
                process_id: c.map(|c| c.process_id.clone()).unwrap_or_default(),
                instance_id: m
                    .and_then(|m| m.instance_id.clone())
                    .or_else(|| c.and_then(|c| c.instance_id.clone())),
                rack: None,
                client_status: c.map_or("unknown", |c| c.status_name()).to_string(),
                state: m.map(|m| m.state.name().to_string()),
                member_epoch: m.map(|m| m.member_epoch),
                previous_member_epoch: m.map(|m| m.previous_member_epoch),
                active: m.map_or_else(Vec::new, |m| {
                    strings(
                        &mut m
                            .assigned
                            .iter()
                            .flat_map(|(t, ps)| ps.keys().map(move |p| (t, *p))),
                    )
                }),
                standby: Vec::new(),
                warmup: Vec::new(),
                pending_revocation: m.map_or_else(Vec::new, |m| {
                    strings(
                        &mut m
                            .pending_revocation
                            .iter()
                            .flat_map(|(t, ps)| ps.keys().map(move |p| (t, *p))),
                    )
                }),
                target_active: target.map_or_else(Vec::new, |t| {
                    strings(&mut t.iter().flat_map(|(t, ps)| ps.iter().map(move |p| (t, *p))))
                }),
                target_standby: Vec::new(),
                target_warmup: Vec::new(),
                owned_active: c.map_or_else(Vec::new, |c| {
                    let mut v: Vec<String> =
                        c.owned.iter().map(|(t, p)| format!("{t}-{p}")).collect();
                    v.sort();
                    v
                }),
                owned_standby: Vec::new(),
                owned_warmup: Vec::new(),
                // The coordinator's session timer of the member (the card's countdown arc).
                session_deadline_ms: m.and_then(|_| {
                    self.timers()
                        .get(&TimerKey::SessionTimeout {
                            group_id: group_id.clone(),
                            member_id: id.to_string(),
                        })
                        .map(|d| d.0)
                }),
                session_timeout_ms: self.config().consumer.session_timeout_ms as i64,
                rebalance_deadline_ms: None,
                next_heartbeat_ms: c.and_then(|c| c.next_hb_ms),
                classic: None,
            });
        };
        for c in self.kip848_consumers() {
            if c.is_alive() || g.is_some_and(|g| g.members.contains_key(&c.name)) {
                view(&c.name, Some(c));
            }
        }
        if let Some(g) = g {
            for id in g.members.keys() {
                if !self.kip848_consumers().any(|c| c.name == *id) {
                    view(id, None);
                }
            }
        }
        let group = GroupView {
            group_id: group_id.clone(),
            state: g.map_or("Dead", |g| g.state().name()).to_string(),
            group_epoch: g.map_or(0, |g| g.group_epoch),
            assignment_epoch: g.map_or(0, |g| g.assignment_epoch),
            topology_epoch: None,
            validated_topology_epoch: -1,
            assignor: self
                .config()
                .consumer
                .assignors
                .first()
                .cloned()
                .unwrap_or_default(),
            num_standby_replicas: 0,
            tasks: Vec::new(),
            stateful_subtopologies: Vec::new(),
            members,
            statuses: Vec::new(),
            initial_rebalance_deadline_ms: None,
            group_type: GroupType::Consumer,
            classic: None,
        };
        SimSnapshot {
            now_ms: now,
            group,
            topics: self.topics().clone(),
            state_hash: self.state_hash(),
            steps: self.steps(),
        }
    }
}
