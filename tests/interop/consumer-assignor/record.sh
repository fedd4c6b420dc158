#!/usr/bin/env bash
# Re-records Apache Kafka 4.4.0's consumer group assignors (uniform, range) on seeded random
# groups into apache-4.4-outputs.jsonl.gz, which `cargo test --test consumer_assignor_apache`
# compares groupcoord against (no Java needed there).
#
#   tests/interop/consumer-assignor/record.sh [cases] [seed]     # default 1200 cases, seed 20241001
#   tests/interop/consumer-assignor/record.sh bench [members] [partitions] [topics]
#
# Needs Java 17 and Maven (Maven Central reachable, or the artifacts in ~/.m2).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"
mvn -q -B package -DskipTests >&2
CP="target/classes:target/lib/*"
if [ "${1:-}" = bench ]; then
    shift
    exec java -Xmx512m -cp "$CP" groupcoord.interop.RecordAssignments bench "$@"
fi
exec java -Xmx256m -cp "$CP" groupcoord.interop.RecordAssignments record "${1:-1200}" "${2:-20241001}" \
    apache-4.4-outputs.jsonl.gz
