//! Columnar output (`fastcsv::arrow`): the columns against the rows of
//! `read_row` (the oracle), errors at their records, and the Arrow C stream
//! walked as a consumer would.

mod common;

use std::ffi::CStr;

use common::cases;

use fastcsv::arrow::{ffi, Column, ColumnBatch, Columns, DataType, InferredColumns, ParColumns};
use fastcsv::{ColumnsFrom, Dialect, ErrorKind, Reader};
use proptest::prelude::*;

fn dialect(headers: bool, flexible: bool) -> Dialect {
    Dialect::builder().headers(headers).flexible(flexible).build().unwrap()
}

/// Every batch of `cols`, or the first error.
fn all(cols: &mut Columns<'_>) -> fastcsv::Result<Vec<ColumnBatch>> {
    let mut out = Vec::new();
    while let Some(b) = cols.next_batch()? {
        out.push(b);
    }
    Ok(out)
}

/// The batches as rows of strings.
fn rows_of(batches: &[ColumnBatch]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for b in batches {
        assert!(b.rows() > 0);
        for i in 0..b.rows() {
            rows.push(b.columns().iter().map(|c| c.as_utf8().unwrap().get(i).to_owned()).collect());
        }
    }
    rows
}

/// The oracle: header and rows from `read_row`, empty records skipped,
/// short rows padded to the header's width, up to the first row with a
/// field that is not UTF-8, longer than the first, or that the reader
/// fails on; and whether there was one. `None` when the header fails.
type Oracle = Option<(Vec<String>, Vec<Vec<String>>, bool)>;

fn oracle(data: &[u8], d: &Dialect) -> Oracle {
    oracle_of(data, d, None)
}

/// The oracle of the columns `sel` (all when `None`): only their values
/// need be UTF-8 (the header's names all do), and their values in their
/// order are the rows; `None` also when a column selected is not there.
fn oracle_of(data: &[u8], d: &Dialect, sel: Option<&[usize]>) -> Oracle {
    let mut rdr = Reader::builder().dialect(d.clone()).from_slice(data);
    let utf8 = |f: &[u8]| String::from_utf8(f.to_vec()).ok();
    let mut names: Option<Vec<String>> = None;
    if d.headers() {
        match rdr.headers().ok()? {
            Some(h) => names = Some(h.iter().map(utf8).collect::<Option<_>>()?),
            None => names = Some(Vec::new()),
        }
    }
    let mut rows = Vec::new();
    loop {
        let r = match rdr.read_row() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(_) if names.is_none() => return None,
            Err(_) => return Some((project(names, sel)?, rows, true)),
        };
        if r.is_empty() {
            continue;
        }
        let w = names.get_or_insert_with(|| (0..r.len()).map(|i| i.to_string()).collect()).len();
        if sel.is_some_and(|s| s.iter().any(|&j| j >= w)) {
            return None;
        }
        let picked: Vec<usize> = sel.map_or_else(|| (0..w).collect(), |s| s.to_vec());
        let field = |j: usize| utf8(r.get(j).unwrap_or_default());
        let row: Option<Vec<String>> = picked.iter().map(|&j| field(j)).collect();
        let Some(row) = row.filter(|_| r.len() <= w) else {
            return Some((project(names, sel)?, rows, true));
        };
        rows.push(row);
    }
    Some((project(names, sel)?, rows, false))
}

/// The names of the columns `sel` (all when `None`); `None` when one is
/// not there.
fn project(names: Option<Vec<String>>, sel: Option<&[usize]>) -> Option<Vec<String>> {
    let names = names.unwrap_or_default();
    match sel {
        Some(s) => s.iter().map(|&j| names.get(j).cloned()).collect(),
        None => Some(names),
    }
}

fn pieces() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b",".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"\"\"".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r".to_vec()),
        Just("\u{e9}".as_bytes().to_vec()),
        Just(b"\xc3".to_vec()),
        Just(b"\xa9".to_vec()),
        "[a-c]{1,3}".prop_map(|s| s.into_bytes()),
        "[a-z0-9]{10,70}".prop_map(|s| s.into_bytes()),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// Records as writers make them: plain fields, and quoted ones holding
/// delimiters, doubled quotes and line ends (where cuts are decided by
/// the bytes near them); now and then a ragged row or a stray quote.
fn records() -> impl Strategy<Value = Vec<u8>> {
    let field = prop_oneof![
        "[a-z0-9]{0,8}".prop_map(|s| s.into_bytes()),
        "[a-z ,\n\"é]{0,12}".prop_map(|s| format!("\"{}\"", s.replace('"', "\"\"")).into_bytes()),
        Just(b"x\"y".to_vec()),
    ];
    let row = prop::collection::vec(field, 1..5).prop_map(|f| f.join(&b","[..]));
    (prop::collection::vec(row, 0..80), any::<bool>()).prop_map(|(rows, crlf)| {
        let end: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        rows.iter().flat_map(|r| r.iter().chain(end)).copied().collect()
    })
}

/// Plain records around one whose quoted field holds many lines and no
/// quote, over 4 KiB: a cut inside it, more than 4 KiB (the bytes that
/// decide a guessed state) and the bytes looked at for a quote after its
/// opening quote, is guessed wrong (see `Splitter::guessed_split_path`)
/// and placed again.
fn long_quoted() -> impl Strategy<Value = Vec<u8>> {
    let plain = prop::collection::vec("[0-9]{1,3},[a-z]{0,5},[0-9]{1,3}\n", 0..400);
    let inside = prop::collection::vec("[a-z0-9]{0,3},[a-z]{0,5},[a-z0-9]{0,3}", 400..1500);
    (plain.clone(), inside, plain).prop_map(|(before, inside, after)| {
        let quoted = format!("7,\"{}\",8\n", inside.join("\n"));
        [before.concat(), quoted, after.concat()].concat().into_bytes()
    })
}

/// Names, rows, and the error that ended them (as text), from any source
/// of batches.
type Drained = (Vec<String>, Vec<Vec<String>>, Option<String>);

fn drain_with(
    names: Vec<String>,
    mut next: impl FnMut() -> fastcsv::Result<Option<ColumnBatch>>,
) -> Drained {
    let mut batches = Vec::new();
    let err = loop {
        match next() {
            Ok(Some(b)) => batches.push(b),
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    (names, rows_of(&batches), err)
}

/// [`one_and_many`] of a file holding `data`.
fn one_and_many_of(
    data: &[u8],
    d: &Dialect,
    header_row: bool,
    threads: usize,
    part: u64,
    rows: usize,
) -> (Result<Drained, String>, Result<Drained, String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.csv");
    std::fs::write(&path, data).unwrap();
    one_and_many(&path, d, header_row, threads, part, rows)
}

/// The columns of the file at `path`, in one thread and in parts on
/// several; or the errors that fail both before any row.
fn one_and_many(
    path: &std::path::Path,
    d: &Dialect,
    header_row: bool,
    threads: usize,
    part: u64,
    rows: usize,
) -> (Result<Drained, String>, Result<Drained, String>) {
    let mut b = fastcsv::ReaderBuilder::new();
    b.dialect(d.clone());
    let one =
        b.from_path(path).and_then(|r| Columns::with_header_row(r, header_row)).map(|mut c| {
            c.batch_rows(rows);
            let names = c.names().to_vec();
            drain_with(names, || c.next_batch())
        });
    let many = ParColumns::from_path(&b, path, header_row, threads, part).map(|mut c| {
        c.batch_rows(rows);
        let names = c.names().to_vec();
        drain_with(names, || c.next_batch())
    });
    (one.map_err(|e| e.to_string()), many.map_err(|e| e.to_string()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(600)))]

    /// In parts on several threads, the columns of one thread: names,
    /// rows, and errors with their positions.
    #[test]
    fn columns_in_parts_are_the_columns(
        data in prop_oneof![pieces(), records()],
        headers: bool,
        flexible: bool,
        header_row: bool,
        threads in 1usize..4,
        part in 1u64..64,
        rows in 1usize..9,
    ) {
        let d = dialect(headers, flexible);
        let (one, many) = one_and_many_of(&data, &d, header_row, threads, part, rows);
        match (&one, &many) {
            // An error before any row: at once in one thread; in parts,
            // at once only when it is in the first part.
            (Err(e), Ok((_, r, Some(f)))) => prop_assert!(r.is_empty() && e == f, "{:?} {:?}", one, many),
            _ => prop_assert_eq!(one, many),
        }
    }

    /// Columns hold exactly the oracle's rows, at every batch size; when
    /// the oracle fails, the columns fail too.
    #[test]
    fn columns_match_the_rows(data in pieces(), headers: bool, flexible: bool, rows in 1usize..9) {
        let d = dialect(headers, flexible);
        let want = oracle(&data, &d);
        let rdr = Reader::builder().dialect(d.clone()).from_slice(&data);
        let got = Columns::new(rdr).map(|mut c| {
            c.batch_rows(rows);
            let mut batches = Vec::new();
            let failed = loop {
                match c.next_batch() {
                    Ok(Some(b)) => batches.push(b),
                    Ok(None) => break false,
                    Err(_) => break true,
                }
            };
            assert!(batches.iter().all(|b| b.rows() <= rows), "a batch over {rows} rows");
            (c.names().to_vec(), rows_of(&batches), failed)
        });
        match (want, got) {
            (Some(w), Ok(g)) => prop_assert_eq!(w, g),
            (None, Err(_)) => {}
            (w, g) => prop_assert!(false, "oracle {:?}, columns {:?}", w, g.map_err(|e| e.to_string())),
        }
    }
}

proptest! {
    // Files of 5-30 KB: fewer cases (a wrong guess in about 40% of them).
    #![proptest_config(ProptestConfig::with_cases(cases(120)))]

    /// In parts of kilobytes, around a quoted field of many lines: where a
    /// bound guessed inside it proves wrong, the rest is read in exact
    /// parts; the names, rows and errors are one thread's.
    #[test]
    fn columns_in_parts_past_a_wrong_guess_are_the_columns(
        data in long_quoted(),
        headers: bool,
        header_row: bool,
        threads in 2usize..4,
        part in 4096u64..12_000,
    ) {
        let d = dialect(headers, false);
        let (one, many) = one_and_many_of(&data, &d, header_row, threads, part, 1000);
        prop_assert_eq!(one, many);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(600)))]

    /// Selected columns hold the oracle's values of those columns, at every
    /// batch size, in one thread and in parts on several: a value that is
    /// not UTF-8 in a column left out is no error, a longer row still is,
    /// and an error names the field's place in the file.
    #[test]
    fn selected_columns_are_those_of_the_rows(
        data in prop_oneof![pieces(), records()],
        headers: bool,
        flexible: bool,
        sel in Just((0usize..5).collect::<Vec<_>>()).prop_shuffle().prop_flat_map(|v| {
            (0..=v.len()).prop_map(move |n| v[..n].to_vec())
        }),
        rows in 1usize..9,
        threads in 1usize..4,
        part in 1u64..64,
    ) {
        let d = dialect(headers, flexible);
        let want = oracle_of(&data, &d, Some(&sel));
        let rdr = Reader::builder().dialect(d.clone()).from_slice(&data);
        let got = Columns::new(rdr).and_then(|mut c| {
            c.batch_rows(rows);
            c.select(&sel)?;
            let names = c.names().to_vec();
            Ok(drain_with(names, || c.next_batch()))
        });
        match (&want, &got) {
            (Some((wn, wr, failed)), Ok((gn, gr, err))) => {
                prop_assert_eq!((wn, wr, failed), (gn, gr, &err.is_some()));
            }
            (None, Err(_)) => {}
            _ => prop_assert!(false, "oracle {:?}, columns {:?}", want, got.map_err(|e| e.to_string())),
        }
        // The same in parts (errors with their positions too), where the
        // selection fits.
        if got.is_err() {
            return Ok(());
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv");
        std::fs::write(&path, &data).unwrap();
        let mut b = fastcsv::ReaderBuilder::new();
        b.dialect(d.clone());
        let read = |mut c: Columns<'_>| -> fastcsv::Result<Drained> {
            c.batch_rows(rows);
            c.select(&sel)?;
            let names = c.names().to_vec();
            Ok(drain_with(names, || c.next_batch()))
        };
        let one = b.from_path(&path).and_then(Columns::new).and_then(read).unwrap();
        let many = ParColumns::from_path(&b, &path, false, threads, part).and_then(|mut c| {
            c.batch_rows(rows);
            c.select(&sel)?;
            let names = c.names().to_vec();
            Ok(drain_with(names, || c.next_batch()))
        });
        match many {
            Ok(m) => prop_assert_eq!(one, m),
            // An error before any row, in the first part.
            Err(e) => prop_assert!(one.1.is_empty() && one.2 == Some(e.to_string()), "{:?} {}", one, e),
        }
    }
}

