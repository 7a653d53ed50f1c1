//! [`super::decode_bmp`] with AVX-512 (BW and VBMI2): 32 bytes of a field
//! a step, whatever their mix of ASCII and two- and three-byte sequences.
//!
//! A step loads the bytes from its start (masked to the field), marks the
//! continuation bytes and the leads of two- and three-byte sequences in
//! 64-bit masks, and checks its 32 positions at once: a position holds a
//! continuation byte exactly when a lead one or two bytes before it asks
//! for one (the step before passes on what its last leads ask of the first
//! two positions), no lead is C0, C1 or F0 and above, and no E0 or ED lead
//! is followed by an overlong form or a surrogate. Each character start's
//! code point is then built in a 16-bit lane from its byte and the two
//! after it, and the starts' lanes are compressed into the output. A field
//! that fails a check (not strict UTF-8, or with a character past U+FFFF)
//! is left to the byte-at-a-time decoder, which tells the two apart.
//!
//! The same for UCS-4 ([`decode_ucs4_into`], 16 bytes a step) and UCS-1
//! ([`decode_latin1_into`], 64), and the fields of a run that hold a byte
//! past ASCII, with their width ([`non_ascii_fields`]).
//!
//! Each decoder has two ways to store (its `EXACT` parameter): whole
//! vectors, into a buffer with slack past the field's units, or only the
//! units a step decodes (masked stores), into exactly as many as the
//! field has: the body of a `str` allocated at its final length and kind
//! from [`shape`].

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Units [`decode_bmp_into`] may write past the field's characters: each
/// step stores a whole vector of 32 units.
pub(crate) const SLACK: usize = 32;

/// Whether this CPU has what [`decode_bmp_into`] needs (detected once),
/// and `FASTCSV_SIMD` (the core's cap on its kernels, for tests and
/// measurements) is unset: any level it names is below AVX-512 with
/// VBMI2, so it turns the vector decoders off too.
pub(crate) fn available() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        std::env::var_os("FASTCSV_SIMD").is_none_or(|v| v.is_empty())
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi2")
            && std::arch::is_x86_feature_detected!("popcnt")
    })
}

/// The bits of the first `n` positions (all 64 from `n >= 64` on).
#[inline(always)]
fn first(n: usize) -> u64 {
    if n >= 64 {
        !0
    } else {
        (1u64 << n) - 1
    }
}

/// The 32 positions a step checks and decodes.
const STEP: u64 = 0xFFFF_FFFF;

/// The bytes of `b` from `at` on (at most 64), zero past its end.
///
/// # Safety
/// The CPU must have AVX-512 F and BW.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn load(b: &[u8], at: usize) -> __m512i {
    let n = b.len().saturating_sub(at);
    if n == 0 {
        return _mm512_setzero_si512();
    }
    // SAFETY: `at < b.len()`, so the pointer is inside `b`; the masked load
    // reads only the `min(n, 64)` bytes its mask selects, all inside `b`
    // (the others read as zero without being touched).
    unsafe { _mm512_maskz_loadu_epi8(first(n), b.as_ptr().add(at).cast()) }
}

/// A byte's mask of the lanes where `v & and == eq`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn masked_eq(v: __m512i, and: u8, eq: u8) -> u64 {
    _mm512_cmpeq_epi8_mask(
        _mm512_and_si512(v, _mm512_set1_epi8(and as i8)),
        _mm512_set1_epi8(eq as i8),
    )
}

