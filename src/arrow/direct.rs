//! Typed columns converted as their rows are read: each value parsed
//! straight from the bytes of its field (in the mapped file or the read
//! buffer), with no text column in between. [`super::Columns`] builds one
//! [`Builder`] per column whose type is set before its rows are read and
//! is one of those inference gives (`int64`, `float64`, `bool`, `date32`,
//! `timestamp`); other columns are copied as text and converted when
//! their batch is handed out ([`super::convert`]).
//!
//! The rules are [`super::convert`]'s, value for value: the same parsers,
//! the same null and boolean spellings, the same validity bitmap (made at
//! the first null) and the same errors. What a text column would have
//! reported is reported here too, at the same row:
//!
//! - a value that does not fit is an [`ErrorKind::Value`] error, unless
//!   its bytes are not UTF-8, which is an [`ErrorKind::Utf8`] error, as
//!   the UTF-8 check of a text column would have found it first;
//! - a value taken as null or as a boolean by its spelling (which need
//!   not be ASCII) is checked to be UTF-8 (numbers, dates and times are
//!   ASCII by their grammar).
//!
//! A column stops at its first bad value ([`Bad`]): the batch is cut
//! there (or before, at an earlier bad value of another column) when it
//! is handed out, so no later value of the column is needed. If you add a
//! type here, its parser must be the one `convert::convert` uses for it.

use super::number::{parse_f64_in, parse_i64_in};
use super::place::Place;
use super::temporal::{parse_temporal, parse_timestamp_fields_in};
use super::typed::{BooleanColumn, Column, DataType, PrimitiveColumn, Spellings};
use crate::error::ErrorKind;

/// Which check a bad value failed: in one row, a UTF-8 error comes before
/// a value error (whatever their fields), as the UTF-8 check of a batch
/// runs before its conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Fault {
    /// The bytes are not UTF-8.
    Utf8,
    /// The value does not fit the type.
    Value,
}

/// The first bad value of a column: its row in the batch, the check it
/// failed and the error (its field set).
#[derive(Debug)]
pub(crate) struct Bad {
    pub(crate) row: usize,
    pub(crate) fault: Fault,
    pub(crate) kind: ErrorKind,
}

/// The values of a [`Builder`], by their Arrow width.
#[derive(Debug)]
enum Values {
    I64(Vec<i64>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
}

/// One typed column of a batch, converted as its rows are read.
#[derive(Debug)]
pub(crate) struct Builder {
    ty: DataType,
    /// The column's field in the file, for errors.
    field: usize,
    values: Values,
    /// Made at the first null, every value before it valid.
    validity: Option<Vec<u8>>,
    nulls: usize,
    bad: Option<Bad>,
    /// Bytes of text read into the column (kept by the caller), which
    /// count towards a batch's size as a text column's would.
    pub(crate) text: usize,
}

impl Builder {
    /// A builder for `ty` (field `field` of the records), with room for
    /// `rows` values; `None` for a type converted from text instead.
    pub(crate) fn new(ty: DataType, field: usize, rows: usize) -> Option<Builder> {
        let values = match ty {
            DataType::Int64 | DataType::Timestamp { .. } => Values::I64(Vec::with_capacity(rows)),
            DataType::Float64 => Values::F64(Vec::with_capacity(rows)),
            DataType::Date32 => Values::I32(Vec::with_capacity(rows)),
            DataType::Boolean => Values::Bool(Vec::with_capacity(rows)),
            _ => return None,
        };
        Some(Builder { ty, field, values, validity: None, nulls: 0, bad: None, text: 0 })
    }

    /// Whether columns of type `ty` are converted as read.
    pub(crate) fn takes(ty: DataType) -> bool {
        matches!(
            ty,
            DataType::Int64
                | DataType::Timestamp { .. }
                | DataType::Float64
                | DataType::Date32
                | DataType::Boolean
        )
    }

