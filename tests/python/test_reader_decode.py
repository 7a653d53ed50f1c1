"""Fields past ASCII, decoded by the native readers to CPython's string
kinds (UCS-1, UCS-2, UCS-4), against `csv` over the decoded text: every
width class, short and long fields (the decoders take ASCII a block at a
time), empty and quoted fields, and invalid UTF-8 at every position of a
field."""

import csv
import io

import fastcsv
import pytest

# Field texts of every kind: ASCII, UCS-1 (below U+0100), UCS-2, UCS-4,
# each alone, inside ASCII runs across the 8- and 16-byte steps, and at
# both ends.
CORES = [
    "", "a", "é", "\x80", "ÿ", "Zürich", "Øresund Ångström", "Ā", "€12",
    "Москва", "東京", "서울 x", "\uffff", "🙂", "a🙂b", "é€🙂", "\U0010ffff",
]
PADS = ["", "x", "abcdefg", "abcdefgh", "abcdefghijklmno", "abcdefghijklmnop",
        "abcdefghijklmnopq", "0123456789" * 4]


def field_texts():
    out = []
    for core in CORES:
        for pad in PADS:
            out += [pad + core, core + pad, pad + core + pad, core + pad + core]
    return out


def csv_rows(data: bytes, errors: str = "strict"):
    return list(csv.reader(io.StringIO(data.decode("utf-8", errors), newline="")))


def rows_file(texts):
    """A CSV of one row per text: the text, an empty field, the text
    quoted with a delimiter and doubled quotes in it, and the text again
    quoted as it is."""
    lines = []
    for t in texts:
        quoted = '"' + (t + ', ""q"" ' + t).replace("\n", " ") + '"'
        lines.append(f'{t},,{quoted},"{t}"')
    return ("\r\n".join(lines) + "\r\n").encode()


def test_every_width_class_through_every_native_input(tmp_path):
    texts = field_texts()
    data = rows_file(texts)
    want = csv_rows(data)
    assert [r[0] for r in want] == texts
    p = tmp_path / "kinds.csv"
    p.write_bytes(data)
    assert list(fastcsv.reader(str(p))) == want
    # On one thread the fields are decoded as their objects are made
    # (a row's list, or field by field for a DictReader).
    assert list(fastcsv.reader(str(p), threads=1)) == want
    names = [f"c{i}" for i in range(4)]
    dicts = list(fastcsv.DictReader(str(p), fieldnames=names, threads=1))
    assert dicts == [dict(zip(names, w)) for w in want]
    assert fastcsv.read(str(p)) == want
    assert list(fastcsv.reader(io.BytesIO(data))) == want
    with open(p, newline="", encoding="utf-8") as f:
        assert list(fastcsv.reader(f)) == want
    # The string kinds are CPython's own (the narrowest that holds the
    # text): equal strings of equal kinds have equal sizes.
    import sys

    for got in (fastcsv.read(str(p)), list(fastcsv.reader(str(p), threads=1))):
        for g, w in zip(got, want):
            assert [sys.getsizeof(x) for x in g] == [sys.getsizeof(x) for x in w], w


def test_every_width_class_read_ahead_from_a_large_text_file(tmp_path):
    # Over 1 MiB: a text file read in batches, on this thread or a second.
    texts = field_texts()
    data = rows_file(texts) * (1 + (1 << 20) // len(rows_file(texts)))
    want = csv_rows(data)
    p = tmp_path / "large.csv"
    p.write_bytes(data)
    for threads in (None, 1, 2):
        with open(p, newline="", encoding="utf-8") as f:
            r = fastcsv.reader(f, threads=threads)
            assert r._batched
            assert r._reads_ahead == (threads == 2)
            assert list(r) == want
    assert list(fastcsv.reader(str(p))) == want


BAD = [b"\xff", b"\x80", b"\xbf", b"\xc3", b"\xc3A", b"\xc1\xbf", b"\xe2\x82",
       b"\xed\xa0\x80", b"\xe0\x80\xaf", b"\xf4\x90\x80\x80", b"\xf0\x9f\x99"]

BAD_CORES = ["abc", "é", "Zürich Øre", "Москва", "€", "🙂x", "abcdefghijklmnopqrs"]


def bad_fields():
    """Each core with each bad sequence at each position: (field, whether
    the sequence ends the field)."""
    for core in BAD_CORES:
        raw = core.encode()
        for bad in BAD:
            for at in range(len(raw) + 1):
                yield raw[:at] + bad + raw[at:], at == len(raw)


@pytest.mark.parametrize("errors", ["replace", "surrogateescape", "backslashreplace"])
def test_invalid_utf8_at_every_position_with_a_handler(tmp_path, errors):
    p = tmp_path / "bad.csv"
    for field, _ in bad_fields():
        data = b"ok,\xc3\xa9\r\n" + field + b",x\r\n\"" + field + b"\",y\r\n"
        want = csv_rows(data, errors)
        p.write_bytes(data)
        assert list(fastcsv.reader(str(p), errors=errors)) == want, field
        assert list(fastcsv.reader(str(p), errors=errors, threads=1)) == want, field
        assert fastcsv.read(data, errors=errors) == want, field


def test_invalid_utf8_at_every_position_strict(tmp_path):
    p = tmp_path / "bad.csv"
    for field, at_end in bad_fields():
        data = b"ok,\xc3\xa9\r\n" + field + b",x\r\n"
        with pytest.raises(UnicodeDecodeError) as want:
            data.decode("utf-8")
        p.write_bytes(data)
        reads = (
            lambda: list(fastcsv.reader(str(p))),
            lambda: list(fastcsv.reader(str(p), threads=1)),
            lambda: fastcsv.read(data),
        )
        for read in reads:
            with pytest.raises(UnicodeDecodeError) as got:
                read()
            # The same bad bytes, for the same reason, located in the file.
            # (A field is decoded alone: a sequence cut short by the
            # field's end is "unexpected end of data" there, where the
            # whole file has a delimiter after it.)
            g, w = got.value, want.value
            assert g.object[g.start:g.end] == w.object[w.start:w.end], field
            reasons = [w.reason] + (["unexpected end of data"] if at_end else [])
            assert any(g.reason.startswith(r + " (") for r in reasons), (g.reason, w.reason)
            assert g.reason.endswith("2: record 1, byte 7)"), g.reason
        with open(p, newline="", encoding="utf-8") as f, pytest.raises(UnicodeDecodeError):
            list(fastcsv.reader(f))
