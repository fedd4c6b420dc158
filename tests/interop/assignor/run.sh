#!/usr/bin/env bash
# Side by side: groupcoord's `sticky` assignor against Apache Kafka 4.4.0's StickyTaskAssignor on
# the same generated group (same members, processes, racks, topology, leaver and joiner).
#
#   tests/interop/assignor/run.sh [--members M] [--tasks T] [--standbys S] [--racks R] [--seed N]
#
# Defaults: 1000 members, 10000 tasks, 1 standby, 3 racks, seed 42. Needs cargo, Java 17 and
# Maven (Maven Central reachable, or the artifacts in ~/.m2). Optional: not run by `cargo test`.
# The Rust side is the report mode of `cargo bench --bench assignor` (same code and output as
# `groupcoord bench assignor`, which GROUPCOORD_CLI=1 selects). Release builds with LTO: the first
# one takes minutes.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
MEMBERS=1000 TASKS=10000 STANDBYS=1 RACKS=3 SEED=42
while [ $# -gt 0 ]; do
    case "$1" in
        --members) MEMBERS=$2; shift 2 ;;
        --tasks) TASKS=$2; shift 2 ;;
        --standbys) STANDBYS=$2; shift 2 ;;
        --racks) RACKS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ARGS=(--members "$MEMBERS" --tasks "$TASKS" --standbys "$STANDBYS" --racks "$RACKS" --seed "$SEED")

cd "$ROOT"
echo "== building and running groupcoord (release)" >&2
if [ "${GROUPCOORD_CLI:-0}" = 1 ]; then
    cargo run --release -q --bin groupcoord -- bench assignor "${ARGS[@]}" \
        --write-input "$WORK/input.json" >"$WORK/rust.txt"
else
    cargo bench -q --bench assignor -- "${ARGS[@]}" --write-input "$WORK/input.json" >"$WORK/rust.txt"
fi

echo "== building and running Apache Kafka 4.4.0 (Maven)" >&2
(cd "$HERE" && rm -rf target/lib && mvn -q -B package)
java -cp "$HERE/target/classes:$HERE/target/lib/*" groupcoord.interop.AssignorBench \
    "$WORK/input.json" "$WORK/input.10x.json" >"$WORK/java.txt"

echo
cat "$WORK/rust.txt"
echo
cat "$WORK/java.txt"
echo

# One table: the same lines of both reports, and Kafka / groupcoord for the times.
awk '
    function num(s) { gsub(/[^0-9.]/, "", s); return s + 0 }
    FNR == 1 { side = (NR == FNR) ? "rust" : "java" }
    /^scratch|^steady|^one member/ {
        key = /^scratch/ ? "scratch" : /^steady/ ? "steady" : /leaves/ ? "leave" : "join"
        med[side, key] = $(NF - 2); p99[side, key] = $(NF - 1)
    }
    /^spread/ { spread[side] = $NF " (active " $(NF - 2) ")" }
    /^moved actives on leave/ { leave[side] = $5 " / min " num($7) }
    /^moved actives on join/ { join[side] = $5 " / min " num($7) }
    /^standbys on another rack/ { rack[side] = $5 }
    /^10x tasks/ { ratio[side] = $NF }
    END {
        printf "%-26s %16s %16s %10s\n", "", "groupcoord", "kafka-4.4.0", "kafka/gc"
        split("scratch steady leave join", keys, " ")
        for (i = 1; i <= 4; i++) {
            k = keys[i]
            printf "%-26s %16s %16s %10.1f\n", k " median ms", med["rust", k], med["java", k], med["java", k] / (med["rust", k] > 0 ? med["rust", k] : 1)
            printf "%-26s %16s %16s %10.1f\n", k " p99 ms", p99["rust", k], p99["java", k], p99["java", k] / (p99["rust", k] > 0 ? p99["rust", k] : 1)
        }
        printf "%-26s %16s %16s\n", "spread active+standby", spread["rust"], spread["java"]
        printf "%-26s %16s %16s\n", "moved on leave", leave["rust"], leave["java"]
        printf "%-26s %16s %16s\n", "moved on join", join["rust"], join["java"]
        printf "%-26s %16s %16s\n", "standbys other rack", rack["rust"], rack["java"]
        printf "%-26s %16s %16s\n", "10x tasks time ratio", ratio["rust"], ratio["java"]
    }
' "$WORK/rust.txt" "$WORK/java.txt"
