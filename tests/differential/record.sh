#!/usr/bin/env bash
# Re-record a differential recording from a real Apache Kafka 4.4 broker:
#   record.sh [streams|classic|consumer]    (default streams)
# builds the interop Maven project (broker jars in tests/interop/streams/target/lib), starts a
# fresh single-node KRaft broker with the kind's group settings appended to its configuration
# (streams: group.properties; classic: classic.properties; consumer: consumer.properties), runs
# the ignored `record` / `record_classic` / `record_consumer` test of tests/differential.rs against
# it, stops the broker. BROKER_PORT / CONTROLLER_PORT pin the broker's ports (default: free ones).
set -euo pipefail
kind="${1:-streams}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
streams="$root/tests/interop/streams"
case "$kind" in
  streams) props=group.properties; test=record ;;
  classic) props=classic.properties; test=record_classic ;;
  consumer) props=consumer.properties; test=record_consumer ;;
  *) echo "usage: $0 [streams|classic|consumer]" >&2; exit 2 ;;
esac
work="$(mktemp -d -t groupcoord-differential.XXXXXX)"
( cd "$streams" && { mvn -q -B -o package -DskipTests 2>/dev/null || mvn -q -B package -DskipTests; } )
trap '"$streams/kafka-broker.sh" stop "$work"' EXIT
bootstrap=$(BROKER_EXTRA_PROPS="$root/tests/differential/$props" \
  KAFKA_HEAP="-Xmx512m -Xms128m" "$streams/kafka-broker.sh" start "$work")
echo "broker on $bootstrap (work dir $work)"
cd "$root"
GROUPCOORD_DIFF_BOOTSTRAP="$bootstrap" cargo test --test differential -- --ignored --exact "$test" --nocapture
