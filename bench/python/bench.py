#!/usr/bin/env python3
"""slsm's Python module against rocksdict, plyvel and lmdb: a program, not a
test. Each engine runs each round in a fresh process (so peak RSS is its
own), rounds alternate the engines (A B C D, A B C D, ...), and the table
gives medians and the ratio slsm/peer (below 1: slsm is faster).

    pip install ./crates/python rocksdict plyvel lmdb
    python3 bench/python/bench.py [--num 1000000] [--rounds 3]
        [--engines slsm,lmdb] [--slsm-memory-budget BYTES]

--slsm-memory-budget runs slsm at another budget than its default (128
MiB): lmdb reads a mapped B-tree, so the whole data set is its memory
(its peak RSS), and `--slsm-memory-budget 268435456` compares the two at
about equal memory.

Workloads (16-byte keys, 100-byte values, random order from one seed):
put (a loop of single puts), batch (writes of 1,000), get (random, all
found: the first reads after the load, so an engine with a cache of its
own fills it here), get_again (the same gets once more: the steady state
of a cache that holds them), multi_get (the same keys in batches of 64),
iterate (a full forward scan), empty_get (a get of an absent key in an
empty database: what one call costs beyond the engine's work, the
binding's overhead). Every engine runs with its defaults: a write is in
the OS before the call returns (survives a process crash, not a power
loss); lmdb, whose default syncs every transaction to disk, gets
sync=False to match, and one transaction per batch of writes.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ENGINES = ["slsm", "rocksdict", "plyvel", "lmdb"]
WORKLOADS = ["put", "batch", "get", "get_again", "multi_get", "iterate", "empty_get"]


def keys_for(n, seed=42):
    rnd = random.Random(seed)
    keys = [b"%016d" % i for i in range(n)]
    rnd.shuffle(keys)
    return keys


# Options for slsm.Db beyond its defaults (--slsm-memory-budget).
SLSM_OPTIONS = {}


class Slsm:
    def __init__(self, path):
        import slsm
        self.db = slsm.Db(path, **SLSM_OPTIONS)

    def put(self, k, v):
        self.db[k] = v

    def batch(self, pairs):
        with self.db.batch() as b:
            for k, v in pairs:
                b.put(k, v)

    def get(self, k):
        return self.db.get(k)

    def multi_get(self, ks):
        return self.db.multi_get(ks)

    def iterate(self):
        n = 0
        for _ in self.db.items():
            n += 1
        return n

    def close(self):
        self.db.close()


class RocksDict:
    def __init__(self, path):
        import rocksdict
        self.rocksdict = rocksdict
        self.db = rocksdict.Rdict(path)

    def put(self, k, v):
        self.db[k] = v

    def batch(self, pairs):
        wb = self.rocksdict.WriteBatch(raw_mode=False)
        for k, v in pairs:
            wb.put(k, v)
        self.db.write(wb)

    def get(self, k):
        return self.db.get(k)

    def multi_get(self, ks):
        return self.db[ks]

    def iterate(self):
        n = 0
        for _ in self.db.items():
            n += 1
        return n

    def close(self):
        self.db.close()


class Plyvel:
    def __init__(self, path):
        import plyvel
        self.db = plyvel.DB(path, create_if_missing=True)

    def put(self, k, v):
        self.db.put(k, v)

    def batch(self, pairs):
        with self.db.write_batch() as wb:
            for k, v in pairs:
                wb.put(k, v)

    def get(self, k):
        return self.db.get(k)

    def multi_get(self, ks):
        get = self.db.get
        return [get(k) for k in ks]

    def iterate(self):
        n = 0
        for _ in self.db.iterator():
            n += 1
        return n

    def close(self):
        self.db.close()


class Lmdb:
    def __init__(self, path):
        import lmdb
        self.env = lmdb.open(path, map_size=8 << 30, sync=False, metasync=False)

    def put(self, k, v):
        with self.env.begin(write=True) as txn:
            txn.put(k, v)

    def batch(self, pairs):
        with self.env.begin(write=True) as txn:
            for k, v in pairs:
                txn.put(k, v)

    def get(self, k):
        with self.env.begin() as txn:
            return txn.get(k)

    def multi_get(self, ks):
        with self.env.begin() as txn:
            get = txn.get
            return [get(k) for k in ks]

    def iterate(self):
        n = 0
        with self.env.begin() as txn:
            for _ in txn.cursor():
                n += 1
        return n

    def close(self):
        self.env.close()


CLASSES = {"slsm": Slsm, "rocksdict": RocksDict, "plyvel": Plyvel, "lmdb": Lmdb}


def run_engine(engine, num, path):
    """One round of every workload; micros per operation."""
    keys = keys_for(num)
    value = b"v" * 100
    out = {}
    db = CLASSES[engine](os.path.join(path, "put"))
    t = time.perf_counter()
    for k in keys:
        db.put(k, value)
    out["put"] = (time.perf_counter() - t) * 1e6 / num
    rnd = random.Random(7)
    probe = [keys[rnd.randrange(num)] for _ in range(min(num, 200_000))]
    t = time.perf_counter()
    for k in probe:
        db.get(k)
    out["get"] = (time.perf_counter() - t) * 1e6 / len(probe)
    t = time.perf_counter()
    for k in probe:
        db.get(k)
    out["get_again"] = (time.perf_counter() - t) * 1e6 / len(probe)
    batches = [probe[i:i + 64] for i in range(0, len(probe), 64)]
    t = time.perf_counter()
    for b in batches:
        db.multi_get(b)
    out["multi_get"] = (time.perf_counter() - t) * 1e6 / len(probe)
    t = time.perf_counter()
    n = db.iterate()
    out["iterate"] = (time.perf_counter() - t) * 1e6 / max(n, 1)
    db.close()
    db = CLASSES[engine](os.path.join(path, "batch"))
    t = time.perf_counter()
    for i in range(0, num, 1000):
        db.batch([(k, value) for k in keys[i:i + 1000]])
    out["batch"] = (time.perf_counter() - t) * 1e6 / num
    db.close()
    # What a call costs beyond the engine's work: a get of a key absent
    # from an empty database does almost none.
    db = CLASSES[engine](os.path.join(path, "empty"))
    t = time.perf_counter()
    for k in probe:
        db.get(k)
    out["empty_get"] = (time.perf_counter() - t) * 1e6 / len(probe)
    db.close()
    return out


def child(args):
    if args.slsm_memory_budget:
        SLSM_OPTIONS["memory_budget"] = args.slsm_memory_budget
    path = tempfile.mkdtemp(prefix=f"pybench-{args.engine}-", dir=args.dir)
    try:
        print(json.dumps(run_engine(args.engine, args.num, path)))
    finally:
        shutil.rmtree(path, ignore_errors=True)


def available(engine):
    mod = {"slsm": "slsm", "rocksdict": "rocksdict", "plyvel": "plyvel", "lmdb": "lmdb"}[engine]
    return subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True).returncode == 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--dir", default=None, help="where databases are created (default: $TMPDIR)")
    p.add_argument("--json", default=None, help="write the medians here")
    p.add_argument("--slsm-memory-budget", type=int, default=None,
                   help="slsm's memory budget in bytes (default: its own default, 128 MiB); "
                        "e.g. lmdb's peak RSS, to compare at equal memory")
    p.add_argument("--engine", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.engine:
        return child(args)
    engines = [e for e in args.engines.split(",") if e]
    missing = [e for e in engines if not available(e)]
    if missing:
        sys.exit(f"not installed: {', '.join(missing)} (pip install ./crates/python rocksdict plyvel lmdb)")
    results = {e: {w: [] for w in WORKLOADS} for e in engines}
    rss = {e: [] for e in engines}
    for r in range(args.rounds):
        for e in engines:
            print(f"round {r + 1}: {e}", file=sys.stderr, flush=True)
            cmd = [sys.executable, __file__, "--engine", e, "--num", str(args.num)]
            if args.dir:
                cmd += ["--dir", args.dir]
            if args.slsm_memory_budget:
                cmd += ["--slsm-memory-budget", str(args.slsm_memory_budget)]
            out, code, peak_mb = run_child(cmd)
            if code != 0:
                sys.exit(f"{e} failed (exit status {code})")
            figures = json.loads(out.strip().splitlines()[-1])
            for w in WORKLOADS:
                results[e][w].append(figures[w])
            rss[e].append(peak_mb)
    report(engines, results, rss, args)


def run_child(cmd):
    """Runs one engine's round; its output, exit status and peak RSS (MB)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return out, proc.returncode, usage.ru_maxrss / 1024


