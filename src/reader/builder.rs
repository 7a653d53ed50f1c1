//! The settings of [`ReaderBuilder`]: one setter per option.

use super::*;

impl ReaderBuilder {
    /// Default settings: default dialect, 128 KiB buffer, automatic source.
    ///
    /// ```
    /// let rdr = fastcsv::ReaderBuilder::new().from_slice(b"");
    /// ```
    pub fn new() -> ReaderBuilder {
        ReaderBuilder {
            dialect: Dialect::default(),
            buffer_size: DEFAULT_BUFFER_SIZE,
            max_buffer_size: DEFAULT_MAX_BUFFER_SIZE,
            source: SourceChoice::Auto,
            map_limit: None,
            release_threshold: DEFAULT_RELEASE_THRESHOLD,
            path: None,
            block_scan: true,
            read_ahead: None,
            decompress: Decompress::Auto,
        }
    }

    /// Whether to scan 64-byte blocks with SIMD bitmasks (default on).
    /// The output is identical either way: records the block scanner
    /// cannot prove regular go through the byte state machine. Turning it
    /// off is for comparisons and tests.
    ///
    /// ```
    /// let data = b"a,b\n\"x\"\"y\",2\n";
    /// let on = fastcsv::ReaderBuilder::new().from_slice(data).count_rows().unwrap();
    /// let off = fastcsv::ReaderBuilder::new().block_scan(false).from_slice(data).count_rows().unwrap();
    /// assert_eq!((on, off), (1, 1));
    /// ```
    pub fn block_scan(&mut self, on: bool) -> &mut Self {
        self.block_scan = on;
        self
    }

    /// Whether a helper thread works ahead of the parser: for files read
    /// with `read()`, it reads up to 6 MiB ahead (32 chunks of the default
    /// 128 KiB, at least 2 chunks), so that the kernel's copy overlaps
    /// parsing (a regular file is read at offsets, `pread`, and when the
    /// next chunk is not there yet the parser reads a later one itself
    /// rather than wait, so the two threads share the copy); for a mapped
    /// file (on Linux 5.14 or later), it has the kernel map the file's
    /// pages (`MADV_POPULATE_READ`) before the parser gets there, so that
    /// the parser takes no page faults: the rest of the file when
    /// [`Reader::count_rows`] counts, and up to 32 MiB ahead of the parser
    /// while it reads rows, started by the first (the gains are in
    /// `docs/BENCHMARKS.md`). The rows, counts,
    /// errors and positions are the same either way.
    ///
    /// By default (without this call) it is on for a file opened by
    /// [`from_path`](Self::from_path) or [`from_file`](Self::from_file)
    /// when the process may use two CPUs or more, and the file is a pipe,
    /// FIFO, terminal or other stream, or a regular file with at least
    /// [`READ_AHEAD_MIN`](crate::READ_AHEAD_MIN) bytes left (for less,
    /// starting a thread costs more than it saves); files reporting size 0
    /// (`/proc`) are read in place. A mapped file's helper then starts
    /// only if the file's second MiB (from where the reader starts) took
    /// many page faults to map (the file sits in the page cache in small
    /// folios) or had to be read from the disk: where the kernel maps large
    /// folios a fault at a time, the helper would cost more CPU than the
    /// faults it spares. `true` uses the thread for every such file,
    /// `false` never. [`from_reader`](Self::from_reader) and slices
    /// never use it. [`Reader::reads_ahead`] says which was chosen.
    ///
    /// The overlap needs a free core: on a machine whose cores are all busy
    /// with other processes the two threads take turns, and reading ahead
    /// is slower than reading in place (`docs/BENCHMARKS.md` has both
    /// cases); `false` is the choice there.
    ///
    /// Dropping the reader stops the thread: for a regular file the drop
    /// waits for the read in progress (at most one buffer); a thread
    /// blocked reading a pipe that no one writes is left to finish that
    /// `read()` on its own, holding the pipe open until then.
    ///
    /// ```
    /// let p = std::env::temp_dir().join("fastcsv-doc-read-ahead.csv");
    /// std::fs::write(&p, "a,b\n1,2\n").unwrap();
    /// let mut b = fastcsv::ReaderBuilder::new();
    /// b.source(fastcsv::SourceChoice::Buffered);
    /// let mut on = b.read_ahead(true).from_path(&p).unwrap();
    /// let mut off = b.read_ahead(false).from_path(&p).unwrap();
    /// assert!(on.reads_ahead() && !off.reads_ahead());
    /// assert_eq!(on.count_rows().unwrap(), off.count_rows().unwrap());
    /// ```
    pub fn read_ahead(&mut self, on: bool) -> &mut Self {
        self.read_ahead = Some(on);
        self
    }

