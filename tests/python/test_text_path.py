"""Text files read natively: an io.TextIOWrapper or io.StringIO with
universal newlines (newline='' or None) is read in chunks and parsed by the
core, and must still give exactly csv.reader's rows, line_num and errors;
every other text stream keeps the line-by-line path. A UTF-8 file starts in
raw mode (its bytes read from its buffer, `_source == "text-raw"`) and hands
over to read() where its bytes stop being exactly its text."""

import csv
import functools
import io
import os
import random
import tempfile

import fastcsv
import pytest
from conftest import drain
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_differential import BYTE_PIECES, dialect_st, text_st, valid

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

NEWLINES = ["", None, "\n", "\r", "\r\n"]


def write(tmp_path, data, name="data.csv"):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


def wrapped_bytes(text, newline):
    return io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8", newline=newline)


def text_kinds(path, text, newline):
    """(kind, opener): each opener makes a new stream of that kind."""
    return [
        ("file", functools.partial(open, path, newline=newline, encoding="utf-8")),
        ("bytesio", functools.partial(wrapped_bytes, text, newline)),
        ("stringio", functools.partial(io.StringIO, text, newline=newline)),
    ]


def expected_source(kind, text, newline, d):
    """The text path needs universal newlines, a line end to show them (in
    the probe of a file, or anywhere in a StringIO's text, whose line ends
    are noted as it is written) and no QUOTE_NONNUMERIC. UTF-8 files start
    in raw mode."""
    universal = newline in ("", None)
    has_end = "\r" in text or "\n" in text
    if universal and has_end and d.get("quoting") != csv.QUOTE_NONNUMERIC:
        return "text" if kind == "stringio" else "text-raw"
    return "lines"


@SETTINGS
@given(text_st, dialect_st, st.sampled_from(NEWLINES))
def test_text_streams_match_csv(text, d, newline):
    assume(valid(d))
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode())
        for kind, make in text_kinds(path, text, newline):
            with make() as f, make() as g:
                r = fastcsv.reader(f, **d)
                if hasattr(fastcsv.reader([], **d), "_source"):
                    assert r._source == expected_source(kind, text, newline, d), kind
                else:
                    # A dialect the core cannot parse: the stdlib's reader.
                    assert type(r) is type(csv.reader([])), kind
                before = getattr(r, "_source", None)
                assert drain(r, max_errors=20) == drain(csv.reader(g, **d), max_errors=20), kind
                if before == "text-raw" and newline is None and "\r" in text:
                    # The first CR hands over: newline=None would translate it.
                    assert r._source == "text", kind
    finally:
        os.unlink(path)


@SETTINGS
@given(text_st, dialect_st, st.sampled_from(["", None]))
def test_text_files_read_ahead_match_csv(text, d, newline):
    """The batches (normally for files with more than 1 MiB left), on
    this thread and on a read-ahead thread, on every small file: the same
    rows, line_num and errors."""
    from unittest import mock
    assume(valid(d))
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode())
        for threads in (1, 2):
            with mock.patch.object(fastcsv, "_AHEAD_BYTES", -1), \
                    open(path, newline=newline, encoding="utf-8") as f, \
                    open(path, newline=newline, encoding="utf-8") as g:
                r = fastcsv.reader(f, threads=threads, **d)
                native = expected_source("file", text, newline, d) != "lines"
                if native and hasattr(r, "_source"):
                    assert r._batched
                    assert r._reads_ahead == (threads == 2)
                got = drain(r, max_errors=20)
                assert got == drain(csv.reader(g, **d), max_errors=20), threads
    finally:
        os.unlink(path)


def random_text(seed, n):
    rnd = random.Random(seed)
    pieces = ["abc", "1", ",", ",", '"', '""', "\r", "\n", "\r\n", "\r\n",
              "é", "€", "😀", "\x00", " ", "\\"]
    return "".join(rnd.choice(pieces) for _ in range(n))


@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("kw", [{}, {"strict": True}, {"escapechar": "\\"},
                                {"quoting": csv.QUOTE_NONE}])
