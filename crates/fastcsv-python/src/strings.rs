//! Building Python objects from field bytes: `str`s decoded here at their
//! final kind (or by CPython's decoder with the reader's error handler),
//! the short-string cache every reader has, the `intern=True` cache, lists
//! filled in place, and the rows of the core reader as lists.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use fastcsv::{Filter, Position, Row};

use crate::utf8::{decode_bmp, decode_utf8_into, utf8_shape};

/// Fields at most this long are looked up in the `intern=True` cache.
const INTERN_MAX_LEN: usize = 24;

/// The cache stops growing at this many distinct values.
const INTERN_MAX_ENTRIES: usize = 1 << 16;

/// Fields of 2 to this many ASCII bytes are looked up in the short-string
/// cache (one-byte fields are CPython's own cached strings).
const SHORT_MAX: usize = 8;

/// Slots a row-by-row reader's short-string cache starts with (a power of
/// two): small, so that a reader of a small input makes it at once, and a
/// hit finds the slot and its string in a near cache.
const SHORT_SLOTS: usize = 1 << 12;

/// The most slots a row-by-row reader's short-string cache grows to (see
/// [`ShortStrs::grow`]).
const SHORT_SLOTS_MAX: usize = 1 << 16;

/// The cache grows once it missed this many times its slots since it was
/// made or last grew: the values that repeat do not fit in it.
const SHORT_GROW_AFTER: usize = 2;

/// Slots of a bulk read's short-string cache: every string made stays in
/// the result, so sharing more of them saves memory.
pub(crate) const SHORT_SLOTS_BULK: usize = 1 << 16;

/// Lookups per window of a column's hit-rate check.
const SHORT_WINDOW: u32 = 1024;

/// Fields of a column the cache lets pass after a window of few hits.
const SHORT_REST: u32 = 64 * SHORT_WINDOW;

/// The `str`s of recent short ASCII fields, direct-mapped by their bytes:
/// a repeated code, `NA` or small number is the same `str` again (a
/// reference count bump) instead of a new allocation, as `csv` would make.
/// A slot holds the last string that hashed to it; a miss makes the string
/// as usual and takes the slot over. Strings are immutable, so sharing
/// one between fields (and rows, and columns) is invisible but for `is`.
///
/// Each column watches its own hit rate: after each window of
/// [`SHORT_WINDOW`] lookups (but the first, which fills the cache) that
/// hit less than a quarter of the time (unique numbers, ids, timestamps),
/// where a miss costs more than the string it fails to share and takes a
/// slot from a column that repeats, the column stops looking up for the
/// next [`SHORT_REST`] of its fields and then looks again. Columns past
/// those the cache has watched so far (see [`ShortStrs::columns`]) are not
/// looked up.
///
/// A row-by-row reader's cache starts small and grows ([`ShortStrs::grow`])
/// when it keeps missing while it hits at least as often: in a file whose
/// repeating values (times, flight numbers, distances) are more than its
/// slots, values evict each other and many fields would be new strings
/// again.
pub(crate) struct ShortStrs {
    slots: Box<[ShortSlot]>,
    /// `64 - log2(slots.len())`: a hash's top bits pick its slot.
    shift: u32,
    /// Misses and hits since the cache was made, last grew or last
    /// decided not to (see [`ShortStrs::grow`]).
    misses: usize,
    hits: usize,
    /// The most slots it grows to.
    max: usize,
    cols: Vec<ColumnWatch>,
}

/// A slot of [`ShortStrs`]: the key of the field (see [`short_key`]; 0, which
/// no key is, for an empty slot) and its `str`.
type ShortSlot = (u64, Option<Py<PyAny>>);

/// A column's hit-rate check (see [`ShortStrs`]).
#[derive(Clone, Copy, Default)]
struct ColumnWatch {
    /// Lookups and hits in the current window.
    lookups: u32,
    hits: u32,
    /// Fields still to pass by without a lookup.
    resting: u32,
    /// Whether a whole window has been looked up (the cache is filled).
    warm: bool,
}

/// The most columns watched: fields of later columns are not looked up.
const SHORT_COLUMNS: usize = 4096;

