//! # fastcsv
//!
//! A fast, correct CSV reader. Regular files are memory-mapped and parsed
//! straight from the map (rows borrow the mapped bytes); pipes, stdin and
//! very large files go through one reused `read()` buffer. The parser is a
//! byte-level state machine with the semantics of Python's `csv` module,
//! skipping runs of plain bytes with SIMD `memchr`.
//!
//! ```
//! use fastcsv::{Dialect, Reader};
//!
//! let data = b"city,pop\n\"Paris, FR\",2102650\nOslo,709037\n";
//! let mut rdr = Reader::from_slice(data);
//! assert_eq!(rdr.headers().unwrap().unwrap().get(0), Some(&b"city"[..]));
//! let mut total: u64 = 0;
//! while let Some(row) = rdr.read_row().unwrap() {
//!     total += row.get_str(1).unwrap().parse::<u64>().unwrap();
//! }
//! assert_eq!(total, 2811687);
//!
//! // Tab-separated, no header, a comment byte:
//! let d = Dialect::builder().delimiter(b'\t').headers(false).comment(Some(b'#')).build().unwrap();
//! let mut rdr = Reader::builder().dialect(d).from_slice(b"# note\nx\ty\n");
//! let row = rdr.read_row().unwrap().unwrap();
//! assert_eq!(row.to_strings().unwrap(), vec!["x", "y"]);
//! ```
//!
//! Opening a path picks the source automatically ([`SourceChoice`]):
//! regular files of at least [`SMALL_FILE`] bytes are mapped, everything
//! else is read, and the reader says which and why. When two CPUs are
//! available, a helper thread works ahead of the parser: files that are
//! read (large ones past the mapping limit, pipes, stdin) are read up to
//! 6 MiB ahead (a regular file at offsets, by the helper and, when it has
//! not got there yet, by the parser), and a mapped file's pages
//! are mapped in ahead of the parser (up to 32 MiB ahead of rows, all the
//! rest for a count; see [`ReaderBuilder::read_ahead`]).
//!
//! ```
//! use fastcsv::{SourceKind, SourceReason};
//! let dir = tempfile::tempdir().unwrap();
//! let p = dir.path().join("fastcsv-crate-doc.csv");
//! let mut data = String::from("a,b\n");
//! while data.len() < fastcsv::SMALL_FILE as usize {
//!     data.push_str("1,2\n");
//! }
//! std::fs::write(&p, &data).unwrap();
//! let mut rdr = fastcsv::Reader::from_path(&p).unwrap();
//! assert_eq!(rdr.source_kind(), SourceKind::Mapped);
//! assert_eq!(rdr.source_reason(), SourceReason::RegularFile);
//! assert_eq!(rdr.read_row().unwrap().unwrap().get(1), Some(&b"2"[..]));
//!
//! let rdr = fastcsv::Reader::from_path("/dev/null").unwrap();
//! assert_eq!(rdr.source_reason(), SourceReason::NotRegular);
//! ```
//!
//! Beyond rows: [`Reader::read_batch`] hands out batches of records with
//! only the columns a [`Selection`] keeps, [`Reader::par_batches`] reads
//! one input on every CPU, and [`arrow::Columns`] gathers records into
//! Arrow's `utf8` columns (or typed ones: `int64`, `float64`, `bool`, with
//! nulls, as pyarrow converts them), which [`arrow::ffi`] hands to other libraries
//! through the Arrow C stream interface, and [`split`] cuts a file into
//! parts that start exactly at records, for other processes or machines
//! to read on their own.
#![deny(missing_docs)]

pub mod arrow;
pub mod bench;
mod codec;
mod dialect;
mod error;
mod filter;
mod parallel;
mod part;
mod pool;
mod reader;
mod record;
pub mod scan;
mod select;
mod source;
pub mod split;

pub use dialect::{Dialect, DialectBuilder, Filter, Terminator};
pub use error::{ColumnsFrom, Error, ErrorKind, Position, Result};
pub use parallel::{Parallel, ParallelRun, PARALLEL_CHUNK};
pub use reader::{Reader, ReaderBuilder, Rows};
pub use record::{Row, RowBuf};
pub use select::{Batch, CsvPieces, FieldIter, RawFields, SelectedRow, Selection};
pub use source::{
    Codec, Decompress, SourceChoice, SourceKind, SourceReason, DEFAULT_BUFFER_SIZE,
    DEFAULT_MAX_BUFFER_SIZE, DEFAULT_RELEASE_THRESHOLD, READ_AHEAD_MIN, SMALL_FILE,
};
