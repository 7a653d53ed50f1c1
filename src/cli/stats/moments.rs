//! Running numeric statistics of a column for `stats`: the count, the sums
//! (exact for integers), the extremes, and the moments behind the mean and
//! the standard deviation.
//!
//! The moments are the sums of `d = (x - shift) * 2^-k` and of `d * d`,
//! where `shift` is the first finite value: no division per value, and no
//! cancellation when the values lie far from 0. The power of two `2^k`
//! exists so that `d * d` neither overflows (values 1e300 apart) nor
//! underflows (values 1e-300 apart): it starts at 1 and moves only when a
//! difference leaves the range 2^-64 to 2^64 (above, or below while every
//! difference so far is below too), and moving it rescales the sums
//! exactly. For ordinary data it never moves, and the sums are those of
//! `x - shift`, bit for bit.
//!
//! A value that is not finite (`inf`, `NaN`) stays out of the moments: the
//! mean is then the sum's (`inf`, `-inf` or `NaN`) and the deviation `NaN`.
//!
//! If you add a field, also change [`Numbers::merge`], which combines two
//! parts of a column read on different threads.

/// The largest scaled difference kept without moving `k` (2^64): its
/// square, times any count of values, stays far from overflowing.
const HIGH: f64 = 18_446_744_073_709_551_616.0;
/// The smallest (2^-64): while every scaled difference is below it, a
/// new one moves `k` down, before squares fall to subnormals or zero.
const LOW: f64 = 1.0 / HIGH;
/// The bounds of `k`, so that `2^-k` and `2^k` are normal floats.
const K_MAX: i32 = 1000;

/// The binary exponent of a finite, non-zero `a` (-1023 for a subnormal).
fn exponent(a: f64) -> i32 {
    ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// `2^k` for `k` in `-1022..=1023`.
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `x * 2^e`, in steps that each stay within the normal powers of two
/// (exact unless the result overflows or becomes subnormal).
fn scale(mut x: f64, mut e: i32) -> f64 {
    while e != 0 && x != 0.0 {
        let step = e.clamp(-K_MAX, K_MAX);
        x *= pow2(step);
        e -= step;
    }
    x
}

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
        scale(top as f64, 64 * (h as i32 - 1))
    }
}

/// Running numeric statistics of a column's values (see the module's
/// comment for the moments).
#[derive(Clone, Copy)]
pub(super) struct Numbers {
    /// Every value added, finite or not.
    pub n: u64,
    /// While every value is an integer: the exact sum, smallest and
    /// largest.
    pub int_sum: i128,
    pub int_min: i64,
    pub int_max: i64,
    /// While every value is an integer: the exact sum of their squares
    /// (`int_sq_hi * 2^128 + int_sq`: each square is below 2^126, so 192
    /// bits hold the squares of 2^64 values), for a variance that does not
    /// depend on how the values were split into chunks.
    int_sq: u128,
    int_sq_hi: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// The finite values in the moments, and whether any value was not
    /// finite.
    finite: u64,
    non_finite: bool,
    shift: f64,
    /// The scale `2^k` of the differences, and `2^-k`.
    k: i32,
    inv: f64,
    /// The largest scaled difference so far.
    top: f64,
    d1: f64,
    d2: f64,
}

