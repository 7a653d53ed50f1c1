#!/bin/sh
# Regenerates expected/ with xsv 0.13 (xsv join), from this directory:
#   XSV=/path/to/xsv sh gen.sh
# Each line of cases.tsv: a name, then xsv join's arguments.
set -e
XSV=${XSV:-xsv}
while IFS='	' read -r name args; do
  # shellcheck disable=SC2086
  $XSV join $args > "expected/$name.out"
done < cases.tsv
