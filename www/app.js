// The explorer's controller: scenario selection, playback, time travel, actions, permalinks,
// side-by-side comparison and live mode. Rendering lives in views.js, the wasm run in sim-driver.js.
import { Driver, RemoteDriver, decodeTrace, encodeTrace, loadWasm, takeRecvMs } from './sim-driver.js';
import { AssignmentGrid, EpochChart, MemberCards, RecordLog, Swimlanes, allTasks, esc, fmtT, naturallyOrdered, renderHeader, renderInvariants, renderMessageDetail, renderRecordDetail, short } from './views.js';
import { installTooltips } from './glossary.js';
import { OwnershipBand, classicAsTasks, explainClassic, isClassic, renderClassicHeader, stopTheWorld } from './classic.js';
import { startLive } from './live.js';
import { LESSONS, LessonPlayer, renderWelcome } from './lessons.js';
import { GhostCards, announce, ghostMembers } from './history.js';
import { noteViolation, renderBreakIt, showViolation, violationMarks } from './breakit.js';
import { MAX_TRACE_BYTES, RecordDriver, download, exportRun, parseTrace } from './trace.js';
import { ScenarioEditor } from './editor.js';

const ICON_PLAY = '<svg class="ic" viewBox="0 0 16 16"><path d="M3 2v12l11-6z"/></svg>';
const ICON_PAUSE = '<svg class="ic" viewBox="0 0 16 16"><path d="M3 2h3.5v12H3zM9.5 2H13v12H9.5z"/></svg>';
const $ = (id) => document.getElementById(id);
const S = { inbox: [], pendingRecords: [], W: null, presets: [], driver: null, playing: false, lastTs: null, needRender: true, pendingSeek: null, steps: [], order: new Map(), violated: false, tab: 'sim', broken: { at: null, names: [] } };

// ---- boot -------------------------------------------------------------------------------------

window.addEventListener('error', (e) => fatal(e.message));
window.addEventListener('unhandledrejection', (e) => fatal(e.reason?.message ?? String(e.reason)));
function fatal(msg) { const f = $('fatal'); f.hidden = false; f.textContent = `Error: ${msg}`; S.playing = false; }

