//! Table-driven cases: every case through the reference engine, the fast
//! scanner over a slice, the buffered source at many buffer sizes, and a
//! real file (mapped and read).

mod common;

use common::{check_every_engine, rows, scan_dialect};
use fastcsv::{Dialect, Filter, Terminator};

fn d() -> fastcsv::DialectBuilder {
    Dialect::builder()
}

/// (input, expected rows, expected error message or "")
fn case(b: &mut fastcsv::DialectBuilder, input: &str, want: &[&[&str]], err: &str) {
    let dialect = scan_dialect(b);
    let out = check_every_engine(&dialect, input.as_bytes());
    let want: Vec<Vec<String>> =
        want.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect();
    assert_eq!(rows(&out), want, "rows of {input:?}");
    match &out.error {
        None => assert_eq!(err, "", "expected error {err:?} on {input:?}"),
        Some((m, _)) => assert_eq!(m, err, "error on {input:?}"),
    }
}

#[test]
fn basics() {
    case(&mut d(), "", &[], "");
    case(&mut d(), "a,b,c\n1,2,3\n", &[&["a", "b", "c"], &["1", "2", "3"]], "");
    case(&mut d(), "a,b", &[&["a", "b"]], "");
    case(&mut d(), "a,", &[&["a", ""]], "");
    case(&mut d(), ",", &[&["", ""]], "");
    case(&mut d(), "a\r\nb\rc\nd", &[&["a"], &["b"], &["c"], &["d"]], "");
    case(&mut d(), "\n\r\n\r", &[&[], &[], &[]], "");
    case(&mut d(), "a\n\nb\n", &[&["a"], &[], &["b"]], "");
    case(&mut d(), "a\n\rb\n", &[&["a"], &[], &["b"]], "");
}

#[test]
fn quoting() {
    case(&mut d(), "\"a,b\",c\n", &[&["a,b", "c"]], "");
    case(&mut d(), "\"a\"\"b\"\n", &[&["a\"b"]], "");
    case(&mut d(), "\"\"\n", &[&[""]], "");
    case(&mut d(), "\"\"\"\"\n", &[&["\""]], "");
    case(&mut d(), "a\"b\n", &[&["a\"b"]], "");
    case(&mut d(), "\"a\"b\n", &[&["ab"]], "");
    case(&mut d(), "\"a\nb\",c\n", &[&["a\nb", "c"]], "");
    case(&mut d(), "\"a\r\nb\"\r\n", &[&["a\r\nb"]], "");
    case(&mut d(), "\"a\rb\"\n", &[&["a\rb"]], "");
    case(&mut d(), "\"abc", &[&["abc"]], "");
    case(&mut d(), "x,\"", &[&["x", ""]], "");
    case(&mut d(), "\"a\nb", &[&["a\nb"]], "");
    case(&mut d(), "\"a\" ,b\n", &[&["a ", "b"]], "");
    case(d().quote(None), "\"a,b\"\n", &[&["\"a", "b\""]], "");
    case(d().double_quote(false), "\"a\"\"b\"\n", &[&["a\"b\""]], "");
}

#[test]
fn strict() {
    case(d().strict(true), "\"a\"b\n", &[], "',' expected after '\"'");
    case(d().strict(true), "x\n\"abc", &[&["x"]], "unexpected end of data");
    case(d().strict(true), "\"a\",\"b\"\n", &[&["a", "b"]], "");
    // recovery after the error: the rest of the line is dropped
    case(d().strict(true), "\"a\"b,c\nd\n", &[], "',' expected after '\"'");
}

#[test]
fn escapes() {
    let e = || {
        let mut b = d();
        b.escape(Some(b'\\'));
        b
    };
    case(&mut e(), "a\\,b,c\n", &[&["a,b", "c"]], "");
    case(&mut e(), "\\\"a\n", &[&["\"a"]], "");
    case(&mut e(), "\"a\\\"b\"\n", &[&["a\"b"]], "");
    case(&mut e(), "a\\\nb\n", &[&["a\nb"]], "");
    case(&mut e(), "a\\\r\nb\n", &[&["a\r"], &["b"]], "");
    case(&mut e(), "a\\", &[&["a\n"]], "");
    case(&mut e(), "\"a\\", &[&["a\n"]], "");
    case(e().strict(true), "a\\", &[], "unexpected end of data");
    case(&mut e(), "\\\\", &[&["\\"]], "");
    case(e().quote(None), "a\\\"b\n", &[&["a\"b"]], "");
}

