#!/bin/sh
# `fastcsv search` and `fastcsv slice` against another build and xsv 0.13:
# each command RUNS times round robin, the median wall time and the median
# CPU time (user + system) per command, and the outputs' checksums compared
# (a difference is printed and the script exits 1).
#
# Usage: benches/search_slice.sh NEW_BIN OLD_BIN XSV DIR [RUNS]
# DIR holds num.csv and text.csv, made by
#   cargo run --release --example gen_data -- numeric 256M DIR/num.csv
#   cargo run --release --example gen_data -- text 256M DIR/text.csv
# Figures and the machine they came from: docs/BENCHMARKS.md ("Work notes of the session").
set -euf
new=$1 old=$2 xsv=$3 dir=$4 runs=${5:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# label | arguments after the verb (the same for every tool)
cases='search num -s ts3 ^2024-08|search -s ts3 ^2024-08 num.csv
search num 99999|search 99999 num.csv
search num -v 9|search -v 9 num.csv
search num -s int0 ^1$ (one match)|search -s int0 ^1$ num.csv
search num [0-9]{5}\.[0-9]9 (no literal)|search [0-9]{5}\.[0-9]9 num.csv
search text Paris|search Paris text.csv
search text -s city Paris|search -s city Paris text.csv
search text -i paris|search -i paris text.csv
search text [0-9]{5}\.[0-9]9 (no literal)|search [0-9]{5}\.[0-9]9 text.csv
slice num -s 1000000 -l 10|slice -s 1000000 -l 10 num.csv
slice text -s 1300000 -l 10|slice -s 1300000 -l 10 text.csv'

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '| command | tool | wall s | CPU s |\n|---|---|---:|---:|\n'
echo "$cases" | while IFS='|' read -r label args; do
    for tool in new-j1 new-j2 old xsv; do
        : > "$tmp/$tool.times"
    done
    r=0
    while [ "$r" -lt "$runs" ]; do
        for tool in new-j1 new-j2 old xsv; do
            case $tool in
                new-j1) set -- "$new" ${args%% *} -j 1 ${args#* } ;;
                new-j2) set -- "$new" ${args%% *} -j 2 ${args#* } ;;
                old) set -- "$old" $args ;;
                xsv) set -- "$xsv" $args ;;
            esac
            (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" > "$tmp/$tool.out")
            awk '{print $1, $2 + $3}' "$tmp/t" >> "$tmp/$tool.times"
        done
        r=$((r + 1))
    done
    want=$(md5sum < "$tmp/old.out")
    for tool in new-j1 new-j2 old xsv; do
        got=$(md5sum < "$tmp/$tool.out")
        if [ "$got" != "$want" ]; then
            echo "DIFFERENT: $label: $tool" >&2
            touch "$tmp/different"
        fi
        wall=$(cut -d' ' -f1 "$tmp/$tool.times" | median)
        cpu=$(cut -d' ' -f2 "$tmp/$tool.times" | median)
        printf '| `%s` | %s | %s | %s |\n' "$label" "$tool" "$wall" "$cpu"
    done
done
if [ -e "$tmp/different" ]; then
    exit 1
fi
