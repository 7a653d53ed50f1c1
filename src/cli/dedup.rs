//! `fastcsv dedup`: each record whose key was not seen before, in input
//! order.
//!
//! The key is the record's fields as parsed (or those of `--select`),
//! encoded as `sort` encodes text keys so that distinct field lists never
//! share a key. Each distinct key is held in a hash set (std's, whose
//! keyed hash an input cannot make collide on purpose).

use std::collections::HashSet;
use std::io::Write;

use super::args::DedupArgs;
use super::commands::whole_records_writer;
use super::sort::{encode_key, resolve, RowLike};
use super::{path_arg, write_failure, Failure, Input};

/// `fastcsv dedup`.
pub fn dedup(a: &DedupArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let mut input = Input::open(file, &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    let (cols, first) = resolve(&mut input, a.select.as_ref(), header.as_ref())?;
    let mut w = whole_records_writer(&name, header.as_ref(), &a.output, file)?;
    let mut seen: HashSet<Box<[u8]>> = HashSet::new();
    let mut key = Vec::new();
    let mut one = |row: &dyn RowLike| -> Result<(), Failure> {
        key.clear();
        match &cols {
            Some(c) => encode_key(&mut key, false, c.iter().map(|&i| row.field(i))),
            None => encode_key(&mut key, false, (0..row.len()).map(|i| row.field(i))),
        }
        if seen.contains(key.as_slice()) {
            return Ok(());
        }
        seen.insert(key.as_slice().into());
        w.write((0..row.len()).map(|i| row.field(i)))
            .map_err(|e| write_failure(&name, e, row.position(), |f| f))
    };
    if let Some(row) = &first {
        one(row)?;
    }
    input.each_row(|row| one(row))?;
    Ok(w.into_inner()?.flush()?)
}
