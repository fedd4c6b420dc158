#!/usr/bin/env bash
# Explorer frame benchmark (www/bench-frames.mjs): per-frame main-thread cost with 100 members at
# 1×, 10× and 100× in headless Chromium. Arguments go to the script, e.g.
#   pkg-scripts/bench-frames.sh --members 100 --runs 3 --compare <git rev>
# Builds www/pkg first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f www/pkg/groupcoord.js ] || ./pkg-scripts/build-wasm.sh
[ -d www/node_modules/playwright-core ] || (cd www && npm ci --no-audit --no-fund)
cd www && exec node bench-frames.mjs "$@"
