"""The floor under any Python CSV reader that returns ``list[str]`` rows.

Not a test: it prints CPU times (best of N). It compares, on one file:

* splitting the file's lines, already in memory, with ``str.split(',')``:
  no parsing and no I/O, only the same lists and ``str`` objects created by
  C code and freed again (exact for files without quotes, such as the
  generated numeric file);
* ``for row in csv.reader(open(path, newline=''))``;
* ``for row in fastcsv.reader(path)``.

``csv time / split time`` is the most any reader could gain over ``csv``
while handing out the same objects one row at a time.

Usage (after ``pip install .``)::

    python benches/python_floor.py bench-data/numeric-100MiB.csv [--repeat 3]
"""

from __future__ import annotations

import argparse
import csv
import gc
import time
from typing import Callable

import fastcsv


def best(fn: Callable[[], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = args.path
    with open(path, newline="") as f:
        lines = f.read().splitlines()

    def split_only() -> None:
        for line in lines:
            line.split(",")

    def csv_reader() -> None:
        with open(path, newline="") as f:
            for _ in csv.reader(f):
                pass

    def fastcsv_reader() -> None:
        for _ in fastcsv.reader(path):
            pass

    a = best(split_only, args.repeat)
    b = best(csv_reader, args.repeat)
    c = best(fastcsv_reader, args.repeat)
    print(f"str.split of in-memory lines {a:.3f} s | csv.reader {b:.3f} s | "
          f"fastcsv.reader(path) {c:.3f} s")
    print(f"ceiling for any reader vs csv: {b / a:.2f}x; fastcsv vs csv: {b / c:.2f}x; "
          f"fastcsv vs the floor: {c / a:.2f}x")


if __name__ == "__main__":
    main()
