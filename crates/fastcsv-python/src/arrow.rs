//! Arrow: `_read_arrow`'s typed columns, exported through the Arrow C
//! stream interface in PyCapsules (`__arrow_c_stream__`), on one thread or
//! over the parts of a file on several.

use std::io::{self, Read};
use std::sync::Mutex;

use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use fastcsv::{arrow, Error as CoreError};

use crate::dialect::PyDialect;
use crate::errors::{map_error, PyErrStash};
use crate::offsets::{ByteMap, Remapped};
use crate::source::{native_builder, open_native, HeldReader, PyStream, Spec, Watch, Watched};

/// A core reader's columns that may move between threads: built only by
/// A source of batches that parses (or waits for its threads) without the
/// GIL: a consumer that calls it holding the GIL (checked, as a consumer
/// may call from any thread) lets it go meanwhile, so that other Python
/// threads run.
struct GilFree<S>(S);

impl<S: arrow::ffi::BatchSource + Send> arrow::ffi::BatchSource for GilFree<S> {
    fn names(&self) -> &[String] {
        self.0.names()
    }
    fn types(&self) -> Vec<arrow::DataType> {
        self.0.types()
    }
    fn next_batch(&mut self) -> fastcsv::Result<Option<arrow::ColumnBatch>> {
        // SAFETY: callable from any thread once the interpreter runs, as
        // it does while this extension's objects exist.
        if unsafe { ffi::PyGILState_Check() } == 1 {
            let this = &mut self.0;
            Python::with_gil(|py| py.allow_threads(move || this.next_batch()))
        } else {
            self.0.next_batch()
        }
    }
}

/// What an [`ArrowStream`] reads from.
type BatchBox = Box<dyn arrow::ffi::BatchSource + Send>;

/// An Arrow C struct that a `PyCapsule` owns (the Arrow PyCapsule
/// interface): released when the capsule goes, unless a consumer moved it
/// out (leaving its `release` null).
trait CapsuleValue: Sized {
    /// The capsule's name, which consumers check.
    const NAME: &'static std::ffi::CStr;
    /// Calls the struct's `release`, if it has one.
    fn release(&mut self);
}

impl CapsuleValue for arrow::ffi::ArrowArrayStream {
    const NAME: &'static std::ffi::CStr = c"arrow_array_stream";
    fn release(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: a live stream made by `export_stream`, released once
            // (its `release` clears itself).
            unsafe { release(self) }
        }
    }
}

impl CapsuleValue for arrow::ffi::ArrowSchema {
    const NAME: &'static std::ffi::CStr = c"arrow_schema";
    fn release(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: as for the stream, with `export_schema`.
            unsafe { release(self) }
        }
    }
}

/// Frees a capsule made by [`into_capsule`]: releases its value, then
/// frees its memory.
///
/// # Safety
///
/// `capsule` is a capsule made by `into_capsule::<T>`, being freed: this is
/// its destructor, which CPython calls once, with the GIL held.
unsafe extern "C" fn drop_capsule<T: CapsuleValue>(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls this with the capsule being freed, made by
    // `into_capsule::<T>` around a boxed `T` under `T::NAME`; the box is
    // taken back once, here.
    unsafe {
        let p = ffi::PyCapsule_GetPointer(capsule, T::NAME.as_ptr());
        if p.is_null() {
            ffi::PyErr_Clear();
            return;
        }
        Box::from_raw(p.cast::<T>()).release();
    }
}

/// `value` in a new capsule named `T::NAME`, which owns it.
fn into_capsule<T: CapsuleValue>(py: Python<'_>, value: T) -> PyResult<Bound<'_, PyAny>> {
    let raw = Box::into_raw(Box::new(value));
    // SAFETY: we hold the GIL; the capsule takes the box (freed by
    // `drop_capsule::<T>`), and its name is static. On failure it returns
    // NULL with an exception set, and the box is freed here.
    unsafe {
        let cap = ffi::PyCapsule_New(raw.cast(), T::NAME.as_ptr(), Some(drop_capsule::<T>));
        if cap.is_null() {
            Box::from_raw(raw).release();
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, cap))
    }
}

