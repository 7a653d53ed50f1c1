//! Byte offsets of input that the Python layer rewrote before the parse
//! (pandas' `skiprows`, `comment`, `header=N`, an encoding other than
//! UTF-8: see `python/fastcsv/_habits.py`), given back in the file's
//! terms in errors.
//!
//! The rewritten text keeps every line of the file, so line numbers are
//! already the file's; byte offsets move (a left-out row keeps its line
//! end alone, a trailing comment goes, a character takes other bytes in
//! UTF-8), and so do record numbers after a left-out record that spans
//! lines (each of its line ends is an empty record to the parser). The
//! Python layer passes where records of the rewritten text start, where
//! they started in the file, and the file's record number less the
//! parser's there, wherever these change; an error's byte offset (a
//! record's start) and record number are moved by those at the last such
//! start at or before it.
//!
//! A file in a one-byte-a-character encoding (latin-1, cp1252), rewritten
//! as it is, needs no list of starts: a byte offset in its UTF-8 text is
//! the file's offset of the character there, the number of characters
//! before it, counted when an error needs it.

use fastcsv::arrow::{self, ffi::BatchSource};
use fastcsv::{Error as CoreError, Position};
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::utf8::OneByte;

/// The UTF-8 of `data`, the bytes of a Latin-1 (`iso8859-1`) or `cp1252`
/// file (`encoding` as `codecs.lookup` names them), or of another one-byte
/// codec's whose bytes 0x80 to 0xFF are the characters `table`,
/// transcoded here with the GIL released; `None` when a byte is one that
/// the encoding leaves undefined (the caller decodes with Python's codec,
/// which raises).
/// What the Python layer parses for `read_arrow(..., encoding=...)` in
/// place of decoding the file to a `str` and encoding that again.
#[pyfunction]
#[pyo3(signature = (data, encoding, table=None))]
pub(crate) fn _one_byte_utf8<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
    encoding: &str,
    table: Option<Vec<u16>>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let code = match (encoding, table) {
        ("iso8859-1", None) => OneByte::Latin1,
        ("cp1252", None) => OneByte::Cp1252,
        (_, Some(t)) => table_code(t, "table")?,
        _ => return Err(PyValueError::new_err(format!("not a one-byte encoding: {encoding:?}"))),
    };
    let b = data.as_bytes();
    let out = py.allow_threads(|| {
        let mut out = Vec::with_capacity(b.len() + b.len() / 8);
        (code.to_utf8(b, &mut out) == b.len()).then_some(out)
    });
    Ok(out.map(|v| PyBytes::new(py, &v)))
}

/// The one-byte encoding whose bytes 0x80 to 0xFF are the characters `t`
/// (0 where undefined; see `fastcsv._one_byte_table`), given as the
/// argument `arg`.
pub(crate) fn table_code(t: Vec<u16>, arg: &str) -> PyResult<OneByte> {
    let chars: [u16; 128] = t.try_into().map_err(|_| {
        PyValueError::new_err(format!("{arg}: the characters of bytes 0x80 to 0xFF, 128 of them"))
    })?;
    Ok(OneByte::from_chars(chars))
}

/// Starts of records in the rewritten text and in the file, in order:
/// `(rewritten byte, file byte, file record less rewritten record)`;
/// or the UTF-8 text of a file of one byte a character. Empty: the
/// positions are the file's.
#[derive(Clone, Debug, Default)]
pub(crate) struct ByteMap(Arc<Vec<(u64, u64, i64)>>, Option<Arc<Vec<u8>>>);

impl ByteMap {
    /// The map of `starts`, sorted here.
    pub(crate) fn new(mut starts: Vec<(u64, u64, i64)>) -> ByteMap {
        starts.sort_unstable();
        ByteMap(Arc::new(starts), None)
    }

    /// The map of `text`, the UTF-8 text parsed, of a file that holds
    /// each of its characters in one byte, with the same records.
    pub(crate) fn chars(text: Vec<u8>) -> ByteMap {
        ByteMap(Arc::default(), Some(Arc::new(text)))
    }

