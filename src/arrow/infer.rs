//! Inference of column types (see [`super::typed`] for the rules): what
//! every value of a column fits, kept as a few flags per column that
//! values clear and that merge across parts of a column.

use super::number::{parse_f64_in, parse_i64_in, trim};
use super::temporal::parse_when_in;
use super::typed::{DataType, Spellings};
use super::StringColumn;
use crate::error::Result;
use crate::pool;

/// Inference of column types (see the [module docs](self)) from the
/// values fed to it: the first rows of each column (sampled inference).
#[derive(Clone, Debug)]
pub(crate) struct Inference {
    fits: Vec<Fits>,
    /// Rows still to look at.
    left: usize,
    spellings: Spellings,
}

/// What every value of a column so far fits: a point in the lattice of
/// types, which each value can only move down. Two columns' states merge
/// ([`Fits::merge`]) into that of the two columns one after the other, so
/// parts of a column may be looked at apart, on several threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fits {
    int: bool,
    boolean: bool,
    float: bool,
    /// Dates alone.
    date: bool,
    /// Dates, or dates and times with no zone.
    naive: bool,
    /// Dates and times with a zone.
    zoned: bool,
    /// A time with a fraction of a second was seen.
    frac: bool,
    /// Every time fits nanoseconds in `i64`.
    ns: bool,
    /// A value was not null.
    any: bool,
}

impl Fits {
    /// The state of a column with no value yet: every type fits.
    pub(crate) const ALL: Fits = Fits {
        int: true,
        boolean: true,
        float: true,
        date: true,
        naive: true,
        zoned: true,
        frac: false,
        ns: true,
        any: false,
    };

    /// Whether a type other than `utf8` still fits.
    pub(crate) fn any_left(&self) -> bool {
        self.int || self.boolean || self.float || self.date || self.naive || self.zoned
    }

    /// Whether a value that is not null was seen.
    pub(crate) fn seen_value(&self) -> bool {
        self.any
    }

    /// Looks at value `i` of text column `c`, read with the bytes after
    /// it in the column's buffer (the number parsers read short values a
    /// word at a time).
    #[inline(always)]
    pub(crate) fn see_value(&mut self, c: &StringColumn, i: usize, sp: &Spellings) {
        let (s, e) = (c.offsets[i] as usize, c.offsets[i + 1] as usize);
        self.see_at(&c.data[s..], e - s, sp);
    }

    /// Looks at the value `window[..len]`, the bytes after it in the
    /// window read but not used (see [`parse_i64_in`]).
    #[inline(always)]
    fn see_at(&mut self, window: &[u8], len: usize, sp: &Spellings) {
        let v = &window[..len];
        if sp.is_null(v) {
            return;
        }
        self.any = true;
        let int = self.int && parse_i64_in(window, len).is_some();
        self.int = int;
        self.boolean = self.boolean && sp.parse_bool(v).is_some();
        // A decimal `int64` (an optional `-` and digits, with spaces and
        // tabs around) is a `float64` too: only a hex one is not.
        self.float = self.float
            && ((int && !matches!(trim(v), [b'0', b'x' | b'X', ..]))
                || parse_f64_in(window, len).is_some());
        if self.date || self.naive || self.zoned {
            match parse_when_in(window, len) {
                Some(w) => {
                    self.date &= w.date_only;
                    self.naive &= !w.utc && !w.padded;
                    self.zoned &= w.utc && !w.padded;
                    self.frac |= w.frac;
                    self.ns &= w.ns().is_some();
                }
                None => (self.date, self.naive, self.zoned) = (false, false, false),
            }
        }
    }

    /// Looks at the values of text column `c`, until no type but `utf8`
    /// fits.
    pub(crate) fn see_column(&mut self, c: &StringColumn, sp: &Spellings) {
        for i in 0..c.len() {
            if !self.any_left() {
                // `any` too is settled: a value was not null.
                return;
            }
            self.see_value(c, i, sp);
        }
    }

    /// The state of this column's values followed by `other`'s.
    pub(crate) fn merge(self, other: Fits) -> Fits {
        Fits {
            int: self.int && other.int,
            boolean: self.boolean && other.boolean,
            float: self.float && other.float,
            date: self.date && other.date,
            naive: self.naive && other.naive,
            zoned: self.zoned && other.zoned,
            frac: self.frac || other.frac,
            ns: self.ns && other.ns,
            any: self.any || other.any,
        }
    }

