//! Per-column statistics for `fastcsv stats`.
//!
//! Distinct values (for `--table`, `--csv` and `--json`) are counted as
//! `distinct` says: exactly up to a limit, then by a HyperLogLog sketch.
//! Numbers are detected by `number`'s fast path, then `str::parse`.

use std::io::{self, Write};

use super::output::json_string;

mod distinct;
mod exact;
mod moments;
mod number;
pub use distinct::hash64;
#[cfg(test)]
use distinct::EXACT_LIMIT;
use distinct::{Distinct, HyperLogLog};
use moments::Numbers;
use number::Simple;

/// What one column has seen.
#[derive(Default)]
pub struct Column {
    non_empty: u64,
    empty: u64,
    distinct: Distinct,
    min_len: Option<u64>,
    max_len: u64,
    all_int: bool,
    all_float: bool,
    /// The smallest and largest non-empty values, byte by byte (the order
    /// of code points, for UTF-8), and their [`prefix`] words.
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
    min_key: u64,
    max_key: u64,
    /// While every value is a number: their count, smallest, largest,
    /// and exact sums of the values and of their squares.
    num: Numbers,
    /// The shortest and longest non-empty value in bytes (`u64::MAX` and
    /// 0 before the first).
    min_bytes: u64,
    max_bytes: u64,
    /// A non-empty value is not UTF-8 (xsv's type `Unknown`).
    non_utf8: bool,
    /// With `--everything` (or `--mode`, `--median`, `--cardinality`):
    /// every value kept, for the median, mode and cardinality.
    values: Option<Box<Values>>,
    /// Only the default (xsv) output is made: the distinct values and the
    /// lengths in characters, which only [`Stats::summary`] reports, are
    /// not counted.
    xsv_only: bool,
}

/// What each column keeps beyond the statistics every output needs.
#[derive(Clone, Copy, Default)]
struct Track {
    /// Every value (see [`Values`]).
    values: bool,
    /// See [`Column::xsv_only`].
    xsv_only: bool,
}

/// The values a column keeps for the statistics that need them all: every
/// non-empty value, its bytes one after the other (`bytes`, each ending
/// at its entry of `ends`), and while every value is a number, the
/// numbers. Appending is cheap, and so is merging chunks (the values are
/// sorted and counted once, when the summary is made), as xsv keeps every
/// value.
#[derive(Default)]
struct Values {
    bytes: Vec<u8>,
    ends: Vec<u64>,
    numbers: Vec<f64>,
}

impl Values {
    #[inline]
    fn push(&mut self, f: &[u8]) {
        self.bytes.extend_from_slice(f);
        self.ends.push(self.bytes.len() as u64);
    }

    fn merge(&mut self, o: Values) {
        let base = self.bytes.len() as u64;
        self.bytes.extend_from_slice(&o.bytes);
        self.ends.extend(o.ends.iter().map(|e| e + base));
        self.numbers.extend_from_slice(&o.numbers);
    }

    /// Each distinct value with its count, in the order of bytes.
    fn counted(&self) -> Vec<(&[u8], u64)> {
        let mut start = 0;
        let mut all: Vec<&[u8]> = self
            .ends
            .iter()
            .map(|&e| {
                let v = &self.bytes[start..e as usize];
                start = e as usize;
                v
            })
            .collect();
        all.sort_unstable();
        let mut out: Vec<(&[u8], u64)> = Vec::new();
        for v in all {
            match out.last_mut() {
                Some((last, n)) if *last == v => *n += 1,
                _ => out.push((v, 1)),
            }
        }
        out
    }
}

/// The first 8 bytes of `f` as a big-endian word, zeros past its end: a
/// smaller word means a smaller string of bytes, and a larger word a larger
/// one (at the first byte where the words differ, the strings differ, or
/// the one with the zero has ended); equal words decide nothing.
#[inline]
fn prefix(f: &[u8]) -> u64 {
    if let Some(w) = f.first_chunk::<8>() {
        return u64::from_be_bytes(*w);
    }
    if let Some(w) = f.first_chunk::<4>() {
        // 4 to 7 bytes: the first four, then the last four shifted so that
        // only the bytes past the fourth stay (no call to copy a few
        // bytes).
        let n = f.len();
        let last = u32::from_be_bytes(f[n - 4..].try_into().expect("4 bytes"));
        let tail = (u64::from(last) << (8 * (8 - n))) & 0xFFFF_FFFF;
        return u64::from(u32::from_be_bytes(*w)) << 32 | tail;
    }
    f.iter().enumerate().fold(0, |w, (i, &b)| w | u64::from(b) << (56 - 8 * i))
}

