// End-to-end test of protocols.html (one workload, every protocol) in headless Chromium.
// Run from www/: node --test protocols.e2e.test.mjs   (needs www/pkg: pkg-scripts/build-wasm.sh)
// Screenshots go to ../test-output/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OUT, base, errors, open, useBrowser } from './e2e-harness.mjs';

useBrowser({ height: 1000, readyTimeout: 60000 });

const result = (page) => page.evaluate(() => ({
  hashes: window.protocols.runs.map((r) => r.hash),
  keys: window.protocols.runs.map((r) => r.key),
  idle: window.protocols.sums.map((s) => s.idleAfterStart),
  moved: window.protocols.sums.map((s) => s.moved),
  epochs: window.protocols.runs.map((r) => r.epoch),
  violations: window.protocols.runs.flatMap((r) => r.violations),
  workload: window.protocols.workload,
}));

test('protocols: the default workload under eager, cooperative-sticky, KIP-848 and streams, explained', async () => {
  const page = await open(`${base}protocols.html`);
  await page.screenshot({ path: `${OUT}40-protocols.png`, fullPage: true });
  const r = await result(page);
  assert.deepEqual(r.keys, ['eager', 'cooperative', 'consumer', 'streams']);
  assert.deepEqual(r.violations, [], 'every invariant holds in every run');
  // Every protocol rebalanced and every one moved partitions.
  for (let i = 0; i < 4; i++) assert.ok(r.epochs[i] > 1 && r.moved[i] > 0, `${r.keys[i]}: epoch ${r.epochs[i]}, moved ${r.moved[i]}`);
  // The stop-the-world gap. The last step (a slow consumer while one joins): eager stops every
  // partition until the slow one rejoins, cooperative-sticky only those that move, KIP-848 only
  // what the slow one must give up. (The crash's gap, until the session timeout, is in all four.)
  const last = await page.evaluate(() => window.protocols.sums.map((s) => s.perStep[s.perStep.length - 1]));
  const max = await page.evaluate(() => window.protocols.sums.map((s) => s.maxIdle));
  const [eager, coop, kip848] = last;
  assert.ok(eager > 3 * coop, `slow member: eager ${eager} > 3 × cooperative ${coop} partition·ms idle`);
  assert.ok(eager > 10 * kip848, `slow member: eager ${eager} > 10 × KIP-848 ${kip848} partition·ms idle`);
  assert.equal(max[0], 6, 'eager: all 6 partitions idle at once');
  assert.ok(max[2] < 6 && max[1] < 6, `incremental protocols never stop everything: ${max}`);
  // One chart row, one table row and one caption per protocol; the captions say why.
  for (const k of r.keys) {
    assert.ok(await page.isVisible(`[data-testid=idle-${k}]`));
    assert.ok(await page.isVisible(`[data-testid=row-${k}]`));
  }
  assert.match(await page.textContent('[data-testid=caption-eager]'), /revokes all its partitions before it sends JoinGroup/);
  assert.match(await page.textContent('[data-testid=caption-consumer]'), /no group-wide barrier/);
  assert.match(await page.textContent('[data-testid=caption-streams]'), /skipped/);
  await page.screenshot({ path: `${OUT}40-protocols.png`, fullPage: true });
  await page.close();
  assert.deepEqual(errors, []);
});

test('protocols permalink: a changed workload goes to the URL and reproduces the same runs', async () => {
  const page = await open(`${base}protocols.html`);
  await page.fill('[data-testid=pc-n]', '4');
  await page.fill('[data-testid=pc-p]', '8');
  await page.fill('[data-testid=pc-script]', '15s join; 30s crash c1; 60s stall c2 12s; 61s join');
  await page.evaluate(() => { document.body.dataset.ready = 'false'; });
  await page.click('[data-testid=pc-run]');
  await page.waitForSelector('body[data-ready=true]');
  const first = await result(page);
  assert.equal(first.workload.n, 4);
  assert.equal(first.workload.p, 8);
  await page.click('[data-testid=pc-permalink]');
  const url = page.url();
  assert.match(url, /#n=4&p=8&seed=\d+&dur=\d+&script=15s\+join/);
  await page.close();
  // Opening the permalink in a fresh page gives the same four runs (same state hashes).
  const again = await open(url);
  const second = await result(again);
  assert.deepEqual(second.workload, first.workload);
  assert.deepEqual(second.hashes, first.hashes);
  assert.equal(await again.inputValue('[data-testid=pc-script]'), '15s join; 30s crash c1; 60s stall c2 12s; 61s join');
  // A bad script is explained, not thrown.
  await again.fill('[data-testid=pc-script]', '10s explode c1');
  await again.click('[data-testid=pc-run]');
  await again.waitForFunction(() => document.querySelector('[data-testid=pc-error]').textContent.includes('cannot read step'));
  await again.close();
  assert.deepEqual(errors, []);
});
