//! The commit path: a thread of its own that appends the log entries of every batch the owner
//! processed, fsyncs once for everything queued while the previous fsync ran (group commit), and
//! only then releases the responses that depend on those entries.
//!
//! An append or fsync that fails leaves the owner's in-memory state ahead of the disk, which
//! cannot be rolled back: the thread stops at once, without releasing a single further response,
//! and returns the error; the server then stops (fail-stop) and the binary exits.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::{oneshot, watch};
use tracing::{error, info};

use super::Shared;
use super::owner::{RegistryMsg, Reply};
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
    /// Batches with entries handed to the commit thread so far.
    submitted: u64,
    /// Batches with entries made durable so far (batches are durable in submission order).
    durable: Arc<AtomicU64>,
    /// The last batch that wrote records of each group (pruned once durable).
    group_batch: HashMap<String, u64>,
    /// The last batch that wrote anything that is not a group's records (topics, ACLs, configs,
    /// credentials: what any response may reflect).
    global_batch: u64,
}

/// The commit thread is gone (it failed and stopped).
#[derive(Debug)]
pub struct CommitGone;

impl Committer {
    /// Start the commit thread; it runs until the returned [`Committer`] is dropped.
    /// A failure sets `stop`, so that the server stops at once rather than at the owner's next
    /// batch.
    ///
    /// `peers` are the other owners' registry queues (owner 0 with several owners; else
    /// empty): registry entries (topics, ACLs, group configs, SCRAM) are applied by every peer
    /// after they are durable and before the replies that wrote them are released, so a client
    /// that was answered finds them on every owner.
    pub fn spawn(
        log: Log,
        shared: Arc<Shared>,
        stop: Arc<watch::Sender<bool>>,
        peers: Vec<tokio::sync::mpsc::UnboundedSender<RegistryMsg>>,
        name: String,
    ) -> std::io::Result<(Committer, JoinHandle<Result<(), CommitError>>)> {
        let (tx, rx) = mpsc::channel::<Commit>();
        let durable = Arc::new(AtomicU64::new(0));
        let thread = {
            let durable = durable.clone();
            std::thread::Builder::new().name(name).spawn(move || {
                let r = commit_loop(log, rx, shared, durable, peers);
                if r.is_err() {
                    let _ = stop.send(true);
                }
                r
            })?
        };
        Ok((Committer::new(tx, durable), thread))
    }

    fn new(tx: mpsc::Sender<Commit>, durable: Arc<AtomicU64>) -> Committer {
        Committer {
            tx,
            submitted: 0,
            durable,
            group_batch: HashMap::new(),
            global_batch: 0,
        }
    }

    /// Make `entries` durable, then send `replies`. Replies with no entries of their own still
    /// wait for every earlier batch (a client must never see state a crash could take back),
    /// but go out at once when nothing is pending.
    pub fn submit(&mut self, entries: Vec<LogEntry>, replies: Replies) -> Result<(), CommitGone> {
        if entries.is_empty() && self.durable.load(Relaxed) == self.submitted {
            for (tx, r) in replies {
                let _ = tx.send(r);
            }
            return Ok(());
        }
        if !entries.is_empty() {
            self.note_writes(&entries);
            self.submitted += 1;
        }
        self.tx
            .send(Commit { entries, replies })
            .map_err(|_| CommitGone)
    }

    /// Record what the next batch submitted with entries writes (call before
    /// [`Committer::submit`] when deciding, entry by entry, which replies may skip the wait).
    pub fn note_writes(&mut self, entries: &[LogEntry]) {
        let batch = self.submitted + 1;
        for e in entries {
            match e {
                LogEntry::Records(rs) => {
                    for r in rs {
                        match self.group_batch.get_mut(r.group_id()) {
                            Some(b) => *b = batch,
                            None => {
                                self.group_batch.insert(r.group_id().to_string(), batch);
                            }
                        }
                    }
                }
                _ => self.global_batch = batch,
            }
        }
    }

    /// Whether everything a response about `group` can reflect is durable: no batch that wrote
    /// the group's records (or anything global) is still on its way to the disk. Such a
    /// response, if its request wrote nothing, needs no wait (as Kafka releases a read that
    /// follows no pending write of its partition): a heartbeat never waits for another group's
    /// fsync.
    pub fn is_durable(&mut self, group: &str) -> bool {
        let durable = self.durable.load(Relaxed);
        if self.global_batch > durable {
            return false;
        }
        match self.group_batch.get(group) {
            Some(&b) if b > durable => false,
            Some(_) => {
                self.group_batch.remove(group);
                true
            }
            None => true,
        }
    }
}