/// Every part of a file read on several threads is built as set up (a
/// later part's first rows are now read after the types are set, and
/// converted as read): no batch holds more rows than asked for, and the
/// typed columns come out as on one thread, with the same error.
#[test]
fn every_part_is_read_as_set_up() {
    type Typed = (Vec<(Option<i64>, Option<f64>, String)>, Vec<usize>, Option<String>);
    fn drain(mut next: impl FnMut() -> fastcsv::Result<Option<ColumnBatch>>) -> Typed {
        let (mut rows, mut sizes) = (Vec::new(), Vec::new());
        let err = loop {
            let b = match next() {
                Ok(Some(b)) => b,
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            };
            sizes.push(b.rows());
            let (Column::Int64(n), Column::Float64(x), Column::Utf8(s)) =
                (b.column(0), b.column(1), b.column(2))
            else {
                panic!("the types set");
            };
            rows.extend((0..b.rows()).map(|i| (n.get(i), x.get(i), s.get(i).to_owned())));
        };
        (rows, sizes, err)
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.csv");
    let mut text = String::from("n,x,s\n");
    for i in 0..60_000 {
        text.push_str(&format!("{i},{}.5,\"s {i}\"\n", i % 97));
    }
    let mut bad = text.clone();
    bad.push_str("60000,oops,s\n");
    let types = vec![DataType::Int64, DataType::Float64, DataType::Utf8];
    for (data, fails) in [(&text, false), (&bad, true)] {
        std::fs::write(&path, data).unwrap();
        let b = fastcsv::ReaderBuilder::new();
        let mut one = Columns::new(b.from_path(&path).unwrap()).unwrap();
        one.batch_rows(1000).set_types(types.clone()).unwrap();
        let one = drain(|| one.next_batch());
        assert_eq!(one.0.len(), 60_000);
        assert_eq!(one.2.is_some(), fails, "{:?}", one.2);
        for threads in [2, 3] {
            let mut many = ParColumns::from_path(&b, &path, false, threads, 64 << 10).unwrap();
            many.batch_rows(1000).set_types(types.clone()).unwrap();
            let got = drain(|| many.next_batch());
            assert!(got.1.len() > 60, "{:?}", got.1);
            assert!(got.1.iter().all(|&n| n <= 1000), "{:?}", got.1);
            assert_eq!((&got.0, &got.2), (&one.0, &one.2));
        }
    }
}

#[test]
fn selected_columns_report_errors_at_their_field_in_the_file() {
    let data = b"a,b,c\n1,\xff,x\n2,y,z\n3,q,r,s\n";
    let d = Dialect::builder().flexible(true).build().unwrap();
    let rdr = Reader::builder().dialect(d.clone()).from_slice(data);
    let mut c = Columns::new(rdr).unwrap();
    c.select(&[2, 0]).unwrap();
    assert_eq!(c.names(), ["c", "a"]);
    c.set_types(vec![DataType::Utf8, DataType::Int64]).unwrap();
    let b = c.next_batch().unwrap().unwrap();
    assert_eq!(b.rows(), 2);
    assert_eq!(b.strings(0).get(1), "z");
    let e = c.next_batch().unwrap_err();
    let want = ErrorKind::LongRow { columns: 3, found: 4, from: ColumnsFrom::Header };
    assert_eq!(e.kind().to_string(), want.to_string(), "{e}");
    // A type error names the field in the file.
    let rdr = Reader::builder().dialect(d.clone()).from_slice(b"a,b,c\n1,2,3\nx,y,z\n");
    let mut c = Columns::new(rdr).unwrap();
    c.select(&[2]).unwrap();
    c.set_types(vec![DataType::Int64]).unwrap();
    assert_eq!(c.next_batch().unwrap().unwrap().rows(), 1);
    let e = c.next_batch().unwrap_err().to_string();
    assert!(e.contains("field 2 is not a valid int64"), "{e}");
    // Not UTF-8 in a selected column: its field in the file.
    let rdr = Reader::builder().dialect(d.clone()).from_slice(b"a,b,c\n1,2,\xff\n");
    let mut c = Columns::new(rdr).unwrap();
    c.select(&[2, 0]).unwrap();
    let e = c.next_batch().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Utf8 { field: 2, .. }), "{e}");
    // Bad selections.
    let rdr = Reader::builder().dialect(d).from_slice(b"a,b\n1,2\n");
    let mut c = Columns::new(rdr).unwrap();
    let e = c.select(&[2]).err().unwrap().to_string();
    assert!(e.contains("column 2 is selected, but there are 2"), "{e}");
    assert!(c.select(&[1, 1]).err().unwrap().to_string().contains("selected twice"));
    c.select(&[1]).unwrap();
    assert!(c.select(&[0]).is_err());
}

#[test]
fn a_value_that_is_not_utf8_is_reported_at_its_record() {
    // Two halves of "é" in neighbouring fields make valid bytes once the
    // column is joined: still an error, in the row and field it is in.
    let data = b"a,b\n1,x\n2,\xc3\n\xa9,y\n";
    let rdr = Reader::builder().path("in.csv").from_slice(data);
    let mut cols = Columns::new(rdr).unwrap();
    let err = all(&mut cols).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Utf8 { field: 1, valid_up_to: 0 }), "{err}");
    let pos = err.position().unwrap();
    assert_eq!((pos.line, pos.record, pos.byte), (3, 2, 8));
    assert!(err.to_string().starts_with("in.csv:3: record 2, byte 8"), "{err}");
    // The stream ends after an error.
    assert!(cols.next_batch().unwrap().is_none());
}

#[test]
fn a_value_that_is_not_utf8_is_found_wherever_it_lies_in_a_long_column() {
    // Columns are checked in pieces of some 32 KiB as they are filled, the
    // rest when a batch is complete: a bad value at the start, inside and
    // at the end of pieces and batches is the error of its own record,
    // after every row before it. Rows of 2 columns are copied in groups
    // of 8,192 rows (a piece each); of 20 in groups of 819, two to a piece.
    let rows = 12_000;
    let good = "€uro,€€€ – ü";
    for width in [2, 20] {
        let lead = "1,".repeat(width - 1);
        for bad_row in [0, 1, 818, 819, 1_637, 1_638, 1_639, 4_000, 8_191, 8_192, 11_999] {
            // 0: a byte that is never UTF-8; 1: the first half of a
            // character the next value ends; 2: a value that starts with
            // a character's second byte.
            for kind in 0..3 {
                let mut data = (1..=width).map(|j| format!("c{j}")).collect::<Vec<_>>().join(",");
                data.push('\n');
                let mut data = data.into_bytes();
                for r in 0..rows {
                    data.extend_from_slice(lead.as_bytes());
                    match (r == bad_row, kind) {
                        (true, 0) => data.extend_from_slice(b"ab\xffcd"),
                        (true, 1) => data.extend_from_slice(b"ab\xe2\x82"),
                        (true, _) => data.extend_from_slice(b"\xa9 cd"),
                        _ if kind == 1 && r == bad_row + 1 => data.extend_from_slice(b"\xac cd"),
                        _ => data.extend_from_slice(format!("\"{good}\"").as_bytes()),
                    }
                    data.push(b'\n');
                }
                let mut cols = Columns::new(Reader::builder().from_slice(&data)).unwrap();
                let mut seen = 0;
                let at = (width, bad_row, kind);
                let err = loop {
                    match cols.next_batch() {
                        Ok(Some(b)) => {
                            let c = b.strings(width - 1);
                            assert!((0..b.rows()).all(|i| c.get(i) == good), "{at:?}");
                            seen += b.rows();
                        }
                        Ok(None) => panic!("no error: {at:?}"),
                        Err(e) => break e,
                    }
                };
                let field = width - 1;
                assert!(
                    matches!(err.kind(), ErrorKind::Utf8 { field: f, .. } if *f == field),
                    "{at:?}: {err}"
                );
                assert_eq!(seen, bad_row, "{at:?}");
                assert_eq!(err.position().unwrap().record, bad_row as u64 + 1, "{at:?}");
                assert!(cols.next_batch().unwrap().is_none());
            }
        }
    }
}

#[test]
fn a_longer_row_of_a_flexible_dialect_is_an_error_and_a_shorter_is_padded() {
    let rdr = Reader::builder().dialect(dialect(true, true)).from_slice(b"a,b\n1\n2,3\n4,5,6\n");
    let mut cols = Columns::new(rdr).unwrap();
    let err = all(&mut cols).unwrap_err();
    let from = ColumnsFrom::Header;
    assert!(
        matches!(err.kind(), ErrorKind::LongRow { columns: 2, found: 3, from: f } if *f == from)
    );
    assert_eq!(err.position().unwrap().line, 4);
    let rdr = Reader::builder().dialect(dialect(true, true)).from_slice(b"a,b\n1\n2,3\n");
    let mut cols = Columns::new(rdr).unwrap();
    assert_eq!(rows_of(&all(&mut cols).unwrap()), [["1", ""], ["2", "3"]]);
}

