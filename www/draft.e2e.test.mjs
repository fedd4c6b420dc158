// End-to-end test of draft.html (KIP-1071 draft vs shipped) in headless Chromium.
// Run from www/: node --test draft.e2e.test.mjs   (needs www/pkg: pkg-scripts/build-wasm.sh)
// Screenshots go to ../test-output/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OUT, base, errors, open, useBrowser } from './e2e-harness.mjs';

useBrowser({ height: 900, readyTimeout: 60000 });

const result = (page) => page.evaluate(() => window.draftCompare);

test('draft vs shipped: the draft passes through Initializing and needs more round trips to the first assignment', async () => {
  const page = await open(`${base}draft.html`);
  await page.screenshot({ path: `${OUT}50-draft-vs-shipped.png`, fullPage: true });
  const r = await result(page);
  assert.deepEqual(r.runs.map((x) => x.dialect), ['shipped', 'draft']);
  assert.deepEqual(r.runs.flatMap((x) => x.violations), [], 'every invariant holds in both runs');
  const [s, d] = r.ms;
  assert.ok(!s.states.includes('Initializing'), `shipped states ${s.states}`);
  assert.equal(d.states[0], 'Initializing');
  assert.ok(d.initializing > 0 && s.initializing === 0);
  assert.equal(d.apis.StreamsGroupInitialize, 1, 'one member initializes, once');
  assert.ok(s.firstAssignment > 0 && d.firstAssignment > 0, `${s.firstAssignment} ${d.firstAssignment}`);
  assert.ok(d.rtFirst >= s.rtFirst, `draft ${d.rtFirst} round trips to the first tasks, shipped ${s.rtFirst}`);
  assert.equal(d.roundTrips - s.roundTrips >= 1, true, 'the draft sends at least the StreamsGroupInitialize more');
  // The page shows it: Initializing in the timeline, the numbers in the table.
  assert.ok(await page.locator('[data-testid=draft-timeline] rect[data-state=Initializing]').count() >= 1);
  assert.equal(await page.locator('[data-testid=rtfirst-draft]').textContent(), String(d.rtFirst));
  assert.match(await page.locator('[data-testid=draft-caption]').textContent(), /Initializing/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('draft vs shipped: selecting a dialect runs it alone, and the permalink reproduces the comparison', async () => {
  const page = await open(`${base}draft.html#preset=scale-out&seed=3&dur=30&show=both`);
  const both = await result(page);
  await page.selectOption('[data-testid=draft-dialect]', 'draft');
  await page.waitForFunction(() => window.draftCompare.workload.show === 'draft');
  const only = await result(page);
  assert.deepEqual(only.runs.map((x) => x.dialect), ['draft']);
  assert.equal(only.runs[0].hash, both.runs[1].hash, 'same draft run alone and side by side');
  assert.match(page.url(), /show=draft/);
  await page.selectOption('[data-testid=draft-dialect]', 'both');
  await page.waitForFunction(() => window.draftCompare.workload.show === 'both');
  await page.click('[data-testid=draft-permalink]');
  const again = await open(page.url());
  const r2 = await result(again);
  assert.deepEqual(r2.runs.map((x) => x.hash), both.runs.map((x) => x.hash), 'the permalink gives the same runs');
  assert.deepEqual(r2.workload, { preset: 'scale-out', seed: 3, dur: 30, show: 'both' });
  assert.deepEqual(errors, []);
  await page.close();
  await again.close();
});
