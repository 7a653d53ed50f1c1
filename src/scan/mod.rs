//! The parsing state machine.
//!
//! BE ADVISED: this is the file where correctness lives. Read this first.
//!
//! * The states and transitions are those of CPython's `Modules/_csv.c`
//!   reader (`parse_process_char`), so that rows, errors and `line_num`
//!   match Python's `csv` module byte for byte. Python feeds the machine one
//!   *line* at a time followed by an end-of-line event (EOL). Here, in
//!   *stream* mode, the scanner derives EOL itself from the line
//!   terminators (LF, CR, CRLF, as `open(newline='')` splits lines); in
//!   *line-fed* mode the caller delivers each line and calls
//!   [`Scanner::end_line`], which is how Python iterables of `str` are
//!   handled.
//! * The scanner does no I/O and never allocates on its own: it appends field
//!   spans and unescaped bytes to the caller's reusable [`Fields`]. It can
//!   stop at any byte (`Scan::NeedInput`) and resume when the caller passes
//!   the same record's bytes again, extended. All offsets are relative to the
//!   start of the input slice, which must begin at the current record's first
//!   byte and keep it until the record is returned; this is what lets the
//!   buffered source move a partial record to the front of its buffer.
//! * Fields are zero-copy: a field is a `start..end` span of the input until
//!   something makes its content non-contiguous (a doubled quote, an escape,
//!   text after a closing quote, a filtered byte). Only then is it copied
//!   ("owned") into `Fields::scratch`, and only from that point on.
//! * Plain runs inside fields are skipped with `memchr2/3`, not byte by byte.
//! * Line counting: every CR counts as a line end, and LF counts unless the
//!   byte before it is CR. A record that ends at CR sets `skip_lf` so that a
//!   following LF (possibly in the next slice) is eaten as part of it.
//!   An error at the LF of a CRLF (a field over the limit in quotes) sets
//!   `skip_lf` in `recover` for the same reason: the CR counted that line.
//!
//! * Block scanning (`block.rs`): at each record start, `scan` first offers
//!   the record to the 64-bytes-at-a-time SIMD classifier, which takes it
//!   only if it can prove the record *regular* (quotes only at field starts,
//!   before delimiters or terminators, or doubled; no escapes, no comment,
//!   not empty) and then saves its fields through this file's own
//!   `add`/`save`. Everything else is scanned here, byte by byte.
//!
//! If you add a state or change a transition (the grammar is written once,
//! in `grammar.rs`; every engine is checked against it):
//!
//! 1. `grammar.rs`: add it to `State` (a number the splitter does not use:
//!    8 and 11 are its own), `State::ALL`, `next` (what each byte does in
//!    it) and `line_end` (what EOL does); cover it in `test_dialects`.
//! 2. This file: `scan` (the fast path), `end_line` (EOL in line-fed
//!    mode), `finish` (end of input), and the prefix that reaches it in
//!    `tests::scanner_follows_the_grammar`.
//! 3. `reference.rs`: `P::ch`, `P::eol`, and its prefix in
//!    `tests::reference_follows_the_grammar`.
//! 4. `src/split.rs`: the splitter's automaton takes its transitions from
//!    `grammar::next`/`line_end`; give the new state its place in
//!    `STATES`, in `quiet_reach` and in `plain_stretch` if it is an
//!    unquoted field state, and bump `Summary::MAGIC` (the numbers of
//!    states are in summaries' bytes).
//! 5. `block.rs`: if it is reachable from a regular record, mark the byte
//!    that leads to it as bad.
//! 6. `src/parallel.rs` needs nothing: it takes each chunk's first record
//!    start from the splitter (step 4: `Splitter::cut_bound`, or
//!    `Splitter::summary_bounds` where a cut stays undecided) and
//!    checks every chunk with the reader itself, so an automaton that
//!    disagreed with the scanner would make the parallel read hand over
//!    to the sequential one (slower, never wrong); `tests/parallel.rs`
//!    and `tests/split.rs` would show it.
//!
//! Then run the differential tests: `cargo test --lib scan` (the grammar
//! tests), `tests/engines.rs`, `tests/block.rs`, `tests/prop.rs` and
//! `tests/split.rs`.

mod block;
pub(crate) mod grammar;
pub mod reference;

pub(crate) use block::{
    append_kept, append_without, match16, ColMasks, SelectArgs, Selected, SelectedRecord, NO_COPY,
};
pub use block::{has_byte_compress, simd_level, ByteSet};

use crate::dialect::{Dialect, Terminator};
use crate::error::ErrorKind;
use crate::filter::FilterTable;
use grammar::State;

const OWNED: usize = 1;
const QUOTED: usize = 2;
const NUMERIC: usize = 4;

/// One field's location: a span of the input, or of [`Fields`]' scratch
/// buffer when the field had to be unescaped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    start: usize,
    end: usize,
    flags: usize,
}