#[test]
fn empty_inputs() {
    for (data, headers, names) in [
        (&b""[..], true, vec![]),
        (b"", false, vec![]),
        (b"a,b\n", true, vec!["a", "b"]),
        (b"\n\n", false, vec![]),
    ] {
        let d = Dialect::builder().headers(headers).build().unwrap();
        let mut cols = Columns::new(Reader::builder().dialect(d).from_slice(data)).unwrap();
        assert_eq!(cols.names(), names);
        assert!(cols.next_batch().unwrap().is_none());
    }
}

#[test]
fn a_header_row_read_from_the_first_non_empty_record() {
    let d = Dialect::builder().headers(false).skip_empty_lines(false).build().unwrap();
    let rdr = Reader::builder().dialect(d).from_slice(b"\n\"x,1\",y\n\n1,2\n");
    let mut cols = Columns::with_header_row(rdr, true).unwrap();
    assert_eq!(cols.names(), ["x,1", "y"]);
    assert_eq!(rows_of(&all(&mut cols).unwrap()), [["1", "2"]]);
}

/// The batches of `data` through the C stream, read as a consumer does:
/// the schema's formats and names, then each array's buffers.
/// Columns of a `'static` slice, as a source of an exported stream.
struct Src(Columns<'static>);
// SAFETY: a reader of a `'static` slice holds no thread or stream.
unsafe impl Send for Src {}
impl ffi::BatchSource for Src {
    fn names(&self) -> &[String] {
        self.0.names()
    }
    fn types(&self) -> Vec<DataType> {
        self.0.types()
    }
    fn next_batch(&mut self) -> fastcsv::Result<Option<ColumnBatch>> {
        self.0.next_batch()
    }
}

fn through_stream(
    data: &'static [u8],
    rows: usize,
) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let mut cols = Columns::new(Reader::from_slice(data)).unwrap();
    cols.batch_rows(rows);
    let mut stream = ffi::export_stream(Src(cols));
    let mut names = Vec::new();
    let mut out = Vec::new();
    // SAFETY: the stream, schema and arrays are used as the interface
    // says: each written by the producer, read, then released once.
    unsafe {
        let mut schema = ffi::ArrowSchema::empty();
        assert_eq!((stream.get_schema.unwrap())(&mut stream, &mut schema), 0);
        assert_eq!(CStr::from_ptr(schema.format).to_str().unwrap(), "+s");
        for k in 0..schema.n_children as usize {
            let c = &**schema.children.add(k);
            assert_eq!(CStr::from_ptr(c.format).to_str().unwrap(), "u");
            assert_eq!(c.flags, 2, "nullable");
            names.push(CStr::from_ptr(c.name).to_str().unwrap().to_owned());
        }
        (schema.release.unwrap())(&mut schema);
        assert!(schema.release.is_none());
        loop {
            let mut a = ffi::ArrowArray::empty();
            if (stream.get_next.unwrap())(&mut stream, &mut a) != 0 {
                let msg = CStr::from_ptr((stream.get_last_error.unwrap())(&mut stream));
                let msg = msg.to_str().unwrap().to_owned();
                (stream.release.unwrap())(&mut stream);
                return Err(msg);
            }
            let Some(release) = a.release else { break };
            assert_eq!((a.n_buffers, a.null_count, a.offset), (1, 0, 0));
            assert_eq!(a.n_children as usize, names.len());
            let n = a.length as usize;
            let mut rows: Vec<Vec<String>> = vec![Vec::new(); n];
            for k in 0..a.n_children as usize {
                let c = &**a.children.add(k);
                assert_eq!((c.length as usize, c.n_buffers, c.null_count), (n, 3, 0));
                let bufs = std::slice::from_raw_parts(c.buffers, 3);
                assert!(!bufs[1].is_null() && !bufs[2].is_null());
                let offs = std::slice::from_raw_parts(bufs[1].cast::<i32>(), n + 1);
                let bytes = std::slice::from_raw_parts(bufs[2].cast::<u8>(), offs[n] as usize);
                for (i, row) in rows.iter_mut().enumerate() {
                    let v = &bytes[offs[i] as usize..offs[i + 1] as usize];
                    row.push(std::str::from_utf8(v).unwrap().to_owned());
                }
            }
            // A consumer may move a child out and release it on its own.
            if a.n_children > 0 {
                let c = &mut **a.children;
                let mut moved = std::ptr::read(c);
                c.release = None;
                (moved.release.unwrap())(&mut moved);
            }
            release(&mut a);
            assert!(a.release.is_none());
            out.extend(rows);
        }
        (stream.release.unwrap())(&mut stream);
        assert!(stream.release.is_none());
    }
    Ok((names, out))
}

#[test]
fn the_c_stream_gives_the_columns() {
    let data = b"id,\"na\"\"me\",note\n1,Ada,\"a,b\"\n2,\"\",\"x\ny\"\n3,\xc3\xa9,\n";
    for rows in [1, 2, 3, 100] {
        let (names, got) = through_stream(data, rows).unwrap();
        assert_eq!(names, ["id", "na\"me", "note"]);
        assert_eq!(got, [["1", "Ada", "a,b"], ["2", "", "x\ny"], ["3", "\u{e9}", ""]]);
    }
    assert_eq!(through_stream(b"", 4).unwrap(), (vec![], vec![]));
    assert_eq!(through_stream(b"a\n", 4).unwrap(), (vec!["a".to_owned()], vec![]));
}

#[test]
fn the_c_stream_reports_errors() {
    let err = through_stream(b"a,b\n1,2\n3,\xff\n", 1).unwrap_err();
    assert!(err.contains("line 3: record 2, byte 8"), "{err}");
    assert!(err.contains("UTF-8"), "{err}");
}

#[test]
fn batches_hold_exactly_the_rows_asked_for_from_a_file() {
    let mut data = b"k,v\n".to_vec();
    for i in 0..5000 {
        data.extend_from_slice(format!("{i},\"v{i}\"\"\n{}\"\n", "x".repeat(i % 7)).as_bytes());
    }
    let p = std::env::temp_dir().join(format!("fastcsv-arrow-{}.csv", std::process::id()));
    std::fs::write(&p, &data).unwrap();
    for (n, want) in [(1000, vec![1000; 5]), (3000, vec![3000, 2000]), (100_000, vec![5000])] {
        let mut cols = Columns::new(Reader::from_path(&p).unwrap()).unwrap();
        cols.batch_rows(n);
        let b = all(&mut cols).unwrap();
        assert_eq!(b.iter().map(ColumnBatch::rows).collect::<Vec<_>>(), want);
        let rows = rows_of(&b);
        assert_eq!(rows[4321], ["4321", &format!("v4321\"\n{}", "x".repeat(4321 % 7))]);
    }
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn an_error_before_any_row_fails_at_once() {
    let d = Dialect::builder().headers(false).build().unwrap();
    let rdr = Reader::builder().dialect(d.clone()).path("h.csv").from_slice(b"a,\xff\n1,2\n");
    let err = Columns::with_header_row(rdr, true).err().expect("an error");
    assert!(err.to_string().starts_with("h.csv:1: record 0, byte 0"), "{err}");
    let rdr = Reader::builder().path("h.csv").from_slice(b"a,\xff\n1,2\n");
    let err = Columns::new(rdr).err().expect("an error");
    assert!(err.to_string().starts_with("h.csv:1:"), "{err}");
    // An error after the first row comes after it.
    let rdr = Reader::builder().dialect(d).from_slice(b"1,2\n3,\xff\n");
    let mut cols = Columns::new(rdr).unwrap();
    assert_eq!(cols.next_batch().unwrap().unwrap().rows(), 1);
    assert!(cols.next_batch().is_err());
    assert!(cols.next_batch().unwrap().is_none());
}

#[test]
fn a_wide_file_in_groups_of_rows() {
    // 300 columns: the rows are copied column by column in groups of about
    // 54; values of every length class, quoted ones from the unescaped
    // copies, and the last bytes of the input.
    let mut data = Vec::new();
    for i in 0..500usize {
        let row: Vec<String> = (0..300usize)
            .map(|j| match (i + j) % 7 {
                0 => String::new(),
                1 => "x".repeat((i * j) % 40),
                2 => format!("\"q\"\"{j}\""),
                3 => format!("\"{}\n\"", "y".repeat(j % 20)),
                _ => format!("{i}.{j}"),
            })
            .collect();
        data.extend_from_slice(row.join(",").as_bytes());
        data.push(b'\n');
    }
    data.pop();
    let d = dialect(false, false);
    let want = oracle(&data, &d).expect("oracle");
    for rows in [7, 54, 55, 65536] {
        let mut cols =
            Columns::new(Reader::builder().dialect(d.clone()).from_slice(&data)).unwrap();
        cols.batch_rows(rows);
        let b = all(&mut cols).unwrap();
        assert_eq!((cols.names().to_vec(), rows_of(&b), false), want, "batches of {rows}");
    }
}

// ---------------------------------------------------------------------------
// Typed columns

/// A value of a typed column, for comparing with the oracle.
#[derive(Clone, Debug, PartialEq)]
enum V {
    Null,
    I(i64),
    /// A float's bits (so that -0.0 and 0.0 differ, and inf compares).
    F(u64),
    B(bool),
    S(String),
}

/// The value of row `i` of `c`.
fn value(c: &Column, i: usize) -> V {
    match c {
        Column::Utf8(c) => V::S(c.get(i).to_owned()),
        Column::Utf8View(c) => V::S(c.get(i).to_owned()),
        Column::Int64(c) => c.get(i).map_or(V::Null, V::I),
        Column::Float64(c) => c.get(i).map_or(V::Null, |x| V::F(x.to_bits())),
        Column::Boolean(c) => c.get(i).map_or(V::Null, V::B),
        Column::Date32(c) => c.get(i).map_or(V::Null, |d| V::I(d.into())),
        Column::Timestamp { values, .. } => values.get(i).map_or(V::Null, V::I),
        _ => unreachable!(),
    }
}

/// Spellings of nulls, trues and falses, as lists (the oracle's).
#[derive(Clone, Debug)]
struct Words {
    nulls: Vec<String>,
    trues: Vec<String>,
    falses: Vec<String>,
}

impl Default for Words {
    fn default() -> Words {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Words {
            nulls: owned(&[
                "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                "1.#QNAN", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null",
            ]),
            trues: owned(&["1", "true", "True", "TRUE"]),
            falses: owned(&["0", "false", "False", "FALSE"]),
        }
    }
}

impl Words {
    fn spellings(&self) -> fastcsv::arrow::Spellings {
        fastcsv::arrow::Spellings::default()
            .nulls(&self.nulls)
            .trues(&self.trues)
            .falses(&self.falses)
    }
}

/// Some spellings: the defaults, or lists drawn from the tokens' words.
fn words() -> impl Strategy<Value = Words> {
    let pick = || {
        prop::collection::vec(
            prop::sample::select(vec![
                "", "-", "NA", "NaN", "nan", "1", "0", "yes", "no", "x", "true", "False", "inf",
            ]),
            0..4,
        )
        .prop_map(|v| v.into_iter().map(String::from).collect::<Vec<_>>())
    };
    prop_oneof![
        Just(Words::default()),
        (pick(), pick(), pick()).prop_map(|(nulls, trues, falses)| Words { nulls, trues, falses }),
    ]
}

/// The oracle of the typed rules, from the standard library's parsers:
/// `s` as a value of type `ty` with the spellings `w`, `Err` when it does
/// not fit.
fn typed_oracle_with(s: &str, ty: DataType, w: &Words) -> Result<V, ()> {
    let is = |list: &[String]| list.iter().any(|x| x == s);
    let null = is(&w.nulls);
    if null && ty != DataType::Utf8 {
        // A null spelling is null whatever else it is.
        return Ok(V::Null);
    }
    // Numbers may have spaces and tabs around them.
    let t = s.trim_matches([' ', '\t']);
    let parsed = match ty {
        DataType::Utf8 => return Ok(V::S(s.to_owned())),
        DataType::Int64 => match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) if (1..=16).contains(&h.len()) && h.chars().all(|c| c.is_ascii_hexdigit()) => {
                u64::from_str_radix(h, 16).ok().map(|n| V::I(n as i64))
            }
            Some(_) => None,
            None if !t.starts_with('+') => t.parse::<i64>().ok().map(V::I),
            None => None,
        },
        // A NaN spelt as a null is null.
        DataType::Float64 => {
            t.parse::<f64>().ok().filter(|x| !(x.is_nan() && null)).map(|x| V::F(x.to_bits()))
        }
        DataType::Boolean if is(&w.trues) => Some(V::B(true)),
        DataType::Boolean if is(&w.falses) => Some(V::B(false)),
        DataType::Boolean => None,
        _ => unreachable!(),
    };
    match parsed {
        Some(v) => Ok(v),
        None if null => Ok(V::Null),
        None => Err(()),
    }
}

