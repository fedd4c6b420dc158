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
//!           (snapshots, and segments written before append times were logged)
//!   kind 6: coordinator records with their append time, body = append time int64 BE (ms since
//!           the UNIX epoch, the server's clock when the batch was appended) |
//!           records::codec::encode_batch(records); what `groupcoord log export` and
//!           `/api/groups/{id}/trace` give as each record's time. Segments written before kind 6
//!           (all kind 0) stay readable; their records have no time.
//!   kind 1: topic registry changes, body = Kafka array (count int32), per change:
//!           op int8 (0 = create/set, 1 = delete) | name string (int16 length) | partitions int32
//!   kind 3: ACL changes, body = Kafka array (count int32), per change:
//!           op int8 (0 = create, 1 = delete) | resource type int8 | resource name string |
//!           pattern type int8 | principal string | host string | operation int8 |
//!           permission int8 (Kafka's codes)
//!   kind 5: group config changes, body = Kafka array (count int32), per change:
//!           group id string | key string | value nullable string (null = delete)
//!   kind 4: SCRAM credential changes, body = Kafka array (count int32), per change:
//!           op int8 (0 = upsert, 1 = delete) | user string | mechanism int8 (Kafka's type:
//!           1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512) | iterations int32 | salt bytes |
//!           stored key bytes | server key bytes (salted hashes only, never a password; empty
//!           for a delete)
//! ```
//!
//! A snapshot ends with a trailer batch (kind 2, body = length of everything before the trailer
//! u64 BE | CRC32C of those bytes u32 BE): a snapshot without a valid trailer (cut at a batch
//! boundary, empty, or with any byte changed) is never loaded as complete.
//!
//! Load: how far the log was acknowledged is in `COMMIT` (`storage/commit_mark.rs`). A batch that
//! fails (bad magic, length past the end of file, CRC mismatch) *after* that point at the end of
//! the last segment, with no valid batch after it, is a torn write: it is truncated and reported.
//! Anything else (a bad batch before the commit mark, a bad batch followed by a valid one, a bad
//! batch in an older segment, a batch whose CRC matches but whose body does not decode, a segment
//! shorter than its acknowledged length, an incomplete or corrupt snapshot) stops the load with
//! an error naming the file and offset, and leaves every file as it was. The data directory is
//! locked while a log is open (`storage/lock.rs`).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::records::{Compaction, Record};
use crate::server::acl::{Acl, AclChange, Operation, PatternType, Permission, ResourceType};
use crate::server::security::scram::{MAX_FIELD, ScramCredential, ScramCredentials, ScramHash};
use crate::wire::{Reader, Writer};

use super::commit_mark::{self, CommitMark, Mark};
use super::lock::{DataDirLock, LockError};
use super::reader::{self, BadBatch, Event, Source};
use crate::server::codec88::{decode_records, encode_records};
use std::sync::mpsc::{Receiver, Sender};

pub(crate) const MAGIC: u32 = 0x4743_4C42;
pub(crate) const HEADER: usize = 12;
const KIND_RECORDS: u8 = 0;
/// Coordinator records with their append time (segments; snapshots keep kind 0).
const KIND_TIMED_RECORDS: u8 = 6;
const KIND_TOPICS: u8 = 1;
/// Root of the error paths of a topic entry body, and its two operations.
const TOPIC_ENTRY: &str = "TopicEntry";
const TOPIC_SET: i8 = 0;
const TOPIC_DELETE: i8 = 1;
/// The snapshot trailer (never in segments).
const KIND_END: u8 = 2;
/// SCRAM credentials.
const KIND_SCRAM: u8 = 4;
const SCRAM_ENTRY: &str = "ScramEntry";
const SCRAM_UPSERT: i8 = 0;
const SCRAM_DELETE: i8 = 1;
const TRAILER: usize = HEADER + 1 + 12;
const KIND_ACLS: u8 = 3;
const ACL_ENTRY: &str = "AclEntry";
const KIND_GROUP_CONFIGS: u8 = 5;
const GROUP_CONFIG_ENTRY: &str = "GroupConfigEntry";
/// Refuse batches larger than this (a corrupt length field).
pub(crate) const MAX_BATCH: usize = 256 * 1024 * 1024;

/// A change to the topic registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicChange {
    /// Create (or set the partition count of) a topic.
    Set {
        /// The topic.
        name: String,
        /// Its partition count.
        partitions: i32,
    },
    /// Delete a topic.
    Delete {
        /// The topic.
        name: String,
    },
}

/// A change to a group's configuration overrides (IncrementalAlterConfigs on a GROUP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfigChange {
    /// The group id.
    pub group: String,
    /// The group config key, e.g. `streams.num.standby.replicas`.
    pub key: String,
    /// The new value; `None` removes the override.
    pub value: Option<String>,
}

/// A change to the SCRAM credentials (AlterUserScramCredentials, `storage format --add-scram`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScramChange {
    /// Create or replace the credential of `user` for `hash`.
    Upsert {
        /// The SCRAM user.
        user: String,
        /// The mechanism's hash.
        hash: ScramHash,
        /// The salted credential.
        credential: ScramCredential,
    },
    /// Remove it.
    Delete {
        /// The SCRAM user.
        user: String,
        /// The mechanism's hash.
        hash: ScramHash,
    },
}

impl ScramChange {
    /// Apply to a credential store (replay and live path alike).
    pub fn apply(&self, to: &mut ScramCredentials) {
        match self {
            ScramChange::Upsert {
                user,
                hash,
                credential,
            } => to.upsert(user, *hash, credential.clone()),
            ScramChange::Delete { user, hash } => {
                to.remove(user, *hash);
            }
        }
    }
}

