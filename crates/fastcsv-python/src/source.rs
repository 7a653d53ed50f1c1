//! Inputs read natively: a binary Python stream read through its `read`
//! method, and the path, descriptor or stream the Python layer resolved
//! the input to, opened with the core reader.

use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use fastcsv::{
    Codec, Decompress, Error as CoreError, ErrorKind, Filter, Position, Reader as CoreReader,
    ReaderBuilder, SourceChoice, SourceKind,
};

use crate::dialect::{core_limit, field_limit, parse_filter, PyDialect};
use crate::errors::{io_error, map_error, PyErrStash};

/// Bytes a stream's reader was given but could not hand out yet (they did
/// not fit the caller's buffer): `buf[off..]`.
#[derive(Default)]
pub(crate) struct Spill {
    buf: Vec<u8>,
    off: usize,
}

impl Spill {
    /// Bytes left.
    pub(crate) fn len(&self) -> usize {
        self.buf.len() - self.off
    }

    /// Copies what is left into `out`; `None` when nothing is.
    pub(crate) fn drain_into(&mut self, out: &mut [u8]) -> Option<usize> {
        if self.len() == 0 {
            return None;
        }
        let n = self.len().min(out.len());
        out[..n].copy_from_slice(&self.buf[self.off..self.off + n]);
        self.off += n;
        Some(n)
    }

    /// Copies as much of `b` into `out` as fits and keeps the rest (none
    /// may be left from before).
    pub(crate) fn hand_out(&mut self, b: &[u8], out: &mut [u8]) -> usize {
        let n = b.len().min(out.len());
        out[..n].copy_from_slice(&b[..n]);
        self.buf.clear();
        self.buf.extend_from_slice(&b[n..]);
        self.off = 0;
        n
    }
}

/// A binary Python stream read through its `read(n)` method.
///
/// What `read` returns is taken whole: bytes beyond the `n` asked for (a
/// stream that does not keep to the contract) wait in `spill` for the
/// next call, and any object with the buffer protocol (`bytearray`,
/// `memoryview`) is read like `bytes`.
pub(crate) struct PyStream {
    /// The stream's `read1` when it has one (buffered streams: returns what
    /// is available after at most one raw read, so rows from a pipe are not
    /// held back until a whole buffer is full), else its `read`.
    read: Py<PyAny>,
    /// The stream's `read` while `read` is its `read1`: taken instead if
    /// `read1` raises `io.UnsupportedOperation` (an `io.BufferedIOBase`
    /// subclass that only implements `read`).
    plain_read: Option<Py<PyAny>>,
    /// Bytes returned but not handed out yet.
    spill: Spill,
    stash: PyErrStash,
}

impl PyStream {
    pub(crate) fn new(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        stash: &PyErrStash,
    ) -> PyResult<PyStream> {
        let read = obj.getattr(intern!(py, "read"))?;
        let (read, plain_read) = match obj.getattr(intern!(py, "read1")) {
            Ok(read1) => (read1, Some(read.unbind())),
            Err(_) => (read, None),
        };
        Ok(PyStream {
            read: read.unbind(),
            plain_read,
            spill: Spill::default(),
            stash: stash.clone(),
        })
    }

    /// Calls `read(n)`; `None` for a non-blocking stream with no data yet.
    fn call_read<'py>(&mut self, py: Python<'py>, n: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let r = match self.read.bind(py).call1((n,)) {
            Err(e) if self.plain_read.is_some() && is_unsupported(py, &e) => {
                // `read1` is not there after all: `read` from now on.
                self.read = self.plain_read.take().unwrap_or_else(|| self.read.clone_ref(py));
                self.read.bind(py).call1((n,))?
            }
            r => r?,
        };
        Ok((!r.is_none()).then_some(r))
    }

    /// The next bytes of the stream into `buf`; `None` when a non-blocking
    /// stream has none yet.
    fn read_some(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<Option<usize>> {
        if let Some(n) = self.spill.drain_into(buf) {
            return Ok(Some(n));
        }
        let Some(r) = self.call_read(py, buf.len())? else {
            return Ok(None);
        };
        if let Ok(b) = r.downcast::<PyBytes>() {
            return Ok(Some(self.spill.hand_out(b.as_bytes(), buf)));
        }
        match pyo3::buffer::PyBuffer::<u8>::get(&r) {
            Ok(pb) => Ok(Some(self.spill.hand_out(&pb.to_vec(py)?, buf))),
            Err(_) => {
                let name = r.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                Err(PyTypeError::new_err(format!("read() should return bytes, not {name}")))
            }
        }
    }
}

