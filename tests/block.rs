//! Differential tests for the block scanner (`scan::block`): on arbitrary
//! bytes from a small alphabet, with long plain runs so that 64-byte blocks
//! and records crossing block boundaries occur, and over random dialects:
//!
//! * the scanner with block scanning on and off produces the same events
//!   (every span with its flags, `lines()`, `record_offset()`,
//!   `record_line()`, positions and errors);
//! * the reader agrees with the reference engine over a slice and over the
//!   buffered source at several buffer sizes;
//! * `count_rows` (which has its own block path) agrees with counting
//!   through the state machine, errors and line numbers included.

mod common;

use common::{dialect, input};
use fastcsv::scan::{reference, Fields, Scan, Scanner, Span};
use fastcsv::{Dialect, Position, Reader, Selection, Terminator};
use proptest::prelude::*;

/// One observable scanner event.
#[derive(Debug, PartialEq)]
enum Event {
    Row { fields: Vec<(Vec<u8>, Span)>, lines: u64, offset: usize, line: u64, end: usize },
    Error { kind: String, at: usize, lines: u64 },
}

/// Drives a scanner over `input` the way the reader does over a slice,
/// recovering after errors.
fn events(d: &Dialect, input: &[u8], block: bool) -> Vec<Event> {
    let mut s = Scanner::new(d);
    s.set_block_scan(block);
    let mut f = Fields::default();
    let (mut rec, mut pos) = (0usize, 0usize);
    let mut out = Vec::new();
    let row = |s: &Scanner, f: &Fields, data: &[u8], rec: usize, end: usize| Event::Row {
        fields: (0..f.len()).map(|i| (f.get(data, i).to_vec(), f.span(i))).collect(),
        lines: s.lines(),
        offset: rec + s.record_offset(),
        line: s.record_line(),
        end,
    };
    // Every step consumes input or ends; the cap guards the test itself.
    for _ in 0..input.len() * 4 + 16 {
        let data = &input[rec..];
        match s.scan(data, &mut pos, &mut f) {
            Scan::Row => {
                out.push(row(&s, &f, data, rec, rec + pos));
                rec += pos;
                pos = 0;
            }
            Scan::NeedInput => match s.finish(data, &mut f) {
                Scan::Row => {
                    out.push(row(&s, &f, data, rec, input.len()));
                    rec = input.len();
                    pos = 0;
                }
                Scan::Error(k, at) => {
                    out.push(Event::Error {
                        kind: format!("{k:?}"),
                        at: rec + at,
                        lines: s.lines(),
                    });
                    return out;
                }
                Scan::End | Scan::NeedInput => return out,
            },
            Scan::Error(k, at) => {
                out.push(Event::Error { kind: format!("{k:?}"), at: rec + at, lines: s.lines() });
                s.recover();
                rec += at;
                pos = 0;
            }
            Scan::End => return out,
        }
    }
    panic!("scanner made no progress on {:?}", String::from_utf8_lossy(input));
}

/// `count_rows` and `line()` afterwards, or the error and `line()`.
fn count(rdr: &mut Reader<'_>) -> (Result<u64, String>, u64, u64) {
    let r = rdr.count_rows().map_err(|e| e.to_string());
    (r, rdr.line(), rdr.records_read())
}

/// One record as `read_row` or `read_batch` reports it.
type Picked = (Vec<Vec<u8>>, usize, Position, Option<Vec<u8>>);

/// Every record through `read_row`, keeping columns `cols` (empty for a
/// missing column), the field count, the position and, when every field is
/// an unquoted span of the input, the record's bytes; errors as text, with
/// `line()` and `records_read()` at the end.
fn rows_picked(
    rdr: &mut Reader<'_>,
    cols: Option<&[usize]>,
) -> (Vec<Result<Picked, String>>, u64, u64) {
    let mut out = Vec::new();
    for _ in 0..10_000 {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let picked = match cols {
                    Some(cols) => {
                        cols.iter().map(|&c| row.get(c).unwrap_or_default().to_vec()).collect()
                    }
                    None => row.iter().map(<[u8]>::to_vec).collect(),
                };
                out.push(Ok((picked, row.len(), row.position(), None)));
            }
            Ok(None) => break,
            Err(e) => out.push(Err(e.to_string())),
        }
    }
    (out, rdr.line(), rdr.records_read())
}

