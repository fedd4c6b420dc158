//! The way out of a refused log, through the binary: start-up names the batch and the commands,
//! `groupcoord log inspect` lists it, `groupcoord log truncate-after` drops it, and the server
//! starts again. Also: `serve --help` says the data plane is in memory.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::temp_dir;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use groupcoord::server::storage::log::{Log, LogEntry, TopicChange};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_groupcoord"))
}

/// `serve` starts on `dir` (it prints its address) and stops cleanly on SIGTERM.
fn serve_starts_and_stops(dir: &std::path::Path) {
    let mut child = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("groupcoord listening on"), "{line}");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_refused_log_names_the_way_out_and_truncate_after_takes_it() {
    let dir = temp_dir("cli-log-tool").join("data");
    let poison_at = {
        let (mut log, _) = Log::open(&dir, u64::MAX, |_| Ok(())).unwrap();
        log.append(&[LogEntry::Topics(vec![TopicChange::Set {
            name: "kept".into(),
            partitions: 3,
        }])])
        .unwrap();
        log.sync().unwrap();
        let at = std::fs::metadata(log.current_segment()).unwrap().len();
        log.append(&[LogEntry::Topics(vec![TopicChange::Set {
            name: "poison".into(),
            partitions: i32::MAX,
        }])])
        .unwrap();
        log.sync().unwrap();
        at
    };
    let out = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("offset {poison_at}")), "{err}");
    assert!(err.contains("groupcoord log inspect --data-dir"), "{err}");
    assert!(
        err.contains("groupcoord log truncate-after OFFSET"),
        "{err}"
    );

    let out = bin()
        .args(["log", "inspect", "--data-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("set poison=2147483647"), "{listing}");

    // Not a batch boundary: refused, nothing changed.
    let out = bin()
        .args([
            "log",
            "truncate-after",
            &(poison_at + 1).to_string(),
            "--data-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));

    let out = bin()
        .args([
            "log",
            "truncate-after",
            &poison_at.to_string(),
            "--data-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    serve_starts_and_stops(&dir);
}

#[test]
fn serve_help_says_the_data_plane_is_in_memory() {
    let out = bin().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("IN MEMORY ONLY"), "{help}");
    assert!(help.contains("groupcoord.max.data.plane.mb"), "{help}");
}

fn group_epoch(group: &str, epoch: i32) -> groupcoord::records::Record {
    groupcoord::records::Record::GroupMetadata {
        group_id: group.into(),
        value: Some(groupcoord::records::GroupMetadataValue {
            epoch,
            metadata_hash: 7,
            ..Default::default()
        }),
    }
}

/// `groupcoord log export --group G`: G's records only, in Kafka's record layout, with the append
/// time of their batch (kind 6); records of an old segment (kind 0, no time) are still read and
/// marked `untimed`, taking the first time known after them.
#[test]
fn log_export_writes_one_groups_records_with_their_append_times() {
    let dir = temp_dir("cli-log-export").join("data");
    std::fs::create_dir_all(&dir).unwrap();
    // An old segment: records written before append times were logged (kind 0).
    let old = groupcoord::server::storage::log::encode_entry(&LogEntry::Records(vec![
        group_epoch("g", 1),
        group_epoch("other", 1),
    ]))
    .unwrap();
    std::fs::write(dir.join(format!("segment-{:020}.log", 0)), &old).unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    {
        let (mut log, _) = Log::open(&dir, u64::MAX, |_| Ok(())).unwrap();
        log.append(&[LogEntry::Topics(vec![TopicChange::Set {
            name: "in".into(),
            partitions: 4,
        }])])
        .unwrap();
        log.append(&[LogEntry::Records(vec![
            group_epoch("g", 2),
            group_epoch("other", 2),
        ])])
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        log.append(&[LogEntry::Records(vec![group_epoch("g", 3)])])
            .unwrap();
        log.sync().unwrap();
    }
    let out = bin()
        .args(["log", "export", "--group", "g", "--data-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(t["format"], "groupcoord-trace");
    assert_eq!(t["version"], 1);
    assert_eq!(t["source"], "server");
    assert_eq!(t["group_id"], "g");
    assert_eq!(t["topics"]["in"], 4);
    assert_eq!(t["untimed_records"], 1);
    let rs = t["records"].as_array().unwrap();
    // Kafka's key layout: record type 17 (int16), then the group id (int16 length, bytes).
    let keys: Vec<&str> = rs.iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["0011000167"; 3], "only group g's records");
    // The value: version 0 (int16), then the epoch (int32).
    let values: Vec<&str> = rs.iter().map(|r| r["value"].as_str().unwrap()).collect();
    assert!(
        values[0].starts_with("000000000001") && values[2].starts_with("000000000003"),
        "{values:?}"
    );
    let at: Vec<i64> = rs.iter().map(|r| r["at_ms"].as_i64().unwrap()).collect();
    assert!(
        at[1] >= before && at[2] >= at[1] + 20,
        "append times {at:?} (from {before})"
    );
    assert_eq!(at[0], at[1], "an untimed record takes the next known time");
    assert_eq!(rs[0]["cause"], "untimed");
    assert_eq!(rs[2]["cause"], "log");

    // A group the log does not hold: an error naming it.
    let out = bin()
        .args(["log", "export", "--group", "nope", "--data-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no records of group \"nope\""));

    // The server still starts on the mixed log (kind 0 and kind 6 batches).
    serve_starts_and_stops(&dir);
}

/// A group with more records than `--max-records`: the older ones are replaced by the compacted
/// state they left, and the trace says how many.
#[test]
fn log_export_caps_a_huge_groups_trace() {
    let dir = temp_dir("cli-log-export-cap").join("data");
    {
        let (mut log, _) = Log::open(&dir, u64::MAX, |_| Ok(())).unwrap();
        for e in 1..=50 {
            log.append(&[LogEntry::Records(vec![group_epoch("g", e)])])
                .unwrap();
        }
        log.sync().unwrap();
    }
    let out = bin()
        .args([
            "log",
            "export",
            "--group",
            "g",
            "--max-records",
            "10",
            "--data-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rs = t["records"].as_array().unwrap();
    assert!(rs.len() <= 10, "{}", rs.len());
    assert_eq!(t["compacted_records"], 45);
    assert_eq!(rs[0]["cause"], "compacted");
    // The compacted state holds epoch 45 (0x2d), the newest record epoch 50 (0x32).
    assert!(
        rs[0]["value"].as_str().unwrap().starts_with("00000000002d"),
        "{}",
        rs[0]
    );
    assert!(
        rs.last().unwrap()["value"]
            .as_str()
            .unwrap()
            .starts_with("000000000032")
    );
}
