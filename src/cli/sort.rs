//! `fastcsv sort`: records ordered by some columns, as `xsv sort` orders
//! them, in bounded memory.
//!
//! Records are read once, by batches. Each is kept as the bytes the output
//! writes for it (its input bytes when it has no quote and the output's
//! delimiter, else re-quoted as xsv writes it) with its sort key, in an
//! arena; an entry per record holds the key's first 16 bytes and where
//! the record is. Text keys are sorted by a radix sort on those 16 bytes
//! (the buckets of the first byte that splits them on several threads),
//! the rare ties between longer keys by comparing the whole keys; `-N`
//! keys by a stable comparison sort. When the arena reaches the `--memory`
//! budget, its sorted entries go to a temporary file (a run) and the arena
//! starts again; at the end the runs are merged, k ways. Ties keep input
//! order everywhere: the radix sort orders equal keys by their place in
//! the arena, and the merge takes the earlier run first.
//!
//! Keys compare as xsv compares them. Text: field by field, as bytes. The
//! key is encoded so that comparing the encodings as bytes gives that
//! order: each field with its 0x00 bytes written 0x00 0xFF and ended by
//! 0x00 0x00. Numbers (`-N`): a field is an `i64` if Rust parses it as
//! one, else an `f64` if it parses as one, else not a number; xsv stops
//! comparing at the first field that is not a number in either record: a
//! record whose field is not a number sorts before one whose field is,
//! and two such records are equal (input order). NaN is equal to
//! everything, as in xsv.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use fastcsv::{RowBuf, Selection};

use super::args::{Format, SortArgs};
use super::commands::whole_records_writer;
use super::output::{RecordWriter, WriteError};
use super::selection::Selection as Columns;
use super::{json_keys_utf8, path_arg, write_failure, Failure, Input};

/// The default `--memory`: a quarter of physical memory (1 GiB where it is
/// not known).
pub fn default_memory() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: `sysconf` reads system constants; it has no
        // preconditions and returns -1 when a name is unknown.
        let (pages, size) =
            unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
        if pages > 0 && size > 0 {
            return (pages as u64 * size as u64 / 4).min(usize::MAX as u64) as usize;
        }
    }
    1 << 30
}

/// Writes a record with the writer (into its buffer).
type WriteRecord<'a> = dyn Fn(&mut RecordWriter<Vec<u8>>) -> Result<(), WriteError> + 'a;

/// How keys compare.
#[derive(Clone, Copy)]
pub struct Order {
    /// `-N`: as numbers (see the module's documentation).
    pub numeric: bool,
    /// `-R`: the opposite order (ties still in input order).
    pub reverse: bool,
}

impl Order {
    /// Compares two encoded keys (see [`encode_key`]).
    pub fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        let o = if self.numeric { cmp_numeric(a, b) } else { a.cmp(b) };
        if self.reverse {
            o.reverse()
        } else {
            o
        }
    }
}

/// A field read as a number, as xsv reads it.
#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
}

const TAG_NONE: u8 = 0;
const TAG_INT: u8 = 1;
const TAG_FLOAT: u8 = 2;

fn parse_number(f: &[u8]) -> Option<Number> {
    let s = std::str::from_utf8(f).ok()?;
    if let Ok(i) = s.parse::<i64>() {
        return Some(Number::Int(i));
    }
    s.parse::<f64>().ok().map(Number::Float)
}

/// Appends the key of `fields` to `out`: for text, an encoding whose byte
/// order is the fields' order; for numbers, a tag and 8 bytes per field.
pub fn encode_key<'a>(out: &mut Vec<u8>, numeric: bool, fields: impl Iterator<Item = &'a [u8]>) {
    for f in fields {
        if numeric {
            match parse_number(f) {
                Some(Number::Int(i)) => {
                    out.push(TAG_INT);
                    out.extend_from_slice(&i.to_le_bytes());
                }
                Some(Number::Float(x)) => {
                    out.push(TAG_FLOAT);
                    out.extend_from_slice(&x.to_bits().to_le_bytes());
                }
                None => out.extend_from_slice(&[TAG_NONE; 9]),
            }
        } else {
            let mut rest = f;
            while let Some(i) = memchr::memchr(0, rest) {
                out.extend_from_slice(&rest[..=i]);
                out.push(0xFF);
                rest = &rest[i + 1..];
            }
            out.extend_from_slice(rest);
            out.extend_from_slice(&[0, 0]);
        }
    }
}

