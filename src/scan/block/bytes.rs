//! Small byte-set tests for the rest of the crate (and the CLI's writers):
//! 16 bytes at a time with SSE2 on x86-64 (part of its baseline, so no
//! detection is needed), SWAR words elsewhere.

#[cfg(target_arch = "x86_64")]
use super::x86_64;

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// A set of up to four bytes, and optionally every byte below 0x20: the
/// bytes for which a writer must quote or escape a field. [`ByteSet::any`]
/// tells whether a field holds one of them; most fields hold none and are
/// copied whole after one or two word tests.
///
/// Short fields are tested eight bytes at a time (SWAR): `(y - 0x01..) &
/// !y & 0x80..` is non-zero exactly when some byte of `y` is zero, so `y =
/// x ^ splat(b)` finds `b`; likewise `(x - splat(0x20)) & !x & 0x80..`
/// finds bytes below 0x20. From 16 bytes on, x86-64 compares 16 bytes at a
/// time with SSE2.
///
/// ```
/// use fastcsv::scan::ByteSet;
/// // What a TSV writer escapes.
/// const TSV: ByteSet = ByteSet::new(*b"\t\n\r\\", false);
/// assert!(!TSV.any(b"plain field, with a comma"));
/// assert!(TSV.any(b"a tab\there"));
/// // Repeat a byte to use fewer than four; `true` adds the controls.
/// const JSON: ByteSet = ByteSet::new(*b"\"\\\\\\", true);
/// assert!(JSON.any(b"bell \x07"));
/// assert!(!JSON.any(b""));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ByteSet {
    /// The bytes themselves (the 16-byte test, on x86-64 only).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    bytes: [u8; 4],
    splats: [u64; 4],
    controls: bool,
    /// A byte that is not in the set, to pad the last partial word.
    filler: u8,
}

impl ByteSet {
    /// The set of `bytes` (repeat one to use fewer), plus every byte below
    /// 0x20 when `controls`.
    pub const fn new(bytes: [u8; 4], controls: bool) -> ByteSet {
        let mut splats = [0; 4];
        let mut i = 0;
        while i < 4 {
            splats[i] = LO * bytes[i] as u64;
            i += 1;
        }
        // At most four bytes: one of five letters is free.
        let mut filler = b'a';
        while filler == bytes[0] || filler == bytes[1] || filler == bytes[2] || filler == bytes[3] {
            filler += 1;
        }
        ByteSet { bytes, splats, controls, filler }
    }

    #[inline(always)]
    fn word(&self, x: u64) -> bool {
        let mut m = 0;
        for s in self.splats {
            let y = x ^ s;
            m |= y.wrapping_sub(LO) & !y;
        }
        if self.controls {
            m |= x.wrapping_sub(LO * 0x20) & !x;
        }
        m & HI != 0
    }

    /// True when some byte of `f` is in the set. Every byte is tested
    /// through whole-word loads: on x86-64, 16 bytes at a time (SSE2) from
    /// 16 bytes on; otherwise 8-byte words (the last one overlapping the
    /// one before), two overlapping 4-byte loads for 4 to 7 bytes, and the
    /// first, middle and last bytes for 1 to 3, padded with a byte not in
    /// the set.
    #[inline(always)]
    pub fn any(&self, f: &[u8]) -> bool {
        let n = f.len();
        #[cfg(target_arch = "x86_64")]
        if n >= 16 {
            return x86_64::any_of_sse2(f, self.bytes, self.controls);
        }
        if n >= 8 {
            let mut chunks = f.chunks_exact(8);
            for c in &mut chunks {
                if self.word(u64::from_le_bytes(c.try_into().expect("8 bytes"))) {
                    return true;
                }
            }
            return !chunks.remainder().is_empty()
                && self.word(u64::from_le_bytes(f[n - 8..].try_into().expect("8 bytes")));
        }
        let x = if n >= 4 {
            let lo = u32::from_le_bytes(f[..4].try_into().expect("4 bytes"));
            let hi = u32::from_le_bytes(f[n - 4..].try_into().expect("4 bytes"));
            u64::from(lo) | (u64::from(hi) << 32)
        } else if n > 0 {
            let three = u64::from(f[0]) | (u64::from(f[n / 2]) << 8) | (u64::from(f[n - 1]) << 16);
            (LO * u64::from(self.filler)) & !0xFF_FFFF | three
        } else {
            return false;
        };
        self.word(x)
    }
}

/// Bit `i` set where `w[i]` (16 bytes) is one of `needles`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn match16(w: &[u8], needles: &[u8; 8]) -> u32 {
    x86_64::match16_sse2(w, needles)
}

/// Bit `i` set where `w[i]` (16 bytes) is one of `needles`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn match16(w: &[u8], needles: &[u8; 8]) -> u32 {
    let mut m = 0;
    for (i, c) in w.iter().enumerate() {
        m |= u32::from(needles.contains(c)) << i;
    }
    m
}