/// The columns of a native input, as a stream of Arrow record batches of
/// `utf8` columns: pass it to `pyarrow.table`, `polars.DataFrame`,
/// `duckdb.sql("from s")` or anything that reads the Arrow PyCapsule
/// interface (`__arrow_c_stream__`). It can be read once.
#[pyclass(module = "fastcsv._fastcsv", name = "ArrowStream")]
pub struct ArrowStream {
    names: Vec<String>,
    types: Vec<arrow::DataType>,
    /// How text columns are exported.
    strings: arrow::ffi::Strings,
    /// Until read (a `Mutex` only to make the class `Sync`: pyo3 hands out
    /// `&mut self` alone).
    cols: Option<Mutex<BatchBox>>,
}

impl ArrowStream {
    /// Whether `requested` (a capsule of an `ArrowSchema`) is the stream's
    /// schema: its fields' names and formats (and dictionaries') the
    /// stream's; else a `ValueError` naming the first that differs.
    fn check_requested(&self, requested: &Bound<'_, PyAny>) -> PyResult<()> {
        /// The names and formats (with a dictionary's) of a struct
        /// schema's fields.
        ///
        /// # Safety
        ///
        /// `s` is a live `ArrowSchema`, as the C data interface lays it
        /// out.
        unsafe fn fields(s: &arrow::ffi::ArrowSchema) -> Vec<(String, String)> {
            let text = |p: *const std::ffi::c_char| {
                if p.is_null() {
                    String::new()
                } else {
                    // SAFETY: a non-null name or format of a live schema
                    // is a NUL-terminated string.
                    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
                }
            };
            (0..usize::try_from(s.n_children).unwrap_or(0))
                .filter_map(|k| {
                    // SAFETY: a live schema has `n_children` live children.
                    let c = unsafe { s.children.add(k).read().as_ref()? };
                    let mut format = text(c.format);
                    // SAFETY: a dictionary, when not null, is a live schema.
                    if let Some(d) = unsafe { c.dictionary.as_ref() } {
                        format = format!("{format} dictionary of {}", text(d.format));
                    }
                    Some((text(c.name), format))
                })
                .collect()
        }
        let name = arrow::ffi::ArrowSchema::NAME;
        // SAFETY: `requested` is a live object; the pointer is checked for
        // a capsule of that name, and the schema it holds is the
        // caller's, read only here, while the capsule lives.
        let wanted = unsafe {
            let p = ffi::PyCapsule_GetPointer(requested.as_ptr(), name.as_ptr());
            if p.is_null() {
                ffi::PyErr_Clear();
                return Err(PyTypeError::new_err(
                    "requested_schema must be a PyCapsule of an arrow_schema",
                ));
            }
            fields(&*p.cast::<arrow::ffi::ArrowSchema>())
        };
        let mut ours = arrow::ffi::export_schema_as(&self.names, &self.types, self.strings);
        // SAFETY: just made; released once, below.
        let have = unsafe { fields(&ours) };
        ours.release();
        if wanted == have {
            return Ok(());
        }
        let shown = |f: Option<&(String, String)>| {
            f.map_or("no column".to_owned(), |(n, t)| format!("column {n:?} of format {t:?}"))
        };
        let k = (0..wanted.len().max(have.len())).find(|&k| wanted.get(k) != have.get(k));
        let k = k.unwrap_or(0);
        Err(PyValueError::new_err(format!(
            "read_arrow cannot cast its stream to the requested schema: field {k} is {}, \
             {} was requested (ask for the types with read_arrow(types=...))",
            shown(have.get(k)),
            shown(wanted.get(k))
        )))
    }
}