/// The cache key of the `len` (2 to [`SHORT_MAX`]) bytes at `buf[at..]`,
/// or `None` when one of them is not ASCII: the bytes as a little-endian
/// word, zero-padded, with `len - 1` in the top bits of its first three
/// bytes, which are clear in ASCII. Different fields have different keys
/// (a NUL byte is not padding), and none is 0. The word is read whole
/// where eight bytes remain in `buf` (the bytes after the field are masked
/// off), which avoids copying the field into a word first.
#[inline(always)]
fn short_key(buf: &[u8], at: usize, len: usize) -> Option<u64> {
    debug_assert!((2..=SHORT_MAX).contains(&len));
    let w = match buf.get(at..at + 8) {
        Some(b) => {
            u64::from_le_bytes(b.try_into().expect("8 bytes")) & (u64::MAX >> (64 - 8 * len))
        }
        None => {
            let mut w = [0u8; 8];
            w[..len].copy_from_slice(&buf[at..at + len]);
            u64::from_le_bytes(w)
        }
    };
    if w & 0x8080_8080_8080_8080 != 0 {
        return None;
    }
    Some(w | LEN_BITS[len & 7])
}

/// `len - 1` spread over the top bits of a word's first three bytes, by
/// `len % 8` (a load instead of the shifts and masks that spread it).
const LEN_BITS: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut len = 0;
    while len < 8 {
        let n = ((len + 7) % 8) as u64;
        t[len] = (n & 1) << 7 | (n & 2) << 14 | (n & 4) << 21;
        len += 1;
    }
    t
};

impl ShortStrs {
    /// A cache of `slots` slots that grows up to `max` slots (powers of
    /// two).
    fn new(slots: usize, max: usize) -> ShortStrs {
        debug_assert!(slots.is_power_of_two() && max.is_power_of_two());
        ShortStrs {
            slots: (0..slots).map(|_| (0, None)).collect(),
            shift: 64 - slots.trailing_zeros(),
            misses: 0,
            hits: 0,
            max: max.max(slots),
            cols: Vec::new(),
        }
    }

