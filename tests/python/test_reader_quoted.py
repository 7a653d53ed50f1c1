"""Records with quoted fields that the block scanner takes, as the native
readers' read-ahead turns them into spans in one pass over the delimiters
(a record with doubled quotes from its unescaped copy, one byte off each
end of a quoted field): every shape of quoted field in every place of a
record, with short and wide spans, against `csv.reader`; and records with
doubled quotes between bytes that are not UTF-8 (which the read-ahead
checks for the records to decode before splitting)."""

import csv
import io
import random

import fastcsv
import pytest
from conftest import drain
from fastcsv import _fastcsv
from test_reader_regular import native_kinds

# Field texts as written in the file, quoted or not, with and without
# doubled quotes (at the start, the end, alone, around a delimiter), empty,
# and past ASCII.
FIELDS = [
    "", '""', "a", '"a"', '""""', '"a""b"', '"""a"', '"a"""', '""""""',
    '"x,y"', '"x,""y"""', '"é"', '"Москва ""東京"""', '"🙂""x"', "Zürich",
    '"a\nb"', '"a\r\nb"', '"' + "long text " * 5 + '""q"""', "0123456789" * 3,
]


def make_rows(n, seed, width):
    rng = random.Random(seed)
    return "".join(",".join(rng.choice(FIELDS) for _ in range(width)) + "\n" for _ in range(n))


@pytest.fixture
def span_max():
    old = _fastcsv._set_span_max()
    try:
        yield _fastcsv._set_span_max
    finally:
        _fastcsv._set_span_max(old)


@pytest.mark.parametrize("seed,width", [(1, 1), (2, 3), (3, 8)])
def test_quoted_records_read_as_csv(tmp_path, seed, width):
    text = "h\n" + make_rows(20_000, seed, width)
    path = tmp_path / "q.csv"
    path.write_bytes(text.encode())
    want = drain(csv.reader(io.StringIO(text, newline="")))
    for kind, make in native_kinds(path):
        assert drain(make()) == want, kind
    assert fastcsv.read(path) == [e[0] for e in want]


@pytest.mark.parametrize("limit", [0, 5, 4000])
def test_quoted_records_with_wide_spans(tmp_path, span_max, limit):
    text = make_rows(6_000, 4, 5)
    path = tmp_path / "q.csv"
    path.write_bytes(text.encode())
    want = drain(csv.reader(io.StringIO(text, newline="")))
    span_max(limit)
    for kind, make in native_kinds(path):
        assert drain(make()) == want, kind


# A doubled quote between the two halves of a character (or next to a byte
# that is no part of one): the file is not UTF-8, and a field that is not
# ASCII was unescaped.
JOINED = [b'"\xc3""\xa9"', b'"x\xe2""\x82\xac"', b'"\xc3"""', b'"""\xa9"', b'"\xff""a"']


@pytest.mark.parametrize("errors", ["replace", "surrogateescape", "backslashreplace"])
def test_doubled_quotes_between_bytes_past_ascii(tmp_path, errors):
    filler = b"".join(b'%d,"q ""%d""",\xc3\xa9\n' % (i, i) for i in range(3000))
    for bad in JOINED:
        data = filler + b"a," + bad + b",z\n" + bad + b",b\n" + filler
        want = list(csv.reader(io.StringIO(data.decode("utf-8", errors), newline="")))
        path = tmp_path / "j.csv"
        path.write_bytes(data)
        makers = [
            lambda: fastcsv.reader(str(path), errors=errors),
            lambda: fastcsv.reader(str(path), errors=errors, source="mmap"),
            lambda: fastcsv.reader(str(path), errors=errors, source="read", buffer_size=4096),
            lambda: fastcsv.reader(io.BytesIO(data), errors=errors, buffer_size=1000),
        ]
        for k, make in enumerate(makers):
            assert list(make()) == want, (k, bad)
        assert fastcsv.read(data, errors=errors) == want, bad


def test_doubled_quotes_between_bytes_past_ascii_strict(tmp_path):
    filler = b"".join(b'%d,"q ""%d""",\xc3\xa9\n' % (i, i) for i in range(3000))
    data = filler + b'a,"\xc3""\xa9",z\n' + filler
    path = tmp_path / "j.csv"
    path.write_bytes(data)
    rdr = fastcsv.reader(str(path))
    with pytest.raises(UnicodeDecodeError) as e:
        list(rdr)
    # The record is decoded before it is split (as `csv` over the decoded
    # file would see it): the error is located in the record.
    assert str(e.value) == (
        "'utf-8' codec can't decode byte 0xc3 in position 3: invalid continuation byte"
        f" (record of {path}:3001: record 3000, byte 60780)"
    )
    assert rdr.line_num == 3001
