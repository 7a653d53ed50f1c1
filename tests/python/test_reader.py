"""fastcsv's reader, DictReader and bulk functions, against the stdlib
where there is one."""

import array
import collections
import csv
import datetime
import decimal
import inspect
import io
import os
import random
import signal
import subprocess
import sys
import time

import fastcsv
import pytest
from conftest import drain


def write(tmp_path, data, name="data.csv"):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


# --- the module is a complete swap -------------------------------------------

def test_reexports_are_the_stdlib_objects():
    for name in ["register_dialect", "get_dialect", "list_dialects",
                 "unregister_dialect", "QUOTE_MINIMAL", "QUOTE_ALL",
                 "QUOTE_NONNUMERIC", "QUOTE_NONE", "Dialect", "excel",
                 "excel_tab", "unix_dialect", "Sniffer", "writer",
                 "DictWriter", "__version__", "field_size_limit", "Error"]:
        assert getattr(fastcsv, name) is getattr(csv, name), name
    assert fastcsv.Error is csv.Error
    assert set(csv.__all__) <= set(fastcsv.__all__)
    assert issubclass(fastcsv.DictReader, csv.DictReader)
    assert isinstance(fastcsv.VERSION, str) and fastcsv.VERSION


def test_registered_dialects_and_dialect_attribute():
    fastcsv.register_dialect("semi", delimiter=";", quoting=csv.QUOTE_NONE)
    try:
        r = fastcsv.reader(['a;"b"\r\n'], "semi")
        assert list(r) == [["a", '"b"']]
        assert r.dialect.delimiter == ";"
        assert r.dialect.quoting == csv.QUOTE_NONE
        assert r.line_num == 1
    finally:
        fastcsv.unregister_dialect("semi")


# --- iterables of str ----------------------------------------------------------

def test_pulls_one_line_at_a_time():
    # newline="\n" (StringIO's default) takes the line path; universal
    # newlines take the chunked text path (see test_text_path.py).
    f = io.StringIO("a,b\nc,d\ne,f\n", newline="\n")
    g = io.StringIO("a,b\nc,d\ne,f\n", newline="\n")
    r, s = fastcsv.reader(f), csv.reader(g)
    assert r._source == "lines"
    assert next(r) == next(s) == ["a", "b"]
    assert f.readline() == g.readline() == "c,d\n"
    assert next(r) == next(s) == ["e", "f"]
    assert r.line_num == s.line_num == 2


def test_generator_is_not_read_ahead():
    pulled = []

    def gen():
        for line in ["x\n", '"multi\n', 'line"\n', "y\n"]:
            pulled.append(line)
            yield line

    r = fastcsv.reader(gen())
    assert next(r) == ["x"]
    assert len(pulled) == 1
    assert next(r) == ["multi\nline"]
    assert len(pulled) == 3 and r.line_num == 3


def test_non_str_lines():
    for bad, name in [([b"a,b\n"], "bytes"), ([1], "int"), ([None], "NoneType")]:
        with pytest.raises(csv.Error) as e1:
            list(csv.reader(bad))
        with pytest.raises(csv.Error) as e2:
            list(fastcsv.reader(bad))
        assert str(e1.value) == str(e2.value)
        assert f"not {name} (the file should be opened in text mode)" in str(e2.value)



class Outer:
    class Inner:
        pass


@pytest.mark.parametrize("bad", [
    datetime.date(2020, 1, 1), decimal.Decimal(1), collections.OrderedDict(),
    array.array("b"), csv.reader([]), Outer(), Outer.Inner(),
    type("x" * 300, (), {})(), type("é" * 150, (), {})(), type("a" + "é" * 150, (), {})(),
], ids=["date", "Decimal", "OrderedDict", "array", "_csv.reader", "Outer", "Outer.Inner",
        "long-name", "long-non-ascii-name", "name-cut-in-a-character"])
def test_non_str_lines_name_the_type_as_csv_does(bad):
    """csv prints the type's tp_name, cut at 200 bytes: with the module for
    types defined in C (static or heap), the bare name for Python classes."""
    for lines in ([bad], ["a\n", '"b\n', bad]):
        with pytest.raises(csv.Error) as want:
            list(csv.reader(lines))
        with pytest.raises(csv.Error) as got:
            list(fastcsv.reader(lines))
        assert str(got.value) == str(want.value)

@pytest.mark.parametrize("args, kw", [
    ((), {}), ((), {"csvfile": []}), ((), {"delimiter": ";"}), (([], "excel", 1), {}),
    (([], "excel", 1, 2), {"delimiter": ";"}),
], ids=["none", "csvfile-keyword", "keywords-only", "three", "four"])
def test_wrong_number_of_arguments_as_csv(args, kw):
    """``csv.reader`` takes one or two arguments by position; too few or
    too many give its messages (the signature type checkers and ``help``
    see stays the typed one)."""
    with pytest.raises(TypeError) as want:
        csv.reader(*args, **kw)
    with pytest.raises(TypeError) as got:
        fastcsv.reader(*args, **kw)
    assert str(got.value) == str(want.value)
    assert fastcsv.reader.__name__ == "reader"
    assert "csvfile" in str(inspect.signature(fastcsv.reader))


def test_errors_from_the_iterator_propagate():
    def gen():
        yield "a\n"
        raise KeyError("boom")

    r = fastcsv.reader(gen())
    assert next(r) == ["a"]
    with pytest.raises(KeyError):
        next(r)


def test_nul_surrogates_and_unicode_are_data():
    lines = ["a\x00b,\udcff,é€😀\n", '"q\x00",x\n']
    assert list(fastcsv.reader(lines)) == list(csv.reader(lines))


