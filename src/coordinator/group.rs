//! A streams group and its members: persistent state (rebuilt from records), soft state, and
//! the derived process-id indexes (spec §2.3).

use crate::util::map::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::assignor::java_compat::{TimelineHashMapOrder, string_hash};
use crate::records::{
    CurrentMemberAssignmentValue, GroupMetadataValue, MemberMetadataValue, MemberState,
    UserEndpoint,
};
use crate::topology::{ConfiguredTopology, StreamsTopology};
use crate::types::{Millis, TaskId, TaskSet, TasksTuple, TasksWithEpochs};

/// Group states (spec §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum GroupState {
    /// No members.
    Empty,
    /// Members, but the topology's topics are not ready (§3.7).
    NotReady,
    /// Draft dialect only (docs/draft-dialect.md §D3): members, but no topology yet; they wait
    /// for a StreamsGroupInitialize.
    Initializing,
    /// The target assignment is behind the group epoch.
    Assigning,
    /// Members are still converging on the target assignment.
    Reconciling,
    /// Every member owns its target assignment.
    Stable,
    /// The group is gone (deleted, or never existed).
    Dead,
}

impl GroupState {
    /// Wire name (`StreamsGroupDescribe`, `ListGroups`).
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::NotReady => "NotReady",
            GroupState::Initializing => "Initializing",
            GroupState::Assigning => "Assigning",
            GroupState::Reconciling => "Reconciling",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }

    /// Lower-case name used by ListGroups state filters.
    pub fn filter_name(self) -> &'static str {
        match self {
            GroupState::Empty => "empty",
            GroupState::NotReady => "not_ready",
            GroupState::Initializing => "initializing",
            GroupState::Assigning => "assigning",
            GroupState::Reconciling => "reconciling",
            GroupState::Stable => "stable",
            GroupState::Dead => "dead",
        }
    }
}

/// A member of a streams group (`StreamsGroupMember`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamsMember {
    /// The member id.
    pub member_id: String,
    /// Its epoch.
    pub member_epoch: i32,
    /// Its epoch before the last change.
    pub previous_member_epoch: i32,
    /// Its reconciliation state.
    pub state: MemberState,
    /// Static membership id, if any.
    pub instance_id: Option<String>,
    /// Rack, if any.
    pub rack_id: Option<String>,
    /// Client id of its last heartbeat.
    pub client_id: String,
    /// Client host, in Java's format (`/127.0.0.1`).
    pub client_host: String,
    /// Rebalance timeout in ms.
    pub rebalance_timeout_ms: i32,
    /// Topology epoch it joined with.
    pub topology_epoch: i32,
    /// Process id.
    pub process_id: String,
    /// Interactive-query endpoint, if any.
    pub user_endpoint: Option<UserEndpoint>,
    /// Client tags.
    pub client_tags: BTreeMap<String, String>,
    /// Tasks it owns, with the epoch each was assigned at.
    pub assigned: TasksWithEpochs,
    /// Tasks it must revoke before it gets new ones.
    pub pending_revocation: TasksWithEpochs,
}

impl StreamsMember {
    /// A new member with Kafka's defaults.
    pub(crate) fn new(member_id: &str) -> StreamsMember {
        StreamsMember {
            member_id: member_id.to_string(),
            member_epoch: 0,
            previous_member_epoch: 0,
            state: MemberState::Stable,
            instance_id: None,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            rebalance_timeout_ms: -1,
            topology_epoch: -1,
            process_id: String::new(),
            user_endpoint: None,
            client_tags: BTreeMap::new(),
            assigned: TasksWithEpochs::default(),
            pending_revocation: TasksWithEpochs::default(),
        }
    }

    pub(crate) fn metadata_value(&self) -> MemberMetadataValue {
        MemberMetadataValue {
            instance_id: self.instance_id.clone(),
            rack_id: self.rack_id.clone(),
            client_id: self.client_id.clone(),
            client_host: self.client_host.clone(),
            rebalance_timeout_ms: self.rebalance_timeout_ms,
            topology_epoch: self.topology_epoch,
            process_id: self.process_id.clone(),
            user_endpoint: self.user_endpoint.clone(),
            client_tags: self.client_tags.clone(),
        }
    }

    pub(crate) fn assignment_value(&self) -> CurrentMemberAssignmentValue {
        CurrentMemberAssignmentValue {
            member_epoch: self.member_epoch,
            previous_member_epoch: self.previous_member_epoch,
            state: self.state,
            assigned: self.assigned.clone(),
            pending_revocation: self.pending_revocation.clone(),
        }
    }

