//! [`CsvRewrite`]: records re-written as CSV in another style (delimiter,
//! quoting, line ends), copied from the input's bytes wherever the output
//! is the same bytes, field by field elsewhere.

use std::ops::Range;

use fastcsv::{Batch, Selection};

use super::super::fmt::{CsvStyle, Terminator};
use super::{append, replace, Needles};

/// What a [`CsvRewrite`] reads batches with, and so what it copies of
/// the records the block scanner took besides those without quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// `Selection::all`: their fields, parsed (written field by field).
    Fields,
    /// `Selection::raw`: their fields' input bytes, quotes included.
    Raw,
    /// `Selection::csv`: their CSV with the input's delimiter, as pieces.
    Pieces,
}

/// Writes the records of batches as CSV in a [`CsvStyle`]: the bytes
/// [`CsvOut`](super::fmt::CsvOut) writes for their fields, copied from the
/// input wherever they already are those bytes.
///
/// - A record without a quote byte ([`fastcsv::SelectedRow::raw`]) is its
///   fields joined by the input's delimiter, and none holds CR or LF (the
///   input's records end at either): it is copied, with the delimiter
///   replaced by the output's, unless a field holds one of the few other
///   bytes the output quotes (the output's delimiter, quote, escape or
///   terminator byte where they are not the input's): one test of the
///   record, or none when there are no such bytes. Runs of them ending in
///   LF are copied (and tested) whole.
/// - Where the output quotes with `"` and doubles quotes, as the input
///   does, a record the block scanner took is plain RFC 4180
///   ([`fastcsv::SelectedRow::raw_fields`]): a quoted field needing quotes
///   is already written as the output writes it; one that does not loses
///   its quotes; an unquoted one is quoted if it holds a byte the output
///   quotes. With the input's delimiter too, its CSV comes as pieces
///   (`Selection::csv`, when the caller asks for them).
/// - Any other record is written field by field.
///
/// Records are never empty lines (the commands skip those), so a record
/// without quotes is never one empty field, which the output writes `""`.
pub struct CsvRewrite {
    style: CsvStyle,
    source: Source,
    /// The style's quoting table, for records written field by field.
    needs: [bool; 256],
    /// The same bytes, with `Source::Raw` and `Source::Pieces` (at most
    /// four then).
    needles: Needles,
    /// Records without quotes are copied (the input's records end at CR
    /// or LF, and not every field is quoted).
    plain: bool,
    /// The bytes such a record's fields can hold that the output quotes;
    /// `None` when there are none.
    plain_needles: Option<Needles>,
    /// The input's delimiter.
    in_delim: u8,
    /// A copied record's bytes change: the delimiter is not the input's.
    translate: bool,
    /// A run of records without quotes ending in LF is copied whole: the
    /// output's terminator is one byte.
    runs: Option<u8>,
}

/// The set of up to four `bytes`; `None` for none.
fn byte_set(bytes: &[u8]) -> Option<Needles> {
    let (&first, _) = bytes.split_first()?;
    assert!(bytes.len() <= 4, "at most four bytes in a set");
    let mut set = [first; 4];
    set[..bytes.len()].copy_from_slice(bytes);
    Some(Needles::new(set, false))
}

impl CsvRewrite {
    /// A writer of records read with dialect `d` as CSV in `style`.
    /// `pieces`: records may come as CSV pieces (`Selection::csv`), which
    /// is the cheapest to read when nothing but the whole record is needed
    /// (not for [`CsvRewrite::append_fixed`], which needs the fields).
    pub fn new(d: &fastcsv::Dialect, style: CsvStyle, pieces: bool) -> CsvRewrite {
        let needs = style.needs();
        let set: Vec<u8> = (0..=255u8).filter(|&b| needs[usize::from(b)]).collect();
        let any_term = d.terminator() == fastcsv::Terminator::Any;
        let in_delim = d.delimiter();
        // A field without quotes holds no delimiter, quote, CR or LF.
        let field_bytes: Vec<u8> = set
            .iter()
            .copied()
            .filter(|&b| b != in_delim && Some(b) != d.quote() && b != b'\r' && b != b'\n')
            .collect();
        // The output's delimiter, quote, escape and terminator at most.
        let plain_needles = byte_set(&field_bytes);
        let requote = any_term
            && d.quote() == Some(b'"')
            && style.quote == b'"'
            && style.escape.is_none()
            && !style.always
            && set.len() <= 4;
        let lf_or_crlf = matches!(style.terminator, Terminator::Crlf | Terminator::Byte(b'\n'));
        let source = if requote && pieces && style.delimiter == in_delim && lf_or_crlf {
            Source::Pieces
        } else if requote {
            Source::Raw
        } else {
            Source::Fields
        };
        let needles = if requote {
            byte_set(&set).expect("the delimiter at least")
        } else {
            Needles::new([style.delimiter; 4], false)
        };
        CsvRewrite {
            style,
            source,
            needs,
            needles,
            plain: any_term && !style.always,
            plain_needles,
            in_delim,
            translate: style.delimiter != in_delim,
            runs: match style.terminator {
                Terminator::Byte(b) => Some(b),
                Terminator::Crlf => None,
            },
        }
    }

