"""Medians over alternating rounds, ratios slsm/peer, latency percentiles,
memory peaks, I/O per operation, write and space amplification: one
summary (summary.json, for `slsm plot`) and its text (summary.md), built
from a results directory and the workload table."""

import json
from pathlib import Path

from . import results as R

METRICS = ("micros_per_op", "ops_per_sec", "p50_us", "p99_us", "p999_us")
LOADS = ("fillrandom", "fillseq", "filluniquerandom")
MAINTENANCE = ("flush", "compact", "waitforcompaction", "stats")


def phase_files(d):
    """{round: {phase: base path}} of one engine's directory."""
    runs = {}
    for meta in sorted(d.glob("r*-*.meta.json")):
        stem = meta.name[: -len(".meta.json")]
        rnd, _, phase = stem.partition("-")
        runs.setdefault(int(rnd[1:]), {})[phase] = meta.parent / stem
    return runs


def engine_rounds(d):
    """Per round: every workload's result (merged over the phases) and each
    phase's meta record."""
    rounds = []
    for _, phases in sorted(phase_files(d).items()):
        workloads, metas = {}, {}
        for phase, base in phases.items():
            res, meta = R.load_run(base)
            metas[phase] = meta
            for name, r in res.items():
                # A phase named for a second run of one workload ("as" in
                # workloads.toml) keeps its own row.
                key = phase if phase.startswith(name + "_") else name
                workloads[key] = dict(r, phase=phase)
        rounds.append((workloads, metas))
    return rounds


def live_bytes(flags, load_name, load):
    """Bytes of the distinct keys and values a load left (for space amp)."""
    num = int(R.flag_value(flags, "num", 1000000))
    kv = int(R.flag_value(flags, "key_size", 16)) + int(R.flag_value(flags, "value_size", 100))
    return R.expected_distinct(num, load.get("ops", num), load_name) * kv


def summarize_engine(rounds, flags):
    """Medians of one engine over its rounds."""
    names = []
    for workloads, _ in rounds:
        names += [n for n in workloads if n not in names]
    out = {"workloads": {}, "phases": {}, "rounds": len(rounds)}
    for n in names:
        rows = [w[n] for w, _ in rounds if n in w]
        entry = {k: R.median([r.get(k) for r in rows]) for k in METRICS}
        entry["found"] = R.median([r.get("found") for r in rows])
        entry["ops"] = R.median([r.get("ops") for r in rows])
        ops = [r.get("ops") or 0 for r in rows]
        reads = [r.get("io_read_bytes") for r in rows]
        if any(x is not None for x in reads) and any(ops):
            entry["io_read_bytes_per_op"] = R.median(
                [x / o for x, o in zip(reads, ops) if x is not None and o])
        entry["per_round_micros"] = [r.get("micros_per_op") for r in rows]
        out["workloads"][n] = entry
    # Memory per phase: the cgroup's peak where there was a budget, else
    # the process's peak RSS.
    phases = []
    for _, metas in rounds:
        phases += [p for p in metas if p not in phases]
    for p in phases:
        metas = [m[p] for _, m in rounds if p in m]
        out["phases"][p] = {
            "cgroup_peak_bytes": R.median([m.get("cgroup_peak_bytes") for m in metas]),
            "peak_rss_bytes": R.median([m.get("peak_rss_bytes") for m in metas]),
            "killed": sum(1 for m in metas if m.get("killed")),
            "failed": sum(1 for m in metas if m.get("returncode") not in (0, None)),
        }
    out.update(amplification(rounds, flags))
    return out


