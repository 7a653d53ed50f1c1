"""The drop-in reader over text files in UTF-8, ``utf-8-sig`` (with a
BOM), Latin-1, cp1252 and cp1251, against ``csv.reader``, side by side in
one run.

    python3 benches/text_encodings.py target/bench-data/text-256M.csv --mib 32 --reps 5

The first ``--mib`` MiB of the (UTF-8) bench file, cut at a line end, are
written in each encoding to a temporary folder (characters an encoding
lacks become ``?``); each run is ``for row in mod.reader(open(path,
encoding=E, newline=""))`` in a fresh process, timed inside it (wall,
and user + system CPU time), the engines alternating within each round.
Prints the median of each and the CPU ratio to ``csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "cp1252", "cp1251"]

CHILD = """
import json, resource, sys, time
import {mod}
path, enc = sys.argv[1], sys.argv[2]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, t0 = cpu(), time.perf_counter()
rows = 0
with open(path, encoding=enc, newline="") as f:
    for row in {mod}.reader(f):
        rows += 1
print(json.dumps({{"rows": rows, "wall": time.perf_counter() - t0, "cpu": cpu() - c0}}))
"""


def run(mod: str, path: str, enc: str) -> dict[str, float]:
    p = subprocess.run([sys.executable, "-c", CHILD.format(mod=mod), path, enc],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    with open(args.file, encoding="utf-8", newline="") as f:
        text = f.read(args.mib << 20)
    text = text[: text.rindex("\n") + 1]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for enc in ENCODINGS:
            paths[enc] = os.path.join(tmp, f"{enc}.csv")
            with open(paths[enc], "w", encoding=enc, errors="replace", newline="") as out:
                out.write(text)
        got: dict[tuple[str, str], list[dict[str, float]]] = {}
        for _ in range(args.reps):
            for enc in ENCODINGS:
                for mod in ("csv", "fastcsv"):
                    got.setdefault((mod, enc), []).append(run(mod, paths[enc], enc))
    print(f"| {args.mib} MiB as | csv.reader CPU s | fastcsv CPU s | fastcsv wall s | CPU vs csv |")
    print("|---|---:|---:|---:|---:|")
    for enc in ENCODINGS:
        rows = {r["rows"] for mod in ("csv", "fastcsv") for r in got[(mod, enc)]}
        assert len(rows) == 1, f"{enc}: row counts differ: {rows}"
        c = statistics.median(r["cpu"] for r in got[("csv", enc)])
        fc = statistics.median(r["cpu"] for r in got[("fastcsv", enc)])
        fw = statistics.median(r["wall"] for r in got[("fastcsv", enc)])
        print(f"| {enc} | {c:.3f} | {fc:.3f} | {fw:.3f} | {c / fc:.2f}x |")


if __name__ == "__main__":
    main()
