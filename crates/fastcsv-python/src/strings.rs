//! Building Python objects from field bytes: `str`s decoded at their
//! final kind ([`make`]), the short-string cache every reader has, the
//! `intern=True` cache, lists filled in place, and the rows of the core
//! reader as lists.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use fastcsv::{Filter, Position, Row};

use crate::heads::{ascii_ones, new_ascii, LIST_ITEMS};

mod make;

use make::{bmp_str_raw, make_str};
pub(crate) use make::{units_raw, Text, Unit};

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

/// Slots of the short-string cache's table of fields past ASCII (see
/// [`ShortStrs::get_wide`]): a city or name with an accent repeats as
/// often as an ASCII code does, but such fields are fewer.
const WIDE_SLOTS: usize = 1 << 10;

/// The longest field (bytes) looked up in that table.
pub(crate) const WIDE_MAX: usize = 15;

/// Rows per window of the columns' hit-rate check (at least: a bulk read
/// of columns counts a batch's rows at once).
const SHORT_WINDOW: u32 = 1024;

/// Rows over which a column is not looked up after a window of few hits.
const SHORT_REST: u32 = 64 * SHORT_WINDOW;

/// The `str`s of recent short ASCII fields, direct-mapped by their bytes:
/// a repeated code, `NA` or small number is the same `str` again (a
/// reference count bump) instead of a new allocation, as `csv` would make.
/// A slot holds the last string that hashed to it; a miss makes the string
/// as usual and takes the slot over. Strings are immutable, so sharing
/// one between fields (and rows, and columns) is invisible but for `is`.
///
/// Each column watches its own hit rate: after each window of
/// [`SHORT_WINDOW`] rows (but the first, which fills the cache) in which
/// its lookups hit less than a quarter of the time (unique numbers, ids,
/// timestamps), where a miss costs more than the string it fails to share
/// and takes a slot from a column that repeats, the column stops looking
/// up for the next [`SHORT_REST`] rows and then looks again. A lookup
/// counts one increment per field (whether the column is looked up is the
/// same word); misses are counted on their own (slower) path, and rows
/// once per row ([`ShortStrs::columns`]). Columns past those the cache has
/// watched so far are not looked up.
///
/// A row-by-row reader's cache starts small and grows ([`ShortStrs::grow`])
/// when it keeps missing while it hits at least as often: in a file whose
/// repeating values (times, flight numbers, distances) are more than its
/// slots, values evict each other and many fields would be new strings
/// again.
///
/// Fields of up to [`WIDE_MAX`] bytes past ASCII (a city with an accent,
/// a name in Cyrillic) have a table of their own ([`ShortStrs::get_wide`]),
/// of fixed size, under the same per-column check.
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
    /// Each column's lookups in the current window, or [`RESTING`] while
    /// it is not looked up: as many as the longest row's fields so far
    /// (those past [`SHORT_COLUMNS`] never are).
    lookups: Vec<u32>,
    /// Rows since the current window began.
    rows: u32,
    /// Fields of 2 to [`WIDE_MAX`] bytes, one past ASCII, by [`wide_key`]
    /// ([`WIDE_SLOTS`] slots, made on first use).
    wide: Box<[WideSlot]>,
}

/// A slot of [`ShortStrs`]' table of fields past ASCII: the field's
/// [`wide_key`] (0, which no key is, for an empty slot) and its `str`.
type WideSlot = (u128, Option<Py<PyAny>>);

/// The key of a field of 2 to [`WIDE_MAX`] bytes in [`ShortStrs`]' table
/// of fields past ASCII: its bytes, zero-padded, and its length in the
/// last byte (so that a NUL byte is not padding, and no key is 0).
#[inline(always)]
fn wide_key(b: &[u8]) -> u128 {
    debug_assert!((2..=WIDE_MAX).contains(&b.len()));
    let mut w = [0u8; 16];
    w[..b.len()].copy_from_slice(b);
    w[15] = b.len() as u8;
    u128::from_le_bytes(w)
}

/// A slot of [`ShortStrs`]: the key of the field (see [`short_key`]; 0, which
/// no key is, for an empty slot) and its `str`.
type ShortSlot = (u64, Option<Py<PyAny>>);

/// What [`ShortStrs`] counts as the lookups of a column that is not
/// looked up.
const RESTING: u32 = u32::MAX;

