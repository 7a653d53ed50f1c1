//! Exact sums of `f64` values and of their squares, for `stats`' sum,
//! mean and standard deviation of a column of floats: the same bits
//! however the values were split into parts, and in whatever order the
//! parts were added and merged.
//!
//! A finite `f64` is `m * 2^(p - 1074)`, with an integer `m < 2^53` and
//! `p` in `0..=2045` (its biased exponent less one; 0 for zeros and
//! subnormals), and its square is `m^2 * 2^(2p - 2148)` with `m^2 < 2^106`,
//! exact in a `u128`. [`Sums`] keeps the sum of the values as a
//! fixed-point integer in units of `2^-1074`, and the sum of their squares
//! in units of `2^-2148`: nothing is ever rounded while values are added.
//! Each is an array of 128-bit limbs whose places are 64 bits apart; a
//! value adds a 64-bit digit (at most) to each of two or three limbs, and
//! limbs carry into each other only when the result is made, so adding is
//! a few shifts and additions with no branch on the data. A limb grows by
//! less than `2^64` per value, so it overflows only past `2^63` values.
//!
//! [`Totals`] carries the limbs into plain integers once, and from them
//! each result is rounded once, to the nearest `f64` (ties to even): the
//! sum, the mean, and the deviation `sqrt(N * sum x^2 - (sum x)^2) / N`
//! (an integer square root, then a division, their remainders kept to
//! decide the rounding).
//!
//! If you change the units or the limb counts, also change
//! [`Totals::new`], which adds the exact integer sums kept beside these,
//! and the exponents in [`Totals`]' methods.

/// Limbs of the sum: a value adds to limbs `p / 64` and the one above
/// (`2045 / 64 + 1 = 32`).
const SUM_LIMBS: usize = 33;
/// Limbs of the sum of squares: a square adds to limbs `2p / 64` to two
/// above it (`4090 / 64 + 2 = 65`).
const SQ_LIMBS: usize = 66;
/// The unit of the sum, `2^-1074`, and of the sum of squares.
const SUM_EXP: i64 = -1074;
const SQ_EXP: i64 = -2148;

/// The exact sums of finite values and of their squares (see the module's
/// comment).
#[derive(Clone)]
pub(super) struct Sums {
    /// Signed limbs: limb `i` counts `2^(64 i + SUM_EXP)`.
    sum: [i128; SUM_LIMBS],
    /// Limb `i` counts `2^(64 i + SQ_EXP)`.
    sq: [u128; SQ_LIMBS],
}

impl Default for Sums {
    fn default() -> Sums {
        Sums { sum: [0; SUM_LIMBS], sq: [0; SQ_LIMBS] }
    }
}

impl Sums {
    /// Adds the finite value `x` and its square.
    #[inline]
    pub fn add(&mut self, x: f64) {
        debug_assert!(x.is_finite());
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as u32;
        let frac = bits & ((1 << 52) - 1);
        let m = if biased == 0 { frac } else { frac | 1 << 52 };
        let p = biased.max(1) - 1;
        // The sum: `m * 2^(p % 64)` (below 2^117) with the value's sign,
        // as a low digit (unsigned) and a high one (signed).
        let v = (u128::from(m) << (p & 63)) as i128;
        let v = if bits >> 63 == 0 { v } else { -v };
        let j = (p >> 6) as usize;
        self.sum[j] += i128::from(v as u64);
        self.sum[j + 1] += v >> 64;
        // The square: `m^2 * 2^(2p % 64)` (below 2^170) as three digits.
        let w = u128::from(m) * u128::from(m);
        let q = 2 * p;
        let (j, r) = ((q >> 6) as usize, q & 63);
        let low = w << r;
        let high = (w >> 64) >> (64 - r);
        self.sq[j] += u128::from(low as u64);
        self.sq[j + 1] += low >> 64;
        self.sq[j + 2] += high;
    }

    /// Adds the sums of `o` (those of both parts' values).
    pub fn merge(&mut self, o: &Sums) {
        for (a, b) in self.sum.iter_mut().zip(&o.sum) {
            *a += b;
        }
        for (a, b) in self.sq.iter_mut().zip(&o.sq) {
            *a += b;
        }
    }
}

