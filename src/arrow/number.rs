//! Numbers from field bytes, as pyarrow's CSV reader reads them: the
//! kernel under typed `int64` and `float64` columns.
//!
//! Both parsers work straight on the bytes of a field (no UTF-8 check, no
//! copy) and accept exactly the spellings typed columns have always
//! accepted:
//!
//! - [`parse_i64`]: spaces and tabs around; an optional `-` (no `+`), then
//!   decimal digits (leading zeros do not count towards the 19 that fit);
//!   or `0x` / `0X` and 1 to 16 hex digits, read as the bits of an `i64`.
//! - [`parse_f64`]: spaces and tabs around; an optional `+` or `-`; digits
//!   with an optional `.` (digits on at least one side of it) and an
//!   optional exponent `e` / `E`, sign, digits; or `inf`, `infinity`,
//!   `nan` in any case.
//!
//! Floats are exactly rounded (round half to even), as the standard
//! library's parser rounds them. The grammar is checked here in one pass
//! that also gathers the decimal mantissa and exponent; the value then
//! comes from one exact multiplication or division when the mantissa and
//! the power of ten are both exact in an `f64` (Clinger's fast path: prices,
//! short decimals, small integers), and otherwise from `fast-float2`, the
//! Eisel-Lemire algorithm with a big-decimal fallback. Fields longer than
//! 16 bytes (17 significant digits, as Python prints most floats) go to
//! `fast-float2` at once: one pass over them instead of two.
//!
//! [`parse_i64_in`] and [`parse_f64_in`] take a field where it lies, with
//! the bytes after it: a short decimal (up to 8 digits, or up to 7, a
//! point and up to 8) is then read a word at a time, and anything else
//! goes to the parsers above, so that the results are the same.
//!
//! ```
//! use fastcsv::arrow::number::{parse_f64, parse_i64};
//!
//! assert_eq!(parse_i64(b" -42\t"), Some(-42));
//! assert_eq!(parse_i64(b"0x1F"), Some(31));
//! assert_eq!(parse_i64(b"+1"), None);
//! assert_eq!(parse_f64(b"19.99"), Some(19.99));
//! assert_eq!(parse_f64(b"-Infinity"), Some(f64::NEG_INFINITY));
//! assert_eq!(parse_f64(b"1e"), None);
//! ```
//!
//! On x86-64 with SSE4.1, `parse_f64_in_sse41` is [`parse_f64_in`] in a
//! vector register: a short decimal in one load, the same result for every
//! input. Typed `float64` columns use it when the CPU has SSE4.1. (Its
//! example is here: rustdoc does not run those of `#[target_feature]`
//! functions.)
//!
//! ```
//! # #[cfg(target_arch = "x86_64")] {
//! use fastcsv::arrow::number::parse_f64_in_sse41;
//!
//! if std::arch::is_x86_feature_detected!("sse4.1") {
//!     // SAFETY: the CPU has SSE4.1.
//!     let got = unsafe { parse_f64_in_sse41(b"695.154224,2024-08-18T10:10:32Z", 10) };
//!     assert_eq!(got, Some(695.154224));
//!     let got = unsafe { parse_f64_in_sse41(b"-123456789.012345,more", 17) };
//!     assert_eq!(got, Some(-123456789.012345));
//!     // A space: read by `parse_f64`, which trims it.
//!     assert_eq!(unsafe { parse_f64_in_sse41(b" 1.5,0000000000000000", 4) }, Some(1.5));
//! }
//! # }
//! ```

