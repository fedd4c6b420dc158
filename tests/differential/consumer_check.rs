//! The consumer-group checker: replays a wire recording of ConsumerGroupHeartbeat /
//! ConsumerGroupDescribe (and the classic requests of mixed groups) against groupcoord's pure
//! request handler, through the same frame decoder the server uses (`wire::decode_frame`), so it
//! needs nothing of the consumer-group API but the wire: a key the handler does not serve yet is
//! answered "not served" and counted as a difference.
//!
//! Normalised besides what the classic checker does (member ids, sets, throttle times): topic ids.
//! Kafka's are random per broker; both sides' ids are mapped to the topic's name (Kafka's from
//! the recording, groupcoord's from its Metadata answer), and requests recorded with Kafka's ids
//! are rewritten to groupcoord's.

use std::collections::{BTreeMap, HashMap};

use bytes::{Bytes, BytesMut};
use groupcoord::assignor::consumer::TopicId;
use groupcoord::coordinator::Coordinator;
use groupcoord::server::kafka::State;
use groupcoord::server::peer::Peer;
use groupcoord::server::storage::log::TopicChange;
use groupcoord::server::wire::{
    Decoded, Header, Req, RequestKind, Resp, decode_frame, encode_request_header, encode_response,
    split_response,
};
use groupcoord::types::Millis;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use uuid::Uuid;

use super::classic_check::Ids;
use super::wire::{WireSequence, WireStep, unhex};

const BASE_MS: i64 = 1_700_000_000_000;

/// A decoded answer of any key the recordings hold.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Answer {
    Heartbeat(ConsumerGroupHeartbeatResponse),
    Describe(ConsumerGroupDescribeResponse),
    Join(JoinGroupResponse),
    Sync(SyncGroupResponse),
    ClassicHeartbeat(HeartbeatResponse),
    Leave(LeaveGroupResponse),
    DescribeGroups(DescribeGroupsResponse),
    ListGroups(ListGroupsResponse),
    /// groupcoord closed the connection instead (a key or version it does not serve).
    Closed(String),
}

pub fn decode_answer(key: i16, version: i16, body: &[u8]) -> Answer {
    let mut b = Bytes::copy_from_slice(body);
    let e = |e: anyhow_like::Error| Answer::Closed(format!("undecodable answer: {e}"));
    let r = match key {
        68 => ConsumerGroupHeartbeatResponse::decode(&mut b, version).map(Answer::Heartbeat),
        69 => ConsumerGroupDescribeResponse::decode(&mut b, version).map(Answer::Describe),
        11 => JoinGroupResponse::decode(&mut b, version).map(Answer::Join),
        14 => SyncGroupResponse::decode(&mut b, version).map(Answer::Sync),
        12 => HeartbeatResponse::decode(&mut b, version).map(Answer::ClassicHeartbeat),
        13 => LeaveGroupResponse::decode(&mut b, version).map(Answer::Leave),
        15 => DescribeGroupsResponse::decode(&mut b, version).map(Answer::DescribeGroups),
        16 => ListGroupsResponse::decode(&mut b, version).map(Answer::ListGroups),
        _ => return Answer::Closed(format!("key {key} not in the recordings")),
    };
    r.unwrap_or_else(|x| e(anyhow_like::Error(format!("{x:#}"))))
}

