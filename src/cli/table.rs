//! `fastcsv table`: records as aligned columns for people to read, as
//! `xsv table` writes them; and [`TabAligner`], the elastic tab stops
//! (those of the `tabwriter` crate, which xsv's `table` and `flatten` use)
//! that align them.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::Args;
use unicode_width::UnicodeWidthChar;

use super::fmt::{condense, open_all_rows, CommonArgs, CsvOut, CsvStyle};
use super::{path_arg, Failure};

/// `fastcsv table --help`'s text after the options.
pub const HELP: &str = "\
Writes every record (the header row too) with its fields in aligned columns:
each column is as wide as its widest field (at least --width), then --pad
spaces; the last field of a line is not padded. Widths count terminal columns
(wide characters take two). Fields holding a tab, quote or line end are
quoted, as xsv table writes them. Every record is held in memory until the
end (the widths depend on all): trim large inputs with `slice` first.

Examples:
  fastcsv table export.csv
  fastcsv slice --len 20 export.csv | fastcsv table -c 30";

/// `fastcsv table`.
#[derive(Debug, Args)]
pub struct TableArgs {
    /// Input file (`-` or none: standard input).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The smallest width of a column.
    #[arg(short, long, value_name = "N", default_value_t = 2)]
    pub width: usize,
    /// Spaces after each column.
    #[arg(short, long, value_name = "N", default_value_t = 2)]
    pub pad: usize,
    /// Shorten each field to N characters (bytes when it is not UTF-8),
    /// followed by `...`.
    #[arg(short, long, value_name = "N")]
    pub condense: Option<usize>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

/// One cell: where its bytes are in the text, and how many columns of a
/// terminal they take.
#[derive(Clone, Copy)]
struct Cell {
    start: usize,
    size: usize,
    width: usize,
}

/// Aligns text whose cells end in TAB and lines in LF, as the `tabwriter`
/// crate does: a column is as wide as its widest cell (at least
/// `minwidth`), plus `padding` spaces, over each run of consecutive lines
/// that have a cell in it; the last cell of a line is not part of a
/// column. A line of one cell ends the lines aligned together, which are
/// written then. Widths count terminal columns for UTF-8 text (wide
/// characters take two), bytes otherwise.
pub struct TabAligner<W: Write> {
    out: W,
    minwidth: usize,
    padding: usize,
    buf: Vec<u8>,
    lines: Vec<Vec<Cell>>,
    cur: Cell,
}

impl<W: Write> TabAligner<W> {
    /// An aligner writing to `out`.
    pub fn new(out: W, minwidth: usize, padding: usize) -> TabAligner<W> {
        TabAligner {
            out,
            minwidth,
            padding,
            buf: Vec::new(),
            lines: vec![Vec::new()],
            cur: Cell { start: 0, size: 0, width: 0 },
        }
    }

    fn end_cell(&mut self) {
        let start = self.buf.len();
        let mut c = std::mem::replace(&mut self.cur, Cell { start, size: 0, width: 0 });
        c.width = columns(&self.buf[c.start..c.start + c.size]);
        self.lines.last_mut().expect("there is a current line").push(c);
    }

    /// Writes everything aligned so far.
    pub fn flush_lines(&mut self) -> io::Result<()> {
        if self.cur.size > 0 {
            self.end_cell();
        }
        let widths = cell_widths(&self.lines, self.minwidth);
        for (k, (line, ws)) in self.lines.iter().zip(&widths).enumerate() {
            if k > 0 {
                self.out.write_all(b"\n")?;
            }
            for (i, c) in line.iter().enumerate() {
                self.out.write_all(&self.buf[c.start..c.start + c.size])?;
                if let Some(&w) = ws.get(i) {
                    spaces(&mut self.out, w - c.width + self.padding)?;
                }
            }
        }
        self.buf.clear();
        self.lines = vec![Vec::new()];
        self.cur = Cell { start: 0, size: 0, width: 0 };
        Ok(())
    }

