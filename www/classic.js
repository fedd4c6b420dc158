// Classic consumer groups in the explorer (JoinGroup / SyncGroup / Heartbeat / LeaveGroup): the
// header, the "what you are seeing" explanation, the stop-the-world band (partitions owned by
// nobody over time) and the adapter that lets the task views show partitions. The protocol notes
// are docs/classic-protocol.md (§C1-§C9); the data shapes those of src/sim/api.rs.
import { esc, fmtT, short, watchSize } from './views.js';

export const isClassic = (g) => g.group_type === 'classic' && !!g.classic;

/** What each classic API does, one line (detail panel, swimlane legend). */
export const API_INFO = {
  JoinGroup: 'Joins or rejoins the group with the consumer\'s subscription and the assignors it supports. The coordinator holds the answer until every member has rejoined (or the rebalance timeout passed); then everyone gets the new generation, and the leader also gets every member\'s subscription (§C2).',
  SyncGroup: 'After the join: the leader sends the assignment it computed for every member, the followers send nothing and wait; each gets its own partitions back (§C3).',
  Heartbeat: 'Keeps the session alive every heartbeat.interval.ms. REBALANCE_IN_PROGRESS in the answer tells the consumer to rejoin (§C4.1).',
  LeaveGroup: 'A dynamic consumer closing: the coordinator removes it at once and starts a rebalance instead of waiting for the session timeout (§C4.3).',
  StreamsGroupHeartbeat: 'The only RPC of a streams member (KIP-1071): joins, reports owned tasks, receives its assignment.',
};

/** The classic group header (replaces the streams one for classic runs). */
export function renderClassicHeader(el, g, extra = '') {
  const c = g.classic, known = g.members.filter((m) => m.classic?.known_to_coordinator).length;
  const proto = g.members.find((m) => m.classic?.protocol)?.classic.protocol ?? '';
  const key = JSON.stringify([c.state, c.generation, c.protocol_name, c.leader, c.partitions.length, c.owned_by_nobody.length, known, proto, extra]);
  if (el._key === key) return;
  el._key = key;
  const gap = c.owned_by_nobody.length;
  el.innerHTML = `
    <span class="badge state-${esc(c.state)}" data-term="gs-${esc(c.state)}" tabindex="0" data-testid="group-state">${esc(c.state)}</span>
    <span class="gid">${esc(g.group_id)}</span>
    <span class="kv" data-term="generation">generation <b data-testid="generation">${c.generation}</b></span>
    ${c.protocol_name ? `<span class="kv" data-term="classic-assignor">assignor <b>${esc(c.protocol_name)}</b>${proto ? ` <small>(${esc(proto)})</small>` : ''}</span>` : ''}
    ${c.leader ? `<span class="kv" data-term="leader">leader <b>${esc(short(c.leader))}</b></span>` : ''}
    <span class="kv">members <b data-testid="member-count">${known}</b></span>
    <span class="kv">partitions <b>${c.partitions.length}</b></span>
    <span class="kv ${gap ? 'gap' : ''}" data-term="stop-the-world">owned by nobody <b data-testid="owned-by-nobody">${gap}</b></span>
    ${extra}`;
}

// ---- what you are seeing --------------------------------------------------------------------------

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const list = (xs) => xs.map((x) => `<b>${esc(short(x))}</b>`).join(', ');

/** What one exchange means, in words (null for the routine ones: a Heartbeat answered without
 * error). Only the light fields are needed (api, fate, error). */
