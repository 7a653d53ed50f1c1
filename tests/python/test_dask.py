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
