//! The fast path of `stats`' number detection: the plain spellings of
//! integers and decimals (`-12`, `3.25`) read straight from the bytes, to
//! the value the standard library's `str::parse` gives them. Any other
//! spelling (`+1`, `1e5`, `.5`, `inf`, 19 digits or more, a byte that is
//! not a digit) is [`Simple::Other`], which the caller hands to
//! `str::parse`: which fields count as numbers, and their values, are
//! `str::parse`'s either way.

/// Exact powers of ten as `f64` (every one up to 10^22 is exact).
const POW10: [f64; 20] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19,
];

/// A field as [`simple`] reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Simple {
    /// An optional `-` and 1 to 18 digits: the sign and the magnitude
    /// (below 10^18, so it fits an `i64` and converts to the nearest
    /// `f64` with `as`).
    Int {
        /// A `-` came first.
        neg: bool,
        /// The digits' value.
        mag: u64,
    },
    /// An optional `-`, digits, `.`, digits, with at most 19 digits in
    /// all and a mantissa (the digits without the point) up to 2^53: its
    /// exactly rounded value, which `str::parse::<f64>` also gives and
    /// `str::parse::<i64>` rejects.
    Float(f64),
    /// Anything else: for `str::parse` to decide.
    Other,
}

/// Reads the plain spellings of numbers (see [`Simple`]).
#[inline]
pub fn simple(f: &[u8]) -> Simple {
    let (neg, d) = match f {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, f),
    };
    let mut mant = 0u64;
    let mut i = 0;
    // At most 19 digits are read (below 10^19): no overflow.
    while i < d.len() && i < 19 {
        let x = d[i].wrapping_sub(b'0');
        if x > 9 {
            break;
        }
        mant = mant * 10 + u64::from(x);
        i += 1;
    }
    let whole = i;
    if i == d.len() {
        return if (1..=18).contains(&whole) {
            Simple::Int { neg, mag: mant }
        } else {
            Simple::Other
        };
    }
    if whole == 0 || whole > 18 || d[i] != b'.' {
        return Simple::Other;
    }
    i += 1;
    let at = i;
    while i < d.len() && whole + (i - at) < 19 {
        let x = d[i].wrapping_sub(b'0');
        if x > 9 {
            break;
        }
        mant = mant * 10 + u64::from(x);
        i += 1;
    }
    let frac = i - at;
    if i != d.len() || frac == 0 || whole + frac > 19 || mant > 1 << 53 {
        return Simple::Other;
    }
    // Both operands are exact, and one IEEE division rounds exactly.
    let x = mant as f64 / POW10[frac];
    Simple::Float(if neg { -x } else { x })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `str::parse` makes of `s`, as `stats` asks it: an `i64`, else
    /// an `f64`, else nothing.
    fn by_std(s: &str) -> Option<Result<i64, f64>> {
        match s.parse::<i64>() {
            Ok(i) => Some(Ok(i)),
            Err(_) => s.parse::<f64>().ok().map(Err),
        }
    }

    /// Checks the fast path against `str::parse` on `s`: where it answers,
    /// the same kind of number and the same bits.
    fn agrees(s: &str) {
        match (simple(s.as_bytes()), by_std(s)) {
            (Simple::Other, _) => {}
            (Simple::Int { neg, mag }, Some(Ok(i))) => {
                let fast = if neg { (mag as i64).wrapping_neg() } else { mag as i64 };
                assert_eq!(fast, i, "{s}");
                // As a float in a column of floats: `-0` stays negative.
                let x = if neg { -(mag as f64) } else { mag as f64 };
                assert_eq!(x.to_bits(), s.parse::<f64>().unwrap().to_bits(), "{s}");
            }
            (Simple::Float(x), Some(Err(y))) => assert_eq!(x.to_bits(), y.to_bits(), "{s}"),
            (fast, slow) => panic!("{s}: {fast:?} but std gives {slow:?}"),
        }
    }

    #[test]
    fn plain_spellings_only() {
        assert_eq!(simple(b"-42"), Simple::Int { neg: true, mag: 42 });
        assert_eq!(simple(b"007"), Simple::Int { neg: false, mag: 7 });
        assert_eq!(simple(b"19.99"), Simple::Float(19.99));
        assert_eq!(simple(b"-0.5"), Simple::Float(-0.5));
        assert_eq!(
            simple(b"999999999999999999"),
            Simple::Int { neg: false, mag: 999_999_999_999_999_999 }
        );
        for other in [
            "",
            "-",
            "+1",
            "1.",
            ".5",
            "1e5",
            "1.5e3",
            "inf",
            "NaN",
            " 1",
            "1 ",
            "1_0",
            "--1",
            "1.2.3",
            "1000000000000000000",
            "-9223372036854775808",
            "0.0000000000000000001",
            "9007199254740993.0",
            "1,5",
        ] {
            assert_eq!(simple(other.as_bytes()), Simple::Other, "{other}");
            agrees(other);
        }
        for s in [
            "0",
            "-0",
            "-0.0",
            "0.1",
            "123456789012345678",
            "9007199254740992.0",
            "0.30000000000000004",
        ] {
            agrees(s);
        }
    }

    proptest! {
        #[test]
        fn agrees_with_std(s in "-?[0-9]{0,21}(\\.[0-9]{0,21})?") {
            agrees(&s);
        }

        #[test]
        fn agrees_with_std_on_any_bytes(s in "[-+.0-9eE]{0,12}") {
            agrees(&s);
        }
    }
}
