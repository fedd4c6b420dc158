// The explorer's simulation off the main thread: one Driver (sim-driver.js) per session, driven
// by RemoteDriver's messages {id, sid, op, args}; replies {id, ok, r | error} carry what the
// page's mirror needs (the new frames, or the whole logs after a replay, and the action list).
import { Driver, loadWasm } from './sim-driver.js';

let W = null;
const ready = loadWasm().then((w) => { W = w; });
const drivers = new Map();

// The page draws heartbeats from their times, member, fate and error; their decoded bodies and
// bytes (6/7 of an entry) stay here until one is clicked ('message').
// The page gets each exchange without its bodies and bytes (fetched when one is clicked), but
// with the epochs it sent and got back (ghost cards tell a −1 / −2 leave from a fence).
const light = ({ request, response, request_hex, response_hex, ...rest }) => ({ ...rest, req_epoch: request?.member_epoch ?? request?.generation_id ?? null, resp_epoch: response?.member_epoch ?? response?.generation_id ?? null });
const lightFrame = (f) => ({ ...f, messages: f.messages.map(light) });
const meta = (d) => ({ actions: d.actions, applied: d.applied, maxTime: d.maxTime, resetCount: d.resetCount });
const full = (d) => ({ full: { messages: d.messages.map(light), records: d.records, ownership: d.ownership, phases: d.phases, last: lightFrame(d.last) }, ...meta(d) });

function run(sid, op, args) {
  if (op === 'open') {
    drivers.get(sid)?.free();
    const d = new Driver(W, args.spec, args.actions, args.presetName);
    drivers.set(sid, d);
    return full(d);
  }
  if (op === 'close') { drivers.get(sid)?.free(); drivers.delete(sid); return null; }
  const d = drivers.get(sid);
  if (!d) throw new Error('this run was closed');
  switch (op) {
    case 'seek': d.seek(args.t); return full(d);
    case 'raiseMaxTime': d.maxTime = Math.max(d.maxTime, args.t); return meta(d);
    case 'advance': d.clearTrails(); return { frames: [lightFrame(d.advance(args.ms, args.budgetMs ?? Infinity))], ...meta(d) };
    case 'stepBack': d.stepBack(); return full(d);
    case 'act': { const dropped = d.act(args.action); return { dropped, frames: [lightFrame(d.last)], ...meta(d) }; }
    case 'message': return { message: d.message(args.seq) };
    case 'stepNext': {
      // Only the last frame's snapshot is needed: the earlier ones carry their logs and events.
      const frames = d.stepNext();
      return { frames: frames.map((f, i) => (i < frames.length - 1 ? { ...lightFrame(f), snapshot: null } : lightFrame(f))), ...meta(d) };
    }
    default: throw new Error(`unknown operation ${op}`);
  }
}

self.onmessage = async ({ data: { id, sid, op, args } }) => {
  try {
    if (!W) await ready;
    const t0 = performance.now();
    const r = run(sid, op, args);
    if (r) r.wallMs = performance.now() - t0;
    if (id) self.postMessage({ id, ok: true, r });
  } catch (e) {
    if (id) self.postMessage({ id, ok: false, error: e?.message ?? String(e) });
  }
};
