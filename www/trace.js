// Traces in and out: a run exported as JSON and imported again, and a real server's records
// (`groupcoord log export`, `GET /api/groups/{id}/trace`) replayed with the explorer's time travel.
//
// Format `groupcoord-trace` version 1 (www/README.md, "Traces"). Import never trusts the file:
// size and counts are bounded before anything is built, and every problem is an Error whose
// message names the field.

import { fmtT } from './views.js';

export const TRACE_FORMAT = 'groupcoord-trace';
export const TRACE_VERSION = 1;
/** Largest file the explorer reads. */
export const MAX_TRACE_BYTES = 32 * 1024 * 1024;
const MAX_ACTIONS = 10000;
const MAX_RECORDS = 200000;
const MAX_MESSAGES = 100000;
const MAX_TIME_MS = 9e15;

/** A simulated run as a trace: what replays it (spec, actions) and what it showed (records,
 * messages, the state hash at `t`). */
export function exportRun(d) {
  const light = (m) => ({ seq: m.seq, sent_ms: m.sent_ms, received_ms: m.received_ms, member_id: m.member_id, api: m.api, api_version: m.api_version, error: m.error ?? null, fate: m.fate });
  return {
    format: TRACE_FORMAT, version: TRACE_VERSION, source: 'simulation',
    group_id: d.spec.group_id, preset: d.presetName ?? null,
    spec: d.spec, actions: d.actions, t: d.now, state_hash: d.stateHash(),
    records: d.records.filter((r) => r.at_ms <= d.now),
    messages: d.messages.filter((m) => m.sent_ms <= d.now).map(light),
  };
}

/** Offers `obj` as a download named `name`. */
export function download(obj, name) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(obj)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url; a.download = name; a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const isObj = (v) => v != null && typeof v === 'object' && !Array.isArray(v);
const isMs = (v) => Number.isInteger(v) && v >= 0 && v <= MAX_TIME_MS;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;

function list(v, name, max) {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new Error(`"${name}" must be an array`);
  if (v.length > max) throw new Error(`"${name}" has ${v.length} entries; at most ${max} are read`);
  return v;
}

/** Parses and checks a trace (text or bytes length `size`); throws an Error naming the problem. */
export function parseTrace(text) {
  if (typeof text !== 'string') throw new Error('the trace is not text');
  if (text.length > MAX_TRACE_BYTES) throw new Error(`the file is ${(text.length / 1048576).toFixed(1)} MB; traces of at most ${MAX_TRACE_BYTES / 1048576} MB are read`);
  let t;
  try { t = JSON.parse(text); } catch (e) { throw new Error(`not JSON (${e.message.slice(0, 120)})`); }
  if (!isObj(t)) throw new Error('a trace is a JSON object');
  if (t.format !== TRACE_FORMAT) throw new Error(`not a groupcoord trace ("format" is ${JSON.stringify(t.format)?.slice(0, 40)}, expected "${TRACE_FORMAT}")`);
  if (t.version !== TRACE_VERSION) throw new Error(`trace version ${JSON.stringify(t.version)?.slice(0, 20)} is not supported (this explorer reads version ${TRACE_VERSION})`);
  if (typeof t.group_id !== 'string' || !t.group_id || t.group_id.length > 249) throw new Error('"group_id" must be a group id (1 to 249 characters)');
  const messages = list(t.messages, 'messages', MAX_MESSAGES);
  if (t.source === 'simulation') {
    if (!isObj(t.spec)) throw new Error('"spec" (the scenario) must be an object');
    if (!Array.isArray(t.spec.processes) || !isObj(t.spec.topics)) throw new Error('"spec" needs "processes" (an array) and "topics" (an object)');
    const actions = list(t.actions, 'actions', MAX_ACTIONS);
    actions.forEach((a, i) => {
      if (!isObj(a) || typeof a.action !== 'string') throw new Error(`actions[${i}] needs an "action" name`);
      if (!isMs(a.at_ms)) throw new Error(`actions[${i}].at_ms must be a whole number of ms from 0`);
    });
    if (!isMs(t.t)) throw new Error('"t" (the time shown) must be a whole number of ms from 0');
    if (t.state_hash != null && typeof t.state_hash !== 'string') throw new Error('"state_hash" must be a string');
    list(t.records, 'records', MAX_RECORDS);
    return { ...t, actions, messages };
  }
  if (t.source === 'server') {
    if (!isObj(t.topics) || Object.entries(t.topics).some(([n, p]) => !Number.isInteger(p) || p < 0 || !/^[A-Za-z0-9._-]{1,249}$/.test(n))) throw new Error('"topics" must map topic names to partition counts');
    const records = list(t.records, 'records', MAX_RECORDS);
    if (!records.length) throw new Error('the trace holds no records');
    records.forEach((r, i) => {
      if (!isObj(r)) throw new Error(`records[${i}] must be an object`);
      if (!Number.isInteger(r.at_ms) || Math.abs(r.at_ms) > MAX_TIME_MS) throw new Error(`records[${i}].at_ms must be a whole number of ms`);
      if (typeof r.key !== 'string' || !r.key || !HEX.test(r.key)) throw new Error(`records[${i}].key must be hex bytes`);
      if (typeof r.value !== 'string' || !HEX.test(r.value)) throw new Error(`records[${i}].value must be hex bytes ("" for a tombstone)`);
      if (i && r.at_ms < records[i - 1].at_ms) throw new Error(`records[${i}] is older than the record before it`);
      if (!isObj(r.record) || typeof r.record.type !== 'string' || (r.record.value != null && typeof r.record.value !== 'object')) throw new Error(`records[${i}].record must be the record as JSON ({type, value, …})`);
    });
    return { ...t, records, messages };
  }
  throw new Error(`"source" must be "simulation" or "server", not ${JSON.stringify(t.source)?.slice(0, 40)}`);
}

