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
//! - **The types asked for by name** ([`DataType::from_name`]): `int8` to
//!   `int32` and `uint8` to `uint64` (digits within range, no sign for
//!   the unsigned; or `0x` and up to two hex digits a byte, the bits),
//!   `float32` (rounded once from the text), `large_utf8`, `utf8_view`
//!   and a dictionary of text (the text, in those layouts),
//!   `decimal128(P, S)` (a decimal number, exponent allowed, at most `P`
//!   significant digits as written and no digit but zeros lost to `S`),
//!   `time32` / `time64` (`hh:mm[:ss[.f]]`, at most the unit's digits of
//!   fraction, spaces around allowed) and timestamps in `ms` and `us` or
//!   with another zone (a zoned type needs a zone on every value, which is
//!   kept in UTC; an unzoned type none; the fraction at most the unit's
//!   digits). The conversions are in `convert.rs`, the names in
//!   `datatype.rs`.
//! - **Inference** ([`super::Columns::infer_types`] on the first rows,
//!   [`super::InferredColumns`] on every value) picks, per column, the
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

use super::temporal::parse_when;
use super::StringColumn;

pub use super::datatype::{DataType, TimeUnit, Zone};

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
    /// The spellings of nulls in text columns, when not those of typed
    /// ones ([`Spellings::text_nulls`]).
    text_nulls: Option<Words>,
    /// A null spelling is also a value other than a NaN of some type:
    /// nulls are then looked for before values.
    pub(crate) shadows: bool,
}

