//! The commit path: a thread of its own that appends the log entries of every batch the owner
//! processed, fsyncs once for everything queued while the previous fsync ran (group commit), and
//! only then releases the responses that depend on those entries.
//!
//! An append or fsync that fails leaves the owner's in-memory state ahead of the disk, which
//! cannot be rolled back: the thread stops at once, without releasing a single further response,
//! and returns the error; the server then stops (fail-stop) and the binary exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::{oneshot, watch};
use tracing::{error, info};

use super::Shared;
use super::owner::Reply;
use super::storage::log::{Log, LogEntry};

/// The log failed: state in memory is ahead of the disk.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}; stopped (state in memory is ahead of the log, nothing further is acknowledged)")]
pub struct CommitError(pub String);

/// Responses waiting for their batch to be durable.
pub type Replies = Vec<(oneshot::Sender<Reply>, Reply)>;

/// One batch handed to the commit thread.
struct Commit {
    entries: Vec<LogEntry>,
    replies: Replies,
}

/// The owner's side of the commit path.
pub struct Committer {
    tx: mpsc::Sender<Commit>,
    /// Batches with entries that are not durable yet.
    in_flight: Arc<AtomicU64>,
}

/// The commit thread is gone (it failed and stopped).
#[derive(Debug)]
pub struct CommitGone;

impl Committer {
    /// Start the commit thread; it runs until the returned [`Committer`] is dropped.
    /// A failure sets `stop`, so that the server stops at once rather than at the owner's next
    /// batch.
    pub fn spawn(
        log: Log,
        shared: Arc<Shared>,
        stop: Arc<watch::Sender<bool>>,
    ) -> std::io::Result<(Committer, JoinHandle<Result<(), CommitError>>)> {
        let (tx, rx) = mpsc::channel::<Commit>();
        let in_flight = Arc::new(AtomicU64::new(0));
        let thread = {
            let in_flight = in_flight.clone();
            std::thread::Builder::new()
                .name("groupcoord-commit".into())
                .spawn(move || {
                    let r = commit_loop(log, rx, shared, in_flight);
                    if r.is_err() {
                        let _ = stop.send(true);
                    }
                    r
                })?
        };
        Ok((Committer { tx, in_flight }, thread))
    }

    /// Make `entries` durable, then send `replies`. Replies with no entries of their own still
    /// wait for every earlier batch (a client must never see state a crash could take back),
    /// but go out at once when nothing is pending.
    pub fn submit(&self, entries: Vec<LogEntry>, replies: Replies) -> Result<(), CommitGone> {
        if entries.is_empty() && self.in_flight.load(Relaxed) == 0 {
            for (tx, r) in replies {
                let _ = tx.send(r);
            }
            return Ok(());
        }
        if !entries.is_empty() {
            self.in_flight.fetch_add(1, Relaxed);
        }
        self.tx
            .send(Commit { entries, replies })
            .map_err(|_| CommitGone)
    }
}

fn commit_loop(
    mut log: Log,
    rx: mpsc::Receiver<Commit>,
    shared: Arc<Shared>,
    in_flight: Arc<AtomicU64>,
) -> Result<(), CommitError> {
    let failed = |what: &str, e: std::io::Error| {
        let e = CommitError(format!("{what} failed: {e}"));
        error!("{e}");
        e
    };
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while let Ok(c) = rx.try_recv() {
            batch.push(c);
        }
        let mut durable = 0;
        for c in &batch {
            if c.entries.is_empty() {
                continue;
            }
            durable += 1;
            log.append(&c.entries)
                .map_err(|e| failed("log append", e))?;
            shared
                .metrics
                .log_batches
                .fetch_add(c.entries.len() as u64, Relaxed);
        }
        let t = Instant::now();
        if log.sync().map_err(|e| failed("log fsync", e))? {
            shared.metrics.observe_flush(t.elapsed().as_secs_f64());
        }
        if log.needs_snapshot() {
            // Only the segment roll happens here; the compaction is written by a thread of
            // its own, so these replies never wait for it.
            let t = Instant::now();
            log.snapshot_in_background()
                .map_err(|e| failed("segment roll for a snapshot", e))?;
            info!(
                us = t.elapsed().as_micros() as u64,
                "segment rolled; compacted snapshot being written in the background"
            );
        }
        report_snapshot(&mut log, false);
        shared.metrics.log_bytes.store(log.total_bytes(), Relaxed);
        for c in batch {
            for (tx, r) in c.replies {
                let _ = tx.send(r);
            }
        }
        in_flight.fetch_sub(durable, Relaxed);
    }
    log.sync().map_err(|e| failed("final fsync", e))?;
    report_snapshot(&mut log, true);
    Ok(())
}

/// Log the outcome of a background snapshot once it is done. A failed snapshot loses nothing
/// (the segments it would have replaced are still there, and a later one is tried).
fn report_snapshot(log: &mut Log, wait: bool) {
    match log.finish_background(wait) {
        Some(Ok(p)) => {
            info!(file = %p.display(), bytes = log.total_bytes(), "compacted snapshot written")
        }
        Some(Err(e)) => error!("background snapshot failed (the log is intact): {e}"),
        None => {}
    }
}