export function narrate(m) {
  const err = m.error?.split(':')[0];
  const pending = m.fate === 'in_flight';
  switch (m.api) {
    case 'JoinGroup':
      if (err === 'MEMBER_ID_REQUIRED') return 'JoinGroup without a member id → MEMBER_ID_REQUIRED: the coordinator hands out an id; it joins again with it';
      if (pending) return 'sent JoinGroup: the answer comes when the join phase ends';
      if (m.fate === 'delivered' && !err) return 'JoinGroup answered: the new generation (the leader also gets every member\'s subscription)';
      break;
    case 'SyncGroup':
      if (pending) return 'sent SyncGroup: the answer comes once the leader\'s assignment is in';
      if (m.fate === 'delivered' && !err) return 'SyncGroup answered: it has its partitions for this generation';
      break;
    case 'Heartbeat':
      if (err === 'REBALANCE_IN_PROGRESS') return 'Heartbeat → REBALANCE_IN_PROGRESS: it learns of the rebalance and rejoins';
      if (err === 'ILLEGAL_GENERATION' || err === 'UNKNOWN_MEMBER_ID') return `Heartbeat → ${err}: it missed a rebalance or was removed, and rejoins`;
      if (!err) return null;
      break;
    case 'LeaveGroup':
      return 'LeaveGroup: it leaves now, and a rebalance starts without waiting for its session timeout';
    default:
      return null;
  }
  if (m.fate === 'lost_request' || m.fate === 'lost_response') return `${m.api}: ${m.fate.replace('_', ' ')}`;
  return err ? `${m.api} → ${err}` : null;
}

/** The short explanation of the current phase of a classic group, for teaching: what the group
 * is doing, why, and what to look at. Rebuilt only when what it says changes. `messages`: the
 * run's message log (the last few exchanges are told in words). */
