"""Inputs a careful user tries, found by the Python parity hunt: nothing
may lose rows silently, crash or hang."""

from __future__ import annotations

import io

import fastcsv
import pytest


class SizeBlind:
    """A duck-typed binary stream whose read(n) ignores n (a generator of
    chunks behind a read method), as simple wrappers are written."""

    def __init__(self, chunks):
        self.chunks = iter(chunks)

    def read(self, n=-1):
        return next(self.chunks, b"")


CHUNKS = [b"a,b\n1,", b"2\n3,4\n"]
ROWS = [["a", "b"], ["1", "2"], ["3", "4"]]


def test_a_stream_that_ignores_the_size_keeps_its_first_chunk():
    # Telling a binary stream from a text one reads 0 bytes; a stream that
    # ignored the size gave its first chunk there, and it was dropped.
    assert fastcsv.read(SizeBlind(CHUNKS)) == ROWS
    assert list(fastcsv.reader(SizeBlind(CHUNKS))) == ROWS
    assert list(fastcsv.reader(SizeBlind(CHUNKS), buffer_size=1)) == ROWS
    assert fastcsv.read_columns(SizeBlind(CHUNKS)) == {"a": ["1", "3"], "b": ["2", "4"]}
    assert [dict(r) for r in fastcsv.DictReader(SizeBlind(CHUNKS))] == [
        {"a": "1", "b": "2"},
        {"a": "3", "b": "4"},
    ]


def test_a_stream_that_ignores_the_size_through_read_arrow():
    pa = pytest.importorskip("pyarrow")
    t = pa.table(fastcsv.read_arrow(SizeBlind(CHUNKS)))
    assert t.to_pydict() == {"a": ["1", "3"], "b": ["2", "4"]}
    t = pa.table(fastcsv.read_arrow(SizeBlind(CHUNKS), usecols=["b"]))
    assert t.to_pydict() == {"b": ["2", "4"]}


def test_the_first_chunk_alone():
    assert fastcsv.read(SizeBlind([b"a,b\n"])) == [["a", "b"]]
    assert fastcsv.read(SizeBlind([])) == []


@pytest.mark.parametrize("source", [["x\n", "a,b\n", "1,2\n"], b"x\na,b\n1,2\n"])
@pytest.mark.parametrize("header", [1, 0, None, "yes"])
def test_read_columns_header_is_a_bool_for_every_input(source, header):
    # An iterable of lines took any truthy header (header=1 read "x" as
    # the header, not pandas' row 1); native inputs refused it.
    with pytest.raises(TypeError, match="header"):
        fastcsv.read_columns(source, header=header)


def test_resolve_refuses_summaries_that_stop_short_of_the_end(tmp_path):
    # Summaries missing the last range resolved to parts that end early:
    # their rows were all a reader of the parts gave, the rest lost.
    p = tmp_path / "f.csv"
    p.write_bytes(b'a,b\n1,"x\ny"\n3,4\n')
    n = p.stat().st_size
    first = fastcsv.summarize(p, 0, 7)
    with pytest.raises(ValueError, match=r"cover bytes 0\.\.7 of .*f\.csv, which has 16"):
        fastcsv.resolve(p, [first])
    with pytest.raises(ValueError, match=r"cover bytes 0\.\.0 .* which has 16"):
        fastcsv.resolve(p, [])
    parts = fastcsv.resolve(p, [first, fastcsv.summarize(p, 7, n)])
    assert [r for part in parts for r in fastcsv.read(part)] == fastcsv.read(p)
    e = tmp_path / "e.csv"
    e.write_bytes(b"")
    assert fastcsv.resolve(e, []) == []


@pytest.mark.parametrize("size", [0, -1, -(1 << 70)])
def test_a_buffer_size_below_one_is_a_value_error(tmp_path, size):
    # A negative size was an OverflowError from the conversion to usize;
    # the documented error (and that of 0) is ValueError.
    p = tmp_path / "f.csv"
    p.write_text("a\n")
    with pytest.raises(ValueError, match="buffer_size must be positive"):
        fastcsv.reader(p, buffer_size=size)
    with pytest.raises(ValueError, match="buffer_size must be positive"):
        fastcsv.read(b"a\n", buffer_size=size)


DATA = b"".join(b"%d,row\n" % i for i in range(20000))


class Flaky(io.RawIOBase):
    """A seekable file whose read fails once, at byte `fail_at`, after a
    short read up to it (an interrupted read, a Ctrl-C while blocked)."""

    def __init__(self, fail_at, exc):
        self.pos, self.fail_at, self.exc, self.failed = 0, fail_at, exc, False

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        self.pos = [off, self.pos + off, len(DATA) + off][whence]
        return self.pos

    def readinto(self, b):
        if self.pos >= self.fail_at and not self.failed:
            self.failed = True
            raise self.exc
        end = len(DATA) if self.failed else self.fail_at
        n = min(len(b), end - self.pos)
        b[:n] = DATA[self.pos : self.pos + n]
        self.pos += n
        return n


def events(r):
    """Rows read, and errors met, by a caller that goes on after them."""
    out, rows = [], 0
    while True:
        try:
            next(r)
            rows += 1
        except StopIteration:
            return out + [("end", rows)]
        except (OSError, KeyboardInterrupt) as e:
            out.append((type(e).__name__, rows))


def text(fail_at, exc, encoding="utf-8"):
    return io.TextIOWrapper(io.BufferedReader(Flaky(fail_at, exc)), encoding=encoding, newline="")


@pytest.mark.parametrize("exc", [OSError(5, "EIO"), KeyboardInterrupt()], ids=["oserror", "ctrl-c"])
@pytest.mark.parametrize("fail_at", [70_000, 150_000])
def test_reading_goes_on_after_the_file_s_read_raised(exc, fail_at):
    # csv asks the file for the next line on every call: after its read
    # raised, the next call reads on. fastcsv's readers ended there (every
    # later call was the end), and a non-UTF-8 text file lost the text the
    # failed read(n) had decoded.
    import csv

    want = events(csv.reader(text(fail_at, exc)))
    assert want[-1] == ("end", 20000) and len(want) == 2
    assert events(fastcsv.reader(text(fail_at, exc))) == want
    assert events(fastcsv.DictReader(text(fail_at, exc), ["a", "b"])) == want
    assert events(fastcsv.reader(io.BufferedReader(Flaky(fail_at, exc)))) == want
    assert events(fastcsv.reader(Flaky(fail_at, exc))) == want
    # Latin-1 and cp1252 files are read raw from their buffer too.
    for encoding in ("latin-1", "cp1252"):
        assert events(fastcsv.reader(text(fail_at, exc, encoding))) == want, encoding
    # Read ahead, a file decoded by its wrapper raises a few rows early.
    got = events(fastcsv.reader(text(fail_at, exc, "iso8859-15")))
    assert got[0][0] == want[0][0] and got[0][1] <= want[0][1] and got[1:] == want[1:]
