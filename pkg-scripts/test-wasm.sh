#!/usr/bin/env bash
# wasm tests: `wasm-pack test --headless --chrome` (every test target built for wasm32; the
# browser tests are tests/wasm_browser.rs, the native-only files compile to nothing), the npm
# package www/pkg imported from Node (www/pkg.test.mjs), then the Playwright e2e test of the
# explorer (www/*e2e.test.mjs; screenshots in test-output/). Fails when the module is over its
# gzip budget (pkg-scripts/check-wasm-size.sh).
# Installs what is missing (chromium, chromium-driver, wasm32 target, wasm-bindgen-cli, wasm-pack)
# first; nothing is downloaded from outside the package registries (the system chromedriver is
# used).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive CARGO_TERM_COLOR=never
TOOLS="${TOOLS:-$HOME/.cargo}"
export PATH="$TOOLS/bin:$HOME/.cargo/bin:$PATH"

missing=()
command -v chromium     >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
((${#missing[@]} == 0)) || ./pkg-scripts/apt-install.sh "${missing[@]}"

# Build www/pkg (also installs the wasm32 target and wasm-bindgen-cli == Cargo.lock's version).
./pkg-scripts/build-wasm.sh
# The size budget first: cheap, and a module over budget fails the suite.
./pkg-scripts/check-wasm-size.sh

# wasm-pack from crates.io, pinned; it finds wasm-bindgen (installed above, == Cargo.lock's) on
# PATH and the system chromedriver through CHROMEDRIVER, so it downloads nothing.
WASM_PACK_VER=0.15.1
if [ "$(wasm-pack --version 2>/dev/null || true)" != "wasm-pack $WASM_PACK_VER" ]; then
  echo "installing wasm-pack $WASM_PACK_VER" >&2
  ./pkg-scripts/cargo-install.sh wasm-pack "$WASM_PACK_VER" "$TOOLS"
fi

# Browser tests of the wasm API (webdriver.json in the crate root configures Chromium).
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
export WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/webdriver.json"
wasm-pack test --headless --chrome --chromedriver "$CHROMEDRIVER"

# The npm package, imported from Node.
node --test www/pkg.test.mjs

# Playwright e2e against the page (shared setup: www/e2e-harness.mjs); the live-mode tests run a
# real `groupcoord serve` (debug build; GROUPCOORD_BIN overrides): E2E_LIVE_PORT picks their ports
# (default 19610-19615), E2E_TRACE_PORT the trace tests' (default 19520-19523).
cargo build --bin groupcoord
(cd www && npm ci --no-audit --no-fund && node --test e2e.test.mjs protocols.e2e.test.mjs traces.e2e.test.mjs draft.e2e.test.mjs breakit.e2e.test.mjs)
echo "test-wasm: all wasm browser tests and e2e tests passed"
