"""The short-string cache of the drop-in reader: short ASCII fields that
repeat are one shared ``str``, and every value is still the one ``csv``
gives (collisions, evictions, NULs, lengths at the cache's edges,
non-ASCII and error handlers included)."""

import csv
import io
import random

import fastcsv


def stdlib_rows(data: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data, newline="")))


def all_ways(tmp_path, data: str) -> list[list[list[str]]]:
    p = tmp_path / "d.csv"
    p.write_bytes(data.encode())
    with open(p, newline="") as f:
        by_reader = list(fastcsv.reader(f))
    with open(p, "rb") as f:
        by_binary = list(fastcsv.reader(f))
    return [by_reader, by_binary, fastcsv.read(str(p))]


def test_repeated_short_fields_are_one_object(tmp_path):
    data = "".join(f"NA,AA,{i % 7},2024-01-0{i % 9 + 1}\n" for i in range(5000))
    for rows in all_ways(tmp_path, data):
        assert rows == stdlib_rows(data)
        # Two- to eight-byte fields repeat as the same object.
        assert rows[0][0] is rows[-1][0] is rows[100][0]
        assert rows[0][1] is rows[-1][1]
        # Longer fields are made each time, as `csv` makes them.
        assert rows[0][3] == rows[9][3] and rows[0][3] is not rows[9][3]


def test_many_distinct_short_values_evict_correctly(tmp_path):
    rng = random.Random(7)
    alphabet = "ab\x00 9Z"
    fields = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(40000)]
    lines = []
    for k in range(0, len(fields), 4):
        lines.append(",".join(f'"{f}"' for f in fields[k : k + 4]))
    data = "\n".join(lines) + "\n"
    for rows in all_ways(tmp_path, data):
        assert rows == stdlib_rows(data)


def test_lengths_and_nuls_are_part_of_the_key(tmp_path):
    data = "A,A\x00,A\x00\x00,12345678,123456789,12345678\nA\x00,A,12345678,A\x00\x00,123456789,1234567\n"
    for rows in all_ways(tmp_path, data):
        assert rows == stdlib_rows(data)
        assert [len(v) for v in rows[1]] == [2, 1, 8, 3, 9, 7]


def test_non_ascii_short_fields_are_not_confused(tmp_path):
    data = "é,ab,ü€,ab\nab,é,ab,ü€\n" * 50
    for rows in all_ways(tmp_path, data):
        assert rows == stdlib_rows(data)


def test_invalid_utf8_short_fields_keep_their_error_handler(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_bytes(b"ab,\xff\xfe,ab\n\xff\xfe,ab,cd\n")
    rows = fastcsv.read(str(p), errors="replace")
    assert rows == [["ab", "\ufffd\ufffd", "ab"], ["\ufffd\ufffd", "ab", "cd"]]


def test_a_column_of_unique_values_does_not_stop_another_from_sharing(tmp_path):
    # Four columns of unique short ids and one of ten repeating codes: the
    # cache watches each column, so the ids stop being looked up while the
    # codes go on being shared to the last row.
    data = "".join(f"{i:x},{i + 1:x},{i + 2:x},{i + 3:x},C{i % 10}\n" for i in range(4096, 30000))
    for rows in all_ways(tmp_path, data):
        assert rows == stdlib_rows(data)
        # The last thousand rows share ten code objects.
        assert len({id(r[4]) for r in rows[-1000:]}) == 10



WIDE_VALUES = ["Zürich", "Tromsø", "Montréal", "Москва", "São Paulo", "東京", "€12", "é", "a🙂"]


def test_short_fields_past_ascii_repeat_as_one_object(tmp_path):
    # Up to 15 bytes, strict UTF-8, no character past U+FFFF: one shared
    # `str` per value, on one thread (decoded as the rows are made) and on
    # two (decoded ahead); longer ones and those with a character past
    # U+FFFF are made each time, as `csv` makes them.
    n, k = 6000, len(WIDE_VALUES)
    long = "Ångström Øresund x"
    data = "".join(f"{i},{WIDE_VALUES[i % k]},{long}\n" for i in range(n))
    want = stdlib_rows(data)
    p = tmp_path / "wide.csv"
    p.write_bytes(data.encode())
    for rows in all_ways(tmp_path, data) + [list(fastcsv.reader(str(p)))]:
        assert rows == want
    for threads in (1, 2):
        rows = list(fastcsv.reader(str(p), threads=threads))
        assert rows == want
        for j, v in enumerate(WIDE_VALUES):
            last = j + k * ((n - 1 - j) // k)
            same = rows[j][1] is rows[j + k * 300][1] is rows[last][1]
            assert same == (v != "a🙂"), (threads, v)
        assert rows[0][2] == rows[-1][2] and rows[0][2] is not rows[-1][2]


def test_short_fields_past_ascii_with_an_error_handler_call_it_each_time(tmp_path):
    # A field that is not strict UTF-8 is never shared: a handler may give
    # a different string each time it is called, as `csv` over the
    # decoded text shows.
    import codecs

    calls = []

    def numbered(e):
        calls.append(1)
        return (str(len(calls)), e.end)

    codecs.register_error("fastcsv-test-numbered", numbered)
    data = b"".join(b"%d,\xff\xc3\xa9,\xc3\xa9\xff\n" % i for i in range(3000))
    want = list(csv.reader(io.StringIO(data.decode("utf-8", "fastcsv-test-numbered"), newline="")))
    p = tmp_path / "bad.csv"
    p.write_bytes(data)
    for threads in (1, 2):
        calls.clear()
        assert list(fastcsv.reader(str(p), errors="fastcsv-test-numbered", threads=threads)) == want
