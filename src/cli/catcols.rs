//! `fastcsv cat columns`: the records of several inputs side by side, as
//! `xsv cat columns` writes them.

use std::io::Write;
use std::path::PathBuf;

use super::args::InputArgs;
use super::fmt::{open_all_rows, CsvOut, CsvStyle};
use super::{inputs, Failure};

/// `fastcsv cat columns FILE...`: record N of the output is record N of
/// each input, one after the other (header rows are records here, as in
/// xsv). Output stops with the shortest input, or with `pad` at the
/// longest, the inputs that ended giving empty fields as wide as their
/// first record.
pub fn run(
    files: &[PathBuf],
    pad: bool,
    args: &InputArgs,
    output: Option<&std::path::Path>,
) -> Result<(), Failure> {
    let paths = inputs(files)?;
    let mut open = Vec::with_capacity(paths.len());
    for p in &paths {
        open.push(open_all_rows(*p, args)?);
    }
    let mut w = CsvOut::new(super::commands::sink(output, &paths)?, CsvStyle::default());
    // Each input's width (that of its first record) for padding, once
    // known; the fields of the output record.
    let mut widths: Vec<Option<usize>> = vec![None; open.len()];
    let mut bytes: Vec<u8> = Vec::new();
    let mut ends: Vec<usize> = Vec::new();
    loop {
        bytes.clear();
        ends.clear();
        let mut done = 0;
        for (input, width) in open.iter_mut().zip(&mut widths) {
            match input.reader.read_row()? {
                Some(row) => {
                    width.get_or_insert(row.len());
                    for f in row.iter() {
                        bytes.extend_from_slice(f);
                        ends.push(bytes.len());
                    }
                }
                None if pad => {
                    done += 1;
                    let n = bytes.len();
                    ends.extend(std::iter::repeat_n(n, width.unwrap_or(0)));
                }
                None => return Ok(w.into_inner().flush()?),
            }
        }
        if done == open.len() {
            break;
        }
        let fields = ends.iter().scan(0, |start, &end| {
            let f = &bytes[*start..end];
            *start = end;
            Some(f)
        });
        w.record(fields)?;
    }
    Ok(w.into_inner().flush()?)
}
