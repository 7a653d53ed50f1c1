//! The Arrow C data and stream interfaces
//! (<https://arrow.apache.org/docs/format/CDataInterface.html>,
//! <https://arrow.apache.org/docs/format/CStreamInterface.html>), written
//! out here rather than taken from the `arrow` crates, which would add a
//! large build for three structs.
//!
//! [`export_stream`] turns a source of [`ColumnBatch`]es into an
//! [`ArrowArrayStream`] that any Arrow implementation imports: each batch
//! becomes a struct array (a record batch) of `utf8` children (or of the
//! columns' types: `int8` to `uint64`, `float`, `double`, `bool`,
//! `large_utf8`, `utf8_view`, a dictionary array of `int32` indices with
//! its `utf8` values, `decimal128`, dates, times and timestamps), whose
//! buffers are the batch's own vectors, moved, never copied. The schema is
//! a struct of nullable fields (a text value is never null: a CSV field is
//! at worst empty; a typed column's nulls are in its validity bitmap).
//!
//! Whoever receives the stream owns it and must call its `release`; every
//! array and schema it hands out likewise. A stream may be used from any
//! thread, one call at a time, as the interface requires.
//!
//! ```
//! use fastcsv::arrow::{ffi, Columns};
//!
//! let cols = Columns::new(fastcsv::Reader::from_slice(b"a,b\n1,2\n")).unwrap();
//! let mut stream = ffi::export_stream(cols);
//! let mut array = ffi::ArrowArray::empty();
//! // SAFETY: `stream` was just exported and not released; `array` is
//! // released below.
//! unsafe {
//!     assert_eq!((stream.get_next.unwrap())(&mut stream, &mut array), 0);
//!     assert_eq!((array.length, array.n_children), (1, 2));
//!     (array.release.unwrap())(&mut array);
//!     (stream.release.unwrap())(&mut stream);
//! }
//! ```

use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use super::{Column, ColumnBatch, DataType, PrimitiveColumn};

/// `ARROW_FLAG_NULLABLE`.
const NULLABLE: i64 = 2;
/// `EIO`, returned by `get_next` and `get_schema` on an I/O error (a read
/// that failed, a file changed while read, compressed input that could
/// not be decoded) or an internal one, then told
/// by `get_last_error`. pyarrow raises it as `OSError`.
const EIO: c_int = 5;
/// `EINVAL`, returned by `get_next` on an error in the data (a parse
/// error, a longer row, a value that does not fit its type, bytes that
/// are not UTF-8), then told by `get_last_error`: pyarrow raises it as
/// `ArrowInvalid` (a `ValueError`), as it raises its own CSV reader's.
const EINVAL: c_int = 22;

/// `struct ArrowSchema`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    /// The type, as a format string (`"u"`: utf8; `"+s"`: struct).
    pub format: *const c_char,
    /// The field's name (NUL-terminated UTF-8), or null.
    pub name: *const c_char,
    /// Metadata, or null.
    pub metadata: *const c_char,
    /// `ARROW_FLAG_*` bits.
    pub flags: i64,
    /// Number of children.
    pub n_children: i64,
    /// The children.
    pub children: *mut *mut ArrowSchema,
    /// The dictionary, or null.
    pub dictionary: *mut ArrowSchema,
    /// Frees the schema; null once released.
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    /// The producer's.
    pub private_data: *mut c_void,
}

/// `struct ArrowArray`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    /// Number of values.
    pub length: i64,
    /// Number of nulls.
    pub null_count: i64,
    /// Offset of the first value in the buffers.
    pub offset: i64,
    /// Number of buffers.
    pub n_buffers: i64,
    /// Number of children.
    pub n_children: i64,
    /// The buffers (for utf8: validity, offsets, data).
    pub buffers: *mut *const c_void,
    /// The children.
    pub children: *mut *mut ArrowArray,
    /// The dictionary, or null.
    pub dictionary: *mut ArrowArray,
    /// Frees the array; null once released.
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    /// The producer's.
    pub private_data: *mut c_void,
}

