// What every Playwright test file of the explorer shares: the static server of www/, one headless
// Chromium (playwright-core + the system's chromium, nothing downloaded), `open(url)` for a page
// whose errors are collected in `errors`, and `startGroupcoord` for a real `groupcoord serve`.
// Each test file runs in its own process (`node --test`), so the state here is one file's.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './serve.mjs';

/** Where screenshots go (test-output/ at the repository root). */
export const OUT = fileURLToPath(new URL('../test-output/', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const BROWSER_ARGS = ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** The static server's address (`http://127.0.0.1:<port>/`), set before the first test. */
export let base;
/** The browser, launched before the first test. */
export let browser;
/** Errors of every page opened by `open` (and of pages given to `watch`). */
export const errors = [];

let options, server;

/**
 * Starts the static server and the browser before the file's tests and stops them after.
 * `height`: the viewport's (width 1280); `readyTimeout`: ms to wait for `body[data-ready=true]`;
 * `console`: collect console errors (except "Failed to load resource" when `ignoreLoadFailures`);
 * `responses`: collect HTTP statuses >= 400, `false`, or a function (url) → true to collect;
 * `acceptDownloads`: for pages that download; `checkErrorsAfter`: assert no errors at the end.
 */
export function useBrowser({ height = 800, readyTimeout = 15000, console = true, ignoreLoadFailures = false,
  responses = true, acceptDownloads = false, checkErrorsAfter = false } = {}) {
  options = { height, readyTimeout, console, ignoreLoadFailures, responses, acceptDownloads };
  before(async () => {
    await mkdir(OUT, { recursive: true });
    server = await startServer(0);
    base = `http://127.0.0.1:${server.address().port}/`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
  });
  after(async () => {
    await browser?.close();
    server?.close();
    if (checkErrorsAfter) assert.deepEqual(errors, [], 'no page errors');
  });
}

/** Collects `page`'s errors into `errors` as `useBrowser`'s options say. */
function watch(page) {
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  if (options.console) {
    page.on('console', (m) => {
      if (m.type() === 'error' && !(options.ignoreLoadFailures && m.text().startsWith('Failed to load resource'))) errors.push(`console: ${m.text()}`);
    });
  }
  if (options.responses) {
    const counts = typeof options.responses === 'function' ? options.responses : () => true;
    page.on('response', (r) => { if (r.status() >= 400 && counts(r.url())) errors.push(`HTTP ${r.status()} ${r.url()}`); });
  }
  return page;
}

/** A new page at `url` (1280 wide), once the explorer says it is ready. */
export async function open(url) {
  const page = watch(await browser.newPage({ viewport: { width: 1280, height: options.height }, acceptDownloads: options.acceptDownloads }));
  await page.goto(url);
  await page.waitForSelector('body[data-ready=true]', { timeout: options.readyTimeout });
  return page;
}

/**
 * Runs `groupcoord serve` (debug build; GROUPCOORD_BIN overrides) on `port` (Kafka) and `port + 1`
 * (HTTP, serving www/) with a fresh data dir and `args`, stopped and removed after test `t`;
 * resolves when /readyz answers. `alive()` asserts it is still running (with its stderr).
 */
export async function startGroupcoord(t, port, args) {
  const bin = process.env.GROUPCOORD_BIN ?? fileURLToPath(new URL('../target/debug/groupcoord', import.meta.url));
  const dir = await mkdtemp(join(tmpdir(), 'groupcoord-e2e-'));
  const srv = spawn(bin, ['serve', '--listen', `127.0.0.1:${port}`, '--http', `127.0.0.1:${port + 1}`, '--data-dir', join(dir, 'data'),
    '--www', fileURLToPath(new URL('.', import.meta.url)), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  srv.stderr.on('data', (d) => { stderr += d; });
  t.after(async () => { srv.kill('SIGTERM'); await rm(dir, { recursive: true, force: true }); });
  const url = `http://127.0.0.1:${port + 1}/`;
  const alive = () => assert.equal(srv.exitCode, null, `groupcoord serve exited: ${stderr}`);
  let ready = false;
  for (let i = 0; i < 600 && !ready; i++) {
    try { ready = (await fetch(`${url}readyz`)).ok; } catch { /* not up yet */ }
    if (!ready) await new Promise((r) => setTimeout(r, 100));
    alive();
  }
  assert.ok(ready, `groupcoord serve not ready within 60 s: ${stderr}`);
  return { url, alive, stderr: () => stderr };
}

/** The demo's settings that make its streams group quick: 1 s heartbeats, no initial delay. */
export const QUICK_STREAMS = ['--set', 'group.streams.heartbeat.interval.ms=1000', '--set', 'group.streams.min.heartbeat.interval.ms=1000',
  '--set', 'group.streams.initial.rebalance.delay.ms=0'];