/// Values that a column of numbers, booleans or text may hold.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..1000).prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
        (any::<f64>(), 0usize..4).prop_map(|(x, k)| match k {
            0 => format!("{x:e}"),
            1 => format!("{x:E}"),
            2 => format!("{x:.3}"),
            _ => format!("{x:.17}"),
        }),
        "[-+]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?",
        prop::sample::select(vec![
            "",
            "NA",
            "NaN",
            "nan",
            "null",
            "NULL",
            "#N/A",
            "-1.#IND",
            "1.#QNAN",
            "n/a",
            "N/A",
            "true",
            "True",
            "TRUE",
            "false",
            "False",
            "FALSE",
            "1",
            "0",
            "inf",
            "-inf",
            "+inf",
            "Infinity",
            "-INFINITY",
            "nAn",
            "+5",
            "-0",
            "0.0",
            ".5",
            "5.",
            ".",
            "-",
            "+",
            "e5",
            "1e",
            "1e+",
            "x",
            " 1",
            "1 ",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "0x10",
            "1_000",
            "1,5",
        ])
        .prop_map(str::to_owned),
    ]
}

/// A CSV of `cols` columns whose values are drawn from `token`, each
/// column from one "kind" so that inference gives every type.
fn typed_csv() -> impl Strategy<Value = (Vec<Vec<String>>, usize)> {
    (1usize..4, 1usize..40).prop_flat_map(|(cols, rows)| {
        let kinds = prop::collection::vec(0usize..5, cols);
        (kinds, Just(rows), Just(cols)).prop_flat_map(|(kinds, rows, cols)| {
            let col = |k: usize| -> BoxedStrategy<String> {
                match k {
                    0 => prop_oneof![9 => any::<i32>().prop_map(|n| n.to_string()), 1 => token()].boxed(),
                    1 => prop_oneof![9 => any::<f64>().prop_map(|x| x.to_string()), 1 => token()].boxed(),
                    2 => prop_oneof![9 => prop::sample::select(vec!["true", "False", "0", "1", ""]).prop_map(str::to_owned), 1 => token()].boxed(),
                    3 => prop_oneof![9 => prop::sample::select(vec!["", "NA", "null"]).prop_map(str::to_owned), 1 => token()].boxed(),
                    _ => token().boxed(),
                }
            };
            let row: Vec<BoxedStrategy<String>> = kinds.iter().map(|&k| col(k)).collect();
            (prop::collection::vec(row, rows), Just(cols))
        })
    })
}

/// The CSV text of `rows` under a header `c0,c1,...` (every value quoted,
/// so that an empty one is a field).
fn csv_text(rows: &[Vec<String>], cols: usize) -> Vec<u8> {
    let mut out = (0..cols).map(|j| format!("c{j}")).collect::<Vec<_>>().join(",");
    out.push('\n');
    for r in rows {
        let q: Vec<String> = r.iter().map(|v| format!("\"{}\"", v.replace('"', "\"\""))).collect();
        out.push_str(&q.join(","));
        out.push('\n');
    }
    out.into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

    /// Inferred from some rows, then read: each column's type is the first
    /// of int64, bool, float64 that every sampled value fits by the
    /// oracle's parsers (utf8 when none or all null), and the values are
    /// the oracle's, up to the first that does not fit, which is an error
    /// at its row.
    #[test]
    fn typed_columns_are_the_oracle_values(
        (rows, cols) in typed_csv(),
        sample in 1usize..50,
        batch in 1usize..9,
        w in words(),
    ) {
        let data = csv_text(&rows, cols);
        let mut c = Columns::new(Reader::from_slice(&data)).unwrap();
        c.batch_rows(batch);
        c.set_spellings(w.spellings());
        let types = c.infer_types(sample).unwrap();
        let typed_oracle = |s: &str, ty| typed_oracle_with(s, ty, &w);
        for (j, ty) in types.iter().enumerate() {
            let vals: Vec<&str> = rows.iter().take(sample).map(|r| r[j].as_str()).collect();
            let fits = |t| vals.iter().all(|v| typed_oracle(v, t).is_ok());
            let all_null = vals.iter().all(|v| w.nulls.iter().any(|n| n == v));
            let want = if all_null {
                DataType::Utf8
            } else {
                [DataType::Int64, DataType::Boolean, DataType::Float64]
                    .into_iter()
                    .find(|&t| fits(t))
                    .unwrap_or(DataType::Utf8)
            };
            prop_assert_eq!(*ty, want, "column {} of {:?}", j, vals);
        }
        // The oracle: rows up to the first value that does not fit.
        let mut want_rows = Vec::new();
        let mut want_err = None;
        'rows: for (i, r) in rows.iter().enumerate() {
            let mut row = Vec::new();
            for (j, v) in r.iter().enumerate() {
                match typed_oracle(v, types[j]) {
                    Ok(x) => row.push(x),
                    Err(()) => {
                        want_err = Some((i + 1, j));
                        break 'rows;
                    }
                }
            }
            want_rows.push(row);
        }
        let mut got_rows = Vec::new();
        let got_err = loop {
            match c.next_batch() {
                Ok(Some(b)) => {
                    for (j, col) in b.columns().iter().enumerate() {
                        prop_assert_eq!(col.data_type(), types[j]);
                    }
                    for i in 0..b.rows() {
                        got_rows.push(b.columns().iter().map(|col| value(col, i)).collect::<Vec<_>>());
                    }
                }
                Ok(None) => break None,
                Err(e) => match e.kind() {
                    ErrorKind::Value { field, expected, .. } => {
                        prop_assert_eq!(*expected, types[*field].name());
                        break Some((e.position().unwrap().record as usize, *field));
                    }
                    other => prop_assert!(false, "{:?}", other),
                },
            }
        };
        prop_assert_eq!(got_rows, want_rows);
        prop_assert_eq!(got_err, want_err);
        prop_assert!(c.next_batch().unwrap().is_none());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1000)))]

    /// Typed on the whole column: each column's type is the narrowest that
    /// holds every value (the first of int64, bool, float64 that every
    /// value fits by the oracle's parsers; utf8 when none, or when every
    /// value is null), whatever rows the candidates come from, the
    /// threads and the batches; the read never fails, and the values are
    /// the oracle's.
    #[test]
    fn whole_column_types_are_the_narrowest_that_hold_every_value(
        (rows, cols) in typed_csv(),
        sample in 0usize..50,
        batch in 1usize..9,
        threads in 1usize..4,
        views in any::<bool>(),
        w in words(),
    ) {
        let data = csv_text(&rows, cols);
        let mut c = Columns::new(Reader::from_slice(&data)).unwrap();
        c.batch_rows(batch);
        c.set_spellings(w.spellings());
        let mut typed =
            InferredColumns::read_sampling(c, &w.spellings(), threads, views, sample).unwrap();
        let types = typed.types();
        let typed_oracle = |s: &str, ty| typed_oracle_with(s, ty, &w);
        for (j, ty) in types.iter().enumerate() {
            // The naive oracle: every value, every type in order.
            let vals: Vec<&str> = rows.iter().map(|r| r[j].as_str()).collect();
            let all_null = vals.iter().all(|v| w.nulls.iter().any(|n| n == v));
            let want = if all_null {
                DataType::Utf8
            } else {
                [DataType::Int64, DataType::Boolean, DataType::Float64]
                    .into_iter()
                    .find(|&t| vals.iter().all(|v| typed_oracle(v, t).is_ok()))
                    .unwrap_or(DataType::Utf8)
            };
            prop_assert_eq!(*ty, want, "column {} of {:?}", j, vals);
        }
        let want_rows: Vec<Vec<V>> = rows
            .iter()
            .map(|r| r.iter().enumerate().map(|(j, v)| typed_oracle(v, types[j]).unwrap()).collect())
            .collect();
        let mut got_rows = Vec::new();
        while let Some(b) = typed.next_batch().unwrap() {
            for (j, col) in b.columns().iter().enumerate() {
                prop_assert_eq!(col.data_type(), types[j]);
                prop_assert_eq!(matches!(col, Column::Utf8View(_)), views && types[j] == DataType::Utf8);
            }
            for i in 0..b.rows() {
                got_rows.push(b.columns().iter().map(|col| value(col, i)).collect::<Vec<_>>());
            }
        }
        prop_assert_eq!(got_rows, want_rows);
        prop_assert!(typed.next_batch().unwrap().is_none());
    }
}

