//! Typed columns: text columns converted to Arrow's `int64`, `float64`,
//! `bool`, `date32` and `timestamp` arrays, with nulls, by the rules of
//! pyarrow's CSV reader (its default `ConvertOptions`), so that a table
//! read here and one read by `pyarrow.csv.read_csv` agree (checked by the
//! Python tests against pyarrow on random tables).
//!
//! - **Nulls.** In a typed column, an empty value and each of pyarrow's
//!   default null spellings ([`NULL_VALUES`]: `NA`, `NULL`, `NaN`, `n/a`,
//!   ...) is null, unless other spellings are set ([`Spellings`], also
//!   for booleans). A `utf8` column has no nulls, its values being the
//!   text, unless they are asked for there too
//!   ([`Spellings::strings_can_be_null`]).
//! - **`int64`.** An optional `-`, then ASCII digits, within `i64`; or
//!   `0x` and 1 to 16 hex digits (the bits of the `i64`). Spaces and tabs
//!   around the number are allowed.
//! - **`float64`.** A decimal number with an optional sign, fraction and
//!   exponent (`1`, `-2.5`, `.5`, `5.`, `1e-3`), `inf` / `infinity` or
//!   `nan` (any case, signed), with spaces and tabs around allowed. The
//!   null spellings win: `NaN` and `nan` are null, `NAN` is a NaN.
//! - **`bool`.** `1`, `true`, `True`, `TRUE` and `0`, `false`, `False`,
//!   `FALSE`.
//! - **`date32`.** `YYYY-MM-DD`, a valid date.
//! - **`timestamp`.** A date, then `T` or a space and `hh`, `hh:mm` or
//!   `hh:mm:ss`, with a fraction of 1 to 9 digits (then in nanoseconds:
//!   `timestamp[ns]`, else `timestamp[s]`) and a zone (`Z`, `+hh`,
//!   `+hhmm`, `+hh:mm`, or `-`): zoned values are converted to UTC and
//!   make a `tz=UTC` column. A date alone in a column without zones is its
//!   midnight. Spaces or tabs around are allowed for a date alone in a
//!   `date32` column only (as in Arrow).
//! - **Inference** ([`super::Columns::infer_types`]) picks, per column, the
//!   first type of `int64`, `bool`, `date32`, `timestamp[s]` or
//!   `timestamp[ns]` without a zone, then with one, `float64` that every
//!   value that is not null fits, and `utf8` otherwise, or when every
//!   value is null (pyarrow would give its `null` type; a later value
//!   could not fit that). pyarrow's `time32` (a time alone) is left as
//!   `utf8`.
//!
//! ```
//! use fastcsv::arrow::{Column, Columns, DataType};
//! use fastcsv::Reader;
//!
//! let rdr = Reader::from_slice(b"id,price,ok,name\n1,2.5,true,a\n2,,false,b\n");
//! let mut cols = Columns::new(rdr).unwrap();
//! assert_eq!(
//!     cols.infer_types(1000).unwrap(),
//!     [DataType::Int64, DataType::Float64, DataType::Boolean, DataType::Utf8]
//! );
//! let b = cols.next_batch().unwrap().unwrap();
//! let Column::Float64(price) = b.column(1) else { panic!() };
//! assert_eq!((price.get(0), price.get(1)), (Some(2.5), None));
//! assert_eq!(b.strings(3).get(1), "b");
//! ```

use super::StringColumn;
use crate::error::ErrorKind;

/// The type of a column.
///
/// ```
/// use fastcsv::arrow::DataType;
/// assert_eq!(DataType::from_name("float64"), Some(DataType::Float64));
/// assert_eq!(DataType::Int64.name(), "int64");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// Text (Arrow `utf8`): the field's bytes, never null.
    Utf8,
    /// 64-bit signed integers (Arrow `int64`).
    Int64,
    /// 64-bit floats (Arrow `double`).
    Float64,
    /// Booleans (Arrow `bool`).
    Boolean,
    /// Dates (Arrow `date32[day]`: days since 1970-01-01).
    Date32,
    /// Times (Arrow `timestamp`: seconds, or nanoseconds when `nanos`,
    /// since 1970-01-01 00:00:00; in UTC, with the zone `UTC`, when `utc`,
    /// else with no zone).
    Timestamp {
        /// Nanoseconds rather than seconds.
        nanos: bool,
        /// Zoned (`UTC`): the values had a zone (`Z`, `+01:00`).
        utc: bool,
    },
}

impl DataType {
    /// The type's name: `utf8`, `int64`, `float64`, `bool`, and pyarrow's
    /// names of the others (`date32[day]`, `timestamp[s]`,
    /// `timestamp[ns, tz=UTC]`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DataType::Utf8 => "utf8",
            DataType::Int64 => "int64",
            DataType::Float64 => "float64",
            DataType::Boolean => "bool",
            DataType::Date32 => "date32[day]",
            DataType::Timestamp { nanos: false, utc: false } => "timestamp[s]",
            DataType::Timestamp { nanos: true, utc: false } => "timestamp[ns]",
            DataType::Timestamp { nanos: false, utc: true } => "timestamp[s, tz=UTC]",
            DataType::Timestamp { nanos: true, utc: true } => "timestamp[ns, tz=UTC]",
        }
    }

    /// The type named `name`: [`DataType::name`]'s names (which are
    /// pyarrow's, as `str(pa.float64())` and the like give them, but
    /// `double`), and `str`, `string`, `int`, `float`, `double`, `boolean`
    /// and `date32`.
    pub fn from_name(name: &str) -> Option<DataType> {
        let ts = |nanos, utc| DataType::Timestamp { nanos, utc };
        Some(match name {
            "utf8" | "str" | "string" => DataType::Utf8,
            "int64" | "int" => DataType::Int64,
            "float64" | "float" | "double" => DataType::Float64,
            "bool" | "boolean" => DataType::Boolean,
            "date32" | "date32[day]" => DataType::Date32,
            "timestamp[s]" => ts(false, false),
            "timestamp[ns]" => ts(true, false),
            "timestamp[s, tz=UTC]" => ts(false, true),
            "timestamp[ns, tz=UTC]" => ts(true, true),
            _ => return None,
        })
    }

    /// The Arrow C data interface's format string.
    pub(crate) fn format(self) -> &'static str {
        match self {
            DataType::Utf8 => "u",
            DataType::Int64 => "l",
            DataType::Float64 => "g",
            DataType::Boolean => "b",
            DataType::Date32 => "tdD",
            DataType::Timestamp { nanos: false, utc: false } => "tss:",
            DataType::Timestamp { nanos: true, utc: false } => "tsn:",
            DataType::Timestamp { nanos: false, utc: true } => "tss:UTC",
            DataType::Timestamp { nanos: true, utc: true } => "tsn:UTC",
        }
    }
}

