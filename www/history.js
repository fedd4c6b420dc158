// History that stays visible: members that left or were fenced keep a ghost lane and a ghost card
// with their last exchange (the −1 / −2 leave heartbeat, or the error response that fenced them),
// and an aria-live region announces state changes to screen readers.
import { esc, fmtT, short } from './views.js';

/** Members that appear in the message log but no longer in the group, with their last message,
 * newest departures first; at most `max`. */
export function ghostMembers(g, messages, max = 8) {
  // In the group: a KIP-848 / streams member with a state, a live simulated client, or a classic
  // member the coordinator holds (the live view knows classic members only from the coordinator).
  const present = new Set(g.members.filter((m) => m.state != null || m.client_status === 'alive' || m.classic?.known_to_coordinator).map((m) => m.member_id));
  const last = new Map();
  for (const m of messages) if (!present.has(m.member_id) && m.member_id) last.set(m.member_id, m);
  return [...last.values()].sort((a, b) => b.sent_ms - a.sent_ms).slice(0, max)
    .map((m) => ({ member_id: m.member_id, ghost: true, last: m, why: whyGone(m) }));
}

/** Why a member is gone, from its last exchange. */
export function whyGone(m) {
  const epoch = m.request?.member_epoch ?? m.req_epoch;
  if (m.api === 'LeaveGroup') return 'left (LeaveGroup)';
  if (epoch === -1) return 'left the group (heartbeat with epoch −1)';
  if (epoch === -2) return 'static member left temporarily (epoch −2): its tasks wait for it until the session timeout';
  if (m.error) return /FENCED|UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION/.test(m.error) ? `fenced: ${m.error}` : `got an error and stopped: ${m.error}`;
  if (m.fate !== 'delivered') return `went silent (last message ${m.fate.replace('_', ' ')}): the session timeout removed it`;
  return 'went silent: the session timeout removed it';
}

/** The ghost cards: one per departed member, with its last exchange (click: its detail). */
export class GhostCards {
  constructor(el, { onSelect } = {}) {
    this.el = el; this.onSelect = onSelect; this.key = '';
    el.addEventListener('click', (e) => {
      const c = e.target.closest('[data-seq]');
      if (c) this.onSelect?.(this.ghosts.find((x) => String(x.last.seq) === c.dataset.seq)?.last);
    });
  }
  update(ghosts) {
    this.ghosts = ghosts;
    const key = ghosts.map((x) => `${x.member_id}|${x.last.seq}|${x.last.fate}`).join(',');
    if (key === this.key) return;
    this.key = key;
    this.el.hidden = !ghosts.length;
    this.el.innerHTML = ghosts.length ? `<h4>Gone <small>(last exchange of members no longer in the group)</small></h4>${ghosts.map((x) => {
      const m = x.last, r = m.response;
      return `<button class="card ghost" data-testid="ghost-card" data-member="${esc(x.member_id)}" data-seq="${m.seq}" title="${esc(x.member_id)}: show its last exchange">
        <b>${esc(short(x.member_id))}</b> <span class="why">${esc(x.why)}</span>
        <span class="last">last ${esc(m.api || 'heartbeat')} at ${fmtT(m.sent_ms)}: epoch ${m.request?.member_epoch ?? m.request?.generation_id ?? m.req_epoch ?? '–'}${m.error ? ` → ${esc(m.error)}` : m.received_ms >= 0 ? ` → answered epoch ${r?.member_epoch ?? m.resp_epoch ?? '–'}` : ' · no answer'}</span></button>`;
    }).join('')}` : '';
  }
}

let region = null;
let last = '';
/** Announces a short text through the page's aria-live region (polite; repeated texts once). */
export function announce(text) {
  region ??= document.getElementById('announcer');
  if (!region || text === last) return;
  last = text;
  region.textContent = text;
}
