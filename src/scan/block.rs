//! The block scanner: 64 bytes at a time, with bitmasks.
//!
//! BE ADVISED: this is a *shortcut* past the state machine in `mod.rs`, and
//! it is only allowed to take records whose meaning it can prove equal to
//! what the state machine would produce. Anything else is handed back,
//! whole record at a time, to the state machine.
//!
//! # How a block is read
//!
//! A kernel (AVX2, SSE2 or portable, picked once at run time) compares 64
//! input bytes against the delimiter, the quote, the two terminator bytes
//! (CR and LF, or the single terminator byte twice), and optionally the
//! escape byte and the space, giving one `u64` per needle (bit `i` is byte
//! `i`). The inside-quotes mask is the prefix XOR of the quote bits
//! (carry-less multiply by all ones when `pclmulqdq` is available), XORed
//! with the carry from the block before. Delimiters and terminators outside
//! quotes are the structural bytes: they end fields and records.
//!
//! # What makes a record "regular"
//!
//! The prefix XOR models quotes as toggles. That matches Python's reader
//! only when every quote is one of:
//!
//! * an *opening* quote (inside-mask 1 at the quote) right after a field
//!   start: a structural delimiter or terminator, or the record start;
//! * a *closing* quote (inside-mask 0) right before a structural byte;
//! * one of a doubled pair `""` inside a quoted field (closing quote right
//!   before an opening quote), when `double_quote` is on.
//!
//! Every other quote, every escape byte and every space at a field start
//! (with `skip_initial_space`) is marked *bad*. The parity of the prefix
//! XOR is exact up to the first bad bit, so a record that ends before its
//! first bad bit is regular; a record that contains one goes to the state
//! machine, and block scanning restarts at the next record with fresh
//! carries. Comments and empty lines are recognised at the record's first
//! byte and also go to the state machine, as does a record that ends in CR
//! at the very end of the input (it may need `skip_lf`).
//!
//! Regular records reuse the state machine's own `add`/`save` steps for
//! their fields, so spans, `is_owned`/`is_quoted`/`is_numeric` flags,
//! filtering, trimming and field-size limits come out identical; a field
//! over the limit makes the record go back to the state machine, which then
//! reports the error at the exact byte.
//!
//! # Line counting
//!
//! Python's `line_num` counts every CR, and every LF not preceded by CR
//! (only the terminator byte with `Terminator::Byte`). The `lines` mask
//! marks exactly those bytes, carrying "previous byte was CR" across
//! blocks, and a record adds the popcount over its bytes.
//!
//! If you add a dialect option: decide whether the classifier can prove it
//! absent per record (add a needle and mark it bad) — otherwise records
//! using it must fall back. Then run `tests/block.rs`.

use std::sync::OnceLock;

use super::{Fields, Scanner, State};
use crate::dialect::{Dialect, Terminator};

/// Raw comparison masks of one 64-byte block (bit `i` = byte `i`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    delim: u64,
    quote: u64,
    /// Needle 2: CR, or the terminator byte.
    nl_a: u64,
    /// Needle 3: LF, or the terminator byte.
    nl_b: u64,
    /// Escape byte (zero unless `EXTRA`).
    esc: u64,
    /// Space (zero unless `EXTRA`).
    space: u64,
    /// Prefix XOR of `quote`: bit `i` is the parity of quotes at `0..=i`.
    quote_prefix: u64,
}

/// The bytes a kernel looks for. `quote_on` is all ones when the dialect
/// has a quote character and zero otherwise (then `bytes[1]` is unused).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Needles {
    bytes: [u8; 6],
    quote_on: u64,
}

/// A block classifier: reads 64 bytes at `p`.
///
/// # Safety
///
/// `p` must be valid for reads of 64 bytes, and the CPU must support the
/// instruction sets the kernel was compiled for (guaranteed for the kernels
/// returned by [`kernels`]).
type Kernel = unsafe fn(*const u8, &Needles) -> Masks;

