//! UTF-8 field bytes decoded straight to the code units of CPython's
//! string kinds (UCS-1, UCS-2, UCS-4): ASCII runs a word or 16 bytes at a
//! time, or (where the CPU has AVX-512 with VBMI2) whole fields 64, 32 or
//! 16 bytes a step for UCS-1, UCS-2 and UCS-4 (`avx512`); strict UTF-8
//! only (the callers hand anything else to CPython's decoder, whose errors
//! and handlers they keep). Also: which fields of a run are past ASCII,
//! and of what width ([`non_ascii_fields`]).

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::sync::{Mutex, OnceLock};

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Decodes strict UTF-8 (no overlong forms, surrogates or code points past
/// U+10FFFF) into `out`, one unit per code point. False when `b` is not
/// strict UTF-8 or does not hold exactly `out.len()` code points.
pub(crate) fn decode_utf8_into<T: Copy>(b: &[u8], out: &mut [T], unit: impl Fn(u32) -> T) -> bool {
    // SAFETY: `MaybeUninit<T>` has the size, alignment and layout of `T`,
    // and only values of `T` (plain data: nothing to drop in the values
    // written over) are written through this view of `out`, which so
    // stays initialized.
    let out = unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) };
    decode_utf8_uninit(b, out, unit)
}

/// Appends the `n` code points of the strict UTF-8 `b` to `v` (true), or
/// leaves `v` as it was when `b` is not strict UTF-8 of `n` code points.
pub(crate) fn decode_utf8_append(b: &[u8], n: usize, v: &mut Vec<u32>) -> bool {
    v.reserve(n);
    let len = v.len();
    let ok = decode_utf8_uninit(b, &mut v.spare_capacity_mut()[..n], |c| c);
    if ok {
        // SAFETY: `decode_utf8_uninit` wrote all `n` units of this part of
        // the spare capacity (it is true only then), which `reserve` made
        // room for.
        unsafe { v.set_len(len + n) };
    }
    ok
}

/// The number of characters of `b` if it is UTF-8: its bytes that are not
/// continuation bytes.
pub(crate) fn char_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| (c as i8) >= -0x40).count()
}

/// [`decode_utf8_into`] into units that need not be initialized: true
/// only when all of `out` was written.
fn decode_utf8_uninit<T>(b: &[u8], out: &mut [MaybeUninit<T>], unit: impl Fn(u32) -> T) -> bool {
    let cont = |k: usize| -> Option<u32> {
        let c = *b.get(k)?;
        (c & 0xC0 == 0x80).then_some(u32::from(c & 0x3F))
    };
    let (mut i, mut j) = (0, 0);
    while i < b.len() {
        if b[i].is_ascii() {
            copy_ascii_run::<BLOCKS, T>(b, &mut i, out, &mut j, |c| unit(u32::from(c)));
        }
        if i >= b.len() {
            break;
        }
        let c0 = u32::from(b[i]);
        let (cp, len) = match c0 {
            0x00..=0x7F => (c0, 1),
            0xC2..=0xDF => match cont(i + 1) {
                Some(c1) => ((c0 & 0x1F) << 6 | c1, 2),
                None => return false,
            },
            0xE0..=0xEF => match (cont(i + 1), cont(i + 2)) {
                (Some(c1), Some(c2)) => {
                    let cp = (c0 & 0x0F) << 12 | c1 << 6 | c2;
                    if cp < 0x800 || (0xD800..=0xDFFF).contains(&cp) {
                        return false;
                    }
                    (cp, 3)
                }
                _ => return false,
            },
            0xF0..=0xF4 => match (cont(i + 1), cont(i + 2), cont(i + 3)) {
                (Some(c1), Some(c2), Some(c3)) => {
                    let cp = (c0 & 0x07) << 18 | c1 << 12 | c2 << 6 | c3;
                    if !(0x1_0000..=0x10_FFFF).contains(&cp) {
                        return false;
                    }
                    (cp, 4)
                }
                _ => return false,
            },
            _ => return false,
        };
        let Some(slot) = out.get_mut(j) else {
            return false;
        };
        slot.write(unit(cp));
        i += len;
        j += 1;
    }
    j == out.len()
}

/// Decodes `b` and appends its code points to `v` when `b` is strict UTF-8
/// without 4-byte sequences (every code point below U+10000), in one pass.
/// Returns how many were appended and the bitwise OR of them (at least
/// 0x100 exactly when one of them is), or `None` (and `v` as it was).
pub(crate) fn decode_bmp(b: &[u8], v: &mut Vec<u16>) -> Option<(usize, u32)> {
    // At most one code point per byte: written into the spare capacity,
    // with no zeroing first.
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: `available` found the CPU features the vector decoder
        // needs; it is handed `b.len() + SLACK` units and writes every unit
        // its `Some` counts. (Its `None`, for bytes that are not strict
        // UTF-8 or hold a character past U+FFFF, is the byte-at-a-time
        // decoder's: the tests run both over the same inputs.)
        return unsafe {
            append_units(
                v,
                b.len() + avx512::SLACK,
                |o| avx512::decode_bmp_into::<false>(b, o),
                |r| r.0,
            )
        };
    }
    // SAFETY: `decode_bmp_into` writes every unit it counts.
    unsafe { append_units(v, b.len(), |o| decode_bmp_into(b, o), |r| r.0) }
}