#[test]
fn spaces_comments_terminators() {
    case(d().skip_initial_space(true), "a, b,  c\n", &[&["a", "b", "c"]], "");
    case(d().skip_initial_space(true), "a, \"b,c\"\n", &[&["a", "b,c"]], "");
    case(d().comment(Some(b'#')), "#x,y\na\n#z\r\nb", &[&["a"], &["b"]], "");
    case(d().comment(Some(b'#')), "a,#b\n", &[&["a", "#b"]], "");
    case(d().terminator(Terminator::Byte(b';')), "a,b;c\nd;", &[&["a", "b"], &["c\nd"]], "");
    case(d().skip_empty_lines(true), "\n\na\n\r\n\rb\n\n", &[&["a"], &["b"]], "");
    case(d().trim(true), " a ,\" b \",c\t\n", &[&["a", " b ", "c"]], "");
    case(d().delimiter(b'\t'), "a\tb\t\n", &[&["a", "b", ""]], "");
}

#[test]
fn nul_and_filter() {
    case(&mut d(), "a\0b,\0\n", &[&["a\0b", "\0"]], "");
    case(d().filter(Filter::Controls), "a\0b,\"x\ty\x07\"\n", &[&["ab", "x\ty"]], "");
    case(d().filter(Filter::AllControls), "\"x\r\ny\",\tz\n", &[&["xy", "z"]], "");
    case(d().filter(Filter::Invisible), "a\u{200b}b,\u{feff}c\n", &[&["ab", "c"]], "");
    case(d().filter(Filter::Controls), "\"a\"\"\x01b\"\n", &[&["a\"b"]], "");
}

#[test]
fn field_limit_counts_characters() {
    case(d().field_limit(Some(3)), "abc,d\n", &[&["abc", "d"]], "");
    case(d().field_limit(Some(3)), "x\nabcd,d\n", &[&["x"]], "field larger than field limit (3)");
    case(d().field_limit(Some(3)), "\u{e9}\u{e9}\u{e9}\n", &[&["\u{e9}\u{e9}\u{e9}"]], "");
    case(d().field_limit(Some(3)), "\"ab\"\"\"\n", &[&["ab\""]], "");
    case(d().field_limit(Some(3)), "\"ab\"\"c\"\n", &[], "field larger than field limit (3)");
}

#[test]
fn line_numbers_follow_python() {
    let dialect = scan_dialect(&mut d());
    let out = check_every_engine(&dialect, b"a\r\n\"b\nc\"\r\rd\ne");
    let lines: Vec<u64> = out.rows.iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![1, 3, 4, 5, 6]);
}

#[test]
fn reader_level_features() {
    // BOM, headers, ragged rows
    let mut rdr = fastcsv::Reader::from_slice(b"\xEF\xBB\xBFa,b\n1,2\n3\n4,5\n");
    assert_eq!(rdr.headers().unwrap().unwrap().get(0), Some(&b"a"[..]));
    assert_eq!(rdr.read_row().unwrap().unwrap().get(1), Some(&b"2"[..]));
    let e = rdr.read_row().unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 3: record 2, byte 11: found record with 1 fields, but the previous record has 2 fields"
    );
    assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"4"[..]));
    assert!(rdr.read_row().unwrap().is_none());
}

#[test]
fn every_error_kind_has_path_line_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    let cases: Vec<(Dialect, &str, &str)> = vec![
        (d().strict(true).build().unwrap(), "h\n\"a\"b\n", ":2: record 1, byte 5: ',' expected"),
        (d().strict(true).build().unwrap(), "h\n\"ab", ":2: record 1, byte 2: unexpected end"),
        (
            d().field_limit(Some(2)).build().unwrap(),
            "h\nabc\n",
            ":2: record 1, byte 4: field larger",
        ),
        (d().build().unwrap(), "h,i\nabc\n", ":2: record 1, byte 4: found record with 1"),
    ];
    for (dialect, input, needle) in cases {
        std::fs::write(&p, input).unwrap();
        use fastcsv::SourceChoice::{Buffered, Mmap};
        for (choice, ahead) in [(Mmap, false), (Buffered, false), (Buffered, true)] {
            let mut rdr = fastcsv::Reader::builder()
                .dialect(dialect.clone())
                .source(choice)
                .read_ahead(ahead)
                .buffer_size(1)
                .from_path(&p)
                .unwrap();
            let e = loop {
                match rdr.read_row() {
                    Ok(Some(_)) => continue,
                    Ok(None) => panic!("no error for {input:?}"),
                    Err(e) => break e,
                }
            };
            let s = e.to_string();
            assert!(s.starts_with(&*p.to_string_lossy()), "{s}");
            assert!(s.contains(needle), "{s} lacks {needle}");
        }
    }
    let e = fastcsv::Reader::from_path(dir.path().join("missing.csv")).err().unwrap();
    assert!(e.to_string().contains("missing.csv"), "{e}");
    // a directory: a clear error naming it, not a panic
    let e = fastcsv::Reader::from_path(dir.path()).err().unwrap();
    assert!(e.to_string().contains("Is a directory"), "{e}");
    assert!(e.to_string().starts_with(&*dir.path().to_string_lossy()), "{e}");
}

