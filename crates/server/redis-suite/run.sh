#!/usr/bin/env bash
# Redis's own TCL test suite against `slsm serve`, one unit at a time, each
# against a fresh server, with the suite's harness unpatched.
#
#   crates/server/redis-suite/run.sh [--fetch] [--slsm BIN] [--tests DIR] [UNIT...]
#
# --fetch     get Debian's source package of redis (its tests/ and runtest,
#             for the version Debian ships) into target/redis-suite/ first
#             (needs a deb-src entry: added here for the system's suites).
# --slsm BIN  the slsm binary (default target/release/slsm, else debug).
# --tests DIR a Redis source tree's tests/ (default: the fetched one).
# --skip UNIT leave a unit of the default list out (repeatable).
# UNIT        units to run (default: the list below; slsm-acl and
#             slsm-acl-v2 are derived from unit/acl and unit/acl-v2, see
#             derive_first_block).
#
# A line `skip UNIT: NAME` on either list passes `--skiptest NAME` to the
# harness: for a test whose failure is an exception that would end its
# whole unit.
#
# Prints each unit's passed and failed counts, then every failure that is
# on neither committed list: known-differences.txt (deliberate differences,
# each with its reason) and open-failures.txt (differences not yet fixed,
# each with its cause: issue 66's work list, which only shrinks). Exits 1
# if there is one, or if a unit did not finish (a hang ends at the
# per-unit timeout).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
work="$root/target/redis-suite"
mkdir -p "$work"

units_default=(
  unit/type/string unit/type/incr unit/type/list unit/type/list-2 unit/type/list-3
  unit/type/set unit/type/zset unit/type/hash unit/type/stream unit/type/stream-cgroups
  unit/keyspace unit/scan unit/expire unit/multi unit/scripting unit/functions
  unit/pubsub unit/pubsubshard unit/dump unit/bitops unit/bitfield unit/sort
  unit/info-command unit/introspection unit/introspection-2 unit/querybuf
  unit/protocol unit/quit unit/geo unit/hyperloglog unit/latency-monitor
  unit/slowlog unit/other unit/tracking unit/info unit/auth unit/acl unit/limits
  unit/slsm-acl unit/slsm-acl-v2
)
fetch=0 slsm="" tests=""
units=() skip=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fetch) fetch=1 ;;
    --slsm) slsm="$2"; shift ;;
    --tests) tests="$2"; shift ;;
    --skip) skip+=("$2"); shift ;;
    *) units+=("$1") ;;
  esac
  shift
done
if [ ${#units[@]} -eq 0 ]; then
  for u in "${units_default[@]}"; do
    case " ${skip[*]:-} " in *" $u "*) ;; *) units+=("$u") ;; esac
  done
fi

if [ "$fetch" = 1 ] && [ -z "$tests" ] && ! ls -d "$work"/redis-*/tests >/dev/null 2>&1; then
  if ! grep -rqs '^Types: deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      > /etc/apt/sources.list.d/slsm-deb-src.sources
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcl dpkg-dev >/dev/null
  (cd "$work" && apt-get source -qq redis >/dev/null 2>&1)
fi
if [ -z "$tests" ]; then
  tests="$(ls -d "$work"/redis-*/tests 2>/dev/null | head -1)"
fi
[ -d "$tests" ] || { echo "no Redis tests/ directory (use --fetch or --tests)" >&2; exit 2; }
if [ -z "$slsm" ]; then
  slsm="$root/target/release/slsm"
  [ -x "$slsm" ] || slsm="$root/target/debug/slsm"
fi
[ -x "$slsm" ] || { echo "no slsm binary at $slsm" >&2; exit 2; }
src="$(dirname "$tests")"

# unit/acl and unit/acl-v2 are tagged external:skip as a whole, but their
# first server block needs nothing an external server lacks (no start-up
# options, no restart): slsm-acl and slsm-acl-v2 are that block of each,
# word for word, with the tag lifted. The blocks after it start servers
# with an ACL file or `user` lines; crates/server/tests/server/acl.rs
# covers those paths.
derive_first_block() {
  awk 'NR == 1 { sub(/"acl external:skip"/, "\"acl\"") } /^set server_path/ { exit } { print }' \
    "$tests/unit/$1.tcl" >"$tests/unit/slsm-$1.tcl"
}
derive_first_block acl
derive_first_block acl-v2

