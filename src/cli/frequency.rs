//! `fastcsv frequency`: exact counts of each column's values, the most
//! frequent first, as `xsv frequency` gives them.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, TryLockError};

use hashbrown::hash_table::{Entry, HashTable};

/// The hash of a value: foldhash, seeded at random once per run and the
/// same on every thread (a value moves into its shard with the hash its
/// counting thread computed).
#[inline]
fn hash(v: &[u8]) -> u64 {
    static STATE: OnceLock<foldhash::fast::RandomState> = OnceLock::new();
    STATE.get_or_init(Default::default).hash_one(v)
}

/// Values of at most this many bytes are kept in their [`Slot`], not in
/// the arena.
const INLINE: usize = 8;

/// A distinct value of a column: its hash, its bytes (those of a value of
/// at most [`INLINE`] bytes, zero padded; else where they start in the
/// [`Frequencies`]' arena, as a native-endian `usize`), its length and
/// its count. A short value (a number, a short code) is compared and read
/// without a call to compare slices and without a visit to the arena,
/// which, in a large table, is a second miss of the cache per value.
#[derive(Clone, Copy)]
struct Slot {
    hash: u64,
    at: [u8; INLINE],
    len: usize,
    count: u64,
}

/// A value's bytes as a [`Slot`] keeps them when they are at most
/// [`INLINE`]: zero padded.
#[inline]
fn inline(v: &[u8]) -> [u8; INLINE] {
    let mut k = [0; INLINE];
    for (k, &b) in k.iter_mut().zip(v) {
        *k = b;
    }
    k
}

impl Slot {
    /// A value's slot: its bytes kept here, or, when longer than
    /// [`INLINE`], pushed onto `arena`.
    #[inline]
    fn new(hash: u64, v: &[u8], count: u64, arena: &mut Vec<u8>) -> Slot {
        let at = if v.len() <= INLINE {
            inline(v)
        } else {
            let start = arena.len();
            arena.extend_from_slice(v);
            start.to_ne_bytes()
        };
        Slot { hash, at, len: v.len(), count }
    }

    /// The value's bytes (`arena` holds those of a long value).
    #[inline]
    fn bytes<'s>(&'s self, arena: &'s [u8]) -> &'s [u8] {
        if self.len <= INLINE {
            &self.at[..self.len]
        } else {
            let start = usize::from_ne_bytes(self.at);
            &arena[start..start + self.len]
        }
    }
}

/// One column's counts. Empty values are counted apart: a column that has
/// seen only those takes 64 bytes and no allocation, so that records of
/// many empty fields take little memory. The values' bytes are in the
/// arena of the [`Frequencies`] the column belongs to.
#[derive(Default)]
struct Column {
    empty: u64,
    values: HashTable<Slot>,
    /// Values counted into `values`, and the sum of the numbers of
    /// distinct values found at each [`Frequencies::drain_into`], since
    /// the column was last judged (at least [`DIRECT_MIN`] values).
    added: u64,
    distinct: u64,
    /// Values are not counted here but listed one by one for the shards
    /// (see [`Frequencies::drain_into`]).
    direct: bool,
}

/// A column whose values were at least three quarters distinct between
/// moves into the shards, over at least this many values, has its values
/// moved one by one from then on (see [`Frequencies::drain_into`]).
const DIRECT_MIN: u64 = 4096;

/// The value `xsv frequency` counts for a field: a UTF-8 field without its
/// leading and trailing white space (`str::trim`, Unicode's white space),
/// so ` a ` counts as `a` and a field of spaces as an empty one; a field
/// that is not UTF-8 as it is.
#[inline]
pub fn trimmed(f: &[u8]) -> &[u8] {
    // White space at either end starts with a byte of 0x09-0x0D or 0x20,
    // or is a character beyond ASCII: a field whose two ends are other
    // ASCII bytes is left as it is without looking at the rest.
    let plain = |b: u8| b < 0x80 && !matches!(b, b'\t'..=b'\r' | b' ');
    match (f.first(), f.last()) {
        (Some(&a), Some(&z)) if plain(a) && plain(z) => f,
        (None, _) | (_, None) => f,
        _ => std::str::from_utf8(f).map_or(f, |s| s.trim().as_bytes()),
    }
}

/// Exact counts of the values of each column seen. Each distinct value's
/// bytes are stored once, one after the other in `arena` (shared by the
/// columns), and each column's table holds where they are, their hash and
/// their count: no allocation per value, and a value moves into a shard
/// without being hashed again.
#[derive(Default)]
pub struct Frequencies {
    columns: Vec<Column>,
    arena: Vec<u8>,
    /// Values of the columns counted directly in the shards, each once.
    direct: Vec<Moved>,
}

