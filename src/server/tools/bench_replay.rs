//! `groupcoord bench replay`: restart time. Builds a log of a realistic mix of records (offset
//! commits, streams members joining and leaving) in a temporary directory, then starts
//! `groupcoord serve` on it (a child process) several times and measures the time from the start
//! to the first answered request that needs the replayed state (a StreamsGroupDescribe, answered
//! by the owner), and the child's peak RSS (`VmHWM`). The phases come from the child's own log
//! lines: the replay (reading and decoding on one thread, applying on another; how long the
//! applying thread waited for the reader), and the timers re-armed after it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::protocol::StreamsGroupDescribeRequest;
use crate::records::{
    CurrentMemberAssignmentValue, GroupMetadataValue, MemberMetadataValue, MemberState,
    OffsetCommitValue, Record, TargetAssignmentMetadataValue,
};
use crate::server::shards;
use crate::server::storage::layout;
use crate::server::storage::log::{Log, LogEntry, TopicChange};
use crate::types::TasksTuple;

use super::client::Client;

/// Arguments of `groupcoord bench replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// Records in the log.
    #[arg(long, default_value_t = 1_000_000)]
    pub records: usize,
    /// Streams groups the records are spread over (default: one per 100 records).
    #[arg(long)]
    pub groups: Option<usize>,
    /// Start-ups measured.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: u32,
    /// Also measure this groupcoord binary on the same log, alternating with this one (e.g. a
    /// build of an older commit).
    #[arg(long)]
    pub compare_bin: Option<PathBuf>,
    /// Keep the log in this directory (default: a temporary one, removed at the end).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Owner counts to measure (`--owners 1,2`): the same records are written once per count,
    /// in that count's layout (sharded by coordinator partition), and the start-ups alternate.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub owners: Vec<usize>,
    /// Measure owner-count migrations (`serve --migrate-owners`) instead: between every two
    /// counts of `--owners` (`--owners 1,2`: 1 -> 2 and 2 -> 1), each on a fresh copy of the
    /// source log, a sequential migration (`--migrate-threads 1`) and a parallel one (one
    /// thread per core) alternating with a plain start of the target count.
    #[arg(long)]
    pub migrate: bool,
}

const PARTITIONS: i32 = 50;
/// Kafka's default `offsets.topic.num.partitions`.
const OFFSETS_PARTITIONS: u32 = 50;
const TOPIC: &str = "replay-input";

/// A small deterministic generator (xorshift), so every run writes the same log.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Per group: its epoch and members (ids by number).
#[derive(Default, Clone)]
struct Group {
    epoch: i32,
    members: Vec<u32>,
    next_member: u32,
    offset: i64,
}

fn member_id(g: usize, m: u32) -> String {
    // 26 characters like the ids Kafka hands out.
    format!("{:0>26}", format!("m{g}x{m}"))
}

/// The records of one join (as Kafka writes them: epoch bump, member, target, current).
fn join(gid: &str, mid: String, epoch: i32, now: i64) -> Vec<Record> {
    vec![
        Record::GroupMetadata {
            group_id: gid.into(),
            value: Some(GroupMetadataValue {
                epoch,
                ..Default::default()
            }),
        },
        Record::MemberMetadata {
            group_id: gid.into(),
            member_id: mid.clone(),
            value: Some(MemberMetadataValue {
                instance_id: None,
                rack_id: None,
                client_id: format!("{mid}-client"),
                client_host: "/10.0.0.7".into(),
                rebalance_timeout_ms: 300_000,
                topology_epoch: 0,
                process_id: format!("process-{mid}"),
                user_endpoint: None,
                client_tags: Default::default(),
            }),
        },
        Record::TargetAssignmentMember {
            group_id: gid.into(),
            member_id: mid.clone(),
            value: Some(TasksTuple::default()),
        },
        Record::TargetAssignmentMetadata {
            group_id: gid.into(),
            value: Some(TargetAssignmentMetadataValue {
                assignment_epoch: epoch,
                assignment_timestamp: now,
            }),
        },
        Record::CurrentMemberAssignment {
            group_id: gid.into(),
            member_id: mid,
            value: Some(CurrentMemberAssignmentValue {
                member_epoch: epoch,
                previous_member_epoch: epoch - 1,
                state: MemberState::Stable,
                assigned: Default::default(),
                pending_revocation: Default::default(),
            }),
        },
    ]
}

