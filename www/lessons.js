// Guided lessons: each is a scenario (a preset, possibly trimmed) with narration pinned to
// simulated time and to the elements it talks about. Playback stops at every step's time, the
// step's text shows in the lesson panel and its elements are highlighted (outline + a label).
// The narration lives here, in JS (the wasm module has a size budget).
import { esc, fmtT } from './views.js';
import { announce } from './history.js';

// Selectors of the explorer's panels the narration points at.
const HEADER = '#group-header', STATE = '#group-header [data-testid=group-state]', CHART = '#chart', CARDS = '#cards', GRID = '#grid', LANES = '#lanes', RECORDS = '#records', INV = '#invariants';
const card = (prefix) => `#cards [data-member^="${prefix}"]`;

/** The lessons: `preset` (its spec), `actions` (replaces the preset's when given), `steps`:
 * [{at (ms), text (HTML), focus: [selectors]}]. */
export const LESSONS = [
  {
    id: 'joining', title: 'Joining and the three epochs', preset: 'scale-out', actions: [],
    steps: [
      { at: 0, focus: [CARDS], text: 'Process <b>p1</b> starts two stream threads. Each thread is one <b>member</b> of the streams group <code>app</code>: it talks to the group coordinator with one RPC only, <code>StreamsGroupHeartbeat</code>. Press <b>Next</b> (or <kbd>Space</kbd>) to play to the next step.' },
      { at: 200, focus: [LANES, STATE], text: 'Both members sent their first heartbeat with <b>member epoch 0</b> (a join) and their topology. Every join bumps the <b>group epoch</b>. The group is <b>NotReady</b>: the coordinator has not validated the topology yet (its internal changelog and repartition topics do not exist yet).' },
      { at: 3100, focus: [CHART, RECORDS], text: 'The <b>initial rebalance delay</b> (3 s) is over: the coordinator computed a <b>target assignment</b>, written as records (right). Its epoch is the <b>assignment epoch</b>. The members are still at their old member epoch: they learn about it on their next heartbeat.' },
      { at: 5200, focus: [CHART, CARDS, GRID], text: 'The internal topics exist now, so the group\'s metadata changed: <b>group epoch 4</b>, and a new target at <b>assignment epoch 4</b>. Each member got its tasks in its heartbeat response and moved to <b>member epoch 4</b>. All three epochs are equal and every member is STABLE: the group is <b>Stable</b>. The chart shows the three epochs; hover a line for its values.' },
      { at: 12000, focus: [LANES], text: 'At rest, members heartbeat every 5 s (the interval the coordinator tells them). Each dot is one request and its response; click one to see its decoded fields and wire bytes. The arc on each card counts down the session: if it runs out, the member is fenced.' },
    ],
  },
  {
    id: 'revoke', title: 'Revoke before assign (why p2 waits for p1)', preset: 'scale-out', seek: 19000,
    actions: [{ at_ms: 20000, action: 'add_process', process: { process_id: 'p2', threads: 2, rack: null, client_tags: {}, static_members: false, start_at_ms: 0 } }],
    steps: [
      { at: 19000, focus: [CARDS, GRID], text: 'p1\'s two members own all 6 active tasks of each subtopology. At 20 s a second process, <b>p2</b>, starts with two threads.' },
      { at: 20100, focus: [CHART, STATE], text: 'p2\'s members joined: the <b>group epoch</b> moved ahead of the assignment epoch, so the group is <b>Assigning</b>. The sticky assignor runs at most every few seconds (<code>assignment.interval</code>), so the new target waits a little.' },
      { at: 25100, focus: [card('p2'), GRID], text: 'The new target gives some of p1\'s tasks to p2. But an active task may never run on two members at once: p2\'s members are <b>UNRELEASED_TASKS</b>: they are at the new epoch and wait until p1 has given the tasks up. Outlined cells in the grid are tasks whose target owner differs from the current one.' },
      { at: 25320, focus: [card('p1'), GRID], text: 'p1\'s members learned the new target on their heartbeat: they are <b>UNREVOKED_TASKS</b> (pending revocation, red dashed cells). They stay at the old member epoch until they report, in a heartbeat, that they stopped those tasks.' },
      { at: 25500, focus: [card('p1'), CHART], text: 'p1 revoked: its members move to the new epoch and are STABLE. The tasks are free now, but p2\'s members are still UNRELEASED_TASKS: they learn that the tasks are free only on their <b>next heartbeat</b>. The coordinator never pushes: a member gets news only when it asks.' },
      { at: 30300, focus: [CARDS, STATE, GRID], text: 'p2\'s next heartbeats got the released tasks: every member is STABLE at the assignment epoch and the group is <b>Stable</b>. Revoke first, assign after: no task was ever owned twice (see the invariants).' },
    ],
  },
  {
    id: 'crash', title: 'A crash and the session timeout', preset: 'crash-standby-failover', seek: 24000, configs: { 'group.streams.num.standby.replicas': '0' },
    steps: [
      { at: 24000, focus: [CARDS], text: 'Three processes, one member each, no standby replicas. At 25 s <b>p1 crashes</b>: it stops without telling anyone (no leave heartbeat).' },
      { at: 26000, focus: [card('p1'), LANES], text: 'p1 sends nothing any more, but the coordinator does not know that: p1 stays in the group with its tasks, which nobody processes now. Its <b>session arc</b> keeps shrinking (45 s session timeout).' },
      { at: 65400, focus: [STATE, CHART, RECORDS], text: 'The session expired: the coordinator <b>fenced</b> p1 (records: its tombstones, cause <code>session-timeout</code>) and bumped the group epoch. p1 keeps a ghost lane in the swimlanes with its last heartbeat.' },
      { at: 66000, focus: [CARDS, GRID], text: 'p1\'s tasks moved to p2 and p3, which had to restore their state from the changelog (no standby). Next lesson: the same crash with a standby replica.' },
    ],
  },
  {
    id: 'standby', title: 'Standbys and failover', preset: 'crash-standby-failover', seek: 6000,
    steps: [
      { at: 6000, focus: [GRID, CARDS], text: 'One <b>standby replica</b> per stateful task (<code>num.standby.replicas=1</code>): besides its active tasks (A), each process keeps an up-to-date copy of another process\'s state (S). A standby is never on the process that runs the active.' },
      { at: 25100, focus: [card('p1')], text: 'p1 crashed. Until its session times out (45 s) its tasks are not processed.' },
      { at: 65600, focus: [GRID, CHART], text: 'p1 was fenced and its active tasks moved to the processes that <b>held their standbys</b>: they take over from state that is already there, and the assignor gives them new standbys elsewhere.' },
    ],
  },
  {
    id: 'static', title: 'Static membership and a rolling bounce', preset: 'rolling-bounce', seek: 19000,
    steps: [
      { at: 19000, focus: [CARDS], text: 'Three <b>static members</b> (<code>group.instance.id</code>). At 20 s p1 restarts (a rolling deploy), down for 8 s.' },
      { at: 20100, focus: [card('p1'), LANES], text: 'A static member leaves with <b>epoch −2</b>: "I am coming back". The coordinator keeps its tasks for it; the group epoch does not move, so no rebalance starts and nobody else gets p1\'s tasks. (The group shows Reconciling only because p1\'s epoch is −2 until it is back.)' },
      { at: 28100, focus: [CARDS, CHART], text: 'p1 rejoined under a <b>new member id</b> with the same instance id: it took over the old member\'s tasks and epoch (records: the old id\'s tombstones, the new one\'s assignment). Nothing moved. p2 and p3 follow at 40 s and 60 s.' },
    ],
  },
  {
    id: 'topology', title: 'A topology upgrade', preset: 'topology-upgrade', seek: 19000,
    steps: [
      { at: 19000, focus: [HEADER], text: 'Two members run topology epoch 0. At 20 s the application is upgraded to <b>topology epoch 1</b>: each member leaves (epoch −1) and rejoins with the new topology.' },
      { at: 20100, focus: [STATE, LANES], text: 'p1 left with epoch −1: its tasks go to p2 (group epoch bumped).' },
      { at: 21200, focus: [LANES], text: 'p1 rejoined with topology epoch 1. Kafka 4.4 rejects topology updates of an existing group: the answer is <code>INVALID_REQUEST</code> "Topology updates are not supported yet.", and the member stops (click the orange dot for the response).' },
      { at: 26100, focus: [STATE], text: 'p2 did the same; the group is now <b>Empty</b>. In Kafka 4.4 a new topology needs a new group (or the old one deleted).' },
    ],
  },
  {
    id: 'eager', title: 'Classic groups: eager rebalancing', preset: 'classic-eager-range', seek: 14000,
    steps: [
      { at: 14000, focus: [CARDS], text: 'A classic consumer group (JoinGroup / SyncGroup / Heartbeat) with the eager <code>range</code> assignor. c1 owns all 6 partitions; at 15 s c2 joins.' },
      { at: 15200, focus: [CARDS, '#stw'], text: 'A rebalance: every consumer <b>revokes all its partitions</b> before it rejoins (eager). Until SyncGroup hands out the new assignment nobody consumes: the red band counts partitions owned by nobody.' },
      { at: 30200, focus: ['#stw', CHART], text: 'c3 joins: again the whole group stops. Compare with the next lesson.' },
    ],
  },
  {
    id: 'cooperative', title: 'Classic groups: cooperative rebalancing', preset: 'classic-cooperative-sticky', seek: 14000,
    steps: [
      { at: 14000, focus: [CARDS], text: 'The same group and the same joins, now with the <code>cooperative-sticky</code> assignor. c1 owns all 6 partitions; at 15 s c2 joins.' },
      { at: 18200, focus: [CARDS, '#stw'], text: 'Consumers keep what they own through the rebalance and give up only the partitions that move; a <b>second rebalance</b> hands those out. The red band stays small.' },
      { at: 33400, focus: ['#stw', CHART], text: 'c3 joined the same way: two generations per change, almost no gap. (KIP-848 and KIP-1071 move the assignor to the coordinator and drop the global barrier altogether.)' },
    ],
  },
  {
    id: 'kip848', title: 'KIP-848 consumers: no barrier at all', preset: 'consumer-uniform', seek: 14000,
    steps: [
      { at: 14000, focus: [CARDS, LANES], text: 'The same consumers, now with the <b>KIP-848 consumer protocol</b>: one RPC, <code>ConsumerGroupHeartbeat</code>, and the assignor (<code>uniform</code>) runs <b>in the coordinator</b>. No JoinGroup, no SyncGroup, no leader. c1 owns all 6 partitions; at 15 s c2 joins.' },
      { at: 15100, focus: [card('c2'), GRID, CHART], text: 'c2\'s join bumped the <b>group epoch</b> and the coordinator computed the new target at once: c2 gets orders-3..5, c1 keeps 0..2. c2 is <b>UNRELEASED_PARTITIONS</b>: it may not take a partition before c1 has revoked it. c1 is still STABLE at the old epoch: it learns the new target on its next heartbeat.' },
      { at: 15300, focus: [card('c1'), LANES], text: 'c1 heartbeated, revoked orders-3..5 (and only those: it kept consuming 0..2 throughout) and acknowledged in the next heartbeat: member epoch 3. Nobody else had to stop.' },
      { at: 20100, focus: [CARDS, STATE], text: 'c2 learned on its next heartbeat that its partitions are free, and the group is <b>Stable</b> at epoch 3. Compare the eager lesson: there, every consumer stopped for the whole rebalance.' },
      { at: 90300, focus: [CHART, STATE], text: 'c2 crashed at 50 s. Nothing happened until its <b>session timeout</b> (45 s after its last heartbeat) fenced it: the group epoch went up and the group is <b>Assigning</b> for a moment, then its partitions go to c1 and c3.' },
      { at: 111100, focus: [CARDS, GRID], text: 'c1\'s poll loop stalls (from 110 s, for 15 s) while c4 joins. Its heartbeat thread keeps it in the group, but it cannot run its revocation callback: from its next heartbeat on it is <b>UNREVOKED_PARTITIONS</b>, holding orders-4 that c4 waits for.' },
      { at: 116100, focus: [card('c4'), GRID], text: 'c3 gave up orders-5 promptly and c4 already owns it: only <b>the one partition c1 must release</b> waits for c1. Under the classic protocols the slow member would hold up the whole group.' },
      { at: 126200, focus: [CARDS, STATE, CHART], text: 'c1 came back, revoked orders-4, and c4 took it: Stable at epoch 6. Each change cost each member one or two heartbeats, and only the partitions that moved were ever unowned.' },
    ],
  },
];

