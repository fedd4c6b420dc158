//! Changing a data directory's owner count (docs/sharding.md, "Changing the owner count").
//!
//! Asked for only (`--migrate-owners`): every old log is loaded whole, each entry is written to
//! the new owner the placement gives (a group's records to its group's owner, global entries to
//! owner 0), each new shard is compacted into one snapshot, all in a staging directory
//! `migrating-M/` beside the old logs. The switch is the new `SHARDS` file (temporary file,
//! fsync, rename, directory fsync); only after it are the old logs removed and the new shards
//! moved into place. [`finish_interrupted`] makes a crash at any point either undone (no
//! switched `SHARDS`: the staging directory is discarded, the old logs are intact) or completed
//! (switched: old logs removed, new shards moved), so the directory never loads a subset, nor
//! the same state twice.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tracing::{info, warn};

use super::commit_mark::COMMIT_FILE;
use super::layout::{read_shards, shard_dir, write_shards};
use super::lock::DataDirLock;
use super::log::{
    Log, LogEntry, SnapshotJob, encode_segment_batches, parse_numbered, segment_name,
};
use crate::records::Record;
use crate::server::shards;

/// Where a migration to `owners` owners stages its shards.
pub(crate) fn staging_dir(data_dir: &Path, owners: usize) -> PathBuf {
    data_dir.join(format!("migrating-{owners}"))
}

/// Held by a start while it migrates or settles an interrupted migration: a second start on the
/// same directory at that moment is refused instead of taking the staging directory for a
/// crashed one. (The old logs' own locks keep a running server's shards from being migrated.)
const MIGRATE_LOCK: &str = "MIGRATE.LOCK";

fn lock(data_dir: &Path) -> Result<DataDirLock, String> {
    DataDirLock::acquire_file(data_dir, MIGRATE_LOCK).map_err(|e| e.to_string())
}

/// Records (or other entries) buffered per new shard before they are appended: fewer, larger
/// writes, and the memory a migration holds beyond the loader's stays small.
const FLUSH_AT: usize = 4096;

/// The weight of an entry against [`FLUSH_AT`]: its records, or 1.
fn weight(entry: &LogEntry) -> usize {
    match entry {
        LogEntry::Records(rs) => rs.len().max(1),
        _ => 1,
    }
}

/// Where a migration stops (tests prove that a start after each point completes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopAt {
    /// Run to the end.
    Never,
    /// Stop after the staging directory is complete and synced, before the switch.
    AfterStaging,
    /// Stop right after the switch (`SHARDS` names the new count), before cleaning up.
    AfterSwitch,
}

fn io_at(p: &Path) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

fn fsync_dir(dir: &Path) -> Result<(), String> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

/// How a migration runs: where it stops (tests) and how many threads it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Migration {
    pub stop: StopAt,
    /// Threads reading old shards at once (new shards are compacted one at a time); `None`:
    /// one per core (`available_parallelism`). `Some(1)` is the sequential migration.
    pub threads: Option<usize>,
}

impl Default for Migration {
    fn default() -> Migration {
        Migration {
            stop: StopAt::Never,
            threads: None,
        }
    }
}

impl Migration {
    fn threads(&self) -> usize {
        self.threads
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
            .max(1)
    }
}

