// www/pkg as an npm package: a consumer outside the repository imports it by name
// (`import ... from 'groupcoord'`, resolved through node_modules and package.json's exports),
// loads the wasm with initSync and runs a short simulation. Build it first:
// pkg-scripts/build-wasm.sh. Run: node --test www/pkg.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const pkgDir = fileURLToPath(new URL('./pkg/', import.meta.url));
const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

// The README's Node example, as a consumer module of its own.
const CONSUMER = `
import { readFile } from 'node:fs/promises';
import { initSync, WasmSimulation } from 'groupcoord';

const wasm = await readFile(new URL(import.meta.resolve('groupcoord/groupcoord_bg.wasm')));
initSync({ module: wasm });
export { WasmSimulation };
`;

/** Installs www/pkg as node_modules/groupcoord of a fresh directory and imports it from there. */
async function importAsConsumer() {
  const dir = mkdtempSync(join(tmpdir(), 'groupcoord-consumer-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(pkgDir, join(dir, 'node_modules', 'groupcoord'), 'dir');
  writeFileSync(join(dir, 'consumer.mjs'), CONSUMER);
  try {
    return await import(pathToFileURL(join(dir, 'consumer.mjs')).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const spec = {
  name: 'npm-package-test',
  seed: 7,
  group_id: 'app',
  topics: { input: 4 },
  topology: {
    epoch: 0,
    subtopologies: [{
      subtopology_id: '0',
      source_topics: ['input'],
      source_topic_regex: [],
      state_changelog_topics: [],
      repartition_sink_topics: [],
      repartition_source_topics: [],
      copartition_groups: [],
    }],
  },
  processes: [
    { process_id: 'p1', threads: 2 },
    { process_id: 'p2', threads: 1 },
  ],
};

/** Every task of the group has exactly one active owner, and owners run their targets. */
function assertOneOwnerPerTask(group) {
  assert.ok(group.tasks.length > 0, 'the topology has tasks');
  const owners = new Map(group.tasks.map((t) => [t, []]));
  for (const m of group.members) {
    for (const t of m.active) {
      assert.ok(owners.has(t), `task ${t} of ${m.member_id} is a task of the topology`);
      owners.get(t).push(m.member_id);
    }
    assert.deepEqual(m.active, m.target_active, `${m.member_id} runs its target`);
  }
  for (const [t, o] of owners) assert.equal(o.length, 1, `task ${t} owners: ${o}`);
}

test('package.json names the module, its types and the wasm, and they exist', () => {
  assert.equal(manifest.name, 'groupcoord');
  const cargoVersion = readFileSync(new URL('../Cargo.toml', import.meta.url), 'utf8')
    .match(/^version = "([^"]+)"/m)[1];
  assert.equal(manifest.version, cargoVersion);
  assert.equal(manifest.type, 'module');
  for (const f of [manifest.module, manifest.types, manifest.exports['.'].default,
    manifest.exports['./groupcoord_bg.wasm'], ...manifest.files]) {
    assert.ok(existsSync(join(pkgDir, f)), `${f} is in www/pkg`);
  }
  // The generated declarations carry the hand-written JSON shapes, not `any`.
  const dts = readFileSync(join(pkgDir, manifest.types), 'utf8');
  assert.match(dts, /export interface SimSnapshot/);
  assert.match(dts, /snapshot\(\): SimSnapshot;/);
  assert.match(dts, /apply\(action: Action \| string\): SimEvent\[\];/);
  assert.doesNotMatch(dts, /\): any;/, 'no method returns any');
});

test('a consumer imports the package by name, and a simulation reaches Stable', async () => {
  const { WasmSimulation } = await importAsConsumer();
  const sim = new WasmSimulation(spec);
  const events = sim.step(60_000);
  assert.ok(events.some((e) => e.kind === 'heartbeat'), 'members heartbeat');
  assert.equal(sim.now(), 60_000);

  const { group } = sim.snapshot();
  assert.equal(group.state, 'Stable');
  assert.equal(group.members.length, 3);
  assert.deepEqual(group.tasks, ['0_0', '0_1', '0_2', '0_3']);
  assertOneOwnerPerTask(group);
  for (const inv of sim.invariants()) assert.ok(inv.ok, `${inv.name}: ${inv.detail}`);

  const types = new Set(sim.recordLog().map((e) => e.record.type));
  for (const t of ['GroupMetadata', 'MemberMetadata', 'TargetAssignmentMember', 'CurrentMemberAssignment', 'Topology']) {
    assert.ok(types.has(t), `record log has ${t}`);
  }

  // A crashed member is fenced by its session timeout; the others take over its tasks.
  const victim = group.members[0].member_id;
  sim.apply({ action: 'crash_member', member: victim });
  sim.step(120_000);
  const after = sim.snapshot().group;
  assert.equal(after.state, 'Stable');
  const known = after.members.filter((m) => m.state !== null);
  assert.equal(known.length, 2, 'the crashed member was fenced');
  assert.ok(!known.some((m) => m.member_id === victim));
  assertOneOwnerPerTask({ ...after, members: known });
  assert.ok(after.group_epoch > group.group_epoch, 'the fence bumped the group epoch');
});

test('bad input is an Error with a message, not a panic', async () => {
  const { WasmSimulation } = await importAsConsumer();
  assert.throws(() => new WasmSimulation('{"seed":'), /invalid scenario spec JSON/);
  const sim = new WasmSimulation(spec);
  assert.throws(() => sim.apply({ action: 'fly_to_moon' }), /unknown variant `fly_to_moon`/);
  assert.throws(() => sim.step(-1), /must be a finite number of ms >= 0/);
});
