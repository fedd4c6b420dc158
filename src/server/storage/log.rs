//! The durable log in `--data-dir`: segment files of CRC-checked batches, compacted snapshots.
//!
//! Layout: `segment-<n>.log` (n = 20 digits) and `snapshot-<n>.snap`. A snapshot `n` holds the
//! compacted state of every segment `< n`; on load the newest snapshot is replayed, then the
//! segments `>= n` in order. Each batch is
//!
//! ```text
//! magic u32 BE (0x4743_4C42 "GCLB") | payload length u32 BE | CRC32C(payload) u32 BE | payload
//! payload = kind u8 | body
//!   kind 0: coordinator records, body = records::codec::encode_batch(records)
//!   kind 1: topic registry changes, body = count u32, then per change:
//!           op u8 (0 = create/set, 1 = delete) | name len u16 | name utf-8 | partitions i32
//! ```
//!
//! Load: a batch that fails (bad magic, length past the end of file, CRC mismatch) at the end of
//! the *last* segment with no valid batch after it is a torn write: it is truncated and reported.
//! Anything else (a bad batch followed by a valid one, a bad batch in an older segment, a batch
//! whose CRC matches but whose body does not decode, a corrupt snapshot) stops the load with an
//! error naming the file and offset.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::records::{Compaction, Record};

use crate::server::codec88::{decode_records, encode_records};

pub const MAGIC: u32 = 0x4743_4C42;
const HEADER: usize = 12;
const KIND_RECORDS: u8 = 0;
const KIND_TOPICS: u8 = 1;
/// Refuse batches larger than this (a corrupt length field).
const MAX_BATCH: usize = 256 * 1024 * 1024;

/// A change to the topic registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicChange {
    /// Create (or set the partition count of) a topic.
    Set {
        name: String,
        partitions: i32,
    },
    Delete {
        name: String,
    },
}

/// One logged entry (one batch on disk).
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    Records(Vec<Record>),
    Topics(Vec<TopicChange>),
}

/// A load failure that must stop start-up.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("corrupt log: {path} at offset {offset}: {reason}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    #[error("replay failed: {path} at offset {offset}: {reason}")]
    Replay {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> LoadError + '_ {
    move |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub fn encode_entry(entry: &LogEntry) -> Vec<u8> {
    let mut payload = Vec::new();
    match entry {
        LogEntry::Records(rs) => {
            payload.push(KIND_RECORDS);
            payload.extend_from_slice(&encode_records(rs));
        }
        LogEntry::Topics(ts) => {
            payload.push(KIND_TOPICS);
            payload.extend_from_slice(&(ts.len() as u32).to_be_bytes());
            for t in ts {
                let (op, name, parts) = match t {
                    TopicChange::Set { name, partitions } => (0u8, name, *partitions),
                    TopicChange::Delete { name } => (1u8, name, 0),
                };
                payload.push(op);
                payload.extend_from_slice(&(name.len() as u16).to_be_bytes());
                payload.extend_from_slice(name.as_bytes());
                payload.extend_from_slice(&parts.to_be_bytes());
            }
        }
    }
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&MAGIC.to_be_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&crc32c::crc32c(&payload).to_be_bytes());
    out.extend_from_slice(&payload);
    out
}

fn decode_payload(payload: &[u8]) -> Result<LogEntry, String> {
    let (&kind, body) = payload.split_first().ok_or("empty payload")?;
    match kind {
        KIND_RECORDS => decode_records(body).map(LogEntry::Records),
        KIND_TOPICS => {
            let mut p = body;
            let mut take = |n: usize| -> Result<&[u8], String> {
                if p.len() < n {
                    return Err("topic entry truncated".into());
                }
                let (a, b) = p.split_at(n);
                p = b;
                Ok(a)
            };
            let count = u32::from_be_bytes(take(4)?.try_into().unwrap());
            let mut out = Vec::new();
            for _ in 0..count {
                let op = take(1)?[0];
                let len = u16::from_be_bytes(take(2)?.try_into().unwrap()) as usize;
                let name = String::from_utf8(take(len)?.to_vec()).map_err(|e| e.to_string())?;
                let partitions = i32::from_be_bytes(take(4)?.try_into().unwrap());
                out.push(match op {
                    0 => TopicChange::Set { name, partitions },
                    1 => TopicChange::Delete { name },
                    o => return Err(format!("unknown topic op {o}")),
                });
            }
            Ok(LogEntry::Topics(out))
        }
        k => Err(format!("unknown batch kind {k}")),
    }
}

