"""Reading what one benchmark process produced, and the medians over rounds.

Every run of a phase leaves, under OUT/<set>/<variant>/<engine>/:
  r<round>-<phase>.txt       stdout: db_bench's lines
  r<round>-<phase>.json      the harness's --json report (engines that have it)
  r<round>-<phase>.meta.json exit status, wall time, cgroup peak, OOM kills,
                             peak RSS (getrusage) of the process
"""

import json
import re
import statistics

LINE = re.compile(
    r"^(\S+)\s*:\s+([\d.]+) micros/op (\d+) ops/sec ([\d.]+) seconds (\d+) operations;(.*)$")
PCT = re.compile(
    r"Percentiles: P50: ([\d.]+) P75: ([\d.]+) P99: ([\d.]+) P99\.9: ([\d.]+) P99\.99: ([\d.]+)")
FOUND = re.compile(r"\((\d+) of (\d+) found\)")
MAINTENANCE = re.compile(r"^(\S+)\s*:\s+([\d.]+) seconds$")
MEMDB_NS = re.compile(r"^(\S+)\s*:\s+([\d.]+) ns/op")


def parse_text(text):
    """db_bench-style output -> {workload: {...}} in order."""
    results, last = {}, None
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            name, us, ops_s, secs, ops, extra = m.groups()
            found = FOUND.search(extra)
            last = name
            results[name] = {
                "workload": name,
                "micros_per_op": float(us),
                "ops_per_sec": float(ops_s),
                "seconds": float(secs),
                "ops": int(ops),
                "found": int(found.group(1)) if found else None,
                "line": line,
            }
            continue
        m = PCT.search(line)
        if m and last and "p99_us" not in results[last]:
            p = [float(x) for x in m.groups()]
            results[last].update(p50_us=p[0], p75_us=p[1], p99_us=p[2], p999_us=p[3],
                                 p9999_us=p[4])
    return results


def load_run(base):
    """The results of one process: {workload: {...}} and its meta record.
    `base` is the path without extension (…/r1-load)."""
    meta_path = base.with_suffix(".meta.json")
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    json_path = base.with_suffix(".json")
    results = {}
    if json_path.exists() and json_path.stat().st_size > 0:
        try:
            report = json.loads(json_path.read_text())
            results = {r["workload"]: r for r in report.get("results", [])}
            meta.setdefault("peak_rss_bytes", report.get("peak_rss_bytes"))
            meta.setdefault("config", report.get("config"))
        except (ValueError, KeyError):
            results = {}
    txt = base.with_suffix(".txt")
    if not results and txt.exists():
        results = parse_text(txt.read_text(errors="replace"))
    return results, meta


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def expected_distinct(num, writes, order):
    """Distinct keys a fill of `writes` keys over [0, num) leaves: every key
    drawn uniformly with replacement for a random fill (db_bench's), each
    once for sequential and unique-random ones."""
    if order == "fillrandom":
        return num * (1.0 - (1.0 - 1.0 / num) ** writes)
    return float(min(num, writes))


def flag_value(flags, name, default=None):
    """The last `--name=value` in a db_bench flag list."""
    value = default
    for f in flags:
        if f.startswith(f"--{name}="):
            value = f.split("=", 1)[1]
    return value
