// End-to-end test of the explorer's "break it" mode (issue 15), one test per switch: the switch
// on, the run breaks the invariant the rule protects, the invariants panel turns red at the
// violating step (marked in the swimlanes and the record log), and the permalink opened in a
// fresh page reproduces the same violation at the same step.
// Run from www/: node --test breakit.e2e.test.mjs   (needs www/pkg: pkg-scripts/build-wasm.sh)
// Screenshots go to ../test-output/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OUT, base, errors, open, useBrowser } from './e2e-harness.mjs';

useBrowser({ ignoreLoadFailures: true, responses: false });

const setSpeed = (page, v) => page.$eval('[data-testid=speed]', (el, val) => { el.value = val; el.dispatchEvent(new Event('input')); }, String(v));
const broken = (page) => page.evaluate(() => ({ ...window.explorer.state.broken }));

/** Waits until the run is red for `invariant`; returns the violating step's time. */
async function seesViolation(page, invariant) {
  await page.waitForFunction((name) => document.querySelector('[data-testid=violation-at]')?.textContent.includes(name), invariant, { timeout: 60000 });
  await page.waitForFunction(() => !window.explorer.state.playing);
  const { at, names } = await broken(page);
  assert.ok(names.includes(invariant), `${invariant} in ${names}`);
  // Playback stops at the violating step itself (it goes back there if a frame played past it)
  // and the invariants panel is red there.
  await page.waitForFunction((t) => window.explorer.driver.now === t && !window.explorer.driver.busy, at, { timeout: 30000 });
  await page.waitForSelector('[data-testid=invariants][data-ok=false]');
  // Red for one of the broken invariants (a violation inside a millisecond can be over by its
  // end: the double assignment is then still red as a member running a task outside its target).
  const panel = await page.textContent('[data-testid=invariants]');
  assert.ok(names.some((n) => panel.includes(`✗ ${n}`)), `one of ${names} red in: ${panel}`);
  await page.waitForFunction((name) => (window.explorer.views.lanes.markHits ?? []).some((h) => h.label.startsWith(`✗ ${name}`) || h.label.includes(name)), invariant);
  await page.waitForSelector('#records tr.violating');
  const rowAt = await page.$eval('#records tr.violating', (tr) => Number(tr.dataset.at));
  assert.ok(rowAt <= at, `highlighted record at ${rowAt}, violation at ${at}`);
  // The violation event of that step carries the same time.
  const text = await page.textContent('[data-testid=violation-at]');
  assert.match(text, /at t=/);
  return { at, text };
}

/** The permalink of the current run, opened in a fresh page, breaks at the same step. */
async function permalinkReproduces(page, invariant, at, text) {
  await page.click('#permalink');
  await page.waitForFunction(() => location.hash.includes('pl='));
  const url = page.url();
  const fresh = await open(url);
  await fresh.waitForFunction((t) => window.explorer.state.broken.at === t, at, { timeout: 60000 });
  await fresh.waitForFunction((name) => document.querySelector('[data-testid=violation-at]')?.textContent.includes(name), invariant);
  assert.equal(await fresh.textContent('[data-testid=violation-at]'), text);
  await fresh.waitForSelector('[data-testid=repro][data-ok=true]');
  assert.equal(await fresh.evaluate(() => window.explorer.driver.now), at, 'the permalink opens at the violating step');
  await fresh.waitForSelector('[data-testid=invariants][data-ok=false]');
  const names = await fresh.evaluate(() => window.explorer.state.broken.names);
  const panel = await fresh.textContent('[data-testid=invariants]');
  assert.ok(names.includes(invariant) && names.some((n) => panel.includes(`✗ ${n}`)), `${names} red in: ${panel}`);
  return fresh;
}

async function armed(key) {
  const page = await open(`${base}?preset=scale-out`);
  await page.click('[data-testid=breakit-toggle]');
  await page.check(`[data-testid=break-${key}]`);
  await page.waitForFunction((k) => window.explorer.driver.spec.break_it?.[k] === true && window.explorer.driver.now === 0, key);
  assert.equal(await page.getAttribute('[data-testid=invariants]', 'data-ok'), 'true');
  return page;
}

test('break it: a buggy assignor gives a task to two members', async () => {
  const page = await armed('double_assign');
  await setSpeed(page, 1.5);
  await page.click('[data-testid=play]');
  // First a member runs a task outside its target (the other member's), then two run it.
  const { at, text } = await seesViolation(page, 'stable-group-members-own-target');
  assert.ok(at > 0 && at < 20000, `violation at ${at}: the first assignment already breaks it`);
  const fresh = await permalinkReproduces(page, 'stable-group-members-own-target', at, text);
  await fresh.close();
  await page.close();
  assert.deepEqual(errors, []);
});

test('break it: skipping revocation runs a task twice when p2 joins', async () => {
  const page = await armed('skip_revocation');
  await setSpeed(page, 1.5);
  await page.click('[data-testid=play]');
  const { at, text } = await seesViolation(page, 'active-task-single-owner');
  assert.ok(at >= 20000 && at < 40000, `violation at ${at}: p2 joins at 20 s`);
  const fresh = await permalinkReproduces(page, 'active-task-single-owner', at, text);
  await fresh.close();
  await page.close();
  assert.deepEqual(errors, []);
});

test('break it: without fencing a cut-off member keeps its tasks', async () => {
  const page = await armed('no_fencing');
  await page.evaluate(() => window.explorer.seek(10000));
  await page.waitForFunction(() => window.explorer.driver.now === 10000, null, { timeout: 30000 });
  await page.evaluate(() => window.explorer.act({ action: 'cut_network', member: 'p1-t0' }));
  await page.waitForFunction(() => window.explorer.driver.actions.some((a) => a.action === 'cut_network'));
  await setSpeed(page, 1.5);
  await page.click('[data-testid=play]');
  const { at, text } = await seesViolation(page, 'active-task-single-owner');
  // Its tasks move only once its session timed out (45 s after its last heartbeat).
  assert.ok(at >= 45000, `violation at ${at}`);
  const fresh = await permalinkReproduces(page, 'active-task-single-owner', at, text);
  await fresh.close();
  await page.close();
  assert.deepEqual(errors, []);
});

test('break it: a restart that drops records differs from the log, red at the restart itself', async () => {
  const page = await armed('drop_records_on_restart');
  await page.evaluate(() => window.explorer.seek(30000));
  await page.waitForFunction(() => window.explorer.driver.now === 30000, null, { timeout: 30000 });
  assert.equal((await broken(page)).at, null, 'nothing broken before the restart');
  await page.click('[data-act=restart_coordinator]');
  const { at, text } = await seesViolation(page, 'replay-equals-live');
  assert.equal(at, 30000, 'the violating step is the restart');
  // The picture of README's explorer section (www/docs/explorer-breakit.png).
  await page.setViewportSize({ width: 1280, height: 1100 });
  await page.waitForSelector('#toast', { state: 'hidden', timeout: 10000 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${OUT}21-break-it-drop-records.png` });
  const fresh = await permalinkReproduces(page, 'replay-equals-live', at, text);
  await fresh.close();
  await page.close();
  assert.deepEqual(errors, []);
});