/// The same through `read_batch`; `raw()`, when given, must be the fields
/// joined by the delimiter (checked here, then dropped for the comparison).
fn batches_picked(
    rdr: &mut Reader<'_>,
    cols: Option<&[usize]>,
) -> (Vec<Result<Picked, String>>, u64, u64) {
    let mut out = Vec::new();
    let mut sel = match cols {
        Some(cols) => Selection::new(cols.iter().copied()),
        None => Selection::all(),
    };
    for _ in 0..10_000 {
        match rdr.read_batch(&mut sel) {
            Ok(Some(b)) => {
                for r in b.iter() {
                    let picked: Vec<Vec<u8>> = r.iter().map(<[u8]>::to_vec).collect();
                    assert_eq!(picked.len(), r.len());
                    for (j, f) in picked.iter().enumerate() {
                        assert_eq!(r.get(j), &f[..]);
                    }
                    out.push(Ok((
                        picked,
                        r.field_count(),
                        r.position(),
                        r.raw().map(<[u8]>::to_vec),
                    )));
                }
            }
            Ok(None) => break,
            Err(e) => out.push(Err(e.to_string())),
        }
    }
    (out, rdr.line(), rdr.records_read())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, ..ProptestConfig::default() })]

    #[test]
    fn block_scan_equals_state_machine(d in dialect(), input in input()) {
        let Some(d) = d else { return Ok(()) };
        let on = events(&d, &input, true);
        let off = events(&d, &input, false);
        prop_assert_eq!(on, off, "input {:?}", String::from_utf8_lossy(&input));
    }

    #[test]
    fn reader_equals_reference(d in dialect(), input in input()) {
        let Some(d) = d else { return Ok(()) };
        // Every engine: the slice, the buffered source at sizes 1..4096
        // (common::SIZES), batches, counts and a file, block scan on and off.
        common::check_every_engine(&d, &input);
        // Sizes around the block width.
        let want = reference::parse(&d, &input);
        for n in [63, 64, 65, 128, 200] {
            let rdr = Reader::builder().dialect(d.clone()).buffer_size(n).from_reader(&input[..]);
            prop_assert_eq!(&common::via_reader(rdr), &want, "buffered({})", n);
        }
    }

    #[test]
    fn count_rows_equals_state_machine(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
        headers in any::<bool>(),
    ) {
        let Some(d) = d else { return Ok(()) };
        let mut b = d.to_builder();
        let d = b.flexible(flexible).headers(headers).build().unwrap();
        let mut want = Reader::builder().dialect(d.clone()).block_scan(false).from_slice(&input);
        let want = count(&mut want);
        let mut got = Reader::builder().dialect(d.clone()).from_slice(&input);
        prop_assert_eq!(count(&mut got), want.clone(), "slice");
        for n in [1, 7, 64, 100, 4096] {
            let mut got = Reader::builder().dialect(d.clone()).buffer_size(n).from_reader(&input[..]);
            prop_assert_eq!(count(&mut got), want.clone(), "buffered({})", n);
        }
        // A buffer that cannot grow past a record: the same error, at the
        // same place, as the state machine reports through that buffer.
        for (n, max) in [(1, 8), (7, 40), (16, 100)] {
            let mut b = Reader::builder();
            b.dialect(d.clone()).buffer_size(n).max_buffer_size(max);
            let want = count(&mut b.clone().block_scan(false).from_reader(&input[..]));
            let got = count(&mut b.from_reader(&input[..]));
            prop_assert_eq!(got, want, "buffered({}, max {})", n, max);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn read_batch_equals_read_row(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
        headers in any::<bool>(),
        cols in prop::collection::vec(0..12usize, 0..5),
        all in prop::bool::weighted(0.3),
    ) {
        let cols = (!all).then_some(&cols[..]);
        let Some(d) = d else { return Ok(()) };
        let mut b = d.to_builder();
        let d = b.flexible(flexible).headers(headers).build().unwrap();
        let mut want = Reader::builder().dialect(d.clone()).from_slice(&input);
        let want = rows_picked(&mut want, cols);
        let strip = |v: (Vec<Result<Picked, String>>, u64, u64)| {
            let rows = v.0.into_iter().map(|r| r.map(|(p, n, pos, _)| (p, n, pos, None)));
            let rows = rows.collect::<Vec<_>>();
            (rows, v.1, v.2)
        };
        let mut got = Reader::builder().dialect(d.clone()).from_slice(&input);
        let got = batches_picked(&mut got, cols);
        check_raw(&got.0, &input, &d);
        prop_assert_eq!(strip(got), want.clone(), "slice");
        for n in [1, 7, 64, 100, 4096] {
            let mut got = Reader::builder().dialect(d.clone()).buffer_size(n).from_reader(&input[..]);
            let got = batches_picked(&mut got, cols);
            check_raw(&got.0, &input, &d);
            prop_assert_eq!(strip(got), want.clone(), "buffered({})", n);
        }
        // A buffer that cannot grow past a record: the same rows and
        // errors, at the same places, as the state machine's rows through
        // that buffer.
        for (n, max) in [(1, 8), (7, 40), (16, 100)] {
            let mut b = Reader::builder();
            b.dialect(d.clone()).buffer_size(n).max_buffer_size(max);
            let want = rows_picked(&mut b.clone().block_scan(false).from_reader(&input[..]), cols);
            let got = batches_picked(&mut b.from_reader(&input[..]), cols);
            check_raw(&got.0, &input, &d);
            prop_assert_eq!(strip(got), want, "buffered({}, max {})", n, max);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// `raw_fields` gives, for the records the block scanner took, their
    /// fields as they are in the input: plain RFC 4180, so that stripping
    /// the quotes and undoubling the inner ones gives the parsed fields,
    /// and an unquoted field holds no quote, delimiter, CR or LF.
    #[test]
    fn raw_fields_are_the_input_bytes_of_the_fields(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
    ) {
        let Some(d) = d else { return Ok(()) };
        let d = d.to_builder().flexible(flexible).headers(false).build().unwrap();
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        let mut sel = Selection::all();
        // `Selection::raw` gives the same raw fields, and the parsed fields
        // of the records it does not give raw.
        let mut raw_rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        let mut raw_sel = Selection::raw();
        type Seen = Result<(u64, Vec<std::ops::Range<usize>>), Vec<Vec<u8>>>;
        let seen = |r: &fastcsv::SelectedRow<'_>| -> Seen {
            match r.raw_fields() {
                Some(f) => Ok((r.position().byte, f.collect())),
                None => Err(r.iter().map(<[u8]>::to_vec).collect()),
            }
        };
        let mut raw_rows = Vec::new();
        while let Ok(Some(b)) = raw_rdr.read_batch(&mut raw_sel) {
            raw_rows.extend(b.iter().map(|r| seen(&r)));
        }
        let mut all_rows = Vec::new();
        // (An error ends the check: the records before it were checked.)
        while let Ok(Some(b)) = rdr.read_batch(&mut sel) {
            for row in b.iter() {
                all_rows.push(seen(&row));
                let Some(raw) = row.raw_fields() else { continue };
                let rec = raw.record();
                let at = row.position().byte as usize;
                prop_assert_eq!(&input[at..at + rec.len()], rec);
                let fields: Vec<&[u8]> = raw.map(|r| &rec[r]).collect();
                prop_assert_eq!(fields.len(), row.len());
                for (j, f) in fields.iter().enumerate() {
                    let value = row.get(j);
                    match (d.quote(), f) {
                        (Some(q), [first, inner @ .., last]) if *first == q => {
                            prop_assert_eq!(*last, q);
                            let mut undoubled = Vec::new();
                            let mut k = 0;
                            while k < inner.len() {
                                undoubled.push(inner[k]);
                                if inner[k] == q {
                                    prop_assert_eq!(inner.get(k + 1), Some(&q));
                                    k += 1;
                                }
                                k += 1;
                            }
                            prop_assert_eq!(&undoubled[..], value);
                        }
                        _ => {
                            prop_assert_eq!(*f, value);
                            let ends = |c: u8| match d.terminator() {
                                Terminator::Any => c == b'\r' || c == b'\n',
                                Terminator::Byte(t) => c == t,
                            };
                            let special =
                                |c: &u8| Some(*c) == d.quote() || *c == d.delimiter() || ends(*c);
                            prop_assert!(!f.iter().any(special), "{:?}", f);
                        }
                    }
                }
            }
        }
        prop_assert_eq!(raw_rows, all_rows);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// `Selection::csv` gives, for the records the block scanner took, the
    /// bytes the `csv` crate's writer (quoting only where needed, with the
    /// dialect's delimiter and quote) writes for their parsed fields, for
    /// dialects whose records end at CR or LF; the other records come with
    /// their fields, as from `Selection::all`.
    #[test]
    fn csv_pieces_are_what_a_csv_writer_writes(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
    ) {
        let Some(d) = d else { return Ok(()) };
        let Some(q) = d.quote() else { return Ok(()) };
        if d.terminator() != Terminator::Any {
            return Ok(());
        }
        let d = d.to_builder().flexible(flexible).headers(false).build().unwrap();
        // The parsed fields, until the first error.
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        let mut sel = Selection::all();
        let mut want: Vec<Vec<Vec<u8>>> = Vec::new();
        while let Ok(Some(b)) = rdr.read_batch(&mut sel) {
            want.extend(b.iter().map(|r| r.iter().map(<[u8]>::to_vec).collect()));
        }
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        let mut sel = Selection::csv();
        let mut i = 0;
        while let Ok(Some(b)) = rdr.read_batch(&mut sel) {
            for row in b.iter() {
                let fields = &want[i];
                i += 1;
                let Some(pieces) = row.csv_pieces() else {
                    let got: Vec<Vec<u8>> = row.iter().map(<[u8]>::to_vec).collect();
                    prop_assert_eq!(&got, fields);
                    continue;
                };
                prop_assert_eq!(row.len(), 0);
                // `append_to` (a byte compress on CPUs with AVX-512 VBMI2)
                // writes the pieces one after the other, also once some
                // have been taken.
                let mut appended = b"x".to_vec();
                pieces.clone().append_to(&mut appended);
                let mut got = pieces.clone().collect::<Vec<_>>().concat();
                prop_assert_eq!(&appended[1..], &got[..]);
                let mut rest = pieces.clone();
                let first = rest.next().unwrap_or_default().to_vec();
                let mut appended = first.clone();
                rest.append_to(&mut appended);
                prop_assert_eq!(&appended, &got);
                if got.is_empty() {
                    got = vec![q, q];
                }
                let mut w = csv::WriterBuilder::new()
                    .delimiter(d.delimiter())
                    .quote(q)
                    .quote_style(csv::QuoteStyle::Necessary)
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(Vec::new());
                w.write_record(fields).unwrap();
                let mut oracle = w.into_inner().unwrap();
                oracle.pop();
                prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&oracle));
            }
        }
        prop_assert_eq!(i, want.len());
    }
}

/// Where `raw()` is given, it is the input's bytes at the record's
/// position and splits into as many fields as the record has.
fn check_raw(rows: &[Result<Picked, String>], input: &[u8], d: &Dialect) {
    for (_, n, pos, raw) in rows.iter().flatten() {
        if let Some(raw) = raw {
            if let Some(q) = d.quote() {
                assert!(!raw.contains(&q), "raw with a quote: {raw:?}");
            }
            let at = pos.byte as usize;
            assert_eq!(&input[at..at + raw.len()], &raw[..]);
            assert_eq!(raw.split(|&c| c == d.delimiter()).count(), *n, "{raw:?}");
        }
    }
}

/// Records that straddle block boundaries at every offset, with quoted
/// fields, doubled quotes and CRLF split across blocks.
#[test]
fn boundaries_at_every_offset() {
    let d = common::scan_dialect(&mut Dialect::builder());
    for pad in 0..130 {
        let mut input = Vec::new();
        input.extend_from_slice("x".repeat(pad).as_bytes());
        input.extend_from_slice(b",\"q,\r\n\"\"z\"\"\",\"\"\r\n");
        input.extend_from_slice("y".repeat(pad % 67).as_bytes());
        input.extend_from_slice(b"\r\n\"a\"\r\n\"\"\"\"\n");
        let on = events(&d, &input, true);
        assert_eq!(on, events(&d, &input, false), "pad {pad}");
        assert_eq!(on.len(), 4, "pad {pad}");
        common::check_every_engine(&d, &input);
        let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
        assert_eq!(rdr.count_rows().unwrap(), 4);
        assert_eq!(rdr.line(), 5);
    }
}

/// A closing quote in every position of a block (the last one included,
/// whose next byte the counting loops check in the next block), followed
/// by a delimiter, a line end, a doubled quote or a stray byte, in strict
/// and lenient mode: counting, `read_batch` (every field, raw fields,
/// some columns) and `read_row` agree with the state machine.
#[test]
fn closing_quotes_at_every_offset() {
    for strict in [false, true] {
        let d = Dialect::builder().headers(false).strict(strict).build().unwrap();
        for pad in 0..140 {
            for after in [&b","[..], b"\n", b"\r\n", b"\"\"", b"x", b"\"x"] {
                let mut input = "y".repeat(pad).into_bytes();
                input.extend_from_slice(b",\"ab\"");
                input.extend_from_slice(after);
                input.extend_from_slice(b",c\nd,e\n");
                let what =
                    format!("strict {strict}, pad {pad}, {:?}", String::from_utf8_lossy(after));
                let mut want =
                    Reader::builder().dialect(d.clone()).block_scan(false).from_slice(&input);
                let want_count = count(&mut want);
                let mut got = Reader::builder().dialect(d.clone()).from_slice(&input);
                assert_eq!(count(&mut got), want_count, "count, {what}");
                let mut want =
                    Reader::builder().dialect(d.clone()).block_scan(false).from_slice(&input);
                let want_rows = rows_picked(&mut want, None);
                let mut got = Reader::builder().dialect(d.clone()).from_slice(&input);
                let got_rows = batches_picked(&mut got, None);
                let strip = |rows: &[Result<Picked, String>]| -> Vec<Result<Vec<Vec<u8>>, String>> {
                    rows.iter().map(|r| r.clone().map(|p| p.0)).collect()
                };
                assert_eq!(strip(&got_rows.0), strip(&want_rows.0), "read_batch, {what}");
                let mut raw = Reader::builder().dialect(d.clone()).from_slice(&input);
                let mut sel = Selection::raw();
                let mut rows = Vec::new();
                for _ in 0..100 {
                    match raw.read_batch(&mut sel) {
                        Ok(Some(b)) => {
                            for r in b.iter() {
                                rows.push(Ok(match r.raw_fields() {
                                    // Unquoted or quoted raw fields: parse them.
                                    Some(f) => {
                                        let rec = f.record();
                                        f.map(|x| unquote(&rec[x])).collect()
                                    }
                                    None => r.iter().map(<[u8]>::to_vec).collect(),
                                }));
                            }
                        }
                        Ok(None) => break,
                        Err(e) => rows.push(Err(e.to_string())),
                    }
                }
                assert_eq!(rows, strip(&want_rows.0), "raw, {what}");
            }
        }
    }
}

/// A raw RFC 4180 field's value: its quotes stripped and doubled ones
/// undoubled.
fn unquote(f: &[u8]) -> Vec<u8> {
    match f {
        [b'"', inner @ .., b'"'] => {
            let mut out = Vec::new();
            let mut i = 0;
            while i < inner.len() {
                out.push(inner[i]);
                i += if inner[i] == b'"' { 2 } else { 1 };
            }
            out
        }
        _ => f.to_vec(),
    }
}

/// `Selection::csv` batches scan at most 128 KiB of input: records on
/// both sides of that bound, and a record longer than it (left to the
/// state machine), come out as `read_row` gives them.
#[test]
fn csv_batches_around_their_byte_bound() {
    let mut input = Vec::new();
    for i in 0..4000u32 {
        if i == 1500 {
            // One quoted field of 300 KB (with a comma and a doubled quote).
            input.extend_from_slice(b"\"");
            input.extend_from_slice("long, \"\" field ".repeat(20_000).as_bytes());
            input.extend_from_slice(b"\",x\n");
            continue;
        }
        input.extend_from_slice(format!("{i},\"q{i}\",\"a,b\"\n").as_bytes());
    }
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    let mut want = Reader::builder().dialect(d.clone()).from_slice(&input);
    let want: Vec<Vec<Vec<u8>>> =
        rows_picked(&mut want, None).0.into_iter().map(|r| r.unwrap().0).collect();
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
    let mut sel = Selection::csv();
    let (mut got, mut batches) = (Vec::new(), 0);
    while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
        batches += 1;
        for r in b.iter() {
            let fields: Vec<Vec<u8>> = match r.csv_pieces() {
                // Quoting only where needed: undo it with the reader.
                Some(p) => {
                    let line = p.collect::<Vec<_>>().concat();
                    let mut one = Reader::builder().dialect(d.clone()).from_slice(&line);
                    let row = one.read_row().unwrap().unwrap();
                    row.iter().map(<[u8]>::to_vec).collect()
                }
                None => r.iter().map(<[u8]>::to_vec).collect(),
            };
            got.push(fields);
        }
    }
    assert_eq!(got, want);
    assert!(batches > input.len() / (128 << 10), "{batches} batches");
}