    /// The slot of `key` in a table whose hashes are shifted by `shift`.
    /// The key's top half is folded into its bottom half first: a
    /// product's top bits, which pick the slot, see the multiplier's few
    /// low bits only for the key's top bytes, and the bytes of fields that
    /// share a first byte (`t101`, `t102`, ...) differ from the second
    /// byte on, so that without it they would crowd into fewer slots.
    #[inline(always)]
    fn slot_of(key: u64, shift: u32) -> usize {
        ((key ^ key >> 32).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
    }

    /// Four times the slots (at most `max`), the strings kept moved to
    /// their new slots (of two that meet in one, the later one stays).
    /// A direct-mapped cache misses on every value that comes back after
    /// another one took its slot: when the values that repeat (times,
    /// flight numbers, distances) are more than the slots, a small cache
    /// keeps making strings for them, and each costs more than a lookup.
    /// The cache grows when it missed [`SHORT_GROW_AFTER`] times its slots
    /// while hitting at least as often: where most lookups miss (numbers
    /// that rarely repeat), a larger table would only spread them over
    /// memory that is not in a near cache, and each lookup and eviction
    /// would cost more, so it stays as it is.
    #[cold]
    fn grow(&mut self, py: Python<'_>) {
        let n = (self.slots.len() * 4).min(self.max);
        let shift = 64 - n.trailing_zeros();
        let mut slots: Box<[ShortSlot]> = (0..n).map(|_| (0, None)).collect();
        for (key, s) in std::mem::take(&mut self.slots).into_vec() {
            let Some(s) = s else { continue };
            let old = std::mem::replace(&mut slots[Self::slot_of(key, shift)], (key, Some(s)));
            if let Some(o) = old.1 {
                o.drop_ref(py);
            }
        }
        (self.slots, self.shift, self.misses, self.hits) = (slots, shift, 0, 0);
    }

    /// Watches the first `n` columns (rows of `n` fields are coming).
    #[inline(always)]
    pub(crate) fn columns(&mut self, n: usize) {
        if self.cols.len() < n {
            self.cols.resize(n.min(SHORT_COLUMNS), ColumnWatch::default());
        }
    }

    /// A new reference to the `str` of the ASCII bytes `buf[at..end]` (2 to
    /// [`SHORT_MAX`] of them) of column `col`: from the cache, or made by
    /// [`new_ascii`] and kept; null with an exception set if that fails.
    /// `None` when the cache does not look this field up (column resting,
    /// or not watched) or a byte is not ASCII: the caller makes the
    /// string.
    #[inline(always)]
    fn get_raw(
        &mut self,
        py: Python<'_>,
        buf: &[u8],
        at: usize,
        end: usize,
        col: usize,
    ) -> Option<*mut ffi::PyObject> {
        let watch = self.cols.get_mut(col)?;
        if watch.resting > 0 {
            watch.resting -= 1;
            return None;
        }
        let key = short_key(buf, at, end - at)?;
        watch.lookups += 1;
        if watch.lookups == SHORT_WINDOW {
            if watch.warm && watch.hits < SHORT_WINDOW / 4 {
                watch.resting = SHORT_REST;
            }
            (watch.lookups, watch.hits, watch.warm) = (0, 0, true);
        }
        let slot = &mut self.slots[Self::slot_of(key, self.shift)];
        if slot.0 == key {
            if let Some(s) = &slot.1 {
                watch.hits += 1;
                self.hits += 1;
                let p = s.as_ptr();
                // SAFETY: we hold the GIL; the slot owns a reference, so
                // the object is alive; the new one is the caller's.
                unsafe { ffi::Py_INCREF(p) };
                return Some(p);
            }
        }
        let p = new_ascii(py, &buf[at..end]);
        if !p.is_null() {
            // SAFETY: we hold the GIL and `p` is a live `str` (a new
            // reference, which stays the caller's): the slot takes one
            // of its own.
            let kept = unsafe { Py::from_borrowed_ptr(py, p) };
            if let Some(old) = std::mem::replace(slot, (key, Some(kept))).1 {
                // Released here and now (we hold the GIL), not through
                // pyo3's pool of deferred decrements.
                old.drop_ref(py);
            }
            self.misses += 1;
            if self.misses >= SHORT_GROW_AFTER * self.slots.len() && self.slots.len() < self.max {
                if self.hits >= self.misses {
                    self.grow(py);
                } else {
                    (self.misses, self.hits) = (0, 0);
                }
            }
        }
        Some(p)
    }
}

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
/// [`new_units`] may repeat itself (see [`AsciiHead`]); set once by
/// [`init_ascii`].
static WIDE_HEADS: std::sync::OnceLock<Option<WideHeads>> = std::sync::OnceLock::new();

/// A compact `str`'s header of each of the kinds UCS1 and UCS2, taken from
/// ones CPython made, for making others without `PyUnicode_New` (a call
/// that checks its arguments and fills the header field by field): as
/// [`AsciiHead`], `PyObject_Malloc` of the size `PyUnicode_New` asks for,
/// the header copied, a reference count of 1, the type, the length, the
/// code units and a NUL unit. UCS4 is left to `PyUnicode_New`: on CPython
/// 3.11 its header points at the string's own data (`wstr`, shared with a
/// `wchar_t` of four bytes), which no copied header can.
struct WideHeads {
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
    /// a `u16` past 0xFF), as [`str_from_units`] needs of its callers.
    #[inline(always)]
    unsafe fn make<T: Unit>(&self, units: &[T]) -> *mut ffi::PyObject {
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
        // `str`, as `_PyObject_Init` writes them.
        unsafe {
            std::ptr::copy_nonoverlapping(template, p, 1);
            std::ptr::addr_of_mut!((*p)._base.ob_base).write(ffi::PyObject {
                ob_type: std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
                ..ffi::PyObject_HEAD_INIT
            });
            (*p)._base.length = n as ffi::Py_ssize_t;
            let dst = p.add(1).cast::<T>();
            std::ptr::copy_nonoverlapping(units.as_ptr(), dst, n);
            std::ptr::write_bytes(dst.add(n), 0, 1);
        }
        p.cast()
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

/// Whether [`build_list_raw`] gives a new empty list an item array of its
/// own (see [`list_items`]); set once by [`init_ascii`].
static LIST_ITEMS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

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

/// Whether [`units_raw`] fills in the headers of UCS1 and UCS2 `str`s
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
fn ascii_ones(py: Python<'_>) -> PyResult<Box<[Py<PyAny>; 128]>> {
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

/// Copies `src` to `dst`: fields of up to 32 bytes with two overlapping
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

/// A small, fast hasher for the intern cache (FNV-1a over 8-byte words).
#[derive(Default)]
pub(crate) struct WordHasher(u64);

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
pub(crate) struct StrMaker {
    /// Error handler name for invalid UTF-8 (`strict`, `replace`, ...).
    pub(crate) errors: std::ffi::CString,
    pub(crate) strict: bool,
    pub(crate) cache: Option<InternCache>,
    /// Short ASCII fields' recent `str`s (when `cache` is off).
    short: ShortStrs,
    /// Decoding space for [`make_str`].
    pub(crate) scratch: Vec<u16>,
    /// CPython's one-character strings of the 128 ASCII characters (what
    /// `PyUnicode_FromOrdinal` gives, and `csv` returns), taken once when
    /// first needed: a one-byte field is then a load and a reference
    /// count bump, without a call.
    ones: Option<Box<[Py<PyAny>; 128]>>,
    /// The reader's `csv` dialect, when records whose unescaping may join
    /// invalid UTF-8 are decoded first and parsed by `csv` (see
    /// [`decode_then_parse`]); `None` with a `filter`, whose removals have
    /// no `csv` counterpart.
    dialect: Option<Py<PyAny>>,
}

impl StrMaker {
    /// Records of this reader whose fields may differ when decoded first
    /// are parsed by `csv` with `dialect` (unless a filter is on).
    pub(crate) fn decode_first(mut self, dialect: &Bound<'_, PyAny>, filter: Filter) -> StrMaker {
        if filter == Filter::Off {
            self.dialect = Some(dialect.clone().unbind());
        }
        self
    }

    /// Whether to look for such records.
    pub(crate) fn joins(&self) -> bool {
        self.dialect.is_some()
    }

    pub(crate) fn new(errors: &str, intern: bool) -> PyResult<StrMaker> {
        let c = std::ffi::CString::new(errors)
            .map_err(|_| PyValueError::new_err("errors must not contain NUL"))?;
        Ok(StrMaker {
            errors: c,
            strict: errors == "strict",
            cache: intern.then(HashMap::default),
            short: ShortStrs::new(SHORT_SLOTS, SHORT_SLOTS_MAX),
            scratch: Vec::new(),
            ones: None,
            dialect: None,
        })
    }

    /// The short-string cache with `slots` slots (a power of two) instead.
    pub(crate) fn short_slots(mut self, slots: usize) -> StrMaker {
        self.short = ShortStrs::new(slots, slots);
        self
    }

    /// The slots of the short-string cache now (for tests).
    pub(crate) fn short_slots_now(&self) -> usize {
        self.short.slots.len()
    }

    /// Watches the first `n` columns in the short-string cache (rows of
    /// `n` fields are coming).
    #[inline(always)]
    pub(crate) fn columns(&mut self, n: usize) {
        self.short.columns(n);
    }

    /// A new reference to the `str` of the ASCII bytes `buf[at..end]`,
    /// field `col` of its row, through the short-string cache; null with
    /// an exception set on failure. (`buf` may go on past the field: the
    /// cache reads its key as one word.)
    #[inline(always)]
    pub(crate) fn ascii_raw(
        &mut self,
        py: Python<'_>,
        buf: &[u8],
        at: usize,
        end: usize,
        col: usize,
    ) -> *mut ffi::PyObject {
        let len = end - at;
        if len == 1 {
            return self.one(py, buf[at]);
        }
        if (2..=SHORT_MAX).contains(&len) {
            if let Some(p) = self.short.get_raw(py, buf, at, end, col) {
                return p;
            }
        }
        new_ascii(py, &buf[at..end])
    }

    /// A new reference to CPython's `str` of the ASCII byte `c` (the caller
    /// makes sure it is below 0x80); null with an exception set if the
    /// table of them cannot be made.
    #[inline(always)]
    fn one(&mut self, py: Python<'_>, c: u8) -> *mut ffi::PyObject {
        debug_assert!(c.is_ascii());
        let ones = match &self.ones {
            Some(t) => t,
            None => match ascii_ones(py) {
                Ok(t) => self.ones.insert(t),
                Err(e) => {
                    e.restore(py);
                    return std::ptr::null_mut();
                }
            },
        };
        let p = ones[usize::from(c & 0x7F)].as_ptr();
        // SAFETY: we hold the GIL; the table owns a reference, so the
        // object is alive; the new one is the caller's.
        unsafe { ffi::Py_INCREF(p) };
        p
    }

    /// [`StrMaker::ascii_raw`] as a result.
    #[inline]
    pub(crate) fn ascii<'py>(
        &mut self,
        py: Python<'py>,
        buf: &[u8],
        at: usize,
        end: usize,
        col: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = self.ascii_raw(py, buf, at, end, col);
        // SAFETY: a new reference, or NULL with an exception set.
        unsafe { Bound::from_owned_ptr_or_err(py, p) }
    }

    /// A `str` for the field bytes `b`, field `col` of its row, made from
    /// `text` (what was learnt of `b` before, possibly off the GIL). On a
    /// decoding error, `pos` describes where the field is.
    pub(crate) fn make<'py>(
        &mut self,
        py: Python<'py>,
        b: &[u8],
        text: Text<'_>,
        col: usize,
        pos: &dyn Fn() -> String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = self.make_raw(py, b, text, col, pos);
        // SAFETY: a new reference, or NULL with an exception set.
        unsafe { Bound::from_owned_ptr_or_err(py, p) }
    }

    /// [`StrMaker::make`] as a new reference, or null with the exception
    /// set (no `PyResult` to move around per field).
    #[inline]
    pub(crate) fn make_raw(
        &mut self,
        py: Python<'_>,
        b: &[u8],
        text: Text<'_>,
        col: usize,
        pos: &dyn Fn() -> String,
    ) -> *mut ffi::PyObject {
        if self.cache.is_none() {
            match text {
                Text::Ascii(a) => return self.ascii_raw(py, a, 0, a.len(), col),
                Text::Utf8(u) if (2..=SHORT_MAX).contains(&u.len()) => {
                    // `None` too when a byte is not ASCII: decoded below.
                    if let Some(p) = self.short.get_raw(py, u, 0, u.len(), col) {
                        return p;
                    }
                }
                _ => {}
            }
        }
        match self.make_slow(py, b, text, pos) {
            Ok(s) => s.into_ptr(),
            Err(e) => {
                e.restore(py);
                std::ptr::null_mut()
            }
        }
    }

    /// [`StrMaker::make`] through the `intern=True` cache, or decoded.
    fn make_slow<'py>(
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
/// are made from a copied header (see [`WideHeads`]) where this
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
pub(crate) fn line_str<'py>(
    py: Python<'py>,
    b: &[u8],
    scratch: &mut Vec<u16>,
) -> PyResult<Bound<'py, PyAny>> {
    make_str(py, b, c"surrogatepass", false, &String::new, scratch)
}

/// The float CPython's QUOTE_NONNUMERIC makes of a field.
pub(crate) fn to_float<'py>(s: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: we hold the GIL; PyNumber_Float returns a new reference or
    // NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(s.py(), ffi::PyNumber_Float(s.as_ptr())) }
}