/// The records of one leave: current assignment, target and member removed, epoch bumped.
fn leave(gid: &str, mid: String, epoch: i32, now: i64) -> Vec<Record> {
    vec![
        Record::CurrentMemberAssignment {
            group_id: gid.into(),
            member_id: mid.clone(),
            value: None,
        },
        Record::TargetAssignmentMember {
            group_id: gid.into(),
            member_id: mid.clone(),
            value: None,
        },
        Record::MemberMetadata {
            group_id: gid.into(),
            member_id: mid,
            value: None,
        },
        Record::GroupMetadata {
            group_id: gid.into(),
            value: Some(GroupMetadataValue {
                epoch,
                ..Default::default()
            }),
        },
        Record::TargetAssignmentMetadata {
            group_id: gid.into(),
            value: Some(TargetAssignmentMetadataValue {
                assignment_epoch: epoch,
                assignment_timestamp: now,
            }),
        },
    ]
}

/// What the generated log holds.
struct Built {
    /// A streams group that has members at the end: the one the start-up describes.
    probe: String,
    records: usize,
    offset_commits: usize,
    churn: usize,
    bytes: u64,
    /// Records per owner if two owners split the groups by coordinator partition (Kafka's
    /// placement over 50 partitions): how evenly a sharded load would divide this log.
    per_owner: [usize; 2],
}

/// Write the log: 85% of the records are offset commits (10 partitions of one group at a time,
/// so keys are overwritten as a running application does), 15% members joining and leaving
/// (3 to 8 members per group).
fn build(dir: &Path, records: usize, groups: usize, owners: usize) -> Result<Built, String> {
    let dirs = layout::prepare(
        dir,
        owners,
        OFFSETS_PARTITIONS,
        false,
        crate::server::storage::migrate::Migration::default(),
    )?;
    let mut logs = Vec::with_capacity(dirs.len());
    for d in &dirs {
        let (log, _) = Log::open(d, u64::MAX, |_| Ok(())).map_err(|e| e.to_string())?;
        logs.push(log);
    }
    // The registry (topics) is owner 0's.
    logs[0]
        .append(&[LogEntry::Topics(vec![TopicChange::Set {
            name: TOPIC.into(),
            partitions: PARTITIONS,
        }])])
        .map_err(|e| e.to_string())?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut state = vec![Group::default(); groups];
    let now = 1_764_000_000_000i64;
    let (mut written, mut offset_commits, mut churn) = (0, 0, 0);
    let mut batches: Vec<Vec<Record>> = vec![Vec::new(); logs.len()];
    let mut per_owner = [0usize; 2];
    while written < records {
        let g = rng.below(groups);
        let gid = format!("replay-group-{g}");
        let s = &mut state[g];
        let rs = if rng.below(100) < 85 {
            let first = rng.below(PARTITIONS as usize) as i32;
            s.offset += 100;
            let rs: Vec<Record> = (0..10)
                .map(|i| Record::OffsetCommit {
                    group_id: gid.clone(),
                    topic: TOPIC.into(),
                    partition: (first + i) % PARTITIONS,
                    value: Some(OffsetCommitValue {
                        offset: s.offset + i as i64,
                        leader_epoch: 0,
                        metadata: String::new(),
                        commit_timestamp: now,
                    }),
                })
                .collect();
            offset_commits += rs.len();
            rs
        } else {
            s.epoch += 1;
            let grow = s.members.len() < 3 || (s.members.len() < 8 && rng.below(2) == 0);
            let rs = if grow {
                s.next_member += 1;
                s.members.push(s.next_member);
                join(&gid, member_id(g, s.next_member), s.epoch, now)
            } else {
                let m = s.members.remove(rng.below(s.members.len()));
                leave(&gid, member_id(g, m), s.epoch, now)
            };
            churn += rs.len();
            rs
        };
        written += rs.len();
        let partition = shards::coordinator_partition(&gid, OFFSETS_PARTITIONS);
        per_owner[shards::owner_of_partition(partition, 2)] += rs.len();
        let owner = shards::owner_of_partition(partition, logs.len());
        let batch = &mut batches[owner];
        batch.extend(rs);
        if batch.len() >= 200 {
            logs[owner]
                .append(&[LogEntry::Records(std::mem::take(batch))])
                .map_err(|e| e.to_string())?;
        }
    }
    let mut bytes = 0;
    for (log, batch) in logs.iter_mut().zip(batches) {
        if !batch.is_empty() {
            log.append(&[LogEntry::Records(batch)])
                .map_err(|e| e.to_string())?;
        }
        log.sync().map_err(|e| e.to_string())?;
        bytes += log.total_bytes();
    }
    let probe = state
        .iter()
        .position(|g| !g.members.is_empty())
        .ok_or("no group has members")?;
    Ok(Built {
        probe: format!("replay-group-{probe}"),
        records: written,
        offset_commits,
        churn,
        bytes,
        per_owner,
    })
}

