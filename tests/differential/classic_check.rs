//! The classic-group checker: replays a wire recording against groupcoord's pure request handler
//! (`server::kafka::State`, the coordinator core plus the wire mapping, no sockets, no clock) at
//! the recorded times, and compares every answer and when it came.
//!
//! * Time: step k is handled at the moment it was sent to Kafka (`at_ms`); the timers due before
//!   it fire first, each at its own deadline, so an answer a timer completes falls in the same
//!   interval as on Kafka.
//! * Member ids: Kafka draws them at random, groupcoord derives them. When both sides answer the
//!   same step with a new id, the pair is remembered; later requests (recorded with Kafka's ids)
//!   are rewritten to groupcoord's, and groupcoord's answers are rewritten back before comparing.
//! * Sets: the leader's member list, DescribeGroups' members, DeleteGroups' results (keyed by
//!   group id) and ListGroups' groups (limited to the sequence's own groups: the broker held the
//!   other sequences' groups too) are sorted; OffsetFetch's topics and partitions too.
//! * groupcoord's answers go through the wire encoding at the request's version first, so a
//!   field that version does not carry is compared as the client sees it.

use std::collections::{BTreeMap, HashMap};

use groupcoord::coordinator::Coordinator;
use groupcoord::server::kafka::State;
use groupcoord::server::peer::Peer;
use groupcoord::server::storage::log::TopicChange;
use groupcoord::server::wire::{Header, Req, RequestKind, Resp, ResponseKind};
use groupcoord::types::Millis;
use kafka_protocol::messages::DescribeGroupsResponse;
use kafka_protocol::messages::describe_groups_response::DescribedGroupMember;
use kafka_protocol::protocol::StrBytes;

use super::wire::{WireSequence, WireStep, decode_answer, decode_request};

/// Any base: the recording's times are relative to the sequence's start.
const BASE_MS: i64 = 1_700_000_000_000;

/// How late Kafka may deliver an answer a timer completes: its timers fire on a 1 ms wheel, then
/// the coordinator's event loop runs the expiry, appends to `__consumer_offsets` and answers.
/// Measured on the recording (the report prints the largest delay seen).
pub const TIMER_SLACK_MS: u64 = 300;

/// A step's outcome on groupcoord: its answer and the interval it came in.
pub struct Ours {
    pub answer: Option<(usize, ResponseKind)>,
    /// When a timer completed the answer: the timer's deadline, in ms since the sequence start.
    pub timer_at: Option<u64>,
}

/// What the checker found for one step.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// `None` = agreement.
    pub category: Option<String>,
    pub differences: Vec<String>,
}

/// Kafka's member ids and groupcoord's for the same members, both ways.
#[derive(Default)]
pub struct Ids {
    kafka_to_ours: HashMap<String, String>,
    pub ours_to_kafka: HashMap<String, String>,
}

impl Ids {
    pub fn to_ours(&self, id: &mut StrBytes) {
        if let Some(o) = self.kafka_to_ours.get(id.as_str()) {
            *id = StrBytes::from_string(o.clone());
        }
    }
    pub fn to_kafka(&self, id: &mut StrBytes) {
        if let Some(k) = self.ours_to_kafka.get(id.as_str()) {
            *id = StrBytes::from_string(k.clone());
        }
    }
    /// A JoinGroup answer of groupcoord with Kafka's ids.
    pub fn join_back(&self, j: &mut kafka_protocol::messages::JoinGroupResponse) {
        self.to_kafka(&mut j.member_id);
        self.to_kafka(&mut j.leader);
        for m in &mut j.members {
            self.to_kafka(&mut m.member_id);
        }
    }
    /// A LeaveGroup answer of groupcoord with Kafka's ids.
    pub fn leave_back(&self, x: &mut kafka_protocol::messages::LeaveGroupResponse) {
        for m in &mut x.members {
            self.to_kafka(&mut m.member_id);
        }
    }
    /// A DescribeGroups answer of groupcoord with Kafka's ids.
    pub fn describe_back(&self, x: &mut DescribeGroupsResponse) {
        for g in &mut x.groups {
            for m in &mut g.members {
                self.to_kafka(&mut m.member_id);
            }
        }
    }
    /// Remember a pair (the first one of each id wins).
    pub fn pair(&mut self, kafka: &str, ours: &str) {
        if kafka.is_empty() || ours.is_empty() || kafka == ours {
            return;
        }
        if self.kafka_to_ours.contains_key(kafka) || self.ours_to_kafka.contains_key(ours) {
            return;
        }
        self.kafka_to_ours.insert(kafka.into(), ours.into());
        self.ours_to_kafka.insert(ours.into(), kafka.into());
    }
}