impl Frequencies {
    /// Adds one record's fields (columns past them are not counted).
    #[inline]
    pub fn add<'a>(&mut self, fields: impl Iterator<Item = &'a [u8]>) {
        self.add_some(fields.map(Some));
    }

    /// Adds one record's fields, `None` for a column the record lacks (not
    /// counted). Each value is counted [`trimmed`], as xsv counts it.
    #[inline]
    pub fn add_some<'a>(&mut self, fields: impl Iterator<Item = Option<&'a [u8]>>) {
        for (j, f) in fields.enumerate() {
            if j == self.columns.len() {
                self.columns.push(Column::default());
            }
            let Some(f) = f else { continue };
            let f = trimmed(f);
            let c = &mut self.columns[j];
            if f.is_empty() {
                c.empty += 1;
                continue;
            }
            if c.direct {
                let s = Slot::new(hash(f), f, 1, &mut self.arena);
                self.direct.push((j, s));
                continue;
            }
            c.added += 1;
            self.count(j, f, hash(f), 1);
        }
    }

    /// Adds `n` to the count of value `v` (whose hash is `h`) of column
    /// `j`.
    #[inline]
    fn count(&mut self, j: usize, v: &[u8], h: u64, n: u64) {
        let arena = &mut self.arena;
        let table = &mut self.columns[j].values;
        let found = if v.len() <= INLINE {
            let k = inline(v);
            table.entry(h, |s| s.hash == h && s.len == v.len() && s.at == k, |s| s.hash)
        } else {
            table.entry(h, |s| s.hash == h && s.len == v.len() && s.bytes(arena) == v, |s| s.hash)
        };
        match found {
            Entry::Occupied(mut o) => o.get_mut().count += n,
            Entry::Vacant(e) => {
                e.insert(Slot::new(h, v, n, arena));
            }
        }
    }

    /// The bytes of a value.
    #[inline]
    fn bytes<'s>(&'s self, s: &'s Slot) -> &'s [u8] {
        s.bytes(&self.arena)
    }

    /// Adds what `other` counted (chunks read in parallel).
    #[cfg(test)]
    pub fn merge(&mut self, other: Frequencies) {
        if other.columns.len() > self.columns.len() {
            self.columns.resize_with(other.columns.len(), Column::default);
        }
        for (j, c) in other.columns.iter().enumerate() {
            self.columns[j].empty += c.empty;
            for s in &c.values {
                self.count(j, other.bytes(s), s.hash, s.count);
            }
        }
    }

    /// Number of columns seen.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// Moves everything counted here into `shared` (and empties this,
    /// keeping its memory for the next batch). The values are first
    /// grouped by shard in `buckets` (kept between calls to save
    /// allocations), then each shard is locked once.
    ///
    /// A column whose values were nearly all distinct between moves
    /// (a column of identifiers, say) gains little from being
    /// counted here first: each value would be looked up twice, here and
    /// in its shard. From then on its values are listed one by one (with
    /// their hash) and counted in the shards alone. A column of few
    /// values keeps its counts here, so that a frequent value does not
    /// keep its shard locked.
    pub fn drain_into(&mut self, shared: &Shards, buckets: &mut Buckets) {
        buckets.0.resize_with(SHARDS, Vec::new);
        let mut empty: Vec<(usize, u64)> = Vec::new();
        for (j, c) in self.columns.iter_mut().enumerate() {
            if c.empty > 0 {
                empty.push((j, std::mem::take(&mut c.empty)));
            }
            for s in &c.values {
                buckets.0[shard_of(s.hash)].push((j, *s));
            }
            c.distinct += c.values.len() as u64;
            if c.added >= DIRECT_MIN {
                c.direct = c.distinct * 4 >= c.added * 3;
                (c.added, c.distinct) = (0, 0);
            }
        }
        for m in self.direct.drain(..) {
            buckets.0[shard_of(m.1.hash)].push(m);
        }
        // A shard another thread holds is left for later (its values wait
        // in their bucket), so that two threads moving their counts in at
        // once do not queue behind each other shard after shard.
        let width = self.columns.len();
        let mut busy = std::mem::take(&mut buckets.1);
        for (s, bucket) in buckets.0.iter_mut().enumerate() {
            if bucket.is_empty() && s != 0 {
                continue;
            }
            match shared.0[s].try_lock() {
                Ok(mut f) => self.move_into(&mut f, s, bucket, &empty, width),
                Err(TryLockError::Poisoned(p)) => {
                    self.move_into(&mut p.into_inner(), s, bucket, &empty, width)
                }
                Err(TryLockError::WouldBlock) => busy.push(s),
            }
        }
        for s in busy.drain(..) {
            let mut f = shared.0[s].lock().unwrap_or_else(|p| p.into_inner());
            self.move_into(&mut f, s, &mut buckets.0[s], &empty, width);
        }
        buckets.1 = busy;
        for c in &mut self.columns {
            c.values.clear();
        }
        self.arena.clear();
    }

    /// Counts the values of `bucket` (values of shard `s`) into `f`, the
    /// shard, with the counts of `empty` values when `s` is 0, and makes
    /// it at least `width` columns wide.
    fn move_into(
        &self,
        f: &mut Frequencies,
        s: usize,
        bucket: &mut Vec<Moved>,
        empty: &[(usize, u64)],
        width: usize,
    ) {
        if f.columns.len() < width {
            f.columns.resize_with(width, Column::default);
        }
        if s == 0 {
            // Empty counts and the width live in shard 0.
            for &(j, n) in empty {
                f.columns[j].empty += n;
            }
        }
        for (j, v) in bucket.drain(..) {
            f.count(j, self.bytes(&v), v.hash, v.count);
        }
    }

    /// Column `j`'s values and counts: the most frequent first (the least
    /// with `asc`), ties in the order of their bytes (xsv leaves the order
    /// of ties to its hash map); at most `limit` (0: all); without empty
    /// values when `no_nulls`.
    #[cfg(test)]
    pub fn top(&self, j: usize, limit: usize, asc: bool, no_nulls: bool) -> Vec<(&[u8], u64)> {
        top(std::slice::from_ref(self), j, limit, asc, no_nulls)
    }
}