/// Moves the data directory from the logs in `old` (owner order) to `owners` owners. On
/// success `SHARDS` names `owners` and `shard-000/` ... hold the new logs.
pub(crate) fn migrate(
    data_dir: &Path,
    old: &[PathBuf],
    owners: usize,
    partitions: u32,
    how: Migration,
) -> Result<(), String> {
    let _lock = lock(data_dir)?;
    let t0 = std::time::Instant::now();
    let staging = staging_dir(data_dir, owners);
    let threads = how.threads();
    let (old_logs, read_ms) = stage(&staging, old, owners, partitions, threads)?;
    let staged_ms = t0.elapsed().as_millis() as u64;
    if how.stop == StopAt::AfterStaging {
        return Err(format!(
            "migration stopped after staging {} (test)",
            staging.display()
        ));
    }
    // The switch: from here on the staged shards are the data.
    write_shards(data_dir, owners, partitions)?;
    info!(dir = %data_dir.display(), from = old.len(), to = owners, "owner count switched");
    if how.stop == StopAt::AfterSwitch {
        return Err(format!(
            "migration stopped after the switch to {owners} owners (test)"
        ));
    }
    finish_switch(data_dir, owners)?;
    // The old logs stay locked until they are gone.
    drop(old_logs);
    info!(
        dir = %data_dir.display(),
        from = old.len(),
        to = owners,
        threads,
        read_ms,
        staged_ms,
        ms = t0.elapsed().as_millis() as u64,
        "owner count migrated"
    );
    Ok(())
}

/// Runs `job(k)` for every `k` in `0..count` on up to `threads` threads (each takes the next
/// `k` when it is done with one) and returns the results in `k` order. Once a job failed, the
/// jobs not yet begun are not run (`Err(None)`), and running ones see `stop` set.
fn run_jobs<T: Send>(
    count: usize,
    threads: usize,
    stop: &AtomicBool,
    job: impl Fn(usize) -> Result<T, Option<String>> + Sync,
) -> Vec<Result<T, Option<String>>> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                return done;
            }
            let r = if stop.load(Ordering::Relaxed) {
                Err(None)
            } else {
                job(k)
            };
            if matches!(r, Err(Some(_))) {
                stop.store(true, Ordering::Relaxed);
            }
            done.push((k, r));
        }
    };
    let threads = threads.clamp(1, count.max(1));
    let mut done: Vec<(usize, Result<T, Option<String>>)> = if threads == 1 {
        work()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    std::thread::Builder::new()
                        .name("groupcoord-migrate".into())
                        .spawn_scoped(s, work)
                })
                .collect();
            let mut done = Vec::new();
            for h in handles {
                match h {
                    Ok(h) => match h.join() {
                        Ok(d) => done.extend(d),
                        Err(_) => stop.store(true, Ordering::Relaxed),
                    },
                    // Fewer threads: the others take its share.
                    Err(e) => warn!("cannot start a migration thread: {e}"),
                }
            }
            done
        })
    };
    done.sort_by_key(|(k, _)| *k);
    let mut out: Vec<Result<T, Option<String>>> = Vec::with_capacity(count);
    let mut it = done.into_iter().peekable();
    for k in 0..count {
        match it.next_if(|(j, _)| *j == k) {
            Some((_, r)) => out.push(r),
            // Taken by a thread that panicked.
            None => out.push(Err(Some(format!(
                "migration job {k} did not finish (a thread panicked)"
            )))),
        }
    }
    out
}

/// The first real failure of `results` (in job order), or every success.
fn all_ok<T>(results: Vec<Result<T, Option<String>>>) -> Result<Vec<T>, String> {
    let mut ok = Vec::with_capacity(results.len());
    let mut stopped = false;
    for r in results {
        match r {
            Ok(v) => ok.push(v),
            Err(Some(e)) => return Err(e),
            Err(None) => stopped = true,
        }
    }
    if stopped {
        return Err("migration stopped".into());
    }
    Ok(ok)
}

