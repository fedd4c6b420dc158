//! The binary: configuration errors exit 2 naming the key; SIGTERM flushes and exits 0; a
//! corrupt log stops start-up naming the file.
#![cfg(all(unix, not(target_arch = "wasm32")))]

mod common;
use common::temp_dir;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_groupcoord"))
}

/// Runs `groupcoord bench load ARGS` (split at spaces) to success; its stdout, its stderr, and the
/// table rows whose first cell starts with one of `rows` (cells trimmed).
fn bench_load(args: &str, rows: &[&str]) -> (String, String, Vec<Vec<String>>) {
    let out = bin()
        .args(["bench", "load"])
        .args(args.split_whitespace())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let table = stdout
        .lines()
        .filter(|l| rows.iter().any(|r| l.starts_with(&format!("| {r}"))))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    (stdout, stderr, table)
}

#[test]
fn config_errors_exit_2_naming_the_key() {
    let dir = temp_dir("cli");
    let out = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .args(["--set", "group.streams.heartbeat.interval.ms=0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("group.streams.heartbeat.interval.ms"));
    let props = dir.join("server.properties");
    std::fs::write(
        &props,
        "# broker\ngroup.streams.num.standby.replicas: 1\nnot.a.key = 1\n",
    )
    .unwrap();
    let out = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config")
        .arg(&props)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not.a.key"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sigterm_exits_0_and_corrupt_log_stops_start() {
    let dir = temp_dir("cli-term");
    let props = dir.join("server.properties");
    std::fs::write(
        &props,
        "group.streams.num.standby.replicas=1\ngroup.my.app.streams.num.standby.replicas=0\n",
    )
    .unwrap();
    let mut child = bin()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--topic",
            "a:3",
            "--data-dir",
        ])
        .arg(dir.join("data"))
        .arg("--config")
        .arg(&props)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("groupcoord listening on 127.0.0.1:"),
        "{line}"
    );
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "graceful shutdown exits 0");
    // Corrupt the middle of the log: a second valid batch follows a damaged one.
    let seg = std::fs::read_dir(dir.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let copy = bytes.clone();
    bytes.extend_from_slice(&copy); // two identical valid batches
    bytes[14] ^= 0x55; // damage the first one's payload
    std::fs::write(&seg, &bytes).unwrap();
    let out = bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("corrupt log")
            && err.contains(&seg.display().to_string())
            && err.contains("offset 0"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `bench load` end to end on a tiny load: both loads run for every round and both modes, heartbeats reach
/// the coordinator without errors (members join, get tasks and leave), and the ratio is printed.
#[test]
fn bench_load_alternates_rounds_and_reports_a_ratio() {
    let (stdout, stderr, rows) = bench_load(
        "--members 40 --groups 2 --duration 1 --warmup 1 --rounds 2",
        &["StreamsGroupHeartbeat", "ApiVersions"],
    );
    // Two rounds of both modes (one connection per member, 20 members per connection).
    assert_eq!(rows.len(), 8, "{stdout}");
    for (i, r) in rows.iter().enumerate() {
        // | name | round | connections | in flight | requests/s | p50 | p99 | errors |
        //   server CPU µs | generator CPU µs |
        assert_eq!(r[2], (i / 4 + 1).to_string(), "{stdout}");
        assert_eq!(r[3], if i % 4 < 2 { "40" } else { "2" }, "{stdout}");
        assert!(r[5].parse::<f64>().unwrap() > 0.0, "no requests: {stdout}");
        assert_eq!(r[8], "0", "errors: {stdout}");
        // The in-process server's CPU time is measured (its threads' schedstat, where the
        // kernel keeps it).
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            assert!(r[9].parse::<f64>().unwrap() > 0.0, "server CPU: {stdout}");
        }
        assert!(r[10].parse::<f64>().is_ok(), "generator CPU: {stdout}");
    }
    // Every load prints its responses per second (the stall detector), warm-up included.
    assert_eq!(
        stderr.matches("responses per second").count(),
        8,
        "{stderr}"
    );
    if std::path::Path::new("/proc/thread-self/schedstat").exists() {
        assert!(stdout.contains("median server CPU per request"), "{stdout}");
    }
    assert!(stdout.contains("per-round ratios"), "{stdout}");
    assert!(
        stdout.contains("heartbeat / baseline throughput ratio: "),
        "{stdout}"
    );
}

/// `--compare-ceiling`: the canned responder is measured by the same generator in every round,
/// answers every heartbeat (the generator checks each correlation id and decodes the answers) and
/// its ratios are printed.
#[test]
fn bench_load_measures_the_ceiling_in_every_round() {
    let (stdout, _, ceiling) = bench_load(
        "--members 20 --groups 2 --duration 1 --warmup 1 --rounds 2 --connections 20 --compare-ceiling",
        &["StreamsGroupHeartbeat, ceiling"],
    );
    assert_eq!(ceiling.len(), 2, "{stdout}");
    for (i, r) in ceiling.iter().enumerate() {
        assert_eq!(r[2], (i + 1).to_string(), "{stdout}");
        assert!(r[5].parse::<f64>().unwrap() > 0.0, "no requests: {stdout}");
        assert_eq!(r[8], "0", "errors: {stdout}");
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            assert!(r[9].parse::<f64>().unwrap() > 0.0, "ceiling CPU: {stdout}");
        }
    }
    assert!(stdout.contains("groupcoord / ceiling "), "{stdout}");
}

#[test]
fn bench_load_rejects_zero_rounds_naming_the_option() {
    let out = bin()
        .args(["bench", "load", "--rounds", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rounds"));
}
