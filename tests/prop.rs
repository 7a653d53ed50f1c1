//! Differential property tests:
//! * every engine (`common::oracle`: the slice, the buffered source at many
//!   buffer sizes, batches, counts, files mapped and read) against the
//!   reference engine on arbitrary bytes and random dialects;
//! * the fast engine against `csv-core` on generated RFC 4180 data, where
//!   the two definitions agree.

mod common;

use common::{cases, check_every_engine, scan_dialect};
use fastcsv::{Dialect, Filter, Reader, Terminator};
use proptest::prelude::*;

fn alphabet() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b",".to_vec()),
        Just(b";".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"'".to_vec()),
        Just(b"\\".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"#".to_vec()),
        Just(b"\0".to_vec()),
        Just(b"\t".to_vec()),
        Just("\u{e9}".as_bytes().to_vec()),
        Just("\u{200b}".as_bytes().to_vec()),
        Just(b"\xff".to_vec()),
        "[a-c]{1,3}".prop_map(|s| s.into_bytes()),
        "[a-z0-9]{20,80}".prop_map(|s| s.into_bytes()),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn dialects() -> impl Strategy<Value = Dialect> {
    (
        prop_oneof![Just(b','), Just(b';'), Just(b'\t')],
        prop_oneof![Just(Some(b'"')), Just(Some(b'\'')), Just(None)],
        prop_oneof![Just(None), Just(Some(b'\\'))],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(None), Just(Some(b'#'))],
        prop_oneof![Just(Terminator::Any), Just(Terminator::Any), Just(Terminator::Byte(b';'))],
        (any::<bool>(), any::<bool>()),
        prop_oneof![
            Just(Filter::Off),
            Just(Filter::Controls),
            Just(Filter::AllControls),
            Just(Filter::Invisible)
        ],
        prop_oneof![Just(None), Just(Some(5u64)), Just(Some(40u64))],
    )
        .prop_filter_map(
            "valid dialect",
            |(delim, quote, esc, dq, sis, strict, comment, term, (skip, trim), filter, limit)| {
                let mut b = Dialect::builder();
                b.delimiter(delim)
                    .quote(quote)
                    .escape(esc)
                    .double_quote(dq)
                    .skip_initial_space(sis)
                    .strict(strict)
                    .comment(comment)
                    .terminator(term)
                    .skip_empty_lines(skip)
                    .trim(trim)
                    .filter(filter)
                    .field_limit(limit);
                if b.build().is_err() {
                    return None;
                }
                Some(scan_dialect(&mut b))
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1500), ..ProptestConfig::default() })]

    #[test]
    fn fast_engine_matches_reference(d in dialects(), input in alphabet()) {
        // Every engine (`common::oracle`, shared with the fuzz target):
        // the slice, the buffered source at sizes 1..4096, batches, counts,
        // the read-ahead thread over a file at those sizes (tiny buffers
        // included), a mapped file; block scan on and off.
        check_every_engine(&d, &input);
    }
}

/// An RFC 4180 field: unquoted plain text, or quoted anything.
fn rfc_field() -> impl Strategy<Value = (bool, String)> {
    prop_oneof![
        "[a-zA-Z0-9 \u{e9}\u{4e2d}]{0,12}".prop_map(|s| (false, s)),
        "[a-z,\"\r\n \u{e9}]{0,12}".prop_map(|s| (true, s)),
    ]
}

fn rfc_file() -> impl Strategy<Value = (Vec<Vec<String>>, String)> {
    let record = prop::collection::vec(rfc_field(), 1..6);
    (prop::collection::vec(record, 0..12), any::<bool>(), any::<bool>()).prop_map(
        |(records, crlf, final_nl)| {
            let mut text = String::new();
            let mut rows = Vec::new();
            let n = records.len();
            for (i, rec) in records.into_iter().enumerate() {
                // A record of one empty unquoted field is a blank line, which
                // csv-core and Python treat differently: quote it.
                let single_empty = rec.len() == 1 && !rec[0].0 && rec[0].1.is_empty();
                let mut parts = Vec::new();
                let mut row = Vec::new();
                for (quoted, s) in rec {
                    if quoted || single_empty {
                        parts.push(format!("\"{}\"", s.replace('"', "\"\"")));
                    } else {
                        parts.push(s.clone());
                    }
                    row.push(s);
                }
                text.push_str(&parts.join(","));
                if i + 1 < n || final_nl {
                    text.push_str(if crlf { "\r\n" } else { "\n" });
                }
                rows.push(row);
            }
            (rows, text)
        },
    )
}

fn csv_core_rows(input: &[u8]) -> Vec<Vec<String>> {
    let mut rdr = csv_core::Reader::new();
    let mut out = vec![0u8; input.len() + 16];
    let mut ends = vec![0usize; input.len() + 16];
    let mut rows = Vec::new();
    let (mut pos, mut outlen, mut endlen) = (0, 0, 0);
    loop {
        let (res, nin, nout, nend) =
            rdr.read_record(&input[pos..], &mut out[outlen..], &mut ends[endlen..]);
        pos += nin;
        outlen += nout;
        endlen += nend;
        match res {
            csv_core::ReadRecordResult::Record => {
                let mut start = 0;
                let mut row = Vec::new();
                for &e in &ends[..endlen] {
                    row.push(String::from_utf8(out[start..e].to_vec()).unwrap());
                    start = e;
                }
                rows.push(row);
                outlen = 0;
                endlen = 0;
            }
            csv_core::ReadRecordResult::End => return rows,
            csv_core::ReadRecordResult::InputEmpty => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1000), ..ProptestConfig::default() })]

    #[test]
    fn rfc4180_agrees_with_csv_core((rows, text) in rfc_file()) {
        let core = csv_core_rows(text.as_bytes());
        prop_assert_eq!(&core, &rows, "csv-core vs generator");
        let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
        for n in [None, Some(1usize), Some(5)] {
            let b = Reader::builder().dialect(d.clone()).clone();
            let mut rdr = match n {
                None => b.from_slice(text.as_bytes()),
                Some(n) => Reader::builder().dialect(d.clone()).buffer_size(n).from_reader(text.as_bytes()),
            };
            let mut got = Vec::new();
            while let Some(row) = rdr.read_row().unwrap() {
                got.push(row.to_strings().unwrap().into_iter().map(String::from).collect::<Vec<_>>());
            }
            prop_assert_eq!(&got, &core);
        }
    }
}
