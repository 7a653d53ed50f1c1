"""fastcsv: a fast, correct CSV reader with the semantics of Python's csv.

``import fastcsv as csv`` is a drop-in replacement for the standard library
module when reading: ``reader`` and ``DictReader`` give the same rows,
``line_num`` values, errors and messages as CPython's ``csv``, and every
other name (``writer``, ``Sniffer``, ``register_dialect``, ``QUOTE_*``,
``field_size_limit``, ``Error``, ...) is the standard library's own.

On top of that, ``reader``, ``read`` and ``read_columns`` accept a path or a
binary file and parse it natively (memory-mapped or buffered), and the bulk
functions scan with the GIL released. ``read_arrow`` hands the columns to
pyarrow, polars, DuckDB or pandas as Arrow data, with no Python object per
value.

Dialects are resolved and validated by the standard library, so invalid
settings raise exactly the ``TypeError``/``ValueError`` ``csv`` raises. A
dialect whose delimiter, quote or escape character is not ASCII is handed to
the standard library reader unchanged.
"""

from __future__ import annotations

import _csv
import codecs
import csv as _stdcsv
import dataclasses
import functools
import importlib
import io
import operator
import os
import stat
import sys
from csv import (
    QUOTE_ALL,
    QUOTE_MINIMAL,
    QUOTE_NONE,
    QUOTE_NONNUMERIC,
    Dialect,
    DictWriter,
    Error,
    Sniffer,
    __version__,
    excel,
    excel_tab,
    field_size_limit,
    get_dialect,
    list_dialects,
    register_dialect,
    unix_dialect,
    unregister_dialect,
    writer,
)
from typing import TYPE_CHECKING, Any

from . import _fastcsv
from ._fastcsv import Reader, _Unsupported
from ._habits import (
    _arrow_type,  # noqa: F401 - the tests check the dtype names here
    _check_booleans,
    _check_terminator,
    _dtype_types,
    _encoding_errors,
    _flag,
    _Habits,
    _has_magic,
    _na_spellings,
    _PANDAS_NA,
    _usecols,
)

#: The version of the fastcsv package (``__version__`` is the ``csv``
#: module's, so that ``import fastcsv as csv`` changes nothing).
VERSION: str = _fastcsv.__version__

__all__ = [
    "QUOTE_ALL",
    "QUOTE_MINIMAL",
    "QUOTE_NONE",
    "QUOTE_NONNUMERIC",
    "VERSION",
    "Dialect",
    "DictReader",
    "DictWriter",
    "Error",
    "Part",
    "Reader",
    "Sniffer",
    "__doc__",
    "__version__",
    "excel",
    "excel_tab",
    "field_size_limit",
    "get_dialect",
    "list_dialects",
    "read",
    "read_arrow",
    "read_columns",
    "reader",
    "register_dialect",
    "resolve",
    "split",
    "summarize",
    "unix_dialect",
    "unregister_dialect",
    "writer",
]

if sys.version_info >= (3, 12):
    # Newer quoting modes; fastcsv hands them to the stdlib reader.
    from csv import QUOTE_NOTNULL, QUOTE_STRINGS

    __all__ += ["QUOTE_NOTNULL", "QUOTE_STRINGS"]

# Keywords fastcsv adds to the stdlib's. All but `filter` need a native input
# (a path or a binary file).
_NATIVE_ONLY = ("encoding", "errors", "source", "buffer_size", "intern")
_EXTRA = _NATIVE_ONLY + ("filter", "threads")


class _NoDialect:
    """The default of ``dialect``: none given. ``csv.reader`` then takes
    excel's settings, and there ``quotechar=None`` alone turns quoting off
    (``QUOTE_NONE``), which with a dialect given (even ``'excel'``) is a
    ``TypeError``."""

    def __repr__(self) -> str:
        return "<no dialect: excel's settings>"


_NO_DIALECT: Any = _NoDialect()


def _dialect_args(dialect: Any) -> tuple[Any, ...]:
    """The positional dialect argument for ``_csv.reader``: none when the
    caller gave none (a ``dialect=`` keyword is in ``fmtparams`` then)."""
    return () if dialect is _NO_DIALECT else (dialect,)


def _pop_extra(fmtparams: dict[str, Any]) -> dict[str, Any]:
    """Removes fastcsv's own keywords so the stdlib validates the rest."""
    extra = {k: fmtparams.pop(k) for k in _EXTRA if k in fmtparams}
    threads = extra.get("threads")
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int):
            raise TypeError(f"threads must be int or None, not {type(threads).__name__}")
        if threads < 1:
            raise ValueError("threads must be at least 1")
    return extra


def _binary_probe(f: object) -> tuple[bool, bytes]:
    """Whether ``f`` is a binary file, and what a duck-typed one's
    ``read(0)`` returned (one that ignores the size gives data there,
    which must be read first, not lost)."""
    if isinstance(f, io.TextIOBase):
        return False, b""
    if isinstance(f, (io.RawIOBase, io.BufferedIOBase)):
        return True, b""
    read = getattr(f, "read", None)
    if not callable(read):
        return False, b""
    try:
        probe = read(0)
    except Exception:  # noqa: BLE001 - any failure means "not a binary file"
        return False, b""
    if isinstance(probe, (bytes, bytearray)):
        return True, bytes(probe)
    return False, b""


class _Prefixed:
    """A binary stream read as ``head`` and then the rest of ``f``: a
    duck-typed stream whose ``read(0)`` (the probe) returned data."""

    def __init__(self, head: bytes, f: Any) -> None:
        self._head = head
        self._f = f
        name = getattr(f, "name", None)
        if isinstance(name, str):
            self.name = name

    def read(self, n: int | None = -1) -> bytes:
        if not self._head:
            return bytes(self._f.read(-1 if n is None else n))
        if n is None or n < 0:
            out, self._head = self._head + bytes(self._f.read(-1)), b""
            return out
        out, self._head = self._head[:n], self._head[n:]
        return out


