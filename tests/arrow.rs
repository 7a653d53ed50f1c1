//! Columnar output (`fastcsv::arrow`): the columns against the rows of
//! `read_row` (the oracle), errors at their records, and the Arrow C stream
//! walked as a consumer would.

mod common;

use std::ffi::CStr;

use common::cases;

use fastcsv::arrow::{ffi, ColumnBatch, Columns, ParColumns};
use fastcsv::{Dialect, ErrorKind, Reader};
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
            rows.push(b.columns().iter().map(|c| c.get(i).to_owned()).collect());
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
            Err(_) => return Some((names.unwrap_or_default(), rows, true)),
        };
        if r.is_empty() {
            continue;
        }
        let row: Option<Vec<String>> = r.iter().map(utf8).collect();
        let w = names.get_or_insert_with(|| (0..r.len()).map(|i| i.to_string()).collect()).len();
        let Some(mut row) = row.filter(|row| row.len() <= w) else {
            return Some((names.unwrap_or_default(), rows, true));
        };
        row.resize(w, String::new());
        rows.push(row);
    }
    Some((names.unwrap_or_default(), rows, false))
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
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv");
        std::fs::write(&path, &data).unwrap();
        let (one, many) = one_and_many(&path, &d, header_row, threads, part, rows);
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
fn a_longer_row_of_a_flexible_dialect_is_an_error_and_a_shorter_is_padded() {
    let rdr = Reader::builder().dialect(dialect(true, true)).from_slice(b"a,b\n1\n2,3\n4,5,6\n");
    let mut cols = Columns::new(rdr).unwrap();
    let err = all(&mut cols).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::RaggedRow { expected: 2, found: 3 }), "{err}");
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
fn through_stream(
    data: &'static [u8],
    rows: usize,
) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    struct Src(Columns<'static>);
    // SAFETY: a reader of a `'static` slice holds no thread or stream.
    unsafe impl Send for Src {}
    impl ffi::BatchSource for Src {
        fn names(&self) -> &[String] {
            self.0.names()
        }
        fn next_batch(&mut self) -> fastcsv::Result<Option<ColumnBatch>> {
            self.0.next_batch()
        }
    }
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
