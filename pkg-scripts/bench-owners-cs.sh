#!/usr/bin/env bash
# Context switches and CPU time per heartbeat of one `groupcoord bench load` run (issue 17,
# docs/sharding.md "Two owners on 50 connections"): unlike heartbeats/s, neither depends much on
# the share of the cores the neighbours leave, so 1 and 2 owners can be compared on a shared
# machine.
#
#   pkg-scripts/bench-owners-cs.sh BIN OWNERS CONNECTIONS [more bench load arguments]
#
# Runs `BIN bench load --members 1000 --groups 10 --duration 6 --warmup 3` (server in the same
# process), counts the process's context switches and task clock with `perf stat` for 4 s of the
# measured window, and prints them per heartbeat (generator included) with the bench's rate.
set -euo pipefail
bin=${1:?binary}
owners=${2:?owners}
conns=${3:?connections}
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" bench load --members 1000 --groups 10 --duration 6 --warmup 3 \
  --connections "$conns" --owners "$owners" "$@" >"$out" 2>&1 &
bench=$!
sleep 4.5
stat=$(perf stat -e context-switches,task-clock -p "$bench" -x, -- sleep 4 2>&1)
wait "$bench"
rate=$(grep -E '^\| StreamsGroupHeartbeat' "$out" | awk -F'|' '{gsub(/ /, "", $6); print $6}')
cs=$(echo "$stat" | grep context-switches | cut -d, -f1)
ms=$(echo "$stat" | grep task-clock | cut -d, -f1)
python3 -c "
r = $rate
print('owners=$owners connections=$conns $*: %d heartbeats/s, %.3f context switches and %.2f us CPU per heartbeat' % (r, $cs / (r * 4), $ms * 1000 / (r * 4)))
"