/// Prefix XOR without special instructions: bit `i` of the result is the
/// XOR of bits `0..=i` of `x`.
#[inline]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Portable kernel, one byte at a time. Used where no SIMD kernel exists,
/// and as the oracle for the SIMD kernels in tests.
///
/// # Safety
///
/// `p` must be valid for reads of 64 bytes.
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
unsafe fn kernel_portable<const EXTRA: bool>(p: *const u8, n: &Needles) -> Masks {
    // SAFETY: the caller guarantees 64 readable bytes at `p`.
    let block = unsafe { std::slice::from_raw_parts(p, 64) };
    let mut m = Masks::default();
    for (i, &c) in block.iter().enumerate() {
        let bit = 1u64 << i;
        m.delim |= if c == n.bytes[0] { bit } else { 0 };
        m.quote |= if c == n.bytes[1] { bit } else { 0 };
        m.nl_a |= if c == n.bytes[2] { bit } else { 0 };
        m.nl_b |= if c == n.bytes[3] { bit } else { 0 };
        if EXTRA {
            m.esc |= if c == n.bytes[4] { bit } else { 0 };
            m.space |= if c == n.bytes[5] { bit } else { 0 };
        }
    }
    m.quote &= n.quote_on;
    m.quote_prefix = prefix_xor(m.quote);
    m
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{prefix_xor, Masks, Needles};
    use std::arch::x86_64::*;

    /// Prefix XOR by carry-less multiplication with all ones.
    ///
    /// # Safety
    ///
    /// The CPU must support `pclmulqdq` (and SSE2).
    #[target_feature(enable = "sse2,pclmulqdq")]
    #[inline]
    unsafe fn prefix_xor_clmul(x: u64) -> u64 {
        let a = _mm_set_epi64x(0, x as i64);
        let ones = _mm_set1_epi8(-1);
        _mm_cvtsi128_si64(_mm_clmulepi64_si128(a, ones, 0)) as u64
    }

    macro_rules! sse2_body {
        ($p:ident, $n:ident, $extra:ident) => {{
            // SAFETY: the caller guarantees 64 readable bytes at `p`;
            // unaligned loads have no alignment requirement.
            let v: [__m128i; 4] = unsafe {
                [
                    _mm_loadu_si128($p as *const __m128i),
                    _mm_loadu_si128($p.add(16) as *const __m128i),
                    _mm_loadu_si128($p.add(32) as *const __m128i),
                    _mm_loadu_si128($p.add(48) as *const __m128i),
                ]
            };
            macro_rules! eq {
                ($b:expr) => {{
                    let needle = _mm_set1_epi8($b as i8);
                    let mut m = 0u64;
                    for (k, x) in v.iter().enumerate() {
                        let bits = _mm_movemask_epi8(_mm_cmpeq_epi8(*x, needle)) as u32 as u64;
                        m |= bits << (16 * k);
                    }
                    m
                }};
            }
            let mut m = Masks {
                delim: eq!($n.bytes[0]),
                quote: eq!($n.bytes[1]) & $n.quote_on,
                nl_a: eq!($n.bytes[2]),
                nl_b: eq!($n.bytes[3]),
                ..Masks::default()
            };
            if $extra {
                m.esc = eq!($n.bytes[4]);
                m.space = eq!($n.bytes[5]);
            }
            m
        }};
    }

    macro_rules! avx2_body {
        ($p:ident, $n:ident, $extra:ident) => {{
            // SAFETY: the caller guarantees 64 readable bytes at `p`;
            // unaligned loads have no alignment requirement.
            let (lo, hi) = unsafe {
                (
                    _mm256_loadu_si256($p as *const __m256i),
                    _mm256_loadu_si256($p.add(32) as *const __m256i),
                )
            };
            macro_rules! eq {
                ($b:expr) => {{
                    let needle = _mm256_set1_epi8($b as i8);
                    let a = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, needle)) as u32 as u64;
                    let b = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, needle)) as u32 as u64;
                    a | (b << 32)
                }};
            }
            let mut m = Masks {
                delim: eq!($n.bytes[0]),
                quote: eq!($n.bytes[1]) & $n.quote_on,
                nl_a: eq!($n.bytes[2]),
                nl_b: eq!($n.bytes[3]),
                ..Masks::default()
            };
            if $extra {
                m.esc = eq!($n.bytes[4]);
                m.space = eq!($n.bytes[5]);
            }
            m
        }};
    }

    /// AVX2 compares, carry-less-multiply prefix XOR.
    ///
    /// # Safety
    ///
    /// `p` must be valid for reads of 64 bytes; the CPU must support AVX2
    /// and `pclmulqdq`.
    #[target_feature(enable = "avx2,pclmulqdq")]
    pub(super) unsafe fn avx2_clmul<const EXTRA: bool>(p: *const u8, n: &Needles) -> Masks {
        let mut m = avx2_body!(p, n, EXTRA);
        // SAFETY: this function is only called on CPUs with pclmulqdq.
        m.quote_prefix = unsafe { prefix_xor_clmul(m.quote) };
        m
    }

    /// SSE2 compares, carry-less-multiply prefix XOR.
    ///
    /// # Safety
    ///
    /// `p` must be valid for reads of 64 bytes; the CPU must support
    /// `pclmulqdq`.
    #[target_feature(enable = "sse2,pclmulqdq")]
    pub(super) unsafe fn sse2_clmul<const EXTRA: bool>(p: *const u8, n: &Needles) -> Masks {
        let mut m = sse2_body!(p, n, EXTRA);
        // SAFETY: this function is only called on CPUs with pclmulqdq.
        m.quote_prefix = unsafe { prefix_xor_clmul(m.quote) };
        m
    }

    /// SSE2 compares (part of x86-64), portable prefix XOR.
    ///
    /// # Safety
    ///
    /// `p` must be valid for reads of 64 bytes.
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn sse2<const EXTRA: bool>(p: *const u8, n: &Needles) -> Masks {
        let mut m = sse2_body!(p, n, EXTRA);
        m.quote_prefix = prefix_xor(m.quote);
        m
    }
}

