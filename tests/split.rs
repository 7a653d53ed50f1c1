//! Splitting an input into parts (`fastcsv::split`): the parts, read one
//! after another, give exactly what one reader of the whole input gives
//! (rows, header, positions, errors), wherever the cuts fall.

mod common;

use common::cases;

use fastcsv::split::{Part, Splitter, Summary};
use fastcsv::{Dialect, Reader, ReaderBuilder, SourceChoice};
use proptest::prelude::*;

/// What a reader yields, as comparable text: the header, then each row
/// with its position and line count, or each error's message (with its
/// position); data errors are read past, as Python's reader allows.
fn events(mut rdr: Reader<'_>, header: bool) -> Vec<String> {
    let mut out = Vec::new();
    if header {
        match rdr.headers() {
            Ok(h) => out.push(format!(
                "header {:?}",
                h.map(|h| h.iter().map(|f| f.to_vec()).collect::<Vec<_>>())
            )),
            Err(e) => out.push(format!("header error {e}")),
        }
    }
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let fields: Vec<_> = row.iter().map(|f| f.to_vec()).collect();
                let p = row.position();
                out.push(format!(
                    "{fields:?} at {}/{}/{} line {}",
                    p.byte,
                    p.line,
                    p.record,
                    rdr.line()
                ));
            }
            Ok(None) => break,
            Err(e) => {
                out.push(format!("error {e} line {}", rdr.line()));
                if !e.is_data() || out.len() > 10_000 {
                    break;
                }
            }
        }
    }
    out
}

/// Summaries of the ranges between `cuts` (sorted, within the input).
fn summaries(sp: &Splitter, input: &[u8], cuts: &[usize]) -> Vec<Summary> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(input.len());
    bounds.windows(2).map(|w| sp.summarize(input, w[0]..w[1]).unwrap()).collect()
}

/// The parts read one after another, from the slice.
fn by_parts(d: &Dialect, input: &[u8], parts: &[Part]) -> Vec<String> {
    let mut out = Vec::new();
    for p in parts {
        let rdr = ReaderBuilder::new().dialect(d.clone()).from_slice_part(input, p).unwrap();
        out.extend(events(rdr, p.index == 0 && d.headers()));
    }
    out
}

fn check(d: &Dialect, input: &[u8], cuts: &[usize]) -> Vec<Part> {
    let sp = Splitter::new(d);
    let want = events(ReaderBuilder::new().dialect(d.clone()).from_slice(input), d.headers());
    let sums = summaries(&sp, input, cuts);
    for s in &sums {
        assert_eq!(&Summary::from_bytes(&s.to_bytes()).unwrap(), s);
    }
    let parts = sp.resolve(&sums).unwrap();
    let parts =
        sp.settle(ReaderBuilder::new().dialect(d.clone()).from_slice(input), parts).unwrap();
    assert_eq!(parts.len(), cuts.len() + 1);
    assert_eq!(parts[0].start, 0);
    assert_eq!(parts.last().unwrap().end, input.len() as u64);
    for w in parts.windows(2) {
        assert_eq!(w[0].end, w[1].start);
    }
    let got = by_parts(d, input, &parts);
    assert_eq!(
        got,
        want,
        "input {:?}, cuts {cuts:?}, parts {parts:?}, dialect {d:?}",
        String::from_utf8_lossy(input)
    );
    parts
}

fn dialect_and_input() -> impl Strategy<Value = (Dialect, Vec<u8>, Vec<usize>)> {
    (
        common::dialect(),
        any::<(bool, bool, bool, bool)>(),
        common::input(),
        prop::collection::vec(any::<prop::sample::Index>(), 0..7),
    )
        .prop_filter_map(
            "dialect",
            |(d, (headers, flexible, bom, with_bom), mut input, cuts)| {
                // Fields over the size limit are not modelled (see the module's
                // documentation).
                let d = d?
                    .to_builder()
                    .field_limit(None)
                    .headers(headers)
                    .flexible(flexible)
                    .strip_bom(bom)
                    .build()
                    .ok()?;
                if with_bom {
                    input.splice(0..0, *b"\xEF\xBB\xBF");
                }
                let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
                cuts.sort_unstable();
                Some((d, input, cuts))
            },
        )
}

