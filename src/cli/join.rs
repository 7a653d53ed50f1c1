//! `fastcsv join`: a hash join of two files on key columns, as `xsv join`.
//!
//! One input (FILE2; FILE1 for `--right`) is read into memory: its fields
//! in one arena and a hash table from each key to its records, in input
//! order. The other is streamed, and each of its records is written with
//! its matches, so the output comes in the streamed input's order, as in
//! xsv. Keys are compared as xsv compares them: a UTF-8 field trimmed of
//! white space (and with `--no-case` each character replaced by the first
//! of its lower-case mapping), other fields as bytes; a key with an empty
//! field matches nothing unless `--nulls`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use fastcsv::RowBuf;

use super::args::{Format, JoinArgs};
use super::commands::sink;
use super::output::RecordWriter;
use super::sort::{encode_key, resolve, RowLike};
use super::{inputs, json_keys_utf8, write_failure, Failure, Input};

/// The records of the input held in memory.
#[derive(Default)]
struct Table {
    /// Every field's bytes, one after the other.
    data: Vec<u8>,
    /// The end of each field in `data`.
    ends: Vec<usize>,
    /// The index in `ends` of each record's first field, and one more.
    recs: Vec<usize>,
}

impl Table {
    fn push(&mut self, row: &dyn RowLike) {
        if self.recs.is_empty() {
            self.recs.push(0);
        }
        for i in 0..row.len() {
            self.data.extend_from_slice(row.field(i));
            self.ends.push(self.data.len());
        }
        self.recs.push(self.ends.len());
    }

    fn len(&self) -> usize {
        self.recs.len().saturating_sub(1)
    }

    /// The fields of record `r`.
    fn record(&self, r: usize) -> impl Iterator<Item = &[u8]> + Clone {
        (self.recs[r]..self.recs[r + 1]).map(move |f| {
            let start = if f == 0 { 0 } else { self.ends[f - 1] };
            &self.data[start..self.ends[f]]
        })
    }
}

/// One key field as xsv compares it.
fn transform(f: &[u8], no_case: bool) -> std::borrow::Cow<'_, [u8]> {
    match std::str::from_utf8(f) {
        Err(_) => f.into(),
        Ok(s) if !no_case => s.trim().as_bytes().into(),
        Ok(s) => s
            .trim()
            .chars()
            .map(|c| c.to_lowercase().next().unwrap_or(c))
            .collect::<String>()
            .into_bytes()
            .into(),
    }
}

/// The key of `row`'s columns `cols` into `key`; false when a field is
/// empty and `nulls` is off (the record matches nothing).
fn key_of(row: &dyn RowLike, cols: &[usize], a: &JoinArgs, key: &mut Vec<u8>) -> bool {
    key.clear();
    let fields: Vec<_> = cols.iter().map(|&c| transform(row.field(c), a.no_case)).collect();
    encode_key(key, false, fields.iter().map(|f| &f[..]));
    a.nulls || fields.iter().all(|f| !f.is_empty())
}

/// An open input with its header row, key columns and first record (read
/// to resolve the columns without a header row).
struct Side {
    input: Input,
    header: Option<RowBuf>,
    cols: Vec<usize>,
    first: Option<RowBuf>,
}

impl Side {
    fn open(
        path: Option<&Path>,
        sel: &super::selection::Selection,
        a: &JoinArgs,
    ) -> Result<Side, Failure> {
        let mut input = Input::open(path, &a.input, false)?;
        let header = input.reader.headers()?.cloned();
        let (cols, first) = resolve(&mut input, Some(sel), header.as_ref())?;
        Ok(Side { input, header, cols: cols.unwrap_or_default(), first })
    }

    /// The number of columns: the header row's, or the first record's.
    fn width(&self) -> usize {
        self.header.as_ref().or(self.first.as_ref()).map_or(0, |r| r.len())
    }

    /// Reads every record into a table.
    fn load(&mut self) -> Result<Table, Failure> {
        let mut t = Table::default();
        if let Some(r) = &self.first {
            t.push(r);
        }
        self.input.each_row(|row| {
            t.push(row);
            Ok(())
        })?;
        Ok(t)
    }

    /// Calls `f` on every record, the first one included.
    fn each(
        &mut self,
        mut f: impl FnMut(&dyn RowLike) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        if let Some(r) = self.first.take() {
            f(&r)?;
        }
        self.input.each_row(|row| f(row))
    }
}