/// The phases of a start-up as the child logs them (ms); `None` when its log has no such line
/// (a `--compare-bin` from before they were logged).
#[derive(Debug, Clone, Copy, Default)]
struct Phases {
    /// Open and replay the log (with several owners: the slowest shard's).
    replay: Option<f64>,
    /// Of that, the applying thread waiting for decoded batches.
    waited: Option<f64>,
    /// Timers re-armed and offset floors set.
    rearm: Option<f64>,
    /// An owner-count migration, whole (staging, switch, clean-up).
    migrate: Option<f64>,
    /// Of it, reading the old shards (and writing the staged segments).
    migrate_read: Option<f64>,
}

impl Phases {
    /// From the child's stderr (tracing's format, possibly with colours).
    fn parse(stderr: &str) -> Phases {
        let mut p = Phases::default();
        for line in stderr.lines() {
            let line = strip_ansi(line);
            let field = |name: &str| -> Option<f64> {
                let at = line.find(&format!(" {name}="))? + name.len() + 2;
                let digits: String = line[at..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            };
            let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            if line.contains("log replayed") {
                p.replay = max(p.replay, field("ms"));
                p.waited = max(p.waited, field("waited_for_reader_ms"));
            } else if line.contains("timers re-armed") {
                p.rearm = max(p.rearm, field("ms"));
            } else if line.contains("owner count migrated") {
                p.migrate = field("ms");
                p.migrate_read = field("read_ms");
            }
        }
        p
    }
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, ended by a letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn show(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}"))
}

/// One start-up: ms to the first answered describe, peak RSS in bytes, the phases.
async fn start_once(
    bin: &Path,
    dir: &Path,
    probe: &str,
    owners: usize,
    extra: &[&str],
) -> Result<(f64, u64, Phases), String> {
    let t0 = Instant::now();
    let mut cmd = Command::new(bin);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .args(["--snapshot-bytes", &u64::MAX.to_string()]);
    if owners > 1 || !extra.is_empty() {
        // Only then: a --compare-bin from before sharding still runs one owner.
        cmd.args(["--owners", &owners.to_string()]);
    }
    cmd.args(extra);
    let mut child = cmd
        .env("RUST_LOG", "warn,groupcoord::server::storage=info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", bin.display()))?;
    // Drained as it comes (a full pipe would stop the child); read to its end once it is killed.
    let stderr = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
            s
        })
    });
    let result = async {
        let out = child.stdout.take().ok_or("no stdout")?;
        let line = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(out).read_line(&mut line).map(|_| line)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        let addr = line
            .trim()
            .strip_prefix("groupcoord listening on ")
            .ok_or_else(|| format!("unexpected start line {line:?}"))?
            .parse()
            .map_err(|e| format!("{e}"))?;
        let mut c = Client::connect(addr).await?;
        let d = c
            .describe(
                0,
                &StreamsGroupDescribeRequest {
                    group_ids: vec![probe.to_string()],
                    ..Default::default()
                },
            )
            .await?;
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        if d.groups.first().is_none_or(|g| g.error_code != 0) {
            return Err(format!("{probe} not replayed: {d:?}"));
        }
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
            .map_err(|e| e.to_string())?;
        let hwm_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .ok_or("no VmHWM")?;
        Ok::<_, String>((ms, hwm_kb * 1024))
    }
    .await;
    // Our own child: nothing it holds needs a clean stop (it wrote nothing).
    let _ = child.kill();
    let _ = child.wait();
    let phases = stderr
        .and_then(|t| t.join().ok())
        .map(|s| Phases::parse(&s))
        .unwrap_or_default();
    result.map(|(ms, rss)| (ms, rss, phases))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs `groupcoord bench replay` and prints the report.