#[pymethods]
impl ArrowStream {
    /// The column names.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// The column types' names (`utf8`, `int64`, `float64`, `bool`,
    /// `date32[day]`, `timestamp[s]`, `timestamp[ns, tz=UTC]`, and those of
    /// the types asked for: `int8`, `decimal128(10, 2)`, ...).
    #[getter]
    fn column_types(&self) -> Vec<&'static str> {
        self.types.iter().map(|t| t.name()).collect()
    }

    /// All the batches as a `pyarrow.Table`; a data error in any row is
    /// raised as `fastcsv.Error` (`csv.Error`), whatever pyarrow raised.
    fn read_all(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        consume(slf, "pyarrow")
    }

    /// All the batches as a `pandas.DataFrame` (through pyarrow), errors
    /// as for `read_all`.
    fn to_pandas(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        consume(slf, "pandas")
    }

    /// All the batches as a `polars.DataFrame`, errors as for `read_all`.
    fn to_polars(slf: &Bound<'_, Self>) -> PyResult<PyObject> {
        consume(slf, "polars")
    }

    /// The Arrow PyCapsule interface: a capsule holding an
    /// `ArrowArrayStream` of the batches, which the caller reads. A
    /// `requested_schema` (a capsule of an `ArrowSchema`) is honoured when
    /// it is the stream's schema (same names and types); any other is a
    /// `ValueError` naming the first column that differs: the stream is
    /// not cast (ask for the types with `read_arrow(types=...)`).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(r) = requested_schema.filter(|r| !r.is_none()) {
            self.check_requested(r)?;
        }
        let Some(cols) = self.cols.take() else {
            return Err(PyValueError::new_err("this Arrow stream was already read"));
        };
        let cols = cols.into_inner().unwrap_or_else(|e| e.into_inner());
        into_capsule(py, arrow::ffi::export_stream_as(cols, self.strings))
    }

    /// The Arrow PyCapsule interface: a capsule holding the
    /// `ArrowSchema` of the batches (a struct of nullable fields), which
    /// consumers may ask for before the stream, and after it.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        into_capsule(py, arrow::ffi::export_schema_as(&self.names, &self.types, self.strings))
    }

    fn __repr__(&self) -> String {
        let state = if self.cols.is_some() { "unread" } else { "read" };
        format!("<fastcsv.ArrowStream of {} columns, {state}>", self.names.len())
    }
}

/// What `read_arrow`'s `types` asks for.
enum TypesArg {
    /// Every column `utf8`.
    Text,
    /// Inferred from every value of each column ([`arrow::InferredColumns`]).
    Infer,
    /// Inferred from the first rows (`infer_rows`), as the stream is read.
    Sampled(usize),
    /// Given for some columns (by index), the others `utf8`.
    Given(Vec<(ColumnKey, arrow::DataType)>),
}

/// A column named in `types` or `columns`: by name or by index.
enum ColumnKey {
    Name(String),
    Index(usize),
}

impl ColumnKey {
    /// `k` as a column's name or index (`what`: the argument, for errors).
    fn from_py(k: &Bound<'_, PyAny>, what: &str) -> PyResult<ColumnKey> {
        if let Ok(name) = k.extract::<String>() {
            Ok(ColumnKey::Name(name))
        } else if k.is_instance_of::<pyo3::types::PyBool>() {
            Err(PyTypeError::new_err(format!("a column in {what} is a name or an index")))
        } else if let Ok(i) = k.extract::<usize>() {
            Ok(ColumnKey::Index(i))
        } else {
            Err(PyTypeError::new_err(format!(
                "a column in {what} is a name or an index, not {}",
                k.repr()?
            )))
        }
    }

    /// The index of the column among `names` (`what`: the argument, for
    /// errors).
    fn index(&self, names: &[String], what: &str) -> PyResult<usize> {
        match self {
            ColumnKey::Name(n) => names.iter().position(|x| x == n).ok_or_else(|| {
                PyValueError::new_err(format!("{what} names a column {n:?} the file does not have"))
            }),
            ColumnKey::Index(i) if *i < names.len() => Ok(*i),
            ColumnKey::Index(i) => Err(PyValueError::new_err(format!(
                "{what} names column {i}, but there are {} columns",
                names.len()
            ))),
        }
    }
}

