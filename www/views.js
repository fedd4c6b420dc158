// Rendering components shared by the simulation view, the side-by-side view and live mode.
// Each component keeps its DOM and only touches what changed.
import { API_INFO, bytesReplacer } from './classic.js';

export const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
export const short = (id) => (id && id.length > 14 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id ?? '');
export const fmtT = (ms) => (ms == null ? '–' : ms < 60000 ? `${(ms / 1000).toFixed(ms % 1000 ? 2 : 0)}s` : `${Math.floor(ms / 60000)}m${((ms % 60000) / 1000).toFixed(1).padStart(4, '0')}s`);

/** Natural order of names: digit runs compare as numbers (p2 before p10 before p100). */
export function naturalCompare(a, b) {
  const x = String(a).match(/\d+|\D+/g) ?? [], y = String(b).match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] === y[i]) continue;
    const nx = /^\d/.test(x[i]), ny = /^\d/.test(y[i]);
    if (nx && ny) { const d = Number(x[i]) - Number(y[i]); if (d) return d; return x[i].length - y[i].length; }
    return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

/** The group with its members in natural order of process then member id (the snapshot lists
 * them by id as strings: p1, p10, p100, p11); the same object while the order stays. */
export function naturallyOrdered(g, cache = {}) {
  const ids = g.members.map((m) => m.member_id).join('\n');
  if (cache.ids !== ids) {
    cache.ids = ids;
    cache.perm = g.members.map((m, i) => i).sort((i, j) => naturalCompare(g.members[i].process_id, g.members[j].process_id) || naturalCompare(g.members[i].member_id, g.members[j].member_id));
  }
  if (cache.perm.every((p, i) => p === i)) return g;
  return { ...g, members: cache.perm.map((i) => g.members[i]) };
}

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

/** Calls fn(contentRect) after layout whenever el's size changes (and once at start), so views
 * never read layout in the middle of a frame's DOM writes (no forced synchronous layout). */
export function watchSize(el, fn) {
  const ro = new ResizeObserver((entries) => fn(entries[entries.length - 1].contentRect));
  ro.observe(el);
  return ro;
}

const STATE_TERM = { UNREVOKED_TASKS: 'UNREVOKED_TASKS', UNRELEASED_TASKS: 'UNRELEASED_TASKS', STABLE: 'STABLE', 'not in group': 'not-in-group' };

// ---- group header -----------------------------------------------------------------------------

export function renderHeader(el, g, extra = '') {
  const key = JSON.stringify([g.group_id, g.state, g.group_epoch, g.assignment_epoch, g.topology_epoch, g.assignor, g.num_standby_replicas, g.statuses, g.members.length, g.tasks.length, g.group_type === 'consumer' ? g.members.map((m) => m.target_active.length + m.active.length) : 0, extra]);
  if (el._key === key) return;
  el._key = key;
  const known = g.members.filter((m) => m.state != null).length;
  // A KIP-848 consumer group has partitions, not tasks, and no standbys.
  const consumer = g.group_type === 'consumer';
  const partitions = consumer ? new Set(g.members.flatMap((m) => [...m.active, ...m.target_active])).size : 0;
  el.innerHTML = `
    <span class="badge state-${esc(g.state)}" data-term="gs-${esc(g.state)}" tabindex="0" data-testid="group-state">${esc(g.state)}</span>
    <span class="gid">${esc(g.group_id)}</span>
    <span class="kv" data-term="group-epoch">group epoch <b data-testid="group-epoch">${g.group_epoch}</b></span>
    <span class="kv" data-term="assignment-epoch">assignment epoch <b data-testid="assignment-epoch">${g.assignment_epoch}</b></span>
    ${g.topology_epoch != null ? `<span class="kv" data-term="topology-epoch">topology <b>${g.topology_epoch}</b>${g.validated_topology_epoch != null && g.validated_topology_epoch !== g.topology_epoch ? ` <small>(validated ${g.validated_topology_epoch})</small>` : ''}</span>` : ''}
    ${g.assignor ? `<span class="kv" data-term="assignor">assignor <b>${esc(g.assignor)}</b></span>` : ''}
    ${g.num_standby_replicas != null && !consumer ? `<span class="kv" data-term="standby">standbys <b>${g.num_standby_replicas}</b></span>` : ''}
    <span class="kv">members <b data-testid="member-count">${known}</b></span>
    ${consumer ? `<span class="kv" title="partitions owned or targeted">partitions <b data-testid="partition-count">${partitions}</b></span>` : `<span class="kv">tasks <b>${g.tasks.length}</b></span>`}
    ${extra}
    ${(g.statuses ?? []).map((s) => `<span class="status-chip" data-term="statuses">${esc(s)}</span>`).join('')}`;
}

// ---- epoch timeline (from the record log) -------------------------------------------------------

