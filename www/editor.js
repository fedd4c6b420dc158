// The scenario editor: the run's timed actions as a table to add to, edit, delete and reorder;
// its result is a permalink (the same `#pl=` the Permalink button makes), which opening
// replays. Every control is a native, labelled form control (keyboard: Tab, arrows in selects,
// Enter on buttons); Escape closes the dialog.

import { esc } from './views.js';

/** The actions the simulation supports and their parameters (`src/sim/api.rs`, `Action`):
 * [field, label, kind] with kind 'text' or 'int'. */
export const ACTION_FIELDS = {
  add_process: [['process_id', 'process', 'text'], ['threads', 'threads', 'int']],
  add_member: [['process_id', 'process', 'text']],
  crash_member: [['member', 'member', 'text']],
  leave_member: [['member', 'member', 'text']],
  restart_member: [['member', 'member', 'text']],
  static_bounce: [['member', 'member', 'text'], ['down_ms', 'down (ms)', 'int']],
  stall_member: [['member', 'member', 'text'], ['ms', 'stall (ms)', 'int']],
  cut_network: [['member', 'member', 'text']],
  heal_network: [['member', 'member', 'text']],
  request_shutdown: [['member', 'member', 'text']],
  restart_coordinator: [],
  bump_topology_epoch: [],
  add_partitions: [['topic', 'topic', 'text'], ['partitions', 'new total', 'int']],
  create_topic: [['topic', 'topic', 'text'], ['partitions', 'partitions', 'int']],
  set_standby_replicas: [['replicas', 'replicas', 'int']],
  set_assignor: [['name', 'assignor', 'text']],
  set_message_loss: [['percent', 'loss %', 'int']],
};

/** A timed action as the editor's flat row {at_ms, action, fields…} (add_process keeps its
 * process spec flat: process_id, threads). */
function toRow(a) {
  const { at_ms, action, process, ...rest } = a;
  return { at_ms, action, ...rest, ...(process ? { process_id: process.process_id, threads: process.threads ?? 1, _process: process } : {}) };
}

/** The row back as a TimedAction; throws an Error naming the row and field. */
function fromRow(r, i) {
  const fields = ACTION_FIELDS[r.action];
  if (!fields) throw new Error(`action ${i + 1}: unknown action ${r.action}`);
  if (!Number.isInteger(r.at_ms) || r.at_ms < 0) throw new Error(`action ${i + 1}: the time must be a number of seconds from 0`);
  const out = { at_ms: r.at_ms, action: r.action };
  for (const [f, label, kind] of fields) {
    const v = r[f];
    if (kind === 'int' && (!Number.isInteger(v) || v < 0)) throw new Error(`action ${i + 1} (${r.action}): ${label} must be a whole number from 0`);
    if (kind === 'text' && (typeof v !== 'string' || !v.trim())) throw new Error(`action ${i + 1} (${r.action}): ${label} is empty`);
    out[f] = kind === 'text' ? v.trim() : v;
  }
  if (r.action === 'add_process') {
    const { process_id, threads, ...rest } = out;
    const base = r._process ?? { rack: null, client_tags: {}, static_members: false };
    return { ...rest, process: { ...base, process_id, threads: Math.max(1, threads), start_at_ms: 0 } };
  }
  return out;
}

export class ScenarioEditor {
  /** `el`: the dialog's container; `onOpen(actions)`: opens the run with these actions (as a
   * permalink); `names()`: {members, processes} for the input suggestions. */
  constructor(el, { onOpen, names }) {
    this.el = el; this.onOpen = onOpen; this.names = names; this.rows = [];
  }

  open(actions) {
    this.rows = actions.map(toRow);
    this.opener = document.activeElement;
    this.el.hidden = false;
    this.render();
    this.el.querySelector('[data-testid=editor-add]').focus();
  }

  close() {
    this.el.hidden = true;
    this.el.innerHTML = '';
    if (this.opener?.isConnected) this.opener.focus();
  }

