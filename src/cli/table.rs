//! `fastcsv table`: records as aligned columns for people to read, as
//! `xsv table` writes them; and [`TabAligner`], the elastic tab stops
//! (those of the `tabwriter` crate, which xsv's `table` and `flatten` use)
//! that align them.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::Args;
use unicode_width::UnicodeWidthChar;

use super::fmt::{condense, open_all_rows, CommonArgs};
use super::{path_arg, Failure};
use fastcsv::Selection;

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
    /// The smallest width of a column (at most 65536).
    #[arg(short, long, value_name = "N", default_value_t = 2, value_parser = parse_spaces)]
    pub width: usize,
    /// Spaces after each column (at most 65536).
    #[arg(short, long, value_name = "N", default_value_t = 2, value_parser = parse_spaces)]
    pub pad: usize,
    /// Shorten each field to N characters (bytes when it is not UTF-8),
    /// followed by `...`.
    #[arg(short, long, value_name = "N")]
    pub condense: Option<usize>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

/// One cell of the current block: its bytes (its text is the bytes after
/// the previous cell's TAB or LF) and how many columns of a terminal they
/// take.
#[derive(Clone, Copy)]
struct Cell {
    len: u32,
    width: u32,
}

/// Bytes of unscanned text [`TabAligner`] gathers before it scans them.
const SCAN_CHUNK: usize = 64 << 10;

/// Bytes of aligned output [`TabAligner`] gathers before it writes them.
const OUT_CHUNK: usize = 64 << 10;

/// Aligns text whose cells end in TAB and lines in LF, as the `tabwriter`
/// crate does: a column is as wide as its widest cell (at least
/// `minwidth`), plus `padding` spaces, over each run of consecutive lines
/// that have a cell in it; the last cell of a line is not part of a
/// column. A line of one cell ends the lines aligned together (a block),
/// which are written then. Widths count terminal columns for UTF-8 text
/// (wide characters take two), bytes otherwise.
///
/// The text is gathered as it comes and scanned in chunks; each column
/// keeps its runs of lines (the width of each, in line order), so that a
/// cell costs its length and width and nothing per line or column is
/// allocated.
pub struct TabAligner<W: Write> {
    out: W,
    minwidth: usize,
    padding: usize,
    /// The current block's text from `block_start`, then text not yet
    /// scanned from `scanned`.
    buf: Vec<u8>,
    block_start: usize,
    scanned: usize,
    /// Where the cell being scanned starts in `buf`.
    cell_start: usize,
    /// The current block's cells, line after line.
    cells: Vec<Cell>,
    /// Cells of each ended line of the current block.
    lines: Vec<u32>,
    /// Cells of the line being scanned, so far.
    line_cells: usize,
    /// The width so far of the run of lines of each column that the last
    /// ended line has a cell in (a prefix of the columns).
    open: Vec<usize>,
    /// Each column's ended runs in the block: (line after the run, width).
    runs: Vec<Vec<(usize, usize)>>,
    /// Aligned output not yet written.
    wbuf: Vec<u8>,
    /// For `write_block`: the run of each column it is in.
    next: Vec<usize>,
    /// Unscanned bytes that make a scan ([`SCAN_CHUNK`]; tests make it
    /// small).
    scan_chunk: usize,
}

impl<W: Write> TabAligner<W> {
    /// An aligner writing to `out`.
    pub fn new(out: W, minwidth: usize, padding: usize) -> TabAligner<W> {
        TabAligner {
            out,
            minwidth,
            padding,
            buf: Vec::new(),
            block_start: 0,
            scanned: 0,
            cell_start: 0,
            cells: Vec::new(),
            lines: Vec::new(),
            line_cells: 0,
            open: Vec::new(),
            runs: Vec::new(),
            wbuf: Vec::new(),
            next: Vec::new(),
            scan_chunk: SCAN_CHUNK,
        }
    }

    /// Appends text to align (as [`Write::write_all`] does, without a
    /// call per piece).
    #[inline]
    pub fn push(&mut self, text: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(text);
        self.scan_if_full()
    }

