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