/// Whether `e` is an `io.UnsupportedOperation`.
fn is_unsupported(py: Python<'_>, e: &PyErr) -> bool {
    py.import("io")
        .and_then(|io| io.getattr("UnsupportedOperation"))
        .is_ok_and(|t| e.matches(py, t).unwrap_or(false))
}

impl Read for PyStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::with_gil(|py| match self.read_some(py, buf) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err(io::Error::new(io::ErrorKind::WouldBlock, "no data")),
            Err(e) => {
                self.stash.put(e);
                Err(io::Error::other("exception in read()"))
            }
        })
    }
}

/// A core reader kept by a Python object or handed to a thread. The
/// reader is `Send`; the `Mutex` only makes it `Sync` too, as a `#[pyclass]`
/// must be (its stream need not be `Sync`). It is reached through
/// `&mut self` alone ([`Mutex::get_mut`]), so it is never locked.
pub(crate) struct HeldReader {
    rdr: Mutex<CoreReader<'static>>,
    cancel: Cancel,
    watch: Option<Watch>,
    /// The watch reported a change: nothing more is read.
    pub(crate) stopped: bool,
}

/// A file read with `read()` (not mapped), watched for shrinking: the
/// file, and the size it must keep (its size when opened, or the end of
/// the part read).
pub(crate) struct Watch {
    file: File,
    size: u64,
}

impl Watch {
    /// A second handle on the regular file at `path`, opened before its
    /// reader opens it; `None` for anything else.
    pub(crate) fn path(path: &std::path::Path) -> Option<Watch> {
        watch(File::open(path).ok()?, None)
    }

    /// Whether the file is now shorter than it must be.
    fn shrank(&self) -> bool {
        self.file.metadata().is_ok_and(|m| m.len() < self.size)
    }
}

/// An Arrow batch source over a file, which fails with `FileChanged` (naming
/// `path`) rather than hand out a batch once the file is shorter than when
/// it was opened: the batch may hold a record cut short by the new end.
/// The core sees a mapped file shrink; a file read with `read()` ends
/// early, which only its size tells.
pub(crate) struct Watched<S> {
    inner: S,
    watch: Option<Watch>,
    path: Option<std::path::PathBuf>,
    stopped: bool,
}

impl<S> Watched<S> {
    pub(crate) fn new(inner: S, watch: Option<Watch>, path: Option<std::path::PathBuf>) -> Self {
        Watched { inner, watch, path, stopped: false }
    }
}

impl<S: fastcsv::arrow::ffi::BatchSource> fastcsv::arrow::ffi::BatchSource for Watched<S> {
    fn names(&self) -> &[String] {
        self.inner.names()
    }
    fn types(&self) -> Vec<fastcsv::arrow::DataType> {
        self.inner.types()
    }
    fn next_batch(&mut self) -> fastcsv::Result<Option<fastcsv::arrow::ColumnBatch>> {
        if self.stopped {
            return Ok(None);
        }
        let got = self.inner.next_batch();
        if self.watch.as_ref().is_some_and(Watch::shrank) {
            self.stopped = true;
            let e = CoreError::new(ErrorKind::FileChanged);
            return Err(match &self.path {
                Some(p) => e.with_path(p),
                None => e,
            });
        }
        got
    }
}

impl HeldReader {
    pub(crate) fn new(rdr: CoreReader<'static>) -> HeldReader {
        HeldReader { rdr: Mutex::new(rdr), cancel: Cancel::default(), watch: None, stopped: false }
    }

    /// The switch that makes a blocked read of this reader's input (a
    /// FIFO, see [`PolledFifo`]) give up, for a consumer that stops
    /// waiting for it.
    pub(crate) fn cancel(&self) -> Cancel {
        self.cancel.clone()
    }

