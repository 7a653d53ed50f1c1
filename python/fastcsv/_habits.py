"""pandas' and polars' keywords for :func:`fastcsv.read_arrow` and
:func:`fastcsv.dask.read_csv`: checked, and mapped onto fastcsv's own
(``dtype`` to ``types``, ``usecols`` to ``columns``, ``na_values`` to
``null_values``), and the rows that ``skiprows``, ``nrows``, ``comment``
and ``header=N`` leave out, found in Python before the native parse."""

from __future__ import annotations

import _csv
import array
import codecs
import importlib
import io
import itertools
import numbers
import operator
import sys
from typing import Any

from . import _fastcsv


def _check_terminator(func: str, fmtparams: dict[str, Any]) -> None:
    """pandas reads ``lineterminator`` as the record end; ``csv``'s reader
    ignores it and ends records at ``\\r``, ``\\n`` and ``\\r\\n``, as
    fastcsv does. Any other terminator is a ``ValueError``, not ignored."""
    end = fmtparams.get("lineterminator")
    if end is not None and end not in ("\r\n", "\n", "\r"):
        raise ValueError(
            f"{func}() ends records at \\r, \\n and \\r\\n only, not lineterminator={end!r}"
        )


def _na_spellings(func: str, na_values: Any, keep_default_na: bool) -> list[str]:
    """pandas' ``na_values`` (a ``str`` or an iterable of values, with its
    default spellings unless ``keep_default_na`` is false) as
    ``null_values``. A dict (pandas' spellings per column) is a
    ``TypeError``: its keys are column names, not spellings."""
    if isinstance(na_values, dict):
        raise TypeError(
            f"{func}() takes na_values as a str or a list of str (for every column), "
            "not a dict (spellings per column are not supported)"
        )
    if isinstance(na_values, (str, bytes)) or not hasattr(na_values, "__iter__"):
        # One value (pandas takes a number as its text: na_values=5).
        na_values = [na_values]
    given: list[str] = []
    for x in na_values:
        given.append(str(x))
        # pandas' spellings of a whole number, given as a number or as
        # text: na_values=[-999] (or "-999", or -999.0) is "-999" and
        # "-999.0" too.
        try:
            v = float(x)
            if v == int(v):
                given += [f"{int(v)}.0", str(int(v))]
        except (TypeError, ValueError, OverflowError):
            pass
    given = list(dict.fromkeys(given))
    return (list(_PANDAS_NA) if _flag("keep_default_na", keep_default_na) else []) + given


def _encoding_errors(func: str, fmtparams: dict[str, Any]) -> None:
    """pandas' ``encoding_errors`` as fastcsv's ``errors`` (the name
    ``open`` and ``bytes.decode`` give it), in ``fmtparams``; both given
    and different is a ``TypeError``."""
    if "encoding_errors" not in fmtparams:
        return
    value = fmtparams.pop("encoding_errors")
    if fmtparams.get("errors", value) != value:
        raise TypeError(f"{func}() takes errors or encoding_errors, not both")
    fmtparams["errors"] = value


def _check_booleans(func: str, types: Any, dtype: Any, true_values: Any, false_values: Any) -> None:
    """``true_values`` / ``false_values`` spell the booleans of typed
    columns; without ``types`` or ``dtype`` every column is text, where
    they would do nothing (pandas, which infers types by default, makes a
    column of such values ``bool``): a ``ValueError`` that says how to ask
    for types, not the spellings silently ignored."""
    if types is None and dtype is None and (true_values is not None or false_values is not None):
        raise ValueError(
            f"{func}() reads every column as text unless types= or dtype= is given: "
            "true_values and false_values spell booleans in typed columns "
            "(give types='infer' for pandas' inferred types, or a bool dtype)"
        )


def _flag(name: str, value: Any) -> bool:
    """A keyword that is a bool (``0``, ``1`` and numpy's bools too): any
    other value is a ``TypeError``, not taken for its truth (``"no"`` is
    true), as pandas refuses it."""
    if isinstance(value, (str, bytes)) or value not in (True, False):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
    return bool(value)


