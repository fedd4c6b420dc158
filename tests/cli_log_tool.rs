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

    let mut child = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
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
fn serve_help_says_the_data_plane_is_in_memory() {
    let out = bin().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("IN MEMORY ONLY"), "{help}");
    assert!(help.contains("groupcoord.max.data.plane.mb"), "{help}");
}
