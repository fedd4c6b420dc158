#!/usr/bin/env bash
# Runs every test of the project, installing what the tests need (idempotent).
# Usage: pkg-scripts/test.sh          (what CI runs through .ci/run)
#        QUICK=1 pkg-scripts/test.sh  (skip browser, Python and clippy: the inner loop)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
export PATH="$HOME/.cargo/bin:$PATH"

suites_passed=0
suites_failed=0
failed_names=()
run_suite() {
  local name=$1; shift
  echo
  echo "=== $name: $*"
  if "$@"; then
    suites_passed=$((suites_passed + 1))
  else
    suites_failed=$((suites_failed + 1))
    failed_names+=("$name")
  fi
}

pkg-scripts/setup.sh

run_suite fmt cargo fmt --check
if [ -z "${QUICK:-}" ]; then
  run_suite clippy cargo clippy --locked --all-targets -- -D warnings
fi
run_suite wasm-build cargo build --locked --lib --target wasm32-unknown-unknown
run_suite native-tests cargo test --locked
# The server suites again with two owners (groups sharded over two owner threads, docs/sharding.md):
# the binaries are built by the line above, so this costs only their run time (~25 s).
run_suite native-tests-sharded env GC_TEST_OWNERS=2 cargo test --locked \
  --test server_acl --test server_classic --test server_consumer --test server_crash \
  --test server_data_plane --test server_hostile --test server_http --test server_limits \
  --test server_recovery --test server_security --test server_sharded --test server_streams \
  --test server_wire
if [ -z "${QUICK:-}" ]; then
  run_suite wasm-browser-and-e2e pkg-scripts/test-wasm.sh
  run_suite real-client-smoke env SKIP_RUST=1 pkg-scripts/test-server.sh
  run_suite security-interop pkg-scripts/interop-security.sh
  run_suite kafka-streams-interop pkg-scripts/interop-streams.sh --short
  # Every real consumer client against groupcoord, 10,000 records each: classic groups (issue 12),
  # the consumer protocol and the rolling upgrades classic -> consumer (issue 14). A consumer-
  # protocol static member (java-consumer) must restart within the 20 s consumer session.
  # --wait 90: every wait is event-driven; the bound only matters when a JVM start is slow.
  run_suite real-consumers env TAP=0 GC_DATA_ON_TMPFS=1 CONSUMER_SESSION_MS=20000 pkg-scripts/interop-consumers.sh --target groupcoord --jobs 2 --wait 90
  # kafka-consumer-groups --describe (--offsets/--members/--state) on a KIP-848 group and kafka-groups
  # --list with all three group types print what they print against Apache Kafka 4.4 (issue 14).
  run_suite groups-cli pkg-scripts/interop-groups-cli.sh
fi

echo
echo "suites: ${suites_passed} passed, ${suites_failed} failed"
if [ "$suites_failed" -ne 0 ]; then
  echo "failed suites: ${failed_names[*]}"
  exit 1
fi
