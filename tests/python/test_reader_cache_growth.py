"""The row-by-row reader's short-string cache grows when the values that
repeat are more than it holds: a long input whose short values cycle
through many more values than the cache's first size still shares them,
and every row is the one ``csv`` gives."""

import csv
import io

import fastcsv


def stdlib_rows(data: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data, newline="")))


def readers(tmp_path, data: str):
    """The rows of each kind of reader, one after another (one list of
    rows alive at a time)."""
    p = tmp_path / "d.csv"
    p.write_bytes(data.encode())
    yield list(fastcsv.reader(str(p)))
    with open(p, "rb") as f:
        yield list(fastcsv.reader(f))
    with open(p, newline="") as f:
        yield list(fastcsv.reader(f))


def test_many_repeating_values_are_shared_once_the_cache_grew(tmp_path):
    # Every other field of a column is one of 10000 short values, cycling:
    # more than twice the cache's first slots, so a cache that stayed that
    # small would evict each value before it comes back; the others repeat
    # a few values (the column hits often enough to keep being looked up).
    n = 10000
    data = "".join(
        f"{i // 2 % n},t{i // 2 % n},NA\n" if i % 2 else f"h{i % 50},u{i % 50},NA\n"
        for i in range(20 * n)
    )
    want = stdlib_rows(data)
    for rows in readers(tmp_path, data):
        assert rows == want
        for col in (0, 1):
            # The last two cycles: each value twice. A cache that stayed
            # small makes nearly all of them again (2n objects); grown, most
            # are one object (values that collide in a slot with another
            # value's are made again each time).
            last = [r[col] for r in rows[-4 * n :][1::2]]
            assert len(last) == 2 * n and len(set(last)) == n
            assert len({id(s) for s in last}) < 1.5 * n, col
        del rows, last


def test_growth_keeps_values_correct_under_collisions(tmp_path):
    # Values that differ in one byte, length or position, in numbers past
    # what any cache holds, interleaved with a few that repeat.
    data = "".join(
        f"{i:x},{i % 5000:04d},{(i * 7919) % 40000},ab{i % 3}\n" for i in range(150000)
    )
    want = stdlib_rows(data)
    for rows in readers(tmp_path, data):
        assert rows == want
        del rows


def test_rows_are_whole_when_a_decoding_error_handler_runs_python(tmp_path):
    # A row's list is filled field by field; an error handler (Python code)
    # that runs the collector in the middle of a row, or raises there, sees
    # or leaves no half-made row.
    import codecs
    import gc

    calls = [0]

    def collect(e):
        calls[0] += 1
        if calls[0] % 100 == 0:
            gc.collect()
        return ("?", e.end)

    def fail(e):
        raise LookupError("no")

    codecs.register_error("rdmain_collect", collect)
    codecs.register_error("rdmain_fail", fail)
    p = tmp_path / "bad.csv"
    raw = b"".join(b"ab%d,\xff\xfe,cd,%d\n" % (i % 7, i) for i in range(1000))
    p.write_bytes(raw)
    want = list(csv.reader(io.StringIO(raw.decode("utf-8", "rdmain_collect"), newline="")))
    assert list(fastcsv.reader(str(p), errors="rdmain_collect")) == want
    rows = fastcsv.reader(str(p), errors="rdmain_fail")
    try:
        next(rows)
    except LookupError as e:
        assert str(e) == "no"
    else:
        raise AssertionError("the handler's error was not raised")


def drain(r) -> int:
    n = 0
    for _ in r:
        n += 1
    return n


def test_the_cache_grows_only_where_it_hits_but_thrashes(tmp_path):
    import random

    rng = random.Random(3)
    p = tmp_path / "d.csv"
    # Times, codes and numbers that repeat, more of them than the first
    # slots: most lookups hit, and many miss.
    p.write_text(
        "".join(
            f"{rng.randrange(2400)},{rng.randrange(2400)},{rng.randrange(9000)},"
            f"A{rng.randrange(30)},NA\n"
            for _ in range(60000)
        )
    )
    r = fastcsv.reader(str(p))
    first = r._short_slots
    assert drain(r) == 60000
    assert first == 4096 and r._short_slots > first
    # Numbers that rarely repeat: most lookups miss; the cache stays small.
    p.write_text(
        "".join(f"{rng.random() * 1000:.3f},{rng.randrange(10**7)}\n" for _ in range(60000))
    )
    r = fastcsv.reader(str(p))
    assert drain(r) == 60000
    assert r._short_slots == 4096
    # A small input.
    p.write_text("ab,cd\n" * 10)
    r = fastcsv.reader(str(p))
    assert drain(r) == 10 and r._short_slots == 4096
    assert fastcsv.reader(iter(["a,b\n"]))._short_slots is None


def test_row_lists_are_ordinary_lists(tmp_path):
    # A row's list may be made empty and given its item array (CPython 3.10
    # to 3.12): it holds exactly its items (as a list of them made at
    # once), grows, shrinks, sorts and goes like any list.
    import sys

    p = tmp_path / "d.csv"
    data = "".join(f"{i},ab,c{i % 9},,x{i}\n" for i in range(5000))
    p.write_text(data)
    want = stdlib_rows(data)
    rows = list(fastcsv.reader(str(p)))
    assert rows == want
    assert [sys.getsizeof(r) for r in rows] == [sys.getsizeof([None] * len(r)) for r in want]
    for r in rows[:100]:
        r.append("more")
        r.extend(["a"] * 50)
        del r[1:40]
        r.sort()
        r.insert(0, "first")
    assert rows[0][0] == "first" and len(rows[0]) == 1 + 5 + 1 + 50 - 39
    rows.clear()


def shared(values) -> int:
    """How many distinct objects hold these (equal) strings."""
    return len({id(v) for v in values})


def test_a_column_that_keeps_missing_rests_then_looks_again(tmp_path):
    # Column 0: unique short values, then one value repeated; column 1:
    # one value throughout. Only column 0 stops being looked up (its
    # repeated value is a new string per row for a while), and it looks
    # again later (the value is shared again); column 1 is shared all
    # along.
    unique, after = 8192, 100_000
    data = "".join(f"u{i:x},ab\n" for i in range(unique)) + "cd,ab\n" * after
    want = stdlib_rows(data)
    for rows in readers(tmp_path, data):
        assert rows == want
        early = rows[unique + 1000 : unique + 2000]
        late = rows[-2000:]
        assert shared(r[0] for r in early) > 900
        assert shared(r[0] for r in late) < 20
        assert shared(r[1] for r in early) < 20 and shared(r[1] for r in late) < 20
        del rows, early, late


def test_a_column_whose_short_values_miss_rests_among_long_ones(tmp_path):
    # Column 0: every other field is a unique short value, the others
    # longer than the cache looks up. Its lookups (the short fields) all
    # miss, so it rests too, though they are only half its rows.
    unique, after = 16384, 4000
    data = "".join(
        (f"u{i:x},ab\n" if i % 2 else f"long value {i},ab\n") for i in range(unique)
    ) + "cd,ab\n" * after
    want = stdlib_rows(data)
    for rows in readers(tmp_path, data):
        assert rows == want
        assert shared(r[0] for r in rows[unique + 1000 : unique + 2000]) > 900
        assert shared(r[1] for r in rows[-2000:]) < 20
        del rows
