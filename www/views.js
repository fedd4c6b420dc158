// Rendering components shared by the simulation view, the side-by-side view and live mode.
// Each component keeps its DOM and only touches what changed.

export const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
export const short = (id) => (id && id.length > 14 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id ?? '');
export const fmtT = (ms) => (ms == null ? '–' : ms < 60000 ? `${(ms / 1000).toFixed(ms % 1000 ? 2 : 0)}s` : `${Math.floor(ms / 60000)}m${((ms % 60000) / 1000).toFixed(1).padStart(4, '0')}s`);

const PALETTE = ['#2563eb', '#db2777', '#059669', '#d97706', '#7c3aed', '#0891b2', '#dc2626', '#65a30d', '#c026d3', '#0d9488', '#ea580c', '#4f46e5'];
const colorCache = new Map();
export function memberColor(id, order) {
  if (order && order.has(id)) return PALETTE[order.get(id) % PALETTE.length];
  if (!colorCache.has(id)) {
    let h = 0;
    for (const c of id) h = (h * 31 + c.charCodeAt(0)) | 0;
    colorCache.set(id, PALETTE[Math.abs(h) % PALETTE.length]);
  }
  return colorCache.get(id);
}

const STATE_TERM = { UNREVOKED_TASKS: 'UNREVOKED_TASKS', UNRELEASED_TASKS: 'UNRELEASED_TASKS', STABLE: 'STABLE' };

// ---- group header -----------------------------------------------------------------------------

export function renderHeader(el, g, extra = '') {
  const key = JSON.stringify([g.group_id, g.state, g.group_epoch, g.assignment_epoch, g.topology_epoch, g.assignor, g.num_standby_replicas, g.statuses, g.members.length, g.tasks.length, extra]);
  if (el._key === key) return;
  el._key = key;
  const known = g.members.filter((m) => m.state != null).length;
  el.innerHTML = `
    <span class="badge state-${esc(g.state)}" data-term="group-state" data-testid="group-state">${esc(g.state)}</span>
    <span class="gid">${esc(g.group_id)}</span>
    <span class="kv" data-term="group-epoch">group epoch <b data-testid="group-epoch">${g.group_epoch}</b></span>
    <span class="kv" data-term="assignment-epoch">assignment epoch <b data-testid="assignment-epoch">${g.assignment_epoch}</b></span>
    ${g.topology_epoch != null ? `<span class="kv" data-term="topology-epoch">topology <b>${g.topology_epoch}</b>${g.validated_topology_epoch != null && g.validated_topology_epoch !== g.topology_epoch ? ` <small>(validated ${g.validated_topology_epoch})</small>` : ''}</span>` : ''}
    ${g.assignor ? `<span class="kv" data-term="assignor">assignor <b>${esc(g.assignor)}</b></span>` : ''}
    ${g.num_standby_replicas != null ? `<span class="kv" data-term="standby">standbys <b>${g.num_standby_replicas}</b></span>` : ''}
    <span class="kv">members <b data-testid="member-count">${known}</b></span>
    <span class="kv">tasks <b>${g.tasks.length}</b></span>
    ${extra}
    ${(g.statuses ?? []).map((s) => `<span class="status-chip" data-term="statuses">${esc(s)}</span>`).join('')}`;
}

// ---- epoch timeline (from the record log) -------------------------------------------------------

