#!/usr/bin/env bash
# The main job: build the explorer's wasm package and the server, then serve the Kafka wire
# protocol on 127.0.0.1:9092 and the web UI on http://127.0.0.1:8080/ with the embedded demo
# (topic demo-input and a group of simulated Kafka Streams members). Ctrl-C stops it cleanly.
# Extra arguments go to `groupcoord serve` (see `groupcoord serve --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
pkg-scripts/setup.sh
pkg-scripts/build-wasm.sh
echo "web UI: http://127.0.0.1:8080/   Kafka: 127.0.0.1:9092"
exec pkg-scripts/serve.sh "$@"