/// What `read_arrow`'s `columns` asks for: the columns to read, by name or
/// index, in their order; `None` for all.
fn column_keys(columns: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<ColumnKey>>> {
    let Some(c) = columns.filter(|c| !c.is_none()) else { return Ok(None) };
    if c.is_instance_of::<PyString>()
        || c.is_instance_of::<PyBytes>()
        || c.is_instance_of::<PyDict>()
    {
        return Err(PyTypeError::new_err(format!(
            "columns must be a list of column names or indices, not {}",
            c.get_type().name()?
        )));
    }
    let mut keys = Vec::new();
    for k in c
        .try_iter()
        .map_err(|_| PyTypeError::new_err("columns must be a list of column names or indices"))?
    {
        keys.push(ColumnKey::from_py(&k?, "columns")?);
    }
    Ok(Some(keys))
}

/// A list of strings (`null_values`, ...: `what`), as UTF-8 bytes; `None`
/// when not given.
fn words(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Vec<Vec<u8>>>> {
    let Some(v) = v.filter(|v| !v.is_none()) else { return Ok(None) };
    let bad = || PyTypeError::new_err(format!("{what} must be a list of str"));
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
        return Err(bad());
    }
    let mut out = Vec::new();
    for w in v.try_iter().map_err(|_| bad())? {
        let w = w?;
        let s = w.downcast::<PyString>().map_err(|_| bad())?;
        out.push(s.to_str()?.as_bytes().to_vec());
    }
    Ok(Some(out))
}

/// The indices among `names` of the columns `keys` asks for, each once.
fn resolve_columns(keys: &[ColumnKey], names: &[String]) -> PyResult<Vec<usize>> {
    let mut idx = Vec::with_capacity(keys.len());
    let mut seen = vec![false; names.len()];
    for k in keys {
        let j = k.index(names, "columns")?;
        if std::mem::replace(&mut seen[j], true) {
            return Err(PyValueError::new_err(format!(
                "columns names column {:?} twice",
                names[j]
            )));
        }
        idx.push(j);
    }
    Ok(idx)
}

impl TypesArg {
    fn from_py(types: Option<&Bound<'_, PyAny>>, infer_rows: Option<usize>) -> PyResult<TypesArg> {
        let is_infer = types.and_then(|t| t.extract::<String>().ok()).is_some_and(|s| s == "infer");
        match infer_rows {
            Some(0) => return Err(PyValueError::new_err("infer_rows must be at least 1")),
            Some(n) if is_infer => return Ok(TypesArg::Sampled(n)),
            Some(_) => {
                return Err(PyValueError::new_err("infer_rows is given with types='infer' only"))
            }
            None => {}
        }
        let Some(t) = types.filter(|t| !t.is_none()) else { return Ok(TypesArg::Text) };
        if let Ok(s) = t.extract::<String>() {
            return match s.as_str() {
                "infer" => Ok(TypesArg::Infer),
                _ => Err(PyValueError::new_err(format!(
                    "types must be None, 'infer' or a dict of column types, not {s:?}"
                ))),
            };
        }
        let Ok(d) = t.downcast::<PyDict>() else {
            return Err(PyTypeError::new_err(format!(
                "types must be None, 'infer' or a dict of column types, not {}",
                t.get_type().name()?
            )));
        };
        let mut given = Vec::new();
        for (k, v) in d.iter() {
            let key = ColumnKey::from_py(&k, "types")?;
            let ty = type_from_py(&v)?;
            given.push((key, ty));
        }
        Ok(TypesArg::Given(given))
    }

    /// The types of the columns `picked` (all when `None`) of a file
    /// whose columns are named `names`, when given. (A column given a type
    /// but not picked is left out.)
    fn resolve(
        &self,
        names: &[String],
        picked: Option<&[usize]>,
    ) -> PyResult<Option<Vec<arrow::DataType>>> {
        let TypesArg::Given(given) = self else { return Ok(None) };
        let mut types = vec![arrow::DataType::Utf8; names.len()];
        for (key, ty) in given {
            types[key.index(names, "types")?] = *ty;
        }
        Ok(Some(match picked {
            Some(p) => p.iter().map(|&j| types[j]).collect(),
            None => types,
        }))
    }
}

/// Reads `stream` whole with the consumer `kind`, through the Python
/// layer's `fastcsv._consume` (which turns a data error into
/// `fastcsv.Error`).
fn consume(stream: &Bound<'_, ArrowStream>, kind: &str) -> PyResult<PyObject> {
    let py = stream.py();
    let f = py.import("fastcsv")?.getattr("_consume")?;
    Ok(f.call1((stream, kind))?.unbind())
}

/// A column type given in `types`: a pyarrow type (`pa.int32()`, whose
/// `str` is its name) or its name (`"int32"`, `"timestamp[us, tz=UTC]"`,
/// `"decimal128(10, 2)"`, ...), honoured exactly; any other is a
/// `TypeError` listing the names taken. This is the one place where type
/// specs are read (pandas' `dtype=` maps onto it).
pub(crate) fn type_from_py(v: &Bound<'_, PyAny>) -> PyResult<arrow::DataType> {
    let name = if let Ok(s) = v.downcast::<PyString>() {
        s.to_str()?.to_owned()
    } else {
        // A pyarrow DataType: its `str` is its name.
        v.str()?.to_string()
    };
    arrow::DataType::from_name(&name).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "unknown column type {name:?}: types are {}",
            arrow::TYPE_NAMES
        ))
    })
}

