//! Where the fields of a group of rows lie, noted row by row and read
//! column by column: [`super::Columns`] notes each field's [`Place`] in a
//! table with column `j`'s places at `places[j * g..(j + 1) * g]` (a group
//! of `g` rows), then hands each column's run of places to its builder or
//! text column, which reads them in order with its state in registers.
//!
//! A record without quotes (most of them) is noted by [`note_plain`] from
//! its delimiters' offsets. That step writes 16 bytes for every field of
//! the file, a column apart: on AVX-512 it computes eight places at a time
//! and writes each with one store ([`note_plain_avx512`]).

/// Fields whose places are noted before they are copied column by column
/// (a group of rows: 16 bytes each, so 64 KiB, written mostly within the
/// L1 cache), and the fewest rows in a group (each column's builder is
/// called once a group, so a very wide file wants more rows than 4,096
/// fields give). The number of rows is made odd: a column's places then
/// start an odd multiple of 16 bytes after the one before, and a row's
/// places spread over the cache's sets (with a power of two, such as 256
/// rows of 16 columns, they all fell in one set). docs/BENCHMARKS.md has
/// the measurements.
const GROUP_FIELDS: usize = 4 * 1024;
const GROUP_ROWS: usize = 54;

/// The rows of a group of `width` columns: see [`GROUP_FIELDS`].
pub(crate) fn group_rows(width: usize) -> usize {
    (GROUP_FIELDS / width.max(1)).max(GROUP_ROWS) | 1
}

/// Where a field's bytes lie: their address, their length, and 1 when 32
/// bytes can be read from the address (the number parsers and the text
/// copies then read whole words past the field), else 0. `repr(C)`: the
/// vector kernel writes one as two 64-bit lanes, the address then the
/// length and the flag.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Place(pub usize, pub u32, pub u32);

/// Notes the places of the fields of row `r` of a group of `g` rows,
/// column by column (column `j`'s at `places[j * g..]`): address, length
/// and 1 when 32 bytes can be read from the address. The row is a record
/// without quotes, given by `SelectedRow::plain_ends` (at most `width`
/// fields): its fields lie between its delimiters, each with the bytes to
/// the input's end readable; fields past a short record's end are empty.
///
/// # Panics
///
/// When `r >= g`, when the row has more than `width` fields, or when
/// `places` holds fewer than `width * g` places.
#[inline(always)]
pub(crate) fn note_plain(
    places: &mut [Place],
    r: usize,
    g: usize,
    width: usize,
    row: (&[u8], usize, &[u32], usize),
) {
    let ends = row.2;
    assert!(r < g && ends.len() < width && width * g <= places.len(), "a row's places fit");
    #[cfg(target_arch = "x86_64")]
    if ends.len() >= 8 && avx512_places() {
        // SAFETY: the CPU has AVX-512 F and VL, and the places fit (the
        // assertion above).
        unsafe { note_plain_avx512(places, r, g, row) };
        pad(places, r, g, width, ends.len() + 1);
        return;
    }
    note_scalar(places, r, g, row, 0);
    pad(places, r, g, width, ends.len() + 1);
}

/// Notes the row's fields from field `from` on (`from <= ends.len()`), a
/// field at a time.
#[inline(always)]
fn note_scalar(
    places: &mut [Place],
    r: usize,
    g: usize,
    (input, start, ends, end): (&[u8], usize, &[u32], usize),
    from: usize,
) {
    let (base, len) = (input.as_ptr() as usize, input.len());
    let mut a = if from == 0 { start } else { ends[from - 1] as usize + 1 };
    let mut at = from * g + r;
    for &e in &ends[from..] {
        let e = e as usize;
        places[at] = Place(base + a, (e - a) as u32, u32::from(a + 32 <= len));
        (a, at) = (e + 1, at + g);
    }
    places[at] = Place(base + a, (end - a) as u32, u32::from(a + 32 <= len));
}

/// The empty places of columns `from..width`, past a short record's end.
#[inline(always)]
fn pad(places: &mut [Place], r: usize, g: usize, width: usize, from: usize) {
    let none = <&[u8]>::default().as_ptr() as usize;
    for j in from..width {
        places[j * g + r] = Place(none, 0, 0);
    }
}

/// Whether [`note_plain`] runs its AVX-512 kernel: where the CPU has
/// AVX-512 F and VL, unless `FASTCSV_SIMD` asks the block scanner for a
/// kernel below AVX-512 (`avx2+pclmulqdq`, `sse2+pclmulqdq`, `sse2`,
/// `portable`), so that one setting tests the plain paths.
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512_places() -> bool {
    static CHOSEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let want = std::env::var("FASTCSV_SIMD").unwrap_or_default();
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && !matches!(want.as_str(), "portable" | "sse2" | "sse2+pclmulqdq" | "avx2+pclmulqdq")
    })
}

