// Drives one WasmSimulation for the explorer: playback, forward history, time travel, permalinks.
//
// The run is fully described by (spec, actions): `actions` holds every TimedAction (preset ones and
// the user's), also those later than `now` (forward history kept after stepping back). Seeking back
// replays with WasmSimulation.replayTo; seeking forward and playing apply each kept action at its
// time.
//
// Single steps stop at "stops": the times at which something happened (an event, a heartbeat sent
// or received by the coordinator, a record, an action), collected from everything the run went
// through. Step forward goes from one simulation instant to the next until it reaches a stop; step
// back goes to the latest stop before now. Both see the same stops (the run is deterministic), and
// a step in one direction right after steps in the other retraces them exactly (the trails), so N
// steps back then N forward return to the same time and state hash.

let wasm = null;

/** Loads the wasm module once; returns the WasmSimulation class. */
export async function loadWasm() {
  if (!wasm) {
    const mod = await import('./pkg/groupcoord.js');
    await mod.default();
    wasm = mod;
  }
  return wasm.WasmSimulation;
}

const MSG_CAP = 20000;

export class Driver {
  constructor(W, spec, actions = [], presetName = null) {
    this.W = W;
    this.spec = structuredClone(spec);
    this.presetName = presetName;
    this.actions = [...actions].sort((a, b) => a.at_ms - b.at_ms);
    this.maxTime = 0;
    this.cost = { wall: 0.1, sim: 10 }; // decaying sums: wall ms per simulated ms while playing
    this.sim = null;
    this.stops = []; // sorted, unique
    this.phases = []; // group state changes {at_ms, state}, in time order (kept across replays)
    this.clearTrails();
    this.replay(0);
  }

  /** Goes to time t (ms): forward by playing on, back by replaying from the start. */
  seek(t) {
    this.clearTrails();
    return this.goTo(t);
  }

  goTo(t) {
    t = Math.max(0, Math.round(t));
    // Forward: played through, so the stops on the way are seen (a replay only gives the state).
    if (this.sim && t >= this.now) return this.advance(t - this.now);
    return this.replay(t);
  }

  /** Replays the run to time t (ms); resets the JS-side logs. */
  replay(t) {
    const done = this.actions.filter((a) => a.at_ms <= t);
    const sim = this.W.replayTo(this.spec, done, t);
    this.sim?.free();
    this.sim = sim;
    this.applied = done.length;
    this.messages = [];
    this.records = [];
    this.ownership = [];
    this.resetCount = (this.resetCount ?? 0) + 1;
    this.pull(0, []);
    return this.last;
  }

  get now() { return this.last.snapshot.now_ms; }

  /** One wasm frame call: steps `ms`, merges the new log entries. */
  pull(ms, events) {
    const m = this.messages;
    // Re-read from the oldest exchange still in flight (it may have its response now), else only
    // the new ones.
    let since = m.length ? m[m.length - 1].seq + 1 : 0;
    for (let i = m.length - 1; i >= 0 && i >= m.length - 1000; i--) if (m[i].fate === 'in_flight') since = m[i].seq;
    const recSince = this.records.length ? this.records[this.records.length - 1].seq + 1 : 0;
    const f = this.sim.frame(ms, since, recSince);
    if (this.spec.group_type === 'classic') {
      // Partitions owned by nobody over time (the stop-the-world band): the samples from the
      // last known time on (several can share one millisecond), replacing those of that time.
      const o = this.ownership;
      f.ownershipSince = o.length ? o[o.length - 1].at_ms : 0;
      f.ownership = this.sim.ownershipHistory(f.ownershipSince);
    }
    f.events = events.concat(f.events);
    mergeLogs(this, f);
    for (const e of f.events) this.addStop(e.at_ms);
    for (const x of f.messages) { this.addStop(x.sent_ms); if (x.received_ms >= 0) this.addStop(x.received_ms); }
    for (const r of f.records) this.addStop(r.at_ms);
    f.newRecords = f.records;
    this.last = f;
    this.maxTime = Math.max(this.maxTime, f.snapshot.now_ms);
    return f;
  }

