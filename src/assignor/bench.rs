//! Benchmark of a built-in assignor, by default `sticky` (native only): `groupcoord bench assignor
//! [--assignor NAME] ...`.
//!
//! A [`BenchInput`] is generated from a seed (PCG) and can be written to JSON, so that the Java
//! harness in `tests/interop/assignor/` runs Apache Kafka's assignor on the same group. Both sides
//! follow the same protocol:
//!
//! 1. **scratch**: every member without current tasks or offsets -> `O1`.
//! 2. **steady**: every member owns its tasks of `O1` and reports offsets (stateful actives:
//!    offset = end offset = 1000; standbys: offset 990) -> `O2`. This is the headline time.
//! 3. **leave**: the steady group (owning `O2`, same offset rule) without member `leaver` -> `O3`.
//! 4. **join**: the steady group plus member `joiner` -> `O4`.
//!
//! Reported: median and p99 time of each step over repeated runs, active and total (active +
//! standby) spread of `O2`, actives moved by the leave and the join against the minimum any
//! balanced assignment needs, the share of standbys of `O2` on a different rack than their
//! active, and the steady time for 10x the tasks relative to the base. Not a timed test.

use crate::util::map::{BTreeMap, BTreeSet};
use std::time::Instant;

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use super::{
    AssignmentConfigs, GroupAssignment, GroupSpec, MemberSpec, SubtopologySpec, TaskAssignor,
    TopologySpec,
};
use crate::types::TaskId;

/// The tag key processes are labelled with when racks are requested.
pub(crate) const RACK_TAG: &str = "rack";
/// Offsets reported in the steady state.
pub(crate) const END_OFFSET: i64 = 1000;
pub(crate) const STANDBY_OFFSET: i64 = 990;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BenchSubtopology {
    pub(crate) id: String,
    pub(crate) partitions: i32,
    pub(crate) stateful: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BenchMember {
    pub(crate) id: String,
    pub(crate) process_id: String,
    /// Value of the `rack` client tag, if racks are configured.
    pub(crate) rack: Option<String>,
}

/// A generated benchmark group (the JSON both harnesses read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchInput {
    pub(crate) members: usize,
    pub(crate) tasks: usize,
    pub(crate) standbys: i32,
    pub(crate) racks: usize,
    pub(crate) seed: u64,
    pub(crate) acceptable_recovery_lag: i64,
    pub(crate) num_warmup_replicas: i32,
    pub(crate) subtopologies: Vec<BenchSubtopology>,
    pub(crate) member_list: Vec<BenchMember>,
    pub(crate) joiner: BenchMember,
    pub(crate) leaver: String,
}

fn hex_id(rng: &mut Pcg64) -> String {
    format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64())
}

fn below(rng: &mut Pcg64, n: u64) -> u64 {
    if n == 0 { 0 } else { rng.next_u64() % n }
}

impl BenchInput {
    /// A group of `members` members on processes of 1 to 4 members each (random UUID-like ids),
    /// `tasks` tasks in subtopologies of about 100 partitions (two thirds stateful), processes
    /// spread round-robin over `racks` racks (0: no rack tags).
    pub fn generate(
        members: usize,
        tasks: usize,
        standbys: i32,
        racks: usize,
        seed: u64,
    ) -> BenchInput {
        let mut rng = Pcg64::seed_from_u64(seed);
        let n_subs = tasks.div_ceil(100).max(1);
        let mut subtopologies = Vec::with_capacity(n_subs);
        for i in 0..n_subs {
            let partitions = tasks / n_subs + usize::from(i < tasks % n_subs);
            subtopologies.push(BenchSubtopology {
                id: format!("{i:04}"),
                partitions: partitions as i32,
                stateful: below(&mut rng, 3) != 2,
            });
        }
        let rack_of = |p: usize| (racks > 0).then(|| format!("rack-{}", p % racks));
        let mut member_list = Vec::with_capacity(members);
        let mut p = 0;
        while member_list.len() < members {
            let process_id = hex_id(&mut rng);
            let size = 1 + below(&mut rng, 4) as usize;
            for _ in 0..size.min(members - member_list.len()) {
                member_list.push(BenchMember {
                    id: hex_id(&mut rng),
                    process_id: process_id.clone(),
                    rack: rack_of(p),
                });
            }
            p += 1;
        }
        let joiner = BenchMember {
            id: hex_id(&mut rng),
            process_id: hex_id(&mut rng),
            rack: rack_of(p),
        };
        let leaver = member_list[below(&mut rng, members as u64) as usize]
            .id
            .clone();
        BenchInput {
            members,
            tasks,
            standbys,
            racks,
            seed,
            acceptable_recovery_lag: 10_000,
            num_warmup_replicas: 0,
            subtopologies,
            member_list,
            joiner,
            leaver,
        }
    }