/// How many parts [`Shards`] splits the values into.
pub const SHARDS: usize = 64;

/// The shard of a value: bits of its hash that neither the maps' bucket
/// index (low bits) nor their control bytes (top bits) use, so that the
/// values of one shard still spread over its map.
fn shard_of(hash: u64) -> usize {
    (hash >> 40) as usize % SHARDS
}

/// Counts shared by the threads: [`SHARDS`] parts, each holding the
/// values whose hash falls in it (for every column), each behind its own
/// lock; shard 0 also holds the counts of empty values. Threads move their
/// counts in (see [`Frequencies::drain_into`]) in parallel, with little
/// waiting: each locks a shard once per batch, and each value goes to one
/// shard.
pub struct Shards(Vec<Mutex<Frequencies>>);

impl Default for Shards {
    fn default() -> Shards {
        Shards((0..SHARDS).map(|_| Mutex::default()).collect())
    }
}

impl Shards {
    /// The counts, one [`Frequencies`] per shard.
    pub fn into_parts(self) -> Vec<Frequencies> {
        self.0.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner())).collect()
    }
}

/// A value of a column (its bytes still in the counting thread's arena)
/// and its count, on its way to a shard.
type Moved = (usize, Slot);

/// A thread's values grouped by shard before they are moved in, and the
/// shards found busy while moving them (kept for the memory).
#[derive(Default)]
pub struct Buckets(Vec<Vec<Moved>>, Vec<usize>);

/// Number of columns the `parts` have seen.
pub fn width(parts: &[Frequencies]) -> usize {
    parts.iter().map(Frequencies::width).max().unwrap_or(0)
}

/// [`Frequencies::top`] over counts split in `parts` (each value counted
/// in one part, as [`Shards`] keeps them). Only the `limit` first are
/// sorted.
#[cfg(test)]
pub fn top(
    parts: &[Frequencies],
    j: usize,
    limit: usize,
    asc: bool,
    no_nulls: bool,
) -> Vec<(&[u8], u64)> {
    top_on(parts, j, limit, asc, no_nulls, 1)
}

/// [`top`] on up to `threads` threads (see [`each_top`]).
#[cfg(test)]
pub fn top_on(
    parts: &[Frequencies],
    j: usize,
    limit: usize,
    asc: bool,
    no_nulls: bool,
    threads: usize,
) -> Vec<(&[u8], u64)> {
    let mut all = Vec::new();
    let run = each_top(
        parts,
        j,
        &Top { limit, asc, no_nulls, threads },
        |v| v.to_vec(),
        |v| -> Result<(), ()> {
            all.extend(v);
            Ok(())
        },
    );
    run.expect("the sink does not fail");
    all
}

/// What [`each_top`] gives of a column.
pub struct Top {
    /// At most this many values (0: all).
    pub limit: usize,
    /// The least frequent first.
    pub asc: bool,
    /// Without the count of empty values.
    pub no_nulls: bool,
    /// Threads to sort and format on (1: the calling thread alone).
    pub threads: usize,
}

/// A value, its count, and its first eight bytes as a big-endian number
/// (zero padded): comparing those orders most ties without a call to
/// compare the slices (a column of distinct values is nearly all ties).
type Keyed<'a> = (&'a [u8], u64, u64);

/// Output lines handed out at a time (at most one piece per thread and
/// window is held in memory).
const LINES: usize = 1 << 15;

