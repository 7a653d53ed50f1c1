//! Iterators over one selected record: its CSV in pieces of the input
//! ([`CsvPieces`]), its raw fields ([`RawFields`]) and its fields
//! ([`FieldIter`]).

use super::*;

/// A record as CSV, in pieces of the input: from
/// [`SelectedRow::csv_pieces`].
#[derive(Clone, Debug)]
pub struct CsvPieces<'r> {
    pub(super) record: &'r [u8],
    /// The offsets (from the batch's offset base) of the quotes left out.
    pub(super) drops: std::slice::Iter<'r, u32>,
    /// With [`Selection::csv_columns`], and [`Selection::csv`] where the
    /// CPU has the byte compress (not empty then): the bytes kept, one bit
    /// per byte from that base, instead of `drops`.
    pub(super) keep: &'r [u64],
    /// With `keep`: delimiters to add after the bytes kept, for selected
    /// columns past the record's end (empty fields), and the delimiter.
    pub(super) extra: usize,
    pub(super) delimiter: u8,
    /// The record's start, from that base.
    pub(super) shift: usize,
    /// The next piece's start in `record` (past its end when done).
    pub(super) at: usize,
}

impl<'r> CsvPieces<'r> {
    /// No pieces.
    pub(super) fn none() -> CsvPieces<'r> {
        CsvPieces {
            record: &[],
            drops: [].iter(),
            keep: &[],
            extra: 0,
            delimiter: 0,
            shift: 0,
            at: 1,
        }
    }

    /// The bytes of `record` (at `shift` from the base of `keep`) that
    /// `keep` marks, then `extra` times `delimiter`.
    pub(super) fn kept(
        record: &'r [u8],
        keep: &'r [u64],
        shift: usize,
        (extra, delimiter): (usize, u8),
    ) -> CsvPieces<'r> {
        debug_assert!(record.is_empty() || (shift + record.len()).div_ceil(64) <= keep.len());
        CsvPieces { record, drops: [].iter(), keep, extra, delimiter, shift, at: 0 }
    }

    /// The input bytes the pieces left are taken from (with
    /// [`Selection::csv`], the record as it is in the input, without its
    /// terminator): plain RFC 4180, so a reader of one field can read it
    /// there before the pieces are joined.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n\"a\",\"b,c\"\n");
    /// let mut sel = Selection::csv();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let p = b.row(0).csv_pieces().unwrap();
    /// assert_eq!(p.input(), b"\"a\",\"b,c\"");
    /// assert_eq!(p.collect::<Vec<_>>().concat(), b"a,\"b,c\"");
    /// ```
    #[inline]
    pub fn input(&self) -> &'r [u8] {
        &self.record[self.at.min(self.record.len())..]
    }

    /// Appends the pieces left, one after the other, to `out`: the same
    /// bytes as extending it with each piece in turn. With AVX-512 VBMI2,
    /// 64 input bytes at a time through a byte compress that leaves out
    /// the dropped quotes; otherwise piece by piece, copied 32 bytes at a
    /// time (a piece is often a short field, and a call to `memcpy` per
    /// piece took a fifth of `fastcsv cat`'s time on quoted text).
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n\"1\",\"a,b\"\n3,\"4\"\n");
    /// let mut sel = Selection::csv();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let mut out = b"> ".to_vec();
    /// b.csv_run(0).1.append_to(&mut out);
    /// assert_eq!(out, b"> 1,\"a,b\"\n3,4\n");
    /// ```
    pub fn append_to(self, out: &mut Vec<u8>) {
        let rec = self.record;
        let n = rec.len();
        if !self.keep.is_empty() {
            return self.append_kept(out);
        }
        if self.at > n {
            return;
        }
        let drops = self.drops.as_slice();
        // Always true: the drops are offsets of quotes inside `rec`, in
        // order, past `at`.
        assert!(
            drops.first().is_none_or(|&d| d as usize >= self.shift + self.at)
                && drops.last().is_none_or(|&d| (d as usize) < self.shift + n),
            "CSV pieces out of order"
        );
        // Without drops, one copy (the byte compress is no faster then).
        if !drops.is_empty()
            && crate::scan::append_without(&rec[self.at..], drops, self.shift + self.at, out)
        {
            return;
        }
        let mut w = Appender::new(rec, self.at, out);
        let mut at = self.at;
        for &d in self.drops {
            let upto = d as usize - self.shift;
            w.copy(at, upto);
            at = upto + 1;
        }
        w.copy(at, n);
        w.finish();
    }
}