def test_chunk_boundaries(tmp_path, newline, kw):
    """Texts longer than several chunks (of the stream and of the reader's
    buffer): records, multi-byte characters and CRLF pairs straddle them."""
    text = random_text(7, 150_000)
    p = write(tmp_path, text)
    with open(p, newline=newline, encoding="utf-8") as f, \
            open(p, newline=newline, encoding="utf-8") as g:
        r = fastcsv.reader(f, **kw)
        assert r._source == "text-raw"
        assert drain(r, max_errors=10**6) == drain(csv.reader(g, **kw), max_errors=10**6)
    from unittest import mock
    for threads in (None, 1, 2):
        with mock.patch.object(fastcsv, "_AHEAD_BYTES", 0), \
                open(p, newline=newline, encoding="utf-8") as f, \
                open(p, newline=newline, encoding="utf-8") as g:
            r = fastcsv.reader(f, threads=threads, **kw)
            assert r._batched
            want = drain(csv.reader(g, **kw), max_errors=10**6)
            assert drain(r, max_errors=10**6) == want, threads
    s = io.StringIO(text, newline=newline)
    assert drain(fastcsv.reader(s, **kw), max_errors=10**6) == \
        drain(csv.reader(io.StringIO(text, newline=newline), **kw), max_errors=10**6)


def test_fast_path_only_for_universal_newlines(tmp_path):
    p = write(tmp_path, "a,b\r\nc,d\r\n")
    for newline, source in [("", "text"), (None, "text"), ("\n", "lines"),
                            ("\r", "lines"), ("\r\n", "lines")]:
        # Files in UTF-8, Latin-1 and Windows-1252 are read raw.
        for encoding in ("utf-8", "latin-1", "cp1252", "windows-1252", "cp1250", "ascii",
                         "utf-16"):
            raw = source == "text" and encoding not in ("ascii", "utf-16")
            if encoding == "utf-16":
                p.write_text("a,b\r\nc,d\r\n", encoding="utf-16", newline="")
            with open(p, newline=newline, encoding=encoding) as f:
                assert fastcsv.reader(f)._source == source + "-raw" * raw, (newline, encoding)
        p = write(tmp_path, "a,b\r\nc,d\r\n")
        assert fastcsv.reader(io.StringIO("a\nb\n", newline=newline))._source == source
    # Exact types only: a subclass may change how it iterates.

    class Sub(io.StringIO):
        pass

    assert fastcsv.reader(Sub("a\nb\n", newline=""))._source == "lines"
    # No line end in the probe: nothing shows the mode.
    q = write(tmp_path, "a,b", "one.csv")
    with open(q, newline="") as f:
        r = fastcsv.reader(f)
        assert r._source == "lines"
        assert list(r) == [["a", "b"]]
    # QUOTE_NONNUMERIC keeps the line path (csv resumes inside a record
    # after a failed conversion).
    with open(p, newline="") as f:
        assert fastcsv.reader(f, quoting=csv.QUOTE_NONNUMERIC)._source == "lines"


def test_position_restored_when_falling_back(tmp_path):
    p = write(tmp_path, "skip\na,b\nc\u00e9,d\n")
    for newline in ["\n", "\r", "\r\n"]:
        with open(p, newline=newline) as f, open(p, newline=newline) as g:
            f.readline()
            g.readline()
            pos = f.tell()
            r = fastcsv.reader(f)
            assert f.tell() == pos
            assert r._source == "lines"
            assert drain(r) == drain(csv.reader(g))
    # A dialect the core cannot parse goes to the stdlib, from the same place.
    with open(p, newline="") as f:
        f.readline()
        pos = f.tell()
        r = fastcsv.reader(f, delimiter="\u00e9")
        assert f.tell() == pos
        assert type(r) is type(csv.reader([]))
        assert list(r) == [["a,b"], ["c", ",d"]]


def test_after_next_the_mode_is_known(tmp_path):
    """next(f) disables tell(), but the line it read has shown the mode."""
    p = write(tmp_path, 'h1,h2\r\n"a\nb",c\r\nd,e\n')
    with open(p, newline="") as f, open(p, newline="") as g:
        assert next(f) == next(g)
        r = fastcsv.reader(f)
        assert r._source == "text"
        assert drain(r) == drain(csv.reader(g))


def test_pipes_keep_the_line_path():
    """read(n) on a pipe waits for n characters; rows must come out as
    their lines arrive, even when a line read earlier has shown the mode."""
    for skip in (False, True):
        r, w = os.pipe()
        os.write(w, b"h\na,b\nc,d\n")
        os.close(w)
        with open(r, newline="") as f:
            if skip:
                assert next(f) == "h\n"
                assert f.newlines is not None
            rdr = fastcsv.reader(f)
            assert rdr._source == "lines"
            assert list(rdr)[-2:] == [["a", "b"], ["c", "d"]]


def test_bom_stays_in_the_first_field(tmp_path):
    p = write(tmp_path, "\ufeffa,b\r\n1,2\r\n")
    with open(p, newline="", encoding="utf-8") as f, open(p, newline="", encoding="utf-8") as g:
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        rows = list(r)
        assert rows == list(csv.reader(g))
        assert rows[0][0] == "\ufeffa"
    # utf-8-sig removes it in the decoder, as for csv.
    with open(p, newline="", encoding="utf-8-sig") as f:
        assert next(fastcsv.reader(f))[0] == "a"