impl Span {
    /// True when the bytes live in the scratch buffer, not the input.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scanner, Scan};
    /// let d = fastcsv::Dialect::default();
    /// let (mut s, mut f, mut pos) = (Scanner::new(&d), Fields::default(), 0);
    /// let input = b"\"a\"\"b\",c\n";
    /// assert!(matches!(s.scan(input, &mut pos, &mut f), Scan::Row));
    /// assert!(f.span(0).is_owned());
    /// assert!(!f.span(1).is_owned());
    /// ```
    pub fn is_owned(&self) -> bool {
        self.flags & OWNED != 0
    }
    /// True when the field began with a quote.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scanner, Scan};
    /// let d = fastcsv::Dialect::default();
    /// let (mut s, mut f, mut pos) = (Scanner::new(&d), Fields::default(), 0);
    /// s.scan(b"\"a\",b\n", &mut pos, &mut f);
    /// assert!(f.span(0).is_quoted() && !f.span(1).is_quoted());
    /// ```
    pub fn is_quoted(&self) -> bool {
        self.flags & QUOTED != 0
    }
    /// True when the field began with an ordinary byte: Python's
    /// `QUOTE_NONNUMERIC` converts exactly these fields to `float`.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scanner, Scan};
    /// let d = fastcsv::Dialect::default();
    /// let (mut s, mut f, mut pos) = (Scanner::new(&d), Fields::default(), 0);
    /// s.scan(b"1,,\"2\"\n", &mut pos, &mut f);
    /// assert!(f.span(0).is_numeric());
    /// assert!(!f.span(1).is_numeric() && !f.span(2).is_numeric());
    /// ```
    pub fn is_numeric(&self) -> bool {
        self.flags & NUMERIC != 0
    }
}

/// The fields of one record, as written by the scanner. Reused across
/// records; [`Scanner`] clears it when it starts the next record.
///
/// ```
/// use fastcsv::scan::{Fields, Scanner, Scan};
/// let d = fastcsv::Dialect::default();
/// let (mut s, mut f, mut pos) = (Scanner::new(&d), Fields::default(), 0);
/// let input = b"x,y\n";
/// s.scan(input, &mut pos, &mut f);
/// assert_eq!(f.len(), 2);
/// assert_eq!(f.get(input, 1), b"y");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Fields {
    spans: Vec<Span>,
    scratch: Vec<u8>,
}

impl Fields {
    /// Number of fields.
    ///
    /// ```
    /// assert_eq!(fastcsv::scan::Fields::default().len(), 0);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.spans.len()
    }
    /// True when the record has no fields (an empty line).
    ///
    /// ```
    /// assert!(fastcsv::scan::Fields::default().is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
    /// The span of field `i`. Panics if `i >= len()`.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scanner};
    /// let (mut s, mut f, mut pos) = (Scanner::new(&Default::default()), Fields::default(), 0);
    /// s.scan(b"a\n", &mut pos, &mut f);
    /// assert!(!f.span(0).is_quoted());
    /// ```
    #[inline]
    pub fn span(&self, i: usize) -> Span {
        self.spans[i]
    }
    /// Bytes of field `i`, given the input the scanner was fed. Panics if
    /// `i >= len()`.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scanner};
    /// let (mut s, mut f, mut pos) = (Scanner::new(&Default::default()), Fields::default(), 0);
    /// let input = b"a,\"b\"\"c\"\n";
    /// s.scan(input, &mut pos, &mut f);
    /// assert_eq!(f.get(input, 1), b"b\"c");
    /// ```
    #[inline]
    pub fn get<'a>(&'a self, input: &'a [u8], i: usize) -> &'a [u8] {
        let s = self.spans[i];
        if s.flags & OWNED != 0 {
            &self.scratch[s.start..s.end]
        } else {
            &input[s.start..s.end]
        }
    }
    pub(crate) fn spans(&self) -> &[Span] {
        &self.spans
    }
    pub(crate) fn scratch(&self) -> &[u8] {
        &self.scratch
    }
    fn clear(&mut self) {
        self.spans.clear();
        self.scratch.clear();
    }
}

