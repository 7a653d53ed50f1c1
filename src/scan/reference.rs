//! The reference engine: a plain, byte-at-a-time transcription of CPython's
//! `_csv.c` reader, fed line by line exactly as `csv.reader(open(path,
//! newline=''))` feeds it. It is slow and obviously correct, and exists so
//! that tests, property tests and the fuzzer can check the fast
//! [`Scanner`](super::Scanner) against it.
//!
//! ```
//! use fastcsv::scan::reference::parse;
//! let out = parse(&fastcsv::Dialect::default(), b"a,\"b\"\"c\"\n\n");
//! assert_eq!(out.rows[0].fields, vec![b"a".to_vec(), b"b\"c".to_vec()]);
//! assert!(out.rows[1].fields.is_empty());
//! assert!(out.error.is_none());
//! ```

use crate::dialect::{Dialect, Terminator};
use crate::filter::FilterTable;

use super::grammar::State;

/// One record as the reference engine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefRow {
    /// Field contents.
    pub fields: Vec<Vec<u8>>,
    /// Lines consumed when the record was returned (Python's `line_num`).
    pub line: u64,
}

/// Everything the reference engine produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefOutput {
    /// The records before any error.
    pub rows: Vec<RefRow>,
    /// The error that stopped parsing: its message and `line_num` then.
    pub error: Option<(String, u64)>,
}

/// Splits like Python's universal newlines with `newline=''`: each line
/// keeps its terminator.
fn lines<'a>(d: &Dialect, input: &'a [u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < input.len() {
        let c = input[i];
        let end = match d.terminator {
            Terminator::Any if c == b'\r' => {
                if input.get(i + 1) == Some(&b'\n') {
                    Some(i + 2)
                } else {
                    Some(i + 1)
                }
            }
            Terminator::Any if c == b'\n' => Some(i + 1),
            Terminator::Byte(t) if c == t => Some(i + 1),
            _ => None,
        };
        match end {
            Some(e) => {
                out.push(&input[start..e]);
                start = e;
                i = e;
            }
            None => i += 1,
        }
    }
    if start < input.len() {
        out.push(&input[start..]);
    }
    out
}

struct P<'d> {
    d: &'d Dialect,
    state: State,
    field: Vec<u8>,
    fields: Vec<Vec<u8>>,
    quoted: bool,
    filter: FilterTable,
}

impl P<'_> {
    fn nl(&self, c: u8) -> bool {
        match self.d.terminator {
            Terminator::Any => c == b'\r' || c == b'\n',
            Terminator::Byte(t) => c == t,
        }
    }
    fn add(&mut self, c: u8) -> Result<(), String> {
        self.field.push(c);
        if let Some(lim) = self.d.field_limit {
            let chars = self.field.iter().filter(|&&b| (b as i8) >= -0x40).count();
            if chars as u64 > lim {
                return Err(format!("field larger than field limit ({lim})"));
            }
        }
        Ok(())
    }
    fn save(&mut self) {
        let mut f = std::mem::take(&mut self.field);
        if self.filter.active() {
            let mut g = Vec::new();
            self.filter.copy_filtered(&f, &mut g);
            f = g;
        }
        if self.d.trim && !self.quoted {
            let s = f.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(f.len());
            let e = f.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(s, |e| e + 1);
            f = f[s..e.max(s)].to_vec();
        }
        self.fields.push(f);
        self.quoted = false;
    }
    fn is(c: u8, o: Option<u8>) -> bool {
        o == Some(c)
    }
    fn ch(&mut self, c: u8) -> Result<(), String> {
        let d = self.d;
        match self.state {
            State::StartRecord => {
                if self.nl(c) {
                    self.state = State::EatCrnl;
                    return Ok(());
                }
                if Self::is(c, d.comment) {
                    self.state = State::Comment;
                    return Ok(());
                }
                self.state = State::StartField;
                self.ch(c)
            }
            State::Comment => Ok(()),
            State::StartField => {
                if self.nl(c) {
                    self.save();
                    self.state = State::EatCrnl;
                } else if Self::is(c, d.quote) {
                    self.quoted = true;
                    self.state = State::InQuotedField;
                } else if Self::is(c, d.escape) {
                    self.state = State::EscapedChar;
                } else if c == b' ' && d.skip_initial_space {
                } else if c == d.delimiter {
                    self.save();
                } else {
                    self.add(c)?;
                    self.state = State::InField;
                }
                Ok(())
            }
            State::EscapedChar => {
                self.add(c)?;
                self.state = if c == b'\r' || c == b'\n' || self.nl(c) {
                    State::AfterEscapedCrnl
                } else {
                    State::InField
                };
                Ok(())
            }
            State::AfterEscapedCrnl | State::InField => {
                if self.nl(c) {
                    self.save();
                    self.state = State::EatCrnl;
                } else if Self::is(c, d.escape) {
                    self.state = State::EscapedChar;
                } else if c == d.delimiter {
                    self.save();
                    self.state = State::StartField;
                } else {
                    // ordinary byte: CPython leaves the state as it is
                    self.add(c)?;
                }
                Ok(())
            }
            State::InQuotedField => {
                if Self::is(c, d.escape) {
                    self.state = State::EscapeInQuotedField;
                } else if Self::is(c, d.quote) {
                    self.state =
                        if d.double_quote { State::QuoteInQuotedField } else { State::InField };
                } else {
                    self.add(c)?;
                }
                Ok(())
            }
            State::EscapeInQuotedField => {
                self.add(c)?;
                self.state = State::InQuotedField;
                Ok(())
            }
            State::QuoteInQuotedField => {
                if Self::is(c, d.quote) {
                    self.add(c)?;
                    self.state = State::InQuotedField;
                } else if c == d.delimiter {
                    self.save();
                    self.state = State::StartField;
                } else if self.nl(c) {
                    self.save();
                    self.state = State::EatCrnl;
                } else if !d.strict {
                    self.add(c)?;
                    self.state = State::InField;
                } else {
                    return Err(format!(
                        "'{}' expected after '{}'",
                        char::from(d.delimiter),
                        char::from(d.quote.unwrap_or(b'"'))
                    ));
                }
                Ok(())
            }
            State::EatCrnl => {
                if self.nl(c) {
                    Ok(())
                } else {
                    Err("new-line character seen in unquoted field - \
                         do you need to open the file with newline=''?"
                        .into())
                }
            }
        }
    }
    fn eol(&mut self) -> Result<(), String> {
        match self.state {
            State::StartRecord | State::EatCrnl | State::Comment => self.state = State::StartRecord,
            State::StartField | State::InField | State::QuoteInQuotedField => {
                self.save();
                self.state = State::StartRecord;
            }
            State::EscapedChar => {
                self.add(b'\n')?;
                self.state = State::InField;
            }
            State::EscapeInQuotedField => {
                self.add(b'\n')?;
                self.state = State::InQuotedField;
            }
            State::AfterEscapedCrnl | State::InQuotedField => {}
        }
        Ok(())
    }
}

