//! Record writers for `select` and `cat`: CSV with minimal quoting, TSV
//! with backslash escapes, and JSON lines.
//!
//! Writers copy field bytes straight into the caller's buffered writer; no
//! field is allocated. A word-at-a-time test per format says whether a
//! field holds bytes that need work (quoting or escaping); fields without
//! such bytes, nearly all of them, are copied whole.

use std::io::{self, Write};

use super::args::Format;

mod rewrite;
pub use rewrite::CsvRewrite;

/// Why a record could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// The output failed (a closed pipe included).
    Io(io::Error),
    /// JSON output needs UTF-8 text; field `field` is not.
    Utf8 {
        /// 0-based field index in the written record.
        field: usize,
        /// Offset of the first invalid byte in the field.
        valid_up_to: usize,
    },
}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> WriteError {
        WriteError::Io(e)
    }
}

/// Which bytes of a field need work (quoting or escaping): the core's
/// byte-set test.
type Needles = fastcsv::scan::ByteSet;

/// Bytes TSV output escapes.
const TSV_NEEDLES: Needles = Needles::new(*b"\t\n\r\\", false);

/// Bytes JSON strings escape: the quote, the backslash, controls.
const JSON_NEEDLES: Needles = Needles::new(*b"\"\\\"\"", true);

enum Kind {
    Csv {
        needles: Needles,
        delimiter: u8,
    },
    Tsv,
    /// `keys[i]` is the already-escaped `"name":` for field `i`; no keys
    /// means arrays. A record is built in `line` and written only once
    /// every field proved to be UTF-8, so that output never ends in half a
    /// record.
    Jsonl {
        keys: Vec<Vec<u8>>,
        line: Vec<u8>,
        seps: JsonSeps,
    },
}

/// What JSON lines output writes around the fields of a record that needs
/// no escaping (see [`RecordWriter::write_plain_row`]): before each field,
/// the end of the previous one and the next key (`{"name":"`, then
/// `","name":"`; `["` then `","` for arrays), and after the last field
/// the record's end. Every separator is in one buffer, followed by
/// [`SEP_PAD`] zero bytes, so that the first 16 bytes of any of them can
/// be copied with one unaligned move.
struct JsonSeps {
    bytes: Vec<u8>,
    /// Separator `i` is `bytes[at[i]..at[i + 1]]`.
    at: Vec<u32>,
    /// Arrays: fields from the second on all take separator 1.
    array: bool,
    /// `"}\n` or `"]\n`.
    end: [u8; 3],
}

/// Zero bytes after the last separator of a [`JsonSeps`].
const SEP_PAD: usize = 16;

impl JsonSeps {
    /// From the escaped keys (`"name":`); arrays when there are none.
    fn new(keys: &[Vec<u8>]) -> JsonSeps {
        let mut bytes = Vec::new();
        let mut at = vec![0u32];
        let array = keys.is_empty();
        let mut push = |bytes: &mut Vec<u8>, parts: &[&[u8]]| {
            for p in parts {
                bytes.extend_from_slice(p);
            }
            at.push(u32::try_from(bytes.len()).expect("header keys under 4 GiB"));
        };
        if array {
            push(&mut bytes, &[b"[\""]);
            push(&mut bytes, &[b"\",\""]);
        } else {
            for (i, k) in keys.iter().enumerate() {
                let open: &[u8] = if i == 0 { b"{" } else { b"\"," };
                push(&mut bytes, &[open, k, b"\""]);
            }
        }
        bytes.resize(bytes.len() + SEP_PAD, 0);
        let end = if array { *b"\"]\n" } else { *b"\"}\n" };
        JsonSeps { bytes, at, array, end }
    }

    /// Bytes the separators of a record of `n` fields take, with its end;
    /// `None` when an object record has more fields than keys.
    #[inline]
    fn total(&self, n: usize) -> Option<usize> {
        let bytes =
            if self.array { 2 + 3 * n.saturating_sub(1) } else { *self.at.get(n)? as usize };
        Some(bytes + self.end.len())
    }
}

/// Writes records in one output format.
pub struct RecordWriter<W: Write> {
    out: W,
    kind: Kind,
}

impl<W: Write> RecordWriter<W> {
    /// A writer for `format`. `delimiter` is the CSV delimiter; `keys` are
    /// the JSON object keys (the header row, checked to be UTF-8 by the
    /// caller: see `json_keys_utf8`), or `None` for JSON arrays.
    pub fn new(out: W, format: Format, delimiter: u8, keys: Option<&[&[u8]]>) -> Self {
        let mut kind = match format {
            Format::Csv => Kind::Csv {
                needles: Needles::new([delimiter, b'"', b'\r', b'\n'], false),
                delimiter,
            },
            Format::Tsv => Kind::Tsv,
            Format::Jsonl => Kind::Jsonl {
                keys: keys
                    .unwrap_or_default()
                    .iter()
                    .map(|k| {
                        let mut v = Vec::with_capacity(k.len() + 3);
                        json_string(&mut v, &String::from_utf8_lossy(k));
                        v.push(b':');
                        v
                    })
                    .collect(),
                line: Vec::new(),
                seps: JsonSeps::new(&[]),
            },
        };
        if let Kind::Jsonl { keys, seps, .. } = &mut kind {
            *seps = JsonSeps::new(keys);
        }
        RecordWriter { out, kind }
    }

