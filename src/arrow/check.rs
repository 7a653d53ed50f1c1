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
            && starts_at_chars(&c.data, &c.offsets[..c.len()])
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

/// Whether no offset in `offsets` points at a UTF-8 continuation byte of
/// `data` (one at its end points at none). Every offset is looked at, with
/// no early exit: a fold of loads without branches, several times faster
/// than stopping at the first bad one (which comes only with a bad file).
pub(super) fn starts_at_chars(data: &[u8], offsets: &[i32]) -> bool {
    let mut cont = 0u8;
    for &o in offsets {
        let x = data.get(o as usize).copied().unwrap_or(0);
        cont |= u8::from(x & 0xC0 == 0x80);
    }
    cont == 0
}

impl StringColumn {
    /// Checks the values after those checked already, when they hold at
    /// least `min_bytes` bytes: their bytes are UTF-8 and none starts
    /// inside a character (see [`check_utf8`], which then locates the
    /// first bad value). Called as a batch is filled, every
    /// [`CHECK_BYTES`](super::CHECK_BYTES), it checks the bytes while
    /// they are still in a near cache, rather than all at once when the
    /// batch is complete (a tenth of a read of text columns).
    /// Returns whether every value is checked and good.
    pub(super) fn check_on(&mut self, min_bytes: usize) -> bool {
        let (from, n) = (self.checked, self.len());
        if self.unchecked_bad || from > n {
            return false;
        }
        let start = self.offsets[from] as usize;
        if from == n || self.data.len() - start < min_bytes {
            return from == n;
        }
        // ASCII bytes are UTF-8 and every value starts at a character: one
        // quick pass, where most columns end (300 short columns took a
        // sixth of a read to look at each value's first byte). Otherwise
        // the first value starts where the values checked end: inside a
        // character, the bytes checked here start with a continuation byte
        // and fail; so only the later values' starts are looked at.
        let bytes = &self.data[start..];
        if bytes.is_ascii()
            || simdutf8::basic::from_utf8(bytes).is_ok()
                && starts_at_chars(&self.data, &self.offsets[from + 1..n])
        {
            self.checked = n;
            return true;
        }
        self.unchecked_bad = true;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::starts_at_chars;
    use super::StringColumn;
    use crate::arrow::place::Place;

    /// Appends `vals` to `c` as a batch being filled does.
    fn push(c: &mut StringColumn, vals: &[&[u8]]) {
        let places: Vec<Place> =
            vals.iter().map(|v| Place(v.as_ptr() as usize, v.len() as u32, 0)).collect();
        let need = vals.iter().map(|v| v.len()).sum();
        // SAFETY: each place is a live slice of `vals`, with its length
        // and no claim of 32 readable bytes; `need` is their sum; the
        // slices are not the column's.
        unsafe { c.extend(places.iter(), vals.len(), need) };
    }

    /// A column checked in two pieces, split anywhere, is good exactly
    /// when each of its values is UTF-8: a bad value at the start, in
    /// the middle or at the end of either piece, whether a byte that is
    /// never UTF-8, the first half of a character the next value ends, or
    /// a value that starts with a character's second byte.
    #[test]
    fn a_column_checked_in_pieces_is_good_when_each_value_is() {
        let good: &[u8] = "€ – ü".as_bytes();
        for bad_at in 0..6 {
            for kind in 0..4 {
                let mut vals = vec![good; 6];
                match kind {
                    0 => vals[bad_at] = b"a\xffb",
                    1 if bad_at < 5 => {
                        vals[bad_at] = b"a\xe2\x82";
                        vals[bad_at + 1] = b"\xacb";
                    }
                    2 => vals[bad_at] = b"\xa9b",
                    _ => {} // every value good
                }
                let want = vals.iter().all(|v| std::str::from_utf8(v).is_ok());
                for cut in 0..=6 {
                    let mut c = StringColumn::new(6);
                    push(&mut c, &vals[..cut]);
                    c.check_on(0);
                    push(&mut c, &vals[cut..]);
                    assert_eq!(c.check_on(0), want, "bad at {bad_at}, kind {kind}, cut {cut}");
                    // A piece smaller than asked for waits.
                    let mut c = StringColumn::new(6);
                    push(&mut c, &vals);
                    assert!(!c.check_on(1000));
                    assert_eq!(c.check_on(0), want);
                }
            }
        }
    }

    #[test]
    fn offsets_inside_a_character_are_found() {
        let data = "aé€b".as_bytes(); // a, C3 A9, E2 82 AC, b
        assert!(starts_at_chars(data, &[0, 1, 3, 6, 7]));
        assert!(starts_at_chars(data, &[7])); // the end
        assert!(starts_at_chars(data, &[]));
        for inside in [2, 4, 5] {
            assert!(!starts_at_chars(data, &[0, inside, 6]), "{inside}");
        }
    }
}
