//! `fastcsv search`: the records where a regular expression matches a
//! field, on every CPU for a mapped file (through
//! [`Input::par_each_batch`], like `select` and `cat`).
//!
//! Calling the regex on each field costs more than the match itself for
//! short fields, so a record is first looked at whole (see [`Prefilter`]):
//! every match starts with one of the regex's prefix literals (when it has
//! a finite set of them, none empty), and a field's value lies in the
//! record's input bytes for the records the block scanner takes, so
//! records where no literal occurs cannot match. Such a regex, if it has
//! no assertions (`^`, `$`, `\b`), matches a field exactly when it matches
//! that field's bytes in the record, so a record is then matched once,
//! whole: no match, no field matches; a match within one field (searching
//! every field), a field matches. (Without literals, fields are matched one
//! by one: the regex passes over a field shorter than its shortest match
//! at once, and would run over every byte of a whole record.)

use std::io::Write;

use fastcsv::{Batch, RowBuf, SelectedRow, Selection};
use memchr::memmem;
use regex::bytes::Regex;

use super::args::SearchArgs;
use super::commands::{drain, fields, whole_records_writer};
use super::output::RecordWriter;
use super::{path_arg, write_failure, Failure, Input};

/// `fastcsv search`: the header row, then the records where the regex
/// matches one of the searched fields (none, with `--invert-match`).
pub fn search(a: &SearchArgs) -> Result<(), Failure> {
    let re = regex::bytes::RegexBuilder::new(&a.pattern)
        .case_insensitive(a.ignore_case)
        .build()
        .map_err(|e| Failure::Usage(format!("invalid regular expression: {e}")))?;
    let mut input = Input::open(path_arg(a.file.as_deref()), &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    // The columns searched, resolved against the header row, or without
    // one against the first record (kept to be searched too).
    let mut first: Option<RowBuf> = None;
    let cols = match (&a.select, &header) {
        (None, _) => None,
        (Some(sel), Some(h)) => {
            let names = fields(h);
            Some(sel.resolve(Some(&names), names.len()).map_err(Failure::Usage)?)
        }
        (Some(sel), None) => match input.reader.read_row()? {
            Some(row) => {
                let c = sel.resolve(None, row.len()).map_err(Failure::Usage)?;
                first = Some(row.to_owned());
                Some(c)
            }
            None => Some(Vec::new()),
        },
    };
    let mut w = whole_records_writer(&name, header.as_ref(), &a.output, a.file.as_deref())?;
    let (cols, invert) = (cols.as_deref(), a.invert_match);
    if let Some(row) = &first {
        let f: Vec<&[u8]> = row.iter().collect();
        if field_matches(&re, cols, f.len(), |i| f[i], None) != invert {
            w.write(f.iter().copied())
                .map_err(|e| write_failure(&name, e, row.position(), |f| f))?;
        }
    }
    let mut out = w.into_inner()?;
    let d = input.reader.dialect();
    let search = Search {
        re: &re,
        pre: Prefilter::new(&a.pattern, a.ignore_case, d.quote()),
        cols,
        invert,
        delimiter: d.delimiter(),
        name: &name,
    };
    let format = a.output.to;
    let delimiter = a.output.delimiter().map_err(Failure::Usage)?;
    let keys = header.as_ref().map(fields);
    let make = || RecordWriter::new(Vec::new(), format, delimiter, keys.as_deref());
    input.par_each_batch(
        &Selection::all(),
        &a.par.parallel(),
        make,
        |batch, w| search.batch(batch, w),
        |w| drain(w, &mut out),
    )?;
    Ok(out.flush()?)
}

/// What a worker needs to search a batch.
struct Search<'a> {
    re: &'a Regex,
    pre: Option<Prefilter>,
    /// The columns searched (`None`: all).
    cols: Option<&'a [usize]>,
    invert: bool,
    /// The input's delimiter (records copied whole need the output's).
    delimiter: u8,
    /// The input's name, for messages.
    name: &'a str,
}