/// `v` without the spaces and tabs around it (as Arrow trims numbers).
#[inline]
pub(crate) fn trim(v: &[u8]) -> &[u8] {
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

/// Parses an `int64` as pyarrow does: an optional `-`, then digits; or `0x`
/// and up to 16 hex digits (the bits of the result); spaces and tabs around.
///
/// ```
/// use fastcsv::arrow::number::parse_i64;
///
/// assert_eq!(parse_i64(b"007"), Some(7));
/// assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
/// assert_eq!(parse_i64(b"9223372036854775808"), None);
/// assert_eq!(parse_i64(b"0xFFFFFFFFFFFFFFFF"), Some(-1));
/// assert_eq!(parse_i64(b"1.0"), None);
/// ```
#[inline]
pub fn parse_i64(v: &[u8]) -> Option<i64> {
    let v = trim(v);
    let (neg, digits) = match v {
        [b'0', b'x' | b'X', hex @ ..] => return parse_hex(hex),
        [b'-', rest @ ..] => (true, rest),
        _ => (false, v),
    };
    let n = parse_digits(digits)?;
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

/// The value of 1 to 19 significant decimal digits after any number of
/// leading zeros; `None` for no digit, another byte or more digits.
#[inline]
fn parse_digits(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut d = digits;
    if d.len() > 1 && d[0] == b'0' {
        // Leading zeros do not count towards the 19 digits.
        let first = d.iter().position(|&c| c != b'0').unwrap_or(d.len());
        d = &d[first.min(d.len() - 1)..];
    }
    if d.len() > 19 {
        return None;
    }
    let mut n = 0u64;
    // Eight digits at a time while eight are left, then one at a time.
    while let Some((w, rest)) = d.split_first_chunk::<8>() {
        n = n * 100_000_000 + eight_digits(u64::from_le_bytes(*w))?;
        d = rest;
    }
    for &c in d {
        let x = c.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        n = n * 10 + u64::from(x);
    }
    Some(n)
}

/// The value of eight ASCII digits read as a little-endian word (first
/// digit lowest), or `None` if any byte is not a digit.
#[inline(always)]
fn eight_digits(w: u64) -> Option<u64> {
    // Each byte minus '0' must be 0..=9: no borrow out of a byte (checked
    // by the high bit of the byte plus 0x46, which reaches 0x80 past '9').
    let x = w.wrapping_sub(0x3030_3030_3030_3030);
    let over = w.wrapping_add(0x4646_4646_4646_4646);
    if (x | over) & 0x8080_8080_8080_8080 != 0 {
        return None;
    }
    // Pairs, then quads, then the eight digits (fast_float's
    // multiplications; the products that matter do not overflow, the high
    // bits they push out are not kept).
    let x = x.wrapping_mul(10 * 256 + 1) >> 8;
    let x = (x & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 * 65536 + 1) >> 16;
    Some((x & 0x0000_FFFF_0000_FFFF).wrapping_mul((10_000 << 32) + 1) >> 32)
}

/// `'0'` in every byte of a word.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// Where the first byte of `w` (first byte lowest) that is not an ASCII
/// digit is: 0 to 7, or 8 when all eight are digits.
#[inline(always)]
fn first_non_digit(w: u64) -> usize {
    // As in `eight_digits`: every byte that is not a digit gets its high
    // bit set; a byte above one that is not may get it too (a borrow or a
    // carry), which the lowest set bit does not see.
    let x = w.wrapping_sub(ZEROS);
    let over = w.wrapping_add(0x4646_4646_4646_4646);
    ((x | over) & 0x8080_8080_8080_8080).trailing_zeros() as usize / 8
}

/// The value of the first `n` (0 to 8) bytes of `x`, a word of digit
/// values (ASCII digits less `'0'`, the first lowest); the bytes past them
/// do not matter.
#[inline(always)]
fn lead_digits(x: u64, n: usize) -> u64 {
    // Moved up to the top of the word, the bytes below are leading zeros.
    x.checked_shl(64 - 8 * n as u32).map_or(0, sum_eight)
}

/// The value of eight digit values (0..=9) in the bytes of `x`, the first
/// lowest (`eight_digits` without its check).
#[inline(always)]
fn sum_eight(x: u64) -> u64 {
    let x = x.wrapping_mul(10 * 256 + 1) >> 8;
    let x = (x & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 * 65536 + 1) >> 16;
    (x & 0x0000_FFFF_0000_FFFF).wrapping_mul((10_000 << 32) + 1) >> 32
}

/// Exact powers of ten as `u64`, up to 10^8.
const POW10_INT: [u64; 9] =
    [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// The little-endian word at `s[at..at + 8]`.
#[inline(always)]
fn word_at(s: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(s.get(at..at + 8)?.try_into().ok()?))
}

/// A short decimal read a word at a time: the field `window[..len]` is an
/// optional sign (`-`, or `+` when `plus`), then 1 to 8 digits, or (with
/// `point`) digits around a `.` with at most 7 before it, at most 8 after
/// it and one at least; the window holds 16 bytes past the sign. The sign
/// and the digits as one integer, with the number of digits after the
/// point; `None` for anything else (the byte-by-byte parsers then decide).
#[inline(always)]
fn short_decimal(window: &[u8], len: usize, plus: bool, point: bool) -> Option<(bool, u64, usize)> {
    // A sign, 7 digits, the point and 8 digits at most.
    if len > 17 {
        return None;
    }
    let first = *window.first()?;
    let neg = first == b'-';
    let skip = usize::from(neg || (plus && first == b'+'));
    let n = len.checked_sub(skip)?;
    let s = window.get(skip..skip + 16)?;
    let w = word_at(s, 0)?;
    let a = first_non_digit(w).min(n);
    if a == n {
        // Digits alone (at most 8).
        return (n > 0).then(|| (neg, lead_digits(w.wrapping_sub(ZEROS), a), 0));
    }
    // A point after at most 7 digits, then the rest of the field's digits
    // (at most 8).
    let f = n - a - 1;
    if !point || a == 8 || f > 8 || (w >> (8 * a)) as u8 != b'.' {
        return None;
    }
    let w2 = word_at(s, a + 1)?;
    if first_non_digit(w2) < f || n == 1 {
        return None;
    }
    let int = lead_digits(w.wrapping_sub(ZEROS), a);
    let frac = lead_digits(w2.wrapping_sub(ZEROS), f);
    Some((neg, int * POW10_INT[f] + frac, f))
}

/// [`parse_i64`] of the field `window[..len]`, reading the field a word
/// at a time when `window` holds at least 16 bytes past its sign (the
/// bytes after the field are read but do not matter): the same result for
/// every input, in fewer instructions for short decimals. Panics if `len`
/// is over `window.len()`.
///
/// ```
/// use fastcsv::arrow::number::parse_i64_in;
///
/// assert_eq!(parse_i64_in(b"-1234,5678,more bytes", 5), Some(-1234));
/// assert_eq!(parse_i64_in(b"12", 2), Some(12));
/// assert_eq!(parse_i64_in(b"1.5,0000000000000000", 3), None);
/// ```
#[inline(always)]
pub fn parse_i64_in(window: &[u8], len: usize) -> Option<i64> {
    match short_int(window, len) {
        Some(x) => Some(x),
        None => parse_i64_out_of_line(&window[..len]),
    }
}

/// An optional `-` and 1 to 8 digits, the field `window[..len]` with the
/// window holding 16 bytes: [`short_decimal`] for an integer, in fewer
/// steps (one word, one mask of the field's digits). `None` for anything
/// else (the byte-by-byte parser then decides).
#[inline(always)]
fn short_int(window: &[u8], len: usize) -> Option<i64> {
    let s = window.get(..16)?;
    let neg = s[0] == b'-';
    let n = len.wrapping_sub(usize::from(neg));
    if !(1..=8).contains(&n) {
        return None;
    }
    let w = word_at(s, usize::from(neg))?;
    // As in `first_non_digit`: a byte that is not a digit gets its high
    // bit set (and bytes above it may too, which do not matter: the field's
    // first `n` bytes are all digits exactly when none of theirs is set).
    let x = w.wrapping_sub(ZEROS);
    let over = w.wrapping_add(0x4646_4646_4646_4646);
    let field = u64::MAX >> (64 - 8 * n);
    if (x | over) & 0x8080_8080_8080_8080 & field != 0 {
        return None;
    }
    // At most 8 digits: it fits.
    let v = sum_eight(x << (64 - 8 * n)) as i64;
    Some(if neg { -v } else { v })
}

/// [`parse_f64`] of the field `window[..len]`, reading the field a word
/// at a time when `window` holds at least 16 bytes past its sign (the
/// bytes after the field are read but do not matter): the same result,
/// bit for bit, for every input, in fewer instructions for short
/// decimals (`-12.5`, `695.154224`). Panics if `len` is over
/// `window.len()`.
///
/// ```
/// use fastcsv::arrow::number::parse_f64_in;
///
/// assert_eq!(parse_f64_in(b"19.99,2024-01-01T00:00:00", 5), Some(19.99));
/// assert_eq!(parse_f64_in(b"-.5", 3), Some(-0.5));
/// assert_eq!(parse_f64_in(b"1e3,00000000000000000", 3), Some(1000.0));
/// ```
#[inline(always)]
pub fn parse_f64_in(window: &[u8], len: usize) -> Option<f64> {
    decimal_or_parse(short_decimal(window, len, true, true), window, len)
}

/// The value of a short decimal read in place (its sign, mantissa and
/// digits after the point), or the field `window[..len]` parsed by
/// [`parse_f64`] when it was not one: the end of [`parse_f64_in`] and
/// `parse_f64_in_sse41`.
#[inline(always)]
fn decimal_or_parse(decimal: Option<(bool, u64, usize)>, window: &[u8], len: usize) -> Option<f64> {
    match decimal {
        Some((neg, mant, frac)) => {
            // As `parse_f64`'s own fast path: a mantissa exact in an `f64`
            // (15 digits with a point, 16 without, which the conversion
            // rounds once), divided by an exact power of ten. (Through
            // `i64`, which it fits: one `cvtsi2sd` where `u64` to `f64`
            // takes four instructions on x86-64 without AVX-512.)
            let x = mant as i64 as f64 / POW10[frac];
            Some(if neg { -x } else { x })
        }
        None => parse_f64_out_of_line(&window[..len]),
    }
}

/// [`parse_f64_in`] with SSE4.1: the same result, bit for bit, for every
/// input. A field of an optional sign and up to 16 bytes of digits with
/// at most one `.` (one digit at least) is read in one
/// 16-byte load: two compares find the digits and the point, a shuffle
/// takes the point out and moves the digits to the end of the register
/// (zeros before them), and three multiply-adds give the two halves of
/// the mantissa. About 30 instructions where the word-at-a-time path of
/// [`parse_f64_in`] takes twice as many, and a point anywhere in the
/// field, not only after at most 7 digits. Anything else goes to
/// [`parse_f64`]. Panics if `len` is over `window.len()`.
///
/// # Safety
///
/// The CPU has SSE4.1 (and so SSSE3), as
/// `is_x86_feature_detected!("sse4.1")` says. (An example is in the
/// module's documentation.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2,ssse3,sse4.1")]
#[inline]
pub unsafe fn parse_f64_in_sse41(window: &[u8], len: usize) -> Option<f64> {
    // SAFETY: the CPU has SSE4.1 (this function's contract).
    unsafe { parse_f64_in_sse41_inline(window, len) }
}

/// [`parse_f64_in_sse41`], inlined where it is called: in a function
/// compiled with SSE4.1 (`#[target_feature]`), the intrinsics are then
/// inlined too. (A `#[target_feature]` function cannot be
/// `#[inline(always)]`.)
///
/// # Safety
///
/// The CPU has SSE4.1.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn parse_f64_in_sse41_inline(window: &[u8], len: usize) -> Option<f64> {
    // SAFETY: the CPU has SSE4.1 (this function's contract).
    decimal_or_parse(unsafe { short_decimal_sse41(window, len) }, window, len)
}

/// Whether typed `float64` columns are parsed with
/// [`parse_f64_in_sse41`]: the CPU has SSE4.1, and `FASTCSV_SIMD` (read
/// once; see `scan::block`) does not lower the choice to `sse2`,
/// `sse2+pclmulqdq` or `portable`.
#[cfg(target_arch = "x86_64")]
pub(crate) fn sse41_floats() -> bool {
    static CHOSEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let want = std::env::var("FASTCSV_SIMD").unwrap_or_default();
        std::arch::is_x86_feature_detected!("sse4.1")
            && !matches!(want.as_str(), "portable" | "sse2" | "sse2+pclmulqdq")
    })
}

