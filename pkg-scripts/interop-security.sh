#!/usr/bin/env bash
# Authentication with real clients (issue 16): groupcoord serving PLAINTEXT, SSL (client
# certificates required), SASL_SSL (SCRAM-SHA-512/256) and SASL_PLAINTEXT (PLAIN + SCRAM)
# listeners from a Kafka-style server.properties, a super user created before the first start
# with `groupcoord storage format --add-scram`, then:
#   * confluent-kafka (.venv, tests/interop/consumers/requirements.txt's version) over SASL_SSL
#     with SCRAM-SHA-512 and over SSL with a client certificate: produce, consume in a group,
#     commit; wrong passwords, unknown users, missing certificates and clients of the wrong
#     protocol refused (tests/interop/security/clients.py);
#   * Kafka's own CLI tools (kafka-tools 4.4.0 from Maven, as interop-consumers.sh runs them)
#     over SASL_SSL with a client.properties: kafka-configs adds a SCRAM user, kafka-topics
#     --list and kafka-consumer-groups --list;
#   * a restart: credentials added over the wire and by storage format still authenticate.
# Throwaway certificates come from `groupcoord dev certs` (rcgen): nothing is downloaded.
# Prints RESULT lines and a final "N passed, N failed"; stops everything it started.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
WORK="${WORK:-$(mktemp -d /tmp/interop-security.XXXXXX)}"
mkdir -p "$WORK"
echo "interop-security: work=$WORK ($(date -u '+%F %T UTC'))"

gc_pid=""
stop_gc() {
  if [ -n "$gc_pid" ] && kill -0 "$gc_pid" 2>/dev/null; then
    kill "$gc_pid"
    for _ in $(seq 1 40); do kill -0 "$gc_pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$gc_pid" 2>/dev/null || true
  fi
  gc_pid=""
}
trap stop_gc EXIT
trap 'exit 130' INT TERM

# --- install (idempotent) ---------------------------------------------------------------------------
VENV="$root/.venv"
if ! "$VENV/bin/python" -c 'import confluent_kafka, sys; sys.exit(0 if confluent_kafka.__version__ == "2.16.1" else 1)' 2>/dev/null; then
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'confluent-kafka==2.16.1'
fi
java_proj="$root/tests/interop/consumers/java"
stamp="$java_proj/target/.interop-built"
if [ ! -f "$stamp" ] || [ -n "$(find "$java_proj/pom.xml" "$java_proj/src" -newer "$stamp" -print -quit)" ]; then
  ( cd "$java_proj" && { mvn -q -B -o package > "$WORK/mvn.log" 2>&1 || mvn -q -B package >> "$WORK/mvn.log" 2>&1; } ) \
    || { cat "$WORK/mvn.log" >&2; exit 1; }
  touch "$stamp"