@dataclasses.dataclass(frozen=True)
class Part:
    """One part of a file cut by :func:`split` (or :func:`resolve`): the
    records that start in bytes ``start`` to ``end`` (excluded) of the file
    at ``path``. ``lines`` and ``records`` come before it, so positions in
    errors are those of a read of the whole file. Pass it where a path goes
    (:func:`reader`, :func:`read`, :func:`read_columns`,
    :func:`read_arrow`) to read just its records; it pickles, for other
    processes or machines. The first part (``index == 0``) holds the
    header row; with ``header=True``, :func:`read_columns` and
    :func:`read_arrow` take the names for later parts from there."""

    path: str
    index: int
    start: int
    end: int
    lines: int
    records: int

    def __post_init__(self) -> None:
        for name in ("index", "start", "end", "lines", "records"):
            object.__setattr__(self, name, _offset(name, getattr(self, name)))
        if not 0 <= self.start <= self.end:
            raise ValueError(f"a part must have 0 <= start <= end, not {self.start}..{self.end}")

    @property
    def size(self) -> int:
        """Its length in bytes."""
        return self.end - self.start


def _classify(source: object, allow_bytes: bool = False) -> tuple[str, Any]:
    """``("path", p)``, ``("part", Part)``, ``("binary", file)`` or
    ``("lines", iterable)``."""
    if isinstance(source, Part):
        return "part", source
    if isinstance(source, (str, os.PathLike)):
        # A path-like object may give bytes (`__fspath__`): decoded as the
        # file system encodes names.
        return "path", os.fsdecode(os.fspath(source))
    if allow_bytes and isinstance(source, (bytes, bytearray, memoryview)):
        return "binary", io.BytesIO(source)
    binary, head = _binary_probe(source)
    if binary:
        return "binary", _Prefixed(head, source) if head else source
    return "lines", source


# Characters read to find out whether a text stream uses universal newlines.
_PROBE = 1 << 16
# A text file with more than this left is parsed by a second thread.
_AHEAD_BYTES = 1 << 20


# The encodings (as ``codecs.lookup`` names them) of a text file read from
# its buffer's bytes (see ``_text_plan``).
_RAW_ENCODINGS = ("utf-8", "utf-8-sig", "iso8859-1", "cp1252")


def _text_plan(f: Any) -> dict[str, Any] | None:
    """How to read a text stream natively: keywords for
    ``_fastcsv._text_reader``, or ``None`` for the line-by-line path.

    ``f`` must be an ``io.TextIOWrapper`` or ``io.StringIO`` (exactly: a
    subclass may change iteration) that reads with universal newlines
    (``newline=None`` or ``''``). Then the text ``f.read(n)`` returns is the
    concatenation of the lines iteration gives, split at the LF, CR and CRLF
    of that text, and the native text reader gives exactly ``csv.reader``'s
    rows.

    Neither type tells its ``newline`` argument, but ``f.newlines`` is not
    ``None`` once text with a line end has been decoded, in exactly those
    two modes. So up to ``_PROBE`` characters are read and the stream is
    put back where it was. A stream that cannot say where it is (``tell()``
    is disabled after ``next(f)``) or fails to read takes the line path
    unless a line end was decoded before; so does a stream that is not
    seekable (a pipe or a terminal, whose rows should come out as their
    lines arrive).

    A UTF-8 (or ``utf-8-sig``, whose BOM at the start is dropped), Latin-1,
    Windows-1252 or other one-byte (``_one_byte_table``)
    ``io.TextIOWrapper`` whose position is a plain byte offset (no decoder
    state) is read from its buffer as bytes (``raw_offset``; the one-byte
    encodings transcoded natively, ``raw_encoding``, ``raw_table``) until
    those stop being exactly its text; a CR seen in the probe shows
    ``newline=''`` (``keeps_cr``).
    """
    if type(f) not in (io.TextIOWrapper, io.StringIO):
        return None
    try:
        # Not a pipe or a terminal: read(n) would wait for n characters
        # where csv returns each row as its line arrives.
        if not f.seekable():
            return None
        known = f.newlines is not None
    except (OSError, ValueError):
        return None
    try:
        pos = f.tell()
    except (OSError, ValueError):
        return {} if known else None
    try:
        probe = f.read(_PROBE)
        known = f.newlines is not None
    except Exception:  # noqa: BLE001 - raised again where the reader meets it
        return {} if known else None
    finally:
        f.seek(pos)
    if not known:
        return None
    plan: dict[str, Any] = {"ahead": _large_file(f)}
    if type(f) is not io.TextIOWrapper:
        return plan
    name = codecs.lookup(f.encoding).name
    table = None if name in _RAW_ENCODINGS else _one_byte_table(name)
    if (
        pos < 1 << 64
        and type(f.buffer) in (io.BufferedReader, io.BufferedRandom, io.BytesIO)
        and (name in _RAW_ENCODINGS or table is not None)
        # A writable utf-8-sig file: the raw mode's seeks (to hand over, to
        # put the file back) would also tell its encoder that it is past the
        # start, where csv's reader leaves it writing a BOM.
        and (name != "utf-8-sig" or type(f.buffer) is io.BufferedReader)
    ):
        plan.update(raw_offset=pos, keeps_cr="\r" in probe, raw_encoding=name)
        if table is not None:
            plan["raw_table"] = list(table)
    return plan


def _one_byte_table(name: str) -> tuple[int, ...] | None:
    """The characters of bytes 0x80 to 0xFF (0 where undefined) of Python's
    one-byte codec ``name`` (a charmap codec such as ``cp1250``,
    ``iso8859-15``, ``koi8-r`` or ``cp437``: ASCII below 0x80, each byte one
    character or none, no state), from its ``decoding_table`` and checked
    byte by byte against the codec itself (once per codec); ``None`` for
    any other codec."""
    if name not in _ONE_BYTE_TABLES:
        _ONE_BYTE_TABLES[name] = _make_one_byte_table(name)
    return _ONE_BYTE_TABLES[name]