/// Whether `f`, whose [`prefix`] word is `k`, is ASCII: its words OR'd
/// together (the last one overlapping the one before) have no high bit.
#[inline]
fn ascii(f: &[u8], k: u64) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if f.len() <= 8 {
        return k & HIGH == 0;
    }
    let mut acc = k;
    let mut words = f[8..].chunks_exact(8);
    for w in &mut words {
        acc |= u64::from_le_bytes(w.try_into().expect("8 bytes"));
    }
    let last = f.last_chunk::<8>().expect("more than 8 bytes");
    acc |= u64::from_le_bytes(*last);
    acc & HIGH == 0
}

/// The order of `f` and `m`, whose [`prefix`] words are equal: that of
/// their bytes past the eighth when both have more, else that of their
/// lengths (the shorter one's word ends in the zeros the other has).
#[inline]
fn same_prefix_cmp(f: &[u8], m: &[u8]) -> std::cmp::Ordering {
    match (f.get(8..), m.get(8..)) {
        (Some(a), Some(b)) => a.cmp(b),
        _ => f.len().cmp(&m.len()),
    }
}

/// Number of UTF-8 characters (bytes that do not continue a character).
fn char_len(f: &[u8]) -> u64 {
    f.iter().filter(|&&b| (b as i8) >= -0x40).count() as u64
}

impl Column {
    fn new() -> Column {
        Column { all_int: true, all_float: true, min_bytes: u64::MAX, ..Column::default() }
    }

    /// A column that has seen `n` empty values only, keeping what `track`
    /// says.
    fn empty(n: u64, track: Track) -> Column {
        let values = track.values.then(Box::default);
        Column { empty: n, values, xsv_only: track.xsv_only, ..Column::new() }
    }

    /// Adds one value.
    #[inline]
    pub fn add(&mut self, f: &[u8]) {
        if f.is_empty() {
            self.empty += 1;
            return;
        }
        self.non_empty += 1;
        let bytes = f.len() as u64;
        self.min_bytes = self.min_bytes.min(bytes);
        self.max_bytes = self.max_bytes.max(bytes);
        if !self.xsv_only {
            self.distinct.insert(hash64(f));
            let len = char_len(f);
            self.min_len = Some(self.min_len.map_or(len, |m| m.min(len)));
            self.max_len = self.max_len.max(len);
        }
        if let Some(v) = &mut self.values {
            v.push(f);
        }
        let k = prefix(f);
        self.extremes(f, k);
        if self.all_float {
            self.number(f);
        } else if !self.non_utf8 && !ascii(f, k) && simdutf8::basic::from_utf8(f).is_err() {
            self.non_utf8 = true;
        }
    }

    /// Keeps `f` if it is the smallest or largest value so far. Most
    /// values differ from the extremes in their first 8 bytes: the rest
    /// is compared only when those are the same.
    #[inline]
    fn extremes(&mut self, f: &[u8], k: u64) {
        match &mut self.min {
            Some(m) if k < self.min_key || (k == self.min_key && same_prefix_cmp(f, m).is_lt()) => {
                m.clear();
                m.extend_from_slice(f);
                self.min_key = k;
            }
            Some(_) => {}
            None => (self.min, self.min_key) = (Some(f.to_vec()), k),
        }
        match &mut self.max {
            Some(m) if k > self.max_key || (k == self.max_key && same_prefix_cmp(f, m).is_gt()) => {
                m.clear();
                m.extend_from_slice(f);
                self.max_key = k;
            }
            Some(_) => {}
            None => (self.max, self.max_key) = (Some(f.to_vec()), k),
        }
    }