def amplification(rounds, flags):
    """Write amplification of the load (bytes written to storage by the fill
    and the flushes and compactions it waited for, over the user's bytes)
    and space amplification after it (bytes on disk over live user bytes).
    The load is the first fill and the maintenance workloads right after it
    (`waitforcompaction`): later workloads write for other reasons."""
    wamps, samps = [], []
    for workloads, _ in rounds:
        names = list(workloads)
        load = next((n for n in names if n in LOADS), None)
        if load is None:
            continue
        i = names.index(load)
        part = [workloads[load]]
        for n in names[i + 1:]:
            if n not in MAINTENANCE:
                break
            part.append(workloads[n])
        fill = workloads[load]
        written = [w.get("io_write_bytes") for w in part]
        user = fill.get("bytes") or 0
        if user and all(x is not None for x in written):
            wamps.append(sum(written) / user)
        disk = [w.get("disk_bytes") for w in part if w.get("disk_bytes") is not None]
        if disk:
            samps.append(disk[-1] / live_bytes(flags, load, fill))
    return {"write_amp": R.median(wamps), "space_amp": R.median(samps)}


def build(out, table, set_names, engines_order):
    """The summary of every set and variant found under `out`."""
    sets = []
    for name in set_names:
        spec = table["sets"][name]
        d = out / name
        if not d.is_dir():
            continue
        for variant_dir in sorted(p for p in d.iterdir() if p.is_dir()):
            entry = {"set": name, "variant": variant_dir.name, "title": spec.get("title", name),
                     "budget": spec.get("budget"), "engines": {}, "labels": {}}
            flags_file = variant_dir / "flags.json"
            flags = (json.loads(flags_file.read_text()) if flags_file.exists()
                     else spec.get("flags", []))
            entry["num"] = int(R.flag_value(flags, "num", 1000000))
            for e in engines_order:
                ed = variant_dir / e
                if ed.is_dir() and phase_files(ed):
                    entry["engines"][e] = summarize_engine(engine_rounds(ed), flags)
                    entry["labels"][e] = table["engines"][e].get("label", e)
            floors = [json.loads(f.read_text()) for f in sorted(variant_dir.glob("floor-r*.json"))]
            if floors:
                entry["floor"] = {k: R.median([f.get(k) for f in floors]) for k in floors[0]}
                entry["floor"]["rounds"] = len(floors)
            skipped = variant_dir / "skipped.json"
            if skipped.exists():
                entry["skipped"] = json.loads(skipped.read_text())
            if entry["engines"]:
                sets.append(entry)
    return sets


def fmt(x, spec="{:.3f}"):
    return "-" if x is None else spec.format(x)


def mib(x):
    return "-" if x is None else f"{x / 1048576:.0f}"


def workload_names(entry):
    """The measured workloads (not flush/compact/wait), in order."""
    names = []
    for e in entry["engines"].values():
        names += [n for n in e["workloads"] if n not in names and n not in MAINTENANCE]
    return names


