//! The reader: drives the scanner over a source and tracks positions.

use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::dialect::{Dialect, Terminator};
use crate::error::{Error, ErrorKind, Position, Result};
use crate::part::Part;
use crate::record::{Row, RowBuf};
use crate::scan::{Fields, Scan, Scanner, SelectArgs, SelectedRecord, Span};
use crate::select::{Batch, Selection, BATCH_BYTES, BATCH_RECORDS};
use crate::source::{
    self, Decompress, Mapped, ReadBuffer, SourceChoice, SourceKind, SourceReason,
    DEFAULT_BUFFER_SIZE, DEFAULT_MAX_BUFFER_SIZE, DEFAULT_RELEASE_THRESHOLD,
};

mod builder;
mod count;
mod regular;

/// Configures and opens a [`Reader`].
///
/// ```
/// use fastcsv::{Dialect, ReaderBuilder, SourceChoice};
/// let d = Dialect::builder().delimiter(b';').headers(false).build().unwrap();
/// let mut rdr = ReaderBuilder::new()
///     .dialect(d)
///     .buffer_size(4096)
///     .source(SourceChoice::Buffered)
///     .from_reader(&b"a;b\n"[..]);
/// assert_eq!(rdr.read_row().unwrap().unwrap().get(1), Some(&b"b"[..]));
/// ```
#[derive(Clone, Debug)]
pub struct ReaderBuilder {
    dialect: Dialect,
    buffer_size: usize,
    max_buffer_size: usize,
    source: SourceChoice,
    map_limit: Option<u64>,
    release_threshold: u64,
    path: Option<PathBuf>,
    block_scan: bool,
    read_ahead: Option<bool>,
    decompress: Decompress,
}

impl Default for ReaderBuilder {
    fn default() -> Self {
        ReaderBuilder::new()
    }
}

impl ReaderBuilder {
    /// The codec to decode a regular file with from `offset` on, as
    /// [`ReaderBuilder::decompress`] says. Other files are looked at on
    /// their first read (see [`ReaderBuilder::stream`]).
    fn codec_of(&self, file: &File, offset: u64) -> Result<Option<source::Codec>> {
        if self.decompress == Decompress::Off || !file.metadata().is_ok_and(|m| m.is_file()) {
            return Ok(None);
        }
        match self.decompress {
            Decompress::Force(c) => Ok(Some(c)),
            _ => Ok(source::decompress::sniff_file(file, offset)?),
        }
    }

    /// A compressed regular file, decoded from `offset` into the `read()`
    /// buffer (on the read-ahead thread, unless read-ahead is off).
    fn open_compressed(
        &self,
        file: File,
        codec: source::Codec,
        offset: u64,
    ) -> Result<Reader<'static>> {
        if codec == source::Codec::Zip {
            let message = source::decompress::ZIP_MESSAGE.to_string();
            return Err(Error::new(ErrorKind::Decompress { codec, offset: Some(offset), message }));
        }
        let dec = Box::new(source::decompress::Decoder::new(file, codec, offset)?);
        let (size, max) = (self.buffer_size, self.max_buffer_size);
        // Decoding costs more CPU than parsing: worth a thread at any size.
        let buf = if self.read_ahead_for(None) {
            // Larger chunks: fewer hand-overs per decoded byte.
            let size = size.max(source::decompress::DECODED_CHUNK.min(max));
            ReadBuffer::read_ahead(source::Input::Stream(dec), size, max, true)
        } else {
            ReadBuffer::new(dec, size, max)
        };
        let reason = SourceReason::Compressed(codec);
        Ok(Reader::new(self, Src::Read(buf), SourceKind::Buffered, reason, 0))
    }

    /// A file read as a stream. One that is not regular has its first
    /// bytes looked at on its first read (they cannot be read twice).
    fn stream(&self, file: Arc<File>, regular: bool) -> Box<dyn Read + Send> {
        if regular || self.decompress == Decompress::Off {
            Box::new(SharedFile(file))
        } else {
            Box::new(source::decompress::Sniff::new(SharedFile(file), self.decompress))
        }
    }

    /// The read-ahead rule (see [`ReaderBuilder::read_ahead`]) for a file
    /// with `left` bytes to read, `None` for a stream.
    fn read_ahead_for(&self, left: Option<u64>) -> bool {
        self.read_ahead.unwrap_or_else(|| {
            source::parallel() && left.is_none_or(|n| n >= source::READ_AHEAD_MIN)
        })
    }
}