/// Decodes the strict UTF-8 `b`, whose characters are all below U+10000,
/// into `out` as UTF-16 units: the number of units and the OR of those
/// past ASCII (at least 0x100 exactly when one of them is), or
/// `None` when `b` is not such UTF-8 (then `out` holds garbage). With
/// `EXACT`, only the units decoded are stored, and `None` too when they
/// would not fit in `out`.
///
/// # Safety
/// The CPU must have AVX-512 F and BW, VBMI2 and POPCNT ([`available`]).
/// (Without `EXACT`, `out` must hold at least `b.len() + SLACK` units:
/// asserted.)
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
pub(crate) unsafe fn decode_bmp_into<const EXACT: bool>(
    b: &[u8],
    out: &mut [MaybeUninit<u16>],
) -> Option<(usize, u32)> {
    assert!(EXACT || out.len() >= b.len() + SLACK);
    let len = b.len();
    let dst = out.as_mut_ptr().cast::<u16>();
    let (mut i, mut j, mut carry) = (0usize, 0usize, 0u64);
    let mut ors = _mm512_setzero_si512();
    while i < len {
        // SAFETY: the CPU has AVX-512 F and BW (this function's contract).
        let (v, v1, v2) = unsafe { (load(b, i), load(b, i + 1), load(b, i + 2)) };
        let cont = masked_eq(v, 0xC0, 0x80);
        let lead2 = masked_eq(v, 0xE0, 0xC0);
        let lead3 = masked_eq(v, 0xF0, 0xE0);
        let high = _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(0xF0u8 as i8));
        let c0c1 = masked_eq(v, 0xFE, 0xC0);
        let e0 = masked_eq(v, 0xFF, 0xE0);
        let ed = masked_eq(v, 0xFF, 0xED);
        let below_a0 = _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0xA0u8 as i8));
        let want = ((lead2 | lead3) << 1) | (lead3 << 2) | carry;
        let bad_lead = (high | c0c1) & STEP;
        // After E0, A0..BF (not overlong); after ED, 80..9F (not a
        // surrogate). Where the next byte is no continuation byte at all,
        // `want` and `cont` differ.
        let bad_next = (((e0 & STEP) << 1) & below_a0) | (((ed & STEP) << 1) & !below_a0 & cont);
        if bad_lead != 0 || (want ^ cont) & STEP != 0 || bad_next != 0 {
            return None;
        }
        carry = (want >> 32) & 0b11;
        let starts = (!cont & STEP & first(len - i)) as u32;
        let b0 = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(v));
        let low6 = _mm512_set1_epi16(0x3F);
        let c1 = _mm512_and_si512(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(v1)), low6);
        let c2 = _mm512_and_si512(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(v2)), low6);
        let two = _mm512_or_si512(
            _mm512_slli_epi16::<6>(_mm512_and_si512(b0, _mm512_set1_epi16(0x1F))),
            c1,
        );
        let three = _mm512_or_si512(
            _mm512_or_si512(_mm512_slli_epi16::<12>(b0), _mm512_slli_epi16::<6>(c1)),
            c2,
        );
        let cp = _mm512_mask_mov_epi16(b0, lead2 as u32, two);
        let cp = _mm512_mask_mov_epi16(cp, lead3 as u32, three);
        let packed = _mm512_maskz_compress_epi16(starts, cp);
        let n = starts.count_ones() as usize;
        if EXACT {
            if n > out.len() - j {
                return None;
            }
            // SAFETY: the mask stores units `j..j + n`, inside `out`
            // (checked just above); the lanes it leaves out are not
            // touched.
            unsafe { _mm512_mask_storeu_epi16(dst.add(j).cast(), first(n) as u32, packed) };
        } else {
            // SAFETY: `j <= i < len` (a character takes at least one
            // byte), so the 32 units stored from `j` end before
            // `len + SLACK`, inside `out` (asserted above).
            unsafe { _mm512_storeu_si512(dst.add(j).cast(), packed) };
        }
        // The OR is that of the characters past ASCII (as the byte-at-a-
        // time decoder's): the lanes of the leads.
        ors = _mm512_or_si512(ors, _mm512_maskz_mov_epi16((lead2 | lead3) as u32, cp));
        j += n;
        i += 32;
    }
    if carry != 0 {
        // A lead whose continuation bytes would lie past the end.
        return None;
    }
    let or = _mm512_reduce_or_epi32(ors) as u32;
    Some((j, (or | or >> 16) & 0xFFFF))
}

/// The 16 positions a step of [`decode_ucs4_into`] checks and decodes.
const STEP16: u64 = 0xFFFF;

