"""Hypothesis: fastcsv against the stdlib csv module, through every input
kind, on random dialects and random text."""

import csv
import io
import itertools
import os
import tempfile

import fastcsv
import pytest
from conftest import drain
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

PIECES = ["a", "b", "1", "2.5", "-", ",", ";", "\t", '"', "'", "\\", " ", "\r",
          "\n", "\r\n", "\x00", "é", "€", "#", "x y"]

text_st = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)

dialect_st = st.fixed_dictionaries({
    "delimiter": st.sampled_from([",", ";", "\t", " ", "a"]),
    "quotechar": st.sampled_from(['"', "'", None]),
    "escapechar": st.sampled_from([None, None, "\\", '"', "'"]),
    "quoting": st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL,
                                csv.QUOTE_NONNUMERIC, csv.QUOTE_NONE]),
    "doublequote": st.booleans(),
    "skipinitialspace": st.booleans(),
    "strict": st.booleans(),
})

# Example counts come from the profile loaded in conftest.py.
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def valid(d):
    try:
        csv.reader([], **d)
    except (TypeError, ValueError):
        return False
    return True


def expected(text, d):
    return drain(csv.reader(io.StringIO(text, newline=""), **d))


@SETTINGS
@given(text_st, dialect_st)
def test_text_file_and_lines(text, d):
    assume(valid(d))
    want = expected(text, d)
    assert drain(fastcsv.reader(io.StringIO(text, newline=""), **d)) == want
    lines = io.StringIO(text, newline="").readlines()
    assert drain(fastcsv.reader(lines, **d)) == drain(csv.reader(lines, **d))
    # Another newline mode: the lines differ, the readers must not.
    lines = io.StringIO(text).readlines()
    assert drain(fastcsv.reader(iter(lines), **d)) == drain(csv.reader(iter(lines), **d))


def strip_position(events):
    """Native errors read `path:line: record N, byte B: message`; keep the
    message (checked against the position elsewhere)."""
    out = []
    for e in events:
        if e[0] == "error" and e[1] == "Error":
            out.append(("error", "Error", e[2].split(": ", 2)[-1], e[3]))
        else:
            out.append(e)
    return out


def native_kinds(path, d):
    yield "path", lambda: fastcsv.reader(path, **d)
    # On the calling thread alone: fields decoded as their rows are made.
    yield "path-1", lambda: fastcsv.reader(path, threads=1, **d)
    yield "mmap", lambda: fastcsv.reader(path, source="mmap", **d)
    yield "read-1", lambda: fastcsv.reader(path, source="read", buffer_size=1, **d)
    with open(path, "rb") as f:
        yield "binary", lambda: fastcsv.reader(f, **d)
    with open(path, "rb") as f:
        data = f.read()
    yield "stream", lambda: fastcsv.reader(io.BytesIO(data), buffer_size=3, **d)


@SETTINGS
@given(text_st, dialect_st)
def test_native_inputs(text, d):
    assume(valid(d))
    want = expected(text, d)
    nonnumeric_failure = any(e[0] == "error" and e[1] == "ValueError" for e in want)
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode())
        for kind, make in native_kinds(path, d):
            got = strip_position(drain(make()))
            if nonnumeric_failure:
                # Native inputs convert QUOTE_NONNUMERIC fields when the
                # record is complete (see docs/python-api.md): the rows
                # before the failure and the failure's message must agree.
                first = next(i for i, e in enumerate(want) if e[0] == "error")
                assert got[:first] == want[:first], kind
                assert got[first][0] == "error", kind
            else:
                assert got == want, kind
        got_bulk = None
        try:
            got_bulk = fastcsv.read(path, **d)
        except (csv.Error, ValueError):
            assert any(e[0] == "error" for e in want)
        if got_bulk is not None:
            assert not any(e[0] == "error" for e in want)
            assert got_bulk == [e[0] for e in want]
    finally:
        os.unlink(path)


params_st = st.dictionaries(
    st.sampled_from(["delimiter", "quotechar", "escapechar", "quoting",
                     "lineterminator", "doublequote", "skipinitialspace",
                     "strict", "bogus"]),
    st.sampled_from(["", ",", "ab", "é", None, 0, 1, 3, 7, True, 2.5, '"', "\n"]),
    max_size=4,
)


@SETTINGS
@given(params_st, st.sampled_from(["excel", "excel-tab", "unix", "nope", 5, csv.excel]))
def test_validation_errors_match(params, dialect):
    def attempt(mod):
        try:
            r = mod.reader(["a,b\r\n"], dialect, **params)
        except Exception as e:  # noqa: BLE001 - compared below
            return ("raised", type(e), str(e))
        return ("ok", drain(r))

    assert attempt(fastcsv) == attempt(csv)


BYTE_PIECES = [b"a", b",", b'"', b"\n", b"\r\n", b"\xc3\xa9", b"\xe2\x82\xac",
               b"\xf0\x9f\x98\x80", b"\xc3", b"\xff", b"\x80", b"\xed\xa0\x80",
               b"\xf4\x90\x80\x80", b"\xe0\x80\xaf", b"\xef\xbb\xbf", b"\x00", b"\\",
               b"\xa9", b"\xe2\x82"]


@SETTINGS
@given(st.lists(st.sampled_from(BYTE_PIECES), max_size=30).map(b"".join),
       st.sampled_from(["strict", "replace", "surrogateescape", "backslashreplace"]),
       st.sampled_from([{}, {"escapechar": "\\"}, {"escapechar": "\\", "doublequote": False},
                        {"strict": True}]))
