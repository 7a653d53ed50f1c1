//! `fastcsv frequency`: exact counts of each column's values, the most
//! frequent first, as `xsv frequency` gives them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::stats::hash64;

/// Hashes a field's bytes with [`hash64`] (`[u8]` keys write their length,
/// then their bytes).
#[derive(Default)]
pub struct FieldHasher(u64);

impl Hasher for FieldHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = self.0.rotate_left(5) ^ hash64(bytes);
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = self.0.rotate_left(5) ^ n as u64;
    }
}

type Counts = HashMap<Box<[u8]>, u64, BuildHasherDefault<FieldHasher>>;

/// One column's counts. Empty values are counted apart: a column that has
/// seen only those takes 40 bytes and no allocation, so that records of
/// many empty fields take little memory.
#[derive(Default)]
struct Column {
    empty: u64,
    values: Counts,
}

/// Exact counts of the values of each column seen.
#[derive(Default)]
pub struct Frequencies {
    columns: Vec<Column>,
}

impl Frequencies {
    /// Adds one record's fields (columns past them are not counted).
    #[inline]
    pub fn add<'a>(&mut self, fields: impl Iterator<Item = &'a [u8]>) {
        self.add_some(fields.map(Some));
    }

    /// Adds one record's fields, `None` for a column the record lacks (not
    /// counted).
    #[inline]
    pub fn add_some<'a>(&mut self, fields: impl Iterator<Item = Option<&'a [u8]>>) {
        for (j, f) in fields.enumerate() {
            if j == self.columns.len() {
                self.columns.push(Column::default());
            }
            let Some(f) = f else { continue };
            let c = &mut self.columns[j];
            if f.is_empty() {
                c.empty += 1;
                continue;
            }
            match c.values.get_mut(f) {
                Some(n) => *n += 1,
                None => {
                    c.values.insert(f.into(), 1);
                }
            }
        }
    }

    /// Adds what `other` counted (chunks read in parallel).
    pub fn merge(&mut self, other: Frequencies) {
        if other.columns.len() > self.columns.len() {
            self.columns.resize_with(other.columns.len(), Column::default);
        }
        for (mine, theirs) in self.columns.iter_mut().zip(other.columns) {
            mine.empty += theirs.empty;
            let (mine, theirs) = (&mut mine.values, theirs.values);
            if mine.len() < theirs.len() {
                let small = std::mem::replace(mine, theirs);
                for (k, n) in small {
                    *mine.entry(k).or_insert(0) += n;
                }
            } else {
                for (k, n) in theirs {
                    *mine.entry(k).or_insert(0) += n;
                }
            }
        }
    }

    /// Number of columns seen.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// Column `j`'s values and counts: the most frequent first (the least
    /// with `asc`), ties in the order of their bytes (xsv leaves the order
    /// of ties to its hash map); at most `limit` (0: all); without empty
    /// values when `no_nulls`.
    pub fn top(&self, j: usize, limit: usize, asc: bool, no_nulls: bool) -> Vec<(&[u8], u64)> {
        let Some(c) = self.columns.get(j) else { return Vec::new() };
        let empty = (c.empty > 0 && !no_nulls).then_some((&b""[..], c.empty));
        let mut v: Vec<(&[u8], u64)> =
            c.values.iter().map(|(k, &n)| (&k[..], n)).chain(empty).collect();
        v.sort_unstable_by(|a, b| {
            let by_count = if asc { a.1.cmp(&b.1) } else { b.1.cmp(&a.1) };
            by_count.then_with(|| a.0.cmp(b.0))
        });
        if limit > 0 {
            v.truncate(limit);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sorted_and_merged() {
        let rows: Vec<Vec<&[u8]>> = vec![
            vec![b"a", b"x"],
            vec![b"b", b""],
            vec![b"a", b"x"],
            vec![b"c"],
            vec![b"b", b"y"],
            vec![b"a", b""],
        ];
        let mut whole = Frequencies::default();
        for r in &rows {
            whole.add(r.iter().copied());
        }
        assert_eq!(whole.top(0, 0, false, false), [(&b"a"[..], 3), (b"b", 2), (b"c", 1)]);
        assert_eq!(whole.top(0, 2, true, false), [(&b"c"[..], 1), (b"b", 2)]);
        assert_eq!(whole.top(1, 0, false, false), [(&b""[..], 2), (b"x", 2), (b"y", 1)]);
        assert_eq!(whole.top(1, 0, false, true), [(&b"x"[..], 2), (b"y", 1)]);
        assert!(whole.top(7, 0, false, false).is_empty());
        for parts in [2, 3, 6] {
            let mut merged = Frequencies::default();
            for chunk in rows.chunks(rows.len().div_ceil(parts)) {
                let mut f = Frequencies::default();
                for r in chunk {
                    f.add(r.iter().copied());
                }
                merged.merge(f);
            }
            for j in 0..2 {
                assert_eq!(merged.top(j, 0, false, false), whole.top(j, 0, false, false));
            }
        }
    }
}
