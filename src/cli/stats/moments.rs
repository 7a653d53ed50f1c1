//! Running numeric statistics of a column for `stats`: the count, the
//! extremes, and exact sums behind the sum, mean and standard deviation.
//!
//! Integers (while every value of a part is one) are summed exactly in
//! 128 bits and their squares in 192; floats, and their squares, in the
//! fixed-point sums of [`super::exact`]. Both are exact, so the results,
//! rounded once from their totals, are the same bits however a column was
//! split into parts and whatever the order of the parts.
//!
//! A value that is not finite (`inf`, `NaN`) stays out of the sums: the
//! sum and the mean are then those of IEEE addition (`inf`, `-inf`, or
//! `NaN` for a `NaN` or both infinities) and the deviation `NaN`.
//!
//! If you add a field, also change [`Numbers::merge`], which combines two
//! parts of a column read on different threads.

use super::exact::{scale, Sums, Totals};

/// An unsigned 256-bit integer, four 64-bit limbs from the least
/// significant: just what [`Numbers::int_variance`] needs.
#[derive(Clone, Copy, Debug, PartialEq)]
struct U256([u64; 4]);

impl U256 {
    fn from_u192(hi: u64, lo: u128) -> U256 {
        U256([lo as u64, (lo >> 64) as u64, hi, 0])
    }

    /// `self * m`; `self` is below 2^192, so the product fits.
    fn mul_u64(self, m: u64) -> U256 {
        let mut out = [0u64; 4];
        let mut carry = 0u128;
        for (o, &l) in out.iter_mut().zip(&self.0) {
            let p = u128::from(l) * u128::from(m) + carry;
            *o = p as u64;
            carry = p >> 64;
        }
        debug_assert_eq!(carry, 0);
        U256(out)
    }

    /// `x * x`.
    fn square(x: u128) -> U256 {
        let (lo, hi) = (x as u64 as u128, x >> 64);
        let mut out = U256([0; 4]);
        out.add_at(lo * lo, 0);
        out.add_at(lo * hi, 1);
        out.add_at(lo * hi, 1);
        out.add_at(hi * hi, 2);
        out
    }

    /// Adds `v * 2^(64 * at)`.
    fn add_at(&mut self, v: u128, at: usize) {
        let mut carry = v;
        for l in &mut self.0[at..] {
            let s = u128::from(*l) + (carry as u64 as u128);
            *l = s as u64;
            carry = (carry >> 64) + (s >> 64);
            if carry == 0 {
                break;
            }
        }
    }

    /// `self - o`, `None` when `o` is larger.
    fn sub(self, o: U256) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut borrow = false;
        for ((d, &a), &b) in out.iter_mut().zip(&self.0).zip(&o.0) {
            let (x, b1) = a.overflowing_sub(b);
            let (x, b2) = x.overflowing_sub(u64::from(borrow));
            *d = x;
            borrow = b1 || b2;
        }
        (!borrow).then_some(U256(out))
    }

    /// The nearest `f64`: the top 128 bits from the highest limb that is
    /// not 0, with any bit below them kept as a sticky lowest bit (those
    /// 128 bits hold at least 65 significant ones, so it cannot change a
    /// rounding but where it breaks a tie).
    fn to_f64(self) -> f64 {
        let l = self.0;
        if l[2] == 0 && l[3] == 0 {
            return ((u128::from(l[1]) << 64) | u128::from(l[0])) as f64;
        }
        let h = if l[3] != 0 { 3 } else { 2 };
        let mut top = (u128::from(l[h]) << 64) | u128::from(l[h - 1]);
        if l[..h - 1].iter().any(|&x| x != 0) {
            top |= 1;
        }
        scale(top as f64, 64 * (h as i64 - 1))
    }
}

/// Running numeric statistics of a column's values (see the module's
/// comment).
#[derive(Clone, Default)]
pub(super) struct Numbers {
    /// Every value added, finite or not.
    pub n: u64,
    /// The integers added with [`Numbers::add_int`] (while every value
    /// of the part is one): their exact sum, smallest and largest.
    pub int_sum: i128,
    pub int_min: i64,
    pub int_max: i64,
    /// Those integers' exact sum of squares (`int_sq_hi * 2^128 +
    /// int_sq`: each square is below 2^126, so 192 bits hold the squares
    /// of 2^64 values), for a variance that does not depend on how the
    /// values were split into chunks.
    int_sq: u128,
    int_sq_hi: u64,
    /// Every value's smallest and largest, as floats.
    pub min: f64,
    pub max: f64,
    /// The exact sums of the finite values added with [`Numbers::add`]
    /// (none before the first: a column of integers or text never
    /// allocates them).
    floats: Option<Box<Sums>>,
    /// Whether `inf`, `-inf` or `NaN` was added.
    pos_inf: bool,
    neg_inf: bool,
    nan: bool,
}

