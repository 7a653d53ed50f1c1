"""Compare the Rust engine (examples/dump_rows) with CPython's csv module on
random inputs, without the Python extension. Run: python3 oracle_check.py N"""
import csv, io, json, os, random, subprocess, sys, tempfile

BIN = sys.argv[2] if len(sys.argv) > 2 else "target/debug/examples/dump_rows"
ALPH = ['a', 'b', ',', ';', '"', "'", '\\', ' ', '\r', '\n', '\r\n', '\x00', 'é', '#']

def run(text, dialect):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode())
        path = f.name
    try:
        args = [BIN, path, dialect["delimiter"], dialect["quotechar"] or "none",
                dialect["escapechar"] or "none", str(int(dialect["doublequote"])),
                str(int(dialect["skipinitialspace"])), str(int(dialect["strict"]))]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    rows, err = [], None
    for line in out.splitlines():
        v = json.loads(line)
        if isinstance(v, dict):
            err = (v["error"], v["line"])
        else:
            rows.append(v)
    return rows, err

def python(text, dialect):
    kw = dict(dialect)
    if kw["quotechar"] is None:
        kw["quoting"] = csv.QUOTE_NONE
        kw["quotechar"] = '"'
    r = csv.reader(io.StringIO(text, newline=""), **kw)
    rows = []
    try:
        for row in r:
            rows.append(row)
    except csv.Error as e:
        return rows, (str(e), r.line_num)
    return rows, None

def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rnd = random.Random(1)
    bad = 0
    for i in range(n):
        text = "".join(rnd.choice(ALPH) for _ in range(rnd.randint(0, 14)))
        d = dict(delimiter=rnd.choice([",", ";"]), quotechar=rnd.choice(['"', "'", None]),
                 escapechar=rnd.choice([None, None, "\\"]), doublequote=rnd.random() < 0.7,
                 skipinitialspace=rnd.random() < 0.3, strict=rnd.random() < 0.3)
        if d["quotechar"] is None and d["escapechar"] is None:
            d["escapechar"] = None
        try:
            want = python(text, d)
        except Exception as e:  # invalid dialect for csv
            continue
        got = run(text, d)
        if got != want:
            bad += 1
            if bad <= 10:
                print("MISMATCH", repr(text), d, "\n  py  ", want, "\n  rust", got)
    print(f"{n} cases, {bad} mismatches")
    sys.exit(1 if bad else 0)

main()