/// Decodes the strict UTF-8 `b` into `out` as code points (UCS-4): the
/// number of code points, or `None` when `b` is not strict UTF-8 (then
/// `out` holds garbage). As [`decode_bmp_into`], 16 bytes a step, with
/// four-byte sequences too, and the same `EXACT`; with `EXACT`, `None`
/// too when no character is past U+FFFF (UCS-4 would not be the
/// canonical kind of the text).
///
/// # Safety
/// As for [`decode_bmp_into`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
pub(crate) unsafe fn decode_ucs4_into<const EXACT: bool>(
    b: &[u8],
    out: &mut [MaybeUninit<u32>],
) -> Option<usize> {
    assert!(EXACT || out.len() >= b.len() + SLACK);
    let len = b.len();
    let dst = out.as_mut_ptr().cast::<u32>();
    let (mut i, mut j, mut carry, mut leads4) = (0usize, 0usize, 0u64, 0u64);
    while i < len {
        // SAFETY: the CPU has AVX-512 F and BW (this function's contract).
        let (v, v1, v2, v3) =
            unsafe { (load(b, i), load(b, i + 1), load(b, i + 2), load(b, i + 3)) };
        let cont = masked_eq(v, 0xC0, 0x80);
        let lead2 = masked_eq(v, 0xE0, 0xC0);
        let lead3 = masked_eq(v, 0xF0, 0xE0);
        let lead4 = masked_eq(v, 0xF8, 0xF0);
        let high = _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(0xF5u8 as i8));
        let c0c1 = masked_eq(v, 0xFE, 0xC0);
        let next_below = |x: u8| _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(x as i8));
        let (below_90, below_a0) = (next_below(0x90), next_below(0xA0));
        let is = |x: u8| masked_eq(v, 0xFF, x) & STEP16;
        let want = ((lead2 | lead3 | lead4) << 1) | ((lead3 | lead4) << 2) | (lead4 << 3) | carry;
        let bad_lead = (high | c0c1) & STEP16;
        // After E0, A0..BF; after ED, 80..9F; after F0, 90..BF; after F4,
        // 80..8F (no overlong form, surrogate or code point past U+10FFFF).
        let bad_next = ((is(0xE0) << 1) & below_a0)
            | ((is(0xED) << 1) & !below_a0 & cont)
            | ((is(0xF0) << 1) & below_90)
            | ((is(0xF4) << 1) & !below_90 & cont);
        if bad_lead != 0 || (want ^ cont) & STEP16 != 0 || bad_next != 0 {
            return None;
        }
        carry = (want >> 16) & 0b111;
        leads4 |= lead4 & STEP16;
        let starts = (!cont & STEP16 & first(len - i)) as u16;
        let widen = |x: __m512i| _mm512_cvtepu8_epi32(_mm512_castsi512_si128(x));
        let low6 = _mm512_set1_epi32(0x3F);
        let b0 = widen(v);
        let c1 = _mm512_and_si512(widen(v1), low6);
        let c2 = _mm512_and_si512(widen(v2), low6);
        let c3 = _mm512_and_si512(widen(v3), low6);
        let lead = |m: i32, shift: u32| {
            _mm512_sll_epi32(
                _mm512_and_si512(b0, _mm512_set1_epi32(m)),
                _mm_cvtsi32_si128(shift as i32),
            )
        };
        let two = _mm512_or_si512(lead(0x1F, 6), c1);
        let three =
            _mm512_or_si512(_mm512_or_si512(lead(0x0F, 12), _mm512_slli_epi32::<6>(c1)), c2);
        let four = _mm512_or_si512(
            _mm512_or_si512(lead(0x07, 18), _mm512_slli_epi32::<12>(c1)),
            _mm512_or_si512(_mm512_slli_epi32::<6>(c2), c3),
        );
        let cp = _mm512_mask_mov_epi32(b0, lead2 as u16, two);
        let cp = _mm512_mask_mov_epi32(cp, lead3 as u16, three);
        let cp = _mm512_mask_mov_epi32(cp, lead4 as u16, four);
        let packed = _mm512_maskz_compress_epi32(starts, cp);
        let n = starts.count_ones() as usize;
        if EXACT {
            if n > out.len() - j {
                return None;
            }
            // SAFETY: as in `decode_bmp_into`: units `j..j + n`, inside
            // `out`.
            unsafe { _mm512_mask_storeu_epi32(dst.add(j).cast(), first(n) as u16, packed) };
        } else {
            // SAFETY: `j <= i < len` (a character takes at least one
            // byte), so the 16 units stored from `j` end before
            // `len + SLACK`, inside `out` (asserted above).
            unsafe { _mm512_storeu_si512(dst.add(j).cast(), packed) };
        }
        j += n;
        i += 16;
    }
    // A lead whose continuation bytes would lie past the end: none.
    (carry == 0 && (!EXACT || leads4 != 0)).then_some(j)
}

