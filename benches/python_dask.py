#!/usr/bin/env python3
"""Reading one CSV file into Dask: ``fastcsv.dask.read_csv`` (exact parts)
against ``dask.dataframe.read_csv`` (cut at the next newline), timed and
checked against ``csv``'s rows.

Usage::

    python3 benches/python_dask.py [--reps N] [--blocksize MIB] [--check MIB,...] FILE...

Needs ``dask[dataframe]`` and ``pyarrow`` (e.g. in a virtualenv with
``--system-site-packages`` next to the installed fastcsv). Both readers
give string columns (``dtype=str, keep_default_na=False`` for Dask's), on
the threaded scheduler; the time is wall-clock, the median of ``--reps``
runs taken in turn. ``--check`` lists block sizes at which each reader's
rows are compared with ``csv.reader``'s (a failure is reported, not
timed).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time

import dask
import dask.dataframe as dd

import fastcsv
import fastcsv.dask


def readers(path: str, blocksize: int):
    return {
        "fastcsv.dask.read_csv": lambda: fastcsv.dask.read_csv(path, blocksize=blocksize),
        "dask.dataframe.read_csv": lambda: dd.read_csv(
            path, blocksize=blocksize, dtype=str, keep_default_na=False
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--blocksize", type=int, default=16, help="MiB")
    ap.add_argument("--check", default="16,4,1", help="MiB, comma-separated")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    dask.config.set(scheduler="threads")
    print(f"dask {dask.__version__}, fastcsv {fastcsv.VERSION}")
    for path in a.files:
        print(f"== {path}")
        with open(path, newline="", encoding="utf-8") as f:
            want = [r for r in csv.reader(f) if r][1:]
        times: dict[str, list[float]] = {}
        for _ in range(a.reps):
            for name, make in readers(path, a.blocksize << 20).items():
                t = time.perf_counter()
                try:
                    n = len(make().compute())
                except Exception as e:  # noqa: BLE001 - reported below
                    n = f"{type(e).__name__}"
                times.setdefault(name, []).append(time.perf_counter() - t)
                if n != len(want):
                    times[name].append(float("nan"))
        for name, ts in times.items():
            print(f"  {name:26s} {a.blocksize:3d} MiB blocks: median {statistics.median(ts):.3f} s")
        for mib in (int(x) for x in a.check.split(",")):
            for name, make in readers(path, mib << 20).items():
                try:
                    got = make().compute().astype(object).values.tolist()
                    verdict = "csv's rows" if got == want else f"WRONG ({len(got)} rows)"
                except Exception as e:  # noqa: BLE001 - that is the finding
                    verdict = f"error {type(e).__name__}: {str(e)[:80]}"
                print(f"  {name:26s} {mib:3d} MiB blocks: {verdict}")


if __name__ == "__main__":
    main()