/// The exact totals of a column, carried into plain integers: the sum in
/// units of `2^SUM_EXP` (sign and magnitude) and the sum of squares in
/// units of `2^SQ_EXP`, 64-bit words from the least significant.
pub(super) struct Totals {
    neg: bool,
    sum: Vec<u64>,
    sq: Vec<u64>,
}

impl Totals {
    /// The totals of the floats in `sums` (none: no float) and of the
    /// integers whose exact sum is `int_sum` and sum of squares `int_sq`.
    pub fn new(sums: Option<&Sums>, int_sum: i128, int_sq: [u64; 3]) -> Totals {
        let mut s = sums.cloned().unwrap_or_default();
        // An integer `i` is `i * 2^1074` units of the sum (1074 = 16 * 64
        // + 50) and its square `i^2 * 2^2148` units of the sum of squares
        // (2148 = 33 * 64 + 36).
        let mag = int_sum.unsigned_abs();
        let words = shifted_words(&[mag as u64, (mag >> 64) as u64], 50);
        for (k, w) in words.into_iter().enumerate() {
            let w = i128::from(w);
            s.sum[16 + k] += if int_sum < 0 { -w } else { w };
        }
        for (k, w) in shifted_words(&int_sq, 36).into_iter().enumerate() {
            s.sq[33 + k] += u128::from(w);
        }
        let (neg, sum) = carry_signed(&s.sum);
        Totals { neg, sum, sq: carry_unsigned(&s.sq) }
    }

    /// The sum, rounded once to the nearest `f64` (`inf` past the largest).
    pub fn sum(&self) -> f64 {
        self.signed(round(&self.sum, SUM_EXP, false))
    }

    /// The mean of `n` values whose totals these are (with zeros among
    /// them for `n` above their count), rounded once.
    pub fn mean(&self, n: u64) -> f64 {
        // Two more words below the point, so that the quotient of a sum
        // that is not 0 has more than 64 bits and the remainder decides
        // only the rounding.
        let mut q = shl_words(&self.sum, 2);
        let rest = div_u64(&mut q, n);
        self.signed(round(&q, SUM_EXP - 128, rest != 0))
    }

    /// The population standard deviation of `n` values,
    /// `sqrt(n * sum x^2 - (sum x)^2) / n`, rounded once.
    pub fn stddev(&self, n: u64) -> f64 {
        let mut d = mul_u64(&self.sq, n);
        sub(&mut d, &mul(&self.sum, &self.sum));
        let len = bit_len(&d) as i64;
        if len == 0 {
            return 0.0;
        }
        // `d * 2^(2s)` with 247 or 248 bits: its square root has 124 (each
        // step's remainder fits a `u128`), and over `n` keeps more than 59,
        // so that the bits shifted out, the root's remainder and the
        // quotient's decide only the rounding.
        let s = (248 - len).div_euclid(2);
        let (x, dropped) = shift_bits(&d, 2 * s);
        let (root, rest) = isqrt_248(&x);
        let (q, r) = (root / u128::from(n), root % u128::from(n));
        let words = [q as u64, (q >> 64) as u64];
        // The deviation is `sqrt(d * 2^SQ_EXP) / n = sqrt(x) / n * 2^(SQ_EXP / 2 - s)`.
        round(&words, SQ_EXP / 2 - s, dropped || rest != 0 || r != 0)
    }

    fn signed(&self, x: f64) -> f64 {
        if self.neg {
            -x
        } else {
            x
        }
    }
}

/// `v * 2^shift` (`shift` below 64) as words, one more than `v` has.
fn shifted_words(v: &[u64], shift: u32) -> Vec<u64> {
    let mut out = Vec::with_capacity(v.len() + 1);
    let mut carry = 0u64;
    for &w in v {
        let x = (u128::from(w) << shift) | u128::from(carry);
        out.push(x as u64);
        carry = (x >> 64) as u64;
    }
    out.push(carry);
    out
}

