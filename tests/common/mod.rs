//! Shared harness: push one input through every engine and every source.
#![allow(dead_code)]

use fastcsv::scan::reference::{self, RefOutput, RefRow};
use fastcsv::{Dialect, Reader, SourceChoice};

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