impl Span {
    /// The span's byte range (in the input, or in scratch when owned).
    #[inline]
    pub(crate) fn range(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    #[inline]
    pub(crate) fn bytes<'a>(&self, input: &'a [u8], scratch: &'a [u8]) -> &'a [u8] {
        if self.flags & OWNED != 0 {
            &scratch[self.start..self.end]
        } else {
            &input[self.start..self.end]
        }
    }
}

/// What the caller must do next.
#[derive(Debug)]
pub enum Scan {
    /// A record is complete in [`Fields`]; the position now points past its
    /// terminator.
    Row,
    /// The input is used up mid-record: pass the same record's bytes again,
    /// extended, with the same position (or call `finish` at end of input).
    NeedInput,
    /// End of input: no further record.
    End,
    /// Malformed input at this offset of the slice.
    Error(ErrorKind, usize),
}

/// Which bytes end a plain run in a given state.
#[derive(Clone, Copy)]
enum Needles {
    Two(u8, u8),
    Three(u8, u8, u8),
    Table,
}

/// The CSV state machine. See the module documentation.
///
/// ```
/// use fastcsv::scan::{Fields, Scan, Scanner};
/// let d = fastcsv::Dialect::default();
/// let mut s = Scanner::new(&d);
/// let mut f = Fields::default();
/// // The record is split across two "reads": the scanner resumes.
/// let whole = b"a,\"b\nc\"\n";
/// let mut pos = 0;
/// assert!(matches!(s.scan(&whole[..5], &mut pos, &mut f), Scan::NeedInput));
/// assert!(matches!(s.scan(whole, &mut pos, &mut f), Scan::Row));
/// assert_eq!(f.get(whole, 1), b"b\nc");
/// assert_eq!(s.lines(), 2);
/// assert!(matches!(s.finish(&[], &mut f), Scan::End));
/// ```
pub struct Scanner {
    delim: u8,
    quote: i32,
    esc: i32,
    comment: i32,
    double_quote: bool,
    skip_space: bool,
    strict: bool,
    any_term: bool,
    term: u8,
    skip_empty: bool,
    trim: bool,
    line_fed: bool,
    limit: u64,
    filter: FilterTable,
    field_needles: Needles,
    quoted_needles: Needles,
    field_table: [bool; 256],
    quoted_table: [bool; 256],
    /// The block classifier, when block scanning is on (stream mode).
    block: Option<block::Classifier>,
    /// Whether `scan` and `block_count` use `block`.
    block_on: bool,
    /// Whether the caller promises to call `forget_blocks` whenever the
    /// bytes it passes may change (the reader does).
    cache_blocks: bool,
    /// The block the last record ended in (see `block::Cache`).
    block_cache: Option<block::Cache>,

    state: State,
    rec_off: usize,
    rec_line: u64,
    skip_lf: bool,
    /// The last error was at the LF of a CRLF whose CR is counted already
    /// (a field over the limit, in quotes or after an escape): `recover`
    /// then eats that LF as the end of the line, without counting it again.
    err_at_crlf_lf: bool,
    row_ready: bool,
    lines: u64,
    fstart: usize,
    fend: usize,
    sstart: usize,
    owned: bool,
    quoted: bool,
    numeric: bool,
}

impl Scanner {
    /// A scanner that finds line ends itself (files, byte streams).
    ///
    /// ```
    /// let s = fastcsv::scan::Scanner::new(&fastcsv::Dialect::default());
    /// assert_eq!(s.lines(), 0);
    /// ```
    pub fn new(d: &Dialect) -> Scanner {
        Scanner::with_mode(d, false)
    }

    /// A scanner fed one line at a time, like Python's `csv.reader` over an
    /// iterable of strings: line breaks inside a line do not end it, and
    /// [`end_line`](Scanner::end_line) must be called after each line.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scan, Scanner};
    /// let mut s = Scanner::line_fed(&fastcsv::Dialect::default());
    /// let mut f = Fields::default();
    /// let line = b"a,b\r\n";
    /// let mut pos = 0;
    /// assert!(matches!(s.scan(line, &mut pos, &mut f), Scan::NeedInput));
    /// assert!(matches!(s.end_line(&mut f), Scan::Row));
    /// assert_eq!(f.get(line, 1), b"b");
    /// ```
    pub fn line_fed(d: &Dialect) -> Scanner {
        Scanner::with_mode(d, true)
    }

    fn with_mode(d: &Dialect, line_fed: bool) -> Scanner {
        let (any_term, term) = match d.terminator {
            Terminator::Any => (true, b'\n'),
            Terminator::Byte(t) => (false, t),
        };
        let quote = d.quote.map_or(-1, i32::from);
        let esc = d.escape.map_or(-1, i32::from);
        let mut field_table = [false; 256];
        let mut quoted_table = [false; 256];
        let nls: &[u8] = if any_term { b"\r\n" } else { std::slice::from_ref(&term) };
        field_table[d.delimiter as usize] = true;
        for &n in nls {
            field_table[n as usize] = true;
            quoted_table[n as usize] = true;
        }
        if let Some(e) = d.escape {
            field_table[e as usize] = true;
            quoted_table[e as usize] = true;
        }
        if let Some(q) = d.quote {
            quoted_table[q as usize] = true;
        }
        let field_needles = match (any_term, d.escape) {
            (true, None) => Needles::Three(d.delimiter, b'\r', b'\n'),
            (false, None) => Needles::Two(d.delimiter, term),
            (false, Some(e)) => Needles::Three(d.delimiter, term, e),
            (true, Some(_)) => Needles::Table,
        };
        let q = d.quote.unwrap_or(0);
        let quoted_needles = match (any_term, d.escape) {
            (true, None) => Needles::Three(q, b'\r', b'\n'),
            (false, None) => Needles::Two(q, term),
            (false, Some(e)) => Needles::Three(q, term, e),
            (true, Some(_)) => Needles::Table,
        };
        Scanner {
            delim: d.delimiter,
            quote,
            esc,
            comment: d.comment.map_or(-1, i32::from),
            double_quote: d.double_quote,
            skip_space: d.skip_initial_space,
            strict: d.strict,
            any_term,
            term,
            skip_empty: d.skip_empty_lines,
            trim: d.trim,
            line_fed,
            limit: d.field_limit.unwrap_or(u64::MAX),
            filter: FilterTable::new(d.filter),
            field_needles,
            quoted_needles,
            field_table,
            quoted_table,
            block: if line_fed { None } else { Some(block::Classifier::new(d)) },
            block_on: !line_fed,
            cache_blocks: false,
            block_cache: None,
            state: State::StartRecord,
            rec_off: 0,
            rec_line: 1,
            skip_lf: false,
            err_at_crlf_lf: false,
            row_ready: false,
            lines: 0,
            fstart: 0,
            fend: 0,
            sstart: 0,
            owned: line_fed,
            quoted: false,
            numeric: false,
        }
    }

