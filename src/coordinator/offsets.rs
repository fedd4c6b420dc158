//! OffsetCommit and OffsetFetch against streams groups (spec §8).

use serde::{Deserialize, Serialize};

use super::{Coordinator, Outcome};
use crate::error::{ApiError, ErrorCode};
use crate::records::{OffsetCommitValue, Record};
use crate::types::Millis;
#[cfg(target_arch = "wasm32")]
use crate::util::map::BTreeMap;
use crate::util::map::VecMap;

/// One partition of an offset commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetCommitPartition {
    /// The partition.
    pub partition: i32,
    /// The offset to commit.
    pub offset: i64,
    /// The leader epoch the client saw, or -1.
    pub leader_epoch: i32,
    /// Client metadata, stored as sent (`None` stores `""`).
    pub metadata: Option<String>,
}

/// One topic of an offset commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetCommitTopic {
    /// The topic.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<OffsetCommitPartition>,
}

/// An OffsetCommit request as the coordinator needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetCommitInput {
    /// The group.
    pub group_id: String,
    /// The member committing (`""` for an admin or a standalone consumer).
    pub member_id: String,
    /// `GenerationIdOrMemberEpoch`.
    pub member_epoch: i32,
    /// The static membership id, if any.
    pub group_instance_id: Option<String>,
    /// The request's API version (streams members need v9+).
    pub api_version: i16,
    /// Whether this is TxnOffsetCommit.
    pub transactional: bool,
    /// The offsets to commit.
    pub topics: Vec<OffsetCommitTopic>,
}

/// An OffsetFetch request for one group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetFetchInput {
    /// The group.
    pub group_id: String,
    /// The member fetching, if the request names one (v9+).
    pub member_id: Option<String>,
    /// Its epoch (-1 when the request has none).
    pub member_epoch: i32,
    /// `None` = every committed partition.
    pub topics: Option<Vec<(String, Vec<i32>)>>,
}

/// One partition's committed offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchedOffset {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// -1 when nothing is committed.
    pub offset: i64,
    /// The leader epoch stored with it, or -1.
    pub leader_epoch: i32,
    /// The metadata stored with it.
    pub metadata: String,
}

/// Per topic, per partition: the error code of the commit.
pub type OffsetCommitResult = Vec<(String, Vec<(i32, ErrorCode)>)>;

/// A map keyed by group or topic name: a hash map natively (one hash per lookup, no string
/// compares down a tree; the offsets table is the largest state a restart rebuilds), the small
/// sorted map on wasm32 (the explorer's tables are tiny and its module size counts). Never
/// iterated where order shows: [`GroupOffsets::iter`] and [`OffsetsTable::group_ids`] sort.
#[cfg(not(target_arch = "wasm32"))]
type NameMap<V> = rustc_hash::FxHashMap<String, V>;
#[cfg(target_arch = "wasm32")]
type NameMap<V> = BTreeMap<String, V>;

/// Committed offsets of one group: topic, then partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupOffsets {
    topics: NameMap<VecMap<i32, OffsetCommitValue>>,
    len: usize,
}

impl GroupOffsets {
    /// The value committed for a partition.
    pub fn get(&self, topic: &str, partition: i32) -> Option<&OffsetCommitValue> {
        self.topics.get(topic)?.get(&partition)
    }

    /// Whether something is committed for a partition.
    pub fn contains(&self, topic: &str, partition: i32) -> bool {
        self.get(topic, partition).is_some()
    }

    /// Committed partitions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing committed (a table never keeps such a group).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every committed partition, sorted by topic then partition.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32, &OffsetCommitValue)> {
        let mut topics: Vec<(&String, &VecMap<i32, OffsetCommitValue>)> =
            self.topics.iter().collect();
        crate::util::sort::unstable_by_key(&mut topics, |(t, _)| *t);
        topics
            .into_iter()
            .flat_map(|(t, ps)| ps.iter().map(move |(p, v)| (t.as_str(), *p, v)))
    }

    fn insert(&mut self, topic: &str, partition: i32, value: OffsetCommitValue) {
        let partitions = match self.topics.get_mut(topic) {
            Some(ps) => ps,
            None => self.topics.entry(topic.to_string()).or_default(),
        };
        if partitions.insert(partition, value).is_none() {
            self.len += 1;
        }
    }

    fn remove(&mut self, topic: &str, partition: i32) {
        let Some(partitions) = self.topics.get_mut(topic) else {
            return;
        };
        if partitions.remove(&partition).is_some() {
            self.len -= 1;
            if partitions.is_empty() {
                self.topics.remove(topic);
            }
        }
    }
}

