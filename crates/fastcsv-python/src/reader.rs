//! The reader class (`fastcsv._fastcsv.Reader`) behind `fastcsv.reader`,
//! over an iterable of lines, a native input or a text stream, row by row
//! or in batches parsed ahead on a second thread.

use std::cell::{Cell, RefCell};
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use pyo3::exceptions::{PyRuntimeError, PyUnicodeDecodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyIterator, PyList, PyString, PyType};
use pyo3::{ffi, intern};
use pyo3::{PyTraverseError, PyVisit};

use fastcsv::scan::{Fields, Scan, Scanner};
use fastcsv::{Dialect, ErrorKind, ReaderBuilder};

use crate::ahead::{Ahead, Next, Plan};
use crate::dialect::{core_limit, field_limit, parse_filter, PyDialect};
use crate::errors::{
    csv_error, exc, map_error, python_message, text_error, unsupported, PyErrStash,
};
use crate::source::{open_native, HeldReader, Spec};
use crate::strings::{build_list, line_str, list_from, row_to_list, to_float, StrMaker};
use crate::text::{FeedCell, Feeder, PyTextStream, RawText, Resume, TextOrigins};
use crate::utf8::OneByte;

/// State of a reader over an iterable of `str` lines.
struct LineSource {
    /// The iterator; `None` once the garbage collector cleared the reader
    /// (`PyReader::__clear__`).
    iter: Option<Py<PyIterator>>,
    scanner: Scanner,
    fields: Fields,
    /// Python's `line_num`: lines taken from the iterator. Shared, so
    /// that the input can read it while `__next__` asks it for a line
    /// (see [`Entered::show`]); only this source writes it.
    line_num: Arc<AtomicU64>,
    /// Objects made from the fields completed so far in this record.
    done: Vec<Py<PyAny>>,
    /// The current line's UTF-8, when the `str` has surrogates.
    buf: Vec<u8>,
    limit: i64,
    /// Decoding space for [`line_str`].
    scratch: Vec<u16>,
}

/// State of a reader over a native input.
struct NativeSource {
    rdr: HeldReader,
    strs: StrMaker,
    stash: PyErrStash,
    name: Option<String>,
    /// Set when this reader stands in for `csv.reader` over a text stream.
    text: Option<TextState>,
    /// Lines before the input's first (a text stream parsed again from a
    /// row, see [`TextAheadSource::reparse`]).
    line_base: u64,
}

/// What a reader over a text stream keeps beyond a native one: the limit
/// is read again before each row, as for `_lines_reader`, and errors carry
/// `csv`'s messages alone, without a position.
struct TextState {
    /// The `field_size_limit()` in use.
    limit: i64,
    /// Whether the stream is still read in raw mode (see [`RawText`]).
    raw_on: Arc<AtomicBool>,
    /// The stream, to see on each call whether it was closed.
    stream: Py<PyAny>,
    /// Tells whether the stream is closed.
    probe: Probe,
    /// Where the text came from in the stream.
    origins: Arc<TextOrigins>,
    /// Where to leave the stream if the reader goes away now; `None` once
    /// it ended (the stream is at its end then, as with `csv`), or after
    /// an exception from the stream (its position is not known).
    resume: Option<Resume>,
    /// The offset in the text of the core reader's first byte (a reader
    /// made by [`TextAheadSource::reparse`] starts inside the text).
    byte_base: u64,
}

enum Input {
    Lines(Box<LineSource>),
    Native(Box<NativeSource>),
    /// A path or descriptor: read by a [`Ahead`].
    Ahead(Box<AheadSource>),
    /// A large text stream, read ahead.
    TextAhead(Box<TextAheadSource>),
}

/// State of a reader over a text stream whose text is parsed by a
/// read-ahead thread, fed by the calling thread ([`Feeder`]). The thread
/// parses without a field size limit; each row is checked against the
/// limit in force when it is handed out (as `csv` reads it while parsing)
/// and when a field may exceed it, the reader turns into a row-by-row one
/// ([`NativeSource`]) from that row on ([`TextAheadSource::reparse`]). It
/// also does at the end of the text, to read the stream again on the next
/// call ([`TextAheadSource::follow`]).
struct TextAheadSource {
    ahead: Ahead,
    /// The stream's feeder (`None` in it once handed to the row-by-row
    /// reader).
    feed: FeedCell,
    strs: StrMaker,
    stash: PyErrStash,
    /// The dialect, for the row-by-row reader.
    dialect: Dialect,
    raw_on: Arc<AtomicBool>,
    /// The stream, to see on each call whether it was closed.
    stream: Py<PyAny>,
    /// Tells whether the stream is closed.
    probe: Probe,
    /// Where the text came from in the stream (the rows' positions are in
    /// `ahead.resume`).
    origins: Arc<TextOrigins>,
}

impl TextAheadSource {
    /// A row-by-row reader of the text from byte `at` (a record's start on
    /// line `line`) on, with the field size limit now in force.
    fn reparse(&mut self, py: Python<'_>, at: u64, line: u64) -> PyResult<Box<NativeSource>> {
        let Some(feed) = self.take_feed() else {
            return Err(PyRuntimeError::new_err("fastcsv: the text stream is gone"));
        };
        let Some(pre) = feed.kept_from(at) else {
            return Err(PyRuntimeError::new_err("fastcsv: the text to parse again is gone"));
        };
        self.row_by_row(py, feed, pre, line.saturating_sub(1))
    }

