#!/usr/bin/env python3
"""Typed ``fastcsv.read_arrow`` on one thread, before and after a change,
beside its peers on one thread, in one run: wall and CPU seconds (user +
sys) of the read call, medians of ``--reps`` fresh processes per engine,
engines taken round robin (``benches/python_speed.py`` runs each).

    python3 benches/python_typed_ab.py --before DIR [--reps 5] FILE...

``--before DIR`` is a folder holding another build of the ``fastcsv``
package (an unpacked wheel): it is put first on ``PYTHONPATH`` for the
"before" runs. The "after" runs import the ``fastcsv`` of the running
Python. Peers: pandas's C engine, polars (``POLARS_MAX_THREADS=1``),
``pyarrow.csv`` without threads and DuckDB with one thread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_speed  # noqa: E402

TYPED = "fastcsv.read_arrow (typed) -> pyarrow"
PEERS = ["pandas.read_csv (C engine)", "polars.read_csv", "pyarrow.csv.read_csv", "duckdb read_csv -> arrow"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--before", required=True)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    engines = [("fastcsv before", TYPED, args.before), ("fastcsv after", TYPED, None)]
    engines += [(p, p, None) for p in PEERS]
    print("| file | MiB | engine | wall s | MB/s (wall) | CPU s | MB/s (CPU) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for path in args.files:
        size = os.path.getsize(path)
        runs: dict[str, list[python_speed.Run]] = {e[0]: [] for e in engines}
        for _ in range(args.reps):
            for name, engine, before in engines:
                saved = os.environ.get("PYTHONPATH")
                if before:
                    os.environ["PYTHONPATH"] = before
                try:
                    r = python_speed.run_one(engine, path, 1)
                finally:
                    if saved is None:
                        os.environ.pop("PYTHONPATH", None)
                    else:
                        os.environ["PYTHONPATH"] = saved
                if isinstance(r, str):
                    print(f"{name}: failed: {r}", file=sys.stderr)
                    continue
                runs[name].append(r)
        rows = {r.rows for rs in runs.values() for r in rs}
        if len(rows) > 1:
            print(f"warning: {path}: row counts differ: {sorted(rows)}", file=sys.stderr)
        for name, rs in runs.items():
            if not rs:
                continue
            wall = statistics.median(r.wall for r in rs)
            cpu = statistics.median(r.cpu for r in rs)
            print(
                f"| {os.path.basename(path)} | {size / 2**20:.0f} | {name} | {wall:.3f} | "
                f"{size / wall / 1e6:.0f} | {cpu:.3f} | {size / cpu / 1e6:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