/// The committed offsets of every group (record 1's state). Groups without any are not kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct OffsetsTable {
    groups: NameMap<GroupOffsets>,
}

impl OffsetsTable {
    pub(crate) fn get(&self, group_id: &str) -> Option<&GroupOffsets> {
        self.groups.get(group_id)
    }

    pub(crate) fn contains_key(&self, group_id: &str) -> bool {
        self.groups.contains_key(group_id)
    }

    /// Group ids with offsets, sorted.
    pub(crate) fn group_ids(&self) -> Vec<&String> {
        let mut ids: Vec<&String> = self.groups.keys().collect();
        crate::util::sort::unstable_by_key(&mut ids, |id| *id);
        ids
    }

    /// Every group's offsets, in no particular order.
    pub(crate) fn unordered(&self) -> impl Iterator<Item = (&String, &GroupOffsets)> {
        self.groups.iter()
    }

    /// Record 1: `Some` commits, `None` (a tombstone) removes the partition, and the group once
    /// it has none left.
    pub(crate) fn apply(
        &mut self,
        group_id: &str,
        topic: &str,
        partition: i32,
        value: Option<&OffsetCommitValue>,
    ) {
        match value {
            Some(v) => {
                let group = match self.groups.get_mut(group_id) {
                    Some(g) => g,
                    None => self.groups.entry(group_id.to_string()).or_default(),
                };
                group.insert(topic, partition, v.clone());
            }
            None => {
                if let Some(g) = self.groups.get_mut(group_id) {
                    g.remove(topic, partition);
                    if g.is_empty() {
                        self.groups.remove(group_id);
                    }
                }
            }
        }
    }

    /// Offset commits of one group and topic in log order (`run`: [`Record::OffsetCommit`]s of
    /// `group_id` and `topic`, as [`Coordinator::replay_all`] finds them), as
    /// [`OffsetsTable::apply`] applies them one by one, with one lookup of the group and the
    /// topic when none of them is a tombstone.
    pub(crate) fn apply_run(&mut self, group_id: &str, topic: &str, run: &[Record]) {
        let commits = run.iter().filter_map(|r| match r {
            Record::OffsetCommit {
                partition, value, ..
            } => Some((*partition, value.as_ref())),
            _ => None,
        });
        if commits.clone().any(|(_, v)| v.is_none()) {
            for (p, v) in commits {
                self.apply(group_id, topic, p, v);
            }
            return;
        }
        let group = match self.groups.get_mut(group_id) {
            Some(g) => g,
            None => self.groups.entry(group_id.to_string()).or_default(),
        };
        let partitions = match group.topics.get_mut(topic) {
            Some(ps) => ps,
            None => group.topics.entry(topic.to_string()).or_default(),
        };
        for (partition, value) in commits {
            if let Some(v) = value
                && partitions.insert(partition, v.clone()).is_none()
            {
                group.len += 1;
            }
        }
    }

    /// Put a group's offsets back as saved (`None`: it had none).
    pub(crate) fn restore(&mut self, group_id: String, saved: Option<GroupOffsets>) {
        match saved {
            Some(o) => {
                self.groups.insert(group_id, o);
            }
            None => {
                self.groups.remove(&group_id);
            }
        }
    }

    /// Sorted (group, topic, partition, value) rows: the persistent form [`Coordinator::state_hash`]
    /// hashes.
    pub(crate) fn sorted_rows(&self) -> Vec<(&str, &str, i32, &OffsetCommitValue)> {
        self.group_ids()
            .into_iter()
            .flat_map(|g| {
                self.groups
                    .get(g.as_str())
                    .into_iter()
                    .flat_map(move |o| o.iter().map(move |(t, p, v)| (g.as_str(), t, p, v)))
            })
            .collect()
    }
}

/// Kafka compares `String.length()`, which counts UTF-16 code units, with the limit.
fn metadata_too_large(metadata: Option<&str>, max: i32) -> bool {
    metadata.is_some_and(|m| m.encode_utf16().count() as i64 > i64::from(max))
}

