//! The read side of a load: the log's files, in replay order, read and decoded into entries on a
//! thread of its own while the caller applies the entries before them (on two cores a restart
//! then costs about max(decode, apply) instead of their sum).
//!
//! Segments are streamed through one reusable buffer (batches are checked and decoded where they
//! were read), never read whole: the load's peak memory is the replayed state plus a few
//! batches, not the state plus the largest segment. Only a batch that does not check out (a torn
//! tail, damage) reads the rest of its file, to report exactly what `parse_at` reports and
//! whether a valid batch follows.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use super::log::{HEADER, LogEntry, MAGIC, MAX_BATCH, Parsed, decode_payload, parse_at};

/// What a load reads: the newest snapshot's body (already read and checked whole: its trailer
/// covers every byte), then the segments.
pub(crate) enum Source {
    Snapshot(Vec<u8>),
    Segment(PathBuf),
}

/// One step of the read side, in file order. Each source yields its batches, then one `End`; the
/// reader stops after an `End` with a bad batch (the load either fails there or truncates the
/// last segment there) and after an I/O error.
pub(crate) enum Event {
    /// A batch whose frame and CRC check out, decoded (or why its body does not decode).
    Batch {
        pos: usize,
        next: usize,
        entry: Result<LogEntry, String>,
    },
    /// The source ended: cleanly, or at a batch that does not check out.
    End { bad: Option<BadBatch> },
    /// A segment could not be read.
    Io(io::Error),
}

/// A batch that does not check out: where, why, and where the next valid batch is, if any.
pub(crate) struct BadBatch {
    pub pos: usize,
    pub reason: String,
    pub valid_after: Option<usize>,
}

/// Batches decoded ahead of the caller at most (each at most a commit's worth of records).
const AHEAD: usize = 64;
/// The read buffer of a segment.
const READ_BUFFER: usize = 1 << 20;

/// The two ends the loading thread keeps: decoded entries go out on `tx`; applied entries come
/// back on `spent` to be freed here, where they were allocated (the allocator then reuses
/// their memory for the next batches instead of taking fresh pages).
struct Ends {
    tx: SyncSender<Event>,
    spent: Receiver<LogEntry>,
}

impl Ends {
    fn send(&self, event: Event) -> bool {
        while let Ok(entry) = self.spent.try_recv() {
            drop(entry);
        }
        self.tx.send(event).is_ok()
    }
}

/// Start reading `sources` on a thread of its own (scoped: it ends when the receiver is dropped
/// or the sources are done). Returns the decoded events, and where to hand applied entries back.
pub(crate) fn spawn<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    sources: Vec<Source>,
) -> io::Result<(Receiver<Event>, Sender<LogEntry>)> {
    let (tx, rx) = sync_channel(AHEAD);
    let (spent_tx, spent) = channel();
    let ends = Ends { tx, spent };
    std::thread::Builder::new()
        .name("groupcoord-load".into())
        .spawn_scoped(scope, move || {
            let tx = &ends;
            for source in sources {
                let go_on = match source {
                    Source::Snapshot(body) => batches_in(&body, tx),
                    Source::Segment(path) => match stream_segment(&path, tx) {
                        Ok(go_on) => go_on,
                        Err(e) => {
                            tx.send(Event::Io(e));
                            false
                        }
                    },
                };
                if !go_on {
                    return;
                }
            }
        })?;
    Ok((rx, spent_tx))
}

/// The batches of a buffer held whole. `false`: stop reading.
fn batches_in(buf: &[u8], tx: &Ends) -> bool {
    let mut pos = 0;
    while pos < buf.len() {
        match parse_at(buf, pos) {
            Parsed::Ok { payload, next } => {
                let entry = decode_payload(payload);
                if !tx.send(Event::Batch { pos, next, entry }) {
                    return false;
                }
                pos = next;
            }
            Parsed::Bad(reason) => {
                let valid_after = super::log::valid_batch_after(buf, pos + 1);
                let bad = BadBatch {
                    pos,
                    reason,
                    valid_after,
                };
                tx.send(Event::End { bad: Some(bad) });
                return false;
            }
        }
    }
    tx.send(Event::End { bad: None })
}

/// The batches of a segment, streamed through one buffer: big reads, and each batch checked and
/// decoded where it was read (no copy of its bytes). `Ok(false)`: stop reading.
fn stream_segment(path: &std::path::Path, tx: &Ends) -> io::Result<bool> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len() as usize;
    let mut window = Window {
        buf: vec![0; READ_BUFFER.min(len.max(HEADER))],
        start: 0,
        end: 0,
    };
    let mut pos = 0usize;
    while pos < len {
        let left = len - pos;
        if left < HEADER {
            return bad_tail(path, pos, tx);
        }
        let header = window.fill(&mut file, HEADER)?;
        let word =
            |i: usize| u32::from_be_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
        let (magic, batch, crc) = (word(0), word(4) as usize, word(8));
        if magic != MAGIC || batch > MAX_BATCH || batch > left - HEADER {
            return bad_tail(path, pos, tx);
        }
        // Bounded by the file's size and MAX_BATCH, checked above.
        let payload = &window.fill(&mut file, HEADER + batch)?[HEADER..];
        if crc32c::crc32c(payload) != crc {
            return bad_tail(path, pos, tx);
        }
        let entry = decode_payload(payload);
        window.start += HEADER + batch;
        let next = pos + HEADER + batch;
        if !tx.send(Event::Batch { pos, next, entry }) {
            return Ok(false);
        }
        pos = next;
    }
    Ok(tx.send(Event::End { bad: None }))
}

/// The bytes of a file read ahead: `buf[start..end]` are the next ones.
struct Window {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Window {
    /// The next `need` bytes (reading more if fewer are held; the caller bounds `need`).
    fn fill(&mut self, file: &mut File, need: usize) -> io::Result<&[u8]> {
        if self.end - self.start < need {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < need {
                self.buf.resize(need, 0);
            }
            while self.end < need {
                match file.read(&mut self.buf[self.end..]) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(n) => self.end += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.start..self.start + need])
    }
}

/// A batch at `pos` did not check out: read the rest of the file and report it as
/// [`parse_at`] does. Always stops the reading.
fn bad_tail(path: &std::path::Path, pos: usize, tx: &Ends) -> io::Result<bool> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(pos as u64))?;
    let mut rest = Vec::new();
    file.read_to_end(&mut rest)?;
    let bad = match parse_at(&rest, 0) {
        Parsed::Bad(reason) => BadBatch {
            pos,
            reason,
            valid_after: super::log::valid_batch_after(&rest, 1).map(|at| at + pos),
        },
        // The file changed under the reader (it is locked: only outside interference can).
        Parsed::Ok { .. } => {
            return Err(io::Error::other(format!(
                "the batch at offset {pos} changed while it was read"
            )));
        }
    };
    tx.send(Event::End { bad: Some(bad) });
    Ok(false)
}