# pandas' default null spellings (`keep_default_na=True`).
_PANDAS_NA = (
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "-1.#IND",
    "-1.#QNAN",
    "-NaN",
    "-nan",
    "1.#IND",
    "1.#QNAN",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "NaN",
    "None",
    "n/a",
    "nan",
    "null",
)

# pandas / numpy dtype names and the Arrow type each is read as.
_DTYPES = {
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "Int8": "int8",
    "Int16": "int16",
    "Int32": "int32",
    "Int64": "int64",
    "UInt8": "uint8",
    "UInt16": "uint16",
    "UInt32": "uint32",
    "UInt64": "uint64",
    "float32": "float32",
    "float64": "float64",
    "Float32": "float32",
    "Float64": "float64",
    "float": "float64",
    "int": "int64",
    "bool": "bool",
    "boolean": "bool",
    "string": "utf8",
    "str": "utf8",
    "object": "utf8",
    "category": "dictionary<values=string, indices=int32, ordered=0>",
    "datetime64[s]": "timestamp[s]",
    "datetime64[ms]": "timestamp[ms]",
    "datetime64[us]": "timestamp[us]",
    "datetime64[ns]": "timestamp[ns]",
    "date": "date32",
}


def _arrow_type(dtype: Any) -> Any:
    """The Arrow type (a name ``types=`` takes) a pandas dtype is read as:
    a name (``'int64'``, ``'Int64'``, ``'string'``, ``'category'``,
    ``'datetime64[ns]'``...), a numpy or pandas dtype object, or a Python
    type (``int``, ``float``, ``str``, ``bool``). A pyarrow type is passed
    on as it is."""
    if isinstance(dtype, type) and dtype in (int, float, str, bool, object):
        return _DTYPES[dtype.__name__]
    if type(dtype).__module__.startswith("pyarrow"):
        return dtype
    # pandas' ArrowDtype (``int32[pyarrow]``): its pyarrow type.
    arrow = getattr(dtype, "pyarrow_dtype", None)
    if arrow is not None and type(arrow).__module__.startswith("pyarrow"):
        return arrow
    name = dtype if isinstance(dtype, str) else str(getattr(dtype, "name", dtype))
    if name not in _DTYPES:
        # numpy's spellings of its dtypes, as pandas takes them: a scalar
        # type (``np.float32``) or a type code (``'i8'``, ``'f8'``, ``'O'``).
        np: Any = sys.modules.get("numpy")
        if np is not None:
            try:
                name = np.dtype(dtype).name
            except (TypeError, ValueError):
                pass
    if name.startswith("string[") or name == "str":  # pandas' string dtypes
        name = "string"
    try:
        return _DTYPES[name]
    except KeyError:
        raise ValueError(f"read_arrow cannot read a column as dtype {dtype!r}") from None


def _usecols(usecols: Any, func: str, names: Any, numbered: bool = False) -> list[int]:
    """pandas' ``usecols``: the columns named (or numbered) by a list, or
    those whose name a callable takes, in the file's order and each once,
    whatever the order and repeats of the list, as pandas reads them
    (``usecols=["c", "a"]`` is ``["a", "c"]``). ``names()`` gives the
    column names. An unknown name or an index out of range is a
    ``ValueError``, a list that is not one of names and ints a
    ``TypeError``. With ``numbered`` (no header row and no ``names``), a
    callable is given each column's index, pandas' label for it (the
    column is still named ``"0"``, ``"1"``, ...)."""
    every = list(names())
    if callable(usecols):
        return [j for j, n in enumerate(every) if usecols(j if numbered else n)]
    if isinstance(usecols, (str, bytes)) or not hasattr(usecols, "__iter__"):
        raise TypeError(f"{func}() takes usecols as a list of names or indices, or a callable")
    picked: set[int] = set()
    for k in usecols:
        if isinstance(k, str):
            if k not in every:
                raise ValueError(f"usecols names a column the file does not have: {k!r}")
            picked.add(every.index(k))
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            k = operator.index(k)  # numpy's ints too
            if not 0 <= k < len(every):
                raise ValueError(f"usecols index {k} is out of range: the file has {len(every)} columns")
            picked.add(k)
        else:
            raise TypeError(f"usecols holds names (str) or indices (int), not {type(k).__name__}")
    return sorted(picked)


