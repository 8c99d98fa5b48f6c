#!/usr/bin/env bash
# slsm serve against redis-server (Debian, AOF on, appendfsync everysec):
# redis-benchmark on each, alternating round by round, and a table of
# medians, ratios slsm/redis (above 1: slsm serves more), p50/p99 and the
# servers' peak RSS. A program, not a test.
#
#   bench/redis/compare.sh [--rounds 3] [--num 1000000] [--maxmemory 256mb]
#                          [--baseline BIN] [--all-tests]
#
# --all-tests runs redis-benchmark's default list of tests instead (PING,
# SET, GET, INCR, the list, set, hash and sorted-set tests, LRANGE_100 to
# _600, MSET: redis-benchmark run unchanged), at -P 1 only.
#
# --baseline BIN adds another slsm binary (say, a build of an older
# commit) as a third server, `slsm-baseline`, in the same rounds.
#
# Equal memory: redis-server keeps the whole data set in memory (~280 MB
# resident at the end of a round of 1M keys), so slsm serve is given a
# budget no larger (--maxmemory, default 256mb; its own default is 128mb,
# which RESULTS.md also reports). Peak RSS of both is printed.
#
# Each round starts each server on a fresh directory and a free port and
# runs: redis-benchmark -q -t set,get,incr,mset -n NUM -r NUM -d 100 -c 50
# with -P 1 and with -P 16 (--csv, for the percentiles).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=3
NUM=1000000
MAXMEMORY=256mb
BASELINE=""
TESTS="-t set,get,incr,mset -d 100"
PIPELINES="1 16"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift 2 ;;
    --num) NUM="$2"; shift 2 ;;
    --maxmemory) MAXMEMORY="$2"; shift 2 ;;
    --baseline) BASELINE="$2"; shift 2 ;;
    --all-tests) TESTS=""; PIPELINES="1"; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in redis-server redis-benchmark; do
  if ! command -v "$tool" >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && apt-get install -y -qq redis-server redis-tools >/dev/null
    else
      echo "needs $tool (apt-get install redis-server redis-tools)" >&2; exit 1
    fi
  fi
done
SLSM="${CARGO_TARGET_DIR:-target}/release/slsm"
# Always through cargo: it rebuilds only what changed, and a binary left
# from an older checkout is never measured by mistake.
cargo build --release -q -p slsm-cli
OUT="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }
peak_rss_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }

ENGINES="slsm redis${BASELINE:+ slsm-baseline}"
for round in $(seq "$ROUNDS"); do
  for engine in $ENGINES; do
    dir="$(mktemp -d)"; port="$(free_port)"
    case "$engine" in
      slsm) "$SLSM" serve --db "$dir/db" --bind "127.0.0.1:$port" --appendfsync everysec \
               --maxmemory "$MAXMEMORY" 2>/dev/null & ;;
      slsm-baseline) "$BASELINE" serve --db "$dir/db" --bind "127.0.0.1:$port" \
               --appendfsync everysec --maxmemory "$MAXMEMORY" 2>/dev/null & ;;
      redis) redis-server --port "$port" --dir "$dir" --appendonly yes --appendfsync everysec \
               --save '' --daemonize no --logfile /dev/null & ;;
    esac
    pid=$!
    wait_up "$port"
    for p in $PIPELINES; do
      echo "round $round: $engine -P $p" >&2
      # shellcheck disable=SC2086 # TESTS is a list of words
      redis-benchmark -p "$port" $TESTS -n "$NUM" -r "$NUM" -c 50 -P "$p" --csv \
        | sed "s/^/$engine,$p,$round,/" >> "$OUT/results.csv"
    done
    echo "$engine,$round,$(peak_rss_kb "$pid")" >> "$OUT/rss.csv"
    redis-cli -p "$port" shutdown >/dev/null 2>&1 || kill "$pid"
    wait "$pid" 2>/dev/null || true
    rm -rf "$dir"
  done
done
python3 - "$OUT" "$ROUNDS" "$NUM" "$MAXMEMORY" "$TESTS" <<'PY'
import csv, statistics, sys, collections
out, rounds, num, maxmemory, tests = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
rows = collections.defaultdict(list)
order = []
for r in csv.reader(open(f"{out}/results.csv")):
    if len(r) < 10 or r[3] == "test":
        continue
    engine, p, _, test = r[0], r[1], r[2], r[3]
    if test not in order:
        order.append(test)
    rows[(engine, p, test)].append((float(r[4]), float(r[7]), float(r[9])))
rss = collections.defaultdict(list)
for engine, _, kb in csv.reader(open(f"{out}/rss.csv")):
    rss[engine].append(int(kb) / 1024)
print(f"\nredis-benchmark {tests or '(its default tests)'} -n {num} -r {num} -c 50, medians of {rounds} alternating rounds; slsm serve --maxmemory {maxmemory}")
base = any(k[0] == "slsm-baseline" for k in rows)
extra = " slsm-baseline rps | slsm/slsm-baseline |" if base else ""
print("| test | pipeline | slsm rps | redis rps | slsm/redis | slsm p50 / p99 ms | redis p50 / p99 ms |" + extra)
print("| --- | --- | --- | --- | --- | --- | --- |" + (" --- | --- |" if base else ""))
med = lambda xs, i: statistics.median(x[i] for x in xs)
for p in ("1", "16"):
    for test in order:
        s, r = rows.get(("slsm", p, test)), rows.get(("redis", p, test))
        if not s or not r:
            continue
        line = (f"| {test} | {p} | {med(s,0):,.0f} | {med(r,0):,.0f} | {med(s,0)/med(r,0):.2f} | "
                f"{med(s,1):.3f} / {med(s,2):.3f} | {med(r,1):.3f} / {med(r,2):.3f} |")
        b = rows.get(("slsm-baseline", p, test))
        if base and b:
            line += f" {med(b,0):,.0f} | {med(s,0)/med(b,0):.2f} |"
        print(line)
print("\npeak RSS (MB, median): " + ", ".join(f"{e} {statistics.median(v):.0f}" for e, v in rss.items()))
PY
