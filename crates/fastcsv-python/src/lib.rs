//! The Python extension module `fastcsv._fastcsv` (feature `python`).
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
//!   [`Scanner`], exactly as `_csv.c` processes them;
//! * `_native_reader(dialect, spec)`: a reader over a path, a file
//!   descriptor or a binary stream, through the core [`Reader`](CoreReader);
//! * `_text_reader(stream, dialect, filter, raw_offset, keeps_cr)`: a
//!   reader over a text file in a universal-newline mode, read in chunks
//!   (of characters, or of a UTF-8 file's bytes) through the core reader,
//!   with `csv`'s own error messages (see [`PyTextStream`]);
//! * `_read(dialect, spec)` and `_read_columns(dialect, spec, header)`: bulk
//!   reads that scan with the GIL released, in batches, and then build the
//!   Python objects.
//!
//! Any dialect the core cannot reproduce exactly (a non-ASCII delimiter,
//! quote or escape character, a quoting mode other than the four of 3.11, a
//! combination the core's builder rejects) raises the private exception
//! `_Unsupported`, and the Python layer hands the input to the stdlib.
//!
//! Only the crate's public API is used here.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict, PyIterator, PyList, PySet, PyString, PyType};
use pyo3::{ffi, intern};
use pyo3::{PyTraverseError, PyVisit};

use fastcsv::scan::{Fields, Scan, Scanner};
use fastcsv::split::Splitter;
use fastcsv::{
    arrow, Dialect, Error as CoreError, ErrorKind, Filter, Position, Reader as CoreReader,
    ReaderBuilder, Row, SourceChoice,
};

mod exc {
    pyo3::import_exception!(_csv, Error);
}

pyo3::create_exception!(
    _fastcsv,
    _Unsupported,
    PyValueError,
    "The dialect cannot be parsed natively; the caller falls back to the stdlib."
);

/// `_csv.QUOTE_NONNUMERIC` and `_csv.QUOTE_NONE`.
const QUOTE_NONNUMERIC: i64 = 2;
const QUOTE_NONE: i64 = 3;

/// Fields at most this long are looked up in the `intern=True` cache.
const INTERN_MAX_LEN: usize = 24;
/// The cache stops growing at this many distinct values.
const INTERN_MAX_ENTRIES: usize = 1 << 16;
/// A bulk-read batch ends after this many bytes of field data (small, so
/// that a small input needs no second thread and a batch stays in cache) ...
const BATCH_BYTES: usize = 256 << 10;
/// ... or this many fields ...
const BATCH_FIELDS: usize = 32 << 10;
/// ... or this many rows, whichever comes first.
const BATCH_ROWS: usize = 16 << 10;
/// How often [`Batch::prepare_until`] checks whether to stop (fields).
const PREPARE_STEP: usize = 256;
/// Room for a row that ends a batch past [`BATCH_BYTES`].
const BATCH_SLACK: usize = 64 << 10;
/// Characters asked of a text stream's `read` at a time. Moderate, so that
/// an exception from the stream (a `UnicodeDecodeError`) comes out close to
/// where `csv` would raise it: the text the failing call had already
/// decoded is lost with it.
const TEXT_CHUNK: usize = 1 << 14;
/// Bytes asked of a text file's binary buffer at a time (see [`RawText`]).
const RAW_CHUNK: usize = 1 << 16;
/// Bytes of a text stream sent to a read-ahead thread at a time ...
const FEED_CHUNK: usize = RAW_CHUNK;
/// ... and chunks sent ahead of it (about four batches).
const FEED_AHEAD: usize = 16;

// ---------------------------------------------------------------------------
// Dialects

/// The reader settings of a validated `_csv.Dialect`, as bytes.
#[derive(Clone, Copy, Debug)]
struct PyDialect {
    delimiter: u8,
    quote: Option<u8>,
    escape: Option<u8>,
    double_quote: bool,
    skip_initial_space: bool,
    strict: bool,
    nonnumeric: bool,
}

fn unsupported(what: &str) -> PyErr {
    _Unsupported::new_err(what.to_owned())
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
    fn from_py(d: &Bound<'_, PyAny>) -> PyResult<PyDialect> {
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
    fn core(&self, filter: Filter, limit: Option<u64>, strip_bom: bool) -> PyResult<Dialect> {
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

fn parse_filter(f: Option<&str>) -> PyResult<Filter> {
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
/// function (which makes a new `int`) was about 30 ns a row. So where the
/// limit can be found in `_csv`'s module state, it is read from there: in
/// CPython 3.10 to 3.14 that state begins with five object pointers and
/// then the limit (a C `long` or `Py_ssize_t`, eight bytes on 64-bit Unix).
/// The place is trusted only if the state is large enough and holds the
/// value the function returns when it is first looked up, and then the
/// value it is set to (set and put back at once, under the GIL); anywhere else
/// (other layouts, Windows' 4-byte `long`) the function is called.
fn field_limit(py: Python<'_>) -> PyResult<i64> {
    match LimitSlot::get(py) {
        Some(slot) => Ok(slot.read(py)),
        None => call_field_limit(py),
    }
}

/// The limit as read from `_csv`'s state, or `None` where it is not
/// located (for tests).
#[pyfunction]
fn _limit_from_state(py: Python<'_>) -> Option<i64> {
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
fn core_limit(limit: i64) -> PyResult<Option<u64>> {
    if limit < 1 {
        return Err(unsupported("field_size_limit below 1"));
    }
    Ok(Some(limit as u64))
}

// ---------------------------------------------------------------------------
// Strings

/// A small, fast hasher for the intern cache (FNV-1a over 8-byte words).
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ 0xcbf2_9ce4_8422_2325;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
        }
        for &b in chunks.remainder() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// The `intern=True` cache: short field bytes to their shared `str`.
type InternCache = HashMap<Box<[u8]>, Py<PyString>, BuildHasherDefault<WordHasher>>;

/// Builds `str` objects from field bytes.
struct StrMaker {
    /// Error handler name for invalid UTF-8 (`strict`, `replace`, ...).
    errors: std::ffi::CString,
    strict: bool,
    cache: Option<InternCache>,
    /// Decoding space for [`make_str`].
    scratch: Vec<u16>,
    /// The reader's `csv` dialect, when records whose unescaping may join
    /// invalid UTF-8 are decoded first and parsed by `csv` (see
    /// [`decode_then_parse`]); `None` with a `filter`, whose removals have
    /// no `csv` counterpart.
    dialect: Option<Py<PyAny>>,
}

impl StrMaker {
    /// Records of this reader whose fields may differ when decoded first
    /// are parsed by `csv` with `dialect` (unless a filter is on).
    fn decode_first(mut self, dialect: &Bound<'_, PyAny>, filter: Filter) -> StrMaker {
        if filter == Filter::Off {
            self.dialect = Some(dialect.clone().unbind());
        }
        self
    }

    /// Whether to look for such records.
    fn joins(&self) -> bool {
        self.dialect.is_some()
    }

    fn new(errors: &str, intern: bool) -> PyResult<StrMaker> {
        let c = std::ffi::CString::new(errors)
            .map_err(|_| PyValueError::new_err("errors must not contain NUL"))?;
        Ok(StrMaker {
            errors: c,
            strict: errors == "strict",
            cache: intern.then(HashMap::default),
            scratch: Vec::new(),
            dialect: None,
        })
    }

    /// A `str` for the field bytes `b`, made from `text` (what was learnt
    /// of `b` before, possibly off the GIL). On a decoding error, `pos`
    /// describes where the field is.
    fn make<'py>(
        &mut self,
        py: Python<'py>,
        b: &[u8],
        text: Text<'_>,
        pos: &dyn Fn() -> String,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(cache) = &mut self.cache {
            if b.len() <= INTERN_MAX_LEN {
                if let Some(s) = cache.get(b) {
                    return Ok(s.bind(py).clone().into_any());
                }
                let s = text.to_str(py, &self.errors, self.strict, pos, &mut self.scratch)?;
                if cache.len() < INTERN_MAX_ENTRIES {
                    if let Ok(ps) = s.downcast::<PyString>() {
                        cache.insert(b.into(), ps.clone().unbind());
                    }
                }
                return Ok(s);
            }
        }
        text.to_str(py, &self.errors, self.strict, pos, &mut self.scratch)
    }
}

/// A field's text as far as it is known: bytes to decode, or code units
/// already decoded (by [`Batch::prepare`], without the GIL).
#[derive(Clone, Copy)]
enum Text<'a> {
    /// Bytes all below 0x80.
    Ascii(&'a [u8]),
    /// Bytes not yet looked at.
    Utf8(&'a [u8]),
    /// Code points below U+0100, at least one of them at or past U+0080.
    Ucs1(&'a [u8]),
    /// Code points below U+10000, at least one of them past U+00FF.
    Ucs2(&'a [u16]),
    /// Code points, at least one of them past U+FFFF.
    Ucs4(&'a [u32]),
}

impl Text<'_> {
    fn to_str<'py>(
        self,
        py: Python<'py>,
        errors: &std::ffi::CStr,
        strict: bool,
        pos: &dyn Fn() -> String,
        scratch: &mut Vec<u16>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Text::Ascii(b) => str_from_units(py, b, 0x7F),
            Text::Utf8(b) => make_str(py, b, errors, strict, pos, scratch),
            Text::Ucs1(u) => str_from_units(py, u, 0xFF),
            Text::Ucs2(u) => str_from_units(py, u, 0xFFFF),
            Text::Ucs4(u) => str_from_units(py, u, 0x10_FFFF),
        }
    }
}

/// A code unit of a compact `str`: `u8`, `u16` or `u32`.
trait Unit: Copy + Into<u32> {}
impl Unit for u8 {}
impl Unit for u16 {}
impl Unit for u32 {}

/// A `str` of the code points `units`, whose largest is at most `max`.
/// The caller makes sure that `max` names the narrowest kind that holds
/// them (0x7F: all below 0x80; 0xFF: one at least 0x80; 0xFFFF: one past
/// 0xFF; 0x10FFFF: one past 0xFFFF), so the string is canonical, and that
/// the units are of that kind's size.
fn str_from_units<'py, T: Unit>(
    py: Python<'py>,
    units: &[T],
    max: u32,
) -> PyResult<Bound<'py, PyAny>> {
    if let [c] = units {
        let c: u32 = (*c).into();
        if c < 0x100 {
            // CPython's cached one-character strings, as `csv` returns.
            // SAFETY: we hold the GIL; a new reference to a cached string
            // (or NULL with an exception set, checked).
            return unsafe {
                Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_FromOrdinal(c as i32))
            };
        }
    }
    fresh_str(py, units.len(), max, |d: &mut [T]| d.copy_from_slice(units))
}

/// A new `str` of `len` code points whose largest is at most `max`, its
/// code units (of `T`, the kind `max` names) written by `fill` before
/// anyone else can see it. The caller makes sure, as for
/// [`str_from_units`], that the result is canonical.
fn fresh_str<'py, T: Unit>(
    py: Python<'py>,
    len: usize,
    max: u32,
    fill: impl FnOnce(&mut [T]),
) -> PyResult<Bound<'py, PyAny>> {
    let size = match max {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        _ => 4,
    };
    assert_eq!(std::mem::size_of::<T>(), size, "code unit size for max {max:#x}");
    // SAFETY: we hold the GIL; PyUnicode_New returns a new reference (or
    // NULL with an exception set), checked by from_owned_ptr_or_err.
    let s = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(len as ffi::Py_ssize_t, max))?
    };
    // SAFETY: a compact string made for `len` characters of at most `max`
    // has exactly `len` writable code units of `size` bytes (checked
    // against `T` above) at PyUnicode_DATA, aligned for them; nobody else
    // can see it yet, and `fill` only writes within the slice.
    let data =
        unsafe { std::slice::from_raw_parts_mut(ffi::PyUnicode_DATA(s.as_ptr()).cast::<T>(), len) };
    fill(data);
    Ok(s)
}

/// Creates a `str` from UTF-8 bytes: ASCII is copied straight into a new
/// compact string, valid UTF-8 is decoded here at its final kind, and
/// invalid UTF-8 goes through CPython's decoder with the error handler
/// (whose behaviour is the reference), located when it raises.
fn make_str<'py>(
    py: Python<'py>,
    b: &[u8],
    errors: &std::ffi::CStr,
    strict: bool,
    pos: &dyn Fn() -> String,
    scratch: &mut Vec<u16>,
) -> PyResult<Bound<'py, PyAny>> {
    if let [c] = b {
        if c.is_ascii() {
            // CPython's cached one-character strings, as `csv` returns.
            // SAFETY: we hold the GIL; a new reference to a cached string
            // (or NULL with an exception set, checked).
            return unsafe {
                Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_FromOrdinal(i32::from(*c)))
            };
        }
    }
    if b.is_ascii() {
        let len = b.len() as ffi::Py_ssize_t;
        // SAFETY: we hold the GIL; PyUnicode_New returns a new reference
        // (or NULL with an exception set), checked by from_owned_ptr_or_err.
        let s = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(len, 127))? };
        // SAFETY: a compact ASCII string of `len` characters has exactly
        // `len` writable one-byte code units at PyUnicode_DATA (plus the
        // terminating NUL it already has); nobody else can see it yet.
        unsafe {
            let dst = ffi::PyUnicode_DATA(s.as_ptr()).cast::<u8>();
            std::ptr::copy_nonoverlapping(b.as_ptr(), dst, b.len());
        }
        return Ok(s);
    }
    // One decoding pass into `scratch`, then a copy (narrowed when every
    // code point fits one byte).
    scratch.clear();
    match decode_bmp(b, scratch) {
        Some((1, c)) if c < 0x100 => return str_from_units(py, &[c as u8], 0xFF),
        Some((n, or)) if or < 0x100 => {
            return fresh_str(py, n, 0xFF, |d: &mut [u8]| {
                for (o, &u) in d.iter_mut().zip(scratch.iter()) {
                    *o = u as u8;
                }
            });
        }
        Some(_) => return str_from_units(py, scratch, 0xFFFF),
        None => {}
    }
    if let Some(r) = str_from_utf8(py, b) {
        return r;
    }
    // SAFETY: we hold the GIL; `b` and `errors` are valid for the call and
    // the result is a new reference or NULL with an exception set.
    let r = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyUnicode_DecodeUTF8(
                b.as_ptr().cast(),
                b.len() as ffi::Py_ssize_t,
                errors.as_ptr(),
            ),
        )
    };
    match r {
        Err(e) if strict && e.is_instance_of::<pyo3::exceptions::PyUnicodeDecodeError>(py) => {
            Err(locate_decode_error(py, e, pos()))
        }
        other => other,
    }
}

/// Copies the ASCII bytes at `b[i..]` to `out[j..]` eight bytes at a time
/// while eight fit (a word with other bytes ends it after its ASCII
/// prefix); the new `(i, j)`.
#[inline(always)]
fn copy_ascii_words<T>(
    b: &[u8],
    mut i: usize,
    out: &mut [T],
    mut j: usize,
    unit: impl Fn(u32) -> T,
) -> (usize, usize) {
    while i + 8 <= b.len() && j + 8 <= out.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        // All eight are written; only the ASCII ones before the first
        // other byte are kept (the rest is written over later).
        for (o, &c) in out[j..j + 8].iter_mut().zip(&b[i..i + 8]) {
            *o = unit(u32::from(c));
        }
        let high = w & 0x8080_8080_8080_8080;
        if high != 0 {
            let n = (high.trailing_zeros() / 8) as usize;
            return (i + n, j + n);
        }
        i += 8;
        j += 8;
    }
    (i, j)
}

/// Decodes strict UTF-8 (no overlong forms, surrogates or code points past
/// U+10FFFF) into `out`, one unit per code point. False when `b` is not
/// strict UTF-8 or does not hold exactly `out.len()` code points.
fn decode_utf8_into<T>(b: &[u8], out: &mut [T], unit: impl Fn(u32) -> T) -> bool {
    let cont = |k: usize| -> Option<u32> {
        let c = *b.get(k)?;
        (c & 0xC0 == 0x80).then_some(u32::from(c & 0x3F))
    };
    let (mut i, mut j) = (0, 0);
    while i < b.len() {
        (i, j) = copy_ascii_words(b, i, out, j, &unit);
        if i >= b.len() {
            break;
        }
        let c0 = u32::from(b[i]);
        let (cp, len) = match c0 {
            0x00..=0x7F => (c0, 1),
            0xC2..=0xDF => match cont(i + 1) {
                Some(c1) => ((c0 & 0x1F) << 6 | c1, 2),
                None => return false,
            },
            0xE0..=0xEF => match (cont(i + 1), cont(i + 2)) {
                (Some(c1), Some(c2)) => {
                    let cp = (c0 & 0x0F) << 12 | c1 << 6 | c2;
                    if cp < 0x800 || (0xD800..=0xDFFF).contains(&cp) {
                        return false;
                    }
                    (cp, 3)
                }
                _ => return false,
            },
            0xF0..=0xF4 => match (cont(i + 1), cont(i + 2), cont(i + 3)) {
                (Some(c1), Some(c2), Some(c3)) => {
                    let cp = (c0 & 0x07) << 18 | c1 << 12 | c2 << 6 | c3;
                    if !(0x1_0000..=0x10_FFFF).contains(&cp) {
                        return false;
                    }
                    (cp, 4)
                }
                _ => return false,
            },
            _ => return false,
        };
        let Some(slot) = out.get_mut(j) else {
            return false;
        };
        *slot = unit(cp);
        i += len;
        j += 1;
    }
    j == out.len()
}

/// Decodes `b` and appends its code points to `v` when `b` is strict UTF-8
/// without 4-byte sequences (every code point below U+10000), in one pass.
/// Returns how many were appended and the bitwise OR of them (at least
/// 0x100 exactly when one of them is), or `None` (and `v` as it was).
fn decode_bmp(b: &[u8], v: &mut Vec<u16>) -> Option<(usize, u32)> {
    let at = v.len();
    // At most one code point per byte.
    v.resize(at + b.len(), 0);
    let r = decode_bmp_into(b, &mut v[at..]);
    v.truncate(at + r.map_or(0, |(n, _)| n));
    r
}

/// [`decode_bmp`] into `out`, which has room for `b.len()` code points.
fn decode_bmp_into(b: &[u8], out: &mut [u16]) -> Option<(usize, u32)> {
    let (mut i, mut j, mut or) = (0usize, 0usize, 0u32);
    let ok = loop {
        (i, j) = copy_ascii_words(b, i, out, j, |c| c as u16);
        let Some(&c0) = b.get(i) else {
            break true;
        };
        let cont =
            |k: usize| b.get(i + k).filter(|&&c| c & 0xC0 == 0x80).map(|&c| u32::from(c & 0x3F));
        let cp = match c0 {
            0x00..=0x7F => {
                out[j] = u16::from(c0);
                i += 1;
                j += 1;
                continue;
            }
            0xC2..=0xDF => match cont(1) {
                Some(c1) => {
                    i += 2;
                    u32::from(c0 & 0x1F) << 6 | c1
                }
                None => break false,
            },
            0xE0..=0xEF => match (cont(1), cont(2)) {
                (Some(c1), Some(c2)) => {
                    let cp = u32::from(c0 & 0x0F) << 12 | c1 << 6 | c2;
                    if cp < 0x800 || (0xD800..=0xDFFF).contains(&cp) {
                        break false;
                    }
                    i += 3;
                    cp
                }
                _ => break false,
            },
            _ => break false,
        };
        or |= cp;
        out[j] = cp as u16;
        j += 1;
    };
    ok.then_some((j, or))
}