/// The number of characters of `b` and the kind of `str` it takes (as
/// [`byte_kind`]) when the CPU has the vector decoders (AVX-512 with
/// VBMI2) and `b` holds a byte past ASCII; for a `str` allocated at its
/// final length and kind, which [`fill_exact`] then decodes into.
pub(crate) fn vector_shape(b: &[u8]) -> Option<(usize, u8)> {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: `available` found the CPU features `shape` needs.
        let (n, high, kind) = unsafe { avx512::shape(b) };
        return high.then_some((n, kind));
    }
    let _ = b;
    None
}

/// A code unit of a `str` kind that the vector decoders write exactly.
pub(crate) trait ExactUnit: Sized {
    /// Decodes `b` into all of `out` and nothing past it: true when `b` is
    /// strict UTF-8 of exactly `out.len()` characters that make a
    /// canonical `str` of this kind (past ASCII for `u8`, one past U+00FF
    /// for `u16`, one past U+FFFF for `u32`). False where the CPU has no
    /// vector decoders.
    fn fill_exact(b: &[u8], out: &mut [MaybeUninit<Self>]) -> bool;
}

impl ExactUnit for u8 {
    fn fill_exact(b: &[u8], out: &mut [MaybeUninit<u8>]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if avx512::available() {
            // SAFETY: `available` found the CPU features the decoder
            // needs; with `EXACT` it writes inside `out` only (and turns
            // down ASCII).
            return unsafe { avx512::decode_latin1_into::<true>(b, out) } == Some(out.len());
        }
        let _ = (b, out);
        false
    }
}

impl ExactUnit for u16 {
    fn fill_exact(b: &[u8], out: &mut [MaybeUninit<u16>]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if avx512::available() {
            // SAFETY: as for `u8`.
            let r = unsafe { avx512::decode_bmp_into::<true>(b, out) };
            return r.is_some_and(|(n, or)| n == out.len() && or >= 0x100);
        }
        let _ = (b, out);
        false
    }
}

impl ExactUnit for u32 {
    fn fill_exact(b: &[u8], out: &mut [MaybeUninit<u32>]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if avx512::available() {
            // SAFETY: as for `u8`. (With `EXACT`, `None` too when no
            // character is past U+FFFF.)
            return unsafe { avx512::decode_ucs4_into::<true>(b, out) } == Some(out.len());
        }
        let _ = (b, out);
        false
    }
}

/// Appends to `v` what `decode` writes into `room` units of its spare
/// capacity (reserved here, not zeroed): `decode`'s result, whose `count`
/// is the number of units written at the start; `v` as it was on `None`.
///
/// # Safety
/// Whenever `decode` returns `Some(r)`, it must have written the first
/// `count(&r)` (at most `room`) units of the slice it was given.
#[inline(always)]
unsafe fn append_units<T, R>(
    v: &mut Vec<T>,
    room: usize,
    decode: impl FnOnce(&mut [MaybeUninit<T>]) -> Option<R>,
    count: impl Fn(&R) -> usize,
) -> Option<R> {
    v.reserve(room);
    let len = v.len();
    let r = decode(&mut v.spare_capacity_mut()[..room]);
    if let Some(n) = r.as_ref().map(count) {
        // SAFETY: the caller's promise: the first `n` units of the spare
        // capacity are written.
        unsafe { v.set_len(len + n) };
    }
    r
}

/// Decodes `b` and appends its code points to `v` when `b` is strict UTF-8,
/// with a vector step where the CPU has one (AVX-512 with VBMI2): how many
/// were appended, or `None` (and `v` as it was) when `b` is not strict
/// UTF-8 or the CPU has no such step (then [`decode_utf8_into`] is the way).
pub(crate) fn decode_ucs4(b: &[u8], v: &mut Vec<u32>) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: `available` found the CPU features the vector decoder
        // needs; it is handed `b.len() + SLACK` units and writes every unit
        // its `Some` counts.
        return unsafe {
            append_units(
                v,
                b.len() + avx512::SLACK,
                |o| avx512::decode_ucs4_into::<false>(b, o),
                |&n| n,
            )
        };
    }
    let _ = (b, v);
    None
}

/// The high bit of each byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// [`copy_ascii_run`] sixteen bytes at a time first (for wider units, where
/// a block is widened in vector registers) ...
const BLOCKS: bool = true;

/// ... or a word at a time only (for bytes, whose words are copied as
/// they are).
const WORDS: bool = false;

/// Copies the ASCII bytes at `b[*i..]` to `out[*j..]` (each through `unit`)
/// sixteen (with `BLOCKS`), then eight, at a time while that many are
/// left: each block is written whole, and where it holds a byte that is
/// not ASCII only the bytes before that one are kept (and the copy stops
/// there); the bytes after them are written over later. A step stops
/// where `out` has no room for it (the caller goes on byte by byte).
#[inline(always)]
fn copy_ascii_run<const BLOCKS: bool, T>(
    b: &[u8],
    i: &mut usize,
    out: &mut [MaybeUninit<T>],
    j: &mut usize,
    unit: impl Fn(u8) -> T,
) {
    while let (true, Some(src), Some(dst)) = (BLOCKS, b.get(*i..*i + 16), out.get_mut(*j..*j + 16))
    {
        let src: &[u8; 16] = src.try_into().expect("16 bytes");
        // Fixed sizes: the compiler copies or widens the block in vector
        // registers.
        let dst: &mut [MaybeUninit<T>; 16] = dst.try_into().expect("16 units");
        for (d, &c) in dst.iter_mut().zip(src) {
            d.write(unit(c));
        }
        let lo = u64::from_le_bytes(src[..8].try_into().expect("8 bytes")) & HIGH_BITS;
        let hi = u64::from_le_bytes(src[8..].try_into().expect("8 bytes")) & HIGH_BITS;
        if lo | hi != 0 {
            let n = if lo != 0 { lo.trailing_zeros() / 8 } else { 8 + hi.trailing_zeros() / 8 };
            *i += n as usize;
            *j += n as usize;
            return;
        }
        *i += 16;
        *j += 16;
    }
    while let (Some(src), Some(dst)) = (b.get(*i..*i + 8), out.get_mut(*j..*j + 8)) {
        let src: &[u8; 8] = src.try_into().expect("8 bytes");
        let dst: &mut [MaybeUninit<T>; 8] = dst.try_into().expect("8 units");
        for (d, &c) in dst.iter_mut().zip(src) {
            d.write(unit(c));
        }
        let high = u64::from_le_bytes(*src) & HIGH_BITS;
        if high != 0 {
            let n = high.trailing_zeros() / 8;
            *i += n as usize;
            *j += n as usize;
            return;
        }
        *i += 8;
        *j += 8;
    }
}