    /// Changes the field size limit (in characters) from the next byte on,
    /// as Python's `csv.field_size_limit()` takes effect immediately.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scan, Scanner};
    /// let mut s = Scanner::new(&fastcsv::Dialect::default());
    /// s.set_field_limit(Some(2));
    /// let (mut f, mut pos) = (Fields::default(), 0);
    /// assert!(matches!(s.scan(b"abc\n", &mut pos, &mut f), Scan::Error(..)));
    /// ```
    pub fn set_field_limit(&mut self, limit: Option<u64>) {
        self.limit = limit.unwrap_or(u64::MAX);
    }

    /// Lines consumed so far (Python's `reader.line_num`).
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scanner};
    /// let mut s = Scanner::new(&Default::default());
    /// let (mut f, mut pos) = (Fields::default(), 0);
    /// s.scan(b"a\r\nb\n", &mut pos, &mut f);
    /// assert_eq!(s.lines(), 1);
    /// ```
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Offset in the input where the last record began (after skipped
    /// comments and empty lines).
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scanner};
    /// let d = fastcsv::Dialect::builder().comment(Some(b'#')).build().unwrap();
    /// let mut s = Scanner::new(&d);
    /// let (mut f, mut pos) = (Fields::default(), 0);
    /// s.scan(b"#c\nx\n", &mut pos, &mut f);
    /// assert_eq!(s.record_offset(), 3);
    /// assert_eq!(s.record_line(), 2);
    /// ```
    pub fn record_offset(&self) -> usize {
        self.rec_off
    }

    /// 1-based line on which the last record began.
    ///
    /// ```
    /// let s = fastcsv::scan::Scanner::new(&Default::default());
    /// assert_eq!(s.record_line(), 1);
    /// ```
    pub fn record_line(&self) -> u64 {
        self.rec_line
    }

    /// Forgets the record in progress and starts afresh at the next line,
    /// as Python's reader does after an error: the caller resumes scanning
    /// at the offset of the error, and the rest of that line is skipped.
    /// An error at the LF of a CRLF (whose CR ended the line) skips just
    /// that LF, without counting a line for it. Until the next record
    /// begins, [`Scanner::record_offset`] is 0 (where the caller resumes)
    /// and [`Scanner::record_line`] the line being skipped.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scan, Scanner};
    /// let d = fastcsv::Dialect::builder().strict(true).build().unwrap();
    /// let mut s = Scanner::new(&d);
    /// let (mut f, mut pos) = (Fields::default(), 0);
    /// let input = b"\"a\"x,y\nz\n";
    /// let Scan::Error(_, at) = s.scan(input, &mut pos, &mut f) else { panic!() };
    /// s.recover();
    /// let rest = &input[at..];
    /// let mut pos = 0;
    /// assert!(matches!(s.scan(rest, &mut pos, &mut f), Scan::Row));
    /// assert_eq!(f.get(rest, 0), b"z");
    /// ```
    pub fn recover(&mut self) {
        let at_crlf_lf = self.err_at_crlf_lf;
        self.reset();
        // What is skipped (the rest of the line) starts where the caller
        // resumes, offset 0 of its next input, on the error's line: a
        // source that fails while skipping it points there, not at the
        // start of the record that failed (an offset into other input).
        self.rec_off = 0;
        self.rec_line = self.lines + u64::from(!at_crlf_lf);
        if self.line_fed {
            return;
        }
        if at_crlf_lf {
            // The error's LF ends the line its CR counted: eat it, as the
            // byte after a record's CR, and start the next line afresh.
            self.skip_lf = true;
        } else {
            self.state = State::Comment;
        }
    }

    /// Forgets the record in progress; the next byte starts a record.
    ///
    /// ```
    /// let mut s = fastcsv::scan::Scanner::new(&Default::default());
    /// s.reset();
    /// assert!(s.at_record_start());
    /// ```
    pub fn reset(&mut self) {
        self.block_cache = None;
        self.state = State::StartRecord;
        self.row_ready = true;
        self.skip_lf = false;
        self.err_at_crlf_lf = false;
        self.owned = self.line_fed;
        self.quoted = false;
        self.numeric = false;
    }