/// The lines [`Selection::csv_columns`] gives for `cols` (runs appended,
/// single records as pieces or, from the state machine, as fields written
/// by the `csv` crate), and the `csv` crate's lines for the same columns
/// of the fields `Selection::new` parses (empty past a record's end), up
/// to the first error.
fn csv_columns_and_oracle(d: &Dialect, input: &[u8], cols: &[usize]) -> (Vec<u8>, Vec<u8>) {
    let q = d.quote().unwrap_or(b'"');
    let writer = || {
        csv::WriterBuilder::new()
            .delimiter(d.delimiter())
            .quote(q)
            .quote_style(csv::QuoteStyle::Necessary)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new())
    };
    let mut want = writer();
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let mut sel = Selection::new(cols.iter().copied());
    while let Ok(Some(b)) = rdr.read_batch(&mut sel) {
        for row in b.iter() {
            want.write_record(row.iter()).unwrap();
        }
    }
    let mut got = Vec::new();
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let mut sel = Selection::csv_columns(cols.iter().copied());
    while let Ok(Some(b)) = rdr.read_batch(&mut sel) {
        let mut i = 0;
        while i < b.len() {
            let (n, run) = b.csv_run(i);
            if n > 0 {
                // Appended, and piece by piece.
                let pieces = run.clone().collect::<Vec<_>>().concat();
                let at = got.len();
                run.append_to(&mut got);
                assert_eq!(&got[at..], &pieces[..], "append_to");
                i += n;
                continue;
            }
            let row = b.row(i);
            i += 1;
            if let Some(p) = row.csv_pieces() {
                assert_eq!(row.len(), 0);
                let line = p.collect::<Vec<_>>().concat();
                got.extend_from_slice(if line.is_empty() { b"\"\"" } else { &line });
                got.push(b'\n');
            } else {
                assert_eq!(row.len(), cols.len());
                let mut w = writer();
                w.write_record(row.iter()).unwrap();
                got.extend_from_slice(&w.into_inner().unwrap());
            }
        }
    }
    (got, want.into_inner().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// `Selection::csv_columns` gives the lines a CSV writer (quoting only
    /// where needed, with the dialect's delimiter and quote, LF line
    /// ends) writes for the selected columns of each record, for dialects
    /// whose records end at CR or LF, strict or flexible: one column or
    /// several, with the first, the last, or neither.
    #[test]
    fn csv_columns_are_what_a_csv_writer_writes(
        d in dialect(),
        input in input(),
        flexible in any::<bool>(),
        mut cols in prop::collection::btree_set(0..6usize, 1..4),
    ) {
        let Some(d) = d else { return Ok(()) };
        if d.quote().is_none() || d.terminator() != Terminator::Any {
            return Ok(());
        }
        let d = d.to_builder().flexible(flexible).headers(false).build().unwrap();
        let cols: Vec<usize> = std::mem::take(&mut cols).into_iter().collect();
        let (got, want) = csv_columns_and_oracle(&d, &input, &cols);
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
    }
}

