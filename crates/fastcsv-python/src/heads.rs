//! `str`s and lists made by filling in CPython's object headers ourselves,
//! where the interpreter's layout was checked when the module loaded
//! (CPython 3.10 to 3.12 release builds with the GIL): ASCII strings
//! ([`new_ascii`]), UCS1 and UCS2 strings from a copied header
//! ([`WideHeads`]), and lists whose item arrays we allocate
//! ([`list_items`]). Elsewhere, and on any other interpreter, CPython's
//! own constructors make them. Used by [`crate::strings`].

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;

use std::mem::MaybeUninit;

use crate::strings::Unit;

/// A new reference to a `str` of the ASCII bytes `b` (as `csv` makes it:
/// CPython's cached string for one character), or null with an exception
/// set. The caller makes sure that every byte is below 0x80.
#[inline(always)]
pub(crate) fn new_ascii(_py: Python<'_>, b: &[u8]) -> *mut ffi::PyObject {
    debug_assert!(b.is_ascii());
    if let [c] = b {
        // SAFETY: we hold the GIL (witnessed by `_py`); a new reference
        // to a cached string, or NULL with an exception set.
        return unsafe { ffi::PyUnicode_FromOrdinal(i32::from(*c)) };
    }
    if let Some(Some(head)) = ASCII_HEAD.get() {
        if !b.is_empty() {
            // SAFETY: we hold the GIL; `head` was checked against a string
            // CPython made (see `AsciiHead`).
            return unsafe { head.make(b) };
        }
    }
    // SAFETY: we hold the GIL; a new reference or NULL with an exception
    // set.
    let s = unsafe { ffi::PyUnicode_New(b.len() as ffi::Py_ssize_t, 127) };
    if !s.is_null() {
        // SAFETY: a compact ASCII string (max 127) of `b.len()` characters
        // has exactly that many writable bytes right after its
        // `PyASCIIObject` header (and the NUL after them, already
        // written); nobody else can see it yet.
        unsafe {
            let dst = s.cast::<ffi::PyASCIIObject>().add(1).cast::<u8>();
            copy_short(b, dst);
        }
    }
    s
}

/// The header of a compact ASCII `str` as `PyUnicode_New` writes it (but
/// its reference count, type and length), when this interpreter is one
/// whose `str` layout and object creation [`new_ascii`] may repeat itself;
/// set once by [`init_ascii`].
static ASCII_HEAD: std::sync::OnceLock<Option<AsciiHead>> = std::sync::OnceLock::new();

/// A compact ASCII `str`'s header taken from one CPython made, for making
/// others without `PyUnicode_New`: `PyObject_Malloc` of the same size, this
/// header (hash not computed, not interned, its kind, compact and ASCII
/// flags, on 3.10 and 3.11 no `wstr`), a reference count of 1, the type,
/// the length, the bytes and a NUL. That is what `PyUnicode_New` does for
/// an ASCII string on CPython 3.10 to 3.12 with the GIL (release builds),
/// less its checks of arguments that are known here and the bit-by-bit
/// writes of the flags; `_Py_NewReference` adds, there, only what
/// `tracemalloc` records of the block's traceback, which it already has
/// from `PyObject_Malloc` (the same call's). Free-threaded and 3.13's
/// object creation (reference tracers) do more: those builds, debug builds
/// and other versions keep `PyUnicode_New`.
struct AsciiHead(ffi::PyASCIIObject);

// SAFETY: the header is plain data read only to be copied; its pointers
// (the type, `wstr` when present) are a static type object's address and
// null.
unsafe impl Send for AsciiHead {}
// SAFETY: as above: shared read-only.
unsafe impl Sync for AsciiHead {}

