//! Dates and times as Arrow's ISO-8601 parser reads them (see
//! [`super::typed`] for the rules).

use super::typed::{trim, DataType, TimeUnit};

/// A date or a date and time, as Arrow's ISO-8601 parser reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct When {
    /// Seconds since 1970-01-01 00:00:00 (in UTC, when zoned).
    pub(crate) secs: i64,
    /// The fraction of the second, in nanoseconds.
    pub(crate) nanos: u32,
    /// A fraction was written (`.5`).
    pub(crate) frac: bool,
    /// Digits of the fraction (0 without one).
    pub(crate) frac_digits: u32,
    /// A date alone (`2024-08-18`).
    pub(crate) date_only: bool,
    /// A zone was written (`Z`, `+01`, `+0100`, `+01:00`).
    pub(crate) utc: bool,
    /// Spaces or tabs were around it (a date allows them, a timestamp
    /// does not, as in Arrow).
    pub(crate) padded: bool,
}

impl When {
    /// Days since 1970-01-01, for a date alone.
    pub(crate) fn days(&self) -> i64 {
        self.secs.div_euclid(86_400)
    }

    /// Nanoseconds since 1970-01-01, if they fit `i64`.
    pub(crate) fn ns(&self) -> Option<i64> {
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
///
/// Without a branch per digit: the digits are summed whatever they are,
/// and the sum kept only if every byte was one (the places of a date and
/// time are fixed, so with constant `n` the loop unrolls).
#[inline(always)]
fn digits(v: &[u8], at: usize, n: usize) -> Option<u32> {
    let d = v.get(at..at + n)?;
    let (mut acc, mut bad) = (0u32, false);
    for &c in d {
        let x = c.wrapping_sub(b'0');
        bad |= x > 9;
        acc = acc.wrapping_mul(10).wrapping_add(u32::from(x));
    }
    (!bad).then_some(acc)
}

/// Eight ASCII digits as bytes `0..8` of `w` (first digit lowest): the
/// four two-digit numbers they make (first pair lowest), or `None` if a
/// byte is not a digit.
#[inline(always)]
fn digit_pairs(w: u64) -> Option<[u32; 4]> {
    // Each byte minus '0' must be 0..=9 (see `number::eight_digits`).
    let x = w.wrapping_sub(0x3030_3030_3030_3030);
    let over = w.wrapping_add(0x4646_4646_4646_4646);
    if (x | over) & 0x8080_8080_8080_8080 != 0 {
        return None;
    }
    // Each pair's value in the low byte of its 16 bits.
    let p = x.wrapping_mul(10 * 256 + 1) >> 8;
    let b = |k: u32| (p >> (16 * k)) as u32 & 0xFF;
    Some([b(0), b(1), b(2), b(3)])
}

/// The year's two digit pairs, the month and the day of `v`, at least 10
/// bytes with `-` at 4 and 7, as numbers; `None` if one is not a digit.
#[inline(always)]
fn date_digits(v: &[u8]) -> Option<[u32; 4]> {
    let v: &[u8; 10] = v.get(..10)?.try_into().ok()?;
    let w = u64::from(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
        | u64::from(u16::from_le_bytes([v[5], v[6]])) << 32
        | u64::from(u16::from_le_bytes([v[8], v[9]])) << 48;
    digit_pairs(w)
}

/// The days of month `m` (0 for a number that is no month) in the year of
/// digit pairs `y1`, `y2`, with no branch on the values (dates in a column
/// are in no order): a table of a common year's months, and one more for
/// February of a leap year. The leap-year test reads the digit pairs:
/// `y % 4` is `y2 % 4` (100 is a multiple of 4), `y % 100` is `y2`, and a
/// year with `y2 == 0` is a multiple of 400 when `y1` is a multiple of 4.
#[inline(always)]
fn month_days(y1: u32, y2: u32, m: u32) -> u32 {
    let leap = y2.is_multiple_of(4) & ((y2 != 0) | y1.is_multiple_of(4));
    u32::from(MONTH_DAYS[(m as usize).min(13)]) + u32::from(leap & (m == 2))
}

/// `hh:mm:ss` at `v[11..19]`: the hours, minutes and seconds; `None` when
/// the bytes are laid out otherwise or one is not a digit.
#[inline(always)]
fn clock_digits(v: &[u8]) -> Option<(u32, u32, u32)> {
    let t: &[u8; 8] = v.get(11..19)?.try_into().ok()?;
    if t[2] != b':' || t[5] != b':' {
        return None;
    }
    let w = u64::from_le_bytes([t[0], t[1], t[3], t[4], t[6], t[7], b'0', b'0']);
    let [h, m, s, _] = digit_pairs(w)?;
    Some((h, m, s))
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
    let [y1, y2, m, d] = date_digits(v)?;
    if (d == 0) | (d > month_days(y1, y2, m)) {
        return None;
    }
    let days = days_from_civil(i64::from(y1 * 100 + y2), m, d);
    let mut w = When {
        secs: days * 86_400,
        nanos: 0,
        frac: false,
        frac_digits: 0,
        date_only: true,
        utc: false,
        padded,
    };
    if v.len() == 10 {
        return Some(w);
    }
    if v[10] != b'T' && v[10] != b' ' {
        return None;
    }
    w.date_only = false;
    let (hh, mut mm, mut ss, mut at, seconds);
    if let Some((h, m, s)) = clock_digits(v) {
        // `hh:mm:ss`, the usual layout, at once.
        (hh, mm, ss, at, seconds) = (h, m, s, 19, true);
    } else {
        (hh, mm, ss, at) = (digits(v, 11, 2)?, 0, 0, 13);
        let mut with_seconds = false;
        if v.get(at) == Some(&b':') {
            mm = digits(v, at + 1, 2)?;
            at += 3;
            if v.get(at) == Some(&b':') {
                ss = digits(v, at + 1, 2)?;
                at += 3;
                with_seconds = true;
            }
        }
        seconds = with_seconds;
    }
    if seconds && v.get(at) == Some(&b'.') {
        let n = v[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=9).contains(&n) {
            return None;
        }
        w.nanos = digits(v, at + 1, n)? * 10u32.pow(9 - n as u32);
        w.frac = true;
        w.frac_digits = n as u32;
        at += 1 + n;
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
pub(crate) fn parse_temporal(v: &[u8], ty: DataType) -> Option<i64> {
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

/// [`parse_temporal`] of the field `window[..len]`, reading the usual
/// layout of a timestamp, `YYYY-MM-DDThh:mm:ss` (`T` or a space) with a
/// `Z` or nothing after it, three words at a time when the window holds 24
/// bytes (the bytes after the field are read, never used); other layouts
/// and types go to [`parse_temporal`]. The same result for every input.
/// Panics if `len` is over `window.len()`.
///
/// (The typed columns call [`parse_timestamp_fields_in`]; this one, over
/// every type, is the tests'.)
#[cfg(test)]
pub(crate) fn parse_temporal_in(window: &[u8], len: usize, ty: DataType) -> Option<i64> {
    if let DataType::Timestamp { nanos, utc } = ty {
        return parse_timestamp_fields_in(window, len, nanos, utc);
    }
    parse_temporal_out_of_line(&window[..len], ty)
}

/// [`parse_temporal_in`] for `DataType::Timestamp { nanos, utc }`, given
/// by its two flags.
#[inline(always)]
pub(crate) fn parse_timestamp_fields_in(
    window: &[u8],
    len: usize,
    nanos: bool,
    utc: bool,
) -> Option<i64> {
    match usual_timestamp(window, len, utc) {
        Some(secs) if nanos => secs.checked_mul(1_000_000_000),
        Some(secs) => Some(secs),
        None => parse_temporal_out_of_line(&window[..len], DataType::Timestamp { nanos, utc }),
    }
}

/// [`parse_when`] of the field `window[..len]`, reading the usual layout
/// of a timestamp (see [`parse_temporal_in`]) three words at a time when
/// the window holds 24 bytes: the same result for every input.
#[inline(always)]
pub(crate) fn parse_when_in(window: &[u8], len: usize) -> Option<When> {
    let utc = len == 20;
    match usual_timestamp(window, len, utc) {
        Some(secs) => Some(When {
            secs,
            nanos: 0,
            frac: false,
            frac_digits: 0,
            date_only: false,
            utc,
            padded: false,
        }),
        None => parse_when_out_of_line(&window[..len]),
    }
}

/// [`parse_when`], out of line (see [`parse_temporal_out_of_line`]).
#[inline(never)]
fn parse_when_out_of_line(v: &[u8]) -> Option<When> {
    parse_when(v)
}

/// [`parse_temporal`], out of line: the fast path stays small where it is
/// inlined.
#[inline(never)]
fn parse_temporal_out_of_line(v: &[u8], ty: DataType) -> Option<i64> {
    parse_temporal(v, ty)
}

/// The seconds of `window[..len]` when it is `YYYY-MM-DDThh:mm:ss` (or
/// with a space for the `T`), followed by `Z` when `utc` and by nothing
/// otherwise, and a valid date and time, with 24 bytes in the window;
/// `None` for anything else (which [`parse_when`] then reads, whether
/// valid or not). For such a field [`parse_when`] gives the same seconds,
/// with no fraction, no padding and a zone exactly when `utc`.
#[inline(always)]
fn usual_timestamp(window: &[u8], len: usize, utc: bool) -> Option<i64> {
    if len != 19 + usize::from(utc) {
        return None;
    }
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(window.get(at..at + 8)?.try_into().ok()?))
    };
    let (w0, w1, w2) = (word(0)?, word(8)?, word(16)?);
    // `-` at 4 and 7, `T` or a space at 10, `:` at 13 and 16, and `Z` at
    // 19 when zoned.
    let t = (w1 >> 16) as u8;
    let punct = (w0 & 0xFF00_00FF_0000_0000) == 0x2D00_002D_0000_0000
        && (t == b'T' || t == b' ')
        && (w1 & 0x0000_FF00_0000_0000) == 0x0000_3A00_0000_0000
        && (w2 & 0xFF) == 0x3A
        && (!utc || (w2 >> 24) as u8 == b'Z');
    if !punct {
        return None;
    }
    // The date's eight digits, then the time's six (and two zeros).
    let date = (w0 & 0xFFFF_FFFF) | (w0 >> 8) & 0xFFFF_0000_0000 | w1 << 48;
    let time = (w1 >> 24) & 0xFFFF
        | (w1 >> 32) & 0xFFFF_0000
        | (w2 << 24) & 0xFFFF_0000_0000
        | 0x3030_0000_0000_0000;
    let [y1, y2, m, d] = digit_pairs(date)?;
    let [hh, mm, ss, _] = digit_pairs(time)?;
    let y = y1 * 100 + y2;
    // No branch on the values: `|` of the tests (see `month_days`).
    if (d == 0) | (d > month_days(y1, y2, m)) | (hh > 23) | (mm > 59) | (ss > 59) {
        return None;
    }
    Some(days_from_civil_4(y, m, d) * 86_400 + i64::from(hh * 3600 + mm * 60 + ss))
}

/// Days of each month of a common year, by month number (0 and 13 have
/// none: no day fits).
const MONTH_DAYS: [u8; 14] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 0];

/// [`days_from_civil`] for a year of four digits (0 to 9999), in unsigned
/// arithmetic: the year moved up by one 400-year cycle (146,097 days).
#[inline(always)]
fn days_from_civil_4(y: u32, m: u32, d: u32) -> i64 {
    let y = y + 400 - u32::from(m <= 2);
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i64::from(era * 146_097 + doe) - 719_468 - 146_097
}

/// Parses a timestamp in `unit` (`zoned`: the value must have a zone,
/// and is taken to UTC; else it must not), as pyarrow does: a date alone
/// is its midnight, and the fraction may have at most the unit's digits.
pub(crate) fn parse_timestamp_in(v: &[u8], unit: TimeUnit, zoned: bool) -> Option<i64> {
    let w = parse_when(v)?;
    if w.utc != zoned || w.padded || w.frac_digits > unit.digits() {
        return None;
    }
    let frac = i64::from(w.nanos) / 10i64.pow(9 - unit.digits());
    w.secs.checked_mul(unit.per_second())?.checked_add(frac)
}

/// Parses a time of day in `unit`: `hh:mm`, `hh:mm:ss` or
/// `hh:mm:ss.fraction` (at most the unit's digits), spaces and tabs
/// around allowed, as pyarrow does; units since midnight.
pub(crate) fn parse_time(v: &[u8], unit: TimeUnit) -> Option<i64> {
    let v = trim(v);
    if v.len() < 5 || v[2] != b':' {
        return None;
    }
    let (hh, mm) = (digits(v, 0, 2)?, digits(v, 3, 2)?);
    let (mut ss, mut frac, mut n) = (0, 0, 0);
    match v.len() {
        5 => {}
        8.. if v[5] == b':' => {
            ss = digits(v, 6, 2)?;
            if v.len() > 8 {
                n = v.len() - 9;
                if v[8] != b'.' || n == 0 || n as u32 > unit.digits() {
                    return None;
                }
                frac = digits(v, 9, n)?;
            }
        }
        _ => return None,
    }
    if hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    let secs = i64::from(hh * 3600 + mm * 60 + ss);
    let frac = i64::from(frac) * 10i64.pow(unit.digits() - n as u32);
    Some(secs * unit.per_second() + frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls `check` on every prefix of `t`, on `t` with each byte in turn
    /// replaced by each of `subs`, and on each of those with a second byte
    /// (drawn by `rng`) replaced too.
    fn mutations(t: &[u8], subs: &[u8], rng: &mut u64, check: &mut impl FnMut(&[u8])) {
        for n in 0..=t.len() {
            check(&t[..n]);
        }
        for i in 0..t.len() {
            for &c in subs {
                let mut v = t.to_vec();
                v[i] = c;
                check(&v);
                *rng ^= *rng << 13;
                *rng ^= *rng >> 7;
                *rng ^= *rng << 17;
                let k = (*rng % t.len() as u64) as usize;
                v[k] = subs[(*rng >> 32) as usize % subs.len()];
                check(&v);
            }
        }
    }

    /// `parse_when` as it was written before its fixed-layout fast paths:
    /// digit by digit.
    fn reference(v: &[u8]) -> Option<When> {
        let slow = |v: &[u8], at: usize, n: usize| -> Option<u32> {
            let d = v.get(at..at + n)?;
            d.iter()
                .try_fold(0u32, |a, &c| c.is_ascii_digit().then(|| a * 10 + u32::from(c - b'0')))
        };
        let raw = v.len();
        let v = trim(v);
        let padded = v.len() != raw;
        if v.len() < 10 || v[4] != b'-' || v[7] != b'-' {
            return None;
        }
        let (y, m, d) = (slow(v, 0, 4)?, slow(v, 5, 2)?, slow(v, 8, 2)?);
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        if !(1..=12).contains(&m) || d == 0 || d > month_days[m as usize - 1] {
            return None;
        }
        let secs = days_from_civil(i64::from(y), m, d) * 86_400;
        let mut w = When {
            secs,
            nanos: 0,
            frac: false,
            frac_digits: 0,
            date_only: true,
            utc: false,
            padded,
        };
        if v.len() == 10 {
            return Some(w);
        }
        if v[10] != b'T' && v[10] != b' ' {
            return None;
        }
        w.date_only = false;
        let hh = slow(v, 11, 2)?;
        let mut at = 13;
        let (mut mm, mut ss) = (0, 0);
        if v.get(at) == Some(&b':') {
            mm = slow(v, at + 1, 2)?;
            at += 3;
            if v.get(at) == Some(&b':') {
                ss = slow(v, at + 1, 2)?;
                at += 3;
                if v.get(at) == Some(&b'.') {
                    let n = v[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                    if !(1..=9).contains(&n) {
                        return None;
                    }
                    w.nanos = slow(v, at + 1, n)? * 10u32.pow(9 - n as u32);
                    w.frac = true;
                    w.frac_digits = n as u32;
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
                    2 => (slow(zone, 0, 2)?, 0),
                    4 => (slow(zone, 0, 2)?, slow(zone, 2, 2)?),
                    5 if zone[2] == b':' => (slow(zone, 0, 2)?, slow(zone, 3, 2)?),
                    _ => return None,
                };
                if zh > 23 || zm > 59 {
                    return None;
                }
                let off = i64::from(zh * 3600 + zm * 60);
                w.secs -= if *sign == b'+' { off } else { -off };
                w.utc = true;
            }
            _ => return None,
        }
        Some(w)
    }

    #[test]
    fn fixed_layouts_parse_as_digit_by_digit() {
        let templates: [&[u8]; 8] = [
            b"2024-02-29T23:59:59.123456789+05:30",
            b"1999-12-31 00:00:00Z",
            b"2023-02-29T10:10:32",
            b"0000-01-01T00:00",
            b"9999-12-31T23",
            b"2024-08-18",
            b" 2024-08-18T10:10:32-0100\t",
            b"1970-01-01T00:00:00.5",
        ];
        // Each byte in turn replaced by others that are near the grammar.
        let subs = b"0159:-T Z.+/\x00a\xff";
        let mut seen = 0;
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        for t in templates {
            let mut check = |v: &[u8]| {
                assert_eq!(parse_when(v), reference(v), "{:?}", String::from_utf8_lossy(v));
                seen += 1;
            };
            check(t);
            mutations(t, subs, &mut rng, &mut check);
        }
        assert!(seen > 1000);
    }

    #[test]
    fn four_digit_years_count_days_as_the_general_formula() {
        for y in 0..=9999 {
            for m in 1..=12 {
                for d in [1, 28] {
                    assert_eq!(days_from_civil_4(y, m, d), days_from_civil(i64::from(y), m, d));
                }
            }
        }
    }

    /// Every month number and day number of two digits, in common and
    /// leap years and the century years either way (1800, 1900, 2100 and
    /// 2200 are not leap years, 0000 and 2000 are): the word-at-a-time
    /// reading, `parse_when` and the digit-by-digit reference agree on
    /// which are dates, and on their seconds.
    #[test]
    fn every_month_and_day_read_in_place_as_parse_when() {
        let mut dates = 0;
        for y in ["0000", "1800", "1900", "1970", "2000", "2023", "2024", "2100", "2200", "9999"] {
            for m in 0..100 {
                for d in 0..100 {
                    for tail in ["Z", ""] {
                        let v = format!("{y}-{m:02}-{d:02}T23:59:58{tail}");
                        let w = format!("{v},0000000000000000");
                        let got = parse_when_in(w.as_bytes(), v.len());
                        assert_eq!(got, parse_when(v.as_bytes()), "{v}");
                        assert_eq!(got, reference(v.as_bytes()), "{v}");
                        dates += usize::from(got.is_some());
                    }
                    // The other layouts (`parse_when` alone) against the
                    // digit-by-digit reading.
                    for v in [
                        format!("{y}-{m:02}-{d:02}"),
                        format!("{y}-{m:02}-{d:02} 01:02:03.5+01:00"),
                    ] {
                        assert_eq!(parse_when(v.as_bytes()), reference(v.as_bytes()), "{v}");
                    }
                }
            }
        }
        // 366 days in 0000, 2000 and 2024, 365 in the other seven, with and
        // without Z.
        assert_eq!(dates, 2 * (7 * 365 + 3 * 366));
    }

    /// Every hour and minute of two digits, with seconds in and out of
    /// range, on two dates, zoned and not: read in place as
    /// `parse_temporal` reads them.
    #[test]
    fn every_time_of_day_read_in_place_as_parse_temporal() {
        let mut times = 0;
        for date in ["2024-02-29", "1969-12-31"] {
            for h in 0..100 {
                for m in 0..100 {
                    for s in [0, 7, 59, 60, 99] {
                        for (tail, utc) in [("Z", true), ("", false)] {
                            let v = format!("{date}T{h:02}:{m:02}:{s:02}{tail}");
                            let w = format!("{v},0");
                            let ty = DataType::Timestamp { nanos: false, utc };
                            let want = parse_temporal(v.as_bytes(), ty);
                            let got = parse_timestamp_fields_in(w.as_bytes(), v.len(), false, utc);
                            assert_eq!(got, want, "{v}");
                            times += usize::from(got.is_some());
                        }
                    }
                }
            }
        }
        assert_eq!(times, 2 * 2 * 24 * 60 * 3);
    }

    #[test]
    fn usual_timestamps_read_in_place_as_parse_temporal() {
        let templates: [&[u8]; 7] = [
            b"2024-08-18T10:10:32Z",
            b"2008-09-10 19:45:00",
            b"2024-02-29T23:59:59Z",
            b"2023-02-29 23:59:59",
            b"0000-01-01T00:00:00",
            b"9999-12-31T23:59:59Z",
            b"1969-12-31 23:59:59",
        ];
        let after: [&[u8]; 4] = [b"", b",", b",2024-08-18T10:10:32Z,1.5", b"Z0000000:00:00"];
        let subs = b"0129:-T tZz.+/\x00\xff\x54\x20";
        let types = [(false, false), (false, true), (true, false), (true, true)]
            .map(|(nanos, utc)| DataType::Timestamp { nanos, utc });
        let mut seen = 0;
        let mut check = |v: &[u8]| {
            for a in after {
                let w = [v, a].concat();
                assert_eq!(
                    parse_when_in(&w, v.len()),
                    parse_when(v),
                    "{:?}",
                    String::from_utf8_lossy(&w)
                );
                for ty in types.into_iter().chain([DataType::Date32]) {
                    let want = parse_temporal(v, ty);
                    assert_eq!(
                        parse_temporal_in(&w, v.len(), ty),
                        want,
                        "{:?} {ty:?}",
                        String::from_utf8_lossy(&w)
                    );
                    seen += 1;
                }
            }
        };
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        for t in templates {
            mutations(t, subs, &mut rng, &mut check);
        }
        assert!(seen > 10_000);
    }

    #[test]
    fn times_and_units_as_pyarrow_reads_them() {
        use TimeUnit::*;
        assert_eq!(parse_time(b"10:00", Second), Some(36_000));
        assert_eq!(parse_time(b" 10:00:01\t", Second), Some(36_001));
        assert_eq!(parse_time(b"10:00:00.5", Millisecond), Some(36_000_500));
        assert_eq!(parse_time(b"23:59:59.123456", Microsecond), Some(86_399_123_456));
        for (bad, unit) in [
            ("10:00:00.5", Second),
            ("10:00:00.1000", Millisecond),
            ("24:00:00", Second),
            ("10", Second),
            ("10:00Z", Second),
            ("10:00:00Z", Second),
            ("10:00:00.", Millisecond),
            ("1:00:00", Second),
        ] {
            assert_eq!(parse_time(bad.as_bytes(), unit), None, "{bad}");
        }
        let ts = |v: &str, unit, zoned| parse_timestamp_in(v.as_bytes(), unit, zoned);
        assert_eq!(ts("2024-01-01T10:00:00.1", Millisecond, false), Some(1_704_103_200_100));
        assert_eq!(ts("2024-01-01", Microsecond, false), Some(1_704_067_200_000_000));
        assert_eq!(ts("2024-01-01T10:00:00.1000", Millisecond, false), None);
        assert_eq!(ts("2024-01-01T10:00:00+01:00", Millisecond, false), None);
        assert_eq!(ts("2024-01-01T10:00:00", Millisecond, true), None);
        assert_eq!(ts("2024-01-01T10:00:00Z", Second, true), Some(1_704_103_200));
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
}