/// Writes every entry of the old logs to its new shard under `staging`, compacts each new
/// shard into one snapshot and syncs everything. Returns the old logs (still locked) and the
/// milliseconds the reading took.
///
/// Old shard `i` is read by one thread (up to `threads` at once) and its entries go to
/// `segment-i` of each new shard, so each new shard's segments hold, in segment order, what the
/// sequential migration appended to it (old shard 0's entries, then old shard 1's, ...): the
/// compaction of each new shard then writes the same snapshot whatever the thread count.
fn stage(
    staging: &Path,
    old: &[PathBuf],
    owners: usize,
    partitions: u32,
    threads: usize,
) -> Result<(Vec<Log>, u64), String> {
    let t0 = std::time::Instant::now();
    if staging.exists() {
        fs::remove_dir_all(staging).map_err(io_at(staging))?;
    }
    fs::create_dir_all(staging).map_err(io_at(staging))?;
    for i in 0..owners {
        let d = shard_dir(staging, i);
        fs::create_dir_all(&d).map_err(io_at(&d))?;
    }
    let stop = AtomicBool::new(false);
    let read = run_jobs(old.len(), threads, &stop, |i| {
        read_old(i, &old[i], staging, owners, partitions, &stop)
    });
    let old_logs = all_ok(read)?;
    let read_ms = t0.elapsed().as_millis() as u64;
    let segments = old.len() as u64;
    // One new shard at a time: compacting two at once on two cores was slower (1.19x for
    // 1 -> 2 owners, `bench replay --migrate`) and held both shards' surviving records (1.76x
    // the peak RSS).
    let compacted = run_jobs(owners, 1, &stop, |i| {
        let d = shard_dir(staging, i);
        SnapshotJob::below(&d, segments)
            .run()
            .map_err(|e| Some(format!("{}: {e}", d.display())))
    });
    all_ok(compacted)?;
    for i in 0..owners {
        fsync_dir(&shard_dir(staging, i))?;
    }
    fsync_dir(staging)?;
    fsync_dir(staging.parent().unwrap_or(Path::new(".")))?;
    Ok((old_logs, read_ms))
}

/// Loads old shard `i` from `dir` and writes its entries, routed, to `segment-i` of each new
/// shard under `staging` (buffered up to [`FLUSH_AT`] records per new shard). `Err(None)`:
/// stopped because another job failed.
fn read_old(
    i: usize,
    dir: &Path,
    staging: &Path,
    owners: usize,
    partitions: u32,
    stop: &AtomicBool,
) -> Result<Log, Option<String>> {
    let paths: Vec<PathBuf> = (0..owners)
        .map(|j| shard_dir(staging, j).join(segment_name(i as u64)))
        .collect();
    let mut files: Vec<Option<fs::File>> = (0..owners).map(|_| None).collect();
    let mut write = |j: usize, p: &mut Vec<LogEntry>| -> Result<(), String> {
        let path = &paths[j];
        let buf = encode_segment_batches(p).map_err(io_at(path))?;
        p.clear();
        if buf.is_empty() {
            return Ok(());
        }
        let file = match &mut files[j] {
            Some(f) => f,
            empty => empty.insert(
                fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(io_at(path))?,
            ),
        };
        file.write_all(&buf).map_err(io_at(path))
    };
    let mut pending: Vec<Vec<LogEntry>> = vec![Vec::new(); owners];
    let mut weights = vec![0usize; owners];
    let mut lens = vec![0usize; owners];
    let mut failed: Option<String> = None;
    let mut stopped = false;
    let opened = Log::open(dir, u64::MAX, |entry| {
        if stop.load(Ordering::Relaxed) {
            stopped = true;
            return Err("stopped: another old shard failed".into());
        }
        for (len, p) in lens.iter_mut().zip(&pending) {
            *len = p.len();
        }
        route(entry, owners, partitions, &mut pending);
        for (j, p) in pending.iter_mut().enumerate() {
            weights[j] += p[lens[j]..].iter().map(weight).sum::<usize>();
            if weights[j] >= FLUSH_AT {
                if let Err(e) = write(j, p) {
                    failed = Some(e);
                    return Err("cannot write the staged shard".into());
                }
                weights[j] = 0;
            }
        }
        Ok(())
    });
    let (log, report) = match opened {
        Ok(o) => o,
        Err(_) if stopped => return Err(None),
        Err(e) => return Err(Some(failed.take().unwrap_or_else(|| e.to_string()))),
    };
    for (j, p) in pending.iter_mut().enumerate() {
        write(j, p).map_err(Some)?;
    }
    info!(dir = %dir.display(), records = report.records, "old shard read for migration");
    Ok(log)
}