export function explainClassic(el, g, spec, stw, messages = []) {
  const c = g.classic;
  const members = g.members.filter((m) => m.classic);
  const proto = members.find((m) => m.classic.protocol)?.classic.protocol ?? ((spec.classic?.assignors ?? ['range']).every((a) => a === 'cooperative-sticky') ? 'cooperative' : 'eager');
  const assignor = c.protocol_name ?? (spec.classic?.assignors ?? ['range'])[0];
  const by = (st) => members.filter((m) => m.classic.client_state === st).map((m) => m.member_id);
  const joining = by('joining'), syncing = by('awaiting_sync'), revoking = by('revoking');
  const notYet = members.filter((m) => m.classic.known_to_coordinator && ['stable', 'unjoined', 'revoking'].includes(m.classic.client_state)).map((m) => m.member_id);
  const stalled = members.filter((m) => m.classic.stalled_until_ms != null).map((m) => m.member_id);
  const gap = c.owned_by_nobody.length, P = c.partitions.length;
  const hb = spec.classic?.heartbeat_interval_ms ?? 3000, session = spec.classic?.session_timeout_ms ?? 45000, poll = spec.classic?.max_poll_interval_ms ?? 300000;
  let phase;
  switch (c.state) {
    case 'Empty':
    case 'Dead':
      phase = `<b>No consumer in the group yet.</b> A consumer's first JoinGroup, without a member id, is answered MEMBER_ID_REQUIRED with the id to use; its second JoinGroup starts the first rebalance, which waits group.initial.rebalance.delay.ms for others to join (§C2.1, §C2.4).`;
      break;
    case 'PreparingRebalance':
      phase = `<b>Rebalance, join phase</b> (generation ${c.generation} → ${c.generation + 1}). Something changed (a member joined, left or timed out), so the coordinator waits until every member has sent JoinGroup again, at most the rebalance timeout (max.poll.interval.ms = ${fmtT(poll)}). Members learn of it from REBALANCE_IN_PROGRESS in their Heartbeat answers (§C2.2).`
        + (joining.length ? ` JoinGroup sent, held at the coordinator: ${list(joining)}.` : '')
        + (notYet.length ? ` Not rejoined yet: ${list(notYet)}.` : '')
        + (proto === 'eager'
          ? ` <span class="warn">Eager (${esc(assignor)}): a consumer revokes <i>all</i> its partitions when it rejoins and gets new ones only after the SyncGroup, so the whole group waits for its slowest member: ${gap} of ${P} partitions are owned by nobody now — the stop-the-world gap, red in the band below.</span>`
          : ` <span class="good">Cooperative (${esc(assignor)}): consumers keep their partitions while they rejoin and go on consuming; only partitions that move to another consumer are given up, after the SyncGroup. ${gap} of ${P} partitions are owned by nobody now.</span>`);
      break;
    case 'CompletingRebalance':
      phase = `<b>Rebalance, sync phase</b> (generation ${c.generation}). Every member got its JoinGroup answer. The leader${c.leader ? ` ${list([c.leader])}` : ''} received everyone's subscriptions and runs the <b>${esc(assignor)}</b> assignor <i>on the client</i>, then sends the result in its SyncGroup; the followers' SyncGroups wait at the coordinator until it arrives (§C3).`
        + (syncing.length ? ` Waiting for SyncGroup answers: ${list(syncing)}.` : '');
      break;
    case 'Stable':
      phase = `<b>Stable at generation ${c.generation}.</b> Every consumer has its partitions and sends a Heartbeat every ${fmtT(hb)}. A join, a leave, or a consumer silent for the session timeout (${fmtT(session)}) starts the next rebalance (§C4).`
        + (revoking.length ? ` ${list(revoking)} revoked partitions and rejoin${proto === 'cooperative' ? ': cooperative rebalancing hands revoked partitions out in a second, follow-up rebalance' : ''}.` : '')
        + (gap ? ` <span class="warn">${gap} of ${P} partitions are owned by nobody yet.</span>` : '');
      break;
    default:
      phase = `<b>${esc(c.state)}</b>`;
  }
  const statics = members.filter((m) => m.instance_id).length;
  const notes = [];
  if (statics) notes.push(`${plural(statics, 'static member')} (group.instance.id): a static consumer that restarts within the session timeout gets its partitions back without a rebalance (§C4.4).`);
  if (stalled.length) notes.push(`${list(stalled)}: poll loop stalled — heartbeats go on, but no JoinGroup is sent until the stall ends; a stall longer than max.poll.interval.ms during a rebalance gets the member removed.`);
  const total = stw ? `Stop-the-world so far: <b data-testid="stw-total">${(stw.areaMs / 1000).toFixed(1)}</b> partition·s without an owner${stw.longestMs ? `, longest gap ${fmtT(stw.longestMs)}` : ''}.` : '';
  // The latest few exchanges that mean something (newest first).
  const recent = [];
  for (let i = messages.length - 1; i >= 0 && recent.length < 3 && i >= messages.length - 200; i--) {
    const m = messages[i], text = narrate(m);
    if (text) recent.push(`<li><span class="t">${fmtT(m.sent_ms)}</span> <b>${esc(short(m.member_id))}</b> ${esc(text)}</li>`);
  }
  const html = `<h3>What you are seeing <small>classic consumer group, ${esc(proto)} rebalancing</small></h3>
    <p class="phase">${phase}</p>${notes.map((n) => `<p class="note">${n}</p>`).join('')}<p class="note">${total}</p>
    ${recent.length ? `<ul class="recent" data-testid="explain-recent">${recent.join('')}</ul>` : ''}`;
  if (el._html !== html) { el._html = html; el.innerHTML = html; el.dataset.state = c.state; }
}

// ---- stop-the-world band -----------------------------------------------------------------------

/** Partition-ms without an owner up to `now`, the longest stretch with any partition unowned, and
 * the largest count, from the ownership samples (each holds until the next one). */
export function stopTheWorld(samples, now) {
  let areaMs = 0, longestMs = 0, max = 0, since = null;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i], end = Math.min(now, i + 1 < samples.length ? samples[i + 1].at_ms : now);
    if (s.at_ms > now) break;
    areaMs += s.owned_by_nobody * Math.max(0, end - s.at_ms);
    max = Math.max(max, s.owned_by_nobody);
    if (s.owned_by_nobody > 0) { if (since == null) since = s.at_ms; longestMs = Math.max(longestMs, end - since); } else since = null;
  }
  return { areaMs, longestMs, max };
}

/** The band under the epoch chart: how many partitions nobody owns over time (red), out of the
 * subscribed ones (grey), on the chart's time axis. */
