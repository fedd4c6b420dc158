#!/usr/bin/env bash
# Real Kafka consumers in classic groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup) on Apache Kafka
# 4.4 and on groupcoord (issue 12). See tests/interop/consumers/README.md.
#
#   pkg-scripts/interop-consumers.sh [--target kafka|groupcoord|both] [--clients LIST] [--records N]
#                                    [--short] [--timings [--protocol classic|consumer]] [--rounds N]
#                                    [--wait S] [--jobs N]
#
#   --target    which broker(s) to run against (default both; --short alone: groupcoord)
#   --clients   comma list of confluent-range, confluent-coop, kafka-python, aiokafka, kcat, java,
#               console, groups-tool, and with group.protocol=consumer (KIP-848) confluent-consumer,
#               java-consumer, and the rolling upgrades confluent-upgrade, java-upgrade (classic ->
#               consumer, one member at a time: online migration) (default all of them)
#   --records   records per client test (default 10000)
#   --short     a quick check: confluent-range and groups-tool, 1200 records (CI runs every client:
#               pkg-scripts/test.sh, suite real-consumers)
#   --wait      bound of each wait in seconds (default 45; a crash step adds the session timeout)
#   --jobs      client tests side by side (default 1): the JVM clients (java, console, groups-tool)
#               take turns in one lane, the others share N-1 lanes; each has its own topic and group
#   --timings   side-by-side settle times (first assignment, join, graceful leave, crash) instead
#               of the client tests; --rounds (default 3) per target, the targets alternating round
#               by round; TIMINGS_CLIENT: a comma list, one table each (default confluent-range, or
#               with --protocol consumer the KIP-848 consumer protocol: confluent-consumer)
#   GC_PORT     groupcoord's port (default: a free one); KAFKA_PORT, KAFKA_CONTROLLER_PORT the broker's
#   CONSUMER_SESSION_MS  the brokers' group.consumer.session.timeout.ms (default 6000, as the classic
#               members ask for theirs); a consumer-protocol static member must restart within it
#               (the JVM's restart took 10 s on a loaded 2-core machine: the CI suite uses 20000)
#   TAP=0       do not record the request versions each client sends (recorded when run as root)
#   GC_METRICS=PORT  serve groupcoord's /metrics on 127.0.0.1:PORT and log every fsync over 1 s
#               (sampled every 0.5 s) to $WORK/groupcoord/slow-fsync.log: a stall's time, for the logs
#
# Installs what is missing (apt kcat, the Python clients in .venv, the Maven artifacts), starts the
# target(s), prints one RESULT line per client and step and a final "N passed, N failed". Every
# process it starts is stopped on exit; every wait is bounded. Work files stay in $WORK (printed).
set -euo pipefail

target=""
clients=""
records=10000
short=0
timings=0
rounds=3
protocol=classic
wait_s=45
jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --records) records="$2"; shift 2 ;;
    --short) short=1; shift ;;
    --timings) timings=1; shift ;;
    --protocol) protocol="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --wait) wait_s="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ "$short" = 1 ]; then
  target="${target:-groupcoord}"; clients="${clients:-confluent-range,groups-tool}"; records=1200
fi
target="${target:-both}"
clients="${clients:-confluent-range,confluent-coop,kafka-python,aiokafka,kcat,java,console,groups-tool,confluent-consumer,java-consumer,confluent-upgrade,java-upgrade}"
case "$target" in kafka|groupcoord|both) ;; *) echo "--target kafka|groupcoord|both" >&2; exit 2 ;; esac
case "$protocol" in classic) timings_default=confluent-range ;; consumer) timings_default=confluent-consumer ;;
  *) echo "--protocol classic|consumer" >&2; exit 2 ;; esac
for c in ${clients//,/ }; do
  case "$c" in confluent-range|confluent-coop|kafka-python|aiokafka|kcat|java|console|groups-tool) ;;
    # The consumer rebalance protocol (KIP-848), and the rolling upgrades to it.
    confluent-consumer|java-consumer|confluent-upgrade|java-upgrade) ;;
    *) echo "unknown client $c" >&2; exit 2 ;; esac
done


root="$(cd "$(dirname "$0")/.." && pwd)"
proj="$root/tests/interop/consumers"
# The broker's consumer-protocol (KIP-848) session and heartbeat, as the classic members ask for
# theirs (classic groups are not affected).
consumer_session_ms="${CONSUMER_SESSION_MS:-6000}"
case "$consumer_session_ms" in ''|*[!0-9]*) echo "CONSUMER_SESSION_MS must be a number of ms" >&2; exit 2 ;; esac
broker="$root/tests/interop/streams/kafka-broker.sh"
WORK="${WORK:-$(mktemp -d /tmp/interop-consumers.XXXXXX)}"
mkdir -p "$WORK"
if [ -z "${BROKER_EXTRA_PROPS:-}" ]; then
  sed "s/^group.consumer.session.timeout.ms=.*/group.consumer.session.timeout.ms=$consumer_session_ms/" \
    "$proj/consumer-protocol.properties" > "$WORK/consumer-protocol.properties"
  export BROKER_EXTRA_PROPS="$WORK/consumer-protocol.properties"
