//! Splitting one input into byte ranges that separate processes or
//! machines parse on their own, with exactly the records, line numbers and
//! record numbers of one sequential read.
//!
//! Cutting a CSV file at arbitrary byte offsets is easy; knowing where the
//! first record after a cut begins is not: a line end inside a quoted field
//! is data, and whether a byte is inside quotes depends on everything
//! before it. Guessing from nearby bytes (as most distributed readers do,
//! splitting at the next newline) silently tears records apart. Here, each
//! range is summarised independently by a small automaton (the states of
//! Python's `csv` reader, without building fields: its transitions are
//! the crate's one grammar, which the scanners are tested against), once
//! for *every* state the range could begin in:
//!
//! 1. [`Splitter::summarize`] (anywhere, in parallel): for each possible
//!    entry state, the state at the range's end, the records that end in
//!    it, and where its first record starts. The simulations merge as soon
//!    as they agree (usually at the first line end outside quotes), so the
//!    cost is one or two passes over the range. A [`Summary`] is a few
//!    hundred bytes ([`Summary::to_bytes`]) and can be shipped.
//! 2. [`Splitter::resolve`] (one place, instantly): chains the summaries
//!    from the start of the input, where the state is known, and gives each
//!    range a [`Part`]: the exact offset of its first record, the offset
//!    where the next part's first record begins, and the lines and records
//!    before it.
//! 3. [`ReaderBuilder::from_path_part`](crate::ReaderBuilder::from_path_part)
//!    (anywhere): reads exactly the records of one part, with the positions
//!    of a whole-file read.
//!
//! Within one process, most cuts need no summary: simulated from a few
//! kilobytes before a cut, the states usually agree by the cut in quoted
//! text, and then the record starts after it are known whatever came
//! before ([`Splitter::sync_point`] from an offset;
//! [`Splitter::split_path`] then counts each part's lines and records with
//! a reader of the part; [`crate::arrow::ParColumns`],
//! [`Reader::par_batches`](crate::Reader::par_batches) and
//! [`Reader::par_count`](crate::Reader::par_count) leave that count to
//! their workers).
//!
//! Errors the automaton models: the syntax errors a strict dialect raises
//! (after which, as in Python, the rest of the line is skipped). A field over
//! the field size limit is not modelled: the part that holds it fails with
//! that error, as a sequential read does, but the parts after it start
//! where a read that did not stop there would.
//!
//! ```
//! use fastcsv::split::Splitter;
//! use fastcsv::{Dialect, Reader};
//!
//! let d = Dialect::builder().headers(false).build().unwrap();
//! let input = b"a,\"b\nc\"\nd,e\n\"f\n\",g\n";
//! let sp = Splitter::new(&d);
//! // Three ranges cut anywhere, even inside quotes; summarised separately.
//! let cuts = [0, 4, 11, input.len()];
//! let sums: Vec<_> = cuts
//!     .windows(2)
//!     .map(|w| sp.summarize(input, w[0]..w[1]).unwrap())
//!     .collect();
//! let parts = sp.resolve(&sums).unwrap();
//! // Each part starts at a record start: 0, then 8 ("d,e"), then 12.
//! let starts: Vec<u64> = parts.iter().map(|p| p.start).collect();
//! assert_eq!(starts, [0, 8, 12]);
//! let mut rows = Vec::new();
//! for p in &parts {
//!     let bytes = &input[p.start as usize..p.end as usize];
//!     let mut rdr = Reader::builder().dialect(d.clone()).from_slice(bytes);
//!     while let Some(row) = rdr.read_row().unwrap() {
//!         rows.push(row.iter().map(|f| f.to_vec()).collect::<Vec<_>>());
//!     }
//! }
//! assert_eq!(rows[0][1], b"b\nc");
//! assert_eq!(rows.len(), 3);
//! assert_eq!(parts[2].lines, 3); // lines before the third part
//! ```

use std::ops::Range;
use std::path::Path;

use crate::dialect::{Dialect, Terminator};
use crate::error::{Error, ErrorKind, Result};
pub use crate::part::Part;
use crate::pool;
use crate::reader::{Reader, ReaderBuilder};
use crate::scan::grammar::{self, State};
use crate::source::{self, Mapped};

/// The automaton's states: the grammar's (`scan::grammar::State`, with
/// its numbers), plus two that remember what Python's line-at-a-time
/// reading knows at a line end (an empty line; a line being skipped after
/// an error).
const START_RECORD: u8 = State::StartRecord as u8;
const START_FIELD: u8 = State::StartField as u8;
const IN_FIELD: u8 = State::InField as u8;
const IN_QUOTED_FIELD: u8 = State::InQuotedField as u8;
const EAT_CRNL: u8 = State::EatCrnl as u8;
/// The line was empty so far (a terminator at a record start).
const EAT_CRNL_EMPTY: u8 = 8;
/// After a syntax error: the rest of the line is skipped.
const SKIP: u8 = 11;

/// How many states a range can begin in.
pub const STATES: usize = 12;

/// Flag on a transition: a record ends here (an error also ends one: the
/// reader counts the failed record).
const RECORD: u8 = 0x10;
const STATE: u8 = 0x0f;
/// A transition's records: `n >> RECORDS` (an error, then a line end).
const RECORDS: u32 = 4;