    /// Adds the non-empty value `f` of a column whose values all were
    /// numbers so far: the plain spellings read here, the others by the
    /// standard library's parsers (the same numbers either way).
    #[inline]
    fn number(&mut self, f: &[u8]) {
        match number::simple(f) {
            Simple::Int { neg, mag } if self.all_int => {
                // Below 10^18: no overflow either way.
                let i = if neg { -(mag as i64) } else { mag as i64 };
                self.num.add_int(i);
                if let Some(v) = &mut self.values {
                    v.numbers.push(i as f64);
                }
            }
            // `as` rounds to the nearest, as parsing does; `-0` stays
            // negative, as a float.
            Simple::Int { neg, mag } => self.float(if neg { -(mag as f64) } else { mag as f64 }),
            Simple::Float(x) => {
                self.all_int = false;
                self.float(x);
            }
            Simple::Other => self.number_slow(f),
        }
    }

    #[inline]
    fn float(&mut self, x: f64) {
        self.num.add(x);
        if let Some(v) = &mut self.values {
            v.numbers.push(x);
        }
    }

    /// [`Column::number`] for the spellings of numbers that are not plain
    /// (and for values that are not numbers).
    #[inline(never)]
    fn number_slow(&mut self, f: &[u8]) {
        let s = match simdutf8::basic::from_utf8(f) {
            Ok(s) => s,
            Err(_) => {
                self.non_utf8 = true;
                self.not_numbers();
                return;
            }
        };
        if self.all_int {
            match s.parse::<i64>() {
                Ok(i) => {
                    self.num.add_int(i);
                    if let Some(v) = &mut self.values {
                        v.numbers.push(i as f64);
                    }
                    return;
                }
                Err(_) => self.all_int = false,
            }
        }
        match s.parse::<f64>() {
            Ok(x) => self.float(x),
            Err(_) => self.not_numbers(),
        }
    }

    /// A value that is not a number was seen: the numbers kept for the
    /// median are no longer needed.
    fn not_numbers(&mut self) {
        self.all_int = false;
        self.all_float = false;
        if let Some(v) = &mut self.values {
            v.numbers = Vec::new();
        }
    }
}

impl Column {
    /// Adds what `o` has seen (the same result as adding its values).
    fn merge(&mut self, o: Column) {
        self.non_empty += o.non_empty;
        self.empty += o.empty;
        self.distinct.merge(o.distinct);
        self.min_len = match (self.min_len, o.min_len) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max_len = self.max_len.max(o.max_len);
        self.all_int &= o.all_int;
        self.all_float &= o.all_float;
        self.min = match (self.min.take(), o.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = match (self.max.take(), o.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.min_key = self.min.as_deref().map_or(0, prefix);
        self.max_key = self.max.as_deref().map_or(0, prefix);
        self.num.merge(o.num);
        self.min_bytes = self.min_bytes.min(o.min_bytes);
        self.max_bytes = self.max_bytes.max(o.max_bytes);
        self.non_utf8 |= o.non_utf8;
        match (&mut self.values, o.values) {
            (Some(a), Some(b)) => a.merge(*b),
            (a @ None, b) => *a = b,
            (Some(_), None) => {}
        }
        if !self.all_float {
            if let Some(v) = &mut self.values {
                v.numbers = Vec::new();
            }
        }
    }
}

/// One column's state: only its count of empty values until it has a
/// value (16 bytes; a column with values takes a few hundred, see
/// `Column`), so that records of many empty fields take little memory.
enum Slot {
    Empty(u64),
    Full(Box<Column>),
}

impl Default for Slot {
    fn default() -> Slot {
        Slot::Empty(0)
    }
}

impl Slot {
    #[inline]
    fn add(&mut self, f: &[u8], track: Track) {
        match self {
            Slot::Full(c) => c.add(f),
            Slot::Empty(n) if f.is_empty() => *n += 1,
            Slot::Empty(n) => {
                let mut c = Column::empty(*n, track);
                c.add(f);
                *self = Slot::Full(Box::new(c));
            }
        }
    }

    /// Calls `f` with the column's state in full.
    fn with<R>(&self, f: impl FnOnce(&Column) -> R) -> R {
        match self {
            Slot::Empty(n) => f(&Column::empty(*n, Track::default())),
            Slot::Full(c) => f(c),
        }
    }

    fn merge(&mut self, o: Slot) {
        match (&mut *self, o) {
            (Slot::Empty(a), Slot::Empty(b)) => *a += b,
            (Slot::Full(c), Slot::Empty(b)) => c.empty += b,
            (_, Slot::Full(o)) => {
                let mut c = match std::mem::take(self) {
                    Slot::Full(c) => c,
                    Slot::Empty(n) => {
                        let track = Track { values: false, xsv_only: o.xsv_only };
                        Box::new(Column::empty(n, track))
                    }
                };
                c.merge(*o);
                *self = Slot::Full(c);
            }
        }
    }
}

/// The statistics of every column of one input.
#[derive(Default)]
pub struct Stats {
    columns: Vec<Slot>,
    /// What the columns keep (every value for the median, quartiles, mode
    /// and cardinality; the distinct count and character lengths unless
    /// only the default output is made).
    track: Track,
}

/// One finished column, ready to print.
#[derive(Clone)]
pub struct Summary {
    /// Header name (or the 1-based number with `--no-headers`).
    pub name: String,
    /// Non-empty values.
    pub non_empty: u64,
    /// Empty values.
    pub empty: u64,
    /// Distinct non-empty values.
    pub distinct: u64,
    /// Whether `distinct` is exact.
    pub exact: bool,
    /// Shortest non-empty value in characters (`None`: all empty).
    pub min_len: Option<u64>,
    /// Longest value in characters.
    pub max_len: u64,
    /// Every non-empty value is an `i64` (and there is one).
    pub integer: bool,
    /// Every non-empty value is an `f64` (and there is one).
    pub float: bool,
    /// The smallest and largest non-empty values: as numbers in a column
    /// of numbers (shortest form that reads back the same), else the
    /// first and last in the order of bytes (of code points, for UTF-8).
    pub min: Option<String>,
    /// See `min`.
    pub max: Option<String>,
    /// In a column of numbers: their sum (exact for integers), mean and
    /// standard deviation (of the population, as `xsv stats` gives it).
    pub sum: Option<String>,
    /// See `sum`.
    pub mean: Option<f64>,
    /// See `sum`.
    pub stddev: Option<f64>,
}

impl Stats {
    /// Adds one record of `n` fields.
    #[inline]
    pub fn add<'a>(&mut self, n: usize, fields: impl Iterator<Item = &'a [u8]>) {
        if n > self.columns.len() {
            self.columns.resize_with(n, Slot::default);
        }
        for (c, f) in self.columns.iter_mut().zip(fields) {
            c.add(f, self.track);
        }
    }

    /// Adds one record's fields of `n` columns, `None` for a column the
    /// record lacks (not counted, neither empty nor not).
    #[inline]
    pub fn add_some<'a>(&mut self, n: usize, fields: impl Iterator<Item = Option<&'a [u8]>>) {
        if n > self.columns.len() {
            self.columns.resize_with(n, Slot::default);
        }
        for (c, f) in self.columns.iter_mut().zip(fields) {
            if let Some(f) = f {
                c.add(f, self.track);
            }
        }
    }

