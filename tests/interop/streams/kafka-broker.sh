#!/usr/bin/env bash
# Single-node KRaft Apache Kafka 4.4 broker on 127.0.0.1 from the Maven artifacts in target/lib.
#   kafka-broker.sh start DIR   -> formats DIR, starts the broker in the background, waits until it
#                                  accepts connections, prints the bootstrap address (127.0.0.1:PORT);
#                                  the pid is in DIR/broker.pid, the log in DIR/broker.log
#   kafka-broker.sh stop DIR    -> stops the broker started on DIR (SIGTERM, then SIGKILL after 20 s)
# Environment: KAFKA_PORT / BROKER_PORT, KAFKA_CONTROLLER_PORT / CONTROLLER_PORT (default: free ports), KAFKA_HEAP (default -Xmx512m), STREAMS_SESSION_MS, STREAMS_HEARTBEAT_MS, STREAMS_STANDBY, STREAMS_WARMUPS,
# REQUEST_LOG=1 (kafka.request.logger at DEBUG into DIR/broker.log), BROKER_EXTRA_PROPS=FILE (appended to
# server.properties: its keys win over the ones above).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:?start|stop}"; dir="${2:?DIR}"
cp="$here/target/classes:$here/target/lib/*"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

case "$cmd" in
start)
  mkdir -p "$dir"
  port=${KAFKA_PORT:-${BROKER_PORT:-$(free_port)}}; cport=${KAFKA_CONTROLLER_PORT:-${CONTROLLER_PORT:-$(free_port)}}
  while [ "$cport" = "$port" ]; do cport=$(free_port); done
  cat > "$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/logs
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
group.streams.initial.rebalance.delay.ms=0
group.streams.session.timeout.ms=${STREAMS_SESSION_MS:-10000}
group.streams.min.session.timeout.ms=6000
group.streams.heartbeat.interval.ms=${STREAMS_HEARTBEAT_MS:-1000}
group.streams.min.heartbeat.interval.ms=500
group.streams.num.standby.replicas=${STREAMS_STANDBY:-1}
group.streams.num.warmup.replicas=${STREAMS_WARMUPS:-0}
log.segment.bytes=16777216
PROPS
  if [ -n "${BROKER_EXTRA_PROPS:-}" ]; then cat "$BROKER_EXTRA_PROPS" >> "$dir/server.properties"; fi
  java -Xmx256m -cp "$cp" kafka.tools.StorageTool format -t "$(java -cp "$cp" kafka.tools.StorageTool random-uuid)" \
       -c "$dir/server.properties" --feature streams.version=1 > "$dir/format.log" 2>&1 \
    || { cat "$dir/format.log" >&2; exit 1; }
  reqlog=WARN; [ "${REQUEST_LOG:-0}" = 1 ] && reqlog=DEBUG
  nohup java ${KAFKA_HEAP:--Xmx512m -Xms256m} -XX:+UseSerialGC -Dinterop.requestlog=$reqlog \
       -Dinterop.loglevel=${BROKER_LOGLEVEL:-WARN} \
       -cp "$cp" kafka.Kafka "$dir/server.properties" > "$dir/broker.log" 2>&1 < /dev/null &
  echo $! > "$dir/broker.pid"
  for _ in $(seq 1 120); do
    if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.5); s.connect(('127.0.0.1',$port))" 2>/dev/null; then
      echo "127.0.0.1:$port" > "$dir/bootstrap"; echo "127.0.0.1:$port"; exit 0
    fi
    kill -0 "$(cat "$dir/broker.pid")" 2>/dev/null || { tail -30 "$dir/broker.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "broker did not open $port in 60 s" >&2; exit 1 ;;
stop)
  [ -f "$dir/broker.pid" ] || exit 0
  pid=$(cat "$dir/broker.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$dir/broker.pid" ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
