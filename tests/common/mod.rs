//! Shared harness: push one input through every engine and every source
//! (the oracle, `oracle.rs`, which the fuzz target shares), and the
//! proptest strategies the property tests draw inputs and dialects from.
#![allow(dead_code)]

pub mod oracle;

// Not every test crate uses every name.
#[allow(unused_imports)]
pub use oracle::{check_every_engine, via_reader, SIZES};

use fastcsv::scan::reference::RefOutput;
use fastcsv::{Dialect, Filter, Terminator};
use proptest::prelude::*;

/// Case count: `PROPTEST_CASES` when set (for long local runs), else `n`.
pub fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(n)
}

/// Scan-level dialect: no headers, flexible, no BOM stripping (the
/// reference engine does not do those).
pub fn scan_dialect(b: &mut fastcsv::DialectBuilder) -> Dialect {
    b.headers(false).flexible(true).strip_bom(false).build().unwrap()
}

pub fn rows(out: &RefOutput) -> Vec<Vec<String>> {
    out.rows
        .iter()
        .map(|r| r.fields.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect())
        .collect()
}

/// Input tokens from a small alphabet: delimiters, quotes, escapes, every
/// line end, comments, UTF-8, long plain runs and well-formed records.
pub fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => Just(b",".to_vec()),
        5 => Just(b"\"".to_vec()),
        2 => Just(b"\"\"".to_vec()),
        2 => Just(b"\r".to_vec()),
        4 => Just(b"\n".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        6 => Just(b"a".to_vec()),
        2 => Just("é".as_bytes().to_vec()),
        1 => Just(b"\\".to_vec()),
        1 => Just(b"#".to_vec()),
        1 => Just(b" ".to_vec()),
        1 => Just(b";".to_vec()),
        1 => Just(b"\t".to_vec()),
        // Long plain runs make records span several 64-byte blocks.
        2 => "[a-z0-9 ]{20,140}".prop_map(String::into_bytes),
        // Well-formed quoted fields and records: the block path's bread
        // and butter, so it is exercised, not only its fallbacks.
        3 => "[a-z,\n\r]{0,90}".prop_map(|s| format!("\"{s}\"").into_bytes()),
        2 => "[a-z]{1,12}(,[a-z0-9]{0,12}){1,8}\n".prop_map(String::into_bytes),
    ]
}

pub fn input() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(token(), 0..60).prop_map(|v| v.concat())
}

/// A dialect at scan level (no headers, flexible, no BOM), or `None` for
/// combinations the builder rejects.
#[allow(clippy::type_complexity)]
pub fn dialect() -> impl Strategy<Value = Option<Dialect>> {
    (
        (
            prop::bool::weighted(0.85),
            prop::bool::weighted(0.15),
            any::<bool>(),
            prop::bool::weighted(0.15),
        ),
        (prop::bool::weighted(0.2), prop::bool::weighted(0.15), 0..6u8, prop::bool::weighted(0.2)),
        (prop::bool::weighted(0.1), 0..8u8, prop::bool::weighted(0.1), 0..8u8),
    )
        .prop_map(
            |(
                (quote, esc, dq, space),
                (strict, comment, term, empty),
                (trim, lim, filt, delim),
            )| {
                let terminator = match term {
                    0 => Terminator::Byte(b'\n'),
                    1 => Terminator::Byte(b';'),
                    _ => Terminator::Any,
                };
                // Mostly commas; also `;` (the terminator in some cases,
                // which the builder rejects), tab and space.
                let delimiter = match delim {
                    0 => b';',
                    1 => b'\t',
                    2 => b' ',
                    _ => b',',
                };
                Dialect::builder()
                    .delimiter(delimiter)
                    .quote(quote.then_some(b'"'))
                    .escape(esc.then_some(b'\\'))
                    .double_quote(dq || !esc)
                    .skip_initial_space(space)
                    .strict(strict)
                    .comment(comment.then_some(b'#'))
                    .terminator(terminator)
                    .skip_empty_lines(empty)
                    .trim(trim)
                    .field_limit(if lim == 0 { Some(5) } else { None })
                    .filter(if filt { Filter::Controls } else { Filter::Off })
                    .headers(false)
                    .flexible(true)
                    .strip_bom(false)
                    .build()
                    .ok()
            },
        )
}
