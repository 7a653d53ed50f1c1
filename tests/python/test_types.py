"""read_arrow(types="infer"): types decided on every value of each column
(issue 37, item 2), against pyarrow's and pandas' readers."""

from __future__ import annotations

import io
import random
import re

import pytest

import fastcsv

from test_arrow import (
    _NULLS,
    TOKENS,
    consume_typed,
    random_table,
    same,
    to_csv,
)

pa = pytest.importorskip("pyarrow")
pacsv = pytest.importorskip("pyarrow.csv")

LATE = b"a\n" + b"1\n" * 70000 + b"1.5\n"


def test_a_late_float_widens_the_column_as_pandas_does():
    pd = pytest.importorskip("pandas")
    s = fastcsv.read_arrow(LATE, types="infer")
    assert s.column_types == ["float64"]
    t = pa.table(s)
    want = pd.read_csv(io.BytesIO(LATE))
    assert str(want["a"].dtype) == "float64"
    assert t.column("a").to_pylist() == want["a"].tolist()
    # The schema is right from the first batch.
    batches = list(pa.RecordBatchReader.from_stream(fastcsv.read_arrow(LATE, types="infer")))
    assert len(batches) > 1
    assert all(str(b.schema.field("a").type) == "double" for b in batches)


def test_infer_rows_keeps_the_sampled_inference_and_its_failure():
    s = fastcsv.read_arrow(LATE, types="infer", infer_rows=1000)
    assert s.column_types == ["int64"]
    with pytest.raises(RuntimeError, match='line 70002: .* not a valid int64: "1.5"'):
        consume_typed(s)
    # Sampling every row is the whole column.
    assert fastcsv.read_arrow(LATE, types="infer", infer_rows=10**6).column_types == ["float64"]


def test_infer_rows_is_checked():
    with pytest.raises(ValueError, match="at least 1"):
        fastcsv.read_arrow(LATE, types="infer", infer_rows=0)
    with pytest.raises(TypeError, match="infer_rows must be int"):
        fastcsv.read_arrow(LATE, types="infer", infer_rows="10")
    with pytest.raises(TypeError, match="infer_rows must be int"):
        fastcsv.read_arrow(LATE, types="infer", infer_rows=True)
    for types in (None, {"a": "int64"}):
        with pytest.raises(ValueError, match="types='infer' only"):
            fastcsv.read_arrow(LATE, types=types, infer_rows=10)


@pytest.mark.parametrize("kind", ["bytes", "path", "file", "pipe"])
def test_every_input_is_typed_whole(tmp_path, kind):
    data = b"n,d,s\n" + b"1,2024-01-01,x\n" * 70000 + b"1.5,2024-01-01T10:00:00,\n"
    p = tmp_path / "late.csv"
    p.write_bytes(data)
    if kind == "bytes":
        src = data
    elif kind == "path":
        src = str(p)
    elif kind == "file":
        src = open(p, "rb")
    else:
        src = io.BufferedReader(io.BytesIO(data))
    try:
        t = pa.table(fastcsv.read_arrow(src, types="infer"))
    finally:
        if kind == "file":
            src.close()
    assert [str(x) for x in t.schema.types] == ["double", "timestamp[s]", "string"]
    assert t.num_rows == 70001
    assert t.column("n")[-1].as_py() == 1.5


def test_two_threads_type_the_whole_file_as_one(tmp_path):
    p = tmp_path / "big.csv"
    with open(p, "w") as f:
        f.write("n,x,flag,when,note\n")
        for i in range(400_000):
            f.write(f'{i},{i % 5},{"true" if i % 3 else "False"},2024-01-01,"n {i}"\n')
        # Each column widened by its last row, in the last part.
        f.write('0.5,x,1,2024-01-01T10:00:00.5,"z"\n')
    one = fastcsv.read_arrow(str(p), types="infer", threads=1)
    two = fastcsv.read_arrow(str(p), types="infer", threads=2, string_view=True)
    want = ["float64", "utf8", "bool", "timestamp[ns]", "utf8"]
    assert one.column_types == two.column_types == want
    a, b = pa.table(one), pa.table(two)
    assert str(b.schema.field("note").type) == "string_view"
    assert b.cast(a.schema).equals(a)
    assert a.column("x")[-1].as_py() == "x" and a.column("x")[0].as_py() == "0"


