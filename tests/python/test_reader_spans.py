"""A batch keeps each field's span in `data` as two `u32`s; a batch whose
data grows past what those hold (a record of gigabytes) keeps its spans as
`usize` pairs from that field on. The limit is lowered here through
`_fastcsv._set_span_max` so that batches switch over (at their first field,
inside a record, or never): rows, `line_num`, errors and decoding must stay
exactly `csv.reader`'s whatever the limit."""

import csv
import io
from unittest import mock

import fastcsv
import pytest
from conftest import drain
from fastcsv import _fastcsv
from test_reader_regular import make_text, native_kinds


@pytest.fixture
def span_max():
    old = _fastcsv._set_span_max()
    try:
        yield _fastcsv._set_span_max
    finally:
        _fastcsv._set_span_max(old)


def test_set_span_max_returns_previous_and_caps(span_max):
    assert span_max(10) == 2**32 - 1
    assert span_max(2**40) == 10
    # Capped at u32::MAX.
    assert span_max() == 2**32 - 1


@pytest.mark.parametrize("limit", [0, 1, 7, 1000, 50_000, 300_000])
def test_wide_spans_read_as_csv(tmp_path, span_max, limit):
    # Several batches of mixed records (regular ones, quoted, non-ASCII,
    # ones only the state machine reads, errors-free), with every batch's
    # spans going wide after `limit` bytes of its data.
    text = make_text(20_000, 3)
    path = tmp_path / "mixed.csv"
    path.write_bytes(text.encode())
    want = drain(csv.reader(io.StringIO(text, newline="")))
    span_max(limit)
    for kind, make in native_kinds(path):
        assert drain(make()) == want, kind
    with open(path, newline="", encoding="utf-8") as f:
        assert drain(fastcsv.reader(f)) == want
    assert fastcsv.read(path) == [e[0] for e in want]
    # Columns read through the wide spans too (rows padded with "").
    rows = [e[0] for e in want if e[0]]
    cols = fastcsv.read_columns(path, header=False)
    width = max(map(len, rows))
    for c in range(width):
        assert cols[str(c)] == [r[c] if c < len(r) else "" for r in rows]


@pytest.mark.parametrize("limit", [0, 5, 100])
def test_wide_spans_errors_and_limits(tmp_path, span_max, limit):
    # Errors end a batch; the field size limit is checked on wide spans
    # (by a text stream's reader, which reads ahead over a large file):
    # the same rows, errors and `line_num` as with `u32` spans.
    rows = ['a,"b",c\n'] * 3000 + ['x,"unterminated\n', "y," + "z" * 50 + "\n"] * 2
    rows = (rows + ["p,q,r\n"] * 20_000) * 3
    path = tmp_path / "err.csv"
    path.write_text("".join(rows))

    def read_all():
        out = {kind: drain(make(), max_errors=100) for kind, make in native_kinds(path)}
        with mock.patch.object(fastcsv, "_AHEAD_BYTES", -1):
            with open(path, newline="", encoding="utf-8") as f:
                rdr = fastcsv.reader(f)
                assert rdr._batched
                out["text"] = drain(rdr, max_errors=100)
        return out

    old = csv.field_size_limit(40)
    try:
        want = read_all()
        assert any(e[0] == "error" for e in want["text"])
        span_max(limit)
        assert read_all() == want
    finally:
        csv.field_size_limit(old)