/// `fastcsv join`.
pub fn join(a: &JoinArgs) -> Result<(), Failure> {
    let files = [a.file1.clone(), a.file2.clone()];
    let paths = inputs(&files)?;
    let mut s1 = Side::open(paths[0], &a.columns1, a)?;
    let mut s2 = Side::open(paths[1], &a.columns2, a)?;
    let (n1, n2) = (s1.cols.len(), s2.cols.len());
    let empty = |s: &Side| s.header.is_none() && s.first.is_none();
    if n1 != n2 && !empty(&s1) && !empty(&s2) {
        return Err(Failure::Usage(format!(
            "the column selections must have the same number of columns, but they have \
             {n1} and {n2}"
        )));
    }
    let format = a.output.to;
    let delimiter = a.output.delimiter().map_err(Failure::Usage)?;
    let names: Option<Vec<&[u8]>> = match (&s1.header, &s2.header) {
        (Some(h1), Some(h2)) => Some(h1.iter().chain(h2.iter()).collect()),
        _ => None,
    };
    if let (Some(n), Format::Jsonl) = (&names, format) {
        let h1 = s1.header.as_ref().map(|h| h.len()).unwrap_or(0);
        let pos1 = s1.header.as_ref().map(|h| h.position()).unwrap_or_default();
        let pos2 = s2.header.as_ref().map(|h| h.position()).unwrap_or_default();
        json_keys_utf8(&s1.input.name, &n[..h1], pos1, |f| f)?;
        json_keys_utf8(&s2.input.name, &n[h1..], pos2, |f| f)?;
    }
    let out = sink(a.output.output.as_deref(), &paths)?;
    let mut w = RecordWriter::new(out, format, delimiter, names.as_deref());
    if let (Some(n), false) = (&names, format == Format::Jsonl) {
        let h = s1.header.as_ref().expect("a header row");
        w.write(n.iter().copied())
            .map_err(|e| write_failure(&s1.input.name, e, h.position(), |f| f))?;
    }
    let pad1: Vec<&[u8]> = vec![&[]; s1.width()];
    let pad2: Vec<&[u8]> = vec![&[]; s2.width()];
    let mut key = Vec::new();
    if a.cross {
        let t2 = s2.load()?;
        let name = s1.input.name.clone();
        s1.each(|row| {
            for r in 0..t2.len() {
                w.write((0..row.len()).map(|i| row.field(i)).chain(t2.record(r)))
                    .map_err(|e| write_failure(&name, e, row.position(), |f| f))?;
            }
            Ok(())
        })?;
        return Ok(w.into_inner()?.flush()?);
    }
    // The streamed side and the held one.
    let (mut stream, mut held) = if a.right { (s2, s1) } else { (s1, s2) };
    let table = held.load()?;
    let mut index: HashMap<Box<[u8]>, Vec<usize>> = HashMap::new();
    for r in 0..table.len() {
        let fields: Vec<&[u8]> = table.record(r).collect();
        if key_of(&fields.as_slice(), &held.cols, a, &mut key) {
            index.entry(key.as_slice().into()).or_default().push(r);
        }
    }
    let mut matched = vec![false; if a.full { table.len() } else { 0 }];
    let name = stream.input.name.clone();
    let cols = stream.cols.clone();
    stream.each(|row| {
        let fail = |e| write_failure(&name, e, row.position(), |f| f);
        let own = (0..row.len()).map(|i| row.field(i));
        let hits = if key_of(row, &cols, a, &mut key) { index.get(key.as_slice()) } else { None };
        match hits {
            Some(rs) => {
                for &r in rs {
                    if a.full {
                        matched[r] = true;
                    }
                    if a.right {
                        w.write(table.record(r).chain(own.clone())).map_err(fail)?;
                    } else {
                        w.write(own.clone().chain(table.record(r))).map_err(fail)?;
                    }
                }
            }
            None if a.right => w.write(pad1.iter().copied().chain(own)).map_err(fail)?,
            None if a.left || a.full => w.write(own.chain(pad2.iter().copied())).map_err(fail)?,
            None => {}
        }
        Ok(())
    })?;
    if a.full {
        for (r, _) in matched.iter().enumerate().filter(|(_, m)| !**m) {
            w.write(pad1.iter().copied().chain(table.record(r))).map_err(|e| {
                let at = held.header.as_ref().map(|h| h.position()).unwrap_or_default();
                write_failure(&held.input.name, e, at, |f| f)
            })?;
        }
    }
    Ok(w.into_inner()?.flush()?)
}

/// A record of the table, as its fields.
impl RowLike for &[&[u8]] {
    fn field(&self, i: usize) -> &[u8] {
        self.get(i).copied().unwrap_or_default()
    }
    fn len(&self) -> usize {
        <[&[u8]]>::len(self)
    }
    fn position(&self) -> fastcsv::Position {
        fastcsv::Position::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_trimmed_and_folded_as_xsv() {
        assert_eq!(&transform(b" Ab ", false)[..], b"Ab");
        assert_eq!(&transform(b" Ab ", true)[..], b"ab");
        assert_eq!(&transform(b"\xff A", true)[..], b"\xff A");
        assert_eq!(&transform("\u{130}".as_bytes(), true)[..], "i".as_bytes());
    }
}
