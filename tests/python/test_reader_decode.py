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


# Run in a child process: `FASTCSV_AUTO_THREAD` is read once per process.
AUTO_CHILD = r"""
import csv, io, json, sys
import fastcsv

path, bad_path = sys.argv[1], sys.argv[2]


def drain(make):
    # Rows, line numbers and errors (reading on after each), and whether
    # a second thread scanned ahead at some point.
    r, out, ahead = make(), [], False
    while True:
        try:
            row = next(r)
        except StopIteration:
            break
        except (csv.Error, UnicodeDecodeError) as e:
            out.append(["error", type(e).__name__, str(e), r.line_num])
            continue
        finally:
            ahead = ahead or r._reads_ahead
        out.append([row, r.line_num])
    return out, ahead


result = {}
for name, p in (("good", path), ("bad", bad_path)):
    for src in ("path", "binary", "text"):
        def make(threads, src=src, p=p):
            arg = {"path": lambda: p, "binary": lambda: open(p, "rb"),
                   "text": lambda: open(p, newline="", encoding="utf-8", errors="surrogateescape")}[src]()
            return fastcsv.reader(arg, threads=threads)
        auto, ahead = drain(lambda: make(None))
        one, _ = drain(lambda: make(1))
        result[f"{name} {src}"] = [auto == one, ahead, auto if name == "good" else None]
print(json.dumps(result))
"""


@pytest.mark.parametrize("decide", ["always", "never"])
def test_the_automatic_plans_thread_scans_and_this_thread_decodes(tmp_path, decide):
    # `FASTCSV_AUTO_THREAD=always`: the automatic plan starts its thread
    # after the first batch, whatever the timing, and that thread only
    # scans (this one decodes the fields past ASCII as it makes their
    # objects); `never`: no thread. Either way the rows, line numbers and
    # errors (reading on after each) are those of one thread, and `csv`'s.
    import json
    import os
    import subprocess
    import sys

    texts = field_texts()
    one = rows_file(texts)
    data = one * (1 + (3 << 20) // len(one))
    p = tmp_path / "kinds.csv"
    p.write_bytes(data)
    # Invalid UTF-8 in one line of 500 (in every batch): with the strict
    # default each is an error; a text file opened with surrogateescape
    # reads them as surrogates.
    lines = data.split(b"\r\n")
    for i in range(0, len(lines) - 1, 500):
        lines[i] = b"\xff" + lines[i]
    q = tmp_path / "bad.csv"
    q.write_bytes(b"\r\n".join(lines))
    env = dict(os.environ, FASTCSV_AUTO_THREAD=decide)
    out = subprocess.run([sys.executable, "-c", AUTO_CHILD, str(p), str(q)], env=env,
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    want = [[row, n] for row, n in zip(csv_rows(data), range(1, 1 << 30))]
    for case, (same, ahead, rows) in result.items():
        assert same, case
        assert ahead == (decide == "always"), case
        if rows is not None:
            assert rows == want, case