    /// Empty statistics whose columns flagged in `sketched` count distinct
    /// values with the sketch from the start. When the statistics these
    /// will be merged into already use a sketch for a column, the result is
    /// the same (sketch registers are a maximum over the hashes seen), and
    /// a chunk read in parallel skips the exact set it would fill and drop.
    pub fn with_sketches(sketched: &[bool]) -> Stats {
        let columns = sketched
            .iter()
            .map(|&s| {
                if !s {
                    return Slot::default();
                }
                let mut c = Column::new();
                c.distinct = Distinct::Sketch(HyperLogLog::default());
                Slot::Full(Box::new(c))
            })
            .collect();
        Stats { columns, track: Track::default() }
    }

    /// These statistics, keeping every value of each column (for
    /// [`Stats::xsv_cells`]'s median, mode and cardinality) with `keep`.
    pub fn keeping_values(mut self, keep: bool) -> Stats {
        self.track.values = keep;
        for c in &mut self.columns {
            if let Slot::Full(c) = c {
                if keep && c.values.is_none() {
                    c.values = Some(Box::default());
                }
            }
        }
        self
    }

    /// These statistics, counting only what the default (xsv) output
    /// shows with `on` ([`Stats::xsv_cells`]): no distinct values and no
    /// lengths in characters, which [`Stats::summary`] then lacks.
    pub fn xsv_only(mut self, on: bool) -> Stats {
        self.track.xsv_only = on;
        for c in &mut self.columns {
            if let Slot::Full(c) = c {
                c.xsv_only = on;
            }
        }
        self
    }

    /// For each column, whether it counts distinct values with the sketch.
    pub fn sketched(&self) -> Vec<bool> {
        let sketch =
            |c: &Slot| matches!(c, Slot::Full(c) if matches!(c.distinct, Distinct::Sketch(_)));
        self.columns.iter().map(sketch).collect()
    }

