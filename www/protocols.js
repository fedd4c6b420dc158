// One workload, every protocol: the same consumers, partitions and script of joins, crashes,
// leaves and a slow member, run under classic eager (range), classic cooperative-sticky, the
// KIP-848 consumer protocol (uniform) and a streams group (one sub-topology, one task per
// partition), each through the real coordinator compiled to wasm, side by side on one time axis.
//
// The page is its own permalink: the workload lives in the URL hash (#n=3&p=6&seed=7&dur=150&
// script=...), and the same workload gives the same runs (the simulation is deterministic).
// Data shapes are those of src/sim/api.rs (OwnershipSample, SimEvent, MessageLogEntry).

import { loadWasm } from './sim-driver.js';

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const secs = (ms) => `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)}s`;

/** The default workload: 3 consumers on 6 partitions; one joins, one crashes, one leaves, then
 * a slow consumer (its poll loop stalls 20 s) while a new one joins. */
export const DEFAULT = {
  n: 3,
  p: 6,
  seed: 7,
  dur: 170,
  script: '20s join; 40s crash c2; 100s leave c3; 120s stall c1 20s; 121s join',
};

export const PROTOCOLS = [
  {
    key: 'eager',
    label: 'classic · eager (range)',
    why: 'Eager rebalance: every consumer revokes all its partitions before it sends JoinGroup, and nobody consumes until SyncGroup hands out the new assignment. Each change is a stop-the-world gap for the whole group, as long as the slowest member takes to rejoin.',
  },
  {
    key: 'cooperative',
    label: 'classic · cooperative-sticky',
    why: 'Cooperative rebalance: consumers keep what they own through the JoinGroup/SyncGroup barrier and give up only the partitions that move; a second rebalance hands those out. Only the moved partitions wait, but every change still costs two rebalances of the whole group.',
  },
  {
    key: 'consumer',
    label: 'KIP-848 consumer (uniform)',
    why: 'KIP-848: the coordinator computes the assignment, there is no group-wide barrier. Each member revokes what moves and acknowledges in its next heartbeat; a partition goes to its new owner as soon as the old one released it. A slow member delays only the partitions it holds.',
  },
  {
    key: 'streams',
    label: 'streams group (KIP-1071)',
    why: 'Streams groups use the same incremental protocol for tasks (one task per partition here). The simulated Kafka Streams client reconciles at once and has no poll-loop stall, so the slow-member step is skipped in this row.',
  },
];

/** Parses the script: `20s join; 40s crash c2; 100s leave c3; 120s stall c1 20s`. */
export function parseScript(text) {
  const steps = [];
  for (const raw of text.split(/[;\n]/)) {
    const s = raw.trim();
    if (!s) continue;
    const m = s.match(/^(\d+(?:\.\d+)?)s\s+(join|crash|leave|stall)(?:\s+(c\d+))?(?:\s+(\d+(?:\.\d+)?)s)?$/);
    if (!m) throw new Error(`cannot read step "${s}": write e.g. "20s join", "40s crash c2", "100s leave c3", "120s stall c1 20s"`);
    const [, at, kind, who, len] = m;
    if (kind !== 'join' && !who) throw new Error(`step "${s}" needs a consumer (c1, c2, ...)`);
    if (kind === 'stall' && !len) throw new Error(`step "${s}" needs a duration, e.g. "stall c1 20s"`);
    steps.push({ at_ms: Math.round(Number(at) * 1000), kind, who, ms: len ? Math.round(Number(len) * 1000) : 0, text: s });
  }
  return steps.sort((a, b) => a.at_ms - b.at_ms);
}

/** The workload from a URL hash (missing keys keep their default). */
export function fromHash(hash) {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  const num = (k, lo, hi) => (q.has(k) ? Math.min(hi, Math.max(lo, Math.round(Number(q.get(k)) || 0))) : DEFAULT[k]);
  return { n: num('n', 1, 12), p: num('p', 1, 48), seed: num('seed', 0, 1e9), dur: num('dur', 10, 900), script: q.get('script') ?? DEFAULT.script };
}