def test_surrogateescape_text(tmp_path):
    p = write(tmp_path, b'a,\xff\xfe"x"\r\n"\xc3(",b\n\xed\xa0\x80\n')
    with open(p, newline="", errors="surrogateescape") as f, \
            open(p, newline="", errors="surrogateescape") as g:
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        rows = list(r)
        assert rows == list(csv.reader(g))
        assert rows[0][1] == '\udcff\udcfe"x"'
        # The first byte that is not UTF-8 hands over to the wrapper.
        assert r._source == "text"


def test_unicode_decode_error_surfaces(tmp_path):
    good = "".join(f"{i},cafe,{'x' * (i % 50)}\r\n" for i in range(20_000))
    # Past the probe: raised while iterating.
    p = write(tmp_path, good.encode() + b"bad,\xff\r\nafter\r\n")

    def rows_before_error(rdr):
        rows = []
        with pytest.raises(UnicodeDecodeError):
            rows.extend(rdr)
        return rows

    for encoding, source in [("utf-8", "text-raw"), ("utf_8", "text-raw"),
                             ("utf-8-sig", "text-raw"), ("ascii", "text")]:
        with open(p, newline="", encoding=encoding) as f, \
                open(p, newline="", encoding=encoding) as g:
            r = fastcsv.reader(f)
            assert r._source == source
            got, want = rows_before_error(r), rows_before_error(csv.reader(g))
            # The rows before it are csv's, perhaps a few more or less than
            # csv's (which decodes 8 KiB at a time); then iteration ends.
            assert got[:len(want)] == want[:len(got)]
            assert abs(len(got) - len(want)) < 2000
            assert list(r) == []
    # In the probe: the line path raises it where csv does.
    q = write(tmp_path, b"a,b\r\n\xff\r\n", "early.csv")
    with open(q, newline="") as f, open(q, newline="") as g:
        r, s = fastcsv.reader(f), csv.reader(g)
        assert r._source == "lines"
        with pytest.raises(UnicodeDecodeError) as e1:
            next(r)
        with pytest.raises(UnicodeDecodeError) as e2:
            next(s)
        assert str(e1.value) == str(e2.value)


@pytest.mark.parametrize("kw", [{"strict": True}, {}])
def test_error_messages_are_csvs(tmp_path, kw, limit):
    text = 'a,"b"x,c\r\nd,e\r\n' + "f" * 20 + '\r\n"g,h\r\ni"\r\n"open'
    fastcsv.field_size_limit(10)
    p = write(tmp_path, text)
    with open(p, newline="") as f, open(p, newline="") as g:
        r = fastcsv.reader(f, **kw)
        assert r._source == "text-raw"
        got, want = drain(r), drain(csv.reader(g, **kw))
    assert got == want
    messages = [e[2] for e in got if e[0] == "error"]
    assert "field larger than field limit (10)" in messages
    if kw:
        assert messages[0] == "',' expected after '\"'"
        assert messages[-1] == "unexpected end of data"



@pytest.mark.parametrize("text,kw", [
    ('"\r\nx\n', {}),
    ('"\\\r\nx\n', {"escapechar": "\\"}),
    ('a\r\n"\r\nb\r\n"\r\n\r\nc\n', {}),
])
@pytest.mark.parametrize("big", [False, True])
def test_error_at_the_lf_of_a_crlf_counts_its_line_once(tmp_path, limit, text, kw, big):
    """A field goes over the limit at the LF of a CRLF (in quotes, or after
    an escape): csv drops the rest of that line, whose CR already ended it,
    and counts the next line as one more. `big` puts the rows at the end of
    a file large enough to be read ahead (then parsed again row by row)."""
    if big:
        text = ("a," * 99 + "a\n") * 6000 + text
    fastcsv.field_size_limit(1)
    p = write(tmp_path, text)
    for kind, make in text_kinds(p, text, ""):
        with make() as f, make() as g:
            r = fastcsv.reader(f, **kw)
            assert r._source in ("text", "text-raw"), kind
            assert r._batched == (big and kind == "file"), kind
            got, want = drain(r, max_errors=10), drain(csv.reader(g, **kw), max_errors=10)
        assert got[-6:] == want[-6:], kind
        assert got == want, kind


def test_field_size_limit_read_before_each_row(tmp_path, limit):
    p = write(tmp_path, "abc,de\nabcdef\nabcdef\n")
    fastcsv.field_size_limit(5)
    with open(p, newline="") as f:
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        assert next(r) == ["abc", "de"]
        with pytest.raises(csv.Error, match=r"^field larger than field limit \(5\)$"):
            next(r)
        assert r.line_num == 2
        fastcsv.field_size_limit(100)
        assert next(r) == ["abcdef"]
        assert r.line_num == 3