/// `struct ArrowArrayStream`.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    /// Writes the stream's schema to `out`; 0 or an `errno` value.
    pub get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    /// Writes the next batch to `out` (released, `release` null, at the
    /// end); 0 or an `errno` value.
    pub get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    /// The last error's message, valid until the next call; or null.
    pub get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    /// Frees the stream; null once released.
    pub release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    /// The producer's.
    pub private_data: *mut c_void,
}

impl ArrowSchema {
    /// A released schema, to be written by a producer.
    pub fn empty() -> ArrowSchema {
        ArrowSchema {
            format: ptr::null(),
            name: ptr::null(),
            metadata: ptr::null(),
            flags: 0,
            n_children: 0,
            children: ptr::null_mut(),
            dictionary: ptr::null_mut(),
            release: None,
            private_data: ptr::null_mut(),
        }
    }
}

impl ArrowArray {
    /// A released array, to be written by a producer.
    pub fn empty() -> ArrowArray {
        ArrowArray {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: ptr::null_mut(),
            children: ptr::null_mut(),
            dictionary: ptr::null_mut(),
            release: None,
            private_data: ptr::null_mut(),
        }
    }
}

impl ArrowArrayStream {
    /// A released stream, to be written by a producer.
    pub fn empty() -> ArrowArrayStream {
        ArrowArrayStream {
            get_schema: None,
            get_next: None,
            get_last_error: None,
            release: None,
            private_data: ptr::null_mut(),
        }
    }
}

/// What [`export_stream`] reads batches from.
pub trait BatchSource {
    /// The column names (fixed).
    fn names(&self) -> &[String];
    /// The column types (fixed; by default every column is `utf8`).
    fn types(&self) -> Vec<DataType> {
        vec![DataType::Utf8; self.names().len()]
    }
    /// The next batch, `None` at the end.
    fn next_batch(&mut self) -> crate::Result<Option<ColumnBatch>>;
}

impl<T: BatchSource + ?Sized> BatchSource for Box<T> {
    fn names(&self) -> &[String] {
        (**self).names()
    }
    fn types(&self) -> Vec<DataType> {
        (**self).types()
    }
    fn next_batch(&mut self) -> crate::Result<Option<ColumnBatch>> {
        (**self).next_batch()
    }
}

impl BatchSource for super::Columns<'_> {
    fn names(&self) -> &[String] {
        super::Columns::names(self)
    }
    fn types(&self) -> Vec<DataType> {
        super::Columns::types(self)
    }
    fn next_batch(&mut self) -> crate::Result<Option<ColumnBatch>> {
        super::Columns::next_batch(self)
    }
}

impl BatchSource for super::ParColumns {
    fn names(&self) -> &[String] {
        super::ParColumns::names(self)
    }
    fn types(&self) -> Vec<DataType> {
        super::ParColumns::types(self)
    }
    fn next_batch(&mut self) -> crate::Result<Option<ColumnBatch>> {
        super::ParColumns::next_batch(self)
    }
}

// ---------------------------------------------------------------------------
// Schemas

/// What a schema made here owns.
struct SchemaData {
    format: CString,
    name: CString,
    /// The children (never moved once their addresses are handed out) and
    /// the array of pointers to them.
    children: Vec<ArrowSchema>,
    child_ptrs: Vec<*mut ArrowSchema>,
    /// The dictionary's schema (values of a dictionary field), boxed so
    /// that its address stays.
    dictionary: Option<Box<ArrowSchema>>,
}

/// A schema of format `format` named `name`, with `children`.
fn schema(format: &str, name: &str, flags: i64, children: Vec<ArrowSchema>) -> ArrowSchema {
    // A NUL in a name ends it early, as C reads it.
    let cut = |s: &str| CString::new(s.split('\0').next().unwrap_or("")).unwrap_or_default();
    let mut data = Box::new(SchemaData {
        format: cut(format),
        name: cut(name),
        children,
        child_ptrs: Vec::new(),
        dictionary: None,
    });
    data.child_ptrs = data.children.iter_mut().map(|c| c as *mut ArrowSchema).collect();
    ArrowSchema {
        format: data.format.as_ptr(),
        name: data.name.as_ptr(),
        metadata: ptr::null(),
        flags,
        n_children: data.child_ptrs.len() as i64,
        children: if data.child_ptrs.is_empty() {
            ptr::null_mut()
        } else {
            data.child_ptrs.as_mut_ptr()
        },
        dictionary: ptr::null_mut(),
        release: Some(release_schema),
        private_data: Box::into_raw(data).cast(),
    }
}