impl Numbers {
    #[inline]
    pub fn add_int(&mut self, i: i64) {
        if self.n == 0 {
            (self.int_min, self.int_max) = (i, i);
        } else {
            self.int_min = self.int_min.min(i);
            self.int_max = self.int_max.max(i);
        }
        self.extremes(i as f64);
        self.int_sum += i128::from(i);
        let a = u128::from(i.unsigned_abs());
        let (sq, carry) = self.int_sq.overflowing_add(a * a);
        (self.int_sq, self.int_sq_hi) = (sq, self.int_sq_hi + u64::from(carry));
    }

    /// Adds one float. Always inlined into the column's loop: as a call,
    /// its saving and restoring of registers is a part of `stats`' time
    /// (docs/BENCHMARKS.md, "`stats` from exact sums").
    #[inline(always)]
    pub fn add(&mut self, x: f64) {
        self.extremes(x);
        if x.is_finite() {
            self.floats.get_or_insert_with(Box::default).add(x);
        } else {
            self.add_non_finite(x);
        }
    }

    /// Counts `x` and keeps it if it is the smallest or largest.
    #[inline]
    fn extremes(&mut self, x: f64) {
        if self.n == 0 {
            (self.min, self.max) = (x, x);
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
    }

    #[cold]
    fn add_non_finite(&mut self, x: f64) {
        if x.is_nan() {
            self.nan = true;
        } else if x > 0.0 {
            self.pos_inf = true;
        } else {
            self.neg_inf = true;
        }
    }

    /// The sum of the values that are not finite, as IEEE addition gives
    /// it in any order (`None` if every value is finite).
    fn non_finite_sum(&self) -> Option<f64> {
        match (self.nan || (self.pos_inf && self.neg_inf), self.pos_inf, self.neg_inf) {
            (true, _, _) => Some(f64::NAN),
            (_, true, _) => Some(f64::INFINITY),
            (_, _, true) => Some(f64::NEG_INFINITY),
            _ => None,
        }
    }

    /// The exact totals of every finite value.
    fn totals(&self) -> Totals {
        let sq = [self.int_sq as u64, (self.int_sq >> 64) as u64, self.int_sq_hi];
        Totals::new(self.floats.as_deref(), self.int_sum, sq)
    }

    /// The population variance of integers, with `zeros` more values of
    /// 0, from exact sums (`(N * sum of squares - sum^2) / N^2`, in 256
    /// bits), so the same however the values were split.
    pub fn int_variance(&self, zeros: u64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let n = self.n + zeros;
        let squares = U256::from_u192(self.int_sq_hi, self.int_sq).mul_u64(n);
        let sum = self.int_sum.unsigned_abs();
        let num = squares.sub(U256::square(sum))?;
        Some(num.to_f64() / (n as f64 * n as f64))
    }

    /// The sum of a column of floats: the exact sum rounded once (`inf`
    /// past the largest float), or that of the values that are not finite.
    pub fn sum(&self) -> f64 {
        self.non_finite_sum().unwrap_or_else(|| self.totals().sum())
    }

    /// The mean of a column of floats with `zeros` more values of 0
    /// (`--nulls`): the exact one rounded once (finite even where the sum
    /// overflows), or the sum of the values that are not finite over the
    /// count.
    pub fn mean(&self, zeros: u64) -> f64 {
        let n = self.n + zeros;
        match self.non_finite_sum() {
            Some(s) => s / n as f64,
            None if n == 0 => f64::NAN,
            None => self.totals().mean(n),
        }
    }

    /// The population standard deviation with `zeros` more values of 0,
    /// from the exact sums (`NaN` when a value was not finite, or there is
    /// none).
    pub fn stddev(&self, zeros: u64) -> f64 {
        let n = self.n + zeros;
        if self.non_finite_sum().is_some() || n == 0 {
            return f64::NAN;
        }
        self.totals().stddev(n)
    }

    pub fn merge(&mut self, o: Numbers) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = o;
            return;
        }
        self.int_min = self.int_min.min(o.int_min);
        self.int_max = self.int_max.max(o.int_max);
        let (sq, carry) = self.int_sq.overflowing_add(o.int_sq);
        self.int_sq = sq;
        self.int_sq_hi += o.int_sq_hi + u64::from(carry);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.int_sum += o.int_sum;
        self.n += o.n;
        match (&mut self.floats, o.floats) {
            (Some(a), Some(b)) => a.merge(&b),
            (a @ None, b) => *a = b,
            (Some(_), None) => {}
        }
        self.pos_inf |= o.pos_inf;
        self.neg_inf |= o.neg_inf;
        self.nan |= o.nan;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The population mean and deviation of `v` the slow way, in two
    /// passes: the differences from the first value, scaled by `2^-e` (a
    /// power of two that brings the largest near 1), then their squared
    /// differences from their mean.
    fn oracle(v: &[f64], e: i64) -> (f64, f64) {
        let n = v.len() as f64;
        let s: Vec<f64> = v.iter().map(|&x| scale(x, -e) - scale(v[0], -e)).collect();
        let mean = s.iter().sum::<f64>() / n;
        let var = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        (v[0] + scale(mean, e), scale(var.sqrt(), e))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs()
    }

