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