/// Outcome of parsing one batch at a position.
enum Parsed<'a> {
    Ok { payload: &'a [u8], next: usize },
    Bad(String),
}

fn parse_at(buf: &[u8], pos: usize) -> Parsed<'_> {
    let rest = &buf[pos..];
    if rest.len() < HEADER {
        return Parsed::Bad(format!("truncated batch header ({} bytes)", rest.len()));
    }
    let magic = u32::from_be_bytes(rest[0..4].try_into().unwrap());
    if magic != MAGIC {
        return Parsed::Bad(format!("bad magic {magic:#010x}"));
    }
    let len = u32::from_be_bytes(rest[4..8].try_into().unwrap()) as usize;
    if len > MAX_BATCH {
        return Parsed::Bad(format!("batch length {len} too large"));
    }
    if rest.len() < HEADER + len {
        return Parsed::Bad(format!(
            "truncated batch: {len} bytes declared, {} present",
            rest.len() - HEADER
        ));
    }
    let crc = u32::from_be_bytes(rest[8..12].try_into().unwrap());
    let payload = &rest[HEADER..HEADER + len];
    if crc32c::crc32c(payload) != crc {
        return Parsed::Bad("CRC32C mismatch".into());
    }
    Parsed::Ok {
        payload,
        next: pos + HEADER + len,
    }
}

/// Is there a valid batch anywhere after `from`?
fn valid_batch_after(buf: &[u8], from: usize) -> Option<usize> {
    let magic = MAGIC.to_be_bytes();
    let mut i = from;
    while i + HEADER <= buf.len() {
        match buf[i..].windows(4).position(|w| w == magic) {
            None => return None,
            Some(p) => {
                let at = i + p;
                if let Parsed::Ok { .. } = parse_at(buf, at) {
                    return Some(at);
                }
                i = at + 1;
            }
        }
    }
    None
}

fn segment_name(n: u64) -> String {
    format!("segment-{n:020}.log")
}

fn snapshot_name(n: u64) -> String {
    format!("snapshot-{n:020}.snap")
}

fn parse_numbered(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    name.strip_prefix(prefix)?
        .strip_suffix(suffix)?
        .parse()
        .ok()
}

fn fsync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Statistics reported at load.
#[derive(Debug, Default, Clone)]
pub struct LoadReport {
    pub snapshot: Option<PathBuf>,
    pub segments: usize,
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
    /// (file, offset, bytes dropped, reason) of a truncated torn tail.
    pub truncated: Option<(PathBuf, u64, u64, String)>,
}

/// The append side of the log. Not thread-safe; owned by the commit thread.
pub struct Log {
    dir: PathBuf,
    segment_no: u64,
    file: File,
    segment_bytes: u64,
    /// Bytes appended to segments since the last snapshot.
    since_snapshot: u64,
    total_bytes: u64,
    snapshot_threshold: u64,
    compactor: Compaction,
    topics: BTreeMap<String, i32>,
    dirty: bool,
}

