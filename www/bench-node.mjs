// The wasm half of pkg-scripts/bench-wasm.sh: runs the same simulation as benches/sim.rs
// (preset $BENCH_PRESET or the first one, STEPS x step(STEP_MS)) in Node and prints
// `wasm_ms=<best of ROUNDS> hash=<state hash>`.
import { readFile } from 'node:fs/promises';
import { initSync, WasmSimulation } from './pkg/groupcoord.js';

initSync({ module: await readFile(new URL('./pkg/groupcoord_bg.wasm', import.meta.url)) });
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