def test_an_error_ends_the_rows_after_those_before_it():
    data = b"n,s\n" + b"1,a\n" * 10 + b"2.5,b\n" + b"3,c,extra\n" + b"4.5,d\n"
    s = fastcsv.read_arrow(data, types="infer")
    # The types of the rows before the error.
    assert s.column_types == ["float64", "utf8"]
    got = []
    # A data error through the C stream: pyarrow's ArrowInvalid (EINVAL).
    with pytest.raises(pa.ArrowInvalid, match="record 12"):
        reader = pa.RecordBatchReader.from_stream(s)
        for b in reader:
            got.extend(b.column(0).to_pylist())
    assert got == [1.0] * 10 + [2.5]


def late_table(rng: random.Random, rows: int, cols: int) -> list[list[str]]:
    """A random table whose last rows may hold a wider value than the
    others (a float in ints, text in dates, ...)."""
    table = random_table(rng, rows, cols, temporal=True)
    for _ in range(rng.randrange(3)):
        i, j = rng.randrange(rows), rng.randrange(cols)
        table[i][j] = rng.choice(["1.5", "x", "2024-01-01T10:00:00", "2024-01-01", "1", "true", "-"])
    return table


@pytest.mark.parametrize("seed", range(40))
def test_pyarrow_reads_the_same_table_whole(seed):
    rng = random.Random(seed)
    rows, cols = rng.randrange(1, 3000), rng.randrange(1, 5)
    table = late_table(rng, rows, cols)
    for j in range(cols):
        if all(r[j] in _NULLS for r in table):
            table[0][j] = rng.choice(["1", "2.5", "true", "x", "2024-08-18"])
    data = to_csv([f"c{j}" for j in range(cols)], table)
    # pyarrow infers from its first block: one block holds the whole file.
    opts = pacsv.ReadOptions(block_size=1 << 26)
    theirs = pacsv.read_csv(io.BytesIO(data), read_options=opts)
    for infer_rows in (None, 10**9):
        ours = pa.table(fastcsv.read_arrow(data, types="infer", batch_rows=97, infer_rows=infer_rows))
        assert [str(t) for t in ours.schema.types] == [str(t) for t in theirs.schema.types], seed
        for a, b in zip(ours.columns, theirs.columns):
            for x, y in zip(a.to_pylist(), b.to_pylist()):
                assert same(x, y) or (x is None and y is None), (seed, x, y)


def test_tokens_in_late_rows_never_fail_the_read():
    rng = random.Random(7)
    for _ in range(30):
        cols = 3
        table = [[rng.choice(["1", "2", ""]) for _ in range(cols)] for _ in range(200)]
        for _ in range(5):
            table[rng.randrange(100, 200)][rng.randrange(cols)] = rng.choice(TOKENS)
        data = to_csv(["a", "b", "c"], table)
        s = fastcsv.read_arrow(data, types="infer", batch_rows=16)
        consume_typed(s)  # never raises


# Arrow types users name (issue 37, item 3), against pyarrow's reader.