    /// Adds what `other` has seen, as if its records had been added here
    /// (statistics of chunks read in parallel).
    pub fn merge(&mut self, other: Stats) {
        if other.columns.len() > self.columns.len() {
            self.columns.resize_with(other.columns.len(), Slot::default);
        }
        for (c, o) in self.columns.iter_mut().zip(other.columns) {
            c.merge(o);
        }
    }

    #[cfg(test)]
    /// The per-column summaries; `names` are header names (missing ones are
    /// numbered). Columns only the header has are listed with zero counts.
    pub fn finish(self, names: &[String]) -> Vec<Summary> {
        (0..self.width(names)).map(|i| self.summary(i, names)).collect()
    }

    /// The number of columns [`Stats::summary`] describes: those seen, or
    /// named by the header row.
    pub fn width(&self, names: &[String]) -> usize {
        self.columns.len().max(names.len())
    }

    /// Column `i`'s summary (see [`Stats::finish`]), made on demand so
    /// that a wide input's summaries need not all be held at once.
    pub fn summary(&self, i: usize, names: &[String]) -> Summary {
        let empty = Slot::default();
        let slot = self.columns.get(i).unwrap_or(&empty);
        slot.with(|c| {
            let (distinct, exact) = c.distinct.count();
            let any = c.non_empty > 0;
            let numeric = any && c.all_float;
            let text =
                |v: &Option<Vec<u8>>| v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
            let n = &c.num;
            let (min, max) = if c.all_int {
                (n.int_min.to_string(), n.int_max.to_string())
            } else {
                (format!("{}", n.min), format!("{}", n.max))
            };
            Summary {
                name: names.get(i).cloned().unwrap_or_else(|| (i + 1).to_string()),
                non_empty: c.non_empty,
                empty: c.empty,
                distinct,
                exact,
                min_len: c.min_len,
                max_len: c.max_len,
                integer: any && c.all_int,
                float: numeric,
                min: if numeric { Some(min) } else { text(&c.min) },
                max: if numeric { Some(max) } else { text(&c.max) },
                sum: numeric.then(|| {
                    if c.all_int {
                        n.int_sum.to_string()
                    } else {
                        format!("{}", n.sum())
                    }
                }),
                // From exact sums: the same whatever the chunks, where
                // Welford's running mean drifts.
                mean: numeric.then(|| {
                    if c.all_int {
                        n.int_sum as f64 / n.n as f64
                    } else {
                        n.mean(0)
                    }
                }),
                stddev: numeric.then(|| match c.all_int.then(|| n.int_variance(0)).flatten() {
                    Some(var) => var.sqrt(),
                    None => n.stddev(0),
                }),
            }
        })
    }
}

/// The optional columns of `stats`' default (xsv) output, and whether
/// empty values count as zeros in the mean and deviation (`--nulls`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Which {
    /// The median of a column of numbers.
    pub median: bool,
    /// The most frequent value (xsv's rule, see [`xsv_mode`]).
    pub mode: bool,
    /// The number of distinct values, the empty one included.
    pub cardinality: bool,
    /// The lower and upper quartiles of a column of numbers (see
    /// [`quartiles`]), after xsv's columns: not in xsv.
    pub quartiles: bool,
    /// Empty values count as zeros in the mean and standard deviation.
    pub nulls: bool,
}

impl Which {
    /// Whether the statistics need every value kept.
    pub fn keeps_values(&self) -> bool {
        self.median || self.mode || self.cardinality || self.quartiles
    }

    /// The header row of the default output.
    pub fn header(&self) -> Vec<&'static str> {
        let mut h = vec![
            "field",
            "type",
            "sum",
            "min",
            "max",
            "min_length",
            "max_length",
            "mean",
            "stddev",
        ];
        if self.median {
            h.push("median");
        }
        if self.mode {
            h.push("mode");
        }
        if self.cardinality {
            h.push("cardinality");
        }
        if self.quartiles {
            h.extend(["q1", "q3"]);
        }
        h
    }
}

