#!/usr/bin/env bash
# Runs every fuzz target of a fuzz directory for a short fixed time,
# starting from its committed seeds. Needs nightly and cargo-fuzz
# (`cargo install cargo-fuzz`).
#
#   crates/slsm/fuzz/run.sh                       # the engine's, 20 s each
#   crates/slsm/fuzz/run.sh crates/server/fuzz    # the server's
#   SECONDS_PER_TARGET=180 crates/slsm/fuzz/run.sh
#
# FUZZ_TARGET_DIR, when set, is the build directory of every directory's
# targets (the engine's and the server's then share the engine's build).
#
# Exits non-zero on the first crash (the reproducer is in the directory's
# artifacts/).
set -euo pipefail
dir="$(cd "${1:-$(dirname "$0")}" && pwd)"
cd "$dir"
secs="${SECONDS_PER_TARGET:-20}"
mapfile -t targets < <(cargo +nightly fuzz list)
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    echo "== $t (${secs}s)"
    # A scratch copy of the corpus, so new inputs do not pile up in the
    # committed seed directory.
    work="$(mktemp -d)"
    cp "corpus/$t"/* "$work"/ 2>/dev/null || true
    log="$work.log"
    set +e
    cargo +nightly fuzz run ${FUZZ_TARGET_DIR:+--target-dir "$FUZZ_TARGET_DIR"} "$t" "$work" -- \
        -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|#[0-9]+ +DONE)|SUMMARY|panicked" "$log" || tail -20 "$log"
    rm -f "$log"
    rm -rf "$work"
    if [ "$status" -ne 0 ]; then
        echo "fuzz target $t failed (exit $status); see $dir/artifacts/$t" >&2
        exit "$status"
    fi
done
