#!/usr/bin/env bash
# Syscalls a process makes per request under `groupcoord bench load` (issue 17).
#
#   pkg-scripts/bench-syscalls.sh PID SECONDS [REQUESTS_PER_SECOND]
#
# Counts the socket, poller and wake-up syscalls of every thread of PID for SECONDS with perf's
# syscall tracepoints (much less intrusive than strace, which stops the process at every call).
# With REQUESTS_PER_SECOND (the rate the bench reports for that window) it also prints the
# counts per request. Run it against `groupcoord serve` and against the bench process itself
# (`bench load --addr A --server-pid P`) while a load is in its measured window.
set -euo pipefail
pid=${1:?pid}
secs=${2:?seconds}
rate=${3:-}
events=""
for s in recvfrom sendto read write readv writev epoll_wait epoll_pwait epoll_pwait2 \
    epoll_ctl futex sched_yield; do
    events="$events,syscalls:sys_enter_$s"
done
perf stat -x, -e "${events#,}" -p "$pid" -- sleep "$secs" 2>&1 |
    awk -F, -v secs="$secs" -v rate="$rate" '
        $1 ~ /^[0-9]+$/ && $1 > 0 {
            split($3, a, "sys_enter_")
            line = line sprintf("%s=%s ", a[2], $1)
            if (rate != "") per = per sprintf("%s=%.3f ", a[2], $1 / (secs * rate))
            total += $1
        }
        END {
            print "calls: " line "total=" total
            if (rate != "") print "per request: " per sprintf("total=%.3f", total / (secs * rate))
        }'