const BOM: &[u8] = b"\xEF\xBB\xBF";

mod cuts;

/// The automaton of one dialect. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct Splitter {
    class: [u8; 256],
    classes: usize,
    /// `next[state * classes + class]`: the next state, `| RECORD` when a
    /// record ends (a syntax error).
    next: Vec<u8>,
    /// `after_other[state * classes + class]`: a run of other bytes, then
    /// a byte of `class` (records added).
    after_other: Vec<u8>,
    /// `moves[class]`, `moves_after_other[class]`: the states (bits) that
    /// such a byte (after other bytes) changes at all; `eol_moves`: those a
    /// line end changes.
    moves: Vec<u16>,
    moves_after_other: Vec<u16>,
    eol_moves: u16,
    /// What a line end does in each state (`| RECORD` when a record ends).
    eol: [u8; STATES],
    /// Threads for [`Splitter::split_path`] and [`Splitter::split_slice`]
    /// (default: the CPUs available; see [`Splitter::threads`]).
    threads: usize,
    /// The bytes that can do anything but what every other byte does
    /// (padded with repeats), found 16 at a time.
    needles: [u8; 8],
    /// What a run of other bytes does in each state (one such byte does
    /// all of it: a second changes nothing); `| RECORD` for an error.
    other: [u8; STATES],
    /// Whether `needles` and `other` hold (always, for dialects the
    /// builder accepts); if not, every byte is looked at.
    skips: bool,
    /// The bytes that can start or end quoting, escape, a comment or an
    /// initial space: a stretch without them is taken whole by one
    /// unquoted simulation (see `Splitter::plain_stretch`).
    hard: Hard,
    delimiter: u8,
    skip_empty: bool,
    term: Terminator,
    bom: bool,
    /// The states reachable from a record start through bytes other than
    /// quote, escape and comment (`quiet`): bits.
    quiet_reach: u16,
    /// The quote, escape and comment bytes (padded with repeats).
    quiet: Option<[u8; 3]>,
    fingerprint: u64,
    dialect: Dialect,
}

/// What a range does, for each state it could begin in; made by
/// [`Splitter::summarize`], chained by [`Splitter::resolve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    start: u64,
    end: u64,
    /// Line ends in the range.
    lines: u64,
    /// Per entry state: the state at the end.
    exit: [u8; STATES],
    /// Per entry state: records that end in the range.
    records: [u64; STATES],
    /// Per entry state: the first record start in the range, if any.
    first: [Option<First>; STATES],
    fingerprint: u64,
}

/// A record start: its offset, and the lines and records between the
/// range's start and it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct First {
    at: u64,
    lines: u64,
    records: u64,
}

