"""Writes this directory's fixtures from a running redis-server 7.0
(Debian's 7.0.15 made the committed ones): three streams DUMPed by Redis
(big.bin: 246 entries in three LZF-compressed listpack nodes, entries with
their node's fields and with others, deletions, two groups with pending
entries and four consumers; small.bin: one entry; empty.bin: every entry
deleted, a group named by an integer), and replies.resp: Redis's replies,
byte for byte, to reads of each after RESTORE.

    python3 make.py [PORT]   (default 6379; the server is written to)
"""
import socket
import sys

import redis

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 6379


def request(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def raw(args):
    s = socket.create_connection(("127.0.0.1", PORT))
    s.sendall(request(args))
    s.settimeout(0.3)
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except socket.timeout:
        pass
    s.close()
    return data


def build(r):
    r.delete("s", "small", "empty")
    for i in range(1, 251):
        fields = {"name": f"n{i}", "count": str(i * -37)}
        if i % 7 == 0:
            fields = {"name": f"n{i}", "count": str(i), "extra": "x"}
        r.xadd("s", fields, id=f"{1000 + i // 3}-{i}")
    r.xdel("s", "1000-1", "1001-5", "1033-100", "1083-250")
    r.xgroup_create("s", "g1", id="0")
    r.xgroup_create("s", "g2", id="1010-31")
    r.xreadgroup("g1", "alice", {"s": ">"}, count=3)
    r.xreadgroup("g1", "bob", {"s": ">"}, count=2)
    r.xreadgroup("g2", "carol", {"s": ">"}, count=1)
    r.xack("s", "g1", "1000-3")
    r.execute_command("XGROUP", "CREATECONSUMER", "s", "g1", "dave")
    r.xadd("small", {"a": "1"}, id="5-5")
    r.xadd("empty", {"a": "1"}, id="7-1")
    r.xdel("empty", "7-1")
    r.xgroup_create("empty", "12345", id="$")


def queries(k):
    return [["XRANGE", k, "-", "+"], ["XREVRANGE", k, "+", "-", "COUNT", "3"],
            ["XINFO", "STREAM", k], ["XINFO", "STREAM", k, "FULL"], ["XINFO", "GROUPS", k],
            ["XPENDING", k, "g1"], ["XPENDING", k, "g2"], ["XLEN", k]]


def main():
    r = redis.Redis(port=PORT, protocol=2)
    build(r)
    replies = b""
    for key, name in [("s", "big"), ("small", "small"), ("empty", "empty")]:
        payload = r.execute_command("DUMP", key)
        open(f"{name}.bin", "wb").write(payload)
        raw(["RESTORE", "r_" + key, "0", payload, "REPLACE"])
        for q in queries("r_" + key):
            replies += b"> " + " ".join(q).encode() + b"\n" + raw(q) + b"\n<<END>>\n"
    open("replies.resp", "wb").write(replies)


main()
