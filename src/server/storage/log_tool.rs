//! `groupcoord log inspect|truncate-after`: the way out when start-up refuses a log.
//!
//! Start-up never skips or drops acknowledged data by itself; when it stops, it names the file
//! and offset of the batch it cannot load. `inspect` lists every file and batch of the data
//! directory (offset, size, kind, CRC, what it holds) and the commit mark; `truncate-after
//! OFFSET` is the explicit, operator-chosen loss: it cuts a segment at a batch boundary (the batch
//! at OFFSET and everything after it go, newer segments too) and moves the commit mark there.
//! Both take the data-directory lock, so they refuse to run beside a live server.

use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::path::Path;

use super::commit_mark::{self, CommitMark, Mark};
use super::lock::DataDirLock;
use super::log::{
    LogEntry, Parsed, ScramChange, TopicChange, decode_payload, parse_at, parse_numbered,
    segment_name, snapshot_body,
};

fn describe(entry: &LogEntry, verbose: bool) -> String {
    match entry {
        LogEntry::Records(rs) => {
            let mut s = format!("{} coordinator records", rs.len());
            let shown = if verbose { rs.len() } else { 3 };
            for r in rs.iter().take(shown) {
                let _ = write!(s, "; {}", r.summary());
            }
            if rs.len() > shown {
                s.push_str("; ...");
            }
            s
        }
        LogEntry::Topics(ts) => {
            let parts: Vec<String> = ts
                .iter()
                .map(|t| match t {
                    TopicChange::Set { name, partitions } => format!("set {name}={partitions}"),
                    TopicChange::Delete { name } => format!("delete {name}"),
                })
                .collect();
            format!("topics: {}", parts.join(", "))
        }
        LogEntry::Acls(cs) => {
            let parts: Vec<String> = cs
                .iter()
                .map(|c| match c {
                    crate::server::acl::AclChange::Create(a) => format!("create {a:?}"),
                    crate::server::acl::AclChange::Delete(a) => format!("delete {a:?}"),
                })
                .collect();
            format!("acls: {}", parts.join(", "))
        }
        LogEntry::GroupConfigs(cs) => {
            let parts: Vec<String> = cs
                .iter()
                .map(|c| match &c.value {
                    Some(v) => format!("set {}.{}={v}", c.group, c.key),
                    None => format!("delete {}.{}", c.group, c.key),
                })
                .collect();
            format!("group configs: {}", parts.join(", "))
        }
        LogEntry::Scram(cs) => {
            let parts: Vec<String> = cs
                .iter()
                .map(|c| match c {
                    ScramChange::Upsert {
                        user,
                        hash,
                        credential,
                    } => format!(
                        "set {user} {} (iterations {})",
                        hash.mechanism_name(),
                        credential.iterations
                    ),
                    ScramChange::Delete { user, hash } => {
                        format!("delete {user} {}", hash.mechanism_name())
                    }
                })
                .collect();
            format!("SCRAM credentials: {}", parts.join(", "))
        }
    }
}

/// Batches of one buffer, as lines; stops at the first bad batch.
fn list_batches(out: &mut String, buf: &[u8], verbose: bool) {
    let mut pos = 0;
    while pos < buf.len() {
        match parse_at(buf, pos) {
            Parsed::Ok { payload, next } => {
                let what = match decode_payload(payload) {
                    Ok(e) => describe(&e, verbose),
                    Err(e) => format!("CRC ok but does not decode: {e}"),
                };
                let _ = writeln!(out, "  offset {pos:>10}  {:>8} bytes  {what}", next - pos);
                pos = next;
            }
            Parsed::Bad(reason) => {
                let _ = writeln!(
                    out,
                    "  offset {pos:>10}  BAD: {reason} ({} bytes to the end of the file)",
                    buf.len() - pos
                );
                return;
            }
        }
    }
}

