#!/usr/bin/env bash
# Runs the sets of bench/workloads.toml through slsm and its peers; see
# bench/compare.py (the orchestration) and bench/README.md. Needs Python 3.11+.
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/compare.py" "$@"