/// One logged entry (one batch on disk).
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    /// Coordinator records, as an operation wrote them.
    Records(Vec<Record>),
    /// Topic registry changes.
    Topics(Vec<TopicChange>),
    /// ACLs created or deleted (CreateAcls / DeleteAcls).
    Acls(Vec<AclChange>),
    /// Group config overrides set or removed (IncrementalAlterConfigs).
    GroupConfigs(Vec<GroupConfigChange>),
    /// SCRAM credential changes.
    Scram(Vec<ScramChange>),
}

/// The latest state of the non-record entries, for snapshots.
#[derive(Debug, Default, Clone)]
struct Registries {
    topics: BTreeMap<String, i32>,
    acls: std::collections::BTreeSet<Acl>,
    group_configs: BTreeMap<(String, String), String>,
    /// The current SCRAM credentials (written whole into snapshots).
    scram: ScramCredentials,
}

impl Registries {
    fn track(&mut self, entry: &LogEntry, compactor: &mut Compaction) {
        match entry {
            LogEntry::Records(rs) => rs.iter().for_each(|r| compactor.add(r)),
            LogEntry::Scram(cs) => cs.iter().for_each(|c| c.apply(&mut self.scram)),
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
            LogEntry::Acls(cs) => {
                for c in cs {
                    match c {
                        AclChange::Create(a) => {
                            self.acls.insert(a.clone());
                        }
                        AclChange::Delete(a) => {
                            self.acls.remove(a);
                        }
                    }
                }
            }
            LogEntry::GroupConfigs(cs) => {
                for c in cs {
                    let k = (c.group.clone(), c.key.clone());
                    match &c.value {
                        Some(v) => {
                            self.group_configs.insert(k, v.clone());
                        }
                        None => {
                            self.group_configs.remove(&k);
                        }
                    }
                }
            }
        }
    }

    /// The entries that rebuild this state (topics first: ACLs and configs do not depend on
    /// them, records may).
    fn entries(&self) -> Vec<LogEntry> {
        let mut out = Vec::new();
        if !self.topics.is_empty() {
            out.push(LogEntry::Topics(
                self.topics
                    .iter()
                    .map(|(name, p)| TopicChange::Set {
                        name: name.clone(),
                        partitions: *p,
                    })
                    .collect(),
            ));
        }
        if !self.acls.is_empty() {
            out.push(LogEntry::Acls(
                self.acls.iter().cloned().map(AclChange::Create).collect(),
            ));
        }
        if !self.group_configs.is_empty() {
            out.push(LogEntry::GroupConfigs(
                self.group_configs
                    .iter()
                    .map(|((group, key), v)| GroupConfigChange {
                        group: group.clone(),
                        key: key.clone(),
                        value: Some(v.clone()),
                    })
                    .collect(),
            ));
        }
        let scram: Vec<ScramChange> = self
            .scram
            .iter()
            .map(|(user, hash, credential)| ScramChange::Upsert {
                user: user.to_string(),
                hash,
                credential: credential.clone(),
            })
            .collect();
        for chunk in scram.chunks(1000) {
            out.push(LogEntry::Scram(chunk.to_vec()));
        }
        out
    }
}

/// A load failure that must stop start-up.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file could not be read, written or listed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Damage a torn tail cannot explain (e.g. in acknowledged bytes): nothing is truncated.
    #[error("corrupt log: {path} at offset {offset}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte offset of the batch.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A batch decoded but the state refused it.
    #[error("replay failed: {path} at offset {offset}: {reason}")]
    Replay {
        /// The file.
        path: PathBuf,
        /// Byte offset of the batch.
        offset: u64,
        /// Why the replay failed.
        reason: String,
    },
    /// Another process holds the data directory.
    #[error(transparent)]
    Locked(#[from] LockError),
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> LoadError + '_ {
    move |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One framed log entry. Fails (`InvalidData`) for records Kafka's layout cannot represent:
/// the log never stores something other than what was written.
pub fn encode_entry(entry: &LogEntry) -> io::Result<Vec<u8>> {
    let mut payload = Vec::new();
    match entry {
        LogEntry::Records(rs) => {
            payload.push(KIND_RECORDS);
            let body =
                encode_records(rs).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            payload.extend_from_slice(&body);
        }
        LogEntry::Topics(ts) => {
            payload.push(KIND_TOPICS);
            let mut w = Writer::new(TOPIC_ENTRY);
            w.array("Topics", ts, |w, t| {
                let (op, name, partitions) = match t {
                    TopicChange::Set { name, partitions } => (TOPIC_SET, name, *partitions),
                    TopicChange::Delete { name } => (TOPIC_DELETE, name, 0),
                };
                w.i8(op);
                w.string("Name", name)?;
                w.i32(partitions);
                Ok(())
            })
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            payload.extend_from_slice(&w.into_bytes());
        }
        LogEntry::Acls(cs) => {
            payload.push(KIND_ACLS);
            let mut w = Writer::new(ACL_ENTRY);
            w.array("Acls", cs, |w, c| {
                let (op, a) = match c {
                    AclChange::Create(a) => (0i8, a),
                    AclChange::Delete(a) => (1i8, a),
                };
                w.i8(op);
                w.i8(a.resource_type.code());
                w.string("ResourceName", &a.resource_name)?;
                w.i8(a.pattern_type.code());
                w.string("Principal", &a.principal)?;
                w.string("Host", &a.host)?;
                w.i8(a.operation.code());
                w.i8(a.permission.code());
                Ok(())
            })
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            payload.extend_from_slice(&w.into_bytes());
        }
        LogEntry::GroupConfigs(cs) => {
            payload.push(KIND_GROUP_CONFIGS);
            let mut w = Writer::new(GROUP_CONFIG_ENTRY);
            w.array("Configs", cs, |w, c| {
                w.string("GroupId", &c.group)?;
                w.string("Key", &c.key)?;
                w.nullable_string("Value", c.value.as_deref())
            })
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            payload.extend_from_slice(&w.into_bytes());
        }
        LogEntry::Scram(cs) => {
            payload.push(KIND_SCRAM);
            let mut w = Writer::new(SCRAM_ENTRY);
            let empty = ScramCredential {
                salt: Vec::new(),
                stored_key: Vec::new(),
                server_key: Vec::new(),
                iterations: 0,
            };
            w.array("Changes", cs, |w, c| {
                let (op, user, hash, cred) = match c {
                    ScramChange::Upsert {
                        user,
                        hash,
                        credential,
                    } => (SCRAM_UPSERT, user, *hash, credential),
                    ScramChange::Delete { user, hash } => (SCRAM_DELETE, user, *hash, &empty),
                };
                w.i8(op);
                w.string("User", user)?;
                w.i8(hash.type_id());
                w.i32(cred.iterations);
                w.bytes("Salt", &cred.salt)?;
                w.bytes("StoredKey", &cred.stored_key)?;
                w.bytes("ServerKey", &cred.server_key)?;
                Ok(())
            })
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            payload.extend_from_slice(&w.into_bytes());
        }
    }
    frame(&payload)
}

/// A batch on disk: magic, payload length, CRC32C of the payload (all uint32), the payload.
fn frame(payload: &[u8]) -> io::Result<Vec<u8>> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|&n| n as usize <= MAX_BATCH)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("log batch of {} bytes is too large", payload.len()),
            )
        })?;
    let mut w = Writer::new("LogBatch");
    w.u32(MAGIC);
    w.u32(len);
    w.u32(crc32c::crc32c(payload));
    w.raw(payload);
    Ok(w.into_bytes())
}