/// The lines [`Selection::csv`] gives (runs, then pieces, then fields
/// written by the `csv` crate), and the `csv` crate's lines for every
/// field of each record, up to the first error.
fn csv_and_oracle(d: &Dialect, input: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let writer = || {
        csv::WriterBuilder::new()
            .delimiter(d.delimiter())
            .quote(d.quote().unwrap_or(b'"'))
            .quote_style(csv::QuoteStyle::Necessary)
            .terminator(csv::Terminator::Any(b'\n'))
            .flexible(true)
            .from_writer(Vec::new())
    };
    let mut want = writer();
    let mut rdr = Reader::builder().dialect(d.clone()).block_scan(false).from_slice(input);
    while let Ok(Some(row)) = rdr.read_row() {
        want.write_record(row.iter()).unwrap();
    }
    let mut got = Vec::new();
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let mut sel = Selection::csv();
    while let Ok(Some(b)) = rdr.read_batch(&mut sel) {
        let mut i = 0;
        while i < b.len() {
            let (n, run) = b.csv_run(i);
            if n > 0 {
                run.append_to(&mut got);
                i += n;
                continue;
            }
            let row = b.row(i);
            i += 1;
            match row.csv_pieces() {
                Some(p) => {
                    got.extend_from_slice(&p.collect::<Vec<_>>().concat());
                    got.push(b'\n');
                }
                None => {
                    let mut w = writer();
                    w.write_record(row.iter()).unwrap();
                    got.extend_from_slice(&w.into_inner().unwrap());
                }
            }
        }
    }
    (got, want.into_inner().unwrap())
}

