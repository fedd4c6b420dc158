//! Recent requests and records per group, for the live view's swimlanes and record log: the
//! same [`MessageLogEntry`] and [`RecordLogEntry`] shapes the simulation gives the explorer,
//! taken from the server's real StreamsGroupHeartbeat exchanges and the records it wrote.
//!
//! Kept only while someone is watching (an `/api/...` request in the last [`WATCH_MS`]): an
//! unwatched server pays a clock read and an atomic load per batch. Bounded: [`PER_GROUP`] messages and
//! records per group, [`MAX_GROUPS`] groups (the least recently active one is forgotten).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};

use serde::Serialize;

use crate::ErrorCode;
use crate::protocol::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};
use crate::records::Record;
use crate::sim::{MessageLogEntry, RecordLogEntry};

/// Messages (and records) kept per group.
pub const PER_GROUP: usize = 500;
/// Groups with a history at most (with [`PER_GROUP`]: at most 16,000 exchanges, kept as the
/// decoded structs; JSON and hex are made only for the entries a page asks for).
pub const MAX_GROUPS: usize = 32;
/// How long a look at the view keeps the history recording.
pub const WATCH_MS: i64 = 120_000;

/// One StreamsGroupHeartbeat exchange as the owner answered it.
#[derive(Debug)]
struct Exchange {
    seq: u64,
    at_ms: i64,
    version: i16,
    req: StreamsGroupHeartbeatRequest,
    resp: StreamsGroupHeartbeatResponse,
}

impl Exchange {
    /// The simulation's shape of a message, with the JSON and wire bytes of both sides.
    fn entry(&self) -> MessageLogEntry {
        let (req, resp) = (&self.req, &self.resp);
        let error = (resp.error_code != 0).then(|| {
            let name = ErrorCode(resp.error_code).name();
            match &resp.error_message {
                Some(m) => format!("{name}: {m}"),
                None => name.to_string(),
            }
        });
        // The member id: the request's, or the one the coordinator answered (a first join).
        let member_id = if req.member_id.is_empty() {
            resp.member_id.clone()
        } else {
            req.member_id.clone()
        };
        MessageLogEntry {
            seq: self.seq,
            sent_ms: self.at_ms,
            received_ms: self.at_ms,
            member_id,
            api: "StreamsGroupHeartbeat".to_string(),
            api_version: self.version,
            request: serde_json::to_value(req).unwrap_or_default(),
            response: serde_json::to_value(resp).ok(),
            request_hex: req
                .encode(self.version)
                .map(|b| hex(&b))
                .unwrap_or_default(),
            response_hex: resp.encode(self.version).ok().map(|b| hex(&b)),
            error,
            fate: "delivered".to_string(),
        }
    }
}

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
}

/// The history of every watched group.
#[derive(Debug, Default)]
pub struct History {
    groups: BTreeMap<String, GroupHistory>,
    msg_seq: u64,
    rec_seq: u64,
    recording_since_ms: i64,
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

    /// Whether recording was on until now (then the history is to be forgotten).
    pub fn stop_recording(&self) -> bool {
        self.recording.swap(false, Relaxed)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
            self.recording_since_ms = 0;
        }
    }

    /// One StreamsGroupHeartbeat exchange answered at `now_ms`.
    pub fn heartbeat(
        &mut self,
        now_ms: i64,
        version: i16,
        req: &StreamsGroupHeartbeatRequest,
        resp: &StreamsGroupHeartbeatResponse,
    ) {
        self.msg_seq += 1;
        let entry = Exchange {
            seq: self.msg_seq,
            at_ms: now_ms,
            version,
            req: req.clone(),
            resp: resp.clone(),
        };
        let h = self.group(&req.group_id, now_ms);
        h.messages.push_back(entry);
        if h.messages.len() > PER_GROUP {
            h.messages.pop_front();
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
        }
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

    #[test]
    fn history_is_bounded_per_group_and_in_groups() {
        let mut h = History::default();
        let resp = StreamsGroupHeartbeatResponse::default();
        for i in 0..PER_GROUP + 10 {
            h.heartbeat(i as i64, 0, &hb("g", "m"), &resp);
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
            h.heartbeat(1000 + g as i64, 0, &hb(&format!("g{g}"), "m"), &resp);
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
        h.heartbeat(5, 0, &hb("g", ""), &resp);
        let m = &h.page("g", 5, 0, 0).messages[0];
        assert_eq!(m.error.as_deref(), Some("UNKNOWN_MEMBER_ID: unknown"));
        assert_eq!(m.member_id, "m-new");
        assert!(!m.request_hex.is_empty());
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
