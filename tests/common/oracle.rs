//! The every-engine oracle: one input through every way the crate reads
//! records, each compared with the reference engine
//! (`fastcsv::scan::reference`, a byte-at-a-time transcription of
//! CPython's reader).
//!
//! Shared by the integration and property tests (through `common`) and by
//! the fuzz target (`fuzz/fuzz_targets/parse.rs`, through `#[path]`), so it
//! depends on `std` and `fastcsv` only.
//!
//! The engines, each with the block scanner on and off:
//! * `read_row` over a slice, and over the buffered source with buffers of
//!   every size in [`SIZES`] (1 byte upward: records split everywhere);
//! * `read_batch` with `Selection::all()` and `count_rows`, over the slice
//!   and the 1-byte buffer;
//! * a real file: mapped, read, chosen automatically, each with and without
//!   the read-ahead thread, and read ahead with every buffer size.
//!
//! The block scanner runs with the kernel this process chose (the CPU's
//! best, or the one `FASTCSV_SIMD` lowers it to): `scripts/test.sh` runs
//! the tests that use this oracle once more with each lower kernel.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use fastcsv::scan::reference::{self, RefOutput, RefRow};
use fastcsv::{Dialect, Reader, Selection, SourceChoice};

/// Buffer sizes that split records everywhere.
pub const SIZES: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 13, 64, 4096];

/// What a reader produced through `read_row`, in the reference engine's
/// terms: the rows with their lines, and the error that ended the input
/// with `line()` after it.
pub fn via_reader(mut rdr: Reader<'_>) -> RefOutput {
    let mut rows = Vec::new();
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                let fields = row.iter().map(|f| f.to_vec()).collect();
                rows.push(RefRow { fields, line: rdr.line() });
            }
            Ok(None) => return RefOutput { rows, error: None },
            Err(e) => return RefOutput { rows, error: Some((e.message(), rdr.line())) },
        }
    }
}

/// The same through `read_batch` with `Selection::all()` (lines are not
/// reported per record there: each row gets the reference's line, and
/// only the rows' fields and the error are compared).
fn via_batches(mut rdr: Reader<'_>, want: &RefOutput) -> RefOutput {
    let mut sel = Selection::all();
    let mut rows = Vec::new();
    loop {
        match rdr.read_batch(&mut sel) {
            Ok(Some(b)) => {
                for r in b.iter() {
                    let fields: Vec<Vec<u8>> = r.iter().map(<[u8]>::to_vec).collect();
                    let line = want.rows.get(rows.len()).map_or(0, |w| w.line);
                    rows.push(RefRow { fields, line });
                }
            }
            Ok(None) => return RefOutput { rows, error: None },
            Err(e) => return RefOutput { rows, error: Some((e.message(), rdr.line())) },
        }
    }
}

/// `count_rows` checked against the reference: the count, or the error
/// (with `line()` after it) that ends the input.
fn check_count(mut rdr: Reader<'_>, want: &RefOutput, what: &str) {
    match rdr.count_rows() {
        Ok(n) => {
            assert_eq!((n, None), (want.rows.len() as u64, want.error.clone()), "{what}");
        }
        Err(e) => assert_eq!(Some((e.message(), rdr.line())), want.error, "{what} error"),
    }
}

/// A file under the temporary directory holding `data`, removed on drop
/// (`tempfile` is not a dependency of the fuzz crate).
struct TempFile(PathBuf);

impl TempFile {
    fn new(data: &[u8]) -> TempFile {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("fastcsv-oracle-{}-{n}.csv", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, data).expect("writing the oracle's temporary file");
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `input` through every engine (see the module docs), asserts that
/// each gives the reference engine's rows, lines and error, and returns
/// the reference's output.
///
/// `d` must be a scan-level dialect (no header row, flexible, no BOM
/// stripping), as the reference engine reads.
pub fn check_every_engine(d: &Dialect, input: &[u8]) -> RefOutput {
    let want = reference::parse(d, input);
    let text = String::from_utf8_lossy(input);
    for block in [true, false] {
        let mut b = Reader::builder();
        b.dialect(d.clone()).block_scan(block);
        let on = format!("block scan {block}, {d:?}, input {text:?}");
        assert_eq!(via_reader(b.from_slice(input)), want, "slice vs reference ({on})");
        for &n in SIZES {
            let got = via_reader(b.clone().buffer_size(n).from_reader(input));
            assert_eq!(got, want, "buffered({n}) vs reference ({on})");
        }
        let got = via_batches(b.from_slice(input), &want);
        assert_eq!(got, want, "read_batch slice vs reference ({on})");
        let got = via_batches(b.clone().buffer_size(1).from_reader(input), &want);
        assert_eq!(got, want, "read_batch buffered(1) vs reference ({on})");
        check_count(b.from_slice(input), &want, &format!("count_rows slice ({on})"));
        let rdr = b.clone().buffer_size(1).from_reader(input);
        check_count(rdr, &want, &format!("count_rows buffered(1) ({on})"));
    }
    let file = TempFile::new(input);
    for choice in [SourceChoice::Mmap, SourceChoice::Buffered, SourceChoice::Auto] {
        for ahead in [false, true] {
            let mut b = Reader::builder();
            b.dialect(d.clone()).source(choice).read_ahead(ahead);
            let got = via_reader(b.from_path(&file.0).expect("opening the oracle's file"));
            assert_eq!(got, want, "{choice:?} file (read-ahead {ahead}) on {text:?} with {d:?}");
        }
    }
    for &n in SIZES {
        let rdr = Reader::builder()
            .dialect(d.clone())
            .source(SourceChoice::Buffered)
            .read_ahead(true)
            .buffer_size(n)
            .from_path(&file.0)
            .expect("opening the oracle's file");
        assert!(rdr.reads_ahead());
        let got = via_reader(rdr);
        assert_eq!(got, want, "read-ahead({n}) vs reference on {text:?} with {d:?}");
    }
    want
}