/// The schema of a stream of columns named `names`: a struct of nullable
/// `utf8` fields, owned by the caller from now on (who must call its
/// `release`).
///
/// ```
/// let mut s = fastcsv::arrow::ffi::export_schema(&["a".to_owned()]);
/// assert_eq!(s.n_children, 1);
/// // SAFETY: the schema was just made and is released once.
/// unsafe { (s.release.unwrap())(&mut s) };
/// assert!(s.release.is_none());
/// ```
pub fn export_schema(names: &[String]) -> ArrowSchema {
    export_typed_schema(names, &[])
}

/// The schema of a stream of columns named `names` of types `types`
/// (`utf8` past their end): a struct of nullable fields, owned by the
/// caller from now on (who must call its `release`).
///
/// ```
/// use fastcsv::arrow::DataType;
/// let names = ["a".to_owned(), "b".to_owned()];
/// let mut s = fastcsv::arrow::ffi::export_typed_schema(&names, &[DataType::Int64]);
/// // SAFETY: the schema was just made; its children live until it is
/// // released, once, below.
/// unsafe {
///     let b = &**s.children.add(1);
///     assert_eq!(std::ffi::CStr::from_ptr(b.format).to_str(), Ok("u"));
///     (s.release.unwrap())(&mut s);
/// }
/// ```
pub fn export_typed_schema(names: &[String], types: &[DataType]) -> ArrowSchema {
    export_schema_as(names, types, Strings::Utf8)
}

/// How text columns are laid out in an exported stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strings {
    /// Arrow `utf8`: `i32` offsets and the bytes (the batch's own buffers).
    #[default]
    Utf8,
    /// Arrow `utf8_view` (`string_view`): 16 bytes per value, the value
    /// itself when it has at most 12 bytes, else its length, first 4 bytes
    /// and place in the batch's bytes. polars keeps its strings this way
    /// and takes such a column without a copy (a `utf8` one it converts);
    /// building the views costs a pass over the offsets.
    View,
}

/// [`export_typed_schema`] with text columns laid out as `strings` says.
pub fn export_schema_as(names: &[String], types: &[DataType], strings: Strings) -> ArrowSchema {
    let fields = names
        .iter()
        .enumerate()
        .map(|(j, n)| {
            let ty = types.get(j).copied().unwrap_or(DataType::Utf8);
            let format = match ty {
                DataType::Utf8 if strings == Strings::View => "vu",
                ty => ty.format(),
            };
            let field = schema(format, n, NULLABLE, Vec::new());
            match ty {
                // The values: text, never null.
                DataType::Dictionary => with_dictionary(field, schema("u", "", 0, Vec::new())),
                _ => field,
            }
        })
        .collect();
    schema("+s", "", 0, fields)
}

/// `field` (made by `schema`) with `values` as its dictionary, which it
/// owns from now on.
fn with_dictionary(mut field: ArrowSchema, values: ArrowSchema) -> ArrowSchema {
    // SAFETY: `field` was made by `schema` and is not released: its
    // private data is its `SchemaData`, which takes the values, boxed so
    // that their address stays while it lives (released with it).
    let data = unsafe { &mut *field.private_data.cast::<SchemaData>() };
    let d = data.dictionary.insert(Box::new(values));
    field.dictionary = &mut **d;
    field
}

unsafe extern "C" fn release_schema(s: *mut ArrowSchema) {
    // SAFETY: the interface calls `release` with the schema it was set on,
    // not yet released; its private data is the `SchemaData` boxed by
    // `schema`, taken back once (`release` is cleared below). A child a
    // consumer moved away has a null `release` here and is freed by its
    // new owner; the others are released first, as the interface asks.
    unsafe {
        let Some(s) = s.as_mut() else { return };
        if s.release.is_none() {
            return;
        }
        let mut data = Box::from_raw(s.private_data.cast::<SchemaData>());
        for c in &mut data.children {
            if let Some(r) = c.release {
                r(c);
            }
        }
        if let Some(d) = &mut data.dictionary {
            if let Some(r) = d.release {
                r(&mut **d);
            }
        }
        drop(data);
        s.release = None;
    }
}