/// Appends pieces of `rec` (in order, not overlapping, from `from` on) to
/// `out`, 32 bytes a copy, reading past a piece only inside `rec`.
struct Appender<'a> {
    rec: &'a [u8],
    out: &'a mut Vec<u8>,
    /// Bytes of `out` written.
    len: usize,
    /// Where the next piece may start.
    next: usize,
}

impl<'a> Appender<'a> {
    const W: usize = 32;

    fn new(rec: &'a [u8], from: usize, out: &'a mut Vec<u8>) -> Appender<'a> {
        // The pieces hold at most the bytes of `rec[from..]`; a copy may
        // write up to `W - 1` bytes past a piece's end.
        out.reserve(rec.len().saturating_sub(from) + Self::W);
        Appender { rec, len: out.len(), out, next: from }
    }

    /// Appends `rec[a..e]`.
    #[inline(always)]
    fn copy(&mut self, a: usize, e: usize) {
        const W: usize = Appender::W;
        let n = self.rec.len();
        // Always true for the callers' pieces; checked, as the copy relies
        // on it.
        assert!(self.next <= a && a <= e && e <= n, "CSV pieces out of order");
        self.next = e;
        let k = e - a;
        // SAFETY: `a <= e <= n`, checked above, so the source reads stay
        // in `rec`: the wide loop only runs while a whole `W`-byte load
        // fits before its end. The writes start at `len` and end before
        // `len + k + W`, which the capacity reserved in `new` covers: the
        // pieces, in order and not overlapping from `from` on (checked
        // above), add up to at most `n - from` bytes.
        unsafe {
            let (src, d) = (self.rec.as_ptr().add(a), self.out.as_mut_ptr().add(self.len));
            if a + k.next_multiple_of(W) <= n {
                let mut i = 0;
                while i < k {
                    std::ptr::copy_nonoverlapping(src.add(i), d.add(i), W);
                    i += W;
                }
            } else {
                std::ptr::copy_nonoverlapping(src, d, k);
            }
        }
        self.len += k;
    }

    fn finish(self) {
        // SAFETY: the bytes up to `len` were written by `copy` (the pieces,
        // back to back), within the reserved capacity.
        unsafe { self.out.set_len(self.len) };
    }
}

impl CsvPieces<'_> {
    /// [`CsvPieces::append_to`] with a bit mask of the bytes kept.
    pub(super) fn append_kept(self, out: &mut Vec<u8>) {
        let (rec, at) = (self.record, self.at.min(self.record.len()));
        let tail = std::iter::repeat_n(self.delimiter, self.extra);
        if crate::scan::append_kept(&rec[at..], self.keep, self.shift + at, out) {
            out.extend(tail);
            return;
        }
        // The runs of bytes kept.
        let (keep, shift, n) = (self.keep, self.shift, rec.len());
        let mut w = Appender::new(rec, at, out);
        let mut i = at;
        while i < n {
            let a = seek(keep, shift, i, n, true);
            let e = seek(keep, shift, a, n, false);
            w.copy(a, e);
            i = e;
        }
        w.finish();
        out.extend(tail);
    }
}

/// The first `i >= from` below `n` whose bit in `keep` (at `shift + i`)
/// is `want`, or `n`.
fn seek(keep: &[u64], shift: usize, mut i: usize, n: usize, want: bool) -> usize {
    while i < n {
        let p = shift + i;
        let word = keep[p / 64];
        let w = (if want { word } else { !word }) >> (p % 64);
        if w != 0 {
            return (i + w.trailing_zeros() as usize).min(n);
        }
        i += 64 - p % 64;
    }
    n
}

/// Every byte value, for one-byte pieces.
static BYTES: [u8; 256] = {
    let mut t = [0; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as u8;
        i += 1;
    }
    t
};

/// Whether `keep` marks a byte among `n` from bit `shift`.
pub(super) fn kept_any(keep: &[u64], shift: usize, n: usize) -> bool {
    seek(keep, shift, 0, n, true) < n
}

impl<'r> Iterator for CsvPieces<'r> {
    type Item = &'r [u8];

    #[inline]
    fn next(&mut self) -> Option<&'r [u8]> {
        let n = self.record.len();
        if !self.keep.is_empty() {
            // The next run of bytes kept, then the delimiters added.
            let a = seek(self.keep, self.shift, self.at.min(n), n, true);
            if a == n {
                self.at = n + 1;
                if self.extra == 0 {
                    return None;
                }
                self.extra -= 1;
                let d = usize::from(self.delimiter);
                return Some(&BYTES[d..=d]);
            }
            let e = seek(self.keep, self.shift, a, n, false);
            self.at = e;
            return Some(&self.record[a..e]);
        }
        if self.at > n {
            return None;
        }
        let upto = self.drops.next().map_or(n, |&d| d as usize - self.shift);
        let piece = &self.record[self.at..upto];
        self.at = upto + 1;
        Some(piece)
    }
}

