// Live mode: the real groups of a `groupcoord serve --http` server, with the components of the
// simulation view. GET /api/groups and the SSE stream GET /api/events carry each group's view
// model (`view`: the same GroupView the simulation emits, built from the coordinator's real
// state); GET /api/history?group=G&after_msg=N&after_rec=M gives the server's recent group
// exchanges (StreamsGroupHeartbeat, ConsumerGroupHeartbeat, or the classic JoinGroup, SyncGroup,
// Heartbeat and LeaveGroup) and records (the swimlanes, the epoch chart and the record log), and a
// classic group's recent state transitions (`phases`: the join and sync phases shaded on the
// chart, as the server saw them, however short, also those from before the page was opened).
// Server times are wall-clock ms; they are shown relative to when the page first saw the server
// record. Degrades to a message when the API is absent (a static server).
import { AssignmentGrid, EpochChart, MemberCards, RecordLog, Swimlanes, esc, naturallyOrdered, renderHeader, renderMessageDetail, renderRecordDetail } from './views.js';
import { GhostCards, announce, ghostMembers } from './history.js';
import { isClassic, renderClassicHeader } from './classic.js';

const WINDOW_MS = 30000;
/** What the server records of each group type's exchanges (the swimlanes). */
const EXCHANGES = {
  streams: 'StreamsGroupHeartbeat',
  consumer: 'ConsumerGroupHeartbeat',
  classic: 'JoinGroup, SyncGroup, Heartbeat and LeaveGroup',
};
const TIME_FIELDS = ['session_deadline_ms', 'rebalance_deadline_ms', 'next_heartbeat_ms'];
/** How far back the chart starts, at most, to show the rebalance phases the server saw before
 * the page was opened. */
const PAST_PHASES_MS = 5 * 60000;

/** The phases to draw on a chart starting at 0 (= server time `base`): times relative to it, the
 * ones over before it dropped, the one going on at 0 starting there. */
export function chartPhases(phases, base) {
  const out = [];
  for (let i = 0; i < phases.length; i++) {
    const next = phases[i + 1];
    if (next && next.at <= base) continue;
    out.push({ at_ms: Math.max(0, phases[i].at - base), state: phases[i].state });
  }
  return out;
}

/** `groupcoord serve --http` sends `{seq, time_ms, topics, groups: [{group_id, group_state,
 * group_type, member_count, describe, view}]}`: every group type carries a view (`describe`: streams
 * groups only). */
function groupsOf(json) {
  return (Array.isArray(json?.groups) ? json.groups : []);
}

