//! Per-step comparison of Apache Kafka's recorded answer with groupcoord's, the disagreement
//! categories and the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use groupcoord::protocol::{
    Assignment, DescribedMember, EndpointToPartitions, StreamsGroupDescribeResponse,
    StreamsGroupHeartbeatResponse, TaskIds, TopicPartition,
};
use serde_json::Value;

use super::model::{Request, Response, Step};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    /// No decodable answer from one side.
    Transport,
    ErrorCode,
    ErrorMessage,
    MemberEpoch,
    HeartbeatInterval,
    Status,
    Assignment,
    EndpointEpoch,
    EndpointPartitions,
    HeartbeatOther,
    DescribeError,
    DescribeState,
    DescribeEpochs,
    DescribeTopology,
    DescribeMembers,
    DescribeAssignment,
    DescribeOther,
    /// Only the tasks given to members differ (error, epochs, state and membership agree): the
    /// sticky assignor's output, mostly its tie-breaks. Counted apart: making it Kafka's exact
    /// assignment is the assignor's own work (its side-by-side harness in tests/interop/assignor).
    AssignorTie,
    /// Any disagreement after an assignor tie in the same sequence: the recorded client follows
    /// Kafka's assignment from then on, which groupcoord did not give it.
    AfterAssignorTie,
    /// A Kafka 4.4 bug groupcoord does not copy (docs/deviations.md D1, D2): UNKNOWN_SERVER_ERROR
    /// to a join with a user endpoint while a source topic is missing; a refused static join that
    /// re-labels Kafka's cached assignment.
    DocumentedDeviation,
    /// Disagreements after a documented deviation in the same sequence (the groups differ).
    AfterDeviation,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Transport => "transport",
            Category::ErrorCode => "error code",
            Category::ErrorMessage => "error message",
            Category::MemberEpoch => "member epoch",
            Category::HeartbeatInterval => "heartbeat interval",
            Category::Status => "status",
            Category::Assignment => "assignment",
            Category::EndpointEpoch => "endpoint-information epoch",
            Category::EndpointPartitions => "partitions by user endpoint",
            Category::DocumentedDeviation => "documented deviation (docs/deviations.md)",
            Category::AfterDeviation => "after a documented deviation",
            Category::HeartbeatOther => "heartbeat (other field)",
            Category::DescribeError => "describe error",
            Category::DescribeState => "describe group state",
            Category::DescribeEpochs => "describe epochs",
            Category::DescribeTopology => "describe topology",
            Category::DescribeMembers => "describe members",
            Category::DescribeAssignment => "describe assignment",
            Category::DescribeOther => "describe (other field)",
            Category::AssignorTie => "assignor output (tie-breaks)",
            Category::AfterAssignorTie => "after an assignor difference",
        }
    }

    /// Counted apart from the agreement without assignor tie-breaks and documented deviations.
    fn is_excused(self) -> bool {
        matches!(
            self,
            Category::AssignorTie
                | Category::AfterAssignorTie
                | Category::DocumentedDeviation
                | Category::AfterDeviation
        )
    }

    /// Differences that do not follow from the group's membership or assignment, so a step
    /// after a tie-break or a deviation still shows them as what they are. (Error messages do
    /// follow: they quote the epochs.)
    fn independent(self) -> bool {
        matches!(
            self,
            Category::Transport
                | Category::Status
                | Category::DescribeTopology
                | Category::DescribeOther
        )
    }
}