fi
java_cp="$java_proj/target/classes:$java_proj/target/lib/*"
cargo build -q --bin groupcoord
gc="$root/target/debug/groupcoord"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
ports=()
while [ "${#ports[@]}" -lt 4 ]; do
  p=$(free_port)
  [[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
done
P_PLAIN=${ports[0]}; P_SSL=${ports[1]}; P_SASL_SSL=${ports[2]}; P_SASL_PLAIN=${ports[3]}

"$gc" dev certs --out "$WORK/certs" > /dev/null
# A Kafka 4.4 KRaft server.properties as a Kafka user has it (keys that do not apply to
# groupcoord included: they are reported once and ignored), plus the security keys.
cat > "$WORK/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://127.0.0.1:$P_PLAIN,SSL://127.0.0.1:$P_SSL,SASL_SSL://127.0.0.1:$P_SASL_SSL,SASL_PLAINTEXT://127.0.0.1:$P_SASL_PLAIN,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:$P_PLAIN,SSL://localhost:$P_SSL,SASL_SSL://localhost:$P_SASL_SSL,SASL_PLAINTEXT://localhost:$P_SASL_PLAIN
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
log.dirs=$WORK/data
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
log.retention.hours=168
group.initial.rebalance.delay.ms=0
ssl.keystore.type=PEM
ssl.keystore.location=$WORK/certs/server.pem
ssl.truststore.type=PEM
ssl.truststore.location=$WORK/certs/ca.pem
listener.name.ssl.ssl.client.auth=required
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";
PROPS
"$gc" storage format --config "$WORK/server.properties" \
  --add-scram 'SCRAM-SHA-512=[name=admin,password=admin-secret]'

start_gc() {
  RUST_LOG="info,groupcoord::server::listener=debug,groupcoord::server::connection=debug" NO_COLOR=1 \
    "$gc" serve --config "$WORK/server.properties" > "$WORK/stdout.log" 2>> "$WORK/server.log" &
  gc_pid=$!
  for _ in $(seq 1 100); do
    grep -q 'listening on' "$WORK/stdout.log" 2>/dev/null && return 0
    kill -0 "$gc_pid" 2>/dev/null || { cat "$WORK/server.log" >&2; return 1; }
    sleep 0.1
  done
  return 1
}
start_gc
echo "groupcoord: $(grep -c '^groupcoord listener' "$WORK/stdout.log") listeners (log $WORK/server.log)"

passed=0; failed=0
result() { # NAME STATUS DETAIL
  if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "RESULT PASS $1${3:+: $3}";
  else failed=$((failed + 1)); echo "RESULT FAIL $1${3:+: $3}"; fi
}
count_py() { # OUTPUT-FILE
  local p f
  p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$1" | tail -1)
  f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$1" | tail -1)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-1}))
}
addrs=(--certs "$WORK/certs" --plaintext "127.0.0.1:$P_PLAIN" --ssl "127.0.0.1:$P_SSL"
       --sasl-ssl "127.0.0.1:$P_SASL_SSL" --sasl-plaintext "127.0.0.1:$P_SASL_PLAIN" --server-log "$WORK/server.log")

# The start-up warning names the Kafka keys that do not apply, once.
n=$(grep -c 'Kafka keys that do not apply' "$WORK/server.log" || true)
grep -q 'ignored): .*process.roles' "$WORK/server.log"; result "server.properties-ignored-keys-one-warning" $(( n == 1 ? 0 : 1 )) "$n warning line(s)"

"$VENV/bin/python" -u tests/interop/security/clients.py main "${addrs[@]}" 2>&1 | grep -v '^%' | tee "$WORK/clients.out" || true
count_py "$WORK/clients.out"

# --- Kafka's CLI tools over SASL_SSL ------------------------------------------------------------------
cat > "$WORK/client.properties" <<PROPS
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";
ssl.truststore.type=PEM
ssl.truststore.location=$WORK/certs/ca.pem
PROPS
tool() { # CLASS ARGS...
  local cls=$1; shift
  timeout 90 java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$java_cp" "$cls" \
    --bootstrap-server "127.0.0.1:$P_SASL_SSL" --command-config "$WORK/client.properties" "$@"
}
out=$(tool org.apache.kafka.tools.ConfigCommand --alter --entity-type users --entity-name carol \
        --add-config 'SCRAM-SHA-512=[iterations=8192,password=carol-secret]' 2>&1) && s=0 || s=1
[[ "$out" == *"Completed updating config for user carol"* ]] || s=1
result "kafka-configs-alter-scram-user-over-sasl_ssl" $s "$(echo "$out" | tail -1)"
out=$(tool org.apache.kafka.tools.TopicCommand --list 2>&1) && s=0 || s=1
[[ "$out" == *sec-scram-* ]] || s=1
result "kafka-topics-list-over-sasl_ssl" $s "$(echo "$out" | tr '\n' ' ' | cut -c1-200)"
out=$(tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --list 2>&1) && s=0 || s=1
[[ "$out" == *sec-scram-g-* ]] || s=1
result "kafka-consumer-groups-list-over-sasl_ssl" $s "$(echo "$out" | tr '\n' ' ' | cut -c1-200)"
# carol (added by kafka-configs) authenticates with kafka-topics.
sed -e 's/username="admin" password="admin-secret"/username="carol" password="carol-secret"/' \
  "$WORK/client.properties" > "$WORK/carol.properties"
out=$(timeout 90 java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$java_cp" org.apache.kafka.tools.TopicCommand \
        --bootstrap-server "127.0.0.1:$P_SASL_SSL" --command-config "$WORK/carol.properties" --list 2>&1) && s=0 || s=1
[[ "$out" == *sec-scram-* ]] || s=1
result "kafka-topics-as-the-user-kafka-configs-added" $s

# --- restart: the credentials are durable ---------------------------------------------------------------
kill -TERM "$gc_pid"; wait "$gc_pid" 2>/dev/null && s=0 || s=$?
gc_pid=""
result "graceful-stop" $s
start_gc
"$VENV/bin/python" -u tests/interop/security/clients.py after-restart "${addrs[@]}" 2>&1 | grep -v '^%' | tee "$WORK/restart.out" || true
count_py "$WORK/restart.out"
stop_gc

echo "security interop: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