    /// The writer written to, after [`TabAligner::flush_lines`].
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush_lines()?;
        Ok(self.out)
    }
}

impl<W: Write> Write for TabAligner<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut last = 0;
        for i in memchr::memchr2_iter(b'\t', b'\n', data) {
            self.buf.extend_from_slice(&data[last..i]);
            self.cur.size += i - last;
            self.end_cell();
            last = i + 1;
            if data[i] == b'\n' {
                let cells = self.lines.last().map_or(0, Vec::len);
                self.lines.push(Vec::new());
                if cells == 1 {
                    self.flush_lines()?;
                }
            }
        }
        self.buf.extend_from_slice(&data[last..]);
        self.cur.size += data.len() - last;
        Ok(data.len())
    }

    /// Passes the flush on without aligning: lines are aligned when a line
    /// of one cell ends them, or by [`TabAligner::into_inner`].
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn spaces(out: &mut impl Write, n: usize) -> io::Result<()> {
    const S: &[u8; 64] = &[b' '; 64];
    let mut n = n;
    while n > 0 {
        let k = n.min(64);
        out.write_all(&S[..k])?;
        n -= k;
    }
    Ok(())
}

/// Terminal columns of a cell: the widths of its characters for UTF-8
/// (control characters count 0), its bytes otherwise.
fn columns(b: &[u8]) -> usize {
    match std::str::from_utf8(b) {
        Err(_) => b.len(),
        Ok(s) => s.chars().map(|c| c.width().unwrap_or(0)).sum(),
    }
}

/// Each line's column widths: a column of a line spans the following
/// lines that have a cell after it (elastic tab stops).
fn cell_widths(lines: &[Vec<Cell>], minwidth: usize) -> Vec<Vec<usize>> {
    let mut ws: Vec<Vec<usize>> = vec![Vec::new(); lines.len()];
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        for col in ws[i].len()..line.len() - 1 {
            let mut width = minwidth;
            let mut n = 0;
            for l in &lines[i..] {
                if col + 1 >= l.len() {
                    break;
                }
                n += 1;
                width = width.max(l[col].width);
            }
            for w in &mut ws[i..i + n] {
                w.push(width);
            }
        }
    }
    ws
}

/// `fastcsv table`: every record is held until the end (the widths depend
/// on all of them), as in xsv.
pub fn run(a: &TableArgs) -> Result<(), Failure> {
    let mut input = open_all_rows(a.file.as_deref(), &a.common.input())?;
    let out = super::commands::sink(a.common.output.as_deref(), &[path_arg(a.file.as_deref())])?;
    let tabs = TabAligner::new(out, a.width, a.pad);
    // xsv writes the records as CSV separated by tabs into the aligner:
    // a field with a tab, quote or line end is quoted the same way here.
    let mut w = CsvOut::new(tabs, CsvStyle { delimiter: b'\t', ..CsvStyle::default() });
    input.each_row(|row| Ok(w.record(row.iter().map(|f| condense(f, a.condense)))?))?;
    let mut out = w.into_inner().into_inner()?;
    Ok(out.flush()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn align(text: &str, minwidth: usize, padding: usize) -> String {
        let mut t = TabAligner::new(Vec::new(), minwidth, padding);
        t.write_all(text.as_bytes()).unwrap();
        String::from_utf8(t.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn aligns_columns_over_runs_of_lines() {
        assert_eq!(align("a\tbb\tc\nddd\te\tf\n", 2, 2), "a    bb  c\nddd  e   f\n");
        assert_eq!(align("a\tb\n#\nccc\td\n", 1, 1), "a b\n#\nccc d\n");
        assert_eq!(align("x\ty\n", 4, 0), "x   y\n");
        // Wide characters take two columns.
        assert_eq!(align("\u{540d}\tb\nc\td\n", 1, 1), "\u{540d} b\nc  d\n");
        assert_eq!(align("no tabs", 2, 2), "no tabs");
    }
}
