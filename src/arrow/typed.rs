//! Typed columns: text columns converted to Arrow's `int64`, `float64` and
//! `bool` arrays, with nulls, by the rules of pyarrow's CSV reader (its
//! default `ConvertOptions`), so that a table read here and one read by
//! `pyarrow.csv.read_csv` agree.
//!
//! - **Nulls.** In a typed column, an empty value and each of pyarrow's
//!   default null spellings ([`NULL_VALUES`]: `NA`, `NULL`, `NaN`, `n/a`,
//!   ...) is null. A `utf8` column has no nulls: its values are the text.
//! - **`int64`.** An optional `-`, then ASCII digits, within `i64`; or
//!   `0x` and 1 to 16 hex digits (the bits of the `i64`). Spaces and tabs
//!   around the number are allowed.
//! - **`float64`.** A decimal number with an optional sign, fraction and
//!   exponent (`1`, `-2.5`, `.5`, `5.`, `1e-3`), `inf` / `infinity` or
//!   `nan` (any case, signed), with spaces and tabs around allowed. The
//!   null spellings win: `NaN` and `nan` are null, `NAN` is a NaN.
//! - **`bool`.** `1`, `true`, `True`, `TRUE` and `0`, `false`, `False`,
//!   `FALSE`.
//! - **Inference** ([`super::Columns::infer_types`]) picks, per column, the first type of
//!   `int64`, `bool`, `float64` that every value that is not null fits,
//!   and `utf8` otherwise, or when every value is null (pyarrow would give
//!   its `null` type; a later value could not fit that).
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
}

impl DataType {
    /// The type's name: `utf8`, `int64`, `float64` or `bool`.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Utf8 => "utf8",
            DataType::Int64 => "int64",
            DataType::Float64 => "float64",
            DataType::Boolean => "bool",
        }
    }

    /// The type named `name`: [`DataType::name`]'s names, and `str`,
    /// `string`, `int`, `float`, `double` and `boolean`.
    pub fn from_name(name: &str) -> Option<DataType> {
        Some(match name {
            "utf8" | "str" | "string" => DataType::Utf8,
            "int64" | "int" => DataType::Int64,
            "float64" | "float" | "double" => DataType::Float64,
            "bool" | "boolean" => DataType::Boolean,
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
        }
    }
}

/// The values a typed column reads as null, besides the empty one:
/// pyarrow's default `null_values`.
pub const NULL_VALUES: [&str; 16] = [
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "N/A",
    "NA", "NULL", "NaN", "n/a", "nan", "null",
];

/// Whether `v` reads as null in a typed column.
#[inline]
fn is_null(v: &[u8]) -> bool {
    // Every spelling is 2 to 8 bytes long and starts with one of these.
    v.is_empty()
        || (v.len() <= 8
            && matches!(v[0], b'#' | b'-' | b'1' | b'N' | b'n')
            && NULL_VALUES.iter().any(|n| n.as_bytes() == v))
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
}

impl Column {
    /// The column's type.
    pub fn data_type(&self) -> DataType {
        match self {
            Column::Utf8(_) => DataType::Utf8,
            Column::Int64(_) => DataType::Int64,
            Column::Float64(_) => DataType::Float64,
            Column::Boolean(_) => DataType::Boolean,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Column::Utf8(c) => c.len(),
            Column::Int64(c) => c.len(),
            Column::Float64(c) => c.len(),
            Column::Boolean(c) => c.len(),
        }
    }