def test_strict_errors_and_recovery_match():
    text = 'a,"b"x,c\nd,e\n"open\n'
    for kw in [{"strict": True}, {"strict": False}]:
        assert drain(fastcsv.reader(io.StringIO(text, newline=""), **kw)) == \
            drain(csv.reader(io.StringIO(text, newline=""), **kw))


def test_escapechar_skipinitialspace_doublequote():
    text = 'a\\,b, "c""d",  e\\\nf\n"x\\"y"\n'
    for kw in [{"escapechar": "\\"}, {"escapechar": "\\", "doublequote": False},
               {"skipinitialspace": True, "escapechar": "\\"}, {"quoting": csv.QUOTE_NONE, "escapechar": "\\"}]:
        assert drain(fastcsv.reader(io.StringIO(text, newline=""), **kw)) == \
            drain(csv.reader(io.StringIO(text, newline=""), **kw))


def test_non_ascii_dialect_falls_back_to_the_stdlib():
    r = fastcsv.reader(["aéb\n"], delimiter="é")
    assert type(r) is type(csv.reader([]))
    assert list(r) == [["a", "b"]]


def test_filter_on_lines():
    assert list(fastcsv.reader(["a\x07b,c\n"], filter="controls")) == [["ab", "c"]]
    with pytest.raises(ValueError):
        fastcsv.reader(["a"], filter="bogus")
    with pytest.raises(TypeError):
        fastcsv.reader(["a"], encoding="utf-8")


# --- validation ------------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    {"delimiter": ""}, {"delimiter": "ab"}, {"delimiter": 1},
    {"quotechar": "ab"}, {"quoting": 7}, {"quoting": csv.QUOTE_MINIMAL, "quotechar": None},
    {"escapechar": "xy"}, {"lineterminator": 1}, {"bogus": 1},
])
def test_validation_messages(kw):
    with pytest.raises(Exception) as want:
        csv.reader([], **kw)
    for src in ([], "somewhere.csv"):
        with pytest.raises(type(want.value)) as got:
            fastcsv.reader(src, **kw)
        assert str(got.value) == str(want.value)


def test_unknown_dialect_and_non_iterable():
    for args in [([], "nope"), (5,), (5, "nope")]:
        with pytest.raises(Exception) as want:
            csv.reader(*args)
        with pytest.raises(type(want.value)) as got:
            fastcsv.reader(*args)
        assert str(got.value) == str(want.value)



def outcome(make):
    """The rows `make()` reads, or the type and message of what it raises."""
    try:
        return list(make())
    except Exception as e:  # noqa: BLE001 - compared with the stdlib's
        return type(e), str(e)


# (positional dialect, keywords, whether csv raises TypeError)
QUOTECHAR_NONE_CALLS = [
    ((), {"quotechar": None}, False),
    ((), {"quotechar": None, "escapechar": "\\"}, False),
    ((), {"quotechar": None, "delimiter": ";"}, False),
    ((None,), {"quotechar": None}, False),
    (("excel",), {"quotechar": None}, True),
    ((), {"dialect": "excel", "quotechar": None}, True),
    ((csv.excel,), {"quotechar": None}, True),
    ((), {"quotechar": None, "quoting": csv.QUOTE_MINIMAL}, True),
    ((), {"quotechar": None, "quoting": csv.QUOTE_NONE}, False),
]


@pytest.mark.parametrize("args,kw,raises", QUOTECHAR_NONE_CALLS)
def test_quotechar_none_without_a_dialect_means_quote_none(tmp_path, args, kw, raises):
    """With no dialect, csv takes quotechar=None alone as QUOTE_NONE; with
    one (even 'excel'), or with quoting given, it is a TypeError. The same
    through every input kind, `read`, and DictReader (which always passes a
    dialect)."""
    text = '"a",b;c\\,d\r\n"x\ny",z\r\n'
    p = write(tmp_path, text)
    want = outcome(lambda: csv.reader(io.StringIO(text, newline=""), *args, **kw))
    assert isinstance(want, tuple) == raises
    makers = {
        "lines": lambda: fastcsv.reader(text.splitlines(keepends=True), *args, **kw),
        "text": lambda: fastcsv.reader(io.StringIO(text, newline=""), *args, **kw),
        "path": lambda: fastcsv.reader(str(p), *args, **kw),
        "read": lambda: fastcsv.read(p.read_bytes(), *args, **kw),
    }
    for kind, make in makers.items():
        assert outcome(make) == want, kind
    want = outcome(lambda: csv.DictReader(io.StringIO(text, newline=""), *args, **kw))
    got = outcome(lambda: fastcsv.DictReader(io.StringIO(text, newline=""), *args, **kw))
    assert got == want


def test_dialect_by_name_and_position_is_csvs_error():
    for args, kw in [((["a"], "excel"), {"dialect": "unix"}), ((["a"], None), {"dialect": "unix"})]:
        with pytest.raises(TypeError) as want:
            csv.reader(*args, **kw)
        for f in (fastcsv.reader, fastcsv.read, fastcsv.read_columns):
            with pytest.raises(TypeError) as got:
                f(*args, **kw)
            assert str(got.value) == str(want.value), f.__name__
    # By keyword alone, as in csv.
    assert list(fastcsv.reader(["a\n"], dialect="unix")) == [["a"]]

def test_native_keyword_validation(tmp_path):
    p = write(tmp_path, "a\n")
    # What to do instead is in the message.
    with pytest.raises(ValueError, match=r"UTF-8 only.*open\(path, encoding='latin-1', newline=''\)"):
        fastcsv.reader(p, encoding="latin-1")
    with pytest.raises(LookupError):
        fastcsv.reader(p, errors="no-such-handler")
    with pytest.raises(ValueError, match="source"):
        fastcsv.reader(p, source="telepathy")
    with pytest.raises(ValueError, match="filter"):
        fastcsv.reader(p, filter="everything")
    assert list(fastcsv.reader(p, encoding="UTF8")) == [["a"]]


