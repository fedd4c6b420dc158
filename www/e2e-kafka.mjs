// Minimal group clients for the e2e tests, over TCP to a real `groupcoord serve`, one request in
// flight. A KIP-848 consumer: ConsumerGroupHeartbeat v0, reporting as owned what the last answer
// assigned (it never processes anything, so revoking is immediate). A classic consumer: JoinGroup,
// SyncGroup (the leader assigns), Heartbeat and LeaveGroup (startClassicConsumer, below).
import net from 'node:net';

const CONSUMER_GROUP_HEARTBEAT = 68;

/** Unsigned varint. */
function uvarint(n) {
  const out = [];
  while (n > 0x7f) { out.push((n & 0x7f) | 0x80); n >>>= 7; }
  out.push(n);
  return Buffer.from(out);
}
const int16 = (n) => { const b = Buffer.alloc(2); b.writeInt16BE(n); return b; };
const int32 = (n) => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
/** A compact (nullable) string. */
const cstr = (s) => (s == null ? uvarint(0) : Buffer.concat([uvarint(Buffer.byteLength(s) + 1), Buffer.from(s)]));
const carray = (items, each) => (items == null ? uvarint(0) : Buffer.concat([uvarint(items.length + 1), ...items.map(each)]));
const TAGS = uvarint(0);

class Reader {
  constructor(b) { this.b = b; this.o = 0; }
  i8() { return this.b.readInt8(this.o++); }
  i16() { const v = this.b.readInt16BE(this.o); this.o += 2; return v; }
  i32() { const v = this.b.readInt32BE(this.o); this.o += 4; return v; }
  uvarint() { let n = 0, s = 0, x; do { x = this.b[this.o++]; n |= (x & 0x7f) << s; s += 7; } while (x & 0x80); return n; }
  cstr() { const n = this.uvarint() - 1; if (n < 0) return null; const s = this.b.toString('utf8', this.o, this.o + n); this.o += n; return s; }
  bytes(n) { const v = this.b.subarray(this.o, this.o + n); this.o += n; return v; }
  carray(each) { const n = this.uvarint() - 1; if (n < 0) return null; return Array.from({ length: n }, () => each(this)); }
  tags() { for (let n = this.uvarint(); n > 0; n--) { this.uvarint(); this.bytes(this.uvarint()); } }
}

/** A TCP connection to `host:port` that hands each answer frame (after its length) to `onFrame`. */
function connect(host, port, onFrame) {
  const sock = net.connect(port, host);
  sock.setMaxListeners(0);
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
      buf = buf.subarray(4 + frame.length);
      onFrame(frame);
    }
  });
  return sock;
}

