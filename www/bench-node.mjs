// The wasm half of pkg-scripts/bench-wasm.sh: runs the same simulation as benches/sim.rs
// (preset $BENCH_PRESET or the first one, STEPS x step(STEP_MS)) in Node and prints
// `wasm_ms=<best of ROUNDS> hash=<state hash>`.
import { readFile } from 'node:fs/promises';
const PKG = process.env.PKG_DIR ? new URL(`file://${process.env.PKG_DIR.replace(/\/?$/, '/')}`) : new URL('./pkg/', import.meta.url);
const { initSync, WasmSimulation } = await import(new URL('groupcoord.js', PKG));

initSync({ module: await readFile(new URL(process.env.WASM_FILE ?? 'groupcoord_bg.wasm', PKG)) });
const STEPS = Number(process.env.STEPS ?? 10000), STEP_MS = Number(process.env.STEP_MS ?? 100), ROUNDS = Number(process.env.ROUNDS ?? 3);
const names = WasmSimulation.presets().map((p) => p.name);
const name = process.env.BENCH_PRESET || names[0];
let best = Infinity, hash = '';
for (let r = 0; r < ROUNDS; r++) {
  const t0 = performance.now();
  const sim = WasmSimulation.fromPreset(name);
  for (let i = 0; i < STEPS; i++) sim.step(STEP_MS);
  hash = sim.stateHash();
  best = Math.min(best, performance.now() - t0);
  sim.free();
}
console.log(`preset=${name} steps=${STEPS} step_ms=${STEP_MS} wasm_ms=${best.toFixed(2)} hash=${hash}`);
