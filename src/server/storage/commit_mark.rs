//! The commit mark: how far the log is acknowledged.
//!
//! A crash can tear only what was written after the last `fsync`; everything before it was
//! acknowledged to clients and must load exactly. The log cannot tell these apart by looking at
//! a damaged batch (a bit flip in the last acknowledged batch and a half-written batch both fail
//! their CRC; a zeroed segment looks like a segment whose first write tore), so after every
//! `fsync` of the segment — and before any response that depends on it is released — the log
//! writes the acknowledged end to `COMMIT` and `fsync`s that too.
//!
//! `COMMIT` has two 32-byte slots written alternately (a torn write of one slot leaves the other,
//! one commit older, intact). A slot is
//!
//! ```text
//! magic u32 BE (0x4743_434D "GCCM") | sequence u64 BE | segment number u64 BE
//!   | acknowledged end offset in that segment u64 BE | CRC32C of the previous 28 bytes u32 BE
//! ```
//!
//! and the valid slot with the highest sequence wins. Load rules (see `log.rs`): in the segment
//! the mark names, every byte before the end must be valid batches; only bytes after it may be a
//! torn tail. Segments older than the newest are always complete. A mark naming a segment that is
//! missing, or an end past the segment's length, means acknowledged data is gone: start-up stops.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::wire::{Reader, Writer};

pub const COMMIT_FILE: &str = "COMMIT";
const MAGIC: u32 = 0x4743_434D;
const SLOT: usize = 32;

/// The acknowledged position of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub segment: u64,
    pub end: u64,
}

/// One slot: magic (uint32), sequence, segment and end (int64 each), CRC32C of the 28 bytes
/// before it (uint32).
fn encode(seq: u64, m: Mark) -> [u8; SLOT] {
    let mut w = Writer::new("CommitMark");
    w.u32(MAGIC);
    w.i64(seq as i64);
    w.i64(m.segment as i64);
    w.i64(m.end as i64);
    let crc = crc32c::crc32c(w.written());
    w.u32(crc);
    w.into_bytes()
        .try_into()
        .expect("a commit mark is 32 bytes")
}

fn decode(b: &[u8]) -> Option<(u64, Mark)> {
    let mut r = Reader::new(b.get(..SLOT)?, "CommitMark");
    let magic = r.u32("Magic").ok()?;
    let seq = r.i64("Sequence").ok()? as u64;
    let segment = r.i64("Segment").ok()? as u64;
    let end = r.i64("End").ok()? as u64;
    let crc = r.u32("Crc").ok()?;
    if magic != MAGIC || crc32c::crc32c(&b[0..28]) != crc {
        return None;
    }
    Some((seq, Mark { segment, end }))
}

/// What `COMMIT` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// No `COMMIT` file (a new directory, or a log written before commit marks existed).
    Absent,
    /// The file exists but neither slot is valid.
    Corrupt,
    Mark(Mark),
}

/// Read the newest valid slot.
pub fn read(dir: &Path) -> io::Result<Read> {
    let bytes = match std::fs::read(dir.join(COMMIT_FILE)) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Read::Absent),
        Err(e) => return Err(e),
    };
    let best = [0, SLOT]
        .iter()
        .filter_map(|&at| bytes.get(at..).and_then(decode))
        .max_by_key(|(seq, _)| *seq);
    Ok(match best {
        Some((_, m)) => Read::Mark(m),
        None => Read::Corrupt,
    })
}

/// The writer side: owned by the log.
#[derive(Debug)]
pub struct CommitMark {
    file: File,
    seq: u64,
    last: Option<Mark>,
}

impl CommitMark {
    /// Open (create) `COMMIT` in `dir`, continuing after the newest valid slot.
    pub fn open(dir: &Path) -> io::Result<CommitMark> {
        let path = dir.join(COMMIT_FILE);
        let bytes = std::fs::read(&path).unwrap_or_default();
        let seq = [0, SLOT]
            .iter()
            .filter_map(|&at| bytes.get(at..).and_then(decode))
            .map(|(s, _)| s)
            .max()
            .unwrap_or(0);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        Ok(CommitMark {
            file,
            seq,
            last: None,
        })
    }

    /// Make `m` the acknowledged position (written and fsynced before this returns).
    pub fn store(&mut self, m: Mark) -> io::Result<()> {
        if self.last == Some(m) {
            return Ok(());
        }
        self.seq += 1;
        let at = (self.seq % 2) * SLOT as u64;
        self.file.write_all_at(&encode(self.seq, m), at)?;
        self.file.sync_data()?;
        self.last = Some(m);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_valid_slot_wins_and_a_torn_slot_falls_back() {
        let a = encode(
            7,
            Mark {
                segment: 1,
                end: 10,
            },
        );
        let b = encode(
            8,
            Mark {
                segment: 1,
                end: 20,
            },
        );
        let mut file = [a, b].concat();
        let best = |f: &[u8]| {
            [0, SLOT]
                .iter()
                .filter_map(|&at| f.get(at..).and_then(decode))
                .max_by_key(|(s, _)| *s)
                .map(|(_, m)| m)
        };
        assert_eq!(
            best(&file),
            Some(Mark {
                segment: 1,
                end: 20
            })
        );
        file[SLOT + 25] ^= 1;
        assert_eq!(
            best(&file),
            Some(Mark {
                segment: 1,
                end: 10
            })
        );
    }
}