    /// The selection to read batches with.
    pub fn selection(&self) -> Selection {
        match self.source {
            Source::Fields => Selection::all(),
            Source::Raw => Selection::raw(),
            Source::Pieces => Selection::csv(),
        }
    }

    /// Appends records `range` of `b`, each with its terminator.
    pub fn append(&self, b: &Batch<'_>, range: Range<usize>, out: &mut Vec<u8>) {
        let mut i = range.start;
        while i < range.end {
            let (n, run) = self.plain_run(b, i, range.end, None);
            if n > 0 {
                self.copy_run(run, out);
                i += n;
                continue;
            }
            // Runs of quoted records too, to the batch's end.
            if self.source == Source::Pieces && range.end == b.len() && self.runs == Some(b'\n') {
                let (n, run) = b.csv_run(i);
                if n > 0 {
                    run.append_to(out);
                    i += n;
                    continue;
                }
            }
            let wrote = self.line(&b.row(i), out);
            self.end(wrote, out);
            i += 1;
        }
    }

    /// Appends records `range` of `b` made `width` fields long, padded
    /// with empty fields or cut, each with its terminator (`fixlengths`).
    /// Not for a writer made with `pieces` (panics).
    pub fn append_fixed(
        &self,
        b: &Batch<'_>,
        range: Range<usize>,
        width: usize,
        out: &mut Vec<u8>,
    ) {
        assert!(self.source != Source::Pieces, "cutting records needs their fields");
        let mut i = range.start;
        while i < range.end {
            let (n, run) = self.plain_run(b, i, range.end, Some(width));
            if n > 0 {
                self.copy_run(run, out);
                i += n;
                continue;
            }
            let row = b.row(i);
            i += 1;
            let fields = row.field_count();
            let wrote = if fields > width {
                self.cut(&row, width, out)
            } else {
                let wrote = self.line(&row, out);
                for _ in fields..width {
                    out.push(self.style.delimiter);
                }
                wrote || fields < width
            };
            self.end(wrote, out);
        }
    }

    /// The first `width` fields of `row` (which has more).
    fn cut(&self, row: &fastcsv::SelectedRow<'_>, width: usize, out: &mut Vec<u8>) -> bool {
        if self.plain {
            if let Some(raw) = row.raw() {
                let end =
                    memchr::memchr_iter(self.in_delim, raw).nth(width - 1).unwrap_or(raw.len());
                return self.plain_line(&raw[..end], out);
            }
        }
        if self.source == Source::Raw {
            if let Some(f) = row.raw_fields() {
                return self.requoted(&f, width, usize::MAX, out);
            }
        }
        self.fields(row.iter().take(width), out)
    }

    /// Appends `row` without its terminator: whether it wrote a byte.
    #[inline]
    pub fn line(&self, row: &fastcsv::SelectedRow<'_>, out: &mut Vec<u8>) -> bool {
        if self.plain {
            if let Some(raw) = row.raw() {
                return self.plain_line(raw, out);
            }
        }
        match self.source {
            Source::Pieces => {
                if let Some(p) = row.csv_pieces() {
                    let n = out.len();
                    p.append_to(out);
                    return out.len() > n;
                }
            }
            Source::Raw => {
                if let Some(f) = row.raw_fields() {
                    return self.requoted(&f, usize::MAX, usize::MAX, out);
                }
            }
            Source::Fields => {}
        }
        self.fields(row.iter(), out)
    }