/// The number of characters of `b` if it is UTF-8 (its bytes that are not
/// continuation bytes) and the largest code point it can hold as told by
/// its largest byte: below 0xC4 every character is below U+0100, below
/// 0xF0 below U+10000. If `b` is strict UTF-8 and not ASCII, that bound
/// names the narrowest kind of `str` that holds it.
fn utf8_shape(b: &[u8]) -> (usize, u32) {
    let n = b.iter().filter(|&&c| (c as i8) >= -0x40).count();
    let max: u32 = match b.iter().copied().max().unwrap_or(0) {
        0x00..=0x7F => 0x7F,
        0x80..=0xC3 => 0xFF,
        0xC4..=0xEF => 0xFFFF,
        _ => 0x10_FFFF,
    };
    (n, max)
}

/// A `str` from bytes that are not all ASCII, when they are strict UTF-8:
/// allocated once at its final length and kind (CPython's decoder
/// over-allocates mixed text and then shrinks it) and decoded in one pass.
/// The length is the number of non-continuation bytes; the largest byte
/// tells the kind (below 0xC4 every character is below U+0100, below 0xF0
/// below U+10000). `None` when the bytes are not strict UTF-8.
fn str_from_utf8<'py>(py: Python<'py>, b: &[u8]) -> Option<PyResult<Bound<'py, PyAny>>> {
    let (n, max) = utf8_shape(b);
    // SAFETY: we hold the GIL; PyUnicode_New returns a new reference (or
    // NULL with an exception set) to a string of `n` code points whose kind
    // suits `max`.
    let o = match unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(n as ffi::Py_ssize_t, max))
    } {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    // SAFETY: the string is fresh and unshared, and its data holds exactly
    // `n` code units of 1, 2 or 4 bytes as chosen by `max`; the slices
    // cover exactly those units.
    let ok = unsafe {
        let data = ffi::PyUnicode_DATA(o.as_ptr());
        if max <= 0xFF {
            let d = std::slice::from_raw_parts_mut(data.cast::<u8>(), n);
            decode_utf8_into(b, d, |c| c as u8)
        } else if max <= 0xFFFF {
            let d = std::slice::from_raw_parts_mut(data.cast::<u16>(), n);
            decode_utf8_into(b, d, |c| c as u16)
        } else {
            let d = std::slice::from_raw_parts_mut(data.cast::<u32>(), n);
            decode_utf8_into(b, d, |c| c)
        }
    };
    // Valid UTF-8 whose largest byte is below 0xC4 (or 0xF0) has no
    // character at or past U+0100 (or U+10000): the kind is canonical.
    ok.then_some(Ok(o))
}

/// Re-raises a `UnicodeDecodeError` with the field's position in its
/// reason; `start`/`end` stay relative to the field's bytes (`object`).
fn locate_decode_error(py: Python<'_>, e: PyErr, pos: String) -> PyErr {
    let v = e.value(py);
    let attrs = (|| -> PyResult<PyErr> {
        let reason: String = v.getattr("reason")?.extract()?;
        let args = (
            v.getattr("encoding")?,
            v.getattr("object")?,
            v.getattr("start")?,
            v.getattr("end")?,
            format!("{reason} ({pos})"),
        );
        Ok(PyErr::from_value(py.get_type::<pyo3::exceptions::PyUnicodeDecodeError>().call1(args)?))
    })();
    attrs.unwrap_or(e)
}

/// Decoder for the line-fed reader: the bytes came from a `str`, so they
/// are UTF-8, possibly with surrogates encoded by `surrogatepass`.
fn line_str<'py>(py: Python<'py>, b: &[u8], scratch: &mut Vec<u16>) -> PyResult<Bound<'py, PyAny>> {
    make_str(py, b, c"surrogatepass", false, &String::new, scratch)
}

/// The float CPython's QUOTE_NONNUMERIC makes of a field.
fn to_float<'py>(s: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: we hold the GIL; PyNumber_Float returns a new reference or
    // NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(s.py(), ffi::PyNumber_Float(s.as_ptr())) }
}

/// A list of `n` items made by `item(i)`, filled in place. If `item`
/// fails, the partly filled list is dropped (its empty slots are NULL,
/// which lists allow).
fn build_list<'py>(
    py: Python<'py>,
    n: usize,
    mut item: impl FnMut(usize) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: we hold the GIL; a new list of `n` NULL slots or NULL with an
    // exception set.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(n as ffi::Py_ssize_t))? };
    for i in 0..n {
        let it = item(i)?;
        // SAFETY: `list` is a fresh list of length `n`, `i < n` and slot
        // `i` is still NULL; PyList_SET_ITEM steals the reference we give
        // up with into_ptr.
        unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, it.into_ptr()) };
    }
    // SAFETY: PyList_New returned a list.
    Ok(unsafe { list.downcast_into_unchecked() })
}

/// A list of exactly these items.
fn list_from<'py>(
    py: Python<'py>,
    items: impl IntoIterator<Item = Bound<'py, PyAny>, IntoIter: ExactSizeIterator>,
) -> PyResult<Bound<'py, PyList>> {
    let mut it = items.into_iter();
    build_list(py, it.len(), |_| Ok(it.next().expect("n items")))
}

/// Pauses the cyclic garbage collector while a bulk read creates millions
/// of lists (which cannot form cycles: they hold only `str` and `float`),
/// so that it does not rescan the growing result again and again. The
/// previous state is restored on drop.
struct GcPause {
    was_enabled: bool,
}

impl GcPause {
    fn new(_py: Python<'_>) -> GcPause {
        // SAFETY: the GIL is held (witnessed by `_py`).
        let was_enabled = unsafe { ffi::PyGC_Disable() } != 0;
        GcPause { was_enabled }
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: a GcPause lives inside one GIL-holding call and is
            // dropped there, so the GIL is held.
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

// ---------------------------------------------------------------------------
// Errors

/// A `csv.Error` with the core error's full text (path, line, record, byte).
fn csv_error(e: &CoreError) -> PyErr {
    exc::Error::new_err(e.to_string())
}

/// Maps a core error to a Python exception. A Python exception raised by a
/// wrapped stream's `read` is re-raised as is.
fn map_error(e: CoreError, stash: &PyErrStash) -> PyErr {
    // As in `text_error`: a stashed exception belongs to an I/O error.
    if e.is_data() {
        return csv_error(&e);
    }
    if let Some(err) = stash.take() {
        return err;
    }
    let path = e.path().map(|p| p.display().to_string());
    match e.into_kind() {
        ErrorKind::Io(io) => io_error(io, path),
        kind => PyValueError::new_err(kind.to_string()),
    }
}

/// Maps a core error for a reader over a text stream, which stands in for
/// `csv.reader`: data errors carry `csv`'s message alone (the position in
/// the text's UTF-8 would mean nothing to the caller).
fn text_error(py: Python<'_>, e: CoreError, stash: &PyErrStash) -> PyErr {
    // A data error first: an exception in the stash comes from reading
    // further on (a read-ahead thread's feeder may have met it already)
    // and is raised when the reader gets there, as its I/O error.
    if e.is_data() {
        return exc::Error::new_err(python_message(py, e.kind()));
    }
    if let Some(err) = stash.take() {
        return err;
    }
    map_error(e, stash)
}

fn io_error(io: io::Error, path: Option<String>) -> PyErr {
    match io.raw_os_error() {
        // OSError(errno, strerror, filename) picks the subclass
        // (FileNotFoundError, PermissionError, ...) from errno.
        Some(errno) => {
            let msg = io::Error::from_raw_os_error(errno).to_string();
            let msg = msg.split(" (os error").next().unwrap_or(&msg).to_owned();
            match path {
                Some(p) => PyOSError::new_err((errno, msg, p)),
                None => PyOSError::new_err((errno, msg)),
            }
        }
        None => PyErr::from(io),
    }
}

/// Where a wrapped Python stream leaves the exception its `read` raised,
/// for the reader to re-raise instead of a generic I/O error.
#[derive(Clone, Default)]
struct PyErrStash(Arc<Mutex<Option<PyErr>>>);

impl PyErrStash {
    fn put(&self, e: PyErr) {
        if let Ok(mut g) = self.0.lock() {
            *g = Some(e);
        }
    }
    fn take(&self) -> Option<PyErr> {
        self.0.lock().ok().and_then(|mut g| g.take())
    }
}

// ---------------------------------------------------------------------------
// Sources

/// Bytes a stream's reader was given but could not hand out yet (they did
/// not fit the caller's buffer): `buf[off..]`.
#[derive(Default)]
struct Spill {
    buf: Vec<u8>,
    off: usize,
}

impl Spill {
    /// Bytes left.
    fn len(&self) -> usize {
        self.buf.len() - self.off
    }

    /// Copies what is left into `out`; `None` when nothing is.
    fn drain_into(&mut self, out: &mut [u8]) -> Option<usize> {
        if self.len() == 0 {
            return None;
        }
        let n = self.len().min(out.len());
        out[..n].copy_from_slice(&self.buf[self.off..self.off + n]);
        self.off += n;
        Some(n)
    }

    /// Copies as much of `b` into `out` as fits and keeps the rest (none
    /// may be left from before).
    fn hand_out(&mut self, b: &[u8], out: &mut [u8]) -> usize {
        let n = b.len().min(out.len());
        out[..n].copy_from_slice(&b[..n]);
        self.buf.clear();
        self.buf.extend_from_slice(&b[n..]);
        self.off = 0;
        n
    }
}

/// A binary Python stream read through its `read(n)` method.
///
/// What `read` returns is taken whole: bytes beyond the `n` asked for (a
/// stream that does not keep to the contract) wait in `spill` for the
/// next call, and any object with the buffer protocol (`bytearray`,
/// `memoryview`) is read like `bytes`.
struct PyStream {
    /// The stream's `read1` when it has one (buffered streams: returns what
    /// is available after at most one raw read, so rows from a pipe are not
    /// held back until a whole buffer is full), else its `read`.
    read: Py<PyAny>,
    /// The stream's `read` while `read` is its `read1`: taken instead if
    /// `read1` raises `io.UnsupportedOperation` (an `io.BufferedIOBase`
    /// subclass that only implements `read`).
    plain_read: Option<Py<PyAny>>,
    /// Bytes returned but not handed out yet.
    spill: Spill,
    stash: PyErrStash,
}

impl PyStream {
    fn new(py: Python<'_>, obj: &Bound<'_, PyAny>, stash: &PyErrStash) -> PyResult<PyStream> {
        let read = obj.getattr(intern!(py, "read"))?;
        let (read, plain_read) = match obj.getattr(intern!(py, "read1")) {
            Ok(read1) => (read1, Some(read.unbind())),
            Err(_) => (read, None),
        };
        Ok(PyStream {
            read: read.unbind(),
            plain_read,
            spill: Spill::default(),
            stash: stash.clone(),
        })
    }

    /// Calls `read(n)`; `None` for a non-blocking stream with no data yet.
    fn call_read<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let r = match self.read.bind(py).call1((n,)) {
            Err(e) if self.plain_read.is_some() && is_unsupported(py, &e) => {
                // `read1` is not there after all: `read` from now on.
                self.read = self.plain_read.take().unwrap_or_else(|| self.read.clone_ref(py));
                self.read.bind(py).call1((n,))?
            }
            r => r?,
        };
        Ok((!r.is_none()).then_some(r))
    }

    /// The next bytes of the stream into `buf`; `None` when a non-blocking
    /// stream has none yet.
    fn read_some(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<Option<usize>> {
        if let Some(n) = self.spill.drain_into(buf) {
            return Ok(Some(n));
        }
        let Some(r) = self.call_read(py, buf.len())? else {
            return Ok(None);
        };
        if let Ok(b) = r.downcast::<PyBytes>() {
            return Ok(Some(self.spill.hand_out(b.as_bytes(), buf)));
        }
        match pyo3::buffer::PyBuffer::<u8>::get(&r) {
            Ok(pb) => Ok(Some(self.spill.hand_out(&pb.to_vec(py)?, buf))),
            Err(_) => {
                let name = r.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                Err(PyTypeError::new_err(format!("read() should return bytes, not {name}")))
            }
        }
    }
}

/// Whether `e` is an `io.UnsupportedOperation`.
fn is_unsupported(py: Python<'_>, e: &PyErr) -> bool {
    py.import("io")
        .and_then(|io| io.getattr("UnsupportedOperation"))
        .is_ok_and(|t| e.matches(py, t).unwrap_or(false))
}

impl Read for PyStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::with_gil(|py| match self.read_some(py, buf) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err(io::Error::new(io::ErrorKind::WouldBlock, "no data")),
            Err(e) => {
                self.stash.put(e);
                Err(io::Error::other("exception in read()"))
            }
        })
    }
}

/// A text stream read through its `read(n)` method, as UTF-8.
///
/// The Python layer uses it only for an `io.TextIOWrapper` or `io.StringIO`
/// in a universal-newline mode (`newline=None` or `''`). There the text that
/// `read` returns is exactly the concatenation of the lines that iterating
/// the stream gives (translated to `\n` with `None`, as they are with
/// `''`), and those lines end at the text's LF, CR and CRLF: the line ends
/// the core finds in stream mode. So the core reader over this text gives
/// `csv.reader`'s rows and `line_num`.
///
/// A `str` with lone surrogates (from `errors='surrogateescape'`, say) is
/// encoded with `surrogatepass`, and fields are decoded back the same way.
///
/// A UTF-8 `io.TextIOWrapper` may instead start in raw mode ([`RawText`]):
/// its bytes are read straight from its binary buffer, which spares
/// decoding the text and encoding it again, for as long as the bytes are
/// exactly the text `read` would return.
struct PyTextStream {
    /// The stream's `read`.
    read: Py<PyAny>,
    /// Raw mode, until it hands over to `read`.
    raw: Option<RawText>,
    /// Whether raw mode is still on (for `Reader._source`).
    raw_on: Arc<AtomicBool>,
    /// UTF-8 not handed out yet.
    spill: Spill,
    stash: PyErrStash,
    /// Where in the stream each part of the text came from.
    origins: Arc<TextOrigins>,
}

/// Raw mode of a [`PyTextStream`]: the bytes of a UTF-8 `io.TextIOWrapper`
/// read from its buffer, from a position where the wrapper has nothing
/// decoded ahead (`tell()` was a plain byte offset).
///
/// Valid UTF-8 decodes to exactly the characters those bytes encode, and
/// with `newline=''` the wrapper returns them unchanged. With
/// `newline=None` it would turn CR and CRLF into LF, and the Python layer
/// cannot tell the two modes apart unless it has seen a CR come out of
/// `read` (then the mode is `''`, `keeps_cr`). So raw mode hands over to
/// the wrapper, by seeking it to that byte, at the first byte that is not
/// valid UTF-8 (the wrapper decodes from there with its own error handler,
/// or raises its own `UnicodeDecodeError`) and, unless `keeps_cr`, at the
/// first CR. Both are character boundaries where the wrapper's decoder
/// starts afresh, exactly as it does after `seek`.
struct RawText {
    /// The `io.TextIOWrapper`.
    stream: Py<PyAny>,
    /// Its buffer's `read1`.
    read1: Py<PyAny>,
    /// Offset in the file of the next byte `read1` returns.
    pos: u64,
    /// `read` is known to return CRs as they are (`newline=''`).
    keeps_cr: bool,
    /// The wrapper is known to be at `pos`: checked by the first read, and
    /// again by the first after the end (the caller may have moved it
    /// since, to write more, say, or to read again from elsewhere).
    checked: bool,
    /// An incomplete UTF-8 sequence at the end of the last read.
    tail: Vec<u8>,
}

/// Where the text of a [`PyTextStream`] came from in its stream, so that a
/// reader that goes away before the end puts the stream back where
/// `csv.reader` would have left it (see `PyReader`'s `Drop`).
///
/// `csv.reader` takes one line at a time from the stream, so the stream's
/// own position is always right after the last line it consumed: a second
/// reader, `f.read()` or `for line in f` go on at the next row. This reader
/// reads ahead in chunks instead; the byte offsets of the text (the UTF-8
/// fed to the core reader) are mapped back to stream positions here. Byte
/// `t` of the text lies in the last [`Span`] that starts at or before it.
struct TextOrigins {
    /// The stream.
    stream: Py<PyAny>,
    /// Locked by the calling thread only: when it reads a chunk, and when
    /// the reader goes away.
    state: Mutex<Origins>,
    /// The first byte of the text a restore may still need (where the next
    /// record starts): the spans wholly before it are dropped.
    needed: AtomicU64,
}

/// The changing part of [`TextOrigins`].
struct Origins {
    /// Bytes of text read from the stream so far (handed out or not).
    read: u64,
    /// The spans, from the one holding byte `needed` on.
    spans: VecDeque<Span>,
    /// The stream's `tell()` after the last read: where it still is unless
    /// the caller moved it. `None` when not known.
    here: Option<Py<PyAny>>,
    /// The last read returned nothing: the caller may move the stream
    /// before the next one (to read again from elsewhere, as `csv` would),
    /// so the next chunk's position is asked for again.
    ended: bool,
    /// `tell()` failed: positions are unknown from then on.
    lost: bool,
}

/// A stretch of the text, from byte `at` up to the next span's start.
struct Span {
    /// Offset in the text of the span's first byte.
    at: u64,
    /// Where its bytes came from.
    from: SpanFrom,
}

/// Where a [`Span`]'s text came from.
enum SpanFrom {
    /// Raw mode ([`RawText`]): byte `at + i` of the text is byte `file + i`
    /// of the file, a position where the wrapper's `seek` starts its
    /// decoder afresh.
    Raw(u64),
    /// A chunk that `read` returned with the stream at `cookie` (its
    /// `tell()`): `text` is the `str`, or for one with lone surrogates its
    /// UTF-8 `bytes` (`surrogatepass`, one sequence per surrogate), as
    /// handed out.
    Chunk { cookie: Py<PyAny>, text: Py<PyAny> },
    /// A chunk read from a position that is not known.
    Unknown,
}

/// Where the stream is to be left when a reader over it goes away: where
/// `csv.reader`, which consumes whole lines, would have left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resume {
    /// The next record starts at byte `at` of the text. With `lf`, the last
    /// line ended at a CR that was the last byte the core looked at: an LF
    /// right after it still belongs to that line (`"\r\n"` is one line).
    At { at: u64, lf: bool },
    /// An error was raised at byte `at` of the text: `csv` consumed the
    /// line holding it, its line end included.
    LineOf(u64),
}