fn commit_loop(
    mut log: Log,
    rx: mpsc::Receiver<Commit>,
    shared: Arc<Shared>,
    durable_batches: Arc<AtomicU64>,
    peers: Vec<tokio::sync::mpsc::UnboundedSender<RegistryMsg>>,
) -> Result<(), CommitError> {
    let failed = |what: &str, e: std::io::Error| {
        let e = CommitError(format!("{what} failed: {e}"));
        error!("{e}");
        e
    };
    // This log's share of `log_bytes` (the metric sums every owner's log).
    let mut my_bytes = log.total_bytes();
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
        let bytes = log.total_bytes();
        shared
            .metrics
            .log_bytes
            .fetch_add(bytes.wrapping_sub(my_bytes), Relaxed);
        my_bytes = bytes;
        if !peers.is_empty() {
            broadcast_registry(&batch, &peers);
        }
        for c in batch {
            for (tx, r) in c.replies {
                let _ = tx.send(r);
            }
        }
        durable_batches.fetch_add(durable, Relaxed);
    }
    log.sync().map_err(|e| failed("final fsync", e))?;
    report_snapshot(&mut log, true);
    Ok(())
}

/// Gives the registry entries of `batch` (durable by now) to every other owner and waits until
/// each applied them. An owner that stopped does not answer; the server is stopping then.
fn broadcast_registry(batch: &[Commit], peers: &[tokio::sync::mpsc::UnboundedSender<RegistryMsg>]) {
    let globals: Vec<LogEntry> = batch
        .iter()
        .flat_map(|c| c.entries.iter())
        .filter(|e| !matches!(e, LogEntry::Records(_)))
        .cloned()
        .collect();
    if globals.is_empty() {
        return;
    }
    let globals = Arc::new(globals);
    let (done, applied) = mpsc::channel();
    let mut asked = 0;
    for p in peers {
        if p.send(RegistryMsg::Apply(globals.clone(), done.clone()))
            .is_ok()
        {
            asked += 1;
        }
    }
    drop(done);
    for _ in 0..asked {
        if applied.recv().is_err() {
            break;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{OffsetCommitValue, Record};

    fn commit(group: &str) -> LogEntry {
        LogEntry::Records(vec![Record::OffsetCommit {
            group_id: group.into(),
            topic: "t".into(),
            partition: 0,
            value: Some(OffsetCommitValue {
                offset: 1,
                leader_epoch: -1,
                metadata: String::new(),
                commit_timestamp: 0,
            }),
        }])
    }

    /// A batch on its way to the disk holds back responses about its own group only; a global
    /// entry (topics) holds back every group's; both are released once the batch is durable.
    #[test]
    fn only_groups_with_writes_in_flight_wait() {
        let (tx, rx) = mpsc::channel();
        let durable = Arc::new(AtomicU64::new(0));
        let mut c = Committer::new(tx, durable.clone());
        assert!(c.is_durable("a") && c.is_durable("b"));
        c.submit(vec![commit("a")], vec![]).unwrap();
        assert!(!c.is_durable("a"), "a's write is in flight");
        assert!(c.is_durable("b"), "b wrote nothing");
        // Noted before its batch is submitted: a later job of the same batch waits too.
        c.note_writes(&[commit("b")]);
        assert!(!c.is_durable("b"));
        c.submit(vec![commit("b")], vec![]).unwrap();
        durable.store(1, Relaxed);
        assert!(c.is_durable("a"), "a's batch is durable");
        assert!(!c.is_durable("b"), "b's is not yet");
        c.submit(
            vec![LogEntry::Topics(vec![
                crate::server::storage::log::TopicChange::Set {
                    name: "t".into(),
                    partitions: 1,
                },
            ])],
            vec![],
        )
        .unwrap();
        durable.store(2, Relaxed);
        assert!(
            !c.is_durable("c"),
            "a topic change in flight holds back everyone"
        );
        durable.store(3, Relaxed);
        assert!(c.is_durable("b") && c.is_durable("c"));
        assert_eq!(rx.try_iter().count(), 3);
    }
}
