//! `fastcsv dedup`: each record whose key was not seen before, in input
//! order.
//!
//! The key is the record's fields as parsed (or those of `--select`),
//! encoded as `sort` encodes text keys so that distinct field lists never
//! share a key. The distinct keys are held in a [`Seen`]: their bytes one
//! after the other in one buffer, and a hash table of positions in it.

use std::hash::BuildHasher;
use std::io::Write;

use hashbrown::hash_table::{Entry, HashTable};

use super::args::DedupArgs;
use super::commands::whole_records_writer;
use super::sort::{encode_key, resolve, RowLike};
use super::{path_arg, write_failure, Failure, Input};

/// A set of byte strings. Each distinct key is stored once in `arena`,
/// after its length (LEB128: one byte below 128), and the table holds its
/// hash and the position of its length: two words per key and no
/// allocation per key. The stored hash spares reading the arena when the
/// table grows, and when a probe meets another key. The hash is foldhash,
/// with a seed drawn at random for each run, so that an input cannot be
/// written to make keys collide without knowing it.
pub struct Seen {
    table: HashTable<(u64, usize)>,
    arena: Vec<u8>,
    hasher: foldhash::fast::RandomState,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            table: HashTable::new(),
            arena: Vec::new(),
            hasher: foldhash::fast::RandomState::default(),
        }
    }
}

impl Seen {
    /// Adds `key`; whether it was not there before.
    #[inline]
    pub fn insert(&mut self, key: &[u8]) -> bool {
        let h = self.hasher.hash_one(key);
        let arena = &self.arena;
        let same = |&(eh, at): &(u64, usize)| eh == h && key_at(arena, at) == key;
        match self.table.entry(h, same, |&(eh, _)| eh) {
            Entry::Occupied(_) => false,
            Entry::Vacant(v) => {
                v.insert((h, self.arena.len()));
                let mut n = key.len();
                while n >= 0x80 {
                    self.arena.push(n as u8 | 0x80);
                    n >>= 7;
                }
                self.arena.push(n as u8);
                self.arena.extend_from_slice(key);
                true
            }
        }
    }

    /// Number of distinct keys.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.table.len()
    }
}

/// The key whose length starts at `arena[at]`.
#[inline]
fn key_at(arena: &[u8], mut at: usize) -> &[u8] {
    let (mut n, mut shift) = (0usize, 0);
    loop {
        let b = arena[at];
        at += 1;
        n |= usize::from(b & 0x7f) << shift;
        if b < 0x80 {
            return &arena[at..at + n];
        }
        shift += 7;
    }
}

/// `fastcsv dedup`.
pub fn dedup(a: &DedupArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let mut input = Input::open(file, &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    let (cols, first) = resolve(&mut input, a.select.as_ref(), header.as_ref())?;
    let mut w = whole_records_writer(&name, header.as_ref(), &a.output, file)?;
    let mut seen = Seen::default();
    let mut key = Vec::new();
    let mut one = |row: &dyn RowLike| -> Result<(), Failure> {
        key.clear();
        match &cols {
            Some(c) => encode_key(&mut key, false, c.iter().map(|&i| row.field(i))),
            None => encode_key(&mut key, false, (0..row.len()).map(|i| row.field(i))),
        }
        if !seen.insert(&key) {
            return Ok(());
        }
        w.write((0..row.len()).map(|i| row.field(i)))
            .map_err(|e| write_failure(&name, e, row.position(), |f| f))
    };
    if let Some(row) = &first {
        one(row)?;
    }
    input.each_row(|row| one(row))?;
    Ok(w.into_inner()?.flush()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_once_whatever_its_length() {
        let mut seen = Seen::default();
        let long = vec![7u8; 300];
        let keys: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"a".to_vec(),
            b"a\0".to_vec(),
            vec![b'x'; 127],
            vec![b'x'; 128],
            long.clone(),
            vec![7u8; 20_000],
        ];
        for k in &keys {
            assert!(seen.insert(k), "{}", k.len());
        }
        for k in &keys {
            assert!(!seen.insert(k), "{}", k.len());
        }
        // Many keys: the table grows and moves its entries by their hash.
        for i in 0..100_000u32 {
            assert!(seen.insert(&i.to_le_bytes()));
        }
        for i in (0..100_000u32).step_by(7) {
            assert!(!seen.insert(&i.to_le_bytes()));
        }
        assert_eq!(seen.len(), keys.len() + 100_000);
        assert_eq!(key_at(&seen.arena, 0), b"");
    }
}
