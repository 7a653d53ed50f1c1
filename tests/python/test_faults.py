"""Faults while reading: nothing lost, nothing silent.

A file that shrinks while it is read (by another process: here the test
itself, between two calls of the reader, or from a codec error handler that
runs in the middle of a bulk read) must end the read with "file changed
while reading" (a ``fastcsv.Error``, which is ``csv.Error``, naming the
path), after a correct prefix of the rows, never with fewer rows as if that
were the whole file, and never with an unrelated error about the zeros that
a truncated mapping reads as. On ``source='mmap'`` the process must also
survive the ``SIGBUS`` of touching a page past the new end, whoever else
installed a ``SIGBUS`` handler (``faulthandler``, before or after the first
mapping): those cases run in a subprocess, whose death would otherwise kill
the test run. Ctrl-C must interrupt a read that waits on a FIFO.
"""

import codecs
import csv
import io
import os
import signal
import subprocess
import sys
import textwrap
import time

import fastcsv
import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the SIGBUS guard and these faults are Linux's")

CHANGED = "file changed while reading"
SOURCES = ["mmap", "read"]
# Where the file is cut, relative to the records around 60% of it.
CUTS = ["boundary", "mid-record", "mid-quote"]


def make_rows(n):
    rows = []
    for i in range(n):
        if i % 50 == 7:
            rows.append([str(i), f"quoted, with a comma\nand a line end {i}", "x" * (i % 13)])
        else:
            rows.append([str(i), f"plain value {i}", "y" * (i % 17)])
    return rows


def encode(rows):
    f = io.StringIO(newline="")
    csv.writer(f, lineterminator="\n").writerows(rows)
    return f.getvalue().encode()


def record_starts(rows):
    """The byte offset of each record's start, and the end."""
    starts = [0]
    for row in rows:
        starts.append(starts[-1] + len(encode([row])))
    return starts


ROWS = make_rows(120_000)  # about 4.5 MiB
DATA = encode(ROWS)
STARTS = record_starts(ROWS)
assert STARTS[-1] == len(DATA)


def cut_offset(kind, frac=0.6):
    """A truncation point near `frac` of the file: at a record's start, a
    few bytes into a plain record, or inside a quoted field after its line
    end."""
    i = int(len(ROWS) * frac)
    if kind == "boundary":
        return STARTS[i]
    if kind == "mid-record":
        while ROWS[i][1].startswith("quoted"):
            i += 1
        return STARTS[i] + 3
    while not ROWS[i][1].startswith("quoted"):
        i += 1
    return STARTS[i] + DATA[STARTS[i]:].index(b"\n") + 4