    /// The same parameters with `factor` times the tasks (the 10x step).
    pub(crate) fn scaled(&self, factor: usize) -> BenchInput {
        let mut big = BenchInput::generate(
            self.members,
            self.tasks * factor,
            self.standbys,
            self.racks,
            self.seed,
        );
        big.acceptable_recovery_lag = self.acceptable_recovery_lag;
        big.num_warmup_replicas = self.num_warmup_replicas;
        big
    }

    /// The benchmark topology.
    pub fn topology(&self) -> TopologySpec {
        let mut t = TopologySpec::default();
        for s in &self.subtopologies {
            t.subtopologies.insert(
                s.id.clone(),
                SubtopologySpec {
                    number_of_tasks: s.partitions,
                    stateful: s.stateful,
                },
            );
        }
        t
    }

    fn member_spec(&self, m: &BenchMember) -> MemberSpec {
        let mut spec = MemberSpec {
            process_id: m.process_id.clone(),
            ..Default::default()
        };
        if let Some(r) = &m.rack {
            spec.client_tags.insert(RACK_TAG.into(), r.clone());
        }
        spec
    }

    /// Step 1's group: nobody owns anything.
    pub fn scratch_group(&self) -> GroupSpec {
        let configs = AssignmentConfigs {
            num_standby_replicas: self.standbys,
            rack_aware_assignment_tags: if self.racks > 0 {
                vec![RACK_TAG.into()]
            } else {
                vec![]
            },
            acceptable_recovery_lag: self.acceptable_recovery_lag,
            num_warmup_replicas: self.num_warmup_replicas,
        };
        let members = self
            .member_list
            .iter()
            .map(|m| (m.id.clone(), self.member_spec(m)))
            .collect();
        GroupSpec { members, configs }
    }

    /// `group` with every member owning its tasks of `out` and reporting the steady offsets.
    pub fn owning(&self, group: &GroupSpec, out: &GroupAssignment) -> GroupSpec {
        let topo = self.topology();
        let mut g = group.clone();
        for (id, m) in g.members.iter_mut() {
            let Some(a) = out.members.get(id) else {
                continue;
            };
            m.active_tasks = a.active.clone();
            m.standby_tasks = a.standby.clone();
            m.warmup_tasks = a.warmup.clone();
            for t in a.active.iter() {
                if topo
                    .subtopologies
                    .get(&t.subtopology)
                    .is_some_and(|s| s.stateful)
                {
                    m.task_offsets.insert(t.clone(), END_OFFSET);
                    m.task_end_offsets.insert(t, END_OFFSET);
                }
            }
            for t in a.standby.iter().chain(a.warmup.iter()) {
                m.task_offsets.insert(t, STANDBY_OFFSET);
            }
        }
        g
    }

    pub(crate) fn with_joiner(&self, group: &GroupSpec) -> GroupSpec {
        let mut g = group.clone();
        g.members
            .insert(self.joiner.id.clone(), self.member_spec(&self.joiner));
        g
    }

    pub(crate) fn without_leaver(&self, group: &GroupSpec) -> GroupSpec {
        let mut g = group.clone();
        g.members.remove(&self.leaver);
        g
    }
}

/// Timing of one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Timing {
    pub(crate) median_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) runs: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BenchReport {
    pub(crate) members: usize,
    pub(crate) tasks: usize,
    pub(crate) standbys: i32,
    pub(crate) racks: usize,
    pub(crate) seed: u64,
    pub(crate) processes: usize,
    pub(crate) subtopologies: usize,
    pub(crate) stateful_subtopologies: usize,
    pub(crate) scratch: Timing,
    pub(crate) steady: Timing,
    pub(crate) leave: Timing,
    pub(crate) join: Timing,
    /// Max - min active tasks per member in the steady output.
    pub(crate) active_spread: usize,
    /// Max - min active + standby tasks per member in the steady output.
    pub(crate) spread: usize,
    pub(crate) standbys_assigned: usize,
    /// Standbys whose process is on another rack than the active's (`None` without racks).
    pub(crate) standbys_other_rack: Option<usize>,
    pub(crate) moved_on_leave: usize,
    pub(crate) min_moved_on_leave: usize,
    pub(crate) moved_on_join: usize,
    pub(crate) min_moved_on_join: usize,
    /// Steady median with 10x the tasks, divided by the base steady median.
    pub(crate) scale_10x: Option<(usize, f64, f64)>,
}