    pub(crate) fn get(&mut self) -> &mut CoreReader<'static> {
        // Never locked, so never poisoned.
        self.rdr.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// The reader and its watch, if any.
    pub(crate) fn into_parts(self) -> (CoreReader<'static>, Option<Watch>) {
        let w = self.watch;
        (self.rdr.into_inner().unwrap_or_else(PoisonError::into_inner), w)
    }

    /// Fails with `FileChanged` when the file under the reader shrank: a
    /// mapped file as the core sees it ([`CoreReader::check_unchanged`],
    /// asked only with `mapped`: not of a reader that reported the change
    /// and stopped), a file read with `read()` when it is now shorter than
    /// the size it had to keep (reported once). `at` is the position to
    /// report for the latter (the record the caller could not trust; by
    /// default the reader's next one).
    pub(crate) fn check_unchanged(
        &mut self,
        mapped: bool,
        at: Option<Position>,
    ) -> Result<(), CoreError> {
        if mapped {
            self.get().check_unchanged()?;
        }
        if !self.watch.as_ref().is_some_and(Watch::shrank) {
            return Ok(());
        }
        self.watch = None;
        self.stopped = true;
        let rdr = self.get();
        let pos = at.unwrap_or(Position {
            byte: rdr.byte_offset(),
            line: rdr.line() + 1,
            record: rdr.records_read(),
        });
        let mut e = CoreError::new(ErrorKind::FileChanged).with_position(pos);
        if let Some(p) = rdr.path() {
            e = e.with_path(p);
        }
        Err(e)
    }
}

/// A second handle on a regular file that a reader opened for `read()`,
/// to see it shrink; `size` is what it must keep (`None`: its size now).
fn watch(file: File, size: Option<u64>) -> Option<Watch> {
    let m = file.metadata().ok().filter(|m| m.is_file())?;
    Some(Watch { file, size: size.unwrap_or(m.len()) })
}

/// A switch, shared by a consumer and the input it reads, that tells the
/// input to stop waiting: set when the consumer gives up (an exception
/// while it waits, or the reader going away).
#[derive(Clone, Default)]
pub(crate) struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How long a wait for input or for a read-ahead thread lasts before
/// Python's signal handlers get to run (Ctrl-C raises
/// `KeyboardInterrupt`).
pub(crate) const SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(100);

/// A FIFO (a named pipe, or `/dev/stdin` on a pipe) read without blocking
/// in the kernel for longer than [`SIGNAL_CHECK`], so that Ctrl-C
/// interrupts a read that waits for a writer: it is opened with
/// `O_NONBLOCK` (which does not wait for a writer either) and each read
/// first waits in `poll` for a writer's bytes or hang-up, 100 ms at a
/// time, checking for signals in between (on Python's main thread; other
/// threads' readers end when their consumer sets [`Cancel`]). Otherwise
/// it reads as a blocking descriptor does: nothing until a writer comes,
/// and the end once the writers have gone.
#[cfg(unix)]
pub(crate) struct PolledFifo {
    file: File,
    stash: PyErrStash,
    cancel: Cancel,
}

#[cfg(unix)]
impl PolledFifo {
    fn open(path: &std::path::Path, stash: &PyErrStash, cancel: Cancel) -> io::Result<PolledFifo> {
        use std::os::unix::fs::OpenOptionsExt;
        let file =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
        Ok(PolledFifo { file, stash: stash.clone(), cancel })
    }

    /// Waits until the FIFO has bytes or its writers hung up.
    fn wait(&self) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        loop {
            let mut p =
                libc::pollfd { fd: self.file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            let ms = SIGNAL_CHECK.as_millis() as libc::c_int;
            // SAFETY: `p` is one valid `pollfd` over a descriptor that
            // `self.file` keeps open.
            let n = unsafe { libc::poll(&mut p, 1, ms) };
            if n > 0 {
                return Ok(());
            }
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            if self.cancel.is_set() {
                return Err(io::Error::other("the reader was stopped"));
            }
            // On the main thread, runs the handlers of signals received
            // (elsewhere this does nothing: the consumer checks).
            if let Err(e) = Python::with_gil(|py| py.check_signals()) {
                self.stash.put(e);
                return Err(io::Error::other("interrupted by a signal"));
            }
        }
    }
}

