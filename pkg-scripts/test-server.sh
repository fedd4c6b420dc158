#!/usr/bin/env bash
# Server tests: the Rust server tests, then the real-client smoke test and the consumer group
# test (confluent-kafka 2.16.1 in a venv at .venv, created idempotently) against a spawned
# `groupcoord serve --demo`.
set -euo pipefail
cd "$(dirname "$0")/.."

# SKIP_RUST=1: the Rust server tests already ran (pkg-scripts/test.sh runs all of `cargo test`).
if [ -z "${SKIP_RUST:-}" ]; then
    cargo test --test server_wire --test server_log --test server_streams --test server_classic --test server_crash --test server_http --test server_cli
    cargo test --lib config_keys
fi

VENV=.venv
if ! "$VENV/bin/python" -c 'import confluent_kafka, sys; sys.exit(0 if confluent_kafka.__version__ == "2.16.1" else 1)' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check 'confluent-kafka==2.16.1'
fi

cargo build --bin groupcoord
DATA=$(mktemp -d)
OUT=$(mktemp)
./target/debug/groupcoord serve --listen 127.0.0.1:0 --data-dir "$DATA" --demo \
    --set group.streams.initial.rebalance.delay.ms=0 >"$OUT" 2>"$DATA.log" &
PID=$!
cleanup() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$DATA" "$DATA.log" "$OUT"; }
trap cleanup EXIT
for _ in $(seq 1 100); do
    grep -q 'listening on' "$OUT" && break
    sleep 0.1
done
ADDR=$(sed -n 's/^groupcoord listening on //p' "$OUT" | head -1)
[ -n "$ADDR" ] || { echo "server did not start"; cat "$DATA.log"; exit 1; }
"$VENV/bin/python" tests/interop/python/smoke.py "$ADDR"
# Classic consumer groups: 3 confluent-kafka Consumers, exactly once with commits, a leave.
"$VENV/bin/python" tests/interop/python/consumer_group.py "$ADDR" range
"$VENV/bin/python" tests/interop/python/consumer_group.py "$ADDR" cooperative-sticky
# Graceful shutdown flushes and exits 0.
kill -TERM "$PID"
wait "$PID"
echo "server exited 0 on SIGTERM"
