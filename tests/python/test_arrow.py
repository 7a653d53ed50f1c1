"""fastcsv.read_arrow: the Arrow PyCapsule stream, read here through ctypes
(no pyarrow needed) and, where installed, by pyarrow and polars; the
columns against csv.reader's rows."""

from __future__ import annotations

import csv
import ctypes
import io

import pytest

import fastcsv


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))),
    ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))),
    ("private_data", ctypes.c_void_p),
]


class ArrowArrayStream(ctypes.Structure):
    pass


ArrowArrayStream._fields_ = [
    (
        "get_schema",
        ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowSchema)
        ),
    ),
    (
        "get_next",
        ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowArray)
        ),
    ),
    ("get_last_error", ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowArrayStream))),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))),
    ("private_data", ctypes.c_void_p),
]

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


# get_next called with the GIL held (ctypes lets it go for CFUNCTYPE calls).
_NEXT_WITH_GIL = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowArray)
)


def consume(stream, hold_gil: bool = False) -> tuple[list[str], list[list[str]], list[int]]:
    """Names, rows and batch sizes, read as an Arrow consumer does; a
    RuntimeError with get_last_error's message on failure."""
    cap = stream.__arrow_c_stream__()
    s = ctypes.cast(_get_pointer(cap, b"arrow_array_stream"), ctypes.POINTER(ArrowArrayStream))
    get_next = s.contents.get_next
    if hold_gil:
        get_next = _NEXT_WITH_GIL(ctypes.cast(get_next, ctypes.c_void_p).value)
    schema = ArrowSchema()
    assert s.contents.get_schema(s, ctypes.byref(schema)) == 0
    assert schema.format == b"+s"
    names = []
    for k in range(schema.n_children):
        child = schema.children[k].contents
        assert child.format == b"u"
        names.append(child.name.decode())
    schema.release(ctypes.byref(schema))
    rows: list[list[str]] = []
    sizes = []
    try:
        while True:
            a = ArrowArray()
            if get_next(s, ctypes.byref(a)) != 0:
                raise RuntimeError(s.contents.get_last_error(s).decode())
            if not a.release:
                break
            n = a.length
            sizes.append(n)
            assert a.n_children == len(names) and a.null_count == 0
            cols = []
            for k in range(a.n_children):
                c = a.children[k].contents
                assert (c.length, c.n_buffers, c.null_count) == (n, 3, 0)
                offs = ctypes.cast(c.buffers[1], ctypes.POINTER(ctypes.c_int32))
                data = ctypes.cast(c.buffers[2], ctypes.POINTER(ctypes.c_char))
                cols.append(
                    [data[offs[i] : offs[i + 1]].decode() for i in range(n)]
                )
            a.release(ctypes.byref(a))
            rows.extend(list(r) for r in zip(*cols))
    finally:
        del cap  # releases the stream
    return names, rows, sizes


def oracle(text: str, **kw) -> tuple[list[str], list[list[str]]]:
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), **kw) if r]
    if not rows:
        return [], []
    header, body = rows[0], rows[1:]
    return header, [r + [""] * (len(header) - len(r)) for r in body]


CASES = [
    'id,"na""me",note\n1,Ada,"a,b"\n2,"",\n3,"x\r\ny",z\n',
    "a;b\n1;2\n\n3;4\n",
    "h\n",
    "",
    "a,b,c\r\n1,2\r\n\r\n4,5,6",
    "x,y\n\u00e9,\u6771\u4eac\n\U0001f600,\n",
]


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("batch_rows", [1, 2, 1000])
def test_columns_are_csv_rows(tmp_path, text, batch_rows):
    kw = {"delimiter": ";"} if ";" in text else {}
    p = tmp_path / "t.csv"
    p.write_bytes(text.encode())
    want = oracle(text, **kw)
    for src in (str(p), text.encode(), open(p, "rb")):  # noqa: SIM115
        names, rows, sizes = consume(fastcsv.read_arrow(src, batch_rows=batch_rows, **kw))
        assert (names, rows) == want
        assert all(n == batch_rows for n in sizes[:-1]) and all(sizes)
        if hasattr(src, "close"):
            src.close()