#[test]
fn whole_column_types_widen_late_and_keep_the_error_last() {
    // A float after the first batch widens the column; a ragged row ends
    // the rows, after those before it, with the types of those rows.
    let mut text = String::from("n,s\n");
    for i in 0..3000 {
        text.push_str(&format!("{i},{}\n", if i == 2500 { "" } else { "NA" }));
    }
    text.push_str("1.5,2024-08-18\n7,x,y\n8,z\n");
    let mut c = Columns::new(Reader::from_slice(text.as_bytes())).unwrap();
    c.batch_rows(1000);
    let mut t = InferredColumns::read_sampling(c, &Default::default(), 2, false, 1000).unwrap();
    assert_eq!(t.types(), [DataType::Float64, DataType::Date32]);
    let mut got = Vec::new();
    let err = loop {
        match t.next_batch() {
            Ok(Some(b)) => got.extend((0..b.rows()).map(|i| value(b.column(0), i))),
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    let want: Vec<V> = (0..3000).map(|i| V::F((i as f64).to_bits())).collect();
    assert_eq!(got[..3000], want[..]);
    assert_eq!(got[3000], V::F(1.5f64.to_bits()));
    assert_eq!(got.len(), 3001);
    assert_eq!(err.position().unwrap().record, 3002, "{err}");
    assert!(t.next_batch().unwrap().is_none());
}

/// A file whose quoted field runs, with line ends but no quote, across
/// several parts: the bounds guessed inside it (no quote byte near the
/// cuts) are wrong, found so at the end of the part before each, and the
/// rest is read in exact parts. Its lines look like records whose last
/// value is text, which the sample of a part that starts inside the
/// field sees.
#[test]
fn guessed_bounds_inside_a_quoted_field_are_placed_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    let mut text = String::from("id,note,n\n");
    for i in 0..200 {
        text.push_str(&format!("{i},plain,{}\n", i * 2));
    }
    text.push_str("200,\"");
    for i in 0..12_000 {
        text.push_str(&format!("{i},inside,abc\n"));
    }
    // The closing quote well before the next cut (16 KiB parts, 4 KiB
    // looked at before each cut): that cut's state is guessed too.
    while !(2048..8192).contains(&(text.len() % (16 << 10))) {
        text.push_str("0,inside,abc\n");
    }
    text.push_str("\",400\n");
    for i in 201..20_000 {
        text.push_str(&format!("{i},after,{}\n", i * 2));
    }
    std::fs::write(&path, &text).unwrap();
    // Named by the reader's header row, and by the first record (as
    // `read_arrow` names them): a part read again from inside the first
    // part does not take its first record for the names.
    for (d, header_row) in [(Dialect::default(), false), (dialect(false, false), true)] {
        let mut b = fastcsv::ReaderBuilder::new();
        b.dialect(d);
        let rows_of_one = {
            let rdr = b.from_path(&path).unwrap();
            let mut c = Columns::with_header_row(rdr, header_row).unwrap();
            rows_of(&all(&mut c).unwrap())
        };
        assert_eq!(rows_of_one.len(), 20_000);
        for threads in [2, 3] {
            let mut par = ParColumns::from_path(&b, &path, header_row, threads, 16 << 10).unwrap();
            assert_eq!(par.names(), ["id", "note", "n"]);
            let mut got = Vec::new();
            while let Some(batch) = par.next_batch().unwrap() {
                got.push(batch);
            }
            assert_eq!(rows_of(&got), rows_of_one, "{threads} threads, {header_row}");
            // Typed: the types of one thread, from every value, not from
            // the sample of a part that began inside the quotes.
            let open = || ParColumns::from_path(&b, &path, header_row, threads, 16 << 10);
            let sp = Default::default();
            let mut t =
                InferredColumns::read_par(open().unwrap(), open, &sp, threads, false).unwrap();
            assert_eq!(t.types(), [DataType::Int64, DataType::Utf8, DataType::Int64]);
            let mut rows = 0;
            while let Some(batch) = t.next_batch().unwrap() {
                rows += batch.rows();
            }
            assert_eq!(rows, 20_000);
        }
    }
}

#[test]
fn whole_column_types_in_parts_are_those_of_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.csv");
    let mut text = String::from("n,x,when\n");
    for i in 0..30_000 {
        text.push_str(&format!("{i},{},2024-01-01\n", i % 3));
    }
    text.push_str("5,0.5,2024-01-01T10:00:00\n");
    std::fs::write(&path, &text).unwrap();
    let b = fastcsv::ReaderBuilder::new();
    let b_ = b.clone();
    let par = ParColumns::from_path(&b, &path, false, 3, 16 << 10).unwrap();
    let mut t = InferredColumns::read(par, &Default::default(), 3, false).unwrap();
    let ts = DataType::Timestamp { nanos: false, utc: false };
    assert_eq!(t.types(), [DataType::Int64, DataType::Float64, ts]);
    let one = Columns::new(b.from_path(&path).unwrap()).unwrap();
    let mut u = InferredColumns::read(one, &Default::default(), 1, false).unwrap();
    assert_eq!(u.types(), t.types());
    let drain = |t: &mut InferredColumns| {
        let mut rows = Vec::new();
        while let Some(b) = t.next_batch().unwrap() {
            for i in 0..b.rows() {
                rows.push(b.columns().iter().map(|c| value(c, i)).collect::<Vec<_>>());
            }
        }
        rows
    };
    let (a, b) = (drain(&mut t), drain(&mut u));
    assert_eq!(a.len(), 30_001);
    assert_eq!(a, b);
    // Read with the candidates, then again whole when a value widens; a
    // column all null in the sample typed at the end; the same rows.
    for (sample, views) in [(100, false), (40_000, true)] {
        let open = || ParColumns::from_path(&b_, &path, false, 3, 16 << 10);
        let sp = Default::default();
        let mut p =
            InferredColumns::read_par_sampling(open().unwrap(), open, &sp, 3, views, sample)
                .unwrap();
        assert_eq!(p.types(), u.types());
        // (With views, the text column as views, every typed one kept.)
        let got = drain(&mut p);
        assert_eq!(got, a);
    }
    let path = dir.path().join("nulls.csv");
    let mut text = String::from("n,sparse,s\n");
    for i in 0..30_000 {
        text.push_str(&format!("{i},{},x\n", if i > 20_000 && i % 3 == 0 { "2.5" } else { "" }));
    }
    text.push_str("1,2,3,4\n");
    std::fs::write(&path, &text).unwrap();
    for views in [false, true] {
        let open = || ParColumns::from_path(&b_, &path, false, 3, 16 << 10);
        let mut p = InferredColumns::read_par_sampling(
            open().unwrap(),
            open,
            &Default::default(),
            3,
            views,
            1000,
        )
        .unwrap();
        assert_eq!(p.types(), [DataType::Int64, DataType::Float64, DataType::Utf8]);
        let mut rows = 0;
        let err = loop {
            match p.next_batch() {
                Ok(Some(b)) => {
                    for i in 0..b.rows() {
                        let row: Vec<V> = b.columns().iter().map(|c| value(c, i)).collect();
                        let sparse = if rows > 20_000 && rows % 3 == 0 {
                            V::F(2.5f64.to_bits())
                        } else {
                            V::Null
                        };
                        assert_eq!(row, [V::I(rows as i64), sparse, V::S("x".into())]);
                        rows += 1;
                    }
                    assert_eq!(matches!(b.column(2), Column::Utf8View(_)), views);
                }
                Ok(None) => panic!("no error"),
                Err(e) => break e,
            }
        };
        assert_eq!((rows, err.position().unwrap().record), (30_000, 30_001), "{err}");
    }
}

#[test]
fn named_types_through_the_c_stream() {
    let data = b"i,d,dec,ts,t,u\n-1,x,1.25,2024-01-01T00:00:00.5Z,10:00:00.25,0xFF\n7,y,-3,,,7\n0x7F,x,,2024-01-01T00:00:01Z,00:00,\n";
    let mut cols = Columns::new(Reader::from_slice(data)).unwrap();
    let name = |n: &str| DataType::from_name(n).unwrap();
    let types = vec![
        name("int8"),
        name("dictionary<values=string, indices=int32>"),
        name("decimal128(10, 2)"),
        name("timestamp[ms, tz=Europe/Paris]"),
        name("time32[ms]"),
        name("uint8"),
    ];
    cols.set_types(types).unwrap();
    let mut stream = ffi::export_stream(Src(cols));
    // SAFETY: as in `through_stream`; the dictionary arrays and schemas
    // live as long as their parents, released once below.
    unsafe {
        let mut schema = ffi::ArrowSchema::empty();
        assert_eq!((stream.get_schema.unwrap())(&mut stream, &mut schema), 0);
        let child = |k: usize| &**schema.children.add(k);
        let formats: Vec<&str> =
            (0..6).map(|k| CStr::from_ptr(child(k).format).to_str().unwrap()).collect();
        assert_eq!(formats, ["c", "i", "d:10,2", "tsm:Europe/Paris", "ttm", "C"]);
        let dict = &*child(1).dictionary;
        assert_eq!(CStr::from_ptr(dict.format).to_str(), Ok("u"));
        assert!(child(0).dictionary.is_null());
        (schema.release.unwrap())(&mut schema);
        let mut a = ffi::ArrowArray::empty();
        assert_eq!((stream.get_next.unwrap())(&mut stream, &mut a), 0);
        assert_eq!(a.length, 3);
        let child = |k: usize| &**a.children.add(k);
        let vals = |k: usize| std::slice::from_raw_parts(child(k).buffers, 2)[1];
        assert_eq!(std::slice::from_raw_parts(vals(0).cast::<i8>(), 3), [-1, 7, 127]);
        assert_eq!(std::slice::from_raw_parts(vals(1).cast::<i32>(), 3), [0, 1, 0]);
        let d = &*child(1).dictionary;
        assert_eq!(d.length, 2);
        let offs = std::slice::from_raw_parts(*d.buffers.add(1) as *const i32, 3);
        let text = std::slice::from_raw_parts(*d.buffers.add(2) as *const u8, 2);
        assert_eq!((offs, text), (&[0, 1, 2][..], &b"xy"[..]));
        assert_eq!(std::slice::from_raw_parts(vals(2).cast::<i128>(), 2), [125, -300]);
        assert_eq!(child(2).null_count, 1);
        assert_eq!(*vals(3).cast::<i64>(), 1_704_067_200_500);
        assert_eq!(std::slice::from_raw_parts(vals(4).cast::<i32>(), 3), [36_000_250, 0, 0]);
        assert_eq!(std::slice::from_raw_parts(vals(5).cast::<u8>(), 2), [255, 7]);
        (a.release.unwrap())(&mut a);
        (stream.release.unwrap())(&mut stream);
    }
    // A value out of its type's range is an error at its record.
    let mut cols = Columns::new(Reader::from_slice(b"n\n1\n300\n")).unwrap();
    cols.set_types(vec![DataType::Int8]).unwrap();
    assert_eq!(cols.next_batch().unwrap().unwrap().rows(), 1);
    let e = cols.next_batch().unwrap_err();
    assert_eq!(e.to_string(), "line 3: record 2, byte 4: field 0 is not a valid int8: \"300\"");
}

