"""Where a text stream is left when a reader over it goes away early.

`csv.reader` takes one line at a time from its file, so the file's own
position is always right after the last line of the last row returned: a
second reader, `f.read()`, `f.readline()` or `for line in f` go on at the
next row. fastcsv reads a seekable text stream ahead in chunks (raw bytes
from a UTF-8 file's buffer, `read(n)` text, or a read-ahead thread for a
large file), and puts the stream back where `csv` would have left it when
the reader is dropped: `next(fastcsv.reader(f))`, a `for` loop over a
temporary reader left by `break` (or by an exception), a reader dropped
after a `csv.Error` (then after the line the error was raised on, as
`csv`). Every test compares with the stdlib `csv` module doing the same.

A reader still alive (`r = fastcsv.reader(f); next(r); f.read()`) leaves
the file ahead: that case is documented, not tested here.
"""

import csv
import gc
import io
import os
import pathlib
import tempfile

import fastcsv
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_differential import BYTE_PIECES, dialect_st, text_st, valid

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Rows in the small (a few KB), medium (~200 KB) and large (~4 MB: read by
# a second thread, more than 1 MiB left after the header) files.
SIZES = {"small": 60, "medium": 6_000, "large": 120_000}


def make_text(n, crlf=False, quoted=False, mark=None):
    """A header and `n` rows; row `mark` (default: the middle one) starts
    with MARK. With `quoted`, every seventh row has a quoted field with a
    line end inside, and some have a doubled quote."""
    nl = "\r\n" if crlf else "\n"
    mark = n // 2 if mark is None else mark
    out = ["id,name,value" + nl]
    for i in range(n):
        if i == mark:
            out.append(f"MARK,{i},x" + nl)
        elif quoted and i % 7 == 3:
            out.append(f'{i},"multi{nl}line é {i}","a ""q"" b"' + nl)
        elif i % 11 == 5:
            out.append(nl)  # a blank line: a row ([]) in csv
        else:
            out.append(f"{i},name é {i},{i * 7}" + nl)
    return "".join(out)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(size, crlf, quoted) -> path of the file, written once."""
    made = {}
    base = tmp_path_factory.mktemp("position")

    def get(size, crlf, quoted):
        key = (size, crlf, quoted)
        if key not in made:
            p = base / f"{size}-{int(crlf)}-{int(quoted)}.csv"
            p.write_bytes(make_text(SIZES[size], crlf, quoted).encode())
            made[key] = p
        return made[key]

    return get


def opener(kind, path, newline):
    """A function making a new stream of that kind over the file's text."""
    if kind == "file":
        return lambda: open(path, newline=newline, encoding="utf-8")
    if kind == "utf-8-sig":
        # The same text after a BOM, which the decoder drops.
        bom = path.with_name(path.stem + "-bom.csv")
        bom.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
        return lambda: open(bom, newline=newline, encoding="utf-8-sig")
    if kind in ("latin-1", "cp1252", "cp1250", "koi8-r"):
        # Read raw too, each byte a character (of one to three bytes of
        # UTF-8: the file's UTF-8 read as Latin-1 or cp1252).
        return lambda: open(path, newline=newline, encoding=kind)
    text = path.read_bytes().decode()
    return lambda: io.StringIO(text, newline=newline)


def header_then_rows(mod, make):
    with make() as f:
        header = next(mod.reader(f))
        return header, list(csv.reader(f))


def header_then_read(mod, make):
    with make() as f:
        header = next(mod.reader(f))
        return header, f.read()


def break_at_mark(mod, make):
    with make() as f:
        seen = 0
        for row in mod.reader(f):
            seen += 1
            if row and row[0] == "MARK":
                break
        return seen, f.readline(), f.read()


def two_readers(mod, make):
    """Two temporary readers one after the other, then DictReader."""
    with make() as f:
        header = next(mod.reader(f))
        first = next(mod.reader(f))
        rest = list(mod.DictReader(f, fieldnames=header))
        return header, first, rest


def lines_after(mod, make):
    with make() as f:
        next(mod.reader(f))
        return [line for _, line in zip(range(5), f)]


OPS = [header_then_rows, header_then_read, break_at_mark, two_readers, lines_after]


def cases():
    """Every combination; the large file (~4 MB, slow to read with csv)
    with every operation as a UTF-8 file (read ahead by a second thread),
    with the marker only as the other kinds."""
    for size in SIZES:
        for crlf in (False, True):
            for quoted in (False, True):
                for newline in ("", None):
                    for kind in ("file", "utf-8-sig", "latin-1", "cp1252", "stringio"):
                        for op in OPS:
                            if size == "large" and kind != "file" and op is not break_at_mark:
                                continue
                            name = "-".join([
                                size, "crlf" if crlf else "lf", "quoted" if quoted else "plain",
                                "nl-empty" if newline == "" else "nl-none", kind, op.__name__,
                            ])
                            yield pytest.param(size, crlf, quoted, newline, kind, op, id=name)


@pytest.mark.parametrize("size,crlf,quoted,newline,kind,op", list(cases()))
def test_position_after_reader_goes_away(files, size, crlf, quoted, newline, kind, op):
    make = opener(kind, files(size, crlf, quoted), newline)
    assert op(fastcsv, make) == op(csv, make)


def test_large_file_reads_ahead(files):
    """The large files do exercise the read-ahead path."""
    path = files("large", False, False)
    with open(path, newline="", encoding="utf-8") as f:
        r = fastcsv.reader(f)
        assert r._batched
        assert next(r) == ["id", "name", "value"]
        del r
        assert next(csv.reader(f)) == ["0", "name é 0", "0"]


@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("kind", ["file", "stringio"])
def test_cr_at_chunk_ends(tmp_path, newline, kind):
    """A row ending in CRLF whose CR is the last character read (at the end
    of a chunk): its LF still belongs to it. The marker row's CR is put at
    each offset around the chunk sizes in turn."""
    for end in [8191, 8192, 8193, 16383, 16384, 16385, 65535, 65536, 65537]:
        head = "h\r\n"
        filler_len = end - len(head) - len("MARK\r")
        # Filler rows of 10 characters with CRLF, then one to make up the rest.
        filler = "abcdefgh\r\n" * (filler_len // 10)
        rest = filler_len - len(filler)
        if rest:
            filler += "z" * max(rest - 2, 0) + "\r\n"[: min(rest, 2)]
            if rest == 1:
                filler = filler[:-1] + "y\r\n"  # keep every line ended
        text = head + filler + "MARK\r\nafter\r\nmore\r\n"
        path = tmp_path / "cr.csv"
        path.write_bytes(text.encode())
        make = opener(kind, path, newline)
        assert break_at_mark(fastcsv, make) == break_at_mark(csv, make), end


def test_surrogates(tmp_path):
    """Bytes that are not UTF-8 read with surrogateescape: raw mode hands
    over to read(), whose text has lone surrogates (one character each)."""
    data = b"".join(
        b"%d,\xff\xfe v\xe9 %d\n" % (i, i) if i % 3 == 0 else b"%d,caf\xc3\xa9,%d\n" % (i, i)
        for i in range(3000)
    )
    data = data.replace(b"1500,", b"MARK,")
    path = tmp_path / "bad.csv"
    path.write_bytes(b"id,v\n" + data)
    for newline in ["", None]:
        make = lambda: open(path, newline=newline, encoding="utf-8", errors="surrogateescape")  # noqa: E731
        for op in OPS:
            assert op(fastcsv, make) == op(csv, make), (newline, op.__name__)


def strict_error_then_read(mod, make, temporary):
    """Rows up to a csv.Error (strict mode), the reader dropped, then the
    rest of the file."""
    with make() as f:
        rows = []
        try:
            if temporary:
                for row in mod.reader(f, strict=True):
                    rows.append(row)
            else:
                r = mod.reader(f, strict=True)
                try:
                    for row in r:
                        rows.append(row)
                finally:
                    del r
        except csv.Error as e:
            rows.append(("error", str(e)))
        return rows, f.readline(), f.read()


@pytest.mark.parametrize("temporary", [True, False])
@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize(
    "size,kind",
    [("small", "file"), ("small", "utf-8-sig"), ("small", "latin-1"), ("small", "cp1252"),
     ("small", "stringio"),
     ("large", "file")],
)
def test_after_strict_error(tmp_path, size, crlf, newline, kind, temporary):
    """After a csv.Error the stream is left after the line the error was
    raised on (csv has consumed it), here in a record over two lines."""
    nl = "\r\n" if crlf else "\n"
    n = SIZES[size]
    text = make_text(n, crlf, quoted=True, mark=n + 1)
    lines = text.split(nl)
    bad = f'BAD,"two{nl}lines"x,tail{nl}'
    at = len(nl.join(lines[: len(lines) // 2])) + len(nl)
    text = text[:at] + bad + text[at:]
    path = tmp_path / "strict.csv"
    path.write_bytes(text.encode())
    make = opener(kind, path, newline)
    got = strict_error_then_read(fastcsv, make, temporary)
    assert got == strict_error_then_read(csv, make, temporary)
    assert got[0][-1][0] == "error"


@pytest.mark.parametrize("size,kind", [("small", "file"), ("small", "stringio"), ("large", "file")])
def test_after_field_limit_error(tmp_path, size, kind):
    """A field over field_size_limit(): with a large file the read-ahead
    reader turns row by row from that row on (its byte offsets then start
    inside the text)."""
    n = SIZES[size]
    text = make_text(n, quoted=True, mark=n + 1)
    at = text.index("\n", len(text) // 2) + 1
    text = text[:at] + "LONG," + "y" * 500 + ",z\n" + text[at:]
    path = tmp_path / "limit.csv"
    path.write_bytes(text.encode())
    make = opener(kind, path, "")
    old = csv.field_size_limit(200)
    try:
        got = strict_error_then_read(fastcsv, make, True)
        want = strict_error_then_read(csv, make, True)
    finally:
        csv.field_size_limit(old)
    assert got == want
    assert got[0][-1][0] == "error"


def test_dict_reader_break(files):
    for kind in ["file", "stringio"]:
        make = opener(kind, files("medium", True, True), "")

        def run(mod):
            with make() as f:
                for d in mod.DictReader(f):
                    if d["id"] == "MARK":
                        break
                return f.read()

        assert run(fastcsv) == run(csv), kind


def test_exception_in_flight_is_kept(files):
    """The reader goes away while an exception unwinds the loop that held
    it: the stream is put back and the exception comes through unchanged."""
    make = opener("file", files("medium", False, True), "")

    def run(mod):
        with make() as f:
            with pytest.raises(KeyError, match="stop here"):
                for row in mod.reader(f):
                    if row and row[0] == "MARK":
                        raise KeyError("stop here")
            gc.collect()
            return f.read()

    assert run(fastcsv) == run(csv)


def test_not_moved_back_when_caller_moved_the_stream(files):
    """A stream the caller moved while the reader was alive stays where the
    caller put it."""
    for kind in ["file", "utf-8-sig", "latin-1", "cp1252", "koi8-r", "stringio"]:
        with opener(kind, files("medium", False, False), "")() as f:
            r = fastcsv.reader(f)
            next(r)
            next(r)
            f.seek(0)
            del r
            assert f.readline() == "id,name,value\n", kind


def test_closed_stream_is_left_alone(files):
    for kind in ["file", "stringio"]:
        f = opener(kind, files("small", False, False), "")()
        r = fastcsv.reader(f)
        next(r)
        f.close()
        del r  # no exception, nothing printed


def test_ended_reader_leaves_the_end(files):
    for kind in ["file", "stringio"]:
        make = opener(kind, files("small", True, False), "")
        with make() as f, make() as g:
            assert list(fastcsv.reader(f)) == list(csv.reader(g))
            assert f.read() == ""


def test_bound_reader_is_ahead_until_dropped(files):
    """The documented limit: while the reader lives, the stream is ahead of
    the rows returned; dropping it puts the stream back."""
    with opener("file", files("small", False, False), "")() as f:
        r = fastcsv.reader(f)
        next(r)
        pos = f.tell()
        del r
        assert f.tell() < pos
        assert f.readline() == "0,name é 0,0\n"


def drop_after(mod, make, d, k):
    """`k` steps of a reader (rows, or the error or end that stops it), the
    reader dropped, then the rest of the stream."""
    with make() as f:
        out = []
        r = mod.reader(f, **d)
        try:
            for _ in range(k):
                out.append(next(r))
        except StopIteration:
            out.append("end")
        except (csv.Error, ValueError) as e:
            # ValueError: a failed float() with QUOTE_NONNUMERIC.
            out.append(("error", type(e).__name__, str(e)))
        del r
        return out, f.read()


@SETTINGS
@given(
    text_st,
    dialect_st,
    st.sampled_from(["", None]),
    st.sampled_from(["file", "utf-8-sig", "latin-1", "cp1252", "cp1250", "koi8-r", "stringio"]),
    st.integers(0, 12),
)
def test_position_matches_csv_random(text, d, newline, kind, k):
    """Random text and dialects (those of the differential tests), the
    reader dropped after `k` steps: the rest of the stream is csv's."""
    assume(valid(d))
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode())
        make = opener(kind, pathlib.Path(path), newline)
        assert drop_after(fastcsv, make, d, k) == drop_after(csv, make, d, k)
    finally:
        os.unlink(path)
        bom = pathlib.Path(path).with_name(pathlib.Path(path).stem + "-bom.csv")
        bom.unlink(missing_ok=True)


@SETTINGS
@given(
    st.lists(st.sampled_from(BYTE_PIECES), max_size=40).map(b"".join),
    st.sampled_from(["", None]),
    st.sampled_from(["replace", "surrogateescape"]),
    st.sampled_from([{}, {"strict": True}]),
    st.integers(0, 12),
    st.sampled_from(["utf-8", "latin-1", "cp1252"]),
)
def test_position_matches_csv_random_bytes(data, newline, errors, d, k, encoding):
    """Random bytes, not all UTF-8 (nor all cp1252), read with an error
    handler: raw mode hands over to read(), and lone surrogates count as
    one character; in Latin-1 and cp1252, each byte is one."""
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        def make():
            return open(path, newline=newline, encoding=encoding, errors=errors)
        assert drop_after(fastcsv, make, d, k) == drop_after(csv, make, d, k)
    finally:
        os.unlink(path)