    /// At the end of the text, every row handed out: a row-by-row reader of
    /// what the stream gives from now on, whose next call reads it again,
    /// as `csv.reader` does (see `NativeSource::follow`). `None` when the
    /// stream's `read` raised: the reader stays at its end.
    fn follow(&mut self, py: Python<'_>) -> PyResult<Option<Box<NativeSource>>> {
        if !self.feed.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(|f| f.ended) {
            return Ok(None);
        }
        let Some(feed) = self.take_feed() else { return Ok(None) };
        let line = self.ahead.line;
        self.row_by_row(py, feed, Vec::new(), line).map(Some)
    }

    /// The feeder, taken from its cell (the scan no longer reads with it).
    fn take_feed(&mut self) -> Option<Feeder> {
        self.feed.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// A row-by-row reader of `pre` and then the rest of `feed`'s stream,
    /// its lines counted from `line_base` on, with the field size limit now
    /// in force. The read-ahead thread ends (its channels close).
    fn row_by_row(
        &mut self,
        py: Python<'_>,
        feed: Feeder,
        pre: Vec<u8>,
        line_base: u64,
    ) -> PyResult<Box<NativeSource>> {
        self.ahead = Ahead::new_done();
        let limit = field_limit(py)?;
        // The kept bytes, then the stream: the new reader's first byte is
        // this byte of the text.
        let byte_base = feed.stream.handed_out() - pre.len() as u64;
        let replay = io::Cursor::new(pre).chain(feed.stream);
        let mut rdr = ReaderBuilder::new()
            .dialect(self.dialect.clone())
            .max_buffer_size(usize::MAX)
            .from_reader(replay);
        // As `NativeSource::next` sets it: below 1, every character fails.
        rdr.set_field_limit(Some(limit.max(0) as u64));
        Ok(Box::new(NativeSource {
            rdr: HeldReader::new(rdr),
            strs: std::mem::replace(&mut self.strs, StrMaker::new("surrogatepass", false)?),
            stash: self.stash.clone(),
            name: None,
            text: Some(TextState {
                limit,
                raw_on: self.raw_on.clone(),
                stream: self.stream.clone_ref(py),
                probe: self.probe.clone_ref(py),
                origins: self.origins.clone(),
                resume: self.ahead.resume,
                byte_base,
            }),
            line_base,
        }))
    }
}

/// State of a reader over a path or descriptor, whose reading calls no
/// Python code and may run ahead on a second thread.
struct AheadSource {
    ahead: Ahead,
    strs: StrMaker,
    stash: PyErrStash,
    name: Option<String>,
}

/// A CSV reader: iterate it for rows (`list[str]`), like `_csv.reader`.
#[pyclass(module = "fastcsv._fastcsv", name = "Reader")]
pub struct PyReader {
    /// The validated `_csv.Dialect` in use (the `dialect` getter).
    dialect: Py<PyAny>,
    nonnumeric: bool,
    input: Input,
}

/// A reader over a text stream that goes away before the end of the text
/// (in CPython at once for `next(fastcsv.reader(f))`, and when a `for` loop
/// over a reader made in its header is left by `break`) puts the stream
/// back where `csv.reader` would have left it: after the line end of the
/// last row handed out (or of the line an error was raised on), so that
/// what reads the stream next (another reader, `f.read()`, `for line in
/// f`) starts at the next row, as with `csv`. See [`TextOrigins`].
///
/// Nothing is done when the reader ended, the stream was closed or moved
/// by the caller after the reader's last read from it (`tell()` is not
/// where that read left it; a move between two reads of the reader is not
/// seen), or a position is not known. A destructor cannot raise:
/// errors are swallowed, and an exception in flight (the reader may go
/// away while one unwinds the frame that held it) is kept aside meanwhile.
impl Drop for PyReader {
    fn drop(&mut self) {
        let (origins, resume) = match &self.input {
            Input::Native(s) => match &s.text {
                Some(t) => (&t.origins, t.resume),
                None => return,
            },
            Input::TextAhead(s) => (&s.origins, s.ahead.resume),
            Input::Lines(_) | Input::Ahead(_) => return,
        };
        let Some(resume) = resume else {
            return;
        };
        Python::with_gil(|py| {
            let (mut ty, mut value, mut tb) =
                (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: the GIL is held (`with_gil`); `PyErr_Fetch` moves the
            // references of the exception in flight, if any (else nulls),
            // into the three pointers and clears it. (Deprecated in 3.12
            // for `PyErr_GetRaisedException`, which 3.11 lacks; it still
            // works there.)
            #[allow(deprecated)]
            unsafe {
                ffi::PyErr_Fetch(&mut ty, &mut value, &mut tb)
            };
            // An error is dropped here: taken out of the interpreter, so
            // none is left set.
            let _ = origins.restore(py, resume);
            if !ty.is_null() {
                // SAFETY: the GIL is held; `PyErr_Restore` takes back the
                // three references `PyErr_Fetch` gave (none is set now).
                #[allow(deprecated)]
                unsafe {
                    ffi::PyErr_Restore(ty, value, tb)
                };
            }
        });
    }
}

/// A type's name as CPython's messages print it (`%.200s` of `tp_name`):
/// with the module for a type defined in C (`datetime.date`,
/// `_csv.reader`), without it for a class defined in Python; at most 200
/// bytes, a character cut there decoded as U+FFFD.
///
/// `tp_name` is read from the type object, which the limited API (abi3)
/// would not allow; this extension is built for one CPython version.
fn tp_name(t: &Bound<'_, PyType>) -> String {
    // SAFETY: `t` is a live type object, kept alive by the reference, and
    // its `tp_name` is a NUL-terminated string owned by the type (CPython
    // requires it of every type, static or heap).
    let name = unsafe { std::ffi::CStr::from_ptr((*t.as_type_ptr()).tp_name) };
    let b = name.to_bytes();
    String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned()
}

impl LineSource {
    /// Converts the fields completed since the last call (CPython converts
    /// each field as it is saved, so a failing `float()` is raised at the
    /// field, before any later error on the same line).
    /// Without QUOTE_NONNUMERIC nothing can fail, and the row is built at
    /// once by `row`.
    fn convert(&mut self, py: Python<'_>, nonnumeric: bool) -> PyResult<()> {
        if !nonnumeric {
            return Ok(());
        }
        for i in self.done.len()..self.fields.len() {
            let s = line_str(py, self.fields.get(b"", i), &mut self.scratch)?;
            let v = if nonnumeric && self.fields.span(i).is_numeric() { to_float(s)? } else { s };
            self.done.push(v.unbind());
        }
        Ok(())
    }

