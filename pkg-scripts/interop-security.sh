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
#   * a restart: credentials added over the wire and by storage format still authenticate;
#   * authorization (the same data directory restarted with Kafka's authorizer on, nothing open by
#     default): kafka-acls over SASL_SSL grants a Kafka Streams 4.4 app (tests/interop/streams'
#     StreamsApp, as User:streams) what Kafka's docs ask for; the app processes records end to
#     end; an authenticated stranger with the app's member id is refused at every step over the
#     wire (tests/interop/security/authz.py); kafka-topics --describe, kafka-configs on the
#     streams group, kafka-streams-groups --describe as the app.
# The server.properties is Kafka 4.4's shipped one (tests/fixtures/) plus listeners and security.
# ONLY_AUTHZ=1 runs the authorization part only.
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
app_pid=""
stop_app() {
  if [ -n "$app_pid" ] && kill -0 "$app_pid" 2>/dev/null; then kill -9 "$app_pid" 2>/dev/null || true; fi
  app_pid=""
}
stop_gc() {
  if [ -n "$gc_pid" ] && kill -0 "$gc_pid" 2>/dev/null; then
    kill "$gc_pid"
    for _ in $(seq 1 40); do kill -0 "$gc_pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$gc_pid" 2>/dev/null || true
  fi
  gc_pid=""
}
trap 'stop_app; stop_gc' EXIT
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
while [ "${#ports[@]}" -lt 5 ]; do
  p=$(free_port)
  [[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
done
P_PLAIN=${ports[0]}; P_SSL=${ports[1]}; P_SASL_SSL=${ports[2]}; P_SASL_PLAIN=${ports[3]}; P_HTTP=${ports[4]}

"$gc" dev certs --out "$WORK/certs" > /dev/null
# Kafka 4.4's shipped server.properties (tests/fixtures/; keys that do not apply to groupcoord are
# reported once and ignored) with the listener addresses, log.dirs and the security keys set.
grep -v -E '^(listeners|advertised\.listeners|listener\.security\.protocol\.map|log\.dirs)=' \
  tests/fixtures/kafka-4.4-server.properties > "$WORK/server.properties"
cat >> "$WORK/server.properties" <<PROPS

# --- set for this test ---
listeners=PLAINTEXT://127.0.0.1:$P_PLAIN,SSL://127.0.0.1:$P_SSL,SASL_SSL://127.0.0.1:$P_SASL_SSL,SASL_PLAINTEXT://127.0.0.1:$P_SASL_PLAIN,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:$P_PLAIN,SSL://localhost:$P_SSL,SASL_SSL://localhost:$P_SASL_SSL,SASL_PLAINTEXT://localhost:$P_SASL_PLAIN
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
log.dirs=$WORK/data
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
  --add-scram 'SCRAM-SHA-512=[name=admin,password=admin-secret]' \
  --add-scram 'SCRAM-SHA-512=[name=streams,password=streams-secret]' \
  --add-scram 'SCRAM-SHA-512=[name=mallory,password=mallory-secret]'

start_gc() { # EXTRA-SERVE-ARGS...
  RUST_LOG="info,groupcoord::server::listener=debug,groupcoord::server::connection=debug" NO_COLOR=1 \
    "$gc" serve --config "$WORK/server.properties" "$@" > "$WORK/stdout.log" 2>> "$WORK/server.log" &
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

cat > "$WORK/client.properties" <<PROPS
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";
ssl.truststore.type=PEM
ssl.truststore.location=$WORK/certs/ca.pem
PROPS
tool() { # CLASS ARGS...  (Kafka's tool as the super user)
  local cls=$1; shift
  timeout 90 java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$java_cp" "$cls" \
    --bootstrap-server "127.0.0.1:$P_SASL_SSL" --command-config "$WORK/client.properties" "$@"
}

# ONLY_AUTHZ=1: skip to the authorization part (for working on it).
if [ -z "${ONLY_AUTHZ:-}" ]; then
"$VENV/bin/python" -u tests/interop/security/clients.py main "${addrs[@]}" 2>&1 | grep -v '^%' | tee "$WORK/clients.out" || true
count_py "$WORK/clients.out"

# --- Kafka's CLI tools over SASL_SSL ------------------------------------------------------------------
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
fi
stop_gc

# --- authorization: a Kafka Streams 4.4 app authorized by ACLs, and a stranger ----------------------
# The same data directory restarted with Kafka's authorizer on and nothing open by default. The
# app runs as User:streams (SCRAM-SHA-512 over SASL_SSL, a user from `storage format`) with the
# ACLs Kafka's Streams security docs ask for, created with Kafka's kafka-acls over SASL_SSL:
# READ on its group and input topic, WRITE on its output topics, and READ/WRITE/CREATE/DELETE on
# the prefix of its internal topics (the broker creates them for a streams group: CREATE;
# repartition records are purged: DELETE). Then tests/interop/security/authz.py: the app processes
# records end to end, and User:mallory (authenticated, no ACLs) is refused at every step of the
# issue's stranger test over the wire while the app keeps running.
streams_proj="$root/tests/interop/streams"
streams_stamp="$streams_proj/target/.interop-built"
if [ ! -f "$streams_stamp" ] || [ -n "$(find "$streams_proj/pom.xml" "$streams_proj/src" -newer "$streams_stamp" -print -quit)" ]; then
  ( cd "$streams_proj" && { mvn -q -B -o package > "$WORK/mvn-streams.log" 2>&1 || mvn -q -B package >> "$WORK/mvn-streams.log" 2>&1; } ) \
    || { cat "$WORK/mvn-streams.log" >&2; exit 1; }
  touch "$streams_stamp"
fi
APP=sec-streams-app
cat >> "$WORK/server.properties" <<PROPS
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin
allow.everyone.if.no.acl.found=false
PROPS
start_gc --http "127.0.0.1:$P_HTTP"
sed -e 's/username="admin" password="admin-secret"/username="streams" password="streams-secret"/' \
  "$WORK/client.properties" > "$WORK/streams.properties"
"$VENV/bin/python" -u tests/interop/security/authz.py setup --sasl-ssl "127.0.0.1:$P_SASL_SSL" --certs "$WORK/certs"

s=0
acl_pids=()
i=0
for acl in "--operation READ --topic interop-input --group $APP" \
           "--operation WRITE --topic interop-filtered --topic interop-counts" \
           "--operation READ --operation WRITE --operation CREATE --operation DELETE --resource-pattern-type prefixed --topic $APP-"; do
  # shellcheck disable=SC2086 # one ACL's options per string
  tool org.apache.kafka.tools.AclCommand --add --allow-principal User:streams $acl > "$WORK/acls-$i.out" 2>&1 &
  acl_pids+=($!); i=$((i + 1))
done
for p in "${acl_pids[@]}"; do wait "$p" || s=1; done
out=$(tool org.apache.kafka.tools.AclCommand --list --principal User:streams 2>&1) || s=1
echo "$out" > "$WORK/acls-list.out"
for want in "name=interop-input, patternType=LITERAL" "name=$APP, patternType=LITERAL" "name=$APP-, patternType=PREFIXED" \
            "principal=User:streams, host=*, operation=CREATE, permissionType=ALLOW"; do
  [[ "$out" == *"$want"* ]] || { s=1; echo "kafka-acls --list lacks: $want"; }
done
result "kafka-acls-add-and-list-over-sasl_ssl" $s "$(grep -c 'operation=' "$WORK/acls-list.out") ACLs for User:streams"

mkfifo "$WORK/app.in"
java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$streams_proj/target/classes:$streams_proj/target/lib/*" \
  interop.StreamsApp bootstrap="127.0.0.1:$P_SASL_SSL" app="$APP" name=sec-app state.dir="$WORK/app-state" \
  cfg.security.protocol=SASL_SSL cfg.sasl.mechanism=SCRAM-SHA-512 \
  "cfg.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"streams\" password=\"streams-secret\";" \
  cfg.ssl.truststore.type=PEM "cfg.ssl.truststore.location=$WORK/certs/ca.pem" \
  < "$WORK/app.in" > "$WORK/app.out" 2> "$WORK/app.err" &
app_pid=$!
exec 7> "$WORK/app.in"
app_state() { sed -n 's/^@@STATE [0-9]* [A-Z_]* \([A-Z_]*\)$/\1/p' "$WORK/app.out" | tail -1; }
s=1
for _ in $(seq 1 240); do
  [ "$(app_state)" = RUNNING ] && grep -q '^@@TASKS .* RUNNING a=0_0,0_1,1_0,1_1 ' "$WORK/app.out" && { s=0; break; }
  kill -0 "$app_pid" 2>/dev/null || break
  sleep 0.5
done
result "streams-app-as-user-streams-running-with-its-tasks" $s "$(app_state); $(grep '^@@TASKS' "$WORK/app.out" | tail -1 | cut -d' ' -f3-)"

"$VENV/bin/python" -u tests/interop/security/authz.py main --sasl-ssl "127.0.0.1:$P_SASL_SSL" --certs "$WORK/certs" \
  --http "127.0.0.1:$P_HTTP" --app "$APP" 2>&1 | grep -v '^%' | tee "$WORK/authz.out" || true
count_py "$WORK/authz.out"

# Kafka's tools against the authorizer-on server.
out=$(tool org.apache.kafka.tools.TopicCommand --describe --topic interop-input 2>&1) && s=0 || s=1
[[ "$out" == *"Topic: interop-input"*"PartitionCount: 2"*"Partition: 1"* ]] || s=1
result "kafka-topics-describe" $s "$(echo "$out" | head -1)"
out=$(tool org.apache.kafka.tools.ConfigCommand --alter --entity-type groups --entity-name "$APP" \
        --add-config streams.num.standby.replicas=1 2>&1) && s=0 || s=1
[[ "$out" == *"Completed updating config for group $APP"* ]] || s=1
result "kafka-configs-alter-streams-group-standby-replicas" $s "$(echo "$out" | tail -1)"
out=$(tool org.apache.kafka.tools.ConfigCommand --describe --entity-type groups --entity-name "$APP" 2>&1) && s=0 || s=1
[[ "$out" == *"streams.num.standby.replicas=1"* ]] || s=1
result "kafka-configs-describe-streams-group" $s "$(echo "$out" | tr '\n' ' ' | cut -c1-200)"
# The app's own principal may describe its group (READ implies DESCRIBE) with kafka-streams-groups.
out=$(timeout 90 java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$java_cp" org.apache.kafka.tools.streams.StreamsGroupCommand \
        --bootstrap-server "127.0.0.1:$P_SASL_SSL" --command-config "$WORK/streams.properties" --describe --members --group "$APP" 2>&1) && s=0 || s=1
[[ "$out" == *"$APP"*"sec-app"* ]] || s=1
echo "$out" > "$WORK/streams-groups-describe.out"
result "kafka-streams-groups-describe-as-the-app" $s "$(echo "$out" | grep -v ' WARN ' | tail -1 | tr -s ' ' | cut -c1-160)"

# The app ran through all of it (the super user's leave included: it joins again): no error,
# RUNNING, then a clean close (leaves the group).
s=0
for _ in $(seq 1 120); do [ "$(app_state)" = RUNNING ] && break; sleep 0.5; done
grep -q '^@@ERROR' "$WORK/app.out" && s=1
[ "$(app_state)" = RUNNING ] || s=1
echo close >&7
for _ in $(seq 1 80); do grep -q '^@@CLOSED' "$WORK/app.out" && break; sleep 0.5; done
grep -q '^@@CLOSED .* true' "$WORK/app.out" || s=1
exec 7>&-
wait "$app_pid" 2>/dev/null || true
app_pid=""
result "streams-app-ran-without-errors-and-closed" $s "$(grep -c '^@@STATE' "$WORK/app.out") state changes, $(grep -c '^@@ERROR' "$WORK/app.out") errors"
stop_gc

echo "security interop: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
