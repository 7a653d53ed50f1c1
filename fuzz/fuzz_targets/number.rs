//! Fuzz target: any bytes through the number kernel of typed columns
//! (`fastcsv::arrow::number`). It must never panic, and must agree with the
//! standard library: `parse_i64` with `i64::from_str` (without its `+`;
//! `0x` and 1 to 16 hex digits as the bits of an `i64`), `parse_f64` with
//! `f64::from_str` bit for bit (NaNs by sign), both after trimming spaces
//! and tabs.
//!
//! Run with `cargo +nightly fuzz run number` from the repository root.
#![no_main]

use fastcsv::arrow::number::{parse_f64, parse_i64};
use libfuzzer_sys::fuzz_target;

fn trim(v: &[u8]) -> &[u8] {
    let ws = |c: &u8| *c == b' ' || *c == b'\t';
    let s = v.iter().position(|c| !ws(c)).unwrap_or(v.len());
    let e = v.iter().rposition(|c| !ws(c)).map_or(s, |e| e + 1);
    &v[s..e]
}

fn model_i64(v: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(trim(v)).ok()?;
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let ok = (1..=16).contains(&hex.len()) && hex.bytes().all(|c| c.is_ascii_hexdigit());
        return ok.then(|| u64::from_str_radix(hex, 16).expect("hex digits") as i64);
    }
    if s.starts_with('+') {
        return None;
    }
    s.parse().ok()
}

fn model_f64(v: &[u8]) -> Option<f64> {
    std::str::from_utf8(trim(v)).ok()?.parse().ok()
}

fuzz_target!(|data: &[u8]| {
    assert_eq!(parse_i64(data), model_i64(data), "{:?}", String::from_utf8_lossy(data));
    match (parse_f64(data), model_f64(data)) {
        (Some(g), Some(w)) if w.is_nan() => {
            assert!(g.is_nan() && g.is_sign_negative() == w.is_sign_negative())
        }
        (g, w) => assert_eq!(
            g.map(f64::to_bits),
            w.map(f64::to_bits),
            "{:?}",
            String::from_utf8_lossy(data)
        ),
    }
});
