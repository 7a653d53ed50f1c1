//! `fastcsv partition`: one file per value of a column, as
//! `xsv partition`.
//!
//! A value (or its first `--prefix-length` bytes) names its file once
//! every non-word character (regex `\W`, Unicode-aware, as xsv's) is
//! removed: `empty` when nothing is left, and `_1`, `_2`... (one counter
//! for all names) when another value already gave that name. Every file
//! stays open until the end, with a small buffer each.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write;

use fastcsv::SelectedRow;

use super::args::{Format, PartitionArgs};
use super::output::{CsvRewrite, RecordWriter};
use super::split::{create, create_dir, file_style, finish, FileWriter, Template};
use super::{path_arg, write_failure, Failure, Input};

/// Gives each value a unique, shell-safe name, as xsv does.
pub struct Names {
    non_word: regex::Regex,
    used: HashSet<String>,
    counter: usize,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            non_word: regex::Regex::new(r"\W").expect("a valid regex"),
            used: HashSet::new(),
            counter: 1,
        }
    }
}

impl Names {
    /// A name for `value` that no value before got.
    pub fn unique(&mut self, value: &[u8]) -> String {
        let text = String::from_utf8_lossy(value);
        let safe = self.non_word.replace_all(&text, "").into_owned();
        let base = if safe.is_empty() { "empty".to_string() } else { safe };
        if self.used.insert(base.clone()) {
            return base;
        }
        loop {
            let candidate = format!("{base}_{}", self.counter);
            self.counter += 1;
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

/// `fastcsv partition`.
pub fn partition(a: &PartitionArgs) -> Result<(), Failure> {
    let template = Template::parse(&a.filename)?;
    let file = path_arg(a.file.as_deref());
    let mut input = Input::open(file, &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    let (cols, first) = super::sort::resolve(&mut input, Some(&a.column), header.as_ref())?;
    let cols = cols.unwrap_or_default();
    if cols.len() > 1 {
        return Err(Failure::Usage(format!(
            "can only partition on one column; `{}` selects {}",
            a.column,
            cols.len()
        )));
    }
    let Some(&col) = cols.first() else { return Ok(()) };
    // A record of no field cannot be written as CSV (`""` is one empty
    // field, and an empty header line is no line at all): dropping the
    // only column would change every file's records when read back.
    let width = header.as_ref().or(first.as_ref()).map(|r| r.len());
    if a.drop && width == Some(1) {
        return Err(Failure::Usage(format!(
            "--drop would leave no column: `{}` is the only one",
            a.column
        )));
    }
    create_dir(&a.outdir)?;
    let keep = |i: &usize| !a.drop || *i != col;
    let names: Option<Vec<&[u8]>> = header
        .as_ref()
        .map(|h| h.iter().enumerate().filter(|(i, _)| keep(i)).map(|(_, f)| f).collect());
    let mut files: Files = HashMap::default();
    let mut gen = Names::default();
    let prefix = |value: &[u8]| match a.prefix_length {
        Some(n) if n < value.len() => n,
        _ => value.len(),
    };
    let mut parts: Vec<Part> = Vec::new();
    // The file for a key (its index in `parts`), opened the first time.
    let mut file =
        |files: &mut Files, parts: &mut Vec<Part>, key: &[u8]| -> Result<usize, Failure> {
            if let Some(&i) = files.get(key) {
                return Ok(i);
            }
            let path = template.path(&a.outdir, &gen.unique(key));
            let w = create(&path, names.as_deref(), 4 << 10, file)?;
            files.insert(key.to_vec(), parts.len());
            parts.push(Part::new(w));
            Ok(parts.len() - 1)
        };
    let mut one = |files: &mut Files,
                   parts: &mut Vec<Part>,
                   row: &dyn super::sort::RowLike|
     -> Result<(), Failure> {
        let value = row.field(col);
        let key = &value[..prefix(value)];
        let i = file(files, parts, key)?;
        let part = &mut parts[i];
        let mut w = RecordWriter::new(&mut part.buf, Format::Csv, part.w.delimiter(), None);
        w.write((0..row.len()).filter(|i| keep(i)).map(|i| row.field(i)))
            .map_err(|e| write_failure(&name, e, row.position(), |f| f))?;
        let limit = part_limit(parts.len());
        parts[i].flush_some(limit)
    };
    if let Some(row) = &first {
        one(&mut files, &mut parts, row)?;
    }
    if !template.fixed_extension() {
        // Whether a file is tab-separated depends on its name: each record
        // goes field by field to its file.
        input.each_row(|row| one(&mut files, &mut parts, row))?;
    } else {
        // Each record straight into its file's buffer.
        let style = file_style(&template.path(&a.outdir, "0"));
        // The CSV of whole records as pieces (the cheapest to read), but
        // without a column each record's fields are needed.
        let rw = CsvRewrite::new(input.reader.dialect(), style, !a.drop);
        let d = input.reader.dialect();
        let dq = (d.delimiter(), d.quote());
        let mut scratch = Vec::new();
        let mut sel = rw.selection();
        let mut key = Vec::new();
        let mut routes = Routes::default();
        // The buffers' size, for this many files.
        let (mut sized, mut limit) = (0, PART_BUFFER);
        while let Some(b) = input.reader.read_batch(&mut sel)? {
            for row in b.iter() {
                if parts.len() != sized {
                    sized = parts.len();
                    limit = part_limit(sized);
                }
                let pieces = if row.raw().is_some() { None } else { row.csv_pieces() };
                if let Some(p) = pieces {
                    // The key from the record's input bytes (RFC 4180 as
                    // the pieces' CSV is), the pieces joined straight into
                    // the file's buffer.
                    let rec = p.input();
                    let k = match csv_value(rec, col, dq.0, true) {
                        Some(k) => k,
                        None => {
                            key.clear();
                            csv_field(rec, col, dq.0, &mut key);
                            &key
                        }
                    };
                    let i = route(&mut routes, &k[..prefix(k)], &mut |k| {
                        file(&mut files, &mut parts, k)
                    })?;
                    let part = &mut parts[i];
                    let n = part.buf.len();
                    p.append_to(&mut part.buf);
                    rw.end(part.buf.len() > n, &mut part.buf);
                    part.flush_some(limit)?;
                    continue;
                }
                key.clear();
                let k = value(&row, col, dq, &mut scratch, &mut key);
                let i =
                    route(&mut routes, &k[..prefix(k)], &mut |k| file(&mut files, &mut parts, k))?;
                let part = &mut parts[i];
                let wrote = if a.drop {
                    rw.line_without(&row, col, &mut part.buf)
                } else {
                    rw.line(&row, &mut part.buf)
                };
                rw.end(wrote, &mut part.buf);
                part.flush_some(limit)?;
            }
            input.progress.set(input.reader.byte_offset());
        }
        input.progress.finish();
    }
    for Part { mut w, buf, .. } in parts {
        w.get_mut().write_all(&buf)?;
        finish(w)?;
    }
    Ok(())
}

/// An open file, and the records for it not written yet.
struct Part {
    w: FileWriter,
    buf: Vec<u8>,
    /// Bytes of the file up to the first of `buf`.
    at: u64,
}

/// The most bytes a [`Part`] holds before it writes: a write covers
/// sixteen pages.
const PART_BUFFER: usize = 64 << 10;

/// The bytes each [`Part`] holds before it writes with `n` files open:
/// [`PART_BUFFER`] while all the buffers fit in 1 MiB, so that they stay
/// in a core's L2 cache beside the input (with a hundred files, 64 KiB
/// each cost more in cache misses than the writes they save); less with
/// more files, down to four pages.
fn part_limit(n: usize) -> usize {
    ((1 << 20) / n.max(1)).clamp(16 << 10, PART_BUFFER)
}

/// The size of a page of the page cache: a write that ends at a page's
/// end leaves no partly written page for the kernel to fill with zeros
/// and the next write to fill again.
const PAGE: u64 = 4 << 10;

impl Part {
    /// A part writing to `w` (whose buffer may hold a header).
    fn new(mut w: FileWriter) -> Part {
        let at = w.get_mut().buffer().len() as u64;
        Part { w, buf: Vec::with_capacity(PART_BUFFER + (PAGE as usize)), at }
    }

    /// Writes the records held once they are `limit` bytes or more (every
    /// file stays open: each holds at most about that much; see
    /// [`part_limit`]), up to the last page boundary of the file that they
    /// reach; the rest stays.
    #[inline]
    fn flush_some(&mut self, limit: usize) -> Result<(), Failure> {
        if self.buf.len() >= limit {
            self.flush_pages()?;
        }
        Ok(())
    }

    #[inline(never)]
    fn flush_pages(&mut self) -> Result<(), Failure> {
        let end = (self.at + self.buf.len() as u64) / PAGE * PAGE;
        let n = (end - self.at) as usize;
        self.w.get_mut().write_all(&self.buf[..n])?;
        self.buf.drain(..n);
        self.at = end;
        Ok(())
    }
}

/// The open files' indices, by key.
type Files = HashMap<Vec<u8>, usize, BuildHasherDefault<KeyHasher>>;

/// The file index of each key of up to 16 bytes seen so far, looked up
/// once per record before [`Files`]: such a key is held as its length and
/// two 8-byte words (see [`short_key`]), so that a lookup is a hash of
/// those and one compare, without a call to compare bytes.
#[derive(Default)]
struct Routes {
    /// Open addressing with linear probing: `(key, file index + 1)`, 0
    /// for a free slot; a power of two long, at most half full.
    slots: Vec<(ShortKey, u32)>,
    len: usize,
}

/// A key of up to 16 bytes: its length and two words that together hold
/// every byte of it.
type ShortKey = (u64, u64, u64);

/// `key` as a [`ShortKey`], if 16 bytes or shorter: the first and last
/// eight bytes (overlapping when shorter than 16), or the first and last
/// four, or each byte, as [`KeyHasher`] reads them. Given the length,
/// the words give back every byte, so equal words mean equal keys.
#[inline(always)]
fn short_key(key: &[u8]) -> Option<ShortKey> {
    let n = key.len();
    let word = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
    let half = |s: &[u8]| u64::from(u32::from_le_bytes(s.try_into().expect("4 bytes")));
    let (lo, hi) = match n {
        0 => (0, 0),
        1..=3 => (u64::from(key[0]) | u64::from(key[n / 2]) << 8 | u64::from(key[n - 1]) << 16, 0),
        4..=7 => (half(&key[..4]), half(&key[n - 4..])),
        8..=16 => (word(&key[..8]), word(&key[n - 8..])),
        _ => return None,
    };
    Some((n as u64, lo, hi))
}

impl Routes {
    /// The slot for `k`: where it is, or the free one where it would go.
    #[inline(always)]
    fn slot(&self, k: ShortKey) -> usize {
        // One multiply: the length is below 17, so it fits beside the
        // rotated words.
        let mut h = KeyHasher::default();
        h.fold(k.1 ^ k.2.rotate_left(29) ^ k.0 << 58);
        let mask = self.slots.len() - 1;
        let mut i = h.finish() as usize & mask;
        loop {
            let (sk, v) = self.slots[i];
            if v == 0 || sk == k {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The file index of `key`, if it has one here.
    #[inline]
    fn get(&self, key: &[u8]) -> Option<usize> {
        let k = short_key(key)?;
        if self.slots.is_empty() {
            return None;
        }
        let (_, v) = self.slots[self.slot(k)];
        (v != 0).then(|| v as usize - 1)
    }

    /// Gives `key` the file index `i` (a key longer than 16 bytes, or
    /// past `u32::MAX` files, is not kept: [`Files`] has it).
    fn insert(&mut self, key: &[u8], i: usize) {
        let (Some(k), Ok(v)) = (short_key(key), u32::try_from(i + 1)) else { return };
        if v == u32::MAX {
            return;
        }
        if 2 * (self.len + 1) > self.slots.len() {
            let grown = vec![((0, 0, 0), 0); (2 * self.slots.len()).max(64)];
            let old = std::mem::replace(&mut self.slots, grown);
            for (sk, v) in old.into_iter().filter(|s| s.1 != 0) {
                let at = self.slot(sk);
                self.slots[at] = (sk, v);
            }
        }
        let at = self.slot(k);
        if self.slots[at].1 == 0 {
            self.len += 1;
        }
        self.slots[at] = (k, v);
    }
}

/// A hasher for the short keys of `partition` (one lookup per record):
/// the key's bytes as 8-byte words (two overlapping loads up to 16
/// bytes), each folded in with a 64x64->128-bit multiply.
#[derive(Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    #[inline(always)]
    fn fold(&mut self, w: u64) {
        const K: u64 = 0xA076_1D64_78BD_642F;
        const M: u64 = 0xE703_7ED1_A0B4_28DB;
        let r = u128::from(self.0 ^ w ^ K) * u128::from(M);
        self.0 = (r as u64) ^ ((r >> 64) as u64);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, b: &[u8]) {
        let word = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
        let n = b.len();
        if n >= 8 {
            let mut chunks = b.chunks_exact(8);
            for c in &mut chunks {
                self.fold(word(c));
            }
            if !chunks.remainder().is_empty() {
                self.fold(word(&b[n - 8..]));
            }
        } else if n >= 4 {
            let half = |s: &[u8]| u64::from(u32::from_le_bytes(s.try_into().expect("4 bytes")));
            self.fold(half(&b[..4]) | half(&b[n - 4..]) << 32);
        } else if n > 0 {
            self.fold(u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16);
        }
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.fold(n as u64);
    }
}

/// The value of field `col` of `row` (empty past its end), read with the
/// delimiter `delim` and quote `quote` by `Selection::csv`, `raw` or
/// `all`: a slice of the input where it is one (no copy to hash), else
/// appended to `out` (empty); `scratch` holds a record's CSV.
fn value<'a, 'r: 'a>(
    row: &SelectedRow<'r>,
    col: usize,
    (delim, quote): (u8, Option<u8>),
    scratch: &mut Vec<u8>,
    out: &'a mut Vec<u8>,
) -> &'a [u8] {
    if let Some(raw) = row.raw() {
        // No quote: `csv_value` never gives `None`.
        return csv_value(raw, col, delim, false).unwrap_or_default();
    }
    if let Some(f) = row.raw_fields() {
        let Some(r) = f.get(col) else { return &[] };
        match &f.record()[r] {
            // Quoted: its quotes doubled.
            [q, inner @ .., _] if Some(*q) == quote => {
                let mut rest = inner;
                while let Some(i) = memchr::memchr(*q, rest) {
                    out.extend_from_slice(&rest[..=i]);
                    rest = &rest[(i + 2).min(rest.len())..];
                }
                out.extend_from_slice(rest);
            }
            raw => return raw,
        }
    } else if let Some(p) = row.csv_pieces() {
        // Its CSV with the input's delimiter and a quote `"`.
        scratch.clear();
        p.append_to(scratch);
        csv_field(scratch, col, delim, out);
    } else if col < row.len() {
        return row.get(col);
    }
    out
}

/// The file index of `key`: from `routes`, else from `open` (which opens
/// the file the first time), then kept in `routes`.
#[inline(always)]
fn route(
    routes: &mut Routes,
    key: &[u8],
    open: &mut dyn FnMut(&[u8]) -> Result<usize, Failure>,
) -> Result<usize, Failure> {
    if let Some(i) = routes.get(key) {
        return Ok(i);
    }
    let i = open(key)?;
    routes.insert(key, i);
    Ok(i)
}

/// Bytes equal to `b` in the eight bytes of `x`: the top bit of each.
#[inline(always)]
fn eq_bytes(x: u64, b: u8) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let y = x ^ (LO * u64::from(b));
    // A byte's top bit: set when any of its bits is (no carry leaves a
    // byte: at most 0x7f + 0x7f).
    let nonzero = ((y & !HI) + !HI) | y;
    !nonzero & HI
}

/// The value of field `col` (empty past the end) of `rec`, a record
/// written as RFC 4180 CSV with delimiter `delim` and quote `"`, or with
/// `quoted` false a record without quotes (its fields joined by `delim`,
/// any `"` in them data): a slice of `rec`, or `None` when the field
/// holds a quote (read it with [`csv_field`] then). Eight bytes a step:
/// the delimiters inside quotes are masked out by the parity of the
/// quotes before them, and a step holding fewer delimiters than are left
/// to pass is passed whole (no branch per delimiter).
#[inline]
fn csv_value(rec: &[u8], col: usize, delim: u8, quoted: bool) -> Option<&[u8]> {
    if let Some(v) = first_block_value(rec, col, delim, quoted) {
        return v;
    }
    csv_value_words(rec, col, delim, quoted)
}

/// [`csv_value`] where field `col` ends in the record's first 64 bytes
/// (the common case for a key near the start): the delimiters and quotes
/// of those bytes as two bit masks (vector compares), the delimiters
/// inside quotes masked out by the prefix parity of the quotes, and the
/// field found among the delimiters left, with no branch per byte or
/// word. `None` when the field ends further on (or the
/// delimiter is NUL, the padding of a short record).
#[inline(always)]
fn first_block_value(rec: &[u8], col: usize, delim: u8, quoted: bool) -> Option<Option<&[u8]>> {
    const B: usize = 64;
    let n = rec.len();
    if delim == 0 || col >= B {
        return None;
    }
    let mut pad = [0u8; B];
    let block: &[u8; B] = match rec.first_chunk::<B>() {
        Some(b) => b,
        None => {
            pad[..n].copy_from_slice(rec);
            &pad
        }
    };
    let (mut delims, quotes) = byte_masks(block, delim);
    if quoted && quotes != 0 {
        // Bit i of `odd`: an odd number of quotes at or before byte i,
        // so a delimiter there is inside quotes.
        let mut odd = quotes;
        for s in [1, 2, 4, 8, 16, 32] {
            odd ^= odd << s;
        }
        delims &= !odd;
    }
    // Passes the `col` delimiters before the field.
    let mut start = 0;
    if col > 0 {
        for _ in 1..col {
            delims &= delims.wrapping_sub(1);
        }
        if delims == 0 {
            // Fewer delimiters: past the record's end, or further on.
            return (n <= B).then_some(Some(&[]));
        }
        start = delims.trailing_zeros() as usize + 1;
        delims &= delims - 1;
    }
    let end = if delims != 0 {
        delims.trailing_zeros() as usize
    } else if n <= B {
        n
    } else {
        return None;
    };
    Some(unquote(&rec[start..end], quoted))
}

/// Bit `i` set where byte `i` of `block` is `delim`, and where it is
/// `"`: SSE2 compares, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn byte_masks(block: &[u8; 64], delim: u8) -> (u64, u64) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let (mut delims, mut quotes) = (0u64, 0u64);
    // SAFETY: SSE2 is part of the x86_64 baseline, so its intrinsics run
    // on every x86_64 CPU; each load reads bytes `16 * k .. 16 * k + 16`
    // of the 64-byte array (`k < 4`), unaligned loads being fine at any
    // address.
    unsafe {
        let (d, q) = (_mm_set1_epi8(delim as i8), _mm_set1_epi8(b'"' as i8));
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            delims |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, d)) as u16) << (16 * k);
            quotes |= u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)) as u16) << (16 * k);
        }
    }
    (delims, quotes)
}

