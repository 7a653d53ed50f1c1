//! `fastcsv join`: a hash join of two files on key columns, as `xsv join`.
//!
//! The output order is xsv's. Call the side whose order the output follows
//! the *leading* side (FILE1; FILE2 with `--right`) and the other the
//! *matching* side: each leading record, in order, is written with each of
//! its matches in the matching side's order (or alone, padded, for the
//! outer joins); `--full` then writes the unmatched matching records, in
//! order.
//!
//! The hash table is built on the smaller input (by size on disk; on the
//! matching side, as xsv, when a size is unknown) and the other input is
//! streamed:
//!
//! - On the matching side (xsv's way, [`join_on_matching`]): its records
//!   in one arena, a table from each key to its records; each leading
//!   record is written with its matches as it is read.
//! - On the leading side ([`join_on_leading`]): its records in an arena, a
//!   table from each key to a *group*. The matching side is streamed and
//!   each of its records whose key has a group is kept once, at the end of
//!   its group, in a [`Store`] (for `--full` the others too, in a group of
//!   their own): in memory up to `--memory`, past it in a temporary file,
//!   one contiguous region per group and spill. Then each leading record,
//!   in order, is written with its group's records, which are in the
//!   matching side's order: xsv's order again.
//!
//! `--cross` has no table: FILE2 is held and FILE1 streamed, or, when FILE1
//! is the smaller and FILE2 a regular file, FILE1 is held and FILE2 read
//! once per record of FILE1.
//!
//! Keys are compared as xsv compares them: a UTF-8 field trimmed of white
//! space (and with `--no-case` each character replaced by the first of its
//! lower-case mapping), other fields as bytes; a key with an empty field
//! matches nothing unless `--nulls`. The rule is the same on both sides, so
//! either may hold the table.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use fastcsv::{Position, RowBuf};

use super::args::{Format, JoinArgs};
use super::commands::sink;
use super::output::RecordWriter;
use super::sort::{
    default_memory, encode_key, put_varint, resolve, take_varint, temp_file, RowLike,
};
use super::{inputs, json_keys_utf8, write_failure, Failure, Input};

/// Records held in memory.
#[derive(Default)]
struct Table {
    /// Every field's bytes, one after the other.
    data: Vec<u8>,
    /// The end of each field in `data`.
    ends: Vec<usize>,
    /// The index in `ends` of each record's first field, and one more.
    recs: Vec<usize>,
    /// Where each record starts in its input (for messages).
    pos: Vec<Position>,
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
        self.pos.push(row.position());
    }

    fn len(&self) -> usize {
        self.recs.len().saturating_sub(1)
    }

    /// The fields of record `r`.
    fn record(&self, r: usize) -> Fields<'_> {
        Fields::Table(self, self.recs[r]..self.recs[r + 1])
    }
}

/// The fields of one record, wherever it is held.
#[derive(Clone)]
enum Fields<'a> {
    Table(&'a Table, std::ops::Range<usize>),
    Slice(std::slice::Iter<'a, &'a [u8]>),
    Row(&'a dyn RowLike, std::ops::Range<usize>),
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Fields::Table(t, r) => r.next().map(|f| {
                let start = if f == 0 { 0 } else { t.ends[f - 1] };
                &t.data[start..t.ends[f]]
            }),
            Fields::Slice(it) => it.next().copied(),
            Fields::Row(row, r) => r.next().map(|i| row.field(i)),
        }
    }
}