export class EpochChart {
  constructor(el, { onResize } = {}) {
    this.el = el; this.width = 0; this.onResize = onResize; this.reset();
    watchSize(el, (r) => { if (r.width !== this.width) { this.width = r.width; onResize?.(); } });
    el.classList.add('chart-box');
    el.setAttribute('role', 'img');
    this.svgBox = document.createElement('div');
    this.hover = document.createElement('div');
    this.hover.className = 'chart-hover';
    this.hover.dataset.testid = 'chart-hover';
    this.hover.hidden = true;
    this.legendEl = document.createElement('div');
    this.legendEl.className = 'chart-legend';
    this.legendEl.dataset.testid = 'chart-legend';
    el.replaceChildren(this.svgBox, this.hover, this.legendEl);
    // Values on hover: every series' epoch at the time under the pointer.
    el.addEventListener('mousemove', (e) => this.showAt(e));
    el.addEventListener('mouseleave', () => { this.hover.hidden = true; this.svgBox.querySelector('.hover-line')?.setAttribute('visibility', 'hidden'); });
  }
  /** The narrowest a rebalance phase is drawn (px): a sync phase often lasts a millisecond. */
  static MIN_PHASE_PX = 4;
  /** The value of a step series at time t (null: not in the group then). */
  static valueAt(pts, t) {
    let v;
    for (const [pt, pv] of pts) { if (pt > t) break; v = pv; }
    return v;
  }
  showAt(e) {
    const g = this.geom;
    if (!g) return;
    const r = this.svgBox.getBoundingClientRect(), px = e.clientX - r.left;
    if (px < g.L || px > g.w - g.R) { this.hover.hidden = true; return; }
    const t = ((px - g.L) * g.tmax) / (g.w - g.L - g.R);
    if (t > g.now) { this.hover.hidden = true; return; }
    const name = (id) => this.names?.get(id) ?? id;
    const fmt = (v) => (v == null ? '–' : v);
    const rows = [`<b>${fmtT(Math.round(t))}</b>`, `${this.classic ? 'generation' : 'group epoch'} ${fmt(EpochChart.valueAt(this.group, t))}`];
    if (!this.classic) rows.push(`assignment epoch ${fmt(EpochChart.valueAt(this.assign, t))}`);
    // The rebalance phase under the pointer (a widened one says so).
    for (const b of this.phaseBands ?? []) if (px >= b.x0 - 1 && px <= b.x1 + 1) rows.push(`<span class="ph-key ${b.cls}">■</span> ${esc(b.text)}`);
    let n = 0;
    for (const [id, pts] of this.members) {
      const v = EpochChart.valueAt(pts, t);
      if (v === undefined || v === null) continue;
      if (++n > 16) { rows.push('…'); break; }
      rows.push(`<span style="color:${memberColor(name(id), this.order)}">■</span> ${esc(short(name(id)))} ${v}`);
    }
    this.hover.innerHTML = rows.join('<br>');
    this.hover.hidden = false;
    this.hover.style.left = `${Math.min(px + 12, g.w - 170)}px`;
    const line = this.svgBox.querySelector('.hover-line');
    if (line) { line.setAttribute('x1', px); line.setAttribute('x2', px); line.setAttribute('visibility', 'visible'); }
  }
  reset() { this.group = []; this.assign = []; this.members = new Map(); this.present = new Set(); this.classic = false; this.dirty = true; this.maxE = 1; this.minE = 0; }
  /** Classic groups: display names of coordinator member ids (Map id -> name), for the legend
   * and the colours (the records name members by the coordinator's ids). */
  setNames(names) { this.names = names; }
  ingest(records) {
    for (const r of records) {
      const rec = r.record, t = r.at_ms;
      if (rec.type === 'ClassicGroupMetadata') {
        // A classic group's generation, and each member in it at that generation (§C7).
        this.classic = true;
        const v = rec.value, gen = v ? v.generation : null;
        if (gen != null && (!this.group.length || this.group[this.group.length - 1][1] !== gen)) this.pushPt(this.group, t, gen);
        const now = new Set((v?.members ?? []).map((m) => m.member_id));
        for (const id of now) {
          if (!this.members.has(id)) this.members.set(id, []);
          const pts = this.members.get(id);
          if (!pts.length || pts[pts.length - 1][1] !== gen) this.pushPt(pts, t, gen);
        }
        for (const id of this.present) if (!now.has(id)) this.pushPt(this.members.get(id), t, null);
        this.present = now;
      } else if ((rec.type === 'GroupMetadata' || rec.type === 'ConsumerGroupMetadata') && rec.value) this.pushPt(this.group, t, rec.value.epoch);
      else if ((rec.type === 'TargetAssignmentMetadata' || rec.type === 'ConsumerTargetAssignmentMetadata') && rec.value) this.pushPt(this.assign, t, rec.value.assignment_epoch);
      else if (rec.type === 'CurrentMemberAssignment' || rec.type === 'ConsumerCurrentMemberAssignment') {
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
  /** `phases` (classic groups): the group's state changes [{at_ms, state}], drawn as shaded
   * rebalance phases behind the lines; a phase narrower than `EpochChart.MIN_PHASE_PX` is drawn
   * that wide (a sync phase often lasts a millisecond), and its tooltip and the legend say so. */
  render(now, order, phases) {
    const w = Math.max(300, this.width || 800), h = 160, L = 34, R = 8, T = 26, B = 20;
    const real = performance.now();
    const nph = phases?.length ?? 0, lastPh = nph ? phases[nph - 1] : null;
    const phKey = `${nph}:${lastPh?.at_ms}:${lastPh?.state}:${phases?.[0]?.at_ms}`;
    if (phKey !== this._phKey) { this._phKey = phKey; this.dirty = true; }
    const wait = this.members.size > 20 ? 500 : 150;
    if (!this.dirty && w === this._w && (now === this._now || real - (this._at ?? 0) < wait)) {
      // Skipped to save work while playing: ask for a render once the wait is over, so the chart
      // catches up with the last time shown (after a pause no other render may come).
      if (now !== this._now && !this._later) this._later = setTimeout(() => { this._later = 0; this.onResize?.(); }, wait);
      return;
    }
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
    const name = (id) => this.names?.get(id) ?? id;
    // Each series' value now as a dot at the right end of its line: the lines start where a
    // value was written, so records written at the time shown (a recorded trace opens at its
    // first records, at 0 s) would otherwise be lines of no length, an empty chart.
    const dot = (pts, cls, stroke = '') => {
      const v = EpochChart.valueAt(pts, now);
      return v == null ? '' : `<circle cx="${x(now).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3.5" class="now ${cls}"${stroke && ` fill="${stroke}"`}/>`;
    };
    // Every line at its true height (members on top of the group lines: hover for the values).
    const memberPaths = [...this.members].map(([id, pts]) => {
      const c = memberColor(name(id), order);
      return `<path d="${path(pts)}" class="m" stroke="${c}"><title>member ${esc(name(id))}</title></path>${dot(pts, 'm', c)}`;
    }).join('');
    this.geom = { L, R, w, tmax, now }; this.order = order;
    // Rebalance phases of a classic group: join phase (PreparingRebalance) and sync phase
    // (CompletingRebalance) shaded from their start to the next state change. One too short to
    // see at this scale is widened to MIN_PHASE_PX, and says so.
    let shade = '', widened = 0;
    this.phaseBands = [];
    if (this.classic && phases) {
      const minPx = EpochChart.MIN_PHASE_PX;
      for (let i = 0; i < phases.length && phases[i].at_ms <= now; i++) {
        const p = phases[i], cls = p.state === 'PreparingRebalance' ? 'ph-join' : p.state === 'CompletingRebalance' ? 'ph-sync' : null;
        if (!cls) continue;
        const end = Math.min(now, phases[i + 1]?.at_ms ?? now), x0 = x(p.at_ms), px = x(end) - x0;
        const narrow = px < minPx, ms = Math.round(end - p.at_ms);
        if (narrow) widened++;
        const what = cls === 'ph-join' ? 'join phase' : 'sync phase';
        const title = `${what} (${p.state}) ${fmtT(p.at_ms)}–${fmtT(end)}: ${ms} ms${narrow ? `; drawn ${minPx} px wide so it shows (true width ${Math.max(0, px).toFixed(1)} px)` : ''}`;
        const rx = narrow ? Math.max(L, x0 - (minPx - px) / 2) : x0, rw = narrow ? minPx : px;
        this.phaseBands.push({ x0: rx, x1: rx + rw, cls, text: narrow ? `${what} ${ms} ms (widened to ${minPx} px)` : `${what} ${ms} ms` });
        shade += `<rect x="${rx.toFixed(1)}" y="${T}" width="${rw.toFixed(1)}" height="${h - T - B}" class="${cls}${narrow ? ' widened' : ''}" data-state="${p.state}" data-ms="${ms}"><title>${esc(title)}</title></rect>`;
      }
    }
    const legend = this.classic
      ? `<g class="legend" transform="translate(${L},2)"><rect width="${widened ? 690 : 470}" height="16" rx="3"/><line x1="6" x2="22" y1="8" y2="8" class="ge"/><text x="26" y="12">group generation</text>
      <line x1="130" x2="146" y1="8" y2="8" class="m" stroke="#888"/><text x="150" y="12">members</text>
      <rect x="212" y="3" width="14" height="10" class="ph-join"/><text x="230" y="12">join phase</text><rect x="302" y="3" width="14" height="10" class="ph-sync"/><text x="320" y="12">sync phase (leader assigns)</text>${widened ? `<text x="482" y="12" data-testid="phases-widened">· ${widened} too short: widened to ${EpochChart.MIN_PHASE_PX} px</text>` : ''}</g>`
      : `<g class="legend" transform="translate(${L},2)"><rect width="245" height="16" rx="3"/><line x1="6" x2="22" y1="8" y2="8" class="ge"/><text x="26" y="12">group epoch</text>
      <line x1="100" x2="116" y1="8" y2="8" class="ae"/><text x="120" y="12">assignment</text><line x1="186" x2="202" y1="8" y2="8" class="m" stroke="#888"/><text x="206" y="12">members</text></g>`;
    this.svgBox.innerHTML = `<svg width="${w}" height="${h}" class="chart" aria-hidden="true">${shade}${ticksY.join('')}${ticksX.join('')}
      <path d="${path(this.group)}" class="ge"><title>${this.classic ? 'group generation' : 'group epoch'}</title></path>${dot(this.group, 'ge')}
      <path d="${path(this.assign)}" class="ae"><title>assignment epoch</title></path>${dot(this.assign, 'ae')}
      ${memberPaths}
      <line class="hover-line" x1="0" x2="0" y1="${T}" y2="${h - B}" visibility="hidden"/>
      ${!this.group.length && !this.members.size ? `<text x="${w / 2}" y="${h / 2}" text-anchor="middle" class="empty-hint">Nothing has happened yet: press ▶ (Space) to play, or → to step to the next event</text>` : ''}
      ${legend}</svg>`;
    // Per-member legend with the current epoch of each (the first 24 members).
    const cur = (pts) => (pts.length ? pts[pts.length - 1][1] : null);
    const entries = [...this.members].filter(([, pts]) => cur(pts) != null);
    const legendKey = entries.map(([id, pts]) => `${id}:${cur(pts)}`).join(',');
    if (legendKey !== this._legendKey) {
      this._legendKey = legendKey;
      this.legendEl.innerHTML = entries.slice(0, 24).map(([id, pts]) => `<span class="lg-m"><i style="background:${memberColor(name(id), order)}"></i>${esc(short(name(id)))} <b>${cur(pts)}</b></span>`).join('')
        + (entries.length > 24 ? `<span class="lg-m">+${entries.length - 24} more (hover the chart)</span>` : '');
    }
    const gNow = cur(this.group), aNow = cur(this.assign);
    this.el.setAttribute('aria-label', `epochs over time up to ${fmtT(now)}: ${this.classic ? 'generation' : 'group epoch'} ${gNow ?? 'none'}${this.classic ? '' : `, assignment epoch ${aNow ?? 'none'}`}, ${entries.length} members; the legend below lists each member's epoch`);
    this.el.dataset.generation = this.classic && this.group.length ? String(this.group[this.group.length - 1][1]) : '';
  }
}

function niceStep(x) {
  const p = 10 ** Math.floor(Math.log10(Math.max(x, 1)));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

// ---- member cards -----------------------------------------------------------------------------

/** requestIdleCallback, or a timer where the browser has none (Safari). */
const idle = (fn) => (window.requestIdleCallback ? requestIdleCallback(fn, { timeout: 500 }) : setTimeout(() => fn({ timeRemaining: () => 8, didTimeout: false }), 50));

const ARC_R = 13, ARC_C = 2 * Math.PI * ARC_R;

export class MemberCards {
  constructor(el, { onMenu } = {}) {
    this.el = el; this.cards = new Map(); this.onMenu = onMenu; this.now = 0;
    // Session arcs tick every frame: only the cards in view are touched (100 members: about 12);
    // a card scrolled into view catches up at once. (Off-screen cards also skip rendering:
    // content-visibility: auto in style.css.)
    // A changed card out of view is filled in when it scrolls into view or when the browser is
    // idle, not in the frame (a rebalance of 100 members changes every card at once).
    this.visible = new Set();
    this.stale = new Set();
    this.io = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) { this.visible.add(e.target); this.refresh(e.target); } else this.visible.delete(e.target);
      }
    }, { root: el, rootMargin: '120px 0px' });
    if (onMenu) {
      el.addEventListener('contextmenu', (e) => this.menu(e));
      el.addEventListener('click', (e) => { if (e.target.closest('.menu-btn')) this.menu(e); });
    }
  }
  /** Opens the member's action menu: at the pointer (right-click), or under its ⋯ button (click,
   * Enter or Space: keyboard and touch users get the same menu). */
  menu(e) {
    const card = e.target.closest('.card');
    if (!card) return;
    e.preventDefault();
    const btn = card.querySelector('.menu-btn');
    if (e.type === 'contextmenu' || !btn) { this.onMenu(card.dataset.member, e.clientX, e.clientY, btn); return; }
    const r = btn.getBoundingClientRect();
    this.onMenu(card.dataset.member, r.left, r.bottom + 2, btn);
  }
  update(g, now, order) {
    this.now = now;
    this.assignmentEpoch = g.group_type === 'classic' ? null : g.assignment_epoch;
    this.unit = g.group_type === 'consumer' ? 'partitions' : 'tasks'; // what a KIP-848 consumer is assigned
    let fresh = 0;
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
        this.io.observe(c);
      }
      if ((prev ? prev.nextSibling : this.el.firstChild) !== c) this.el.insertBefore(c, prev ? prev.nextSibling : this.el.firstChild);
      prev = c;
      c._m = m;
      const color = memberColor(m.member_id, order);
      // Everything fill() shows (not the deadlines, which only move the arc).
      const cl = m.classic;
      const key = `${cl ? `${cl.client_state}|${cl.generation}|${cl.is_leader}|${cl.known_to_coordinator}|${cl.owned_partitions}|${cl.revoked_partitions}|${cl.stalled_until_ms}|${cl.assignor}` : ''}|${m.process_id}|${m.rack}|${m.instance_id}|${m.client_status}|${m.state}|${m.member_epoch}|${m.previous_member_epoch}|${m.active}|${m.standby}|${m.warmup}|${m.pending_revocation}|${m.target_active}|${m.session_deadline_ms == null && m.state != null && !m.next_heartbeat_ms}|${color}|${this.assignmentEpoch}`;
      if (c._key !== key) {
        c._key = key; c._order = order;
        // New cards: the first ones now (they are the ones in view at first), the rest later.
        if (this.visible.has(c) || (!c._arcLabel && fresh++ < 24)) this.refresh(c, true); else this.stale.add(c);
      } else if (this.visible.has(c)) this.arc(c);
    }
    for (const [id, c] of this.cards) if (!seen.has(id)) { c.remove(); this.cards.delete(id); this.visible.delete(c); this.stale.delete(c); this.io.unobserve(c); }
    if (this.stale.size && !this.idle) this.idle = idle((d) => this.catchUp(d));
  }
  /** Fills a card from its latest member data (if stale) and ticks its arc. */
  refresh(c, force = false) {
    if (force || this.stale.has(c)) {
      this.stale.delete(c);
      c._off = c._label = null;
      this.fill(c, c._m, null, c._order);
      c._arc = c.querySelector('.arc'); c._arcLabel = c.querySelector('.arc-label');
    }
    this.arc(c);
  }
  catchUp(deadline) {
    this.idle = 0;
    for (const c of this.stale) {
      if (deadline.timeRemaining() < 2 && !deadline.didTimeout) break;
      this.refresh(c, true);
      if (deadline.didTimeout) break; // one card per forced call
    }
    if (this.stale.size) this.idle = idle((d) => this.catchUp(d));
  }
  /** Session arc of one card: time left until its session deadline. */
  arc(c) {
    const m = c._m, arc = c._arc;
    if (!m || !arc) return;
    const left = m.session_deadline_ms != null ? Math.max(0, m.session_deadline_ms - this.now) : null;
    const frac = left == null ? 0 : Math.min(1, left / (m.session_timeout_ms || 45000));
    const off = (Math.round(ARC_C * (1 - frac) * 2) / 2).toFixed(1), label = left == null ? '–' : `${Math.ceil(left / 1000)}s`;
    if (c._off !== off) { c._off = off; arc.setAttribute('stroke-dashoffset', off); arc.classList.toggle('low', frac < 0.3); }
    if (c._label !== label) { c._label = label; c._arcLabel.textContent = label; }
  }
  fill(c, m, g, order) {
    if (m.classic) { this.fillClassic(c, m, order); return; }
    const pend = new Set(m.pending_revocation);
    const chips = (list, role) => list.map((t) => `<span class="chip ${role}${pend.has(t) ? ' pending' : ''}">${esc(t)}</span>`).join('');
    const tgtA = new Set(m.target_active), curA = new Set(m.active);
    const plus = m.target_active.filter((t) => !curA.has(t)), minus = m.active.filter((t) => !tgtA.has(t));
    // `unknown`: live mode (the server sees only the coordinator's side).
    const status = m.client_status && m.client_status !== 'alive' && m.client_status !== 'unknown' ? `<span class="cstatus ${esc(m.client_status)}">${esc(m.client_status)}</span>` : '';
    const st = m.state ?? 'not in group';
    const behind = m.state === 'STABLE' && m.member_epoch != null && this.assignmentEpoch != null && m.member_epoch >= 0 && m.member_epoch < this.assignmentEpoch;
    c.className = `card ${m.state ? '' : 'gone'} ${m.client_status ?? ''} ${pend.size ? 'has-pending' : ''}`;
    c.style.setProperty('--mc', memberColor(m.member_id, order));
    c.innerHTML = `
      <div class="card-top">
        <svg class="session" width="34" height="34" data-term="session"${m.session_deadline_ms == null && m.state != null && !m.next_heartbeat_ms ? ' style="display:none"' : ''}><circle cx="17" cy="17" r="${ARC_R}" class="arc-bg"/>
          <circle cx="17" cy="17" r="${ARC_R}" class="arc" stroke-dasharray="${ARC_C.toFixed(2)}" transform="rotate(-90 17 17)"/>
          <text x="17" y="21" text-anchor="middle" class="arc-label"></text></svg>
        <div class="who"><b title="${esc(m.member_id)}">${esc(short(m.member_id))}</b> ${status}
          <div class="sub">${esc(m.process_id)}${m.rack ? ` · rack ${esc(m.rack)}` : ''}${m.instance_id ? ` · <span data-term="static-member">static ${esc(m.instance_id)}</span>` : ''}</div></div>
        ${this.onMenu ? `<button class="menu-btn" title="actions (or right-click)" aria-haspopup="menu" aria-expanded="false" aria-label="actions for member ${esc(m.member_id)} (${esc(m.process_id)})" data-testid="member-menu">⋯</button>` : ''}
      </div>
      <div class="card-state"><span class="mstate s-${esc(st)}" data-term="${STATE_TERM[st] ?? 'reconciliation'}" tabindex="0" data-testid="member-state">${esc(st)}</span>
        <span data-term="member-epoch">epoch <b>${m.member_epoch ?? '–'}</b></span>${m.previous_member_epoch != null ? `<small> (prev ${m.previous_member_epoch})</small>` : ''}</div>
      ${behind ? `<div class="mstate-note" data-testid="epoch-note">at epoch ${m.member_epoch}, the assignment is at ${this.assignmentEpoch}: it learns the new epoch on its next heartbeat</div>` : ''}
      <div class="roles">
        ${m.active.length ? `<div><span class="rl" data-term="active">A</span>${chips(m.active, 'active')}</div>` : ''}
        ${m.standby.length ? `<div><span class="rl" data-term="standby">S</span>${chips(m.standby, 'standby')}</div>` : ''}
        ${m.warmup.length ? `<div><span class="rl" data-term="warmup">W</span>${chips(m.warmup, 'warmup')}</div>` : ''}
        ${pend.size ? `<div class="pend"><span class="rl" data-term="pending-revocation">R</span>${chips(m.pending_revocation, 'revoke pending')}</div>` : ''}
        ${!m.active.length && !m.standby.length && !m.warmup.length && !pend.size ? `<div class="none">no ${this.unit ?? 'tasks'}</div>` : ''}
      </div>
      ${plus.length || minus.length ? `<div class="todo" data-term="reconciliation">to target: ${plus.length ? `<span class="plus">+${plus.length}</span>` : ''} ${minus.length ? `<span class="minus">−${minus.length}</span>` : ''}</div>` : ''}`;
  }
}

