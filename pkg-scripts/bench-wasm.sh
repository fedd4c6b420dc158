#!/usr/bin/env bash
# Size of the explorer's wasm module and wasm-vs-native speed of the same simulation.
#   wasm size: www/pkg/groupcoord_bg.wasm raw and gzip -9 (budget <= 400 KB gzip with every group type in it)
#   speed:     one preset, 10,000 x step(100 ms) with its actions: Node (www/bench-node.mjs) vs
#              native (benches/sim.rs), best of 3 each; ratio wasm/native (target <= 2.5).
# Env: SKIP_BUILD=1 to reuse www/pkg; BENCH_PRESET, STEPS, STEP_MS, ROUNDS passed to both sides.
# Exits non-zero when the module is over budget (pkg-scripts/check-wasm-size.sh) or the state
# hashes of the two sides differ.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
[ "${SKIP_BUILD:-0}" = 1 ] && [ -f www/pkg/groupcoord_bg.wasm ] || ./pkg-scripts/build-wasm.sh >&2

wasm=www/pkg/groupcoord_bg.wasm
raw=$(wc -c < "$wasm"); gz=$(gzip -9c "$wasm" | wc -c)
js_raw=$(wc -c < www/pkg/groupcoord.js); js_gz=$(gzip -9c www/pkg/groupcoord.js | wc -c)

native=$(cargo bench --locked --bench sim 2>/dev/null | grep '^preset=')
wasmrun=$(node www/bench-node.mjs)
echo "native: $native"
echo "wasm:   $wasmrun"
n_ms=$(sed -n 's/.*native_ms=\([0-9.]*\).*/\1/p' <<<"$native")
w_ms=$(sed -n 's/.*wasm_ms=\([0-9.]*\).*/\1/p' <<<"$wasmrun")
n_h=$(sed -n 's/.*hash=\([0-9a-f]*\).*/\1/p' <<<"$native")
w_h=$(sed -n 's/.*hash=\([0-9a-f]*\).*/\1/p' <<<"$wasmrun")
ratio=$(awk -v w="$w_ms" -v n="$n_ms" 'BEGIN { printf "%.2f", w / n }')
echo
printf 'wasm module  %9d bytes raw  %8d bytes gzip -9  (%.1f KB gzip; budget <= 400 KB)\n' "$raw" "$gz" "$(awk -v g="$gz" 'BEGIN{print g/1024}')"
printf 'JS glue      %9d bytes raw  %8d bytes gzip -9\n' "$js_raw" "$js_gz"
echo "time ratio   wasm/native = $w_ms ms / $n_ms ms = $ratio (target <= 2.5)"
if [ "$n_h" = "$w_h" ]; then echo "same run     state hash $n_h on both sides"; else echo "WARNING: state hashes differ (native $n_h, wasm $w_h)"; exit 1; fi
./pkg-scripts/check-wasm-size.sh
