#!/usr/bin/env python3
"""Time the Python CSV readers on the same generated files.

Usage::

    python3 benches/python_peers.py [--reps N] [--only NAME,...] FILE...

FILEs are the generated benchmark inputs (``target/bench-data/SHAPE-SIZE.csv``,
see ``benches/README.md``). Every reader parses the whole file into Python
objects; the time is wall-clock, the median of ``--reps`` runs (default 3),
each reader run in turn, round robin, so that machine noise hits all of them
alike. Each run's row count (header excluded) is checked against the others:
a reader that disagrees is reported, not silently timed.

Readers: ``csv`` (stdlib, always), ``fastcsv`` (this project's module, when
importable), and ``pandas``, ``pyarrow``, ``polars`` and ``duckdb`` when
installed; missing ones are listed as skipped. With pyarrow or polars,
``fastcsv.read_arrow`` is timed into their tables, next to their own
readers with every column read as strings (what ``read_arrow`` gives).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import os
import statistics
import sys
import time
from typing import Callable

Reader = Callable[[str], int]


def stdlib_csv(path: str) -> int:
    with open(path, newline="", encoding="utf-8") as f:
        n = sum(1 for _ in csv.reader(f))
    return n - 1


def fastcsv_readers(mod) -> dict[str, Reader]:
    out: dict[str, Reader] = {}
    if hasattr(mod, "reader"):

        def rows(path: str) -> int:
            with open(path, "rb") as f:
                return sum(1 for _ in mod.reader(f)) - 1

        out["fastcsv.reader"] = rows
    if hasattr(mod, "read"):
        out["fastcsv.read"] = lambda path: len(mod.read(path)) - 1
    if hasattr(mod, "read_columns"):

        def columns(path: str) -> int:
            cols = mod.read_columns(path)
            return len(next(iter(cols.values()))) if cols else 0

        out["fastcsv.read_columns"] = columns
    return out


def optional_readers() -> tuple[dict[str, Reader], list[str]]:
    readers: dict[str, Reader] = {}
    skipped: list[str] = []

    def have(name: str):
        try:
            return importlib.import_module(name)
        except Exception as e:  # not installed, or broken
            skipped.append(f"{name} ({type(e).__name__})")
            return None

    fc = have("fastcsv")
    if fc is not None:
        found = fastcsv_readers(fc)
        if found:
            readers.update(found)
        else:
            skipped.append("fastcsv (no reader API)")
    pd = have("pandas")
    if pd is not None:
        # Strings only, like the csv module: no type inference cost.
        readers["pandas.read_csv(dtype=str)"] = lambda p: len(
            pd.read_csv(p, dtype=str, keep_default_na=False)
        )
        readers["pandas.read_csv(pyarrow)"] = lambda p: len(
            pd.read_csv(p, engine="pyarrow")
        )
    pa = have("pyarrow")
    if pa is not None:
        pacsv = importlib.import_module("pyarrow.csv")
        opts = pacsv.ParseOptions(newlines_in_values=True)
        readers["pyarrow.csv.read_csv"] = lambda p: pacsv.read_csv(
            p, parse_options=opts
        ).num_rows

        def pa_strings(p: str) -> int:
            # Every column as strings, as fastcsv.read_arrow gives them.
            names = pacsv.open_csv(p, parse_options=opts).schema.names
            conv = pacsv.ConvertOptions(column_types={n: pa.string() for n in names})
            return pacsv.read_csv(p, parse_options=opts, convert_options=conv).num_rows

        readers["pyarrow.csv.read_csv (strings)"] = pa_strings
        if fc is not None and hasattr(fc, "read_arrow"):
            readers["fastcsv.read_arrow -> pyarrow.table"] = lambda p: pa.table(
                fc.read_arrow(p)
            ).num_rows
            # Typed columns, as pyarrow.csv.read_csv infers them (but for
            # timestamps and dates, which stay strings).
            readers["fastcsv.read_arrow(types='infer') -> pyarrow.table"] = lambda p: pa.table(
                fc.read_arrow(p, types="infer")
            ).num_rows
    pl = have("polars")
    if pl is not None:
        readers["polars.read_csv"] = lambda p: pl.read_csv(p).height
        readers["polars.read_csv (strings)"] = lambda p: pl.read_csv(
            p, infer_schema=False
        ).height
        if fc is not None and hasattr(fc, "read_arrow"):
            readers["fastcsv.read_arrow -> polars"] = lambda p: pl.DataFrame(
                fc.read_arrow(p)
            ).height
            readers["fastcsv.read_arrow(types='infer') -> polars"] = lambda p: pl.DataFrame(
                fc.read_arrow(p, types="infer")
            ).height
    dd = have("duckdb")
    if dd is not None:

        def duck(p: str) -> int:
            con = dd.connect()
            try:
                rel = con.read_csv(p, header=True)
                return len(rel.fetchall())
            finally:
                con.close()

        readers["duckdb.read_csv (fetchall)"] = duck
    return readers, skipped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated reader names")
    args = ap.parse_args()

    readers: dict[str, Reader] = {"csv.reader (stdlib)": stdlib_csv}
    more, skipped = optional_readers()
    readers.update(more)
    if args.only:
        keep = [s.strip() for s in args.only.split(",")]
        readers = {k: v for k, v in readers.items() if any(s in k for s in keep)}

    print(f"Python {sys.version.split()[0]}; {args.reps} runs each, round robin; "
          "median wall-clock seconds.")
    if skipped:
        print("skipped: " + ", ".join(skipped))
    print()
    for path in args.files:
        size = os.path.getsize(path)
        gib = size / (1 << 30)
        times: dict[str, list[float]] = {k: [] for k in readers}
        counts: dict[str, set[int]] = {k: set() for k in readers}
        errors: dict[str, str] = {}
        for rep in range(args.reps):
            print(f"{os.path.basename(path)}: run {rep + 1}/{args.reps}", file=sys.stderr)
            for name, fn in readers.items():
                if name in errors:
                    continue
                t = time.perf_counter()
                try:
                    n = fn(path)
                except Exception as e:  # report, keep going
                    errors[name] = f"{type(e).__name__}: {str(e)[:120]}"
                    continue
                times[name].append(time.perf_counter() - t)
                counts[name].add(n)
        want = counts["csv.reader (stdlib)"]
        base = statistics.median(times["csv.reader (stdlib)"])
        print(f"### `{os.path.basename(path)}` ({gib:.2f} GiB, "
              f"{next(iter(want)) if want else '?'} data rows)\n")
        print("| reader | median s | MiB/s | vs csv | rows agree |")
        print("|---|---:|---:|---:|---|")
        for name in readers:
            if name in errors:
                print(f"| {name} | error | | | {errors[name]} |")
                continue
            med = statistics.median(times[name])
            agree = "yes" if counts[name] == want else f"no: {sorted(counts[name])}"
            print(f"| {name} | {med:.3f} | {size / (1 << 20) / med:.0f} | "
                  f"{base / med:.2f}x | {agree} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
