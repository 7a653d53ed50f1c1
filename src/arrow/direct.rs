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
use super::temporal::{parse_temporal, parse_temporal_in};
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
    #[inline]
    pub(crate) unsafe fn extend<'p>(
        &mut self,
        fields: impl Iterator<Item = &'p (usize, u32, u32)>,
        row: usize,
        sp: &Spellings,
    ) {
        if self.bad.is_some() {
            return;
        }
        let values = fields.map(|&(addr, len, wide)| {
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
                run(v, validity, nulls, values, sp, true, |x, w| parse_temporal_in(w, x.len(), ty))
            }
            Values::F64(v) => {
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

/// Notes the places of the fields of row `r` of a group of `g` rows,
/// column by column (column `j`'s at `places[j * g..]`): address, length
/// and 1 when 32 bytes can be read from the address, as `Columns` notes
/// them. The row is a record without quotes, given by
/// `SelectedRow::plain_ends` (at most `width` fields): its fields lie
/// between its delimiters, each with the bytes to the input's end
/// readable; fields past a short record's end are empty.
#[inline(always)]
pub(crate) fn note_plain(
    places: &mut [(usize, u32, u32)],
    r: usize,
    g: usize,
    width: usize,
    (input, start, ends, end): (&[u8], usize, &[u32], usize),
) {
    let (base, len) = (input.as_ptr() as usize, input.len());
    let mut a = start;
    let mut at = r;
    for &e in ends {
        let e = e as usize;
        places[at] = (base + a, (e - a) as u32, u32::from(a + 32 <= len));
        (a, at) = (e + 1, at + g);
    }
    places[at] = (base + a, (end - a) as u32, u32::from(a + 32 <= len));
    let none = <&[u8]>::default().as_ptr() as usize;
    for j in ends.len() + 1..width {
        places[j * g + r] = (none, 0, 0);
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

/// Appends the parsed `values` to `out`, as `convert::convert` reads
/// them; on a bad one, its index among `values` and its bytes. Each value
/// comes with a window of the bytes from its start (see
/// [`super::number::parse_f64_in`]), which `parse` is given too. A value
/// taken by its spelling (a null, or any value when `ascii` is false: a
/// boolean) is checked to be UTF-8 when it is not ASCII.
#[inline(always)]
#[allow(clippy::eq_op)] // `x != x`: NaN, for any `T`.
fn run<'v, T: Copy + Default + PartialEq>(
    out: &mut Vec<T>,
    validity: &mut Option<Vec<u8>>,
    nulls: &mut usize,
    values: impl Iterator<Item = (&'v [u8], &'v [u8])>,
    sp: &Spellings,
    ascii: bool,
    parse: impl Fn(&[u8], &[u8]) -> Option<T>,
) -> Option<(usize, &'v [u8])> {
    for (i, (v, window)) in values.enumerate() {
        // (Without `shadows`, a value that parses is null only as a NaN.)
        let parsed = if sp.shadows && sp.is_null(v) { None } else { parse(v, window) };
        let null = match parsed {
            // Only a NaN can be spelt as a null (`NaN`, `-nan`): the null
            // wins.
            Some(x) if !(x != x && sp.is_null(v)) => {
                if !ascii && !v.is_ascii() && std::str::from_utf8(v).is_err() {
                    return Some((i, v));
                }
                out.push(x);
                false
            }
            _ if sp.is_null(v) => {
                if !v.is_ascii() && std::str::from_utf8(v).is_err() {
                    return Some((i, v));
                }
                out.push(T::default());
                true
            }
            _ => return Some((i, v)),
        };
        mark(validity, nulls, out.len() - 1, null);
    }
    None
}
