#!/usr/bin/env python3
"""slsm serve against redis-server, reply by reply: seeded random sequences
of the string, list, hash, set, sorted-set, geo, key and transaction commands
(over the same few keys, so commands meet keys of other kinds; with
edge-case arguments:
"-0", "+1", " 1", overflowing integers and times, floats with exponents,
NaN and infinities, embedded NUL bytes, wrong arities, unknown options,
server commands inside MULTI) sent to both on one connection each; every
reply must be the same, and after every command outside MULTI the values
and expiry states of all keys must be too. A second client writes now and
then (so that WATCH sees other clients' writes), now and then a pipeline of
the commands the server groups into one engine call (GETs, SETs and MSETs,
INCR and friends, with others between) is sent at once, and every other
sequence runs in RESP3. Every 100 commands each key is DUMPed by each
server and RESTOREd by the other, and must arrive intact. Exit status 1 on
a difference, printing the command, both replies and the commands before
it.

    bench/redis/differential.py [--slsm target/release/slsm] [--seeds 1-5]
                                [--steps 3000] [--jobs N]

Sequences run in parallel, one per core unless --jobs says otherwise (each
has its own pair of servers); their reports are printed in seed order.

Not compared, because Redis leaves them unspecified or they race the clock:
the order of KEYS, of a set's members and of a hash's fields (replies are
sorted before comparing), which members SPOP and SRANDMEMBER pick (only
counts that take the whole set are sent), times the two servers computed a few milliseconds apart
(TTL, PTTL, and EXPIRETIME of a relative expiry: within 5 units), and
database numbers other than 0 (slsm serve has one database; SELECT 1 is
refused). Only times that cannot expire during a run are generated.
Member ranges (BYLEX) are sent with bounds only to keys whose members all
have one score, since Redis defines them only there. Stream entries get
explicit IDs; claims use a minimum idle time of 0 and XPENDING's ranges
only forms that print no idle time; XADD and XTRIM do not send `~` (slsm
trims exactly where Redis keeps whole nodes).
"""
import argparse
import contextlib
import io
import multiprocessing
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

KEYS = ["a", "b", "c", "n", "f", "{t}x", "e"]
NUMS = ["0", "1", "-1", "10", "9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "1.5", "abc", "", " 1", "01", "+1", "1e3", "-0",
        "3.0e2", "inf", "-inf", "nan", "0x10", "100000000000000000000", "1e400",
        "-1e-400", "0.1", "5.0e3", "1 ", "\x001"]
# Times: none short enough to expire while a sequence runs.
TIMES = ["0", "-1", "100000", "9223372036854775807", "-9223372036854775808",
         "abc", "-0", "1.5", "", "922337203685477", "9223372036854775",
         "9223372036854"]
VALS = ["v", "", "hello world", "123", "-5", "1.5", "x" * 20, "\x00\xff"]


def k(): return random.choice(KEYS)
def n(): return random.choice(NUMS)
def t(): return random.choice(TIMES)
def v(): return random.choice(VALS + NUMS)


def pairs(lo, hi):
    return [x for _ in range(random.randint(lo, hi)) for x in (k(), v())]


MEMBERS = ["m1", "m2", "m3", "x", "", "\x00z"]
SCORES = ["0", "1", "-1", "1.5", "-2.5", "inf", "-inf", "+inf", "1e3", "0x10", "abc",
          "nan", "", "1e400", "3", "-0"]
BOUNDS = SCORES + ["(1", "(-inf", "(1.5", "(", "(abc"]
INDEXES = ["0", "1", "-1", "2", "-2", "10", "-10", "abc", "9223372036854775807",
           "-9223372036854775808"]


# Member ranges (BYLEX) are defined only on a sorted set whose members
# share one score: these keys get members of score 0 and nothing else.
LEX_KEYS = ["lx1", "lx2"]
LEX = ["-", "+", "[m1", "(m1", "[m2", "(x", "[", "(", "[\x00z", "m1", "", "+x", "(m3"]
# Keys that only ever hold sorted sets (of any scores): inputs of the
# algebra that are neither missing nor of another type.
ZKEYS = ["z1", "z2"]
WEIGHTS = ["1", "2", "-1", "0", "inf", "-inf", "0.5", "x", "nan", ""]


def m(): return random.choice(MEMBERS)
def lk(): return random.choice(LEX_KEYS)
def lex(): return random.choice(LEX)


def multi_pop():
    name = random.choice(["LMPOP", "ZMPOP", "BLMPOP", "BZMPOP"])
    keys = [random.choice(KEYS + ZKEYS) for _ in range(random.randint(1, 3))]
    numkeys = str(len(keys)) if random.random() < 0.9 else random.choice(["0", "-1", "x", "5"])
    end = random.choice(["LEFT", "right", "MIN", "max", "up"])
    options = random.choice([[], [], ["COUNT", random.choice(["1", "2", "10", "0", "-1", "x"])],
                             ["COUNT"], ["COUNT", "1", "COUNT", "1"], ["FOO"]])
    timeout = [random.choice(["0.01", "x", "-1"])] if name.startswith("B") else []
    return [name] + timeout + [numkeys] + keys + [end] + options


# Keys that only ever hold streams; their entries get explicit IDs (an
# automatic one is the server's clock).
XKEYS = ["x1", "x2"]
XIDS = ["1", "1-1", "2-*", "3", "3-0", "5-*", "0-0", "0-1", "7-2", "-", "+", "bad", "9-x",
        "18446744073709551615-18446744073709551615", " 4", "(3", "(3-0", "(", "(-", "$", ">"]


def xk(): return random.choice(XKEYS + XKEYS + [k()])
def grp(): return random.choice(["g1", "g2", "g1"])
def cons(): return random.choice(["c1", "c2", ""])
def xid(): return random.choice(XIDS)


def add_id():
    """An XADD ID: one of XIDS, or one that grows over a run often enough
    for streams to keep taking entries."""
    return random.choice([xid(), f"{random.randint(1, 500)}-*", str(random.randint(1, 500))])