/// The fields of a record as they are in the input, from
/// [`SelectedRow::raw_fields`]: ranges of [`RawFields::record`], in order,
/// or by index with [`RawFields::get`].
#[derive(Clone, Debug)]
pub struct RawFields<'r> {
    pub(super) record: &'r [u8],
    /// The record's delimiter offsets (from the batch's offset base).
    pub(super) ends: &'r [u32],
    /// The record's start, from that base.
    pub(super) shift: usize,
    /// The next field the iterator gives.
    pub(super) next: usize,
}

impl<'r> RawFields<'r> {
    /// The record's bytes, without its terminator.
    pub fn record(&self) -> &'r [u8] {
        self.record
    }

    /// Field `j` (from 0) as a range of [`RawFields::record`]; `None` past
    /// the last field.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2\n\"a\",b\n");
    /// let mut sel = Selection::all();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let f = b.row(0).raw_fields().unwrap();
    /// assert_eq!((f.get(0), f.get(1), f.get(2)), (Some(0..3), Some(4..5), None));
    /// ```
    #[inline]
    pub fn get(&self, j: usize) -> Option<std::ops::Range<usize>> {
        let n = self.ends.len();
        if j > n {
            return None;
        }
        let a = if j == 0 { 0 } else { self.ends[j - 1] as usize - self.shift + 1 };
        let e = if j == n { self.record.len() } else { self.ends[j] as usize - self.shift };
        Some(a..e)
    }

    /// The record's delimiters (one fewer than its fields) as offsets from
    /// a base, and the record's start from that same base: delimiter `k`
    /// is byte `d[k] - start` of [`RawFields::record`]. Field `j` then
    /// spans from just after delimiter `j - 1` (or the record's start) to
    /// delimiter `j` (or the record's end), which lets a caller turn every
    /// field's span into its own offsets in one pass, without going
    /// through [`RawFields::get`] per field.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"h1,h2,h3,h4\nab,c,,d\n");
    /// let mut sel = Selection::all();
    /// let b = rdr.read_batch(&mut sel).unwrap().unwrap();
    /// let f = b.row(0).raw_fields().unwrap();
    /// let (d, start) = f.delimiters();
    /// let at: Vec<usize> = d.iter().map(|&d| d as usize - start).collect();
    /// assert_eq!(at, [2, 4, 5]);
    /// assert_eq!(f.record()[at[0]], b',');
    /// ```
    #[inline]
    pub fn delimiters(&self) -> (&'r [u32], usize) {
        (self.ends, self.shift)
    }
}

impl Iterator for RawFields<'_> {
    type Item = std::ops::Range<usize>;

    #[inline]
    fn next(&mut self) -> Option<std::ops::Range<usize>> {
        let f = self.get(self.next)?;
        self.next += 1;
        Some(f)
    }
}

/// The fields of a [`SelectedRow`], from [`SelectedRow::iter`].
#[derive(Clone)]
pub struct FieldIter<'r> {
    /// With [`Selection::all`], for a record the block scanner took: the
    /// offsets in `input` (the batch's input from the delimiter offsets'
    /// base on, or for a record with doubled quotes its unescaped copy's
    /// buffer) of the delimiters ahead, the next field's start and the
    /// record's end (`usize::MAX` once its last field is out, or in the
    /// other cases). Only these are touched per field; the rest is in
    /// `slow`, so that building the iterator for a row costs little. In
    /// the other cases, `input` is the batch's input.
    pub(super) ends: std::slice::Iter<'r, u32>,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) input: &'r [u8],
    /// The quote byte to strip around fields (-1: none to strip).
    pub(super) quote: i32,
    pub(super) slow: Slow<'r>,
}

/// What [`FieldIter`] needs beyond the common case: the record's spans, or
/// its fields by index, as indices into the selection.
#[derive(Clone, Copy)]
pub(super) struct Slow<'r> {
    pub(super) sel: &'r Selection,
    pub(super) scratch: &'r [u8],
    /// The batch's quote byte and delimiter (for a field by index).
    pub(super) quote: i32,
    pub(super) delimiter: u8,
    /// The record's index in the batch.
    pub(super) i: usize,
    /// Otherwise: the next span (`spans`: `sel.out.spans[j..n]`), or the
    /// next field by index (`j` of `n`).
    pub(super) j: usize,
    pub(super) n: usize,
    pub(super) spans: bool,
}