def _dtype_types(dtype: Any, names: Any) -> Any:
    """``dtype=`` (one dtype, or ``{column: dtype}``) as ``types=``."""
    if isinstance(dtype, dict):
        return {k: _arrow_type(v) for k, v in dtype.items()}
    t = _arrow_type(dtype)
    return {i: t for i in range(len(names()))}


def _header_plan(header: Any, names: Any) -> tuple[bool, int, bool]:
    """``header=`` as (the file has a header row, non-empty rows to skip
    before it, the header row is replaced by ``names``).

    ``True``/``False`` are fastcsv's; ``None`` is pandas' "no header";
    an ``int`` N is pandas' row number: skip N rows, then the header.
    With ``names``, ``True`` (the default) and ``None`` mean the file has
    no header row; an int that it has one, replaced by ``names``.
    ``"infer"`` is pandas' default, spelt out: ``True``."""
    if isinstance(header, str) and header == "infer":
        header = True
    if header is None or header is False:
        return False, 0, False
    if header is True:
        return names is None, 0, False
    if not isinstance(header, int) and hasattr(header, "__index__"):
        header = operator.index(header)  # numpy's ints
    if isinstance(header, int):
        if header < 0:
            raise ValueError("header must be a row number (0 or more), None or a bool")
        return True, header, names is not None
    raise TypeError(f"header must be bool, int or None, not {type(header).__name__}")


_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
)


def _compression(value: Any) -> str:
    """``compression=`` as the native option's name."""
    if value is None:
        return "none"
    names = {
        "infer": "infer",
        "gzip": "gzip",
        "gz": "gzip",
        "zstd": "zstd",
        "bz2": "bz2",
        "bzip2": "bz2",
        "xz": "xz",
    }
    if not isinstance(value, str) or value not in names:
        raise ValueError(
            f"compression must be 'infer', None, 'gzip', 'zstd', 'bz2' or 'xz', not {value!r}"
        )
    return names[value]


