//! `str`s made from a field's bytes or from code units decoded already:
//! at their final length and kind, decoded by the vector decoders straight
//! into the string where the CPU has them, else through a buffer, and by
//! CPython's decoder (with the reader's error handler) for bytes that are
//! not strict UTF-8.

use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;

use crate::heads::WIDE_HEADS;
use crate::utf8::{decode_bmp, decode_ucs4, decode_utf8_into, utf8_shape, vector_shape, ExactUnit};

/// A field's text as far as it is known: bytes to decode, or code units
/// already decoded (by [`Batch::prepare`](crate::batch::Batch::prepare), without the GIL).
#[derive(Clone, Copy)]
pub(crate) enum Text<'a> {
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
    pub(crate) fn to_str<'py>(
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
pub(crate) trait Unit: Copy + Into<u32> {}

impl Unit for u8 {}

impl Unit for u16 {}

impl Unit for u32 {}

/// A `str` of the code points `units`, whose largest is at most `max`.
/// The caller makes sure that `max` names the narrowest kind that holds
/// them (0x7F: all below 0x80; 0xFF: one at least 0x80; 0xFFFF: one past
/// 0xFF; 0x10FFFF: one past 0xFFFF), so the string is canonical, and that
/// the units are of that kind's size.
pub(crate) fn str_from_units<'py, T: Unit>(
    py: Python<'py>,
    units: &[T],
    max: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let p = units_raw(py, units, max);
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, p) }
}