impl Splitter {
    /// The automaton for `d`'s structure: delimiter, quote, escape, doubled
    /// quotes, initial spaces, strict, comment, terminator, empty lines and
    /// byte-order mark. (Filters, trimming and widths change fields, not
    /// where records start.)
    ///
    /// ```
    /// let sp = fastcsv::split::Splitter::new(&fastcsv::Dialect::default());
    /// let s = sp.summarize(b"a,b\n", 0..4).unwrap();
    /// assert_eq!(s.lines(), 1);
    /// ```
    pub fn new(d: &Dialect) -> Splitter {
        // One column of transitions per byte value; bytes with equal
        // columns share a class.
        let mut columns: Vec<[u8; STATES]> = Vec::new();
        let mut class = [0u8; 256];
        for c in 0..=255u8 {
            let mut col = [0u8; STATES];
            for (s, slot) in col.iter_mut().enumerate() {
                *slot = step(d, s as u8, c);
            }
            let k = match columns.iter().position(|x| *x == col) {
                Some(k) => k,
                None => {
                    columns.push(col);
                    columns.len() - 1
                }
            };
            class[c as usize] = k as u8;
        }
        let classes = columns.len();
        let mut next = vec![0u8; STATES * classes];
        for (k, col) in columns.iter().enumerate() {
            for s in 0..STATES {
                next[s * classes + k] = col[s];
            }
        }
        let mut eol = [0u8; STATES];
        for (s, slot) in eol.iter_mut().enumerate() {
            *slot = line_end(d, s as u8);
        }
        // The structural bytes; every other byte has one class, `o`.
        let mut special = vec![b'\r', b'\n', d.delimiter];
        special.extend([d.quote, d.escape, d.comment].into_iter().flatten());
        if let Terminator::Byte(t) = d.terminator {
            special.push(t);
        }
        if d.skip_initial_space {
            special.push(b' ');
        }
        let o = (0..=255u8).find(|c| !special.contains(c)).map_or(0, |c| class[c as usize]);
        let mut other = [0u8; STATES];
        for (s, slot) in other.iter_mut().enumerate() {
            *slot = next[s * classes + o as usize];
        }
        let skips = special.len() <= 8
            && (0..=255u8).all(|c| special.contains(&c) || class[c as usize] == o)
            && other
                .iter()
                .all(|&n| next[(n & STATE) as usize * classes + o as usize] == n & STATE);
        let mut after_other = vec![0u8; STATES * classes];
        let mut moves = vec![0u16; classes];
        let mut moves_after_other = vec![0u16; classes];
        for st in 0..STATES {
            for k in 0..classes {
                let o = other[st];
                let n = next[(o & STATE) as usize * classes + k];
                let both = (((o >> RECORDS) + (n >> RECORDS)) << RECORDS) | (n & STATE);
                after_other[st * classes + k] = both;
                if both != st as u8 {
                    moves_after_other[k] |= 1 << st;
                }
                if next[st * classes + k] != st as u8 {
                    moves[k] |= 1 << st;
                }
            }
        }
        let eol_moves = (0..STATES).filter(|&st| eol[st] != st as u8).fold(0, |m, st| m | 1 << st);
        let mut hard_bytes: Vec<u8> =
            [d.quote, d.escape, d.comment].into_iter().flatten().collect();
        if d.skip_initial_space {
            hard_bytes.push(b' ');
        }
        let hard = match hard_bytes[..] {
            [] => Hard::None,
            [a] => Hard::One(a),
            [a, b] => Hard::Two(a, b),
            [a, b, c] => Hard::Three(a, b, c),
            _ => Hard::Many,
        };
        let mut needles = [special[0]; 8];
        needles[..special.len().min(8)].copy_from_slice(&special[..special.len().min(8)]);
        // FNV-1a over the tables: summaries of different dialects do not
        // chain.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let term = match d.terminator {
            Terminator::Any => [0, 0],
            Terminator::Byte(t) => [1, t],
        };
        for &b in class.iter().chain(&next).chain(&eol).chain(&term).chain(&[d.strip_bom as u8]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let loud: Vec<u8> = [d.quote, d.escape, d.comment].into_iter().flatten().collect();
        let quiet = loud.first().map(|&a| {
            let b = *loud.get(1).unwrap_or(&a);
            [a, b, *loud.get(2).unwrap_or(&b)]
        });
        let mut quiet_reach: u16 = 1 << START_RECORD;
        loop {
            let mut grown = quiet_reach;
            for st in (0..STATES as u8).filter(|&st| quiet_reach & (1 << st) != 0) {
                grown |= 1 << (line_end(d, st) & STATE);
                for c in (0..=255u8).filter(|c| !loud.contains(c)) {
                    grown |= 1 << (step(d, st, c) & STATE);
                }
            }
            if grown == quiet_reach {
                break;
            }
            quiet_reach = grown;
        }
        Splitter {
            class,
            classes,
            next,
            after_other,
            moves,
            moves_after_other,
            eol_moves,
            eol,
            needles,
            other,
            skips,
            hard,
            delimiter: d.delimiter,
            skip_empty: d.skip_empty_lines,
            term: d.terminator,
            bom: d.strip_bom,
            quiet_reach,
            quiet,
            fingerprint: h,
            dialect: d.clone(),
            threads: pool::cpus(),
        }
    }

    /// Caps the threads [`Splitter::split_path`] and
    /// [`Splitter::split_slice`] use (at least 1; default: the CPUs
    /// available). The parts are the same whatever the count.
    ///
    /// ```
    /// use fastcsv::{split::Splitter, Dialect};
    /// let input = b"a\n\"1\n2\"\n3\n".repeat(100);
    /// let one = Splitter::new(&Dialect::default()).threads(1).split_slice(&input, 64).unwrap();
    /// let many = Splitter::new(&Dialect::default()).threads(4).split_slice(&input, 64).unwrap();
    /// assert_eq!(one, many);
    /// ```
    #[must_use]
    pub fn threads(mut self, n: usize) -> Splitter {
        self.threads = n.max(1);
        self
    }

