"""``fastcsv.dask.read_csv`` on many files: globs, lists, fsspec URLs,
compressed files, pandas keywords and types decided on all the data,
computed on a real ``distributed.LocalCluster`` and checked against
pandas on the concatenated files."""

from __future__ import annotations

import gzip

import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

import fastcsv  # noqa: E402
import fastcsv.dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,
        dashboard_address=":0",
        timeout="20s",
    ) as cluster, distributed.Client(cluster, timeout="20s") as c:
        yield c


def compute(df, client):
    return client.compute(df).result(timeout=60)


def write_files(tmp_path, n=3, rows=40):
    d = tmp_path / "exports"
    d.mkdir()
    paths = []
    for k in range(n):
        p = d / f"part{k}.csv"
        body = "".join(f'{k * 1000 + i},"v {i}\nline",{i % 3}\n' for i in range(rows))
        p.write_text("id,text,g\n" + body)
        paths.append(p)
    return d, paths


def pandas_of(paths, **kw):
    return pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False, **kw) for p in paths], ignore_index=True)


def same(got, want):
    got = got.reset_index(drop=True).astype(object)
    want = want.reset_index(drop=True).astype(object)
    assert list(got.columns) == list(want.columns)
    assert got.values.tolist() == want.values.tolist()


def test_glob(tmp_path, client):
    d, paths = write_files(tmp_path)
    df = fastcsv.dask.read_csv(str(d / "*.csv"), blocksize=200)
    assert df.npartitions > len(paths)  # each file cut into exact parts
    same(compute(df, client), pandas_of(paths))


def test_list_of_paths(tmp_path, client):
    _, paths = write_files(tmp_path)
    df = fastcsv.dask.read_csv([paths[2], str(paths[0])], blocksize=None)
    assert df.npartitions == 2
    same(compute(df, client), pandas_of([paths[2], paths[0]]))


def test_no_match_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no files match"):
        fastcsv.dask.read_csv(str(tmp_path / "*.csv"))
    with pytest.raises(FileNotFoundError):
        fastcsv.dask.read_csv(tmp_path / "none.csv")
    with pytest.raises(ValueError, match="no files"):
        fastcsv.dask.read_csv([])


def test_file_url(tmp_path, client):
    pytest.importorskip("fsspec")
    d, paths = write_files(tmp_path)
    df = fastcsv.dask.read_csv(f"file://{d}/*.csv", blocksize=300)
    assert df.npartitions > len(paths)  # local: split as paths are
    same(compute(df, client), pandas_of(paths))


def test_memory_url(tmp_path, client):
    fsspec = pytest.importorskip("fsspec")
    _, paths = write_files(tmp_path)
    fs = fsspec.filesystem("memory")
    for p in paths:
        fs.pipe(f"/habits/{p.name}", p.read_bytes())
    try:
        df = fastcsv.dask.read_csv("memory://habits/*.csv", include_path_column=True)
        assert df.npartitions == len(paths)
        got = compute(df, client)
        same(got.drop(columns="path"), pandas_of(paths))
        assert sorted(set(got["path"])) == sorted(f"/habits/{p.name}" for p in paths)
    finally:
        fs.rm("/habits", recursive=True)


def test_compressed_files_are_one_partition_each(tmp_path, client):
    _, paths = write_files(tmp_path)
    gz = []
    for p in paths:
        q = p.with_suffix(".csv.gz")
        q.write_bytes(gzip.compress(p.read_bytes()))
        gz.append(q)
    df = fastcsv.dask.read_csv([str(q) for q in gz], blocksize=100)
    assert df.npartitions == len(gz)
    same(compute(df, client), pandas_of(paths))


def test_include_path_column(tmp_path, client):
    _, paths = write_files(tmp_path, n=2, rows=5)
    df = fastcsv.dask.read_csv(paths, include_path_column="file")
    assert list(df.columns) == ["id", "text", "g", "file"]
    got = compute(df, client)
    assert got["file"].tolist() == [str(paths[0])] * 5 + [str(paths[1])] * 5