def test_decoding_matches_python(data, errors, kw):
    """Rows are those of `csv` over the decoded text, also where parsing
    first would differ: unescaping can take a quote or escape byte out
    from between two invalid pieces that then make a valid character
    (`"\xc3"\x80`), so such records are decoded first. ('ignore' is left
    out: a line of only invalid bytes is one empty field, not an empty
    row; so is 'backslashreplace' with a backslash escape character, whose
    replacement text would be read as escapes.)"""
    assume(not (errors == "backslashreplace" and "escapechar" in kw))
    try:
        text = data.decode("utf-8-sig", errors)
    except UnicodeDecodeError:
        with pytest.raises((UnicodeDecodeError, csv.Error)):
            fastcsv.read(data, errors=errors, **kw)
        return
    try:
        want = list(csv.reader(io.StringIO(text, newline=""), **kw))
    except csv.Error:
        return
    assert fastcsv.read(data, errors=errors, **kw) == want
    assert list(fastcsv.reader(io.BytesIO(data), errors=errors, **kw)) == want
    fd, path = tempfile.mkstemp(suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        assert list(fastcsv.reader(path, errors=errors, **kw)) == want
        assert list(fastcsv.reader(path, errors=errors, threads=1, **kw)) == want
        assert list(fastcsv.reader(io.BytesIO(data), errors=errors, threads=1, **kw)) == want
    finally:
        os.unlink(path)


def test_unescaping_does_not_join_invalid_utf8(tmp_path):
    p = tmp_path / "joined.csv"
    p.write_bytes(b'ok,1\n"\xc3"\x80,2\n')
    with pytest.raises(UnicodeDecodeError, match=r"joined\.csv:2: record 1, byte 5"):
        fastcsv.read(p)
    with pytest.raises(UnicodeDecodeError, match=r"joined\.csv:2: record 1, byte 5"):
        list(fastcsv.reader(p))
    assert fastcsv.read(p, errors="replace") == [["ok", "1"], ["\ufffd\ufffd", "2"]]


def odd_chunks(text, cuts):
    """``text`` cut at ``cuts`` (positions), so items split lines and end
    in the middle of a CRLF: what a generator over a socket yields."""
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@SETTINGS
@given(text_st, dialect_st, st.lists(st.integers(0, 60), max_size=8))
def test_generators_with_odd_chunks(text, d, cuts):
    """Each item is a line to csv (its end ends an unquoted record); a
    generator's items need not be lines."""
    assume(valid(d))
    items = odd_chunks(text, cuts)
    assert drain(fastcsv.reader((x for x in items), **d)) == drain(csv.reader(iter(items), **d))


@SETTINGS
@given(text_st, dialect_st, st.sampled_from([3, 5, 8, 131072]))
def test_paths_text_files_and_field_limits(tmp_path_factory, text, d, lim):
    """pathlib paths and text files opened from disk with newline='', with
    a field_size_limit that the pieces' fields reach."""
    assume(valid(d) and d["quoting"] != csv.QUOTE_NONNUMERIC)
    path = tmp_path_factory.mktemp("d") / "f.csv"
    path.write_bytes(text.encode())
    old = csv.field_size_limit(lim)
    try:
        want = expected(text, d)
        assert strip_position(drain(fastcsv.reader(path, **d))) == want
        with open(path, newline="", encoding="utf-8") as f:
            assert drain(fastcsv.reader(f, **d)) == want
    finally:
        csv.field_size_limit(old)


def dict_events(r):
    """fieldnames (read first), then rows with line_num, to the end or
    the first error (native messages without their position)."""
    out = []
    try:
        out.append(("fieldnames", r.fieldnames))
        while True:
            row = next(r)
            out.append((row, r.line_num, r.fieldnames))
    except StopIteration:
        return out
    except csv.Error as e:
        out.append(("error", str(e).split(": ", 2)[-1] if "record" in str(e) else str(e)))
        return out


@SETTINGS
@given(
    text_st,
    st.sampled_from([None, None, ["a"], ["a", "b"], ["a", "a"], ("x", "y", "z"), []]),
    st.sampled_from([None, "rest", "a"]),
    st.sampled_from([None, "", "RV"]),
    st.sampled_from([{}, {"strict": True}, {"quoting": csv.QUOTE_NONE}, {"skipinitialspace": True}]),
)
def test_dictreader_through_every_input(tmp_path_factory, text, fieldnames, restkey, restval, kw):
    """DictReader's fieldnames (read before the first row), restkey and
    restval, short, long and blank rows, through each input kind."""
    args = dict(restkey=restkey, restval=restval, **kw)
    path = tmp_path_factory.mktemp("d") / "f.csv"
    path.write_bytes(text.encode())
    want = dict_events(csv.DictReader(io.StringIO(text, newline=""), fieldnames, **args))
    assert dict_events(fastcsv.DictReader(io.StringIO(text, newline=""), fieldnames, **args)) == want
    assert dict_events(fastcsv.DictReader(path, fieldnames, **args)) == want
    with open(path, "rb") as f:
        assert dict_events(fastcsv.DictReader(f, fieldnames, **args)) == want
    lines = text.splitlines(keepends=True)
    want = dict_events(csv.DictReader(lines, fieldnames, **args))
    assert dict_events(fastcsv.DictReader(lines, fieldnames, **args)) == want