    /// Summarises `input[range]` for every state the range could begin in.
    /// `input` is the whole input: the byte after the range is looked at
    /// (a CR's LF), and the first three for a byte-order mark.
    ///
    /// ```
    /// use fastcsv::split::Splitter;
    /// let sp = Splitter::new(&fastcsv::Dialect::default());
    /// let input = b"x,\"1\n2\"\ny,3\n";
    /// let s = sp.summarize(input, 4..input.len()).unwrap();
    /// assert_eq!(s.lines(), 3);
    /// assert_eq!(s.range(), 4..12);
    /// ```
    pub fn summarize(&self, input: &[u8], range: Range<usize>) -> Result<Summary> {
        if range.start > range.end || range.end > input.len() {
            return Err(Error::config(format!(
                "range {}..{} is not within the input's {} bytes",
                range.start,
                range.end,
                input.len()
            )));
        }
        let bom = self.bom && input.starts_with(BOM);
        let from = if bom { range.start.max(BOM.len()).min(range.end) } else { range.start };
        // Where the first record is for a range that begins at a record
        // start: the input's start holds the byte-order mark, which the
        // reader of the first part strips; a range that begins inside the
        // mark has it at the mark's end, or none.
        let start_at = if range.start == 0 {
            Some(0)
        } else if bom && range.start < BOM.len() {
            (range.end > BOM.len()).then_some(BOM.len() as u64)
        } else {
            Some(range.start as u64)
        };

        let mut sims: Vec<Sim> = (0..STATES as u8).map(|s| Sim { state: s, records: 0 }).collect();
        let mut map: [usize; STATES] = std::array::from_fn(|e| e);
        let mut offset = [0u64; STATES];
        let mut first: [Option<First>; STATES] = [None; STATES];
        first[START_RECORD as usize] = start_at.map(|at| First { at, lines: 0, records: 0 });
        let mut waiting: u16 = ((1u32 << STATES) - 1) as u16;
        if start_at.is_some() {
            waiting &= !(1 << START_RECORD);
        }
        // Line ends are counted afterwards (they do not depend on the
        // state), except up to each first record start. Only structural
        // bytes are stepped one by one; a run of other bytes between two
        // of them is one step.
        let mut last = from;
        let mut at = from;
        let (mut next_try, mut backoff) = (0, 256);
        while at < range.end {
            let n = (range.end - at).min(64);
            // A stretch without quote bytes is taken at once, when the
            // entry states still looking for their first record start are
            // all inside quotes (which such a stretch does not change).
            // Where quotes are near, the next look is further on each time.
            if self.skips && at >= next_try {
                let ok = (0..STATES)
                    .all(|e| waiting & (1 << e) == 0 || sims[map[e]].state == IN_QUOTED_FIELD);
                if ok {
                    let to = self.plain_stretch(input, at, range.end, &mut last, &mut sims);
                    if to > at {
                        at = to;
                        backoff = 256;
                        continue;
                    }
                }
                next_try = at + backoff;
                backoff = (backoff * 2).min(1 << 16);
            }
            let mut mask = if self.skips {
                structural(&input[at..at + n], &self.needles)
            } else {
                u64::MAX >> (64 - n)
            };
            while mask != 0 {
                let i = at + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let c = input[i];
                let k = self.class[c as usize] as usize;
                // Only the simulations this byte (after other bytes)
                // changes are stepped: one inside quotes waits for a quote.
                let (table, moving) = if i > last {
                    (&self.after_other, self.moves_after_other[k])
                } else {
                    (&self.next, self.moves[k])
                };
                last = i + 1;
                for s in sims.iter_mut() {
                    if moving & (1 << s.state) != 0 {
                        let n = table[s.state as usize * self.classes + k];
                        s.records += u64::from(n >> RECORDS);
                        s.state = n & STATE;
                    }
                }
                let eol = match self.term {
                    Terminator::Any => {
                        c == b'\n' || (c == b'\r' && input.get(i + 1) != Some(&b'\n'))
                    }
                    Terminator::Byte(t) => c == t,
                };
                if !eol {
                    continue;
                }
                for s in sims.iter_mut() {
                    if self.eol_moves & (1 << s.state) != 0 {
                        let n = self.eol[s.state as usize];
                        s.records += u64::from(n >> RECORDS);
                        s.state = n & STATE;
                    }
                }
                if waiting != 0 {
                    let mut lines = None;
                    for e in 0..STATES {
                        if waiting & (1 << e) == 0 {
                            continue;
                        }
                        let s = &sims[map[e]];
                        if s.state == START_RECORD {
                            let lines =
                                *lines.get_or_insert_with(|| self.count_lines(input, from..i + 1));
                            let records = s.records.wrapping_add(offset[e]);
                            first[e] = Some(First { at: i as u64 + 1, lines, records });
                            waiting &= !(1 << e);
                        }
                    }
                }
                if sims.len() > 1 {
                    merge(&mut sims, &mut map, &mut offset);
                }
            }
            at += n;
        }
        if range.end > last {
            for s in sims.iter_mut() {
                let n = self.other[s.state as usize];
                s.records += u64::from(n >> RECORDS);
                s.state = n & STATE;
            }
        }
        let mut exit = [0u8; STATES];
        let mut records = [0u64; STATES];
        for e in 0..STATES {
            let s = &sims[map[e]];
            exit[e] = s.state;
            records[e] = s.records.wrapping_add(offset[e]);
        }
        Ok(Summary {
            start: range.start as u64,
            end: range.end as u64,
            lines: self.count_lines(input, from..range.end),
            exit,
            records,
            first,
            fingerprint: self.fingerprint,
        })
    }

