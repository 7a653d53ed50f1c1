"""Parts of a split file (``fastcsv.split``, ``summarize``, ``resolve``):
read one after another, they give exactly what ``csv.reader`` gives over
the whole file: rows, ``line_num`` and errors."""

from __future__ import annotations

import csv
import io
import os
import pickle
import random
import re

import pytest
from hypothesis import given, strategies as st

import fastcsv

from test_arrow import consume


def sample_text(seed: int, rows: int = 300) -> str:
    r = random.Random(seed)
    out = ["id,name,note\r\n" if seed % 2 else "id,name,note\n"]
    for i in range(rows):
        kind = r.randrange(6)
        if kind == 0:
            note = '"multi\nline, with ""quotes"""'
        elif kind == 1:
            note = '"' + "x" * r.randrange(0, 200) + '"'
        elif kind == 2:
            note = ""
        elif kind == 3:
            note = "\u00e9t\u00e9 " * r.randrange(1, 5)
        else:
            note = "plain"
        out.append(f"{i},n{r.randrange(1000)},{note}" + ("\r\n" if seed % 2 else "\n"))
        if r.randrange(40) == 0:
            out.append("\n")
    return "".join(out)


def whole(path, **kw):
    with open(path, newline="", encoding="utf-8") as f:
        rdr = csv.reader(f, **kw)
        return [(row, rdr.line_num) for row in rdr]


def by_parts(parts, **kw):
    out = []
    for p in parts:
        rdr = fastcsv.reader(p, **kw)
        out.extend((row, rdr.line_num) for row in rdr)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("size", [1, 7, 100, 1000, 1 << 20])
def test_parts_read_as_csv_reads_the_file(tmp_path, seed, size):
    path = tmp_path / "f.csv"
    path.write_bytes(sample_text(seed).encode())
    parts = fastcsv.split(path, size=size)
    assert parts[0].start == 0 and parts[-1].end == path.stat().st_size
    assert all(a.end == b.start for a, b in zip(parts, parts[1:]))
    assert by_parts(parts) == whole(path)
    rows = [r for p in parts for r in fastcsv.read(p)]
    assert rows == [r for r, _ in whole(path)]


@given(st.text(alphabet='ab,"\r\n \u00e9', max_size=80), st.lists(st.integers(0, 100), max_size=4))
def test_any_text_and_cuts(tmp_path_factory, text, cuts):
    path = tmp_path_factory.mktemp("s") / "f.csv"
    data = text.encode()
    path.write_bytes(data)
    bounds = [0] + sorted(min(c, len(data)) for c in cuts) + [len(data)]
    sums = [fastcsv.summarize(path, a, b) for a, b in zip(bounds, bounds[1:])]
    parts = fastcsv.resolve(path, sums)
    assert len(parts) == len(bounds) - 1
    assert by_parts(parts) == whole(path)