fn decode_number(k: &[u8]) -> Option<Number> {
    let v = u64::from_le_bytes(k[1..9].try_into().expect("9-byte numeric key fields"));
    match k[0] {
        TAG_INT => Some(Number::Int(v as i64)),
        TAG_FLOAT => Some(Number::Float(f64::from_bits(v))),
        _ => None,
    }
}

/// xsv's `iter_cmp_num` over encoded numeric keys.
fn cmp_numeric(a: &[u8], b: &[u8]) -> Ordering {
    let (mut a, mut b) = (a.chunks_exact(9), b.chunks_exact(9));
    loop {
        let (x, y) = (a.next().and_then(decode_number), b.next().and_then(decode_number));
        let o = match (x, y) {
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(Number::Int(i)), Some(Number::Int(j))) => i.cmp(&j),
            (Some(x), Some(y)) => {
                let f = |n| match n {
                    Number::Int(i) => i as f64,
                    Number::Float(f) => f,
                };
                f(x).partial_cmp(&f(y)).unwrap_or(Ordering::Equal)
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
}

/// A record in the arena: the first 16 bytes of its text key as two
/// big-endian numbers, zero-padded (complemented for `-R`), which settle
/// most comparisons without reading the arena, and where the record is
/// in the arena (see [`Arena`]). Bit 63 of `at` is set when the key is
/// longer than 16 bytes. The encoded text keys are prefix-free (every key
/// has as many fields, and a field ends with 0x00 0x00, which no field
/// holds), so two keys with the same padded 16 bytes are equal when both
/// fit in them, and both are longer otherwise: ordering entries by
/// `(k0, k1, at)` is ordering them by key, then input order, whenever a
/// tie does not need the rest of the keys.
#[derive(Clone, Copy)]
struct Entry {
    k0: u64,
    k1: u64,
    at: u64,
}

/// `Entry::at`'s flag: the key is longer than its 16 bytes in the entry.
const LONG_KEY: u64 = 1 << 63;

/// `k0` and `k1` of a `-N` entry (whose key is in the arena).
const NUMERIC: u64 = 0;

impl Entry {
    /// Byte `d` (0..16) of the entry's 16 key bytes.
    #[inline(always)]
    fn byte(&self, d: usize) -> usize {
        let k = if d < 8 { self.k0 } else { self.k1 };
        (k >> (56 - 8 * (d & 7))) as usize & 0xFF
    }

    fn sort_key(&self) -> (u64, u64, u64) {
        (self.k0, self.k1, self.at)
    }
}

/// The records read since the last run was written: for each, at
/// `Entry::at` of `data`, the key's length and the record's (LEB128
/// varints), the encoded key when the entry does not hold all of it (`-N`,
/// or longer than 16 bytes) and the record's output bytes.
struct Arena {
    data: Vec<u8>,
    entries: Vec<Entry>,
    /// `-N`: every key is in `data`.
    numeric: bool,
}

/// Appends `x` as an LEB128 varint (7 bits a byte, low first).
pub fn put_varint(b: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        b.push(x as u8 | 0x80);
        x >>= 7;
    }
    b.push(x as u8);
}

/// Reads a varint [`put_varint`] wrote at the start of `b`, and moves past
/// it.
pub fn take_varint(b: &mut &[u8]) -> u64 {
    let mut x = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[0];
        *b = &b[1..];
        x |= u64::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return x;
        }
        shift += 7;
    }
}

impl Arena {
    /// The key's length, the key as stored (empty when the entry holds
    /// all of it) and the output bytes of `e`.
    fn parts(&self, e: &Entry) -> (usize, &[u8], &[u8]) {
        let mut b = &self.data[(e.at & !LONG_KEY) as usize..];
        let klen = take_varint(&mut b) as usize;
        let rlen = take_varint(&mut b) as usize;
        let stored = if self.stores(e) { klen } else { 0 };
        (klen, &b[..stored], &b[stored..stored + rlen])
    }

    /// Whether the key of `e` is in the arena.
    fn stores(&self, e: &Entry) -> bool {
        self.numeric || e.at & LONG_KEY != 0
    }