    /// Takes `input[at..]` up to the next quote, escape, comment or
    /// skipped space byte (or `end`) at once, when one simulation is in an
    /// unquoted field state and the others are inside quotes (which such
    /// bytes do not change): that simulation ends a record at each line
    /// end (but empty lines, when skipped), and its state at the stretch's
    /// end follows from its last bytes. Returns where the stretch ends
    /// (`at` when nothing was done).
    #[inline(never)]
    fn plain_stretch(
        &self,
        input: &[u8],
        at: usize,
        end: usize,
        last: &mut usize,
        sims: &mut [Sim],
    ) -> usize {
        let plain = |s: u8| matches!(s, START_RECORD | START_FIELD | IN_FIELD);
        let mut u = None;
        for (i, s) in sims.iter().enumerate() {
            if plain(s.state) && u.is_none() {
                u = Some(i);
            } else if s.state != IN_QUOTED_FIELD {
                return at;
            }
        }
        let Some(u) = u else { return at };
        let rest = &input[at..end];
        let stop = at
            + match self.hard {
                Hard::None => rest.len(),
                Hard::One(a) => memchr::memchr(a, rest).unwrap_or(rest.len()),
                Hard::Two(a, b) => memchr::memchr2(a, b, rest).unwrap_or(rest.len()),
                Hard::Three(a, b, c) => memchr::memchr3(a, b, c, rest).unwrap_or(rest.len()),
                Hard::Many => return at,
            };
        if stop - at < 64 {
            // Too short to gain: left to the byte-by-byte path.
            return at;
        }
        // Other bytes before `at` (not yet stepped) end a field start.
        let start = if at > *last { IN_FIELD } else { sims[u].state };
        // Whether the line being read is empty so far, and whether its
        // terminator's CR waits for its LF past the stretch.
        let mut empty = start == START_RECORD;
        let mut pending = false;
        let mut pos = at;
        let mut records = 0u64;
        let mut line_end = |i: usize, c: u8| {
            if i > pos {
                empty = false;
            }
            pos = i + 1;
            let any = matches!(self.term, Terminator::Any);
            if any && c == b'\r' && input.get(i + 1) == Some(&b'\n') {
                // The LF ends the line (next, or past the stretch).
                pending = i + 1 == stop;
                return;
            }
            records += u64::from(!(self.skip_empty && empty));
            empty = true;
        };
        match self.term {
            Terminator::Any => {
                for i in memchr::memchr2_iter(b'\r', b'\n', &input[at..stop]) {
                    line_end(at + i, input[at + i]);
                }
            }
            Terminator::Byte(t) => {
                for i in memchr::memchr_iter(t, &input[at..stop]) {
                    line_end(at + i, t);
                }
            }
        }
        let state = if pending {
            if empty {
                EAT_CRNL_EMPTY
            } else {
                EAT_CRNL
            }
        } else if pos < stop {
            // A line goes on: in a field, or at one's start after a
            // delimiter.
            if input[stop - 1] == self.delimiter {
                START_FIELD
            } else {
                IN_FIELD
            }
        } else {
            START_RECORD
        };
        sims[u].records += records;
        sims[u].state = state;
        *last = stop;
        stop
    }

    /// Line ends in `input[range]` (a CR whose LF is past the range counts
    /// at the LF).
    fn count_lines(&self, input: &[u8], range: Range<usize>) -> u64 {
        let part = &input[range.clone()];
        match self.term {
            Terminator::Byte(t) => memchr::memchr_iter(t, part).count() as u64,
            Terminator::Any => {
                let mut n = memchr::memchr_iter(b'\n', part).count() as u64;
                for i in memchr::memchr_iter(b'\r', part) {
                    if input.get(range.start + i + 1) != Some(&b'\n') {
                        n += 1;
                    }
                }
                n
            }
        }
    }

    /// Maps the file at `path` and summarises `range` of it (see
    /// [`Splitter::summarize`]). Only the pages of the range (and the
    /// byte after it) are read.
    ///
    /// ```
    /// let p = std::env::temp_dir().join("fastcsv-doc-summarize-path.csv");
    /// std::fs::write(&p, "a,b\n1,2\n").unwrap();
    /// let sp = fastcsv::split::Splitter::new(&fastcsv::Dialect::default());
    /// let s = sp.summarize_path(&p, 2..8).unwrap();
    /// assert_eq!(s.lines(), 2);
    /// ```
    pub fn summarize_path(&self, path: impl AsRef<Path>, range: Range<u64>) -> Result<Summary> {
        let path = path.as_ref();
        let map = MappedFile::open(path)?;
        let r = to_usize(range.start)?..to_usize(range.end)?;
        map.check(self.summarize(map.bytes(), r).map_err(|e| e.with_path(path)))
    }

    /// Chains the summaries of consecutive ranges that cover an input from
    /// its start (in order, as [`Splitter::summarize`] made them with this
    /// dialect) into the input's parts, one per range.
    ///
    /// ```
    /// use fastcsv::split::Splitter;
    /// let sp = Splitter::new(&fastcsv::Dialect::default());
    /// let input = b"h\n\"a\nb\"\nc\n";
    /// let sums = [sp.summarize(input, 0..4).unwrap(), sp.summarize(input, 4..10).unwrap()];
    /// let parts = sp.resolve(&sums).unwrap();
    /// assert_eq!((parts[0].start, parts[0].end), (0, 8));
    /// assert_eq!((parts[1].start, parts[1].end, parts[1].lines, parts[1].records), (8, 10, 3, 2));
    /// ```
    pub fn resolve(&self, summaries: &[Summary]) -> Result<Vec<Part>> {
        let mut at = 0u64;
        for (k, s) in summaries.iter().enumerate() {
            if s.fingerprint != self.fingerprint {
                return Err(Error::config(format!(
                    "summary {k} was made with another dialect than this splitter's"
                )));
            }
            if s.start != at {
                return Err(Error::config(format!(
                    "summary {k} covers {}..{}, but the ranges before it end at {at}: \
                     summaries must cover the input from its start, in order",
                    s.start, s.end
                )));
            }
            at = s.end;
        }
        // Forward: the state at each range start is known, so is its first
        // record start.
        let mut firsts: Vec<Option<First>> = Vec::with_capacity(summaries.len());
        let (mut state, mut lines, mut records) = (START_RECORD, 0u64, 0u64);
        for s in summaries {
            let e = state as usize;
            firsts.push(s.first[e].map(|f| First {
                at: f.at,
                lines: lines + f.lines,
                records: records + f.records,
            }));
            lines += s.lines;
            records += s.records[e];
            state = s.exit[e];
        }
        // Backward: a range with no record start gives an empty part at
        // the next one's start.
        let mut next = First { at, lines, records };
        let mut parts = vec![
            Part { index: 0, start: 0, end: 0, lines: 0, records: 0, width: None };
            summaries.len()
        ];
        for k in (0..summaries.len()).rev() {
            let f = firsts[k].unwrap_or(next);
            parts[k] = Part {
                index: k,
                start: f.at,
                end: next.at,
                lines: f.lines,
                records: f.records,
                width: None,
            };
            next = f;
        }
        Ok(parts)
    }
}