#[cfg(unix)]
impl Read for PolledFifo {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            self.wait()?;
            match self.file.read(buf) {
                // Another reader of the FIFO took the bytes first.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                r => return r,
            }
        }
    }
}

/// Whether `path` names a FIFO (following links: `/dev/stdin`).
#[cfg(unix)]
fn is_fifo(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// What the Python layer resolved the input to, plus the native options.
pub(crate) struct Spec {
    pub(crate) path: Option<PathBuf>,
    /// A descriptor the Python layer created for us alone (now owned).
    pub(crate) fd: Option<File>,
    offset: u64,
    pub(crate) stream: Option<Py<PyAny>>,
    pub(crate) name: Option<String>,
    pub(crate) errors: String,
    pub(crate) filter: Filter,
    source: SourceChoice,
    buffer_size: Option<usize>,
    pub(crate) intern: bool,
    /// `threads=`: with 1, a row-by-row reader parses on the calling
    /// thread only (see `Ahead`).
    pub(crate) threads: Option<usize>,
    /// One part of a split file (`path`): index, start, end, lines,
    /// records.
    pub(crate) part: Option<fastcsv::split::Part>,
    /// Whether and how compressed input is decoded (`compression=`).
    decompress: Decompress,
    /// Where the records of input the Python layer rewrote started in
    /// the file, for errors (see `offsets`).
    pub(crate) byte_map: crate::offsets::ByteMap,
}

impl Spec {
    /// Reads the options. The descriptor, if any, is taken over first, so
    /// that it is closed whatever fails afterwards.
    pub(crate) fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<Spec> {
        fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, k: &str) -> PyResult<Option<T>> {
            match d.get_item(k)? {
                Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
                _ => Ok(None),
            }
        }
        let fd = match get::<i32>(d, "fd")? {
            Some(raw) => Some(take_fd(raw)?),
            None => None,
        };
        let source: Option<String> = get(d, "source")?;
        let source = match source.as_deref() {
            None => SourceChoice::Auto,
            Some(s) => SourceChoice::parse(s).ok_or_else(|| {
                PyValueError::new_err(format!("source must be 'auto', 'mmap' or 'read', not {s:?}"))
            })?,
        };
        let filter: Option<String> = get(d, "filter")?;
        let buffer_size: Option<usize> = get(d, "buffer_size")?;
        if buffer_size == Some(0) {
            return Err(PyValueError::new_err("buffer_size must be positive"));
        }
        let compression: Option<String> = get(d, "compression")?;
        let decompress = parse_compression(compression.as_deref())?;
        let byte_map = match d.get_item("byte_map")? {
            // The UTF-8 text of a file of one byte a character.
            Some(v) if v.is_instance_of::<PyBytes>() => {
                crate::offsets::ByteMap::chars(v.downcast::<PyBytes>()?.as_bytes().to_vec())
            }
            Some(v) if !v.is_none() => {
                let (p, f, r): (Bound<'_, PyBytes>, Bound<'_, PyBytes>, Bound<'_, PyBytes>) =
                    v.extract()?;
                crate::offsets::ByteMap::from_columns(p.as_bytes(), f.as_bytes(), r.as_bytes())?
            }
            _ => crate::offsets::ByteMap::default(),
        };
        Ok(Spec {
            decompress,
            byte_map,
            path: get(d, "path")?,
            fd,
            offset: get(d, "offset")?.unwrap_or(0),
            stream: get(d, "stream")?,
            name: get(d, "name")?,
            errors: get(d, "errors")?.unwrap_or_else(|| "strict".to_owned()),
            filter: parse_filter(filter.as_deref())?,
            source,
            buffer_size,
            intern: get(d, "intern")?.unwrap_or(false),
            threads: get(d, "threads")?,
            part: get::<(usize, u64, u64, u64, u64)>(d, "part")?.map(
                |(index, start, end, lines, records)| fastcsv::split::Part {
                    index,
                    start,
                    end,
                    lines,
                    records,
                    width: None,
                },
            ),
        })
    }
}

/// `compression=` as the core's [`Decompress`]: pandas' names (`'infer'`,
/// the default, detects the format by its magic bytes; `'none'` reads the
/// bytes as they are).
fn parse_compression(c: Option<&str>) -> PyResult<Decompress> {
    Ok(match c {
        None | Some("infer") => Decompress::Auto,
        Some("none") => Decompress::Off,
        Some("gzip") => Decompress::Force(Codec::Gzip),
        Some("zstd") => Decompress::Force(Codec::Zstd),
        Some("bz2") => Decompress::Force(Codec::Bzip2),
        Some("xz") => Decompress::Force(Codec::Xz),
        Some(s) => {
            return Err(PyValueError::new_err(format!(
                "compression must be 'infer', None, 'gzip', 'zstd', 'bz2' or 'xz', not {s:?}"
            )))
        }
    })
}

/// The core reader's settings for `spec`.
pub(crate) fn native_builder(
    py: Python<'_>,
    pd: &PyDialect,
    spec: &Spec,
) -> PyResult<ReaderBuilder> {
    let limit = core_limit(field_limit(py)?)?;
    let mut b = ReaderBuilder::new();
    b.dialect(pd.core(spec.filter, limit, true)?).source(spec.source).decompress(spec.decompress);
    if let Some(n) = spec.buffer_size {
        b.buffer_size(n);
    }
    if let Some(name) = &spec.name {
        b.path(name);
    }
    Ok(b)
}

/// Opens the input described by `spec` with the core reader.
pub(crate) fn open_native(
    py: Python<'_>,
    pd: &PyDialect,
    spec: &mut Spec,
    stash: &PyErrStash,
) -> PyResult<HeldReader> {
    let b = native_builder(py, pd, spec)?;
    let no_stash = PyErrStash::default();
    if let Some(file) = spec.fd.take() {
        return open_fd(&b, file, spec.offset);
    }
    if let Some(p) = &spec.path {
        #[cfg(unix)]
        if spec.part.is_none() && is_fifo(p) {
            let cancel = Cancel::default();
            let fifo = PolledFifo::open(p, stash, cancel.clone())
                .map_err(|e| io_error(e, Some(p.display().to_string())))?;
            let mut b = b;
            b.path(p);
            let rdr = Mutex::new(b.from_reader(fifo));
            return Ok(HeldReader { rdr, cancel, watch: None, stopped: false });
        }
        // Opened before the reader opens it, to know the size it had.
        let second = File::open(p).ok();
        let rdr = match &spec.part {
            Some(part) => b.from_path_part(p, part),
            None => b.from_path(p),
        };
        let mut rdr = rdr.map(HeldReader::new).map_err(|e| map_error(e, &no_stash))?;
        if rdr.get().source_kind() == SourceKind::Buffered {
            rdr.watch = second.and_then(|f| watch(f, spec.part.as_ref().map(|p| p.end)));
        }
        return Ok(rdr);
    }
    if let Some(obj) = &spec.stream {
        let s = PyStream::new(py, obj.bind(py), stash)?;
        return Ok(HeldReader::new(b.from_reader(s)));
    }
    Err(PyTypeError::new_err("no input given"))
}

/// Takes ownership of a raw descriptor.
#[cfg(unix)]
fn take_fd(raw: i32) -> PyResult<File> {
    use std::os::fd::FromRawFd;
    if raw < 0 {
        return Err(PyValueError::new_err("negative file descriptor"));
    }
    // SAFETY: the Python layer passes a descriptor it has just created
    // (os.open or os.dup) for us alone and never uses or closes it again;
    // from here on the `File` owns it and closes it on drop.
    Ok(unsafe { File::from_raw_fd(raw) })
}

#[cfg(not(unix))]
fn take_fd(_: i32) -> PyResult<File> {
    Err(PyValueError::new_err("file descriptors are supported on Unix only"))
}

/// Reads an owned file from `offset` on.
fn open_fd(b: &ReaderBuilder, mut file: File, offset: u64) -> PyResult<HeldReader> {
    use std::io::{Seek, SeekFrom};
    let none = PyErrStash::default();
    file.seek(SeekFrom::Start(offset)).map_err(|e| io_error(e, None))?;
    let second = file.try_clone().ok();
    let mut rdr = b.from_file(file).map(HeldReader::new).map_err(|e| map_error(e, &none))?;
    if rdr.get().source_kind() == SourceKind::Buffered {
        rdr.watch = second.and_then(|f| watch(f, None));
    }
    Ok(rdr)
}
