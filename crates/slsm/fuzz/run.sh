#!/usr/bin/env bash
# Runs every fuzz target for a short fixed time, starting from the committed
# seeds. Needs nightly and cargo-fuzz (`cargo install cargo-fuzz`).
#
#   crates/slsm/fuzz/run.sh            # 20 s per target
#   SECONDS_PER_TARGET=180 crates/slsm/fuzz/run.sh
#
# Exits non-zero on the first crash (the reproducer is in fuzz/artifacts/).
set -euo pipefail
cd "$(dirname "$0")"
secs="${SECONDS_PER_TARGET:-20}"
targets=(run_reader wal_reader manifest_decode db_model resp_parser dump_payload)
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    echo "== $t (${secs}s)"
    # A scratch copy of the corpus, so new inputs do not pile up in the
    # committed seed directory.
    work="$(mktemp -d)"
    cp "corpus/$t"/* "$work"/ 2>/dev/null || true
    log="$work.log"
    set +e
    cargo +nightly fuzz run "$t" "$work" -- \
        -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|#[0-9]+ +DONE)|SUMMARY|panicked" "$log" || tail -20 "$log"
    rm -f "$log"
    rm -rf "$work"
    if [ "$status" -ne 0 ]; then
        echo "fuzz target $t failed (exit $status); see crates/slsm/fuzz/artifacts/$t" >&2
        exit "$status"
    fi
done