_ONE_BYTE_TABLES: dict[str, tuple[int, ...] | None] = {}


def _make_one_byte_table(name: str) -> tuple[int, ...] | None:
    """See :func:`_one_byte_table`."""
    info = codecs.lookup(name)
    module = sys.modules.get(getattr(info.incrementaldecoder, "__module__", ""))
    table = getattr(module, "decoding_table", None)
    if not isinstance(table, str) or len(table) != 256:
        return None
    chars = []
    for b in range(256):
        try:
            got: str | None = bytes([b]).decode(name)
        except UnicodeDecodeError:
            got = None
        want = None if table[b] == "\ufffe" else table[b]
        if got != want or (b < 0x80 and got != chr(b)):
            return None
        if b >= 0x80:
            chars.append(0 if got is None else ord(got))
    if max(chars) > 0xFFFF:
        return None
    return tuple(chars)


def _large_file(f: Any) -> bool:
    """Whether the text file ``f`` has more than ``_AHEAD_BYTES`` left to
    read: its rows are then parsed by a second thread, fed by this one."""
    try:
        fd = f.fileno()
        st = os.fstat(fd)
        left = st.st_size - os.lseek(fd, 0, os.SEEK_CUR)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return stat.S_ISREG(st.st_mode) and left > _AHEAD_BYTES


def _plain_file(f: Any) -> bool:
    """Whether the bytes ``f`` reads are those of its file descriptor: an
    ``io.FileIO``, or a buffered reader over one. A ``gzip.GzipFile``,
    ``bz2.BZ2File`` or ``lzma.LZMAFile`` (or any other wrapper) also has a
    ``fileno()``, but reads something else from it."""
    if type(f) is io.FileIO:
        return True
    return type(f) in (io.BufferedReader, io.BufferedRandom) and type(f.raw) is io.FileIO