/// The number of characters of Python `str` in `b`, UTF-8 in which a lone
/// surrogate is one (`surrogatepass`) sequence: its bytes that do not
/// continue a sequence.
fn char_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c & 0xC0 != 0x80).count()
}

impl TextOrigins {
    /// The origins of a stream read from its position now, which is byte
    /// `raw_offset` of the file in raw mode.
    fn new(py: Python<'_>, stream: &Bound<'_, PyAny>, raw_offset: Option<u64>) -> TextOrigins {
        let mut spans = VecDeque::new();
        let mut here = None;
        if let Some(file) = raw_offset {
            spans.push_back(Span { at: 0, from: SpanFrom::Raw(file) });
            here = file.into_pyobject(py).ok().map(|p| p.into_any().unbind());
        }
        TextOrigins {
            stream: stream.clone().unbind(),
            state: Mutex::new(Origins { read: 0, spans, here, ended: false, lost: false }),
            needed: AtomicU64::new(0),
        }
    }

    /// The changing part, locked even when poisoned: nothing done while
    /// it is locked can panic halfway but an allocation failure, which
    /// aborts.
    fn lock(&self) -> std::sync::MutexGuard<'_, Origins> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that the text goes on with `n` more bytes.
    fn got(&self, n: usize) {
        self.lock().read += n as u64;
    }

    /// Raw mode read up to byte `pos` of the file (or moved the wrapper
    /// there): the wrapper's `tell()` is `pos`.
    fn raw_at(&self, py: Python<'_>, pos: u64) {
        let mut st = self.lock();
        st.here = pos.into_pyobject(py).ok().map(|p| p.into_any().unbind());
        st.ended = false;
    }

    /// Raw mode is over (or never began): positions are asked for afresh.
    fn raw_off(&self) {
        self.lock().here = None;
    }

    /// Where the stream is before a chunk is read: `None` if not known.
    fn chunk_start(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let mut st = self.lock();
        if st.lost {
            return None;
        }
        if !st.ended {
            if let Some(here) = &st.here {
                return Some(here.clone_ref(py));
            }
        }
        match self.stream.bind(py).call_method0(intern!(py, "tell")) {
            Ok(t) => Some(t.unbind()),
            Err(_) => {
                st.lost = true;
                st.here = None;
                None
            }
        }
    }

    /// Notes the chunk `text` (`None` when empty: the end of the stream)
    /// read from `cookie`, which starts at the current end of the text
    /// (before [`TextOrigins::got`] counts it), and where the stream is now.
    fn chunk_read(&self, py: Python<'_>, cookie: Option<Py<PyAny>>, text: Option<Py<PyAny>>) {
        let mut st = self.lock();
        let ended = text.is_none();
        if let Some(text) = text {
            let at = st.read;
            let from = match cookie {
                Some(cookie) => SpanFrom::Chunk { cookie, text },
                None => SpanFrom::Unknown,
            };
            st.spans.push_back(Span { at, from });
            let needed = self.needed.load(Ordering::Relaxed);
            while st.spans.len() >= 2 && st.spans[1].at <= needed {
                st.spans.pop_front();
            }
        }
        st.ended = ended;
        st.here = None;
        if !st.lost {
            match self.stream.bind(py).call_method0(intern!(py, "tell")) {
                Ok(t) => st.here = Some(t.unbind()),
                Err(_) => st.lost = true,
            }
        }
    }

    /// Notes that a restore needs nothing before byte `at` of the text.
    fn need_from(&self, at: u64) {
        self.needed.store(at, Ordering::Relaxed);
    }

    /// Puts the stream where `csv.reader` would have left it (see
    /// [`Resume`]). Nothing is done when the stream is closed, when the
    /// caller moved it since the last read (`tell()` is not where that
    /// read left it), or when the position is not known; errors are the
    /// caller's to swallow.
    fn restore(&self, py: Python<'_>, resume: Resume) -> PyResult<()> {
        let stream = self.stream.bind(py);
        if stream.getattr(intern!(py, "closed"))?.is_truthy()? {
            return Ok(());
        }
        let st = self.lock();
        let Some(here) = &st.here else {
            return Ok(());
        };
        if st.lost {
            return Ok(());
        }
        let (at, lf, line) = match resume {
            Resume::At { at, lf } => (at, lf, false),
            Resume::LineOf(at) => (at, false, true),
        };
        if !stream.call_method0(intern!(py, "tell"))?.eq(here)? {
            return Ok(());
        }
        // Seek even when every byte of the text was consumed (`at == read`):
        // raw mode may have read the first bytes of a character beyond it.
        let Some(span) = st.spans.iter().rev().find(|s| s.at <= at) else {
            return Ok(());
        };
        let off = at - span.at;
        match &span.from {
            SpanFrom::Raw(file) => {
                stream.call_method1(intern!(py, "seek"), (file + off,))?;
            }
            SpanFrom::Chunk { cookie, text } => {
                let text = text.bind(py);
                let k = match text.downcast::<PyString>() {
                    Ok(s) => s.to_str()?.as_bytes().get(..off as usize).map(char_count),
                    Err(_) => {
                        text.downcast::<PyBytes>()?.as_bytes().get(..off as usize).map(char_count)
                    }
                };
                let Some(k) = k else {
                    return Ok(());
                };
                stream.call_method1(intern!(py, "seek"), (cookie.bind(py),))?;
                if k > 0 {
                    stream.call_method1(intern!(py, "read"), (k,))?;
                }
            }
            SpanFrom::Unknown => return Ok(()),
        }
        if line {
            // The rest of the line, as `csv` took it: the stream's
            // universal newlines end it at LF, CR or CRLF.
            stream.call_method0(intern!(py, "readline"))?;
        } else if lf {
            let p = stream.call_method0(intern!(py, "tell"))?;
            let c = stream.call_method1(intern!(py, "read"), (1,))?;
            if !c.eq("\n")? {
                stream.call_method1(intern!(py, "seek"), (p,))?;
            }
        }
        Ok(())
    }
}

impl PyTextStream {
    /// Copies as much of `text` into `buf` as fits and keeps the rest.
    fn hand_out(&mut self, text: &[u8], buf: &mut [u8]) -> usize {
        self.origins.got(text.len());
        self.spill.hand_out(text, buf)
    }

    /// Reads the next chunk of text into `buf` (and `spill`).
    /// Where the stream was before the chunk, and the chunk, are noted in
    /// `origins`.
    fn read_chunk(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<usize> {
        let cookie = self.origins.chunk_start(py);
        let r = self.read.bind(py).call1((TEXT_CHUNK,))?;
        let s = r.downcast::<PyString>().map_err(|_| {
            let name = r.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            PyTypeError::new_err(format!(
                "read() should return str, not {name} (the file should be opened in text mode)"
            ))
        })?;
        let encoded;
        let (text, bytes) = match s.to_str() {
            Ok(t) => (s.as_any(), t.as_bytes()),
            Err(_) => {
                // Lone surrogates: carry them through, as `csv` does.
                encoded = s.call_method1(intern!(py, "encode"), ("utf-8", "surrogatepass"))?;
                (&encoded, encoded.downcast::<PyBytes>()?.as_bytes())
            }
        };
        let kept = (!bytes.is_empty()).then(|| text.clone().unbind());
        self.origins.chunk_read(py, cookie, kept);
        Ok(self.hand_out(bytes, buf))
    }

    /// Reads the next bytes in raw mode, or hands over to `read_chunk`.
    fn read_raw(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<usize> {
        loop {
            let Some(raw) = &mut self.raw else {
                return self.read_chunk(py, buf);
            };
            if !raw.checked {
                // The stream may have been read or moved since the reader
                // was made (or reached the end): then it goes on from where
                // the wrapper is, as `read`.
                raw.checked = true;
                let here = raw.stream.bind(py).call_method0(intern!(py, "tell"));
                if here.and_then(|t| t.extract::<u64>()).ok() != Some(raw.pos) {
                    self.raw = None;
                    self.raw_on.store(false, Ordering::Relaxed);
                    self.origins.raw_off();
                    continue;
                }
            }
            let chunk = raw.read1.bind(py).call1((RAW_CHUNK,))?;
            let chunk = chunk
                .downcast::<PyBytes>()
                .map_err(|_| PyTypeError::new_err("the text file's buffer should return bytes"))?;
            let b = chunk.as_bytes();
            // `data` is the incomplete sequence left last time, then `b`;
            // `start` is the offset of its first byte.
            let start = raw.pos - raw.tail.len() as u64;
            raw.pos += b.len() as u64;
            self.origins.raw_at(py, raw.pos);
            let joined;
            let data: &[u8] = if raw.tail.is_empty() {
                b
            } else {
                raw.tail.extend_from_slice(b);
                joined = std::mem::take(&mut raw.tail);
                &joined
            };
            if b.is_empty() {
                // End of file. An incomplete sequence left over is the
                // wrapper's to decode (or to raise on).
                if data.is_empty() {
                    raw.checked = false;
                    return Ok(0);
                }
                return self.hand_over(py, start, &[], buf);
            }
            let (valid, bad) = match simdutf8::compat::from_utf8(data) {
                Ok(_) => (data.len(), false),
                Err(e) => (e.valid_up_to(), e.error_len().is_some()),
            };
            let cr = if raw.keeps_cr { None } else { memchr::memchr(b'\r', &data[..valid]) };
            if let Some(k) = cr {
                return self.hand_over(py, start + k as u64, &data[..k], buf);
            }
            if bad {
                return self.hand_over(py, start + valid as u64, &data[..valid], buf);
            }
            raw.tail.clear();
            raw.tail.extend_from_slice(&data[valid..]);
            if valid > 0 {
                return Ok(self.hand_out(&data[..valid], buf));
            }
            // Only the first bytes of a character so far: read on.
        }
    }

    /// Leaves raw mode at byte `at` of the file: the wrapper is moved there
    /// and read as text from then on, after `before` (the bytes up to `at`
    /// not handed out yet).
    fn hand_over(
        &mut self,
        py: Python<'_>,
        at: u64,
        before: &[u8],
        buf: &mut [u8],
    ) -> PyResult<usize> {
        if let Some(raw) = self.raw.take() {
            self.raw_on.store(false, Ordering::Relaxed);
            self.origins.raw_off();
            raw.stream.bind(py).call_method1(intern!(py, "seek"), (at,))?;
            self.origins.raw_at(py, at);
        }
        if before.is_empty() {
            self.read_chunk(py, buf)
        } else {
            Ok(self.hand_out(before, buf))
        }
    }
}

impl PyTextStream {
    /// Bytes of the text handed out so far.
    fn handed_out(&self) -> u64 {
        self.origins.lock().read - self.spill.len() as u64
    }

    /// The next UTF-8 bytes of the text, into `buf`; 0 at the end.
    fn read_some(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<usize> {
        if let Some(n) = self.spill.drain_into(buf) {
            return Ok(n);
        }
        if self.raw.is_some() {
            self.read_raw(py, buf)
        } else {
            self.read_chunk(py, buf)
        }
    }
}

impl Read for PyTextStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::with_gil(|py| {
            self.read_some(py, buf).map_err(|e| {
                self.stash.put(e);
                io::Error::other("exception in read()")
            })
        })
    }
}

/// Bytes of a text stream on their way to a read-ahead thread (see
/// [`Feeder`]).
enum Feed {
    Chunk(Arc<Vec<u8>>),
    /// The stream ended.
    End,
    /// The stream's `read` raised; the exception is in the reader's stash.
    Failed,
}

/// The read-ahead thread's side of a text stream: a `Read` of the chunks
/// the calling thread reads from the stream (which takes the GIL) and
/// sends. When none is waiting it asks for more ([`Msg::Need`]) and waits.
struct FedText {
    rx: mpsc::Receiver<Feed>,
    need: mpsc::Sender<Msg>,
    /// Chunks taken from `rx` so far.
    taken: Arc<AtomicUsize>,
    cur: Arc<Vec<u8>>,
    off: usize,
    end: bool,
}

impl Read for FedText {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.off < self.cur.len() {
                let n = (self.cur.len() - self.off).min(buf.len());
                buf[..n].copy_from_slice(&self.cur[self.off..self.off + n]);
                self.off += n;
                return Ok(n);
            }
            if self.end {
                return Ok(0);
            }
            let gone = || io::Error::other("the reader was dropped");
            let feed = match self.rx.try_recv() {
                Ok(f) => f,
                Err(mpsc::TryRecvError::Empty) => {
                    let _ = self.need.send(Msg::Need);
                    self.rx.recv().map_err(|_| gone())?
                }
                Err(mpsc::TryRecvError::Disconnected) => return Err(gone()),
            };
            self.taken.fetch_add(1, Ordering::Relaxed);
            match feed {
                Feed::Chunk(c) => {
                    self.cur = c;
                    self.off = 0;
                }
                Feed::End => self.end = true,
                Feed::Failed => {
                    self.end = true;
                    return Err(io::Error::other("exception in read()"));
                }
            }
        }
    }
}

/// The calling thread's side of a text stream read ahead: it reads the
/// stream (under the GIL) and keeps up to [`FEED_AHEAD`] chunks waiting
/// for the read-ahead thread. The chunks of the batch being handed out
/// and after are kept, so that the rows from any of them on can be parsed
/// again by a row-by-row reader (see `TextAheadSource::reparse`).
struct Feeder {
    stream: PyTextStream,
    tx: mpsc::Sender<Feed>,
    taken: Arc<AtomicUsize>,
    sent: usize,
    /// `End` or `Failed` was sent.
    done: bool,
    /// `End` was sent: the stream's `read` returned nothing.
    ended: bool,
    /// The chunks sent, the first beginning at byte `kept_from` of the
    /// text.
    kept: std::collections::VecDeque<Arc<Vec<u8>>>,
    kept_from: u64,
    /// Chunks the thread is done with, to fill again.
    spare: Vec<Vec<u8>>,
}

impl Feeder {
    fn feed_one(&mut self, py: Python<'_>) {
        if self.done {
            return;
        }
        let mut v = self.spare.pop().unwrap_or_default();
        v.resize(FEED_CHUNK, 0);
        let msg = match self.stream.read_some(py, &mut v) {
            Ok(0) => {
                self.done = true;
                self.ended = true;
                Feed::End
            }
            Ok(n) => {
                v.truncate(n);
                let c = Arc::new(v);
                self.kept.push_back(c.clone());
                Feed::Chunk(c)
            }
            Err(e) => {
                self.stream.stash.put(e);
                self.done = true;
                Feed::Failed
            }
        };
        self.sent += 1;
        let _ = self.tx.send(msg);
    }

    /// Sends chunks until [`FEED_AHEAD`] wait for the thread.
    fn top_up(&mut self, py: Python<'_>) {
        while !self.done && self.sent - self.taken.load(Ordering::Relaxed) < FEED_AHEAD {
            self.feed_one(py);
        }
    }

    /// Drops the kept chunks that end at or before byte `at`.
    fn forget_before(&mut self, at: u64) {
        while let Some(c) = self.kept.front() {
            let end = self.kept_from + c.len() as u64;
            if end > at {
                break;
            }
            self.kept_from = end;
            if let Some(Ok(v)) = self.kept.pop_front().map(Arc::try_unwrap) {
                if self.spare.len() < FEED_AHEAD {
                    self.spare.push(v);
                }
            }
        }
    }

    /// The kept text from byte `at` on, or `None` if it is not kept.
    fn kept_from(&self, at: u64) -> Option<Vec<u8>> {
        let mut skip = usize::try_from(at.checked_sub(self.kept_from)?).ok()?;
        let mut out = Vec::new();
        for c in &self.kept {
            if skip >= c.len() {
                skip -= c.len();
                continue;
            }
            out.extend_from_slice(&c[skip..]);
            skip = 0;
        }
        (skip == 0).then_some(out)
    }
}

