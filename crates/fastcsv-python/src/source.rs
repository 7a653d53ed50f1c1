//! Inputs read natively: a binary Python stream read through its `read`
//! method, and the path, descriptor or stream the Python layer resolved
//! the input to, opened with the core reader.

use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use fastcsv::{Codec, Decompress, Filter, Reader as CoreReader, ReaderBuilder, SourceChoice};

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
pub(crate) struct HeldReader(Mutex<CoreReader<'static>>);

impl HeldReader {
    pub(crate) fn new(rdr: CoreReader<'static>) -> HeldReader {
        HeldReader(Mutex::new(rdr))
    }

    pub(crate) fn get(&mut self) -> &mut CoreReader<'static> {
        // Never locked, so never poisoned.
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn into_inner(self) -> CoreReader<'static> {
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
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
    /// One part of a split file (`path`): index, start, end, lines,
    /// records.
    pub(crate) part: Option<fastcsv::split::Part>,
    /// Whether and how compressed input is decoded (`compression=`).
    decompress: Decompress,
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
        Ok(Spec {
            decompress,
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
        let rdr = match &spec.part {
            Some(part) => b.from_path_part(p, part),
            None => b.from_path(p),
        };
        return rdr.map(HeldReader::new).map_err(|e| map_error(e, &no_stash));
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
    b.from_file(file).map(HeldReader::new).map_err(|e| map_error(e, &none))
}