fn rewrite_request(r: &mut RequestKind, ids: &Ids) {
    match r {
        RequestKind::JoinGroup(j) => ids.to_ours(&mut j.member_id),
        RequestKind::SyncGroup(x) => {
            ids.to_ours(&mut x.member_id);
            for a in &mut x.assignments {
                ids.to_ours(&mut a.member_id);
            }
        }
        RequestKind::Heartbeat(x) => ids.to_ours(&mut x.member_id),
        RequestKind::LeaveGroup(x) => {
            ids.to_ours(&mut x.member_id);
            for m in &mut x.members {
                ids.to_ours(&mut m.member_id);
            }
        }
        RequestKind::OffsetCommit(x) => ids.to_ours(&mut x.member_id),
        RequestKind::OffsetFetch(x) => {
            for g in &mut x.groups {
                if let Some(m) = &mut g.member_id {
                    ids.to_ours(m);
                }
            }
        }
        _ => {}
    }
}

/// groupcoord's answer with Kafka's member ids.
fn ids_back(r: &mut ResponseKind, ids: &Ids) {
    match r {
        ResponseKind::JoinGroup(j) => ids.join_back(j),
        ResponseKind::LeaveGroup(x) => ids.leave_back(x),
        ResponseKind::DescribeGroups(x) => ids.describe_back(x),
        _ => {}
    }
}

/// Both sides: throttle times zeroed, sets sorted, other sequences' groups dropped.
fn normalise(r: &mut ResponseKind, groups: &[String]) {
    match r {
        ResponseKind::JoinGroup(j) => {
            j.throttle_time_ms = 0;
            j.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        }
        ResponseKind::SyncGroup(x) => x.throttle_time_ms = 0,
        ResponseKind::Heartbeat(x) => x.throttle_time_ms = 0,
        ResponseKind::LeaveGroup(x) => x.throttle_time_ms = 0,
        ResponseKind::OffsetCommit(x) => x.throttle_time_ms = 0,
        ResponseKind::OffsetFetch(x) => {
            x.throttle_time_ms = 0;
            x.topics.sort_by(|a, b| a.name.cmp(&b.name));
            for t in &mut x.topics {
                t.partitions.sort_by_key(|p| p.partition_index);
            }
            for g in &mut x.groups {
                g.topics.sort_by(|a, b| a.name.cmp(&b.name));
                for t in &mut g.topics {
                    t.partitions.sort_by_key(|p| p.partition_index);
                }
            }
        }
        ResponseKind::DescribeGroups(x) => {
            x.throttle_time_ms = 0;
            for g in &mut x.groups {
                g.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
            }
        }
        ResponseKind::ListGroups(x) => {
            x.throttle_time_ms = 0;
            x.groups
                .retain(|g| groups.iter().any(|own| own.as_str() == g.group_id.as_str()));
            x.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        }
        ResponseKind::DeleteGroups(x) => {
            x.throttle_time_ms = 0;
            x.results.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        }
        _ => {}
    }
}

/// A member whose id neither side ever answered to a JoinGroup (its join was still waiting when
/// the sequence ended) first shows in DescribeGroups: pair the members that only one member of
/// each side matches by group, client id and instance id.
fn pair_described(ids: &mut Ids, kafka: &DescribeGroupsResponse, ours: &DescribeGroupsResponse) {
    for (kg, og) in kafka.groups.iter().zip(&ours.groups) {
        let key = |m: &DescribedGroupMember| (m.client_id.to_string(), m.group_instance_id.clone());
        for km in &kg.members {
            if ids.kafka_to_ours.contains_key(km.member_id.as_str()) {
                continue;
            }
            let same = |m: &&DescribedGroupMember| key(m) == key(km);
            let unpaired =
                |m: &&DescribedGroupMember| !ids.ours_to_kafka.contains_key(m.member_id.as_str());
            if kg.members.iter().filter(same).count() != 1 {
                continue;
            }
            let mut candidates = og.members.iter().filter(same).filter(unpaired);
            if let (Some(om), None) = (candidates.next(), candidates.next()) {
                let om = om.member_id.to_string();
                ids.pair(km.member_id.as_str(), &om);
            }
        }
    }
}

