//! Unit tests of the kernels and the classifier.

#[cfg(target_arch = "aarch64")]
use super::aarch64;
use super::classify::{below, from, Carry, Classifier, QuotedFields};
use super::fields::{copy_pending_portable, flatten};
use super::kernel::{prefix_xor, Kernel, Portable};
use super::select::{Selected, SelectedRecord, MODE_CSV, MODE_FIELDS, NO_COPY};
#[cfg(target_arch = "x86_64")]
use super::x86_64;
use super::{Masks, Needles};
use crate::dialect::{Dialect, Terminator};

/// Every kernel available on this CPU agrees with the portable one.
#[test]
fn kernels_agree_with_portable() {
    type Masker = unsafe fn(*const u8, &Needles) -> Masks;
    let mut all: Vec<(&str, Masker)> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        all.push(("sse2", x86_64::masks_sse2));
        if std::arch::is_x86_feature_detected!("pclmulqdq") {
            all.push(("sse2_clmul", x86_64::masks_sse2_clmul));
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("popcnt")
                && std::arch::is_x86_feature_detected!("bmi1")
            {
                all.push(("avx2_clmul", x86_64::masks_avx2));
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                {
                    all.push(("avx512_clmul", x86_64::masks_avx512));
                    if std::arch::is_x86_feature_detected!("avx512vbmi2") {
                        all.push(("avx512_vbmi2", x86_64::masks_vbmi2));
                    }
                }
            }
        }
    }
    #[cfg(target_arch = "aarch64")]
    if std::arch::is_aarch64_feature_detected!("neon") {
        all.push(("neon", aarch64::masks_neon));
        if std::arch::is_aarch64_feature_detected!("aes") {
            all.push(("neon_pmull", aarch64::masks_neon_pmull));
        }
    }
    // Where the target promises NEON, the NEON kernels must be among
    // those compared (this is what the aarch64 CI step runs for).
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    assert!(all.iter().any(|(name, _)| *name == "neon"));
    let alphabet = b",\"\r\n a\\#\xc3\xa9\0;";
    let mut seed = 0x1234_5678_9abc_def1u64;
    for round in 0..2000 {
        let mut block = [0u8; 64];
        for b in block.iter_mut() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *b = alphabet[(seed % alphabet.len() as u64) as usize];
        }
        let needles = Needles {
            bytes: [b',', b'"', b'\r', b'\n', b'\\', b' '],
            quote_on: if round % 7 == 0 { 0 } else { !0 },
            extra: round % 3 == 0,
        };
        // SAFETY: `block` is 64 bytes; portable needs no CPU features.
        let want = unsafe { Portable::masks::<false>(block.as_ptr(), &needles) };
        for (name, masks) in &all {
            // SAFETY: `block` is 64 bytes and each kernel was pushed
            // only after detecting its CPU features.
            let got = unsafe { masks(block.as_ptr(), &needles) };
            assert_eq!(got, want, "{name}");
        }
    }
}

/// Every kernel's `flatten` on this CPU gives the offsets of the set
/// bits, in order, after what the vector held.
#[test]
fn flatten_kernels_agree() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut bits_of = |round: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Sparse, dense, all and none.
        match round % 4 {
            0 => seed & (seed >> 3) & (seed >> 7),
            1 => seed | (seed >> 1),
            2 => !0,
            _ => seed,
        }
    };
    for round in 0..4000u64 {
        let bits = if round < 2 { round } else { bits_of(round) };
        let base = (round * 64) as u32;
        let want: Vec<u32> =
            (0..64).filter(|i| bits >> i & 1 == 1).map(|i| base + i as u32).collect();
        let mut v = vec![7u32; (round % 5) as usize];
        let mut expect = v.clone();
        expect.extend(&want);
        flatten(&mut v, bits, base);
        assert_eq!(v, expect, "portable, {bits:#x}");
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
        {
            let mut v = vec![7u32; (round % 5) as usize];
            // SAFETY: AVX-512 F was detected just above.
            unsafe { x86_64::flatten_avx512(&mut v, bits, base) };
            assert_eq!(v, expect, "avx512, {bits:#x}");
            if std::arch::is_x86_feature_detected!("avx512vbmi2") {
                let mut v = vec![7u32; (round % 5) as usize];
                // SAFETY: AVX-512 F, BW and VBMI2 were detected.
                unsafe { x86_64::flatten_vbmi2(&mut v, bits, base) };
                assert_eq!(v, expect, "avx512 vbmi2, {bits:#x}");
            }
        }
    }
}

