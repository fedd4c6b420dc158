//! A KIP-848 consumer group and its members (docs/consumer-protocol.md §K2): persistent state
//! rebuilt from records 3-8 and 16, and the derived indexes (who owns which partition, member
//! map order).

use crate::util::map::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::assignor::consumer::{SubscriptionType, TopicId};
use crate::assignor::java_compat::{TimelineHashMapOrder, string_hash};
use crate::coordinator::group::GroupState;
use crate::records::{
    ConsumerClassicMemberMetadata, ConsumerCurrentAssignmentValue, ConsumerMemberMetadataValue,
    ConsumerMemberState, ConsumerRegexValue, PartitionEpochs,
};

/// Target partitions of one member, in the order Kafka's assignor output lists them (the
/// order record 7 is written in).
pub type TargetPartitions = Vec<(TopicId, Vec<i32>)>;

/// A member of a consumer group (Kafka's `ConsumerGroupMember`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsumerMember {
    pub member_id: String,
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: ConsumerMemberState,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub client_id: String,
    pub client_host: String,
    pub subscribed_topic_names: BTreeSet<String>,
    /// `""` when the member subscribes by names only.
    pub subscribed_topic_regex: String,
    pub server_assignor: Option<String>,
    /// Set for members that joined through JoinGroup (online migration, docs/consumer-protocol.md §K11).
    pub classic_member_metadata: Option<ConsumerClassicMemberMetadata>,
    pub assigned: PartitionEpochs,
    pub pending_revocation: PartitionEpochs,
}

impl ConsumerMember {
    /// A new member with Kafka's defaults (epoch 0, previous epoch -1, STABLE).
    pub fn new(member_id: &str) -> ConsumerMember {
        ConsumerMember {
            member_id: member_id.to_string(),
            member_epoch: 0,
            previous_member_epoch: -1,
            state: ConsumerMemberState::Stable,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: -1,
            client_id: String::new(),
            client_host: String::new(),
            subscribed_topic_names: BTreeSet::new(),
            subscribed_topic_regex: String::new(),
            server_assignor: None,
            classic_member_metadata: None,
            assigned: PartitionEpochs::new(),
            pending_revocation: PartitionEpochs::new(),
        }
    }

    /// Record 5's value (topic names sorted, as Kafka writes them).
    pub fn metadata_value(&self) -> ConsumerMemberMetadataValue {
        ConsumerMemberMetadataValue {
            instance_id: self.instance_id.clone(),
            rack_id: self.rack_id.clone(),
            client_id: self.client_id.clone(),
            client_host: self.client_host.clone(),
            subscribed_topic_names: self.subscribed_topic_names.iter().cloned().collect(),
            subscribed_topic_regex: Some(self.subscribed_topic_regex.clone()),
            rebalance_timeout_ms: self.rebalance_timeout_ms,
            server_assignor: self.server_assignor.clone(),
            classic_member_metadata: self.classic_member_metadata.clone(),
        }
    }

    /// Record 8's value.
    pub fn assignment_value(&self) -> ConsumerCurrentAssignmentValue {
        ConsumerCurrentAssignmentValue {
            member_epoch: self.member_epoch,
            previous_member_epoch: self.previous_member_epoch,
            state: self.state,
            assigned: self.assigned.clone(),
            pending_revocation: self.pending_revocation.clone(),
        }
    }

    pub(crate) fn apply_metadata(&mut self, v: &ConsumerMemberMetadataValue) {
        self.instance_id = v.instance_id.clone();
        self.rack_id = v.rack_id.clone();
        self.client_id = v.client_id.clone();
        self.client_host = v.client_host.clone();
        self.subscribed_topic_names = v.subscribed_topic_names.iter().cloned().collect();
        self.subscribed_topic_regex = v.subscribed_topic_regex.clone().unwrap_or_default();
        self.rebalance_timeout_ms = v.rebalance_timeout_ms;
        self.server_assignor = v.server_assignor.clone();
        self.classic_member_metadata = v.classic_member_metadata.clone();
    }