/// Bit `i` set where byte `i` of `block` is `delim`, and where it is `"`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn byte_masks(block: &[u8; 64], delim: u8) -> (u64, u64) {
    let (mut delims, mut quotes) = (0u64, 0u64);
    for (i, &b) in block.iter().enumerate() {
        delims |= u64::from(b == delim) << i;
        quotes |= u64::from(b == b'"') << i;
    }
    (delims, quotes)
}

/// [`csv_value`] eight bytes a step, from the record's start.
#[inline]
fn csv_value_words(rec: &[u8], col: usize, delim: u8, quoted: bool) -> Option<&[u8]> {
    const LO: u64 = 0x0101_0101_0101_0101;
    let n = rec.len();
    // Delimiters left to pass before field `col` starts, then its start;
    // whether the next step starts inside quotes (0 or 1).
    let (mut need, mut start, mut inside) = (col, 0, 0u64);
    let mut at = 0;
    while at < n {
        let x = match rec.get(at..at + 8) {
            Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")),
            None => {
                let mut w = [0u8; 8];
                w[..n - at].copy_from_slice(&rec[at..]);
                u64::from_le_bytes(w)
            }
        };
        let mut delims = eq_bytes(x, delim);
        if n - at < 8 {
            delims &= (1u64 << (8 * (n - at))) - 1;
        }
        let quotes = if quoted { eq_bytes(x, b'"') } else { 0 };
        if quotes | inside != 0 {
            // Bit 0 of each byte: whether it is inside quotes (the prefix
            // sums of the quotes, at most 8 a byte, taken mod 2).
            let odd = ((quotes >> 7).wrapping_mul(LO) & LO) ^ (inside * LO);
            delims &= !(odd << 7);
            inside = odd >> 56;
        }
        if need > 0 {
            // How many: the sum of the bytes' top bits, in the top byte.
            let c = ((delims >> 7).wrapping_mul(LO) >> 56) as usize;
            if c < need {
                need -= c;
                at += 8;
                continue;
            }
            // The field starts after this step's `need`-th delimiter.
            for _ in 1..need {
                delims &= delims - 1;
            }
            start = at + delims.trailing_zeros() as usize / 8 + 1;
            delims &= delims - 1;
            need = 0;
        }
        if delims != 0 {
            let e = at + delims.trailing_zeros() as usize / 8;
            return unquote(&rec[start..e], quoted);
        }
        at += 8;
    }
    if need == 0 {
        unquote(&rec[start..], quoted)
    } else {
        Some(&[])
    }
}