impl Splitter {
    /// Splits `input` into ranges of `chunk` bytes (the last one shorter)
    /// and gives their parts, ready to read with
    /// [`ReaderBuilder::from_slice_part`] (see [`Splitter::settle`]): those
    /// [`Splitter::resolve`] gives from the ranges' summaries. Where the
    /// bytes before each cut decide the state there (as for
    /// [`Splitter::sync_point`]), the parts are found without the
    /// summaries, their lines and records counted by a reader of each
    /// (the block scanner); else the ranges are summarised. Either way on
    /// every CPU.
    ///
    /// ```
    /// use fastcsv::{split::Splitter, Dialect};
    /// let input = b"a,b\n1,\"2\n3\"\n4,5\n";
    /// let parts = Splitter::new(&Dialect::default()).split_slice(input, 8).unwrap();
    /// let bounds: Vec<_> = parts.iter().map(|p| (p.start, p.end)).collect();
    /// assert_eq!(bounds, [(0, 12), (12, 16)]);
    /// ```
    pub fn split_slice(&self, input: &[u8], chunk: usize) -> Result<Vec<Part>> {
        let parts = match self.counted_parts(input, chunk)? {
            Some(parts) => parts,
            None => {
                let ranges = even_ranges(input.len() as u64, chunk as u64);
                let sums = pool::map_on("split", self.threads, &ranges, |r| {
                    self.summarize(input, r.start as usize..r.end as usize)
                })?;
                self.resolve(&sums)?
            }
        };
        let rdr = ReaderBuilder::new().dialect(self.dialect.clone()).from_slice(input);
        self.settle(rdr, parts)
    }

    /// Splits the file at `path` into ranges of `chunk` bytes and gives
    /// their parts, ready to read with [`ReaderBuilder::from_path_part`]
    /// (see [`Splitter::settle`]), as [`Splitter::split_slice`] does. On
    /// several machines, run [`Splitter::summarize_path`] where the ranges
    /// are, and [`Splitter::resolve`] and [`Splitter::settle`] in one
    /// place.
    ///
    /// ```
    /// let p = std::env::temp_dir().join("fastcsv-doc-split-path.csv");
    /// std::fs::write(&p, "a\n1\n2\n3\n").unwrap();
    /// let sp = fastcsv::split::Splitter::new(&fastcsv::Dialect::default());
    /// let parts = sp.split_path(&p, 4).unwrap();
    /// assert_eq!(parts.len(), 2);
    /// assert_eq!((parts[1].start, parts[1].lines, parts[1].records), (4, 2, 2));
    /// ```
    pub fn split_path(&self, path: impl AsRef<Path>, chunk: u64) -> Result<Vec<Part>> {
        let path = path.as_ref();
        let map = MappedFile::open(path)?;
        let input = map.bytes();
        let counted = usize::try_from(chunk).ok().map(|c| self.counted_parts(input, c));
        let counted = map.check(counted.transpose().map_err(|e| e.with_path(path)))?;
        let parts = match counted.flatten() {
            Some(parts) => parts,
            None => {
                let ranges = even_ranges(input.len() as u64, chunk);
                let sums = pool::map_on("split", self.threads, &ranges, |r| {
                    self.summarize(input, r.start as usize..r.end as usize)
                });
                let sums = map.check(sums.map_err(|e| e.with_path(path)))?;
                self.resolve(&sums)?
            }
        };
        drop(map);
        let rdr = ReaderBuilder::new().dialect(self.dialect.clone()).from_path(path)?;
        self.settle(rdr, parts)
    }