/// A doubled quote whose two quotes fall on each side of a block bound
/// (the second in the next block's first byte): the CSV and CSV-columns
/// scans take the first as closing its field until they see the second,
/// and must then leave the record to the state machine. Every offset,
/// with the field clean otherwise or not, and records after it.
#[test]
fn doubled_quotes_across_blocks_in_csv_modes() {
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    for pad in 0..140 {
        for field in [&b"\"ab\"\"cd\""[..], b"\"\"\"\"", b"\"a,\"\"\"", b"\"\"\"x\""] {
            let mut input = "y".repeat(pad).into_bytes();
            input.push(b',');
            input.extend_from_slice(field);
            input.extend_from_slice(b",\"e\"\nf,\"g\",h\n");
            input.extend_from_slice(&input.clone());
            let what = format!("pad {pad}, {:?}", String::from_utf8_lossy(field));
            let (got, want) = csv_and_oracle(&d, &input);
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "{what}");
            for cols in [&[1][..], &[0, 1], &[1, 2], &[2]] {
                let (got, want) = csv_columns_and_oracle(&d, &input, cols);
                let (got, want) = (String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
                assert_eq!(got, want, "{what}, {cols:?}");
            }
        }
    }
}

/// `Selection::csv_columns` over records of many lengths, so that every
/// flip, forced byte and dropped quote falls at every offset of a block
/// and across blocks: empty fields (the last selected one among them),
/// quoted fields that keep their quotes or not, CRLF records, short
/// records and wide ones, for several column sets.
#[test]
fn csv_columns_at_every_offset() {
    let mut input = Vec::new();
    for i in 0..2000usize {
        let pad = "p".repeat(i % 71);
        let quoted = format!("\"{}\"", "q".repeat(i % 5));
        let kept = format!("\"{},{}\"", i % 3, "\n".repeat(i % 2));
        let fields: Vec<String> = match i % 7 {
            // Too short for some selections.
            0 => vec![i.to_string(), pad],
            // Wide.
            1 => (0..70).map(|k| if k % 9 == 0 { quoted.clone() } else { k.to_string() }).collect(),
            2 => vec![String::new(), quoted.clone(), String::new(), kept.clone(), String::new()],
            _ => vec![i.to_string(), quoted.clone(), pad, kept.clone(), String::new(), quoted],
        };
        input.extend_from_slice(fields.join(",").as_bytes());
        input.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
    }
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    for cols in [&[0][..], &[1], &[4], &[5], &[0, 1], &[1, 3], &[0, 2, 4], &[1, 3, 5], &[2, 4, 62]]
    {
        let (got, want) = csv_columns_and_oracle(&d, &input, cols);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "{cols:?}");
    }
}