/// The chosen kernels (without and with the escape/space needles) and the
/// name of the instruction set.
#[derive(Clone, Copy)]
struct Kernels {
    plain: Kernel,
    extra: Kernel,
    name: &'static str,
}

/// Detects the CPU once and caches the kernels to use.
fn kernels() -> Kernels {
    static CHOSEN: OnceLock<Kernels> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            let clmul = std::arch::is_x86_feature_detected!("pclmulqdq");
            if clmul && std::arch::is_x86_feature_detected!("avx2") {
                return Kernels {
                    plain: x86::avx2_clmul::<false>,
                    extra: x86::avx2_clmul::<true>,
                    name: "avx2+pclmulqdq",
                };
            }
            if clmul {
                return Kernels {
                    plain: x86::sse2_clmul::<false>,
                    extra: x86::sse2_clmul::<true>,
                    name: "sse2+pclmulqdq",
                };
            }
            Kernels { plain: x86::sse2::<false>, extra: x86::sse2::<true>, name: "sse2" }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Kernels {
                plain: kernel_portable::<false>,
                extra: kernel_portable::<true>,
                name: "portable",
            }
        }
    })
}

/// The instruction set the block scanner uses on this CPU: one of
/// `avx2+pclmulqdq`, `sse2+pclmulqdq`, `sse2` or `portable`.
///
/// ```
/// let isa = fastcsv::scan::simd_level();
/// assert!(["avx2+pclmulqdq", "sse2+pclmulqdq", "sse2", "portable"].contains(&isa));
/// ```
pub fn simd_level() -> &'static str {
    kernels().name
}

/// What the previous block leaves to the next one.
#[derive(Clone, Copy, Debug)]
struct Carry {
    /// All ones when the previous block ended inside quotes.
    inq: u64,
    /// 1 when the previous byte starts a field (structural, or record
    /// start).
    field_start: u64,
    /// 1 when the previous byte was a closing quote.
    close: u64,
    /// 1 when the previous byte was a CR that counts as a line end.
    cr: u64,
}

impl Carry {
    /// The carry at the first byte of a record.
    fn record_start() -> Carry {
        Carry { inq: 0, field_start: 1, close: 0, cr: 0 }
    }
}

/// The structural view of one block.
#[derive(Clone, Copy, Debug)]
struct Block {
    /// Delimiters outside quotes.
    delim: u64,
    /// Terminators outside quotes.
    nl: u64,
    /// Bytes that need the state machine (see the module docs).
    bad: u64,
    /// The first quote of each doubled pair.
    pairs: u64,
    /// Bytes that end a line for Python's `line_num`.
    lines: u64,
}

/// Bits `0..k` (k <= 64).
#[inline]
fn below(k: usize) -> u64 {
    if k >= 64 {
        !0
    } else {
        (1u64 << k) - 1
    }
}

/// Bits `k..64` (k <= 64).
#[inline]
fn from(k: usize) -> u64 {
    !below(k)
}

/// The classifier for one dialect.
#[derive(Clone)]
pub(crate) struct Classifier {
    kernel: Kernel,
    needles: Needles,
    any_term: bool,
    double_quote: bool,
    quote: Option<u8>,
    term: u8,
    delim: u8,
    has_esc: bool,
    skip_space: bool,
}

