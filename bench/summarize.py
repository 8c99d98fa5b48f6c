#!/usr/bin/env python3
"""Re-prints the summary of a compare.sh results directory (and rewrites its
summary.json and summary.md): bench/summarize.py bench/results/DATE"""

import json
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import summary  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    table = tomllib.loads((Path(__file__).parent / "workloads.toml").read_text())
    info_path = out / "machine.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    text, _ = summary.write(out, table, list(table["sets"]), list(table["engines"]), info)
    print(text)


if __name__ == "__main__":
    main()