impl<'a> Fields<'a> {
    fn of_row(row: &'a dyn RowLike) -> Fields<'a> {
        Fields::Row(row, 0..row.len())
    }

    fn remaining(&self) -> usize {
        match self {
            Fields::Table(_, r) | Fields::Row(_, r) => r.len(),
            Fields::Slice(it) => it.len(),
        }
    }
}

/// One output record: FILE1's fields then FILE2's, each with the name of
/// its input and the position of its record, to report a field that JSON
/// output cannot take (not UTF-8) where it was read.
fn write_pair<W: Write>(
    w: &mut RecordWriter<W>,
    one: (Fields<'_>, &str, Position),
    two: (Fields<'_>, &str, Position),
) -> Result<(), Failure> {
    let n1 = one.0.remaining();
    w.write(one.0.chain(two.0)).map_err(|e| {
        let field = match &e {
            super::output::WriteError::Utf8 { field, .. } => *field,
            super::output::WriteError::Io(_) => 0,
        };
        if field < n1 {
            write_failure(one.1, e, one.2, |f| f)
        } else {
            write_failure(two.1, e, two.2, |f| f - n1)
        }
    })
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
    let mut full = true;
    for &c in cols {
        let f = transform(row.field(c), a.no_case);
        full &= !f.is_empty();
        encode_key(key, false, std::iter::once(&f[..]));
    }
    a.nulls || full
}

/// An open input with its header row, key columns and first record (read
/// to resolve the columns without a header row).
struct Side {
    input: Input,
    header: Option<RowBuf>,
    cols: Vec<usize>,
    first: Option<RowBuf>,
    /// The path, `None` for standard input.
    path: Option<PathBuf>,
    /// The size of a regular file (standard input redirected from one
    /// too), `None` when unknown.
    size: Option<u64>,
}

impl Side {
    fn open(
        path: Option<&Path>,
        sel: &super::selection::Selection,
        a: &JoinArgs,
    ) -> Result<Side, Failure> {
        let mut input = Input::open(path, &a.input, false)?;
        let size = match path {
            Some(p) => std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len()),
            None => input.reader.len_hint(),
        };
        let header = input.reader.headers()?.cloned();
        let (cols, first) = resolve(&mut input, Some(sel), header.as_ref())?;
        let path = path.map(Path::to_path_buf);
        Ok(Side { input, header, cols: cols.unwrap_or_default(), first, path, size })
    }

    /// The number of columns: the header row's, or the first record's.
    fn width(&self) -> usize {
        self.header.as_ref().or(self.first.as_ref()).map_or(0, |r| r.len())
    }

    /// Where the header row is, for messages about the whole input.
    fn header_position(&self) -> Position {
        self.header.as_ref().map(|h| h.position()).unwrap_or_default()
    }

    /// Reads every record into a table.
    fn load(&mut self) -> Result<Table, Failure> {
        let mut t = Table::default();
        self.each(|row| {
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

/// Which side holds the hash table.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Build {
    /// The side whose order the output follows (FILE1; FILE2 with
    /// `--right`).
    Leading,
    /// The other side, as xsv.
    Matching,
}

/// The side to build on: the leading side when both sizes are known and
/// it is the smaller. Debug builds read `FASTCSV_TEST_JOIN_BUILD`
/// (`leading` or `matching`) so that the tests can run both ways on the
/// same files.
fn build_side(leading: Option<u64>, matching: Option<u64>) -> Build {
    #[cfg(debug_assertions)]
    match std::env::var("FASTCSV_TEST_JOIN_BUILD").as_deref() {
        Ok("leading") => return Build::Leading,
        Ok("matching") => return Build::Matching,
        _ => {}
    }
    match (leading, matching) {
        (Some(l), Some(m)) if l < m => Build::Leading,
        _ => Build::Matching,
    }
}

/// `fastcsv join`.
pub fn join(a: &JoinArgs) -> Result<(), Failure> {
    let files = [a.file1.clone(), a.file2.clone()];
    let paths = inputs(&files)?;
    let s1 = Side::open(paths[0], &a.columns1, a)?;
    let s2 = Side::open(paths[1], &a.columns2, a)?;
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
    // With a header row, a side without one is an empty input: it has no
    // columns, and an outer join still writes the other side's records
    // (padded with no field), under that side's names alone.
    let outer = |s: &Side, keeps: bool| keeps && !a.cross && s.header.is_some();
    let headed: Vec<&Side> = match (&s1.header, &s2.header) {
        (Some(_), Some(_)) => vec![&s1, &s2],
        (Some(_), None) if outer(&s1, a.left || a.full) => vec![&s1],
        (None, Some(_)) if outer(&s2, a.right || a.full) => vec![&s2],
        _ => Vec::new(),
    };
    let names: Option<Vec<&[u8]>> = (!headed.is_empty())
        .then(|| headed.iter().flat_map(|s| s.header.iter().flat_map(|h| h.iter())).collect());
    if format == Format::Jsonl {
        for s in &headed {
            let keys: Vec<&[u8]> = s.header.iter().flat_map(|h| h.iter()).collect();
            json_keys_utf8(&s.input.name, &keys, s.header_position(), |f| f)?;
        }
    }
    let out = sink(a.output.output.as_deref(), &paths)?;
    let mut w = RecordWriter::new(out, format, delimiter, names.as_deref());
    if let (Some(n), false) = (&names, format == Format::Jsonl) {
        let (name, pos) = (&headed[0].input.name, headed[0].header_position());
        w.write(n.iter().copied()).map_err(|e| write_failure(name, e, pos, |f| f))?;
    }
    drop(headed);
    drop(names);
    if a.cross {
        cross(a, s1, s2, &mut w)?;
    } else {
        let (leading, matching) = if a.right { (s2, s1) } else { (s1, s2) };
        match build_side(leading.size, matching.size) {
            Build::Matching => on_matching(a, leading, matching, &mut w)?,
            Build::Leading => on_leading(a, leading, matching, &mut w)?,
        }
    }
    Ok(w.into_inner()?.flush()?)
}

/// A record to write: its fields, the name of its input and its position.
type Rec<'a> = (Fields<'a>, &'a str, Position);

/// Writes a leading record and a matching one (either may be padding) in
/// the output's column order: FILE1's first.
fn emit<W: Write>(
    w: &mut RecordWriter<W>,
    right: bool,
    lead: Rec<'_>,
    other: Rec<'_>,
) -> Result<(), Failure> {
    if right {
        write_pair(w, other, lead)
    } else {
        write_pair(w, lead, other)
    }
}

/// The join with the table on the matching side, as xsv: each leading
/// record is written with its matches as it is read.
fn on_matching<W: Write>(
    a: &JoinArgs,
    mut lead: Side,
    mut other: Side,
    w: &mut RecordWriter<W>,
) -> Result<(), Failure> {
    let (lead_width, other_width) = (lead.width(), other.width());
    let table = other.load()?;
    let mut index: HashMap<Box<[u8]>, Vec<usize>> = HashMap::new();
    let mut key = Vec::new();
    for r in 0..table.len() {
        if key_of(&TableRow(&table, r), &other.cols, a, &mut key) {
            match index.get_mut(key.as_slice()) {
                Some(rs) => rs.push(r),
                None => {
                    index.insert(key.as_slice().into(), vec![r]);
                }
            }
        }
    }
    let mut matched = vec![false; if a.full { table.len() } else { 0 }];
    let (lname, oname) = (lead.input.name.clone(), other.input.name.clone());
    let pad_other: Vec<&[u8]> = vec![&[]; other_width];
    let outer = a.left || a.right || a.full;
    let cols = lead.cols.clone();
    lead.each(|row| {
        let hits = if key_of(row, &cols, a, &mut key) { index.get(key.as_slice()) } else { None };
        let me = (Fields::of_row(row), lname.as_str(), row.position());
        match hits {
            Some(rs) => {
                for &r in rs {
                    if a.full {
                        matched[r] = true;
                    }
                    emit(w, a.right, me.clone(), (table.record(r), &oname, table.pos[r]))?;
                }
            }
            None if outer => {
                emit(w, a.right, me, (Fields::Slice(pad_other.iter()), &lname, row.position()))?
            }
            None => {}
        }
        Ok(())
    })?;
    if a.full {
        // `--full` excludes `--right`: the leading side is FILE1.
        let pad_lead: Vec<&[u8]> = vec![&[]; lead_width];
        for (r, _) in matched.iter().enumerate().filter(|(_, m)| !**m) {
            let pos = table.pos[r];
            write_pair(
                w,
                (Fields::Slice(pad_lead.iter()), &oname, pos),
                (table.record(r), &oname, pos),
            )?;
        }
    }
    Ok(())
}

/// The join with the table on the leading side: the matching side's
/// records that match are kept (in a [`Store`]) and written after it was
/// read, each leading record in order with its group's records.
fn on_leading<W: Write>(
    a: &JoinArgs,
    mut lead: Side,
    mut other: Side,
    w: &mut RecordWriter<W>,
) -> Result<(), Failure> {
    const NONE: usize = usize::MAX;
    let (lead_width, other_width) = (lead.width(), other.width());
    let table = lead.load()?;
    let mut index: HashMap<Box<[u8]>, usize> = HashMap::new();
    let mut group = Vec::with_capacity(table.len());
    let mut key = Vec::new();
    for r in 0..table.len() {
        let g = if key_of(&TableRow(&table, r), &lead.cols, a, &mut key) {
            let n = index.len();
            *index.entry(key.as_slice().into()).or_insert(n)
        } else {
            NONE
        };
        group.push(g);
    }
    // The store's last group: the unmatched records, for `--full`.
    let unmatched = index.len();
    let budget = a.memory.unwrap_or_else(default_memory);
    let dir = a.tmp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut store = Store::new(unmatched + 1, budget, dir);
    let cols = other.cols.clone();
    other.each(|row| {
        let g =
            if key_of(row, &cols, a, &mut key) { index.get(key.as_slice()).copied() } else { None };
        match g {
            Some(g) => store.push(g, row),
            None if a.full => store.push(unmatched, row),
            None => Ok(()),
        }
    })?;
    drop(index);
    store.finish()?;
    let (lname, oname) = (lead.input.name.clone(), other.input.name.clone());
    let pad_other: Vec<&[u8]> = vec![&[]; other_width];
    let outer = a.left || a.right || a.full;
    for (r, &g) in group.iter().enumerate() {
        let me = (table.record(r), lname.as_str(), table.pos[r]);
        if g != NONE && store.has(g) {
            store.each(g, |q, pos| {
                emit(w, a.right, me.clone(), (Fields::Slice(q.iter()), &oname, pos))
            })?;
        } else if outer {
            emit(w, a.right, me, (Fields::Slice(pad_other.iter()), &lname, table.pos[r]))?;
        }
    }
    if a.full {
        let pad_lead: Vec<&[u8]> = vec![&[]; lead_width];
        store.each(unmatched, |q, pos| {
            write_pair(
                w,
                (Fields::Slice(pad_lead.iter()), &oname, pos),
                (Fields::Slice(q.iter()), &oname, pos),
            )
        })?;
    }
    Ok(())
}

/// `--cross`: every pair, FILE1's records in order, each with every record
/// of FILE2 in order. FILE2 is held, or, when FILE1 is the smaller and
/// FILE2 a regular file, FILE1 is held and FILE2 read once per record.
fn cross<W: Write>(
    a: &JoinArgs,
    mut s1: Side,
    mut s2: Side,
    w: &mut RecordWriter<W>,
) -> Result<(), Failure> {
    let (name1, name2) = (s1.input.name.clone(), s2.input.name.clone());
    let path2 = s2.path.clone().filter(|_| s2.size.is_some());
    let reread = path2.is_some() && build_side(s1.size, s2.size) == Build::Leading;
    if !reread {
        let t2 = s2.load()?;
        return s1.each(|row| {
            for r in 0..t2.len() {
                let one = (Fields::of_row(row), name1.as_str(), row.position());
                write_pair(w, one, (t2.record(r), &name2, t2.pos[r]))?;
            }
            Ok(())
        });
    }
    let t1 = s1.load()?;
    let mut quiet = a.input.clone();
    quiet.quiet = true;
    let mut first = Some(s2);
    for r in 0..t1.len() {
        let mut each2 = |row: &dyn RowLike| {
            let one = (t1.record(r), name1.as_str(), t1.pos[r]);
            write_pair(w, one, (Fields::of_row(row), &name2, row.position()))
        };
        match first.take() {
            Some(mut s2) => s2.each(&mut each2)?,
            None => {
                let mut again = Input::open(path2.as_deref(), &quiet, false)?;
                again.reader.headers()?;
                again.each_row(|row| each2(row))?;
            }
        }
    }
    Ok(())
}

/// A record of a [`Table`].
struct TableRow<'a>(&'a Table, usize);

impl RowLike for TableRow<'_> {
    fn field(&self, i: usize) -> &[u8] {
        let (t, r) = (self.0, self.1);
        let f = t.recs[r] + i;
        if f >= t.recs[r + 1] {
            return &[];
        }
        let start = if f == 0 { 0 } else { t.ends[f - 1] };
        &t.data[start..t.ends[f]]
    }
    fn len(&self) -> usize {
        self.0.recs[self.1 + 1] - self.0.recs[self.1]
    }
    fn position(&self) -> Position {
        self.0.pos[self.1]
    }
}

/// The matching side's records kept for [`on_leading`], in groups, each
/// group in input order: in memory until they take `budget` bytes, then
/// each group's records so far are appended to a temporary file as one
/// region, and memory starts again. A record is its position (byte, line,
/// record), its field count and each field's length followed by its
/// bytes, the numbers as LEB128 varints.
struct Store {
    /// Each group's records since the last spill.
    bufs: Vec<Vec<u8>>,
    /// Each group's regions of the file: offset and length.
    regions: Vec<Vec<(u64, usize)>>,
    /// The capacity of `bufs`, in bytes.
    held: usize,
    budget: usize,
    dir: PathBuf,
    file: Option<File>,
    /// The file's length.
    len: u64,
    /// A region read back.
    scratch: Vec<u8>,
}

impl Store {
    fn new(groups: usize, budget: usize, dir: PathBuf) -> Store {
        Store {
            bufs: vec![Vec::new(); groups],
            regions: vec![Vec::new(); groups],
            held: 0,
            budget,
            dir,
            file: None,
            len: 0,
            scratch: Vec::new(),
        }
    }

    /// Appends `row` to group `g`.
    fn push(&mut self, g: usize, row: &dyn RowLike) -> Result<(), Failure> {
        let b = &mut self.bufs[g];
        let before = b.capacity();
        let p = row.position();
        let n = row.len();
        for x in [p.byte, p.line, p.record, n as u64] {
            put_varint(b, x);
        }
        for i in 0..n {
            let f = row.field(i);
            put_varint(b, f.len() as u64);
            b.extend_from_slice(f);
        }
        self.held += b.capacity() - before;
        if self.held > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Moves every group's records to the end of the file.
    fn spill(&mut self) -> Result<(), Failure> {
        let err = |e: std::io::Error| {
            Failure::Fatal(format!("{}: write error (temporary file): {e}", self.dir.display()))
        };
        if self.file.is_none() {
            self.file = Some(temp_file(&self.dir, "join", 0)?);
        }
        let file = self.file.as_mut().expect("a file");
        let mut out = BufWriter::with_capacity(self.held.clamp(4 << 10, 1 << 20), file);
        for (b, regions) in self.bufs.iter_mut().zip(&mut self.regions) {
            if b.is_empty() {
                continue;
            }
            out.write_all(b).map_err(err)?;
            regions.push((self.len, b.len()));
            self.len += b.len() as u64;
            *b = Vec::new();
        }
        out.flush().map_err(err)?;
        self.held = 0;
        Ok(())
    }

    /// After the last push: once anything was spilled, everything is, so
    /// that memory holds one region at a time.
    fn finish(&mut self) -> Result<(), Failure> {
        if self.file.is_some() {
            self.spill()?;
        }
        Ok(())
    }

    /// Whether group `g` has a record.
    fn has(&self, g: usize) -> bool {
        !self.bufs[g].is_empty() || !self.regions[g].is_empty()
    }

    /// Calls `f` on each record of group `g`, in order, with its position.
    fn each(
        &mut self,
        g: usize,
        mut f: impl FnMut(&[&[u8]], Position) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let Store { bufs, regions, file, scratch, dir, .. } = self;
        for &(off, len) in &regions[g] {
            let mut file = file.as_ref().expect("regions are in the file");
            scratch.resize(len, 0);
            file.seek(SeekFrom::Start(off)).and_then(|_| file.read_exact(scratch)).map_err(
                |e| Failure::Fatal(format!("{}: read error (temporary file): {e}", dir.display())),
            )?;
            decode(scratch, &mut f)?;
        }
        decode(&bufs[g], &mut f)
    }
}

/// Calls `f` on each record [`Store::push`] wrote in `b`.
fn decode(
    mut b: &[u8],
    f: &mut impl FnMut(&[&[u8]], Position) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut fields: Vec<&[u8]> = Vec::new();
    while !b.is_empty() {
        let byte = take_varint(&mut b);
        let line = take_varint(&mut b);
        let record = take_varint(&mut b);
        let n = take_varint(&mut b) as usize;
        fields.clear();
        for _ in 0..n {
            let len = take_varint(&mut b) as usize;
            let (field, rest) = b.split_at(len);
            fields.push(field);
            b = rest;
        }
        f(&fields, Position { byte, line, record })?;
    }
    Ok(())
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

    #[test]
    fn varints_round_trip() {
        let xs = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        let mut b = Vec::new();
        for x in xs {
            put_varint(&mut b, x);
        }
        assert_eq!(b.len(), 1 + 1 + 1 + 2 + 2 + 5 + 10);
        let mut r = &b[..];
        for x in xs {
            assert_eq!(take_varint(&mut r), x);
        }
        assert!(r.is_empty());
    }

    #[test]
    fn the_smaller_known_side_holds_the_table() {
        if std::env::var_os("FASTCSV_TEST_JOIN_BUILD").is_some() {
            return;
        }
        assert_eq!(build_side(Some(1), Some(2)), Build::Leading);
        assert_eq!(build_side(Some(2), Some(2)), Build::Matching);
        assert_eq!(build_side(Some(3), Some(2)), Build::Matching);
        assert_eq!(build_side(Some(1), None), Build::Matching);
        assert_eq!(build_side(None, Some(1)), Build::Matching);
    }
}
