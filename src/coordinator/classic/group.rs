//! A classic group and its members (docs/classic-protocol.md §C1, §C2).
//!
//! Two kinds of state live here. The persistent part (generation, protocol type and name,
//! leader, members with their subscription and assignment) is what a `GroupMetadata` record
//! (type 2) carries; a restart rebuilds it by replay. The soft part (the state machine between
//! records, pending members, who is waiting for a JoinGroup or SyncGroup answer) exists only in
//! memory, as in Kafka, whose coordinator writes classic records without replaying them.

use crate::util::map::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::protocol::classic::{JoinGroupResponseMember, JoinProtocol};
use crate::records::{ClassicGroupMetadataValue, ClassicMemberMetadata};
use crate::types::Millis;

use super::RequestToken;

/// Kafka's `ClassicGroupState` (§C1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClassicState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
    Dead,
}

impl ClassicState {
    /// The name in DescribeGroups / ListGroups.
    pub fn name(self) -> &'static str {
        match self {
            ClassicState::Empty => "Empty",
            ClassicState::PreparingRebalance => "PreparingRebalance",
            ClassicState::CompletingRebalance => "CompletingRebalance",
            ClassicState::Stable => "Stable",
            ClassicState::Dead => "Dead",
        }
    }

    /// Kafka's valid previous states of each state.
    fn may_follow(self, previous: ClassicState) -> bool {
        use ClassicState::*;
        match self {
            Empty => previous == PreparingRebalance,
            PreparingRebalance => matches!(previous, Stable | CompletingRebalance | Empty),
            CompletingRebalance => previous == PreparingRebalance,
            Stable => previous == CompletingRebalance,
            Dead => true,
        }
    }
}

/// A member of a classic group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout_ms: i32,
    pub session_timeout_ms: i32,
    pub protocol_type: String,
    /// In the member's preference order; names are unique.
    pub protocols: Vec<JoinProtocol>,
    pub assignment: Vec<u8>,
    /// The JoinGroup request waiting for the end of the join phase (soft state).
    pub awaiting_join: Option<RequestToken>,
    /// The SyncGroup request waiting for the leader's assignment (soft state).
    pub awaiting_sync: Option<RequestToken>,
    /// Joined during the current rebalance; a session expiry removes it even while it waits.
    pub is_new: bool,
}

impl ClassicMember {
    pub fn is_static(&self) -> bool {
        self.group_instance_id.is_some()
    }

    /// The metadata the member sent for a protocol (empty when it does not support it).
    pub fn metadata(&self, protocol: &str) -> &[u8] {
        self.protocols
            .iter()
            .find(|p| p.name == protocol)
            .map(|p| p.metadata.as_slice())
            .unwrap_or(&[])
    }

    /// Kafka's `hasSatisfiedHeartbeat`: a member waiting on a join or sync answer is alive.
    pub fn has_satisfied_heartbeat(&self) -> bool {
        !self.is_new && (self.awaiting_join.is_some() || self.awaiting_sync.is_some())
    }

    /// The member's first protocol among `candidates`.
    fn vote<'a>(&'a self, candidates: &BTreeSet<&str>) -> Option<&'a str> {
        self.protocols
            .iter()
            .map(|p| p.name.as_str())
            .find(|n| candidates.contains(n))
    }
}

/// A classic group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicGroup {
    pub group_id: String,
    pub state: ClassicState,
    pub previous_state: ClassicState,
    pub state_timestamp: Option<i64>,
    pub generation: i32,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub leader: Option<String>,
    /// By member id: iteration order is the order of leader succession and of the leader's
    /// member list (Kafka uses a hash map; sorted keeps runs reproducible).
    pub members: BTreeMap<String, ClassicMember>,
    /// group.instance.id -> member id.
    pub static_members: BTreeMap<String, String>,
    /// Member ids handed out with MEMBER_ID_REQUIRED and not joined yet.
    pub pending_join: BTreeSet<String>,
    /// Members of the new generation that have not sent SyncGroup yet.
    pub pending_sync: BTreeSet<String>,
    /// Set when a member joins during the initial rebalance delay (extends the delay).
    pub new_member_added: bool,
    /// The initial rebalance delay in progress: (delay, remaining) as Kafka's timer carries them.
    pub initial_delay: Option<(i32, i32)>,
    /// Topics of the `consumer` subscriptions, computed at each new generation and on load
    /// (Kafka's `subscribedTopics`); `None` = unknown.
    pub subscribed_topics: Option<BTreeSet<String>>,
    /// The value of the last GroupMetadata record written for this group (what a replay
    /// rebuilds; §C7).
    pub persisted: Option<ClassicGroupMetadataValue>,
}