pub(crate) enum Src<'a> {
    Slice(&'a [u8]),
    Mapped(Mapped),
    Read(ReadBuffer<'a>),
}

/// Reads records from a slice, a mapped file or a stream.
///
/// ```
/// let mut rdr = fastcsv::Reader::from_slice(b"name,qty\n\"a, b\",1\nc,2\n");
/// assert_eq!(rdr.headers().unwrap().unwrap().get(0), Some(&b"name"[..]));
/// let mut total = 0;
/// while let Some(row) = rdr.read_row().unwrap() {
///     total += row.get_str(1).unwrap().parse::<u32>().unwrap();
/// }
/// assert_eq!(total, 3);
/// ```
pub struct Reader<'a> {
    pub(crate) src: Src<'a>,
    kind: SourceKind,
    reason: SourceReason,
    pub(crate) scanner: Scanner,
    fields: Fields,
    pub(crate) dialect: Dialect,
    path: Option<PathBuf>,
    /// Offset of the current record in the source's bytes.
    pub(crate) rec_start: usize,
    /// Scanner position, relative to `rec_start`.
    pub(crate) pos: usize,
    /// Absolute offset of the source's byte 0.
    pub(crate) base: u64,
    pub(crate) records: u64,
    pub(crate) expected: Option<usize>,
    headers: Option<RowBuf>,
    pub(crate) headers_read: bool,
    pub(crate) started: bool,
    pub(crate) done: bool,
    row_pos: Position,
    /// Every structural byte of the dialect is ASCII (see `Row::str_iter`).
    ascii_structure: bool,
    /// An error stopped the scan inside a line that is not counted yet:
    /// the line number Python's `line_num` would show.
    pub(crate) err_line: Option<u64>,
    /// Where the record that the last error stopped began: absolute byte
    /// offset and 1-based line (for a caller that parses the input again
    /// from there, see [`Reader::error_record_start`]).
    err_record: Option<(u64, u64)>,
    /// The input ended inside a record (no terminator after it, or inside
    /// quotes): the scanner had to finish it at the end.
    pub(crate) tail_partial: bool,
    /// The input is a part of a file that now goes on past the part's end
    /// (it grew after it was split): a record still open at the part's
    /// end (a quoted field whose last byte is a line end) runs on in the
    /// file, and is [`ErrorKind::FileChanged`], not a record.
    pub(crate) part_goes_on: bool,
    /// A `read()` of the input failed (and the buffer was left as it
    /// was): [`Reader::resume_after_error`] may go on.
    failed_read: bool,
    /// Set by [`Reader::resume_after_error`]: the next call goes on
    /// scanning the record the failed read was in, rather than starting
    /// the next one.
    resume_record: bool,
    /// A regular file read with `read()`: what its end must look like.
    file_end: Option<FileEnd>,
}

/// A file shared by its reads and [`FileEnd`], read at its own position.
struct SharedFile(Arc<File>);

impl Read for SharedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        (&*self.0).read(buf)
    }
}