/// The values a typed column reads as null, besides the empty one:
/// pyarrow's default `null_values`.
pub const NULL_VALUES: [&str; 16] = [
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "N/A",
    "NA", "NULL", "NaN", "n/a", "nan", "null",
];

/// The values a `bool` column reads as true, and as false: pyarrow's
/// default `true_values` and `false_values`.
pub const TRUE_VALUES: [&str; 4] = ["1", "True", "TRUE", "true"];
/// See [`TRUE_VALUES`].
pub const FALSE_VALUES: [&str; 4] = ["0", "False", "FALSE", "false"];

/// How typed columns spell nulls, trues and falses (pyarrow's
/// `ConvertOptions` `null_values`, `true_values` and `false_values`):
/// by default [`NULL_VALUES`] and the empty value, [`TRUE_VALUES`] and
/// [`FALSE_VALUES`]. Each list given replaces its default (so the empty
/// value is null only when listed). A value is matched whole, byte for
/// byte. A null spelling is null in every typed column, also where it
/// would be a value (`NaN` in a `float64` column, `0` listed as a null in
/// a `bool` one), as in pyarrow.
///
/// ```
/// use fastcsv::arrow::{Column, Columns, DataType, Spellings};
/// let rdr = fastcsv::Reader::from_slice(b"n,ok\n1,yes\n-,no\n\n3,yes\n");
/// let mut cols = Columns::new(rdr).unwrap();
/// let sp = Spellings::default().nulls(["-"]).trues(["yes"]).falses(["no"]);
/// cols.set_spellings(sp);
/// assert_eq!(cols.infer_types(100).unwrap(), [DataType::Int64, DataType::Boolean]);
/// let b = cols.next_batch().unwrap().unwrap();
/// let Column::Int64(n) = b.column(0) else { panic!() };
/// assert_eq!((n.get(0), n.get(1), n.get(2)), (Some(1), None, Some(3)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spellings {
    nulls: Words,
    trues: Words,
    falses: Words,
    /// Null spellings make nulls in text columns too.
    strings_null: bool,
    /// A null spelling is also a value other than a NaN of some type:
    /// nulls are then looked for before values.
    shadows: bool,
}

impl Default for Spellings {
    fn default() -> Spellings {
        Spellings {
            nulls: Words::new(NULL_VALUES.iter().chain(&[""])),
            trues: Words::new(TRUE_VALUES),
            falses: Words::new(FALSE_VALUES),
            strings_null: false,
            shadows: false,
        }
        .settled()
    }
}

impl Spellings {
    /// The values read as null instead of the defaults (list `""` for the
    /// empty value).
    pub fn nulls<S: AsRef<[u8]>>(mut self, values: impl IntoIterator<Item = S>) -> Spellings {
        self.nulls = Words::new(values);
        self.settled()
    }

    /// The values read as true instead of the defaults.
    pub fn trues<S: AsRef<[u8]>>(mut self, values: impl IntoIterator<Item = S>) -> Spellings {
        self.trues = Words::new(values);
        self.settled()
    }

    /// The values read as false instead of the defaults.
    pub fn falses<S: AsRef<[u8]>>(mut self, values: impl IntoIterator<Item = S>) -> Spellings {
        self.falses = Words::new(values);
        self.settled()
    }

    /// Whether the null spellings make nulls in text (`utf8`) columns too
    /// (default: no, a text column holds every value's text, as pyarrow's
    /// `strings_can_be_null` has it; polars and DuckDB read an empty field
    /// as null). A null keeps its text in the column's data.
    ///
    /// ```
    /// use fastcsv::arrow::{Columns, Spellings};
    /// let rdr = fastcsv::Reader::from_slice(b"s,t\nx,1\n,2\nNA,3\n");
    /// let mut cols = Columns::new(rdr).unwrap();
    /// cols.set_spellings(Spellings::default().strings_can_be_null(true));
    /// let b = cols.next_batch().unwrap().unwrap();
    /// let s = b.strings(0);
    /// assert_eq!((s.is_null(0), s.is_null(1), s.is_null(2), s.null_count()), (false, true, true, 2));
    /// assert_eq!(s.get(2), "NA");
    /// ```
    pub fn strings_can_be_null(mut self, on: bool) -> Spellings {
        self.strings_null = on;
        self
    }

    pub(crate) fn strings_null(&self) -> bool {
        self.strings_null
    }

    /// With `shadows` worked out.
    fn settled(mut self) -> Spellings {
        let other_than_nan = |v: &[u8]| {
            parse_i64(v).is_some()
                || parse_f64(v).is_some_and(|x| !x.is_nan())
                || self.trues.contains(v)
                || self.falses.contains(v)
                || parse_when(v).is_some()
        };
        self.shadows = self.nulls.all().any(|w| other_than_nan(&w));
        self
    }

    /// Whether `v` reads as null in a typed column.
    #[inline]
    pub fn is_null(&self, v: &[u8]) -> bool {
        self.nulls.contains(v)
    }