/// `Selection::csv` where quotes are sparse: records without any quote
/// for one to several 64-byte blocks between records with quoted fields
/// (clean or not, some spanning blocks), quotes in a batch's first block
/// or only after a stretch without, and stretches without quotes up to
/// the batch's end. With the byte compress the scan writes the words of
/// bytes kept only from blocks with quotes in play and fills the rest:
/// the output must be what a CSV writer writes.
#[test]
fn csv_quotes_between_unquoted_stretches() {
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    for seed in 0..40usize {
        let mut input = Vec::new();
        for i in 0..400usize {
            let k = (i * 7 + seed * 13) % 23;
            let line = match k {
                // A clean quoted field (its quotes dropped), at an offset
                // that moves with the seed.
                0 | 1 => format!("{},\"{}\",x", "n".repeat(seed % 61), "c".repeat(i % 90)),
                // A quoted field that keeps its quotes, long enough to
                // span blocks, and a clean one after it.
                2 => format!("\"{},{}\",\"ok\"", "k".repeat(i % 150), i),
                // An empty quoted field (its quotes dropped too).
                3 => format!("{i},\"\""),
                // No quote: one to several blocks of plain bytes.
                _ => format!("{i},{}", "p".repeat((i * 31 + seed) % 300)),
            };
            input.extend_from_slice(line.as_bytes());
            input.push(b'\n');
        }
        let (got, want) = csv_and_oracle(&d, &input);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "seed {seed}");
    }
}

/// `CsvPieces::append_to` over runs of records long enough for several
/// of its 4 KiB steps, with quotes to drop at every offset of a 64-byte
/// block and runs that start and end anywhere: the pieces one after the
/// other, and the lines a CSV writer writes.
#[test]
fn csv_runs_appended_across_blocks() {
    let mut input = Vec::new();
    let mut want = Vec::new();
    for i in 0..3000usize {
        // Fields of varying length, clean quoted ones (their quotes
        // dropped), ones that keep their quotes, and some CRLF records
        // (which end runs).
        let pad = "p".repeat(i % 67);
        let (a, b) = (format!("\"{pad}\""), format!("\"{},{}\"", i % 5, "z".repeat(i % 13)));
        input.extend_from_slice(format!("{i},{a},{b},\"\"").as_bytes());
        want.extend_from_slice(format!("{i},{pad},{b},").as_bytes());
        if i % 97 == 0 {
            input.extend_from_slice(b"\r\n");
        } else {
            input.push(b'\n');
        }
        want.push(b'\n');
    }
    let d = Dialect::builder().headers(false).build().unwrap();
    let mut rdr = Reader::builder().dialect(d).from_slice(&input);
    let mut sel = Selection::csv();
    let mut got = Vec::new();
    let mut runs = 0;
    while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
        let mut i = 0;
        while i < b.len() {
            let (n, run) = b.csv_run(i);
            if n == 0 {
                let pieces = b.row(i).csv_pieces().unwrap();
                pieces.append_to(&mut got);
                got.push(b'\n');
                i += 1;
                continue;
            }
            let one_by_one = run.clone().collect::<Vec<_>>().concat();
            let at = got.len();
            run.append_to(&mut got);
            assert_eq!(&got[at..], &one_by_one[..]);
            runs += 1;
            i += n;
        }
    }
    assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
    assert!(runs >= 30, "{runs} runs");
}

/// The flags of block-scanned fields, checked against literal values.
#[test]
fn spans_and_flags() {
    let d = Dialect::default();
    let input = b"1,,\"\",\"a,b\",\"c\"\"d\",\"\"\"\"\n";
    let mut s = Scanner::new(&d);
    let (mut f, mut pos) = (Fields::default(), 0);
    assert!(matches!(s.scan(input, &mut pos, &mut f), Scan::Row));
    let got: Vec<(&[u8], bool, bool, bool)> = (0..f.len())
        .map(|i| {
            let sp = f.span(i);
            (f.get(input, i), sp.is_quoted(), sp.is_numeric(), sp.is_owned())
        })
        .collect();
    let want: Vec<(&[u8], bool, bool, bool)> = vec![
        (b"1", false, true, false),
        (b"", false, false, false),
        (b"", true, false, false),
        (b"a,b", true, false, false),
        (b"c\"d", true, false, true),
        // `""""`: the state machine keeps this one zero-copy.
        (b"\"", true, false, false),
    ];
    assert_eq!(got, want);
    assert_eq!(pos, input.len());
}

/// Selected fields with doubled quotes are unescaped inside a batch (not
/// handed to the state machine one record at a time); unselected ones are
/// skipped whatever they hold.
#[test]
fn read_batch_unescapes_selected_fields() {
    let mut input = Vec::new();
    for i in 0..100 {
        input.extend_from_slice(format!("{i},\"a\"\"b{i}\",\"x\"\"\",z\n").as_bytes());
    }
    let d = Dialect::builder().headers(false).build().unwrap();
    let mut rdr = Reader::builder().dialect(d).from_slice(&input);
    let mut sel = Selection::new([1, 3, 0]);
    let (mut batches, mut rows) = (0, Vec::new());
    while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
        batches += 1;
        rows.extend(b.iter().map(|r| r.iter().map(<[u8]>::to_vec).collect::<Vec<_>>()));
    }
    assert_eq!(batches, 1);
    assert_eq!(rows.len(), 100);
    assert_eq!(rows[7], [b"a\"b7".to_vec(), b"z".to_vec(), b"7".to_vec()]);
}