impl Classifier {
    /// A classifier with the best kernel for this CPU.
    pub(crate) fn new(d: &Dialect) -> Classifier {
        let k = kernels();
        Classifier::with_kernels(d, k.plain, k.extra)
    }

    fn with_kernels(d: &Dialect, plain: Kernel, extra: Kernel) -> Classifier {
        let (any_term, term) = match d.terminator {
            Terminator::Any => (true, b'\n'),
            Terminator::Byte(t) => (false, t),
        };
        let (a, b) = if any_term { (b'\r', b'\n') } else { (term, term) };
        let needs_extra = d.escape.is_some() || d.skip_initial_space;
        Classifier {
            kernel: if needs_extra { extra } else { plain },
            needles: Needles {
                bytes: [
                    d.delimiter,
                    d.quote.unwrap_or(d.delimiter),
                    a,
                    b,
                    d.escape.unwrap_or(d.delimiter),
                    b' ',
                ],
                quote_on: if d.quote.is_some() { !0 } else { 0 },
            },
            any_term,
            double_quote: d.double_quote,
            quote: d.quote,
            term,
            delim: d.delimiter,
            has_esc: d.escape.is_some(),
            skip_space: d.skip_initial_space,
        }
    }

    #[inline]
    fn is_nl(&self, c: u8) -> bool {
        if self.any_term {
            c == b'\r' || c == b'\n'
        } else {
            c == self.term
        }
    }

    /// Raw masks of `input[base..]`'s first 64 bytes (zero-padded when
    /// fewer remain), and the mask of bits that are real bytes.
    #[inline]
    fn masks(&self, input: &[u8], base: usize) -> (Masks, u64) {
        let rest = &input[base..];
        if rest.len() >= 64 {
            // SAFETY: `rest` has at least 64 bytes, and the kernel was
            // chosen by `kernels()` for this CPU.
            (unsafe { (self.kernel)(rest.as_ptr(), &self.needles) }, !0)
        } else {
            let mut pad = [0u8; 64];
            pad[..rest.len()].copy_from_slice(rest);
            // SAFETY: `pad` is 64 bytes, and the kernel was chosen by
            // `kernels()` for this CPU.
            let m = unsafe { (self.kernel)(pad.as_ptr(), &self.needles) };
            (m, below(rest.len()))
        }
    }

    /// Classifies the block at `input[base..]` and updates the carry.
    #[inline]
    fn block(&self, input: &[u8], base: usize, carry: &mut Carry) -> Block {
        let (m, valid) = self.masks(input, base);
        // Bits past the end of the input are garbage; bits below them only
        // depend on bits below them, so masking at the end is enough.
        let x = m.quote_prefix ^ carry.inq;
        let q = m.quote & valid;
        let nl = (m.nl_a | m.nl_b) & valid;
        let d = m.delim & valid;
        let open = q & x;
        let close = q & !x;
        let sd = d & !x;
        let snl = nl & !x;
        let structural = sd | snl;
        let field_start = (structural << 1) | carry.field_start;
        // The byte after the block, for quotes in bit 63.
        let (next_struct, next_quote) = match input.get(base + 64) {
            Some(&c) => {
                (u64::from(c == self.delim || self.is_nl(c)), u64::from(Some(c) == self.quote))
            }
            None => (0, 0),
        };
        let before_struct = (structural >> 1) | (next_struct << 63);
        let mut bad;
        let pairs;
        if self.double_quote {
            let before_open = (open >> 1) | (next_quote << 63);
            let after_close = (close << 1) | carry.close;
            pairs = close & before_open;
            bad = (open & !field_start & !after_close) | (close & !before_struct & !before_open);
        } else {
            pairs = 0;
            bad = (open & !field_start) | (close & !before_struct);
        }
        if self.has_esc {
            bad |= m.esc & valid;
        }
        if self.skip_space {
            bad |= m.space & field_start & valid;
        }
        let lines = if self.any_term {
            let cr = m.nl_a & valid;
            let lf = m.nl_b & valid;
            cr | (lf & !((cr << 1) | carry.cr))
        } else {
            nl
        };
        *carry = Carry {
            inq: ((x as i64) >> 63) as u64,
            field_start: structural >> 63,
            close: close >> 63,
            cr: if self.any_term { (m.nl_a & valid) >> 63 } else { 0 },
        };
        Block { delim: sd, nl: snl, bad, pairs, lines }
    }
}

