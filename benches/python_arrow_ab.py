#!/usr/bin/env python3
"""Typed ``fastcsv.read_arrow`` into a pyarrow table, one build against
another, at each thread count: wall seconds, user and system seconds and
minor page faults of the read call, medians of ``--reps`` fresh
processes per build, builds taken in turn.

    python3 benches/python_arrow_ab.py --build before=DIR --build after=DIR \\
        [--threads 1,2] [--reps 5] FILE...

Each ``DIR`` holds a build of the ``fastcsv`` package (an unpacked wheel:
``python3 -m zipfile -e fastcsv-*.whl DIR``), put first on
``PYTHONPATH`` for its runs. Each run imports ``pyarrow``, ``pandas``
(which ``pyarrow.table`` imports on its first call) and ``fastcsv`` before
timing ``pyarrow.table(fastcsv.read_arrow(FILE, types="infer",
threads=T))``; CPU times and faults are the whole process's
(``getrusage``), every thread included. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

CODE = r"""
import sys, time, resource, pyarrow, pandas, fastcsv
path, threads = sys.argv[1], int(sys.argv[2])
r0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
t = pyarrow.table(fastcsv.read_arrow(path, types="infer", threads=threads))
t1 = time.perf_counter()
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(t1 - t0, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime,
      r1.ru_minflt - r0.ru_minflt, t.num_rows, fastcsv.__file__)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--build", action="append", required=True, help="NAME=DIR")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    runs: dict[tuple[str, str, str], list[list[float]]] = {}
    for path in args.files:
        for threads in args.threads.split(","):
            for _ in range(args.reps):
                for name, folder in builds:
                    env = dict(os.environ, PYTHONPATH=os.path.abspath(folder))
                    out = subprocess.run(
                        [sys.executable, "-c", CODE, path, threads],
                        env=env, capture_output=True, text=True, check=True,
                    ).stdout.split()
                    if not out[5].startswith(os.path.abspath(folder)):
                        sys.exit(f"{name} imported fastcsv from {out[5]}, not {folder}")
                    runs.setdefault((path, threads, name), []).append([float(x) for x in out[:5]])
    print("| file | threads | build | wall s | user s | sys s | CPU s | minor faults | rows |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for (path, threads, name), rs in runs.items():
        med = lambda i: statistics.median(r[i] for r in rs)  # noqa: E731
        cpu = statistics.median(r[1] + r[2] for r in rs)
        print(
            f"| {os.path.basename(path)} | {threads} | {name} | {med(0):.3f} | {med(1):.3f} "
            f"| {med(2):.3f} | {cpu:.3f} | {med(3):.0f} | {int(rs[0][4])} |"
        )


if __name__ == "__main__":
    main()
