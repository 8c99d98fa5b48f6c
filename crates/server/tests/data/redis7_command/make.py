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


# COMMAND GETKEYS and GETKEYSANDFLAGS of lines whose keys Redis finds by
# every route: key specs (index, keyword, range, key count), its own code
# (SORT, SET's GET, BITFIELD, XREAD, GEORADIUS's STORE, a key count it
# cannot use), and its errors.
GETKEYS = tuple(["COMMAND", sub] + line.split() for sub in ("GETKEYS", "GETKEYSANDFLAGS") for line in [
    "GET k", "GET", "SET k v", "SET k v EX 10 get", "MSET a 1 b 2", "PING", "NOSUCH x",
    "CONFIG GET x", "OBJECT ENCODING k", "EVAL s 0", "EVAL s 2 a b c", "EVAL s 3 a b",
    "EVAL s x a", "FCALL f 1 a", "ZUNIONSTORE d 2 a b", "ZUNIONSTORE d 5 a b", "ZUNION 2 a b",
    "LMPOP 2 a b LEFT", "BLMPOP 0 2 a b LEFT", "XREAD COUNT 2 STREAMS a b 0 0", "XREAD STREAMS a",
    "XREADGROUP GROUP g c NOACK STREAMS s t > >", "SORT k BY x GET y STORE d",
    "SORT k STORE d LIMIT 0 1 STORE e", "SORT_RO k BY x", "BITFIELD k GET u8 0",
    "BITFIELD k OVERFLOW SAT INCRBY u8 0 1", "GEORADIUS k 0 0 1 km STOREDIST d STORE e",
    "GEOSEARCHSTORE d s FROMMEMBER m BYRADIUS 1 km", "BLPOP a b 0", "LMOVE a b LEFT RIGHT",
    "PFMERGE d a b", "SUBSCRIBE c", "XGROUP CREATE s g $"])


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
                  ["COMMAND", "FOO"], ["COMMAND", "COUNT", "x"], ["COMMAND", "HELP"]) + GETKEYS:
            out += b"> " + " ".join(q).encode() + b"\n" + reply_to(s, q) + b"\n<<END>>\n"
        open(f"replies{proto}.resp", "wb").write(out)


main()