// ---------------------------------------------------------------------------
// Arrays

/// What an array made here owns.
struct ArrayData {
    /// A child's buffers (for the struct, none).
    _column: Option<Column>,
    /// A `utf8_view` child's sizes of its data buffers (one).
    _views: Option<Vec<i64>>,
    buffers: Vec<*const c_void>,
    /// As in `SchemaData`.
    children: Vec<ArrowArray>,
    child_ptrs: Vec<*mut ArrowArray>,
    /// A dictionary column's values, boxed so that their address stays.
    dictionary: Option<Box<ArrowArray>>,
}

/// The array of one column in the layout it has, owning its buffers:
/// `utf8` (validity, offsets, data), `large_utf8` (the same with 64-bit
/// offsets), `utf8_view` (validity, views, the one data buffer, the data
/// buffers' sizes), a fixed-width type (validity, values; booleans as
/// bits), or a dictionary (validity, `int32` indices, and the values as
/// the dictionary array).
fn leaf_array(col: Column) -> ArrowArray {
    let len = col.len() as i64;
    let nulls = col.null_count() as i64;
    // The validity bitmap is null when no value is; the other buffers are
    // never null, even when empty (a dangling, aligned pointer).
    let bitmap = |v: Option<&[u8]>| v.map_or(ptr::null(), |v| v.as_ptr().cast());
    fn fixed<T: Copy>(c: &PrimitiveColumn<T>) -> Vec<*const c_void> {
        let v = c.validity().map_or(ptr::null(), |v| v.as_ptr().cast());
        vec![v, c.values().as_ptr().cast()]
    }
    let mut sizes = None;
    let mut dictionary = None;
    let (col, buffers): (Option<Column>, Vec<*const c_void>) = match col {
        Column::Dictionary(d) => {
            let (keys, values) = d.into_parts();
            dictionary = Some(Box::new(leaf_array(Column::Utf8(values))));
            let b = fixed(&keys);
            (Some(Column::Int32(keys)), b)
        }
        col => {
            let b = match &col {
                Column::Utf8(c) => vec![
                    bitmap(c.validity()),
                    c.offsets().as_ptr().cast(),
                    c.data().as_ptr().cast(),
                ],
                Column::LargeUtf8(c) => vec![
                    bitmap(c.validity()),
                    c.offsets().as_ptr().cast(),
                    c.data().as_ptr().cast(),
                ],
                Column::Utf8View(c) => {
                    let s: &[i64] = sizes.insert(vec![c.data().len() as i64]);
                    vec![
                        bitmap(c.validity()),
                        c.views().as_ptr().cast(),
                        c.data().as_ptr().cast(),
                        s.as_ptr().cast(),
                    ]
                }
                Column::Boolean(c) => vec![bitmap(c.validity()), c.bits().as_ptr().cast()],
                Column::Int64(c) => fixed(c),
                Column::Float64(c) => fixed(c),
                Column::Date32(c) => fixed(c),
                Column::Int8(c) => fixed(c),
                Column::Int16(c) => fixed(c),
                Column::Int32(c) => fixed(c),
                Column::UInt8(c) => fixed(c),
                Column::UInt16(c) => fixed(c),
                Column::UInt32(c) => fixed(c),
                Column::UInt64(c) => fixed(c),
                Column::Float32(c) => fixed(c),
                Column::Decimal128 { values, .. } => fixed(values),
                Column::Time32 { values, .. } => fixed(values),
                Column::Time64 { values, .. }
                | Column::Timestamp { values, .. }
                | Column::TimestampIn { values, .. } => fixed(values),
                Column::Dictionary(_) => unreachable!("matched above"),
            };
            (Some(col), b)
        }
    };
    let mut data = Box::new(ArrayData {
        buffers,
        _column: col,
        _views: sizes,
        children: Vec::new(),
        child_ptrs: Vec::new(),
        dictionary,
    });
    let dict = data.dictionary.as_mut().map_or(ptr::null_mut(), |d| &mut **d as *mut ArrowArray);
    ArrowArray {
        length: len,
        null_count: nulls,
        offset: 0,
        n_buffers: data.buffers.len() as i64,
        n_children: 0,
        buffers: data.buffers.as_mut_ptr(),
        children: ptr::null_mut(),
        dictionary: dict,
        release: Some(release_array),
        private_data: Box::into_raw(data).cast(),
    }
}