/// Runs `f` repeatedly (at least 5 times, until about `budget_ms` elapsed, at most 200 runs).
fn time<R>(budget_ms: f64, mut f: impl FnMut() -> R) -> (Timing, R) {
    let mut samples = Vec::new();
    let mut last;
    let start = Instant::now();
    loop {
        let t = Instant::now();
        let r = f();
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        // The previous result is dropped outside the timed region.
        last = r;
        let total = start.elapsed().as_secs_f64() * 1e3;
        if samples.len() >= 200 || (samples.len() >= 5 && total >= budget_ms) {
            break;
        }
    }
    samples.sort_by(f64::total_cmp);
    let pick =
        |q: f64| samples[((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1];
    (
        Timing {
            median_ms: pick(0.5),
            p99_ms: pick(0.99),
            runs: samples.len(),
        },
        last,
    )
}

fn owners(out: &GroupAssignment) -> BTreeMap<TaskId, &str> {
    let mut o = BTreeMap::new();
    for (id, a) in &out.members {
        for t in a.active.iter() {
            o.insert(t, id.as_str());
        }
    }
    o
}

/// Actives of `before` whose owner differs in `after`.
pub(crate) fn moved(before: &GroupAssignment, after: &GroupAssignment) -> usize {
    let (b, a) = (owners(before), owners(after));
    b.iter().filter(|(t, o)| a.get(*t) != Some(*o)).count()
}

/// Fewest active moves from `before` to any balanced assignment over `members`: the members with
/// the most tasks keep `ceil(A / M)`, the others `floor(A / M)`.
pub(crate) fn min_moved(before: &GroupAssignment, members: &BTreeSet<String>) -> usize {
    let total: usize = before.members.values().map(|a| a.active.len()).sum();
    if members.is_empty() {
        return total;
    }
    let (q, r) = (total / members.len(), total % members.len());
    let mut counts: Vec<usize> = members
        .iter()
        .map(|m| before.members.get(m).map_or(0, |a| a.active.len()))
        .collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let kept: usize = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| c.min(q + usize::from(i < r)))
        .sum();
    total - kept
}

fn spread(out: &GroupAssignment, with_standby: bool) -> usize {
    let counts = out
        .members
        .values()
        .map(|a| a.active.len() + if with_standby { a.standby.len() } else { 0 });
    let (min, max) = counts.fold((usize::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)));
    max.saturating_sub(min)
}

/// (standbys, standbys on another rack than their active).
fn rack_diversity(group: &GroupSpec, out: &GroupAssignment) -> (usize, usize) {
    let rack = |m: &str| {
        group
            .members
            .get(m)
            .and_then(|s| s.client_tags.get(RACK_TAG))
    };
    let owners = owners(out);
    let (mut all, mut other) = (0, 0);
    for (id, a) in &out.members {
        for t in a.standby.iter() {
            all += 1;
            if owners.get(&t).is_some_and(|o| rack(o) != rack(id)) {
                other += 1;
            }
        }
    }
    (all, other)
}

