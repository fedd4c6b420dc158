//! Each classic group's rebalance phases for the live view: the transitions of its state
//! (PreparingRebalance: the join phase, CompletingRebalance: the sync phase, Stable, Empty) with
//! the server time each happened, served with the group's history (`/api/history`, `phases`).
//!
//! A sync phase often lasts under a millisecond (the leader's SyncGroup follows its JoinGroup
//! answer at once), too short for a page polling the group's state to see: the owner notes the
//! group's state after every JoinGroup, SyncGroup and LeaveGroup it handles and every classic
//! timer it fires ([`observe`]), the only operations that move a classic group's state. Two
//! transitions in one operation (a lone member rejoining: Stable → PreparingRebalance →
//! CompletingRebalance) are both recorded: the group remembers its previous state and when it
//! last changed.
//!
//! Recorded whether or not anyone watches, so a page opened later shows the past rebalances:
//! classic heartbeats (the hot path) and every other group type cost nothing; a JoinGroup,
//! SyncGroup or LeaveGroup costs a group lookup, an uncontended lock and a table lookup: 0.3-0.6
//! µs more per request when every one records a transition (`cargo bench --bench
//! classic_phases`, 2026-12-02 on a shared 2-core machine: 1.15-1.25x the pure core's
//! 1.5-3 µs JoinGroup or SyncGroup of a lone-member group, I/O and the log not counted). Bounded:
//! [`PER_GROUP`] transitions per group (the oldest go first), [`MAX_GROUPS`] groups (the one
//! whose state changed least recently is forgotten).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::coordinator::Coordinator;
use crate::coordinator::classic::group::{ClassicGroup, ClassicState};
use crate::server::wire::{Req, RequestKind};

/// Transitions kept per group (a rebalance is two or three).
pub const PER_GROUP: usize = 64;
/// Groups with phases at most (with [`PER_GROUP`]: at most 262,144 transitions of 24 bytes, 6 MiB).
pub const MAX_GROUPS: usize = 4096;
/// Longer group ids are not tracked (`/api/history` refuses them): ids cost at most 2 MiB.
pub const MAX_GROUP_ID_LEN: usize = 249;

/// A classic group entered `state` at `at_ms` (server time, ms since the UNIX epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Phase {
    /// When (server time, ms since the UNIX epoch).
    pub at_ms: i64,
    /// The state's name, as DescribeGroups gives it.
    pub state: &'static str,
}

/// What the owner reads of a classic group after an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The state now.
    pub state: ClassicState,
    /// The state before the last transition.
    pub previous: ClassicState,
    /// When the last transition happened.
    pub since_ms: i64,
    /// The generation now.
    pub generation: i32,
}

impl Seen {
    /// `g` as the owner sees it at `now_ms` (a group replayed from the log carries no time of
    /// its last transition: it is taken as now).
    pub fn of(g: &ClassicGroup, now_ms: i64) -> Seen {
        Seen {
            state: g.state,
            previous: g.previous_state,
            since_ms: g.state_timestamp.filter(|t| *t > 0).unwrap_or(now_ms),
            generation: g.generation,
        }
    }
}

#[derive(Debug)]
struct GroupPhases {
    ring: VecDeque<Phase>,
    last: Seen,
    /// Its key in [`Phases::lru`].
    touched: u64,
}

/// The recent transitions of every classic group.
#[derive(Debug, Default)]
pub struct Phases {
    groups: BTreeMap<Arc<str>, GroupPhases>,
    /// Groups by when a transition was last recorded, least recent first (the ids shared with
    /// `groups`: recording a transition allocates no string).
    lru: BTreeMap<u64, Arc<str>>,
    seq: u64,
}

