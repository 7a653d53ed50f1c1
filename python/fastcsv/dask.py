"""CSV files as a Dask DataFrame: one partition per exact part.

``dask.dataframe.read_csv`` cuts a file at the first newline after each
block boundary, so a quoted field holding a line end can be torn in two
(it then fails, or silently gives wrong rows). :func:`read_csv` here cuts
it with :func:`fastcsv.split`, whose parts start exactly at records, and
reads each part with :func:`fastcsv.read_arrow` on the workers, so the
partitions hold exactly the rows of one reader of the whole file.

It takes a path, a glob (``"exports/*.csv"``), a list of them, or fsspec
URLs (``"file://..."``, ``"memory://..."``, ``"s3://..."``); a compressed
file, a file read through fsspec and a file read with keywords that need
the whole file (``skiprows``, ``comment``, an encoding other than UTF-8...)
is one partition. With ``types="infer"`` the column types are decided on
every partition, not only the first (see :func:`read_csv`).

Needs ``dask[dataframe]`` and ``pyarrow``. Every column is a string column
(as with ``csv``), unless ``types`` or ``dtype`` asks for typed ones (as
:func:`fastcsv.read_arrow` takes them).
"""

from __future__ import annotations

import glob
import importlib
import io
import os
from typing import Any

import fastcsv


def _pyarrow() -> Any:
    # Imported by name: neither dask nor pyarrow is a dependency of
    # fastcsv (nor needed to type-check it).
    return importlib.import_module("pyarrow")


__all__ = ["read_csv"]

# pandas keywords that need the whole file read at once (as do `header=N`
# and an encoding other than UTF-8): a file read with one is one partition.
_WHOLE_FILE = ("skiprows", "comment")


class _Piece:
    """What one partition reads: a part of a local file, a whole local
    file, or a whole file read through fsspec (picklable)."""

    def __init__(self, path: str, part: fastcsv.Part | None, fs: Any = None) -> None:
        self.path = path
        self.part = part
        self.fs = fs
        # The file's header (the column names), when it has one.
        self.names: list[str] | None = None

    def source(self) -> Any:
        if self.fs is not None:
            with self.fs.open(self.path, "rb") as f:
                data = io.BytesIO(f.read())
            data.name = self.path  # type: ignore[attr-defined]
            return data
        return self.part if self.part is not None else self.path


class _ReadPart:
    """Reads one piece into a pandas DataFrame (picklable: sent to the
    workers)."""

    def __init__(
        self,
        dialect: Any,
        header: Any,
        names: list[str],
        fmtparams: dict[str, Any],
        types: dict[Any, str] | None = None,
        columns: list[Any] | None = None,
        spellings: dict[str, Any] | None = None,
        path_column: str | None = None,
    ) -> None:
        self.dialect = dialect
        self.names = names
        # read_arrow's keywords (pandas' included).
        self.kwargs = dict(fmtparams, header=header, columns=columns, **(spellings or {}))
        self.types = types
        self.path_column = path_column
        # The columns of every file, by name, when the files' headers
        # differ (see `_align`); else None.
        self.schema: Any = None

    def table(self, piece: _Piece, types: Any = None) -> Any:
        """The piece as a pyarrow table (``types`` for ``types=``); a
        data error is ``fastcsv.Error``, as a sequential read raises it
        (``pyarrow.table`` of the stream would make it an ``OSError``)."""
        return self.stream(piece, types).read_all()

    def stream(self, piece: _Piece, types: Any = None) -> Any:
        """The piece as an Arrow stream (``types`` for ``types=``); of a
        file whose header lacks some columns named in the keywords, the
        others."""
        kw = dict(_kw_in(self.kwargs, piece))
        if types is not None:
            kw.pop("dtype", None)
            kw["types"] = _types_in(types, piece)
        if piece.names is not None:
            have = set(piece.names)
            cols = kw.get("columns")
            if isinstance(cols, list) and all(isinstance(c, str) for c in cols):
                kw["columns"] = [c for c in cols if c in have]
        return fastcsv.read_arrow(piece.source(), self.dialect, **kw)

    def __call__(self, piece: Any) -> Any:
        if isinstance(piece, fastcsv.Part):
            piece = _Piece(piece.path, piece)
        table = self.table(piece, self.types)
        if self.schema is not None:
            table = _align(table, self.schema)
        if not _has_header(self.kwargs):
            # Numbered columns: a part may see fewer than the first one.
            table = _widen(table, self.names)
        df = _to_pandas(table)
        if self.path_column is not None:
            pd = importlib.import_module("pandas")
            df[self.path_column] = pd.Series([piece.path] * len(df), dtype="string", index=df.index)
        return df