/// Runs the benchmark protocol on `input` with `assignor` (see the module docs).
pub(crate) fn run_input(
    assignor: &dyn TaskAssignor,
    input: &BenchInput,
    scale: bool,
) -> BenchReport {
    // The built-in assignors fail only without members, which the inputs always have.
    let run = |g: &GroupSpec, t: &TopologySpec| {
        assignor
            .assign(g, t)
            .unwrap_or_else(|e| panic!("{}: {e}", assignor.name()))
    };
    let topo = input.topology();
    let scratch_group = input.scratch_group();
    let budget = 1500.0;
    let (scratch, o1) = time(budget, || run(&scratch_group, &topo));
    let steady_group = input.owning(&scratch_group, &o1);
    let (steady, o2) = time(budget, || run(&steady_group, &topo));
    let base = input.owning(&scratch_group, &o2);
    let leave_group = input.without_leaver(&base);
    let (leave, o3) = time(budget, || run(&leave_group, &topo));
    let join_group = input.with_joiner(&base);
    let (join, o4) = time(budget, || run(&join_group, &topo));
    let (standbys_assigned, other) = rack_diversity(&scratch_group, &o2);
    let processes = input
        .member_list
        .iter()
        .map(|m| &m.process_id)
        .collect::<BTreeSet<_>>()
        .len();
    let scale_10x = scale.then(|| {
        let big = input.scaled(10);
        let (t, g) = (big.topology(), big.scratch_group());
        let warm = big.owning(&g, &run(&g, &t));
        let (timing, _) = time(budget, || run(&warm, &t));
        (
            big.tasks,
            timing.median_ms,
            timing.median_ms / steady.median_ms.max(1e-9),
        )
    });
    BenchReport {
        members: input.members,
        tasks: input.tasks,
        standbys: input.standbys,
        racks: input.racks,
        seed: input.seed,
        processes,
        subtopologies: input.subtopologies.len(),
        stateful_subtopologies: input.subtopologies.iter().filter(|s| s.stateful).count(),
        scratch,
        steady,
        leave,
        join,
        active_spread: spread(&o2, false),
        spread: spread(&o2, true),
        standbys_assigned,
        standbys_other_rack: (input.racks > 0).then_some(other),
        moved_on_leave: moved(&o2, &o3),
        min_moved_on_leave: min_moved(&o2, &leave_group.members.keys().cloned().collect()),
        moved_on_join: moved(&o2, &o4),
        min_moved_on_join: min_moved(&o2, &join_group.members.keys().cloned().collect()),
        scale_10x,
    }
}

/// The report as a table; the last line is machine-readable:
/// `assignor members=M tasks=T standbys=S median_ms=X spread=Y moved_on_leave=Z min_moved_on_leave=W`.
pub(crate) fn format_report(r: &BenchReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sticky assignor: members={} processes={} tasks={} subtopologies={} ({} stateful) standbys={} racks={} seed={}",
        r.members,
        r.processes,
        r.tasks,
        r.subtopologies,
        r.stateful_subtopologies,
        r.standbys,
        r.racks,
        r.seed
    );
    let _ = writeln!(
        s,
        "{:<28} {:>10} {:>10} {:>6}",
        "step", "median_ms", "p99_ms", "runs"
    );
    for (name, t) in [
        ("scratch (no owned tasks)", r.scratch),
        ("steady (owns previous)", r.steady),
        ("one member leaves", r.leave),
        ("one member joins", r.join),
    ] {
        let _ = writeln!(
            s,
            "{:<28} {:>10.3} {:>10.3} {:>6}",
            name, t.median_ms, t.p99_ms, t.runs
        );
    }
    let _ = writeln!(
        s,
        "spread (max-min per member)  active {}  active+standby {}",
        r.active_spread, r.spread
    );
    let _ = writeln!(
        s,
        "moved actives on leave       {} (minimum {})",
        r.moved_on_leave, r.min_moved_on_leave
    );
    let _ = writeln!(
        s,
        "moved actives on join        {} (minimum {})",
        r.moved_on_join, r.min_moved_on_join
    );
    match r.standbys_other_rack {
        Some(o) if r.standbys_assigned > 0 => {
            let pct = 100.0 * o as f64 / r.standbys_assigned as f64;
            let _ = writeln!(
                s,
                "standbys on another rack     {pct:.1}% ({o} of {})",
                r.standbys_assigned
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "standbys on another rack     n/a ({} standbys, no racks)",
                r.standbys_assigned
            );
        }
    }
    if let Some((tasks, ms, ratio)) = r.scale_10x {
        let _ = writeln!(
            s,
            "10x tasks ({tasks})           steady median {ms:.3} ms, ratio {ratio:.2}"
        );
    }
    let _ = write!(
        s,
        "assignor members={} tasks={} standbys={} median_ms={:.3} spread={} moved_on_leave={} min_moved_on_leave={}",
        r.members,
        r.tasks,
        r.standbys,
        r.steady.median_ms,
        r.spread,
        r.moved_on_leave,
        r.min_moved_on_leave
    );
    s
}

const USAGE: &str = "usage: groupcoord bench assignor --members M --tasks T --standbys S [--racks R] \
[--seed N] [--warmups N] [--assignor NAME] [--no-scale] [--write-input FILE.json] [--input FILE.json]\n\
(--assignor: sticky (default), sticky-rack-aware, sticky-warmups, mock; --warmups is the group's \
num.warmup.replicas, which only sticky-warmups uses)\n\
(--write-input also writes FILE.10x.json, the 10x-tasks input, unless --no-scale)";