def _own_fd(f: Any) -> tuple[int, int] | None:
    """A new descriptor for a binary file that is a regular file, and the
    file object's logical position; ``None`` when there is none (also when
    ``f`` is not a plain file object, see ``_plain_file``)."""
    if not _plain_file(f):
        return None
    try:
        fd = f.fileno()
        st = os.fstat(fd)
    except (AttributeError, OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        pos = f.tell()
    except (AttributeError, OSError, ValueError):
        return None
    new = None
    if sys.platform.startswith("linux"):
        # An independent open file description: reading it does not move
        # the file object's own offset.
        try:
            new = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            new = None
        else:
            st2 = os.fstat(new)
            if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
                os.close(new)
                new = None
    if new is None:
        if os.name != "posix":
            return None
        # Shares the offset with `f`: reading moves it.
        new = os.dup(fd)
    return new, pos


def _spec(kind: str, src: Any, extra: dict[str, Any]) -> dict[str, Any]:
    """Options for the native functions; checks encoding and errors."""
    encoding = extra.get("encoding") or "utf-8"
    if codecs.lookup(encoding).name not in ("utf-8", "utf-8-sig"):
        raise ValueError(
            f"fastcsv reads paths and binary files as UTF-8 only, not {encoding!r}: "
            f"pass open(path, encoding={encoding!r}, newline='') instead (a text file, "
            f"read natively too), or use read_arrow(..., encoding={encoding!r})"
        )
    errors = extra.get("errors") or "strict"
    if not isinstance(errors, str):
        raise TypeError(f"errors must be str, not {type(errors).__name__}")
    codecs.lookup_error(errors)  # LookupError for an unknown handler
    size = extra.get("buffer_size")
    if isinstance(size, bool):
        # int() takes True as 1: a one-byte buffer, silently.
        raise TypeError("buffer_size must be int, not bool")
    if isinstance(size, int) and size < 0:
        # As 0 is (a negative size does not fit the native `usize`).
        raise ValueError("buffer_size must be positive")
    spec: dict[str, Any] = {
        "errors": errors,
        "filter": extra.get("filter"),
        "source": extra.get("source"),
        "buffer_size": extra.get("buffer_size"),
        "intern": _flag("intern", extra.get("intern", False)),
        "threads": extra.get("threads"),
    }
    if kind == "path":
        spec["path"] = src
        return spec
    if kind == "part":
        spec["path"] = os.fsdecode(src.path)
        spec["part"] = (src.index, src.start, src.end, src.lines, src.records)
        return spec
    name = getattr(src, "name", None)
    if isinstance(name, str):
        spec["name"] = name
    fd = _own_fd(src)
    if fd is not None:
        spec["fd"], spec["offset"] = fd
    else:
        spec["stream"] = src
    return spec


def _text_fallback(kind: str, src: Any, extra: dict[str, Any]) -> Any:
    """The native input as text lines, for the stdlib reader."""
    if extra.get("filter") is not None:
        raise ValueError("filter= needs ASCII delimiter, quotechar and escapechar")
    errors = extra.get("errors") or "strict"
    if kind == "part":
        raise ValueError(
            "a part is read natively: its dialect needs ASCII delimiter, "
            "quotechar and escapechar (and csv's quoting modes of 3.11)"
        )
    if kind == "path":
        with open(src, encoding="utf-8-sig", errors=errors, newline="") as f:
            return io.StringIO(f.read(), newline="")
    return io.StringIO(codecs.decode(src.read(), "utf-8-sig", errors), newline="")


def reader(csvfile: Any, dialect: Any = _NO_DIALECT, /, **fmtparams: Any) -> Any:
    """A reader like ``csv.reader``: iterate it for rows (``list[str]``).

    ``dialect`` (a name, a ``csv.Dialect`` or an object with its
    attributes) may also come as a keyword, as in ``csv``; with neither,
    the settings are excel's, and ``quotechar=None`` alone means
    ``QUOTE_NONE``, exactly as in ``csv``.

    ``csvfile`` is any iterable of ``str`` lines (a text file opened with
    ``newline=''``, a list, a generator): rows, ``line_num`` and errors are
    exactly ``csv.reader``'s. Lines are pulled one at a time, except from a
    seekable text file (``io.TextIOWrapper`` or ``io.StringIO``) opened
    with ``newline=''`` or ``newline=None``, which is read in chunks and
    parsed natively (a UTF-8 file's bytes straight from its buffer while
    they are exactly its text). Then, while the reader is alive, the file's
    position is ahead of the rows returned, where ``csv.reader``'s is right
    after the last line it consumed; when the reader goes away (at once for
    ``next(fastcsv.reader(f))`` or a ``for`` loop over a temporary reader
    left by ``break``), it puts the file back there (after a ``csv.Error``,
    after the line it was raised on), unless it reached the end, the file
    was closed, or the caller moved it since the reader last read. So
    ``f.read()``, ``for line in f`` or a second reader after a reader kept
    in a variable start ahead until that reader is dropped (``del r``). A
    ``UnicodeDecodeError`` from the file may come a few rows earlier or
    later than in ``csv`` and ends the iteration; after another exception
    from its ``read`` (an ``OSError``, a Ctrl-C), the next call reads on,
    as in ``csv``. At
    the end of such a file, each later call reads it again, as ``csv``
    does: rows appended since (a log file followed as ``tail -f`` does, a
    ``StringIO`` written to and sought back) come out, a record cut short
    by the end having been returned (or, with ``strict``, raised) there.
    Once the file is closed, each call raises its ``ValueError``, as in
    ``csv``, whatever was read ahead.

    ``csvfile`` may also be a path or a binary file, parsed natively (UTF-8,
    BOM removed); errors then carry the position: ``path:line: record N,
    byte B: message``.

    Extra keywords (native inputs only, except ``filter``):
    ``encoding='utf-8'``, ``errors='strict'`` (or ``'replace'``, ...),
    ``filter=None|'controls'|'all-controls'|'invisible'``,
    ``source='auto'|'mmap'|'read'``, ``buffer_size=``, ``intern=False``.
    ``threads=None``: a path or a binary file with a descriptor is parsed on
    this thread for its first few batches, which are timed; a second thread
    then parses ahead while this one decodes the fields and makes the rows'
    objects if parsing and decoding took at least 40% of this thread's time
    in four of the six timed batches (else it would save little wall time
    for the CPU time it costs); so is a text file larger than 1 MiB (opened
    with ``newline=''`` or ``None``), this thread reading it. ``threads=1`` parses on this thread alone,
    ``threads=2`` (or more) on a second thread from the second batch on (a
    large text file's from the first), which also decodes fields past
    ASCII ahead while this thread is busy (less wall time, more CPU time).
    Rows, ``line_num`` and errors are the same whichever.
    """
    extra = _pop_extra(fmtparams)
    kind, src = _classify(csvfile)
    if kind == "lines":
        bad = [k for k in _NATIVE_ONLY if k in extra]
        if bad:
            raise TypeError(f"{bad[0]!r} applies to paths and binary files only")
        it = iter(src)
        d = _csv.reader((), *_dialect_args(dialect), **fmtparams).dialect
        try:
            # QUOTE_NONNUMERIC: after a failed float(), csv resumes at the
            # next line, inside the record; only the line path does that.
            plan = _text_plan(src) if d.quoting != QUOTE_NONNUMERIC else None
            if plan is not None and plan.get("ahead"):
                plan["threads"] = extra.get("threads")
            if plan is not None:
                return _fastcsv._text_reader(src, d, extra.get("filter"), **plan)
            return _fastcsv._lines_reader(it, d, extra.get("filter"))
        except _Unsupported:
            if extra.get("filter") is not None:
                raise ValueError(
                    "filter= needs ASCII delimiter, quotechar and escapechar"
                ) from None
            return _csv.reader(it, *_dialect_args(dialect), **fmtparams)
    d = _csv.reader((), *_dialect_args(dialect), **fmtparams).dialect
    spec = _spec(kind, src, extra)
    try:
        return _fastcsv._native_reader(d, spec)
    except _Unsupported:
        text = _text_fallback(kind, src, extra)
        return _csv.reader(text, *_dialect_args(dialect), **fmtparams)


_reader = reader

if not TYPE_CHECKING:

    @functools.wraps(_reader)
    def reader(*args, **fmtparams):
        # As ``csv.reader``, which takes its one or two arguments by
        # position: its messages for a wrong number of them.
        if not args:
            raise TypeError(" expected at least 1 argument, got 0")
        if len(args) > 2:
            raise TypeError(f" expected at most 2 arguments, got {len(args)}")
        return _reader(*args, **fmtparams)


def read(source: Any, dialect: Any = _NO_DIALECT, /, **fmtparams: Any) -> list[list[Any]]:
    """All rows of ``source`` at once: ``list(reader(source, ...))``, faster.

    Paths, binary files and ``bytes`` are scanned with the GIL released
    (Ctrl-C interrupts between batches); ``intern=True`` makes repeated
    short values share one ``str`` object. Other iterables go through
    :func:`reader`.
    """
    extra = _pop_extra(fmtparams)
    kind, src = _classify(source, allow_bytes=True)
    if kind == "lines":
        return list(reader(src, dialect, **fmtparams, **extra))
    d = _csv.reader((), *_dialect_args(dialect), **fmtparams).dialect
    spec = _spec(kind, src, extra)
    try:
        return _fastcsv._read(d, spec)
    except _Unsupported:
        text = _text_fallback(kind, src, extra)
        return list(_csv.reader(text, *_dialect_args(dialect), **fmtparams))


def _columns(rows: Any, header: bool, name: str | None = None) -> dict[str, list[Any]]:
    """:func:`read_columns` over a reader (``rows``) of text: a longer row's
    error names its line (and the input's ``name``), as the native one
    does, without the byte, which counts no text given here."""
    names: list[Any] | None = None if header else []
    cols: list[list[Any]] = []
    n = 0
    for row in rows:
        if not row:
            continue
        if names is None:
            if len(set(row)) != len(row):
                dup = next(x for x in row if row.count(x) > 1)
                raise ValueError(f"duplicate column name {dup!r}")
            names = list(row)
            cols = [[] for _ in row]
            continue
        if len(row) > len(cols):
            if header:
                line = rows.line_num
                where = f"{name}:{line}" if name is not None else f"line {line}"
                raise Error(
                    f"{where}: found record with {len(row)} fields, "
                    f"but the header row has {len(cols)} fields"
                )
            while len(cols) < len(row):
                names.append(str(len(cols)))
                cols.append([""] * n)
        for c, v in zip(cols, row):
            c.append(v)
        for c in cols[len(row):]:
            c.append("")
        n += 1
    return dict(zip(names or [], cols))


def read_columns(
    source: Any, dialect: Any = _NO_DIALECT, /, header: bool = True, **fmtparams: Any
) -> dict[str, list[Any]]:
    """The columns of ``source`` as ``{name: values}``.

    With ``header=True`` the first non-empty row names the columns (a
    duplicate name is a ``ValueError``) and a longer row is a ``csv.Error``;
    with ``header=False`` the columns are named ``"0"``, ``"1"``, ... Short
    rows are padded with ``""`` and empty rows are skipped. Inputs and
    keywords are those of :func:`read`.
    """
    if not isinstance(header, bool):
        raise TypeError(f"header must be bool, not {type(header).__name__}")
    extra = _pop_extra(fmtparams)
    kind, src = _classify(source, allow_bytes=True)
    if kind == "lines":
        return _columns(reader(src, dialect, **fmtparams, **extra), header)
    d = _csv.reader((), *_dialect_args(dialect), **fmtparams).dialect
    spec = _spec(kind, src, extra)
    names = _part_names(kind, src, header, dialect, fmtparams, extra)
    try:
        return _fastcsv._read_columns(d, spec, header, names)
    except _Unsupported:
        text = _text_fallback(kind, src, extra)
        rows = _csv.reader(text, *_dialect_args(dialect), **fmtparams)
        return _columns(rows, header, src if kind == "path" else None)


def read_arrow(
    source: Any,
    dialect: Any = _NO_DIALECT,
    /,
    header: Any = True,
    batch_rows: int = 65536,
    threads: int | None = None,
    types: Any = None,
    string_view: bool = False,
    columns: Any = None,
    null_values: Any = None,
    true_values: Any = None,
    false_values: Any = None,
    strings_can_be_null: bool = False,
    *,
    infer_rows: int | None = None,
    usecols: Any = None,
    dtype: Any = None,
    na_values: Any = None,
    keep_default_na: bool = True,
    sep: str | None = None,
    names: Any = None,
    skiprows: Any = None,
    nrows: int | None = None,
    comment: str | None = None,
    compression: str | None = "infer",
    **fmtparams: Any,
) -> _fastcsv.ArrowStream:
    """The columns of ``source`` as Arrow data: a stream of record batches,
    read through the Arrow PyCapsule interface by ``pyarrow.table(s)``,
    ``polars.DataFrame(s)``, ``duckdb.sql("from s")`` or
    ``pandas.DataFrame(pyarrow.table(s))``.

    The columns are strings (``utf8``), as the ``csv`` module gives them,
    unless ``types`` says otherwise:

    - ``types="infer"``: each column gets the narrowest type that holds
      every one of its values: the first of ``int64``, ``bool``,
      ``date32[day]``, ``timestamp[s]`` / ``timestamp[ns]`` (without a
      zone, then with: ``tz=UTC``), ``float64`` that all its values fit,
      else ``utf8``, by the rules of ``pyarrow.csv.read_csv`` (an integer
      is an optional ``-`` and digits, or ``0x`` and hex digits;
      ``1``/``0``/``true``/``True``/``TRUE`` and the false ones are
      booleans; dates and times are ISO 8601: ``2024-08-18``,
      ``2024-08-18T10:10:32.5+01:00``; a float is a decimal number,
      ``inf`` or ``nan``), with its default null values (the empty value,
      ``NA``, ``NULL``, ``NaN``, ``n/a``, ``#N/A``, ...) as nulls in typed
      columns. So a typed read never fails on a value: a ``1.5`` after a
      million integers makes the column ``float64``. A column whose values
      are all null stays ``utf8`` (pyarrow's ``null`` type), and so does
      a time alone (pyarrow's ``time32``). The whole input is read and
      typed in this call (on ``threads`` threads, the GIL released) and
      held in memory until the stream is read, for every input (paths,
      pipes, file objects, ``bytes``): a path (a regular file) as typed
      columns, converted as they are read (it is read again if a value
      widens a column after the sampled rows: 65536 values, at least 4096
      rows, at most 65536), any other input as
      text while it is typed.
    - ``types="infer", infer_rows=N``: the types of the first ``N`` rows
      only (pyarrow's way), found in this call; the rest is read as the
      stream is, with little memory, but a later value that does not fit
      its column's type (a ``1.5`` after ``N`` integers) is an error then,
      after the rows before it.
    - ``types={"price": "float64", 0: "int64"}``: those columns (by name
      or index) get those types, honoured exactly: a pyarrow type
      (``pa.int32()``, ``pa.timestamp("us", tz="UTC")``,
      ``pa.dictionary(pa.int32(), pa.string())``, ...) or its name as
      ``str()`` gives it: ``int8`` to ``int64``, ``uint8`` to ``uint64``,
      ``float`` (32 bits) and ``double`` (or ``float32``, ``float64``),
      ``bool``, ``utf8`` / ``string``, ``large_string``, ``string_view``,
      ``dictionary<values=string, indices=int32>`` (a categorical),
      ``decimal128(P, S)``, ``date32``, ``time32[s|ms]``,
      ``time64[us|ns]``, ``timestamp[s|ms|us|ns]`` with or without
      ``, tz=ZONE``; values convert as ``pyarrow.csv.read_csv`` converts
      them (``300`` is no ``int8``: an error at its row). An unknown type
      is a ``TypeError`` that lists these. The other columns are ``utf8``.

    ``null_values``, ``true_values`` and ``false_values`` (lists of str,
    as in pyarrow's ``ConvertOptions``) replace the default spellings of
    nulls (the empty value is then null only if listed) and booleans in
    typed columns, for inference too; a null spelling is null in every
    typed column, even where it would be a value (``"0"`` in a ``bool``
    column). ``strings_can_be_null=True`` makes them nulls in text columns
    too (as pyarrow's option of that name, and as polars and DuckDB read
    an empty field); by default a text column holds every value's text.

    A value that does not fit its column's type is an error at its row
    (``path:line: record N, byte B: field F is not a valid int64: "x"``),
    after the rows before it: with a dict of types, or with
    ``infer_rows``, a value after the sampled rows.
    ``column_names`` and ``column_types`` give the stream's schema.

    ``columns=["id", "price"]`` (names or 0-based indices, in the order
    wanted, each once) reads only those columns: the others' values are
    not copied, checked or converted (a value there that is not UTF-8 is
    no error, but a row longer than the header still is), and errors
    still name a field by its place in the row (``field 7``). ``types``
    keys are columns of the file; one not selected is left out. On a
    300-column file, three columns read in a fifth of the time all take.

    ``string_view=True`` exports the text columns as Arrow ``string_view``
    (``utf8_view``) rather than ``utf8``: the layout polars keeps its
    strings in, which ``polars.DataFrame(s)`` then takes without a copy
    (it converts ``utf8`` columns, which on a 100 MiB file took longer than
    reading it); pyarrow (16 or later) and DuckDB read it too.

    ``source`` is a path, a binary file, ``bytes`` or a text file. With
    ``header=True`` the first non-empty row names the columns (else ``"0"``, ``"1"``,
    ...); their number is fixed by that row: shorter rows are padded with
    ``""``, a longer one is an error, and empty rows are skipped, as in
    :func:`read_columns`; so is a value that is not UTF-8 (unless
    ``errors='replace'``). ``quoting=QUOTE_NONNUMERIC`` is not supported.

    The header (or first row) is read now, and an error before any row is
    a ``csv.Error`` here. The rest is read as the consumer reads the
    stream, ``batch_rows`` rows a batch, with the GIL released; the rows
    before an error come first, then the consumer raises the error with
    its message (``path:line: record N, byte B: ...``). The stream can be
    read once.

    The class of that error is the consumer's: the Arrow C stream carries
    an error code and a message, not a Python exception, so
    ``fastcsv.Error`` cannot cross it. ``pyarrow.table(s)`` (and pandas
    through it) raises ``pyarrow.lib.ArrowInvalid``, a ``ValueError``, for
    an error in the data (as ``pyarrow.csv.read_csv`` does), and
    ``OSError`` for a file that changed while read, a read that failed or
    compressed input that could not be decoded; polars raises
    ``ComputeError``, DuckDB ``InvalidInputException``. Each carries
    fastcsv's whole message. ``s.read_all()``, ``s.to_pandas()`` and
    ``s.to_polars()`` raise ``fastcsv.Error`` for any data error.

    A path of 8 MiB or more is read on ``threads`` threads (``None``, the
    default: one per CPU this process may run on, at most 8): it is cut
    into parts at record starts, each part's columns are built on a
    worker thread, and the batches are handed out in order, with the rows
    and errors of one thread. A batch then never spans two parts, so some
    hold fewer than ``batch_rows`` rows, and an error before any row in a
    later part than the first comes from the stream rather than from this
    call. Up to ``threads + 1`` parts' batches (64 MiB of text each at
    most) are held ahead of the consumer. ``threads=1`` reads on the
    consumer's thread.
    """
    _encoding_errors("read_arrow", fmtparams)
    _check_keywords("read_arrow", fmtparams)
    _check_terminator("read_arrow", fmtparams)
    string_view = _flag("string_view", string_view)
    strings_can_be_null = _flag("strings_can_be_null", strings_can_be_null)
    if usecols is not None and columns is not None:
        raise TypeError("read_arrow() takes columns or usecols, not both")
    # The null spellings of text columns, where not those of typed ones.
    text_nulls = None
    if na_values is not None:
        if null_values is not None:
            raise TypeError("read_arrow() takes null_values or na_values, not both")
        null_values = _na_spellings("read_arrow", na_values, keep_default_na)
        strings_can_be_null = True
        if "" not in null_values:
            # keep_default_na=False: the empty value stays text in text
            # columns, and is null in typed ones (pandas' nullable Int64
            # and date columns read it so).
            text_nulls = null_values
            null_values = null_values + [""]
    elif not _flag("keep_default_na", keep_default_na) and null_values is None:
        # No default spelling is null: the empty value alone, in typed
        # columns (pandas' nullable and date columns read it so).
        null_values = [""]
    elif dtype is not None and null_values is None:
        # pandas' keyword, pandas' null spellings in the typed columns
        # (pyarrow's, the default of `types`, lack "None" and "<NA>").
        null_values = list(_PANDAS_NA)
    if dtype is not None and types is not None:
        raise TypeError("read_arrow() takes types or dtype, not both")
    _check_booleans("read_arrow", types, dtype, true_values, false_values)
    habits = _Habits(
        "read_arrow",
        {"sep": sep, "skiprows": skiprows, "nrows": nrows, "comment": comment,
         "names": names, "header": header, "compression": compression},
        fmtparams,
    )
    extra = _pop_extra(fmtparams)
    kind, src = _classify(source, allow_bytes=True)
    if kind == "lines" and not callable(getattr(src, "read", None)):
        raise TypeError(
            "read_arrow reads a path, a binary file or bytes, or a text file, "
            f"not {type(source).__name__}"
        )
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int):
        raise TypeError(f"batch_rows must be int, not {type(batch_rows).__name__}")
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    if threads is None:
        threads = _default_threads()
    elif isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be int or None, not {type(threads).__name__}")
    elif threads < 1:
        raise ValueError("threads must be at least 1")
    d = _csv.reader((), *_dialect_args(dialect), **fmtparams).dialect
    codec = habits.codec
    if habits.needs_text(kind, extra):
        src = habits.rewrite(kind, src, _dialect_args(dialect), fmtparams, extra)
        kind, codec = "binary", "none"
    if kind == "path" and threads > 1 and (codec not in ("infer", "none") or _has_magic(src)):
        # Compressed: there are no byte ranges to read on several threads.
        threads = 1
    # One dtype for every column: the names are read first, so a stream
    # is held here to be read twice.
    # Likewise for pandas' usecols, whose columns come in the file's order.
    probe_names = habits.names is None and (
        (dtype is not None and not isinstance(dtype, dict)) or usecols is not None
    )
    if probe_names and kind == "binary" and not isinstance(src, io.BytesIO):
        src = io.BytesIO(src.read())
    pos = src.tell() if probe_names and kind == "binary" else 0

    def call(types: Any, probe: bool = False) -> Any:
        if probe_names and kind == "binary":
            src.seek(pos)
        spec = _spec(kind, src, extra)
        spec["compression"] = codec
        spec["byte_map"] = habits.byte_map
        if habits.names is not None:
            part_names: Any = habits.names
        elif habits.numbered is not None:
            part_names = habits.numbered
        else:
            part_names = _part_names(kind, src, habits.has_header, dialect, fmtparams, extra)
        return _fastcsv._read_arrow(
            d,
            spec,
            # With the caller's names, no row is a header (with header=N
            # it was left out above); with a later part's, they are the
            # header row's.
            bool(habits.has_header) and habits.names is None,
            batch_rows,
            part_names,
            threads,
            types,
            string_view,
            None if probe else columns,
            null_values,
            true_values,
            false_values,
            strings_can_be_null,
            _infer_rows(infer_rows),
            text_nulls,
        )

    try:
        if usecols is not None:
            columns = _usecols(
                usecols,
                "read_arrow",
                lambda: habits.names or call(None, probe=True).column_names,
                numbered=habits.names is None and not habits.has_header,
            )
        if dtype is not None:
            types = _dtype_types(
                dtype, lambda: habits.names or call(None, probe=True).column_names
            )
        return call(types)
    except _Unsupported as e:
        raise ValueError(f"read_arrow cannot read this dialect natively: {e}") from None


