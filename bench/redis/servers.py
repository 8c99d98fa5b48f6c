"""What the programs in bench/redis share: a server of either kind on a
fresh directory and a free loopback port, and its peak resident memory.

Both run as their users run them next to each other: redis-server with
AOF on and `appendfsync everysec`; `slsm serve --appendfsync everysec`.
"""

import argparse
import contextlib
import csv
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def engines(baseline=None):
    """The servers a comparison runs, as {name: slsm binary, or None for
    redis-server}: this checkout's slsm (built through cargo, which
    rebuilds only what changed), redis-server, and `baseline` (another
    slsm binary) if given. Exits if Redis's tools are missing."""
    for tool in ("redis-server", "redis-cli", "redis-benchmark"):
        if shutil.which(tool) is None:
            raise SystemExit(f"needs {tool} (apt-get install redis-server redis-tools)")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "slsm-cli"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    binaries = {"slsm": os.path.join(target, "release", "slsm"), "redis": None}
    if baseline:
        binaries["slsm-baseline"] = baseline
    return binaries


def alternate(rounds, binaries, one_round):
    """`one_round(engine, binary)` for every engine, round after round
    (so the machine's drift falls on all alike): {engine: [row, ...]}."""
    rows = {e: [] for e in binaries}
    for r in range(rounds):
        for engine, binary in binaries.items():
            print(f"round {r + 1}: {engine}", file=sys.stderr)
            rows[engine].append(one_round(engine, binary))
    return rows


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(port):
    for _ in range(400):
        if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode == 0:
            return
        time.sleep(0.05)
    raise SystemExit(f"server on port {port} did not come up")


@contextlib.contextmanager
def running(engine, slsm=None, maxmemory=None):
    """A server, `redis` or an slsm binary (`slsm`), on a fresh directory;
    yields (port, process, directory), shuts it down and removes the
    directory afterwards. `maxmemory` caps either (Redis's is its data
    limit, slsm's its engine budget)."""
    directory = tempfile.mkdtemp(prefix=f"bench-{engine}-")
    port = free_port()
    cap = ["--maxmemory", maxmemory] if maxmemory else []
    if engine == "redis":
        cmd = ["redis-server", "--port", str(port), "--dir", directory, "--appendonly", "yes",
               "--appendfsync", "everysec", "--save", "", "--daemonize", "no",
               "--logfile", "/dev/null", *cap]
    else:
        cmd = [slsm, "serve", "--db", f"{directory}/db", "--bind", f"127.0.0.1:{port}",
               "--appendfsync", "everysec", *cap]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_up(port)
        yield port, proc, directory
    finally:
        subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(directory, ignore_errors=True)


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return 0.0


def redis_benchmark(port, *args):
    """One redis-benchmark run of `args` (options, then the command) with
    `--csv`: its (requests per second, p50 ms, p99 ms)."""
    out = subprocess.run(["redis-benchmark", "-p", str(port), "--csv", *map(str, args)],
                         capture_output=True, text=True).stdout
    rows = [r for r in csv.reader(io.StringIO(out)) if len(r) >= 8 and r[0] != "test"]
    if not rows:
        raise SystemExit(f"redis-benchmark printed no result: {out}")
    return float(rows[-1][1]), float(rows[-1][4]), float(rows[-1][6])


def compare(doc, options, one_round, table):
    """The `main` of a comparison: the program's `options` ({flag: default
    int}) plus `--rounds` and `--baseline`, then `one_round(engine, binary,
    args)` for every engine round after round, then `table(rows, args)`."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag, default in options.items():
        ap.add_argument(flag, type=int, default=default)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", help="another slsm binary, run as a third server")
    args = ap.parse_args()
    binaries = engines(args.baseline)
    table(alternate(args.rounds, binaries, lambda e, b: one_round(e, b, args)), args)


def rps_table(rows, caption, what):
    """Prints `rows` ({engine: [round {test: (rps, p50, p99)}]}, a test
    "rss" holding peak RSS) as medians: requests per second (p50 / p99
    ms) per engine, and slsm/redis."""
    names = list(rows)
    print(caption)
    print(f"| {what} | " + " | ".join(f"{e} rps (p50 / p99 ms)" for e in names) + " | slsm/redis |")
    print("|" + " --- |" * (len(names) + 2))
    for key in rows[names[0]][0]:
        med = {e: [statistics.median(r[key][i] for r in rows[e]) for i in range(3)] for e in names}
        if key == "rss":
            cells = " | ".join(f"{med[e][0]:,.0f} MB peak RSS" for e in names)
            print(f"| {key} | {cells} | |")
            continue
        cells = " | ".join(f"{med[e][0]:,.0f} ({med[e][1]:.3f} / {med[e][2]:.3f})" for e in names)
        print(f"| {key} | {cells} | {med['slsm'][0] / med['redis'][0]:.2f} |")