NAMED = [
    ("int8", "a\n1\n-128\n127\n\n0x7F\n"),
    ("int16", "a\n-32768\n0x1FF\nNA\n"),
    ("int32", "a\n2147483647\n-5\n"),
    ("int64", "a\n9223372036854775807\n"),
    ("uint8", "a\n255\n 0 \n"),
    ("uint16", "a\n65535\n"),
    ("uint32", "a\n4294967295\n"),
    ("uint64", "a\n18446744073709551615\n0xFFFFFFFFFFFFFFFF\n"),
    ("float", "a\n1.5\n0.1\n3.4e39\nNaN\n-inf\n"),
    ("double", "a\n0.1\n"),
    ("bool", "a\ntrue\n0\n\n"),
    ("string", "a\nx\n\nNA\n"),
    ("large_string", "a\nx\n\nNA\n"),
    ("dictionary<values=string, indices=int32, ordered=0>", "a\nx\ny\nx\n\n"),
    ("decimal128(10, 2)", "a\n1.2\n-3\n 4.5 \n1e2\n1.230\n\n"),
    ("decimal128(5, -2)", "a\n1200\n"),
    ("date32[day]", "a\n2024-08-18\n\n"),
    ("time32[s]", "a\n10:00\n 23:59:59\n"),
    ("time32[ms]", "a\n10:00:00.5\n"),
    ("time64[us]", "a\n10:00:00.123456\n"),
    ("time64[ns]", "a\n10:00:00.123456789\n"),
    ("timestamp[s]", "a\n2024-01-01T10:00:00\n2024-01-01\n"),
    ("timestamp[ms]", "a\n2024-01-01T10:00:00.1\n"),
    ("timestamp[us]", "a\n2024-01-01 10:00:00.123456\n"),
    ("timestamp[ns]", "a\n2024-01-01T10:00:00.123456789\n"),
    ("timestamp[s, tz=UTC]", "a\n2024-01-01T10:00:00Z\n"),
    ("timestamp[us, tz=UTC]", "a\n2024-01-01T10:00:00.5+01:00\n"),
    ("timestamp[ms, tz=America/New_York]", "a\n2024-01-01T10:00:00Z\n"),
]


def pa_type(name: str):
    """The pyarrow type named ``name``."""
    import re as _re

    if m := _re.fullmatch(r"decimal128\((\d+), (-?\d+)\)", name):
        return pa.decimal128(int(m[1]), int(m[2]))
    if m := _re.fullmatch(r"timestamp\[(\w+)(?:, tz=(.+))?\]", name):
        return pa.timestamp(m[1], tz=m[2])
    if m := _re.fullmatch(r"time(32|64)\[(\w+)\]", name):
        return (pa.time32 if m[1] == "32" else pa.time64)(m[2])
    if name.startswith("dictionary"):
        return pa.dictionary(pa.int32(), pa.string())
    return {"date32[day]": pa.date32(), "bool": pa.bool_()}.get(name) or pa.type_for_alias(name)


@pytest.mark.parametrize("name,text", NAMED)
@pytest.mark.parametrize("spelled", ["object", "string"])
def test_each_named_type_is_pyarrows(name, text, spelled):
    ty = pa_type(name)
    assert str(ty) == name
    data = text.encode()
    given = ty if spelled == "object" else name
    ours = pa.table(fastcsv.read_arrow(data, types={"a": given}))
    theirs = pacsv.read_csv(io.BytesIO(data), convert_options=pacsv.ConvertOptions(column_types={"a": ty}))
    assert ours.schema.field("a").type == ty
    assert ours.equals(theirs), (ours, theirs)


def test_string_views_and_threads_as_named_types(tmp_path):
    data = b"a,b\nx,1\nlonger than twelve bytes,2\n"
    t = pa.table(fastcsv.read_arrow(data, types={"a": pa.string_view(), "b": "int8"}))
    assert [str(x) for x in t.schema.types] == ["string_view", "int8"]
    assert t.column("a").to_pylist() == ["x", "longer than twelve bytes"]
    p = tmp_path / "big.csv"
    with open(p, "w") as f:
        f.write("a,b,c\n")
        for i in range(400_000):
            f.write(f"k{i % 7},{i % 100},{i / 4}\n")
    kw = {"types": {"a": "dictionary<values=string, indices=int32, ordered=0>", "b": pa.uint8(), "c": pa.decimal128(12, 2)}}
    one = pa.table(fastcsv.read_arrow(str(p), threads=1, **kw))
    two = pa.table(fastcsv.read_arrow(str(p), threads=2, **kw))
    assert one.equals(two)
    assert [str(x) for x in one.schema.types] == [
        "dictionary<values=string, indices=int32, ordered=0>", "uint8", "decimal128(12, 2)"
    ]
    theirs = pacsv.read_csv(str(p), convert_options=pacsv.ConvertOptions(column_types={
        "a": pa.dictionary(pa.int32(), pa.string()), "b": pa.uint8(), "c": pa.decimal128(12, 2)}))
    assert one.column("a").to_pylist() == theirs.column("a").to_pylist()
    assert one.column("c").to_pylist() == theirs.column("c").to_pylist()


