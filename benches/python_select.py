#!/usr/bin/env python3
"""Time reading a few columns of a file, against the peers' own ways.

Usage::

    python3 benches/python_select.py [--reps N] [--columns I,J,...] FILE...

For each FILE (``target/bench-data/SHAPE-SIZE.csv``, see
``benches/README.md``) the columns picked by index (default: the second,
the middle one and the last) are read as strings and with the types each
reader infers, by ``fastcsv.read_arrow(columns=...)`` into pyarrow and
polars, ``pyarrow.csv.read_csv(include_columns=...)``,
``polars.read_csv(columns=...)``, ``pandas.read_csv(usecols=...)`` and
DuckDB's ``SELECT`` of the columns, and all columns by
``fastcsv.read_arrow`` for scale. Medians of ``--reps`` wall-clock runs
(default 5), the readers in turn, round robin. Every reader's table is
checked against ``fastcsv``'s (the same names and rows, and for strings
the same values): a reader that disagrees is reported, not silently
timed. Readers whose module is not installed are listed as skipped.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from typing import Any, Callable


def have(name: str, skipped: list[str]) -> Any:
    try:
        return importlib.import_module(name)
    except Exception as e:  # not installed, or broken
        skipped.append(f"{name} ({type(e).__name__})")
        return None


def readers(names: list[str], skipped: list[str]) -> dict[str, Callable[[str], Any]]:
    """Each returns a pyarrow table (or a polars frame) of the columns."""
    fc = importlib.import_module("fastcsv")
    pa = have("pyarrow", skipped)
    pl = have("polars", skipped)
    pd = have("pandas", skipped)
    dk = have("duckdb", skipped)
    out: dict[str, Callable[[str], Any]] = {}
    if pa is not None:
        pacsv = importlib.import_module("pyarrow.csv")
        parse = pacsv.ParseOptions(newlines_in_values=True)
        strings = {n: pa.string() for n in names}
        out["fastcsv.read_arrow(columns) -> pyarrow"] = lambda p: pa.table(
            fc.read_arrow(p, columns=names)
        )
        out["pyarrow.csv.read_csv(include_columns), strings"] = lambda p: pacsv.read_csv(
            p,
            parse_options=parse,
            convert_options=pacsv.ConvertOptions(include_columns=names, column_types=strings),
        )
        out["fastcsv.read_arrow(columns, types='infer') -> pyarrow"] = lambda p: pa.table(
            fc.read_arrow(p, columns=names, types="infer")
        )
        out["pyarrow.csv.read_csv(include_columns), inferred"] = lambda p: pacsv.read_csv(
            p, parse_options=parse, convert_options=pacsv.ConvertOptions(include_columns=names)
        )
        out["fastcsv.read_arrow, all columns -> pyarrow"] = lambda p: pa.table(fc.read_arrow(p))
    if pl is not None:
        out["fastcsv.read_arrow(columns, string_view) -> polars"] = lambda p: pl.DataFrame(
            fc.read_arrow(p, columns=names, string_view=True)
        )
        out["polars.read_csv(columns), strings"] = lambda p: pl.read_csv(
            p, columns=names, infer_schema=False
        )
        out["polars.read_csv(columns), inferred"] = lambda p: pl.read_csv(p, columns=names)
    if pd is not None:
        out["pandas.read_csv(usecols), strings"] = lambda p: pd.read_csv(
            p, usecols=names, dtype=str, keep_default_na=False
        )[names]
        if pa is not None:
            out["pandas.read_csv(usecols, engine='pyarrow'), inferred"] = lambda p: pd.read_csv(
                p, usecols=names, engine="pyarrow"
            )[names]
    if dk is not None:

        def duck(p: str) -> Any:
            con = dk.connect()
            try:
                cols = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
                got = con.sql(f"SELECT {cols} FROM read_csv('{p}', all_varchar=true)").arrow()
                # DuckDB 1.4+ gives a lazy reader: read it here, timed.
                return got.read_all() if hasattr(got, "read_all") else got
            finally:
                con.close()

        out["duckdb SELECT (all_varchar) -> arrow"] = duck
    return out


def shape(t: Any) -> tuple[list[str], int]:
    """Column names and rows of a pyarrow table, polars or pandas frame."""
    cols = list(t.column_names) if hasattr(t, "column_names") else [str(c) for c in t.columns]
    return cols, len(t)


def strings_of(t: Any) -> list[list[str]] | None:
    """The first 1000 values of each column as strings, if a text table."""
    if hasattr(t, "to_pydict"):  # pyarrow
        d = t.slice(0, 1000).to_pydict()
        cols = list(d.values())
    elif hasattr(t, "to_dict") and hasattr(t, "iloc"):  # pandas
        cols = [list(t[c].iloc[:1000]) for c in t.columns]
    else:  # polars
        cols = [t[c].head(1000).to_list() for c in t.columns]
    if all(isinstance(v, str) for c in cols for v in c):
        return cols
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--columns", default="", help="0-based indices (default: 1, middle, last)")
    args = ap.parse_args()
    fc = importlib.import_module("fastcsv")
    print(f"Python {sys.version.split()[0]}; {args.reps} runs each, round robin; "
          "median wall-clock seconds.")
    for path in args.files:
        every = fc.read_arrow(path, threads=1).column_names
        if args.columns:
            idx = [int(x) for x in args.columns.split(",")]
        else:
            idx = [1, len(every) // 2, len(every) - 1]
        names = [every[i] for i in idx]
        skipped: list[str] = []
        rs = readers(names, skipped)
        times: dict[str, list[float]] = {k: [] for k in rs}
        notes: dict[str, str] = {}
        want = None
        for rep in range(args.reps):
            print(f"{os.path.basename(path)}: run {rep + 1}/{args.reps}", file=sys.stderr)
            for name, fn in rs.items():
                if name in notes and notes[name].startswith("error"):
                    continue
                t = time.perf_counter()
                try:
                    got = fn(path)
                except Exception as e:  # report, keep going
                    notes[name] = f"error: {type(e).__name__}: {str(e)[:100]}"
                    continue
                times[name].append(time.perf_counter() - t)
                if rep == 0:
                    cols, rows = shape(got)
                    text = strings_of(got)
                    if want is None and name.startswith("fastcsv.read_arrow(columns)"):
                        want = (names, rows, text)
                    ok = "all columns" in name or (
                        want is not None
                        and cols == want[0]
                        and rows == want[1]
                        and (text is None or text == want[2])
                    )
                    notes[name] = "yes" if ok else f"no: {cols[:4]} {rows}"
                del got
        print(f"\n### `{os.path.basename(path)}`: columns {idx} of {len(every)} "
              f"({os.path.getsize(path) / (1 << 20):.0f} MiB)\n")
        if skipped:
            print("skipped: " + ", ".join(skipped) + "\n")
        print("| reader | median s | agrees |")
        print("|---|---:|---|")
        for name in rs:
            if not times[name]:
                print(f"| {name} | | {notes.get(name, '')} |")
                continue
            print(f"| {name} | {statistics.median(times[name]):.3f} | {notes.get(name, '')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