/// The array of one column with text as `utf8` (what the schema says
/// without views): a view column gets its offsets back.
fn column_array(col: Column) -> ArrowArray {
    leaf_array(match col {
        Column::Utf8View(v) => Column::Utf8(v.into_strings()),
        other => other,
    })
}

/// The array of one column with text as `utf8_view`. A `utf8` column's
/// views are built here (on the consumer's thread); a source that builds
/// them with its batches ([`super::Columns::string_view`]) gives
/// `Utf8View` columns, taken as they are.
fn view_array(col: Column) -> ArrowArray {
    leaf_array(match col {
        Column::Utf8(c) => Column::Utf8View(super::ViewColumn::from_strings(c)),
        other => other,
    })
}

/// A batch as a struct array of children in the layouts of `types`
/// (`utf8` ones as `strings` says).
fn batch_array(b: ColumnBatch, strings: Strings, types: &[DataType]) -> ArrowArray {
    let rows = b.rows() as i64;
    let text = match strings {
        Strings::View => view_array,
        Strings::Utf8 => column_array,
    };
    let child = |(j, col): (usize, Column)| match types.get(j).copied().unwrap_or(DataType::Utf8) {
        DataType::Utf8 => text(col),
        // Another text layout asked for by its type, as it was made.
        _ => leaf_array(col),
    };
    let mut data = Box::new(ArrayData {
        _column: None,
        _views: None,
        buffers: vec![ptr::null()],
        children: b.into_columns().into_iter().enumerate().map(child).collect(),
        child_ptrs: Vec::new(),
        dictionary: None,
    });
    data.child_ptrs = data.children.iter_mut().map(|c| c as *mut ArrowArray).collect();
    ArrowArray {
        length: rows,
        null_count: 0,
        offset: 0,
        n_buffers: 1,
        n_children: data.child_ptrs.len() as i64,
        buffers: data.buffers.as_mut_ptr(),
        children: if data.child_ptrs.is_empty() {
            ptr::null_mut()
        } else {
            data.child_ptrs.as_mut_ptr()
        },
        dictionary: ptr::null_mut(),
        release: Some(release_array),
        private_data: Box::into_raw(data).cast(),
    }
}

unsafe extern "C" fn release_array(a: *mut ArrowArray) {
    // SAFETY: as for `release_schema`, with the `ArrayData` boxed by
    // `column_array` or `batch_array`; the buffers handed out are the
    // vectors it owns, freed with it.
    unsafe {
        let Some(a) = a.as_mut() else { return };
        if a.release.is_none() {
            return;
        }
        let mut data = Box::from_raw(a.private_data.cast::<ArrayData>());
        for c in &mut data.children {
            if let Some(r) = c.release {
                r(c);
            }
        }
        if let Some(d) = &mut data.dictionary {
            if let Some(r) = d.release {
                r(&mut **d);
            }
        }
        drop(data);
        a.release = None;
    }
}

// ---------------------------------------------------------------------------
// Streams

/// What a stream made here owns.
struct StreamData {
    source: Box<dyn BatchSource + Send>,
    last_error: Option<CString>,
    strings: Strings,
}

/// A stream of `source`'s batches, for a consumer of the Arrow C stream
/// interface, which owns it from now on (and must call its `release`).
pub fn export_stream<S: BatchSource + Send + 'static>(source: S) -> ArrowArrayStream {
    export_stream_as(source, Strings::Utf8)
}