/// A core reader kept by a Python object or handed to a thread. The
/// reader is `Send`; the `Mutex` only makes it `Sync` too, as a `#[pyclass]`
/// must be (its stream need not be `Sync`). It is reached through
/// `&mut self` alone ([`Mutex::get_mut`]), so it is never locked.
struct HeldReader(Mutex<CoreReader<'static>>);

impl HeldReader {
    fn new(rdr: CoreReader<'static>) -> HeldReader {
        HeldReader(Mutex::new(rdr))
    }

    fn get(&mut self) -> &mut CoreReader<'static> {
        // Never locked, so never poisoned.
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    fn into_inner(self) -> CoreReader<'static> {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the Python layer resolved the input to, plus the native options.
struct Spec {
    path: Option<PathBuf>,
    /// A descriptor the Python layer created for us alone (now owned).
    fd: Option<File>,
    offset: u64,
    stream: Option<Py<PyAny>>,
    name: Option<String>,
    errors: String,
    filter: Filter,
    source: SourceChoice,
    buffer_size: Option<usize>,
    intern: bool,
    /// One part of a split file (`path`): index, start, end, lines,
    /// records.
    part: Option<fastcsv::split::Part>,
}

impl Spec {
    /// Reads the options. The descriptor, if any, is taken over first, so
    /// that it is closed whatever fails afterwards.
    fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<Spec> {
        fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, k: &str) -> PyResult<Option<T>> {
            match d.get_item(k)? {
                Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
                _ => Ok(None),
            }
        }
        let fd = match get::<i32>(d, "fd")? {
            Some(raw) => Some(take_fd(raw)?),
            None => None,
        };
        let source: Option<String> = get(d, "source")?;
        let source = match source.as_deref() {
            None => SourceChoice::Auto,
            Some(s) => SourceChoice::parse(s).ok_or_else(|| {
                PyValueError::new_err(format!("source must be 'auto', 'mmap' or 'read', not {s:?}"))
            })?,
        };
        let filter: Option<String> = get(d, "filter")?;
        let buffer_size: Option<usize> = get(d, "buffer_size")?;
        if buffer_size == Some(0) {
            return Err(PyValueError::new_err("buffer_size must be positive"));
        }
        Ok(Spec {
            path: get(d, "path")?,
            fd,
            offset: get(d, "offset")?.unwrap_or(0),
            stream: get(d, "stream")?,
            name: get(d, "name")?,
            errors: get(d, "errors")?.unwrap_or_else(|| "strict".to_owned()),
            filter: parse_filter(filter.as_deref())?,
            source,
            buffer_size,
            intern: get(d, "intern")?.unwrap_or(false),
            part: get::<(usize, u64, u64, u64, u64)>(d, "part")?.map(
                |(index, start, end, lines, records)| fastcsv::split::Part {
                    index,
                    start,
                    end,
                    lines,
                    records,
                    width: None,
                },
            ),
        })
    }
}

/// The core reader's settings for `spec`.
fn native_builder(py: Python<'_>, pd: &PyDialect, spec: &Spec) -> PyResult<ReaderBuilder> {
    let limit = core_limit(field_limit(py)?)?;
    let mut b = ReaderBuilder::new();
    b.dialect(pd.core(spec.filter, limit, true)?).source(spec.source);
    if let Some(n) = spec.buffer_size {
        b.buffer_size(n);
    }
    if let Some(name) = &spec.name {
        b.path(name);
    }
    Ok(b)
}

/// Opens the input described by `spec` with the core reader.
fn open_native(
    py: Python<'_>,
    pd: &PyDialect,
    spec: &mut Spec,
    stash: &PyErrStash,
) -> PyResult<HeldReader> {
    let b = native_builder(py, pd, spec)?;
    let no_stash = PyErrStash::default();
    if let Some(file) = spec.fd.take() {
        return open_fd(&b, file, spec.offset);
    }
    if let Some(p) = &spec.path {
        let rdr = match &spec.part {
            Some(part) => b.from_path_part(p, part),
            None => b.from_path(p),
        };
        return rdr.map(HeldReader::new).map_err(|e| map_error(e, &no_stash));
    }
    if let Some(obj) = &spec.stream {
        let s = PyStream::new(py, obj.bind(py), stash)?;
        return Ok(HeldReader::new(b.from_reader(s)));
    }
    Err(PyTypeError::new_err("no input given"))
}

/// Takes ownership of a raw descriptor.
#[cfg(unix)]
fn take_fd(raw: i32) -> PyResult<File> {
    use std::os::fd::FromRawFd;
    if raw < 0 {
        return Err(PyValueError::new_err("negative file descriptor"));
    }
    // SAFETY: the Python layer passes a descriptor it has just created
    // (os.open or os.dup) for us alone and never uses or closes it again;
    // from here on the `File` owns it and closes it on drop.
    Ok(unsafe { File::from_raw_fd(raw) })
}

#[cfg(not(unix))]
fn take_fd(_: i32) -> PyResult<File> {
    Err(PyValueError::new_err("file descriptors are supported on Unix only"))
}

/// Reads an owned file from `offset` on.
fn open_fd(b: &ReaderBuilder, mut file: File, offset: u64) -> PyResult<HeldReader> {
    use std::io::{Seek, SeekFrom};
    let none = PyErrStash::default();
    file.seek(SeekFrom::Start(offset)).map_err(|e| io_error(e, None))?;
    b.from_file(file).map(HeldReader::new).map_err(|e| map_error(e, &none))
}

// ---------------------------------------------------------------------------
// Row building

/// A record's fields as Python's `csv` gives them over the decoded file:
/// its bytes `raw` decoded first (with the reader's error handler; a
/// strict failure is located in the record) and then parsed by `csv` with
/// the reader's dialect. For the rare records where splitting first could
/// differ (see `Row::unescaping_may_join_invalid_utf8`).
fn decode_then_parse<'py>(
    py: Python<'py>,
    raw: &[u8],
    strs: &mut StrMaker,
    name: Option<&str>,
    pos: Position,
) -> PyResult<Bound<'py, PyList>> {
    let at = || match name {
        Some(n) => format!("record of {n}:{}: record {}, byte {}", pos.line, pos.record, pos.byte),
        None => format!("record at line {}: record {}, byte {}", pos.line, pos.record, pos.byte),
    };
    let text = make_str(py, raw, &strs.errors, strs.strict, &at, &mut strs.scratch)?;
    let Some(dialect) = &strs.dialect else {
        return Err(PyRuntimeError::new_err("fastcsv: no dialect to parse a decoded record"));
    };
    let kw = PyDict::new(py);
    kw.set_item("newline", "")?;
    let f = py.import("io")?.getattr("StringIO")?.call((text,), Some(&kw))?;
    let rows = py.import("_csv")?.getattr("reader")?.call1((f, dialect.bind(py)))?;
    let mut last = None;
    for r in rows.try_iter()? {
        last = Some(r?);
    }
    match last {
        Some(r) => Ok(r.downcast_into::<PyList>()?),
        None => Ok(PyList::empty(py)),
    }
}

fn position_text(name: Option<&str>, pos: Position, field: usize) -> String {
    match name {
        Some(n) => {
            format!("field {field} of {n}:{}: record {}, byte {}", pos.line, pos.record, pos.byte)
        }
        None => {
            format!("field {field} of line {}: record {}, byte {}", pos.line, pos.record, pos.byte)
        }
    }
}

/// A Python list for one core row.
fn row_to_list<'py>(
    py: Python<'py>,
    row: &Row<'_>,
    nonnumeric: bool,
    strs: &mut StrMaker,
    name: Option<&str>,
) -> PyResult<Bound<'py, PyList>> {
    if strs.joins() && row.unescaping_may_join_invalid_utf8() {
        return decode_then_parse(py, row.raw(), strs, name, row.position());
    }
    build_list(py, row.len(), |i| {
        let b = row.get(i).unwrap_or_default();
        let pos = || position_text(name, row.position(), i);
        let s = strs.make(py, b, Text::Utf8(b), &pos)?;
        if nonnumeric && row.is_numeric(i) {
            to_float(s)
        } else {
            Ok(s)
        }
    })
}

// ---------------------------------------------------------------------------
// The reader class

/// The core's message, in the wording of the running CPython (3.13 changed
/// the newline hint).
fn python_message(py: Python<'_>, kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::NewlineInUnquotedField if py.version_info() < (3, 13) => {
            "new-line character seen in unquoted field - \
             do you need to open the file in universal-newline mode?"
                .to_owned()
        }
        k => k.to_string(),
    }
}

/// State of a reader over an iterable of `str` lines.
struct LineSource {
    /// The iterator; `None` once the garbage collector cleared the reader
    /// (`PyReader::__clear__`).
    iter: Option<Py<PyIterator>>,
    scanner: Scanner,
    fields: Fields,
    /// Python's `line_num`: lines taken from the iterator. Shared, so
    /// that the input can read it while `__next__` asks it for a line
    /// (see [`Entered::show`]); only this source writes it.
    line_num: Arc<AtomicU64>,
    /// Objects made from the fields completed so far in this record.
    done: Vec<Py<PyAny>>,
    /// The current line's UTF-8, when the `str` has surrogates.
    buf: Vec<u8>,
    limit: i64,
    /// Decoding space for [`line_str`].
    scratch: Vec<u16>,
}

/// State of a reader over a native input.
struct NativeSource {
    rdr: HeldReader,
    strs: StrMaker,
    stash: PyErrStash,
    name: Option<String>,
    /// Set when this reader stands in for `csv.reader` over a text stream.
    text: Option<TextState>,
    /// Lines before the input's first (a text stream parsed again from a
    /// row, see [`TextAheadSource::reparse`]).
    line_base: u64,
}

/// What a reader over a text stream keeps beyond a native one: the limit
/// is read again before each row, as for `_lines_reader`, and errors carry
/// `csv`'s messages alone, without a position.
struct TextState {
    /// The `field_size_limit()` in use.
    limit: i64,
    /// Whether the stream is still read in raw mode (see [`RawText`]).
    raw_on: Arc<AtomicBool>,
    /// The stream, to see on each call whether it was closed.
    stream: Py<PyAny>,
    /// Where the text came from in the stream.
    origins: Arc<TextOrigins>,
    /// Where to leave the stream if the reader goes away now; `None` once
    /// it ended (the stream is at its end then, as with `csv`), or after
    /// an exception from the stream (its position is not known).
    resume: Option<Resume>,
    /// The offset in the text of the core reader's first byte (a reader
    /// made by [`TextAheadSource::reparse`] starts inside the text).
    byte_base: u64,
}

enum Input {
    Lines(Box<LineSource>),
    Native(Box<NativeSource>),
    /// A path or descriptor: read by a [`Ahead`].
    Ahead(Box<AheadSource>),
    /// A large text stream, read ahead.
    TextAhead(Box<TextAheadSource>),
}

/// State of a reader over a text stream whose text is parsed by a
/// read-ahead thread, fed by the calling thread ([`Feeder`]). The thread
/// parses without a field size limit; each row is checked against the
/// limit in force when it is handed out (as `csv` reads it while parsing)
/// and when a field may exceed it, the reader turns into a row-by-row one
/// ([`NativeSource`]) from that row on ([`TextAheadSource::reparse`]). It
/// also does at the end of the text, to read the stream again on the next
/// call ([`TextAheadSource::follow`]).
struct TextAheadSource {
    ahead: Ahead,
    /// `None` once handed to the row-by-row reader.
    feed: Option<Feeder>,
    strs: StrMaker,
    stash: PyErrStash,
    /// The dialect, for the row-by-row reader.
    dialect: Dialect,
    raw_on: Arc<AtomicBool>,
    /// The stream, to see on each call whether it was closed.
    stream: Py<PyAny>,
    /// Where the text came from in the stream (the rows' positions are in
    /// `ahead.resume`).
    origins: Arc<TextOrigins>,
}

impl TextAheadSource {
    /// A row-by-row reader of the text from byte `at` (a record's start on
    /// line `line`) on, with the field size limit now in force.
    fn reparse(&mut self, py: Python<'_>, at: u64, line: u64) -> PyResult<Box<NativeSource>> {
        let Some(feed) = self.feed.take() else {
            return Err(PyRuntimeError::new_err("fastcsv: the text stream is gone"));
        };
        let Some(pre) = feed.kept_from(at) else {
            return Err(PyRuntimeError::new_err("fastcsv: the text to parse again is gone"));
        };
        self.row_by_row(py, feed, pre, line.saturating_sub(1))
    }

    /// At the end of the text, every row handed out: a row-by-row reader of
    /// what the stream gives from now on, whose next call reads it again,
    /// as `csv.reader` does (see `NativeSource::follow`). `None` when the
    /// stream's `read` raised: the reader stays at its end.
    fn follow(&mut self, py: Python<'_>) -> PyResult<Option<Box<NativeSource>>> {
        match self.feed.take() {
            Some(feed) if feed.ended => {
                let line = self.ahead.line;
                self.row_by_row(py, feed, Vec::new(), line).map(Some)
            }
            feed => {
                self.feed = feed;
                Ok(None)
            }
        }
    }

    /// A row-by-row reader of `pre` and then the rest of `feed`'s stream,
    /// its lines counted from `line_base` on, with the field size limit now
    /// in force. The read-ahead thread ends (its channels close).
    fn row_by_row(
        &mut self,
        py: Python<'_>,
        feed: Feeder,
        pre: Vec<u8>,
        line_base: u64,
    ) -> PyResult<Box<NativeSource>> {
        self.ahead = Ahead::new_done();
        let limit = field_limit(py)?;
        // The kept bytes, then the stream: the new reader's first byte is
        // this byte of the text.
        let byte_base = feed.stream.handed_out() - pre.len() as u64;
        let replay = io::Cursor::new(pre).chain(feed.stream);
        let mut rdr = ReaderBuilder::new()
            .dialect(self.dialect.clone())
            .max_buffer_size(usize::MAX)
            .from_reader(replay);
        // As `NativeSource::next` sets it: below 1, every character fails.
        rdr.set_field_limit(Some(limit.max(0) as u64));
        Ok(Box::new(NativeSource {
            rdr: HeldReader::new(rdr),
            strs: std::mem::replace(&mut self.strs, StrMaker::new("surrogatepass", false)?),
            stash: self.stash.clone(),
            name: None,
            text: Some(TextState {
                limit,
                raw_on: self.raw_on.clone(),
                stream: self.stream.clone_ref(py),
                origins: self.origins.clone(),
                resume: self.ahead.resume,
                byte_base,
            }),
            line_base,
        }))
    }
}

/// State of a reader over a path or descriptor, whose reading calls no
/// Python code and may run ahead on a second thread.
struct AheadSource {
    ahead: Ahead,
    strs: StrMaker,
    stash: PyErrStash,
    name: Option<String>,
}

/// A CSV reader: iterate it for rows (`list[str]`), like `_csv.reader`.
#[pyclass(module = "fastcsv._fastcsv", name = "Reader")]
pub struct PyReader {
    /// The validated `_csv.Dialect` in use (the `dialect` getter).
    dialect: Py<PyAny>,
    nonnumeric: bool,
    input: Input,
}

/// A reader over a text stream that goes away before the end of the text
/// (in CPython at once for `next(fastcsv.reader(f))`, and when a `for` loop
/// over a reader made in its header is left by `break`) puts the stream
/// back where `csv.reader` would have left it: after the line end of the
/// last row handed out (or of the line an error was raised on), so that
/// what reads the stream next (another reader, `f.read()`, `for line in
/// f`) starts at the next row, as with `csv`. See [`TextOrigins`].
///
/// Nothing is done when the reader ended, the stream was closed or moved
/// by the caller after the reader's last read from it (`tell()` is not
/// where that read left it; a move between two reads of the reader is not
/// seen), or a position is not known. A destructor cannot raise:
/// errors are swallowed, and an exception in flight (the reader may go
/// away while one unwinds the frame that held it) is kept aside meanwhile.
impl Drop for PyReader {
    fn drop(&mut self) {
        let (origins, resume) = match &self.input {
            Input::Native(s) => match &s.text {
                Some(t) => (&t.origins, t.resume),
                None => return,
            },
            Input::TextAhead(s) => (&s.origins, s.ahead.resume),
            Input::Lines(_) | Input::Ahead(_) => return,
        };
        let Some(resume) = resume else {
            return;
        };
        Python::with_gil(|py| {
            let (mut ty, mut value, mut tb) =
                (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: the GIL is held (`with_gil`); `PyErr_Fetch` moves the
            // references of the exception in flight, if any (else nulls),
            // into the three pointers and clears it. (Deprecated in 3.12
            // for `PyErr_GetRaisedException`, which 3.11 lacks; it still
            // works there.)
            #[allow(deprecated)]
            unsafe {
                ffi::PyErr_Fetch(&mut ty, &mut value, &mut tb)
            };
            // An error is dropped here: taken out of the interpreter, so
            // none is left set.
            let _ = origins.restore(py, resume);
            if !ty.is_null() {
                // SAFETY: the GIL is held; `PyErr_Restore` takes back the
                // three references `PyErr_Fetch` gave (none is set now).
                #[allow(deprecated)]
                unsafe {
                    ffi::PyErr_Restore(ty, value, tb)
                };
            }
        });
    }
}

/// A type's name as CPython's messages print it (`%.200s` of `tp_name`):
/// with the module for a type defined in C (`datetime.date`,
/// `_csv.reader`), without it for a class defined in Python; at most 200
/// bytes, a character cut there decoded as U+FFFD.
///
/// `tp_name` is read from the type object, which the limited API (abi3)
/// would not allow; this extension is built for one CPython version.
fn tp_name(t: &Bound<'_, PyType>) -> String {
    // SAFETY: `t` is a live type object, kept alive by the reference, and
    // its `tp_name` is a NUL-terminated string owned by the type (CPython
    // requires it of every type, static or heap).
    let name = unsafe { std::ffi::CStr::from_ptr((*t.as_type_ptr()).tp_name) };
    let b = name.to_bytes();
    String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned()
}

impl LineSource {
    /// Converts the fields completed since the last call (CPython converts
    /// each field as it is saved, so a failing `float()` is raised at the
    /// field, before any later error on the same line).
    /// Without QUOTE_NONNUMERIC nothing can fail, and the row is built at
    /// once by `row`.
    fn convert(&mut self, py: Python<'_>, nonnumeric: bool) -> PyResult<()> {
        if !nonnumeric {
            return Ok(());
        }
        for i in self.done.len()..self.fields.len() {
            let s = line_str(py, self.fields.get(b"", i), &mut self.scratch)?;
            let v = if nonnumeric && self.fields.span(i).is_numeric() { to_float(s)? } else { s };
            self.done.push(v.unbind());
        }
        Ok(())
    }

    fn row<'py>(&mut self, py: Python<'py>, nonnumeric: bool) -> PyResult<Bound<'py, PyList>> {
        if !nonnumeric {
            let (f, scratch) = (&self.fields, &mut self.scratch);
            return build_list(py, f.len(), |i| line_str(py, f.get(b"", i), scratch));
        }
        self.convert(py, nonnumeric)?;
        let items: Vec<_> = self.done.drain(..).map(|o| o.into_bound(py)).collect();
        list_from(py, items)
    }

    /// Fails the current record the way `_csv.c` does: fields completed
    /// before the error are converted first (their error wins).
    fn fail(&mut self, py: Python<'_>, nonnumeric: bool, kind: &ErrorKind) -> PyErr {
        if let Err(e) = self.convert(py, nonnumeric) {
            return e;
        }
        exc::Error::new_err(python_message(py, kind))
    }

    fn next<'py>(
        &mut self,
        py: Python<'py>,
        nonnumeric: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        // `Reader_iternext` starts every call with `parse_reset`.
        self.scanner.reset();
        self.done.clear();
        let Some(iter) = &self.iter else {
            return Ok(None);
        };
        let mut iter = iter.bind(py).clone();
        loop {
            let item = match iter.next() {
                Some(item) => item?,
                None => {
                    return match self.scanner.finish(&[], &mut self.fields) {
                        Scan::Row => self.row(py, nonnumeric).map(Some),
                        Scan::Error(k, _) => Err(self.fail(py, nonnumeric, &k)),
                        Scan::End | Scan::NeedInput => Ok(None),
                    };
                }
            };
            // `csv` reads the limit as it parses, and the only code that
            // runs inside a record is the iterator's: read it after each
            // line, so that a generator that changes it between the lines
            // of one record is followed exactly.
            let limit = field_limit(py)?;
            if limit != self.limit {
                self.scanner.set_field_limit(Some(limit.max(0) as u64));
                self.limit = limit;
            }
            let Ok(line) = item.downcast::<PyString>() else {
                return Err(exc::Error::new_err(format!(
                    "iterator should return strings, not {} \
                     (the file should be opened in text mode)",
                    tp_name(&item.get_type())
                )));
            };
            let n = self.line_num.load(Ordering::Relaxed);
            self.line_num.store(n + 1, Ordering::Relaxed);
            let bytes: &[u8] = match line.to_str() {
                Ok(s) => s.as_bytes(),
                Err(_) => {
                    // Lone surrogates: carry them through as CPython does.
                    let b = line.call_method1(intern!(py, "encode"), ("utf-8", "surrogatepass"))?;
                    self.buf.clear();
                    self.buf.extend_from_slice(b.downcast::<PyBytes>()?.as_bytes());
                    &self.buf
                }
            };
            let mut pos = 0;
            match self.scanner.scan(bytes, &mut pos, &mut self.fields) {
                Scan::Error(k, _) => return Err(self.fail(py, nonnumeric, &k)),
                Scan::Row | Scan::NeedInput | Scan::End => {}
            }
            match self.scanner.end_line(&mut self.fields) {
                Scan::Row => return self.row(py, nonnumeric).map(Some),
                Scan::Error(k, _) => return Err(self.fail(py, nonnumeric, &k)),
                Scan::NeedInput | Scan::End => self.convert(py, nonnumeric)?,
            }
        }
    }
}

