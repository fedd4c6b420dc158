#!/usr/bin/env python3
"""RSS per idle connection of a running `groupcoord serve` (issue 17).

    pkg-scripts/bench-idle-connections.py --addr 127.0.0.1:PORT --pid PID [--connections 5000]

Opens the connections; each sends a few pipelined requests (ApiVersions v3 and Metadata v12,
~200 bytes) and reads the answers, as a client does before it idles, then stays open without
sending anything. The server's VmRSS (from /proc/PID/status) is read before, while they are held
(after 2 s), and after they are closed; the report is the RSS delta per held connection.
"""
import argparse
import socket
import struct
import time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")


def frame(key, version, corr, body, flexible):
    client = b"idle"
    header = struct.pack(">hhih", key, version, corr, len(client)) + client
    if flexible:
        header += b"\x00"  # no tagged fields
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def api_versions(corr):
    # v3: client software name and version (compact strings), no tagged fields.
    body = b"\x05idle" + b"\x041.0" + b"\x00"
    return frame(18, 3, corr, body, True)


def metadata(corr):
    # v12: topics null (compact array length 0), allow auto create false, include topic
    # authorized operations false, no tagged fields.
    body = b"\x00" + b"\x00" + b"\x00" + b"\x00"
    return frame(3, 12, corr, body, True)


def read_frame(s):
    head = b""
    while len(head) < 4:
        chunk = s.recv(4 - len(head))
        if not chunk:
            raise ConnectionError("closed")
        head += chunk
    n = struct.unpack(">i", head)[0]
    got = 0
    while got < n:
        chunk = s.recv(min(65536, n - got))
        if not chunk:
            raise ConnectionError("closed")
        got += len(chunk)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--addr", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--connections", type=int, default=5000)
    a = p.parse_args()
    host, port = a.addr.rsplit(":", 1)
    before = rss_kb(a.pid)
    socks = []
    t0 = time.time()
    for i in range(a.connections):
        s = socket.create_connection((host, int(port)))
        s.sendall(api_versions(1) + metadata(2))
        read_frame(s)
        read_frame(s)
        socks.append(s)
    opened = time.time() - t0
    time.sleep(2)
    held = rss_kb(a.pid)
    for s in socks:
        s.close()
    time.sleep(2)
    after = rss_kb(a.pid)
    per = (held - before) * 1024 / max(1, a.connections)
    print(
        f"{a.connections} connections (each answered ApiVersions + Metadata, then idle), "
        f"opened in {opened:.1f} s: RSS before {before / 1024:.1f} MB, held {held / 1024:.1f} MB, "
        f"after close {after / 1024:.1f} MB; {per / 1024:.1f} KiB per idle connection"
    )


if __name__ == "__main__":
    main()