impl Phases {
    /// Note how `group_id` looks after an operation; returns whether a transition was recorded.
    pub(crate) fn saw(&mut self, group_id: &str, seen: Seen) -> bool {
        if group_id.len() > MAX_GROUP_ID_LEN {
            return false;
        }
        self.seq += 1;
        let seq = self.seq;
        let name = |s: ClassicState| s.name();
        if let Some(g) = self.groups.get_mut(group_id) {
            let last = g.last;
            g.last = seen;
            if (last.state, last.since_ms, last.generation)
                == (seen.state, seen.since_ms, seen.generation)
            {
                return false;
            }
            // The group moved since the last look. If it did not come from the state recorded
            // last, it went through its previous state in between (in the same operation).
            let back = g.ring.back().map(|p| p.state);
            if back != Some(name(seen.previous)) && seen.previous != ClassicState::Dead {
                push(&mut g.ring, seen.since_ms, name(seen.previous));
            }
            push(&mut g.ring, seen.since_ms, name(seen.state));
            if let Some(id) = self.lru.remove(&g.touched) {
                self.lru.insert(seq, id);
            }
            g.touched = seq;
            return true;
        }
        if self.groups.len() >= MAX_GROUPS
            && let Some((_, oldest)) = self.lru.pop_first()
        {
            self.groups.remove(&*oldest);
        }
        // First seen: its state since its last transition (earlier ones are unknown).
        let mut ring = VecDeque::with_capacity(8);
        push(&mut ring, seen.since_ms, name(seen.state));
        let id: Arc<str> = Arc::from(group_id);
        self.groups.insert(
            id.clone(),
            GroupPhases {
                ring,
                last: seen,
                touched: seq,
            },
        );
        self.lru.insert(seq, id);
        true
    }

    /// The recorded transitions of `group_id`, oldest first.
    pub fn of(&self, group_id: &str) -> Vec<Phase> {
        self.groups
            .get(group_id)
            .map(|g| g.ring.iter().copied().collect())
            .unwrap_or_default()
    }
}

fn push(ring: &mut VecDeque<Phase>, at_ms: i64, state: &'static str) {
    if ring.len() >= PER_GROUP {
        ring.pop_front();
    }
    ring.push_back(Phase { at_ms, state });
}

/// The classic group a request may move to another state (JoinGroup, SyncGroup, LeaveGroup);
/// `None` for every other request, heartbeats included (a Heartbeat never changes the state).
pub fn rebalance_group(req: &Req) -> Option<&str> {
    Some(match req {
        Req::Kafka(RequestKind::JoinGroup(r)) => &r.group_id.0,
        Req::Kafka(RequestKind::SyncGroup(r)) => &r.group_id.0,
        Req::Kafka(RequestKind::LeaveGroup(r)) => &r.group_id.0,
        _ => return None,
    })
}