def test_keywords_on_text_files(tmp_path):
    p = write(tmp_path, "a\x07b,c\r\nd\r\n")
    with open(p, newline="") as f:
        r = fastcsv.reader(f, filter="controls")
        assert r._source == "text-raw"
        assert list(r) == [["ab", "c"], ["d"]]
    for k, v in [("encoding", "utf-8"), ("errors", "strict"), ("source", "mmap"),
                 ("buffer_size", 10), ("intern", True)]:
        with open(p, newline="") as f, pytest.raises(TypeError, match=repr(k)):
            fastcsv.reader(f, **{k: v})


@SETTINGS
@given(text_st, st.sampled_from(["controls", "all-controls", "invisible"]),
       st.sampled_from(["", None]))
def test_filter_agrees_with_the_line_path(text, flt, newline):
    lines = list(io.StringIO(text, newline=newline))
    want = drain(fastcsv.reader(lines, filter=flt))
    assert drain(fastcsv.reader(io.StringIO(text, newline=newline), filter=flt)) == want


def test_dictreader_over_a_text_file(tmp_path):
    p = write(tmp_path, 'a,b\r\n1,"x\r\ny"\r\n\r\n3\r\n4,5,6\r\n')
    with open(p, newline="") as f, open(p, newline="") as g:
        r, s = fastcsv.DictReader(f), csv.DictReader(g)
        assert r.reader._source == "text-raw"
        got = [(row, r.line_num) for row in r]
        assert got == [(row, s.line_num) for row in s]


def test_read_and_read_columns_of_a_text_file(tmp_path):
    p = write(tmp_path, "a,b\r\n1,2\r\n3,4\r\n")
    with open(p, newline="") as f:
        assert fastcsv.read(f) == [["a", "b"], ["1", "2"], ["3", "4"]]
    with open(p, newline="") as f:
        assert fastcsv.read_columns(f) == {"a": ["1", "3"], "b": ["2", "4"]}


# --- raw mode: a UTF-8 file's bytes read from its buffer ----------------------


def both(p, newline, **open_kw):
    """The same UTF-8 file opened twice: for fastcsv and for csv."""
    return (open(p, newline=newline, encoding="utf-8", **open_kw),
            open(p, newline=newline, encoding="utf-8", **open_kw))


@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("late", ["\r", "\r\n", '"x\ry"', '"x\r\ny"\r\n'])
def test_cr_after_the_probe_hands_over(tmp_path, newline, late):
    """The probe saw only LF, so the mode is unknown until a CR comes:
    newline=None would translate it."""
    head = "".join(f"{i},é€😀,x\n" for i in range(30_000))
    p = write(tmp_path, head + "a," + late + "b\nc,d\n")
    f, g = both(p, newline)
    with f, g:
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        assert drain(r) == drain(csv.reader(g))
        assert r._source == "text"


def test_cr_in_the_probe_shows_newline_empty(tmp_path):
    text = "".join(f'{i},"é\r\n€",😀\r\n' for i in range(40_000))
    p = write(tmp_path, text)
    f, g = both(p, "")
    with f, g:
        r = fastcsv.reader(f)
        assert drain(r) == drain(csv.reader(g))
        assert r._source == "text-raw"
        # Like csv, the reader leaves the file at its end.
        assert f.read() == "" and f.tell() == p.stat().st_size


@pytest.mark.parametrize("errors", ["strict", "replace", "surrogateescape"])
@pytest.mark.parametrize("bad", [b"\xff", b"\xe2\x82", b"\xed\xa0\x80", b"\xc3"])
def test_bytes_that_are_not_utf8_hand_over(tmp_path, errors, bad):
    head = "".join(f"{i},é€😀\r\n" for i in range(30_000)).encode()
    for data in [head + b"x," + bad + b"y\r\nz\r\n", head + b"x," + bad]:
        p = write(tmp_path, data)
        f, g = both(p, "", errors=errors)
        with f, g:
            r = fastcsv.reader(f)
            assert r._source == "text-raw"
            got, want = drain(r), drain(csv.reader(g))
            if errors == "strict":
                # The wrapper raises it, maybe after more rows than csv
                # (which decodes 8 KiB ahead), and iteration ends.
                i = next(k for k, e in enumerate(got) if e[0] == "error")
                j = next(k for k, e in enumerate(want) if e[0] == "error")
                assert got[i][1] == want[j][1] == "UnicodeDecodeError"
                assert got[:j] == want[:j]
                assert i >= j and got[i + 1:] == []
            else:
                assert got == want
            assert r._source == "text"


