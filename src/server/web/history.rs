//! Recent requests and records per group, for the live view's swimlanes and record log: the
//! same [`MessageLogEntry`] and [`RecordLogEntry`] shapes the simulation gives the explorer,
//! taken from the server's real group exchanges (StreamsGroupHeartbeat, ConsumerGroupHeartbeat,
//! and the classic JoinGroup, SyncGroup, Heartbeat and LeaveGroup, see [`super::exchange`]) and
//! the records it wrote. The owner hands it every request it handled ([`History::handled`]) and
//! every deferred JoinGroup / SyncGroup answer ([`answered`]).
//!
//! Kept only while someone is watching (an `/api/...` request in the last [`WATCH_MS`]): an
//! unwatched server pays a clock read and an atomic load per batch, and an atomic load per
//! deferred answer. Bounded: [`PER_GROUP`] messages and
//! records per group, [`MAX_GROUPS`] groups (the least recently active one is forgotten).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};

use serde::Serialize;

use super::exchange::{Exchange, Request, Response};
use crate::coordinator::classic::RequestToken;
use crate::records::Record;
use crate::server::kafka::Handled;
use crate::server::storage::log::LogEntry;
use crate::server::wire::{Header, Req, Resp};
use crate::sim::{MessageLogEntry, RecordLogEntry};

/// Messages (and records) kept per group.
pub const PER_GROUP: usize = 500;
/// Groups with a history at most (with [`PER_GROUP`]: at most 16,000 exchanges, kept as the
/// decoded structs; JSON and hex are made only for the entries a page asks for).
pub const MAX_GROUPS: usize = 32;
/// How long a look at the view keeps the history recording.
pub const WATCH_MS: i64 = 120_000;

/// One group's recent exchanges and records, oldest first.
#[derive(Debug, Default)]
struct GroupHistory {
    messages: VecDeque<Exchange>,
    records: VecDeque<RecordLogEntry>,
    touched_ms: i64,
}

/// What `/api/history` answers: the entries after the sequence numbers asked for.
#[derive(Debug, Serialize)]
pub struct HistoryPage {
    /// The group.
    pub group_id: String,
    /// Server time (ms since the UNIX epoch).
    pub time_ms: i64,
    /// Since when the server records (ms since the UNIX epoch; 0: not recording).
    pub recording_since_ms: i64,
    /// Exchanges with `seq` greater than asked, oldest first.
    pub messages: Vec<MessageLogEntry>,
    /// Records with `seq` greater than asked, oldest first.
    pub records: Vec<RecordLogEntry>,
    /// A classic group's recent state transitions, oldest first: all of them, every time
    /// (see [`super::phases`]).
    pub phases: Vec<super::phases::Phase>,
}

/// The history of every watched group.
#[derive(Debug, Default)]
pub struct History {
    groups: BTreeMap<String, GroupHistory>,
    msg_seq: u64,
    rec_seq: u64,
    recording_since_ms: i64,
    /// Deferred JoinGroup / SyncGroup exchanges waiting for their answer: (group, seq).
    pending: BTreeMap<RequestToken, (String, u64)>,
}

/// Whether the history records (the owner asks once per batch; the web side extends it).
#[derive(Debug, Default)]
pub struct Watch {
    until_ms: AtomicI64,
    recording: AtomicBool,
}

impl Watch {
    /// Someone looked at the view at `now_ms`.
    pub fn looked(&self, now_ms: i64) {
        self.until_ms.fetch_max(now_ms + WATCH_MS, Relaxed);
    }

    /// Whether the history records at `now_ms`.
    pub fn watched(&self, now_ms: i64) -> bool {
        let w = self.until_ms.load(Relaxed) > now_ms;
        if w {
            self.recording.store(true, Relaxed);
        }
        w
    }

    /// Whether the history is recording (since the last batch that found someone watching);
    /// one atomic load, for paths that must cost nothing while nobody watches.
    pub fn is_recording(&self) -> bool {
        self.recording.load(Relaxed)
    }

