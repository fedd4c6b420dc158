// End-to-end tests of traces in and out (trace.js), the scenario editor (editor.js), a real
// server's recorded history replayed in the explorer, and the side-by-side metrics.
// Run from www/: node --test traces.e2e.test.mjs   (needs www/pkg and target/debug/groupcoord)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startConsumer } from './e2e-kafka.mjs';
import { OUT, QUICK_STREAMS, base, open, startGroupcoord, useBrowser } from './e2e-harness.mjs';

useBrowser({ console: false, responses: false, acceptDownloads: true, checkErrorsAfter: true });

/** Waits until the run is at `t`, the worker idle and the page drawn at `t` (the seek's result is
 *  drawn on the next animation frame: reading the DOM before it saw the previous time's cards). */
async function seek(page, t) {
  await page.evaluate((tt) => window.explorer.seek(tt), t);
  await page.waitForFunction((tt) => {
    const S = window.explorer.state;
    return window.explorer.driver.now === tt && !window.explorer.driver.busy && S.pendingSeek == null && !S.needRender;
  }, t, { timeout: 30000 });
}
const hash = (page) => page.evaluate(() => window.explorer.driver.stateHash());

test('export a run as JSON and import it: the same state hash at the same time; bad files are named, never break the page', async () => {
  const page = await open(`${base}?preset=scale-out`);
  await seek(page, 23456);
  const h = await hash(page);
  await page.click('[data-testid=traces-btn]');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=trace-export]')]);
  const text = await readFile(await dl.path(), 'utf8');
  const tr = JSON.parse(text);
  assert.equal(tr.format, 'groupcoord-trace');
  assert.equal(tr.version, 1);
  assert.equal(tr.source, 'simulation');
  assert.equal(tr.t, 23456);
  assert.equal(tr.state_hash, h);
  assert.ok(tr.actions.length >= 2 && tr.records.length > 10 && tr.messages.length > 10, 'actions, records and messages exported');
  assert.ok(tr.records.every((r) => r.at_ms <= 23456));

  // Import into another page showing something else.
  const other = await open(`${base}?preset=rolling-bounce`);
  await other.click('[data-testid=traces-btn]');
  await other.setInputFiles('[data-testid=trace-file]', { name: 'run.trace.json', mimeType: 'application/json', buffer: Buffer.from(text) });
  await other.waitForSelector('[data-testid=repro][data-ok=true]', { timeout: 30000 });
  assert.equal(await other.evaluate(() => window.explorer.driver.now), 23456);
  assert.equal(await hash(other), h);
  assert.equal(await other.textContent('[data-testid=state-hash]'), h);
  // Playing on from there works like the original run (the later actions were kept).
  await seek(page, 40000);
  await seek(other, 40000);
  assert.equal(await hash(other), await hash(page), 'the kept later actions replay the same');

  // Hostile files: each gets a message naming the problem; the page keeps its run.
  const bad = [
    ['not json {', /not JSON/],
    [JSON.stringify({ ...tr, format: 'something-else' }), /not a groupcoord trace/],
    [JSON.stringify({ ...tr, version: 2 }), /version 2 is not supported/],
    [JSON.stringify({ ...tr, actions: [{ at_ms: -5, action: 'crash_member', member: 'p1-t0' }] }), /actions\[0\]\.at_ms/],
    [JSON.stringify({ ...tr, spec: 'x' }), /"spec"/],
    [JSON.stringify({ ...tr, actions: [{ at_ms: 1000, action: 'explode' }] }), /explode|unknown/i],
    [JSON.stringify({ format: 'groupcoord-trace', version: 1, source: 'server', group_id: 'g', topics: {}, records: [{ at_ms: 1, key: 'zz', value: '' }] }), /records\[0\]\.key/],
    [JSON.stringify({ format: 'groupcoord-trace', version: 1, source: 'server', group_id: 'g', topics: {}, records: [{ at_ms: 1, key: '0011', value: '', record: { type: 'GroupMetadata', group_id: 'g', value: null } }] }), /record 0: /],
    [JSON.stringify({ format: 'groupcoord-trace', version: 1, source: 'server', group_id: 'g', topics: {}, records: [{ at_ms: 1, key: '0011000167', value: '', record: 'x' }] }), /records\[0\]\.record/],
  ];
  await other.click('[data-testid=traces-btn]');
  for (const [content, re] of bad) {
    await other.evaluate(() => { document.querySelector('[data-testid=trace-error]').textContent = ''; });
    await other.setInputFiles('[data-testid=trace-file]', { name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from(content) });
    await other.waitForFunction(() => document.querySelector('[data-testid=trace-error]')?.textContent, null, { timeout: 15000 });
    const msg = await other.textContent('[data-testid=trace-error]');
    assert.match(msg, re, msg);
    assert.equal(await other.getAttribute('[data-testid=trace-error]', 'role'), 'alert');
  }
  // The size bound comes first (a 33 MB string is refused before JSON.parse).
  const big = await other.evaluate(async () => { const m = await import('./trace.js'); try { m.parseTrace(' '.repeat(m.MAX_TRACE_BYTES + 1)); return 'accepted'; } catch (e) { return e.message; } });
  assert.match(big, /at most 32 MB/);
  await other.keyboard.press('Escape');
  await other.screenshot({ path: `${OUT}traces-01-import.png` });
  await page.close();
  await other.close();
});