  /** Advances `ms`, applying kept actions at their times. Returns the frame.
   *
   * `budgetMs` caps the wall time spent stepping: the simulation is stepped in slices sized from
   * its measured cost per simulated ms and stops at the slice that exhausts the budget, so a frame
   * stays short even when the simulation cannot keep up with the requested speed (playback then
   * runs slower than asked; `f.behindMs` says how much simulated time this frame did not cover).
   * One slice cannot be split: a single costly event (an assignment) can still exceed it. */
  advance(ms, budgetMs = Infinity) {
    ms = Math.max(0, Math.round(ms));
    let now = this.now;
    const end = now + ms, t0 = performance.now(), deadline = t0 + budgetMs;
    const events = [];
    const push = (evs) => { for (const e of evs) events.push(e); };
    while (now < end) {
      while (this.applied < this.actions.length && this.actions[this.applied].at_ms <= now) {
        push(this.sim.apply(actionOf(this.actions[this.applied])));
        this.applied++;
      }
      let stop = end;
      if (this.applied < this.actions.length) stop = Math.min(stop, Math.max(now + 1, this.actions[this.applied].at_ms));
      if (budgetMs !== Infinity) {
        const left = deadline - performance.now();
        if (left <= 0) break;
        // Half the remaining budget at the cost measured so far (ms of wall time per simulated ms).
        stop = Math.min(stop, now + Math.max(10, Math.floor(left / 2 / Math.max(1e-4, this.cost.wall / this.cost.sim))));
      }
      const a = performance.now();
      push(this.sim.step(stop - now));
      const spent = performance.now() - a, next = this.sim.now();
      // Cost over the recent slices taken together (a slice without events costs ~0: a ratio per
      // slice would swing to 0 and plan the next slice far too long).
      this.cost.wall = 0.8 * this.cost.wall + spent;
      this.cost.sim = 0.8 * this.cost.sim + (next - now);
      now = next;
    }
    while (now >= end && this.applied < this.actions.length && this.actions[this.applied].at_ms <= now) {
      push(this.sim.apply(actionOf(this.actions[this.applied])));
      this.applied++;
    }
    const f = this.pull(0, events);
    f.behindMs = Math.max(0, end - now);
    return f;
  }

  /** Applies a new user action now. Later kept actions are discarded (a fork); returns how many. */
  act(action) {
    const dropped = this.actions.length - this.applied;
    const events = this.sim.apply(action); // throws a JS Error when rejected: nothing recorded then
    this.clearTrails();
    this.stops.length = upperBound(this.stops, this.now); // later stops belonged to the old timeline
    while (this.phases.length && this.phases[this.phases.length - 1].at_ms > this.now) this.phases.pop();
    this.actions.splice(this.applied);
    this.actions.push({ at_ms: this.now, ...action });
    this.applied = this.actions.length;
    this.pull(0, events);
    this.maxTime = this.now;
    return dropped;
  }

  /** Time of the next instant the simulation processes something (event, timer, kept action);
   * one second on when nothing is scheduled. */
  nextEventTime() {
    const now = this.now;
    let t = this.sim.nextEventTime() ?? Infinity;
    if (this.applied < this.actions.length) t = Math.min(t, this.actions[this.applied].at_ms);
    return t === Infinity ? now + 1000 : Math.max(t, now + 1);
  }

  addStop(t) {
    const s = this.stops;
    if (!s.length || t > s[s.length - 1]) { s.push(t); return; }
    const i = lowerBound(s, t);
    if (s[i] !== t) s.splice(i, 0, t);
  }

  isStop(t) { const i = lowerBound(this.stops, t); return this.stops[i] === t; }

  /** The latest stop before now (0 when none): where step back goes. */
  prevStop() { const i = lowerBound(this.stops, this.now); return i > 0 ? this.stops[i - 1] : 0; }

  /** Forgets the steps to retrace (after playing, seeking or acting). */
  clearTrails() { this.trail = { back: [], fwd: [] }; }