impl ClassicGroup {
    pub fn new(group_id: &str, now: Millis) -> ClassicGroup {
        ClassicGroup {
            group_id: group_id.to_string(),
            state: ClassicState::Empty,
            previous_state: ClassicState::Dead,
            state_timestamp: Some(now.0),
            generation: 0,
            protocol_type: None,
            protocol_name: None,
            leader: None,
            members: BTreeMap::new(),
            static_members: BTreeMap::new(),
            pending_join: BTreeSet::new(),
            pending_sync: BTreeSet::new(),
            new_member_added: false,
            initial_delay: None,
            subscribed_topics: None,
            persisted: None,
        }
    }

    /// A group as a GroupMetadata record describes it (replay, §C7): Stable with members,
    /// Empty without.
    pub fn from_record(group_id: &str, v: &ClassicGroupMetadataValue) -> ClassicGroup {
        let mut g = ClassicGroup::new(group_id, Millis(0));
        g.state = if v.members.is_empty() {
            ClassicState::Empty
        } else {
            ClassicState::Stable
        };
        g.state_timestamp = (v.current_state_timestamp != -1).then_some(v.current_state_timestamp);
        g.generation = v.generation;
        g.protocol_type = Some(v.protocol_type.clone()).filter(|t| !t.is_empty());
        g.protocol_name = v.protocol.clone();
        g.leader = v.leader.clone();
        for m in &v.members {
            let protocols = vec![JoinProtocol {
                name: v.protocol.clone().unwrap_or_default(),
                metadata: m.subscription.clone(),
            }];
            if let Some(i) = &m.group_instance_id {
                g.static_members.insert(i.clone(), m.member_id.clone());
            }
            g.members.insert(
                m.member_id.clone(),
                ClassicMember {
                    member_id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    rebalance_timeout_ms: if m.rebalance_timeout == -1 {
                        m.session_timeout
                    } else {
                        m.rebalance_timeout
                    },
                    session_timeout_ms: m.session_timeout,
                    protocol_type: v.protocol_type.clone(),
                    protocols,
                    assignment: m.assignment.clone(),
                    awaiting_join: None,
                    awaiting_sync: None,
                    is_new: false,
                },
            );
        }
        g.subscribed_topics = g.compute_subscribed_topics();
        g.persisted = Some(v.clone());
        g
    }

    /// The record value of the group with these assignments (Kafka's `newGroupMetadataRecord`).
    pub fn metadata_value(
        &self,
        assignment: &BTreeMap<String, Vec<u8>>,
    ) -> ClassicGroupMetadataValue {
        let protocol = self.protocol_name.clone();
        ClassicGroupMetadataValue {
            protocol_type: self.protocol_type.clone().unwrap_or_default(),
            generation: self.generation,
            protocol: protocol.clone(),
            leader: self.leader.clone(),
            current_state_timestamp: self.state_timestamp.unwrap_or(-1),
            members: self
                .members
                .values()
                .map(|m| ClassicMemberMetadata {
                    member_id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    rebalance_timeout: m.rebalance_timeout_ms,
                    session_timeout: m.session_timeout_ms,
                    subscription: m.metadata(protocol.as_deref().unwrap_or("")).to_vec(),
                    assignment: assignment.get(&m.member_id).cloned().unwrap_or_default(),
                })
                .collect(),
        }
    }

