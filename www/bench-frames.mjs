// Frame benchmark of the explorer: main-thread cost per animation frame with many members.
//
//   node bench-frames.mjs [--members 100] [--partitions P] [--speeds 1,10,100] [--seconds 4]
//                         [--runs 1] [--compare <git rev>] [--no-churn] [--screenshot out.png] [--json]
//                         [--css '<extra CSS, e.g. #grid{display:none}: which view costs what>']
//
// Serves www/ (serve.mjs), opens it in headless Chromium (playwright-core, /usr/bin/chromium or
// $CHROMIUM) at 1280×800 with N one-thread members (`?members=N&partitions=P`; P defaults to N/2,
// which with the two-subtopology scale-out topology is one task per member), plays it at each speed
// for a few seconds and prints, per speed: frames, fps (requestAnimationFrame intervals), the
// JavaScript time per frame (the page's animation-frame callback: sim advance + render) at
// p50/p95/max, the whole main-thread frame (callback + style, layout, paint: until the first task
// after the frame) at p95, and the p95 of each view's share.
//
// --compare REV also runs the www/ of git revision REV (extracted to a temp dir, same www/pkg wasm)
// and prints both side by side; runs alternate between the two trees to spread the machine's noise.
// A tree without the `members` URL option is set up through its own actions API instead (the same
// N one-thread processes and P partitions, added at t = 0).
//
// Churn (default on): at the start of each speed after the first, one member crashes and a new
// process joins, so every speed includes a rebalance, not only heartbeats.
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './serve.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : dflt; };
const num = (name, dflt, lo, hi) => {
  const v = Number(opt(name, dflt));
  if (!Number.isFinite(v) || v < lo || v > hi) { console.error(`--${name} must be a number in [${lo}, ${hi}]`); process.exit(2); }
  return v;
};
if (args.includes('--help') || args.includes('-h')) {
  console.log(readHelp());
  process.exit(0);
}
const N = Math.round(num('members', 100, 1, 500)); // the page's own limit
const P = Math.round(num('partitions', Math.max(1, Math.ceil(N / 2)), 1, 1000));
const SECONDS = num('seconds', 4, 0.5, 120);
const RUNS = Math.round(num('runs', 1, 1, 20));
const SPEEDS = String(opt('speeds', '1,10,100')).split(',').map(Number);
if (SPEEDS.some((s) => !(s >= 0.1 && s <= 1000))) { console.error('--speeds: comma-separated speeds in [0.1, 1000]'); process.exit(2); }
const COMPARE = opt('compare', null);
const CHURN = !args.includes('--no-churn');
const SHOT = opt('screenshot', null);
const CSS = opt('css', null); // profiling aid: extra CSS for the page, e.g. '#grid{display:none}'
const VIEWS = ['sim', 'recv', 'lanes', 'chart', 'cards', 'grid', 'worker'];

function readHelp() {
  const src = execFileSync('sed', ['-n', '1,/^import/p', fileURLToPath(import.meta.url)], { encoding: 'utf8' });
  return src.split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n');
}

// Runs before the page's scripts: times every requestAnimationFrame callback (JavaScript) and the
// whole frame up to the first task after it (a MessageChannel message posted from the callback runs
// after style, layout and paint of that frame).
const INIT = () => {
  const B = (window.__bench = { on: false, frames: [], cur: null });
  const raf = window.requestAnimationFrame.bind(window);
  const ch = new MessageChannel();
  let pending = null;
  ch.port1.onmessage = () => { if (pending) { pending.frame = performance.now() - pending.start; pending = null; } };
  window.requestAnimationFrame = (cb) => raf((ts) => {
    const start = performance.now();
    const f = (B.cur = { ts, start, views: {} });
    try { cb(ts); } finally {
      f.js = performance.now() - start;
      // A page that runs its simulation in a worker receives (deserializes) the replies outside
      // this callback; it reports that main-thread time, counted here with the frame.
      const P = window.explorer?.perf;
      if (P?.lastRecv) { f.views.recv = P.lastRecv; f.js += P.lastRecv; P.lastRecv = 0; }
      B.cur = null;
      if (B.on) {
        B.frames.push(f);
        if (!pending) { pending = f; ch.port2.postMessage(0); }
      }
    }
  });
};

/** Per-view timing for a page without its own per-frame samples: wraps the view methods. */
const WRAP = () => {
  const B = window.__bench, E = window.explorer;
  const wrap = (obj, name, key) => {
    const f = obj[name];
    obj[name] = function (...a) {
      const t0 = performance.now();
      try { return f.apply(this, a); } finally { if (B.cur) B.cur.views[key] = (B.cur.views[key] ?? 0) + performance.now() - t0; }
    };
  };
  wrap(E.driver, 'advance', 'sim'); wrap(E.views.chart, 'ingest', 'sim');
  wrap(E.views.lanes, 'update', 'lanes'); wrap(E.views.chart, 'render', 'chart');
  wrap(E.views.cards, 'update', 'cards'); wrap(E.views.grid, 'update', 'grid');
};

