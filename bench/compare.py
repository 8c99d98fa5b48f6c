#!/usr/bin/env python3
"""Runs the sets of bench/workloads.toml through slsm and its peers,
alternating the engines round by round (A B C, A B C, ...), and prints per
set the median of every figure, the ratios slsm/peer, latency percentiles,
memory peaks, storage I/O per operation and write and space amplification.

  bench/compare.sh [--sets default,mem] [--tools slsm,rocksdb,fjall]
                   [--rounds N] [--budget SIZE] [--compression none,lz4]
                   [--quick] [--num N] [--reads N] [--out DIR] [--dbdir DIR]
                   [--baseline BINARY] [--no-build] [--no-install]

--sets        sets of workloads.toml (default: default,mem,paper,memdb)
--tools       engines (default: those marked default in workloads.toml;
              db_bench_debug, Debian's debug build, only when named)
--rounds      alternating rounds; every figure is a median over them (3)
--budget      run every process of the chosen sets in a memory cgroup of
              this size (resident memory + page cache, e.g. 256M), page cache
              dropped before each; sets with a budget of their own use it
              anyway. Needs root.
--compression run only these compressions of each set
--quick       the sets' small sizes: a smoke run of a few minutes
--num/--reads override --num / --reads of every set
--out         results directory (default bench/results/DATE)
--dbdir       where databases are created (default $TMPDIR/slsm-compare-db)
--baseline P  also run the slsm binary P as engine "slsm-baseline" wherever
              slsm runs (an A/B of two builds, alternating like the peers)
--no-build    use the binaries as they are
--no-install  do not apt-get install what an engine needs
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import cgroup, floor, summary  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "bench" / "workloads.toml"
DEFAULT_SETS = "default,mem,paper,memdb"


def log(msg):
    print(f"== {msg}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], usage=__doc__)
    p.add_argument("--sets", default=DEFAULT_SETS)
    p.add_argument("--tools", default=None)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--budget", default=None)
    p.add_argument("--compression", default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--num", type=int, default=None)
    p.add_argument("--reads", type=int, default=None)
    p.add_argument("--out", default=None)
    p.add_argument("--dbdir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                   "slsm-compare-db"))
    p.add_argument("--baseline", default=None)
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--no-install", action="store_true")
    a = p.parse_args(argv)
    if a.rounds < 1:
        p.error("--rounds must be at least 1")
    return a


class Env:
    """Where things are: the repository, build directories, results."""

    def __init__(self, args):
        self.target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        self.cache = Path(os.environ.get("SLSM_BENCH_CACHE",
                                         Path.home() / ".cache" / "slsm-bench"))
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.out = Path(args.out or ROOT / "bench" / "results" /
                        (stamp + ("-quick" if args.quick else "")))
        self.dbdir = Path(args.dbdir)

    def expand(self, text):
        return text.replace("{target}", str(self.target)).replace("{cache}", str(self.cache))


def apt_install(packages):
    missing = [p for p in packages
               if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not missing:
        return True
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        log(f"missing packages {missing}: install them (apt-get install {' '.join(missing)})")
        return False
    log(f"installing {' '.join(missing)}")
    subprocess.run(["apt-get", "update", "-qq"], check=False)
    return subprocess.run(["apt-get", "install", "-y", "-qq", *missing],
                          stdout=subprocess.DEVNULL).returncode == 0


def prepare(engines, table, env, args):
    """Installs and builds every engine; returns the ones that can run."""
    ready, done = [], set()
    for name in engines:
        spec = table["engines"][name]
        if spec.get("apt") and not args.no_install and not apt_install(spec["apt"]):
            log(f"{name}: its packages are missing; skipped")
            continue
        cmd = spec.get("build")
        if cmd and not args.no_build and cmd not in done:
            log(f"building {name}")
            env.cache.mkdir(parents=True, exist_ok=True)
            r = subprocess.run(env.expand(cmd), shell=True, cwd=ROOT)
            done.add(cmd)
            if r.returncode != 0:
                log(f"{name}: build failed; skipped")
                continue
        binary = env.expand(spec["binary"])
        if not (Path(binary).exists() or shutil.which(binary)):
            log(f"{name}: {binary} not found; skipped")
            continue
        ready.append(name)
    return ready


def variants(spec, args):
    """One run of the set per compression (or per value size, for memdb)."""
    if "value_sizes" in spec:
        return [f"v{v}" for v in spec["value_sizes"]]
    wanted = spec.get("compressions", ["none"])
    if args.compression:
        wanted = [c for c in wanted if c in args.compression.split(",")]
    return wanted


def set_flags(spec, args):
    flags = list(spec.get("flags", []))
    if args.quick:
        flags += spec.get("quick", [])
    if args.num:
        flags.append(f"--num={args.num}")
    if args.reads:
        flags.append(f"--reads={args.reads}")
    return flags


def phases(spec, quick):
    """[(phase name, workload names, extra flags, on the existing database)]."""
    def entry(w):
        if isinstance(w, str):
            return (w, w, [])
        # "as" names a second run of a workload with other flags (its phase
        # and its row in the summary: "readwhilewriting_at_rate").
        flags = w.get("flags", []) + (w.get("quick", []) if quick else [])
        return (w.get("as", w["name"]), w["name"], flags)
    work = [entry(w) for w in spec["workloads"]]
    if spec.get("phases", "one") == "one":
        return [("all", [n for _, n, _ in work], [f for _, _, fl in work for f in fl], False)]
    out = [("load", list(spec.get("load", ["fillrandom"])), [], False)]
    out += [(phase, [n], fl, True) for phase, n, fl in work]
    return out


def command(name, spec, table, variant, phase, flags, env, files):
    engine = table["engines"][name]
    binary = env.expand(engine["binary"])
    phase_name, benchmarks, extra, existing = phase
    if engine.get("style") == "memdb":
        num = next((f.split("=")[1] for f in reversed(flags) if f.startswith("--num=")), "4194304")
        return [binary, f"-num={num}", f"-value_sizes={variant[1:]}"]
    cmd = [binary, *engine.get("args", []), *flags, *extra,
           f"--benchmarks={','.join(benchmarks)}", f"--db={env.dbdir / name}"]
    if variant.startswith("v"):
        cmd.append(f"--value_size={variant[1:]}")
    else:
        cmd.append(f"--compression_type={variant}")
    if spec.get("memtable"):
        cmd += engine.get("memtable", [])
    if existing:
        cmd.append("--use_existing_db=1")
    if engine.get("output", "json") == "json":
        cmd.append(f"--json={files.with_suffix('.json')}")
    return cmd


def run_process(cmd, base, budget):
    """Runs one benchmark process (in a cgroup if `budget`), keeping its
    output; returns its meta record."""
    meta = {"command": " ".join(shlex.quote(c) for c in cmd), "budget_bytes": budget}
    start = time.monotonic()
    with open(base.with_suffix(".txt"), "w") as out, open(base.with_suffix(".err"), "w") as err:
        if budget:
            cgroup.drop_page_cache()
            with cgroup.Budget(budget, "slsm-bench") as cg:
                proc = subprocess.Popen(cmd, stdout=out, stderr=err, preexec_fn=cg.enter_from_child)
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
                meta["cgroup_peak_bytes"] = cg.peak()
                meta["oom_kills"] = cg.oom_kills()
        else:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
    meta["returncode"] = proc.returncode
    meta["killed"] = proc.returncode == -9 or meta.get("oom_kills", 0) > 0
    meta["seconds"] = time.monotonic() - start
    meta["rusage_maxrss_bytes"] = usage.ru_maxrss * 1024
    meta.setdefault("peak_rss_bytes", usage.ru_maxrss * 1024)
    base.with_suffix(".meta.json").write_text(json.dumps(meta, indent=1))
    return meta


def wipe(path):
    """Removes a database directory this script created (under --dbdir)."""
    if path.exists():
        shutil.rmtree(path)


def run_set(set_name, spec, table, engines, rnd, env, args):
    flags = set_flags(spec, args)
    budget = cgroup.parse_size(args.budget or spec["budget"]) if (
        args.budget or spec.get("budget")) else None
    for variant in variants(spec, args):
        vdir = env.out / set_name / variant
        vdir.mkdir(parents=True, exist_ok=True)
        (vdir / "flags.json").write_text(json.dumps(flags))
        if budget:
            measured = floor.measure(env.dbdir)
            if measured:
                (vdir / f"floor-r{rnd}.json").write_text(json.dumps(measured))
        skipped = {}
        for name in [e for e in spec["engines"] if e in engines]:
            supported = table["engines"][name].get("compressions", ["none"])
            if not variant.startswith("v") and variant not in supported:
                skipped[name] = f"no {variant} compression"
                continue
            edir = vdir / name
            edir.mkdir(exist_ok=True)
            wipe(env.dbdir / name)
            for phase in phases(spec, args.quick):
                base = edir / f"r{rnd}-{phase[0]}"
                log(f"{set_name}/{variant} round {rnd}: {name} {phase[0]}")
                cmd = command(name, spec, table, variant, phase, flags, env, base)
                meta = run_process(cmd, base, budget)
                if meta["returncode"] != 0:
                    why = "killed (out of memory)" if meta["killed"] else f"exit {meta['returncode']}"
                    log(f"{name} {phase[0]}: {why}; see {base.with_suffix('.err')}")
                    if phase[0] == "load":
                        break
            wipe(env.dbdir / name)
        if skipped:
            (vdir / "skipped.json").write_text(json.dumps(skipped))


def machine(env, args, sets, engines):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": f"{platform.system()} {platform.release()} {platform.machine()}",
            "cpu": f"{cpu} x {os.cpu_count()}", "memory_gib": round(mem / 1048576, 1),
            "commit": git, "rounds": args.rounds, "quick": args.quick,
            "sets": sets, "engines": engines, "budget": args.budget,
            "command": "bench/compare.sh " + " ".join(shlex.quote(a) for a in sys.argv[1:])}


def charts(env, sets):
    slsm = env.target / "release" / "slsm"
    if not slsm.exists():
        return
    for s in sets:
        name = f"{s['set']}-{s['variant']}"
        out = env.out / f"{name}.svg"
        r = subprocess.run([str(slsm), "plot", str(env.out / "summary.json"), "--set", name,
                            "-o", str(out)], capture_output=True, text=True)
        if r.returncode == 0:
            print(f"chart: {out}")
        else:
            log(f"chart {name}: {r.stderr.strip()}")


def add_baseline(table, binary):
    """Engine "slsm-baseline": slsm's entry with another binary, in every set
    slsm runs in, right after it."""
    spec = dict(table["engines"]["slsm"], binary=str(Path(binary).resolve()),
                label=f"slsm baseline ({Path(binary).name})", default=True)
    spec.pop("build", None)
    table["engines"]["slsm-baseline"] = spec
    for s in table["sets"].values():
        if "slsm" in s["engines"]:
            i = s["engines"].index("slsm")
            s["engines"] = s["engines"][: i + 1] + ["slsm-baseline"] + s["engines"][i + 1:]


def main(argv):
    args = parse_args(argv)
    table = tomllib.loads(TABLE.read_text())
    if args.baseline:
        add_baseline(table, args.baseline)
    sets = [s for s in args.sets.split(",") if s]
    unknown = [s for s in sets if s not in table["sets"]]
    if unknown:
        sys.exit(f"compare.sh: unknown sets {unknown} (known: {', '.join(table['sets'])})")
    tools = (args.tools.split(",") if args.tools else
             [e for e, spec in table["engines"].items() if spec.get("default")])
    if args.baseline and "slsm-baseline" not in tools:
        tools.append("slsm-baseline")
    bad = [t for t in tools if t not in table["engines"]]
    if bad:
        sys.exit(f"compare.sh: unknown tools {bad} (known: {', '.join(table['engines'])})")
    if args.budget or any(table["sets"][s].get("budget") for s in sets):
        try:
            cgroup.check_usable()
        except cgroup.BudgetError as e:
            sys.exit(f"compare.sh: {e}")
        if not args.no_install:
            apt_install(["fio"])  # the disk's floor beside the figures
    env = Env(args)
    wanted = [e for e in tools if any(e in table["sets"][s]["engines"] for s in sets)]
    engines = prepare(wanted, table, env, args)
    env.out.mkdir(parents=True, exist_ok=True)
    env.dbdir.mkdir(parents=True, exist_ok=True)
    info = machine(env, args, sets, engines)
    (env.out / "machine.json").write_text(json.dumps(info, indent=1))
    for rnd in range(1, args.rounds + 1):
        for s in sets:
            run_set(s, table["sets"][s], table, engines, rnd, env, args)
    floor.remove(env.dbdir)
    text, summarized = summary.write(env.out, table, sets, list(table["engines"]), info)
    print(text)
    charts(env, summarized)
    print(f"results: {env.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