fn member_id_of(r: &ResponseKind) -> Option<String> {
    match r {
        ResponseKind::JoinGroup(j) => Some(j.member_id.to_string()),
        _ => None,
    }
}

/// Replay one sequence on a fresh handler.
pub fn replay(seq: &WireSequence, coord: Coordinator) -> (Vec<Ours>, Vec<u64>) {
    let mut state = State::new(coord, "127.0.0.1".into(), 9092);
    let topics: Vec<TopicChange> = super::classic_generate::TOPICS
        .iter()
        .map(|(n, p)| TopicChange::Set {
            name: n.to_string(),
            partitions: *p,
        })
        .collect();
    state.apply_topics(&topics);
    let peer = Peer::anonymous("127.0.0.1");
    let kafka: Vec<Option<ResponseKind>> = seq.steps.iter().map(decode_answer).collect();
    let mut ids = Ids::default();
    let mut ours: Vec<Ours> = seq
        .steps
        .iter()
        .map(|_| Ours {
            answer: None,
            timer_at: None,
        })
        .collect();
    let mut tokens = HashMap::new();
    let mut fires: Vec<u64> = Vec::new();

    let deliver = |step: usize,
                   interval: usize,
                   timer_at: Option<i64>,
                   resp: Resp,
                   ids: &mut Ids,
                   ours: &mut Vec<Ours>| {
        let Resp::Kafka(r) = resp else {
            panic!("step {step}: not a kafka-protocol answer")
        };
        // What the wire carries at the request's version (fields of later versions drop out).
        let (key, version) = (seq.steps[step].api_key, seq.steps[step].version);
        let mut buf = bytes::BytesMut::new();
        r.encode(&mut buf, version)
            .expect("groupcoord's answer encodes");
        let r = ResponseKind::decode(key, &mut buf.freeze(), version).expect("and decodes");
        if let (Some(k), Some(o)) = (
            kafka[step].as_ref().and_then(member_id_of),
            member_id_of(&r),
        ) {
            ids.pair(&k, &o);
        }
        if let (Some(ResponseKind::DescribeGroups(k)), ResponseKind::DescribeGroups(o)) =
            (&kafka[step], &r)
        {
            pair_described(ids, k, o);
        }
        ours[step].answer = Some((interval, r));
        ours[step].timer_at = timer_at.map(|t| (t - BASE_MS) as u64);
    };

    for (k, step) in seq.steps.iter().enumerate() {
        let now = BASE_MS + step.at_ms as i64;
        fire_until(
            &mut state,
            now,
            k.checked_sub(1),
            &mut tokens,
            &mut fires,
            &mut |s, i, t, r| deliver(s, i, Some(t), r, &mut ids, &mut ours),
        );
        let mut req = decode_request(step);
        rewrite_request(&mut req, &ids);
        let h = Header {
            api_key: step.api_key,
            api_version: step.version,
            correlation_id: k as i32,
            client_id: Some(step.client_id.clone()),
        };
        let handled = state.handle(Millis(now), &h, &peer, &Req::Kafka(req));
        match handled.resp {
            Resp::Deferred(t) => {
                tokens.insert(t, k);
            }
            r => deliver(k, k, None, r, &mut ids, &mut ours),
        }
        for (t, r) in state.take_answers() {
            let s = tokens.remove(&t).expect("a token we were given");
            deliver(s, k, None, r, &mut ids, &mut ours);
        }
    }
    let last = seq.steps.len().checked_sub(1);
    fire_until(
        &mut state,
        BASE_MS + seq.end_ms as i64,
        last,
        &mut tokens,
        &mut fires,
        &mut |s, i, t, r| deliver(s, i, Some(t), r, &mut ids, &mut ours),
    );
    // Normalise our answers with the final id map (an id paired later is still the same member).
    for o in &mut ours {
        if let Some((_, r)) = &mut o.answer {
            ids_back(r, &ids);
            normalise(r, &seq.groups);
        }
    }
    (ours, fires)
}