    fn row<'py>(&mut self, py: Python<'py>, nonnumeric: bool) -> PyResult<Bound<'py, PyList>> {
        if !nonnumeric {
            let (f, scratch) = (&self.fields, &mut self.scratch);
            return build_list(py, f.len(), |i| line_str(py, f.get(b"", i), scratch));
        }
        self.convert(py, nonnumeric)?;
        let items: Vec<_> = self.done.drain(..).map(|o| o.into_bound(py)).collect();
        list_from(py, items)
    }

    /// Fails the current record the way `_csv.c` does: fields completed
    /// before the error are converted first (their error wins).
    fn fail(&mut self, py: Python<'_>, nonnumeric: bool, kind: &ErrorKind) -> PyErr {
        if let Err(e) = self.convert(py, nonnumeric) {
            return e;
        }
        exc::Error::new_err(python_message(py, kind))
    }

    fn next<'py>(
        &mut self,
        py: Python<'py>,
        nonnumeric: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        // `Reader_iternext` starts every call with `parse_reset`.
        self.scanner.reset();
        self.done.clear();
        let Some(iter) = &self.iter else {
            return Ok(None);
        };
        let mut iter = iter.bind(py).clone();
        loop {
            let item = match iter.next() {
                Some(item) => item?,
                None => {
                    return match self.scanner.finish(&[], &mut self.fields) {
                        Scan::Row => self.row(py, nonnumeric).map(Some),
                        Scan::Error(k, _) => Err(self.fail(py, nonnumeric, &k)),
                        Scan::End | Scan::NeedInput => Ok(None),
                    };
                }
            };
            // `csv` reads the limit as it parses, and the only code that
            // runs inside a record is the iterator's: read it after each
            // line, so that a generator that changes it between the lines
            // of one record is followed exactly.
            let limit = field_limit(py)?;
            if limit != self.limit {
                self.scanner.set_field_limit(Some(limit.max(0) as u64));
                self.limit = limit;
            }
            let Ok(line) = item.downcast::<PyString>() else {
                return Err(exc::Error::new_err(format!(
                    "iterator should return strings, not {} \
                     (the file should be opened in text mode)",
                    tp_name(&item.get_type())
                )));
            };
            let n = self.line_num.load(Ordering::Relaxed);
            self.line_num.store(n + 1, Ordering::Relaxed);
            let bytes: &[u8] = match line.to_str() {
                Ok(s) => s.as_bytes(),
                Err(_) => {
                    // Lone surrogates: carry them through as CPython does.
                    let b = line.call_method1(intern!(py, "encode"), ("utf-8", "surrogatepass"))?;
                    self.buf.clear();
                    self.buf.extend_from_slice(b.downcast::<PyBytes>()?.as_bytes());
                    &self.buf
                }
            };
            let mut pos = 0;
            match self.scanner.scan(bytes, &mut pos, &mut self.fields) {
                Scan::Error(k, _) => return Err(self.fail(py, nonnumeric, &k)),
                Scan::Row | Scan::NeedInput | Scan::End => {}
            }
            match self.scanner.end_line(&mut self.fields) {
                Scan::Row => return self.row(py, nonnumeric).map(Some),
                Scan::Error(k, _) => return Err(self.fail(py, nonnumeric, &k)),
                Scan::NeedInput | Scan::End => self.convert(py, nonnumeric)?,
            }
        }
    }
}