def _kw_in(kwargs: dict[str, Any], piece: _Piece) -> dict[str, Any]:
    """``kwargs`` with a ``dtype`` dict less the columns, named, that
    ``piece``'s file lacks (pandas passes them over)."""
    dtype = kwargs.get("dtype")
    if not isinstance(dtype, dict) or piece.names is None:
        return kwargs
    return dict(kwargs, dtype=_types_in(dtype, piece))


def _types_in(types: Any, piece: _Piece) -> Any:
    """``types`` less the columns, named, that ``piece``'s file lacks."""
    if not isinstance(types, dict) or piece.names is None:
        return types
    have = set(piece.names)
    return {k: v for k, v in types.items() if not isinstance(k, str) or k in have}


def _names_kw(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``read_arrow``'s keywords for the names of a file alone: every
    column, untyped (so with no spelling of booleans, which
    ``read_arrow`` refuses without types)."""
    kw = dict(kwargs, columns=None)
    for k in ("dtype", "true_values", "false_values"):
        kw.pop(k, None)
    return kw


def _headers(pieces: list[_Piece], dialect: Any, kwargs: dict[str, Any]) -> list[_Piece]:
    """``pieces`` with the names of their file's header (or numbered
    columns of its first row) set, less those of a file with no record
    (an empty file: no rows, no columns)."""
    out = []
    names: list[str] = []
    for piece in pieces:
        if piece.part is None or piece.part.index == 0:
            kw = _names_kw(kwargs)
            names = _head(piece, dialect, kw)
        piece.names = names
        if names:
            out.append(piece)
    if not out:
        pd = importlib.import_module("pandas")
        raise pd.errors.EmptyDataError("No columns to parse from file: every file is empty")
    return out


def _head(piece: _Piece, dialect: Any, kw: dict[str, Any]) -> list[str]:
    """The column names of ``piece``'s file. A stream of text columns
    reads its rows only when consumed: this reads the header of a local
    file. A file read through fsspec is read up to a prefix that holds
    its header: one whose names a prefix twice as long gives too (not the
    whole of a remote file for its first row)."""
    if piece.fs is None:
        return list(fastcsv.read_arrow(piece.source(), dialect, **kw).column_names)

    def names(data: bytes) -> list[str] | None:
        try:
            return list(fastcsv.read_arrow(data, dialect, **kw).column_names)
        except (fastcsv.Error, ValueError, OSError, EOFError):
            return None

    with piece.fs.open(piece.path, "rb") as f:
        data = f.read(1 << 16)
        while True:
            more = f.read(len(data))
            if not more:
                return list(fastcsv.read_arrow(data, dialect, **kw).column_names)
            got = names(data)
            data += more
            if got is not None and got == names(data):
                return got


def _align(table: Any, schema: Any) -> Any:
    """``table``'s columns by name in ``schema``'s order, those it lacks
    all nulls (as pandas.concat lines up frames)."""
    pa = _pyarrow()
    have = table.column_names
    if have == schema.names:
        return table
    n = table.num_rows
    cols = [
        table.column(f.name) if f.name in have else pa.nulls(n, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(cols, schema=schema)


def _has_header(kw: dict[str, Any]) -> bool:
    h = kw.get("header", True)
    return h is not None and h is not False and kw.get("names") is None


def _to_pandas(table: Any) -> Any:
    """``table`` as pandas, with integers and booleans in pandas' nullable
    dtypes (``Int64``, ``boolean``), so that every partition has the
    dtypes of the meta whether or not its part has nulls, and dates as
    ``datetime64`` (as objects, dask would make them strings)."""
    pa = _pyarrow()
    pd = importlib.import_module("pandas")
    nullable = {pa.bool_(): pd.BooleanDtype()}
    for bits in (8, 16, 32, 64):
        nullable[getattr(pa, f"int{bits}")()] = getattr(pd, f"Int{bits}Dtype")()
        nullable[getattr(pa, f"uint{bits}")()] = getattr(pd, f"UInt{bits}Dtype")()

    def mapper(t: Any) -> Any:
        if t in nullable:
            return nullable[t]
        # Times and decimals as objects would be made strings by dask.
        if pa.types.is_time(t) or pa.types.is_decimal(t):
            return pd.ArrowDtype(t)
        return None

    return table.to_pandas(types_mapper=mapper, date_as_object=False)


def _widen(table: Any, names: list[str]) -> Any:
    pa = _pyarrow()

    have = table.column_names
    if have == names:
        return table
    if len(have) > len(names):
        raise fastcsv.Error(f"a row has {len(have)} fields; the first row has {len(names)}")
    cols = [table.column(i) for i in range(len(have))]
    n = table.num_rows
    cols += [pa.array([""] * n, pa.utf8()) for _ in names[len(have) :]]
    return pa.Table.from_arrays(cols, names=names)


# The types `types="infer"` gives, in the order it tries them: a column's
# type is the first that holds every one of its values (see
# `fastcsv.read_arrow`). A date alone is a timestamp without a zone (its
# midnight) but not one with a zone; a hex int64 is no float64; 0 and 1
# are int64 alone and booleans beside `true`.
_ORDER = (
    "int64",
    "bool",
    "date32[day]",
    "timestamp[s]",
    "timestamp[ns]",
    "timestamp[s, tz=UTC]",
    "timestamp[ns, tz=UTC]",
    "float64",
)


def _expand(path: Any) -> list[tuple[str, Any]]:
    """The files ``path`` names, in order: ``(path, fs)`` with ``fs`` the
    fsspec file system of a file that is not local (else ``None``)."""
    items = [path] if isinstance(path, (str, os.PathLike, bytes)) else list(path)
    if not items:
        raise ValueError("fastcsv.dask.read_csv was given no files")
    out: list[tuple[str, Any]] = []
    for item in items:
        p = os.fsdecode(os.fspath(item))
        if "://" in p:
            fsspec: Any = importlib.import_module("fsspec")
            fs, _, paths = fsspec.get_fs_token_paths(p)
            if not paths:
                raise FileNotFoundError(f"no files match {p!r}")
            protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
            local = protocol in ("file", "local")
            out += [(q, None if local else fs) for q in sorted(paths)]
        elif glob.has_magic(p):
            found = sorted(glob.glob(p))
            if not found:
                raise FileNotFoundError(f"no files match {p!r}")
            out += [(q, None) for q in found]
        else:
            if not os.path.exists(p):
                raise FileNotFoundError(f"no such file: {p!r}")
            out.append((p, None))
    return out


def _compressed(path: str) -> bool:
    return fastcsv._has_magic(path)


def read_csv(
    path: Any,
    dialect: Any = fastcsv._NO_DIALECT,
    /,
    *,
    blocksize: int | None = 64 << 20,
    header: Any = True,
    types: Any = None,
    columns: Any = None,
    usecols: Any = None,
    null_values: Any = None,
    true_values: Any = None,
    false_values: Any = None,
    strings_can_be_null: bool = False,
    include_path_column: bool | str = False,
    **fmtparams: Any,
) -> Any:
    """The files at ``path`` as one ``dask.dataframe.DataFrame`` of string
    columns, one partition per part of about ``blocksize`` bytes of each
    file (see :func:`fastcsv.split`; ``blocksize=None``: one per file).
    ``header``, the dialect and the keywords are those of
    :func:`fastcsv.read_arrow`, pandas' included (``sep``, ``dtype``,
    ``na_values``, ``names``, ``skiprows``, ``comment``, ``encoding``,
    ``errors``, ``compression``); errors carry each file's line and
    record numbers.

    ``path`` is a path, a glob, an fsspec URL (``file://``,
    ``memory://``, ``s3://``...; a URL may be a glob too) or a list of
    them; the files are read in order, each with its header row (files
    whose headers differ are lined up by name, as ``pandas.concat`` lines
    up frames: the first file's columns, then those later files add,
    missing ones null; an empty file adds nothing; every file empty is
    pandas' ``EmptyDataError``). A
    compressed file, one that is not local (read whole through fsspec on
    the worker) and one read with ``skiprows`` or ``comment`` is one
    partition. ``include_path_column=True`` (or a column name) adds a
    ``path`` column holding each row's file.

    ``types`` is :func:`fastcsv.read_arrow`'s (with a header row).
    ``"infer"`` gives each column the type :func:`fastcsv.read_arrow`
    would give it over the files one after the other: every partition's
    types are inferred here (on all its rows), and a column whose
    partitions differ gets the first type, from the widest of theirs on,
    in read_arrow's order (int64, bool, date32, timestamp without a zone,
    then with one, float64) that every partition reads with, else
    ``utf8``. So a column of integers in one file and decimals in the
    next is ``float64`` everywhere, ``0``/``1`` beside ``true`` is
    ``bool``, a hex integer beside a decimal is ``utf8``, as in one file
    (``dask.dataframe.read_csv`` takes the first block's types and fails
    on the later one). Integer and
    boolean columns are pandas' nullable ``Int64`` and ``boolean``.

    ``columns`` (or ``usecols``, as pandas and dask name it) reads only
    those columns, by name or 0-based index, in the order given.
    ``nrows`` is not taken (``df.head(n)`` reads only the first
    partitions).

    The files are split now, on every CPU with the GIL released (mostly a
    count of its records at the block scanner's speed); the parts are
    read when the graph is computed, wherever its tasks run (local files
    must be at the same path there)."""
    try:
        dd = importlib.import_module("dask.dataframe")
        pa = _pyarrow()
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(
            "fastcsv.dask.read_csv needs dask[dataframe] and pyarrow: "
            "pip install 'dask[dataframe]' pyarrow"
        ) from e
    if "nrows" in fmtparams:
        raise TypeError("fastcsv.dask.read_csv() does not take nrows: use df.head(n)")
    fastcsv._encoding_errors("read_csv", fmtparams)
    for k in list(fmtparams):
        if k not in _READ_ARROW_KEYS:
            raise TypeError(f"read_csv() got an unexpected keyword argument {k!r}")
    if columns is not None and usecols is not None:
        raise TypeError("fastcsv.dask.read_csv takes columns or usecols, not both")
    fastcsv._check_terminator("read_csv", fmtparams)
    fastcsv._check_booleans("read_csv", types, fmtparams.get("dtype"), true_values, false_values)
    if fmtparams.get("na_values") is not None:
        fastcsv._na_spellings("read_csv", fmtparams["na_values"], True)
    # pandas' usecols: the columns in the file's order (see below).
    file_order = columns is None and usecols is not None
    if columns is None:
        columns = usecols
    if columns is not None and not callable(columns) and not isinstance(columns, (str, bytes, dict)):
        columns = list(columns)  # read twice below
    if blocksize is not None and (isinstance(blocksize, bool) or not isinstance(blocksize, int)):
        raise TypeError(f"blocksize must be int or None, not {type(blocksize).__name__}")
    spellings: dict[str, Any] = {}
    for k, v in (
        ("null_values", null_values),
        ("true_values", true_values),
        ("false_values", false_values),
    ):
        if isinstance(v, (str, bytes)):
            raise TypeError(f"{k} must be a list of str")
        if v is not None:
            spellings[k] = list(v)
    if fastcsv._flag("strings_can_be_null", strings_can_be_null):
        spellings["strings_can_be_null"] = True
    kwargs: dict[str, Any] = dict(fmtparams, header=header, columns=columns, **spellings)
    has_header = _has_header(kwargs)
    if types is not None and not has_header:
        raise ValueError("fastcsv.dask.read_csv takes types with header=True (a header row)")
    if columns is not None and not has_header and kwargs.get("names") is None:
        raise ValueError("fastcsv.dask.read_csv takes columns with header=True (a header row)")
    row_header = isinstance(header, int) and not isinstance(header, bool)
    whole = (
        any(fmtparams.get(k) is not None for k in _WHOLE_FILE)
        or (row_header and (header > 0 or fmtparams.get("names") is not None))
        or fmtparams.get("encoding") not in (None, "utf-8", "utf8", "utf-8-sig")
        or fmtparams.get("errors") not in (None, "strict")
    )
    split_kw = {k: v for k, v in fmtparams.items() if k in fastcsv._DIALECT_KEYS}
    if fmtparams.get("sep") is not None:
        split_kw["delimiter"] = fmtparams["sep"]
    pieces: list[_Piece] = []
    for p, fs in _expand(path):
        if fs is not None or whole or blocksize is None or _compressed(p):
            pieces.append(_Piece(p, None, fs))
        else:
            parts = fastcsv.split(p, dialect, size=blocksize, **split_kw)
            pieces += [_Piece(p, part) for part in parts]
    align = False
    # An empty file has no rows and no columns, wherever it is.
    pieces = _headers(pieces, dialect, kwargs)
    if not has_header:
        for piece in pieces:
            piece.names = None
    else:
        # Each file's header: files with the same columns in another
        # order, or with some columns missing or added, are read by name,
        # as pandas.concat of their frames lines them up.
        heads = [piece.names or [] for piece in pieces]
        align = any(h != heads[0] for h in heads)
        if align:
            for h in heads:
                if len(set(h)) != len(h):
                    raise fastcsv.Error(
                        "fastcsv.dask.read_csv: the files' headers differ and one "
                        f"names a column twice: {h}"
                    )
    if file_order:
        kw = _names_kw(kwargs)
        every = fastcsv.read_arrow(pieces[0].source(), dialect, **kw).column_names
        columns = fastcsv._usecols(columns, "read_csv", lambda: every)
        kwargs["columns"] = columns
    if align and columns is not None and not callable(columns):
        # By name, as the first file names them.
        sel = [columns] if isinstance(columns, (str, int)) else list(columns)
        columns = [heads[0][c] if isinstance(c, int) else c for c in sel]
        kwargs["columns"] = columns
    read = _ReadPart(dialect, header, [], fmtparams, None, columns, spellings)
    # The names (and types), from the first piece's header (or first row).
    first = fastcsv.read_arrow(
        pieces[0].source(), dialect, types=_types_in(types, pieces[0]), **_kw_in(kwargs, pieces[0])
    )
    names = list(first.column_names)
    # The types of the columns read, in their order.
    chosen = list(first.column_types)
    if align and columns is None:
        # Every file's columns, in the order pandas.concat gives them.
        for piece in pieces:
            names += [n for n in piece.names or [] if n not in names]
        chosen += ["utf8"] * (len(names) - len(chosen))
    if types == "infer":
        merged = _merged_types(read, pieces, first, names, align)
        chosen = [merged[j] for j in range(len(names))]
    given: dict[Any, str] | None = None
    if types is not None:
        if align:
            given = {n: t for n, t in zip(names, chosen)}
            if types != "infer":
                # The types asked for of the columns the first file lacks.
                for j, n in enumerate(names):
                    if j >= len(first.column_names):
                        owner = next(q for q in pieces if n in (q.names or []))
                        got = fastcsv.read_arrow(
                            owner.source(),
                            dialect,
                            types=_types_in(types, owner),
                            **dict(_kw_in(kwargs, owner), columns=[n]),
                        )
                        given[n] = chosen[j] = got.column_types[0]
        else:
            # read_arrow takes them by index in the file (`columns` keeps them).
            at: list[int] = list(range(len(names)))
            if columns is not None:
                every = fastcsv.read_arrow(pieces[0].source(), dialect, **_names_kw(kwargs)).column_names
                at = [c if isinstance(c, int) else every.index(c) for c in columns]
            given = dict(zip(at, chosen))
    if types != "infer" and (types is not None or fmtparams.get("dtype") is not None):
        # The types asked for, as read_arrow makes them (int8, float32,
        # a zone, a dictionary...).
        schema = pa.schema(first)
        for n in names[len(schema) :]:
            owner = next(q for q in pieces if n in (q.names or []))
            kw = dict(_kw_in(kwargs, owner), columns=[n])
            if types is not None:
                kw["types"] = _types_in(types, owner)
            got = fastcsv.read_arrow(owner.source(), dialect, **kw)
            schema = schema.append(pa.schema(got).field(0))
    else:
        schema = pa.schema([(n, _pa_type(pa, t)) for n, t in zip(names, chosen)])
    meta = _to_pandas(schema.empty_table())
    path_column = None
    if include_path_column:
        path_column = include_path_column if isinstance(include_path_column, str) else "path"
        pd = importlib.import_module("pandas")
        meta[path_column] = pd.Series([], dtype="string")
    read = _ReadPart(dialect, header, names, fmtparams, given, columns, spellings, path_column)
    if align:
        read.schema = schema
    return dd.from_map(read, pieces, meta=meta, label="fastcsv-read-csv", enforce_metadata=False)


# read_arrow's keywords that read_csv passes on.
_READ_ARROW_KEYS = frozenset(
    (
        "dtype",
        "na_values",
        "keep_default_na",
        "sep",
        "names",
        "skiprows",
        "comment",
        "compression",
        "string_view",
        "threads",
        "batch_rows",
    )
) | fastcsv._DIALECT_KEYS | frozenset(fastcsv._EXTRA)


def _pa_type(pa: Any, name: str) -> Any:
    """A pyarrow type from a ``column_types`` name."""
    if name.startswith("timestamp"):
        unit = name[len("timestamp[") :].split(",")[0].rstrip("]")
        return pa.timestamp(unit, tz="UTC" if "tz=" in name else None)
    if name.startswith("date32"):
        return pa.date32()
    simple = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    return simple.get(name, pa.utf8())


def _merged_types(
    read: _ReadPart, pieces: list[_Piece], first: Any, names: list[str], align: bool
) -> dict[int, str]:
    """The type of each column over every piece (``first``: the first
    piece's stream): that of the pieces' rows one after the other (see
    :func:`read_csv`). By name when ``align`` (the files' headers differ),
    else by index."""
    streams = [first] + [read.stream(piece, "infer") for piece in pieces[1:]]
    if align:
        seen = [dict(zip(s.column_names, s.column_types)) for s in streams]
        keys: list[Any] = list(names)
    else:
        seen = [dict(enumerate(s.column_types)) for s in streams]
        for got in seen[1:]:
            if len(got) != len(seen[0]):
                raise fastcsv.Error(f"a file has {len(got)} columns; the first has {len(seen[0])}")
        keys = [j if read.kwargs.get("columns") is None else names[j] for j in range(len(names))]
    merged: dict[int, str] = {}
    for j, key in enumerate(keys):
        slot = key if align else j
        have = [(piece, t[slot]) for piece, t in zip(pieces, seen) if slot in t]
        merged[j] = _column_type(read, [q for q, _ in have], [t for _, t in have], key)
    return merged


def _column_type(read: _ReadPart, pieces: list[_Piece], seen: list[str], key: Any) -> str:
    """The type of column ``key`` over every piece, ``seen`` the type of
    each piece's own values: no narrower than the widest of them, and
    the first in `_ORDER` from there that every piece reads with. A
    piece that came out ``utf8`` holds text or only nulls: read with a
    type, it tells which."""
    typed = [t for t in seen if t != "utf8"]
    if not typed:
        return "utf8"
    if any(t not in _ORDER for t in typed):
        return typed[0] if len(set(typed)) == 1 and len(typed) == len(seen) else "utf8"
    for ty in _ORDER[max(_ORDER.index(t) for t in typed) :]:
        if all(t == ty or _reads_as(read, piece, key, ty) for piece, t in zip(pieces, seen)):
            return ty
    return "utf8"


def _reads_as(read: _ReadPart, piece: _Piece, key: Any, ty: str) -> bool:
    """Whether column ``key`` of ``piece`` reads as type ``ty``."""
    kw = dict(read.kwargs, columns=[key], types={key: ty})
    kw.pop("dtype", None)
    try:
        fastcsv.read_arrow(piece.source(), read.dialect, **kw).read_all()
    except (fastcsv.Error, ValueError, OSError):
        return False
    return True