impl Default for Spellings {
    fn default() -> Spellings {
        Spellings {
            nulls: Words::new(NULL_VALUES.iter().chain(&[""])),
            trues: Words::new(TRUE_VALUES),
            falses: Words::new(FALSE_VALUES),
            strings_null: false,
            text_nulls: None,
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

    /// The values read as null in text columns, when they are not those
    /// of typed columns (as pandas reads `na_values` with
    /// `keep_default_na=False`: its nullable integer columns take the
    /// empty value as null, its text columns keep it). Turns on
    /// [`Spellings::strings_can_be_null`].
    ///
    /// ```
    /// use fastcsv::arrow::{Column, Columns, DataType, Spellings};
    /// let rdr = fastcsv::Reader::from_slice(b"s,n\nx,1\n,\n");
    /// let mut cols = Columns::new(rdr).unwrap();
    /// cols.set_spellings(Spellings::default().nulls(["x", ""]).text_nulls(["x"]));
    /// cols.set_types(vec![DataType::Utf8, DataType::Int64]).unwrap();
    /// let b = cols.next_batch().unwrap().unwrap();
    /// let s = b.strings(0);
    /// assert_eq!((s.is_null(0), s.is_null(1), s.get(1)), (true, false, ""));
    /// let Column::Int64(n) = b.column(1) else { panic!() };
    /// assert_eq!((n.get(0), n.get(1)), (Some(1), None));
    /// ```
    pub fn text_nulls<S: AsRef<[u8]>>(mut self, values: impl IntoIterator<Item = S>) -> Spellings {
        self.text_nulls = Some(Words::new(values));
        self.strings_null = true;
        self
    }

    /// Whether `v` reads as null in a text column whose values can be
    /// null.
    #[inline]
    pub(crate) fn is_text_null(&self, v: &[u8]) -> bool {
        match &self.text_nulls {
            Some(w) => w.contains(v),
            None => self.nulls.contains(v),
        }
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
    /// The values of text column `c` spelt as nulls in text by `sp`.
    pub(crate) fn of(c: &StringColumn, sp: &Spellings) -> Nulls {
        let mut n = Nulls::default();
        let len = c.len();
        for (i, w) in c.offsets.windows(2).enumerate() {
            let v = c.data.get(w[0] as usize..w[1] as usize).unwrap_or_default();
            if sp.is_text_null(v) {
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
    pub(crate) values: Vec<T>,
    pub(crate) validity: Option<Vec<u8>>,
    pub(crate) nulls: usize,
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
    pub(crate) bits: Vec<u8>,
    pub(crate) validity: Option<Vec<u8>>,
    pub(crate) nulls: usize,
    pub(crate) len: usize,
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
    /// `int8` values.
    Int8(PrimitiveColumn<i8>),
    /// `int16` values.
    Int16(PrimitiveColumn<i16>),
    /// `int32` values.
    Int32(PrimitiveColumn<i32>),
    /// `uint8` values.
    UInt8(PrimitiveColumn<u8>),
    /// `uint16` values.
    UInt16(PrimitiveColumn<u16>),
    /// `uint32` values.
    UInt32(PrimitiveColumn<u32>),
    /// `uint64` values.
    UInt64(PrimitiveColumn<u64>),
    /// `float` (32-bit) values.
    Float32(PrimitiveColumn<f32>),
    /// Text with 64-bit offsets (Arrow `large_utf8`).
    LargeUtf8(LargeStringColumn),
    /// Text as a dictionary of `int32` indices (see [`DictionaryColumn`]).
    Dictionary(DictionaryColumn),
    /// Decimals: the value times `10^scale`.
    Decimal128 {
        /// The values.
        values: PrimitiveColumn<i128>,
        /// Digits at most.
        precision: u8,
        /// Digits after the point.
        scale: i8,
    },
    /// Times of day in seconds or milliseconds since midnight (`time32`).
    Time32 {
        /// The values.
        values: PrimitiveColumn<i32>,
        /// [`TimeUnit::Second`] or [`TimeUnit::Millisecond`].
        unit: TimeUnit,
    },
    /// Times of day in microseconds or nanoseconds since midnight
    /// (`time64`).
    Time64 {
        /// The values.
        values: PrimitiveColumn<i64>,
        /// [`TimeUnit::Microsecond`] or [`TimeUnit::Nanosecond`].
        unit: TimeUnit,
    },
    /// Times since 1970-01-01 00:00:00 in `unit`, in UTC when zoned (see
    /// [`DataType::TimestampIn`]).
    TimestampIn {
        /// The values.
        values: PrimitiveColumn<i64>,
        /// The unit.
        unit: TimeUnit,
        /// The zone.
        zone: Option<Zone>,
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
            Column::Int8(_) => DataType::Int8,
            Column::Int16(_) => DataType::Int16,
            Column::Int32(_) => DataType::Int32,
            Column::UInt8(_) => DataType::UInt8,
            Column::UInt16(_) => DataType::UInt16,
            Column::UInt32(_) => DataType::UInt32,
            Column::UInt64(_) => DataType::UInt64,
            Column::Float32(_) => DataType::Float32,
            Column::LargeUtf8(_) => DataType::LargeUtf8,
            Column::Dictionary(_) => DataType::Dictionary,
            Column::Decimal128 { precision, scale, .. } => {
                DataType::Decimal128 { precision: *precision, scale: *scale }
            }
            Column::Time32 { unit, .. } | Column::Time64 { unit, .. } => DataType::Time(*unit),
            Column::TimestampIn { unit, zone, .. } => {
                DataType::TimestampIn { unit: *unit, zone: *zone }
            }
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.counts().0
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of nulls (0 for text, unless
    /// [`Spellings::strings_can_be_null`]).
    pub fn null_count(&self) -> usize {
        self.counts().1
    }

    /// Values and nulls.
    fn counts(&self) -> (usize, usize) {
        fn p<T: Copy>(c: &PrimitiveColumn<T>) -> (usize, usize) {
            (c.len(), c.nulls)
        }
        match self {
            Column::Utf8(c) => (c.len(), c.null_count()),
            Column::Utf8View(c) => (c.len(), c.null_count()),
            Column::LargeUtf8(c) => (c.len(), c.null_count()),
            Column::Dictionary(c) => (c.len(), c.null_count()),
            Column::Boolean(c) => (c.len(), c.nulls),
            Column::Int64(c) => p(c),
            Column::Float64(c) => p(c),
            Column::Date32(c) => p(c),
            Column::Int8(c) => p(c),
            Column::Int16(c) => p(c),
            Column::Int32(c) => p(c),
            Column::UInt8(c) => p(c),
            Column::UInt16(c) => p(c),
            Column::UInt32(c) => p(c),
            Column::UInt64(c) => p(c),
            Column::Float32(c) => p(c),
            Column::Decimal128 { values, .. } => p(values),
            Column::Time32 { values, .. } => p(values),
            Column::Time64 { values, .. }
            | Column::Timestamp { values, .. }
            | Column::TimestampIn { values, .. } => p(values),
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

/// A text column with 64-bit offsets (Arrow's `large_utf8` layout).
///
/// ```
/// use fastcsv::arrow::{Column, Columns, DataType};
/// let mut cols = Columns::new(fastcsv::Reader::from_slice(b"c\nx\nyz\n")).unwrap();
/// cols.set_types(vec![DataType::from_name("large_string").unwrap()]).unwrap();
/// let b = cols.next_batch().unwrap().unwrap();
/// let Column::LargeUtf8(c) = b.column(0) else { panic!() };
/// assert_eq!((c.get(1), c.offsets()), ("yz", &[0i64, 1, 3][..]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LargeStringColumn {
    offsets: Vec<i64>,
    data: Vec<u8>,
    nulls: Nulls,
}

impl LargeStringColumn {
    /// The text column `c`, whose bytes it keeps.
    pub(crate) fn from_strings(c: StringColumn) -> LargeStringColumn {
        let offsets = c.offsets.iter().map(|&o| i64::from(o)).collect();
        LargeStringColumn { offsets, data: c.data, nulls: c.nulls }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` (panics if `i >= len()`).
    pub fn get(&self, i: usize) -> &str {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        // Every value was checked to be UTF-8 when the batch was made.
        std::str::from_utf8(&self.data[a..b]).expect("checked UTF-8")
    }

    /// The `len() + 1` offsets.
    pub fn offsets(&self) -> &[i64] {
        &self.offsets
    }

    /// The values' bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Whether value `i` is null.
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
}

/// A text column as a dictionary: each value an `int32` index into the
/// distinct values of the column's batch, in the order they first come.
/// A null (see [`Spellings::strings_can_be_null`]) has index 0 and is not
/// among the values.
///
/// ```
/// use fastcsv::arrow::{Column, Columns, DataType};
/// let mut cols = Columns::new(fastcsv::Reader::from_slice(b"c\nx\ny\nx\n")).unwrap();
/// cols.set_types(vec![DataType::Dictionary]).unwrap();
/// let b = cols.next_batch().unwrap().unwrap();
/// let Column::Dictionary(d) = b.column(0) else { panic!() };
/// assert_eq!((d.get(2), d.keys().values(), d.values().len()), (Some("x"), &[0, 1, 0][..], 2));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DictionaryColumn {
    keys: PrimitiveColumn<i32>,
    values: StringColumn,
}

impl DictionaryColumn {
    /// The text column `c` as a dictionary.
    pub(crate) fn from_strings(c: &StringColumn) -> DictionaryColumn {
        use std::collections::HashMap;
        let mut index: HashMap<&[u8], i32> = HashMap::new();
        let mut values = StringColumn::new(0);
        let mut keys = Vec::with_capacity(c.len());
        for (i, w) in c.offsets.windows(2).enumerate() {
            if c.nulls.is_null(i) {
                keys.push(0);
                continue;
            }
            let v = &c.data[w[0] as usize..w[1] as usize];
            let next = index.len() as i32;
            let k = *index.entry(v).or_insert_with(|| {
                values.data.extend_from_slice(v);
                values.offsets.push(values.data.len() as i32);
                next
            });
            keys.push(k);
        }
        let nulls = c.nulls.count();
        let validity = c.nulls.bits().map(<[u8]>::to_vec);
        DictionaryColumn { keys: PrimitiveColumn { values: keys, validity, nulls }, values }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Value `i`, `None` when null (panics if `i >= len()`).
    pub fn get(&self, i: usize) -> Option<&str> {
        self.keys.get(i).map(|k| self.values.get(k as usize))
    }

    /// The indices (with the validity bitmap).
    pub fn keys(&self) -> &PrimitiveColumn<i32> {
        &self.keys
    }

    /// The distinct values.
    pub fn values(&self) -> &StringColumn {
        &self.values
    }

    /// Number of nulls.
    pub fn null_count(&self) -> usize {
        self.keys.nulls
    }

    /// The indices and the values, for an owner that outlives the batch.
    pub(crate) fn into_parts(self) -> (PrimitiveColumn<i32>, StringColumn) {
        (self.keys, self.values)
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
        StringColumn {
            offsets,
            data: self.data,
            nulls: self.nulls,
            checked: 0,
            unchecked_bad: false,
        }
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

pub(crate) use super::number::trim;

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

#[cfg(test)]
mod tests {
    use super::super::convert::convert;
    use super::*;
    use crate::error::ErrorKind;

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

    fn col(vals: &[&str]) -> StringColumn {
        let mut c = StringColumn::new(vals.len());
        for v in vals {
            c.data.extend_from_slice(v.as_bytes());
            c.offsets.push(c.data.len() as i32);
        }
        c
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
