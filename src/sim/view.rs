//! The simulation's own reading of the coordinator's persistent state, rebuilt from the records
//! the coordinator writes (spec §6). It gives the explorer what describe does not carry (member
//! state, previous epoch, pending revocations) and lets the invariants read the group without
//! calling into the coordinator.

use crate::util::map::BTreeMap;

use crate::records::{CurrentMemberAssignmentValue, MemberMetadataValue, MemberState, Record};
use crate::topology::StreamsTopology;
use crate::types::TasksTuple;

/// One member as the records describe it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ViewMember {
    pub metadata: Option<MemberMetadataValue>,
    pub current: Option<CurrentMemberAssignmentValue>,
}

impl ViewMember {
    pub fn epoch(&self) -> i32 {
        self.current.as_ref().map_or(0, |c| c.member_epoch)
    }

    pub fn state(&self) -> MemberState {
        self.current
            .as_ref()
            .map_or(MemberState::Stable, |c| c.state)
    }
}

/// The persistent state of one group, as replayed from records.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GroupRecordView {
    pub group_id: String,
    pub exists: bool,
    pub group_epoch: i32,
    pub metadata_hash: i64,
    pub validated_topology_epoch: i32,
    pub assignment_epoch: i32,
    pub topology: Option<StreamsTopology>,
    /// Members with a metadata record (a member exists from its metadata record on).
    pub members: BTreeMap<String, ViewMember>,
    pub targets: BTreeMap<String, TasksTuple>,
    /// Group or assignment epochs that went down (never expected while the group lives).
    pub epoch_regressions: Vec<String>,
    /// Classic groups: the generation of the last `GroupMetadata` (type 2) record, -1 if none.
    pub classic_generation: i32,
}

impl GroupRecordView {
    pub fn new(group_id: &str) -> Self {
        GroupRecordView {
            group_id: group_id.to_string(),
            exists: false,
            group_epoch: 0,
            metadata_hash: 0,
            validated_topology_epoch: -1,
            assignment_epoch: -1,
            topology: None,
            members: BTreeMap::new(),
            targets: BTreeMap::new(),
            epoch_regressions: Vec::new(),
            classic_generation: -1,
        }
    }

    /// Apply one record (records of other groups are ignored).
    pub fn apply(&mut self, record: &Record) {
        if record.group_id() != self.group_id {
            return;
        }
        match record {
            Record::GroupMetadata { value, .. } => match value {
                Some(v) => {
                    if self.exists && v.epoch < self.group_epoch {
                        self.epoch_regressions
                            .push(format!("group epoch {} -> {}", self.group_epoch, v.epoch));
                    }
                    self.exists = true;
                    self.group_epoch = v.epoch;
                    self.metadata_hash = v.metadata_hash;
                    self.validated_topology_epoch = v.validated_topology_epoch;
                }
                None => {
                    let regressions = std::mem::take(&mut self.epoch_regressions);
                    *self = GroupRecordView::new(&self.group_id);
                    self.epoch_regressions = regressions;
                }
            },
            Record::MemberMetadata {
                member_id, value, ..
            } => match value {
                Some(v) => {
                    self.exists = true;
                    self.members.entry(member_id.clone()).or_default().metadata = Some(v.clone());
                }
                None => {
                    self.members.remove(member_id);
                }
            },
            Record::CurrentMemberAssignment {
                member_id, value, ..
            } => match value {
                Some(v) => {
                    self.members.entry(member_id.clone()).or_default().current = Some(v.clone());
                }
                None => {
                    if let Some(m) = self.members.get_mut(member_id) {
                        m.current = None;
                    }
                }
            },
            Record::TargetAssignmentMember {
                member_id, value, ..
            } => match value {
                Some(v) => {
                    self.targets.insert(member_id.clone(), v.clone());
                }
                None => {
                    self.targets.remove(member_id);
                }
            },
            Record::TargetAssignmentMetadata { value, .. } => {
                let epoch = value.as_ref().map_or(-1, |v| v.assignment_epoch);
                if value.is_some() && epoch < self.assignment_epoch {
                    self.epoch_regressions.push(format!(
                        "assignment epoch {} -> {epoch}",
                        self.assignment_epoch
                    ));
                }
                self.assignment_epoch = epoch;
            }
            Record::Topology { value, .. } => self.topology = value.clone(),
            Record::ClassicGroupMetadata { value, .. } => match value {
                Some(v) => {
                    if v.generation < self.classic_generation {
                        self.epoch_regressions.push(format!(
                            "classic generation {} -> {}",
                            self.classic_generation, v.generation
                        ));
                    }
                    self.classic_generation = v.generation;
                }
                None => self.classic_generation = -1,
            },
            // Other group types: not part of a streams group's view.
            Record::OffsetCommit { .. }
            | Record::ConsumerGroupMetadata { .. }
            | Record::ConsumerGroupPartitionMetadata { .. }
            | Record::ConsumerMemberMetadata { .. }
            | Record::ConsumerTargetAssignmentMetadata { .. }
            | Record::ConsumerTargetAssignmentMember { .. }
            | Record::ConsumerCurrentMemberAssignment { .. }
            | Record::ConsumerRegularExpression { .. } => {}
        }
    }

    /// Members that exist (have a metadata record).
    pub fn live_members(&self) -> impl Iterator<Item = (&String, &ViewMember)> {
        self.members.iter().filter(|(_, m)| m.metadata.is_some())
    }

    /// The group state by the rules of spec §2.1.
    pub fn state(&self) -> &'static str {
        if !self.exists {
            return "Dead";
        }
        if self.live_members().next().is_none() {
            return "Empty";
        }
        match &self.topology {
            // Only the draft dialect has members without a topology (docs/draft-dialect.md §D3).
            None => return "Initializing",
            Some(t) if t.epoch != self.validated_topology_epoch => return "NotReady",
            _ => {}
        }
        if self.group_epoch > self.assignment_epoch {
            return "Assigning";
        }
        let all_reconciled = self
            .live_members()
            .all(|(_, m)| m.state() == MemberState::Stable && m.epoch() == self.assignment_epoch);
        if all_reconciled {
            "Stable"
        } else {
            "Reconciling"
        }
    }
}