# --- field_size_limit ----------------------------------------------------------------

def test_field_size_limit_is_shared_and_read_while_parsing(limit, tmp_path):
    p = write(tmp_path, "abc,de\nabcdef\n")
    lines = ["abc,de\n", "abcdef\n"]
    fastcsv.field_size_limit(5)
    assert csv.field_size_limit() == 5
    for src in (lines, p):
        r = fastcsv.reader(src)
        assert next(r) == ["abc", "de"]
        with pytest.raises(csv.Error, match=r"field larger than field limit \(5\)"):
            next(r)
    with pytest.raises(csv.Error) as want:
        list(csv.reader(lines))
    with pytest.raises(csv.Error) as got:
        list(fastcsv.reader(lines))
    assert str(got.value) == str(want.value)
    # For iterables of str (the csv-compatible path) a change takes effect
    # at once, as in csv; native inputs read the limit when opened.
    fastcsv.field_size_limit(2)
    r = fastcsv.reader(lines)
    with pytest.raises(csv.Error):
        next(r)
    fastcsv.field_size_limit(100)
    assert next(r) == ["abcdef"]
    fastcsv.field_size_limit(2)
    r = fastcsv.reader(p)
    fastcsv.field_size_limit(100)
    for _ in range(2):
        with pytest.raises(csv.Error, match=r"field larger than field limit \(2\)"):
            next(r)
    assert list(fastcsv.reader(p)) == [["abc", "de"], ["abcdef"]]


def limit_changing_rows(mod, lines, changes, **kw):
    """Every row (or error, with `line_num`) of `mod.reader` over a
    generator that sets `field_size_limit` to `changes[i]` just before it
    yields line `i`."""
    def gen():
        for i, line in enumerate(lines):
            if i in changes:
                csv.field_size_limit(changes[i])
            yield line

    out, r = [], mod.reader(gen(), **kw)
    while len(out) < 30:
        try:
            out.append((next(r), r.line_num))
        except StopIteration:
            break
        except csv.Error as e:
            out.append(("Error", str(e), r.line_num))
    return out