impl Default for Numbers {
    fn default() -> Numbers {
        Numbers {
            n: 0,
            int_sum: 0,
            int_min: 0,
            int_max: 0,
            int_sq: 0,
            int_sq_hi: 0,
            sum: 0.0,
            min: 0.0,
            max: 0.0,
            finite: 0,
            non_finite: false,
            shift: 0.0,
            k: 0,
            inv: 1.0,
            top: 0.0,
            d1: 0.0,
            d2: 0.0,
        }
    }
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
        self.int_sum += i128::from(i);
        let a = u128::from(i.unsigned_abs());
        let (sq, carry) = self.int_sq.overflowing_add(a * a);
        (self.int_sq, self.int_sq_hi) = (sq, self.int_sq_hi + u64::from(carry));
        self.add(i as f64);
    }

    #[inline]
    pub fn add(&mut self, x: f64) {
        if self.n == 0 {
            (self.min, self.max) = (x, x);
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
        self.sum += x;
        let d = (x - self.shift) * self.inv;
        let a = d.abs();
        // `NaN` fails the test; so does a first value that is not 0 (`top`
        // is 0 then, and the first value becomes the shift), and a tiny
        // difference while every one so far is tiny. A difference of 0
        // (a column of one value) adds nothing wherever the shift is.
        if a <= HIGH && (self.top >= LOW || a == 0.0) {
            self.finite += 1;
            self.top = self.top.max(a);
            self.d1 += d;
            self.d2 += d * d;
        } else {
            self.add_rare(x);
        }
    }

    /// [`Numbers::add`] for a value that is not finite, the first finite
    /// value, and differences that may move `k`.
    #[inline(never)]
    fn add_rare(&mut self, x: f64) {
        if !x.is_finite() {
            self.non_finite = true;
            return;
        }
        self.finite += 1;
        if self.finite == 1 {
            self.shift = x;
            return;
        }
        let raw = x - self.shift;
        if raw == 0.0 {
            return;
        }
        // The exponent of the difference (from its half when it overflows).
        let e = if raw.is_finite() {
            exponent(raw.abs())
        } else {
            exponent((x * 0.5 - self.shift * 0.5).abs()) + 1
        };
        let a = raw.abs() * self.inv;
        // `a` is not NaN here (both values are finite), but may be `inf`.
        if a > HIGH || (a < LOW && self.top < LOW) {
            self.rescale(e);
        }
        let d = if raw.is_finite() { raw * self.inv } else { x * self.inv - self.shift * self.inv };
        self.top = self.top.max(d.abs());
        self.d1 += d;
        self.d2 += d * d;
    }

    /// Moves `k` so that the larger of the difference of exponent `e` and
    /// the largest one so far becomes about 1, rescaling the sums.
    fn rescale(&mut self, e: i32) {
        self.set_k(e.max(self.top_exponent()).clamp(-K_MAX, K_MAX));
    }

    /// The binary exponent of the largest difference so far, unscaled
    /// (`i32::MIN` while every difference is 0).
    fn top_exponent(&self) -> i32 {
        if self.top > 0.0 {
            exponent(self.top) + self.k
        } else {
            i32::MIN
        }
    }

    /// Moves the scale to `2^k`, rescaling the sums.
    fn set_k(&mut self, k: i32) {
        let by = self.k - k;
        self.d1 = scale(self.d1, by);
        self.d2 = scale(self.d2, 2 * by);
        self.top = scale(self.top, by);
        self.k = k;
        self.inv = pow2(-k);
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

    /// The finite values' mean less `shift`, scaled by `2^-k`, and their
    /// sum of squared differences from the mean, scaled by `2^-2k`.
    fn scaled_moments(&self) -> (f64, f64) {
        if self.finite == 0 {
            return (0.0, 0.0);
        }
        let m = self.d1 / self.finite as f64;
        (m, (self.d2 - self.d1 * m).max(0.0))
    }

    /// The mean of a column of floats: the sum over the count while that
    /// is finite (or a value was not); where the sum overflowed, from the
    /// moments.
    pub fn mean(&self) -> f64 {
        let m = self.sum / self.n as f64;
        if m.is_finite() || self.non_finite || self.finite == 0 {
            return m;
        }
        let off = self.scaled_moments().0;
        let m = self.shift + scale(off, self.k);
        if m.is_finite() {
            m
        } else {
            (self.shift * 0.5 + scale(off, self.k - 1)) * 2.0
        }
    }

    /// The population standard deviation from the moments (`NaN` when a
    /// value was not finite, or there is none).
    pub fn stddev(&self) -> f64 {
        if self.non_finite || self.finite == 0 {
            return f64::NAN;
        }
        let m2 = self.scaled_moments().1;
        scale((m2 / self.finite as f64).sqrt(), self.k)
    }

    /// These statistics with `zeros` more values of 0 (`--nulls`).
    pub fn with_zeros(&self, zeros: u64) -> Numbers {
        // Zeros add nothing to the sums, nor to the moments about a shift
        // of 0; the smallest and largest value are left as they were.
        let z =
            Numbers { n: zeros, finite: zeros, min: self.min, max: self.max, ..Numbers::default() };
        let mut all = *self;
        all.merge(z);
        all
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
        self.sum += o.sum;
        self.int_sum += o.int_sum;
        self.n += o.n;
        self.non_finite |= o.non_finite;
        self.merge_moments(o);
    }

    /// Chan's formula on the two parts' moments, kept as scaled sums about
    /// this part's shift.
    fn merge_moments(&mut self, mut o: Numbers) {
        if o.finite == 0 {
            return;
        }
        if self.finite == 0 {
            (self.finite, self.shift, self.k, self.inv) = (o.finite, o.shift, o.k, o.inv);
            (self.top, self.d1, self.d2) = (o.top, o.d1, o.d2);
            return;
        }
        // One scale for both, large enough for the two parts' spreads and
        // the distance between their shifts.
        let raw = o.shift - self.shift;
        let e = if raw == 0.0 {
            i32::MIN
        } else if raw.is_finite() {
            exponent(raw.abs())
        } else {
            exponent((o.shift * 0.5 - self.shift * 0.5).abs()) + 1
        };
        let want = e.max(self.top_exponent()).max(o.top_exponent());
        let k = if want == i32::MIN { self.k } else { want.clamp(-K_MAX, K_MAX) };
        self.set_k(k);
        o.set_k(k);
        let inv = self.inv;
        let gap = if raw.is_finite() { raw * inv } else { o.shift * inv - self.shift * inv };
        let ((ma, m2a), (mb, m2b)) = (self.scaled_moments(), o.scaled_moments());
        let (na, nb) = (self.finite as f64, o.finite as f64);
        let n = na + nb;
        let d = gap + mb - ma;
        let mean = ma + d * nb / n;
        let m2 = m2a + m2b + d * d * na * nb / n;
        self.d1 = mean * n;
        self.d2 = m2 + mean * mean * n;
        self.top = self.top.max(gap.abs() + o.top);
        self.finite += o.finite;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The population mean and deviation of `v` the slow way, in two
    /// passes: the differences from the first value, scaled by `2^-e` (a
    /// power of two that brings the largest near 1), then their squared
    /// differences from their mean.
    fn oracle(v: &[f64], e: i32) -> (f64, f64) {
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

    /// Values spread by 1e-300 and by 1e308, where squares of differences
    /// underflow to 0 or overflow to infinity: the same mean and deviation
    /// as the oracle, whole and split into two parts at every place.
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
            assert!(close(whole.mean(), mean), "{} {mean}", whole.mean());
            assert!(close(whole.stddev(), sd), "{} {sd}", whole.stddev());
            for cut in 0..=v.len() {
                let mut a = numbers(&v[..cut]);
                a.merge(numbers(&v[cut..]));
                assert!(close(a.mean(), mean), "cut {cut}: {} {mean}", a.mean());
                assert!(close(a.stddev(), sd), "cut {cut}: {} {sd}", a.stddev());
            }
        }
    }

    /// Ordinary values never move the scale: the sums are those of
    /// `x - shift`, as before there was a scale.
    #[test]
    fn ordinary_values_keep_the_unit_scale() {
        let n = numbers(&[3.5, -2.0, 1e6, 7.25, 0.001, 3.5]);
        assert_eq!(n.k, 0);
        let (mean, sd) = oracle(&[3.5, -2.0, 1e6, 7.25, 0.001, 3.5], 0);
        assert!(close(n.mean(), mean) && close(n.stddev(), sd));
    }

    /// Zeros first (taken by the fast path before any shift is set), then
    /// ordinary or tiny values; and a column of one value.
    #[test]
    fn leading_zeros_and_constant_columns() {
        for (v, e) in [(&[0.0, 0.0, 3.0, 5.0][..], 0), (&[0.0, 1e-301, 3e-301, 0.0], -997)] {
            let (mean, sd) = oracle(v, e);
            let n = numbers(v);
            assert!(close(n.mean(), mean) && close(n.stddev(), sd), "{v:?}: {}", n.stddev());
        }
        let n = numbers(&[7.5; 100]);
        assert_eq!((n.mean(), n.stddev(), n.k), (7.5, 0.0, 0));
    }

    /// A value that is not finite gives a deviation of `NaN`, not 0; the
    /// mean is the sum's.
    #[test]
    fn values_that_are_not_finite_give_nan() {
        for v in
            [[1.0, f64::INFINITY, 2.0], [f64::NAN, 1.0, 2.0], [-f64::INFINITY, f64::INFINITY, 1.0]]
        {
            let n = numbers(&v);
            assert!(n.stddev().is_nan(), "{v:?}");
            let want = v.iter().sum::<f64>() / 3.0;
            assert!(n.mean() == want || (n.mean().is_nan() && want.is_nan()), "{v:?}");
        }
        assert_eq!(numbers(&[5.0, 5.0, 5.0]).stddev(), 0.0);
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
        let all = numbers(&v).with_zeros(2);
        let (mean, sd) = oracle(&[2.5, 4.0, 1e-3, 0.0, 0.0], 0);
        assert!(close(all.mean(), mean) && close(all.stddev(), sd));
        let tiny = numbers(&[3e-300, 1e-300]).with_zeros(2);
        let (mean, sd) = oracle(&[3e-300, 1e-300, 0.0, 0.0], -996);
        assert!(close(tiny.mean(), mean) && close(tiny.stddev(), sd), "{}", tiny.stddev());
    }
}
