"""Compare fastcsv's Python API with the standard library's csv module.

Not a test: it prints medians and ratios. Inputs are generated (seeded) into
``bench-data/`` (git-ignored) unless they already exist:

* ``numeric.csv``: 10 columns of integers and decimals;
* ``text.csv``: 6 columns, mostly quoted text with commas, doubled quotes,
  newlines inside fields and some non-ASCII.

Usage (after ``pip install .``)::

    python benches/python_bench.py [--mib 100] [--repeat 3] [--data bench-data] [--only LABEL]

Run it alone: concurrent builds or tests distort the numbers.
"""

from __future__ import annotations

import argparse
import csv
import gc
import os
import random
import statistics
import sys
import time

import fastcsv

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "café", "naïve", "Zürich", "東京", "smörgåsbord"]


def gen_numeric(path: str, size: int, seed: int = 1) -> None:
    rnd = random.Random(seed)
    with open(path, "w", newline="") as f:
        f.write(",".join(f"c{i}" for i in range(10)) + "\n")
        written = 0
        while written < size:
            lines = []
            for _ in range(1000):
                row = [str(rnd.randrange(1_000_000)) if i % 2 else f"{rnd.uniform(-1e4, 1e4):.3f}"
                       for i in range(10)]
                lines.append(",".join(row) + "\n")
            chunk = "".join(lines)
            f.write(chunk)
            written += len(chunk)


def gen_text(path: str, size: int, seed: int = 2) -> None:
    rnd = random.Random(seed)

    def field() -> str:
        words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(1, 12)))
        r = rnd.random()
        if r < 0.15:
            words += ', "said" they'
        elif r < 0.22:
            words += "\nsecond line"
        return words

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        w.writerow(["id", "name", "comment", "city", "note", "tag"])
        written = 0
        i = 0
        while written < size:
            rows = []
            for _ in range(1000):
                rows.append([str(i), field(), field(), rnd.choice(WORDS), field(), rnd.choice(WORDS)])
                i += 1
            w.writerows(rows)
            written = f.tell()


def timed(fn) -> tuple[float, float, int]:
    """Wall-clock and CPU seconds (the CPU time of this process, all its
    threads, is less disturbed by other load on a shared machine), and the
    row count."""
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    n = fn()
    return time.perf_counter() - w0, time.process_time() - c0, n


def iterate(rdr) -> int:
    n = 0
    for _ in rdr:
        n += 1
    return n


def cases(path: str):
    def csv_iter():
        with open(path, newline="", encoding="utf-8") as f:
            return iterate(csv.reader(f))

    def csv_list():
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        n = len(rows)
        del rows
        return n

    def fast_iter_path():
        return iterate(fastcsv.reader(path))

    def fast_read():
        rows = fastcsv.read(path)
        n = len(rows)
        del rows
        return n

    def fast_iter_text():
        with open(path, newline="", encoding="utf-8") as f:
            return iterate(fastcsv.reader(f))

    return [
        ("for row in reader(path)", csv_iter, fast_iter_path, 3.0),
        ("read(path) vs list(csv.reader)", csv_list, fast_read, 4.0),
        ("reader(open(path, newline=''))", csv_iter, fast_iter_text, 2.5),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=100, help="size of each generated file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", default="bench-data")
    ap.add_argument("--only", default="", help="run the cases whose label contains this")
    args = ap.parse_args()
    os.makedirs(args.data, exist_ok=True)
    size = args.mib << 20
    files = []
    for name, gen in (("numeric", gen_numeric), ("text", gen_text)):
        path = os.path.join(args.data, f"{name}-{args.mib}MiB.csv")
        if not os.path.exists(path):
            print(f"generating {path} ...", file=sys.stderr)
            gen(path, size)
        files.append((name, path))

    print(f"python {sys.version.split()[0]}, fastcsv {fastcsv.VERSION}, "
          f"repeat {args.repeat}, medians in seconds, load {os.getloadavg()[0]:.1f}")
    for name, path in files:
        mib = os.path.getsize(path) / (1 << 20)
        print(f"\n{name}: {path} ({mib:.1f} MiB)")
        for label, base, fast, target in cases(path):
            if args.only not in label:
                continue
            wb, cb, wf, cf = [], [], [], []
            nb = nf = 0
            for _ in range(args.repeat):
                w, c, nb = timed(base)
                wb.append(w)
                cb.append(c)
                w, c, nf = timed(fast)
                wf.append(w)
                cf.append(c)
            if nb != nf:
                raise SystemExit(f"row counts differ: csv {nb}, fastcsv {nf}")
            med = statistics.median
            wall = med(wb) / med(wf)
            cpu = med(cb) / med(cf)
            # The target is judged on wall time, what a user waits for;
            # CPU time is shown too because bulk reads of large inputs scan
            # on a second thread (the sum of both threads' time).
            flag = "ok" if wall >= target else "below target"
            print(f"  {label:32} wall csv {med(wb):6.2f} fastcsv {med(wf):6.2f} = {wall:4.2f}x | "
                  f"cpu csv {med(cb):6.2f} fastcsv {med(cf):6.2f} = {cpu:4.2f}x "
                  f"(target {target}x: {flag}; {nf} rows, {mib / med(wf):5.1f} MiB/s wall)")


if __name__ == "__main__":
    main()