impl Coordinator {
    /// OffsetCommit with the streams validation (spec §8). Per-partition error codes: a
    /// partition whose metadata is longer than `offset.metadata.max.bytes` gets
    /// OFFSET_METADATA_TOO_LARGE, as in Kafka. If the records cannot be stored as sent (or
    /// applied), every partition gets UNKNOWN_SERVER_ERROR and nothing is written.
    pub fn offset_commit(
        &mut self,
        now: Millis,
        req: &OffsetCommitInput,
    ) -> Outcome<OffsetCommitResult> {
        let verdict = self.validate_commit(req);
        let max_metadata = self.config.offset_metadata_max_bytes;
        let mut records = Vec::new();
        let mut response = Vec::new();
        for t in &req.topics {
            let mut parts = Vec::new();
            for p in &t.partitions {
                let code = match &verdict {
                    Err(e) => e.code,
                    Ok(_) if metadata_too_large(p.metadata.as_deref(), max_metadata) => {
                        ErrorCode::OFFSET_METADATA_TOO_LARGE
                    }
                    Ok(check) => check(&t.name, p.partition),
                };
                if code == ErrorCode::NONE {
                    records.push(Record::OffsetCommit {
                        group_id: req.group_id.clone(),
                        topic: t.name.clone(),
                        partition: p.partition,
                        value: Some(OffsetCommitValue {
                            offset: p.offset,
                            leader_epoch: p.leader_epoch,
                            metadata: p.metadata.clone().unwrap_or_default(),
                            commit_timestamp: now.0,
                        }),
                    });
                }
                parts.push((p.partition, code));
            }
            response.push((t.name.clone(), parts));
        }
        let valid = verdict.is_ok();
        drop(verdict);
        let mut timers = Vec::new();
        if let Err(e) = self.apply(&records) {
            for (_, parts) in &mut response {
                for (_, code) in parts {
                    *code = e.code;
                }
            }
            records.clear();
        } else if valid {
            self.classic_commit_heartbeat(now, &req.group_id, &req.member_id, &mut timers);
        }
        Outcome {
            response,
            records,
            timers,
            topics_to_create: Vec::new(),
        }
    }