/// The report of `groupcoord log inspect`.
pub fn inspect(dir: &Path, verbose: bool) -> Result<String, String> {
    let _lock = DataDirLock::acquire(dir).map_err(|e| e.to_string())?;
    let mut out = String::new();
    match commit_mark::read(dir).map_err(|e| e.to_string())? {
        commit_mark::Read::Absent => out.push_str("COMMIT: absent\n"),
        commit_mark::Read::Corrupt => out.push_str("COMMIT: CORRUPT (no valid slot)\n"),
        commit_mark::Read::Mark(m) => {
            let _ = writeln!(
                out,
                "COMMIT: {} acknowledged up to offset {}",
                segment_name(m.segment),
                m.end
            );
        }
    }
    let mut names: Vec<String> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".snap") || n.ends_with(".log"))
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let buf = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = writeln!(out, "{name}: {} bytes", buf.len());
        if name.ends_with(".snap") {
            match snapshot_body(&buf) {
                Ok(body) => {
                    out.push_str("  complete (end marker and checksum valid)\n");
                    list_batches(&mut out, body, verbose);
                }
                Err(e) => {
                    let _ = writeln!(out, "  {e}");
                    list_batches(&mut out, &buf, verbose);
                }
            }
        } else {
            list_batches(&mut out, &buf, verbose);
        }
    }
    Ok(out)
}

/// `groupcoord log truncate-after OFFSET`: cut segment `segment` (default: the newest) at the
/// batch boundary `offset`, remove newer segments, and move the commit mark there.
pub fn truncate_after(dir: &Path, offset: u64, segment: Option<u64>) -> Result<String, String> {
    let _lock = DataDirLock::acquire(dir).map_err(|e| e.to_string())?;
    let mut segments: Vec<u64> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| parse_numbered(&e.file_name().to_string_lossy(), "segment-", ".log"))
        .collect();
    segments.sort();
    let n = match segment {
        Some(n) if segments.contains(&n) => n,
        Some(n) => return Err(format!("no {} in {}", segment_name(n), dir.display())),
        None => *segments
            .last()
            .ok_or_else(|| format!("no segment in {}", dir.display()))?,
    };
    let path = dir.join(segment_name(n));
    let buf = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // OFFSET must be a batch boundary reached through valid batches.
    let mut pos = 0usize;
    while (pos as u64) < offset {
        match parse_at(&buf, pos) {
            Parsed::Ok { next, .. } => pos = next,
            Parsed::Bad(reason) => {
                return Err(format!(
                    "{} has a bad batch at offset {pos} ({reason}), before {offset}: truncate at \
                     {pos} or earlier",
                    path.display()
                ));
            }
        }
    }
    if pos as u64 != offset {
        return Err(format!(
            "offset {offset} is not a batch boundary of {} (the batch before it ends at {pos})",
            path.display()
        ));
    }
    let dropped = buf.len() as u64 - offset;
    let f = OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.set_len(offset)
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut removed = Vec::new();
    for &m in segments.iter().filter(|&&m| m > n) {
        let p = dir.join(segment_name(m));
        fs::remove_file(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        removed.push(segment_name(m));
    }
    CommitMark::open(dir)
        .and_then(|mut c| {
            c.store(Mark {
                segment: n,
                end: offset,
            })
        })
        .map_err(|e| format!("COMMIT: {e}"))?;
    let mut msg = format!(
        "{}: truncated to {offset} bytes ({dropped} bytes dropped)",
        path.display()
    );
    if !removed.is_empty() {
        let _ = write!(msg, "; removed {}", removed.join(", "));
    }
    Ok(msg)
}

/// Records a trace holds at most; older ones are compacted into the state they left (see
/// [`trace`]).
pub const TRACE_MAX_RECORDS: usize = 20_000;

/// The trace format's identifier and version (`www/README.md`, "Traces").
pub const TRACE_FORMAT: &str = "groupcoord-trace";
/// The trace format's version.
pub const TRACE_VERSION: u32 = 1;