def test_pandas_keywords(tmp_path, client):
    d = tmp_path / "k"
    d.mkdir()
    paths = []
    for k in range(2):
        p = d / f"{k}.csv"
        p.write_bytes(f"# made by hand\nid;name;x\n{k};Jos\xe9;1.5\n{k};NA;2\n".encode("latin-1"))
        paths.append(p)
    kw = dict(sep=";", encoding="latin-1", comment="#", usecols=["name", "x"], dtype={"x": "float64"})
    df = fastcsv.dask.read_csv(str(d / "*.csv"), na_values=["NA"], **kw)
    got = compute(df, client)
    want = pd.concat([pd.read_csv(p, na_values=["NA"], **kw) for p in paths], ignore_index=True)
    assert got["x"].tolist() == want["x"].tolist()
    assert got["name"].isna().tolist() == want["name"].isna().tolist()
    assert got["name"].dropna().tolist() == want["name"].dropna().tolist()


def test_skiprows_and_names(tmp_path, client):
    _, paths = write_files(tmp_path, n=2, rows=4)
    df = fastcsv.dask.read_csv(paths, names=["a", "b", "c"], header=0, skiprows=[1])
    want = pd.concat(
        [pd.read_csv(p, names=["a", "b", "c"], header=0, skiprows=[1], dtype=str) for p in paths],
        ignore_index=True,
    )
    same(compute(df, client), want)


def test_bad_keywords(tmp_path):
    _, paths = write_files(tmp_path, n=1, rows=2)
    with pytest.raises(TypeError, match=r"read_csv\(\) got an unexpected keyword argument 'bogus'"):
        fastcsv.dask.read_csv(paths, bogus=1)
    with pytest.raises(TypeError, match="nrows"):
        fastcsv.dask.read_csv(paths, nrows=3)


def test_late_widening_across_files(tmp_path, client):
    d = tmp_path / "w"
    d.mkdir()
    (d / "1.csv").write_text("k,n,when\n" + "".join(f"a,{i},2024-01-0{i % 9 + 1}\n" for i in range(30)))
    (d / "2.csv").write_text("k,n,when\n" + "".join(f"b,{i}.5,2024-01-01T10:00:00\n" for i in range(30)))
    (d / "3.csv").write_text("k,n,when\nc,,\n")  # all nulls: no vote for text
    df = fastcsv.dask.read_csv(str(d / "*.csv"), types="infer")
    assert str(df.dtypes["n"]) == "float64"
    assert str(df.dtypes["when"]).startswith("datetime64")
    got = compute(df, client)
    paths = [d / "1.csv", d / "2.csv", d / "3.csv"]
    want = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    assert got["n"].tolist()[:60] == want["n"].tolist()[:60]
    assert got["n"].isna().tolist() == want["n"].isna().tolist()
    assert str(got.dtypes["n"]) == "float64"
    when = pd.to_datetime(want["when"], format="ISO8601")
    assert got["when"].astype("datetime64[ns]").tolist()[:60] == when.tolist()[:60]


def test_widening_to_text(tmp_path, client):
    d = tmp_path / "t"
    d.mkdir()
    (d / "1.csv").write_text("v,b\n1,true\n2,false\n")
    (d / "2.csv").write_text("v,b\nx,true\n3,maybe\n")
    df = fastcsv.dask.read_csv(str(d / "*.csv"), types="infer")
    got = compute(df, client)
    assert got["v"].tolist() == ["1", "2", "x", "3"]
    assert got["b"].tolist() == ["true", "false", "true", "maybe"]


