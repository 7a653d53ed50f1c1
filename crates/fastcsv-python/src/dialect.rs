//! Dialects and the field size limit: a validated `_csv.Dialect` as the
//! core's settings, and the stdlib's current `field_size_limit()`, read
//! from `_csv`'s module state where it can be located there.

use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyString;
use pyo3::{ffi, intern};

use fastcsv::{Dialect, Filter};

use crate::errors::unsupported;

/// `_csv.QUOTE_NONNUMERIC` and `_csv.QUOTE_NONE`.
pub(crate) const QUOTE_NONNUMERIC: i64 = 2;

const QUOTE_NONE: i64 = 3;

/// The reader settings of a validated `_csv.Dialect`, as bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyDialect {
    delimiter: u8,
    quote: Option<u8>,
    escape: Option<u8>,
    double_quote: bool,
    skip_initial_space: bool,
    strict: bool,
    pub(crate) nonnumeric: bool,
}

/// A one-character ASCII string as a byte; `None` stays `None`.
fn ascii_char(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<u8>> {
    if obj.is_none() {
        return Ok(None);
    }
    let s = obj.downcast::<PyString>()?;
    match s.to_str().map(str::as_bytes) {
        Ok(&[b]) if b.is_ascii() => Ok(Some(b)),
        _ => Err(unsupported(what)),
    }
}

impl PyDialect {
    /// Reads a `_csv.Dialect` (as returned by `csv.reader(...).dialect`).
    pub(crate) fn from_py(d: &Bound<'_, PyAny>) -> PyResult<PyDialect> {
        let py = d.py();
        let quoting: i64 = d.getattr(intern!(py, "quoting"))?.extract()?;
        if !(0..=QUOTE_NONE).contains(&quoting) {
            return Err(unsupported("quoting"));
        }
        let delimiter = ascii_char(&d.getattr(intern!(py, "delimiter"))?, "delimiter")?
            .ok_or_else(|| unsupported("delimiter"))?;
        let quote = if quoting == QUOTE_NONE {
            None
        } else {
            ascii_char(&d.getattr(intern!(py, "quotechar"))?, "quotechar")?
        };
        let escape = ascii_char(&d.getattr(intern!(py, "escapechar"))?, "escapechar")?;
        if quoting == QUOTE_NONNUMERIC && escape.is_some() && py.version_info() >= (3, 13) {
            // 3.13 also converts unquoted fields that begin with the escape
            // character; the core has 3.11's rule.
            return Err(unsupported("QUOTE_NONNUMERIC with escapechar on 3.13+"));
        }
        Ok(PyDialect {
            delimiter,
            quote,
            escape,
            double_quote: d.getattr(intern!(py, "doublequote"))?.is_truthy()?,
            skip_initial_space: d.getattr(intern!(py, "skipinitialspace"))?.is_truthy()?,
            strict: d.getattr(intern!(py, "strict"))?.is_truthy()?,
            nonnumeric: quoting == QUOTE_NONNUMERIC,
        })
    }

    /// The core dialect with Python's reader semantics: no header, ragged
    /// rows allowed, empty lines kept as empty rows.
    pub(crate) fn core(
        &self,
        filter: Filter,
        limit: Option<u64>,
        strip_bom: bool,
    ) -> PyResult<Dialect> {
        Dialect::builder()
            .delimiter(self.delimiter)
            .quote(self.quote)
            .escape(self.escape)
            .double_quote(self.double_quote)
            .skip_initial_space(self.skip_initial_space)
            .strict(self.strict)
            .headers(false)
            .flexible(true)
            .skip_empty_lines(false)
            .strip_bom(strip_bom)
            .filter(filter)
            .field_limit(limit)
            .build()
            .map_err(|e| unsupported(&e.message()))
    }
}

pub(crate) fn parse_filter(f: Option<&str>) -> PyResult<Filter> {
    match f {
        None => Ok(Filter::Off),
        Some(s) => Filter::parse(s).ok_or_else(|| {
            PyValueError::new_err(format!(
                "filter must be None, 'controls', 'all-controls' or 'invisible', not {s:?}"
            ))
        }),
    }
}

/// The stdlib's current `field_size_limit()`, shared with `csv`.
///
/// Readers that follow `csv` read it before every row, and calling the
/// function makes a new `int` each time, a cost on every row. So where the
/// limit can be found in `_csv`'s module state, it is read from there: in
/// CPython 3.10 to 3.14 that state begins with five object pointers and
/// then the limit (a C `long` or `Py_ssize_t`, eight bytes on 64-bit Unix).
/// The place is trusted only if the state is large enough and holds the
/// value the function returns when it is first looked up, and then the
/// value it is set to (set and put back at once, under the GIL); anywhere else
/// (other layouts, Windows' 4-byte `long`) the function is called.
pub(crate) fn field_limit(py: Python<'_>) -> PyResult<i64> {
    match LimitSlot::get(py) {
        Some(slot) => Ok(slot.read(py)),
        None => call_field_limit(py),
    }
}

/// The limit as read from `_csv`'s state, or `None` where it is not
/// located (for tests).
#[pyfunction]
pub(crate) fn _limit_from_state(py: Python<'_>) -> Option<i64> {
    LimitSlot::get(py).map(|slot| slot.read(py))
}

fn call_field_limit(py: Python<'_>) -> PyResult<i64> {
    static FUNC: GILOnceCell<Py<PyAny>> = GILOnceCell::new();
    FUNC.import(py, "_csv", "field_size_limit")?.call0()?.extract()
}

/// Where `_csv` keeps its field size limit (see [`field_limit`]).
struct LimitSlot {
    /// The `_csv` module, whose state holds the limit.
    _module: Py<PyAny>,
    /// The limit's place in that state. Never changed: an `AtomicPtr` only
    /// because it is `Send` and `Sync` (the slot is shared by every thread,
    /// which read it under the GIL) where a raw pointer is not.
    at: AtomicPtr<i64>,
}

impl LimitSlot {
    /// Offset of the limit in `_csv`'s state (CPython 3.10-3.14).
    const OFFSET: usize = 5 * std::mem::size_of::<*const ()>();

    /// The slot, located (or found missing) once per process.
    fn get(py: Python<'_>) -> Option<&LimitSlot> {
        static SLOT: GILOnceCell<Option<LimitSlot>> = GILOnceCell::new();
        SLOT.get_or_init(py, || LimitSlot::find(py).ok().flatten()).as_ref()
    }

    /// The limit now.
    fn read(&self, _py: Python<'_>) -> i64 {
        // SAFETY: `at` points into the module state of `_csv`, which
        // `_module` keeps alive, at an aligned `i64` checked to be the
        // limit (see `find`); the GIL is held (`_py`), under which `_csv`
        // writes it.
        unsafe { std::ptr::read_volatile(self.at.load(Ordering::Relaxed)) }
    }

    fn find(py: Python<'_>) -> PyResult<Option<LimitSlot>> {
        if !cfg!(all(unix, target_pointer_width = "64")) {
            return Ok(None);
        }
        let module = py.import("_csv")?;
        let limit = call_field_limit(py)?;
        let m = module.as_ptr();
        // SAFETY: `m` is a module object (imported above); both functions
        // accept any module and return NULL when it has no definition or
        // state, which is checked before use.
        let (def, state) = unsafe { (ffi::PyModule_GetDef(m), ffi::PyModule_GetState(m)) };
        if def.is_null() || state.is_null() {
            return Ok(None);
        }
        // SAFETY: `def` is the module's definition, non-null.
        let size = unsafe { (*def).m_size };
        if size < (Self::OFFSET + 16) as ffi::Py_ssize_t {
            return Ok(None);
        }
        // SAFETY: the state is `size` bytes, at least OFFSET + 16, so the
        // eight bytes at OFFSET are inside it; it is allocated with
        // pointer alignment, so they are aligned for `i64`.
        let at = unsafe { state.cast::<u8>().add(Self::OFFSET).cast::<i64>() };
        // SAFETY: as just said; read under the GIL.
        let read = || unsafe { std::ptr::read_volatile(at) };
        if read() != limit {
            return Ok(None);
        }
        // The same place must follow a change (made and undone while this
        // thread holds the GIL, so no Python code sees it).
        let set = module.getattr("field_size_limit")?;
        set.call1((limit ^ 1,))?;
        let follows = read() == limit ^ 1;
        set.call1((limit,))?;
        if !follows || read() != limit {
            return Ok(None);
        }
        Ok(Some(LimitSlot { _module: module.into_any().unbind(), at: AtomicPtr::new(at) }))
    }
}

/// Python's limit as the core's (`None` when a limit is effectively
/// absent). Limits below 1 cannot be expressed; the caller falls back.
pub(crate) fn core_limit(limit: i64) -> PyResult<Option<u64>> {
    if limit < 1 {
        return Err(unsupported("field_size_limit below 1"));
    }
    Ok(Some(limit as u64))
}