/// [`str_from_units`] as a new reference, or null with an exception set
/// (no `PyResult` to move around per field): strings of kind UCS1 and UCS2
/// are made from a copied header (see [`crate::heads::WideHeads`]) where this
/// interpreter allows it.
#[inline]
pub(crate) fn units_raw<T: Unit>(py: Python<'_>, units: &[T], max: u32) -> *mut ffi::PyObject {
    if let [c] = units {
        let c: u32 = (*c).into();
        if c < 0x100 {
            // CPython's cached one-character strings, as `csv` returns.
            // SAFETY: we hold the GIL; a new reference to a cached string
            // or NULL with an exception set.
            return unsafe { ffi::PyUnicode_FromOrdinal(c as i32) };
        }
    }
    let unit = std::mem::size_of::<T>();
    if let (Some(Some(heads)), true, false) =
        (WIDE_HEADS.get(), max == 0xFF && unit == 1 || max == 0xFFFF && unit == 2, units.is_empty())
    {
        // SAFETY: we hold the GIL (witnessed by `py`); the heads were
        // checked by `init_ascii`; `T` is the kind `max` names and the
        // caller makes sure (as for `str_from_units`) that the string is
        // canonical for it.
        return unsafe { heads.make(units) };
    }
    match fresh_str(py, units.len(), max, |d: &mut [T]| d.copy_from_slice(units)) {
        Ok(s) => s.into_ptr(),
        Err(e) => {
            e.restore(py);
            std::ptr::null_mut()
        }
    }
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
pub(super) fn make_str<'py>(
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
    // Decoded straight into the `str` where the CPU can; else through a
    // buffer of UTF-16 units, or of code points past U+FFFF.
    let made = vector_str_raw(py, b)
        .or_else(|| bmp_str_raw(py, b, scratch))
        .or_else(|| ucs4_str_raw(py, b));
    if let Some(p) = made {
        // SAFETY: a new reference, or NULL with an exception set.
        return unsafe { Bound::from_owned_ptr_or_err(py, p) };
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

/// A new reference to the `str` of the bytes `b` (not all ASCII) when they
/// are strict UTF-8 with every character below U+10000, or null with an
/// exception set when memory runs out; `None` for any other bytes. One
/// decoding pass into `scratch`, then a copy (narrowed when every code
/// point fits one byte); one character below U+0100 is CPython's own
/// cached string, as its decoder gives.
pub(super) fn bmp_str_raw(
    py: Python<'_>,
    b: &[u8],
    scratch: &mut Vec<u16>,
) -> Option<*mut ffi::PyObject> {
    scratch.clear();
    let (n, or) = decode_bmp(b, scratch)?;
    if or >= 0x100 {
        return Some(units_raw(py, scratch, 0xFFFF));
    }
    if n == 1 {
        return Some(units_raw(py, &[scratch[0] as u8], 0xFF));
    }
    let narrow = |d: &mut [MaybeUninit<u8>]| {
        for (o, &u) in d.iter_mut().zip(scratch.iter()) {
            o.write(u as u8);
        }
        true
    };
    if let Some(Some(heads)) = WIDE_HEADS.get() {
        // SAFETY: we hold the GIL (witnessed by `py`); the heads were
        // checked when the module was loaded; `narrow` writes all `n` (at
        // least two) units, the code points of strict UTF-8 that is not
        // ASCII and has none past U+00FF: a canonical UCS-1 string.
        if let Some(p) = unsafe { heads.make_with::<u8>(n, narrow) } {
            return Some(p);
        }
    }
    let s = fresh_str(py, n, 0xFF, |d: &mut [u8]| {
        for (o, &u) in d.iter_mut().zip(scratch.iter()) {
            *o = u as u8;
        }
    });
    Some(match s {
        Ok(s) => s.into_ptr(),
        Err(e) => {
            e.restore(py);
            std::ptr::null_mut()
        }
    })
}

/// A `str` from bytes past ASCII that are strict UTF-8, allocated at its
/// final length and kind (which [`vector_shape`] reads from the bytes)
/// and decoded straight into it by the vector decoders: no buffer in
/// between, and a field past U+FFFF decoded once. `None` where the CPU
/// has no vector decoders, for ASCII and one character (CPython's cached
/// strings, made elsewhere), and when the bytes are not strict UTF-8.
fn vector_str_raw(py: Python<'_>, b: &[u8]) -> Option<*mut ffi::PyObject> {
    let (n, kind) = vector_shape(b)?;
    if n < 2 {
        return None;
    }
    if let (Some(Some(heads)), 0 | 1) = (WIDE_HEADS.get(), kind) {
        // SAFETY: we hold the GIL (witnessed by `py`); the heads were
        // checked when the module was loaded; `fill_exact` returns true
        // only when it wrote all `n` units as a canonical string of their
        // kind.
        return unsafe {
            if kind == 0 {
                heads.make_with::<u8>(n, |d| u8::fill_exact(b, d))
            } else {
                heads.make_with::<u16>(n, |d| u16::fill_exact(b, d))
            }
        };
    }
    /// `PyUnicode_New`'s string of `n` units of `T`, filled.
    fn filled<T: ExactUnit>(
        _py: Python<'_>,
        b: &[u8],
        n: usize,
        max: u32,
    ) -> Option<*mut ffi::PyObject> {
        // SAFETY: we hold the GIL (witnessed by `_py`); a new reference or NULL with
        // an exception set (returned as it is).
        let p = unsafe { ffi::PyUnicode_New(n as ffi::Py_ssize_t, max as ffi::Py_UCS4) };
        if p.is_null() {
            return Some(p);
        }
        // SAFETY: the string is fresh and unshared; its data holds `n`
        // units of `T`, the kind `max` names. A string whose units were not
        // all written (not strict UTF-8) is released unseen: deallocation
        // reads none of them.
        unsafe {
            let d = std::slice::from_raw_parts_mut(ffi::PyUnicode_DATA(p).cast(), n);
            if T::fill_exact(b, d) {
                return Some(p);
            }
            ffi::Py_DECREF(p);
        }
        None
    }
    match kind {
        0 => filled::<u8>(py, b, n, 0xFF),
        1 => filled::<u16>(py, b, n, 0xFFFF),
        _ => filled::<u32>(py, b, n, 0x10_FFFF),
    }
}

/// A `str` from bytes that are strict UTF-8 with a character past U+FFFF
/// (called once [`bmp_str_raw`] found they are not strict UTF-8 of the
/// BMP): decoded by the vector step of [`decode_ucs4`] into a scratch
/// buffer of this thread's, then copied. `None` when they are not strict
/// UTF-8 or the CPU has no such step.
fn ucs4_str_raw(py: Python<'_>, b: &[u8]) -> Option<*mut ffi::PyObject> {
    thread_local! {
        static UNITS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    UNITS.with(|cell| {
        // Taken already only if making a string ran this again on the
        // same thread (it runs no Python code today): the caller's other
        // ways then decode.
        let mut units = cell.try_borrow_mut().ok()?;
        units.clear();
        decode_ucs4(b, &mut units)?;
        // Strict UTF-8 that `decode_bmp` turned down holds a character
        // past U+FFFF: UCS-4 is the canonical kind.
        debug_assert!(units.iter().any(|&c| c > 0xFFFF));
        Some(units_raw(py, &units, 0x10_FFFF))
    })
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
