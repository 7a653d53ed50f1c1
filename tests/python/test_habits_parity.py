"""Differences from ``pandas.read_csv`` found by the Python parity hunt:
each pandas keyword ``read_arrow`` takes either does what pandas does, or
is refused with a clear error (never silently read another way)."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

import fastcsv
import fastcsv.dask


def rows(source, **kw):
    return pa.table(fastcsv.read_arrow(source, **kw)).to_pylist()


def test_na_values_as_a_dict_is_refused():
    # pandas reads {column: spellings} per column; its keys are not
    # spellings. Read as a list they were: the value "a" became null.
    data = b"a,b\na,x\n"
    want = pd.read_csv(io.BytesIO(data), na_values={"a": ["x"]}, dtype=str)
    assert want.to_dict("records") == [{"a": "a", "b": "x"}]
    with pytest.raises(TypeError, match=r"read_arrow\(\) takes na_values .* not a dict"):
        fastcsv.read_arrow(data, na_values={"a": ["x"]})
    with pytest.raises(TypeError, match=r"read_csv\(\) takes na_values .* not a dict"):
        fastcsv.dask.read_csv("unused.csv", na_values={"a": ["x"]})


@pytest.mark.parametrize("spelling", [["x"], ("x",), {"x"}, "x"])
def test_na_values_as_a_list_tuple_set_or_str(spelling):
    data = b"a,b\nx,1\ny,x\n"
    want = pd.read_csv(io.BytesIO(data), na_values=spelling, dtype=str)
    got = pa.table(fastcsv.read_arrow(data, na_values=spelling)).to_pandas()
    assert got.isna().values.tolist() == want.isna().values.tolist()


def test_a_line_terminator_other_than_a_line_end_is_refused():
    # pandas' C parser reads lineterminator="~" as the record end; csv's
    # reader (and so fastcsv's) ignores the keyword: "~" stayed in fields.
    data = b"a,b~1,2~"
    want = pd.read_csv(io.BytesIO(data), lineterminator="~", dtype=str)
    assert want.to_dict("records") == [{"a": "1", "b": "2"}]
    with pytest.raises(ValueError, match="lineterminator"):
        fastcsv.read_arrow(data, lineterminator="~")
    # The line ends fastcsv reads anyway are fine.
    for end in ("\n", "\r\n", "\r"):
        assert rows(b"a,b\n1,2\n", lineterminator=end) == [{"a": "1", "b": "2"}]


def test_a_parse_error_after_skiprows_says_where(tmp_path):
    # Rows left out by skiprows, nrows, comment or header=N are found by a
    # Python csv reader first; its error had no path, line or record.
    p = tmp_path / "e.csv"
    p.write_text('a,b\n1,2\n3,"x"y\n5,6\n')
    for kw in ({"skiprows": [1]}, {"nrows": 5}, {"comment": "#"}, {"encoding": "latin-1"}):
        s = fastcsv.read_arrow(p, strict=True, **kw)
        with pytest.raises(fastcsv.Error, match=r"e\.csv:3: record \d+, byte \d+: ',' expected after '\"'"):
            s.read_all()
    p.write_text("a,b\n1,2\n3," + "x" * (1 << 18) + "\n5,6\n")
    with pytest.raises(fastcsv.Error, match=r"e\.csv:3: record \d+, byte \d+: field larger than field limit"):
        fastcsv.read_arrow(p, skiprows=[1]).read_all()


def test_nrows_stops_before_the_rows_it_leaves_out(tmp_path):
    # An error in a row after the last one nrows keeps is never reached
    # (as the rows after it are never read).
    p = tmp_path / "n.csv"
    p.write_text('a,b\n1,2\n3,"x"y\n5,6\n')
    assert rows(p, strict=True, nrows=1) == [{"a": "1", "b": "2"}]
    assert rows(p, strict=True, nrows=0) == []
    assert fastcsv.read_arrow(p, strict=True, nrows=0).column_names == ["a", "b"]
    p.write_bytes(b"a,b\n1,2\n3,\xff\n")
    assert rows(p, nrows=1) == [{"a": "1", "b": "2"}]


def test_invalid_utf8_after_skiprows_says_where(tmp_path):
    p = tmp_path / "u.csv"
    p.write_bytes(b"a,b\n1,2\n3,\xff\n5,6\n")
    for kw in ({"skiprows": [1]}, {"comment": "#"}, {"header": 0, "names": ["x", "y"]}):
        with pytest.raises(fastcsv.Error, match=r"u\.csv:3: record \d+, byte \d+: invalid UTF-8 in field 1"):
            fastcsv.read_arrow(p, **kw).read_all()


def test_a_decoding_error_in_another_encoding_says_where(tmp_path):
    p = tmp_path / "w.csv"
    p.write_bytes(b"a,b\n1,2\n3,\x81\n")  # 0x81 has no cp1252 character
    with pytest.raises(UnicodeDecodeError, match=r"w\.csv:3: "):
        fastcsv.read_arrow(p, encoding="cp1252")
    p.write_bytes("a,b\r\n1,2\r\n".encode("utf-16-le") + b"\x00\xd8")
    with pytest.raises(UnicodeDecodeError, match=r"w\.csv:3: "):
        fastcsv.read_arrow(p, encoding="utf-16-le")


def test_keep_default_na_false_alone_is_not_ignored():
    # Without na_values, keep_default_na=False was ignored: "NA" was a null
    # in typed columns, where pandas reads no default spelling as NA.
    data = b"a,b\nNA,x\n1,y\n"
    with pytest.raises(ValueError, match="NA"):
        pd.read_csv(io.BytesIO(data), dtype={"a": "Int64"}, keep_default_na=False)
    with pytest.raises(fastcsv.Error, match='field 0 is not a valid int64: "NA"'):
        fastcsv.read_arrow(data, dtype={"a": "Int64"}, keep_default_na=False).read_all()
    # The empty value is still null in a typed column (as pandas' Int64
    # reads it), and text columns keep every value's text.
    data = b"a,b\n,NA\n1,\n"
    want = pd.read_csv(io.BytesIO(data), dtype={"a": "Int64", "b": "string"}, keep_default_na=False)
    got = pa.table(fastcsv.read_arrow(data, dtype={"a": "Int64"}, keep_default_na=False)).to_pandas()
    assert got["a"].isna().tolist() == want["a"].isna().tolist() == [True, False]
    assert got["b"].tolist() == want["b"].tolist() == ["NA", ""]
    # With the default, "NA" is null in a typed column.
    assert rows(b"a\nNA\n", dtype="Int64") == [{"a": None}]


def test_a_usecols_callable_without_a_header_row_is_given_indices():
    # pandas labels the columns of a file without a header row 0, 1, ...
    # (ints), and a usecols callable is written for them; it was given
    # fastcsv's names "0", "1", ..., so `lambda c: c != 1` took every
    # column and `lambda c: c in (0, 2)` none, silently.
    data = b"1,2,3\n4,5,6\n"
    assert rows(data, header=None, usecols=lambda c: c != 1) == [
        {"0": "1", "2": "3"},
        {"0": "4", "2": "6"},
    ]
    assert fastcsv.read_arrow(data, header=None, usecols=lambda c: c in (0, 2)).column_names == ["0", "2"]
    # With a header row or names, the callable is given the names.
    assert fastcsv.read_arrow(b"a,b\n1,2\n", usecols=lambda c: c == "b").column_names == ["b"]
    names = ["x", "y", "z"]
    assert fastcsv.read_arrow(data, names=names, usecols=lambda c: c > "x").column_names == ["y", "z"]


CELLS = ["a", "1", "x y", '"q,r"', '"s""t"', "", "é", "NA", "null", "n/a", "-1"]


@st.composite
def pandas_case(draw):
    """A rectangular file with unique header names (pandas mangles
    repeats and makes a longer row an index, see docs/python-api.md), and
    keywords whose rows fastcsv finds in Python."""
    ncol = draw(st.integers(1, 4))
    lines = [",".join(f"h{i}" for i in range(ncol))]
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["row", "row", "row", "blank", "comment"]))
        if kind == "blank":
            lines.append("")
        elif kind == "comment":  # a row of its own without comment="#"
            plain = st.sampled_from([c for c in CELLS if '"' not in c])
            lines.append("#" + ",".join(draw(plain) for _ in range(ncol)))
        else:
            lines.append(",".join(draw(st.sampled_from(CELLS)) for _ in range(ncol)))
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))
    kw = {}
    if draw(st.booleans()):
        kw["comment"] = "#"
    skip = draw(st.sampled_from([None, 1, [0], [2], [1, 2], "callable"]))
    if skip == "callable":
        kw["skiprows"] = lambda i: i == 3
    elif skip is not None:
        kw["skiprows"] = skip
    nrows = draw(st.sampled_from([None, 0, 1, 2, 4]))
    if nrows is not None:
        kw["nrows"] = nrows
    header = draw(st.sampled_from(["default", None, 0, 1]))
    if header != "default":
        kw["header"] = header
    if draw(st.booleans()):
        kw["names"] = [f"n{i}" for i in range(ncol)]
    usecols = draw(st.sampled_from([None, [0], [ncol - 1, 0]]))
    if usecols is not None:
        kw["usecols"] = usecols
    na = draw(st.sampled_from([None, ["a"], ["x y", "é"], "1"]))
    if na is not None:
        kw["na_values"] = na
    if draw(st.booleans()):
        kw["keep_default_na"] = False
    return text.encode(), kw


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pandas_case())
def test_read_arrow_keywords_against_pandas(case):
    data, kw = case
    pkw = dict(kw)
    if "na_values" not in kw:
        pkw["keep_default_na"] = False  # text columns hold every value's text
    try:
        w = pd.read_csv(io.BytesIO(data), dtype=str, **pkw)
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        return  # no header row there (see docs/python-api.md)
    except ValueError:
        return  # pandas' own failure (a comment cut inside a row, with usecols)
    # A data row made the header (skiprows, header=1) may repeat a name or
    # be shorter than the rows after it; pandas then mangles the names or
    # makes the first columns an index (see docs/python-api.md).
    names = [str(c) for c in w.columns]
    assume(isinstance(w.index, pd.RangeIndex))
    assume(not any(n.startswith("Unnamed: ") or re.search(r"\.\d+$", n) for n in names))
    t = pa.table(fastcsv.read_arrow(data, **kw))
    assert t.column_names == [str(c) for c in w.columns]
    want = w.astype(object).where(w.notna(), None).values.tolist()
    assert [list(r) for r in zip(*(c.to_pylist() for c in t.columns))] == want


def test_errors_from_a_text_file_name_it(tmp_path):
    # A text file is read whole in Python; its name was left out of the
    # errors, where a binary file's (and a path's) is given.
    p = tmp_path / "named.csv"
    p.write_text("a,b\n1,2\n1,2,3\n")
    for mode in ("r", "rb"):
        with open(p, mode) as f, pytest.raises(fastcsv.Error, match=r"named\.csv:3: record 2, byte \d+: found"):
            fastcsv.read_arrow(f).read_all()
    # io.StringIO has no name.
    with pytest.raises(fastcsv.Error, match=r"^line 3: record 2"):
        fastcsv.read_arrow(io.StringIO(p.read_text())).read_all()
