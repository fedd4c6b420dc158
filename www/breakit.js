// "Break it" mode: switches that remove one rule of the protocol in the simulation (never in the
// server) so that a reviewer sees which invariant the rule protects. The switches live in the
// scenario spec (`break_it`), so a permalink carries them and reproduces the violation.
import { esc, fmtT } from './views.js';

export const SWITCHES = [
  ['double_assign', 'Buggy assignor', 'every assignment also gives the member a task of another member'],
  ['skip_revocation', 'Skip revocation', 'a member gets its whole target before the previous owners revoked'],
  ['no_fencing', 'No fencing', 'a member that lost its session keeps its tasks; stale epochs are accepted'],
  ['drop_records_on_restart', 'Drop records on restart', 'a coordinator restart loses the last records of its log'],
];

/** The panel of switches; `restart(breakIt)` starts the same run again with them. */
export function renderBreakIt(el, spec, restart) {
  const on = spec.break_it ?? {};
  const key = JSON.stringify(on);
  if (el._key === key) return;
  el._key = key;
  const any = SWITCHES.some(([k]) => on[k]);
  el.classList.toggle('armed', any);
  el.innerHTML = `<details${any || el._open ? ' open' : ''}><summary data-testid="breakit-toggle">Break it${any ? ' <span class="bad">on</span>' : ''}</summary>
    <p class="hint">Remove a rule of the protocol and watch which invariant fails (simulation only).</p>
    ${SWITCHES.map(([k, label, why]) => `<label title="${esc(why)}"><input type="checkbox" data-testid="break-${k}" data-k="${k}"${on[k] ? ' checked' : ''}> ${esc(label)}</label>`).join('')}
    <div data-testid="violation-at" class="viol"></div></details>`;
  const det = el.querySelector('details');
  det.ontoggle = () => { el._open = det.open; };
  for (const cb of el.querySelectorAll('input[data-k]')) {
    cb.onchange = () => {
      const next = {};
      for (const c of el.querySelectorAll('input[data-k]')) if (c.checked) next[c.dataset.k] = true;
      restart(Object.keys(next).length ? next : null);
    };
  }
}

/** Remembers the first violation of a run: `state.at` (ms) and `state.names`, the invariants
 * broken at that step (not those a frame that played past it broke later: the same run played
 * in other frame sizes, e.g. from a permalink, then names the same ones). */
export function noteViolation(state, f, now) {
  if (state.at != null) return false;
  const ev = f.events.filter((e) => e.kind === 'invariant_violated');
  const bad = f.invariants.filter((i) => !i.ok);
  if (!ev.length && !bad.length) return false;
  state.at = ev.length ? ev[0].at_ms : now;
  const names = ev.filter((e) => e.at_ms === state.at).map((e) => e.name);
  if (now === state.at) names.push(...bad.map((i) => i.name));
  state.names = [...new Set(names)];
  return true;
}

/** The violating step on the time axis of the swimlanes. */
export function violationMarks(state) {
  return state.at == null ? [] : [{ at_ms: state.at, kind: 'violation', label: `✗ ${state.names.join(', ')}` }];
}

/** Highlights the violating step in the record log (the records written at that time, else the
 * last one before it) and names it in the panel. */
export function showViolation(panel, logEl, state) {
  const out = panel.querySelector('[data-testid=violation-at]');
  const text = state.at == null ? '' : `✗ ${state.names.join(', ')} at t=${fmtT(state.at)}`;
  if (out && out.textContent !== text) out.textContent = text;
  for (const tr of logEl.querySelectorAll('tr.violating')) tr.classList.remove('violating');
  if (state.at == null) return;
  const rows = [...logEl.querySelectorAll('tr[data-seq]')];
  const at = (tr) => Number(tr.dataset.at);
  let hit = rows.filter((tr) => at(tr) === state.at);
  if (!hit.length) { const before = rows.filter((tr) => at(tr) <= state.at); if (before.length) hit = [before[0]]; }
  for (const tr of hit) { tr.classList.add('violating'); tr.dataset.testid = 'violating-record'; }
}
