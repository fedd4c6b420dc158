#!/usr/bin/env bash
# wasm tests: wasm-bindgen-test in headless Chromium (tests/wasm_browser.rs), then the Playwright
# e2e test of the explorer (www/e2e.test.mjs; screenshots in test-output/).
# Installs what is missing (chromium, chromium-driver, wasm32 target, wasm-bindgen-cli) first.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive CARGO_TERM_COLOR=never
TOOLS="${TOOLS:-$HOME/.cargo}"
export PATH="$TOOLS/bin:$HOME/.cargo/bin:$PATH"

missing=()
command -v chromium     >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Build www/pkg (also installs the wasm32 target and wasm-bindgen-cli == Cargo.lock's version).
./pkg-scripts/build-wasm.sh

# Browser tests of the wasm API. No -q: the wasm-bindgen test runner rejects --quiet.
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
export WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/webdriver.json"
cargo test --locked --target wasm32-unknown-unknown --test wasm_browser

# Playwright e2e against the page.
(cd www && npm ci --no-audit --no-fund && node --test e2e.test.mjs)
echo "test-wasm: all wasm browser tests and e2e tests passed"
