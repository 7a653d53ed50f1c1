#!/usr/bin/env python3
"""``fastcsv.read_arrow(path, threads=1)`` against ``threads=2`` into
``pyarrow.table``.

Each setting runs in its own Python process, ``READS`` reads one after
another (a program reading one file, or a session reading many), and the
processes of the two settings alternate for ``ROUNDS`` rounds. Reported per
setting: the median wall time of a process's first read, the median of its
later reads, and the process's user and system CPU time and minor page
faults per read (medians over rounds).

Usage::

    python3 benches/python_arrow_threads.py FILE [ROUNDS [READS]]

Needs pyarrow. (Two settings in one process distort each other: memory one
leaves in glibc's heaps is reused by the next only if the same threads
allocate it.)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import pyarrow as pa
import fastcsv
path, threads, reads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
times = []
r0 = resource.getrusage(resource.RUSAGE_SELF)
for _ in range(reads):
    s = time.perf_counter()
    table = pa.table(fastcsv.read_arrow(path, threads=threads))
    del table
    times.append(time.perf_counter() - s)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "times": times,
    "user": (r1.ru_utime - r0.ru_utime) / reads,
    "sys": (r1.ru_stime - r0.ru_stime) / reads,
    "minflt": (r1.ru_minflt - r0.ru_minflt) / reads,
}))
"""


def main() -> None:
    path = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    reads = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    runs: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(rounds):
        for t in (1, 2):
            out = subprocess.run(
                [sys.executable, "-c", CHILD, path, str(t), str(reads)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            runs[t].append(json.loads(out))
    print(f"{path}: {rounds} rounds of one process per setting, {reads} reads each")
    print("| threads | first read s | later reads s | user s/read | sys s/read | minor faults/read |")
    print("|---:|---:|---:|---:|---:|---:|")
    for t in (1, 2):
        r = runs[t]
        first = statistics.median(x["times"][0] for x in r)
        later = statistics.median(v for x in r for v in x["times"][1:]) if reads > 1 else float("nan")
        user = statistics.median(x["user"] for x in r)
        sys_ = statistics.median(x["sys"] for x in r)
        flt = statistics.median(x["minflt"] for x in r)
        print(f"| {t} | {first:.3f} | {later:.3f} | {user:.3f} | {sys_:.3f} | {flt:.0f} |")


if __name__ == "__main__":
    main()
