//! The durable log: torn tails are truncated, corruption in the middle stops the load, snapshots
//! compact and replay to the same coordinator state.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::temp_dir;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use groupcoord::config::CoordinatorConfig;
use groupcoord::coordinator::{Coordinator, RequestContext};
use groupcoord::protocol::{StreamsGroupHeartbeatRequest, Subtopology, TaskIds, Topology};
use groupcoord::server::storage::log::{LoadError, Log, LogEntry, TopicChange};
use groupcoord::topology::MetadataImage;
use groupcoord::types::Millis;

fn topic(n: &str, p: i32) -> LogEntry {
    LogEntry::Topics(vec![TopicChange::Set {
        name: n.into(),
        partitions: p,
    }])
}

fn open_collect(
    dir: &Path,
) -> Result<
    (
        Log,
        Vec<LogEntry>,
        groupcoord::server::storage::log::LoadReport,
    ),
    LoadError,
> {
    let mut seen = Vec::new();
    let (log, report) = Log::open(dir, u64::MAX, |e| {
        seen.push(e.clone());
        Ok(())
    })?;
    Ok((log, seen, report))
}

fn segment(dir: &Path) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    v.sort();
    v.pop().unwrap()
}

#[test]
fn torn_tail_is_truncated_and_reported() {
    let dir = temp_dir("torn");
    {
        let (mut log, seen, _) = open_collect(&dir).unwrap();
        assert!(seen.is_empty());
        log.append(&[topic("a", 1), topic("b", 2), topic("c", 3)])
            .unwrap();
        log.sync().unwrap();
    }
    let seg = segment(&dir);
    let good_len = std::fs::metadata(&seg).unwrap().len();
    // Half of a fourth batch.
    let full = groupcoord::server::storage::log::encode_entry(&topic("d", 4)).unwrap();
    OpenOptions::new()
        .append(true)
        .open(&seg)
        .unwrap()
        .write_all(&full[..full.len() / 2])
        .unwrap();
    let (mut log, seen, report) = open_collect(&dir).unwrap();
    assert_eq!(seen.len(), 3);
    let (path, offset, dropped, _) = report.truncated.expect("reported");
    assert_eq!(path, seg);
    assert_eq!(offset, good_len);
    assert_eq!(dropped, (full.len() / 2) as u64);
    assert_eq!(std::fs::metadata(&seg).unwrap().len(), good_len);
    // Appending continues cleanly after the truncation.
    log.append(&[topic("e", 5)]).unwrap();
    log.sync().unwrap();
    drop(log);
    // A tail of zeroes (preallocated blocks after a crash) is a torn tail too.
    OpenOptions::new()
        .append(true)
        .open(&seg)
        .unwrap()
        .write_all(&[0u8; 100])
        .unwrap();
    let (_log, seen, report) = open_collect(&dir).unwrap();
    assert_eq!(seen.len(), 4);
    assert!(report.truncated.is_some());
}

#[test]
fn corruption_in_the_middle_stops_the_load() {
    let dir = temp_dir("mid");
    {
        let (mut log, _, _) = open_collect(&dir).unwrap();
        log.append(&[topic("a", 1), topic("b", 2), topic("c", 3)])
            .unwrap();
        log.sync().unwrap();
    }
    let seg = segment(&dir);
    let first = groupcoord::server::storage::log::encode_entry(&topic("a", 1))
        .unwrap()
        .len();
    let mut bytes = std::fs::read(&seg).unwrap();
    // Flip a payload byte of the second batch.
    bytes[first + 14] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    let err = open_collect(&dir).err().expect("load must fail");
    let msg = err.to_string();
    assert!(msg.contains(&seg.display().to_string()), "{msg}");
    assert!(msg.contains(&format!("offset {first}")), "{msg}");
    // The file is left untouched.
    assert_eq!(std::fs::read(&seg).unwrap(), bytes);
    // A corrupt length field in the middle is found too (a valid batch follows).
    let mut bytes2 = bytes.clone();
    bytes2[first + 14] ^= 0xff; // repair
    bytes2[first + 5] = 0x7f; // huge length
    std::fs::write(&seg, &bytes2).unwrap();
    assert!(matches!(open_collect(&dir), Err(LoadError::Corrupt { .. })));
}

