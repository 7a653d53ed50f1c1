//! The number kernel of typed columns (`fastcsv::arrow::number`) against
//! the standard library's parsers: every input that either accepts must get
//! the same value, bit for bit, from both.

use fastcsv::arrow::number::{parse_f64, parse_f64_in, parse_i64, parse_i64_in};
use proptest::prelude::*;

/// [`parse_f64_in`] and, where the CPU has SSE4.1, its vector twin: both
/// must give `want`'s bits (NaNs by sign) for the field `w[..len]`.
fn in_place_f64(w: &[u8], len: usize) -> Option<(bool, u64)> {
    let got = key(parse_f64_in(w, len));
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.1") {
        // SAFETY: the CPU has SSE4.1.
        let vector = key(unsafe { fastcsv::arrow::number::parse_f64_in_sse41(w, len) });
        assert_eq!(vector, got, "SSE4.1 against word at a time: {:?}", bstr(w));
    }
    got
}

/// Spaces and tabs around a number are not part of it.
fn trim(v: &[u8]) -> &[u8] {
    let ws = |c: &u8| *c == b' ' || *c == b'\t';
    let s = v.iter().position(|c| !ws(c)).unwrap_or(v.len());
    let e = v.iter().rposition(|c| !ws(c)).map_or(s, |e| e + 1);
    &v[s..e]
}

/// What `parse_i64` must return: std's `i64` parser without its `+`, or
/// `0x` and 1 to 16 hex digits as the bits of an `i64`.
fn model_i64(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(trim(v)).ok()?;
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let ok = (1..=16).contains(&hex.len()) && hex.bytes().all(|c| c.is_ascii_hexdigit());
        return ok.then(|| u64::from_str_radix(hex, 16).unwrap() as i64);
    }
    if s.starts_with('+') {
        return None;
    }
    s.parse().ok()
}

/// What `parse_f64` must return: std's `f64` parser (whose grammar,
/// `inf` / `infinity` / `nan` spellings included, is the one typed columns
/// accept).
fn model_f64(v: &[u8]) -> Option<f64> {
    std::str::from_utf8(trim(v)).ok()?.parse().ok()
}

/// What may follow a field in the window the `_in` parsers read a word at
/// a time: the rest of a record, digits, points, or nothing.
const AFTER: [&[u8]; 6] = [
    b"",
    b",",
    b",2024-01-01T00:00:00Z,1.5",
    b"00000000000000000000000000000000",
    b"..............e+-...............",
    b"\xff\x80\n\r\t 9999999999999999999999999",
];

/// `v` followed by each of [`AFTER`], for the `_in` parsers.
fn windows(v: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    AFTER.iter().map(move |a| [v, a].concat())
}

/// A float compared bit for bit, NaNs by sign.
fn key(x: Option<f64>) -> Option<(bool, u64)> {
    x.map(
        |x| if x.is_nan() { (true, u64::from(x.is_sign_negative())) } else { (false, x.to_bits()) },
    )
}

fn same_f64(v: &[u8]) {
    let (got, want) = (parse_f64(v), model_f64(v));
    match (got, want) {
        (Some(g), Some(w)) if w.is_nan() => {
            assert!(g.is_nan() && g.is_sign_negative() == w.is_sign_negative(), "{v:?}")
        }
        _ => assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{:?}", bstr(v)),
    }
    // Read a word at a time, bit for bit the same (NaNs by sign).
    for w in windows(v) {
        assert_eq!(in_place_f64(&w, v.len()), key(got), "{:?} in {:?}", bstr(v), bstr(&w));
    }
}

fn same_i64(v: &[u8]) {
    let got = parse_i64(v);
    assert_eq!(got, model_i64(v), "{:?}", bstr(v));
    for w in windows(v) {
        assert_eq!(parse_i64_in(&w, v.len()), got, "{:?} in {:?}", bstr(v), bstr(&w));
    }
}

