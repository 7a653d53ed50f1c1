//! Shared harness: push one input through every engine and every source.
#![allow(dead_code)]

use fastcsv::scan::reference::{self, RefOutput, RefRow};
use fastcsv::{Dialect, Filter, Reader, SourceChoice, Terminator};
use proptest::prelude::*;

/// Case count: `PROPTEST_CASES` when set (for long local runs), else `n`.
pub fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(n)
}

/// What a run produced, in the reference engine's terms.
pub fn via_reader(mut rdr: Reader<'_>) -> RefOutput {
    let mut rows = Vec::new();
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let fields = row.iter().map(|f| f.to_vec()).collect();
                let line = rdr.line();
                rows.push(RefRow { fields, line });
            }
            Ok(None) => return RefOutput { rows, error: None },
            Err(e) => {
                return RefOutput { rows, error: Some((e.message(), rdr.line())) };
            }
        }
    }
}

/// Scan-level dialect: no headers, flexible, no BOM stripping (the
/// reference engine does not do those).
pub fn scan_dialect(b: &mut fastcsv::DialectBuilder) -> Dialect {
    b.headers(false).flexible(true).strip_bom(false).build().unwrap()
}

/// Buffer sizes that split records everywhere.
pub const SIZES: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 13, 64, 4096];

/// Runs `input` through the reference engine, the slice reader, the
/// buffered reader at every size in `SIZES` (synchronous over the slice,
/// and with a read-ahead thread over a temp file); checks they all agree
/// and returns the reference output.
pub fn check_all(d: &Dialect, input: &[u8]) -> RefOutput {
    let want = reference::parse(d, input);
    let got = via_reader(Reader::builder().dialect(d.clone()).from_slice(input));
    assert_eq!(got, want, "slice vs reference on {:?} with {d:?}", String::from_utf8_lossy(input));
    for &n in SIZES {
        let got =
            via_reader(Reader::builder().dialect(d.clone()).buffer_size(n).from_reader(input));
        assert_eq!(got, want, "buffered({n}) vs reference on {:?}", String::from_utf8_lossy(input));
    }
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, input).unwrap();
    for &n in SIZES {
        let rdr = Reader::builder()
            .dialect(d.clone())
            .source(SourceChoice::Buffered)
            .read_ahead(true)
            .buffer_size(n)
            .from_path(f.path())
            .unwrap();
        assert!(rdr.reads_ahead());
        let got = via_reader(rdr);
        let text = String::from_utf8_lossy(input);
        assert_eq!(got, want, "read-ahead({n}) vs reference on {text:?}");
    }
    want
}

/// Also through a real file, mapped and read.
pub fn check_file(d: &Dialect, input: &[u8]) {
    let want = reference::parse(d, input);
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, input).unwrap();
    for choice in [SourceChoice::Mmap, SourceChoice::Buffered, SourceChoice::Auto] {
        for ahead in [false, true] {
            let mut b = Reader::builder();
            b.dialect(d.clone()).source(choice).read_ahead(ahead);
            let got = via_reader(b.from_path(f.path()).unwrap());
            assert_eq!(got, want, "{choice:?} file (read-ahead {ahead}) vs reference");
        }
    }
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