#[test]
fn typed_columns_through_the_c_stream() {
    let data = b"i,f,b,s\n1,1.5,true,x\n,NaN,,\n-3,2,0,z\n";
    let mut cols = Columns::new(Reader::from_slice(data)).unwrap();
    let types = [DataType::Int64, DataType::Float64, DataType::Boolean, DataType::Utf8];
    assert_eq!(cols.infer_types(10).unwrap(), types);
    let mut stream = ffi::export_stream(Src(cols));
    // SAFETY: as in `through_stream`.
    unsafe {
        let mut schema = ffi::ArrowSchema::empty();
        assert_eq!((stream.get_schema.unwrap())(&mut stream, &mut schema), 0);
        let formats: Vec<&str> = (0..4)
            .map(|k| CStr::from_ptr((**schema.children.add(k)).format).to_str().unwrap())
            .collect();
        assert_eq!(formats, ["l", "g", "b", "u"]);
        (schema.release.unwrap())(&mut schema);
        let mut a = ffi::ArrowArray::empty();
        assert_eq!((stream.get_next.unwrap())(&mut stream, &mut a), 0);
        assert_eq!(a.length, 3);
        let child = |k: usize| &**a.children.add(k);
        let (i, f, b, s) = (child(0), child(1), child(2), child(3));
        assert_eq!((i.n_buffers, i.null_count, f.null_count, b.null_count), (2, 1, 1, 1));
        let bufs = std::slice::from_raw_parts(i.buffers, 2);
        assert_eq!(*bufs[0].cast::<u8>(), 0b101);
        assert_eq!(std::slice::from_raw_parts(bufs[1].cast::<i64>(), 3), [1, 0, -3]);
        let fb = std::slice::from_raw_parts(f.buffers, 2);
        assert_eq!(std::slice::from_raw_parts(fb[1].cast::<f64>(), 3), [1.5, 0.0, 2.0]);
        let bb = std::slice::from_raw_parts(b.buffers, 2);
        assert_eq!((*bb[0].cast::<u8>(), *bb[1].cast::<u8>()), (0b101, 0b001));
        assert_eq!((s.n_buffers, s.null_count), (3, 0));
        (a.release.unwrap())(&mut a);
        let mut end = ffi::ArrowArray::empty();
        assert_eq!((stream.get_next.unwrap())(&mut stream, &mut end), 0);
        assert!(end.release.is_none());
        (stream.release.unwrap())(&mut stream);
    }
}

#[test]
fn typed_columns_in_parts_are_those_of_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typed.csv");
    let mut text = String::from("n,x,flag,name\n");
    for i in 0..20_000 {
        let x = if i % 7 == 0 { String::new() } else { format!("{}.25", i) };
        text.push_str(&format!("{i},{x},{},\"n{i}, \"\"q\"\"\"\n", i % 2 == 0));
    }
    text.push_str("oops,1,true,z\n");
    std::fs::write(&path, &text).unwrap();
    let b = fastcsv::ReaderBuilder::new();
    let mut one = Columns::new(b.from_path(&path).unwrap()).unwrap();
    let types = one.infer_types(1000).unwrap();
    assert_eq!(types, [DataType::Int64, DataType::Float64, DataType::Boolean, DataType::Utf8]);
    let mut par = ParColumns::from_path(&b, &path, false, 3, 16 << 10).unwrap();
    assert_eq!(par.infer_types(1000).unwrap(), types);
    par.batch_rows(1000);
    one.batch_rows(1000);
    let drain = |next: &mut dyn FnMut() -> fastcsv::Result<Option<ColumnBatch>>| {
        let mut rows = Vec::new();
        loop {
            match next() {
                Ok(Some(b)) => {
                    for i in 0..b.rows() {
                        rows.push(b.columns().iter().map(|c| value(c, i)).collect::<Vec<_>>());
                    }
                }
                Ok(None) => return (rows, None),
                Err(e) => return (rows, Some(e.to_string())),
            }
        }
    };
    let (r1, e1) = drain(&mut || one.next_batch());
    let (r2, e2) = drain(&mut || par.next_batch());
    assert_eq!(r1.len(), 20_000);
    assert_eq!(r1, r2);
    let e1 = e1.unwrap();
    let at = text.len() - "oops,1,true,z\n".len();
    let want = format!(":20002: record 20001, byte {at}: field 0 is not a valid int64: \"oops\"");
    assert!(e1.ends_with(&want), "{e1}");
    assert_eq!(Some(e1), e2);
}

#[test]
fn types_are_checked_against_the_columns() {
    let mut c = Columns::new(Reader::from_slice(b"a,b\n1,2\n")).unwrap();
    let e = c.set_types(vec![DataType::Int64]).map(|_| ()).unwrap_err();
    assert_eq!(e.to_string(), "1 types given for 2 columns");
}

#[test]
fn text_columns_as_views() {
    let data: &'static [u8] =
        b"a,b\nshort,a value longer than twelve\n\"x,y\",\xc3\xa9\n,\"q\"\"q\"\n";
    let strings = |views: bool| {
        let mut c = Columns::new(Reader::from_slice(data)).unwrap();
        c.string_view(views);
        let b = c.next_batch().unwrap().unwrap();
        let get = |col: &Column, i| match col {
            Column::Utf8(c) => c.get(i).to_owned(),
            Column::Utf8View(c) => c.get(i).to_owned(),
            other => panic!("{other:?}"),
        };
        assert_eq!(matches!(b.column(0), Column::Utf8View(_)), views);
        (0..b.rows()).map(|i| (get(b.column(0), i), get(b.column(1), i))).collect::<Vec<_>>()
    };
    assert_eq!(strings(true), strings(false));
    assert_eq!(strings(true)[0].1, "a value longer than twelve");
    // Through the C stream, as views and, from a source of views, as utf8.
    for (views, layout) in
        [(true, ffi::Strings::View), (true, ffi::Strings::Utf8), (false, ffi::Strings::View)]
    {
        let mut c = Columns::new(Reader::from_slice(data)).unwrap();
        c.string_view(views);
        let mut stream = ffi::export_stream_as(Src(c), layout);
        // SAFETY: as in `through_stream`.
        unsafe {
            let mut schema = ffi::ArrowSchema::empty();
            assert_eq!((stream.get_schema.unwrap())(&mut stream, &mut schema), 0);
            let format = CStr::from_ptr((**schema.children).format).to_str().unwrap().to_owned();
            (schema.release.unwrap())(&mut schema);
            let mut a = ffi::ArrowArray::empty();
            assert_eq!((stream.get_next.unwrap())(&mut stream, &mut a), 0);
            let col = &**a.children.add(1);
            let n = col.length as usize;
            let mut got = Vec::new();
            if layout == ffi::Strings::View {
                assert_eq!((format.as_str(), col.n_buffers), ("vu", 4));
                let bufs = std::slice::from_raw_parts(col.buffers, 4);
                let views = std::slice::from_raw_parts(bufs[1].cast::<[u8; 16]>(), n);
                let size = *bufs[3].cast::<i64>() as usize;
                let bytes = std::slice::from_raw_parts(bufs[2].cast::<u8>(), size);
                for v in views {
                    let len = u32::from_ne_bytes(v[..4].try_into().unwrap()) as usize;
                    let at = u32::from_ne_bytes(v[12..].try_into().unwrap()) as usize;
                    let s = if len <= 12 { &v[4..4 + len] } else { &bytes[at..at + len] };
                    got.push(std::str::from_utf8(s).unwrap().to_owned());
                }
            } else {
                assert_eq!((format.as_str(), col.n_buffers), ("u", 3));
                let bufs = std::slice::from_raw_parts(col.buffers, 3);
                let offs = std::slice::from_raw_parts(bufs[1].cast::<i32>(), n + 1);
                let bytes = std::slice::from_raw_parts(bufs[2].cast::<u8>(), offs[n] as usize);
                for i in 0..n {
                    let s = &bytes[offs[i] as usize..offs[i + 1] as usize];
                    got.push(std::str::from_utf8(s).unwrap().to_owned());
                }
            }
            assert_eq!(got, ["a value longer than twelve", "é", "q\"q"]);
            (a.release.unwrap())(&mut a);
            (stream.release.unwrap())(&mut stream);
        }
    }
}

/// Null spellings in text columns, with `strings_can_be_null`: in both
/// layouts, carried from one to the other, and exported as the validity
/// bitmap of the C stream.
#[test]
fn text_columns_with_nulls() {
    let data: &'static [u8] = b"a,b\nx,1\n,2\nNA,3\n\"\",4\n";
    let sp = fastcsv::arrow::Spellings::default().strings_can_be_null(true);
    for views in [false, true] {
        let mut c = Columns::new(Reader::from_slice(data)).unwrap();
        c.string_view(views).set_spellings(sp.clone());
        c.set_types(vec![DataType::Utf8, DataType::Int64]).unwrap();
        let b = c.next_batch().unwrap().unwrap();
        let nulls: Vec<bool> = match b.column(0) {
            Column::Utf8(c) => (0..4).map(|i| c.is_null(i)).collect(),
            Column::Utf8View(c) => (0..4).map(|i| c.is_null(i)).collect(),
            other => panic!("{other:?}"),
        };
        assert_eq!(nulls, [false, true, true, true]);
        assert_eq!((b.column(0).null_count(), b.column(1).null_count()), (3, 0));
        for layout in [ffi::Strings::Utf8, ffi::Strings::View] {
            let mut c = Columns::new(Reader::from_slice(data)).unwrap();
            c.string_view(views).set_spellings(sp.clone());
            let mut stream = ffi::export_stream_as(Src(c), layout);
            // SAFETY: as in `through_stream`; the validity bitmap holds a
            // bit per value, here 4.
            unsafe {
                let mut a = ffi::ArrowArray::empty();
                assert_eq!((stream.get_next.unwrap())(&mut stream, &mut a), 0);
                let col = &**a.children;
                assert_eq!((col.length, col.null_count), (4, 3));
                let bits = *(*col.buffers).cast::<u8>();
                assert_eq!(bits & 0x0F, 0b0001);
                let other = &**a.children.add(1);
                assert_eq!((other.null_count, (*other.buffers).is_null()), (0, true));
                (a.release.unwrap())(&mut a);
                (stream.release.unwrap())(&mut stream);
            }
        }
    }
    // Off by default: every value's text.
    let mut c = Columns::new(Reader::from_slice(data)).unwrap();
    let b = c.next_batch().unwrap().unwrap();
    assert_eq!((b.column(0).null_count(), b.strings(0).validity()), (0, None));
}