def test_summaries_give_what_split_gives_and_parts_pickle(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(sample_text(3, 2000).encode())
    size = 4096
    parts = fastcsv.split(path, size=size)
    n = path.stat().st_size
    sums = [fastcsv.summarize(path, k, min(k + size, n)) for k in range(0, n, size)]
    assert fastcsv.resolve(path, sums) == parts
    assert pickle.loads(pickle.dumps(parts)) == parts
    # Every part starts after a line end (or at 0), and not inside the
    # quoted fields that hold line ends.
    data = path.read_bytes()
    for p in parts[1:]:
        assert p.start == n or data[p.start - 1] == 10, p
        assert data.count(b'"', 0, p.start) % 2 == 0, p


def test_columns_and_arrow_of_later_parts_are_named_by_the_header(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(sample_text(4, 500).encode())
    parts = fastcsv.split(path, size=2000)
    assert len(parts) > 3
    want = fastcsv.read_columns(path)
    got: dict[str, list[str]] = {k: [] for k in want}
    for p in parts:
        for k, v in fastcsv.read_columns(p).items():
            got[k].extend(v)
    assert got == want
    names, rows, _ = consume(fastcsv.read_arrow(path))
    all_rows = []
    for p in parts:
        n, r, _ = consume(fastcsv.read_arrow(p))
        assert n == names
        all_rows.extend(r)
    assert all_rows == rows
    # Without a header row, columns are numbered in every part.
    n, _, _ = consume(fastcsv.read_arrow(parts[2], header=False))
    assert n == ["0", "1", "2"]


def test_dict_readers_of_later_parts_use_the_files_names(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(sample_text(2, 300).encode())
    parts = fastcsv.split(path, size=700)
    with open(path, newline="", encoding="utf-8") as f:
        want = list(csv.DictReader(f))
    got = [d for p in parts for d in fastcsv.DictReader(p)]
    assert got == want
    # Given names win.
    assert next(iter(fastcsv.DictReader(parts[3], ["a", "b", "c"]))).keys() == {"a", "b", "c"}


def rows_and_errors(rdr) -> list:
    """Rows, and each error's message, reading on after errors."""
    out: list = []
    while True:
        try:
            out.append(next(rdr))
        except StopIteration:
            return out
        except csv.Error as e:
            out.append(str(e))


def test_errors_carry_whole_file_positions(tmp_path):
    path = tmp_path / "f.csv"
    good = "".join(f"{i},\"a\nb\"\n" for i in range(100))
    path.write_bytes((good + '1,"x"y\n' + good).encode())
    native = rows_and_errors(fastcsv.reader(str(path), strict=True))
    got = []
    for p in fastcsv.split(path, size=50, strict=True):
        got.extend(rows_and_errors(fastcsv.reader(p, strict=True)))
    assert got == native
    assert any(isinstance(x, str) and ":201: record 100," in x for x in got), got


def test_bad_input_is_refused_clearly(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b\n1,2\n3,4\n")
    with pytest.raises(FileNotFoundError):
        fastcsv.split(tmp_path / "missing.csv")
    with pytest.raises(TypeError):
        fastcsv.split(io.BytesIO(b"a\n"))
    with pytest.raises(ValueError, match="size"):
        fastcsv.split(path, size=0)
    a = fastcsv.summarize(path, 0, 5)
    b = fastcsv.summarize(path, 5, 12)
    with pytest.raises(ValueError, match="in order"):
        fastcsv.resolve(path, [b, a])
    with pytest.raises(ValueError, match="another dialect"):
        fastcsv.resolve(path, [a, fastcsv.summarize(path, 5, 12, delimiter=";")])
    with pytest.raises(ValueError, match="not a fastcsv range summary"):
        fastcsv.resolve(path, [b"junk"])
    with pytest.raises(ValueError, match="not within"):
        fastcsv.summarize(path, 5, 100)
    with pytest.raises(ValueError):
        fastcsv.split(path, delimiter="\u00e9")
    with pytest.raises(ValueError):
        fastcsv.Part(str(path), 0, 5, 2, 0, 0)
    part = fastcsv.Part(str(path), 0, 0, 12, 0, 0)
    with pytest.raises(ValueError, match="natively"):
        fastcsv.reader(part, delimiter="\u00e9")


def test_an_empty_file_is_one_empty_part(tmp_path):
    path = tmp_path / "e.csv"
    path.write_bytes(b"")
    parts = fastcsv.split(path)
    assert [(p.start, p.end) for p in parts] == [(0, 0)]
    assert fastcsv.read(parts[0]) == []


def test_a_pipe_or_device_is_refused_not_one_empty_part(tmp_path):
    # A FIFO or device has a size of 0: it used to split as an empty file,
    # one part of no rows, and fastcsv.dask read nothing from it.
    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # so that opening it to read does not block
    try:
        os.write(writer, b"a,b\n1,2\n")
        for path in (fifo, "/dev/null"):
            # The message names the file, as the CLI's does.
            named = re.escape(f"{path}: not a regular file")
            with pytest.raises(ValueError, match=named):
                fastcsv.split(path)
            with pytest.raises(ValueError, match=named):
                fastcsv.summarize(path, 0, 0)
    finally:
        os.close(writer)


def test_read_arrow_on_threads_gives_the_same_columns_and_errors(tmp_path):
    path = tmp_path / "big.csv"
    line = '{i},"multi\nline, ""q""",\u00e9t\u00e9 {i}\n'
    body = "".join(line.format(i=i) for i in range(250_000))
    path.write_bytes(("id,note,word\n" + body).encode())
    assert path.stat().st_size > 8 << 20
    one = consume(fastcsv.read_arrow(path, threads=1))
    two = consume(fastcsv.read_arrow(path, threads=2, batch_rows=10_000))
    assert one[0] == two[0] and one[1] == two[1]
    assert max(two[2]) <= 10_000 and len(two[2]) > len(one[2])
    # A bad row late in the file: the rows before it, then its error.
    with open(path, "ab") as f:
        f.write(b"1,2,3,4\n")
    with pytest.raises(RuntimeError, match=r":500002: record 250001, byte \d+"):
        consume(fastcsv.read_arrow(path, threads=2))
    with pytest.raises(ValueError, match="threads"):
        fastcsv.read_arrow(path, threads=0)


@pytest.mark.parametrize("head", ["id,note,n\n", '"id",note,n\n'])
def test_read_arrow_on_threads_without_quotes(tmp_path, head):
    # No quote in the body: the parts are cut where the bytes since the
    # file's start show no quote (or, with one in the header, exactly).
    path = tmp_path / "plain.csv"
    body = "".join(f"{i},note {i % 97},{i * 7}\n" for i in range(400_000))
    path.write_bytes((head + body).encode())
    assert path.stat().st_size > 8 << 20
    want = list(csv.reader(io.StringIO(head + body)))
    for threads in (None, 2, 3):
        names, rows, _ = consume(fastcsv.read_arrow(path, threads=threads))
        assert [names] + rows == want
    with open(path, "ab") as f:
        f.write(b"1,2\n1,2,3,4\n")
    with pytest.raises(RuntimeError, match=r":400003: record 400002, byte \d+"):
        consume(fastcsv.read_arrow(path))


def test_read_arrow_default_threads_are_the_usable_cpus():
    assert 1 <= fastcsv._default_threads() <= 8
