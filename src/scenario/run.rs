//! Executes scenario files against a [`Coordinator`].

mod classic;
mod consumer;

use crate::util::map::BTreeMap;

use super::parse::{Args, ScenarioError, format_tasks, list, parse_tasks, tokenize};
use crate::config::CoordinatorConfig;
use crate::coordinator::{
    Coordinator, OffsetCommitInput, OffsetCommitPartition, OffsetCommitTopic, OffsetFetchInput,
    RequestContext, TimerKey,
};
use crate::error::ErrorCode;
use crate::protocol::{
    self, CopartitionGroup, Endpoint, KeyValue, StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
    Subtopology, TaskOffset, TopicInfo, Topology, status_code,
};
use crate::records::Record;
use crate::topology::{InternalTopic, MetadataImage};
use crate::types::{Millis, TaskSet};

/// What the client side of a member remembers between heartbeats.
#[derive(Debug, Clone, Default)]
struct Client {
    epoch: i32,
    active: TaskSet,
    standby: TaskSet,
    warmup: TaskSet,
    endpoint_epoch: i32,
}

/// The result of the last operation, checked by `expect`.
#[derive(Debug, Clone)]
enum Last {
    None,
    Heartbeat(Box<StreamsGroupHeartbeatResponse>),
    /// A draft-dialect StreamsGroupInitialize (docs/draft-dialect.md §D5).
    Initialize(crate::coordinator::DraftInitializeResponse),
    Result(ErrorCode, Option<i64>),
    Describe(Box<StreamsGroupDescribeResponse>),
    List(Vec<crate::coordinator::ListedGroup>),
}

/// Scenario state: the coordinator, the clock, the record log and the members' client state.
pub struct Runner {
    config: CoordinatorConfig,
    config_entries: BTreeMap<String, String>,
    coord: Option<Coordinator>,
    metadata: MetadataImage,
    topologies: BTreeMap<String, Topology>,
    current_topology: String,
    now: Millis,
    log: Vec<Record>,
    clients: BTreeMap<String, Client>,
    last: Last,
    last_records: Vec<Record>,
    last_topics: Vec<InternalTopic>,
    classic: classic::Clients,
    consumer: consumer::Clients,
    /// `dialect draft`: heartbeats speak the draft design (docs/draft-dialect.md).
    draft: bool,
    /// The draft fields of the last draft heartbeat's response: should-initialize, topology id.
    last_draft: Option<(bool, String)>,
    /// Checks performed, for reporting.
    pub checks: usize,
}

fn err(line: usize, m: impl Into<String>) -> ScenarioError {
    ScenarioError::new(line, m)
}

fn mismatch(line: usize, what: &str, expected: &str, actual: &str) -> ScenarioError {
    err(
        line,
        format!("{what}: expected `{expected}`, got `{actual}`"),
    )
}

fn opt_tasks(t: &Option<Vec<protocol::TaskIds>>) -> String {
    match t {
        None => "-".into(),
        Some(t) => format_tasks(&TaskSet::from_task_ids(t)),
    }
}

/// A record as scenario files name it: `Name(key)`, `-Name(key)` for a tombstone.
pub fn record_token(r: &Record) -> String {
    let key = match r {
        Record::MemberMetadata { member_id, .. }
        | Record::TargetAssignmentMember { member_id, .. }
        | Record::CurrentMemberAssignment { member_id, .. }
        | Record::ConsumerMemberMetadata { member_id, .. }
        | Record::ConsumerTargetAssignmentMember { member_id, .. }
        | Record::ConsumerCurrentMemberAssignment { member_id, .. } => format!("({member_id})"),
        Record::ConsumerRegularExpression { regex, .. } => format!("({regex})"),
        Record::OffsetCommit {
            topic, partition, ..
        } => format!("({topic}-{partition})"),
        Record::GroupMetadata { .. }
        | Record::TargetAssignmentMetadata { .. }
        | Record::Topology { .. }
        | Record::ClassicGroupMetadata { .. }
        | Record::ConsumerGroupMetadata { .. }
        | Record::ConsumerGroupPartitionMetadata { .. }
        | Record::ConsumerTargetAssignmentMetadata { .. } => String::new(),
    };
    format!(
        "{}{}{key}",
        if r.is_tombstone() { "-" } else { "" },
        r.name()
    )
}

fn timer_token(k: &TimerKey, at: Millis) -> String {
    let g = |g: &str| {
        if g == "g" {
            String::new()
        } else {
            format!("{g}/")
        }
    };
    match k {
        TimerKey::SessionTimeout {
            group_id,
            member_id,
        } => {
            format!("session:{}{member_id}@{}", g(group_id), at.0)
        }
        TimerKey::RebalanceTimeout {
            group_id,
            member_id,
        } => {
            format!("rebalance:{}{member_id}@{}", g(group_id), at.0)
        }
        TimerKey::InitialRebalance { group_id } => format!("initial:{group_id}@{}", at.0),
        TimerKey::ClassicHeartbeat { .. }
        | TimerKey::ClassicJoin { .. }
        | TimerKey::ClassicSync { .. } => format!("{k:?}@{}", at.0),
        TimerKey::ConsumerRegex { group_id } => format!("regex:{group_id}@{}", at.0),
        TimerKey::ConsumerClassicJoin {
            group_id,
            member_id,
        } => format!("classic-join:{}{member_id}@{}", g(group_id), at.0),
        TimerKey::ConsumerClassicSync {
            group_id,
            member_id,
        } => format!("classic-sync:{}{member_id}@{}", g(group_id), at.0),
    }
}

impl Default for Runner {
    fn default() -> Self {
        Runner {
            config: CoordinatorConfig::default(),
            config_entries: BTreeMap::new(),
            coord: None,
            metadata: MetadataImage::default(),
            topologies: BTreeMap::new(),
            current_topology: "default".into(),
            now: Millis(0),
            log: Vec::new(),
            clients: BTreeMap::new(),
            last: Last::None,
            draft: false,
            last_draft: None,
            last_records: Vec::new(),
            last_topics: Vec::new(),
            classic: classic::Clients::default(),
            consumer: consumer::Clients::default(),
            checks: 0,
        }
    }
}