// ---- a server's records, replayed ----------------------------------------------------------

const EMPTY_GROUP = (id) => ({ group_id: id, state: 'Dead', group_epoch: -1, assignment_epoch: -1, topology_epoch: null, validated_topology_epoch: -1, assignor: '', num_standby_replicas: 0, tasks: [], stateful_subtopologies: [], members: [], statuses: [], initial_rebalance_deadline_ms: null, group_type: 'streams', classic: null });

/**
 * The explorer's driver interface (see RemoteDriver in sim-driver.js) over a server's records:
 * time is the records' append time since the first one; the state at t is the coordinator after
 * replaying every record appended at or before t (`WasmRecordReplay`). Steps go record time by
 * record time; nothing can be acted on (the history is recorded).
 */
export class RecordDriver {
  constructor(mod, trace) {
    const rs = trace.records;
    this.replay = new mod.WasmRecordReplay(trace.group_id, Object.entries(trace.topics).map(([n, p]) => `${n}=${p}`).join(','), rs.map((r) => `${r.key}:${r.value}`).join('\n'));
    this.t0 = rs[0].at_ms;
    this.entries = rs.map((r, i) => ({ seq: i, at_ms: r.at_ms - this.t0, cause: r.cause ?? 'log', summary: r.summary ?? '', record: r.record }));
    this.times = [...new Set(this.entries.map((e) => e.at_ms))];
    this.source = trace;
    this.spec = { name: `trace of ${trace.group_id}`, description: 'a server\'s recorded history', seed: 0, group_id: trace.group_id, topics: trace.topics, topology: { subtopologies: [] }, processes: [], configs: trace.configs ?? {}, group_type: 'streams', recorded: true };
    this.presetName = null; this.actions = []; this.applied = 0; this.messages = []; this.ownership = []; this.phases = [];
    this.maxTime = this.times[this.times.length - 1]; this.resetCount = 0; this.busy = false; this.workerMs = 0;
    // The group's type (streams, consumer or classic) is the one its records leave.
    this.replay.seekTo(rs.length);
    this.spec.group_type = this.replay.view()?.group_type ?? 'streams';
    this.go(0, true);
  }

  get now() { return this.last.snapshot.now_ms; }
  stateHash() { return this.last.snapshot.state_hash; }
  trace() { return null; }

  /** Count of records appended at or before t. */
  countAt(t) { let lo = 0, hi = this.entries.length; while (lo < hi) { const m = (lo + hi) >> 1; if (this.entries[m].at_ms <= t) lo = m + 1; else hi = m; } return lo; }

  go(t, reset) {
    t = Math.max(0, Math.round(t));
    const n = this.countAt(t), before = reset ? 0 : this.records?.length ?? 0;
    this.replay.seekTo(n);
    const group = this.replay.view() ?? { ...EMPTY_GROUP(this.spec.group_id), group_type: this.spec.group_type };
    this.records = this.entries.slice(0, n);
    if (reset) this.resetCount++;
    const newRecords = reset ? this.records : this.entries.slice(before, n);
    const prev = this.last?.snapshot.group.state;
    const events = prev && prev !== group.state ? [{ kind: 'state_change', at_ms: t, from: prev, to: group.state }] : [];
    this.last = { events, snapshot: { now_ms: t, group, topics: this.spec.topics, state_hash: `${n}/${this.entries.length} records`, steps: n }, messages: [], records: newRecords, newRecords, invariants: [] };
    return this.last;
  }

  seek(t) { return Promise.resolve(this.go(t, true)); }
  advance(ms) { return Promise.resolve([this.go(Math.min(this.now + ms, this.maxTime), false)]); }
  /** Next record time after now (or stays at the end). */
  stepNext() { const t = this.times.find((x) => x > this.now); return Promise.resolve([this.go(t ?? this.now, false)]); }
  stepBack() { const ts = this.times.filter((x) => x < this.now); return Promise.resolve(this.go(ts.length ? ts[ts.length - 1] : 0, true)); }
  act() { return Promise.reject(new Error('a recorded trace cannot be acted on: it is the history of a real group')); }
  message() { return Promise.resolve(null); }
  raiseMaxTime() { return Promise.resolve(); }
  free() { this.replay?.free(); this.replay = null; }
  /** What the header says about the source. */
  describe() { return `recorded on a server: ${this.entries.length} records of ${this.spec.group_id} over ${fmtT(this.maxTime)}${this.source.compacted_records ? ` (${this.source.compacted_records} older records compacted)` : ''}${this.source.untimed_records ? `, ${this.source.untimed_records} without an append time` : ''}`; }
}
