"""Writes replies2.resp and replies3.resp: redis-server 7.0's replies, byte
for byte, to COMMAND INFO and COMMAND DOCS of commands of every kind of key
spec (none, one range, several, keyword, keynum, incomplete) and every
kind of argument, in RESP2 and RESP3 (after HELLO 3). Records are
`> request words`, a newline, the raw reply, a newline and `<<END>>`.
Commands with subcommands are left out: Redis lists those in its hash
table's order, seeded at random when it starts.

    python3 make.py [PORT]   (default 6379)
"""
import socket
import sys

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 6379
COMMANDS = ["get", "set", "mset", "del", "xread", "xreadgroup", "eval", "fcall", "zunionstore",
            "sort", "blpop", "lmpop", "bzmpop", "georadius", "geosearchstore", "rpoplpush", "lcs",
            "bitfield", "ping", "hello", "subscribe", "publish", "sintercard", "getex",
            "object|encoding", "xinfo|stream", "config|get", "client|kill", "nosuch"]


def request(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        out += b"$%d\r\n%s\r\n" % (len(a), a.encode())
    return out


def reply_to(s, args):
    s.sendall(request(args) + request(["PING"]))
    data = b""
    while not data.endswith(b"+PONG\r\n"):
        data += s.recv(65536)
    return data[:-7]


def main():
    for proto in ("2", "3"):
        s = socket.create_connection(("127.0.0.1", PORT))
        if proto == "3":
            reply_to(s, ["HELLO", "3"])
        out = b""
        for name in COMMANDS:
            for q in (["COMMAND", "INFO", name], ["COMMAND", "DOCS", name]):
                out += b"> " + " ".join(q).encode() + b"\n" + reply_to(s, q) + b"\n<<END>>\n"
        for q in (["COMMAND", "INFO", "get", "nosuch", "SET"], ["COMMAND", "DOCS", "nosuch"],
                  ["COMMAND", "LIST", "FILTERBY", "MODULE", "x"],
                  ["COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"],
                  ["COMMAND", "LIST", "FILTERBY", "FOO", "x"], ["COMMAND", "LIST", "x"],
                  ["COMMAND", "FOO"], ["COMMAND", "COUNT", "x"], ["COMMAND", "HELP"]):
            out += b"> " + " ".join(q).encode() + b"\n" + reply_to(s, q) + b"\n<<END>>\n"
        open(f"replies{proto}.resp", "wb").write(out)


main()
