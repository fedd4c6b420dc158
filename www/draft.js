// Draft vs shipped (docs/draft-dialect.md): one streams workload (an explorer preset) run twice
// through the real coordinator compiled to wasm, once with the clients speaking Kafka 4.4's
// KIP-1071 (topology in the joining heartbeat) and once the KIP's draft design (topology id in
// the heartbeat, an INITIALIZING group, StreamsGroupInitialize). Everything shown is computed
// from the two runs: round trips by API, group states over time, time to the first assignment.
//
// The page is its own permalink: #preset=scale-out&seed=1&dur=60&show=both (show: both,
// shipped or draft — the dialect selector). Same hash, same runs (the simulation is
// deterministic). Data shapes are those of src/sim/api.rs (SimEvent, MessageLogEntry).

import { loadWasm, actionOf } from './sim-driver.js';

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const secs = (ms) => (ms === null ? '—' : `${(ms / 1000).toFixed(3)} s`);

export const DEFAULT = { preset: 'scale-out', seed: 1, dur: 60, show: 'both' };
export const DIALECTS = ['shipped', 'draft'];
const SHOWS = ['both', ...DIALECTS];

export function fromHash(hash, presetNames) {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  const num = (k, lo, hi) => (q.has(k) ? Math.min(hi, Math.max(lo, Math.round(Number(q.get(k)) || 0))) : DEFAULT[k]);
  const preset = presetNames.includes(q.get('preset')) ? q.get('preset') : DEFAULT.preset;
  const show = SHOWS.includes(q.get('show')) ? q.get('show') : DEFAULT.show;
  return { preset, seed: num('seed', 0, 1e9), dur: num('dur', 5, 600), show };
}

export function toHash(w) {
  return `#${new URLSearchParams({ preset: w.preset, seed: w.seed, dur: w.dur, show: w.show }).toString()}`;
}

/** One run of the preset in one dialect. */
export function runDialect(W, preset, w, dialect) {
  const spec = { ...structuredClone(preset.spec), seed: w.seed, dialect };
  const sim = new W(spec);
  const end = w.dur * 1000;
  const states = [];
  const take = (evs) => { for (const e of evs) if (e.kind === 'state_change') states.push({ at_ms: e.at_ms, to: e.to }); };
  for (const a of [...preset.actions].sort((x, y) => x.at_ms - y.at_ms)) {
    if (a.at_ms > end) break;
    take(sim.step(a.at_ms - sim.now()));
    take(sim.apply(actionOf(a)));
  }
  take(sim.step(end - sim.now()));
  const log = sim.messageLog();
  const inv = sim.invariants();
  const hash = sim.stateHash();
  sim.free?.();
  return { dialect, states, log, violations: inv.filter((i) => !i.ok).map((i) => i.name), hash, end };
}

/** Numbers of one run, from its message log and state changes. */
export function measure(run) {
  const apis = {};
  for (const m of run.log) apis[m.api] = (apis[m.api] ?? 0) + 1;
  const delivered = run.log.filter((m) => m.fate === 'delivered');
  const firstTasks = delivered.find((m) => (m.response?.active_tasks ?? []).length > 0);
  const firstStable = run.states.find((s) => s.to === 'Stable');
  // Round trips of the member that got the first assignment, up to it.
  const rtFirst = firstTasks ? run.log.filter((m) => m.member_id === firstTasks.member_id && m.sent_ms <= firstTasks.sent_ms).length : null;
  const initializing = run.states.reduce((acc, s, i) => {
    if (s.to !== 'Initializing') return acc;
    const until = run.states[i + 1]?.at_ms ?? run.end;
    return acc + (until - s.at_ms);
  }, 0);
  return {
    roundTrips: run.log.length,
    apis,
    firstAssignment: firstTasks ? firstTasks.received_ms : null,
    rtFirst,
    firstStable: firstStable ? firstStable.at_ms : null,
    initializing,
    states: [...new Set(run.states.map((s) => s.to))],
  };
}

const STATE_COLORS = { Empty: '#e5e7eb', Initializing: '#a855f7', NotReady: '#f59e0b', Assigning: '#3b82f6', Reconciling: '#06b6d4', Stable: '#10b981', Dead: '#6b7280' };

function timeline(runs, end, horizon) {
  const W = 1100, left = 110, right = 12, rowH = 36, top = 10;
  const H = top + runs.length * rowH + 40;
  const x = (t) => left + ((W - left - right) * Math.min(t, horizon)) / horizon;
  let s = `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="group states over time, one row per dialect" data-testid="draft-timeline" class="pc-chart">`;
  runs.forEach((r, i) => {
    const y = top + i * rowH;
    s += `<text x="6" y="${y + 20}" class="pc-rowlabel">${r.dialect}</text>`;
    r.states.forEach((st, k) => {
      if (st.at_ms > horizon) return;
      const t1 = r.states[k + 1]?.at_ms ?? end;
      s += `<rect x="${x(st.at_ms)}" y="${y + 4}" width="${Math.max(1, x(t1) - x(st.at_ms))}" height="${rowH - 10}" fill="${STATE_COLORS[st.to] ?? '#9ca3af'}" data-state="${esc(st.to)}" data-testid="state-${r.dialect}-${k}"><title>${esc(st.to)} from ${secs(st.at_ms)}</title></rect>`;
    });
  });
  const step = horizon > 20000 ? 5000 : horizon > 5000 ? 1000 : 200;
  for (let t = 0; t <= horizon; t += step) s += `<text x="${x(t)}" y="${H - 22}" class="pc-tick">${(t / 1000).toFixed(1)}s</text>`;
  let lx = left;
  for (const [name, c] of Object.entries(STATE_COLORS)) {
    if (!runs.some((r) => r.states.some((st) => st.to === name))) continue;
    s += `<rect x="${lx}" y="${H - 14}" width="10" height="10" fill="${c}"/><text x="${lx + 14}" y="${H - 5}" class="pc-tick">${name}</text>`;
    lx += 24 + name.length * 7;
  }
  return `${s}</svg>`;
}