impl AsciiHead {
    /// A new `str` of the ASCII bytes `b` (at least one), or null with an
    /// exception set.
    ///
    /// # Safety
    ///
    /// The GIL is held, every byte of `b` is below 0x80, and the header was
    /// checked by [`init_ascii`].
    #[inline(always)]
    unsafe fn make(&self, b: &[u8]) -> *mut ffi::PyObject {
        let n = b.len();
        let head = std::mem::size_of::<ffi::PyASCIIObject>();
        // SAFETY: the GIL is held; `head + n + 1` is the size
        // `PyUnicode_New(n, 127)` allocates (a field's length is far below
        // its overflow check, as any Rust allocation is).
        let p = unsafe { ffi::PyObject_Malloc(head + n + 1) }.cast::<ffi::PyASCIIObject>();
        if p.is_null() {
            // SAFETY: the GIL is held; sets MemoryError, returns NULL.
            return unsafe { ffi::PyErr_NoMemory() };
        }
        // SAFETY: `p` is a fresh block of `head + n + 1` bytes, aligned as
        // `PyObject_Malloc` aligns every block (16 bytes): the header, then
        // the `n` bytes and the NUL, which is the compact ASCII layout that
        // `init_ascii` checked; nobody else can see it yet. The header's
        // copy is bitwise (the template is never dropped nor used as an
        // object), its object head then replaced by a reference count of 1
        // and the type `str`, as `_PyObject_Init` writes them.
        unsafe {
            std::ptr::copy_nonoverlapping(&self.0, p, 1);
            std::ptr::addr_of_mut!((*p).ob_base).write(ffi::PyObject {
                ob_type: std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
                ..ffi::PyObject_HEAD_INIT
            });
            (*p).length = n as ffi::Py_ssize_t;
            let dst = p.add(1).cast::<u8>();
            copy_short(b, dst);
            *dst.add(n) = 0;
        }
        p.cast()
    }
}

/// The headers of compact `str`s of kind UCS1 and UCS2 as `PyUnicode_New`
/// writes them (but their reference count, type and length), when this
/// interpreter is one whose `str` layout and object creation
/// [`crate::strings::units_raw`] may repeat itself (see [`AsciiHead`]); set once by
/// [`init_ascii`].
pub(crate) static WIDE_HEADS: std::sync::OnceLock<Option<WideHeads>> = std::sync::OnceLock::new();

/// A compact `str`'s header of each of the kinds UCS1 and UCS2, taken from
/// ones CPython made, for making others without `PyUnicode_New` (a call
/// that checks its arguments and fills the header field by field): as
/// [`AsciiHead`], `PyObject_Malloc` of the size `PyUnicode_New` asks for,
/// the header copied, a reference count of 1, the type, the length, the
/// code units and a NUL unit. UCS4 is left to `PyUnicode_New`: on CPython
/// 3.11 its header points at the string's own data (`wstr`, shared with a
/// `wchar_t` of four bytes), which no copied header can.
pub(crate) struct WideHeads {
    ucs1: ffi::PyCompactUnicodeObject,
    ucs2: ffi::PyCompactUnicodeObject,
}

// SAFETY: plain data read only to be copied; its pointers (the type, the
// `utf8` and `wstr` caches, checked null) are a static type object's
// address and nulls.
unsafe impl Send for WideHeads {}
// SAFETY: as above: shared read-only.
unsafe impl Sync for WideHeads {}

