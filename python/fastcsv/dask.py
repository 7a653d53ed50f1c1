"""A CSV file as a Dask DataFrame: one partition per exact part.

``dask.dataframe.read_csv`` cuts a file at the first newline after each
block boundary, so a quoted field holding a line end can be torn in two
(it then fails, or silently gives wrong rows). :func:`read_csv` here cuts
it with :func:`fastcsv.split`, whose parts start exactly at records, and
reads each part with :func:`fastcsv.read_arrow` on the workers, so the
partitions hold exactly the rows of one reader of the whole file.

Needs ``dask[dataframe]`` and ``pyarrow``. Every column is a string column
(as with ``csv``), unless ``types`` asks for typed ones (as
:func:`fastcsv.read_arrow` takes it).
"""

from __future__ import annotations

import importlib
from typing import Any

import fastcsv


def _pyarrow() -> Any:
    # Imported by name: neither dask nor pyarrow is a dependency of
    # fastcsv (nor needed to type-check it).
    return importlib.import_module("pyarrow")

__all__ = ["read_csv"]


class _ReadPart:
    """Reads one part into a pandas DataFrame (picklable: sent to the
    workers)."""

    def __init__(
        self,
        dialect: Any,
        header: bool,
        names: list[str],
        fmtparams: dict[str, Any],
        types: dict[int, str] | None = None,
        columns: list[int] | None = None,
        spellings: dict[str, Any] | None = None,
    ) -> None:
        self.dialect = dialect
        self.header = header
        self.names = names
        self.fmtparams = fmtparams
        self.types = types
        self.columns = columns
        self.spellings = spellings or {}

    def __call__(self, part: fastcsv.Part) -> Any:
        pa = _pyarrow()
        stream = fastcsv.read_arrow(
            part,
            self.dialect,
            header=self.header,
            types=self.types,
            columns=self.columns,
            **self.spellings,
            **self.fmtparams,
        )
        table = pa.table(stream)
        if not self.header:
            # Numbered columns: a part may see fewer than the first one.
            table = _widen(table, self.names)
        return _to_pandas(table)


def _to_pandas(table: Any) -> Any:
    """``table`` as pandas, with integers and booleans in pandas' nullable
    dtypes (``Int64``, ``boolean``), so that every partition has the
    dtypes of the meta whether or not its part has nulls."""
    pa = _pyarrow()
    pd = importlib.import_module("pandas")
    nullable = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return table.to_pandas(types_mapper=nullable.get)


def _widen(table: Any, names: list[str]) -> Any:
    pa = _pyarrow()

    have = table.column_names
    if have == names:
        return table
    if len(have) > len(names):
        raise fastcsv.Error(
            f"a row has {len(have)} fields; the first row has {len(names)}"
        )
    cols = [table.column(i) for i in range(len(have))]
    n = table.num_rows
    cols += [pa.array([""] * n, pa.utf8()) for _ in names[len(have) :]]
    return pa.Table.from_arrays(cols, names=names)


def read_csv(
    path: Any,
    dialect: Any = fastcsv._NO_DIALECT,
    /,
    *,
    blocksize: int = 64 << 20,
    header: bool = True,
    types: Any = None,
    columns: Any = None,
    usecols: Any = None,
    null_values: Any = None,
    true_values: Any = None,
    false_values: Any = None,
    strings_can_be_null: bool = False,
    **fmtparams: Any,
) -> Any:
    """The file at ``path`` as a ``dask.dataframe.DataFrame`` of string
    columns, one partition per part of about ``blocksize`` bytes (see
    :func:`fastcsv.split`). ``header``, the dialect and the keywords are
    those of :func:`fastcsv.read_arrow`; errors carry the whole file's
    line and record numbers.

    ``types`` is :func:`fastcsv.read_arrow`'s (with ``header=True``):
    ``"infer"`` infers the types from the first part's first rows, here,
    and every part is read with those; integer and boolean columns are
    pandas' nullable ``Int64`` and ``boolean``, floats ``float64``.

    ``columns`` (or ``usecols``, as pandas and dask name it) reads only
    those columns, by name or 0-based index, in the order given, as
    :func:`fastcsv.read_arrow` does (with ``header=True``).
    ``null_values``, ``true_values``, ``false_values`` and
    ``strings_can_be_null`` are :func:`fastcsv.read_arrow`'s too.

    The file is split now, on every CPU with the GIL released (mostly a
    count of its records at the block scanner's speed); the parts are
    read when the graph is computed, wherever its tasks run (the file must
    be at the same path there)."""
    try:
        dd = importlib.import_module("dask.dataframe")
        pa = _pyarrow()
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(
            "fastcsv.dask.read_csv needs dask[dataframe] and pyarrow: "
            "pip install 'dask[dataframe]' pyarrow"
        ) from e
    if columns is not None and usecols is not None:
        raise TypeError("fastcsv.dask.read_csv takes columns or usecols, not both")
    if columns is None:
        columns = usecols
    if columns is not None and not isinstance(columns, (str, bytes, dict)):
        columns = list(columns)  # read twice below
    if types is not None and not header:
        raise ValueError("fastcsv.dask.read_csv takes types with header=True")
    if columns is not None and not header:
        raise ValueError("fastcsv.dask.read_csv takes columns with header=True")
    parts = fastcsv.split(path, dialect, size=blocksize, **fmtparams)
    # The names (and types), from the first part's header (or first row).
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
    if strings_can_be_null:
        spellings["strings_can_be_null"] = True
    first = fastcsv.read_arrow(
        parts[0], dialect, header=header, types=types, columns=columns, **spellings, **fmtparams
    )
    names = first.column_names
    # For every part: the columns and types the first part settled, by
    # their indices in the file (names may repeat).
    picked = None
    if columns is not None:
        every = fastcsv.read_arrow(parts[0], dialect, header=header, **fmtparams).column_names
        picked = [c if isinstance(c, int) else every.index(c) for c in columns]
    given = None
    if types is not None:
        given = dict(zip(picked or range(len(names)), first.column_types))
    # The stream's schema, through the Arrow PyCapsule interface.
    meta = _to_pandas(pa.schema(first).empty_table())
    read = _ReadPart(dialect, header, list(names), dict(fmtparams), given, picked, spellings)
    return dd.from_map(read, parts, meta=meta, label="fastcsv-read-csv", enforce_metadata=False)