def _has_magic(path: str) -> bool:
    """Whether the file at ``path`` starts as a compressed one does (one
    that cannot be opened is left to the native reader to report)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return any(head.startswith(m) for m, _ in _MAGIC)


def _decompress(data: bytes, codec: str) -> bytes:
    """``data`` decoded in Python (for input read here rather than by the
    native reader): ``codec`` as :func:`_compression` names it."""
    if codec == "infer":
        codec = next((c for m, c in _MAGIC if data.startswith(m)), "none")
    if codec == "none":
        return data
    if codec == "gzip":
        import gzip

        return gzip.decompress(data)
    if codec == "bz2":
        import bz2

        return bz2.decompress(data)
    if codec == "xz":
        import lzma

        return lzma.decompress(data)
    try:
        zstandard: Any = importlib.import_module("zstandard")
    except ImportError:
        raise ValueError("zstd input read in Python needs the zstandard package") from None
    out = io.BytesIO()
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as r:
        out.write(r.read())
    return out.getvalue()


# Encodings read natively (the others are decoded to UTF-8 here first).
_NATIVE_ENCODINGS = ("utf-8", "utf-8-sig")


def _input_of(kind: str, src: Any, codec: str) -> tuple[Any, str | None]:
    """The whole input, its name for errors: the bytes (decompressed), or
    the ``str`` a text stream gave."""
    name: str | None = None
    if kind == "path":
        name = src
        with open(src, "rb") as f:
            data: Any = f.read()
    elif kind == "part":
        raise ValueError("a Part is read natively: skiprows, nrows, comment, header=N "
                         "and encodings other than UTF-8 need a whole file")
    else:
        # A file object's name (a text file's too, as for a binary one).
        n = getattr(src, "name", None)
        name = n if isinstance(n, str) else None
        data = src.read()
    if isinstance(data, str):
        return data, name
    return _decompress(bytes(data), codec), name


def _text_of(
    data: Any, name: str | None, encoding: str, errors: str
) -> tuple[str, str | None, bytes | None]:
    """The whole input (see :func:`_input_of`) as text, its name for
    errors, and its bytes (``None`` for text input)."""
    if isinstance(data, str):
        return data, name, None
    if codecs.lookup(encoding).name == "utf-8":
        if errors == "strict":
            # Invalid bytes go through as lone surrogates, back to bytes
            # for the native reader, which reports them with their place.
            errors = "surrogateescape"
        encoding = "utf-8-sig"
    try:
        return data.decode(encoding, errors), name, data
    except UnicodeDecodeError as e:
        # The file's line of the byte: the reason says where.
        before = data[: e.start].decode(encoding, "replace")
        line = len(io.StringIO(before + "x", newline="").readlines())
        where = f"{name}:{line}" if name is not None else f"line {line}"
        raise UnicodeDecodeError(e.encoding, e.object, e.start, e.end, f"{where}: {e.reason}") from None


def _filter_rows(
    lines: list[str],
    dialect_args: tuple[Any, ...],
    fmtparams: dict[str, Any],
    skip: Any,
    header_skip: int,
    has_header: bool,
    nrows: int | None,
    comment: str | None,
    named: bool = False,
) -> tuple[list[str], list[tuple[int, int, int, int]], int | None]:
    """The text of ``lines`` (the input's, line ends kept) with the rows
    pandas' ``skiprows``, ``header=N``, ``comment`` and ``nrows`` leave out
    made empty (each of their line ends kept, so that line numbers in
    errors are the file's; empty rows are skipped), and cut after the last
    row ``nrows`` keeps, record by record; then the records not kept as
    they were, for :func:`_byte_map`: the index of each in the first list,
    its first line, its number of lines, and the file's record number
    less the parser's after it (a record left out that spans lines is a
    record per line to the parser).

    With ``nrows=0`` and no header row, the first row left out fixes the
    number of columns, as pandas reads it (``header=None, nrows=0`` gives
    the columns ``0, 1, ...`` and no row): its number of fields comes
    second (``None`` otherwise, with ``named`` (the columns are named by
    the caller), or when there is no such row)."""
    rows = _csv.reader(iter(lines), *dialect_args, **fmtparams)
    base = 0  # the line `rows` started at (set back to read lines again)
    quote = rows.dialect.quotechar
    out: list[str] = []
    changed: list[tuple[int, int, int, int]] = []
    emitted = 0  # records the parser sees in `out`
    seen = 0  # lines consumed
    index = 0  # records, empty ones included (pandas' row numbers)
    nonempty = 0  # non-empty records kept so far
    # The non-empty records read at most: no later row is parsed.
    limit = None if nrows is None else header_skip + int(has_header) + nrows
    # The width of the first data row is needed though no row is kept.
    want_width = nrows == 0 and not has_header and not named
    width: int | None = None
    while limit is None or nonempty < limit or want_width:
        try:
            row = next(rows)
        except StopIteration:
            break
        except _csv.Error:
            # The native reader meets the same error in the same record
            # and reports it with its path, line and record.
            out.append("".join(lines[seen:]))
            break
        first_line = seen
        seen = base + rows.line_num
        rec = lines[first_line:seen]
        i = index
        index += 1
        drop = bool(skip(i)) if skip is not None else False
        cut_here = False  # a trailing comment was cut from the record
        if not drop and comment is not None and row:
            # A comment at the line's start leaves the row out; one after
            # spaces leaves a row of them, as pandas reads it. Where the
            # comment ends the record on an earlier line than the parse
            # did (a quote in it opened a field), the lines after it are
            # read again, as rows of their own.
            if rec[0].startswith(comment):
                cut = rec[:1]
                drop = True
            else:
                cut = _cut_comment(rec, comment, quote)
                drop = not "".join(cut).strip("\r\n")
                cut_here = cut != rec
            if len(cut) < len(rec):
                seen = base = first_line + len(cut)
                rows = _csv.reader(itertools.islice(lines, base, None), *dialect_args, **fmtparams)
            rec = cut
        if not row:
            out.append("".join(rec))  # an empty line, as it was
            emitted += 1
            continue
        if drop or nonempty < header_skip:
            if not drop:
                nonempty += 1
            # Each line end is an empty record to the parser.
            out.append("".join(_line_end(x) for x in rec))
            emitted += len(rec)
            changed.append((len(out) - 1, first_line, len(rec), index - emitted))
            continue
        if limit is not None and nonempty >= limit:
            # nrows=0 without a header row: the first data row, read for
            # its width alone (as a comment left it).
            width = len(next(_csv.reader(iter(rec), *dialect_args, **fmtparams), row))
            break
        nonempty += 1
        out.append("".join(rec))
        emitted += 1
        if cut_here:
            changed.append((len(out) - 1, first_line, len(rec), index - emitted))
    return out, changed, width


def _byte_map(
    out: list[str] | None,
    changed: list[tuple[int, int, int, int]],
    lines: list[str],
    raw: bytes | None,
    encoding: str,
    exact: bool,
) -> tuple[bytes, bytes, bytes] | None:
    """Where records of the text given to the parser (``out``, pieces of
    which are ``changed`` from the file's ``lines``, as
    :func:`_filter_rows` gives them; ``None``: the lines as they are)
    start there and in the file (``raw``, decoded as ``encoding``), in
    bytes, with the file's record number less the parser's (as three
    ``i64`` columns, :func:`_packed`), where these may change: for errors
    to give the file's byte offsets and record numbers. ``None`` when they are the same, or when the bytes in the
    file cannot be told (``exact`` false: a decoding that replaced bytes;
    the offsets then count the text parsed, as documented)."""
    if raw is None:
        return None
    rewritten = out or []  # `changed` is empty without it
    utf8_of = operator.methodcaller("encode", "utf-8", "surrogateescape")
    if codecs.lookup(encoding).name in _NATIVE_ENCODINGS:
        # The same bytes, past a BOM, but in the records changed.
        in_file = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
        if not exact and in_file + sum(len(utf8_of(x)) for x in lines) != len(raw):
            return None  # bytes replaced in decoding
        at = 0
        starts = [(0, in_file, 0)] if in_file else []
        after = 0  # pieces of `out` counted
        for k, line, n, records in changed:
            same = len(utf8_of("".join(rewritten[after:k])))
            in_file += same + len(utf8_of("".join(lines[line : line + n])))
            at += same + len(utf8_of(rewritten[k]))
            after = k + 1
            starts.append((at, in_file, records))
        return _packed(*zip(*starts)) if starts else None
    # Another encoding: a line's bytes there and in UTF-8 differ, unless
    # it is ASCII written as ASCII.
    ascii = _ascii_compatible(encoding)
    if out is None and ascii and raw.isascii():
        return None
    try:
        if ascii and len(raw) == sum(map(len, lines)):
            sizes: Any = map(len, lines)  # a byte a character (latin-1...)
        elif ascii:
            sizes = map(len, map(operator.methodcaller("encode", encoding), lines))
        else:
            # A codec with state (a BOM, shifts): line after line.
            enc = codecs.getincrementalencoder(encoding)("strict")
            sizes = [len(enc.encode(line)) for line in lines]
            if sizes:
                sizes[-1] += len(enc.encode("", final=True))
        file_at = list(itertools.accumulate(sizes, initial=0))
    except UnicodeError:
        return None
    if file_at[-1] != len(raw):
        return None
    # Each line's bytes in the text parsed, and the record numbers' shift
    # from each on: a changed record's text counts at its first line.
    parsed = list(map(len, map(utf8_of, lines)))
    shift = [0] * (len(lines) + 1)
    last = 0
    for k, line, n, records in changed:
        parsed[line : line + n] = [len(utf8_of(rewritten[k]))] + [0] * (n - 1)
        shift[line + n] += records - last
        last = records
    return _packed(itertools.accumulate(parsed, initial=0), file_at, itertools.accumulate(shift))


def _packed(parsed: Any, file: Any, records: Any) -> tuple[bytes, bytes, bytes]:
    """The columns of a byte map as the native reader takes them: ``i64``
    arrays."""
    return tuple(array.array("q", c).tobytes() for c in (parsed, file, records))  # type: ignore[return-value]


def _named(out: io.BytesIO, name: str | None) -> io.BytesIO:
    """``out``, named ``name`` (for errors) when there is one."""
    if name is not None:
        out.name = name  # type: ignore[attr-defined]
    return out


def _ascii_compatible(encoding: str) -> bool:
    """Whether ``encoding`` writes each ASCII character as its one byte,
    with no BOM or state (latin-1, cp1252, ...; not UTF-16)."""
    try:
        return "a,\n".encode(encoding) == b"a,\n" and "".encode(encoding) == b""
    except (UnicodeError, LookupError):
        return False


def _line_end(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :] or "\n"


def _cut_comment(rec: list[str], comment: str, quote: str | None) -> list[str]:
    """The record's lines with its text from the first ``comment`` outside
    quotes to its line end left out (pandas' trailing comments)."""
    inq = False
    for li, line in enumerate(rec):
        for ci, ch in enumerate(line):
            if quote and ch == quote:
                inq = not inq
            elif ch == comment and not inq:
                return rec[:li] + [line[:ci] + _line_end(line)]
    return rec


class _Habits:
    """The pandas keywords of one call, checked and mapped."""

    def __init__(self, func: str, kw: dict[str, Any], fmtparams: dict[str, Any]) -> None:
        self.func = func
        sep = kw.get("sep")
        if isinstance(sep, str) and len(sep) != 1:
            # csv would say '"delimiter" must be a 1-character string'.
            raise TypeError(
                f"{func}() takes sep as one character, not {sep!r} "
                "(pandas' regular-expression and multi-character separators are not supported)"
            )
        if sep is not None:
            if "delimiter" in fmtparams and fmtparams["delimiter"] != sep:
                raise TypeError(f"{func}() takes sep or delimiter, not both")
            fmtparams["delimiter"] = sep
        self.skiprows = kw.get("skiprows")
        self.nrows = kw.get("nrows")
        self.comment = kw.get("comment")
        self.names = kw.get("names")
        n = self.nrows
        if n is not None:
            # An int, or anything with __index__ but a bool (numpy's ints).
            try:
                self.nrows = n = None if isinstance(n, bool) else operator.index(n)
            except TypeError:
                n = None
            if n is None or n < 0:
                raise ValueError("nrows must be an int, 0 or more")
        c = self.comment
        if c is not None and (not isinstance(c, str) or len(c) != 1):
            raise ValueError("comment must be one character")
        if self.names is not None:
            if isinstance(self.names, (str, bytes)):
                raise TypeError("names must be a list of str")
            if isinstance(self.names, (set, frozenset)) or not hasattr(self.names, "__iter__"):
                # A set's order is not the columns': pandas refuses it too.
                raise TypeError(
                    f"names must be an ordered collection (a list), not {type(self.names).__name__}"
                )
            self.names = [str(x) for x in self.names]
            if len(set(self.names)) != len(self.names):
                raise ValueError("names has a duplicate")
        plan = _header_plan(kw.get("header", True), self.names)
        self.has_header, self.header_skip, self.replace = plan
        self.codec = _compression(kw.get("compression", "infer"))
        # The names "0", "1", ... of the columns of an input with no
        # header row whose rows are all left out (nrows=0), set by
        # `rewrite`.
        self.numbered: list[str] | None = None
        # Where the records of the input rewritten by `rewrite` start
        # there and in the file, in bytes, and the file's record number
        # less the parser's, where either differs.
        # Three columns of starts (see `_byte_map`), or the UTF-8 text of a
        # file of one byte a character.
        self.byte_map: tuple[bytes, bytes, bytes] | bytes | None = None

    def skip_fn(self) -> Any:
        s = self.skiprows
        if s is None:
            return None
        if callable(s):
            return s
        wrong = "skiprows must be an int, a list of row numbers or a callable"
        if isinstance(s, bool):
            raise TypeError(wrong)
        if isinstance(s, int):
            return lambda i: i < s
        if isinstance(s, (str, bytes)) or not hasattr(s, "__iter__"):
            raise TypeError(f"{wrong}, not {type(s).__name__}")
        rows = set(s)
        for r in rows:
            # A row number that is no int would never match a row: "1" is
            # not row 1.
            whole = isinstance(r, numbers.Integral) or (isinstance(r, float) and r.is_integer())
            if isinstance(r, bool) or not whole:
                raise TypeError(f"{wrong}: the list holds {r!r}")
        return lambda i: i in rows

    def needs_text(self, kind: str, extra: dict[str, Any]) -> bool:
        """Whether the input is read and rewritten here before parsing."""
        enc = extra.get("encoding") or "utf-8"
        errors = extra.get("errors") or "strict"
        return (
            kind == "lines"
            or codecs.lookup(enc).name not in _NATIVE_ENCODINGS
            or errors != "strict"
            or self.skiprows is not None
            or self.header_skip > 0
            or self.replace
            or self.nrows is not None
            or self.comment is not None
        )

    def rewrite(
        self,
        kind: str,
        src: Any,
        dialect_args: tuple[Any, ...],
        fmtparams: dict[str, Any],
        extra: dict[str, Any],
    ) -> Any:
        """The input as UTF-8 bytes (named as the input, for errors), with
        the left-out rows emptied. ``dialect_args`` are ``_csv.reader``'s
        positional arguments (the dialect, if one was given)."""
        enc = extra.pop("encoding", None) or "utf-8"
        errors = extra.pop("errors", None) or "strict"
        codecs.lookup_error(errors)
        if self.comment is not None:
            d = _csv.reader((), *dialect_args, **fmtparams).dialect
            if self.comment in (d.delimiter, d.quotechar, d.escapechar, "\r", "\n"):
                # Which would win is a guess: the delimiter would end the
                # rows' text at their first field.
                raise ValueError(
                    f"comment must differ from the delimiter, quotechar, escapechar "
                    f"and line ends, not {self.comment!r}"
                )
        data, name = _input_of(kind, src, self.codec)
        skip = self.skip_fn()
        rows_left_out = self.header_skip or self.replace or self.comment
        pieces: list[str] | None = None
        changed: list[tuple[int, int, int, int]] = []
        filtered = skip is not None or rows_left_out or self.nrows is not None
        codec = codecs.lookup(enc).name
        table = None
        if codec not in ("iso8859-1", "cp1252") and not filtered and errors == "strict":
            from fastcsv import _one_byte_table

            table = _one_byte_table(codec)
        if (
            not filtered
            and errors == "strict"
            and isinstance(data, bytes)
            and (codec in ("iso8859-1", "cp1252") or table is not None)
        ):
            # Latin-1, cp1252 or another one-byte codec (cp1251, koi8-r,
            # iso8859-15, ...), parsed as it is: transcoded natively (no
            # `str` of the whole file), unless a byte is one the codec
            # leaves undefined, which Python's decoder raises on below.
            encoded = _fastcsv._one_byte_utf8(
                data, codec, None if table is None else list(table)
            )
            if encoded is not None:
                self.byte_map = None if data.isascii() else encoded
                return _named(io.BytesIO(encoded), name)
        text, name, raw = _text_of(data, name, enc, errors)
        utf8 = codecs.lookup(enc).name in _NATIVE_ENCODINGS
        # A file of one byte a character (latin-1, cp1252), parsed as it
        # is: the native reader counts the characters before an error's
        # byte in the UTF-8 text, with no map of the lines made here.
        one_byte = (
            not filtered
            and not utf8
            and errors == "strict"
            and raw is not None
            and len(raw) == len(text)
            and _ascii_compatible(enc)
        )
        if one_byte and raw is not None:
            encoded = text.encode("utf-8")
            self.byte_map = None if raw.isascii() else encoded
            return _named(io.BytesIO(encoded), name)
        lines = list(io.StringIO(text, newline="")) if filtered or not utf8 else []
        if filtered:
            pieces, changed, width = _filter_rows(
                lines,
                dialect_args,
                fmtparams,
                skip,
                self.header_skip + int(self.replace),
                self.has_header and not self.replace,
                self.nrows,
                self.comment,
                self.names is not None,
            )
            if width is not None:
                # No row is read, so the native reader cannot count the
                # columns: they are named as it names them ("0", "1", ...).
                self.numbered = [str(i) for i in range(width)]
            text = "".join(pieces)
        # Decoding with a handler other than strict may have replaced
        # bytes: their number in the file is then unknown.
        exact = errors in ("strict", "surrogateescape")
        if not exact and utf8 and not lines:
            lines = list(io.StringIO(text, newline=""))
        self.byte_map = _byte_map(pieces, changed, lines, raw, enc, exact)
        # A lone surrogate (``errors='surrogateescape'``, or a byte that
        # is not UTF-8 with ``errors='strict'``) goes back to its byte,
        # which the native reader then reports with its place.
        return _named(io.BytesIO(text.encode("utf-8", "surrogateescape")), name)
