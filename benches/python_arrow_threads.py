#!/usr/bin/env python3
"""``fastcsv.read_arrow(path, threads=1)`` against ``threads=2`` into
``pyarrow.table``: wall time, user and system CPU time and minor page
faults of the process, medians of ``REPS`` runs taken in turn.

Usage::

    python3 benches/python_arrow_threads.py FILE REPS

Needs pyarrow. Try it also with ``MALLOC_ARENA_MAX=1`` in the environment
(glibc's per-thread heaps are what the two-thread runs pay for).
"""

from __future__ import annotations

import resource
import sys
import time

import pyarrow as pa

import fastcsv


def main() -> None:
    path, reps = sys.argv[1], int(sys.argv[2])
    res: dict[int, list[tuple[float, float, float, int]]] = {1: [], 2: []}
    for _ in range(reps):
        for t in (1, 2):
            r0 = resource.getrusage(resource.RUSAGE_SELF)
            s = time.perf_counter()
            table = pa.table(fastcsv.read_arrow(path, threads=t))
            del table
            e = time.perf_counter()
            r1 = resource.getrusage(resource.RUSAGE_SELF)
            res[t].append(
                (
                    e - s,
                    r1.ru_utime - r0.ru_utime,
                    r1.ru_stime - r0.ru_stime,
                    r1.ru_minflt - r0.ru_minflt,
                )
            )
    for t in (1, 2):
        v = sorted(res[t])
        m = v[len(v) // 2]
        print(f"{path}: threads={t} wall {m[0]:.3f} s, user {m[1]:.3f} s, sys {m[2]:.3f} s, minflt {m[3]}")


if __name__ == "__main__":
    main()