/// The signed limbs carried into a sign and a magnitude.
fn carry_signed(limbs: &[i128]) -> (bool, Vec<u64>) {
    let mut out = Vec::with_capacity(limbs.len() + 2);
    let mut carry = 0i128;
    for &l in limbs {
        // `l`'s low word, plus what came from below, then the rest of `l`
        // and the overflow go up (each below 2^64 in magnitude).
        let t = i128::from(l as u64) + carry;
        out.push(t as u64);
        carry = (l >> 64) + (t >> 64);
    }
    out.extend([carry as u64, (carry >> 64) as u64]);
    // The words are the two's complement of the total: negate it when the
    // top word (what was carried out of every limb) is negative.
    let neg = carry < 0;
    if neg {
        let mut one = true;
        for w in &mut out {
            let (x, c) = (!*w).overflowing_add(u64::from(one));
            *w = x;
            one = c;
        }
    }
    (neg, out)
}

/// The unsigned limbs carried into words.
fn carry_unsigned(limbs: &[u128]) -> Vec<u64> {
    let mut out = Vec::with_capacity(limbs.len() + 2);
    let mut carry = 0u128;
    for &l in limbs {
        let t = u128::from(l as u64) + carry;
        out.push(t as u64);
        carry = (l >> 64) + (t >> 64);
    }
    out.extend([carry as u64, (carry >> 64) as u64]);
    out
}

/// The number of significant bits of `v`.
fn bit_len(v: &[u64]) -> u64 {
    match v.iter().rposition(|&w| w != 0) {
        Some(i) => 64 * i as u64 + 64 - u64::from(v[i].leading_zeros()),
        None => 0,
    }
}

/// `v * 2^(64 k)`.
fn shl_words(v: &[u64], k: usize) -> Vec<u64> {
    let mut out = vec![0; k];
    out.extend_from_slice(v);
    out
}

/// `v * 2^by` as four words (its result has at most 256 bits), and
/// whether bits shifted out (`by` below 0) were not all 0.
fn shift_bits(v: &[u64], by: i64) -> ([u64; 4], bool) {
    let bit = |i: i64| i >= 0 && v.get((i / 64) as usize).is_some_and(|w| w >> (i % 64) & 1 == 1);
    let mut out = [0u64; 4];
    for (k, w) in out.iter_mut().enumerate() {
        for b in 0..64 {
            if bit(64 * k as i64 + b - by) {
                *w |= 1 << b;
            }
        }
    }
    let dropped = by < 0 && (0..-by).any(bit);
    (out, dropped)
}

/// The integer square root of `x` (below 2^248) and its remainder `x -
/// root^2`, two bits at a time.
fn isqrt_248(x: &[u64; 4]) -> (u128, u128) {
    debug_assert!(x[3] >> 56 == 0);
    let (mut root, mut rest) = (0u128, 0u128);
    for i in (0..124).rev() {
        let pair = x[i / 32] >> (2 * (i % 32)) & 3;
        rest = rest << 2 | u128::from(pair);
        let trial = root << 2 | 1;
        root <<= 1;
        if rest >= trial {
            rest -= trial;
            root |= 1;
        }
    }
    (root, rest)
}

/// `v * m`.
fn mul_u64(v: &[u64], m: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(v.len() + 1);
    let mut carry = 0u128;
    for &w in v {
        let p = u128::from(w) * u128::from(m) + carry;
        out.push(p as u64);
        carry = p >> 64;
    }
    out.push(carry as u64);
    out
}

/// `a * b`, word by word.
fn mul(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        let mut carry = 0u128;
        for (j, &y) in b.iter().enumerate() {
            let t = u128::from(x) * u128::from(y) + u128::from(out[i + j]) + carry;
            out[i + j] = t as u64;
            carry = t >> 64;
        }
        out[i + b.len()] = carry as u64;
    }
    out
}

/// `a -= b`, where `b` is at most `a` (as the variance's numerator is:
/// `n * sum x^2 >= (sum x)^2` for any `n` values).
fn sub(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    let mut borrow = false;
    for (i, x) in a.iter_mut().enumerate() {
        let y = b.get(i).copied().unwrap_or(0);
        let (d, b1) = x.overflowing_sub(y);
        let (d, b2) = d.overflowing_sub(u64::from(borrow));
        *x = d;
        borrow = b1 || b2;
    }
    debug_assert!(!borrow, "the variance's numerator is negative");
}

/// `v /= d`, returning the remainder.
fn div_u64(v: &mut [u64], d: u64) -> u64 {
    let mut rem = 0u128;
    for w in v.iter_mut().rev() {
        let x = (rem << 64) | u128::from(*w);
        *w = (x / u128::from(d)) as u64;
        rem = x % u128::from(d);
    }
    rem as u64
}