impl NativeSource {
    fn next<'py>(
        &mut self,
        py: Python<'py>,
        nonnumeric: bool,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        if let Some(text) = &mut self.text {
            let limit = field_limit(py)?;
            if limit != text.limit {
                self.rdr.get().set_field_limit(Some(limit.max(0) as u64));
                text.limit = limit;
            }
        }
        let rdr = self.rdr.get();
        let got = match rdr.read_row() {
            Ok(Some(row)) => {
                row_to_list(py, &row, nonnumeric, &mut self.strs, self.name.as_deref()).map(Some)
            }
            Ok(None) => match self.stash.take() {
                Some(e) => Err(e),
                None => {
                    self.follow();
                    Ok(None)
                }
            },
            Err(e) if self.text.is_some() => {
                // `csv` consumed the line it raised on; at the end of the
                // text (a record cut short) the stream is at its end.
                let at = match e.position() {
                    Some(p) if e.is_data() && !matches!(e.kind(), ErrorKind::UnexpectedEof) => {
                        Some(p.byte)
                    }
                    _ => None,
                };
                let e = text_error(py, e, &self.stash);
                if let Some(t) = &mut self.text {
                    t.resume = at.map(|at| Resume::LineOf(t.byte_base + at));
                }
                // The end of the text may have cut a record short.
                self.follow();
                // After an exception from the stream's `read` (not one
                // decoding it, past which the wrapper skips text), the
                // next call reads on, as `csv` asks for the next line.
                if !e.is_instance_of::<PyUnicodeDecodeError>(py) {
                    self.rdr.get().resume_after_error();
                }
                return Err(e);
            }
            Err(e) => {
                let e = map_error(e, &self.stash);
                // A stream's `read` that raised (or a file's read that
                // failed) is tried again by the next call.
                self.rdr.get().resume_after_error();
                return Err(e);
            }
        };
        if let Some(t) = &mut self.text {
            t.resume = match &got {
                Ok(Some(_)) => {
                    let rdr = self.rdr.get();
                    let at = t.byte_base + rdr.byte_offset();
                    t.origins.need_from(at);
                    Some(Resume::At { at, lf: rdr.pending_lf() })
                }
                // At the end (or after an exception from the stream).
                _ => None,
            };
        }
        got
    }

    /// At the end of a text stream, makes the next call read it again: as
    /// `csv.reader` asks the stream for a line on every call, it finds what
    /// was written since (a file that grows, a `StringIO` written to). After
    /// an exception from the stream, the reader stays at its end.
    fn follow(&mut self) {
        if self.text.is_some() {
            self.rdr.get().resume_after_end();
        }
    }
}

/// With a text stream: `csv.reader` asks the stream for a line on every
/// call, so once the stream is closed each call raises the stream's own
/// error, rows read ahead or not. A closed stream is asked for its next
/// line here too, to raise exactly that error. Whether it is closed is
/// asked of `probe` on every call (see [`Probe`]).
fn raise_if_closed(py: Python<'_>, stream: &Py<PyAny>, probe: &Probe) -> PyResult<()> {
    if probe.closed(py) {
        stream.bind(py).call_method0(intern!(py, "__next__"))?;
        return Err(PyValueError::new_err("I/O operation on closed file."));
    }
    Ok(())
}

/// The object whose `closed` is the text stream's: for a file opened by
/// `open()` (exactly an `io.TextIOWrapper` over an `io.BufferedReader`
/// over an `io.FileIO`), the `FileIO`, whose `closed` the other two ask in
/// turn (closing either closes it; a detached one reads as open either
/// way); the stream itself otherwise.
///
/// An exact `io.FileIO`'s `closed` is its descriptor being negative (the
/// getter is `fd < 0`, and the type's attributes cannot be replaced), and
/// the descriptor is the first member after the object header in every
/// CPython this extension builds for: it is read there, one load a row
/// instead of an attribute lookup and a call. That place is checked when
/// the probe is made (the member must equal `fileno()`); where it does not,
/// `closed` is looked up as for any stream.
pub(crate) struct Probe {
    obj: Py<PyAny>,
    /// `obj` is an exact `io.FileIO` whose descriptor was found in place.
    fileio: bool,
}

impl Probe {
    fn new(py: Python<'_>, stream: &Bound<'_, PyAny>) -> PyResult<Probe> {
        let io = py.import("io")?;
        let exactly = |o: &Bound<'_, PyAny>, name: &str| -> PyResult<bool> {
            Ok(o.get_type().is(&io.getattr(name)?))
        };
        if exactly(stream, "TextIOWrapper")? {
            if let Ok(buffer) = stream.getattr("buffer") {
                if exactly(&buffer, "BufferedReader")? {
                    if let Ok(raw) = buffer.getattr("raw") {
                        if exactly(&raw, "FileIO")? {
                            let fileio = fileio_fd_in_place(&raw);
                            return Ok(Probe { obj: raw.unbind(), fileio });
                        }
                    }
                }
            }
        }
        Ok(Probe { obj: stream.clone().unbind(), fileio: false })
    }

    /// Whether the stream is closed (an error reading `closed` counts as
    /// open: the next read raises it).
    #[inline]
    fn closed(&self, py: Python<'_>) -> bool {
        if self.fileio {
            // SAFETY: `obj` is an exact `io.FileIO`, alive while we hold
            // it, whose `int fd` member follows the object header (checked
            // by `fileio_fd_in_place` when the probe was made); we hold
            // the GIL, under which the descriptor is set.
            return unsafe { fileio_fd(self.obj.as_ptr()) } < 0;
        }
        let closed = self.obj.bind(py).getattr(intern!(py, "closed"));
        closed.and_then(|c| c.is_truthy()).unwrap_or(false)
    }

    fn clone_ref(&self, py: Python<'_>) -> Probe {
        Probe { obj: self.obj.clone_ref(py), fileio: self.fileio }
    }
}

