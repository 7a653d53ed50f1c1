//! Bulk reads (`_read`, `_read_columns`): a whole input to a list of rows
//! or of columns, scanned with the GIL released.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};

use fastcsv::{ColumnsFrom, Error as CoreError, ErrorKind};

use crate::batch::{Batch, BULK_BATCH};
use crate::dialect::PyDialect;
use crate::errors::{csv_error, map_error, PyErrStash};
use crate::source::{open_native, HeldReader, Spec, SIGNAL_CHECK};
use crate::strings::{list_from, GcPause, StrMaker, SHORT_SLOTS_BULK};

/// Scans `rdr` in batches without the GIL, handing each batch (and the
/// string maker) to `each` and checking for signals (Ctrl-C) between batches. When the
/// input is larger than one batch and reading it calls no Python code
/// (`threaded`), a second thread scans and decodes the next batch while
/// this one builds Python objects from the last.
#[allow(clippy::too_many_arguments)]
pub(crate) fn bulk<'py>(
    py: Python<'py>,
    rdr: &mut HeldReader,
    threaded: bool,
    nonnumeric: bool,
    strs: &mut StrMaker,
    stash: &PyErrStash,
    mut each: impl FnMut(&Batch, &mut StrMaker) -> PyResult<()>,
) -> PyResult<()> {
    let joins = strs.joins();
    // Builds one batch's rows; then its error, if any. Whether to go on.
    let mut consume = |batch: &Batch, end: Result<bool, CoreError>| -> PyResult<bool> {
        each(batch, strs)?;
        let more = end.map_err(|e| map_error(e, stash))?;
        if let Some(e) = stash.take() {
            return Err(e);
        }
        py.check_signals()?;
        Ok(more)
    };
    // Grown as needed by this thread: small inputs allocate little.
    let mut batch = Batch::default();
    // On this thread alone, fields are decoded as their objects are made
    // (see `Batch::prepare_late`).
    let mut load = |batch: &mut Batch| {
        py.allow_threads(|| {
            let end = batch.load(rdr, nonnumeric, joins, BULK_BATCH);
            if threaded {
                batch.prepare();
            } else {
                batch.prepare_late();
            }
            end
        })
    };
    let end = load(&mut batch);
    if !threaded || !matches!(end, Ok(true)) {
        let mut end = end;
        while consume(&batch, end)? {
            end = load(&mut batch);
        }
        return Ok(());
    }
    let (full_tx, full_rx) = mpsc::sync_channel::<(Batch, Result<bool, CoreError>)>(1);
    let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
    // Three batches in all: one being built, one waiting, one being filled.
    for _ in 0..2 {
        let _ = empty_tx.send(Batch::reserved(BULK_BATCH));
    }
    let waiting = AtomicBool::new(false);
    let cancel = rdr.cancel();
    std::thread::scope(|s| {
        let waiting = &waiting;
        let worker = s.spawn(move || loop {
            let Ok(mut b) = empty_rx.recv() else {
                return; // the calling thread is done
            };
            let end = b.load_for(rdr, nonnumeric, joins, waiting, false, BULK_BATCH);
            let more = matches!(end, Ok(true));
            if full_tx.send((b, end)).is_err() || !more {
                return;
            }
        });
        let mut result = consume(&batch, end);
        let _ = empty_tx.send(batch);
        let mut rx = Some(full_rx);
        while let Ok(true) = result {
            // The receiver goes to the GIL-free closure and comes back.
            let r = rx.take().expect("receiver");
            waiting.store(true, Ordering::Relaxed);
            let (r, got) = py.allow_threads(move || {
                let got = r.recv_timeout(SIGNAL_CHECK);
                (r, got)
            });
            waiting.store(false, Ordering::Relaxed);
            rx = Some(r);
            let (mut b, end) = match got {
                Ok(got) => got,
                // Ctrl-C while the worker waits for input (a FIFO).
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        result = Err(e);
                    }
                    continue;
                }
                // The worker panicked: reported by join below.
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            if !b.prepared {
                py.allow_threads(|| b.prepare());
            }
            result = consume(&b, end);
            let _ = empty_tx.send(b);
        }
        // Dropping the channel ends stops the worker after its current
        // batch (or wakes it from waiting for an empty one).
        drop(rx);
        drop(empty_tx);
        // And makes it give up waiting for input.
        cancel.set();
        let joined = py.allow_threads(move || worker.join());
        match joined {
            Err(_) => Err(PyRuntimeError::new_err("fastcsv: the scanning thread panicked")),
            Ok(()) => result.map(|_| ()),
        }
    })
}

