#!/usr/bin/env python3
"""Data ten times a memory cap: `slsm serve --maxmemory CAP` against
`redis-server --maxmemory CAP` (AOF on, appendfsync everysec, its default
policy noeviction), alternating round by round. A program, not a test.

    bench/redis/capped.py [--maxmemory 64mb] [--keys N] [--rounds 3]

Each round, on a fresh directory and port per server:
1. writes N keys (`key:%012d`, redis-benchmark's key format, 100-byte
   values compressible to about half, like db_bench's; by default N makes
   ten times the cap of user data) through `redis-cli --pipe`, and counts
   what the server acknowledged and refused;
2. reads every key back over one pipelined connection and checks every
   acknowledged write is there with its value;
3. runs `redis-benchmark -t get -r N -n 200000 -c 50` at -P 1 and -P 16
   over that key space (p50/p99 from its CSV);
4. records the server's peak RSS (VmHWM) and bytes on disk.
Prints a table of medians; needs redis-server and redis-tools, and a built
`slsm` (target/release/slsm, or cargo builds it).
"""

import argparse
import csv
import hashlib
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from servers import peak_rss_mb, running

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VALUE_SIZE = 100
KEY_FORMAT = "key:%012d"


def parse_size(text):
    units = {"": 1, "b": 1, "k": 1000, "kb": 1024, "m": 10**6, "mb": 1 << 20, "g": 10**9, "gb": 1 << 30}
    digits = text.rstrip("kmgbKMGB")
    return int(digits) * units[text[len(digits):].lower()]


def value_of(i):
    """Half random, half repeated: compressible to about 0.5, as db_bench's
    values are (an engine that compresses gains what it would in use)."""
    noise = hashlib.blake2b(b"%d" % i, digest_size=VALUE_SIZE // 2).digest()
    return noise + b"v" * (VALUE_SIZE - len(noise))


def write_pipe_file(path, keys):
    with open(path, "wb") as f:
        for i in range(keys):
            k = (KEY_FORMAT % i).encode()
            f.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, VALUE_SIZE, value_of(i)))


def pipe_writes(port, pipe_file):
    """Sends every SET; (seconds, replies, errors)."""
    t0 = time.perf_counter()
    with open(pipe_file, "rb") as f:
        out = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=f,
                             capture_output=True, text=True).stdout
    seconds = time.perf_counter() - t0
    last = [line for line in out.splitlines() if "errors:" in line][-1]
    errors = int(last.split("errors:")[1].split(",")[0])
    replies = int(last.split("replies:")[1])
    return seconds, replies, errors


def read_all(port, keys, batch=1000):
    """Reads every key back; (seconds, correct, missing, wrong)."""
    correct = missing = wrong = 0
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as s:
        reader = s.makefile("rb", buffering=1 << 20)
        for start_at in range(0, keys, batch):
            ids = range(start_at, min(keys, start_at + batch))
            req = bytearray()
            for i in ids:
                k = (KEY_FORMAT % i).encode()
                req += b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k)
            s.sendall(req)
            for i in ids:
                header = reader.readline()
                if header.startswith(b"$-1"):
                    missing += 1
                    continue
                n = int(header[1:])
                data = reader.read(n + 2)[:n]
                if data == value_of(i):
                    correct += 1
                else:
                    wrong += 1
    return time.perf_counter() - t0, correct, missing, wrong


def benchmark_gets(port, keys, pipeline):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "get", "-n", "200000",
                          "-r", str(keys), "-d", str(VALUE_SIZE), "-c", "50", "-P", str(pipeline),
                          "--csv"], capture_output=True, text=True).stdout
    for row in csv.reader(io.StringIO(out)):
        if row and row[0] == "GET":
            return float(row[1]), float(row[4]), float(row[6])
    return 0.0, 0.0, 0.0


def disk_mb(directory):
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    return total / 2**20


