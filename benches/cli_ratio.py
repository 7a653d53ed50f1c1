#!/usr/bin/env python3
"""`fastcsv select` and `cat` against `fastcsv count` on the same file.

Runs the commands round robin (every round runs each command once, in
turn), so that the phases of a shared, noisy machine hit all of them alike,
and prints for each command the median wall time and its ratio to `count`
with the same threads: the median of the per-round ratios (with their
range) and the ratio of the medians. With `--xsv PATH`, `xsv count` and
`xsv select` join the rounds.

    cargo build --release --features cli
    cargo run --release --example gen_data -- numeric 1G target/bench-data/numeric-1G.csv
    cargo run --release --example gen_data -- text 1G target/bench-data/text-1G.csv
    python3 benches/cli_ratio.py --rounds 11 [--xsv /path/to/xsv]

Output goes to /dev/null; the files should be in the page cache (one
warm-up round runs first and is not counted).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

COLUMNS = {"numeric": "1,5,9", "text": "1,4,8", "wide": "1,150,300"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--bin", default="target/release/fastcsv")
    ap.add_argument("--data", default="target/bench-data")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--shapes", default="numeric,text")
    ap.add_argument("--xsv", help="an xsv binary to run beside")
    a = ap.parse_args()

    # (label, argv, index of the count it is compared with or None)
    cmds = []
    for shape in a.shapes.split(","):
        path = os.path.join(a.data, f"{shape}-{a.size}.csv")
        if not os.path.exists(path):
            sys.exit(f"{path} is missing: cargo run --release --example gen_data -- "
                     f"{shape} {a.size} {path}")
        cols = COLUMNS[shape]
        for jobs in (["-j1"], []):
            base = len(cmds)
            cmds.append(([a.bin, "count", *jobs, path], None))
            cmds.append(([a.bin, "select", *jobs, cols, path], base))
            cmds.append(([a.bin, "cat", *jobs, path], base))
        if a.xsv:
            cmds.append(([a.xsv, "count", path], None))
            cmds.append(([a.xsv, "select", cols, path], None))

    def run(argv):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start

    for argv, _ in cmds:
        run(argv)
    times = [[] for _ in cmds]
    for _ in range(a.rounds):
        for i, (argv, _) in enumerate(cmds):
            times[i].append(run(argv))

    print(f"| command | median | vs count, same threads: median of rounds (range) | ratio of medians |")
    print("|---|---:|---:|---:|")
    for i, (argv, base) in enumerate(cmds):
        med = statistics.median(times[i])
        label = " ".join([os.path.basename(argv[0])] + argv[1:])
        if base is None:
            print(f"| `{label}` | {med:.3f} s | | |")
            continue
        ratios = [x / y for x, y in zip(times[i], times[base])]
        print(f"| `{label}` | {med:.3f} s | {statistics.median(ratios):.2f}x "
              f"({min(ratios):.2f}-{max(ratios):.2f}) | "
              f"{med / statistics.median(times[base]):.2f}x |")


if __name__ == "__main__":
    main()