  render(focus) {
    const { members = [], processes = [] } = this.names();
    const opts = Object.keys(ACTION_FIELDS).map((k) => `<option>${k}</option>`).join('');
    const rows = this.rows.map((r, i) => {
      const n = i + 1;
      const fields = (ACTION_FIELDS[r.action] ?? []).map(([f, label, kind]) => `<label>${esc(label)} <input data-f="${f}" data-i="${i}" ${kind === 'int' ? 'type="number" min="0" step="1"' : `type="text" list="ed-${f === 'member' ? 'members' : 'procs'}"`} value="${esc(String(r[f] ?? ''))}" aria-label="action ${n} ${esc(label)}"></label>`).join(' ');
      return `<tr data-testid="editor-row"><th scope="row">${n}</th>
        <td><input data-f="at_s" data-i="${i}" type="number" min="0" step="0.001" value="${r.at_ms / 1000}" aria-label="action ${n} time (s)"></td>
        <td><select data-f="action" data-i="${i}" aria-label="action ${n} kind">${opts.replace(`<option>${r.action}</option>`, `<option selected>${r.action}</option>`)}</select></td>
        <td>${fields || '<small>no parameters</small>'}</td>
        <td class="ed-btns"><button data-op="up" data-i="${i}" aria-label="move action ${n} up" ${i ? '' : 'disabled'}>↑</button><button data-op="down" data-i="${i}" aria-label="move action ${n} down" ${i < this.rows.length - 1 ? '' : 'disabled'}>↓</button><button data-op="del" data-i="${i}" aria-label="delete action ${n}">✕</button></td></tr>`;
    }).join('');
    this.el.innerHTML = `<div class="help-box editor-box" role="dialog" aria-modal="true" aria-labelledby="ed-title">
      <h2 id="ed-title">Scenario editor</h2>
      <p>The run's timed actions (time in seconds of simulated time). They are applied in the order listed; an action at an earlier time than the one above it is applied at the same time as that one. <b>Open</b> replays the scenario with them and puts its permalink in the address bar.</p>
      <datalist id="ed-members">${members.map((m) => `<option value="${esc(m)}">`).join('')}</datalist>
      <datalist id="ed-procs">${processes.map((m) => `<option value="${esc(m)}">`).join('')}</datalist>
      <table class="editor-table"><thead><tr><th>#</th><th>time (s)</th><th>action</th><th>parameters</th><th></th></tr></thead><tbody>${rows || '<tr><td colspan="5"><small>no actions yet</small></td></tr>'}</tbody></table>
      <p role="alert" class="bad" data-testid="editor-error"></p>
      <div class="ed-foot"><button data-op="add" data-testid="editor-add">Add action</button>
        <button data-op="open" data-testid="editor-open">Open (permalink)</button>
        <button data-op="close" data-testid="editor-close">Cancel</button></div></div>`;
    this.el.oninput = (e) => this.edit(e.target);
    this.el.onchange = (e) => { if (e.target.dataset.f === 'action') { this.edit(e.target); this.render(`[data-f=action][data-i="${e.target.dataset.i}"]`); } };
    this.el.onclick = (e) => { const b = e.target.closest('button[data-op]'); if (b) this.op(b.dataset.op, Number(b.dataset.i)); };
    this.el.onkeydown = (e) => { if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); this.close(); } };
    if (focus) this.el.querySelector(focus)?.focus();
  }

  edit(input) {
    const i = Number(input.dataset.i), f = input.dataset.f, r = this.rows[i];
    if (!r) return;
    if (f === 'at_s') r.at_ms = Math.round(Number(input.value) * 1000);
    else if (f === 'action') r.action = input.value;
    else if (input.type === 'number') r[f] = input.value === '' ? null : Number(input.value);
    else r[f] = input.value;
  }

  op(op, i) {
    const rows = this.rows;
    if (op === 'add') {
      const last = rows[rows.length - 1];
      rows.push({ at_ms: last ? last.at_ms + 5000 : 5000, action: 'crash_member', member: this.names().members?.[0] ?? '' });
      return this.render(`[data-f=at_s][data-i="${rows.length - 1}"]`);
    }
    if (op === 'up' && i > 0) { [rows[i - 1], rows[i]] = [rows[i], rows[i - 1]]; return this.render(`[data-op=up][data-i="${i - 1}"]:not([disabled]), [data-op=down][data-i="${i - 1}"]`); }
    if (op === 'down' && i < rows.length - 1) { [rows[i + 1], rows[i]] = [rows[i], rows[i + 1]]; return this.render(`[data-op=down][data-i="${i + 1}"]:not([disabled]), [data-op=up][data-i="${i + 1}"]`); }
    if (op === 'del') { rows.splice(i, 1); return this.render(rows.length ? `[data-op=del][data-i="${Math.min(i, rows.length - 1)}"]` : '[data-testid=editor-add]'); }
    if (op === 'close') return this.close();
    if (op === 'open') {
      try {
        // The listed order is the applied order: a time earlier than the row above is raised to it.
        let t = 0;
        const actions = rows.map((r, k) => { const a = fromRow(r, k); t = Math.max(t, a.at_ms); return { ...a, at_ms: t }; });
        this.close();
        this.onOpen(actions);
      } catch (e) {
        this.el.querySelector('[data-testid=editor-error]').textContent = e.message;
      }
    }
  }
}
