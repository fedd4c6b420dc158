"""Passive tap on the loopback interface: which (api key, version) each Kafka client sends to a port.

    python apitap.py PORT OUT     (root: an AF_PACKET socket on lo; stops on SIGTERM/SIGINT)

Reads the TCP segments sent to 127.0.0.1:PORT, follows each connection's byte stream (in order;
a gap drops that connection's framing until its next connection) and parses every request header
(size, api_key, api_version, correlation id, client id). Nothing is forwarded or changed: clients
talk to the server directly. On exit writes OUT: one line per client id with the versions of each
key it sent, and prints the same.
"""
import signal
import socket
import struct
import sys

NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
         10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
         15: "DescribeGroups", 16: "ListGroups", 18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics",
         22: "InitProducerId", 23: "OffsetForLeaderEpoch", 32: "DescribeConfigs", 36: "SaslHandshake",
         42: "DeleteGroups", 47: "OffsetDelete", 60: "DescribeCluster", 68: "ConsumerGroupHeartbeat",
         69: "ConsumerGroupDescribe", 75: "DescribeTopicPartitions", 71: "GetTelemetrySubscriptions", 72: "PushTelemetry"}
MAX_FRAME = 64 << 20


class Flow:
    def __init__(self, seq):
        self.next_seq = seq
        self.buf = b""
        self.skip = 0  # body bytes of the current frame still to pass over
        self.client = "?"


def main():
    port, out_path = int(sys.argv[1]), sys.argv[2]
    seen = {}  # client id -> {api key: set(versions)}
    flows = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind(("lo", 0))
    s.settimeout(0.5)
    while not stop:
        try:
            pkt, addr = s.recvfrom(65565)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] == socket.PACKET_OUTGOING:  # loopback shows each packet twice
            continue
        ip = pkt[14:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:total]
        if len(tcp) < 20:
            continue
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        if dport != port:
            continue
        flags = tcp[13]
        payload = tcp[(tcp[12] >> 4) * 4:]
        if flags & 0x02:  # SYN: a new connection
            flows[sport] = Flow((seq + 1) & 0xFFFFFFFF)
            continue
        f = flows.get(sport)
        if f is None or not payload:
            continue
        if seq != f.next_seq:
            if (seq - f.next_seq) & 0xFFFFFFFF > 0x7FFFFFFF:  # retransmission of old bytes
                continue
            flows.pop(sport)  # a gap: give up on this connection
            continue
        f.next_seq = (seq + len(payload)) & 0xFFFFFFFF
        data = payload
        while data:
            if f.skip:
                n = min(f.skip, len(data))
                f.skip -= n
                data = data[n:]
                continue
            f.buf += data
            data = b""
            if len(f.buf) < 14:
                break
            size, key, ver, _corr, clen = struct.unpack(">ihhih", f.buf[:14])
            if size < 10 or size > MAX_FRAME:
                flows.pop(sport, None)
                break
            if clen > 0 and len(f.buf) < 14 + clen:
                break
            client = f.buf[14:14 + clen].decode("utf-8", "replace") if clen > 0 else "(null)"
            seen.setdefault(client, {}).setdefault(key, set()).add(ver)
            frame = 4 + size
            rest = f.buf[frame:] if len(f.buf) >= frame else b""
            f.skip = max(0, frame - len(f.buf))
            f.buf = b""
            data = rest
    lines = []
    for client in sorted(seen):
        keys = seen[client]
        lines.append(client + ": " + ", ".join(
            f"{NAMES.get(k, 'key' + str(k))}({k}) v{'/'.join(map(str, sorted(v)))}" for k, v in sorted(keys.items())))
    with open(out_path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