    /// Scans the gathered text once a chunk of it is waiting.
    #[inline]
    pub fn scan_if_full(&mut self) -> io::Result<()> {
        if self.buf.len() - self.scanned >= self.scan_chunk {
            self.scan()?;
        }
        Ok(())
    }

    /// Scans the text gathered: its cells and lines, each block written
    /// when a line of one cell ends it.
    fn scan(&mut self) -> io::Result<()> {
        let from = self.scanned;
        let to = self.buf.len();
        // Printable ASCII (and the TABs and LFs): each cell is as wide as
        // its bytes.
        // (From the cell's start: a cell may have begun in the last chunk.)
        let ascii = self.buf[self.cell_start..to].iter().fold(0u8, |a, &b| {
            a | ((b.wrapping_sub(0x20) >= 0x5f) & (b != b'\t') & (b != b'\n')) as u8
        }) == 0;
        let mut at = from;
        while let Some(k) = memchr::memchr2(b'\t', b'\n', &self.buf[at..to]) {
            let i = at + k;
            let cell = &self.buf[self.cell_start..i];
            let (len, width) = (cell.len(), if ascii { cell.len() } else { columns(cell) });
            self.push_cell(len, width)?;
            self.cell_start = i + 1;
            at = i + 1;
            if self.buf[i] == b'\n' {
                let ended = self.line_cells;
                self.end_line();
                if ended == 1 {
                    self.write_block(self.cell_start)?;
                }
            }
        }
        self.scanned = to;
        // Drop the text written (once per scan, not per block).
        if self.block_start > 0 {
            let b = self.block_start;
            self.buf.drain(..b);
            self.scanned -= b;
            self.cell_start -= b;
            self.block_start = 0;
        }
        if self.wbuf.len() >= OUT_CHUNK {
            self.out.write_all(&self.wbuf)?;
            self.wbuf.clear();
        }
        Ok(())
    }

    #[inline]
    fn push_cell(&mut self, len: usize, width: usize) -> io::Result<()> {
        let big =
            || io::Error::new(io::ErrorKind::InvalidData, "cannot align a field of 4 GiB or more");
        let len = u32::try_from(len).map_err(|_| big())?;
        let width = u32::try_from(width).map_err(|_| big())?;
        self.cells.push(Cell { len, width });
        self.line_cells += 1;
        Ok(())
    }

    /// Ends the line being scanned: the runs of the columns it has no
    /// cell in (but its last) end, the others take its cells' widths.
    fn end_line(&mut self) {
        let n = self.line_cells;
        let line = self.lines.len();
        let cols = n.saturating_sub(1);
        while self.open.len() > cols {
            let c = self.open.len() - 1;
            let w = self.open.pop().expect("a run is open");
            self.runs[c].push((line, w));
        }
        let first = self.cells.len() - n;
        let cells = &self.cells[first..first + cols];
        for (w, c) in self.open.iter_mut().zip(cells) {
            *w = (*w).max(c.width as usize);
        }
        for c in &cells[self.open.len()..] {
            self.open.push(self.minwidth.max(c.width as usize));
        }
        if self.runs.len() < self.open.len() {
            self.runs.resize_with(self.open.len(), Vec::new);
        }
        self.lines.push(n as u32);
        self.line_cells = 0;
    }

    /// Writes the lines of the current block (its text ends before `end`,
    /// where the next block starts) and starts a new block. The last line
    /// ends in LF unless it is a line the text ended in the middle of.
    fn write_block(&mut self, end: usize) -> io::Result<()> {
        let lines = self.lines.len();
        for (c, w) in self.open.drain(..).enumerate() {
            self.runs[c].push((lines, w));
        }
        // Each column's run that the line being written is in.
        let next = &mut self.next;
        next.clear();
        next.resize(self.runs.len(), 0);
        let text = &self.buf[..];
        let mut at = self.block_start;
        let mut cells = self.cells.iter();
        let out = &mut self.wbuf;
        for (li, &n) in self.lines.iter().enumerate() {
            for j in 0..n as usize {
                let c = cells.next().expect("a line's cells were kept");
                let len = c.len as usize;
                put(out, text, at, len);
                at += len + 1;
                if j + 1 < n as usize {
                    let runs = &self.runs[j];
                    while runs[next[j]].0 <= li {
                        next[j] += 1;
                    }
                    spaces_into(out, runs[next[j]].1 - c.width as usize + self.padding);
                }
            }
            // A line ends in LF, but for one the text ended in.
            if at <= end && text[at - 1] == b'\n' {
                out.push(b'\n');
            }
        }
        for r in &mut self.runs {
            r.clear();
        }
        self.cells.clear();
        self.lines.clear();
        self.block_start = end;
        Ok(())
    }