impl<'r> FieldIter<'r> {
    /// The bytes of field `a..e` of a record the block scanner took.
    #[inline(always)]
    fn field(&self, a: usize, e: usize) -> &'r [u8] {
        debug_assert!(a <= e && e <= self.input.len() && !self.input.is_empty());
        // `a..e` is a field of a record the block scanner took from this
        // very input (`start..end` of a `SelectedRecord`, split at the
        // delimiter offsets it recorded in between), so
        // `a <= e <= input.len()`; the record has at least one byte (empty
        // lines are not taken), so the input is not empty. The bounds
        // checks were a large share of this loop's instructions.
        if self.quote < 0 {
            // A record without quote bytes (decided once per record).
            // SAFETY: `a <= e <= input.len()`, as said above.
            return unsafe { self.input.get_unchecked(a..e) };
        }
        // In a regular record without doubled quotes, a field that starts
        // with the quote is quoted and ends with it (so it has at least two
        // bytes): strip one byte at each end. Computed without a branch:
        // in quoted text, whether a field is quoted is a coin toss that
        // mispredicted about once per field.
        // SAFETY: `min(a, e - 1)` (0 when `e` is 0) is below `input.len()`,
        // which is at least 1.
        let first = unsafe { *self.input.get_unchecked(a.min(e.saturating_sub(1))) };
        let q = usize::from(a < e) & usize::from(i32::from(first) == self.quote);
        // SAFETY: `a <= e <= input.len()`; `q` is 1 only when the field
        // starts with the quote, so then `e >= a + 2`.
        unsafe { self.input.get_unchecked(a + q..e - q) }
    }

    /// [`FieldIter::field`] for a field `a..e` that a structural delimiter
    /// ends (every field of a record the block scanner took but its last):
    /// `input[e]` is that delimiter, so it exists, and it is not the quote
    /// (a dialect's delimiter and quote differ). The field's first byte is
    /// then loaded as it is, with no guard for an empty field (whose
    /// "first byte" is the delimiter, which never matches).
    #[inline(always)]
    fn field_before_delimiter(&self, a: usize, e: usize) -> &'r [u8] {
        debug_assert!(a <= e && e < self.input.len() && i32::from(self.input[e]) != self.quote);
        if self.quote < 0 {
            // SAFETY: `a <= e < input.len()`, as said above.
            return unsafe { self.input.get_unchecked(a..e) };
        }
        // SAFETY: `a <= e < input.len()`.
        let first = unsafe { *self.input.get_unchecked(a) };
        let q = usize::from(i32::from(first) == self.quote);
        // SAFETY: `q` is 1 only when `input[a]` is the quote, so the field
        // is not empty (`input[e]` is not the quote) and, being quoted in a
        // regular record, ends with the quote: `e >= a + 2`.
        unsafe { self.input.get_unchecked(a + q..e - q) }
    }

    /// [`FieldIter::next`] for a field with doubled quotes, the last field,
    /// or by index.
    #[inline(always)]
    fn next_slow(&mut self) -> Option<&'r [u8]> {
        let slow = &mut self.slow;
        if self.end != usize::MAX {
            let (a, e) = (self.start, self.end);
            self.end = usize::MAX;
            return Some(self.field(a, e));
        }
        if slow.j < slow.n {
            slow.j += 1;
            if slow.spans {
                let s = slow.sel.out.spans[slow.j - 1];
                return Some(s.bytes(self.input, slow.scratch));
            }
            // The batch up to this record, rebuilt: a copy, so that the
            // iterator's own address is never taken (which would keep its
            // state out of registers).
            let batch = Batch {
                input: self.input,
                scratch: slow.scratch,
                sel: slow.sel,
                quote: slow.quote,
                delimiter: slow.delimiter,
                len: slow.i + 1,
                ends_all: slow.sel.ends_all(),
            };
            Some(SelectedRow { batch, i: slow.i }.get(slow.j - 1))
        } else {
            None
        }
    }
}

impl<'r> Iterator for FieldIter<'r> {
    type Item = &'r [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'r [u8]> {
        match self.ends.next() {
            Some(&e) => {
                let (a, e) = (self.start, e as usize);
                self.start = e + 1;
                Some(self.field_before_delimiter(a, e))
            }
            None => self.next_slow(),
        }
    }
}
