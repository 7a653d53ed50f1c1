"""Differences from ``pandas.read_csv`` found by the Python parity hunt:
each pandas keyword ``read_arrow`` takes either does what pandas does, or
is refused with a clear error (never silently read another way)."""

from __future__ import annotations

import io

import pytest

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

import fastcsv  # noqa: E402
import fastcsv.dask  # noqa: E402


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