/// The `int` right after the object header of `o`: an `io.FileIO`'s
/// descriptor (`fd` is the first member of CPython's `fileio` struct).
///
/// # Safety
///
/// `o` points to a live exact `io.FileIO`, and the GIL is held.
#[inline]
unsafe fn fileio_fd(o: *mut ffi::PyObject) -> std::ffi::c_int {
    // SAFETY: the caller vouches that `o` is a live `fileio` struct, whose
    // first member after the header is an aligned `int`.
    unsafe {
        o.cast::<u8>().add(std::mem::size_of::<ffi::PyObject>()).cast::<std::ffi::c_int>().read()
    }
}

/// Whether the exact `io.FileIO` `raw`, open, has its descriptor where
/// [`fileio_fd`] reads it: equal to its `fileno()` (a closed one, or one
/// whose `fileno()` fails, is not taken).
fn fileio_fd_in_place(raw: &Bound<'_, PyAny>) -> bool {
    let Ok(fd) = raw.call_method0("fileno").and_then(|f| f.extract::<std::ffi::c_int>()) else {
        return false;
    };
    // SAFETY: `raw` is a live exact `io.FileIO` (the caller checked its
    // type) and holding a `Bound` means holding the GIL.
    fd >= 0 && unsafe { fileio_fd(raw.as_ptr()) } == fd
}

#[pymethods]
impl PyReader {
    /// The reader itself, without borrowing it (another thread may be
    /// inside its `__next__`).
    fn __iter__<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.clone()
    }

    /// The Python objects the reader holds where the garbage collector can
    /// see them, so that a cycle through a reader (a generator that holds
    /// the object that holds its reader) is collected, as with `csv`. Only
    /// references the reader owns are visited, each once; those held
    /// inside the core reader's source (a stream's bound methods) are not,
    /// which keeps what they reach alive, as a reference from outside
    /// would.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.dialect)?;
        match &self.input {
            Input::Lines(s) => {
                visit.call(&s.iter)?;
                for v in &s.done {
                    visit.call(v)?;
                }
            }
            Input::Native(s) => {
                if let Some(t) = &s.text {
                    visit.call(&t.stream)?;
                    visit.call(&t.probe.obj)?;
                }
            }
            Input::TextAhead(s) => {
                visit.call(&s.stream)?;
                visit.call(&s.probe.obj)?;
            }
            Input::Ahead(_) => {}
        }
        Ok(())
    }

    /// Breaks a cycle the collector found: the iterator of lines is let go
    /// (the reader then ends).
    fn __clear__(&mut self) {
        if let Input::Lines(s) = &mut self.input {
            s.iter = None;
            s.done.clear();
        }
    }

    fn __next__<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyList>>> {
        let mut entered = Entered::new(slf);
        let mut this = borrow_waiting(slf, 1)?;
        entered.show(&this, slf.py());
        this.next_row(slf.py())
    }

    /// The validated `_csv.Dialect` in use.
    #[getter]
    fn dialect(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if let Some(d) = shown(slf, |s| s.dialect.clone_ref(py)) {
            return Ok(d);
        }
        Ok(borrow_waiting(slf, 0)?.dialect.clone_ref(py))
    }

    /// What the reader reads: `"lines"` (an iterable of `str`), `"text"`
    /// (a text stream read in chunks), `"text-raw"` (a text file whose
    /// bytes are read from its buffer, so far) or `"native"` (a path, a
    /// descriptor or a binary stream). For tests and debugging.
    #[getter]
    fn _source(&self) -> &'static str {
        match &self.input {
            Input::Lines(_) => "lines",
            Input::Native(s) => match &s.text {
                Some(t) if t.raw_on.load(Ordering::Relaxed) => "text-raw",
                Some(_) => "text",
                None => "native",
            },
            Input::Ahead(_) => "native",
            Input::TextAhead(s) if s.raw_on.load(Ordering::Relaxed) => "text-raw",
            Input::TextAhead(_) => "text",
        }
    }

    /// Whether rows are scanned ahead by a second thread (paths and
    /// descriptors, large text files; until a text file's reader turns
    /// row by row). For tests and debugging.
    #[getter]
    fn _reads_ahead(&self) -> bool {
        match &self.input {
            Input::Ahead(s) => s.ahead.parses_ahead(),
            Input::TextAhead(s) => s.ahead.parses_ahead(),
            _ => false,
        }
    }

    /// Whether rows are scanned in batches, on this thread or a second
    /// one (paths and descriptors, large text files; until a text file's
    /// reader turns row by row). For tests and debugging.
    #[getter]
    fn _batched(&self) -> bool {
        matches!(self.input, Input::Ahead(_) | Input::TextAhead(_))
    }

    /// The slots of the short-string cache of a reader over a native
    /// input or a text stream (`None` over lines). For tests and
    /// debugging.
    #[getter]
    fn _short_slots(&self) -> Option<usize> {
        match &self.input {
            Input::Lines(_) => None,
            Input::Native(s) => Some(s.strs.short_slots_now()),
            Input::Ahead(s) => Some(s.strs.short_slots_now()),
            Input::TextAhead(s) => Some(s.strs.short_slots_now()),
        }
    }

    /// Lines read so far (the number of lines taken from the iterator, or
    /// of line ends consumed in a native input).
    #[getter]
    fn line_num(slf: &Bound<'_, Self>) -> PyResult<u64> {
        if let Some(n) = shown(slf, |s| s.line_num.load(Ordering::Relaxed)) {
            return Ok(n);
        }
        let mut this = borrow_waiting(slf, 0)?;
        Ok(match &mut this.input {
            Input::Lines(s) => s.line_num.load(Ordering::Relaxed),
            Input::Native(s) => s.line_base + s.rdr.get().line(),
            Input::Ahead(s) => s.ahead.line,
            Input::TextAhead(s) => s.ahead.line,
        })
    }
}

