"""Puts a benchmark file into the page cache as a file read from disk is.

What a page fault on a mapped file costs depends on the size of the
page-cache folios that hold it (docs/BENCHMARKS.md, "Round 2, fourth
session"): a file written in small `write()`s, or read in by a pass whose
faults jump around it, can sit in 4 KiB folios, which makes every mapped
pass over it cost more CPU (up to 3.5 times for `fastcsv count`) while a
`read()`-based tool hardly notices. So that a run measures the tools and
not the file's history, `recache` drops the file's cached pages (written
back first) and reads it back in 1 MiB `read()`s, as `cat` would: the
kernel's read-ahead then caches it in large folios where the filesystem
has them.
"""

import os

CHUNK = 1 << 20


def recache(path: str) -> None:
    """Drops `path`'s cached pages and reads it back in sequentially."""
    fd = os.open(path, os.O_RDONLY)
    try:
        # Dirty pages are not dropped: write them back first.
        os.fsync(fd)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        while os.read(fd, CHUNK):
            pass
    finally:
        os.close(fd)