    /// True when the column holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of nulls (0 for text).
    pub fn null_count(&self) -> usize {
        match self {
            Column::Utf8(_) => 0,
            Column::Int64(c) => c.nulls,
            Column::Float64(c) => c.nulls,
            Column::Boolean(c) => c.nulls,
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
/// `0x` and up to 16 hex digits; spaces and tabs around.
#[inline]
pub(crate) fn parse_i64(v: &[u8]) -> Option<i64> {
    let v = trim(v);
    if let [b'0', b'x' | b'X', hex @ ..] = v {
        return parse_hex(hex);
    }
    let (neg, digits) = match v {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, v),
    };
    if digits.is_empty() {
        return None;
    }
    // Leading zeros do not count towards the 19 digits.
    let first = digits.iter().position(|&c| c != b'0').unwrap_or(digits.len());
    let digits = &digits[first.min(digits.len() - 1)..];
    if digits.len() > 19 {
        return None;
    }
    // Up to 19 digits fit in a u64; the sign's range is checked after.
    let mut n = 0u64;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n * 10 + u64::from(d);
    }
    if neg {
        if n <= 1 << 63 {
            Some((n as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(n).ok()
    }
}

/// Up to 16 hex digits, as the bits of an `i64`.
#[cold]
fn parse_hex(hex: &[u8]) -> Option<i64> {
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    let mut n = 0u64;
    for &c in hex {
        n = n << 4 | u64::from(char::from(c).to_digit(16)?);
    }
    Some(n as i64)
}

/// Exact powers of ten as `f64` (10^22 is the last one).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses a `float64`: a decimal number (`[+-]digits[.digits][e[+-]digits]`,
/// with digits on at least one side of the point), `inf` / `infinity` or
/// `nan`, with spaces and tabs around.
/// Correctly rounded: the common case (up to 15 significant digits and a
/// small exponent) is one exact multiplication or division (Clinger's fast
/// path); any other goes to the standard library's parser.
#[inline]
pub(crate) fn parse_f64(v: &[u8]) -> Option<f64> {
    let v = trim(v);
    let (neg, s) = match v {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, v),
    };
    let mut i = 0;
    let mut mant = 0u64;
    let mut digits = 0usize;
    while i < s.len() && s[i].is_ascii_digit() {
        mant = mant.wrapping_mul(10).wrapping_add(u64::from(s[i] - b'0'));
        i += 1;
    }
    let int_digits = i;
    digits += int_digits;
    let mut frac_digits = 0;
    if i < s.len() && s[i] == b'.' {
        i += 1;
        let at = i;
        while i < s.len() && s[i].is_ascii_digit() {
            mant = mant.wrapping_mul(10).wrapping_add(u64::from(s[i] - b'0'));
            i += 1;
        }
        frac_digits = i - at;
        digits += frac_digits;
    }
    if digits == 0 {
        // No digit: an infinity or a NaN.
        return parse_special(s).map(|x| if neg { -x } else { x });
    }
    let mut exp: i64 = 0;
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let eneg = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let at = i;
        while i < s.len() && s[i].is_ascii_digit() {
            exp = (exp * 10 + i64::from(s[i] - b'0')).min(1 << 20);
            i += 1;
        }
        if i == at {
            return None;
        }
        if eneg {
            exp = -exp;
        }
    }
    if i != s.len() {
        return None;
    }
    let e = exp - frac_digits as i64;
    if digits <= 15 && (-22..=22).contains(&e) {
        // The mantissa (below 10^15 < 2^53) and the power of ten are exact,
        // so one correctly rounded operation gives the correctly rounded
        // result.
        let m = mant as f64;
        let x = if e >= 0 { m * POW10[e as usize] } else { m / POW10[(-e) as usize] };
        return Some(if neg { -x } else { x });
    }
    // Checked above to be a decimal number in ASCII.
    std::str::from_utf8(v).ok()?.parse::<f64>().ok()
}

/// `inf`, `infinity` or `nan`, in any case.
#[cold]
fn parse_special(s: &[u8]) -> Option<f64> {
    if s.eq_ignore_ascii_case(b"inf") || s.eq_ignore_ascii_case(b"infinity") {
        Some(f64::INFINITY)
    } else if s.eq_ignore_ascii_case(b"nan") {
        Some(f64::NAN)
    } else {
        None
    }
}

/// Parses a `bool` as pyarrow does by default.
#[inline]
pub(crate) fn parse_bool(v: &[u8]) -> Option<bool> {
    match v {
        b"1" | b"true" | b"True" | b"TRUE" => Some(true),
        b"0" | b"false" | b"False" | b"FALSE" => Some(false),
        _ => None,
    }
}

/// Inference of column types (see the [module docs](self)) from the
/// values fed to it.
#[derive(Clone, Debug)]
pub(crate) struct Inference {
    /// Per column: whether every value so far fits `int64`, `bool`,
    /// `float64`, and whether one was not null.
    fits: Vec<[bool; 4]>,
    /// Rows still to look at.
    left: usize,
}

impl Inference {
    /// Inference over the first `rows` rows of `width` columns.
    pub(crate) fn new(width: usize, rows: usize) -> Inference {
        Inference { fits: vec![[true, true, true, false]; width], left: rows }
    }

    /// Looks at the rows of `columns` (one batch's), up to the rows left.
    pub(crate) fn feed(&mut self, columns: &[StringColumn]) {
        let n = columns.first().map_or(0, StringColumn::len).min(self.left);
        for (c, f) in columns.iter().zip(&mut self.fits) {
            for i in 0..n {
                if !(f[0] || f[1] || f[2]) {
                    break;
                }
                let v = &c.data[c.offsets[i] as usize..c.offsets[i + 1] as usize];
                if is_null(v) {
                    continue;
                }
                f[3] = true;
                f[0] = f[0] && parse_i64(v).is_some();
                f[1] = f[1] && parse_bool(v).is_some();
                f[2] = f[2] && parse_f64(v).is_some();
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
        self.fits
            .iter()
            .map(|f| match f {
                [.., false] => DataType::Utf8,
                [true, ..] => DataType::Int64,
                [_, true, ..] => DataType::Boolean,
                [_, _, true, _] => DataType::Float64,
                _ => DataType::Utf8,
            })
            .collect()
    }
}

/// Converts text column `c` (field `field` of its records) to `ty`; on a
/// value that does not fit, the row it is in and the error.
pub(crate) fn convert(
    c: &StringColumn,
    ty: DataType,
    field: usize,
) -> std::result::Result<Column, (usize, ErrorKind)> {
    /// The values, the validity bitmap (made at the first null, with the
    /// values before it valid) and the number of nulls.
    type Parsed<T> = (Vec<T>, Option<Vec<u8>>, usize);
    #[allow(clippy::eq_op)] // `x != x`: NaN, for any `T`.
    fn each<T: Copy + Default + PartialEq>(
        c: &StringColumn,
        ty: DataType,
        field: usize,
        parse: impl Fn(&[u8]) -> Option<T>,
    ) -> std::result::Result<Parsed<T>, (usize, ErrorKind)> {
        let n = c.len();
        let mut values = Vec::with_capacity(n);
        let (mut validity, mut nulls): (Option<Vec<u8>>, usize) = (None, 0);
        let data = &c.data[..];
        for (i, w) in c.offsets.windows(2).enumerate() {
            let v = data.get(w[0] as usize..w[1] as usize).unwrap_or_default();
            let null = match parse(v) {
                // Only a NaN can be spelt as a null (`NaN`, `-nan`): the
                // null wins.
                Some(x) if !(x != x && is_null(v)) => {
                    values.push(x);
                    false
                }
                _ if is_null(v) => {
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
            let (values, validity, nulls) = each(c, ty, field, parse_i64)?;
            Column::Int64(PrimitiveColumn { values, validity, nulls })
        }
        DataType::Float64 => {
            let (values, validity, nulls) = each(c, ty, field, parse_f64)?;
            Column::Float64(PrimitiveColumn { values, validity, nulls })
        }
        DataType::Boolean => {
            let (values, validity, nulls) = each(c, ty, field, parse_bool)?;
            let mut bits = vec![0u8; values.len().div_ceil(8)];
            for (i, &b) in values.iter().enumerate() {
                bits[i / 8] |= u8::from(b) << (i % 8);
            }
            Column::Boolean(BooleanColumn { bits, validity, nulls, len: values.len() })
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
        let mut inf = Inference::new(cols.len(), 10);
        inf.feed(&cols);
        assert!(inf.wants_more());
        assert_eq!(inf.types(), [Int64, Float64, Boolean, Int64, Utf8, Utf8, Float64]);
        // Only the rows asked for, over the batches fed.
        let mut inf = Inference::new(1, 2);
        inf.feed(&[col(&["1"])]);
        inf.feed(&[col(&["2", "x"])]);
        assert!(!inf.wants_more());
        assert_eq!(inf.types(), [Int64]);
    }

    #[test]
    fn conversion_gives_nulls_and_errors() {
        let Column::Float64(f) =
            convert(&col(&["NaN", "NAN", "-nan"]), DataType::Float64, 0).unwrap()
        else {
            panic!()
        };
        assert_eq!((f.get(0), f.get(1).map(f64::is_nan), f.get(2)), (None, Some(true), None));
        let Column::Int64(c) = convert(&col(&["1", "", "NaN", "-4"]), DataType::Int64, 0).unwrap()
        else {
            panic!()
        };
        assert_eq!((0..4).map(|i| c.get(i)).collect::<Vec<_>>(), [Some(1), None, None, Some(-4)]);
        assert_eq!((c.null_count(), c.validity()), (2, Some(&[0b1001u8][..])));
        let Column::Boolean(b) = convert(&col(&["True", "0", ""]), DataType::Boolean, 0).unwrap()
        else {
            panic!()
        };
        assert_eq!((b.get(0), b.get(1), b.get(2)), (Some(true), Some(false), None));
        match convert(&col(&["1", "2", "x1"]), DataType::Float64, 3) {
            Err((2, ErrorKind::Value { field: 3, expected: "float64", value })) => {
                assert_eq!(value, "x1")
            }
            other => panic!("{other:?}"),
        }
    }
}