/** A classic consumer's card: its client state, generation, leader mark, owned and just revoked
 * partitions. */
MemberCards.prototype.fillClassic = function fillClassic(c, m, order) {
  const k = m.classic, st = k.client_state;
  const status = m.client_status && m.client_status !== 'alive' && m.client_status !== 'unknown' ? `<span class="cstatus ${esc(m.client_status)}">${esc(m.client_status)}</span>` : '';
  const revoked = new Set(k.revoked_partitions);
  c.className = `card classic-card ${st === 'stopped' ? 'gone' : ''} ${m.client_status ?? ''} ${st === 'revoking' ? 'has-pending' : ''}`;
  c.style.setProperty('--mc', memberColor(m.member_id, order));
  const chips = (list, cls) => list.map((p) => `<span class="chip ${cls}">${esc(p)}</span>`).join('');
  c.innerHTML = `
    <div class="card-top">
      <svg class="session" width="34" height="34" data-term="session"${m.session_deadline_ms == null ? ' style="display:none"' : ''}><circle cx="17" cy="17" r="${ARC_R}" class="arc-bg"/>
        <circle cx="17" cy="17" r="${ARC_R}" class="arc" stroke-dasharray="${ARC_C.toFixed(2)}" transform="rotate(-90 17 17)"/>
        <text x="17" y="21" text-anchor="middle" class="arc-label"></text></svg>
      <div class="who"><b title="${esc(m.member_id)}${k.coordinator_member_id ? ` · coordinator id ${esc(k.coordinator_member_id)}` : ''}">${esc(short(m.member_id))}</b> ${k.is_leader ? '<span class="leader" data-term="leader" data-testid="leader">leader</span>' : ''} ${status}
        <div class="sub">${esc(m.process_id)}${m.instance_id ? ` · <span data-term="static-member">static ${esc(m.instance_id)}</span>` : ''}${k.known_to_coordinator ? '' : ' · <i>unknown to the coordinator</i>'}</div></div>
      ${this.onMenu ? `<button class="menu-btn" title="actions (or right-click)" aria-haspopup="menu" aria-expanded="false" aria-label="actions for member ${esc(m.member_id)} (${esc(m.process_id)})" data-testid="member-menu">⋯</button>` : ''}
    </div>
    <div class="card-state"><span class="mstate c-${esc(st)}" data-term="cs-${esc(st)}" tabindex="0" data-testid="member-state">${esc(st)}</span>
      <span data-term="generation">gen <b>${k.generation}</b></span></div>
    <div class="roles">
      ${k.owned_partitions.length ? `<div><span class="rl" data-term="owned-partitions">P</span>${chips(k.owned_partitions, 'active')}</div>` : '<div class="none">owns no partition</div>'}
      ${revoked.size && st !== 'stable' && st !== 'revoking' ? `<div class="pend"><span class="rl" data-term="revoked">R</span>${chips(k.revoked_partitions, 'revoked')}</div>` : ''}
    </div>
    ${st === 'revoking' ? `<div class="todo" data-term="revoked">revoking: gives up ${k.protocol === 'cooperative' ? 'the partitions that move' : 'all its partitions'} before it rejoins</div>` : ''}
    ${revoked.size && st === 'stable' ? `<div class="todo" data-term="revoked">last rebalance: revoked ${revoked.size}, got ${k.owned_partitions.filter((p) => revoked.has(p)).length} of them back</div>` : ''}
    ${k.stalled_until_ms != null ? `<div class="todo">poll loop stalled until ${fmtT(k.stalled_until_ms)}</div>` : ''}`;
};