/// The sign, mantissa and digits after the point of the field
/// `window[..len]` for [`parse_f64_in_sse41`]: an optional `+` or `-`,
/// then 1 to 16 bytes, each a digit or the one point, with a digit at
/// least, and 16 bytes in the window past the sign. `None` for anything
/// else.
///
/// # Safety
///
/// The CPU has SSE4.1.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn short_decimal_sse41(window: &[u8], len: usize) -> Option<(bool, u64, usize)> {
    use std::arch::x86_64::*;
    let first = *window.first()?;
    let neg = first == b'-';
    let skip = usize::from(neg || first == b'+');
    let n = len.wrapping_sub(skip);
    if !(1..=16).contains(&n) {
        return None;
    }
    let s = window.get(skip..skip + 16)?;
    // SAFETY: `s` is 16 bytes (an unaligned load), and the CPU has SSE4.1
    // (this function's contract).
    unsafe {
        let v = _mm_loadu_si128(s.as_ptr().cast());
        // A byte less '0' is a digit's value when 9 or under (unsigned).
        let d = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
        let is_digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
        let is_point = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'.' as i8));
        let field = (1u32 << n) - 1;
        let digits = _mm_movemask_epi8(is_digit) as u32 & field;
        let points = _mm_movemask_epi8(is_point) as u32 & field;
        let point = usize::from(points != 0);
        let k = n - point;
        // Digits and one point at most fill the field, with a digit at least.
        // (15 digits at most with a point: exact in an `f64`, as is the power
        // of ten; 16 without, which `cvtsi2sd` rounds once, exactly.)
        if digits | points != field || points & points.wrapping_sub(1) != 0 || k == 0 {
            return None;
        }
        // The point's place (`n` without one), and the digits after it.
        let p = (points | 1 << n).trailing_zeros() as usize;
        let frac = n - p - point;
        // Byte `i` of the result takes digit `j = i - (16 - k)`: the byte
        // `j`, or `j + 1` from the point on; a negative index gives a zero.
        let iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let j = _mm_sub_epi8(iota, _mm_set1_epi8((16 - k) as i8));
        let past = _mm_cmpgt_epi8(j, _mm_set1_epi8(p as i8 - 1));
        let r = _mm_shuffle_epi8(d, _mm_sub_epi8(j, past));
        // Pairs, then groups of four, then the two halves of eight digits (the
        // first digit in the lowest byte is the most significant).
        let pairs = _mm_maddubs_epi16(r, _mm_set1_epi16(0x010A));
        let quads = _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_0064));
        let quads = _mm_packus_epi32(quads, quads);
        let eights = _mm_madd_epi16(quads, _mm_set1_epi32(0x0001_2710));
        let hi = _mm_cvtsi128_si32(eights) as u32;
        let lo = _mm_extract_epi32::<1>(eights) as u32;
        Some((neg, u64::from(hi) * 100_000_000 + u64::from(lo), frac))
    }
}