    /// The record Kafka writes for a group that was just created (`newEmptyGroupMetadataRecord`).
    pub fn empty_metadata_value(&self) -> ClassicGroupMetadataValue {
        ClassicGroupMetadataValue {
            protocol_type: String::new(),
            generation: 0,
            protocol: None,
            leader: None,
            current_state_timestamp: self.state_timestamp.unwrap_or(-1),
            members: Vec::new(),
        }
    }

    /// The persistent part of the live state, in record form: what a replay of the group's
    /// records must rebuild once the group has settled (Stable with every sync received, or
    /// Empty).
    /// `None` also for a group never written (one created over committed offsets: replay has
    /// nothing to rebuild, and it is equivalent to no group).
    pub fn settled_view(&self) -> Option<ClassicGroupMetadataValue> {
        self.persisted.as_ref()?;
        let settled = match self.state {
            ClassicState::Stable => self.pending_sync.is_empty(),
            ClassicState::Empty => self.pending_join.is_empty(),
            _ => false,
        };
        settled.then(|| self.metadata_value(&self.assignments()))
    }

    pub fn assignments(&self) -> BTreeMap<String, Vec<u8>> {
        self.members
            .values()
            .map(|m| (m.member_id.clone(), m.assignment.clone()))
            .collect()
    }

    pub fn is(&self, s: ClassicState) -> bool {
        self.state == s
    }

    pub fn transition(&mut self, to: ClassicState, now: Millis) {
        debug_assert!(
            to.may_follow(self.state),
            "{}: {:?} -> {:?}",
            self.group_id,
            self.state,
            to
        );
        self.previous_state = self.state;
        self.state = to;
        self.state_timestamp = Some(now.0);
    }

    pub fn can_rebalance(&self) -> bool {
        ClassicState::PreparingRebalance.may_follow(self.state)
    }

    pub fn is_leader(&self, member_id: &str) -> bool {
        self.leader.as_deref() == Some(member_id)
    }

    pub fn num_awaiting_join(&self) -> usize {
        self.members
            .values()
            .filter(|m| m.awaiting_join.is_some())
            .count()
    }

    pub fn has_all_members_joined(&self) -> bool {
        self.members.values().all(|m| m.awaiting_join.is_some()) && self.pending_join.is_empty()
    }