    /// Turns block scanning on or off (default: on for [`Scanner::new`],
    /// unavailable for [`Scanner::line_fed`]). Block scanning reads 64
    /// bytes at a time with SIMD bitmasks and hands every record it cannot
    /// prove regular to the state machine, so the output is the same
    /// either way; turning it off is for measuring and testing.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scan, Scanner};
    /// let d = fastcsv::Dialect::default();
    /// let input = b"a,\"b\"\"c\"\n";
    /// let mut rows = Vec::new();
    /// for on in [true, false] {
    ///     let mut s = Scanner::new(&d);
    ///     s.set_block_scan(on);
    ///     let (mut f, mut pos) = (Fields::default(), 0);
    ///     assert!(matches!(s.scan(input, &mut pos, &mut f), Scan::Row));
    ///     rows.push((f.get(input, 1).to_vec(), f.span(1), s.lines()));
    /// }
    /// assert_eq!(rows[0], rows[1]);
    /// ```
    pub fn set_block_scan(&mut self, on: bool) {
        self.block_on = on && self.block.is_some();
    }

    /// Lets the block scanner keep the classified block in which a record
    /// ended for the next record. The caller must then call
    /// [`forget_blocks`](Scanner::forget_blocks) whenever the bytes at
    /// addresses it has passed may change (the reader: on every refill).
    pub(crate) fn set_block_cache(&mut self, on: bool) {
        self.cache_blocks = on;
        self.block_cache = None;
    }

    /// Whether block scanning is on (see `set_block_scan`).
    pub(crate) fn block_scan_on(&self) -> bool {
        self.block_on
    }

    /// The field size limit in force (`None` for none).
    pub(crate) fn field_limit(&self) -> Option<u64> {
        (self.limit != u64::MAX).then_some(self.limit)
    }

    /// A CR ended the input: an LF at the start of the next input would
    /// belong to it.
    pub(crate) fn pending_lf(&self) -> bool {
        self.skip_lf
    }

    /// Restarts at a record start known to lie after `lines` lines (a
    /// parallel read handing over to the sequential reader).
    pub(crate) fn restart_at(&mut self, lines: u64) {
        self.reset();
        self.lines = lines;
        self.rec_line = lines + 1;
    }

    /// Drops the cached block (see `set_block_cache`).
    #[inline]
    pub(crate) fn forget_blocks(&mut self) {
        self.block_cache = None;
    }

    /// True between records (nothing of a record has been consumed).
    ///
    /// ```
    /// let s = fastcsv::scan::Scanner::new(&Default::default());
    /// assert!(s.at_record_start());
    /// ```
    pub fn at_record_start(&self) -> bool {
        self.state == State::StartRecord
    }

    #[inline]
    fn is_nl(&self, c: u8) -> bool {
        if self.any_term {
            c == b'\r' || c == b'\n'
        } else {
            c == self.term
        }
    }

    #[inline]
    fn find(&self, needles: Needles, table: &[bool; 256], hay: &[u8]) -> Option<usize> {
        match needles {
            Needles::Two(a, b) => memchr::memchr2(a, b, hay),
            Needles::Three(a, b, c) => memchr::memchr3(a, b, c, hay),
            Needles::Table => hay.iter().position(|&b| table[b as usize]),
        }
    }

    /// Counts the line that the terminator byte at `j` ends, if it ends one.
    #[inline]
    fn count_nl(&mut self, input: &[u8], j: usize) {
        if self.line_fed {
            return;
        }
        if self.any_term && input[j] == b'\n' && j > 0 && input[j - 1] == b'\r' {
            return;
        }
        self.lines += 1;
    }

    #[inline]
    fn flen(&self, out: &Fields) -> usize {
        if self.owned {
            out.scratch.len() - self.sstart
        } else {
            self.fend - self.fstart
        }
    }

    /// Field-size check, in characters as Python counts them, after
    /// `input[a..b]` was appended. Returns the offset of the first byte past
    /// the limit, if the field is now over it.
    #[cold]
    fn over_limit(&self, input: &[u8], a: usize, b: usize, out: &Fields) -> Option<usize> {
        let is_start = |c: &u8| (*c as i8) >= -0x40;
        let bytes =
            if self.owned { &out.scratch[self.sstart..] } else { &input[self.fstart..self.fend] };
        let total = bytes.iter().filter(|c| is_start(c)).count() as u64;
        if total <= self.limit {
            return None;
        }
        let new = &input[a..b];
        let before = total - new.iter().filter(|c| is_start(c)).count() as u64;
        // The (limit + 1)-th character starts inside `new`.
        let mut seen = before;
        for (k, c) in new.iter().enumerate() {
            if is_start(c) {
                seen += 1;
                if seen > self.limit {
                    return Some(a + k);
                }
            }
        }
        Some(a)
    }