    /// `v` as a `bool`, if it is one.
    #[inline]
    pub fn parse_bool(&self, v: &[u8]) -> Option<bool> {
        if self.trues.contains(v) {
            Some(true)
        } else if self.falses.contains(v) {
            Some(false)
        } else {
            None
        }
    }
}

/// A set of byte strings, with a quick "no" for most values: the lengths
/// (below 64) and first bytes its words have. Words of up to 8 bytes are
/// compared as integers.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Words {
    /// Words of up to 8 bytes: length and bytes (zero-padded, little
    /// endian).
    short: Vec<(usize, u64)>,
    /// The longer words.
    words: Vec<Box<[u8]>>,
    /// Bit `l` set when a word is `l` bytes long (`l < 64`).
    lens: u64,
    /// A word is 64 bytes or longer.
    long: bool,
    /// Bit `b` set when a word starts with byte `b`.
    firsts: [u64; 4],
}

impl Words {
    fn new<S: AsRef<[u8]>>(values: impl IntoIterator<Item = S>) -> Words {
        let mut w =
            Words { short: Vec::new(), words: Vec::new(), lens: 0, long: false, firsts: [0; 4] };
        for v in values {
            let v = v.as_ref();
            match v.len() {
                l @ 0..64 => w.lens |= 1 << l,
                _ => w.long = true,
            }
            if let Some(&b) = v.first() {
                w.firsts[usize::from(b >> 6)] |= 1 << (b & 63);
            }
            if v.len() <= 8 {
                let x = (v.len(), pack(v));
                if !w.short.contains(&x) {
                    w.short.push(x);
                }
            } else if !w.words.iter().any(|x| &x[..] == v) {
                w.words.push(v.into());
            }
        }
        w
    }

    /// Every word, for [`Spellings`]'s check of them.
    fn all(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        let short = self.short.iter().map(|&(l, x)| x.to_le_bytes()[..l].to_vec());
        short.chain(self.words.iter().map(|w| w.to_vec()))
    }

    #[inline]
    fn contains(&self, v: &[u8]) -> bool {
        let l = v.len();
        let len_ok = if l < 64 { self.lens >> l & 1 == 1 } else { self.long };
        if !len_ok {
            return false;
        }
        if let Some(&b) = v.first() {
            if self.firsts[usize::from(b >> 6)] >> (b & 63) & 1 == 0 {
                return false;
            }
        }
        if l <= 8 {
            let x = (l, pack(v));
            return self.short.contains(&x);
        }
        self.words.iter().any(|x| &x[..] == v)
    }
}

/// Up to 8 bytes as an integer (zero-padded, little endian).
#[inline]
fn pack(v: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..v.len()].copy_from_slice(v);
    u64::from_le_bytes(b)
}

/// The nulls of a column: a validity bitmap (made at the first null) and
/// their number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Nulls {
    bits: Option<Vec<u8>>,
    count: usize,
}

impl Nulls {
    /// The values of text column `c` spelt as nulls by `sp`.
    pub(crate) fn of(c: &StringColumn, sp: &Spellings) -> Nulls {
        let mut n = Nulls::default();
        let len = c.len();
        for (i, w) in c.offsets.windows(2).enumerate() {
            let v = c.data.get(w[0] as usize..w[1] as usize).unwrap_or_default();
            if sp.is_null(v) {
                n.count += 1;
                // At the first null, every value before it is valid.
                n.bits.get_or_insert_with(|| {
                    let mut b = vec![0u8; len.div_ceil(8)];
                    b[..i / 8].fill(0xFF);
                    b[i / 8] = (1u8 << (i % 8)) - 1;
                    b
                });
            } else if let Some(bits) = &mut n.bits {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        n
    }

    pub(crate) fn is_null(&self, i: usize) -> bool {
        self.bits.as_ref().is_some_and(|b| b[i / 8] >> (i % 8) & 1 == 0)
    }

    pub(crate) fn bits(&self) -> Option<&[u8]> {
        self.bits.as_deref()
    }

    pub(crate) fn count(&self) -> usize {
        self.count
    }
}

/// Whether `v` reads as null by default.
#[cfg(test)]
fn is_null(v: &[u8]) -> bool {
    Spellings::default().is_null(v)
}

/// A column of fixed-width values with a validity bitmap (Arrow's layout:
/// bit `i % 8` of byte `i / 8`, 1 when value `i` is not null; none when no
/// value is null). A null's value is 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrimitiveColumn<T> {
    values: Vec<T>,
    validity: Option<Vec<u8>>,
    nulls: usize,
}

impl<T: Copy> PrimitiveColumn<T> {
    /// Number of values (nulls included).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Value `i`, `None` when null (panics if `i >= len()`).
    pub fn get(&self, i: usize) -> Option<T> {
        let v = self.values[i];
        valid(&self.validity, i).then_some(v)
    }

    /// The values (0 where null).
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The validity bitmap, `None` when no value is null.
    pub fn validity(&self) -> Option<&[u8]> {
        self.validity.as_deref()
    }

    /// Number of nulls.
    pub fn null_count(&self) -> usize {
        self.nulls
    }
}

/// A column of booleans: Arrow's bit-packed values and validity bitmap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BooleanColumn {
    bits: Vec<u8>,
    validity: Option<Vec<u8>>,
    nulls: usize,
    len: usize,
}

impl BooleanColumn {
    /// Number of values (nulls included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Value `i`, `None` when null (panics if `i >= len()`).
    pub fn get(&self, i: usize) -> Option<bool> {
        assert!(i < self.len, "value {i} of a column of {}", self.len);
        let v = self.bits[i / 8] >> (i % 8) & 1 == 1;
        valid(&self.validity, i).then_some(v)
    }

    /// The values, one bit each (0 where null).
    pub fn bits(&self) -> &[u8] {
        &self.bits
    }