    pub(crate) fn apply_assignment(&mut self, v: &ConsumerCurrentAssignmentValue) {
        self.member_epoch = v.member_epoch;
        self.previous_member_epoch = v.previous_member_epoch;
        self.state = v.state;
        self.assigned = v.assigned.clone();
        self.pending_revocation = v.pending_revocation.clone();
    }

    /// Same metadata (what record 5 carries).
    pub fn same_metadata(&self, o: &ConsumerMember) -> bool {
        self.metadata_value() == o.metadata_value()
    }

    /// Same assignment state (what record 8 carries).
    pub fn same_assignment(&self, o: &ConsumerMember) -> bool {
        self.member_epoch == o.member_epoch
            && self.previous_member_epoch == o.previous_member_epoch
            && self.state == o.state
            && self.assigned == o.assigned
            && self.pending_revocation == o.pending_revocation
    }

    /// `isReconciledTo` (docs/consumer-protocol.md §K4).
    pub fn is_reconciled_to(&self, assignment_epoch: i32) -> bool {
        self.state == ConsumerMemberState::Stable && self.member_epoch == assignment_epoch
    }

    /// Whether the member joined through the classic protocol (JoinGroup).
    pub fn uses_classic_protocol(&self) -> bool {
        self.classic_member_metadata.is_some()
    }
}

/// A consumer group (Kafka's `ConsumerGroup`).
#[derive(Debug, Clone)]
pub struct ConsumerGroup {
    pub group_id: String,
    // --- persistent (records) ---
    pub group_epoch: i32,
    pub metadata_hash: i64,
    pub members: BTreeMap<String, ConsumerMember>,
    /// instance id -> member id.
    pub static_members: BTreeMap<String, String>,
    pub assignment_epoch: i32,
    pub assignment_timestamp: i64,
    pub target_assignment: BTreeMap<String, TargetPartitions>,
    /// Resolved regular expressions (record 16), by expression.
    pub resolved_regexes: BTreeMap<String, ConsumerRegexValue>,
    /// Whether a record 4 (3.x subscription metadata) was read: the next epoch bump writes its
    /// tombstone, as Kafka does.
    pub has_partition_metadata_record: bool,
    // --- soft ---
    /// (deadline, group epoch at which it was set); (0, 0) = expired.
    pub metadata_refresh_deadline: (crate::types::Millis, i32),
    // --- derived ---
    /// Which member holds each partition (assigned or pending revocation).
    pub owners: BTreeMap<(TopicId, i32), String>,
    /// The iteration order of Kafka's member map (see `StreamsGroup::member_order`).
    pub member_order: TimelineHashMapOrder<String>,
    /// How many members ask for each server assignor (Kafka's `serverAssignors`), and that
    /// map's iteration order, which breaks ties of the preferred assignor.
    pub(crate) assignor_counts: BTreeMap<String, i32>,
    pub(crate) assignor_order: TimelineHashMapOrder<String>,
    /// Kafka's stored `subscriptionType`: computed when a member is put or removed, not when an
    /// expression is resolved or deleted (see [`Self::subscription_type_with`]).
    pub(crate) stored_subscription_type: SubscriptionType,
    /// Running counts over the members, kept by [`Self::put_member`] and
    /// [`Self::remove_member`] as Kafka keeps its `subscribedTopicNames` (by name) and
    /// `subscribedRegularExpressions`: so a member record costs its own topics, not every
    /// member's. A name or expression no member uses is not kept.
    pub(crate) subscription_counts: SubscriptionCounts,
}

/// Members naming each topic, and members per regular expression.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SubscriptionCounts {
    pub(crate) by_name: BTreeMap<String, usize>,
    pub(crate) by_regex: BTreeMap<String, usize>,
}