/// `v * 2^exp` rounded to the nearest `f64`, ties to even; `sticky` says
/// that bits below `v`'s lowest are not all 0 (a remainder), which then
/// has more than 54 significant bits, so that they decide only ties.
fn round(v: &[u64], exp: i64, sticky: bool) -> f64 {
    let len = bit_len(v) as i64;
    if len == 0 {
        return 0.0;
    }
    let h = len - 1;
    // The lowest bit kept: 53 bits, fewer for a subnormal result (none
    // below 2^-1074).
    let lsb = (h - 52).max(-1074 - exp);
    if lsb <= 0 {
        debug_assert!(!sticky && len <= 53);
        return scale(v[0] as f64, exp);
    }
    let bit = |i: i64| v[(i / 64) as usize] >> (i % 64) & 1;
    let mut q = 0u64;
    for i in (lsb..=h).rev() {
        q = q << 1 | bit(i);
    }
    let half = bit(lsb - 1) == 1;
    let below = sticky || (0..lsb - 1).any(|i| bit(i) == 1);
    if half && (below || q & 1 == 1) {
        q += 1;
    }
    scale(q as f64, lsb + exp)
}

/// `x * 2^e`, in steps that each stay within the normal powers of two
/// (exact unless the result overflows or is subnormal).
pub(super) fn scale(mut x: f64, mut e: i64) -> f64 {
    while e != 0 && x != 0.0 && x.is_finite() {
        let step = e.clamp(-1000, 1000);
        x *= f64::from_bits(((step + 1023) as u64) << 52);
        e -= step;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(v: &[f64]) -> Totals {
        let mut s = Sums::default();
        v.iter().for_each(|&x| s.add(x));
        Totals::new(Some(&s), 0, [0; 3])
    }

    /// Sums that a float addition rounds or overflows, and the smallest
    /// subnormals, are exact.
    #[test]
    fn sums_are_exact() {
        assert_eq!(totals(&[1e16, 1.0, -1e16]).sum(), 1.0);
        assert_eq!(totals(&[1e308, 1e308, -1e308]).sum(), 1e308);
        assert_eq!(totals(&[1e308, 1e308]).sum(), f64::INFINITY);
        assert_eq!(totals(&[-1e308, -1e308]).sum(), f64::NEG_INFINITY);
        let tiny = f64::from_bits(1);
        assert_eq!(totals(&[tiny, tiny, tiny]).sum(), 3.0 * tiny);
        assert_eq!(totals(&[tiny, -tiny]).sum().to_bits(), 0);
        assert_eq!(totals(&[-0.0, -0.0]).sum().to_bits(), 0);
        assert_eq!(totals(&[0.1; 10]).sum(), 1.0000000000000000555f64);
        assert_eq!(totals(&[f64::MAX, -f64::MAX, 2.5]).sum(), 2.5);
        // 2^53 + 1 is a tie: to even, then past it with one more ulp.
        let big = 9_007_199_254_740_992.0;
        assert_eq!(totals(&[big, 1.0]).sum(), big);
        assert_eq!(totals(&[big, 1.0, 1e-300]).sum(), big + 2.0);
    }

    /// The mean is the exact one rounded once, subnormals and huge values
    /// included.
    #[test]
    fn means_are_rounded_once() {
        assert_eq!(totals(&[1.0, 2.0]).mean(2), 1.5);
        assert_eq!(totals(&[1e308, 1e308, 1e308]).mean(3), 1e308);
        assert_eq!(totals(&[0.1, 0.2, 0.3]).mean(3), 0.2);
        assert_eq!(totals(&[-3.0, 1.0]).mean(2), -1.0);
        let tiny = f64::from_bits(1);
        assert_eq!(totals(&[tiny, tiny, tiny]).mean(3), tiny);
        // 3 ulps over 2: a tie rounds to even (2 ulps); over 4, 0.75 ulp
        // rounds to 1.
        assert_eq!(totals(&[3.0 * tiny]).mean(2), 2.0 * tiny);
        assert_eq!(totals(&[3.0 * tiny]).mean(4), tiny);
        // 1/3, exactly rounded.
        assert_eq!(totals(&[1.0]).mean(3), 1.0 / 3.0);
    }

    /// The deviation from exact sums: no cancellation, no overflow of the
    /// squares of 1e308, no underflow of the squares of 1e-310.
    #[test]
    fn deviations_keep_their_range() {
        assert_eq!(totals(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).stddev(8), 2.0);
        assert_eq!(totals(&[1e16 + 2.0, 1e16 + 4.0]).stddev(2), 1.0);
        assert_eq!(totals(&[1e308, -1e308]).stddev(2), 1e308);
        assert_eq!(totals(&[3e-310, -3e-310]).stddev(2), 3e-310);
        assert_eq!(totals(&[7.5; 9]).stddev(9), 0.0);
        // With two zeros counted: values 0, 0, 3, 3 have deviation 1.5.
        assert_eq!(totals(&[3.0, 3.0]).stddev(4), 1.5);
    }

    /// The deviation is the exact one rounded once (values from Python's
    /// `fractions` and `decimal` at 120 digits), where the square root of
    /// the rounded variance is one ulp off (1, 1, 30 and 1, 2, 11).
    #[test]
    fn deviations_are_rounded_once() {
        for (v, want) in [
            (&[0.0, 0.0, 1.0][..], 0.4714045207910317),
            (&[1.0, 1.0, 30.0], 13.67073110293992),
            (&[1.0, 2.0, 11.0], 4.4969125210773475),
            (&[0.1, 0.2, 0.7], 0.262466929133727),
            (&[1e308, -1e308, 0.0], 8.16496580927726e307),
            (&[1e16, 1.0, -1e16], 8164965809277260.0),
            (&[2.5e-320, 1e-310, 5e-324], 4.714045207321e-311),
        ] {
            assert_eq!(totals(v).stddev(v.len() as u64), want, "{v:?}");
        }
    }

    #[test]
    fn integer_square_roots() {
        for x in [0u128, 1, 2, 3, 4, 15, 16, 17, u128::from(u64::MAX), u128::MAX >> 8] {
            let (root, rest) = isqrt_248(&[x as u64, (x >> 64) as u64, 0, 0]);
            assert_eq!(root * root + rest, x);
            assert!(rest <= 2 * root, "{x}");
        }
        // (2^123 + 1)^2 = 2^246 + 2^124 + 1.
        let (root, rest) = isqrt_248(&[1, 1 << 60, 0, 1 << 54]);
        assert_eq!((root, rest), ((1 << 123) + 1, 0));
        let (v, dropped) = shift_bits(&[0b1011, 1], -2);
        assert_eq!((v, dropped), ([0b10 | 1 << 62, 0, 0, 0], true));
        assert_eq!(shift_bits(&[1], 130), ([0, 0, 4, 0], false));
    }

    /// Integers kept beside the floats join them exactly.
    #[test]
    fn integers_join_the_floats() {
        let mut s = Sums::default();
        s.add(0.5);
        let big = i128::from(i64::MAX);
        let sq = (big * big) as u128;
        let t = Totals::new(Some(&s), -big, [sq as u64, (sq >> 64) as u64, 0]);
        assert_eq!(t.sum(), -(i64::MAX as f64));
        assert_eq!(t.mean(2), (0.5 - i64::MAX as f64) / 2.0);
        let t = Totals::new(None, 6, [20, 0, 0]);
        assert_eq!((t.sum(), t.mean(2), t.stddev(2)), (6.0, 3.0, 1.0));
    }

    /// Parts merged in any grouping give the same limbs.
    #[test]
    fn merging_is_exact() {
        let v: Vec<f64> =
            (0..1000).map(|i| (f64::from(i) * 0.37).sin() * 10f64.powi(i % 40 - 20)).collect();
        let whole = totals(&v);
        for cut in [1, 333, 999] {
            let (mut a, mut b) = (Sums::default(), Sums::default());
            v[..cut].iter().for_each(|&x| a.add(x));
            v[cut..].iter().rev().for_each(|&x| b.add(x));
            b.merge(&a);
            let t = Totals::new(Some(&b), 0, [0; 3]);
            assert_eq!((t.neg, &t.sum, &t.sq), (whole.neg, &whole.sum, &whole.sq));
        }
    }
}