def stream_command():
    fields = [x for _ in range(random.randint(0, 2)) for x in (m(), v())]
    trim = random.choice([[], [], ["MAXLEN", random.choice(["0", "1", "3", "-1", "x"])],
                          ["MAXLEN", "=", "2"], ["MINID", xid()], ["MINID", "=", "3"],
                          ["LIMIT", "1"], ["NOMKSTREAM"],
                          ["MAXLEN", "1", "MINID", "1"]])
    return random.choice([
        lambda: ["XADD", random.choice(XKEYS)] + trim + [add_id()] + fields,
        lambda: ["XADD", random.choice(XKEYS), add_id(), m(), v()],
        lambda: ["XADD", xk()] + trim + [xid()] + fields,
        lambda: ["XLEN", xk()],
        lambda: [random.choice(["XRANGE", "XREVRANGE"]), xk(), xid(), xid()]
        + random.choice([[], ["COUNT", random.choice(["0", "1", "2", "-1", "x"])], ["FOO"]]),
        lambda: ["XDEL", xk()] + [xid() for _ in range(random.randint(1, 3))],
        lambda: ["XTRIM", xk()] + (trim or ["MAXLEN", "2"]),
        lambda: ["XGROUP", random.choice(["CREATE", "create"]), xk(), grp(), xid()]
        + random.choice([[], [], ["MKSTREAM"], ["ENTRIESREAD", "3"], ["FOO"]]),
        lambda: ["XGROUP", random.choice(["SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER",
                                          "FOO"]), xk(), grp()]
        + random.choice([[], [xid()], [cons()]]),
        lambda: ["XREADGROUP", "GROUP", grp(), cons()]
        + random.choice([[], ["COUNT", random.choice(["1", "2", "x"])], ["NOACK"],
                         ["BLOCK", "10"]])
        + ["STREAMS"] + random.choice([[xk(), ">"], [xk(), xid()], [xk(), xk(), ">", ">"], [xk()]]),
        lambda: ["XACK", xk(), grp()] + [xid() for _ in range(random.randint(1, 2))],
        lambda: ["XPENDING", xk(), grp()] + random.choice(
            [[], [], ["-", "+", "10", "nobody"], ["-", "+", "x"], ["IDLE", "5", "-", "+"]]),
        lambda: ["XCLAIM", xk(), grp(), cons(), random.choice(["0", "x"])]
        + [xid() for _ in range(random.randint(1, 2))]
        + random.choice([[], ["JUSTID"], ["FORCE", "JUSTID"], ["RETRYCOUNT", "3"],
                         ["LASTID", xid()], ["FOO"]]),
        lambda: ["XAUTOCLAIM", xk(), grp(), cons(), random.choice(["0", "x"]), xid()]
        + random.choice([[], ["COUNT", random.choice(["1", "2", "0"])], ["JUSTID"], ["FOO"]]),
        lambda: ["XINFO", "STREAM", xk()] + random.choice(
            [[], [], ["FULL"], ["FULL", "COUNT", random.choice(["1", "0", "-1", "x"])], ["FOO"]]),
        lambda: ["XINFO", random.choice(["GROUPS", "groups"]), xk()],
        lambda: ["XINFO", "CONSUMERS", xk(), grp()],
        lambda: ["XINFO"] + random.choice([["HELP"], ["FOO"], ["STREAM"], ["HELP", "x"]]),
        lambda: ["XSETID", xk(), xid()] + random.choice(
            [[], ["ENTRIESADDED", random.choice(["5", "-1", "100", "x"])],
             ["MAXDELETEDID", xid()], ["ENTRIESADDED", "50", "MAXDELETEDID", xid()], ["FOO"]]),
        lambda: ["XREAD"] + random.choice([[], ["COUNT", random.choice(["1", "0", "x"])],
                                           ["BLOCK", random.choice(["10", "-1", "x"])]])
        + ["STREAMS"] + random.choice([[xk(), xid()], [xk(), xk(), xid(), xid()], [xk()]]),
    ])()


def zset_algebra():
    name = random.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE",
                          "ZDIFFSTORE", "ZINTERCARD"])
    keys = [random.choice(KEYS + LEX_KEYS + ZKEYS * 4) for _ in range(random.randint(1, 3))]
    numkeys = str(len(keys)) if random.random() < 0.9 else random.choice(["0", "-1", "x", "5"])
    options = random.choice([
        [], ["WEIGHTS"] + [random.choice(WEIGHTS) for _ in keys],
        ["WEIGHTS"] + [random.choice(["2", "-1", "0.5", "3", "inf"]) for _ in keys],
        ["WEIGHTS"] + [random.choice(["2", "-1", "0.5", "3"]) for _ in keys] + ["WITHSCORES"],
        ["AGGREGATE", random.choice(["SUM", "min", "MAX", "avg"])], ["WITHSCORES"],
        ["LIMIT", random.choice(["0", "1", "2", "-1", "x"])], ["WEIGHTS", "1"], ["AGGREGATE"],
        ["WEIGHTS"] + ["2" for _ in keys] + ["AGGREGATE", "max", "WITHSCORES"]])
    return [name] + ([k()] if name.endswith("STORE") else []) + [numkeys] + keys + options
def sc(): return random.choice(SCORES)
def ix(): return random.choice(INDEXES)


# Geo sets: points near a few places (so searches find some, at equal
# distances too), and edge coordinates.
GKEYS = ["g1", "g2"]
PLACES = [(13.36, 38.11), (15.08, 37.50), (0.0, 0.0), (179.99, -60.0), (-73.98, 40.75)]
EDGES = ["180", "-180", "85.05112878", "-85.05112878", "85.06", "181", "0", "-0", "1e-300",
         "x", "inf", "nan", ""]


def gk(): return random.choice(GKEYS + GKEYS + [k()])


def lonlat():
    if random.random() < 0.1:
        return [random.choice(EDGES), random.choice(EDGES)]
    lon, lat = random.choice(PLACES)
    spread = random.choice([0.0, 0.001, 0.1, 1.0])
    return ["%.4f" % max(-180, min(180, lon + random.uniform(-spread, spread))),
            "%.4f" % max(-85, min(85, lat + random.uniform(-spread, spread)))]


def geo_units(): return [random.choice(["1", "10", "100", "1000", "0", "-1", "x", "inf"]),
                         random.choice(["m", "KM", "km", "mi", "ft", "au"])]