/// [`init_ascii`]'s checks for [`WideHeads`]: the header of a string of
/// `max` (0xFF or 0xFFFF) and two characters, when one of three
/// characters has the same header but its length, it is as long as
/// `sys.getsizeof` says such a string is, and its data follows the
/// header; or `None`.
fn wide_head(
    py: Python<'_>,
    sys: &Bound<'_, PyAny>,
    max: u32,
) -> PyResult<Option<ffi::PyCompactUnicodeObject>> {
    let head = std::mem::size_of::<ffi::PyCompactUnicodeObject>();
    let unit = if max <= 0xFF { 1 } else { 2 };
    let made = |n: ffi::Py_ssize_t| {
        // SAFETY: we hold the GIL; a new reference or NULL with an
        // exception set (checked).
        unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(n, max as ffi::Py_UCS4)) }
    };
    let (two, three) = (made(2)?, made(3)?);
    let size: usize = sys.call_method1("getsizeof", (&two,))?.extract()?;
    // SAFETY: both are live `str`s (we hold references), fresh from
    // `PyUnicode_New` and not yet hashed or shared; pyo3's accessors read
    // their headers as this interpreter's headers are laid out, and the
    // bitwise copies are only ever compared and copied again (never used
    // or dropped as objects).
    unsafe {
        let (p, q) = (two.as_ptr(), three.as_ptr());
        let kind = if unit == 1 { ffi::PyUnicode_1BYTE_KIND } else { ffi::PyUnicode_2BYTE_KIND };
        let a = std::ptr::read(p.cast::<ffi::PyCompactUnicodeObject>());
        let b = std::ptr::read(q.cast::<ffi::PyCompactUnicodeObject>());
        // Their bytes from the hash on (past the object head and the
        // length), but those of the state word past its eight defined bits
        // and the padding after it (four bytes before the next pointer, or
        // the end of `PyASCIIObject`), which `PyUnicode_New` does not
        // write (they hold whatever the block held: CPython never reads
        // them).
        let state = std::mem::offset_of!(ffi::PyASCIIObject, state);
        let bytes = |h: &ffi::PyCompactUnicodeObject| {
            let all = std::slice::from_raw_parts(
                (h as *const ffi::PyCompactUnicodeObject).cast::<u8>(),
                head,
            );
            [&all[state - 8..=state], &all[state + 8..]].concat()
        };
        let same = size == head + 3 * unit
            && ffi::Py_TYPE(p) == std::ptr::addr_of_mut!(ffi::PyUnicode_Type)
            && ffi::PyUnicode_IS_COMPACT(p) != 0
            && ffi::PyUnicode_IS_ASCII(p) == 0
            && ffi::PyUnicode_KIND(p) == kind
            && a._base.interned() == 0
            && a._base.length == 2
            && a._base.hash == -1
            && a.utf8.is_null()
            && a.utf8_length == 0
            && ffi::PyUnicode_DATA(p) == p.cast::<ffi::PyCompactUnicodeObject>().add(1).cast()
            && state % 8 == 0
            && bytes(&a) == bytes(&b);
        Ok(same.then_some(a))
    }
}

impl WideHeads {
    /// A new `str` of the code units `units` (at least one) of kind `T`
    /// (`u8` or `u16`), or null with an exception set.
    ///
    /// # Safety
    ///
    /// The GIL is held, the heads were checked by [`init_ascii`], and the
    /// units make a canonical string of `T`'s kind (a `u8` at least 0x80,
    /// a `u16` past 0xFF), as `strings::make::str_from_units` needs of its callers.
    #[inline(always)]
    pub(crate) unsafe fn make<T: Unit>(&self, units: &[T]) -> *mut ffi::PyObject {
        let n = units.len();
        let unit = std::mem::size_of::<T>();
        debug_assert!(unit == 1 || unit == 2);
        let template = if unit == 1 { &self.ucs1 } else { &self.ucs2 };
        let head = std::mem::size_of::<ffi::PyCompactUnicodeObject>();
        // SAFETY: the GIL is held; `head + (n + 1) * unit` is the size
        // `PyUnicode_New(n, max)` allocates for this kind (a field's
        // length is far below its overflow check).
        let p = unsafe { ffi::PyObject_Malloc(head + (n + 1) * unit) }
            .cast::<ffi::PyCompactUnicodeObject>();
        if p.is_null() {
            // SAFETY: the GIL is held; sets MemoryError, returns NULL.
            return unsafe { ffi::PyErr_NoMemory() };
        }
        // SAFETY: `p` is a fresh block of `head + (n + 1) * unit` bytes,
        // aligned as `PyObject_Malloc` aligns every block (16 bytes, and
        // `head` is a multiple of 8): the header, then `n` units and a NUL
        // unit, the compact layout `wide_head` checked for this kind;
        // nobody else can see it yet. The header's copy is bitwise, its
        // object head then replaced by a reference count of 1 and the type
        // `str`, as `_PyObject_Init` writes them. The units are read as the
        // `n * unit` bytes they are (`u8` or `u16`: no padding), copied to
        // the block's units, which they do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(template, p, 1);
            std::ptr::addr_of_mut!((*p)._base.ob_base).write(ffi::PyObject {
                ob_type: std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
                ..ffi::PyObject_HEAD_INIT
            });
            (*p)._base.length = n as ffi::Py_ssize_t;
            let dst = p.add(1).cast::<T>();
            let bytes = std::slice::from_raw_parts(
                units.as_ptr().cast::<u8>(),
                std::mem::size_of_val(units),
            );
            copy_short(bytes, dst.cast::<u8>());
            std::ptr::write_bytes(dst.add(n), 0, 1);
        }
        p.cast()
    }
}

