"""One member of a classic consumer group, for the Python clients of the interop harness.

    python worker.py CLIENT BOOTSTRAP TOPIC GROUP CLIENT_ID ASSIGNOR SESSION_MS HEARTBEAT_MS [INSTANCE_ID]

CLIENT: confluent (confluent-kafka Consumer), kafka-python (KafkaConsumer), aiokafka (AIOKafkaConsumer).
ASSIGNOR: range or cooperative-sticky (cooperative-sticky: confluent only), consumer (confluent only:
group.protocol=consumer, the KIP-848 protocol, the broker assigns), or manual: no group
membership at all, assign() of partitions 0..INTEROP_PARTITIONS-1 (default 6), positions from the
committed offsets (OffsetFetch) else earliest, commits as a simple group (OffsetCommit, generation -1):
the data plane of a client without JoinGroup.
Speaks the harness's line protocol on stdout (flushed per line/batch):
    READY                    subscribed, polling
    OWNED p,p,... gen=G      after every rebalance callback: the full set it owns now (G = -1 when
                             the client does not expose the generation)
    REC p offset key value   each record, before the batch's synchronous commit
    ERR text                 an error the client reported
SIGTERM: the consumer is closed (a dynamic member leaves the group, a static member does not).
Manual commits: every polled batch is committed synchronously before the next poll, so a graceful
rebalance never redelivers; only the records of a SIGKILLed member after its last commit can be.
"""
import asyncio
import os
import signal
import sys

CLIENT, BOOT, TOPIC, GROUP, CLIENT_ID, ASSIGNOR = sys.argv[1:7]
SESSION_MS, HEARTBEAT_MS = int(sys.argv[7]), int(sys.argv[8])
INSTANCE_ID = sys.argv[9] if len(sys.argv) > 9 else None

stopping = False
MANUAL = ASSIGNOR == "manual"
MANUAL_PARTITIONS = range(int(os.environ.get("INTEROP_PARTITIONS", "6")))


def on_term(*_):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)
owned = set()
if os.environ.get("INTEROP_PY_DEBUG"):  # kafka-python / aiokafka logging at DEBUG on stderr
    import logging
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                        format="%(asctime)s.%(msecs)03d %(name)s %(levelname)s %(message)s", datefmt="%H:%M:%S")


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def report(gen):
    out("OWNED %s gen=%d" % (",".join(str(p) for p in sorted(owned)), gen))