/// Puts `entry` on the pending list of each new owner that holds part of it.
fn route(entry: &LogEntry, owners: usize, partitions: u32, pending: &mut [Vec<LogEntry>]) {
    let LogEntry::Records(rs) = entry else {
        pending[0].push(entry.clone());
        return;
    };
    let owner = |r: &Record| {
        shards::owner_of_partition(
            shards::coordinator_partition(r.group_id(), partitions),
            owners,
        )
    };
    let first = match rs.first() {
        Some(r) => owner(r),
        None => return,
    };
    if rs.iter().all(|r| owner(r) == first) {
        pending[first].push(entry.clone());
        return;
    }
    let mut parts: Vec<Vec<Record>> = vec![Vec::new(); owners];
    for r in rs {
        parts[owner(r)].push(r.clone());
    }
    for (i, part) in parts.into_iter().enumerate() {
        if !part.is_empty() {
            pending[i].push(LogEntry::Records(part));
        }
    }
}

/// After the switch: removes the old logs (unless a previous attempt already did and began
/// moving), moves the staged shards into place, removes the staging directory.
fn finish_switch(data_dir: &Path, owners: usize) -> Result<(), String> {
    let staging = staging_dir(data_dir, owners);
    // Shards are moved only once every old log is gone: a complete staging directory means
    // the old logs may still be there.
    if (0..owners).all(|i| shard_dir(&staging, i).is_dir()) {
        remove_old_logs(data_dir)?;
    }
    for i in 0..owners {
        let from = shard_dir(&staging, i);
        if from.is_dir() {
            let to = shard_dir(data_dir, i);
            fs::rename(&from, &to).map_err(io_at(&to))?;
        }
    }
    fsync_dir(data_dir)?;
    fs::remove_dir_all(&staging).map_err(io_at(&staging))?;
    fsync_dir(data_dir)?;
    info!(dir = %data_dir.display(), owners, "migration complete");
    Ok(())
}

/// Removes every shard directory and a one-owner log at the top of `data_dir` (its segments,
/// snapshots and commit mark; `LOCK` stays).
fn remove_old_logs(data_dir: &Path) -> Result<(), String> {
    for e in fs::read_dir(data_dir).map_err(io_at(data_dir))? {
        let e = e.map_err(io_at(data_dir))?;
        let name = e.file_name().to_string_lossy().to_string();
        let path = e.path();
        if parse_numbered(&name, "shard-", "").is_some() && path.is_dir() {
            fs::remove_dir_all(&path).map_err(io_at(&path))?;
        } else if parse_numbered(&name, "segment-", ".log").is_some()
            || parse_numbered(&name, "snapshot-", ".snap").is_some()
            || name == COMMIT_FILE
            || (name.ends_with(".tmp") && name != "SHARDS.tmp")
        {
            fs::remove_file(&path).map_err(io_at(&path))?;
        }
    }
    fsync_dir(data_dir)
}