fn hb(
    group: &str,
    member: &str,
    epoch: i32,
    active: Option<Vec<TaskIds>>,
) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: member.into(),
        member_epoch: epoch,
        rebalance_timeout_ms: if epoch == 0 { 30_000 } else { -1 },
        topology: (epoch == 0).then(|| Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                subtopology_id: "0".into(),
                source_topics: vec!["input".into()],
                ..Default::default()
            }],
            ..Default::default()
        }),
        process_id: (epoch == 0).then(|| format!("p-{member}")),
        active_tasks: active.clone().or(Some(vec![])),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(vec![]),
        ..Default::default()
    }
}

#[test]
fn snapshot_compacts_and_replays_to_the_same_state() {
    let dir = temp_dir("snap");
    let config = CoordinatorConfig {
        initial_rebalance_delay_ms: 0,
        assignment_interval_ms: 0,
        ..Default::default()
    };
    let mut coord = Coordinator::new(config.clone());
    let mut topics = std::collections::BTreeMap::new();
    topics.insert("input".to_string(), 8);
    coord.set_metadata(MetadataImage {
        topics: topics.clone(),
    });
    let (mut log, _) = Log::open(&dir, 4096, |_| Ok(())).unwrap();
    log.append(&[topic("input", 8)]).unwrap();
    let ctx = RequestContext {
        client_id: "c".into(),
        client_host: "/127.0.0.1".into(),
        api_version: 1,
    };
    let mut epochs = std::collections::BTreeMap::new();
    let mut owned: std::collections::BTreeMap<String, Vec<TaskIds>> = Default::default();
    let mut now = 1_000_000i64;
    let mut snapshots = 0;
    for round in 0..30 {
        for m in 0..6 {
            let member = format!("m{m}");
            // Members 4 and 5 leave and rejoin to produce tombstones.
            let e = *epochs.get(&member).unwrap_or(&0);
            let req = if round % 10 == 9 && m >= 4 {
                let mut r = hb("g", &member, -1, None);
                r.topology = None;
                r
            } else {
                hb("g", &member, e, owned.get(&member).cloned())
            };
            let o = coord.streams_group_heartbeat(Millis(now), &ctx, &req);
            let r = &o.response;
            if r.error_code == 0 && req.member_epoch >= 0 {
                epochs.insert(member.clone(), r.member_epoch);
                if let Some(a) = &r.active_tasks {
                    owned.insert(member.clone(), a.clone());
                }
            } else {
                epochs.insert(member.clone(), 0);
                owned.remove(&member);
            }
            if !o.records.is_empty() {
                log.append(&[LogEntry::Records(o.records)]).unwrap();
            }
            log.sync().unwrap();
            if log.needs_snapshot() {
                log.snapshot().unwrap();
                snapshots += 1;
            }
            now += 10;
        }
    }
    assert!(snapshots >= 1, "threshold reached");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(
        files.iter().filter(|f| f.ends_with(".snap")).count(),
        1,
        "{files:?}"
    );
    assert_eq!(
        files.iter().filter(|f| f.ends_with(".log")).count(),
        1,
        "{files:?}"
    );
    drop(log);
    let expected = coord.state_hash();
    let mut fresh = Coordinator::new(config);
    let mut reg = std::collections::BTreeMap::new();
    let (_log, report) = Log::open(&dir, 4096, |e| {
        match e {
            LogEntry::Records(rs) => {
                for r in rs {
                    fresh.replay(r).map_err(|x| x.to_string())?;
                }
            }
            LogEntry::Topics(ts) => {
                for t in ts {
                    if let TopicChange::Set { name, partitions } = t {
                        reg.insert(name.clone(), *partitions);
                    }
                }
            }
            LogEntry::Acls(_) | LogEntry::GroupConfigs(_) | LogEntry::Scram(_) => {}
        }
        Ok(())
    })
    .unwrap();
    assert!(report.snapshot.is_some());
    assert_eq!(reg, topics);
    assert_eq!(fresh.group_ids(), vec!["g".to_string()]);
    assert_eq!(fresh.state_hash(), expected);
}
