#!/usr/bin/env python3
"""Summarise a compare.sh results directory: median micros/op per workload
and tool over the rounds, ratios slsm/RocksDB and slsm/fjall, the memdb
table and the sLSM paper comparison. Writes median-<tool>.json files in the
`slsm bench --json` format so `slsm plot` can draw them."""

import json
import re
import statistics
import sys
from pathlib import Path

LINE = re.compile(
    r"^(\S+)\s*:\s+([\d.]+) micros/op (\d+) ops/sec ([\d.]+) seconds (\d+) operations;(.*)$"
)
PCT = re.compile(
    r"Percentiles: P50: ([\d.]+) P75: ([\d.]+) P99: ([\d.]+) P99\.9: ([\d.]+) P99\.99: ([\d.]+)"
)
FOUND = re.compile(r"\((\d+) of (\d+) found\)")
MBS = re.compile(r"([\d.]+) MB/s")
RSS = re.compile(r"Peak RSS:\s+([\d.]+) MB")
TOOLS = ["slsm", "rocksdb", "fjall"]
# The sLSM paper's implementation on this machine (issue 6): ops/s and RSS.
PAPER = {10_000_000: (385_000, 157_000), 1_000_000: (585_000, 475_000)}
PAPER_RSS_MB = 385


def parse(path):
    """Workload -> dict of numbers, in order, plus the peak RSS in MB."""
    results, last, rss = {}, None, None
    for line in path.read_text(errors="replace").splitlines():
        m = LINE.match(line)
        if m:
            name, us, ops_s, secs, ops, extra = m.groups()
            found = FOUND.search(extra)
            mbs = MBS.search(extra)
            last = name
            results[name] = {
                "micros_per_op": float(us),
                "ops_per_sec": float(ops_s),
                "seconds": float(secs),
                "ops": int(ops),
                "found": int(found.group(1)) if found else None,
                "mb_per_sec": float(mbs.group(1)) if mbs else 0.0,
                "line": line,
            }
            continue
        m = PCT.search(line)
        if m and last and "p99_us" not in results[last]:
            p = [float(x) for x in m.groups()]
            results[last].update(
                p50_us=p[0], p75_us=p[1], p99_us=p[2], p999_us=p[3], p9999_us=p[4]
            )
        m = RSS.search(line)
        if m:
            rss = float(m.group(1))
    return results, rss


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec="{:.3f}"):
    return "-" if x is None else spec.format(x)


def median_report(tool, runs, rounds):
    """A `slsm bench --json`-shaped report of the medians (for slsm plot)."""
    names = []
    for r, _ in runs:
        names += [n for n in r if n not in names]
    results = []
    for n in names:
        rows = [r[n] for r, _ in runs if n in r]

        def m(key):
            return med([row.get(key) for row in rows]) or 0.0

        results.append(
            {
                "workload": n,
                "ops": int(m("ops")),
                "seconds": m("seconds"),
                "micros_per_op": m("micros_per_op"),
                "ops_per_sec": m("ops_per_sec"),
                "mb_per_sec": m("mb_per_sec"),
                "bytes": 0,
                "found": None,
                "p50_us": m("p50_us"),
                "p75_us": m("p75_us"),
                "p99_us": m("p99_us"),
                "p999_us": m("p999_us"),
                "p9999_us": m("p9999_us"),
                "max_us": 0.0,
                "threads": 1,
                "engine_stats": None,
                "line": f"median of {len(rows)} of {rounds} rounds",
            }
        )
    rss = med([rss for _, rss in runs])
    return {
        "engine": tool,
        "version": "",
        "flags": {},
        "results": results,
        "peak_rss_bytes": int(rss * 1048576) if rss else None,
    }


