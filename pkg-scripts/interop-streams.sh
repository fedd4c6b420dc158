#!/usr/bin/env bash
# Real Kafka Streams 4.4 applications (group.protocol=streams) on Apache Kafka 4.4 and on groupcoord,
# side by side (issue 6). See tests/interop/streams/README.md.
#
#   pkg-scripts/interop-streams.sh [--target kafka|groupcoord|both] [--instances N] [--short]
#
#   --target     which broker(s) to run against (default both)
#   --instances  Streams instances started at first (default 3)
#   --short      3 instances, crash and graceful close only, groupcoord only (the CI variant)
#
# Every step waits until every task is active on exactly one live instance, no standby sits with its
# active and (num.standby.replicas=1, >1 instance) every stateful task has a standby, stable for 2 s.
# The JVMs, the broker and groupcoord are stopped on exit. Work files stay in $WORK (printed).
set -euo pipefail

target=both
instances=3
steps=start,crash,close,add,static
short=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --instances) instances="$2"; shift 2 ;;
    --short) short=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ "$short" = 1 ]; then
  target=groupcoord; instances=3; steps=start,crash,close
fi
case "$target" in kafka|groupcoord|both) ;; *) echo "--target kafka|groupcoord|both" >&2; exit 2 ;; esac

root="$(cd "$(dirname "$0")/.." && pwd)"
proj="$root/tests/interop/streams"
WORK="${WORK:-$(mktemp -d /tmp/interop-streams.XXXXXX)}"
mkdir -p "$WORK"
echo "interop-streams: target=$target instances=$instances steps=$steps work=$WORK ($(date -u '+%F %T UTC'))"

# Broker-side group settings used on both systems.
SESSION_MS=10000
HEARTBEAT_MS=1000
STANDBY=1
# Kafka 4.4's streams assignor places no warm-up tasks (its refiner is an identity function; the
# client logs "Warmup replicas are not supported yet with the streams protocol"). groupcoord's
# sticky assignor does (KIP-441), which holds back balance until warm-ups catch up: 0 on both by
# default, WARMUPS=2 (the documented default) to see the difference.
WARMUPS="${WARMUPS:-0}"

gc_pid=""
kafka_dir=""
cleanup() {
  set +e
  if [ -n "$gc_pid" ] && kill -0 "$gc_pid" 2>/dev/null; then
    kill "$gc_pid"; for _ in $(seq 1 20); do kill -0 "$gc_pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$gc_pid" 2>/dev/null
  fi
  if [ -n "$kafka_dir" ]; then "$proj/kafka-broker.sh" stop "$kafka_dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# --- build ------------------------------------------------------------------------------------------
( cd "$proj" && { mvn -q -B -o package 2>/dev/null || mvn -q -B package; } )
cp_java="$proj/target/classes:$proj/target/lib/*"

driver() { # label bootstrap
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$cp_java" interop.Driver \
    --bootstrap "$2" --instances "$instances" --steps "$steps" --label "$1" \
    --workdir "$WORK/$1/run" --results "$WORK/$1.results" --describe \
    --partitions 4 --standby "$STANDBY" --settle-timeout-s 120
}

status=0
# --- Apache Kafka 4.4 -------------------------------------------------------------------------------
if [ "$target" = kafka ] || [ "$target" = both ]; then
  kafka_dir="$WORK/kafka"
  boot=$(STREAMS_WARMUPS=$WARMUPS STREAMS_SESSION_MS=$SESSION_MS STREAMS_HEARTBEAT_MS=$HEARTBEAT_MS STREAMS_STANDBY=$STANDBY \
         "$proj/kafka-broker.sh" start "$kafka_dir")
  echo "Apache Kafka 4.4 at $boot"
  driver kafka "$boot" || status=1
  "$proj/kafka-broker.sh" stop "$kafka_dir"; kafka_dir=""
fi

# --- groupcoord -------------------------------------------------------------------------------------
if [ "$target" = groupcoord ] || [ "$target" = both ]; then
  ( cd "$root" && cargo build -q --release --bin groupcoord )
  port=$(free_port)
  mkdir -p "$WORK/groupcoord"
  "$root/target/release/groupcoord" serve --listen "127.0.0.1:$port" --data-dir "$WORK/groupcoord/data" \
    --set group.streams.initial.rebalance.delay.ms=0 \
    --set group.streams.session.timeout.ms=$SESSION_MS --set group.streams.min.session.timeout.ms=6000 \
    --set group.streams.heartbeat.interval.ms=$HEARTBEAT_MS --set group.streams.min.heartbeat.interval.ms=500 \
    --set group.streams.num.standby.replicas=$STANDBY --set group.streams.num.warmup.replicas=$WARMUPS \
    > "$WORK/groupcoord/server.log" 2>&1 &
  gc_pid=$!
  for _ in $(seq 1 100); do
    python3 -c "import socket; s=socket.socket(); s.settimeout(0.3); s.connect(('127.0.0.1',$port))" 2>/dev/null && break
    kill -0 "$gc_pid" 2>/dev/null || { cat "$WORK/groupcoord/server.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "groupcoord at 127.0.0.1:$port (pid $gc_pid)"
  driver groupcoord "127.0.0.1:$port" || status=1
  kill "$gc_pid"; wait "$gc_pid" 2>/dev/null || true; gc_pid=""
fi

# --- table ------------------------------------------------------------------------------------------
python3 - "$WORK" "$instances" <<'EOF'
import os, sys
work, n = sys.argv[1], sys.argv[2]
def load(label):
    p = os.path.join(work, label + ".results")
    if not os.path.exists(p):
        return None
    return dict(l.strip().split("=", 1) for l in open(p) if "=" in l)
k, g = load("kafka"), load("groupcoord")
rows = [("start", f"all {n} RUNNING, tasks placed"),
        ("start_protocol", "  same, from last start() call"), ("crash", "settle after crash (halt)"),
        ("close", "settle after graceful close"), ("add", "settle after scale-out (+1)"),
        ("static", "settle after static bounce")]
def cell(d, key):
    if d is None: return "-"
    v = d.get(key, "-")
    return v if v in ("-", "FAIL") else v + " s"
print()
print(f"{'step':<15} {'what':<32} {'Apache Kafka 4.4':>17} {'groupcoord':>12} {'ratio gc/kafka':>15}")
print("-" * 95)
for key, what in rows:
    a, b = cell(k, key), cell(g, key)
    if a == "-" and b == "-":
        continue
    try:
        r = f"{float(b[:-2]) / float(a[:-2]):.2f}"
    except Exception:
        r = "-"
    print(f"{key:<15} {what:<32} {a:>17} {b:>12} {r:>15}")
for extra in ("static_same_tasks", "produced", "records_input", "records_filtered", "records_counts"):
    a = (k or {}).get(extra, "-"); b = (g or {}).get(extra, "-")
    if a != "-" or b != "-":
        print(f"{extra:<48} {a:>17} {b:>12}")
EOF
for l in kafka groupcoord; do
  [ -f "$WORK/$l/run/describe.txt" ] && { echo; echo "== kafka-streams-groups --describe against $l"; cat "$WORK/$l/run/describe.txt"; }
done
exit $status