impl SubscriptionCounts {
    fn count(&mut self, m: &ConsumerMember, up: bool) {
        fn step(map: &mut BTreeMap<String, usize>, key: &str, up: bool) {
            match map.get_mut(key) {
                Some(c) if up => *c += 1,
                Some(c) if *c > 1 => *c -= 1,
                Some(_) => {
                    map.remove(key);
                }
                None if up => {
                    map.insert(key.to_string(), 1);
                }
                None => {}
            }
        }
        for t in &m.subscribed_topic_names {
            step(&mut self.by_name, t, up);
        }
        if !m.subscribed_topic_regex.is_empty() {
            step(&mut self.by_regex, &m.subscribed_topic_regex, up);
        }
    }

    /// The counts of `members`, from scratch.
    #[cfg(test)]
    pub(crate) fn of<'a>(members: impl IntoIterator<Item = &'a ConsumerMember>) -> Self {
        let mut counts = SubscriptionCounts::default();
        members.into_iter().for_each(|m| counts.count(m, true));
        counts
    }
}

impl ConsumerGroup {
    /// A new group as Kafka 4.4 starts it (`ModernGroup`): group epoch 1, assignment epoch 1, so
    /// the first join bumps to 2 (docs/consumer-protocol.md §K2.1).
    pub fn new(group_id: &str) -> ConsumerGroup {
        ConsumerGroup {
            group_id: group_id.to_string(),
            group_epoch: 1,
            metadata_hash: 0,
            members: BTreeMap::new(),
            static_members: BTreeMap::new(),
            assignment_epoch: 1,
            assignment_timestamp: 0,
            target_assignment: BTreeMap::new(),
            resolved_regexes: BTreeMap::new(),
            has_partition_metadata_record: false,
            metadata_refresh_deadline: (crate::types::Millis(0), 0),
            owners: BTreeMap::new(),
            member_order: TimelineHashMapOrder::with_expected_size(0),
            assignor_counts: BTreeMap::new(),
            assignor_order: TimelineHashMapOrder::with_expected_size(0),
            stored_subscription_type: SubscriptionType::Homogeneous,
            subscription_counts: SubscriptionCounts::default(),
        }
    }

    /// `compute(name, incValue / decValue)` on the assignor counts (a count reaching 0 removes
    /// the name).
    fn count_assignor(&mut self, name: Option<&String>, up: bool) {
        let Some(name) = name else { return };
        let count = self.assignor_counts.get(name).copied().unwrap_or(0);
        if !up && count <= 1 {
            self.assignor_counts.remove(name);
            self.assignor_order.remove(name);
            return;
        }
        self.assignor_counts
            .insert(name.clone(), if up { count + 1 } else { count - 1 });
        self.assignor_order.put(string_hash(name), name.clone());
    }

    /// Kafka's `preferredServerAssignor()`: the name most members ask for, ties to the first
    /// in the count map's order.
    pub fn preferred_assignor(&self) -> Option<String> {
        let mut best: Option<(String, i32)> = None;
        for name in self.assignor_order.iteration_order() {
            let c = self.assignor_counts.get(&name).copied().unwrap_or(0);
            if best.as_ref().is_none_or(|(_, b)| c > *b) {
                best = Some((name, c));
            }
        }
        best.map(|(n, _)| n)
    }