/// What the end of a regular file read with `read()` is checked against:
/// a `read()` that returns 0 early (the file shrank) looks like the end.
/// Whether a file with a size has no blocks on disk (see
/// `FileEnd::pseudo`).
fn no_blocks(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        m.len() > 0 && m.blocks() == 0
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

struct FileEnd {
    /// The file being read, for `fstat`.
    file: Arc<File>,
    /// Its size when it was opened.
    size: u64,
    /// The offset the reads must reach: the size at open, or the end of
    /// the part read.
    end: u64,
    /// A file whose size is not its length in bytes: a pseudo-file of
    /// sysfs or procfs states a size (a page) but `read()` ends earlier.
    /// Known by having a size and no blocks; for those only a smaller
    /// size is a change. (A sparse regular file reads zeros up to its
    /// size, so it still reaches `end`.)
    pseudo: bool,
}

impl<'a> Reader<'a> {
    fn new(
        b: &ReaderBuilder,
        src: Src<'a>,
        kind: SourceKind,
        reason: SourceReason,
        offset: usize,
    ) -> Reader<'a> {
        let mut scanner = Scanner::new(&b.dialect);
        scanner.set_block_scan(b.block_scan);
        // `advance` calls `forget_blocks` on every refill.
        scanner.set_block_cache(true);
        Reader {
            src,
            kind,
            reason,
            scanner,
            fields: Fields::default(),
            dialect: b.dialect.clone(),
            path: b.path.clone(),
            rec_start: offset,
            pos: 0,
            base: 0,
            records: 0,
            expected: None,
            headers: None,
            headers_read: false,
            started: false,
            done: false,
            row_pos: Position::default(),
            err_line: None,
            err_record: None,
            tail_partial: false,
            part_goes_on: false,
            failed_read: false,
            resume_record: false,
            file_end: None,
            ascii_structure: {
                let d = &b.dialect;
                let term = match d.terminator {
                    Terminator::Any => 0,
                    Terminator::Byte(t) => t,
                };
                [Some(d.delimiter), d.quote, d.escape, d.comment, Some(term)]
                    .iter()
                    .all(|b| b.is_none_or(|b| b.is_ascii()))
            },
        }
    }

    /// Starts at a part's first record with the part's lines, records and
    /// width (see [`ReaderBuilder::from_path_part`]).
    fn enter_part(&mut self, part: &Part) {
        self.scanner.restart_at(part.lines);
        self.records = part.records;
        if part.start > 0 && !self.dialect.flexible {
            self.expected = part.width;
        }
    }

    /// A builder for non-default settings.
    ///
    /// ```
    /// let rdr = fastcsv::Reader::builder().from_slice(b"");
    /// ```
    pub fn builder() -> ReaderBuilder {
        ReaderBuilder::new()
    }

    /// Reads a slice with the default dialect.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n");
    /// assert!(rdr.read_row().unwrap().is_some());
    /// ```
    pub fn from_slice(data: &'a [u8]) -> Reader<'a> {
        ReaderBuilder::new().from_slice(data)
    }

    /// Reads a stream with the default dialect and a 128 KiB buffer.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_reader(&b"a\n1\n"[..]);
    /// assert!(rdr.read_row().unwrap().is_some());
    /// ```
    pub fn from_reader<R: Read + Send + 'a>(rdr: R) -> Reader<'a> {
        ReaderBuilder::new().from_reader(rdr)
    }

    /// Opens a path with the default settings.
    ///
    /// ```
    /// assert!(fastcsv::Reader::from_path("/no/such/file.csv").is_err());
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Reader<'static>> {
        ReaderBuilder::new().from_path(path)
    }

    /// The name errors give the input: the path it was opened from, or
    /// the one set with [`ReaderBuilder::path`].
    ///
    /// ```
    /// let rdr = fastcsv::ReaderBuilder::new().path("in.csv").from_slice(b"a\n");
    /// assert_eq!(rdr.path(), Some(std::path::Path::new("in.csv")));
    /// assert_eq!(fastcsv::Reader::from_slice(b"").path(), None);
    /// ```
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The source in use.
    ///
    /// ```
    /// let rdr = fastcsv::Reader::from_reader(&b""[..]);
    /// assert_eq!(rdr.source_kind(), fastcsv::SourceKind::Buffered);
    /// ```
    pub fn source_kind(&self) -> SourceKind {
        self.kind
    }

    /// True when a helper thread reads the input ahead of the parser, or
    /// maps a mapped file's pages in ahead of it (for a mapped file, once
    /// the first row is read or a count starts; see
    /// [`ReaderBuilder::read_ahead`]).
    ///
    /// ```
    /// assert!(!fastcsv::Reader::from_reader(&b""[..]).reads_ahead());
    /// ```
    pub fn reads_ahead(&self) -> bool {
        match &self.src {
            Src::Read(b) => b.is_read_ahead(),
            Src::Mapped(m) => m.faults_ahead(),
            Src::Slice(_) => false,
        }
    }

    /// Why that source was chosen.
    ///
    /// ```
    /// let rdr = fastcsv::Reader::from_slice(b"");
    /// assert_eq!(rdr.source_reason(), fastcsv::SourceReason::NotAFile);
    /// ```
    pub fn source_reason(&self) -> SourceReason {
        self.reason
    }

    /// The dialect in use.
    ///
    /// ```
    /// assert_eq!(fastcsv::Reader::from_slice(b"").dialect().delimiter(), b',');
    /// ```
    pub fn dialect(&self) -> &Dialect {
        &self.dialect
    }

    /// Lines consumed so far (Python's `reader.line_num`).
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n\"x\ny\"\n");
    /// rdr.read_row().unwrap();
    /// assert_eq!(rdr.line(), 3);
    /// ```
    pub fn line(&self) -> u64 {
        self.err_line.unwrap_or_else(|| self.scanner.lines())
    }

    /// Changes the field size limit (in characters; `None` for none) from
    /// the next byte scanned on, the way a call to Python's
    /// `csv.field_size_limit()` between two rows affects the rows after it.
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).field_limit(Some(2)).build().unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().dialect(d).from_slice(b"ab\nabc\nabc\n");
    /// assert!(rdr.read_row().unwrap().is_some());
    /// assert!(rdr.read_row().is_err());
    /// rdr.set_field_limit(Some(3));
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"abc"[..]));
    /// ```
    pub fn set_field_limit(&mut self, limit: Option<u64>) {
        self.scanner.set_field_limit(limit);
    }

    /// Where the record that the last `read_row` error stopped in began:
    /// its absolute byte offset and 1-based line; `None` when the last call
    /// succeeded or failed outside a record (I/O). A caller that reads the
    /// input again from that byte with a fresh reader sees the record anew.
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).strict(true).build().unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().dialect(d).from_slice(b"a\n\"b\nc\"x\n");
    /// rdr.read_row().unwrap();
    /// assert!(rdr.read_row().is_err());
    /// assert_eq!(rdr.error_record_start(), Some((2, 2)));
    /// ```
    pub fn error_record_start(&self) -> Option<(u64, u64)> {
        self.err_record
    }

    /// Fails with [`ErrorKind::FileChanged`] when the mapped file under this
    /// reader shrank since it was opened: a page past its new end was
    /// touched (and read as zeros), by the reader or by the caller reading
    /// the bytes of a row it was handed, or the file is now shorter than
    /// the mapping. Reading stops there. An atomic load and an `fstat`;
    /// always `Ok` for a source that is not a mapped file.
    ///
    /// A caller that copies rows' bytes cannot tell whether the last copy
    /// read zeros after the reader checked them: it calls this after its
    /// copies (and before it reports an error of its own about them), and
    /// on an error drops the last copy and reports this error instead.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n");
    /// let row = rdr.read_row().unwrap().unwrap().get(0).unwrap().to_vec();
    /// assert!(rdr.check_unchanged().is_ok());
    /// assert_eq!(row, b"1");
    /// ```
    pub fn check_unchanged(&mut self) -> Result<()> {
        self.check_mapped(true)
    }

    /// Bytes consumed so far, from the start of the input.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n");
    /// rdr.read_row().unwrap();
    /// assert_eq!(rdr.byte_offset(), 4);
    /// ```
    pub fn byte_offset(&self) -> u64 {
        self.base + (self.rec_start + self.pos) as u64
    }

    /// Whether the last record ended at a CR that was the last byte read so
    /// far (with [`Terminator::Any`](Terminator::Any)): an LF at
    /// [`byte_offset`](Reader::byte_offset) then still belongs to that
    /// record's line, and the next call skips it. A caller that hands the
    /// rest of the input to someone else (Python's `csv`, which reads
    /// `"\r\n"` as one line) skips that LF itself.
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().dialect(d).from_slice(b"a\r\nb\r");
    /// rdr.read_row().unwrap();
    /// // The LF was there to look at: eaten with its CR.
    /// assert_eq!((rdr.byte_offset(), rdr.pending_lf()), (3, false));
    /// rdr.read_row().unwrap();
    /// // The CR is the last byte so far.
    /// assert_eq!((rdr.byte_offset(), rdr.pending_lf()), (5, true));
    /// ```
    pub fn pending_lf(&self) -> bool {
        self.scanner.pending_lf()
    }

    /// Total input size when known (slices and mapped files).
    ///
    /// ```
    /// assert_eq!(fastcsv::Reader::from_slice(b"a\n").len_hint(), Some(2));
    /// ```
    pub fn len_hint(&self) -> Option<u64> {
        match &self.src {
            Src::Slice(s) => Some(s.len() as u64),
            Src::Mapped(m) => Some(m.bytes().len() as u64),
            Src::Read(_) => None,
        }
    }

    /// The read buffer's current size, for the buffered source (it grows
    /// to hold a record larger than the buffer); `None` for slices and
    /// mapped files.
    ///
    /// ```
    /// let mut rdr = fastcsv::ReaderBuilder::new().buffer_size(4).from_reader(&b"a\n0123456789\n"[..]);
    /// rdr.read_row().unwrap();
    /// assert_eq!(rdr.buffer_capacity(), Some(16));
    /// ```
    pub fn buffer_capacity(&self) -> Option<usize> {
        match &self.src {
            Src::Read(b) => Some(b.capacity()),
            _ => None,
        }
    }

    /// Number of records returned so far (the header row included).
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n");
    /// rdr.read_row().unwrap();
    /// assert_eq!(rdr.records_read(), 2);
    /// ```
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// The header row (reading it if needed), or `None` when the dialect
    /// has no headers or the input is empty. Empty lines before the header
    /// are skipped.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"x,y\n1,2\n");
    /// let h = rdr.headers().unwrap().unwrap().clone();
    /// assert_eq!(h.get(1), Some(&b"y"[..]));
    /// ```
    pub fn headers(&mut self) -> Result<Option<&RowBuf>> {
        if !self.dialect.headers {
            return Ok(None);
        }
        self.ensure_headers()?;
        Ok(self.headers.as_ref())
    }

    pub(crate) fn ensure_headers(&mut self) -> Result<()> {
        if self.headers_read {
            return Ok(());
        }
        self.headers_read = true;
        while self.advance()? {
            if self.fields.is_empty() {
                continue;
            }
            let row =
                Row::new(self.data(), self.pos, &self.fields, self.row_pos, self.ascii_structure);
            self.headers = Some(row.to_owned());
            break;
        }
        Ok(())
    }

    /// Reads the next record, reusing the reader's memory. Rows borrow the
    /// input (mapped file, slice or buffer) wherever no unescaping was
    /// needed. After a data error, the next call resumes at the next line.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a,b\n1,2\n3,4\n");
    /// let mut n = 0;
    /// while let Some(row) = rdr.read_row().unwrap() {
    ///     n += row.len();
    /// }
    /// assert_eq!(n, 4);
    /// ```
    pub fn read_row(&mut self) -> Result<Option<Row<'_>>> {
        if self.dialect.headers && !self.headers_read {
            self.ensure_headers()?;
        }
        if !self.advance()? {
            return Ok(None);
        }
        Ok(Some(Row::new(self.data(), self.pos, &self.fields, self.row_pos, self.ascii_structure)))
    }

    /// After the end of an input read with `read()` on this thread
    /// ([`ReaderBuilder::from_reader`], or a file neither mapped nor read
    /// ahead), makes the next call read it again, for data written since (a
    /// file that grows, a stream that a writer appends to): what Python's
    /// `csv.reader` does, since it asks its iterator for a line on every
    /// call. A new record starts there: the record the end cut short was
    /// already returned (or failed) as the last one. Lines, records and
    /// byte offsets go on counting.
    ///
    /// Returns whether it did so: false, and nothing changes, unless the
    /// reader has returned the end of such an input (an I/O error is not
    /// one); so always false for slices, mapped files (whose length is
    /// fixed when mapped) and files read by a read-ahead thread (which has
    /// ended).
    ///
    /// ```
    /// use std::io::Read;
    /// use std::sync::{Arc, Mutex};
    /// // A source that a writer appends to: `read` takes what is there.
    /// struct Shared(Arc<Mutex<Vec<u8>>>);
    /// impl Read for Shared {
    ///     fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
    ///         let mut v = self.0.lock().unwrap();
    ///         let n = v.len().min(buf.len());
    ///         buf[..n].copy_from_slice(&v[..n]);
    ///         v.drain(..n);
    ///         Ok(n)
    ///     }
    /// }
    /// let data = Arc::new(Mutex::new(b"a\n1,\"x".to_vec()));
    /// let d = fastcsv::Dialect::builder().headers(false).flexible(true).build().unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().dialect(d).from_reader(Shared(data.clone()));
    /// rdr.read_row().unwrap();
    /// // The end cuts the last record short: it is returned as it is.
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(1), Some(&b"x"[..]));
    /// assert!(rdr.read_row().unwrap().is_none());
    /// data.lock().unwrap().extend_from_slice(b"y\"\n");
    /// assert!(rdr.read_row().unwrap().is_none());
    /// assert!(rdr.resume_after_end());
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"y\""[..]));
    /// assert_eq!(rdr.line(), 3);
    /// ```
    pub fn resume_after_end(&mut self) -> bool {
        let Src::Read(ReadBuffer::Sync(b)) = &mut self.src else {
            return false;
        };
        if !self.done || !b.is_eof() {
            return false;
        }
        b.clear_eof();
        self.done = false;
        self.tail_partial = false;
        // Nothing buffered is left to parse; the scanner starts afresh (a
        // CR at the end no longer waits for its LF) and keeps its count.
        self.pos = self.data().len();
        self.scanner.reset();
        // A header row the input ended before is looked for again.
        if self.headers.is_none() {
            self.headers_read = false;
        }
        true
    }

    /// After an I/O error from the input's `read()`, makes the next call
    /// read again and go on from where the failed read left the record:
    /// as Python's `csv` goes on over a file object whose `read` raised
    /// (a Ctrl-C, an interrupted pipe). Without it, the reader ends at the
    /// error.
    ///
    /// Returns whether it did so: false, and nothing changes, unless the
    /// last error was such a read error of an input read on this thread
    /// (not a data error, a decompression error, a mapped file, or a
    /// read-ahead thread's input).
    ///
    /// ```
    /// use std::io::{self, Read};
    /// // A source whose second read fails once.
    /// struct Flaky(u32, io::Cursor<&'static [u8]>);
    /// impl Read for Flaky {
    ///     fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
    ///         self.0 += 1;
    ///         if self.0 == 2 {
    ///             return Err(io::Error::other("interrupted"));
    ///         }
    ///         let n = buf.len().min(3);
    ///         self.1.read(&mut buf[..n])
    ///     }
    /// }
    /// let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
    /// let src = Flaky(0, io::Cursor::new(b"abcdef,1\nx,2\n"));
    /// let mut rdr = fastcsv::ReaderBuilder::new().dialect(d).buffer_size(1).from_reader(src);
    /// assert!(rdr.read_row().is_err());
    /// assert!(rdr.resume_after_error());
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"abcdef"[..]));
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(1), Some(&b"2"[..]));
    /// ```
    pub fn resume_after_error(&mut self) -> bool {
        if !std::mem::take(&mut self.failed_read) {
            return false;
        }
        self.done = false;
        // Nothing was scanned when the first read failed.
        self.resume_record = self.started;
        true
    }

    /// An iterator of owned rows.
    ///
    /// ```
    /// let mut rdr = fastcsv::Reader::from_slice(b"a\n1\n2\n");
    /// let v: Vec<_> = rdr.rows().map(|r| r.unwrap().get(0).unwrap().to_vec()).collect();
    /// assert_eq!(v, vec![b"1".to_vec(), b"2".to_vec()]);
    /// ```
    pub fn rows(&mut self) -> Rows<'_, 'a> {
        Rows { rdr: self }
    }

    /// Reads the next records keeping only the columns of `sel` (see
    /// [`Selection`]): the block scanner takes as many regular records as
    /// it can in one call and skips the other fields without building
    /// them; any other record comes alone, through the state machine. The
    /// records, errors and positions are those [`Reader::read_row`] gives.
    /// `Ok(None)` at the end of the input. After a data error, the next
    /// call resumes at the next line.
    ///
    /// ```
    /// use fastcsv::{Reader, Selection};
    /// let mut rdr = Reader::from_slice(b"id,name,qty\n1,a,5\n2,\"b, c\",7\n");
    /// let mut sel = Selection::new([2, 1]);
    /// let mut rows = Vec::new();
    /// while let Some(batch) = rdr.read_batch(&mut sel).unwrap() {
    ///     for row in batch.iter() {
    ///         rows.push(row.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect::<Vec<_>>());
    ///     }
    /// }
    /// assert_eq!(rows, [["5", "a"], ["7", "b, c"]]);
    /// ```
    pub fn read_batch<'s>(&'s mut self, sel: &'s mut Selection) -> Result<Option<Batch<'s>>> {
        if self.dialect.headers && !self.headers_read {
            self.ensure_headers()?;
        }
        sel.clear();
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.start()?;
        }
        loop {
            let cap = if sel.csv || sel.csv_cols.is_some() { BATCH_BYTES } else { usize::MAX };
            if self.select_regular(sel, cap)? {
                return Ok(Some(self.batch(sel)));
            }
            // The buffer ends inside a record the block scanner can take:
            // refill and go on with it (not the state machine).
            if !self.refill_for_block_scan()? {
                break;
            }
            sel.clear();
        }
        if !self.advance()? {
            return Ok(None);
        }
        // `advance` may have refilled the buffer (moving `rec_start`).
        sel.input_base = self.base + self.rec_start as u64;
        sel.first_record = self.row_pos.record;
        let n = self.fields.len();
        if sel.all {
            sel.out.spans.extend((0..n).map(|c| self.fields.span(c)));
        } else {
            for &c in &sel.uniq {
                sel.out.spans.push(if c < n { self.fields.span(c) } else { Span::default() });
            }
        }
        let start = self.scanner.record_offset();
        sel.out.records.push(SelectedRecord {
            start,
            end: start,
            after: start,
            lf: false,
            spans_at: 0,
            ends_at: 0,
            copy: crate::scan::NO_COPY,
            line: self.row_pos.line,
            fields: n,
            plain: false,
        });
        let (input, scratch) = (self.data(), self.fields.scratch());
        let quote = self.scanner.quote_byte();
        let delimiter = self.dialect.delimiter;
        let ends_all = sel.ends_all();
        Ok(Some(Batch { input, scratch, sel, quote, delimiter, len: 1, ends_all }))
    }

    /// The block scanner's part of [`Reader::read_batch`]: takes as many
    /// regular records as it can from the current position into `sel`,
    /// within the next `cap` bytes of the input; false when it cannot take
    /// the next one.
    fn select_regular(&mut self, sel: &mut Selection, cap: usize) -> Result<bool> {
        self.rec_start += self.pos;
        self.pos = 0;
        if let Src::Mapped(m) = &mut self.src {
            m.release_before(self.rec_start);
        }
        let data = match &self.src {
            Src::Slice(s) => &s[self.rec_start..],
            Src::Mapped(m) => &m.bytes()[self.rec_start..],
            Src::Read(b) => &b.data()[self.rec_start..],
        };
        // A record's parse depends on no byte past its end (a CR's next
        // byte aside, which the scanner waits for), so a shorter slice
        // gives the same records, up to the last that ends in it.
        let data = &data[..data.len().min(cap)];
        let args = SelectArgs {
            cols: &sel.uniq,
            max_records: BATCH_RECORDS,
            check: !self.dialect.flexible,
            all_cols: sel.all,
            csv: sel.csv,
            raw: sel.raw,
            // Only for the dialect the keep masks are right for.
            csv_cols: sel.csv_cols.filter(|_| self.dialect.terminator == Terminator::Any),
        };
        let k =
            self.scanner.block_select(data, &mut self.pos, &mut self.expected, &args, &mut sel.out);
        sel.input_base = self.base + self.rec_start as u64;
        if k == 0 {
            return Ok(false);
        }
        self.err_line = None;
        if let Src::Mapped(m) = &self.src {
            if m.changed_before(self.rec_start + self.pos) {
                // None of the batch goes out: the change is reported at its
                // first record, where reading stops (the scanner's record
                // is the batch's last).
                self.done = true;
                let first = &sel.out.records[0];
                let pos = Position {
                    byte: sel.input_base + first.start as u64,
                    line: first.line,
                    record: self.records,
                };
                return Err(self.decorate(Error::new(ErrorKind::FileChanged).with_position(pos)));
            }
        }
        sel.first_record = self.records;
        self.records += k;
        Ok(true)
    }

    /// The batch of the records [`Reader::select_regular`] took.
    fn batch<'s>(&'s self, sel: &'s mut Selection) -> Batch<'s> {
        let input = self.data();
        let quote = self.scanner.quote_byte();
        let len = sel.out.records.len();
        let delimiter = self.dialect.delimiter;
        let ends_all = sel.ends_all();
        Batch { input, scratch: &sel.out.scratch, sel, quote, delimiter, len, ends_all }
    }

    /// After [`Reader::count_regular`] or [`Reader::select_regular`] on the
    /// buffered source: when the block scanner stopped only because the
    /// buffer ends inside a record (see `Scanner::block_needs_more`) of at
    /// most half the buffer, refills, keeping that record, and returns
    /// true, so that the count or batch goes on without the state machine
    /// (which builds the record's fields one byte class at a time). A
    /// failed `read()` is reported as [`Reader::advance`] reports it.
    fn refill_for_block_scan(&mut self) -> Result<bool> {
        let Src::Read(b) = &mut self.src else { return Ok(false) };
        if self.done || !self.started || b.is_eof() {
            return Ok(false);
        }
        // A record over half the buffer is left to the state machine, which
        // grows the buffer, or reports the record too large, or an error
        // inside it first, exactly as when reading rows.
        let at = self.rec_start + self.pos;
        let tail = &b.data()[at..];
        if tail.len() > b.capacity() / 2 || !self.scanner.block_needs_more(tail) {
            return Ok(false);
        }
        self.rec_start = at;
        self.pos = 0;
        self.scanner.forget_blocks();
        match b.refill(at) {
            Ok(shift) => {
                self.base += shift as u64;
                self.rec_start -= shift;
                Ok(true)
            }
            // A failed `read()`: the buffer does not grow here, so the
            // record cannot be too large.
            Err(e) => {
                self.done = true;
                Err(self.decorate(e))
            }
        }
    }

    #[inline]
    fn data(&self) -> &[u8] {
        match &self.src {
            Src::Slice(s) => &s[self.rec_start..],
            Src::Mapped(m) => &m.bytes()[self.rec_start..],
            Src::Read(b) => &b.data()[self.rec_start..],
        }
    }

    /// An error at `off` in the current record's bytes. At end of input the
    /// last line has already been counted.
    fn err_at(&self, kind: ErrorKind, off: usize) -> Error {
        let pos = if matches!(kind, ErrorKind::UnexpectedEof | ErrorKind::RecordTooLarge { .. }) {
            // Point at the start of the record that never ended (or did
            // not fit).
            Position {
                byte: self.base + (self.rec_start + self.scanner.record_offset()) as u64,
                line: self.scanner.record_line(),
                record: self.records,
            }
        } else {
            // The line holding byte `off`: one past the lines counted, unless
            // it is the LF of a CRLF whose CR was already counted.
            let data = self.data();
            let in_crlf = self.dialect.terminator == Terminator::Any
                && off > 0
                && data.get(off) == Some(&b'\n')
                && data[off - 1] == b'\r';
            Position {
                byte: self.base + (self.rec_start + off) as u64,
                line: self.scanner.lines() + u64::from(!in_crlf),
                record: self.records,
            }
        };
        self.decorate(Error::new(kind).with_position(pos))
    }

    fn decorate(&self, e: Error) -> Error {
        match &self.path {
            Some(p) => e.with_path(p),
            None => e,
        }
    }

    pub(crate) fn start(&mut self) -> Result<()> {
        self.started = true;
        if !self.dialect.strip_bom {
            return Ok(());
        }
        if let Src::Read(b) = &mut self.src {
            while b.data().len() < 3 && !b.is_eof() {
                self.scanner.forget_blocks();
                if let Err(e) = b.refill(0) {
                    // After `resume_after_error`, the byte-order mark is
                    // looked for again.
                    self.failed_read =
                        matches!(e.kind(), ErrorKind::Io(_)) && matches!(b, ReadBuffer::Sync(_));
                    self.started = !self.failed_read;
                    self.done = true;
                    return Err(self.decorate(e));
                }
            }
        }
        if self.data().starts_with(b"\xEF\xBB\xBF") && self.base == 0 && self.rec_start == 0 {
            self.rec_start = 3;
        }
        Ok(())
    }

    /// Moves to the next record; true when one is in `self.fields`.
    fn advance(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        if !self.started {
            self.start()?;
        }
        // After a failed read the record goes on where scanning stopped.
        if !std::mem::take(&mut self.resume_record) {
            self.rec_start += self.pos;
            self.pos = 0;
            self.err_line = None;
            self.err_record = None;
            if let Src::Mapped(m) = &mut self.src {
                m.release_before(self.rec_start);
            }
        }
        loop {
            let data = match &self.src {
                Src::Slice(s) => &s[self.rec_start..],
                Src::Mapped(m) => &m.bytes()[self.rec_start..],
                Src::Read(b) => &b.data()[self.rec_start..],
            };
            match self.scanner.scan(data, &mut self.pos, &mut self.fields) {
                Scan::Row => {
                    self.check_out()?;
                    return self.accept();
                }
                Scan::NeedInput => {
                    if let Src::Read(b) = &mut self.src {
                        if !b.is_eof() {
                            self.scanner.forget_blocks();
                            match b.refill(self.rec_start) {
                                Ok(shift) => {
                                    self.base += shift as u64;
                                    self.rec_start -= shift;
                                    continue;
                                }
                                Err(e) => {
                                    let off = self.pos;
                                    let kind = e.into_kind();
                                    // A failed read leaves a buffer filled
                                    // on this thread as it was.
                                    self.failed_read = matches!(kind, ErrorKind::Io(_))
                                        && matches!(b, ReadBuffer::Sync(_));
                                    self.done = true;
                                    return Err(match kind {
                                        ErrorKind::Io(io) => self.decorate(io.into()),
                                        // Where in the compressed input it
                                        // failed is in the kind.
                                        k @ ErrorKind::Decompress { .. } => {
                                            self.decorate(Error::new(k))
                                        }
                                        k => self.err_at(k, off),
                                    });
                                }
                            }
                        }
                    }
                    self.check_end()?;
                    if self.part_goes_on && !self.scanner.at_record_start() {
                        return self.file_changed(self.record_here()).map(|()| false);
                    }
                    let data = match &self.src {
                        Src::Slice(s) => &s[self.rec_start..],
                        Src::Mapped(m) => &m.bytes()[self.rec_start..],
                        Src::Read(b) => &b.data()[self.rec_start..],
                    };
                    let len = data.len();
                    match self.scanner.finish(data, &mut self.fields) {
                        Scan::Row => {
                            self.pos = len;
                            self.tail_partial = true;
                            return self.accept();
                        }
                        Scan::Error(k, off) => {
                            self.done = true;
                            self.tail_partial = true;
                            self.check_mapped(true)?;
                            self.note_error_record();
                            return Err(self.err_at(k, off));
                        }
                        Scan::End | Scan::NeedInput => {
                            self.pos = len;
                            self.done = true;
                            return Ok(false);
                        }
                    }
                }
                Scan::Error(k, off) => {
                    // Zeros where a mapped file was cut make errors of
                    // their own: the change is the error.
                    self.check_mapped(true)?;
                    self.note_error_record();
                    let e = self.err_at(k, off);
                    self.err_line = e.position().map(|p| p.line);
                    self.records += 1;
                    self.scanner.recover();
                    self.rec_start += off;
                    self.pos = 0;
                    return Err(e);
                }
                Scan::End => {
                    self.check_end()?;
                    self.done = true;
                    return Ok(false);
                }
            }
        }
    }

    /// For a mapped file: fails with [`ErrorKind::FileChanged`] when the file
    /// shrank under the mapping (see `source/sigbus.rs`); with `at_end` it
    /// also compares the file's current size with the mapping. Called
    /// before any error is reported (the zeros that replace the pages past
    /// a new end make errors of their own) and at the end.
    #[inline]
    fn check_mapped(&mut self, at_end: bool) -> Result<()> {
        let Src::Mapped(m) = &self.src else {
            return Ok(());
        };
        if !m.changed(at_end) {
            return Ok(());
        }
        self.file_changed(self.next_here())
    }

    /// Whether the mapped file being read shrank (the guard's flag, then
    /// its size; see `Mapped::changed`): for readers of the rows handed
    /// out that copy them later. Always false for other sources.
    pub(crate) fn source_changed(&self) -> bool {
        matches!(&self.src, Src::Mapped(m) if m.changed(true))
    }

    /// Before the record the scanner just read (up to `pos`) is handed
    /// out: fails when the mapped file changed under it
    /// (`Mapped::changed_before`, one load of the record's last byte and
    /// one of the guard's flag).
    #[inline]
    fn check_out(&mut self) -> Result<()> {
        let Src::Mapped(m) = &self.src else {
            return Ok(());
        };
        if !m.changed_before(self.rec_start + self.pos) {
            return Ok(());
        }
        self.file_changed(self.record_here())
    }

    /// At the end of the input: a mapped file must still be as long as
    /// its mapping, and a regular file read with `read()` must have given
    /// every byte it had when opened and be no shorter now (a `read()`
    /// that returns 0 early is what a file cut during the read looks
    /// like). A file that grew is fine: what was read is what it held.
    fn check_end(&mut self) -> Result<()> {
        self.check_mapped(true)?;
        let (Src::Read(b), Some(f)) = (&self.src, &self.file_end) else {
            return Ok(());
        };
        if !b.is_eof() {
            return Ok(());
        }
        let read_to = self.base + b.data().len() as u64;
        let shrank = f.file.metadata().is_ok_and(|m| m.len() < f.size);
        if (read_to < f.end && !f.pseudo) || shrank {
            return self.file_changed(self.next_here());
        }
        Ok(())
    }

    /// Stops reading with [`ErrorKind::FileChanged`] at the current record
    /// (the first one not handed out).
    #[cold]
    fn file_changed(&mut self, pos: Position) -> Result<()> {
        self.done = true;
        Err(self.decorate(Error::new(ErrorKind::FileChanged).with_position(pos)))
    }

    /// Where the record the scanner is in (or has just read) began.
    fn record_here(&self) -> Position {
        Position {
            byte: self.base + (self.rec_start + self.scanner.record_offset()) as u64,
            line: self.scanner.record_line(),
            record: self.records,
        }
    }

    /// Where the next record begins, between records (the block scanner
    /// leaves the scanner's record offset and line behind); inside one,
    /// where it began.
    fn next_here(&self) -> Position {
        if !self.scanner.at_record_start() {
            return self.record_here();
        }
        Position {
            byte: self.base + (self.rec_start + self.pos) as u64,
            line: self.scanner.lines() + 1,
            record: self.records,
        }
    }

    fn note_error_record(&mut self) {
        let byte = self.base + (self.rec_start + self.scanner.record_offset()) as u64;
        self.err_record = Some((byte, self.scanner.record_line()));
    }

    fn accept(&mut self) -> Result<bool> {
        let pos = Position {
            byte: self.base + (self.rec_start + self.scanner.record_offset()) as u64,
            line: self.scanner.record_line(),
            record: self.records,
        };
        self.records += 1;
        self.row_pos = pos;
        let n = self.fields.len();
        if !self.dialect.flexible && n > 0 {
            match self.expected {
                None => self.expected = Some(n),
                Some(m) if m != n => {
                    // The record was checked when read (`check_out`); its
                    // width too is data from before any change.
                    let e = Error::new(ErrorKind::RaggedRow { expected: m, found: n })
                        .with_position(pos);
                    return Err(self.decorate(e));
                }
                Some(_) => {}
            }
        }
        Ok(true)
    }
}

/// Iterator of owned rows; see [`Reader::rows`].
pub struct Rows<'r, 'a> {
    rdr: &'r mut Reader<'a>,
}

impl Iterator for Rows<'_, '_> {
    type Item = Result<RowBuf>;
    fn next(&mut self) -> Option<Result<RowBuf>> {
        match self.rdr.read_row() {
            Ok(Some(row)) => Some(Ok(row.to_owned())),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
