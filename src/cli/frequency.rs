//! `fastcsv frequency`: exact counts of each column's values, the most
//! frequent first, as `xsv frequency` gives them.

use std::hash::BuildHasher;
use std::sync::{Mutex, OnceLock};

use hashbrown::hash_table::{Entry, HashTable};

/// The hash of a value: foldhash, seeded at random once per run and the
/// same on every thread (a value moves into its shard with the hash its
/// counting thread computed).
#[inline]
fn hash(v: &[u8]) -> u64 {
    static STATE: OnceLock<foldhash::fast::RandomState> = OnceLock::new();
    STATE.get_or_init(Default::default).hash_one(v)
}

/// A distinct value of a column: its hash, where its bytes are in the
/// [`Frequencies`]' arena, and its count.
#[derive(Clone, Copy)]
struct Slot {
    hash: u64,
    start: usize,
    len: usize,
    count: u64,
}

/// One column's counts. Empty values are counted apart: a column that has
/// seen only those takes 40 bytes and no allocation, so that records of
/// many empty fields take little memory. The values' bytes are in the
/// arena of the [`Frequencies`] the column belongs to.
#[derive(Default)]
struct Column {
    empty: u64,
    values: HashTable<Slot>,
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
}

impl Frequencies {
    /// Adds one record's fields (columns past them are not counted).
    #[inline]
    pub fn add<'a>(&mut self, fields: impl Iterator<Item = &'a [u8]>) {
        self.add_some(fields.map(Some));
    }

    /// Adds one record's fields, `None` for a column the record lacks (not
    /// counted).
    #[inline]
    pub fn add_some<'a>(&mut self, fields: impl Iterator<Item = Option<&'a [u8]>>) {
        for (j, f) in fields.enumerate() {
            if j == self.columns.len() {
                self.columns.push(Column::default());
            }
            let Some(f) = f else { continue };
            if f.is_empty() {
                self.columns[j].empty += 1;
                continue;
            }
            self.count(j, f, hash(f), 1);
        }
    }

    /// Adds `n` to the count of value `v` (whose hash is `h`) of column
    /// `j`.
    #[inline]
    fn count(&mut self, j: usize, v: &[u8], h: u64, n: u64) {
        let arena = &mut self.arena;
        let same = |s: &Slot| s.hash == h && &arena[s.start..s.start + s.len] == v;
        match self.columns[j].values.entry(h, same, |s| s.hash) {
            Entry::Occupied(mut o) => o.get_mut().count += n,
            Entry::Vacant(e) => {
                e.insert(Slot { hash: h, start: arena.len(), len: v.len(), count: n });
                arena.extend_from_slice(v);
            }
        }
    }

    /// The bytes of a value.
    #[inline]
    fn bytes(&self, s: &Slot) -> &[u8] {
        &self.arena[s.start..s.start + s.len]
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
        }
        let width = self.columns.len();
        for (s, bucket) in buckets.0.iter_mut().enumerate() {
            if bucket.is_empty() && s != 0 {
                continue;
            }
            let mut f = shared.0[s].lock().unwrap_or_else(|p| p.into_inner());
            if f.columns.len() < width {
                f.columns.resize_with(width, Column::default);
            }
            if s == 0 {
                // Empty counts and the width live in shard 0.
                for &(j, n) in &empty {
                    f.columns[j].empty += n;
                }
            }
            for (j, v) in bucket.drain(..) {
                f.count(j, self.bytes(&v), v.hash, v.count);
            }
        }
        for c in &mut self.columns {
            c.values.clear();
        }
        self.arena.clear();
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

/// A thread's values grouped by shard before they are moved in.
#[derive(Default)]
pub struct Buckets(Vec<Vec<Moved>>);

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

/// [`top`], with the sort on up to `threads` threads (see
/// [`super::sort::par_sort_by`]).
pub fn top_on(
    parts: &[Frequencies],
    j: usize,
    limit: usize,
    asc: bool,
    no_nulls: bool,
    threads: usize,
) -> Vec<(&[u8], u64)> {
    let cols = || parts.iter().filter_map(|p| Some((p, p.columns.get(j)?)));
    let empty: u64 = cols().map(|(_, c)| c.empty).sum();
    let empty = (empty > 0 && !no_nulls).then_some((&b""[..], empty));
    // Each value with its first eight bytes as a big-endian number (zero
    // padded): comparing those orders most ties without a call to compare
    // the slices (a column of distinct values is nearly all ties).
    let mut v: Vec<(&[u8], u64, u64)> = cols()
        .flat_map(|(p, c)| c.values.iter().map(|s| (p.bytes(s), s.count)))
        .chain(empty)
        .map(|(b, n)| (b, n, prefix(b)))
        .collect();
    let order = |a: &(&[u8], u64, u64), b: &(&[u8], u64, u64)| {
        let by_count = if asc { a.1.cmp(&b.1) } else { b.1.cmp(&a.1) };
        by_count.then_with(|| a.2.cmp(&b.2)).then_with(|| a.0.cmp(b.0))
    };
    if limit > 0 && limit < v.len() {
        v.select_nth_unstable_by(limit - 1, order);
        v.truncate(limit);
    }
    // No two values compare equal: an unstable sort gives the one order.
    super::sort::par_sort_by(&mut v, threads, false, order);
    v.into_iter().map(|(b, n, _)| (b, n)).collect()
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
}