    /// The type: the first of `int64`, `bool`, `date32`, `timestamp`
    /// (without a zone, then with), `float64` that fits, else `utf8`.
    pub(crate) fn data_type(&self) -> DataType {
        let ts = |utc| DataType::Timestamp { nanos: self.frac, utc };
        if !self.any {
            DataType::Utf8
        } else if self.int {
            DataType::Int64
        } else if self.boolean {
            DataType::Boolean
        } else if self.date {
            DataType::Date32
        } else if self.naive && (self.ns || !self.frac) {
            ts(false)
        } else if self.zoned && (self.ns || !self.frac) {
            ts(true)
        } else if self.float {
            DataType::Float64
        } else {
            DataType::Utf8
        }
    }
}

impl Inference {
    /// Inference over the first `rows` rows of `width` columns, with
    /// nulls and booleans spelt as `spellings` says.
    pub(crate) fn new(width: usize, rows: usize, spellings: &Spellings) -> Inference {
        Inference { fits: vec![Fits::ALL; width], left: rows, spellings: spellings.clone() }
    }

    /// Looks at the rows of `columns` (one batch's), up to the rows left.
    pub(crate) fn feed(&mut self, columns: &[StringColumn]) {
        let n = columns.first().map_or(0, StringColumn::len).min(self.left);
        for (c, f) in columns.iter().zip(&mut self.fits) {
            for i in 0..n {
                if !f.any_left() {
                    break;
                }
                f.see_value(c, i, &self.spellings);
            }
        }
        self.left -= n;
    }

    /// [`Inference::feed`] with the columns looked at on up to `threads`
    /// threads (the same fits: each column's values in order); fails only
    /// if a thread panics.
    pub(crate) fn feed_on(&mut self, columns: &[StringColumn], threads: usize) -> Result<()> {
        if threads <= 1 || columns.len() < 2 {
            self.feed(columns);
            return Ok(());
        }
        let n = columns.first().map_or(0, StringColumn::len).min(self.left);
        let jobs: Vec<(&StringColumn, Fits)> =
            columns.iter().zip(self.fits.iter().copied()).collect();
        let sp = &self.spellings;
        let fits = pool::map_on("infer", threads, &jobs, |&(c, mut f)| {
            for i in 0..n {
                if !f.any_left() {
                    break;
                }
                f.see_value(c, i, sp);
            }
            Ok(f)
        })?;
        for (f, g) in self.fits.iter_mut().zip(fits) {
            *f = g;
        }
        self.left -= n;
        Ok(())
    }

    /// Looks at the first rows of column `j` (`c`, one batch's), up to
    /// the rows left; the caller feeds each column of a batch, then calls
    /// [`Inference::fed`] with the batch's rows.
    pub(crate) fn feed_column(&mut self, j: usize, c: &StringColumn) {
        let f = &mut self.fits[j];
        for i in 0..c.len().min(self.left) {
            if !f.any_left() {
                break;
            }
            f.see_value(c, i, &self.spellings);
        }
    }

    /// Counts `rows` rows fed column by column ([`Inference::feed_column`]).
    pub(crate) fn fed(&mut self, rows: usize) {
        self.left -= rows.min(self.left);
    }

    /// Whether more rows are wanted.
    pub(crate) fn wants_more(&self) -> bool {
        self.left > 0
    }

    #[cfg(test)]
    /// The type of each column.
    pub(crate) fn types(&self) -> Vec<DataType> {
        self.fits.iter().map(Fits::data_type).collect()
    }

