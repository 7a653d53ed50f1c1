#!/usr/bin/env python3
"""Checks that `fastcsv bench FILE --work count` reports the throughput that
`fastcsv count FILE` itself reaches: both are timed alternately, in the same
stretch of the machine's life.

    python3 benches/bench_vs_count.py FILE [--rounds 7] [--bin target/release/fastcsv] [-j N]

Each round runs `fastcsv count [-j N] FILE` (wall time of the whole process,
as a user sees it) and `fastcsv bench FILE --work count --sizes 128K --runs 1
--json [--threads N]` (the mapped source's time, which is what `count`
picks for a large file). It prints every round, then the medians and their
ratio: within 10% is the target (the bench times open, parse and close, not
the process start or the output).
"""

import argparse
import json
import os
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--bin", default="target/release/fastcsv")
    ap.add_argument("-j", type=int, default=None, help="threads (default: the CLI's)")
    a = ap.parse_args()
    size = os.path.getsize(a.file)
    count_cmd = [a.bin, "count", a.file] + (["-j", str(a.j)] if a.j else [])
    bench_cmd = [a.bin, "bench", a.file, "--work", "count", "--sizes", "128K", "--runs", "1", "--json"]
    bench_cmd += ["--threads", str(a.j)] if a.j else []
    print("count:", " ".join(count_cmd))
    print("bench:", " ".join(bench_cmd))
    counts, benches = [], []
    for r in range(a.rounds):
        t = time.perf_counter()
        out = subprocess.run(count_cmd, check=True, capture_output=True, text=True).stdout
        counts.append(time.perf_counter() - t)
        rep = json.loads(subprocess.run(bench_cmd, check=True, capture_output=True, text=True).stdout)
        mmap = next(x for x in rep["results"] if x["source"] == "mmap")
        assert int(out.split()[-1]) == mmap["rows"], (out, mmap["rows"])
        benches.append(mmap["median_s"])
        print(
            f"round {r + 1}: count {size / counts[-1] / 1e6:8.1f} MB/s   "
            f"bench --work count (mmap, {mmap['threads']} threads) {size / benches[-1] / 1e6:8.1f} MB/s   "
            f"load {rep['load_before']}"
        )
    c, b = statistics.median(counts), statistics.median(benches)
    print(f"median: count {size / c / 1e6:.1f} MB/s, bench {size / b / 1e6:.1f} MB/s, bench/count {c / b:.3f}")


if __name__ == "__main__":
    main()
