//! The group registry: every group by id, whatever its type: streams groups, classic groups and
//! KIP-848 consumer groups, sharing the records, the timers and the offset store of the
//! coordinator (group ids are one namespace, as in Kafka).

use crate::util::map::BTreeMap;

use super::classic::ClassicGroup;
use super::consumer::ConsumerGroup;
use super::group::StreamsGroup;

/// A group of any type.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Group {
    Streams(StreamsGroup),
    Classic(ClassicGroup),
    Consumer(ConsumerGroup),
}

impl Group {
    /// `ListGroups.GroupType` of this group.
    pub fn group_type(&self) -> &'static str {
        match self {
            Group::Streams(_) => "streams",
            Group::Classic(_) => "classic",
            Group::Consumer(_) => "consumer",
        }
    }

    pub fn as_consumer(&self) -> Option<&ConsumerGroup> {
        match self {
            Group::Consumer(g) => Some(g),
            _ => None,
        }
    }

    pub fn as_consumer_mut(&mut self) -> Option<&mut ConsumerGroup> {
        match self {
            Group::Consumer(g) => Some(g),
            _ => None,
        }
    }

    pub fn as_streams(&self) -> Option<&StreamsGroup> {
        match self {
            Group::Streams(g) => Some(g),
            _ => None,
        }
    }

    pub fn as_streams_mut(&mut self) -> Option<&mut StreamsGroup> {
        match self {
            Group::Streams(g) => Some(g),
            _ => None,
        }
    }

    pub fn as_classic(&self) -> Option<&ClassicGroup> {
        match self {
            Group::Classic(g) => Some(g),
            _ => None,
        }
    }

    pub fn as_classic_mut(&mut self) -> Option<&mut ClassicGroup> {
        match self {
            Group::Classic(g) => Some(g),
            _ => None,
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

    /// The classic group with this id (None when absent or of another type).
    pub fn classic(&self, id: &str) -> Option<&ClassicGroup> {
        self.groups.get(id).and_then(Group::as_classic)
    }

    pub fn classic_mut(&mut self, id: &str) -> Option<&mut ClassicGroup> {
        self.groups.get_mut(id).and_then(Group::as_classic_mut)
    }

    /// The consumer group with this id (None when absent or of another type).
    pub fn consumer(&self, id: &str) -> Option<&ConsumerGroup> {
        self.groups.get(id).and_then(Group::as_consumer)
    }

    pub fn consumer_mut(&mut self, id: &str) -> Option<&mut ConsumerGroup> {
        self.groups.get_mut(id).and_then(Group::as_consumer_mut)
    }

    /// The consumer group with this id, created empty when absent (replay). `None` when a group
    /// of another type holds the id.
    pub fn consumer_or_create(&mut self, id: &str) -> Option<&mut ConsumerGroup> {
        self.groups
            .entry(id.to_string())
            .or_insert_with(|| Group::Consumer(ConsumerGroup::new(id)))
            .as_consumer_mut()
    }

    /// Every consumer group, by id.
    pub fn all_consumer(&self) -> impl Iterator<Item = &ConsumerGroup> {
        self.groups.values().filter_map(Group::as_consumer)
    }

    pub fn all_consumer_mut(&mut self) -> impl Iterator<Item = &mut ConsumerGroup> {
        self.groups.values_mut().filter_map(Group::as_consumer_mut)
    }

    /// Insert (or replace) a classic group.
    pub fn insert_classic(&mut self, g: ClassicGroup) {
        self.groups.insert(g.group_id.clone(), Group::Classic(g));
    }

    /// Every classic group, by id.
    pub fn all_classic(&self) -> impl Iterator<Item = &ClassicGroup> {
        self.groups.values().filter_map(Group::as_classic)
    }

    /// Every group, by id.
    pub fn all(&self) -> impl Iterator<Item = (&String, &Group)> {
        self.groups.iter()
    }

    /// Number of groups (of every type).
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.groups.contains_key(id)
    }

    pub fn remove(&mut self, id: &str) -> Option<Group> {
        self.groups.remove(id)
    }

    /// Put a saved group back (`None`: the id held no group).
    pub(super) fn put(&mut self, id: &str, group: Option<Group>) {
        match group {
            Some(g) => self.groups.insert(id.to_string(), g),
            None => self.groups.remove(id),
        };
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