    pub(crate) fn apply_metadata(&mut self, v: &MemberMetadataValue) {
        self.instance_id = v.instance_id.clone();
        self.rack_id = v.rack_id.clone();
        self.client_id = v.client_id.clone();
        self.client_host = v.client_host.clone();
        self.rebalance_timeout_ms = v.rebalance_timeout_ms;
        self.topology_epoch = v.topology_epoch;
        self.process_id = v.process_id.clone();
        self.user_endpoint = v.user_endpoint.clone();
        self.client_tags = v.client_tags.clone();
    }

    pub(crate) fn apply_assignment(&mut self, v: &CurrentMemberAssignmentValue) {
        self.member_epoch = v.member_epoch;
        self.previous_member_epoch = v.previous_member_epoch;
        self.state = v.state;
        self.assigned = v.assigned.clone();
        self.pending_revocation = v.pending_revocation.clone();
    }

    /// Same metadata (what record 19 carries), compared without building the record values.
    pub(crate) fn same_metadata(&self, o: &StreamsMember) -> bool {
        self.instance_id == o.instance_id
            && self.rack_id == o.rack_id
            && self.client_id == o.client_id
            && self.client_host == o.client_host
            && self.rebalance_timeout_ms == o.rebalance_timeout_ms
            && self.topology_epoch == o.topology_epoch
            && self.process_id == o.process_id
            && self.user_endpoint == o.user_endpoint
            && self.client_tags == o.client_tags
    }

    /// Same assignment state (what record 22 carries).
    pub(crate) fn same_assignment(&self, other: &StreamsMember) -> bool {
        self.member_epoch == other.member_epoch
            && self.previous_member_epoch == other.previous_member_epoch
            && self.state == other.state
            && self.assigned == other.assigned
            && self.pending_revocation == other.pending_revocation
    }

    /// Reconciled to `assignment_epoch` (spec §2.1 rule 4).
    pub fn is_reconciled_to(&self, assignment_epoch: i32) -> bool {
        self.state == MemberState::Stable && self.member_epoch == assignment_epoch
    }
}

/// Reported changelog offsets of one member (soft state, spec §3.15).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberTaskOffsets {
    pub offsets: BTreeMap<TaskId, i64>,
    pub end_offsets: BTreeMap<TaskId, i64>,
}

/// Which processes hold each task, built from every member's assigned and pending tasks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessIndex {
    pub active: BTreeMap<TaskId, String>,
    pub standby: BTreeMap<TaskId, BTreeSet<String>>,
    pub warmup: BTreeMap<TaskId, BTreeSet<String>>,
}

impl ProcessIndex {
    fn add_member(&mut self, m: &StreamsMember) {
        for tasks in [&m.assigned, &m.pending_revocation] {
            for (s, p, _) in tasks.active.iter() {
                self.active.insert(TaskId::new(s, p), m.process_id.clone());
            }
            for t in tasks.standby.iter() {
                self.standby
                    .entry(t)
                    .or_default()
                    .insert(m.process_id.clone());
            }
            for t in tasks.warmup.iter() {
                self.warmup
                    .entry(t)
                    .or_default()
                    .insert(m.process_id.clone());
            }
        }
    }

    fn remove_member(&mut self, m: &StreamsMember) {
        for tasks in [&m.assigned, &m.pending_revocation] {
            for (s, p, _) in tasks.active.iter() {
                let t = TaskId::new(s, p);
                if self.active.get(&t) == Some(&m.process_id) {
                    self.active.remove(&t);
                }
            }
            for (map, set) in [
                (&mut self.standby, &tasks.standby),
                (&mut self.warmup, &tasks.warmup),
            ] {
                for t in set.iter() {
                    if let Some(ps) = map.get_mut(&t) {
                        ps.remove(&m.process_id);
                        if ps.is_empty() {
                            map.remove(&t);
                        }
                    }
                }
            }
        }
    }
}