@pytest.mark.parametrize(
    "name,text,bad",
    [
        ("int8", "a\n1\n300\n", "300"),
        ("uint8", "a\n1\n-1\n", "-1"),
        ("uint8", "a\n+5\n", "+5"),
        ("decimal128(5, 2)", "a\n1.5\n1.234\n", "1.234"),
        ("decimal128(5, 2)", "a\n123456.7\n", "123456.7"),
        ("time32[s]", "a\n10:00:00.5\n", "10:00:00.5"),
        ("timestamp[ms]", "a\n2024-01-01T10:00:00.1000\n", "2024-01-01T10:00:00.1000"),
        ("timestamp[us, tz=UTC]", "a\n2024-01-01T10:00:00\n", "2024-01-01T10:00:00"),
        ("timestamp[ms]", "a\n2024-01-01T10:00:00Z\n", "2024-01-01T10:00:00Z"),
        ("float", "a\n0x10\n", "0x10"),
    ],
)
def test_a_value_out_of_its_type_is_an_error_naming_row_and_field(name, text, bad):
    data = text.encode()
    with pytest.raises(pa.ArrowInvalid):
        pacsv.read_csv(io.BytesIO(data), convert_options=pacsv.ConvertOptions(column_types={"a": pa_type(name)}))
    s = fastcsv.read_arrow(data, types={"a": name})
    rows = text.count("\n") - 1
    shown = re.escape({"float": "float32"}.get(name, name))
    with pytest.raises(pa.ArrowInvalid, match=rf'line {rows + 1}: record {rows}, .*field 0 is not a valid {shown}: "{re.escape(bad)}"'):
        pa.table(s)


def test_unknown_types_are_type_errors_listing_the_names():
    for bad in ("decimal", "decimal256(10, 2)", "date64[ms]", "halffloat", 3, int):
        with pytest.raises(TypeError, match=r"types are int8, int16, .* timestamp\[UNIT, tz=ZONE\]"):
            fastcsv.read_arrow(b"a\n1\n", types={"a": bad})
    with pytest.raises(TypeError, match="unknown column type"):
        fastcsv.read_arrow(b"a\n1\n", types={"a": pa.decimal256(10, 2)})
    with pytest.raises(TypeError, match="unknown column type"):
        fastcsv.read_arrow(b"a\n1\n", types={"a": pa.dictionary(pa.int8(), pa.string())})


def test_polars_and_duckdb_read_each_named_type():
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    for name, text in NAMED:
        if name == "decimal128(5, -2)":
            # Neither polars nor DuckDB takes a decimal of a negative
            # scale (from pyarrow either).
            continue
        data = text.encode()
        want = pa.table(fastcsv.read_arrow(data, types={"a": name}))
        df = pl.DataFrame(fastcsv.read_arrow(data, types={"a": name}))
        assert df.height == want.num_rows, name
        assert df.null_count().row(0)[0] == want.column("a").null_count, name
        s = fastcsv.read_arrow(data, types={"a": name})
        got = duckdb.sql("select count(*), count(a) from s").fetchall()[0]
        assert got == (want.num_rows, want.num_rows - want.column("a").null_count), name
    df = pl.DataFrame(fastcsv.read_arrow(b"a\nx\ny\nx\n", types={"a": "dictionary<values=string, indices=int32>"}))
    assert str(df.dtypes[0]) == "Categorical" and df["a"].to_list() == ["x", "y", "x"]
    df = pl.DataFrame(fastcsv.read_arrow(b"a\n1.25\n", types={"a": "decimal128(10, 2)"}))
    assert str(df["a"][0]) == "1.25"


def test_requested_schema_is_honoured_or_refused():
    data = b"a,b\n1,x\n2,y\n"
    s = fastcsv.read_arrow(data, types={"a": "int32"})
    schema = pa.schema([("a", pa.int32()), ("b", pa.string())])
    got = pa.RecordBatchReader.from_stream(s, schema=schema).read_all()
    assert got.schema == schema and got.column("a").to_pylist() == [1, 2]
    s = fastcsv.read_arrow(data, types={"a": "int32"})
    with pytest.raises(ValueError, match=r'field 0 is column "a" of format "i", column "a" of format "l" was requested'):
        pa.RecordBatchReader.from_stream(s, schema=pa.schema([("a", pa.int64()), ("b", pa.string())]))
    # Refused before it is read: the stream can still be read.
    assert pa.table(s).column("a").type == pa.int32()