impl WideHeads {
    /// A new `str` of `n` code units (at least one) of kind `T` (`u8` or
    /// `u16`) written by `fill`, which returns whether it wrote all of
    /// them as a canonical string of that kind; or null (with no
    /// exception set) when it did not: the block is freed unseen.
    ///
    /// # Safety
    ///
    /// The GIL is held and the heads were checked by [`init_ascii`];
    /// `fill` returns true only when it wrote all `n` units and they make
    /// a canonical string of `T`'s kind (a `u8` at least 0x80, a `u16`
    /// past 0xFF).
    #[inline(always)]
    pub(crate) unsafe fn make_with<T: Unit>(
        &self,
        n: usize,
        fill: impl FnOnce(&mut [MaybeUninit<T>]) -> bool,
    ) -> Option<*mut ffi::PyObject> {
        let unit = std::mem::size_of::<T>();
        debug_assert!((unit == 1 || unit == 2) && n > 0);
        let template = if unit == 1 { &self.ucs1 } else { &self.ucs2 };
        let head = std::mem::size_of::<ffi::PyCompactUnicodeObject>();
        // SAFETY: as in `make`: the size `PyUnicode_New(n, max)` allocates
        // for this kind.
        let p = unsafe { ffi::PyObject_Malloc(head + (n + 1) * unit) }
            .cast::<ffi::PyCompactUnicodeObject>();
        if p.is_null() {
            // SAFETY: the GIL is held; sets MemoryError, returns NULL.
            return Some(unsafe { ffi::PyErr_NoMemory() });
        }
        // SAFETY: `p` is a fresh block of `head + (n + 1) * unit` bytes
        // aligned for `T` (as in `make`): its `n` units after the header
        // are handed to `fill` as uninitialized memory, which it may only
        // write. When `fill` fails the block, never seen by anyone, goes
        // back to the allocator; otherwise the header, reference count,
        // type, length and NUL unit are written as `make` writes them.
        unsafe {
            let dst = p.add(1).cast::<MaybeUninit<T>>();
            if !fill(std::slice::from_raw_parts_mut(dst, n)) {
                ffi::PyObject_Free(p.cast());
                return None;
            }
            std::ptr::copy_nonoverlapping(template, p, 1);
            std::ptr::addr_of_mut!((*p)._base.ob_base).write(ffi::PyObject {
                ob_type: std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
                ..ffi::PyObject_HEAD_INIT
            });
            (*p)._base.length = n as ffi::Py_ssize_t;
            std::ptr::write_bytes(dst.add(n).cast::<u8>(), 0, unit);
        }
        Some(p.cast())
    }
}

/// Decides once whether [`new_ascii`] fills in `str` headers itself (see
/// [`AsciiHead`]): on CPython 3.10 to 3.12, not a debug build, when a
/// string `PyUnicode_New` makes has the layout that `pyo3`'s `PyASCIIObject`
/// describes. Called when the module is loaded.
pub(crate) fn init_ascii(py: Python<'_>) -> PyResult<()> {
    let head = ascii_head(py)?;
    let wide = match head {
        Some(_) => {
            let sys = py.import("sys")?.into_any();
            match (wide_head(py, &sys, 0xFF)?, wide_head(py, &sys, 0xFFFF)?) {
                (Some(ucs1), Some(ucs2)) => Some(WideHeads { ucs1, ucs2 }),
                _ => None,
            }
        }
        None => None,
    };
    let _ = ASCII_HEAD.set(head);
    let _ = WIDE_HEADS.set(wide);
    let _ = LIST_ITEMS.set(list_items(py)?);
    Ok(())
}