def compare_set(out, set_name):
    d = out / set_name
    if not d.is_dir():
        return
    runs = {t: [parse(p) for p in sorted(d.glob(f"{t}.r*.txt"))] for t in TOOLS}
    runs = {t: r for t, r in runs.items() if r}
    if not runs:
        return
    rounds = max(len(r) for r in runs.values())
    for t, r in runs.items():
        (d / f"median-{t}.json").write_text(json.dumps(median_report(t, r, rounds), indent=1))
    names = []
    for r in runs.values():
        for res, _ in r:
            names += [n for n in res if n not in names]
    print(f"\n## {set_name} set: median micros/op over {rounds} rounds "
          "(ratio = slsm/peer: below 1 means slsm is faster)")
    head = f"{'workload':<18}" + "".join(f"{t:>12}" for t in TOOLS if t in runs)
    if "slsm" in runs:
        head += "".join(f"{'slsm/' + t:>14}" for t in TOOLS[1:] if t in runs)
    head += f"{'slsm p99 us':>13}"
    print(head)
    for n in names:
        m = {t: med([res[n]["micros_per_op"] for res, _ in r if n in res]) for t, r in runs.items()}
        row = f"{n:<18}" + "".join(f"{fmt(m[t]):>12}" for t in TOOLS if t in runs)
        if "slsm" in runs:
            for t in TOOLS[1:]:
                if t in runs:
                    ratio = m["slsm"] / m[t] if m.get("slsm") and m.get(t) else None
                    row += f"{fmt(ratio, '{:.2f}x'):>14}"
            p99 = med([res[n].get("p99_us") for res, _ in runs["slsm"] if n in res])
            row += f"{fmt(p99, '{:.1f}'):>13}"
        print(row)
    rss = {t: med([x for _, x in r]) for t, r in runs.items()}
    print("peak RSS (MB): " + ", ".join(f"{t} {fmt(v, '{:.0f}')}" for t, v in rss.items()))


def memdb(out):
    d = out / "memdb"
    if not d.is_dir():
        return
    print("\n## memdb set (goleveldb PR #387 workload, 32-byte keys): median ns/op")
    print(f"{'value':>6} {'engine':<12} {'put ns/op':>10} {'get ns/op':>10} {'found':>10} {'RSS MB':>8}")
    for vs in (32, 96, 256):
        for eng in ("goleveldb", "skiplist", "slsm"):
            files = sorted(d.glob(f"{eng}-v{vs}.r*.txt"))
            if not files:
                continue
            both = [parse(f) for f in files]
            parsed = [p for p, _ in both]
            rss = med([r for _, r in both])
            put = med([p["fillrandom_mem"]["micros_per_op"] * 1e3 for p in parsed if "fillrandom_mem" in p])
            get = med([p["readrandom_mem"]["micros_per_op"] * 1e3 for p in parsed if "readrandom_mem" in p])
            found = next((p["readrandom_mem"]["found"] for p in parsed if "readrandom_mem" in p), None)
            print(f"{vs:>6} {eng:<12} {fmt(put, '{:.0f}'):>10} {fmt(get, '{:.0f}'):>10} "
                  f"{fmt(found, '{}'):>10} {fmt(rss, '{:.0f}'):>8}")


def paper(out, num):
    d = out / "paper"
    files = sorted(d.glob("slsm.r*.txt")) if d.is_dir() else []
    if not files:
        return
    parsed = [parse(f) for f in files]
    ins = med([r["fillrandom"]["ops_per_sec"] for r, _ in parsed if "fillrandom" in r])
    look = med([r["readrandom"]["ops_per_sec"] for r, _ in parsed if "readrandom" in r])
    rss = med([x for _, x in parsed])
    ref_num = min(PAPER, key=lambda k: abs(k - num))
    p_ins, p_look = PAPER[ref_num]
    print(f"\n## sLSM paper workload: {num:,} random 4-byte keys, 4-byte values, WAL on")
    note = "" if ref_num == num else f" (paper numbers are for {ref_num:,} keys)"
    print(f"paper's implementation, no WAL{note}: {p_ins:,} inserts/s, {p_look:,} lookups/s, "
          f"{PAPER_RSS_MB} MB resident")
    if ins:
        print(f"slsm inserts/s: {ins:,.0f} = {ins / p_ins:.2f}x the paper (target 3x)")
    if look:
        print(f"slsm lookups/s: {look:,.0f} = {look / p_look:.2f}x the paper (target 3x)")
    if rss:
        print(f"slsm peak RSS: {rss:.0f} MB = {rss / PAPER_RSS_MB:.2f}x the paper's {PAPER_RSS_MB} MB")


def main():
    out = Path(sys.argv[1])
    num = 10_000_000
    if "--paper-num" in sys.argv:
        num = int(sys.argv[sys.argv.index("--paper-num") + 1])
    machine = out / "machine.txt"
    if machine.exists():
        print(machine.read_text().rstrip())
    for s in ("default", "mem"):
        compare_set(out, s)
    memdb(out)
    paper(out, num)


if __name__ == "__main__":
    main()
