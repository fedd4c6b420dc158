//! Log compaction, as Kafka's log cleaner does it for `__consumer_offsets`: the latest value of
//! every record key survives, a tombstone removes its key, and the survivors keep the order in
//! which their latest values were written. Replaying the compacted records rebuilds the same
//! state as replaying the whole history; the server's snapshots and the simulation's coordinator
//! restarts both rely on that.

use std::collections::HashMap;

use super::Record;

/// The latest records of `history`, compacted (see the module documentation).
pub fn compact<'a>(history: impl IntoIterator<Item = &'a Record>) -> Vec<Record> {
    let mut c = Compaction::default();
    for r in history {
        c.add(r);
    }
    c.records()
}

/// Incremental [`compact`]: feed records as they are written, take the compacted set at any time.
#[derive(Debug, Default, Clone)]
pub struct Compaction {
    seq: u64,
    /// Boxed: the table then holds a pointer per key instead of a whole record, so growing it
    /// (a rehash moves every slot) copies a few words per key, not the record.
    latest: HashMap<Vec<u8>, (u64, Box<Record>)>,
}

impl Compaction {
    /// Take in the next record of the history.
    pub fn add(&mut self, r: &Record) {
        let key = record_key(r);
        if r.is_tombstone() {
            self.latest.remove(&key);
        } else {
            self.seq += 1;
            self.latest.insert(key, (self.seq, Box::new(r.clone())));
        }
    }

    /// The surviving records, in the order their latest values were written.
    pub fn records(&self) -> Vec<Record> {
        let mut v: Vec<&(u64, Box<Record>)> = self.latest.values().collect();
        crate::util::sort::unstable_by_key(&mut v, |(seq, _)| *seq);
        v.into_iter().map(|(_, r)| Record::clone(r)).collect()
    }

    /// Number of surviving keys.
    pub fn len(&self) -> usize {
        self.latest.len()
    }

    /// True when no key survives.
    pub fn is_empty(&self) -> bool {
        self.latest.is_empty()
    }
}

/// The identity of a record (its type and key fields): what compaction keeps the latest value
/// of. Length-prefixed parts, so distinct keys never collide.
pub fn record_key(r: &Record) -> Vec<u8> {
    let mut v = r.record_type().to_be_bytes().to_vec();
    let mut part = |s: &str| {
        v.extend_from_slice(&(s.len() as u32).to_be_bytes());
        v.extend_from_slice(s.as_bytes());
    };
    match r {
        Record::GroupMetadata { group_id, .. }
        | Record::TargetAssignmentMetadata { group_id, .. }
        | Record::Topology { group_id, .. }
        | Record::ClassicGroupMetadata { group_id, .. }
        | Record::ConsumerGroupMetadata { group_id, .. }
        | Record::ConsumerGroupPartitionMetadata { group_id, .. }
        | Record::ConsumerTargetAssignmentMetadata { group_id, .. } => part(group_id),
        Record::ConsumerRegularExpression {
            group_id, regex, ..
        } => {
            part(group_id);
            part(regex);
        }
        Record::MemberMetadata {
            group_id,
            member_id,
            ..
        }
        | Record::TargetAssignmentMember {
            group_id,
            member_id,
            ..
        }
        | Record::CurrentMemberAssignment {
            group_id,
            member_id,
            ..
        }
        | Record::ConsumerMemberMetadata {
            group_id,
            member_id,
            ..
        }
        | Record::ConsumerTargetAssignmentMember {
            group_id,
            member_id,
            ..
        }
        | Record::ConsumerCurrentMemberAssignment {
            group_id,
            member_id,
            ..
        } => {
            part(group_id);
            part(member_id);
        }
        Record::OffsetCommit {
            group_id,
            topic,
            partition,
            ..
        } => {
            part(group_id);
            part(topic);
            v.extend_from_slice(&partition.to_be_bytes());
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::OffsetCommitValue;

    fn offset(group: &str, partition: i32, offset: Option<i64>) -> Record {
        Record::OffsetCommit {
            group_id: group.into(),
            topic: "t".into(),
            partition,
            value: offset.map(|o| OffsetCommitValue {
                offset: o,
                leader_epoch: -1,
                metadata: String::new(),
                commit_timestamp: 0,
            }),
        }
    }

    #[test]
    fn keeps_latest_value_per_key_in_write_order() {
        let history = [
            offset("g", 0, Some(1)),
            offset("g", 1, Some(5)),
            offset("g", 0, Some(2)),
            offset("h", 0, Some(7)),
        ];
        assert_eq!(
            compact(&history),
            vec![
                offset("g", 1, Some(5)),
                offset("g", 0, Some(2)),
                offset("h", 0, Some(7)),
            ]
        );
    }

    #[test]
    fn tombstoned_keys_disappear_and_can_come_back() {
        let history = [
            offset("g", 0, Some(1)),
            offset("g", 1, Some(1)),
            offset("g", 0, None),
        ];
        assert_eq!(compact(&history), vec![offset("g", 1, Some(1))]);
        let again = [history.as_slice(), &[offset("g", 0, Some(9))]].concat();
        assert_eq!(
            compact(&again),
            vec![offset("g", 1, Some(1)), offset("g", 0, Some(9))]
        );
    }

    #[test]
    fn key_parts_do_not_collide() {
        let a = Record::MemberMetadata {
            group_id: "ab".into(),
            member_id: "c".into(),
            value: None,
        };
        let b = Record::MemberMetadata {
            group_id: "a".into(),
            member_id: "bc".into(),
            value: None,
        };
        assert_ne!(record_key(&a), record_key(&b));
    }
}