/// [`parse_f64`], out of line: the word-at-a-time path stays small where
/// it is inlined.
#[inline(never)]
fn parse_f64_out_of_line(v: &[u8]) -> Option<f64> {
    parse_f64(v)
}

/// [`parse_i64`], out of line (see [`parse_f64_out_of_line`]).
#[inline(never)]
fn parse_i64_out_of_line(v: &[u8]) -> Option<i64> {
    parse_i64(v)
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
/// with digits on at least one side of the point), or `inf` / `infinity` /
/// `nan` in any case with an optional sign; spaces and tabs around. The
/// result is exactly rounded.
///
/// ```
/// use fastcsv::arrow::number::parse_f64;
///
/// assert_eq!(parse_f64(b"0.1"), Some(0.1));
/// assert_eq!(parse_f64(b" +5. "), Some(5.0));
/// assert_eq!(parse_f64(b"4.9e-324"), Some(f64::from_bits(1)));
/// assert_eq!(parse_f64(b"1e400"), Some(f64::INFINITY));
/// assert!(parse_f64(b"NaN").is_some_and(f64::is_nan));
/// assert_eq!(parse_f64(b"1,5"), None);
/// ```
#[inline]
pub fn parse_f64(v: &[u8]) -> Option<f64> {
    let v = trim(v);
    if v.len() > FAST_MAX_LEN {
        // Too long for the fast path to be likely (Python's shortest
        // repr of most floats has 17 significant digits): one pass.
        return long_f64(v);
    }
    let (neg, s) = match v {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, v),
    };
    let mut i = 0;
    let mut mant = 0u64;
    while i < s.len() && s[i].is_ascii_digit() {
        mant = mant.wrapping_mul(10).wrapping_add(u64::from(s[i] - b'0'));
        i += 1;
    }
    let mut digits = i;
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
    let exp = exponent(s, &mut i)?;
    if i != s.len() {
        return None;
    }
    let e = exp - frac_digits as i64;
    // With at most 19 digits the mantissa did not wrap; below 2^53 it is
    // exact in an f64, and so is 10^|e| up to 10^22: one correctly rounded
    // operation on exact operands is the correctly rounded result.
    if digits <= 19 && mant <= 1 << 53 && (-22..=22).contains(&e) {
        let m = mant as i64 as f64;
        let x = if e >= 0 { m * POW10[e as usize] } else { m / POW10[(-e) as usize] };
        return Some(if neg { -x } else { x });
    }
    long_f64(v)
}