export class OwnershipBand {
  constructor(el) {
    this.el = el; this.width = 0;
    watchSize(el, (r) => { this.width = r.width; this._key = null; });
  }
  render(samples, now) {
    const w = Math.max(300, this.width || 800), h = 74, L = 34, R = 8, T = 18, B = 6;
    const key = `${samples.length}|${samples.length ? samples[samples.length - 1].at_ms : 0}|${Math.round(now / 100)}|${w}`;
    if (key === this._key) return;
    this._key = key;
    const stw = stopTheWorld(samples, now);
    const tmax = Math.max(now, 1000), P = Math.max(1, ...samples.map((s) => s.partitions));
    const x = (t) => L + ((w - L - R) * Math.min(t, tmax)) / tmax, y = (v) => T + (h - T - B) * (1 - v / P);
    let area = '', total = '';
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i];
      if (s.at_ms > now) break;
      const end = i + 1 < samples.length ? Math.min(samples[i + 1].at_ms, now) : now;
      if (s.owned_by_nobody > 0) area += `M${x(s.at_ms).toFixed(1)},${y(0).toFixed(1)}V${y(s.owned_by_nobody).toFixed(1)}H${Math.max(x(end), x(s.at_ms) + 1).toFixed(1)}V${y(0).toFixed(1)}Z`;
      total += `${i ? 'H' : 'M'}${x(s.at_ms).toFixed(1)}${i ? 'V' : ','}${y(s.partitions).toFixed(1)}`;
    }
    if (total) total += `H${x(now).toFixed(1)}`;
    this.el.dataset.areaMs = String(stw.areaMs);
    this.el.dataset.max = String(stw.max);
    this.el.dataset.longestMs = String(stw.longestMs);
    this.el.innerHTML = `<svg width="${w}" height="${h}" class="chart stw" role="img" aria-label="partitions owned by nobody over time: ${(stw.areaMs / 1000).toFixed(1)} partition-seconds, at most ${stw.max} of ${P} at once">
      <text x="${L}" y="11" class="t">partitions owned by nobody (stop-the-world) · ${(stw.areaMs / 1000).toFixed(1)} partition·s · at most ${stw.max} of ${P}${stw.longestMs ? ` · longest ${fmtT(stw.longestMs)}` : ''}</text>
      <line x1="${L}" x2="${w - R}" y1="${y(0)}" y2="${y(0)}" class="grid"/>
      <text x="${L - 4}" y="${y(0) + 4}" text-anchor="end">0</text><text x="${L - 4}" y="${y(P) + 4}" text-anchor="end">${P}</text>
      <path d="${total}" class="stw-total"><title>subscribed partitions</title></path>
      <path d="${area}" class="stw-gap"><title>partitions owned by nobody</title></path></svg>`;
    return stw;
  }
}

// ---- the task views showing partitions -----------------------------------------------------------

/** A classic group in the shape the task grid and side-by-side read: partitions as tasks, each
 * consumer's owned partitions as its active ones (the coordinator keeps no target). */
const AS_TASKS = new WeakMap();
export function classicAsTasks(g) {
  if (AS_TASKS.has(g)) return AS_TASKS.get(g);
  const none = [];
  const members = g.members.map((m) => {
    const c = m.classic, owned = c?.owned_partitions ?? none;
    return { ...m, state: c && c.client_state !== 'stopped' ? c.client_state : null, active: owned, target_active: owned, standby: none, warmup: none, pending_revocation: none, target_standby: none, target_warmup: none };
  });
  const out = { ...g, tasks: g.classic.partitions, members };
  AS_TASKS.set(g, out);
  return out;
}

// ---- the consumer protocol inside JoinGroup / SyncGroup ---------------------------------------------
//
// The coordinator never reads a classic member's metadata or assignment: they are opaque bytes of
// the client's "consumer" protocol (Kafka's ConsumerProtocolSubscription / ConsumerProtocolAssignment
// schemas). The detail panel decodes them for the reader.