    /// Appends `row` without its field `skip` (nor its terminator):
    /// whether it wrote a byte. Not for a writer made with `pieces`
    /// (panics).
    pub fn line_without(
        &self,
        row: &fastcsv::SelectedRow<'_>,
        skip: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        assert!(self.source != Source::Pieces, "leaving a field out needs the fields");
        let d = self.in_delim;
        if self.plain {
            if let Some(raw) = row.raw() {
                if self.plain_needles.is_some_and(|n| n.any(raw)) {
                    let fields = raw.split(|&b| b == d).enumerate();
                    return self.fields(fields.filter(|&(i, _)| i != skip).map(|(_, f)| f), out);
                }
                // The field's bounds: after the delimiter before it, up to
                // the one after it (or the end).
                let mut delims = memchr::memchr_iter(d, raw);
                let a = if skip == 0 { Some(0) } else { delims.nth(skip - 1).map(|p| p + 1) };
                let Some(a) = a else {
                    // No such field: the whole record.
                    return self.plain_line(raw, out);
                };
                let e = delims.next();
                let n = out.len();
                // The fields before it without the delimiter that ends
                // them, then the delimiter after it and the fields after;
                // or, for the first field, the fields after it.
                if a > 0 {
                    self.plain_line(&raw[..a - 1], out);
                }
                if let Some(e) = e {
                    self.plain_line(&raw[e + usize::from(a == 0)..], out);
                }
                return out.len() > n;
            }
        }
        if self.source == Source::Raw {
            if let Some(f) = row.raw_fields() {
                return self.requoted(&f, usize::MAX, skip, out);
            }
        }
        let fields = row.iter().enumerate();
        self.fields(fields.filter(|&(i, _)| i != skip).map(|(_, f)| f), out)
    }

    /// Appends a record without quotes given as its bytes `raw` (its
    /// fields joined by the input's delimiter).
    #[inline]
    fn plain_line(&self, raw: &[u8], out: &mut Vec<u8>) -> bool {
        if self.plain_needles.is_some_and(|n| n.any(raw)) {
            return self.fields(raw.split(|&b| b == self.in_delim), out);
        }
        let start = out.len();
        append(out, raw);
        if self.translate {
            replace(&mut out[start..], [self.in_delim, self.in_delim], [self.style.delimiter; 2]);
        }
        !raw.is_empty()
    }

    /// Appends the first `take` fields of a record but field `skip`, from
    /// their input bytes (with `Source::Raw`): whether it wrote a byte.
    #[inline]
    fn requoted(
        &self,
        f: &fastcsv::RawFields<'_>,
        take: usize,
        skip: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        if take == usize::MAX && skip == usize::MAX {
            // Every field: no counting nor skipping in the loop.
            return self.requoted_ranges(f.record(), f.clone(), out);
        }
        let fields = f.clone().take(take).enumerate().filter(|&(i, _)| i != skip);
        self.requoted_ranges(f.record(), fields.map(|(_, r)| r), out)
    }

    /// Appends the fields `fields` (ranges of `rec`) of a record as
    /// [`CsvRewrite::requoted`] does: whether it wrote a byte.
    #[inline(always)]
    fn requoted_ranges(
        &self,
        rec: &[u8],
        fields: impl Iterator<Item = Range<usize>>,
        out: &mut Vec<u8>,
    ) -> bool {
        let start = out.len();
        for (i, r) in fields.enumerate() {
            if i > 0 {
                out.push(self.style.delimiter);
            }
            let raw = &rec[r];
            let written = match raw {
                // Quoted: its inner quotes are doubled already.
                [b'"', inner @ .., _] if !self.needles.any(inner) => inner,
                [b'"', ..] => raw,
                // Unquoted, holding a byte the output quotes (none of them
                // a quote).
                _ if self.needles.any(raw) => {
                    out.push(b'"');
                    append(out, raw);
                    out.push(b'"');
                    continue;
                }
                _ => raw,
            };
            append(out, written);
        }
        out.len() > start
    }

