#!/usr/bin/env python3
"""Typed ``fastcsv.read_arrow`` and the drop-in reader against their peers,
side by side in one run: wall time, CPU time (user + sys) and peak RSS,
each engine in a process of its own per run.

Usage::

    python3 benches/python_speed.py [--reps 3] [--threads 1,2]
        [--only NAME,...] [--write FILE] [--keep-cache] FILE...

Engines (those whose package is missing are listed as skipped):

- typed reads into a table: ``fastcsv.read_arrow(path, types="infer")``
  into ``pyarrow.table``; ``pandas.read_csv(engine="c")``;
  ``polars.read_csv`` (threads by ``POLARS_MAX_THREADS``);
  ``pyarrow.csv.read_csv``; DuckDB's ``read_csv``
  into an Arrow table. Each at every ``--threads`` count. pandas 3.1's C
  engine reads a large local file on ``mode.max_threads`` threads (by
  default one per CPU, at most 6): it is set to the count. (An older
  pandas reads on one thread only; it then fails at counts above 1.)
- the drop-in reader: ``for row in fastcsv.reader(f)`` (a file opened
  with ``newline=''``) and ``for row in fastcsv.reader(path)`` (by
  default, and with ``threads=1``: parsed on the calling thread, and
  ``threads=2``: a second thread parses ahead) against ``for row in
  csv.reader(f)``, and ``fastcsv.read(path)`` against
  ``list(csv.reader(f))`` (one thread: they are sequential).

After the table comes a summary of the ratios the issue asks for, per
file: the typed read's MB/s over the fastest peer's at each thread count
(each peer at that count), the
reader's CPU time against ``csv.reader``'s, and ``fastcsv.read``'s peak
RSS over ``list(csv.reader(f))``'s.

Each file is first dropped from the page cache and read back in
(``pagecache.py``: a mapped read's CPU depends on how the file is
cached; ``--keep-cache`` leaves it as it is). Each run is a fresh ``python3`` that imports the engine's package, then
measures only the read: wall time and ``resource.getrusage`` (user + sys
of every thread of the process) around it; peak RSS is the process's
``ru_maxrss`` (imports included). Runs go round robin, engine after
engine, ``--reps`` times; the table shows medians. Row counts are checked
to agree within each file. The table is markdown, on stdout or to
``--write FILE``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import NamedTuple

from pagecache import recache

# Each snippet reads PATH with THREADS threads and sets ROWS.
ENGINES: dict[str, tuple[str, str, bool]] = {
    # name: (module to import first, code, whether THREADS applies)
    "fastcsv.read_arrow (typed) -> pyarrow": (
        # pyarrow.table imports pandas on its first call: before timing.
        "fastcsv, pyarrow, pandas",
        "t = pyarrow.table(fastcsv.read_arrow(PATH, types='infer', threads=THREADS)); ROWS = t.num_rows",
        True,
    ),
    "pandas.read_csv (C engine)": (
        "pandas",
        # pandas 3.1 reads a large local file on `mode.max_threads` threads
        # (by default as many as the CPUs, at most 6); older pandas on one.
        "try:\n    pandas.set_option('mode.max_threads', THREADS)\n"
        "except (KeyError, pandas.errors.OptionError):\n    assert THREADS == 1, 'this pandas reads on one thread'\n"
        "ROWS = len(pandas.read_csv(PATH, engine='c'))",
        True,
    ),
    "polars.read_csv": (
        "polars",
        "ROWS = polars.read_csv(PATH, infer_schema_length=65536).height",
        True,
    ),
    "pyarrow.csv.read_csv": (
        "pyarrow, pyarrow.csv",
        "pyarrow.set_cpu_count(THREADS); pyarrow.set_io_thread_count(THREADS)\n"
        "ROWS = pyarrow.csv.read_csv(PATH, read_options=pyarrow.csv.ReadOptions(use_threads=THREADS > 1)).num_rows",
        True,
    ),
    "duckdb read_csv -> arrow": (
        "duckdb",
        "con = duckdb.connect(); con.execute(f'SET threads={THREADS}')\n"
        "ROWS = con.execute('select * from read_csv(?)', [PATH]).to_arrow_table().num_rows",
        True,
    ),
    "for row in fastcsv.reader": (
        "fastcsv",
        "f = open(PATH, newline='')\nROWS = -1\nfor row in fastcsv.reader(f): ROWS += 1",
        False,
    ),
    # The issue's own wording: a path, which fastcsv maps (csv cannot
    # take one).
    "for row in fastcsv.reader(path)": (
        "fastcsv",
        "ROWS = -1\nfor row in fastcsv.reader(PATH): ROWS += 1",
        False,
    ),
    # The same, on the calling thread alone, and with a second thread
    # parsing ahead from the second batch on (the default decides
    # between the two by timing its first batches).
    "for row in fastcsv.reader(path, threads=1)": (
        "fastcsv",
        "ROWS = -1\nfor row in fastcsv.reader(PATH, threads=1): ROWS += 1",
        False,
    ),
    "for row in fastcsv.reader(path, threads=2)": (
        "fastcsv",
        "ROWS = -1\nfor row in fastcsv.reader(PATH, threads=2): ROWS += 1",
        False,
    ),
    "for row in csv.reader": (
        "csv",
        "f = open(PATH, newline='')\nROWS = -1\nfor row in csv.reader(f): ROWS += 1",
        False,
    ),
    "fastcsv.read(path)": (
        "fastcsv",
        "ROWS = len(fastcsv.read(PATH)) - 1",
        False,
    ),
    "list(csv.reader(f))": (
        "csv",
        "f = open(PATH, newline='')\nROWS = len(list(csv.reader(f))) - 1",
        False,
    ),
}

CHILD = """
import gc, json, resource, sys, time
import {mods}
PATH = {path!r}
THREADS = {threads}
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, t0 = cpu(), time.perf_counter()
{code}
wall, used = time.perf_counter() - t0, cpu() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"rows": ROWS, "wall": wall, "cpu": used, "peak": peak}}))
"""


class Run(NamedTuple):
    rows: int
    wall: float
    cpu: float
    peak: int


def run_one(engine: str, path: str, threads: int) -> Run | str:
    mods, code, _ = ENGINES[engine]
    src = CHILD.format(mods=mods, path=path, threads=threads, code=code)
    env = dict(os.environ)
    # Thread pools that read their size from the environment at import.
    for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "RAYON_NUM_THREADS"):
        env[var] = str(threads)
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    d = json.loads(p.stdout.strip().splitlines()[-1])
    return Run(d["rows"], d["wall"], d["cpu"], d["peak"])


def available(engine: str) -> bool:
    mods = ENGINES[engine][0]
    p = subprocess.run([sys.executable, "-c", f"import {mods}"], capture_output=True)
    return p.returncode == 0


TYPED = "fastcsv.read_arrow (typed) -> pyarrow"
PEERS = ["pandas.read_csv (C engine)", "polars.read_csv", "pyarrow.csv.read_csv", "duckdb read_csv -> arrow"]


def summary(m: dict[tuple[str, str, int], Run], threads: list[int]) -> str:
    """The ratios of the issue, from the medians ``m`` of one run."""
    files = sorted({k[0] for k in m}, key=[k[0] for k in m].index)
    head = ["file"]
    head += [f"typed {t}t / fastest peer" for t in threads]
    head += ["reader(f) CPU vs csv", "reader(path) CPU vs csv"]
    head += ["reader(path, threads=1)", "reader(path, threads=2)", "read peak / list(csv.reader)"]
    out = ["", "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for f in files:
        row = [f]
        for t in threads:
            ours = m.get((f, TYPED, t))
            peers: list[tuple[str, Run]] = []
            for p in PEERS:
                r = m.get((f, p, t))
                if r:
                    peers.append((p, r))
            if ours and peers:
                p, r = min(peers, key=lambda pr: pr[1].wall)
                row.append(f"{r.wall / ours.wall:.2f}x ({p.split('.')[0].split()[0]})")
            else:
                row.append("")
        csv_ = m.get((f, "for row in csv.reader", threads[0]))
        for e in ("for row in fastcsv.reader", "for row in fastcsv.reader(path)",
                  "for row in fastcsv.reader(path, threads=1)", "for row in fastcsv.reader(path, threads=2)"):
            r = m.get((f, e, threads[0]))
            row.append(f"{csv_.cpu / r.cpu:.2f}x" if r and csv_ else "")
        rd, lst = m.get((f, "fastcsv.read(path)", threads[0])), m.get((f, "list(csv.reader(f))", threads[0]))
        row.append(f"{rd.peak / lst.peak:.2f}" if rd and lst else "")
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="", help="comma-separated engine name prefixes")
    ap.add_argument("--write", default="", help="write the markdown table here")
    ap.add_argument("--keep-cache", action="store_true",
                    help="leave each file's page cache as it is (see pagecache.py)")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    engines = [e for e in ENGINES if not args.only or any(e.startswith(o) for o in args.only.split(","))]
    skipped = [e for e in engines if not available(e)]
    engines = [e for e in engines if e not in skipped]

    medians: dict[tuple[str, str, int], Run] = {}
    lines = [
        "| file | MiB | engine | threads | wall s | MB/s | CPU s (user+sys) | peak RSS MiB |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for path in args.files:
        size = os.path.getsize(path)
        if not args.keep_cache:
            recache(path)
        cases = [(e, t) for e in engines for t in (threads if ENGINES[e][2] else threads[:1])]
        runs: dict[tuple[str, int], list[Run]] = {c: [] for c in cases}
        errors: dict[tuple[str, int], str] = {}
        for _ in range(args.reps):
            for c in cases:
                if c in errors:
                    continue
                r = run_one(c[0], path, c[1])
                if isinstance(r, str):
                    errors[c] = r
                else:
                    runs[c].append(r)
                print(f"  {os.path.basename(path)} {c[0]} t={c[1]}: {r}", file=sys.stderr)
        counts = {r.rows for rs in runs.values() for r in rs}
        if len(counts) > 1:
            print(f"warning: {path}: engines disagree on the row count: {sorted(counts)}", file=sys.stderr)
        name = os.path.basename(path)
        for c in cases:
            if c in errors:
                lines.append(f"| {name} | {size / 2**20:.0f} | {c[0]} | {c[1]} | failed: {errors[c][:60]} | | | |")
                continue
            rs = runs[c]
            wall = statistics.median(r.wall for r in rs)
            cpu = statistics.median(r.cpu for r in rs)
            peak = statistics.median(r.peak for r in rs)
            medians[(name, c[0], c[1])] = Run(rs[0].rows, wall, cpu, int(peak))
            lines.append(
                f"| {name} | {size / 2**20:.0f} | {c[0]} | {c[1]} | {wall:.2f} | {size / wall / 1e6:.0f} "
                f"| {cpu:.2f} | {peak / 2**20:.0f} |"
            )
    table = "\n".join(lines) + "\n" + summary(medians, threads)
    if skipped:
        table += "\nSkipped (not installed): " + ", ".join(skipped) + "\n"
    if args.write:
        with open(args.write, "w") as f:
            f.write(table)
    else:
        sys.stdout.write(table)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
