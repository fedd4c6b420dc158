//! KIP-848 consumer group steps of the scenario runner (docs/consumer-protocol.md). Members are
//! named in the files (`member=c1`); the name is the member id unless `member-id=` says
//! otherwise. Partitions are written by topic name, `t:0,1;u:2`; the runner maps names to the
//! topic ids the coordinator uses.

use crate::util::map::BTreeMap;

use super::{Runner, err, mismatch};
use crate::assignor::consumer::TopicId;
use crate::coordinator::RequestContext;
use crate::protocol::consumer::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, TopicIdPartitions,
};
use crate::records::{PartitionEpochs, Record};
use crate::scenario::parse::{Args, ScenarioError, list};

/// What the client side of a consumer member remembers.
#[derive(Debug, Clone, Default)]
struct Member {
    group: String,
    member_id: String,
    epoch: i32,
    /// The last assignment received.
    owned: Vec<TopicIdPartitions>,
}

/// The runner's consumer clients.
#[derive(Debug, Clone, Default)]
pub(super) struct Clients {
    members: BTreeMap<String, Member>,
    last: Option<ConsumerGroupHeartbeatResponse>,
    described: Option<ConsumerGroupDescribeResponse>,
}

/// The commands of this file.
pub(super) fn is_consumer(cmd: &str) -> bool {
    matches!(
        cmd,
        "consumer-join"
            | "consumer-heartbeat"
            | "consumer-leave"
            | "consumer-describe"
            | "expect-consumer"
            | "expect-consumer-member"
            | "expect-consumer-group"
            | "expect-consumer-described"
    )
}

impl Runner {
    fn topic_names(&self) -> BTreeMap<TopicId, String> {
        self.metadata
            .topics
            .keys()
            .map(|n| (TopicId::from_name(n), n.clone()))
            .collect()
    }

    fn name_of(&self, id: &TopicId) -> String {
        self.topic_names()
            .remove(id)
            .unwrap_or_else(|| id.to_string())
    }

    /// `t:0,1;u:2`, topics by name, partitions sorted; `""` for none.
    pub(super) fn format_partitions<'a>(
        &self,
        parts: impl IntoIterator<Item = (&'a TopicId, Vec<i32>)>,
    ) -> String {
        let mut by_name: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for (id, ps) in parts {
            by_name.entry(self.name_of(id)).or_default().extend(ps);
        }
        by_name
            .into_iter()
            .filter(|(_, ps)| !ps.is_empty())
            .map(|(n, mut ps)| {
                ps.sort_unstable();
                let ps: Vec<String> = ps.iter().map(i32::to_string).collect();
                format!("{n}:{}", ps.join(","))
            })
            .collect::<Vec<_>>()
            .join(";")
    }

    fn format_epochs(&self, parts: &PartitionEpochs) -> String {
        self.format_partitions(
            parts
                .iter()
                .map(|(t, ps)| (t, ps.keys().copied().collect())),
        )
    }

    /// `t:0@2,1@3;u:2@3`.
    fn format_partition_epochs(&self, parts: &PartitionEpochs) -> String {
        let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (t, ps) in parts {
            by_name
                .entry(self.name_of(t))
                .or_default()
                .extend(ps.iter().map(|(p, e)| format!("{p}@{e}")));
        }
        by_name
            .into_iter()
            .map(|(n, ps)| format!("{n}:{}", ps.join(",")))
            .collect::<Vec<_>>()
            .join(";")
    }

    fn parse_partitions(spec: &str) -> Vec<TopicIdPartitions> {
        spec.split(';')
            .filter(|s| !s.is_empty() && *s != "[]")
            .map(|e| {
                let (t, ps) = e.split_once(':').unwrap_or((e, ""));
                TopicIdPartitions {
                    topic_id: TopicId::from_name(t),
                    partitions: ps.split(',').filter_map(|p| p.parse().ok()).collect(),
                }
            })
            .collect()
    }

