#!/usr/bin/env bash
# Re-record tests/differential/recording.jsonl.gz from a real Apache Kafka 4.4 broker:
# builds the interop Maven project (broker jars in tests/interop/streams/target/lib), starts a
# fresh single-node KRaft broker with group.properties appended to its configuration, runs the
# ignored `record` test of tests/differential.rs against it, stops the broker.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
streams="$root/tests/interop/streams"
work="$(mktemp -d -t groupcoord-differential.XXXXXX)"
( cd "$streams" && { mvn -q -B -o package -DskipTests 2>/dev/null || mvn -q -B package -DskipTests; } )
trap '"$streams/kafka-broker.sh" stop "$work"' EXIT
bootstrap=$(BROKER_EXTRA_PROPS="$root/tests/differential/group.properties" \
  KAFKA_HEAP="-Xmx512m -Xms128m" "$streams/kafka-broker.sh" start "$work")
echo "broker on $bootstrap (work dir $work)"
cd "$root"
GROUPCOORD_DIFF_BOOTSTRAP="$bootstrap" cargo test --test differential -- --ignored --exact record --nocapture
