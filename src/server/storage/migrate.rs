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
use std::io;
use std::path::{Path, PathBuf};

use tracing::{info, warn};

use super::commit_mark::COMMIT_FILE;
use super::layout::{read_shards, shard_dir, write_shards};
use super::lock::DataDirLock;
use super::log::{Log, LogEntry, parse_numbered};
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

/// Moves the data directory from the logs in `old` (owner order) to `owners` owners. On
/// success `SHARDS` names `owners` and `shard-000/` ... hold the new logs.
pub(crate) fn migrate(
    data_dir: &Path,
    old: &[PathBuf],
    owners: usize,
    partitions: u32,
    stop: StopAt,
) -> Result<(), String> {
    let _lock = lock(data_dir)?;
    let staging = staging_dir(data_dir, owners);
    let old_logs = stage(&staging, old, owners, partitions)?;
    if stop == StopAt::AfterStaging {
        return Err(format!(
            "migration stopped after staging {} (test)",
            staging.display()
        ));
    }
    // The switch: from here on the staged shards are the data.
    write_shards(data_dir, owners, partitions)?;
    info!(dir = %data_dir.display(), from = old.len(), to = owners, "owner count switched");
    if stop == StopAt::AfterSwitch {
        return Err(format!(
            "migration stopped after the switch to {owners} owners (test)"
        ));
    }
    finish_switch(data_dir, owners)?;
    // The old logs stay locked until they are gone.
    drop(old_logs);
    Ok(())
}

/// Writes every entry of the old logs to its new shard under `staging`, compacts each new
/// shard into one snapshot and syncs everything. Returns the old logs (still locked).
fn stage(
    staging: &Path,
    old: &[PathBuf],
    owners: usize,
    partitions: u32,
) -> Result<Vec<Log>, String> {
    if staging.exists() {
        fs::remove_dir_all(staging).map_err(io_at(staging))?;
    }
    fs::create_dir_all(staging).map_err(io_at(staging))?;
    let mut new_logs = Vec::with_capacity(owners);
    for i in 0..owners {
        let d = shard_dir(staging, i);
        let (log, _) = Log::open(&d, u64::MAX, |_| Ok(())).map_err(|e| e.to_string())?;
        new_logs.push(log);
    }
    let mut pending: Vec<Vec<LogEntry>> = vec![Vec::new(); owners];
    let mut weights = vec![0usize; owners];
    let mut lens = vec![0usize; owners];
    let mut old_logs = Vec::with_capacity(old.len());
    for dir in old {
        let mut failed: Option<String> = None;
        let (log, report) = Log::open(dir, u64::MAX, |entry| {
            for (len, p) in lens.iter_mut().zip(&pending) {
                *len = p.len();
            }
            route(entry, owners, partitions, &mut pending);
            for (i, p) in pending.iter_mut().enumerate() {
                weights[i] += p[lens[i]..].iter().map(weight).sum::<usize>();
                if weights[i] >= FLUSH_AT {
                    if let Err(e) = new_logs[i].append(p) {
                        failed = Some(format!("{}: {e}", shard_dir(staging, i).display()));
                        return Err("cannot write the staged shard".into());
                    }
                    p.clear();
                    weights[i] = 0;
                }
            }
            Ok(())
        })
        .map_err(|e| failed.take().unwrap_or_else(|| e.to_string()))?;
        info!(dir = %dir.display(), records = report.records, "old shard read for migration");
        old_logs.push(log);
    }
    for (i, (log, p)) in new_logs.iter_mut().zip(&pending).enumerate() {
        let d = shard_dir(staging, i);
        log.append(p).map_err(io_at(&d))?;
        log.snapshot().map_err(io_at(&d))?;
        log.sync().map_err(io_at(&d))?;
    }
    drop(new_logs);
    for i in 0..owners {
        fsync_dir(&shard_dir(staging, i))?;
    }
    fsync_dir(staging)?;
    fsync_dir(staging.parent().unwrap_or(Path::new(".")))?;
    Ok(old_logs)
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
        migrate(&dir, std::slice::from_ref(&dir), 2, 50, StopAt::Never).unwrap();
        assert_two_shards(&dir);

        // Crashed after staging: not switched, so the next start discards the staging and the
        // one-owner log is intact; a migration then runs again.
        let dir = one_owner_dir("staged");
        migrate(
            &dir,
            std::slice::from_ref(&dir),
            2,
            50,
            StopAt::AfterStaging,
        )
        .unwrap_err();
        assert!(staging_dir(&dir, 2).is_dir() && read_shards(&dir, 50).unwrap().is_none());
        finish_interrupted(&dir, 50).unwrap();
        assert!(!staging_dir(&dir, 2).exists());
        assert_eq!(
            offsets(&entries(&dir)),
            vec![("g-a".into(), 1), ("g-a".into(), 5), ("g-b".into(), 2)]
        );
        migrate(&dir, std::slice::from_ref(&dir), 2, 50, StopAt::Never).unwrap();
        assert_two_shards(&dir);

        // Crashed after the switch: the next start completes it.
        let dir = one_owner_dir("switched");
        migrate(&dir, std::slice::from_ref(&dir), 2, 50, StopAt::AfterSwitch).unwrap_err();
        assert!(dir.join(COMMIT_FILE).exists(), "old log still there");
        finish_interrupted(&dir, 50).unwrap();
        assert_two_shards(&dir);

        // Crashed while moving the shards into place (old logs removed, shard-000 moved): the
        // next start moves the rest and removes nothing it should keep.
        let dir = one_owner_dir("moving");
        migrate(&dir, std::slice::from_ref(&dir), 2, 50, StopAt::AfterSwitch).unwrap_err();
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
            StopAt::Never,
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
        migrate(&dir, std::slice::from_ref(&dir), 2, 50, StopAt::Never).unwrap();
        assert_two_shards(&dir);
        let _ = fs::remove_dir_all(&dir);
    }
}