fn bstr(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

#[test]
fn edge_cases() {
    let cases: &[&str] = &[
        "",
        " ",
        "0",
        "-0",
        "+0",
        "00000000000000000000000000001",
        "-00000000000000000000000000001",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "1234567890123456789",
        "12345678901234567890",
        "12345678",
        "123456789",
        "1234567:",
        "1234567/",
        "0x",
        "0x0",
        "0XfFfF",
        "0x00000000000000001",
        "0xFFFFFFFFFFFFFFFF",
        "-0x1",
        "0x-1",
        "0x+1",
        "+0x1",
        "1_000",
        "1,5",
        ".",
        "-.",
        ".5",
        "5.",
        "-.5e-3",
        "+5.E+3",
        "e5",
        "1e",
        "1e+",
        "1e-",
        "1e5.",
        "1.2.3",
        "1..2",
        "inf",
        "-inf",
        "+INF",
        "Infinity",
        "-infinity",
        "infinit",
        "infinityy",
        "nan",
        "-NaN",
        "+nan",
        "nan(1)",
        "snan",
        "2.2250738585072014e-308",
        "2.2250738585072011e-308",
        "4.9e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "1e-400",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "1e309",
        "1e99999999999999999999999",
        "1e-99999999999999999999999",
        "0e99999999999",
        "9007199254740992",
        "9007199254740993",
        "9007199254740993.0000000000000000001",
        "0.1",
        "0.30000000000000004",
        "123456789012345678901234567890",
        "1e22",
        "1e23",
        "7e22",
        "19.99",
        "\t-12.50 ",
        " 7 ",
        "\u{a0}7",
        "\x0b1",
        "١",
    ];
    for c in cases {
        same_i64(c.as_bytes());
        same_f64(c.as_bytes());
    }
    for bits in [1u64, 2, 0x000F_FFFF_FFFF_FFFF, 0x0010_0000_0000_0000, 0x7FEF_FFFF_FFFF_FFFF] {
        let x = f64::from_bits(bits);
        for s in [format!("{x}"), format!("{x:e}"), format!("{x:.17e}"), format!("{x:.30e}")] {
            same_f64(s.as_bytes());
            assert_eq!(parse_f64(s.as_bytes()), Some(x), "{s}");
        }
    }
    same_f64(b"\xff");
    same_i64(b"\xff1");
}

/// Bytes that numbers are made of, so that random strings are often
/// nearly numbers.
fn numberish() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: Vec<u8> =
        b"0123456789012345678901234567890123456789.-+eExX \tinfaINFAty".to_vec();
    proptest::collection::vec(proptest::sample::select(alphabet), 0..28)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn any_i64_round_trips(n: i64, zeros in 0usize..4, pad in 0usize..2) {
        let sign = if n < 0 { "-" } else { "" };
        let s = format!("{}{sign}{}{}{}", " ".repeat(pad), "0".repeat(zeros), n.unsigned_abs(), "\t".repeat(pad));
        prop_assert_eq!(parse_i64(s.as_bytes()), Some(n));
        same_f64(s.as_bytes());
    }

    #[test]
    fn any_u64_as_an_i64(n: u64) {
        same_i64(n.to_string().as_bytes());
        same_i64(format!("{n:x}").as_bytes());
        same_i64(format!("0x{n:X}").as_bytes());
        same_f64(n.to_string().as_bytes());
    }

    #[test]
    fn any_f64_round_trips(bits: u64) {
        let x = f64::from_bits(bits);
        for s in [format!("{x}"), format!("{x:e}"), format!("{x:E}"), format!("{x:.2}"), format!("{x:.17e}"), format!("{x:.3e}")] {
            same_f64(s.as_bytes());
        }
        if !x.is_nan() {
            // The shortest forms name `x` itself.
            for s in [format!("{x}"), format!("{x:e}")] {
                prop_assert_eq!(parse_f64(s.as_bytes()).map(f64::to_bits), Some(x.to_bits()), "{}", s);
            }
        }
    }

    #[test]
    fn decimal_strings(int in "[0-9]{0,22}", frac in proptest::option::of("[0-9]{0,22}"), exp in proptest::option::of(-350i32..350), sign in "[+-]?") {
        let mut s = format!("{sign}{int}");
        if let Some(f) = frac {
            s.push('.');
            s.push_str(&f);
        }
        if let Some(e) = exp {
            s.push_str(&format!("e{e}"));
        }
        same_f64(s.as_bytes());
        same_i64(s.as_bytes());
    }

    #[test]
    fn prices_and_short_ints(cents in 0u64..100_000_000, small in -1000i64..1000) {
        let p = format!("{}.{:02}", cents / 100, cents % 100);
        same_f64(p.as_bytes());
        let s = small.to_string();
        same_f64(s.as_bytes());
        prop_assert_eq!(parse_i64(s.as_bytes()), Some(small));
    }

    #[test]
    fn short_decimals_with_any_bytes_after(int in "[0-9]{0,9}", frac in proptest::option::of("[0-9]{0,10}"), sign in "[+-]?", after in proptest::collection::vec(any::<u8>(), 0..24)) {
        let mut s = format!("{sign}{int}");
        if let Some(f) = frac {
            s.push('.');
            s.push_str(&f);
        }
        same_f64(s.as_bytes());
        same_i64(s.as_bytes());
        let w = [s.as_bytes(), &after].concat();
        prop_assert_eq!(in_place_f64(&w, s.len()), key(model_f64(s.as_bytes())), "{}", s);
        prop_assert_eq!(parse_i64_in(&w, s.len()), model_i64(s.as_bytes()), "{}", s);
    }

    #[test]
    fn nearly_numbers_with_any_bytes_after(v in numberish(), after in proptest::collection::vec(any::<u8>(), 0..24)) {
        let w = [&v[..], &after].concat();
        prop_assert_eq!(parse_i64_in(&w, v.len()), model_i64(&v), "{}", bstr(&v));
        prop_assert_eq!(in_place_f64(&w, v.len()), key(model_f64(&v)), "{}", bstr(&v));
    }

    #[test]
    fn nearly_numbers(v in numberish()) {
        same_i64(&v);
        same_f64(&v);
    }

    #[test]
    fn any_bytes(v in proptest::collection::vec(any::<u8>(), 0..24)) {
        same_i64(&v);
        same_f64(&v);
    }
}