    /// Finishes resolved parts with what only the input's head tells,
    /// read by `rdr` (a fresh reader of the whole input with this
    /// splitter's dialect): the header row, when the dialect has one,
    /// belongs to the first part (parts that would start before its end
    /// start there instead, empty if need be), and unless the dialect is
    /// flexible, every later part holds its records to the width of the
    /// input's first record, as one reader would.
    ///
    /// ```
    /// use fastcsv::{split::Splitter, Dialect, Reader};
    /// let input = b"\n\nname\nx\n";
    /// let sp = Splitter::new(&Dialect::default());
    /// let sums = [sp.summarize(input, 0..1).unwrap(), sp.summarize(input, 1..9).unwrap()];
    /// let parts = sp.settle(Reader::from_slice(input), sp.resolve(&sums).unwrap()).unwrap();
    /// // The header row ("name", after two empty lines) is the first part's.
    /// assert_eq!((parts[1].start, parts[1].lines, parts[1].width), (7, 3, Some(1)));
    /// ```
    pub fn settle(&self, mut rdr: Reader<'_>, mut parts: Vec<Part>) -> Result<Vec<Part>> {
        if self.dialect.headers {
            // Parts that start at or before the header record (empty lines
            // before it included) start where the record after it does,
            // or, when the header row fails, where the next part does.
            let (upto, after) = match rdr.headers() {
                Ok(_) => {
                    let h = rdr.byte_offset();
                    (h, Some((h, rdr.line(), rdr.records_read())))
                }
                Err(e) if !e.is_data() => return Err(e),
                // A header row that fails is still the first part's.
                Err(_) => (rdr.error_record_start().map_or(0, |(b, _)| b + 1), None),
            };
            let mut next = parts.last().map(|p| (p.end, rdr.line(), rdr.records_read()));
            for p in parts.iter_mut().skip(1).rev() {
                if p.start < upto {
                    (p.start, p.lines, p.records) =
                        after.or(next).expect("a later part or the end");
                }
                next = Some((p.start, p.lines, p.records));
            }
            for k in 1..parts.len() {
                parts[k - 1].end = parts[k].start;
            }
        }
        if self.dialect.flexible {
            return Ok(parts);
        }
        while rdr.expected.is_none() {
            match rdr.read_row() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) if e.is_data() => {}
                Err(e) => return Err(e),
            }
        }
        for p in parts.iter_mut().filter(|p| p.start > 0) {
            p.width = rdr.expected;
        }
        Ok(parts)
    }
}

/// `0..len` in ranges of `chunk` bytes (at least one range).
fn even_ranges(len: u64, chunk: u64) -> Vec<Range<u64>> {
    let chunk = chunk.max(1);
    let n = len.div_ceil(chunk).max(1);
    (0..n).map(|k| (k * chunk).min(len)..((k + 1) * chunk).min(len)).collect()
}

/// Bit `i` set where `block[i]` (at most 64 bytes) is one of `needles`.
fn structural(block: &[u8], needles: &[u8; 8]) -> u64 {
    let mut mask = 0u64;
    let mut words = block.chunks_exact(16);
    for (k, w) in (&mut words).enumerate() {
        mask |= u64::from(crate::scan::match16(w, needles)) << (16 * k);
    }
    let base = block.len() - words.remainder().len();
    for (j, c) in words.remainder().iter().enumerate() {
        if needles.contains(c) {
            mask |= 1 << (base + j);
        }
    }
    mask
}

/// The bytes that end a plain stretch (see `Splitter::plain_stretch`).
#[derive(Clone, Copy, Debug)]
enum Hard {
    None,
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
    /// More than three: no stretches.
    Many,
}

/// One simulation: the state reached from one or more entry states.
struct Sim {
    state: u8,
    records: u64,
}

/// Merges simulations that reached the same state: from here on they
/// agree. Each entry state keeps its own record count through `offset`.
#[cold]
fn merge(sims: &mut Vec<Sim>, map: &mut [usize; STATES], offset: &mut [u64; STATES]) {
    let mut a = 0;
    while a < sims.len() {
        let mut b = a + 1;
        while b < sims.len() {
            if sims[b].state == sims[a].state {
                let delta = sims[b].records.wrapping_sub(sims[a].records);
                for e in 0..STATES {
                    if map[e] == b {
                        map[e] = a;
                        offset[e] = offset[e].wrapping_add(delta);
                    } else if map[e] > b {
                        map[e] -= 1;
                    }
                }
                sims.remove(b);
            } else {
                b += 1;
            }
        }
        a += 1;
    }
}

/// The transition on byte `c` in state `s`: the grammar's
/// (`scan::grammar::next`), with a line end at a record start kept apart
/// (`EAT_CRNL_EMPTY`) and a syntax error ending a record and skipping the
/// rest of the line (`SKIP | RECORD`).
fn step(d: &Dialect, s: u8, c: u8) -> u8 {
    let Some(state) = State::from_u8(s) else {
        // EAT_CRNL_EMPTY is EAT_CRNL; SKIP waits for the line's end.
        return match s {
            EAT_CRNL_EMPTY if grammar::is_terminator(d, c) => s,
            EAT_CRNL_EMPTY => SKIP | RECORD,
            _ => s,
        };
    };
    match grammar::next(d, state, c) {
        Some(State::EatCrnl) if s == START_RECORD => EAT_CRNL_EMPTY,
        Some(n) => n as u8,
        None => SKIP | RECORD,
    }
}