function table(runs, ms) {
  const rows = runs.map((r, i) => {
    const m = ms[i];
    const split = Object.entries(m.apis).map(([k, v]) => `${esc(k)} ${v}`).join('<br>');
    return `<tr data-testid="draft-row-${r.dialect}"><th>${r.dialect}</th>
      <td data-testid="ttfa-${r.dialect}">${secs(m.firstAssignment)}</td>
      <td data-testid="rtfirst-${r.dialect}">${m.rtFirst ?? '—'}</td>
      <td>${secs(m.firstStable)}</td>
      <td data-testid="init-${r.dialect}">${secs(m.initializing)}</td>
      <td data-testid="rt-${r.dialect}">${m.roundTrips}</td><td>${split}</td>
      <td>${esc(m.states.join(' → '))}</td>
      <td>${r.violations.length ? `<span class="pc-bad">${esc(r.violations.join(', '))}</span>` : 'all hold'}</td></tr>`;
  });
  return `<table class="pc-table" data-testid="draft-table"><thead><tr><th>dialect</th>
    <th title="when the coordinator answered a member with its first non-empty task list">time to first assignment</th>
    <th title="requests the first assigned member sent up to and including the one answered with its first tasks">its round trips</th>
    <th>first Stable</th><th title="time the group spent Initializing (draft only)">Initializing for</th>
    <th>round trips (all)</th><th>by API</th><th>states seen</th><th>invariants</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function caption(runs, ms) {
  const by = Object.fromEntries(runs.map((r, i) => [r.dialect, ms[i]]));
  if (!by.shipped || !by.draft) return '';
  const d = by.draft, s = by.shipped;
  return `<p class="pc-lead" data-testid="draft-caption">Shipped: the joining heartbeat carries the topology; the first member with tasks got them after ${s.rtFirst} round trip(s), at ${secs(s.firstAssignment)}. Draft: the join carries only a topology id; the group is <b>Initializing</b> for ${secs(d.initializing)} while the member asked sends StreamsGroupInitialize (${d.apis.StreamsGroupInitialize ?? 0} sent) and joins again; the first member with tasks got them after ${d.rtFirst} round trip(s), at ${secs(d.firstAssignment)}. In total ${d.roundTrips} requests against ${s.roundTrips}. Where internal topics must be created first, both wait for them and the next heartbeat, so the times differ little.</p>`;
}

export function runAll(W, presets, w) {
  const preset = presets.find((p) => p.name === w.preset);
  const dialects = w.show === 'both' ? DIALECTS : [w.show];
  const runs = dialects.map((d) => runDialect(W, preset, w, d));
  return { runs, ms: runs.map(measure) };
}

async function boot() {
  let W, presets;
  try {
    W = await loadWasm();
    presets = W.presets().filter((p) => (p.spec.group_type ?? 'streams') === 'streams');
  } catch (e) {
    $('dr-out').textContent = `cannot load the wasm module (${e.message}). Build it with pkg-scripts/build-wasm.sh.`;
    return;
  }
  const names = presets.map((p) => p.name);
  const form = $('dr-form');
  form.elements.preset.innerHTML = names.map((n) => `<option>${esc(n)}</option>`).join('');
  const fill = (w) => { for (const k of Object.keys(DEFAULT)) form.elements[k].value = w[k]; };
  const read = () => ({ preset: form.elements.preset.value, seed: Number(form.elements.seed.value), dur: Number(form.elements.dur.value), show: form.elements.show.value });
  const show = (w) => {
    $('dr-error').textContent = '';
    const t0 = performance.now();
    try {
      const { runs, ms } = runAll(W, presets, w);
      const horizon = Math.min(w.dur * 1000, Math.max(2000, ...ms.map((m) => (m.firstStable ?? 0) * 2)));
      $('dr-out').innerHTML = caption(runs, ms) + timeline(runs, w.dur * 1000, horizon) + table(runs, ms);
      $('dr-meta').textContent = `${runs.length} simulation(s) of ${w.dur} s in ${Math.round(performance.now() - t0)} ms · timeline shows the first ${(horizon / 1000).toFixed(1)} s · state hashes ${runs.map((r) => r.hash).join(' ')}`;
      window.draftCompare = { workload: w, runs: runs.map((r) => ({ dialect: r.dialect, states: r.states, violations: r.violations, hash: r.hash })), ms };
    } catch (e) {
      $('dr-error').textContent = e.message ?? String(e);
    }
    document.body.dataset.ready = 'true';
  };
  const w = fromHash(location.hash, names);
  fill(w);
  form.onsubmit = (e) => {
    e.preventDefault();
    const nw = fromHash(toHash(read()), names);
    history.replaceState(null, '', toHash(nw));
    show(nw);
  };
  form.elements.show.onchange = () => form.requestSubmit();
  $('dr-permalink').onclick = () => {
    history.replaceState(null, '', `${location.pathname}${toHash(read())}`);
    $('dr-error').textContent = 'Permalink is in the address bar.';
  };
  window.addEventListener('hashchange', () => { const nw = fromHash(location.hash, names); fill(nw); show(nw); });
  show(w);
}

if (typeof document !== 'undefined' && document.getElementById('dr-form')) boot();
