#!/usr/bin/env bash
# A/B of the core engines against an earlier commit: count, every field
# (read_batch) and three columns (select), mapped, on the numeric, text and
# wide shapes, through `examples/bench_report` built at both commits.
# The two binaries run round robin (old, new, old, new, ...), so that a slow
# phase of the machine hits both alike; each prints one run per engine, and
# the medians over the rounds are compared.
#
# Usage: bash benches/ab.sh BASE_REV [SIZE] [ROUNDS]   (defaults: 256M 5)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: benches/ab.sh BASE_REV [SIZE] [ROUNDS]}
size=${2:-256M}
rounds=${3:-5}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/base" "$base"
(cd "$work/base" && cargo build -q --release --example bench_report)
cargo build -q --release --example bench_report
cp "$work/base/target/release/examples/bench_report" "$work/old"
cp target/release/examples/bench_report "$work/new"
export CARGO_TARGET_DIR="$work/data"   # one copy of the generated inputs for both
only="count/fastcsv/mapped,fields/fastcsv read_batch all/mapped,select/fastcsv/mapped"
for shape in numeric text wide; do
    BENCH_ONLY="count/fastcsv/mapped" "$work/new" "$size" 1 "$shape" >/dev/null 2>&1  # generates the input
    for r in $(seq "$rounds"); do
        for v in old new; do
            BENCH_ONLY="$only" "$work/$v" "$size" 1 "$shape" 2>/dev/null |
                sed -n "s|^\(.*\): \([0-9.]*\) s wall, \([0-9.]*\) s cpu$|$shape $v \1 \2 \3|p"
        done
    done
done | python3 -c '
import sys, statistics as st
runs = {}
for line in sys.stdin:
    shape, v, rest = line.split(" ", 2)
    label, wall, cpu = rest.rsplit(" ", 2)
    runs.setdefault((shape, label), {}).setdefault(v, []).append((float(wall), float(cpu)))
print("| shape | work | old wall s | new wall s | new/old wall | old CPU s | new CPU s | new/old CPU |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for (shape, label), d in runs.items():
    ow = st.median(w for w, _ in d["old"]); nw = st.median(w for w, _ in d["new"])
    oc = st.median(c for _, c in d["old"]); nc = st.median(c for _, c in d["new"])
    print(f"| {shape} | {label} | {ow:.3f} | {nw:.3f} | {nw/ow:.3f} | {oc:.3f} | {nc:.3f} | {nc/oc:.3f} |")
'