// ---- task × member grid (canvas: 100 members × 100 tasks would be 10 000 table cells) -----------
//
// A scroller holds a sizer of the full grid's size and a sticky canvas of the visible size; only the
// visible cells are drawn, the header row and the task column stay in place like sticky table
// headers. Cell states are kept per member column and recomputed only for members whose task
// lists changed. Changed cells flash (1.4 s yellow ring). Hover shows a cell's task, member,
// current and target role.

const ROLE_LETTER = ['', 'A', 'S', 'W', 'R'];
const ROLE_NAME = ['', 'active', 'standby', 'warmup', 'revoke'];
const ROLE_FILL = ['#f1f3f6', '#2563eb', '#7c3aed', '#d97706', '#fff'];
const GRID = { cw: 26, ch: 22, gap: 2, head: 19, pad: 4, flashMs: 1400, font: '12px ui-monospace, Menlo, monospace' };

/** Per member: [current roles, target roles] as Map task -> role code. */
function roleMaps(m) {
  const cur = new Map(), tgt = new Map();
  for (const t of m.warmup) cur.set(t, 3);
  for (const t of m.standby) cur.set(t, 2);
  for (const t of m.active) cur.set(t, 1);
  for (const t of m.pending_revocation) cur.set(t, 4);
  for (const t of m.target_warmup) tgt.set(t, 3);
  for (const t of m.target_standby) tgt.set(t, 2);
  for (const t of m.target_active) tgt.set(t, 1);
  return [cur, tgt];
}
const listsKey = (m) => `${m.active}|${m.standby}|${m.warmup}|${m.pending_revocation}|${m.target_active}|${m.target_standby}|${m.target_warmup}`;
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

export class AssignmentGrid {
  constructor(el, { onCell } = {}) {
    this.el = el; this.onCell = onCell;
    this.tasks = []; this.members = []; this.cols = []; this.cur = new Uint8Array(0); this.tgt = new Uint8Array(0);
    this.dif = new Uint8Array(0); this.flash = new Float64Array(0); this.fresh = new Uint8Array(0); this.diffKey = ''; this.anim = 0; this.dirty = true;
    this.summary = document.createElement('div');
    this.summary.className = 'grid-summary';
    this.summary.dataset.testid = 'grid-summary';
    this.scroller = document.createElement('div');
    this.scroller.className = 'grid-scroll';
    this.sizer = document.createElement('div');
    this.sizer.className = 'grid-sizer';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'grid-canvas';
    this.canvas.setAttribute('role', 'img');
    this.sizer.append(this.canvas);
    this.scroller.append(this.sizer);
    el.replaceChildren(this.summary, this.scroller);
    this.sx = this.sy = this.boxW = this.boxH = 0;
    this.scroller.addEventListener('scroll', () => { this.sx = this.scroller.scrollLeft; this.sy = this.scroller.scrollTop; this.draw(); }, { passive: true });
    watchSize(this.scroller, (r) => { this.boxW = r.width; this.boxH = r.height; this.draw(); });
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('click', (e) => { const h = this.at(e); if (h?.cell) this.onCell?.(h.task, h.member); });
  }