export function toHash(w) {
  return `#${new URLSearchParams({ n: w.n, p: w.p, seed: w.seed, dur: w.dur, script: w.script }).toString()}`;
}

const proc = (id) => ({ process_id: id, threads: 1, rack: null, client_tags: {}, static_members: false, start_at_ms: 0 });

/** The scenario spec of one protocol (built from the presets' specs, so every field exists). */
function specFor(key, w, presets) {
  const classic = presets.find((p) => p.spec.group_type === 'classic');
  const streams = presets.find((p) => p.spec.group_type !== 'classic' && p.spec.topology?.subtopologies?.length);
  const base = structuredClone((key === 'streams' ? streams : classic).spec);
  Object.assign(base, {
    name: `protocols-${key}`,
    description: `one workload, every protocol: ${key}`,
    seed: w.seed,
    topics: { orders: w.p },
    processes: Array.from({ length: w.n }, (_, i) => proc(`c${i + 1}`)),
    configs: {},
  });
  if (key === 'streams') {
    const sub = structuredClone(base.topology.subtopologies[0]);
    for (const [k, v] of Object.entries(sub)) if (Array.isArray(v)) sub[k] = [];
    Object.assign(sub, { subtopology_id: '0', source_topics: ['orders'] });
    base.topology = { ...base.topology, subtopologies: [sub] };
    base.group_id = 'app';
  } else {
    base.group_id = 'consumers';
    base.group_type = key === 'consumer' ? 'consumer' : 'classic';
    base.classic = { ...base.classic, assignors: [key === 'cooperative' ? 'cooperative-sticky' : 'range'], subscription: [] };
    if (key === 'consumer') base.configs = { 'group.consumer.assignors': 'uniform,range' };
  }
  return base;
}

/** The actions of the script for one protocol (joins get the next process ids c{n+1}, ...). */
function actionsFor(key, w, steps) {
  let next = w.n;
  const out = [];
  for (const s of steps) {
    let action;
    if (s.kind === 'join') action = { action: 'add_process', process: proc(`c${++next}`) };
    else if (s.kind === 'crash') action = { action: 'crash_member', member: `${s.who}-t0` };
    else if (s.kind === 'leave') action = { action: 'leave_member', member: `${s.who}-t0` };
    else if (key === 'streams') action = null; // no stall in the streams client model
    else action = { action: 'stall_member', member: `${s.who}-t0`, ms: s.ms };
    out.push({ step: s, action });
  }
  return out;
}

/** Runs one protocol through the workload; returns what the page shows. */
export function runProtocol(W, key, w, steps, presets) {
  const sim = new W(specFor(key, w, presets));
  const states = []; // {at_ms, to}
  const notes = [];
  const take = (events) => { for (const e of events) if (e.kind === 'state_change') states.push({ at_ms: e.at_ms, to: e.to }); };
  const end = w.dur * 1000;
  for (const { step, action } of actionsFor(key, w, steps)) {
    if (step.at_ms > end) break;
    take(sim.step(step.at_ms - sim.now()));
    if (!action) { notes.push(`${step.text}: skipped`); continue; }
    try { take(sim.apply(action)); } catch (e) { notes.push(`${step.text}: ${e.message ?? e}`); }
  }
  take(sim.step(end - sim.now()));
  const samples = sim.ownershipHistory();
  const log = sim.messageLog();
  const snap = sim.snapshot();
  const inv = sim.invariants();
  const hash = sim.stateHash();
  sim.free?.();
  return { key, samples, states, notes, messages: log.length, apis: countBy(log, (m) => m.api), epoch: snap.group.group_epoch, state: snap.group.state, violations: inv.filter((i) => !i.ok).map((i) => i.name), hash };
}

function countBy(xs, f) {
  const m = {};
  for (const x of xs) m[f(x)] = (m[f(x)] ?? 0) + 1;
  return m;
}