/// Whether [`crate::strings::build_list_raw`] gives a new empty list an item array of its
/// own (see [`list_items`]); set once by [`init_ascii`].
pub(crate) static LIST_ITEMS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Whether a list's item array may be made here: on CPython 3.10 to 3.12
/// with the GIL (release builds), a list is a `PyListObject` whose
/// `ob_item` is a `PyMem_Malloc` block of `allocated` slots (freed by
/// `PyMem_Free` when the list goes) and `PyList_New(0)` makes one with no
/// array (checked here). `PyList_New(n)` zeroes its array (`PyMem_Calloc`)
/// before the caller fills it; a list made empty and given an array that
/// is filled before its size is set skips that. Free-threaded builds
/// (3.13 on) lay out and free the array differently.
fn list_items(py: Python<'_>) -> PyResult<bool> {
    let v = py.version_info();
    if (v.major, v.minor) < (3, 10) || (v.major, v.minor) > (3, 12) {
        return Ok(false);
    }
    if py.import("sys")?.hasattr("gettotalrefcount")? {
        return Ok(false);
    }
    // SAFETY: we hold the GIL; a new reference or NULL with an exception
    // set (checked).
    let l = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(0))? };
    // SAFETY: `l` is a live list (we hold a reference), fresh from
    // `PyList_New(0)`; its fields are read as this interpreter lays them
    // out, which is `PyListObject` on these versions.
    Ok(unsafe {
        let p = &*l.as_ptr().cast::<ffi::PyListObject>();
        ffi::PyList_CheckExact(l.as_ptr()) != 0
            && p.ob_item.is_null()
            && p.allocated == 0
            && p.ob_base.ob_size == 0
    })
}

/// Whether [`crate::strings::units_raw`] fills in the headers of UCS1 and UCS2 `str`s
/// itself (for tests).
#[pyfunction]
pub(crate) fn _wide_headers() -> bool {
    matches!(WIDE_HEADS.get(), Some(Some(_)))
}

/// Whether [`new_ascii`] fills in `str` headers itself (for tests).
#[pyfunction]
pub(crate) fn _ascii_headers() -> bool {
    matches!(ASCII_HEAD.get(), Some(Some(_)))
}

/// [`init_ascii`]'s checks: the header to copy, or `None`.
fn ascii_head(py: Python<'_>) -> PyResult<Option<AsciiHead>> {
    let v = py.version_info();
    let sys = py.import("sys")?;
    if (v.major, v.minor) < (3, 10) || (v.major, v.minor) > (3, 12) {
        return Ok(None);
    }
    // A debug build counts references (`sys.gettotalrefcount`) and may
    // keep a list of all objects: `_Py_NewReference` does more there.
    if sys.hasattr("gettotalrefcount")? {
        return Ok(None);
    }
    // SAFETY: we hold the GIL; a new reference or NULL with an exception
    // set (checked).
    let t = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_New(2, 127))? };
    let p = t.as_ptr();
    let head = std::mem::size_of::<ffi::PyASCIIObject>();
    // Its size as CPython counts it: the header, two bytes and the NUL.
    let size: usize = sys.call_method1("getsizeof", (&t,))?.extract()?;
    // SAFETY: `p` is a live `str` (we hold a reference), fresh from
    // `PyUnicode_New` and not yet hashed or shared; pyo3's accessors
    // read its header as this interpreter's headers are laid out.
    let same = unsafe {
        let a = &*p.cast::<ffi::PyASCIIObject>();
        size == head + 3
            && ffi::Py_TYPE(p) == std::ptr::addr_of_mut!(ffi::PyUnicode_Type)
            && ffi::PyUnicode_IS_COMPACT_ASCII(p) != 0
            && a.interned() == 0
            && a.length == 2
            && a.hash == -1
            && ffi::PyUnicode_DATA(p) == p.cast::<ffi::PyASCIIObject>().add(1).cast()
    };
    if !same {
        return Ok(None);
    }
    // SAFETY: as above; a bitwise copy of its header, which is only ever
    // copied again (never used or dropped as an object).
    Ok(Some(AsciiHead(unsafe { std::ptr::read(p.cast::<ffi::PyASCIIObject>()) })))
}