def test_the_order_types_are_tried_in_is_read_arrows():
    # Each type of the order, as the first that holds a column's values.
    columns = {
        "int64": ["1", "0x1F"],
        "bool": ["1", "true"],
        "date32[day]": ["2024-01-01"],
        "timestamp[s]": ["2024-01-01", "2024-01-01T10:00"],
        "timestamp[ns]": ["2024-01-01 10:00:00.5"],
        "timestamp[s, tz=UTC]": ["2024-01-01T10:00Z"],
        "timestamp[ns, tz=UTC]": ["2024-01-01T10:00:00.5+01:00"],
        "float64": ["1", "inf"],
    }
    assert tuple(columns) == fastcsv.dask._ORDER
    for ty, values in columns.items():
        data = ("a\n" + "".join(f"{v}\n" for v in values)).encode()
        assert fastcsv.read_arrow(data, types="infer").column_types == [ty]


# Columns whose pieces, one a file, each infer a narrower type than the
# values of all of them: the type of the files one after the other is
# that of their concatenation read by `read_arrow` (pyarrow's rules).
SPLIT_TYPES = [
    # 0/1 are int64 alone, booleans beside true/false.
    (["1", "0"], ["true", "false"]),
    (["1"], ["True"], [""]),
    # A hex int64 is no float64.
    (["0x1F"], ["1.5"]),
    # A date alone is no zoned timestamp.
    (["2024-01-01"], ["2024-01-01T10:00:00Z"]),
    # A fraction needs nanoseconds, which the year 3000 does not fit.
    (["3000-01-01T00:00:00"], ["2024-01-01T10:00:00.5"]),
    # Those that do widen.
    (["1", "2"], ["2.5"], ["NA"]),
    (["2024-01-01"], ["2024-01-01T10:00:00"], ["2024-01-02T00:00:00.25"]),
    (["x"], ["1"]),
    ([""], ["NA"]),
]


@pytest.mark.parametrize("pieces", SPLIT_TYPES)
def test_types_of_many_files_are_those_of_their_concatenation(tmp_path, pieces):
    paths = []
    for k, values in enumerate(pieces):
        p = tmp_path / f"{k}.csv"
        p.write_text("a,k\n" + "".join(f"{v},{k}\n" for v in values))
        paths.append(str(p))
    whole = "a,k\n" + "".join(f"{v},{k}\n" for k, vs in enumerate(pieces) for v in vs)
    pa = pytest.importorskip("pyarrow")
    want = pa.table(fastcsv.read_arrow(whole.encode(), types="infer"))
    want = fastcsv.dask._to_pandas(want)
    df = fastcsv.dask.read_csv(paths, types="infer")
    assert dtypes(df) == dtypes(want)
    got = df.compute(scheduler="sync")
    assert dtypes(got) == dtypes(want)
    assert rows(got) == rows(want)


def dtypes(df):
    # pandas names its string dtype `str` or `string` by version.
    return [{"str": "string"}.get(str(t), str(t)) for t in df.dtypes]


def rows(df):
    """The rows, nulls (NA, NaN, NaT) as None."""
    df = df.reset_index(drop=True).astype(object)
    return [[None if pd.isna(v) else v for v in r] for r in df.values.tolist()]


HEADERS = {
    "reordered": ["a,b\n1,x\n2,y\n", "b,a\nz,3\nw,4\n"],
    "missing": ["a,b\n1,x\n2,y\n", "a\n5\n"],
    "missing first": ["a\n5\n", "a,b\n1,x\n2,y\n"],
    "added": ["a,b\n1,x\n2,y\n", "b,c,a\nq,r,5\n"],
    "header only": ["a,b\n", "b,a\nz,3\n"],
}