    /// Writes everything aligned so far.
    pub fn flush_lines(&mut self) -> io::Result<()> {
        self.scan()?;
        if self.cell_start < self.buf.len() {
            let len = self.buf.len() - self.cell_start;
            let width = columns(&self.buf[self.cell_start..]);
            self.push_cell(len, width)?;
        }
        if self.line_cells > 0 {
            self.end_line();
        }
        let end = self.buf.len();
        self.write_block(end)?;
        self.buf.clear();
        (self.block_start, self.scanned, self.cell_start) = (0, 0, 0);
        self.out.write_all(&self.wbuf)?;
        self.wbuf.clear();
        Ok(())
    }

    /// The writer written to, after [`TabAligner::flush_lines`].
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush_lines()?;
        Ok(self.out)
    }
}

impl<W: Write> Write for TabAligner<W> {
    #[inline]
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.push(data)?;
        Ok(data.len())
    }

    #[inline]
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.push(data)
    }

    /// Writes the blocks the text so far holds (lines of one cell end
    /// them; the lines after the last are not aligned yet) and flushes the
    /// writer.
    fn flush(&mut self) -> io::Result<()> {
        self.scan()?;
        self.out.write_all(&self.wbuf)?;
        self.wbuf.clear();
        self.out.flush()
    }
}

/// Appends `text[at..at + len]` to `out`: with 16-byte moves where
/// `text` has 16 bytes from `at` on (writing past the new length, which
/// later appends overwrite), else byte ranges.
#[inline(always)]
fn put(out: &mut Vec<u8>, text: &[u8], at: usize, len: usize) {
    let src = &text[at..at + len];
    if at + 16 > text.len() || len > 16 {
        out.extend_from_slice(src);
        return;
    }
    out.reserve(16);
    let o = out.len();
    // SAFETY: 16 bytes from `at` are inside `text` (checked above), and 16
    // are reserved from `o` in `out`; the new length `o + len` (`len <=
    // 16`) covers only bytes written here.
    unsafe {
        let v = (text.as_ptr().add(at) as *const u128).read_unaligned();
        (out.as_mut_ptr().add(o) as *mut u128).write_unaligned(v);
        out.set_len(o + len);
    }
}

/// The most `--width` and `--pad` take: far past any terminal, and small
/// enough that a column's width plus its padding cannot overflow (a larger
/// value wrapped the padding to nothing, or asked for more memory than
/// there is and panicked).
const MAX_SPACES: usize = 1 << 16;

/// Parses `--width` and `--pad`: a count of spaces up to [`MAX_SPACES`].
fn parse_spaces(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("{e}"))?;
    if n > MAX_SPACES {
        return Err(format!("at most {MAX_SPACES}"));
    }
    Ok(n)
}

/// Appends `n` spaces to `out`.
#[inline(always)]
fn spaces_into(out: &mut Vec<u8>, n: usize) {
    const S: &[u8; 64] = &[b' '; 64];
    if n <= 16 {
        put(out, S, 0, n);
    } else {
        out.resize(out.len() + n, b' ');
    }
}

