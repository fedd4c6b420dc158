"""Real clients against groupcoord's authenticated listeners (issue 16, authentication half).

Run by pkg-scripts/interop-security.sh, which formats the data directory with a SCRAM user,
starts `groupcoord serve --config server.properties` with PLAINTEXT, SSL (client certificates
required), SASL_SSL (SCRAM) and SASL_PLAINTEXT (PLAIN + SCRAM) listeners, and passes their
addresses here. Each check prints one RESULT line; the last line is "N passed, N failed".

  clients.py STEP --certs DIR --plaintext H:P --ssl H:P --sasl-ssl H:P --sasl-plaintext H:P
             --server-log FILE
  STEP: main (everything but the restart check) or after-restart
"""

import argparse
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    NewTopic,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

results = []
SCRAM_FAILED = ("Authentication failed during authentication due to invalid credentials with SASL "
                "mechanism SCRAM-SHA-512")


def check(name, fn):
    t0 = time.time()
    try:
        detail = fn()
        results.append((name, True))
        print(f"RESULT PASS {name} ({time.time() - t0:.1f} s){': ' + detail if detail else ''}", flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is a reported result
        results.append((name, False))
        print(f"RESULT FAIL {name}: {type(e).__name__}: {e}", flush=True)


def quiet(conf):
    # librdkafka logs every refused connection; the checks look at the outcome instead.
    return dict(conf, **{"log_level": 0, "logger": lambda *a: None})


def scram_conf(args, user, password, mechanism="SCRAM-SHA-512"):
    return {
        "bootstrap.servers": args.sasl_ssl,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
        "ssl.ca.location": f"{args.certs}/ca.pem",
    }


def ssl_conf(args, with_cert=True):
    c = {
        "bootstrap.servers": args.ssl,
        "security.protocol": "SSL",
        "ssl.ca.location": f"{args.certs}/ca.pem",
    }
    if with_cert:
        c["ssl.certificate.location"] = f"{args.certs}/client.crt"
        c["ssl.key.location"] = f"{args.certs}/client.key"
    return c


def expect_refused(conf, what, message=None):
    """A client that must not get metadata: list_topics fails; `message`, if given, is the
    server's error text the client must have received (librdkafka reports it to error_cb)."""
    errors = []
    a = AdminClient(quiet(dict(conf, **{"error_cb": lambda e: errors.append(e.str())})))
    try:
        a.list_topics(timeout=6)
    except KafkaException as e:
        errors.append(e.args[0].str())
        a.poll(1)  # serves error_cb
        if message is not None and not any(message in x for x in errors):
            raise AssertionError(f"{what}: expected {message!r} in {errors}")
        shown = next((x for x in errors if message and message in x), errors[0])
        return f"{what} refused: {shown}"
    raise AssertionError(f"{what} was served")


def produce_consume(conf, topic, group, n=20):
    a = AdminClient(conf)
    fs = a.create_topics([NewTopic(topic, 2, 1)])
    fs[topic].result(15)
    p = Producer(conf)
    for i in range(n):
        p.produce(topic, key=str(i), value=f"v{i}")
    left = p.flush(15)
    assert left == 0, f"{left} records not delivered"
    c = Consumer(dict(conf, **{"group.id": group, "auto.offset.reset": "earliest",
                               "enable.auto.commit": False}))
    c.subscribe([topic])
    got = 0
    deadline = time.time() + 30
    while got < n and time.time() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        got += 1
    assert got == n, f"consumed {got} of {n}"
    c.commit(asynchronous=False)
    committed = c.committed([__import__("confluent_kafka").TopicPartition(topic, p) for p in (0, 1)], timeout=10)
    c.close()
    total = sum(tp.offset for tp in committed if tp.offset >= 0)
    assert total == n, f"committed offsets add up to {total}, not {n}"
    groups = a.list_consumer_groups().result(10)
    ids = [g.group_id for g in groups.valid]
    assert group in ids, f"group {group} not listed: {ids}"
    return f"{n} records produced and consumed, offsets committed, group listed"


def main_step(args):
    run = uuid.uuid4().hex[:6]
    admin = scram_conf(args, "admin", "admin-secret")

    check("sasl_ssl-scram-sha-512-metadata-advertises-the-listener",
          lambda: _metadata(admin, args.sasl_ssl))
    check("sasl_ssl-scram-sha-512-produce-consume-commit",
          lambda: produce_consume(admin, f"sec-scram-{run}", f"sec-scram-g-{run}"))
    check("sasl_ssl-scram-wrong-password-refused",
          lambda: expect_refused(scram_conf(args, "admin", "wrong"), "wrong password", SCRAM_FAILED))
    check("sasl_ssl-scram-unknown-user-refused",
          lambda: expect_refused(scram_conf(args, "nobody", "x"), "unknown user", SCRAM_FAILED))
    check("sasl_ssl-plain-not-enabled-refused",
          lambda: expect_refused(dict(scram_conf(args, "alice", "alice-secret"), **{"sasl.mechanism": "PLAIN"}),
                                 "PLAIN on a SCRAM-only listener", "PLAIN"))

    def add_bob():
        a = AdminClient(admin)
        up = UserScramCredentialUpsertion("bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192),
                                          b"bob-secret")
        for _, f in a.alter_user_scram_credentials([up]).items():
            f.result(10)
        d = a.describe_user_scram_credentials(["bob"])
        desc = (d.result(10) if hasattr(d, "result") else {k: v.result(10) for k, v in d.items()})["bob"]
        infos = [(i.mechanism, i.iterations) for i in desc.scram_credential_infos]
        assert infos == [(ScramMechanism.SCRAM_SHA_256, 8192)], infos
        return f"AlterUserScramCredentials + DescribeUserScramCredentials: {infos}"

    check("alter-and-describe-user-scram-credentials", add_bob)
    check("sasl_ssl-scram-sha-256-new-user",
          lambda: _metadata(scram_conf(args, "bob", "bob-secret", "SCRAM-SHA-256"), args.sasl_ssl))

    check("ssl-client-certificate-produce-consume-commit",
          lambda: produce_consume(ssl_conf(args), f"sec-ssl-{run}", f"sec-ssl-g-{run}"))
    check("ssl-client-certificate-principal-is-the-dn", lambda: _principal_logged(args))
    check("ssl-without-client-certificate-refused",
          lambda: expect_refused(ssl_conf(args, with_cert=False), "no client certificate"))

    plain = {"bootstrap.servers": args.sasl_plaintext, "security.protocol": "SASL_PLAINTEXT",
             "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}
    check("sasl_plaintext-plain-metadata", lambda: _metadata(plain, args.sasl_plaintext))
    check("sasl_plaintext-plain-wrong-password-refused",
          lambda: expect_refused(dict(plain, **{"sasl.password": "nope"}), "wrong PLAIN password",
                                 "Authentication failed: Invalid username or password"))
    check("sasl-listener-refuses-an-unauthenticated-client",
          lambda: expect_refused({"bootstrap.servers": args.sasl_plaintext}, "PLAINTEXT client on SASL listener"))

    check("plaintext-client-on-ssl-port-is-closed-quietly",
          lambda: _flood_quiet(args, {"bootstrap.servers": args.ssl}, "plaintext client on a TLS listener"))
    check("ssl-client-on-plaintext-port-is-closed-quietly",
          lambda: _flood_quiet(args, dict(ssl_conf(args), **{"bootstrap.servers": args.plaintext}),
                               "TLS client on a plaintext listener"))


def _metadata(conf, listener):
    md = AdminClient(conf).list_topics(timeout=10)
    brokers = [f"{b.host}:{b.port}" for b in md.brokers.values()]
    port = listener.rsplit(":", 1)[1]
    assert brokers == [f"localhost:{port}"], f"advertised {brokers}, expected localhost:{port}"
    return f"brokers {brokers}"


def _principal_logged(args):
    with open(args.server_log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    needle = "User:CN=client,OU=test,O=groupcoord"
    assert needle in text, f"{needle} not in the server log"
    return needle


def _flood_quiet(args, conf, what):
    """A client of the wrong protocol retrying for 8 s leaves at most two lines naming it."""
    with open(args.server_log, encoding="utf-8", errors="replace") as f:
        before = f.read().count(what)
    a = AdminClient(quiet(dict(conf, **{"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 100})))
    try:
        a.list_topics(timeout=8)
        raise AssertionError("metadata was served to a client of the wrong protocol")
    except KafkaException:
        pass
    time.sleep(0.5)
    with open(args.server_log, encoding="utf-8", errors="replace") as f:
        lines = [line for line in f.read().splitlines() if what in line]
    new = len(lines) - before
    warns = [line for line in lines[before:] if "WARN" in line]
    assert len(warns) <= 1, f"{len(warns)} warnings in 8 s"
    return f"{new} log lines in 8 s ({len(warns)} at warn level)"


def after_restart(args):
    check("scram-credentials-survive-a-restart",
          lambda: _metadata(scram_conf(args, "bob", "bob-secret", "SCRAM-SHA-256"), args.sasl_ssl))
    check("storage-format-super-user-survives-a-restart",
          lambda: _metadata(scram_conf(args, "admin", "admin-secret"), args.sasl_ssl))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["main", "after-restart"])
    ap.add_argument("--certs", required=True)
    ap.add_argument("--plaintext", required=True)
    ap.add_argument("--ssl", required=True)
    ap.add_argument("--sasl-ssl", required=True)
    ap.add_argument("--sasl-plaintext", required=True)
    ap.add_argument("--server-log", required=True)
    args = ap.parse_args()
    (main_step if args.step == "main" else after_restart)(args)
    passed = sum(1 for _, ok in results if ok)
    print(f"{passed} passed, {len(results) - passed} failed")
    sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
    main()
