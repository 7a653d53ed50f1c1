//! Conversion of text columns to typed ones, by pyarrow's rules (see
//! [`super::typed`]), for every type [`DataType`] names. The values are
//! parsed by small functions (`parse_*`), one per kind of value, so that
//! their implementation can change alone.

use super::number::{parse_f64_in, parse_i64_in};
use super::temporal::{parse_temporal, parse_time, parse_timestamp_fields_in, parse_timestamp_in};
use super::typed::{
    parse_f64, parse_i64, trim, BooleanColumn, Column, DataType, DictionaryColumn,
    LargeStringColumn, Nulls, PrimitiveColumn, Spellings, TimeUnit, ViewColumn,
};
use super::StringColumn;
use crate::error::ErrorKind;

/// Text column `c` in the text layout `ty` (`utf8`, `large_utf8`,
/// `utf8_view`, a dictionary; nulls as [`Spellings::strings_can_be_null`]
/// says), or `None` when `ty` is not text.
pub(crate) fn text_as(mut c: StringColumn, ty: DataType, sp: &Spellings) -> Option<Column> {
    if !ty.is_text() {
        return None;
    }
    if sp.strings_null() {
        c.nulls = Nulls::of(&c, sp);
    }
    Some(match ty {
        DataType::LargeUtf8 => Column::LargeUtf8(LargeStringColumn::from_strings(c)),
        DataType::Utf8View => Column::Utf8View(ViewColumn::from_strings(c)),
        DataType::Dictionary => Column::Dictionary(DictionaryColumn::from_strings(&c)),
        _ => Column::Utf8(c),
    })
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
    fn each<T: Copy + Default + PartialEq>(
        c: &StringColumn,
        ty: DataType,
        field: usize,
        sp: &Spellings,
        parse: impl Fn(&[u8]) -> Option<T>,
    ) -> std::result::Result<Parsed<T>, (usize, ErrorKind)> {
        each_in(c, ty, field, sp, |v, _| parse(v))
    }
    /// [`each`] with `parse` given each value and the bytes of the
    /// column from its start on (which the windowed parsers read a word
    /// at a time).
    #[allow(clippy::eq_op)] // `x != x`: NaN, for any `T`.
    fn each_in<T: Copy + Default + PartialEq>(
        c: &StringColumn,
        ty: DataType,
        field: usize,
        sp: &Spellings,
        parse: impl Fn(&[u8], &[u8]) -> Option<T>,
    ) -> std::result::Result<Parsed<T>, (usize, ErrorKind)> {
        let n = c.len();
        let mut values = Vec::with_capacity(n);
        let (mut validity, mut nulls): (Option<Vec<u8>>, usize) = (None, 0);
        let data = &c.data[..];
        for (i, w) in c.offsets.windows(2).enumerate() {
            let v = data.get(w[0] as usize..w[1] as usize).unwrap_or_default();
            // Holds `v` at least: `v` is in range here, or empty.
            let window = data.get(w[0] as usize..).unwrap_or_default();
            // (Without `shadows`, a value that parses is null only as a NaN.)
            let parsed = if sp.shadows && sp.is_null(v) { None } else { parse(v, window) };
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
    fn prim<T>((values, validity, nulls): Parsed<T>) -> PrimitiveColumn<T> {
        PrimitiveColumn { values, validity, nulls }
    }
    Ok(match ty {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary => {
            text_as(c.clone(), ty, sp).expect("a text type")
        }
        DataType::Int64 => {
            let parse = |v: &[u8], w: &[u8]| parse_i64_in(w, v.len());
            Column::Int64(prim(each_in(c, ty, field, sp, parse)?))
        }
        DataType::Float64 => {
            let parse = |v: &[u8], w: &[u8]| parse_f64_in(w, v.len());
            Column::Float64(prim(each_in(c, ty, field, sp, parse)?))
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
            Column::Date32(prim(each(c, ty, field, sp, parse)?))
        }
        DataType::Timestamp { nanos, utc } => {
            let parse = |v: &[u8], w: &[u8]| parse_timestamp_fields_in(w, v.len(), nanos, utc);
            let values = prim(each_in(c, ty, field, sp, parse)?);
            Column::Timestamp { values, nanos, utc }
        }
        DataType::Int8 => Column::Int8(prim(each(c, ty, field, sp, parse_signed::<i8>)?)),
        DataType::Int16 => Column::Int16(prim(each(c, ty, field, sp, parse_signed::<i16>)?)),
        DataType::Int32 => Column::Int32(prim(each(c, ty, field, sp, parse_signed::<i32>)?)),
        DataType::UInt8 => Column::UInt8(prim(each(c, ty, field, sp, parse_unsigned::<u8>)?)),
        DataType::UInt16 => Column::UInt16(prim(each(c, ty, field, sp, parse_unsigned::<u16>)?)),
        DataType::UInt32 => Column::UInt32(prim(each(c, ty, field, sp, parse_unsigned::<u32>)?)),
        DataType::UInt64 => Column::UInt64(prim(each(c, ty, field, sp, parse_unsigned::<u64>)?)),
        DataType::Float32 => Column::Float32(prim(each(c, ty, field, sp, parse_f32)?)),
        DataType::Decimal128 { precision, scale } => {
            let parse = |v: &[u8]| parse_decimal(v, precision, scale);
            Column::Decimal128 { values: prim(each(c, ty, field, sp, parse)?), precision, scale }
        }
        DataType::Time(unit) => match unit {
            TimeUnit::Second | TimeUnit::Millisecond => {
                let parse = |v: &[u8]| parse_time(v, unit).and_then(|t| i32::try_from(t).ok());
                Column::Time32 { values: prim(each(c, ty, field, sp, parse)?), unit }
            }
            _ => {
                let values = prim(each(c, ty, field, sp, |v| parse_time(v, unit))?);
                Column::Time64 { values, unit }
            }
        },
        DataType::TimestampIn { unit, zone } => {
            let parse = |v: &[u8]| parse_timestamp_in(v, unit, zone.is_some());
            Column::TimestampIn { values: prim(each(c, ty, field, sp, parse)?), unit, zone }
        }
    })
}

/// A signed integer of `T`'s width: an optional `-` and digits within its
/// range, or `0x` and up to two hex digits a byte, the bits of the value
/// (`0xFF` is -1 in `int8`), as pyarrow reads them.
#[inline]
pub(crate) fn parse_signed<T: TryFrom<i64>>(v: &[u8]) -> Option<T> {
    let bits = 8 * std::mem::size_of::<T>() as u32;
    if let Some(u) = parse_hex_bits(v, bits) {
        // The bits, sign-extended from the width.
        let x = ((u << (64 - bits)) as i64) >> (64 - bits);
        return T::try_from(x).ok();
    }
    parse_i64(v).and_then(|x| T::try_from(x).ok())
}

/// An unsigned integer of `T`'s width: digits within its range (no sign,
/// not even `-0`), or `0x` and up to two hex digits a byte, as pyarrow
/// reads them.
#[inline]
pub(crate) fn parse_unsigned<T: TryFrom<u64>>(v: &[u8]) -> Option<T> {
    let bits = 8 * std::mem::size_of::<T>() as u32;
    if let Some(u) = parse_hex_bits(v, bits) {
        return T::try_from(u).ok();
    }
    let t = trim(v);
    if t.is_empty() || t.len() > 40 || !t.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n = 0u64;
    for &c in t {
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    T::try_from(n).ok()
}

/// `0x` (or `0X`) and 1 to `bits / 4` hex digits, spaces and tabs around:
/// the bits; `None` for anything else.
fn parse_hex_bits(v: &[u8], bits: u32) -> Option<u64> {
    let [b'0', b'x' | b'X', hex @ ..] = trim(v) else { return None };
    if hex.is_empty() || hex.len() > (bits / 4) as usize || !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    hex.iter().try_fold(0u64, |n, &c| Some(n << 4 | u64::from(char::from(c).to_digit(16)?)))
}

/// A `float` (32-bit), correctly rounded from the decimal text (not
/// through a `double`, which could round twice), with `float64`'s syntax.
#[inline]
pub(crate) fn parse_f32(v: &[u8]) -> Option<f32> {
    let x = parse_f64(v)?;
    let f = x as f32;
    if f64::from(f) == x || x.is_nan() {
        // Exact in 32 bits (or a NaN): no second rounding.
        return Some(f);
    }
    std::str::from_utf8(trim(v)).ok()?.parse::<f32>().ok()
}

/// A `decimal128(precision, scale)` value times `10^scale`, as pyarrow
/// reads one: a decimal number with an optional sign, fraction and
/// exponent, spaces and tabs around; its significant digits as written
/// at most `precision`, and no digit but zeros lost to the scale (`1.234`
/// is not a `decimal128(5, 2)`).
pub(crate) fn parse_decimal(v: &[u8], precision: u8, scale: i8) -> Option<i128> {
    let t = trim(v);
    let (neg, s) = match t {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, t),
    };
    let (mut mant, mut digits, mut frac, mut i) = (0i128, 0u32, 0i64, 0);
    let mut any = false;
    let mut push = |c: u8, digits: &mut u32| -> Option<()> {
        any = true;
        if mant == 0 && c == b'0' {
            return Some(());
        }
        *digits += 1;
        if *digits > 38 {
            return None;
        }
        mant = mant * 10 + i128::from(c - b'0');
        Some(())
    };
    while i < s.len() && s[i].is_ascii_digit() {
        push(s[i], &mut digits)?;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            push(s[i], &mut digits)?;
            frac += 1;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    let exp = super::number::exponent(s, &mut i)?;
    if i != s.len() || digits > u32::from(precision) {
        return None;
    }
    // The value is mant * 10^(exp - frac); kept times 10^scale.
    let shift = exp - frac + i64::from(scale);
    let pow = |k: i64| 10i128.checked_pow(u32::try_from(k).ok()?);
    let x = if shift >= 0 {
        if mant == 0 {
            0
        } else {
            mant.checked_mul(pow(shift)?)?
        }
    } else {
        let p = pow(-shift).unwrap_or(0);
        // Digits past the scale are lost: only zeros may be.
        if p == 0 {
            if mant != 0 {
                return None;
            }
            0
        } else if mant % p != 0 {
            return None;
        } else {
            mant / p
        }
    };
    Some(if neg { -x } else { x })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value that fits alone, in a column beside others (whose bytes
    /// the windowed parsers read past it): the value its parser gives it
    /// alone, and the first that does not fit is the error's row.
    #[test]
    fn values_read_in_the_column_as_alone() {
        let values: [&[u8]; 22] = [
            b"1",
            b"-3",
            b"007",
            b" 42\t",
            b"0x1F",
            b"12345678",
            b"123456789",
            b"-12345678",
            b"9223372036854775807",
            b"99999999999999999999",
            b"1.5",
            b"-.5",
            b"1e3",
            b"695.154224",
            b"2024-08-18T10:10:32Z",
            b"2008-09-10 19:45:00",
            b"2024-02-30T00:00:00Z",
            b"2024-08-18",
            b"2024-08-18T10:10:32.5Z",
            b"",
            b"NA",
            b"x",
        ];
        let sp = Spellings::default();
        let types = [
            DataType::Int64,
            DataType::Float64,
            DataType::Timestamp { nanos: false, utc: true },
            DataType::Timestamp { nanos: true, utc: false },
        ];
        let alone = |v: &[u8], ty| -> Option<Option<f64>> {
            if sp.is_null(v) {
                return Some(None);
            }
            match ty {
                DataType::Int64 => parse_i64(v).map(|x| Some(x as f64)),
                DataType::Float64 => parse_f64(v).map(Some),
                _ => parse_temporal(v, ty).map(|x| Some(x as f64)),
            }
        };
        for ty in types {
            for k in 0..values.len() {
                // Every value from `k` on, then the ones before.
                let order: Vec<&[u8]> = values[k..].iter().chain(&values[..k]).copied().collect();
                let mut c = StringColumn::new(order.len());
                for v in &order {
                    c.data.extend_from_slice(v);
                    c.offsets.push(c.data.len() as i32);
                }
                let want: Vec<Option<Option<f64>>> = order.iter().map(|v| alone(v, ty)).collect();
                let fit = want.iter().position(Option::is_none).unwrap_or(order.len());
                let got: Vec<Option<f64>> = match convert(&c, ty, 0, &sp) {
                    Err((row, _)) => {
                        assert_eq!(row, fit, "{ty:?} from {k}");
                        continue;
                    }
                    Ok(Column::Int64(p)) => {
                        (0..p.len()).map(|i| p.get(i).map(|x| x as f64)).collect()
                    }
                    Ok(Column::Float64(p)) => (0..p.len()).map(|i| p.get(i)).collect(),
                    Ok(Column::Timestamp { values: p, .. }) => {
                        (0..p.len()).map(|i| p.get(i).map(|x| x as f64)).collect()
                    }
                    Ok(other) => panic!("{other:?}"),
                };
                assert_eq!(fit, order.len(), "{ty:?} from {k}: converted past a bad value");
                let want: Vec<Option<f64>> = want.into_iter().flatten().collect();
                assert_eq!(got, want, "{ty:?} from {k}");
            }
        }
    }

    #[test]
    fn small_ints_as_pyarrow_reads_them() {
        assert_eq!(parse_signed::<i8>(b"-128"), Some(-128));
        assert_eq!(parse_signed::<i8>(b"128"), None);
        assert_eq!(parse_signed::<i8>(b"0xFF"), Some(-1));
        assert_eq!(parse_signed::<i8>(b"0x7F"), Some(127));
        assert_eq!(parse_signed::<i8>(b"0x100"), None);
        assert_eq!(parse_signed::<i16>(b"0x1FF"), Some(511));
        assert_eq!(parse_signed::<i32>(b" 7 "), Some(7));
        assert_eq!(parse_unsigned::<u8>(b"255"), Some(255));
        assert_eq!(parse_unsigned::<u8>(b"256"), None);
        assert_eq!(parse_unsigned::<u8>(b"-0"), None);
        assert_eq!(parse_unsigned::<u8>(b"+5"), None);
        assert_eq!(parse_unsigned::<u8>(b" 5\t"), Some(5));
        assert_eq!(parse_unsigned::<u64>(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_unsigned::<u64>(b"18446744073709551616"), None);
        assert_eq!(parse_unsigned::<u64>(b"0xFFFFFFFFFFFFFFFF"), Some(u64::MAX));
        assert_eq!(parse_unsigned::<u64>(b"0x+F"), None);
    }

    #[test]
    fn floats_of_32_bits_are_rounded_once() {
        for s in ["1.5", "0.1", "3.4e39", "-0", "1e-46", "16777217", "0.30000001192092896"] {
            let want: f32 = s.parse().unwrap();
            assert_eq!(parse_f32(s.as_bytes()).map(f32::to_bits), Some(want.to_bits()), "{s}");
        }
        assert_eq!(parse_f32(b"0x10"), None);
        assert!(parse_f32(b"nan").unwrap().is_nan());
    }

    #[test]
    fn decimals_as_pyarrow_reads_them() {
        let d = |s: &str, p, sc| parse_decimal(s.as_bytes(), p, sc);
        assert_eq!(d("1.2", 10, 2), Some(120));
        assert_eq!(d("-3", 10, 2), Some(-300));
        assert_eq!(d(" 4.5 ", 10, 2), Some(450));
        assert_eq!(d("1e2", 10, 2), Some(10_000));
        assert_eq!(d("1.230", 5, 2), Some(123));
        assert_eq!(d(".5", 5, 2), Some(50));
        assert_eq!(d("5.", 5, 2), Some(500));
        assert_eq!(d("+1", 5, 2), Some(100));
        assert_eq!(d("123456789.5", 10, 2), Some(12_345_678_950));
        assert_eq!(d("1200", 5, -2), Some(12));
        assert_eq!(d("1250", 5, -2), None);
        assert_eq!(d("0.000", 5, 2), Some(0));
        for (bad, p, s) in
            [("1.234", 10, 2), ("1e-3", 5, 2), ("123456.7", 5, 2), ("1255", 5, -1), ("x", 5, 2)]
        {
            assert_eq!(d(bad, p, s), None, "{bad}");
        }
        for bad in ["", ".", "1e", "1.2.3", "--1", "0x1", "1,5", "inf", "nan"] {
            assert_eq!(d(bad, 10, 2), None, "{bad}");
        }
    }
}