def test_a_consumer_may_hold_the_gil(tmp_path):
    # get_next then lets the GIL go while it parses, and takes it back.
    p = tmp_path / "big.csv"
    p.write_text("a,b\n" + "".join(f'{i},"x{i}"\n' for i in range(300_000)))
    names, rows, sizes = consume(fastcsv.read_arrow(str(p), batch_rows=100_000), hold_gil=True)
    assert names == ["a", "b"] and len(rows) == 300_000 and sizes == [100_000] * 3
    assert rows[123_456] == ["123456", "x123456"]


def test_without_header_columns_are_numbered():
    names, rows, _ = consume(fastcsv.read_arrow(b"1,2\n3,4\n", header=False))
    assert names == ["0", "1"] and rows == [["1", "2"], ["3", "4"]]


def test_errors(tmp_path):
    # Before any row: at once, as csv.Error; after rows: from the stream,
    # once the rows before it are out.
    with pytest.raises(csv.Error, match="line 2: record 1, byte 4: found record with 3 fields"):
        fastcsv.read_arrow(b"a,b\n1,2,3\n")
    s = fastcsv.read_arrow(b"a,b\n1,2\n3,4,5\n", batch_rows=10)
    with pytest.raises(RuntimeError, match="line 3: record 2, byte 8: found record with 3"):
        consume(s)
    p = tmp_path / "bad.csv"
    p.write_bytes(b"a,b\n1,2\n3,\xff\n")
    with pytest.raises(RuntimeError, match=r"bad.csv:3: record 2, byte 8: .*UTF-8"):
        consume(fastcsv.read_arrow(str(p), batch_rows=5))
    with pytest.raises(TypeError, match="path, a binary file or bytes"):
        fastcsv.read_arrow(["a,b\n"])
    with pytest.raises(ValueError, match="batch_rows"):
        fastcsv.read_arrow(b"a\n", batch_rows=0)
    with pytest.raises(ValueError, match="QUOTE_NONNUMERIC"):
        fastcsv.read_arrow(b"a\n", quoting=csv.QUOTE_NONNUMERIC)
    with pytest.raises(ValueError, match="strict"):
        fastcsv.read_arrow(b"a\n", errors="replace")
    with pytest.raises(FileNotFoundError):
        fastcsv.read_arrow(str(tmp_path / "missing.csv"))


def test_a_stream_is_read_once_and_released_unread():
    s = fastcsv.read_arrow(b"a,b\n1,2\n")
    assert s.column_names == ["a", "b"]
    assert "unread" in repr(s)
    cap = s.__arrow_c_stream__()
    del cap  # released by the capsule, never read
    with pytest.raises(ValueError, match="already read"):
        s.__arrow_c_stream__()
    schema = s.__arrow_c_schema__()
    p = ctypes.cast(_get_pointer(schema, b"arrow_schema"), ctypes.POINTER(ArrowSchema))
    assert p.contents.n_children == 2


def test_pyarrow_and_polars_read_it(tmp_path):
    pa = pytest.importorskip("pyarrow")
    p = tmp_path / "t.csv"
    text = "".join(f'{i},"v{i}""\n"\n' for i in range(5000))
    p.write_text("k,v\n" + text)
    t = pa.table(fastcsv.read_arrow(str(p), batch_rows=999))
    assert t.column_names == ["k", "v"] and t.num_rows == 5000
    assert t.column("v")[4321].as_py() == 'v4321"\n'
    try:
        import polars as pl
    except ImportError:
        return
    df = pl.DataFrame(fastcsv.read_arrow(str(p)))
    assert df.shape == (5000, 2) and df["k"][4999] == "4999"
