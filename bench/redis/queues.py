#!/usr/bin/env python3
"""Queues and windows as people build them on Redis: `slsm serve` against
`redis-server` (AOF on, appendfsync everysec), alternating round by
round. A program, not a test.

    bench/redis/queues.py [--jobs 200000] [--windows 100000] [--rounds 3]
                          [--baseline BIN]

Each round, on a fresh directory and port per server:
1. a job queue: 20 consumers block in `BLPOP jobs 10` (redis-benchmark
   -c 20) while 10 producers `RPUSH` JOBS jobs (redis-benchmark -c 10,
   started a moment later); reports the jobs delivered per second, the
   consumers' BLPOP latency (p50, p99: the wait for a job included), and
   the jobs left over (0 unless a consumer timed out);
2. a sliding-window rate limiter: WINDOWS requests of
   `ZADD w t m<t>; ZREMRANGEBYSCORE w -inf t-100; ZCARD w` through
   `redis-cli --pipe`, timed: windows per second (the set keeps 100
   members; every removal starts at its lowest score);
3. the server's peak RSS.
Prints medians and slsm/redis. Needs redis-server and redis-tools, and a
built `slsm` (cargo builds it).
"""

import argparse
import csv
import io
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from servers import alternate, engines, peak_rss_mb, running


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def write_windows_file(path, windows):
    with open(path, "wb") as f:
        for t in range(windows):
            f.write(resp("ZADD", "w", t, f"m{t}"))
            f.write(resp("ZREMRANGEBYSCORE", "w", "-inf", t - 100))
            f.write(resp("ZCARD", "w"))


def csv_row(out):
    rows = [r for r in csv.reader(io.StringIO(out)) if len(r) >= 8 and r[0] != "test"]
    return rows[-1] if rows else None


def job_queue(port, jobs):
    bench = ["redis-benchmark", "-p", str(port), "-n", str(jobs), "--csv"]
    consumers = subprocess.Popen(bench + ["-c", "20", "BLPOP", "jobs", "10"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(0.5)  # the consumers are blocked before the first job
    producers = subprocess.run(bench + ["-c", "10", "RPUSH", "jobs", "payload-of-a-job"],
                               capture_output=True, text=True)
    consumed = csv_row(consumers.communicate()[0])
    produced = csv_row(producers.stdout)
    left = subprocess.run(["redis-cli", "-p", str(port), "llen", "jobs"], capture_output=True,
                          text=True).stdout.strip()
    if consumed is None or produced is None:
        return {"jobs/s": 0.0, "p50": 0.0, "p99": 0.0, "push/s": 0.0, "left": -1}
    return {"jobs/s": float(consumed[1]), "p50": float(consumed[4]), "p99": float(consumed[6]),
            "push/s": float(produced[1]), "left": int(left or 0)}


def windows_per_second(port, windows_file, windows):
    start = time.monotonic()
    with open(windows_file, "rb") as f:
        out = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=f,
                             capture_output=True, text=True).stdout
    took = time.monotonic() - start
    if f"replies: {3 * windows}" not in out or "errors: 0" not in out:
        raise SystemExit(f"the window requests did not all succeed: {out}")
    return windows / took


def one_round(engine, binary, args, windows_file):
    with running(engine, binary) as (port, proc, _):
        row = job_queue(port, args.jobs)
        row["windows/s"] = windows_per_second(port, windows_file, args.windows)
        row["rss"] = peak_rss_mb(proc.pid)
        return row


def table(rows, args):
    engines = list(rows)
    med = {e: {k: statistics.median(r[k] for r in rows[e]) for k in rows[e][0]} for e in engines}
    print(f"medians of {args.rounds} rounds; job queue: {args.jobs:,} jobs, 20 consumers "
          f"(BLPOP), 10 producers (RPUSH); rate limiter: {args.windows:,} windows")
    print("| figure | " + " | ".join(engines) + " | slsm/redis |")
    print("|" + " --- |" * (len(engines) + 2))
    for key, label, higher in [("jobs/s", "jobs delivered per second", True),
                               ("push/s", "RPUSH per second (producers)", True),
                               ("p50", "BLPOP p50 ms (waiting included)", False),
                               ("p99", "BLPOP p99 ms", False),
                               ("left", "jobs left over", False),
                               ("windows/s", "rate-limiter windows per second", True),
                               ("rss", "peak RSS MB", False)]:
        cells = " | ".join(f"{med[e][key]:,.3f}" if key in ("p50", "p99") else f"{med[e][key]:,.0f}"
                           for e in engines)
        ratio = med["slsm"][key] / med["redis"][key] if higher and med["redis"][key] else None
        print(f"| {label} | {cells} | {'' if ratio is None else f'{ratio:.2f}'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=200000)
    ap.add_argument("--windows", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", help="another slsm binary, run as a third server")
    args = ap.parse_args()
    binaries = engines(args.baseline)
    work = tempfile.mkdtemp(prefix="queues-")
    windows_file = os.path.join(work, "windows.resp")
    write_windows_file(windows_file, args.windows)
    try:
        rows = alternate(args.rounds, binaries,
                         lambda engine, binary: one_round(engine, binary, args, windows_file))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table(rows, args)


if __name__ == "__main__":
    main()