    /// The map of three columns of native-endian `i64`s (Python's
    /// `array("q").tobytes()`): the starts in the rewritten text, in the
    /// file, and the record numbers' shift. Columns of other lengths, or
    /// a negative offset, are a `ValueError`.
    pub(crate) fn from_columns(parsed: &[u8], file: &[u8], records: &[u8]) -> PyResult<ByteMap> {
        let n = parsed.len();
        if !n.is_multiple_of(8) || file.len() != n || records.len() != n {
            return Err(PyValueError::new_err("byte_map: three columns of i64 of one length"));
        }
        let int = |b: &[u8], k: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[k * 8..k * 8 + 8]);
            i64::from_ne_bytes(x)
        };
        let starts = (0..n / 8)
            .map(|k| {
                let at = u64::try_from(int(parsed, k));
                let was = u64::try_from(int(file, k));
                match (at, was) {
                    (Ok(at), Ok(was)) => Ok((at, was, int(records, k))),
                    _ => Err(PyValueError::new_err("byte_map: a negative offset")),
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(ByteMap::new(starts))
    }

    /// The file's position of `pos` in the rewritten text.
    fn file_position(&self, mut pos: Position) -> Position {
        if let Some(text) = &self.1 {
            // Each character is a byte there: the bytes before `pos` that
            // start a character (not UTF-8 continuation bytes).
            let before = &text[..usize::try_from(pos.byte).unwrap_or(usize::MAX).min(text.len())];
            let cont = before.iter().filter(|&&b| b & 0xC0 == 0x80).count();
            pos.byte -= cont as u64;
            return pos;
        }
        let k = self.0.partition_point(|&(at, _, _)| at <= pos.byte);
        if let Some((at, file, records)) = k.checked_sub(1).map(|k| self.0[k]) {
            pos.byte = file + (pos.byte - at);
            pos.record = pos.record.saturating_add_signed(records);
        }
        pos
    }

    /// `e` with its position the file's.
    pub(crate) fn fix(&self, e: CoreError) -> CoreError {
        match e.position() {
            Some(pos) if !self.0.is_empty() || self.1.is_some() => {
                let pos = self.file_position(pos);
                e.with_position(pos)
            }
            _ => e,
        }
    }
}

/// A source of batches whose errors' byte offsets are the file's.
pub(crate) struct Remapped<S> {
    pub(crate) inner: S,
    pub(crate) map: ByteMap,
}

impl<S: BatchSource> BatchSource for Remapped<S> {
    fn names(&self) -> &[String] {
        self.inner.names()
    }
    fn types(&self) -> Vec<arrow::DataType> {
        self.inner.types()
    }
    fn next_batch(&mut self) -> fastcsv::Result<Option<arrow::ColumnBatch>> {
        self.inner.next_batch().map_err(|e| self.map.fix(e))
    }
}

#[cfg(test)]
mod tests {
    use super::{ByteMap, Position};

    #[test]
    fn positions_move_by_the_last_start_before_them() {
        // "a,b\n" left out as "\n": the record at 1 was at 4 in the file;
        // at 9, a record left out spanning two lines was one record.
        let m = ByteMap::new(vec![(1, 4, 0), (0, 0, 0), (9, 20, -1)]);
        let at = |byte, record| m.file_position(Position { byte, line: 1, record });
        let got = [(0, 0), (1, 1), (3, 1), (8, 2), (9, 4), (12, 4)].map(|(b, r)| at(b, r));
        let want = [(0, 0), (4, 1), (6, 1), (11, 2), (20, 3), (23, 3)];
        assert_eq!(got.map(|p| (p.byte, p.record)), want);
        assert_eq!(ByteMap::default().0.len(), 0);
    }

    #[test]
    fn a_one_byte_a_character_file_counts_characters() {
        // "é,b\nx,€\ny" in latin-1/cp1252 (one byte each), parsed as UTF-8.
        let m = ByteMap::chars("é,b\nx,€\ny".as_bytes().to_vec());
        let at = |byte| m.file_position(Position { byte, line: 1, record: 2 });
        // Record starts at UTF-8 bytes 0, 5 and 11: the file's 0, 4 and 8
        // (and the end, 12, is 9).
        assert_eq!([0, 5, 11, 12, 13].map(|b| at(b).byte), [0, 4, 8, 9, 10]);
        assert_eq!(at(11).record, 2);
    }

    #[test]
    fn columns_of_i64_are_read_as_starts() {
        let col = |v: &[i64]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let m = ByteMap::from_columns(&col(&[9, 1]), &col(&[20, 4]), &col(&[-1, 0])).unwrap();
        assert_eq!(*m.0, [(1, 4, 0), (9, 20, -1)]);
        // Columns of other lengths, or a negative offset, are refused.
        assert!(ByteMap::from_columns(&col(&[1]), &col(&[1, 2]), &col(&[0])).is_err());
        assert!(ByteMap::from_columns(&col(&[-1]), &col(&[1]), &col(&[0])).is_err());
    }
}