/// Whether step `k` may have raced one of groupcoord's timers on Kafka: a timer fired shortly
/// before the step, and Kafka's effect of it was not visible yet when the step was sent (its
/// answer came after the step), or the timer answered nothing and fired less than
/// `RACE_NO_ANSWER_MS` before; or a deadline fell within `RACE_AFTER_SEND_MS` after the step was
/// sent (Kafka handles it a little later, maybe after its timer). Kafka runs a timer's expiry some milliseconds late, and reads see
/// only committed state, so such a step saw the state before the timer on Kafka's side.
pub fn raced(seq: &WireSequence, ours: &[Ours], fires: &[u64], k: usize) -> Option<u64> {
    const RACE_NO_ANSWER_MS: u64 = 100;
    const RACE_AFTER_SEND_MS: u64 = 20;
    // An answer our timer completed that Kafka completed later: some step shortly after the
    // deadline reached Kafka before its timer ran (and so changed what the timer did).
    if let (Some(f), Some(a)) = (ours[k].timer_at, &seq.steps[k].answer)
        && a.at_ms > f + TIMER_SLACK_MS
        && let Some(j) = seq
            .steps
            .iter()
            .find(|s| s.at_ms >= f && s.at_ms < f + RACE_NO_ANSWER_MS)
    {
        return Some(j.at_ms - f);
    }
    let t = seq.steps[k].at_ms;
    // A deadline just after the step: Kafka handles a request some milliseconds after it was
    // sent, so its timer may have run first.
    if let Some(f) = fires
        .iter()
        .copied()
        .find(|&f| f > t && f <= t + RACE_AFTER_SEND_MS)
    {
        return Some(f - t);
    }
    fires
        .iter()
        .copied()
        .filter(|&f| f <= t && t - f < TIMER_SLACK_MS)
        .find(|&f| {
            let answered: Vec<usize> = (0..ours.len())
                .filter(|&s| ours[s].timer_at == Some(f))
                .collect();
            if answered.is_empty() {
                t - f < RACE_NO_ANSWER_MS
            } else {
                answered
                    .iter()
                    .any(|&s| seq.steps[s].answer.as_ref().is_none_or(|a| a.at_ms > t))
            }
        })
        .map(|f| t - f)
}

fn fire_until(
    state: &mut State,
    now: i64,
    interval: Option<usize>,
    tokens: &mut HashMap<groupcoord::coordinator::RequestToken, usize>,
    fires: &mut Vec<u64>,
    deliver: &mut dyn FnMut(usize, usize, i64, Resp),
) {
    for _ in 0..10_000 {
        let Some(due) = state.coord.next_deadline() else {
            return;
        };
        if due.0 > now {
            return;
        }
        state.fire_timers(due);
        fires.push((due.0 - BASE_MS) as u64);
        for (t, r) in state.take_answers() {
            let s = tokens.remove(&t).expect("a token we were given");
            deliver(
                s,
                interval.expect("no answer before the first step"),
                due.0,
                r,
            );
        }
    }
    panic!("timers keep firing at {now}");
}

/// Compare one step: when the answer came, then every field.
pub fn compare(seq: &WireSequence, k: usize, ours: &Ours) -> Verdict {
    let step = &seq.steps[k];
    let mut kafka = decode_answer(step);
    if let Some(r) = &mut kafka {
        normalise(r, &seq.groups);
    }
    let api = api_name(step.api_key);
    let kafka_at = step.answer.as_ref().map(|a| a.after_step);
    let ours_at = ours.answer.as_ref().map(|(i, _)| *i);
    // An answer a timer completed: Kafka's must arrive at the deadline or a little later (the
    // interval may then differ when the deadline is close to the next step).
    let timer_agrees = match (ours.timer_at, &step.answer) {
        (Some(t), Some(a)) => a.at_ms + 5 >= t && a.at_ms <= t + TIMER_SLACK_MS,
        _ => false,
    };
    if std::env::var_os("GROUPCOORD_DIFF_TIMER_DELAYS").is_some()
        && let (Some(t), Some(a)) = (ours.timer_at, &step.answer)
    {
        println!("timer-delay {} {k} {}", seq.seq, a.at_ms as i64 - t as i64);
    }
    if kafka_at != ours_at && !timer_agrees {
        return Verdict {
            category: Some(format!("{api}: answer timing")),
            differences: vec![format!(
                "answered during step: kafka {} / groupcoord {}{}",
                show_at(kafka_at),
                show_at(ours_at),
                match (ours.timer_at, &step.answer) {
                    (Some(t), Some(a)) => format!(
                        " (groupcoord's timer at {t} ms, Kafka's answer at {} ms)",
                        a.at_ms
                    ),
                    (Some(t), None) => format!(" (groupcoord's timer at {t} ms)"),
                    _ => String::new(),
                }
            )],
        };
    }
    let (Some(kafka), Some((_, ours))) = (kafka, ours.answer.as_ref()) else {
        return Verdict {
            category: None,
            differences: Vec::new(),
        };
    };
    let a = format!("{kafka:#?}");
    let b = format!("{ours:#?}");
    if a == b {
        return Verdict {
            category: None,
            differences: Vec::new(),
        };
    }
    let differences = line_diff(&a, &b);
    let field = differences
        .first()
        .and_then(|d| d.split(':').nth(1))
        .map(|f| f.trim().trim_start_matches("kafka").trim().to_string())
        .unwrap_or_default();
    // A leader that left is succeeded by the first member of Kafka's member HashMap, in the
    // hash order of member ids Kafka drew at random: which member follows cannot be predicted,
    // by groupcoord or by a client.
    if let (ResponseKind::JoinGroup(k), ResponseKind::JoinGroup(o)) = (&kafka, ours)
        && k.error_code == o.error_code
        && k.generation_id == o.generation_id
        && k.leader != o.leader
    {
        return Verdict {
            category: Some(format!("{LEADER_CHOICE} ({api}: {field})")),
            differences,
        };
    }
    Verdict {
        category: Some(format!("{api}: {field}")),
        differences,
    }
}