/// Bytes [`decode_latin1_into`] may write past the field's characters:
/// each step stores a whole vector of 64.
pub(crate) const SLACK1: usize = 64;

/// Decodes the strict UTF-8 `b`, whose characters are all below U+0100,
/// into `out` as Latin-1 units: the number of units, or `None` when `b`
/// is not such UTF-8 (then `out` holds garbage). As [`decode_bmp_into`],
/// 64 bytes a step: every byte must be ASCII, a C2 or C3 lead, or the
/// one continuation byte that a lead right before it asks for.
///
/// With `EXACT`, as for [`decode_bmp_into`], and `None` too for ASCII
/// (UCS-1 would not be the canonical kind of the text).
///
/// # Safety
/// The CPU must have AVX-512 F and BW, VBMI2 and POPCNT ([`available`]).
/// (Without `EXACT`, `out` must hold at least `b.len() + SLACK1` units:
/// asserted.)
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
pub(crate) unsafe fn decode_latin1_into<const EXACT: bool>(
    b: &[u8],
    out: &mut [MaybeUninit<u8>],
) -> Option<usize> {
    assert!(EXACT || out.len() >= b.len() + SLACK1);
    let len = b.len();
    let dst = out.as_mut_ptr().cast::<u8>();
    let (mut i, mut j, mut carry, mut leads) = (0usize, 0usize, 0u64, 0u64);
    while i < len {
        // SAFETY: the CPU has AVX-512 F and BW (this function's contract).
        let (v, v1) = unsafe { (load(b, i), load(b, i + 1)) };
        let cont = masked_eq(v, 0xC0, 0x80);
        let lead = masked_eq(v, 0xFE, 0xC2);
        let ascii = !_mm512_movepi8_mask(v);
        // Past the end the lanes read as zero (ASCII).
        if (ascii | cont | lead) != !0 || (lead << 1 | carry) != cont {
            return None;
        }
        carry = lead >> 63;
        leads |= lead;
        let starts = !cont & first(len - i);
        // A lead's unit: its low two bits, then the continuation byte's
        // low six (shifted within 16-bit lanes: the two bits cannot cross
        // into the next byte).
        let two = _mm512_or_si512(
            _mm512_slli_epi16::<6>(_mm512_and_si512(v, _mm512_set1_epi8(0x03))),
            _mm512_and_si512(v1, _mm512_set1_epi8(0x3F)),
        );
        let cp = _mm512_mask_mov_epi8(v, lead, two);
        let packed = _mm512_maskz_compress_epi8(starts, cp);
        let n = starts.count_ones() as usize;
        if EXACT {
            if n > out.len() - j {
                return None;
            }
            // SAFETY: as in `decode_bmp_into`: units `j..j + n`, inside
            // `out`.
            unsafe { _mm512_mask_storeu_epi8(dst.add(j).cast(), first(n), packed) };
        } else {
            // SAFETY: `j <= i < len` (a character takes at least one
            // byte), so the 64 units stored from `j` end before
            // `len + SLACK1`, inside `out` (asserted above).
            unsafe { _mm512_storeu_si512(dst.add(j).cast(), packed) };
        }
        j += n;
        i += 64;
    }
    // A lead whose continuation byte would lie past the end: none.
    (carry == 0 && (!EXACT || leads != 0)).then_some(j)
}