async function prepareTrees() {
  const trees = [{ label: 'this tree', root: HERE }];
  if (!COMPARE) return { trees, cleanup: async () => {} };
  const top = execFileSync('git', ['-C', HERE, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
  const rev = execFileSync('git', ['-C', top, 'rev-parse', '--short', COMPARE], { encoding: 'utf8' }).trim();
  const dir = await mkdtemp(join(tmpdir(), 'bench-frames-'));
  execFileSync('sh', ['-c', `git -C "${top}" archive "${rev}" www | tar -x -C "${dir}"`]);
  await rm(join(dir, 'www', 'pkg'), { recursive: true, force: true });
  await cp(join(HERE, 'pkg'), join(dir, 'www', 'pkg'), { recursive: true });
  await symlink(join(HERE, 'node_modules'), join(dir, 'www', 'node_modules')).catch(() => {});
  trees.unshift({ label: `${rev} (before)`, root: join(dir, 'www') });
  trees[1].label = 'this tree (after)';
  return { trees, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

async function runTree(browser, tree, shot) {
  const server = await startServer(0, '127.0.0.1', null, tree.root);
  const base = `http://127.0.0.1:${server.address().port}/`;
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.addInitScript(INIT);
    await page.goto(`${base}?members=${N}&partitions=${P}`);
    await page.waitForSelector('body[data-ready=true]', { timeout: 30000 });
    let setup = 'url';
    const have = await page.evaluate(() => window.explorer.driver.spec.processes.length);
    if (have !== N) {
      // An older page without the members option: the same group through its actions API.
      setup = 'actions';
      await page.goto(`${base}?preset=empty`);
      await page.waitForSelector('body[data-ready=true]', { timeout: 30000 });
      await page.evaluate(({ n, p }) => {
        const E = window.explorer;
        for (const topic of Object.keys(E.driver.spec.topics)) E.act({ action: 'add_partitions', topic, partitions: p });
        for (let i = 1; i <= n; i++) E.act({ action: 'add_process', process: { process_id: `p${i}`, threads: 1 } });
      }, { n: N, p: P });
    }
    const ownSamples = await page.evaluate(() => !!window.explorer.perf);
    if (!ownSamples) await page.evaluate(WRAP);
    if (CSS) await page.addStyleTag({ content: CSS });
    await page.waitForTimeout(300);
    const out = [];
    for (const [i, speed] of SPEEDS.entries()) {
      if (CHURN && i > 0) {
        await page.evaluate((k) => {
          const E = window.explorer, ms = E.driver.last.snapshot.group.members.filter((m) => m.state && m.client_status === 'alive');
          if (ms.length) E.act({ action: 'crash_member', member: ms[(k * 7) % ms.length].member_id });
          E.act({ action: 'add_process', process: { process_id: `churn${k}`, threads: 1 } });
        }, i);
      }
      await page.$eval('[data-testid=speed]', (el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }, String(Math.log10(speed)));
      const t0 = await page.evaluate(() => window.explorer.driver.now);
      await page.evaluate(() => {
        window.__bench.frames = [];
        window.__bench.on = true;
        if (window.explorer.perf) { window.explorer.perf.samples = []; window.explorer.perf.on = true; }
      });
      await page.click('[data-testid=play]');
      await page.waitForTimeout(SECONDS * 1000);
      await page.evaluate(() => { window.__bench.on = false; if (window.explorer.perf) window.explorer.perf.on = false; });
      // The screenshot: still playing at the last speed (outside the measured frames).
      if (shot && i === SPEEDS.length - 1) await page.screenshot({ path: shot });
      await page.click('[data-testid=play]');
      await page.waitForTimeout(100);
      const r = await page.evaluate(() => {
        const B = window.__bench, E = window.explorer;
        return { frames: B.frames.map((f) => ({ ts: f.ts, js: f.js, frame: f.frame, views: f.views })), samples: E.perf?.samples ?? null, now: E.driver.now, members: E.driver.last.snapshot.group.members.length, tasks: E.driver.last.snapshot.group.tasks.length };
      });
      out.push({ speed, simMs: r.now - t0, ...summarize(r), members: r.members, tasks: r.tasks });
    }
    return { setup, rows: out, errors };
  } finally {
    await page.close();
    server.close();
  }
}

const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};

function summarize({ frames, samples }) {
  // Frames that ran the sim or rendered: the page's loop skips idle frames cheaply either way.
  const fr = frames.filter((f) => f.js != null);
  const ts = fr.map((f) => f.ts);
  const dur = ts.length > 1 ? ts[ts.length - 1] - ts[0] : NaN;
  const views = {};
  if (samples) for (const k of VIEWS) views[k] = samples.map((s) => s[k] ?? 0);
  else for (const k of VIEWS) views[k] = fr.map((f) => f.views[k] ?? 0);
  views.recv = fr.map((f) => f.views.recv ?? 0);
  return {
    n: fr.length,
    fps: ((ts.length - 1) * 1000) / dur,
    js: fr.map((f) => f.js),
    frame: fr.map((f) => f.frame).filter((x) => x != null),
    gaps: ts.slice(1).map((t, i) => t - ts[i]),
    views,
  };
}

function merge(runs) {
  // runs: [{rows}] of one tree → per speed, all samples pooled
  return SPEEDS.map((speed, i) => {
    const rs = runs.map((r) => r.rows[i]);
    const cat = (k) => rs.flatMap((r) => r[k]);
    const views = Object.fromEntries(VIEWS.map((k) => [k, rs.flatMap((r) => r.views[k])]));
    return {
      speed, n: rs.reduce((a, r) => a + r.n, 0), fps: rs.reduce((a, r) => a + r.fps, 0) / rs.length,
      js: cat('js'), frame: cat('frame'), gaps: cat('gaps'), views,
      simMs: rs.reduce((a, r) => a + r.simMs, 0) / rs.length, members: rs[rs.length - 1].members, tasks: rs[rs.length - 1].tasks,
    };
  });
}

function table(results) {
  const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');
  const head = ['tree', 'speed', 'frames', 'fps', 'gap p95', 'js p50', 'js p95', 'js max', 'frame p95', ...VIEWS.map((v) => `${v} p95`)];
  const lines = [head];
  for (const [si, speed] of SPEEDS.entries()) {
    for (const r of results) {
      const m = r.merged[si];
      lines.push([r.label, `${speed}×`, String(m.n), f1(m.fps), f1(pct(m.gaps, 0.95)), f1(pct(m.js, 0.5)), f1(pct(m.js, 0.95)), f1(Math.max(...m.js)), f1(pct(m.frame, 0.95)),
        ...VIEWS.map((v) => f1(pct(m.views[v], 0.95)))]);
    }
  }
  const w = head.map((_, c) => Math.max(...lines.map((l) => l[c].length)));
  const fmt = (l) => `| ${l.map((x, c) => (c < 2 ? x.padEnd(w[c]) : x.padStart(w[c]))).join(' | ')} |`;
  return [fmt(lines[0]), `|${w.map((x, c) => (c < 2 ? ':' + '-'.repeat(x + 1) : '-'.repeat(x + 1) + ':')).join('|')}|`, ...lines.slice(1).map(fmt)].join('\n');
}

const { trees, cleanup } = await prepareTrees();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--headless=new', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
});
try {
  const perTree = trees.map(() => []);
  const setups = trees.map(() => '');
  let errors = [];
  for (let run = 0; run < RUNS; run++) {
    // Alternate the order so neither tree always runs first (warm-up, machine load).
    const order = run % 2 ? [...trees.keys()].reverse() : [...trees.keys()];
    for (const ti of order) {
      const last = run === RUNS - 1 && ti === trees.length - 1;
      const r = await runTree(browser, trees[ti], last ? SHOT : null);
      perTree[ti].push(r);
      setups[ti] = r.setup;
      errors = errors.concat(r.errors.map((e) => `${trees[ti].label}: ${e}`));
      process.stderr.write(`run ${run + 1}/${RUNS} ${trees[ti].label}: done\n`);
    }
  }
  const results = trees.map((t, i) => ({ label: t.label, merged: merge(perTree[i]) }));
  const m = results[results.length - 1].merged;
  console.log(`members=${N} partitions=${P} (group at the end: ${m[m.length - 1].members} members, ${m[m.length - 1].tasks} tasks) · ${SECONDS}s per speed × ${RUNS} run(s) · churn ${CHURN ? 'on' : 'off'} · 1280×800 headless Chromium · setup ${trees.map((t, i) => `${t.label}: ${setups[i]}`).join(', ')}`);
  console.log('ms per animation frame; js = the page\'s frame callback (sim advance + render), frame = js + style/layout/paint, gap = interval between frames');
  console.log(table(results));
  for (const r of results) console.log(`${r.label}: simulated ${r.merged.map((x) => `${(x.simMs / 1000).toFixed(1)}s at ${x.speed}×`).join(', ')}`);
  if (args.includes('--json')) console.log(JSON.stringify(results.map((r) => ({ label: r.label, rows: r.merged.map((x) => ({ speed: x.speed, frames: x.n, fps: x.fps, js_p50: pct(x.js, 0.5), js_p95: pct(x.js, 0.95), js_max: Math.max(...x.js), frame_p95: pct(x.frame, 0.95), ...Object.fromEntries(VIEWS.map((v) => [`${v}_p95`, pct(x.views[v], 0.95)])) })) }))));
  if (errors.length) { console.error(`page errors:\n${errors.join('\n')}`); process.exitCode = 1; }
} finally {
  await browser.close();
  await cleanup();
}