impl Log {
    /// Open `dir` (created if missing), replay everything through `apply`, and return the log
    /// positioned for appends.
    pub fn open(
        dir: &Path,
        snapshot_threshold: u64,
        mut apply: impl FnMut(&LogEntry) -> Result<(), String>,
    ) -> Result<(Log, LoadReport), LoadError> {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let mut segments = Vec::new();
        let mut snapshots = Vec::new();
        for e in fs::read_dir(dir).map_err(io_err(dir))? {
            let e = e.map_err(io_err(dir))?;
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(n) = parse_numbered(&name, "segment-", ".log") {
                segments.push(n);
            } else if let Some(n) = parse_numbered(&name, "snapshot-", ".snap") {
                snapshots.push(n);
            } else if name.ends_with(".tmp") {
                // An interrupted snapshot write: never renamed, so never part of the state.
                let _ = fs::remove_file(e.path());
            }
        }
        segments.sort();
        snapshots.sort();
        let mut report = LoadReport::default();
        let mut compactor = Compaction::default();
        let mut topics = BTreeMap::new();
        let mut track = |entry: &LogEntry, compactor: &mut Compaction| match entry {
            LogEntry::Records(rs) => rs.iter().for_each(|r| compactor.add(r)),
            LogEntry::Topics(ts) => {
                for t in ts {
                    match t {
                        TopicChange::Set { name, partitions } => {
                            topics.insert(name.clone(), *partitions);
                        }
                        TopicChange::Delete { name } => {
                            topics.remove(name);
                        }
                    }
                }
            }
        };
        let base = snapshots.last().copied().unwrap_or(0);
        if let Some(&n) = snapshots.last() {
            let path = dir.join(snapshot_name(n));
            let buf = fs::read(&path).map_err(io_err(&path))?;
            let mut pos = 0;
            while pos < buf.len() {
                match parse_at(&buf, pos) {
                    Parsed::Ok { payload, next } => {
                        let entry =
                            decode_payload(payload).map_err(|reason| LoadError::Corrupt {
                                path: path.clone(),
                                offset: pos as u64,
                                reason,
                            })?;
                        apply(&entry).map_err(|reason| LoadError::Replay {
                            path: path.clone(),
                            offset: pos as u64,
                            reason,
                        })?;
                        track(&entry, &mut compactor);
                        report.batches += 1;
                        if let LogEntry::Records(rs) = &entry {
                            report.records += rs.len() as u64;
                        }
                        pos = next;
                    }
                    Parsed::Bad(reason) => {
                        return Err(LoadError::Corrupt {
                            path,
                            offset: pos as u64,
                            reason,
                        });
                    }
                }
            }
            report.snapshot = Some(path);
            report.bytes += buf.len() as u64;
            // Older snapshots and the segments they cover are obsolete.
            for &old in &snapshots[..snapshots.len() - 1] {
                let _ = fs::remove_file(dir.join(snapshot_name(old)));
            }
        }
        for &n in segments.iter().filter(|&&n| n < base) {
            let _ = fs::remove_file(dir.join(segment_name(n)));
        }
        let live: Vec<u64> = segments.iter().copied().filter(|&n| n >= base).collect();
        let mut since_snapshot = 0u64;
        for (i, &n) in live.iter().enumerate() {
            let last = i + 1 == live.len();
            let path = dir.join(segment_name(n));
            let buf = fs::read(&path).map_err(io_err(&path))?;
            let mut pos = 0;
            while pos < buf.len() {
                match parse_at(&buf, pos) {
                    Parsed::Ok { payload, next } => {
                        let entry =
                            decode_payload(payload).map_err(|reason| LoadError::Corrupt {
                                path: path.clone(),
                                offset: pos as u64,
                                reason: format!("batch with valid CRC does not decode: {reason}"),
                            })?;
                        apply(&entry).map_err(|reason| LoadError::Replay {
                            path: path.clone(),
                            offset: pos as u64,
                            reason,
                        })?;
                        track(&entry, &mut compactor);
                        report.batches += 1;
                        if let LogEntry::Records(rs) = &entry {
                            report.records += rs.len() as u64;
                        }
                        pos = next;
                    }
                    Parsed::Bad(reason) => {
                        if !last {
                            return Err(LoadError::Corrupt {
                                path,
                                offset: pos as u64,
                                reason: format!(
                                    "{reason} (in a segment followed by newer segments)"
                                ),
                            });
                        }
                        if let Some(at) = valid_batch_after(&buf, pos + 1) {
                            return Err(LoadError::Corrupt {
                                path,
                                offset: pos as u64,
                                reason: format!(
                                    "{reason}, followed by a valid batch at offset {at}"
                                ),
                            });
                        }
                        // Torn tail: truncate.
                        let f = OpenOptions::new()
                            .write(true)
                            .open(&path)
                            .map_err(io_err(&path))?;
                        f.set_len(pos as u64).map_err(io_err(&path))?;
                        f.sync_all().map_err(io_err(&path))?;
                        report.truncated =
                            Some((path.clone(), pos as u64, (buf.len() - pos) as u64, reason));
                        break;
                    }
                }
            }
            let kept = report
                .truncated
                .as_ref()
                .filter(|t| t.0 == path)
                .map(|t| t.1)
                .unwrap_or(buf.len() as u64);
            since_snapshot += kept;
            report.bytes += kept;
            report.segments += 1;
        }
        let segment_no = live.last().copied().unwrap_or(base);
        let path = dir.join(segment_name(segment_no));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        let segment_bytes = file.metadata().map_err(io_err(&path))?.len();
        if live.is_empty() {
            fsync_dir(dir).map_err(io_err(dir))?;
        }
        Ok((
            Log {
                dir: dir.to_path_buf(),
                segment_no,
                file,
                segment_bytes,
                since_snapshot,
                total_bytes: report.bytes,
                snapshot_threshold,
                compactor,
                topics,
                dirty: false,
            },
            report,
        ))
    }