export class EpochChart {
  constructor(el) { this.el = el; this.reset(); }
  reset() { this.group = []; this.assign = []; this.members = new Map(); this.dirty = true; this.maxE = 1; this.minE = 0; }
  ingest(records) {
    for (const r of records) {
      const rec = r.record, t = r.at_ms;
      if (rec.type === 'GroupMetadata' && rec.value) this.pushPt(this.group, t, rec.value.epoch);
      else if (rec.type === 'TargetAssignmentMetadata' && rec.value) this.pushPt(this.assign, t, rec.value.assignment_epoch);
      else if (rec.type === 'CurrentMemberAssignment') {
        if (!this.members.has(rec.member_id)) this.members.set(rec.member_id, []);
        this.pushPt(this.members.get(rec.member_id), t, rec.value ? rec.value.member_epoch : null);
      } else continue;
      this.dirty = true;
    }
  }
  pushPt(arr, t, v) {
    if (v != null) { this.maxE = Math.max(this.maxE, v); this.minE = Math.min(this.minE, v); }
    arr.push([t, v]);
  }
  render(now, order) {
    const w = Math.max(300, this.el.clientWidth || 800), h = 160, L = 34, R = 8, T = 26, B = 20;
    const real = performance.now();
    if (!this.dirty && w === this._w && (now === this._now || real - (this._at ?? 0) < (this.members.size > 20 ? 500 : 150))) return;
    this._w = w; this._now = now; this._at = real; this.dirty = false;
    const tmax = Math.max(now, 1000);
    const x = (t) => L + ((w - L - R) * t) / tmax;
    const ymax = this.maxE + 1, ymin = this.minE; // epochs -1/-2: a member leaving
    const y = (v) => T + (h - T - B) * (1 - (v - ymin) / (ymax - ymin));
    const path = (pts, dy = 0) => {
      let d = '', open = false, last = null;
      for (const [t, v] of pts) {
        if (v == null) { if (open) d += `H${x(t).toFixed(1)}`; open = false; last = null; continue; }
        if (!open) { d += `M${x(t).toFixed(1)},${(y(v) + dy).toFixed(1)}`; open = true; } else d += `H${x(t).toFixed(1)}V${(y(v) + dy).toFixed(1)}`;
        last = v;
      }
      if (open && last != null) d += `H${x(now).toFixed(1)}`;
      return d;
    };
    const ticksY = [];
    const stepY = Math.max(1, Math.ceil(ymax / 5));
    for (let v = ymin; v <= ymax; v += stepY) ticksY.push(`<text x="${L - 4}" y="${y(v) + 4}" text-anchor="end">${v}</text><line x1="${L}" x2="${w - R}" y1="${y(v)}" y2="${y(v)}" class="grid"/>`);
    const ticksX = [];
    const stepX = niceStep(tmax / 6);
    for (let t = 0; t <= tmax; t += stepX) if (x(t) < w - R - 28 || t === 0) ticksX.push(`<text x="${x(t)}" y="${h - 5}" text-anchor="${t === 0 ? 'start' : 'middle'}">${fmtT(t)}</text>`);
    const n = this.members.size, spread = Math.min(6, (h - T - B) / ymax / 3);
    const memberPaths = [...this.members].map(([id, pts], i) => `<path d="${path(pts, n > 1 ? spread * (i / (n - 1) - 0.5) * 2 + 3 : 3)}" class="m" stroke="${memberColor(id, order)}"><title>member ${esc(id)}</title></path>`).join('');
    this.el.innerHTML = `<svg width="${w}" height="${h}" class="chart">${ticksY.join('')}${ticksX.join('')}
      ${memberPaths}
      <path d="${path(this.assign)}" class="ae"><title>assignment epoch</title></path>
      <path d="${path(this.group)}" class="ge"><title>group epoch</title></path>
      <g class="legend" transform="translate(${L},2)"><rect width="245" height="16" rx="3"/><line x1="6" x2="22" y1="8" y2="8" class="ge"/><text x="26" y="12">group epoch</text>
      <line x1="100" x2="116" y1="8" y2="8" class="ae"/><text x="120" y="12">assignment</text><line x1="186" x2="202" y1="8" y2="8" class="m" stroke="#888"/><text x="206" y="12">members</text></g></svg>`;
  }
}