def run_confluent():
    from confluent_kafka import Consumer, KafkaError

    conf = {
        "bootstrap.servers": BOOT,
        "group.id": GROUP,
        "client.id": CLIENT_ID,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "partition.assignment.strategy": "range" if MANUAL else ASSIGNOR,
        "session.timeout.ms": SESSION_MS,
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "error_cb": lambda err: out("ERR %s" % err),
    }
    if ASSIGNOR == "consumer":
        # KIP-848: the broker assigns (its default assignor) and owns the session and heartbeat
        # settings; librdkafka refuses the classic-only keys with this protocol.
        conf["group.protocol"] = "consumer"
        for k in ("partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms"):
            del conf[k]
    if INSTANCE_ID:
        conf["group.instance.id"] = INSTANCE_ID
    if os.environ.get("INTEROP_RDKAFKA_DEBUG"):  # e.g. cgrp,fetch: librdkafka's log on stderr
        conf["debug"] = os.environ["INTEROP_RDKAFKA_DEBUG"]
    c = Consumer(conf)

    # The library calls assign()/incremental_assign() itself after these return.
    def on_assign(_c, parts):
        owned.update(tp.partition for tp in parts)
        report(-1)

    def on_revoke(_c, parts):
        owned.difference_update(tp.partition for tp in parts)
        report(-1)

    if MANUAL:
        from confluent_kafka import TopicPartition
        c.assign([TopicPartition(TOPIC, p) for p in MANUAL_PARTITIONS])
        owned.update(MANUAL_PARTITIONS)
        report(-1)
    else:
        c.subscribe([TOPIC], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    out("READY")
    while not stopping:
        msgs = c.consume(num_messages=500, timeout=0.2)
        good = []
        for m in msgs:
            if m.error():
                if m.error().code() != KafkaError._PARTITION_EOF:
                    out("ERR %s" % m.error())
                continue
            good.append(m)
        if good:
            sys.stdout.write("".join("REC %d %d %s %s\n" % (m.partition(), m.offset(), m.key().decode(), m.value().decode())
                                     for m in good))
            sys.stdout.flush()
            try:
                c.commit(asynchronous=False)
            except Exception as e:  # noqa: BLE001 - reported, the loop goes on
                out("ERR commit %s" % e)
    c.close()


def run_kafka_python():
    from kafka import KafkaConsumer, ConsumerRebalanceListener
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    c = KafkaConsumer(
        bootstrap_servers=BOOT, group_id=GROUP, client_id=CLIENT_ID, enable_auto_commit=False,
        auto_offset_reset="earliest", session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
        group_instance_id=INSTANCE_ID, partition_assignment_strategy=[RangePartitionAssignor],
    )

    def gen():
        try:
            return c._coordinator._generation.generation_id
        except AttributeError:
            return -1

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            owned.difference_update(tp.partition for tp in revoked)
            report(gen())

        def on_partitions_assigned(self, assigned):
            owned.update(tp.partition for tp in assigned)
            report(gen())

    if MANUAL:
        from kafka import TopicPartition
        c.assign([TopicPartition(TOPIC, p) for p in MANUAL_PARTITIONS])
        owned.update(MANUAL_PARTITIONS)
        report(-1)
    else:
        # kafka-python 3.0.12: a leader that joins before it has the topic's metadata assigns
        # nothing, rejoins at once, and now and then never handles the answers of that rejoin (its
        # SyncGroup answer is received and logged, the assignment callback never runs; seen on a
        # loaded machine). Knowing the partitions before joining avoids that first empty round.
        import time
        deadline = time.time() + 30
        while not c.partitions_for_topic(TOPIC) and time.time() < deadline:
            time.sleep(0.1)
        c.subscribe([TOPIC], listener=Listener())
    out("READY")
    while not stopping:
        try:
            batch = c.poll(timeout_ms=200)
        except Exception as e:  # noqa: BLE001
            out("ERR poll %s: %s" % (type(e).__name__, e))
            import time
            time.sleep(0.2)
            continue
        lines = ["REC %d %d %s %s\n" % (r.partition, r.offset, r.key.decode(), r.value.decode())
                 for recs in batch.values() for r in recs]
        if lines:
            sys.stdout.write("".join(lines))
            sys.stdout.flush()
            try:
                c.commit()
            except Exception as e:  # noqa: BLE001
                out("ERR commit %s: %s" % (type(e).__name__, e))
    c.close()


async def run_aiokafka():
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor

    c = AIOKafkaConsumer(
        bootstrap_servers=BOOT, group_id=GROUP, client_id=CLIENT_ID, enable_auto_commit=False,
        auto_offset_reset="earliest", session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
        group_instance_id=INSTANCE_ID, partition_assignment_strategy=(RangePartitionAssignor,),
    )

    def gen():
        co = getattr(c, "_coordinator", None)
        return getattr(co, "generation", -1) if co is not None else -1

    class Listener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked):
            owned.difference_update(tp.partition for tp in revoked)
            report(gen())

        async def on_partitions_assigned(self, assigned):
            owned.update(tp.partition for tp in assigned)
            report(gen())

    await c.start()
    if MANUAL:
        from aiokafka import TopicPartition
        c.assign([TopicPartition(TOPIC, p) for p in MANUAL_PARTITIONS])
        owned.update(MANUAL_PARTITIONS)
        report(-1)
    else:
        c.subscribe([TOPIC], listener=Listener())
    out("READY")
    try:
        while not stopping:
            try:
                batch = await c.getmany(timeout_ms=200)
            except Exception as e:  # noqa: BLE001
                out("ERR getmany %s: %s" % (type(e).__name__, e))
                await asyncio.sleep(0.2)
                continue
            lines = ["REC %d %d %s %s\n" % (r.partition, r.offset, r.key.decode(), r.value.decode())
                     for recs in batch.values() for r in recs]
            if lines:
                sys.stdout.write("".join(lines))
                sys.stdout.flush()
                try:
                    await c.commit()
                except Exception as e:  # noqa: BLE001
                    out("ERR commit %s: %s" % (type(e).__name__, e))
    finally:
        await c.stop()


if CLIENT == "confluent":
    run_confluent()
elif CLIENT == "kafka-python":
    run_kafka_python()
elif CLIENT == "aiokafka":
    asyncio.run(run_aiokafka())
else:
    sys.exit("unknown client " + CLIENT)