/** A bounds-checked big-endian reader; every read returns null past the end. */
function reader(b) {
  let i = 0;
  const has = (n) => i + n <= b.length;
  const r = {
    get done() { return i === b.length; },
    i16() { if (!has(2)) return null; const v = (b[i] << 8) | b[i + 1]; i += 2; return v >= 0x8000 ? v - 0x10000 : v; },
    i32() { if (!has(4)) return null; const v = ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) | 0; i += 4; return v; },
    str() { const n = r.i16(); if (n == null || n < -1 || !has(Math.max(0, n))) return undefined; if (n === -1) return null; const s = String.fromCharCode(...b.slice(i, i + n)); i += n; return s; },
    bytes() { const n = r.i32(); if (n == null || n < -1 || !has(Math.max(0, n))) return undefined; if (n === -1) return null; i += n; return n; },
    array(item) {
      const n = r.i32();
      if (n == null || n < -1 || n > b.length) return undefined;
      const out = [];
      for (let k = 0; k < n; k++) { const v = item(); if (v === undefined) return undefined; out.push(v); }
      return out;
    },
  };
  return r;
}

const topicPartitions = (r) => () => {
  const topic = r.str(), parts = r.array(() => r.i32() ?? undefined);
  return topic == null || parts === undefined ? undefined : [topic, parts];
};

/** Decodes ConsumerProtocolSubscription (v0-v3) bytes, or null when they are not one. */
export function decodeSubscription(bytes) {
  const r = reader(bytes), v = r.i16();
  if (v == null || v < 0 || v > 3) return null;
  const topics = r.array(() => r.str() ?? undefined), userData = r.bytes();
  if (topics === undefined || userData === undefined) return null;
  const out = { version: v, topics, user_data_bytes: userData };
  if (v >= 1) { out.owned_partitions = r.array(topicPartitions(r)); if (out.owned_partitions === undefined) return null; }
  if (v >= 2) { out.generation_id = r.i32(); if (out.generation_id == null) return null; }
  if (v >= 3) { out.rack_id = r.str(); if (out.rack_id === undefined) return null; }
  return r.done ? out : null;
}

/** Decodes ConsumerProtocolAssignment (v0-v3) bytes, or null when they are not one. */
export function decodeAssignment(bytes) {
  const r = reader(bytes), v = r.i16();
  if (v == null || v < 0 || v > 3) return null;
  const assigned = r.array(topicPartitions(r)), userData = r.bytes();
  if (assigned === undefined || userData === undefined || !r.done) return null;
  return { version: v, assigned_partitions: assigned, user_data_bytes: userData };
}

const isByteArray = (v) => Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0 && x <= 255);
const tp = (list) => (list.length ? list.map(([t, ps]) => `${t} [${ps.join(',')}]`).join(', ') : 'none');

/** One line for a byte array of a classic request or response: the consumer protocol decoded
 * (`key` hints which schema: `metadata` is a subscription), else its hex. */
export function describeBytes(key, bytes) {
  const hex = bytes.map((x) => x.toString(16).padStart(2, '0')).join('');
  const sub = () => { const s = decodeSubscription(bytes); return s && `ConsumerProtocolSubscription v${s.version}: topics [${s.topics.join(', ')}]${s.owned_partitions ? `, owned ${tp(s.owned_partitions)}` : ''}${s.generation_id != null ? `, generation ${s.generation_id}` : ''}${s.user_data_bytes ? `, user data ${s.user_data_bytes} B` : ''}`; };
  const asg = () => { const a = decodeAssignment(bytes); return a && `ConsumerProtocolAssignment v${a.version}: ${tp(a.assigned_partitions)}${a.user_data_bytes ? `, user data ${a.user_data_bytes} B` : ''}`; };
  const text = key === 'metadata' ? sub() ?? asg() : asg() ?? sub();
  return `${text ?? `0x${hex}`} (${bytes.length} B)`;
}

/** JSON.stringify replacer: byte arrays as one decoded line each (see describeBytes). */
export function bytesReplacer(key, value) {
  if (!isByteArray(value) || value.length < 2) return value;
  return describeBytes(key, value);
}