/// xsv's median of the sorted numbers `v`: the middle one, or the mean of
/// the two middle ones for an even count; `None` for none.
pub fn median(v: &[f64]) -> Option<f64> {
    match v.len() {
        0 => None,
        k if k % 2 == 0 => {
            let (a, b) = (v[k / 2 - 1], v[k / 2]);
            // Halved first where the sum overflows (1e308 and 1e308).
            let m = (a + b) / 2.0;
            Some(if m.is_infinite() && a.is_finite() && b.is_finite() {
                a / 2.0 + b / 2.0
            } else {
                m
            })
        }
        k => Some(v[k / 2]),
    }
}

/// The lower and upper quartiles (`q1`, `q3`) of the sorted numbers `v`:
/// the [`median`] of the lower half and of the upper half, the middle
/// value belonging to neither half when the count is odd (method 1 of
/// Wikipedia's article "Quartile"; qsv's `q1` and `q3` for 3 values or
/// more, where qsv gives none for 1 or 2); for one value, that value;
/// `None` for none. For 1 to 7: halves 1, 2, 3 and 5, 6, 7, so `q1` = 2
/// and `q3` = 6; for 1 to 8: halves 1 to 4 and 5 to 8, so 2.5 and 6.5.
pub fn quartiles(v: &[f64]) -> Option<(f64, f64)> {
    let half = v.len() / 2;
    if half == 0 {
        return v.first().map(|&x| (x, x));
    }
    Some((median(&v[..half])?, median(&v[v.len() - half..])?))
}

/// xsv's mode of the sorted `(value, count)` pairs: its streaming rule,
/// which keeps a value only while no other has been seen as often since
/// (so ties, and some values seen most often, give none: `N/A`).
pub fn xsv_mode<'a>(sorted: &[(&'a [u8], u64)]) -> Option<&'a [u8]> {
    let (mut mode, mut mode_n) = (None::<&[u8]>, 0u64);
    let (mut next, mut next_n) = (None::<&[u8]>, 0u64);
    for &(v, c) in sorted {
        for _ in 0..c {
            if mode == Some(v) {
                mode_n += 1;
            } else if next == Some(v) {
                next_n += 1;
            } else {
                (next, next_n) = (Some(v), 0);
            }
            if next_n > mode_n {
                (mode, mode_n) = (next, next_n);
                (next, next_n) = (None, 0);
            } else if next_n == mode_n {
                (mode, mode_n) = (None, 0);
            }
        }
    }
    mode
}

impl Stats {
    /// Column `i`'s cells in the default (xsv) output after its name:
    /// type, sum, min, max, min_length, max_length, mean, stddev, then
    /// those `which` asks for.
    pub fn xsv_cells(&self, i: usize, which: &Which) -> Vec<String> {
        let empty_slot = Slot::default();
        let slot = self.columns.get(i).unwrap_or(&empty_slot);
        slot.with(|c| {
            let n = &c.num;
            let typ = if c.non_utf8 {
                "Unknown"
            } else if c.non_empty == 0 {
                "NULL"
            } else if c.all_int {
                "Integer"
            } else if c.all_float {
                "Float"
            } else {
                "Unicode"
            };
            let number = matches!(typ, "Integer" | "Float");
            let text =
                |v: &Option<Vec<u8>>| v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
            let (sum, min, max) = match typ {
                "Integer" => (n.int_sum.to_string(), n.int_min.to_string(), n.int_max.to_string()),
                "Float" => (n.sum().to_string(), n.min.to_string(), n.max.to_string()),
                "NULL" => (String::new(), String::new(), String::new()),
                _ => (
                    String::new(),
                    text(&c.min).unwrap_or_default(),
                    text(&c.max).unwrap_or_default(),
                ),
            };
            let (min_len, max_len) = match (c.non_empty, c.empty) {
                (0, 0) => (String::new(), String::new()),
                (0, _) => ("0".into(), "0".into()),
                (_, e) => {
                    let min = if e > 0 { 0 } else { c.min_bytes };
                    (min.to_string(), c.max_bytes.to_string())
                }
            };
            let (mean, stddev) = if !number {
                (String::new(), String::new())
            } else {
                let zeros = if which.nulls { c.empty } else { 0 };
                if let Some(var) = c.all_int.then(|| n.int_variance(zeros)).flatten() {
                    let mean = n.int_sum as f64 / (n.n + zeros) as f64;
                    (mean.to_string(), var.sqrt().to_string())
                } else {
                    // Floats: from their exact sums, the empty values as
                    // zeros among them.
                    (n.mean(zeros).to_string(), n.stddev(zeros).to_string())
                }
            };
            let mut cells = vec![typ.to_string(), sum, min, max, min_len, max_len, mean, stddev];
            let no_values = Values::default();
            let values = c.values.as_deref().unwrap_or(&no_values);
            let sorted = if number && (which.median || which.quartiles) {
                let mut v = values.numbers.clone();
                v.sort_unstable_by(f64::total_cmp);
                v
            } else {
                Vec::new()
            };
            let cell = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
            if which.median {
                cells.push(cell(median(&sorted)));
            }
            let counted =
                if which.mode || which.cardinality { values.counted() } else { Vec::new() };
            if which.mode {
                // The empty value sorts first.
                let empty = (c.empty > 0).then_some((&b""[..], c.empty));
                let sorted: Vec<(&[u8], u64)> =
                    empty.into_iter().chain(counted.iter().copied()).collect();
                let mode = xsv_mode(&sorted);
                cells.push(
                    mode.map_or_else(|| "N/A".into(), |m| String::from_utf8_lossy(m).into_owned()),
                );
            }
            if which.cardinality {
                cells.push((counted.len() as u64 + u64::from(c.empty > 0)).to_string());
            }
            if which.quartiles {
                let q = quartiles(&sorted);
                cells.extend([cell(q.map(|q| q.0)), cell(q.map(|q| q.1))]);
            }
            cells
        })
    }
}

