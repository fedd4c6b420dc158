//! Recovery never drops acknowledged state quietly (issue 11 items 5 and 6): each corruption
//! kind either loads exactly (a torn tail after the commit mark) or stops the load with the files
//! left as they were; snapshots must be complete; one server per data directory.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::temp_dir;

use std::path::{Path, PathBuf};

use groupcoord::server::storage::log::{LoadError, Log, LogEntry, TopicChange, encode_entry};
use groupcoord::server::{ServeOptions, StartError, start};

fn topic(n: &str, p: i32) -> LogEntry {
    LogEntry::Topics(vec![TopicChange::Set {
        name: n.into(),
        partitions: p,
    }])
}

fn open(dir: &Path) -> Result<(Log, Vec<LogEntry>), LoadError> {
    let mut seen = Vec::new();
    let (log, _) = Log::open(dir, u64::MAX, |e| {
        seen.push(e.clone());
        Ok(())
    })?;
    Ok((log, seen))
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// A log with three acknowledged (appended + synced) batches; returns its segment.
fn acknowledged_log(tag: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(tag);
    let (mut log, _) = open(&dir).unwrap();
    for (i, n) in ["a", "b", "c"].iter().enumerate() {
        log.append(&[topic(n, i as i32 + 1)]).unwrap();
        log.sync().unwrap();
    }
    drop(log);
    let seg = files(&dir, "log").pop().unwrap();
    (dir, seg)
}

fn assert_load_stops_and_leaves(dir: &Path, file: &Path, expect: &str) {
    let before = std::fs::read(file).unwrap();
    let err = open(dir).err().expect("the load must stop");
    let msg = err.to_string();
    assert!(msg.contains(expect), "{msg}");
    assert_eq!(std::fs::read(file).unwrap(), before, "file left untouched");
    // And it stays that way on a second attempt (no crash loop that eats the evidence).
    assert!(open(dir).is_err());
    assert_eq!(std::fs::read(file).unwrap(), before);
}

#[test]
fn a_zeroed_segment_stops_the_load_and_is_not_truncated() {
    let (dir, seg) = acknowledged_log("zeroed");
    let len = std::fs::metadata(&seg).unwrap().len() as usize;
    std::fs::write(&seg, vec![0u8; len]).unwrap();
    assert_load_stops_and_leaves(&dir, &seg, "acknowledged data");
    assert_eq!(std::fs::metadata(&seg).unwrap().len() as usize, len);
}

#[test]
fn a_bit_flip_in_the_last_acknowledged_batch_is_not_a_torn_write() {
    let (dir, seg) = acknowledged_log("flip-last");
    let mut bytes = std::fs::read(&seg).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();
    assert_load_stops_and_leaves(&dir, &seg, "not a torn write");
}

#[test]
fn a_segment_cut_inside_acknowledged_data_stops_the_load() {
    let (dir, seg) = acknowledged_log("cut-acked");
    let bytes = std::fs::read(&seg).unwrap();
    let last = encode_entry(&topic("c", 3)).unwrap().len();
    // Cut exactly at a batch boundary: every remaining batch is valid, one is missing.
    std::fs::write(&seg, &bytes[..bytes.len() - last]).unwrap();
    assert_load_stops_and_leaves(&dir, &seg, "acknowledged data is missing");
}

#[test]
fn a_torn_write_after_the_last_acknowledged_batch_is_truncated() {
    let (dir, seg) = acknowledged_log("torn-after");
    let good = std::fs::read(&seg).unwrap();
    let mut bytes = good.clone();
    let next = encode_entry(&topic("d", 4)).unwrap();
    bytes.extend_from_slice(&next[..next.len() - 3]);
    std::fs::write(&seg, &bytes).unwrap();
    let (_log, seen) = open(&dir).unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(std::fs::read(&seg).unwrap(), good);
}

/// A log with a snapshot holding several batches; returns (dir, snapshot file).
fn snapshotted_log(tag: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(tag);
    let (mut log, _) = open(&dir).unwrap();
    for i in 0..5 {
        log.append(&[topic(&format!("t{i}"), i + 1)]).unwrap();
        log.sync().unwrap();
    }
    log.snapshot().unwrap();
    drop(log);
    let snap = files(&dir, "snap").pop().unwrap();
    (dir, snap)
}

#[test]
fn a_complete_snapshot_loads() {
    let (dir, _) = snapshotted_log("snap-ok");
    let (_log, seen) = open(&dir).unwrap();
    let names: usize = seen
        .iter()
        .map(|e| match e {
            LogEntry::Topics(t) => t.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(names, 5);
}

#[test]
fn a_snapshot_cut_at_a_batch_boundary_is_never_loaded_as_complete() {
    let (dir, snap) = snapshotted_log("snap-cut");
    let bytes = std::fs::read(&snap).unwrap();
    // The first batch alone: a valid batch, nothing after it.
    let first = 12 + u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
    assert!(first < bytes.len());
    std::fs::write(&snap, &bytes[..first]).unwrap();
    assert_load_stops_and_leaves(&dir, &snap, "incomplete");
}

#[test]
fn an_empty_snapshot_is_never_loaded_as_complete() {
    let (dir, snap) = snapshotted_log("snap-empty");
    std::fs::write(&snap, b"").unwrap();
    assert_load_stops_and_leaves(&dir, &snap, "incomplete");
}

#[test]
fn a_bit_flip_anywhere_in_a_snapshot_stops_the_load() {
    let (dir, snap) = snapshotted_log("snap-flip");
    let mut bytes = std::fs::read(&snap).unwrap();
    bytes[20] ^= 0x10;
    std::fs::write(&snap, &bytes).unwrap();
    assert_load_stops_and_leaves(&dir, &snap, "snapshot");
}

#[test]
fn a_second_log_on_the_same_directory_is_refused_naming_the_holder() {
    let dir = temp_dir("lock");
    let (log, _) = open(&dir).unwrap();
    let err = open(&dir).err().expect("second open refused");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("pid {}", std::process::id())),
        "{msg}"
    );
    drop(log);
    // Released with its holder; a stale pid left in the file does not matter.
    std::fs::write(dir.join("LOCK"), "999999999\n").unwrap();
    let (_log, _) = open(&dir).unwrap();
}

#[tokio::test]
async fn a_second_server_on_the_same_data_dir_does_not_start() {
    let dir = temp_dir("lock-srv");
    let mut o = ServeOptions::new("127.0.0.1:0".parse().unwrap(), dir.clone());
    o.owners = common::test_owners();
    let first = start(o.clone()).await.unwrap();
    match start(o.clone()).await {
        Err(StartError::Load(LoadError::Locked(e))) => {
            assert!(e.to_string().contains("in use"), "{e}")
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("second server started on the same data dir"),
    }
    first.shutdown().await;
    let again = start(o).await.expect("starts once the first stopped");
    again.shutdown().await;
}

#[test]
fn a_snapshot_of_an_older_version_loads_once_without_a_commit_mark_and_is_sealed() {
    let (dir, snap) = snapshotted_log("snap-legacy");
    // What an older groupcoord wrote: the same batches without the trailer, and no COMMIT.
    let bytes = std::fs::read(&snap).unwrap();
    let trailer = 12 + 1 + 12;
    std::fs::write(&snap, &bytes[..bytes.len() - trailer]).unwrap();
    std::fs::remove_file(dir.join("COMMIT")).unwrap();
    let (log, seen) = open(&dir).unwrap();
    assert_eq!(seen.len(), 1, "one batch of five topics");
    drop(log);
    assert_eq!(
        std::fs::read(&snap).unwrap(),
        bytes,
        "sealed with the trailer"
    );
    // From now on the directory has a commit mark, and the snapshot is complete.
    let (_log, seen) = open(&dir).unwrap();
    assert_eq!(seen.len(), 1);
}

fn offset(group: usize, partition: i32, value: Option<i64>) -> groupcoord::records::Record {
    groupcoord::records::Record::OffsetCommit {
        group_id: format!("g{group}"),
        topic: "t".into(),
        partition,
        value: value.map(|offset| groupcoord::records::OffsetCommitValue {
            offset,
            leader_epoch: -1,
            metadata: String::new(),
            commit_timestamp: 0,
        }),
    }
}

/// Every record of `entries`, compacted: the state a replay rebuilds, whatever the files.
fn compacted(entries: &[LogEntry]) -> Vec<groupcoord::records::Record> {
    let records: Vec<groupcoord::records::Record> = entries
        .iter()
        .flat_map(|e| match e {
            LogEntry::Records(rs) => rs.clone(),
            _ => vec![],
        })
        .collect();
    let mut c = groupcoord::records::compact(&records);
    c.sort_by_key(|r| format!("{r:?}"));
    c
}

fn copy_dir(from: &Path, tag: &str) -> PathBuf {
    let to = temp_dir(tag);
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
    to
}

/// Snapshots are written off the commit path (issue 17): the segment is rolled, appends go on
/// into the new segment while the older files are compacted. A crash at any point of that write
/// (before it starts, with a half-written temporary file, after the rename but before the old
/// files are removed, after) loses nothing acknowledged, and the load afterwards holds exactly
/// the acknowledged state.
#[test]
fn a_crash_during_a_background_snapshot_loses_nothing_acknowledged() {
    let dir = temp_dir("snap-crash");
    let (mut log, _) = open(&dir).unwrap();
    let mut acked = Vec::new();
    let mut append = |log: &mut Log, e: LogEntry| {
        log.append(std::slice::from_ref(&e)).unwrap();
        log.sync().unwrap();
        acked.push(e);
    };
    append(&mut log, topic("t", 4));
    for round in 0..3 {
        for g in 0..20 {
            let rs = (0..4)
                .map(|p| offset(g, p, Some(round * 100 + p as i64)))
                .collect();
            append(&mut log, LogEntry::Records(rs));
        }
        // Some keys are deleted along the way.
        append(
            &mut log,
            LogEntry::Records(vec![offset(round as usize, 0, None)]),
        );
    }
    // A first snapshot, so the job compacts a snapshot and segments together.
    log.snapshot().unwrap();
    for g in 0..20 {
        append(
            &mut log,
            LogEntry::Records(vec![offset(g, 1, Some(1000 + g as i64))]),
        );
    }
    let job = log.roll_for_snapshot().unwrap();
    // Acknowledged while the snapshot is being written: they land in the new segment.
    append(
        &mut log,
        LogEntry::Records(vec![offset(3, 3, Some(7777)), offset(4, 2, None)]),
    );
    append(&mut log, topic("u", 2));
    let before_run = copy_dir(&dir, "snap-crash-before");
    let (path, _) = job.run().unwrap();
    let after_run = copy_dir(&dir, "snap-crash-after");
    drop(log);

    // Crash with a half-written temporary file.
    let torn = copy_dir(&before_run, "snap-crash-torn");
    let full = std::fs::read(&path).unwrap();
    std::fs::write(
        torn.join(format!(
            "{}.tmp",
            path.file_name().unwrap().to_string_lossy()
        )),
        &full[..full.len() / 2],
    )
    .unwrap();
    // Crash after the rename, before the covered files were removed.
    let renamed = copy_dir(&before_run, "snap-crash-renamed");
    std::fs::copy(&path, renamed.join(path.file_name().unwrap())).unwrap();

    let want = compacted(&acked);
    assert!(want.len() > 70, "{}", want.len());
    for (name, d) in [
        ("before the write", &before_run),
        ("half-written", &torn),
        ("renamed, old files kept", &renamed),
        ("complete", &after_run),
        ("the directory itself", &dir),
    ] {
        let (_log, seen) = open(d).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(compacted(&seen), want, "{name}");
        let topics: Vec<&LogEntry> = seen
            .iter()
            .filter(|e| matches!(e, LogEntry::Topics(_)))
            .collect();
        assert!(
            topics.iter().any(|e| format!("{e:?}").contains("\"u\"")),
            "{name}: topic u acknowledged during the write"
        );
    }
    assert!(
        files(&after_run, "snap").len() == 1 && files(&after_run, "log").len() == 1,
        "the covered files are removed: {:?}",
        std::fs::read_dir(&after_run).unwrap().count()
    );
}