/// Decodes `b` into `out` (room for `b.len()` units) when it is strict
/// UTF-8 whose characters are all below U+0100 (ASCII, and two-byte
/// sequences led by 0xC2 or 0xC3): their Latin-1 code units, one byte per
/// character; how many (all written), or `None` when `b` is anything else
/// (another byte at or past 0x80 that does not fit that shape).
fn decode_latin1_into(b: &[u8], out: &mut [MaybeUninit<u8>]) -> Option<usize> {
    let (mut i, mut j) = (0usize, 0usize);
    loop {
        if b.get(i).is_some_and(|c| c.is_ascii()) {
            copy_ascii_run::<WORDS, u8>(b, &mut i, out, &mut j, |c| c);
        }
        let Some(&c0) = b.get(i) else {
            return Some(j);
        };
        let c = match c0 {
            0x00..=0x7F => {
                i += 1;
                c0
            }
            0xC2..=0xC3 => match b.get(i + 1) {
                Some(&c1) if c1 & 0xC0 == 0x80 => {
                    i += 2;
                    (c0 & 0x1F) << 6 | (c1 & 0x3F)
                }
                _ => return None,
            },
            _ => return None,
        };
        out.get_mut(j)?.write(c);
        j += 1;
    }
}

/// Appends to `out` the index of each field that holds a byte past
/// ASCII, in order, and to `kinds` the kind of its characters as told by
/// its largest byte: 0 (below 0xC4: strict UTF-8 of it has characters
/// below U+0100 alone), 1 (below 0xF0: none past U+FFFF) or 2. Field
/// `f0 + i` is `data[starts[i]..ends[i]]`. (The fields of a batch are
/// classified a run at a time, on CPUs with AVX-512 by
/// [`avx512::non_ascii_fields`]; most are ASCII, and those need no other
/// work before their objects are made.)
///
/// # Panics
/// When a span is not inside `data`.
pub(crate) fn non_ascii_fields(
    data: &[u8],
    spans: (&[u32], &[u32]),
    f0: u32,
    (out, kinds): (&mut Vec<u32>, &mut Vec<u8>),
) {
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: `available` checked that the CPU has AVX-512 F and BW.
        unsafe { avx512::non_ascii_fields(data, spans, f0, (out, kinds)) };
        return;
    }
    for (i, (&s, &e)) in spans.0.iter().zip(spans.1).enumerate() {
        let b = &data[s as usize..e as usize];
        if !is_ascii_field(b) {
            out.push(f0.wrapping_add(i as u32));
            kinds.push(byte_kind(max_byte(b)));
        }
    }
}

/// The kind of [`non_ascii_fields`] for a field whose largest byte is `m`.
pub(crate) fn byte_kind(m: u8) -> u8 {
    match m {
        0x00..=0xC3 => 0,
        0xC4..=0xEF => 1,
        _ => 2,
    }
}

/// Whether `b` is ASCII. A field of up to 16 bytes (most are) takes at
/// most two loads that may overlap, with no loop and no byte-by-byte tail
/// (which the standard library's check has after its last whole word);
/// a longer one, that check.
#[inline(always)]
pub(crate) fn is_ascii_field(b: &[u8]) -> bool {
    let n = b.len();
    if n > 16 {
        return b.is_ascii();
    }
    if n >= 8 {
        let first = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let last = u64::from_le_bytes(b[n - 8..].try_into().expect("8 bytes"));
        return (first | last) & HIGH_BITS == 0;
    }
    if n >= 4 {
        let first = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
        let last = u32::from_le_bytes(b[n - 4..].try_into().expect("4 bytes"));
        return (first | last) & 0x8080_8080 == 0;
    }
    // Up to three bytes: the first, the middle and the last are all.
    n == 0 || (b[0] | b[n / 2] | b[n - 1]) < 0x80
}

/// The largest byte of `b` (0 for none), sixteen lanes at a time; the
/// last bytes of a field of 16 or more as one more block that overlaps
/// the one before (a maximum does not mind bytes seen twice).
pub(crate) fn max_byte(b: &[u8]) -> u8 {
    if b.len() < 16 {
        return b.iter().copied().max().unwrap_or(0);
    }
    let mut lanes = [0u8; 16];
    let mut fold = |block: &[u8]| {
        // Fixed sizes: one vector maximum per block.
        let block: &[u8; 16] = block.try_into().expect("16 bytes");
        for k in 0..16 {
            lanes[k] = lanes[k].max(block[k]);
        }
    };
    b.chunks_exact(16).for_each(&mut fold);
    fold(&b[b.len() - 16..]);
    lanes.iter().copied().fold(0, u8::max)
}

