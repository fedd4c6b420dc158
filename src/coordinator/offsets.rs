//! OffsetCommit and OffsetFetch against streams groups (spec §8).

use serde::{Deserialize, Serialize};

use super::{Coordinator, Outcome};
use crate::error::{ApiError, ErrorCode};
use crate::records::{OffsetCommitValue, Record};
use crate::types::Millis;

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
        let value = |t: &str, p: i32| committed.and_then(|c| c.get(&(t.to_string(), p)));
        let row = |t: &str, p: i32| match value(t, p) {
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
                .map(|c| c.keys().map(|(t, p)| row(t, *p)).collect())
                .unwrap_or_default(),
        })
    }
}