    /// The validity bitmap, `None` when no value is null.
    pub fn validity(&self) -> Option<&[u8]> {
        self.validity.as_deref()
    }

    /// Number of nulls.
    pub fn null_count(&self) -> usize {
        self.nulls
    }
}

fn valid(validity: &Option<Vec<u8>>, i: usize) -> bool {
    validity.as_ref().is_none_or(|v| v[i / 8] >> (i % 8) & 1 == 1)
}

/// One column of a [`super::ColumnBatch`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Column {
    /// Text.
    Utf8(StringColumn),
    /// Integers.
    Int64(PrimitiveColumn<i64>),
    /// Floats.
    Float64(PrimitiveColumn<f64>),
    /// Booleans.
    Boolean(BooleanColumn),
    /// Dates: days since 1970-01-01.
    Date32(PrimitiveColumn<i32>),
    /// Text as Arrow `utf8_view` (see [`ViewColumn`]).
    Utf8View(ViewColumn),
    /// Times: seconds (or nanoseconds, when `nanos`) since 1970-01-01
    /// 00:00:00, in UTC when `utc`.
    Timestamp {
        /// The values.
        values: PrimitiveColumn<i64>,
        /// Nanoseconds rather than seconds.
        nanos: bool,
        /// Zoned (`UTC`).
        utc: bool,
    },
}

impl Column {
    /// The column's type.
    pub fn data_type(&self) -> DataType {
        match self {
            Column::Utf8(_) | Column::Utf8View(_) => DataType::Utf8,
            Column::Int64(_) => DataType::Int64,
            Column::Float64(_) => DataType::Float64,
            Column::Boolean(_) => DataType::Boolean,
            Column::Date32(_) => DataType::Date32,
            Column::Timestamp { nanos, utc, .. } => {
                DataType::Timestamp { nanos: *nanos, utc: *utc }
            }
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::Utf8(c) => c.len(),
            Column::Utf8View(c) => c.len(),
            Column::Int64(c) => c.len(),
            Column::Float64(c) => c.len(),
            Column::Boolean(c) => c.len(),
            Column::Date32(c) => c.len(),
            Column::Timestamp { values, .. } => values.len(),
        }
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of nulls (0 for text, unless
    /// [`Spellings::strings_can_be_null`]).
    pub fn null_count(&self) -> usize {
        match self {
            Column::Utf8(c) => c.null_count(),
            Column::Utf8View(c) => c.null_count(),
            Column::Int64(c) => c.nulls,
            Column::Float64(c) => c.nulls,
            Column::Boolean(c) => c.nulls,
            Column::Date32(c) => c.nulls,
            Column::Timestamp { values, .. } => values.nulls,
        }
    }

    /// The text column, if this is one.
    pub fn as_utf8(&self) -> Option<&StringColumn> {
        match self {
            Column::Utf8(c) => Some(c),
            _ => None,
        }
    }
}

/// A text column in Arrow's `utf8_view` layout: per value 16 bytes, its
/// length in the first 4, then the value itself (at most 12 bytes,
/// zero-padded), or its first 4 bytes, the index of its data buffer (0:
/// there is one) and its offset there. polars keeps strings this way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewColumn {
    views: Vec<[u64; 2]>,
    data: Vec<u8>,
    nulls: Nulls,
}

impl ViewColumn {
    /// The views of text column `c`, which keeps its bytes.
    pub(crate) fn from_strings(c: StringColumn) -> ViewColumn {
        let views = c
            .offsets
            .windows(2)
            .map(|w| {
                let (s, e) = (w[0] as usize, w[1] as usize);
                let v = c.data.get(s..e).unwrap_or_default();
                // Native byte order, as the C data interface has it.
                let mut b = [0u8; 16];
                b[..4].copy_from_slice(&(v.len() as u32).to_ne_bytes());
                if v.len() <= 12 {
                    b[4..4 + v.len()].copy_from_slice(v);
                } else {
                    b[4..8].copy_from_slice(&v[..4]);
                    // Buffer 0 (bytes 8..12 stay zero), at offset `s`.
                    b[12..16].copy_from_slice(&(s as u32).to_ne_bytes());
                }
                let word = |k: usize| {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(&b[k..k + 8]);
                    u64::from_ne_bytes(w)
                };
                [word(0), word(8)]
            })
            .collect();
        ViewColumn { views, data: c.data, nulls: c.nulls }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.views.len()
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.views.is_empty()
    }

    /// Value `i` (panics if `i >= len()`).
    pub fn get(&self, i: usize) -> &str {
        let view: &[u64; 2] = &self.views[i];
        // SAFETY: `[u64; 2]` and `[u8; 16]` have the same size, `u8`
        // needs no alignment, and every bit pattern is a valid `u8`: the
        // view's bytes as they lie in memory, borrowed from `self`.
        let b: &[u8; 16] = unsafe { &*(view as *const [u64; 2]).cast::<[u8; 16]>() };
        let word = |k: usize| u32::from_ne_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]) as usize;
        let len = word(0);
        let bytes = if len <= 12 { &b[4..4 + len] } else { &self.data[word(12)..word(12) + len] };
        // Every value was checked to be UTF-8 when the batch was made.
        std::str::from_utf8(bytes).expect("checked UTF-8")
    }

    /// The column back in the `utf8` layout (its bytes are the values one
    /// after the other, short ones included: only the offsets are made).
    pub(crate) fn into_strings(self) -> StringColumn {
        let mut offsets = Vec::with_capacity(self.views.len() + 1);
        let mut at = 0i32;
        offsets.push(0);
        for v in &self.views {
            // The length: the view's first 4 bytes, in native order.
            let b = v[0].to_ne_bytes();
            at += u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as i32;
            offsets.push(at);
        }
        StringColumn { offsets, data: self.data, nulls: self.nulls }
    }

    /// The views, 16 bytes each.
    pub fn views(&self) -> &[[u64; 2]] {
        &self.views
    }

    /// Whether value `i` is null (see [`Spellings::strings_can_be_null`]).
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls.is_null(i)
    }

    /// The validity bitmap, `None` when no value is null.
    pub fn validity(&self) -> Option<&[u8]> {
        self.nulls.bits()
    }

    /// Number of nulls.
    pub fn null_count(&self) -> usize {
        self.nulls.count()
    }

    /// The data buffer.
    pub fn data(&self) -> &[u8] {
        &self.data
    }
}