    pub(super) fn consumer_step(&mut self, cmd: &str, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        match cmd {
            "consumer-join" | "consumer-heartbeat" | "consumer-leave" => {
                let name = a.req("member")?.to_string();
                let known = self.consumer.members.get(&name).cloned();
                let group = a
                    .get("group")
                    .map(String::from)
                    .or_else(|| known.as_ref().map(|m| m.group.clone()))
                    .unwrap_or_else(|| "g".into());
                let member_id = a
                    .get("member-id")
                    .map(String::from)
                    .or_else(|| known.as_ref().map(|m| m.member_id.clone()))
                    .unwrap_or_else(|| name.clone());
                let default_epoch = match cmd {
                    "consumer-join" => 0,
                    "consumer-leave" => -1,
                    _ => known.as_ref().map_or(0, |m| m.epoch),
                };
                let epoch = a.int("epoch")?.unwrap_or(default_epoch);
                let owned = match a.get("owned") {
                    Some(spec) => Some(Self::parse_partitions(spec)),
                    None if a.flag("owned") || cmd == "consumer-join" => {
                        Some(if cmd == "consumer-join" {
                            Vec::new()
                        } else {
                            known.as_ref().map(|m| m.owned.clone()).unwrap_or_default()
                        })
                    }
                    None => None,
                };
                let req = ConsumerGroupHeartbeatRequest {
                    group_id: group.clone(),
                    member_id: member_id.clone(),
                    member_epoch: epoch,
                    instance_id: a.get("instance").map(String::from),
                    rack_id: a.get("rack").map(String::from),
                    rebalance_timeout_ms: a
                        .int("rebalance-timeout")?
                        .unwrap_or(if cmd == "consumer-join" { 300_000 } else { -1 }),
                    subscribed_topic_names: a
                        .get("topics")
                        .map(|t| if t == "[]" { Vec::new() } else { list(t) }),
                    subscribed_topic_regex: a.get("regex").map(String::from),
                    server_assignor: a.get("assignor").map(String::from),
                    topic_partitions: owned,
                };
                let ctx = RequestContext {
                    client_id: a.get("client-id").unwrap_or(&name).to_string(),
                    client_host: "/127.0.0.1".into(),
                    api_version: a.int("version")?.unwrap_or(1),
                };
                a.finish(&["owned"])?;
                let now = self.now;
                let out = self.coord().consumer_group_heartbeat(now, &ctx, &req);
                let r = out.response.clone();
                if r.error_code == 0 {
                    let m = self.consumer.members.entry(name).or_default();
                    m.group = group;
                    m.member_id = r.member_id.clone().unwrap_or(member_id);
                    m.epoch = r.member_epoch;
                    if let Some(assignment) = &r.assignment {
                        m.owned = assignment.clone();
                    }
                    if r.member_epoch < 0 {
                        m.owned.clear();
                    }
                }
                self.consumer.last = Some(r);
                self.record(out.records);
                Ok(())
            }
            "consumer-describe" => {
                let req = ConsumerGroupDescribeRequest {
                    group_ids: vec![a.get("group").unwrap_or("g").to_string()],
                    include_authorized_operations: a.flag("operations"),
                };
                let version = a.int("version")?.unwrap_or(1);
                a.finish(&["operations"])?;
                self.consumer.described = Some(self.coord().consumer_group_describe(&req, version));
                Ok(())
            }
            "expect-consumer" => {
                let r = self
                    .consumer
                    .last
                    .clone()
                    .ok_or_else(|| err(n, "no consumer heartbeat yet"))?;
                let mut checks: Vec<(&str, String)> = vec![
                    (
                        "error",
                        crate::error::ErrorCode(r.error_code).name().to_string(),
                    ),
                    ("message", r.error_message.clone().unwrap_or_default()),
                    ("epoch", r.member_epoch.to_string()),
                    ("member-id", r.member_id.clone().unwrap_or("-".into())),
                    ("interval", r.heartbeat_interval_ms.to_string()),
                    (
                        "assignment",
                        match &r.assignment {
                            None => "-".into(),
                            Some(a) => {
                                let s = self.format_partitions(
                                    a.iter().map(|t| (&t.topic_id, t.partitions.clone())),
                                );
                                if s.is_empty() { "[]".into() } else { s }
                            }
                        },
                    ),
                ];
                if let Some(sub) = a.get("message~") {
                    self.checks += 1;
                    if !r.error_message.clone().unwrap_or_default().contains(sub) {
                        return Err(mismatch(n, "message~", sub, &checks[1].1));
                    }
                }
                checks.retain(|(k, _)| a.get(k).is_some());
                for (k, got) in checks {
                    self.checks += 1;
                    let want = a.get(k).unwrap_or_default();
                    if want != got {
                        return Err(mismatch(n, k, want, &got));
                    }
                }
                a.finish(&[])
            }
            "expect-consumer-member" => {
                let name = a.req("member")?.to_string();
                let known = self.consumer.members.get(&name).cloned();
                let gid = a
                    .get("group")
                    .map(String::from)
                    .or_else(|| known.as_ref().map(|m| m.group.clone()))
                    .unwrap_or_else(|| "g".into());
                let mid = known
                    .map(|m| m.member_id)
                    .unwrap_or_else(|| self.classic_id(&name));
                let c = self
                    .coord
                    .as_ref()
                    .ok_or_else(|| err(n, "no coordinator"))?;
                let g = c.consumer_group(&gid);
                let m = g.and_then(|g| g.members.get(&mid));
                let mut checks: Vec<(&str, String)> = Vec::new();
                if a.flag("missing") {
                    self.checks += 1;
                    if m.is_some() {
                        return Err(mismatch(n, "missing", "true", "false"));
                    }
                }
                if let (Some(g), Some(m)) = (g, m) {
                    let target = g.target_assignment.get(&mid).cloned().unwrap_or_default();
                    checks.extend([
                        ("state", m.state.name().to_string()),
                        ("epoch", m.member_epoch.to_string()),
                        ("previous-epoch", m.previous_member_epoch.to_string()),
                        ("assigned", self.format_epochs(&m.assigned)),
                        ("assigned-epochs", self.format_partition_epochs(&m.assigned)),
                        ("pending", self.format_epochs(&m.pending_revocation)),
                        (
                            "target",
                            self.format_partitions(target.iter().map(|(t, ps)| (t, ps.clone()))),
                        ),
                        (
                            "topics",
                            m.subscribed_topic_names
                                .iter()
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(","),
                        ),
                        ("instance", m.instance_id.clone().unwrap_or("-".into())),
                    ]);
                }
                self.check_fields(a, n, checks, &["missing", "member", "group"])
            }
            "expect-consumer-group" => {
                let gid = a.get("group").unwrap_or("g").to_string();
                let c = self
                    .coord
                    .as_ref()
                    .ok_or_else(|| err(n, "no coordinator"))?;
                let g = c.consumer_group(&gid);
                let mut checks: Vec<(&str, String)> = Vec::new();
                if a.flag("missing") {
                    self.checks += 1;
                    if g.is_some() {
                        return Err(mismatch(n, "missing", "true", "false"));
                    }
                }
                if let Some(g) = g {
                    checks.extend([
                        ("state", g.state().name().to_string()),
                        ("epoch", g.group_epoch.to_string()),
                        ("assignment-epoch", g.assignment_epoch.to_string()),
                        (
                            "members",
                            g.members
                                .keys()
                                .map(|id| self.member_label(id))
                                .collect::<Vec<_>>()
                                .join(","),
                        ),
                        (
                            "classic-members",
                            g.members
                                .values()
                                .filter(|m| m.uses_classic_protocol())
                                .map(|m| self.member_label(&m.member_id))
                                .collect::<Vec<_>>()
                                .join(","),
                        ),
                    ]);
                }
                self.check_fields(a, n, checks, &["missing", "group"])
            }
            "expect-consumer-described" => {
                let d = self
                    .consumer
                    .described
                    .clone()
                    .and_then(|d| d.groups.into_iter().next())
                    .ok_or_else(|| err(n, "no consumer-describe yet"))?;
                let member = a.get("member").and_then(|name| {
                    let id = self
                        .consumer
                        .members
                        .get(name)
                        .map_or_else(|| self.classic_id(name), |m| m.member_id.clone());
                    d.members.iter().find(|m| m.member_id == id).cloned()
                });
                let mut checks: Vec<(&str, String)> = vec![
                    (
                        "error",
                        crate::error::ErrorCode(d.error_code).name().to_string(),
                    ),
                    ("message", d.error_message.clone().unwrap_or_default()),
                    ("state", d.group_state.clone()),
                    ("epoch", d.group_epoch.to_string()),
                    ("assignment-epoch", d.assignment_epoch.to_string()),
                    ("assignor", d.assignor_name.clone()),
                    ("members", d.members.len().to_string()),
                    ("operations", d.authorized_operations.to_string()),
                ];
                if let Some(m) = &member {
                    let fmt = |v: &[crate::protocol::consumer::DescribedTopicPartitions]| {
                        v.iter()
                            .map(|t| {
                                let mut ps = t.partitions.clone();
                                ps.sort_unstable();
                                let ps: Vec<String> = ps.iter().map(i32::to_string).collect();
                                format!("{}:{}", t.topic_name, ps.join(","))
                            })
                            .collect::<Vec<_>>()
                            .join(";")
                    };
                    checks.extend([
                        ("member-epoch", m.member_epoch.to_string()),
                        ("assignment", fmt(&m.assignment)),
                        ("target", fmt(&m.target_assignment)),
                        ("topics", m.subscribed_topic_names.join(",")),
                        (
                            "regex",
                            m.subscribed_topic_regex.clone().unwrap_or("-".into()),
                        ),
                        ("member-type", m.member_type.to_string()),
                        ("client-host", m.client_host.clone()),
                    ]);
                } else if a.get("member").is_some() {
                    return Err(err(n, "no such member in the description"));
                }
                self.check_fields(a, n, checks, &["member"])
            }
            other => Err(err(n, format!("unknown command `{other}`"))),
        }
    }

