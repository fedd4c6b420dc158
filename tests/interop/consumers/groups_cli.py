"""Kafka's group tools on the three group types, Apache Kafka 4.4 and groupcoord side by side (issue 14).

Run by pkg-scripts/interop-groups-cli.sh against one running broker: creates a topic with 3
partitions and 30 records, then
  * a KIP-848 consumer group `cli-consumer` (confluent-kafka, group.protocol=consumer, one member),
  * a classic group `cli-classic` (confluent-kafka, group.protocol=classic, one member),
  * a streams group `cli-streams` (one member joined with a StreamsGroupHeartbeat sent here),
both consumers having consumed and committed everything, and runs Kafka 4.4's tools:
  kafka-consumer-groups --describe --group cli-consumer [--offsets | --members [--verbose] | --state [--verbose]]
  kafka-groups --list
It writes their output, normalized (member ids, ports and the node id replaced; runs of spaces
collapsed), to OUT; the script compares it with Apache Kafka's.

  groups_cli.py --bootstrap H:P --java-cp CP --out FILE
"""

import argparse
import os
import re
import subprocess
import sys
import threading
import time
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "security"))
from authz import Conn, carray, cstring, i8, i32, uvarint  # noqa: E402

TOPIC, PARTITIONS, RECORDS = "cli-t", 3, 30


class Member(threading.Thread):
    """A consumer that consumes every record, commits, and keeps polling (heartbeating)."""

    def __init__(self, boot, group, protocol, client_id):
        super().__init__(daemon=True)
        conf = {"bootstrap.servers": boot, "group.id": group, "client.id": client_id,
                "group.protocol": protocol, "enable.auto.commit": False,
                "auto.offset.reset": "earliest"}
        self.c = Consumer(conf)
        self.seen, self.committed, self.stop = 0, False, False

    def run(self):
        self.c.subscribe([TOPIC])
        while not self.stop:
            m = self.c.poll(0.2)
            if m is not None and m.error() is None:
                self.seen += 1
            if self.seen >= RECORDS and not self.committed:
                self.c.commit(asynchronous=False)
                self.committed = True
        self.c.close()


def streams_join(boot, group):
    """One streams group member (subtopology 0 reading the topic): its error code."""
    subtopology = (cstring("0") + carray([cstring(TOPIC)]) + carray([]) + carray([]) + carray([])
                   + carray([]) + carray([]) + uvarint(0))
    topology = i8(1) + i32(0) + carray([subtopology]) + uvarint(0)
    body = (cstring(group) + cstring(str(uuid.uuid4())) + i32(0) + i32(0) + cstring(None)
            + cstring(None) + i32(30000) + topology + carray([]) * 3 + cstring(str(uuid.uuid4()))
            + i8(-1) + carray([]) * 3 + i8(0) + uvarint(0))
    r = Conn(boot).call(88, 0, body, True)
    r.i32()
    return r.i16()


def normalize(text):
    out = []
    for line in text.splitlines():
        if re.match(r"^\[[0-9:.]+\] (WARN|INFO)", line) or not line.strip():
            continue
        # Member ids: 22-character base64 uuids, URL-safe (Kafka, Java) or standard with + and /
        # (librdkafka); a whole whitespace-separated token, since one may start with - or _.
        line = re.sub(r"(?<!\S)[A-Za-z0-9_+/-]{22}(?!\S)", "MEMBER-ID", line)
        line = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "MEMBER-ID", line)
        line = re.sub(r"(localhost|127\.0\.0\.1):\d+\s+\(\d+\)", "COORDINATOR", line)
        out.append(" ".join(line.split()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--java-cp", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    boot = args.bootstrap

    a = AdminClient({"bootstrap.servers": boot})
    a.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(30)
    p = Producer({"bootstrap.servers": boot})
    for i in range(RECORDS):
        p.produce(TOPIC, key=str(i), value=str(i), partition=i % PARTITIONS)
    assert p.flush(30) == 0

    members = [Member(boot, "cli-consumer", "consumer", "cli-consumer-0"),
               Member(boot, "cli-classic", "classic", "cli-classic-0")]
    for m in members:
        m.start()
    deadline = time.time() + 60
    while time.time() < deadline and not all(m.committed for m in members):
        time.sleep(0.2)
    assert all(m.committed for m in members), [(m.seen, m.committed) for m in members]
    # Retried while the coordinator is loading (Kafka: COORDINATOR_LOAD_IN_PROGRESS /
    # NOT_COORDINATOR right after the offsets topic is created).
    deadline = time.time() + 30
    while (code := streams_join(boot, "cli-streams")) in (14, 15, 16) and time.time() < deadline:
        time.sleep(0.5)
    assert code == 0, f"streams join: error {code}"

    def tool(cls, *argv):
        cmd = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", args.java_cp, cls,
               "--bootstrap-server", boot] + list(argv)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
        out = normalize(r.stdout + r.stderr)
        if "--list" in argv:
            out = out[:1] + sorted(out[1:])  # Kafka lists groups in hash map order
        return [f"$ {cls.rsplit('.', 1)[1]} {' '.join(argv)} (rc {r.returncode})"] + out

    cgc = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
    lines = []
    for argv in (["--describe", "--group", "cli-consumer"],
                 ["--describe", "--group", "cli-consumer", "--offsets"],
                 ["--describe", "--group", "cli-consumer", "--members"],
                 ["--describe", "--group", "cli-consumer", "--members", "--verbose"],
                 ["--describe", "--group", "cli-consumer", "--state"],
                 ["--describe", "--group", "cli-consumer", "--state", "--verbose"],
                 ["--list", "--type"]):
        lines += tool(cgc, *argv)
    lines += tool("org.apache.kafka.tools.GroupsCommand", "--list")
    for m in members:
        m.stop = True
    for m in members:
        m.join(10)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
