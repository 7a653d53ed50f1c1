//! `DictReader`'s rows: one `dict` per row, built from the reader's list
//! and the field names as `csv.DictReader` builds it.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::{ffi, intern};

/// Field names that are exactly a list or a tuple (what [`_dict_next`]
/// builds dicts for natively).
enum Names<'a, 'py> {
    List(&'a Bound<'py, PyList>),
    Tuple(&'a Bound<'py, pyo3::types::PyTuple>),
}

impl<'a, 'py> Names<'a, 'py> {
    fn of(names: &'a Bound<'py, PyAny>) -> Option<Names<'a, 'py>> {
        if names.is_exact_instance_of::<PyList>() {
            return names.downcast::<PyList>().ok().map(Names::List);
        }
        if names.is_exact_instance_of::<pyo3::types::PyTuple>() {
            return names.downcast::<pyo3::types::PyTuple>().ok().map(Names::Tuple);
        }
        None
    }

    fn len(&self) -> usize {
        match self {
            Names::List(l) => l.len(),
            Names::Tuple(t) => t.len(),
        }
    }

    fn get(&self, i: usize) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Names::List(l) => l.get_item(i),
            Names::Tuple(t) => t.get_item(i),
        }
    }
}

/// One `csv.DictReader` row: `dict(zip(names, row))`, then the extra
/// fields as a list under `restkey`, or `restval` for each missing name;
/// the dict is sized up front, and `restkey` and `restval` are asked for
/// only when the lengths differ.
fn dict_of_row<'py>(
    py: Python<'py>,
    names: &Names<'_, 'py>,
    row: &Bound<'py, PyList>,
    restkey: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
    restval: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (lf, lr) = (names.len(), row.len());
    // SAFETY: we hold the GIL; a new dict (room for `lf` items without a
    // resize) or NULL with an exception set, checked.
    let d = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::_PyDict_NewPresized(lf as ffi::Py_ssize_t))?
            .downcast_into_unchecked::<PyDict>()
    };
    // (Lengths are read again by `get`: a key's `__eq__` may be Python
    // code that changes the lists.)
    for i in 0..lf.min(lr) {
        d.set_item(names.get(i)?, row.get_item(i)?)?;
    }
    if lf < lr {
        d.set_item(restkey()?, row.get_slice(lf, lr))?;
    } else if lr < lf {
        let restval = restval()?;
        for i in lr..lf {
            d.set_item(names.get(i)?, &restval)?;
        }
    }
    Ok(d)
}

/// `csv.DictReader.__next__` for a `fastcsv.DictReader` itself (not a
/// subclass, so that `fieldnames` is csv's property): the same attribute
/// reads and writes in the same order, the row read and the dict built
/// here. Returns the dict, or `(row, names)` when the names are not a list
/// or tuple (or the row not a list), for the caller's stdlib code.
#[pyfunction]
pub(crate) fn _dict_next<'py>(
    py: Python<'py>,
    this: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let line_num = intern!(py, "line_num");
    let next = |reader: &Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: we hold the GIL; PyIter_Next returns a new reference, or
        // NULL at the end (no exception) or on error (exception set).
        let item = unsafe { ffi::PyIter_Next(reader.as_ptr()) };
        if item.is_null() {
            return Err(
                PyErr::take(py).unwrap_or_else(|| pyo3::exceptions::PyStopIteration::new_err(()))
            );
        }
        // SAFETY: a new, non-null reference.
        Ok(unsafe { Bound::from_owned_ptr(py, item) })
    };
    if this.getattr(line_num)?.eq(0)? {
        // Used only for its side effect (reads the header row).
        this.getattr(intern!(py, "fieldnames"))?;
    }
    let reader = this.getattr(intern!(py, "reader"))?;
    let mut row = next(&reader)?;
    this.setattr(line_num, reader.getattr(line_num)?)?;
    // Unlike the basic reader, DictReader does not return empty rows.
    loop {
        let empty = match row.downcast::<PyList>() {
            Ok(l) => l.is_empty(),
            Err(_) => row.eq(PyList::empty(py))?,
        };
        if !empty {
            break;
        }
        row = next(&reader)?;
    }
    // csv's `fieldnames` property: reads the header if still missing, and
    // sets `line_num`.
    let names = match this.getattr(intern!(py, "_fieldnames"))? {
        n if n.is_none() => this.getattr(intern!(py, "fieldnames"))?,
        n => {
            this.setattr(line_num, reader.getattr(line_num)?)?;
            n
        }
    };
    let list = row.downcast::<PyList>().ok().filter(|_| row.is_exact_instance_of::<PyList>());
    match (Names::of(&names), list) {
        (Some(items), Some(list)) => dict_of_row(
            py,
            &items,
            list,
            || this.getattr(intern!(py, "restkey")),
            || this.getattr(intern!(py, "restval")),
        )
        .map(Bound::into_any),
        _ => Ok(pyo3::types::PyTuple::new(py, [row, names])?.into_any()),
    }
}