test('scenario editor: add, edit, reorder and delete timed actions by keyboard; its permalink reproduces the run', async () => {
  const page = await open(`${base}?preset=scale-out`);
  const before = await page.evaluate(() => window.explorer.driver.actions.map((a) => [a.at_ms, a.action]));
  await page.click('[data-testid=traces-btn]');
  await page.click('[data-testid=trace-edit]');
  await page.waitForSelector('[data-testid=editor-row]');
  assert.equal((await page.$$('[data-testid=editor-row]')).length, before.length);
  // Every control is labelled.
  const unlabelled = await page.$$eval('#editor input, #editor select', (els) => els.filter((e) => !e.getAttribute('aria-label') && !e.closest('label')).length);
  assert.equal(unlabelled, 0);

  // Add an action by keyboard: Enter on "Add action", then type its time and member.
  await page.focus('[data-testid=editor-add]');
  await page.keyboard.press('Enter');
  const n = before.length + 1;
  await page.waitForFunction((k) => document.querySelectorAll('[data-testid=editor-row]').length === k, n);
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), `action ${n} time (s)`, 'focus on the new row');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('30');
  await page.fill(`[aria-label="action ${n} member"]`, 'p1-t0');
  // A second one: restart the coordinator at 20 s, then move it above the crash (↑ by Enter).
  await page.click('[data-testid=editor-add]');
  await page.fill(`[aria-label="action ${n + 1} time (s)"]`, '20');
  await page.selectOption(`[aria-label="action ${n + 1} kind"]`, 'restart_coordinator');
  await page.focus(`[aria-label="move action ${n + 1} up"]`);
  await page.keyboard.press('Enter');
  assert.equal(await page.$eval(`[aria-label="action ${n} kind"]`, (s) => s.value), 'restart_coordinator');
  // Edit the first action's time and delete the second one.
  await page.fill('[aria-label="action 1 time (s)"]', '1.5');
  await page.click('[aria-label="delete action 2"]');
  await page.screenshot({ path: `${OUT}traces-02-editor.png` });
  // A bad parameter is named, nothing opens.
  await page.fill(`[aria-label="action ${n} time (s)"]`, '30');
  await page.fill(`[aria-label="action ${n} member"]`, '');
  await page.click('[data-testid=editor-open]');
  assert.match(await page.textContent('[data-testid=editor-error]'), /action 3 \(crash_member\): member is empty/);
  await page.fill(`[aria-label="action ${n} member"]`, 'p1-t0');
  await page.click('[data-testid=editor-open]');
  await page.waitForFunction(() => location.hash.includes('pl=') && !window.explorer.driver.busy);
  const edited = await page.evaluate(() => window.explorer.driver.actions.map((a) => [a.at_ms, a.action]));
  const want = [...before.map((a, i) => (i === 0 ? [1500, a[1]] : a)).filter((_, i) => i !== 1), [20000, 'restart_coordinator'], [30000, 'crash_member']];
  assert.deepEqual(edited, want);
  await seek(page, 45000);
  const h = await hash(page);

  // The permalink reproduces it.
  const url = await page.evaluate(() => location.href);
  const again = await open(url);
  await again.waitForFunction(() => !window.explorer.driver.busy);
  assert.deepEqual(await again.evaluate(() => window.explorer.driver.actions.map((a) => [a.at_ms, a.action])), want);
  await seek(again, 45000);
  assert.equal(await hash(again), h);
  await page.close();
  await again.close();
});