    /// Kafka's `computePreferredServerAssignor(old, new)`: the counts copied into a
    /// `java.util.HashMap`, `old`'s name decremented and `new`'s incremented with `compute`
    /// (which puts a new key at the head of its bucket), then the first maximum in that map's
    /// order.
    pub fn compute_preferred_assignor(
        &self,
        old: Option<&ConsumerMember>,
        new: Option<&ConsumerMember>,
    ) -> Option<String> {
        // (key, count, position in its bucket): tail inserts count up, head inserts down.
        let mut map: Vec<(String, i32, i64)> = Vec::new();
        let n = self.assignor_counts.len();
        let mut threshold: usize = if n == 0 {
            0
        } else {
            ((n as f32 / 0.75 + 1.0) as usize).next_power_of_two()
        };
        let mut capacity: usize = 0;
        let mut head: i64 = 0;
        let resize = |capacity: &mut usize, threshold: &mut usize| {
            if *capacity == 0 {
                *capacity = if *threshold == 0 { 16 } else { *threshold };
            } else {
                *capacity *= 2;
            }
            *threshold = *capacity * 3 / 4;
        };
        for (tail, name) in (0_i64..).zip(self.assignor_order.iteration_order()) {
            if capacity == 0 {
                resize(&mut capacity, &mut threshold);
            }
            let c = self.assignor_counts.get(&name).copied().unwrap_or(0);
            map.push((name, c, tail));
            if map.len() > threshold {
                resize(&mut capacity, &mut threshold);
            }
        }
        let mut compute = |name: &String, up: bool| {
            if map.len() > threshold || capacity == 0 {
                resize(&mut capacity, &mut threshold);
            }
            match map.iter().position(|e| &e.0 == name) {
                Some(i) if !up && map[i].1 <= 1 => {
                    map.remove(i);
                }
                Some(i) => map[i].1 += if up { 1 } else { -1 },
                None if up => {
                    head -= 1;
                    map.push((name.clone(), 1, head));
                }
                None => {}
            }
        };
        if let Some(name) = old.and_then(|m| m.server_assignor.as_ref()) {
            compute(name, false);
        }
        if let Some(name) = new.and_then(|m| m.server_assignor.as_ref()) {
            compute(name, true);
        }
        let mask = capacity.max(1) as u32 - 1;
        let bucket = |k: &str| {
            let h = string_hash(k) as u32;
            (h ^ (h >> 16)) & mask
        };
        crate::util::sort::unstable_by_key(&mut map, |e| (bucket(&e.0), e.2));
        let mut best: Option<(&String, i32)> = None;
        for (name, c, _) in &map {
            if best.is_none_or(|(_, b)| *c > b) {
                best = Some((name, *c));
            }
        }
        best.map(|(n, _)| n.clone())
    }

    /// The state (docs/consumer-protocol.md §K2.1): Empty, Assigning, Reconciling or Stable.
    pub fn state(&self) -> GroupState {
        if self.members.is_empty() {
            GroupState::Empty
        } else if self.group_epoch > self.assignment_epoch {
            GroupState::Assigning
        } else if self
            .members
            .values()
            .any(|m| !m.is_reconciled_to(self.assignment_epoch))
        {
            GroupState::Reconciling
        } else {
            GroupState::Stable
        }
    }

    fn index_member(&mut self, m: &ConsumerMember, add: bool) {
        for set in [&m.assigned, &m.pending_revocation] {
            for (topic, partitions) in set {
                for p in partitions.keys() {
                    let key = (*topic, *p);
                    if add {
                        self.owners.insert(key, m.member_id.clone());
                    } else if self.owners.get(&key) == Some(&m.member_id) {
                        self.owners.remove(&key);
                    }
                }
            }
        }
    }

    /// Insert or replace a member, keeping the indexes in step.
    pub fn put_member(&mut self, member: ConsumerMember) {
        if let Some(old) = self.members.remove(&member.member_id) {
            self.subscription_counts.count(&old, false);
            self.count_assignor(old.server_assignor.as_ref(), false);
            self.index_member(&old, false);
            if let Some(i) = &old.instance_id
                && self.static_members.get(i) == Some(&old.member_id)
            {
                self.static_members.remove(i);
            }
        }
        self.subscription_counts.count(&member, true);
        self.count_assignor(member.server_assignor.as_ref(), true);
        self.index_member(&member, true);
        if let Some(i) = &member.instance_id {
            self.static_members
                .insert(i.clone(), member.member_id.clone());
        }
        self.member_order
            .put(string_hash(&member.member_id), member.member_id.clone());
        self.members.insert(member.member_id.clone(), member);
        self.stored_subscription_type = self.subscription_type_with(None, None);
    }

    /// Change a member (created with Kafka's defaults when absent, as replay does).
    pub fn update_member(&mut self, member_id: &str, change: impl FnOnce(&mut ConsumerMember)) {
        let mut m = self
            .members
            .get(member_id)
            .cloned()
            .unwrap_or_else(|| ConsumerMember::new(member_id));
        change(&mut m);
        self.put_member(m);
    }