/// A list of `n` items made by `item(i)`, filled in place. If `item`
/// fails, the partly filled list is dropped (its empty slots are NULL,
/// which lists allow).
pub(crate) fn build_list<'py>(
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

/// [`build_list`] for items made as new references (null with an
/// exception set when making one fails): nothing per item but the pointer
/// moves around.
#[inline(always)]
pub(crate) fn build_list_raw<'py>(
    py: Python<'py>,
    n: usize,
    mut item: impl FnMut(usize) -> *mut ffi::PyObject,
) -> PyResult<Bound<'py, PyList>> {
    // Whether the list is made empty and given its array here (see
    // `list_items`): its size is then set once the slots are filled.
    let own = n > 0 && LIST_ITEMS.get() == Some(&true);
    // SAFETY: we hold the GIL; a new list (of `n` NULL slots, or empty) or
    // NULL with an exception set.
    let list =
        unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(if own { 0 } else { n as _ }))? };
    let lp = list.as_ptr().cast::<ffi::PyListObject>();
    let items = if own {
        // SAFETY: we hold the GIL; a block of `n` pointers (a row's
        // fields: far below an overflow) or NULL.
        let items = unsafe { ffi::PyMem_Malloc(n * std::mem::size_of::<*mut ffi::PyObject>()) }
            .cast::<*mut ffi::PyObject>();
        if items.is_null() {
            // SAFETY: we hold the GIL; sets MemoryError (the empty list
            // goes with `list`).
            unsafe { ffi::PyErr_NoMemory() };
            return Err(PyErr::fetch(py));
        }
        // SAFETY: `LIST_ITEMS` says that this interpreter's lists are laid
        // out and freed as `list_items` describes, and this list, fresh
        // from `PyList_New(0)`, has no array and no one else sees it: it
        // takes `items` as its array of `n` slots. Its size stays 0 (what
        // the collector or anyone else would see of it) while they fill.
        unsafe {
            (*lp).ob_item = items;
            (*lp).allocated = n as ffi::Py_ssize_t;
        }
        items
    } else {
        // SAFETY: a list made by PyList_New(n) has an item array of `n`
        // pointers (NULL when `n` is 0, then never used), which no one
        // else can see or resize yet.
        unsafe { (*lp).ob_item }
    };
    for i in 0..n {
        let it = item(i);
        if it.is_null() {
            if own {
                // SAFETY: the first `i` slots hold references the list
                // owns: with its size `i`, dropping it releases them and
                // frees the array.
                unsafe { (*lp).ob_base.ob_size = i as ffi::Py_ssize_t };
            }
            // Else the partly filled list goes (its NULL slots are
            // allowed).
            return Err(PyErr::fetch(py));
        }
        // SAFETY: `i < n`, and slot `i` is still NULL or not yet counted
        // in the list's size: the list takes over the new reference.
        unsafe { *items.add(i) = it };
    }
    if own {
        // SAFETY: every slot holds a reference the list owns.
        unsafe { (*lp).ob_base.ob_size = n as ffi::Py_ssize_t };
    }
    // SAFETY: PyList_New returned a list.
    Ok(unsafe { list.downcast_into_unchecked() })
}

