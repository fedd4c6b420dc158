//! Random scenarios with random fault schedules, for the simulation test suite and
//! `groupcoord simulate --seeds N --start S`.
//!
//! One seed = one run: a random small group (1-4 processes x 1-2 threads, 1-2 source topics of
//! 1-12 partitions, optional state stores, repartition topic and standby replica), a fault phase
//! of 30-120 s of simulated time (crashes, leaves, static bounces, network cuts, coordinator
//! restarts, scale-out, partition increases, standby changes, member restarts) with every
//! invariant checked after every event, then a quiet phase in which all network cuts are healed.
//! Liveness: within [`liveness_bound_ms`] of the end of the faults the group must be Stable with
//! every task of the topology assigned as active and every running client running exactly its
//! target, and stay so for two more heartbeat intervals. Finally a from-scratch replay of the
//! record log must reproduce the coordinator's state hash, and (every 10th seed) rebuilding the
//! run from seed + actions must reproduce the simulation's state hash.

use crate::util::map::{BTreeMap, BTreeSet};

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

use crate::protocol::{Subtopology, TopicInfo, Topology};

use super::api::*;
use super::engine::Simulation;

/// A seed that failed, with a command that reproduces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedFailure {
    /// The seed.
    pub seed: u64,
    /// Simulated time of the failure.
    pub at_ms: i64,
    /// What failed.
    pub reason: String,
    /// Shell command reproducing the failure.
    pub repro: String,
    /// The actions applied up to the failure (with the seed's spec, a permalink).
    pub actions: Vec<TimedAction>,
}

impl std::fmt::Display for SeedFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {} failed at t={}ms: {}\nreproduce with: {}",
            self.seed, self.at_ms, self.reason, self.repro
        )
    }
}

impl std::error::Error for SeedFailure {}

/// What a passing seed did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// Faults injected.
    pub faults: usize,
    /// Heartbeats exchanged.
    pub heartbeats: u64,
    /// Records written.
    pub records: usize,
    /// Simulated ms from the end of the faults to convergence.
    pub converged_after_ms: i64,
    /// The bound convergence had to meet.
    pub bound_ms: i64,
    /// Heartbeat errors and message fates seen (by name), and record causes (first word).
    pub tally: BTreeMap<String, u64>,
    /// The actions applied (with the seed's spec, a permalink of the run).
    pub actions: Vec<TimedAction>,
}

/// The repro command of a seed.
pub fn repro_command(seed: u64) -> String {
    format!("GROUPCOORD_SEED={seed} cargo test --test simulation -- --exact seed_repro --nocapture")
}

struct R(Pcg64);

impl R {
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.0.next_u64() % n }
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1).max(1) as u64) as i64
    }
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

