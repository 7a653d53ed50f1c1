//! The Python extension module `fastcsv._fastcsv`, built by maturin (see
//! the root's `pyproject.toml`).
//!
//! This file converts arguments and results and maps errors; the parsing is
//! the core's. The public Python API (`fastcsv.reader`, `fastcsv.read`,
//! `fastcsv.DictReader`, ...) lives in `python/fastcsv/__init__.py`, which
//! resolves and validates dialects with the standard library (so the
//! `TypeError`/`ValueError` messages are CPython's own), decides what kind
//! of input it was given, and calls the private functions defined here:
//!
//! * `_lines_reader(iterable, dialect, filter)`: a reader over an iterable
//!   of `str` lines, fed one line at a time to a line-fed
//!   [`Scanner`](fastcsv::scan::Scanner), exactly as `_csv.c` processes them;
//! * `_native_reader(dialect, spec)`: a reader over a path, a file
//!   descriptor or a binary stream, through the core [`Reader`](fastcsv::Reader);
//! * `_text_reader(stream, dialect, filter, raw_offset, keeps_cr)`: a
//!   reader over a text file in a universal-newline mode, read in chunks
//!   (of characters, or of a UTF-8 file's bytes) through the core reader,
//!   with `csv`'s own error messages (see `text::PyTextStream`);
//! * `_read(dialect, spec)` and `_read_columns(dialect, spec, header)`: bulk
//!   reads that scan with the GIL released, in batches, and then build the
//!   Python objects.
//!
//! Any dialect the core cannot reproduce exactly (a non-ASCII delimiter,
//! quote or escape character, a quoting mode other than the four of 3.11, a
//! combination the core's builder rejects) raises the private exception
//! `_Unsupported`, and the Python layer hands the input to the stdlib.
//!
//! This crate uses only the public API of the core crate `fastcsv`.

use pyo3::prelude::*;

mod ahead;
mod arrow;
mod batch;
mod bulk;
mod dialect;
mod dict;
mod errors;
mod heads;
mod offsets;
mod reader;
mod source;
mod split;
mod strings;
mod text;
mod utf8;

use crate::arrow::{_read_arrow, ArrowStream};
use crate::batch::_set_span_max;
use crate::bulk::{_read, _read_columns};
use crate::dialect::_limit_from_state;
use crate::dict::_dict_next;
use crate::errors::_Unsupported;
use crate::heads::{_ascii_headers, _wide_headers};
use crate::offsets::_one_byte_utf8;
use crate::reader::{_lines_reader, _native_reader, _text_reader, PyReader};
use crate::split::{_resolve, _split, _summarize};

/// Private helpers used by `fastcsv/__init__.py`.
#[pymodule(gil_used = false)]
#[pyo3(name = "_fastcsv")]
fn fastcsv_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyReader>()?;
    m.add_function(wrap_pyfunction!(_lines_reader, m)?)?;
    m.add_function(wrap_pyfunction!(_native_reader, m)?)?;
    m.add_function(wrap_pyfunction!(_text_reader, m)?)?;
    m.add_function(wrap_pyfunction!(_limit_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(_dict_next, m)?)?;
    m.add_function(wrap_pyfunction!(_read, m)?)?;
    m.add_function(wrap_pyfunction!(_read_columns, m)?)?;
    m.add_function(wrap_pyfunction!(_read_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(_split, m)?)?;
    m.add_function(wrap_pyfunction!(_one_byte_utf8, m)?)?;
    m.add_function(wrap_pyfunction!(_set_span_max, m)?)?;
    m.add_function(wrap_pyfunction!(_ascii_headers, m)?)?;
    m.add_function(wrap_pyfunction!(_wide_headers, m)?)?;
    crate::heads::init_ascii(m.py())?;
    m.add_function(wrap_pyfunction!(_summarize, m)?)?;
    m.add_function(wrap_pyfunction!(_resolve, m)?)?;
    m.add_class::<ArrowStream>()?;
    m.add("_Unsupported", m.py().get_type::<_Unsupported>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