/// The snapshot trailer for `body` (everything written before it): the body's length (int64)
/// and CRC32C (uint32), framed as a batch of kind `KIND_END`.
fn snapshot_trailer(len: u64, crc: u32) -> Vec<u8> {
    let mut w = Writer::new("SnapshotEnd");
    w.i8(KIND_END as i8);
    w.i64(len as i64);
    w.u32(crc);
    frame(&w.into_bytes()).expect("a 13-byte payload fits a batch")
}

/// A snapshot of an older groupcoord (no trailer): if every batch in it is valid, rewrite it
/// atomically with a trailer (and `file` with it) and return true.
fn seal_legacy_snapshot(path: &Path, file: &mut Vec<u8>) -> Result<bool, LoadError> {
    let mut pos = 0;
    while pos < file.len() {
        match parse_at(file, pos) {
            Parsed::Ok { next, .. } => pos = next,
            Parsed::Bad(_) => return Ok(false),
        }
    }
    file.extend_from_slice(&snapshot_trailer(file.len() as u64, crc32c::crc32c(file)));
    let tmp = path.with_extension("snap.seal.tmp");
    let write = || -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(file)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        fsync_dir(path.parent().unwrap_or(Path::new(".")))
    };
    write().map_err(io_err(path))?;
    Ok(true)
}

/// The batches of a complete snapshot (without the trailer), or why it is not complete.
pub(crate) fn snapshot_body(buf: &[u8]) -> Result<&[u8], String> {
    let Some(at) = buf.len().checked_sub(TRAILER) else {
        return Err(format!(
            "incomplete snapshot: {} bytes, no end marker",
            buf.len()
        ));
    };
    let (body, tail) = buf.split_at(at);
    let ok = match parse_at(tail, 0) {
        Parsed::Ok { payload, .. } if payload.len() == 13 => {
            let mut r = Reader::new(payload, "SnapshotEnd");
            let kind = r.i8("Kind").map(|k| k as u8);
            let (len, crc) = (r.i64("Length"), r.u32("Crc"));
            matches!((kind, len, crc), (Ok(KIND_END), Ok(len), Ok(crc))
                if len as u64 == body.len() as u64 && crc == crc32c::crc32c(body))
        }
        _ => false,
    };
    if !ok {
        return Err(format!(
            "incomplete or damaged snapshot: no valid end marker over its {} bytes",
            buf.len()
        ));
    }
    Ok(body)
}

/// The append time (ms since the UNIX epoch) of a records batch of kind 6, `None` for any other
/// batch (kind 0 records were written without one).
pub(crate) fn append_time(payload: &[u8]) -> Option<i64> {
    match payload.split_first() {
        Some((&KIND_TIMED_RECORDS, body)) => {
            Reader::new(body, "TimedRecords").i64("AppendTimeMs").ok()
        }
        _ => None,
    }
}

/// A records entry as a segment stores it: kind 6, with the append time.
fn encode_timed_records(records: &[Record], append_ms: i64) -> io::Result<Vec<u8>> {
    let mut payload = vec![KIND_TIMED_RECORDS];
    payload.extend_from_slice(&append_ms.to_be_bytes());
    let body =
        encode_records(records).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    payload.extend_from_slice(&body);
    frame(&payload)
}

/// `entries` framed as [`Log::append`] writes them to a segment (records with the append time,
/// now). An owner-count migration writes its staged segments with it (`storage::migrate`).
pub(crate) fn encode_segment_batches(entries: &[LogEntry]) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let now = wall_clock_ms();
    for e in entries {
        let framed = match e {
            LogEntry::Records(rs) => encode_timed_records(rs, now)?,
            e => encode_entry(e)?,
        };
        buf.extend_from_slice(&framed);
    }
    Ok(buf)
}

fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

pub(crate) fn decode_payload(payload: &[u8]) -> Result<LogEntry, String> {
    let (&kind, body) = payload.split_first().ok_or("empty payload")?;
    match kind {
        KIND_RECORDS => decode_records(body).map(LogEntry::Records),
        KIND_TIMED_RECORDS => {
            let records = body
                .get(8..)
                .ok_or("records batch shorter than its append time")?;
            decode_records(records).map(LogEntry::Records)
        }
        KIND_TOPICS => {
            let mut r = Reader::new(body, TOPIC_ENTRY);
            let topics = r
                .array("Topics", |r| {
                    Ok((r.i8("Op")?, r.string("Name")?, r.i32("Partitions")?))
                })
                .map_err(|e| e.to_string())?;
            let changes = topics.into_iter().map(|(op, name, partitions)| match op {
                TOPIC_SET => Ok(TopicChange::Set { name, partitions }),
                TOPIC_DELETE => Ok(TopicChange::Delete { name }),
                o => Err(format!("unknown topic op {}", o as u8)),
            });
            changes.collect::<Result<_, _>>().map(LogEntry::Topics)
        }
        KIND_ACLS => {
            let mut r = Reader::new(body, ACL_ENTRY);
            let raw = r
                .array("Acls", |r| {
                    Ok((
                        r.i8("Op")?,
                        r.i8("ResourceType")?,
                        r.string("ResourceName")?,
                        r.i8("PatternType")?,
                        r.string("Principal")?,
                        r.string("Host")?,
                        r.i8("Operation")?,
                        r.i8("Permission")?,
                    ))
                })
                .map_err(|e| e.to_string())?;
            raw.into_iter()
                .map(|(op, rt, name, pt, principal, host, operation, perm)| {
                    let acl = Acl {
                        resource_type: ResourceType::from_code(rt)
                            .ok_or(format!("unknown ACL resource type {rt}"))?,
                        resource_name: name,
                        pattern_type: PatternType::from_code(pt)
                            .ok_or(format!("unknown ACL pattern type {pt}"))?,
                        principal,
                        host,
                        operation: Operation::from_code(operation)
                            .ok_or(format!("unknown ACL operation {operation}"))?,
                        permission: Permission::from_code(perm)
                            .ok_or(format!("unknown ACL permission {perm}"))?,
                    };
                    match op {
                        0 => Ok(AclChange::Create(acl)),
                        1 => Ok(AclChange::Delete(acl)),
                        o => Err(format!("unknown ACL op {}", o as u8)),
                    }
                })
                .collect::<Result<_, _>>()
                .map(LogEntry::Acls)
        }
        KIND_GROUP_CONFIGS => {
            let mut r = Reader::new(body, GROUP_CONFIG_ENTRY);
            r.array("Configs", |r| {
                Ok(GroupConfigChange {
                    group: r.string("GroupId")?,
                    key: r.string("Key")?,
                    value: r.nullable_string("Value")?,
                })
            })
            .map(LogEntry::GroupConfigs)
            .map_err(|e| e.to_string())
        }
        KIND_SCRAM => decode_scram(body).map(LogEntry::Scram),
        k => Err(format!("unknown batch kind {k}")),
    }
}

fn decode_scram(body: &[u8]) -> Result<Vec<ScramChange>, String> {
    let mut r = Reader::new(body, SCRAM_ENTRY);
    let raw = r
        .array("Changes", |r| {
            Ok((
                r.i8("Op")?,
                r.string("User")?,
                r.i8("Mechanism")?,
                r.i32("Iterations")?,
                r.bytes("Salt")?.to_vec(),
                r.bytes("StoredKey")?.to_vec(),
                r.bytes("ServerKey")?.to_vec(),
            ))
        })
        .map_err(|e| e.to_string())?;
    raw.into_iter()
        .map(
            |(op, user, mech, iterations, salt, stored_key, server_key)| {
                let hash = ScramHash::from_type_id(mech)
                    .ok_or_else(|| format!("unknown SCRAM mechanism type {mech}"))?;
                if [salt.len(), stored_key.len(), server_key.len()]
                    .iter()
                    .any(|&n| n > MAX_FIELD)
                {
                    return Err("SCRAM credential field too large".to_string());
                }
                match op {
                    SCRAM_UPSERT => Ok(ScramChange::Upsert {
                        user,
                        hash,
                        credential: ScramCredential {
                            salt,
                            stored_key,
                            server_key,
                            iterations,
                        },
                    }),
                    SCRAM_DELETE => Ok(ScramChange::Delete { user, hash }),
                    o => Err(format!("unknown SCRAM op {}", o as u8)),
                }
            },
        )
        .collect()
}

/// Outcome of parsing one batch at a position.
pub(crate) enum Parsed<'a> {
    Ok { payload: &'a [u8], next: usize },
    Bad(String),
}

pub(crate) fn parse_at(buf: &[u8], pos: usize) -> Parsed<'_> {
    let rest = &buf[pos..];
    let mut r = Reader::new(rest, "LogBatch");
    let (Ok(magic), Ok(len), Ok(crc)) = (r.u32("Magic"), r.u32("Length"), r.u32("Crc")) else {
        return Parsed::Bad(format!("truncated batch header ({} bytes)", rest.len()));
    };
    if magic != MAGIC {
        return Parsed::Bad(format!("bad magic {magic:#010x}"));
    }
    let len = len as usize;
    if len > MAX_BATCH {
        return Parsed::Bad(format!("batch length {len} too large"));
    }
    let Ok(payload) = r.raw(len, "Payload") else {
        return Parsed::Bad(format!(
            "truncated batch: {len} bytes declared, {} present",
            rest.len() - HEADER
        ));
    };
    if crc32c::crc32c(payload) != crc {
        return Parsed::Bad("CRC32C mismatch".into());
    }
    Parsed::Ok {
        payload,
        next: pos + HEADER + len,
    }
}