@SETTINGS
@given(st.lists(st.sampled_from([*BYTE_PIECES, b"\r", b"\r\n", b"\n", b'"', b","]),
                max_size=40).map(b"".join),
       st.sampled_from(["strict", "replace", "surrogateescape", "backslashreplace"]),
       st.sampled_from(["", None]), st.booleans(), st.booleans())
def test_raw_mode_bytes_match_csv(data, errors, newline, sig, bom):
    """Also as utf-8-sig (Excel's "CSV UTF-8"), with or without a BOM: a
    BOM at the start is dropped, as the file's decoder drops it, and the
    rest read raw as UTF-8."""
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"\xef\xbb\xbf" * bom + data)
        encoding = "utf-8-sig" if sig else "utf-8"
        same_rows_as_csv(path, {"newline": newline, "encoding": encoding, "errors": errors})
    finally:
        os.unlink(path)


def same_rows_as_csv(path, open_kw, max_errors=5, **kw):
    """fastcsv's and csv's readers over the file opened with `open_kw`
    give the same rows, or, where the file's decoder raises, the same
    rows up to the first error of either (csv decodes 8 KiB ahead of its
    rows, the raw mode not) and then the same error."""
    with open(path, **open_kw) as f, open(path, **open_kw) as g:
        got = drain(fastcsv.reader(f, **kw), max_errors=max_errors)
        want = drain(csv.reader(g, **kw), max_errors=max_errors)
    j = next((k for k, e in enumerate(want) if e[1] == "UnicodeDecodeError"), None)
    if j is None:
        assert got == want
    else:
        i = next(k for k, e in enumerate(got) if e[0] == "error")
        assert got[i][1] == "UnicodeDecodeError"
        assert got[:min(i, j)] == want[:min(i, j)]


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_utf8_sig_files_read_raw(tmp_path, threads):
    from unittest import mock
    text = "\ufeffh1,h2\r\n" + "".join(f'{i},"café\r\n{i}",😀\r\n' for i in range(40_000))
    p = write(tmp_path, text)
    with mock.patch.object(fastcsv, "_AHEAD_BYTES", 0), \
            open(p, newline="", encoding="utf-8-sig") as f, \
            open(p, newline="", encoding="utf-8-sig") as g:
        r = fastcsv.reader(f, threads=threads)
        assert r._source == "text-raw"
        rows = drain(r)
        assert rows == drain(csv.reader(g))
        assert rows[0][0] == ["h1", "h2"]
        assert r._source == "text-raw"
    # From a later position, no BOM is looked for (the decoder's neither).
    with open(p, newline="", encoding="utf-8-sig") as f, \
            open(p, newline="", encoding="utf-8-sig") as g:
        assert f.readline() == g.readline() == "h1,h2\r\n"
        pos = f.tell()
        f.seek(pos)
        g.seek(pos)
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        assert drain(r) == drain(csv.reader(g))


def test_characters_straddle_raw_chunks(tmp_path):
    """4-byte characters across every read1() boundary stay in raw mode."""
    text = "".join(f"{'😀' * (i % 7)},{i}\r\n" for i in range(60_000))
    p = write(tmp_path, text)
    f, g = both(p, "")
    with f, g:
        r = fastcsv.reader(f)
        assert drain(r) == drain(csv.reader(g))
        assert r._source == "text-raw"


def test_raw_mode_starts_where_the_file_is(tmp_path):
    p = write(tmp_path, "skip,é\r\na,b\r\nc,d\r\n")
    f, g = both(p, "")
    with f, g:
        f.readline()
        g.readline()
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        assert drain(r) == drain(csv.reader(g))
    # A position inside the decoder's state (a CR whose LF is not decoded
    # yet) is not a byte offset: read() from there.
    f, g = both(p, "")
    with f, g:
        assert f.read(7) == g.read(7) == "skip,é\r"
        r = fastcsv.reader(f)
        assert r._source == "text"
        assert drain(r) == drain(csv.reader(g))


# --- raw mode in a one-byte encoding: Latin-1 and Windows-1252 --------------

# Bytes past ASCII: Latin-1's and cp1252's letters, cp1252's characters of
# 0x80-0x9F (two and three UTF-8 bytes) and the five it leaves undefined.
ONE_BYTE_PIECES = [b"a", b",", b'"', b"\n", b"\r\n", b"\r", b"\xe9", b"\xff", b"\xa0",
                   b"\x80", b"\x83", b"\x99", b"\x9f", b"\x81", b"\x8d", b"\x8f",
                   b"\x90", b"\x9d", b"\x00", b"\\", b"\xc3\xa9"]


def first_error(rows):
    return next((k for k, e in enumerate(rows) if e[0] == "error"), None)