/// Column `j`'s values and counts over counts split in `parts` (each
/// value counted in one part, as [`Shards`] keeps them), in the order of
/// [`Frequencies::top`]: `piece` is called on runs of consecutive values
/// (on up to `top.threads` threads), and `sink` gets what it made, in
/// order, on the calling thread; the first error of `sink` stops the
/// rest and is returned.
///
/// No step whose cost grows with the number of values runs on one
/// thread alone: the values of a group of parts are gathered, cut to the
/// `limit` first (which hold every value of the top) and sorted on the
/// thread that takes the group; the order is then cut into ranges at
/// values sampled from every sorted group (a sample sort), where each
/// group is cut by the thread that takes it; and each range is merged
/// from the groups' sorted runs and made into pieces by the thread that
/// takes it, a
/// window of ranges ahead of `sink`. Only the sample (a few values per
/// range) is sorted on the calling thread.
pub fn each_top<'a, T: Send, E>(
    parts: &'a [Frequencies],
    j: usize,
    top: &Top,
    piece: impl Fn(&[(&'a [u8], u64)]) -> T + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E> {
    let &Top { limit, asc, no_nulls, threads } = top;
    let threads = threads.max(1);
    let order = move |a: &Keyed<'_>, b: &Keyed<'_>| {
        let by_count = if asc { a.1.cmp(&b.1) } else { b.1.cmp(&a.1) };
        by_count.then_with(|| a.2.cmp(&b.2)).then_with(|| a.0.cmp(b.0))
    };
    // Each value is in one part and no two values compare equal: an
    // unstable sort or selection gives the one order.
    let cut = |v: &mut Vec<Keyed<'a>>| {
        if limit > 0 && limit < v.len() {
            v.select_nth_unstable_by(limit - 1, order);
            v.truncate(limit);
        }
    };
    let empty: u64 = parts.iter().filter_map(|p| p.columns.get(j)).map(|c| c.empty).sum::<u64>();
    let empty = (empty > 0 && !no_nulls).then_some((&b""[..], empty, 0));
    // Part `k`'s values (part 0 also has the empty value's count).
    let values = |k: usize| {
        let p = &parts[k];
        let keyed = move |s: &'a Slot| {
            let b = p.bytes(s);
            // A short value's slot holds its prefix as it is.
            let key = if s.len <= INLINE { u64::from_be_bytes(s.at) } else { prefix(b) };
            (b, s.count, key)
        };
        let v = p.columns.get(j).into_iter().flat_map(move |c| c.values.iter().map(keyed));
        v.chain(if k == 0 { empty } else { None })
    };
    let gather = |k: usize| first_of(values(k), limit, order);
    let lines =
        |v: &[Keyed<'a>]| -> Vec<(&'a [u8], u64)> { v.iter().map(|&(b, n, _)| (b, n)).collect() };
    if parts.is_empty() {
        return Ok(());
    }
    let total: usize = parts.iter().filter_map(|p| p.columns.get(j)).map(|c| c.values.len()).sum();
    if threads == 1 || total < 2 * LINES {
        // Small, or one thread: everything here.
        let mut v: Vec<Keyed<'a>> = (0..parts.len()).flat_map(gather).collect();
        cut(&mut v);
        v.sort_unstable_by(order);
        for c in v.chunks(LINES) {
            sink(piece(&lines(c)))?;
        }
        return Ok(());
    }
    // The parts in groups (four per thread: every thread has work, and
    // a range has few runs to merge), each group's values (its first ones
    // under a limit: they hold the first values of all) sorted on the
    // thread that takes it.
    let groups = (4 * threads).min(parts.len());
    let sorted: Vec<Vec<Keyed<'a>>> = par_map(threads, groups, |g| {
        let mut v = first_of((g..parts.len()).step_by(groups).flat_map(values), limit, order);
        v.sort_unstable_by(order);
        v
    });
    let total: usize = sorted.iter().map(Vec::len).sum();
    let wanted = if limit > 0 { limit.min(total) } else { total };
    // Ranges of about LINES values each (at least a few per thread, at
    // most 4096), bounded at values sampled evenly from every part.
    let ranges = (total / LINES).clamp(4 * threads, 4096);
    let step = (total / (ranges * 16)).max(1);
    let mut sample: Vec<Keyed<'a>> =
        sorted.iter().flat_map(|v| v.iter().skip(step / 2).step_by(step).copied()).collect();
    sample.sort_unstable_by(order);
    let mut splitters: Vec<Keyed<'a>> =
        (1..ranges).map(|i| sample[i * sample.len() / ranges]).collect();
    splitters.dedup_by(|a, b| order(a, b).is_eq());
    // Where each range starts in each group: range `r` holds the values
    // after `splitters[r - 1]` up to `splitters[r]`.
    let cut_at: Vec<Vec<usize>> = par_map(threads, sorted.len(), |k| {
        let v = &sorted[k];
        let inner = splitters.iter().map(|s| v.partition_point(|e| order(e, s).is_le()));
        std::iter::once(0).chain(inner).chain(std::iter::once(v.len())).collect()
    });
    let ranges = splitters.len() + 1;
    // The rank in the output of each range's first value.
    let first: Vec<usize> = (0..=ranges).map(|r| cut_at.iter().map(|c| c[r]).sum()).collect();
    let needed = first[..ranges].iter().take_while(|&&f| f < wanted).count();
    ordered(
        threads,
        needed,
        |r| {
            // Sorted runs, one per group: the stable sort merges them.
            let mut v: Vec<Keyed<'a>> = Vec::with_capacity(first[r + 1] - first[r]);
            for (p, c) in sorted.iter().zip(&cut_at) {
                v.extend_from_slice(&p[c[r]..c[r + 1]]);
            }
            v.sort_by(order);
            v.truncate(wanted - first[r]);
            v.chunks(LINES).map(|c| piece(&lines(c))).collect::<Vec<T>>()
        },
        |pieces| pieces.into_iter().try_for_each(&mut sink),
    )
}

