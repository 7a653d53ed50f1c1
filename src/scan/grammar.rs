//! The CSV grammar, written once: the states of CPython's `csv` reader
//! (`Modules/_csv.c`, `parse_process_char`) and where each byte and each
//! end of line takes them, without the actions (saving fields, counting
//! lines) that go with them.
//!
//! Three engines follow it (see the checklist in [`super`]):
//!
//! * the fast [`Scanner`](super::Scanner) (hand-written, with memchr
//!   jumps), tested against [`next`] on every state × byte for many
//!   dialects (`scan::tests::scanner_follows_the_grammar`);
//! * the [`reference`](super::reference) engine, which uses this
//!   [`State`] and is tested against [`next`] the same way
//!   (`reference::tests::reference_follows_the_grammar`);
//! * the [`split`](crate::split) automaton, whose transition table is
//!   built from [`next`] and [`line_end`] (plus two states of its own).

use crate::dialect::{Dialect, Terminator};

/// A state of the reader. The discriminants are those of the splitter's
/// automaton, which adds two states of its own (8 and 11) and writes
/// states into [`Summary`](crate::split::Summary) bytes: do not renumber.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum State {
    StartRecord = 0,
    StartField = 1,
    EscapedChar = 2,
    InField = 3,
    InQuotedField = 4,
    EscapeInQuotedField = 5,
    QuoteInQuotedField = 6,
    EatCrnl = 7,
    AfterEscapedCrnl = 9,
    Comment = 10,
}

impl State {
    /// Every state.
    pub(crate) const ALL: [State; 10] = [
        State::StartRecord,
        State::StartField,
        State::EscapedChar,
        State::InField,
        State::InQuotedField,
        State::EscapeInQuotedField,
        State::QuoteInQuotedField,
        State::EatCrnl,
        State::AfterEscapedCrnl,
        State::Comment,
    ];

    /// The state numbered `n` (see the type's documentation).
    pub(crate) fn from_u8(n: u8) -> Option<State> {
        State::ALL.into_iter().find(|&s| s as u8 == n)
    }
}

/// True when `c` is a line terminator of `d`.
#[inline]
pub(crate) fn is_terminator(d: &Dialect, c: u8) -> bool {
    match d.terminator {
        Terminator::Any => c == b'\r' || c == b'\n',
        Terminator::Byte(t) => c == t,
    }
}

/// Where byte `c` takes state `s`; `None` for a syntax error (text after
/// a closing quote in a strict dialect; anything but a line end after a
/// line end inside a line: Python's "new-line character seen in unquoted
/// field"). In `StartRecord`, a byte that neither ends the line nor starts
/// a comment does what it does in `StartField`.
pub(crate) fn next(d: &Dialect, s: State, c: u8) -> Option<State> {
    let nl = is_terminator(d, c);
    let is = |o: Option<u8>| o == Some(c);
    Some(match s {
        State::StartRecord => {
            if nl {
                State::EatCrnl
            } else if is(d.comment) {
                State::Comment
            } else {
                return next(d, State::StartField, c);
            }
        }
        State::StartField => {
            if nl {
                State::EatCrnl
            } else if is(d.quote) {
                State::InQuotedField
            } else if is(d.escape) {
                State::EscapedChar
            } else if (c == b' ' && d.skip_initial_space) || c == d.delimiter {
                State::StartField
            } else {
                State::InField
            }
        }
        State::EscapedChar => {
            if c == b'\r' || c == b'\n' || nl {
                State::AfterEscapedCrnl
            } else {
                State::InField
            }
        }
        State::InField | State::AfterEscapedCrnl => {
            if nl {
                State::EatCrnl
            } else if is(d.escape) {
                State::EscapedChar
            } else if c == d.delimiter {
                State::StartField
            } else {
                // An ordinary byte: CPython leaves the state as it is.
                s
            }
        }
        State::InQuotedField => {
            if is(d.escape) {
                State::EscapeInQuotedField
            } else if is(d.quote) {
                if d.double_quote {
                    State::QuoteInQuotedField
                } else {
                    State::InField
                }
            } else {
                State::InQuotedField
            }
        }
        State::EscapeInQuotedField => State::InQuotedField,
        State::QuoteInQuotedField => {
            if is(d.quote) {
                State::InQuotedField
            } else if c == d.delimiter {
                State::StartField
            } else if nl {
                State::EatCrnl
            } else if !d.strict {
                State::InField
            } else {
                return None;
            }
        }
        State::EatCrnl => {
            if nl {
                State::EatCrnl
            } else {
                return None;
            }
        }
        State::Comment => State::Comment,
    })
}

