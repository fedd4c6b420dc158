"""Real-client consumer group test: confluent-kafka (librdkafka) Consumers in one classic group.

Usage: python consumer_group.py HOST:PORT [ASSIGNOR]   (ASSIGNOR: range (default) or
cooperative-sticky)
Creates a 6-partition topic, starts 3 consumers in one group (JoinGroup v5 / SyncGroup v3 /
Heartbeat v3 from librdkafka), waits until the 6 partitions are split between them, produces
records with the confluent Producer and checks every record is consumed exactly once with
synchronous commits; then one consumer leaves (LeaveGroup), more records are produced and the
two left take over from the committed offsets. Finally: the committed offsets equal the
produced counts, and DescribeGroups / ListGroups show the group Stable with 2 members.
"""
import sys
import threading
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

addr = sys.argv[1]
assignor = sys.argv[2] if len(sys.argv) > 2 else "range"
suffix = uuid.uuid4().hex[:8]
TOPIC = f"cg-{suffix}"
GROUP = f"cg-group-{suffix}"
PARTITIONS = 6
FIRST, SECOND = 1200, 600
T = 60


def check(cond, msg):
    if not cond:
        print(f"FAIL: {msg}", flush=True)
        sys.exit(1)
    print(f"ok: {msg}", flush=True)


admin = AdminClient({"bootstrap.servers": addr})
admin.create_topics([NewTopic(TOPIC, num_partitions=PARTITIONS, replication_factor=1)])[TOPIC].result(timeout=T)
check(True, f"topic {TOPIC} with {PARTITIONS} partitions")


class Member(threading.Thread):
    def __init__(self, name):
        super().__init__(daemon=True)
        self.name = name
        self.seen = []  # (partition, offset)
        self.assigned = set()
        self.stop = threading.Event()
        self.error = None
        self.lock = threading.Lock()

    def on_assign(self, consumer, partitions):
        with self.lock:
            if assignor == "cooperative-sticky":
                self.assigned |= {p.partition for p in partitions}
            else:
                self.assigned = {p.partition for p in partitions}

    def on_revoke(self, consumer, partitions):
        with self.lock:
            self.assigned -= {p.partition for p in partitions}

    def run(self):
        c = Consumer({
            "bootstrap.servers": addr,
            "group.id": GROUP,
            "client.id": self.name,
            "partition.assignment.strategy": assignor,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 10000,
            "heartbeat.interval.ms": 500,
        })
        try:
            c.subscribe([TOPIC], on_assign=self.on_assign, on_revoke=self.on_revoke)
            while not self.stop.is_set():
                msg = c.poll(0.1)
                if msg is None:
                    continue
                if msg.error():
                    self.error = str(msg.error())
                    continue
                with self.lock:
                    self.seen.append((msg.partition(), msg.offset()))
                c.commit(message=msg, asynchronous=False)
        except Exception as e:  # reported by the main thread
            self.error = repr(e)
        finally:
            c.close()  # LeaveGroup


def wait(cond, what, timeout=T):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    check(False, what)


members = [Member(f"{GROUP}-m{i}") for i in range(3)]
started = time.time()
for m in members:
    m.start()


def split_between(ms):
    owned = [p for m in ms for p in sorted(m.assigned)]
    return sorted(owned) == list(range(PARTITIONS)) and all(m.assigned for m in ms)


wait(lambda: split_between(members), "3 consumers get the 6 partitions between them")
check(True, f"{assignor}: 3 consumers own {[sorted(m.assigned) for m in members]} after {time.time() - started:.2f} s")

producer = Producer({"bootstrap.servers": addr, "linger.ms": 5})


def produce(n, start):
    for i in range(start, start + n):
        producer.produce(TOPIC, key=str(i).encode(), value=f"record-{i}".encode(), partition=i % PARTITIONS)
    check(producer.flush(T) == 0, f"produced {n} records")


def consumed():
    return [x for m in members for x in m.seen]


produce(FIRST, 0)
wait(lambda: len(consumed()) >= FIRST, f"{FIRST} records consumed")
time.sleep(1)
got = consumed()
check(len(got) == FIRST and len(set(got)) == FIRST, f"{FIRST} records consumed exactly once ({[len(m.seen) for m in members]} per consumer)")

# One consumer leaves; the other two take over from the committed offsets.
leaving = members[2]
leaving.stop.set()
leaving.join(T)
rest = members[:2]
wait(lambda: split_between(rest), "2 consumers take over the 6 partitions")
check(True, f"after the leave: {[sorted(m.assigned) for m in rest]}")
produce(SECOND, FIRST)
total = FIRST + SECOND
wait(lambda: len(consumed()) >= total, f"{total} records consumed")
time.sleep(1)
got = consumed()
check(len(got) == total and len(set(got)) == total, f"{total} records consumed exactly once across the leave")
for m in members:
    check(m.error is None, f"{m.name}: no consumer error ({m.error})")

# Committed offsets = records per partition.
per_partition = {p: sum(1 for i in range(total) if i % PARTITIONS == p) for p in range(PARTITIONS)}
tps = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
from confluent_kafka import ConsumerGroupTopicPartitions  # noqa: E402

res = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(GROUP, tps)])[GROUP].result(timeout=T)
committed = {tp.partition: tp.offset for tp in res.topic_partitions}
check(committed == per_partition, f"committed offsets {committed}")

desc = admin.describe_consumer_groups([GROUP])[GROUP].result(timeout=T)
check(str(desc.state).endswith("STABLE") and len(desc.members) == 2,
      f"describe: {desc.state}, {len(desc.members)} members, assignor {desc.partition_assignor}")
listed = admin.list_consumer_groups().result(timeout=T)
check(any(g.group_id == GROUP for g in listed.valid), f"list_consumer_groups lists {GROUP}")

for m in rest:
    m.stop.set()
for m in rest:
    m.join(T)
print(f"PASS: confluent-kafka consumer group ({assignor}) in {time.time() - started:.2f} s", flush=True)