impl Search<'_> {
    /// Writes the batch's records that are wanted to `w`.
    fn batch(&self, batch: &Batch<'_>, w: &mut RecordWriter<Vec<u8>>) -> Result<(), Failure> {
        for row in batch.iter() {
            if self.matches(&row) == self.invert {
                continue;
            }
            let fail = |e| write_failure(self.name, e, row.position(), |f| f);
            if let Some(raw) = row.raw() {
                if w.write_plain(raw, self.delimiter)
                    || w.write_raw(raw, self.delimiter).map_err(fail)?
                {
                    continue;
                }
            }
            w.write(row.iter()).map_err(fail)?;
        }
        Ok(())
    }

    /// Whether the regex matches one of the searched fields of `row`.
    ///
    /// With columns, the literals are looked for in those fields alone
    /// (the whole record cannot tell that a searched field matches, and a
    /// literal in a field searched or not is found in most records where
    /// it is frequent): a field without one does not match, and one with
    /// one matches when the literals are the regex's whole language.
    fn matches(&self, row: &SelectedRow<'_>) -> bool {
        match (&self.pre, self.cols) {
            (Some(pre), None) => {
                if let Some(known) = pre.decide(row, self.re, true, self.delimiter) {
                    return known;
                }
                row.iter().any(|f| self.re.is_match(f))
            }
            (Some(pre), Some(_)) => {
                field_matches(self.re, self.cols, row.len(), |i| row.get(i), Some(pre))
            }
            (None, None) => row.iter().any(|f| self.re.is_match(f)),
            (None, Some(_)) => field_matches(self.re, self.cols, row.len(), |i| row.get(i), None),
        }
    }
}

/// Whether `re` matches one of a record's `n` fields (`get(i)`), or of the
/// columns `cols` (a missing one is empty); with `pre`, each field is
/// first looked at for its literals ([`Prefilter::field`]).
fn field_matches<'a>(
    re: &Regex,
    cols: Option<&[usize]>,
    n: usize,
    get: impl Fn(usize) -> &'a [u8],
    pre: Option<&Prefilter>,
) -> bool {
    let one = |f: &[u8]| match pre.map(|p| p.field(f)) {
        Some(Some(known)) => known,
        _ => re.is_match(f),
    };
    match cols {
        None => (0..n).any(|i| one(get(i))),
        Some(c) => c.iter().any(|&i| one(if i < n { get(i) } else { &[] })),
    }
}

/// The literals every match of a regex starts with, looked for in a
/// record's input bytes before its fields are matched one by one.
///
/// Sound because a field's parsed value is a run of the record's bytes
/// (so a literal in the value is in the record) for the records the block
/// scanner takes: a record without a quote byte is its fields joined by
/// delimiters ([`SelectedRow::raw`]); one with quotes is plain RFC 4180
/// ([`SelectedRow::raw_fields`]), a quoted value lying between its quotes
/// with only its quote bytes doubled, so that a literal without the quote
/// byte is in the record when it is in the value. Other records (parsed
/// by the state machine: escapes, text after a closing quote) are always
/// matched field by field.
///
/// A regex without assertions matches a run of bytes whatever surrounds
/// it, so it matches a field whose value is a run of the record's bytes
/// (a record without quote bytes, or one the block scanner took without a
/// doubled quote) exactly when it has a match within that run: no match in
/// the record, no field matches; a leftmost match holding no delimiter
/// (nor quote) lies within a field's value.
struct Prefilter {
    /// The literals every match starts with.
    find: Find,
    /// None of the literals holds the dialect's quote byte: the records
    /// with quotes can be ruled out too.
    quoted_ok: bool,
    /// The regex has no assertions: it can be run on a whole record.
    whole: bool,
    /// The literals are the regex's whole language, and it has no
    /// assertions: it matches a field exactly when one of them occurs in
    /// it.
    exact: bool,
    /// The dialect's quote byte.
    quote: Option<u8>,
    /// A finder of the quote byte doubled, built once (building one per
    /// record cost more than the search).
    doubled: Option<memmem::Finder<'static>>,
}

