//! TEMPORARY stand-in for the parts of the coordinator API that have not landed on `main` yet
//! (same names and signatures as the published contract). Removed when the real one lands.
#![allow(dead_code)]

use std::collections::BTreeMap;

use crate::config::CoordinatorConfig;
pub use crate::coordinator::{Outcome, RequestContext, TimerChange, TimerKey};
use crate::error::{ApiError, ErrorCode};
use crate::protocol::*;
use crate::records::{MemberMetadataValue, OffsetCommitValue, Record};
use crate::topology::MetadataImage;
use crate::types::Millis;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedGroup {
    pub group_id: String,
    pub protocol_type: String,
    pub group_state: String,
    pub group_type: String,
}
#[derive(Debug, Clone)]
pub struct OffsetCommitInput {
    pub group_id: String,
    pub member_id: String,
    pub member_epoch: i32,
    pub group_instance_id: Option<String>,
    pub api_version: i16,
    pub transactional: bool,
    pub topics: Vec<OffsetCommitTopic>,
}
#[derive(Debug, Clone)]
pub struct OffsetCommitTopic {
    pub name: String,
    pub partitions: Vec<OffsetCommitPartition>,
}
#[derive(Debug, Clone)]
pub struct OffsetCommitPartition {
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
}
#[derive(Debug, Clone)]
pub struct OffsetFetchInput {
    pub group_id: String,
    pub member_id: Option<String>,
    pub member_epoch: i32,
    pub topics: Option<Vec<(String, Vec<i32>)>>,
}
#[derive(Debug, Clone)]
pub struct FetchedOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: String,
}
#[derive(Debug, Clone, thiserror::Error)]
#[error("replay error: {0}")]
pub struct ReplayError(pub String);

#[derive(Default)]
pub struct Coordinator {
    config: CoordinatorConfig,
    metadata: MetadataImage,
    groups: BTreeMap<String, BTreeMap<String, i32>>,
    offsets: BTreeMap<(String, String, i32), OffsetCommitValue>,
}