  /** `diff` (optional): Set of `task|process_id` cells to outline (side-by-side differences). */
  update(g, order, diff) {
    const members = g.members.filter((m) => m.state != null || m.active.length || m.pending_revocation.length);
    const tasks = this.sortedTasks(g);
    const ids = members.map((m) => m.member_id);
    const corner = g.group_type === 'classic' ? 'partition \\ consumer' : g.group_type === 'consumer' ? 'partition \\ member' : 'task \\ member';
    if (corner !== this.corner) { this.corner = corner; this.tasks = []; } // reshaped below
    const diffKey = diff ? [...diff].sort().join(',') : '';
    const newTasks = tasks !== this.tasks;
    if (newTasks || !sameList(ids, this.members)) this.reshape(tasks, ids);
    const R = tasks.length, C = ids.length, now = performance.now();
    // Columns are recomputed when their member's lists change; all of them for new tasks or diffs.
    const allCols = newTasks || diffKey !== this.diffKey;
    this.diffKey = diffKey;
    for (let c = 0; c < C; c++) {
      const m = members[c], col = this.cols[c];
      const color = memberColor(m.member_id, order);
      if (col.color !== color || col.pid !== m.process_id) { col.color = color; col.pid = m.process_id; this.dirty = true; }
      const key = listsKey(m);
      if (!allCols && key === col.key) continue;
      col.key = key;
      const [cm, tm] = roleMaps(m);
      let mis = 0;
      for (let r = 0; r < R; r++) {
        const t = tasks[r], i = r * C + c;
        const cu = cm.get(t) ?? 0, tg = tm.get(t) ?? 0, df = diff?.has(`${t}|${m.process_id}`) ? 1 : 0;
        if (cu !== tg && !(cu === 4 && !tg)) mis++;
        if (cu === this.cur[i] && tg === this.tgt[i] && df === this.dif[i]) continue;
        if (!this.fresh[i]) this.flash[i] = now;
        this.cur[i] = cu; this.tgt[i] = tg; this.dif[i] = df;
        this.dirty = true;
      }
      col.mismatch = mis;
    }
    this.fresh.fill(0);
    let mismatch = 0;
    for (let c = 0; c < C; c++) mismatch += this.cols[c].mismatch;
    const text = g.group_type === 'classic'
      ? `${R} partitions × ${C} consumers · ${R - this.ownedRows(C)} owned by nobody`
      : `${R} ${g.group_type === 'consumer' ? 'partitions' : 'tasks'} × ${C} members · ${mismatch} cell${mismatch === 1 ? '' : 's'} differ from target`;
    if (this.summary.textContent !== text) {
      this.summary.textContent = text;
      this.summary.dataset.mismatch = mismatch;
      this.canvas.setAttribute('aria-label', `assignment grid: ${text}`);
    }
    if (this.dirty) this.draw();
  }

  /** How many rows (partitions) have a current role in some column. */
  ownedRows(C) {
    let n = 0;
    for (let r = 0; r < this.tasks.length; r++) for (let c = 0; c < C; c++) if (this.cur[r * C + c]) { n++; break; }
    return n;
  }

  /** allTasks(g), the same array as last time when the set of tasks did not change. */
  sortedTasks(g) {
    const s = new Set(g.tasks);
    for (const m of g.members) for (const k of TASK_LISTS) for (const t of m[k]) s.add(t);
    if (s.size === this.tasks.length && this.tasks.every((t) => s.has(t))) return this.tasks;
    return sortTasks(s);
  }

  reshape(tasks, ids) {
    // Carry the states of cells that stay (a member joining does not reset the others' flashes).
    const oldR = new Map(this.tasks.map((t, r) => [t, r])), oldC = new Map(this.members.map((id, c) => [id, c]));
    const C0 = this.members.length, R = tasks.length, C = ids.length;
    const { cur, tgt, dif, flash } = this;
    this.cur = new Uint8Array(R * C); this.tgt = new Uint8Array(R * C); this.dif = new Uint8Array(R * C);
    this.flash = new Float64Array(R * C); this.fresh = new Uint8Array(R * C);
    const cmap = ids.map((id) => oldC.get(id) ?? -1);
    for (let r = 0; r < R; r++) {
      const r0 = oldR.get(tasks[r]) ?? -1;
      for (let c = 0; c < C; c++) {
        const i = r * C + c, c0 = cmap[c];
        if (r0 < 0 || c0 < 0) { this.fresh[i] = 1; continue; } // a new row or column appears without flashing
        const j = r0 * C0 + c0;
        this.cur[i] = cur[j]; this.tgt[i] = tgt[j]; this.dif[i] = dif[j]; this.flash[i] = flash[j];
      }
    }
    const keep = new Map(this.cols.map((col) => [col.id, col])), sameTasks = tasks === this.tasks;
    this.tasks = tasks; this.members = ids;
    // Geometry: a table with border-spacing 2px, columns as wide as their header label.
    const c2 = this.ctx();
    c2.font = `600 ${GRID.font}`;
    const width = (text) => { let w = TEXT_W.get(text); if (w == null) TEXT_W.set(text, (w = c2.measureText(text).width)); return w; };
    const colW = ids.map((id) => Math.max(GRID.cw, Math.ceil(width(short(id))) + 2 * GRID.pad));
    this.rowHead = Math.ceil(Math.max(width(this.corner), ...tasks.map(width))) + 2 * GRID.pad;
    // A column that stays keeps its change key: only new members are computed again.
    this.cols = ids.map((id, c) => ({ id, w: colW[c], x: 0, key: null, mismatch: 0, color: null, pid: null, ...(sameTasks ? pick(keep.get(id)) : {}) }));
    let x = GRID.gap + this.rowHead + GRID.gap;
    for (const col of this.cols) { col.x = x; x += col.w + GRID.gap; }
    this.W = x;
    this.H = GRID.gap + GRID.head + GRID.gap + R * (GRID.ch + GRID.gap);
    this.sizer.style.width = `${this.W}px`;
    this.sizer.style.height = `${this.H}px`;
    this.el.dataset.members = C;
    this.el.dataset.columns = ids.join(' ');
    this.dirty = true;
  }

  ctx() { return (this._ctx ??= this.canvas.getContext('2d')); }