def geo_options(store):
    o = random.sample(["WITHDIST", "WITHHASH", "WITHCOORD", "ASC", "DESC", "ANY"],
                      random.randint(0, 3))
    if random.random() < 0.4:
        o += ["COUNT", random.choice(["1", "2", "3", "0", "-1", "x"])]
    if store and random.random() < 0.2:
        o += [random.choice(["STORE", "STOREDIST"]), gk()]
    random.shuffle(o)
    return o


# DUMP payloads from redis-server 7.0 (a string, a list, a sorted set, a
# stream with a group, a consumer and a pending entry), one damaged, and no
# payload at all.
PAYLOADS = [b"\x00\x05hello\n\x00cr\xdfve4 \n",
            b"\x12\x01\x02\x0f\x0f\x00\x00\x00\x03\x00\x81a\x02\x81b\x02\x01\x01\xff\n\x00"
            b"\xe0\x1b\xabJG\xceY\"",
            b"\x11\x14\x14\x00\x00\x00\x04\x00\x81m\x02\x831.5\x04\x81n\x02\x02\x01\xff\n\x00"
            b"\xf1\xb0:mX_i8",
            b"\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x0500"
            b"\x00\x00\x00\x13\x00\x02\x01\x00\x01\x01\x01\x81a\x02\x00\x01\x02\x01\x00\x01"
            b"\x00\x01\x01\x01\x04\x01\x00\x01\x00\x01\x01\x01\x02\x01\x81b\x02\x02\x01\x81c"
            b"\x02\x03\x01\x08\x01\xff\x02\x05\x06\x05\x05\x00\x00\x02\x01\x02g1\x05\x05\x01"
            b"\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x05\xe2!!\x1f"
            b"\xa2\x01\x00\x00\x01\x01\x02c1\xe2!!\x1f\xa2\x01\x00\x00\x01\x00\x00\x00\x00"
            b"\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x05\n\x00RY@t8u\x90\xe0",
            b"\x00\x05hellp\n\x00cr\xdfve4 \n", b"junk", b""]


def restore_command():
    """RESTORE with a TTL that cannot expire during the run, or one that
    has already (an absolute 1)."""
    ttl, options = random.choice([("0", []), ("100000", []), ("1", ["ABSTTL"]), ("-1", []),
                                  ("x", []), ("0", ["REPLACE"]), ("100000", ["REPLACE"]),
                                  ("1", ["ABSTTL", "REPLACE"]), ("0", ["IDLETIME", "5"]),
                                  ("0", ["FREQ", "300"]), ("0", ["FOO"]),
                                  ("0", ["IDLETIME", "1", "FREQ", "1"])])
    return ["RESTORE", k(), ttl, random.choice(PAYLOADS)] + options


def geo_command():
    return random.choice([
        lambda: ["GEOADD", gk()] + random.choice([[], [], ["NX"], ["XX"], ["CH"], ["XX", "CH"], ["GT"]])
        + [x for _ in range(random.randint(1, 3)) for x in lonlat() + [m()]],
        lambda: [random.choice(["GEOPOS", "GEOHASH"]), gk()] + [m() for _ in range(random.randint(0, 3))],
        lambda: ["GEODIST", gk(), m(), m()] + random.choice([[], ["km"], ["mi"], ["au"], ["m", "x"]]),
        lambda: [random.choice(["GEORADIUS", "GEORADIUS_RO"]), gk()] + lonlat() + geo_units()
        + geo_options(True),
        lambda: [random.choice(["GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"]), gk(), m()]
        + geo_units() + geo_options(True),
        lambda: ["GEOSEARCH", gk()]
        + random.choice([["FROMMEMBER", m()], ["FROMLONLAT"] + lonlat(), []])
        + random.choice([["BYRADIUS"] + geo_units(), ["BYBOX", random.choice(["1", "100", "500"])]
                         + geo_units(), []]) + geo_options(False),
        lambda: ["GEOSEARCHSTORE", gk(), gk()]
        + random.choice([["FROMMEMBER", m()], ["FROMLONLAT"] + lonlat()])
        + random.choice([["BYRADIUS"] + geo_units(), ["BYBOX", "200"] + geo_units()])
        + random.choice([[], ["STOREDIST"], ["WITHDIST"], ["COUNT", "2"], ["COUNT", "2", "ANY"]]),
    ])()


# Function libraries of one function each (FUNCTION LIST orders a
# library's functions by Redis's hash table), some in two versions.
LIBRARIES = [
    "#!lua name=fa\nredis.register_function('fset', function(keys, args) "
    "return redis.call('set', keys[1], args[1]) end)",
    "#!lua name=fa\nredis.register_function('fset', function(keys, args) "
    "return {redis.call('set', keys[1], args[1] or 'none'), 'v2', #keys} end)",
    "#!lua name=fb\nredis.register_function{function_name='fget', flags={'no-writes'}, "
    "description='reads', callback=function(keys) return redis.call('get', keys[1]) end}",
    "#!lua name=fc\nredis.register_function('fincr', function(keys, args) "
    "return redis.call('incrby', keys[1], args[1]) end)",
    "#!lua name=fd\nredis.register_function('fpush', function(keys, args) "
    "return redis.pcall('rpush', keys[1], unpack(args)) end)",
    "#!lua name=fe\nredis.register_function('fa', function() return 1 end)",
    "#!lua name=fa\nlocal x = (",
]
FUNCTIONS = ["fset", "fget", "fincr", "fpush", "fa", "FSET", "nosuch"]


def function_command():
    return random.choice([
        lambda: ["FUNCTION", "LOAD"] + random.choice([[], ["REPLACE"]])
        + [random.choice(LIBRARIES)],
        lambda: [random.choice(["FCALL", "FCALL", "FCALL_RO"]), random.choice(FUNCTIONS)]
        + random.choice([["1", k(), v()], ["1", k(), n()], ["0"], ["2", k()], ["x"],
                         ["1", k(), v(), v()]]),
        lambda: ["FUNCTION", "DELETE", random.choice(["fa", "fb", "fc", "fd", "fe", "x"])],
        lambda: ["FUNCTION", "LIST", "LIBRARYNAME", random.choice(["fa", "fb", "fd", "x"])]
        + random.choice([[], ["WITHCODE"]]),
        lambda: ["FUNCTION", random.choice(["STATS", "FLUSH", "KILL"])],
    ])()


