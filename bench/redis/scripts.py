#!/usr/bin/env python3
"""Lua scripts: `slsm serve` against `redis-server` (AOF on, appendfsync
everysec), alternating round by round. A program, not a test.

    bench/redis/scripts.py [--requests 200000] [--rounds 3] [--baseline BIN]

Each round, on a fresh directory and port per server, redis-benchmark
(50 clients, keys from 100,000) runs `EVALSHA` of two scripts loaded with
`SCRIPT LOAD`, at `-P 1` and then 4x as many at `-P 16`:
- `incr`: `return redis.call('incr', KEYS[1])`, one read and one write;
- `release`: redis-py's `Lock.release` (compare the token, then delete):
  `if redis.call('get', KEYS[1]) == ARGV[1] then return
  redis.call('del', KEYS[1]) else return 0 end`, a read, mostly.
Prints requests per second, p50 and p99 (medians), and slsm/redis. Needs
redis-server and redis-tools, and a built `slsm` (cargo builds it).
"""

import subprocess

from servers import compare, peak_rss_mb, redis_benchmark, rps_table, running

SCRIPTS = {
    "incr": "return redis.call('incr', KEYS[1])",
    "release": "if redis.call('get', KEYS[1]) == ARGV[1] then "
               "return redis.call('del', KEYS[1]) else return 0 end",
}


def load(port, body):
    return subprocess.run(["redis-cli", "-p", str(port), "script", "load", body],
                          capture_output=True, text=True, check=True).stdout.strip()


def evalsha(port, sha, requests, pipeline):
    return redis_benchmark(port, "-n", requests, "-c", 50, "-r", 100000, "-P", pipeline,
                           "EVALSHA", sha, 1, "key:__rand_int__", "token")


def one_round(engine, binary, args):
    with running(engine, binary) as (port, proc, _):
        row = {}
        for name, body in SCRIPTS.items():
            sha = load(port, body)
            for pipeline, n in ((1, args.requests), (16, 4 * args.requests)):
                rps, p50, p99 = evalsha(port, sha, n, pipeline)
                row[f"{name} -P {pipeline}"] = (rps, p50, p99)
        row["rss"] = (peak_rss_mb(proc.pid), 0, 0)
        return row


def table(rows, args):
    rps_table(rows, f"medians of {args.rounds} rounds; 50 clients, keys from 100,000; "
                    f"{args.requests:,} requests at -P 1, {4 * args.requests:,} at -P 16", "script")


def main():
    compare(__doc__, {"--requests": 200000}, one_round, table)


if __name__ == "__main__":
    main()