/// How the literals are looked for.
enum Find {
    /// One literal (boxed: the finder is large, the regex small).
    One(Box<memmem::Finder<'static>>),
    /// Several, as one regex of their alternation.
    Many(Regex),
}

impl Prefilter {
    /// The prefilter of `pattern` (with `ignore_case`): its literals and
    /// whether it has assertions; `None` when its matches do not all
    /// start with one of a small set of non-empty literals (`x*`, `\w+`,
    /// `^`), or where looking for them would not pay.
    fn new(pattern: &str, ignore_case: bool, quote: Option<u8>) -> Option<Prefilter> {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .case_insensitive(ignore_case)
            .build()
            .parse(pattern)
            .ok()?;
        // Without literals, matching the fields one by one costs less:
        // the regex skips a field shorter than its shortest match at once,
        // and on a whole record it must run its automaton over every byte.
        let (find, quoted_ok, exact) = Prefilter::literals(&hir, quote)?;
        let whole = hir.properties().look_set().is_empty();
        let doubled = quote.map(|q| memmem::Finder::new(&[q, q]).into_owned());
        Some(Prefilter { find, quoted_ok, whole, exact: exact && whole, quote, doubled })
    }

    /// Whether the regex matches field `f`, when its literals tell: not
    /// without one of them, and (for `exact` literals) with one; `None`
    /// when the regex must be run.
    #[inline]
    fn field(&self, f: &[u8]) -> Option<bool> {
        let found = match &self.find {
            Find::One(finder) => finder.find(f).is_some(),
            Find::Many(re) => re.is_match(f),
        };
        match (found, self.exact) {
            (false, _) => Some(false),
            (true, true) => Some(true),
            (true, false) => None,
        }
    }

    /// How to look for the prefix literals of `hir`, whether none holds
    /// `quote`, and whether they are exact (the regex's whole language).
    fn literals(hir: &regex_syntax::hir::Hir, quote: Option<u8>) -> Option<(Find, bool, bool)> {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let mut seq = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
        // Shortens or drops literals that would find too much to help.
        seq.optimize_for_prefix_by_preference();
        let lits = seq.literals()?;
        if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
            return None;
        }
        // Several one-byte literals (`[0-9]...`) are in nearly every
        // record: looking for them, then running the regex over the whole
        // record, costs more than matching the fields.
        if lits.len() > 1 && lits.iter().any(|l| l.as_bytes().len() < 2) {
            return None;
        }
        let quoted_ok = quote.is_none_or(|q| lits.iter().all(|l| !l.as_bytes().contains(&q)));
        let exact = lits.iter().all(|l| l.is_exact());
        let find = if let [one] = lits {
            Find::One(Box::new(memmem::Finder::new(one.as_bytes()).into_owned()))
        } else {
            // Each byte spelt `\xHH` with Unicode off: any bytes, exactly.
            let alt: Vec<String> = lits
                .iter()
                .map(|l| l.as_bytes().iter().map(|b| format!("\\x{b:02x}")).collect())
                .collect();
            Find::Many(Regex::new(&format!("(?-u:{})", alt.join("|"))).ok()?)
        };
        Some((find, quoted_ok, exact))
    }