/// The first `limit` values of `values` in `order` (every value when
/// `limit` is 0), in no particular order. Under a limit at most twice
/// `limit` values are held at a time, and a value that comes after the
/// last of the first `limit` found so far is dropped after one
/// comparison (with counts, almost always of the counts alone): a column
/// of many values is not copied whole to print its first ten.
fn first_of<'a>(
    values: impl Iterator<Item = Keyed<'a>>,
    limit: usize,
    order: impl Fn(&Keyed<'a>, &Keyed<'a>) -> std::cmp::Ordering,
) -> Vec<Keyed<'a>> {
    if limit == 0 {
        return values.collect();
    }
    let full = limit.saturating_mul(2);
    let mut v: Vec<Keyed<'a>> = Vec::new();
    // The last of the first `limit` of the values seen when `v` was last
    // cut: no later value after it can be among the first `limit`.
    let mut last: Option<Keyed<'a>> = None;
    for x in values {
        if last.is_some_and(|l| order(&x, &l).is_ge()) {
            continue;
        }
        v.push(x);
        if v.len() == full {
            v.select_nth_unstable_by(limit - 1, &order);
            v.truncate(limit);
            last = Some(v[limit - 1]);
        }
    }
    if v.len() > limit {
        v.select_nth_unstable_by(limit - 1, &order);
        v.truncate(limit);
    }
    v
}

/// `f` of `0..n` on up to `threads` threads (each takes the next index
/// left), in order.
fn par_map<U: Send>(threads: usize, n: usize, f: impl Fn(usize) -> U + Sync) -> Vec<U> {
    let next = AtomicUsize::new(0);
    let out: Vec<Mutex<Option<U>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.min(n) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= n {
                    break;
                }
                let u = f(k);
                *out[k].lock().unwrap_or_else(|p| p.into_inner()) = Some(u);
            });
        }
    });
    // Every index was taken by a thread that finished (a panic in one
    // reaches this thread when the scope ends).
    out.into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()).expect("every index is done"))
        .collect()
}

/// `f` of `0..n` on up to `threads` threads, at most a window of
/// `2 * threads` ahead of `sink`, which gets the results in order on the
/// calling thread; its first error stops the threads and is returned. A
/// panic in `f` reaches the calling thread.
fn ordered<U: Send, E>(
    threads: usize,
    n: usize,
    f: impl Fn(usize) -> U + Sync,
    mut sink: impl FnMut(U) -> Result<(), E>,
) -> Result<(), E> {
    struct State<U> {
        next: usize,
        written: usize,
        stop: bool,
        done: Vec<Option<std::thread::Result<U>>>,
    }
    let window = 2 * threads;
    let state = Mutex::new(State {
        next: 0,
        written: 0,
        stop: false,
        done: (0..n).map(|_| None).collect(),
    });
    let cv = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    std::thread::scope(|s| {
        for _ in 0..threads.min(n) {
            s.spawn(|| loop {
                let k = {
                    let mut g = lock();
                    while !g.stop && g.next < n && g.next >= g.written + window {
                        g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
                    }
                    if g.stop || g.next >= n {
                        return;
                    }
                    g.next += 1;
                    g.next - 1
                };
                let u = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(k)));
                lock().done[k] = Some(u);
                cv.notify_all();
            });
        }
        let stop = || {
            lock().stop = true;
            cv.notify_all();
        };
        for k in 0..n {
            let u = {
                let mut g = lock();
                loop {
                    if let Some(u) = g.done[k].take() {
                        break u;
                    }
                    g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
                }
            };
            let u = match u {
                Ok(u) => u,
                Err(p) => {
                    stop();
                    std::panic::resume_unwind(p);
                }
            };
            if let Err(e) = sink(u) {
                stop();
                return Err(e);
            }
            lock().written += 1;
            cv.notify_all();
        }
        Ok(())
    })
}

