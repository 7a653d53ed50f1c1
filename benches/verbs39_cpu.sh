#!/usr/bin/env bash
# CPU time (user + system) of `fastcsv table`, `flatten` and `cat --to
# jsonl|tsv -j 1` beside xsv 0.13's `table` and `flatten`: each command
# RUNS times with output to /dev/null (the median is printed), then once to
# a file in TMP (that run's CPU time printed too), compared with `cmp` to
# the other tool's (table, flatten) or to OLD_BIN's (cat --to).
#
#   cargo run --release --example gen_data -- numeric 256M target/bench-data/numeric-256M.csv
#   cargo run --release --example gen_cli_data -- target/bench-data/text-256M.csv 256 42
#   XSV=/work/xsv/bin/xsv [OLD_BIN=old/fastcsv] bash benches/verbs39_cpu.sh target/bench-data/{numeric,text}-256M.csv
set -euo pipefail
BIN=${BIN:-target/release/fastcsv}
XSV=${XSV:-xsv}
RUNS=${RUNS:-3}
TMP=${TMP:-$(mktemp -d)}
cpu() { # prints user+sys seconds of one run of "$@" > ${OUT:-/dev/null}
    /usr/bin/time -f "%U %S" -o "$TMP/t" "$@" > "${OUT:-/dev/null}"
    awk '{printf "%.2f\n", $1 + $2}' "$TMP/t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
row() { # label file output argv...: RUNS to /dev/null, one to TMP/output
    local label=$1 file=$2 out=$3; shift 3
    local m; m=$(for _ in $(seq "$RUNS"); do cpu "$@"; done | median)
    local mb; mb=$(awk -v b="$(stat -c %s "$file")" -v s="$m" 'BEGIN {printf "%.0f", b / s / 1e6}')
    local f; f=$(OUT="$TMP/$out" cpu "$@")
    echo "| $(basename "$file") | \`$label\` | $m | $mb | $f |"
}
echo "| file | command | CPU s, to /dev/null (median of $RUNS) | input MB per CPU s | CPU s, to a file (1 run) |"
echo "|---|---|---:|---:|---:|"
for f in "$@"; do
    for verb in table flatten; do
        row "fastcsv $verb" "$f" a "$BIN" "$verb" "$f"
        row "xsv $verb" "$f" b "$XSV" "$verb" "$f"
        cmp "$TMP/a" "$TMP/b" && echo "| $(basename "$f") | $verb: same bytes as xsv (cmp) | | |"
        rm -f "$TMP/a" "$TMP/b"
    done
    for to in jsonl tsv; do
        row "fastcsv cat -j 1 --to $to" "$f" a "$BIN" cat -j 1 --to "$to" "$f"
        if [ -n "${OLD_BIN:-}" ]; then
            row "old fastcsv cat -j 1 --to $to" "$f" b "$OLD_BIN" cat -j 1 --to "$to" "$f"
            cmp "$TMP/a" "$TMP/b" && echo "| $(basename "$f") | cat --to $to: same bytes as OLD_BIN (cmp) | | |"
        fi
        rm -f "$TMP/a" "$TMP/b"
    done
done