/// A streams group.
#[derive(Debug, Clone)]
pub struct StreamsGroup {
    /// The group id.
    pub group_id: String,
    // --- persistent (records) ---
    /// The group epoch: bumped by every change of members, topology or metadata.
    pub group_epoch: i32,
    /// Members by member id.
    pub members: BTreeMap<String, StreamsMember>,
    /// instance id -> member id.
    pub static_members: BTreeMap<String, String>,
    /// Hash of the topic metadata the group last configured with (§3.8).
    pub metadata_hash: i64,
    /// The topology epoch last validated against the topics (-1: none).
    pub validated_topology_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// When the target assignment was computed (ms).
    pub assignment_timestamp: i64,
    /// The target assignment, by member id.
    pub target_assignment: BTreeMap<String, TasksTuple>,
    /// The topology the members sent.
    pub topology: Option<StreamsTopology>,
    /// The assignment configs the last assignment used (`num.standby.replicas`, ...).
    pub last_assignment_configs: BTreeMap<String, String>,
    /// KIP-1331: the topology epoch of the stored description (-1: none).
    pub stored_description_topology_epoch: i32,
    /// KIP-1331: the topology epoch whose description failed (-1: none).
    pub failed_description_topology_epoch: i32,
    // --- soft (not persisted) ---
    /// The topology with its internal topics configured against the metadata, once it could be.
    pub configured_topology: Option<ConfiguredTopology>,
    /// Whether describe shows `configured_topology` (else the topology as sent): it does once a
    /// write of this group followed its configuration, as Kafka's describe reads committed state.
    pub(crate) configured_topology_described: bool,
    /// (deadline, group epoch at which it was set); (0, 0) = expired.
    pub(crate) metadata_refresh_deadline: (Millis, i32),
    /// The member that asked the application to shut down, if one did.
    pub shutdown_request_member_id: Option<String>,
    /// The epoch of the endpoint-to-partitions map (bumped when it changes).
    pub endpoint_information_epoch: i32,
    pub(crate) task_offsets: BTreeMap<String, MemberTaskOffsets>,
    // --- derived ---
    pub(crate) index: ProcessIndex,
    /// The iteration order of Kafka's member map (a `TimelineHashMap`), which decides the
    /// sticky assignor's ties: fed with a `put` for every member written (replacements too) and
    /// a `remove` for every member deleted, exactly where Kafka's replay changes its map. It
    /// follows from the records in their order, but not from the state alone (and a compacted
    /// log replays in another order, as in Kafka), so it stays out of [`Self::persistent_view`].
    pub(crate) member_order: TimelineHashMapOrder<String>,
}

impl StreamsGroup {
    /// A new group as Kafka 4.4 starts it: group epoch 1, assignment epoch 1 (spec §2.3, §0).
    pub(crate) fn new(group_id: &str) -> StreamsGroup {
        StreamsGroup {
            group_id: group_id.to_string(),
            group_epoch: 1,
            members: BTreeMap::new(),
            static_members: BTreeMap::new(),
            metadata_hash: 0,
            validated_topology_epoch: -1,
            assignment_epoch: 1,
            assignment_timestamp: 0,
            target_assignment: BTreeMap::new(),
            topology: None,
            last_assignment_configs: BTreeMap::new(),
            stored_description_topology_epoch: -1,
            failed_description_topology_epoch: -1,
            configured_topology: None,
            configured_topology_described: false,
            metadata_refresh_deadline: (Millis(0), 0),
            shutdown_request_member_id: None,
            endpoint_information_epoch: 0,
            task_offsets: BTreeMap::new(),
            index: ProcessIndex::default(),
            member_order: TimelineHashMapOrder::with_expected_size(0),
        }
    }

    /// The state (spec §2.1), first matching rule wins.
    pub fn state(&self) -> GroupState {
        if self.members.is_empty() {
            return GroupState::Empty;
        }
        match &self.topology {
            // Shipped groups always have one: their members join with it (§3.4 D).
            None => return GroupState::Initializing,
            Some(t) if t.epoch != self.validated_topology_epoch => return GroupState::NotReady,
            _ => {}
        }
        if self.group_epoch > self.assignment_epoch {
            return GroupState::Assigning;
        }
        if self
            .members
            .values()
            .any(|m| !m.is_reconciled_to(self.assignment_epoch))
        {
            return GroupState::Reconciling;
        }
        GroupState::Stable
    }

    /// Insert or replace a member, keeping the indexes in step.
    pub(crate) fn put_member(&mut self, member: StreamsMember) {
        if let Some(old) = self.members.remove(&member.member_id) {
            self.index.remove_member(&old);
            if let Some(i) = &old.instance_id
                && self.static_members.get(i) == Some(&old.member_id)
            {
                self.static_members.remove(i);
            }
        }
        self.index.add_member(&member);
        if let Some(i) = &member.instance_id {
            self.static_members
                .insert(i.clone(), member.member_id.clone());
        }
        self.member_order
            .put(string_hash(&member.member_id), member.member_id.clone());
        self.members.insert(member.member_id.clone(), member);
    }

    /// Change a member (created with Kafka's defaults when absent, as replay does, spec §6),
    /// keeping the indexes in step.
    pub(crate) fn update_member(
        &mut self,
        member_id: &str,
        change: impl FnOnce(&mut StreamsMember),
    ) {
        let mut m = self
            .members
            .get(member_id)
            .cloned()
            .unwrap_or_else(|| StreamsMember::new(member_id));
        change(&mut m);
        self.put_member(m);
    }