/// The columns of a native input as an Arrow stream (see [`ArrowStream`]).
#[pyfunction]
#[pyo3(signature = (dialect, spec, header, batch_rows, names=None, threads=1, types=None, string_view=false, columns=None, null_values=None, true_values=None, false_values=None, strings_can_be_null=false, infer_rows=None, text_null_values=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _read_arrow(
    py: Python<'_>,
    dialect: &Bound<'_, PyAny>,
    spec: &Bound<'_, PyDict>,
    header: bool,
    batch_rows: usize,
    names: Option<Vec<String>>,
    threads: usize,
    types: Option<&Bound<'_, PyAny>>,
    string_view: bool,
    columns: Option<&Bound<'_, PyAny>>,
    null_values: Option<&Bound<'_, PyAny>>,
    true_values: Option<&Bound<'_, PyAny>>,
    false_values: Option<&Bound<'_, PyAny>>,
    strings_can_be_null: bool,
    infer_rows: Option<usize>,
    text_null_values: Option<&Bound<'_, PyAny>>,
) -> PyResult<ArrowStream> {
    let strings = if string_view { arrow::ffi::Strings::View } else { arrow::ffi::Strings::Utf8 };
    let types = TypesArg::from_py(types, infer_rows)?;
    // With types on the whole column, the views are built once the types
    // are settled (a column's text is taken as `utf8`).
    let source_views = string_view && !matches!(types, TypesArg::Infer);
    let keys = column_keys(columns)?;
    let mut spellings = arrow::Spellings::default().strings_can_be_null(strings_can_be_null);
    if let Some(v) = words(null_values, "null_values")? {
        spellings = spellings.nulls(v);
    }
    if let Some(v) = words(true_values, "true_values")? {
        spellings = spellings.trues(v);
    }
    if let Some(v) = words(false_values, "false_values")? {
        spellings = spellings.falses(v);
    }
    if let Some(v) = words(text_null_values, "text_null_values")? {
        spellings = spellings.text_nulls(v);
    }
    let mut spec = Spec::from_dict(spec)?;
    let pd = PyDialect::from_py(dialect)?;
    if pd.nonnumeric {
        return Err(PyValueError::new_err(
            "read_arrow gives text columns: quoting=QUOTE_NONNUMERIC is not supported",
        ));
    }
    if spec.errors != "strict" {
        return Err(PyValueError::new_err(
            "read_arrow checks that every value is UTF-8: errors must be 'strict'",
        ));
    }
    let stash = PyErrStash::default();
    // A whole file on several threads: in exact parts, a few per thread.
    let size = match (&spec.path, &spec.part, threads > 1) {
        (Some(p), None, true) => std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len()),
        _ => None,
    };
    if let (Some(size), Some(path)) = (size, spec.path.clone()) {
        if size >= 2 * PAR_ARROW_MIN_PART {
            let part = (size / (4 * threads as u64)).clamp(PAR_ARROW_MIN_PART, 64 << 20);
            let b = native_builder(py, &pd, &spec)?;
            let watch = Watch::path(&path);
            // Columns named as the sequential read names them: by the
            // caller's `names`, else the header row (or numbered).
            let par_open = || match &names {
                Some(n) => arrow::ParColumns::from_path_named(&b, &path, n.clone(), threads, part),
                None => arrow::ParColumns::from_path(&b, &path, header, threads, part),
            };
            let cols = py.allow_threads(|| {
                let mut c = par_open()?;
                c.batch_rows(batch_rows).string_view(source_views);
                Ok::<_, CoreError>(c)
            });
            let mut cols = cols.map_err(|e| map_error(e, &stash))?;
            let all = cols.names().to_vec();
            let picked = keys.as_deref().map(|k| resolve_columns(k, &all)).transpose()?;
            if let Some(p) = &picked {
                cols.select(p).map_err(|e| map_error(e, &stash))?;
            }
            cols.set_spellings(spellings.clone());
            let names = cols.names().to_vec();
            if let Some(t) = types.resolve(&all, picked.as_deref())? {
                cols.set_types(t).map_err(|e| map_error(e, &stash))?;
            } else if let TypesArg::Sampled(rows) = types {
                let inferred = py.allow_threads(|| cols.infer_types(rows));
                inferred.map_err(|e| map_error(e, &stash))?;
            } else if let TypesArg::Infer = types {
                // Opened again as this one was, for each pass.
                let open = || {
                    let mut c = par_open()?;
                    c.batch_rows(batch_rows);
                    if let Some(p) = &picked {
                        c.select(p)?;
                    }
                    c.set_spellings(spellings.clone());
                    Ok(c)
                };
                let typed = py.allow_threads(|| {
                    arrow::InferredColumns::read_par(cols, open, &spellings, threads, string_view)
                });
                let typed = typed.map_err(|e| map_error(e, &stash))?;
                let (names, types) = (typed.names().to_vec(), typed.types());
                let src: BatchBox = Box::new(typed);
                return Ok(ArrowStream { names, types, strings, cols: Some(Mutex::new(src)) });
            }
            let types = cols.types();
            let src: BatchBox = Box::new(GilFree(Watched::new(cols, watch, Some(path))));
            return Ok(ArrowStream { names, types, strings, cols: Some(Mutex::new(src)) });
        }
    }
    // A regular file can be opened again: typed on every value, it is
    // read with the types of its first rows, converted as read, and read
    // again only when a value does not fit them.
    let again = match (&spec.path, &spec.fd, &spec.stream, &types) {
        (Some(p), None, None, TypesArg::Infer)
            if std::fs::metadata(p).is_ok_and(|m| m.is_file()) =>
        {
            Some((native_builder(py, &pd, &spec)?, p.clone(), spec.part.clone()))
        }
        _ => None,
    };
    let rdr = match spec.stream.take() {
        // A stream is read through its Python methods, which a consumer's
        // thread could not call while the thread holding the GIL waits for
        // that consumer (DuckDB): it is read whole now.
        Some(obj) => {
            let mut data = Vec::new();
            let read = PyStream::new(py, obj.bind(py), &stash)?.read_to_end(&mut data);
            read.map_err(|e| stash.take().unwrap_or_else(|| PyOSError::new_err(e.to_string())))?;
            HeldReader::new(native_builder(py, &pd, &spec)?.from_reader(io::Cursor::new(data)))
        }
        None => open_native(py, &pd, &mut spec, &stash)?,
    };
    let (rdr, watch) = rdr.into_parts();
    // Input rewritten in Python: errors give the file's byte offsets.
    let bytes = std::mem::take(&mut spec.byte_map);
    let path = spec.name.clone().map(std::path::PathBuf::from).or_else(|| spec.path.clone());
    let given_names = again.as_ref().and(names.clone());
    // The header (or first record) is read without the GIL.
    let mut cols = py
        .allow_threads(move || named_columns(rdr, names, header))
        .map_err(|e| map_error(bytes.fix(e), &stash))?;
    cols.batch_rows(batch_rows).string_view(source_views);
    let all = cols.names().to_vec();
    let picked = keys.as_deref().map(|k| resolve_columns(k, &all)).transpose()?;
    if let Some(p) = &picked {
        cols.select(p).map_err(|e| map_error(bytes.fix(e), &stash))?;
    }
    cols.set_spellings(spellings.clone());
    let names = cols.names().to_vec();
    if let Some(t) = types.resolve(&all, picked.as_deref())? {
        cols.set_types(t).map_err(|e| map_error(bytes.fix(e), &stash))?;
    } else if let TypesArg::Sampled(rows) = types {
        let c = &mut cols;
        let inferred = py.allow_threads(move || c.infer_types(rows));
        inferred.map_err(|e| map_error(bytes.fix(e), &stash))?;
    } else if let TypesArg::Infer = types {
        let Some((b, file, part)) = again else {
            return whole(py, cols, &spellings, threads, string_view, &stash, bytes);
        };
        let open = || {
            let rdr = match &part {
                Some(part) => b.from_path_part(&file, part)?,
                None => b.from_path(&file)?,
            };
            let mut c = named_columns(rdr, given_names.clone(), header)?;
            c.batch_rows(batch_rows);
            if let Some(p) = &picked {
                c.select(p)?;
            }
            c.set_spellings(spellings.clone());
            Ok(c)
        };
        let typed = py.allow_threads(|| {
            arrow::InferredColumns::read_again(cols, open, &spellings, threads, string_view)
        });
        let typed = typed.map_err(|e| map_error(bytes.fix(e), &stash))?;
        let (names, types) = (typed.names().to_vec(), typed.types());
        let src: BatchBox = Box::new(typed);
        return Ok(ArrowStream { names, types, strings, cols: Some(Mutex::new(src)) });
    }
    let types = cols.types();
    let src = GilFree(Watched::new(cols, watch, path));
    let src: BatchBox = Box::new(Remapped { inner: src, map: bytes });
    Ok(ArrowStream { names, types, strings, cols: Some(Mutex::new(src)) })
}

