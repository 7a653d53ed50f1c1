"""Streams that grow after the reader reached their end.

`csv.reader` asks its iterator for a line on every `next()`, so once a
text file or `StringIO` is written to after the end (a log file followed as
`tail -f` does, a `StringIO` written to and sought back), the next call
returns the new rows. The native text path reads ahead in chunks and must
still do the same: rows, errors and `line_num`, a record cut short by the
first end included (it was returned, or failed with strict, at that end;
the new text starts a new record)."""

import csv
import io
from unittest import mock

import fastcsv
import pytest
from conftest import drain
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_differential import dialect_st, text_st, valid

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Each case: the text at first, then what is appended after each end. The
# first line is complete, so that the native text path is taken.
CASES = {
    "lines": ["h\na\n", "b\n", "c,d\n"],
    "nothing-appended": ["h\na\n", "", "", "b\n"],
    "inside-a-quoted-field": ['h\na,"b\n', 'c"\n', "d\n"],
    "quoted-field-without-line-end": ['h\na,"b', 'c",d\n', "e\n"],
    "quote-after-a-cut": ['h\n"a"', '"b"\n'],
    "partial-last-line": ["h\na,b", "c\n", "d", "e\n"],
    "cr-then-lf": ["h\na\r", "\nb\r\n", "\r", "\n"],
    "non-ascii": ["h\né,\"ü", "ö\"\n€\n"],
}

DIALECTS = [{}, {"strict": True}, {"escapechar": "\\"}, {"escapechar": "\\", "strict": True}]


def follow(make_reader, parts, grow):
    """What a reader gives at each end: drained, then grown by the next
    part (`grow(part)`), then drained again, and so on, with `line_num`
    after each step (see `drain`). Returns the reader's path at first (its
    `_source` and `_batched`; `None` for csv's), the reader and that."""
    r = make_reader()
    inner = r.reader if isinstance(r, csv.DictReader) else r
    start = (getattr(inner, "_source", None), getattr(inner, "_batched", None))
    out = [drain(r, max_errors=50)]
    for part in parts[1:]:
        grow(part)
        out.append(drain(r, max_errors=50))
    return start, r, out


def on_stringio(mod, parts, newline, kw):
    f = io.StringIO(parts[0], newline=newline)

    def grow(part):
        pos = f.tell()
        f.write(part)
        f.seek(pos)

    return follow(lambda: mod.reader(f, **kw), parts, grow)


def on_file(mod, path, parts, newline, kw, dict_reader=False, encoding="utf-8"):
    """A file that another writer appends to (the parts' UTF-8, read in
    `encoding`)."""
    path.write_bytes(parts[0].encode())
    make = mod.DictReader if dict_reader else mod.reader
    with open(path, newline=newline, encoding=encoding) as f, open(path, "ab") as w:
        def grow(part):
            w.write(part.encode())
            w.flush()

        return follow(lambda: make(f, **kw), parts, grow)


def on_same_file(mod, path, parts, newline, kw, encoding="utf-8"):
    """A file written through the object the reader reads, sought back."""
    path.write_bytes(parts[0].encode(encoding, "replace"))
    with open(path, "r+", newline=newline, encoding=encoding, errors="replace") as f:
        def grow(part):
            pos = f.tell()
            f.write(part)
            f.flush()
            f.seek(pos)

        return follow(lambda: mod.reader(f, **kw), parts, grow)


@pytest.mark.parametrize("kw", DIALECTS)
@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("case", sorted(CASES))
def test_stringio_written_after_the_end(case, newline, kw):
    parts = CASES[case]
    start, _, got = on_stringio(fastcsv, parts, newline, kw)
    assert start == ("text", False)
    assert got == on_stringio(csv, parts, newline, kw)[2]


ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "cp1252", "koi8-r"]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("ahead", [False, True])
@pytest.mark.parametrize("kw", DIALECTS)
@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("case", sorted(CASES))
def test_file_appended_after_the_end(tmp_path, case, newline, kw, ahead, encoding):
    """Read in raw mode, and with the read-ahead thread (normally for files
    with more than 1 MiB left), which ends at the end of the text: the
    reader then goes on row by row."""
    parts = CASES[case]
    with mock.patch.object(fastcsv, "_AHEAD_BYTES", -1 if ahead else fastcsv._AHEAD_BYTES):
        start, r, got = on_file(fastcsv, tmp_path / "fast.csv", parts, newline, kw,
                                encoding=encoding)
    assert start == ("text-raw", ahead)
    assert not r._batched
    assert got == on_file(csv, tmp_path / "csv.csv", parts, newline, kw, encoding=encoding)[2]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("kw", DIALECTS)