  /** Draws the visible part; called on data changes, scroll, resize and while cells flash. */
  draw() {
    // Sizes come from the ResizeObserver and the scroll position from scroll events: no layout read.
    const vw = Math.min(this.W ?? 0, this.boxW), vh = Math.min(this.H ?? 0, this.boxH);
    if (!(vw > 0 && vh > 0)) return; // hidden (side-by-side tab not shown): drawn when it shows
    this.dirty = false;
    const dpr = window.devicePixelRatio || 1, cv = this.canvas;
    if (cv.width !== Math.round(vw * dpr) || cv.height !== Math.round(vh * dpr)) {
      cv.width = Math.round(vw * dpr); cv.height = Math.round(vh * dpr);
      cv.style.width = `${vw}px`; cv.style.height = `${vh}px`;
    }
    const c = this.ctx(), sx = this.sx, sy = this.sy;
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.fillStyle = '#fff';
    c.fillRect(0, 0, vw, vh);
    const { cw, ch, gap, head, flashMs } = GRID, C = this.members.length, R = this.tasks.length, now = performance.now();
    const top = gap + head + gap, left = gap + this.rowHead + gap;
    // Visible columns and rows (the header row and the task column cover the scrolled-under part).
    let c0 = 0;
    while (c0 < C && this.cols[c0].x + this.cols[c0].w - sx < left) c0++;
    let c1 = c0;
    while (c1 < C && this.cols[c1].x - sx < vw) c1++;
    const r0 = Math.max(0, Math.floor((sy) / (ch + gap)) - 1), r1 = Math.min(R, Math.ceil((sy + vh) / (ch + gap)) + 1);
    let flashing = false;
    const rings = [];
    c.save();
    c.beginPath(); c.rect(left, top, vw - left, vh - top); c.clip();
    c.textAlign = 'center'; c.textBaseline = 'middle';
    c.font = `700 ${GRID.font}`;
    for (let r = r0; r < r1; r++) {
      const y = top + r * (ch + gap) - sy;
      for (let k = c0; k < c1; k++) {
        const col = this.cols[k], x = col.x - sx, w = col.w, i = r * C + k;
        const cu = this.cur[i], tg = this.tgt[i];
        const age = now - this.flash[i];
        if (age < flashMs) {
          // flash: 0 0 0 4px #facc15 easing out to nothing
          flashing = true;
          const p = age / flashMs, e = 1 - (1 - p) * (1 - p) * (1 - p);
          c.globalAlpha = 1 - e;
          c.fillStyle = '#facc15';
          roundRect(c, x - 4 * (1 - e), y - 4 * (1 - e), w + 8 * (1 - e), ch + 8 * (1 - e), 4 + 4 * (1 - e)); c.fill();
          c.globalAlpha = 1;
        }
        c.drawImage(cellSprite(cu, tg, w, dpr), x - 4, y - 4, w + 8, ch + 8);
        if (this.dif[i]) rings.push(x, y, w);
      }
    }
    // Side-by-side differences: a 3 px ring around the cell, over its neighbours.
    c.strokeStyle = '#f43f5e'; c.lineWidth = 3;
    for (let j = 0; j < rings.length; j += 3) { roundRect(c, rings[j] - 1.5, rings[j + 1] - 1.5, rings[j + 2] + 3, ch + 3, 5.5); c.stroke(); }
    c.restore();
    // Header row (member labels over a bar of the member's colour) and task column.
    c.font = `600 ${GRID.font}`; c.textBaseline = 'middle';
    c.fillStyle = '#fff'; c.fillRect(0, 0, vw, top - gap / 2);
    c.save(); c.beginPath(); c.rect(left, 0, vw - left, top); c.clip();
    c.textAlign = 'center';
    for (let k = c0; k < c1; k++) {
      const col = this.cols[k], x = col.x - sx;
      c.fillStyle = '#5b6270'; c.fillText(short(col.id), x + col.w / 2, gap + (head - 3) / 2 + 1);
      c.fillStyle = col.color ?? '#888'; c.fillRect(x, gap + head - 3, col.w, 3);
    }
    c.restore();
    c.fillStyle = '#fff'; c.fillRect(0, 0, left - gap / 2, vh);
    c.save(); c.beginPath(); c.rect(0, top, left, vh - top); c.clip();
    c.textAlign = 'right'; c.fillStyle = '#5b6270';
    for (let r = r0; r < r1; r++) c.fillText(this.tasks[r], gap + this.rowHead - GRID.pad, top + r * (ch + gap) - sy + ch / 2 + 1);
    c.restore();
    c.textAlign = 'right'; c.fillStyle = '#5b6270';
    c.fillText(this.corner, gap + this.rowHead - GRID.pad, gap + (head - 3) / 2 + 1);
    c.textAlign = 'left';
    // Keep flashing cells animating (also when paused).
    if (flashing && !this.anim) this.anim = requestAnimationFrame(() => { this.anim = 0; this.draw(); });
  }

  /** The cell, column header or task label under a mouse event. */
  at(e) {
    const r = this.canvas.getBoundingClientRect();
    const px = e.clientX - r.left, py = e.clientY - r.top, sx = this.scroller.scrollLeft, sy = this.scroller.scrollTop;
    const { ch, gap, head } = GRID, top = gap + head + gap, left = gap + this.rowHead + gap;
    const k = px < left ? -1 : this.cols.findIndex((col) => px + sx >= col.x && px + sx < col.x + col.w);
    const row = py < top ? -1 : Math.floor((py + sy - top) / (ch + gap));
    if (row >= this.tasks.length) return null;
    const inRow = row >= 0 && (py + sy - top) - row * (ch + gap) < ch;
    if (k >= 0 && row < 0) return { member: this.members[k], header: true, col: this.cols[k] };
    if (k < 0 && row >= 0) return inRow ? { task: this.tasks[row] } : null;
    if (k >= 0 && row >= 0 && inRow) return { cell: true, task: this.tasks[row], member: this.members[k], i: row * this.members.length + k };
    return null;
  }

  hover(e) {
    const h = this.at(e);
    let title = '';
    if (h?.cell) title = `${h.task} @ ${h.member}\ncurrent: ${ROLE_NAME[this.cur[h.i]] || '–'}\ntarget: ${ROLE_NAME[this.tgt[h.i]] || '–'}`;
    else if (h?.header) title = `${h.member} (${h.col.pid})`;
    else if (h?.task) title = h.task;
    if (this.canvas.title !== title) this.canvas.title = title;
  }

  /** Where a cell is drawn, in client coordinates (its centre), or null. */
  cellCenter(task, member) {
    const r = this.tasks.indexOf(task), k = this.members.indexOf(member);
    if (r < 0 || k < 0) return null;
    const b = this.canvas.getBoundingClientRect(), { ch, gap, head } = GRID, col = this.cols[k];
    return { x: b.left + col.x + col.w / 2 - this.scroller.scrollLeft, y: b.top + gap + head + gap + r * (ch + gap) + ch / 2 - this.scroller.scrollTop };
  }

  /** The drawn state of one cell (tests, console): {current, target, diff} or null. */
  cell(task, member) {
    const r = this.tasks.indexOf(task), k = this.members.indexOf(member);
    if (r < 0 || k < 0) return null;
    const i = r * this.members.length + k;
    return { current: ROLE_NAME[this.cur[i]] || null, target: ROLE_NAME[this.tgt[i]] || null, diff: !!this.dif[i] };
  }
}

const TEXT_W = new Map(); // label widths in the grid's header font
const pick = (col) => (col ? { key: col.key, mismatch: col.mismatch, color: col.color, pid: col.pid } : {});

/** A cell's look (fill, outline, letter) pre-drawn once per kind and width: the grid
 * then draws one image per cell. 4 px margin for the rings. */
const SPRITES = new Map();
function cellSprite(cu, tg, w, dpr) {
  const key = `${cu}${tg}|${w}|${dpr}`;
  let sp = SPRITES.get(key);
  if (sp) return sp;
  const { ch } = GRID;
  sp = document.createElement('canvas');
  sp.width = Math.ceil((w + 8) * dpr); sp.height = Math.ceil((ch + 8) * dpr);
  const c = sp.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 4 * dpr, 4 * dpr);
  const x = 0, y = 0;
  c.fillStyle = ROLE_FILL[cu];
  roundRect(c, x, y, w, ch, 4); c.fill();
  if (cu === 4) {
    c.strokeStyle = '#dc2626'; c.lineWidth = 2; c.setLineDash([4, 2]);
    roundRect(c, x + 1, y + 1, w - 2, ch - 2, 3); c.stroke(); c.setLineDash([]);
  } else if (cu !== tg) {
    // outline = target role (inset like outline-offset: -2px); dotted black: no target role
    const none = !tg && cu;
    if (tg || none) {
      c.strokeStyle = none ? '#111' : ROLE_FILL[tg]; c.lineWidth = 2.5; c.setLineDash(none ? [2.5, 2.5] : []);
      roundRect(c, x + 1.25, y + 1.25, w - 2.5, ch - 2.5, 3); c.stroke(); c.setLineDash([]);
    }
  }
  if (cu) {
    c.font = `700 ${GRID.font}`; c.textAlign = 'center'; c.textBaseline = 'middle';
    c.fillStyle = cu === 4 ? '#dc2626' : '#fff'; c.fillText(ROLE_LETTER[cu], x + w / 2, y + ch / 2 + 1);
  }
  if (SPRITES.size > 500) SPRITES.clear();
  SPRITES.set(key, sp);
  return sp;
}

function roundRect(c, x, y, w, h, r) {
  c.beginPath();
  c.roundRect(x, y, w, h, r);
}

const TASK_LISTS = ['active', 'standby', 'warmup', 'pending_revocation', 'target_active'];

export function allTasks(g) {
  const s = new Set(g.tasks);
  for (const m of g.members) for (const k of TASK_LISTS) for (const t of m[k]) s.add(t);
  return sortTasks(s);
}
function sortTasks(s) {
  return [...s].map((t) => [t, ...splitTask(t)]).sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] - b[2])).map((x) => x[0]);
}
/** `subtopology_partition` (tasks) or `topic-partition` (classic partitions) -> [name, number]. */
function splitTask(t) {
  const m = /^(.*)[_-](\d+)$/.exec(t);
  return m ? [m[1], Number(m[2])] : [t, 0];
}

// ---- heartbeat swimlanes (canvas: hundreds of heartbeats per frame stay cheap) ------------------