@pytest.mark.parametrize("kind", sorted(HEADERS))
@pytest.mark.parametrize("types", [None, "infer", {"a": "int64"}])
def test_files_with_other_headers_line_up_by_name_as_pandas_concat(tmp_path, kind, types):
    paths = []
    for k, text in enumerate(HEADERS[kind]):
        p = tmp_path / f"{k}.csv"
        p.write_text(text)
        paths.append(str(p))
    want = pd.concat([pd.read_csv(p, dtype={"a": "Int64"}) for p in paths], ignore_index=True)
    df = fastcsv.dask.read_csv(paths, types=types)
    assert list(df.columns) == list(want.columns)
    got = df.compute(scheduler="sync")
    assert list(got.columns) == list(want.columns)
    if types is not None:
        assert str(df.dtypes["a"]) == str(got.dtypes["a"]) == "Int64"
    got["a"] = got["a"].astype("Int64")
    assert rows(got) == rows(want)


def test_empty_files_hold_no_columns_in_any_place(tmp_path):
    (tmp_path / "0.csv").write_text("")
    (tmp_path / "1.csv").write_text("a,b\n1,x\n")
    (tmp_path / "2.csv").write_text("")
    for types in (None, "infer"):
        df = fastcsv.dask.read_csv(str(tmp_path / "*.csv"), types=types)
        assert list(df.columns) == ["a", "b"]
        assert rows(df.compute(scheduler="sync")) == [[1 if types else "1", "x"]]
    # Without a header row too.
    df = fastcsv.dask.read_csv(str(tmp_path / "*.csv"), header=None)
    assert list(df.columns) == ["0", "1"]
    assert rows(df.compute(scheduler="sync")) == [["a", "b"], ["1", "x"]]
    (tmp_path / "1.csv").write_text("")
    for header in (True, None):
        with pytest.raises(pd.errors.EmptyDataError):
            fastcsv.dask.read_csv(str(tmp_path / "*.csv"), header=header)


@pytest.mark.parametrize("usecols", [None, ["c", "a"], [2]])
def test_other_headers_split_in_parts_and_selected(tmp_path, usecols):
    paths = []
    for k, head in enumerate(["a,b,c", "c,b,a", "b,a"]):
        cols = head.split(",")
        value = {"a": lambda i: str(k * 1000 + i), "b": lambda i: f'"t{i}\nx"', "c": lambda i: f"{i}.5"}
        body = "".join(",".join(value[c](i) for c in cols) + "\n" for i in range(100))
        p = tmp_path / f"{k}.csv"
        p.write_text(head + "\n" + body)
        paths.append(str(p))
    want = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    if usecols is not None:
        # In the first file's order; an index names the first file's column.
        want = want[["a", "c"] if len(usecols) == 2 else ["c"]]
    df = fastcsv.dask.read_csv(paths, types="infer", blocksize=64, usecols=usecols)
    assert df.npartitions > 50
    assert list(df.columns) == list(want.columns)
    got = df.compute(scheduler="sync")
    assert dtypes(got) == dtypes(df) and str(got.dtypes["c"]) == "float64"
    assert rows(got) == rows(want.astype({c: "Int64" for c in want.columns if c == "a"}))


@pytest.mark.parametrize("line_end", [True, False])
def test_a_file_appended_to_before_compute(tmp_path, line_end):
    # The parts are those of the file when read_csv split it: after a
    # whole last record, the rows it had then; after a last record with
    # no line end, which the append runs on, a FileChanged error (never
    # a value neither file holds).
    p = tmp_path / "grows.csv"
    p.write_text("a\n" + "".join(f"{i}\n" for i in range(1000)) + ("1000\n" if line_end else "1000"))
    df = fastcsv.dask.read_csv(str(p), blocksize=500, types="infer")
    assert df.npartitions > 2
    with open(p, "a") as f:
        f.write("5\n1001\n")
    if line_end:
        assert df.compute(scheduler="sync")["a"].tolist() == list(range(1001))
    else:
        with pytest.raises(fastcsv.Error, match="file changed while reading"):
            df.compute(scheduler="sync")