/// A list of exactly these items.
pub(crate) fn list_from<'py>(
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
pub(crate) struct GcPause {
    was_enabled: bool,
}

impl GcPause {
    pub(crate) fn new(_py: Python<'_>) -> GcPause {
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

/// A record's fields as Python's `csv` gives them over the decoded file:
/// its bytes `raw` decoded first (with the reader's error handler; a
/// strict failure is located in the record) and then parsed by `csv` with
/// the reader's dialect. For the rare records where splitting first could
/// differ (see `Row::unescaping_may_join_invalid_utf8`).
pub(crate) fn decode_then_parse<'py>(
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

pub(crate) fn position_text(name: Option<&str>, pos: Position, field: usize) -> String {
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
pub(crate) fn row_to_list<'py>(
    py: Python<'py>,
    row: &Row<'_>,
    nonnumeric: bool,
    strs: &mut StrMaker,
    name: Option<&str>,
) -> PyResult<Bound<'py, PyList>> {
    if strs.joins() && row.unescaping_may_join_invalid_utf8() {
        return decode_then_parse(py, row.raw(), strs, name, row.position());
    }
    strs.columns(row.len());
    build_list(py, row.len(), |i| {
        let b = row.get(i).unwrap_or_default();
        let pos = || position_text(name, row.position(), i);
        let s = strs.make(py, b, Text::Utf8(b), i, &pos)?;
        if nonnumeric && row.is_numeric(i) {
            to_float(s)
        } else {
            Ok(s)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{short_key, SHORT_MAX};
    use std::collections::HashMap;

    /// Every field of 2 to 4 bytes over an alphabet with NUL, the top ASCII
    /// byte and a non-ASCII byte, and longer ones made of them: ASCII ones
    /// have keys, all different and none 0, whether read as a whole word
    /// (bytes follow) or byte by byte (the end of the buffer); the others
    /// have none.
    #[test]
    fn short_keys_are_one_to_one_over_ascii() {
        let alphabet = [0u8, b'a', b'9', 0x7F, 0x80];
        let mut fields: Vec<Vec<u8>> = vec![Vec::new()];
        let mut all = Vec::new();
        for _ in 0..4 {
            fields = fields
                .iter()
                .flat_map(|f| alphabet.iter().map(move |&c| [&f[..], &[c]].concat()))
                .collect();
            all.extend(fields.iter().filter(|f| f.len() >= 2).cloned());
        }
        for n in 5..=SHORT_MAX {
            for f in &fields {
                all.push(f.iter().cycle().take(n).copied().collect());
                all.push(f.iter().rev().cycle().take(n).copied().collect());
            }
        }
        let mut seen: HashMap<u64, Vec<u8>> = HashMap::new();
        for f in all {
            let mut padded = f.clone();
            padded.extend_from_slice(&[0xFF; 8]);
            let (whole, alone) = (short_key(&padded, 0, f.len()), short_key(&f, 0, f.len()));
            assert_eq!(whole, alone, "{f:?}");
            match whole {
                None => assert!(!f.is_ascii(), "{f:?}"),
                Some(k) => {
                    assert!(f.is_ascii() && k != 0, "{f:?}");
                    if let Some(other) = seen.insert(k, f.clone()) {
                        assert_eq!(other, f, "two fields share the key {k:#x}");
                    }
                }
            }
        }
    }
}
