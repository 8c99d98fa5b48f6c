#!/usr/bin/env python3
"""A sorted set as people use one (a leaderboard, a priority queue):
`slsm serve` against `redis-server` (AOF on, appendfsync everysec),
alternating round by round. A program, not a test.

    bench/redis/sorted_sets.py [--members 100000] [--rounds 3]
                               [--baseline BIN]

Each round, on a fresh directory and port per server:
1. loads MEMBERS members with random scores into `lb` through
   `redis-cli --pipe`;
2. runs redis-benchmark (-c 50, -P 1) on each command of WORKLOADS below:
   updates and point reads at random members, the top and bottom ten,
   a score range from the top with LIMIT, a rank of a random member, and
   pops from both ends (last: they shrink the set);
3. records the server's peak RSS.
Prints a table of medians of requests per second and p50 latency, and
slsm/redis. --baseline BIN adds another slsm binary (an older build) as a
third server in the same rounds. Needs redis-server and redis-tools, and a
built `slsm` (target/release/slsm, or cargo builds it).
"""

import argparse
import csv
import io
import os
import random
import shutil
import statistics
import subprocess
import tempfile

from servers import alternate, engines, peak_rss_mb, running


# (label, requests, command): __rand_int__ is redis-benchmark's random
# number below -r (the member count).
WORKLOADS = [
    ("ZADD (update a random member)", 100000, "ZADD lb __rand_int__ member:__rand_int__"),
    ("ZSCORE (random member)", 100000, "ZSCORE lb member:__rand_int__"),
    ("ZRANGE 0 9 WITHSCORES", 50000, "ZRANGE lb 0 9 WITHSCORES"),
    ("ZREVRANGE 0 9 WITHSCORES (top ten)", 50000, "ZREVRANGE lb 0 9 WITHSCORES"),
    ("ZREVRANGEBYSCORE +inf -inf LIMIT 0 10", 50000, "ZREVRANGEBYSCORE lb +inf -inf LIMIT 0 10"),
    ("ZRANK (random member)", 2000, "ZRANK lb member:__rand_int__"),
    ("ZPOPMAX", 20000, "ZPOPMAX lb"),
    ("ZPOPMIN", 20000, "ZPOPMIN lb"),
]


def write_load_file(path, members):
    rng = random.Random(1)
    with open(path, "wb") as f:
        for i in range(members):
            m, s = b"member:%d" % i, b"%d" % rng.randrange(members)
            f.write(b"*4\r\n$4\r\nZADD\r\n$2\r\nlb\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(s), s, len(m), m))


def load(port, load_file, members):
    with open(load_file, "rb") as f:
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=f, capture_output=True, check=True)
    got = int(subprocess.run(["redis-cli", "-p", str(port), "zcard", "lb"], capture_output=True,
                             text=True).stdout.strip() or 0)
    if got != members:
        raise SystemExit(f"loaded {got} members of {members}")


def bench(port, requests, command, members):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(requests), "-r", str(members),
                          "-c", "50", "--csv", *command.split()],
                         capture_output=True, text=True).stdout
    rows = [r for r in csv.reader(io.StringIO(out)) if len(r) >= 5 and r[0] != "test"]
    if not rows:
        return 0.0, 0.0
    return float(rows[-1][1]), float(rows[-1][4])


def one_round(engine, binary, load_file, members):
    with running(engine, binary) as (port, proc, _):
        load(port, load_file, members)
        row = {label: bench(port, n, command, members) for label, n, command in WORKLOADS}
        row["rss"] = peak_rss_mb(proc.pid)
        return row


def table(rows):
    engines = list(rows)
    med = {e: {label: (statistics.median(r[label][0] for r in rows[e]),
                       statistics.median(r[label][1] for r in rows[e])) for label, _, _ in WORKLOADS}
           for e in engines}
    head = "| command | " + " | ".join(f"{e} rps | {e} p50 ms" for e in engines) + " | slsm/redis |"
    print(head)
    print("|" + " --- |" * (2 + 2 * len(engines)))
    for label, _, _ in WORKLOADS:
        cells = " | ".join(f"{med[e][label][0]:,.0f} | {med[e][label][1]:.3f}" for e in engines)
        ratio = med["slsm"][label][0] / med["redis"][label][0] if med["redis"][label][0] else 0
        print(f"| {label} | {cells} | {ratio:.2f} |")
    rss = ", ".join(f"{e} {statistics.median(r['rss'] for r in rows[e]):.0f}" for e in engines)
    print(f"\nPeak RSS (MB, median): {rss}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", help="another slsm binary, run as a third server")
    args = ap.parse_args()
    binaries = engines(args.baseline)
    work = tempfile.mkdtemp(prefix="zsets-")
    load_file = os.path.join(work, "load.resp")
    write_load_file(load_file, args.members)
    try:
        rows = alternate(args.rounds, binaries,
                         lambda engine, binary: one_round(engine, binary, load_file, args.members))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.members:,} members, medians of {args.rounds} rounds, redis-benchmark -c 50 -P 1")
    table(rows)


if __name__ == "__main__":
    main()