/// Numbers longer than this go straight to [`long_f64`].
const FAST_MAX_LEN: usize = 16;

/// The exactly rounded value of the trimmed field `v`, or `None`, by
/// `fast-float2`: its own fast path, then Eisel-Lemire, then a big-decimal
/// fallback for the rare halfway cases. Its grammar (a whole field, an
/// optional sign, `inf` / `infinity` / `nan` in any case) is the one
/// [`parse_f64`] checks itself, as `tests/number.rs` and the `number` fuzz
/// target check against the standard library. Out of line: the fast path
/// is inlined where it is called.
#[inline(never)]
fn long_f64(v: &[u8]) -> Option<f64> {
    fast_float2::parse::<f64, _>(v).ok()
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

/// The exponent of a number at `s[*i..]` (`e` or `E`, an optional sign,
/// digits; capped at 2^20 in size, past which every value overflows or
/// underflows), moving `*i` past it; `Some(0)` when there is none, `None`
/// for an `e` without digits.
#[inline(always)]
pub(crate) fn exponent(s: &[u8], i: &mut usize) -> Option<i64> {
    let mut exp: i64 = 0;
    if *i < s.len() && (s[*i] | 0x20) == b'e' {
        *i += 1;
        let eneg = match s.get(*i) {
            Some(b'-') => {
                *i += 1;
                true
            }
            Some(b'+') => {
                *i += 1;
                false
            }
            _ => false,
        };
        let at = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            exp = (exp * 10 + i64::from(s[*i] - b'0')).min(1 << 20);
            *i += 1;
        }
        if *i == at {
            return None;
        }
        if eneg {
            exp = -exp;
        }
    }
    Some(exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls `check` with every field of up to `all` bytes over
    /// `alphabet`, then with a spread of fields of `all + 1` to `max`
    /// bytes: their bytes past the first `all` are `past(i)` for byte `i`.
    fn each_field(
        alphabet: &[u8],
        all: u32,
        max: u32,
        past: impl Fn(u32) -> u8,
        mut check: impl FnMut(&[u8]),
    ) {
        let n = alphabet.len() as u64;
        let mut field = Vec::new();
        for len in 0..=max {
            for k in 0..n.pow(len.min(all)) {
                field.clear();
                let mut x = k;
                for i in 0..len {
                    field.push(if i < all { alphabet[(x % n) as usize] } else { past(i) });
                    x /= n;
                }
                check(&field);
            }
        }
    }

    /// Every field of up to 10 bytes over a small alphabet (signs, digits,
    /// a point, a space, a letter), followed in its window by digits or by
    /// other bytes: `parse_i64_in` as `parse_i64` of the field alone.
    #[test]
    fn short_ints_read_in_place_as_alone() {
        let alphabet = b"-09 .x5";
        let tails: [&[u8]; 3] = [b"0123456789012345", b",,,,,,,,,,,,,,,,", b"-x-x-x-x-x-x-x-x"];
        let past = |i: u32| alphabet[i as usize % alphabet.len()];
        each_field(alphabet, 5, 10, past, |field| {
            let want = parse_i64(field);
            for tail in tails {
                let w = [field, tail].concat();
                let shown = String::from_utf8_lossy(&w);
                assert_eq!(parse_i64_in(&w, field.len()), want, "{shown:?}");
            }
        });
    }

    /// Every field of up to 6 bytes over signs, digits, a point, an
    /// exponent and a space, then a spread of fields of 7 to 20 bytes, in
    /// windows followed by digits, points or other bytes: `parse_f64_in`
    /// and its SSE4.1 twin give `parse_f64`'s bits. Fields of 16 to 20
    /// bytes hold the vector path's edges (15 digits, 16 bytes past a
    /// sign).
    #[test]
    fn short_floats_read_in_place_as_alone() {
        let alphabet = b"-+09.5e 1";
        let tails: [&[u8]; 3] = [b"0123456789012345", b"................", b"\xff,e-x-x-x-x-x-x-x"];
        // Past 6 bytes, mostly digits, a point or a sign now and then.
        let past = |i: u32| {
            let pick = (i * i) as usize;
            if pick.is_multiple_of(11) {
                alphabet[pick % alphabet.len()]
            } else {
                b'0' + (pick % 10) as u8
            }
        };
        let mut seen = 0;
        each_field(alphabet, 6, 20, past, |field| {
            let want = parse_f64(field).map(f64::to_bits);
            for tail in tails {
                let w = [field, tail].concat();
                let shown = String::from_utf8_lossy(&w);
                assert_eq!(parse_f64_in(&w, field.len()).map(f64::to_bits), want, "{shown:?}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("sse4.1") {
                    // SAFETY: the CPU has SSE4.1.
                    let got = unsafe { parse_f64_in_sse41(&w, field.len()) };
                    assert_eq!(got.map(f64::to_bits), want, "{shown:?}");
                }
                seen += usize::from(want.is_some());
            }
        });
        assert!(seen > 100_000, "{seen} fields were numbers");
        // 16 digits and a point (17 bytes): a mantissa past 2^53, rounded
        // once by the fallback, not twice (to an `f64`, then by the
        // division); 16 digits alone, rounded once by the conversion.
        for v in [
            "925.1070446233593",
            "-9.500217535752335",
            "976926058.8601823",
            "9999999999999999",
            "9007199254740993",
        ] {
            let want = v.parse::<f64>().ok().map(f64::to_bits);
            let w = [v.as_bytes(), b"0000000000000000"].concat();
            assert_eq!(parse_f64_in(&w, v.len()).map(f64::to_bits), want, "{v}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("sse4.1") {
                // SAFETY: the CPU has SSE4.1.
                let got = unsafe { parse_f64_in_sse41(&w, v.len()) };
                assert_eq!(got.map(f64::to_bits), want, "{v}");
            }
        }
    }

    #[test]
    fn eight_digits_at_once() {
        assert_eq!(eight_digits(u64::from_le_bytes(*b"12345678")), Some(12_345_678));
        assert_eq!(eight_digits(u64::from_le_bytes(*b"00000000")), Some(0));
        assert_eq!(eight_digits(u64::from_le_bytes(*b"99999999")), Some(99_999_999));
        for bad in [b"1234567:", b"/2345678", b"1234 678", b"12345\x0078", b"1234567\xb9"] {
            assert_eq!(eight_digits(u64::from_le_bytes(*bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn digits_past_the_fast_path_are_rounded_by_the_fallback() {
        for s in ["9007199254740993", "1.00000000000000011102230246251565", "7e22", "1e23"] {
            let want: f64 = s.parse().unwrap();
            assert_eq!(parse_f64(s.as_bytes()).map(f64::to_bits), Some(want.to_bits()), "{s}");
        }
    }
}