# A free port on loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Both lists as "unit: test name" lines (the reasons are the comment lines).
listed="$(mktemp)"
sed -E '/^#/d; /^$/d' "$here/known-differences.txt" "$here/open-failures.txt" >"$listed" 2>/dev/null
# The harness's own ports, apart from another run's on this machine.
baseport=$((21111 + ($$ % 300) * 100))
unexpected=0 total_ok=0 total_err=0
printf '%-28s %6s %6s\n' unit passed failed
# One unit against a fresh server: sets status, ok and err.
run_unit() {
  local unit="$1" name="${1##*/}" db port server
  db="$(mktemp -d)"
  port="$(free_port)"
  "$slsm" serve --db "$db" --bind "127.0.0.1:$port" >"$work/$name.server.log" 2>&1 &
  server=$!
  for _ in $(seq 300); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  log="$work/$name.log"
  # Tests the lists say to skip (`skip UNIT: NAME`): those whose failure
  # would end the whole unit (an exception), so the rest of it still runs.
  local skips=()
  while IFS= read -r t; do
    skips+=(--skiptest "$t")
  done < <(sed -nE "s/^skip $name: //p" "$here/known-differences.txt" "$here/open-failures.txt")
  (cd "$src" && TERM=dumb timeout 900 ./runtest --host 127.0.0.1 --port "$port" --singledb \
      --ignore-encoding --ignore-digest --timeout 120 --baseport "$baseport" \
      --tags "-needs:debug -needs:repl -needs:pfdebug" \
      "${skips[@]}" --single "$unit" >"$log" 2>&1)
  status=$?
  kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
  rm -rf "$db"
  ok=$(grep -c '^\[ok\]' "$log")
  err=$(grep -cE '^\[(err|exception)\]' "$log")
}

# What a unit that stopped early left behind, to see why without a rerun.
show_tails() {
  local name="$1"
  echo "    --- the harness's last lines ($work/$name.log):"
  tail -n 15 "$work/$name.log" | sed 's/^/    | /'
  echo "    --- the server's last lines ($work/$name.server.log):"
  tail -n 15 "$work/$name.server.log" | sed 's/^/    | /'
}

for unit in "${units[@]}"; do
  name="${unit##*/}"
  run_unit "$unit"
  # A harness that exits before its first test (its own ports, its client
  # processes) has said nothing about slsm: that is retried once, after
  # showing why. A unit that ran a test and then stopped is not retried.
  if [ "$status" -ne 0 ] && [ "$ok" -eq 0 ] && [ "$err" -eq 0 ]; then
    echo "$name: the harness stopped before its first test (status $status); retried once"
    show_tails "$name"
    baseport=$((baseport + 50))
    run_unit "$unit"
  fi
  total_ok=$((total_ok + ok)); total_err=$((total_err + err))
  note=""
  if grep -q '^\[TIMEOUT\]' "$log"; then
    note="  (timed out in: $(grep -m1 'IN PROGRESS' "$log" | sed -E 's/.*\(IN PROGRESS\) //'))"
    unexpected=$((unexpected + 1))
  elif [ "$status" -ne 0 ] && [ "$err" -eq 0 ]; then
    note="  (did not finish: status $status)"
    unexpected=$((unexpected + 1))
  fi
  printf '%-28s %6d %6d%s\n' "$name" "$ok" "$err" "$note"
  [ -n "$note" ] && show_tails "$name"
  # Failures not on the list of deliberate differences.
  while IFS= read -r line; do
    test_name="$(sed -E 's/^\[(err|exception)\]: //; s/ in tests\/.*$//' <<<"$line")"
    if ! grep -qxF "$name: $test_name" "$listed"; then
      echo "    unexpected: $test_name"
      unexpected=$((unexpected + 1))
    fi
  done < <(grep -E '^\[(err|exception)\]' "$log")
done
printf '%-28s %6d %6d\n' total "$total_ok" "$total_err"
[ "$unexpected" -eq 0 ]