/// The copies of records with doubled quotes: the byte compress's
/// (which finds the delimiters itself) and the portable one (from the
/// loop's offsets) give the same bytes and offsets, and the first falls
/// back to the second when the count it finds is not the record's.
#[test]
fn both_copies_of_records_with_pairs_agree() {
    let input: &[u8] = b"x,\"a\"\"b\",c\n\"\"\"\"\"\",\"p,\"\"q\"\"\",\"\"\n";
    // Two records, with the offsets of their delimiters from 0.
    let recs = [(0usize, 10usize, vec![1u32, 8]), (11, 30, vec![17, 27])];
    let build = |fields_of: &dyn Fn(usize) -> usize| {
        let mut out = Selected::default();
        for (i, (a, e, d)) in recs.iter().enumerate() {
            out.records.push(SelectedRecord {
                start: *a,
                end: *e,
                after: e + 1,
                lf: true,
                spans_at: usize::MAX,
                ends_at: out.ends.len() as u32,
                copy: NO_COPY,
                line: 1,
                fields: fields_of(d.len() + 1),
                plain: false,
            });
            out.ends.extend(d);
            out.pending.push(i as u32);
        }
        out.scratch.extend(b"earlier");
        out.copies_base = 3;
        out
    };
    let portable = |out: &mut Selected| copy_pending_portable(input, out, b'"');
    let mut want = build(&|f| f);
    portable(&mut want);
    assert_eq!(&want.scratch[7..], b"x,\"a\"b\",c\"\"\"\",\"p,\"q\"\",\"\"");
    assert_eq!(want.copies, [4, 5, 11, 13, 13, 17, 25, 28]);
    #[cfg(target_arch = "x86_64")]
    if super::dispatch::dispatch().byte_compress {
        let mut got = build(&|f| f);
        // SAFETY: the VBMI2 kernel is chosen only where the CPU has
        // AVX-512 F, BW and VBMI2, BMI2 and PCLMULQDQ.
        unsafe { x86_64::copy_pending_vbmi2(input, &mut got, b'"', b',') };
        assert_eq!((&got.scratch, &got.copies), (&want.scratch, &want.copies));
        // A field count the copy does not find (with as many offsets
        // from the loop): the loop's offsets are used.
        let mut want = build(&|f| f + 1);
        want.ends.insert(2, 9);
        want.ends.push(29);
        want.records[1].ends_at = 3;
        let mut got = want.clone();
        portable(&mut want);
        // SAFETY: as above.
        unsafe { x86_64::copy_pending_vbmi2(input, &mut got, b'"', b',') };
        assert_eq!((&got.scratch, &got.copies), (&want.scratch, &want.copies));
        assert_eq!(got.copies.len(), 2 * 5);
    }
}

/// `clean_opens` pairs each clean closing quote with the opening quote
/// before it, over random fields (opening and closing quotes
/// alternating, the block starting inside a field or not).
#[test]
fn clean_opens_pairs_each_close_with_its_open() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi2") {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for round in 0..20_000u64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Alternate quotes at the set bits of `seed`'s sparse
            // part; a random half of the closing ones are clean.
            let quotes = seed & (seed >> 5) & if round % 3 == 0 { !0 } else { seed >> 11 };
            let in_field = round & 1;
            let (mut open, mut close, mut want_opens) = (0u64, 0u64, 0u64);
            let (mut clean, mut want_carried) = (0u64, 0u64);
            let mut inside = in_field == 1;
            let mut last_open: Option<u32> = None;
            let mut pick = seed.rotate_left(23);
            for i in 0..64 {
                if quotes >> i & 1 == 0 {
                    continue;
                }
                if inside {
                    close |= 1 << i;
                    if pick & 1 == 1 {
                        clean |= 1 << i;
                        match last_open {
                            Some(o) => want_opens |= 1 << o,
                            None => want_carried = 1,
                        }
                    }
                    pick >>= 1;
                } else {
                    open |= 1 << i;
                    last_open = Some(i);
                }
                inside = !inside;
            }
            // SAFETY: BMI2 was detected just above.
            let got = unsafe { x86_64::clean_opens_bmi2(open, close, clean, in_field) };
            assert_eq!(got, (want_opens, want_carried), "{open:#x} {close:#x} {clean:#x}");
        }
    }
}

#[test]
fn prefix_xor_is_running_parity() {
    let x = 0b1001_0010u64;
    let p = prefix_xor(x);
    for i in 0..64 {
        let want = (x & below(i + 1)).count_ones() % 2;
        assert_eq!((p >> i & 1) as u32, want, "bit {i}");
    }
}