impl NativeSource {
    fn next<'py>(
        &mut self,
        py: Python<'py>,
        nonnumeric: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        if let Some(text) = &mut self.text {
            let limit = field_limit(py)?;
            if limit != text.limit {
                self.rdr.get().set_field_limit(Some(limit.max(0) as u64));
                text.limit = limit;
            }
        }
        let rdr = self.rdr.get();
        let got = match rdr.read_row() {
            Ok(Some(row)) => {
                row_to_list(py, &row, nonnumeric, &mut self.strs, self.name.as_deref()).map(Some)
            }
            Ok(None) => match self.stash.take() {
                Some(e) => Err(e),
                None => {
                    self.follow();
                    Ok(None)
                }
            },
            Err(e) if self.text.is_some() => {
                // `csv` consumed the line it raised on; at the end of the
                // text (a record cut short) the stream is at its end.
                let at = match e.position() {
                    Some(p) if e.is_data() && !matches!(e.kind(), ErrorKind::UnexpectedEof) => {
                        Some(p.byte)
                    }
                    _ => None,
                };
                let e = text_error(py, e, &self.stash);
                if let Some(t) = &mut self.text {
                    t.resume = at.map(|at| Resume::LineOf(t.byte_base + at));
                }
                // The end of the text may have cut a record short.
                self.follow();
                return Err(e);
            }
            Err(e) => return Err(map_error(e, &self.stash)),
        };
        if let Some(t) = &mut self.text {
            t.resume = match &got {
                Ok(Some(_)) => {
                    let rdr = self.rdr.get();
                    let at = t.byte_base + rdr.byte_offset();
                    t.origins.need_from(at);
                    Some(Resume::At { at, lf: rdr.pending_lf() })
                }
                // At the end (or after an exception from the stream).
                _ => None,
            };
        }
        got
    }

    /// At the end of a text stream, makes the next call read it again: as
    /// `csv.reader` asks the stream for a line on every call, it finds what
    /// was written since (a file that grows, a `StringIO` written to). After
    /// an exception from the stream, the reader stays at its end.
    fn follow(&mut self) {
        if self.text.is_some() {
            self.rdr.get().resume_after_end();
        }
    }
}

/// With a text stream: `csv.reader` asks the stream for a line on every
/// call, so once the stream is closed each call raises the stream's own
/// error, rows read ahead or not. A closed stream is asked for its next
/// line here too, to raise exactly that error (`closed` alone is looked
/// up on every call: a few percent of a row's time).
fn raise_if_closed(py: Python<'_>, stream: &Py<PyAny>) -> PyResult<()> {
    let stream = stream.bind(py);
    let closed = stream.getattr(intern!(py, "closed")).and_then(|c| c.is_truthy());
    if closed.unwrap_or(false) {
        stream.call_method0(intern!(py, "__next__"))?;
        return Err(PyValueError::new_err("I/O operation on closed file."));
    }
    Ok(())
}

#[pymethods]
impl PyReader {
    /// The reader itself, without borrowing it (another thread may be
    /// inside its `__next__`).
    fn __iter__<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.clone()
    }

    /// The Python objects the reader holds where the garbage collector can
    /// see them, so that a cycle through a reader (a generator that holds
    /// the object that holds its reader) is collected, as with `csv`. Only
    /// references the reader owns are visited, each once; those held
    /// inside the core reader's source (a stream's bound methods) are not,
    /// which keeps what they reach alive, as a reference from outside
    /// would.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.dialect)?;
        match &self.input {
            Input::Lines(s) => {
                visit.call(&s.iter)?;
                for v in &s.done {
                    visit.call(v)?;
                }
            }
            Input::Native(s) => {
                if let Some(t) = &s.text {
                    visit.call(&t.stream)?;
                }
            }
            Input::TextAhead(s) => visit.call(&s.stream)?,
            Input::Ahead(_) => {}
        }
        Ok(())
    }

    /// Breaks a cycle the collector found: the iterator of lines is let go
    /// (the reader then ends).
    fn __clear__(&mut self) {
        if let Input::Lines(s) = &mut self.input {
            s.iter = None;
            s.done.clear();
        }
    }

    fn __next__<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyList>>> {
        let entered = Entered::new(slf);
        let mut this = borrow_waiting(slf, 1)?;
        entered.show(&this, slf.py());
        this.next_row(slf.py())
    }

    /// The validated `_csv.Dialect` in use.
    #[getter]
    fn dialect(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if let Some(d) = shown(slf, |s| s.dialect.clone_ref(py)) {
            return Ok(d);
        }
        Ok(borrow_waiting(slf, 0)?.dialect.clone_ref(py))
    }

    /// What the reader reads: `"lines"` (an iterable of `str`), `"text"`
    /// (a text stream read in chunks), `"text-raw"` (a text file whose
    /// bytes are read from its buffer, so far) or `"native"` (a path, a
    /// descriptor or a binary stream). For tests and debugging.
    #[getter]
    fn _source(&self) -> &'static str {
        match &self.input {
            Input::Lines(_) => "lines",
            Input::Native(s) => match &s.text {
                Some(t) if t.raw_on.load(Ordering::Relaxed) => "text-raw",
                Some(_) => "text",
                None => "native",
            },
            Input::Ahead(_) => "native",
            Input::TextAhead(s) if s.raw_on.load(Ordering::Relaxed) => "text-raw",
            Input::TextAhead(_) => "text",
        }
    }

    /// Whether rows are scanned ahead by a second thread (paths and
    /// descriptors, large text files; until a text file's reader turns
    /// row by row). For tests and debugging.
    #[getter]
    fn _reads_ahead(&self) -> bool {
        matches!(self.input, Input::Ahead(_) | Input::TextAhead(_))
    }

    /// Lines read so far (the number of lines taken from the iterator, or
    /// of line ends consumed in a native input).
    #[getter]
    fn line_num(slf: &Bound<'_, Self>) -> PyResult<u64> {
        if let Some(n) = shown(slf, |s| s.line_num.load(Ordering::Relaxed)) {
            return Ok(n);
        }
        let mut this = borrow_waiting(slf, 0)?;
        Ok(match &mut this.input {
            Input::Lines(s) => s.line_num.load(Ordering::Relaxed),
            Input::Native(s) => s.line_base + s.rdr.get().line(),
            Input::Ahead(s) => s.ahead.line,
            Input::TextAhead(s) => s.ahead.line,
        })
    }
}

impl PyReader {
    /// The next row, `None` at the end (`__next__`'s work).
    fn next_row<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        match &mut self.input {
            Input::Lines(s) => s.next(py, self.nonnumeric),
            Input::Native(s) => {
                if let Some(t) = &s.text {
                    raise_if_closed(py, &t.stream)?;
                }
                s.next(py, self.nonnumeric)
            }
            Input::Ahead(s) => {
                let name = s.name.as_deref();
                match s.ahead.next_row(py, self.nonnumeric, &mut s.strs, name, &s.stash, None)? {
                    Next::Row(r) => Ok(Some(r)),
                    Next::End => Ok(None),
                    Next::Reparse(..) => {
                        Err(PyRuntimeError::new_err("fastcsv: a native reader cannot reparse"))
                    }
                }
            }
            Input::TextAhead(s) => {
                raise_if_closed(py, &s.stream)?;
                let strs = &mut s.strs;
                let feed = s.feed.as_mut();
                match s.ahead.next_row(py, false, strs, None, &s.stash, feed)? {
                    Next::Row(r) => Ok(Some(r)),
                    Next::End => {
                        if let Some(native) = s.follow(py)? {
                            self.input = Input::Native(native);
                        }
                        Ok(None)
                    }
                    Next::Reparse(at, line) => {
                        let mut native = s.reparse(py, at, line)?;
                        let row = native.next(py, false);
                        self.input = Input::Native(native);
                        row
                    }
                }
            }
        }
    }
}

/// What a reader over lines shows of itself to its own input while its
/// `__next__` asks that input for a line, when the reader cannot be
/// borrowed: a generator may read `reader.line_num` (the lines taken so
/// far) and `reader.dialect`, as `csv` allows.
struct Shown {
    line_num: Arc<AtomicU64>,
    dialect: Py<PyAny>,
}

thread_local! {
    /// The readers whose `__next__` runs on this thread (their addresses),
    /// to tell a call from the reader's own input (re-entry, on this
    /// thread) from one on another thread, with what they show it.
    static ENTERED: std::cell::RefCell<Vec<(usize, Option<Shown>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Marks a reader's `__next__` as running on this thread while it lives.
struct Entered(usize);

impl Entered {
    fn new(slf: &Bound<'_, PyReader>) -> Entered {
        let key = slf.as_ptr() as usize;
        ENTERED.with(|e| e.borrow_mut().push((key, None)));
        Entered(key)
    }

    /// Shows the reader's `line_num` and dialect to calls from its input.
    /// Only a reader over lines runs Python code of its input's inside
    /// `__next__` (other inputs are read by the core, or by stream
    /// methods that do not look at the reader); the others show nothing.
    fn show(&self, this: &PyReader, py: Python<'_>) {
        if let Input::Lines(s) = &this.input {
            let shown =
                Shown { line_num: Arc::clone(&s.line_num), dialect: this.dialect.clone_ref(py) };
            ENTERED.with(|e| {
                if let Some(m) = e.borrow_mut().iter_mut().rev().find(|m| m.0 == self.0) {
                    m.1 = Some(shown);
                }
            });
        }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mark = ENTERED.with(|e| {
            let mut e = e.borrow_mut();
            e.iter().rposition(|m| m.0 == self.0).map(|i| e.remove(i))
        });
        // The dialect's reference goes after the borrow ends.
        drop(mark);
    }
}

/// `f` of what the reader `slf` shows its input, when this call comes from
/// there (the reader's `__next__` runs on this thread and showed it).
fn shown<T>(slf: &Bound<'_, PyReader>, f: impl FnOnce(&Shown) -> T) -> Option<T> {
    let key = slf.as_ptr() as usize;
    ENTERED.with(|e| e.borrow().iter().rev().find(|m| m.0 == key).and_then(|m| m.1.as_ref()).map(f))
}

/// The reader, mutably borrowed. While another thread is inside its
/// `__next__` (which lets the GIL go to read, or to call its input), this
/// one waits for it with the GIL released, so that threads sharing a
/// reader take rows in turn, as with `csv.reader`, rather than fail with
/// "Already borrowed". A call from the reader's own input, on the thread
/// that is reading (a generator that calls `next` on its reader), cannot
/// wait: a `ValueError`, as `csv` gets from the generator in that case.
/// `own` is the number of [`Entered`] marks the caller made for this call.
fn borrow_waiting<'py>(
    slf: &Bound<'py, PyReader>,
    own: usize,
) -> PyResult<PyRefMut<'py, PyReader>> {
    let key = slf.as_ptr() as usize;
    loop {
        if let Ok(r) = slf.try_borrow_mut() {
            return Ok(r);
        }
        // A mark for this reader beyond the caller's own: this thread is
        // inside its `__next__` already.
        let reentered = ENTERED.with(|e| e.borrow().iter().filter(|m| m.0 == key).count() > own);
        if reentered {
            return Err(PyValueError::new_err(
                "reader already executing: called again from its own input",
            ));
        }
        slf.py().allow_threads(|| std::thread::sleep(std::time::Duration::from_micros(20)));
    }
}

/// A reader over an iterable of `str` lines.
#[pyfunction]
#[pyo3(signature = (lines, dialect, filter=None))]
fn _lines_reader(
    py: Python<'_>,
    lines: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
    filter: Option<&str>,
) -> PyResult<PyReader> {
    let pd = PyDialect::from_py(dialect)?;
    let limit = field_limit(py)?;
    let d = pd.core(parse_filter(filter)?, core_limit(limit)?, false)?;
    let iter = lines.try_iter()?.unbind();
    Ok(PyReader {
        dialect: dialect.clone().unbind(),
        nonnumeric: pd.nonnumeric,
        input: Input::Lines(Box::new(LineSource {
            iter: Some(iter),
            scanner: Scanner::line_fed(&d),
            fields: Fields::default(),
            line_num: Arc::new(AtomicU64::new(0)),
            done: Vec::new(),
            buf: Vec::new(),
            limit,
            scratch: Vec::new(),
        })),
    })
}

/// A reader over a path, a file descriptor or a binary stream.
#[pyfunction]
fn _native_reader(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
) -> PyResult<PyReader> {
    let mut spec = Spec::from_dict(spec)?;
    let pd = PyDialect::from_py(dialect)?;
    let stash = PyErrStash::default();
    let native_io = spec.fd.is_some() || spec.path.is_some();
    let rdr = open_native(py, &pd, &mut spec, &stash)?;
    let name = spec.name.clone().or_else(|| spec.path.as_ref().map(|p| p.display().to_string()));
    let strs = StrMaker::new(&spec.errors, spec.intern)?.decode_first(dialect, spec.filter);
    let input = if native_io {
        Input::Ahead(Box::new(AheadSource { ahead: Ahead::new(rdr), strs, stash, name }))
    } else {
        Input::Native(Box::new(NativeSource { rdr, strs, stash, name, text: None, line_base: 0 }))
    };
    Ok(PyReader { dialect: dialect.clone().unbind(), nonnumeric: pd.nonnumeric, input })
}

/// A reader over a text stream in a universal-newline mode (the caller
/// checks the mode; see [`PyTextStream`]). Rows, `line_num` and error
/// messages are `csv.reader`'s; a BOM stays in the first field, as in
/// `csv`. QUOTE_NONNUMERIC is left to `_lines_reader`: `csv` converts each
/// field as it ends and, after a failed conversion, resumes at the next
/// line, which may be inside the record.
///
/// With `raw_offset` (a UTF-8 `io.TextIOWrapper` whose `tell()` was that
/// plain byte offset, with nothing decoded ahead), the stream starts in
/// raw mode; `keeps_cr` says that `read` was seen returning a CR. With
/// `ahead` (a large file), the text is parsed by a read-ahead thread
/// ([`TextAheadSource`]).
#[pyfunction]
#[pyo3(signature = (stream, dialect, filter=None, raw_offset=None, keeps_cr=false, ahead=false))]
fn _text_reader(
    py: Python<'_>,
    stream: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
    filter: Option<&str>,
    raw_offset: Option<u64>,
    keeps_cr: bool,
    ahead: bool,
) -> PyResult<PyReader> {
    let pd = PyDialect::from_py(dialect)?;
    if pd.nonnumeric {
        return Err(unsupported("QUOTE_NONNUMERIC over a text stream"));
    }
    let limit = field_limit(py)?;
    let d = pd.core(parse_filter(filter)?, core_limit(limit)?, false)?;
    let raw = match raw_offset {
        Some(pos) => Some(RawText {
            stream: stream.clone().unbind(),
            read1: stream.getattr(intern!(py, "buffer"))?.getattr(intern!(py, "read1"))?.unbind(),
            pos,
            keeps_cr,
            checked: false,
            tail: Vec::new(),
        }),
        None => None,
    };
    let raw_on = Arc::new(AtomicBool::new(raw.is_some()));
    let stash = PyErrStash::default();
    let origins = Arc::new(TextOrigins::new(py, stream, raw_offset));
    let text = PyTextStream {
        read: stream.getattr(intern!(py, "read"))?.unbind(),
        raw,
        raw_on: raw_on.clone(),
        spill: Spill::default(),
        stash: stash.clone(),
        origins: origins.clone(),
    };
    if ahead {
        let unlimited = d.to_builder().field_limit(None).build().map_err(|e| csv_error(&e))?;
        let (feed_tx, feed_rx) = mpsc::channel();
        let (msg_tx, msg_rx) = mpsc::channel();
        let taken = Arc::new(AtomicUsize::new(0));
        let fed = FedText {
            rx: feed_rx,
            need: msg_tx.clone(),
            taken: taken.clone(),
            cur: Arc::default(),
            off: 0,
            end: false,
        };
        let rdr =
            ReaderBuilder::new().dialect(unlimited).max_buffer_size(usize::MAX).from_reader(fed);
        let feeder = Feeder {
            stream: text,
            tx: feed_tx,
            taken,
            sent: 0,
            done: false,
            ended: false,
            kept: Default::default(),
            kept_from: 0,
            spare: Vec::new(),
        };
        return Ok(PyReader {
            dialect: dialect.clone().unbind(),
            nonnumeric: false,
            input: Input::TextAhead(Box::new(TextAheadSource {
                ahead: Ahead::new_fed(Some(HeldReader::new(rdr)), Some((msg_tx, msg_rx))),
                feed: Some(feeder),
                strs: StrMaker::new("surrogatepass", false)?,
                stash,
                dialect: d,
                raw_on,
                stream: stream.clone().unbind(),
                origins,
            })),
        });
    }
    // `csv` holds a record of any size in memory; so may this reader.
    let rdr = ReaderBuilder::new().dialect(d).max_buffer_size(usize::MAX).from_reader(text);
    Ok(PyReader {
        dialect: dialect.clone().unbind(),
        nonnumeric: false,
        input: Input::Native(Box::new(NativeSource {
            rdr: HeldReader::new(rdr),
            strs: StrMaker::new("surrogatepass", false)?,
            stash,
            name: None,
            text: Some(TextState {
                limit,
                raw_on,
                stream: stream.clone().unbind(),
                origins,
                resume: None,
                byte_base: 0,
            }),
            line_base: 0,
        })),
    })
}

// ---------------------------------------------------------------------------
// Bulk reads

/// How a field's text was prepared by [`Batch::prepare`].
#[derive(Clone, Copy)]
enum Form {
    Ascii,
    /// Decoded code units at `at..at + len` of the batch's `ucs1`.
    Ucs1 {
        at: usize,
        len: usize,
    },
    /// ... of its `ucs2`.
    Ucs2 {
        at: usize,
        len: usize,
    },
    /// ... of its `ucs4`.
    Ucs4 {
        at: usize,
        len: usize,
    },
    /// Not strict UTF-8: CPython's decoder and error handler decide.
    Utf8,
}