    fn numbers(v: &[f64]) -> Numbers {
        let mut n = Numbers::default();
        v.iter().for_each(|&x| n.add(x));
        n
    }

    /// The sum, mean and deviation as bits, to compare exactly.
    fn bits(n: &Numbers) -> [u64; 3] {
        [n.sum().to_bits(), n.mean(0).to_bits(), n.stddev(0).to_bits()]
    }

    /// Values spread by 1e-300 and by 1e308, where squares of differences
    /// underflow to 0 or overflow to infinity: the oracle's mean and
    /// deviation, whole and split into two parts at every place (the
    /// same bits for every split).
    #[test]
    fn tiny_and_huge_spreads_keep_their_deviation() {
        let tiny: Vec<f64> = (0..40).map(|i| f64::from(i % 7 + 1) * 1e-301).collect();
        let huge: Vec<f64> = (0..40).map(|i| if i % 3 == 0 { -1e308 } else { 1e308 }).collect();
        let near: Vec<f64> = (0..40).map(|i| 1e300 + f64::from(i) * 1e285).collect();
        let mixed: Vec<f64> = (0..40).map(|i| if i == 5 { 1e300 } else { f64::from(i) }).collect();
        for (v, e) in [(&tiny, -997), (&huge, 1023), (&near, 997), (&mixed, 997)] {
            let (mean, sd) = oracle(v, e);
            assert!(sd > 0.0 && sd.is_finite());
            let whole = numbers(v);
            assert!(close(whole.mean(0), mean), "{} {mean}", whole.mean(0));
            assert!(close(whole.stddev(0), sd), "{} {sd}", whole.stddev(0));
            for cut in 0..=v.len() {
                let mut a = numbers(&v[cut..]);
                a.merge(numbers(&v[..cut]));
                assert_eq!(bits(&a), bits(&whole), "cut {cut}");
            }
        }
    }

    /// Zeros first, then ordinary or tiny values; and a column of one
    /// value.
    #[test]
    fn leading_zeros_and_constant_columns() {
        for (v, e) in [(&[0.0, 0.0, 3.0, 5.0][..], 0), (&[0.0, 1e-301, 3e-301, 0.0], -997)] {
            let (mean, sd) = oracle(v, e);
            let n = numbers(v);
            assert!(close(n.mean(0), mean) && close(n.stddev(0), sd), "{v:?}: {}", n.stddev(0));
        }
        let n = numbers(&[7.5; 100]);
        assert_eq!((n.mean(0), n.stddev(0)), (7.5, 0.0));
    }

    /// A value that is not finite gives a deviation of `NaN`, not 0; the
    /// sum and mean are IEEE addition's.
    #[test]
    fn values_that_are_not_finite_give_nan() {
        for v in [
            [1.0, f64::INFINITY, 2.0],
            [f64::NAN, 1.0, 2.0],
            [-f64::INFINITY, f64::INFINITY, 1.0],
            [-f64::INFINITY, 1e308, 1e308],
        ] {
            let n = numbers(&v);
            assert!(n.stddev(0).is_nan(), "{v:?}");
            let want = v.iter().sum::<f64>();
            assert!(n.sum() == want || (n.sum().is_nan() && want.is_nan()), "{v:?}");
            let want = want / 3.0;
            assert!(n.mean(0) == want || (n.mean(0).is_nan() && want.is_nan()), "{v:?}");
        }
        assert_eq!(numbers(&[5.0, 5.0, 5.0]).stddev(0), 0.0);
    }

