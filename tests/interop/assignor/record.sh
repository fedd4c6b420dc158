#!/usr/bin/env bash
# Re-records Apache Kafka 4.4.0's `StickyTaskAssignor` outputs on seeded random groups into
# apache-4.4-outputs.jsonl (inputs and outputs, one group per line), which
# `cargo test --test assignor_apache` replays against groupcoord's `sticky` assignor.
#
#   tests/interop/assignor/record.sh [CASES] [FIRST_SEED]
#
# Defaults: 1200 groups from seed 1. Needs Java 17 and Maven (Maven Central reachable, or the
# artifacts in ~/.m2). The output is deterministic: the same seeds give the same file.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CASES=${1:-1200}
FIRST=${2:-1}

(cd "$HERE" && rm -rf target/lib && mvn -q -B package)
java -cp "$HERE/target/classes:$HERE/target/lib/*" groupcoord.interop.AssignorRecord \
    "$HERE/apache-4.4-outputs.jsonl" "$CASES" "$FIRST"
echo "recorded $(wc -l <"$HERE/apache-4.4-outputs.jsonl") groups ($(du -h "$HERE/apache-4.4-outputs.jsonl" | cut -f1)) into $HERE/apache-4.4-outputs.jsonl" >&2