#[test]
fn classifies_quotes() {
    let d = Dialect::default();
    let c = Classifier::new(&d);
    let mut carry = Carry::record_start();
    // a,"b,c","d""e"\n  then a mid-field quote
    let input = b"a,\"b,c\",\"d\"\"e\"\nx\"y\n";
    assert!(c.is_std());
    let mut qf = QuotedFields::default();
    // SAFETY: the portable kernel needs no CPU features.
    let b = unsafe { c.block::<Portable, false, MODE_CSV>(input, 0, &mut carry, &mut qf) };
    assert_eq!(b.delim, 1 << 1 | 1 << 7);
    // The bad quote opens a false quoted region: nothing after it is
    // structural, which is why records with bad bits fall back.
    assert_eq!(b.nl, 1 << 14);
    assert_eq!(b.pairs, 1 << 10);
    assert_eq!(b.bad, 1 << 16);
    assert_eq!(b.lines, 1 << 14 | 1 << 18);
    // The loops specialised for this dialect classify alike.
    let mut carry_std = Carry::record_start();
    let mut qf_std = QuotedFields::default();
    // SAFETY: as above.
    let s = unsafe { c.block::<Portable, true, MODE_CSV>(input, 0, &mut carry_std, &mut qf_std) };
    assert_eq!(format!("{s:?} {carry_std:?}"), format!("{b:?} {carry:?}"));
    assert_eq!(format!("{qf_std:?}"), format!("{qf:?}"));
    // Quoted fields: `"b,c"` (2..6) and `"d""e"` (8..14); the bad
    // quote at 16 opens no field, but quotes the rest of the block.
    assert_eq!(qf.open, 1 << 2 | 1 << 8);
    assert_eq!(qf.close, 1 << 6 | 1 << 13);
    // Inside them, all but the delimiter and the pair's first quote
    // (and, from 16 on, the LF at 18).
    let inside = |a: u64, e: u64| below(e as usize) & from(a as usize);
    assert_eq!(qf.plain & below(16), inside(2, 6) & !(1 << 4) | inside(8, 13) & !(1 << 10));
    assert!(qf.open_at_end);
    // `MODE_FIELDS` marks the pair's second quote instead, and defers
    // checking what follows a closing quote in bit 63.
    let mut carry_f = Carry::record_start();
    // SAFETY: as above.
    let f = unsafe { c.block::<Portable, true, MODE_FIELDS>(input, 0, &mut carry_f, &mut qf) };
    assert_eq!(f.pairs, 1 << 11);
    assert_eq!((f.delim, f.nl, f.bad), (b.delim, b.nl, b.bad));
}

#[test]
fn fields_mode_finds_a_pair_across_blocks_and_a_bad_close_late() {
    let c = Classifier::new(&Dialect::default());
    let run = |input: &[u8]| {
        let mut carry = Carry::record_start();
        let mut qf = QuotedFields::default();
        // SAFETY: the portable kernel needs no CPU features.
        let a = unsafe { c.block::<Portable, true, MODE_FIELDS>(input, 0, &mut carry, &mut qf) };
        // SAFETY: as above.
        let b = unsafe { c.block::<Portable, true, MODE_FIELDS>(input, 64, &mut carry, &mut qf) };
        (a, b)
    };
    // A quoted field whose pair straddles the blocks: first quote in
    // bit 63, second in bit 0 of the next block.
    let mut input = vec![b'x'; 128];
    input[0] = b'"';
    input[63] = b'"';
    input[64] = b'"';
    input[66] = b'"';
    input[67] = b'\n';
    let (a, b) = run(&input);
    assert_eq!((a.pairs, a.bad), (0, 0));
    assert_eq!((b.pairs, b.bad, b.nl), (1, 0, 1 << 3));
    // A closing quote in bit 63 followed by a plain byte: bad in bit 0
    // of the next block.
    input[64] = b'y';
    let (a, b) = run(&input);
    assert_eq!((a.bad, b.bad & 1), (0, 1));
}

#[test]
fn only_the_plain_dialect_is_std() {
    let std = |d: Dialect| Classifier::new(&d).is_std();
    assert!(std(Dialect { delimiter: b';', quote: Some(b'\''), ..Dialect::default() }));
    assert!(!std(Dialect { escape: Some(b'\\'), ..Dialect::default() }));
    assert!(!std(Dialect { skip_initial_space: true, ..Dialect::default() }));
    assert!(!std(Dialect { double_quote: false, ..Dialect::default() }));
    assert!(!std(Dialect { quote: None, ..Dialect::default() }));
    assert!(!std(Dialect { terminator: Terminator::Byte(b';'), ..Dialect::default() }));
}