/// Every record start of `input` (where a reader is at a record's
/// beginning), and its end: the parts of a cut at every byte.
fn record_starts(sp: &Splitter, input: &[u8]) -> std::collections::BTreeSet<u64> {
    let cuts: Vec<usize> = (1..input.len()).collect();
    let parts = sp.resolve(&summaries(sp, input, &cuts)).unwrap();
    parts.iter().map(|p| p.start).chain([input.len() as u64]).collect()
}

/// A sync point is a record start at or after its offset.
fn check_sync(d: &Dialect, input: &[u8], at: usize) -> Option<u64> {
    let sp = Splitter::new(d);
    let starts = record_starts(&sp, input);
    let since = *starts.range(..=at as u64).next_back().unwrap() as usize;
    let got = sp.sync_point(input, at, since);
    if let Some(p) = got {
        assert!(
            p >= at as u64 && starts.contains(&p),
            "sync point {p} for {at} (since {since}) is not a record start {starts:?}: \
             input {:?}, dialect {d:?}",
            String::from_utf8_lossy(input)
        );
    }
    got
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

    /// Over the input repeated (so that windows end before it does).
    #[test]
    fn sync_points_are_record_starts(
        (d, input, cuts) in dialect_and_input(),
        times in 1usize..12,
    ) {
        let long = input.repeat(times);
        for at in cuts {
            check_sync(&d, &long, at * times);
        }
    }

    #[test]
    fn parts_read_as_the_whole((d, input, cuts) in dialect_and_input()) {
        check(&d, &input, &cuts);
    }

    /// The local split (which decides most cuts from the bytes before them
    /// and counts the parts' lines and records with a reader) gives the
    /// parts of the summaries.
    #[test]
    fn split_slice_is_resolve(
        (d, input, _) in dialect_and_input(),
        times in 1usize..12,
        chunk in 1usize..200,
    ) {
        let long = input.repeat(times);
        let sp = Splitter::new(&d);
        let cuts: Vec<usize> = (1..).map(|k| k * chunk).take_while(|&c| c < long.len()).collect();
        let parts = sp.resolve(&summaries(&sp, &long, &cuts)).unwrap();
        let rdr = ReaderBuilder::new().dialect(d.clone()).from_slice(&long);
        let want = sp.settle(rdr, parts).unwrap();
        prop_assert_eq!(sp.split_slice(&long, chunk).unwrap(), want);
    }

    /// Every cut at every byte, for short inputs.
    #[test]
    fn every_single_cut((d, input, _) in dialect_and_input()) {
        if input.len() <= 200 {
            for c in 0..=input.len() {
                check(&d, &input, &[c]);
            }
        }
    }
}

/// Quoted records decide their own starts within a window; unquoted ones
/// from a record start before them; records after a quote, not.
#[test]
fn sync_points_where_nearby_bytes_decide() {
    let d = Dialect::default();
    let mut quoted = Vec::new();
    for i in 0..300 {
        quoted.extend_from_slice(format!("{i},\"a\n\"\"b\"\",c\"\r\n").as_bytes());
    }
    for at in [0, 1, 5, 100, 1000, 4000, quoted.len() - 3, quoted.len()] {
        assert!(check_sync(&d, &quoted, at).is_some(), "at {at}");
    }
    let plain = "1,2,3\n".repeat(2000).into_bytes();
    for at in [0, 1, 5, 100, 1000, 11_000] {
        assert!(check_sync(&d, &plain, at).is_some(), "at {at}");
    }
    // A quote before: the unquoted bytes after it may be inside quotes, up
    // to the input's end (a record start in any case) if it is near.
    let mut late = b"\"".to_vec();
    late.extend_from_slice(&plain);
    assert_eq!(check_sync(&d, &late, 1000), Some(late.len() as u64));
    late.extend_from_slice("1,2,3\n".repeat(200_000).as_bytes());
    assert_eq!(Splitter::new(&d).sync_point(&late, 1000, 0), None);
}