@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("case", sorted(CASES))
def test_file_written_through_the_reader_s_file(tmp_path, case, newline, kw, encoding):
    parts = CASES[case]
    start, _, got = on_same_file(fastcsv, tmp_path / "fast.csv", parts, newline, kw, encoding)
    # (A writable utf-8-sig file is read through read(): see _text_plan.)
    assert start == ("text" if encoding == "utf-8-sig" else "text-raw", False)
    assert got == on_same_file(csv, tmp_path / "csv.csv", parts, newline, kw, encoding)[2]


def test_a_large_file_appended_after_the_end(tmp_path):
    """A file over 1 MiB, read ahead, cut inside a quoted field."""
    head = "".join(f'{i},"v{i}\nw"\n' for i in range(80_000))
    parts = [head + 'x,"y', 'z"\n', "1,2\n", "3,"]
    for kw in [{}, {"strict": True}]:
        start, r, got = on_file(fastcsv, tmp_path / "fast.csv", parts, "", kw)
        assert start == ("text-raw", True)
        assert not r._batched
        assert got == on_file(csv, tmp_path / "csv.csv", parts, "", kw)[2]
        assert [len(g) for g in got] == [80_001, 1, 1, 1]


def test_the_fuzzer_s_example():
    f = io.StringIO("a\n", newline="")
    r = fastcsv.reader(f)
    assert list(r) == [["a"]]
    p = f.tell()
    f.write("b\n")
    f.seek(p)
    assert list(r) == [["b"]]
    assert r.line_num == 2


def test_strict_mode_at_a_cut_record():
    """csv raises at the end inside a quoted field, and the record is gone:
    what is appended starts a new one."""
    def steps(mod):
        f = io.StringIO('h\na,"b\n', newline="")
        r = mod.reader(f, strict=True)
        out = [next(r), r.line_num]
        with pytest.raises(csv.Error, match="unexpected end of data"):
            next(r)
        out.append(r.line_num)
        with pytest.raises(StopIteration):
            next(r)
        f.write('c"\n')
        f.seek(len('h\na,"b\n'))
        out += [next(r), r.line_num]
        return out

    assert steps(fastcsv) == steps(csv) == [["h"], 1, 2, ['c"'], 3]


@pytest.mark.parametrize("ahead", [False, True])
def test_dictreader_over_a_growing_file(tmp_path, ahead):
    cases = [["a,b\n", "1,2\n", "\n3", ",4,5\n", "6\n"],
             ['a,b\n1,"x', 'y"\n', "2\n"]]
    with mock.patch.object(fastcsv, "_AHEAD_BYTES", -1 if ahead else fastcsv._AHEAD_BYTES):
        for parts in cases:
            kw = {"restkey": "more", "restval": "-"}
            start, _, got = on_file(fastcsv, tmp_path / "fast.csv", parts, "", kw,
                                    dict_reader=True)
            assert start == ("text-raw", ahead)
            want = on_file(csv, tmp_path / "csv.csv", parts, "", kw, dict_reader=True)[2]
            assert got == want


def test_reader_sought_back_reads_again(tmp_path):
    """After the end, the reader reads from where the file is: here the
    start again, so the rows come again (line_num goes on)."""
    def run(mod):
        (tmp_path / "data.csv").write_bytes(b"h\r\na,b\r\n")
        with open(tmp_path / "data.csv", newline="") as f:
            r = mod.reader(f)
            first = drain(r)
            f.seek(0)
            return first, drain(r)

    assert run(fastcsv) == run(csv)