    /// Number of values (short of the batch's rows once a value was bad).
    pub(crate) fn len(&self) -> usize {
        match &self.values {
            Values::I64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    /// The first bad value, if any.
    pub(crate) fn bad(&self) -> Option<&Bad> {
        self.bad.as_ref()
    }

    /// Takes the first bad value out, to report it.
    pub(crate) fn take_bad(&mut self) -> Option<Bad> {
        self.bad.take()
    }

    /// Appends the values `fields` (`row`: the batch row of the first),
    /// until one is bad.
    ///
    /// # Safety
    ///
    /// Each item is the address and length of a field's bytes, which stay
    /// valid and unchanged during the call, and a flag: when not 0, 32
    /// bytes from the address are readable.
    ///
    /// Out of line: the loop of each type is then compiled on its own,
    /// with its state in registers, rather than inside the caller's loop
    /// over the columns (one call per column of a group of rows).
    #[inline(never)]
    pub(crate) unsafe fn extend<'p>(
        &mut self,
        fields: impl Iterator<Item = &'p Place>,
        row: usize,
        sp: &Spellings,
    ) {
        if self.bad.is_some() {
            return;
        }
        let values = fields.map(|&Place(addr, len, wide)| {
            // With `wide`, 32 bytes can be read from the field's start
            // (the bytes after it are read by the number parsers, never
            // used).
            let room = if wide != 0 { (len as usize).max(32) } else { len as usize };
            // SAFETY: the caller gives the address and length of bytes
            // that stay valid during the call, and with `wide` 32 bytes
            // readable from the address.
            let window = unsafe { std::slice::from_raw_parts(addr as *const u8, room) };
            (&window[..len as usize], window)
        });
        self.extend_windows(values, row, sp);
    }

    /// Appends `values` (`row`: the batch row of the first), until one is
    /// bad.
    pub(crate) fn extend_from<'v>(
        &mut self,
        values: impl Iterator<Item = &'v [u8]>,
        row: usize,
        sp: &Spellings,
    ) {
        self.extend_windows(values.map(|v| (v, v)), row, sp);
    }

    /// [`Builder::extend_from`] of values given with a window of the bytes
    /// from their start on (the value itself at least), which the number
    /// parsers read a word at a time.
    fn extend_windows<'v>(
        &mut self,
        values: impl Iterator<Item = (&'v [u8], &'v [u8])>,
        row: usize,
        sp: &Spellings,
    ) {
        if self.bad.is_some() {
            return;
        }
        let ty = self.ty;
        let (validity, nulls) = (&mut self.validity, &mut self.nulls);
        let bad = match &mut self.values {
            Values::I64(v) if ty == DataType::Int64 => {
                run(v, validity, nulls, values, sp, true, |x, w| parse_i64_in(w, x.len()))
            }
            Values::I64(v) => {
                let DataType::Timestamp { nanos, utc } = ty else {
                    unreachable!("an `i64` builder is an `int64` or a timestamp one")
                };
                // The type's flags as plain values: the closure is then
                // not handed the whole type each time.
                run(v, validity, nulls, values, sp, true, |x, w| {
                    parse_timestamp_fields_in(w, x.len(), nanos, utc)
                })
            }
            Values::F64(v) => {
                #[cfg(target_arch = "x86_64")]
                if super::number::sse41_floats() {
                    // SAFETY: the CPU has SSE4.1.
                    unsafe { run_f64_sse41(v, validity, nulls, values, sp) }
                } else {
                    run(v, validity, nulls, values, sp, true, |x, w| parse_f64_in(w, x.len()))
                }
                #[cfg(not(target_arch = "x86_64"))]
                run(v, validity, nulls, values, sp, true, |x, w| parse_f64_in(w, x.len()))
            }
            Values::I32(v) => run(v, validity, nulls, values, sp, true, |x, _| {
                parse_temporal(x, ty).and_then(|d| i32::try_from(d).ok())
            }),
            Values::Bool(v) => run(v, validity, nulls, values, sp, false, |x, _| sp.parse_bool(x)),
        };
        if let Some((i, value)) = bad {
            let (field, row) = (self.field, row + i);
            self.bad = Some(match std::str::from_utf8(value) {
                Err(e) => Bad {
                    row,
                    fault: Fault::Utf8,
                    kind: ErrorKind::Utf8 { field, valid_up_to: e.valid_up_to() },
                },
                Ok(s) => {
                    let shown: String = s.chars().take(40).collect();
                    let expected = ty.name();
                    Bad {
                        row,
                        fault: Fault::Value,
                        kind: ErrorKind::Value { field, expected, value: shown },
                    }
                }
            });
        }
    }