    /// A sum past the largest float is `inf`, but the mean is finite.
    #[test]
    fn an_overflowing_sum_keeps_a_finite_mean() {
        let n = numbers(&[1e308, 1.5e308, 1.7e308]);
        assert_eq!(n.sum(), f64::INFINITY);
        assert_eq!(n.mean(0), 1.4e308);
        assert!(close(n.stddev(0), oracle(&[1e308, 1.5e308, 1.7e308], 1000).1));
        // Added in this order, floats overflow on the way; exactly, not.
        assert_eq!(numbers(&[1e308, 1e308, -1e308]).sum(), 1e308);
    }

    /// Integers first (in 128 and 192 bits), then floats: one column's
    /// totals, whichever part held which.
    #[test]
    fn integers_and_floats_join() {
        let mut a = Numbers::default();
        a.add_int(i64::MAX);
        a.add_int(3);
        a.add(0.5);
        let mut b = Numbers::default();
        b.add(0.5);
        b.add(3.0);
        b.add(i64::MAX as f64);
        // 2^63 - 1 and 2^63: one apart, exactly.
        assert_eq!(a.sum(), b.sum());
        assert_eq!(a.sum(), 2f64.powi(63));
        let mut c = Numbers::default();
        c.add_int(2);
        c.add_int(4);
        c.add(4.0);
        let mut d = Numbers::default();
        [4.0, 5.0, 5.0, 7.0, 9.0].iter().for_each(|&x| d.add(x));
        c.merge(d);
        assert_eq!((c.sum(), c.mean(0), c.stddev(0)), (40.0, 5.0, 2.0));
    }

    /// Integers whose squares overflow 128 bits: the variance is exact
    /// (from 256-bit sums), so the same bits however the values are split.
    #[test]
    fn huge_integers_have_one_variance_for_any_split() {
        let base = [i64::MAX, i64::MIN, 0, 12_345, -4_611_686_018_427_387_904];
        let v: Vec<i64> = base.iter().copied().cycle().take(5 * 1000).collect();
        let ints = |v: &[i64]| {
            let mut n = Numbers::default();
            v.iter().for_each(|&x| n.add_int(x));
            n
        };
        let whole = ints(&v).int_variance(0).unwrap();
        let mean = base.iter().map(|&x| i128::from(x)).sum::<i128>() as f64 / 5.0;
        let want = base.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / 5.0;
        assert!(close(whole, want), "{whole} {want}");
        for cut in [1, 7, 2500, 4999] {
            let mut a = ints(&v[..cut]);
            a.merge(ints(&v[cut..]));
            assert_eq!(a.int_variance(0).unwrap().to_bits(), whole.to_bits(), "cut {cut}");
            // The same totals through the exact sums of floats.
            assert!(close(a.stddev(0), whole.sqrt()), "cut {cut}");
        }
        // With zeros: the values and the zeros together.
        let z = ints(&[i64::MAX, i64::MAX]).int_variance(2).unwrap();
        assert!(close(z, (i64::MAX as f64 / 2.0).powi(2)), "{z}");
    }

    #[test]
    fn u256_squares_and_rounds() {
        let x = u128::MAX >> 1;
        let sq = U256::square(x);
        assert!(close(sq.to_f64(), (x as f64) * (x as f64)));
        assert_eq!(U256::from_u192(1, 0).mul_u64(3).0, [0, 0, 3, 0]);
        assert_eq!(sq.sub(sq), Some(U256([0; 4])));
        assert_eq!(U256([0; 4]).sub(U256([1, 0, 0, 0])), None);
        // 2^128 + 1 rounds to 2^128; (2^53 + 1) * 2^128 + 1 rounds up past
        // the tie thanks to the sticky bit.
        assert_eq!(U256([1, 0, 1, 0]).to_f64(), 2f64.powi(128));
        let tie = U256([1, 0, (1 << 53) + 1, 0]).to_f64();
        assert_eq!(tie, ((1u64 << 53) + 2) as f64 * 2f64.powi(128));
    }

    /// The empty values as zeros (`--nulls`): the moments of the values
    /// with the zeros among them.
    #[test]
    fn zeros_join_the_moments() {
        let v = [2.5, 4.0, 1e-3];
        let all = numbers(&v);
        let (mean, sd) = oracle(&[2.5, 4.0, 1e-3, 0.0, 0.0], 0);
        assert!(close(all.mean(2), mean) && close(all.stddev(2), sd));
        let tiny = numbers(&[3e-300, 1e-300]);
        let (mean, sd) = oracle(&[3e-300, 1e-300, 0.0, 0.0], -996);
        assert!(close(tiny.mean(2), mean) && close(tiny.stddev(2), sd), "{}", tiny.stddev(2));
    }
}
