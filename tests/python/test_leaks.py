"""Memory: many small readers and a bulk read leave RSS flat; returned
objects hold no extra references."""

import ctypes
import ctypes.util
import gc
import io
import sys

import fastcsv
import psutil
import pytest

MiB = 1 << 20


def _trimmer():
    """glibc's malloc_trim, or None elsewhere."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


_malloc_trim = _trimmer()


def rss():
    """Resident set size after a collection. On glibc, free memory that the
    allocator keeps in its per-thread arenas is handed back first: a reader
    with a read-ahead thread frees in one arena what another allocated, and
    the arenas' cached pages (about 10 MiB, flat over any number of readers)
    would otherwise hide or fake a leak."""
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)
    return psutil.Process().memory_info().rss


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.csv"
    p.write_text('a,b,"c d"\n1,2,3\n')
    return p


def churn(small, n):
    for _ in range(n):
        assert len(list(fastcsv.reader(small))) == 2
        assert len(list(fastcsv.reader(["a,b\n", "c,d\n"]))) == 2
        with open(small, "rb") as f:
            assert len(fastcsv.read(f)) == 2
        assert len(fastcsv.read(io.BytesIO(b"x,y\n"), intern=True)) == 1
        with open(small, newline="", encoding="utf-8") as f:
            assert len(list(fastcsv.reader(f))) == 2
        assert len(list(fastcsv.reader(io.StringIO("a\r\nb\r\n", newline=None)))) == 2


def test_many_small_readers_leave_rss_flat(small):
    churn(small, 1_000)  # warm up allocators and caches
    # A leak grows RSS in every round (4 MiB is about 70 bytes a reader).
    # RSS is the whole process's: a thread left by an earlier test (a
    # Dask or Arrow pool) that allocates during one round would fake a
    # leak (seen once in CI: 4.1 MiB in a single round), so the least
    # growth of three rounds is the readers' own.
    grown = []
    for _ in range(3):
        before = rss()
        churn(small, 10_000)
        grown.append(rss() - before)
    assert min(grown) < 4 * MiB, f"RSS grew by {[f'{g / MiB:.1f}' for g in grown]} MiB"


def test_bulk_read_leaves_rss_flat(tmp_path):
    p = tmp_path / "bulk.csv"
    p.write_bytes(b"alpha,1234,\"quoted, text\",\xc3\xa9t\xc3\xa9\n" * 200_000)
    rows = fastcsv.read(p)
    assert len(rows) == 200_000
    del rows
    before = rss()
    for _ in range(3):
        rows = fastcsv.read(p)
        assert len(rows) == 200_000
        del rows
    grown = rss() - before
    assert grown < 8 * MiB, f"RSS grew by {grown / MiB:.1f} MiB"


def test_refcounts_are_sane(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("hello,world\n")
    with open(p, newline="", encoding="utf-8") as f:
        from_text = list(fastcsv.reader(f))
    for rows in (fastcsv.read(p), list(fastcsv.reader(p)),
                 list(fastcsv.reader(["hello,world\n"])), from_text):
        row = rows[0]
        # Held by `rows` and by `row` (+1 for the argument).
        assert sys.getrefcount(row) == 3
        # Each field: held by the row and the loop variable (+1 for the
        # argument).
        assert [sys.getrefcount(f) for f in row] == [3, 3]
        del row
    r = fastcsv.reader(p)
    row = next(r)
    assert sys.getrefcount(row) == 2
    assert sys.getrefcount(r) == 2


def test_large_text_file_readers_leave_rss_flat(tmp_path):
    """Readers of text files large enough for the read-ahead thread, some
    dropped early, some read to the end: RSS stays flat."""
    import itertools
    p = tmp_path / "large.csv"
    p.write_bytes(b"alpha,1234,\"quoted, text\",\xc3\xa9t\xc3\xa9\n" * 100_000)

    def cycle():
        for stop in (5, 20_000, None):
            with open(p, newline="", encoding="utf-8") as f:
                r = fastcsv.reader(f)
                n = sum(1 for _ in itertools.islice(r, stop))
                assert n == (stop or 100_000)
                del r

    cycle()
    before = rss()
    for _ in range(5):
        cycle()
    grown = rss() - before
    assert grown < 8 * MiB, f"RSS grew by {grown / MiB:.1f} MiB"