    /// Keeps the first `rows` values (a bad value among the rest is
    /// dropped with them).
    pub(crate) fn truncate(&mut self, rows: usize) {
        if self.bad.as_ref().is_some_and(|b| b.row >= rows) {
            self.bad = None;
        }
        if self.len() <= rows {
            return;
        }
        match &mut self.values {
            Values::I64(v) => v.truncate(rows),
            Values::F64(v) => v.truncate(rows),
            Values::I32(v) => v.truncate(rows),
            Values::Bool(v) => v.truncate(rows),
        }
        if let Some(bits) = &mut self.validity {
            bits.truncate(rows.div_ceil(8));
            if !rows.is_multiple_of(8) {
                if let Some(last) = bits.last_mut() {
                    *last &= (1u8 << (rows % 8)) - 1;
                }
            }
            let valid: usize = bits.iter().map(|b| b.count_ones() as usize).sum();
            self.nulls = rows - valid;
            if self.nulls == 0 {
                // As the conversion of the rows kept would make it.
                self.validity = None;
            }
        }
    }

    /// Appends value `i` of `src` (a builder of the same type), or takes
    /// its bad value when it is at `i` (as this builder's, at its end).
    pub(crate) fn push_from(&mut self, src: &mut Builder, i: usize) {
        if self.bad.is_some() {
            return;
        }
        if src.bad.as_ref().is_some_and(|b| b.row == i) {
            if let Some(mut b) = src.bad.take() {
                b.row = self.len();
                self.bad = Some(b);
            }
            return;
        }
        if i >= src.len() {
            return;
        }
        let null = src.validity.as_ref().is_some_and(|b| b[i / 8] >> (i % 8) & 1 == 0);
        let at = self.len();
        match (&mut self.values, &src.values) {
            (Values::I64(d), Values::I64(s)) => d.push(s[i]),
            (Values::F64(d), Values::F64(s)) => d.push(s[i]),
            (Values::I32(d), Values::I32(s)) => d.push(s[i]),
            (Values::Bool(d), Values::Bool(s)) => d.push(s[i]),
            _ => unreachable!("rows move between builders of one type"),
        }
        mark(&mut self.validity, &mut self.nulls, at, null);
    }

    /// The column (its bad value, if any, cut off with its batch's rows
    /// before).
    pub(crate) fn finish(self) -> Column {
        fn prim<T>(values: Vec<T>, validity: Option<Vec<u8>>, nulls: usize) -> PrimitiveColumn<T> {
            let validity = validity.map(|mut b| {
                b.resize(values.len().div_ceil(8), 0);
                b
            });
            PrimitiveColumn { values, validity, nulls }
        }
        let (validity, nulls) = (self.validity, self.nulls);
        match (self.values, self.ty) {
            (Values::I64(v), DataType::Timestamp { nanos, utc }) => {
                Column::Timestamp { values: prim(v, validity, nulls), nanos, utc }
            }
            (Values::I64(v), _) => Column::Int64(prim(v, validity, nulls)),
            (Values::F64(v), _) => Column::Float64(prim(v, validity, nulls)),
            (Values::I32(v), _) => Column::Date32(prim(v, validity, nulls)),
            (Values::Bool(v), _) => {
                let mut bits = vec![0u8; v.len().div_ceil(8)];
                for (i, &b) in v.iter().enumerate() {
                    bits[i / 8] |= u8::from(b) << (i % 8);
                }
                let validity = validity.map(|mut b| {
                    b.resize(v.len().div_ceil(8), 0);
                    b
                });
                Column::Boolean(BooleanColumn { bits, validity, nulls, len: v.len() })
            }
        }
    }
}

/// Notes value `at` as null or valid in a validity bitmap made at the
/// first null.
#[inline(always)]
fn mark(validity: &mut Option<Vec<u8>>, nulls: &mut usize, at: usize, null: bool) {
    if null {
        *nulls += 1;
        match validity {
            Some(bits) => {
                if bits.len() <= at / 8 {
                    bits.push(0);
                }
            }
            None => {
                // At the first null, every value before it is valid.
                let mut b = vec![0xFFu8; at / 8];
                b.push((1u8 << (at % 8)) - 1);
                *validity = Some(b);
            }
        }
    } else if let Some(bits) = validity {
        if bits.len() <= at / 8 {
            bits.push(0);
        }
        bits[at / 8] |= 1 << (at % 8);
    }
}

/// Sets the validity bits of values `from..to` (valid), growing the
/// bitmap (with zero bytes) to hold `to` values; the bits past the ones
/// set are left as they are.
#[inline]
fn set_valid(bits: &mut Vec<u8>, from: usize, to: usize) {
    let need = to.div_ceil(8);
    if bits.len() < need {
        bits.resize(need, 0);
    }
    if from >= to {
        return;
    }
    // The bits `from..to` as masks: of the byte holding bit `from`, the
    // whole bytes after it, and the byte holding bit `to - 1`.
    let (first, last) = (from / 8, (to - 1) / 8);
    let head = 0xFFu8 << (from % 8);
    let tail = 0xFFu8 >> (7 - (to - 1) % 8);
    if first == last {
        bits[first] |= head & tail;
        return;
    }
    bits[first] |= head;
    bits[first + 1..last].fill(0xFF);
    bits[last] |= tail;
}