/// Terminal columns of a cell: the widths of its characters for UTF-8
/// (control characters count 0), its bytes otherwise.
///
/// One pass that checks and decodes the UTF-8 as it counts: eight bytes
/// at a time while they are ASCII (the last few too, from a cell of eight
/// bytes or more) (a printable byte counts 1, a control
/// or DEL 0, as `UnicodeWidthChar::width` says), one character at a time
/// otherwise; at the first byte that is not UTF-8, the cell's bytes.
fn columns(b: &[u8]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let n = b.len();
    let mut width = 0;
    let mut i = 0;
    while i < n {
        // The next eight bytes; the last one to seven of a cell of eight
        // or more from its last eight, shifted down (the zero bytes that
        // come in are controls: they count 0).
        let word = match b.get(i..i + 8) {
            Some(w) => Some((u64::from_le_bytes(w.try_into().expect("8 bytes")), 8)),
            None if n >= 8 => {
                let last = u64::from_le_bytes(b[n - 8..].try_into().expect("8 bytes"));
                Some((last >> (8 * (8 - (n - i))), n - i))
            }
            None => None,
        };
        if let Some((x, step)) = word {
            if x & HI == 0 {
                // Every byte is below 0x80, so neither sum carries out of
                // its byte: bit 7 of `b + 0x60` is set from 0x20 on, that
                // of `b + 1` only for 0x7F (DEL).
                let printable = x.wrapping_add(LO * 0x60) & !x.wrapping_add(LO) & HI;
                width += ((printable >> 7).wrapping_mul(LO) >> 56) as usize;
                i += step;
                continue;
            }
        }
        let c = b[i];
        if c < 0x80 {
            width += usize::from(c.wrapping_sub(0x20) < 0x5f);
            i += 1;
            continue;
        }
        match utf8_char(&b[i..]) {
            Some((ch, len)) => {
                width += ch.width().unwrap_or(0);
                i += len;
            }
            None => return n,
        }
    }
    width
}

/// The character a multi-byte UTF-8 sequence at the start of `b` encodes,
/// and its length; `None` where `str::from_utf8` would find an error there
/// (a bad lead or continuation byte, an overlong form, a surrogate, a code
/// point past U+10FFFF, or the end of `b`).
#[inline]
fn utf8_char(b: &[u8]) -> Option<(char, usize)> {
    // The second byte's range depends on the first (Unicode's table of
    // well-formed sequences); the later ones are 0x80..=0xBF.
    let (len, lo, hi) = match b[0] {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return None,
    };
    let s = b.get(..len)?;
    if !(lo..=hi).contains(&s[1]) || s[2..].iter().any(|&c| c & 0xC0 != 0x80) {
        return None;
    }
    let cp =
        s[1..].iter().fold(u32::from(s[0]) & (0x7F >> len), |cp, &c| cp << 6 | u32::from(c & 0x3F));
    char::from_u32(cp).map(|ch| (ch, len))
}

/// `fastcsv table`: every record is held until the end (the widths depend
/// on all of them), as in xsv.
pub fn run(a: &TableArgs) -> Result<(), Failure> {
    let mut input = open_all_rows(a.file.as_deref(), &a.common.input())?;
    let out = super::commands::sink(a.common.output.as_deref(), &[path_arg(a.file.as_deref())])?;
    let mut tabs = TabAligner::new(out, a.width, a.pad);
    let d = input.reader.dialect().delimiter();
    // In batches on one thread (the aligner takes the text in order):
    // a record whose input bytes are its fields joined by the delimiter
    // (see `SelectedRow::raw`) and hold nothing to quote is copied with
    // TABs for its delimiters.
    input.par_each_batch(
        &Selection::all(),
        &fastcsv::Parallel::new().threads(1),
        Vec::new,
        |batch, text: &mut Vec<u8>| -> Result<(), Failure> {
            for row in batch.iter() {
                match row.raw() {
                    Some(raw) if a.condense.is_none() && tab_plain(raw, d) => {
                        let start = text.len();
                        text.extend_from_slice(raw);
                        for b in &mut text[start..] {
                            *b = if *b == d { b'\t' } else { *b };
                        }
                        text.push(b'\n');
                    }
                    _ => tab_record(text, row.iter().map(|f| condense(f, a.condense))),
                }
            }
            Ok(())
        },
        |text| {
            tabs.push(text)?;
            text.clear();
            Ok(())
        },
    )?;
    let mut out = tabs.into_inner()?;
    Ok(out.flush()?)
}

