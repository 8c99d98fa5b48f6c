#!/usr/bin/env python3
"""Publish/subscribe fan-out: `slsm serve` against `redis-server` (AOF on,
appendfsync everysec), alternating round by round. A program, not a test.

    bench/redis/pubsub.py [--messages 200000] [--subscribers 4] [--rounds 3]
                          [--baseline BIN]

Each round, on a fresh directory and port per server:
1. SUBSCRIBERS clients `SUBSCRIBE ch` and one `PSUBSCRIBE ch*`
   (redis-cli, its output counted afterwards);
2. redis-benchmark publishes MESSAGES messages of 100 bytes on `ch` from
   50 clients, at `-P 1`, then 5x as many at `-P 16`: PUBLISH requests
   per second, p50 and p99;
3. once the subscribers have read everything (or 60 s passed), the share
   of the published messages the worst subscriber received (1.000: every
   message reached every subscriber), and the server's peak RSS.
Prints medians and slsm/redis. Needs redis-server and redis-tools, and a
built `slsm` (cargo builds it).
"""

import os
import shutil
import statistics
import subprocess
import tempfile
import time

from servers import compare, peak_rss_mb, redis_benchmark, running

PAYLOAD = "m" * 100


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                          text=True).stdout.split()


def subscribers(port, work, count):
    """Starts `count` channel subscribers and one pattern subscriber, each
    writing what it receives to a file; waits until the server has them."""
    procs = []
    for i in range(count + 1):
        path = os.path.join(work, f"sub{i}.out")
        command = ["subscribe", "ch"] if i < count else ["psubscribe", "ch*"]
        with open(path, "wb") as out:
            procs.append((subprocess.Popen(["redis-cli", "-p", str(port), *command], stdout=out,
                                           stderr=subprocess.DEVNULL), path, i == count))
    for _ in range(200):
        numsub = cli(port, "pubsub", "numsub", "ch")
        if numsub[-1:] == [str(count)] and cli(port, "pubsub", "numpat") == ["1"]:
            return procs
        time.sleep(0.05)
    raise SystemExit("the subscribers did not all subscribe")


def received(path, pattern):
    """Messages in a redis-cli subscriber's output (3 lines each, 4 for a
    pattern's, after the confirmation's 3)."""
    with open(path, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return max(0, lines - 3) // (4 if pattern else 3)


def publish(port, messages, pipeline):
    return redis_benchmark(port, "-n", messages, "-c", 50, "-P", pipeline, "PUBLISH", "ch", PAYLOAD)


def one_round(engine, binary, args):
    work = tempfile.mkdtemp(prefix="pubsub-")
    try:
        with running(engine, binary) as (port, proc, _):
            subs = subscribers(port, work, args.subscribers)
            row = {}
            total = 0
            for pipeline, n in ((1, args.messages), (16, 5 * args.messages)):
                rps, p50, p99 = publish(port, n, pipeline)
                row.update({f"rps{pipeline}": rps, f"p50_{pipeline}": p50, f"p99_{pipeline}": p99})
                total += n
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if all(received(path, pat) >= total for _, path, pat in subs):
                    break
                time.sleep(0.2)
            row["delivered"] = min(received(path, pat) for _, path, pat in subs) / total
            row["rss"] = peak_rss_mb(proc.pid)
            for p, _, _ in subs:
                p.kill()
                p.wait()
            return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(rows, args):
    names = list(rows)
    med = {e: {k: statistics.median(r[k] for r in rows[e]) for k in rows[e][0]} for e in names}
    print(f"medians of {args.rounds} rounds; {args.subscribers} subscribers of `ch` and one of "
          f"`ch*`; 50 publishers, {args.messages:,} messages at -P 1, "
          f"{5 * args.messages:,} at -P 16, 100 bytes each")
    print("| figure | " + " | ".join(names) + " | slsm/redis |")
    print("|" + " --- |" * (len(names) + 2))
    for key, label, higher in [("rps1", "PUBLISH per second, -P 1", True),
                               ("p50_1", "p50 ms, -P 1", False),
                               ("p99_1", "p99 ms, -P 1", False),
                               ("rps16", "PUBLISH per second, -P 16", True),
                               ("p50_16", "p50 ms, -P 16", False),
                               ("p99_16", "p99 ms, -P 16", False),
                               ("delivered", "share delivered to the worst subscriber", False),
                               ("rss", "peak RSS MB", False)]:
        fmt = "{:,.3f}" if key.startswith("p") or key == "delivered" else "{:,.0f}"
        cells = " | ".join(fmt.format(med[e][key]) for e in names)
        ratio = med["slsm"][key] / med["redis"][key] if higher and med["redis"][key] else None
        print(f"| {label} | {cells} | {'' if ratio is None else f'{ratio:.2f}'} |")


def main():
    compare(__doc__, {"--messages": 200000, "--subscribers": 4}, one_round, table)


if __name__ == "__main__":
    main()
