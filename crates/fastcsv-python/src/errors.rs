//! Errors: the core's errors as Python exceptions (parse errors are the
//! stdlib's `csv.Error`, I/O errors `OSError` subclasses by kind), the
//! private `_Unsupported` that hands a dialect back to the stdlib, and the
//! stash through which a wrapped stream's own exception reaches the caller.

use std::io;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use fastcsv::{Error as CoreError, ErrorKind};

pub(crate) mod exc {
    pyo3::import_exception!(_csv, Error);
}

pyo3::create_exception!(
    _fastcsv,
    _Unsupported,
    PyValueError,
    "The dialect cannot be parsed natively; the caller falls back to the stdlib."
);

pub(crate) fn unsupported(what: &str) -> PyErr {
    _Unsupported::new_err(what.to_owned())
}

/// A `csv.Error` with the core error's full text (path, line, record, byte).
pub(crate) fn csv_error(e: &CoreError) -> PyErr {
    exc::Error::new_err(e.to_string())
}

/// Maps a core error to a Python exception. A Python exception raised by a
/// wrapped stream's `read` is re-raised as is.
pub(crate) fn map_error(e: CoreError, stash: &PyErrStash) -> PyErr {
    // As in `text_error`: a stashed exception belongs to an I/O error.
    if e.is_data() {
        return csv_error(&e);
    }
    if let Some(err) = stash.take() {
        return err;
    }
    let path = e.path().map(|p| p.display().to_string());
    match e.into_kind() {
        ErrorKind::Io(io) => io_error(io, path),
        // A setting or input refused for a file names the file, as the
        // core's message does.
        kind => PyValueError::new_err(match path {
            Some(p) => format!("{p}: {kind}"),
            None => kind.to_string(),
        }),
    }
}

/// Maps a core error for a reader over a text stream, which stands in for
/// `csv.reader`: data errors carry `csv`'s message alone (the position in
/// the text's UTF-8 would mean nothing to the caller).
pub(crate) fn text_error(py: Python<'_>, e: CoreError, stash: &PyErrStash) -> PyErr {
    // A data error first: an exception in the stash comes from reading
    // further on (a read-ahead thread's feeder may have met it already)
    // and is raised when the reader gets there, as its I/O error.
    if e.is_data() {
        return exc::Error::new_err(python_message(py, e.kind()));
    }
    if let Some(err) = stash.take() {
        return err;
    }
    map_error(e, stash)
}

pub(crate) fn io_error(io: io::Error, path: Option<String>) -> PyErr {
    match io.raw_os_error() {
        // OSError(errno, strerror, filename) picks the subclass
        // (FileNotFoundError, PermissionError, ...) from errno.
        Some(errno) => {
            let msg = io::Error::from_raw_os_error(errno).to_string();
            let msg = msg.split(" (os error").next().unwrap_or(&msg).to_owned();
            match path {
                Some(p) => PyOSError::new_err((errno, msg, p)),
                None => PyOSError::new_err((errno, msg)),
            }
        }
        None => PyErr::from(io),
    }
}

/// Where a wrapped Python stream leaves the exception its `read` raised,
/// for the reader to re-raise instead of a generic I/O error.
#[derive(Clone, Default)]
pub(crate) struct PyErrStash(Arc<Mutex<Option<PyErr>>>);

impl PyErrStash {
    pub(crate) fn put(&self, e: PyErr) {
        if let Ok(mut g) = self.0.lock() {
            *g = Some(e);
        }
    }
    pub(crate) fn take(&self) -> Option<PyErr> {
        self.0.lock().ok().and_then(|mut g| g.take())
    }
}

/// The core's message, in the wording of the running CPython (3.13 changed
/// the newline hint).
pub(crate) fn python_message(py: Python<'_>, kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::NewlineInUnquotedField if py.version_info() < (3, 13) => {
            "new-line character seen in unquoted field - \
             do you need to open the file in universal-newline mode?"
                .to_owned()
        }
        k => k.to_string(),
    }
}