impl PyReader {
    /// The next row, `None` at the end (`__next__`'s work).
    fn next_row<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        match &mut self.input {
            Input::Lines(s) => s.next(py, self.nonnumeric),
            Input::Native(s) => {
                if let Some(t) = &s.text {
                    raise_if_closed(py, &t.stream, &t.probe)?;
                }
                s.next(py, self.nonnumeric)
            }
            Input::Ahead(s) => {
                let name = s.name.as_deref();
                match s.ahead.next_row(py, self.nonnumeric, &mut s.strs, name, &s.stash, None)? {
                    Next::Row(r) => Ok(Some(r)),
                    Next::End => Ok(None),
                    Next::Reparse(..) => {
                        Err(PyRuntimeError::new_err("fastcsv: a native reader cannot reparse"))
                    }
                }
            }
            Input::TextAhead(s) => {
                raise_if_closed(py, &s.stream, &s.probe)?;
                let strs = &mut s.strs;
                match s.ahead.next_row(py, false, strs, None, &s.stash, Some(&s.feed))? {
                    Next::Row(r) => Ok(Some(r)),
                    Next::End => {
                        if let Some(native) = s.follow(py)? {
                            self.input = Input::Native(native);
                        }
                        Ok(None)
                    }
                    Next::Reparse(at, line) => {
                        let mut native = s.reparse(py, at, line)?;
                        let row = native.next(py, false);
                        self.input = Input::Native(native);
                        row
                    }
                }
            }
        }
    }
}

/// What a reader over lines shows of itself to its own input while its
/// `__next__` asks that input for a line, when the reader cannot be
/// borrowed: a generator may read `reader.line_num` (the lines taken so
/// far) and `reader.dialect`, as `csv` allows.
struct Shown {
    line_num: Arc<AtomicU64>,
    dialect: Py<PyAny>,
}

/// Marks a thread keeps in place; any more go to [`FAR`].
const NEAR: usize = 16;

/// The readers whose `__next__` runs on a thread (their addresses),
/// outermost first, to tell a call from the reader's own input (re-entry,
/// on this thread) from one on another thread: how many there are, and
/// the first [`NEAR`]. No destructor, so taking it is a plain
/// thread-local access, once per row. Marks are kept by value, not as
/// pointers into the frames of the calls: a greenlet that switches
/// stacks inside `__next__` leaves its marks readable, and they may come
/// off in another order than they went on.
struct Marks {
    depth: Cell<usize>,
    near: [Cell<usize>; NEAR],
}

thread_local! {
    static MARKS: Marks = const {
        Marks { depth: Cell::new(0), near: [const { Cell::new(0) }; NEAR] }
    };
    /// The marks past the first [`NEAR`].
    static FAR: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// What the readers over lines whose `__next__` runs on this thread
    /// show their input, innermost last.
    static SHOWN: RefCell<Vec<(usize, Shown)>> = const { RefCell::new(Vec::new()) };
}

impl Marks {
    #[inline]
    fn push(&self, key: usize) {
        let d = self.depth.get();
        match self.near.get(d) {
            Some(k) => k.set(key),
            None => FAR.with(|f| f.borrow_mut().push(key)),
        }
        self.depth.set(d + 1);
    }

    /// Takes the innermost mark of `key` off (the last one, in nested
    /// calls).
    #[inline]
    fn remove(&self, key: usize) {
        let d = self.depth.get();
        if (1..=NEAR).contains(&d) && self.near[d - 1].get() == key {
            self.depth.set(d - 1);
            return;
        }
        self.remove_slow(key);
    }

    #[cold]
    fn remove_slow(&self, key: usize) {
        let mut all = self.all();
        if let Some(i) = all.iter().rposition(|&k| k == key) {
            all.remove(i);
        }
        for (slot, &k) in self.near.iter().zip(&all) {
            slot.set(k);
        }
        FAR.with(|f| {
            let mut f = f.borrow_mut();
            f.clear();
            f.extend(all.iter().skip(NEAR));
        });
        self.depth.set(all.len());
    }

    /// Every mark, outermost first.
    fn all(&self) -> Vec<usize> {
        let d = self.depth.get();
        let mut all: Vec<usize> = self.near[..d.min(NEAR)].iter().map(Cell::get).collect();
        if d > NEAR {
            FAR.with(|f| all.extend(f.borrow().iter()));
        }
        all
    }
}

/// Marks a reader's `__next__` as running on this thread while it lives.
struct Entered {
    key: usize,
    /// This thread's [`MARKS`], looked up once per call (a thread-local
    /// of a shared library is a call to find): the mark is taken off
    /// through it. A raw pointer, which also keeps `Entered` on its
    /// thread (neither `Send` nor `Sync`).
    marks: *const Marks,
    /// Whether [`Entered::show`] put an entry in [`SHOWN`].
    shows: bool,
}