/// `v` without the spaces and tabs around it (as Arrow trims numbers).
#[inline]
fn trim(v: &[u8]) -> &[u8] {
    let ws = |c: &u8| *c == b' ' || *c == b'\t';
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if ws(a) || ws(b) => {
            let s = v.iter().position(|c| !ws(c)).unwrap_or(v.len());
            let e = v.iter().rposition(|c| !ws(c)).map_or(s, |e| e + 1);
            &v[s..e]
        }
        _ => v,
    }
}

/// Parses an `int64` as pyarrow does: an optional `-`, then digits; or
/// `0x` and up to 16 hex digits; spaces and tabs around
/// ([`number::parse_i64`](super::number::parse_i64)).
#[inline]
pub(crate) fn parse_i64(v: &[u8]) -> Option<i64> {
    super::number::parse_i64(v)
}

/// Parses a `float64`: a decimal number (`[+-]digits[.digits][e[+-]digits]`,
/// with digits on at least one side of the point), `inf` / `infinity` or
/// `nan`, with spaces and tabs around; exactly rounded
/// ([`number::parse_f64`](super::number::parse_f64)).
#[inline]
pub(crate) fn parse_f64(v: &[u8]) -> Option<f64> {
    super::number::parse_f64(v)
}

/// A date or a date and time, as Arrow's ISO-8601 parser reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct When {
    /// Seconds since 1970-01-01 00:00:00 (in UTC, when zoned).
    secs: i64,
    /// The fraction of the second, in nanoseconds.
    nanos: u32,
    /// A fraction was written (`.5`).
    frac: bool,
    /// A date alone (`2024-08-18`).
    date_only: bool,
    /// A zone was written (`Z`, `+01`, `+0100`, `+01:00`).
    utc: bool,
    /// Spaces or tabs were around it (a date allows them, a timestamp
    /// does not, as in Arrow).
    padded: bool,
}

impl When {
    /// Days since 1970-01-01, for a date alone.
    fn days(&self) -> i64 {
        self.secs.div_euclid(86_400)
    }

    /// Nanoseconds since 1970-01-01, if they fit `i64`.
    fn ns(&self) -> Option<i64> {
        self.secs.checked_mul(1_000_000_000)?.checked_add(i64::from(self.nanos))
    }
}

