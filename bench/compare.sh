#!/usr/bin/env bash
# Runs the same db_bench workloads through `slsm bench`, RocksDB's db_bench
# and the fjall peer, alternating the tools round by round (A B C A B C ...),
# and prints per workload the median micros/op of each tool and the ratios
# slsm/RocksDB and slsm/fjall. See crates/cli/README.md ("compare.sh").
#
# Usage: bench/compare.sh [--quick] [--rounds N] [--sets default,mem,paper,memdb]
#                         [--out DIR] [--dbdir DIR] [--tools slsm,rocksdb,fjall]
#                         [--num N] [--reads N] [--no-install] [--no-build]
# (--num/--reads override the default set's 5,000,000 keys / 500,000 reads.)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS=3
QUICK=0
SETS="default,mem,paper,memdb"
TOOLS="slsm,rocksdb,fjall"
OUT=""
DBDIR="${TMPDIR:-/tmp}/slsm-compare-db"
INSTALL=1
BUILD=1
NUM_OVERRIDE=""
READS_OVERRIDE=""

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --rounds) ROUNDS="$2"; shift ;;
    --rounds=*) ROUNDS="${1#*=}" ;;
    --sets) SETS="$2"; shift ;;
    --sets=*) SETS="${1#*=}" ;;
    --tools) TOOLS="$2"; shift ;;
    --tools=*) TOOLS="${1#*=}" ;;
    --out) OUT="$2"; shift ;;
    --out=*) OUT="${1#*=}" ;;
    --dbdir) DBDIR="$2"; shift ;;
    --dbdir=*) DBDIR="${1#*=}" ;;
    --num) NUM_OVERRIDE="$2"; shift ;;
    --num=*) NUM_OVERRIDE="${1#*=}" ;;
    --reads) READS_OVERRIDE="$2"; shift ;;
    --reads=*) READS_OVERRIDE="${1#*=}" ;;
    --no-install) INSTALL=0 ;;
    --no-build) BUILD=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "compare.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
case "$ROUNDS" in ''|*[!0-9]*) echo "--rounds needs a number" >&2; exit 2 ;; esac
[ "$ROUNDS" -ge 1 ] || { echo "--rounds must be at least 1" >&2; exit 2; }

SUFFIX=""; [ "$QUICK" = 1 ] && SUFFIX="-quick"
OUT="${OUT:-$ROOT/bench/results/$(date +%Y%m%d-%H%M%S)$SUFFIX}"
mkdir -p "$OUT" "$DBDIR"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
SLSM="$TARGET/release/slsm"
FJALL="$TARGET/release/fjall-bench"
MEMDB="$TARGET/release/memdb-bench"
has_tool() { case ",$TOOLS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
has_set() { case ",$SETS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
log() { echo "== $*" >&2; }

# --- install and build ------------------------------------------------------
if has_tool rocksdb && ! command -v db_bench >/dev/null 2>&1; then
  if [ "$INSTALL" = 1 ]; then
    log "installing rocksdb-tools (db_bench)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq rocksdb-tools >/dev/null
  fi
  command -v db_bench >/dev/null 2>&1 || { log "db_bench unavailable: skipping RocksDB"; TOOLS="${TOOLS//rocksdb/}"; }
fi
if [ "$BUILD" = 1 ]; then
  log "building slsm (release)"
  (cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release -q -p slsm-cli)
  if has_tool fjall; then
    log "building the fjall peer (release)"
    (cd "$ROOT/bench/peers/fjall" && CARGO_TARGET_DIR="$TARGET" cargo build --release -q)
  fi
  if has_set memdb; then
    if command -v go >/dev/null 2>&1; then
      log "building the goleveldb memdb peer"
      (cd "$ROOT/bench/peers/goleveldb" && go build -o "$MEMDB" .)
    else
      log "go not found: the memdb set runs without goleveldb"
    fi
  fi
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
  echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "rounds: $ROUNDS quick: $QUICK sets: $SETS tools: $TOOLS"
  echo "databases: $DBDIR ($(df -T "$DBDIR" | awk 'NR==2 {print $2 " on " $1}'))"
  command -v db_bench >/dev/null 2>&1 && echo "rocksdb: $(dpkg-query -W -f='${Version}' rocksdb-tools 2>/dev/null || echo unknown)"
} > "$OUT/machine.txt"

# run TOOL SET ROUND FLAGS... : one invocation, stdout kept in the results dir.
run() {
  local tool="$1" set="$2" round="$3"; shift 3
  local db="$DBDIR/$tool" out="$OUT/$set/$tool.r$round.txt"
  mkdir -p "$OUT/$set"
  rm -rf "$db"
  log "$set round $round: $tool"
  case "$tool" in
    slsm) "$SLSM" bench "$@" --db="$db" --json="$OUT/$set/$tool.r$round.json" >"$out" 2>"$out.err" ;;
    fjall) "$FJALL" "$@" --db="$db" --json="$OUT/$set/$tool.r$round.json" >"$out" 2>"$out.err" ;;
    # db_bench does not report its memory: append the child's peak RSS in
    # the same "Peak RSS:" line slsm bench prints.
    rocksdb) python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("Peak RSS:   %.1f MB (ru_maxrss)" % (kb / 1024.0), flush=True)