  /** One step forward: back to where the last step back came from, else instant by instant to
   * the next stop (up to 200 instants). Returns the frames (the last one has the current snapshot). */
  stepNext() {
    const from = this.now, frames = [], redo = this.trail.back[this.trail.back.length - 1];
    if (redo && redo.to === from) {
      this.trail.back.pop();
      frames.push(this.advance(redo.from - from));
    } else {
      for (let i = 0; i < 200; i++) {
        frames.push(this.advance(this.nextEventTime() - this.now));
        if (this.isStop(this.now)) break;
      }
    }
    this.trail.fwd.push({ from, to: this.now });
    return frames;
  }

  /** One step back: to where the last step forward came from, else to the latest stop before now.
   * Replays the run (resets the JS-side logs). */
  stepBack() {
    const from = this.now, undo = this.trail.fwd[this.trail.fwd.length - 1];
    let t;
    if (undo && undo.to === from) { this.trail.fwd.pop(); t = undo.from; } else t = this.prevStop();
    this.goTo(t);
    this.trail.back.push({ from, to: this.now });
    return this.last;
  }

  free() { this.sim?.free(); this.sim = null; }

  /** The full log entry (decoded request/response and bytes) of heartbeat `seq`, or null. */
  message(seq) {
    const m = this.messages;
    let lo = 0, hi = m.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (m[mid].seq === seq) return m[mid];
      if (m[mid].seq < seq) lo = mid + 1; else hi = mid - 1;
    }
    return null;
  }

  stateHash() { return this.sim.stateHash(); }

  /** Everything a permalink needs. */
  trace() { return traceOf(this); }
}

/** Merges a frame's log entries into d.messages / d.records: re-read exchanges (still in flight
 * last time) replace their old entries. */
function mergeLogs(d, f) {
  const m = d.messages;
  if (f.messages.length) {
    while (m.length && m[m.length - 1].seq >= f.messages[0].seq) m.pop();
    for (const e of f.messages) m.push(e);
    if (m.length > MSG_CAP) m.splice(0, m.length - MSG_CAP);
  }
  for (const r of f.records) d.records.push(r);
  // Group state changes (the rebalance phases on the chart); a replay sees them again.
  for (const e of f.events ?? []) {
    if (e.kind !== 'state_change') continue;
    const p = (d.phases ??= []), last = p[p.length - 1];
    if (last && (last.at_ms > e.at_ms || (last.at_ms === e.at_ms && last.state === e.to))) continue;
    p.push({ at_ms: e.at_ms, state: e.to });
  }
  if (f.ownership) {
    const o = (d.ownership ??= []);
    while (o.length && o[o.length - 1].at_ms >= f.ownershipSince) o.pop();
    for (const x of f.ownership) o.push(x);
  }
}

function traceOf(d) {
  return { v: 1, preset: d.presetName, spec: d.presetName ? undefined : d.spec, seed: d.spec.seed,
    actions: d.actions, t: d.now, h: d.stateHash() };
}

/** First index of a sorted array whose value is >= x. */
function lowerBound(a, x) {
  let lo = 0, hi = a.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (a[mid] < x) lo = mid + 1; else hi = mid; }
  return lo;
}

/** First index of a sorted array whose value is > x. */
function upperBound(a, x) {
  let lo = 0, hi = a.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (a[mid] <= x) lo = mid + 1; else hi = mid; }
  return lo;
}

// ---- the run in a Web Worker ---------------------------------------------------------------------
//
// With 100 members one wasm call can take tens of ms (a heartbeat round of 100 members, an
// assignment), which the main thread cannot afford per animation frame. RemoteDriver runs the
// Driver in sim-worker.js and mirrors what the page reads (spec, actions, last frame, logs); its
// operations return Promises, applied to the mirror in order before they resolve. `busy` is true
// while one is pending (the page then renders without asking for more).