impl Coordinator {
    pub fn new(config: CoordinatorConfig) -> Coordinator {
        Coordinator {
            config,
            ..Default::default()
        }
    }
    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }
    pub fn set_config(&mut self, config: CoordinatorConfig) {
        self.config = config;
    }
    pub fn set_metadata(&mut self, image: MetadataImage) {
        self.metadata = image;
    }
    pub fn metadata(&self) -> &MetadataImage {
        &self.metadata
    }
    fn out<R>(&mut self, response: R, records: Vec<Record>) -> Outcome<R> {
        for r in &records {
            self.replay(r).unwrap();
        }
        Outcome {
            response,
            records,
            timers: vec![],
            topics_to_create: vec![],
        }
    }
    pub fn streams_group_heartbeat(
        &mut self,
        _now: Millis,
        ctx: &RequestContext,
        req: &StreamsGroupHeartbeatRequest,
    ) -> Outcome<StreamsGroupHeartbeatResponse> {
        let mut resp = StreamsGroupHeartbeatResponse {
            member_id: req.member_id.clone(),
            heartbeat_interval_ms: self.config.heartbeat_interval_ms,
            ..Default::default()
        };
        let mut recs = vec![];
        if req.member_epoch == 0 {
            let known = self
                .groups
                .get(&req.group_id)
                .and_then(|g| g.get(&req.member_id))
                .copied();
            resp.member_epoch = known.unwrap_or(0) + 1;
            recs.push(Record::MemberMetadata {
                group_id: req.group_id.clone(),
                member_id: req.member_id.clone(),
                value: Some(MemberMetadataValue {
                    instance_id: None,
                    rack_id: None,
                    client_id: ctx.client_id.clone(),
                    client_host: ctx.client_host.clone(),
                    rebalance_timeout_ms: resp.member_epoch,
                    topology_epoch: 0,
                    process_id: req.process_id.clone().unwrap_or_default(),
                    user_endpoint: None,
                    client_tags: BTreeMap::new(),
                }),
            });
        } else if req.member_epoch < 0 {
            if self
                .groups
                .get(&req.group_id)
                .and_then(|g| g.get(&req.member_id))
                .is_none()
            {
                resp.error_code = ErrorCode::UNKNOWN_MEMBER_ID.0;
            } else {
                recs.push(Record::MemberMetadata {
                    group_id: req.group_id.clone(),
                    member_id: req.member_id.clone(),
                    value: None,
                });
                resp.member_epoch = req.member_epoch;
            }
        } else {
            match self
                .groups
                .get(&req.group_id)
                .and_then(|g| g.get(&req.member_id))
            {
                Some(e) => resp.member_epoch = *e,
                None => resp.error_code = ErrorCode::UNKNOWN_MEMBER_ID.0,
            }
        }
        self.out(resp, recs)
    }
    pub fn streams_group_describe(
        &self,
        req: &StreamsGroupDescribeRequest,
        _api_version: i16,
    ) -> StreamsGroupDescribeResponse {
        let groups = req
            .group_ids
            .iter()
            .map(|g| match self.groups.get(g) {
                Some(ms) => DescribedGroup {
                    group_id: g.clone(),
                    group_state: if ms.is_empty() { "Empty" } else { "Stable" }.into(),
                    members: ms
                        .iter()
                        .map(|(m, e)| DescribedMember {
                            member_id: m.clone(),
                            member_epoch: *e,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                },
                None => DescribedGroup {
                    group_id: g.clone(),
                    error_code: ErrorCode::GROUP_ID_NOT_FOUND.0,
                    error_message: Some(format!("Group {g} not found.")),
                    ..Default::default()
                },
            })
            .collect();
        StreamsGroupDescribeResponse {
            groups,
            ..Default::default()
        }
    }
    pub fn list_groups(&self, _s: &[String], _t: &[String]) -> Vec<ListedGroup> {
        self.groups
            .iter()
            .map(|(g, ms)| ListedGroup {
                group_id: g.clone(),
                protocol_type: "streams".into(),
                group_state: if ms.is_empty() { "Empty" } else { "Stable" }.into(),
                group_type: "streams".into(),
            })
            .collect()
    }
    pub fn delete_groups(
        &mut self,
        _now: Millis,
        group_ids: &[String],
    ) -> Outcome<Vec<(String, ErrorCode)>> {
        let mut res = vec![];
        let mut recs = vec![];
        for g in group_ids {
            match self.groups.get(g) {
                None => res.push((g.clone(), ErrorCode::GROUP_ID_NOT_FOUND)),
                Some(ms) if !ms.is_empty() => res.push((g.clone(), ErrorCode::NON_EMPTY_GROUP)),
                Some(_) => {
                    res.push((g.clone(), ErrorCode::NONE));
                    recs.push(Record::GroupMetadata {
                        group_id: g.clone(),
                        value: None,
                    });
                }
            }
        }
        self.out(res, recs)
    }
    pub fn offset_commit(
        &mut self,
        now: Millis,
        req: &OffsetCommitInput,
    ) -> Outcome<Vec<(String, Vec<(i32, ErrorCode)>)>> {
        let mut recs = vec![];
        let res = req
            .topics
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.partitions
                        .iter()
                        .map(|p| {
                            recs.push(Record::OffsetCommit {
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
                            (p.partition, ErrorCode::NONE)
                        })
                        .collect(),
                )
            })
            .collect();
        self.out(res, recs)
    }
    pub fn offset_fetch(&self, req: &OffsetFetchInput) -> Result<Vec<FetchedOffset>, ApiError> {
        Ok(self
            .offsets
            .iter()
            .filter(|((g, t, p), _)| {
                g == &req.group_id
                    && req
                        .topics
                        .as_ref()
                        .is_none_or(|ts| ts.iter().any(|(n, ps)| n == t && ps.contains(p)))
            })
            .map(|((_, t, p), v)| FetchedOffset {
                topic: t.clone(),
                partition: *p,
                offset: v.offset,
                leader_epoch: v.leader_epoch,
                metadata: v.metadata.clone(),
            })
            .collect())
    }
    pub fn next_timer(&self) -> Option<(Millis, TimerKey)> {
        None
    }
    pub fn fire_due_timers(&mut self, _now: Millis) -> Vec<Outcome<()>> {
        vec![]
    }
    pub fn replay(&mut self, record: &Record) -> Result<(), ReplayError> {
        match record {
            Record::MemberMetadata {
                group_id,
                member_id,
                value,
            } => {
                let g = self.groups.entry(group_id.clone()).or_default();
                match value {
                    Some(v) => {
                        g.insert(member_id.clone(), v.rebalance_timeout_ms);
                    }
                    None => {
                        g.remove(member_id);
                    }
                }
            }
            Record::GroupMetadata {
                group_id,
                value: None,
            } => {
                self.groups.remove(group_id);
            }
            Record::OffsetCommit {
                group_id,
                topic,
                partition,
                value,
            } => {
                let k = (group_id.clone(), topic.clone(), *partition);
                match value {
                    Some(v) => {
                        self.offsets.insert(k, v.clone());
                    }
                    None => {
                        self.offsets.remove(&k);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
    pub fn on_loaded(&mut self, _now: Millis) -> Vec<TimerChange> {
        vec![]
    }
    pub fn state_hash(&self) -> String {
        format!(
            "{:x}",
            crc32c::crc32c(format!("{:?}{:?}", self.groups, self.offsets).as_bytes())
        )
    }
    pub fn group_ids(&self) -> Vec<String> {
        self.groups.keys().cloned().collect()
    }
}