sys.exit(rc)' db_bench "$@" --db="$db" >"$out" 2>"$out.err" ;;
  esac || { echo "compare.sh: $tool failed in $set round $round; see $out.err" >&2; tail -5 "$out.err" >&2; }
  rm -rf "$db"
}

# --- the sets ---------------------------------------------------------------
if [ "$QUICK" = 1 ]; then NUM=100000; READS=10000; MEMNUM=200000; PAPERNUM=1000000
else NUM=5000000; READS=500000; MEMNUM=4194304; PAPERNUM=10000000; fi
NUM="${NUM_OVERRIDE:-$NUM}"
READS="${READS_OVERRIDE:-$READS}"

DEFAULT_W="fillrandom,overwrite,readrandom,multireadrandom,seekrandom,readseq,fillseq,deleterandom,readwhilewriting"
COMMON=(--key_size=16 --value_size=100 --num=$NUM --reads=$READS --batch_size=64
        --compression_type=none --histogram=1 --threads=1)
# Everything in the buffer, WAL off. RocksDB gets a 2 GiB write buffer (more
# than 4M x (32+32) plus overhead); slsm and fjall get --memtable, their
# in-memory mode, which sizes the buffer from --num.
MEM_COMMON=(--key_size=32 --value_size=32 --num=$MEMNUM --reads=$MEMNUM
            --disable_wal=1 --compression_type=none --histogram=1)

summaries=()
for round in $(seq 1 "$ROUNDS"); do
  if has_set default; then
    for tool in slsm rocksdb fjall; do
      has_tool $tool && run $tool default "$round" --benchmarks=$DEFAULT_W "${COMMON[@]}"
    done
  fi
  if has_set mem; then
    for tool in slsm rocksdb fjall; do
      has_tool $tool || continue
      if [ $tool = rocksdb ]; then extra=(--write_buffer_size=2147483648); else extra=(--memtable=1); fi
      run $tool mem "$round" --benchmarks=fillrandom,readrandom "${MEM_COMMON[@]}" "${extra[@]}"
    done
  fi
  if has_set memdb; then
    # goleveldb PR #387's workload: 32-byte keys, 32/96/256-byte values,
    # against goleveldb's memdb, the bare slsm-skiplist and slsm's memtable mode.
    for vs in 32 96 256; do
      mkdir -p "$OUT/memdb"
      if [ -x "$MEMDB" ]; then
        log "memdb round $round: goleveldb ${vs}"
        "$MEMDB" -num=$MEMNUM -value_sizes=$vs >"$OUT/memdb/goleveldb-v$vs.r$round.txt" 2>&1 || true
      fi
      for eng in skiplist slsm; do
        log "memdb round $round: $eng ${vs}"
        "$SLSM" bench --engine=$eng --benchmarks=fillrandom_mem,readrandom_mem --key_size=32 \
          --value_size=$vs --num=$MEMNUM --db="$DBDIR/memdb" \
          >"$OUT/memdb/$eng-v$vs.r$round.txt" 2>&1 || true
        rm -rf "$DBDIR/memdb"
      done
    done
  fi
  if has_set paper; then
    run slsm paper "$round" --benchmarks=fillrandom,readrandom --key_size=4 --value_size=4 \
      --num=$PAPERNUM --compression_type=none --histogram=1
  fi
done

python3 "$ROOT/bench/summarize.py" "$OUT" --paper-num $PAPERNUM | tee "$OUT/summary.txt"

# Charts of the medians (one color per tool).
for set in default mem; do
  files=()
  for tool in slsm rocksdb fjall; do
    [ -f "$OUT/$set/median-$tool.json" ] && files+=("$OUT/$set/median-$tool.json")
  done
  if [ ${#files[@]} -gt 0 ]; then
    "$SLSM" plot "${files[@]}" -o "$OUT/$set.svg" --title "$set set, median of $ROUNDS rounds" 2>/dev/null \
      && echo "chart: $OUT/$set.svg"
  fi
done
echo "results: $OUT"
