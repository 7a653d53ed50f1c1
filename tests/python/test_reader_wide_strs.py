"""Where the layout of a compact `str` is known (CPython 3.10 to 3.12,
release builds), the reader makes the strings of UCS1 and UCS2 fields
(characters past ASCII, none past U+FFFF) without `PyUnicode_New`: it
allocates the block with `PyObject_Malloc` and copies a header taken from
a string CPython made. UCS4 fields keep `PyUnicode_New`. Every such string
must be indistinguishable from the one `bytes.decode` makes: equal, same
hash, length, kind (`sys.getsizeof`), interning, methods, pickling, memory
accounting (tracemalloc), and freed the same way."""

import pickle
import random
import sys

import fastcsv
from fastcsv import _fastcsv
from test_reader_strings import (
    assert_intern_as_decoded,
    assert_traced_and_freed,
    expected_headers,
)
from test_reader_strings import write as write_encoded

# Characters of each kind: Latin-1 past ASCII (UCS1), past U+00FF (UCS2),
# past U+FFFF (UCS4), and ASCII with the quote and the delimiter (quoted
# fields, and doubled quotes: copied out of the record).
UCS1 = "éüÿ\x80ß¡"
UCS2 = "ĀЖ€서울東京\uffff"
UCS4 = "😀𝄞\U0010ffff"
ASCII = 'ab,"x 9'


def make_rows(seed, rows=4000):
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        row = []
        for _ in range(rng.randrange(1, 10)):
            n = rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 100, 3000])
            top = rng.choice([UCS1, UCS1 + UCS2, UCS1 + UCS2 + UCS4, ASCII])
            chars = [rng.choice(ASCII + top) for _ in range(n)]
            # At least one character of the kind.
            chars[rng.randrange(n)] = rng.choice(top)
            row.append("".join(chars))
        out.append(row)
    return out


def write(tmp_path, rows):
    return write_encoded(tmp_path, rows, "utf-8")


def test_headers_in_use_where_layout_known():
    assert _fastcsv._wide_headers() == expected_headers()


def same_str(got, want):
    # `want` made by bytes.decode, as CPython makes strings.
    assert type(got) is str
    assert got == want and want == got
    assert len(got) == len(want)
    assert got.isascii() == want.isascii()
    assert max(got) == max(want)
    assert sys.getsizeof(got) == sys.getsizeof(want)
    assert hash(got) == hash(want)
    assert {want: 1}[got] == 1
    assert got.encode() == want.encode()
    assert got.encode("utf-16") == want.encode("utf-16")
    assert got.upper() == want.upper() and got[1:] == want[1:]
    assert got + "é" == want + "é" and got + "😀" == want + "😀"
    assert repr(got) == repr(want)
    assert pickle.loads(pickle.dumps(got)) == want


def test_fields_are_strs_as_decode_makes_them(tmp_path):
    # About 1.5 MB: the reader reads ahead (several batches).
    rows = make_rows(1)
    path, want = write(tmp_path, rows)
    got = list(fastcsv.reader(path))
    assert got == want
    seen = set()
    for g, w in zip(got, want):
        for gs, ws in zip(g, w):
            # A short field that repeats is one `str` (the short-string
            # cache): checked once, since pickling a `str` keeps its UTF-8
            # form with it (`sys.getsizeof` grows), as on any `str`.
            if id(gs) in seen:
                assert gs == ws
                continue
            seen.add(id(gs))
            same_str(gs, ws.encode().decode())
    # Every kind was read.
    assert any(max(s) > "\uffff" for row in want for s in row)
    assert any("\xff" < max(s) <= "\uffff" for row in want for s in row)
    assert any("\x7f" < max(s) <= "\xff" for row in want for s in row)


def test_one_character_fields_are_cpythons(tmp_path):
    # A field of one Latin-1 character is CPython's cached string of it, as
    # `csv` returns; one past U+00FF is a new string (or the reader's own
    # shared one, for a field of up to 15 bytes: the short-string cache).
    rows = [["é", "ÿ", "Ж", "😀", "x"]] * 70_000
    path, want = write(tmp_path, rows)
    got = list(fastcsv.reader(path))
    assert got == want
    seen = set()
    for row in got[::997]:
        assert row[0] is "é".encode().decode()
        assert row[1] is "ÿ".encode().decode()
        # "Ж" repeats as one `str` (the short-string cache): checked once
        # (see `test_fields_are_strs_as_decode_makes_them`).
        if id(row[2]) not in seen:
            seen.add(id(row[2]))
            same_str(row[2], "Ж".encode().decode())
        same_str(row[3], "😀".encode().decode())


def test_interning_of_made_strs(tmp_path):
    rows = [["fé%05d" % i, "Ж%dy" % i] for i in range(30_000)]
    path, want = write(tmp_path, rows)
    got = list(fastcsv.reader(path))
    assert got == want
    assert_intern_as_decoded(got[::101])


def test_made_strs_are_traced_and_freed(tmp_path):
    # Unique non-ASCII fields, each a new string.
    rows = [["é%020d" % i, "Жv%030d" % (i * 7)] for i in range(40_000)]
    path, want = write(tmp_path, rows)

    def same_counts(got):
        for row, w in zip(got[::1000], want[::1000]):
            assert sys.getrefcount(row[0]) == sys.getrefcount(w[0])
            assert sys.getrefcount(row[1]) == sys.getrefcount(w[1])

    assert_traced_and_freed(path, same_counts)