@pytest.fixture
def data_file(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(DATA)
    return p


def check_prefix(got):
    assert got == ROWS[: len(got)], "the rows before the error are not the file's"
    assert len(got) < len(ROWS)


def check_changed(e, path):
    assert isinstance(e, fastcsv.Error) and isinstance(e, csv.Error)
    assert CHANGED in str(e) and str(path) in str(e), str(e)


# -- Row by row: truncated between two calls --------------------------------


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("api", ["reader", "DictReader"])
def test_reader_truncated_between_calls(data_file, source, cut, api):
    if api == "reader":
        r = fastcsv.reader(str(data_file), source=source)
        as_row = list
    else:
        r = fastcsv.DictReader(str(data_file), fieldnames=["a", "b", "c"], source=source)
        as_row = lambda d: [d["a"], d["b"], d["c"]]  # noqa: E731
    got = [as_row(next(r)) for _ in range(100)]
    os.truncate(data_file, cut_offset(cut))
    with pytest.raises(fastcsv.Error) as ei:
        for row in r:
            got.append(as_row(row))
    check_changed(ei.value, data_file)
    check_prefix(got)
    # The reader stays stopped: no rows after the error.
    assert list(r) == []


@pytest.mark.parametrize("source", SOURCES)
def test_reader_small_file_read_whole_before_the_cut(tmp_path, source):
    # One batch, read whole by the first call: the rows are the file's as
    # it was, all of them (nothing after the cut was read from the file).
    p = tmp_path / "s.csv"
    p.write_bytes(encode(ROWS[:200]))
    r = fastcsv.reader(str(p), source=source)
    first = next(r)
    os.truncate(p, 10)
    assert [first, *r] == ROWS[:200]


# -- Bulk reads: truncated from inside the call -----------------------------

_cut_to = []


def _truncating_handler(e):
    """A codec error handler: the first call cuts the file (the bulk read
    is then in the middle of the file, with later batches still to scan)."""
    if _cut_to:
        path, size = _cut_to.pop()
        os.truncate(path, size)
    return ("?", e.end)


codecs.register_error("fastcsv-test-truncate", _truncating_handler)


def bad_byte_file(path):
    """The data with a byte that is not UTF-8 at about 5% of the file."""
    i = len(ROWS) // 20
    while ROWS[i][1].startswith("quoted"):
        i += 1
    at = STARTS[i] + len(ROWS[i][0]) + 1
    data = bytearray(DATA)
    assert data[at:at + 5] == b"plain"
    data[at] = 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("api", ["read", "read_columns"])
def test_bulk_truncated_during_the_call(data_file, source, cut, api):
    bad_byte_file(data_file)
    _cut_to[:] = [(data_file, cut_offset(cut, 0.7))]
    fn = getattr(fastcsv, api)
    kw = {"header": False} if api == "read_columns" else {}
    with pytest.raises(fastcsv.Error) as ei:
        fn(str(data_file), source=source, errors="fastcsv-test-truncate", **kw)
    assert not _cut_to, "the handler did not run"
    check_changed(ei.value, data_file)


def test_bulk_error_handler_without_truncation_reads_everything(data_file):
    # The same read without the cut succeeds (so the test above can fail).
    bad_byte_file(data_file)
    rows = fastcsv.read(str(data_file), errors="replace")
    i = len(ROWS) // 20
    assert rows[i][1] == "\ufffdlain value %d" % i
    assert len(rows) == len(ROWS) and rows[:i] + rows[i + 1:] == ROWS[:i] + ROWS[i + 1:]


# -- Arrow: truncated between two batches -----------------------------------


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("threads", [1, 2])
def test_read_arrow_truncated_between_batches(tmp_path, source, cut, threads):
    pa = pytest.importorskip("pyarrow")
    # Twice over: the parallel path wants 8 MiB.
    p = tmp_path / "t.csv"
    p.write_bytes(DATA + DATA)
    s = fastcsv.read_arrow(str(p), header=False, batch_rows=5000, threads=threads,
                           source=source)
    rdr = pa.RecordBatchReader.from_stream(s)
    got = rdr.read_next_batch().to_pylist()
    os.truncate(p, len(DATA) + cut_offset(cut))
    with pytest.raises(Exception) as ei:
        while True:
            got.extend(rdr.read_next_batch().to_pylist())
    assert not isinstance(ei.value, StopIteration), "the cut file read as if whole"
    assert CHANGED in str(ei.value), str(ei.value)
    rows = [[d["0"], d["1"], d["2"]] for d in got]
    assert rows == (ROWS + ROWS)[: len(rows)]


# -- Dask: the file shrinks between planning and reading --------------------


def test_dask_file_shrunk_after_split(data_file):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    import dask

    from fastcsv import dask as fdask
    df = fdask.read_csv(str(data_file), header=False, blocksize=1 << 20)
    os.truncate(data_file, cut_offset("mid-record"))
    with pytest.raises(fastcsv.Error) as ei:
        df.compute(scheduler="sync")
    check_changed(ei.value, data_file)
    del dask


# -- SIGBUS with other handlers installed -----------------------------------

CHILD = textwrap.dedent("""
    import faulthandler, os, sys
    import fastcsv
    path, when, api, cut = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if when == "before":
        faulthandler.enable()
    if api == "reader":
        r = fastcsv.reader(path, source="mmap")
        got = [next(r) for _ in range(10)]
        if when == "after":
            faulthandler.enable()
        os.truncate(path, cut)
        rows = r
    else:
        s = fastcsv.read_arrow(path, header=False, batch_rows=1000, threads=1,
                               source="mmap")
        import pyarrow as pa
        rdr = pa.RecordBatchReader.from_stream(s)
        rdr.read_next_batch()
        if when == "after":
            faulthandler.enable()
        os.truncate(path, cut)
        def batches():
            while True:
                yield rdr.read_next_batch()
        rows = batches()
    try:
        n = sum(1 for _ in rows)
    except StopIteration:
        print("SUCCESS", n)
    except Exception as e:
        print("ERROR", type(e).__name__, e)
    else:
        print("SUCCESS")
    sys.stdout.flush()
""")


def run_child(args, timeout=60):
    return subprocess.run([sys.executable, "-c", CHILD, *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("api", ["reader", "read_arrow"])
@pytest.mark.parametrize("when", ["before", "after", "never"])
def test_sigbus_with_faulthandler(data_file, when, api):
    if api == "read_arrow":
        pytest.importorskip("pyarrow")
    r = run_child([data_file, when, api, cut_offset("boundary", 0.5)])
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.startswith("ERROR") and CHANGED in r.stdout, (r.stdout, r.stderr[-2000:])


FOREIGN = textwrap.dedent("""
    import ctypes, faulthandler, mmap, os, sys
    import fastcsv
    # A SIGBUS that is not fastcsv's (a truncated mapping of the test's
    # own) still kills the process, after faulthandler's report, while a
    # fastcsv mapping is live and faulthandler came after it.
    path, other = sys.argv[1], sys.argv[2]
    r = fastcsv.reader(path, source="mmap")
    next(r)
    faulthandler.enable()
    with open(other, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        os.truncate(other, 0)
        print("value", ctypes.c_char.from_buffer_copy(m, 3 * mmap.PAGESIZE).value)
""")


def test_foreign_sigbus_still_kills(data_file, tmp_path):
    other = tmp_path / "other.bin"
    other.write_bytes(b"x" * (8 * 4096))
    r = subprocess.run([sys.executable, "-c", FOREIGN, str(data_file), str(other)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == -signal.SIGBUS, (r.returncode, r.stdout, r.stderr[-2000:])
    assert "Fatal Python error: Bus error" in r.stderr


# -- Ctrl-C while waiting on a FIFO -----------------------------------------

FIFO_CHILD = textwrap.dedent("""
    import sys, time
    import fastcsv
    path, api = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    t = time.monotonic()
    try:
        if api == "reader":
            next(fastcsv.reader(path))
        elif api == "read":
            fastcsv.read(path)
        else:
            fastcsv.read_arrow(path)
    except KeyboardInterrupt:
        print("interrupted after %.2f" % (time.monotonic() - t), flush=True)
        sys.exit(0)
    print("not interrupted", flush=True)
    sys.exit(1)
""")


@pytest.mark.parametrize("api", ["reader", "read", "read_arrow"])
@pytest.mark.parametrize("writer", ["none", "silent"])
def test_ctrl_c_while_waiting_on_a_fifo(tmp_path, api, writer):
    if api == "read_arrow":
        pytest.importorskip("pyarrow")
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    p = subprocess.Popen([sys.executable, "-c", FIFO_CHILD, str(fifo), api],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = None
    with p:
        try:
            assert p.stdout.readline().strip() == "ready"
            if writer == "silent":
                # A writer that connects and writes nothing (as `sleep 8 |`).
                w = os.open(fifo, os.O_WRONLY)
            time.sleep(0.5)
            p.send_signal(signal.SIGINT)
            t = time.monotonic()
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                pytest.fail(f"not interrupted: {out} {err[-2000:]}")
            took = time.monotonic() - t
        finally:
            if w is not None:
                os.close(w)
    assert p.returncode == 0, (out, err[-2000:])
    assert out.startswith("interrupted"), out
    # Within ~0.1 s on an idle machine; generous for a loaded one.
    assert took < 5, took


def test_fifo_still_reads_like_a_file(tmp_path):
    # Opened without blocking, read with poll: the same rows, and the end
    # only once the writer has gone.
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    data = encode(ROWS[:3000])
    code = textwrap.dedent("""
        import os, sys, time
        time.sleep(0.3)
        fd = os.open(sys.argv[1], os.O_WRONLY)
        half = len(sys.argv[2]) // 2
        os.write(fd, sys.argv[2][:half].encode())
        time.sleep(0.3)
        os.write(fd, sys.argv[2][half:].encode())
        os.close(fd)
    """)
    w = subprocess.Popen([sys.executable, "-c", code, str(fifo), data.decode()])
    try:
        assert fastcsv.read(str(fifo)) == ROWS[:3000]
    finally:
        w.wait(timeout=30)


# -- Compressed input --------------------------------------------------------

SMALL = ROWS[:20_000]


def compress(data, fmt):
    """`data` compressed as `fmt`: the standard library, or the `zstd`
    command (the standard library of 3.11 has no zstd)."""
    import bz2
    import gzip
    import lzma
    import shutil
    if fmt == "gz":
        return gzip.compress(data)
    if fmt == "bz2":
        return bz2.compress(data)
    if fmt == "xz":
        return lzma.compress(data)
    if shutil.which("zstd") is None:
        pytest.skip("no zstd command")
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True,
                          check=True).stdout


FORMATS = ["gz", "zst", "bz2", "xz"]


@pytest.fixture(params=FORMATS)
def packed(request, tmp_path):
    p = tmp_path / f"t.csv.{request.param}"
    p.write_bytes(compress(encode(SMALL), request.param))
    return p


def test_compressed_paths_read_as_the_plain_file(packed):
    assert list(fastcsv.reader(str(packed))) == SMALL
    assert fastcsv.read(str(packed)) == SMALL
    with open(packed, "rb") as f:
        assert fastcsv.read(f) == SMALL
    with open(packed, "rb") as f:
        assert list(fastcsv.reader(f)) == SMALL
    cols = fastcsv.read_columns(str(packed), header=False)
    assert [list(r) for r in zip(*cols.values())] == SMALL
    d = list(fastcsv.DictReader(str(packed), fieldnames=["a", "b", "c"]))
    assert [[r["a"], r["b"], r["c"]] for r in d] == SMALL


@pytest.mark.parametrize("threads", [1, 2])
def test_compressed_read_arrow(tmp_path, threads):
    pa = pytest.importorskip("pyarrow")
    # Larger than the parallel reader's threshold once decompressed.
    p = tmp_path / "big.csv.gz"
    p.write_bytes(compress(DATA + DATA, "gz"))
    t = pa.table(fastcsv.read_arrow(str(p), header=False, threads=threads))
    assert t.num_rows == 2 * len(ROWS)
    assert t.slice(len(ROWS) - 2, 4).to_pylist() == [
        dict(zip("012", r)) for r in (ROWS[-2:] + ROWS[:2])]


def test_compressed_name_does_not_matter(tmp_path):
    p = tmp_path / "plain.csv"
    p.write_bytes(compress(encode(SMALL), "gz"))
    assert fastcsv.read(str(p)) == SMALL


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("api", ["reader", "read", "read_columns", "read_arrow", "file"])
def test_truncated_compressed_file_is_an_error(tmp_path, fmt, api):
    p = tmp_path / f"cut.csv.{fmt}"
    packed = compress(encode(SMALL), fmt)
    p.write_bytes(packed[: len(packed) * 2 // 3])
    with pytest.raises((fastcsv.Error, OSError, RuntimeError)) as ei:
        if api == "reader":
            list(fastcsv.reader(str(p)))
        elif api == "read":
            fastcsv.read(str(p))
        elif api == "read_columns":
            fastcsv.read_columns(str(p), header=False)
        elif api == "file":
            with open(p, "rb") as f:
                fastcsv.read(f)
        else:
            pa = pytest.importorskip("pyarrow")
            pa.table(fastcsv.read_arrow(str(p), header=False))
    assert str(p) in str(ei.value), str(ei.value)


def test_compressed_file_cut_while_read(tmp_path):
    # Cut while the reader is in the middle: an error, never fewer rows.
    p = tmp_path / "t.csv.gz"
    packed = compress(DATA, "gz")
    p.write_bytes(packed)
    r = fastcsv.reader(str(p))
    got = [next(r) for _ in range(100)]
    os.truncate(p, len(packed) // 2)
    with pytest.raises((fastcsv.Error, OSError)) as ei:
        got.extend(r)
    assert str(p) in str(ei.value)
    check_prefix(got)