    /// Appends `input[a..b]` to the current field. Fails with the offset of
    /// the first byte past the field size limit.
    #[inline]
    fn add(&mut self, input: &[u8], a: usize, b: usize, out: &mut Fields) -> Result<(), usize> {
        if a == b {
            return Ok(());
        }
        if self.owned {
            out.scratch.extend_from_slice(&input[a..b]);
        } else if self.fstart == self.fend {
            self.fstart = a;
            self.fend = b;
        } else if self.fend == a {
            self.fend = b;
        } else {
            out.scratch.extend_from_slice(&input[self.fstart..self.fend]);
            out.scratch.extend_from_slice(&input[a..b]);
            self.owned = true;
        }
        if self.flen(out) as u64 > self.limit {
            if let Some(at) = self.over_limit(input, a, b, out) {
                return Err(at);
            }
        }
        Ok(())
    }

    /// Appends a byte that is not in the input (the `\n` Python adds for
    /// EOL after an escape). Fails when the field is now over the limit.
    fn add_byte(&mut self, input: &[u8], c: u8, out: &mut Fields) -> Result<(), usize> {
        if !self.owned {
            out.scratch.extend_from_slice(&input[self.fstart..self.fend]);
            self.owned = true;
        }
        out.scratch.push(c);
        if self.flen(out) as u64 > self.limit {
            let n = input.len();
            if self.over_limit(input, n, n, out).is_some() {
                return Err(n);
            }
        }
        Ok(())
    }

    /// Python's `parse_save_field`, plus filtering and trimming.
    #[inline]
    fn save(&mut self, input: &[u8], out: &mut Fields) {
        let mut flags = 0;
        if self.quoted {
            flags |= QUOTED;
        }
        if self.numeric {
            flags |= NUMERIC;
        }
        let (mut s, mut e) = if self.owned {
            flags |= OWNED;
            (self.sstart, out.scratch.len())
        } else {
            (self.fstart, self.fend)
        };
        if self.filter.active() {
            if flags & OWNED != 0 {
                if self.filter.first_hit(&out.scratch[s..e]).is_some() {
                    self.filter.compact_tail(&mut out.scratch, s);
                    e = out.scratch.len();
                }
            } else if self.filter.first_hit(&input[s..e]).is_some() {
                s = out.scratch.len();
                self.filter.copy_filtered(&input[self.fstart..self.fend], &mut out.scratch);
                e = out.scratch.len();
                flags |= OWNED;
            }
        }
        if self.trim && !self.quoted {
            let bytes = if flags & OWNED != 0 { &out.scratch[..] } else { input };
            while s < e && bytes[s].is_ascii_whitespace() {
                s += 1;
            }
            while e > s && bytes[e - 1].is_ascii_whitespace() {
                e -= 1;
            }
        }
        out.spans.push(Span { start: s, end: e, flags });
        self.fstart = 0;
        self.fend = 0;
        self.sstart = out.scratch.len();
        self.owned = self.line_fed;
        self.quoted = false;
        self.numeric = false;
    }

    fn begin_record(&mut self, out: &mut Fields) {
        if self.row_ready {
            self.row_ready = false;
            out.clear();
            self.fstart = 0;
            self.fend = 0;
            self.sstart = 0;
        }
    }

    /// Ends a record in stream mode at terminator `c` at `*i`.
    #[inline]
    fn end_record_at(&mut self, input: &[u8], i: &mut usize) {
        let c = input[*i];
        self.count_nl(input, *i);
        *i += 1;
        if c == b'\r' && self.any_term {
            if *i < input.len() {
                if input[*i] == b'\n' {
                    *i += 1;
                }
            } else {
                self.skip_lf = true;
            }
        }
        self.state = State::StartRecord;
        self.row_ready = true;
    }

    /// A field size error at `input[at]` (or at `input.len()` for the
    /// `\n` an EOL adds). Notes whether `at` is the LF of a CRLF, whose
    /// line was counted at the CR (see `recover`).
    fn limit_error(&mut self, input: &[u8], at: usize) -> Scan {
        self.err_at_crlf_lf = !self.line_fed
            && self.any_term
            && at > 0
            && input.get(at) == Some(&b'\n')
            && input[at - 1] == b'\r';
        Scan::Error(ErrorKind::FieldTooLarge { limit: self.limit }, at)
    }

    /// The quote byte as the scanner compares it (-1 when quoting is off).
    pub(crate) fn quote_byte(&self) -> i32 {
        self.quote
    }