#[test]
fn sampled_types_in_parts_are_those_of_one_thread() {
    // The sample's columns are looked at on several threads: the types
    // are those of one thread's look, over batches and up to the row
    // asked for.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sample.csv");
    let mut text = String::from("a,b,c,d,e,f\n");
    for i in 0..20_000 {
        let a = if i == 4_500 { "2.5".to_string() } else { i.to_string() };
        let b = if i == 6_000 { "x" } else { "7" };
        let c = ["true", "False"][i % 2];
        let d = if i == 100 { "2024-01-01T10:00:00" } else { "2024-01-02" };
        let e = if i == 4_999 { "1.5" } else { "" };
        let f = if i == 5_000 { "y" } else { "1" };
        text.push_str(&format!("{a},{b},{c},{d},{e},{f}\n"));
    }
    std::fs::write(&path, &text).unwrap();
    let b = fastcsv::ReaderBuilder::new();
    let ts = DataType::Timestamp { nanos: false, utc: false };
    use DataType::*;
    let want = [Float64, Int64, Boolean, ts, Utf8, Int64];
    for threads in [1, 2, 3] {
        let mut par = ParColumns::from_path(&b, &path, false, threads, 256 << 10).unwrap();
        par.batch_rows(1_000);
        assert_eq!(par.infer_types(4_600).unwrap(), want, "{threads} threads");
        let mut one = Columns::new(b.from_path(&path).unwrap()).unwrap();
        one.batch_rows(1_000);
        assert_eq!(one.infer_types(4_600).unwrap(), want);
        // Read with them, the first value that does not fit is an error.
        let err = loop {
            match par.next_batch() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("no error"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.position().map(|p| p.record), Some(5_001), "{err}");
    }
}

#[test]
fn parts_of_a_file_with_quotes_far_before_the_cuts_are_the_columns() {
    // The ranges before the cuts are searched for quotes a block at a
    // time, from their end: a quote one or several blocks back from a
    // cut, or one in the block right before it, and quoted fields (with
    // line ends in them) that span a cut, give the rows of one thread.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quotes.csv");
    let mut text = String::from("n,note\n");
    let mut i = 0;
    while text.len() < 5 << 20 {
        let note = match i % 9_000 {
            17 => "\"a \"\"quoted\"\" note,\nover two lines\"".to_string(),
            4_000 => format!("\"{}\"", "long,\nquoted\n".repeat(2_000)),
            _ => "plain".to_string(),
        };
        text.push_str(&format!("{i},{note}\n"));
        i += 1;
    }
    std::fs::write(&path, &text).unwrap();
    for part in [1 << 20, 700 << 10, 3 << 20] {
        let (one, many) = one_and_many(&path, &Dialect::default(), false, 3, part, 4_096);
        let one = one.unwrap();
        assert_eq!(one.1.len(), i);
        assert_eq!(Ok(one), many, "parts of {part} bytes");
    }
}

/// Every batch's rows of `t`, then its error (if any) as text.
fn drain_all(t: &mut InferredColumns) -> (Vec<Vec<V>>, Option<String>) {
    let mut rows = Vec::new();
    loop {
        match t.next_batch() {
            Ok(Some(b)) => {
                for i in 0..b.rows() {
                    rows.push(b.columns().iter().map(|c| value(c, i)).collect());
                }
            }
            Ok(None) => return (rows, None),
            Err(e) => return (rows, Some(e.to_string())),
        }
    }
}

/// Columns whose type changes late (a float, an int past `i64::MAX`, a
/// `2` among booleans, a zone, a fraction, whitespace, `-0`, hex, `inf`,
/// `+5`, `007`, dates after 20,000 nulls), with cuts everywhere (parts of
/// 4 KiB down to 300 bytes), on 1 to 4 threads, sampled or not: the types,
/// rows and error of one sequential read of the whole file.
#[test]
fn late_changes_cut_anywhere_are_those_of_one_sequential_read() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 24_000;
    // (name, the value of row i, the late value)
    type Late = (&'static str, fn(usize) -> String, &'static str);
    let late: [Late; 12] = [
        ("int_float", |i| i.to_string(), "1.5"),
        ("int_big", |i| i.to_string(), "9223372036854775808"),
        ("bool_two", |i| ["true", "False"][i % 2].into(), "2"),
        ("zone", |_| "2024-01-01T10:00:00".into(), "2024-01-01T10:00:00Z"),
        ("frac", |_| "2024-01-01T10:00:00Z".into(), "2024-01-01T10:00:00.123Z"),
        ("space", |i| i.to_string(), "  "),
        ("neg_zero", |i| format!("{i}.5"), "-0"),
        ("hex", |i| i.to_string(), "0x1F"),
        ("inf", |i| format!("{i}.5"), "-Infinity"),
        ("plus", |i| i.to_string(), "+5"),
        ("zeros", |i| i.to_string(), "007"),
        ("dates", |i| if i < 20_000 { String::new() } else { "2024-02-29".into() }, "NA"),
    ];
    let ts_ns_utc = DataType::Timestamp { nanos: true, utc: true };
    let (i, f, s) = (DataType::Int64, DataType::Float64, DataType::Utf8);
    let types = [f, f, s, s, ts_ns_utc, s, f, i, f, f, i, DataType::Date32];
    for at in [5_000, rows - 1] {
        for bad in [None, Some(rows - 3)] {
            let path = dir.path().join(format!("late{at}.csv"));
            let names: Vec<&str> = late.iter().map(|c| c.0).collect();
            let mut text = names.join(",") + "\n";
            for i in 0..rows {
                let row: Vec<String> =
                    late.iter().map(|c| if i == at { c.2.into() } else { (c.1)(i) }).collect();
                text += &row.join(",");
                // A short row is padded; a long one is an error.
                text += if Some(i) == bad { ",x\n" } else { "\n" };
            }
            std::fs::write(&path, &text).unwrap();
            let b = fastcsv::ReaderBuilder::new();
            let one = Columns::new(b.from_path(&path).unwrap()).unwrap();
            let mut want = InferredColumns::read(one, &Default::default(), 1, false).unwrap();
            let want_types = want.types();
            if bad.is_none() {
                assert_eq!(want_types, types);
            }
            let want = drain_all(&mut want);
            assert_eq!(want.1.is_some(), bad.is_some(), "{:?}", want.1);
            for part in [4096, 300] {
                for threads in [1, 3] {
                    for sample in [100, 1 << 16] {
                        let open = || ParColumns::from_path(&b, &path, false, threads, part);
                        let sp = Default::default();
                        let what = format!("at {at}, bad {bad:?}, part {part}, {threads} threads");
                        let mut t = InferredColumns::read_par_sampling(
                            open().unwrap(),
                            open,
                            &sp,
                            threads,
                            false,
                            sample,
                        )
                        .unwrap();
                        assert_eq!(t.types(), want_types, "{what}");
                        let got = drain_all(&mut t);
                        assert_eq!(got.1, want.1, "{what}");
                        assert!(got.0 == want.0, "{what}: rows differ");
                    }
                }
            }
        }
    }
}

/// The sample that proposes the types of a read on several threads is
/// taken from the start of each of the first parts at once: a later
/// part whose first rows widen a column, or fail (longer rows from the
/// middle of the file on), gives the types, rows and error of one
/// sequential read.
#[test]
fn a_sample_from_several_parts_gives_the_types_and_error_of_one_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spread.csv");
    let rows = 20_000;
    for long_from in [None, Some(rows / 2), Some(rows / 3)] {
        let mut text = String::from("n,x,s\n");
        for i in 0..rows {
            // Floats from the middle on; longer rows from `long_from` on.
            let x = if i < rows / 2 { i.to_string() } else { format!("{i}.5") };
            let extra = if long_from.is_some_and(|l| i >= l) { ",more" } else { "" };
            text += &format!("{i},{x},s{i}{extra}\n");
        }
        std::fs::write(&path, &text).unwrap();
        let b = fastcsv::ReaderBuilder::new();
        let one = Columns::new(b.from_path(&path).unwrap()).unwrap();
        let mut want = InferredColumns::read(one, &Default::default(), 1, false).unwrap();
        let want_types = want.types();
        let want = drain_all(&mut want);
        assert_eq!(want.0.len(), long_from.unwrap_or(rows));
        assert_eq!(want.1.is_some(), long_from.is_some());
        for threads in [2, 3, 4] {
            let open = || ParColumns::from_path(&b, &path, false, threads, 64 << 10);
            let sp = Default::default();
            for sample in [1_000, 1 << 16] {
                let mut t = InferredColumns::read_par_sampling(
                    open().unwrap(),
                    open,
                    &sp,
                    threads,
                    false,
                    sample,
                )
                .unwrap();
                let what = format!("long from {long_from:?}, {threads} threads, sample {sample}");
                assert_eq!(t.types(), want_types, "{what}");
                let got = drain_all(&mut t);
                assert_eq!(got.1, want.1, "{what}");
                assert!(got.0 == want.0, "{what}: rows differ");
            }
        }
    }
}

/// Columns named by the caller (pandas' `names=`), in parts cut
/// anywhere: the names, rows and error of `Columns::with_names` over one
/// reader, whatever the first record's width (shorter than the names,
/// every later row held to the names').
#[test]
fn named_columns_in_parts_are_those_of_one_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("named.csv");
    // Flexible, as the Python binding reads: the names fix the width.
    let d = Dialect::builder().headers(false).flexible(true).build().unwrap();
    let mut b = fastcsv::ReaderBuilder::new();
    b.dialect(d);
    let names: Vec<String> = ["n", "x", "note"].iter().map(|s| s.to_string()).collect();
    for long_at in [None, Some(3_000)] {
        let mut text = String::from("0,first\n");
        for i in 1..4_000 {
            let extra = if Some(i) == long_at { ",4th" } else { "" };
            text += &format!("{i},{},n {i}{extra}\n", i * 2);
        }
        std::fs::write(&path, &text).unwrap();
        let one = Columns::with_names(b.from_path(&path).unwrap(), names.clone()).unwrap();
        let mut want = InferredColumns::read(one, &Default::default(), 1, false).unwrap();
        let want_types = want.types();
        let want = drain_all(&mut want);
        assert_eq!(want.0.len(), long_at.unwrap_or(4_000), "{:?}", want.1);
        assert_eq!(want.1.is_some(), long_at.is_some());
        for part in [4096, 300] {
            let open = || ParColumns::from_path_named(&b, &path, names.clone(), 3, part);
            let cols = open().unwrap();
            assert_eq!(cols.names(), names);
            let sp = Default::default();
            let mut t = InferredColumns::read_par(cols, open, &sp, 3, false).unwrap();
            assert_eq!(t.types(), want_types);
            let got = drain_all(&mut t);
            assert_eq!(got.1, want.1, "part {part}");
            assert!(got.0 == want.0, "part {part}: rows differ");
        }
    }
}

