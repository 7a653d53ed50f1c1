//! `fastcsv sample`: a uniform random sample of N records, by reservoir
//! sampling, as `xsv sample` without an index.
//!
//! The first N records fill the reservoir; record `i` (from 0) after them
//! replaces the reservoir's slot `j`, drawn uniformly from `0..=i`, when
//! `j < N`. The output is the reservoir in slot order, as xsv writes it.
//! Replacing reuses the slot's buffers: nothing is allocated per record.
//! The generator (SplitMix64, with unbiased ranges) is not xsv's, so the
//! same records are not drawn; the distribution is the same.
//!
//! Which records end in the reservoir depends only on the number of
//! records and the draws, so a mapped file is read in two passes, both on
//! every CPU: one counts the records (finding their boundaries only), the
//! draws pick the indices, and the second copies the records at those
//! indices alone. The same seed picks the same records either way.

use std::io::Write;

use fastcsv::RowBuf;

use super::args::{ParallelArgs, SampleArgs};
use super::commands::whole_records_writer;
use super::{path_arg, write_failure, Failure, Input};

/// A record picked by the second pass: its position and fields.
type Picked = (fastcsv::Position, Vec<Vec<u8>>);

/// SplitMix64: small, fast, and good enough for sampling.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A seed from the clock and the process id.
    pub fn seed_from_clock() -> u64 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        t ^ (u64::from(std::process::id()) << 32)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number drawn uniformly from `0..n` (`n > 0`), without the bias of
    /// a remainder (Lemire's multiply and reject).
    pub fn below(&mut self, n: u64) -> u64 {
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// `fastcsv sample`.
pub fn sample(a: &SampleArgs) -> Result<(), Failure> {
    let file = path_arg(a.file.as_deref());
    let mut input = Input::open(file, &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    let mut rng = Rng::new(a.seed.unwrap_or_else(Rng::seed_from_clock));
    let n = a.size;
    if let (Some(path), fastcsv::SourceKind::Mapped) = (file, input.reader.source_kind()) {
        let par = ParallelArgs { jobs: None, chunk_size: None }.parallel();
        let total = input.count(&par)?;
        // The reservoir's record indices, drawn as the one-pass loop draws.
        let mut slots: Vec<u64> = (0..n.min(total)).collect();
        for i in n..total {
            let j = rng.below(i + 1);
            if j < n {
                slots[j as usize] = i;
            }
        }
        let mut wanted: Vec<(u64, usize)> =
            slots.iter().enumerate().map(|(s, &i)| (i, s)).collect();
        wanted.sort_unstable();
        let mut again = Input::open(Some(path), &a.input, false)?;
        again.reader.headers()?;
        let base = again.reader.records_read();
        let mut picked: Vec<Option<Picked>> = vec![None; slots.len()];
        let wanted = &wanted;
        again.par_each_batch(
            &fastcsv::Selection::all(),
            &par,
            Vec::new,
            |batch, out: &mut Vec<(usize, Picked)>| -> Result<(), Failure> {
                for row in batch.iter() {
                    let i = row.position().record - base;
                    if let Ok(k) = wanted.binary_search_by_key(&i, |w| w.0) {
                        let fields = row.iter().map(<[u8]>::to_vec).collect();
                        out.push((wanted[k].1, (row.position(), fields)));
                    }
                }
                Ok(())
            },
            |out| {
                for (slot, fields) in out.drain(..) {
                    picked[slot] = Some(fields);
                }
                Ok(())
            },
        )?;
        let mut w = whole_records_writer(&name, header.as_ref(), &a.output, file)?;
        for (pos, r) in picked.iter().flatten() {
            w.write(r.iter().map(Vec::as_slice))
                .map_err(|e| write_failure(&name, e, *pos, |f| f))?;
        }
        return Ok(w.into_inner()?.flush()?);
    }
    let mut reservoir: Vec<RowBuf> = Vec::new();
    let mut i = 0u64;
    input.each_row(|row| {
        if i < n {
            reservoir.push(row.to_owned());
        } else {
            let j = rng.below(i + 1);
            if j < n {
                reservoir[j as usize].set_from(row);
            }
        }
        i += 1;
        Ok(())
    })?;
    let mut w = whole_records_writer(&name, header.as_ref(), &a.output, file)?;
    for r in &reservoir {
        w.write(r.iter()).map_err(|e| write_failure(&name, e, r.position(), |f| f))?;
    }
    Ok(w.into_inner()?.flush()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(7);
        let mut seen = [0u32; 5];
        for _ in 0..5000 {
            seen[r.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }
}