/// The category of a successor leader that differs (see `compare`); excused like a timing race.
pub const LEADER_CHOICE: &str = "leader choice";

fn show_at(a: Option<usize>) -> String {
    a.map_or("never".into(), |k| k.to_string())
}

/// The differing lines of two pretty Debug renderings (`path: kafka X / groupcoord Y`).
pub fn line_diff(a: &str, b: &str) -> Vec<String> {
    let la: Vec<&str> = a.lines().collect();
    let lb: Vec<&str> = b.lines().collect();
    let mut out = Vec::new();
    // The field a line belongs to: its own `name:`, or the last one above it (a value on lines
    // of its own, such as `Some(` then the string).
    let mut field_of = Vec::with_capacity(la.len());
    let mut last = String::new();
    for l in &la {
        let t = l.trim();
        if let Some((name, _)) = t.split_once(": ")
            && !name.contains(' ')
            && !name.starts_with('"')
        {
            last = name.to_string();
        }
        field_of.push(last.clone());
    }
    for i in 0..la.len().max(lb.len()) {
        let (x, y) = (la.get(i).copied(), lb.get(i).copied());
        if x != y {
            let field = field_of.get(i).cloned().unwrap_or_default();
            out.push(format!(
                "line {i}: {field}: kafka `{}` / groupcoord `{}`",
                x.unwrap_or("-").trim(),
                y.unwrap_or("-").trim()
            ));
            if out.len() >= 4 {
                break;
            }
        }
    }
    out
}

pub fn api_name(key: i16) -> &'static str {
    match key {
        8 => "OffsetCommit",
        9 => "OffsetFetch",
        11 => "JoinGroup",
        12 => "Heartbeat",
        13 => "LeaveGroup",
        14 => "SyncGroup",
        15 => "DescribeGroups",
        16 => "ListGroups",
        42 => "DeleteGroups",
        68 => "ConsumerGroupHeartbeat",
        69 => "ConsumerGroupDescribe",
        _ => "other",
    }
}

/// The report over all sequences.
pub struct Report {
    pub steps: usize,
    pub agreed: usize,
    /// Steps after the first disagreement of their sequence (which may follow from it).
    pub after_difference: usize,
    pub agreed_before_first: usize,
    pub first_only: usize,
    /// Steps that raced a timer (`raced`) or differ by the leader choice, and the steps after
    /// them in their sequence.
    pub excused: usize,
    /// Agreeing steps among the excused ones.
    pub excused_agreed: usize,
    /// Per category: steps, steps that were their sequence's first difference, the first one.
    pub categories: BTreeMap<String, (usize, usize, String)>,
}

impl Report {
    pub fn new() -> Report {
        Report {
            steps: 0,
            agreed: 0,
            after_difference: 0,
            agreed_before_first: 0,
            first_only: 0,
            excused: 0,
            excused_agreed: 0,
            categories: BTreeMap::new(),
        }
    }