    /// Append entries (buffered in the OS; call [`Log::sync`] before acknowledging).
    pub fn append(&mut self, entries: &[LogEntry]) -> io::Result<u64> {
        let mut buf = Vec::new();
        for e in entries {
            buf.extend_from_slice(&encode_entry(e));
            match e {
                LogEntry::Records(rs) => rs.iter().for_each(|r| self.compactor.add(r)),
                LogEntry::Topics(ts) => {
                    for t in ts {
                        match t {
                            TopicChange::Set { name, partitions } => {
                                self.topics.insert(name.clone(), *partitions);
                            }
                            TopicChange::Delete { name } => {
                                self.topics.remove(name);
                            }
                        }
                    }
                }
            }
        }
        if buf.is_empty() {
            return Ok(0);
        }
        self.file.write_all(&buf)?;
        let n = buf.len() as u64;
        self.segment_bytes += n;
        self.since_snapshot += n;
        self.total_bytes += n;
        self.dirty = true;
        Ok(n)
    }

    /// fsync what was appended. Returns whether anything was synced.
    pub fn sync(&mut self) -> io::Result<bool> {
        if !self.dirty {
            return Ok(false);
        }
        self.file.sync_data()?;
        self.dirty = false;
        Ok(true)
    }

    /// Bytes in the live files (snapshot + segments).
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    pub fn needs_snapshot(&self) -> bool {
        self.since_snapshot >= self.snapshot_threshold
    }

    /// Write a compacted snapshot atomically and start a new segment; older files are removed.
    /// Call after [`Log::sync`].
    pub fn snapshot(&mut self) -> io::Result<PathBuf> {
        self.sync()?;
        let n = self.segment_no + 1;
        let tmp = self.dir.join(format!("{}.tmp", snapshot_name(n)));
        let fin = self.dir.join(snapshot_name(n));
        let mut bytes = 0u64;
        {
            let mut f = io::BufWriter::new(File::create(&tmp)?);
            let topics: Vec<TopicChange> = self
                .topics
                .iter()
                .map(|(name, p)| TopicChange::Set {
                    name: name.clone(),
                    partitions: *p,
                })
                .collect();
            if !topics.is_empty() {
                let b = encode_entry(&LogEntry::Topics(topics));
                bytes += b.len() as u64;
                f.write_all(&b)?;
            }
            for chunk in self.compactor.records().chunks(1000) {
                let b = encode_entry(&LogEntry::Records(chunk.to_vec()));
                bytes += b.len() as u64;
                f.write_all(&b)?;
            }
            let f = f.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
        }
        fs::rename(&tmp, &fin)?;
        fsync_dir(&self.dir)?;
        let path = self.dir.join(segment_name(n));
        self.file = OpenOptions::new().create(true).append(true).open(&path)?;
        fsync_dir(&self.dir)?;
        let old_segment = self.segment_no;
        self.segment_no = n;
        self.segment_bytes = 0;
        self.since_snapshot = 0;
        self.total_bytes = bytes;
        // Everything before `n` is covered by the snapshot.
        for e in fs::read_dir(&self.dir)?.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let old = parse_numbered(&name, "segment-", ".log")
                .map(|m| m <= old_segment)
                .or_else(|| parse_numbered(&name, "snapshot-", ".snap").map(|m| m < n))
                .unwrap_or(false);
            if old {
                fs::remove_file(e.path())?;
            }
        }
        Ok(fin)
    }

    /// Read a whole file (for tests and tools).
    pub fn read_file(path: &Path) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        File::open(path)?.read_to_end(&mut v)?;
        Ok(v)
    }

    pub fn current_segment(&self) -> PathBuf {
        self.dir.join(segment_name(self.segment_no))
    }
}