# Python's other one-byte codecs, read raw through their tables (some with
# bytes they leave undefined: tis-620's 0xFF, cp1250's 0x81).
OTHER_ONE_BYTE = ["cp1250", "cp1251", "iso8859-15", "koi8-r", "cp437", "mac-roman", "tis-620"]


@SETTINGS
@given(st.lists(st.sampled_from(ONE_BYTE_PIECES), max_size=40).map(b"".join),
       st.sampled_from(["latin-1", "cp1252", *OTHER_ONE_BYTE]),
       st.sampled_from(["strict", "replace", "surrogateescape"]),
       st.sampled_from(["", None]),
       st.sampled_from([{}, {"escapechar": "\\"}, {"strict": True}]))
def test_one_byte_raw_mode_matches_csv(data, encoding, errors, newline, kw):
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        opened = {"newline": newline, "encoding": encoding, "errors": errors}
        same_rows_as_csv(path, opened, max_errors=20, **kw)
    finally:
        os.unlink(path)


@SETTINGS
@given(text_st, dialect_st, st.sampled_from(["", None]),
       st.sampled_from(["latin-1", "cp1252", *OTHER_ONE_BYTE]))
def test_one_byte_files_match_csv_in_every_dialect(text, d, newline, encoding):
    """The differential tests' texts and dialects, their UTF-8 bytes read
    as Latin-1 or cp1252 (undefined cp1252 bytes replaced)."""
    assume(valid(d))
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode())
        kw = {"newline": newline, "encoding": encoding, "errors": "replace"}
        with open(path, **kw) as f:
            r = fastcsv.reader(f, **d)
            if hasattr(r, "_source") and r._source != "lines":
                assert r._source == "text-raw"
        same_rows_as_csv(path, kw, max_errors=20, **d)
    finally:
        os.unlink(path)


def raw_rows_are_csvs(p, encoding, threads, read_to_end=False):
    """The drop-in reader over `p` opened as `encoding` (read ahead from
    the first byte on `threads`) reads it raw to the end and gives csv's
    rows; with `read_to_end`, it leaves the file at its end."""
    from unittest import mock
    with mock.patch.object(fastcsv, "_AHEAD_BYTES", 0), \
            open(p, newline="", encoding=encoding) as f, \
            open(p, newline="", encoding=encoding) as g:
        r = fastcsv.reader(f, threads=threads)
        assert r._source == "text-raw"
        assert drain(r) == drain(csv.reader(g))
        assert r._source == "text-raw"
        if read_to_end:
            assert f.read() == "" and f.tell() == p.stat().st_size


@pytest.mark.parametrize("encoding", OTHER_ONE_BYTE)
def test_other_one_byte_codecs_are_read_raw(tmp_path, encoding):
    """Every byte each codec defines, in quoted and plain fields, across
    the buffer's reads: csv's rows, still raw; a byte it leaves
    undefined hands over to its decoder."""
    defined = bytes(b for b in range(0x80, 0x100) if fastcsv._one_byte_table(encoding)[b - 0x80])
    row = b'1,"' + defined + b'\r\n",' + defined[::-1] + b"\r\n"
    p = write(tmp_path, b"a,b,c\r\n" + row * 3000)
    for threads in (1, 2):
        raw_rows_are_csvs(p, encoding, threads)
    undefined = [b for b in range(0x80, 0x100) if not fastcsv._one_byte_table(encoding)[b - 0x80]]
    if undefined:
        p = write(tmp_path, b"a,b\r\n" + row * 3000 + b"x," + bytes(undefined[:1]) + b"\r\n")
        same_rows_as_csv(p, {"newline": "", "encoding": encoding, "errors": "replace"})
        with open(p, newline="", encoding=encoding, errors="strict") as f:
            r = fastcsv.reader(f)
            with pytest.raises(UnicodeDecodeError):
                list(r)
            assert r._source == "text"


def test_one_byte_tables_are_the_codecs():
    """Only codecs that are ASCII below 0x80 and one character (or none)
    a byte have a table; UTF-16, multibyte and EBCDIC codecs have none."""
    for name in OTHER_ONE_BYTE:
        table = fastcsv._one_byte_table(name)
        assert table is not None and len(table) == 128, name
        for b, c in zip(range(0x80, 0x100), table):
            try:
                assert bytes([b]).decode(name) == chr(c), name
            except UnicodeDecodeError:
                assert c == 0, name
    for name in ("utf-16", "shift_jis", "cp037", "ascii", "utf-8", "gb18030"):
        assert fastcsv._one_byte_table(name) is None, name