/** Partition-milliseconds owned by nobody in [from, to), from the samples (each holds until the next). */
export function idleArea(samples, from, to) {
  let area = 0;
  for (let i = 0; i < samples.length; i++) {
    const a = Math.max(from, samples[i].at_ms);
    const b = Math.min(to, i + 1 < samples.length ? samples[i + 1].at_ms : to);
    if (b > a) area += (b - a) * samples[i].owned_by_nobody;
  }
  return area;
}

/** Time from each step to when the group is Stable again with every partition owned (null if not by the next step). */
export function settleTimes(run, steps, end) {
  return steps.filter((s) => s.at_ms <= end).map((s, i, all) => {
    // Up to just before the next step (whose action happens at its exact time).
    const last = i + 1 === all.length;
    const until = last ? end : all[i + 1].at_ms;
    const before = (x) => (last ? x.at_ms <= until : x.at_ms < until);
    const lastState = [...run.states].reverse().find(before);
    const samples = run.samples.filter(before);
    const lastSample = samples[samples.length - 1];
    if (!lastState || lastState.to !== 'Stable' || !lastSample || lastSample.owned_by_nobody) return null;
    const lastChange = Math.max(
      ...run.states.filter((x) => x.at_ms >= s.at_ms && before(x)).map((x) => x.at_ms),
      ...samples.filter((x) => x.at_ms >= s.at_ms).map((x) => x.at_ms),
      s.at_ms,
    );
    return lastChange - s.at_ms;
  });
}

/** Summary numbers of one run. */
export function summarize(run, steps, end) {
  const last = run.samples[run.samples.length - 1];
  const perStep = steps.filter((s) => s.at_ms <= end).map((s, i, all) => idleArea(run.samples, s.at_ms, i + 1 < all.length ? all[i + 1].at_ms : end));
  return {
    idle: idleArea(run.samples, 0, end),
    idleAfterStart: steps.length ? idleArea(run.samples, steps[0].at_ms, end) : 0,
    perStep,
    maxIdle: Math.max(0, ...run.samples.filter((x) => x.at_ms >= (steps[0]?.at_ms ?? 0)).map((x) => x.owned_by_nobody)),
    moved: last?.moved ?? 0,
    settle: settleTimes(run, steps, end),
  };
}

// ---- rendering ---------------------------------------------------------------------------------

const COLORS = { eager: '#dc2626', cooperative: '#d97706', consumer: '#059669', streams: '#2563eb' };

function chart(runs, steps, w) {
  const W = 1100, left = 190, right = 12, rowH = 62, top = 46, end = w.dur * 1000;
  const H = top + runs.length * rowH + 28;
  const x = (t) => left + ((W - left - right) * t) / end;
  let s = `<svg class="pc-chart" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="partitions owned by nobody over time, one row per protocol" data-testid="protocols-chart">`;
  let lastX = -1e9, raise = false;
  for (const st of steps) {
    if (st.at_ms > end) continue;
    raise = x(st.at_ms) - lastX < 80 ? !raise : false; // labels of close steps on two lines
    lastX = x(st.at_ms);
    s += `<line x1="${x(st.at_ms)}" x2="${x(st.at_ms)}" y1="${top - 6}" y2="${H - 24}" class="pc-step"/>`;
    s += `<text x="${x(st.at_ms) + 3}" y="${top - (raise ? 24 : 10)}" class="pc-steplabel">${esc(st.text.replace(/^\S+\s/, ''))}</text>`;
  }
  runs.forEach((r, i) => {
    const y0 = top + i * rowH, base = y0 + rowH - 10, hgt = rowH - 18;
    const P = Math.max(1, ...r.samples.map((q) => q.partitions));
    let d = `M${x(0)},${base}`;
    r.samples.forEach((q, k) => {
      const t1 = k + 1 < r.samples.length ? r.samples[k + 1].at_ms : end;
      if (q.at_ms > end) return;
      const y = base - (hgt * q.owned_by_nobody) / P;
      d += ` L${x(q.at_ms)},${y} L${x(Math.min(t1, end))},${y}`;
    });
    d += ` L${x(end)},${base} Z`;
    s += `<text x="6" y="${y0 + rowH / 2}" class="pc-rowlabel" fill="${COLORS[r.key]}">${esc(PROTOCOLS.find((p) => p.key === r.key).label)}</text>`;
    s += `<text x="6" y="${y0 + rowH / 2 + 15}" class="pc-rowsub">idle partitions (of ${P})</text>`;
    s += `<line x1="${left}" x2="${W - right}" y1="${base}" y2="${base}" class="pc-base"/>`;
    s += `<line x1="${left}" x2="${W - right}" y1="${base - hgt}" y2="${base - hgt}" class="pc-ceil"/>`;
    s += `<path d="${d}" fill="${COLORS[r.key]}" fill-opacity="0.55" stroke="${COLORS[r.key]}" stroke-width="1" data-testid="idle-${r.key}"/>`;
  });
  for (let t = 0; t <= end; t += end > 200000 ? 60000 : 20000) s += `<text x="${x(t)}" y="${H - 8}" class="pc-tick">${secs(t)}</text>`;
  return `${s}</svg>`;
}