/// Decodes `b` and appends its Latin-1 code units to `v` when it is strict
/// UTF-8 with every character below U+0100 (see [`decode_latin1_into`]):
/// how many were appended, or `None` (and `v` as it was).
pub(crate) fn decode_latin1(b: &[u8], v: &mut Vec<u8>) -> Option<usize> {
    // At most one character per byte: written into the spare capacity,
    // with no zeroing first.
    #[cfg(target_arch = "x86_64")]
    if avx512::available() {
        // SAFETY: `available` found the CPU features the vector decoder
        // needs; it is handed `b.len() + SLACK1` units and writes every
        // unit its `Some` counts. (Its `None` is the byte-at-a-time
        // decoder's: the tests run both over the same inputs.)
        return unsafe {
            append_units(
                v,
                b.len() + avx512::SLACK1,
                |o| avx512::decode_latin1_into::<false>(b, o),
                |&n| n,
            )
        };
    }
    // SAFETY: `decode_latin1_into` writes every unit it counts.
    unsafe { append_units(v, b.len(), |o| decode_latin1_into(b, o), |&n| n) }
}

/// [`decode_bmp`] into `out`, which has room for `b.len()` code points;
/// the units it counts are all written.
fn decode_bmp_into(b: &[u8], out: &mut [MaybeUninit<u16>]) -> Option<(usize, u32)> {
    let (mut i, mut j, mut or) = (0usize, 0usize, 0u32);
    loop {
        // Runs of ASCII a block or a word at a time (not tried between
        // two characters past ASCII, as in a word of Cyrillic or CJK).
        if b.get(i).is_some_and(|c| c.is_ascii()) {
            copy_ascii_run::<BLOCKS, u16>(b, &mut i, out, &mut j, u16::from);
        }
        let Some(&c0) = b.get(i) else {
            return Some((j, or));
        };
        let cont =
            |k: usize| b.get(i + k).filter(|&&c| c & 0xC0 == 0x80).map(|&c| u32::from(c & 0x3F));
        let cp = match c0 {
            0x00..=0x7F => {
                out.get_mut(j)?.write(u16::from(c0));
                i += 1;
                j += 1;
                continue;
            }
            0xC2..=0xDF => {
                let c1 = cont(1)?;
                i += 2;
                u32::from(c0 & 0x1F) << 6 | c1
            }
            0xE0..=0xEF => {
                let (c1, c2) = (cont(1)?, cont(2)?);
                let cp = u32::from(c0 & 0x0F) << 12 | c1 << 6 | c2;
                if cp < 0x800 || (0xD800..=0xDFFF).contains(&cp) {
                    return None;
                }
                i += 3;
                cp
            }
            _ => return None,
        };
        or |= cp;
        out.get_mut(j)?.write(cp as u16);
        j += 1;
    }
}

/// The number of characters of `b` if it is UTF-8 (its bytes that are not
/// continuation bytes) and the largest code point it can hold as told by
/// its largest byte: below 0xC4 every character is below U+0100, below
/// 0xF0 below U+10000. If `b` is strict UTF-8 and not ASCII, that bound
/// names the narrowest kind of `str` that holds it.
pub(crate) fn utf8_shape(b: &[u8]) -> (usize, u32) {
    let n = b.iter().filter(|&&c| (c as i8) >= -0x40).count();
    let max: u32 = match b.iter().copied().max().unwrap_or(0) {
        0x00..=0x7F => 0x7F,
        0x80..=0xC3 => 0xFF,
        0xC4..=0xEF => 0xFFFF,
        _ => 0x10_FFFF,
    };
    (n, max)
}

/// A one-byte encoding whose text a file's bytes are transcoded from (see
/// `RawText`): Latin-1, Windows-1252 as Python's `cp1252` codec reads it,
/// or another of Python's one-byte codecs given by its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OneByte {
    /// ISO 8859-1: byte `b` is the character U+00bb.
    Latin1,
    /// Windows-1252: Latin-1 but for 0x80 to 0x9F (see [`CP1252_HIGH`]).
    Cp1252,
    /// ASCII, then the characters of a table (see [`OneByte::from_chars`]).
    Table(&'static HighTable),
}

/// The characters of bytes 0x80 to 0x9F in Python's `cp1252` codec; 0 for
/// the five it leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D), which it
/// cannot decode.
const CP1252_HIGH: [u16; 32] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, // 0x80
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0, // 0x88
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, // 0x90
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178, // 0x98
];

/// The UTF-8 of each byte from 0x80 on, in a one-byte encoding: its
/// length (0: undefined), then its bytes.
pub(crate) type HighTable = [[u8; 4]; 128];

/// [`HighTable`] of `chars`, the characters of bytes 0x80 to 0xFF (0:
/// undefined).
const fn high_table(chars: [u16; 128]) -> HighTable {
    let mut t = [[0u8; 4]; 128];
    let mut k = 0;
    while k < 128 {
        let u = chars[k] as u32;
        t[k] = if u == 0 {
            [0, 0, 0, 0]
        } else if u < 0x800 {
            [2, 0xC0 | (u >> 6) as u8, 0x80 | (u & 0x3F) as u8, 0]
        } else {
            [3, 0xE0 | (u >> 12) as u8, 0x80 | ((u >> 6) & 0x3F) as u8, 0x80 | (u & 0x3F) as u8]
        };
        k += 1;
    }
    t
}