/// Is there a valid batch anywhere after `from`?
pub(crate) fn valid_batch_after(buf: &[u8], from: usize) -> Option<usize> {
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

/// Apply the batches of one source as the reader delivers them. `last`: `None` for the
/// snapshot (any damage is corruption), `Some(is_last_segment)` for a segment. Returns the bad
/// batch of a torn tail (to be truncated), `None` when the source ended cleanly.
fn replay_source(
    (events, spent): (&Receiver<Event>, &Sender<LogEntry>),
    path: &Path,
    acked: u64,
    last: Option<bool>,
    apply: &mut impl FnMut(&LogEntry) -> Result<(), String>,
    report: &mut LoadReport,
) -> Result<Option<BadBatch>, LoadError> {
    let corrupt = |offset: usize, reason: String| LoadError::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        reason,
    };
    loop {
        let waiting = std::time::Instant::now();
        let event = events.recv().map_err(|_| LoadError::Io {
            path: path.to_path_buf(),
            source: io::Error::other("the load's reader thread stopped early"),
        })?;
        report.waited += waiting.elapsed();
        match event {
            Event::Batch { pos, next, entry } => {
                if (pos as u64) < acked && next as u64 > acked {
                    return Err(corrupt(
                        pos,
                        format!("batch crosses the acknowledged end {acked} (commit mark)"),
                    ));
                }
                let entry = entry.map_err(|reason| match last {
                    None => corrupt(pos, reason),
                    Some(_) => corrupt(
                        pos,
                        format!("batch with valid CRC does not decode: {reason}"),
                    ),
                })?;
                apply(&entry).map_err(|reason| LoadError::Replay {
                    path: path.to_path_buf(),
                    offset: pos as u64,
                    reason,
                })?;
                report.batches += 1;
                if let LogEntry::Records(rs) = &entry {
                    report.records += rs.len() as u64;
                }
                // Freed by the thread that allocated it (the reader stopped: freed here).
                let _ = spent.send(entry);
            }
            Event::Io(source) => {
                return Err(LoadError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
            Event::End { bad: None } => return Ok(None),
            Event::End { bad: Some(bad) } => {
                let Some(last) = last else {
                    return Err(corrupt(bad.pos, bad.reason));
                };
                if (bad.pos as u64) < acked {
                    return Err(corrupt(
                        bad.pos,
                        format!(
                            "{} in acknowledged data (the commit mark covers {acked} bytes of \
                             this segment): not a torn write",
                            bad.reason
                        ),
                    ));
                }
                if !last {
                    return Err(corrupt(
                        bad.pos,
                        format!("{} (in a segment followed by newer segments)", bad.reason),
                    ));
                }
                if let Some(at) = bad.valid_after {
                    return Err(corrupt(
                        bad.pos,
                        format!("{}, followed by a valid batch at offset {at}", bad.reason),
                    ));
                }
                return Ok(Some(bad));
            }
        }
    }
}

pub(crate) fn segment_name(n: u64) -> String {
    format!("segment-{n:020}.log")
}

pub(crate) fn snapshot_name(n: u64) -> String {
    format!("snapshot-{n:020}.snap")
}

pub(crate) fn parse_numbered(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
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
    /// The snapshot loaded first, if any.
    pub snapshot: Option<PathBuf>,
    /// Segments read.
    pub segments: usize,
    /// Batches replayed.
    pub batches: u64,
    /// Records replayed.
    pub records: u64,
    /// Bytes read.
    pub bytes: u64,
    /// (file, offset, bytes dropped, reason) of a truncated torn tail.
    pub truncated: Option<(PathBuf, u64, u64, String)>,
    /// Time the applying thread waited for the reader thread's next decoded batch: the part of
    /// the load that reading and decoding did not hide behind applying.
    pub waited: std::time::Duration,
    /// Segments but no `COMMIT` file (a log written before commit marks): a damaged last batch
    /// could only be taken as a torn write.
    pub without_commit_mark: bool,
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
    /// The snapshot being written by a background thread, if any.
    background: Option<std::thread::JoinHandle<io::Result<(PathBuf, u64)>>>,
    dirty: bool,
    commit: CommitMark,
    _lock: DataDirLock,
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
        let lock = DataDirLock::acquire(dir)?;
        let mark = match commit_mark::read(dir).map_err(io_err(dir))? {
            commit_mark::Read::Absent => None,
            commit_mark::Read::Mark(m) => Some(m),
            commit_mark::Read::Corrupt => {
                let path = dir.join(commit_mark::COMMIT_FILE);
                return Err(LoadError::Corrupt {
                    path,
                    offset: 0,
                    reason: "no valid slot in the commit mark; if the segments are intact, \
                             moving COMMIT away loads them without it (a damaged last batch is \
                             then taken as a torn write)"
                        .into(),
                });
            }
        };
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
        let base = snapshots.last().copied().unwrap_or(0);
        let mut snapshot_file = None;
        let mut snapshot_len = 0;
        if let Some(&n) = snapshots.last() {
            let path = dir.join(snapshot_name(n));
            let mut file = fs::read(&path).map_err(io_err(&path))?;
            let complete = snapshot_body(&file).map(|body| body.len());
            let sealed = match complete {
                Ok(len) => len,
                // A data directory without a commit mark was written by a groupcoord from before
                // snapshot trailers: its snapshot is taken as it is (every batch must be valid to
                // the end of the file, as then) and sealed with a trailer, once.
                Err(_) if mark.is_none() && seal_legacy_snapshot(&path, &mut file)? => {
                    tracing::warn!(file = %path.display(), "snapshot without an end marker (older groupcoord) loaded and sealed");
                    file.len() - TRAILER
                }
                Err(reason) => {
                    return Err(LoadError::Corrupt {
                        path: path.clone(),
                        offset: 0,
                        reason,
                    });
                }
            };
            snapshot_len = file.len() as u64;
            file.truncate(sealed);
            snapshot_file = Some((path, file));
        }
        let live: Vec<u64> = segments.iter().copied().filter(|&n| n >= base).collect();
        report.without_commit_mark = mark.is_none() && !live.is_empty();
        if report.without_commit_mark {
            tracing::warn!(
                dir = %dir.display(),
                "log without a commit mark (written by an older groupcoord): a damaged last batch \
                 can only be taken as a torn write this once"
            );
        }
        // Acknowledged data the mark names must still be there.
        if let Some(m) = mark
            && m.end > 0
            && live.last().is_none_or(|&last| last < m.segment)
        {
            let path = dir.join(segment_name(m.segment));
            return Err(LoadError::Corrupt {
                path,
                offset: m.end,
                reason: format!(
                    "acknowledged segment missing: the commit mark says {} bytes of it were \
                     acknowledged",
                    m.end
                ),
            });
        }
        let mut since_snapshot = 0u64;
        // Read and decoded on a thread of its own while this one applies.
        let mut sources = Vec::new();
        let snapshot_path = snapshot_file.as_ref().map(|(p, _)| p.clone());
        if let Some((_, body)) = snapshot_file {
            sources.push(Source::Snapshot(body));
        }
        sources.extend(
            live.iter()
                .map(|&n| Source::Segment(dir.join(segment_name(n)))),
        );
        std::thread::scope(|scope| -> Result<(), LoadError> {
            let (events, spent) = reader::spawn(scope, sources).map_err(io_err(dir))?;
            let events = (&events, &spent);
            if let Some(path) = snapshot_path {
                replay_source(events, &path, 0, None, &mut apply, &mut report)?;
                report.snapshot = Some(path);
                report.bytes += snapshot_len;
            }
            for (i, &n) in live.iter().enumerate() {
                let last = i + 1 == live.len();
                let path = dir.join(segment_name(n));
                let len = fs::metadata(&path).map_err(io_err(&path))?.len();
                // Bytes of the last segment acknowledged to clients: they must load exactly.
                let acked = match mark {
                    Some(m) if last && m.segment == n => m.end,
                    _ => 0,
                };
                if acked > len {
                    return Err(LoadError::Corrupt {
                        path,
                        offset: len,
                        reason: format!(
                            "segment is {len} bytes but {acked} bytes of it were acknowledged \
                             (commit mark): acknowledged data is missing"
                        ),
                    });
                }
                let kept =
                    match replay_source(events, &path, acked, Some(last), &mut apply, &mut report)?
                    {
                        None => len,
                        Some(bad) => {
                            // Torn tail: truncate.
                            let f = OpenOptions::new()
                                .write(true)
                                .open(&path)
                                .map_err(io_err(&path))?;
                            f.set_len(bad.pos as u64).map_err(io_err(&path))?;
                            f.sync_all().map_err(io_err(&path))?;
                            let dropped = len - bad.pos as u64;
                            report.truncated =
                                Some((path.clone(), bad.pos as u64, dropped, bad.reason));
                            bad.pos as u64
                        }
                    };
                since_snapshot += kept;
                report.bytes += kept;
                report.segments += 1;
            }
            Ok(())
        })?;
        // Older snapshots and the segments the loaded snapshot covers are obsolete (removed
        // only once it loaded).
        for &old in snapshots.iter().filter(|&&n| n < base) {
            let _ = fs::remove_file(dir.join(snapshot_name(old)));
        }
        for &n in segments.iter().filter(|&&n| n < base) {
            let _ = fs::remove_file(dir.join(segment_name(n)));
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
        // Everything loaded may be shown to clients from now on: it is acknowledged.
        let mut commit = CommitMark::open(dir).map_err(io_err(dir))?;
        commit
            .store(Mark {
                segment: segment_no,
                end: segment_bytes,
            })
            .map_err(io_err(dir))?;
        fsync_dir(dir).map_err(io_err(dir))?;
        Ok((
            Log {
                dir: dir.to_path_buf(),
                segment_no,
                file,
                segment_bytes,
                since_snapshot,
                total_bytes: report.bytes,
                snapshot_threshold,
                background: None,
                dirty: false,
                commit,
                _lock: lock,
            },
            report,
        ))
    }

    /// Append entries (buffered in the OS; call [`Log::sync`] before acknowledging).
    pub fn append(&mut self, entries: &[LogEntry]) -> io::Result<u64> {
        // Everything is encoded before any state changes: an entry that cannot be encoded
        // leaves the log as it was.
        let buf = encode_segment_batches(entries)?;
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
        self.commit.store(Mark {
            segment: self.segment_no,
            end: self.segment_bytes,
        })?;
        self.dirty = false;
        Ok(true)
    }

    /// Bytes in the live files (snapshot + segments).
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Whether enough was appended since the last snapshot to write a new one (and no snapshot
    /// is being written already).
    pub fn needs_snapshot(&self) -> bool {
        self.since_snapshot >= self.snapshot_threshold && self.background.is_none()
    }

    /// Write a compacted snapshot now, on this thread: roll the segment, then compact everything
    /// before it ([`Log::roll_for_snapshot`], [`SnapshotJob::run`]). Waits for a snapshot
    /// running in the background first.
    pub fn snapshot(&mut self) -> io::Result<PathBuf> {
        if let Some(r) = self.finish_background(true) {
            r?;
        }
        let job = self.roll_for_snapshot()?;
        let (path, bytes) = job.run()?;
        self.total_bytes = bytes + self.segment_bytes;
        Ok(path)
    }

    /// Start a snapshot without waiting for it: the segment is rolled here (one file created,
    /// the directory and the commit mark synced), the compaction of everything before it runs on
    /// a thread of its own, reading only files that no longer change. Appends go on meanwhile.
    /// `false` if a snapshot is already being written.
    pub fn snapshot_in_background(&mut self) -> io::Result<bool> {
        if self.background.is_some() {
            return Ok(false);
        }
        let job = self.roll_for_snapshot()?;
        let thread = std::thread::Builder::new()
            .name("groupcoord-snapshot".into())
            .spawn(move || job.run())?;
        self.background = Some(thread);
        Ok(true)
    }

    /// The result of the background snapshot once it finished (`wait`: block until it does);
    /// `None` when none is running (or, without `wait`, it is still running).
    pub fn finish_background(&mut self, wait: bool) -> Option<io::Result<PathBuf>> {
        let done = self.background.as_ref()?.is_finished();
        if !done && !wait {
            return None;
        }
        let thread = self.background.take()?;
        let r = thread
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the snapshot thread panicked")));
        Some(r.map(|(path, bytes)| {
            // Only the current segment was written since the roll.
            self.total_bytes = bytes + self.segment_bytes;
            path
        }))
    }

    /// Start a new segment for a snapshot and return the job that compacts everything before
    /// it. The files the job reads never change again; until it has renamed its snapshot into
    /// place, a load replays them as before, so a crash at any point loses nothing.
    pub fn roll_for_snapshot(&mut self) -> io::Result<SnapshotJob> {
        self.sync()?;
        let n = self.segment_no + 1;
        let path = self.dir.join(segment_name(n));
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        fsync_dir(&self.dir)?;
        self.commit.store(Mark { segment: n, end: 0 })?;
        self.file = file;
        self.segment_no = n;
        self.segment_bytes = 0;
        self.since_snapshot = 0;
        Ok(SnapshotJob {
            dir: self.dir.clone(),
            n,
        })
    }

    /// Read a whole file (for tests and tools).
    pub fn read_file(path: &Path) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        File::open(path)?.read_to_end(&mut v)?;
        Ok(v)
    }

    /// The segment appends go to.
    pub fn current_segment(&self) -> PathBuf {
        self.dir.join(segment_name(self.segment_no))
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        // A snapshot still being written finishes before the data directory is unlocked.
        if let Some(Err(e)) = self.finish_background(true) {
            tracing::error!("background snapshot failed: {e}");
        }
    }
}

/// A snapshot to write: the compaction of the newest snapshot and every segment before
/// segment `n` into `snapshot-<n>.snap` (see [`Log::roll_for_snapshot`]).
#[derive(Debug)]
pub struct SnapshotJob {
    dir: PathBuf,
    n: u64,
}

impl SnapshotJob {
    /// The compaction of every segment (and snapshot) of `dir` numbered below `n` into
    /// `snapshot-<n>.snap`, for a directory no [`Log`] has open: an owner-count migration writes
    /// one segment per old shard into each staged shard and compacts them so
    /// (`storage::migrate`).
    pub(crate) fn below(dir: &Path, n: u64) -> SnapshotJob {
        SnapshotJob {
            dir: dir.to_path_buf(),
            n,
        }
    }

    /// Compact, write the snapshot atomically (temporary file, fsync, rename, directory fsync),
    /// then remove the files it covers. Returns the snapshot and its size.
    pub fn run(self) -> io::Result<(PathBuf, u64)> {
        let (dir, n) = (&self.dir, self.n);
        let mut segments = Vec::new();
        let mut base = None;
        for e in fs::read_dir(dir)? {
            let name = e?.file_name().to_string_lossy().to_string();
            if let Some(m) = parse_numbered(&name, "segment-", ".log").filter(|&m| m < n) {
                segments.push(m);
            } else if let Some(m) = parse_numbered(&name, "snapshot-", ".snap").filter(|&m| m < n) {
                base = base.max(Some(m));
            }
        }
        segments.retain(|&m| m >= base.unwrap_or(0));
        segments.sort();
        let mut compactor = Compaction::default();
        let mut registries = Registries::default();
        let bad = |path: &Path, pos: usize, why: String| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} at offset {pos}: {why}", path.display()),
            )
        };
        let mut replay = |path: &Path, buf: &[u8]| -> io::Result<()> {
            let mut pos = 0;
            while pos < buf.len() {
                match parse_at(buf, pos) {
                    Parsed::Ok { payload, next } => {
                        let entry = decode_payload(payload).map_err(|w| bad(path, pos, w))?;
                        registries.track(&entry, &mut compactor);
                        pos = next;
                    }
                    Parsed::Bad(why) => return Err(bad(path, pos, why)),
                }
            }
            Ok(())
        };
        if let Some(m) = base {
            let path = dir.join(snapshot_name(m));
            let file = fs::read(&path)?;
            let body = snapshot_body(&file).map_err(|w| bad(&path, 0, w))?;
            replay(&path, body)?;
        }
        for &m in &segments {
            let path = dir.join(segment_name(m));
            let buf = fs::read(&path)?;
            replay(&path, &buf)?;
        }
        let tmp = dir.join(format!("{}.tmp", snapshot_name(n)));
        let fin = dir.join(snapshot_name(n));
        let mut bytes = 0u64;
        let mut crc = 0u32;
        {
            let mut f = io::BufWriter::new(File::create(&tmp)?);
            let mut put = |b: Vec<u8>| -> io::Result<()> {
                bytes += b.len() as u64;
                crc = crc32c::crc32c_append(crc, &b);
                f.write_all(&b)
            };
            for entry in registries.entries() {
                put(encode_entry(&entry)?)?;
            }
            for chunk in compactor.records().chunks(1000) {
                put(encode_entry(&LogEntry::Records(chunk.to_vec()))?)?;
            }
            let t = snapshot_trailer(bytes, crc);
            bytes += t.len() as u64;
            f.write_all(&t)?;
            let f = f.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
        }
        fs::rename(&tmp, &fin)?;
        fsync_dir(dir)?;
        // Everything before `n` is covered by the snapshot.
        for &m in &segments {
            fs::remove_file(dir.join(segment_name(m)))?;
        }
        if let Some(m) = base {
            fs::remove_file(dir.join(snapshot_name(m)))?;
        }
        Ok((fin, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("groupcoord-log-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn topic(n: usize) -> LogEntry {
        LogEntry::Topics(vec![TopicChange::Set {
            name: format!("t{n}"),
            partitions: n as i32,
        }])
    }

    /// The load's reader runs ahead of the apply: every entry still arrives once, in order, across
    /// several segments; and a replay failure early in a long log stops the load with the batch's
    /// offset instead of waiting for a reader blocked on a full queue.
    #[test]
    fn a_streamed_load_applies_in_order_and_stops_at_a_refused_batch() {
        let dir = temp_dir("streamed");
        {
            let (mut log, _) = Log::open(&dir, u64::MAX, |_| Ok(())).unwrap();
            for n in 0..500 {
                log.append(&[topic(n)]).unwrap();
                if n == 250 {
                    log.roll_for_snapshot().unwrap();
                }
            }
            log.sync().unwrap();
        }
        let mut seen = Vec::new();
        let (_, report) = Log::open(&dir, u64::MAX, |e| {
            seen.push(e.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(report.segments, 2);
        assert_eq!(seen, (0..500).map(topic).collect::<Vec<_>>());

        let mut applied = 0;
        let refused = Log::open(&dir, u64::MAX, |_| {
            applied += 1;
            if applied == 3 {
                Err("refused".into())
            } else {
                Ok(())
            }
        });
        let Err(LoadError::Replay { offset, reason, .. }) = refused else {
            panic!("expected a replay error");
        };
        assert_eq!(reason, "refused");
        let one = encode_entry(&topic(0)).unwrap().len() as u64;
        assert_eq!(offset, 2 * one, "the third batch");
        let _ = fs::remove_dir_all(&dir);
    }

    /// The topic entry layout logs already on disk use: count u32, then op, u16-length name
    /// and partitions, which the wire layer's int32 array and int16 string write identically.
    #[test]
    fn topic_entry_bytes_are_unchanged() {
        let entry = LogEntry::Topics(vec![
            TopicChange::Set {
                name: "t".into(),
                partitions: 3,
            },
            TopicChange::Delete { name: "u".into() },
        ]);
        let framed = encode_entry(&entry).unwrap();
        let payload = &framed[HEADER..];
        assert_eq!(
            payload,
            [
                1, 0, 0, 0, 2, 0, 0, 1, b't', 0, 0, 0, 3, 1, 0, 1, b'u', 0, 0, 0, 0
            ]
        );
        let Ok(LogEntry::Topics(back)) = decode_payload(payload) else {
            panic!("topic entry does not decode");
        };
        assert_eq!(back.len(), 2);
        // A hostile count is refused without allocating for it; an unknown op is named.
        assert!(decode_payload(&[1, 0x7f, 0xff, 0xff, 0xff]).is_err());
        let e = decode_payload(&[1, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0]).err();
        assert_eq!(e.as_deref(), Some("unknown topic op 9"));
    }

    /// ACL and group config entries: their kinds (3 and 5; 4 is SCRAM credentials) and a round
    /// trip; unknown codes are refused by name.
    #[test]
    fn acl_and_group_config_entries_round_trip() {
        let acl = crate::server::acl::validate_new(3, "app", 4, "User:a", "*", 3, 2).unwrap();
        let entry = LogEntry::Acls(vec![AclChange::Create(acl.clone()), AclChange::Delete(acl)]);
        let framed = encode_entry(&entry).unwrap();
        assert_eq!(framed[HEADER], 3);
        assert_eq!(decode_payload(&framed[HEADER..]).unwrap(), entry);
        let entry = LogEntry::GroupConfigs(vec![
            GroupConfigChange {
                group: "g".into(),
                key: "streams.num.standby.replicas".into(),
                value: Some("1".into()),
            },
            GroupConfigChange {
                group: "g".into(),
                key: "streams.session.timeout.ms".into(),
                value: None,
            },
        ]);
        let framed = encode_entry(&entry).unwrap();
        assert_eq!(framed[HEADER], 5);
        assert_eq!(decode_payload(&framed[HEADER..]).unwrap(), entry);
        // One ACL with an unknown operation code (99).
        let mut bad = vec![
            3, 0, 0, 0, 1, 0, 3, 0, 1, b'g', 3, 0, 1, b'U', 0, 1, b'*', 99, 3,
        ];
        assert_eq!(
            decode_payload(&bad).err().as_deref(),
            Some("unknown ACL operation 99")
        );
        bad[17] = 3;
        bad[1] = 0x7f; // a hostile count
        assert!(decode_payload(&bad).is_err());
    }
}
