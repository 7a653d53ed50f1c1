"""Native readers take the records the block scanner can prove regular many
at a time and the others one by one: whatever the mix, across batch
boundaries and buffer refills, the rows, `line_num` after each row, errors
and decoding must be exactly `csv.reader`'s over the decoded file."""

import csv
import io
import random

import fastcsv
import pytest
from conftest import drain

# Records of many kinds: regular ones (plain, quoted, doubled quotes,
# multi-line, non-ASCII, blank lines, CRLF) and ones only the state machine
# reads (text after a closing quote, a lone CR line end, a quote inside an
# unquoted field).
PIECES = [
    "1,2.5,abc,,x\n",
    '"q, 1","a ""b"" c",3,"",z\n',
    '"multi\nline","é€🙂",Москва,4,5\n',
    "\n",
    "a,b\r\n",
    '"a""é",x,"y\r\nz",1,2\r\n',
    '"a" b,c,d,e,f\n',
    "lone,cr,end\r",
    'un"quoted,quote,1,2,3\n',
    ",,,,\n",
    "short\n",
]


def make_text(n, seed):
    rng = random.Random(seed)
    return "".join(rng.choice(PIECES) for _ in range(n))


def native_kinds(path):
    yield "path", lambda: fastcsv.reader(path)
    yield "mmap", lambda: fastcsv.reader(path, source="mmap")
    yield "read", lambda: fastcsv.reader(path, source="read", buffer_size=4096)
    with open(path, "rb") as f:
        data = f.read()
    yield "stream", lambda: fastcsv.reader(io.BytesIO(data), buffer_size=1000)


@pytest.mark.parametrize("seed", [1, 2])
def test_mixed_records_over_many_batches(tmp_path, seed):
    # About 2 MB: several batches of each reader, each of several runs of
    # the block scanner between records of the state machine.
    text = make_text(60_000, seed)
    path = tmp_path / "mixed.csv"
    path.write_bytes(text.encode())
    want = drain(csv.reader(io.StringIO(text, newline="")))
    assert len(want) > 50_000
    for kind, make in native_kinds(path):
        assert drain(make()) == want, kind
    assert fastcsv.read(path) == [e[0] for e in want]


def test_regular_runs_only(tmp_path):
    # Regular records alone (one run of the block scanner after another),
    # rows of different widths, blank lines and CRLF among them.
    rng = random.Random(7)
    regular = [p for p in PIECES if p not in ('"a" b,c,d,e,f\n', "lone,cr,end\r",
                                              'un"quoted,quote,1,2,3\n')]
    text = "".join(rng.choice(regular) for _ in range(40_000))
    path = tmp_path / "regular.csv"
    path.write_bytes(text.encode())
    want = drain(csv.reader(io.StringIO(text, newline="")))
    r = fastcsv.reader(path)
    assert drain(r) == want
    assert r.line_num == text.count("\n") + text.count("\r") - text.count("\r\n")


def test_errors_among_regular_records(tmp_path):
    # With strict, text after a closing quote fails; reading goes on at the
    # next line, among regular records, as csv's does.
    body = "".join(f"{i},\"v {i}\",é\n" for i in range(5_000))
    text = body + '"bad" x,1,2\n' + body + '"bad"x\n' + body
    path = tmp_path / "strict.csv"
    path.write_bytes(text.encode())
    want = drain(csv.reader(io.StringIO(text, newline=""), strict=True))
    assert sum(1 for e in want if e[0] == "error") == 2
    got = drain(fastcsv.reader(path, strict=True))
    assert [e[:2] + e[3:] if e[0] == "error" else e for e in got] == [
        e[:2] + e[3:] if e[0] == "error" else e for e in want]


def test_unescaped_fields_decode_as_row_by_row(tmp_path):
    # A regular record holding doubled quotes is read from its unescaped
    # copy: its other fields are not unescaped ones, and a decoding error
    # in them is the field's, as when reading row by row.
    p = tmp_path / "j.csv"
    p.write_bytes(b'h1,h2\n"a""b",\xff\n"a""\xc3\xa9",x\n')
    msg = r"field 1 of .*j\.csv:2: record 1, byte 6"
    with pytest.raises(UnicodeDecodeError, match=msg):
        list(fastcsv.reader(p))
    with pytest.raises(UnicodeDecodeError, match=msg):
        fastcsv.read(p)
    want = [["h1", "h2"], ['a"b', "\ufffd"], ['a"\u00e9', "x"]]
    assert list(fastcsv.reader(p, errors="replace")) == want
    assert fastcsv.read(p, errors="replace") == want


def test_field_limit_among_regular_records(tmp_path):
    # A field over the limit is the state machine's error, at its record,
    # with the rows before it as csv gives them.
    body = "".join(f"{i},abc\n" for i in range(3_000))
    text = body + "x," + "y" * 200 + "\n" + body
    path = tmp_path / "limit.csv"
    path.write_bytes(text.encode())
    old = csv.field_size_limit(100)
    try:
        want = drain(csv.reader(io.StringIO(text, newline="")))
        got = drain(fastcsv.reader(path))
    finally:
        csv.field_size_limit(old)
    assert [e for e in want if e[0] == "error"]
    assert [e[:2] + e[3:] if e[0] == "error" else e for e in got] == [
        e[:2] + e[3:] if e[0] == "error" else e for e in want]


def test_limit_lowered_while_a_text_file_is_read_ahead(tmp_path):
    # A large text file is parsed ahead without the limit; each row is held
    # to the limit in force when it is handed out: rows whose record is
    # short pass at once, and a long field after the limit was lowered
    # fails there, as in csv.
    rows = [f"{i},{'x' * (50 if i % 997 == 0 else 3)},y\n" for i in range(200_000)]
    path = tmp_path / "limit.csv"
    path.write_text("".join(rows), newline="")

    def lower_at(step):
        if step == 1500:
            csv.field_size_limit(20)

    old = csv.field_size_limit()
    try:
        got = {}
        for threads in (1, 2):
            with open(path, newline="") as f:
                r = fastcsv.reader(f, threads=threads)
                assert r._batched
                got[threads] = drain(r, max_errors=1000, before_step=lower_at)
            csv.field_size_limit(old)
        with open(path, newline="") as f:
            want = drain(csv.reader(f), max_errors=1000, before_step=lower_at)
    finally:
        csv.field_size_limit(old)
    assert sum(1 for e in want if e[0] == "error") > 100
    assert got[1] == want
    assert got[2] == want


@pytest.mark.parametrize("close", ["file", "buffer", "raw"])
@pytest.mark.parametrize("size", [100, 200_000], ids=["small", "read-ahead"])
def test_closing_any_layer_of_a_file_stops_as_csv(tmp_path, close, size):
    # `closed` is looked up on the file's FileIO: closing the text file, its
    # buffer or the raw file below raises on the next call, as in csv.
    path = tmp_path / "f.csv"
    path.write_text("".join(f"{i},x\n" for i in range(size)), newline="")

    def run(mod):
        out = []
        with open(path, newline="") as f:
            r = mod.reader(f)
            out.append(next(r))
            {"file": f, "buffer": f.buffer, "raw": f.buffer.raw}[close].close()
            for _ in range(2):
                try:
                    out.append(next(r))
                except ValueError as e:
                    out.append(("ValueError", str(e)))
        return out

    want = run(csv)
    assert want[1][0] == "ValueError"
    assert run(fastcsv) == want