fi
echo "interop-consumers: target=$target clients=$clients records=$records timings=$timings work=$WORK ($(date -u '+%F %T UTC'))"

gc_pid=""
kafka_dir=""
tap_pids=()
stop_taps() {
  local p
  for p in "${tap_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${tap_pids[@]}"; do
    for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$p" 2>/dev/null || true
  done
  tap_pids=()
}
harness_pid=""
cleanup() {
  set +e
  # The harness stops its consumers on SIGTERM (and on SIGINT, which they get too).
  if [ -n "$harness_pid" ] && kill -0 "$harness_pid" 2>/dev/null; then
    kill "$harness_pid"; for _ in $(seq 1 80); do kill -0 "$harness_pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$harness_pid" 2>/dev/null
  fi
  stop_taps
  if [ -n "$gc_pid" ] && kill -0 "$gc_pid" 2>/dev/null; then
    kill "$gc_pid"; for _ in $(seq 1 20); do kill -0 "$gc_pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$gc_pid" 2>/dev/null
  fi
  if [ -n "$kafka_dir" ]; then "$broker" stop "$kafka_dir"; fi
  if [ -n "$gc_tmpfs" ]; then rm -rf "$gc_tmpfs"; fi
}
gc_tmpfs=""
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- install (idempotent) ---------------------------------------------------------------------------
# Debian packages: kcat (when it is tested), a JDK and Maven (the Java members, the tools, the
# broker), the venv module. apt runs only when one is missing.
missing=()
if [[ ",$clients," == *",kcat,"* ]]; then command -v kcat >/dev/null || missing+=(kcat); fi
command -v java >/dev/null || missing+=(default-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
if ((${#missing[@]})); then
  echo "installing ${missing[*]}"
  "$root/pkg-scripts/apt-install.sh" "${missing[@]}"
fi
VENV="$root/.venv"
if ! "$VENV/bin/python" - <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
want = {"confluent-kafka": "2.16.1", "kafka-python": "3.0.12", "aiokafka": "0.14.0"}
sys.exit(0 if all(version(k) == v for k, v in want.items()) else 1)
EOF
then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$proj/requirements.txt"
fi
# Maven: the consumers project (clients, tools) and the broker's class path (the streams project,
# whose kafka-broker.sh this script reuses). Offline first: the artifacts are usually cached.
mvn_package() { # DIR; skipped while nothing in pom.xml or src/ is newer than the last build
  local stamp="$1/target/.interop-built"
  if [ -f "$stamp" ] && [ -z "$(find "$1/pom.xml" "$1/src" -newer "$stamp" -print -quit)" ]; then return 0; fi
  ( cd "$1" && { mvn -q -B -o package > "$WORK/mvn.log" 2>&1 || mvn -q -B package >> "$WORK/mvn.log" 2>&1; } ) \
    || { cat "$WORK/mvn.log" >&2; exit 1; }
  touch "$stamp"
}
mvn_package "$proj/java"
[ "$target" = groupcoord ] || mvn_package "$root/tests/interop/streams"
java_cp="$proj/java/target/classes:$proj/java/target/lib/*"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

boots=()
# The request versions each client sends, read off the loopback interface (root only; TAP=0 to skip).
start_tap() { # TARGET HOST:PORT
  [ "${TAP:-1}" = 1 ] && [ "$(id -u)" = 0 ] || return 0
  "$VENV/bin/python" "$proj/apitap.py" "${2##*:}" "$WORK/$1-requests.txt" 2> "$WORK/$1-tap.log" &
  tap_pids+=($!)
}
# --- Apache Kafka 4.4 -------------------------------------------------------------------------------
if [ "$target" = kafka ] || [ "$target" = both ]; then
  kafka_dir="$WORK/kafka-broker"
  boot=$(KAFKA_HEAP="-Xmx512m -Xms128m" "$broker" start "$kafka_dir")
  echo "Apache Kafka 4.4 at $boot"
  boots+=(--bootstrap "kafka=$boot")
  start_tap kafka "$boot"
fi

# --- groupcoord -------------------------------------------------------------------------------------
if [ "$target" = groupcoord ] || [ "$target" = both ]; then
  ( cd "$root" && export PATH="$HOME/.cargo/bin:$PATH" && cargo build -q --bin groupcoord )
  mkdir -p "$WORK/groupcoord"
  gc_data="$WORK/groupcoord/data"
  # GC_DATA_ON_TMPFS=1 (the CI suite): the log on tmpfs. This suite checks what the clients
  # see; on a disk shared with builds an fsync can take seconds, every answer of its batch waits
  # for it, and sessions expire (measured: tests/interop/consumers/README.md). Durability has
  # suites of its own (server_crash, server_recovery, security-interop's restarts).
  if [ "${GC_DATA_ON_TMPFS:-0}" = 1 ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    gc_tmpfs=$(mktemp -d /dev/shm/groupcoord-consumers.XXXXXX)
    gc_data="$gc_tmpfs/data"
  fi
  export RUST_LOG="${RUST_LOG:-debug}"
  # The classic-group settings as on the Kafka side. Start-up replays the log and fsyncs: on a
  # disk shared with heavy builds that alone took 10 s once, hence the 60 s bound. The server
  # is stopped on exit (cleanup) whether or not it came up.
  "$root/target/debug/groupcoord" serve --listen "127.0.0.1:${GC_PORT:-0}" --data-dir "$gc_data" \
    --set group.streams.initial.rebalance.delay.ms=0 --set group.initial.rebalance.delay.ms=0 \
    --set group.consumer.session.timeout.ms="$consumer_session_ms" --set group.consumer.min.session.timeout.ms=6000 \
    --set group.consumer.heartbeat.interval.ms=1000 --set group.consumer.min.heartbeat.interval.ms=1000 \
    ${GC_METRICS:+--http "127.0.0.1:$GC_METRICS"} \
    > "$WORK/groupcoord/stdout.log" 2> "$WORK/groupcoord/server.log" &
  gc_pid=$!
  for _ in $(seq 1 600); do
    grep -q 'listening on' "$WORK/groupcoord/stdout.log" 2>/dev/null && break
    kill -0 "$gc_pid" 2>/dev/null || { echo "groupcoord did not start:" >&2; cat "$WORK/groupcoord/server.log" >&2; exit 1; }
    sleep 0.1
  done
  grep -q 'listening on' "$WORK/groupcoord/stdout.log" \
    || { echo "groupcoord not listening after 60 s:" >&2; cat "$WORK/groupcoord/server.log" >&2; exit 1; }
  addr=$(sed -n 's/^groupcoord listening on //p' "$WORK/groupcoord/stdout.log" | head -1)
  echo "groupcoord at $addr (pid $gc_pid, log $WORK/groupcoord/server.log)"
  boots+=(--bootstrap "groupcoord=$addr")
  start_tap groupcoord "$addr"
  if [ -n "${GC_METRICS:-}" ]; then
    # The log's fsyncs, sampled every 0.5 s: a line per sample in which an fsync over 1 s ended
    # (time, fsyncs so far, of them over 1 s, total fsync seconds so far).
    ( prev=0
      while kill -0 "$gc_pid" 2>/dev/null; do
        m=$(curl -s --max-time 2 "http://127.0.0.1:$GC_METRICS/metrics" || true)
        slow=$(awk -v m="$m" 'BEGIN{n=split(m,l,"\n"); c=0; o=0; s=0
          for(i=1;i<=n;i++){ if(l[i] ~ /^groupcoord_log_flush_seconds_count /){split(l[i],f," "); c=f[2]}
            if(l[i] ~ /^groupcoord_log_flush_seconds_bucket\{le="1"\}/){split(l[i],f," "); o=f[2]}
            if(l[i] ~ /^groupcoord_log_flush_seconds_sum /){split(l[i],f," "); s=f[2]} }
          print c, c-o, s}')
        set -- $slow
        if [ "${2:-0}" != "$prev" ]; then echo "$(date -u +%T.%3N) fsyncs=$1 over_1s=$2 sum_s=$3" >> "$WORK/groupcoord/slow-fsync.log"; prev=$2; fi
        sleep 0.5
      done ) &
    tap_pids+=($!)
  fi
fi

extra=()
[ "$timings" = 1 ] && extra+=(--timings --rounds "$rounds" --timings-client "${TIMINGS_CLIENT:-$timings_default}"
  --consumer-session-ms "$consumer_session_ms")
status=0
"$VENV/bin/python" -u "$proj/harness.py" "${boots[@]}" --clients "$clients" --records "$records" --wait "$wait_s" --jobs "$jobs" \
  --java-cp "$java_cp" --work "$WORK" "${extra[@]}" &
harness_pid=$!
wait "$harness_pid" || status=$?
harness_pid=""
stop_taps
for t in kafka groupcoord; do
  if [ -s "$WORK/$t-requests.txt" ]; then
    echo; echo "== requests sent to $t (client id: api key versions), also in $WORK/$t-requests.txt"
    cat "$WORK/$t-requests.txt"
  fi
done
exit $status