def one_byte_text(n, seed=1):
    """`n` rows with Latin-1 and cp1252 characters, quoted line ends and
    doubled quotes, long enough to straddle the raw reads (64 KiB)."""
    rnd = random.Random(seed)
    words = ["café", "Müller", "naïve", "ÿ", "€100", "“quoted”", "a—b", "™", "Œuvre",
             "plain", "x" * 40, ""]
    rows = [[str(i), rnd.choice(words), rnd.choice(words) + "\r\n" + rnd.choice(words),
             'say ""' + rnd.choice(words) + '""'] for i in range(n)]
    return "".join(",".join(f'"{c}"' if k > 1 else c for k, c in enumerate(r)) + "\r\n"
                   for r in rows)


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
@pytest.mark.parametrize("threads", [None, 1, 2])
def test_one_byte_files_stay_raw_across_reads(tmp_path, encoding, threads):
    """Characters of two and three UTF-8 bytes across every read of the
    buffer, on the calling thread and read ahead: csv's rows, still raw."""
    text = one_byte_text(40_000)
    if encoding == "latin-1":
        text = text.replace("€", "E").replace("“", '"').replace("”", '"')
        text = text.replace("—", "-").replace("™", "TM").replace("Œ", "OE")
    p = tmp_path / "one.csv"
    p.write_text(text, encoding=encoding, newline="")
    raw_rows_are_csvs(p, encoding, threads, read_to_end=True)


@pytest.mark.parametrize("errors", ["strict", "replace", "surrogateescape"])
@pytest.mark.parametrize("newline", ["", None])
def test_an_undefined_cp1252_byte_hands_over(tmp_path, errors, newline):
    head = "".join(f"{i},café €{i},“x”\r\n" for i in range(30_000)).encode("cp1252")
    for data in [head + b"x,\x81y\r\nz\r\n", head + b'"q\x9d\r\n",w\r\n', head + b"x,\x90"]:
        p = write(tmp_path, data)
        with open(p, newline=newline, encoding="cp1252", errors=errors) as f, \
                open(p, newline=newline, encoding="cp1252", errors=errors) as g:
            r = fastcsv.reader(f)
            assert r._source == "text-raw"
            got, want = drain(r), drain(csv.reader(g))
            if errors == "strict":
                i = first_error(got)
                j = first_error(want)
                assert got[i][1] == want[j][1] == "UnicodeDecodeError"
                assert got[:min(i, j)] == want[:min(i, j)]
                if newline == "":
                    # Raw up to the byte: every row before it, where csv
                    # (which decodes 8 KiB ahead) may stop earlier. With
                    # newline=None the first CR handed over already, and
                    # read() decodes ahead too.
                    assert i >= j
            else:
                assert got == want
            assert r._source == "text"


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
@pytest.mark.parametrize("late", ["\r", "\r\n", '"x\ry"'])
def test_a_cr_after_the_probe_hands_a_one_byte_file_over(tmp_path, encoding, late):
    head = "".join(f"{i},café,ÿ\n" for i in range(30_000))
    p = tmp_path / "cr.csv"
    p.write_bytes((head + "a," + late + "b\nc,d\n").encode(encoding))
    with open(p, newline=None, encoding=encoding) as f, \
            open(p, newline=None, encoding=encoding) as g:
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        assert drain(r) == drain(csv.reader(g))
        assert r._source == "text"


def test_reading_before_the_first_row_is_honoured(tmp_path):
    """Whatever reads the file between reader() and the first row moves
    where the rows start, as with csv."""
    p = write(tmp_path, "h1,h2\r\na,b\r\nc,d\r\n")
    f, g = both(p, "")
    with f, g:
        r, s = fastcsv.reader(f), csv.reader(g)
        assert f.readline() == g.readline() == "h1,h2\r\n"
        assert drain(r) == drain(s)
        assert r._source == "text"


# --- Large text files: parsed by a read-ahead thread fed by the caller -------

from test_reader import big_text, thread_count  # noqa: E402


def drain_limits(rdr, changes, max_errors=100):
    """`drain`, setting the field size limit to `changes[i]` just before
    the i-th step, as a loop body that changes it would."""
    def before_step(i):
        if i in changes:
            fastcsv.field_size_limit(changes[i])
    return drain(rdr, max_errors=max_errors, before_step=before_step)


@pytest.mark.parametrize("newline", ["", None])
@pytest.mark.parametrize("seed", [3, 4])
def test_large_text_files_match_csv(tmp_path, seed, newline):
    text = big_text(seed)
    p = write(tmp_path, text)
    with open(p, newline=newline, encoding="utf-8") as f, \
            open(p, newline=newline, encoding="utf-8") as g:
        r = fastcsv.reader(f)
        assert r._source == "text-raw"
        assert drain(r) == drain(csv.reader(g))
    with open(p, newline="", encoding="utf-8") as f, \
            open(p, newline="", encoding="utf-8") as g:
        assert drain(fastcsv.DictReader(f, restkey="more")) == drain(
            csv.DictReader(g, restkey="more"))


