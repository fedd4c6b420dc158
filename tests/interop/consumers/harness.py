"""Classic consumer groups with real clients, against Apache Kafka 4.4 and/or groupcoord (issue 12).

Run through pkg-scripts/interop-consumers.sh (it installs the clients and starts the targets); see
tests/interop/consumers/README.md. Direct use (from the project's .venv):

    python harness.py --bootstrap kafka=HOST:PORT [--bootstrap groupcoord=HOST:PORT]
                      [--clients LIST] [--records N] [--timings] [--work DIR] [--java-cp CP]

Every member is its own OS process; it reports on stdout what it owns and every record it got (see
worker.py). Every wait is bounded; a step that times out reports what was last seen.
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

HERE = os.path.dirname(os.path.abspath(__file__))
PARTITIONS = 6
SESSION_MS = 6000
# The bouncing static member's session timeout, Kafka's default: its replacement must rejoin
# within it, and a JVM restart on a loaded 2-core machine alone took up to 11 s.
STATIC_SESSION_MS = 45000
# The classic members of a rolling upgrade: no crash step waits on their session, and a JVM that
# stalls (a commit retried during a rebalance, a loaded 2-core machine) must not be fenced.
UPGRADE_SESSION_MS = 20000
HEARTBEAT_MS = 1000
ALL_CLIENTS = ["confluent-range", "confluent-coop", "kafka-python", "aiokafka", "kcat", "java", "console",
               "groups-tool"]
# The consumer rebalance protocol (KIP-848, ConsumerGroupHeartbeat): the same test with
# group.protocol=consumer, and a rolling upgrade of a classic group to it (online migration).
# pkg-scripts/interop-consumers.sh lists them by default; this harness alone does not.
CONSUMER_CLIENTS = ["confluent-consumer", "java-consumer", "confluent-upgrade", "java-upgrade"]

args = None
results = []  # (target, client, step, status, detail)
_print_lock = threading.Lock()
_children = []  # every process started, stopped by on_term whichever lane started it
_children_lock = threading.Lock()


def start_child(argv, **kw):
    p = subprocess.Popen(argv, **kw)
    with _children_lock:
        _children.append(p)
    return p


def on_term(*_):
    """SIGTERM (the script's trap): stop every process this harness started, then exit. Lanes are
    threads that would not unwind, so their `finally` blocks cannot be relied on here."""
    with _children_lock:
        live = [p for p in _children if p.poll() is None]
    for p in live:
        p.terminate()
    deadline = time.time() + 12
    for p in live:
        try:
            p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
    sys.stdout.flush()
    os._exit(143)


def log(msg):
    with _print_lock:
        print(msg, flush=True)


def result(target, client, step, status, detail=""):
    results.append((target, client, step, status, detail))
    log(f"RESULT [{target}] {client:<16} {step:<13} {status:<4} {detail}")


# --- members ------------------------------------------------------------------------------------

KCAT_GROUP = re.compile(r"rebalanced \(memberid [^)]*\): (assigned|revoked): (.*)$")
KCAT_TP = re.compile(r"\[(\d+)\]")
CONSOLE_REC = re.compile(r"^Partition:(\d+)\tOffset:(\d+)\t(\S+)\t(\S+)$")
UNSUPPORTED = re.compile(r"not supported by broker|does not support|IncompatibleBrokerVersion|"
                         r"cannot be used if the API version is unknown")
JAVA_GEN = re.compile(r"Successfully synced group in generation Generation\{generationId=(-?\d+)")
JAVA_ASSIGNED = re.compile(r"Notifying assignor about the new Assignment\(partitions=\[(.*?)\]")
JAVA_REVOKE = re.compile(r"(?:Revoke|Lost) previously assigned partitions (.*)$")


class Member:
    """One consumer process and what it reported."""

    def __init__(self, run, label, argv, kind, instance_id=None):
        self.run, self.label, self.argv, self.kind, self.instance_id = run, label, argv, kind, instance_id
        self.owned = set()
        self.events = []  # (time, frozenset owned, generation)
        self.gen = -1
        self.errors = []
        self.commit_failures = []  # times of the commits the client reported as failed
        self.ready = False
        self.stderr_tail = []
        self.stderr_errors = []
        self.proc = None
        self.threads = []

    def start(self):
        err_path = os.path.join(self.run.dir, self.label + ".stderr")
        self.out_log = open(os.path.join(self.run.dir, self.label + ".stdout"), "w")
        self.proc = start_child(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     bufsize=1, stdin=subprocess.DEVNULL)
        self.err_log = open(err_path, "w")
        for fn, stream in ((self._read_out, self.proc.stdout), (self._read_err, self.proc.stderr)):
            t = threading.Thread(target=fn, args=(stream,), daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _set_owned(self, owned, gen=None):
        if gen is not None:
            self.gen = gen
        self.owned = set(owned)
        self.events.append((time.time(), frozenset(self.owned), self.gen))

    def _read_out(self, stream):
        for line in stream:
            now = time.time()
            # Membership lines get a wall-clock time in the log (for reading a slow step later).
            self.out_log.write(line if line.startswith(("REC ", "Partition:")) else
                               time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d} {line}")
            line = line.rstrip("\n")
            if self.kind == "console":
                m = CONSOLE_REC.match(line)
                if m:
                    self.run.deliver(self, int(m.group(1)), int(m.group(2)), m.group(3), now)
                continue
            parts = line.split(" ")
            if parts[0] == "REC" and len(parts) >= 4:
                self.run.deliver(self, int(parts[1]), int(parts[2]), parts[3], now)
            elif parts[0] == "OWNED":
                owned = [int(p) for p in parts[1].split(",") if p] if len(parts) > 2 else []
                gen = int(parts[-1].split("=")[1]) if parts[-1].startswith("gen=") else -1
                self._set_owned(owned, gen)
            elif parts[0] == "READY":
                self.ready = True
            elif parts[0] == "ERR":
                self.errors.append(line[4:])
                if line.startswith("ERR commit"):
                    self.commit_failures.append(now)
        self.out_log.flush()

    def _read_err(self, stream):
        for line in stream:
            self.err_log.write(line)
            line = line.rstrip("\n")
            if line.strip():
                self.stderr_tail = (self.stderr_tail + [line])[-5:]
                if re.search(r"error|fail|not support", line, re.I):
                    self.stderr_errors = (self.stderr_errors + [line])[-5:]
            if self.kind == "kcat":
                m = KCAT_GROUP.search(line)
                if m:
                    ps = {int(x) for x in KCAT_TP.findall(m.group(2))}
                    self._set_owned(self.owned | ps if m.group(1) == "assigned" else self.owned - ps)
                elif "Waiting for group rebalance" in line:
                    self.ready = True
                elif line.startswith("%") and ("ERROR" in line or "failed" in line.lower()):
                    self.errors.append(line)
            elif self.kind == "console":
                m = JAVA_GEN.search(line)
                if m:
                    self.gen = int(m.group(1))
                m = JAVA_ASSIGNED.search(line)
                if m:
                    self._set_owned({int(x.rsplit("-", 1)[1]) for x in m.group(1).split(", ") if x})
                m = JAVA_REVOKE.search(line)
                if m:
                    self._set_owned(self.owned - {int(x.rsplit("-", 1)[1]) for x in m.group(1).split(", ") if "-" in x})
                if "Subscribed to topic" in line or "Successfully joined group" in line:
                    self.ready = True
        self.err_log.flush()

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def wait_exit(self, timeout):
        try:
            self.proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def stop(self):
        if self.proc is None:
            return
        if self.alive():
            self.proc.terminate()
            if not self.wait_exit(12):
                self.proc.kill()
                self.proc.wait(5)
        for t in self.threads:
            t.join(2)

    def hopeless(self):
        """Exited, or told that the server lacks the group APIs: no point waiting out the bound."""
        return not self.alive() or any(UNSUPPORTED.search(x) for x in self.errors + self.stderr_errors)

    def last_words(self):
        """The most telling thing the process said, for a failure line."""
        if self.errors:
            return self.errors[-1][:300]
        telling = [x for x in self.stderr_errors if re.search(r"Exception|not support", x)]
        if telling or self.stderr_errors:
            return (telling or self.stderr_errors)[-1][:300]
        if self.stderr_tail:
            return self.stderr_tail[-1][:300]
        return "(nothing on stderr)"


def member_argv(client, boot, topic, group, label, instance_id, assignor=None, session_ms=SESSION_MS):
    py = sys.executable
    worker = os.path.join(HERE, "worker.py")
    label = f"{client}.{label}"  # the client.id: unique per client in broker logs and the API tap
    common = [topic, group, label]
    if client in ("confluent-consumer", "confluent-upgrade"):
        strat = assignor or ("consumer" if client == "confluent-consumer" else "cooperative-sticky")
        argv = [sys.executable, "-u", worker, "confluent", boot] + common + [strat, str(session_ms), str(HEARTBEAT_MS)]
        return (argv + [instance_id] if instance_id else argv), "worker"
    if client in ("java-consumer", "java-upgrade"):
        strat = assignor or ("consumer" if client == "java-consumer" else "cooperative-sticky")
        # The classic coordinator's INFO lines on stderr: the upgrade's rejoins and commits can be
        # read afterwards (ignored by the harness for this kind).
        argv = java_cmd("interop.ConsumerWorker", coordinator_log=client == "java-upgrade") + [boot] + common + [
            strat, str(session_ms), str(HEARTBEAT_MS)]
        return (argv + [instance_id] if instance_id else argv), "worker"
    if client in ("confluent-range", "confluent-coop", "kafka-python", "aiokafka"):
        lib = {"confluent-range": "confluent", "confluent-coop": "confluent"}.get(client, client)
        strat = assignor or ("cooperative-sticky" if client == "confluent-coop" else "range")
        argv = [py, "-u", worker, lib, boot] + common + [strat, str(session_ms), str(HEARTBEAT_MS)]
        return (argv + [instance_id] if instance_id else argv), "worker"
    if client == "java":
        # The coordinator's INFO lines (with times) on stderr: a slow step can be read afterwards.
        argv = java_cmd("interop.ConsumerWorker", coordinator_log=True) + [boot] + common + [
            assignor or "range", str(session_ms), str(HEARTBEAT_MS)]
        return (argv + [instance_id] if instance_id else argv), "worker"
    if client == "kcat":
        # No auto.commit.interval.ms: kcat 1.7.1 sets `-X auto.commit.interval.ms` on the legacy
        # topic-level property of that name (`-X dump` shows it), so librdkafka's global 5 s stays.
        argv = ["kcat", "-b", boot, "-G", group, "-u", "-f", "REC %p %o %k %s\\n",
                "-X", "client.id=" + label, "-X", "auto.offset.reset=earliest",
                "-X", f"session.timeout.ms={session_ms}",
                "-X", f"heartbeat.interval.ms={HEARTBEAT_MS}", "-X", "partition.assignment.strategy=range"]
        if instance_id:
            argv += ["-X", "group.instance.id=" + instance_id]
        return argv + [topic], "kcat"
    if client == "console":
        props = {"client.id": label, "group.protocol": "classic", "auto.commit.interval.ms": "200",
                 "session.timeout.ms": str(session_ms), "heartbeat.interval.ms": str(HEARTBEAT_MS)}
        if instance_id:
            props["group.instance.id"] = instance_id
        argv = java_cmd("org.apache.kafka.tools.consumer.ConsoleConsumer", coordinator_log=True) + [
            "--bootstrap-server", boot, "--topic", topic, "--group", group, "--from-beginning",
            "--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
            "--formatter-property", "print.key=true"]
        for k, v in props.items():
            argv += ["--command-property", f"{k}={v}"]
        return argv, "console"
    raise ValueError(client)


def java_cmd(main, coordinator_log=False):
    cmd = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", args.java_cp]
    if coordinator_log:
        cmd.append("-Dinterop.coordlog=INFO")
    return cmd + [main]


# --- one run against one target -------------------------------------------------------------------

class Run:
    def __init__(self, target, boot, client, name):
        self.target, self.boot, self.client = target, boot, client
        # Fresh names per run: a rerun against a broker that is still up starts clean.
        suffix = int(time.time() * 1000) % 100000000
        self.topic = f"{name}-{suffix}"
        self.group = f"{name}-{suffix}"
        self.dir = os.path.join(args.work, target, name)
        os.makedirs(self.dir, exist_ok=True)
        # Kafka's default request timeout (30 s): groupcoord answers a write only once it is fsynced,
        # and on a disk shared with heavy builds one fsync took over 10 s.
        self.admin = AdminClient({"bootstrap.servers": boot, "socket.timeout.ms": 30000, "client.id": "harness.admin"})
        self.lock = threading.Lock()
        self.deliveries = {}  # key -> [(member label, partition, offset, time)]
        self.last_rec = {}  # partition -> (time, member label)
        self.last_rec_times = []  # (time, member label) of every delivery
        self.members = []
        self.producer_error = None

    def deliver(self, member, p, off, key, now):
        with self.lock:
            self.deliveries.setdefault(key, []).append((member.label, p, off, now))
            self.last_rec[p] = (now, member.label)
            self.last_rec_times.append((now, member.label))

    def create_topic(self):
        fs = self.admin.create_topics([NewTopic(self.topic, num_partitions=PARTITIONS, replication_factor=1)],
                                      operation_timeout=30)
        fs[self.topic].result(timeout=45)
        # The topic must be visible in Metadata before producers and consumers use it.
        deadline = time.time() + 45
        while time.time() < deadline:
            try:
                md = self.admin.list_topics(self.topic, timeout=10)
            except Exception:  # noqa: BLE001 - a timed-out Metadata request: ask again until the deadline
                continue
            t = md.topics.get(self.topic)
            if t is not None and t.error is None and len(t.partitions) == PARTITIONS:
                return
            time.sleep(0.2)
        raise RuntimeError(f"topic {self.topic} not in metadata after 45 s")

    def produce(self, first, count, rate=None):
        """Keys k00000.. with values v00000.., record i into partition i % 6; rate in records/s."""
        p = Producer({"bootstrap.servers": self.boot, "client.id": "harness.producer", "linger.ms": 5, "acks": "all",
                      "message.timeout.ms": 30000})
        errors = []

        def cb(err, _msg):
            if err is not None:
                errors.append(err)

        t0 = time.time()
        for i in range(first, first + count):
            p.produce(self.topic, key=b"k%05d" % i, value=b"v%05d" % i, partition=i % PARTITIONS, on_delivery=cb)
            p.poll(0)
            if rate:
                ahead = (i - first + 1) / rate - (time.time() - t0)
                if ahead > 0:
                    time.sleep(ahead)
        left = p.flush(30)
        if errors or left:
            self.producer_error = f"{len(errors)} delivery errors ({errors[:1]}), {left} unflushed"
            raise RuntimeError(self.producer_error)

    def spawn(self, label, instance_id=None, assignor=None, group=None, session_ms=SESSION_MS):
        argv, kind = member_argv(self.client, self.boot, self.topic, group or self.group, label, instance_id,
                                 assignor, session_ms)
        m = Member(self, label, argv, kind, instance_id).start()
        self.members.append(m)
        return m

    def stop_all(self):
        for m in self.members:
            m.stop()

    def committed(self, group=None):
        return run_committed(self.admin, group or self.group, self.topic)

    def keys_delivered(self, upto):
        with self.lock:
            return sum(1 for i in range(upto) if ("k%05d" % i) in self.deliveries)


def owners(members):
    """partition -> [member labels] over the given live members."""
    own = {}
    for m in members:
        for p in m.owned:
            own.setdefault(p, []).append(m.label)
    return own


def assignment_complete(members):
    own = owners(members)
    return (len(own) == PARTITIONS and all(len(v) == 1 for v in own.values())
            and all(m.owned for m in members) and all(m.alive() for m in members))


def describe_assignment(members):
    return " | ".join(f"{m.label}: {','.join(map(str, sorted(m.owned))) or '-'}"
                      + (f" gen={m.gen}" if m.gen >= 0 else "") for m in members)


def wait_until(cond, timeout, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


def why_not(members):
    dead = [m for m in members if not m.alive()]
    parts = []
    for m in dead:
        parts.append(f"{m.label} exited rc={m.proc.returncode}: {m.last_words()}")
    if not dead:
        quiet = [m for m in members if not m.owned]
        for m in quiet[:1] or members[:1]:
            parts.append(f"{m.label}: {m.last_words()}")
    return "; ".join(parts)


# --- the functional test ------------------------------------------------------------------------

def test_client(target, boot, client):
    if client == "groups-tool":
        return test_groups_tool(target, boot)
    if client in ("confluent-upgrade", "java-upgrade"):
        return test_rolling_upgrade(target, boot, client)
    n = args.records
    n_a, n_b = int(n * 0.4), int(n * 0.3)
    n_c = n - n_a - n_b
    run = Run(target, boot, client, f"cons-{client}")
    step = "setup"
    try:
        run.create_topic()
        run.produce(0, n_a)
        result(target, client, "produce", "PASS", f"{n_a} records into {PARTITIONS} partitions")
    except Exception as e:  # noqa: BLE001
        result(target, client, "produce", "FAIL", f"{type(e).__name__}: {e}")
        return skip_rest(target, client, ["join3", "consume", "kill", "static", "exactly-once"])
    if client != "console":  # the console consumer is kafka-clients, as the java client
        assign_step(run, n_a)
    static_id = run.group + "-static"
    try:
        # Members 0 and 1 first, the static member 2 once they are up: the group leader (the first
        # joiner) is then a dynamic member, and the static bounce below is a follower's.
        # kafka-python 3.0.12's range assignor groups members with itertools.groupby over an
        # unsorted list (static vs dynamic), so with a static member between two dynamic ones in
        # the JoinGroup response one dynamic member gets no partitions (seen on Kafka 4.4 too).
        # Its members are therefore all static; every other client mixes dynamic and static.
        all_static = client == "kafka-python"
        t0 = time.time()
        m0 = run.spawn("m0", instance_id=run.group + "-static-m0" if all_static else None)
        m1 = run.spawn("m1", instance_id=run.group + "-static-m1" if all_static else None)
        wait_until(lambda: (m0.ready and m1.ready) or not (m0.alive() and m1.alive()), 30)
        m2 = run.spawn("m2", instance_id=static_id, session_ms=STATIC_SESSION_MS)
        live = [m0, m1, m2]
        step = "join3"
        wait_until(lambda: assignment_complete(live) or all(m.hopeless() for m in live), args.wait)
        if not assignment_complete(live):
            given_up = "the members said the server lacks the group APIs" if all(m.hopeless() for m in live) \
                else f"waited {args.wait} s"
            result(target, client, step, "FAIL",
                   f"no complete assignment of {PARTITIONS} partitions to 3 members ({given_up}; "
                   f"{describe_assignment(live)}); {why_not(live)}")
            return skip_rest(target, client, ["consume", "kill", "static", "exactly-once"])
        result(target, client, step, "PASS", f"{time.time() - t0:.1f} s from spawn: {describe_assignment(live)}")

        step = "consume"
        if not wait_until(lambda: run.keys_delivered(n_a) == n_a, args.wait, 0.2):
            result(target, client, step, "FAIL", f"{run.keys_delivered(n_a)}/{n_a} keys within {args.wait} s; "
                   f"{why_not(live)}")
            return skip_rest(target, client, ["kill", "static", "exactly-once"])
        result(target, client, step, "PASS", f"{n_a}/{n_a} keys")

        # Kill member 1 (SIGKILL, no LeaveGroup) while records keep arriving; the survivors take its
        # partitions after the session timeout and go on from the committed offsets.
        step = "kill"
        prod = threading.Thread(target=lambda: run.produce(n_a, n_b, rate=max(n_b / 3.0, 100)), daemon=True)
        prod.start()
        time.sleep(0.8)
        victim_owned = set(m1.owned)
        m1.signal(signal.SIGKILL)
        t_kill = time.time()
        m1.wait_exit(5)
        committed_at_kill = run.committed()
        survivors = [m0, m2]
        ok = wait_until(lambda: assignment_complete(survivors), SESSION_MS / 1000 + args.wait)
        t_settle = time.time() - t_kill
        prod.join(60)
        if not ok:
            result(target, client, step, "FAIL", f"survivors do not own all partitions {args.wait} s after the "
                   f"session timeout ({describe_assignment(survivors)}); {why_not(survivors)}")
            return skip_rest(target, client, ["static", "exactly-once"])
        if not wait_until(lambda: run.keys_delivered(n_a + n_b) == n_a + n_b, args.wait, 0.2):
            result(target, client, step, "FAIL", f"after the kill {run.keys_delivered(n_a + n_b)}/{n_a + n_b} keys "
                   f"within {args.wait} s ({describe_assignment(survivors)}); {run.producer_error or ''}")
            return skip_rest(target, client, ["static", "exactly-once"])
        result(target, client, step, "PASS",
               f"m1 (owned {sorted(victim_owned)}) SIGKILLed; survivors own all {PARTITIONS} after {t_settle:.1f} s "
               f"({describe_assignment(survivors)}); {n_a + n_b}/{n_a + n_b} keys")

        # Bounce the static member: close (a static member sends no LeaveGroup) and restart it with
        # the same group.instance.id within the session timeout. No rebalance: m0 sees no
        # callback, m2 comes back with the same partitions (and generation, where reported).
        step = "static"
        before_owned, before_gen = set(m2.owned), m2.gen
        m0_events = len(m0.events)
        m0_gen = m0.gen
        m2.signal(signal.SIGTERM)
        if not m2.wait_exit(15):
            result(target, client, step, "FAIL", "static member did not exit within 15 s of SIGTERM")
            return skip_rest(target, client, ["exactly-once"])
        t_bounce = time.time()
        m2b = run.spawn("m2b", instance_id=static_id, session_ms=STATIC_SESSION_MS)
        survivors = [m0, m2b]
        ok = wait_until(lambda: assignment_complete(survivors), args.wait)
        t_back = time.time() - t_bounce
        time.sleep(HEARTBEAT_MS / 1000 * 2 + 1)  # a rebalance would reach m0 through its heartbeats
        problems = []
        if not ok:
            problems.append(f"no complete assignment after the restart ({describe_assignment(survivors)}; "
                            f"{why_not(survivors)})")
        else:
            if m2b.owned != before_owned:
                problems.append(f"m2 came back with {sorted(m2b.owned)}, had {sorted(before_owned)}")
            if len(m0.events) != m0_events:
                problems.append(f"m0 saw {len(m0.events) - m0_events} rebalance callbacks "
                                f"({[sorted(e[1]) for e in m0.events[m0_events:]]})")
            if before_gen >= 0 and m2b.gen != before_gen:
                problems.append(f"generation {before_gen} -> {m2b.gen}")
            if m0_gen >= 0 and m0.gen != m0_gen:
                problems.append(f"m0 generation {m0_gen} -> {m0.gen}")
        if problems:
            result(target, client, step, "FAIL", f"m2 restarted {t_back:.1f} s ago: " + "; ".join(problems))
        else:
            gen_note = f", generation {m2b.gen} unchanged" if m2b.gen >= 0 else \
                ", generation not reported by this client"
            result(target, client, step, "PASS",
                   f"m2 back with {sorted(m2b.owned)} after {t_back:.1f} s, no callback on m0{gen_note}")

        run.produce(n_a + n_b, n_c)
        wait_until(lambda: run.keys_delivered(n) == n, args.wait, 0.2)
        step = "exactly-once"
        verify(run, n, m1, committed_at_kill, victim_owned)
    except Exception as e:  # noqa: BLE001
        result(target, client, step, "FAIL", f"{type(e).__name__}: {e}")
    finally:
        run.stop_all()


def assign_step(run, n):
    """One consumer without group membership (assign() of all partitions, commits as a simple
    group): the client's data plane — Metadata, OffsetFetch, ListOffsets, Fetch, OffsetCommit —
    apart from JoinGroup and friends. kcat -C reads without a group and commits nothing."""
    step = "assign"
    if run.client == "kcat":
        argv = ["kcat", "-C", "-b", run.boot, "-X", "client.id=kcat.a0", "-t", run.topic, "-o", "beginning", "-e", "-u",
                "-f", "REC %p %o %k %s\\n"]
        m = Member(run, "a0", argv, "kcat").start()
    else:
        m = run.spawn("a0", assignor="manual", group=run.group + "-assign")
    try:
        got = wait_until(lambda: run.keys_delivered(n) == n, args.wait, 0.1)
        committed = {}
        if got and run.client != "kcat":
            want = {p: len(range(p, n, PARTITIONS)) for p in range(PARTITIONS)}  # record i is in i % 6
            wait_until(lambda: committed.update(run.committed(run.group + "-assign")) or committed == want, 10, 0.3)
            got = committed == want
        with run.lock:
            dups = sum(len(v) - 1 for v in run.deliveries.values())
        if got and not dups:
            result(run.target, run.client, step, "PASS", f"{n}/{n} keys without a group, 0 duplicates"
                   + ("" if run.client == "kcat" else ", committed offsets = end offsets"))
        else:
            result(run.target, run.client, step, "FAIL",
                   f"{run.keys_delivered(n)}/{n} keys within {args.wait} s, {dups} duplicates, committed "
                   f"{committed}; {m.last_words()}")
    except Exception as e:  # noqa: BLE001
        result(run.target, run.client, step, "FAIL", f"{type(e).__name__}: {e}; {m.last_words()}")
    finally:
        m.stop()
        with run.lock:
            run.deliveries.clear()
            run.last_rec.clear()


def verify(run, n, victim, committed_at_kill, victim_owned):
    """Every key delivered; duplicates only where the SIGKILLed member had consumed past its commit,
    or where the first member to get the record was then told that its commit failed (a commit
    that lands after its generation ended: at-least-once, as on Kafka)."""
    gaps, bad_values, dups, redelivered, after_failed_commit = [], 0, [], 0, 0
    failures = {m.label: m.commit_failures for m in run.members}
    with run.lock:
        deliveries = dict(run.deliveries)
    for i in range(n):
        key = "k%05d" % i
        ds = deliveries.get(key, [])
        if not ds:
            gaps.append(key)
            continue
        if any(d[1] != i % PARTITIONS for d in ds):
            bad_values += 1
        if len(ds) > 1:
            # Allowed: exactly two deliveries, one by the victim at or past its partition's
            # committed offset at the kill (consumed, not committed, so redelivered).
            by_victim = [d for d in ds if d[0] == victim.label]
            others = [d for d in ds if d[0] != victim.label]
            if (len(ds) == 2 and len(by_victim) == 1 and len(others) == 1
                    and by_victim[0][2] >= committed_at_kill.get(by_victim[0][1], -1)):
                redelivered += 1
            elif len(ds) == 2 and any(ds[0][3] <= t <= ds[1][3] for t in failures.get(ds[0][0], [])):
                after_failed_commit += 1
            else:
                dups.append((key, [d[:3] for d in ds]))
    extra = set(deliveries) - {"k%05d" % i for i in range(n)}
    ok = not gaps and not dups and not bad_values and not extra
    detail = (f"{n - len(gaps)}/{n} keys, {len(gaps)} gaps, {len(dups)} duplicates, "
              f"{redelivered} redelivered from the killed member's uncommitted tail")
    if after_failed_commit:
        detail += f", {after_failed_commit} redelivered after a commit the client reported as failed"
    if gaps:
        detail += f"; first gaps {gaps[:5]}"
    if dups:
        detail += f"; first duplicates {dups[:3]}"
    if bad_values or extra:
        detail += f"; {bad_values} in a wrong partition, {len(extra)} unknown keys"
    result(run.target, run.client, "exactly-once", "PASS" if ok else "FAIL", detail)


def test_rolling_upgrade(target, boot, client):
    """A classic group (cooperative-sticky; range for librdkafka, see below) upgraded to the
    consumer protocol one member at a time:
    every member is closed (LeaveGroup) and restarted with group.protocol=consumer while records
    keep coming. Passes when every restart settles, no member that stays ever has all of its
    partitions revoked at once (no stop-the-world, unlike an eager rebalance), and every record
    is delivered exactly once (graceful hand-offs with synchronous commits: no redelivery)."""
    n = args.records
    n_a, n_b = int(n * 0.4), int(n * 0.4)
    n_c = n - n_a - n_b
    run = Run(target, boot, client, f"cons-{client}")
    steps = ["join3", "produce", "consume", "upgrade", "exactly-once"]
    # librdkafka's cooperative-sticky puts assignor user data in its subscription, and Kafka 4.4
    # refuses to convert such a group ("userData from a custom assignor would be lost":
    # GROUP_ID_NOT_FOUND, fatal for librdkafka). Its classic members use range, an eager
    # protocol: every rebalance of the classic phase revokes everything (counted, not failed).
    classic = "range" if client == "confluent-upgrade" else "cooperative-sticky"
    eager = classic == "range"
    step = "setup"
    try:
        run.create_topic()
    except Exception as e:  # noqa: BLE001
        result(target, client, "produce", "FAIL", f"{type(e).__name__}: {e}")
        return skip_rest(target, client, [x for x in steps if x != "produce"])
    try:
        # The records come once the classic group is complete: a member that starts alone reads
        # partitions it hands over a moment later, and its commit after poll() fails during that
        # rebalance (RebalanceInProgressException), so another would read them again.
        step = "join3"
        t0 = time.time()
        live = [run.spawn(f"m{i}", assignor=classic, session_ms=UPGRADE_SESSION_MS) for i in range(3)]
        if not wait_until(lambda: assignment_complete(live) or all(m.hopeless() for m in live), args.wait):
            result(target, client, step, "FAIL", f"classic members: no complete assignment in {args.wait} s "
                   f"({describe_assignment(live)}); {why_not(live)}")
            return skip_rest(target, client, steps[1:])
        result(target, client, step, "PASS", f"3 classic ({classic}) members after "
               f"{time.time() - t0:.1f} s: {describe_assignment(live)}")
        step = "produce"
        run.produce(0, n_a)
        result(target, client, "produce", "PASS", f"{n_a} records into {PARTITIONS} partitions")
        step = "consume"
        if not wait_until(lambda: run.keys_delivered(n_a) == n_a, args.wait, 0.2):
            result(target, client, step, "FAIL", f"{run.keys_delivered(n_a)}/{n_a} keys; {why_not(live)}")
            return skip_rest(target, client, steps[3:])
        result(target, client, step, "PASS", f"{n_a}/{n_a} keys")

        step = "upgrade"
        rate = max(n_b / 12.0, 100)
        prod = threading.Thread(target=lambda: run.produce(n_a, n_b, rate=rate), daemon=True)
        prod.start()
        problems, settled, pauses, full_revocations = [], [], [], 0
        for i in range(3):
            old = live[i]
            stays = [m for m in live if m is not old]
            marks = {m.label: len(m.events) for m in stays}
            old.signal(signal.SIGTERM)
            if not old.wait_exit(20):
                problems.append(f"{old.label} did not exit within 20 s of SIGTERM")
                break
            t_restart = time.time()
            new = run.spawn(f"m{i}c", assignor="consumer")
            live[i] = new
            ok = wait_until(lambda: assignment_complete(live), args.wait)
            settled.append(time.time() - t_restart)
            if not ok:
                problems.append(f"restart {i}: no complete assignment in {args.wait} s "
                                f"({describe_assignment(live)}); {why_not(live)}")
                break
            # A member that stays must never have had all of its partitions taken at once.
            for m in stays:
                before = m.events[marks[m.label] - 1][1] if marks[m.label] else frozenset()
                lost_all = [e for e in m.events[marks[m.label]:] if before and not e[1]]
                if lost_all and eager:
                    full_revocations += len(lost_all)
                elif lost_all:
                    problems.append(f"restart {i}: {m.label} had everything revoked ({sorted(before)} -> -)")
            pauses.append(longest_pause(run, t_restart - 1, time.time()))
        prod.join(60)
        if not problems:
            detail = ("3 members restarted one by one with group.protocol=consumer; settled after "
                      + ", ".join(f"{x:.1f}" for x in settled) + " s; longest pause in delivery "
                      + ", ".join(f"{x:.2f}" for x in pauses) + " s; "
                      + (f"{full_revocations} full revocations of eager classic members (range)"
                         if eager else "no member lost all its partitions")
                      + f"; {describe_assignment(live)}")
            result(target, client, step, "PASS", detail)
        else:
            result(target, client, step, "FAIL", "; ".join(problems))
            return skip_rest(target, client, steps[4:])
        run.produce(n_a + n_b, n_c)
        wait_until(lambda: run.keys_delivered(n) == n, args.wait, 0.2)
        step = "exactly-once"
        verify(run, n, live[0], {}, set())
    except Exception as e:  # noqa: BLE001
        result(target, client, step, "FAIL", f"{type(e).__name__}: {e}")
    finally:
        run.stop_all()


def longest_pause(run, t_from, t_to):
    """The longest time in [t_from, t_to] without any record delivered (records keep coming)."""
    with run.lock:
        times = sorted(t for t, _m in run.last_rec_times if t_from <= t <= t_to)
    edges = [t_from] + times + [t_to]
    return max(b - a for a, b in zip(edges, edges[1:]))


def skip_rest(target, client, steps):
    for s in steps:
        result(target, client, s, "SKIP", "an earlier step failed")


# --- kafka-consumer-groups ----------------------------------------------------------------------

def tool(boot, *argv, timeout=60):
    cmd = java_cmd("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand") + ["--bootstrap-server", boot] \
        + list(argv)
    p = start_child(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return -1, "", f"timed out after {timeout} s"


def describe_rows(out, group):
    """(partition -> (current offset, consumer id)) from --describe's table."""
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 7 and f[0] == group and f[2].isdigit():
            rows[int(f[2])] = (f[3], f[6])
    return rows


def test_groups_tool(target, boot):
    client = "groups-tool"
    run = Run(target, boot, "console", "cons-groups-tool")
    n = 600
    try:
        run.create_topic()
        run.produce(0, n)
    except Exception as e:  # noqa: BLE001
        result(target, client, "produce", "FAIL", f"{type(e).__name__}: {e}")
        return
    # 1. A group that only has committed offsets (standalone commits, no JoinGroup).
    g = run.group + "-offsets"
    step = "offsets-only"
    try:
        from confluent_kafka import Consumer
        c = Consumer({"bootstrap.servers": boot, "client.id": "harness.commit", "group.id": g, "enable.auto.commit": False})
        c.commit(offsets=[TopicPartition(run.topic, p, 50 + p) for p in range(PARTITIONS)], asynchronous=False)
        c.close()
        result(target, client, step, "PASS", "offsets 50..55 committed without joining (OffsetCommit gen -1)")
    except Exception as e:  # noqa: BLE001
        result(target, client, step, "FAIL", f"{type(e).__name__}: {e}")
        return
    rc, out, err = tool(boot, "--list")
    listed = g in out.split()
    result(target, client, "--list", "PASS" if rc == 0 and listed else "FAIL",
           f"lists {g}" if listed else f"rc={rc}, {g} not listed: {(err or out).strip()[-300:]}")
    rc, out, err = tool(boot, "--describe", "--group", g)
    rows = describe_rows(out, g)
    want = {p: str(50 + p) for p in range(PARTITIONS)}
    got = {p: r[0] for p, r in rows.items()}
    ok = rc == 0 and got == want and "has no active members" in (out + err)
    result(target, client, "--describe", "PASS" if ok else "FAIL",
           f"offsets-only group: {got}, 'has no active members'" if ok else
           f"rc={rc} offsets {got} (want {want}): {(err or out).strip()[-300:]}")
    rc, out, err = tool(boot, "--reset-offsets", "--group", g, "--topic", run.topic, "--to-earliest", "--execute")
    try:
        after = run_committed(run.admin, g, run.topic)
    except Exception as e:  # noqa: BLE001
        after = {"error": str(e)}
    ok = rc == 0 and after == {p: 0 for p in range(PARTITIONS)}
    result(target, client, "--reset-offsets", "PASS" if ok else "FAIL",
           "--to-earliest --execute: all 6 committed offsets now 0" if ok else
           f"rc={rc}, committed after {after}: {(err or out).strip()[-300:]}")

    # 2. The same commands on a group with a live member (kafka-console-consumer).
    step = "active-describe"
    ga = run.group + "-active"
    run.group = ga
    m = run.spawn("console-0")
    try:
        wait_until(lambda: assignment_complete([m]) or m.hopeless(), args.wait)
        if not assignment_complete([m]):
            result(target, client, step, "FAIL", f"the console consumer got no assignment within {args.wait} s: "
                   f"{m.last_words()}")
            skip_rest(target, client, ["--reset-busy", "--delete-busy"])
        else:
            wait_until(lambda: run.keys_delivered(n) == n, args.wait, 0.2)
            ok, rows = False, {}
            deadline = time.time() + 20  # auto-commit interval 200 ms: offsets reach 100 per partition
            while time.time() < deadline and not ok:
                rc, out, err = tool(boot, "--describe", "--group", ga)
                rows = describe_rows(out, ga)
                ok = (rc == 0 and sorted(rows) == list(range(PARTITIONS))
                      and all(r[0] == str(n // PARTITIONS) and r[1].startswith("console.console-0") for r in rows.values()))
            result(target, client, step, "PASS" if ok else "FAIL",
                   f"6 partitions at offset {n // PARTITIONS}, owned by the console consumer's member" if ok else
                   f"rc={rc} rows {rows}: {(err or out).strip()[-300:]}")
            busy_checks(target, client, boot, run, ga)
    finally:
        m.stop()
    delete_step(target, client, boot, g, ga)


def busy_checks(target, client, boot, run, ga):
    """--reset-offsets and --delete on a group with a live member are refused."""
    rc, out, err = tool(boot, "--reset-offsets", "--group", ga, "--topic", run.topic, "--to-earliest", "--execute")
    refused = "inactive" in (out + err)
    result(target, client, "--reset-busy", "PASS" if refused else "FAIL",
           "refused: the group must be inactive" if refused else f"rc={rc}: {(err or out).strip()[-300:]}")
    rc, out, err = tool(boot, "--delete", "--group", ga)
    refused = "not empty" in (out + err).lower() or "NonEmptyGroup" in (out + err)
    result(target, client, "--delete-busy", "PASS" if refused else "FAIL",
           "refused: the group is not empty" if refused else f"rc={rc}: {(err or out).strip()[-300:]}")


def delete_step(target, client, boot, g, ga):
    # 3. Delete both groups, then they are gone from --list.
    rc, out, err = tool(boot, "--delete", "--group", g, "--group", ga)
    rc2, out2, _ = tool(boot, "--list")
    gone = g not in out2.split() and ga not in out2.split()
    ok = rc == 0 and "Deletion of requested consumer groups" in out and "was successful" in out and gone
    result(target, client, "--delete", "PASS" if ok else "FAIL",
           "both groups deleted, gone from --list" if ok else f"rc={rc}: {(err or out).strip()[-300:]}; "
           f"still listed: {[x for x in (g, ga) if x in out2.split()]}")


def run_committed(admin, group, topic):
    req = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(PARTITIONS)])
    res = admin.list_consumer_group_offsets([req])[group].result(timeout=35)
    return {tp.partition: tp.offset for tp in res.topic_partitions}


# --- timings --------------------------------------------------------------------------------------

def settle(run, live, t0, timeout):
    """Seconds from t0 until the live members own every partition once and each partition has been
    consumed by its owner after that; None on timeout."""
    deadline = t0 + timeout
    while time.time() < deadline and not all(m.hopeless() for m in live):
        if assignment_complete(live):
            t_owned = time.time()
            own = {p: v[0] for p, v in owners(live).items()}
            ok = wait_until(lambda: all(run.last_rec.get(p, (0, ""))[0] > t_owned
                                        and run.last_rec[p][1] == own[p] for p in range(PARTITIONS))
                            or not assignment_complete(live), 10, 0.01)
            if ok and assignment_complete(live):
                return max(run.last_rec[p][0] for p in range(PARTITIONS)) - t0
        time.sleep(0.01)
    return None


TIMING_ROWS = ("first", "join", "leave", "crash")


def timing_round(target, boot, client, rnd):
    """One round against one target: (settle times by row, None where it did not settle; note)."""
    row = dict.fromkeys(TIMING_ROWS)
    run = Run(target, boot, client, f"timing-{client}-{rnd}")
    stop = threading.Event()

    def feed():
        i = 0
        p = Producer({"bootstrap.servers": boot, "client.id": "harness.feeder", "linger.ms": 0})
        while not stop.is_set():
            for _ in range(PARTITIONS):
                p.produce(run.topic, key=b"k%05d" % (i % 100000), value=b"t", partition=i % PARTITIONS)
                i += 1
            p.poll(0)
            time.sleep(0.02)  # 300 records/s, 50 per partition
        p.flush(5)

    try:
        run.create_topic()
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        t0 = time.time()
        ms = [run.spawn(f"m{i}") for i in range(3)]
        row["first"] = settle(run, ms, t0, args.wait)
        if row["first"] is None:
            return row, f"round {rnd}: no first assignment ({why_not(ms)})"
        # How the first assignment came about: rebalance callbacks per member (eager: one
        # assignment per generation it took part in), when each first owned a partition, and
        # the generation (the member epoch with the consumer protocol) where the client reports it.
        first_how = " ".join(
            f"{m.label}:{len(m.events)}cb@{min((e[0] for e in m.events if e[1]), default=t0) - t0:.2f}s"
            + (f"/gen{m.gen}" if m.gen >= 0 else "") for m in ms)
        t0 = time.time()
        m3 = run.spawn("m3")
        row["join"] = settle(run, ms + [m3], t0, args.wait)
        t0 = time.time()
        m3.signal(signal.SIGTERM)
        row["leave"] = settle(run, ms, t0, args.wait)
        t0 = time.time()
        ms[2].signal(signal.SIGKILL)
        row["crash"] = settle(run, ms[:2], t0, SESSION_MS / 1000 + args.wait)
        log(f"timings [{target}] {client} round {rnd}: " + ", ".join(
            f"{k}={v:.2f}s" if v is not None else f"{k}=-" for k, v in row.items()) + f" (first: {first_how})")
        return row, None
    except Exception as e:  # noqa: BLE001
        return row, f"round {rnd}: {type(e).__name__}: {e}"
    finally:
        stop.set()
        run.stop_all()


def timings(targets, client):
    """args.rounds rounds per target, the targets alternating round by round (and which goes first
    alternating too), so that a change in the machine's load hits both alike. Medians by target."""
    names = [t for t in ("kafka", "groupcoord") if t in targets]
    rows = {t: {k: [] for k in TIMING_ROWS} for t in names}
    for rnd in range(args.rounds):
        for target in (names if rnd % 2 == 0 else names[::-1]):
            row, note = timing_round(target, targets[target], client, rnd)
            for k, v in row.items():
                rows[target][k].append(v)
            if note:
                log(f"timings [{target}] {client} {note}")
    med = {}
    for t in names:
        med[t] = {}
        for k, v in rows[t].items():
            ok = [x for x in v if x is not None]
            med[t][k] = statistics.median(ok) if len(ok) == args.rounds else None
        log(f"timings [{t}] {client} rounds: " + "; ".join(
            f"{k} " + " / ".join(f"{x:.2f}" if x is not None else "-" for x in v) for k, v in rows[t].items()))
    return med


def print_timings(client, tk, tg):
    labels = [("first", "first assignment, 3 consumers"), ("join", "re-settle after a join (3 -> 4)"),
              ("leave", "re-settle after a graceful leave"), ("crash", "re-settle after a crash (SIGKILL)")]
    log("")
    if client in CONSUMER_CLIENTS:
        settings = ("group.protocol=consumer; broker group.consumer.session.timeout.ms="
                    f"{args.consumer_session_ms}, group.consumer.heartbeat.interval.ms={HEARTBEAT_MS}")
    else:
        settings = (f"session.timeout.ms={SESSION_MS}, heartbeat.interval.ms={HEARTBEAT_MS}, "
                    "group.initial.rebalance.delay.ms=0")
    log(f"timings: {client}, {args.rounds} rounds (targets alternating), medians; {settings}")
    log(f"{'':<36} {'Apache Kafka 4.4':>17} {'groupcoord':>12} {'ratio gc/kafka':>15}")
    for key, what in labels:
        a = tk.get(key) if tk else None
        b = tg.get(key) if tg else None
        fa = f"{a:.2f} s" if a is not None else ("not run" if tk is None else "FAIL")
        fb = f"{b:.2f} s" if b is not None else ("not run" if tg is None else "FAIL")
        r = f"{b / a:.2f}" if a and b is not None else "-"
        log(f"{what:<36} {fa:>17} {fb:>12} {r:>15}")


# The clients whose members are JVMs: each starts up to 3 JVMs at once, and a static member's JVM
# must come back within the session timeout, so they take turns in one lane of their own.
# java-upgrade (no static member, 20 s classic sessions) runs beside them, last of the other lane,
# to keep the suite's length.
JVM_CLIENTS = ("java", "console", "groups-tool", "java-consumer")


def run_clients(target, boot, clients, jobs):
    """Every client's test against one target. jobs=1: one after the other. jobs>1: the JVM clients
    one after the other in one lane, the others in jobs-1 lanes beside it. Every client has its own
    topic and groups, so lanes do not interfere beyond sharing the server and the CPU."""
    def lane(queue):
        while True:
            with queue_lock:
                if not queue:
                    return
                c = queue.pop(0)
            log(f"--- [{target}] {c}")
            try:
                test_client(target, boot, c)
            except Exception as e:  # noqa: BLE001  (a harness bug must not take the other lanes down)
                result(target, c, "harness", "FAIL", f"{type(e).__name__}: {e}")

    queue_lock = threading.Lock()
    if jobs <= 1:
        lane(list(clients))
        return
    heavy = [c for c in clients if c in JVM_CLIENTS]
    light = [c for c in clients if c not in JVM_CLIENTS]
    threads = [threading.Thread(target=lane, args=(heavy,))]
    threads += [threading.Thread(target=lane, args=(light,)) for _ in range(jobs - 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main():
    global args
    # SIGTERM (the script's trap) and Ctrl-C stop every consumer and tool process, in any lane.
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", action="append", required=True, help="TARGET=HOST:PORT (kafka, groupcoord)")
    ap.add_argument("--clients", default=",".join(ALL_CLIENTS))
    ap.add_argument("--records", type=int, default=10000)
    ap.add_argument("--wait", type=float, default=45.0, help="bound of every wait, seconds")
    ap.add_argument("--jobs", type=int, default=1, help="client tests run side by side (see run_clients)")
    ap.add_argument("--timings", action="store_true")
    ap.add_argument("--timings-client", default="confluent-range", help="comma list: one table per client")
    ap.add_argument("--consumer-session-ms", type=int, default=6000,
                    help="the brokers' group.consumer.session.timeout.ms (for the timings' header)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="/tmp/interop-consumers")
    ap.add_argument("--java-cp", default="")
    args = ap.parse_args()
    targets = dict(b.split("=", 1) for b in args.bootstrap)
    clients = [c for c in args.clients.split(",") if c]
    for c in clients:
        if c not in ALL_CLIENTS + CONSUMER_CLIENTS:
            sys.exit(f"unknown client {c}; known: {','.join(ALL_CLIENTS + CONSUMER_CLIENTS)}")
    if args.timings:
        tables = []
        for client in [c for c in args.timings_client.split(",") if c]:
            if client in ("groups-tool", "confluent-upgrade", "java-upgrade"):
                sys.exit(f"--timings-client {client}: not a client that joins a group as one member")
            tables.append((client, timings(targets, client)))
        for client, out in tables:
            print_timings(client, out.get("kafka"), out.get("groupcoord"))
        done = [all(v is not None for v in t.values()) for _c, out in tables for t in out.values()]
        log(f"timings: {sum(done)} passed, {len(done) - sum(done)} failed")
        return 0 if all(done) else 1
    for target in ("kafka", "groupcoord"):
        if target in targets:
            run_clients(target, targets[target], clients, args.jobs)
    passed = sum(1 for r in results if r[3] == "PASS")
    failed = sum(1 for r in results if r[3] == "FAIL")
    skipped = sum(1 for r in results if r[3] == "SKIP")
    log("")
    log("summary (client x step):")
    for target in ("kafka", "groupcoord"):
        for c in clients:
            rs = [r for r in results if r[0] == target and r[1] == c]
            if rs:
                log(f"  [{target}] {c:<16} " + " ".join(f"{r[2]}={r[3]}" for r in rs))
    log(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