async function boot() {
  installTooltips();
  const params = new URLSearchParams(location.search);
  try {
    S.W = await loadWasm();
    S.presets = S.W.presets();
  } catch (e) {
    fatal(`cannot load the wasm module (${e.message}). Build it with pkg-scripts/build-wasm.sh.`);
    if (params.has('live')) showTab('live');
    return;
  }
  const blank = structuredClone(S.presets[0].spec);
  Object.assign(blank, { name: 'empty', description: 'An empty group: add processes yourself.', processes: [] });
  S.presets.push({ name: 'empty', description: blank.description, spec: blank, actions: [] });
  // Scenarios by kind of group: streams (KIP-1071) first, then classic consumer groups.
  const opt = (p) => `<option value="${esc(p.name)}" title="${esc(p.description)}">${esc(p.name)}</option>`;
  const kinds = [['Kafka Streams groups (KIP-1071)', (p) => !p.spec.group_type || p.spec.group_type === 'streams'], ['Classic consumer groups', (p) => p.spec.group_type === 'classic'], ['Consumer groups (KIP-848)', (p) => p.spec.group_type === 'consumer']];
  $('preset').innerHTML = kinds.map(([label, f]) => { const ps = S.presets.filter(f); return ps.length ? `<optgroup label="${esc(label)}">${ps.map(opt).join('')}</optgroup>` : ''; }).join('');

  const pl = location.hash.match(/[#&]pl=([^&]+)/);
  if (pl) await openTrace(pl[1]);
  else if (params.has('trace')) {
    await loadTraceUrl(params.get('trace'));
    if (!S.driver) startPreset(S.presets[0].name);
  }
  else if (params.has('members') || params.has('partitions')) {
    try {
      S.scaled = scaledOptions(params);
      startScaled(S.scaled);
    } catch (e) {
      S.scaled = null;
      toast(e.message, true);
      startPreset(params.get('preset') ?? S.presets[0].name);
    }
  } else startPreset(params.get('preset') ?? S.presets[0].name);
  wire();
  S.lessons = new LessonPlayer($('lesson'), {
    presets: () => S.presets,
    start: (spec, actions, name) => { pause(); setDriver(new RemoteDriver(S.W, spec, actions, name)); $('preset').value = name; },
    seek: (t) => { S.pendingSeek = t; },
    play, pause, now: () => S.driver.now,
  });
  if (params.has('lesson') && LESSONS.some((l) => l.id === params.get('lesson'))) S.lessons.open(params.get('lesson'));
  else if (!location.search && !pl && !localStorage.getItem('groupcoord-welcome-closed')) {
    renderWelcome($('welcome'), (id) => S.lessons.open(id), () => localStorage.setItem('groupcoord-welcome-closed', '1'));
  }
  if (params.has('live')) showTab('live');
  document.body.dataset.ready = 'true';
  requestAnimationFrame(loop);
}

function preset(name) { return S.presets.find((p) => p.name === name); }

function startPreset(name, seed) {
  const p = preset(name) ?? S.presets[0];
  const spec = structuredClone(p.spec);
  if (seed != null) spec.seed = seed;
  setDriver(new RemoteDriver(S.W, spec, p.actions, p.name));
  $('preset').value = p.name;
  $('preset').title = p.description;
}

// ---- ?members=N[&partitions=P]: a preset scaled to N one-thread members -------------------------

const MAX_MEMBERS = 500, MAX_PARTITIONS = 1000;

/** Validates the URL options; throws an Error with a message for the user. */
function scaledOptions(params) {
  const int = (name, max) => {
    const raw = params.get(name);
    if (raw == null) return null;
    if (!/^\s*\d+\s*$/.test(raw)) throw new Error(`?${name}=${raw.slice(0, 20)} is not a whole number (use 1 to ${max}); showing the scenario as it is.`);
    const v = Number(raw);
    if (v < 1 || v > max) throw new Error(`?${name}=${v} is out of range (1 to ${max}); showing the scenario as it is.`);
    return v;
  };
  const name = params.get('preset') ?? S.presets[0].name;
  if (!preset(name)) throw new Error(`?preset=${name.slice(0, 40)} is not a scenario; showing ${S.presets[0].name}.`);
  return { preset: name, members: int('members', MAX_MEMBERS), partitions: int('partitions', MAX_PARTITIONS) };
}

/** The preset with its processes replaced by `members` one-thread processes p1…pN (flags of its
 * first process) and every topic at `partitions`. Its actions are kept: processes it adds are
 * renamed after pN, actions on members of processes beyond pN are dropped. */
function scaledRun({ preset: name, members, partitions }, seed) {
  const p = preset(name);
  const spec = structuredClone(p.spec);
  if (seed != null) spec.seed = seed;
  let actions = structuredClone(p.actions);
  if (members != null) {
    const first = spec.processes[0] ?? { rack: null, client_tags: {}, static_members: false };
    spec.processes = Array.from({ length: members }, (_, i) => ({ ...first, process_id: `p${i + 1}`, threads: 1, start_at_ms: 0 }));
    const have = new Set(spec.processes.map((x) => x.process_id));
    let next = members;
    const renamed = new Map();
    actions = actions.flatMap((a) => {
      if (a.action === 'add_process') {
        if (!renamed.has(a.process.process_id)) renamed.set(a.process.process_id, `p${++next}`);
        return [{ ...a, process: { ...a.process, process_id: renamed.get(a.process.process_id) } }];
      }
      const proc = typeof a.member === 'string' ? a.member.replace(/-t\d+$/, '') : a.process_id;
      if (proc != null && !have.has(proc) && ![...renamed.values()].includes(proc)) return [];
      return [a];
    });
  }
  if (partitions != null) for (const t of Object.keys(spec.topics)) spec.topics[t] = partitions;
  return { spec, actions, label: `${name} × ${members ?? spec.processes.length} members` };
}

function startScaled(opts, seed) {
  const { spec, actions } = scaledRun(opts, seed);
  setDriver(new RemoteDriver(S.W, spec, actions, null));
  $('preset').value = opts.preset;
}

function setDriver(d) {
  S.driver?.free();
  S.driver = d;
  S.inbox = [];
  S.steps = [];
  $('seed').value = d.spec.seed;
  S.order = new Map();
  S.classicNames = new Map();
  S.violated = false;
  S.broken = { at: null, names: [] };
  if (d.last) noteViolation(S.broken, d.last, d.now);
  $('repro').textContent = '';
  resetViews();
  refreshActionInputs();
  S.needRender = true;
}

// ---- traces in and out (trace.js), the scenario editor (editor.js) ------------------------------

/** Opens a parsed trace: a simulated run is replayed from its spec and actions to `t` (and its
 * state hash compared), a server's records are replayed into the coordinator. */
async function openRun(tr) {
  pause();
  S.lessons?.close();
  if (tr.source === 'server') {
    const mod = await import('./pkg/groupcoord.js');
    setDriver(new RecordDriver(mod, tr));
    $('preset').value = '';
    $('repro').innerHTML = `<span class="okr" data-testid="repro" data-ok="true" title="${esc(S.driver.describe())}">recorded</span>`;
    return;
  }
  const p = tr.preset ? preset(tr.preset) : null;
  const d = new RemoteDriver(S.W, tr.spec, tr.actions, p && JSON.stringify(p.spec) === JSON.stringify(tr.spec) ? p.name : null);
  try {
    await d.seek(tr.t);
    await d.raiseMaxTime(Math.max(0, ...tr.actions.map((a) => a.at_ms)));
  } catch (e) { d.free(); throw e; }
  setDriver(d);
  $('preset').value = d.presetName ?? '';
  const h = d.stateHash();
  $('repro').innerHTML = tr.state_hash ? (h === tr.state_hash ? '<span class="okr" data-testid="repro" data-ok="true">✓ reproduced</span>' : `<span class="bad" data-testid="repro" data-ok="false">✗ expected ${esc(tr.state_hash)}</span>`) : '';
}

/** Reads a trace file or fetched text; a problem is named in the dialog and a toast, never thrown. */
async function importText(text, from) {
  const err = $('trace-error');
  try {
    const tr = parseTrace(text);
    await openRun(tr);
    if (err) err.textContent = '';
    $('traces').hidden = true;
    toast(`Opened the trace from ${from}${tr.source === 'server' ? `: ${S.driver.describe()}` : ''}.`);
    return true;
  } catch (e) {
    const msg = `cannot open the trace from ${from}: ${e.message}`;
    if (err) err.textContent = msg;
    toast(msg, true);
    return false;
  }
}

/** `?trace=<url>` and the dialog's "load from a server": GET the trace (e.g.
 * `/api/groups/<id>/trace` of `groupcoord serve --http`). */
async function loadTraceUrl(url) {
  try {
    const r = await fetch(url);
    if (!r.ok) throw new Error(`HTTP ${r.status}: ${(await r.text()).slice(0, 200)}`);
    const len = Number(r.headers.get('content-length') ?? 0);
    if (len > MAX_TRACE_BYTES) throw new Error(`${len} bytes; traces of at most ${MAX_TRACE_BYTES / 1048576} MB are read`);
    return importText(await r.text(), url);
  } catch (e) {
    toast(`cannot load the trace ${url}: ${e.message}`, true);
    if ($('trace-error')) $('trace-error').textContent = `cannot load ${url}: ${e.message}`;
    return false;
  }
}

/** The Traces dialog: export, import a file, load from a server, the scenario editor. */
function openTraces() {
  const el = $('traces');
  const recorded = S.driver instanceof RecordDriver;
  el.innerHTML = `<div class="help-box" role="dialog" aria-modal="true" aria-labelledby="traces-title">
    <h2 id="traces-title">Traces</h2>
    <p>A trace is a run as JSON (format <code>groupcoord-trace</code> version 1): the scenario and timed actions that replay it, the records and heartbeats it showed, and the state hash at the time shown. A real server writes a group's recorded history in the same format (<code>groupcoord log export --group G</code>, or <code>GET /api/groups/G/trace</code>).</p>
    <p><button id="trace-export" data-testid="trace-export">Export this run (JSON)</button>
      <button id="trace-edit" data-testid="trace-edit" ${recorded ? 'disabled title="a recorded history has no actions to edit"' : ''}>Scenario editor…</button></p>
    <p><label>Import a trace file <input type="file" id="trace-file" accept=".json,application/json" data-testid="trace-file"></label></p>
    <p><label>Load from a server <input type="text" id="trace-url" size="40" value="/api/groups/demo-app/trace" data-testid="trace-url"></label>
      <button id="trace-load" data-testid="trace-load">Load</button></p>
    <p role="alert" class="bad" id="trace-error" data-testid="trace-error"></p>
    <p><button id="traces-close">Close</button></p></div>`;
  el.hidden = false;
  $('trace-export').focus();
  $('trace-export').onclick = () => {
    const d = S.driver, obj = d instanceof RecordDriver ? d.source : exportRun(d);
    download(obj, `${obj.group_id}-${d.now}ms.trace.json`);
  };
  $('trace-edit').onclick = () => { el.hidden = true; S.editor.open(S.driver.actions); };
  $('trace-file').onchange = async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    if (f.size > MAX_TRACE_BYTES) { $('trace-error').textContent = `${f.name} is ${(f.size / 1048576).toFixed(1)} MB; traces of at most ${MAX_TRACE_BYTES / 1048576} MB are read`; return; }
    await importText(await f.text(), f.name);
  };
  $('trace-load').onclick = () => loadTraceUrl($('trace-url').value.trim());
  $('traces-close').onclick = () => { el.hidden = true; $('traces-btn').focus(); };
  el.onkeydown = (e) => { if (e.key === 'Escape') { e.stopPropagation(); el.hidden = true; $('traces-btn').focus(); } };
}

/** The editor's result: the run with these actions, opened through its permalink. */
async function openEdited(actions) {
  const d = S.driver;
  const t = actions.length ? actions[actions.length - 1].at_ms + 5000 : 0;
  const text = await encodeTrace({ v: 1, preset: d.presetName ?? undefined, spec: d.presetName ? undefined : d.spec, seed: d.spec.seed, actions, t });
  S.lastOpened = text;
  await openTrace(text);
  // The address bar gets the permalink once the run it names is shown.
  history.replaceState(null, '', `${location.origin}${location.pathname}${location.search}#pl=${text}`);
}

async function openTrace(text) {
  try {
    const tr = await decodeTrace(text);
    const p = tr.preset ? preset(tr.preset) : null;
    const spec = structuredClone(p ? p.spec : tr.spec);
    if (!spec) throw new Error(`unknown preset ${tr.preset}`);
    spec.seed = tr.seed ?? spec.seed;
    const d = new RemoteDriver(S.W, spec, tr.actions ?? [], p ? p.name : null);
    await d.seek(tr.t ?? 0);
    await d.raiseMaxTime(Math.max(0, ...(tr.actions ?? []).map((a) => a.at_ms)));
    setDriver(d);
    $('preset').value = p ? p.name : '';
    const h = d.stateHash();
    $('repro').innerHTML = tr.h ? (h === tr.h ? '<span class="okr" data-testid="repro" data-ok="true">✓ reproduced</span>' : `<span class="bad" data-testid="repro" data-ok="false">✗ expected ${esc(tr.h)}</span>`) : '';
  } catch (e) {
    toast(`cannot open permalink: ${e.message}`, true);
    startPreset(S.presets[0].name);
  }
}

// ---- views ------------------------------------------------------------------------------------

const V = {};
function resetViews() {
  V.chart ??= new EpochChart($('chart'), { onResize: () => { S.needRender = true; } });
  V.cards ??= new MemberCards($('cards'), { onMenu: memberMenu });
  V.grid ??= new AssignmentGrid($('grid'));
  V.lanes ??= new Swimlanes($('lanes'), { onSelect: showMessage, onResize: () => { S.needRender = true; } });
  V.stw ??= new OwnershipBand($('stw'));
  V.ghosts ??= new GhostCards($('ghosts'), { onSelect: (m) => m && showMessage(m) });
  S.ghostKey = null;
  V.records ??= new RecordLog($('records'), { onSelect: (r) => { pause(); renderRecordDetail($('detail'), r); } });
  V.chart.reset();
  V.records.reset();
  S.pendingRecords = [];
  V.chart.ingest(S.driver.records);
  V.records.append(S.driver.records);
  renderMessageDetail($('detail'), null);
}

/** Detail of a clicked heartbeat: its decoded fields and bytes come from the worker. */
function showMessage(m) {
  pause();
  const d = S.driver;
  d.message(m.seq).then((full) => { if (S.driver === d) renderMessageDetail($('detail'), full ?? m); }, (e) => toast(e.message, true));
}

function hbInterval() {
  const spec = S.driver.spec;
  if (spec.group_type === 'classic') return Number(spec.classic?.heartbeat_interval_ms ?? 3000);
  return Number(spec.configs?.['group.streams.heartbeat.interval.ms'] ?? 5000);
}

// The streams titles of the panels whose title differs for classic groups (kept to switch back).
const TITLES = {};
/** Titles, legends and panels for the kind of group shown (streams or classic). */
function setGroupKind(classic) {
  if (S.classicShown === classic) return;
  S.classicShown = classic;
  for (const id of ['chart-title', 'grid-title']) TITLES[id] ??= $(id).innerHTML;
  document.body.classList.toggle('classic', classic);
  $('explain').hidden = !classic;
  $('stw').hidden = !classic;
  $('lanes-shapes').hidden = !classic;
  $('lanes-name').textContent = classic ? 'Requests' : 'Heartbeats';
  $('lanes-name').dataset.term = classic ? 'classic-requests' : 'heartbeat';
  $('chart-title').innerHTML = classic
    ? 'Generations over time <small data-term="generation">the group\'s generation and the members in each generation; below, the partitions nobody consumes</small>'
    : TITLES['chart-title'];
  $('grid-title').innerHTML = classic
    ? 'Partitions owned by each consumer <small class="legend-inline"><span class="lg cur-active">A</span> owned (consumed) · <span class="lg flash-demo"></span> changed this step · an empty row is a partition nobody consumes</small>'
    : TITLES['grid-title'];
  $('grid-title').dataset.term = classic ? 'owned-partitions' : 'target-assignment';
}

// Per-view timing: T holds moving averages; while PERF.on, each animation frame that did work also
// leaves a sample {sim, lanes, chart, cards, grid, total} in PERF.samples (bench-frames.mjs).
const T = {};
// `worker`: the simulation's own time (off the main thread) answered in that frame; `recv` (also
// lastRecv): main-thread time spent receiving the worker's replies since the previous frame, outside
// the frame callback (bench-frames.mjs adds it to the frame's cost).
const PERF = { on: false, samples: [], cur: null, max: 20000, worker: 0, lastRecv: 0 };
function timed(k, fn) {
  const t0 = performance.now();
  fn();
  const dt = performance.now() - t0;
  T[k] = (T[k] ?? 0) * 0.9 + dt * 0.1;
  if (PERF.cur) PERF.cur[k] = (PERF.cur[k] ?? 0) + dt;
}
function render() {
  const d = S.driver, f = d.last, g = naturallyOrdered(f.snapshot.group, (S.orderCache ??= {})), now = f.snapshot.now_ms;
  for (const m of g.members) if (!S.order.has(m.member_id)) S.order.set(m.member_id, S.order.size);
  // The header is rebuilt only when the group changes; time and step count tick in place.
  const hdr = $('group-header'), classic = isClassic(g);
  setGroupKind(classic);
  if (S.consumerShown !== (g.group_type === 'consumer')) { S.consumerShown = g.group_type === 'consumer'; document.body.classList.toggle('consumer', S.consumerShown); }
  const live = '<span class="kv">t <b data-live="t"></b></span><span class="kv">steps <b data-live="steps"></b></span>';
  if (classic) renderClassicHeader(hdr, g, live); else renderHeader(hdr, g, live);
  if (hdr._liveKey !== hdr._key) { hdr._liveKey = hdr._key; hdr._t = hdr.querySelector('[data-live=t]'); hdr._steps = hdr.querySelector('[data-live=steps]'); }
  setText(hdr._t, fmtT(now));
  setText(hdr._steps, String(f.snapshot.steps));
  const win = Math.max(10000, 8 * hbInterval());
  if ($('window').textContent !== fmtT(win)) $('window').textContent = fmtT(win);
  // Layout reads (canvas and chart widths) first, DOM writes after: no forced synchronous layout.
  // Members that left or were fenced keep a ghost lane and card (recomputed when messages arrive).
  const last = d.messages[d.messages.length - 1];
  const ghostKey = `${last?.seq}|${last?.fate}|${g.members.length}`;
  if (ghostKey !== S.ghostKey) { S.ghostKey = ghostKey; S.ghosts = ghostMembers(g, d.messages.length > 4000 ? d.messages.slice(-4000) : d.messages); }
  V.ghosts.update(S.ghosts);
  const lanesG = S.ghosts.length ? { ...g, members: [...g.members, ...S.ghosts] } : g;
  timed('lanes', () => V.lanes.update(d.messages, d.records, lanesG, now, win, S.order, S.broken.at == null ? timeMarks(d.actions) : [...timeMarks(d.actions), ...violationMarks(S.broken)]));
  announceChanges(g);
  if (classic) {
    // The records name members by the coordinator's ids; the chart shows the simulation's names.
    for (const m of g.members) if (m.classic?.coordinator_member_id) S.classicNames.set(m.classic.coordinator_member_id, m.member_id);
    V.chart.setNames(S.classicNames);
  }
  timed('chart', () => V.chart.render(now, S.order, classic ? d.phases : null));
  if (classic) {
    const stw = V.stw.render(d.ownership ?? [], now) ?? stopTheWorld(d.ownership ?? [], now);
    explainClassic($('explain'), g, d.spec, stw, d.messages);
  }
  // The record log takes new rows at most 4 times a second while playing (bursts of hundreds of
  // records at 100 members would otherwise rebuild its table every frame).
  const real = performance.now();
  if (S.pendingRecords.length && (!S.playing || real - (S.recordsAt ?? 0) >= 250)) {
    V.records.append(S.pendingRecords.length > 300 ? S.pendingRecords.slice(-300) : S.pendingRecords);
    S.pendingRecords = [];
    S.recordsAt = real;
  }
  timed('cards', () => V.cards.update(g, now, S.order));
  timed('grid', () => V.grid.update(classic ? classicAsTasks(g) : g, S.order));
  renderInvariants($('invariants'), f.invariants);
  renderBreakIt(breakPanel(), d.spec, restartBroken);
  showViolation(breakPanel(), $('records'), S.broken);
  const inputsKey = JSON.stringify([Object.keys(f.snapshot.topics ?? {}), g.members.map((m) => m.process_id), g.assignor]);
  if (inputsKey !== S.inputsKey) { S.inputsKey = inputsKey; refreshActionInputs(); }
  setText($('hash'), f.snapshot.state_hash);
  setText($('time'), fmtT(now));
  const max = Math.max(d.maxTime, now, d.actions.length ? d.actions[d.actions.length - 1].at_ms + 5000 : 0);
  setText($('maxtime'), fmtT(max));
  const sc = $('scrub');
  if (S.pendingSeek == null && document.activeElement !== sc) {
    if (sc.max !== String(max)) sc.max = max;
    if (sc.value !== String(now)) sc.value = now;
  }
  renderMarks(max, now);
  S.lessons?.render(now);
  if (S.tab === 'compare') Compare.sync();
}

/** Actions worth a line on the swimlanes' time axis. */
function timeMarks(actions) {
  if (actions === S.marksOf) return S.marks;
  S.marksOf = actions;
  const kinds = { restart_coordinator: 'restart', cut_network: 'cut', heal_network: 'heal', set_message_loss: 'loss', crash_member: 'cut' };
  S.marks = actions.filter((a) => kinds[a.action]).map((a) => ({
    at_ms: a.at_ms, kind: kinds[a.action],
    label: a.action === 'restart_coordinator' ? 'coordinator restart' : a.action === 'set_message_loss' ? `message loss ${a.percent}%` : `${a.action === 'cut_network' ? 'network cut' : a.action === 'heal_network' ? 'network healed' : 'crash'} ${short(a.member)}`,
  }));
  return S.marks;
}

/** State changes for screen readers (the aria-live region): the group's state and epoch, and
 * each member's state (at most a few per render; not while many members change at once). */
function announceChanges(g) {
  const key = `${g.state}|${g.group_epoch}`;
  const prev = S.announced;
  const states = new Map(g.members.map((m) => [m.member_id, m.state ?? m.classic?.client_state ?? 'gone']));
  S.announced = { key, states, driver: S.driver };
  if (!prev || prev.driver !== S.driver) return;
  const parts = [];
  if (prev.key !== key) parts.push(`group ${g.state}, ${isClassic(g) ? 'generation' : 'epoch'} ${g.group_epoch}`);
  const changed = [...states].filter(([id, st]) => prev.states.get(id) !== st);
  if (changed.length && changed.length <= 4) for (const [id, st] of changed) parts.push(`${id} ${st}`);
  else if (changed.length) parts.push(`${changed.length} members changed state`);
  for (const id of prev.states.keys()) if (!states.has(id) && parts.length < 6) parts.push(`${id} left the group`);
  if (parts.length) announce(`${fmtT(g.now_ms ?? S.driver.now)}: ${parts.join('; ')}`);
}

/** Sets a text node's content only when it differs (no needless style and layout work). */
function setText(el, text) { if (el && el.textContent !== text) el.textContent = text; }

/** Action markers above the scrubber (grey: kept future actions, replayed when playing on). */
function renderMarks(max, now) {
  const acts = S.driver.actions;
  const key = `${acts.length}|${S.driver.applied}|${Math.round(max / 250)}`;
  if (key === S.marksKey) return;
  S.marksKey = key;
  $('marks').innerHTML = acts.map((a) => `<i class="${a.at_ms > now ? 'future' : ''}" style="left:${((100 * a.at_ms) / Math.max(1, max)).toFixed(2)}%" title="${fmtT(a.at_ms)} ${esc(a.action)}"></i>`).join('');
}

/** The break-it panel, under the invariants. */
function breakPanel() {
  if (!S.breakEl) { S.breakEl = document.createElement('div'); S.breakEl.id = 'breakit'; S.breakEl.className = 'panel breakit'; S.breakEl.dataset.testid = 'breakit'; $('invariants').after(S.breakEl); }
  return S.breakEl;
}

/** The same run again with other break-it switches (a spec of its own: the permalink keeps it). */
function restartBroken(b) {
  const d = S.driver, spec = structuredClone(d.spec);
  if (b) spec.break_it = b; else delete spec.break_it;
  pause();
  setDriver(new RemoteDriver(S.W, spec, d.actions.slice(), null));
  $('preset').value = '';
}

function ingest(f) {
  // A run that breaks an invariant goes back to the violating step itself (the frame may have
  // played past it, and a transient violation may already be over at the frame's end).
  if (noteViolation(S.broken, f, S.driver.now) && S.broken.at < S.driver.now) S.pendingSeek = S.broken.at;
  V.chart.ingest(f.newRecords);
  // DOM writes wait for render(), after its layout reads.
  for (const r of f.newRecords) S.pendingRecords.push(r);
  if (S.pendingRecords.length > 600) S.pendingRecords.splice(0, S.pendingRecords.length - 300);
  const bad = f.invariants.filter((i) => !i.ok);
  const evBad = f.events.filter((e) => e.kind === 'invariant_violated');
  if ((bad.length || evBad.length) && !S.violated) {
    S.violated = true;
    pause();
    toast(`Invariant violated: ${[...new Set([...bad.map((i) => i.name), ...evBad.map((e) => e.name)])].join(', ')} (playback paused)`, true);
  } else if (!bad.length) S.violated = false;
}

// ---- playback ---------------------------------------------------------------------------------

function speed() { return 10 ** Number($('speed').value); }
function showSpeed() { const s = speed(); $('speedv').textContent = `${s < 10 ? s.toFixed(1) : Math.round(s)}×`; }
function play() { S.playing = true; S.lastTs = null; S.holdAt = null; $('play').innerHTML = ICON_PAUSE; $('play').classList.add('playing'); }
function pause() { S.playing = false; S.speedAcc = null; if ($('speedeff')) { $('speedeff').textContent = ''; $('speedeff').hidden = true; } $('play').innerHTML = ICON_PLAY; $('play').classList.remove('playing'); }

// Worker time per step request: with many members the simulation cannot always run at the requested
// speed; playback then slows down (shown next to the speed) and results keep coming every frame.
const SIM_BUDGET_MS = 12;

/** The speed actually achieved over the last half second, shown when below the requested one. */
function trackSpeed(realMs, simMs) {
  const a = (S.speedAcc ??= { real: 0, sim: 0 });
  a.real += realMs; a.sim += simMs;
  if (a.real < 500) return;
  const eff = a.sim / a.real, want = speed(), el = $('speedeff');
  S.speedAcc = { real: 0, sim: 0 };
  const text = eff < 0.9 * want ? `≈${eff < 10 ? eff.toFixed(1) : Math.round(eff)}×` : '';
  if (el.textContent !== text) { el.textContent = text; el.hidden = !text; }
}

const failed = (e) => { pause(); fatal(e.message); };

// The simulation runs in a worker (RemoteDriver): each animation frame takes in what it has
// answered (S.inbox), asks for the next step when it is idle, and renders. A frame never waits
// for the simulation.
function loop(ts) {
  const t0 = performance.now();
  PERF.cur = PERF.on ? {} : null;
  PERF.lastRecv = takeRecvMs();
  if (PERF.cur && PERF.lastRecv) PERF.cur.recv = PERF.lastRecv;
  try {
    const d = S.driver;
    if (S.inbox.length) {
      const frames = S.inbox;
      S.inbox = [];
      timed('sim', () => { for (const f of frames) ingest(f); });
      S.needRender = true;
    }
    const replayed = () => { if (S.driver === d) { S.inbox = []; resetViews(); if (d.last) noteViolation(S.broken, d.last, d.now); S.needRender = true; } };
    if (!d.busy && S.pendingSeek != null) {
      const t = S.pendingSeek;
      S.pendingSeek = null;
      S.steps = [];
      d.seek(t).then(replayed, failed);
    } else if (!d.busy && S.steps.length) {
      // Single steps, one at a time in the order pressed (each starts where the last one ended).
      if (S.steps.shift() === 'back') d.stepBack().then(replayed, failed);
      else d.stepNext().then((frames) => { if (S.driver === d) { for (const f of frames) S.inbox.push(f); S.needRender = true; } }, failed);
    } else if (!d.busy && S.playing && S.tab !== 'live') {
      if (S.lastTs != null) {
        const real = Math.min(250, ts - S.lastTs);
        let ms = real * speed();
        // A lesson stops playback exactly at its next step's time (the worker may need several
        // requests to get there: playback pauses once it has).
        const stop = S.lessons?.nextStop(d.now);
        if (S.holdAt != null && d.now >= S.holdAt) { S.holdAt = null; pause(); ms = 0; }
        else if (stop != null && d.now + ms >= stop) { ms = stop - d.now; S.holdAt = stop; }
        if (ms >= 1 || (S.holdAt != null && ms > 0)) {
          const from = d.now;
          d.advance(ms, SIM_BUDGET_MS).then((frames) => {
            if (S.driver !== d) return;
            for (const f of frames) S.inbox.push(f);
            trackSpeed(real, d.now - from);
            PERF.worker += d.workerMs;
          }, failed);
        }
      }
      S.lastTs = ts;
    }
    if (PERF.cur && PERF.worker) { PERF.cur.worker = PERF.worker; PERF.worker = 0; }
    if (S.needRender) { render(); S.needRender = false; }
  } catch (e) {
    pause();
    fatal(e.message);
  }
  if (PERF.cur && Object.keys(PERF.cur).length) {
    PERF.cur.total = performance.now() - t0 + (PERF.cur.recv ?? 0);
    if (PERF.samples.length < PERF.max) PERF.samples.push(PERF.cur);
  }
  PERF.cur = null;
  requestAnimationFrame(loop);
}

// Single steps (sim-driver.js): forward to the next time something happens, back to the previous
// one; N back then N forward return to the same time and state hash.
// A held arrow key queues at most a few steps ahead.
function stepForward() { pause(); if (S.steps.length < 8) S.steps.push('fwd'); }
function stepBack() { pause(); if (S.steps.length < 8) S.steps.push('back'); }

// ---- actions ----------------------------------------------------------------------------------

/** Applies a user action now (in the worker); the simulation's refusal shows as a toast. */
function doAct(action) {
  const d = S.driver;
  return d.act(action).then(({ dropped, frames }) => {
    if (S.driver !== d) return;
    for (const f of frames) S.inbox.push(f);
    const { action: kind, ...args } = action;
    const line = document.createElement('div');
    line.textContent = `${fmtT(d.now)} ${kind} ${Object.values(args).map((v) => (typeof v === 'object' ? v.process_id ?? JSON.stringify(v) : short(String(v)))).join(' ')}`;
    $('action-log').prepend(line);
    if (dropped) toast(`Forked the timeline: ${dropped} later action${dropped > 1 ? 's' : ''} discarded.`);
    refreshActionInputs();
    S.needRender = true;
  }, (e) => toast(e.message, true));
}

function processes() {
  const s = new Set(S.driver.spec.processes.map((p) => p.process_id));
  for (const m of S.driver.last.snapshot.group.members) s.add(m.process_id);
  for (const a of S.driver.actions) if (a.action === 'add_process') s.add(a.process.process_id);
  return [...s];
}

function refreshActionInputs() {
  const procs = processes();
  const sel = $('a-process'), keep = sel.value;
  sel.innerHTML = procs.map((p) => `<option>${esc(p)}</option>`).join('');
  if (procs.includes(keep)) sel.value = keep;
  const topics = Object.keys(S.driver.last.snapshot.topics ?? S.driver.spec.topics);
  const ts = $('a-topic'), keepT = ts.value;
  ts.innerHTML = topics.map((t) => `<option>${esc(t)}</option>`).join('');
  if (topics.includes(keepT)) ts.value = keepT;
  $('a-assignor').value = S.driver.last.snapshot.group.assignor || 'sticky';
}

function globalAction(kind) {
  const num = (id) => Math.max(0, Math.round(Number($(id).value) || 0));
  switch (kind) {
    case 'add_member': return doAct({ action: 'add_member', process_id: $('a-process').value });
    case 'add_process': {
      const used = new Set(processes());
      let i = used.size + 1;
      while (used.has(`p${i}`)) i++;
      return doAct({ action: 'add_process', process: { process_id: `p${i}`, threads: Math.max(1, num('a-threads')) } });
    }
    case 'add_partitions': { // the action takes the new total
      const topic = $('a-topic').value, cur = S.driver.last.snapshot.topics?.[topic] ?? 0;
      return doAct({ action: 'add_partitions', topic, partitions: cur + Math.max(1, num('a-parts')) });
    }
    case 'create_topic': {
      const topic = $('a-newtopic').value.trim() || missingTopic();
      if (!topic) return toast('name the topic to create', true);
      return doAct({ action: 'create_topic', topic, partitions: Math.max(1, num('a-parts')) });
    }
    case 'set_standby_replicas': return doAct({ action: 'set_standby_replicas', replicas: num('a-standby') });
    case 'set_assignor': return doAct({ action: 'set_assignor', name: $('a-assignor').value });
    default: return doAct({ action: kind });
  }
}

/** A source topic of the topology that does not exist yet (for "missing source topic" presets). */
function missingTopic() {
  const have = S.driver.last.snapshot.topics;
  for (const st of S.driver.spec.topology.subtopologies) for (const t of st.source_topics) if (!(t in have)) return t;
  return '';
}

/** The action menu of member `id` at (x, y). `opener` (its ⋯ button) gets the focus back on close;
 * the items are reachable by keyboard (↑ ↓ Home End, Enter, Esc). */
function memberMenu(id, x, y, opener) {
  const m = S.driver.last.snapshot.group.members.find((mm) => mm.member_id === id);
  if (!m) return;
  const cut = m.client_status === 'partitioned';
  const items = [
    ['crash_member', 'Crash (stop heartbeating)', { member: id }],
    ['leave_member', 'Leave the group', { member: id }],
    ...(m.instance_id ? [['static_bounce', 'Static bounce (down 10 s)', { member: id, down_ms: 10000 }]] : []),
    cut ? ['heal_network', 'Heal network', { member: id }] : ['cut_network', 'Cut network', { member: id }],
    ...(m.classic ? classicItems(id) : [['request_shutdown', 'Request application shutdown', { member: id }]]),
    ['restart_member', 'Restart (new incarnation)', { member: id }],
  ];
  const menu = $('menu');
  if (!menu.hidden && menu.dataset.member === id && opener && S.menuOpener === opener) { closeMenu(); return; } // ⋯ again: toggle
  closeMenu(false);
  menu.dataset.member = id;
  menu.setAttribute('role', 'menu');
  menu.setAttribute('aria-label', `actions for member ${id}`);
  menu.innerHTML = `<div class="mh" role="presentation">${esc(id)} · ${esc(m.process_id)} · ${esc(m.client_status)}</div>` +
    items.map(([a, label], i) => `<button role="menuitem" tabindex="-1" data-i="${i}" data-testid="menu-${a}">${label}</button>`).join('');
  menu.hidden = false;
  menu.style.left = `${Math.max(0, Math.min(x, innerWidth - 220))}px`;
  menu.style.top = `${Math.max(0, Math.min(y, innerHeight - 200))}px`;
  S.menuOpener = opener ?? null;
  opener?.setAttribute('aria-expanded', 'true');
  menu.querySelector('[role=menuitem]').focus();
  menu.onclick = (e) => {
    const b = e.target.closest('button[data-i]');
    if (!b) return;
    const [a, , args] = items[+b.dataset.i];
    closeMenu();
    doAct({ action: a, ...args });
  };
  menu.onkeydown = (e) => {
    const all = [...menu.querySelectorAll('[role=menuitem]')], i = all.indexOf(document.activeElement);
    const go = (j) => { e.preventDefault(); all[(j + all.length) % all.length].focus(); };
    if (e.key === 'ArrowDown') go(i + 1);
    else if (e.key === 'ArrowUp') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(all.length - 1);
    else if (e.key === 'Escape') { e.preventDefault(); closeMenu(); }
    else if (e.key === 'Tab') closeMenu(false);
  };
}

/** Classic consumers: a stalled poll loop, shorter and longer than max.poll.interval.ms. */
function classicItems(id) {
  const poll = Number(S.driver.spec.classic?.max_poll_interval_ms ?? 300000), long = poll + 5000, short = Math.max(1000, Math.round(poll / 3));
  return [
    ['stall_member', `Stall the poll loop ${fmtT(short)} (under max.poll.interval.ms)`, { member: id, ms: short }],
    ['stall_member', `Stall the poll loop ${fmtT(long)} (over max.poll.interval.ms)`, { member: id, ms: long }],
  ];
}

/** Hides the member menu; gives the focus back to the ⋯ button that opened it (`refocus`). */
function closeMenu(refocus = true) {
  const menu = $('menu');
  if (menu.hidden) return;
  menu.hidden = true;
  const opener = S.menuOpener;
  S.menuOpener = null;
  opener?.setAttribute('aria-expanded', 'false');
  if (refocus && opener?.isConnected) opener.focus();
}

// ---- side-by-side -----------------------------------------------------------------------------

const Compare = {
  runs: null, key: null,
  build() {
    const d = S.driver, kind = $('cmp-kind').value;
    const mk = (label, specMod, pre) => {
      const spec = structuredClone(d.spec);
      specMod(spec);
      const actions = [...pre.map((a) => ({ at_ms: 0, ...a })), ...d.actions];
      const r = new Driver(S.W, spec, actions, null);
      return { label, r, header: null, grid: null, samples: [] };
    };
    if (d instanceof RecordDriver) throw new Error('a recorded history has no scenario to vary');
    const pairs = {
      standby: [['standby replicas 0', (s) => s, [{ action: 'set_standby_replicas', replicas: 0 }]], ['standby replicas 1', (s) => s, [{ action: 'set_standby_replicas', replicas: 1 }]]],
      assignor: [['assignor sticky', (s) => s, [{ action: 'set_assignor', name: 'sticky' }]], ['assignor mock', (s) => s, [{ action: 'set_assignor', name: 'mock' }]]],
      warmups: [['sticky (Kafka 4.4: no warm-ups)', (s) => s, [{ action: 'set_assignor', name: 'sticky' }]], ['sticky-warmups (KIP-441)', (s) => s, [{ action: 'set_assignor', name: 'sticky-warmups' }]]],
      seed: [[`seed ${d.spec.seed}`, (s) => s, []], [`seed ${d.spec.seed + 1}`, (s) => { s.seed += 1; }, []]],
      'classic-protocol': [['eager range', (s) => { s.classic = { ...s.classic, assignors: ['range'] }; }, []],
        ['cooperative-sticky', (s) => { s.classic = { ...s.classic, assignors: ['cooperative-sticky'] }; }, []]],
    }[kind];
    this.runs?.forEach((x) => x.r.free());
    this.runs = pairs.map(([l, f, p]) => mk(l, f, p));
    this.grids = [new AssignmentGrid($('cmp-a-grid')), new AssignmentGrid($('cmp-b-grid'))];
  },
  sync() {
    const d = S.driver, classic = d.spec.group_type === 'classic', sel = $('cmp-kind');
    // Only the comparisons that apply to this kind of group.
    const fits = (v) => (classic ? ['seed', 'classic-protocol'] : ['standby', 'assignor', 'warmups', 'seed']).includes(v);
    for (const o of sel.options) o.hidden = !fits(o.value);
    if (!fits(sel.value)) sel.value = classic ? 'classic-protocol' : 'standby';
    const key = `${$('cmp-kind').value}|${d.resetCount}|${d.actions.length}|${d.spec.seed}|${d.presetName}`;
    if (key !== this.key || !this.runs) {
      this.key = key;
      try { this.build(); } catch (e) { $('cmp-diff').textContent = `cannot build the runs: ${e.message}`; this.runs = null; return; }
    }
    const now = d.now;
    for (const x of this.runs) {
      if (x.r.now > now) {
        x.r.seek(now);
        while (x.samples.length && x.samples[x.samples.length - 1].t > now) x.samples.pop();
      }
      if (!x.samples.length) sampleRun(x, classic);
      // Forward in slices of simulated time, one metrics sample after each (the chart's resolution).
      while (x.r.now < now) { x.r.advance(Math.min(SAMPLE_MS, now - x.r.now)); sampleRun(x, classic); }
    }
    const gs = this.runs.map((x) => { const g = naturallyOrdered(x.r.last.snapshot.group, (x.order ??= {})); return classic ? classicAsTasks(g) : g; });
    // Who holds each task, per run: task -> {a: [process], s: [process]}; cells keyed task|process.
    const owners = gs.map((g) => {
      const o = new Map(), cell = new Map();
      for (const t of allTasks(g)) o.set(t, { a: [], s: [] });
      for (const m of g.members) {
        for (const t of m.active) { o.get(t)?.a.push(m.process_id); cell.set(`${t}|${m.process_id}`, 'A'); }
        for (const t of m.standby) { o.get(t)?.s.push(m.process_id); cell.set(`${t}|${m.process_id}`, (cell.get(`${t}|${m.process_id}`) ?? '') + 'S'); }
        for (const t of m.warmup) cell.set(`${t}|${m.process_id}`, (cell.get(`${t}|${m.process_id}`) ?? '') + 'W');
      }
      return { o, cell };
    });
    const diff = new Set();
    for (const k of new Set([...owners[0].cell.keys(), ...owners[1].cell.keys()])) if (owners[0].cell.get(k) !== owners[1].cell.get(k)) diff.add(k);
    const rows = [];
    let ndiff = 0;
    for (const t of new Set([...owners[0].o.keys(), ...owners[1].o.keys()])) {
      const [x, y] = [owners[0].o.get(t), owners[1].o.get(t)];
      const fmt = (o) => (!o ? 'n/a' : classic ? o.a.sort().join(',') || 'nobody' : `${o.a.sort().join(',') || '–'} / ${o.s.sort().join(',') || '–'}`);
      const fx = fmt(x), fy = fmt(y);
      if (fx !== fy) { ndiff++; rows.push(`<tr class="d"><td>${esc(t)}</td><td>${esc(fx)}</td><td>${esc(fy)}</td></tr>`); }
    }
    const field = (name, f) => { const [a, b] = gs.map(f); return `<tr class="${a !== b ? 'd' : ''}"><th>${name}</th><td>${esc(a)}</td><td>${esc(b)}</td></tr>`; };
    $('cmp-a-title').textContent = `A · ${this.runs[0].label}`;
    $('cmp-b-title').textContent = `B · ${this.runs[1].label}`;
    this.runs.forEach((x, i) => {
      (classic ? renderClassicHeader : renderHeader)($(i ? 'cmp-b-header' : 'cmp-a-header'), x.r.last.snapshot.group, `<span class="kv">hash <code>${esc(x.r.stateHash())}</code></span>`);
      this.grids[i].update(gs[i], S.order, diff);
    });
    renderMetrics($('cmp-metrics'), this.runs, classic, now);
    $('cmp-diff').innerHTML = `<table><tr><th></th><th>A · ${esc(this.runs[0].label)}</th><th>B · ${esc(this.runs[1].label)}</th></tr>
      ${field('state', (g) => g.state)}${classic ? '' : field('group epoch', (g) => g.group_epoch) + field('assignment epoch', (g) => g.assignment_epoch)}
      ${classic ? `${field('generation', (g) => g.classic.generation)}${field('partitions owned by nobody now', (g) => g.classic.owned_by_nobody.length)}
        <tr class="d"><th>stop-the-world so far</th>${this.runs.map((x) => `<td data-testid="cmp-stw">${(stopTheWorld(x.r.ownership ?? [], now).areaMs / 1000).toFixed(1)} partition·s</td>`).join('')}</tr>`
        : field('members reconciled', (g) => g.members.filter((m) => m.state === 'STABLE' && m.member_epoch === g.assignment_epoch).length)}
      <tr><th colspan="3">${ndiff ? `${ndiff} ${classic ? 'partition' : 'task'}${ndiff > 1 ? 's' : ''} placed differently (${classic ? 'owning consumers' : 'active processes / standby processes'}):` : `every ${classic ? 'partition' : 'task'} is placed the same way`}</th></tr>
      ${rows.slice(0, 40).join('')}</table>`;
  },
};

// Side-by-side metrics, computed from each run: a sample every SAMPLE_MS of simulated time.
const SAMPLE_MS = 250;

/** One sample of run `x`: who owns each task (the client-side ownership where the simulation has
 * it), tasks without an owner, the group epoch (classic: generation) and state. Tasks moved and
 * rebalances accumulate from sample to sample. */
function sampleRun(x, classic) {
  const raw = x.r.last.snapshot.group, g = classic ? classicAsTasks(raw) : raw;
  const prev = x.samples[x.samples.length - 1];
  const owner = new Map(prev?.owner ?? []);
  const held = new Map();
  for (const m of g.members) for (const t of (classic ? m.active : m.owned_active ?? m.active)) held.set(t, m.process_id);
  const tasks = allTasks(g);
  let moved = prev?.moved ?? 0;
  for (const [t, p] of held) { const o = owner.get(t); if (o != null && o !== p) moved++; owner.set(t, p); }
  const epoch = classic ? raw.classic?.generation ?? 0 : raw.group_epoch;
  const bumps = prev && epoch > prev.epoch && prev.epoch > 0 ? epoch - prev.epoch : 0;
  x.samples.push({ t: x.r.now, unowned: tasks.filter((t) => !held.has(t)).length, tasks: tasks.length, epoch, state: raw.state, moved, rebalances: (prev?.rebalances ?? 0) + bumps, owner });
}

/** Time to Stable: the first (from the start) and the last (since the group last left Stable)
 * periods the group spent before reaching Stable, from the samples. */
function stableTimes(samples) {
  const eps = [];
  let since = 0;
  for (const s of samples) {
    if (s.state === 'Stable' && since != null) { eps.push(s.t - since); since = null; } else if (s.state !== 'Stable' && since == null) since = s.t;
  }
  return { first: eps[0], last: eps[eps.length - 1], pending: since, count: eps.length };
}

function renderMetrics(el, runs, classic, now) {
  const val = runs.map((x) => {
    const last = x.samples[x.samples.length - 1], st = stableTimes(x.samples);
    const idle = x.samples.reduce((acc, s, i) => acc + (i ? s.unowned * (s.t - x.samples[i - 1].t) : 0), 0);
    return { moved: last.moved, rebalances: last.rebalances, unownedNow: last.unowned, idle, st };
  });
  const unit = classic ? 'partition' : 'task';
  const secs = (ms) => (ms == null ? '–' : `${(ms / 1000).toFixed(2)} s`);
  const row = (name, key, f) => { const [a, b] = val.map(f); return `<tr class="${a !== b ? 'd' : ''}"><th>${name}</th><td data-testid="cmp-metric-${key}-a">${esc(a)}</td><td data-testid="cmp-metric-${key}-b">${esc(b)}</td></tr>`; };
  // Tasks without an owner over time: both runs on one axis.
  const w = 360, h = 70, tmax = Math.max(now, 1), ymax = Math.max(1, ...runs.flatMap((x) => x.samples.map((s) => s.unowned)));
  const line = (x, cls) => `<polyline class="${cls}" fill="none" points="${x.samples.map((s) => `${((w * s.t) / tmax).toFixed(1)},${(h - (h * s.unowned) / ymax).toFixed(1)}`).join(' ')}"/>`;
  el.innerHTML = `<table data-now="${now}"><tr><th>metrics so far (${esc(fmtT(now))})</th><th>A · ${esc(runs[0].label)}</th><th>B · ${esc(runs[1].label)}</th></tr>
    ${row(`${unit}s moved (owner changed)`, 'moved', (v) => String(v.moved))}
    ${row(classic ? 'rebalances (generation bumps)' : 'rebalances (group epoch bumps)', 'rebalances', (v) => String(v.rebalances))}
    ${row('time to Stable, first', 'stable-first', (v) => secs(v.st.first))}
    ${row('time to Stable, last rebalance', 'stable-last', (v) => (v.st.pending != null ? `not Stable since ${secs(v.st.pending)}` : secs(v.st.last)))}
    ${row(`${unit}s without an owner now`, 'unowned', (v) => String(v.unownedNow))}
    ${row(`${unit}·s without an owner so far`, 'idle', (v) => (v.idle / 1000).toFixed(1))}</table>
    <figure class="cmp-chart"><svg viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${unit}s without an owner over time: A ${val[0].unownedNow} now, B ${val[1].unownedNow} now" data-testid="cmp-unowned-chart">${line(runs[0], 'la')}${line(runs[1], 'lb')}</svg>
    <figcaption>${unit}s without an owner over time (0 to ${ymax}, 0 to ${esc(fmtT(now))}): <span class="la">━ A</span> <span class="lb">━ B</span></figcaption></figure>`;
}

// ---- wiring -----------------------------------------------------------------------------------

function showTab(tab) {
  S.tab = tab;
  document.body.classList.toggle('tab-live', tab === 'live');
  for (const b of document.querySelectorAll('.tabs button')) b.classList.toggle('on', b.dataset.tab === tab);
  $('view-sim').hidden = tab !== 'sim';
  $('view-compare').hidden = tab !== 'compare';
  $('view-live').hidden = tab !== 'live';
  $('controls').hidden = tab === 'live';
  const u = new URL(location.href);
  if (tab === 'live') {
    u.searchParams.set('live', '');
    if (!S.liveStop) S.liveStop = startLive($('live-groups'), $('live-status'));
  } else {
    u.searchParams.delete('live');
    S.liveStop?.(); S.liveStop = null;
  }
  history.replaceState(null, '', u.toString().replace('live=&', 'live&').replace(/live=$/, 'live').replace('live=#', 'live#'));
  S.needRender = true;
}

function wire() {
  $('play').onclick = () => (S.playing ? pause() : play());
  $('stepf').onclick = stepForward;
  $('back').onclick = stepBack;
  $('speed').oninput = showSpeed;
  showSpeed();
  $('scrub').oninput = (e) => { pause(); S.pendingSeek = Number(e.target.value); };
  $('preset').onchange = (e) => { pause(); S.lessons?.close(); startPreset(e.target.value); };
  $('seed').onchange = (e) => {
    pause();
    const seed = Math.max(0, Math.round(Number(e.target.value) || 0));
    if (S.scaled && !S.driver.presetName) startScaled(S.scaled, seed);
    else startPreset(S.driver.presetName ?? S.presets[0].name, seed);
  };
  $('permalink').onclick = async () => {
    const text = await encodeTrace(S.driver.trace());
    const url = `${location.origin}${location.pathname}${location.search}#pl=${text}`;
    history.replaceState(null, '', url);
    try { await navigator.clipboard.writeText(url); toast('Permalink copied to the clipboard (and in the address bar).'); } catch { toast('Permalink is in the address bar.'); }
  };
  $('traces-btn').onclick = openTraces;
  S.editor = new ScenarioEditor($('editor'), {
    onOpen: (actions) => openEdited(actions).catch((e) => toast(e.message, true)),
    names: () => ({ members: S.driver.last.snapshot.group.members.map((m) => m.member_id), processes: processes() }),
  });
  $('help-btn').onclick = () => ($('help').hidden = false);
  $('lessons-btn').onclick = () => renderWelcome($('welcome'), (id) => S.lessons.open(id), () => localStorage.setItem('groupcoord-welcome-closed', '1'));
  $('help-close').onclick = () => ($('help').hidden = true);
  $('help').onclick = (e) => { if (e.target === $('help')) $('help').hidden = true; };
  for (const b of document.querySelectorAll('[data-act]')) b.onclick = () => globalAction(b.dataset.act);
  for (const b of document.querySelectorAll('.tabs button')) b.onclick = () => showTab(b.dataset.tab);
  $('cmp-kind').onchange = () => { Compare.key = null; S.needRender = true; };
  // A click outside the menu closes it; not the click on a ⋯ button, which opens it (in the same
  // click: closing here would hide the menu that click just opened).
  document.addEventListener('click', (e) => { if (!e.target.closest('#menu, .menu-btn')) closeMenu(false); });
  window.addEventListener('resize', () => { S.needRender = true; });
  window.addEventListener('hashchange', async () => {
    const pl = location.hash.match(/[#&]pl=([^&]+)/);
    if (pl && pl[1] !== S.lastOpened) { S.lastOpened = pl[1]; pause(); await openTrace(pl[1]); }
  });
  document.addEventListener('keydown', (e) => {
    if (e.target.matches('input:not([type=range]), select, textarea') || e.target.closest('#menu, #editor, #traces')) return;
    if (e.target.closest('.lanes-wrap') && /^(ArrowLeft|ArrowRight|Enter| )$/.test(e.key)) return; // the swimlanes' own keys
    if (e.key === ' ' && e.target.closest('.menu-btn')) return; // Space presses the focused ⋯ button
    if (e.key === ' ') { e.preventDefault(); S.playing ? pause() : play(); }
    else if (e.key === 'ArrowRight') { e.preventDefault(); stepForward(); }
    else if (e.key === 'ArrowLeft') { e.preventDefault(); stepBack(); }
    else if (e.key === '?') $('help').hidden = !$('help').hidden;
    else if (e.key === 'Escape') { $('help').hidden = true; closeMenu(); }
    else if (e.key === '+' || e.key === '=') { $('speed').value = Number($('speed').value) + 0.25; showSpeed(); }
    else if (e.key === '-') { $('speed').value = Number($('speed').value) - 0.25; showSpeed(); }
  });
}

let toastTimer;
function toast(msg, error = false) {
  const t = $('toast');
  t.textContent = msg;
  t.className = `toast${error ? ' error' : ''}`;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.hidden = true), error ? 6000 : 3500);
}

// Test and console hook: read-only access to the current run.
window.explorer = { timing: T, perf: PERF, views: V, ingest: (f) => { ingest(f); S.needRender = true; }, get driver() { return S.driver; }, get state() { return S; }, act: doAct, seek: (t) => { S.pendingSeek = t; } };

boot();