struct Bulk {
    /// Reading the input calls no Python code (no stream object).
    native_io: bool,
    pd: PyDialect,
    rdr: HeldReader,
    strs: StrMaker,
    stash: PyErrStash,
    name: Option<String>,
}

fn open_bulk(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
) -> PyResult<Bulk> {
    let mut spec = Spec::from_dict(spec)?;
    let pd = PyDialect::from_py(dialect)?;
    let stash = PyErrStash::default();
    let native_io = spec.fd.is_some() || spec.path.is_some();
    let rdr = open_native(py, &pd, &mut spec, &stash)?;
    let name = spec.name.clone().or_else(|| spec.path.as_ref().map(|p| p.display().to_string()));
    let strs = StrMaker::new(&spec.errors, spec.intern)?
        .short_slots(SHORT_SLOTS_BULK)
        .decode_first(dialect, spec.filter);
    Ok(Bulk { native_io, pd, rdr, strs, stash, name })
}

/// Every row of a native input, as a list of lists.
#[pyfunction]
pub(crate) fn _read<'py>(
    py: Python<'py>,
    dialect: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyList>> {
    let mut b = open_bulk(py, dialect, spec)?;
    // Paused until the result list exists: creating it would otherwise
    // start a collection over every row just made.
    let _gc = GcPause::new(py);
    let mut rows: Vec<Bound<'py, PyAny>> = Vec::new();
    let nn = b.pd.nonnumeric;
    let name = b.name.clone();
    bulk(py, &mut b.rdr, b.native_io, nn, &mut b.strs, &b.stash, |batch, strs| {
        rows.reserve(batch.rows.len());
        for r in 0..batch.rows.len() {
            rows.push(batch.row_list(py, r, nn, strs, name.as_deref())?.into_any());
        }
        Ok(())
    })?;
    list_from(py, rows)
}

