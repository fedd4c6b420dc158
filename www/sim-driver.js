// Drives one WasmSimulation for the explorer: playback, forward history, time travel, permalinks.
//
// The run is fully described by (spec, actions): `actions` holds every TimedAction (preset ones and
// the user's), also those later than `now` (forward history kept after stepping back). Seeking
// replays with WasmSimulation.replayTo; playing forward applies each kept action at its time.

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
    this.seek(0);
  }

  /** Replays the run to time t (ms); resets the JS-side logs. */
  seek(t) {
    t = Math.max(0, Math.round(t));
    const done = this.actions.filter((a) => a.at_ms <= t);
    const sim = this.W.replayTo(this.spec, done, t);
    this.sim?.free();
    this.sim = sim;
    this.applied = done.length;
    this.messages = [];
    this.records = [];
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
    if (f.messages.length) {
      while (m.length && m[m.length - 1].seq >= f.messages[0].seq) m.pop();
      for (const e of f.messages) m.push(e);
      if (m.length > MSG_CAP) m.splice(0, m.length - MSG_CAP);
    }
    for (const r of f.records) this.records.push(r);
    f.events = events.concat(f.events);
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
    this.actions.splice(this.applied);
    this.actions.push({ at_ms: this.now, ...action });
    this.applied = this.actions.length;
    this.pull(0, events);
    this.maxTime = this.now;
    return dropped;
  }

  /** Time of the next thing that will happen (heartbeat, timer, in-flight message, kept action). */
  nextEventTime() {
    const now = this.now, g = this.last.snapshot.group;
    let t = Infinity;
    const consider = (x) => { if (x != null && x > now && x < t) t = x; };
    for (const mb of g.members) {
      consider(mb.next_heartbeat_ms); consider(mb.session_deadline_ms); consider(mb.rebalance_deadline_ms);
    }
    consider(g.initial_rebalance_deadline_ms);
    const lat = Math.max(1, this.spec.latency_ms?.[0] ?? 1);
    for (let i = this.messages.length - 1; i >= 0 && i > this.messages.length - 300; i--) {
      const m = this.messages[i];
      if (m.fate === 'in_flight') consider(now + lat); // arrival time unknown: creep forward
      else consider(m.received_ms);
    }
    if (this.applied < this.actions.length) consider(this.actions[this.applied].at_ms);
    return t === Infinity ? now + 1000 : t;
  }

  /** Time of the latest thing that happened before now (for step back). */
  prevEventTime() {
    const now = this.now;
    let t = 0;
    const consider = (x) => { if (x != null && x < now && x > t) t = x; };
    for (let i = this.messages.length - 1; i >= 0 && i > this.messages.length - 400; i--) {
      consider(this.messages[i].sent_ms); consider(this.messages[i].received_ms);
    }
    for (let i = this.records.length - 1; i >= 0 && i > this.records.length - 50; i--) consider(this.records[i].at_ms);
    for (const a of this.actions) consider(a.at_ms);
    return t;
  }

  stateHash() { return this.sim.stateHash(); }

  /** Everything a permalink needs. */
  trace() {
    return { v: 1, preset: this.presetName, spec: this.presetName ? undefined : this.spec, seed: this.spec.seed,
      actions: this.actions, t: this.now, h: this.stateHash() };
  }
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