impl Entered {
    #[inline]
    fn new(slf: &Bound<'_, PyReader>) -> Entered {
        let key = slf.as_ptr() as usize;
        let marks = MARKS.with(|m| {
            m.push(key);
            std::ptr::from_ref(m)
        });
        Entered { key, marks, shows: false }
    }

    /// Shows the reader's `line_num` and dialect to calls from its input.
    /// Only a reader over lines runs Python code of its input's inside
    /// `__next__` (other inputs are read by the core, or by stream
    /// methods that do not look at the reader); the others show nothing.
    #[inline]
    fn show(&mut self, this: &PyReader, py: Python<'_>) {
        if let Input::Lines(s) = &this.input {
            let shown =
                Shown { line_num: Arc::clone(&s.line_num), dialect: this.dialect.clone_ref(py) };
            SHOWN.with(|v| v.borrow_mut().push((self.key, shown)));
            self.shows = true;
        }
    }
}

impl Drop for Entered {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `marks` is this thread's `MARKS` (an `Entered` does not
        // leave the thread that made it), which has no destructor and
        // lives as long as the thread.
        unsafe { &*self.marks }.remove(self.key);
        if self.shows {
            let key = self.key;
            let shown = SHOWN.with(|v| {
                let mut v = v.borrow_mut();
                v.iter().rposition(|m| m.0 == key).map(|i| v.remove(i))
            });
            // The dialect's reference goes after the borrow ends (its
            // release may run Python code that reads `SHOWN`).
            drop(shown);
        }
    }
}

/// `f` of what the reader `slf` shows its input, when this call comes from
/// there (the reader's `__next__` runs on this thread and showed it).
fn shown<T>(slf: &Bound<'_, PyReader>, f: impl FnOnce(&Shown) -> T) -> Option<T> {
    let key = slf.as_ptr() as usize;
    SHOWN.with(|v| v.borrow().iter().rev().find(|m| m.0 == key).map(|m| f(&m.1)))
}

/// The reader, mutably borrowed. While another thread is inside its
/// `__next__` (which lets the GIL go to read, or to call its input), this
/// one waits for it with the GIL released, so that threads sharing a
/// reader take rows in turn, as with `csv.reader`, rather than fail with
/// "Already borrowed". A call from the reader's own input, on the thread
/// that is reading (a generator that calls `next` on its reader), cannot
/// wait: a `ValueError`, as `csv` gets from the generator in that case.
/// `own` is the number of [`Entered`] marks the caller made for this call.
#[inline]
fn borrow_waiting<'py>(
    slf: &Bound<'py, PyReader>,
    own: usize,
) -> PyResult<PyRefMut<'py, PyReader>> {
    match slf.try_borrow_mut() {
        Ok(r) => Ok(r),
        Err(_) => borrow_waiting_slow(slf, own),
    }
}

/// [`borrow_waiting`] once the reader is found borrowed.
#[cold]
#[inline(never)]
fn borrow_waiting_slow<'py>(
    slf: &Bound<'py, PyReader>,
    own: usize,
) -> PyResult<PyRefMut<'py, PyReader>> {
    let key = slf.as_ptr() as usize;
    loop {
        if let Ok(r) = slf.try_borrow_mut() {
            return Ok(r);
        }
        // A mark for this reader beyond the caller's own: this thread is
        // inside its `__next__` already.
        let found = MARKS.with(|m| m.all().iter().filter(|&&k| k == key).count());
        let reentered = found > own;
        if reentered {
            return Err(PyValueError::new_err(
                "reader already executing: called again from its own input",
            ));
        }
        slf.py().allow_threads(|| std::thread::sleep(std::time::Duration::from_micros(20)));
    }
}

/// A reader over an iterable of `str` lines.
#[pyfunction]
#[pyo3(signature = (lines, dialect, filter=None))]
pub(crate) fn _lines_reader(
    py: Python<'_>,
    lines: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
    filter: Option<&str>,
) -> PyResult<PyReader> {
    let pd = PyDialect::from_py(dialect)?;
    let limit = field_limit(py)?;
    let d = pd.core(parse_filter(filter)?, core_limit(limit)?, false)?;
    let iter = lines.try_iter()?.unbind();
    Ok(PyReader {
        dialect: dialect.clone().unbind(),
        nonnumeric: pd.nonnumeric,
        input: Input::Lines(Box::new(LineSource {
            iter: Some(iter),
            scanner: Scanner::line_fed(&d),
            fields: Fields::default(),
            line_num: Arc::new(AtomicU64::new(0)),
            done: Vec::new(),
            buf: Vec::new(),
            limit,
            scratch: Vec::new(),
        })),
    })
}

/// A reader over a path, a file descriptor or a binary stream.
#[pyfunction]
pub(crate) fn _native_reader(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
) -> PyResult<PyReader> {
    let mut spec = Spec::from_dict(spec)?;
    let pd = PyDialect::from_py(dialect)?;
    let stash = PyErrStash::default();
    let native_io = spec.fd.is_some() || spec.path.is_some();
    let rdr = open_native(py, &pd, &mut spec, &stash)?;
    let name = spec.name.clone().or_else(|| spec.path.as_ref().map(|p| p.display().to_string()));
    let strs = StrMaker::new(&spec.errors, spec.intern)?.decode_first(dialect, spec.filter);
    let input = if native_io {
        let ahead = Ahead::new(rdr, Plan::for_threads(spec.threads));
        Input::Ahead(Box::new(AheadSource { ahead, strs, stash, name }))
    } else {
        Input::Native(Box::new(NativeSource { rdr, strs, stash, name, text: None, line_base: 0 }))
    };
    Ok(PyReader { dialect: dialect.clone().unbind(), nonnumeric: pd.nonnumeric, input })
}