pub async fn run(a: ReplayArgs) -> ExitCode {
    let (dir, temporary) = match &a.dir {
        Some(d) => (d.clone(), false),
        None => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let d = std::env::temp_dir().join(format!(
                "groupcoord-bench-replay-{}-{nanos}",
                std::process::id()
            ));
            (d, true)
        }
    };
    let code = match run_in(&a, &dir).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench replay: {e}");
            ExitCode::from(1)
        }
    };
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    code
}

async fn run_in(a: &ReplayArgs, dir: &Path) -> Result<(), String> {
    let groups = a.groups.unwrap_or(a.records / 100).max(1);
    let mut owner_counts = a.owners.clone();
    owner_counts.dedup();
    if owner_counts
        .iter()
        .any(|&n| n == 0 || n > OFFSETS_PARTITIONS as usize)
    {
        return Err(format!(
            "--owners: each count must be 1 to {OFFSETS_PARTITIONS}"
        ));
    }
    // One log per owner count, the same records in each.
    let mut built = Vec::new();
    for &n in &owner_counts {
        let at = dir.join(format!("owners-{n}"));
        let t = Instant::now();
        let b = build(&at, a.records, groups, n)?;
        println!(
            "groupcoord bench replay: {} records ({} offset commits, {} member churn) in \
             {groups} groups, log {:.1} MB over {n} owner{}, written in {:.1} s at {}",
            b.records,
            b.offset_commits,
            b.churn,
            b.bytes as f64 / 1e6,
            if n == 1 { "" } else { "s" },
            t.elapsed().as_secs_f64(),
            at.display()
        );
        built.push((n, at, b));
    }
    let per_owner = built[0].2.per_owner;
    println!(
        "placement (abs(Java hashCode(group id)) % 50 partitions, partitions dealt over 2 \
         owners): {} / {} records",
        per_owner[0], per_owner[1]
    );
    if a.migrate {
        return migrations(a, dir, &built).await;
    }
    let this = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut bins = vec![("this build", this)];
    if let Some(b) = &a.compare_bin {
        bins.push(("--compare-bin", b.clone()));
    }
    // Every (binary, owner count), alternating within each round.
    let mut configs = Vec::new();
    for (name, bin) in &bins {
        for (k, (n, _, _)) in built.iter().enumerate() {
            configs.push((
                format!("{name}, {n} owner{}", if *n == 1 { "" } else { "s" }),
                bin,
                k,
            ));
        }
    }
    println!();
    println!(
        "| round | binary, owners | start to first answer ms | replay ms | of it waiting for the \
         reader ms | timers re-armed ms | peak RSS MB | peak RSS / log |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut results: Vec<Vec<(f64, u64, Phases)>> = vec![Vec::new(); configs.len()];
    for round in 1..=a.rounds {
        for (i, (name, bin, k)) in configs.iter().enumerate() {
            let (n, at, b) = &built[*k];
            let (ms, rss, p) = start_once(bin, at, &b.probe, *n, &[]).await?;
            println!(
                "| {round} | {name} | {ms:.0} | {} | {} | {} | {:.1} | {:.2} |",
                show(p.replay),
                show(p.waited),
                show(p.rearm),
                rss as f64 / 1e6,
                rss as f64 / b.bytes.max(1) as f64
            );
            results[i].push((ms, rss, p));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    println!();
    let mut medians = Vec::new();
    for (i, (name, _, k)) in configs.iter().enumerate() {
        let bytes = built[*k].2.bytes;
        let mut ms: Vec<f64> = results[i].iter().map(|r| r.0).collect();
        let mut rss: Vec<f64> = results[i].iter().map(|r| r.1 as f64).collect();
        let (lo, hi) = (
            ms.iter().copied().fold(f64::MAX, f64::min),
            ms.iter().copied().fold(0.0, f64::max),
        );
        let (m, r) = (median(&mut ms), median(&mut rss));
        let phase = |f: fn(&Phases) -> Option<f64>| {
            let mut v: Vec<f64> = results[i].iter().filter_map(|r| f(&r.2)).collect();
            show((!v.is_empty()).then(|| median(&mut v)))
        };
        println!(
            "{name}: median {m:.0} ms ({lo:.0}-{hi:.0}; replay {} ms, of it waiting for the \
             reader {} ms; timers re-armed {} ms), median peak RSS {:.1} MB = {:.2}× the log",
            phase(|p| p.replay),
            phase(|p| p.waited),
            phase(|p| p.rearm),
            r / 1e6,
            r / bytes.max(1) as f64
        );
        medians.push((name.clone(), m, r));
    }
    // Against the first configuration (this build with the first owner count).
    if let Some((base, bm, br)) = medians.first().cloned() {
        for (name, m, r) in medians.iter().skip(1) {
            println!(
                "ratio {name} / {base}: time {:.2}×, peak RSS {:.2}×",
                m / bm.max(1e-9),
                r / br.max(1.0)
            );
        }
    }
    Ok(())
}

/// Copies the directory tree `from` to `to` (a log to migrate; lock files are copied too,
/// unlocked).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(to).map_err(|e| io(to, e))?;
    for e in std::fs::read_dir(from).map_err(|e| io(from, e))? {
        let e = e.map_err(|e| io(from, e))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| io(&src, e))?;
        }
    }
    Ok(())
}

