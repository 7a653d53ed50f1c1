"""read_arrow(types="infer"): types decided on every value of each column
(issue 37, item 2), against pyarrow's and pandas' readers."""

from __future__ import annotations

import io
import random

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
    with pytest.raises(OSError, match="record 12"):
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