/// Where the end of a line takes state `s` (Python's reader after the
/// last byte of a line); `true` when a record ends there (an empty line,
/// `StartRecord` or `EatCrnl` with no field, is the caller's to skip or
/// keep).
pub(crate) fn line_end(s: State) -> (State, bool) {
    match s {
        State::EatCrnl | State::StartField | State::InField | State::QuoteInQuotedField => {
            (State::StartRecord, true)
        }
        State::StartRecord | State::Comment => (State::StartRecord, false),
        State::EscapedChar => (State::InField, false),
        State::EscapeInQuotedField => (State::InQuotedField, false),
        // The line end is data: the record goes on.
        State::InQuotedField | State::AfterEscapedCrnl => (s, false),
    }
}

/// Dialects that exercise every branch of [`next`], for the tests that
/// check each engine against it.
#[cfg(test)]
pub(crate) fn test_dialects() -> Vec<Dialect> {
    let b = Dialect::builder;
    let mut out = vec![Dialect::default()];
    let more = [
        b().escape(Some(b'\\')).build(),
        b().escape(Some(b'\\')).double_quote(false).build(),
        b().double_quote(false).build(),
        b().strict(true).build(),
        b().strict(true).escape(Some(b'\\')).comment(Some(b'#')).build(),
        b().skip_initial_space(true).build(),
        b().skip_initial_space(true).delimiter(b' ').build(),
        b().comment(Some(b'#')).skip_empty_lines(false).build(),
        b().quote(None).build(),
        b().quote(None).escape(Some(b'\\')).build(),
        b().delimiter(b'\t').quote(Some(b'\'')).build(),
        b().terminator(Terminator::Byte(b';')).build(),
        b().terminator(Terminator::Byte(b'\n')).escape(Some(b'\\')).strict(true).build(),
        b().terminator(Terminator::Byte(b'|')).comment(Some(b'#')).skip_initial_space(true).build(),
    ];
    out.extend(more.into_iter().map(|d| d.expect("a valid test dialect")));
    out
}

/// For each state reachable from `StartRecord` within one line, a
/// shortest line prefix that leads there (by [`next`]), for the tests that
/// put each engine in each state.
#[cfg(test)]
pub(crate) fn prefixes(d: &Dialect) -> Vec<(State, Vec<u8>)> {
    let mut bytes = vec![b'a', b' ', b'\r', b'\n', d.delimiter];
    bytes.extend([d.quote, d.escape, d.comment].into_iter().flatten());
    if let Terminator::Byte(t) = d.terminator {
        bytes.push(t);
    }
    let mut out: Vec<(State, Vec<u8>)> = vec![(State::StartRecord, Vec::new())];
    let mut k = 0;
    while k < out.len() {
        let (s, p) = out[k].clone();
        for &c in &bytes {
            if let Some(n) = next(d, s, c) {
                if out.iter().all(|(x, _)| *x != n) {
                    let mut q = p.clone();
                    q.push(c);
                    out.push((n, q));
                }
            }
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_their_numbers() {
        for s in State::ALL {
            assert_eq!(State::from_u8(s as u8), Some(s));
        }
        assert_eq!(State::from_u8(8), None);
        assert_eq!(State::from_u8(11), None);
    }

    #[test]
    fn every_test_dialect_builds_and_every_state_is_reached() {
        let ds = test_dialects();
        assert_eq!(ds.len(), 15);
        let mut seen: Vec<State> = ds.iter().flat_map(prefixes).map(|(s, _)| s).collect();
        seen.sort_by_key(|&s| s as u8);
        seen.dedup();
        assert_eq!(seen, State::ALL);
    }
}
