"""``read_arrow``'s pandas keywords on small tricky inputs, side by side
with ``pandas.read_csv``: the answers fastcsv documents as pandas', and a
clear error where it documents another."""

from __future__ import annotations

import io

import pytest

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

import fastcsv  # noqa: E402


def table(source, **kw):
    return pa.table(fastcsv.read_arrow(source, **kw))


def write(tmp_path, text, name="f.csv"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


# --- nrows=0: the columns, and no row ---


@pytest.mark.parametrize(
    "text", ["1,2,3\n4,5,6\n", "1,2,3", "\n\n1,2,3\n4,5\n", "1,2,3\r\n"]
)
def test_nrows_0_without_a_header_has_the_first_rows_columns(tmp_path, text):
    # The width is the first row's, as pandas counts it, though no row is
    # read.
    p = write(tmp_path, text)
    want = pd.read_csv(p, header=None, nrows=0)
    t = table(p, header=None, nrows=0)
    assert t.num_rows == 0
    assert t.column_names == [str(c) for c in want.columns] == ["0", "1", "2"]


def test_nrows_0_after_skipped_and_commented_rows(tmp_path):
    p = write(tmp_path, "skip\n#c\n1,2\n3,4\n")
    kw = dict(header=None, nrows=0, skiprows=1, comment="#")
    want = pd.read_csv(p, **kw)
    t = table(p, **kw)
    assert (t.num_rows, t.column_names) == (0, [str(c) for c in want.columns])
    assert t.column_names == ["0", "1"]


def test_nrows_0_counts_the_fields_a_comment_leaves(tmp_path):
    p = write(tmp_path, "#top\n1,2#c,d\n3,4\n")
    want = pd.read_csv(p, header=None, nrows=0, comment="#")
    t = table(p, header=None, nrows=0, comment="#")
    assert t.column_names == [str(c) for c in want.columns] == ["0", "1"]
    assert table(p, header=None, nrows=1, comment="#").column_names == ["0", "1"]


def test_nrows_0_with_usecols_and_dtype(tmp_path):
    p = write(tmp_path, "1,2,3\n4,5,6\n")
    want = pd.read_csv(p, header=None, nrows=0, usecols=[2, 0])
    t = table(p, header=None, nrows=0, usecols=[2, 0])
    assert t.column_names == [str(c) for c in want.columns] == ["0", "2"]
    # A callable is given each column's index, as pandas gives it.
    t = table(p, header=None, nrows=0, usecols=lambda i: i > 0)
    assert t.column_names == ["1", "2"]
    t = table(p, header=None, nrows=0, dtype="int64")
    assert t.schema.types == [pa.int64()] * 3 and t.num_rows == 0


def test_nrows_0_with_a_header_or_names(tmp_path):
    p = write(tmp_path, "a,b,c\n1,2,3\n")
    assert table(p, nrows=0).column_names == ["a", "b", "c"]
    assert table(p, nrows=0, usecols=["c", "a"]).column_names == ["a", "c"]
    t = table(p, nrows=0, names=["x", "y", "z"], header=0)
    assert (t.num_rows, t.column_names) == (0, ["x", "y", "z"])
    t = table(p, nrows=0, names=["x", "y", "z"])
    assert (t.num_rows, t.column_names) == (0, ["x", "y", "z"])


def test_nrows_0_of_an_empty_input_has_no_columns(tmp_path):
    p = write(tmp_path, "\n\n")
    t = table(p, header=None, nrows=0)
    assert (t.num_rows, t.column_names) == (0, [])


def test_nrows_0_never_parses_past_the_first_row(tmp_path):
    # The first row gives the width; an error in a later one is not met.
    p = write(tmp_path, '1,2\n"x"y,3\n')
    t = table(p, header=None, nrows=0, strict=True)
    assert t.column_names == ["0", "1"]


# --- names= shorter than the rows ---


def test_names_shorter_than_a_row_names_what_happened(tmp_path):
    # pandas makes the extra leading columns an index; fastcsv documents a
    # longer-row error, which says where, and how many fields against how
    # many names (not "the previous record", which there is none of).
    # The first rows are read by the call (as a header row is), so the
    # error comes from it, not from the stream's consumer.
    p = write(tmp_path, "1,2,3\n4,5,6\n")
    for source in (p, str(p), p.read_bytes(), io.BytesIO(p.read_bytes())):
        with pytest.raises(fastcsv.Error) as ei:
            fastcsv.read_arrow(source, names=["x", "y"])
        where = f"{p}:1" if not isinstance(source, (bytes, io.BytesIO)) else "line 1"
        assert str(ei.value) == (
            f"{where}: record 0, byte 0: found record with 3 fields, but 2 column names were given"
        )
    # On several threads too (a file of 8 MiB or more is cut into parts).
    big = write(tmp_path, "1,2,3\n" + "4,5\n" * (3 << 20), "big.csv")
    with pytest.raises(fastcsv.Error, match=r":1: record 0, byte 0: found record with 3 fields"):
        fastcsv.read_arrow(big, names=["x", "y"], threads=2)
    # A later row, with header=0 replaced by the names (the header row is
    # emptied before the parse; the line, record and byte are the file's).
    p = write(tmp_path, "a,b\n1,2\n3,4,5\n")
    with pytest.raises(fastcsv.Error, match=r":3: record 2, byte 8: found record with 3 fields, "
                       "but 2 column names were given$"):
        fastcsv.read_arrow(p, names=["x", "y"], header=0).read_all()


def test_a_longer_row_names_the_header_row(tmp_path):
    p = write(tmp_path, "a,b\n1,2\n3,4,5\n")
    with pytest.raises(fastcsv.Error, match=r":3: record 2, byte 8: found record with 3 fields, "
                       "but the header row has 2 fields$"):
        fastcsv.read_arrow(p).read_all()
    p = write(tmp_path, "1,2\n3,4,5\n")
    with pytest.raises(fastcsv.Error, match=r":2: record 1, byte 4: found record with 3 fields, "
                       "but the first record has 2 fields$"):
        fastcsv.read_arrow(p, header=None).read_all()


def test_a_later_part_names_the_header_row(tmp_path):
    # The names of a later part of a split file are the header row's.
    p = write(tmp_path, "a,b\n" + "1,2\n" * 300 + "3,4,5\n")
    parts = fastcsv.split(p, size=256)
    assert len(parts) > 1
    with pytest.raises(fastcsv.Error, match=r":302: record 301, byte 1204: found record with 3 "
                       "fields, but the header row has 2 fields$"):
        fastcsv.read_arrow(parts[-1]).read_all()


# --- byte offsets: a bool is no place in a file ---


def test_summarize_refuses_a_bool_where_it_takes_a_byte_offset(tmp_path):
    # int() takes True as 1; a byte offset given as a bool is a mistake,
    # refused as split(size=True) is.
    p = write(tmp_path, "a,b\n1,2\n")
    for start, end in [(False, 8), (0, True), (True, 8)]:
        with pytest.raises(TypeError, match="must be int, not bool"):
            fastcsv.summarize(p, start, end)
    with pytest.raises(TypeError, match="end must be int, not float"):
        fastcsv.summarize(p, 0, 8.0)
    with pytest.raises(ValueError, match="start must be 0 or more, not -1"):
        fastcsv.summarize(p, -1, 8)
    # Anything with __index__ that is not a bool is still an offset.
    np = pytest.importorskip("numpy")
    assert fastcsv.summarize(p, np.int64(0), np.int64(8)) == fastcsv.summarize(p, 0, 8)


def test_a_part_refuses_a_bool(tmp_path):
    p = write(tmp_path, "a,b\n1,2\n")
    with pytest.raises(TypeError, match="end must be int, not bool"):
        fastcsv.Part(str(p), 0, 0, True, 0, 0)
    with pytest.raises(TypeError, match="index must be int, not bool"):
        fastcsv.Part(str(p), False, 0, 8, 0, 0)
    np = pytest.importorskip("numpy")
    part = fastcsv.Part(str(p), 0, np.int64(0), np.int64(8), 0, 0)
    assert type(part.end) is int and fastcsv.read(part) == [["a", "b"], ["1", "2"]]


def test_resolve_refuses_one_summary_for_a_list(tmp_path):
    # A bytes object is an iterable of ints: each was taken as a summary
    # of that many zero bytes.
    p = write(tmp_path, "a,b\n1,2\n")
    with pytest.raises(TypeError, match="a list of summaries"):
        fastcsv.resolve(p, fastcsv.summarize(p, 0, 8))
    assert fastcsv.resolve(p, [fastcsv.summarize(p, 0, 8)]) == fastcsv.split(p)


# --- a data error through pyarrow's C stream import ---


@pytest.mark.parametrize(
    "text, kw, message",
    [
        ("a,b\n1,2\n3,4,5\n", {}, "8: found record with 3 fields, but the header row has 2 fields"),
        ("a,b\n1,2\nx,4\n", {"types": {"a": "int64"}}, '8: field 0 is not a valid int64: "x"'),
        (b"a,b\n1,2\n\xff,4\n", {}, "8: invalid UTF-8 in field 0 at byte 0 of the field"),
        # A parse error is at the byte where it is found.
        ('a,b\n1,2\n"3"x,4\n', {"strict": True}, "11: ',' expected after '\"'"),
    ],
)
def test_pyarrow_raises_a_data_error_as_arrow_invalid_with_the_whole_message(
    tmp_path, text, kw, message
):
    # The stream's get_last_error hands pyarrow fastcsv's whole message,
    # and its error code (EINVAL) makes it pyarrow's class for bad data, as
    # pyarrow.csv.read_csv raises it, rather than OSError.
    p = write(tmp_path, text)
    whole = f"{p}:3: record 2, byte {message}"
    for threads in (1, 2):
        with pytest.raises(pa.ArrowInvalid) as ei:
            pa.table(fastcsv.read_arrow(p, threads=threads, **kw))
        assert str(ei.value) == whole
        assert not isinstance(ei.value, OSError)
        with pytest.raises(pa.ArrowInvalid) as ei:
            pa.RecordBatchReader.from_stream(fastcsv.read_arrow(p, **kw)).read_all()
        assert str(ei.value) == whole
    # The stream's own methods keep fastcsv's class.
    with pytest.raises(fastcsv.Error) as ei:
        fastcsv.read_arrow(p, **kw).read_all()
    assert str(ei.value) == whole
    # An input without a name: "line L:".
    with pytest.raises(pa.ArrowInvalid) as ei:
        pa.table(fastcsv.read_arrow(p.read_bytes(), **kw))
    assert str(ei.value) == f"line 3: record 2, byte {message}"


def test_a_file_changed_while_read_is_an_oserror_with_the_whole_message(tmp_path):
    import os

    p = write(tmp_path, "a,b\n" + "".join(f"{i},{i}\n" for i in range(50_000)))
    r = pa.RecordBatchReader.from_stream(fastcsv.read_arrow(p, batch_rows=1000, threads=1))
    r.read_next_batch()
    os.truncate(p, 100)
    with pytest.raises(OSError) as ei:
        r.read_all()
    assert not isinstance(ei.value, pa.ArrowInvalid)
    assert str(ei.value) == f"{p}:1002: record 1001, byte 7784: file changed while reading"


# --- arguments that were taken silently for something else ---

D = "a,b\ny,1\nn,2\nyes,3\n"


def test_skiprows_as_a_str_or_a_list_of_strs_is_a_type_error(tmp_path):
    # set("1") is {"1"}, which no row number equals: the rows were all
    # read, silently (pandas: TypeError).
    p = write(tmp_path, D)
    for bad, shown in [("1", "not str"), (["1"], "holds '1'"), ([None], "holds None"), ([True], "holds True")]:
        with pytest.raises(TypeError, match=f"skiprows must be .*{shown}"):
            fastcsv.read_arrow(p, skiprows=bad)
    # Row numbers in any collection, a whole float among them, as pandas.
    for good in ([1], {1}, (1,), [1.0], range(1, 2)):
        got = table(p, skiprows=good).column("a").to_pylist()
        assert got == list(pd.read_csv(p, skiprows=good, dtype=str)["a"]) == ["n", "yes"]


def test_names_as_a_set_is_refused(tmp_path):
    # A set's order is not the columns' (pandas: "Names should be an
    # ordered collection"); the names were given in whatever order it had.
    p = write(tmp_path, D)
    with pytest.raises(TypeError, match="names must be an ordered collection .*not set"):
        fastcsv.read_arrow(p, names={"x", "y"})
    with pytest.raises(TypeError, match="not frozenset"):
        fastcsv.read_arrow(p, names=frozenset(["x", "y"]))
    assert table(p, names=("x", "y"), header=0).column_names == ["x", "y"]


def test_one_na_value_that_is_not_a_str(tmp_path):
    # pandas takes a number as its text; it was a TypeError that said
    # "'int' object is not iterable".
    p = write(tmp_path, "a,b\n5,1\n6,2\n")
    t = table(p, na_values=5, keep_default_na=False)
    want = pd.read_csv(p, na_values=5, keep_default_na=False, dtype=str)
    assert t.column("a").to_pylist() == [None, "6"]
    assert want["a"].isna().tolist() == [True, False]


@pytest.mark.parametrize("name", ["keep_default_na", "string_view", "strings_can_be_null"])
def test_a_flag_that_is_not_a_bool_is_refused(tmp_path, name):
    # "no" is true: keep_default_na="no" kept the default spellings
    # (pandas refuses it).
    p = write(tmp_path, "a\nNA\n")
    with pytest.raises(TypeError, match=f"{name} must be a bool, not str"):
        fastcsv.read_arrow(p, **{name: "no"})
    with pytest.raises(TypeError, match=f"{name} must be a bool, not NoneType"):
        fastcsv.read_arrow(p, **{name: None})
    for ok in (True, False, 0, 1):
        fastcsv.read_arrow(p, **{name: ok}).read_all()
    np = pytest.importorskip("numpy")
    fastcsv.read_arrow(p, **{name: np.bool_(True)}).read_all()


# --- read_columns: a longer row's error has its place ---


def test_read_columns_says_where_a_longer_row_is(tmp_path):
    # It said "row 2 has 3 fields, the header has 2": no path, line or
    # byte, and a row count that skips empty rows.
    import csv
    import io

    text = "a,b\n1,2\n\n3,4,5\n"
    p = write(tmp_path, text)
    msg = "found record with 3 fields, but the header row has 2 fields"
    with pytest.raises(csv.Error) as ei:
        fastcsv.read_columns(p)
    assert str(ei.value) == f"{p}:4: record 3, byte 9: {msg}"
    with pytest.raises(csv.Error) as ei:
        fastcsv.read_columns(text.encode())
    assert str(ei.value) == f"line 4: record 3, byte 9: {msg}"
    # Text read through csv: the line (the byte would count nothing the
    # caller gave).
    for src in (io.StringIO(text, newline=""), text.splitlines(True)):
        with pytest.raises(csv.Error) as ei:
            fastcsv.read_columns(src)
        assert str(ei.value) == f"line 4: {msg}"
    # A dialect the native reader hands to csv (a delimiter that is not
    # ASCII) names the file too.
    q = write(tmp_path, text.replace(",", "\u00e9"), "e.csv")
    with pytest.raises(csv.Error) as ei:
        fastcsv.read_columns(q, delimiter="\u00e9")
    assert str(ei.value) == f"{q}:4: {msg}"


def test_dask_read_csv_refuses_a_flag_that_is_not_a_bool(tmp_path):
    # strings_can_be_null="no" made empty values null (a true str).
    pytest.importorskip("dask.dataframe")
    import fastcsv.dask

    p = write(tmp_path, "a,b\n,1\n")
    with pytest.raises(TypeError, match="strings_can_be_null must be a bool, not str"):
        fastcsv.dask.read_csv(str(p), strings_can_be_null="no")
    df = fastcsv.dask.read_csv(str(p), strings_can_be_null=False).compute()
    assert df["a"].tolist() == [""]


def test_the_native_keywords_refuse_a_bool_for_a_size_and_a_str_for_a_flag(tmp_path):
    # buffer_size=True was a one-byte buffer and intern="no" was on, both
    # silently.
    p = write(tmp_path, "a,b\n1,2\n")
    with pytest.raises(TypeError, match="buffer_size must be int, not bool"):
        fastcsv.read(p, buffer_size=True)
    with pytest.raises(TypeError, match="intern must be a bool, not str"):
        fastcsv.read(p, intern="no")
    assert fastcsv.read(p, buffer_size=1, intern=1) == [["a", "b"], ["1", "2"]]
    assert fastcsv.read_columns(p, intern=False) == {"a": ["1"], "b": ["2"]}


# --- dtype= as numpy and pandas spell it ---


def test_numpy_scalar_types_and_type_codes_as_dtype(tmp_path):
    # dtype=np.float32 (the commonest spelling in pandas code) and 'i8'
    # were "cannot read a column as dtype", though numpy dtypes are taken
    # by their name.
    np = pytest.importorskip("numpy")
    p = write(tmp_path, "a,b\n1,2\n3,4\n")
    for d, arrow in [
        (np.float32, "float32"),
        (np.int64, "int64"),
        (np.str_, "utf8"),
        (np.object_, "utf8"),
        ("i8", "int64"),
        ("f8", "float64"),
        ("<i4", "int32"),
        ("O", "utf8"),
        ("U", "utf8"),
        ("double", "float64"),
    ]:
        s = fastcsv.read_arrow(p, dtype=d)
        assert s.column_types == [arrow, arrow], d
        want = pd.read_csv(p, dtype=d)
        got = pa.table(s).to_pandas()
        assert got.astype(object).values.tolist() == want.astype(object).values.tolist(), d
    assert fastcsv.read_arrow(b"a\ntrue\n", dtype={"a": np.bool_}).column_types == ["bool"]
    # A numpy dtype there is no Arrow column for is still refused.
    for d in ("float16", np.complex128, "S", np.datetime64):
        with pytest.raises(ValueError, match="cannot read a column as dtype"):
            fastcsv.read_arrow(p, dtype=d)


def test_pandas_arrow_dtype_is_its_pyarrow_type(tmp_path):
    p = write(tmp_path, "a,b\n1,x\n")
    s = fastcsv.read_arrow(p, dtype={"a": pd.ArrowDtype(pa.int32())})
    assert s.column_types == ["int32", "utf8"]
    assert pa.table(s).column("a").to_pylist() == [1]


def test_numpy_ints_as_nrows_and_header(tmp_path):
    # pandas takes them; nrows=np.int64(1) was "nrows must be an int" and
    # header=np.int64(0) "header must be bool, int or None".
    np = pytest.importorskip("numpy")
    p = write(tmp_path, "x\na\n1\n2\n")
    assert table(p, nrows=np.int64(1)).to_pylist() == [{"x": "a"}]
    assert table(p, header=np.int64(1)).to_pylist() == [{"a": "1"}, {"a": "2"}]
    assert table(p, header=np.int64(1)).to_pylist() == pd.read_csv(
        p, header=np.int64(1), dtype=str
    ).to_dict("records")
    for bad in (True, 1.5, "1", -1):
        with pytest.raises(ValueError, match="nrows must be an int, 0 or more"):
            fastcsv.read_arrow(p, nrows=bad)
    with pytest.raises(TypeError, match="header must be bool, int or None, not float"):
        fastcsv.read_arrow(p, header=1.0)


def test_a_regular_expression_sep_is_refused_by_its_name(tmp_path):
    # It was csv's '"delimiter" must be a 1-character string', naming a
    # keyword the caller did not give.
    p = write(tmp_path, "a b\n1 2\n")
    for sep in (r"\s+", ",,", ""):
        with pytest.raises(TypeError, match=r"read_arrow\(\) takes sep as one character, not "):
            fastcsv.read_arrow(p, sep=sep)
    assert table(p, sep=" ").column_names == ["a", "b"]


def test_split_takes_numpy_ints_as_summarize_does(tmp_path):
    # size=np.int64(...) was "size must be int, not int64", where
    # summarize's offsets take it.
    np = pytest.importorskip("numpy")
    p = write(tmp_path, "a,b\n" + "1,2\n" * 100)
    assert fastcsv.split(p, size=np.int64(64)) == fastcsv.split(p, size=64)
    with pytest.raises(TypeError, match="size must be int, not bool"):
        fastcsv.split(p, size=True)
    with pytest.raises(TypeError, match="size must be int, not float"):
        fastcsv.split(p, size=64.0)
    for bad in (0, -1):
        with pytest.raises(ValueError):
            fastcsv.split(p, size=bad)


# --- true_values / false_values without types ---


def test_boolean_spellings_without_types_are_refused():
    # pandas infers types by default, so a column of yes/no with
    # true_values/false_values is bool; fastcsv's columns are text unless
    # types are asked for, where the spellings would do nothing: an error
    # that says so, not the spellings silently ignored.
    data = b"a,b\nyes,1\nno,0\n"
    want = pd.read_csv(io.BytesIO(data), true_values=["yes"], false_values=["no"])
    assert str(want.dtypes["a"]) == "bool"
    for kw in ({"true_values": ["yes"]}, {"false_values": ["no"]},
               {"true_values": ["yes"], "false_values": ["no"]}):
        with pytest.raises(ValueError, match=r"read_arrow\(\) reads every column as text .*types='infer'"):
            fastcsv.read_arrow(data, **kw)
    # With types="infer" (or a dtype) the column is bool, as pandas reads it.
    t = table(data, types="infer", true_values=["yes"], false_values=["no"])
    assert t.column("a").to_pylist() == want["a"].tolist() == [True, False]
    assert t.column("b").to_pylist() == want["b"].tolist() == [1, 0]
    t = table(data, dtype={"a": "bool"}, true_values=["yes"], false_values=["no"])
    assert t.column("a").to_pylist() == [True, False]


# --- positions in errors after rows rewritten in Python ---

LONG = "found record with 3 fields, but the header row has 2 fields"


@pytest.mark.parametrize(
    "data, kw, record",
    [
        # Rows left out, each their line end alone to the parser.
        (b"a,b\nskip,me\n1,2\n3,4,5\n", {"skiprows": [1]}, 3),
        (b"junk\na,b\n1,2\n3,4,5\n", {"header": 1}, 3),
        (b"junk\na,b\n1,2\n3,4,5\n", {"skiprows": 1}, 3),
        (b"a,b\n# note\n1,2 # x\n3,4,5\n", {"comment": "#"}, 3),
        (b"a,b\r\n# note\r\n1,2 #x\r\n3,4,5\r\n", {"comment": "#", "nrows": 9}, 3),
        # A row left out that spans lines is one record of the file.
        (b'a,b\n"1\n2",2\n3,4\n3,4,5\n', {"skiprows": [1]}, 3),
        (b'a,b\n"1\r\n\r\n2",2\n3,4\n3,4,5\n', {"skiprows": lambda i: i == 1}, 3),
        # A BOM, and other encodings: the file's bytes, not UTF-8's.
        (b"\xef\xbb\xbfa,b\n1,2\n3,4,5\n", {"nrows": 5}, 2),
        ("a,b\n\u00e9\u00e9,2\n3,4,5\n".encode("latin-1"), {"encoding": "latin-1"}, 2),
        ("a,b\n\u00e9,\u20ac\n3,4,5\n".encode("cp1252"), {"encoding": "cp1252"}, 2),
        ("a,b\n\u00e9,\u20ac\n3,4,5\n".encode("cp1252"), {"encoding": "cp1252", "skiprows": [9]}, 2),
        ("a,b\n\u00e9,2\n3,4,5\n".encode("utf-16"), {"encoding": "utf-16"}, 2),
        ("a,b\n\u00e9,2\n3,4,5\n".encode("utf-16-le"), {"encoding": "utf-16-le", "nrows": 9}, 2),
        ("a,b\nx\n\u00e9,2\n3,4,5\n".encode("latin-1"), {"encoding": "latin-1", "skiprows": [1]}, 3),
        # errors= other than strict, where no byte was replaced.
        (b"a,b\nskip,me\n1,2\n3,4,5\n", {"skiprows": [1], "errors": "replace"}, 3),
    ],
)
def test_errors_after_rewritten_rows_name_the_files_place(tmp_path, data, kw, record):
    # skiprows, comment, header=N, nrows and other encodings are done in
    # Python before the parse; the error still names the line, record and
    # byte of the file (the byte offset counted the rewritten UTF-8 text).
    p = write(tmp_path, data)
    text = data.decode(kw.get("encoding", "utf-8"))
    enc = kw.get("encoding", "utf-8")
    start = text.index("3,4,5")
    byte = len(text[:start].encode(enc))  # utf-16's BOM included
    line = len(io.StringIO(text[:start], newline="").readlines()) + 1
    for source, where in ((p, f"{p}:{line}"), (data, f"line {line}")):
        with pytest.raises(fastcsv.Error) as ei:
            fastcsv.read_arrow(source, **kw).read_all()
        assert str(ei.value) == f"{where}: record {record}, byte {byte}: {LONG}"


def test_a_value_error_after_rewritten_rows_names_the_files_byte(tmp_path):
    data = b"a,b\nskip,me\n1,2\n3,x\n"
    for kw in ({"types": {"b": "int64"}}, {"dtype": {"b": "int64"}}):
        with pytest.raises(fastcsv.Error, match=r'^line 4: record 3, byte 16: field 1 is not a valid int64: "x"$'):
            fastcsv.read_arrow(data, skiprows=[1], **kw).read_all()
    # Not UTF-8, found by the native reader at the same place.
    with pytest.raises(fastcsv.Error, match=r"^line 4: record 3, byte 16: invalid UTF-8"):
        fastcsv.read_arrow(b"a,b\nskip,me\n1,2\n3,\xff\n", skiprows=[1]).read_all()
    # A parse error inside its record: at its byte in the file.
    with pytest.raises(fastcsv.Error, match=r"^line 4: record 3, byte 21: ',' expected after"):
        fastcsv.read_arrow(b'a,b\nskip,me\n1,2\n3,"4"x\n', skiprows=[1], strict=True).read_all()
    # In a file of one byte a character, at its byte too (characters of
    # two and three bytes in UTF-8 before it, in the record and before).
    data = '\u00e9,b\n\u20ac,2\n\u00e9\u20ac,"4"x\n'.encode("cp1252")
    byte = data.index(b"x")
    with pytest.raises(fastcsv.Error, match=rf"^line 3: record 2, byte {byte}: ',' expected after"):
        fastcsv.read_arrow(data, encoding="cp1252", strict=True).read_all()


# --- na_values with keep_default_na ---


@pytest.mark.parametrize(
    "kw",
    [
        {"na_values": ["x"]},
        {"na_values": ["x"], "keep_default_na": False},
        {"na_values": ["x", ""], "keep_default_na": False},
        {"na_values": "None", "keep_default_na": False},
        {"keep_default_na": False},
        {},
    ],
)
def test_na_values_and_keep_default_na_read_as_pandas_reads_them(kw):
    # A null spelling is null in text columns too, as in pandas; with
    # keep_default_na=False the empty value stays text in a text column
    # and is null in a nullable integer one (pandas' Int64 reads it so).
    data = b"s,n\nx,1\nNA,\n,3\nNone,4\n"
    want = pd.read_csv(io.BytesIO(data), dtype={"s": "string", "n": "Int64"}, **kw)
    got = fastcsv.read_arrow(data, dtype={"s": "string", "n": "Int64"}, **kw).read_all()
    n = [None if v is pd.NA else int(v) for v in want["n"]]
    assert got.column("n").to_pylist() == n
    s = [None if v is pd.NA else v for v in want["s"]]
    if "na_values" in kw:
        assert got.column("s").to_pylist() == s
    else:
        # Without na_values text columns hold every value's text (a
        # documented difference: pandas reads NA, "" and None as NaN).
        assert got.column("s").to_pylist() == ["x", "NA", "", "None"]


# --- header="infer", comments after spaces or opening quotes, encoding_errors ---


def test_header_infer_is_pandas_default_spelt_out():
    data = b"a,b\n1,2\n"
    assert table(data, header="infer").column_names == list(pd.read_csv(io.BytesIO(data), header="infer").columns)
    with pytest.raises(TypeError, match="header must be bool, int or None, not str"):
        fastcsv.read_arrow(data, header="yes")


@pytest.mark.parametrize(
    "data, kw",
    [
        # Spaces before a comment are a row (pandas' C parser keeps it).
        (b"a,b\n  #1,2\n3,4\n", {}),
        (b"a,b\n #x\n3,4\n", {"skipinitialspace": True}),
        # A quote in a trailing comment opened a field spanning lines to
        # csv: the line after it is a row of its own, not left out.
        (b'a,b\n1,2 #x,"p\nq"\n3,4\n', {}),
        (b'a,b\n1,"x\ny" #x,"p\nq"\n3,4\n', {}),
        (b'a,b\n#x,"p\nq"\n3,4\n', {}),
    ],
)
def test_comment_rows_are_those_pandas_reads(data, kw):
    want = pd.read_csv(io.BytesIO(data), comment="#", dtype=str, keep_default_na=False, **kw)
    got = table(data, comment="#", **kw)
    assert got.to_pydict() == {k: want[k].tolist() for k in want.columns}


def test_encoding_errors_is_pandas_name_for_errors():
    data = b"a,b\n1,\xff\n"
    want = pd.read_csv(io.BytesIO(data), encoding_errors="replace", dtype=str)
    assert table(data, encoding_errors="replace").column("b").to_pylist() == want["b"].tolist() == ["\ufffd"]
    with pytest.raises(TypeError, match="takes errors or encoding_errors, not both"):
        fastcsv.read_arrow(data, encoding_errors="replace", errors="strict")
    # The default, strict: bytes that are not UTF-8 are an error with their place.
    with pytest.raises(fastcsv.Error, match=r"^line 2: record 1, byte 4: invalid UTF-8"):
        fastcsv.read_arrow(data, encoding_errors="strict").read_all()


# --- na_values as numbers, usecols as numpy's ints ---


@pytest.mark.parametrize("na", [["1"], [1], [1.0], ["1.0"], 1, [-999], [True]])
def test_a_whole_number_in_na_values_is_both_its_spellings(na):
    # pandas reads na_values=[1] (or "1", or 1.0) as "1" and "1.0": a file
    # writing -999.0 for a missing -999 was read with its values before.
    data = b"a,b\n1,x\n1.0,y\n1.00,z\n-999.0,w\nTrue,v\n"
    want = pd.read_csv(io.BytesIO(data), na_values=na, keep_default_na=False, dtype=str)
    got = table(data, na_values=na, keep_default_na=False)
    assert got.column("a").to_pylist() == [None if v is pd.NA or v != v else v for v in want["a"]]


def test_usecols_takes_numpy_ints():
    np = pytest.importorskip("numpy")
    data = b"a,b,c\n1,2,3\n"
    want = pd.read_csv(io.BytesIO(data), usecols=np.array([2, 0]))
    assert table(data, usecols=np.array([2, 0])).column_names == list(want.columns) == ["a", "c"]
    assert table(data, usecols=[np.int64(1)]).column_names == ["b"]


def test_a_comment_that_is_the_delimiter_or_quote_is_refused():
    # comment="," cut every row at its first delimiter: the header and the
    # rows lost every column but the first, without a word.
    data = b"a,b\n1,2\n"
    for kw in ({"comment": ","}, {"comment": '"'}, {"comment": "\n"}, {"comment": ";", "sep": ";"},
               {"comment": "\\", "escapechar": "\\"}):
        with pytest.raises(ValueError, match="comment must differ from the delimiter"):
            fastcsv.read_arrow(data, **kw)


def test_dtype_reads_pandas_null_spellings():
    # With pandas' dtype=, "None" and "<NA>" (pandas' spellings, not
    # pyarrow's) are nulls in typed columns, as pandas reads them; they
    # were "not a valid int64". types= keeps pyarrow's.
    data = b"a,b\nNone,x\n<NA>,y\n1,z\n"
    want = pd.read_csv(io.BytesIO(data), dtype={"a": "Int64"})
    got = table(data, dtype={"a": "Int64"})
    assert got.column("a").to_pylist() == [None if v is pd.NA else v for v in want["a"]] == [None, None, 1]
    with pytest.raises(fastcsv.Error, match='field 0 is not a valid int64: "None"'):
        fastcsv.read_arrow(data, types={"a": "int64"}).read_all()
    # Text columns still hold their text (no na_values).
    assert table(b"a,b\n1,None\n", dtype={"a": "Int64"}).column("b").to_pylist() == ["None"]