/// Parses `input` with the scan-level settings of `d` (delimiter, quote,
/// escape, doubled quotes, initial spaces, strict, comment, terminator,
/// empty lines, trim, filter, field limit). Header, BOM and record-length
/// checks belong to the reader and are not applied here.
///
/// ```
/// let d = fastcsv::Dialect::builder().strict(true).build().unwrap();
/// let out = fastcsv::scan::reference::parse(&d, b"a\n\"b\"c\n");
/// assert_eq!(out.rows.len(), 1);
/// assert_eq!(out.error, Some(("',' expected after '\"'".to_string(), 2)));
/// ```
pub fn parse(d: &Dialect, input: &[u8]) -> RefOutput {
    let mut p = P {
        d,
        state: State::StartRecord,
        field: Vec::new(),
        fields: Vec::new(),
        quoted: false,
        filter: FilterTable::new(d.filter),
    };
    let mut rows = Vec::new();
    let mut line_num = 0u64;
    let mut it = lines(d, input).into_iter();
    loop {
        // One Python `__next__`: read lines until a record is complete.
        let mut complete = false;
        for line in it.by_ref() {
            line_num += 1;
            for &c in line {
                if let Err(e) = p.ch(c) {
                    return RefOutput { rows, error: Some((e, line_num)) };
                }
            }
            let was_comment = p.state == State::Comment;
            if let Err(e) = p.eol() {
                return RefOutput { rows, error: Some((e, line_num)) };
            }
            if p.state == State::StartRecord {
                if was_comment || (p.fields.is_empty() && d.skip_empty_lines) {
                    p.fields.clear();
                    continue;
                }
                rows.push(RefRow { fields: std::mem::take(&mut p.fields), line: line_num });
                complete = true;
                break;
            }
        }
        if complete {
            continue;
        }
        // End of input, possibly in the middle of a record.
        if p.state != State::StartRecord && (!p.field.is_empty() || p.state == State::InQuotedField)
        {
            if d.strict {
                return RefOutput {
                    rows,
                    error: Some(("unexpected end of data".into(), line_num)),
                };
            }
            p.save();
            rows.push(RefRow { fields: std::mem::take(&mut p.fields), line: line_num });
        }
        return RefOutput { rows, error: None };
    }
}

#[cfg(test)]
mod tests {
    use super::super::grammar::{self, State};
    use super::*;

    /// `P::ch` moves between the grammar's states as `grammar::next` says,
    /// on every state × byte, for many dialects (an error where it says
    /// `None`).
    #[test]
    fn reference_follows_the_grammar() {
        for d in grammar::test_dialects() {
            for s in State::ALL {
                for c in 0..=255u8 {
                    let mut p = P {
                        d: &d,
                        state: s,
                        field: Vec::new(),
                        fields: Vec::new(),
                        quoted: false,
                        filter: FilterTable::new(d.filter),
                    };
                    let got = p.ch(c).ok().map(|()| p.state);
                    assert_eq!(got, grammar::next(&d, s, c), "{d:?} {s:?} {c}");
                }
            }
        }
    }

    /// `P::eol` moves as `grammar::line_end` says.
    #[test]
    fn reference_line_ends_follow_the_grammar() {
        for d in grammar::test_dialects() {
            for s in State::ALL {
                let mut p = P {
                    d: &d,
                    state: s,
                    field: Vec::new(),
                    fields: Vec::new(),
                    quoted: false,
                    filter: FilterTable::new(d.filter),
                };
                p.eol().unwrap();
                let (n, record) = grammar::line_end(s);
                assert_eq!(p.state, n, "{s:?}");
                // A record ends with a field saved (an empty line aside).
                if s != State::EatCrnl {
                    assert_eq!(p.fields.len(), usize::from(record), "{s:?}");
                }
            }
        }
    }
}