export class Swimlanes {
  constructor(el, { onSelect, onResize } = {}) {
    this.el = el; this.onSelect = onSelect; this.hits = [];
    this.width = this.viewH = this.top = 0;
    watchSize(el, (r) => { if (r.width !== this.width || r.height !== this.viewH) { this.width = r.width; this.viewH = r.height; onResize?.(); } });
    el.addEventListener('scroll', () => { this.top = el.scrollTop; onResize?.(); }, { passive: true });
    // A sizer of the full height holds a sticky canvas of the visible height (100 members: 6 times
    // fewer pixels to allocate and clear; its height no longer changes with every member).
    this.sizer = document.createElement('div');
    this.sizer.className = 'lanes-sizer';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'lanes';
    this.sizer.append(this.canvas);
    el.append(this.sizer);
    // Keyboard: the lanes take focus; ← / → move between the drawn messages (oldest to newest),
    // Enter or Space shows the focused one; a live region reads it out.
    el.tabIndex = 0;
    el.setAttribute('role', 'group');
    el.setAttribute('aria-label', 'message swimlanes: left and right arrows move between messages, Enter shows one');
    this.canvas.setAttribute('role', 'img');
    this.say = document.createElement('div');
    this.say.className = 'sr-only';
    this.say.setAttribute('aria-live', 'polite');
    this.say.dataset.testid = 'lanes-focus';
    el.append(this.say);
    el.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft' && e.key !== 'Enter' && e.key !== ' ') return;
      const list = this.hits.map((h) => h.m).sort((a, b) => a.seq - b.seq);
      if (!list.length) return;
      e.preventDefault();
      e.stopPropagation();
      let i = list.findIndex((m) => m.seq === this.focusSeq);
      if (e.key === 'Enter' || e.key === ' ') {
        if (i >= 0) { this.selected = list[i].seq; this._key = null; this.onSelect?.(list[i]); }
        return;
      }
      if (i < 0) i = e.key === 'ArrowLeft' ? list.length : -1;
      i = Math.max(0, Math.min(list.length - 1, i + (e.key === 'ArrowRight' ? 1 : -1)));
      const m = list[i];
      this.focusSeq = m.seq; this._key = null;
      this.say.textContent = `message ${i + 1} of ${list.length}: ${m.api || 'StreamsGroupHeartbeat'} from ${m.member_id}, sent ${fmtT(m.sent_ms)}, ${m.fate.replace('_', ' ')}${m.error ? `, ${m.error}` : ''}`;
      this.el.dataset.focusSeq = m.seq;
      this.onResize?.();
    });
    this.onResize = onResize;
    this.canvas.addEventListener('click', (e) => {
      const r = this.canvas.getBoundingClientRect();
      const px = e.clientX - r.left, py = e.clientY - r.top;
      // The nearest mark; a JoinGroup / SyncGroup / LeaveGroup wins over a heartbeat under it.
      let best = null, bd = Infinity;
      for (const h of this.hits) {
        const d = (h.x - px) ** 2 + (h.y - py) ** 2, b = isBig(h.m.api);
        if (d > (b ? 100 : 64)) continue;
        const score = b ? d - 60 : d;
        if (score < bd) { bd = score; best = h.m; }
      }
      if (best) { this.selected = best.seq; this._key = null; this.onSelect?.(best); }
    });
    this.canvas.addEventListener('mousemove', (e) => {
      const r = this.canvas.getBoundingClientRect();
      const px = e.clientX - r.left, py = e.clientY - r.top;
      const h = this.hits.find((q) => (q.x - px) ** 2 + (q.y - py) ** 2 < 49);
      this.canvas.style.cursor = h ? 'pointer' : 'default';
      this.canvas.title = h ? `#${h.m.seq} ${h.m.api ?? ''} ${h.m.member_id} sent ${fmtT(h.m.sent_ms)} ${h.m.fate}${h.m.error ? ' ' + h.m.error : ''}` : '';
    });
  }
  /** `marks` (optional): [{at_ms, label, kind}] drawn as labelled vertical lines across the lanes
   * (coordinator restarts, network cuts and heals, message loss on and off). */
  update(messages, records, g, now, windowMs, order, marks = []) {
    const w = Math.max(300, this.width || 800);
    this.g = g; this.messages = messages;
    // Redrawn when something is new or the time axis moved by a pixel (at 1× every third frame).
    const px = Math.floor(now / (windowMs / (w - 84)));
    const key = `${messages.length ? messages[messages.length - 1].seq : 0}|${messages.length ? messages[messages.length - 1].fate : ''}|${records.length}|${px}|${w}|${this.selected}|${g.members.length}|${this.top}|${this.viewH}|${marks.length}|${this.focusSeq}`;
    if (key === this._key) return;
    this._key = key;
    const members = g.members.map((m) => m.member_id);
    const lane = new Map(members.map((id, i) => [id, i + 1]));
    const c0 = (this.ctx ??= this.canvas.getContext('2d'));
    c0.font = '600 11px system-ui, sans-serif';
    const labelW = (this._labelW ??= new Map());
    let widest = 0;
    for (const m of g.members) {
      const text = m.ghost ? `✕ ${short(m.member_id)}` : short(m.member_id);
      let lw = labelW.get(text);
      if (lw == null) { lw = c0.measureText(text).width; if (labelW.size > 2000) labelW.clear(); labelW.set(text, lw); }
      widest = Math.max(widest, lw);
    }
    const L = Math.min(150, Math.max(74, Math.ceil(widest) + 10)), R = 10, LH = 18, h = (members.length + 1) * LH + 20, dpr = window.devicePixelRatio || 1;
    const cv = this.canvas, vh = Math.min(h, this.viewH || h);
    if (this._h !== h) { this._h = h; this.sizer.style.height = `${h}px`; }
    if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(vh * dpr)) {
      cv.width = Math.round(w * dpr); cv.height = Math.round(vh * dpr); cv.style.width = `${w}px`; cv.style.height = `${vh}px`;
    }
    const c = (this.ctx ??= cv.getContext('2d'));
    // Drawn in the coordinates of the full height, shifted by the scroll position.
    const top = Math.max(0, Math.min(this.top, h - vh)), bottom = top + vh;
    c.setTransform(dpr, 0, 0, dpr, 0, -top * dpr);
    // Only the lanes in view are drawn.
    const lo = Math.max(0, Math.floor(top / LH) - 1), hi = Math.ceil(bottom / LH) + 1;
    const vis = (l) => l >= lo && l <= hi;
    c.clearRect(0, top, w, vh);
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
    g.members.forEach((m, i) => {
      if (!vis(i + 1)) return;
      // A member that left or was fenced keeps a ghost lane (grey, crossed) with its last messages.
      if (m.ghost) { c.fillStyle = '#9aa1ab'; c.fillText(`✕ ${short(m.member_id)}`, 4, laneY(i + 1)); } else { c.fillStyle = memberColor(m.member_id, order); c.fillText(short(m.member_id), 4, laneY(i + 1)); }
    });
    c.fillStyle = 'rgba(17,24,39,.55)';
    for (let i = records.length - 1; i >= 0 && records[i].at_ms >= t0; i--) c.fillRect(x(records[i].at_ms) - 1.5, 2, 3, LH - 4);
    // History on the time axis: coordinator restarts, network cuts, message loss (labelled lines).
    const MARK_COL = { restart: '#7c3aed', cut: '#dc2626', heal: '#059669', loss: '#b45309', violation: '#b91c1c' };
    this.markHits = [];
    const rowEnds = []; // labels that would overlap (two marks at about one time) go one row down
    for (const mk of marks) {
      if (mk.at_ms < t0 || mk.at_ms > now) continue;
      const xm = x(mk.at_ms);
      c.strokeStyle = MARK_COL[mk.kind] ?? '#111'; c.lineWidth = 2; c.setLineDash([5, 3]);
      c.beginPath(); c.moveTo(xm, top); c.lineTo(xm, Math.min(h - 16, bottom)); c.stroke(); c.setLineDash([]); c.lineWidth = 1;
      c.fillStyle = MARK_COL[mk.kind] ?? '#111'; c.font = '600 10px system-ui, sans-serif';
      const lw = c.measureText(mk.label).width, lx = Math.min(xm + 3, w - R - lw);
      let row = 0;
      while (row < rowEnds.length && rowEnds[row] > lx - 4) row++;
      rowEnds[row] = lx + lw;
      c.fillText(mk.label, lx, top + 8 + row * 11);
      c.font = '600 11px system-ui, sans-serif';
      this.markHits.push({ x: xm, label: mk.label });
    }
    this.hits = [];
    // One path per kind for the lines and one for the dots (hundreds of heartbeats, a few draw calls).
    const KINDS = ['ok', 'err', 'fly', 'lost'], COL = { ok: '#059669', err: '#f59e0b', lost: '#dc2626', fly: '#2563eb' };
    // Heartbeats first, the JoinGroup / SyncGroup / LeaveGroup marks over them (`big`).
    const lines = {}, dots = {}, big = {};
    for (const k of KINDS) { lines[k] = new Path2D(); dots[k] = new Path2D(); big[k] = new Path2D(); }
    let sel = null, selApi = null;
    const y0 = laneY(0), flying = [], lostTicks = [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      const rcv = m.received_ms < 0 || m.received_ms > now ? now : m.received_ms; // in flight: up to now
      if (rcv < t0 && m.sent_ms < t0) break;
      const l = lane.get(m.member_id);
      if (!l || !vis(l)) continue;
      const yy = laneY(l), cls = m.fate === 'in_flight' ? 'fly' : m.fate !== 'delivered' ? 'lost' : m.error ? 'err' : 'ok';
      const x1 = x(m.sent_ms), x2 = x(rcv);
      lines[cls].moveTo(x1, yy); lines[cls].lineTo(x2, y0);
      if (m.seq === this.selected || m.seq === this.focusSeq) { sel = { x1, yy, cls }; selApi = m.api; }
      else shape(isBig(m.api) ? big[cls] : dots[cls], m.api, x1, yy, 1);
      this.hits.push({ x: x1, y: yy - top, m }); // canvas coordinates
      // Messages fly from the member's lane up to the coordinator's (and lost ones fall short)
      // for a short while after they are sent: while playing, they animate.
      const age = now - m.sent_ms, fly = windowMs * 0.05;
      if (age >= 0 && age < fly) {
        const p = age / fly, stopAt = cls === 'lost' ? 0.6 : 1, q = Math.min(p, stopAt);
        flying.push({ x: x1 + (x2 - x1) * q, y: yy + (y0 - yy) * q, cls, fade: 1 - p });
      }
      if (cls === 'lost') lostTicks.push(x1);
    }
    c.globalAlpha = 0.5;
    for (const k of KINDS) { c.strokeStyle = COL[k]; c.setLineDash(k === 'lost' ? [3, 2] : []); c.stroke(lines[k]); }
    c.globalAlpha = 1;
    c.setLineDash([]);
    for (const marks of [dots, big]) {
      for (const k of ['ok', 'err', 'fly']) { c.fillStyle = COL[k]; c.fill(marks[k]); }
      c.fillStyle = '#fff'; c.fill(marks.lost); c.strokeStyle = COL.lost; c.lineWidth = 2; c.stroke(marks.lost); c.lineWidth = 1;
    }
    if (sel) {
      c.beginPath(); shape(c, selApi, sel.x1, sel.yy, 1.5);
      if (sel.cls === 'lost') { c.fillStyle = '#fff'; c.fill(); c.strokeStyle = COL.lost; c.lineWidth = 2; c.stroke(); } else { c.fillStyle = COL[sel.cls]; c.fill(); }
      c.strokeStyle = '#111'; c.lineWidth = 2; c.stroke(); c.lineWidth = 1;
    }
    for (const f of flying) {
      c.globalAlpha = 0.35 + 0.65 * f.fade; c.fillStyle = COL[f.cls];
      c.beginPath(); c.arc(f.x, f.y, 4, 0, 2 * Math.PI); c.fill();
    }
    c.globalAlpha = 1;
    // Lost messages also marked on the time axis (red ticks at the bottom).
    c.fillStyle = COL.lost;
    const axisTick = Math.min(h - 16, bottom) - 4;
    for (const xl of lostTicks) c.fillRect(xl - 1, axisTick, 2, 5);
    c.strokeStyle = '#111'; c.setLineDash([2, 2]);
    c.beginPath(); c.moveTo(x(now), top); c.lineTo(x(now), Math.min(h - 16, bottom)); c.stroke(); c.setLineDash([]);
    c.fillStyle = '#5b6270'; c.font = '11px system-ui, sans-serif';
    const axisY = Math.min(h - 8, bottom - 8);
    c.textAlign = 'left'; c.fillText(fmtT(t0), L, axisY);
    c.textAlign = 'right'; c.fillText(fmtT(t0 + windowMs), w - R, axisY); // the right edge (now is the dashed line)
    c.textAlign = 'left';
    if (this.el.dataset.flying !== String(flying.length)) this.el.dataset.flying = flying.length;
    if (this.el.dataset.count !== String(this.hits.length)) {
      this.el.dataset.count = this.hits.length;
      this.canvas.setAttribute('aria-label', `${this.hits.length} messages between ${g.members.length} members and the coordinator in the last ${fmtT(windowMs)}; focus the lanes and use the arrow keys to go through them`);
    }
  }
}