    /// What each column's values fit.
    pub(crate) fn fits(&self) -> &[Fits] {
        &self.fits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporal_inference_follows_pyarrow() {
        use DataType::*;
        let ts = |nanos, utc| Timestamp { nanos, utc };
        let cases: [(&[&str], DataType); 10] = [
            (&["2024-08-18", "NA", ""], Date32),
            (&["2024-08-18", "2024-08-18T10:10:32"], ts(false, false)),
            (&["2024-08-18", "2024-08-18T10:10:32.5"], ts(true, false)),
            (&["2024-08-18T10:10:32Z", "2024-08-18T10:10:32+01:00"], ts(false, true)),
            (&["2024-08-18T10:10:32.5+01:00"], ts(true, true)),
            (&["2024-08-18", "2024-08-18T10:10:32Z"], Utf8),
            (&["2024-08-18T10:10:32Z", "2024-08-18T10:10:32"], Utf8),
            (&["2024-08-18T10:10:32.5", "9999-08-18T10:10:32"], Utf8),
            (&["20240818", "1"], Int64),
            (&[" 2024-08-18", "2024-08-18T10:10:32"], Utf8),
        ];
        for (vals, want) in cases {
            let mut inf = Inference::new(1, 100, &Spellings::default());
            inf.feed(&[col(vals)]);
            assert_eq!(inf.types(), [want], "{vals:?}");
        }
    }

    fn col(vals: &[&str]) -> StringColumn {
        let mut c = StringColumn::new(vals.len());
        for v in vals {
            c.data.extend_from_slice(v.as_bytes());
            c.offsets.push(c.data.len() as i32);
        }
        c
    }

    #[test]
    fn inference_takes_the_narrowest_type() {
        let cols = [
            col(&["1", "", "-3"]),
            col(&["1", "2.5", "NA"]),
            col(&["true", "0", "False"]),
            col(&["1", "0", "1"]),
            col(&["", "null", ""]),
            col(&["1", "x", "2"]),
            col(&["1", "+5", "2"]),
        ];
        use DataType::*;
        let mut inf = Inference::new(cols.len(), 10, &Spellings::default());
        inf.feed(&cols);
        assert!(inf.wants_more());
        assert_eq!(inf.types(), [Int64, Float64, Boolean, Int64, Utf8, Utf8, Float64]);
        // Only the rows asked for, over the batches fed.
        let mut inf = Inference::new(1, 2, &Spellings::default());
        inf.feed(&[col(&["1"])]);
        inf.feed(&[col(&["2", "x"])]);
        assert!(!inf.wants_more());
        assert_eq!(inf.types(), [Int64]);
    }

    /// `Fits::see_value`'s rules written out plainly, each parser on the
    /// value alone: the reference for the windowed parsers and the
    /// skipped float parse.
    fn see_plainly(f: &mut Fits, v: &[u8], sp: &Spellings) {
        use crate::arrow::temporal::parse_when;
        use crate::arrow::typed::{parse_f64, parse_i64};
        if sp.is_null(v) {
            return;
        }
        f.any = true;
        f.int = f.int && parse_i64(v).is_some();
        f.boolean = f.boolean && sp.parse_bool(v).is_some();
        f.float = f.float && parse_f64(v).is_some();
        if f.date || f.naive || f.zoned {
            match parse_when(v) {
                Some(w) => {
                    f.date &= w.date_only;
                    f.naive &= !w.utc && !w.padded;
                    f.zoned &= w.utc && !w.padded;
                    f.frac |= w.frac;
                    f.ns &= w.ns().is_some();
                }
                None => (f.date, f.naive, f.zoned) = (false, false, false),
            }
        }
    }

    #[test]
    fn fits_of_each_value_as_its_parsers_alone_give_them() {
        let values = [
            "1",
            "-3",
            "007",
            " 42\t",
            "0x1F",
            "0X1f",
            "0x",
            "-0x1",
            "+5",
            "-",
            "",
            "NA",
            "nan",
            "1.5",
            "-.5",
            "1e3",
            "12345678",
            "123456789",
            "-12345678",
            "99999999999999999999",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "00000000000000000000001",
            "1 2",
            "true",
            "False",
            "2024-08-18",
            "2024-08-18T10:10:32",
            "2024-08-18T10:10:32Z",
            "2024-08-18 10:10:32.5+01:00",
            "x",
            "1_000",
            "١٢",
        ];
        let sp = Spellings::default();
        for a in values {
            for b in values {
                // Each value before and after another (the bytes after a
                // value in the column's buffer are read, never used).
                let c = col(&[a, b, a]);
                let mut fast = Fits::ALL;
                let mut plain = Fits::ALL;
                for (i, v) in [a, b, a].iter().enumerate() {
                    fast.see_value(&c, i, &sp);
                    see_plainly(&mut plain, v.as_bytes(), &sp);
                    assert_eq!(fast, plain, "{a:?} then {b:?}, at {i}");
                }
                let mut one = Fits::ALL;
                one.see_column(&c, &sp);
                assert_eq!(one.data_type(), plain.data_type(), "{a:?} then {b:?}");
            }
        }
    }
}