/// Rows scanned and decoded without the GIL, waiting to become Python
/// objects.
#[derive(Default)]
struct Batch {
    /// Field bytes, back to back.
    data: Vec<u8>,
    /// End offset in `data` of each field.
    ends: Vec<usize>,
    /// Per field: began with an ordinary byte (kept for QUOTE_NONNUMERIC).
    numeric: Vec<bool>,
    /// Per row: index into `ends` one past its last field, and position.
    rows: Vec<(usize, Position)>,
    /// Per row: the reader's line count right after it (`line_num`).
    lines: Vec<u64>,
    /// The reader's line count where the batch ended.
    end_line: u64,
    /// The reader's byte offset where the batch began.
    start_byte: u64,
    /// Where the record after the batch's last row starts (for a batch
    /// that an error ended, the record that failed).
    end_byte: u64,
    /// Whether an LF at `end_byte` may still belong to the last row's line
    /// (see [`CoreReader::pending_lf`]).
    end_lf: bool,
    /// Where the record an error ended the batch in began (byte, line).
    err_start: Option<(u64, u64)>,
    /// [`Batch::prepare`] has run.
    prepared: bool,
    /// Rows to decode first and parse with `csv` (see
    /// [`decode_then_parse`]): their index and bytes in `raw`.
    reparse: Vec<(usize, std::ops::Range<usize>)>,
    raw: Vec<u8>,
    /// Per field, how its text was prepared; empty when `data` is ASCII.
    forms: Vec<Form>,
    /// Decoded code units of the fields that are not ASCII, by kind.
    ucs1: Vec<u8>,
    ucs2: Vec<u16>,
    ucs4: Vec<u32>,
}

/// Appends the `n` code points of the strict UTF-8 `b` to `v`; their
/// place, or `None` (and `v` as it was) when `b` is not strict UTF-8.
fn decode_append<T: Copy + Default>(
    b: &[u8],
    n: usize,
    v: &mut Vec<T>,
    unit: impl Fn(u32) -> T,
) -> Option<(usize, usize)> {
    let at = v.len();
    v.resize(at + n, T::default());
    if decode_utf8_into(b, &mut v[at..], unit) {
        Some((at, n))
    } else {
        v.truncate(at);
        None
    }
}

impl Batch {
    /// A batch with room for a full batch of `bytes` (unless its last row
    /// is very long), so that filling it does not allocate: the scanning
    /// thread then takes no memory of its own from the allocator, memory
    /// that glibc would keep in that thread's arena after it ends.
    fn reserved(bytes: usize) -> Batch {
        let room = bytes + BATCH_SLACK;
        let fields = BATCH_FIELDS + 1024;
        Batch {
            data: Vec::with_capacity(room),
            ends: Vec::with_capacity(fields),
            numeric: Vec::with_capacity(fields),
            rows: Vec::with_capacity(BATCH_ROWS),
            lines: Vec::with_capacity(BATCH_ROWS),
            end_line: 0,
            start_byte: 0,
            end_byte: 0,
            end_lf: false,
            err_start: None,
            prepared: false,
            reparse: Vec::new(),
            raw: Vec::new(),
            forms: Vec::with_capacity(fields),
            ucs1: Vec::with_capacity(room),
            ucs2: Vec::with_capacity(room),
            ucs4: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.prepared = false;
        self.data.clear();
        self.ends.clear();
        self.numeric.clear();
        self.rows.clear();
        self.lines.clear();
        self.reparse.clear();
        self.raw.clear();
        self.forms.clear();
        self.ucs1.clear();
        self.ucs2.clear();
        self.ucs4.clear();
    }

    /// Reads rows until the batch holds `bytes` bytes of fields or
    /// [`BATCH_FIELDS`] fields or [`BATCH_ROWS`] rows, then decodes them
    /// ([`Batch::prepare`]).
    /// `Ok(false)` at end of input; after an error, the rows before it.
    /// With `joins`, rows for [`decode_then_parse`] are marked.
    fn load(
        &mut self,
        rdr: &mut CoreReader<'_>,
        nonnumeric: bool,
        joins: bool,
        bytes: usize,
    ) -> Result<bool, CoreError> {
        self.clear();
        self.start_byte = rdr.byte_offset();
        self.err_start = None;
        let end = loop {
            if self.data.len() >= bytes
                || self.ends.len() >= BATCH_FIELDS
                || self.rows.len() >= BATCH_ROWS
            {
                break Ok(true);
            }
            let row = match rdr.read_row() {
                Ok(Some(row)) => row,
                Ok(None) => break Ok(false),
                Err(e) => {
                    self.err_start = rdr.error_record_start();
                    break Err(e);
                }
            };
            for (i, f) in row.iter().enumerate() {
                self.data.extend_from_slice(f);
                self.ends.push(self.data.len());
                if nonnumeric {
                    self.numeric.push(row.is_numeric(i));
                }
            }
            if joins && row.unescaping_may_join_invalid_utf8() {
                let at = self.raw.len();
                self.raw.extend_from_slice(row.raw());
                self.reparse.push((self.rows.len(), at..self.raw.len()));
            }
            self.rows.push((self.ends.len(), row.position()));
            self.lines.push(rdr.line());
        };
        self.end_line = rdr.line();
        (self.end_byte, self.end_lf) = match (&end, self.err_start) {
            (Err(_), Some((at, _))) => (at, false),
            _ => (rdr.byte_offset(), rdr.pending_lf()),
        };
        end
    }

    /// [`Batch::load`], then [`Batch::prepare`] until `defer` says that the
    /// thread that takes the batch waits for it: that thread prepares the
    /// rest, so that between a scanning thread and a calling thread that
    /// makes objects, whichever is ahead decodes.
    fn load_for(
        &mut self,
        rdr: &mut CoreReader<'_>,
        nonnumeric: bool,
        joins: bool,
        defer: &AtomicBool,
    ) -> Result<bool, CoreError> {
        let end = self.load(rdr, nonnumeric, joins, BATCH_BYTES);
        self.prepare_until(Some(defer));
        end
    }

    /// Decodes every field that is not ASCII into code units of its final
    /// kind, so that making its `str` under the GIL is a copy. Once.
    fn prepare(&mut self) {
        self.prepare_until(None);
    }

    /// [`Batch::prepare`], stopping early once `stop` is set (checked every
    /// [`PREPARE_STEP`] fields); a later call goes on where it stopped.
    fn prepare_until(&mut self, stop: Option<&AtomicBool>) {
        if self.prepared {
            return;
        }
        let done = self.forms.len();
        if done == 0 && self.data.is_ascii() {
            self.prepared = true;
            return;
        }
        let mut start = if done == 0 { 0 } else { self.ends[done - 1] };
        for f in done..self.ends.len() {
            if f % PREPARE_STEP == 0 && stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return;
            }
            let end = self.ends[f];
            let b = &self.data[start..end];
            start = end;
            if b.is_ascii() {
                self.forms.push(Form::Ascii);
                continue;
            }
            let at = self.ucs2.len();
            let form = match decode_bmp(b, &mut self.ucs2) {
                Some((len, or)) if or < 0x100 => {
                    // Every code point fits one byte: narrow them.
                    let at1 = self.ucs1.len();
                    self.ucs1.resize(at1 + len, 0);
                    for (d, &u) in self.ucs1[at1..].iter_mut().zip(&self.ucs2[at..]) {
                        *d = u as u8;
                    }
                    self.ucs2.truncate(at);
                    Some(Form::Ucs1 { at: at1, len })
                }
                Some((len, _)) => Some(Form::Ucs2 { at, len }),
                None => match utf8_shape(b) {
                    (n, 0x10_FFFF) => decode_append(b, n, &mut self.ucs4, |c| c)
                        .map(|(at, len)| Form::Ucs4 { at, len }),
                    _ => None,
                },
            };
            self.forms.push(form.unwrap_or(Form::Utf8));
        }
        self.prepared = true;
    }

    /// Field `f` (whose bytes are `b`) as prepared.
    fn text<'a>(&'a self, f: usize, b: &'a [u8]) -> Text<'a> {
        match self.forms.get(f) {
            None | Some(Form::Ascii) => Text::Ascii(b),
            Some(&Form::Ucs1 { at, len }) => Text::Ucs1(&self.ucs1[at..at + len]),
            Some(&Form::Ucs2 { at, len }) => Text::Ucs2(&self.ucs2[at..at + len]),
            Some(&Form::Ucs4 { at, len }) => Text::Ucs4(&self.ucs4[at..at + len]),
            Some(Form::Utf8) => Text::Utf8(b),
        }
    }

    /// Field `f` of the batch, field `i` of its row (at `pos`), as a
    /// Python object.
    #[allow(clippy::too_many_arguments)]
    fn field<'py>(
        &self,
        py: Python<'py>,
        f: usize,
        i: usize,
        pos: Position,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let start = if f == 0 { 0 } else { self.ends[f - 1] };
        let b = &self.data[start..self.ends[f]];
        let at = || position_text(name, pos, i);
        let s = strs.make(py, b, self.text(f, b), &at)?;
        if nonnumeric && self.numeric[f] {
            to_float(s)
        } else {
            Ok(s)
        }
    }

    /// The bytes of row `r` if it is to be decoded first.
    fn reparsed(&self, r: usize) -> Option<&[u8]> {
        if self.reparse.is_empty() {
            return None;
        }
        let k = self.reparse.binary_search_by_key(&r, |(i, _)| *i).ok()?;
        Some(&self.raw[self.reparse[k].1.clone()])
    }

    /// The fields of row `r`: their indices in the batch, and its position.
    fn row_fields(&self, r: usize) -> (std::ops::Range<usize>, Position) {
        let first = if r == 0 { 0 } else { self.rows[r - 1].0 };
        let (end, pos) = self.rows[r];
        (first..end, pos)
    }

    /// Row `r` as a Python list.
    fn row_list<'py>(
        &self,
        py: Python<'py>,
        r: usize,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let (fields, pos) = self.row_fields(r);
        if let Some(raw) = self.reparsed(r) {
            return decode_then_parse(py, raw, strs, name, pos);
        }
        let first = fields.start;
        if strs.cache.is_none() && !nonnumeric {
            // Nothing to decide per field but its text: walk the ends.
            // (Written out here: a shared per-field closure measured 5%
            // more instructions per row.)
            let mut start = if first == 0 { 0 } else { self.ends[first - 1] };
            let ends = &self.ends[fields];
            if self.forms.is_empty() {
                // An ASCII batch: every field is a copy.
                return build_list(py, ends.len(), |i| {
                    let b = &self.data[start..ends[i]];
                    start = ends[i];
                    str_from_units(py, b, 0x7F)
                });
            }
            return build_list(py, ends.len(), |i| {
                let b = &self.data[start..ends[i]];
                start = ends[i];
                let at = || position_text(name, pos, i);
                let text = self.text(first + i, b);
                text.to_str(py, &strs.errors, strs.strict, &at, &mut strs.scratch)
            });
        }
        build_list(py, fields.len(), |i| self.field(py, first + i, i, pos, nonnumeric, strs, name))
    }

    /// Row `r`'s fields as Python objects, in `items` (cleared first).
    fn row_items<'py>(
        &self,
        py: Python<'py>,
        r: usize,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
        items: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        items.clear();
        let (fields, pos) = self.row_fields(r);
        if let Some(raw) = self.reparsed(r) {
            items.extend(decode_then_parse(py, raw, strs, name, pos)?.iter());
            return Ok(());
        }
        if self.forms.is_empty() && strs.cache.is_none() && !nonnumeric {
            // An ASCII batch: every field is a copy.
            let mut start = if fields.start == 0 { 0 } else { self.ends[fields.start - 1] };
            for &end in &self.ends[fields] {
                items.push(str_from_units(py, &self.data[start..end], 0x7F)?);
                start = end;
            }
            return Ok(());
        }
        for (i, f) in fields.enumerate() {
            items.push(self.field(py, f, i, pos, nonnumeric, strs, name)?);
        }
        Ok(())
    }
}

/// What the read-ahead thread of a row-by-row reader tells the calling
/// thread. (One message per batch: its size does not matter.)
#[allow(clippy::large_enum_variant)]
enum Msg {
    /// A filled batch and how it ended.
    Filled(Batch, Result<bool, CoreError>),
    /// It read every byte fed so far and waits for more (see [`FedText`]).
    Need,
}

/// What [`Ahead::next_row`] found.
enum Next<'py> {
    Row(Bound<'py, PyList>),
    End,
    /// (Text streams only.) The next row or error may be different under
    /// the field size limit now in force: parse again from this byte of
    /// the text, whose line is this one (1-based).
    Reparse(u64, u64),
}

/// A row-by-row reader's rows scanned ahead: batches of rows decoded by a
/// second thread (once the input proved larger than one batch) while the
/// calling thread makes lists of the rows before them. The rows, errors
/// and `line_num` are those of reading row by row: a batch ends at an
/// error, which is raised after its rows, and reading goes on after it as
/// the core reader does.
///
/// A text stream's reader ([`TextAheadSource`]) is fed by the calling
/// thread ([`Feeder`]) and starts its thread at once.
struct Ahead {
    /// The reader while no thread has it.
    rdr: Option<HeldReader>,
    /// Messages from the thread, once it runs. (In a `Mutex` only to make
    /// the reader `Sync`, as Python classes must be; it is never locked:
    /// every access has `&mut self`.)
    full: Option<Mutex<mpsc::Receiver<Msg>>>,
    /// Batches given back to the thread to fill again.
    empty: Option<mpsc::Sender<Batch>>,
    /// The channel for `full` when made before the thread (a fed reader's
    /// [`FedText`] holds the other end).
    chan: Option<(mpsc::Sender<Msg>, Mutex<mpsc::Receiver<Msg>>)>,
    /// The batch being handed out, its next row, and how it ended.
    cur: Batch,
    next: usize,
    end: Option<Result<bool, CoreError>>,
    /// `line_num`: lines consumed up to the last row handed out.
    line: u64,
    /// Nothing more to read.
    done: bool,
    /// The calling thread waits for the next batch (see `Batch::load_for`).
    waiting: Arc<AtomicBool>,
    /// (Text streams only.) Where to leave the stream if the reader goes
    /// away now, as `TextState::resume`.
    resume: Option<Resume>,
}

impl Ahead {
    /// A reader with nothing (more) to give.
    fn new_done() -> Ahead {
        Ahead { rdr: None, done: true, ..Ahead::new_fed(None, None) }
    }

    fn new(rdr: HeldReader) -> Ahead {
        Ahead::new_fed(Some(rdr), None)
    }

    /// A reader whose thread will send on `chan`'s sender.
    fn new_fed(
        rdr: Option<HeldReader>,
        chan: Option<(mpsc::Sender<Msg>, mpsc::Receiver<Msg>)>,
    ) -> Ahead {
        Ahead {
            rdr,
            full: None,
            empty: None,
            chan: chan.map(|(tx, rx)| (tx, Mutex::new(rx))),
            cur: Batch::default(),
            next: 0,
            end: None,
            line: 0,
            done: false,
            waiting: Arc::default(),
            resume: None,
        }
    }

    /// The next row, as `NativeSource::next` gives it. With `fed` (a text
    /// stream), errors are `csv`'s and each row and error is first checked
    /// against the field size limit, which the thread does not apply.
    #[allow(clippy::too_many_arguments)]
    fn next_row<'py>(
        &mut self,
        py: Python<'py>,
        nonnumeric: bool,
        strs: &mut StrMaker,
        name: Option<&str>,
        stash: &PyErrStash,
        mut fed: Option<&mut Feeder>,
    ) -> PyResult<Next<'py>> {
        loop {
            if self.next < self.cur.rows.len() {
                let r = self.next;
                if fed.is_some() {
                    // A row without a field longer (in bytes, so at least
                    // in characters) than the limit is as `csv` reads it.
                    let (fields, pos) = self.cur.row_fields(r);
                    let mut start =
                        if fields.start == 0 { 0 } else { self.cur.ends[fields.start - 1] };
                    let mut longest = 0;
                    for &end in &self.cur.ends[fields] {
                        longest = longest.max(end - start);
                        start = end;
                    }
                    if longest as i64 > field_limit(py)? {
                        return Ok(Next::Reparse(pos.byte, pos.line));
                    }
                }
                self.next += 1;
                self.line = self.cur.lines[r];
                if fed.is_some() {
                    // The next record starts where the next row does.
                    self.resume = Some(match self.cur.rows.get(r + 1) {
                        Some((_, p)) => Resume::At { at: p.byte, lf: false },
                        None => Resume::At { at: self.cur.end_byte, lf: self.cur.end_lf },
                    });
                }
                return self.cur.row_list(py, r, nonnumeric, strs, name).map(Next::Row);
            }
            match self.end.take() {
                Some(Err(e)) => {
                    if fed.is_some() {
                        // Likewise for the record the error stopped in.
                        if let (Some((at, line)), Some(p)) = (self.cur.err_start, e.position()) {
                            if (p.byte.saturating_sub(at)) as i64 > field_limit(py)? {
                                return Ok(Next::Reparse(at, line));
                            }
                        }
                        self.line = self.cur.end_line;
                        // As in `NativeSource::next`.
                        self.resume = match e.position() {
                            Some(p)
                                if e.is_data() && !matches!(e.kind(), ErrorKind::UnexpectedEof) =>
                            {
                                Some(Resume::LineOf(p.byte))
                            }
                            _ => None,
                        };
                        return Err(text_error(py, e, stash));
                    }
                    self.line = self.cur.end_line;
                    return Err(map_error(e, stash));
                }
                Some(Ok(false)) => {
                    self.line = self.cur.end_line;
                    self.done = true;
                }
                Some(Ok(true)) | None => {}
            }
            if self.done {
                self.resume = None;
                return Ok(Next::End);
            }
            self.fetch(py, nonnumeric, strs.joins(), fed.as_deref_mut())?;
            if let Some(f) = fed.as_deref_mut() {
                f.forget_before(self.cur.start_byte);
                f.stream.origins.need_from(self.cur.start_byte);
            }
        }
    }

    /// Replaces the handed-out batch with the next one: from the thread if
    /// it runs, else scanned here (GIL released), and then the thread is
    /// started if there is more to read. A fed reader starts its thread at
    /// once and keeps it fed while it waits.
    fn fetch(
        &mut self,
        py: Python<'_>,
        nonnumeric: bool,
        joins: bool,
        mut fed: Option<&mut Feeder>,
    ) -> PyResult<()> {
        let spent = std::mem::take(&mut self.cur);
        self.next = 0;
        if fed.is_some() && self.full.is_none() && self.rdr.is_some() {
            self.start_thread(nonnumeric, joins);
        }
        if fed.is_some() && self.full.is_none() {
            self.done = true;
            return Err(PyRuntimeError::new_err("fastcsv: could not start a read-ahead thread"));
        }
        if let Some(full) = self.full.take() {
            let mut full = full.into_inner().unwrap_or_else(|e| e.into_inner());
            if let Some(empty) = &self.empty {
                let _ = empty.send(spent);
            }
            self.waiting.store(true, Ordering::Relaxed);
            let got = loop {
                if let Some(f) = fed.as_deref_mut() {
                    f.top_up(py);
                }
                // The receiver goes to the GIL-free closure and comes back.
                let (back, got) = py.allow_threads(move || {
                    let got = full.recv();
                    (full, got)
                });
                full = back;
                match got {
                    Ok(Msg::Need) => continue,
                    Ok(Msg::Filled(b, end)) => break Some((b, end)),
                    Err(_) => break None,
                }
            };
            self.waiting.store(false, Ordering::Relaxed);
            self.full = Some(Mutex::new(full));
            let Some((mut b, end)) = got else {
                self.done = true;
                return Err(PyRuntimeError::new_err("fastcsv: the read-ahead thread stopped"));
            };
            if !b.prepared {
                py.allow_threads(|| b.prepare());
            }
            self.cur = b;
            self.end = Some(end);
            return Ok(());
        }
        let Some(rdr) = &mut self.rdr else {
            self.done = true;
            return Ok(());
        };
        let mut b = spent;
        let end = py.allow_threads(|| {
            let end = b.load(rdr.get(), nonnumeric, joins, BATCH_BYTES);
            b.prepare();
            end
        });
        let more = matches!(end, Ok(true));
        self.cur = b;
        self.end = Some(end);
        if more {
            self.start_thread(nonnumeric, joins);
        }
        Ok(())
    }

    /// Hands the reader to a new read-ahead thread. If no thread can be
    /// started, reading goes on here.
    fn start_thread(&mut self, nonnumeric: bool, joins: bool) {
        let (rdr_tx, rdr_rx) = mpsc::channel::<HeldReader>();
        let (full_tx, full_rx) = match self.chan.take() {
            Some((tx, rx)) => (tx, rx.into_inner().unwrap_or_else(|e| e.into_inner())),
            None => mpsc::channel::<Msg>(),
        };
        let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
        let waiting = self.waiting.clone();
        let spawned =
            std::thread::Builder::new().name("fastcsv-read-ahead".into()).spawn(move || {
                let Ok(mut rdr) = rdr_rx.recv() else {
                    return;
                };
                // Reads on after an error, as the row-by-row reader does,
                // until the input ends or the Python reader is dropped.
                while let Ok(mut b) = empty_rx.recv() {
                    let end = b.load_for(rdr.get(), nonnumeric, joins, &waiting);
                    let last = matches!(end, Ok(false));
                    if full_tx.send(Msg::Filled(b, end)).is_err() || last {
                        return;
                    }
                }
            });
        if spawned.is_err() {
            return;
        }
        let rdr = self.rdr.take().expect("the reader is here until now");
        if rdr_tx.send(rdr).is_err() {
            return; // the thread is gone already (cannot happen)
        }
        // Two batches to fill while the current one is handed out; made
        // here, so that the thread allocates nothing of its own.
        for _ in 0..2 {
            let _ = empty_tx.send(Batch::reserved(BATCH_BYTES));
        }
        self.full = Some(Mutex::new(full_rx));
        self.empty = Some(empty_tx);
    }
}