test('a real server\'s log in the explorer: `groupcoord serve --demo`, GET /api/groups/demo-app/trace, replayed with time travel', async (t) => {
  const port = Number(process.env.E2E_TRACE_PORT ?? 19520);
  const { url, alive, stderr } = await startGroupcoord(t, port, ['--demo', ...QUICK_STREAMS]);
  // Wait until the demo group is Stable with its three members (its records are in the log).
  let live;
  for (let i = 0; i < 600; i++) {
    try {
      const g = (await (await fetch(`${url}api/groups`)).json()).groups.find((x) => x.group_id === 'demo-app');
      if (g?.view?.state === 'Stable' && g.view.members.length === 3) { live = g.view; break; }
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
    alive();
  }
  assert.ok(live, `demo-app not Stable within 60 s: ${stderr()}`);
  let tr = await (await fetch(`${url}api/groups/demo-app/trace`)).json();
  assert.equal(tr.format, 'groupcoord-trace');
  assert.equal(tr.source, 'server');
  assert.ok(tr.records.length >= 5, `${tr.records.length} records`);
  assert.equal(tr.untimed_records, 0, 'every record has its append time');
  assert.ok(tr.records.every((r, i) => !i || r.at_ms >= tr.records[i - 1].at_ms));
  assert.equal((await fetch(`${url}api/groups/no-such-group/trace`)).status, 404);

  // The explorer replays it (served by the same server).
  const page = await open(`${url}?trace=/api/groups/demo-app/trace`);
  await page.waitForFunction(() => window.explorer.driver.constructor.name === 'RecordDriver', null, { timeout: 20000 });
  // The demo keeps appending (offset commits): the page's own fetch is the trace replayed.
  tr = await page.evaluate(() => window.explorer.driver.source);
  assert.equal(tr.untimed_records, 0);
  const span = tr.records[tr.records.length - 1].at_ms - tr.records[0].at_ms;
  assert.equal(await page.evaluate(() => window.explorer.driver.maxTime), span);
  // At each record time the group is what the records appended by then say: its group epoch is
  // the newest StreamsGroupMetadata record's (key type 17 = "0011"; value: version int16, then
  // the epoch int32), read here from the bytes.
  const epochAt = (t) => {
    let e = -1;
    for (const r of tr.records) if (r.at_ms - tr.records[0].at_ms <= t && r.key.startsWith('0011') && r.value) e = parseInt(r.value.slice(4, 12), 16);
    return e;
  };
  const times = [...new Set(tr.records.map((r) => r.at_ms - tr.records[0].at_ms))];
  assert.ok(times.length >= 2, 'records at two times at least');
  for (const t of times.slice(0, 6)) {
    await seek(page, t);
    const g = await page.evaluate(() => window.explorer.driver.last.snapshot);
    assert.equal(g.group.group_epoch, epochAt(t), `group epoch at ${t} ms`);
    assert.equal(g.steps, tr.records.filter((r) => r.at_ms - tr.records[0].at_ms <= t).length);
  }
  // At the end: the group as the server holds it (epochs and members from the records).
  await seek(page, span);
  const end = await page.evaluate(() => window.explorer.driver.last.snapshot.group);
  const fresh = (await (await fetch(`${url}api/groups`)).json()).groups.find((x) => x.group_id === 'demo-app').view;
  assert.equal(end.group_epoch, fresh.group_epoch);
  assert.equal(end.assignment_epoch, fresh.assignment_epoch);
  assert.deepEqual(end.members.map((m) => m.member_id).sort(), fresh.members.map((m) => m.member_id).sort());
  assert.equal(await page.$$eval('[data-testid=member-card]', (e) => e.length), 3);
  assert.ok(await page.$$eval('#records tr', (e) => e.length) >= 5, 'the record log shows the records');
  // Time travel: single steps go record time by record time, back and forth.
  await page.evaluate(() => window.explorer.seek(0));
  await page.waitForFunction(() => window.explorer.driver.now === 0);
  const epochs = [];
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(100);
    epochs.push(await page.evaluate(() => window.explorer.driver.last.snapshot.group.group_epoch));
  }
  assert.ok(epochs.every((e, i) => !i || e >= epochs[i - 1]), `epochs grow: ${epochs}`);
  const at = await page.evaluate(() => window.explorer.driver.now);
  assert.ok(at > 0);
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction((x) => window.explorer.driver.now < x, at);
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((x) => window.explorer.driver.now === x, at);
  // Acting on a recorded history is refused with a message.
  await page.evaluate(() => window.explorer.act({ action: 'restart_coordinator' }));
  await page.waitForFunction(() => document.querySelector('#toast').textContent.includes('recorded trace'));
  await page.screenshot({ path: `${OUT}traces-03-server.png` });
  await page.close();
});