pub struct Verdict {
    pub category: Option<Category>,
    /// `path: kafka=<value> groupcoord=<value>` for each differing field.
    pub differences: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Normalisation: only what legitimately differs between two correct coordinators
// ---------------------------------------------------------------------------------------------

/// Task lists are sets: Kafka builds them from hash maps, so their order carries no meaning (no
/// client depends on it). Sorted by subtopology and partition.
fn sort_tasks(list: &mut [TaskIds]) {
    for t in list.iter_mut() {
        t.partitions.sort_unstable();
    }
    list.sort_by(|a, b| a.subtopology_id.cmp(&b.subtopology_id));
}

fn sort_topic_partitions(list: &mut [TopicPartition]) {
    for t in list.iter_mut() {
        t.partitions.sort_unstable();
    }
    list.sort_by(|a, b| a.topic.cmp(&b.topic));
}

/// Within an endpoint entry, Kafka groups the partitions by topic in a hash map. The entries
/// themselves are not sorted: Kafka lists them in its member map's order, which groupcoord
/// reproduces (members with equal endpoints included).
fn sort_endpoints(list: &mut [EndpointToPartitions]) {
    for e in list.iter_mut() {
        sort_topic_partitions(&mut e.active_partitions);
        sort_topic_partitions(&mut e.standby_partitions);
    }
}

fn sort_assignment(a: &mut Assignment) {
    sort_tasks(&mut a.active_tasks);
    sort_tasks(&mut a.standby_tasks);
    sort_tasks(&mut a.warmup_tasks);
}

fn normalize_heartbeat(mut r: StreamsGroupHeartbeatResponse) -> StreamsGroupHeartbeatResponse {
    for list in [
        &mut r.active_tasks,
        &mut r.standby_tasks,
        &mut r.warmup_tasks,
    ]
    .into_iter()
    .flatten()
    {
        sort_tasks(list);
    }
    if let Some(e) = &mut r.partitions_by_user_endpoint {
        sort_endpoints(e);
    }
    r
}

fn normalize_describe(mut r: StreamsGroupDescribeResponse) -> StreamsGroupDescribeResponse {
    for g in &mut r.groups {
        // Members come from a hash map in Kafka: the list is a set keyed by member id.
        g.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        for m in &mut g.members {
            normalize_member(m);
        }
        if let Some(subs) = g.topology.as_mut().and_then(|t| t.subtopologies.as_mut()) {
            // Subtopologies are keyed by id (Kafka keeps them in a hash map).
            subs.sort_by(|a, b| a.subtopology_id.cmp(&b.subtopology_id));
            for s in subs.iter_mut() {
                s.source_topics.sort();
                s.repartition_sink_topics.sort();
                s.state_changelog_topics.sort_by(|a, b| a.name.cmp(&b.name));
                s.repartition_source_topics
                    .sort_by(|a, b| a.name.cmp(&b.name));
            }
        }
    }
    r
}

fn normalize_member(m: &mut DescribedMember) {
    sort_assignment(&mut m.assignment);
    sort_assignment(&mut m.target_assignment);
    m.task_offsets
        .sort_by(|a, b| (&a.subtopology_id, a.partition).cmp(&(&b.subtopology_id, b.partition)));
    m.task_end_offsets
        .sort_by(|a, b| (&a.subtopology_id, a.partition).cmp(&(&b.subtopology_id, b.partition)));
}

// ---------------------------------------------------------------------------------------------
// Field diff
// ---------------------------------------------------------------------------------------------

fn diff(path: &str, kafka: &Value, ours: &Value, out: &mut Vec<(String, String)>) {
    match (kafka, ours) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let null = Value::Null;
                diff(
                    &format!("{path}.{k}"),
                    a.get(k).unwrap_or(&null),
                    b.get(k).unwrap_or(&null),
                    out,
                );
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), x, y, out);
            }
        }
        _ if kafka == ours => {}
        _ => out.push((
            path.to_string(),
            format!("{path}: kafka={kafka} groupcoord={ours}"),
        )),
    }
}

fn heartbeat_category(path: &str) -> Category {
    let field = path.trim_start_matches('.');
    let field = field.split(['.', '[']).next().unwrap_or(field);
    match field {
        "error_code" => Category::ErrorCode,
        "error_message" => Category::ErrorMessage,
        "member_epoch" => Category::MemberEpoch,
        "heartbeat_interval_ms" => Category::HeartbeatInterval,
        "status" => Category::Status,
        "active_tasks" | "standby_tasks" | "warmup_tasks" => Category::Assignment,
        "endpoint_information_epoch" => Category::EndpointEpoch,
        "partitions_by_user_endpoint" => Category::EndpointPartitions,
        _ => Category::HeartbeatOther,
    }
}

fn describe_category(path: &str) -> Category {
    // ".groups[0].members[1].target_assignment.active_tasks[0]..."
    let in_group = path.split_once(']').map(|(_, r)| r).unwrap_or(path);
    let field = in_group.trim_start_matches('.');
    let head = field.split(['.', '[']).next().unwrap_or(field);
    match head {
        "error_code" | "error_message" => Category::DescribeError,
        "group_state" => Category::DescribeState,
        "group_epoch" | "assignment_epoch" => Category::DescribeEpochs,
        "topology" | "topology_description" | "topology_description_status" => {
            Category::DescribeTopology
        }
        "members" if field.contains("assignment") => Category::DescribeAssignment,
        "members" => Category::DescribeMembers,
        _ => Category::DescribeOther,
    }
}

/// Diff two normalised answers field by field; the category of each differing field.
fn diff_categories<T: serde::Serialize>(
    kafka: &T,
    ours: &T,
    category: fn(&str) -> Category,
    found: &mut Vec<(String, String)>,
) -> Vec<Category> {
    diff(
        "",
        &serde_json::to_value(kafka).unwrap(),
        &serde_json::to_value(ours).unwrap(),
        found,
    );
    found.iter().map(|(p, _)| category(p)).collect()
}

