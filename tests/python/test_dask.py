"""``fastcsv.dask.read_csv``: one partition per exact part (needs dask and
pyarrow; skipped without them)."""

from __future__ import annotations

import csv

import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

import dask  # noqa: E402

import fastcsv  # noqa: E402
import fastcsv.dask  # noqa: E402

from test_split import sample_text  # noqa: E402


@pytest.mark.parametrize("blocksize", [50, 1000, 1 << 20])
def test_partitions_hold_the_rows_of_csv(tmp_path, blocksize):
    path = tmp_path / "f.csv"
    path.write_bytes(sample_text(5, 400).encode())
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if r]
    df = fastcsv.dask.read_csv(path, blocksize=blocksize)
    assert list(df.columns) == rows[0]
    assert df.npartitions == len(fastcsv.split(path, size=blocksize))
    got = df.compute(scheduler="sync").astype(object).values.tolist()
    assert got == rows[1:]
    # Without a header row, every row is data and the columns numbered.
    df = fastcsv.dask.read_csv(path, blocksize=blocksize, header=False)
    assert list(df.columns) == ["0", "1", "2"]
    assert df.compute(scheduler="sync").astype(object).values.tolist() == rows


def test_an_error_names_its_whole_file_position(tmp_path):
    path = tmp_path / "f.csv"
    good = "".join(f"{i},\"a\nb\"\n" for i in range(50))
    path.write_bytes(("k,v\n" + good + "1,2,3\n" + good).encode())
    df = fastcsv.dask.read_csv(path, blocksize=64)
    with pytest.raises(Exception, match=r":102: record 51, byte \d+"):
        with dask.config.set(scheduler="sync"):
            df.compute()


