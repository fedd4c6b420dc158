// A minimal KIP-848 consumer for the e2e tests: ConsumerGroupHeartbeat v0 over TCP to a real
// `groupcoord serve`, one request in flight, reporting as owned what the last answer assigned
// (it never processes anything, so revoking is immediate).
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
  const sock = net.connect(port, host);
  let buf = Buffer.alloc(0), waiting = null, timer = null;
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
      const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
      buf = buf.subarray(4 + frame.length);
      waiting?.(response(frame));
    }
  });
  const send = () => new Promise((resolve, reject) => {
    waiting = resolve;
    sock.once('close', () => reject(new Error(`${memberId}: connection closed`)));
    m.correlation++;
    sock.write(request(group, m));
  });
  sock.on('error', () => { m.stopped = true; });
  sock.setMaxListeners(0);
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
      if (wasRunning) {
        m.epoch = -1;
        await Promise.race([send().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
      }
      sock.destroy();
    },
  };
}