def test_a_date_column_stays_dates(tmp_path):
    # dask turns object columns into strings (`dataframe.convert-string`):
    # a date32 column must not be one, or its dates come out as text.
    (tmp_path / "1.csv").write_text("d,x\n,1\n,2\n")
    (tmp_path / "2.csv").write_text("d,x\n2024-02-29,3\n")
    df = fastcsv.dask.read_csv(str(tmp_path / "*.csv"), types="infer")
    assert str(df.dtypes["d"]).startswith("datetime64")
    got = df.compute(scheduler="sync")
    assert str(got.dtypes["d"]) == str(df.dtypes["d"])
    assert got["d"].isna().tolist() == [True, True, False]
    assert got["d"].iloc[2] == pd.Timestamp("2024-02-29")


NAMED = [
    ("1\n2\n,x\n", "int8"),
    ("1\n2\n,x\n", "int32"),
    ("1\n2\n,x\n", "uint64"),
    ("1\n2\n", "uint16"),
    ("1\n2.5\n\n", "float32"),
    ("x\ny\nx\n", "dictionary<values=string, indices=int32>"),
    ("2024-01-01T10:00:00Z\n2024-01-01T11:30:00+01:00\n\n", "timestamp[ms, tz=Europe/Paris]"),
    ("2024-01-01T10:00:00Z\n2024-01-01T11:30:00+01:00\n\n", "timestamp[s, tz=+01:00]"),
    ("10:00\n11:30:15\n\n", "time32[s]"),
    ("10:00\n11:30:15.5\n\n", "time64[us]"),
    ("1.25\n-2.5\n\n", "decimal128(10, 2)"),
]


@pytest.mark.parametrize("text,ty", NAMED)
def test_named_types_keep_their_dtype_in_meta_and_partitions(tmp_path, text, ty):
    pa = pytest.importorskip("pyarrow")
    # The second file without its nulls: each partition has the meta's
    # dtypes whether or not it has nulls.
    (tmp_path / "0.csv").write_text("v,k\n" + text)
    (tmp_path / "1.csv").write_text("v,k\n" + "".join(r + "\n" for r in text.splitlines() if r and r[0] != ","))
    df = fastcsv.dask.read_csv(str(tmp_path / "*.csv"), types={"v": ty})
    got = df.compute(scheduler="sync")
    assert str(got.dtypes["v"]) == str(df.dtypes["v"])
    # The values of read_arrow's table, typed (not their text).
    want = [
        pa.table(fastcsv.read_arrow((tmp_path / f"{k}.csv").read_bytes(), types={"v": ty}))
        for k in range(2)
    ]
    want = pa.concat_tables(want).select(["v"])
    assert rows(got[["v"]]) == rows(fastcsv.dask._to_pandas(want))
    for part in df.partitions:
        assert str(part.compute(scheduler="sync").dtypes["v"]) == str(df.dtypes["v"])
    assert not any(isinstance(v, str) for v in got["v"]) or ty.startswith("dictionary")


@pytest.mark.parametrize("kw", [{"types": {"a": "int8", "c": "float32"}}, {"dtype": {"c": "float32"}}])
def test_types_of_a_column_the_first_file_lacks(tmp_path, kw):
    (tmp_path / "1.csv").write_text("a,b\n1,x\n")
    (tmp_path / "2.csv").write_text("c,a\n5,2\n")
    df = fastcsv.dask.read_csv(str(tmp_path / "*.csv"), **kw)
    assert list(df.columns) == ["a", "b", "c"]
    assert str(df.dtypes["c"]) == "float32"
    got = df.compute(scheduler="sync")
    assert dtypes(got) == dtypes(df)
    assert rows(got) == [[1 if "types" in kw else "1", "x", None], [2 if "types" in kw else "2", None, 5.0]]


