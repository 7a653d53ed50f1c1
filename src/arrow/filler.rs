//! The batches of a [`Columns`](super::Columns) being made: the one
//! being filled, sized from the batch before, and those complete.

use std::collections::VecDeque;

use super::{direct, DataType, Spellings, StringColumn, TextBatch, BATCH_BYTES};
use crate::error::Position;

/// Batches of a [`Columns`] being made.
pub(super) struct Filler {
    /// Batches complete, with their records' starts.
    pub(super) ready: VecDeque<(TextBatch, Vec<Position>)>,
    /// The batch being filled, its records' starts and its bytes of text.
    pub(super) carry: Option<(TextBatch, Vec<Position>, usize)>,
    pub(super) batch_rows: usize,
    /// Bytes per row of each column in the last batch sealed, to reserve
    /// room for the next (no copy as its columns grow).
    pub(super) per_row: Vec<f64>,
    /// Rows of the last batch sealed.
    pub(super) last_rows: usize,
    /// The columns that new batches convert as read: type and field.
    pub(super) template: Vec<Option<(DataType, usize)>>,
}

impl Filler {
    /// Rows the batch being filled can still take.
    pub(super) fn room(&self) -> usize {
        self.batch_rows - self.carry.as_ref().map_or(0, |c| c.0.rows)
    }

    /// The batch being filled, `width` columns wide.
    pub(super) fn target(&mut self, width: usize) -> &mut (TextBatch, Vec<Position>, usize) {
        // As many rows as the batch before, when it ended on its bytes.
        let want = match self.last_rows {
            0 => self.batch_rows.min(1 << 13),
            n => self.batch_rows.min(n),
        };
        let (per_row, template) = (&self.per_row, &self.template);
        self.carry.get_or_insert_with(|| {
            let direct: Vec<Option<direct::Builder>> = (0..width)
                .map(|j| {
                    let (ty, field) = template.get(j).copied().flatten()?;
                    direct::Builder::new(ty, field, want)
                })
                .collect();
            let columns = (0..width)
                .map(|j| {
                    if direct[j].is_some() {
                        return StringColumn::new(0);
                    }
                    let mut c = StringColumn::new(want);
                    let guess = per_row.get(j).map_or(0.0, |&b| b * want as f64 * 1.05);
                    c.data.reserve((guess as usize).min(BATCH_BYTES));
                    c
                })
                .collect();
            (TextBatch { columns, direct, rows: 0 }, Vec::with_capacity(want), 0)
        })
    }

    /// Moves the batch being filled to the ready ones when it is full.
    pub(super) fn seal_if_full(&mut self) {
        if let Some((b, _, bytes)) = &self.carry {
            if b.rows >= self.batch_rows || *bytes >= BATCH_BYTES {
                self.seal();
            }
        }
    }

    /// Moves the batch being filled, if any, to the ready ones.
    pub(super) fn seal(&mut self) -> bool {
        match self.carry.take() {
            Some((b, s, _)) => {
                self.last_rows = b.rows;
                let rows = b.rows.max(1) as f64;
                self.per_row = b.columns.iter().map(|c| c.data.len() as f64 / rows).collect();
                self.ready.push_back((b, s));
                true
            }
            None => false,
        }
    }

    /// Rows per batch from now on, for the rows already read too.
    /// (`sp`: the spellings of the columns converted as read.)
    pub(super) fn resize(&mut self, n: usize, sp: &Spellings) {
        self.batch_rows = n;
        let mut old: Vec<(TextBatch, Vec<Position>)> = self.ready.drain(..).collect();
        if let Some((b, s, _)) = self.carry.take() {
            old.push((b, s));
        }
        for (mut b, starts) in old {
            for (i, &start) in starts.iter().enumerate() {
                let (c, cs, bytes) = self.target(b.columns.len());
                let row = c.rows;
                for (j, (dst, src)) in c.columns.iter_mut().zip(&b.columns).enumerate() {
                    let from = b.direct.get_mut(j).and_then(Option::as_mut);
                    match (c.direct.get_mut(j).and_then(Option::as_mut), from) {
                        (Some(d), Some(from)) => d.push_from(from, i),
                        (None, Some(_)) => {
                            unreachable!("the columns converted as read change only with types")
                        }
                        (d, None) => {
                            let v = &src.data[src.offsets[i] as usize..src.offsets[i + 1] as usize];
                            *bytes += v.len();
                            if let Some(d) = d {
                                d.extend_from(std::iter::once(v), row, sp);
                                d.text += v.len();
                                continue;
                            }
                            dst.data.extend_from_slice(v);
                            // No longer than the batch it comes from.
                            dst.offsets.push(dst.data.len() as i32);
                        }
                    }
                }
                c.rows += 1;
                cs.push(start);
                self.seal_if_full();
            }
        }
    }
}
