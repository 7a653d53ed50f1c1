//! Splitting an input into exact byte-range parts for other processes
//! (`_split`, `_summarize`, `_resolve`, used by `fastcsv.dask`).

use std::path::PathBuf;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use fastcsv::split::Splitter;
use fastcsv::ReaderBuilder;

use crate::dialect::{core_limit, field_limit, PyDialect};
use crate::errors::{map_error, unsupported, PyErrStash};
use crate::source::Spec;

/// The splitter of a Python dialect, and the path it reads.
/// Its parts are settled with the first non-empty row as a header row
/// (what `read_columns` and `read_arrow` take as one): it is always the
/// first part's.
fn splitter(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Spec,
) -> PyResult<(Splitter, PathBuf, ReaderBuilder)> {
    let pd = PyDialect::from_py(dialect)?;
    let path = spec.path.clone().ok_or_else(|| PyTypeError::new_err("a path is needed"))?;
    let d = pd.core(spec.filter, core_limit(field_limit(py)?)?, true)?;
    let d = d.to_builder().headers(true).build().map_err(|e| unsupported(&e.message()))?;
    let mut b = ReaderBuilder::new();
    b.dialect(d.clone());
    Ok((Splitter::new(&d), path, b))
}

type PartTuple = (usize, u64, u64, u64, u64);

fn part_tuples(parts: Vec<fastcsv::split::Part>) -> Vec<PartTuple> {
    parts.into_iter().map(|p| (p.index, p.start, p.end, p.lines, p.records)).collect()
}

/// The parts of a file cut into ranges of `size` bytes, summarised on
/// every CPU without the GIL.
#[pyfunction]
pub(crate) fn _split(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
    size: u64,
) -> PyResult<Vec<PartTuple>> {
    let spec = Spec::from_dict(spec)?;
    let (sp, path, _) = splitter(py, dialect, &spec)?;
    let parts = py.allow_threads(|| sp.split_path(&path, size));
    parts.map(part_tuples).map_err(|e| map_error(e, &PyErrStash::default()))
}

/// The summary of `start..end` of a file, as bytes.
#[pyfunction]
pub(crate) fn _summarize<'py>(
    py: Python<'py>,
    dialect: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyDict>,
    start: u64,
    end: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let spec = Spec::from_dict(spec)?;
    let (sp, path, _) = splitter(py, dialect, &spec)?;
    let sum = py.allow_threads(|| sp.summarize_path(&path, start..end));
    let sum = sum.map_err(|e| map_error(e, &PyErrStash::default()))?;
    Ok(PyBytes::new(py, &sum.to_bytes()))
}

/// The parts of a file from the summaries of its ranges, in order.
#[pyfunction]
pub(crate) fn _resolve(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
    summaries: Vec<Vec<u8>>,
) -> PyResult<Vec<PartTuple>> {
    let spec = Spec::from_dict(spec)?;
    let (sp, path, b) = splitter(py, dialect, &spec)?;
    let parts = py.allow_threads(|| -> fastcsv::Result<_> {
        let sums = summaries
            .iter()
            .map(|b| fastcsv::split::Summary::from_bytes(b))
            .collect::<fastcsv::Result<Vec<_>>>()?;
        let parts = sp.resolve(&sums)?;
        sp.settle(b.from_path(&path)?, parts)
    });
    parts.map(part_tuples).map_err(|e| map_error(e, &PyErrStash::default()))
}