/// The columns of a native input: `{name: [values...]}`. With
/// `header=True` the first non-empty row names the columns and longer rows
/// are an error; otherwise columns are named `"0"`, `"1"`, ... Short rows
/// are padded with `""`; empty rows are skipped.
#[pyfunction]
///
/// `given` names the columns instead of a header row (a later part of a
/// split file, whose header row is in the first part).
#[pyo3(signature = (dialect, spec, header=true, given=None))]
pub(crate) fn _read_columns<'py>(
    py: Python<'py>,
    dialect: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyDict>,
    header: bool,
    given: Option<Vec<Bound<'py, PyAny>>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut b = open_bulk(py, dialect, spec)?;
    let _gc = GcPause::new(py);
    let nn = b.pd.nonnumeric;
    let empty = PyString::new(py, "").into_any();
    let mut cols: Vec<Vec<Bound<'py, PyAny>>> =
        given.iter().flatten().map(|_| Vec::new()).collect();
    let mut names: Option<Vec<Bound<'py, PyAny>>> = match given {
        Some(g) => Some(g),
        None if header => None,
        None => Some(Vec::new()),
    };
    let mut nrows = 0usize;
    let name = b.name.clone();
    let name = name.as_deref();
    // One row, in order: the header, or values (padding short rows).
    let add_row = |items: &mut Vec<Bound<'py, PyAny>>,
                   names: &mut Option<Vec<Bound<'py, PyAny>>>,
                   cols: &mut Vec<Vec<Bound<'py, PyAny>>>,
                   nrows: &mut usize,
                   pos: fastcsv::Position|
     -> PyResult<()> {
        if items.is_empty() {
            return Ok(());
        }
        let Some(names) = names else {
            let seen = PySet::empty(py)?;
            for n in items.iter() {
                if seen.contains(n)? {
                    return Err(PyValueError::new_err(format!(
                        "duplicate column name {}",
                        n.repr()?
                    )));
                }
                seen.add(n)?;
            }
            *cols = items.iter().map(|_| Vec::new()).collect();
            *names = Some(std::mem::take(items));
            return Ok(());
        };
        if items.len() > cols.len() {
            if header {
                // The header row (a later part's names are the file's).
                let from = ColumnsFrom::Header;
                let kind = ErrorKind::LongRow { columns: cols.len(), found: items.len(), from };
                let e = CoreError::new(kind).with_position(pos);
                return Err(csv_error(&match name {
                    Some(n) => e.with_path(n),
                    None => e,
                }));
            }
            while cols.len() < items.len() {
                names.push(PyString::new(py, &cols.len().to_string()).into_any());
                cols.push(vec![empty.clone(); *nrows]);
            }
        }
        let n = items.len();
        for (c, v) in cols.iter_mut().zip(items.drain(..)) {
            c.push(v);
        }
        for c in &mut cols[n..] {
            c.push(empty.clone());
        }
        *nrows += 1;
        Ok(())
    };
    bulk(py, &mut b.rdr, b.native_io, nn, &mut b.strs, &b.stash, |batch, strs| {
        let rows = batch.rows.len();
        let mut items = Vec::new();
        let mut r = 0;
        // The header row (the first that is not empty) on its own.
        while r < rows && names.is_none() {
            batch.row_items(py, r, nn, strs, name, &mut items)?;
            add_row(&mut items, &mut names, &mut cols, &mut nrows, batch.row_fields(r).1)?;
            r += 1;
        }
        // The values column by column, so that each column's strings lie
        // side by side in memory (the collector's passes and freeing the
        // result then walk memory in order), unless a row needs care
        // (too long for the header, decoded first, or failing: then the
        // batch goes row by row, for errors in the order of the rows).
        let widest = (r..rows).map(|k| batch.row_fields(k).0.len()).max().unwrap_or(0);
        let (before, width) = (cols.first().map_or(nrows, Vec::len), cols.len());
        if r < rows && batch.reparse.is_empty() && !(header && widest > width) {
            if let Some(names) = &mut names {
                while cols.len() < widest {
                    names.push(PyString::new(py, &cols.len().to_string()).into_any());
                    cols.push(vec![empty.clone(); before]);
                }
            }
            // The non-empty rows: their fields in the batch, and positions.
            let taken: Vec<_> = (r..rows)
                .map(|k| (k, batch.row_fields(k)))
                .filter(|(_, (f, _))| !f.is_empty())
                .collect();
            // An ASCII batch with nothing to decide per field but its text:
            // each field a copy of its bytes (as `Batch::row_list` does).
            let plain = batch.all_ascii() && strs.cache.is_none() && !nn;
            strs.columns(cols.len());
            let filled = (|| -> PyResult<usize> {
                for (c, col) in cols.iter_mut().enumerate() {
                    col.reserve(taken.len());
                    for &(k, (ref fields, pos)) in &taken {
                        col.push(if c >= fields.len() {
                            empty.clone()
                        } else if plain {
                            let (start, end) = batch.span(fields.start + c);
                            strs.ascii(py, &batch.data, start, end, c)?
                        } else {
                            batch.field(py, (k, fields.start + c), c, pos, nn, strs, name)?
                        });
                    }
                }
                Ok(taken.len())
            })();
            strs.rows_read(taken.len().saturating_sub(1));
            match filled {
                Ok(added) => {
                    nrows += added;
                    return Ok(());
                }
                Err(_) => {
                    // Undo, and let the rows in order find the first error.
                    cols.truncate(width);
                    if let Some(names) = &mut names {
                        names.truncate(width);
                    }
                    for col in &mut cols {
                        col.truncate(before);
                    }
                }
            }
        }
        while r < rows {
            batch.row_items(py, r, nn, strs, name, &mut items)?;
            add_row(&mut items, &mut names, &mut cols, &mut nrows, batch.row_fields(r).1)?;
            r += 1;
        }
        Ok(())
    })?;
    let out = PyDict::new(py);
    for (k, v) in names.unwrap_or_default().into_iter().zip(cols) {
        out.set_item(k, list_from(py, v)?)?;
    }
    Ok(out)
}