impl Scanner {
    /// Scans the whole record starting at `input[r]` with the block
    /// classifier. Called in `StartRecord` (after `skip_lf`), with `out`
    /// freshly cleared. Returns the offset past the record's terminator, or
    /// `None`, having changed nothing, when the record is not regular (see
    /// the module docs) and must go through the state machine.
    pub(super) fn block_record(
        &mut self,
        input: &[u8],
        r: usize,
        out: &mut Fields,
    ) -> Option<usize> {
        let cls = self.block.as_ref()?;
        let c0 = input[r];
        if cls.is_nl(c0) || i32::from(c0) == self.comment {
            return None;
        }
        let cls = cls.clone();
        let mut carry = Carry::record_start();
        let mut base = r;
        let mut fstart = r;
        let mut dq_pending = false;
        let mut lines = 0u64;
        while base < input.len() {
            let b = cls.block(input, base, &mut carry);
            let ok = below(b.bad.trailing_zeros() as usize);
            let mut ends = (b.delim | b.nl) & ok;
            while ends != 0 {
                let k = ends.trailing_zeros() as usize;
                let p = base + k;
                let lo = fstart.saturating_sub(base);
                let dq = dq_pending || b.pairs & below(k) & from(lo) != 0;
                if !self.block_field(input, fstart, p, dq, out) {
                    self.block_abandon(out);
                    return None;
                }
                if b.nl >> k & 1 != 0 {
                    let mut i = p + 1;
                    if input[p] == b'\r' && cls.any_term {
                        match input.get(i) {
                            Some(b'\n') => i += 1,
                            Some(_) => {}
                            None => {
                                // The LF may come in the next input.
                                self.block_abandon(out);
                                return None;
                            }
                        }
                    }
                    self.rec_off = r;
                    self.rec_line = self.lines + 1;
                    self.lines += lines + u64::from((b.lines & below(k + 1)).count_ones());
                    self.state = State::StartRecord;
                    self.row_ready = true;
                    return Some(i);
                }
                fstart = p + 1;
                dq_pending = false;
                ends &= ends - 1;
            }
            if b.bad != 0 {
                break;
            }
            lines += u64::from(b.lines.count_ones());
            dq_pending |= b.pairs & from(fstart.saturating_sub(base)) != 0;
            base += 64;
        }
        self.block_abandon(out);
        None
    }

    /// Undoes a partial `block_record`: the record starts afresh.
    fn block_abandon(&mut self, out: &mut Fields) {
        out.clear();
        self.fstart = 0;
        self.fend = 0;
        self.sstart = 0;
        self.owned = false;
        self.quoted = false;
        self.numeric = false;
    }

    /// Saves the regular field `input[a..e]` through the state machine's
    /// own `add`/`save`, in the same steps (so the same spans and flags).
    /// `dq` says the field holds doubled quotes. False when the field is
    /// over the size limit.
    #[inline]
    fn block_field(
        &mut self,
        input: &[u8],
        a: usize,
        e: usize,
        dq: bool,
        out: &mut Fields,
    ) -> bool {
        if a < e && i32::from(input[a]) == self.quote {
            // `"content"`: the closing quote is at e - 1.
            self.quoted = true;
            let end = e - 1;
            // `seg` starts the part being added; `search` is where the next
            // quote is looked for.
            let mut seg = a + 1;
            if dq {
                let q = self.quote as u8;
                // The state machine adds up to the first quote of a pair,
                // then goes on from the second quote (data) to the next.
                // In a regular field every inner quote is such a pair.
                let mut search = seg;
                while let Some(k) = memchr::memchr(q, &input[search..end]) {
                    let j = search + k;
                    if !self.add(input, seg, j, out) {
                        return false;
                    }
                    seg = j + 1;
                    search = j + 2;
                }
            }
            if !self.add(input, seg, end, out) {
                return false;
            }
        } else {
            self.numeric = a < e;
            if !self.add(input, a, e, out) {
                return false;
            }
        }
        self.save(input, out);
        true
    }

