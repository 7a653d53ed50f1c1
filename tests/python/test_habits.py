"""pandas' and polars' keywords in ``read_arrow`` (checked against
``pandas.read_csv``), and one error class for a data error through every
consumer."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma

import pytest

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

import fastcsv  # noqa: E402

TEXT = "id,name,price\n1,ab,1.5\n2,cd,2.5\n3,NA,\n4,ef,4.25\n"


def table(source, **kw):
    return pa.table(fastcsv.read_arrow(source, **kw))


def rows(source, **kw):
    return table(source, **kw).to_pylist()


@pytest.fixture
def f(tmp_path):
    p = tmp_path / "f.csv"
    p.write_text(TEXT)
    return p


def test_an_unknown_keyword_names_the_function(f):
    with pytest.raises(TypeError, match=r"^read_arrow\(\) got an unexpected keyword argument 'x'$"):
        fastcsv.read_arrow(f, x=1)
    # pandas keywords read_arrow does not take are named the same way.
    with pytest.raises(TypeError, match=r"read_arrow\(\) got an unexpected keyword argument 'chunksize'"):
        fastcsv.read_arrow(f, chunksize=10)


def test_usecols_is_columns_in_the_files_order(f):
    # As pandas: the order and repeats of usecols do not matter (columns=
    # keeps the order asked for).
    want = list(pd.read_csv(f, usecols=["price", "id"]).columns)
    assert want == ["id", "price"]
    assert table(f, usecols=["price", "id"]).column_names == want
    assert table(f, usecols=["price", "id", "price"]).column_names == want
    assert table(f, usecols=[2, 0]).column_names == list(pd.read_csv(f, usecols=[2, 0]).columns)
    assert table(f, usecols=iter(["price", "id"])).column_names == want
    assert table(f, columns=["price", "id"]).column_names == ["price", "id"]
    assert table(f, usecols=[1]).column_names == ["name"]
    pick = lambda n: n != "name"  # noqa: E731
    assert table(f, usecols=pick).column_names == list(pd.read_csv(f, usecols=pick).columns)
    # With a single dtype (the names are read first for both).
    t = table(f, usecols=["price", "id"], dtype="string")
    assert t.column_names == want
    with pytest.raises(TypeError, match="columns or usecols"):
        fastcsv.read_arrow(f, usecols=[1], columns=[0])
    with pytest.raises(ValueError, match="does not have: 'nope'"):
        fastcsv.read_arrow(f, usecols=["id", "nope"])
    with pytest.raises(ValueError, match="out of range"):
        fastcsv.read_arrow(f, usecols=[7])
    with pytest.raises(TypeError, match="usecols"):
        fastcsv.read_arrow(f, usecols="id")


def test_sep_is_delimiter(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("a;b\n1;2\n")
    assert rows(p, sep=";") == [{"a": "1", "b": "2"}]
    assert rows(p, sep=";", delimiter=";") == [{"a": "1", "b": "2"}]
    with pytest.raises(TypeError, match="sep or delimiter"):
        fastcsv.read_arrow(p, sep=";", delimiter=",")


@pytest.mark.parametrize(
    ("dtype", "arrow"),
    [
        ("int64", pa.int64()),
        ("Int64", pa.int64()),
        (int, pa.int64()),
        ("float64", pa.float64()),
        (float, pa.float64()),
        ("string", pa.utf8()),
        (str, pa.utf8()),
        (object, pa.utf8()),
    ],
)
def test_dtype_by_column(f, dtype, arrow):
    t = table(f, dtype={"id": dtype})
    assert t.schema.field("id").type == arrow
    assert t.schema.field("name").type == pa.utf8()


def test_dtype_numpy_and_datetime(tmp_path):
    np = pytest.importorskip("numpy")
    p = tmp_path / "d.csv"
    p.write_text("t,ok,x\n2024-01-02T03:04:05,true,1\n2024-01-03T00:00:00,false,2\n")
    t = table(p, dtype={"t": "datetime64[ns]", "ok": "bool", "x": np.dtype("float64")})
    assert t.schema.types == [pa.timestamp("ns"), pa.bool_(), pa.float64()]
    want = pd.read_csv(p, dtype={"ok": "bool", "x": "float64"}, parse_dates=["t"])
    got = t.to_pandas()
    assert got["ok"].tolist() == want["ok"].tolist()
    assert got["x"].tolist() == want["x"].tolist()
    assert got["t"].astype("datetime64[ns]").tolist() == want["t"].astype("datetime64[ns]").tolist()


def test_one_dtype_for_every_column(tmp_path):
    p = tmp_path / "n.csv"
    p.write_text("a,b\n1,2\n3,4\n")
    assert table(p, dtype="float64").schema.types == [pa.float64(), pa.float64()]
    # From a binary stream too (read twice: the names, then the columns).
    assert table(io.BytesIO(p.read_bytes()), dtype="int64").to_pydict() == {"a": [1, 3], "b": [2, 4]}


def test_dtype_names_map_to_arrow_types():
    assert fastcsv._arrow_type("category").startswith("dictionary<values=string")
    assert fastcsv._arrow_type("datetime64[ns]") == "timestamp[ns]"
    assert fastcsv._arrow_type("boolean") == "bool"
    assert fastcsv._arrow_type(pd.StringDtype()) == "utf8"
    assert fastcsv._arrow_type(pd.Int64Dtype()) == "int64"
    with pytest.raises(ValueError, match="dtype 'complex128'"):
        fastcsv._arrow_type("complex128")
    with pytest.raises(TypeError, match="types or dtype"):
        fastcsv.read_arrow(b"a\n1\n", dtype="int64", types="infer")


def test_na_values_as_pandas(f):
    got = table(f, na_values=["ab"]).to_pandas()
    want = pd.read_csv(f, na_values=["ab"], dtype=str)
    assert got["name"].isna().tolist() == want["name"].isna().tolist() == [True, False, True, False]
    # Only the given spellings.
    got = table(f, na_values="cd", keep_default_na=False).to_pandas()
    assert got["name"].isna().tolist() == [False, True, False, False]
    with pytest.raises(TypeError, match="null_values or na_values"):
        fastcsv.read_arrow(f, na_values=["x"], null_values=["y"])


def test_names_and_header(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("junk line\nmore junk\na,b\n1,2\n3,4\n")
    # header=2: two rows skipped, then the header, as pandas.
    want = pd.read_csv(p, header=2, dtype=str)
    assert table(p, header=2).to_pandas().equals(want)
    # header=None: every row is data, the columns numbered.
    q = tmp_path / "q.csv"
    q.write_text("1,2\n3,4\n")
    assert table(q, header=None).to_pydict() == {"0": ["1", "3"], "1": ["2", "4"]}
    # names without a header row; with header=0, the header row replaced.
    assert table(q, names=["x", "y"]).to_pydict() == {"x": ["1", "3"], "y": ["2", "4"]}
    assert table(q, names=["x", "y"], header=0).to_pydict() == {"x": ["3"], "y": ["4"]}
    want = pd.read_csv(q, names=["x", "y"], header=0, dtype=str)
    assert table(q, names=["x", "y"], header=0).to_pandas().equals(want)
    # header=0 is the first row as the header (pandas), not data.
    assert table(q, header=0).column_names == ["1", "2"]
    with pytest.raises(ValueError, match="duplicate"):
        fastcsv.read_arrow(q, names=["x", "x"])
    with pytest.raises(TypeError, match="header must be"):
        fastcsv.read_arrow(q, header="yes")


@pytest.mark.parametrize("skiprows", [1, [1, 3], lambda i: i == 2])
def test_skiprows_as_pandas(tmp_path, skiprows):
    p = tmp_path / "k.csv"
    p.write_text('a,b\n1,"x\ny"\n2,z\n3,w\n4,v\n')
    want = pd.read_csv(p, skiprows=skiprows, dtype=str, keep_default_na=False)
    got = table(p, skiprows=skiprows).to_pandas()
    assert got.equals(want)


def test_skipped_rows_keep_line_numbers_in_errors(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("skip me\na,b\n1,2\n1,2,3\n")
    with pytest.raises(fastcsv.Error, match=r"e\.csv:4: record"):
        fastcsv.read_arrow(p, skiprows=1).read_all()


@pytest.mark.parametrize("nrows", [0, 1, 3, 10])
def test_nrows_as_pandas(f, nrows):
    want = pd.read_csv(f, nrows=nrows, dtype=str, keep_default_na=False)
    got = table(f, nrows=nrows).to_pandas()
    assert got.values.tolist() == want.values.tolist()
    assert list(got.columns) == list(want.columns)


def test_comment_as_pandas(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text('# a comment\na,b\n1,"x#y" # trailing\n#2,3\n4,5\n')
    want = pd.read_csv(p, comment="#", dtype=str)
    got = table(p, comment="#").to_pandas()
    assert got["a"].tolist() == want["a"].tolist() == ["1", "4"]
    assert got["b"].str.strip().tolist() == want["b"].str.strip().tolist()
    with pytest.raises(ValueError, match="one character"):
        fastcsv.read_arrow(p, comment="##")


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252", "cp1251", "koi8-r", "iso8859-15", "cp437"])
def test_encodings(tmp_path, encoding, monkeypatch):
    # Each a one-byte codec: transcoded natively, not decoded in Python.
    native = fastcsv._fastcsv._one_byte_utf8
    calls = []
    monkeypatch.setattr(fastcsv._fastcsv, "_one_byte_utf8", lambda *a: calls.append(1) or native(*a))
    p = tmp_path / "l.csv"
    text = "name,city\nJosé,Zürich\nÉmile,Besançon\n"
    if encoding in ("cp1251", "koi8-r"):
        text = "имя,город\nЮрий,Москва\nЁлка,Санкт-Петербург\n"
    if encoding in ("cp1252", "iso8859-15"):
        text += "euro,€\n"
    p.write_bytes(text.encode(encoding))
    want = pd.read_csv(p, encoding=encoding)
    assert table(p, encoding=encoding).to_pandas().equals(want)
    assert table(p.read_bytes(), encoding=encoding).to_pandas().equals(want)
    assert len(calls) == 2


@pytest.mark.parametrize("encoding", ["cp1251", "koi8-r", "cp437", "iso8859-7"])
def test_one_byte_codecs_every_byte(tmp_path, encoding):
    # Every byte the codec defines, in quoted fields across rows (the
    # native transcoding of one-byte codecs), against pandas; a byte it
    # leaves undefined raises Python's error, naming the line.
    defined = [b for b in range(0x80, 0x100) if _decodes(bytes([b]), encoding)]
    text = "a,b\n" + "".join(f'{i},"{bytes(defined[i:i + 9]).decode(encoding)}"\n' for i in range(len(defined)))
    p = tmp_path / "e.csv"
    p.write_bytes(text.encode(encoding))
    want = pd.read_csv(p, encoding=encoding, keep_default_na=False)
    got = table(p, encoding=encoding).to_pandas()
    assert got["b"].tolist() == want["b"].tolist()
    undefined = [b for b in range(0x80, 0x100) if not _decodes(bytes([b]), encoding)]
    if undefined:
        p.write_bytes(b"a,b\n1,2\n3," + bytes([undefined[0]]) + b"\n")
        with pytest.raises(UnicodeDecodeError, match=r"e\.csv:3: "):
            fastcsv.read_arrow(p, encoding=encoding)


def _decodes(b: bytes, encoding: str) -> bool:
    try:
        b.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def test_utf8_sig_strips_a_bom(tmp_path):
    p = tmp_path / "b.csv"
    p.write_bytes("\ufeffa,b\n1,2\n".encode())
    assert table(p, encoding="utf-8-sig").column_names == ["a", "b"]
    assert table(p).column_names == ["a", "b"]


def test_errors_replace(tmp_path):
    p = tmp_path / "r.csv"
    p.write_bytes(b"a,b\n1,x\xffy\n")
    assert rows(p, errors="replace") == [{"a": "1", "b": "x\ufffdy"}]
    with pytest.raises(fastcsv.Error, match=r"r\.csv:2: record"):
        fastcsv.read_arrow(p).read_all()


@pytest.mark.parametrize(
    ("suffix", "compress"),
    [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)],
)
def test_compression(tmp_path, suffix, compress):
    p = tmp_path / f"z.csv{suffix}"
    p.write_bytes(compress(TEXT.encode()))
    want = table(io.BytesIO(TEXT.encode()))
    assert table(p).equals(want)
    assert table(p, compression="infer").equals(want)
    codec = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}[suffix]
    assert table(p, compression=codec).equals(want)
    assert table(io.BytesIO(p.read_bytes())).equals(want)
    # Compressed and read in Python (a keyword that needs the text).
    assert table(p, nrows=2).num_rows == 2
    # compression=None: the bytes as they are (not UTF-8 then).
    with pytest.raises(fastcsv.Error):
        fastcsv.read_arrow(p, compression=None).read_all()


def test_a_gzip_file_padded_with_zeros_reads_as_pandas_reads_it(tmp_path):
    # Zero bytes after the last member (a file padded to a block) are
    # skipped, by Python's gzip module and so by pandas; other bytes there
    # are an error in both.
    p = tmp_path / "padded.csv.gz"
    p.write_bytes(gzip.compress(TEXT.encode()) + bytes(512))
    want = pd.read_csv(p, dtype=str, keep_default_na=False).to_dict("records")
    assert table(p).to_pylist() == want
    assert fastcsv.read(p) == [r.split(",") for r in TEXT.splitlines()]
    p.write_bytes(gzip.compress(TEXT.encode()) + b"garbage")
    with pytest.raises(Exception):
        pd.read_csv(p)
    with pytest.raises(fastcsv.Error, match="not another member"):
        fastcsv.read(p)
    # Through the Arrow stream, pyarrow raises it as an OSError (EIO).
    with pytest.raises(OSError, match="not another member"):
        fastcsv.read_arrow(p).read_all()


def zstd_raw_frame(data: bytes) -> bytes:
    """A zstd frame of one raw (stored) block: what a zstd reader decodes,
    made without a compressor."""
    assert len(data) < 256 and len(data) < 1 << 21
    header = bytes([0x20, len(data)])  # single segment, 1-byte content size
    block = (1 | (len(data) << 3)).to_bytes(3, "little")  # last, raw
    return b"\x28\xb5\x2f\xfd" + header + block + data


def test_a_large_compressed_file_is_read_on_one_thread(tmp_path):
    # Over the size read on several threads (8 MiB compressed): there are
    # no byte ranges of a compressed file, so it is read on one.
    import os

    lines = [f"{os.urandom(24).hex()},{i}\n" for i in range(400_000)]
    p = tmp_path / "big.csv.gz"
    p.write_bytes(gzip.compress(("h,n\n" + "".join(lines)).encode(), 1))
    assert p.stat().st_size >= 8 << 20
    t = table(p, threads=4)
    assert t.num_rows == 400_000 and t.column("n")[-1].as_py() == "399999"


def test_zstd_natively(tmp_path):
    p = tmp_path / "z.csv.zst"
    p.write_bytes(zstd_raw_frame(TEXT.encode()))
    want = table(io.BytesIO(TEXT.encode()))
    assert table(p).equals(want)
    assert table(p, compression="zstd").equals(want)
    assert table(io.BytesIO(p.read_bytes())).equals(want)


def test_compression_forced_on_plain_input_fails(f):
    with pytest.raises((fastcsv.Error, OSError)):
        fastcsv.read_arrow(f, compression="gzip").read_all()
    with pytest.raises(ValueError, match="compression must be"):
        fastcsv.read_arrow(f, compression="zip")


def test_string_io_is_taken_where_bytes_io_is():
    assert table(io.StringIO(TEXT)).equals(table(io.BytesIO(TEXT.encode())))
    assert fastcsv.read(io.StringIO(TEXT)) == fastcsv.read(io.BytesIO(TEXT.encode()))


# --- one error class -------------------------------------------------

BAD_LATE = b"a,b\n" + b"1,2\n" * 5 + b"3,\xff\n"
BAD_HEAD = b"a,\xff\n1,2\n"
POS = r"bad\.csv:7: record 6, byte 24: invalid UTF-8"


@pytest.fixture
def bad(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_bytes(BAD_LATE)
    return p


def test_header_error_is_csv_error(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_bytes(BAD_HEAD)
    with pytest.raises(fastcsv.Error, match=r"bad\.csv:1: record 0, byte 0: invalid UTF-8"):
        fastcsv.read_arrow(p)


@pytest.mark.parametrize("method", ["read_all", "to_pandas", "to_polars"])
def test_late_error_through_the_helpers_is_csv_error(bad, method):
    if method == "to_polars":
        pytest.importorskip("polars")
    s = fastcsv.read_arrow(bad)
    with pytest.raises(fastcsv.Error, match=POS) as e:
        getattr(s, method)()
    assert e.type is fastcsv.Error
    assert fastcsv.Error is __import__("csv").Error


@pytest.mark.parametrize("method", ["read_all", "to_pandas", "to_polars"])
def test_an_unnamed_input_and_a_type_error_too(method):
    if method == "to_polars":
        pytest.importorskip("polars")
    s = fastcsv.read_arrow(b"a\n1\nx\n", types={"a": "int64"})
    with pytest.raises(fastcsv.Error, match=r'^line 3: record 2, byte 4: field 0 is not a valid int64: "x"$'):
        getattr(s, method)()
    # Other failures keep their class.
    s = fastcsv.read_arrow(b"a\n1\n")
    s.__arrow_c_stream__()
    with pytest.raises(ValueError, match="already read"):
        getattr(s, method)()


def test_helpers_return_the_consumers_objects(f):
    assert isinstance(fastcsv.read_arrow(f).read_all(), pa.Table)
    assert isinstance(fastcsv.read_arrow(f).to_pandas(), pd.DataFrame)
    pl = pytest.importorskip("polars")
    assert isinstance(fastcsv.read_arrow(f).to_polars(), pl.DataFrame)


def test_what_each_consumer_shows(bad):
    """docs/python-api.md, "Errors": each consumer raises its own class
    with fastcsv's message (and position)."""
    with pytest.raises(pa.ArrowInvalid, match=POS):
        pa.table(fastcsv.read_arrow(bad))
    with pytest.raises(pa.ArrowInvalid, match=POS):
        pa.table(fastcsv.read_arrow(bad)).to_pandas()
    pl = pytest.importorskip("polars")
    with pytest.raises(Exception, match=POS):
        pl.DataFrame(fastcsv.read_arrow(bad))
    duckdb = pytest.importorskip("duckdb")
    s = fastcsv.read_arrow(bad)  # noqa: F841 - read by DuckDB by name
    with pytest.raises(Exception, match=POS):
        duckdb.sql("from s").fetchall()