mod anyhow_like {
    pub struct Error(pub String);
    impl std::fmt::Display for Error {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
}

/// Topic ids of one side, both ways.
#[derive(Default)]
struct TopicIds {
    by_name: HashMap<String, Uuid>,
    by_id: HashMap<Uuid, String>,
}

impl TopicIds {
    fn insert(&mut self, name: &str, id: Uuid) {
        self.by_name.insert(name.to_string(), id);
        self.by_id.insert(id, name.to_string());
    }
}

/// A stable stand-in for a topic: its position in the topic list (+1), so both sides compare
/// equal whatever ids their servers drew.
fn canonical(ids: &TopicIds, id: Uuid) -> Uuid {
    match ids.by_id.get(&id) {
        Some(name) => {
            let k = super::consumer_generate::TOPICS
                .iter()
                .position(|(n, _)| n == name)
                .map_or(0xffff, |k| k as u128 + 1);
            Uuid::from_u128(k)
        }
        None => id,
    }
}

fn parse_uuid(s: &str) -> Uuid {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    Uuid::from_u128(u128::from_str_radix(&hex, 16).expect("uuid"))
}

pub fn uuid_text(u: Uuid) -> String {
    format!("{:032x}", u.as_u128())
}

/// groupcoord's topic ids, from its Metadata answer (v12 carries them).
fn our_topic_ids(state: &mut State, peer: &Peer) -> TopicIds {
    let h = Header {
        api_key: 3,
        api_version: 12,
        correlation_id: 0,
        client_id: Some("checker".into()),
    };
    let req = MetadataRequest::default().with_topics(None);
    let handled = state.handle(
        Millis(BASE_MS),
        &h,
        peer,
        &Req::Kafka(RequestKind::Metadata(req)),
    );
    let mut ids = TopicIds::default();
    if let Resp::Kafka(groupcoord::server::wire::ResponseKind::Metadata(m)) = handled.resp {
        for t in m.topics {
            if let Some(n) = t.name {
                ids.insert(n.as_str(), t.topic_id);
            }
        }
    }
    ids
}

/// One step's answer on groupcoord.
pub struct Ours {
    pub answer: Option<(usize, Answer)>,
    pub timer_at: Option<u64>,
}

fn reencode<M: Encodable>(m: &M, version: i16) -> Vec<u8> {
    let mut buf = BytesMut::new();
    m.encode(&mut buf, version).expect("re-encode");
    buf.to_vec()
}

/// The recorded request body with Kafka's member and topic ids replaced by groupcoord's.
fn rewrite(
    key: i16,
    version: i16,
    body: Bytes,
    ids: &Ids,
    kafka_topics: &TopicIds,
    our_topics: &TopicIds,
) -> Vec<u8> {
    let mut b = body.clone();
    let topic = |id: &mut Uuid| {
        if let Some(o) = kafka_topics
            .by_id
            .get(id)
            .and_then(|name| our_topics.by_name.get(name))
        {
            *id = *o;
        }
    };
    match key {
        68 => {
            let Ok(mut r) = ConsumerGroupHeartbeatRequest::decode(&mut b, version) else {
                return body.to_vec();
            };
            ids.to_ours(&mut r.member_id);
            for t in r.topic_partitions.iter_mut().flatten() {
                topic(&mut t.topic_id);
            }
            reencode(&r, version)
        }
        11 => {
            let mut r = JoinGroupRequest::decode(&mut b, version).expect("join");
            ids.to_ours(&mut r.member_id);
            reencode(&r, version)
        }
        14 => {
            let mut r = SyncGroupRequest::decode(&mut b, version).expect("sync");
            ids.to_ours(&mut r.member_id);
            reencode(&r, version)
        }
        12 => {
            let mut r = HeartbeatRequest::decode(&mut b, version).expect("heartbeat");
            ids.to_ours(&mut r.member_id);
            reencode(&r, version)
        }
        13 => {
            let mut r = LeaveGroupRequest::decode(&mut b, version).expect("leave");
            ids.to_ours(&mut r.member_id);
            for m in &mut r.members {
                ids.to_ours(&mut m.member_id);
            }
            reencode(&r, version)
        }
        _ => body.to_vec(),
    }
}

fn member_id_of(a: &Answer) -> Option<String> {
    match a {
        Answer::Heartbeat(h) => h.member_id.as_ref().map(|m| m.to_string()),
        Answer::Join(j) => Some(j.member_id.to_string()),
        _ => None,
    }
}

/// Replay one sequence on a fresh handler.
pub fn replay(seq: &WireSequence, coord: Coordinator) -> Vec<Ours> {
    let mut state = State::new(coord, "127.0.0.1".into(), 9092);
    // Kafka's topic ids: its assignors iterate topics in the hash order of their ids, so the
    // same assignment needs the same ids.
    state.coord.set_topic_ids(
        seq.topic_ids
            .iter()
            .map(|(n, id)| {
                let (hi, lo) = parse_uuid(id).as_u64_pair();
                (n.clone(), TopicId::new(hi as i64, lo as i64))
            })
            .collect(),
    );
    let topics: Vec<TopicChange> = super::consumer_generate::TOPICS
        .iter()
        .map(|(n, p)| TopicChange::Set {
            name: n.to_string(),
            partitions: *p,
        })
        .collect();
    state.apply_topics(&topics);
    let peer = Peer::anonymous("127.0.0.1");
    let mut kafka_topics = TopicIds::default();
    for (n, id) in &seq.topic_ids {
        kafka_topics.insert(n, parse_uuid(id));
    }
    let our_topics = our_topic_ids(&mut state, &peer);
    let kafka: Vec<Option<Answer>> = seq
        .steps
        .iter()
        .map(|s| {
            s.answer
                .as_ref()
                .map(|a| decode_answer(s.api_key, s.version, &unhex(&a.body)))
        })
        .collect();
    let mut ids = Ids::default();
    let mut ours: Vec<Ours> = seq
        .steps
        .iter()
        .map(|_| Ours {
            answer: None,
            timer_at: None,
        })
        .collect();
    let mut headers: HashMap<usize, Header> = HashMap::new();
    let mut tokens = HashMap::new();

    let to_answer = |h: &Header, resp: &Resp| -> Answer {
        match encode_response(h, resp) {
            Ok(frame) => match split_response(h.api_key, h.api_version, &frame[4..]) {
                Ok((_, body)) => decode_answer(h.api_key, h.api_version, body),
                Err(e) => Answer::Closed(e),
            },
            Err(e) => Answer::Closed(e),
        }
    };
    let mut deliver =
        |step: usize, interval: usize, timer: Option<i64>, a: Answer, ids: &mut Ids| {
            if let (Some(k), Some(o)) = (
                kafka[step].as_ref().and_then(member_id_of),
                member_id_of(&a),
            ) {
                ids.pair(&k, &o);
            }
            ours[step].answer = Some((interval, a));
            ours[step].timer_at = timer.map(|t| (t - BASE_MS) as u64);
        };

    for (k, step) in seq.steps.iter().enumerate() {
        let now = BASE_MS + step.at_ms as i64;
        // Timers due before this step, each at its deadline.
        for _ in 0..10_000 {
            let Some(due) = state.coord.next_deadline() else {
                break;
            };
            if due.0 > now {
                break;
            }
            state.fire_timers(due);
            for (t, r) in state.take_answers() {
                let s = tokens.remove(&t).expect("our token");
                let a = to_answer(&headers[&s], &r);
                deliver(s, k.saturating_sub(1), Some(due.0), a, &mut ids);
            }
        }
        let h = Header {
            api_key: step.api_key,
            api_version: step.version,
            correlation_id: k as i32,
            client_id: Some(step.client_id.clone()),
        };
        let body = rewrite(
            step.api_key,
            step.version,
            unhex(&step.request),
            &ids,
            &kafka_topics,
            &our_topics,
        );
        // The id Kafka drew for a member that joined without one, so that groupcoord's
        // assignors see the same ids (they order members by their hash, as Kafka's do).
        state
            .coord
            .supply_member_id(drawn_member_id(step, kafka[k].as_ref()));
        let mut frame = encode_request_header(&h).expect("header");
        frame.extend_from_slice(&body);
        match decode_frame(Bytes::from(frame), true) {
            Decoded::Request(h, req) => {
                let handled = state.handle(Millis(now), &h, &peer, &req);
                match handled.resp {
                    Resp::Deferred(t) => {
                        tokens.insert(t, k);
                    }
                    r => {
                        let a = to_answer(&h, &r);
                        deliver(k, k, None, a, &mut ids);
                    }
                }
                headers.insert(k, h);
            }
            Decoded::Close(e) => deliver(k, k, None, Answer::Closed(e), &mut ids),
            Decoded::ApiVersionsUnsupported(_) => unreachable!("no ApiVersions in a recording"),
        }
        state.coord.supply_member_id(None);
        if std::env::var_os("GROUPCOORD_DIFF_TRACE").is_some() {
            trace_group(&mut state, &peer, now, &seq.groups[0]);
        }
        for (t, r) in state.take_answers() {
            let s = tokens.remove(&t).expect("our token");
            let a = to_answer(&headers[&s], &r);
            deliver(s, k, None, a, &mut ids);
        }
    }
    for o in &mut ours {
        if let Some((_, a)) = &mut o.answer {
            ids_back(a, &ids);
            normalise(a, &our_topics, &seq.groups);
        }
    }
    ours
}

/// The member id Kafka drew when it handled `step`: the id its answer gives a join without
/// one (JoinGroup, or a v0 ConsumerGroupHeartbeat), or the one a refused static v0 join names
/// in its error message.
fn drawn_member_id(step: &WireStep, kafka: Option<&Answer>) -> Option<String> {
    let mut b = unhex(&step.request);
    let asked_without_id = match step.api_key {
        11 => JoinGroupRequest::decode(&mut b, step.version).is_ok_and(|r| r.member_id.is_empty()),
        68 => ConsumerGroupHeartbeatRequest::decode(&mut b, step.version)
            .is_ok_and(|r| r.member_id.is_empty()),
        _ => false,
    };
    if !asked_without_id {
        return None;
    }
    let id = match kafka? {
        Answer::Join(j) => j.member_id.to_string(),
        Answer::Heartbeat(h) => match &h.member_id {
            Some(m) if !m.is_empty() => m.to_string(),
            _ => {
                let m = h.error_message.as_ref()?;
                let rest = m.as_str().strip_prefix("Static member ")?;
                rest[..rest.find(' ')?].to_string()
            }
        },
        _ => return None,
    };
    (!id.is_empty()).then_some(id)
}

/// groupcoord's view of the group after a step (`GROUPCOORD_DIFF_TRACE=1`): epochs and targets.
fn trace_group(state: &mut State, peer: &Peer, now: i64, group: &str) {
    let h = Header {
        api_key: 69,
        api_version: 0,
        correlation_id: 0,
        client_id: Some("trace".into()),
    };
    let req = ConsumerGroupDescribeRequest::default()
        .with_group_ids(vec![GroupId(StrBytes::from_string(group.to_string()))]);
    let handled = state.handle(
        Millis(now),
        &h,
        peer,
        &Req::Kafka(RequestKind::ConsumerGroupDescribe(req)),
    );
    if let Resp::Kafka(groupcoord::server::wire::ResponseKind::ConsumerGroupDescribe(d)) =
        handled.resp
    {
        for g in d.groups {
            println!(
                "  trace: epoch {} assignment epoch {} state {}",
                g.group_epoch, g.assignment_epoch, g.group_state
            );
            for m in g.members {
                let target: Vec<String> = m
                    .target_assignment
                    .topic_partitions
                    .iter()
                    .map(|t| format!("{}{:?}", t.topic_name.as_str(), t.partitions))
                    .collect();
                println!(
                    "  trace: {} epoch {} names {:?} regex {:?} target {}",
                    m.client_id,
                    m.member_epoch,
                    m.subscribed_topic_names,
                    m.subscribed_topic_regex,
                    target.join(" ")
                );
            }
        }
    }
}

fn ids_back(a: &mut Answer, ids: &Ids) {
    match a {
        Answer::Heartbeat(h) => {
            if let Some(m) = &mut h.member_id {
                ids.to_kafka(m);
            }
            // Error messages name member ids (v0: drawn by the servers).
            if let Some(msg) = &mut h.error_message {
                let mut text = msg.to_string();
                for (ours, kafka) in &ids.ours_to_kafka {
                    text = text.replace(ours.as_str(), kafka.as_str());
                }
                *msg = StrBytes::from_string(text);
            }
        }
        Answer::Join(j) => ids.join_back(j),
        Answer::Describe(d) => {
            for g in &mut d.groups {
                for m in &mut g.members {
                    ids.to_kafka(&mut m.member_id);
                }
            }
        }
        Answer::DescribeGroups(d) => ids.describe_back(d),
        Answer::Leave(l) => ids.leave_back(l),
        _ => {}
    }
}

/// Throttle times zeroed, topic ids made canonical, sets sorted.
fn normalise(a: &mut Answer, topics: &TopicIds, groups: &[String]) {
    match a {
        Answer::Heartbeat(h) => {
            h.throttle_time_ms = 0;
            if let Some(x) = &mut h.assignment {
                for t in &mut x.topic_partitions {
                    t.topic_id = canonical(topics, t.topic_id);
                    t.partitions.sort();
                }
                x.topic_partitions.sort_by_key(|t| t.topic_id.as_u128());
            }
        }
        Answer::Describe(d) => {
            d.throttle_time_ms = 0;
            for g in &mut d.groups {
                g.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
                for m in &mut g.members {
                    m.subscribed_topic_names.sort();
                    for x in [&mut m.assignment, &mut m.target_assignment] {
                        for t in &mut x.topic_partitions {
                            t.topic_id = canonical(topics, t.topic_id);
                            t.partitions.sort();
                        }
                        x.topic_partitions.sort_by_key(|t| t.topic_id.as_u128());
                    }
                }
            }
        }
        Answer::Join(j) => {
            j.throttle_time_ms = 0;
            j.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
        }
        Answer::Sync(x) => x.throttle_time_ms = 0,
        Answer::ClassicHeartbeat(x) => x.throttle_time_ms = 0,
        Answer::Leave(x) => x.throttle_time_ms = 0,
        Answer::DescribeGroups(x) => {
            x.throttle_time_ms = 0;
            for g in &mut x.groups {
                g.members.sort_by(|a, b| a.member_id.cmp(&b.member_id));
            }
        }
        Answer::ListGroups(x) => {
            x.throttle_time_ms = 0;
            x.groups
                .retain(|g| groups.iter().any(|own| own.as_str() == g.group_id.as_str()));
            x.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        }
        Answer::Closed(_) => {}
    }
}

/// The category prefix of an answer Kafka gave late because it stalled (`compare`).
pub const STALL: &str = "broker stall";

/// Compare one step (as the classic checker: when, then every field).
pub fn compare(seq: &WireSequence, k: usize, ours: &Ours) -> super::classic_check::Verdict {
    use super::classic_check::{TIMER_SLACK_MS, Verdict, api_name};
    let step = &seq.steps[k];
    let mut kafka_topics = TopicIds::default();
    for (n, id) in &seq.topic_ids {
        kafka_topics.insert(n, parse_uuid(id));
    }
    let mut kafka = step
        .answer
        .as_ref()
        .map(|a| decode_answer(step.api_key, step.version, &unhex(&a.body)));
    if let Some(a) = &mut kafka {
        normalise(a, &kafka_topics, &seq.groups);
    }
    let api = api_name(step.api_key);
    let kafka_at = step.answer.as_ref().map(|a| a.after_step);
    let ours_at = ours.answer.as_ref().map(|(i, _)| *i);
    let timer_agrees = match (ours.timer_at, &step.answer) {
        (Some(t), Some(a)) => a.at_ms + 5 >= t && a.at_ms <= t + TIMER_SLACK_MS,
        _ => false,
    };
    if kafka_at != ours_at && !timer_agrees {
        // Kafka stalled: an answer it gives at once by its rules came more than the recorder's
        // deferral window (420 ms) late, several steps later, while groupcoord answered the
        // same at once. Counted as a timing race (excused with the rest of its sequence).
        if let (Some(a), Some((i, o))) = (&step.answer, ours.answer.as_ref())
            && *i == k
            && a.at_ms > step.at_ms + 420
            && kafka
                .as_ref()
                .is_some_and(|kf| format!("{kf:#?}") == format!("{o:#?}"))
        {
            return Verdict {
                category: Some(format!("{STALL} ({api}: answer timing)")),
                differences: vec![format!(
                    "Kafka answered {} ms after the request, during step {}; groupcoord at once",
                    a.at_ms - step.at_ms,
                    a.after_step
                )],
            };
        }
        return Verdict {
            category: Some(format!("{api}: answer timing")),
            differences: vec![format!(
                "answered during step: kafka {kafka_at:?} / groupcoord {ours_at:?}"
            )],
        };
    }
    let (Some(kafka), Some((_, ours))) = (kafka, ours.answer.as_ref()) else {
        return Verdict {
            category: None,
            differences: Vec::new(),
        };
    };
    if let Answer::Closed(e) = ours {
        return Verdict {
            category: Some(format!("{api}: not served")),
            differences: vec![e.clone()],
        };
    }
    let (a, b) = (format!("{kafka:#?}"), format!("{ours:#?}"));
    if a == b {
        return Verdict {
            category: None,
            differences: Vec::new(),
        };
    }
    let differences = super::classic_check::line_diff(&a, &b);
    let field = differences
        .first()
        .and_then(|d| d.split(':').nth(1))
        .map(|f| f.trim().to_string())
        .unwrap_or_default();
    Verdict {
        category: Some(format!("{api}: {field}")),
        differences,
    }
}

/// The topic ids of the broker, for the recording.
pub fn topic_ids_of(m: &MetadataResponse) -> BTreeMap<String, String> {
    m.topics
        .iter()
        .filter_map(|t| {
            t.name
                .as_ref()
                .map(|n| (n.to_string(), uuid_text(t.topic_id)))
        })
        .collect()
}

/// One step of a sequence as `GROUPCOORD_DIFF_CONSUMER_SEQ=N` prints it: the request's note,
/// Kafka's answer and, when they differ, groupcoord's and the differing fields.
pub fn print_step(
    seq: &WireSequence,
    k: usize,
    verdict: &super::classic_check::Verdict,
    ours: &Ours,
) {
    let step = &seq.steps[k];
    let mark = match &verdict.category {
        None => "ok".to_string(),
        Some(c) => format!("DIFF {c}"),
    };
    println!("--- step {k} at {} ms: {} [{mark}]", step.at_ms, step.note);
    let mut b = unhex(&step.request);
    match step.api_key {
        68 => println!(
            "request: {:?}",
            ConsumerGroupHeartbeatRequest::decode(&mut b, step.version)
        ),
        69 => println!(
            "request: {:?}",
            ConsumerGroupDescribeRequest::decode(&mut b, step.version)
        ),
        _ => {}
    }
    match &step.answer {
        Some(a) => println!(
            "kafka (during step {}): {:?}",
            a.after_step,
            decode_answer(step.api_key, step.version, &unhex(&a.body))
        ),
        None => println!("kafka: no answer"),
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
