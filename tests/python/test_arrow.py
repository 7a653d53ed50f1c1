"""fastcsv.read_arrow: the Arrow PyCapsule stream, read here through ctypes
(no pyarrow needed) and, where installed, by pyarrow and polars; the
columns against csv.reader's rows."""

from __future__ import annotations

import csv
import ctypes
import io
import math
import random
import re

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
    # errors='replace' (issue 37): invalid UTF-8 read as U+FFFD.
    assert consume(fastcsv.read_arrow(b"a\n\xff\n", errors="replace"))[1] == [["\ufffd"]]
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


# ---------------------------------------------------------------------------
# Typed columns (types="infer" or a dict): pyarrow's conversion rules.

_FORMATS = {
    b"u": "utf8", b"l": "int64", b"g": "float64", b"b": "bool", b"tdD": "date32[day]",
    b"tss:": "timestamp[s]", b"tsn:": "timestamp[ns]", b"tss:UTC": "timestamp[s, tz=UTC]",
    b"tsn:UTC": "timestamp[ns, tz=UTC]",
}


def consume_typed(stream) -> tuple[list[str], list[str], list[list[object]]]:
    """Names, types and rows (None for a null) of a stream, read through
    ctypes as an Arrow consumer does."""
    cap = stream.__arrow_c_stream__()
    s = ctypes.cast(_get_pointer(cap, b"arrow_array_stream"), ctypes.POINTER(ArrowArrayStream))
    schema = ArrowSchema()
    assert s.contents.get_schema(s, ctypes.byref(schema)) == 0
    names, types = [], []
    for k in range(schema.n_children):
        child = schema.children[k].contents
        names.append(child.name.decode())
        types.append(_FORMATS[child.format])
    schema.release(ctypes.byref(schema))
    rows: list[list[object]] = []
    try:
        while True:
            a = ArrowArray()
            if s.contents.get_next(s, ctypes.byref(a)) != 0:
                raise RuntimeError(s.contents.get_last_error(s).decode())
            if not a.release:
                break
            n = a.length
            cols = []
            for k in range(a.n_children):
                c = a.children[k].contents
                ty = types[k]
                valid = [True] * n
                if c.buffers[0]:
                    bits = ctypes.cast(c.buffers[0], ctypes.POINTER(ctypes.c_uint8))
                    valid = [bool(bits[i // 8] >> (i % 8) & 1) for i in range(n)]
                assert c.null_count == valid.count(False)
                if ty == "utf8":
                    offs = ctypes.cast(c.buffers[1], ctypes.POINTER(ctypes.c_int32))
                    data = ctypes.cast(c.buffers[2], ctypes.POINTER(ctypes.c_char))
                    vals = [data[offs[i] : offs[i + 1]].decode() for i in range(n)]
                elif ty == "bool":
                    bits = ctypes.cast(c.buffers[1], ctypes.POINTER(ctypes.c_uint8))
                    vals = [bool(bits[i // 8] >> (i % 8) & 1) for i in range(n)]
                else:
                    ct = ctypes.c_int64 if ty == "int64" else ctypes.c_double
                    buf = ctypes.cast(c.buffers[1], ctypes.POINTER(ct))
                    vals = [buf[i] for i in range(n)]
                cols.append([v if ok else None for v, ok in zip(vals, valid)])
            a.release(ctypes.byref(a))
            rows.extend(list(r) for r in zip(*cols))
    finally:
        del cap
    return names, types, rows


_NULLS = {
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null",
}
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|infinity|nan)", re.I)


def typed_value(s: str, ty: str) -> object:
    """The oracle: ``s`` as a value of ``ty`` by the documented rules;
    ValueError when it does not fit."""
    if ty == "utf8":
        return s
    t = s.strip(" \t")
    if ty == "int64":
        if re.fullmatch(r"0[xX][0-9a-fA-F]{1,16}", t):
            n = int(t[2:], 16)
            return n - (1 << 64) if n >= 1 << 63 else n
        if re.fullmatch(r"-?[0-9]+", t) and -(1 << 63) <= int(t) < 1 << 63:
            return int(t)
    elif ty == "float64":
        if _FLOAT.fullmatch(t):
            x = float(t)
            if not (math.isnan(x) and s in _NULLS):
                return x
    elif ty == "bool":
        if s in ("1", "true", "True", "TRUE"):
            return True
        if s in ("0", "false", "False", "FALSE"):
            return False
    if s in _NULLS:
        return None
    raise ValueError(s)


def inferred(values: list[str]) -> str:
    def fits(ty: str) -> bool:
        try:
            for v in values:
                typed_value(v, ty)
            return True
        except ValueError:
            return False

    if all(v in _NULLS for v in values):
        return "utf8"
    return next((t for t in ("int64", "bool", "float64") if fits(t)), "utf8")


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


TOKENS = [
    "", "NA", "NaN", "nan", "null", "NULL", "#N/A", "-1.#IND", "n/a", "true", "True", "FALSE",
    "1", "0", "-0", "inf", "-Infinity", "NAN", "+nan", "+5", "0.0", ".5", "5.", "1e3", "1E-3",
    " 7", "2.5\t", "0x1F", "0xFFFFFFFFFFFFFFFF", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "x", "1_000", "1,5", "-", ".", "e5", "  ", "0001",
]


TIMES = [
    "2024-08-18", "2000-02-29", "1970-01-01", "2024-08-18T10:10:32", "2024-08-18 10:10",
    "2024-08-18T10", "2024-08-18T10:10:32.5", "2024-08-18T10:10:32.123456789",
    "2024-08-18T10:10:32Z", "2024-08-18T10:10:32+01:00", "2024-08-18T10:10:32-0530",
    "2024-08-18T10:10:32.25Z", "2024-08-18T10:10:32+01", "9999-12-31T23:59:59",
    "1900-02-29", "2024-08-18T24:00:00", "2024-08-18Z", "2024-8-18", " 2024-08-18",
]


def random_time(rng: random.Random, style: int) -> str:
    if rng.random() < 0.05:
        return rng.choice(TIMES + ["", "NA"])
    y, m, d = rng.randrange(1, 10000), rng.randrange(1, 13), rng.randrange(1, 29)
    hh, mm, ss = rng.randrange(24), rng.randrange(60), rng.randrange(60)
    day = f"{y:04}-{m:02}-{d:02}"
    if style == 0:
        return day
    if style == 1:
        return f"{day}T{hh:02}:{mm:02}:{ss:02}"
    if style == 2:
        # Mostly within the years nanoseconds cover (1677-2262).
        y = rng.randrange(1600, 2300) if rng.random() < 0.95 else y
        day = f"{y:04}-{m:02}-{d:02}"
        return f"{day} {hh:02}:{mm:02}:{ss:02}.{rng.randrange(10**6):06}"
    return f"{day}T{hh:02}:{mm:02}:{ss:02}" + rng.choice(["Z", "+01:00", "-0330", "+05"])


def random_table(
    rng: random.Random, rows: int, cols: int, temporal: bool = False
) -> list[list[str]]:
    kinds = [rng.randrange(7 if temporal else 5) for _ in range(cols)]
    styles = [rng.randrange(4) for _ in range(cols)]

    def value(kind: int, j: int) -> str:
        if rng.random() < 0.1:
            return rng.choice(TOKENS)
        if kind == 0:
            return str(rng.randint(-(10**12), 10**12))
        if kind == 1:
            return repr(rng.uniform(-1e6, 1e6)) if rng.random() < 0.8 else f"{rng.random():.3e}"
        if kind == 2:
            return rng.choice(["true", "false", "True", "0", "1", ""])
        if kind == 3:
            return rng.choice(["", "NA", "null", "nan"])
        if kind == 5:
            return random_time(rng, styles[j])
        if kind == 6:
            return random_time(rng, rng.randrange(4))
        return rng.choice(TOKENS + ["abc", "a,b", 'q"q'])

    return [[value(k, j) for j, k in enumerate(kinds)] for _ in range(rows)]


def to_csv(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return out.getvalue().encode()


@pytest.mark.parametrize("seed", range(60))
def test_inferred_columns_follow_the_rules(seed):
    rng = random.Random(seed)
    rows, cols = rng.randrange(1, 60), rng.randrange(1, 5)
    table = random_table(rng, rows, cols)
    header = [f"c{j}" for j in range(cols)]
    names, types, got = consume_typed(fastcsv.read_arrow(to_csv(header, table), types="infer"))
    assert names == header
    assert types == [inferred([r[j] for r in table]) for j in range(cols)]
    want = [[typed_value(v, types[j]) for j, v in enumerate(r)] for r in table]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert all(same(a, b) for a, b in zip(g, w)), (g, w)


def test_types_by_name_and_index(tmp_path):
    data = b"id,price,ok,name\n1,2.5,true,a\n2,,0,b\n3,NA,,c\n"
    s = fastcsv.read_arrow(data, types={"price": "float64", 0: "int", "ok": "boolean"})
    assert s.column_types == ["int64", "float64", "bool", "utf8"]
    names, types, rows = consume_typed(s)
    assert rows == [[1, 2.5, True, "a"], [2, None, False, "b"], [3, None, None, "c"]]
    s = fastcsv.read_arrow(data, types={"id": "utf8", "name": "str"})
    assert s.column_types == ["utf8"] * 4
    assert fastcsv.read_arrow(data).column_types == ["utf8"] * 4
    assert fastcsv.read_arrow(data, types="infer").column_types == ["int64", "float64", "bool", "utf8"]
    with pytest.raises(TypeError, match='unknown column type "decimal"'):
        fastcsv.read_arrow(data, types={"id": "decimal"})
    with pytest.raises(ValueError, match="column \"nope\" the file does not have"):
        fastcsv.read_arrow(data, types={"nope": "int64"})
    with pytest.raises(ValueError, match="column 9, but there are 4 columns"):
        fastcsv.read_arrow(data, types={9: "int64"})
    with pytest.raises(ValueError, match="'infer' or a dict"):
        fastcsv.read_arrow(data, types="guess")
    with pytest.raises(TypeError, match="'infer' or a dict"):
        fastcsv.read_arrow(data, types=["int64"])
    with pytest.raises(TypeError, match="a name or an index"):
        fastcsv.read_arrow(data, types={1.5: "int64"})


def test_a_value_that_does_not_fit_is_an_error_at_its_row(tmp_path):
    p = tmp_path / "t.csv"
    lines = ["n,x"] + [f"{i},{i}.5" for i in range(100)] + ["oops,1"]
    p.write_text("\n".join(lines) + "\n")
    at = len("\n".join(lines[:-1])) + 1
    msg = rf't.csv:102: record 101, byte {at}: field 0 is not a valid int64: "oops"'
    s = fastcsv.read_arrow(str(p), types={"n": "int64", "x": "float64"}, batch_rows=30)
    with pytest.raises(RuntimeError, match=msg):
        consume_typed(s)
    # The rows before it come first.
    s = fastcsv.read_arrow(str(p), types={"n": "int64"}, batch_rows=30)
    cap = s.__arrow_c_stream__()
    st = ctypes.cast(_get_pointer(cap, b"arrow_array_stream"), ctypes.POINTER(ArrowArrayStream))
    got = 0
    while True:
        a = ArrowArray()
        if st.contents.get_next(st, ctypes.byref(a)) != 0:
            break
        got += a.length
        a.release(ctypes.byref(a))
    assert got == 100
    del cap
    # Inferred from the first 65536 rows (infer_rows), the types can miss
    # a later value; on the whole column (the default) they cannot.
    lines = ["n"] + [str(i) for i in range(70_000)] + ["1.5"]
    p.write_text("\n".join(lines) + "\n")
    assert fastcsv.read_arrow(str(p), types="infer").column_types == ["float64"]
    s = fastcsv.read_arrow(str(p), types="infer", infer_rows=65536)
    assert s.column_types == ["int64"]
    with pytest.raises(RuntimeError, match='t.csv:70002: record 70001, .* not a valid int64: "1.5"'):
        consume_typed(s)


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("batch_rows", [1, 1000])
def test_selected_columns_are_those_of_the_rows(tmp_path, text, batch_rows):
    kw = {"delimiter": ";"} if ";" in text else {}
    header, rows = oracle(text, **kw)
    for sel in ([], [len(header) - 1], list(reversed(range(len(header))))):
        if any(j < 0 for j in sel):
            continue
        for key in (sel, [header[j] for j in sel]):
            s = fastcsv.read_arrow(text.encode(), batch_rows=batch_rows, columns=key, **kw)
            names, got, _ = consume(s)
            assert names == [header[j] for j in sel]
            want = [[r[j] for j in sel] for r in rows]
            # With no column, no batch has any value to hold its rows.
            assert got == (want if sel else [])


def test_selected_columns_by_name_and_index(tmp_path):
    data = b"id,price,ok,name\n1,2.5,true,a\n2,,0,b\n3,NA,,\xff\n"
    # A value that is not UTF-8 in a column left out is no error.
    s = fastcsv.read_arrow(data, columns=["price", 0], types="infer")
    assert (s.column_names, s.column_types) == (["price", "id"], ["float64", "int64"])
    assert consume_typed(s)[2] == [[2.5, 1], [None, 2], [None, 3]]
    # types: keys are the file's columns; one not selected is left out.
    s = fastcsv.read_arrow(data, columns=(2,), types={"ok": "bool", "id": "int64", 1: "float64"})
    assert (s.column_names, s.column_types) == (["ok"], ["bool"])
    assert consume_typed(s)[2] == [[True], [False], [None]]
    # In a selected column, it is, at its place in the row.
    with pytest.raises(RuntimeError, match=r"record 3, byte \d+: invalid UTF-8 in field 3 "):
        consume(fastcsv.read_arrow(data, columns=["name", "id"]))
    # A longer row is an error whatever the selection.
    with pytest.raises(RuntimeError, match="found record with 3 fields"):
        consume(fastcsv.read_arrow(b"a,b\n1,2\n3,4,5\n", columns=["a"]))
    for bad, exc, msg in [
        (["nope"], ValueError, 'columns names a column "nope" the file does not have'),
        ([4], ValueError, "columns names column 4, but there are 4 columns"),
        (["id", 0], ValueError, 'columns names column "id" twice'),
        ("id", TypeError, "list of column names or indices, not str"),
        ([True], TypeError, "a name or an index"),
        ([1.5], TypeError, "a name or an index, not 1.5"),
        (7, TypeError, "list of column names or indices"),
    ]:
        with pytest.raises(exc, match=msg):
            fastcsv.read_arrow(data, columns=bad)


def big_file(tmp_path, header: str, row) -> str:
    """A file of 400,000 rows ``row(i)`` (over 8 MiB: read on two threads
    when asked)."""
    p = tmp_path / "big.csv"
    with open(p, "w") as f:
        f.write(header + "\n")
        for i in range(400_000):
            f.write(row(i) + "\n")
    assert p.stat().st_size >= 8 << 20
    return str(p)


def one_and_two(path: str, **kw):
    """``consume_typed`` of ``read_arrow(path, **kw)`` on one thread, the
    same as on two."""
    one = consume_typed(fastcsv.read_arrow(path, threads=1, **kw))
    assert consume_typed(fastcsv.read_arrow(path, threads=2, **kw)) == one
    return one


def test_selected_columns_on_two_threads_are_those_of_one(tmp_path):
    row = lambda i: f'{i},{i / 8},{"true" if i % 3 else "False"},"n {i}, ""q"""'  # noqa: E731
    p = big_file(tmp_path, "n,x,flag,note", row)
    for types in (None, "infer"):
        one = one_and_two(p, columns=["note", "n"], types=types)
        assert one[0] == ["note", "n"]
        assert one[2][11] == ['n 11, "q"', 11 if types else "11"]


def test_custom_null_and_boolean_spellings():
    data = b"n,ok,x,s\n1,yes,1.5,a\n-,no,,b\n3,-,NaN,\n"
    kw = {"null_values": ["-", "NaN"], "true_values": ["yes"], "false_values": ["no"]}
    s = fastcsv.read_arrow(data, types="infer", **kw)
    # The empty value is no longer null: x does not fit float64.
    assert s.column_types == ["int64", "bool", "utf8", "utf8"]
    assert consume_typed(s)[2] == [[1, True, "1.5", "a"], [None, False, "", "b"], [3, None, "NaN", ""]]
    kw["null_values"] = ["-", "NaN", ""]
    s = fastcsv.read_arrow(data, types="infer", **kw)
    assert s.column_types == ["int64", "bool", "float64", "utf8"]
    assert consume_typed(s)[2][1:] == [[None, False, None, "b"], [3, None, None, ""]]
    # A null spelling is null even where it would be a value.
    s = fastcsv.read_arrow(b"a,b\n0,1\n1,0\n", types={"a": "bool", "b": "int64"}, null_values=["0"])
    assert consume_typed(s)[2] == [[None, 1], [True, None]]
    # In text columns too, when asked (the values keep their text).
    # (true_values and false_values need types: see test_pandas_habits.)
    s = fastcsv.read_arrow(data, strings_can_be_null=True, null_values=kw["null_values"])
    assert consume_typed(s)[2] == [["1", "yes", "1.5", "a"], [None, "no", None, "b"], ["3", None, None, None]]
    # Not a list of str.
    for bad, msg in [("NA", "null_values must be a list of str"), ([1], "true_values must be")]:
        key = "null_values" if "null" in msg else "true_values"
        with pytest.raises(TypeError, match=msg):
            fastcsv.read_arrow(data, types="infer", **{key: bad})


def test_custom_spellings_on_two_threads(tmp_path):
    row = lambda i: f'{"?" if i % 7 == 0 else i},{"Y" if i % 3 else "N"},{i / 4},note {i}'  # noqa: E731
    p = big_file(tmp_path, "n,flag,x,s", row)
    kw = {"types": "infer", "null_values": ["?"], "true_values": ["Y"], "false_values": ["N"]}
    one = one_and_two(p, columns=["flag", "n"], **kw)
    assert one[1] == ["bool", "int64"]
    assert one[2][:2] == [[False, None], [True, 1]]


def test_typed_columns_on_two_threads_are_those_of_one(tmp_path):
    def row(i: int) -> str:
        x = "" if i % 11 == 0 else f"{i / 8}"
        return f'{i},{x},{"true" if i % 3 else "False"},"n {i}, ""q"""'

    one = one_and_two(big_file(tmp_path, "n,x,flag,note", row), types="infer")
    assert one[1] == ["int64", "float64", "bool", "utf8"]
    assert one[2][11] == [11, None, True, 'n 11, "q"']


def test_quoted_fields_across_cuts_on_two_threads(tmp_path):
    # Quoted fields of line ends and no quote, each under the field size
    # limit: a cut 4 MiB in (the parts of a file this size) lands more
    # than 64 KiB inside one, where no quote byte is near it. The bound
    # guessed there proves wrong and is placed again. The fields' lines
    # look like rows whose last value is text, which a part that began
    # inside one would sample.
    inner = "k,inside,abc\n" * 9000
    rows = [f"{i},\"{inner}\",{i}\n" for i in range(100)]
    pad = []
    head = len("n,note,x\n")
    while (4 << 20) - head - len("".join(pad)) < 0 or ((4 << 20) - head - len("".join(pad))) % len(rows[0]) < 90_000:
        pad.append(f"{len(pad)},p,{len(pad)}\n")
    p = tmp_path / "quoted.csv"
    p.write_text("n,note,x\n" + "".join(pad) + "".join(rows))
    assert p.stat().st_size >= 10 << 20
    for types, want in [("infer", ["int64", "utf8", "int64"]), (None, ["utf8"] * 3)]:
        names, got, out = one_and_two(str(p), types=types)
        assert (names, got, len(out)) == (["n", "note", "x"], want, len(pad) + 100)
        assert out[-1][1].count("\n") == 9000


def test_pyarrow_reads_the_same_table():
    pa = pytest.importorskip("pyarrow")
    pacsv = pytest.importorskip("pyarrow.csv")
    for seed in range(60):
        rng = random.Random(seed)
        rows, cols = rng.randrange(1, 200), rng.randrange(1, 6)
        table = random_table(rng, rows, cols, temporal=True)
        # A column whose values are all null is pyarrow's `null` type and
        # our utf8: give each column one value that is not.
        for j in range(cols):
            if all(r[j] in _NULLS for r in table):
                table[0][j] = rng.choice(["1", "2.5", "true", "x", "2024-08-18"])
        data = to_csv([f"c{j}" for j in range(cols)], table)
        ours = pa.table(fastcsv.read_arrow(data, types="infer"))
        theirs = pacsv.read_csv(io.BytesIO(data))
        assert [str(t) for t in ours.schema.types] == [str(t) for t in theirs.schema.types], seed
        for a, b in zip(ours.columns, theirs.columns):
            for x, y in zip(a.to_pylist(), b.to_pylist()):
                assert same(x, y) or (x is None and y is None), (seed, x, y)
        # Other spellings of nulls and booleans, as pyarrow takes them.
        spell = {
            "null_values": rng.sample(["", "NA", "nan", "-", "0", "x", "true"], rng.randrange(4)),
            "true_values": rng.sample(["1", "true", "yes", "x"], rng.randrange(1, 3)),
            "false_values": rng.sample(["0", "False", "no"], rng.randrange(1, 3)),
            "strings_can_be_null": rng.random() < 0.5,
        }
        mine = pa.table(fastcsv.read_arrow(data, types="infer", **spell))
        views = pa.table(fastcsv.read_arrow(data, types="infer", string_view=True, **spell))
        for a, b in zip(views.columns, mine.columns):
            assert all(same(x, y) or x is y is None for x, y in zip(a.to_pylist(), b.to_pylist()))
        theirs = pacsv.read_csv(io.BytesIO(data), convert_options=pacsv.ConvertOptions(**spell))
        for a, b in zip(mine.columns, theirs.columns):
            if str(b.type) == "null":
                continue  # all null: pyarrow's null type, our utf8
            assert str(a.type) == str(b.type), (seed, spell, a.type, b.type)
            for x, y in zip(a.to_pylist(), b.to_pylist()):
                assert same(x, y) or (x is None and y is None), (seed, spell, x, y)
        # A selection, as pyarrow's include_columns takes it.
        sel = rng.sample([f"c{j}" for j in range(cols)], rng.randrange(1, cols + 1))
        picked = pa.table(fastcsv.read_arrow(data, types="infer", columns=sel))
        opts = pacsv.ConvertOptions(include_columns=sel)
        assert picked.equals(ours.select(sel)), seed
        assert picked.schema.names == pacsv.read_csv(io.BytesIO(data), convert_options=opts).schema.names


def test_polars_and_duckdb_read_typed_columns():
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    data = (
        b"i,f,b,d,t,tz,s\n"
        b"1,1.5,true,2024-08-18,2024-08-18T10:10:32,2024-08-18T10:10:32+02:00,x\n"
        b",NaN,,NA,,,\n"
    )
    df = pl.DataFrame(fastcsv.read_arrow(data, types="infer"))
    assert [str(t) for t in df.dtypes][:4] == ["Int64", "Float64", "Boolean", "Date"]
    assert df["tz"][0].isoformat() == "2024-08-18T08:10:32+00:00"
    assert df.null_count().row(0) == (1, 1, 1, 1, 1, 1, 0)
    s = fastcsv.read_arrow(data, types="infer")
    kinds = [r[1] for r in duckdb.sql("describe select * from s").fetchall()]
    assert kinds == [
        "BIGINT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP_S", "TIMESTAMP WITH TIME ZONE", "VARCHAR"
    ]
    s = fastcsv.read_arrow(data, types="infer")
    assert duckdb.sql("select i, f, s from s").fetchall() == [(1, 1.5, "x"), (None, None, "")]


def test_string_views_hold_the_same_strings():
    # Read through ctypes: the views decoded by hand.
    data = 'a,b\nshort,a value longer than twelve\n"x,y",\u00e9\n,"q""q"\n'.encode()
    s = fastcsv.read_arrow(data, string_view=True)
    cap = s.__arrow_c_stream__()
    st = ctypes.cast(_get_pointer(cap, b"arrow_array_stream"), ctypes.POINTER(ArrowArrayStream))
    schema = ArrowSchema()
    assert st.contents.get_schema(st, ctypes.byref(schema)) == 0
    assert [schema.children[k].contents.format for k in range(2)] == [b"vu", b"vu"]
    schema.release(ctypes.byref(schema))
    a = ArrowArray()
    assert st.contents.get_next(st, ctypes.byref(a)) == 0
    c = a.children[1].contents
    assert c.n_buffers == 4
    views = ctypes.string_at(c.buffers[1], 16 * c.length)
    data_buf = ctypes.string_at(c.buffers[2], ctypes.cast(c.buffers[3], ctypes.POINTER(ctypes.c_int64))[0])
    got = []
    for i in range(c.length):
        v = views[16 * i : 16 * i + 16]
        n = int.from_bytes(v[:4], "little")
        at = int.from_bytes(v[12:], "little")
        got.append((v[4 : 4 + n] if n <= 12 else data_buf[at : at + n]).decode())
    assert got == ["a value longer than twelve", "\u00e9", 'q"q']
    a.release(ctypes.byref(a))
    del cap


def test_string_views_on_two_threads_into_pyarrow_and_polars(tmp_path):
    p = tmp_path / "big.csv"
    with open(p, "w") as f:
        f.write("n,s\n")
        for i in range(600_000):
            f.write(f'{i},"value {i} of the column, longer"\n')
    pa = pytest.importorskip("pyarrow")
    t = pa.table(fastcsv.read_arrow(str(p), string_view=True, types="infer", threads=2))
    assert str(t.schema.field("s").type) == "string_view"
    u = pa.table(fastcsv.read_arrow(str(p), types="infer", threads=1))
    assert t.cast(u.schema).equals(u)
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(fastcsv.read_arrow(str(p), string_view=True))
    assert df["s"][123_456] == "value 123456 of the column, longer"


def test_names_on_two_threads_are_those_of_one(tmp_path):
    # pandas' names= (the file has no header row): the columns' names on
    # every thread count, with columns and types naming them; a row
    # shorter than the names padded, a longer one an error.
    row = lambda i: f"{i},{i / 8},note {i:08}" if i != 399_990 else f"{i},0.5"  # noqa: E731
    p = big_file(tmp_path, "0,0.0,first", row)
    names3 = ["n", "x", "note"]
    for kw, want in [
        ({}, names3),
        ({"types": "infer"}, names3),
        ({"columns": ["note", "n"], "types": {"n": "int64"}}, ["note", "n"]),
        ({"types": "infer", "columns": [2]}, ["note"]),
    ]:
        names, _, rows = one_and_two(p, names=names3, **kw)
        assert names == want, kw
        assert rows[0][names.index("note")] == "first"
        assert len(rows) == 400_001
    names, _, rows = one_and_two(p, names=names3)
    assert rows[-10] == ["399990", "0.5", ""]
    long = big_file(tmp_path, "0,0.0,a,b", lambda i: f"{i},{i / 8},note {i:08},m")
    for threads in (1, 2):
        with pytest.raises(fastcsv.Error, match="record 0, byte 0: found record with 4 fields"):
            fastcsv.read_arrow(long, names=names3, threads=threads).read_all()