/// [`note_scalar`] of the whole row, eight fields a step: their starts
/// are the delimiters before them plus one, from which the lengths, the
/// addresses and the flags come in three vector steps; two permutes put
/// each field's address beside its length and flag, and each place is one
/// 16-byte store. The last fields (fewer than eight, and the one after
/// the last delimiter) are noted a field at a time.
///
/// # Safety
///
/// The CPU has AVX-512 F and VL; `r < g`, and `places` holds
/// `(ends.len() + 1) * g` places at least.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn note_plain_avx512(
    places: &mut [Place],
    r: usize,
    g: usize,
    row: (&[u8], usize, &[u32], usize),
) {
    use std::arch::x86_64::*;
    let (input, start, ends, _) = row;
    let (base, len) = (input.as_ptr() as usize, input.len());
    // The delimiters' offsets are `u32`s, and so are the fields' starts
    // (the first is before the first delimiter). A start `a` has 32 bytes
    // readable when `a <= len - 32`.
    let last = match len.checked_sub(32) {
        Some(l) => _mm256_set1_epi32(l.min(u32::MAX as usize) as u32 as i32),
        None => _mm256_setzero_si256(),
    };
    let readable = if len >= 32 { 0xFF } else { 0 };
    let base = _mm512_set1_epi64(base as i64);
    let flag = _mm512_set1_epi64(1 << 32);
    let one = _mm256_set1_epi32(1);
    // Element `i` of the permutes' results: the address (from the first
    // operand, 0-7) and the length and flag (the second, 8-15) of fields
    // 0-3, then 4-7.
    let low = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    let high = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    // The delimiter before the next eight fields, in the last element.
    let mut before = _mm256_set1_epi32((start as u32).wrapping_sub(1) as i32);
    let out = places.as_mut_ptr().cast::<__m128i>();
    let mut k = 0;
    while k + 8 <= ends.len() {
        // SAFETY: `k + 8 <= ends.len()`: eight `u32`s in `ends`.
        let e = unsafe { _mm256_loadu_si256(ends.as_ptr().add(k).cast()) };
        let s = _mm256_add_epi32(_mm256_alignr_epi32::<7>(e, before), one);
        let lens = _mm512_cvtepu32_epi64(_mm256_sub_epi32(e, s));
        let wide = _mm256_cmple_epu32_mask(s, last) & readable;
        let addr = _mm512_add_epi64(_mm512_cvtepu32_epi64(s), base);
        let lf = _mm512_mask_or_epi64(lens, wide, lens, flag);
        let (a, b) =
            (_mm512_permutex2var_epi64(addr, low, lf), _mm512_permutex2var_epi64(addr, high, lf));
        let at = (k * g + r) as isize;
        let g = g as isize;
        // SAFETY: fields `k..k + 8` of the row are places `(k + m) * g + r`
        // for `m` in 0..8, all below `(ends.len() + 1) * g`, which the
        // caller says `places` holds; a `Place` is 16 bytes (`repr(C)`:
        // the address, then the length and the flag).
        unsafe {
            _mm_storeu_si128(out.offset(at), _mm512_castsi512_si128(a));
            _mm_storeu_si128(out.offset(at + g), _mm512_extracti32x4_epi32::<1>(a));
            _mm_storeu_si128(out.offset(at + 2 * g), _mm512_extracti32x4_epi32::<2>(a));
            _mm_storeu_si128(out.offset(at + 3 * g), _mm512_extracti32x4_epi32::<3>(a));
            _mm_storeu_si128(out.offset(at + 4 * g), _mm512_castsi512_si128(b));
            _mm_storeu_si128(out.offset(at + 5 * g), _mm512_extracti32x4_epi32::<1>(b));
            _mm_storeu_si128(out.offset(at + 6 * g), _mm512_extracti32x4_epi32::<2>(b));
            _mm_storeu_si128(out.offset(at + 7 * g), _mm512_extracti32x4_epi32::<3>(b));
        }
        before = e;
        k += 8;
    }
    note_scalar(places, r, g, row, k);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of noting a row notes what `note_scalar` does: rows of 1
    /// to 40 fields of 0 to 40 bytes, in inputs shorter and longer than 32
    /// bytes past the fields, with every group size and row up to 5.
    #[test]
    fn the_kernels_note_the_same_places() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for fields in 1..=40usize {
            for round in 0..40 {
                let lens: Vec<usize> = (0..fields).map(|_| next(41) as usize).collect();
                let lead = next(5) as usize;
                let mut ends = Vec::new();
                let mut at = lead;
                for l in &lens[..fields - 1] {
                    at += l;
                    ends.push(at as u32);
                    at += 1;
                }
                let end = at + lens[fields - 1];
                // Past the row: none, a few, or more than 32 bytes.
                let tail = [0, 3, 31, 32, 40][round % 5];
                let input = vec![b'x'; end + tail];
                let width = fields + next(3) as usize;
                for g in 1..=5 {
                    for r in 0..g {
                        let row = (&input[..], lead, &ends[..], end);
                        let mut want = vec![Place(7, 7, 7); width * g];
                        note_scalar(&mut want, r, g, row, 0);
                        pad(&mut want, r, g, width, fields);
                        let mut got = vec![Place(7, 7, 7); width * g];
                        note_plain(&mut got, r, g, width, row);
                        assert_eq!(got, want, "{fields} fields, group {g}, row {r}");
                        // The places are the fields' bytes, with 32 bytes
                        // readable exactly when the input has them.
                        for j in 0..fields {
                            let p = got[j * g + r];
                            let a = p.0 - input.as_ptr() as usize;
                            assert_eq!(p.1 as usize, lens[j]);
                            assert_eq!(p.2 == 1, a + 32 <= input.len());
                        }
                        #[cfg(target_arch = "x86_64")]
                        if fields > 8 && avx512_places() {
                            let mut v = vec![Place(7, 7, 7); width * g];
                            // SAFETY: checked just above; `r < g`, and
                            // `v` holds `width * g >= fields * g` places.
                            unsafe { note_plain_avx512(&mut v, r, g, row) };
                            pad(&mut v, r, g, width, fields);
                            assert_eq!(v, want, "AVX-512: {fields} fields, group {g}, row {r}");
                        }
                    }
                }
            }
        }
    }
}