/// A column's hit-rate check (see [`ShortStrs`]).
#[derive(Clone, Copy, Default)]
struct ColumnWatch {
    /// Misses in the current window.
    misses: u32,
    /// Rows still to pass by without a lookup.
    resting: u32,
    /// Whether a whole window has been looked up (the cache is filled).
    warm: bool,
}

/// The most columns watched: fields of later columns are not looked up.
const SHORT_COLUMNS: usize = 4096;

/// The cache key of the `len` (2 to [`SHORT_MAX`]) bytes at `buf[at..]`,
/// or `None` when one of them is not ASCII: the bytes as a little-endian
/// word, zero-padded ([`short_word`]), with `len - 1` in the top bits of
/// its first three bytes, which are clear in ASCII. Different fields have
/// different keys (a NUL byte is not padding), and none is 0.
#[cfg(test)]
fn short_key(buf: &[u8], at: usize, len: usize) -> Option<u64> {
    short_word(buf, at, len).map(|w| w | LEN_BITS[len & 7])
}

/// The `len` (2 to [`SHORT_MAX`]) bytes at `buf[at..]` as a little-endian
/// word, zero-padded, or `None` when one of them is not ASCII.
#[inline(always)]
fn short_word(buf: &[u8], at: usize, len: usize) -> Option<u64> {
    let w = ascii_word(buf, at, len);
    (w & 0x8080_8080_8080_8080 == 0).then_some(w)
}

/// The `len` (2 to [`SHORT_MAX`]) bytes at `buf[at..]` as a little-endian
/// word, zero-padded. The word is read whole where eight bytes remain in
/// `buf` (the bytes after the field are masked off), which avoids copying
/// the field into a word first.
#[inline(always)]
fn ascii_word(buf: &[u8], at: usize, len: usize) -> u64 {
    debug_assert!((2..=SHORT_MAX).contains(&len));
    match buf.get(at..at + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")) & LEN_MASK[len & 7],
        None => {
            let mut w = [0u8; 8];
            w[..len].copy_from_slice(&buf[at..at + len]);
            u64::from_le_bytes(w)
        }
    }
}