def one_round(engine, slsm, cap, keys, pipe_file):
    with running(engine, slsm, cap) as (port, proc, directory):
        seconds, replies, errors = pipe_writes(port, pipe_file)
        acked = replies - errors
        rseconds, correct, missing, wrong = read_all(port, keys)
        p1 = benchmark_gets(port, keys, 1)
        p16 = benchmark_gets(port, keys, 16)
        return {
            "write_rps": keys / seconds, "acked": acked, "refused": errors,
            "read_rps": keys / rseconds, "correct": correct, "missing": missing, "wrong": wrong,
            "get_p1": p1, "get_p16": p16, "rss_mb": peak_rss_mb(proc.pid), "disk_mb": disk_mb(directory),
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--maxmemory", default="64mb")
    ap.add_argument("--keys", type=int, default=0, help="default: ten times the cap of user data")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for tool in ("redis-server", "redis-cli", "redis-benchmark"):
        if shutil.which(tool) is None:
            raise SystemExit(f"needs {tool} (apt-get install redis-server redis-tools)")
    cap = parse_size(args.maxmemory)
    keys = args.keys or 10 * cap // (len(KEY_FORMAT % 0) + VALUE_SIZE)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    slsm = os.path.join(target, "release", "slsm")
    if not os.access(slsm, os.X_OK):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "slsm-cli"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="capped-")
    pipe_file = os.path.join(work, "sets.resp")
    write_pipe_file(pipe_file, keys)
    rows = {"slsm": [], "redis": []}
    try:
        for r in range(args.rounds):
            for engine in rows:
                print(f"round {r + 1}: {engine}", file=sys.stderr)
                rows[engine].append(one_round(engine, slsm, args.maxmemory, keys, pipe_file))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows, args, keys, cap)


def report(rows, args, keys, cap):
    med = lambda engine, f: statistics.median(f(r) for r in rows[engine])  # noqa: E731
    data_mb = keys * (len(KEY_FORMAT % 0) + VALUE_SIZE) / 2**20
    print(f"\n{keys} keys x {len(KEY_FORMAT % 0)}+{VALUE_SIZE} bytes ({data_mb:.0f} MiB of user data, "
          f"{data_mb * 2**20 / cap:.1f}x) against --maxmemory {args.maxmemory}; "
          f"medians of {args.rounds} alternating rounds")
    print("| | slsm | redis-server |")
    print("| --- | --- | --- |")
    lines = [
        ("writes acknowledged", lambda r: r["acked"], "{:.0f}"),
        ("writes refused (OOM)", lambda r: r["refused"], "{:.0f}"),
        ("acknowledged writes read back intact", lambda r: r["correct"], "{:.0f}"),
        ("keys missing / wrong", lambda r: r["missing"] + r["wrong"], "{:.0f}"),
        ("write throughput (redis-cli --pipe), ops/s", lambda r: r["write_rps"], "{:.0f}"),
        ("read-back throughput (1 conn, pipelined 1000), ops/s", lambda r: r["read_rps"], "{:.0f}"),
        ("GET -P 1, requests/s", lambda r: r["get_p1"][0], "{:.0f}"),
        ("GET -P 1, p50 / p99 ms", None, None),
        ("GET -P 16, requests/s", lambda r: r["get_p16"][0], "{:.0f}"),
        ("GET -P 16, p50 / p99 ms", None, None),
        ("peak RSS, MiB", lambda r: r["rss_mb"], "{:.0f}"),
        ("on disk, MiB", lambda r: r["disk_mb"], "{:.0f}"),
    ]
    for name, f, fmt in lines:
        if f is None:
            key = "get_p1" if "-P 1," in name else "get_p16"
            cells = [f"{med(e, lambda r: r[key][1]):.3f} / {med(e, lambda r: r[key][2]):.3f}" for e in rows]
        else:
            cells = [fmt.format(med(e, f)) for e in rows]
        print(f"| {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