/// The value of `f`, a field as RFC 4180 CSV with quote `"` (`quoted`)
/// or a field without quotes: without its quotes if quoted; `None` if it
/// holds a quote (doubled).
#[inline]
fn unquote(f: &[u8], quoted: bool) -> Option<&[u8]> {
    match f {
        // Quoted: any quote inside is doubled.
        [b'"', inner @ .., b'"'] if quoted => {
            (memchr::memchr(b'"', inner).is_none()).then_some(inner)
        }
        // Unquoted: no quote (a field holding one is quoted).
        _ => Some(f),
    }
}

/// Appends the value of field `col` (empty past the end) of `rec`, a
/// record written as RFC 4180 CSV with delimiter `delim` and quote `"`.
fn csv_field(rec: &[u8], col: usize, delim: u8, out: &mut Vec<u8>) {
    let mut at = 0;
    for j in 0.. {
        let quoted = rec.get(at) == Some(&b'"');
        let mut i = at + usize::from(quoted);
        // The field's end: past its closing quote, or at the delimiter.
        if quoted {
            loop {
                match memchr::memchr(b'"', &rec[i..]) {
                    Some(q) if rec.get(i + q + 1) == Some(&b'"') => {
                        if j == col {
                            out.extend_from_slice(&rec[i..=i + q]);
                        }
                        i += q + 2;
                    }
                    Some(q) => {
                        if j == col {
                            out.extend_from_slice(&rec[i..i + q]);
                        }
                        i += q + 1;
                        break;
                    }
                    None => {
                        i = rec.len();
                        break;
                    }
                }
            }
        } else {
            i = memchr::memchr(delim, &rec[at..]).map_or(rec.len(), |e| at + e);
            if j == col {
                out.extend_from_slice(&rec[at..i]);
            }
        }
        if j == col || i >= rec.len() {
            return;
        }
        at = i + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_xsv() {
        let mut n = Names::default();
        assert_eq!(n.unique(b"x y"), "xy");
        assert_eq!(n.unique(b"xy"), "xy_1");
        assert_eq!(n.unique(b"../"), "empty");
        assert_eq!(n.unique(b""), "empty_2");
        assert_eq!(n.unique("caf\u{e9}!".as_bytes()), "caf\u{e9}");
    }

    /// A record as RFC 4180 CSV with `delim` (fields quoted when they
    /// hold the delimiter, a quote, CR or LF, or when `quote` says so).
    fn written(fields: &[(bool, String)], delim: u8) -> Vec<u8> {
        let mut rec = Vec::new();
        for (i, (quote, v)) in fields.iter().enumerate() {
            if i > 0 {
                rec.push(delim);
            }
            let needs = v.bytes().any(|b| b == delim || b"\"\r\n".contains(&b));
            if *quote || needs {
                rec.push(b'"');
                rec.extend_from_slice(v.replace('"', "\"\"").as_bytes());
                rec.push(b'"');
            } else {
                rec.extend_from_slice(v.as_bytes());
            }
        }
        rec
    }

    #[test]
    fn csv_value_cases() {
        let rec = b"1,\"a,b\",Paris,\"x\"\"y\",,last";
        let v = |col| csv_value(rec, col, b',', true);
        assert_eq!(v(0), Some(&b"1"[..]));
        assert_eq!(v(1), Some(&b"a,b"[..]));
        assert_eq!(v(2), Some(&b"Paris"[..]));
        assert_eq!(v(3), None);
        assert_eq!(v(4), Some(&b""[..]));
        assert_eq!(v(5), Some(&b"last"[..]));
        assert_eq!(v(6), Some(&b""[..]));
        // Without quotes, a `"` is data.
        assert_eq!(csv_value(b"a\"b;c", 0, b';', false), Some(&b"a\"b"[..]));
        assert_eq!(csv_value(b"", 0, b',', true), Some(&b""[..]));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Records of fields holding delimiters, quotes, CR and LF, short
        /// and longer than a step, quoted or not: `csv_value` gives the
        /// value `csv_field` reads, or `None` only for a field holding a
        /// quote.
        #[test]
        fn csv_value_reads_as_csv_field(
            fields in proptest::collection::vec(
                (proptest::bool::ANY, "[a,;\"\r\n é]{0,20}"), 1..8),
            col in 0..9usize,
            semi in proptest::bool::ANY,
        ) {
            let delim = if semi { b';' } else { b',' };
            let rec = written(&fields, delim);
            let mut want = Vec::new();
            csv_field(&rec, col, delim, &mut want);
            // Both readers alone too: the words one from the start, the
            // first-block one where it answers.
            let first = first_block_value(&rec, col, delim, true);
            let readers = [
                Some(csv_value(&rec, col, delim, true)),
                Some(csv_value_words(&rec, col, delim, true)),
                first,
            ];
            for got in readers.into_iter().flatten() {
                match got {
                    Some(got) => proptest::prop_assert_eq!(got, &want[..]),
                    None => proptest::prop_assert!(want.contains(&b'"')),
                }
            }
            // A record of at most 64 bytes is answered there whole.
            if rec.len() <= 64 {
                proptest::prop_assert!(first.is_some(), "short record {:?} unanswered", rec);
            }
            // The same record without quotes, read as one.
            let plain: Vec<u8> = rec.iter().copied().filter(|&b| b != b'"').collect();
            let want: Vec<u8> = plain.split(|&b| b == delim).nth(col).unwrap_or_default().to_vec();
            proptest::prop_assert_eq!(csv_value(&plain, col, delim, false), Some(&want[..]));
        }

        /// `byte_masks` marks the bytes equal to the delimiter and to `"`.
        #[test]
        fn byte_masks_mark_bytes(
            bytes in proptest::collection::vec(proptest::sample::select(b",;\"a\0\xff".to_vec()), 64),
            semi in proptest::bool::ANY,
        ) {
            let delim = if semi { b';' } else { b',' };
            let block: [u8; 64] = bytes.try_into().expect("64 bytes");
            let (mut d, mut q) = (0u64, 0u64);
            for (i, &b) in block.iter().enumerate() {
                d |= u64::from(b == delim) << i;
                q |= u64::from(b == b'"') << i;
            }
            proptest::prop_assert_eq!(byte_masks(&block, delim), (d, q));
        }

        /// `Routes` gives back each key's index as a map does, for keys of
        /// every length up to 16 bytes and past it (not kept).
        #[test]
        fn routes_as_a_map(keys in proptest::collection::vec("[ab\u{e9}]{0,12}", 1..200)) {
            let mut routes = Routes::default();
            let mut map: HashMap<Vec<u8>, usize> = HashMap::new();
            for k in &keys {
                let k = k.as_bytes();
                let n = map.len();
                let want = *map.entry(k.to_vec()).or_insert(n);
                match routes.get(k) {
                    Some(i) => proptest::prop_assert_eq!(i, want),
                    None => {
                        proptest::prop_assert!(want == n || k.len() > 16, "lost {:?}", k);
                        routes.insert(k, want);
                    }
                }
            }
        }
    }
}