test('a real KIP-848 consumer group\'s log (built over the wire) replayed in the explorer: members, partitions and epochs at the end', async (t) => {
  const port = Number(process.env.E2E_TRACE_PORT ?? 19520) + 2;
  const { url } = await startGroupcoord(t, port, ['--topic', 'orders:6']);
  // c-2 joins after c-1 has its partitions (at a later record time).
  const consumers = [startConsumer({ port, group: 'e2e-consumers', memberId: 'c-1', topics: ['orders'] })];
  t.after(() => Promise.all(consumers.map((c) => c.stop())));
  await consumers[0].ready;
  await new Promise((r) => setTimeout(r, 50));
  consumers.push(startConsumer({ port, group: 'e2e-consumers', memberId: 'c-2', topics: ['orders'] }));
  // Until both own three partitions at the group epoch (what the log then holds).
  let live;
  for (let i = 0; i < 300 && !live; i++) {
    const g = (await (await fetch(`${url}api/groups`)).json()).groups.find((x) => x.group_id === 'e2e-consumers');
    if (g?.view?.state === 'Stable' && g.view.members.length === 2 && g.view.members.every((m) => m.active.length === 3)) live = g.view;
    else await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(live, 'the consumer group is Stable with two members');
  const page = await open(`${url}?trace=/api/groups/e2e-consumers/trace`);
  await page.waitForFunction(() => window.explorer.driver.constructor.name === 'RecordDriver', null, { timeout: 20000 });
  const span = await page.evaluate(() => window.explorer.driver.maxTime);
  // Opened at 0 s, where the first records were written: the epoch chart shows the values at
  // that time (dots) even though its lines have no length yet.
  const dots = () => page.evaluate(() => [...document.querySelectorAll('#chart circle.now')].map((c) => c.getAttribute('class')).sort());
  await page.waitForFunction(() => document.querySelector('#chart')?.getAttribute('aria-label')?.includes('group epoch 2'), null, { timeout: 10000 });
  assert.deepEqual(await dots(), ['now ae', 'now ge', 'now m'], 'group epoch, assignment epoch and c-1 at 0 s');
  await seek(page, span);
  const end = await page.evaluate(() => window.explorer.driver.last.snapshot.group);
  assert.equal(end.group_type, 'consumer');
  assert.equal(end.group_epoch, live.group_epoch);
  assert.deepEqual(end.members.map((m) => [m.member_id, m.active]).sort(), live.members.map((m) => [m.member_id, m.active]).sort());
  assert.equal(await page.$$eval('[data-testid=member-card]', (e) => e.length), 2);
  assert.equal(await page.textContent('[data-testid=group-state]'), 'Stable');
  // Before the second member's records: one member with all six partitions.
  await seek(page, 0);
  const first = await page.evaluate(() => window.explorer.driver.last.snapshot.group);
  assert.deepEqual(first.members.map((m) => m.active.length), [6]);
  await seek(page, span);
  // At the end the chart plots the group epoch, the assignment epoch and both members' epochs
  // over the whole span (lines from the left edge to the right one).
  await page.waitForFunction((e) => document.querySelector('#chart')?.getAttribute('aria-label')?.includes(`group epoch ${e}, assignment epoch ${e}, 2 members`), live.group_epoch, { timeout: 10000 });
  const chart = await page.evaluate(() => ({
    lines: [...document.querySelectorAll('#chart path.ge, #chart path.ae, #chart path.m')].map((p) => p.getAttribute('d')),
    legend: document.querySelector('[data-testid=chart-legend]')?.textContent ?? '',
  }));
  assert.equal(chart.lines.length, 4, 'group epoch, assignment epoch and two members');
  const widths = chart.lines.map((d) => { const xs = [...d.matchAll(/[MH](-?[\d.]+)/g)].map((m) => Number(m[1])); return Math.max(...xs) - Math.min(...xs); });
  assert.ok(widths.every((w) => w > 100), `every line spans the chart: ${JSON.stringify(chart.lines)}`);
  assert.equal(chart.legend, `c-1 ${live.group_epoch}c-2 ${live.group_epoch}`);
  assert.deepEqual(await dots(), ['now ae', 'now ge', 'now m', 'now m']);
  await page.screenshot({ path: `${OUT}traces-05-consumer-group.png`, fullPage: true });
  await page.close();
});

test('side-by-side shows metrics computed from both runs: tasks moved, rebalances, time to Stable, tasks without an owner', async () => {
  const page = await open(`${base}?preset=scale-out`);
  await page.click('[data-testid=tab-compare]');
  await page.selectOption('#cmp-kind', 'assignor');
  await seek(page, 60000);
  await page.waitForSelector('[data-testid=compare-metrics] table[data-now="60000"]');
  const m = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-testid^=cmp-metric-]')].map((e) => [e.dataset.testid.replace('cmp-metric-', ''), e.textContent])));
  for (const k of ['moved', 'rebalances', 'stable-first', 'stable-last', 'unowned', 'idle']) assert.ok(m[`${k}-a`] != null && m[`${k}-b`] != null, k);
  // The same scenario and actions: the same rebalances (group epoch bumps) ...
  assert.equal(m['rebalances-a'], m['rebalances-b']);
  assert.ok(Number(m['rebalances-a']) >= 2, 'two processes joined');
  // ... but the assignors place tasks differently: the mock assignor moves tasks the sticky one keeps.
  assert.notEqual(m['moved-a'], m['moved-b'], JSON.stringify(m));
  const chart = await page.getAttribute('[data-testid=cmp-unowned-chart]', 'aria-label');
  assert.match(chart, /without an owner over time/);
  assert.equal(await page.$$eval('[data-testid=cmp-unowned-chart] polyline', (p) => p.filter((x) => x.getAttribute('points').split(' ').length > 10).length), 2);
  await page.screenshot({ path: `${OUT}traces-04-compare.png`, fullPage: true });
  await page.close();
});