/// The mask of a word's first `len` bytes, by `len % 8` (a load instead
/// of the shifts that make it).
const LEN_MASK: [u64; 8] = {
    let mut t = [u64::MAX; 8];
    let mut len = 1;
    while len < 8 {
        t[len] = u64::MAX >> (64 - 8 * len);
        len += 1;
    }
    t
};

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
            lookups: Vec::new(),
            rows: 0,
            wide: Box::new([]),
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

    /// Watches the first `n` columns: a row of `n` fields is coming. (A
    /// row's lookups then count against the row that came before it: the
    /// window ends a row early.)
    #[inline(always)]
    pub(crate) fn columns(&mut self, n: usize) {
        if self.lookups.len() < n {
            self.watch_more(n);
        }
        self.rows_read(1);
    }

    /// Columns up to `n` watched (those past [`SHORT_COLUMNS`] not looked
    /// up).
    #[cold]
    fn watch_more(&mut self, n: usize) {
        let watched = n.min(SHORT_COLUMNS);
        if self.cols.len() < watched {
            self.lookups.resize(watched, 0);
            self.cols.resize(watched, ColumnWatch::default());
        }
        self.lookups.resize(n, RESTING);
    }

    /// Counts `k` rows read; at the end of a window, each column that
    /// missed too often rests, and each that rested long enough looks up
    /// again (see [`ShortStrs`]).
    #[inline(always)]
    pub(crate) fn rows_read(&mut self, k: u32) {
        self.rows = self.rows.saturating_add(k);
        if self.rows >= SHORT_WINDOW {
            self.end_window();
        }
    }

    #[cold]
    fn end_window(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        for (c, looked) in self.cols.iter_mut().zip(&mut self.lookups) {
            if c.resting > 0 {
                c.resting = c.resting.saturating_sub(rows);
                *looked = if c.resting == 0 { 0 } else { RESTING };
                continue;
            }
            let hits = looked.saturating_sub(c.misses);
            if c.warm && hits * 4 < *looked {
                c.resting = SHORT_REST;
                *looked = RESTING;
            } else {
                *looked = 0;
            }
            (c.misses, c.warm) = (0, true);
        }
    }

    /// Whether column `col` is looked up now; if so, counts the lookup.
    #[inline(always)]
    fn look_up(&mut self, col: usize) -> bool {
        match self.lookups.get_mut(col) {
            Some(n) if *n != RESTING => {
                *n += 1;
                true
            }
            _ => false,
        }
    }

    /// A new reference to the `str` of the ASCII bytes `buf[at..end]` (2 to
    /// [`SHORT_MAX`] of them) of column `col`: from the cache, or made by
    /// [`crate::heads::new_ascii`] and kept; null with an exception set if that fails.
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
        let w = short_word(buf, at, end - at)?;
        if !self.look_up(col) {
            return None;
        }
        Some(self.get_word(py, buf, at, end, col, w))
    }

    /// [`ShortStrs::get_raw`] for a field of a column that is looked up,
    /// whose bytes are ASCII and read as `w` (see [`short_word`]).
    #[inline(always)]
    fn get_word(
        &mut self,
        py: Python<'_>,
        buf: &[u8],
        at: usize,
        end: usize,
        col: usize,
        w: u64,
    ) -> *mut ffi::PyObject {
        let key = w | LEN_BITS[(end - at) & 7];
        let i = Self::slot_of(key, self.shift);
        debug_assert!(i < self.slots.len());
        // SAFETY: `slot_of` keeps the top `64 - shift` bits of a word,
        // and `shift` is `64 - log2(slots.len())` (set with `slots`).
        let slot = unsafe { self.slots.get_unchecked(i) };
        if slot.0 == key {
            if let Some(s) = &slot.1 {
                self.hits += 1;
                let p = s.as_ptr();
                // SAFETY: we hold the GIL; the slot owns a reference, so
                // the object is alive; the new one is the caller's.
                unsafe { ffi::Py_INCREF(p) };
                return p;
            }
        }
        self.miss(py, &buf[at..end], col, key, i)
    }

    /// The string of the ASCII field `b` of column `col`, whose key `key`
    /// missed in slot `i`: made, and kept there.
    #[inline(never)]
    fn miss(
        &mut self,
        py: Python<'_>,
        b: &[u8],
        col: usize,
        key: u64,
        i: usize,
    ) -> *mut ffi::PyObject {
        let p = new_ascii(py, b);
        if p.is_null() {
            return p;
        }
        // SAFETY: we hold the GIL and `p` is a live `str` (a new
        // reference, which stays the caller's): the slot takes one of its
        // own.
        let kept = unsafe { Py::from_borrowed_ptr(py, p) };
        if let Some(old) = std::mem::replace(&mut self.slots[i], (key, Some(kept))).1 {
            // Released here and now (we hold the GIL), not through pyo3's
            // pool of deferred decrements.
            old.drop_ref(py);
        }
        if let Some(c) = self.cols.get_mut(col) {
            c.misses += 1;
        }
        self.misses += 1;
        if self.misses >= SHORT_GROW_AFTER * self.slots.len() && self.slots.len() < self.max {
            if self.hits >= self.misses {
                self.grow(py);
            } else {
                (self.misses, self.hits) = (0, 0);
            }
        }
        p
    }
}

