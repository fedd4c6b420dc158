#!/usr/bin/env bash
# Serves the explorer (www/) at http://127.0.0.1:${PORT:-8123}/ ; builds www/pkg first if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f www/pkg/groupcoord.js ] || ./pkg-scripts/build-wasm.sh
exec node www/serve.mjs "${PORT:-8123}"