#[test]
fn record_too_large_for_buffer() {
    let big = format!("h\n{}\n", "x".repeat(100));
    let mut rdr =
        fastcsv::Reader::builder().buffer_size(8).max_buffer_size(32).from_reader(big.as_bytes());
    let e = rdr.read_row().unwrap_err();
    assert!(e.to_string().contains("record larger than the maximum buffer size (32"), "{e}");
}

#[test]
fn error_line_inside_crlf_in_quotes() {
    // The LF of a CRLF inside quotes is on the same line as the CR.
    let dialect = scan_dialect(d().field_limit(Some(5)).quote(Some(b'\'')).delimiter(b'\t'));
    let out = check_every_engine(&dialect, b"'#,,,\r\n");
    assert_eq!(out.error, Some(("field larger than field limit (5)".to_string(), 1)));
}

#[test]
fn record_level_utf8_check_agrees_with_field_checks() {
    // Two unescaped fields whose bytes join into a valid character in the
    // scratch buffer: each field alone is invalid.
    let inputs: &[&[u8]] = &[
        b"\"a\"\"\xc3\",\"\xa9\"\"b\"\n",
        b"x,\xc3\xa9,\"q\"\"\xc3\xa9\"\n",
        b"\xc3,\xa9\n",
        b"ok,\xff\n",
    ];
    for &input in inputs {
        for delim in [b',', 0xa7] {
            let d =
                Dialect::builder().headers(false).flexible(true).delimiter(delim).build().unwrap();
            let mut rdr = fastcsv::Reader::builder().dialect(d).from_slice(input);
            while let Some(row) = rdr.read_row().unwrap() {
                let per_field: Result<Vec<&str>, _> =
                    (0..row.len()).map(|i| row.get_str(i)).collect();
                match (row.str_iter(), per_field) {
                    (Ok(it), Ok(v)) => assert_eq!(it.collect::<Vec<_>>(), v),
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{input:?}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
                }
            }
        }
    }
}

#[test]
fn error_at_the_lf_of_a_crlf_resumes_on_the_next_line() {
    // A field goes over the limit at the LF of a CRLF (in quotes, or after
    // an escape in quotes): the CR counted the line, so the LF ends it
    // without counting another, and the next record is on line 2, as in
    // Python (`csv.field_size_limit(1)`, `newline=''`).
    let dialect =
        d().headers(false).flexible(true).field_limit(Some(1)).escape(Some(b'\\')).build().unwrap();
    // (input, per step: the row's first field or the error's line, then
    // `line()`)
    type Steps = Vec<(Result<Vec<u8>, u64>, u64)>;
    let x = || Ok(b"x".to_vec());
    let cases: [(&[u8], Steps); 3] = [
        (b"\"\r\nx\n", vec![(Err(1), 1), (x(), 2)]),
        (b"\"\\\r\nx\n", vec![(Err(1), 1), (x(), 2)]),
        (b"\"\r\nx\r\n\"\r\nx", vec![(Err(1), 1), (x(), 2), (Err(3), 3), (x(), 4)]),
    ];
    for (input, want) in cases {
        for buf in [None, Some(1), Some(2), Some(3), Some(64)] {
            let mut b = fastcsv::Reader::builder();
            b.dialect(dialect.clone());
            let mut rdr = match buf {
                None => b.from_slice(input),
                Some(n) => b.buffer_size(n).from_reader(input),
            };
            let mut got = Vec::new();
            loop {
                match rdr.read_row() {
                    Ok(Some(row)) => got.push((Ok(row.get(0).unwrap().to_vec()), rdr.line())),
                    Ok(None) => break,
                    Err(e) => got.push((Err(e.position().unwrap().line), rdr.line())),
                }
            }
            assert_eq!(got, want, "{:?}, buffer {buf:?}", String::from_utf8_lossy(input));
        }
    }
}