    /// The key of a long or numeric entry.
    fn key(&self, e: &Entry) -> &[u8] {
        self.parts(e).1
    }

    /// The whole key of `e`, into `out`.
    fn key_into(&self, e: &Entry, out: &mut Vec<u8>) {
        let (klen, stored, _) = self.parts(e);
        out.clear();
        if stored.len() == klen {
            out.extend_from_slice(stored);
        } else {
            out.extend_from_slice(&e.k0.to_be_bytes());
            out.extend_from_slice(&e.k1.to_be_bytes());
            out.truncate(klen);
        }
    }

    fn rec(&self, e: &Entry) -> &[u8] {
        self.parts(e).2
    }

    /// Bytes held, counting the entries three times (the vector's room
    /// to grow, up to twice its length, and the radix sort's buffer, at
    /// most as long).
    fn held(&self) -> usize {
        self.data.len() + self.entries.len() * size_of::<Entry>() * 3
    }

    /// Adds a record of key `key` (encoded) whose output bytes are `rec`,
    /// and an LF when `newline`; false when a length does not fit in 32
    /// bits.
    fn push(&mut self, key: &[u8], rec: &[u8], newline: bool) -> bool {
        let numeric = self.numeric;
        let rlen = rec.len() + usize::from(newline);
        if u32::try_from(key.len()).is_err() || u32::try_from(rlen).is_err() {
            return false;
        }
        let at = self.data.len() as u64;
        put_varint(&mut self.data, key.len() as u64);
        put_varint(&mut self.data, rlen as u64);
        let long = !numeric && key.len() > 16;
        if numeric || long {
            self.data.extend_from_slice(key);
        }
        self.data.extend_from_slice(rec);
        if newline {
            self.data.push(b'\n');
        }
        let (k0, k1) = if numeric {
            (NUMERIC, NUMERIC)
        } else {
            let mut p = [0u8; 16];
            let n = key.len().min(16);
            p[..n].copy_from_slice(&key[..n]);
            let k0 = u64::from_be_bytes(p[..8].try_into().expect("8 bytes"));
            (k0, u64::from_be_bytes(p[8..].try_into().expect("8 bytes")))
        };
        if self.entries.len() == self.entries.capacity() {
            let n = self.entries.len();
            self.entries.reserve(n.max(4096));
            prefault(&self.entries, n * size_of::<Entry>(), usize::MAX);
        }
        self.entries.push(Entry { k0, k1, at: at | if long { LONG_KEY } else { 0 } });
        true
    }

    /// Sorts the entries, stably, on up to `threads` threads.
    fn sort(&mut self, order: Order, threads: usize) {
        let mut entries = std::mem::take(&mut self.entries);
        if order.numeric {
            self.sort_numeric(&mut entries, order, threads);
        } else {
            if order.reverse {
                for e in &mut entries {
                    e.k0 = !e.k0;
                    e.k1 = !e.k1;
                }
            }
            radix_sort(&mut entries, threads);
            if order.reverse {
                for e in &mut entries {
                    e.k0 = !e.k0;
                    e.k1 = !e.k1;
                }
            }
            // Ties on the first 16 bytes of keys longer than that: by the
            // whole key, stably (the run is in input order).
            let mut i = 0;
            while i < entries.len() {
                let e = entries[i];
                let mut j = i + 1;
                while j < entries.len() && (entries[j].k0, entries[j].k1) == (e.k0, e.k1) {
                    j += 1;
                }
                if j - i > 1 && e.at & LONG_KEY != 0 {
                    let this = &*self;
                    entries[i..j].sort_by(|a, b| order.cmp(this.key(a), this.key(b)));
                }
                i = j;
            }
        }
        self.entries = entries;
    }

    /// `-N`: a stable comparison sort on the keys, on up to `threads`
    /// threads (sorted parts merged pairwise, the earlier first on ties).
    fn sort_numeric(&self, entries: &mut Vec<Entry>, order: Order, threads: usize) {
        let cmp = |a: &Entry, b: &Entry| order.cmp(self.key(a), self.key(b));
        par_sort_by(entries, threads, true, cmp);
    }

    fn clear(&mut self) {
        self.data.clear();
        self.entries.clear();
    }
}

