"""Real-client smoke test: confluent-kafka's AdminClient (librdkafka) against `groupcoord serve`.

Usage: python smoke.py HOST:PORT   (the server runs with --demo, so a live streams group exists)
Checks: create topics (incl. duplicate -> TOPIC_ALREADY_EXISTS), list topics (Metadata), list
groups (the demo streams group is listed), commit/fetch offsets of a simple group, delete of a
non-empty streams group refused, delete of an empty group accepted.
"""
import sys
import time
import warnings

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

addr = sys.argv[1]
admin = AdminClient({"bootstrap.servers": addr, "socket.timeout.ms": 10000})
T = 15


def check(cond, msg):
    if not cond:
        print(f"FAIL: {msg}")
        sys.exit(1)
    print(f"ok: {msg}")


# CreateTopics (v4 from librdkafka) -> Metadata.
fs = admin.create_topics([NewTopic("smoke-a", num_partitions=3, replication_factor=1),
                          NewTopic("smoke-b", num_partitions=1, replication_factor=1)],
                         operation_timeout=5)
for name, f in fs.items():
    f.result(timeout=T)
check(True, "create_topics smoke-a, smoke-b")
try:
    admin.create_topics([NewTopic("smoke-a", 3, 1)])["smoke-a"].result(timeout=T)
    check(False, "duplicate create must fail")
except KafkaException as e:
    check(e.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS, f"duplicate create -> TOPIC_ALREADY_EXISTS ({e.args[0].name()})")
md = admin.list_topics(timeout=T)
check("smoke-a" in md.topics and len(md.topics["smoke-a"].partitions) == 3, "list_topics shows smoke-a with 3 partitions")
check(len(md.brokers) == 1, "single broker in metadata")

# ListGroups: the demo's streams group. librdkafka's list_consumer_groups() keeps only groups of
# protocol type "consumer" or "" (a streams group has "streams"), so use the generic list_groups().
deadline = time.time() + T
groups = []
while time.time() < deadline:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        groups = [g.id for g in admin.list_groups(timeout=T)]
    if "demo-app" in groups:
        break
    time.sleep(0.5)
check("demo-app" in groups, f"list_groups lists the streams group demo-app ({groups})")
# DescribeGroups (v5 from librdkafka) of a non-classic group: Kafka answers a Dead group.
d = admin.describe_consumer_groups(["demo-app"])["demo-app"]
try:
    desc = d.result(timeout=T)
    check(str(desc.state).endswith("DEAD"), f"describe_consumer_groups(demo-app) -> {desc.state} (not a classic group)")
except KafkaException as e:
    check(e.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND, f"describe_consumer_groups(demo-app) -> {e.args[0].name()}")

# OffsetCommit / OffsetFetch of a simple (member-less) group.
tp = TopicPartition("smoke-a", 1, 42)
admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions("smoke-offsets", [tp])])["smoke-offsets"].result(timeout=T)
got = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("smoke-offsets", [TopicPartition("smoke-a", 1)])])["smoke-offsets"].result(timeout=T)
check(got.topic_partitions[0].offset == 42, f"committed offset read back ({got.topic_partitions[0].offset})")

# DeleteGroups: non-empty streams group refused, empty group deleted.
try:
    admin.delete_consumer_groups(["demo-app"])["demo-app"].result(timeout=T)
    check(False, "deleting a non-empty streams group must fail")
except KafkaException as e:
    check(e.args[0].code() == KafkaError.NON_EMPTY_GROUP, f"delete demo-app -> NON_EMPTY_GROUP ({e.args[0].name()})")
admin.delete_consumer_groups(["smoke-offsets"])["smoke-offsets"].result(timeout=T)
check(True, "delete empty group smoke-offsets")
got = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("smoke-offsets", [TopicPartition("smoke-a", 1)])])["smoke-offsets"].result(timeout=T)
check(got.topic_partitions[0].offset < 0, f"offsets of the deleted group are gone ({got.topic_partitions[0].offset})")
try:
    admin.delete_consumer_groups(["never-existed"])["never-existed"].result(timeout=T)
    check(False, "deleting an unknown group must fail")
except KafkaException as e:
    check(e.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND, f"delete unknown group -> {e.args[0].name()}")
print("python smoke: all checks passed")
