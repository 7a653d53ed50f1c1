#!/usr/bin/env python3
"""The drop-in reader against ``csv``, for one or more builds of fastcsv
side by side: CPU time (user + sys of every thread, the read-ahead
thread's included) of ``for row in fastcsv.reader(path)`` (and, with ``--only text``, of a
text file, ``fastcsv.reader(f)``) against ``for row in csv.reader(f)``, and the peak memory of ``fastcsv.read(path)`` against
``list(csv.reader(f))``.

Usage::

    python3 benches/python_reader_ab.py [--reps 3] [--build NAME=DIR ...]
        [--only reader,text,read] FILE...

Each ``--build`` names a folder that holds a ``fastcsv`` package (an
installed copy with its extension module, e.g. a copy of the venv's
``site-packages/fastcsv``), put first on ``sys.path`` of the child; without
any, the ``fastcsv`` that ``python3`` imports is measured as ``installed``.

Each run is a fresh ``python3`` that imports its modules, then measures
only the read with ``resource.getrusage`` (user + sys of the whole
process) around it; the peak memory is ``ru_maxrss`` (imports included)
and, beside it, that peak less the resident set just before the read.
Runs go round robin, engine after engine, ``--reps`` times; the table
shows medians, the CPU ratio of ``csv`` to each fastcsv build, and the
peak ratio of each ``fastcsv.read`` to ``list(csv.reader(f))``. Row
counts are checked to agree within each file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import NamedTuple

READER_CSV = "f = open(PATH, newline='')\nROWS = 0\nfor row in csv.reader(f): ROWS += 1"
READER_FAST = "ROWS = 0\nfor row in fastcsv.reader(PATH): ROWS += 1"
READER_FAST_TEXT = "f = open(PATH, newline='')\nROWS = 0\nfor row in fastcsv.reader(f): ROWS += 1"
READ_CSV = "f = open(PATH, newline='')\nR = list(csv.reader(f)); ROWS = len(R)"
READ_FAST = "R = fastcsv.read(PATH); ROWS = len(R)"

CHILD = """
import json, resource, sys
sys.path.insert(0, {build!r}) if {build!r} else None
import csv, fastcsv
PATH = {path!r}
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * resource.getpagesize()
before = rss()
c0 = cpu()
{code}
used = cpu() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"rows": ROWS, "cpu": used, "peak": peak, "grew": peak - before}}))
"""


class Run(NamedTuple):
    rows: int
    cpu: float
    peak: int
    grew: int


def run_one(code: str, build: str, path: str) -> Run:
    src = CHILD.format(build=build, path=path, code=code)
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"child failed:\n{p.stderr}")
    d = json.loads(p.stdout.strip().splitlines()[-1])
    return Run(d["rows"], d["cpu"], d["peak"], d["grew"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--build", action="append", default=[], help="NAME=DIR")
    ap.add_argument("--only", default="reader,read", help="reader (paths), text (text files), read")
    args = ap.parse_args()
    builds = [tuple(b.split("=", 1)) for b in args.build] or [("installed", "")]
    only = set(args.only.split(","))
    lines = [
        "| file | MiB | engine | CPU s | csv/this | peak MiB | grew MiB | peak / csv's |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for path in args.files:
        size = os.path.getsize(path)
        cases: list[tuple[str, str, str]] = []  # (label, build dir, code)
        if "reader" in only:
            cases.append(("for row in csv.reader(f)", "", READER_CSV))
            cases += [(f"for row in fastcsv.reader(path) [{n}]", d, READER_FAST) for n, d in builds]
        if "text" in only:
            if "reader" not in only:
                cases.append(("for row in csv.reader(f)", "", READER_CSV))
            cases += [(f"for row in fastcsv.reader(f) [{n}]", d, READER_FAST_TEXT) for n, d in builds]
        if "read" in only:
            cases.append(("list(csv.reader(f))", "", READ_CSV))
            cases += [(f"fastcsv.read(path) [{n}]", d, READ_FAST) for n, d in builds]
        runs: dict[str, list[Run]] = {c[0]: [] for c in cases}
        for _ in range(args.reps):
            for label, build, code in cases:
                r = run_one(code, build, path)
                runs[label].append(r)
                print(f"  {os.path.basename(path)} {label}: {r}", file=sys.stderr)
        counts = {r.rows for rs in runs.values() for r in rs}
        if len(counts) > 1:
            raise SystemExit(f"{path}: row counts disagree: {sorted(counts)}")
        med = {k: (statistics.median(r.cpu for r in v), statistics.median(r.peak for r in v),
                   statistics.median(r.grew for r in v)) for k, v in runs.items()}
        name = os.path.basename(path)
        for label, _, _ in cases:
            cpu, peak, grew = med[label]
            ref = "list(csv.reader(f))" if label.startswith(("list", "fastcsv.read(")) else "for row in csv.reader(f)"
            ratio = med[ref][0] / cpu
            mem = f"{peak / med[ref][1]:.2f}" if ref.startswith("list") else ""
            lines.append(
                f"| {name} | {size / 2**20:.0f} | {label} | {cpu:.2f} | {ratio:.2f}x "
                f"| {peak / 2**20:.0f} | {grew / 2**20:.0f} | {mem} |"
            )
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