/// Run a whole scenario text. Returns the number of checks made.
pub fn run_scenario(text: &str) -> Result<usize, ScenarioError> {
    let mut r = Runner::default();
    r.run(text)?;
    Ok(r.checks)
}

impl Runner {
    /// Run every line, then the final replay check.
    pub fn run(&mut self, text: &str) -> Result<(), ScenarioError> {
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let n = i + 1;
            let line = lines[i].split(" #").next().unwrap_or("").trim();
            i += 1;
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = tokenize(line, n)?;
            let (cmd, rest) = words.split_first().ok_or_else(|| err(n, "empty line"))?;
            if cmd == "topology" {
                let mut subs = Vec::new();
                while i < lines.len() && lines[i].trim_start().starts_with("subtopology") {
                    subs.push((i + 1, lines[i].trim().to_string()));
                    i += 1;
                }
                self.topology(rest, n, &subs)?;
                continue;
            }
            self.step(cmd, rest, n)?;
        }
        self.replay_check(lines.len())
    }

    fn coord(&mut self) -> &mut Coordinator {
        if self.coord.is_none() {
            let mut c = Coordinator::new(self.config.clone());
            c.set_metadata(self.metadata.clone());
            self.coord = Some(c);
        }
        self.coord
            .get_or_insert_with(|| Coordinator::new(CoordinatorConfig::default()))
    }

    fn step(&mut self, cmd: &str, rest: &[String], n: usize) -> Result<(), ScenarioError> {
        let a = Args::parse(rest, n)?;
        match cmd {
            "config" | "set-config" | "unset-config" => {
                for (k, v) in &a.pairs {
                    self.config_entries.insert(k.clone(), v.clone());
                }
                if cmd == "unset-config" {
                    for k in &a.positional {
                        self.config_entries.remove(k);
                    }
                } else if !a.positional.is_empty() {
                    return Err(err(n, "usage: config key=value ..."));
                }
                let parsed = crate::config_keys::build(&self.config_entries)
                    .map_err(|e| err(n, e.to_string()))?;
                self.config = parsed.coordinator;
                if let Some(c) = &mut self.coord {
                    c.set_config(self.config.clone());
                }
                Ok(())
            }
            "topic" => {
                let [name, count] = a.positional.as_slice() else {
                    return Err(err(n, "usage: topic NAME PARTITIONS"));
                };
                let count: i32 = count.parse().map_err(|_| err(n, "bad partition count"))?;
                self.metadata.topics.insert(name.clone(), count);
                let m = self.metadata.clone();
                self.coord().set_metadata(m);
                Ok(())
            }
            "delete-topic" => {
                let [name] = a.positional.as_slice() else {
                    return Err(err(n, "usage: delete-topic NAME"));
                };
                self.metadata.topics.remove(name);
                let m = self.metadata.clone();
                self.coord().set_metadata(m);
                Ok(())
            }
            "use-topology" => {
                let name = a
                    .positional
                    .first()
                    .ok_or_else(|| err(n, "usage: use-topology NAME"))?;
                if !self.topologies.contains_key(name) {
                    return Err(err(n, format!("no topology named `{name}`")));
                }
                self.current_topology = name.clone();
                Ok(())
            }
            "join" | "heartbeat" | "leave" => self.heartbeat(cmd, &a),
            "dialect" => {
                self.draft = match a.positional.as_slice() {
                    [d] if d == "draft" => true,
                    [d] if d == "shipped" => false,
                    _ => return Err(err(n, "usage: dialect draft|shipped")),
                };
                Ok(())
            }
            "initialize" => {
                let name = a.get("topology").unwrap_or(&self.current_topology);
                let topology = self
                    .topologies
                    .get(name)
                    .cloned()
                    .ok_or_else(|| err(n, format!("no topology `{name}`")))?;
                let req = crate::coordinator::DraftInitializeRequest {
                    group_id: a.get("group").unwrap_or("g").to_string(),
                    topology,
                };
                a.finish(&[])?;
                let now = self.now;
                let out = self.coord().draft_initialize(now, &req);
                self.last_topics = out.topics_to_create;
                self.last = Last::Initialize(out.response);
                self.record(out.records);
                Ok(())
            }
            "advance" | "time" => {
                let v: i64 = a
                    .positional
                    .first()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| err(n, format!("usage: {cmd} MS")))?;
                self.now = if cmd == "advance" {
                    self.now.plus(v)
                } else {
                    Millis(v)
                };
                let now = self.now;
                let outs = self.coord().fire_due_timers(now);
                self.last_records = outs.into_iter().flat_map(|o| o.records).collect();
                self.log.extend(self.last_records.iter().cloned());
                self.deliver_classic();
                Ok(())
            }
            "delete" => {
                let group = a.get("group").unwrap_or("g").to_string();
                a.finish(&[])?;
                let now = self.now;
                let out = self
                    .coord()
                    .delete_groups(now, std::slice::from_ref(&group));
                self.last = Last::Result(out.response[0].1, None);
                self.record(out.records);
                Ok(())
            }
            "commit" => {
                let input = OffsetCommitInput {
                    group_id: a.get("group").unwrap_or("g").to_string(),
                    // Classic member names map to their ids; other words are ids.
                    member_id: self.classic_id(a.get("member").unwrap_or("")),
                    member_epoch: a.int("epoch")?.unwrap_or(-1),
                    group_instance_id: a.get("instance").map(String::from),
                    api_version: a.int("version")?.unwrap_or(9),
                    transactional: a.flag("transactional"),
                    topics: vec![OffsetCommitTopic {
                        name: a.req("topic")?.to_string(),
                        partitions: vec![OffsetCommitPartition {
                            partition: a.int("partition")?.unwrap_or(0),
                            offset: a.int("offset")?.unwrap_or(0),
                            leader_epoch: -1,
                            metadata: None,
                        }],
                    }],
                };
                a.finish(&["transactional"])?;
                let now = self.now;
                let out = self.coord().offset_commit(now, &input);
                let code = out.response.first().and_then(|t| t.1.first()).map(|p| p.1);
                self.last = Last::Result(code.unwrap_or(ErrorCode::NONE), None);
                self.record(out.records);
                Ok(())
            }
            "fetch" => {
                let input = OffsetFetchInput {
                    group_id: a.get("group").unwrap_or("g").to_string(),
                    member_id: a.get("member").map(String::from),
                    member_epoch: a.int("epoch")?.unwrap_or(-1),
                    topics: Some(vec![(
                        a.req("topic")?.to_string(),
                        vec![a.int("partition")?.unwrap_or(0)],
                    )]),
                };
                a.finish(&[])?;
                self.last = match self.coord().offset_fetch(&input) {
                    Ok(rows) => Last::Result(ErrorCode::NONE, rows.first().map(|r| r.offset)),
                    Err(e) => Last::Result(e.code, None),
                };
                self.last_records.clear();
                Ok(())
            }
            "describe" => {
                let req = StreamsGroupDescribeRequest {
                    group_ids: vec![a.get("group").unwrap_or("g").to_string()],
                    include_authorized_operations: false,
                    include_topology_description: a.flag("topology-description"),
                    unknown_tagged_fields: Vec::new(),
                };
                let version = a.int("version")?.unwrap_or(1);
                a.finish(&["topology-description"])?;
                let resp = self.coord().streams_group_describe(&req, version);
                self.last = Last::Describe(Box::new(resp));
                Ok(())
            }
            "list" => {
                let states = list(a.get("states").unwrap_or(""));
                let types = list(a.get("types").unwrap_or(""));
                a.finish(&[])?;
                self.last = Last::List(self.coord().list_groups(&states, &types));
                Ok(())
            }
            "inject-state" => {
                // Write a current-assignment record for the member with another state byte, as a
                // newer broker could have (spec §2.2: unknown bytes replay as UNKNOWN).
                let gid = a.get("group").unwrap_or("g").to_string();
                let mid = a.req("member")?.to_string();
                let byte: i8 = a
                    .int("state")?
                    .ok_or_else(|| err(n, "inject-state needs state=BYTE"))?;
                a.finish(&[])?;
                let member = self
                    .coord
                    .as_ref()
                    .and_then(|c| c.group(&gid))
                    .and_then(|g| g.members.get(&mid))
                    .ok_or_else(|| err(n, format!("no member `{mid}` in `{gid}`")))?;
                let mut value = member.assignment_value();
                value.state = crate::records::MemberState::from_value(byte);
                let record = Record::CurrentMemberAssignment {
                    group_id: gid,
                    member_id: mid,
                    value: Some(value),
                };
                self.coord()
                    .replay(&record)
                    .map_err(|e| err(n, format!("replay failed: {e}")))?;
                self.record(vec![record]);
                Ok(())
            }
            "restart" => {
                a.finish(&[])?;
                self.replay_check(n)?;
                let mut fresh = self.replayed(n)?;
                // The runner reads timers from the coordinator's own table (`expect-timers`).
                let _rearmed = fresh.on_loaded(self.now);
                self.coord = Some(fresh);
                Ok(())
            }
            "replay-check" => {
                a.finish(&[])?;
                self.replay_check(n)
            }
            "expect" => self.expect(&a),
            "expect-group" => self.expect_group(&a),
            "expect-member" => self.expect_member(&a),
            "expect-records" => {
                let want: Vec<String> = a.positional.clone();
                let got: Vec<String> = self
                    .last_records
                    .iter()
                    .map(|r| self.relabel_classic(record_token(r)))
                    .collect();
                self.checks += 1;
                let want_s = if want == ["none"] {
                    String::new()
                } else {
                    want.join(" ")
                };
                if want_s != got.join(" ") {
                    return Err(mismatch(n, "records", &want_s, &got.join(" ")));
                }
                Ok(())
            }
            "expect-record" => self.expect_record(&a),
            "expect-timers" => {
                let c = self.coord();
                let armed: Vec<(TimerKey, Millis)> = c
                    .timer_keys()
                    .into_iter()
                    .filter_map(|k| c.timer_deadline(&k).map(|d| (k, d)))
                    .collect();
                let mut got: Vec<String> = armed
                    .iter()
                    .map(|(k, d)| {
                        self.classic_timer_token(k, *d)
                            .unwrap_or_else(|| self.relabel_classic(timer_token(k, *d)))
                    })
                    .collect();
                got.sort();
                let mut want = a.positional.clone();
                want.retain(|w| w != "none");
                want.sort();
                self.checks += 1;
                if want != got {
                    return Err(mismatch(n, "timers", &want.join(" "), &got.join(" ")));
                }
                Ok(())
            }
            "expect-topics-to-create" => {
                let mut want: Vec<String> = a.positional.iter().flat_map(|p| list(p)).collect();
                want.retain(|w| w != "none");
                want.sort();
                let mut got: Vec<String> = self
                    .last_topics
                    .iter()
                    .map(|t| format!("{}:{}", t.name, t.partitions))
                    .collect();
                got.sort();
                self.checks += 1;
                if want != got {
                    return Err(mismatch(
                        n,
                        "topics to create",
                        &want.join(","),
                        &got.join(","),
                    ));
                }
                Ok(())
            }
            "create-internal-topics" => {
                a.finish(&[])?;
                for t in std::mem::take(&mut self.last_topics) {
                    self.metadata.topics.insert(t.name, t.partitions);
                }
                let m = self.metadata.clone();
                self.coord().set_metadata(m);
                Ok(())
            }
            cmd if classic::is_classic(cmd) => self.classic_step(cmd, &a),
            cmd if consumer::is_consumer(cmd) => self.consumer_step(cmd, &a),
            other => Err(err(n, format!("unknown command `{other}`"))),
        }
    }

    fn record(&mut self, records: Vec<Record>) {
        self.log.extend(records.iter().cloned());
        self.last_records = records;
    }

    fn topology(
        &mut self,
        rest: &[String],
        n: usize,
        subs: &[(usize, String)],
    ) -> Result<(), ScenarioError> {
        let a = Args::parse(rest, n)?;
        let name = a.get("name").unwrap_or("default").to_string();
        let epoch = a.int("epoch")?.unwrap_or(0);
        a.finish(&[])?;
        let mut subtopologies = Vec::new();
        for (ln, line) in subs {
            let words = tokenize(line, *ln)?;
            let s = Args::parse(&words[1..], *ln)?;
            let id = s
                .positional
                .first()
                .cloned()
                .ok_or_else(|| err(*ln, "subtopology needs an id"))?;
            let topic_info = |v: &str| -> Result<Vec<TopicInfo>, ScenarioError> {
                list(v)
                    .into_iter()
                    .map(|t| {
                        let (name, parts) = match t.split_once(':') {
                            Some((nm, p)) => (
                                nm.to_string(),
                                p.parse()
                                    .map_err(|_| err(*ln, format!("bad partitions in `{t}`")))?,
                            ),
                            None => (t.clone(), 0),
                        };
                        Ok(TopicInfo {
                            name,
                            partitions: parts,
                            ..Default::default()
                        })
                    })
                    .collect()
            };
            let source_topics = list(s.get("source").unwrap_or(""));
            let repartition_source_topics = topic_info(s.get("repartition-source").unwrap_or(""))?;
            let mut copartition_groups = Vec::new();
            for group in s
                .get("copartition")
                .unwrap_or("")
                .split('|')
                .filter(|g| !g.is_empty())
            {
                let mut g = CopartitionGroup::default();
                for t in group.split('+') {
                    if let Some(i) = source_topics.iter().position(|x| x == t) {
                        g.source_topics.push(i as i16);
                    } else if let Some(i) =
                        repartition_source_topics.iter().position(|x| x.name == t)
                    {
                        g.repartition_source_topics.push(i as i16);
                    } else {
                        return Err(err(
                            *ln,
                            format!("copartition topic `{t}` is not a source topic"),
                        ));
                    }
                }
                copartition_groups.push(g);
            }
            subtopologies.push(Subtopology {
                subtopology_id: id,
                source_topics,
                source_topic_regex: list(s.get("regex").unwrap_or("")),
                state_changelog_topics: topic_info(s.get("changelog").unwrap_or(""))?,
                repartition_sink_topics: list(s.get("repartition-sink").unwrap_or("")),
                repartition_source_topics,
                copartition_groups,
                unknown_tagged_fields: Vec::new(),
            });
            s.finish(&[s.positional[0].as_str()])?;
        }
        self.topologies.insert(
            name.clone(),
            Topology {
                epoch,
                subtopologies,
                unknown_tagged_fields: Vec::new(),
            },
        );
        self.current_topology = name;
        Ok(())
    }

    fn heartbeat(&mut self, cmd: &str, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let member = a.req("member")?.to_string();
        let group = a.get("group").unwrap_or("g").to_string();
        let client = self.clients.get(&member).cloned().unwrap_or_default();
        let joining = cmd == "join";
        let epoch = match cmd {
            "join" => 0,
            "leave" => a.int("epoch")?.unwrap_or(-1),
            _ => a.int("epoch")?.unwrap_or(client.epoch),
        };
        let tasks = |key: &str,
                     default: Option<TaskSet>|
         -> Result<Option<Vec<protocol::TaskIds>>, ScenarioError> {
            // `sub:` (no partitions) sends an entry with an empty partition list, which a
            // TaskSet cannot hold; keep such entries as written.
            if let Some(v) = a
                .get(key)
                .filter(|v| v.split(';').any(|g| g.ends_with(':')))
            {
                let mut out = Vec::new();
                for group in v.split(';').filter(|g| !g.is_empty()) {
                    let Some(set) = parse_tasks(group, n)? else {
                        return Err(err(n, format!("task list `{v}`")));
                    };
                    match group.strip_suffix(':') {
                        Some(sub) => out.push(protocol::TaskIds {
                            subtopology_id: sub.to_string(),
                            partitions: Vec::new(),
                            unknown_tagged_fields: Vec::new(),
                        }),
                        None => out.extend(set.to_task_ids()),
                    }
                }
                return Ok(Some(out));
            }
            let v = match a.get(key) {
                Some(v) => parse_tasks(v, n)?,
                None => default,
            };
            Ok(v.map(|t| t.to_task_ids()))
        };
        let owned = a.flag("owned");
        let default_of = |t: &TaskSet| -> Option<TaskSet> {
            if joining {
                Some(TaskSet::new())
            } else if owned {
                Some(t.clone())
            } else {
                None
            }
        };
        let topology = match a.get("topology") {
            Some("none") => None,
            Some(name) => Some(
                self.topologies
                    .get(name)
                    .cloned()
                    .ok_or_else(|| err(n, format!("no topology `{name}`")))?,
            ),
            None if joining || a.flag("topology") => Some(
                self.topologies
                    .get(&self.current_topology)
                    .cloned()
                    .ok_or_else(|| err(n, "no topology defined"))?,
            ),
            None => None,
        };
        let offsets = |key: &str| -> Result<Option<Vec<TaskOffset>>, ScenarioError> {
            let Some(v) = a.get(key) else { return Ok(None) };
            let mut out = Vec::new();
            for item in v.split(';').filter(|s| !s.is_empty()) {
                let (task, off) = item
                    .split_once('=')
                    .ok_or_else(|| err(n, format!("offset `{item}`: expected sub:p=offset")))?;
                let (sub, p) = task
                    .rsplit_once(':')
                    .ok_or_else(|| err(n, format!("offset `{item}`")))?;
                out.push(TaskOffset {
                    subtopology_id: sub.to_string(),
                    partition: p.parse().map_err(|_| err(n, format!("offset `{item}`")))?,
                    offset: off
                        .parse()
                        .map_err(|_| err(n, format!("offset `{item}`")))?,
                    unknown_tagged_fields: Vec::new(),
                });
            }
            Ok(Some(out))
        };
        let req = StreamsGroupHeartbeatRequest {
            group_id: group,
            member_id: a.get("member-id").unwrap_or(&member).to_string(),
            member_epoch: epoch,
            endpoint_information_epoch: a.int("endpoint-epoch")?.unwrap_or(client.endpoint_epoch),
            instance_id: a.get("instance").map(String::from),
            rack_id: a.get("rack").map(String::from),
            rebalance_timeout_ms: a.int("rebalance-timeout")?.unwrap_or(if joining {
                300_000
            } else {
                -1
            }),
            topology,
            active_tasks: tasks("active", default_of(&client.active))?,
            standby_tasks: tasks("standby", default_of(&client.standby))?,
            warmup_tasks: tasks("warmup", default_of(&client.warmup))?,
            process_id: a
                .get("process")
                .map(String::from)
                .or_else(|| joining.then(|| member.clone())),
            user_endpoint: match a.get("endpoint") {
                None => None,
                Some(e) => {
                    let (host, port) = e
                        .rsplit_once(':')
                        .ok_or_else(|| err(n, "endpoint=host:port"))?;
                    Some(Endpoint {
                        host: host.to_string(),
                        port: port.parse().map_err(|_| err(n, "bad endpoint port"))?,
                        unknown_tagged_fields: Vec::new(),
                    })
                }
            },
            client_tags: a.get("tags").map(|t| {
                list(t)
                    .into_iter()
                    .map(|kv| {
                        let (k, v) = kv.split_once(':').unwrap_or((kv.as_str(), ""));
                        KeyValue {
                            key: k.to_string(),
                            value: v.to_string(),
                            unknown_tagged_fields: Vec::new(),
                        }
                    })
                    .collect()
            }),
            task_offsets: offsets("offsets")?,
            task_end_offsets: offsets("end-offsets")?,
            shutdown_application: a.flag("shutdown"),
            unknown_tagged_fields: Vec::new(),
        };
        let ctx = RequestContext {
            client_id: a.get("client-id").unwrap_or(&member).to_string(),
            client_host: "/127.0.0.1".into(),
            api_version: a.int("version")?.unwrap_or(1),
        };
        let draft_id = if self.draft {
            Some(self.draft_topology_id(a, joining)?)
        } else {
            None
        };
        a.finish(&["owned", "topology", "shutdown"])?;
        let now = self.now;
        let out = match draft_id {
            Some(topology_id) => {
                let explicit = a.pairs.contains_key("topology") || a.flag("topology");
                let req = crate::coordinator::DraftHeartbeatRequest {
                    heartbeat: StreamsGroupHeartbeatRequest {
                        topology: if explicit { req.topology } else { None },
                        ..req
                    },
                    topology_id,
                };
                let out = self.coord().draft_heartbeat(now, &ctx, &req);
                let r = &out.response;
                let id = match &r.group_topology_id {
                    None => "-".to_string(),
                    Some(id) => self.topology_label(id),
                };
                self.last_draft = Some((r.should_initialize_topology, id));
                crate::coordinator::Outcome {
                    response: out.response.heartbeat,
                    records: out.records,
                    timers: out.timers,
                    topics_to_create: out.topics_to_create,
                }
            }
            None => {
                self.last_draft = None;
                self.coord().streams_group_heartbeat(now, &ctx, &req)
            }
        };
        let resp = out.response;
        let c = self.clients.entry(member).or_default();
        if resp.error_code == 0 {
            c.epoch = resp.member_epoch;
            c.endpoint_epoch = resp.endpoint_information_epoch;
            if let (Some(act), Some(st), Some(w)) =
                (&resp.active_tasks, &resp.standby_tasks, &resp.warmup_tasks)
            {
                c.active = TaskSet::from_task_ids(act);
                c.standby = TaskSet::from_task_ids(st);
                c.warmup = TaskSet::from_task_ids(w);
            }
            if epoch < 0 {
                *c = Client::default();
            }
        }
        self.last_topics = out.topics_to_create;
        self.last = Last::Heartbeat(Box::new(resp));
        self.record(out.records);
        Ok(())
    }

    /// The topology id a draft heartbeat sends: `topology-id=@NAME` (a defined topology's id),
    /// `topology-id=ID`, `topology-id=-` (null); by default the current topology's on a join.
    fn draft_topology_id(&self, a: &Args, joining: bool) -> Result<Option<String>, ScenarioError> {
        let named = |name: &str| {
            self.topologies
                .get(name)
                .map(crate::coordinator::topology_id)
                .ok_or_else(|| err(a.line, format!("no topology `{name}`")))
        };
        Ok(match a.get("topology-id") {
            Some("-") => None,
            Some(v) => match v.strip_prefix('@') {
                Some(name) => Some(named(name)?),
                None => Some(v.to_string()),
            },
            None if joining => Some(named(&self.current_topology)?),
            None => None,
        })
    }

    /// `@NAME` for the id of a defined topology, `""` for the empty id, else the id itself.
    fn topology_label(&self, id: &str) -> String {
        if id.is_empty() {
            return String::new();
        }
        self.topologies
            .iter()
            .find(|(_, t)| crate::coordinator::topology_id(t) == id)
            .map_or_else(|| id.to_string(), |(name, _)| format!("@{name}"))
    }

    fn expect(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let draft = self.last_draft.clone();
        let mut check =
            |what: &str, want: Option<&str>, got: String| -> Result<(), ScenarioError> {
                if let Some(w) = want {
                    self.checks += 1;
                    if w != got {
                        return Err(mismatch(n, what, w, &got));
                    }
                }
                Ok(())
            };
        match self.last.clone() {
            Last::None => return Err(err(n, "nothing to expect: no operation yet")),
            Last::Heartbeat(r) => {
                check(
                    "error",
                    a.get("error"),
                    ErrorCode(r.error_code).name().to_string(),
                )?;
                check(
                    "message",
                    a.get("message"),
                    r.error_message.clone().unwrap_or_default(),
                )?;
                if let Some(sub) = a.get("message~") {
                    let m = r.error_message.clone().unwrap_or_default();
                    check(
                        "message contains",
                        Some("true"),
                        m.contains(sub).to_string(),
                    )?;
                }
                check("epoch", a.get("epoch"), r.member_epoch.to_string())?;
                check("member-id", a.get("member-id"), r.member_id.clone())?;
                check(
                    "interval",
                    a.get("interval"),
                    r.heartbeat_interval_ms.to_string(),
                )?;
                check(
                    "task-offset-interval",
                    a.get("task-offset-interval"),
                    r.task_offset_interval_ms.to_string(),
                )?;
                check(
                    "recovery-lag",
                    a.get("recovery-lag"),
                    r.acceptable_recovery_lag.to_string(),
                )?;
                check("active", a.get("active"), opt_tasks(&r.active_tasks))?;
                check("standby", a.get("standby"), opt_tasks(&r.standby_tasks))?;
                check("warmup", a.get("warmup"), opt_tasks(&r.warmup_tasks))?;
                check(
                    "endpoint-epoch",
                    a.get("endpoint-epoch"),
                    r.endpoint_information_epoch.to_string(),
                )?;
                check(
                    "endpoints",
                    a.get("endpoints"),
                    r.partitions_by_user_endpoint
                        .as_ref()
                        .map_or("-".into(), |e| e.len().to_string()),
                )?;
                if let Some(want) = a.get("endpoint-partitions") {
                    let got = r
                        .partitions_by_user_endpoint
                        .iter()
                        .flatten()
                        .map(|e| {
                            let tp = |l: &[protocol::TopicPartition]| {
                                l.iter()
                                    .map(|t| {
                                        format!(
                                            "{}:{}",
                                            t.topic,
                                            t.partitions
                                                .iter()
                                                .map(|p| p.to_string())
                                                .collect::<Vec<_>>()
                                                .join(",")
                                        )
                                    })
                                    .collect::<Vec<_>>()
                                    .join(";")
                            };
                            format!(
                                "{}:{}[{}][{}]",
                                e.user_endpoint.host,
                                e.user_endpoint.port,
                                tp(&e.active_partitions),
                                tp(&e.standby_partitions)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    check("endpoint-partitions", Some(want), got)?;
                }
                let statuses = match &r.status {
                    None => "-".to_string(),
                    Some(s) if s.is_empty() => "[]".to_string(),
                    Some(s) => s
                        .iter()
                        .map(|s| status_code::name(s.status_code))
                        .collect::<Vec<_>>()
                        .join(","),
                };
                check("status", a.get("status"), statuses)?;
                check(
                    "status detail",
                    a.get("status-detail"),
                    r.status
                        .iter()
                        .flatten()
                        .map(|s| s.status_detail.clone())
                        .collect::<Vec<_>>()
                        .join(" | "),
                )?;
                if let Some((init, id)) = &draft {
                    check("should-init", a.get("should-init"), init.to_string())?;
                    check("topology-id", a.get("topology-id"), id.clone())?;
                }
                if let Some(sub) = a.get("status-detail~") {
                    let all: String = r
                        .status
                        .iter()
                        .flatten()
                        .map(|s| s.status_detail.clone())
                        .collect::<Vec<_>>()
                        .join(" | ");
                    check(
                        "status detail contains",
                        Some(sub),
                        if all.contains(sub) {
                            sub.to_string()
                        } else {
                            all
                        },
                    )?;
                }
            }
            Last::Initialize(r) => {
                check("error", a.get("error"), r.error.clone())?;
                let message = r.error_message.clone().unwrap_or_default();
                check("message", a.get("message"), message.clone())?;
                if let Some(sub) = a.get("message~") {
                    check(
                        "message contains",
                        Some("true"),
                        message.contains(sub).to_string(),
                    )?;
                }
            }
            Last::Result(code, offset) => {
                check("result", a.get("result"), code.name().to_string())?;
                check(
                    "offset",
                    a.get("offset"),
                    offset.map_or("-".into(), |o| o.to_string()),
                )?;
            }
            Last::List(groups) => {
                check(
                    "groups",
                    a.get("groups"),
                    groups
                        .iter()
                        .map(|g| {
                            format!(
                                "{}:{}:{}:{}",
                                g.group_id, g.group_state, g.protocol_type, g.group_type
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                )?;
            }
            Last::Describe(d) => {
                let g = d.groups.first().cloned().unwrap_or_default();
                check(
                    "error",
                    a.get("error"),
                    ErrorCode(g.error_code).name().to_string(),
                )?;
                check(
                    "message",
                    a.get("message"),
                    g.error_message.clone().unwrap_or_default(),
                )?;
                check("group-id", a.get("group-id"), g.group_id.clone())?;
                check("state", a.get("state"), g.group_state.clone())?;
                check("epoch", a.get("epoch"), g.group_epoch.to_string())?;
                check(
                    "assignment-epoch",
                    a.get("assignment-epoch"),
                    g.assignment_epoch.to_string(),
                )?;
                check("members", a.get("members"), g.members.len().to_string())?;
                check(
                    "assignor",
                    a.get("assignor"),
                    g.assignor_name.clone().unwrap_or_else(|| "-".into()),
                )?;
                check(
                    "topology-epoch",
                    a.get("topology-epoch"),
                    g.topology
                        .as_ref()
                        .map_or("-".into(), |t| t.epoch.to_string()),
                )?;
                check(
                    "topics",
                    a.get("topics"),
                    g.topology
                        .iter()
                        .flat_map(|t| t.subtopologies.iter().flatten())
                        .flat_map(|s| {
                            s.state_changelog_topics
                                .iter()
                                .chain(&s.repartition_source_topics)
                                .map(|t| format!("{}:{}", t.name, t.partitions))
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                )?;
                check(
                    "description-status",
                    a.get("description-status"),
                    g.topology_description_status.to_string(),
                )?;
            }
        }
        a.finish(&[])
    }

    /// `expect-record N field=value...`: fields of the N-th (1-based) record of the last operation.
    fn expect_record(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let idx: usize = a
            .positional
            .first()
            .and_then(|p| p.parse().ok())
            .filter(|i| *i >= 1)
            .ok_or_else(|| err(n, "usage: expect-record N field=value..."))?;
        let r = self.last_records.get(idx - 1).cloned().ok_or_else(|| {
            err(
                n,
                format!(
                    "no record {idx}: the last operation wrote {}",
                    self.last_records.len()
                ),
            )
        })?;
        let epochs = |t: &crate::types::ActiveTasks| {
            t.iter()
                .map(|(s, p, e)| format!("{s}:{p}@{e}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut fields: Vec<(&str, String)> = vec![("name", record_token(&r))];
        for f in ["generation", "members", "protocol"] {
            if let Some(v) = classic::classic_record_field(&r, f) {
                fields.push((f, v));
            }
        }
        match &r {
            Record::GroupMetadata { value: Some(v), .. } => {
                fields.push(("epoch", v.epoch.to_string()));
                fields.push(("validated-epoch", v.validated_topology_epoch.to_string()));
                fields.push((
                    "configs",
                    v.last_assignment_configs
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(","),
                ));
            }
            Record::MemberMetadata { value: Some(v), .. } => {
                fields.push(("instance", v.instance_id.clone().unwrap_or("-".into())));
                fields.push(("rack", v.rack_id.clone().unwrap_or("-".into())));
                fields.push(("process", v.process_id.clone()));
                fields.push(("topology-epoch", v.topology_epoch.to_string()));
                fields.push(("rebalance-timeout", v.rebalance_timeout_ms.to_string()));
                fields.push((
                    "endpoint",
                    v.user_endpoint
                        .as_ref()
                        .map_or("-".into(), |e| format!("{}:{}", e.host, e.port)),
                ));
            }
            Record::TargetAssignmentMetadata { value: Some(v), .. } => {
                fields.push(("epoch", v.assignment_epoch.to_string()));
                fields.push(("timestamp", v.assignment_timestamp.to_string()));
            }
            Record::TargetAssignmentMember { value: Some(v), .. } => {
                fields.push(("active", format_tasks(&v.active)));
                fields.push(("standby", format_tasks(&v.standby)));
                fields.push(("warmup", format_tasks(&v.warmup)));
            }
            Record::CurrentMemberAssignment { value: Some(v), .. } => {
                fields.push(("epoch", v.member_epoch.to_string()));
                fields.push(("previous-epoch", v.previous_member_epoch.to_string()));
                fields.push(("state", v.state.name().to_string()));
                fields.push(("active", format_tasks(&v.assigned.active.task_set())));
                fields.push(("active-epochs", epochs(&v.assigned.active)));
                fields.push(("standby", format_tasks(&v.assigned.standby)));
                fields.push(("warmup", format_tasks(&v.assigned.warmup)));
                fields.push((
                    "pending-active",
                    format_tasks(&v.pending_revocation.active.task_set()),
                ));
                fields.push((
                    "pending-standby",
                    format_tasks(&v.pending_revocation.standby),
                ));
            }
            Record::Topology { value: Some(v), .. } => {
                fields.push(("topology-epoch", v.epoch.to_string()));
            }
            Record::OffsetCommit { value: Some(v), .. } => {
                fields.push(("offset", v.offset.to_string()));
            }
            // Tombstones have only their key (the name token above).
            Record::GroupMetadata { value: None, .. }
            | Record::MemberMetadata { value: None, .. }
            | Record::TargetAssignmentMetadata { value: None, .. }
            | Record::TargetAssignmentMember { value: None, .. }
            | Record::CurrentMemberAssignment { value: None, .. }
            | Record::Topology { value: None, .. }
            | Record::OffsetCommit { value: None, .. } => {}
            // Classic group fields come from `classic::classic_record_field` above.
            Record::ClassicGroupMetadata { .. } => {}
            Record::ConsumerGroupMetadata { .. }
            | Record::ConsumerGroupPartitionMetadata { .. }
            | Record::ConsumerMemberMetadata { .. }
            | Record::ConsumerTargetAssignmentMetadata { .. }
            | Record::ConsumerTargetAssignmentMember { .. }
            | Record::ConsumerCurrentMemberAssignment { .. }
            | Record::ConsumerRegularExpression { .. } => {
                fields.extend(self.consumer_record_fields(&r));
            }
        }
        let mut results = Vec::new();
        for (k, got) in fields {
            if let Some(w) = a.get(k) {
                results.push((k, w.to_string(), got));
            }
        }
        for (k, w, got) in results {
            self.checks += 1;
            if w != got {
                return Err(mismatch(n, &format!("record {idx} {k}"), &w, &got));
            }
        }
        a.finish(&[a.positional[0].as_str()])
    }

    fn expect_group(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let gid = a.get("group").unwrap_or("g").to_string();
        let c = self
            .coord
            .as_ref()
            .ok_or_else(|| err(n, "no coordinator yet"))?;
        let g = c.group(&gid);
        let mut results = Vec::new();
        if a.flag("missing") {
            results.push(("exists", "false".to_string(), g.is_some().to_string()));
        } else {
            let g = g.ok_or_else(|| err(n, format!("group `{gid}` does not exist")))?;
            let fields: [(&str, String); 6] = [
                ("state", g.state().name().to_string()),
                ("epoch", g.group_epoch.to_string()),
                ("assignment-epoch", g.assignment_epoch.to_string()),
                ("members", g.members.len().to_string()),
                ("validated-epoch", g.validated_topology_epoch.to_string()),
                (
                    "topology-epoch",
                    g.topology
                        .as_ref()
                        .map_or("-".into(), |t| t.epoch.to_string()),
                ),
            ];
            for (k, got) in fields {
                if let Some(w) = a.get(k) {
                    results.push((k, w.to_string(), got));
                }
            }
        }
        for (k, w, got) in results {
            self.checks += 1;
            if w != got {
                return Err(mismatch(n, k, &w, &got));
            }
        }
        a.finish(&["missing"])
    }

    fn expect_member(&mut self, a: &Args) -> Result<(), ScenarioError> {
        let n = a.line;
        let gid = a.get("group").unwrap_or("g").to_string();
        let mid = a.req("member")?.to_string();
        let c = self
            .coord
            .as_ref()
            .ok_or_else(|| err(n, "no coordinator yet"))?;
        let g = c.group(&gid);
        let m = g.and_then(|g| g.members.get(&mid));
        let mut results = Vec::new();
        if a.flag("missing") {
            results.push(("exists", "false".to_string(), m.is_some().to_string()));
        } else {
            let g = g.ok_or_else(|| err(n, format!("group `{gid}` does not exist")))?;
            let m = m.ok_or_else(|| err(n, format!("member `{mid}` does not exist")))?;
            let target = g.target_of(&mid);
            let offsets = |pick: fn(
                &crate::coordinator::group::MemberTaskOffsets,
            ) -> &BTreeMap<crate::types::TaskId, i64>| {
                g.task_offsets
                    .get(&mid)
                    .map(|o| {
                        pick(o)
                            .iter()
                            .map(|(t, v)| format!("{}:{}={v}", t.subtopology, t.partition))
                            .collect::<Vec<_>>()
                            .join(";")
                    })
                    .unwrap_or_default()
            };
            let fields: [(&str, String); 19] = [
                ("offsets", offsets(|o| &o.offsets)),
                ("end-offsets", offsets(|o| &o.end_offsets)),
                ("active-count", m.assigned.active.len().to_string()),
                ("standby-count", m.assigned.standby.len().to_string()),
                ("target-active-count", target.active.len().to_string()),
                ("target-standby-count", target.standby.len().to_string()),
                ("state", m.state.name().to_string()),
                ("epoch", m.member_epoch.to_string()),
                ("previous-epoch", m.previous_member_epoch.to_string()),
                ("active", format_tasks(&m.assigned.active.task_set())),
                ("standby", format_tasks(&m.assigned.standby)),
                ("warmup", format_tasks(&m.assigned.warmup)),
                (
                    "pending-active",
                    format_tasks(&m.pending_revocation.active.task_set()),
                ),
                (
                    "pending-standby",
                    format_tasks(&m.pending_revocation.standby),
                ),
                ("pending-warmup", format_tasks(&m.pending_revocation.warmup)),
                ("target-active", format_tasks(&target.active)),
                ("target-standby", format_tasks(&target.standby)),
                ("process", m.process_id.clone()),
                (
                    "active-epochs",
                    m.assigned
                        .active
                        .iter()
                        .map(|(s, p, e)| format!("{s}:{p}@{e}"))
                        .collect::<Vec<_>>()
                        .join(","),
                ),
            ];
            for (k, got) in fields {
                if let Some(w) = a.get(k) {
                    results.push((k, w.to_string(), got));
                }
            }
        }
        for (k, w, got) in results {
            self.checks += 1;
            if w != got {
                return Err(mismatch(n, k, &w, &got));
            }
        }
        a.finish(&["missing"])
    }

    /// A fresh coordinator rebuilt from the record log.
    fn replayed(&self, n: usize) -> Result<Coordinator, ScenarioError> {
        let mut c = Coordinator::new(self.config.clone());
        c.set_metadata(self.metadata.clone());
        for (i, r) in self.log.iter().enumerate() {
            c.replay(r).map_err(|e| {
                err(
                    n,
                    format!("replay of record {i} ({}) failed: {e}", record_token(r)),
                )
            })?;
        }
        Ok(c)
    }

    /// Replaying the log gives the same persistent state and describe output (spec §6).
    fn replay_check(&mut self, n: usize) -> Result<(), ScenarioError> {
        let Some(live) = &self.coord else {
            return Ok(());
        };
        let fresh = self.replayed(n)?;
        self.checks += 1;
        if fresh.state_hash() != live.state_hash() {
            return Err(err(
                n,
                "replaying the records does not rebuild the live coordinator state",
            ));
        }
        self.classic_replay_check(live, &fresh, n)?;
        let ids = live.group_ids();
        let req = StreamsGroupDescribeRequest {
            group_ids: ids,
            ..Default::default()
        };
        let strip = |mut d: StreamsGroupDescribeResponse| {
            // Soft state (task offsets, configured topology) is not persisted (spec §6 "After load").
            for g in &mut d.groups {
                g.topology = None;
                for m in &mut g.members {
                    m.task_offsets.clear();
                    m.task_end_offsets.clear();
                }
            }
            d
        };
        if strip(fresh.streams_group_describe(&req, 1))
            != strip(live.streams_group_describe(&req, 1))
        {
            return Err(err(
                n,
                "replayed coordinator describes the groups differently",
            ));
        }
        Ok(())
    }
}