def test_field_size_limit_changed_by_the_lines_iterator(limit):
    """`csv` reads the limit as it parses, and the iterator's code is the
    only code that runs inside a record: a limit set while it yields a line
    (the first of a record or one inside it, a quoted field going on) is
    in force for that line's characters at once."""
    rng = random.Random(7)
    pieces = ["a", "bbbbbb", '"', ",", "\n", '"x\ny"', "cccccccccc", '""', "\r\n"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        lines = text.splitlines(keepends=True) or [""]
        changes = {rng.randrange(len(lines)): rng.choice([0, 1, 2, 3, 5, 8, 12, 131072])
                   for _ in range(rng.randint(1, 3))}
        kw = rng.choice([{}, {"strict": True}, {"escapechar": "\\"}])
        csv.field_size_limit(131072)
        want = limit_changing_rows(csv, lines, changes, **kw)
        csv.field_size_limit(131072)
        got = limit_changing_rows(fastcsv, lines, changes, **kw)
        assert got == want, (lines, changes, kw)


def test_field_size_limit_counts_characters(limit):
    fastcsv.field_size_limit(3)
    assert list(fastcsv.reader(["ééé\n"])) == [["ééé"]]
    with pytest.raises(csv.Error):
        list(fastcsv.reader(["éééé\n"]))


# --- QUOTE_NONNUMERIC ----------------------------------------------------------------

def test_quote_nonnumeric(tmp_path):
    text = '1,"2", 3.5 ,-1e3,,"x"\n'
    want = list(csv.reader([text], quoting=csv.QUOTE_NONNUMERIC))
    assert want == [[1.0, "2", 3.5, -1000.0, "", "x"]] or want[0][4] != ""
    assert list(fastcsv.reader([text], quoting=csv.QUOTE_NONNUMERIC)) == want
    p = write(tmp_path, text)
    assert list(fastcsv.reader(p, quoting=csv.QUOTE_NONNUMERIC)) == want
    assert fastcsv.read(p, quoting=csv.QUOTE_NONNUMERIC) == want


def test_quote_nonnumeric_errors_match():
    for text in ["1,abc\n2\n", 'x,"a\nb"\n3\n', "1\n,\n"]:
        assert drain(fastcsv.reader(io.StringIO(text, newline=""), quoting=csv.QUOTE_NONNUMERIC)) \
            == drain(csv.reader(io.StringIO(text, newline=""), quoting=csv.QUOTE_NONNUMERIC))


# --- native inputs --------------------------------------------------------------------

def test_native_inputs_agree(tmp_path):
    text = '\ufeffh1,h2\r\n"a,b",c\r\n\r\n1,"x""y"\r\n"multi\nline",é\n'
    want = list(csv.reader(io.StringIO(text[1:], newline="")))
    p = write(tmp_path, text)
    assert list(fastcsv.reader(p)) == want
    assert list(fastcsv.reader(str(p), source="mmap")) == want
    assert list(fastcsv.reader(p, source="read", buffer_size=2)) == want
    with open(p, "rb") as f:
        assert list(fastcsv.reader(f)) == want
    with open(p, "rb", buffering=0) as f:
        assert list(fastcsv.reader(f)) == want
    assert list(fastcsv.reader(io.BytesIO(text.encode()))) == want
    assert fastcsv.read(p) == want
    assert fastcsv.read(text.encode()) == want
    assert fastcsv.read(io.BytesIO(text.encode()), buffer_size=1) == want
    assert fastcsv.read(io.StringIO(text[1:], newline="")) == want
    r = fastcsv.reader(p)
    list(r)
    assert r.line_num == 6


def test_binary_file_position_is_honoured_and_kept(tmp_path):
    p = write(tmp_path, "skip\na,b\nc,d\n")
    with open(p, "rb") as f:
        assert f.readline() == b"skip\n"
        assert list(fastcsv.reader(f)) == [["a", "b"], ["c", "d"]]
        # The file object's own position is unchanged.
        assert f.readline() == b"a,b\n"


def test_text_file_object(tmp_path):
    p = write(tmp_path, 'a,"b\r\nc"\r\nd\re\n')
    for newline in ["", None, "\n", "\r\n", "\r"]:
        with open(p, newline=newline) as f, open(p, newline=newline) as g:
            assert drain(fastcsv.reader(f)) == drain(csv.reader(g))


def test_error_positions(tmp_path):
    p = write(tmp_path, 'a,b\nc,d\n"x"y,z\ne\n')
    r = fastcsv.reader(p, strict=True)
    assert next(r) == ["a", "b"]
    assert next(r) == ["c", "d"]
    with pytest.raises(csv.Error) as e:
        next(r)
    assert str(e.value) == f"{p}:3: record 2, byte 11: ',' expected after '\"'"
    assert r.line_num == 3
    assert next(r) == ["e"]
    with open(p, "rb") as f, pytest.raises(csv.Error, match=rf"^{p}:3: record 2, byte 11: "):
        fastcsv.read(f, strict=True)
    with pytest.raises(csv.Error, match=r"^line 3: record 2, byte 11: "):
        fastcsv.read(io.BytesIO(p.read_bytes()), strict=True)
    q = write(tmp_path, 'a\n"open', "eof.csv")
    with pytest.raises(csv.Error, match=rf"^{q}:2: record 1, byte 2: unexpected end of data$"):
        fastcsv.read(q, strict=True)


def test_unicode_decode_errors(tmp_path):
    p = write(tmp_path, b"a,b\nok,\xffbad\n\xc3\xa9,z\n")
    r = fastcsv.reader(p)
    assert next(r) == ["a", "b"]
    with pytest.raises(UnicodeDecodeError) as e:
        next(r)
    err = e.value
    assert err.object == b"\xffbad" and err.start == 0 and err.end == 1
    assert f"field 1 of {p}:2: record 1, byte 4" in str(err)
    assert next(r) == ["é", "z"]
    with pytest.raises(UnicodeDecodeError):
        fastcsv.read(p)
    assert fastcsv.read(p, errors="replace")[1] == ["ok", "\ufffdbad"]
    assert list(fastcsv.reader(p, errors="replace"))[1] == ["ok", "\ufffdbad"]


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        fastcsv.reader(tmp_path / "nope.csv")
    assert e.value.filename == str(tmp_path / "nope.csv")
    with pytest.raises(IsADirectoryError):
        fastcsv.read(tmp_path)


def test_stream_exceptions_propagate():
    class Broken(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        list(fastcsv.reader(Broken()))
    with pytest.raises(RuntimeError, match="disk on fire"):
        fastcsv.read(Broken())


def test_filter_native(tmp_path):
    p = write(tmp_path, "a\x00b,c\u200bd\n")
    assert fastcsv.read(p, filter="controls") == [["ab", "c\u200bd"]]
    assert fastcsv.read(p, filter="invisible") == [["ab", "cd"]]


def test_non_ascii_dialect_native_fallback(tmp_path):
    p = write(tmp_path, "\ufeffaéb\nc\n")
    assert list(fastcsv.reader(p, delimiter="é")) == [["a", "b"], ["c"]]
    assert fastcsv.read(p, delimiter="é") == [["a", "b"], ["c"]]
    with open(p, "rb") as f:
        assert fastcsv.read(f, delimiter="é") == [["a", "b"], ["c"]]


# --- bulk ---------------------------------------------------------------------------

def test_read_intern_shares_strings(tmp_path):
    p = write(tmp_path, "city,n\n" + "Paris,1\nOslo,2\n" * 100)
    rows = fastcsv.read(p, intern=True)
    assert rows == fastcsv.read(p)
    assert rows[1][0] is rows[3][0] and rows[2][0] is rows[4][0]
    assert fastcsv.read(p)[1][0] is not fastcsv.read(p)[3][0]


def test_read_columns(tmp_path):
    p = write(tmp_path, "a,b,c\n1,2,3\n\n4,5\n")
    want = {"a": ["1", "4"], "b": ["2", "5"], "c": ["3", ""]}
    assert fastcsv.read_columns(p) == want
    assert fastcsv.read_columns(io.StringIO(p.read_text(), newline="")) == want
    assert fastcsv.read_columns(p, header=False) == {
        "0": ["a", "1", "4"], "1": ["b", "2", "5"], "2": ["c", "3", ""]}
    q = write(tmp_path, "a,b\n1,2,3\n", "long.csv")
    with pytest.raises(csv.Error, match="found record with 3 fields, but the header row has 2"):
        fastcsv.read_columns(q)
    assert fastcsv.read_columns(q, header=False) == {"0": ["a", "1"], "1": ["b", "2"], "2": ["", "3"]}
    d = write(tmp_path, "a,a\n1,2\n", "dup.csv")
    with pytest.raises(ValueError, match="duplicate column name 'a'"):
        fastcsv.read_columns(d)
    assert fastcsv.read_columns(write(tmp_path, "", "empty.csv")) == {}


def big_text(seed, rows=60_000):
    """Several MiB of rows (more than one bulk batch, so a second thread
    scans ahead) mixing ASCII, Latin-1, BMP and astral text, one-character
    fields, empty fields, quotes and line ends inside fields."""
    rnd = random.Random(seed)
    pieces = ["alpha", "é", "café", "Zürich", "東京", "😀", "a😀é", "x", "", "ÿ",
              'say "hi"', "two\nlines", "comma, inside", "Ω", "\u0100", "ǅ"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=rnd.choice(["\n", "\r\n"]))
    for i in range(rows):
        w.writerow([str(i)] + ["".join(rnd.choice(pieces) for _ in range(rnd.randrange(4)))
                               for _ in range(rnd.randrange(1, 12))])
    return buf.getvalue()


def test_bulk_reads_of_many_batches_match_csv(tmp_path):
    text = big_text(7)
    p = write(tmp_path, text)
    assert p.stat().st_size > 3 << 20
    with open(p, newline="", encoding="utf-8") as f:
        want = list(csv.reader(f))
    got = fastcsv.read(p)
    assert got == want
    # Every string has its canonical kind (equality tests the kind first)
    # and one-character Latin-1 fields are CPython's cached objects.
    assert all(type(s) is str for row in got[:1000] for s in row)
    singles = [s for row in got for s in row if len(s) == 1 and ord(s) < 256]
    assert singles and all(s is chr(ord(s)) for s in singles[:1000])
    with open(p, "rb") as f:
        assert fastcsv.read(f) == want
    cols = fastcsv.read_columns(p, header=False)
    assert cols["0"] == [r[0] for r in want]
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC).writerows(
        [float(r[0]) / 7] + r[1:] + [len(r)] for r in want)
    q = write(tmp_path, buf.getvalue(), "nonnumeric.csv")
    nonnumeric = list(csv.reader(io.StringIO(buf.getvalue(), newline=""), quoting=csv.QUOTE_NONNUMERIC))
    assert fastcsv.read(q, quoting=csv.QUOTE_NONNUMERIC) == nonnumeric


def columns_of(rows, header):
    """read_columns' result, computed from csv's rows."""
    rows = [r for r in rows if r]
    if header:
        if not rows:
            return {}
        names, rows = rows[0], rows[1:]
    else:
        names = [str(i) for i in range(max((len(r) for r in rows), default=0))]
    return {n: [r[i] if i < len(r) else "" for r in rows] for i, n in enumerate(names)}


def test_read_columns_of_many_batches_matches_csv(tmp_path):
    text = big_text(11)
    p = write(tmp_path, text)
    with open(p, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert fastcsv.read_columns(p, header=False) == columns_of(rows, False)
    # A header as wide as the widest row; blank lines in between.
    width = max(len(r) for r in rows)
    head = ",".join(f"c{i}" for i in range(width)) + "\n"
    q = write(tmp_path, head + text.replace("\n1000", "\n\n1000"), "head.csv")
    with open(q, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert fastcsv.read_columns(q) == columns_of(rows, True)
    # A decoding error deep in the file is the first one in row order.
    data = text.encode()
    cut = data.index(b"\n45000,") + 1
    bad = data[:cut] + b"1,\xff,2\n" + data[cut:] + b"2,\xfe\n"
    r = write(tmp_path, bad, "bad.csv")
    with pytest.raises(UnicodeDecodeError, match=r"0xff.*field 1 of .*bad\.csv:\d+: record \d+, byte " + str(cut)):
        fastcsv.read_columns(r, header=False)


def test_bulk_read_errors_deep_in_a_large_file(tmp_path):
    text = big_text(8)
    data = text.encode()
    cut = data.index(b"\n45000,") + 1  # the start of a record (no piece has digits)
    bad = data[:cut] + b"1,caf\xe9 au lait,2\n" + data[cut:]
    p = write(tmp_path, bad, "bad.csv")
    with pytest.raises(UnicodeDecodeError, match=r"bad\.csv:\d+: record \d+, byte " + str(cut)):
        fastcsv.read(p)
    with pytest.raises(UnicodeDecodeError):
        fastcsv.read_columns(p, header=False)
    with open(p, newline="", encoding="utf-8", errors="replace") as f:
        want = list(csv.reader(f))
    assert fastcsv.read(p, errors="replace") == want
    q = write(tmp_path, data[:cut] + b'1,"a"b,2\n' + data[cut:], "strict.csv")
    with pytest.raises(csv.Error, match=r"strict\.csv:\d+: record \d+, byte \d+: .*'\,' expected after '\"'"):
        fastcsv.read(q, strict=True)


def test_row_reader_of_a_large_file_reads_ahead_exactly(tmp_path):
    # Larger than one batch, so rows are scanned ahead on a second thread:
    # rows and line_num after each row are still csv's.
    text = big_text(9)
    p = write(tmp_path, text)
    with open(p, newline="", encoding="utf-8") as f:
        want = drain(csv.reader(f), max_errors=1)
    assert drain(fastcsv.reader(p), max_errors=1) == want
    assert drain(fastcsv.DictReader(p, restkey="more")) == drain(
        csv.DictReader(io.StringIO(text, newline=""), restkey="more"))
    # Errors deep in the file, and reading on after them: the same rows,
    # messages and line numbers as the one-thread reader over a binary file.
    data = text.encode()
    bad = bytearray()
    for k, piece in enumerate(data.split(b"\n1000")):
        bad += (b"\n" if k else b"") + (b'x,"a"b,\x00\n1000' if k else b"") + piece
    q = write(tmp_path, bytes(bad), "bad.csv")
    with open(q, "rb") as f:
        want = drain(fastcsv.reader(f, strict=True), max_errors=100)
    assert sum(1 for e in want if e[0] == "error") >= 10
    assert drain(fastcsv.reader(q, strict=True), max_errors=100) == want


def thread_count():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_dropping_a_reader_stops_its_read_ahead_thread(tmp_path):
    p = write(tmp_path, big_text(10))
    before = thread_count()
    readers = [fastcsv.reader(p, threads=2) for _ in range(10)]
    for r in readers:
        next(r)
    assert thread_count() > before
    del r, readers
    deadline = time.monotonic() + 10
    while thread_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thread_count() == before
    # A reader read to its end ends its thread too.
    assert len(list(fastcsv.reader(p, threads=2))) == 60_000
    while thread_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thread_count() == before


def test_ctrl_c_interrupts_a_bulk_read(tmp_path):
    p = tmp_path / "big.csv"
    p.write_bytes(b"alpha,beta,gamma,delta\n" * 3_000_000)
    script = (
        "import sys, time, fastcsv\n"
        "print('go', flush=True)\n"
        "try:\n"
        "    while True:\n"
        "        fastcsv.read(sys.argv[1])\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    raise\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(p)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "go\n"
        time.sleep(0.5)  # well inside a read
        child.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        assert child.stdout.readline() == "interrupted\n"
        waited = time.monotonic() - t0
        _, err = child.communicate(timeout=10)
        # The read checks for signals between batches of at most 32K fields
        # (a few milliseconds of work); the
        # bound leaves room for dropping the partial result on a loaded
        # machine (without the checks, the loop never ends).
        assert waited < 2.0, f"took {waited:.2f} s"
    finally:
        child.kill()
        child.wait()
    assert "KeyboardInterrupt" in err


# --- DictReader ------------------------------------------------------------------------

def dict_rows(mod, src, **kw):
    r = mod.DictReader(src, **kw)
    out = []
    try:
        names = r.fieldnames
        out.append(names if names is None else list(names))
        for row in r:
            out.append((row, r.line_num))
    except Exception as e:  # noqa: BLE001 - compared with the stdlib's
        out.append((type(e), str(e)))
    return out


@pytest.mark.parametrize("kw", [
    {}, {"restkey": "rest", "restval": "?"}, {"fieldnames": ["x", "y"]},
    {"fieldnames": iter(["x", "y"])}, {"delimiter": ";"},
])
def test_dictreader_matches(kw):
    text = "a,b\r\n1,2\r\n\r\n3\r\n4,5,6,7\r\n"
    want = dict_rows(csv, io.StringIO(text, newline=""), **dict(kw))
    if "fieldnames" in kw and not isinstance(kw["fieldnames"], list):
        kw = dict(kw, fieldnames=iter(["x", "y"]))
    got = dict_rows(fastcsv, io.StringIO(text, newline=""), **kw)
    assert got == want


def test_dictreader_keys_are_header_objects_and_lazy(tmp_path):
    r = fastcsv.DictReader(["h1,h2\n", "1,2\n"])
    assert r.line_num == 0
    header = r.fieldnames
    row = next(r)
    assert [id(k) for k in row] == [id(k) for k in header]
    assert fastcsv.DictReader([]).fieldnames is None
    p = write(tmp_path, "h\n1\n")
    assert list(fastcsv.DictReader(p)) == [{"h": "1"}]


def test_rows_from_a_pipe_arrive_promptly():
    """A row is handed out as soon as its line arrives: the writer sends
    one line, then waits for a word on its stdin before sending the next.
    If the reader waited for more input, it would only return once the
    watchdog sends that word (after 20 s), which the test sees, rather
    than timing anything."""
    import threading
    writer_code = ("import sys\nprint('a,b', flush=True)\nsys.stdin.readline()\n"
                   "print('c,d')\n")
    child = subprocess.Popen([sys.executable, "-c", writer_code],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    released = threading.Event()

    def release():
        released.set()
        child.stdin.write(b"go\n")
        child.stdin.close()

    watchdog = threading.Timer(20, release)
    watchdog.start()
    try:
        r = fastcsv.reader(child.stdout)
        assert next(r) == ["a", "b"]
        assert not released.is_set(), "the first row waited for more input"
        watchdog.cancel()
        release()
        assert list(r) == [["c", "d"]]
    finally:
        watchdog.cancel()
        child.stdout.close()
        child.wait()


@pytest.mark.parametrize("kw", [
    {}, {"fieldnames": ("x", "y")}, {"fieldnames": ["k", "k", "z"]},
    {"restkey": "rest", "restval": 0}, {"fieldnames": []},
])
def test_dictreader_native_dicts_and_subclasses_match(kw):
    text = "a,b,c\r\n1,2\r\n\r\n\r\n3,4,5,6\r\n7\r\n"

    class Sub(fastcsv.DictReader):
        pass

    want = dict_rows(csv, io.StringIO(text, newline=""), **kw)
    assert dict_rows(fastcsv, io.StringIO(text, newline=""), **kw) == want

    class Mod:
        DictReader = Sub

    assert dict_rows(Mod, io.StringIO(text, newline=""), **kw) == want


def test_dictreader_line_num_after_blank_rows_matches():
    text = "h\r\n\r\n\r\nv\r\n"
    r, s = fastcsv.DictReader(io.StringIO(text, newline="")), csv.DictReader(io.StringIO(text, newline=""))
    assert next(r) == next(s) == {"h": "v"}
    assert r.line_num == s.line_num


@pytest.mark.skipif(sys.implementation.name != "cpython" or os.name != "posix"
                    or sys.maxsize < 2**32, reason="read from the state on 64-bit CPython/Unix")
def test_field_size_limit_is_read_from_csvs_state(limit):
    """Readers re-read the limit before every row; on 64-bit CPython it is
    read from _csv's module state, which must follow every change."""
    from fastcsv import _fastcsv
    for v in [131072, 5, 1, 0, -1, 2**31 + 7, 2**62, 10]:
        csv.field_size_limit(v)
        assert _fastcsv._limit_from_state() == v == fastcsv.field_size_limit()


@pytest.mark.parametrize("fieldnames", ["xyz", ("x", "y"), {"x": 1, "y": 2}.keys()])
def test_dictreader_with_field_names_of_other_types(fieldnames):
    """Names that are not exactly a list or tuple take csv's own code (a
    str is iterated character by character); a list subclass too."""
    class Names(list):
        pass

    text = "1,2\r\n\r\n3,4,5,6\r\n7\r\n"
    for names in [fieldnames, Names(fieldnames)]:
        want = dict_rows(csv, io.StringIO(text, newline=""), fieldnames=names, restkey="r")
        got = dict_rows(fastcsv, io.StringIO(text, newline=""), fieldnames=names, restkey="r")
        assert got == want


def test_compressed_binary_files_are_read_decompressed(tmp_path):
    # `gzip.GzipFile` (and bz2, lzma) have a `fileno()`: that of the
    # compressed file, which the fast path must not read.
    import bz2
    import gzip
    import lzma

    text = "id,name\n" + "".join(f'{i},"n,{i}"\n' for i in range(3000))
    want = list(csv.reader(io.StringIO(text)))
    for opener, ext in ((gzip.open, "gz"), (bz2.open, "bz2"), (lzma.open, "xz")):
        p = tmp_path / f"d.csv.{ext}"
        with opener(p, "wt", newline="") as f:
            f.write(text)
        with opener(p, "rb") as f:
            assert list(fastcsv.reader(f)) == want, ext
        with opener(p, "rb") as f:
            assert fastcsv.read(f) == want, ext


class _Oversized(io.RawIOBase):
    """A stream whose ``read(n)`` returns up to ``k`` bytes whatever ``n``."""

    def __init__(self, data: bytes, k: int) -> None:
        self.data, self.k, self.at = data, k, 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        b = self.data[self.at : self.at + self.k]
        self.at += len(b)
        return b


class _ReadOnly(io.BufferedIOBase):
    """Implements ``read`` only: the inherited ``read1`` raises."""

    def __init__(self, data: bytes) -> None:
        self.b = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        return self.b.read(n)


class _ByteArrays(io.RawIOBase):
    def __init__(self, data: bytes) -> None:
        self.b = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytearray:
        return bytearray(self.b.read(min(n, 777)))


def test_binary_streams_that_bend_the_contract():
    data = "".join(f'{i},"v,{i}",é\r\n' for i in range(30000)).encode()
    want = list(csv.reader(io.StringIO(data.decode(), newline="")))
    # More than asked for: nothing is lost.
    assert list(fastcsv.reader(_Oversized(data, 200_000))) == want
    assert fastcsv.read(_Oversized(data, 3)) == want
    assert list(fastcsv.reader(_ReadOnly(data))) == want
    assert list(fastcsv.reader(_ByteArrays(data))) == want


def test_reference_cycles_through_a_reader_are_collected():
    import gc
    import weakref

    class Table:
        def __init__(self) -> None:
            self.rows = fastcsv.reader(self.lines())

        def lines(self):
            yield "a,b\n"
            yield "c,d\n"

    refs = []
    for _ in range(50):
        t = Table()
        assert next(t.rows) == ["a", "b"]
        refs.append(weakref.ref(t))
        del t
    gc.collect()
    assert all(r() is None for r in refs)
    assert gc.is_tracked(fastcsv.reader(iter([])))


def test_path_like_giving_bytes(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("a,b\n1,2\n")

    class BytesPath:
        def __fspath__(self) -> bytes:
            return os.fsencode(p)

    assert list(fastcsv.reader(BytesPath())) == [["a", "b"], ["1", "2"]]
    assert fastcsv.read(BytesPath()) == [["a", "b"], ["1", "2"]]
    assert list(fastcsv.DictReader(BytesPath())) == [{"a": "1", "b": "2"}]


def test_threads_sharing_a_reader_take_rows_in_turn(tmp_path):
    import threading

    n = 20000
    p = tmp_path / "t.csv"
    p.write_text("".join(f"{i},x\n" for i in range(n)))
    f = open(p, newline="")  # noqa: SIM115 - closed below
    sources = {
        "path": lambda: fastcsv.reader(str(p)),
        "text": lambda: fastcsv.reader(f),
        "lines": lambda: fastcsv.reader(iter(p.read_text().splitlines(True))),
    }
    for name, make in sources.items():
        r = make()
        got: list = []
        errors: list = []

        def work() -> None:
            try:
                for row in r:
                    got.append(int(row[0]))
                    r.line_num  # noqa: B018 - read while others iterate
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [], name
        assert sorted(got) == list(range(n)), name
    f.close()


def test_a_reader_called_from_its_own_input():
    def lines():
        yield "a\n"
        yield next(r)[0] + "\n"

    r = fastcsv.reader(lines())
    assert next(r) == ["a"]
    with pytest.raises(ValueError):
        next(r)


@pytest.mark.parametrize("module", [csv, fastcsv])
def test_an_input_reads_its_readers_line_num_and_dialect(module):
    # csv.reader's input may look at the reader while it asks for a line:
    # line_num is then the count of lines taken before this one.
    seen = []

    def lines():
        for line in ["a,b\n", 'c,"d\n', 'e"\n', "", "f;g\n"]:
            seen.append((r.line_num, r.dialect.delimiter, r.dialect.quotechar))
            yield line

    r = module.reader(lines(), strict=False)
    rows = list(r)
    assert rows == [["a", "b"], ["c", "d\ne"], [], ["f;g"]]
    assert seen == [(k, ",", '"') for k in range(5)]
    assert r.line_num == 5


def test_a_reader_over_lines_shows_its_line_num_to_nested_readers():
    # Two readers, one's input reading the other and both looking at
    # themselves: each sees its own count.
    log = []

    def inner_lines():
        for line in ["1\n", "2\n", "3\n"]:
            log.append(("inner", inner.line_num))
            yield line

    def outer_lines():
        for row in inner:
            log.append(("outer", outer.line_num, inner.line_num))
            yield row[0] + ",x\n"

    inner = fastcsv.reader(inner_lines())
    outer = fastcsv.reader(outer_lines())
    assert list(outer) == [["1", "x"], ["2", "x"], ["3", "x"]]
    ci = csv.reader
    log_fast, log[:] = list(log), []
    inner = ci(inner_lines())
    outer = ci(outer_lines())
    assert list(outer) == [["1", "x"], ["2", "x"], ["3", "x"]]
    assert log_fast == log


def test_an_input_reads_the_line_num_of_a_reader_further_out():
    # The outer reader's input reads the inner reader, whose input looks
    # at the outer reader while both are inside `__next__`: the outer
    # reader's lines taken so far, as csv gives them, and its dialect.
    def run(module):
        seen = []

        def inner_lines():
            for line in ["1\n", "2\n", "3\n"]:
                seen.append((outer.line_num, outer.dialect.delimiter, inner.line_num))
                yield line

        def outer_lines():
            for row in inner:
                yield row[0] + ";y\n"

        inner = module.reader(inner_lines())
        outer = module.reader(outer_lines(), delimiter=";")
        return list(outer), seen

    rows, seen = run(fastcsv)
    assert rows == [["1", "y"], ["2", "y"], ["3", "y"]]
    assert (rows, seen) == run(csv)
    assert seen == [(0, ";", 0), (1, ";", 1), (2, ";", 2)]


def test_readers_in_greenlets_that_switch_inside_next():
    # Two greenlets share a thread and switch stacks while each is inside
    # a reader's `__next__` (its input switches to the other): the calls
    # end in another order than they began, and each input reads its
    # reader's `line_num` and dialect on the way, as with csv.
    greenlet = pytest.importorskip("greenlet")

    def run(module):
        log = []
        readers = {}
        other = {}

        def lines(name):
            for i in range(3):
                r = readers[name]
                log.append((name, r.line_num, r.dialect.delimiter))
                other[name].switch()
                yield f"{name}{i},{i}\n"

        def work(name):
            readers[name] = module.reader(lines(name))
            rows = list(readers[name])
            log.append((name, "done", rows, readers[name].line_num))

        a = greenlet.greenlet(lambda: work("a"))
        b = greenlet.greenlet(lambda: work("b"))
        other["a"], other["b"] = b, a
        a.switch()
        while not (a.dead and b.dead):
            (a if not a.dead else b).switch()
        return log

    got = run(fastcsv)
    assert got == run(csv)
    assert ("a", "done", [["a0", "0"], ["a1", "1"], ["a2", "2"]], 3) in got
    assert ("b", "done", [["b0", "0"], ["b1", "1"], ["b2", "2"]], 3) in got


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_threads_1_parses_on_the_calling_thread_alone(tmp_path):
    # The same rows, line numbers and errors as csv (and as the reader
    # that parses ahead), from a path, a binary file and a large text
    # file, with no second thread started.
    text = big_text(9)
    p = write(tmp_path, text)
    with open(p, newline="", encoding="utf-8") as f:
        want = drain(csv.reader(f), max_errors=1)
    before = thread_count()
    for src in ("path", "binary", "text"):
        with open(p, "rb") as b, open(p, newline="", encoding="utf-8") as t:
            arg = {"path": p, "binary": b, "text": t}[src]
            r = fastcsv.reader(arg, threads=1)
            first = next(r)
            assert not r._reads_ahead, src
            assert thread_count() <= before, src
            got = [(first, r.line_num)] + drain(r, max_errors=1)
            assert got == want, src
    assert drain(fastcsv.DictReader(p, threads=1)) == drain(
        csv.DictReader(io.StringIO(text, newline="")))
    # Errors deep in the file, and reading on after them.
    data = text.encode()
    bad = bytearray()
    for k, piece in enumerate(data.split(b"\n1000")):
        bad += (b"\n" if k else b"") + (b'x,"a"b,\x00\n1000' if k else b"") + piece
    q = write(tmp_path, bytes(bad), "bad.csv")
    bad_want = drain(fastcsv.reader(q, strict=True, threads=2), max_errors=100)
    assert sum(1 for e in bad_want if e[0] == "error") >= 10
    assert drain(fastcsv.reader(q, strict=True, threads=1), max_errors=100) == bad_want
    assert drain(fastcsv.reader(q, strict=True), max_errors=100) == bad_want
    # threads=2 parses ahead, a large text file's reader from the start.
    r = fastcsv.reader(p, threads=2)
    next(r)
    assert r._reads_ahead
    with open(p, newline="", encoding="utf-8") as t:
        assert fastcsv.reader(t, threads=2)._reads_ahead
        assert drain(fastcsv.reader(t), max_errors=1) == want
    # By default, a path is parsed ahead or not as it pays: the same rows.
    assert drain(fastcsv.reader(p), max_errors=1) == want


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_a_slow_loop_keeps_the_default_reader_on_one_thread(tmp_path):
    # 100 fields a row: a batch (32 Ki fields at most) is about 330 rows,
    # scanned in a millisecond or so, while the loop sleeps 0.2 ms a row:
    # a second thread would save nothing, so none starts.
    rows = [[f"{r}.{c}" for c in range(100)] for r in range(3_000)]
    p = write(tmp_path, "".join(",".join(row) + "\r\n" for row in rows))
    before = thread_count()
    got = []
    r = fastcsv.reader(p)
    for row in r:
        got.append(row)
        time.sleep(0.0002)
        assert thread_count() <= before
    assert not r._reads_ahead
    assert got == rows


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-2, ValueError), (True, TypeError),
                                      (1.0, TypeError), ("2", TypeError)])
def test_threads_must_be_a_positive_int(tmp_path, bad, exc):
    p = write(tmp_path, "a,b\n1,2\n")
    with pytest.raises(exc, match="threads"):
        fastcsv.reader(p, threads=bad)
    with pytest.raises(exc, match="threads"):
        fastcsv.reader(["a,b\r\n"], threads=bad)