const isBig = (api) => api === 'JoinGroup' || api === 'SyncGroup' || api === 'LeaveGroup';

/** A message's mark in the swimlanes, by API: a dot for heartbeats, a square for JoinGroup, a
 * diamond for SyncGroup, a bar for LeaveGroup (a path or a context; `k` scales it). */
export function shape(p, api, x, y, k) {
  switch (api) {
    case 'JoinGroup': { const r = 4.5 * k; p.moveTo(x - r, y - r); p.lineTo(x + r, y - r); p.lineTo(x + r, y + r); p.lineTo(x - r, y + r); p.closePath(); break; }
    case 'SyncGroup': { const r = 6 * k; p.moveTo(x, y - r); p.lineTo(x + r, y); p.lineTo(x, y + r); p.lineTo(x - r, y); p.closePath(); break; }
    case 'LeaveGroup': { const a = 6 * k, b = 2 * k; p.moveTo(x - a, y - b); p.lineTo(x + a, y - b); p.lineTo(x + a, y + b); p.lineTo(x - a, y + b); p.closePath(); break; }
    case 'Heartbeat': { const r = 3.5 * k; p.moveTo(x + r, y); p.arc(x, y, r, 0, 2 * Math.PI); break; }
    default: { const r = 4.5 * k; p.moveTo(x + r, y); p.arc(x, y, r, 0, 2 * Math.PI); }
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
  if (!m) { el.innerHTML = '<p class="hint">Click a message in the swimlanes (or a record) to see its decoded fields and bytes.</p>'; return; }
  const api = m.api || 'StreamsGroupHeartbeat', info = API_INFO[api];
  el.innerHTML = `<h4 data-term="${api === 'StreamsGroupHeartbeat' ? 'heartbeat' : `api-${esc(api)}`}" data-testid="message-api">${esc(api)} v${m.api_version} · #${m.seq}</h4>
    ${info && api !== 'StreamsGroupHeartbeat' ? `<p class="api-info">${esc(info)}</p>` : ''}
    <p>${esc(m.member_id)} · sent ${fmtT(m.sent_ms)} · ${m.received_ms >= 0 ? `received ${fmtT(m.received_ms)}` : 'in flight'} · <b class="fate-${esc(m.fate)}">${esc(m.fate)}</b>${m.error ? ` · <b class="err">${esc(m.error)}</b>` : ''}</p>
    ${info && api !== 'StreamsGroupHeartbeat' && /JoinGroup|SyncGroup/.test(api) ? '<p class="api-info">The coordinator never reads the metadata and assignment bytes: they are the clients\' own consumer protocol, decoded here for you (§C2.5, §C3.2).</p>' : ''}
    <div class="two"><div><h5>request</h5><pre data-testid="message-request">${esc(JSON.stringify(m.request, bytesReplacer, 1))}</pre></div>
    <div><h5>response</h5><pre data-testid="message-response">${esc(JSON.stringify(m.response, bytesReplacer, 1))}</pre></div></div>
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
      tr.dataset.at = r.at_ms;
      tr.className = `rt-${r.record.type}${r.record.value == null ? ' tomb' : ''}`;
      tr.innerHTML = `<td>${r.seq}</td><td>${fmtT(r.at_ms)}</td><td>${esc(r.summary).replace('(', '<wbr>(')}</td><td class="cause">${esc(r.cause)}</td>`;
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