impl ShortStrs {
    /// A new reference to the `str` of the field bytes `b` (2 to
    /// [`WIDE_MAX`] of them, one at least past ASCII) of column `col`:
    /// from the table of such fields, or made by `make` and kept; null
    /// with an exception set if `make` fails. `make` gives `None` where
    /// the string does not follow from the bytes alone (not strict UTF-8:
    /// an error handler's), which is then not kept. `None` when the column
    /// is not looked up now (resting, or not watched) or `make` gives
    /// `None`: the caller makes the string. The column's hit rate counts
    /// these lookups with its ASCII ones.
    #[inline]
    pub(crate) fn get_wide(
        &mut self,
        py: Python<'_>,
        b: &[u8],
        col: usize,
        make: impl FnOnce() -> Option<*mut ffi::PyObject>,
    ) -> Option<*mut ffi::PyObject> {
        if !self.look_up(col) {
            return None;
        }
        if self.wide.is_empty() {
            self.wide = (0..WIDE_SLOTS).map(|_| (0, None)).collect();
        }
        let key = wide_key(b);
        let shift = 64 - WIDE_SLOTS.trailing_zeros();
        let slot = &mut self.wide[Self::slot_of((key ^ key >> 64) as u64, shift)];
        if slot.0 == key {
            if let Some(s) = &slot.1 {
                let p = s.as_ptr();
                // SAFETY: we hold the GIL; the slot owns a reference, so
                // the object is alive; the new one is the caller's.
                unsafe { ffi::Py_INCREF(p) };
                return Some(p);
            }
        }
        let p = make()?;
        if !p.is_null() {
            // SAFETY: we hold the GIL and `p` is a live `str` (a new
            // reference, which stays the caller's): the slot takes one of
            // its own.
            let kept = unsafe { Py::from_borrowed_ptr(py, p) };
            if let Some(old) = std::mem::replace(slot, (key, Some(kept))).1 {
                old.drop_ref(py);
            }
            if let Some(c) = self.cols.get_mut(col) {
                c.misses += 1;
            }
        }
        Some(p)
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
    /// Short fields' recent `str`s (when `cache` is off).
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

    /// A new reference to the `str` of the field bytes `b`, field `col` of
    /// its row, which hold a byte past ASCII (decoded already to `units`
    /// when given: UCS-1 or UCS-2 code units, as `Batch::prepare` leaves
    /// them); through the short-string cache's table of such fields when
    /// it is short; null with an exception set on failure. On a decoding
    /// error, `pos` describes where the field is.
    #[inline]
    pub(crate) fn wide_raw(
        &mut self,
        py: Python<'_>,
        b: &[u8],
        units: Option<Text<'_>>,
        col: usize,
        pos: &dyn Fn() -> String,
    ) -> *mut ffi::PyObject {
        if self.cache.is_none() && (2..=WIDE_MAX).contains(&b.len()) {
            let scratch = &mut self.scratch;
            let make = || match units {
                Some(Text::Ucs1(u)) => Some(units_raw(py, u, 0xFF)),
                Some(Text::Ucs2(u)) => Some(units_raw(py, u, 0xFFFF)),
                Some(_) => None,
                None => bmp_str_raw(py, b, scratch),
            };
            if let Some(p) = self.short.get_wide(py, b, col, make) {
                return p;
            }
        }
        self.make_raw(py, b, units.unwrap_or(Text::Utf8(b)), col, pos)
    }

    /// A row of `n` fields is coming: the short-string cache watches its
    /// columns and counts it in its hit-rate window.
    #[inline(always)]
    pub(crate) fn columns(&mut self, n: usize) {
        self.short.columns(n);
    }

    /// Counts `k` more rows read in the short-string cache's windows (a
    /// bulk read of columns, after [`StrMaker::columns`] for the first).
    pub(crate) fn rows_read(&mut self, k: usize) {
        self.short.rows_read(u32::try_from(k).unwrap_or(u32::MAX));
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

    /// The list of a row of ASCII fields, `data[starts[i]..ends[i]]` (every
    /// byte below 0x80, as the caller knows), through the short-string
    /// cache; the caller has counted the row ([`StrMaker::columns`]). Its
    /// own loop, for the fewest instructions per field: it is what a
    /// reader of short repeated values spends its time on.
    #[inline(always)]
    pub(crate) fn ascii_row<'py>(
        &mut self,
        py: Python<'py>,
        data: &[u8],
        starts: &[u32],
        ends: &[u32],
    ) -> PyResult<Bound<'py, PyList>> {
        debug_assert!(self.cache.is_none());
        let ones = match &self.ones {
            Some(t) => t,
            None => self.ones.insert(ascii_ones(py)?),
        };
        let short = &mut self.short;
        let starts = &starts[..ends.len()];
        build_list_raw(py, ends.len(), |i| {
            let (at, end) = (starts[i] as usize, ends[i] as usize);
            let len = end.wrapping_sub(at);
            if len == 1 {
                let p = ones[usize::from(data[at] & 0x7F)].as_ptr();
                // SAFETY: we hold the GIL; the table owns a reference, so
                // the object is alive; the new one is the caller's.
                unsafe { ffi::Py_INCREF(p) };
                return p;
            }
            if (2..=SHORT_MAX).contains(&len) && short.look_up(i) {
                let w = ascii_word(data, at, len);
                return short.get_word(py, data, at, end, i, w);
            }
            new_ascii(py, &data[at..end])
        })
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