/// Appends the parsed `values` to `out`, as `convert::convert` reads
/// them; on a bad one, its index among `values` and its bytes. Each value
/// comes with a window of the bytes from its start (see
/// [`super::number::parse_f64_in`]), which `parse` is given too. A value
/// taken by its spelling (a null, or any value when `ascii` is false: a
/// boolean) is checked to be UTF-8 when it is not ASCII.
///
/// The loop takes the common value, one that parses (and is not a NaN,
/// and is ASCII), with the vector as a local, kept in registers; any other
/// goes to [`Slow::take`], out of line. A valid value's bit is not set as
/// it comes: the valid values since the last null are marked together,
/// at the next null and at the end.
#[inline(always)]
#[allow(clippy::eq_op)] // `x == x`: not a NaN, for any `T`.
fn run<'v, T: Copy + Default + PartialEq>(
    out: &mut Vec<T>,
    validity: &mut Option<Vec<u8>>,
    nulls: &mut usize,
    values: impl Iterator<Item = (&'v [u8], &'v [u8])>,
    sp: &Spellings,
    ascii: bool,
    parse: impl Fn(&[u8], &[u8]) -> Option<T>,
) -> Option<(usize, &'v [u8])> {
    let mut vals = std::mem::take(out);
    vals.reserve(values.size_hint().0);
    let base = vals.len();
    // The vector's length and room as locals: written through the pointer
    // while the loop takes common values, set on the vector before any
    // other call.
    let (mut ptr, mut len, mut cap) = (vals.as_mut_ptr(), base, vals.capacity());
    let mut slow = Slow { bits: validity.take(), nulls: *nulls, marked: base };
    // (Without `shadows`, a value that parses is null only as a NaN.)
    let shadows = sp.shadows;
    let mut bad = None;
    for (v, window) in values {
        let parsed = if shadows && sp.is_null(v) { None } else { parse(v, window) };
        match parsed {
            Some(x) if x == x && (ascii || v.is_ascii()) && len < cap => {
                // SAFETY: `len < cap`, and the values below `len` were
                // written (the vector's own, then this loop's).
                unsafe { ptr.add(len).write(x) };
                len += 1;
            }
            _ => {
                // SAFETY: the values below `len` were written, as above.
                unsafe { vals.set_len(len) };
                let ok = slow.take(&mut vals, v, parsed, sp, ascii);
                (ptr, len, cap) = (vals.as_mut_ptr(), vals.len(), vals.capacity());
                if !ok {
                    bad = Some((len - base, v));
                    break;
                }
            }
        }
    }
    // SAFETY: the values below `len` were written, as above.
    unsafe { vals.set_len(len) };
    if let Some(b) = &mut slow.bits {
        set_valid(b, slow.marked, vals.len());
    }
    *out = vals;
    *validity = slow.bits;
    *nulls = slow.nulls;
    bad
}

/// [`run`] of `float64` values parsed by `parse_f64_in_sse41`: the loop
/// compiled with SSE4.1, so that the parser is inlined in it.
///
/// # Safety
///
/// The CPU has SSE4.1.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2,ssse3,sse4.1")]
unsafe fn run_f64_sse41<'v>(
    out: &mut Vec<f64>,
    validity: &mut Option<Vec<u8>>,
    nulls: &mut usize,
    values: impl Iterator<Item = (&'v [u8], &'v [u8])>,
    sp: &Spellings,
) -> Option<(usize, &'v [u8])> {
    run(out, validity, nulls, values, sp, true, |x, w| {
        // SAFETY: the CPU has SSE4.1 (this function's contract).
        unsafe { super::number::parse_f64_in_sse41_inline(w, x.len()) }
    })
}

/// The state of [`run`] that only values other than the common ones
/// change: the validity bitmap (made at the first null), the number of
/// nulls, and where the values not yet marked valid start.
struct Slow {
    bits: Option<Vec<u8>>,
    nulls: usize,
    marked: usize,
}

