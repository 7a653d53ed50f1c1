//! Fuzz target: any bytes through the number kernel of typed columns
//! (`fastcsv::arrow::number`). It must never panic, and must agree with the
//! standard library: `parse_i64` with `i64::from_str` (without its `+`;
//! `0x` and 1 to 16 hex digits as the bits of an `i64`), `parse_f64` with
//! `f64::from_str` bit for bit (NaNs by sign), both after trimming spaces
//! and tabs. The word-at-a-time `parse_i64_in` and `parse_f64_in` must
//! give what `parse_i64` and `parse_f64` give for a field cut from the
//! data (its length the first byte), whatever bytes follow it; so must
//! `parse_f64_in_sse41` where the CPU has SSE4.1.
//!
//! Run with `cargo +nightly fuzz run number` from the repository root.
#![no_main]

use fastcsv::arrow::number::{parse_f64, parse_f64_in, parse_i64, parse_i64_in};
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
    if let Some((&k, window)) = data.split_first() {
        let len = usize::from(k).min(window.len());
        let field = &window[..len];
        let shown = String::from_utf8_lossy(data);
        assert_eq!(parse_i64_in(window, len), parse_i64(field), "{shown:?}");
        assert_eq!(key(parse_f64_in(window, len)), key(parse_f64(field)), "{shown:?}");
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("sse4.1") {
            // SAFETY: the CPU has SSE4.1.
            let got = unsafe { fastcsv::arrow::number::parse_f64_in_sse41(window, len) };
            assert_eq!(key(got), key(parse_f64(field)), "{shown:?}");
        }
    }
});

/// A float compared bit for bit, NaNs by sign.
fn key(x: Option<f64>) -> Option<(bool, u64)> {
    x.map(
        |x| if x.is_nan() { (true, u64::from(x.is_sign_negative())) } else { (false, x.to_bits()) },
    )
}