/// `--migrate`: for every two owner counts, a plain start of the target count, a sequential
/// migration and a parallel one, alternating within each round; ratios of the medians.
async fn migrations(
    a: &ReplayArgs,
    dir: &Path,
    built: &[(usize, PathBuf, Built)],
) -> Result<(), String> {
    if built.len() < 2 {
        return Err("--migrate needs two owner counts or more (--owners 1,2)".into());
    }
    let mut bins = vec![(
        String::new(),
        std::env::current_exe().map_err(|e| e.to_string())?,
    )];
    if let Some(b) = &a.compare_bin {
        bins.push(("--compare-bin, ".to_string(), b.clone()));
    }
    // (label, binary, log started, owners, extra arguments): per binary and direction, a plain
    // start, a sequential and a parallel migration.
    let mut configs: Vec<(String, &Path, usize, usize, Vec<&str>)> = Vec::new();
    for (label, bin) in &bins {
        for (kf, (from, _, _)) in built.iter().enumerate() {
            for (kt, (to, _, _)) in built.iter().enumerate() {
                if from == to {
                    continue;
                }
                let name = |what: &str| format!("{label}{from} -> {to}: {what}");
                configs.push((name(&format!("plain start of {to}")), bin, kt, *to, vec![]));
                configs.push((
                    name("sequential migration"),
                    bin,
                    kf,
                    *to,
                    vec!["--migrate-owners", "--migrate-threads", "1"],
                ));
                configs.push((
                    name("parallel migration"),
                    bin,
                    kf,
                    *to,
                    vec!["--migrate-owners"],
                ));
            }
        }
    }
    let copy = dir.join("migrating-copy");
    println!(
        "parallel: {} threads (available_parallelism)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!();
    println!(
        "| round | start | start to first answer ms | of it the migration ms | of that reading \
         the old shards ms | peak RSS MB |"
    );
    println!("|---:|---|---:|---:|---:|---:|");
    let mut results: Vec<Vec<(f64, f64, u64)>> = vec![Vec::new(); configs.len()];
    for round in 1..=a.rounds {
        for (i, (name, bin, k, owners, extra)) in configs.iter().enumerate() {
            let (_, at, b) = &built[*k];
            let at = if extra.is_empty() {
                at.clone()
            } else {
                let _ = std::fs::remove_dir_all(&copy);
                copy_tree(at, &copy)?;
                copy.clone()
            };
            let (ms, rss, p) = start_once(bin, &at, &b.probe, *owners, extra).await?;
            if !extra.is_empty() && p.migrate.is_none() {
                return Err(format!("{name}: the child logged no migration"));
            }
            let mig = p.migrate.unwrap_or(0.0);
            println!(
                "| {round} | {name} | {ms:.0} | {} | {} | {:.1} |",
                show(p.migrate),
                show(p.migrate_read),
                rss as f64 / 1e6
            );
            results[i].push((ms, mig, rss));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let _ = std::fs::remove_dir_all(&copy);
    println!();
    let mut medians = Vec::new();
    for (i, (name, _, _, _, _)) in configs.iter().enumerate() {
        let mut ms: Vec<f64> = results[i].iter().map(|r| r.0).collect();
        let mut mig: Vec<f64> = results[i].iter().map(|r| r.1).collect();
        let mut rss: Vec<f64> = results[i].iter().map(|r| r.2 as f64).collect();
        let (lo, hi) = (
            ms.iter().copied().fold(f64::MAX, f64::min),
            ms.iter().copied().fold(0.0, f64::max),
        );
        let (m, g, r) = (median(&mut ms), median(&mut mig), median(&mut rss));
        println!(
            "{name}: median {m:.0} ms ({lo:.0}-{hi:.0}), of it the migration {g:.0} ms, median \
             peak RSS {:.1} MB",
            r / 1e6
        );
        medians.push((m, g, r));
    }
    // Per direction: plain, sequential, parallel.
    for (c, m) in configs.chunks(3).zip(medians.chunks(3)) {
        let dir = c[0].0.split(':').next().unwrap_or_default();
        let (plain, seq, par) = (m[0], m[1], m[2]);
        println!(
            "ratio {dir} parallel / sequential: start-up {:.2}×, migration {:.2}×, peak RSS \
             {:.2}×; start-up with a migration / plain start: sequential {:.2}×, parallel {:.2}×",
            par.0 / seq.0.max(1e-9),
            par.1 / seq.1.max(1e-9),
            par.2 / seq.2.max(1.0),
            seq.0 / plain.0.max(1e-9),
            par.0 / plain.0.max(1e-9),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_read_from_the_childs_log_with_or_without_colours() {
        let coloured = "\u{1b}[2m2026-12-02T05:40:31Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m log replayed \
             \u{1b}[3mrecords\u{1b}[0m\u{1b}[2m=\u{1b}[0m1000000 \u{1b}[3mms\u{1b}[0m\u{1b}[2m=\
             \u{1b}[0m584 \u{1b}[3mwaited_for_reader_ms\u{1b}[0m\u{1b}[2m=\u{1b}[0m181\n\
             INFO timers re-armed, offset floors set timers=15412 ms=52\n";
        let p = Phases::parse(coloured);
        assert_eq!(
            (p.replay, p.waited, p.rearm),
            (Some(584.0), Some(181.0), Some(52.0))
        );
        // Several shards: the slowest; an older binary's log: nothing.
        let shards = "log replayed ms=300 waited_for_reader_ms=10\nlog replayed ms=450\n";
        assert_eq!(Phases::parse(shards).replay, Some(450.0));
        let old = Phases::parse("log replayed records=5\ntimers re-armed timers=3\n");
        assert_eq!((old.replay, old.waited, old.rearm), (None, None, None));
    }
}