impl Slow {
    /// Appends `v` (parsed as `parsed`, `None` when it is taken as null
    /// by its spelling first) to `vals`, or returns false when it is bad:
    /// the rules of `convert::convert`.
    #[cold]
    #[inline(never)]
    #[allow(clippy::eq_op)] // `x != x`: NaN, for any `T`.
    fn take<T: Copy + Default + PartialEq>(
        &mut self,
        vals: &mut Vec<T>,
        v: &[u8],
        parsed: Option<T>,
        sp: &Spellings,
        ascii: bool,
    ) -> bool {
        match parsed {
            // Only a NaN can be spelt as a null (`NaN`, `-nan`): the null
            // wins. (A common value comes here too when the vector is
            // full.)
            Some(x) if !(x != x && sp.is_null(v)) => {
                if !ascii && !v.is_ascii() && std::str::from_utf8(v).is_err() {
                    return false;
                }
                vals.push(x);
                true
            }
            _ if sp.is_null(v) => {
                if !v.is_ascii() && std::str::from_utf8(v).is_err() {
                    return false;
                }
                let at = vals.len();
                vals.push(T::default());
                self.nulls += 1;
                match &mut self.bits {
                    Some(b) => {
                        set_valid(b, self.marked, at);
                        if b.len() <= at / 8 {
                            b.push(0);
                        }
                    }
                    None => {
                        // At the first null, every value before it is valid.
                        let mut b = vec![0xFFu8; at / 8];
                        b.push((1u8 << (at % 8)) - 1);
                        self.bits = Some(b);
                    }
                }
                self.marked = at + 1;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::{convert, StringColumn};

    fn text(values: &[&[u8]]) -> StringColumn {
        let mut c = StringColumn::new(values.len());
        for v in values {
            c.data.extend_from_slice(v);
            c.offsets.push(c.data.len() as i32);
        }
        c
    }

    #[test]
    fn valid_bits_are_set_in_runs() {
        for len in 0..40usize {
            for from in 0..=len {
                for to in from..=len {
                    let mut bits = vec![0u8; from.div_ceil(8)];
                    set_valid(&mut bits, from, to);
                    assert_eq!(bits.len(), from.div_ceil(8).max(to.div_ceil(8)));
                    for i in 0..bits.len() * 8 {
                        let set = bits[i / 8] >> (i % 8) & 1 == 1;
                        assert_eq!(set, (from..to).contains(&i), "{from}..{to}, bit {i}");
                    }
                }
            }
        }
    }

    /// Nulls, NaNs spelt as nulls and common values in runs of every
    /// length around a byte of the bitmap, appended in parts: the column
    /// that the conversion of the same text gives.
    #[test]
    fn runs_of_nulls_and_values_give_the_converted_column() {
        let sp = Spellings::default();
        let kinds: [(DataType, &[u8], &[u8]); 4] = [
            (DataType::Int64, b"12", b"-7"),
            (DataType::Float64, b"2.5", b"NaN"),
            (DataType::Boolean, b"true", b"0"),
            (
                DataType::Timestamp { nanos: false, utc: true },
                b"2024-08-18T10:10:32Z",
                b"1970-01-01T00:00:00Z",
            ),
        ];
        for (ty, a, b) in kinds {
            for run in 1..20 {
                for part in [1, 3, 8, 64] {
                    // `run` values, then `run` nulls (`""`, `NA`), and so on.
                    let values: Vec<&[u8]> = (0..70)
                        .map(|i| match (i / run) % 3 {
                            0 => {
                                if i % 2 == 0 {
                                    a
                                } else {
                                    b
                                }
                            }
                            1 => b"",
                            _ => b"NA",
                        })
                        .collect();
                    let want = convert::convert(&text(&values), ty, 0, &sp).expect("converts");
                    let mut d = Builder::new(ty, 0, 4).expect("taken as read");
                    for (k, chunk) in values.chunks(part).enumerate() {
                        d.extend_from(chunk.iter().copied(), k * part, &sp);
                    }
                    assert!(d.bad().is_none());
                    assert_eq!(d.finish(), want, "{ty:?}, runs of {run}, parts of {part}");
                }
            }
        }
    }

    #[test]
    fn a_bad_value_stops_the_column_with_its_row() {
        let sp = Spellings::default();
        let mut d = Builder::new(DataType::Int64, 3, 4).expect("taken as read");
        let values: [&[u8]; 5] = [b"1", b"", b"2", b"x", b"3"];
        d.extend_from(values.iter().copied(), 10, &sp);
        let bad = d.take_bad().expect("a bad value");
        assert_eq!((bad.row, bad.fault), (13, Fault::Value));
        let want =
            convert::convert(&text(&values[..3]), DataType::Int64, 3, &sp).expect("converts");
        assert_eq!(d.finish(), want);
    }
}
