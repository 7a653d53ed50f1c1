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


def test_widen_type_rule():
    w = fastcsv.dask._widen_type
    assert w("int64", "float64") == "float64"
    assert w("date32[day]", "timestamp[s]") == "timestamp[s]"
    assert w("timestamp[s]", "timestamp[ns]") == "timestamp[ns]"
    assert w("bool", "int64") == "utf8"
    assert w("int64", "date32[day]") == "utf8"
    assert w("timestamp[s]", "timestamp[s, tz=UTC]") == "utf8"
