#!/usr/bin/env python3
"""Every `fastcsv` verb against `xsv` 0.13 on the numeric and text files.

Each command runs as its own process, round robin (every round runs each
command once, in turn), so that the phases of a shared machine hit both
tools alike. For each command it reports the median wall time, the median
CPU time (user + system, from the child's rusage) and the peak resident
memory of fastcsv and of xsv, and the CPU ratio xsv / fastcsv. fastcsv
runs with `-j THREADS` (default 1: one thread, as the issue's target
asks) where the verb takes `-j`. Output goes to /dev/null, or into a
fresh directory for `split` and `partition` (on /dev/shm where it
exists).

With `--check`, each command is first run once more per tool with its
output kept, and the outputs are compared byte for byte (SHA-256 of the
output, or of all files of an output directory); `frequency` is compared
with its lines sorted, since xsv leaves ties in no set order; `stats`
without the sum, mean and standard deviation (whose last digits differ
for floats, see docs/cli.md), and `stats --everything` likewise, with
its median, mode and cardinality and without fastcsv's `q1` and `q3`; `sample` is
not compared (a random draw). A difference is printed, and the script
exits 1 at the end.

    cargo build --release --features cli
    cargo run --release --example gen_data -- numeric 1G target/bench-data/numeric-1G.csv
    cargo run --release --example gen_data -- text 1G target/bench-data/text-1G.csv
    cargo install xsv --version 0.13.0 --root /tmp/xsv
    python3 benches/verbs_vs_xsv.py --xsv /tmp/xsv/bin/xsv --size 1G --check

Each file is first dropped from the page cache and read back in
(`pagecache.py`: what a mapped pass costs depends on how the file is
cached); `--keep-cache` leaves it as it is.
`--rounds 0` with `--check` compares the outputs and times nothing.
`--only VERB,...` keeps some commands (matched on the first word of the
label), `--xsv-rounds N` runs xsv fewer times than fastcsv (a slow xsv
verb on a large file takes minutes), and `--markdown FILE` appends the
table to FILE.
"""
import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from pagecache import recache

# Columns the commands use, per shape (gen_data's headers).
NUMERIC = {"key": "int4", "sel": "int0,float5,ts7", "num": "float2", "text": "ts3"}
TEXT = {"key": "city", "sel": "id,city,amount", "num": "amount", "text": "name"}


def commands(shape, path, tmp):
    """(label, fastcsv argv, xsv argv or None, compare mode, output dir or None)."""
    c = NUMERIC if shape == "numeric" else TEXT
    out = os.path.join(tmp, "out")
    cmds = [
        ("count", ["count", path], ["count", path], "bytes"),
        ("select " + c["sel"], ["select", c["sel"], path], ["select", c["sel"], path], "bytes"),
        ("slice -s 100000 -l 100000", ["slice", "-s", "100000", "-l", "100000", path],
         ["slice", "-s", "100000", "-l", "100000", path], "bytes"),
        ("search -s %s 7" % c["text"], ["search", "-s", c["text"], "7", path],
         ["search", "-s", c["text"], "7", path], "bytes"),
        ("frequency -s %s -l 0" % c["key"], ["frequency", "-s", c["key"], "-l", "0", path],
         ["frequency", "-s", c["key"], "-l", "0", path], "sorted"),
        ("stats", ["stats", path], ["stats", path], "stats"),
        ("stats --everything", ["stats", "--everything", path],
         ["stats", "--everything", path], "everything"),
        ("sort -s " + c["text"], ["sort", "-s", c["text"], path],
         ["sort", "-s", c["text"], path], "bytes"),
        ("sort -N -s " + c["num"], ["sort", "-N", "-s", c["num"], path],
         ["sort", "-N", "-s", c["num"], path], "bytes"),
        ("sample 1000", ["sample", "1000", path], ["sample", "1000", path], "none"),
        ("split -s 100000", ["split", "-s", "100000", out, path],
         ["split", "-s", "100000", out, path], "dir"),
        ("table", ["table", path], ["table", path], "bytes"),
        ("fmt -t ';'", ["fmt", "-t", ";", path], ["fmt", "-t", ";", path], "bytes"),
        ("flatten", ["flatten", path], ["flatten", path], "bytes"),
        ("fixlengths", ["fixlengths", path], ["fixlengths", path], "bytes"),
        ("input", ["input", path], ["input", path], "bytes"),
        ("cat rows F F", ["cat", "rows", path, path], ["cat", "rows", path, path], "bytes"),
        ("cat columns F F", ["cat", "columns", path, path],
         ["cat", "columns", path, path], "bytes"),
        ("dedup -s " + c["key"], ["dedup", "-s", c["key"], path], None, "none"),
        ("cat --to jsonl", ["cat", "--to", "jsonl", path], None, "none"),
    ]
    if shape == "text":
        keys = os.path.join(tmp, "keys.csv")
        cmds += [
            ("partition city", ["partition", "city", out, path],
             ["partition", "city", out, path], "dir"),
            ("join city F city KEYS", ["join", "city", path, "city", keys],
             ["join", "city", path, "city", keys], "bytes"),
        ]
    return cmds