@pytest.mark.parametrize("types", [None, "infer"])
@pytest.mark.parametrize("bad", [b"1,2,3\n", b'1,"\xff"\n'])
def test_a_partition_error_is_the_sequential_reads(tmp_path, types, bad):
    # The class (fastcsv.Error, as read_all raises it), message, line,
    # record and byte of one read of the whole file.
    path = tmp_path / "f.csv"
    good = b"".join(b'%d,"a\nb"\n' % i for i in range(50))
    path.write_bytes(b"k,v\n" + good + bad + good)
    with pytest.raises(fastcsv.Error) as want:
        fastcsv.read_arrow(str(path), types=types).read_all()
    # Split into many parts, the error in a later one (typed now with
    # "infer", which reads every part; else when computed).
    with pytest.raises(fastcsv.Error) as got:
        df = fastcsv.dask.read_csv(str(path), blocksize=64, types=types)
        assert df.npartitions > 5
        df.compute(scheduler="sync")
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("seed", range(30))
def test_random_tables_in_tiny_parts_are_typed_as_one_read(tmp_path, seed):
    # Random columns (numbers, booleans, dates, times, the odd tokens, a
    # wider value late), cut into parts of a few rows: the types and
    # values of read_arrow over the whole file.
    import random

    from test_arrow import TOKENS, to_csv
    from test_types import late_table

    rng = random.Random(seed)
    n, width = rng.randrange(1, 400), rng.randrange(1, 4)
    table = late_table(rng, n, width)
    for _ in range(rng.randrange(3)):
        table[rng.randrange(n)][rng.randrange(width)] = rng.choice(TOKENS)
    data = to_csv([f"c{j}" for j in range(width)], table)
    p = tmp_path / "r.csv"
    p.write_bytes(data)
    want = fastcsv.dask._to_pandas(fastcsv.read_arrow(data, types="infer").read_all())
    df = fastcsv.dask.read_csv(str(p), types="infer", blocksize=rng.choice([30, 100, 500]))
    assert dtypes(df) == dtypes(want)
    got = df.compute(scheduler="sync")
    assert [[str(v) for v in r] for r in rows(got)] == [[str(v) for v in r] for r in rows(want)]


def test_a_remote_files_header_is_read_from_a_prefix(tmp_path):
    # Through fsspec, each file's header is read from a prefix of it (not
    # the whole file): a long header (past the first 64 KiB), a short
    # file, a compressed one; and a wide second file lines up by name.
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    wide = [f"c{j:03}" + "x" * 600 for j in range(200)]  # 120 KiB
    rows = "".join(",".join(str(i) for _ in wide) + "\n" for i in range(5000))
    fs.pipe("/heads/1.csv", ("a,b\n" + "1,x\n" * 1000).encode())
    fs.pipe("/heads/2.csv", (",".join(["b"] + wide) + "\n" + rows).encode())
    fs.pipe("/heads/3.csv", gzip.compress(("b,a\n" + "y,2\n" * 100_000).encode()))
    assert fs.size("/heads/2.csv") > 4 << 20  # 4.7 MiB
    reads = []
    real_open = fs.open

    def counting_open(path, mode="rb", **kw):
        f = real_open(path, mode, **kw)
        real_read = f.read

        def read(n=-1):
            data = real_read(n)
            reads.append(len(data))
            return data

        f.read = read
        return f

    fs.open = counting_open
    try:
        df = fastcsv.dask.read_csv(
            ["memory://heads/1.csv", "memory://heads/2.csv", "memory://heads/3.csv"]
        )
        assert list(df.columns) == ["a", "b"] + wide
        # The first file is read whole (twice) for the meta; the others'
        # headers from prefixes (of 1 MiB at most here), not the 4 MiB.
        assert sum(reads) < 2 * 4004 + fs.size("/heads/3.csv") + (1 << 20)
        fs.open = real_open
        got = df.compute(scheduler="sync")
        assert len(got) == 1000 + 5000 + 100_000
        assert got["a"].iloc[-1] == "2" and got["b"].iloc[1000] == "0"
    finally:
        fs.open = real_open
        fs.rm("/heads", recursive=True)