/// One record of a trace: when it was appended, and the record in Kafka's coordinator record
/// layout (what the explorer replays) with its one-line summary (what people read).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TraceRecord {
    /// Position in the trace, from 0.
    pub seq: u64,
    /// Append time (ms since the UNIX epoch): the batch's, or for records without one (written
    /// before append times were logged, or in a snapshot) the first known time after them.
    pub at_ms: i64,
    /// `log` (appended to a segment with its time), `untimed` (no append time) or `compacted`
    /// (the state older records left, see [`Trace::compacted_records`]).
    pub cause: &'static str,
    /// The record in one line.
    pub summary: String,
    /// Key bytes, hex.
    pub key: String,
    /// Value bytes, hex (`""`: a tombstone).
    pub value: String,
    /// The record as JSON (what the explorer's record log and epoch chart show; the state is
    /// replayed from `key` and `value`).
    pub record: crate::records::Record,
}

/// A group's recorded history, as `groupcoord log export` and `GET /api/groups/{id}/trace`
/// give it (format `groupcoord-trace` version 1, `source: "server"`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Trace {
    /// Always [`TRACE_FORMAT`].
    pub format: &'static str,
    /// Always [`TRACE_VERSION`].
    pub version: u32,
    /// `server`: records of a real server (no spec, no actions).
    pub source: &'static str,
    /// The group.
    pub group_id: String,
    /// Topic name -> partition count, as the log last set them.
    pub topics: std::collections::BTreeMap<String, i32>,
    /// The group's config overrides as the log last set them.
    pub configs: std::collections::BTreeMap<String, String>,
    /// The records, oldest first.
    pub records: Vec<TraceRecord>,
    /// The server does not log requests: always empty (the format has room for them).
    pub messages: Vec<serde_json::Value>,
    /// Records without an append time.
    pub untimed_records: usize,
    /// Records of the group that were replaced by the compacted state they left, so that the
    /// trace holds at most [`TRACE_MAX_RECORDS`] (0: none).
    pub compacted_records: usize,
}

struct Raw {
    at_ms: Option<i64>,
    record: crate::records::Record,
}

/// The files a load reads, in order: the newest complete snapshot, then the segments it does not
/// cover.
fn files_to_read(dir: &Path) -> Result<Vec<(std::path::PathBuf, bool)>, String> {
    let mut snaps = Vec::new();
    let mut segs = Vec::new();
    for e in fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(n) = parse_numbered(&name, "snapshot-", ".snap") {
            snaps.push(n);
        } else if let Some(n) = parse_numbered(&name, "segment-", ".log") {
            segs.push(n);
        }
    }
    snaps.sort();
    segs.sort();
    let base = snaps.iter().rev().copied().find(|&n| {
        fs::read(dir.join(super::log::snapshot_name(n))).is_ok_and(|b| snapshot_body(&b).is_ok())
    });
    let mut out = Vec::new();
    if let Some(n) = base {
        out.push((dir.join(super::log::snapshot_name(n)), true));
    }
    for n in segs.into_iter().filter(|&n| base.is_none_or(|b| n >= b)) {
        out.push((dir.join(segment_name(n)), false));
    }
    Ok(out)
}