/// True when the record `raw` (fields joined by `d`, not empty) needs no
/// quoting in [`tab_record`]: no quote, CR, LF, or TAB other than `d`.
#[inline]
fn tab_plain(raw: &[u8], d: u8) -> bool {
    !raw.is_empty()
        && raw.iter().fold(0u8, |a, &b| {
            a | (((b == b'\t') & (d != b'\t')) | (b == b'"') | (b == b'\r') | (b == b'\n')) as u8
        }) == 0
}

/// Appends a record to `v` as xsv writes it into its aligner: CSV with
/// TAB delimiters (a field with a TAB, quote, CR or LF quoted, its quotes
/// doubled; a record of no bytes written as `""`), as [`CsvOut`] with
/// that delimiter writes it.
///
/// [`CsvOut`]: super::fmt::CsvOut
#[inline]
fn tab_record<F: AsRef<[u8]>>(v: &mut Vec<u8>, fields: impl IntoIterator<Item = F>) {
    let mut bytes = false;
    for (i, f) in fields.into_iter().enumerate() {
        let f = f.as_ref();
        if i > 0 {
            v.push(b'\t');
            bytes = true;
        }
        let plain = f.iter().fold(0u8, |a, &b| {
            a | ((b == b'\t') | (b == b'"') | (b == b'\r') | (b == b'\n')) as u8
        }) == 0;
        if plain {
            v.extend_from_slice(f);
            bytes |= !f.is_empty();
            continue;
        }
        v.push(b'"');
        let mut rest = f;
        while let Some(i) = memchr::memchr(b'"', rest) {
            v.extend_from_slice(&rest[..=i]);
            v.push(b'"');
            rest = &rest[i + 1..];
        }
        v.extend_from_slice(rest);
        v.push(b'"');
        bytes = true;
    }
    if !bytes {
        v.extend_from_slice(b"\"\"");
    }
    v.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn align(text: &str, minwidth: usize, padding: usize) -> String {
        let mut t = TabAligner::new(Vec::new(), minwidth, padding);
        t.write_all(text.as_bytes()).unwrap();
        String::from_utf8(t.into_inner().unwrap()).unwrap()
    }

    /// The elastic tab stops as first written (cells and lines kept one by
    /// one, each line's widths worked out from the lines after it): the
    /// oracle for [`TabAligner`].
    fn reference(text: &[u8], minwidth: usize, padding: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut lines: Vec<Vec<&[u8]>> = vec![Vec::new()];
        let flush = |lines: &mut Vec<Vec<&[u8]>>, out: &mut Vec<u8>| {
            let n = lines.len();
            let mut ws: Vec<Vec<usize>> = vec![Vec::new(); n];
            for i in 0..n {
                if lines[i].is_empty() {
                    continue;
                }
                for col in ws[i].len()..lines[i].len() - 1 {
                    let run = lines[i..].iter().take_while(|l| col + 1 < l.len()).count();
                    let w = lines[i..i + run]
                        .iter()
                        .map(|l| columns(l[col]))
                        .fold(minwidth, usize::max);
                    for x in &mut ws[i..i + run] {
                        x.push(w);
                    }
                }
            }
            for (k, line) in lines.iter().enumerate() {
                if k > 0 {
                    out.push(b'\n');
                }
                for (i, c) in line.iter().enumerate() {
                    out.extend_from_slice(c);
                    if let Some(&w) = ws[k].get(i) {
                        out.resize(out.len() + w - columns(c) + padding, b' ');
                    }
                }
            }
            *lines = vec![Vec::new()];
        };
        let mut start = 0;
        for (i, &b) in text.iter().enumerate() {
            if b == b'\t' || b == b'\n' {
                lines.last_mut().unwrap().push(&text[start..i]);
                start = i + 1;
                if b == b'\n' {
                    let one = lines.last().unwrap().len() == 1;
                    lines.push(Vec::new());
                    if one {
                        flush(&mut lines, &mut out);
                    }
                }
            }
        }
        if start < text.len() {
            lines.last_mut().unwrap().push(&text[start..]);
        }
        flush(&mut lines, &mut out);
        out
    }

    /// [`columns`] as first written: the oracle for the one-pass count.
    fn columns_reference(b: &[u8]) -> usize {
        match std::str::from_utf8(b) {
            Err(_) => b.len(),
            Ok(s) => s.chars().map(|c| c.width().unwrap_or(0)).sum(),
        }
    }

    #[test]
    fn counts_columns_as_the_reference() {
        let cases: &[&[u8]] = &[
            b"",
            b"plain ascii text",
            b"tab\there\x7f and \x01 controls",
            "\u{540d}\u{e9}t\u{e9} \u{1f642} wide and narrow, 12345678".as_bytes(),
            "\u{300}\u{200b}\u{a0}\u{ad}\u{85}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}".as_bytes(),
            b"bad \xff byte after ascii",
            b"\xc0\x80", // overlong
            b"\xe0\x80\x80",
            b"\xed\xa0\x80",     // surrogate
            b"\xf4\x90\x80\x80", // past U+10FFFF
            b"\xf0\x8f\xbf\xbf",
            b"cut \xe6\x97",
            b"\xe6\x97\xa5 then cut \xf0\x9f\x99",
            b"\xc3",
            b"\x80 lone continuation",
        ];
        for c in cases {
            assert_eq!(columns(c), columns_reference(c), "{:?}", String::from_utf8_lossy(c));
        }
    }

    proptest::proptest! {
        /// Any bytes, and UTF-8 text of every kind of character: as many
        /// columns as `str::from_utf8` and the widths of its characters
        /// say.
        #[test]
        fn columns_are_the_reference(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
            text in "\\PC{0,30}",
            cut in 0..8usize,
        ) {
            proptest::prop_assert_eq!(columns(&bytes), columns_reference(&bytes));
            proptest::prop_assert_eq!(columns(text.as_bytes()), columns_reference(text.as_bytes()));
            let t = text.as_bytes();
            let cut = &t[..t.len().saturating_sub(cut)];
            proptest::prop_assert_eq!(columns(cut), columns_reference(cut));
        }
    }

    proptest::proptest! {
        /// Text of short and long cells (ASCII, wide and invalid UTF-8,
        /// controls), ragged lines, lines of one cell, TAB or LF at the
        /// end or not, written in pieces of any size: aligned as the
        /// reference aligns it.
        #[test]
        fn aligns_as_the_reference(
            cells in proptest::collection::vec(
                ("[a\u{540d}\u{e9}\r\u{1}]{0,4}|x{15,40}", 0..4u8), 0..60),
            minwidth in 0..4usize,
            padding in 0..3usize,
            pieces in proptest::collection::vec(1..50usize, 1..10),
            invalid in proptest::bool::ANY,
            scan_chunk in 1..40usize,
            flush_every in 1..8usize,
        ) {
            let mut text = Vec::new();
            for (c, sep) in &cells {
                text.extend_from_slice(c.as_bytes());
                if invalid && c.len() == 3 {
                    text.push(0xff);
                }
                text.extend_from_slice(match sep { 0 | 1 => b"\t", 2 => b"\n", _ => b"" });
            }
            let mut t = TabAligner::new(Vec::new(), minwidth, padding);
            t.scan_chunk = scan_chunk;
            let mut rest = &text[..];
            for (k, n) in pieces.iter().cycle().enumerate() {
                if rest.is_empty() {
                    break;
                }
                let (a, b) = rest.split_at((*n).min(rest.len()));
                t.write_all(a).unwrap();
                // A flush writes what is aligned so far, changing nothing.
                if k % flush_every == 0 {
                    t.flush().unwrap();
                }
                rest = b;
            }
            let got = t.into_inner().unwrap();
            let want = reference(&text, minwidth, padding);
            proptest::prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        }
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
