#!/usr/bin/env python3
"""Streams: `slsm serve` against `redis-server` (AOF on, appendfsync
everysec), alternating round by round. A program, not a test.

    bench/redis/streams.py [--requests 200000] [--rounds 3] [--baseline BIN]

Each round, on a fresh directory and port per server, redis-benchmark (50
clients) runs:
- `XADD events * field value` to one stream, at -P 1 and at -P 16 (4x as
  many): every client appends to the same key, the log / event-bus case;
- `XRANGE events - + COUNT 10` and `XREAD COUNT 10 STREAMS events 0`, the
  first ten entries, at -P 16;
- `XADD events MAXLEN 1000 * field value` at -P 16: a capped log, each
  append trimming the oldest entry.
Prints requests per second, p50 and p99 (medians), and slsm/redis. Needs
redis-server and redis-tools, and a built `slsm` (cargo builds it).
"""

from servers import compare, peak_rss_mb, redis_benchmark, rps_table, running


def one_round(engine, binary, args):
    n = args.requests
    tests = [
        ("XADD -P 1", n, 1, ["XADD", "events", "*", "field", "value"]),
        ("XADD -P 16", 4 * n, 16, ["XADD", "events", "*", "field", "value"]),
        ("XRANGE COUNT 10 -P 16", n, 16, ["XRANGE", "events", "-", "+", "COUNT", 10]),
        ("XREAD COUNT 10 -P 16", n, 16, ["XREAD", "COUNT", 10, "STREAMS", "events", 0]),
        ("XADD MAXLEN 1000 -P 16", 4 * n, 16,
         ["XADD", "capped", "MAXLEN", 1000, "*", "field", "value"]),
    ]
    with running(engine, binary) as (port, proc, _):
        row = {}
        for name, requests, pipeline, command in tests:
            row[name] = redis_benchmark(port, "-n", requests, "-c", 50, "-P", pipeline, *command)
        row["rss"] = (peak_rss_mb(proc.pid), 0, 0)
        return row


def table(rows, args):
    rps_table(rows, f"medians of {args.rounds} rounds; 50 clients; {args.requests:,} requests "
                    f"({4 * args.requests:,} for the appends at -P 16)", "test")


def main():
    compare(__doc__, {"--requests": 200000}, one_round, table)


if __name__ == "__main__":
    main()
