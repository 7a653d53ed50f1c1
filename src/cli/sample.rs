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
//! A mapped file is read once, finding records without splitting their
//! fields; a drawn record keeps its bytes when they are its fields joined
//! by the delimiter, else only its position, and is read again from there
//! at the end. Other inputs keep each drawn record's fields. Which records
//! are drawn depends only on the seed and the number of records, so the
//! same seed picks the same records from a file and from a pipe.

use std::io::Write;

use fastcsv::RowBuf;

use super::args::SampleArgs;
use super::commands::whole_records_writer;
use super::{path_arg, write_failure, Failure, Input};

/// A record in the reservoir of a mapped file: where it starts and, when
/// they are its fields joined by the delimiter, its bytes.
struct Slot {
    pos: fastcsv::Position,
    raw: Option<Vec<u8>>,
}

/// A reader of `path` from the record at `pos` on (no header row).
fn reopen_at(
    path: &std::path::Path,
    args: &super::args::InputArgs,
    pos: fastcsv::Position,
) -> Result<fastcsv::Reader<'static>, Failure> {
    let dialect = args.dialect(Some(path), false).map_err(|e| Failure::Usage(e.message()))?;
    let size = std::fs::metadata(path)
        .map_err(|e| Failure::from(fastcsv::Error::from(e).with_position(pos).with_path(path)))?;
    let part = fastcsv::split::Part {
        index: 0,
        start: pos.byte,
        end: size.len(),
        lines: pos.line.saturating_sub(1),
        records: pos.record,
        width: None,
    };
    let mut b = fastcsv::ReaderBuilder::new();
    // One record is read: no helper thread to read or map ahead.
    b.dialect(dialect).source(args.source).read_ahead(false);
    Ok(b.from_path_part(path, &part)?)
}

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
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        // The threshold (a division) is needed only when the low half is
        // below `n`: it is below `n` itself.
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
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
        // One pass that finds records without their fields; a drawn record
        // keeps its bytes when they are its fields joined by the delimiter,
        // else its position, to be read again at the end.
        let mut slots: Vec<Slot> = Vec::new();
        let mut i = 0u64;
        input.each_batch(&mut fastcsv::Selection::new([]), |batch| {
            for row in batch.iter() {
                let s = if i < n {
                    slots.push(Slot { pos: row.position(), raw: None });
                    Some(slots.len() - 1)
                } else {
                    let j = rng.below(i + 1);
                    (j < n).then_some(j as usize)
                };
                i += 1;
                let Some(s) = s else { continue };
                let slot = &mut slots[s];
                slot.pos = row.position();
                match row.raw().filter(|r| !r.is_empty()) {
                    Some(r) => {
                        let mut v = slot.raw.take().unwrap_or_default();
                        v.clear();
                        v.extend_from_slice(r);
                        slot.raw = Some(v);
                    }
                    None => slot.raw = None,
                }
            }
            Ok(())
        })?;
        let delimiter = input.reader.dialect().delimiter();
        let mut w = whole_records_writer(&name, header.as_ref(), &a.output, file)?;
        for slot in &slots {
            let fail = |e| write_failure(&name, e, slot.pos, |f| f);
            match &slot.raw {
                Some(r) => w.write(r.split(|&b| b == delimiter)).map_err(fail)?,
                None => {
                    let mut again = reopen_at(path, &a.input, slot.pos)?;
                    let row = again.read_row()?.ok_or_else(|| {
                        let e = fastcsv::Error::new(fastcsv::ErrorKind::FileChanged);
                        Failure::from(e.with_position(slot.pos).with_path(path))
                    })?;
                    w.write(row.iter()).map_err(fail)?;
                }
            }
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