function niceStep(x) {
  const p = 10 ** Math.floor(Math.log10(Math.max(x, 1)));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

// ---- member cards -----------------------------------------------------------------------------

const ARC_R = 13, ARC_C = 2 * Math.PI * ARC_R;

export class MemberCards {
  constructor(el, { onMenu } = {}) {
    this.el = el; this.cards = new Map(); this.onMenu = onMenu;
    if (onMenu) {
      el.addEventListener('contextmenu', (e) => this.menu(e));
      el.addEventListener('click', (e) => { if (e.target.closest('.menu-btn')) this.menu(e); });
    }
  }
  menu(e) {
    const card = e.target.closest('.card');
    if (!card) return;
    e.preventDefault();
    this.onMenu(card.dataset.member, e.clientX, e.clientY);
  }
  update(g, now, order) {
    this.el.classList.toggle('compact', g.members.length > 16);
    const seen = new Set();
    let prev = null;
    for (const m of g.members) {
      seen.add(m.member_id);
      let c = this.cards.get(m.member_id);
      if (!c) {
        c = document.createElement('div');
        c.className = 'card';
        c.dataset.member = m.member_id;
        c.dataset.testid = 'member-card';
        this.cards.set(m.member_id, c);
      }
      if ((prev ? prev.nextSibling : this.el.firstChild) !== c) this.el.insertBefore(c, prev ? prev.nextSibling : this.el.firstChild);
      prev = c;
      const { session_deadline_ms, next_heartbeat_ms, rebalance_deadline_ms, ...stable } = m;
      const key = JSON.stringify(stable);
      if (c._key !== key) { c._key = key; c._off = c._label = null; this.fill(c, m, g, order); }
      const arc = c.querySelector('.arc');
      if (arc) {
        const left = m.session_deadline_ms != null ? Math.max(0, m.session_deadline_ms - now) : null;
        const frac = left == null ? 0 : Math.min(1, left / (m.session_timeout_ms || 45000));
        const off = (ARC_C * (1 - frac)).toFixed(1), label = left == null ? '–' : `${Math.ceil(left / 1000)}s`;
        if (c._off !== off) { c._off = off; arc.setAttribute('stroke-dashoffset', off); arc.classList.toggle('low', frac < 0.3); }
        if (c._label !== label) { c._label = label; c.querySelector('.arc-label').textContent = label; }
      }
    }
    for (const [id, c] of this.cards) if (!seen.has(id)) { c.remove(); this.cards.delete(id); }
  }
  fill(c, m, g, order) {
    const pend = new Set(m.pending_revocation);
    const chips = (list, role) => list.map((t) => `<span class="chip ${role}${pend.has(t) ? ' pending' : ''}">${esc(t)}</span>`).join('');
    const tgtA = new Set(m.target_active), curA = new Set(m.active);
    const plus = m.target_active.filter((t) => !curA.has(t)), minus = m.active.filter((t) => !tgtA.has(t));
    const status = m.client_status && m.client_status !== 'alive' ? `<span class="cstatus ${esc(m.client_status)}">${esc(m.client_status)}</span>` : '';
    const st = m.state ?? 'not in group';
    c.className = `card ${m.state ? '' : 'gone'} ${m.client_status ?? ''} ${pend.size ? 'has-pending' : ''}`;
    c.style.setProperty('--mc', memberColor(m.member_id, order));
    c.innerHTML = `
      <div class="card-top">
        <svg class="session" width="34" height="34" data-term="session"${m.session_deadline_ms == null && m.state != null && !m.next_heartbeat_ms ? ' style="display:none"' : ''}><circle cx="17" cy="17" r="${ARC_R}" class="arc-bg"/>
          <circle cx="17" cy="17" r="${ARC_R}" class="arc" stroke-dasharray="${ARC_C.toFixed(2)}" transform="rotate(-90 17 17)"/>
          <text x="17" y="21" text-anchor="middle" class="arc-label"></text></svg>
        <div class="who"><b title="${esc(m.member_id)}">${esc(short(m.member_id))}</b> ${status}
          <div class="sub">${esc(m.process_id)}${m.rack ? ` · rack ${esc(m.rack)}` : ''}${m.instance_id ? ` · <span data-term="static-member">static ${esc(m.instance_id)}</span>` : ''}</div></div>
        ${this.onMenu ? '<button class="menu-btn" title="actions (or right-click)">⋯</button>' : ''}
      </div>
      <div class="card-state"><span class="mstate s-${esc(st)}" data-term="${STATE_TERM[st] ?? 'reconciliation'}" data-testid="member-state">${esc(st)}</span>
        <span data-term="member-epoch">epoch <b>${m.member_epoch ?? '–'}</b></span>${m.previous_member_epoch != null ? `<small> (prev ${m.previous_member_epoch})</small>` : ''}</div>
      <div class="roles">
        ${m.active.length ? `<div><span class="rl" data-term="active">A</span>${chips(m.active, 'active')}</div>` : ''}
        ${m.standby.length ? `<div><span class="rl" data-term="standby">S</span>${chips(m.standby, 'standby')}</div>` : ''}
        ${m.warmup.length ? `<div><span class="rl" data-term="warmup">W</span>${chips(m.warmup, 'warmup')}</div>` : ''}
        ${pend.size ? `<div class="pend"><span class="rl" data-term="pending-revocation">R</span>${chips(m.pending_revocation, 'revoke pending')}</div>` : ''}
        ${!m.active.length && !m.standby.length && !m.warmup.length && !pend.size ? '<div class="none">no tasks</div>' : ''}
      </div>
      ${plus.length || minus.length ? `<div class="todo" data-term="reconciliation">to target: ${plus.length ? `<span class="plus">+${plus.length}</span>` : ''} ${minus.length ? `<span class="minus">−${minus.length}</span>` : ''}</div>` : ''}`;
  }
}

// ---- task × member grid -----------------------------------------------------------------------

const ROLE_LETTER = { active: 'A', standby: 'S', warmup: 'W', revoke: 'R' };

function roleMaps(m) {
  const cur = new Map(), tgt = new Map();
  for (const t of m.warmup) cur.set(t, 'warmup');
  for (const t of m.standby) cur.set(t, 'standby');
  for (const t of m.active) cur.set(t, 'active');
  for (const t of m.pending_revocation) cur.set(t, 'revoke');
  for (const t of m.target_warmup) tgt.set(t, 'warmup');
  for (const t of m.target_standby) tgt.set(t, 'standby');
  for (const t of m.target_active) tgt.set(t, 'active');
  return [cur, tgt];
}

export class AssignmentGrid {
  constructor(el, { onCell } = {}) { this.el = el; this.onCell = onCell; this.cells = new Map(); this.shape = ''; }
  /** `diff` (optional): Set of `task|process_id` cells to outline (side-by-side differences). */
  update(g, order, diff) {
    const members = g.members.filter((m) => m.state != null || m.active.length || m.pending_revocation.length);
    const tasks = allTasks(g);
    const shape = JSON.stringify([tasks, members.map((m) => m.member_id)]);
    if (shape !== this.shape) this.build(tasks, members, order, shape);
    let mismatch = 0;
    const maps = members.map(roleMaps);
    for (let r = 0; r < tasks.length; r++) {
      const t = tasks[r];
      for (let c = 0; c < members.length; c++) {
        const cur = maps[c][0].get(t) ?? '', tgt = maps[c][1].get(t) ?? '';
        const cell = this.cells.get(`${r},${c}`);
        const dc = diff?.has(`${t}|${members[c].process_id}`) ?? false;
        const key = cur + '|' + tgt + '|' + (dc ? 1 : 0);
        if (cur !== tgt && !(cur === 'revoke' && !tgt)) mismatch++;
        if (cell._key === key) continue;
        const changed = cell._key !== undefined && !this.fresh;
        cell._key = key;
        cell.className = `c cur-${cur || 'none'} tgt-${tgt || 'none'}${cur !== tgt ? ' off' : ''}${dc ? ' diff' : ''}`;
        cell.textContent = ROLE_LETTER[cur] ?? '';
        cell.title = `${t} @ ${members[c].member_id}\ncurrent: ${cur || '–'}\ntarget: ${tgt || '–'}`;
        if (changed) { cell.classList.remove('flash'); void cell.offsetWidth; cell.classList.add('flash'); }
      }
    }
    this.fresh = false;
    this.summary.textContent = `${tasks.length} tasks × ${members.length} members · ${mismatch} cell${mismatch === 1 ? '' : 's'} differ from target`;
    this.summary.dataset.mismatch = mismatch;
  }
  build(tasks, members, order, shape) {
    this.shape = shape; this.cells.clear(); this.fresh = true;
    const table = document.createElement('table');
    table.className = 'grid';
    const head = `<tr><th class="corner">task \\ member</th>${members.map((m) => `<th style="--mc:${memberColor(m.member_id, order)}" title="${esc(m.member_id)} (${esc(m.process_id)})"><div>${esc(short(m.member_id))}</div></th>`).join('')}</tr>`;
    table.innerHTML = `<thead>${head}</thead><tbody></tbody>`;
    const body = table.tBodies[0];
    tasks.forEach((t, r) => {
      const tr = document.createElement('tr');
      tr.innerHTML = `<th>${esc(t)}</th>`;
      members.forEach((_, c) => {
        const td = document.createElement('td');
        td.className = 'c';
        this.cells.set(`${r},${c}`, td);
        tr.append(td);
      });
      body.append(tr);
    });
    this.summary = document.createElement('div');
    this.summary.className = 'grid-summary';
    this.summary.dataset.testid = 'grid-summary';
    this.el.replaceChildren(this.summary, table);
  }
}

export function allTasks(g) {
  const s = new Set(g.tasks);
  for (const m of g.members) for (const k of ['active', 'standby', 'warmup', 'pending_revocation', 'target_active']) for (const t of m[k]) s.add(t);
  return [...s].sort((a, b) => {
    const [sa, pa] = splitTask(a), [sb, pb] = splitTask(b);
    return sa < sb ? -1 : sa > sb ? 1 : pa - pb;
  });
}
function splitTask(t) {
  const i = t.lastIndexOf('_');
  return [t.slice(0, i), Number(t.slice(i + 1))];
}

// ---- heartbeat swimlanes (canvas: hundreds of heartbeats per frame stay cheap) ------------------

export class Swimlanes {
  constructor(el, { onSelect } = {}) {
    this.el = el; this.onSelect = onSelect; this.hits = [];
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'lanes';
    el.append(this.canvas);
    this.canvas.addEventListener('click', (e) => {
      const r = this.canvas.getBoundingClientRect();
      const px = e.clientX - r.left, py = e.clientY - r.top;
      let best = null, bd = 64;
      for (const h of this.hits) {
        const d = (h.x - px) ** 2 + (h.y - py) ** 2;
        if (d < bd) { bd = d; best = h.m; }
      }
      if (best) { this.selected = best.seq; this._key = null; this.onSelect?.(best); }
    });
    this.canvas.addEventListener('mousemove', (e) => {
      const r = this.canvas.getBoundingClientRect();
      const px = e.clientX - r.left, py = e.clientY - r.top;
      const h = this.hits.find((q) => (q.x - px) ** 2 + (q.y - py) ** 2 < 49);
      this.canvas.style.cursor = h ? 'pointer' : 'default';
      this.canvas.title = h ? `#${h.m.seq} ${h.m.member_id} sent ${fmtT(h.m.sent_ms)} ${h.m.fate}${h.m.error ? ' ' + h.m.error : ''}` : '';
    });
  }
  update(messages, records, g, now, windowMs, order) {
    const w = Math.max(300, this.el.clientWidth || 800);
    const key = `${messages.length ? messages[messages.length - 1].seq : 0}|${records.length}|${now}|${w}|${this.selected}|${g.members.length}|${this.el.scrollTop}`;
    if (key === this._key) return;
    this._key = key;
    const members = g.members.map((m) => m.member_id);
    const lane = new Map(members.map((id, i) => [id, i + 1]));
    const L = 74, R = 10, LH = 18, h = (members.length + 1) * LH + 20, dpr = window.devicePixelRatio || 1;
    const cv = this.canvas;
    if (cv.width !== w * dpr || cv.height !== h * dpr) {
      cv.width = w * dpr; cv.height = h * dpr; cv.style.width = `${w}px`; cv.style.height = `${h}px`;
    }
    const c = cv.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    // Only the lanes in view are drawn (100 members: 6 times less work).
    const top = this.el.scrollTop, bottom = top + (this.el.clientHeight || h);
    const lo = Math.max(0, Math.floor(top / LH) - 1), hi = Math.ceil(bottom / LH) + 1;
    const vis = (l) => l >= lo && l <= hi;
    c.clearRect(0, Math.max(0, top - LH), w, Math.min(h, bottom - top + 2 * LH));
    const t0 = Math.max(0, now - windowMs);
    const x = (t) => L + ((w - L - R) * (t - t0)) / windowMs;
    c.font = '600 11px system-ui, sans-serif';
    c.textBaseline = 'middle';
    c.strokeStyle = '#eef0f3';
    c.lineWidth = 1;
    const laneY = (i) => i * LH + LH / 2;
    c.fillStyle = '#5b6270';
    c.fillText('coordinator', 4, laneY(0));
    for (let i = lo; i <= Math.min(hi, members.length); i++) { c.beginPath(); c.moveTo(L, laneY(i)); c.lineTo(w - R, laneY(i)); c.stroke(); }
    members.forEach((id, i) => { if (vis(i + 1)) { c.fillStyle = memberColor(id, order); c.fillText(short(id), 4, laneY(i + 1)); } });
    c.fillStyle = 'rgba(17,24,39,.55)';
    for (let i = records.length - 1; i >= 0 && records[i].at_ms >= t0; i--) c.fillRect(x(records[i].at_ms) - 1.5, 2, 3, LH - 4);
    this.hits = [];
    const COL = { ok: '#059669', err: '#f59e0b', lost: '#dc2626', fly: '#2563eb' };
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      const rcv = m.received_ms < 0 || m.received_ms > now ? now : m.received_ms; // in flight: up to now
      if (rcv < t0 && m.sent_ms < t0) break;
      const l = lane.get(m.member_id);
      if (!l || !vis(l)) continue;
      const yy = laneY(l), cls = m.fate === 'in_flight' ? 'fly' : m.fate !== 'delivered' ? 'lost' : m.error ? 'err' : 'ok';
      const x1 = x(m.sent_ms), x2 = x(rcv);
      c.strokeStyle = COL[cls];
      c.globalAlpha = 0.5;
      c.setLineDash(cls === 'lost' ? [3, 2] : []);
      c.beginPath(); c.moveTo(x1, yy); c.lineTo(x2, laneY(0)); c.stroke();
      c.globalAlpha = 1;
      c.setLineDash([]);
      c.beginPath(); c.arc(x1, yy, m.seq === this.selected ? 7 : 4.5, 0, 2 * Math.PI);
      if (cls === 'lost') { c.fillStyle = '#fff'; c.fill(); c.lineWidth = 2; c.stroke(); c.lineWidth = 1; } else { c.fillStyle = COL[cls]; c.fill(); }
      if (m.seq === this.selected) { c.strokeStyle = '#111'; c.lineWidth = 2; c.stroke(); c.lineWidth = 1; }
      this.hits.push({ x: x1, y: yy, m });
    }
    c.strokeStyle = '#111'; c.setLineDash([2, 2]);
    c.beginPath(); c.moveTo(x(now), Math.max(0, top - LH)); c.lineTo(x(now), Math.min(h - 16, bottom)); c.stroke(); c.setLineDash([]);
    c.fillStyle = '#5b6270'; c.font = '11px system-ui, sans-serif';
    const axisY = Math.min(h - 8, bottom - 8);
    c.textAlign = 'left'; c.fillText(fmtT(t0), L, axisY);
    c.textAlign = 'right'; c.fillText(fmtT(now), w - R, axisY);
    c.textAlign = 'left';
    this.el.dataset.count = this.hits.length;
  }
}