    /// Whether `re` matches a searched field of `row` (`every`: all of
    /// them are searched), when the record's bytes tell (see
    /// [`Prefilter`]); `None` when its fields must be matched one by one.
    #[inline]
    fn decide(&self, row: &SelectedRow<'_>, re: &Regex, every: bool, delim: u8) -> Option<bool> {
        let plain = row.raw();
        let bytes = match plain {
            Some(raw) => Some(raw),
            None if self.quoted_ok => row.raw_fields().map(|f| f.record()),
            None => None,
        };
        if let Some(b) = bytes {
            let found = match &self.find {
                Find::One(f) => f.find(b).is_some(),
                Find::Many(re) => re.is_match(b),
            };
            if !found {
                return Some(false);
            }
        }
        if !self.whole {
            return None;
        }
        // The record's bytes, when each field's value is a run of them:
        // a record without quotes, or one the block scanner took whose
        // quoted values hold no quote (no doubled quote in the record).
        let (bytes, quote) = match (plain, self.quote) {
            (Some(raw), _) => (raw, None),
            (None, Some(q)) => {
                let rec = row.raw_fields()?.record();
                if self.doubled.as_ref().is_some_and(|f| f.find(rec).is_some()) {
                    return None;
                }
                (rec, Some(q))
            }
            (None, None) => return None,
        };
        match re.find(bytes) {
            None => Some(false),
            Some(m) => {
                let m = m.as_bytes();
                let within = !m.contains(&delim) && quote.is_none_or(|q| !m.contains(&q));
                (every && within).then_some(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether none of the literals holds a quote, and whether the regex
    /// runs on whole records.
    fn pre(p: &str, ci: bool) -> Option<(bool, bool)> {
        Prefilter::new(p, ci, Some(b'"')).map(|p| (p.quoted_ok, p.whole))
    }

    #[test]
    fn prefilter_for_literal_prefixes_and_regexes_without_assertions() {
        assert_eq!(pre("Paris", false), Some((true, true)));
        assert_eq!(pre("Paris|Oslo", false), Some((true, true)));
        assert_eq!(pre("^fr", true), Some((true, false)));
        assert_eq!(pre("a\"b", false), Some((false, true)));
        assert_eq!(pre("x*", false), None);
        assert_eq!(pre(".", false), None);
        assert_eq!(pre("[0-9]{5}\\.[0-9]9", false), None);
        assert_eq!(pre("9", false), Some((true, true)));
        assert_eq!(pre("\\bx?", false), None);
        assert_eq!(pre("^", false), None);
        assert_eq!(pre("(", false), None);
        let exact = |p: &str, ci: bool| Prefilter::new(p, ci, Some(b'"')).map(|p| p.exact);
        assert_eq!(exact("Paris", false), Some(true));
        assert_eq!(exact("Paris|Oslo", false), Some(true));
        assert_eq!(exact("9", false), Some(true));
        assert_eq!(exact("Paris$", false), Some(false));
        assert_eq!(exact("\\bParis", false), Some(false));
        assert_eq!(exact("Par.s", false), Some(false));
    }

    /// What the prefilter decides is what matching the fields gives, for
    /// plain records, quoted ones and ones the state machine parses:
    /// searching every field, and one column (which it only rules out).
    #[test]
    fn prefilter_keeps_every_match() {
        let data = "h1,h2\nParis,x\n\"a,Paris\",y\n\"P\"\"aris\",z\n\"Par\"is,w\nno,pe\n\
                    \"Oslo\"\"\",q\nOSLO,r\n\"\"\"Paris\",s\nx,\"s,\"\n\"\",\"\"\n\"x\ny\",\"\"\n";
        // Many times over, so that the block scanner takes most records.
        let data = data.repeat(50);
        let d = fastcsv::Dialect::builder().strict(false).headers(false).build().unwrap();
        let (mut quoted, mut exact) = (0, 0);
        let patterns = [
            ("a|ab", false),
            ("P(aris)?", false),
            ("Paris$", false),
            ("\\bOslo", false),
            ("Paris", false),
            ("Paris|Oslo", false),
            ("oslo", true),
            ("s\"", false),
            ("^P", false),
            ("s,", false),
            ("[ab],?x", false),
            ("s$", false),
            ("a,P", false),
            ("s\",y", false),
            ("x\ny", false),
            ("\"\"", false),
        ];
        for (p, ci) in patterns {
            let re = regex::bytes::RegexBuilder::new(p).case_insensitive(ci).build().unwrap();
            let pre = Prefilter::new(p, ci, Some(b'"')).unwrap();
            let mut rdr = fastcsv::Reader::builder().dialect(d.clone()).from_slice(data.as_bytes());
            let mut sel = Selection::all();
            while let Some(b) = rdr.read_batch(&mut sel).unwrap() {
                for row in b.iter() {
                    quoted += usize::from(row.raw().is_none() && row.raw_fields().is_some());
                    let every = row.iter().any(|f| re.is_match(f));
                    let first = re.is_match(row.get(0));
                    let at = row.position();
                    let d = pre.decide(&row, &re, true, b',');
                    assert!(d.is_none_or(|k| k == every), "{p}: {at:?} {d:?}");
                    let d = pre.decide(&row, &re, false, b',');
                    assert!(d.is_none_or(|k| !k) && (!first || d.is_none()), "{p}: {at:?}");
                    // Field by field (searching columns).
                    for f in row.iter() {
                        let d = pre.field(f);
                        assert!(d.is_none_or(|k| k == re.is_match(f)), "{p}: {at:?} {f:?}");
                        exact += usize::from(d == Some(true));
                    }
                }
            }
        }
        assert!(quoted > 1000, "{quoted}");
        assert!(exact > 500, "{exact}");
    }
}
