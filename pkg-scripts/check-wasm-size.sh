#!/usr/bin/env bash
# Fails (exit 1) when the explorer's wasm module is over its budget: 400 KB = 409,600 bytes
# gzip -9, with every group type in it. Run after pkg-scripts/build-wasm.sh (test-wasm.sh and
# bench-wasm.sh call it). Env: WASM (default www/pkg/groupcoord_bg.wasm), WASM_GZIP_BUDGET.
set -euo pipefail
cd "$(dirname "$0")/.."
wasm="${WASM:-www/pkg/groupcoord_bg.wasm}"
budget="${WASM_GZIP_BUDGET:-409600}"
[ -f "$wasm" ] || { echo "check-wasm-size: $wasm not found (run pkg-scripts/build-wasm.sh)" >&2; exit 1; }
gz=$(gzip -9c "$wasm" | wc -c)
if [ "$gz" -gt "$budget" ]; then
  echo "check-wasm-size: FAIL: $wasm is $gz bytes gzip -9, over the budget of $budget bytes" >&2
  exit 1
fi
echo "check-wasm-size: $wasm is $gz bytes gzip -9 (budget $budget, $((budget - gz)) left)"