/// What the end of a line does in state `s` (the grammar's
/// `scan::grammar::line_end`, and the reader's loop around it: an empty
/// line is a record unless empty lines are skipped).
fn line_end(d: &Dialect, s: u8) -> u8 {
    match State::from_u8(s) {
        Some(State::EatCrnl) => START_RECORD | RECORD,
        Some(state) => match grammar::line_end(state) {
            (n, true) => n as u8 | RECORD,
            (n, false) => n as u8,
        },
        None if s == EAT_CRNL_EMPTY && !d.skip_empty_lines => START_RECORD | RECORD,
        // EAT_CRNL_EMPTY, SKIP.
        None => START_RECORD,
    }
}

fn to_usize(n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::config(format!("offset {n} is too large here")))
}

/// A whole file mapped through [`source::map_path`] (with its `SIGBUS`
/// guard); empty files are not mapped.
struct MappedFile<'p> {
    map: Option<Mapped>,
    path: &'p Path,
}

impl<'p> MappedFile<'p> {
    fn open(path: &'p Path) -> Result<MappedFile<'p>> {
        Ok(MappedFile { map: source::map_path(path)?, path })
    }

    fn bytes(&self) -> &[u8] {
        self.map.as_ref().map_or(&[], |m| m.bytes())
    }

    /// `r`, unless the file shrank while it was mapped (its pages past the
    /// new end then read as zeros, and what was found from them is wrong).
    fn check<T>(&self, r: Result<T>) -> Result<T> {
        if self.map.as_ref().is_some_and(|m| m.changed(true)) {
            return Err(Error::new(ErrorKind::FileChanged).with_path(self.path));
        }
        r
    }
}

impl Summary {
    /// The byte range summarised.
    ///
    /// ```
    /// let sp = fastcsv::split::Splitter::new(&fastcsv::Dialect::default());
    /// assert_eq!(sp.summarize(b"abc", 1..3).unwrap().range(), 1..3);
    /// ```
    pub fn range(&self) -> Range<u64> {
        self.start..self.end
    }

    /// Line ends in the range (CR, LF and CRLF as one; a CRLF cut by the
    /// range's end counts in the range holding its LF).
    ///
    /// ```
    /// let sp = fastcsv::split::Splitter::new(&fastcsv::Dialect::default());
    /// assert_eq!(sp.summarize(b"a\r\nb\rc\n", 0..2).unwrap().lines(), 0);
    /// assert_eq!(sp.summarize(b"a\r\nb\rc\n", 0..7).unwrap().lines(), 3);
    /// ```
    pub fn lines(&self) -> u64 {
        self.lines
    }

    const MAGIC: &'static [u8; 8] = b"fcsvsum1";
    const LEN: usize = 8 + 8 * 4 + STATES * (1 + 8 + 1 + 24);

    /// The summary as bytes, to send to where the summaries are resolved.
    ///
    /// ```
    /// use fastcsv::split::{Splitter, Summary};
    /// let sp = Splitter::new(&fastcsv::Dialect::default());
    /// let s = sp.summarize(b"a,\"b\nc\"\n", 3..8).unwrap();
    /// assert_eq!(Summary::from_bytes(&s.to_bytes()).unwrap(), s);
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::LEN);
        out.extend_from_slice(Self::MAGIC);
        for n in [self.fingerprint, self.start, self.end, self.lines] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        for e in 0..STATES {
            out.push(self.exit[e]);
            out.extend_from_slice(&self.records[e].to_le_bytes());
            let f = self.first[e];
            out.push(f.is_some() as u8);
            let f = f.unwrap_or(First { at: 0, lines: 0, records: 0 });
            for n in [f.at, f.lines, f.records] {
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        out
    }

    /// Reads what [`Summary::to_bytes`] wrote; anything else is an error.
    ///
    /// ```
    /// assert!(fastcsv::split::Summary::from_bytes(b"nonsense").is_err());
    /// ```
    pub fn from_bytes(b: &[u8]) -> Result<Summary> {
        let bad = || Error::config("not a fastcsv range summary (or one from another version)");
        if b.len() != Self::LEN || !b.starts_with(Self::MAGIC) {
            return Err(bad());
        }
        let mut at = Self::MAGIC.len();
        let mut u64_at = |b: &[u8]| {
            let n = u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
            at += 8;
            n
        };
        let (fingerprint, start, end, lines) = (u64_at(b), u64_at(b), u64_at(b), u64_at(b));
        let mut s = Summary {
            start,
            end,
            lines,
            exit: [0; STATES],
            records: [0; STATES],
            first: [None; STATES],
            fingerprint,
        };
        for e in 0..STATES {
            let exit = b[at];
            at += 1;
            let records = u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
            at += 8;
            let has = b[at];
            at += 1;
            let mut f = [0u64; 3];
            for n in f.iter_mut() {
                *n = u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
                at += 8;
            }
            if exit as usize >= STATES || has > 1 || start > end {
                return Err(bad());
            }
            let first = (has == 1).then_some(First { at: f[0], lines: f[1], records: f[2] });
            if first.is_some_and(|f| f.at < start || f.at > end) {
                return Err(bad());
            }
            s.exit[e] = exit;
            s.records[e] = records;
            s.first[e] = first;
        }
        Ok(s)
    }
}