    /// Scans `input[*pos..]`. `input` must start at the current record's
    /// first byte (see the module docs); `*pos` is advanced past what was
    /// consumed.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scan, Scanner};
    /// let mut s = Scanner::new(&Default::default());
    /// let (mut f, mut pos) = (Fields::default(), 0);
    /// let input = b"a,b\nc";
    /// assert!(matches!(s.scan(input, &mut pos, &mut f), Scan::Row));
    /// assert_eq!(pos, 4);
    /// let rest = &input[pos..];
    /// let mut pos = 0;
    /// assert!(matches!(s.scan(rest, &mut pos, &mut f), Scan::NeedInput));
    /// assert!(matches!(s.finish(rest, &mut f), Scan::Row));
    /// assert_eq!(f.get(rest, 0), b"c");
    /// ```
    pub fn scan(&mut self, input: &[u8], pos: &mut usize, out: &mut Fields) -> Scan {
        self.begin_record(out);
        let mut i = *pos;
        let n = input.len();
        macro_rules! give {
            ($r:expr) => {{
                *pos = i;
                return $r;
            }};
        }
        macro_rules! add {
            ($a:expr, $b:expr) => {
                if let Err(at) = self.add(input, $a, $b, out) {
                    give!(self.limit_error(input, at));
                }
            };
        }
        // Ends the record (stream) or the field and line (line-fed).
        macro_rules! end_line_here {
            () => {{
                self.save(input, out);
                if self.line_fed {
                    self.state = State::EatCrnl;
                    i += 1;
                } else {
                    self.end_record_at(input, &mut i);
                    give!(Scan::Row);
                }
            }};
        }
        while i < n {
            let c = input[i];
            match self.state {
                State::StartRecord => {
                    if self.skip_lf {
                        self.skip_lf = false;
                        if c == b'\n' {
                            i += 1;
                            continue;
                        }
                    }
                    if self.block_on {
                        if let Some(j) = self.block_record(input, i, out) {
                            i = j;
                            give!(Scan::Row);
                        }
                    }
                    self.rec_off = i;
                    self.rec_line = self.lines + 1;
                    if self.is_nl(c) {
                        if self.line_fed {
                            self.state = State::EatCrnl;
                            i += 1;
                        } else {
                            self.end_record_at(input, &mut i);
                            if self.skip_empty {
                                self.row_ready = false;
                            } else {
                                give!(Scan::Row);
                            }
                        }
                    } else if c as i32 == self.comment {
                        self.state = State::Comment;
                        i += 1;
                    } else {
                        self.state = State::StartField;
                    }
                }
                State::Comment => {
                    if self.line_fed {
                        i = n;
                    } else {
                        let hay = &input[i..];
                        let hit = if self.any_term {
                            memchr::memchr2(b'\r', b'\n', hay)
                        } else {
                            memchr::memchr(self.term, hay)
                        };
                        match hit {
                            None => i = n,
                            Some(k) => {
                                i += k;
                                self.end_record_at(input, &mut i);
                                self.row_ready = false;
                            }
                        }
                    }
                }
                State::StartField => {
                    if self.is_nl(c) {
                        end_line_here!();
                    } else if c as i32 == self.quote {
                        self.state = State::InQuotedField;
                        self.quoted = true;
                        i += 1;
                    } else if c as i32 == self.esc {
                        self.state = State::EscapedChar;
                        i += 1;
                    } else if c == b' ' && self.skip_space {
                        i += 1;
                    } else if c == self.delim {
                        self.save(input, out);
                        i += 1;
                    } else {
                        self.numeric = true;
                        self.state = State::InField;
                    }
                }
                // AfterEscapedCrnl acts as InField on bytes but, as in
                // CPython, ordinary bytes leave it in place, and it ignores
                // EOL (which matters at end of input in strict mode).
                State::InField | State::AfterEscapedCrnl => {
                    let found = self.find(self.field_needles, &self.field_table, &input[i..]);
                    match found {
                        None => {
                            add!(i, n);
                            i = n;
                        }
                        Some(k) => {
                            let j = i + k;
                            add!(i, j);
                            i = j;
                            let c = input[j];
                            if self.is_nl(c) {
                                end_line_here!();
                            } else if c as i32 == self.esc {
                                self.state = State::EscapedChar;
                                i += 1;
                            } else {
                                // delimiter
                                self.save(input, out);
                                self.state = State::StartField;
                                i += 1;
                            }
                        }
                    }
                }
                State::InQuotedField => {
                    let found = self.find(self.quoted_needles, &self.quoted_table, &input[i..]);
                    match found {
                        None => {
                            add!(i, n);
                            i = n;
                        }
                        Some(k) => {
                            let j = i + k;
                            add!(i, j);
                            i = j;
                            let c = input[j];
                            if c as i32 == self.esc {
                                self.state = State::EscapeInQuotedField;
                                i += 1;
                            } else if c as i32 == self.quote {
                                self.state = if self.double_quote {
                                    State::QuoteInQuotedField
                                } else {
                                    State::InField
                                };
                                i += 1;
                            } else {
                                // a line break inside quotes: data
                                add!(j, j + 1);
                                self.count_nl(input, j);
                                i += 1;
                            }
                        }
                    }
                }
                State::EscapedChar => {
                    add!(i, i + 1);
                    if self.is_nl(c) {
                        self.count_nl(input, i);
                    }
                    self.state = if c == b'\r' || c == b'\n' || self.is_nl(c) {
                        State::AfterEscapedCrnl
                    } else {
                        State::InField
                    };
                    i += 1;
                }
                State::EscapeInQuotedField => {
                    add!(i, i + 1);
                    if self.is_nl(c) {
                        self.count_nl(input, i);
                    }
                    self.state = State::InQuotedField;
                    i += 1;
                }
                State::QuoteInQuotedField => {
                    if c as i32 == self.quote {
                        add!(i, i + 1);
                        self.state = State::InQuotedField;
                        i += 1;
                    } else if c == self.delim {
                        self.save(input, out);
                        self.state = State::StartField;
                        i += 1;
                    } else if self.is_nl(c) {
                        end_line_here!();
                    } else if !self.strict {
                        add!(i, i + 1);
                        self.state = State::InField;
                        i += 1;
                    } else {
                        let q = self.quote as u8;
                        give!(Scan::Error(
                            ErrorKind::QuoteExpected { delimiter: self.delim, quote: q },
                            i
                        ));
                    }
                }
                State::EatCrnl => {
                    if c == b'\r' || c == b'\n' {
                        i += 1;
                    } else {
                        give!(Scan::Error(ErrorKind::NewlineInUnquotedField, i));
                    }
                }
            }
        }
        give!(Scan::NeedInput)
    }