# --- pandas and polars habits for read_arrow and fastcsv.dask.read_csv ---

# The keywords `_csv.reader` takes (a dialect's settings).
_DIALECT_KEYS = frozenset(
    (
        "dialect",
        "delimiter",
        "doublequote",
        "escapechar",
        "lineterminator",
        "quotechar",
        "quoting",
        "skipinitialspace",
        "strict",
    )
)


def _check_keywords(func: str, fmtparams: dict[str, Any]) -> None:
    """A ``TypeError`` naming ``func`` for a keyword it does not take, as
    Python raises it (``_csv.reader`` would say only "this function")."""
    for k in fmtparams:
        if k not in _DIALECT_KEYS and k not in _EXTRA:
            raise TypeError(f"{func}() got an unexpected keyword argument {k!r}")


def _error_text(e: BaseException) -> str | None:
    """fastcsv's message inside a consumer's exception, if it is that of
    a data error (``path:line: record N, byte B: ...``, or ``line L: ...``
    for an input without a name): pyarrow gives it as it is, polars after
    ``got external error: ``."""
    import re

    msg = str(e).strip()
    msg = msg.removeprefix("got external error: ")
    if re.search(r"(?:^|:)(?:\d+|line \d+): record \d+, byte \d+: ", msg) is None:
        if re.match(r"line \d+: record \d+, byte \d+: ", msg) is None:
            return None
    return msg