let worker = null, reqId = 0, sidSeq = 0, recvMs = 0;
/** Main-thread ms spent receiving worker replies since the last call. */
export function takeRecvMs() { const r = recvMs; recvMs = 0; return r; }
const waiting = new Map();
function getWorker() {
  if (worker) return worker;
  worker = new Worker(new URL('./sim-worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = (e) => {
    const t0 = performance.now();
    const data = e.data; // deserialized here: main-thread time, reported to the page's timing
    recvMs += performance.now() - t0;
    const p = waiting.get(data.id);
    waiting.delete(data.id);
    if (data.ok) p.ok(data.r); else p.fail(new Error(data.error));
  };
  worker.onerror = (e) => {
    const err = new Error(`simulation worker failed: ${e.message ?? 'cannot load sim-worker.js'}`);
    for (const p of waiting.values()) p.fail(err);
    waiting.clear();
    dispatchEvent(new ErrorEvent('error', { message: err.message }));
  };
  return worker;
}

export class RemoteDriver {
  /** Starts at time 0 synchronously (a local replay to 0 costs nothing), the worker in parallel. */
  constructor(W, spec, actions = [], presetName = null) {
    const local = new Driver(W, spec, actions, presetName);
    this.spec = local.spec; this.presetName = presetName; this.actions = local.actions;
    this.applied = local.applied; this.maxTime = local.maxTime; this.resetCount = local.resetCount;
    this.messages = local.messages; this.records = local.records; this.ownership = local.ownership; this.phases = local.phases; this.last = local.last;
    local.free();
    this.sid = ++sidSeq; this.pending = 0; this.workerMs = 0;
    this.call('open', { spec: this.spec, actions: this.actions, presetName });
  }

  get busy() { return this.pending > 0; }
  get now() { return this.last.snapshot.now_ms; }
  stateHash() { return this.last.snapshot.state_hash; }
  trace() { return traceOf(this); }

  call(op, args = {}) {
    const id = ++reqId;
    this.pending++;
    return new Promise((ok, fail) => {
      waiting.set(id, { ok, fail });
      getWorker().postMessage({ id, sid: this.sid, op, args });
    }).then((r) => { this.pending--; this.apply(r); return r; }, (e) => { this.pending--; throw e; });
  }

  apply(r) {
    if (!r) return;
    if (r.full) { this.messages = r.full.messages; this.records = r.full.records; this.ownership = r.full.ownership; this.phases = r.full.phases; this.last = r.full.last; }
    for (const f of r.frames ?? []) {
      mergeLogs(this, f);
      if (f.snapshot) this.last = f;
    }
    if (r.actions) { this.actions = r.actions; this.applied = r.applied; this.maxTime = r.maxTime; this.resetCount = r.resetCount; }
    this.workerMs = r.wallMs ?? 0;
  }

  /** Replays to t (resolves to the frame). */
  seek(t) { return this.call('seek', { t }).then(() => this.last); }
  /** Advances ms (at most budgetMs of the worker's time); resolves to the frames. */
  advance(ms, budgetMs = Infinity) { return this.call('advance', { ms, budgetMs }).then((r) => r.frames); }
  /** A user action now; resolves to {dropped, frames}, rejects with the simulation's message. */
  act(action) { return this.call('act', { action }).then((r) => ({ dropped: r.dropped, frames: r.frames })); }
  /** One step forward (Driver.stepNext); resolves to the frames. */
  stepNext() { return this.call('stepNext').then((r) => r.frames); }
  /** One step back (Driver.stepBack, a replay: the mirror's logs are replaced). */
  stepBack() { return this.call('stepBack').then(() => this.last); }
  /** The full entry of heartbeat `seq` (the mirror's entries leave out bodies and bytes). */
  message(seq) { return this.call('message', { seq }).then((r) => r.message); }
  /** The scrubber's range reaches at least t (a permalink's later actions). */
  raiseMaxTime(t) { return this.call('raiseMaxTime', { t }); }
  free() { if (worker) getWorker().postMessage({ id: 0, sid: this.sid, op: 'close' }); }
}

export function actionOf(timed) {
  const { at_ms, ...a } = timed;
  return a;
}

// ---- permalinks: #pl=<base64url(deflate-raw(JSON))> -------------------------------------------

export async function encodeTrace(obj) {
  const stream = new Blob([JSON.stringify(obj)]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export async function decodeTrace(text) {
  const b = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = Uint8Array.from(b, (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  return JSON.parse(await new Response(stream).text());
}
