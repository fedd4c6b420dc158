#!/usr/bin/env bash
# Kafka 4.4's group tools (kafka-consumer-groups --describe/--members/--state/--offsets on a KIP-848
# consumer group, kafka-groups --list with a classic, a consumer and a streams group) against
# groupcoord, compared line by line with what they print against Apache Kafka 4.4 (issue 14).
#
#   pkg-scripts/interop-groups-cli.sh [--target groupcoord|kafka|both]
#
#   groupcoord (default, CI): compare with the recorded Apache Kafka output
#              tests/interop/consumers/results/groups-cli-kafka.txt
#   kafka:     run against a real Apache Kafka 4.4 broker and write that file again
#   both:      both, compared with each other
# Output normalized by tests/interop/consumers/groups_cli.py (member ids, ports, node id). Every
# process started is stopped on exit. Work files stay in $WORK (printed).
set -euo pipefail
target=groupcoord
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$target" in kafka|groupcoord|both) ;; *) echo "--target kafka|groupcoord|both" >&2; exit 2 ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
WORK="${WORK:-$(mktemp -d /tmp/interop-groups-cli.XXXXXX)}"
mkdir -p "$WORK"
echo "interop-groups-cli: target=$target work=$WORK ($(date -u '+%F %T UTC'))"
recorded="$root/tests/interop/consumers/results/groups-cli-kafka.txt"
proj="$root/tests/interop/streams"

gc_pid=""
kafka_dir=""
cleanup() {
  set +e
  if [ -n "$gc_pid" ] && kill -0 "$gc_pid" 2>/dev/null; then kill "$gc_pid"; wait "$gc_pid" 2>/dev/null; fi
  if [ -n "$kafka_dir" ]; then "$proj/kafka-broker.sh" stop "$kafka_dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

VENV="$root/.venv"
if ! "$VENV/bin/python" -c 'import confluent_kafka, sys; sys.exit(0 if confluent_kafka.__version__ == "2.16.1" else 1)' 2>/dev/null; then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'confluent-kafka==2.16.1'
fi
stamp="$proj/target/.interop-built"
if [ ! -f "$stamp" ] || [ -n "$(find "$proj/pom.xml" "$proj/src" -newer "$stamp" -print -quit)" ]; then
  ( cd "$proj" && { mvn -q -B -o package > "$WORK/mvn.log" 2>&1 || mvn -q -B package >> "$WORK/mvn.log" 2>&1; } ) \
    || { cat "$WORK/mvn.log" >&2; exit 1; }
  touch "$stamp"
fi
java_cp="$proj/target/classes:$proj/target/lib/*"
run() { # LABEL BOOTSTRAP
  "$VENV/bin/python" -u tests/interop/consumers/groups_cli.py --bootstrap "$2" --java-cp "$java_cp" \
    --out "$WORK/$1.txt" > "$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; return 1; }
}

if [ "$target" != groupcoord ]; then
  kafka_dir="$WORK/kafka"
  boot=$("$proj/kafka-broker.sh" start "$kafka_dir")
  run kafka "$boot"
  "$proj/kafka-broker.sh" stop "$kafka_dir"; kafka_dir=""
  if [ "$target" = kafka ]; then cp "$WORK/kafka.txt" "$recorded"; echo "recorded $recorded"; cat "$recorded"; exit 0; fi
  recorded="$WORK/kafka.txt"
fi

cargo build -q --bin groupcoord
port=${GC_PORT:-$(free_port)}
"$root/target/debug/groupcoord" serve --listen "127.0.0.1:$port" --data-dir "$WORK/gc-data" \
  --set group.initial.rebalance.delay.ms=0 --set group.streams.initial.rebalance.delay.ms=0 \
  > "$WORK/groupcoord.log" 2>&1 &
gc_pid=$!
for _ in $(seq 1 100); do
  python3 -c "import socket; s=socket.socket(); s.settimeout(0.3); s.connect(('127.0.0.1',$port))" 2>/dev/null && break
  kill -0 "$gc_pid" 2>/dev/null || { cat "$WORK/groupcoord.log" >&2; exit 1; }
  sleep 0.1
done
status=0
run groupcoord "127.0.0.1:$port" || status=1

if diff -u "$recorded" "$WORK/groupcoord.txt" > "$WORK/diff.txt"; then
  n=$(grep -c '^\$' "$recorded")
  echo "RESULT PASS groups-cli-same-output-as-kafka: $n commands, $(wc -l < "$recorded") lines"
else
  status=1
  echo "RESULT FAIL groups-cli-same-output-as-kafka: (- Apache Kafka 4.4, + groupcoord)"
  cat "$WORK/diff.txt"
fi
exit $status