/// `Selection::all` over records that span many blocks, mixing plain,
/// quoted (with delimiters, newlines and doubled quotes inside) and empty
/// fields: the fields walked from the kept delimiter offsets, and the spans
/// of records with doubled quotes, equal `read_row`'s, in one batch per
/// 1024 records, mapped-like (slice) and through small buffers.
#[test]
fn read_batch_all_walks_long_records() {
    let mut input = Vec::new();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for i in 0..3000 {
        for c in 0..37 {
            if c > 0 {
                input.push(b',');
            }
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            match (seed % 7, i % 5) {
                (0, _) => {}
                (1, _) => input.extend_from_slice(b"\"a,b\nc\""),
                (2, 0) => input.extend_from_slice(b"\"x\"\"y\"\"\""),
                (3, _) => input.extend_from_slice(b"\"\""),
                _ => input.extend_from_slice(format!("{}", seed % 100_000).as_bytes()),
            }
        }
        input.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
    }
    let d = Dialect::builder().headers(false).build().unwrap();
    let mut want = Reader::builder().dialect(d.clone()).from_slice(&input);
    let want = rows_picked(&mut want, None).0;
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
    let (got, mut batches) = (batches_picked(&mut rdr, None).0, 0);
    let strip = |v: Vec<Result<Picked, String>>| {
        v.into_iter().map(|r| r.map(|(p, n, pos, _)| (p, n, pos))).collect::<Vec<_>>()
    };
    assert_eq!(strip(got), strip(want.clone()));
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(&input);
    let mut sel = Selection::all();
    while rdr.read_batch(&mut sel).unwrap().is_some() {
        batches += 1;
    }
    assert_eq!(batches, 3, "3000 records in batches of 1024");
    for n in [61, 4096] {
        let mut rdr = Reader::builder().dialect(d.clone()).buffer_size(n).from_reader(&input[..]);
        assert_eq!(strip(batches_picked(&mut rdr, None).0), strip(want.clone()), "buffered({n})");
    }
    // A file read through the read-ahead thread's ring of buffers, and
    // mapped.
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, &input).unwrap();
    for n in [61, 4096] {
        let mut b = Reader::builder();
        b.dialect(d.clone()).buffer_size(n).source(fastcsv::SourceChoice::Buffered);
        let mut rdr = b.read_ahead(true).from_path(f.path()).unwrap();
        assert!(rdr.reads_ahead());
        let got = strip(batches_picked(&mut rdr, None).0);
        assert_eq!(got, strip(want.clone()), "read-ahead({n})");
        // Counting refills the read-ahead buffer mid-record (records of at
        // most half the buffer) and gets the same count and lines.
        let counted = count(&mut Reader::builder().dialect(d.clone()).from_slice(&input));
        assert_eq!(counted.0, Ok(3000));
        let mut rdr = b.from_path(f.path()).unwrap();
        assert_eq!(count(&mut rdr), counted, "count, read-ahead({n})");
    }
    let mut b = Reader::builder();
    let mut rdr = b.dialect(d).source(fastcsv::SourceChoice::Mmap).from_path(f.path()).unwrap();
    assert_eq!(strip(batches_picked(&mut rdr, None).0), strip(want), "mapped");
}

/// Fields with doubled quotes, of every length around the one up to which
/// `Selection::all` unescapes a field with one byte compress (256 bytes
/// between the quotes) and around each 64-byte word of it, with pairs at
/// its first and last bytes, side by side and at word bounds: the fields
/// `read_batch` gives equal `read_row`'s and the unescaped bytes.
#[test]
fn read_batch_all_unescapes_fields_of_every_length() {
    let mut input = Vec::new();
    let mut want = Vec::new();
    for len in 0..300usize {
        for at in [0, 1, 62, 63, 64, 127, 128, 254, 255, 256, usize::MAX] {
            // `len` bytes between the quotes once unescaped; pairs at `at`,
            // at the end, and at `at + 1` (side by side).
            let mut field: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            for k in [at, at.wrapping_add(1), len.wrapping_sub(1)] {
                if k < len {
                    field[k] = b'"';
                }
            }
            let escaped: Vec<u8> =
                field.iter().flat_map(|&c| if c == b'"' { vec![c, c] } else { vec![c] }).collect();
            input.extend_from_slice(b"x,\"");
            input.extend_from_slice(&escaped);
            input.extend_from_slice(b"\",\"\"\"\"\n");
            want.push(vec![b"x".to_vec(), field, b"\"".to_vec()]);
        }
    }
    let d = Dialect::builder().headers(false).build().unwrap();
    check_every_field(d, &input, &want);
}

/// `input`'s records through `read_row` and through `read_batch` with
/// every field (`iter` and `get`, which `batches_picked` checks agree) are
/// `want`.
fn check_every_field(d: Dialect, input: &[u8], want: &[Vec<Vec<u8>>]) {
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(input);
    let oracle = rows_picked(&mut rdr, None).0;
    let mut rdr = Reader::builder().dialect(d).from_slice(input);
    let got = batches_picked(&mut rdr, None).0;
    let fields = |v: &[Result<Picked, String>]| {
        v.iter().map(|r| r.as_ref().unwrap().0.clone()).collect::<Vec<_>>()
    };
    assert_eq!(fields(&oracle), want);
    assert_eq!(fields(&got), want);
}

/// Records with doubled quotes are copied unescaped whole: records up to
/// about 1,700 bytes (the byte compress copies 64 bytes a step), with up
/// to 40 pairs, pairs around byte 512 of a field, and quoted fields on
/// either side.
#[test]
fn read_batch_all_copies_long_records_with_many_pairs() {
    let mut input = Vec::new();
    let mut want = Vec::new();
    for fields in [1usize, 3, 9] {
        for pairs in [1usize, 2, 15, 16, 17, 40] {
            for len in [60usize, 250, 505, 509, 510, 511, 512, 513, 600, 1030, 1500] {
                for shift in 0..3 {
                    let mut row = Vec::new();
                    let mut line = Vec::new();
                    for f in 0..fields {
                        if f > 0 {
                            line.push(b',');
                        }
                        if f % 2 == 1 {
                            // Quoted, no pair.
                            line.extend_from_slice(b"\"p,q\"");
                            row.push(b"p,q".to_vec());
                            continue;
                        }
                        // `len` bytes unescaped, `pairs` quotes spread over
                        // them, the last ones around byte 511 of the field.
                        let mut v: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                        for k in 0..pairs {
                            let at = if k % 3 == 2 { 509 + shift + k % 5 } else { k * 37 + shift };
                            if at < len {
                                v[at] = b'"';
                            }
                        }
                        line.push(b'"');
                        for &c in &v {
                            line.push(c);
                            if c == b'"' {
                                line.push(c);
                            }
                        }
                        line.push(b'"');
                        row.push(v);
                    }
                    line.push(b'\n');
                    input.extend_from_slice(&line);
                    want.push(row);
                }
            }
        }
    }
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    check_every_field(d, &input, &want);
}