/// The characters of bytes 0x80 to 0xFF: Latin-1's (`cp1252` false) or
/// `cp1252`'s.
const fn high_chars(cp1252: bool) -> [u16; 128] {
    let mut c = [0u16; 128];
    let mut k = 0;
    while k < 128 {
        c[k] = if cp1252 && k < 32 { CP1252_HIGH[k] } else { 0x80 + k as u16 };
        k += 1;
    }
    c
}

const LATIN1_TABLE: HighTable = high_table(high_chars(false));
const CP1252_TABLE: HighTable = high_table(high_chars(true));

impl OneByte {
    fn table(self) -> &'static HighTable {
        match self {
            OneByte::Latin1 => &LATIN1_TABLE,
            OneByte::Cp1252 => &CP1252_TABLE,
            OneByte::Table(t) => t,
        }
    }

    /// The encoding whose bytes from 0x80 on are the characters `chars`
    /// (0 for a byte it leaves undefined; ASCII below). Tables are made
    /// once per set of characters and kept for the life of the process
    /// (one per codec used, 512 bytes each).
    pub(crate) fn from_chars(chars: [u16; 128]) -> OneByte {
        type Made = HashMap<[u16; 128], &'static HighTable>;
        static MADE: OnceLock<Mutex<Made>> = OnceLock::new();
        let mut made = MADE.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
        OneByte::Table(made.entry(chars).or_insert_with(|| Box::leak(Box::new(high_table(chars)))))
    }

    /// The number of UTF-8 bytes of the character of the byte `c` (0 where
    /// it is undefined).
    #[inline]
    pub(crate) fn utf8_len(self, c: u8) -> usize {
        if c < 0x80 {
            1
        } else {
            usize::from(self.table()[usize::from(c & 0x7F)][0])
        }
    }

    /// Appends the UTF-8 of the text whose bytes in this encoding are `b`
    /// to `out`, up to the first byte the encoding leaves undefined, and
    /// returns the number of bytes of `b` taken (all of them but from
    /// that byte on). ASCII is copied eight bytes at a time where eight
    /// come in a row.
    pub(crate) fn to_utf8(self, b: &[u8], out: &mut Vec<u8>) -> usize {
        let table = self.table();
        out.reserve(b.len() + b.len() / 4);
        let mut i = 0;
        while i < b.len() {
            if let Some(w) = b.get(i..i + 8) {
                let x = u64::from_le_bytes(w.try_into().expect("8 bytes"));
                if x & 0x8080_8080_8080_8080 == 0 {
                    out.extend_from_slice(w);
                    i += 8;
                    continue;
                }
            }
            let c = b[i];
            if c < 0x80 {
                out.push(c);
            } else {
                let e = &table[usize::from(c & 0x7F)];
                let n = usize::from(e[0]);
                if n == 0 {
                    return i;
                }
                out.extend_from_slice(&e[1..1 + n]);
            }
            i += 1;
        }
        b.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{
        byte_kind, char_count, decode_bmp, decode_latin1, decode_ucs4, decode_utf8_append,
        is_ascii_field, max_byte, non_ascii_fields, OneByte,
    };

    /// Byte strings made of up to three pieces (ASCII runs across the
    /// 8- and 16-byte steps, characters of every UTF-8 length and width
    /// class, and invalid sequences: lone continuation bytes, overlong
    /// and cut-short forms, surrogates, past U+10FFFF), at every offset
    /// after an ASCII prefix of 0 to 65 bytes (across the block and word
    /// steps, and the vector steps of 16, 32 and 64 bytes).
    fn decoder_cases() -> Vec<Vec<u8>> {
        let pieces: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            b"0123456".to_vec(),
            b"abcdefghijklmnopq".to_vec(),
            "\u{80}".as_bytes().to_vec(),
            "\u{e9}".as_bytes().to_vec(),
            "\u{ff}".as_bytes().to_vec(),
            "\u{100}".as_bytes().to_vec(),
            "\u{20ac}".as_bytes().to_vec(),
            "\u{ffff}".as_bytes().to_vec(),
            "\u{1f642}".as_bytes().to_vec(),
            vec![0x80],
            vec![0xBF],
            vec![0xC0, 0x80],
            vec![0xC1, 0xBF],
            vec![0xC2],
            vec![0xC3, 0x41],
            vec![0xE2, 0x82],
            vec![0xE0, 0x80, 0xAF],
            vec![0xED, 0xA0, 0x80],
            vec![0xF4, 0x90, 0x80, 0x80],
            vec![0xFF],
        ];
        let mut combos: Vec<Vec<u8>> = vec![Vec::new()];
        let mut all = Vec::new();
        for _ in 0..3 {
            combos = combos
                .iter()
                .flat_map(|c| pieces.iter().map(move |p| [&c[..], &p[..]].concat()))
                .collect();
            all.extend(combos.iter().cloned());
        }
        let mut cases = Vec::new();
        for c in all {
            for pre in
                [0usize, 1, 7, 8, 9, 14, 15, 16, 17, 23, 24, 29, 30, 31, 32, 33, 61, 62, 63, 64, 65]
            {
                let mut b = vec![b'x'; pre];
                b.extend_from_slice(&c);
                cases.push(b);
            }
        }
        cases
    }

    /// `decode_latin1` and `decode_bmp` decode exactly the strict UTF-8
    /// (as the standard library reads it) of their width class, and
    /// `decode_utf8_append` all of it, to its code points, and leave the
    /// vector as it was otherwise.
    #[test]
    fn decoders_match_the_standard_library() {
        for b in decoder_cases() {
            let want: Option<Vec<u32>> =
                std::str::from_utf8(&b).ok().map(|s| s.chars().map(u32::from).collect());
            assert_eq!(max_byte(&b), b.iter().copied().max().unwrap_or(0), "{b:x?}");
            assert_eq!(is_ascii_field(&b), b.is_ascii(), "{b:x?}");
            let mut v1 = vec![7u8];
            let got1 = decode_latin1(&b, &mut v1);
            match &want {
                Some(cps) if cps.iter().all(|&c| c < 0x100) => {
                    assert_eq!(got1, Some(cps.len()), "{b:x?}");
                    let units: Vec<u32> = v1[1..].iter().map(|&u| u32::from(u)).collect();
                    assert_eq!(&units, cps, "{b:x?}");
                }
                _ => assert_eq!((got1, &v1[..]), (None, &[7u8][..]), "{b:x?}"),
            }
            let mut v2 = vec![7u16];
            let got2 = decode_bmp(&b, &mut v2);
            match &want {
                Some(cps) if cps.iter().all(|&c| c < 0x1_0000) => {
                    // The OR is that of the characters past ASCII.
                    let or = cps.iter().filter(|&&c| c >= 0x80).fold(0, |a, &c| a | c);
                    assert_eq!(got2, Some((cps.len(), or)), "{b:x?}");
                    let units: Vec<u32> = v2[1..].iter().map(|&u| u32::from(u)).collect();
                    assert_eq!(&units, cps, "{b:x?}");
                }
                _ => assert_eq!((got2, &v2[..]), (None, &[7u16][..]), "{b:x?}"),
            }
            let n = char_count(&b);
            let mut v4 = vec![7u32];
            let got4 = decode_utf8_append(&b, n, &mut v4);
            match &want {
                Some(cps) => {
                    assert_eq!(n, cps.len(), "{b:x?}");
                    assert!(got4, "{b:x?}");
                    assert_eq!(&v4[1..], cps, "{b:x?}");
                }
                None => assert_eq!((got4, &v4[..]), (false, &[7u32][..]), "{b:x?}"),
            }
            let mut v4 = vec![7u32];
            match (decode_ucs4(&b, &mut v4), &want) {
                (Some(n), Some(cps)) => {
                    assert_eq!(n, cps.len(), "{b:x?}");
                    assert_eq!(&v4[1..], cps, "{b:x?}");
                }
                (None, Some(_)) => assert!(!vector_step(), "{b:x?}"),
                (got, None) => assert_eq!((got, &v4[..]), (None, &[7u32][..]), "{b:x?}"),
            }
            // A count that is not the text's: refused, `v` as it was.
            let mut v4 = vec![7u32];
            assert!(!decode_utf8_append(&b, n + 1, &mut v4), "{b:x?}");
            assert_eq!(v4, [7], "{b:x?}");
        }
    }

    /// Whether this CPU runs the vector decoders (AVX-512 with VBMI2).
    fn vector_step() -> bool {
        #[cfg(target_arch = "x86_64")]
        return super::avx512::available();
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// Runs the byte-at-a-time decoder `one` and the vector decoder
    /// `vector` (which may write `slack` units past the field's) over every
    /// case: the same result, and the same units for the `count` of a
    /// `Some`.
    #[cfg(target_arch = "x86_64")]
    fn vector_agrees<T, R>(
        one: fn(&[u8], &mut [std::mem::MaybeUninit<T>]) -> Option<R>,
        vector: unsafe fn(&[u8], &mut [std::mem::MaybeUninit<T>]) -> Option<R>,
        slack: usize,
        count: fn(&R) -> usize,
    ) where
        T: Copy + Default + PartialEq + std::fmt::Debug,
        R: PartialEq + std::fmt::Debug,
    {
        use std::mem::MaybeUninit;
        for b in decoder_cases() {
            let mut v1 = vec![MaybeUninit::new(T::default()); b.len()];
            let mut v2 = vec![MaybeUninit::new(T::default()); b.len() + slack];
            let r1 = one(&b, &mut v1);
            // SAFETY: the caller checked the CPU's features; `v2` holds
            // `b.len() + slack` units.
            let r2 = unsafe { vector(&b, &mut v2) };
            let n = r1.as_ref().map_or(0, count);
            assert_eq!(r1, r2, "{b:x?}");
            // SAFETY: both decoders wrote their first `n` units (all were
            // initialized anyway).
            let (u1, u2): (Vec<T>, Vec<T>) = unsafe {
                (
                    v1[..n].iter().map(|u| u.assume_init()).collect(),
                    v2[..n].iter().map(|u| u.assume_init()).collect(),
                )
            };
            assert_eq!(u1, u2, "{b:x?}");
        }
    }

    /// The vector decoders of the BMP and of Latin-1 agree with the
    /// byte-at-a-time ones on every case: the same units (and OR), or
    /// both `None`. (`decode_bmp` and `decode_latin1`, which the test
    /// above checks, take the vector ones where they can.)
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_vector_decoders_are_the_byte_at_a_time_ones() {
        if !vector_step() {
            eprintln!("no AVX-512 with VBMI2 here: only the byte-at-a-time decoders run");
            return;
        }
        use super::avx512;
        vector_agrees(
            super::decode_bmp_into,
            avx512::decode_bmp_into::<false>,
            avx512::SLACK,
            |r| r.0,
        );
        vector_agrees(
            super::decode_latin1_into,
            avx512::decode_latin1_into::<false>,
            avx512::SLACK1,
            |&n| n,
        );
    }

    /// Runs `T::fill_exact` over `b` into a buffer of `n` units with a
    /// guard unit after it: whether it succeeded, the units, and whether
    /// the guard is intact.
    #[cfg(target_arch = "x86_64")]
    fn exact<T: super::ExactUnit + Copy + Into<u32>>(
        b: &[u8],
        n: usize,
        guard: T,
    ) -> (bool, Vec<u32>, bool) {
        use std::mem::MaybeUninit;
        let mut buf = vec![MaybeUninit::new(guard); n + 1];
        let ok = T::fill_exact(b, &mut buf[..n]);
        // SAFETY: every unit was initialized (to the guard) and is still
        // a `T`, written or not.
        let units: Vec<u32> = buf.iter().map(|u| unsafe { u.assume_init() }.into()).collect();
        let intact = units[n] == guard.into();
        (ok, units[..n].to_vec(), intact)
    }

    /// The vector decoders that store only what they decode (`EXACT`),
    /// into the body of a `str` of the text's length and kind: on every
    /// case, `vector_shape` gives the number of characters and the kind
    /// that the largest byte tells for text past ASCII (`None` for
    /// ASCII); each kind's decoder fills a buffer of exactly the text's
    /// characters with its code points when the text is strict UTF-8 of
    /// that kind (past ASCII for UCS-1, past U+00FF for UCS-2, past
    /// U+FFFF for UCS-4: the canonical kind), and refuses otherwise; none
    /// writes past the buffer, and a buffer one unit short is refused.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn exact_decoders_fill_their_kind_and_nothing_past_it() {
        use super::vector_shape;
        if !vector_step() {
            eprintln!("no AVX-512 with VBMI2 here: no vector decoders to check");
            assert_eq!(vector_shape("\u{e9}".as_bytes()), None);
            return;
        }
        let mut filled = [0usize; 3];
        for b in decoder_cases() {
            let want: Option<Vec<u32>> =
                std::str::from_utf8(&b).ok().map(|s| s.chars().map(u32::from).collect());
            let n = char_count(&b);
            let kind = byte_kind(b.iter().copied().max().unwrap_or(0));
            assert_eq!(vector_shape(&b), (!b.is_ascii()).then_some((n, kind)), "{b:x?}");
            let max = want.as_ref().map(|c| c.iter().copied().max().unwrap_or(0));
            let fits = |lo: u32, hi: u32| max.is_some_and(|m| (lo..=hi).contains(&m));
            let cases = [
                (exact::<u8>(&b, n, 0xAA), fits(0x80, 0xFF)),
                (exact::<u16>(&b, n, 0xAAAA), fits(0x100, 0xFFFF)),
                (exact::<u32>(&b, n, 0xAAAA_AAAA), fits(0x1_0000, 0x10_FFFF)),
            ];
            for (k, ((ok, units, intact), fit)) in cases.into_iter().enumerate() {
                assert!(intact, "kind {k}: wrote past the buffer: {b:x?}");
                assert_eq!(ok, fit, "kind {k}: {b:x?}");
                if ok {
                    assert_eq!(Some(&units), want.as_ref(), "kind {k}: {b:x?}");
                    assert_eq!(k as u8, kind, "the shape's kind: {b:x?}");
                    filled[k] += 1;
                }
            }
            if n > 0 {
                let short = [
                    exact::<u8>(&b, n - 1, 0xAA),
                    exact::<u16>(&b, n - 1, 0xAAAA),
                    exact::<u32>(&b, n - 1, 0xAAAA_AAAA),
                ];
                for (k, (ok, _, intact)) in short.into_iter().enumerate() {
                    assert!(!ok && intact, "kind {k}, one unit short: {b:x?}");
                }
            }
        }
        // Every kind was filled, many times.
        assert!(filled.iter().all(|&f| f > 1000), "{filled:?}");
    }

    /// `non_ascii_fields` (the vector one where the CPU has it) flags
    /// exactly the fields with a byte past ASCII, with the kind their
    /// largest byte tells: fields of every case above and of ASCII runs of
    /// 0 to 200 bytes (across the 64-byte steps), back to back in one
    /// buffer, with empty fields and fields that share bytes.
    #[test]
    fn fields_past_ascii_are_flagged_with_their_kind() {
        let mut fields: Vec<Vec<u8>> = decoder_cases();
        for n in 0..200 {
            fields.push(vec![b'a'; n]);
            let mut f = vec![b'a'; n];
            f.push(0xE9);
            fields.push(f);
            let mut f = vec![0xF0];
            f.extend(vec![b'a'; n]);
            fields.push(f);
        }
        let data = fields.concat();
        let (mut starts, mut ends, mut at) = (Vec::new(), Vec::new(), 0u32);
        for f in &fields {
            starts.push(at);
            at += f.len() as u32;
            ends.push(at);
            // An empty field, and one over this field and the one before.
            starts.extend([at, at.saturating_sub(f.len() as u32 + 3)]);
            ends.extend([at, at]);
        }
        let (mut got, mut kinds) = (vec![9], vec![9]);
        non_ascii_fields(&data, (&starts, &ends), 1000, (&mut got, &mut kinds));
        let (mut want, mut want_kinds) = (vec![9], vec![9]);
        for (i, (&s, &e)) in starts.iter().zip(&ends).enumerate() {
            let b = &data[s as usize..e as usize];
            if !b.is_ascii() {
                want.push(1000 + i as u32);
                want_kinds.push(byte_kind(b.iter().copied().max().unwrap_or(0)));
            }
        }
        assert_eq!(got, want);
        assert_eq!(kinds, want_kinds);
    }

    /// Pieces of the property test's byte strings: ASCII runs, characters
    /// of every length and width class, and broken sequences.
    fn piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            8 => proptest::collection::vec(0x20u8..0x7F, 1..40),
            3 => prop::sample::select(vec!["\u{e9}", "\u{ff}", "\u{80}", "\u{7ff}"]).prop_map(|s| s.as_bytes().to_vec()),
            3 => prop::sample::select(vec!["\u{100}", "\u{800}", "\u{20ac}", "\u{d7ff}", "\u{e000}", "\u{ffff}", "\u{6771}"]).prop_map(|s| s.as_bytes().to_vec()),
            1 => prop::sample::select(vec!["\u{10000}", "\u{1f642}", "\u{10ffff}"]).prop_map(|s| s.as_bytes().to_vec()),
            1 => prop::sample::select(vec![
                vec![0x80], vec![0xC0, 0x80], vec![0xC2], vec![0xE0, 0x9F, 0xBF],
                vec![0xED, 0xA0, 0x80], vec![0xF0, 0x8F, 0xBF, 0xBF], vec![0xF4, 0x90, 0x80, 0x80],
                vec![0xF5], vec![0xFF], vec![0xE2, 0x82], vec![0xF0, 0x9F, 0x99],
            ]),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

        /// Long strings of every mix, across many vector steps: each decoder
        /// gives the standard library's code points for the strict UTF-8 of
        /// its width class and `None` for the rest.
        #[test]
        fn decoders_match_the_standard_library_on_long_mixes(
            pieces in proptest::collection::vec(piece(), 0..60),
        ) {
            let b = pieces.concat();
            let want: Option<Vec<u32>> =
                std::str::from_utf8(&b).ok().map(|s| s.chars().map(u32::from).collect());
            let mut v1 = Vec::new();
            let got1 = decode_latin1(&b, &mut v1);
            match &want {
                Some(cps) if cps.iter().all(|&c| c < 0x100) => {
                    proptest::prop_assert_eq!(got1, Some(cps.len()));
                    let units: Vec<u32> = v1.iter().map(|&u| u32::from(u)).collect();
                    proptest::prop_assert_eq!(&units, cps);
                }
                _ => proptest::prop_assert_eq!(got1, None),
            }
            let mut v2 = Vec::new();
            let got2 = decode_bmp(&b, &mut v2).map(|(n, _)| n);
            match &want {
                Some(cps) if cps.iter().all(|&c| c < 0x1_0000) => {
                    proptest::prop_assert_eq!(got2, Some(cps.len()));
                    let units: Vec<u32> = v2.iter().map(|&u| u32::from(u)).collect();
                    proptest::prop_assert_eq!(&units, cps);
                }
                _ => proptest::prop_assert_eq!(got2, None),
            }
            let mut v4 = Vec::new();
            match (decode_ucs4(&b, &mut v4), &want) {
                (Some(n), Some(cps)) => {
                    proptest::prop_assert_eq!(n, cps.len());
                    proptest::prop_assert_eq!(&v4, cps);
                }
                (None, Some(_)) => proptest::prop_assert!(!vector_step()),
                (got, None) => proptest::prop_assert_eq!(got, None),
            }
        }
    }

    /// Every byte after ASCII runs of 0 to 40 bytes (across the 16-byte
    /// steps), then more text: Latin-1 is each byte's own character; the
    /// output is valid UTF-8 whose length is the sum of `utf8_len`; a
    /// `cp1252` byte it leaves undefined stops the transcoding there.
    #[test]
    fn one_byte_text_to_utf8() {
        for code in [OneByte::Latin1, OneByte::Cp1252] {
            for c in 0..=255u8 {
                for run in 0..=40 {
                    let mut b = vec![b'x'; run];
                    b.push(c);
                    b.extend_from_slice(b"tail\xe9".as_slice());
                    b.push(0xE9);
                    let mut out = b"kept".to_vec();
                    let n = code.to_utf8(&b, &mut out);
                    let s = std::str::from_utf8(&out[4..]).expect("valid UTF-8");
                    let taken = &b[..n];
                    assert_eq!(
                        out.len() - 4,
                        taken.iter().map(|&c| code.utf8_len(c)).sum::<usize>()
                    );
                    if code.utf8_len(c) == 0 {
                        assert_eq!(n, run, "{code:?} {c:#x}");
                        assert!(matches!(c, 0x81 | 0x8D | 0x8F | 0x90 | 0x9D));
                    } else {
                        assert_eq!(n, b.len());
                        assert_eq!(s.chars().count(), b.len());
                    }
                    if code == OneByte::Latin1 {
                        let want: String = taken.iter().map(|&c| char::from(c)).collect();
                        assert_eq!(s, want);
                    } else if !(0x80..0xA0).contains(&c) {
                        assert_eq!(s.chars().nth(run), Some(char::from(c)));
                    }
                }
            }
        }
        let mut out = Vec::new();
        assert_eq!(OneByte::Cp1252.to_utf8(b"\x80\x99\x9f\x83", &mut out), 4);
        assert_eq!(std::str::from_utf8(&out), Ok("\u{20ac}\u{2122}\u{178}\u{192}"));
    }
}