/** The lesson player. `app` gives: start(spec, actions, name), seek(t), play(), pause(),
 * isPlaying(), now(), presets. */
export class LessonPlayer {
  constructor(panel, app) {
    this.panel = panel; this.app = app; this.lesson = null; this.i = -1; this.labels = [];
    panel.addEventListener('click', (e) => {
      const b = e.target.closest('button[data-lesson-act]');
      if (!b) return;
      const act = b.dataset.lessonAct;
      if (act === 'next') this.next();
      else if (act === 'prev') this.prev();
      else if (act === 'close') this.close();
      else if (act === 'open') this.open(b.dataset.id);
    });
  }
  open(id) {
    const l = LESSONS.find((x) => x.id === id);
    const p = l && this.app.presets().find((x) => x.name === l.preset);
    if (!p) return;
    const spec = structuredClone(p.spec);
    if (l.configs) spec.configs = { ...spec.configs, ...l.configs };
    this.lesson = l; this.i = -1; this.shownAt = null;
    this.app.start(spec, l.actions ?? p.actions, p.name);
    this.app.seek(l.seek ?? 0);
    document.body.classList.add('in-lesson');
    this.render(l.seek ?? 0);
  }
  close() {
    this.lesson = null; this.clearFocus();
    document.body.classList.remove('in-lesson');
    this.panel.hidden = true;
  }
  /** The next step's time after `t` (playback stops there), or null. */
  nextStop(t) {
    if (!this.lesson) return null;
    const s = this.lesson.steps.find((x) => x.at > t + 0.5);
    return s ? s.at : null;
  }
  next() {
    if (!this.lesson) return;
    const t = this.nextStop(this.app.now());
    if (t == null) return;
    this.app.play();
  }
  prev() {
    if (!this.lesson) return;
    const steps = this.lesson.steps, now = this.app.now();
    let i = 0;
    for (let k = 0; k < steps.length; k++) if (steps[k].at <= now + 0.5) i = k;
    const s = steps[Math.max(0, i - 1)];
    this.app.pause();
    this.app.seek(s.at);
  }
  /** Called on every render with the current simulated time. */
  render(now) {
    const l = this.lesson;
    if (!l) return;
    let i = -1;
    for (let k = 0; k < l.steps.length; k++) if (l.steps[k].at <= now + 0.5) i = k;
    if (i === this.i && this.panel.dataset.lesson === l.id) { this.placeLabels(); return; }
    this.i = i;
    const s = l.steps[Math.max(0, i)];
    this.panel.hidden = false;
    this.panel.dataset.lesson = l.id;
    this.panel.dataset.step = String(i);
    const last = i >= l.steps.length - 1;
    const others = LESSONS.filter((x) => x.id !== l.id);
    const nextLesson = LESSONS[LESSONS.indexOf(l) + 1];
    this.panel.innerHTML = `<div class="lesson-head"><b>Lesson:</b> ${esc(l.title)} <small>step ${Math.max(0, i) + 1} of ${l.steps.length} · ${fmtT(s.at)}</small>
        <button data-lesson-act="close" aria-label="close the lesson" title="close the lesson">✕</button></div>
      <p class="lesson-text" data-testid="lesson-text" aria-live="polite">${i < 0 ? `Starting at ${fmtT(l.seek ?? 0)}…` : s.text}</p>
      <div class="lesson-nav"><button data-lesson-act="prev" data-testid="lesson-prev" ${i <= 0 ? 'disabled' : ''}>◀ Back</button>
        <button data-lesson-act="next" data-testid="lesson-next" ${last ? 'disabled' : ''}>Next ▶</button>
        ${last && nextLesson ? `<button data-lesson-act="open" data-id="${nextLesson.id}">Next lesson: ${esc(nextLesson.title)}</button>` : ''}
        ${last ? `<small>or pick another: ${others.map((x) => `<button class="link" data-lesson-act="open" data-id="${x.id}">${esc(x.title)}</button>`).join(' · ')}</small>` : ''}</div>`;
    if (i >= 0) announce(`Lesson step ${i + 1}: ${this.panel.querySelector('.lesson-text').textContent}`);
    this.focus(i >= 0 ? s.focus ?? [] : []);
  }
  clearFocus() {
    for (const el of document.querySelectorAll('.lesson-focus')) el.classList.remove('lesson-focus');
    for (const l of this.labels) l.remove();
    this.labels = [];
  }
  focus(selectors) {
    this.clearFocus();
    this.targets = selectors;
    let n = 0;
    for (const sel of selectors) {
      for (const el of document.querySelectorAll(sel)) {
        el.classList.add('lesson-focus');
        const label = document.createElement('div');
        label.className = 'lesson-label';
        label.textContent = String(++n);
        label.setAttribute('aria-hidden', 'true');
        label._for = el;
        document.body.append(label);
        this.labels.push(label);
      }
    }
    this.placeLabels();
  }
  /** Cards are re-rendered in place, so a focused card keeps its class; new matches join. */
  placeLabels() {
    if (!this.targets) return;
    for (const sel of this.targets) for (const el of document.querySelectorAll(sel)) el.classList.add('lesson-focus');
    for (const l of this.labels) {
      const r = l._for.getBoundingClientRect();
      l.style.left = `${Math.max(2, r.left + window.scrollX - 10)}px`;
      l.style.top = `${Math.max(2, r.top + window.scrollY - 10)}px`;
      l.hidden = !r.width;
    }
  }
}