/// Sorts `v` by `cmp` on up to `threads` threads (at least 65,536
/// entries each): each thread sorts a slice, then the sorted slices are
/// merged pairwise, the earlier first on ties. Stable when `stable`; else
/// the slices are sorted by the faster unstable sort (for an order where
/// no two entries compare equal, the same result).
pub fn par_sort_by<T, F>(v: &mut Vec<T>, threads: usize, stable: bool, cmp: F)
where
    T: Copy + Send,
    F: Fn(&T, &T) -> Ordering + Copy + Send,
{
    let sort = move |s: &mut [T]| if stable { s.sort_by(cmp) } else { s.sort_unstable_by(cmp) };
    let parts = threads.min(v.len() / 65_536).max(1);
    if parts == 1 {
        sort(v);
        return;
    }
    let size = v.len().div_ceil(parts);
    std::thread::scope(|s| {
        for chunk in v.chunks_mut(size) {
            s.spawn(move || sort(chunk));
        }
    });
    let mut runs: Vec<Vec<T>> = v.chunks(size).map(<[T]>::to_vec).collect();
    v.clear();
    while runs.len() > 1 {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => merge(&a, &b, cmp),
                None => a,
            });
        }
        runs = next;
    }
    *v = runs.pop().unwrap_or_default();
}

/// Merges two sorted slices, `a`'s entry first on ties.
fn merge<T: Copy>(a: &[T], b: &[T], cmp: impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if cmp(&b[j], &a[i]) == Ordering::Less {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Below this many entries a slice is sorted by comparisons.
const RADIX_MIN: usize = 64;

/// Sorts `v` by `(k0, k1, at)`: a most-significant-byte-first radix sort
/// on the 16 key bytes, and a comparison sort for short slices. The first
/// byte that splits `v` is sorted in place (American flag sort), which
/// needs no second buffer as large as `v` but leaves each bucket out of
/// input order; each bucket is then sorted out of place, with a buffer as
/// large as the largest bucket, on up to `threads` threads.
fn radix_sort(v: &mut [Entry], threads: usize) {
    if v.len() <= RADIX_MIN {
        v.sort_unstable_by_key(Entry::sort_key);
        return;
    }
    let first = v[0];
    let (mut x0, mut x1) = (0, 0);
    for e in v.iter() {
        x0 |= e.k0 ^ first.k0;
        x1 |= e.k1 ^ first.k1;
    }
    if (x0 | x1) == 0 {
        // Equal keys, in input order already.
        return;
    }
    let d = if x0 != 0 { x0.leading_zeros() / 8 } else { 8 + x1.leading_zeros() / 8 } as usize;
    let mut count = [0usize; 256];
    for e in v.iter() {
        count[e.byte(d)] += 1;
    }
    let (mut next, mut end) = ([0usize; 256], [0usize; 256]);
    let mut sum = 0;
    for b in 0..256 {
        next[b] = sum;
        sum += count[b];
        end[b] = sum;
    }
    for b in 0..256 {
        while next[b] < end[b] {
            let mut e = v[next[b]];
            loop {
                let t = e.byte(d);
                if t == b {
                    break;
                }
                std::mem::swap(&mut e, &mut v[next[t]]);
                next[t] += 1;
            }
            v[next[b]] = e;
            next[b] += 1;
        }
    }
    let largest = count.iter().copied().max().unwrap_or(0);
    let scratch = || {
        let mut tmp = Vec::with_capacity(largest);
        prefault(&tmp, 0, largest * size_of::<Entry>());
        tmp.resize(largest, Entry { k0: 0, k1: 0, at: 0 });
        tmp
    };
    let mut buckets = Vec::new();
    let mut rest = v;
    for &c in &count {
        let (b, r) = std::mem::take(&mut rest).split_at_mut(c);
        rest = r;
        if c > 0 {
            buckets.push(b);
        }
    }
    if threads <= 1 {
        let mut tmp = scratch();
        for b in buckets {
            let n = b.len();
            msd(b, &mut tmp[..n], d + 1, true, false);
        }
        return;
    }
    // Largest first, each thread taking the next bucket left.
    buckets.sort_by_key(|b| std::cmp::Reverse(b.len()));
    let queue = std::sync::Mutex::new(buckets.into_iter());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut tmp = scratch();
                loop {
                    let job = queue.lock().expect("no thread panics holding it").next();
                    let Some(b) = job else { return };
                    let n = b.len();
                    msd(b, &mut tmp[..n], d + 1, true, false);
                }
            });
        }
    });
}