    /// Group-level checks; the returned closure does the per-partition ones.
    ///
    /// Kafka checks the metadata length per partition before these, but only once the group
    /// checks passed (they fail the whole request).
    #[allow(clippy::type_complexity)]
    fn validate_commit<'a>(
        &'a self,
        req: &'a OffsetCommitInput,
    ) -> Result<Box<dyn Fn(&str, i32) -> ErrorCode + 'a>, ApiError> {
        let ok: Box<dyn Fn(&str, i32) -> ErrorCode> = Box::new(|_, _| ErrorCode::NONE);
        if req.group_id.is_empty() {
            return Err(ApiError::new(
                ErrorCode::INVALID_GROUP_ID,
                "The group id cannot be empty.",
            ));
        }
        if let Some(g) = self.groups.classic(&req.group_id) {
            // docs/classic-protocol.md §C6: generation and member checks.
            Coordinator::classic_validate_commit(
                g,
                &req.member_id,
                req.group_instance_id.as_deref(),
                req.member_epoch,
                req.transactional,
            )?;
            return Ok(ok);
        }
        if let Some(g) = self.groups.consumer(&req.group_id) {
            // docs/consumer-protocol.md §K7.
            let member = Coordinator::consumer_validate_commit(
                g,
                &req.member_id,
                req.group_instance_id.as_deref(),
                req.member_epoch,
                req.transactional,
                req.api_version,
            )?;
            let epoch = req.member_epoch;
            let ids = &self.topic_ids;
            return Ok(match member {
                None => ok,
                Some(m) => Box::new(move |topic: &str, partition: i32| {
                    let id = super::consumer::topic_id_of(ids, topic);
                    super::consumer::partition_commit_error(m, epoch, id, partition)
                }),
            });
        }
        let Some(g) = self.groups.streams(&req.group_id) else {
            if req.member_epoch < 0 {
                return Ok(ok);
            }
            let code = if req.api_version >= 9 {
                ErrorCode::GROUP_ID_NOT_FOUND
            } else {
                ErrorCode::ILLEGAL_GENERATION
            };
            return Err(ApiError::new(
                code,
                format!("Group {} not found.", req.group_id),
            ));
        };
        if req.member_epoch < 0 && g.members.is_empty() {
            return Ok(ok);
        }
        if req.transactional
            && req.member_id.is_empty()
            && req.member_epoch == -1
            && req.group_instance_id.is_none()
        {
            return Ok(ok);
        }
        let Some(m) = g.members.get(&req.member_id) else {
            return Err(ApiError::new(
                ErrorCode::UNKNOWN_MEMBER_ID,
                format!(
                    "Member {} is not a member of group {}.",
                    req.member_id, req.group_id
                ),
            ));
        };
        if !req.transactional && req.api_version < 9 {
            return Err(ApiError::new(
                ErrorCode::UNSUPPORTED_VERSION,
                "OffsetCommit version 9 or above must be used by members using the streams group protocol",
            ));
        }
        if req.member_epoch == m.member_epoch {
            return Ok(ok);
        }
        if req.member_epoch > m.member_epoch {
            return Err(ApiError::new(
                ErrorCode::STALE_MEMBER_EPOCH,
                "The member epoch is stale.",
            ));
        }
        // Older epoch: each partition's task must be owned (or pending revocation) as active
        // since an epoch <= the request's.
        let Some(topology) = &g.topology else {
            return Err(ApiError::new(
                ErrorCode::STALE_MEMBER_EPOCH,
                "The member epoch is stale.",
            ));
        };
        let sources = topology.source_topic_map();
        let epoch = req.member_epoch;
        Ok(Box::new(move |topic: &str, partition: i32| {
            let Some(sub) = sources.get(topic) else {
                return ErrorCode::STALE_MEMBER_EPOCH;
            };
            let e = m
                .assigned
                .active
                .epoch_of(sub, partition)
                .or_else(|| m.pending_revocation.active.epoch_of(sub, partition));
            match e {
                Some(e) if epoch >= e => ErrorCode::NONE,
                _ => ErrorCode::STALE_MEMBER_EPOCH,
            }
        }))
    }

    /// OffsetFetch with the streams validation (spec §8).
    pub fn offset_fetch(&self, req: &OffsetFetchInput) -> Result<Vec<FetchedOffset>, ApiError> {
        if let Some(g) = self.groups.consumer(&req.group_id) {
            Coordinator::consumer_validate_fetch(g, req.member_id.as_deref(), req.member_epoch)?;
        }
        if let Some(g) = self.groups.streams(&req.group_id) {
            let admin = req.member_id.is_none() && req.member_epoch < 0;
            if !admin {
                let id = req.member_id.clone().unwrap_or_default();
                let Some(m) = g.members.get(&id) else {
                    return Err(ApiError::new(
                        ErrorCode::UNKNOWN_MEMBER_ID,
                        format!("Member {id} is not a member of group {}.", req.group_id),
                    ));
                };
                if m.member_epoch != req.member_epoch {
                    return Err(ApiError::new(
                        ErrorCode::STALE_MEMBER_EPOCH,
                        "The member epoch is stale.",
                    ));
                }
            }
        }
        let committed = self.offsets.get(&req.group_id);
        let row = |t: &str, p: i32| match committed.and_then(|c| c.get(t, p)) {
            Some(v) => FetchedOffset {
                topic: t.to_string(),
                partition: p,
                offset: v.offset,
                leader_epoch: v.leader_epoch,
                metadata: v.metadata.clone(),
            },
            None => FetchedOffset {
                topic: t.to_string(),
                partition: p,
                offset: -1,
                leader_epoch: -1,
                metadata: String::new(),
            },
        };
        Ok(match &req.topics {
            Some(topics) => topics
                .iter()
                .flat_map(|(t, ps)| ps.iter().map(|p| row(t, *p)))
                .collect(),
            None => committed
                .map(|c| c.iter().map(|(t, p, _)| row(t, p)).collect())
                .unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::CoordinatorConfig;

    fn commit(group: &str, topic: &str, partition: i32, offset: Option<i64>) -> Record {
        Record::OffsetCommit {
            group_id: group.into(),
            topic: topic.into(),
            partition,
            value: offset.map(|offset| OffsetCommitValue {
                offset,
                leader_epoch: -1,
                metadata: String::new(),
                commit_timestamp: 0,
            }),
        }
    }

    fn replayed(records: &[Record]) -> Coordinator {
        let mut c = Coordinator::new(CoordinatorConfig::default());
        for r in records {
            c.replay(r).expect("replays");
        }
        c
    }

    #[test]
    fn runs_of_commits_replay_as_one_record_at_a_time() {
        // Runs of one group and topic (applied with one lookup), runs with tombstones (applied
        // one by one), runs broken by another topic, group or record kind.
        let mut records = Vec::new();
        for round in 0..4i64 {
            for p in 0..6 {
                records.push(commit(
                    "g",
                    "t",
                    (p * 7 + round as i32) % 5,
                    Some(round * 10 + 1),
                ));
            }
            records.push(commit("g", "u", 1, Some(round)));
            records.push(commit("g", "t", 2, None));
            records.push(commit("g", "t", 3, Some(round)));
            records.push(commit("h", "t", 3, Some(round)));
            records.push(commit("h", "t", 4, Some(round)));
            records.push(Record::GroupMetadata {
                group_id: "s".into(),
                value: Some(Default::default()),
            });
            records.push(commit("h", "t", 3, None));
            records.push(commit("h", "t", 4, None));
            records.push(commit("h", "t", 5, None));
            records.push(commit("g", "u", 1, None));
        }
        let one_by_one = replayed(&records);
        let mut batched = Coordinator::new(CoordinatorConfig::default());
        batched.replay_all(&records).expect("replays");
        assert_eq!(batched.state_hash(), one_by_one.state_hash());
        assert_eq!(
            batched.offsets.sorted_rows(),
            one_by_one.offsets.sorted_rows()
        );
        assert_eq!(batched.offsets("g").map(|o| o.len()), Some(4));
        assert!(batched.offsets("h").is_none());
    }

    #[test]
    fn committed_partitions_come_out_sorted_whatever_the_commit_order() {
        let c = replayed(&[
            commit("g", "zeta", 3, Some(1)),
            commit("g", "alpha", 7, Some(2)),
            commit("g", "zeta", 0, Some(3)),
            commit("g", "alpha", 1, Some(4)),
            commit("g", "mid", 2, Some(5)),
            commit("g", "alpha", 7, Some(6)),
        ]);
        let o = c.offsets("g").expect("offsets of g");
        let rows: Vec<_> = o.iter().map(|(t, p, v)| (t, p, v.offset)).collect();
        assert_eq!(
            rows,
            [
                ("alpha", 1, 4),
                ("alpha", 7, 6),
                ("mid", 2, 5),
                ("zeta", 0, 3),
                ("zeta", 3, 1)
            ]
        );
        assert_eq!(o.len(), 5);
        let fetched = c
            .offset_fetch(&OffsetFetchInput {
                group_id: "g".into(),
                member_id: None,
                member_epoch: -1,
                topics: None,
            })
            .expect("fetch");
        let fetched: Vec<_> = fetched
            .iter()
            .map(|f| (f.topic.as_str(), f.partition))
            .collect();
        assert_eq!(
            fetched,
            [
                ("alpha", 1),
                ("alpha", 7),
                ("mid", 2),
                ("zeta", 0),
                ("zeta", 3)
            ]
        );
    }

    #[test]
    fn tombstones_remove_the_partition_then_the_topic_then_the_group() {
        let mut c = replayed(&[
            commit("g", "a", 0, Some(1)),
            commit("g", "a", 1, Some(1)),
            commit("g", "b", 0, Some(1)),
        ]);
        c.replay(&commit("g", "a", 0, None)).unwrap();
        // A tombstone for what is not there changes nothing.
        c.replay(&commit("g", "a", 9, None)).unwrap();
        c.replay(&commit("other", "a", 0, None)).unwrap();
        assert_eq!(c.offsets("g").map(GroupOffsets::len), Some(2));
        c.replay(&commit("g", "a", 1, None)).unwrap();
        assert!(!c.offsets("g").unwrap().contains("a", 1));
        c.replay(&commit("g", "b", 0, None)).unwrap();
        assert!(c.offsets("g").is_none());
        assert!(c.offsets("other").is_none());
        assert_eq!(c.state_hash(), replayed(&[]).state_hash());
    }

    #[test]
    fn the_state_hash_covers_committed_offsets_and_not_their_order() {
        let one = replayed(&[commit("g", "t", 0, Some(1)), commit("h", "u", 1, Some(1))]);
        let same = replayed(&[commit("h", "u", 1, Some(1)), commit("g", "t", 0, Some(1))]);
        let other = replayed(&[commit("g", "t", 0, Some(2)), commit("h", "u", 1, Some(1))]);
        assert_eq!(one.state_hash(), same.state_hash());
        assert_ne!(one.state_hash(), other.state_hash());
        assert_ne!(one.state_hash(), replayed(&[]).state_hash());
    }

    #[test]
    fn floors_are_the_highest_offset_any_group_committed() {
        let c = replayed(&[
            commit("g", "t", 0, Some(5)),
            commit("h", "t", 0, Some(9)),
            commit("h", "t", 1, Some(2)),
        ]);
        let mut floors = c.offset_floors();
        floors.sort();
        assert_eq!(
            floors,
            [(("t".to_string(), 0), 9), (("t".to_string(), 1), 2)]
        );
    }
}
