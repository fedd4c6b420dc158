//! The explorer's view of a KIP-848 consumer group: the coordinator's members (epochs, states,
//! assigned, pending revocation, target) joined with what each simulated consumer consumes.
//! The coordinator's half ([`consumer_group_view`]) is also what `groupcoord serve`'s live view
//! shows for a real consumer group.

use crate::assignor::consumer::TopicId;
use crate::coordinator::consumer::ConsumerGroup;
use crate::coordinator::{Coordinator, TimerKey};

use super::api::*;
use super::engine::Simulation;

/// `topic-partition` strings, sorted, with topic ids named by the coordinator's topics.
struct PartitionNames(Vec<(TopicId, String)>);

impl PartitionNames {
    fn of(coord: &Coordinator) -> PartitionNames {
        let names = coord.metadata().topics.keys();
        PartitionNames(names.map(|t| (coord.topic_id(t), t.clone())).collect())
    }

    fn strings<'a>(&self, it: impl Iterator<Item = (&'a TopicId, i32)>) -> Vec<String> {
        let name = |id: &TopicId| {
            self.0
                .iter()
                .find(|(i, _)| i == id)
                .map_or_else(|| id.to_string(), |(_, n)| n.clone())
        };
        let mut v: Vec<String> = it.map(|(t, p)| format!("{}-{p}", name(t))).collect();
        v.sort();
        v
    }
}

/// The coordinator's side of one member (`None` fields where it does not know the member).
fn member_view(
    coord: &Coordinator,
    names: &PartitionNames,
    g: Option<&ConsumerGroup>,
    id: &str,
) -> MemberView {
    let m = g.and_then(|g| g.members.get(id));
    let target = g.and_then(|g| g.target_assignment.get(id));
    let group_id = g.map_or_else(String::new, |g| g.group_id.clone());
    MemberView {
        member_id: id.to_string(),
        process_id: String::new(),
        instance_id: m.and_then(|m| m.instance_id.clone()),
        rack: m.and_then(|m| m.rack_id.clone()),
        client_status: "unknown".to_string(),
        state: m.map(|m| m.state.name().to_string()),
        member_epoch: m.map(|m| m.member_epoch),
        previous_member_epoch: m.map(|m| m.previous_member_epoch),
        active: m.map_or_else(Vec::new, |m| {
            names.strings(
                m.assigned
                    .iter()
                    .flat_map(|(t, ps)| ps.keys().map(move |p| (t, *p))),
            )
        }),
        standby: Vec::new(),
        warmup: Vec::new(),
        pending_revocation: m.map_or_else(Vec::new, |m| {
            names.strings(
                m.pending_revocation
                    .iter()
                    .flat_map(|(t, ps)| ps.keys().map(move |p| (t, *p))),
            )
        }),
        target_active: target.map_or_else(Vec::new, |t| {
            names.strings(t.iter().flat_map(|(t, ps)| ps.iter().map(move |p| (t, *p))))
        }),
        target_standby: Vec::new(),
        target_warmup: Vec::new(),
        owned_active: Vec::new(),
        owned_standby: Vec::new(),
        owned_warmup: Vec::new(),
        // The coordinator's session timer of the member (the card's countdown arc).
        session_deadline_ms: m.and_then(|_| {
            coord
                .timer_deadline(&TimerKey::SessionTimeout {
                    group_id,
                    member_id: id.to_string(),
                })
                .map(|d| d.0)
        }),
        session_timeout_ms: coord.config().consumer.session_timeout_ms as i64,
        rebalance_deadline_ms: None,
        next_heartbeat_ms: None,
        classic: None,
    }
}

/// The group-level fields of a consumer group's view, around `members`.
fn group_view(
    coord: &Coordinator,
    group_id: &str,
    g: Option<&ConsumerGroup>,
    members: Vec<MemberView>,
) -> GroupView {
    GroupView {
        group_id: group_id.to_string(),
        state: g.map_or("Dead", |g| g.state().name()).to_string(),
        group_epoch: g.map_or(0, |g| g.group_epoch),
        assignment_epoch: g.map_or(0, |g| g.assignment_epoch),
        topology_epoch: None,
        validated_topology_epoch: -1,
        assignor: coord
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
    }
}

/// A real consumer group as the explorer shows it, from the coordinator alone (the client-side
/// fields are empty and `client_status` is `unknown`), or `None` when there is no such group.
pub fn consumer_group_view(coord: &Coordinator, group_id: &str) -> Option<GroupView> {
    let g = coord.consumer_group(group_id)?;
    let names = PartitionNames::of(coord);
    let members = g
        .members
        .keys()
        .map(|id| member_view(coord, &names, Some(g), id))
        .collect();
    Some(group_view(coord, group_id, Some(g), members))
}

impl Simulation {
    /// The snapshot of a consumer group: the coordinator's view joined with the simulated
    /// consumers (their process, status and what they consume).
    pub(super) fn consumer_snapshot(&self) -> SimSnapshot {
        let group_id = self.spec().group_id.clone();
        let coord = self.coordinator();
        let g = coord.consumer_group(&group_id);
        let names = PartitionNames::of(coord);
        let mut members: Vec<MemberView> = Vec::new();
        let mut view = |id: &str, c: Option<&super::consumer_client::Kip848Consumer>| {
            let mut v = member_view(coord, &names, g, id);
            if let Some(c) = c {
                v.process_id = c.process_id.clone();
                v.instance_id = v.instance_id.or_else(|| c.instance_id.clone());
                v.client_status = c.status_name().to_string();
                let mut owned: Vec<String> =
                    c.owned.iter().map(|(t, p)| format!("{t}-{p}")).collect();
                owned.sort();
                v.owned_active = owned;
                v.next_heartbeat_ms = c.next_hb_ms;
            }
            // The simulated members have no racks (their spec's rack is for streams).
            v.rack = None;
            members.push(v);
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
        SimSnapshot {
            now_ms: self.now(),
            group: group_view(coord, &group_id, g, members),
            topics: self.topics().clone(),
            state_hash: self.state_hash(),
            steps: self.steps(),
        }
    }
}