/// Writes the default (xsv) output: a header row, then for each of the
/// `n` columns its name `name(k)` and `cells(k)`, in `style`.
pub fn write_xsv(
    out: &mut impl Write,
    style: super::fmt::CsvStyle,
    which: &Which,
    n: usize,
    name: impl Fn(usize) -> String,
    cells: impl Fn(usize) -> Vec<String>,
) -> io::Result<()> {
    let mut w = super::fmt::CsvOut::new(out, style);
    w.record(which.header())?;
    for k in 0..n {
        w.record(std::iter::once(name(k)).chain(cells(k)))?;
    }
    Ok(())
}

/// The table's 13 cells of summary `s` (of 1-based column `i`), or of the
/// header row for `None`.
fn table_cells(row: Option<(usize, &Summary)>) -> [String; 13] {
    let Some((i, s)) = row else {
        return [
            "#",
            "column",
            "non-empty",
            "empty",
            "distinct",
            "min len",
            "max len",
            "integer",
            "float",
            "min",
            "max",
            "mean",
            "stddev",
        ]
        .map(String::from);
    };
    let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
    let dash = || "-".to_string();
    let cut = |v: &Option<String>| v.as_deref().map_or_else(dash, |v| shorten(v, 20));
    [
        i.to_string(),
        s.name.clone(),
        s.non_empty.to_string(),
        s.empty.to_string(),
        if s.exact { s.distinct.to_string() } else { format!("~{}", s.distinct) },
        s.min_len.map_or_else(|| "-".into(), |m| m.to_string()),
        if s.min_len.is_some() { s.max_len.to_string() } else { "-".into() },
        yes(s.integer),
        yes(s.float),
        cut(&s.min),
        cut(&s.max),
        s.mean.map_or_else(dash, short_float),
        s.stddev.map_or_else(dash, short_float),
    ]
}

