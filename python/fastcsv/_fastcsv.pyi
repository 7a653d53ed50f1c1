"""The native module behind :mod:`fastcsv` (private: use the package)."""

from typing import Any, final

__all__ = [
    "ArrowStream",
    "Reader",
    "_Unsupported",
    "__version__",
    "_lines_reader",
    "_dict_next",
    "_native_reader",
    "_read",
    "_read_columns",
    "_read_arrow",
    "_resolve",
    "_split",
    "_one_byte_utf8",
    "_summarize",
    "_text_reader",
    "_limit_from_state",
    "_set_span_max",
    "_ascii_headers",
    "_wide_headers",
]

__version__: str

@final
class Reader:
    """A CSV reader: iterate it for rows, like ``_csv.reader``."""

    @property
    def dialect(self) -> Any:
        """The validated ``_csv.Dialect`` in use."""

    @property
    def line_num(self) -> int:
        """Lines read so far."""

    @property
    def _source(self) -> str:
        """``"lines"``, ``"text"``, ``"text-raw"`` or ``"native"``: what the
        reader reads."""

    @property
    def _reads_ahead(self) -> bool:
        """Whether a second thread scans rows ahead."""

    @property
    def _batched(self) -> bool:
        """Whether rows are scanned in batches (on any thread)."""

    @property
    def _short_slots(self) -> int | None:
        """The slots of the short-string cache (``None`` over lines)."""

    def __iter__(self) -> Reader: ...
    def __next__(self) -> list[Any]: ...

@final
class ArrowStream:
    """The columns of a native input as a stream of Arrow record batches
    (the Arrow PyCapsule interface); it can be read once."""

    @property
    def column_names(self) -> list[str]:
        """The column names."""

    @property
    def column_types(self) -> list[str]:
        """The column types: ``utf8``, ``int64``, ``float64``, ``bool``,
        ``date32[day]`` or ``timestamp[s]`` (``[ns]``, ``[s, tz=UTC]``, ...),
        and the names of the types asked for (``int8``, ``float32``,
        ``large_string``, ``decimal128(10, 2)``, ``time32[ms]``, ...)."""

    def read_all(self) -> Any:
        """Every batch as a ``pyarrow.Table``; a data error in any row is
        raised as ``fastcsv.Error``."""

    def to_pandas(self) -> Any:
        """Every batch as a ``pandas.DataFrame`` (through pyarrow); errors
        as ``read_all``."""

    def to_polars(self) -> Any:
        """Every batch as a ``polars.DataFrame``; errors as ``read_all``."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """A ``PyCapsule`` holding an ``ArrowArrayStream``; a
        ``requested_schema`` other than the stream's is a ``ValueError``."""

    def __arrow_c_schema__(self) -> Any:
        """A ``PyCapsule`` holding the ``ArrowSchema`` of the batches."""

class _Unsupported(ValueError):
    """The dialect needs the stdlib reader."""

def _lines_reader(lines: Any, dialect: Any, filter: str | None = None) -> Reader:
    """A reader over an iterable of ``str`` lines."""

def _text_reader(
    stream: Any,
    dialect: Any,
    filter: str | None = None,
    raw_offset: int | None = None,
    keeps_cr: bool = False,
    ahead: bool = False,
    threads: int | None = None,
    raw_encoding: str = "utf-8",
    raw_table: list[int] | None = None,
) -> Reader:
    """A reader over a text stream with universal newlines, read in chunks."""

def _one_byte_utf8(data: bytes, encoding: str, table: list[int] | None = None) -> bytes | None:
    """The UTF-8 of a Latin-1 or cp1252 file's bytes, or of another one-byte
    codec's (``table``: the characters of bytes 0x80 to 0xFF, 0 where
    undefined); ``None`` at an undefined byte."""

def _native_reader(dialect: Any, spec: dict[str, Any]) -> Reader:
    """A reader over a path, a descriptor or a binary stream."""

def _read(dialect: Any, spec: dict[str, Any]) -> list[list[Any]]:
    """Every row of a native input."""

def _read_columns(
    dialect: Any, spec: dict[str, Any], header: bool = True, given: list[Any] | None = None
) -> dict[str, list[Any]]:
    """The columns of a native input."""

def _read_arrow(
    dialect: Any,
    spec: dict[str, Any],
    header: bool,
    batch_rows: int,
    names: list[str] | None = None,
    threads: int = 1,
    types: Any = None,
    string_view: bool = False,
    columns: Any = None,
    null_values: Any = None,
    true_values: Any = None,
    false_values: Any = None,
    strings_can_be_null: bool = False,
    infer_rows: int | None = None,
    text_null_values: Any = None,
) -> ArrowStream:
    """The columns of a native input, as an Arrow stream."""

def _split(dialect: Any, spec: dict[str, Any], size: int) -> list[tuple[int, int, int, int, int]]:
    """The parts of a file cut into ranges of ``size`` bytes."""

def _summarize(dialect: Any, spec: dict[str, Any], start: int, end: int) -> bytes:
    """The summary of one byte range of a file."""

def _resolve(
    dialect: Any, spec: dict[str, Any], summaries: list[bytes]
) -> list[tuple[int, int, int, int, int]]:
    """The parts of a file from the summaries of its ranges."""

def _limit_from_state() -> int | None:
    """csv's field size limit read from its module state (tests)."""

def _set_span_max(limit: int | None = None) -> int:
    """Sets the largest offset batches keep in ``u32`` spans (tests); the
    previous one."""

def _ascii_headers() -> bool:
    """Whether ASCII strings are made by filling in their header (tests)."""

def _wide_headers() -> bool:
    """Whether UCS1 and UCS2 strings are made from a copied header (tests)."""

def _dict_next(this: Any) -> Any:
    """The next ``DictReader`` row: a dict, or ``(row, names)``."""