def collection_command():
    return random.choice([
        lambda: [random.choice(["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]), k()]
        + [v() for _ in range(random.randint(0, 3))],
        lambda: [random.choice(["LPOP", "RPOP"]), k()]
        + random.choice([[], ["1"], ["2"], ["0"], ["-1"], ["abc"], ["1", "2"]]),
        lambda: ["LLEN", k()],
        lambda: ["LRANGE", k(), ix(), ix()],
        lambda: ["LRANGE", k(), "0", "-1"],
        lambda: ["LINDEX", k(), ix()],
        lambda: ["LSET", k(), ix(), v()],
        lambda: ["LTRIM", k(), ix(), ix()],
        lambda: ["LREM", k(), random.choice(["0", "1", "-1", "2", "x"]), v()],
        lambda: ["LINSERT", k(), random.choice(["BEFORE", "after", "middle"]), v(), v()],
        lambda: ["RPOPLPUSH", k(), k()],
        lambda: ["LMOVE", k(), k(), random.choice(["LEFT", "right", "up"]),
                 random.choice(["left", "RIGHT"])],
        lambda: [random.choice(["HSET", "HMSET"]), k()]
        + [x for _ in range(random.randint(0, 3)) for x in (m(), v())]
        + random.choice([[], [], [m()]]),
        lambda: ["HSETNX", k(), m(), v()],
        lambda: ["HGET", k(), m()],
        lambda: ["HMGET", k()] + [m() for _ in range(random.randint(0, 3))],
        lambda: ["HDEL", k()] + [m() for _ in range(random.randint(0, 3))],
        lambda: [random.choice(["HLEN", "HGETALL", "HKEYS", "HVALS"]), k()],
        lambda: [random.choice(["HEXISTS", "HSTRLEN"]), k(), m()],
        lambda: ["HINCRBY", k(), m(), n()],
        lambda: ["HINCRBYFLOAT", k(), m(), n()],
        lambda: ["SADD", k()] + [m() for _ in range(random.randint(0, 3))],
        lambda: ["SREM", k()] + [m() for _ in range(random.randint(0, 3))],
        lambda: ["SISMEMBER", k(), m()],
        lambda: ["SMISMEMBER", k()] + [m() for _ in range(random.randint(0, 3))],
        lambda: [random.choice(["SMEMBERS", "SCARD"]), k()],
        lambda: ["SPOP", k()] + random.choice([["100"], ["0"], ["-1"], ["abc"], ["1", "2"]]),
        lambda: ["SRANDMEMBER", k()] + random.choice(
            [["100"], ["0"], ["abc"], ["-9223372036854775808"]]),
        lambda: ["SMOVE", k(), k(), m()],
        lambda: [random.choice(["SINTER", "SUNION", "SDIFF"])] + [k() for _ in range(random.randint(0, 3))],
        lambda: [random.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"])]
        + [k() for _ in range(random.randint(0, 4))],
        lambda: ["SINTERCARD", random.choice(["0", "1", "2", "3", "x"])]
        + [k() for _ in range(random.randint(0, 3))]
        + random.choice([[], ["LIMIT", random.choice(["0", "1", "-1", "x"])], ["LIMIT"], ["FOO", "1"]]),
        lambda: ["LPOS", k(), v()] + random.choice(
            [[], ["RANK", ix()], ["COUNT", random.choice(["0", "1", "2", "-1", "x"])],
             ["MAXLEN", random.choice(["0", "2", "-1"])], ["RANK", "-1", "COUNT", "0"],
             ["RANK", "0"], ["FOO"], ["RANK"]]),
        lambda: ["ZADD", k()] + random.sample(["NX", "XX", "GT", "LT", "CH", "INCR"], random.randint(0, 2))
        + [x for _ in range(random.randint(0, 3)) for x in (sc(), m())],
        lambda: ["ZINCRBY", k(), sc(), m()],
        lambda: ["ZSCORE", k(), m()],
        lambda: ["ZMSCORE", k()] + [m() for _ in range(random.randint(0, 3))],
        lambda: ["ZCARD", k()],
        # SORT, leaving out ALPHA by a pattern: Redis orders equal BY
        # values as its qsort leaves them.
        lambda: [random.choice(["SORT", "SORT_RO"]), k()] + random.choice(
            [[], ["ALPHA"], ["DESC"], ["ALPHA", "DESC", "LIMIT", ix(), ix()], ["LIMIT", ix(), ix()],
             ["BY", "nosort"], ["BY", "nosort", "DESC"], ["BY", "*"],
             ["BY", "{t}*", "GET", "#", "GET", "{t}*"], ["GET", "*->m1"], ["STORE", k()],
             ["ALPHA", "STORE", k()], ["BY", "nosort", "STORE", k()], ["FOO"], ["LIMIT", "1"]]),
        # Random picks whose replies chance does not decide: a count
        # covering the whole collection, zero, the errors.
        lambda: [random.choice(["ZRANDMEMBER", "HRANDFIELD"]), k()]
        + random.choice([["1000"], ["0"], ["x"], ["1000", "WITHSCORES"], ["1000", "WITHVALUES"],
                         ["0", "FOO"], ["9223372036854775807", "WITHSCORES"]]),
        lambda: ["ZREM", k()] + [m() for _ in range(random.randint(0, 3))],
        lambda: ["ZCOUNT", k(), random.choice(BOUNDS), random.choice(BOUNDS)],
        lambda: [random.choice(["ZRANK", "ZREVRANK"]), k(), m()],
        lambda: [random.choice(["ZRANGE", "ZREVRANGE"]), k(), ix(), ix()]
        + random.choice([[], ["WITHSCORES"], ["REV"], ["LIMIT", "0", "1"], ["foo"]]),
        lambda: ["ZRANGE", k(), random.choice(BOUNDS), random.choice(BOUNDS), "BYSCORE"]
        + random.choice([[], ["REV"], ["WITHSCORES"], ["LIMIT", ix(), ix()], ["REV", "LIMIT", "1", "2"]]),
        lambda: [random.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]), k(), random.choice(BOUNDS),
                 random.choice(BOUNDS)]
        + random.choice([[], ["WITHSCORES"], ["LIMIT", ix(), ix()], ["LIMIT", "0"], ["REV"]]),
        lambda: [random.choice(["ZPOPMIN", "ZPOPMAX"]), k()]
        + random.choice([[], ["1"], ["2"], ["0"], ["-1"], ["abc"]]),
        lambda: [ELEMENTS_SCAN_ALL, random.choice(["HSCAN", "SSCAN", "ZSCAN"]), k(),
                 random.choice(["*", "a*", "?", "[ab]*"]), random.choice(["1", "2", "100"])],
        # Scans whose replies do not depend on element order: errors, or a
        # missing key's empty scan.
        lambda: [random.choice(["HSCAN", "SSCAN", "ZSCAN"]), k(),
                 random.choice(["0", "abc", "-", " 1"])]
        + random.choice([["COUNT", "0"], ["MATCH"], ["FOO", "1"], ["COUNT", "x"]]),
        # Blocking pops that find something, or wait 10 ms for nothing.
        lambda: [random.choice(["BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX"])]
        + [k() for _ in range(random.randint(1, 3))]
        + [random.choice(["0.01", "x", "-1", "inf", ""])],
        lambda: ["BLMOVE", k(), k(), random.choice(["LEFT", "right", "up"]),
                 random.choice(["left", "RIGHT"]), random.choice(["0.01", "x"])],
        lambda: ["BRPOPLPUSH", k(), k(), random.choice(["0.01", "-0.5"])],
        lambda: multi_pop(),
        lambda: multi_pop(),
        lambda: ["ZREMRANGEBYRANK", k(), ix(), ix()],
        zset_algebra,
        zset_algebra,
        zset_algebra,
        zset_algebra,
        stream_command,
        stream_command,
        stream_command,
        stream_command,
        geo_command,
        geo_command,
        geo_command,
        restore_command,
        function_command,
        function_command,
        lambda: ["ZADD", lk()] + [x for _ in range(random.randint(1, 3)) for x in ("0", m())],
        lambda: ["ZADD", random.choice(ZKEYS)]
        + [x for _ in range(random.randint(1, 3)) for x in (random.choice(["1", "-2.5", "3", "inf", "-inf", "0"]), m())],
        lambda: [random.choice(["ZPOPMIN", "ZREM"]), random.choice(ZKEYS), m()],
        lambda: [random.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"]), lk(), lex(), lex()]
        + random.choice([[], ["LIMIT", ix(), ix()], ["WITHSCORES"], ["LIMIT", "1"]]),
        lambda: ["ZRANGE", lk(), lex(), lex(), "BYLEX"] + random.choice(
            [[], ["REV"], ["LIMIT", ix(), ix()], ["REV", "LIMIT", "0", "2"], ["WITHSCORES"],
             ["BYSCORE"]]),
        lambda: [random.choice(["ZLEXCOUNT", "ZREMRANGEBYLEX"]), lk(), lex(), lex()],
        lambda: [random.choice(["ZLEXCOUNT", "ZRANGEBYLEX", "ZREMRANGEBYLEX"]), k(), "-", "+"],
        lambda: ["ZRANGESTORE", k(), k(), ix(), ix()]
        + random.choice([[], ["REV"], ["WITHSCORES"], ["LIMIT", "0", "1"]]),
        lambda: ["ZRANGESTORE", k(), k(), random.choice(BOUNDS), random.choice(BOUNDS), "BYSCORE"]
        + random.choice([[], ["REV"], ["LIMIT", ix(), ix()]]),
        lambda: ["ZRANGESTORE", k(), lk(), lex(), lex(), "BYLEX"]
        + random.choice([[], ["REV"], ["LIMIT", ix(), ix()]]),
        lambda: ["ZREMRANGEBYSCORE", k(), random.choice(BOUNDS), random.choice(BOUNDS)],
    ])()


# The share of commands drawn from the streams' alone (--streams-share).
STREAM_SHARE = 0.0


def command():
    if random.random() < STREAM_SHARE:
        return stream_command()
    if random.random() < 0.45:
        return collection_command()
    return random.choice([
        lambda: ["GET", k()],
        lambda: ["SET", k(), v()] + random.choice([
            [], ["NX"], ["XX"], ["GET"], ["EX", t()], ["PX", t()], ["KEEPTTL"],
            ["EX", "100", "NX"], ["NX", "XX"], ["EX", "10", "PX", "10"],
            ["GET", "NX"], ["EXAT", n()], ["PXAT", n()], ["FOO"], ["EX"]]),
        lambda: ["SETNX", k(), v()],
        lambda: ["SETEX", k(), t(), v()],
        lambda: ["PSETEX", k(), t(), v()],
        lambda: ["GETDEL", k()],
        lambda: ["GETEX", k()] + random.choice([
            [], ["PERSIST"], ["EX", t()], ["PX", t()], ["EX", "10", "PERSIST"], ["FOO"]]),
        lambda: ["GETSET", k(), v()],
        lambda: ["MGET"] + [k() for _ in range(random.randint(0, 3))],
        lambda: ["MSET"] + pairs(0, 3) + random.choice([[], [k()]]),
        lambda: ["MSETNX"] + pairs(0, 3),
        lambda: ["APPEND", k(), v()],
        lambda: ["STRLEN", k()],
        lambda: ["GETRANGE", k(), n(), n()],
        lambda: ["GETRANGE", k(), "0", "-1"],
        lambda: ["SUBSTR", k(), n(), n()],
        lambda: ["LCS", k(), k()] + random.choice(
            [[], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"], ["IDX", "MINMATCHLEN", random.choice(["2", "-1", "x"])],
             ["LEN", "IDX"], ["FOO"], ["MINMATCHLEN"]]),
        lambda: ["SETRANGE", k(), random.choice(["0", "3", "-1", "abc", "10", "536870912"]), v()],
        lambda: ["SETRANGE", k(), "536870911", ""],
        lambda: ["SETBIT", k(), random.choice(["0", "7", "8", "100", "-1", "abc"]),
                 random.choice(["0", "1", "2"])],
        lambda: ["GETBIT", k(), random.choice(["0", "7", "1000", "-1"])],
        lambda: [random.choice(["BITFIELD", "BITFIELD", "BITFIELD_RO"]), k()] + [
            x for _ in range(random.randint(0, 3)) for x in random.choice([
                ["GET", random.choice(["u8", "i5", "i64", "u63", "u64", "x"]),
                 random.choice(["0", "#1", "13", "-1"])],
                ["SET", random.choice(["u8", "i5", "i64"]), random.choice(["0", "#2", "7"]), n()],
                ["INCRBY", random.choice(["u2", "i8", "i64"]), random.choice(["0", "#1", "9"]), n()],
                ["OVERFLOW", random.choice(["WRAP", "SAT", "FAIL", "FOO"])], ["FOO"]])],
        lambda: ["BITCOUNT", k()] + random.choice([[], [ix(), ix()], [ix(), ix(), "BIT"],
                                                   [ix(), ix(), "BYTE"], [ix()], [ix(), ix(), "X"]]),
        lambda: ["BITPOS", k(), random.choice(["0", "1", "2"])] + random.choice(
            [[], [ix()], [ix(), ix()], [ix(), ix(), "BIT"], [ix(), ix(), "BYTE"]]),
        lambda: ["BITOP", random.choice(["AND", "OR", "XOR", "NOT", "FOO"]), k()]
        + [k() for _ in range(random.randint(1, 3))],
        lambda: [SCAN_ALL, random.choice(["*", "a*", "?", "{*"]), random.choice(["1", "3", "100"])],
        lambda: ["PFADD", k()] + [v() for _ in range(random.randint(0, 4))],
        lambda: ["PFADD", k()] + [str(random.randint(0, 3000)) for _ in range(random.randint(1, 40))],
        lambda: ["PFCOUNT"] + [k() for _ in range(random.randint(0, 3))],
        lambda: ["PFMERGE"] + [k() for _ in range(random.randint(0, 3))],
        lambda: ["INCR", k()],
        lambda: ["DECR", k()],
        lambda: ["INCRBY", k(), n()],
        lambda: ["DECRBY", k(), n()],
        lambda: ["INCRBYFLOAT", k(), n()],
        lambda: ["DEL"] + [k() for _ in range(random.randint(0, 3))],
        lambda: ["UNLINK", k(), k()],
        lambda: ["EXISTS"] + [k() for _ in range(random.randint(0, 3))],
        lambda: ["TOUCH", k(), k()],
        lambda: ["TYPE", k()],
        lambda: ["RENAME", k(), k()],
        lambda: ["COPY", k(), k()] + random.choice([[], ["REPLACE"], ["DB", "0"], ["DB", "x"],
                                                    ["REPLACE", "REPLACE"], ["FOO"], ["DB"]]),
        lambda: ["RENAMENX", k(), k()],
        lambda: ["EXPIRE", k(), t()] + random.choice([[], ["NX"], ["XX"], ["GT"], ["LT"], ["FOO"]]),
        lambda: ["PEXPIRE", k(), t()],
        lambda: ["EXPIREAT", k(), n()],
        lambda: ["PEXPIREAT", k(), n()],
        lambda: ["PERSIST", k()],
        lambda: ["TTL", k()],
        lambda: ["PTTL", k()],
        lambda: ["EXPIRETIME", k()],
        lambda: ["PEXPIRETIME", k()],
        lambda: ["KEYS", random.choice(["*", "a*", "?", "[ab]", "\\*", "{*"])],
        lambda: ["DBSIZE"],
        lambda: ["ECHO", v()],
        lambda: ["PING"],
        lambda: ["PING", v()],
        lambda: ["SELECT", random.choice(["0", "x", "-1"])],
        lambda: ["MULTI"],
        lambda: ["EXEC"],
        lambda: ["DISCARD"],
        lambda: ["WATCH", k()],
        lambda: ["UNWATCH"],
        lambda: [random.choice(["get", "Set", "incr"]), k()],
        lambda: ["STRLEN"],
        lambda: ["GET"],
        lambda: ["SET", k()],
        lambda: ["NOSUCH", "x"],
        # A write by another client (touches the first client's WATCH).
        lambda: [OTHER, "SET", k(), v()],
        lambda: [OTHER, "DEL", k()],
    ])()


# Marks a command sent on the second connection.
OTHER = "@other"
# A whole SCAN (MATCH, COUNT) from cursor 0: the keys it returned, sorted.
SCAN_ALL = "@scan"


# A whole HSCAN, SSCAN or ZSCAN of one key from cursor 0: what it returned
# (field and value, member, member and score), sorted.
ELEMENTS_SCAN_ALL = "@elements-scan"


def elements_scan_all(conn, command, key, pattern, count):
    found, cursor = [], b"0"
    width = 1 if command == "SSCAN" else 2
    for _ in range(10000):
        reply = conn.call([command, key, cursor, "MATCH", pattern, "COUNT", count])
        if not isinstance(reply, tuple):
            return reply
        cursor, batch = reply[1][0][1], [e[1] for e in reply[1][1][1]]
        found.extend(tuple(batch[i:i + width]) for i in range(0, len(batch), width))
        if cursor == b"0":
            return sorted(set(found))
    return "a scan that never ends"


def scan_all(conn, pattern, count):
    keys, cursor = [], b"0"
    for _ in range(10000):
        reply = conn.call(["SCAN", cursor, "MATCH", pattern, "COUNT", count])
        if not isinstance(reply, tuple):
            return reply
        cursor, batch = reply[1][0][1], reply[1][1][1]
        keys.extend(k[1] for k in batch)
        if cursor == b"0":
            return sorted(set(keys))
    return "a SCAN that never ends"


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _fill(self, need):
        while not need():
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("connection closed")
            self.buf += data

    def _line(self):
        self._fill(lambda: b"\r\n" in self.buf)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        self._fill(lambda: len(self.buf) >= n + 2)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind = line[:1]
        if kind in (b"$", b"="):
            size = int(line[1:])
            return line if size < 0 else (kind, self._bytes(size))
        if kind in (b"*", b"~", b">"):
            size = int(line[1:])
            return line if size < 0 else (kind, [self.reply() for _ in range(size)])
        if kind == b"%":
            return (kind, [(self.reply(), self.reply()) for _ in range(int(line[1:]))])
        return line

    def call(self, args):
        return self.pipeline([args])[0]

    def pipeline(self, requests):
        """Sends every request at once, then reads their replies."""
        out = b""
        for args in requests:
            out += b"*%d\r\n" % len(args)
            for a in args:
                a = a.encode() if isinstance(a, str) else a
                out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return [self.reply() for _ in requests]


TIMING = ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME")


# Replies whose order Redis leaves unspecified: sorted before comparing
# (HGETALL's as pairs).
UNORDERED = ("KEYS", "SMEMBERS", "SINTER", "SUNION", "SDIFF", "SPOP", "SRANDMEMBER",
             "HKEYS", "HVALS", "HRANDFIELD")


# XINFO's fields that describe Redis's memory layout or the clock.
INFO_MASKED = (b"radix-tree-keys", b"radix-tree-nodes", b"idle", b"seen-time")


def masked_info(reply):
    """XINFO's reply with layout and times taken out (a delivery time is
    any integer that reads as milliseconds since 2001)."""
    if isinstance(reply, bytes) and reply.startswith(b":") and int(reply[1:]) > 10**12:
        return b":time"
    if not (isinstance(reply, tuple) and isinstance(reply[1], list)):
        return reply
    if reply[0] == b"%":  # RESP3's map: (name, value) pairs
        return (reply[0], [(name, b"masked" if isinstance(name, tuple) and name[1] in INFO_MASKED
                            else masked_info(value)) for name, value in reply[1]])
    items, out = reply[1], []
    for i, item in enumerate(items):
        after_name = i > 0 and isinstance(items[i - 1], tuple) and items[i - 1][1] in INFO_MASKED
        out.append(b"masked" if after_name and i % 2 == 1 else masked_info(item))
    return (reply[0], out)


def masked_idle(reply):
    """XPENDING's entries ([id, consumer, idle, deliveries]) without their
    idle times."""
    if not (isinstance(reply, tuple) and isinstance(reply[1], list)):
        return reply
    entries = [(e[0], e[1][:2] + [b"idle"] + e[1][3:])
               if isinstance(e, tuple) and len(e[1]) == 4 else e for e in reply[1]]
    return (reply[0], entries)


def normalized(reply, args):
    """The reply with what may differ between two correct servers taken out."""
    name = args[0].upper()
    if name in ("SORT", "SORT_RO") and "nosort" in args and "STORE" not in args \
            and isinstance(reply, tuple):
        # A set kept in its own order: its hash order, the server's own.
        return (reply[0], sorted(reply[1], key=repr))
    if name == "XINFO":
        return masked_info(reply)
    if name == "XPENDING" and len(args) > 3:
        return masked_idle(reply)
    if name in UNORDERED and isinstance(reply, tuple):
        return (reply[0], sorted(reply[1], key=repr))
    if name == "HGETALL" and isinstance(reply, tuple):
        items = reply[1]
        if reply[0] == b"*":
            items = list(zip(items[0::2], items[1::2]))
        return (reply[0], sorted(items, key=repr))
    return reply


def integer(reply):
    if isinstance(reply, bytes) and reply.startswith(b":"):
        return int(reply[1:])
    return None


def same(want, got, args):
    """Equal replies; times the two servers set a few milliseconds apart
    (a TTL, or an absolute time computed from one) may differ by that."""
    want, got = normalized(want, args), normalized(got, args)
    if args[0].upper() in TIMING and integer(want) is not None and integer(got) is not None:
        a, b = integer(want), integer(got)
        return a == b or (a >= 0 and b >= 0 and abs(a - b) <= 5)
    return want == got


def same_exec(want, got, queued):
    if isinstance(want, tuple) and isinstance(got, tuple) and len(want[1]) == len(queued):
        return len(got[1]) == len(queued) and all(
            same(w, g, q) for w, g, q in zip(want[1], got[1], queued))
    return want == got


# How to read a key of each type whole.
CONTENT = {b"+string": ["GET"], b"+list": ["LRANGE", "0", "-1"], b"+hash": ["HGETALL"],
           b"+set": ["SMEMBERS"], b"+zset": ["ZRANGE", "0", "-1", "WITHSCORES"],
           b"+stream": ["XRANGE", "-", "+"]}
# What a stream's groups hold, compared after every command too.
GROUP_STATE = [["XPENDING", None, "g1"], ["XPENDING", None, "g2"], ["XINFO", "GROUPS", None],
               ["XINFO", "STREAM", None], ["XPENDING", None, "g1", "-", "+", "100"],
               ["XPENDING", None, "g2", "-", "+", "100"]]


STATE_KEYS = KEYS + LEX_KEYS + ZKEYS + XKEYS + GKEYS


def moved_intact(redis, slsm):
    """Each key DUMPed by either server RESTOREs in the other with the same
    content (a stream with its groups, pending entries and consumers). A
    difference as (key, what, replies...), or None."""
    for key in STATE_KEYS:
        kind = redis.call(["TYPE", key])
        read = CONTENT.get(kind)
        if not read:
            continue
        for src, dst in ((redis, slsm), (slsm, redis)):
            payload = src.call(["DUMP", key])
            restored = dst.call(["RESTORE", "restored", "0", payload[1], "REPLACE"])
            if restored != b"+OK":
                return (key, "RESTORE", restored)
            want = content_of(src, key, read, kind)
            got = content_of(dst, "restored", read, kind)
            dst.call(["DEL", "restored"])
            if want != got:
                return (key, "restored content", want, got)
    return None


def content_of(conn, key, read, kind):
    """A key's content, normalized; a stream's with its groups' state."""
    content = normalized(conn.call(read[:1] + [key] + read[1:]), read)
    if kind == b"+stream":
        # A NOGROUP error names the key: the restored copy's name differs.
        quoted = b"'" + key.encode() + b"'"
        unnamed = [r.replace(quoted, b"'KEY'") if isinstance(r, bytes) else r
                   for r in (normalized(conn.call([a or key for a in q]), q) for q in GROUP_STATE)]
        content = (content, unnamed)
    return content


def state(conn):
    out = []
    for key in STATE_KEYS:
        kind = conn.call(["TYPE", key])
        read = CONTENT.get(kind)
        content = content_of(conn, key, read, kind) if read else None
        ttl = conn.call(["PTTL", key])
        out.append((kind, content, ttl if ttl in (b":-1", b":-2") else b"expires"))
    return out


def start(argv, port):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit(f"{argv[0]} did not start on port {port}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(slsm, seed, steps):
    """Differences found in one seeded sequence (0 when none)."""
    random.seed(seed)
    with tempfile.TemporaryDirectory() as rdir, tempfile.TemporaryDirectory() as sdir:
        rport, sport = free_port(), free_port()
        redis = start(["redis-server", "--port", str(rport), "--dir", rdir, "--save", "",
                       "--appendonly", "no", "--logfile", "/dev/null"], rport)
        try:
            server = start([slsm, "serve", "--db", sdir + "/db", "--bind", f"127.0.0.1:{sport}"], sport)
        except SystemExit:
            redis.kill()
            redis.wait()
            raise
        try:
            redis_conns, slsm_conns = (Conn(rport), Conn(rport)), (Conn(sport), Conn(sport))
            if seed % 2 == 0:
                # Every other sequence in RESP3 (the HELLO replies name
                # each server, so they are not compared).
                for conn in redis_conns + slsm_conns:
                    conn.call(["HELLO", "3"])
            return compare(redis_conns, slsm_conns, steps)
        finally:
            redis.kill()
            server.kill()
            redis.wait()
            server.wait()


# The commands a pipeline is made of: those the server groups into one
# engine call when they come in a row (GET; SET k v and MSET; INCR, DECR,
# INCRBY, DECRBY; PFADD), and others between them.
def pipelined():
    return random.choice([
        lambda: ["GET", k()],
        lambda: ["SET", k(), v()],
        lambda: ["MSET"] + pairs(1, 3),
        lambda: [random.choice(["INCR", "DECR"]), k()],
        lambda: [random.choice(["INCRBY", "DECRBY"]), k(), n()],
        lambda: ["DEL", k()],
        lambda: ["APPEND", k(), v()],
        lambda: ["GET"],
        lambda: ["SET", k(), v(), "XX"],
        # A collection among the GETs (WRONGTYPE) and SETs (overwritten).
        lambda: ["RPUSH", k(), v()],
        lambda: ["PFADD", k(), v(), v()],
    ])()


def pipelined_like(kind):
    while True:
        args = pipelined()
        if args[0] == kind:
            return args


def compare(redis_conns, slsm_conns, steps):
    (redis, redis_other), (slsm, slsm_other) = redis_conns, slsm_conns
    history, queued = [], None
    for step in range(steps):
        if queued is None and step % 100 == 99:
            moved = moved_intact(redis, slsm)
            if moved:
                report("DUMP/RESTORE between the servers", moved[:2], moved[2:], None, history)
                return 1
        if queued is None and random.random() < 0.03:
            # A pipeline: its replies must be those of running it one by one.
            size = random.randint(2, 24)
            batch = [pipelined() for _ in range(size)]
            if random.random() < 0.5:  # one kind in a row: a single group
                kind = batch[0][0]
                batch = [b for b in batch if b[0] == kind] + [pipelined_like(kind) for _ in range(size)]
            history.append(["<pipeline>"] + batch)
            want, got = redis.pipeline(batch), slsm.pipeline(batch)
            if not all(same(w, g, b) for w, g, b in zip(want, got, batch)):
                report("pipeline replies", batch, want, got, history)
                return 1
            if state(redis) != state(slsm):
                report("state after pipeline", batch, state(redis), state(slsm), history)
                return 1
            continue
        args = command()
        history.append(args)
        if args[0] == SCAN_ALL:
            if queued is None and scan_all(redis, *args[1:]) != scan_all(slsm, *args[1:]):
                report("SCAN", args, scan_all(redis, *args[1:]), scan_all(slsm, *args[1:]), history)
                return 1
            continue
        if args[0] == ELEMENTS_SCAN_ALL:
            if queued is None:
                want, got = elements_scan_all(redis, *args[1:]), elements_scan_all(slsm, *args[1:])
                if want != got:
                    report("element scan", args, want, got, history)
                    return 1
            continue
        if args[0] == OTHER:
            want, got = redis_other.call(args[1:]), slsm_other.call(args[1:])
            if want != got:
                report("reply (other client)", args, want, got, history)
                return 1
            continue
        want, got = redis.call(args), slsm.call(args)
        name = args[0].upper()
        if queued is not None and name == "EXEC":
            equal = same_exec(want, got, queued)
        else:
            equal = same(want, got, args)
        if name == "MULTI" and want == b"+OK":
            queued = []
        elif name in ("EXEC", "DISCARD"):
            queued = None
        elif queued is not None and want == b"+QUEUED":
            queued.append(args)
        if not equal:
            report("reply", args, want, got, history)
            return 1
        if queued is None and state(redis) != state(slsm):
            report("state after", args, state(redis), state(slsm), history)
            return 1
    return 0


def report(what, args, want, got, history):
    print(f"DIFFERENT {what} {args}\n  redis-server: {want!r}\n  slsm serve:   {got!r}")
    print("  the commands before it:", history[-15:-1])


def run_seed(job):
    """One sequence in a worker process: (seed, failed, what it printed)."""
    slsm, seed, steps, share = job
    global STREAM_SHARE
    STREAM_SHARE = share
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            failed = bool(run(slsm, seed, steps))
        except SystemExit as e:  # a server that did not start
            print(e)
            failed = True
    return seed, failed, out.getvalue()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slsm", default="target/release/slsm")
    parser.add_argument("--seeds", default="1-5", help="a range, FIRST-LAST")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--streams-share", type=float, default=0.0,
                        help="draw this share of the commands from the streams' alone")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="sequences run at once (default: one per core)")
    opts = parser.parse_args()
    first, _, last = opts.seeds.partition("-")
    seeds = range(int(first), int(last or first) + 1)
    jobs = [(opts.slsm, seed, opts.steps, opts.streams_share) for seed in seeds]
    failed = []
    with multiprocessing.Pool(max(1, min(opts.jobs, len(jobs)))) as pool:
        for seed, bad, printed in pool.imap(run_seed, jobs):
            print(printed, end="", flush=True)
            if bad:
                failed.append(seed)
    print(f"{len(seeds)} sequences of {opts.steps} commands, {len(failed)} with differences"
          + (f" (seeds {failed})" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