/// After an operation at `now_ms` that may have moved `group_id`: note its state when it is a
/// classic group. Returns whether a transition was recorded.
pub fn observe(phases: &Mutex<Phases>, coord: &Coordinator, group_id: &str, now_ms: i64) -> bool {
    let Some(g) = coord.classic_group(group_id) else {
        return false;
    };
    let seen = Seen::of(g, now_ms);
    let mut p = phases.lock().unwrap_or_else(|e| e.into_inner());
    p.saw(group_id, seen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ClassicState::*;

    fn seen(state: ClassicState, previous: ClassicState, since_ms: i64, generation: i32) -> Seen {
        Seen {
            state,
            previous,
            since_ms,
            generation,
        }
    }

    fn states(p: &Phases, g: &str) -> Vec<(i64, &'static str)> {
        p.of(g).iter().map(|p| (p.at_ms, p.state)).collect()
    }

    #[test]
    fn two_transitions_in_one_operation_are_both_recorded() {
        let mut p = Phases::default();
        assert!(p.saw("g", seen(Stable, CompletingRebalance, 10, 1)));
        assert!(
            !p.saw("g", seen(Stable, CompletingRebalance, 10, 1)),
            "no change"
        );
        // A lone member rejoins: the join phase ends in the same JoinGroup.
        assert!(p.saw("g", seen(CompletingRebalance, PreparingRebalance, 20, 2)));
        // The group rebalances again in one operation: same state, new generation.
        assert!(p.saw("g", seen(CompletingRebalance, PreparingRebalance, 20, 3)));
        assert_eq!(
            states(&p, "g"),
            [
                (10, "Stable"),
                (20, "PreparingRebalance"),
                (20, "CompletingRebalance"),
                (20, "PreparingRebalance"),
                (20, "CompletingRebalance"),
            ]
        );
    }

    #[test]
    fn only_joingroup_syncgroup_and_leavegroup_are_looked_at_never_a_heartbeat() {
        use crate::protocol::StreamsGroupHeartbeatRequest;
        use kafka_protocol::messages::{
            ConsumerGroupHeartbeatRequest, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
            OffsetCommitRequest, SyncGroupRequest,
        };
        use kafka_protocol::protocol::StrBytes;
        let g = || StrBytes::from_static_str("g").into();
        let looked = [
            Req::Kafka(RequestKind::JoinGroup(
                JoinGroupRequest::default().with_group_id(g()),
            )),
            Req::Kafka(RequestKind::SyncGroup(
                SyncGroupRequest::default().with_group_id(g()),
            )),
            Req::Kafka(RequestKind::LeaveGroup(
                LeaveGroupRequest::default().with_group_id(g()),
            )),
        ];
        for r in &looked {
            assert_eq!(rebalance_group(r), Some("g"), "{r:?}");
        }
        let not = [
            Req::Kafka(RequestKind::Heartbeat(
                HeartbeatRequest::default().with_group_id(g()),
            )),
            Req::Kafka(RequestKind::ConsumerGroupHeartbeat(
                ConsumerGroupHeartbeatRequest::default().with_group_id(g()),
            )),
            Req::Heartbeat(StreamsGroupHeartbeatRequest {
                group_id: "g".into(),
                ..Default::default()
            }),
            Req::Kafka(RequestKind::OffsetCommit(
                OffsetCommitRequest::default().with_group_id(g()),
            )),
        ];
        for r in &not {
            assert_eq!(rebalance_group(r), None, "{r:?}");
        }
    }

    #[test]
    fn phases_are_bounded_per_group_and_in_groups() {
        let mut p = Phases::default();
        let cycle = [PreparingRebalance, CompletingRebalance, Stable];
        for i in 0..10 * PER_GROUP {
            let (state, previous) = (cycle[i % 3], cycle[(i + 2) % 3]);
            p.saw("g", seen(state, previous, i as i64, i as i32));
        }
        let g = p.of("g");
        assert_eq!(g.len(), PER_GROUP);
        assert_eq!(
            g.last().unwrap().at_ms,
            (10 * PER_GROUP - 1) as i64,
            "the newest kept"
        );
        assert!(
            g.windows(2).all(|w| w[0].at_ms < w[1].at_ms),
            "oldest first"
        );
        for i in 0..MAX_GROUPS + 10 {
            p.saw(&format!("g{i}"), seen(Stable, CompletingRebalance, 1, 1));
        }
        assert_eq!(p.groups.len(), MAX_GROUPS);
        assert_eq!(p.lru.len(), MAX_GROUPS);
        assert!(
            p.of("g").is_empty(),
            "the group that changed least recently went"
        );
        assert!(p.of("g0").is_empty());
        assert_eq!(p.of(&format!("g{}", MAX_GROUPS + 9)).len(), 1);
        // A change keeps a group: g10 moves, then 10 new groups come; g10 stays.
        p.saw("g10", seen(PreparingRebalance, Stable, 2, 1));
        for i in 0..10 {
            p.saw(&format!("h{i}"), seen(Stable, CompletingRebalance, 1, 1));
        }
        assert_eq!(p.of("g10").len(), 2);
        assert!(p.of("g11").is_empty());
        assert_eq!(p.groups.len(), MAX_GROUPS);
        // A longer id than /api/history serves is not kept.
        let long = "x".repeat(MAX_GROUP_ID_LEN + 1);
        assert!(!p.saw(&long, seen(Stable, CompletingRebalance, 1, 1)));
        assert!(p.of(&long).is_empty());
    }
}