    /// Appends fields as `CsvOut` writes them: whether it wrote a byte.
    fn fields<'a>(&self, fields: impl Iterator<Item = &'a [u8]>, out: &mut Vec<u8>) -> bool {
        let mut wrote = false;
        for (i, f) in fields.enumerate() {
            if i > 0 {
                out.push(self.style.delimiter);
                wrote = true;
            }
            wrote |= self.field(f, out);
        }
        wrote
    }

    /// Appends one field as `CsvOut` writes it: whether it wrote a byte.
    fn field(&self, f: &[u8], out: &mut Vec<u8>) -> bool {
        if !self.style.always && !f.iter().any(|&b| self.needs[usize::from(b)]) {
            append(out, f);
            return !f.is_empty();
        }
        let q = self.style.quote;
        out.push(q);
        // As `CsvOut::field`: the escape before a quote and before itself.
        let e = self.style.escape.unwrap_or(q);
        let mut rest = f;
        while let Some(i) = memchr::memchr2(q, e, rest) {
            out.extend_from_slice(&rest[..i]);
            out.extend_from_slice(&[e, rest[i]]);
            rest = &rest[i + 1..];
        }
        out.extend_from_slice(rest);
        out.push(q);
        true
    }

    /// Ends a record: `""` first when it wrote no byte (an empty line is no
    /// record), then the terminator.
    #[inline]
    pub fn end(&self, wrote: bool, out: &mut Vec<u8>) {
        if !wrote {
            out.extend_from_slice(&[self.style.quote; 2]);
        }
        match self.style.terminator {
            Terminator::Crlf => out.extend_from_slice(b"\r\n"),
            Terminator::Byte(t) => out.push(t),
        }
    }

    /// From record `i` on (below `end`), the records without quotes whose
    /// lines end in a single LF, one after the other in the input (and of
    /// `width` fields, when given), that can be copied as one: how many,
    /// and their lines. 0 when record `i` is not one, a field of the run
    /// needs quotes, or the output's terminator is CR LF.
    #[inline]
    fn plain_run<'r>(
        &self,
        b: &Batch<'r>,
        i: usize,
        end: usize,
        width: Option<usize>,
    ) -> (usize, &'r [u8]) {
        if !self.plain || self.runs.is_none() {
            return (0, &[]);
        }
        let (all, run) = b.raw_run(i);
        let mut n = all.min(end - i);
        if let Some(w) = width {
            n = (i..i + n).position(|k| b.row(k).field_count() != w).unwrap_or(n);
        }
        if n == 0 {
            return (0, &[]);
        }
        let run = if n == all {
            run
        } else {
            // Up to the end of the last record's line, a slice of `run`.
            let last = b.row(i + n - 1).raw_line().expect("a record of the run");
            &run[..last.as_ptr() as usize + last.len() - run.as_ptr() as usize]
        };
        if self.plain_needles.is_some_and(|s| s.any(run)) {
            return (0, &[]);
        }
        (n, run)
    }

    /// Appends a run from [`CsvRewrite::plain_run`].
    #[inline]
    fn copy_run(&self, run: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(run);
        let t = self.runs.unwrap_or(b'\n');
        if self.translate || t != b'\n' {
            replace(&mut out[start..], [self.in_delim, b'\n'], [self.style.delimiter, t]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::fmt::CsvOut;
    use super::*;

    /// The styles the verbs write: `fmt` (another delimiter, CR LF, the
    /// ASCII separators, every field quoted, an escape), `input`, `split`
    /// and `partition` (the input's style, or tabs).
    fn styles() -> Vec<CsvStyle> {
        let d = CsvStyle::default();
        vec![
            d,
            CsvStyle { delimiter: b';', ..d },
            CsvStyle { delimiter: b'\t', ..d },
            CsvStyle { terminator: Terminator::Crlf, ..d },
            CsvStyle { delimiter: b';', terminator: Terminator::Crlf, ..d },
            CsvStyle { delimiter: 0x1f, terminator: Terminator::Byte(0x1e), ..d },
            CsvStyle { always: true, ..d },
            CsvStyle { escape: Some(b'\\'), ..d },
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Records of fields holding delimiters (the input's and the
        /// output's), doubled quotes, CR and LF, empty fields, quoted or
        /// not, some longer than a 64-byte word, with LF, CR LF or CR line
        /// ends and the last one with or without: every way `CsvRewrite`
        /// writes them (`append` with and without pieces, `append_fixed`
        /// padding and cutting, `line_without`) writes the bytes `CsvOut`
        /// writes for the parsed fields.
        #[test]
        fn rewrites_equal_written_fields(
            rows in proptest::collection::vec(
                proptest::collection::vec(
                    (proptest::bool::ANY, "[a,\"\r\n é;\t]{0,10}", 1..12usize), 1..6),
                1..30),
            ends in proptest::collection::vec(0..3usize, 30),
            last_end in proptest::bool::ANY,
            width in 1..6usize,
            skip in 0..6usize,
        ) {
            let mut text = String::from("h\n");
            for (k, (row, end)) in rows.iter().zip(&ends).enumerate() {
                let fields: Vec<String> = row.iter().map(|(quote, v, times)| {
                    let v = if *times > 8 { v.repeat(*times * 3) } else { v.clone() };
                    if *quote || v.contains([',', '"', '\r', '\n']) || v.is_empty() {
                        format!("\"{}\"", v.replace('"', "\"\""))
                    } else {
                        v
                    }
                }).collect();
                text.push_str(&fields.join(","));
                if k + 1 < rows.len() || last_end {
                    text.push_str(["\n", "\r\n", "\r"][*end]);
                }
            }
            let d = fastcsv::Dialect::builder().flexible(true).build().unwrap();
            let read = |sel: &Selection, each: &mut dyn FnMut(&Batch<'_>)| {
                let mut rdr = fastcsv::Reader::builder().dialect(d.clone()).from_slice(text.as_bytes());
                let mut sel = sel.clone();
                while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
                    each(&b);
                }
            };
            // The parsed fields.
            let mut parsed: Vec<Vec<Vec<u8>>> = Vec::new();
            read(&Selection::all(), &mut |b| {
                parsed.extend(b.iter().map(|r| r.iter().map(<[u8]>::to_vec).collect()));
            });
            for style in styles() {
                let oracle = |rows: &mut dyn Iterator<Item = Vec<&[u8]>>| {
                    let mut w = CsvOut::new(Vec::new(), style);
                    for r in rows {
                        w.record(r).unwrap();
                    }
                    w.into_inner()
                };
                let want = oracle(&mut parsed.iter().map(|r| r.iter().map(|f| &f[..]).collect()));
                let want_fixed = oracle(&mut parsed.iter().map(|r| {
                    let mut r: Vec<&[u8]> = r.iter().map(|f| &f[..]).collect();
                    r.resize(width, b"");
                    r
                }));
                let want_without = oracle(&mut parsed.iter().map(|r| {
                    r.iter().enumerate().filter(|&(i, _)| i != skip).map(|(_, f)| &f[..]).collect()
                }));
                for pieces in [false, true] {
                    let w = CsvRewrite::new(&d, style, pieces);
                    let mut got = Vec::new();
                    read(&w.selection(), &mut |b| w.append(b, 0..b.len(), &mut got));
                    proptest::prop_assert_eq!(
                        String::from_utf8_lossy(&got), String::from_utf8_lossy(&want),
                        "append, {:?}, pieces {}", style, pieces);
                    // One record at a time (no runs).
                    let mut got = Vec::new();
                    read(&w.selection(), &mut |b| (0..b.len()).for_each(|i| w.append(b, i..i + 1, &mut got)));
                    proptest::prop_assert_eq!(&got, &want, "append one by one, {:?}", style);
                    // `fixlengths` and `partition --drop` write without
                    // `always` (their padding is bare delimiters).
                    if pieces || style.always {
                        continue;
                    }
                    let mut got = Vec::new();
                    read(&w.selection(), &mut |b| w.append_fixed(b, 0..b.len(), width, &mut got));
                    proptest::prop_assert_eq!(&got, &want_fixed, "append_fixed, {:?}", style);
                    let mut got = Vec::new();
                    read(&w.selection(), &mut |b| {
                        for row in b.iter() {
                            let wrote = w.line_without(&row, skip, &mut got);
                            w.end(wrote, &mut got);
                        }
                    });
                    proptest::prop_assert_eq!(&got, &want_without, "line_without, {:?}", style);
                }
            }
        }
    }
}