/// Reads the log in `dir` (without its lock: segments are only appended to, and reading stops at
/// the first batch that is not complete) and returns the records of `group_id` with their
/// append times. A group with more than `max_records` records has its older ones replaced by the
/// compacted state they left (`compacted_records` says how many went).
pub fn trace(dir: &Path, group_id: &str, max_records: usize) -> Result<Trace, String> {
    let mut raw: Vec<Raw> = Vec::new();
    let mut topics = std::collections::BTreeMap::new();
    let mut configs = std::collections::BTreeMap::new();
    for (path, snapshot) in files_to_read(dir)? {
        let file = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let buf = if snapshot {
            snapshot_body(&file).map_err(|e| format!("{}: {e}", path.display()))?
        } else {
            &file[..]
        };
        let mut pos = 0;
        while pos < buf.len() {
            let Parsed::Ok { payload, next } = parse_at(buf, pos) else {
                break; // a torn or damaged tail: what comes before it is the history
            };
            let entry = decode_payload(payload)
                .map_err(|e| format!("{} at offset {pos}: {e}", path.display()))?;
            let at_ms = super::log::append_time(payload);
            match entry {
                LogEntry::Records(rs) => raw.extend(
                    rs.into_iter()
                        .filter(|r| r.group_id() == group_id)
                        .map(|record| Raw { at_ms, record }),
                ),
                LogEntry::Topics(ts) => {
                    for t in ts {
                        match t {
                            TopicChange::Set { name, partitions } => {
                                topics.insert(name, partitions);
                            }
                            TopicChange::Delete { name } => {
                                topics.remove(&name);
                            }
                        }
                    }
                }
                LogEntry::GroupConfigs(cs) => {
                    for c in cs.into_iter().filter(|c| c.group == group_id) {
                        match c.value {
                            Some(v) => configs.insert(c.key, v),
                            None => configs.remove(&c.key),
                        };
                    }
                }
                LogEntry::Acls(_) | LogEntry::Scram(_) => {}
            }
            pos = next;
        }
    }
    if raw.is_empty() {
        return Err(format!(
            "no records of group {group_id:?} in {}",
            dir.display()
        ));
    }
    // Records without a time take the first time known after them.
    let untimed_records = raw.iter().filter(|r| r.at_ms.is_none()).count();
    let mut later = raw.iter().rev().find_map(|r| r.at_ms).unwrap_or(0);
    let mut timed: Vec<(i64, &'static str, crate::records::Record)> = Vec::with_capacity(raw.len());
    for r in raw.into_iter().rev() {
        let cause = if let Some(t) = r.at_ms {
            later = t;
            "log"
        } else {
            "untimed"
        };
        timed.push((later, cause, r.record));
    }
    timed.reverse();
    let mut compacted_records = 0;
    if timed.len() > max_records {
        let keep = max_records / 2;
        let cut = timed.len() - keep;
        let at = timed[cut - 1].0;
        let head: Vec<crate::records::Record> =
            crate::records::compact(timed[..cut].iter().map(|t| &t.2));
        if head.len() + keep > max_records {
            return Err(format!(
                "group {group_id:?} holds {} records after compaction, over the trace's limit of \
                 {max_records}",
                head.len() + keep
            ));
        }
        compacted_records = cut;
        let tail = timed.split_off(cut);
        timed = head.into_iter().map(|r| (at, "compacted", r)).collect();
        timed.extend(tail);
    }
    let mut records = Vec::with_capacity(timed.len());
    for (seq, (at_ms, cause, r)) in timed.into_iter().enumerate() {
        let (key, value) = crate::records::codec::encode_record(&r)
            .map_err(|e| format!("{}: {e}", r.summary()))?;
        records.push(TraceRecord {
            seq: seq as u64,
            at_ms,
            cause,
            summary: r.summary(),
            key: hex(&key),
            value: value.as_deref().map(hex).unwrap_or_default(),
            record: r,
        });
    }
    Ok(Trace {
        format: TRACE_FORMAT,
        version: TRACE_VERSION,
        source: "server",
        group_id: group_id.to_string(),
        topics,
        configs,
        records,
        messages: Vec::new(),
        untimed_records,
        compacted_records,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// `groupcoord log export --group G`: the group's trace as JSON (takes the data-directory lock,
/// like `inspect`: for a running server use `GET /api/groups/{id}/trace`).
pub fn export(dir: &Path, group_id: &str, max_records: usize) -> Result<String, String> {
    let _lock = DataDirLock::acquire(dir).map_err(|e| e.to_string())?;
    let t = trace(dir, group_id, max_records)?;
    serde_json::to_string(&t).map_err(|e| e.to_string())
}