/** Sends the leave (`leave()`, waited for at most 1 s) and closes `sock`. */
async function leaveAndClose(sock, leave) {
  if (leave) await Promise.race([leave().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
  sock.destroy();
}

function request(group, m) {
  const header = Buffer.concat([int16(CONSUMER_GROUP_HEARTBEAT), int16(0), int32(m.correlation), int16(m.clientId.length), Buffer.from(m.clientId), TAGS]);
  const body = Buffer.concat([
    cstr(group), cstr(m.memberId), int32(m.epoch), cstr(null), cstr(null), int32(m.epoch === 0 ? 60000 : -1),
    carray(m.epoch === 0 ? m.topics : null, cstr), cstr(null),
    carray(m.owned, (tp) => Buffer.concat([tp.id, carray(tp.partitions, int32), TAGS])),
    TAGS,
  ]);
  return Buffer.concat([int32(header.length + body.length), header, body]);
}

function response(frame) {
  const r = new Reader(frame);
  r.i32(); r.tags(); // header v1: correlation id, tagged fields
  r.i32(); // throttle
  const error = r.i16();
  const message = r.cstr();
  const memberId = r.cstr();
  const epoch = r.i32();
  const interval = r.i32();
  let assigned = null;
  if (r.i8() >= 0) {
    assigned = r.carray((x) => { const id = Buffer.from(x.bytes(16)); const partitions = x.carray((y) => y.i32()); x.tags(); return { id, partitions }; });
    r.tags();
  }
  return { error, message, memberId, epoch, interval, assigned };
}

/**
 * Starts a consumer `memberId` of `group` subscribed to `topics` against `host:port`; it
 * heartbeats at the interval the coordinator gives until `stop()` (then it leaves with epoch -1).
 */
export function startConsumer({ host = '127.0.0.1', port, group, memberId, topics }) {
  const m = { memberId, clientId: memberId, epoch: 0, topics, owned: [], correlation: 0, answers: [], stopped: false };
  let waiting = null, timer = null;
  const sock = connect(host, port, (frame) => waiting?.(response(frame)));
  const send = () => new Promise((resolve, reject) => {
    waiting = resolve;
    sock.once('close', () => reject(new Error(`${memberId}: connection closed`)));
    m.correlation++;
    sock.write(request(group, m));
  });
  sock.on('error', () => { m.stopped = true; });
  const beat = async () => {
    if (m.stopped) return;
    const a = await send().catch(() => null);
    if (!a) { m.stopped = true; return; }
    m.answers.push(a);
    if (a.error === 0) {
      m.epoch = a.epoch;
      if (a.assigned) m.owned = a.assigned; // revoked at once, so owned = assigned
    } else {
      m.epoch = 0; m.owned = []; // fenced or unknown: rejoin
    }
    if (!m.stopped) timer = setTimeout(beat, Math.min(Math.max(a.interval, 200), 1000));
  };
  const ready = new Promise((resolve) => sock.once('connect', resolve)).then(beat);
  return {
    state: m,
    ready,
    /** Leaves the group (at most 1 s) and closes the connection. */
    async stop() {
      const wasRunning = !m.stopped;
      m.stopped = true;
      clearTimeout(timer);
      if (wasRunning) m.epoch = -1;
      await leaveAndClose(sock, wasRunning && send);
    },
  };
}

// ---- a minimal classic consumer: JoinGroup v9 → SyncGroup v5 → Heartbeat v4 → LeaveGroup v5 ----

const JOIN_GROUP = 11, HEARTBEAT = 12, LEAVE_GROUP = 13, SYNC_GROUP = 14;
const MEMBER_ID_REQUIRED = 79, REBALANCE_IN_PROGRESS = 27;
/** Classic (non-compact) string and bytes: the embedded consumer protocol's encoding. */
const str = (s) => Buffer.concat([int16(Buffer.byteLength(s)), Buffer.from(s)]);
const cbytes = (b) => Buffer.concat([uvarint(b.length + 1), b]);
const bool = (v) => Buffer.from([v ? 1 : 0]);

/** ConsumerProtocolSubscription v0: the topics (no user data). */
const subscription = (topics) => Buffer.concat([int16(0), int32(topics.length), ...topics.map(str), int32(-1)]);
function subscribedTopics(b) {
  const n = b.readInt32BE(2), out = [];
  let o = 6;
  for (let i = 0; i < n; i++) { const l = b.readInt16BE(o); out.push(b.toString('utf8', o + 2, o + 2 + l)); o += 2 + l; }
  return out;
}
/** ConsumerProtocolAssignment v0: {topic: [partitions]} (no user data). */
const assignment = (byTopic) => Buffer.concat([int16(0), int32(Object.keys(byTopic).length),
  ...Object.entries(byTopic).map(([t, ps]) => Buffer.concat([str(t), int32(ps.length), ...ps.map(int32)])), int32(-1)]);
function assignedPartitions(b) {
  if (b.length < 6) return {};
  const out = {};
  let o = 2;
  const n = b.readInt32BE(o); o += 4;
  for (let i = 0; i < n; i++) {
    const l = b.readInt16BE(o), t = b.toString('utf8', o + 2, o + 2 + l); o += 2 + l;
    const m = b.readInt32BE(o); o += 4;
    out[t] = Array.from({ length: m }, (_, j) => b.readInt32BE(o + 4 * j)); o += 4 * m;
  }
  return out;
}

function classicRequest(api, version, correlation, clientId, body) {
  const header = Buffer.concat([int16(api), int16(version), int32(correlation), str(clientId), TAGS]);
  return Buffer.concat([int32(header.length + body.length), header, body]);
}

const CLASSIC = {
  join: {
    api: JOIN_GROUP, version: 9,
    body: (g, m) => Buffer.concat([cstr(g), int32(m.sessionMs), int32(m.sessionMs), cstr(m.memberId), cstr(null), cstr('consumer'),
      carray([['range', subscription(m.topics)]], ([n, meta]) => Buffer.concat([cstr(n), cbytes(meta), TAGS])), cstr(null), TAGS]),
    parse: (r) => {
      r.i32();
      const a = { error: r.i16(), generation: r.i32(), protocolType: r.cstr(), protocolName: r.cstr(), leader: r.cstr(), skipAssignment: r.i8() !== 0, memberId: r.cstr() };
      a.members = r.carray((x) => { const id = x.cstr(); x.cstr(); const meta = Buffer.from(x.bytes(x.uvarint() - 1)); x.tags(); return { id, meta }; });
      return a;
    },
  },
  sync: {
    api: SYNC_GROUP, version: 5,
    body: (g, m, assignments) => Buffer.concat([cstr(g), int32(m.generation), cstr(m.memberId), cstr(null), cstr('consumer'), cstr('range'),
      carray(assignments, ([id, b]) => Buffer.concat([cstr(id), cbytes(b), TAGS])), TAGS]),
    parse: (r) => { r.i32(); const error = r.i16(); r.cstr(); r.cstr(); const b = Buffer.from(r.bytes(r.uvarint() - 1)); return { error, assigned: assignedPartitions(b) }; },
  },
  heartbeat: {
    api: HEARTBEAT, version: 4,
    body: (g, m) => Buffer.concat([cstr(g), int32(m.generation), cstr(m.memberId), cstr(null), TAGS]),
    parse: (r) => { r.i32(); return { error: r.i16() }; },
  },
  leave: {
    api: LEAVE_GROUP, version: 5,
    body: (g, m) => Buffer.concat([cstr(g), carray([m.memberId], (id) => Buffer.concat([cstr(id), cstr(null), cstr('the e2e test stops'), TAGS])), TAGS]),
    parse: (r) => { r.i32(); return { error: r.i16() }; },
  },
};

/** The leader's range assignment: each topic's partitions split in order over the members (by id). */
function rangeAssign(members, partitionsOf) {
  const ids = members.map((m) => m.id).sort();
  const out = Object.fromEntries(ids.map((id) => [id, {}]));
  const topics = [...new Set(members.flatMap((m) => subscribedTopics(m.meta)))].sort();
  for (const t of topics) {
    const subs = ids.filter((id) => subscribedTopics(members.find((m) => m.id === id).meta).includes(t));
    const n = partitionsOf(t), per = Math.floor(n / subs.length), extra = n % subs.length;
    let next = 0;
    subs.forEach((id, i) => { const k = per + (i < extra ? 1 : 0); out[id][t] = Array.from({ length: k }, (_, j) => next + j); next += k; });
  }
  return Object.entries(out).map(([id, a]) => [id, assignment(a)]);
}

/**
 * Starts a classic consumer `clientId` of `group` subscribed to `topics` (`partitions`: topic →
 * partition count, for the leader's assignment) against `host:port`: JoinGroup (again with the
 * member id when asked: MEMBER_ID_REQUIRED), SyncGroup (the leader sends the range assignment),
 * then Heartbeat every `heartbeatMs` until a rebalance (REBALANCE_IN_PROGRESS: join again) or
 * `stop()` (LeaveGroup). `state.calls` lists every exchange as [api, error].
 */
export function startClassicConsumer({ host = '127.0.0.1', port, group, clientId, topics, partitions, heartbeatMs = 500 }) {
  const m = { clientId, memberId: '', generation: -1, topics, sessionMs: 10000, leader: null, assigned: {}, correlation: 0, calls: [], stopped: false };
  let waiting = null, timer = null;
  const sock = connect(host, port, (frame) => { const w = waiting; waiting = null; w?.(frame); });
  sock.on('error', () => { m.stopped = true; });
  const call = (kind, ...extra) => new Promise((resolve, reject) => {
    const c = CLASSIC[kind];
    waiting = (frame) => { const r = new Reader(frame); r.i32(); r.tags(); const a = c.parse(r); m.calls.push([kind, a.error]); resolve(a); };
    sock.once('close', () => reject(new Error(`${clientId}: connection closed`)));
    m.correlation++;
    sock.write(classicRequest(c.api, c.version, m.correlation, clientId, c.body(group, m, ...extra)));
  });
  const join = async () => {
    for (;;) {
      const a = await call('join');
      if (a.error === MEMBER_ID_REQUIRED) { m.memberId = a.memberId; continue; }
      if (a.error !== 0) throw new Error(`${clientId}: JoinGroup error ${a.error}`);
      m.memberId = a.memberId; m.generation = a.generation; m.leader = a.leader;
      const assignments = a.leader === a.memberId ? rangeAssign(a.members, (t) => partitions[t] ?? 0) : [];
      const s = await call('sync', assignments);
      if (s.error === REBALANCE_IN_PROGRESS) continue;
      if (s.error !== 0) throw new Error(`${clientId}: SyncGroup error ${s.error}`);
      m.assigned = s.assigned;
      return;
    }
  };
  const beat = async () => {
    if (m.stopped) return;
    const a = await call('heartbeat').catch(() => null);
    if (!a) { m.stopped = true; return; }
    if (a.error !== 0 && !m.stopped) await join().catch(() => { m.stopped = true; }); // a rebalance: join again
    if (!m.stopped) timer = setTimeout(beat, heartbeatMs);
  };
  const ready = new Promise((resolve) => sock.once('connect', resolve)).then(join).then(() => { timer = setTimeout(beat, heartbeatMs); });
  return {
    state: m,
    ready,
    /** Leaves the group (at most 1 s) and closes the connection. */
    async stop() {
      const wasRunning = !m.stopped;
      m.stopped = true;
      clearTimeout(timer);
      await leaveAndClose(sock, wasRunning && m.memberId && (() => call('leave')));
    },
  };
}