/// The shape of `b`'s text if it is UTF-8: its number of characters (the
/// bytes that are not continuation bytes), whether a byte is past ASCII,
/// and the kind its largest byte tells (as [`super::byte_kind`]: 0 below
/// 0xC4, 1 below 0xF0, else 2). 64 bytes a step.
///
/// # Safety
/// The CPU must have AVX-512 F and BW, and POPCNT ([`available`]).
#[target_feature(enable = "avx512f,avx512bw,popcnt")]
pub(crate) unsafe fn shape(b: &[u8]) -> (usize, bool, u8) {
    let (c4, f0s) = (_mm512_set1_epi8(0xC4u8 as i8), _mm512_set1_epi8(0xF0u8 as i8));
    let (mut n, mut high, mut past_c4, mut past_f0) = (0usize, 0u64, 0u64, 0u64);
    let mut at = 0;
    while at < b.len() {
        // SAFETY: the CPU has AVX-512 F and BW (this function's contract).
        let v = unsafe { load(b, at) };
        // Past the end the lanes read as zero: no continuation byte.
        n += (!masked_eq(v, 0xC0, 0x80) & first(b.len() - at)).count_ones() as usize;
        high |= _mm512_movepi8_mask(v);
        past_c4 |= _mm512_cmpge_epu8_mask(v, c4);
        past_f0 |= _mm512_cmpge_epu8_mask(v, f0s);
        at += 64;
    }
    (n, high != 0, u8::from(past_c4 != 0) + u8::from(past_f0 != 0))
}

/// [`super::non_ascii_fields`]: a field of up to 64 bytes is one masked
/// load, tested for bytes past ASCII, at or past 0xC4 and at or past
/// 0xF0, with no branch on the answers (each field's index and kind are
/// written, and kept by counting them only when it holds a byte past
/// ASCII).
///
/// # Safety
/// The CPU must have AVX-512 F and BW ([`available`] says so).
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn non_ascii_fields(
    data: &[u8],
    (starts, ends): (&[u32], &[u32]),
    f0: u32,
    (out, kinds): (&mut Vec<u32>, &mut Vec<u8>),
) {
    let n = ends.len().min(starts.len());
    out.reserve(n);
    kinds.reserve(n);
    let (base, kbase) = (out.len(), kinds.len());
    let spare = &mut out.spare_capacity_mut()[..n];
    let kspare = &mut kinds.spare_capacity_mut()[..n];
    let (c4, f0s) = (_mm512_set1_epi8(0xC4u8 as i8), _mm512_set1_epi8(0xF0u8 as i8));
    let mut k = 0;
    for i in 0..n {
        let b = &data[starts[i] as usize..ends[i] as usize];
        let (mut high, mut past_c4, mut past_f0) = (0u64, 0u64, 0u64);
        let mut at = 0;
        loop {
            // SAFETY: the CPU has AVX-512 F and BW (this function's
            // contract); `load` reads only bytes of `b`.
            let v = unsafe { load(b, at) };
            high |= _mm512_movepi8_mask(v);
            past_c4 |= _mm512_cmpge_epu8_mask(v, c4);
            past_f0 |= _mm512_cmpge_epu8_mask(v, f0s);
            at += 64;
            if at >= b.len() {
                break;
            }
        }
        // `k <= i < n`: inside both.
        spare[k].write(f0.wrapping_add(i as u32));
        kspare[k].write(u8::from(past_c4 != 0) + u8::from(past_f0 != 0));
        k += usize::from(high != 0);
    }
    // SAFETY: the first `k` items past `base` and `kbase` were written
    // above (`k <= n`, reserved).
    unsafe {
        out.set_len(base + k);
        kinds.set_len(kbase + k);
    }
}