def _consume(stream: Any, kind: str) -> Any:
    """``stream`` read whole by pyarrow, pandas (through pyarrow) or
    polars; a data error comes out as :class:`fastcsv.Error` rather than
    the consumer's class (``ArrowInvalid``, ``OSError``,
    ``ComputeError``...), the consumer's exception as its cause."""
    try:
        if kind == "polars":
            pl: Any = importlib.import_module("polars")
            return pl.DataFrame(stream)
        pa: Any = importlib.import_module("pyarrow")
        table = pa.table(stream)
        return table.to_pandas() if kind == "pandas" else table
    except Error:
        raise
    except Exception as e:
        msg = _error_text(e)
        if msg is None:
            raise
        raise Error(msg) from e


def _infer_rows(n: Any) -> int | None:
    """``read_arrow``'s ``infer_rows``, checked."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"infer_rows must be int or None, not {type(n).__name__}")
    if n < 1:
        raise ValueError("infer_rows must be at least 1")
    return n


def _default_threads() -> int:
    """One per CPU this process may run on, at most 8 (each holds a part
    of batches ahead of the consumer)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _part_names(
    kind: str, src: Any, header: bool, dialect: Any, fmtparams: Any, extra: Any
) -> list[str] | None:
    """For a part after the first read with ``header=True``: the names,
    from the first non-empty row of the file (which is in bytes before
    the part: :func:`split` puts it in the first part)."""
    if kind != "part" or not header or src.start == 0:
        return None
    head = Part(src.path, 0, 0, src.start, 0, 0)
    for row in reader(head, dialect, **fmtparams, **extra):
        if row:
            if len(set(row)) != len(row):
                dup = next(x for x in row if row.count(x) > 1)
                raise ValueError(f"duplicate column name {dup!r}")
            return [str(x) for x in row]
    return []