/// The columns of `rdr`: named `names`, else by the first non-empty row
/// when `header`, else numbered. `names` with `header` are the file's
/// header row, read for a later part of a split file: a longer row's
/// error says so.
fn named_columns(
    rdr: fastcsv::Reader<'static>,
    names: Option<Vec<String>>,
    header: bool,
) -> fastcsv::Result<arrow::Columns<'static>> {
    match names {
        Some(names) if header => {
            arrow::Columns::with_names_from(rdr, names, fastcsv::ColumnsFrom::Header)
        }
        Some(names) => arrow::Columns::with_names(rdr, names),
        None => arrow::Columns::with_header_row(rdr, header),
    }
}

/// The stream of `cols` (text columns) typed on every value of each
/// column: read whole now, without the GIL, on `threads` threads; errors
/// with the file's byte offsets by `bytes`.
fn whole<S: arrow::ffi::BatchSource + Send>(
    py: Python<'_>,
    cols: S,
    spellings: &arrow::Spellings,
    threads: usize,
    views: bool,
    stash: &PyErrStash,
    bytes: ByteMap,
) -> PyResult<ArrowStream> {
    let strings = if views { arrow::ffi::Strings::View } else { arrow::ffi::Strings::Utf8 };
    let typed = py.allow_threads(|| arrow::InferredColumns::read(cols, spellings, threads, views));
    let typed = typed.map_err(|e| map_error(bytes.fix(e), stash))?;
    let (names, types) = (typed.names().to_vec(), typed.types());
    let src: BatchBox = Box::new(Remapped { inner: typed, map: bytes });
    Ok(ArrowStream { names, types, strings, cols: Some(Mutex::new(src)) })
}

/// The smallest part a file is cut into for `read_arrow` on several
/// threads (a file under two of them is read on one).
const PAR_ARROW_MIN_PART: u64 = 4 << 20;