#[test]
fn quoted_line_ends_are_not_record_starts() {
    let d = Dialect::builder().headers(false).build().unwrap();
    let input = b"1,\"a\nb\nc\"\n2,\"\"\"\n\"\"\"\n3,x\n";
    let mut starts = vec![input.len() as u64];
    let mut rdr = ReaderBuilder::new().dialect(d.clone()).from_slice(input);
    while let Some(row) = rdr.read_row().unwrap() {
        starts.push(row.position().byte);
    }
    assert_eq!(starts, [input.len() as u64, 0, 10, 20]);
    for c in 0..=input.len() {
        let parts = check(&d, input, &[c]);
        assert!(starts.contains(&parts[1].start), "{parts:?}");
    }
}

#[test]
fn strict_errors_skip_their_line_in_every_part() {
    let d = Dialect::builder().headers(false).strict(true).build().unwrap();
    let input = b"a,\"b\"x,\"c\nd\"\ne,f\n\"g\"h\n\"i\n\"\n";
    for c in 0..=input.len() {
        for c2 in c..=input.len() {
            check(&d, input, &[c, c2]);
        }
    }
}

#[test]
fn the_header_is_the_first_parts_even_after_empty_lines() {
    let d = Dialect::default();
    let input = b"\xEF\xBB\xBF\n\r\nname,n\n\"a\nb\",1\nc,2,3\nd,4\n";
    for c in 0..=input.len() {
        for c2 in c..=input.len() {
            check(&d, input, &[c, c2]);
        }
    }
}