function table(runs, sums, steps, end) {
  const inScript = steps.filter((s) => s.at_ms <= end);
  const best = (f) => Math.min(...sums.map(f));
  const cell = (v, b, fmt) => `<td class="${v === b ? 'pc-best' : ''}">${fmt(v)}</td>`;
  const ps = (ms) => `${(ms / 1000).toFixed(0)} partition·s`;
  const rows = runs.map((r, i) => {
    const s = sums[i];
    const settle = s.settle.map((v) => (v === null ? '—' : secs(v))).join(' · ');
    return `<tr data-testid="row-${r.key}"><th style="color:${COLORS[r.key]}">${esc(PROTOCOLS[i].label)}</th>
      ${cell(s.idleAfterStart, best((x) => x.idleAfterStart), ps)}
      ${cell(s.maxIdle, best((x) => x.maxIdle), (v) => v)}
      ${cell(s.moved, best((x) => x.moved), (v) => v)}
      ${cell(r.messages, Math.min(...runs.map((x) => x.messages)), (v) => v)}
      <td title="${esc(Object.entries(r.apis).map(([k, v]) => `${k} ${v}`).join(', '))}">${r.epoch}</td>
      <td class="pc-settle">${settle}</td>
      <td>${r.violations.length ? `<span class="pc-bad">${esc(r.violations.join(', '))}</span>` : 'all hold'}</td></tr>`;
  });
  return `<table class="pc-table" data-testid="protocols-table"><thead><tr><th>protocol</th>
    <th title="partition-seconds with no consumer, from the first step on (the start-up join is left out)">idle partitions × time</th>
    <th title="most partitions owned by nobody at one time, from the first step on">max idle at once</th>
    <th title="partitions that went to another consumer than their last one">partitions moved</th>
    <th title="requests sent (each a round trip to the coordinator); hover the epoch column for the split by API">round trips</th>
    <th title="classic: the generation; KIP-848 and streams: the group epoch — each bump is one rebalance">rebalances (generation / group epoch)</th>
    <th title="for each step: time until the group is Stable again with every partition owned; — = not before the next step">time to stable per step (${inScript.map((s) => esc(s.text.replace(/^\S+\s/, ''))).join(' · ')})</th>
    <th>invariants</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Short captions: what the reader sees and why, from the numbers. */
function captions(runs, sums, steps, end) {
  const inScript = steps.filter((s) => s.at_ms <= end);
  return runs.map((r, i) => {
    const s = sums[i];
    const worst = s.perStep.indexOf(Math.max(0, ...s.perStep));
    const w = inScript[worst];
    const P = r.samples[r.samples.length - 1]?.partitions ?? 0;
    const what = s.idleAfterStart
      ? `${(s.idleAfterStart / 1000).toFixed(0)} partition·s idle after the first step, most after “${esc(w?.text ?? '')}” (${(s.perStep[worst] / 1000).toFixed(0)} partition·s); at most ${s.maxIdle} of ${P} partitions idle at once; ${s.moved} partition moves, ${r.epoch} rebalances, ${r.messages} round trips.`
      : `no partition idle after the first step; ${s.moved} partition moves, ${r.epoch} rebalances, ${r.messages} round trips.`;
    const notes = r.notes.length ? ` <small>(${esc(r.notes.join('; '))})</small>` : '';
    return `<p class="pc-caption" data-testid="caption-${r.key}"><b style="color:${COLORS[r.key]}">${esc(PROTOCOLS[i].label)}.</b> ${esc(PROTOCOLS[i].why)} <i>Here: ${what}</i>${notes}</p>`;
  }).join('');
}

function commonCaption(steps) {
  const crash = steps.find((s) => s.kind === 'crash');
  const stall = steps.find((s) => s.kind === 'stall');
  const parts = ['Each row is one protocol; the coloured area is how many partitions no running consumer owns (nothing consumes them), over the same time axis, with the script’s steps as dashed lines.'];
  if (crash) parts.push(`After “${esc(crash.text)}” every protocol leaves the crashed consumer’s partitions idle until the coordinator notices (session.timeout.ms, 45 s by default): that part of the gap is the same everywhere; what differs is what happens to everybody else.`);
  if (stall) parts.push(`“${esc(stall.text)}” blocks one consumer’s poll loop (a slow record handler) while the group changes: under classic rebalancing everyone waits for it at the JoinGroup barrier; under KIP-848 only the partitions it must give up wait.`);
  return `<p class="pc-lead">${parts.join(' ')}</p>`;
}

// ---- page --------------------------------------------------------------------------------------

export async function runAll(W, w, presets) {
  const steps = parseScript(w.script);
  const runs = PROTOCOLS.map((p) => runProtocol(W, p.key, w, steps, presets));
  const end = w.dur * 1000;
  const sums = runs.map((r) => summarize(r, steps, end));
  return { steps, runs, sums, end };
}

async function boot() {
  let W, presets;
  try {
    W = await loadWasm();
    presets = W.presets();
  } catch (e) {
    $('pc-out').textContent = `cannot load the wasm module (${e.message}). Build it with pkg-scripts/build-wasm.sh.`;
    return;
  }
  const form = $('pc-form');
  const fill = (w) => { for (const k of Object.keys(DEFAULT)) form.elements[k].value = w[k]; };
  const read = () => ({ n: Number(form.elements.n.value), p: Number(form.elements.p.value), seed: Number(form.elements.seed.value), dur: Number(form.elements.dur.value), script: form.elements.script.value });
  const show = async (w) => {
    $('pc-error').textContent = '';
    const t0 = performance.now();
    try {
      const { steps, runs, sums, end } = await runAll(W, w, presets);
      $('pc-out').innerHTML = commonCaption(steps) + chart(runs, steps, w) + table(runs, sums, steps, end) + captions(runs, sums, steps, end);
      $('pc-meta').textContent = `4 simulations, ${secs(end)} simulated each, in ${Math.round(performance.now() - t0)} ms · state hashes ${runs.map((r) => r.hash).join(' ')}`;
      window.protocols = { workload: w, runs, sums };
    } catch (e) {
      $('pc-error').textContent = e.message ?? String(e);
    }
    document.body.dataset.ready = 'true';
  };
  const w = fromHash(location.hash);
  fill(w);
  form.onsubmit = (e) => {
    e.preventDefault();
    const nw = fromHash(toHash(read()));
    fill(nw);
    history.replaceState(null, '', toHash(nw));
    show(nw);
  };
  $('pc-permalink').onclick = async () => {
    const url = `${location.origin}${location.pathname}${toHash(read())}`;
    history.replaceState(null, '', url);
    try { await navigator.clipboard.writeText(url); $('pc-error').textContent = 'Permalink copied (and in the address bar).'; } catch { $('pc-error').textContent = 'Permalink is in the address bar.'; }
  };
  window.addEventListener('hashchange', () => { const nw = fromHash(location.hash); fill(nw); show(nw); });
  await show(w);
}

if (typeof document !== 'undefined' && document.getElementById('pc-form')) boot();