/// A reader over a text stream in a universal-newline mode (the caller
/// checks the mode; see [`PyTextStream`]). Rows, `line_num` and error
/// messages are `csv.reader`'s; a BOM stays in the first field, as in
/// `csv`. QUOTE_NONNUMERIC is left to `_lines_reader`: `csv` converts each
/// field as it ends and, after a failed conversion, resumes at the next
/// line, which may be inside the record.
///
/// With `raw_offset` (an `io.TextIOWrapper` whose `tell()` was that
/// plain byte offset, with nothing decoded ahead, in the encoding
/// `raw_encoding`: `utf-8`, `utf-8-sig`, `iso8859-1` or `cp1252`, as
/// `codecs.lookup` names them, or another one-byte encoding whose bytes
/// from 0x80 on are the characters `raw_table`, 0 where undefined), the
/// stream starts in raw mode; `keeps_cr` says that
/// `read` was seen returning a CR. With
/// `ahead` (a large file), the text is parsed in batches
/// ([`TextAheadSource`]), on a read-ahead thread as `threads` says (see
/// [`Plan`]).
#[pyfunction]
#[pyo3(signature = (stream, dialect, filter=None, raw_offset=None, keeps_cr=false, ahead=false, threads=None, raw_encoding="utf-8", raw_table=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _text_reader(
    py: Python<'_>,
    stream: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
    filter: Option<&str>,
    raw_offset: Option<u64>,
    keeps_cr: bool,
    ahead: bool,
    threads: Option<usize>,
    raw_encoding: &str,
    raw_table: Option<Vec<u16>>,
) -> PyResult<PyReader> {
    let code = match (raw_encoding, raw_table) {
        ("utf-8" | "utf-8-sig", None) => None,
        ("iso8859-1", None) => Some(OneByte::Latin1),
        ("cp1252", None) => Some(OneByte::Cp1252),
        (_, Some(t)) => Some(crate::offsets::table_code(t, "raw_table")?),
        _ => return Err(PyValueError::new_err(format!("no raw mode for {raw_encoding:?}"))),
    };
    let pd = PyDialect::from_py(dialect)?;
    if pd.nonnumeric {
        return Err(unsupported("QUOTE_NONNUMERIC over a text stream"));
    }
    let limit = field_limit(py)?;
    let d = pd.core(parse_filter(filter)?, core_limit(limit)?, false)?;
    // `utf-8-sig` drops a BOM at the start of the file only: from anywhere
    // else its text is UTF-8's.
    let bom = raw_encoding == "utf-8-sig" && raw_offset == Some(0);
    let raw =
        raw_offset.map(|pos| RawText::new(py, stream, pos, keeps_cr, code, bom)).transpose()?;
    let raw_on = Arc::new(AtomicBool::new(raw.is_some()));
    let stash = PyErrStash::default();
    let origins = Arc::new(TextOrigins::new(py, stream, raw_offset, code.is_some() || bom));
    let text = PyTextStream::new(py, stream, raw, raw_on.clone(), stash.clone(), origins.clone())?;
    let probe = Probe::new(py, stream)?;
    if ahead {
        let unlimited = d.to_builder().field_limit(None).build().map_err(|e| csv_error(&e))?;
        let (msg_tx, msg_rx) = mpsc::channel();
        let plan = Plan::for_threads(threads);
        let inline = Arc::new(AtomicBool::new(true));
        let (feed, fed) = Feeder::new(text, msg_tx.clone(), inline.clone());
        let rdr =
            ReaderBuilder::new().dialect(unlimited).max_buffer_size(usize::MAX).from_reader(fed);
        return Ok(PyReader {
            dialect: dialect.clone().unbind(),
            nonnumeric: false,
            input: Input::TextAhead(Box::new(TextAheadSource {
                ahead: Ahead::new_fed(
                    Some(HeldReader::new(rdr)),
                    Some((msg_tx, msg_rx)),
                    plan,
                    Some(inline),
                ),
                feed,
                strs: StrMaker::new("surrogatepass", false)?,
                stash,
                dialect: d,
                raw_on,
                stream: stream.clone().unbind(),
                probe: probe.clone_ref(py),
                origins,
            })),
        });
    }
    // `csv` holds a record of any size in memory; so may this reader.
    let rdr = ReaderBuilder::new().dialect(d).max_buffer_size(usize::MAX).from_reader(text);
    Ok(PyReader {
        dialect: dialect.clone().unbind(),
        nonnumeric: false,
        input: Input::Native(Box::new(NativeSource {
            rdr: HeldReader::new(rdr),
            strs: StrMaker::new("surrogatepass", false)?,
            stash,
            name: None,
            text: Some(TextState {
                limit,
                raw_on,
                stream: stream.clone().unbind(),
                probe: probe.clone_ref(py),
                origins,
                resume: None,
                byte_base: 0,
            }),
            line_base: 0,
        })),
    })
}