def markdown(entry, table):
    """One set and variant as markdown tables."""
    eng = list(entry["engines"])
    peers = [e for e in eng if e != "slsm"]
    lines = [f"### {entry['set']} / {entry['variant']}: {entry['title']}", ""]
    rounds = max(e["rounds"] for e in entry["engines"].values())
    lines.append(f"Median micros/op over {rounds} alternating rounds; slsm/peer below 1 "
                 "means slsm is faster.")
    lines.append("")
    head = "| workload | " + " | ".join(eng + [f"slsm/{p}" for p in peers]) + " |"
    lines += [head, "|" + " --- |" * (1 + len(eng) + len(peers))]
    for n in workload_names(entry):
        vals = {e: entry["engines"][e]["workloads"].get(n, {}).get("micros_per_op") for e in eng}
        ratios = []
        for p in peers:
            s, v = vals.get("slsm"), vals.get(p)
            ratios.append(fmt(s / v if s and v else None, "{:.2f}"))
        lines.append(f"| {n} | " + " | ".join([fmt(vals[e]) for e in eng] + ratios) + " |")
    lines += ["", "Latency per call, p50 / p99 (us):", ""]
    lines += ["| workload | " + " | ".join(eng) + " |", "|" + " --- |" * (1 + len(eng))]
    for n in workload_names(entry):
        cells = []
        for e in eng:
            w = entry["engines"][e]["workloads"].get(n, {})
            cells.append(f"{fmt(w.get('p50_us'), '{:.1f}')} / {fmt(w.get('p99_us'), '{:.1f}')}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += ["", memory_table(entry, eng)]
    if entry.get("budget"):
        lines += ["", floor_lines(entry, eng)]
    reference = table["sets"][entry["set"]].get("reference")
    if reference and "slsm" in entry["engines"]:
        lines += ["", paper_lines(entry, reference)]
    if entry.get("skipped"):
        lines += ["", "Not run: " + "; ".join(f"{k}: {v}" for k, v in entry["skipped"].items())]
    return "\n".join(lines) + "\n"


def floor_lines(entry, eng):
    """The disk's floor measured in this run, and each engine's random
    read against one read per found key."""
    f = entry.get("floor")
    if not f:
        return "Disk floor: not measured in this run (it needs fio)."
    qd16 = f.get("qd16_iops")
    parallel = (f" and {qd16:,.0f} reads/s at queue depth 16 "
                f"({qd16 / f['qd1_iops']:.1f}x)") if qd16 and f.get("qd1_iops") else ""
    out = [f"Disk floor in this run (fio, 4 KiB random reads, direct I/O, before each of "
           f"{f['rounds']} rounds, medians): one read {f['qd1_mean_us']:.1f} us mean "
           f"({f['qd1_p50_us']:.1f} p50) at queue depth 1{parallel}."]
    per = []
    for e in eng:
        w = entry["engines"][e]["workloads"].get("readrandom", {})
        us, found, ops = w.get("micros_per_op"), w.get("found"), w.get("ops")
        if us and found and ops:
            floor_us = f["qd1_mean_us"] * found / ops
            per.append(f"{e} {us / floor_us:.2f}x")
    if per:
        out.append("`readrandom` against one such read per found key: " + ", ".join(per) + ".")
    return " ".join(out)


def paper_lines(entry, reference):
    """slsm against the sLSM paper's implementation measured on this machine."""
    s = entry["engines"]["slsm"]["workloads"]
    ins = s.get("fillrandom", {}).get("ops_per_sec")
    look = s.get("readrandom", {}).get("ops_per_sec")
    # The reference row for the nearest key count.
    num = min((int(k) for k in reference), key=lambda k: abs(k - entry["num"]))
    p_ins, p_look, p_rss = reference[str(num)]
    out = [f"The paper's implementation at {num:,} keys: {p_ins:,} inserts/s, "
           f"{p_look:,} lookups/s, {p_rss} MB resident (no WAL)."]
    if ins:
        out.append(f"slsm: {ins:,.0f} inserts/s = **{ins / p_ins:.2f}x** the paper.")
    if look:
        out.append(f"slsm: {look:,.0f} lookups/s = **{look / p_look:.2f}x** the paper.")
    return " ".join(out)


def memory_table(entry, eng):
    budget = entry.get("budget")
    what = f"cgroup peak (MiB, budget {budget})" if budget else "peak RSS (MiB)"
    rows = [f"| engine | {what} per phase | killed | write amp | space amp | "
            "storage bytes read per op |", "| --- | --- | --- | --- | --- | --- |"]
    for e in eng:
        s = entry["engines"][e]
        peaks = ", ".join(
            f"{p} {mib(v['cgroup_peak_bytes'] if budget else v['peak_rss_bytes'])}"
            for p, v in s["phases"].items())
        killed = sum(v["killed"] for v in s["phases"].values())
        reads = ", ".join(
            f"{n} {w['io_read_bytes_per_op']:.0f}" for n, w in s["workloads"].items()
            if w.get("io_read_bytes_per_op") is not None and ("read" in n or "seek" in n))
        rows.append(f"| {e} | {peaks} | {killed} | {fmt(s.get('write_amp'), '{:.2f}')} | "
                    f"{fmt(s.get('space_amp'), '{:.2f}')} | {reads or '-'} |")
    return "\n".join(rows)


def write(out, table, set_names, engines_order, machine):
    sets = build(out, table, set_names, engines_order)
    doc = {"machine": machine, "sets": sets}
    (out / "summary.json").write_text(json.dumps(doc, indent=1))
    text = "\n".join(markdown(s, table) for s in sets)
    (out / "summary.md").write_text(text)
    return text, sets
