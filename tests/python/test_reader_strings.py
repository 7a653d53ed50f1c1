"""Where the layout of a compact ASCII `str` is known (CPython 3.10 to 3.12,
release builds), the reader makes one without `PyUnicode_New`: it allocates
the block with `PyObject_Malloc` and fills in the header itself. Every such
string must be indistinguishable from the one `bytes.decode` makes: equal,
same hash, length, `isascii`, size, interning, methods, pickling, memory
accounting (tracemalloc), and freed the same way."""

import csv
import gc
import io
import pickle
import random
import sys
import tracemalloc

import fastcsv
from fastcsv import _fastcsv

# Printable ASCII and control characters but CR, LF and NUL; quotes and
# delimiters make quoted fields (copied out of the record) too.
ALPHABET = "".join(map(chr, range(1, 128))).replace("\r", "").replace("\n", "")


def make_fields(seed, rows=3000):
    rng = random.Random(seed)
    out = []
    for r in range(rows):
        row = []
        for c in range(rng.randrange(1, 12)):
            n = rng.choice([0, 1, 2, 3, 5, 8, 9, 15, 16, 17, 31, 32, 33, 64, 200, 5000])
            row.append("".join(rng.choice(ALPHABET) for _ in range(n)))
        out.append(row)
    return out


def write(tmp_path, rows, encoding="ascii"):
    """`rows` as CSV in a file (`csv.writer`), and the rows `csv` reads back."""
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    text = buf.getvalue()
    path = tmp_path / f"{encoding}.csv"
    path.write_bytes(text.encode(encoding))
    return path, [r for r in csv.reader(io.StringIO(text, newline=""))]


def expected_headers():
    return (3, 10) <= sys.version_info[:2] <= (3, 12) and not hasattr(sys, "gettotalrefcount")


def test_headers_in_use_where_layout_known():
    assert _fastcsv._ascii_headers() == expected_headers()


def same_str(got, want):
    # `want` made by bytes.decode, as CPython makes strings.
    assert type(got) is str
    assert got == want and want == got
    assert len(got) == len(want)
    assert got.isascii()
    assert sys.getsizeof(got) == sys.getsizeof(want)
    assert hash(got) == hash(want)
    assert {want: 1}[got] == 1
    assert got.encode() == want.encode()
    assert got.upper() == want.upper() and got[1:] == want[1:]
    assert got + "é" == want + "é"
    assert repr(got) == repr(want)
    assert pickle.loads(pickle.dumps(got)) == want


def test_fields_are_strs_as_decode_makes_them(tmp_path):
    rows = make_fields(1)
    path, want = write(tmp_path, rows)
    got = list(fastcsv.reader(path))
    assert got == want
    bulk = fastcsv.read(path)
    assert bulk == want
    for g, b, w in zip(got, bulk, want):
        for gs, bs, ws in zip(g, b, w):
            same_str(gs, ws.encode().decode())
            same_str(bs, ws.encode().decode())


def test_interning_of_made_strs(tmp_path):
    # A made string interns as one of `decode`'s: the first interned of equal
    # strings is the one `sys.intern` gives back for all.
    rows = [["field%05d" % i, "x%dy" % i] for i in range(2000)]
    path, want = write(tmp_path, rows)
    assert_intern_as_decoded(fastcsv.reader(path))


def assert_intern_as_decoded(rows):
    """Each string of `rows` interns as the same string `decode` makes."""
    for row in rows:
        for s in row:
            t = sys.intern(s)
            assert t == s
            assert sys.intern(s.encode().decode()) is t
            assert sys.intern(t) is t


def test_made_strs_are_traced_and_freed(tmp_path):
    # Unique fields too long for the short-string cache: each a new string.
    rows = [["%020d" % i, "v%030d" % (i * 7)] for i in range(20_000)]
    path, _ = write(tmp_path, rows)
    assert_traced_and_freed(path)


def assert_traced_and_freed(path, check=None):
    """The strings of `path`'s rows are traced by tracemalloc while held
    (`check(rows)` runs then) and freed once the rows go."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        got = list(fastcsv.reader(path))
        held = tracemalloc.get_traced_memory()[0] - before
        size = sum(sys.getsizeof(s) for row in got for s in row)
        assert held >= size
        if check is not None:
            check(got)
        del got
        gc.collect()
        after = tracemalloc.get_traced_memory()[0] - before
        assert after < size // 10
    finally:
        tracemalloc.stop()