POOL = [
    "", "NA", "0", "1", "-1", "127", "128", "255", "256", "-129", "65535", "0x7F", "0xFF", "0x1FF",
    "+5", "-0", " 7 ", "1.5", "0.1", "-2.25", "1e2", "1.234", "1e-3", "123456.7", "3.4e39", "inf",
    "nan", "NaN", "true", "False", "x", "yes", "2024-08-18", "2024-08-18T10:10:32",
    "2024-08-18T10:10:32.5", "2024-08-18T10:10:32.1234", "2024-08-18T10:10:32Z",
    "2024-08-18T10:10:32+01:00", "10:00", "10:00:00", "10:00:00.5", "10:00:00.123456789", "24:00",
    "18446744073709551615", "9223372036854775808",
]


_FITS: dict[str, list[str]] = {}


def fits(name: str) -> list[str]:
    """The values of POOL that pyarrow reads as ``name``."""
    if name not in _FITS:
        opts = pacsv.ConvertOptions(column_types={"a": pa_type(name)})
        _FITS[name] = []
        for v in POOL:
            try:
                pacsv.read_csv(io.BytesIO(to_csv(["a"], [[v]])), convert_options=opts)
                _FITS[name].append(v)
            except pa.ArrowInvalid:
                pass
    return _FITS[name]


@pytest.mark.parametrize("seed", range(60))
def test_random_tables_of_named_types_are_pyarrows(seed):
    rng = random.Random(seed)
    cols = rng.randrange(1, 4)
    names = [rng.choice(NAMED)[0] for _ in range(cols)]
    # Mostly values that fit, now and then any.
    rows = [
        [rng.choice(POOL if rng.random() < 0.02 else fits(n)) for n in names]
        for _ in range(rng.randrange(1, 30))
    ]
    data = to_csv([f"c{j}" for j in range(cols)], rows)
    kw = {}
    if rng.random() < 0.3:
        kw["strings_can_be_null"] = True
    given = {f"c{j}": pa_type(n) for j, n in enumerate(names)}
    opts = pacsv.ConvertOptions(column_types=given, **kw)
    try:
        theirs = pacsv.read_csv(io.BytesIO(data), convert_options=opts)
    except pa.ArrowInvalid:
        theirs = None
    s = fastcsv.read_arrow(data, types=given, **kw)
    if theirs is None:
        with pytest.raises(pa.ArrowInvalid, match="is not a valid"):
            pa.table(s)
        return
    ours = pa.table(s)
    assert ours.schema == theirs.schema, (seed, names)
    for a, b in zip(ours.columns, theirs.columns):
        for x, y in zip(a.to_pylist(), b.to_pylist()):
            assert same(x, y) or (x is None and y is None) or x == y, (seed, names, x, y)


def test_infer_rows_past_the_first_part_on_two_threads(tmp_path):
    # infer_rows=N: the first N rows' types on any thread count, though a
    # file read on two threads is cut into parts of 4 MiB and more.
    p = tmp_path / "sampled.csv"
    with open(p, "w") as f:
        f.write("sparse,flag,pad\n")
        for i in range(420_000):
            sparse = "" if i < 200_000 else str(i % 7)
            flag = ("true", "false")[i % 2] if i < 300_000 else "yes"
            f.write(f"{sparse},{flag},{'x' * 20}\n")
    assert p.stat().st_size >= 8 << 20
    for rows in (1000, 250_000, 10**6):
        one = fastcsv.read_arrow(str(p), types="infer", infer_rows=rows, threads=1)
        two = fastcsv.read_arrow(str(p), types="infer", infer_rows=rows, threads=2)
        assert one.column_types == two.column_types, rows
    assert two.column_types == ["int64", "utf8", "utf8"]
    assert pa.table(two).equals(pa.table(fastcsv.read_arrow(str(p), types="infer")))