/// Scans `rdr` in batches without the GIL, handing each batch (and the
/// string maker) to `each` and checking for signals (Ctrl-C) between batches. When the
/// input is larger than one batch and reading it calls no Python code
/// (`threaded`), a second thread scans and decodes the next batch while
/// this one builds Python objects from the last.
#[allow(clippy::too_many_arguments)]
fn bulk<'py>(
    py: Python<'py>,
    rdr: &mut HeldReader,
    threaded: bool,
    nonnumeric: bool,
    strs: &mut StrMaker,
    stash: &PyErrStash,
    mut each: impl FnMut(&Batch, &mut StrMaker) -> PyResult<()>,
) -> PyResult<()> {
    let joins = strs.joins();
    // Builds one batch's rows; then its error, if any. Whether to go on.
    let mut consume = |batch: &Batch, end: Result<bool, CoreError>| -> PyResult<bool> {
        each(batch, strs)?;
        let more = end.map_err(|e| map_error(e, stash))?;
        if let Some(e) = stash.take() {
            return Err(e);
        }
        py.check_signals()?;
        Ok(more)
    };
    // Grown as needed by this thread: small inputs allocate little.
    let mut batch = Batch::default();
    let mut load = |batch: &mut Batch| {
        py.allow_threads(|| {
            let end = batch.load(rdr.get(), nonnumeric, joins, BATCH_BYTES);
            batch.prepare();
            end
        })
    };
    let end = load(&mut batch);
    if !threaded || !matches!(end, Ok(true)) {
        let mut end = end;
        while consume(&batch, end)? {
            end = load(&mut batch);
        }
        return Ok(());
    }
    let (full_tx, full_rx) = mpsc::sync_channel::<(Batch, Result<bool, CoreError>)>(1);
    let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
    // Three batches in all: one being built, one waiting, one being filled.
    for _ in 0..2 {
        let _ = empty_tx.send(Batch::reserved(BATCH_BYTES));
    }
    let waiting = AtomicBool::new(false);
    std::thread::scope(|s| {
        let waiting = &waiting;
        let worker = s.spawn(move || loop {
            let Ok(mut b) = empty_rx.recv() else {
                return; // the calling thread is done
            };
            let end = b.load_for(rdr.get(), nonnumeric, joins, waiting);
            let more = matches!(end, Ok(true));
            if full_tx.send((b, end)).is_err() || !more {
                return;
            }
        });
        let mut result = consume(&batch, end);
        let _ = empty_tx.send(batch);
        let mut rx = Some(full_rx);
        while let Ok(true) = result {
            // The receiver goes to the GIL-free closure and comes back.
            let r = rx.take().expect("receiver");
            waiting.store(true, Ordering::Relaxed);
            let (r, got) = py.allow_threads(move || {
                let got = r.recv();
                (r, got)
            });
            waiting.store(false, Ordering::Relaxed);
            rx = Some(r);
            let Ok((mut b, end)) = got else {
                break; // the worker panicked: reported by join below
            };
            if !b.prepared {
                py.allow_threads(|| b.prepare());
            }
            result = consume(&b, end);
            let _ = empty_tx.send(b);
        }
        // Dropping the channel ends stops the worker after its current
        // batch (or wakes it from waiting for an empty one).
        drop(rx);
        drop(empty_tx);
        let joined = py.allow_threads(move || worker.join());
        match joined {
            Err(_) => Err(PyRuntimeError::new_err("fastcsv: the scanning thread panicked")),
            Ok(()) => result.map(|_| ()),
        }
    })
}

struct Bulk {
    /// Reading the input calls no Python code (no stream object).
    native_io: bool,
    pd: PyDialect,
    rdr: HeldReader,
    strs: StrMaker,
    stash: PyErrStash,
    name: Option<String>,
}

fn open_bulk(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
) -> PyResult<Bulk> {
    let mut spec = Spec::from_dict(spec)?;
    let pd = PyDialect::from_py(dialect)?;
    let stash = PyErrStash::default();
    let native_io = spec.fd.is_some() || spec.path.is_some();
    let rdr = open_native(py, &pd, &mut spec, &stash)?;
    let name = spec.name.clone().or_else(|| spec.path.as_ref().map(|p| p.display().to_string()));
    let strs = StrMaker::new(&spec.errors, spec.intern)?.decode_first(dialect, spec.filter);
    Ok(Bulk { native_io, pd, rdr, strs, stash, name })
}

/// A core reader's columns that may move between threads: built only by
/// A source of batches that parses (or waits for its threads) without the
/// GIL: a consumer that calls it holding the GIL (checked, as a consumer
/// may call from any thread) lets it go meanwhile, so that other Python
/// threads run.
struct GilFree<S>(S);

impl<S: arrow::ffi::BatchSource + Send> arrow::ffi::BatchSource for GilFree<S> {
    fn names(&self) -> &[String] {
        self.0.names()
    }
    fn types(&self) -> Vec<arrow::DataType> {
        self.0.types()
    }
    fn next_batch(&mut self) -> fastcsv::Result<Option<arrow::ColumnBatch>> {
        // SAFETY: callable from any thread once the interpreter runs, as
        // it does while this extension's objects exist.
        if unsafe { ffi::PyGILState_Check() } == 1 {
            let this = &mut self.0;
            Python::with_gil(|py| py.allow_threads(move || this.next_batch()))
        } else {
            self.0.next_batch()
        }
    }
}

/// What an [`ArrowStream`] reads from.
type BatchBox = Box<dyn arrow::ffi::BatchSource + Send>;

/// An Arrow C struct that a `PyCapsule` owns (the Arrow PyCapsule
/// interface): released when the capsule goes, unless a consumer moved it
/// out (leaving its `release` null).
trait CapsuleValue: Sized {
    /// The capsule's name, which consumers check.
    const NAME: &'static std::ffi::CStr;
    /// Calls the struct's `release`, if it has one.
    fn release(&mut self);
}

impl CapsuleValue for arrow::ffi::ArrowArrayStream {
    const NAME: &'static std::ffi::CStr = c"arrow_array_stream";
    fn release(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: a live stream made by `export_stream`, released once
            // (its `release` clears itself).
            unsafe { release(self) }
        }
    }
}

impl CapsuleValue for arrow::ffi::ArrowSchema {
    const NAME: &'static std::ffi::CStr = c"arrow_schema";
    fn release(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: as for the stream, with `export_schema`.
            unsafe { release(self) }
        }
    }
}

/// Frees a capsule made by [`into_capsule`]: releases its value, then
/// frees its memory.
unsafe extern "C" fn drop_capsule<T: CapsuleValue>(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls this with the capsule being freed, made by
    // `into_capsule::<T>` around a boxed `T` under `T::NAME`; the box is
    // taken back once, here.
    unsafe {
        let p = ffi::PyCapsule_GetPointer(capsule, T::NAME.as_ptr());
        if p.is_null() {
            ffi::PyErr_Clear();
            return;
        }
        Box::from_raw(p.cast::<T>()).release();
    }
}

/// `value` in a new capsule named `T::NAME`, which owns it.
fn into_capsule<T: CapsuleValue>(py: Python<'_>, value: T) -> PyResult<Bound<'_, PyAny>> {
    let raw = Box::into_raw(Box::new(value));
    // SAFETY: we hold the GIL; the capsule takes the box (freed by
    // `drop_capsule::<T>`), and its name is static. On failure it returns
    // NULL with an exception set, and the box is freed here.
    unsafe {
        let cap = ffi::PyCapsule_New(raw.cast(), T::NAME.as_ptr(), Some(drop_capsule::<T>));
        if cap.is_null() {
            Box::from_raw(raw).release();
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, cap))
    }
}

/// The columns of a native input, as a stream of Arrow record batches of
/// `utf8` columns: pass it to `pyarrow.table`, `polars.DataFrame`,
/// `duckdb.sql("from s")` or anything that reads the Arrow PyCapsule
/// interface (`__arrow_c_stream__`). It can be read once.
#[pyclass(module = "fastcsv._fastcsv", name = "ArrowStream")]
pub struct ArrowStream {
    names: Vec<String>,
    types: Vec<arrow::DataType>,
    /// How text columns are exported.
    strings: arrow::ffi::Strings,
    /// Until read (a `Mutex` only to make the class `Sync`: pyo3 hands out
    /// `&mut self` alone).
    cols: Option<Mutex<BatchBox>>,
}

#[pymethods]
impl ArrowStream {
    /// The column names.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// The column types' names (`utf8`, `int64`, `float64`, `bool`,
    /// `date32[day]`, `timestamp[s]`, `timestamp[ns, tz=UTC]`, ...).
    #[getter]
    fn column_types(&self) -> Vec<&'static str> {
        self.types.iter().map(|t| t.name()).collect()
    }

    /// The Arrow PyCapsule interface: a capsule holding an
    /// `ArrowArrayStream` of the batches, which the caller reads. A
    /// `requested_schema` is not looked at (the columns are `utf8`, and
    /// casting is the consumer's).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = requested_schema;
        let Some(cols) = self.cols.take() else {
            return Err(PyValueError::new_err("this Arrow stream was already read"));
        };
        let cols = cols.into_inner().unwrap_or_else(|e| e.into_inner());
        into_capsule(py, arrow::ffi::export_stream_as(cols, self.strings))
    }

    /// The Arrow PyCapsule interface: a capsule holding the
    /// `ArrowSchema` of the batches (a struct of nullable fields), which
    /// consumers may ask for before the stream, and after it.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        into_capsule(py, arrow::ffi::export_schema_as(&self.names, &self.types, self.strings))
    }

    fn __repr__(&self) -> String {
        let state = if self.cols.is_some() { "unread" } else { "read" };
        format!("<fastcsv.ArrowStream of {} columns, {state}>", self.names.len())
    }
}

/// Rows `read_arrow(types="infer")` infers the column types from.
const INFER_ROWS: usize = 64 * 1024;

/// What `read_arrow`'s `types` asks for.
enum TypesArg {
    /// Every column `utf8`.
    Text,
    /// Inferred from the first [`INFER_ROWS`] rows.
    Infer,
    /// Given for some columns (by index), the others `utf8`.
    Given(Vec<(ColumnKey, arrow::DataType)>),
}

/// A column named in `types` or `columns`: by name or by index.
enum ColumnKey {
    Name(String),
    Index(usize),
}

impl ColumnKey {
    /// `k` as a column's name or index (`what`: the argument, for errors).
    fn from_py(k: &Bound<'_, PyAny>, what: &str) -> PyResult<ColumnKey> {
        if let Ok(name) = k.extract::<String>() {
            Ok(ColumnKey::Name(name))
        } else if k.is_instance_of::<pyo3::types::PyBool>() {
            Err(PyTypeError::new_err(format!("a column in {what} is a name or an index")))
        } else if let Ok(i) = k.extract::<usize>() {
            Ok(ColumnKey::Index(i))
        } else {
            Err(PyTypeError::new_err(format!(
                "a column in {what} is a name or an index, not {}",
                k.repr()?
            )))
        }
    }

    /// The index of the column among `names` (`what`: the argument, for
    /// errors).
    fn index(&self, names: &[String], what: &str) -> PyResult<usize> {
        match self {
            ColumnKey::Name(n) => names.iter().position(|x| x == n).ok_or_else(|| {
                PyValueError::new_err(format!("{what} names a column {n:?} the file does not have"))
            }),
            ColumnKey::Index(i) if *i < names.len() => Ok(*i),
            ColumnKey::Index(i) => Err(PyValueError::new_err(format!(
                "{what} names column {i}, but there are {} columns",
                names.len()
            ))),
        }
    }
}

/// What `read_arrow`'s `columns` asks for: the columns to read, by name or
/// index, in their order; `None` for all.
fn column_keys(columns: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<ColumnKey>>> {
    let Some(c) = columns.filter(|c| !c.is_none()) else { return Ok(None) };
    if c.is_instance_of::<PyString>()
        || c.is_instance_of::<PyBytes>()
        || c.is_instance_of::<PyDict>()
    {
        return Err(PyTypeError::new_err(format!(
            "columns must be a list of column names or indices, not {}",
            c.get_type().name()?
        )));
    }
    let mut keys = Vec::new();
    for k in c
        .try_iter()
        .map_err(|_| PyTypeError::new_err("columns must be a list of column names or indices"))?
    {
        keys.push(ColumnKey::from_py(&k?, "columns")?);
    }
    Ok(Some(keys))
}

/// A list of strings (`null_values`, ...: `what`), as UTF-8 bytes; `None`
/// when not given.
fn words(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Vec<Vec<u8>>>> {
    let Some(v) = v.filter(|v| !v.is_none()) else { return Ok(None) };
    let bad = || PyTypeError::new_err(format!("{what} must be a list of str"));
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
        return Err(bad());
    }
    let mut out = Vec::new();
    for w in v.try_iter().map_err(|_| bad())? {
        let w = w?;
        let s = w.downcast::<PyString>().map_err(|_| bad())?;
        out.push(s.to_str()?.as_bytes().to_vec());
    }
    Ok(Some(out))
}

/// The indices among `names` of the columns `keys` asks for, each once.
fn resolve_columns(keys: &[ColumnKey], names: &[String]) -> PyResult<Vec<usize>> {
    let mut idx = Vec::with_capacity(keys.len());
    let mut seen = vec![false; names.len()];
    for k in keys {
        let j = k.index(names, "columns")?;
        if std::mem::replace(&mut seen[j], true) {
            return Err(PyValueError::new_err(format!(
                "columns names column {:?} twice",
                names[j]
            )));
        }
        idx.push(j);
    }
    Ok(idx)
}

impl TypesArg {
    fn from_py(types: Option<&Bound<'_, PyAny>>) -> PyResult<TypesArg> {
        let Some(t) = types.filter(|t| !t.is_none()) else { return Ok(TypesArg::Text) };
        if let Ok(s) = t.extract::<String>() {
            return match s.as_str() {
                "infer" => Ok(TypesArg::Infer),
                _ => Err(PyValueError::new_err(format!(
                    "types must be None, 'infer' or a dict of column types, not {s:?}"
                ))),
            };
        }
        let Ok(d) = t.downcast::<PyDict>() else {
            return Err(PyTypeError::new_err(format!(
                "types must be None, 'infer' or a dict of column types, not {}",
                t.get_type().name()?
            )));
        };
        let mut given = Vec::new();
        for (k, v) in d.iter() {
            let key = ColumnKey::from_py(&k, "types")?;
            // A pyarrow type's `str` is its name (`int64`, `double`, ...).
            let name = v.str()?.to_string();
            let ty = arrow::DataType::from_name(&name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown column type {name:?}: types are 'int64', 'float64', 'bool', \
                     'date32', 'timestamp[s]', 'timestamp[ns]', 'timestamp[s, tz=UTC]', \
                     'timestamp[ns, tz=UTC]' and 'utf8'"
                ))
            })?;
            given.push((key, ty));
        }
        Ok(TypesArg::Given(given))
    }

    /// The types of the columns `picked` (all when `None`) of a file
    /// whose columns are named `names`, when given. (A column given a type
    /// but not picked is left out.)
    fn resolve(
        &self,
        names: &[String],
        picked: Option<&[usize]>,
    ) -> PyResult<Option<Vec<arrow::DataType>>> {
        let TypesArg::Given(given) = self else { return Ok(None) };
        let mut types = vec![arrow::DataType::Utf8; names.len()];
        for (key, ty) in given {
            types[key.index(names, "types")?] = *ty;
        }
        Ok(Some(match picked {
            Some(p) => p.iter().map(|&j| types[j]).collect(),
            None => types,
        }))
    }
}