    pub(crate) fn remove_member(&mut self, member_id: &str) -> Option<StreamsMember> {
        let old = self.members.remove(member_id)?;
        self.member_order.remove(&old.member_id);
        self.index.remove_member(&old);
        if let Some(i) = &old.instance_id
            && self.static_members.get(i).map(String::as_str) == Some(member_id)
        {
            self.static_members.remove(i);
        }
        self.task_offsets.remove(member_id);
        if self.members.is_empty() {
            self.shutdown_request_member_id = None;
        }
        Some(old)
    }

    /// The member holding a static instance id.
    pub fn static_member(&self, instance_id: &str) -> Option<&StreamsMember> {
        self.static_members
            .get(instance_id)
            .and_then(|m| self.members.get(m))
    }

    pub(crate) fn apply_group_metadata(&mut self, v: &GroupMetadataValue) {
        self.group_epoch = v.epoch;
        self.metadata_hash = v.metadata_hash;
        self.validated_topology_epoch = v.validated_topology_epoch;
        self.last_assignment_configs = v.last_assignment_configs.clone();
        self.stored_description_topology_epoch = v.stored_description_topology_epoch;
        self.failed_description_topology_epoch = v.failed_description_topology_epoch;
    }

    pub(crate) fn group_metadata_value(&self) -> GroupMetadataValue {
        GroupMetadataValue {
            epoch: self.group_epoch,
            metadata_hash: self.metadata_hash,
            validated_topology_epoch: self.validated_topology_epoch,
            last_assignment_configs: self.last_assignment_configs.clone(),
            stored_description_topology_epoch: self.stored_description_topology_epoch,
            failed_description_topology_epoch: self.failed_description_topology_epoch,
        }
    }

    /// `hasMetadataExpired` (spec §3.8).
    pub(crate) fn has_metadata_expired(&self, now: Millis) -> bool {
        let (deadline, epoch) = self.metadata_refresh_deadline;
        now >= deadline || self.group_epoch < epoch
    }

    /// The persistent state only, in a canonical form (for hashing and replay checks).
    pub(crate) fn persistent_view(&self) -> PersistentGroupView<'_> {
        PersistentGroupView {
            group_id: &self.group_id,
            group_epoch: self.group_epoch,
            members: &self.members,
            metadata_hash: self.metadata_hash,
            validated_topology_epoch: self.validated_topology_epoch,
            assignment_epoch: self.assignment_epoch,
            assignment_timestamp: self.assignment_timestamp,
            target_assignment: &self.target_assignment,
            topology: &self.topology,
            last_assignment_configs: &self.last_assignment_configs,
        }
    }

    /// Target tasks of a member (empty when none).
    pub fn target_of(&self, member_id: &str) -> TasksTuple {
        self.target_assignment
            .get(member_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Every task of the configured topology (empty when not configured).
    pub fn all_tasks(&self) -> TaskSet {
        let mut out = TaskSet::new();
        if let Some(subs) = self
            .configured_topology
            .as_ref()
            .and_then(|c| c.subtopologies.as_ref())
        {
            for (id, s) in subs {
                for p in 0..s.number_of_tasks {
                    out.insert(id, p);
                }
            }
        }
        out
    }
}

/// See [`StreamsGroup::persistent_view`].
#[derive(Debug, Serialize)]
pub struct PersistentGroupView<'a> {
    pub group_id: &'a str,
    pub group_epoch: i32,
    pub members: &'a BTreeMap<String, StreamsMember>,
    pub metadata_hash: i64,
    pub validated_topology_epoch: i32,
    pub assignment_epoch: i32,
    pub assignment_timestamp: i64,
    pub target_assignment: &'a BTreeMap<String, TasksTuple>,
    pub topology: &'a Option<StreamsTopology>,
    pub last_assignment_configs: &'a BTreeMap<String, String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_order_follows_kafkas_member_map() {
        // The same puts and removes as java_compat's TimelineHashMap vector, through the group:
        // a re-put member (replacement) keeps its place, a removed and re-added one moves.
        let mut g = StreamsGroup::new("g");
        for id in ["m1", "m2", "m3", "m4", "m5"] {
            g.put_member(StreamsMember::new(id));
        }
        g.remove_member("m2");
        g.put_member(StreamsMember::new("m6"));
        g.put_member(StreamsMember::new("m2"));
        g.update_member("m1", |m| m.member_epoch = 3);
        assert_eq!(
            g.member_order.iteration_order().join(","),
            "m5,m2,m4,m1,m6,m3"
        );
        let by_id: Vec<&String> = g.members.keys().collect();
        assert_eq!(by_id, ["m1", "m2", "m3", "m4", "m5", "m6"]);
    }
}