def test_ended_iterables_stay_ended():
    """Lists and generators: once exhausted, Python's iterators stay so."""
    for mod in (csv, fastcsv):
        lines = ["a\n"]
        r = mod.reader(lines)
        assert list(r) == [["a"]]
        lines.append("b\n")
        assert list(r) == []

        def gen():
            yield "a\n"

        r = mod.reader(gen())
        assert list(r) == [["a"]]
        assert list(r) == []
        assert r.line_num == 1


# The first part holds a line end (built in rather than filtered for:
# with `valid` filtering too, Hypothesis's health check failed now and
# then for too many inputs thrown away).
first_part_st = st.tuples(text_st, st.sampled_from(["\n", "\r\n", "\r"]), text_st).map("".join)


@SETTINGS
@given(first_part_st, st.lists(text_st, min_size=1, max_size=3), dialect_st,
       st.sampled_from(["", None]), st.booleans())
def test_growing_streams_match_csv(tmp_path_factory, first, rest, d, newline, ahead):
    assume(valid(d))
    parts = [first, *rest]
    tmp = tmp_path_factory.mktemp("grow")
    assert on_stringio(fastcsv, parts, newline, d)[2] == on_stringio(csv, parts, newline, d)[2]
    with mock.patch.object(fastcsv, "_AHEAD_BYTES", -1 if ahead else fastcsv._AHEAD_BYTES):
        got = on_file(fastcsv, tmp / "fast.csv", parts, newline, d)[2]
    assert got == on_file(csv, tmp / "csv.csv", parts, newline, d)[2]


def closed_midway(mod, make_stream, rows_before, dict_reader=False):
    """Rows until `rows_before` rows were taken (`None`: all of them, to
    the end), then the stream is closed: what each of three more calls
    gives (a row, the end or the exception's class and message) and
    `line_num` after them."""
    f = make_stream()
    r = (mod.DictReader if dict_reader else mod.reader)(f)
    got = list(r) if rows_before is None else [next(r) for _ in range(rows_before)]
    f.close()
    for _ in range(3):
        try:
            got.append(next(r))
        except StopIteration:
            got.append("end")
        except Exception as e:  # noqa: BLE001 - compared with csv's
            got.append((type(e).__name__, str(e)))
    inner = r.reader if dict_reader else r
    return got, inner.line_num


@pytest.mark.parametrize("kind", ["file", "latin-1", "cp1252", "stringio"])
@pytest.mark.parametrize("ahead", [False, True], ids=["row-by-row", "read-ahead"])
@pytest.mark.parametrize("rows_before", [0, 1, 5, 200, None])
@pytest.mark.parametrize("dict_reader", [False, True], ids=["reader", "DictReader"])
def test_a_stream_closed_midway_raises_as_csv(tmp_path, kind, ahead, rows_before, dict_reader):
    """`csv.reader` asks the stream for a line on every call: once the file
    or `StringIO` is closed, every call raises the stream's own
    `ValueError` (the two word it differently), however many rows the
    native text path had read ahead; at the end too."""
    text = "h,i\n" + "".join(f"{k},\"x\nyé\"\n" for k in range(200))
    path = tmp_path / "f.csv"
    path.write_text(text, encoding="latin-1" if kind == "latin-1" else "utf-8")

    def make_stream():
        if kind == "file":
            return open(path, newline="", encoding="utf-8")
        if kind in ("latin-1", "cp1252"):
            return open(path, newline="", encoding=kind)
        return io.StringIO(text, newline="")

    if dict_reader and rows_before == 200:
        rows_before = 199  # the header is not a row
    want = closed_midway(csv, make_stream, rows_before, dict_reader)
    with mock.patch.object(fastcsv, "_AHEAD_BYTES", -1 if ahead else fastcsv._AHEAD_BYTES):
        got = closed_midway(fastcsv, make_stream, rows_before, dict_reader)
    assert got == want
    closed = "I/O operation on closed file" + ("." if kind != "stringio" else "")
    assert ("ValueError", closed) in got[0]