    /// The largest rebalance timeout of the members (the join and sync phases' bound).
    pub fn rebalance_timeout_ms(&self) -> i32 {
        self.members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// How many members support each protocol name.
    fn protocol_support(&self) -> BTreeMap<&str, usize> {
        let mut n: BTreeMap<&str, usize> = BTreeMap::new();
        for m in self.members.values() {
            for p in &m.protocols {
                *n.entry(p.name.as_str()).or_default() += 1;
            }
        }
        n
    }

    /// Kafka's `supportsProtocols`: an Empty group takes any non-empty type and protocol list;
    /// otherwise the type must match and one of the protocols must be supported by every member.
    pub fn supports_protocols(&self, protocol_type: &str, protocols: &[JoinProtocol]) -> bool {
        if self.is(ClassicState::Empty) {
            return !protocol_type.is_empty() && !protocols.is_empty();
        }
        if self.protocol_type.as_deref() != Some(protocol_type) {
            return false;
        }
        let support = self.protocol_support();
        protocols
            .iter()
            .any(|p| support.get(p.name.as_str()).copied().unwrap_or(0) == self.members.len())
    }

    /// The protocol with the most votes among those every member supports; each member votes
    /// for its first supported candidate. Ties go to the smallest name (Kafka's tie-break is a
    /// hash-map order).
    pub fn select_protocol(&self) -> Option<String> {
        let support = self.protocol_support();
        let candidates: BTreeSet<&str> = crate::util::sort::collect_set(
            support
                .iter()
                .filter(|(_, n)| **n == self.members.len())
                .map(|(p, _)| *p),
        );
        let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
        for m in self.members.values() {
            if let Some(p) = m.vote(&candidates) {
                *votes.entry(p).or_default() += 1;
            }
        }
        let mut best: Option<(&str, usize)> = None;
        for (p, n) in votes {
            if best.is_none_or(|(_, b)| n > b) {
                best = Some((p, n));
            }
        }
        best.map(|(p, _)| p.to_string())
    }

    /// Add a member (Kafka's `ClassicGroup.add`): the first member sets the protocol type and
    /// becomes the leader when there is none.
    pub fn add(&mut self, member: ClassicMember) {
        if let Some(i) = &member.group_instance_id {
            self.static_members
                .insert(i.clone(), member.member_id.clone());
        }
        if self.members.is_empty() {
            self.protocol_type = Some(member.protocol_type.clone());
        }
        if self.leader.is_none() {
            self.leader = Some(member.member_id.clone());
        }
        self.pending_join.remove(&member.member_id);
        self.members.insert(member.member_id.clone(), member);
    }

    /// Remove a member; a removed leader is succeeded by the first remaining member.
    pub fn remove(&mut self, member_id: &str) -> Option<ClassicMember> {
        let removed = self.members.remove(member_id);
        if let Some(m) = &removed
            && let Some(i) = &m.group_instance_id
        {
            self.static_members.remove(i);
        }
        if self.is_leader(member_id) {
            self.leader = self.members.keys().next().cloned();
        }
        self.pending_join.remove(member_id);
        self.pending_sync.remove(member_id);
        removed
    }

    /// Kafka's `maybeElectNewJoinedLeader`: keep a leader that rejoined, else promote the first
    /// member that did. False when nobody rejoined (or there is no leader).
    pub fn elect_joined_leader(&mut self) -> bool {
        let Some(leader) = self.leader.clone() else {
            return false;
        };
        if self
            .members
            .get(&leader)
            .is_some_and(|m| m.awaiting_join.is_some())
        {
            return true;
        }
        match self
            .members
            .values()
            .find(|m| m.awaiting_join.is_some())
            .map(|m| m.member_id.clone())
        {
            Some(id) => {
                self.leader = Some(id);
                true
            }
            None => false,
        }
    }

    /// Next generation: CompletingRebalance with the selected protocol, or Empty.
    pub fn init_next_generation(&mut self, now: Millis) {
        self.generation += 1;
        if self.members.is_empty() {
            self.protocol_name = None;
            self.transition(ClassicState::Empty, now);
        } else {
            self.protocol_name = self.select_protocol();
            self.transition(ClassicState::CompletingRebalance, now);
        }
        self.subscribed_topics = self.compute_subscribed_topics();
        self.pending_sync.clear();
    }

    /// The leader's member list (JoinGroup response).
    pub fn member_list(&self) -> Vec<JoinGroupResponseMember> {
        let protocol = self.protocol_name.as_deref().unwrap_or("");
        self.members
            .values()
            .map(|m| JoinGroupResponseMember {
                member_id: m.member_id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                metadata: m.metadata(protocol).to_vec(),
            })
            .collect()
    }

    /// Topics the members subscribe to, when the group uses the `consumer` protocol and every
    /// subscription parses (Kafka's `computeSubscribedTopics`); `None` = unknown.
    pub fn compute_subscribed_topics(&self) -> Option<BTreeSet<String>> {
        if self.protocol_type.as_deref() != Some("consumer") {
            return None;
        }
        if self.members.is_empty() {
            return Some(BTreeSet::new());
        }
        let protocol = self.protocol_name.as_deref()?;
        let mut topics = BTreeSet::new();
        for m in self.members.values() {
            topics.extend(super::subscription::topics(m.metadata(protocol))?);
        }
        Some(topics)
    }

    /// Kafka's `isSubscribedToTopic` (OffsetDelete): unknown subscriptions count as subscribed
    /// for a `consumer` group.
    pub fn is_subscribed_to(&self, topic: &str) -> bool {
        match &self.subscribed_topics {
            Some(t) => t.contains(topic),
            None => self.protocol_type.as_deref() == Some("consumer"),
        }
    }
}