/// The CLI entry: `args` are the words after `bench assignor`. Returns the report text (last
/// line machine-readable) or a usage / I/O error.
pub fn bench_assignor_cli(args: &[String]) -> Result<String, String> {
    let mut opts: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(name) = a.strip_prefix("--") else {
            return Err(format!("unexpected {a:?}\n{USAGE}"));
        };
        let (name, value) = match name.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None if name == "no-scale" || name == "help" => (name.to_string(), None),
            None => (
                name.to_string(),
                Some(
                    it.next()
                        .ok_or(format!("--{name} needs a value\n{USAGE}"))?
                        .clone(),
                ),
            ),
        };
        opts.insert(name, value);
    }
    if opts.contains_key("help") {
        return Ok(USAGE.to_string());
    }
    fn num<T: std::str::FromStr>(
        opts: &BTreeMap<String, Option<String>>,
        k: &str,
        default: Option<T>,
    ) -> Result<T, String> {
        match opts.get(k).cloned().flatten() {
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{k}: not a number: {v:?}\n{USAGE}")),
            None => default.ok_or(format!("--{k} is required\n{USAGE}")),
        }
    }
    for k in opts.keys() {
        if ![
            "members",
            "tasks",
            "standbys",
            "racks",
            "seed",
            "warmups",
            "assignor",
            "no-scale",
            "write-input",
            "input",
        ]
        .contains(&k.as_str())
        {
            return Err(format!("unknown option --{k}\n{USAGE}"));
        }
    }
    let mut input = match opts.get("input").cloned().flatten() {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?
        }
        None => BenchInput::generate(
            num(&opts, "members", None)?,
            num(&opts, "tasks", None)?,
            num(&opts, "standbys", Some(0))?,
            num(&opts, "racks", Some(0))?,
            num(&opts, "seed", Some(42))?,
        ),
    };
    if input.members == 0 {
        return Err(format!("--members must be at least 1\n{USAGE}"));
    }
    input.num_warmup_replicas = num(&opts, "warmups", Some(input.num_warmup_replicas))?;
    let scale = !opts.contains_key("no-scale");
    if let Some(path) = opts.get("write-input").cloned().flatten() {
        let write = |path: &str, input: &BenchInput| {
            let text = serde_json::to_string(input).map_err(|e| e.to_string())?;
            std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))
        };
        write(&path, &input)?;
        if scale {
            // FILE.json -> FILE.10x.json, for the Java harness's 10x step.
            let stem = path.strip_suffix(".json").unwrap_or(&path);
            write(&format!("{stem}.10x.json"), &input.scaled(10))?;
        }
    }
    let name = opts
        .get("assignor")
        .cloned()
        .flatten()
        .unwrap_or_else(|| super::BUILTIN_ASSIGNORS[0].to_string());
    let assignor = super::builtin(&name).ok_or(format!("unknown assignor {name:?}\n{USAGE}"))?;
    let report = run_input(assignor.as_ref(), &input, scale);
    Ok(format_report(&report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_input_is_deterministic_and_round_trips() {
        let a = BenchInput::generate(50, 430, 1, 3, 7);
        assert_eq!(a, BenchInput::generate(50, 430, 1, 3, 7));
        assert_eq!(a.member_list.len(), 50);
        assert_eq!(
            a.subtopologies
                .iter()
                .map(|s| s.partitions as usize)
                .sum::<usize>(),
            430
        );
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(serde_json::from_str::<BenchInput>(&json).unwrap(), a);
    }

    #[test]
    fn cli_report_ends_with_the_machine_line() {
        let args: Vec<String> = [
            "--members",
            "20",
            "--tasks",
            "100",
            "--standbys",
            "1",
            "--racks",
            "2",
            "--no-scale",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = bench_assignor_cli(&args).unwrap();
        let last = out.lines().last().unwrap();
        assert!(
            last.starts_with("assignor members=20 tasks=100 standbys=1 median_ms="),
            "{last}"
        );
        assert!(last.contains(" spread=") && last.contains(" min_moved_on_leave="));
        assert!(bench_assignor_cli(&["--members".into()]).is_err());
        assert!(bench_assignor_cli(&["--bogus".into(), "1".into()]).is_err());
    }
}