/// CPython's one-character strings of the ASCII characters, by code.
pub(crate) fn ascii_ones(py: Python<'_>) -> PyResult<Box<[Py<PyAny>; 128]>> {
    let v = (0..128)
        .map(|c| {
            // SAFETY: we hold the GIL; a new reference to CPython's cached
            // string of `c`, or NULL with an exception set (checked).
            unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_FromOrdinal(c)) }
                .map(Bound::unbind)
        })
        .collect::<PyResult<Vec<_>>>()?;
    v.into_boxed_slice()
        .try_into()
        .map_err(|_| PyRuntimeError::new_err("fastcsv: the ASCII strings are not 128"))
}

/// Copies `src` to `dst`: fields of up to 64 bytes with two overlapping
/// moves (no call), longer ones with `memcpy`.
///
/// # Safety
///
/// `dst` is valid for writing `src.len()` bytes and does not overlap `src`.
#[inline(always)]
unsafe fn copy_short(src: &[u8], dst: *mut u8) {
    let n = src.len();
    let s = src.as_ptr();
    // SAFETY: in every arm, each read lies in `src` (offsets below `n`)
    // and each write in `dst[..n]`, which the caller vouches for.
    unsafe {
        match n {
            33..=64 => {
                let a = s.cast::<[u128; 2]>().read_unaligned();
                let b = s.add(n - 32).cast::<[u128; 2]>().read_unaligned();
                dst.cast::<[u128; 2]>().write_unaligned(a);
                dst.add(n - 32).cast::<[u128; 2]>().write_unaligned(b);
            }
            17..=32 => {
                let a = s.cast::<u128>().read_unaligned();
                let b = s.add(n - 16).cast::<u128>().read_unaligned();
                dst.cast::<u128>().write_unaligned(a);
                dst.add(n - 16).cast::<u128>().write_unaligned(b);
            }
            8..=16 => {
                let a = s.cast::<u64>().read_unaligned();
                let b = s.add(n - 8).cast::<u64>().read_unaligned();
                dst.cast::<u64>().write_unaligned(a);
                dst.add(n - 8).cast::<u64>().write_unaligned(b);
            }
            4..=7 => {
                let a = s.cast::<u32>().read_unaligned();
                let b = s.add(n - 4).cast::<u32>().read_unaligned();
                dst.cast::<u32>().write_unaligned(a);
                dst.add(n - 4).cast::<u32>().write_unaligned(b);
            }
            2..=3 => {
                let a = s.cast::<u16>().read_unaligned();
                let b = s.add(n - 2).cast::<u16>().read_unaligned();
                dst.cast::<u16>().write_unaligned(a);
                dst.add(n - 2).cast::<u16>().write_unaligned(b);
            }
            1 => *dst = *s,
            0 => {}
            _ => std::ptr::copy_nonoverlapping(s, dst, n),
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every length up to past the library copy's, at every offset in a
    /// word: the bytes copied exactly, none written past them.
    #[test]
    fn short_copies_copy_exactly_their_bytes() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..=140 {
            for at in 0..8 {
                let mut dst = vec![0xEEu8; 160];
                // SAFETY: `dst` holds 160 bytes, at least `n`, and is a
                // vector of its own.
                unsafe { super::copy_short(&src[at..at + n], dst.as_mut_ptr()) };
                assert_eq!(&dst[..n], &src[at..at + n], "{n} bytes from {at}");
                assert!(dst[n..].iter().all(|&b| b == 0xEE), "{n} bytes from {at}: past the end");
            }
        }
    }
}
