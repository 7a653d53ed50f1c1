"""The cost of types decided on the whole column over sampled ones:
``pyarrow.table(fastcsv.read_arrow(path, types="infer"))`` against the
same with ``infer_rows=65536``, CPU seconds (user + sys of this process,
every thread) and wall seconds, medians of ``--runs`` runs, the two modes
alternating. Results and the commands: docs/BENCHMARKS.md ("Round 2").

    python3 benches/python_types.py FILE [FILE ...] [--runs 5] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import pyarrow as pa

import fastcsv


def once(path: str, threads: int, infer_rows: int | None) -> tuple[float, float, int]:
    t0, c0 = time.perf_counter(), os.times()
    t = pa.table(fastcsv.read_arrow(path, types="infer", threads=threads, infer_rows=infer_rows))
    c1, t1 = os.times(), time.perf_counter()
    rows = t.num_rows
    del t
    return (c1.user - c0.user) + (c1.system - c0.system), t1 - t0, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    print(f"threads={args.threads} runs={args.runs} fastcsv at {fastcsv.__file__}")
    print("| file | MiB | rows | sampled CPU s | whole CPU s | CPU cost | sampled wall s | whole wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for path in args.files:
        got: dict[str, list[tuple[float, float]]] = {"sampled": [], "whole": []}
        rows = 0
        for _ in range(args.runs):
            for mode, n in (("sampled", 65536), ("whole", None)):
                cpu, wall, rows = once(path, args.threads, n)
                got[mode].append((cpu, wall))
        med = {m: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for m, v in got.items()}
        cost = med["whole"][0] / med["sampled"][0] - 1
        mib = os.path.getsize(path) / (1 << 20)
        print(
            f"| {os.path.basename(path)} | {mib:.0f} | {rows} | {med['sampled'][0]:.2f} | "
            f"{med['whole'][0]:.2f} | {cost:+.1%} | {med['sampled'][1]:.2f} | {med['whole'][1]:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
