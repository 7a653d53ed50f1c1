//! Unit tests of the scanner against the grammar.

use super::grammar::{self, State};
use super::*;

/// The dialects of `grammar::test_dialects` that line-fed mode takes:
/// it is Python's, whose lines end at CR, LF or CRLF (in `EatCrnl` it
/// accepts CR and LF, not another terminator byte, which stream mode
/// ends records at before that state is reached).
fn line_fed_dialects() -> Vec<Dialect> {
    let ds = grammar::test_dialects();
    ds.into_iter().filter(|d| d.terminator == Terminator::Any).collect()
}

/// The fast scanner (line-fed, so that line end bytes inside a line
/// are bytes like any other, as in `grammar::next`) moves between the
/// grammar's states as `grammar::next` says: from every state a line
/// can reach, on every byte, for many dialects.
#[test]
fn scanner_follows_the_grammar() {
    let mut checked = 0;
    for d in line_fed_dialects() {
        for (s, prefix) in grammar::prefixes(&d) {
            let mut sc = Scanner::line_fed(&d);
            let (mut f, mut pos) = (Fields::default(), 0);
            assert!(matches!(sc.scan(&prefix, &mut pos, &mut f), Scan::NeedInput));
            assert_eq!(sc.state, s, "{d:?} {prefix:?}");
            for c in 0..=255u8 {
                let mut sc = Scanner::line_fed(&d);
                let (mut f, mut pos) = (Fields::default(), 0);
                let mut input = prefix.clone();
                input.push(c);
                let got = match sc.scan(&input, &mut pos, &mut f) {
                    Scan::NeedInput => Some(sc.state),
                    Scan::Error(..) => None,
                    other => panic!("{d:?} {prefix:?} {c}: {other:?}"),
                };
                assert_eq!(got, grammar::next(&d, s, c), "{d:?} {s:?} {prefix:?} {c}");
                checked += 1;
            }
        }
    }
    assert!(checked > 12 * 5 * 256);
}

/// What the end of a line does in the fast scanner (line-fed) is what
/// `grammar::line_end` says.
#[test]
fn scanner_line_ends_follow_the_grammar() {
    for d in line_fed_dialects() {
        for (s, prefix) in grammar::prefixes(&d) {
            let mut sc = Scanner::line_fed(&d);
            let (mut f, mut pos) = (Fields::default(), 0);
            sc.scan(&prefix, &mut pos, &mut f);
            let r = sc.end_line(&mut f);
            let (n, record) = grammar::line_end(s);
            let ended = matches!(r, Scan::Row);
            let empty = prefix.iter().all(|&c| grammar::is_terminator(&d, c));
            if !(empty || s == State::Comment) {
                assert_eq!(ended, record, "{d:?} {s:?} {prefix:?}");
            }
            if !ended {
                assert_eq!(sc.state, n, "{d:?} {s:?} {prefix:?}");
            }
        }
    }
}
