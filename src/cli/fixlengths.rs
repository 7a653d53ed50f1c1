//! `fastcsv fixlengths`: every record made as long as the longest (or as
//! `--length`), padded with empty fields or cut, as `xsv fixlengths` does.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Args;

use fastcsv::{Batch, ErrorKind, Position, SelectedRow, Selection};

use super::fmt::{one_thread, open_all_rows, CommonArgs, CsvStyle};
use super::output::CsvRewrite;
use super::{path_arg, Failure};

/// `fastcsv fixlengths --help`'s text after the options.
pub const HELP: &str = "\
Pads short records with empty fields and cuts long ones, so that every record
(the header row too) has the same length: --length, or that of the longest
record not counting its trailing empty fields (at least 1). Without --length
the file is read twice, so it must be a regular file, not standard input or
a pipe.

Examples:
  fastcsv fixlengths ragged.csv -o square.csv
  cat ragged.csv | fastcsv fixlengths -l 5";

/// `fastcsv fixlengths`.
#[derive(Debug, Args)]
pub struct FixlengthsArgs {
    /// Input file (`-` or none: standard input, which needs --length).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Make every record this long: longer ones are cut, shorter ones
    /// padded with empty fields. Without it, the length is that of the
    /// longest record not counting its trailing empty fields (at least 1),
    /// which takes a first pass over the file.
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub length: Option<u64>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

/// `fastcsv fixlengths`.
pub fn run(a: &FixlengthsArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let mut args = a.common.input();
    // Records of any length are what this command is for.
    args.flexible = true;
    // Without --length: the records the first pass read, and the dialect
    // it measured them with.
    let mut first_pass = None;
    let length = match a.length {
        Some(n) => {
            usize::try_from(n).map_err(|_| Failure::Usage("--length is too large".into()))?
        }
        None => {
            if !file.is_some_and(super::reads_again) {
                return Err(Failure::Usage(
                    "fixlengths without --length reads its input twice: give a regular FILE, \
                     not standard input or a pipe"
                        .into(),
                ));
            }
            let mut input = open_all_rows(file, &args)?;
            let d = input.reader.dialect();
            let (delim, quote) = (d.delimiter(), d.quote());
            let (mut max, mut rows) = (0, 0u64);
            input.par_each_batch(
                &Selection::raw(),
                &one_thread(),
                || (0usize, 0u64),
                |b, (max, rows): &mut (usize, u64)| -> Result<(), Failure> {
                    for row in b.iter() {
                        *max = (*max).max(kept_width(&row, delim, quote));
                    }
                    *rows += b.len() as u64;
                    Ok(())
                },
                |(m, r)| {
                    // The state is the worker's, kept across its batches.
                    max = max.max(*m);
                    rows += std::mem::take(r);
                    Ok(())
                },
            )?;
            first_pass = Some((rows, delim, quote));
            super::test_hooks::between_passes(file);
            max
        }
    };
    let mut input = open_all_rows(file, &args)?;
    let style = CsvStyle::for_output(a.common.output.as_deref());
    let w = CsvRewrite::new(input.reader.dialect(), style, false);
    let mut out = super::commands::sink(a.common.output.as_deref(), &[file])?;
    // Records handed to the second pass so far (one thread: in order).
    let seen = AtomicU64::new(0);
    input.par_each_batch(
        &w.selection(),
        &one_thread(),
        Vec::new,
        |b, buf: &mut Vec<u8>| -> Result<(), Failure> {
            if let Some((rows, delim, quote)) = first_pass {
                same_records(b, seen.fetch_add(b.len() as u64, Ordering::Relaxed), rows, |row| {
                    kept_width(row, delim, quote) <= length
                })
                .map_err(|pos| changed(file, pos))?;
            }
            w.append_fixed(b, 0..b.len(), length, buf);
            Ok(())
        },
        |buf| {
            out.write_all(buf)?;
            buf.clear();
            Ok(())
        },
    )?;
    Ok(out.flush()?)
}

/// Checks the second pass's batch `b`, whose first record is record
/// `before` of the pass, against the first pass's `rows` records: a record
/// past them, or a last one that `fits` no longer (it was being written),
/// means that the file changed between the passes. Its position then.
fn same_records(
    b: &Batch<'_>,
    before: u64,
    rows: u64,
    fits: impl Fn(&SelectedRow<'_>) -> bool,
) -> Result<(), Position> {
    let after = before + b.len() as u64;
    if after < rows {
        return Ok(());
    }
    // The first pass's last record, if in this batch, then the first record
    // past them.
    if let Some(last) = rows.checked_sub(1).filter(|&l| l >= before) {
        let row = b.row((last - before) as usize);
        if !fits(&row) {
            return Err(row.position());
        }
    }
    if after > rows {
        return Err(b.row(rows.saturating_sub(before) as usize).position());
    }
    Ok(())
}

/// The error of a file that changed between the two passes, at `pos`.
fn changed(file: Option<&Path>, pos: Position) -> Failure {
    let e = fastcsv::Error::new(ErrorKind::FileChanged).with_position(pos);
    match file {
        Some(p) => e.with_path(p).into(),
        None => e.into(),
    }
}

/// The number of fields of `row` up to its last non-empty one (at least
/// 1: the first field counts even empty), read with delimiter `delim` and
/// quote `quote` by `Selection::raw`.
fn kept_width(row: &SelectedRow<'_>, delim: u8, quote: Option<u8>) -> usize {
    let n = row.field_count();
    if let Some(raw) = row.raw() {
        // Its fields joined by the delimiter: the trailing empty ones are
        // the delimiters that end it.
        let trailing = raw.iter().rev().take_while(|&&b| b == delim).count();
        return n - trailing.min(n - 1);
    }
    if let Some(f) = row.raw_fields() {
        // As in the input: an empty field is empty or two quotes.
        let rec = f.record();
        let empty =
            |r: &[u8]| r.is_empty() || (r.len() == 2 && quote == Some(r[0]) && r[1] == r[0]);
        let last = (0..n).rev().find(|&j| !empty(&rec[f.get(j).unwrap_or_default()]));
        return last.map_or(1, |j| j + 1);
    }
    // The last non-empty field (the first counts even empty).
    let last = row.iter().enumerate().filter(|(_, f)| !f.is_empty()).last();
    last.map_or(1, |(i, _)| i + 1)
}