    /// Writes one record from its fields.
    pub fn write<'a, I>(&mut self, fields: I) -> Result<(), WriteError>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        let out = &mut self.out;
        match &mut self.kind {
            Kind::Csv { needles, delimiter } => {
                let mut n = 0usize;
                let mut last_empty = false;
                for f in fields {
                    if n > 0 {
                        out.write_all(&[*delimiter])?;
                    }
                    csv_field(out, f, needles)?;
                    n += 1;
                    last_empty = f.is_empty();
                }
                // A record of one empty field would read back as an empty
                // line, which is no record at all: quote it (as Python does).
                if n == 1 && last_empty {
                    out.write_all(b"\"\"")?;
                }
                out.write_all(b"\n")?;
            }
            Kind::Tsv => {
                for (i, f) in fields.into_iter().enumerate() {
                    if i > 0 {
                        out.write_all(b"\t")?;
                    }
                    tsv_field(out, f)?;
                }
                out.write_all(b"\n")?;
            }
            Kind::Jsonl { keys, line, .. } => {
                let object = !keys.is_empty();
                line.clear();
                let out = line;
                out.write_all(if object { b"{" } else { b"[" })?;
                for (i, f) in fields.into_iter().enumerate() {
                    let s = simdutf8::compat::from_utf8(f)
                        .map_err(|e| WriteError::Utf8 { field: i, valid_up_to: e.valid_up_to() })?;
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    if object {
                        match keys.get(i) {
                            Some(k) => out.write_all(k)?,
                            // Fields past the header (--flexible): keyed by
                            // their 1-based column number.
                            None => write!(out, "\"{}\":", i + 1)?,
                        }
                    }
                    json_str(out, s)?;
                }
                out.write_all(if object { b"}\n" } else { b"]\n" })?;
                self.out.write_all(out)?;
            }
        }
        Ok(())
    }

    /// True for CSV output with this delimiter: records whose input bytes
    /// are their fields joined by it, with no quote, CR or LF, can be
    /// copied as they are.
    pub fn copies_raw(&self, input_delimiter: u8) -> bool {
        matches!(&self.kind, Kind::Csv { delimiter, .. } if *delimiter == input_delimiter)
    }

    /// Writes a record given as its input bytes (without terminator) when
    /// they are exactly its fields joined by `input_delimiter` (see
    /// `SelectedRow::raw`) and they are also this writer's output: CSV with
    /// the same delimiter, nothing to quote. False, having written nothing,
    /// otherwise.
    pub fn write_raw(&mut self, raw: &[u8], input_delimiter: u8) -> Result<bool, WriteError> {
        match &self.kind {
            Kind::Csv { delimiter, .. }
                if *delimiter == input_delimiter
                    && !raw.is_empty()
                    && memchr::memchr3(b'"', b'\r', b'\n', raw).is_none() =>
            {
                self.out.write_all(raw)?;
                self.out.write_all(b"\n")?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// True when [`RecordWriter::write_pieces`] and
    /// [`RecordWriter::write_requoted_cols`] can write records read with
    /// this dialect: quote `"`, the writer's delimiter, and CR and LF both
    /// ending records (so that no unquoted field holds either, and the
    /// scanner marks the quotes this writer drops).
    pub fn requotes(&self, d: &fastcsv::Dialect) -> bool {
        d.quote() == Some(b'"')
            && d.terminator() == fastcsv::Terminator::Any
            && self.copies_raw(d.delimiter())
    }

    /// Writes a record given as CSV pieces (see `SelectedRow::csv_pieces`),
    /// read with a delimiter and quote for which
    /// [`RecordWriter::requotes`] holds: the same bytes
    /// [`RecordWriter::write`] would write for its parsed fields. False,
    /// having written nothing, when this writer does not write CSV.
    pub fn write_pieces(&mut self, pieces: fastcsv::CsvPieces<'_>) -> io::Result<bool> {
        if !matches!(self.kind, Kind::Csv { .. }) {
            return Ok(false);
        }
        let mut empty = true;
        for p in pieces {
            self.out.write_all(p)?;
            empty &= p.is_empty();
        }
        // Only a record of one empty quoted field has no bytes left: as in
        // `write`, it is quoted, not an empty line.
        self.out.write_all(if empty { b"\"\"\n" } else { b"\n" })?;
        Ok(true)
    }

    /// The CSV delimiter (a comma for the other formats).
    pub fn delimiter(&self) -> u8 {
        match &self.kind {
            Kind::Csv { delimiter, .. } => *delimiter,
            _ => b',',
        }
    }

    /// The inner writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Flushes and returns the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writing into memory (the workers' buffers).
impl RecordWriter<Vec<u8>> {
    /// Writes a record given as its input bytes (without terminator) when
    /// they are exactly its fields joined by `input_delimiter` (see
    /// `SelectedRow::raw`) and need no escaping in this writer's format:
    /// for JSON lines, printable ASCII without `"` or `\`; for TSV, no
    /// TAB (other than the delimiter), CR, LF or `\`. The fields are then
    /// copied from the input bytes with no per-field check (the check is
    /// one pass over the record). False, having written nothing, otherwise
    /// (and for CSV, which [`RecordWriter::write_raw`] copies).
    #[inline]
    pub fn write_plain(&mut self, raw: &[u8], input_delimiter: u8) -> bool {
        let d = input_delimiter;
        if raw.is_empty() {
            return false;
        }
        let v = &mut self.out;
        match &self.kind {
            Kind::Jsonl { keys, .. } => {
                // One pass without branches (vectorised): any byte that
                // JSON escapes or that is not ASCII.
                let bad = raw.iter().fold(0u8, |a, &b| {
                    a | (((b < 0x20) & (b != d)) | (b >= 0x80) | (b == b'"') | (b == b'\\')) as u8
                });
                if bad != 0 || d == b'"' || d == b'\\' {
                    return false;
                }
                let object = !keys.is_empty();
                v.reserve(
                    raw.len() + 4 + keys.iter().map(Vec::len).sum::<usize>() + 4 * keys.len(),
                );
                v.push(if object { b'{' } else { b'[' });
                for (i, f) in raw.split(|&b| b == d).enumerate() {
                    if i > 0 {
                        v.push(b',');
                    }
                    if object {
                        match keys.get(i) {
                            Some(k) => append(v, k),
                            // Fields past the header (--flexible): keyed
                            // by their 1-based column number.
                            None => v.extend_from_slice(format!("\"{}\":", i + 1).as_bytes()),
                        }
                    }
                    v.push(b'"');
                    append(v, f);
                    v.push(b'"');
                }
                v.extend_from_slice(if object { b"}\n" } else { b"]\n" });
                true
            }
            Kind::Tsv => {
                let bad = raw.iter().fold(0u8, |a, &b| {
                    a | (((b == b'\t') & (d != b'\t')) | (b == b'\n') | (b == b'\r') | (b == b'\\'))
                        as u8
                });
                if bad != 0 {
                    return false;
                }
                let start = v.len();
                v.extend_from_slice(raw);
                if d != b'\t' {
                    // Every byte stored, a select rather than a branch:
                    // this vectorises into compares and blends (a store
                    // only where the byte matches does not).
                    for b in &mut v[start..] {
                        *b = if *b == d { b'\t' } else { *b };
                    }
                }
                v.push(b'\n');
                true
            }
            Kind::Csv { .. } => false,
        }
    }

    /// [`RecordWriter::write_plain`] for a record of a batch read with
    /// [`fastcsv::Selection::all`]: JSON lines are written from the
    /// delimiter offsets the scanner found (see
    /// [`fastcsv::SelectedRow::raw_fields`]) rather than by looking for
    /// the delimiter again, each field with its precomputed separator.
    /// False, having written nothing, when the record is not plain (see
    /// [`fastcsv::SelectedRow::raw`]) or needs escaping.
    #[inline]
    pub fn write_plain_row(&mut self, row: &fastcsv::SelectedRow<'_>, input_delimiter: u8) -> bool {
        let Some(raw) = row.raw() else {
            return false;
        };
        let d = input_delimiter;
        if let Kind::Jsonl { seps, .. } = &self.kind {
            if let (Some(fields), Some(total)) = (row.raw_fields(), seps.total(row.len())) {
                if raw.is_empty() || d == b'"' || d == b'\\' || !json_plain(raw, d) {
                    return false;
                }
                json_fields(&mut self.out, seps, &fields, row.len(), total);
                return true;
            }
        }
        self.write_plain(raw, d)
    }

    /// Writes the columns `cols` of a record (empty where the record has no
    /// such column) given as its fields' input bytes (see
    /// `SelectedRow::raw_fields`), read with a dialect for which
    /// [`RecordWriter::requotes`] holds: the same bytes as
    /// [`RecordWriter::write`] of those parsed fields. An unquoted field
    /// needs no quoting here (it holds no delimiter, quote, CR or LF); a
    /// quoted one that needs quoting is already written as this writer
    /// would write it, quotes doubled; a quoted one that does not loses
    /// its quotes. False, having
    /// written nothing, when this writer does not write CSV.
    pub fn write_requoted_cols(&mut self, fields: &fastcsv::RawFields<'_>, cols: &[usize]) -> bool {
        let Kind::Csv { needles, delimiter } = &self.kind else {
            return false;
        };
        let rec = fields.record();
        let out = &mut self.out;
        let mut last_empty = false;
        for (i, &c) in cols.iter().enumerate() {
            if i > 0 {
                out.push(*delimiter);
            }
            let raw = fields.get(c).map_or(&[][..], |f| &rec[f]);
            let (written, value) = requoted(raw, needles);
            append(out, written);
            last_empty = value.is_empty();
        }
        // As in `write`: one empty field is quoted.
        if cols.len() == 1 && last_empty {
            out.extend_from_slice(b"\"\"");
        }
        out.push(b'\n');
        true
    }
}

/// Replaces every byte `from[0]` of `s` with `to[0]`, and every `from[1]`
/// with `to[1]` (a loop the compiler vectorises).
#[inline]
fn replace(s: &mut [u8], from: [u8; 2], to: [u8; 2]) {
    for b in s {
        let x = *b;
        *b = if x == from[0] {
            to[0]
        } else if x == from[1] {
            to[1]
        } else {
            x
        };
    }
}

/// Appends `s` to `v`: up to 32 bytes with two overlapping moves of the
/// widest size that fits (reading no byte outside `s`, writing none past
/// the new length), longer slices with `extend_from_slice`. A call to
/// `memcpy` per field cost more than the copy (a large share of
/// `fastcsv select -j1` on quoted text, in perf).
#[inline(always)]
fn append(v: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n > 32 {
        v.extend_from_slice(s);
        return;
    }
    v.reserve(n);
    let len = v.len();
    // SAFETY: `n` bytes are reserved past `len`. Every read is of `W`
    // bytes at offset 0 or `n - W` of `s`, with `W <= n`, so inside `s`;
    // every write is at the same offsets from `d`, inside the `n` bytes
    // reserved. Those `n` bytes are all written (the two moves overlap
    // or meet) before the length covers them.
    unsafe {
        let (p, d) = (s.as_ptr(), v.as_mut_ptr().add(len));
        macro_rules! two {
            ($t:ty) => {{
                const W: usize = std::mem::size_of::<$t>();
                let (a, b) = (
                    (p as *const $t).read_unaligned(),
                    (p.add(n - W) as *const $t).read_unaligned(),
                );
                (d as *mut $t).write_unaligned(a);
                (d.add(n - W) as *mut $t).write_unaligned(b);
            }};
        }
        if n >= 16 {
            two!(u128);
        } else if n >= 8 {
            two!(u64);
        } else if n >= 4 {
            two!(u32);
        } else if n > 0 {
            *d = *p;
            *d.add(n / 2) = *p.add(n / 2);
            *d.add(n - 1) = *p.add(n - 1);
        }
        v.set_len(len + n);
    }
}

/// True when the fields of the record `raw` (joined by `d`, an ASCII byte
/// other than `"` and `\\`) are JSON strings as they are: no control byte
/// (but `d`), `"` or `\\`, and valid UTF-8. One pass without branches
/// (vectorised), then UTF-8 validation of the whole record only if it
/// holds a non-ASCII byte (a record of valid UTF-8 split at ASCII bytes
/// gives valid UTF-8 fields).
#[inline]
fn json_plain(raw: &[u8], d: u8) -> bool {
    let bits = |b: u8| (b >= 0x80) as u8 | (((b < 0x20) | (b == b'"') | (b == b'\\')) as u8) << 1;
    let seen = if d >= 0x20 {
        raw.iter().fold(0u8, |a, &b| a | bits(b))
    } else {
        raw.iter().fold(0u8, |a, &b| a | (bits(b) & !(((b == d) as u8) << 1)))
    };
    match seen {
        0 => true,
        1 => d < 0x80 && simdutf8::basic::from_utf8(raw).is_ok(),
        _ => false,
    }
}

/// Appends the JSON line of the `n` fields of a record that
/// [`json_plain`] accepts, given by their ranges of `fields.record()`;
/// `total` is `seps.total(n)`. Separators and fields are copied with
/// 16-byte moves that may write past their end (the next copy overwrites
/// those bytes; the space is reserved), so that a short field costs no
/// branch on its length.
#[inline(always)]
fn json_fields(
    v: &mut Vec<u8>,
    seps: &JsonSeps,
    fields: &fastcsv::RawFields<'_>,
    n: usize,
    total: usize,
) {
    /// Room for the moves past the end of the last copy.
    const SLACK: usize = 2 * 16;
    let rec = fields.record();
    v.reserve(rec.len() + total + SLACK);
    let cap = v.capacity();
    let mut o = v.len();
    let base = v.as_mut_ptr();
    let sb = &seps.bytes;
    for j in 0..n {
        let k = if seps.array { j.min(1) } else { j };
        let (a, e) = (seps.at[k] as usize, seps.at[k + 1] as usize);
        let r = fields.get(j).expect("a record has its field count of fields");
        let f = &rec[r.clone()];
        // Whatever the ranges, no write goes past the capacity.
        assert!(o + (e - a) + f.len() + SLACK <= cap, "JSON line past its reserved size");
        // SAFETY: `sb[a..a + 16]` is inside `sb`: `a` is at most the
        // offset of the last separator's end, which `SEP_PAD` bytes follow.
        // The writes are at `o`, below `o + (e - a) + 16` and then at
        // `o + (e - a)`, below that plus `max(16, f.len())`: all inside
        // the capacity by the assertion. Reads of the field are inside
        // `rec`: 16 bytes from its start only when they fit before
        // `rec`'s end, else `f.len() < 16` bytes by the moves of
        // `copy_short`.
        unsafe {
            let d = base.add(o);
            let s = sb.as_ptr().add(a);
            (d as *mut u128).write_unaligned((s as *const u128).read_unaligned());
            if e - a > 16 {
                std::ptr::copy_nonoverlapping(s, d, e - a);
            }
            o += e - a;
            let d = base.add(o);
            let src = f.as_ptr();
            if r.start + 16 <= rec.len() {
                (d as *mut u128).write_unaligned((src as *const u128).read_unaligned());
                if f.len() > 16 {
                    std::ptr::copy_nonoverlapping(src, d, f.len());
                }
            } else {
                copy_short(src, d, f.len());
            }
            o += f.len();
        }
    }
    assert!(o + seps.end.len() <= cap, "JSON line past its reserved size");
    // SAFETY: the 3 end bytes fit in the capacity (asserted); every byte
    // up to `o` was written above (the separators and fields are
    // contiguous), so the new length covers only written bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(seps.end.as_ptr(), base.add(o), seps.end.len());
        v.set_len(o + seps.end.len());
    }
}

/// Copies `n < 16` bytes from `src` to `dst` with overlapping moves.
///
/// # Safety
///
/// `src` is valid for reading `n` bytes, `dst` for writing `n` bytes, and
/// the two do not overlap.
#[inline(always)]
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    debug_assert!(n < 16);
    // SAFETY: each read is `W <= n` bytes at offset 0 or `n - W` of `src`,
    // each write the same of `dst`: inside the `n` bytes of both.
    unsafe {
        macro_rules! two {
            ($t:ty) => {{
                const W: usize = std::mem::size_of::<$t>();
                let (a, b) = (
                    (src as *const $t).read_unaligned(),
                    (src.add(n - W) as *const $t).read_unaligned(),
                );
                (dst as *mut $t).write_unaligned(a);
                (dst.add(n - W) as *mut $t).write_unaligned(b);
            }};
        }
        if n >= 8 {
            two!(u64);
        } else if n >= 4 {
            two!(u32);
        } else if n > 0 {
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
    }
}

/// For a field's input bytes `raw` from a record the block scanner took
/// (see `RecordWriter::write_requoted_cols`): the bytes CSV output with these
/// `needles` has for it, and its value. A quoted field keeps its quotes
/// (its inner quotes are already doubled) only if its value holds a
/// needle; an unquoted one is its value and holds none.
#[inline(always)]
fn requoted<'a>(raw: &'a [u8], needles: &Needles) -> (&'a [u8], &'a [u8]) {
    match raw {
        [b'"', inner @ .., _] if needles.any(inner) => (raw, inner),
        [b'"', inner @ .., _] => (inner, inner),
        _ => (raw, raw),
    }
}

/// Writes a CSV field, quoted only if it holds one of the `needles`.
#[inline(always)]
fn csv_field(out: &mut impl Write, f: &[u8], needles: &Needles) -> io::Result<()> {
    if !needles.any(f) {
        return out.write_all(f);
    }
    out.write_all(b"\"")?;
    let mut rest = f;
    while let Some(i) = memchr::memchr(b'"', rest) {
        out.write_all(&rest[..=i])?;
        out.write_all(b"\"")?;
        rest = &rest[i + 1..];
    }
    out.write_all(rest)?;
    out.write_all(b"\"")
}

/// Writes a TSV field with TAB, LF, CR and backslash escaped.
#[inline]
fn tsv_field(out: &mut impl Write, f: &[u8]) -> io::Result<()> {
    if !TSV_NEEDLES.any(f) {
        return out.write_all(f);
    }
    let mut start = 0;
    for (i, &b) in f.iter().enumerate() {
        if matches!(b, b'\t' | b'\n' | b'\r' | b'\\') {
            out.write_all(&f[start..i])?;
            out.write_all(match b {
                b'\t' => b"\\t",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                _ => b"\\\\",
            })?;
            start = i + 1;
        }
    }
    out.write_all(&f[start..])
}

/// Writes `s` as a JSON string literal.
fn json_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    let f = s.as_bytes();
    out.write_all(b"\"")?;
    if !JSON_NEEDLES.any(f) {
        out.write_all(f)?;
        return out.write_all(b"\"");
    }
    let mut start = 0;
    for (i, &b) in f.iter().enumerate() {
        if b < 0x20 || b == b'"' || b == b'\\' {
            out.write_all(&f[start..i])?;
            match b {
                b'"' => out.write_all(b"\\\"")?,
                b'\\' => out.write_all(b"\\\\")?,
                b'\n' => out.write_all(b"\\n")?,
                b'\r' => out.write_all(b"\\r")?,
                b'\t' => out.write_all(b"\\t")?,
                _ => write!(out, "\\u{b:04x}")?,
            }
            start = i + 1;
        }
    }
    out.write_all(&f[start..])?;
    out.write_all(b"\"")
}