/// [`radix_sort`] of `src`, whose entries share their key bytes before
/// byte `d`; when `ordered`, each set of equal keys is in input order
/// (ascending `at`), as the buckets of a stable radix pass are. The result
/// goes to `src` when `into_src`, else to `other`.
fn msd(src: &mut [Entry], other: &mut [Entry], mut d: usize, into_src: bool, ordered: bool) {
    if src.len() <= RADIX_MIN || d == 16 {
        if d < 16 {
            src.sort_unstable_by_key(Entry::sort_key);
        } else if !ordered {
            // All 16 bytes are equal: input order.
            src.sort_unstable_by_key(|e| e.at);
        }
        if !into_src {
            other.copy_from_slice(src);
        }
        return;
    }
    // Count byte `d`, and find the bytes that differ at all.
    let first = src[0];
    let (mut x0, mut x1) = (0, 0);
    let mut count = [0usize; 256];
    for e in src.iter() {
        count[e.byte(d)] += 1;
        x0 |= e.k0 ^ first.k0;
        x1 |= e.k1 ^ first.k1;
    }
    if count[first.byte(d)] == src.len() {
        // Byte `d` splits nothing: go to the first byte that does.
        if (x0 | x1) == 0 {
            if !ordered {
                src.sort_unstable_by_key(|e| e.at);
            }
            if !into_src {
                other.copy_from_slice(src);
            }
            return;
        }
        d = if x0 != 0 { x0.leading_zeros() / 8 } else { 8 + x1.leading_zeros() / 8 } as usize;
        count.fill(0);
        for e in src.iter() {
            count[e.byte(d)] += 1;
        }
    }
    let mut next = [0usize; 256];
    let mut sum = 0;
    for (n, c) in next.iter_mut().zip(&count) {
        *n = sum;
        sum += c;
    }
    for e in src.iter() {
        let b = e.byte(d);
        other[next[b]] = *e;
        next[b] += 1;
    }
    // The buckets, now in `other`, each sorted into `src` (or left there).
    let (mut rest, mut rest_src) = (other, src);
    for &c in &count {
        let (b, r) = std::mem::take(&mut rest).split_at_mut(c);
        let (bs, rs) = std::mem::take(&mut rest_src).split_at_mut(c);
        (rest, rest_src) = (r, rs);
        if c > 0 {
            msd(b, bs, d + 1, !into_src, ordered);
        }
    }
}

/// Makes the pages of `v`'s buffer from byte `from` to byte `to`
/// (within its capacity) present in one call (Linux's
/// `MADV_POPULATE_WRITE`) rather than one page fault at a time as they are
/// first written: hundreds of MiB filled once cost the kernel far less
/// this way. Only a hint: where it is refused, the pages fault in as
/// usual.
fn prefault<T>(v: &Vec<T>, from: usize, to: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let base = v.as_ptr() as usize;
        let end = base + (to.min(v.capacity() * size_of::<T>()));
        let start = (base + from).next_multiple_of(PAGE);
        let end = end / PAGE * PAGE;
        if start < end {
            // SAFETY: `start..end` lies within `v`'s allocation (its
            // capacity). MADV_POPULATE_WRITE only faults those pages in
            // as a write would, without changing any byte: the memory
            // stays as `v` left it.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE)
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (v, from, to);
}

/// A temporary file for the command `what`, removed from its directory as
/// soon as it is created (on Unix), so nothing is left behind whatever
/// happens.
pub fn temp_file(dir: &Path, what: &str, n: usize) -> Result<File, Failure> {
    let pid = std::process::id();
    for attempt in 0..100 {
        let p = dir.join(format!(".fastcsv-{what}-{pid}-{n}-{attempt}.tmp"));
        match File::options().read(true).write(true).create_new(true).open(&p) {
            Ok(f) => {
                #[cfg(unix)]
                let _ = std::fs::remove_file(&p);
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Failure::Fatal(format!(
                    "{}: cannot create a temporary file: {e}",
                    dir.display()
                )))
            }
        }
    }
    Err(Failure::Fatal(format!("{}: cannot create a temporary file", dir.display())))
}