/// The kernel the tests in this file ran with, printed (visible with
/// `--nocapture`) and checked: on aarch64 it must be a NEON kernel unless
/// `FASTCSV_SIMD` asks for another, and `FASTCSV_SIMD` is obeyed where the
/// CPU has what it names. On every CPU the kernel is the one the detected
/// features and `FASTCSV_SIMD` (which can only lower the choice) select.
#[test]
fn simd_level_is_the_expected_kernel() {
    let level = fastcsv::scan::simd_level();
    println!("simd_level: {level}");
    let want = std::env::var("FASTCSV_SIMD").ok().filter(|w| !w.is_empty());
    match want.as_deref() {
        Some("portable") => assert_eq!(level, "portable"),
        #[cfg(target_arch = "aarch64")]
        Some("neon") => assert_eq!(level, "neon"),
        #[cfg(target_arch = "aarch64")]
        None => {
            let pmull = std::arch::is_aarch64_feature_detected!("aes");
            assert_eq!(level, if pmull { "neon+pmull" } else { "neon" });
        }
        #[cfg(target_arch = "x86_64")]
        Some("avx2+pclmulqdq") if std::arch::is_x86_feature_detected!("avx2") => {
            assert_eq!(level, "avx2+pclmulqdq")
        }
        #[cfg(target_arch = "x86_64")]
        Some("avx512+pclmulqdq") if std::arch::is_x86_feature_detected!("avx512bw") => {
            assert_eq!(level, "avx512+pclmulqdq")
        }
        #[cfg(target_arch = "x86_64")]
        None if std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("pclmulqdq") =>
        {
            let vbmi2 = std::arch::is_x86_feature_detected!("avx512vbmi2");
            assert_eq!(level, if vbmi2 { "avx512vbmi2+pclmulqdq" } else { "avx512+pclmulqdq" })
        }
        _ => {}
    }
    assert_eq!(level, expected_level(want.as_deref()), "FASTCSV_SIMD={want:?}");
}

/// The kernel `scan::simd_level` documents for this CPU's features and the
/// lowering asked for (`FASTCSV_SIMD`; an unknown name lowers nothing).
fn expected_level(want: Option<&str>) -> &'static str {
    let want = want.unwrap_or("");
    if want == "portable" {
        return "portable";
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let avx2 = has!("avx2") && has!("popcnt") && has!("bmi1");
        let avx512 = has!("avx512f") && has!("avx512bw") && has!("bmi2");
        // Each step down is taken when asked for or when the CPU lacks the
        // next one up.
        if want == "sse2" || !has!("pclmulqdq") {
            "sse2"
        } else if want == "sse2+pclmulqdq" || !avx2 {
            "sse2+pclmulqdq"
        } else if want == "avx2+pclmulqdq" || !avx512 {
            "avx2+pclmulqdq"
        } else if want == "avx512+pclmulqdq" || !has!("avx512vbmi2") {
            "avx512+pclmulqdq"
        } else {
            "avx512vbmi2+pclmulqdq"
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if !std::arch::is_aarch64_feature_detected!("neon") {
            "portable"
        } else if want == "neon" || !std::arch::is_aarch64_feature_detected!("aes") {
            "neon"
        } else {
            "neon+pmull"
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "portable"
    }
}

/// Found by `read_batch_equals_read_row` in CI: a record that outgrows a
/// capped buffer right after a field over the field limit.
#[test]
fn capped_buffer_after_a_field_over_the_limit() {
    let input: &[u8] = &[
        34, 13, 97, 97, 97, 97, 97, 97, 97, 97, 10, 44, 97, 97, 10, 97, 44, 44, 97, 44, 97, 13, 44,
        97, 44, 10, 10, 10, 97, 10, 97, 13, 44, 13, 97, 13, 34, 44, 13, 34, 34, 13, 10, 32, 97, 32,
        97, 48, 97, 97, 97, 97, 48, 97, 97, 48, 32, 32, 97, 97, 97, 32, 32, 32, 48, 97, 97, 32, 48,
        97, 48, 32, 48, 48, 32, 97, 97, 32, 97, 97, 48, 97, 48, 97, 32, 32, 97, 48,
    ];
    let d = Dialect::builder()
        .delimiter(b';')
        .quote(None)
        .field_limit(Some(5))
        .flexible(false)
        .headers(false)
        .build()
        .unwrap();
    for cols in [Some(&[][..]), Some(&[0, 3][..]), None] {
        let mut b = Reader::builder();
        b.dialect(d.clone()).buffer_size(7).max_buffer_size(40);
        let want = rows_picked(&mut b.clone().block_scan(false).from_reader(input), cols);
        let got = batches_picked(&mut b.from_reader(input), cols);
        let strip = |v: Vec<Result<Picked, String>>| {
            v.into_iter()
                .map(|r| r.map(|(p, n, pos, _)| (p, n, pos, None::<Vec<u8>>)))
                .collect::<Vec<_>>()
        };
        assert_eq!((strip(got.0), got.1, got.2), (strip(want.0), want.1, want.2), "{cols:?}");
    }
}