/// Types of the first `rows` rows in parts: the first `rows` rows of the
/// file, however many parts they span (not only the first part's).
#[test]
fn sampled_types_span_as_many_parts_as_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sampled.csv");
    let mut text = String::from("sparse,flag\n");
    for i in 0..5_000 {
        // Nulls, then ints, in the sparse column; booleans then a word.
        let sparse = if i < 3_000 { String::new() } else { (i % 7).to_string() };
        let flag = if i < 4_000 { ["true", "false"][i % 2] } else { "yes" };
        text += &format!("{sparse},{flag}\n");
    }
    std::fs::write(&path, &text).unwrap();
    let b = fastcsv::ReaderBuilder::new();
    for rows in [10, 3_500, 100_000] {
        let mut one = Columns::new(b.from_path(&path).unwrap()).unwrap();
        let want = one.infer_types(rows).unwrap();
        for part in [4096, 300] {
            let mut par = ParColumns::from_path(&b, &path, false, 2, part).unwrap();
            assert_eq!(par.infer_types(rows).unwrap(), want, "{rows} rows, parts of {part}");
        }
    }
}

#[test]
fn a_longer_row_says_what_fixed_the_number_of_columns() {
    // The message names the header row, the caller's names or the first
    // record, never "the previous record", with its line, record and byte.
    let msg = |cols: fastcsv::Result<Columns<'_>>| all(&mut cols.unwrap()).unwrap_err().to_string();
    let data = b"a,b\n1,2\n3,4,5\n";
    let rdr = Reader::builder().dialect(dialect(true, true)).path("in.csv").from_slice(data);
    assert_eq!(
        msg(Columns::new(rdr)),
        "in.csv:3: record 2, byte 8: found record with 3 fields, but the header row has 2 fields"
    );
    let rdr = Reader::builder().dialect(dialect(false, true)).from_slice(data);
    assert_eq!(
        msg(Columns::with_header_row(rdr, true)),
        "line 3: record 2, byte 8: found record with 3 fields, but the header row has 2 fields"
    );
    let rdr = Reader::builder().dialect(dialect(false, true)).from_slice(data);
    assert_eq!(
        msg(Columns::new(rdr)),
        "line 3: record 2, byte 8: found record with 3 fields, but the first record has 2 fields"
    );
    // With names, the first rows are read as the columns are made: a
    // longer first row is an error there (as a header row's is), a later
    // one from the batches, after the rows before it.
    let rdr = Reader::builder().dialect(dialect(false, true)).from_slice(b"1,2,3\n");
    let names = || vec!["x".to_string(), "y".to_string()];
    assert_eq!(
        Columns::with_names(rdr, names()).err().map(|e| e.to_string()).as_deref(),
        Some("line 1: record 0, byte 0: found record with 3 fields, but 2 column names were given")
    );
    let rdr = Reader::builder().dialect(dialect(false, true)).from_slice(b"1,2\n3,4,5\n");
    assert_eq!(
        msg(Columns::with_names(rdr, names())),
        "line 2: record 1, byte 4: found record with 3 fields, but 2 column names were given"
    );
    let rdr = Reader::builder().dialect(dialect(false, true)).from_slice(b"\n1,2,3\n");
    let e = Columns::with_names_from(rdr, names(), ColumnsFrom::Header).err().unwrap();
    assert_eq!(
        e.to_string(),
        "line 2: record 1, byte 1: found record with 3 fields, but the header row has 2 fields"
    );
    // On threads, a later part's names are still the header row's.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.csv");
    let mut text = String::from("a,b\n");
    for i in 0..2000 {
        text.push_str(&format!("{i},{i}\n"));
    }
    text.push_str("x,y,z\n");
    std::fs::write(&path, &text).unwrap();
    let mut b = Reader::builder();
    b.dialect(dialect(false, true));
    let mut c = ParColumns::from_path(&b, &path, true, 3, 1024).unwrap();
    let err = loop {
        match c.next_batch() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        err.ends_with(
            "record 2001, byte 17784: found record with 3 fields, but the header row has 2 fields"
        ),
        "{err}"
    );
    assert!(err.starts_with(&format!("{}:2002: ", path.display())), "{err}");
}

/// Makes an error for [`Fails`].
type MakeError = fn() -> fastcsv::Error;

/// A stream source whose first batch is the error `make()` gives.
struct Fails(MakeError);
impl ffi::BatchSource for Fails {
    fn names(&self) -> &[String] {
        &[]
    }
    fn types(&self) -> Vec<DataType> {
        Vec::new()
    }
    fn next_batch(&mut self) -> fastcsv::Result<Option<ColumnBatch>> {
        Err((self.0)())
    }
}

#[test]
fn a_stream_error_has_its_whole_message_and_the_code_of_its_kind() {
    // EINVAL for the data (pyarrow: ArrowInvalid), EIO for the input
    // (pyarrow: OSError); get_last_error says the whole error.
    let cases: [(MakeError, i32, &str); 3] = [
        (
            || {
                let kind = ErrorKind::LongRow { columns: 2, found: 3, from: ColumnsFrom::Names };
                let pos = fastcsv::Position { byte: 8, line: 3, record: 2 };
                fastcsv::Error::new(kind).with_position(pos).with_path("in.csv")
            },
            22,
            "in.csv:3: record 2, byte 8: found record with 3 fields, but 2 column names were given",
        ),
        (
            || {
                let pos = fastcsv::Position { byte: 8, line: 3, record: 2 };
                fastcsv::Error::new(ErrorKind::FileChanged).with_position(pos).with_path("in.csv")
            },
            5,
            "in.csv:3: record 2, byte 8: file changed while reading",
        ),
        (|| std::io::Error::other("disk on fire").into(), 5, "disk on fire"),
    ];
    for (make, code, msg) in cases {
        let mut stream = ffi::export_stream(Fails(make));
        // SAFETY: the stream is used as the interface says, then released
        // once; no array is written on an error.
        unsafe {
            let mut a = ffi::ArrowArray::empty();
            assert_eq!((stream.get_next.unwrap())(&mut stream, &mut a), code, "{msg}");
            let got = CStr::from_ptr((stream.get_last_error.unwrap())(&mut stream));
            assert_eq!(got.to_str().unwrap(), msg);
            (stream.release.unwrap())(&mut stream);
        }
    }
}

/// Rows of many columns sample fewer rows by default
/// (`default_sample_rows`): a column that widens after the sample but
/// within what 65,536 rows would have seen still gets the type of all its
/// values, on one thread and on several, as the whole-text read gives it.
#[test]
fn a_wide_file_types_a_column_that_widens_after_its_smaller_sample() {
    use fastcsv::arrow::default_sample_rows;
    let (width, rows) = (300, 6_000);
    assert!(default_sample_rows(width) < rows && rows < 65_536);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.csv");
    let names: Vec<String> = (0..width).map(|j| format!("c{j}")).collect();
    let mut text = names.join(",") + "\n";
    for i in 0..rows {
        let row: Vec<String> = (0..width)
            .map(|j| match j {
                // An int column that turns float, one that turns text,
                // and one null until then.
                5 if i == rows - 10 => "2.5".to_string(),
                6 if i == rows - 1 => "x".to_string(),
                7 if i < rows - 100 => String::new(),
                _ => (i * j % 1000).to_string(),
            })
            .collect();
        text += &(row.join(",") + "\n");
    }
    std::fs::write(&path, &text).unwrap();
    let b = fastcsv::ReaderBuilder::new();
    let one = Columns::new(b.from_path(&path).unwrap()).unwrap();
    let mut want = InferredColumns::read(one, &Default::default(), 1, false).unwrap();
    let types = want.types();
    assert_eq!(types[5], DataType::Float64);
    assert_eq!(types[6], DataType::Utf8);
    assert_eq!(types[7], DataType::Int64);
    assert!(types.iter().enumerate().all(|(j, t)| j == 5 || j == 6 || *t == DataType::Int64));
    let want = drain_all(&mut want);
    assert_eq!(want.0.len(), rows);
    let sp = Default::default();
    let open = || Columns::new(b.from_path(&path).unwrap());
    let mut again = InferredColumns::read_again(open().unwrap(), open, &sp, 1, false).unwrap();
    assert_eq!(again.types(), types);
    assert!(drain_all(&mut again).0 == want.0, "read_again: rows differ");
    for threads in [2, 3] {
        let open = || ParColumns::from_path(&b, &path, false, threads, 1 << 16);
        let mut t = InferredColumns::read_par(open().unwrap(), open, &sp, threads, false).unwrap();
        assert_eq!(t.types(), types, "{threads} threads");
        assert!(drain_all(&mut t).0 == want.0, "{threads} threads: rows differ");
    }
}

/// A file cut short after a parallel typed read split it (its bounds
/// guessed) is an error, not the rows of the shorter file: the parts past
/// the new end are not taken for wrong guesses to place again, and the
/// read is not started over on what is left.
#[test]
fn a_file_cut_short_during_a_parallel_typed_read_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.csv");
    let mut text = String::from("n,x,s\n");
    for i in 0..60_000 {
        text.push_str(&format!("{i},{}.5,s{}\n", i * 3, i % 7));
    }
    let b = fastcsv::ReaderBuilder::new();
    for sample in [100, 1 << 16] {
        std::fs::write(&path, &text).unwrap();
        let open = || ParColumns::from_path(&b, &path, false, 2, 64 << 10);
        let first = open().unwrap();
        // Cut after the split, before any part is read.
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(text.len() as u64 / 2).unwrap();
        drop(f);
        let sp = Default::default();
        let got = InferredColumns::read_par_sampling(first, open, &sp, 2, false, sample);
        let mut t = match got {
            Err(e) => {
                assert!(matches!(e.kind(), ErrorKind::FileChanged), "{e}");
                continue;
            }
            Ok(t) => t,
        };
        let err = loop {
            match t.next_batch() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("sample {sample}: the rows of the shorter file, no error"),
                Err(e) => break e,
            }
        };
        assert!(matches!(err.kind(), ErrorKind::FileChanged), "{err}");
    }
}