/** The first screen: what this is, what to press, and the lessons. */
export function renderWelcome(el, onLesson, onClose) {
  el.innerHTML = `<button class="welcome-close" aria-label="close the introduction" data-testid="welcome-close">✕</button>
    <h2>Kafka's group coordinator, running in your browser</h2>
    <p>This is Apache Kafka 4.4's <b>group coordinator</b>, the broker component that decides which member of a consumer
      group or Kafka Streams application runs which partitions or tasks, rebuilt in Rust and compiled to WebAssembly. Simulated members
      talk to it over the real wire protocol. You can see every request, every record it writes and every epoch it keeps.</p>
    <p><b>What to press:</b> <kbd>Space</kbd> or ▶ plays, <kbd>→</kbd> steps to the next thing that happens, <kbd>←</kbd> steps back, and the slider travels in time.
      Right-click a member (or its ⋯ button) to crash it, cut its network or bounce it. Hover any dotted word for its meaning. <kbd>?</kbd> lists the keys.</p>
    <p><b>New to it? Take a lesson</b> (each one plays a scenario and stops where there is something to see):</p>
    <div class="welcome-lessons">${LESSONS.map((l) => `<button data-id="${l.id}" data-testid="lesson-${l.id}">${esc(l.title)}</button>`).join('')}</div>`;
  el.hidden = false;
  el.onclick = (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.classList.contains('welcome-close')) { el.hidden = true; onClose?.(); return; }
    if (b.dataset.id) { el.hidden = true; onLesson(b.dataset.id); }
  };
}