/// Days from 1970-01-01 to the proleptic Gregorian date `y-m-d` (valid).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `n` ASCII digits at `v[at..]` as a number.
fn digits(v: &[u8], at: usize, n: usize) -> Option<u32> {
    let d = v.get(at..at + n)?;
    d.iter().try_fold(0u32, |acc, &c| c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0')))
}

/// Parses `YYYY-MM-DD`, optionally followed by `T` or a space, `hh`,
/// `:mm`, `:ss`, `.fraction` (1 to 9 digits) and a zone (`Z`, `+hh`,
/// `+hhmm`, `+hh:mm`, or with `-`), with spaces and tabs around (noted).
pub(crate) fn parse_when(v: &[u8]) -> Option<When> {
    let raw = v.len();
    let v = trim(v);
    let padded = v.len() != raw;
    if v.len() < 10 || v[4] != b'-' || v[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(v, 0, 4)?, digits(v, 5, 2)?, digits(v, 8, 2)?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&m) || d == 0 || d > month_days[m as usize - 1] {
        return None;
    }
    let days = days_from_civil(i64::from(y), m, d);
    let mut w =
        When { secs: days * 86_400, nanos: 0, frac: false, date_only: true, utc: false, padded };
    if v.len() == 10 {
        return Some(w);
    }
    if v[10] != b'T' && v[10] != b' ' {
        return None;
    }
    w.date_only = false;
    let hh = digits(v, 11, 2)?;
    let mut at = 13;
    let (mut mm, mut ss) = (0, 0);
    if v.get(at) == Some(&b':') {
        mm = digits(v, at + 1, 2)?;
        at += 3;
        if v.get(at) == Some(&b':') {
            ss = digits(v, at + 1, 2)?;
            at += 3;
            if v.get(at) == Some(&b'.') {
                let n = v[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                if !(1..=9).contains(&n) {
                    return None;
                }
                w.nanos = digits(v, at + 1, n)? * 10u32.pow(9 - n as u32);
                w.frac = true;
                at += 1 + n;
            }
        }
    }
    if hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    w.secs += i64::from(hh * 3600 + mm * 60 + ss);
    match &v[at..] {
        [] => {}
        [b'Z'] => w.utc = true,
        [sign @ (b'+' | b'-'), zone @ ..] => {
            let (zh, zm) = match zone.len() {
                2 => (digits(zone, 0, 2)?, 0),
                4 => (digits(zone, 0, 2)?, digits(zone, 2, 2)?),
                5 if zone[2] == b':' => (digits(zone, 0, 2)?, digits(zone, 3, 2)?),
                _ => return None,
            };
            if zh > 23 || zm > 59 {
                return None;
            }
            let off = i64::from(zh * 3600 + zm * 60);
            // The local time less its offset is UTC.
            w.secs -= if *sign == b'+' { off } else { -off };
            w.utc = true;
        }
        _ => return None,
    }
    Some(w)
}

/// Parses a value of a date or timestamp type `ty`: days, seconds or
/// nanoseconds.
fn parse_temporal(v: &[u8], ty: DataType) -> Option<i64> {
    let w = parse_when(v)?;
    match ty {
        DataType::Date32 if w.date_only => Some(w.days()),
        DataType::Timestamp { nanos, utc } => {
            // A date alone is a naive time at midnight.
            let zone_ok = if utc { w.utc } else { !w.utc };
            if !zone_ok || (w.frac && !nanos) || w.padded {
                return None;
            }
            if nanos {
                w.ns()
            } else {
                Some(w.secs)
            }
        }
        _ => None,
    }
}

/// Inference of column types (see the [module docs](self)) from the
/// values fed to it.
#[derive(Clone, Debug)]
pub(crate) struct Inference {
    fits: Vec<Fits>,
    /// Rows still to look at.
    left: usize,
    spellings: Spellings,
}

/// What every value of a column so far fits.
#[derive(Clone, Copy, Debug)]
struct Fits {
    int: bool,
    boolean: bool,
    float: bool,
    /// Dates alone.
    date: bool,
    /// Dates, or dates and times with no zone.
    naive: bool,
    /// Dates and times with a zone.
    zoned: bool,
    /// A time with a fraction of a second was seen.
    frac: bool,
    /// Every time fits nanoseconds in `i64`.
    ns: bool,
    /// A value was not null.
    any: bool,
}

impl Fits {
    fn any_left(&self) -> bool {
        self.int || self.boolean || self.float || self.date || self.naive || self.zoned
    }

    /// The type: the first of `int64`, `bool`, `date32`, `timestamp`
    /// (without a zone, then with), `float64` that fits, else `utf8`.
    fn data_type(&self) -> DataType {
        let ts = |utc| DataType::Timestamp { nanos: self.frac, utc };
        if !self.any {
            DataType::Utf8
        } else if self.int {
            DataType::Int64
        } else if self.boolean {
            DataType::Boolean
        } else if self.date {
            DataType::Date32
        } else if self.naive && (self.ns || !self.frac) {
            ts(false)
        } else if self.zoned && (self.ns || !self.frac) {
            ts(true)
        } else if self.float {
            DataType::Float64
        } else {
            DataType::Utf8
        }
    }
}

impl Inference {
    /// Inference over the first `rows` rows of `width` columns, with
    /// nulls and booleans spelt as `spellings` says.
    pub(crate) fn new(width: usize, rows: usize, spellings: &Spellings) -> Inference {
        let all = Fits {
            int: true,
            boolean: true,
            float: true,
            date: true,
            naive: true,
            zoned: true,
            frac: false,
            ns: true,
            any: false,
        };
        Inference { fits: vec![all; width], left: rows, spellings: spellings.clone() }
    }

    /// Looks at the rows of `columns` (one batch's), up to the rows left.
    pub(crate) fn feed(&mut self, columns: &[StringColumn]) {
        let n = columns.first().map_or(0, StringColumn::len).min(self.left);
        for (c, f) in columns.iter().zip(&mut self.fits) {
            for i in 0..n {
                if !f.any_left() {
                    break;
                }
                let v = &c.data[c.offsets[i] as usize..c.offsets[i + 1] as usize];
                if self.spellings.is_null(v) {
                    continue;
                }
                f.any = true;
                f.int = f.int && parse_i64(v).is_some();
                f.boolean = f.boolean && self.spellings.parse_bool(v).is_some();
                f.float = f.float && parse_f64(v).is_some();
                if f.date || f.naive || f.zoned {
                    match parse_when(v) {
                        Some(w) => {
                            f.date &= w.date_only;
                            f.naive &= !w.utc && !w.padded;
                            f.zoned &= w.utc && !w.padded;
                            f.frac |= w.frac;
                            f.ns &= w.ns().is_some();
                        }
                        None => (f.date, f.naive, f.zoned) = (false, false, false),
                    }
                }
            }
        }
        self.left -= n;
    }

    /// Whether more rows are wanted.
    pub(crate) fn wants_more(&self) -> bool {
        self.left > 0
    }

    /// The type of each column.
    pub(crate) fn types(&self) -> Vec<DataType> {
        self.fits.iter().map(Fits::data_type).collect()
    }
}

/// Converts text column `c` (field `field` of its records) to `ty`, with
/// nulls and booleans spelt as `sp` says; on a value that does not fit,
/// the row it is in and the error.
pub(crate) fn convert(
    c: &StringColumn,
    ty: DataType,
    field: usize,
    sp: &Spellings,
) -> std::result::Result<Column, (usize, ErrorKind)> {
    /// The values, the validity bitmap (made at the first null, with the
    /// values before it valid) and the number of nulls.
    type Parsed<T> = (Vec<T>, Option<Vec<u8>>, usize);
    #[allow(clippy::eq_op)] // `x != x`: NaN, for any `T`.
    fn each<T: Copy + Default + PartialEq>(
        c: &StringColumn,
        ty: DataType,
        field: usize,
        sp: &Spellings,
        parse: impl Fn(&[u8]) -> Option<T>,
    ) -> std::result::Result<Parsed<T>, (usize, ErrorKind)> {
        let n = c.len();
        let mut values = Vec::with_capacity(n);
        let (mut validity, mut nulls): (Option<Vec<u8>>, usize) = (None, 0);
        let data = &c.data[..];
        for (i, w) in c.offsets.windows(2).enumerate() {
            let v = data.get(w[0] as usize..w[1] as usize).unwrap_or_default();
            // (Without `shadows`, a value that parses is null only as a NaN.)
            let parsed = if sp.shadows && sp.is_null(v) { None } else { parse(v) };
            let null = match parsed {
                // Only a NaN can be spelt as a null (`NaN`, `-nan`): the
                // null wins.
                Some(x) if !(x != x && sp.is_null(v)) => {
                    values.push(x);
                    false
                }
                _ if sp.is_null(v) => {
                    values.push(T::default());
                    true
                }
                _ => {
                    let shown: String = String::from_utf8_lossy(v).chars().take(40).collect();
                    return Err((i, ErrorKind::Value { field, expected: ty.name(), value: shown }));
                }
            };
            if null {
                nulls += 1;
                // At the first null, every value before it is valid.
                validity.get_or_insert_with(|| {
                    let mut b = vec![0u8; n.div_ceil(8)];
                    b[..i / 8].fill(0xFF);
                    b[i / 8] = (1u8 << (i % 8)) - 1;
                    b
                });
            } else if let Some(bits) = &mut validity {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        Ok((values, validity, nulls))
    }
    Ok(match ty {
        DataType::Utf8 => Column::Utf8(c.clone()),
        DataType::Int64 => {
            let (values, validity, nulls) = each(c, ty, field, sp, parse_i64)?;
            Column::Int64(PrimitiveColumn { values, validity, nulls })
        }
        DataType::Float64 => {
            let (values, validity, nulls) = each(c, ty, field, sp, parse_f64)?;
            Column::Float64(PrimitiveColumn { values, validity, nulls })
        }
        DataType::Boolean => {
            let (values, validity, nulls) = each(c, ty, field, sp, |v| sp.parse_bool(v))?;
            let mut bits = vec![0u8; values.len().div_ceil(8)];
            for (i, &b) in values.iter().enumerate() {
                bits[i / 8] |= u8::from(b) << (i % 8);
            }
            Column::Boolean(BooleanColumn { bits, validity, nulls, len: values.len() })
        }
        DataType::Date32 => {
            let parse = |v: &[u8]| parse_temporal(v, ty).and_then(|d| i32::try_from(d).ok());
            let (values, validity, nulls) = each(c, ty, field, sp, parse)?;
            Column::Date32(PrimitiveColumn { values, validity, nulls })
        }
        DataType::Timestamp { nanos, utc } => {
            let (values, validity, nulls) = each(c, ty, field, sp, |v| parse_temporal(v, ty))?;
            Column::Timestamp { values: PrimitiveColumn { values, validity, nulls }, nanos, utc }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_as_pyarrow_reads_them() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"99999999999999999999"), None);
        assert_eq!(parse_i64(b"-04420816086547690446"), Some(-4420816086547690446));
        assert_eq!(parse_i64(b"0000"), Some(0));
        assert_eq!(parse_i64(b" 7\t"), Some(7));
        assert_eq!(parse_i64(b"0X1f"), Some(31));
        assert_eq!(parse_i64(b"0xFFFFFFFFFFFFFFFF"), Some(-1));
        for bad in [&b""[..], b"-", b"+5", b"  ", b"1.0", b"0x", b"-0x1", b"0x1g", b"1e3", b"\x0b1"]
        {
            assert_eq!(parse_i64(bad), None, "{:?}", bad);
        }
        assert_eq!(parse_i64(b"0x00000000000000001"), None);
    }

    #[test]
    fn floats_are_correctly_rounded() {
        for s in [
            "0",
            "-0",
            "1",
            "1.5",
            "-2.25",
            ".5",
            "5.",
            "1e3",
            "1E-3",
            "+7",
            "123456789012345",
            "1234567890123456789",
            "0.1",
            "3.141592653589793",
            "2.2250738585072014e-308",
            "1.7976931348623157e308",
            "1e400",
            "1e-400",
            "4.9e-324",
            "0.30000000000000004",
            "9007199254740993",
            "1e22",
            "1e23",
            "123.456e-5",
        ] {
            let want: f64 = s.parse().unwrap();
            let got = parse_f64(s.as_bytes()).unwrap();
            assert_eq!(got.to_bits(), want.to_bits(), "{s}");
        }
        assert_eq!(parse_f64(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert!(parse_f64(b"-NAN").is_some_and(|x| x.is_nan() && x.is_sign_negative()));
        assert_eq!(parse_f64(b"\t1.5 "), Some(1.5));
        for bad in [&b""[..], b".", b"-", b"e5", b"1e", b"1e+", b"1.2.3", b"1_0", b"0x1", b"1,5"] {
            assert_eq!(parse_f64(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn nulls_are_pyarrow_defaults() {
        for n in NULL_VALUES {
            assert!(is_null(n.as_bytes()), "{n}");
        }
        assert!(is_null(b""));
        for v in [&b"N"[..], b"none", b"None", b"nil", b"0", b"-"] {
            assert!(!is_null(v), "{:?}", v);
        }
    }

    #[test]
    fn dates_and_times_as_arrow_reads_them() {
        let secs = |v: &str| parse_when(v.as_bytes()).map(|w| (w.secs, w.nanos, w.utc));
        assert_eq!(secs("1970-01-01"), Some((0, 0, false)));
        assert_eq!(secs("2024-08-18T10:10:32Z"), Some((1_723_975_832, 0, true)));
        assert_eq!(secs("2024-08-18 10:10:32"), Some((1_723_975_832, 0, false)));
        assert_eq!(secs("2024-08-18T10"), Some((1_723_975_200, 0, false)));
        assert_eq!(secs("2024-08-18T10:10:32+01:00"), Some((1_723_972_232, 0, true)));
        assert_eq!(secs("2024-08-18T10:10:32+0100"), Some((1_723_972_232, 0, true)));
        assert_eq!(secs("2024-08-18T10:10:32-05:30"), Some((1_723_995_632, 0, true)));
        assert_eq!(secs("2024-08-18T10:10:32.25"), Some((1_723_975_832, 250_000_000, false)));
        assert_eq!(secs("1969-12-31T23:59:59Z"), Some((-1, 0, true)));
        assert_eq!(secs("9999-12-31T23:59:59"), Some((253_402_300_799, 0, false)));
        assert_eq!(secs(" 2000-02-29\t"), Some((951_782_400, 0, false)));
        assert_eq!(parse_when(b"0001-01-01").map(|w| w.days()), Some(-719_162));
        for bad in [
            "2024-8-18",
            "2024-02-30",
            "1900-02-29",
            "2024-08-18T24:00:00",
            "2024-08-18T10:10:60",
            "2024-08-18Z",
            "2024-08-18T10:10:32z",
            "2024-08-18T10:10:32 Z",
            "2024-08-18T1:10:32",
            "2024-08-18T10:1:32",
            "2024-08-18T10:10:32.",
            "2024-08-18T10:10:32+1",
            "-001-01-01",
            "20240818",
            "2024-08-18T10:10:32.1234567891",
            "10:10:32",
            "2024-08-18X10",
        ] {
            assert_eq!(parse_when(bad.as_bytes()), None, "{bad}");
        }
        let ts = |nanos, utc| DataType::Timestamp { nanos, utc };
        assert_eq!(parse_temporal(b"2024-08-18", ts(false, false)), Some(1_723_939_200));
        assert_eq!(parse_temporal(b"2024-08-18", ts(false, true)), None);
        assert_eq!(parse_temporal(b"2024-08-18T00:00:00.5", ts(false, false)), None);
        assert_eq!(
            parse_temporal(b"2024-08-18T00:00:00.5", ts(true, false)),
            Some(1_723_939_200_500_000_000)
        );
        assert_eq!(parse_temporal(b"9999-08-18T00:00:00", ts(true, false)), None);
        assert_eq!(parse_temporal(b"2024-08-18T00:00:00", DataType::Date32), None);
        assert_eq!(parse_temporal(b"2024-08-18", DataType::Date32), Some(19_953));
        assert_eq!(parse_temporal(b" 2024-08-18", DataType::Date32), Some(19_953));
        assert_eq!(parse_temporal(b" 2024-08-18", ts(false, false)), None);
        assert_eq!(parse_temporal(b"2024-08-18T10:10:32 ", ts(false, false)), None);
    }

    #[test]
    fn temporal_inference_follows_pyarrow() {
        use DataType::*;
        let ts = |nanos, utc| Timestamp { nanos, utc };
        let cases: [(&[&str], DataType); 10] = [
            (&["2024-08-18", "NA", ""], Date32),
            (&["2024-08-18", "2024-08-18T10:10:32"], ts(false, false)),
            (&["2024-08-18", "2024-08-18T10:10:32.5"], ts(true, false)),
            (&["2024-08-18T10:10:32Z", "2024-08-18T10:10:32+01:00"], ts(false, true)),
            (&["2024-08-18T10:10:32.5+01:00"], ts(true, true)),
            (&["2024-08-18", "2024-08-18T10:10:32Z"], Utf8),
            (&["2024-08-18T10:10:32Z", "2024-08-18T10:10:32"], Utf8),
            (&["2024-08-18T10:10:32.5", "9999-08-18T10:10:32"], Utf8),
            (&["20240818", "1"], Int64),
            (&[" 2024-08-18", "2024-08-18T10:10:32"], Utf8),
        ];
        for (vals, want) in cases {
            let mut inf = Inference::new(1, 100, &Spellings::default());
            inf.feed(&[col(vals)]);
            assert_eq!(inf.types(), [want], "{vals:?}");
        }
    }

    fn col(vals: &[&str]) -> StringColumn {
        let mut c = StringColumn::new(vals.len());
        for v in vals {
            c.data.extend_from_slice(v.as_bytes());
            c.offsets.push(c.data.len() as i32);
        }
        c
    }

    #[test]
    fn inference_takes_the_narrowest_type() {
        let cols = [
            col(&["1", "", "-3"]),
            col(&["1", "2.5", "NA"]),
            col(&["true", "0", "False"]),
            col(&["1", "0", "1"]),
            col(&["", "null", ""]),
            col(&["1", "x", "2"]),
            col(&["1", "+5", "2"]),
        ];
        use DataType::*;
        let mut inf = Inference::new(cols.len(), 10, &Spellings::default());
        inf.feed(&cols);
        assert!(inf.wants_more());
        assert_eq!(inf.types(), [Int64, Float64, Boolean, Int64, Utf8, Utf8, Float64]);
        // Only the rows asked for, over the batches fed.
        let mut inf = Inference::new(1, 2, &Spellings::default());
        inf.feed(&[col(&["1"])]);
        inf.feed(&[col(&["2", "x"])]);
        assert!(!inf.wants_more());
        assert_eq!(inf.types(), [Int64]);
    }

    #[test]
    fn conversion_gives_nulls_and_errors() {
        let Column::Float64(f) =
            convert(&col(&["NaN", "NAN", "-nan"]), DataType::Float64, 0, &Spellings::default())
                .unwrap()
        else {
            panic!()
        };
        assert_eq!((f.get(0), f.get(1).map(f64::is_nan), f.get(2)), (None, Some(true), None));
        let Column::Int64(c) =
            convert(&col(&["1", "", "NaN", "-4"]), DataType::Int64, 0, &Spellings::default())
                .unwrap()
        else {
            panic!()
        };
        assert_eq!((0..4).map(|i| c.get(i)).collect::<Vec<_>>(), [Some(1), None, None, Some(-4)]);
        assert_eq!((c.null_count(), c.validity()), (2, Some(&[0b1001u8][..])));
        let Column::Boolean(b) =
            convert(&col(&["True", "0", ""]), DataType::Boolean, 0, &Spellings::default()).unwrap()
        else {
            panic!()
        };
        assert_eq!((b.get(0), b.get(1), b.get(2)), (Some(true), Some(false), None));
        match convert(&col(&["1", "2", "x1"]), DataType::Float64, 3, &Spellings::default()) {
            Err((2, ErrorKind::Value { field: 3, expected: "float64", value })) => {
                assert_eq!(value, "x1")
            }
            other => panic!("{other:?}"),
        }
    }
}
