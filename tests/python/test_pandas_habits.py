

# --- names= shorter than the rows ---


def test_names_shorter_than_a_row_names_what_happened(tmp_path):
    # pandas makes the extra leading columns an index; fastcsv documents a
    # longer-row error, which says where, and how many fields against how
    # many names (not "the previous record", which there is none of).
    p = write(tmp_path, "1,2,3\n4,5,6\n")
    with pytest.raises(fastcsv.Error) as ei:
        fastcsv.read_arrow(p, names=["x", "y"]).read_all()
    assert str(ei.value) == (
        f"{p}:1: record 0, byte 0: found record with 3 fields, but 2 column names were given"
    )
    # A later row, with header=0 replaced by the names.
    p = write(tmp_path, "a,b\n1,2\n3,4,5\n")
    with pytest.raises(fastcsv.Error, match=r":3: record 2, byte 8: found record with 3 fields, "
                       "but 2 column names were given$"):
        fastcsv.read_arrow(p, names=["x", "y"], header=0).read_all()


def test_a_longer_row_names_the_header_row(tmp_path):
    p = write(tmp_path, "a,b\n1,2\n3,4,5\n")
    with pytest.raises(fastcsv.Error, match=r":3: record 2, byte 8: found record with 3 fields, "
                       "but the header row has 2 fields$"):
        fastcsv.read_arrow(p).read_all()
    p = write(tmp_path, "1,2\n3,4,5\n")
    with pytest.raises(fastcsv.Error, match=r":2: record 1, byte 4: found record with 3 fields, "
                       "but the first record has 2 fields$"):
        fastcsv.read_arrow(p, header=None).read_all()


def test_a_later_part_names_the_header_row(tmp_path):
    # The names of a later part of a split file are the header row's.
    p = write(tmp_path, "a,b\n" + "1,2\n" * 300 + "3,4,5\n")
    parts = fastcsv.split(p, size=256)
    assert len(parts) > 1
    with pytest.raises(fastcsv.Error, match=r":302: record 301, byte 1204: found record with 3 "
                       "fields, but the header row has 2 fields$"):
        fastcsv.read_arrow(parts[-1]).read_all()