def test_typed_partitions(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "t.csv"
    lines = ["n,x,ok,s"]
    for i in range(3000):
        x = "" if i % 5 == 0 else f"{i}.5"
        n = "NA" if i == 2500 else str(i)  # a null only in a late part
        lines.append(f'{n},{x},{"true" if i % 2 else "0"},"s,{i}"')
    path.write_text("\n".join(lines) + "\n")
    df = fastcsv.dask.read_csv(path, blocksize=4096, types="infer")
    assert df.npartitions > 4
    assert [str(t) for t in df.dtypes] == ["Int64", "float64", "boolean", str(df.dtypes.iloc[3])]
    got = df.compute(scheduler="sync")
    assert [str(t) for t in got.dtypes] == [str(t) for t in df.dtypes]
    assert len(got) == 3000 and got["n"].isna().sum() == 1 and got["x"].isna().sum() == 600
    assert got["ok"].tolist()[:3] == [False, True, False]
    assert got["s"].tolist()[7] == "s,7"
    assert pd.isna(got["n"].tolist()[2500])
    df = fastcsv.dask.read_csv(path, blocksize=4096, types={"x": "float64"})
    assert str(df.dtypes.iloc[0]) != "Int64" and str(df.dtypes.iloc[1]) == "float64"
    with pytest.raises(ValueError, match="header=True"):
        fastcsv.dask.read_csv(path, types="infer", header=False)


def test_selected_columns(tmp_path):
    path = tmp_path / "t.csv"
    lines = ["n,x,s,s2"]
    for i in range(3000):
        lines.append(f'{i},{i}.5,"s,{i}",t{i}')
    path.write_text("\n".join(lines) + "\n")
    df = fastcsv.dask.read_csv(path, blocksize=4096, columns=["s", 0], types="infer")
    assert df.npartitions > 4 and list(df.columns) == ["s", "n"]
    assert str(df.dtypes.iloc[1]) == "Int64"
    got = df.compute(scheduler="sync")
    assert len(got) == 3000 and got["s"].tolist()[7] == "s,7" and got["n"].tolist()[2999] == 2999
    # usecols, as pandas and dask name it; types for columns left out.
    df = fastcsv.dask.read_csv(path, blocksize=4096, usecols=iter(["x"]), types={"x": "float64", "n": "int64"})
    assert list(df.columns) == ["x"] and str(df.dtypes.iloc[0]) == "float64"
    assert df.compute(scheduler="sync")["x"].tolist()[:2] == [0.5, 1.5]
    # As pandas and dask: usecols gives the file's order (columns, the
    # order asked for).
    pd = pytest.importorskip("pandas")
    df = fastcsv.dask.read_csv(path, blocksize=4096, usecols=["s", "n", "s"], types="infer")
    assert list(df.columns) == ["n", "s"] == list(pd.read_csv(path, usecols=["s", "n"]).columns)
    got = df.compute(scheduler="sync")
    assert list(got.columns) == ["n", "s"] and got["s"].tolist()[7] == "s,7"
    df = fastcsv.dask.read_csv(path, blocksize=4096, usecols=lambda c: c.startswith("s"))
    assert list(df.columns) == ["s", "s2"]
    with pytest.raises(TypeError, match="not both"):
        fastcsv.dask.read_csv(path, columns=["x"], usecols=["x"])
    with pytest.raises(ValueError, match="header=True"):
        fastcsv.dask.read_csv(path, columns=["x"], header=False)
    with pytest.raises(ValueError, match='a column "y" the file does not have'):
        fastcsv.dask.read_csv(path, columns=["y"])


def test_custom_spellings(tmp_path):
    path = tmp_path / "t.csv"
    lines = ["n,ok"] + [f'{"?" if i == 2500 else i},{"Y" if i % 2 else "N"}' for i in range(3000)]
    path.write_text("\n".join(lines) + "\n")
    df = fastcsv.dask.read_csv(
        path, blocksize=4096, types="infer", null_values=["?"], true_values=("Y",), false_values=["N"]
    )
    assert [str(t) for t in df.dtypes] == ["Int64", "boolean"]
    got = df.compute(scheduler="sync")
    assert got["n"].isna().sum() == 1 and got["ok"].tolist()[:2] == [False, True]
    with pytest.raises(TypeError, match="null_values must be a list of str"):
        fastcsv.dask.read_csv(path, null_values="?")
    # Text columns with nulls.
    df = fastcsv.dask.read_csv(path, blocksize=4096, null_values=["?"], strings_can_be_null=True)
    got = df.compute(scheduler="sync")
    assert got["n"].isna().sum() == 1 and got["n"].tolist()[:2] == ["0", "1"]


def test_a_part_reader_survives_pickling(tmp_path):
    # Process workers receive each part and its reader pickled.
    import pickle

    path = tmp_path / "f.csv"
    path.write_bytes(sample_text(7, 300).encode())
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if r]
    df = fastcsv.dask.read_csv(path, blocksize=200)
    parts = fastcsv.split(path, size=200)
    read = fastcsv.dask._ReadPart(fastcsv._NO_DIALECT, True, rows[0], {})
    got = []
    for p in parts:
        q = pickle.loads(pickle.dumps(p))
        assert q == p
        got += pickle.loads(pickle.dumps(read))(q).astype(object).values.tolist()
    assert got == rows[1:]
    assert df.npartitions == len(parts)


def test_a_distributed_cluster_computes_the_rows(tmp_path):
    # A cluster of threads in this process (processes=False: nothing to
    # spawn, so nothing to hang a CI run), with timeouts on every wait.
    distributed = pytest.importorskip("distributed")
    path = tmp_path / "f.csv"
    path.write_bytes(sample_text(9, 500).encode())
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if r]
    df = fastcsv.dask.read_csv(path, blocksize=300)
    assert df.npartitions > 2
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster, distributed.Client(cluster, timeout=60) as client:
        got = client.compute(df).result(timeout=120)
    assert got.astype(object).values.tolist() == rows[1:]


def test_boolean_spellings_without_types_are_refused(tmp_path):
    # As read_arrow: without types every column is text, where the
    # spellings would do nothing.
    pytest.importorskip("dask.dataframe")
    p = tmp_path / "f.csv"
    p.write_text("a\nyes\n")
    with pytest.raises(ValueError, match=r"read_csv\(\) reads every column as text"):
        fastcsv.dask.read_csv(str(p), true_values=["yes"])


def test_encoding_errors_is_taken(tmp_path):
    p = tmp_path / "f.csv"
    p.write_bytes(b"a\n\xff\n")
    df = fastcsv.dask.read_csv(str(p), encoding_errors="replace").compute()
    assert df["a"].tolist() == ["\ufffd"]