    /// The dialect to parse with.
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().dialect(d).from_slice(b"x\n");
    /// assert!(rdr.read_row().unwrap().is_some());
    /// ```
    pub fn dialect(&mut self, d: Dialect) -> &mut Self {
        self.dialect = d;
        self
    }

    /// Initial size of the `read()` buffer (default 128 KiB).
    ///
    /// ```
    /// let mut rdr = fastcsv::ReaderBuilder::new().buffer_size(1).from_reader(&b"a\nb\n"[..]);
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"b"[..]));
    /// ```
    pub fn buffer_size(&mut self, n: usize) -> &mut Self {
        self.buffer_size = n.max(1);
        self
    }

    /// Largest the buffer may grow to hold one record (default 512 MiB).
    ///
    /// ```
    /// let mut rdr = fastcsv::ReaderBuilder::new()
    ///     .buffer_size(4).max_buffer_size(8).from_reader(&b"h\n0123456789abc\n"[..]);
    /// assert!(rdr.read_row().is_err());
    /// ```
    pub fn max_buffer_size(&mut self, n: usize) -> &mut Self {
        self.max_buffer_size = n.max(1);
        self
    }

    /// How to read files opened by path (default automatic).
    ///
    /// ```
    /// let b = fastcsv::ReaderBuilder::new().source(fastcsv::SourceChoice::Mmap).clone();
    /// ```
    pub fn source(&mut self, s: SourceChoice) -> &mut Self {
        self.source = s;
        self
    }

    /// Files larger than this are read, not mapped, under
    /// [`SourceChoice::Auto`] (default: the memory free when the file is
    /// opened, `sysconf(_SC_AVPHYS_PAGES)`; this leaves out the page cache,
    /// so it errs toward reading, which costs little: see
    /// `docs/mmap-vs-read.md`).
    ///
    /// ```
    /// let b = fastcsv::ReaderBuilder::new().map_limit(1 << 30).clone();
    /// ```
    pub fn map_limit(&mut self, bytes: u64) -> &mut Self {
        self.map_limit = Some(bytes);
        self
    }

    /// Mapped files at least this large give back the pages they have
    /// parsed, every 16 MiB (`madvise(MADV_DONTNEED)`), so that the
    /// process's resident memory stays small however large the file is
    /// (at most 16 MiB behind the parser, and with the helper of
    /// [`read_ahead`](Self::read_ahead) 32 MiB ahead of it)
    /// (default [`DEFAULT_RELEASE_THRESHOLD`], 64 MiB; `u64::MAX` never
    /// releases). Files larger than the memory available are also dropped
    /// from the page cache as they are parsed (`POSIX_FADV_DONTNEED`); they
    /// would not stay cached anyway.
    ///
    /// ```
    /// let b = fastcsv::ReaderBuilder::new().release_threshold(u64::MAX).clone();
    /// ```
    pub fn release_threshold(&mut self, bytes: u64) -> &mut Self {
        self.release_threshold = bytes;
        self
    }

    /// Whether to decompress input (default [`Decompress::Auto`]: gzip,
    /// zstd, bzip2 and xz input, known by its first bytes, see
    /// [`Codec`](crate::Codec)). A compressed file is decoded into the
    /// `read()` buffer, on the read-ahead thread when there is one (see
    /// [`read_ahead`](Self::read_ahead); it then decodes chunks of at least
    /// 1 MiB, whatever the buffer size), and never mapped: its
    /// [`source_reason`](Reader::source_reason) is
    /// [`SourceReason::Compressed`]. [`from_reader`](Self::from_reader)
    /// looks at the first bytes on its first read and decodes on the
    /// parsing thread (a generic reader cannot be sent to another); its
    /// reason stays [`SourceReason::NotAFile`]. Byte positions in rows and
    /// errors count decompressed bytes; a decoding error is
    /// [`ErrorKind::Decompress`], with the offset in the compressed file.
    ///
    /// ```
    /// use std::io::Write;
    /// let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    /// gz.write_all(b"a,b\n1,2\n").unwrap();
    /// let gz = gz.finish().unwrap();
    /// let p = std::env::temp_dir().join("fastcsv-doc-decompress.csv.gz");
    /// std::fs::write(&p, &gz).unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().from_path(&p).unwrap();
    /// assert_eq!(rdr.source_reason(), fastcsv::SourceReason::Compressed(fastcsv::Codec::Gzip));
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(1), Some(&b"2"[..]));
    /// // Off: the bytes as they are (here, not one valid row).
    /// let mut raw = fastcsv::ReaderBuilder::new().decompress(fastcsv::Decompress::Off).from_reader(&gz[..]);
    /// assert_ne!(raw.read_row().ok().flatten().and_then(|r| r.get(1).map(<[u8]>::to_vec)), Some(b"2".to_vec()));
    /// ```
    pub fn decompress(&mut self, d: Decompress) -> &mut Self {
        self.decompress = d;
        self
    }

    /// The name to show in errors for inputs that are not opened by path
    /// (`from_reader`, `from_file`).
    ///
    /// ```
    /// let d = fastcsv::Dialect::builder().strict(true).build().unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().dialect(d).path("in.csv").from_slice(b"\"x");
    /// let e = rdr.read_row().unwrap_err();
    /// assert!(e.to_string().starts_with("in.csv:1:"));
    /// ```
    pub fn path(&mut self, p: impl AsRef<Path>) -> &mut Self {
        self.path = Some(p.as_ref().to_path_buf());
        self
    }

    /// The dialect these settings read with.
    pub(crate) fn dialect_ref(&self) -> &Dialect {
        &self.dialect
    }

    /// Reads an in-memory slice; rows borrow it.
    ///
    /// ```
    /// let mut rdr = fastcsv::ReaderBuilder::new().from_slice(b"a\n1\n");
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"1"[..]));
    /// ```
    pub fn from_slice<'a>(&self, data: &'a [u8]) -> Reader<'a> {
        Reader::new(self, Src::Slice(data), SourceKind::Slice, SourceReason::NotAFile, 0)
    }

    /// Reads any `io::Read` through the rolling buffer.
    ///
    /// The stream must be `Send`, so that the reader is too: it can be
    /// moved to another thread.
    ///
    /// ```
    /// let data = std::io::Cursor::new(b"a\n1\n".to_vec());
    /// let mut rdr = fastcsv::ReaderBuilder::new().from_reader(data);
    /// let row = std::thread::spawn(move || rdr.read_row().unwrap().unwrap().to_owned());
    /// assert_eq!(row.join().unwrap().get(0), Some(&b"1"[..]));
    /// ```
    pub fn from_reader<'a, R: Read + Send + 'a>(&self, rdr: R) -> Reader<'a> {
        let rdr: Box<dyn Read + Send + 'a> = match self.decompress {
            Decompress::Off => Box::new(rdr),
            d => Box::new(source::decompress::Sniff::new(rdr, d)),
        };
        let buf = ReadBuffer::new(rdr, self.buffer_size, self.max_buffer_size);
        Reader::new(self, Src::Read(buf), SourceKind::Buffered, SourceReason::NotAFile, 0)
    }

    /// Opens a path: mapped or buffered as [`SourceChoice`] says.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join("fastcsv-doc-from-path.csv");
    /// std::fs::write(&dir, "a,b\n1,2\n").unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().from_path(&dir).unwrap();
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(1), Some(&b"2"[..]));
    /// ```
    pub fn from_path(&self, path: impl AsRef<Path>) -> Result<Reader<'static>> {
        let path = path.as_ref();
        let file = source::open_path(path)?;
        let mut b = self.clone();
        b.path = Some(path.to_path_buf());
        b.from_file(file)
    }

    /// Reads an open file from its current position: mapped or buffered as
    /// [`SourceChoice`] says.
    ///
    /// ```
    /// use std::io::{Seek, SeekFrom, Write};
    /// let p = std::env::temp_dir().join("fastcsv-doc-from-file.csv");
    /// std::fs::write(&p, "skip me\na\n1\n").unwrap();
    /// let mut f = std::fs::File::open(&p).unwrap();
    /// f.seek(SeekFrom::Start(8)).unwrap();
    /// let mut rdr = fastcsv::ReaderBuilder::new().from_file(f).unwrap();
    /// assert_eq!(rdr.read_row().unwrap().unwrap().get(0), Some(&b"1"[..]));
    /// ```
    pub fn from_file(&self, file: File) -> Result<Reader<'static>> {
        self.open_file_upto(file, None)
    }

    /// Reads one part of a split file (see [`crate::split`]): the records
    /// that start in `part.start..part.end`, with the line and record
    /// numbers (and so the errors) of a read of the whole file. Parts after
    /// the first have no header row and no byte-order mark, and hold their
    /// records to `part.width` fields unless the dialect is flexible.
    ///
    /// ```
    /// use fastcsv::{split::Splitter, Dialect, ReaderBuilder};
    /// let p = std::env::temp_dir().join("fastcsv-doc-from-path-part.csv");
    /// std::fs::write(&p, "name,note\na,\"x\ny\"\nb,z\n").unwrap();
    /// let d = Dialect::default();
    /// let parts = Splitter::new(&d).split_path(&p, 12).unwrap();
    /// let mut rdr = ReaderBuilder::new().dialect(d).from_path_part(&p, &parts[1]).unwrap();
    /// let row = rdr.read_row().unwrap().unwrap();
    /// assert_eq!((row.get(0), row.position().line), (Some(&b"b"[..]), 4));
    /// assert!(rdr.read_row().unwrap().is_none());
    /// ```
    pub fn from_path_part(&self, path: impl AsRef<Path>, part: &Part) -> Result<Reader<'static>> {
        use std::io::{Read, Seek, SeekFrom};
        let path = path.as_ref();
        let mut file = source::open_path(path)?;
        let io = |e: std::io::Error| Error::from(e).with_path(path);
        // A file now shorter than the part is not the file that was split:
        // the change is reported at the part's first record.
        let changed = || {
            let pos = Position { byte: part.start, line: part.lines + 1, record: part.records };
            Err(Error::new(ErrorKind::FileChanged).with_position(pos).with_path(path))
        };
        let len = file.metadata().map_err(io)?.len();
        if len < part.end {
            return changed();
        }
        file.seek(SeekFrom::Start(part.start)).map_err(io)?;
        let mut b = self.for_part(part);
        b.path = Some(path.to_path_buf());
        let mut rdr = b.open_file_upto(file, Some(part.end.saturating_sub(part.start)))?;
        // A file that grew is read as it was split, unless the part ends
        // inside a record (the last one of a file with no line end at its
        // end, or one whose quoted field was still open): that record now
        // runs on past the part, and reading up to the part's end would
        // make a value the file never held.
        // (Checked once the reader is made, which refuses a compressed
        // file first; through a handle of its own, whose position is not
        // the reader's.)
        if len > part.end && part.end > part.start {
            let mut probe = source::open_path(path)?;
            let mut last = [0u8];
            probe.seek(SeekFrom::Start(part.end - 1)).map_err(io)?;
            probe.read_exact(&mut last).map_err(io)?;
            let ended = match self.dialect.terminator {
                Terminator::Any => matches!(last[0], b'\n' | b'\r'),
                Terminator::Byte(t) => last[0] == t,
            };
            if !ended {
                return changed();
            }
            // A last byte that is a line end may still be inside quotes:
            // the reader finds that at the part's end (`part_goes_on`),
            // which costs nothing before it.
            rdr.part_goes_on = true;
        }
        rdr.enter_part(part);
        Ok(rdr)
    }

    /// Reads one part of a split slice (see [`crate::split`]), as
    /// [`ReaderBuilder::from_path_part`] does a file's.
    ///
    /// ```
    /// use fastcsv::{split::Splitter, Dialect, ReaderBuilder};
    /// let input = b"k\n1\n2\n3\n";
    /// let parts = Splitter::new(&Dialect::default()).split_slice(input, 3).unwrap();
    /// let mut n = 0;
    /// for p in &parts {
    ///     let mut rdr = ReaderBuilder::new().from_slice_part(input, p).unwrap();
    ///     while rdr.read_row().unwrap().is_some() {
    ///         n += 1;
    ///     }
    /// }
    /// assert_eq!(n, 3);
    /// ```
    pub fn from_slice_part<'a>(&self, data: &'a [u8], part: &Part) -> Result<Reader<'a>> {
        let (start, end) = (part.start as usize, part.end as usize);
        if part.start > part.end || end > data.len() {
            return Err(Error::config(format!(
                "part {}..{} is not within the input's {} bytes",
                part.start,
                part.end,
                data.len()
            )));
        }
        let b = self.for_part(part);
        let src = Src::Slice(&data[..end]);
        let mut rdr = Reader::new(&b, src, SourceKind::Slice, SourceReason::NotAFile, start);
        rdr.enter_part(part);
        Ok(rdr)
    }

    /// These settings for reading `part`: after the first, no header row
    /// or byte-order mark.
    fn for_part(&self, part: &Part) -> ReaderBuilder {
        let mut b = self.clone();
        if part.start > 0 {
            b.dialect.headers = false;
            b.dialect.strip_bom = false;
        }
        b
    }

    /// [`ReaderBuilder::from_file`], seeing at most `limit` bytes.
    fn open_file_upto(&self, mut file: File, limit: Option<u64>) -> Result<Reader<'static>> {
        let with_path = |e: Error| match &self.path {
            Some(p) => e.with_path(p),
            None => e,
        };
        let avail = source::default_map_limit();
        let limits = source::Limits {
            map_limit: self.map_limit.unwrap_or(avail),
            release_threshold: self.release_threshold,
            avail,
        };
        // Where to start in a mapping (the file's current position).
        let offset = file.stream_position().unwrap_or(0);
        if let Some(codec) = self.codec_of(&file, offset).map_err(with_path)? {
            if limit.is_some() {
                let msg = format!(
                    "a {codec}-compressed file has no byte ranges of its CSV: decompress it first"
                );
                return Err(with_path(Error::config(msg)));
            }
            return self.open_compressed(file, codec, offset).map_err(with_path);
        }
        let (kind, reason, src) = source::choose(file, self.source, &limits);
        match src {
            Ok(mut m) => {
                if let Some(n) = limit {
                    m.limit(usize::try_from(offset.saturating_add(n)).unwrap_or(usize::MAX));
                }
                let offset = (offset as usize).min(m.bytes().len());
                let ahead = self.read_ahead_for(Some((m.bytes().len() - offset) as u64));
                // Under the automatic rule, the helper that maps pages
                // ahead starts only where it saves the parser faults.
                m.allow_fault_ahead(ahead, self.read_ahead.is_none());
                Ok(Reader::new(self, Src::Mapped(m), kind, reason, offset))
            }
            Err(file) => {
                // A directory opens fine on Unix but cannot be read: say so now.
                if file.metadata().is_ok_and(|m| m.is_dir()) {
                    let e = std::io::Error::from_raw_os_error(libc::EISDIR);
                    return Err(with_path(e.into()));
                }
                let meta = file.metadata().ok().filter(|m| m.is_file());
                let regular = meta.as_ref().map(|m| m.len());
                let pseudo = meta.as_ref().is_some_and(no_blocks);
                // One descriptor, shared by the reads and, for a regular
                // file, the check of its end against its size at open (see
                // `Reader::check_end`).
                let file = Arc::new(file);
                let file_end = regular.map(|size| FileEnd {
                    file: Arc::clone(&file),
                    size,
                    end: limit.map_or(size, |n| size.min(offset.saturating_add(n))),
                    pseudo,
                });
                let ahead = self.read_ahead_for(regular.map(|len| len.saturating_sub(offset)));
                let (size, max) = (self.buffer_size, self.max_buffer_size);
                // A regular file's reads are checked against its size, so
                // that a read racing a truncation hands out no zeros (see
                // `source::checked`).
                let checked = regular
                    .filter(|_| !pseudo)
                    .map(|size| Arc::new(source::CheckedFile::new(Arc::clone(&file), size)));
                let stream = |file: Arc<File>| -> Box<dyn Read + Send> {
                    match &checked {
                        Some(c) => Box::new(source::CheckedStream::new(Arc::clone(c), offset)),
                        None => self.stream(file, regular.is_some()),
                    }
                };
                let buf = if let Some(n) = limit {
                    ReadBuffer::new(Box::new(stream(file).take(n)), size, max)
                } else if ahead {
                    // Only a regular file's `read()` is sure to return: join
                    // the thread on drop for those alone. A regular file is
                    // read at offsets, by the thread and by the parser.
                    let input = match (regular, &checked) {
                        #[cfg(unix)]
                        (_, Some(c)) => source::Input::At(Arc::clone(c) as _, offset),
                        #[cfg(unix)]
                        (Some(_), None) => source::Input::At(file, offset),
                        _ => source::Input::Stream(stream(file)),
                    };
                    ReadBuffer::read_ahead(input, size, max, regular.is_some())
                } else {
                    ReadBuffer::new(stream(file), size, max)
                };
                let mut rdr = Reader::new(self, Src::Read(buf), kind, reason, 0);
                // Byte positions are the file's offsets, as when mapped.
                rdr.base = offset;
                rdr.file_end = file_end;
                Ok(rdr)
            }
        }
    }
}