export function startLive(container, statusEl) {
  const views = new Map();
  const others = document.createElement('p');
  others.className = 'hint';
  let base = null; // server ms shown as 0
  let serverOffset = 0; // server time - local time
  const serverNow = () => Date.now() + serverOffset;
  const rel = (ms) => (ms == null ? ms : ms - base);
  const relView = (v) => ({
    ...v,
    initial_rebalance_deadline_ms: rel(v.initial_rebalance_deadline_ms),
    members: v.members.map((m) => { const o = { ...m }; for (const k of TIME_FIELDS) o[k] = rel(m[k]); return o; }),
  });
  let stopped = false;

  const make = (id) => {
    const el = document.createElement('div');
    el.className = 'live-group';
    el.dataset.group = id;
    el.innerHTML = `<div class="panel header"></div>
      <div class="panel"><h3>Epochs over time</h3><div class="live-chart" role="img" aria-label="epochs over time of group ${esc(id)}"></div></div>
      <div class="panel"><h3>Members</h3><div class="cards"></div><div class="ghosts" hidden></div></div>
      <div class="panel"><h3 data-term="target-assignment">Assignment: current vs target</h3><div class="grid-wrap"></div></div>
      <div class="live-row">
        <div class="panel"><h3 data-term="heartbeat">Heartbeats <small class="lanes-note"></small></h3><div class="lanes-wrap" data-testid="live-lanes"></div></div>
        <div class="panel detail" data-testid="live-detail"></div>
      </div>
      <div class="panel"><h3>Coordinator records</h3><div class="records-wrap" data-testid="live-records"></div></div>`;
    const [hdr, chartP, cardsP, gridP, row, recP] = el.children;
    const v = { el, hdr, afterMsg: 0, afterRec: 0, messages: [], records: [], g: null, order: new Map(), lastStates: new Map(), phases: [] };
    v.detail = row.children[1];
    renderMessageDetail(v.detail, null);
    v.chart = new EpochChart(chartP.querySelector('.live-chart'), { onResize: () => draw(v) });
    v.cards = new MemberCards(cardsP.querySelector('.cards'));
    v.ghosts = new GhostCards(cardsP.querySelector('.ghosts'), { onSelect: (m) => m && renderMessageDetail(v.detail, m) });
    v.grid = new AssignmentGrid(gridP.querySelector('.grid-wrap'));
    v.lanes = new Swimlanes(row.children[0].querySelector('.lanes-wrap'), { onSelect: (m) => renderMessageDetail(v.detail, m), onResize: () => draw(v) });
    v.lanes.el._lanes = v.lanes; // for tests and the console
    v.log = new RecordLog(recP.querySelector('.records-wrap'), { onSelect: (r) => r && renderRecordDetail(v.detail, r) });
    return v;
  };

  const draw = (v) => {
    if (!v.g || base == null) return;
    const now = serverNow() - base;
    const g = naturallyOrdered(v.g, v.sortCache ??= {});
    v.order = new Map(g.members.map((m, i) => [m.member_id, i]));
    if (isClassic(g)) renderClassicHeader(v.hdr, g); else renderHeader(v.hdr, g);
    if (v.noted !== g.group_type) {
      v.noted = g.group_type;
      v.el.querySelector('.lanes-note').textContent = `the server's real ${EXCHANGES[g.group_type] ?? 'group'} exchanges, last ${WINDOW_MS / 1000}s; click one for fields and bytes`
        + (isClassic(g) ? ' · ■ JoinGroup ◆ SyncGroup ● Heartbeat ▬ LeaveGroup · blue: waiting for its answer (a JoinGroup waits for the whole group), orange: an error answer (REBALANCE_IN_PROGRESS: join again)' : '');
    }
    v.cards.update(g, now, v.order);
    v.grid.update(g, v.order);
    // A classic group's join and sync phases, shaded behind the generation line: every state
    // change the server saw (`phases` of /api/history), a sync phase of 1 ms included.
    v.chart.render(now, v.order, isClassic(g) ? chartPhases(v.phases, base) : null);
    const ghosts = ghostMembers(g, v.messages);
    v.ghosts.update(ghosts);
    v.lanes.update(v.messages, v.records, { ...g, members: [...g.members, ...ghosts] }, now, WINDOW_MS, v.order);
  };

  const pull = async (v) => {
    if (v.pulling) return;
    v.pulling = true;
    try {
      // A JoinGroup or SyncGroup waits for the rest of the group: its exchange gets its answer
      // on the server later, so the messages from the oldest one still in flight (of the last
      // 200) are asked for again and replace the copies held here.
      let after = v.afterMsg;
      for (let i = v.messages.length - 1; i >= Math.max(0, v.messages.length - 200); i--) if (v.messages[i].fate === 'in_flight') after = Math.min(after, v.messages[i].seq - 1);
      const r = await fetch(`/api/history?group=${encodeURIComponent(v.id)}&after_msg=${after}&after_rec=${v.afterRec}`);
      if (!r.ok) return;
      const page = await r.json();
      serverOffset = page.time_ms - Date.now();
      const phases = Array.isArray(page.phases) ? page.phases : [];
      // The chart starts when the server began recording, or earlier (up to PAST_PHASES_MS) at
      // the first rebalance phase it kept: a page opened later shows the rebalances before it.
      const firstPhase = phases.find((p) => p.state === 'PreparingRebalance' || p.state === 'CompletingRebalance');
      if (base == null) base = Math.min(page.recording_since_ms || page.time_ms, Math.max(firstPhase?.at_ms ?? Infinity, page.time_ms - PAST_PHASES_MS));
      v.phases = phases.map((p) => ({ at: p.at_ms, state: p.state }));
      if (!v.g && v.raw) v.g = relView(v.raw);
      const msgs = page.messages.map((m) => ({ ...m, sent_ms: m.sent_ms - base, received_ms: m.received_ms < 0 ? -1 : m.received_ms - base }));
      const recs = page.records.map((x) => ({ ...x, at_ms: x.at_ms - base }));
      if (msgs.length) {
        v.afterMsg = Math.max(v.afterMsg, page.messages[page.messages.length - 1].seq);
        const first = msgs[0].seq;
        v.messages = v.messages.filter((m) => m.seq < first).concat(msgs).slice(-2000);
      }
      if (recs.length) {
        v.afterRec = page.records[page.records.length - 1].seq;
        v.records = v.records.concat(recs).slice(-2000);
        v.chart.ingest(recs);
        v.log.append(recs);
      }
      draw(v);
    } catch { /* the next pull retries */ } finally { v.pulling = false; }
  };

  const render = (json) => {
    if (json?.time_ms) serverOffset = json.time_ms - Date.now();
    const all = groupsOf(json);
    const groups = all.filter((d) => d.view);
    const rest = all.filter((d) => !d.view);
    others.textContent = rest.length ? `Other groups (not shown here): ${rest.map((d) => `${d.group_id} (${d.group_type ?? 'unknown'}, ${d.group_state})`).join(', ')}` : '';
    if (!groups.length && !container.querySelector('p.hint')) container.innerHTML = '<p class="hint">The server has no groups yet.</p>';
    const seen = new Set();
    for (const d of groups) {
      seen.add(d.group_id);
      let v = views.get(d.group_id);
      if (!v) { v = make(d.group_id); v.id = d.group_id; views.set(d.group_id, v); }
      if (!v.el.isConnected) { container.querySelector('p.hint')?.remove(); container.append(v.el); }
      announceChanges(v, d.view);
      v.raw = d.view;
      // Server times shown relative to `base`, known after the first history page (until then
      // nothing is drawn: a session deadline would read as ms since 1970).
      v.g = base == null ? null : relView(d.view);
      draw(v);
      pull(v);
    }
    for (const [id, v] of views) if (!seen.has(id)) { v.el.remove(); views.delete(id); }
    container.append(others);
  };

  const announceChanges = (v, g) => {
    if (v.raw && v.raw.state !== g.state) announce(`group ${g.group_id}: ${v.raw.state} → ${g.state} (group epoch ${g.group_epoch})`);
    for (const m of g.members) {
      const before = v.lastStates.get(m.member_id);
      const now = `${m.state} ${m.member_epoch}`;
      if (before && before !== now) announce(`${m.member_id}: ${m.state} at epoch ${m.member_epoch}`);
      v.lastStates.set(m.member_id, now);
    }
  };

  let es = null, tick = 0;
  (async () => {
    try {
      const r = await fetch('/api/groups', { headers: { accept: 'application/json' } });
      if (!r.ok || !(r.headers.get('content-type') ?? '').includes('json')) throw new Error(`HTTP ${r.status}`);
      render(await r.json());
      statusEl.textContent = 'connected · GET /api/groups';
      if ('EventSource' in window) {
        es = new EventSource('/api/events');
        const on = (e) => { try { render(JSON.parse(e.data)); statusEl.textContent = `live · updated ${new Date().toLocaleTimeString()}`; } catch { /* ignore a bad event */ } };
        es.onmessage = on; // unnamed events
        es.addEventListener('groups', on); // the server names its events "groups"
        es.onopen = () => { statusEl.textContent = 'live · connected to /api/events'; };
        es.onerror = () => { statusEl.textContent = 'event stream interrupted, retrying…'; };
      }
      // Heartbeats that change nothing send no event: the history is pulled on a timer too, and
      // the time axis and session arcs move on.
      tick = setInterval(() => { if (stopped) return; for (const v of views.values()) { pull(v); draw(v); } }, 500);
    } catch (e) {
      statusEl.textContent = 'not available';
      container.innerHTML = `<p class="hint" data-testid="live-unavailable">No live server here (${esc(e.message)}): this page is served statically.
        Run <code>groupcoord serve --http</code> and open the explorer from it to see its real groups
        (<code>GET /api/groups</code>, <code>GET /api/events</code>, <code>GET /api/history</code>).</p>`;
    }
  })();
  return () => { stopped = true; clearInterval(tick); es?.close(); };
}
