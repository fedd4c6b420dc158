// Live mode: renders the real groups of a `groupcoord serve --http` server with the same header,
// card and grid components. GET /api/groups (list of StreamsGroupDescribe-shaped groups) and the
// SSE stream GET /api/events (the same JSON on change). Degrades to a message when absent.
import { AssignmentGrid, MemberCards, esc, renderHeader } from './views.js';

const taskList = (x) => (x ?? []).flatMap((t) => (t.partitions ?? []).map((p) => `${t.subtopology_id}_${p}`)).sort();

/** StreamsGroupDescribe-shaped group -> the GroupView shape the components read. */
export function describeToView(d) {
  const members = (d.members ?? []).map((m) => {
    const a = m.assignment ?? {}, t = m.target_assignment ?? {};
    const reconciled = m.member_epoch === d.assignment_epoch;
    return {
      member_id: m.member_id, process_id: m.process_id ?? '', instance_id: m.instance_id ?? null, rack: m.rack_id ?? null,
      client_status: 'alive', state: m.member_state ?? m.state ?? (reconciled ? 'STABLE' : 'RECONCILING'),
      member_epoch: m.member_epoch ?? null, previous_member_epoch: null,
      active: taskList(a.active_tasks), standby: taskList(a.standby_tasks), warmup: taskList(a.warmup_tasks), pending_revocation: [],
      target_active: taskList(t.active_tasks), target_standby: taskList(t.standby_tasks), target_warmup: taskList(t.warmup_tasks),
      owned_active: [], owned_standby: [], owned_warmup: [],
      session_deadline_ms: null, session_timeout_ms: 45000, rebalance_deadline_ms: null, next_heartbeat_ms: null,
    };
  });
  const tasks = new Set();
  for (const m of members) for (const k of ['active', 'standby', 'warmup', 'target_active', 'target_standby', 'target_warmup']) for (const x of m[k]) tasks.add(x);
  return {
    group_id: d.group_id, state: d.group_state ?? d.state ?? 'Dead', group_epoch: d.group_epoch ?? 0, assignment_epoch: d.assignment_epoch ?? 0,
    topology_epoch: d.topology?.epoch ?? null, validated_topology_epoch: null, assignor: d.assignor_name ?? null, num_standby_replicas: null,
    tasks: [...tasks], stateful_subtopologies: [], members, statuses: [], initial_rebalance_deadline_ms: null,
  };
}

function isStreams(d) {
  return (d.group_type == null || d.group_type === 'streams') && !d.error_code;
}

/** `groupcoord serve --http` sends `{seq, time_ms, topics, groups: [{group_id, group_state,
 * group_type, describe: <StreamsGroupDescribe group>}]}`; a bare list of described groups works too. */
function groupsOf(json) {
  const list = Array.isArray(json) ? json : json?.groups ?? [];
  return list.map((g) => (g.describe ? { ...g.describe, group_id: g.group_id, group_state: g.group_state ?? g.describe.group_state, group_type: g.group_type } : g));
}

export function startLive(container, statusEl) {
  const views = new Map();
  const others = document.createElement('p');
  others.className = 'hint';
  const render = (json) => {
    const all = groupsOf(json);
    const groups = all.filter(isStreams).map(describeToView);
    const rest = all.filter((d) => !isStreams(d));
    others.textContent = rest.length ? `Other groups: ${rest.map((d) => `${d.group_id} (${d.group_type ?? 'unknown'}, ${d.group_state})`).join(', ')}` : '';
    if (!groups.length && !container.querySelector('p.hint')) container.innerHTML = '<p class="hint">The server has no streams groups yet.</p>';
    const seen = new Set();
    for (const g of groups) {
      seen.add(g.group_id);
      let v = views.get(g.group_id);
      if (!v) {
        const el = document.createElement('div');
        el.className = 'live-group';
        el.innerHTML = '<div class="header"></div><div class="cards"></div><div class="grid-wrap"></div>';
        v = { el, cards: new MemberCards(el.children[1]), grid: new AssignmentGrid(el.children[2]) };
        views.set(g.group_id, v);
      }
      if (!v.el.isConnected) { container.querySelector('p.hint')?.remove(); container.append(v.el); }
      renderHeader(v.el.children[0], g);
      v.cards.update(g, 0);
      v.grid.update(g);
    }
    for (const [id, v] of views) if (!seen.has(id)) { v.el.remove(); views.delete(id); }
    container.append(others);
  };
  let es = null;
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
    } catch (e) {
      statusEl.textContent = 'not available';
      container.innerHTML = `<p class="hint" data-testid="live-unavailable">No live server here (${esc(e.message)}): this page is served statically.
        Run <code>groupcoord serve --http</code> and open the explorer from it to see its real groups
        (<code>GET /api/groups</code>, <code>GET /api/events</code>).</p>`;
    }
  })();
  return () => es?.close();
}