    /// Delivers Python's end-of-line event in line-fed mode. `Row` means a
    /// record is complete; `NeedInput` that it continues on the next line.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scan, Scanner};
    /// let mut s = Scanner::line_fed(&Default::default());
    /// let mut f = Fields::default();
    /// let mut pos = 0;
    /// s.scan(b"\"a", &mut pos, &mut f);
    /// assert!(matches!(s.end_line(&mut f), Scan::NeedInput));
    /// let mut pos = 0;
    /// s.scan(b"b\"", &mut pos, &mut f);
    /// assert!(matches!(s.end_line(&mut f), Scan::Row));
    /// assert_eq!(f.get(b"", 0), b"ab");
    /// assert_eq!(s.lines(), 2);
    /// ```
    pub fn end_line(&mut self, out: &mut Fields) -> Scan {
        self.begin_record(out);
        self.lines += 1;
        self.eol(&[], out)
    }

    /// The EOL transition (`input` is only used for un-owned fields).
    fn eol(&mut self, input: &[u8], out: &mut Fields) -> Scan {
        let at = input.len();
        match self.state {
            State::StartRecord => {
                self.row_ready = true;
                if self.skip_empty {
                    self.row_ready = false;
                    return Scan::NeedInput;
                }
                Scan::Row
            }
            State::StartField | State::InField | State::QuoteInQuotedField => {
                self.save(input, out);
                self.state = State::StartRecord;
                self.row_ready = true;
                Scan::Row
            }
            State::EatCrnl => {
                self.state = State::StartRecord;
                self.row_ready = true;
                if out.spans.is_empty() && self.skip_empty {
                    self.row_ready = false;
                    return Scan::NeedInput;
                }
                Scan::Row
            }
            State::EscapedChar => {
                if self.add_byte(input, b'\n', out).is_err() {
                    return self.limit_error(input, at);
                }
                self.state = State::InField;
                Scan::NeedInput
            }
            State::EscapeInQuotedField => {
                if self.add_byte(input, b'\n', out).is_err() {
                    return self.limit_error(input, at);
                }
                self.state = State::InQuotedField;
                Scan::NeedInput
            }
            State::AfterEscapedCrnl | State::InQuotedField => Scan::NeedInput,
            State::Comment => {
                self.state = State::StartRecord;
                Scan::NeedInput
            }
        }
    }

    /// Signals end of input. `input` is the current record's bytes (the
    /// same slice as the last `scan` call, or empty between records).
    /// Returns a last `Row`, `End`, or an error in strict mode.
    ///
    /// ```
    /// use fastcsv::scan::{Fields, Scan, Scanner};
    /// let d = fastcsv::Dialect::builder().strict(true).build().unwrap();
    /// let mut s = Scanner::new(&d);
    /// let (mut f, mut pos) = (Fields::default(), 0);
    /// s.scan(b"\"abc", &mut pos, &mut f);
    /// assert!(matches!(s.finish(b"\"abc", &mut f), Scan::Error(..)));
    /// ```
    pub fn finish(&mut self, input: &[u8], out: &mut Fields) -> Scan {
        self.begin_record(out);
        self.skip_lf = false;
        if self.state == State::StartRecord {
            return Scan::End;
        }
        if !self.line_fed {
            // An unterminated last line still gets its EOL, as in Python.
            let terminated = input.last().is_some_and(|&c| {
                if self.any_term {
                    c == b'\r' || c == b'\n'
                } else {
                    c == self.term
                }
            });
            if !terminated {
                self.lines += 1;
                match self.eol(input, out) {
                    Scan::NeedInput => {}
                    other => return other,
                }
            }
            if self.state == State::StartRecord {
                return Scan::End;
            }
        }
        if self.flen(out) != 0 || self.state == State::InQuotedField {
            if self.strict {
                return Scan::Error(ErrorKind::UnexpectedEof, input.len());
            }
            self.save(input, out);
            self.state = State::StartRecord;
            self.row_ready = true;
            return Scan::Row;
        }
        self.state = State::StartRecord;
        Scan::End
    }
}

#[cfg(test)]
mod tests;