    /// Whether recording was on until now (then the history is to be forgotten).
    pub fn stop_recording(&self) -> bool {
        self.recording.swap(false, Relaxed)
    }
}

impl History {
    fn group(&mut self, group_id: &str, now_ms: i64) -> &mut GroupHistory {
        if !self.groups.contains_key(group_id) && self.groups.len() >= MAX_GROUPS {
            let oldest = self
                .groups
                .iter()
                .min_by_key(|(_, h)| h.touched_ms)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                self.groups.remove(&id);
            }
        }
        let h = self.groups.entry(group_id.to_string()).or_default();
        h.touched_ms = now_ms;
        h
    }

    /// Note that recording is on at `now_ms` (the first time since it was off).
    pub fn recording(&mut self, now_ms: i64) {
        if self.recording_since_ms == 0 {
            self.recording_since_ms = now_ms;
        }
    }

    /// Recording stopped (nobody watched for a while): forget everything.
    pub fn stop(&mut self) {
        if self.recording_since_ms != 0 {
            self.groups.clear();
            self.pending.clear();
            self.recording_since_ms = 0;
        }
    }

    /// One request the owner handled at `now_ms`: a group member's exchange (a deferred
    /// JoinGroup or SyncGroup waits for [`answered`]), and the records it wrote, with the
    /// request as their cause.
    pub fn handled(&mut self, now_ms: i64, header: &Header, req: &Req, handled: &Handled) {
        let cause = match req {
            Req::Heartbeat(r) => {
                let member = if r.member_id.is_empty() {
                    "(new member)"
                } else {
                    r.member_id.as_str()
                };
                format!("heartbeat {member}")
            }
            _ => match kafka_protocol::messages::ApiKey::try_from(header.api_key) {
                Ok(k) => format!("{k:?}"),
                Err(_) => format!("api {}", header.api_key),
            },
        };
        if let Some(request) = Request::of(req) {
            self.exchange(now_ms, header.api_version, request, &handled.resp);
        }
        for e in &handled.entries {
            if let LogEntry::Records(rs) = e {
                self.records(now_ms, &cause, rs);
            }
        }
    }

    /// An exchange whose request arrived at `now_ms`, answered by `resp`.
    fn exchange(&mut self, now_ms: i64, version: i16, req: Request, resp: &Resp) {
        self.msg_seq += 1;
        let seq = self.msg_seq;
        let response = Response::of(resp);
        let group_id = req.group_id().to_string();
        if let Resp::Deferred(token) = resp {
            if self.pending.len() >= MAX_GROUPS * PER_GROUP {
                self.pending.pop_first();
            }
            self.pending.insert(*token, (group_id.clone(), seq));
        }
        let entry = Exchange {
            seq,
            sent_ms: now_ms,
            received_ms: if response.is_some() { now_ms } else { -1 },
            version,
            req,
            resp: response,
        };
        let h = self.group(&group_id, now_ms);
        h.messages.push_back(entry);
        if h.messages.len() > PER_GROUP {
            h.messages.pop_front();
        }
    }

    /// The deferred request `token` was answered with `resp` at `now_ms`.
    fn answer(&mut self, now_ms: i64, token: RequestToken, resp: &Resp) {
        let Some((group_id, seq)) = self.pending.remove(&token) else {
            return;
        };
        let exchange = self
            .groups
            .get_mut(&group_id)
            .and_then(|h| h.messages.iter_mut().rev().find(|m| m.seq == seq));
        if let Some(m) = exchange {
            m.resp = Response::of(resp);
            m.received_ms = now_ms;
        }
    }

    /// Records written at `now_ms` because of `cause`.
    pub fn records(&mut self, now_ms: i64, cause: &str, records: &[Record]) {
        for r in records {
            self.rec_seq += 1;
            let entry = RecordLogEntry {
                seq: self.rec_seq,
                at_ms: now_ms,
                cause: cause.to_string(),
                summary: r.summary(),
                record: r.clone(),
            };
            let h = self.group(r.group_id(), now_ms);
            h.records.push_back(entry);
            if h.records.len() > PER_GROUP {
                h.records.pop_front();
            }
        }
    }

    /// The entries of `group_id` after the given sequence numbers.
    pub fn page(&self, group_id: &str, now_ms: i64, after_msg: u64, after_rec: u64) -> HistoryPage {
        let h = self.groups.get(group_id);
        HistoryPage {
            group_id: group_id.to_string(),
            time_ms: now_ms,
            recording_since_ms: self.recording_since_ms,
            messages: h
                .map(|h| {
                    h.messages
                        .iter()
                        .filter(|m| m.seq > after_msg)
                        .map(Exchange::entry)
                        .collect()
                })
                .unwrap_or_default(),
            records: h
                .map(|h| {
                    h.records
                        .iter()
                        .filter(|r| r.seq > after_rec)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default(),
            phases: Vec::new(),
        }
    }
}

/// The group a member's request is about (a streams, KIP-848 or classic group's membership
/// exchange: the ones the history records), `None` for any other request. The owner marks that
/// group changed for the live view: these requests change what it shows without writing a
/// record (session deadlines, a streams member's task offsets, a classic group's join phase).
pub fn member_group(req: &Req) -> Option<&str> {
    use crate::server::wire::RequestKind as K;
    Some(match req {
        Req::Heartbeat(r) => &r.group_id,
        Req::Kafka(K::ConsumerGroupHeartbeat(r)) => &r.group_id.0,
        Req::Kafka(K::JoinGroup(r)) => &r.group_id.0,
        Req::Kafka(K::SyncGroup(r)) => &r.group_id.0,
        Req::Kafka(K::Heartbeat(r)) => &r.group_id.0,
        Req::Kafka(K::LeaveGroup(r)) => &r.group_id.0,
        _ => return None,
    })
}

/// A deferred JoinGroup or SyncGroup (`token`) was answered with `resp`: its exchange in the
/// history gets the answer, timed now. While nobody watches this is one atomic load: no lock,
/// no clock read.
pub fn answered(
    history: &std::sync::Mutex<History>,
    watch: &Watch,
    token: RequestToken,
    resp: &Resp,
) {
    answered_at(history, watch, || crate::server::now_ms().0, token, resp);
}

/// [`answered`] with its clock (`now_ms`, read only while recording).
fn answered_at(
    history: &std::sync::Mutex<History>,
    watch: &Watch,
    now_ms: impl FnOnce() -> i64,
    token: RequestToken,
    resp: &Resp,
) {
    if !watch.is_recording() {
        return;
    }
    let mut h = history.lock().unwrap_or_else(|e| e.into_inner());
    if h.recording_since_ms != 0 {
        h.answer(now_ms(), token, resp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};

    fn hb(group: &str, member: &str) -> StreamsGroupHeartbeatRequest {
        StreamsGroupHeartbeatRequest {
            group_id: group.to_string(),
            member_id: member.to_string(),
            ..Default::default()
        }
    }

    fn streams(
        h: &mut History,
        now: i64,
        req: StreamsGroupHeartbeatRequest,
        resp: &StreamsGroupHeartbeatResponse,
    ) {
        h.exchange(
            now,
            0,
            Request::Streams(req),
            &Resp::Heartbeat(resp.clone()),
        );
    }

    #[test]
    fn history_is_bounded_per_group_and_in_groups() {
        let mut h = History::default();
        let resp = StreamsGroupHeartbeatResponse::default();
        for i in 0..PER_GROUP + 10 {
            streams(&mut h, i as i64, hb("g", "m"), &resp);
        }
        let p = h.page("g", 0, 0, 0);
        assert_eq!(p.messages.len(), PER_GROUP);
        assert_eq!(p.messages[0].seq, 11, "the oldest ones went");
        assert_eq!(
            h.page("g", 0, p.messages[PER_GROUP - 2].seq, 0)
                .messages
                .len(),
            1
        );
        for g in 0..MAX_GROUPS + 5 {
            streams(&mut h, 1000 + g as i64, hb(&format!("g{g}"), "m"), &resp);
        }
        assert_eq!(h.groups.len(), MAX_GROUPS);
        assert!(
            !h.groups.contains_key("g"),
            "the least recently active group went"
        );
    }

    #[test]
    fn an_error_response_names_its_error_and_a_join_takes_the_answered_member_id() {
        let mut h = History::default();
        let resp = StreamsGroupHeartbeatResponse {
            error_code: 25,
            error_message: Some("unknown".into()),
            member_id: "m-new".into(),
            ..Default::default()
        };
        streams(&mut h, 5, hb("g", ""), &resp);
        let m = &h.page("g", 5, 0, 0).messages[0];
        assert_eq!(m.error.as_deref(), Some("UNKNOWN_MEMBER_ID: unknown"));
        assert_eq!(m.member_id, "m-new");
        assert!(!m.request_hex.is_empty());
    }

    #[test]
    fn a_deferred_answer_costs_no_lock_and_no_clock_read_while_nobody_watches() {
        use crate::server::wire::ResponseKind;
        use kafka_protocol::messages::{JoinGroupRequest, JoinGroupResponse};
        use kafka_protocol::protocol::StrBytes;
        let history = std::sync::Mutex::new(History::default());
        let token = RequestToken(7);
        {
            let mut h = history.lock().unwrap();
            h.recording(1);
            let join =
                JoinGroupRequest::default().with_group_id(StrBytes::from_static_str("g").into());
            h.exchange(1, 9, Request::Join(join), &Resp::Deferred(token));
        }
        let answer = Resp::Kafka(ResponseKind::JoinGroup(JoinGroupResponse::default()));
        let reads = std::cell::Cell::new(0);
        let clock = || {
            reads.set(reads.get() + 1);
            5
        };
        let in_flight = |h: &std::sync::Mutex<History>| {
            h.lock().unwrap().page("g", 0, 0, 0).messages[0].received_ms
        };

        // Nobody watches: the answer is not even looked at (the clock is not read).
        let watch = Watch::default();
        answered_at(&history, &watch, clock, token, &answer);
        assert_eq!(reads.get(), 0, "no clock read while nobody watches");
        assert_eq!(in_flight(&history), -1);

        // Someone watches: the exchange gets its answer, timed by the clock.
        watch.looked(0);
        assert!(watch.watched(1));
        answered_at(&history, &watch, clock, token, &answer);
        assert_eq!(reads.get(), 1);
        assert_eq!(in_flight(&history), 5);
    }

    #[test]
    fn every_member_request_names_its_group_for_the_live_view() {
        use crate::server::wire::RequestKind as K;
        use kafka_protocol::messages::{
            ConsumerGroupHeartbeatRequest, DescribeGroupsRequest, HeartbeatRequest,
            JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest,
        };
        use kafka_protocol::protocol::StrBytes;
        let g = || StrBytes::from_static_str("g").into();
        let members = [
            Req::Heartbeat(hb("g", "m")),
            Req::Kafka(K::ConsumerGroupHeartbeat(
                ConsumerGroupHeartbeatRequest::default().with_group_id(g()),
            )),
            Req::Kafka(K::JoinGroup(JoinGroupRequest::default().with_group_id(g()))),
            Req::Kafka(K::SyncGroup(SyncGroupRequest::default().with_group_id(g()))),
            Req::Kafka(K::Heartbeat(HeartbeatRequest::default().with_group_id(g()))),
            Req::Kafka(K::LeaveGroup(
                LeaveGroupRequest::default().with_group_id(g()),
            )),
        ];
        for r in &members {
            assert_eq!(member_group(r), Some("g"), "{r:?}");
            assert!(Request::of(r).is_some(), "the history records it too");
        }
        let describe = Req::Kafka(K::DescribeGroups(DescribeGroupsRequest::default()));
        assert_eq!(member_group(&describe), None);
    }

    #[test]
    fn watching_expires() {
        let w = Watch::default();
        assert!(!w.watched(0));
        w.looked(1000);
        assert!(w.watched(1000 + WATCH_MS - 1));
        assert!(!w.watched(1000 + WATCH_MS));
    }
}