/// Writes the arena's sorted entries as a run: `klen rlen key rec` each.
fn write_run(arena: &Arena, dir: &Path, n: usize) -> Result<File, Failure> {
    let tmp_err = |e: io::Error| {
        Failure::Fatal(format!("{}: write error (temporary file): {e}", dir.display()))
    };
    let mut w = BufWriter::with_capacity(1 << 20, temp_file(dir, "sort", n)?);
    let mut key = Vec::new();
    for e in &arena.entries {
        arena.key_into(e, &mut key);
        let rec = arena.rec(e);
        w.write_all(&(key.len() as u32).to_le_bytes()).map_err(tmp_err)?;
        w.write_all(&(rec.len() as u32).to_le_bytes()).map_err(tmp_err)?;
        w.write_all(&key).map_err(tmp_err)?;
        w.write_all(rec).map_err(tmp_err)?;
    }
    let mut f = w.into_inner().map_err(|e| tmp_err(e.into_error()))?;
    f.rewind().map_err(tmp_err)?;
    Ok(f)
}

/// One run being merged: its reader and its current record.
struct RunReader {
    r: BufReader<File>,
    key: Vec<u8>,
    rec: Vec<u8>,
}

impl RunReader {
    /// Reads the next record; false at the run's end.
    fn advance(&mut self) -> io::Result<bool> {
        let mut lens = [0u8; 8];
        match self.r.read_exact(&mut lens) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(e),
        }
        let klen = u32::from_le_bytes(lens[..4].try_into().expect("4 bytes")) as usize;
        let rlen = u32::from_le_bytes(lens[4..].try_into().expect("4 bytes")) as usize;
        self.key.resize(klen, 0);
        self.r.read_exact(&mut self.key)?;
        self.rec.resize(rlen, 0);
        self.r.read_exact(&mut self.rec)?;
        Ok(true)
    }
}