    /// Counts the regular records from `input[*pos..]` without building
    /// fields, as [`Reader::count_rows`](crate::Reader::count_rows) needs:
    /// `lines()`, `record_offset()` and `record_line()` are updated as if
    /// each had been scanned. Stops, with `*pos` at its first byte, at the
    /// first record that needs the state machine, the first record whose
    /// field count differs from `*expect` (when `check`), or the
    /// unterminated end of the input. `*expect` is set from the first
    /// record when `check` and unset.
    pub(crate) fn block_count(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        expect: &mut Option<usize>,
        check: bool,
    ) -> u64 {
        let Some(cls) = self.block.clone().filter(|_| self.block_on) else {
            return 0;
        };
        if self.state != State::StartRecord || self.skip_lf {
            return 0;
        }
        let n = input.len();
        let mut r = *pos;
        let comment = self.comment;
        let starts_ok = |r: usize| r < n && !cls.is_nl(input[r]) && i32::from(input[r]) != comment;
        if !starts_ok(r) {
            return 0;
        }
        let mut count = 0u64;
        let mut carry = Carry::record_start();
        let mut base = r;
        // Delimiters and line ends of the current record in earlier blocks.
        let (mut delims, mut lines) = (0usize, 0u64);
        'blocks: while base < n {
            let b = cls.block(input, base, &mut carry);
            let ok = below(b.bad.trailing_zeros() as usize);
            let mut lo = r.saturating_sub(base); // local start of the current record
            let mut ends = b.nl & ok & from(lo);
            while ends != 0 {
                let k = ends.trailing_zeros() as usize;
                let p = base + k;
                let mut end = p + 1;
                if input[p] == b'\r' && cls.any_term {
                    match input.get(end) {
                        Some(b'\n') => end += 1,
                        Some(_) => {}
                        None => break 'blocks,
                    }
                }
                // A field can only be over the limit in a record longer
                // than the limit: that record goes to the state machine.
                if (end - r) as u64 > self.limit {
                    break 'blocks;
                }
                let fields = delims + (b.delim & below(k) & from(lo)).count_ones() as usize + 1;
                if check {
                    match *expect {
                        None => *expect = Some(fields),
                        Some(e) if e != fields => break 'blocks,
                        Some(_) => {}
                    }
                }
                self.rec_off = r;
                self.rec_line = self.lines + 1;
                self.lines += lines + u64::from((b.lines & below(k + 1) & from(lo)).count_ones());
                count += 1;
                r = end;
                (delims, lines) = (0, 0);
                if !starts_ok(r) {
                    break 'blocks;
                }
                lo = r - base;
                ends &= from(lo);
            }
            if b.bad != 0 {
                break;
            }
            if lo < 64 {
                delims += (b.delim & from(lo)).count_ones() as usize;
                lines += u64::from((b.lines & from(lo)).count_ones());
            }
            base += 64;
        }
        *pos = r;
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel available on this CPU agrees with the portable one.
    #[test]
    fn kernels_agree_with_portable() {
        let mut all: Vec<(&str, Kernel, Kernel)> = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            all.push(("sse2", x86::sse2::<false>, x86::sse2::<true>));
            if std::arch::is_x86_feature_detected!("pclmulqdq") {
                all.push(("sse2_clmul", x86::sse2_clmul::<false>, x86::sse2_clmul::<true>));
                if std::arch::is_x86_feature_detected!("avx2") {
                    all.push(("avx2_clmul", x86::avx2_clmul::<false>, x86::avx2_clmul::<true>));
                }
            }
        }
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
            };
            // SAFETY: `block` is 64 bytes; portable needs no CPU features.
            let want = unsafe { kernel_portable::<true>(block.as_ptr(), &needles) };
            // SAFETY: as above.
            let want_plain = unsafe { kernel_portable::<false>(block.as_ptr(), &needles) };
            for (name, plain, extra) in &all {
                // SAFETY: `block` is 64 bytes and each kernel was pushed
                // only after detecting its CPU features.
                let got = unsafe { extra(block.as_ptr(), &needles) };
                assert_eq!(got, want, "{name} with extra needles");
                // SAFETY: as above.
                let got = unsafe { plain(block.as_ptr(), &needles) };
                assert_eq!(got, want_plain, "{name}");
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
        let b = c.block(input, 0, &mut carry);
        assert_eq!(b.delim, 1 << 1 | 1 << 7);
        // The bad quote opens a false quoted region: nothing after it is
        // structural, which is why records with bad bits fall back.
        assert_eq!(b.nl, 1 << 14);
        assert_eq!(b.pairs, 1 << 10);
        assert_eq!(b.bad, 1 << 16);
        assert_eq!(b.lines, 1 << 14 | 1 << 18);
    }
}
