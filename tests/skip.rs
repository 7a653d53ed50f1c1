//! `Reader::skip_rows` and `Reader::par_skip_rows` against `n` calls to
//! `read_row`: the same records after the skip, the same first error, and
//! the same reader state (`line()`, `records_read()`), over random
//! dialects and inputs, slices cut into tiny chunks, a mapped file and
//! small read() buffers.

mod common;

use common::{dialect, input};
use fastcsv::{Dialect, Parallel, Reader, ReaderBuilder, SourceChoice};
use proptest::prelude::*;

/// How many records the skip passed, the records read after it, the first
/// error (as text) and the reader's state after.
type Outcome = (Option<u64>, Vec<Vec<Vec<u8>>>, Option<String>, u64, u64);

/// The rest of the input after a skip that gave `skipped` (or failed).
fn rest(rdr: &mut Reader<'_>, skipped: Result<u64, fastcsv::Error>) -> Outcome {
    let mut rows = Vec::new();
    let skipped = match skipped {
        Ok(n) => n,
        Err(e) => return (None, rows, Some(e.to_string()), rdr.line(), rdr.records_read()),
    };
    loop {
        match rdr.read_row() {
            Ok(Some(r)) => rows.push(r.iter().map(<[u8]>::to_vec).collect()),
            Ok(None) => return (Some(skipped), rows, None, rdr.line(), rdr.records_read()),
            Err(e) => {
                return (Some(skipped), rows, Some(e.to_string()), rdr.line(), rdr.records_read())
            }
        }
    }
}

/// `n` records skipped by reading them.
fn by_rows(rdr: &mut Reader<'_>, n: u64) -> Outcome {
    let mut k = 0;
    let skipped = loop {
        if k == n {
            break Ok(k);
        }
        match rdr.read_row() {
            Ok(Some(_)) => k += 1,
            Ok(None) => break Ok(k),
            Err(e) => break Err(e),
        }
    };
    rest(rdr, skipped)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn skip_rows_equals_read_row(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
        headers in any::<bool>(),
        n in prop_oneof![0..4u64, 4..40u64, Just(u64::MAX)],
        chunk in prop_oneof![Just(1usize), 2..9usize, 9..200usize],
        threads in 2..5usize,
    ) {
        let Some(d) = d else { return Ok(()) };
        let mut b = d.to_builder();
        let d = b.flexible(flexible).headers(headers).build().unwrap();
        let rdr = || Reader::builder().dialect(d.clone()).from_slice(&input);
        let want = by_rows(&mut rdr(), n);
        let mut r = rdr();
        let s = r.skip_rows(n);
        let got = rest(&mut r, s);
        prop_assert_eq!(&got, &want, "skip_rows, input {:?}", String::from_utf8_lossy(&input));
        let par = Parallel::new().threads(threads).chunk_size(chunk);
        let mut r = rdr();
        let s = r.par_skip_rows(n, &par);
        let got = rest(&mut r, s);
        prop_assert_eq!(&got, &want, "par_skip_rows, input {:?}", String::from_utf8_lossy(&input));
    }
}

/// Records of several lengths, some quoted over several lines, LF and CRLF.
fn data(records: usize) -> Vec<u8> {
    let mut v = b"id,text,n\n".to_vec();
    for i in 0..records {
        let text = match i % 5 {
            0 => format!("\"a, b\nc {i}\""),
            1 => format!("\"say \"\"{i}\"\"\""),
            2 => "x".repeat(i % 97),
            3 => String::new(),
            _ => format!("plain {i}"),
        };
        let end = if i % 3 == 0 { "\r\n" } else { "\n" };
        v.extend_from_slice(format!("{i},{text},{}{end}", i * 7).as_bytes());
    }
    v
}

#[test]
fn every_source_skips_to_the_same_record() {
    let data = data(30_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skip.csv");
    std::fs::write(&path, &data).unwrap();
    let d = Dialect::default();
    for n in [0, 1, 2, 999, 1000, 1001, 17_777, 29_999, 30_000, 30_001] {
        let want = by_rows(&mut Reader::builder().dialect(d.clone()).from_slice(&data), n);
        assert_eq!(want.1.len() as u64, 30_000 - n.min(30_000), "{n}");
        let open = |src: SourceChoice, size: usize| {
            let mut b = ReaderBuilder::new();
            b.dialect(d.clone()).source(src).buffer_size(size);
            b.from_path(&path).unwrap()
        };
        for (src, size) in [(SourceChoice::Mmap, 1 << 17), (SourceChoice::Buffered, 64)] {
            let mut r = open(src, size);
            let s = r.skip_rows(n);
            assert_eq!(rest(&mut r, s), want, "{n} {src:?}");
            for threads in [1, 2, 3] {
                let par = Parallel::new().threads(threads).chunk_size(4096);
                let mut r = open(src, size);
                let s = r.par_skip_rows(n, &par);
                assert_eq!(rest(&mut r, s), want, "{n} {src:?} {threads}");
            }
        }
    }
}

/// A ragged record before the target: the skip stops there with the error
/// `read_row` gives, on one thread and on several.
#[test]
fn an_error_before_the_target_is_reported() {
    let mut data = data(20_000);
    let at = data.len() / 2;
    let nl = at + data[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    data.splice(nl..nl, b"oops\n".iter().copied());
    let want = by_rows(&mut Reader::from_slice(&data), 19_000);
    assert!(want.2.as_deref().unwrap_or("").contains("found record with 1 fields"), "{want:?}");
    let mut r = Reader::from_slice(&data);
    let s = r.skip_rows(19_000);
    assert_eq!(rest(&mut r, s), want);
    let mut r = Reader::from_slice(&data);
    let s = r.par_skip_rows(19_000, &Parallel::new().threads(3).chunk_size(4096));
    assert_eq!(rest(&mut r, s), want);
}