#[test]
fn files_read_by_parts_mapped_and_buffered() {
    let d = Dialect::default();
    let mut text = String::from("id,note\n");
    for i in 0..2000 {
        text.push_str(&format!("{i},\"line {i}\nwith \"\"quotes\"\", and a comma\"\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parts.csv");
    std::fs::write(&path, &text).unwrap();
    let want = events(Reader::from_path(&path).unwrap(), true);
    let sp = Splitter::new(&d);
    for chunk in [1000u64, 4096, 65536, 1 << 30] {
        let parts = sp.split_path(&path, chunk).unwrap();
        assert_eq!(parts.len() as u64, (text.len() as u64).div_ceil(chunk));
        assert_eq!(parts, sp.split_slice(text.as_bytes(), chunk as usize).unwrap());
        // The same parts from summaries made one by one, through bytes.
        let sums: Vec<_> = parts
            .iter()
            .enumerate()
            .map(|(k, _)| {
                let r = k as u64 * chunk..((k as u64 + 1) * chunk).min(text.len() as u64);
                Summary::from_bytes(&sp.summarize_path(&path, r).unwrap().to_bytes()).unwrap()
            })
            .collect();
        let rdr = Reader::from_path(&path).unwrap();
        assert_eq!(sp.settle(rdr, sp.resolve(&sums).unwrap()).unwrap(), parts);
        for source in [SourceChoice::Mmap, SourceChoice::Buffered] {
            let mut got = Vec::new();
            for p in &parts {
                let rdr = ReaderBuilder::new().source(source).from_path_part(&path, p).unwrap();
                got.extend(events(rdr, p.index == 0));
            }
            assert_eq!(got, want, "chunk {chunk}, {source:?}");
        }
    }
}

#[test]
fn a_part_of_a_file_that_shrank_since_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrink.csv");
    std::fs::write(&path, "a\n1\n2\n3\n").unwrap();
    let parts = Splitter::new(&Dialect::default()).split_path(&path, 4).unwrap();
    std::fs::write(&path, "a\n1\n").unwrap();
    let err = ReaderBuilder::new().from_path_part(&path, &parts[1]).err().expect("an error");
    assert!(matches!(err.kind(), fastcsv::ErrorKind::FileChanged), "{err}");
    assert!(err.to_string().contains("shrink.csv"), "{err}");
}

#[test]
fn a_wrong_width_in_a_later_part_is_the_error_one_reader_gives() {
    let d = Dialect::default();
    let input = b"a,b\n1,2\n3\n4,5\n";
    for c in 0..=input.len() {
        check(&d, input, &[c]);
    }
    let parts = Splitter::new(&d).split_slice(input, 9).unwrap();
    assert_eq!(parts[1].width, Some(2));
}

#[test]
fn bad_summaries_are_refused() {
    let d = Dialect::default();
    let sp = Splitter::new(&d);
    let input = b"a\nb\nc\n";
    let a = sp.summarize(input, 0..2).unwrap();
    let b = sp.summarize(input, 2..6).unwrap();
    let c = sp.summarize(input, 3..6).unwrap();
    assert!(sp.resolve(&[b.clone(), a.clone()]).unwrap_err().to_string().contains("in order"));
    assert!(sp.resolve(&[a.clone(), c]).is_err());
    let other = Splitter::new(&Dialect::builder().delimiter(b';').build().unwrap());
    assert!(other.resolve(&[a.clone(), b]).unwrap_err().to_string().contains("another dialect"));
    assert!(sp.summarize(input, 4..9).is_err());
    let mut bytes = a.to_bytes();
    bytes[9] ^= 1;
    assert!(Summary::from_bytes(&bytes).is_ok());
    assert!(Summary::from_bytes(&bytes[1..]).is_err());
    let err = sp.split_path("/nonexistent/fastcsv.csv", 10).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/fastcsv.csv"), "{err}");
    // No summaries: no parts.
    assert!(sp.resolve(&[]).unwrap().is_empty());
}

#[test]
fn empty_input_is_one_empty_part() {
    let d = Dialect::default();
    let parts = Splitter::new(&d).split_slice(b"", 10).unwrap();
    assert_eq!(parts, [Part { index: 0, start: 0, end: 0, lines: 0, records: 0, width: None }]);
}

/// An empty file is not mapped (nothing to map): one empty part, and a
/// summary of its empty range; a range past a file's end is an error
/// naming the file.
#[test]
fn an_empty_file_is_one_empty_part_and_ranges_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.csv");
    std::fs::write(&path, b"").unwrap();
    let sp = Splitter::new(&Dialect::default());
    let parts = sp.split_path(&path, 10).unwrap();
    assert_eq!(parts, [Part { index: 0, start: 0, end: 0, lines: 0, records: 0, width: None }]);
    assert_eq!(sp.summarize_path(&path, 0..0).unwrap().lines(), 0);
    let full = dir.path().join("full.csv");
    std::fs::write(&full, b"a,b\n1,2\n").unwrap();
    let err = sp.summarize_path(&full, 0..100).unwrap_err();
    assert!(err.to_string().contains("full.csv"), "{err}");
}

/// Only a regular file has byte ranges: a FIFO, a pipe or a device (whose
/// size reads as 0) is an error naming it, not one empty part that would
/// pass for an empty file while its rows are never read.
#[test]
fn a_file_that_is_not_regular_is_refused() {
    let sp = Splitter::new(&Dialect::default());
    for (what, err) in [
        ("split_path", sp.split_path("/dev/null", 10).unwrap_err()),
        ("summarize_path", sp.summarize_path("/dev/null", 0..0).unwrap_err()),
    ] {
        let msg = err.to_string();
        assert!(msg.starts_with("/dev/null: not a regular file"), "{what}: {msg}");
        assert!(!err.is_data(), "{what}: {msg}");
    }
}

/// Splitting a file maps it once, on every CPU, and leaves no mapping
/// behind: many splits in a row (more than the `SIGBUS` guard has slots
/// for live mappings) all succeed, and give the parts of the slice.
#[test]
fn many_splits_of_a_file_release_their_mappings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.csv");
    let mut data = b"k,v\n".to_vec();
    for i in 0..5000 {
        data.extend_from_slice(format!("{i},\"x\n{i}\"\n").as_bytes());
    }
    std::fs::write(&path, &data).unwrap();
    let sp = Splitter::new(&Dialect::default());
    let want = sp.split_slice(&data, 4096).unwrap();
    for _ in 0..100 {
        assert_eq!(sp.split_path(&path, 4096).unwrap(), want);
    }
}