def split(
    path: Any, dialect: Any = _NO_DIALECT, /, *, size: int = 64 << 20, **fmtparams: Any
) -> list[Part]:
    """Cuts the file at ``path`` into parts of about ``size`` bytes that
    start exactly at records, for reading in other threads, processes or
    machines (each with :func:`read_arrow`, :func:`read`, ... of its
    :class:`Part`): together they give exactly the rows of one reader,
    with the same line numbers and errors.

    A line end inside a quoted field never starts a part. The state at
    each cut is decided by the bytes before it where they decide it, and
    each part's lines and records are counted by a reader of the part;
    elsewhere each range of ``size`` bytes is summarised independently for
    every state it could begin in, and the summaries are chained from the
    start of the file (both with the GIL released, on every CPU). The
    parts are the same either way. The first non-empty row (the
    header row) is in the first part. A part can be empty when no record
    starts in its range. Keywords are those of :func:`reader`.

    On several machines, call :func:`summarize` for each range where it
    is, and :func:`resolve` with the summaries in one place.
    """
    size = _offset("size", size)
    if size < 1:
        raise ValueError("size must be at least 1")
    p, d, spec = _split_args(path, dialect, fmtparams)
    return [Part(p, *t) for t in _unsupported_is_value_error(_fastcsv._split, d, spec, size)]