fn subtopology(id: &str, source: Vec<String>, changelog: Option<String>) -> Subtopology {
    Subtopology {
        subtopology_id: id.to_string(),
        source_topics: source,
        state_changelog_topics: changelog
            .into_iter()
            .map(|name| TopicInfo {
                name,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// The random scenario of a seed.
pub fn random_scenario(seed: u64) -> ScenarioSpec {
    let mut r = R(Pcg64::seed_from_u64(seed ^ 0x5eed_5eed_5eed_5eed));
    let mut topics = BTreeMap::new();
    topics.insert("t0".to_string(), r.range(1, 12) as i32);
    let two = r.chance(1, 2);
    if two {
        topics.insert("t1".to_string(), r.range(1, 12) as i32);
    }
    let mut subs = Vec::new();
    let store = |r: &mut R, name: &str| r.chance(1, 2).then(|| format!("app-{name}-changelog"));
    let repartition = r.chance(1, 3);
    let mut s0 = subtopology("0", vec!["t0".to_string()], store(&mut r, "s0"));
    if repartition {
        s0.repartition_sink_topics = vec!["app-rep-repartition".to_string()];
    }
    subs.push(s0);
    if two {
        let s1 = store(&mut r, "s1");
        subs.push(subtopology("1", vec!["t1".to_string()], s1));
    }
    if repartition {
        let mut s2 = subtopology("2", vec![], store(&mut r, "s2"));
        s2.repartition_source_topics = vec![TopicInfo {
            name: "app-rep-repartition".to_string(),
            ..Default::default()
        }];
        subs.push(s2);
    }
    let n = r.range(1, 4);
    let tagged = r.chance(1, 4);
    let processes = (1..=n)
        .map(|i| ProcessSpec {
            process_id: format!("p{i}"),
            threads: r.range(1, 2) as u32,
            rack: r.chance(1, 2).then(|| format!("r{}", i % 2)),
            client_tags: if tagged && r.chance(3, 4) {
                BTreeMap::from([("zone".to_string(), format!("z{}", r.below(2)))])
            } else {
                BTreeMap::new()
            },
            static_members: r.chance(1, 3),
            start_at_ms: r.range(0, 3000),
        })
        .collect();
    let mut configs = BTreeMap::new();
    if r.chance(1, 3) {
        configs.insert(
            "group.streams.num.standby.replicas".to_string(),
            "1".to_string(),
        );
    }
    if r.chance(1, 3) {
        configs.insert(
            "group.streams.initial.rebalance.delay.ms".to_string(),
            "0".to_string(),
        );
    }
    if r.chance(1, 2) {
        let rebalance = r.range(10, 60) * 1000;
        configs.insert(
            "sim.rebalance.timeout.ms".to_string(),
            rebalance.to_string(),
        );
    }
    let lo = r.range(0, 20);
    let hi = lo + r.range(0, 200);
    ScenarioSpec {
        name: format!("random-{seed}"),
        description: "random scenario of the simulation test suite".to_string(),
        seed,
        group_id: "app".to_string(),
        topics,
        topology: Topology {
            epoch: 0,
            subtopologies: subs,
            ..Default::default()
        },
        processes,
        configs,
        latency_ms: (lo, hi),
        auto_create_internal_topics: true,
        group_type: GroupType::Streams,
        classic: ClassicSpec::default(),
        break_it: BreakIt::default(),
        dialect: Default::default(),
    }
}

/// Liveness bound after the faults stop: a crashed member is fenced within a session timeout, a
/// member stuck revoking within its rebalance timeout, a fresh group waits for the initial
/// rebalance delay; 20 heartbeat intervals cover the rejoins and the reconciliation rounds.
pub fn liveness_bound_ms(sim: &Simulation) -> i64 {
    if sim.spec().group_type == GroupType::Consumer {
        // A crashed member is removed within a session timeout, a member that does not revoke
        // within its rebalance timeout (a stall) is fenced; 20 heartbeats cover the rejoins.
        let c = &sim.config().consumer;
        return c.session_timeout_ms as i64
            + 2 * sim.spec().classic.max_poll_interval_ms as i64
            + 20 * c.heartbeat_interval_ms as i64;
    }
    if sim.spec().group_type == GroupType::Classic {
        // A crashed member is removed within a session timeout; a rebalance waits at most the
        // rebalance timeout for the join and again for the syncs, a new group the initial delay;
        // cooperative needs a second rebalance; 20 heartbeats cover the rejoins.
        let c = &sim.spec().classic;
        return c.session_timeout_ms as i64
            + 4 * c.max_poll_interval_ms as i64
            + sim.config().classic.initial_rebalance_delay_ms as i64
            + 20 * c.heartbeat_interval_ms as i64;
    }
    let cfg = sim.config().for_group(&sim.spec().group_id);
    cfg.session_timeout_ms as i64
        + sim.knobs().rebalance_timeout_ms as i64
        + cfg.initial_rebalance_delay_ms as i64
        + cfg.assignment_interval_ms as i64
        + 20 * cfg.heartbeat_interval_ms as i64
}

impl Simulation {
    /// `Ok` when the group is Stable, every task of the topology is assigned as active, every
    /// running client is a member running exactly its target, and nothing is bouncing.
    pub fn convergence(&self) -> Result<(), String> {
        if self.spec().group_type == GroupType::Classic {
            return self.classic_convergence();
        }
        if self.spec().group_type == GroupType::Consumer {
            return self.consumer_convergence();
        }
        let view = self.view();
        let state = view.state();
        if state != "Stable" {
            return Err(format!("group is {state}"));
        }
        let tasks = self.all_tasks();
        if tasks.is_empty() {
            return Err("topology not configured".to_string());
        }
        let mut assigned = BTreeSet::new();
        for t in view.targets.values() {
            assigned.extend(t.active.iter());
        }
        let missing: Vec<String> = tasks
            .iter()
            .filter(|t| !assigned.contains(*t))
            .map(|t| t.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(format!("tasks without an active owner: {missing:?}"));
        }
        let members: BTreeSet<&String> =
            crate::util::sort::collect_set(view.live_members().map(|(id, _)| id));
        for c in self.clients() {
            if c.status_name() == "bouncing" {
                return Err(format!("{} is bouncing", c.member_id));
            }
            if !c.is_alive() {
                continue;
            }
            if !members.contains(&c.member_id) {
                return Err(format!("running client {} is not a member", c.member_id));
            }
            let target = view.targets.get(&c.member_id).cloned().unwrap_or_default();
            if !c.in_sync || c.owned != target {
                return Err(format!("{} does not run its target yet", c.member_id));
            }
        }
        let alive = self.clients().filter(|c| c.is_alive()).count();
        if alive != members.len() {
            return Err(format!(
                "{} members but {alive} running clients",
                members.len()
            ));
        }
        Ok(())
    }
}

fn alive_members(sim: &Simulation) -> Vec<String> {
    if sim.spec().group_type == GroupType::Consumer {
        return sim
            .kip848_consumers()
            .filter(|c| c.is_alive())
            .map(|c| c.name.clone())
            .collect();
    }
    if sim.spec().group_type == GroupType::Classic {
        return sim
            .consumers()
            .filter(|c| c.is_alive())
            .map(|c| c.name.clone())
            .collect();
    }
    sim.clients()
        .filter(|m| m.is_alive())
        .map(|m| m.member_id.clone())
        .collect()
}

struct Runner {
    sim: Simulation,
    r: R,
    seed: u64,
    heals: Vec<(i64, String)>,
}

impl Runner {
    fn fail(&self, reason: String) -> SeedFailure {
        SeedFailure {
            seed: self.seed,
            at_ms: self.sim.now(),
            reason,
            repro: repro_command(self.seed),
            actions: self.sim.actions().to_vec(),
        }
    }

    /// Step to `t` in random small steps, checking every invariant after each.
    fn run_to(&mut self, t: i64) -> Result<(), SeedFailure> {
        while self.sim.now() < t {
            let d = self.r.range(100, 1500).min(t - self.sim.now());
            let events = self.sim.step(d);
            self.check(&events)?;
        }
        Ok(())
    }

    fn check(&self, events: &[SimEvent]) -> Result<(), SeedFailure> {
        for e in events {
            if let SimEvent::InvariantViolated {
                at_ms,
                name,
                detail,
            } = e
            {
                return Err(self.fail(format!("invariant {name} violated at {at_ms}ms: {detail}")));
            }
        }
        if let Some(e) = self.sim.unexpected_errors().first() {
            return Err(self.fail(format!("unexpected heartbeat error: {e}")));
        }
        Ok(())
    }

    fn act(&mut self, a: Action) -> Result<(), SeedFailure> {
        match self.sim.apply(a.clone()) {
            Ok(events) => self.check(&events),
            Err(e) => Err(self.fail(format!("action {a:?} rejected: {e}"))),
        }
    }

    fn random_fault(&mut self) -> Result<(), SeedFailure> {
        if self.sim.spec().group_type != GroupType::Streams {
            return self.random_classic_fault();
        }
        let alive = alive_members(&self.sim);
        let pick = |r: &mut R, v: &[String]| v[r.below(v.len() as u64) as usize].clone();
        let roll = self.r.below(16);
        match roll {
            0 | 1 if alive.len() > 1 => {
                let m = pick(&mut self.r, &alive);
                self.act(Action::CrashMember { member: m })
            }
            2 if alive.len() > 1 => {
                let m = pick(&mut self.r, &alive);
                self.act(Action::LeaveMember { member: m })
            }
            3 | 4 => {
                let statics: Vec<String> = self
                    .sim
                    .clients()
                    .filter(|m| m.is_alive() && m.instance_id.is_some())
                    .map(|m| m.member_id.clone())
                    .collect();
                if statics.is_empty() {
                    return Ok(());
                }
                let m = pick(&mut self.r, &statics);
                let down = self.r.range(500, 20_000);
                self.act(Action::StaticBounce {
                    member: m,
                    down_ms: down,
                })
            }
            5..=7 if !alive.is_empty() => {
                let m = pick(&mut self.r, &alive);
                // Up to a minute: long enough for rebalance and session timeouts to fence the
                // member while its client still runs (the zombie case).
                let heal = self.sim.now() + self.r.range(1000, 60_000);
                self.heals.push((heal, m.clone()));
                self.act(Action::CutNetwork { member: m })
            }
            8 => self.act(Action::RestartCoordinator),
            9 if self.sim.clients().filter(|m| m.is_alive()).count() < 8 => {
                let procs: Vec<String> = self
                    .sim
                    .spec()
                    .processes
                    .iter()
                    .map(|p| p.process_id.clone())
                    .collect();
                let p = pick(&mut self.r, &procs);
                self.act(Action::AddMember { process_id: p })
            }
            10 => {
                let n: BTreeSet<_> = crate::util::sort::collect_set(
                    self.sim.clients().map(|m| m.process_id.clone()),
                );
                if n.len() >= 5 || alive.len() >= 8 {
                    return Ok(());
                }
                let id = format!("p{}", 10 + self.sim.actions().len());
                let static_members = self.r.chance(1, 3);
                self.act(Action::AddProcess {
                    process: ProcessSpec {
                        process_id: id,
                        threads: 1,
                        rack: None,
                        client_tags: BTreeMap::new(),
                        static_members,
                        start_at_ms: 0,
                    },
                })
            }
            11 => {
                // Only a stateless, unrepartitioned subtopology can follow a source partition
                // increase: changelog and repartition topics keep their partition count, so Kafka
                // reports INCORRECTLY_PARTITIONED_TOPICS for good (as a real application would).
                let topo = &self.sim.spec().topology;
                let repartitioned = topo
                    .subtopologies
                    .iter()
                    .any(|s| !s.repartition_sink_topics.is_empty());
                let topics: Vec<(String, i32)> = topo
                    .subtopologies
                    .iter()
                    .filter(|s| !repartitioned && s.state_changelog_topics.is_empty())
                    .flat_map(|s| s.source_topics.iter())
                    .filter_map(|t| self.sim.topics().get(t).map(|p| (t.clone(), *p)))
                    .collect();
                if topics.is_empty() {
                    return Ok(());
                }
                let (t, p) = topics[self.r.below(topics.len() as u64) as usize].clone();
                if p >= 16 {
                    return Ok(());
                }
                let add = self.r.range(1, 3) as i32;
                self.act(Action::AddPartitions {
                    topic: t,
                    partitions: p + add,
                })
            }
            12 => {
                let replicas = self.r.range(0, 1) as i32;
                self.act(Action::SetStandbyReplicas { replicas })
            }
            13 | 14 => {
                // Restart the current incarnation of a thread that is down.
                let down: Vec<String> = self
                    .sim
                    .clients()
                    .filter(|m| matches!(m.status_name(), "crashed" | "left" | "stopped"))
                    .filter(|m| {
                        self.sim
                            .resolve_member(&format!("{}-t{}", m.process_id, m.thread))
                            .as_deref()
                            == Some(m.member_id.as_str())
                    })
                    .map(|m| m.member_id.clone())
                    .collect();
                if down.is_empty() {
                    return Ok(());
                }
                let m = pick(&mut self.r, &down);
                self.act(Action::RestartMember { member: m })
            }
            15 => {
                let name = if self.r.chance(1, 2) {
                    "mock"
                } else {
                    "sticky"
                };
                self.act(Action::SetAssignor {
                    name: name.to_string(),
                })
            }
            _ => Ok(()),
        }
    }

    fn heal_due(&mut self, all: bool) -> Result<(), SeedFailure> {
        let now = self.sim.now();
        let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.heals)
            .into_iter()
            .partition(|(t, _)| all || *t <= now);
        self.heals = keep;
        for (_, m) in due {
            self.act(Action::HealNetwork { member: m })?;
        }
        Ok(())
    }
}

/// Run one seed. See the module docs for what is checked.
pub fn run_seed(seed: u64) -> Result<SeedReport, SeedFailure> {
    run_spec(seed, random_scenario(seed))
}

/// Run one seed of a random classic consumer group (see [`random_classic_scenario`]): the same
/// fault phase, invariants, liveness and replay checks as [`run_seed`].
pub fn run_classic_seed(seed: u64) -> Result<SeedReport, SeedFailure> {
    run_spec(seed, random_classic_scenario(seed)).map_err(|mut f| {
        f.repro = repro_classic_command(seed);
        f
    })
}

/// The repro command of a classic seed.
pub fn repro_classic_command(seed: u64) -> String {
    format!(
        "GROUPCOORD_CLASSIC_SEED={seed} cargo test --test simulation -- --exact classic_seed_repro --nocapture"
    )
}

pub(crate) fn run_spec(seed: u64, spec: ScenarioSpec) -> Result<SeedReport, SeedFailure> {
    let sim = Simulation::new(spec.clone()).map_err(|e| SeedFailure {
        seed,
        at_ms: 0,
        reason: format!("scenario rejected: {e}"),
        repro: repro_command(seed),
        actions: Vec::new(),
    })?;
    let mut run = Runner {
        sim,
        r: R(Pcg64::seed_from_u64(seed.wrapping_mul(31) ^ 0xfa_u64)),
        seed,
        heals: Vec::new(),
    };
    // Let the group form, then faults.
    let fault_end = run.r.range(30_000, 120_000);
    let mut faults = 0;
    let mut t = run.r.range(2_000, 15_000);
    let lossy = run.r.chance(1, 2);
    while t < fault_end {
        if lossy && faults == 1 {
            let percent = run.r.range(1, 20) as u32;
            run.run_to(t)?;
            run.act(Action::SetMessageLoss { percent })?;
        }
        run.run_to(t)?;
        run.heal_due(false)?;
        run.random_fault()?;
        faults += 1;
        t += run.r.range(500, 8_000);
    }
    run.run_to(fault_end)?;
    run.heal_due(true)?;
    if lossy {
        run.act(Action::SetMessageLoss { percent: 0 })?;
    }
    if alive_members(&run.sim).is_empty() {
        // Keep the application running: restart one thread.
        let p = run.sim.spec().processes[0].process_id.clone();
        let m = run
            .sim
            .resolve_member(&format!("{p}-t0"))
            .unwrap_or_default();
        let status = if run.sim.spec().group_type == GroupType::Consumer {
            run.sim
                .kip848_consumers()
                .find(|c| c.name == m)
                .map(|c| c.status_name())
        } else if run.sim.spec().group_type == GroupType::Classic {
            run.sim
                .consumers()
                .find(|c| c.name == m)
                .map(|c| c.status_name())
        } else {
            run.sim
                .clients()
                .find(|c| c.member_id == m)
                .map(|c| c.status_name())
        };
        if status == Some("bouncing") {
            // It comes back by itself.
        } else {
            run.act(Action::RestartMember { member: m })?;
        }
    }
    let quiet_from = run.sim.now();
    let bound = liveness_bound_ms(&run.sim);
    let hb = if run.sim.spec().group_type == GroupType::Consumer {
        run.sim.config().consumer.heartbeat_interval_ms as i64
    } else if run.sim.spec().group_type == GroupType::Classic {
        run.sim.spec().classic.heartbeat_interval_ms as i64
    } else {
        run.sim
            .config()
            .for_group(&run.sim.spec().group_id)
            .heartbeat_interval_ms as i64
    };
    // Converged = convergence holds, and keeps holding for two heartbeat intervals.
    let mut since: Option<i64> = None;
    let converged_at = loop {
        match (run.sim.convergence(), since) {
            (Ok(()), Some(t)) if run.sim.now() - t >= 2 * hb => break t,
            (Ok(()), None) => since = Some(run.sim.now()),
            (Ok(()), Some(_)) => {}
            (Err(_), _) => since = None,
        }
        if since.is_none_or(|t| t > quiet_from + bound) && run.sim.now() > quiet_from + bound {
            let why = run
                .sim
                .convergence()
                .err()
                .unwrap_or_else(|| "flapping".to_string());
            return Err(run.fail(format!(
                "liveness: not converged {bound}ms after the faults stopped: {why}"
            )));
        }
        let next = run.sim.now() + 250;
        run.run_to(next)?;
    };
    match run.sim.full_replay_hash() {
        Ok(h) if h == run.sim.coordinator().state_hash() => {}
        Ok(h) => {
            return Err(run.fail(format!(
                "full replay hash {h} != live {}",
                run.sim.coordinator().state_hash()
            )));
        }
        Err(e) => return Err(run.fail(format!("full replay failed: {e}"))),
    }
    if seed.is_multiple_of(10) {
        let again = Simulation::replay_to(spec, run.sim.actions(), run.sim.now())
            .map_err(|e| run.fail(format!("replay_to failed: {e}")))?;
        if again.state_hash() != run.sim.state_hash() {
            return Err(run.fail("replay_to(spec, actions, now) gave another state hash".into()));
        }
    }
    let mut tally: BTreeMap<String, u64> = BTreeMap::new();
    for m in run.sim.message_log() {
        *tally.entry(format!("fate {}", m.fate)).or_default() += 1;
        if let Some(e) = &m.error {
            let name = e.split(':').next().unwrap_or_default();
            *tally.entry(format!("error {name}")).or_default() += 1;
        }
    }
    for r in run.sim.record_log() {
        let cause = r.cause.split(' ').next().unwrap_or_default();
        *tally.entry(format!("cause {cause}")).or_default() += 1;
    }
    for a in run.sim.actions() {
        let name = serde_json::to_value(&a.action)
            .ok()
            .and_then(|v| v.get("action").and_then(|x| x.as_str().map(str::to_string)))
            .unwrap_or_default();
        *tally.entry(format!("action {name}")).or_default() += 1;
    }
    for c in run.sim.consumers() {
        if let Some(e) = &c.last_error {
            *tally.entry(format!("consumer {e}")).or_default() += 1;
        }
    }
    let resyncs: u32 = run.sim.clients().map(|c| c.resyncs).sum();
    *tally.entry("client resyncs".to_string()).or_default() += resyncs as u64;
    Ok(SeedReport {
        actions: run.sim.actions().to_vec(),
        tally,
        seed,
        faults,
        heartbeats: run.sim.message_log().last().map_or(0, |m| m.seq),
        records: run.sim.record_log().len(),
        converged_after_ms: converged_at - quiet_from,
        bound_ms: bound,
    })
}

/// Run `count` seeds from `start`; the first failure stops the run. For the CLI
/// `groupcoord simulate --seeds N --start S`.
pub fn run_seeds(start: u64, count: u64) -> Result<(), SeedFailure> {
    run_seeds_with(start, count, |_| {})
}

/// [`run_seeds`] with a callback after every passing seed (progress output).
pub fn run_seeds_with(
    start: u64,
    count: u64,
    mut on_seed: impl FnMut(&SeedReport),
) -> Result<(), SeedFailure> {
    for seed in start..start.saturating_add(count) {
        on_seed(&run_seed(seed)?);
    }
    Ok(())
}

/// A random classic consumer group: 1-4 processes x 1-2 consumers (a third static), one or two
/// subscribed topics of 1-12 partitions, a random assignor list (eager `range`, `roundrobin`,
/// `sticky`, `cooperative-sticky`, or `cooperative-sticky, range` which runs eager), short
/// timeouts so a seed stays cheap.
pub fn random_classic_scenario(seed: u64) -> ScenarioSpec {
    let mut r = R(Pcg64::seed_from_u64(seed ^ 0xc1a5_51c0_c1a5_51c0));
    let mut topics = BTreeMap::new();
    topics.insert("t0".to_string(), r.range(1, 12) as i32);
    if r.chance(1, 2) {
        topics.insert("t1".to_string(), r.range(1, 12) as i32);
    }
    let assignors: &[&str] = match r.below(5) {
        0 => &["range"],
        1 => &["roundrobin"],
        2 => &["sticky"],
        3 => &["cooperative-sticky"],
        _ => &["cooperative-sticky", "range"],
    };
    let processes = (0..r.range(1, 4))
        .map(|i| ProcessSpec {
            process_id: format!("c{i}"),
            threads: r.range(1, 2) as u32,
            rack: None,
            client_tags: BTreeMap::new(),
            static_members: r.chance(1, 3),
            start_at_ms: r.range(0, 3000),
        })
        .collect();
    let lo = r.range(0, 20);
    let hi = lo + r.range(0, 200);
    ScenarioSpec {
        name: format!("random-classic-{seed}"),
        description: "random classic scenario of the simulation test suite".to_string(),
        seed,
        group_id: "consumers".to_string(),
        topics,
        topology: Topology::default(),
        processes,
        configs: BTreeMap::new(),
        latency_ms: (lo, hi),
        auto_create_internal_topics: true,
        group_type: GroupType::Classic,
        classic: ClassicSpec {
            assignors: assignors.iter().map(|a| a.to_string()).collect(),
            subscription: Vec::new(),
            session_timeout_ms: 10_000,
            heartbeat_interval_ms: 1_000,
            max_poll_interval_ms: r.range(5_000, 15_000) as i32,
        },
        break_it: BreakIt::default(),
        dialect: Default::default(),
    }
}

/// A random KIP-848 consumer group: the shapes of [`random_classic_scenario`], the server-side
/// assignor `uniform` or `range`, short timeouts so a seed stays cheap.
pub fn random_consumer_scenario(seed: u64) -> ScenarioSpec {
    let mut s = random_classic_scenario(seed ^ 0x0848_0848);
    let mut r = R(Pcg64::seed_from_u64(seed ^ 0x0848_0000_0848_0000));
    s.name = format!("random-consumer-{seed}");
    s.description = "random consumer scenario of the simulation test suite".to_string();
    s.seed = seed;
    s.group_type = GroupType::Consumer;
    let assignor = if r.chance(1, 2) { "uniform" } else { "range" };
    s.configs.insert(
        "group.consumer.assignors".to_string(),
        format!(
            "{assignor},{}",
            if assignor == "range" {
                "uniform"
            } else {
                "range"
            }
        ),
    );
    s.configs.insert(
        "group.consumer.session.timeout.ms".to_string(),
        "10000".to_string(),
    );
    s.configs.insert(
        "group.consumer.min.session.timeout.ms".to_string(),
        "1000".to_string(),
    );
    s.configs.insert(
        "group.consumer.heartbeat.interval.ms".to_string(),
        "1000".to_string(),
    );
    s.configs.insert(
        "group.consumer.min.heartbeat.interval.ms".to_string(),
        "1000".to_string(),
    );
    s
}

/// Run one random consumer-group seed (see [`run_seed`]).
pub fn run_consumer_seed(seed: u64) -> Result<SeedReport, SeedFailure> {
    run_spec(seed, random_consumer_scenario(seed)).map_err(|mut f| {
        f.repro = repro_consumer_command(seed);
        f
    })
}

/// The repro command of a consumer seed.
pub fn repro_consumer_command(seed: u64) -> String {
    format!(
        "GROUPCOORD_CONSUMER_SEED={seed} cargo test --test simulation -- --exact consumer_seed_repro --nocapture"
    )
}

impl Simulation {
    /// Consumer-group liveness: the group is Stable, every running consumer is a member at the
    /// group epoch consuming exactly its target, every subscribed partition has one consumer,
    /// nothing is bouncing or stalled.
    fn consumer_convergence(&self) -> Result<(), String> {
        let g = self
            .coordinator()
            .consumer_group(&self.spec().group_id)
            .ok_or("no group")?;
        if g.state().name() != "Stable" {
            return Err(format!("group is {}", g.state().name()));
        }
        let mut owners: BTreeMap<&(String, i32), &str> = BTreeMap::new();
        let mut alive = 0;
        for c in self.kip848_consumers() {
            if c.status_name() == "bouncing" {
                return Err(format!("{} is bouncing", c.name));
            }
            if !c.is_alive() {
                continue;
            }
            alive += 1;
            if c.stalled(self.now()) || c.left_on_poll_timeout {
                return Err(format!("{} is stalled", c.name));
            }
            if !g.members.contains_key(&c.name) || c.epoch != g.group_epoch {
                return Err(format!(
                    "{} is at epoch {}, not {}",
                    c.name, c.epoch, g.group_epoch
                ));
            }
            for tp in &c.owned {
                if let Some(o) = owners.insert(tp, &c.name) {
                    return Err(format!("{}-{} owned by {o} and {}", tp.0, tp.1, c.name));
                }
            }
        }
        if alive != g.members.len() {
            return Err(format!(
                "{} members but {alive} running consumers",
                g.members.len()
            ));
        }
        let missing: Vec<String> = self
            .classic_partitions()
            .iter()
            .filter(|tp| !owners.contains_key(tp))
            .map(|(t, p)| format!("{t}-{p}"))
            .collect();
        if !missing.is_empty() {
            return Err(format!("partitions owned by nobody: {missing:?}"));
        }
        Ok(())
    }

    /// Classic liveness: the group is Stable, every running consumer is a member of the current
    /// generation with its assignment and nothing to do, every subscribed partition has exactly
    /// one owner, and no consumer is bouncing or stalled.
    fn classic_convergence(&self) -> Result<(), String> {
        let g = self
            .coordinator()
            .classic_group(&self.spec().group_id)
            .ok_or("no group")?;
        if g.state.name() != "Stable" {
            return Err(format!("group is {}", g.state.name()));
        }
        let mut owners: BTreeMap<&(String, i32), &str> = BTreeMap::new();
        let mut alive = 0;
        for c in self.consumers() {
            if c.status_name() == "bouncing" {
                return Err(format!("{} is bouncing", c.name));
            }
            if !c.is_alive() {
                continue;
            }
            alive += 1;
            if c.stalled_until.is_some_and(|u| u > self.now()) {
                return Err(format!("{} is stalled", c.name));
            }
            if !g.members.contains_key(&c.member_id) || c.generation != g.generation {
                return Err(format!("{} is not in generation {}", c.name, g.generation));
            }
            if c.state_name() != "stable" || c.pending.is_some() {
                return Err(format!("{} is {}", c.name, c.state_name()));
            }
            for tp in &c.owned {
                if let Some(o) = owners.insert(tp, &c.name) {
                    return Err(format!("{}-{} owned by {o} and {}", tp.0, tp.1, c.name));
                }
            }
        }
        if alive != g.members.len() {
            return Err(format!(
                "{} members but {alive} running consumers",
                g.members.len()
            ));
        }
        let missing: Vec<String> = self
            .classic_partitions()
            .iter()
            .filter(|tp| !owners.contains_key(tp))
            .map(|(t, p)| format!("{t}-{p}"))
            .collect();
        if !missing.is_empty() {
            return Err(format!("partitions owned by nobody: {missing:?}"));
        }
        Ok(())
    }
}

impl Runner {
    fn random_classic_fault(&mut self) -> Result<(), SeedFailure> {
        let alive = alive_members(&self.sim);
        let pick = |r: &mut R, v: &[String]| v[r.below(v.len() as u64) as usize].clone();
        let current = |name: &str, process_id: &str, thread: u32| {
            self.sim
                .resolve_member(&format!("{process_id}-t{thread}"))
                .as_deref()
                == Some(name)
        };
        let mut consumers: Vec<(String, bool, &'static str, bool)> = self
            .sim
            .consumers()
            .map(|c| {
                (
                    c.name.clone(),
                    c.instance_id.is_some(),
                    c.status_name(),
                    current(&c.name, &c.process_id, c.thread),
                )
            })
            .collect();
        consumers.extend(self.sim.kip848_consumers().map(|c| {
            (
                c.name.clone(),
                c.instance_id.is_some(),
                c.status_name(),
                current(&c.name, &c.process_id, c.thread),
            )
        }));
        match self.r.below(14) {
            0 | 1 if alive.len() > 1 => {
                let m = pick(&mut self.r, &alive);
                self.act(Action::CrashMember { member: m })
            }
            2 if alive.len() > 1 => {
                let m = pick(&mut self.r, &alive);
                self.act(Action::LeaveMember { member: m })
            }
            3 | 4 => {
                let statics: Vec<String> = consumers
                    .iter()
                    .filter(|c| c.1 && c.2 == "alive")
                    .map(|c| c.0.clone())
                    .collect();
                if statics.is_empty() {
                    return Ok(());
                }
                let m = pick(&mut self.r, &statics);
                let down = self.r.range(500, 15_000);
                self.act(Action::StaticBounce {
                    member: m,
                    down_ms: down,
                })
            }
            5 | 6 if !alive.is_empty() => {
                let m = pick(&mut self.r, &alive);
                let heal = self.sim.now() + self.r.range(1000, 30_000);
                self.heals.push((heal, m.clone()));
                self.act(Action::CutNetwork { member: m })
            }
            7 => self.act(Action::RestartCoordinator),
            8 if alive.len() < 8 => {
                let procs: Vec<String> = self
                    .sim
                    .spec()
                    .processes
                    .iter()
                    .map(|p| p.process_id.clone())
                    .collect();
                let p = pick(&mut self.r, &procs);
                self.act(Action::AddMember { process_id: p })
            }
            9 if alive.len() < 8 => {
                let id = format!("c{}", 10 + self.sim.actions().len());
                let static_members = self.r.chance(1, 3);
                self.act(Action::AddProcess {
                    process: ProcessSpec {
                        process_id: id,
                        threads: 1,
                        rack: None,
                        client_tags: BTreeMap::new(),
                        static_members,
                        start_at_ms: 0,
                    },
                })
            }
            10 => {
                let topics: Vec<(String, i32)> = self
                    .sim
                    .topics()
                    .iter()
                    .map(|(t, p)| (t.clone(), *p))
                    .collect();
                let (t, p) = topics[self.r.below(topics.len() as u64) as usize].clone();
                if p >= 16 {
                    return Ok(());
                }
                let add = self.r.range(1, 3) as i32;
                self.act(Action::AddPartitions {
                    topic: t,
                    partitions: p + add,
                })
            }
            11 => {
                let down: Vec<String> = consumers
                    .iter()
                    .filter(|c| c.3 && matches!(c.2, "crashed" | "left" | "stopped"))
                    .map(|c| c.0.clone())
                    .collect();
                if down.is_empty() {
                    return Ok(());
                }
                let m = pick(&mut self.r, &down);
                self.act(Action::RestartMember { member: m })
            }
            12 | 13 if !alive.is_empty() => {
                let m = pick(&mut self.r, &alive);
                let max_poll = self.sim.spec().classic.max_poll_interval_ms as i64;
                let ms = self.r.range(500, 2 * max_poll);
                self.act(Action::StallMember { member: m, ms })
            }
            _ => Ok(()),
        }
    }
}