// ---- detail panel: decoded fields + hex -------------------------------------------------------

export function hexDump(hex) {
  if (!hex) return '(none)';
  const out = [];
  for (let i = 0; i < hex.length; i += 32) {
    const row = hex.slice(i, i + 32);
    const bytes = row.match(/../g) ?? [];
    const ascii = bytes.map((b) => { const c = parseInt(b, 16); return c >= 32 && c < 127 ? String.fromCharCode(c) : '.'; }).join('');
    out.push(`${(i / 2).toString(16).padStart(4, '0')}  ${bytes.join(' ').padEnd(47)}  ${ascii}`);
  }
  return out.join('\n');
}

export function renderMessageDetail(el, m) {
  if (!m) { el.innerHTML = '<p class="hint">Click a heartbeat in the swimlanes (or a record) to see its decoded fields and bytes.</p>'; return; }
  el.innerHTML = `<h4 data-term="heartbeat">StreamsGroupHeartbeat v${m.api_version} · #${m.seq}</h4>
    <p>${esc(m.member_id)} · sent ${fmtT(m.sent_ms)} · ${m.received_ms >= 0 ? `received ${fmtT(m.received_ms)}` : 'in flight'} · <b class="fate-${esc(m.fate)}">${esc(m.fate)}</b>${m.error ? ` · <b class="err">${esc(m.error)}</b>` : ''}</p>
    <div class="two"><div><h5>request</h5><pre>${esc(JSON.stringify(m.request, null, 1))}</pre></div>
    <div><h5>response</h5><pre>${esc(JSON.stringify(m.response, null, 1))}</pre></div></div>
    <h5>request bytes (${(m.request_hex?.length ?? 0) / 2} B, body without header)</h5><pre class="hex">${esc(hexDump(m.request_hex))}</pre>
    <h5>response bytes (${(m.response_hex?.length ?? 0) / 2} B)</h5><pre class="hex">${esc(hexDump(m.response_hex))}</pre>`;
}

