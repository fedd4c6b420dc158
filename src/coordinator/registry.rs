//! The group registry: every group by id, whatever its type. Streams groups are the only type
//! today; classic and KIP-848 consumer groups will be added as variants of [`Group`], sharing
//! the records, the timers and the offset store of the coordinator.

use std::collections::BTreeMap;

use super::group::StreamsGroup;

/// A group of any type.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Group {
    Streams(StreamsGroup),
}

impl Group {
    /// `ListGroups.GroupType` of this group.
    pub fn group_type(&self) -> &'static str {
        match self {
            Group::Streams(_) => "streams",
        }
    }

    pub fn as_streams(&self) -> Option<&StreamsGroup> {
        match self {
            Group::Streams(g) => Some(g),
        }
    }

    pub fn as_streams_mut(&mut self) -> Option<&mut StreamsGroup> {
        match self {
            Group::Streams(g) => Some(g),
        }
    }
}

/// Groups by id.
#[derive(Debug, Clone, Default)]
pub struct GroupRegistry {
    groups: BTreeMap<String, Group>,
}

impl GroupRegistry {
    pub fn get(&self, id: &str) -> Option<&Group> {
        self.groups.get(id)
    }

    /// The streams group with this id (None when absent or of another type).
    pub fn streams(&self, id: &str) -> Option<&StreamsGroup> {
        self.groups.get(id).and_then(Group::as_streams)
    }

    pub fn streams_mut(&mut self, id: &str) -> Option<&mut StreamsGroup> {
        self.groups.get_mut(id).and_then(Group::as_streams_mut)
    }

    /// The streams group with this id, created empty when absent (replay, spec §6). `None` when
    /// a group of another type holds the id.
    pub fn streams_or_create(&mut self, id: &str) -> Option<&mut StreamsGroup> {
        self.groups
            .entry(id.to_string())
            .or_insert_with(|| Group::Streams(StreamsGroup::new(id)))
            .as_streams_mut()
    }

    /// Number of groups (of every type).
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.groups.contains_key(id)
    }

    pub fn remove(&mut self, id: &str) -> Option<Group> {
        self.groups.remove(id)
    }

    /// Every streams group, by id.
    pub fn all_streams(&self) -> impl Iterator<Item = &StreamsGroup> {
        self.groups.values().filter_map(Group::as_streams)
    }

    pub fn all_streams_mut(&mut self) -> impl Iterator<Item = &mut StreamsGroup> {
        self.groups.values_mut().filter_map(Group::as_streams_mut)
    }

    /// Group ids, sorted.
    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.groups.keys()
    }
}
