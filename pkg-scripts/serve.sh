#!/usr/bin/env bash
# Run the server with the demo and the web view: Kafka on 127.0.0.1:9092, web on
# http://127.0.0.1:8080/ (www/ + /api/groups + /api/events + /metrics). Extra args are passed on.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin groupcoord
exec ./target/release/groupcoord serve --listen 127.0.0.1:9092 --data-dir ./data \
    --http 127.0.0.1:8080 --www www --demo "$@"