    /// `races[k]`: step k raced a timer (`raced`), milliseconds after it.
    pub fn add(&mut self, seq: &WireSequence, verdicts: &[Verdict], races: &[Option<u64>]) {
        let mut seen_difference = false;
        let mut after_race = false;
        for (k, v) in verdicts.iter().enumerate() {
            self.steps += 1;
            let mut v = v.clone();
            if !seen_difference
                && let (Some(c), Some(ms)) = (&v.category, races.get(k).copied().flatten())
            {
                v.category = Some(format!("timing race ({c})"));
                v.differences.insert(
                    0,
                    format!("a timer deadline of groupcoord {ms} ms from the step"),
                );
                after_race = true;
            }
            if !seen_difference
                && v.category.as_deref().is_some_and(|c| {
                    c.starts_with(LEADER_CHOICE) || c.starts_with(super::consumer_check::STALL)
                })
            {
                after_race = true;
            }
            if after_race {
                self.excused += 1;
                if v.category.is_none() {
                    self.excused_agreed += 1;
                }
            }
            match &v.category {
                None => {
                    self.agreed += 1;
                    if !seen_difference {
                        self.agreed_before_first += 1;
                    }
                }
                Some(c) => {
                    let first_of_sequence = !seen_difference;
                    if seen_difference {
                        self.after_difference += 1;
                    } else {
                        self.first_only += 1;
                    }
                    seen_difference = true;
                    let e = self.categories.entry(c.clone()).or_insert_with(|| {
                        (
                            0,
                            0,
                            format!(
                                "seq {} step {k} ({}): {}",
                                seq.seq,
                                seq.steps[k].note,
                                v.differences.join("; ")
                            ),
                        )
                    });
                    e.0 += 1;
                    if first_of_sequence {
                        e.1 += 1;
                        if std::env::var_os("GROUPCOORD_DIFF_FIRSTS").is_some() {
                            println!("first difference: seq {} step {k}: {c}", seq.seq);
                        }
                    }
                }
            }
        }
    }

    pub fn agreement(&self) -> f64 {
        100.0 * self.agreed as f64 / self.steps.max(1) as f64
    }

    /// The agreement over the steps that neither raced a timer nor differ by the leader choice,
    /// nor follow such a step.
    pub fn agreement_without_races(&self) -> f64 {
        let steps = self.steps - self.excused;
        100.0 * (self.agreed - self.excused_agreed) as f64 / steps.max(1) as f64
    }

    pub fn render(&self, what: &str, sequences: usize) -> String {
        let mut s = format!(
            "{what}: agreement {:.2}% of {} steps ({} sequences); {} differing steps, {} of them \
             after an earlier difference of their sequence\n",
            self.agreement(),
            self.steps,
            sequences,
            self.steps - self.agreed,
            self.after_difference
        );
        s.push_str(&format!(
            "without timing races and leader choices: agreement {:.2}% of {} steps ({} steps \
             raced one of the coordinator's timers on Kafka's side, or differ by the leader Kafka \
             chose at random, or follow such a step in their sequence)\n",
            self.agreement_without_races(),
            self.steps - self.excused,
            self.excused
        ));
        s.push_str("  steps (first difference of a sequence)  category\n");
        for (c, (n, firsts, first)) in &self.categories {
            s.push_str(&format!(
                "  {n:5} ({firsts:3})  {c}\n         first: {first}\n"
            ));
        }
        s
    }
}

/// One step on both sides, for `GROUPCOORD_DIFF_CLASSIC_SEQ`.
pub fn print_step(k: usize, step: &WireStep, verdict: &Verdict, ours: &Ours) {
    let mark = match &verdict.category {
        None => "ok".to_string(),
        Some(c) => format!("DIFF {c}"),
    };
    println!("--- step {k} at {} ms: {} [{mark}]", step.at_ms, step.note);
    println!("request: {:?}", decode_request(step));
    match (decode_answer(step), &step.answer) {
        (Some(r), Some(a)) => println!("kafka (during step {}): {r:?}", a.after_step),
        _ => println!("kafka: no answer"),
    }
    if verdict.category.is_some() {
        match &ours.answer {
            Some((i, r)) => println!("groupcoord (during step {i}): {r:?}"),
            None => println!("groupcoord: no answer"),
        }
        for d in &verdict.differences {
            println!("  {d}");
        }
    }
}
