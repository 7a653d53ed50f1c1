#!/usr/bin/env python3
"""Writes expected/NAME.out for each case of cases.tsv with xsv 0.13.0
(`cargo install xsv --version 0.13.0`): XSV=/path/to/xsv python3 gen.py.
A case line is NAME, then the arguments, tab-separated (\\t and \\\\ escaped)."""
import os, subprocess
here = os.path.dirname(os.path.abspath(__file__))
xsv = os.environ.get("XSV", "xsv")
def unescape(a):
    out, i = [], 0
    while i < len(a):
        if a[i] == "\\" and i + 1 < len(a):
            out.append({"t": "\t", "\\": "\\"}[a[i + 1]]); i += 2
        else:
            out.append(a[i]); i += 1
    return "".join(out)
for line in open(os.path.join(here, "cases.tsv")):
    name, *args = line.rstrip("\n").split("\t")
    args = [unescape(a) for a in args]
    r = subprocess.run([xsv] + args, cwd=here, capture_output=True)
    assert r.returncode == 0, (name, r.stderr)
    open(os.path.join(here, "expected", name + ".out"), "wb").write(r.stdout)