/// `cascade`: the excused difference that an earlier step of the sequence had, if any.
pub fn compare(
    request: &Request,
    kafka: &Response,
    ours: &Response,
    cascade: Option<Category>,
) -> Verdict {
    let mut found = Vec::new();
    let (category, tie) = match (kafka, ours) {
        (Response::Heartbeat(k), Response::Heartbeat(o)) => {
            let (k, o) = (
                normalize_heartbeat(k.clone()),
                normalize_heartbeat(o.clone()),
            );
            let cats = diff_categories(&k, &o, heartbeat_category, &mut found);
            let only_assignment = cats
                .iter()
                .all(|c| matches!(c, Category::Assignment | Category::EndpointPartitions));
            (cats.into_iter().min(), only_assignment)
        }
        (Response::Describe(k), Response::Describe(o)) => {
            let (k, o) = (normalize_describe(k.clone()), normalize_describe(o.clone()));
            let cats = diff_categories(&k, &o, describe_category, &mut found);
            let only_assignment = cats.iter().all(|c| *c == Category::DescribeAssignment);
            (cats.into_iter().min(), only_assignment)
        }
        _ if kafka == ours => (None, false),
        _ => {
            found.push((
                String::new(),
                format!(
                    "kafka={} groupcoord={}",
                    serde_json::to_string(kafka).unwrap(),
                    serde_json::to_string(ours).unwrap()
                ),
            ));
            (Some(Category::Transport), false)
        }
    };
    let category = match category {
        Some(c) if c.independent() => Some(c),
        Some(_) if documented_deviation(request, kafka) => Some(Category::DocumentedDeviation),
        Some(_) if cascade == Some(Category::AssignorTie) => Some(Category::AfterAssignorTie),
        Some(_) if cascade == Some(Category::DocumentedDeviation) => Some(Category::AfterDeviation),
        Some(_) if tie => Some(Category::AssignorTie),
        c => c,
    };
    Verdict {
        category,
        differences: found.into_iter().map(|(_, d)| d).collect(),
    }
}

/// A heartbeat with a user endpoint (a join, or a member setting one) into a group whose
/// topology has a missing source topic, which Kafka 4.4 fails with UNKNOWN_SERVER_ERROR
/// (docs/deviations.md D1).
/// Also (D2) any difference in the planned refused-static-join sequence, which exists to show
/// that deviation (its steps before the refused join are checked to agree by
/// `deviation_refused_static_join_relabels_the_cached_assignment`).
fn documented_deviation(request: &Request, kafka: &Response) -> bool {
    let group_id = match request {
        Request::Heartbeat { body, .. } => body.group_id.as_str(),
        Request::Describe { body, .. } => body.group_ids.first().map(String::as_str).unwrap_or(""),
    };
    if group_id.starts_with("diff-relabel-") {
        return true;
    }
    let (Request::Heartbeat { body, .. }, Response::Heartbeat(k)) = (request, kafka) else {
        return false;
    };
    k.error_code == -1 && body.user_endpoint.is_some()
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

struct FirstSeen {
    seq: u32,
    step: usize,
    note: String,
    differences: Vec<String>,
}

pub struct Report {
    pub steps: usize,
    pub sequences: usize,
    agreeing: usize,
    per_category: BTreeMap<Category, (usize, FirstSeen)>,
}

impl Report {
    pub fn of<'a>(
        outcomes: impl Iterator<Item = (u32, &'a [Step], &'a [(Verdict, Response)])>,
    ) -> Report {
        let mut r = Report {
            steps: 0,
            sequences: 0,
            agreeing: 0,
            per_category: BTreeMap::new(),
        };
        let mut ordered: Vec<_> = outcomes.collect();
        ordered.sort_by_key(|o| o.0);
        for (seq, steps, verdicts) in ordered {
            r.sequences += 1;
            for (k, (step, (verdict, _))) in steps.iter().zip(verdicts).enumerate() {
                r.steps += 1;
                match verdict.category {
                    None => r.agreeing += 1,
                    Some(c) => {
                        r.per_category
                            .entry(c)
                            .or_insert_with(|| {
                                (
                                    0,
                                    FirstSeen {
                                        seq,
                                        step: k,
                                        note: step.note.clone(),
                                        differences: verdict.differences.clone(),
                                    },
                                )
                            })
                            .0 += 1
                    }
                }
            }
        }
        r
    }

    pub fn agreement(&self) -> f64 {
        100.0 * self.agreeing as f64 / self.steps.max(1) as f64
    }

    /// Agreement over the steps that are neither assignor differences nor documented
    /// deviations (nor follow one in their sequence).
    pub fn agreement_without_excused(&self) -> f64 {
        100.0 * self.agreeing as f64 / (self.steps - self.ties()).max(1) as f64
    }

    fn ties(&self) -> usize {
        self.per_category
            .iter()
            .filter(|(c, _)| c.is_excused())
            .map(|(_, (n, _))| n)
            .sum()
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        let ties = self.ties();
        writeln!(
            s,
            "agreement {:.2}% of {} steps ({} sequences)",
            self.agreement(),
            self.steps,
            self.sequences
        )
        .unwrap();
        writeln!(
            s,
            "agreement without assignor tie-breaks and documented deviations {:.2}% of {} steps ({} steps are or follow one)",
            self.agreement_without_excused(),
            self.steps - ties,
            ties
        )
        .unwrap();
        for (c, (n, first)) in &self.per_category {
            writeln!(
                s,
                "\n{n} step(s) differ in {}; first: sequence {} step {} ({})\n  reproduce: GROUPCOORD_DIFF_SEQ={} cargo test --test differential -- --nocapture",
                c.name(),
                first.seq,
                first.step,
                first.note,
                first.seq
            )
            .unwrap();
            for d in first.differences.iter().take(6) {
                writeln!(s, "  {d}").unwrap();
            }
        }
        s
    }
}
