//! The checks of a read into columns: a selection, a list of types, and
//! that every value of a batch is UTF-8.

use super::{DataType, StringColumn, TextBatch};
use crate::error::{Error, ErrorKind, Position, Result};

/// The file's field number of column `j` of a batch, given the selected
/// columns' (none: every column, in order).
pub(super) fn field_of(fields: &[usize], j: usize) -> usize {
    fields.get(j).copied().unwrap_or(j)
}

/// An error unless `cols` are distinct indices below `width`.
pub(super) fn check_selection(cols: &[usize], width: usize) -> Result<()> {
    let mut seen = vec![false; width];
    for &c in cols {
        if c >= width {
            let msg = format!("column {c} is selected, but there are {width} columns");
            return Err(Error::config(msg));
        }
        if std::mem::replace(&mut seen[c], true) {
            return Err(Error::config(format!("column {c} is selected twice")));
        }
    }
    Ok(())
}

/// One type per column named `names`, or an error.
pub(super) fn check_width(types: &[DataType], names: &[String]) -> Result<()> {
    if types.len() != names.len() {
        let msg = format!("{} types given for {} columns", types.len(), names.len());
        return Err(Error::config(msg));
    }
    Ok(())
}

/// Whether every value of `b` is UTF-8: each column's bytes as a whole,
/// and no value starting inside a character (two halves of a character in
/// neighbouring values make valid bytes once joined). The first value that
/// is not, in the order of the rows, is reported at its record.
pub(super) fn check_utf8(
    b: &TextBatch,
    starts: &[Position],
    fields: &[usize],
) -> std::result::Result<(), (usize, usize, Error)> {
    let ok = |c: &StringColumn| {
        simdutf8::basic::from_utf8(&c.data).is_ok()
            && c.offsets[..c.len()]
                .iter()
                .all(|&o| c.data.get(o as usize).is_none_or(|&x| x & 0xC0 != 0x80))
    };
    if b.columns.iter().all(ok) {
        return Ok(());
    }
    // The first bad value, row by row (in the text columns: those
    // converted as read have none).
    for (i, pos) in starts.iter().enumerate() {
        for (j, c) in b.columns.iter().enumerate().filter(|(j, _)| !b.is_direct(*j)) {
            let v = &c.data[c.offsets[i] as usize..c.offsets[i + 1] as usize];
            if let Err(e) = std::str::from_utf8(v) {
                let kind =
                    ErrorKind::Utf8 { field: field_of(fields, j), valid_up_to: e.valid_up_to() };
                return Err((i, j, Error::new(kind).with_position(*pos)));
            }
        }
    }
    // Not reached: values that are each UTF-8 join into UTF-8, starting
    // at characters.
    Err((0, 0, Error::config("a column is not UTF-8")))
}