    pub fn remove_member(&mut self, member_id: &str) -> Option<ConsumerMember> {
        let old = self.members.remove(member_id)?;
        self.member_order.remove(&old.member_id);
        self.subscription_counts.count(&old, false);
        self.count_assignor(old.server_assignor.as_ref(), false);
        self.index_member(&old, false);
        if let Some(i) = &old.instance_id
            && self.static_members.get(i).map(String::as_str) == Some(member_id)
        {
            self.static_members.remove(i);
        }
        self.stored_subscription_type = self.subscription_type_with(None, None);
        Some(old)
    }

    /// Kafka's `ConsumerGroup.subscriptionType` over the members with `old` replaced by `new`,
    /// from its counts: members per expression, and per topic the members naming it and the
    /// resolved expressions matching it (an expression stays counted until its record is
    /// deleted, except the old member's when it was its only user). Without expressions,
    /// homogeneous when every counted topic is named by every member; with one expression used by
    /// every member, when every topic comes from it alone; otherwise heterogeneous. A heartbeat
    /// that refreshes the subscription metadata computes it with its change; any other uses
    /// [`Self::stored_subscription_type`].
    pub fn subscription_type_with<'a>(
        &'a self,
        old: Option<&ConsumerMember>,
        new: Option<&'a ConsumerMember>,
    ) -> SubscriptionType {
        if old.is_none() && new.is_none() {
            let c = &self.subscription_counts;
            return self.subscription_type_of(&c.by_name, &c.by_regex, self.members.len(), None);
        }
        // The stored counts with the change applied, borrowed (no member is visited).
        fn step<'k>(map: &mut BTreeMap<&'k str, usize>, key: &'k str, up: bool) {
            let c = map.entry(key).or_default();
            if up {
                *c += 1;
            } else {
                *c -= 1;
            }
        }
        let c = &self.subscription_counts;
        let mut by_name: BTreeMap<&'a str, usize> =
            c.by_name.iter().map(|(t, n)| (t.as_str(), *n)).collect();
        let mut by_regex: BTreeMap<&'a str, usize> =
            c.by_regex.iter().map(|(r, n)| (r.as_str(), *n)).collect();
        let mut n = self.members.len();
        let replaced = old.and_then(|o| self.members.get(&o.member_id));
        let changes: [(Option<&'a ConsumerMember>, bool); 2] = [(replaced, false), (new, true)];
        for (m, up) in changes {
            let Some(m) = m else { continue };
            for t in &m.subscribed_topic_names {
                step(&mut by_name, t.as_str(), up);
            }
            if !m.subscribed_topic_regex.is_empty() {
                step(&mut by_regex, m.subscribed_topic_regex.as_str(), up);
            }
            if up {
                n += 1;
            } else {
                n -= 1;
            }
        }
        by_name.retain(|_, c| *c > 0);
        by_regex.retain(|_, c| *c > 0);
        let dropped = old
            .map(|o| o.subscribed_topic_regex.as_str())
            .filter(|r| !r.is_empty() && !by_regex.contains_key(r));
        self.subscription_type_of(&by_name, &by_regex, n, dropped)
    }

    /// The subscription type from the counts of `n` members: members naming each topic, members
    /// per expression; the resolved expressions (but `dropped`) give the topics matched by
    /// expression. Costs the distinct topics, not the members.
    fn subscription_type_of<K: std::borrow::Borrow<str> + Ord>(
        &self,
        by_name: &BTreeMap<K, usize>,
        by_regex: &BTreeMap<K, usize>,
        n: usize,
        dropped: Option<&str>,
    ) -> SubscriptionType {
        let mut resolved_topics = self
            .resolved_regexes
            .iter()
            .filter(|(regex, _)| Some(regex.as_str()) != dropped)
            .flat_map(|(_, resolved)| resolved.topics.iter());
        let homogeneous = match by_regex.len() {
            // Every topic, named or matched by a stale expression, named by every member.
            0 => {
                by_name.values().all(|&c| c == n)
                    && resolved_topics.all(|t| by_name.get(t.as_str()) == Some(&n))
            }
            // One expression used by every member, no names, no topic matched twice.
            1 => {
                let mut seen = BTreeSet::new();
                by_regex.values().next() == Some(&n)
                    && by_name.is_empty()
                    && resolved_topics.all(|t| seen.insert(t.as_str()))
            }
            _ => false,
        };
        if homogeneous {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        }
    }

    pub fn static_member(&self, instance_id: &str) -> Option<&ConsumerMember> {
        self.static_members
            .get(instance_id)
            .and_then(|m| self.members.get(m))
    }

    /// `currentPartitionEpoch != -1`: some member holds the partition.
    pub fn is_partition_owned(&self, topic: &TopicId, partition: i32) -> bool {
        self.owners.contains_key(&(*topic, partition))
    }

    /// The members' subscribed topic names with the member `old` replaced by `new` (either may
    /// be absent), plus the topics of the regular expressions they subscribe to.
    pub fn subscribed_topics_with(
        &self,
        old: Option<&ConsumerMember>,
        new: Option<&ConsumerMember>,
    ) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let skip = old.map(|m| m.member_id.as_str());
        for m in self
            .members
            .values()
            .filter(|m| Some(m.member_id.as_str()) != skip)
            .chain(new)
        {
            out.extend(self.subscribed_topics_of(m));
        }
        out
    }

    /// One member's subscribed topic names plus the topics of its resolved expression.
    pub fn subscribed_topics_of<'a>(
        &'a self,
        m: &'a ConsumerMember,
    ) -> impl Iterator<Item = String> + 'a {
        let regex = self
            .resolved_regexes
            .get(&m.subscribed_topic_regex)
            .into_iter()
            .flat_map(|r| r.topics.iter());
        m.subscribed_topic_names.iter().chain(regex).cloned()
    }

    /// Members that joined through JoinGroup (Kafka's `numClassicProtocolMembers`).
    pub fn classic_member_count(&self) -> usize {
        self.members
            .values()
            .filter(|m| m.uses_classic_protocol())
            .count()
    }

    /// `hasMetadataExpired`.
    pub fn has_metadata_expired(&self, now: crate::types::Millis) -> bool {
        let (deadline, epoch) = self.metadata_refresh_deadline;
        now >= deadline || self.group_epoch < epoch
    }

    /// The persistent state only, for hashing and replay checks.
    pub fn persistent_view(&self) -> impl Serialize + '_ {
        (
            &self.group_id,
            self.group_epoch,
            self.metadata_hash,
            &self.members,
            self.assignment_epoch,
            self.assignment_timestamp,
            &self.target_assignment,
            &self.resolved_regexes,
        )
    }
}