/// Appends `s` as a JSON string literal to `v`.
pub fn json_string(v: &mut Vec<u8>, s: &str) {
    json_str(v, s).expect("writing to a Vec cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(format: Format, keys: Option<&[&[u8]]>, rows: &[&[&[u8]]]) -> String {
        let mut w = RecordWriter::new(Vec::new(), format, b',', keys);
        for r in rows {
            w.write(r.iter().copied()).unwrap();
        }
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn csv_quotes_minimally() {
        let out = render(
            Format::Csv,
            None,
            &[&[b"plain", b"a,b", b"say \"hi\"", b"two\nlines", b"cr\r", b""], &[b""], &[]],
        );
        assert_eq!(out, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\r\",\n\"\"\n\n");
    }

    proptest::proptest! {
        /// Records written from their input bytes equal records written
        /// from their parsed fields, for every record the block scanner
        /// takes: fields of quotes, delimiters, CR, LF, spaces, UTF-8,
        /// quoted or not, some longer than a block; CR, LF or CRLF line
        /// ends. Columns from their input bytes (`Selection::raw`, as
        /// `select` writes them), and whole records as CSV pieces and runs
        /// (quotes to drop marked by the scanner: `Selection::csv`, as
        /// `cat` writes them).
        #[test]
        fn requoted_records_equal_written_fields(
            rows in proptest::collection::vec(
                proptest::collection::vec(
                    (proptest::bool::ANY, "[a,\"\r\n é;]{0,12}", 1..8usize), 1..5),
                1..40),
            ends in proptest::collection::vec(0..3usize, 40),
            cols in proptest::collection::vec(0..6usize, 1..4),
        ) {
            // Build the input: every field holding a special byte quoted
            // (and some others); quotes doubled.
            let mut text = String::from("h\n");
            for (row, end) in rows.iter().zip(&ends) {
                let fields: Vec<String> = row.iter().map(|(quote, v, times)| {
                    let v = if *times > 5 { v.repeat(*times * 2) } else { v.clone() };
                    if *quote || v.contains([',', '"', '\r', '\n']) || v.is_empty() {
                        format!("\"{}\"", v.replace('"', "\"\""))
                    } else {
                        v
                    }
                }).collect();
                text.push_str(&fields.join(","));
                text.push_str(["\n", "\r\n", "\r"][*end]);
            }
            let d = fastcsv::Dialect::builder().flexible(true).build().unwrap();
            let reader = || fastcsv::Reader::builder().dialect(d.clone()).from_slice(text.as_bytes());
            let new = || RecordWriter::new(Vec::new(), Format::Csv, b',', None);
            // From the parsed fields: all of them, and some columns
            // (repeated, or past the end).
            let (mut by_fields, mut cols_by_fields) = (new(), new());
            let (mut rdr, mut sel) = (reader(), fastcsv::Selection::all());
            while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
                for row in b.iter() {
                    by_fields.write(row.iter()).unwrap();
                    let n = row.len();
                    cols_by_fields.write(cols.iter().map(|&c| if c < n { row.get(c) } else { &[][..] })).unwrap();
                }
            }
            // The columns from their input bytes (`Selection::raw`).
            let mut cols_marked = new();
            proptest::prop_assert!(cols_marked.requotes(&d));
            let mut taken = 0;
            let (mut rdr, mut sel) = (reader(), fastcsv::Selection::raw());
            while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
                for row in b.iter() {
                    match row.raw_fields() {
                        Some(f) => {
                            taken += 1;
                            proptest::prop_assert!(cols_marked.write_requoted_cols(&f, &cols));
                        }
                        None => {
                            let n = row.len();
                            cols_marked.write(cols.iter().map(|&c| if c < n { row.get(c) } else { &[][..] })).unwrap();
                        }
                    }
                }
            }
            // Whole records as CSV pieces, one by one, and in runs where
            // they can be (as `cat` writes them).
            let (mut pieces, mut runs) = (new(), new());
            let (mut rdr, mut sel) = (reader(), fastcsv::Selection::csv());
            while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
                for row in b.iter() {
                    match row.csv_pieces() {
                        Some(p) => proptest::prop_assert!(pieces.write_pieces(p).unwrap()),
                        None => pieces.write(row.iter()).unwrap(),
                    }
                }
                let mut i = 0;
                while i < b.len() {
                    let (n, run) = b.csv_run(i);
                    if n > 0 {
                        // As `cat` writes them, and the same as the pieces
                        // one by one.
                        let mut one_by_one = b"x".to_vec();
                        for piece in run.clone() {
                            one_by_one.extend_from_slice(piece);
                        }
                        let mut appended = b"x".to_vec();
                        run.clone().append_to(&mut appended);
                        proptest::prop_assert_eq!(&appended, &one_by_one);
                        run.append_to(runs.get_mut());
                        i += n;
                        continue;
                    }
                    let row = b.row(i);
                    i += 1;
                    match row.csv_pieces() {
                        Some(p) => proptest::prop_assert!(runs.write_pieces(p).unwrap()),
                        None => runs.write(row.iter()).unwrap(),
                    }
                }
            }
            let a = by_fields.into_inner().unwrap();
            for b in [pieces.into_inner().unwrap(), runs.into_inner().unwrap()] {
                proptest::prop_assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
            }
            let (a, b) = (cols_by_fields.into_inner().unwrap(), cols_marked.into_inner().unwrap());
            proptest::prop_assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
            // Regular input: the block scanner takes nearly all of it (not
            // a lone record ending in CR, which may be followed by an LF).
            proptest::prop_assert!(taken > 0 || rows.len() == 1);
        }
    }

    #[test]
    fn csv_round_trips_through_the_reader() {
        let rows: &[&[&[u8]]] = &[&[b"x", b"\"", b",\"\r\n"], &[b"", b"", b"z"]];
        let text = render(Format::Csv, None, rows);
        let d = fastcsv::Dialect::builder().headers(false).build().unwrap();
        let mut rdr = fastcsv::Reader::builder().dialect(d).from_slice(text.as_bytes());
        for want in rows {
            let row = rdr.read_row().unwrap().unwrap();
            assert_eq!(row.iter().collect::<Vec<_>>(), want.to_vec());
        }
        assert!(rdr.read_row().unwrap().is_none());
    }

    #[test]
    fn needles_find_every_byte_at_every_position() {
        // Lengths past 48: the 8-byte words, and the 16-byte chunks with
        // their overlapping last one.
        let csv = Needles::new([b';', b'"', b'\r', b'\n'], false);
        for len in 0..50 {
            let plain = vec![b'x'; len];
            assert!(!csv.any(&plain));
            assert!(!JSON_NEEDLES.any(&plain) && !TSV_NEEDLES.any(&plain));
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut f = plain.clone();
                    f[at] = b;
                    let want = matches!(b, b';' | b'"' | b'\r' | b'\n');
                    assert_eq!(csv.any(&f), want, "{b} at {at} of {len}");
                    let want = b < 0x20 || b == b'"' || b == b'\\';
                    assert_eq!(JSON_NEEDLES.any(&f), want, "{b} at {at} of {len}");
                    let want = matches!(b, b'\t' | b'\n' | b'\r' | b'\\');
                    assert_eq!(TSV_NEEDLES.any(&f), want, "{b} at {at} of {len}");
                }
            }
        }
        // The padding byte never matches, whatever the needles.
        assert!(!Needles::new(*b"abcd", false).any(b"xyz"));
    }

    #[test]
    fn plain_records_are_written_as_their_fields() {
        let keys: [&[u8]; 2] = [b"a", b"b"];
        for format in [Format::Jsonl, Format::Tsv, Format::Csv] {
            for keys in [Some(&keys[..]), None] {
                for (raw, d) in [
                    (&b"1,2"[..], b','),
                    (b"1.5;x y", b';'),
                    (b"1\t2\t3", b'\t'),
                    (b",", b','),
                    (b"a\"b,c", b','),
                    (b"a\\b,c", b','),
                    (b"a\tb,c", b','),
                    (b"\xc3\xa9,c", b','),
                    (b"a\x01,c", b','),
                ] {
                    let mut plain = RecordWriter::new(Vec::new(), format, b',', keys);
                    let mut each = RecordWriter::new(Vec::new(), format, b',', keys);
                    each.write(raw.split(|&b| b == d)).unwrap();
                    if plain.write_plain(raw, d) {
                        assert_eq!(plain.get_mut(), each.get_mut(), "{format:?} {raw:?}");
                    } else {
                        assert!(plain.get_mut().is_empty());
                        let needs = raw.iter().any(|&b| b < 0x20 && b != d || b >= 0x80)
                            || raw.contains(&b'"')
                            || raw.contains(&b'\\')
                            || format == Format::Csv;
                        assert!(needs, "{format:?} {raw:?} could be written plain");
                    }
                }
            }
        }
    }

    /// Records written by `write_plain_row` (from the scanner's delimiter
    /// offsets) equal those written from their parsed fields, or nothing
    /// is written and the record needs the slow path: keys needing
    /// escapes, long keys and fields (past the 16-byte moves), empty
    /// fields, fields at a record's end, non-ASCII and control bytes,
    /// quotes, ragged records (more fields than keys), TAB delimiters.
    #[test]
    fn plain_rows_equal_written_fields() {
        let long = "x".repeat(40);
        let mid = "y".repeat(16);
        let keys_text =
            ["a,b,c".to_string(), format!("\"q\"\"k\",{long},\"t\tab\",\u{e9}"), "k".to_string()];
        let bodies = [
            "1,2,3\n,,\n4,,\n,,5\n".to_string(),
            format!("{long},{mid},1\n{mid},{long},{mid}\n{mid}1,2,{long}{mid}\n"),
            "1,2,3,4,5\n1\n\n7,8\n".to_string(),
            "\u{e9},a,b\na\u{1},b,c\n\"q\",b,c\na\\b,c,d\na\"b,c,d\n".to_string(),
            "a;b,c\n\u{7f},x,y\n".to_string(),
        ];
        for d in [b',', b'\t', b';'] {
            for keys in &keys_text {
                for body in &bodies {
                    let text = format!("{keys}\n{body}").replace(',', &(d as char).to_string());
                    for headers in [true, false] {
                        let dialect = fastcsv::Dialect::builder()
                            .delimiter(d)
                            .headers(headers)
                            .flexible(true)
                            .build()
                            .unwrap();
                        let reader = || {
                            fastcsv::Reader::builder()
                                .dialect(dialect.clone())
                                .from_slice(text.as_bytes())
                        };
                        let names: Option<Vec<Vec<u8>>> = reader()
                            .headers()
                            .unwrap()
                            .map(|h| h.iter().map(<[u8]>::to_vec).collect());
                        let names: Option<Vec<&[u8]>> =
                            names.as_ref().map(|n| n.iter().map(Vec::as_slice).collect());
                        for format in [Format::Jsonl, Format::Tsv] {
                            let new =
                                || RecordWriter::new(Vec::new(), format, b',', names.as_deref());
                            let (mut fast, mut each) = (new(), new());
                            let (mut rdr, mut sel) = (reader(), fastcsv::Selection::all());
                            rdr.headers().unwrap();
                            let mut plain = 0;
                            while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
                                for row in b.iter() {
                                    let before = fast.get_mut().len();
                                    if fast.write_plain_row(&row, d) {
                                        plain += 1;
                                    } else {
                                        assert_eq!(fast.get_mut().len(), before);
                                        let _ = fast.write(row.iter());
                                    }
                                    let _ = each.write(row.iter());
                                }
                            }
                            let (a, b) = (fast.into_inner().unwrap(), each.into_inner().unwrap());
                            assert_eq!(
                                String::from_utf8_lossy(&a),
                                String::from_utf8_lossy(&b),
                                "{format:?} {text:?} {headers}"
                            );
                            // The records that need escaping are in one body.
                            assert!(plain > 0 || body.contains('q'), "{format:?} {text:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tsv_escapes() {
        let out = render(Format::Tsv, None, &[&[b"a\tb", b"c\\d", b"e\nf\r"]]);
        assert_eq!(out, "a\\tb\tc\\\\d\te\\nf\\r\n");
    }

    #[test]
    fn jsonl_objects_and_arrays() {
        let keys: &[&[u8]] = &[b"na\"me", b"n"];
        let out = render(Format::Jsonl, Some(keys), &[&[b"x\x01\\", b"1", b"extra"]]);
        assert_eq!(out, "{\"na\\\"me\":\"x\\u0001\\\\\",\"n\":\"1\",\"3\":\"extra\"}\n");
        let out = render(Format::Jsonl, None, &[&[b"a", b"\xc3\xa9\t"]]);
        assert_eq!(out, "[\"a\",\"\u{e9}\\t\"]\n");
    }

    #[test]
    fn jsonl_rejects_invalid_utf8() {
        let mut w = RecordWriter::new(Vec::new(), Format::Jsonl, b',', None);
        let e = w.write([&b"ok"[..], b"ab\xff"]).unwrap_err();
        assert!(matches!(e, WriteError::Utf8 { field: 1, valid_up_to: 2 }));
    }
}