def report(engines, results, rss, args):
    med = {e: {w: statistics.median(results[e][w]) for w in WORKLOADS} for e in engines}
    peers = [e for e in engines if e != "slsm"]
    budget = f", slsm memory_budget={args.slsm_memory_budget}" if args.slsm_memory_budget else ""
    print(f"\nmicros/op, median of {args.rounds} alternating rounds, {args.num:,} keys x 16 + 100 bytes{budget}")
    head = "| workload | " + " | ".join(engines) + " | " + " | ".join(f"slsm/{p}" for p in peers) + " |"
    print(head)
    print("|" + " --- |" * (1 + len(engines) + len(peers)))
    for w in WORKLOADS:
        row = [f"{med[e][w]:.3f}" for e in engines]
        ratios = [f"{med['slsm'][w] / med[p][w]:.2f}" for p in peers] if "slsm" in engines else []
        print(f"| {w} | " + " | ".join(row) + " | " + " | ".join(ratios) + " |")
    print("\npeak RSS (MB, median): " + ", ".join(f"{e} {statistics.median(rss[e]):.0f}" for e in engines))
    if "slsm" in engines:
        first = med["slsm"]["get"] / med["slsm"]["multi_get"]
        again = med["slsm"]["get_again"] / med["slsm"]["multi_get"]
        print(f"\nslsm multi_get of 64 vs a loop of get: {first:.2f}x the first pass, {again:.2f}x the second")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"num": args.num, "rounds": args.rounds, "median_micros": med,
                   "peak_rss_mb": {e: statistics.median(rss[e]) for e in engines}}, f, indent=1)


if __name__ == "__main__":
    main()