def summarize(
    path: Any, start: int, end: int, dialect: Any = _NO_DIALECT, /, **fmtparams: Any
) -> bytes:
    """The summary of bytes ``start`` to ``end`` of the file at ``path``
    (what they do for every state they could begin in: a few hundred
    bytes), for :func:`resolve`. Reads only that range (and one byte
    after it). The ranges of one file must be summarised with the same
    dialect. ``start`` and ``end`` are ints (a bool is a ``TypeError``)."""
    start = _offset("start", start)
    end = _offset("end", end)
    p, d, spec = _split_args(path, dialect, fmtparams)
    return _unsupported_is_value_error(_fastcsv._summarize, d, spec, start, end)


def _offset(name: str, value: Any) -> int:
    """A byte offset or count argument: an int (or an object with
    ``__index__``), 0 or more. A bool is a ``TypeError``: ``True`` is no
    place in a file, though ``int`` would take it as 1."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be int, not bool")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be int, not {type(value).__name__}") from None
    if n < 0:
        raise ValueError(f"{name} must be 0 or more, not {n}")
    return n


def resolve(
    path: Any, summaries: Any, dialect: Any = _NO_DIALECT, /, **fmtparams: Any
) -> list[Part]:
    """The parts of the file at ``path`` from the :func:`summarize`
    summaries of consecutive ranges that cover it from its start, in order:
    one part per range, as :func:`split` gives. Reads the file's first
    non-empty row."""
    if isinstance(summaries, (bytes, bytearray, memoryview, str)):
        raise TypeError(
            f"summaries must be a list of summaries (bytes), not one {type(summaries).__name__}"
        )
    p, d, spec = _split_args(path, dialect, fmtparams)
    sums = [bytes(s) for s in summaries]
    parts = [Part(p, *t) for t in _unsupported_is_value_error(_fastcsv._resolve, d, spec, sums)]
    # Ranges that stop short of the end would leave its records out.
    end, size = (parts[-1].end if parts else 0), os.stat(p).st_size
    if end != size:
        raise ValueError(
            f"the summaries cover bytes 0..{end} of {p}, which has {size}: "
            "summaries must cover the whole file"
        )
    return parts


def _split_args(path: Any, dialect: Any, fmtparams: dict[str, Any]) -> tuple[str, Any, Any]:
    extra = _pop_extra(fmtparams)
    kind, src = _classify(path)
    if kind != "path":
        raise TypeError(f"a path is needed, not {type(path).__name__}")
    d = _csv.reader((), *_dialect_args(dialect), **fmtparams).dialect
    return src, d, _spec(kind, src, extra)


def _unsupported_is_value_error(f: Any, *args: Any) -> Any:
    try:
        return f(*args)
    except _Unsupported as e:
        raise ValueError(f"this dialect is not read natively, so cannot be split: {e}") from None


# Newer CPython versions turn an iterator of field names into a list.
_LIST_FIELDNAMES = "iter" in _stdcsv.DictReader.__init__.__code__.co_names


class DictReader(_stdcsv.DictReader):
    """``csv.DictReader`` over :func:`fastcsv.reader`: same fields, same
    lazy ``fieldnames``, ``restkey``/``restval`` handling, and empty rows
    skipped. ``f`` may also be a path or a binary file."""

    def __init__(
        self,
        f: Any,
        fieldnames: Any = None,
        restkey: Any = None,
        restval: Any = None,
        dialect: Any = "excel",
        *args: Any,
        **kwds: Any,
    ) -> None:
        if _LIST_FIELDNAMES and fieldnames is not None and iter(fieldnames) is fieldnames:
            fieldnames = list(fieldnames)
        if fieldnames is None and isinstance(f, Part) and f.start > 0:
            # A later part of a split file: the names are the file's.
            fm = dict(kwds)
            fieldnames = _part_names("part", f, True, dialect, fm, _pop_extra(fm))
        self._fieldnames = fieldnames
        self.restkey = restkey
        self.restval = restval
        self.reader = reader(f, dialect, *args, **kwds)
        self.dialect = dialect
        self.line_num = 0

    def __next__(self) -> dict[Any, Any]:
        # csv.DictReader.__next__, with the dict built natively when the
        # field names are a list or tuple; subclasses (which may override
        # `fieldnames`) keep the stdlib's code.
        if type(self) is not DictReader:
            return super().__next__()
        # The row read and the dict built natively, with csv's attribute
        # reads and writes (line_num, fieldnames) in csv's order; a tuple
        # (row, names) when the names are not a list or tuple.
        got = _fastcsv._dict_next(self)
        if type(got) is dict:
            return got
        row = got[0]
        # The stdlib's code, property reads included (typeshed's types for
        # DictReader are narrower than what csv accepts).
        this: Any = self
        d = dict(zip(this.fieldnames, row))
        lf = len(this.fieldnames)
        lr = len(row)
        if lf < lr:
            d[this.restkey] = row[lf:]
        elif lf > lr:
            for key in this.fieldnames[lr:]:
                d[key] = this.restval
        return d