def run(argv, stdout, outdir):
    """Runs argv to completion; returns (wall s, CPU s, peak RSS KiB).

    Through /usr/bin/time: a child forked by Python starts with Python's
    resident set, which would floor every peak RSS at Python's size.
    """
    if outdir is not None:
        shutil.rmtree(outdir, ignore_errors=True)
    with tempfile.NamedTemporaryFile("r") as tf:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name] + argv,
                           stdout=stdout, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit("%s: exit %d: %s" % (" ".join(argv), p.returncode,
                                          p.stderr.decode(errors="replace").strip()))
        wall, user, sys_, rss = tf.read().split()[-4:]
    return float(wall), float(user) + float(sys_), int(rss)


def digest(path, mode):
    """SHA-256 of an output file (lines sorted for `sorted`) or a directory."""
    h = hashlib.sha256()
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            h.update(name.encode() + b"\0")
            h.update(digest(os.path.join(path, name), "bytes").encode())
        return h.hexdigest()
    if mode == "stats":
        # field, type, min, max, min_length, max_length: sums, means and
        # standard deviations of floats differ in their last digits (see
        # docs/cli.md).
        import csv
        with open(path, newline="") as f:
            for r in csv.reader(f):
                h.update(repr((r[:2], r[3:7])).encode())
        return h.hexdigest()
    if mode == "everything":
        # As "stats", plus median, mode and cardinality; fastcsv's q1 and
        # q3 (after xsv's columns) are not in xsv.
        import csv
        with open(path, newline="") as f:
            for r in csv.reader(f):
                h.update(repr((r[:2], r[3:7], r[9:12])).encode())
        return h.hexdigest()
    if mode == "sorted":
        with open(path, "rb") as f:
            for line in sorted(f.read().splitlines()):
                h.update(line + b"\n")
        return h.hexdigest()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release/fastcsv")
    ap.add_argument("--xsv", required=True)
    ap.add_argument("--data", default="target/bench-data")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--shapes", default="numeric,text")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--xsv-rounds", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", help="comma-separated verbs to keep")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep-cache", action="store_true",
                    help="leave each file's page cache as it is (see pagecache.py)")
    ap.add_argument("--markdown", help="append the table to this file")
    a = ap.parse_args()
    xr = a.xsv_rounds if a.xsv_rounds is not None else a.rounds
    only = set(a.only.split(",")) if a.only else None
    # Output directories (`split`, `partition`) on a tmpfs where there is
    # one: on a disk, writeback of the earlier runs' files charges a
    # varying amount of system time to whichever writer comes next.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmp = tempfile.mkdtemp(prefix="verbs-vs-xsv-", dir=shm)
    rows, bad = [], []
    try:
        for shape in a.shapes.split(","):
            path = os.path.join(a.data, "%s-%s.csv" % (shape, a.size))
            if not os.path.exists(path):
                sys.exit("%s: missing; see this script's docstring" % path)
            if shape == "text":
                keys = os.path.join(tmp, "keys.csv")
                with open(keys, "wb") as f:
                    freq = subprocess.run(
                        [a.bin, "frequency", "-s", "city", "--limit", "0", path],
                        stdout=subprocess.PIPE, check=True).stdout
                    sel = subprocess.run([a.bin, "select", "value"], input=freq,
                                         stdout=subprocess.PIPE, check=True).stdout
                    f.write(b"city" + sel[sel.index(b"\n"):])
            cmds = [c for c in commands(shape, path, tmp)
                    if only is None or c[0].split()[0] in only]
            if a.keep_cache:
                subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # warm
            else:
                recache(path)
            if a.check:
                for label, fa, xa, mode in cmds:
                    if xa is None or mode == "none":
                        continue
                    sums = []
                    for tool, argv in ((a.bin, fa), (a.xsv, xa)):
                        out = os.path.join(tmp, "out")
                        if mode == "dir":
                            run([tool] + argv, subprocess.DEVNULL, out)
                            sums.append(digest(out, mode))
                            shutil.rmtree(out)
                        else:
                            kept = os.path.join(tmp, "kept")
                            with open(kept, "wb") as f:
                                run([tool] + argv, f, None)
                            sums.append(digest(kept, mode))
                            os.remove(kept)
                    same = sums[0] == sums[1]
                    print("check %-8s %-28s %s" % (shape, label, "same" if same else "DIFFERENT"),
                          flush=True)
                    if not same:
                        bad.append((shape, label))
            if a.rounds == 0:
                continue  # --check alone: no timing
            threaded = {}
            for label, fa, xa, mode in cmds:
                if fa[0] not in threaded:
                    h = subprocess.run([a.bin, fa[0], "--help"], stdout=subprocess.PIPE).stdout
                    threaded[fa[0]] = b"--threads" in h
            times = {}
            for r in range(max(a.rounds, xr)):
                for label, fa, xa, mode in cmds:
                    outdir = os.path.join(tmp, "out") if mode == "dir" else None
                    jobs = []
                    if r < a.rounds:
                        j = ["-j", str(a.threads)] if threaded[fa[0]] else []
                        jobs.append(("fastcsv", [a.bin, fa[0]] + j + fa[1:]))
                    if xa is not None and r < xr:
                        jobs.append(("xsv", [a.xsv] + xa))
                    for tool, argv in jobs:
                        with open(os.devnull, "wb") as null:
                            m = run(argv, null, outdir)
                        times.setdefault((label, tool), []).append(m)
                print("round %d of %s done" % (r + 1, shape), file=sys.stderr, flush=True)
            for label, fa, xa, mode in cmds:
                f = times[(label, "fastcsv")]
                x = times.get((label, "xsv"))
                med = lambda ms, i: statistics.median(m[i] for m in ms)
                row = [shape, "`%s`" % label,
                       "%.2f" % med(f, 0), "%.2f" % med(f, 1), "%d" % (max(m[2] for m in f) // 1024)]
                if x:
                    row += ["%.2f" % med(x, 0), "%.2f" % med(x, 1),
                            "%d" % (max(m[2] for m in x) // 1024),
                            ("%.1fx" % (med(x, 1) / med(f, 1))) if med(f, 1) >= 0.01 else "-"]
                else:
                    row += ["-", "-", "-", "(no xsv verb)"]
                rows.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not rows:
        if bad:
            print("outputs differ: %s" % ", ".join("%s %s" % b for b in bad), file=sys.stderr)
            sys.exit(1)
        return
    head = ["file", "command", "fastcsv wall s", "fastcsv CPU s", "fastcsv RSS MiB",
            "xsv wall s", "xsv CPU s", "xsv RSS MiB", "CPU: xsv / fastcsv"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    load = os.getloadavg()
    lines.append("")
    lines.append("(fastcsv `-j %d`; median of %d runs, xsv of %d; load average %.2f at the end)"
                 % (a.threads, a.rounds, xr, load[0]))
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(text + "\n")
    if bad:
        print("outputs differ: %s" % ", ".join("%s %s" % b for b in bad), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