/// Writes the `n` summaries `row(0..n)` as an aligned text table to `out`.
/// Two passes (the widths, then the lines), each summary made twice and
/// none kept: memory does not grow with the number of columns.
pub fn write_table(
    out: &mut impl Write,
    n: usize,
    row: impl Fn(usize) -> Summary,
) -> io::Result<()> {
    // Display width: a wide (CJK) character takes two cells of a terminal.
    let cols = |s: &str| unicode_width::UnicodeWidthStr::width(s);
    let cells = |i: usize| match i {
        0 => table_cells(None),
        i => table_cells(Some((i, &row(i - 1)))),
    };
    let mut widths = [0usize; 13];
    for i in 0..=n {
        for (w, c) in widths.iter_mut().zip(cells(i)) {
            *w = (*w).max(cols(&c));
        }
    }
    let mut line = String::new();
    for i in 0..=n {
        line.clear();
        for (c, cell) in cells(i).iter().enumerate() {
            let pad = widths[c] - cols(cell);
            // Text columns align left, numbers right.
            if c == 1 || (7..=10).contains(&c) {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push_str("  ");
        }
        out.write_all(line.trim_end().as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// `v` cut to `max` characters, with `…` for the rest; control characters
/// (a line end in a value) shown as `?`, to keep the table's lines.
fn shorten(v: &str, max: usize) -> String {
    let clean = |c: char| if c.is_control() { '?' } else { c };
    if v.chars().count() <= max {
        return v.chars().map(clean).collect();
    }
    let mut out: String = v.chars().take(max - 1).map(clean).collect();
    out.push('…');
    out
}

/// `x` with at most 6 digits after the point, trailing zeros dropped.
fn short_float(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Writes the `n` summaries `row(0..n)` as CSV to `out`, one at a time.
pub fn write_csv(out: &mut impl Write, n: usize, row: impl Fn(usize) -> Summary) -> io::Result<()> {
    let mut w = super::output::RecordWriter::new(out, super::args::Format::Csv, b',', None);
    let head = [
        "field",
        "non_empty",
        "empty",
        "distinct",
        "distinct_exact",
        "min_length",
        "max_length",
        "integer",
        "float",
        "sum",
        "min",
        "max",
        "mean",
        "stddev",
    ];
    let mut put = |cells: &[&str]| match w.write(cells.iter().map(|c| c.as_bytes())) {
        Ok(()) => Ok(()),
        Err(super::output::WriteError::Io(e)) => Err(e),
        Err(e) => unreachable!("CSV output takes any bytes: {e:?}"),
    };
    put(&head)?;
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let float = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for i in 0..n {
        let s = &row(i);
        let (min, max) = match s.min_len {
            Some(m) => (m.to_string(), s.max_len.to_string()),
            None => (String::new(), String::new()),
        };
        put(&[
            &s.name,
            &s.non_empty.to_string(),
            &s.empty.to_string(),
            &s.distinct.to_string(),
            &s.exact.to_string(),
            &min,
            &max,
            &s.integer.to_string(),
            &s.float.to_string(),
            &opt(&s.sum),
            &opt(&s.min),
            &opt(&s.max),
            &float(s.mean),
            &float(s.stddev),
        ])?;
    }
    w.into_inner()?;
    Ok(())
}

/// Writes the `n` summaries `row(0..n)` as a JSON array to `out`, one at a
/// time.
pub fn write_json(
    out: &mut impl Write,
    n: usize,
    row: impl Fn(usize) -> Summary,
) -> io::Result<()> {
    out.write_all(b"[")?;
    let mut v = Vec::new();
    for i in 0..n {
        let s = &row(i);
        v.clear();
        if i > 0 {
            v.push(b',');
        }
        v.extend_from_slice(b"\n  {\"column\":");
        json_string(&mut v, &s.name);
        let min = s.min_len.map_or_else(|| "null".into(), |m| m.to_string());
        let max = if s.min_len.is_some() { s.max_len.to_string() } else { "null".into() };
        v.extend_from_slice(
            format!(
                ",\"non_empty\":{},\"empty\":{},\"distinct\":{},\"distinct_exact\":{},\
                 \"min_len\":{min},\"max_len\":{max},\"integer\":{},\"float\":{}",
                s.non_empty, s.empty, s.distinct, s.exact, s.integer, s.float
            )
            .as_bytes(),
        );
        // Numbers as JSON numbers in a column of numbers, else strings.
        let value = |v: &mut Vec<u8>, x: &Option<String>| match x {
            Some(x) if s.float && x.parse::<f64>().is_ok_and(f64::is_finite) => {
                v.extend_from_slice(x.as_bytes())
            }
            Some(x) => json_string(v, x),
            None => v.extend_from_slice(b"null"),
        };
        let float = |x: Option<f64>| match x {
            Some(x) if x.is_finite() => x.to_string(),
            _ => "null".into(),
        };
        for (key, x) in [(",\"sum\":", &s.sum), (",\"min\":", &s.min), (",\"max\":", &s.max)] {
            v.extend_from_slice(key.as_bytes());
            value(&mut v, x);
        }
        v.extend_from_slice(
            format!(",\"mean\":{},\"stddev\":{}}}", float(s.mean), float(s.stddev)).as_bytes(),
        );
        out.write_all(&v)?;
    }
    out.write_all(b"\n]\n")
}

#[cfg(test)]
mod tests;