/// [`export_stream`] with text columns laid out as `strings` says.
pub fn export_stream_as<S: BatchSource + Send + 'static>(
    source: S,
    strings: Strings,
) -> ArrowArrayStream {
    let data = Box::new(StreamData { source: Box::new(source), last_error: None, strings });
    ArrowArrayStream {
        get_schema: Some(stream_get_schema),
        get_next: Some(stream_get_next),
        get_last_error: Some(stream_last_error),
        release: Some(release_stream),
        private_data: Box::into_raw(data).cast(),
    }
}

/// The stream's data, if the stream is live.
///
/// # Safety
///
/// `s` is null or a stream made by [`export_stream`], used by one thread
/// at a time.
unsafe fn stream_data<'s>(s: *mut ArrowArrayStream) -> Option<&'s mut StreamData> {
    // SAFETY: as the caller promises; a released stream has no data.
    unsafe {
        let s = s.as_mut()?;
        s.release?;
        s.private_data.cast::<StreamData>().as_mut()
    }
}

/// Keeps `msg` for `get_last_error` and returns `EIO`.
fn fail(d: &mut StreamData, msg: String) -> c_int {
    d.last_error = Some(CString::new(msg.replace('\0', " ")).unwrap_or_default());
    EIO
}

/// Keeps `e`'s whole message (path, line, record, byte) for
/// `get_last_error` and returns the `errno` value of its kind.
fn fail_with(d: &mut StreamData, e: &crate::error::Error) -> c_int {
    use crate::error::ErrorKind;
    fail(d, e.to_string());
    match e.kind() {
        // An input that could not be read (pyarrow's own compressed
        // streams raise a decoder's failure as an I/O error too).
        ErrorKind::Io(_) | ErrorKind::FileChanged | ErrorKind::Decompress { .. } => EIO,
        _ => EINVAL,
    }
}

unsafe extern "C" fn stream_get_schema(s: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int {
    // SAFETY: the interface calls this with a live stream made by
    // `export_stream` and a schema to write.
    let Some(d) = (unsafe { stream_data(s) }) else { return EIO };
    if out.is_null() {
        return fail(d, "get_schema: no schema to write to".into());
    }
    let schema = || export_schema_as(d.source.names(), &d.source.types(), d.strings);
    match catch_unwind(AssertUnwindSafe(schema)) {
        Ok(schema) => {
            // SAFETY: `out` is not null and the consumer's to write.
            unsafe { out.write(schema) };
            0
        }
        Err(_) => fail(d, "internal error while making the schema".into()),
    }
}

unsafe extern "C" fn stream_get_next(s: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int {
    // SAFETY: as for `stream_get_schema`.
    let Some(d) = (unsafe { stream_data(s) }) else { return EIO };
    if out.is_null() {
        return fail(d, "get_next: no array to write to".into());
    }
    let strings = d.strings;
    let next = catch_unwind(AssertUnwindSafe(|| {
        let types = d.source.types();
        d.source.next_batch().map(|b| b.map(|b| batch_array(b, strings, &types)))
    }));
    let array = match next {
        Ok(Ok(Some(a))) => a,
        Ok(Ok(None)) => ArrowArray::empty(),
        Ok(Err(e)) => return fail_with(d, &e),
        Err(_) => return fail(d, "internal error while reading a batch".into()),
    };
    // SAFETY: `out` is not null and the consumer's to write.
    unsafe { out.write(array) };
    0
}

unsafe extern "C" fn stream_last_error(s: *mut ArrowArrayStream) -> *const c_char {
    // SAFETY: as for `stream_get_schema`.
    match unsafe { stream_data(s) } {
        Some(d) => d.last_error.as_ref().map_or(ptr::null(), |m| m.as_ptr()),
        None => ptr::null(),
    }
}

unsafe extern "C" fn release_stream(s: *mut ArrowArrayStream) {
    // SAFETY: the interface calls `release` once, with the live stream it
    // was set on; its data is the box made by `export_stream`.
    unsafe {
        let Some(s) = s.as_mut() else { return };
        if s.release.is_none() {
            return;
        }
        drop(Box::from_raw(s.private_data.cast::<StreamData>()));
        s.private_data = ptr::null_mut();
        s.release = None;
    }
}
