//! `fastcsv cat columns`: the records of several inputs side by side, as
//! `xsv cat columns` writes them.

use std::io::Write;
use std::path::PathBuf;

use fastcsv::Selection;

use super::args::InputArgs;
use super::fmt::{open_all_rows, CsvStyle};
use super::output::CsvRewrite;
use super::{inputs, Failure, Input};

/// Records of one input read ahead, as CSV lines without terminators.
struct Lines {
    input: Input,
    rw: CsvRewrite,
    sel: Selection,
    bytes: Vec<u8>,
    /// Where each line ends in `bytes`, and its record's field count.
    ends: Vec<(usize, usize)>,
    /// The next line to hand out.
    next: usize,
    /// Where that line starts.
    from: usize,
    /// The input's width (that of its first record), once known.
    width: Option<usize>,
    /// The input has no more records; the error that ended it, if any
    /// (reported only if its records are needed).
    done: Option<Option<fastcsv::Error>>,
}

impl Lines {
    /// The next line and its field count: `None` at the input's end.
    fn next(&mut self) -> Result<Option<(usize, usize, usize)>, Failure> {
        if self.next == self.ends.len() {
            self.fill()?;
            if self.next == self.ends.len() {
                return match self.done.as_mut().and_then(Option::take) {
                    Some(e) => Err(e.into()),
                    None => Ok(None),
                };
            }
        }
        let (end, fields) = self.ends[self.next];
        let from = self.from;
        self.next += 1;
        self.from = end;
        Ok(Some((from, end, fields)))
    }

    /// Reads the next batch of records, once those read are handed out.
    fn fill(&mut self) -> Result<(), Failure> {
        self.bytes.clear();
        self.ends.clear();
        (self.next, self.from) = (0, 0);
        if self.done.is_some() {
            return Ok(());
        }
        match self.input.reader.read_batch(&mut self.sel) {
            Ok(Some(b)) => {
                for row in b.iter() {
                    self.rw.line(&row, &mut self.bytes);
                    self.width.get_or_insert(row.field_count());
                    self.ends.push((self.bytes.len(), row.field_count()));
                }
            }
            Ok(None) => self.done = Some(None),
            Err(e) => self.done = Some(Some(e)),
        }
        Ok(())
    }
}

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
        let input = open_all_rows(*p, args)?;
        let rw = CsvRewrite::new(input.reader.dialect(), CsvStyle::for_output(output), true);
        let sel = rw.selection();
        let (bytes, ends) = (Vec::new(), Vec::new());
        let (next, from, width, done) = (0, 0, None, None);
        open.push(Lines { input, rw, sel, bytes, ends, next, from, width, done });
    }
    let mut out = super::commands::sink(output, &paths)?;
    let style = CsvStyle::for_output(output);
    let mut line: Vec<u8> = Vec::new();
    loop {
        // Each input's line, in turn: an input that ended stops the output
        // (or, with `pad`, gives empty fields), one that failed fails it.
        let start = line.len();
        let (mut fields, mut ended) = (0, 0);
        for lines in &mut open {
            let (bytes, n) = match lines.next()? {
                Some((from, end, n)) => (Some(&lines.bytes[from..end]), n),
                None if pad => {
                    ended += 1;
                    (None, lines.width.unwrap_or(0))
                }
                None => {
                    line.truncate(start);
                    out.write_all(&line)?;
                    return Ok(out.flush()?);
                }
            };
            if n == 0 {
                continue;
            }
            if fields > 0 {
                line.push(style.delimiter);
            }
            match bytes {
                Some(b) => line.extend_from_slice(b),
                None => line.extend(std::iter::repeat_n(style.delimiter, n - 1)),
            }
            fields += n;
        }
        if ended == open.len() {
            line.truncate(start);
            break;
        }
        // A record with no bytes (one empty field) is written `""`.
        if line.len() == start {
            line.extend_from_slice(b"\"\"");
        }
        line.push(b'\n');
        if line.len() >= 64 << 10 {
            out.write_all(&line)?;
            line.clear();
        }
    }
    out.write_all(&line)?;
    Ok(out.flush()?)
}