/// What an interrupted migration left, settled before anything is loaded: a staging directory
/// whose count `SHARDS` names was switched and is completed; any other one never became the
/// data and is removed (the old logs are intact).
pub(crate) fn finish_interrupted(data_dir: &Path, partitions: u32) -> Result<(), String> {
    let entries = match fs::read_dir(data_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{}: {e}", data_dir.display())),
    };
    let mut staged = Vec::new();
    for e in entries {
        let e = e.map_err(io_at(data_dir))?;
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(n) = parse_numbered(&name, "migrating-", "")
            && e.path().is_dir()
        {
            staged.push(n as usize);
        }
    }
    if staged.is_empty() {
        return Ok(());
    }
    let _lock = lock(data_dir)?;
    let recorded = read_shards(data_dir, partitions)?;
    for n in staged {
        let staging = staging_dir(data_dir, n);
        if !staging.is_dir() {
            continue; // finished by the start that held the lock meanwhile
        }
        if recorded == Some(n) {
            warn!(dir = %data_dir.display(), owners = n, "completing an interrupted migration");
            finish_switch(data_dir, n)?;
        } else {
            warn!(dir = %staging.display(), "discarding an interrupted migration (never switched)");
            fs::remove_dir_all(&staging).map_err(io_at(&staging))?;
            fsync_dir(data_dir)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::OffsetCommitValue;
    use crate::server::storage::log::TopicChange;

    fn commit(group: &str, offset: i64) -> Record {
        Record::OffsetCommit {
            group_id: group.into(),
            topic: "t".into(),
            partition: 0,
            value: Some(OffsetCommitValue {
                offset,
                leader_epoch: -1,
                metadata: String::new(),
                commit_timestamp: 0,
            }),
        }
    }

    fn stop_at(stop: StopAt) -> Migration {
        Migration {
            stop,
            ..Migration::default()
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("groupcoord-migrate-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// Every entry of the log in `dir`, in order.
    fn entries(dir: &Path) -> Vec<LogEntry> {
        let mut out = Vec::new();
        Log::open(dir, u64::MAX, |e| {
            out.push(e.clone());
            Ok(())
        })
        .unwrap();
        out
    }

    fn offsets(es: &[LogEntry]) -> Vec<(String, i64)> {
        let mut v: Vec<(String, i64)> = es
            .iter()
            .flat_map(|e| match e {
                LogEntry::Records(rs) => rs.clone(),
                _ => Vec::new(),
            })
            .filter_map(|r| match r {
                Record::OffsetCommit {
                    group_id,
                    value: Some(v),
                    ..
                } => Some((group_id, v.offset)),
                _ => None,
            })
            .collect();
        v.sort();
        v
    }

    fn has_topic(es: &[LogEntry]) -> bool {
        es.iter().any(|e| matches!(e, LogEntry::Topics(_)))
    }

    // g-a -> partition 25 (owner 1 of 2), g-b -> 26 (owner 0 of 2): docs/sharding.md.
    #[test]
    fn a_mixed_entry_is_split_by_owner_and_globals_go_to_owner_0() {
        let mut pending = vec![Vec::new(); 2];
        let mixed = LogEntry::Records(vec![commit("g-a", 1), commit("g-b", 2), commit("g-a", 3)]);
        route(&mixed, 2, 50, &mut pending);
        let topics = LogEntry::Topics(vec![TopicChange::Set {
            name: "t".into(),
            partitions: 1,
        }]);
        route(&topics, 2, 50, &mut pending);
        assert_eq!(offsets(&pending[0]), vec![("g-b".into(), 2)]);
        assert!(has_topic(&pending[0]));
        assert_eq!(
            offsets(&pending[1]),
            vec![("g-a".into(), 1), ("g-a".into(), 3)]
        );
        assert!(!has_topic(&pending[1]));
    }

    /// One owner's log, with a mixed entry and a topic, at the top of a new directory.
    fn one_owner_dir(name: &str) -> PathBuf {
        let dir = temp_dir(name);
        let (mut log, _) = Log::open(&dir, u64::MAX, |_| Ok(())).unwrap();
        log.append(&[
            LogEntry::Topics(vec![TopicChange::Set {
                name: "t".into(),
                partitions: 1,
            }]),
            LogEntry::Records(vec![commit("g-a", 1), commit("g-b", 2)]),
            LogEntry::Records(vec![commit("g-a", 5)]),
        ])
        .unwrap();
        log.sync().unwrap();
        dir
    }

    /// Migrates the one-owner log in `dir` to two owners (50 partitions).
    fn one_log_to_two_owners(dir: &Path, how: Migration) -> Result<(), String> {
        migrate(dir, std::slice::from_ref(&dir.to_path_buf()), 2, 50, how)
    }

    fn assert_two_shards(dir: &Path) {
        assert_eq!(read_shards(dir, 50).unwrap(), Some(2));
        assert!(!staging_dir(dir, 2).exists(), "staging removed");
        assert!(!dir.join(COMMIT_FILE).exists(), "the one-owner log is gone");
        let e0 = entries(&shard_dir(dir, 0));
        let e1 = entries(&shard_dir(dir, 1));
        assert_eq!(offsets(&e0), vec![("g-b".into(), 2)]);
        assert!(has_topic(&e0));
        // Compacted: only the latest offset of g-a.
        assert_eq!(offsets(&e1), vec![("g-a".into(), 5)]);
        assert!(!has_topic(&e1));
    }

    #[test]
    fn every_crash_point_is_completed_or_undone_by_the_next_start() {
        // Runs through.
        let dir = one_owner_dir("through");
        one_log_to_two_owners(&dir, Migration::default()).unwrap();
        assert_two_shards(&dir);

        // Crashed after staging: not switched, so the next start discards the staging and the
        // one-owner log is intact; a migration then runs again.
        let dir = one_owner_dir("staged");
        one_log_to_two_owners(&dir, stop_at(StopAt::AfterStaging)).unwrap_err();
        assert!(staging_dir(&dir, 2).is_dir() && read_shards(&dir, 50).unwrap().is_none());
        finish_interrupted(&dir, 50).unwrap();
        assert!(!staging_dir(&dir, 2).exists());
        assert_eq!(
            offsets(&entries(&dir)),
            vec![("g-a".into(), 1), ("g-a".into(), 5), ("g-b".into(), 2)]
        );
        one_log_to_two_owners(&dir, Migration::default()).unwrap();
        assert_two_shards(&dir);

        // Crashed after the switch: the next start completes it.
        let dir = one_owner_dir("switched");
        one_log_to_two_owners(&dir, stop_at(StopAt::AfterSwitch)).unwrap_err();
        assert!(dir.join(COMMIT_FILE).exists(), "old log still there");
        finish_interrupted(&dir, 50).unwrap();
        assert_two_shards(&dir);

        // Crashed while moving the shards into place (old logs removed, shard-000 moved): the
        // next start moves the rest and removes nothing it should keep.
        let dir = one_owner_dir("moving");
        one_log_to_two_owners(&dir, stop_at(StopAt::AfterSwitch)).unwrap_err();
        remove_old_logs(&dir).unwrap();
        fs::rename(shard_dir(&staging_dir(&dir, 2), 0), shard_dir(&dir, 0)).unwrap();
        finish_interrupted(&dir, 50).unwrap();
        assert_two_shards(&dir);

        // And back to one owner: `SHARDS` names 1 and shard-000 holds everything.
        migrate(
            &dir,
            &[shard_dir(&dir, 0), shard_dir(&dir, 1)],
            1,
            50,
            Migration::default(),
        )
        .unwrap();
        assert_eq!(read_shards(&dir, 50).unwrap(), Some(1));
        assert!(!shard_dir(&dir, 1).exists());
        let e = entries(&shard_dir(&dir, 0));
        assert_eq!(offsets(&e), vec![("g-a".into(), 5), ("g-b".into(), 2)]);
        assert!(has_topic(&e));
        for name in ["through", "staged", "switched", "moving"] {
            let _ = fs::remove_dir_all(temp_dir(name));
        }
    }

    #[test]
    fn a_migration_in_progress_is_not_taken_for_a_crashed_one() {
        let dir = one_owner_dir("in-progress");
        fs::create_dir_all(shard_dir(&staging_dir(&dir, 2), 0)).unwrap();
        let held = lock(&dir).unwrap();
        let e = finish_interrupted(&dir, 50).unwrap_err();
        assert!(e.contains("in use"), "{e}");
        assert!(staging_dir(&dir, 2).is_dir(), "left to its owner");
        drop(held);
        finish_interrupted(&dir, 50).unwrap();
        assert!(!staging_dir(&dir, 2).exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_corrupt_staging_directory_is_never_loaded() {
        let dir = one_owner_dir("corrupt");
        let junk = shard_dir(&staging_dir(&dir, 2), 1);
        fs::create_dir_all(&junk).unwrap();
        fs::write(junk.join("segment-00000000000000000000.log"), b"not a log").unwrap();
        fs::write(junk.join(COMMIT_FILE), b"junk").unwrap();
        finish_interrupted(&dir, 50).unwrap();
        assert!(!staging_dir(&dir, 2).exists(), "not switched: discarded");
        one_log_to_two_owners(&dir, Migration::default()).unwrap();
        assert_two_shards(&dir);
        let _ = fs::remove_dir_all(&dir);
    }

    /// `count` fresh shard logs `shard-000/` ... in `dir`.
    fn open_shard_logs(dir: &Path, count: usize) -> Vec<Log> {
        (0..count)
            .map(|i| {
                Log::open(&shard_dir(dir, i), u64::MAX, |_| Ok(()))
                    .unwrap()
                    .0
            })
            .collect()
    }

    /// A directory written by `owners` owners: 40 groups' offset commits (overwritten 30 times,
    /// some deleted) in each group's shard, and topics in shard 0.
    fn sharded_dir(name: &str, owners: usize) -> PathBuf {
        let dir = temp_dir(name);
        let mut logs = open_shard_logs(&dir, owners);
        let owner =
            |g: &str| shards::owner_of_partition(shards::coordinator_partition(g, 50), owners);
        for round in 0..30i64 {
            logs[0]
                .append(&[LogEntry::Topics(vec![TopicChange::Set {
                    name: format!("t{}", round % 7),
                    partitions: round as i32 + 1,
                }])])
                .unwrap();
            // One entry per old owner and round, holding several groups: the groups of an old
            // shard go to different new owners, so most entries are split.
            let mut batches: Vec<Vec<Record>> = vec![Vec::new(); owners];
            for g in 0..40 {
                let gid = format!("group-{g}");
                let rs = &mut batches[owner(&gid)];
                rs.push(commit(&gid, round * 100 + g));
                if (round + g) % 9 == 0 {
                    // A tombstone: compaction removes the key until it is written again.
                    rs.push(Record::OffsetCommit {
                        group_id: gid.clone(),
                        topic: "t".into(),
                        partition: 0,
                        value: None,
                    });
                }
            }
            for (log, rs) in logs.iter_mut().zip(batches) {
                log.append(&[LogEntry::Records(rs)]).unwrap();
            }
        }
        for log in &mut logs {
            log.sync().unwrap();
        }
        drop(logs);
        write_shards(&dir, owners, 50).unwrap();
        dir
    }

    /// Every file of the shard directories `SHARDS` names, by shard and name, with its bytes
    /// (lock files aside).
    fn shard_files(dir: &Path) -> Vec<(usize, String, Vec<u8>)> {
        let owners = read_shards(dir, 50).unwrap().unwrap();
        let mut out = Vec::new();
        for i in 0..owners {
            for e in fs::read_dir(shard_dir(dir, i)).unwrap() {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().to_string();
                if name != super::super::lock::LOCK_FILE {
                    out.push((i, name, fs::read(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    fn threads(n: usize) -> Migration {
        Migration {
            threads: Some(n),
            ..Migration::default()
        }
    }

    /// The snapshot of each new shard as the migration before parallel reading wrote it: every
    /// old shard loaded in order, each entry routed and appended to one log per new shard, each
    /// log then compacted.
    fn reference_snapshots(old: &[PathBuf], to: usize, name: &str) -> Vec<Vec<u8>> {
        let at = temp_dir(name);
        let mut logs = open_shard_logs(&at, to);
        for dir in old {
            let mut pending = vec![Vec::new(); to];
            Log::open(dir, u64::MAX, |e| {
                route(e, to, 50, &mut pending);
                Ok(())
            })
            .unwrap();
            for (log, p) in logs.iter_mut().zip(&pending) {
                log.append(p).unwrap();
            }
        }
        let snaps = logs
            .iter_mut()
            .map(|log| fs::read(log.snapshot().unwrap()).unwrap())
            .collect();
        drop(logs);
        let _ = fs::remove_dir_all(&at);
        snaps
    }

    /// Old shards read by several threads at once, new shards compacted by several: the new
    /// shards are byte for byte those of the sequential migration (each group's records in
    /// order, globals in shard 0, the compacted records in the order the sequential migration
    /// wrote them), and their snapshots those the migration before parallel reading wrote,
    /// for 3 -> 2, 3 -> 1 and 3 -> 5 owners.
    #[test]
    fn a_parallel_migration_writes_the_same_shards_as_the_sequential_one() {
        for to in [2, 1, 5] {
            let seq = sharded_dir(&format!("seq-{to}"), 3);
            let par = sharded_dir(&format!("par-{to}"), 3);
            let old = |d: &Path| (0..3).map(|i| shard_dir(d, i)).collect::<Vec<_>>();
            let before = reference_snapshots(&old(&seq), to, &format!("ref-{to}"));
            migrate(&seq, &old(&seq), to, 50, threads(1)).unwrap();
            migrate(&par, &old(&par), to, 50, threads(4)).unwrap();
            let (a, b) = (shard_files(&seq), shard_files(&par));
            assert_eq!(a.len(), b.len(), "{to} owners");
            for (x, y) in a.iter().zip(&b) {
                assert!(x == y, "{to} owners: shard {} {} differs", x.0, x.1);
            }
            let snaps: Vec<&Vec<u8>> = a
                .iter()
                .filter(|(_, name, _)| name.ends_with(".snap"))
                .map(|(_, _, bytes)| bytes)
                .collect();
            assert_eq!(snaps.len(), to, "one snapshot per new shard");
            for (j, (now, was)) in snaps.iter().zip(&before).enumerate() {
                assert!(
                    *now == was,
                    "{to} owners: shard {j} differs from the migration before"
                );
            }
            // And the state is every group's latest offset, each in its group's new shard.
            let mut all = Vec::new();
            for i in 0..to {
                let es = entries(&shard_dir(&par, i));
                assert_eq!(has_topic(&es), i == 0, "topics in shard 0 only");
                for (g, _) in offsets(&es) {
                    let want =
                        shards::owner_of_partition(shards::coordinator_partition(&g, 50), to);
                    assert_eq!(want, i, "{g} in its owner's shard");
                }
                all.extend(offsets(&es));
            }
            all.sort();
            let want: Vec<(String, i64)> = (0..40)
                .filter(|g| (29 + g) % 9 != 0)
                .map(|g| (format!("group-{g}"), 2900 + g))
                .collect::<std::collections::BTreeMap<_, _>>()
                .into_iter()
                .collect();
            assert_eq!(all, want, "{to} owners");
            let _ = fs::remove_dir_all(&seq);
            let _ = fs::remove_dir_all(&par);
        }
    }

    /// A damaged old shard stops a parallel migration with the loader's error naming the file;
    /// nothing is switched and the old shards still load.
    #[test]
    fn a_damaged_old_shard_stops_a_parallel_migration() {
        let dir = sharded_dir("damaged", 3);
        let seg = shard_dir(&dir, 1).join(segment_name(0));
        let mut bytes = fs::read(&seg).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0xff;
        fs::write(&seg, &bytes).unwrap();
        let old: Vec<PathBuf> = (0..3).map(|i| shard_dir(&dir, i)).collect();
        let e = migrate(&dir, &old, 2, 50, threads(3)).unwrap_err();
        assert!(e.contains(&seg.display().to_string()), "{e}");
        assert_eq!(read_shards(&dir, 50).unwrap(), Some(3), "not switched");
        finish_interrupted(&dir, 50).unwrap();
        assert!(!staging_dir(&dir, 2).exists());
        for i in [0, 2] {
            assert!(!entries(&shard_dir(&dir, i)).is_empty());
        }
        let _ = fs::remove_dir_all(&dir);
    }
}