/// `fastcsv sort`.
pub fn sort(a: &SortArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let memory = a.memory.unwrap_or_else(default_memory);
    let tmp_dir: PathBuf = a.tmp_dir.clone().unwrap_or_else(std::env::temp_dir);
    // A mapped file's pages count in the process's resident memory: a
    // file that does not fit the budget easily is read with read().
    let mut args = a.input.clone();
    let size = file.and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len());
    if size > (memory / 4) as u64 {
        args.source = fastcsv::SourceChoice::Buffered;
    }
    let mut input = Input::open(file, &args, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    let (cols, first) = resolve(&mut input, a.select.as_ref(), header.as_ref())?;
    let order = Order { numeric: a.numeric, reverse: a.reverse };
    let threads = a.par.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    let format = a.output.to;
    let delimiter = a.output.delimiter().map_err(Failure::Usage)?;
    let names: Option<Vec<&[u8]>> = header.as_ref().map(|h| h.iter().collect());
    if let (Some(h), Some(n), Format::Jsonl) = (&header, &names, format) {
        json_keys_utf8(&name, n, h.position(), |f| f)?;
    }
    let mut enc = RecordWriter::new(Vec::new(), format, delimiter, names.as_deref());
    // Reserved up front (its pages are touched only as it fills), so that
    // it is not copied as it grows.
    let reserve = (size as usize).saturating_add(size as usize / 2).min(memory / 10 * 7);
    let mut arena =
        Arena { data: Vec::with_capacity(reserve), entries: Vec::new(), numeric: order.numeric };
    let mut runs: Vec<File> = Vec::new();
    // A record without quotes whose delimiter is the output's is written
    // as it is in the input: what the writer would write.
    let d = input.reader.dialect();
    let same_csv = format == Format::Csv
        && d.delimiter() == delimiter
        && d.quote() == Some(b'"')
        && d.terminator() == fastcsv::Terminator::Any;
    let numeric = order.numeric;
    // Adds a record: `key` encodes its key, `raw` is its input bytes when
    // they can be copied, `write` writes it with the writer otherwise.
    let mut kbuf = Vec::new();
    let mut push = |arena: &mut Arena,
                    key: &dyn Fn(&mut Vec<u8>),
                    raw: Option<&[u8]>,
                    write: &WriteRecord<'_>,
                    pos: fastcsv::Position|
     -> Result<(), Failure> {
        kbuf.clear();
        key(&mut kbuf);
        let (rec, newline) = match raw.filter(|r| same_csv && !r.is_empty()) {
            Some(r) => (r, true),
            None => {
                enc.get_mut().clear();
                write(&mut enc).map_err(|e| write_failure(&name, e, pos, |f| f))?;
                (&enc.get_mut()[..], false)
            }
        };
        if !arena.push(&kbuf, rec, newline) {
            return Err(Failure::Fatal(format!(
                "{name}:{}: record {}, byte {}: a record of 4 GiB or more cannot be sorted",
                pos.line, pos.record, pos.byte
            )));
        }
        Ok(())
    };
    if let Some(row) = &first {
        let key = |out: &mut Vec<u8>| match &cols {
            Some(c) => encode_key(out, numeric, c.iter().map(|&i| row.field(i))),
            None => encode_key(out, numeric, row.iter()),
        };
        push(&mut arena, &key, None, &|enc| enc.write(row.iter()), row.position())?;
    }
    // The arena's pages are made present ahead of it (see `prefault`).
    let mut populated = (arena.data.as_ptr() as usize, 0);
    input.each_batch(&mut Selection::all(), |batch| {
        const AHEAD: usize = 32 << 20;
        let (base, len) = (arena.data.as_ptr() as usize, arena.data.len());
        if base != populated.0 {
            populated = (base, len);
        }
        if len + AHEAD / 2 > populated.1 && populated.1 < arena.data.capacity() {
            prefault(&arena.data, populated.1, populated.1 + AHEAD);
            populated.1 += AHEAD;
        }
        for row in batch.iter() {
            let key = |out: &mut Vec<u8>| match &cols {
                Some(c) => encode_key(
                    out,
                    numeric,
                    c.iter().map(|&i| if i < row.len() { row.get(i) } else { &[] }),
                ),
                None => encode_key(out, numeric, row.iter()),
            };
            push(&mut arena, &key, row.raw(), &|enc| enc.write(row.iter()), row.position())?;
            if arena.held() >= memory / 10 * 7 {
                arena.sort(order, threads);
                runs.push(write_run(&arena, &tmp_dir, runs.len())?);
                arena.clear();
            }
        }
        Ok(())
    })?;
    arena.sort(order, threads);
    let mut w = whole_records_writer(&name, header.as_ref(), &a.output, file)?;
    let out = w.get_mut();
    if runs.is_empty() {
        for e in &arena.entries {
            out.write_all(arena.rec(e))?;
        }
        return Ok(w.into_inner()?.flush()?);
    }
    if !arena.entries.is_empty() {
        runs.push(write_run(&arena, &tmp_dir, runs.len())?);
    }
    drop(arena);
    drop(input);
    merge_runs(runs, order, memory, &tmp_dir, out)?;
    Ok(w.into_inner()?.flush()?)
}

/// Merges the sorted runs (in input order) into `out`.
fn merge_runs(
    runs: Vec<File>,
    order: Order,
    memory: usize,
    dir: &Path,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let read_err = |e: io::Error| {
        Failure::Fatal(format!("{}: read error (temporary file): {e}", dir.display()))
    };
    let buf = (memory / 4 / runs.len()).clamp(64 << 10, 8 << 20);
    let mut readers: Vec<RunReader> = Vec::with_capacity(runs.len());
    for f in runs {
        let mut r =
            RunReader { r: BufReader::with_capacity(buf, f), key: Vec::new(), rec: Vec::new() };
        if r.advance().map_err(read_err)? {
            readers.push(r);
        }
    }
    // A binary heap of reader indices, ordered by key then run index.
    let less = |rs: &[RunReader], i: usize, j: usize| match order.cmp(&rs[i].key, &rs[j].key) {
        Ordering::Equal => i < j,
        o => o == Ordering::Less,
    };
    let mut heap: Vec<usize> = (0..readers.len()).collect();
    let sift_down = |rs: &[RunReader], heap: &mut [usize], mut at: usize| loop {
        let (l, r) = (2 * at + 1, 2 * at + 2);
        let mut m = at;
        if l < heap.len() && less(rs, heap[l], heap[m]) {
            m = l;
        }
        if r < heap.len() && less(rs, heap[r], heap[m]) {
            m = r;
        }
        if m == at {
            return;
        }
        heap.swap(at, m);
        at = m;
    };
    for i in (0..heap.len() / 2).rev() {
        sift_down(&readers, &mut heap, i);
    }
    while let Some(&top) = heap.first() {
        out.write_all(&readers[top].rec)?;
        if !readers[top].advance().map_err(read_err)? {
            let last = heap.len() - 1;
            heap.swap(0, last);
            heap.pop();
        }
        sift_down(&readers, &mut heap, 0);
    }
    Ok(())
}