export function renderRecordDetail(el, r) {
  el.innerHTML = `<h4>Record #${r.seq} · ${esc(r.summary)}</h4><p>at ${fmtT(r.at_ms)} · cause: ${esc(r.cause)}</p><pre>${esc(JSON.stringify(r.record, null, 1))}</pre>`;
}

// ---- record log -------------------------------------------------------------------------------

export class RecordLog {
  constructor(el, { onSelect } = {}) {
    this.el = el; this.onSelect = onSelect; this.rows = new Map();
    el.addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-seq]');
      if (tr) this.onSelect?.(this.rows.get(+tr.dataset.seq));
    });
    this.reset();
  }
  reset() {
    this.el.innerHTML = '<table class="records"><tbody></tbody></table>';
    this.body = this.el.querySelector('tbody');
    this.rows.clear();
  }
  append(records) {
    if (!records.length) return;
    const frag = document.createDocumentFragment();
    for (const r of records.slice(-300)) {
      const tr = document.createElement('tr');
      tr.dataset.seq = r.seq;
      tr.className = `rt-${r.record.type}${r.record.value == null ? ' tomb' : ''}`;
      tr.innerHTML = `<td>${r.seq}</td><td>${fmtT(r.at_ms)}</td><td>${esc(r.summary)}</td><td class="cause">${esc(r.cause)}</td>`;
      this.rows.set(r.seq, r);
      frag.prepend(tr);
    }
    this.body.prepend(frag);
    while (this.body.rows.length > 300) {
      const last = this.body.rows[this.body.rows.length - 1];
      this.rows.delete(+last.dataset.seq);
      last.remove();
    }
  }
}

// ---- invariants -------------------------------------------------------------------------------

export function renderInvariants(el, inv) {
  const key = JSON.stringify(inv);
  if (el._key === key) return;
  el._key = key;
  const bad = inv.filter((i) => !i.ok);
  el.classList.toggle('violated', bad.length > 0);
  el.dataset.ok = bad.length ? 'false' : 'true';
  el.innerHTML = `<h3 data-term="invariant">Invariants ${bad.length ? `<span class="bad">${bad.length} violated</span>` : '<span class="good">all hold</span>'}</h3>
    <ul>${inv.map((i) => `<li class="${i.ok ? 'ok' : 'fail'}" title="${esc(i.detail)}"><span>${i.ok ? '✓' : '✗'}</span> ${esc(i.name)}${!i.ok && i.detail ? `<div class="detail">${esc(i.detail)}</div>` : ''}</li>`).join('')}</ul>`;
}