    /// Compare every given field with `got`; fields not offered are errors.
    fn check_fields(
        &mut self,
        a: &Args,
        n: usize,
        got: Vec<(&str, String)>,
        extra: &[&str],
    ) -> Result<(), ScenarioError> {
        for (k, v) in &got {
            if let Some(want) = a.get(k) {
                self.checks += 1;
                if want != v {
                    return Err(mismatch(n, k, want, v));
                }
            }
        }
        let mut known: Vec<&str> = got.iter().map(|(k, _)| *k).collect();
        known.extend(extra.iter().copied());
        for k in a.pairs.keys() {
            if !known.contains(&k.as_str()) {
                return Err(err(n, format!("unknown or unavailable field `{k}`")));
            }
        }
        Ok(())
    }

    /// `expect-record` fields of a consumer group record.
    pub(super) fn consumer_record_fields(&self, r: &Record) -> Vec<(&'static str, String)> {
        let opt = |v: &Option<String>| v.clone().unwrap_or("-".into());
        match r {
            Record::ConsumerGroupMetadata { value: Some(v), .. } => {
                vec![("epoch", v.epoch.to_string())]
            }
            Record::ConsumerMemberMetadata { value: Some(v), .. } => vec![
                ("instance", opt(&v.instance_id)),
                ("rack", opt(&v.rack_id)),
                ("topics", v.subscribed_topic_names.join(",")),
                ("regex", opt(&v.subscribed_topic_regex)),
                ("assignor", opt(&v.server_assignor)),
                ("rebalance-timeout", v.rebalance_timeout_ms.to_string()),
            ],
            Record::ConsumerTargetAssignmentMetadata { value: Some(v), .. } => vec![
                ("epoch", v.assignment_epoch.to_string()),
                ("timestamp", v.assignment_timestamp.to_string()),
            ],
            Record::ConsumerTargetAssignmentMember { value: Some(v), .. } => vec![(
                "partitions",
                self.format_partitions(v.iter().map(|(t, ps)| (t, ps.clone()))),
            )],
            Record::ConsumerCurrentMemberAssignment { value: Some(v), .. } => vec![
                ("epoch", v.member_epoch.to_string()),
                ("previous-epoch", v.previous_member_epoch.to_string()),
                ("state", v.state.name().to_string()),
                ("assigned", self.format_epochs(&v.assigned)),
                ("assigned-epochs", self.format_partition_epochs(&v.assigned)),
                ("pending", self.format_epochs(&v.pending_revocation)),
            ],
            Record::ConsumerRegularExpression { value: Some(v), .. } => {
                vec![("topics", v.topics.join(","))]
            }
            _ => Vec::new(),
        }
    }
}