/// The sets of a target, by topic.
pub fn target_sets(target: &[(TopicId, Vec<i32>)]) -> BTreeMap<TopicId, BTreeSet<i32>> {
    let mut out: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
    for (t, ps) in target {
        out.entry(*t).or_default().extend(ps.iter().copied());
    }
    out.retain(|_, p| !p.is_empty());
    out
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The subscription type computed from scratch over every member (the computation the
    /// running counts replaced): the oracle.
    fn from_scratch(
        g: &ConsumerGroup,
        old: Option<&ConsumerMember>,
        new: Option<&ConsumerMember>,
    ) -> SubscriptionType {
        let skip = old.map(|m| m.member_id.as_str());
        let members: Vec<&ConsumerMember> = g
            .members
            .values()
            .filter(|m| Some(m.member_id.as_str()) != skip)
            .chain(new)
            .collect();
        let counts = SubscriptionCounts::of(members.iter().copied());
        let dropped = old
            .map(|o| o.subscribed_topic_regex.as_str())
            .filter(|r| !r.is_empty() && !counts.by_regex.contains_key(*r));
        let mut by_regex: BTreeMap<&str, usize> = BTreeMap::new();
        for (regex, resolved) in &g.resolved_regexes {
            if Some(regex.as_str()) != dropped {
                for t in &resolved.topics {
                    *by_regex.entry(t.as_str()).or_default() += 1;
                }
            }
        }
        let n = members.len();
        let mut topics = counts
            .by_name
            .keys()
            .map(String::as_str)
            .chain(by_regex.keys().copied());
        let homogeneous = match counts.by_regex.len() {
            0 => topics.all(|t| counts.by_name.get(t) == Some(&n)),
            1 => {
                counts.by_regex.values().next() == Some(&n)
                    && topics
                        .all(|t| by_regex.get(t) == Some(&1) && !counts.by_name.contains_key(t))
            }
            _ => false,
        };
        if homogeneous {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Put { id: u8, topics: Vec<u8>, regex: u8 },
        Remove { id: u8 },
        Resolve { regex: u8, topics: Vec<u8> },
        Unresolve { regex: u8 },
    }

    fn member(id: u8, topics: &[u8], regex: u8) -> ConsumerMember {
        let mut m = ConsumerMember::new(&format!("m{id}"));
        m.subscribed_topic_names = topics.iter().map(|t| format!("t{t}")).collect();
        // Regex 0 = none.
        if regex > 0 {
            m.subscribed_topic_regex = format!("r{regex}.*");
        }
        m
    }

    fn op() -> impl Strategy<Value = Op> {
        let topics = || proptest::collection::vec(0u8..5, 0..4);
        prop_oneof![
            4 => (0u8..6, topics(), 0u8..3).prop_map(|(id, topics, regex)| Op::Put { id, topics, regex }),
            2 => (0u8..6).prop_map(|id| Op::Remove { id }),
            1 => (1u8..3, topics()).prop_map(|(regex, topics)| Op::Resolve { regex, topics }),
            1 => (1u8..3).prop_map(|regex| Op::Unresolve { regex }),
        ]
    }

    proptest! {
        /// After any sequence of member puts and removes (and expressions resolved or deleted in
        /// between), the running counts equal a count over the members, the stored type equals
        /// the from-scratch type, and so does the type with any member replaced.
        #[test]
        fn running_counts_equal_a_recount(ops in proptest::collection::vec(op(), 1..40),
                                          probe in (0u8..7, proptest::collection::vec(0u8..5, 0..4), 0u8..3)) {
            let mut g = ConsumerGroup::new("g");
            for op in &ops {
                match op {
                    Op::Put { id, topics, regex } => g.put_member(member(*id, topics, *regex)),
                    Op::Remove { id } => {
                        // Removing no one changes nothing (and computes nothing).
                        if g.remove_member(&format!("m{id}")).is_none() {
                            continue;
                        }
                    }
                    Op::Resolve { regex, topics } => {
                        let mut topics: Vec<String> = topics.iter().map(|t| format!("t{t}")).collect();
                        topics.sort();
                        topics.dedup();
                        g.resolved_regexes.insert(
                            format!("r{regex}.*"),
                            ConsumerRegexValue { topics, version: 0, timestamp: 0 },
                        );
                        continue;
                    }
                    Op::Unresolve { regex } => {
                        g.resolved_regexes.remove(&format!("r{regex}.*"));
                        continue;
                    }
                }
                prop_assert_eq!(&g.subscription_counts, &SubscriptionCounts::of(g.members.values()));
                prop_assert_eq!(g.stored_subscription_type, from_scratch(&g, None, None));
            }
            prop_assert_eq!(g.subscription_type_with(None, None), from_scratch(&g, None, None));
            let (id, topics, regex) = &probe;
            let new = member(*id, topics, *regex);
            let old = g.members.get(&new.member_id).cloned();
            prop_assert_eq!(
                g.subscription_type_with(old.as_ref(), Some(&new)),
                from_scratch(&g, old.as_ref(), Some(&new))
            );
            prop_assert_eq!(
                g.subscription_type_with(old.as_ref(), None),
                from_scratch(&g, old.as_ref(), None)
            );
        }
    }
}