/// A record as the sort and its helpers read it: parsed fields by index
/// (empty past the record's end) and a position for messages.
pub trait RowLike {
    /// Field `i`, empty when the record is shorter.
    fn field(&self, i: usize) -> &[u8];
    /// The number of fields.
    fn len(&self) -> usize;
    /// Where the record starts.
    fn position(&self) -> fastcsv::Position;
}

impl RowLike for fastcsv::Row<'_> {
    fn field(&self, i: usize) -> &[u8] {
        self.get(i).unwrap_or_default()
    }
    fn len(&self) -> usize {
        fastcsv::Row::len(self)
    }
    fn position(&self) -> fastcsv::Position {
        fastcsv::Row::position(self)
    }
}

impl RowLike for RowBuf {
    fn field(&self, i: usize) -> &[u8] {
        self.get(i).unwrap_or_default()
    }
    fn len(&self) -> usize {
        RowBuf::len(self)
    }
    fn position(&self) -> fastcsv::Position {
        RowBuf::position(self)
    }
}

/// The columns of `sel` (`None`: every field of each record), resolved
/// against the header row, or without one against the first record, which
/// is read and returned so that it is not lost.
pub fn resolve(
    input: &mut Input,
    sel: Option<&Columns>,
    header: Option<&RowBuf>,
) -> Result<(Option<Vec<usize>>, Option<RowBuf>), Failure> {
    let Some(sel) = sel else { return Ok((None, None)) };
    if let Some(h) = header {
        let names: Vec<&[u8]> = h.iter().collect();
        return Ok((Some(sel.resolve(Some(&names), names.len()).map_err(Failure::Usage)?), None));
    }
    if input.reader.dialect().headers() {
        // An empty input: no column to resolve, no record to write.
        return Ok((Some(Vec::new()), None));
    }
    match input.reader.read_row()? {
        Some(row) => {
            let c = sel.resolve(None, row.len()).map_err(Failure::Usage)?;
            Ok((Some(c), Some(row.to_owned())))
        }
        None => Ok((Some(Vec::new()), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(numeric: bool, fields: &[&str]) -> Vec<u8> {
        let mut v = Vec::new();
        encode_key(&mut v, numeric, fields.iter().map(|f| f.as_bytes()));
        v
    }

    #[test]
    fn text_keys_order_as_fields() {
        let o = Order { numeric: false, reverse: false };
        let c = |a: &[&str], b: &[&str]| o.cmp(&key(false, a), &key(false, b));
        assert_eq!(c(&["ab"], &["abc"]), Ordering::Less);
        assert_eq!(c(&["ab", "z"], &["abc", "a"]), Ordering::Less);
        assert_eq!(c(&["a\0"], &["a"]), Ordering::Greater);
        assert_eq!(c(&["a\0"], &["a\u{1}"]), Ordering::Less);
        assert_eq!(c(&["a", "b"], &["a", "b"]), Ordering::Equal);
        assert_eq!(c(&["", "b"], &["a", ""]), Ordering::Less);
    }

    #[test]
    fn numeric_keys_order_as_xsv() {
        let o = Order { numeric: true, reverse: false };
        let c = |a: &[&str], b: &[&str]| o.cmp(&key(true, a), &key(true, b));
        assert_eq!(c(&["10"], &["9"]), Ordering::Greater);
        assert_eq!(c(&["1.5"], &["2"]), Ordering::Less);
        assert_eq!(c(&["x"], &["-5"]), Ordering::Less);
        assert_eq!(c(&["x", "2"], &["y", "1"]), Ordering::Equal);
        assert_eq!(c(&["1", "x"], &["1", "2"]), Ordering::Less);
        assert_eq!(c(&["NaN"], &["1"]), Ordering::Equal);
        assert_eq!(c(&["9223372036854775807"], &["9223372036854775806"]), Ordering::Greater);
    }
}