def test_large_text_files_with_errors_and_invalid_utf8(tmp_path, limit):
    """Strict-mode errors deep in the file, NULs, a field over the limit,
    and an invalid byte (the raw read hands over to the wrapper's decoder,
    which replaces it)."""
    data = big_text(5).encode()
    bad = bytearray()
    for k, piece in enumerate(data.split(b"\n1000")):
        extra = [b'x,"a"b,\x00\n', b"y," + b"z" * 3000 + b"\n", b'"q\xff",\xc3\n']
        bad += (b"\n" + extra[k % 3] + b"1000" if k else b"") + piece
    p = write(tmp_path, bytes(bad))
    fastcsv.field_size_limit(2000)
    for kw in [{"strict": True}, {}]:
        with open(p, newline="", errors="replace") as f, \
                open(p, newline="", errors="replace") as g:
            r = fastcsv.reader(f, **kw)
            assert r._source == "text-raw"
            got, want = drain_limits(r, {}), drain_limits(csv.reader(g, **kw), {})
            assert r._source == "text"  # handed over at the first \xff
        assert got == want
        assert sum(1 for e in want if e[0] == "error") >= 3


@pytest.mark.parametrize("terminator", ["\n", "\r\n", "\r"])
def test_field_size_limit_changed_while_reading_a_large_file(tmp_path, limit, terminator):
    """The read-ahead thread parses without a limit; rows are checked
    against the limit in force as they are handed out, and once one may
    exceed it the rest is parsed row by row from that row's start."""
    rnd = random.Random(9)
    rows = []
    for i in range(40_000):
        n = rnd.choice([1, 5, 20, 60])
        rows.append([str(i), "x" * n, "é" * (n // 2), 'a "b"\nc' if i % 7 == 0 else ""])
    buf = io.StringIO()
    csv.writer(buf, lineterminator=terminator).writerows(rows)
    p = write(tmp_path, buf.getvalue())
    assert p.stat().st_size > 2 << 20
    for changes in [{100: 30, 200: 1000}, {9000: 10, 9500: 10_000, 30_000: 5},
                    {0: 40}, {20_000: 0}]:
        fastcsv.field_size_limit(100_000)
        with open(p, newline="") as f, open(p, newline="") as g:
            r = fastcsv.reader(f)
            got = drain_limits(r, changes, max_errors=10**6)
            fastcsv.field_size_limit(100_000)
            want = drain_limits(csv.reader(g), changes, max_errors=10**6)
        assert got == want, changes
        assert any(e[0] == "error" for e in want)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_dropping_a_text_reader_stops_its_thread(tmp_path):
    import time
    p = write(tmp_path, big_text(11))
    before = thread_count()
    files = [open(p, newline="") for _ in range(5)]
    readers = [fastcsv.reader(f, threads=2) for f in files]
    for r in readers:
        next(r)
    assert thread_count() > before
    del r, readers
    for f in files:
        f.close()
    deadline = time.monotonic() + 10
    while thread_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thread_count() == before
    with open(p, newline="") as f:
        assert len(list(fastcsv.reader(f))) == 60_000
    while thread_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thread_count() == before


def test_large_text_file_data_error_before_a_decoding_error(tmp_path):
    """The feeder meets a decoding error while the rows before it (and a
    strict-mode error among them) are still being handed out: the csv.Error
    comes first, the UnicodeDecodeError where the reader reaches it."""
    data = big_text(6).encode()
    k = data.index(b"\n", len(data) // 3) + 1
    j = data.index(b"\n", k + 100_000) + 1
    bad = data[:k] + b'x,"a"b\n' + data[k:j] + b"y,\xff\n" + data[j:]
    p = write(tmp_path, bad)

    def run(mod):
        out = []
        with open(p, newline="") as f:
            r = mod.reader(f, strict=True)
            while True:
                try:
                    out.append(next(r))
                except StopIteration:
                    return out
                except csv.Error as e:
                    out.append(("csv.Error", str(e)))
                except UnicodeDecodeError:
                    out.append("UnicodeDecodeError")
                    return out

    got, want = run(fastcsv), run(csv)
    i = want.index(("csv.Error", "',' expected after '\"'"))
    assert got[:i + 1] == want[:i + 1]
    assert got[-1] == want[-1] == "UnicodeDecodeError"
    # Within the rows csv decodes ahead of its rows (8 KiB).
    assert abs(len(got) - len(want)) < 200