/// The first eight bytes of `b` (zero padded) as a big-endian number: for
/// two slices, `prefix(a) < prefix(b)` implies `a < b`, and `a < b`
/// implies `prefix(a) <= prefix(b)`.
#[inline]
fn prefix(b: &[u8]) -> u64 {
    let mut k = [0; 8];
    let n = b.len().min(8);
    k[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_on_threads_as_on_one() {
        let mut f = Frequencies::default();
        // Many ties (counts 1 and 2), values of every length up to 12.
        for i in 0..300_000u64 {
            let v = format!("{}", (i * 7919) % 200_003).into_bytes();
            let len = (i % 13) as usize;
            f.add([&v[..len.min(v.len())], &v[..]].into_iter());
        }
        let parts = [f];
        for threads in [2, 3, 8] {
            for (limit, asc) in [(0, false), (0, true), (100_000, false)] {
                for j in 0..2 {
                    assert_eq!(
                        top_on(&parts, j, limit, asc, false, threads),
                        top_on(&parts, j, limit, asc, false, 1)
                    );
                }
            }
        }
    }

    /// Counts moved into the 64 shards, sorted on threads (in ranges of
    /// the order) as on one and as a plain sort of every count gives
    /// them: many ties, empty values, limits that end inside a range, at
    /// a range's end and past the last value.
    #[test]
    fn shards_sorted_in_ranges_as_a_plain_sort() {
        use std::collections::HashMap;
        let shared = Shards::default();
        let mut buckets = Buckets::default();
        let mut oracle: HashMap<Vec<u8>, u64> = HashMap::new();
        // One thread's counts, moved into the shards after each chunk:
        // its column of nearly distinct values is listed one by one from
        // the second chunk on.
        let mut f = Frequencies::default();
        for chunk in 0..4u64 {
            assert_eq!(f.columns.first().is_some_and(|c| c.direct), chunk > 0);
            for i in 0..60_000u64 {
                // Counts 1 to 4 (most values once), some empty.
                let x = (chunk * 60_000 + i) * 7919 % 180_007;
                let v = if x % 97 == 0 { String::new() } else { format!("v{}", x % 150_000) };
                f.add(std::iter::once(v.as_bytes()));
                *oracle.entry(v.into_bytes()).or_default() += 1;
            }
            f.drain_into(&shared, &mut buckets);
        }
        let parts = shared.into_parts();
        let mut all: Vec<(Vec<u8>, u64)> = oracle.into_iter().collect();
        for asc in [false, true] {
            all.sort_by(|a, b| {
                let by = if asc { a.1.cmp(&b.1) } else { b.1.cmp(&a.1) };
                by.then_with(|| a.0.cmp(&b.0))
            });
            let n = all.len();
            for limit in [0, 1, 10, 40_000, n - 1, n, n + 5] {
                let want = &all[..if limit == 0 { n } else { limit.min(n) }];
                for threads in [1, 2, 3, 8] {
                    let got = top_on(&parts, 0, limit, asc, false, threads);
                    assert_eq!(got.len(), want.len(), "{limit} {asc} {threads}");
                    assert!(
                        got.iter().zip(want).all(|(g, w)| g.0 == w.0 && g.1 == w.1),
                        "{limit} {asc} {threads}"
                    );
                    let no_nulls = top_on(&parts, 0, limit, asc, true, threads);
                    assert!(no_nulls.iter().all(|v| !v.0.is_empty()));
                    assert_eq!(no_nulls, top_on(&parts, 0, limit, asc, true, 1));
                }
            }
        }
    }

    /// A sink's error stops the output at once and is returned; a panic
    /// in a piece reaches the caller.
    #[test]
    fn each_top_stops_at_the_sink_error() {
        let mut f = Frequencies::default();
        for i in 0..200_000u64 {
            f.add(std::iter::once(format!("{i}").as_bytes()));
        }
        let parts = [f];
        let top = Top { limit: 0, asc: false, no_nulls: false, threads: 3 };
        let mut seen = 0;
        let r = each_top(&parts, 0, &top, <[_]>::len, |n| {
            seen += 1;
            if seen == 2 {
                return Err(n);
            }
            Ok(())
        });
        assert!(matches!(r, Err(n) if n > 0) && seen == 2);
        let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            each_top(&parts, 0, &top, |_| -> usize { panic!("piece") }, |_| Ok::<(), ()>(()))
        }));
        assert!(p.is_err());
    }

    /// Threads moving their counts into the same shards at once (a shard
    /// one holds is skipped and come back to by the other) count every
    /// value once: the counts are those of one thread over all.
    #[test]
    fn shards_filled_from_threads_at_once() {
        let shared = Shards::default();
        let mut whole = Frequencies::default();
        // Values short (kept in their slot) and long (in the arena).
        let value = |t: u64, i: u64| {
            let x = (t * 7 + i) * 7919 % 5_003;
            format!("{}", if x.is_multiple_of(2) { x } else { x * 1_000_003 })
        };
        for t in 0..4u64 {
            for i in 0..20_000u64 {
                whole.add([value(t, i).as_bytes(), b"x"].into_iter());
            }
        }
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let shared = &shared;
                s.spawn(move || {
                    let (mut f, mut buckets) = (Frequencies::default(), Buckets::default());
                    for i in 0..20_000u64 {
                        f.add([value(t, i).as_bytes(), b"x"].into_iter());
                        if i % 500 == 499 {
                            f.drain_into(shared, &mut buckets);
                        }
                    }
                });
            }
        });
        let parts = shared.into_parts();
        for j in 0..2 {
            assert_eq!(top(&parts, j, 0, false, false), whole.top(j, 0, false, false));
        }
    }

    /// Values kept in their slot (up to eight bytes, zero padded) and in
    /// the arena are told apart by their length as well as their bytes,
    /// counted in place and moved into the shards whole.
    #[test]
    fn short_and_long_values_counted_apart() {
        let vals: [&[u8]; 8] =
            [b"a", b"a\0", b"a\0\0", b"\0", b"1234567", b"12345678", b"123456789", b"12345678\0"];
        let mut f = Frequencies::default();
        for (i, v) in vals.iter().enumerate() {
            for _ in 0..=i {
                f.add(std::iter::once(*v));
            }
        }
        let want: Vec<(&[u8], u64)> =
            vals.iter().enumerate().rev().map(|(i, v)| (*v, i as u64 + 1)).collect();
        assert_eq!(f.top(0, 0, false, false), want);
        let shared = Shards::default();
        f.drain_into(&shared, &mut Buckets::default());
        assert_eq!(top(&shared.into_parts(), 0, 0, false, false), want);
    }

    /// The first values under a limit, kept while streaming, are those of
    /// a sort of all: limits below, at and past the number of values,
    /// counts that rise, fall and tie along the stream.
    #[test]
    fn first_of_as_a_sort() {
        let bytes: Vec<Vec<u8>> =
            (0..1000u64).map(|i| format!("{}", i * 7919 % 1009).into_bytes()).collect();
        for shape in 0..3u64 {
            let all: Vec<Keyed<'_>> = bytes
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let i = i as u64;
                    let n = match shape {
                        0 => i * 31 % 7,
                        1 => i / 10,
                        _ => 1000 - i / 10,
                    };
                    (&b[..], n, prefix(b))
                })
                .collect();
            for asc in [false, true] {
                let order = move |a: &Keyed<'_>, b: &Keyed<'_>| {
                    let by = if asc { a.1.cmp(&b.1) } else { b.1.cmp(&a.1) };
                    by.then_with(|| a.2.cmp(&b.2)).then_with(|| a.0.cmp(b.0))
                };
                let mut sorted = all.clone();
                sorted.sort_by(order);
                for limit in [0, 1, 2, 3, 10, 333, 999, 1000, 1001, 5000] {
                    let mut got = first_of(all.iter().copied(), limit, order);
                    got.sort_by(order);
                    let n = if limit == 0 { all.len() } else { limit.min(all.len()) };
                    assert_eq!(got, sorted[..n], "{shape} {asc} {limit}");
                }
            }
        }
    }

    #[test]
    fn prefix_keeps_the_order_of_slices() {
        let vals: [&[u8]; 12] = [
            b"",
            b"\0",
            b"\0\0",
            b"a",
            b"a\0",
            b"a\0b",
            b"ab",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"abcdefgi",
            b"\xff",
        ];
        for a in vals {
            for b in vals {
                if prefix(a) < prefix(b) {
                    assert!(a < b, "{a:?} {b:?}");
                }
                if a < b {
                    assert!(prefix(a) <= prefix(b), "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn counts_sorted_and_merged() {
        let rows: Vec<Vec<&[u8]>> = vec![
            vec![b"a", b"x"],
            vec![b"b", b""],
            vec![b"a", b"x"],
            vec![b"c"],
            vec![b"b", b"y"],
            vec![b"a", b""],
        ];
        let mut whole = Frequencies::default();
        for r in &rows {
            whole.add(r.iter().copied());
        }
        assert_eq!(whole.top(0, 0, false, false), [(&b"a"[..], 3), (b"b", 2), (b"c", 1)]);
        assert_eq!(whole.top(0, 2, true, false), [(&b"c"[..], 1), (b"b", 2)]);
        assert_eq!(whole.top(1, 0, false, false), [(&b""[..], 2), (b"x", 2), (b"y", 1)]);
        assert_eq!(whole.top(1, 0, false, true), [(&b"x"[..], 2), (b"y", 1)]);
        assert!(whole.top(7, 0, false, false).is_empty());
        for parts in [2, 3, 6] {
            let mut merged = Frequencies::default();
            for chunk in rows.chunks(rows.len().div_ceil(parts)) {
                let mut f = Frequencies::default();
                for r in chunk {
                    f.add(r.iter().copied());
                }
                merged.merge(f);
            }
            for j in 0..2 {
                assert_eq!(merged.top(j, 0, false, false), whole.top(j, 0, false, false));
            }
            // Moved into shards chunk by chunk: the same counts.
            let shared = Shards::default();
            let mut buckets = Buckets::default();
            for chunk in rows.chunks(rows.len().div_ceil(parts)) {
                let mut f = Frequencies::default();
                for r in chunk {
                    f.add(r.iter().copied());
                }
                f.drain_into(&shared, &mut buckets);
                assert_eq!(f.top(0, 0, false, false), []);
            }
            let p = shared.into_parts();
            assert_eq!(width(&p), 2);
            for j in 0..2 {
                for (limit, asc) in [(0, false), (1, false), (2, true), (9, false)] {
                    assert_eq!(top(&p, j, limit, asc, false), whole.top(j, limit, asc, false));
                }
            }
        }
    }

    /// Counts `rows` (each a record's fields) on `threads` threads as the
    /// command does: batches of `batch` records taken in turn, each counted
    /// into a state taken from a pool (so a state moves between threads)
    /// and moved into the shards.
    fn counted_on(rows: &[Vec<Vec<u8>>], threads: usize, batch: usize) -> Vec<Frequencies> {
        let shared = Shards::default();
        let pool: Mutex<Vec<(Frequencies, Buckets)>> = Mutex::default();
        let next = AtomicUsize::new(0);
        let batches: Vec<&[Vec<Vec<u8>>]> = rows.chunks(batch.max(1)).collect();
        let lock = || pool.lock().unwrap_or_else(|p| p.into_inner());
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(b) = batches.get(k) else { break };
                    let (mut f, mut buckets) = lock().pop().unwrap_or_default();
                    for r in b.iter() {
                        f.add(r.iter().map(Vec::as_slice));
                    }
                    f.drain_into(&shared, &mut buckets);
                    lock().push((f, buckets));
                });
            }
        });
        shared.into_parts()
    }

    /// Each column's counts in `parts`, checked to hold each value in one
    /// part only (as [`each_top`] needs).
    fn as_maps(parts: &[Frequencies]) -> Vec<std::collections::HashMap<Vec<u8>, u64>> {
        let mut maps = vec![std::collections::HashMap::new(); width(parts)];
        for p in parts {
            for (j, c) in p.columns.iter().enumerate() {
                if c.empty > 0 {
                    *maps[j].entry(Vec::new()).or_default() += c.empty;
                }
                for s in &c.values {
                    assert!(s.count > 0);
                    let old = maps[j].insert(p.bytes(s).to_vec(), s.count);
                    assert!(old.is_none(), "{:?} in two parts", p.bytes(s));
                }
            }
        }
        maps
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Counts moved into the shards from 1, 2, 3 and 8 threads at once
        /// (states moving between threads, batches of every size, so that
        /// a column goes over to being listed one by one or not) equal a
        /// plain `HashMap` count: empty values, values of up to and past
        /// eight bytes, records of several widths, many ties; each value in
        /// one shard; and each column's order that of a plain sort.
        #[test]
        fn shards_count_as_a_hash_map(
            rows in proptest::collection::vec(
                proptest::collection::vec((0..40u32, 0..14usize), 0..4), 0..400),
            batch in 1..60usize,
        ) {
            let rows: Vec<Vec<Vec<u8>>> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|&(v, len)| {
                            let b = format!("{v:0>14}").into_bytes();
                            b[14 - len..].to_vec()
                        })
                        .collect()
                })
                .collect();
            let mut want = Vec::new();
            for r in &rows {
                if want.len() < r.len() {
                    want.resize_with(r.len(), std::collections::HashMap::new);
                }
                for (j, v) in r.iter().enumerate() {
                    *want[j].entry(v.clone()).or_insert(0u64) += 1;
                }
            }
            for threads in [1, 2, 3, 8] {
                let parts = counted_on(&rows, threads, batch);
                proptest::prop_assert_eq!(&as_maps(&parts), &want);
                for (j, w) in want.iter().enumerate() {
                    let mut sorted: Vec<(&[u8], u64)> =
                        w.iter().map(|(v, &n)| (&v[..], n)).collect();
                    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
                    proptest::prop_assert_eq!(top_on(&parts, j, 0, false, false, threads), sorted);
                }
            }
        }
    }

    /// A column of distinct values (listed one by one into the shards
    /// after the first batch) and one of few values, counted on 2, 3 and
    /// 8 threads in batches of many sizes: the counts of one thread.
    #[test]
    fn distinct_values_listed_on_threads() {
        let rows: Vec<Vec<Vec<u8>>> = (0..60_000u64)
            .map(|i| {
                let v = i * 7919 % 50_021;
                let long = format!("value-{v}");
                vec![long.into_bytes(), format!("{}", v % 5).into_bytes(), Vec::new()]
            })
            .collect();
        let want = as_maps(&counted_on(&rows, 1, rows.len()));
        assert_eq!(want[0].len(), 50_021);
        for threads in [2, 3, 8] {
            for batch in [1_000, 4_096, 9_999] {
                assert_eq!(as_maps(&counted_on(&rows, threads, batch)), want, "{threads} {batch}");
            }
        }
    }
}