/// The columns of a native input as an Arrow stream (see [`ArrowStream`]).
#[pyfunction]
#[pyo3(signature = (dialect, spec, header, batch_rows, names=None, threads=1, types=None, string_view=false, columns=None, null_values=None, true_values=None, false_values=None, strings_can_be_null=false))]
#[allow(clippy::too_many_arguments)]
fn _read_arrow(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
    header: bool,
    batch_rows: usize,
    names: Option<Vec<String>>,
    threads: usize,
    types: Option<&Bound<'_, PyAny>>,
    string_view: bool,
    columns: Option<&Bound<'_, PyAny>>,
    null_values: Option<&Bound<'_, PyAny>>,
    true_values: Option<&Bound<'_, PyAny>>,
    false_values: Option<&Bound<'_, PyAny>>,
    strings_can_be_null: bool,
) -> PyResult<ArrowStream> {
    let strings = if string_view { arrow::ffi::Strings::View } else { arrow::ffi::Strings::Utf8 };
    let types = TypesArg::from_py(types)?;
    let keys = column_keys(columns)?;
    let mut spellings = arrow::Spellings::default().strings_can_be_null(strings_can_be_null);
    if let Some(v) = words(null_values, "null_values")? {
        spellings = spellings.nulls(v);
    }
    if let Some(v) = words(true_values, "true_values")? {
        spellings = spellings.trues(v);
    }
    if let Some(v) = words(false_values, "false_values")? {
        spellings = spellings.falses(v);
    }
    let mut spec = Spec::from_dict(spec)?;
    let pd = PyDialect::from_py(dialect)?;
    if pd.nonnumeric {
        return Err(PyValueError::new_err(
            "read_arrow gives text columns: quoting=QUOTE_NONNUMERIC is not supported",
        ));
    }
    if spec.errors != "strict" {
        return Err(PyValueError::new_err(
            "read_arrow checks that every value is UTF-8: errors must be 'strict'",
        ));
    }
    let stash = PyErrStash::default();
    // A whole file on several threads: in exact parts, a few per thread.
    let size = match (&spec.path, &spec.part, threads > 1) {
        (Some(p), None, true) => std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len()),
        _ => None,
    };
    if let (Some(size), Some(path)) = (size, spec.path.clone()) {
        if size >= 2 * PAR_ARROW_MIN_PART {
            let part = (size / (4 * threads as u64)).clamp(PAR_ARROW_MIN_PART, 64 << 20);
            let b = native_builder(py, &pd, &spec)?;
            let cols = py.allow_threads(|| {
                let mut c = arrow::ParColumns::from_path(&b, &path, header, threads, part)?;
                c.batch_rows(batch_rows).string_view(string_view);
                Ok::<_, CoreError>(c)
            });
            let mut cols = cols.map_err(|e| map_error(e, &stash))?;
            let all = cols.names().to_vec();
            let picked = keys.as_deref().map(|k| resolve_columns(k, &all)).transpose()?;
            if let Some(p) = &picked {
                cols.select(p).map_err(|e| map_error(e, &stash))?;
            }
            cols.set_spellings(spellings);
            let names = cols.names().to_vec();
            if let Some(t) = types.resolve(&all, picked.as_deref())? {
                cols.set_types(t).map_err(|e| map_error(e, &stash))?;
            } else if let TypesArg::Infer = types {
                let inferred = py.allow_threads(|| cols.infer_types(INFER_ROWS));
                inferred.map_err(|e| map_error(e, &stash))?;
            }
            let types = cols.types();
            let src: BatchBox = Box::new(GilFree(cols));
            return Ok(ArrowStream { names, types, strings, cols: Some(Mutex::new(src)) });
        }
    }
    let rdr = match spec.stream.take() {
        // A stream is read through its Python methods, which a consumer's
        // thread could not call while the thread holding the GIL waits for
        // that consumer (DuckDB): it is read whole now.
        Some(obj) => {
            let mut data = Vec::new();
            let read = PyStream::new(py, obj.bind(py), &stash)?.read_to_end(&mut data);
            read.map_err(|e| stash.take().unwrap_or_else(|| PyOSError::new_err(e.to_string())))?;
            HeldReader::new(native_builder(py, &pd, &spec)?.from_reader(io::Cursor::new(data)))
        }
        None => open_native(py, &pd, &mut spec, &stash)?,
    };
    // The header (or first record) is read without the GIL.
    let mut cols = py
        .allow_threads(move || {
            let rdr = rdr;
            match names {
                Some(names) => arrow::Columns::with_names(rdr.into_inner(), names),
                None => arrow::Columns::with_header_row(rdr.into_inner(), header),
            }
        })
        .map_err(|e| map_error(e, &stash))?;
    cols.batch_rows(batch_rows).string_view(string_view);
    let all = cols.names().to_vec();
    let picked = keys.as_deref().map(|k| resolve_columns(k, &all)).transpose()?;
    if let Some(p) = &picked {
        cols.select(p).map_err(|e| map_error(e, &stash))?;
    }
    cols.set_spellings(spellings);
    let names = cols.names().to_vec();
    if let Some(t) = types.resolve(&all, picked.as_deref())? {
        cols.set_types(t).map_err(|e| map_error(e, &stash))?;
    } else if let TypesArg::Infer = types {
        let c = &mut cols;
        let inferred = py.allow_threads(move || c.infer_types(INFER_ROWS));
        inferred.map_err(|e| map_error(e, &stash))?;
    }
    let types = cols.types();
    let src: BatchBox = Box::new(GilFree(cols));
    Ok(ArrowStream { names, types, strings, cols: Some(Mutex::new(src)) })
}

/// The smallest part a file is cut into for `read_arrow` on several
/// threads (a file under two of them is read on one).
const PAR_ARROW_MIN_PART: u64 = 4 << 20;

/// The splitter of a Python dialect, and the path it reads.
/// Its parts are settled with the first non-empty row as a header row
/// (what `read_columns` and `read_arrow` take as one): it is always the
/// first part's.
fn splitter(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Spec,
) -> PyResult<(Splitter, PathBuf, ReaderBuilder)> {
    let pd = PyDialect::from_py(dialect)?;
    let path = spec.path.clone().ok_or_else(|| PyTypeError::new_err("a path is needed"))?;
    let d = pd.core(spec.filter, core_limit(field_limit(py)?)?, true)?;
    let d = d.to_builder().headers(true).build().map_err(|e| unsupported(&e.message()))?;
    let mut b = ReaderBuilder::new();
    b.dialect(d.clone());
    Ok((Splitter::new(&d), path, b))
}

type PartTuple = (usize, u64, u64, u64, u64);

fn part_tuples(parts: Vec<fastcsv::split::Part>) -> Vec<PartTuple> {
    parts.into_iter().map(|p| (p.index, p.start, p.end, p.lines, p.records)).collect()
}

/// The parts of a file cut into ranges of `size` bytes, summarised on
/// every CPU without the GIL.
#[pyfunction]
fn _split(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
    size: u64,
) -> PyResult<Vec<PartTuple>> {
    let spec = Spec::from_dict(spec)?;
    let (sp, path, _) = splitter(py, dialect, &spec)?;
    let parts = py.allow_threads(|| sp.split_path(&path, size));
    parts.map(part_tuples).map_err(|e| map_error(e, &PyErrStash::default()))
}

/// The summary of `start..end` of a file, as bytes.
#[pyfunction]
fn _summarize<'py>(
    py: Python<'py>,
    dialect: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyDict>,
    start: u64,
    end: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let spec = Spec::from_dict(spec)?;
    let (sp, path, _) = splitter(py, dialect, &spec)?;
    let sum = py.allow_threads(|| sp.summarize_path(&path, start..end));
    let sum = sum.map_err(|e| map_error(e, &PyErrStash::default()))?;
    Ok(PyBytes::new(py, &sum.to_bytes()))
}

/// The parts of a file from the summaries of its ranges, in order.
#[pyfunction]
fn _resolve(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
    summaries: Vec<Vec<u8>>,
) -> PyResult<Vec<PartTuple>> {
    let spec = Spec::from_dict(spec)?;
    let (sp, path, b) = splitter(py, dialect, &spec)?;
    let parts = py.allow_threads(|| -> fastcsv::Result<_> {
        let sums = summaries
            .iter()
            .map(|b| fastcsv::split::Summary::from_bytes(b))
            .collect::<fastcsv::Result<Vec<_>>>()?;
        let parts = sp.resolve(&sums)?;
        sp.settle(b.from_path(&path)?, parts)
    });
    parts.map(part_tuples).map_err(|e| map_error(e, &PyErrStash::default()))
}

/// Every row of a native input, as a list of lists.
#[pyfunction]
fn _read<'py>(
    py: Python<'py>,
    dialect: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyList>> {
    let mut b = open_bulk(py, dialect, spec)?;
    // Paused until the result list exists: creating it would otherwise
    // start a collection over every row just made.
    let _gc = GcPause::new(py);
    let mut rows: Vec<Bound<'py, PyAny>> = Vec::new();
    let nn = b.pd.nonnumeric;
    let name = b.name.clone();
    bulk(py, &mut b.rdr, b.native_io, nn, &mut b.strs, &b.stash, |batch, strs| {
        rows.reserve(batch.rows.len());
        for r in 0..batch.rows.len() {
            rows.push(batch.row_list(py, r, nn, strs, name.as_deref())?.into_any());
        }
        Ok(())
    })?;
    list_from(py, rows)
}

/// The columns of a native input: `{name: [values...]}`. With
/// `header=True` the first non-empty row names the columns and longer rows
/// are an error; otherwise columns are named `"0"`, `"1"`, ... Short rows
/// are padded with `""`; empty rows are skipped.
#[pyfunction]
///
/// `given` names the columns instead of a header row (a later part of a
/// split file, whose header row is in the first part).
#[pyo3(signature = (dialect, spec, header=true, given=None))]
fn _read_columns<'py>(
    py: Python<'py>,
    dialect: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyDict>,
    header: bool,
    given: Option<Vec<Bound<'py, PyAny>>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut b = open_bulk(py, dialect, spec)?;
    let _gc = GcPause::new(py);
    let nn = b.pd.nonnumeric;
    let empty = PyString::new(py, "").into_any();
    let mut cols: Vec<Vec<Bound<'py, PyAny>>> =
        given.iter().flatten().map(|_| Vec::new()).collect();
    let mut names: Option<Vec<Bound<'py, PyAny>>> = match given {
        Some(g) => Some(g),
        None if header => None,
        None => Some(Vec::new()),
    };
    let mut nrows = 0usize;
    let name = b.name.clone();
    let name = name.as_deref();
    // One row, in order: the header, or values (padding short rows).
    let add_row = |items: &mut Vec<Bound<'py, PyAny>>,
                   names: &mut Option<Vec<Bound<'py, PyAny>>>,
                   cols: &mut Vec<Vec<Bound<'py, PyAny>>>,
                   nrows: &mut usize|
     -> PyResult<()> {
        if items.is_empty() {
            return Ok(());
        }
        let Some(names) = names else {
            let seen = PySet::empty(py)?;
            for n in items.iter() {
                if seen.contains(n)? {
                    return Err(PyValueError::new_err(format!(
                        "duplicate column name {}",
                        n.repr()?
                    )));
                }
                seen.add(n)?;
            }
            *cols = items.iter().map(|_| Vec::new()).collect();
            *names = Some(std::mem::take(items));
            return Ok(());
        };
        if items.len() > cols.len() {
            if header {
                return Err(exc::Error::new_err(format!(
                    "row {} has {} fields, the header has {}",
                    *nrows + 1,
                    items.len(),
                    cols.len()
                )));
            }
            while cols.len() < items.len() {
                names.push(PyString::new(py, &cols.len().to_string()).into_any());
                cols.push(vec![empty.clone(); *nrows]);
            }
        }
        let n = items.len();
        for (c, v) in cols.iter_mut().zip(items.drain(..)) {
            c.push(v);
        }
        for c in &mut cols[n..] {
            c.push(empty.clone());
        }
        *nrows += 1;
        Ok(())
    };
    bulk(py, &mut b.rdr, b.native_io, nn, &mut b.strs, &b.stash, |batch, strs| {
        let rows = batch.rows.len();
        let mut items = Vec::new();
        let mut r = 0;
        // The header row (the first that is not empty) on its own.
        while r < rows && names.is_none() {
            batch.row_items(py, r, nn, strs, name, &mut items)?;
            add_row(&mut items, &mut names, &mut cols, &mut nrows)?;
            r += 1;
        }
        // The values column by column, so that each column's strings lie
        // side by side in memory (the collector's passes and freeing the
        // result then walk memory in order), unless a row needs care
        // (too long for the header, decoded first, or failing: then the
        // batch goes row by row, for errors in the order of the rows).
        let widest = (r..rows).map(|k| batch.row_fields(k).0.len()).max().unwrap_or(0);
        let (before, width) = (cols.first().map_or(nrows, Vec::len), cols.len());
        if r < rows && batch.reparse.is_empty() && !(header && widest > width) {
            if let Some(names) = &mut names {
                while cols.len() < widest {
                    names.push(PyString::new(py, &cols.len().to_string()).into_any());
                    cols.push(vec![empty.clone(); before]);
                }
            }
            // The non-empty rows: their fields in the batch, and positions.
            let taken: Vec<_> =
                (r..rows).map(|k| batch.row_fields(k)).filter(|(f, _)| !f.is_empty()).collect();
            // An ASCII batch with nothing to decide per field but its text:
            // each field a copy of its bytes (as `Batch::row_list` does).
            let plain = batch.forms.is_empty() && strs.cache.is_none() && !nn;
            let filled = (|| -> PyResult<usize> {
                for (c, col) in cols.iter_mut().enumerate() {
                    col.reserve(taken.len());
                    for (fields, pos) in &taken {
                        col.push(if c >= fields.len() {
                            empty.clone()
                        } else if plain {
                            let f = fields.start + c;
                            let start = if f == 0 { 0 } else { batch.ends[f - 1] };
                            str_from_units(py, &batch.data[start..batch.ends[f]], 0x7F)?
                        } else {
                            batch.field(py, fields.start + c, c, *pos, nn, strs, name)?
                        });
                    }
                }
                Ok(taken.len())
            })();
            match filled {
                Ok(added) => {
                    nrows += added;
                    return Ok(());
                }
                Err(_) => {
                    // Undo, and let the rows in order find the first error.
                    cols.truncate(width);
                    if let Some(names) = &mut names {
                        names.truncate(width);
                    }
                    for col in &mut cols {
                        col.truncate(before);
                    }
                }
            }
        }
        while r < rows {
            batch.row_items(py, r, nn, strs, name, &mut items)?;
            add_row(&mut items, &mut names, &mut cols, &mut nrows)?;
            r += 1;
        }
        Ok(())
    })?;
    let out = PyDict::new(py);
    for (k, v) in names.unwrap_or_default().into_iter().zip(cols) {
        out.set_item(k, list_from(py, v)?)?;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// DictReader

/// Field names that are exactly a list or a tuple (what [`_dict_next`]
/// builds dicts for natively).
enum Names<'a, 'py> {
    List(&'a Bound<'py, PyList>),
    Tuple(&'a Bound<'py, pyo3::types::PyTuple>),
}

impl<'a, 'py> Names<'a, 'py> {
    fn of(names: &'a Bound<'py, PyAny>) -> Option<Names<'a, 'py>> {
        if names.is_exact_instance_of::<PyList>() {
            return names.downcast::<PyList>().ok().map(Names::List);
        }
        if names.is_exact_instance_of::<pyo3::types::PyTuple>() {
            return names.downcast::<pyo3::types::PyTuple>().ok().map(Names::Tuple);
        }
        None
    }

    fn len(&self) -> usize {
        match self {
            Names::List(l) => l.len(),
            Names::Tuple(t) => t.len(),
        }
    }

    fn get(&self, i: usize) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Names::List(l) => l.get_item(i),
            Names::Tuple(t) => t.get_item(i),
        }
    }
}

/// One `csv.DictReader` row: `dict(zip(names, row))`, then the extra
/// fields as a list under `restkey`, or `restval` for each missing name;
/// the dict is sized up front, and `restkey` and `restval` are asked for
/// only when the lengths differ.
fn dict_of_row<'py>(
    py: Python<'py>,
    names: &Names<'_, 'py>,
    row: &Bound<'py, PyList>,
    restkey: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
    restval: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (lf, lr) = (names.len(), row.len());
    // SAFETY: we hold the GIL; a new dict (room for `lf` items without a
    // resize) or NULL with an exception set, checked.
    let d = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::_PyDict_NewPresized(lf as ffi::Py_ssize_t))?
            .downcast_into_unchecked::<PyDict>()
    };
    // (Lengths are read again by `get`: a key's `__eq__` may be Python
    // code that changes the lists.)
    for i in 0..lf.min(lr) {
        d.set_item(names.get(i)?, row.get_item(i)?)?;
    }
    if lf < lr {
        d.set_item(restkey()?, row.get_slice(lf, lr))?;
    } else if lr < lf {
        let restval = restval()?;
        for i in lr..lf {
            d.set_item(names.get(i)?, &restval)?;
        }
    }
    Ok(d)
}

/// `csv.DictReader.__next__` for a `fastcsv.DictReader` itself (not a
/// subclass, so that `fieldnames` is csv's property): the same attribute
/// reads and writes in the same order, the row read and the dict built
/// here. Returns the dict, or `(row, names)` when the names are not a list
/// or tuple (or the row not a list), for the caller's stdlib code.
#[pyfunction]
fn _dict_next<'py>(py: Python<'py>, this: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let line_num = intern!(py, "line_num");
    let next = |reader: &Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: we hold the GIL; PyIter_Next returns a new reference, or
        // NULL at the end (no exception) or on error (exception set).
        let item = unsafe { ffi::PyIter_Next(reader.as_ptr()) };
        if item.is_null() {
            return Err(
                PyErr::take(py).unwrap_or_else(|| pyo3::exceptions::PyStopIteration::new_err(()))
            );
        }
        // SAFETY: a new, non-null reference.
        Ok(unsafe { Bound::from_owned_ptr(py, item) })
    };
    if this.getattr(line_num)?.eq(0)? {
        // Used only for its side effect (reads the header row).
        this.getattr(intern!(py, "fieldnames"))?;
    }
    let reader = this.getattr(intern!(py, "reader"))?;
    let mut row = next(&reader)?;
    this.setattr(line_num, reader.getattr(line_num)?)?;
    // Unlike the basic reader, DictReader does not return empty rows.
    loop {
        let empty = match row.downcast::<PyList>() {
            Ok(l) => l.is_empty(),
            Err(_) => row.eq(PyList::empty(py))?,
        };
        if !empty {
            break;
        }
        row = next(&reader)?;
    }
    // csv's `fieldnames` property: reads the header if still missing, and
    // sets `line_num`.
    let names = match this.getattr(intern!(py, "_fieldnames"))? {
        n if n.is_none() => this.getattr(intern!(py, "fieldnames"))?,
        n => {
            this.setattr(line_num, reader.getattr(line_num)?)?;
            n
        }
    };
    let list = row.downcast::<PyList>().ok().filter(|_| row.is_exact_instance_of::<PyList>());
    match (Names::of(&names), list) {
        (Some(items), Some(list)) => dict_of_row(
            py,
            &items,
            list,
            || this.getattr(intern!(py, "restkey")),
            || this.getattr(intern!(py, "restval")),
        )
        .map(Bound::into_any),
        _ => Ok(pyo3::types::PyTuple::new(py, [row, names])?.into_any()),
    }
}

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
    m.add_function(wrap_pyfunction!(_summarize, m)?)?;
    m.add_function(wrap_pyfunction!(_resolve, m)?)?;
    m.add_class::<ArrowStream>()?;
    m.add("_Unsupported", m.py().get_type::<_Unsupported>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
