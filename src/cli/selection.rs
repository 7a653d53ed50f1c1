//! Column selections for `fastcsv select`: `name,3,5-7,!notes`.
//!
//! A selection is parsed from the command line before any input is read
//! (syntax errors are usage errors), then resolved against the header row
//! (or the first record's width with `--no-headers`) into 0-based indices.
//!
//! A list that starts with `!` selects, in header order, every column that
//! the rest of the list does not name, as xsv does (`!a,b` leaves out `a`
//! and `b`). Otherwise items apply in order: a plain item appends its
//! columns, and a `!item` removes every occurrence of its columns.
//!
//! An unquoted item that is not all digits is first looked up as a whole
//! header name, then split at each `-` in turn as a range whose ends are
//! names or indices (so `first-name` works as a name and `a-c` as a
//! range). When no split works, an index out of range (or 0) in a split
//! whose names are all found is the error (`1-10` of five columns), not a
//! missing name. Quoted names (`"a,b"`, `"2024"`) are always names. A name
//! that is not in the header but reads `name[N]` is the Nth (from 0) of the
//! columns named `name`, as in xsv.

use std::fmt;

/// One end of a range, or a single column.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    /// 1-based index.
    Index(usize),
    /// A header name.
    Name(String),
    /// An unquoted word, resolved against the header: index, name, range.
    Raw(String),
    /// The Nth (from 0) of the columns with this name: a quoted name
    /// followed by `[N]`, as `"a,b"[1]`.
    Nth(String, usize),
    /// The first or last column (an open range end).
    Open,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    One(End),
    Range(End, End),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Item {
    negated: bool,
    target: Target,
}

/// A parsed, not yet resolved, column selection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    items: Vec<Item>,
    text: String,
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A piece of an item: quoted text or a run of unquoted text.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Quoted(String),
    Raw(String),
}

impl Selection {
    /// Parses the COLUMNS argument (a clap value parser).
    pub fn parse_arg(s: &str) -> Result<Selection, String> {
        let mut items = Vec::new();
        for pieces in split_items(s)? {
            items.push(parse_item(pieces)?);
        }
        if items.is_empty() {
            return Err("the column list is empty".into());
        }
        Ok(Selection { items, text: s.to_string() })
    }

    /// Resolves the selection to 0-based column indices. `names` is the
    /// header row (`None` with `--no-headers`), `width` the number of
    /// columns.
    pub fn resolve(&self, names: Option<&[&[u8]]>, width: usize) -> Result<Vec<usize>, String> {
        let inverted = self.items.first().is_some_and(|first| first.negated);
        let mut out: Vec<usize> = Vec::new();
        let mut left_out = vec![false; if inverted { width } else { 0 }];
        for item in &self.items {
            let cols = resolve_target(&item.target, names, width)?;
            if inverted {
                // As xsv: `!` before the list leaves out every column the
                // list names (with or without its own `!`).
                for c in cols {
                    left_out[c] = true;
                }
            } else if item.negated {
                out.retain(|c| !cols.contains(c));
            } else {
                out.extend(cols);
            }
        }
        if inverted {
            out = (0..width).filter(|&c| !left_out[c]).collect();
        }
        if out.is_empty() {
            return Err(format!("the selection `{}` selects no column", self.text));
        }
        Ok(out)
    }
}

/// Splits at top-level commas into items, each a list of pieces; `""`
/// inside quotes is a literal quote.
fn split_items(s: &str) -> Result<Vec<(bool, Vec<Piece>)>, String> {
    let mut items = Vec::new();
    let mut pieces = Vec::new();
    let mut raw = String::new();
    let mut negated = false;
    let mut at_item_start = true;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '!' if at_item_start => {
                negated = true;
                at_item_start = false;
            }
            ',' => {
                if !raw.is_empty() {
                    pieces.push(Piece::Raw(std::mem::take(&mut raw)));
                }
                if pieces.is_empty() {
                    return Err(format!("`{s}`: empty item in the column list"));
                }
                items.push((negated, std::mem::take(&mut pieces)));
                negated = false;
                at_item_start = true;
            }
            // A quote opens a quoted name only where a name starts (the
            // item's start, or a range end after `-`); elsewhere it is part
            // of the name, as in xsv (`a"b`).
            '"' if raw.is_empty() || raw.ends_with('-') => {
                at_item_start = false;
                if !raw.is_empty() {
                    pieces.push(Piece::Raw(std::mem::take(&mut raw)));
                }
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            name.push('"');
                        }
                        Some('"') => break,
                        Some(c) => name.push(c),
                        None => return Err(format!("`{s}`: unterminated quote")),
                    }
                }
                pieces.push(Piece::Quoted(name));
            }
            c => {
                at_item_start = false;
                raw.push(c);
            }
        }
    }
    if !raw.is_empty() {
        pieces.push(Piece::Raw(raw));
    }
    if pieces.is_empty() {
        if !items.is_empty() || negated {
            return Err(format!("`{s}`: empty item in the column list"));
        }
        return Ok(items);
    }
    items.push((negated, pieces));
    Ok(items)
}

/// An unquoted range end: digits are an index, nothing is open, anything
/// else a name.
fn raw_end(s: &str) -> Result<End, String> {
    if s.is_empty() {
        Ok(End::Open)
    } else if s.bytes().all(|b| b.is_ascii_digit()) {
        index(s).map(End::Index)
    } else {
        Ok(End::Name(s.to_string()))
    }
}

fn index(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("column indices start at 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a valid column index")),
    }
}

fn parse_item((negated, pieces): (bool, Vec<Piece>)) -> Result<Item, String> {
    use Piece::{Quoted, Raw};
    let target = match pieces.as_slice() {
        [Raw(r)] if r.bytes().all(|b| b.is_ascii_digit()) => Target::One(End::Index(index(r)?)),
        [Raw(r)] => Target::One(End::Raw(r.clone())),
        [Quoted(q)] => Target::One(End::Name(q.clone())),
        [Quoted(q), Raw(r)] if occurrence(r).is_some() => {
            Target::One(End::Nth(q.clone(), occurrence(r).unwrap_or_default()))
        }
        [Quoted(a), Raw(r)] if r.starts_with('-') => {
            Target::Range(End::Name(a.clone()), raw_end(&r[1..])?)
        }
        [Raw(r), Quoted(b)] if r.ends_with('-') => {
            Target::Range(raw_end(&r[..r.len() - 1])?, End::Name(b.clone()))
        }
        [Quoted(a), Raw(d), Quoted(b)] if d == "-" => {
            Target::Range(End::Name(a.clone()), End::Name(b.clone()))
        }
        _ => {
            return Err("a column item is a name, an index or a range like a-b; \
                 quote names that contain commas or quotes"
                .into())
        }
    };
    Ok(Item { negated, target })
}

fn find_name(names: Option<&[&[u8]]>, name: &str) -> Result<Option<usize>, String> {
    let Some(names) = names else {
        return Err(format!(
            "column name `{name}` needs a header row \
             (none with --no-headers or an empty input: use indices)"
        ));
    };
    if let Some(i) = names.iter().position(|n| *n == name.as_bytes()) {
        return Ok(Some(i));
    }
    // `name[N]`: the Nth column (from 0) of those named `name`, as in xsv,
    // for headers that repeat a name.
    let Some((base, n)) = nth_occurrence(name) else {
        return Ok(None);
    };
    nth_named(names, base, n, name)
}

/// The `n`th (from 0) of the columns named `base` (`spec` as the user wrote
/// it, for the error when there are fewer); `None` when there is none.
fn nth_named(names: &[&[u8]], base: &str, n: usize, spec: &str) -> Result<Option<usize>, String> {
    let mut same = names.iter().enumerate().filter(|(_, h)| **h == base.as_bytes());
    match same.nth(n) {
        Some((i, _)) => Ok(Some(i)),
        None => {
            let count = names.iter().filter(|h| **h == base.as_bytes()).count();
            if count == 0 {
                Ok(None)
            } else {
                Err(format!(
                    "`{spec}`: the header row has {count} column(s) named `{base}` \
                     (`{base}[0]` is the first)"
                ))
            }
        }
    }
}

/// Splits `name[N]` into `name` and `N`.
fn nth_occurrence(s: &str) -> Option<(&str, usize)> {
    let open = s.rfind('[')?;
    if open == 0 {
        return None;
    }
    Some((&s[..open], occurrence(&s[open..])?))
}

/// `N` of a whole `[N]`.
fn occurrence(s: &str) -> Option<usize> {
    let digits = s.strip_prefix('[')?.strip_suffix(']')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn end_index(
    end: &End,
    names: Option<&[&[u8]]>,
    width: usize,
    open: usize,
) -> Result<usize, String> {
    match end {
        End::Open => Ok(open),
        End::Index(i) if *i <= width => Ok(i - 1),
        End::Index(i) => Err(format!("column {i} is out of range: there are {width} columns")),
        End::Name(n) | End::Raw(n) => {
            find_name(names, n)?.ok_or_else(|| format!("no column named `{n}` in the header row"))
        }
        End::Nth(n, k) => {
            let spec = format!("\"{}\"[{k}]", n.replace('"', "\"\""));
            let Some(names) = names else {
                return Err(format!(
                    "column name `{spec}` needs a header row \
                     (none with --no-headers or an empty input: use indices)"
                ));
            };
            nth_named(names, n, *k, &spec)?
                .ok_or_else(|| format!("no column named `{n}` in the header row"))
        }
    }
}

fn span(a: usize, b: usize) -> Vec<usize> {
    if a <= b {
        (a..=b).collect()
    } else {
        (b..=a).rev().collect()
    }
}

fn resolve_target(t: &Target, names: Option<&[&[u8]]>, width: usize) -> Result<Vec<usize>, String> {
    let last = width.saturating_sub(1);
    match t {
        Target::One(End::Raw(raw)) => {
            // A whole header name wins; otherwise try it as a range at each
            // dash, left to right.
            if let Some(i) = find_name(names, raw).unwrap_or(None) {
                return Ok(vec![i]);
            }
            // One end of a split: its column, or its error and whether the
            // error is a name missing from the header (then the split is
            // probably not a range at all).
            let end = |s: &str, open: usize| -> Result<usize, (bool, String)> {
                let e = raw_end(s).map_err(|m| (false, m))?;
                end_index(&e, names, width, open).map_err(|m| (matches!(e, End::Name(_)), m))
            };
            // The error of the first split whose names are all in the header
            // but an index is not (`1-10` of 5 columns, `0-2`), to give if no
            // split works.
            let mut index_error = None;
            for (at, _) in raw.match_indices('-') {
                match (end(&raw[..at], 0), end(&raw[at + 1..], last)) {
                    (Ok(a), Ok(b)) if width > 0 => return Ok(span(a, b)),
                    (Err((false, e)), Ok(_) | Err((false, _))) | (Ok(_), Err((false, e))) => {
                        index_error.get_or_insert(e);
                    }
                    _ => {}
                }
            }
            if let Some(e) = index_error {
                return Err(e);
            }
            find_name(names, raw)?;
            Err(format!("no column named `{raw}` in the header row"))
        }
        Target::One(end) => Ok(vec![end_index(end, names, width, 0)?]),
        Target::Range(a, b) => {
            let a = end_index(a, names, width, 0)?;
            let b = end_index(b, names, width, last)?;
            if width == 0 {
                return Ok(Vec::new());
            }
            Ok(span(a, b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HDR: [&[u8]; 5] = [b"id", b"first-name", b"last", b"a,b", b"2024"];

    fn sel(spec: &str) -> Result<Vec<usize>, String> {
        Selection::parse_arg(spec)?.resolve(Some(&HDR), HDR.len())
    }

    #[test]
    fn repeated_names_by_occurrence() {
        const DUP: [&[u8]; 5] = [b"a", b"b", b"a", b"c[1]", b"a"];
        let sel = |spec: &str| Selection::parse_arg(spec)?.resolve(Some(&DUP), DUP.len());
        assert_eq!(sel("a"), Ok(vec![0]));
        assert_eq!(sel("a[0],a[1],a[2]"), Ok(vec![0, 2, 4]));
        assert_eq!(sel("a[1]-c[1]"), Ok(vec![2, 3]));
        assert_eq!(sel("!a[1]"), Ok(vec![0, 1, 3, 4]));
        // A quoted name with an occurrence, as in xsv.
        assert_eq!(sel("\"a\"[2]"), Ok(vec![4]));
        assert_eq!(sel("\"c[1]\"[0]"), Ok(vec![3]));
        assert_eq!(
            sel("\"a\"[3]"),
            Err("`\"a\"[3]`: the header row has 3 column(s) named `a` (`a[0]` is the first)".into())
        );
        assert_eq!(sel("\"z\"[0]"), Err("no column named `z` in the header row".into()));
        assert!(sel("\"a\"[x]").is_err());
        // A literal header wins over the occurrence syntax.
        assert_eq!(sel("c[1]"), Ok(vec![3]));
        assert_eq!(
            sel("a[3]"),
            Err("`a[3]`: the header row has 3 column(s) named `a` (`a[0]` is the first)".into())
        );
        assert_eq!(sel("z[0]"), Err("no column named `z[0]` in the header row".into()));
        // A quote inside an unquoted name is part of it, as in xsv.
        const QUOTED: [&[u8]; 3] = [b"a\"b", b"x", b"\"c"];
        let sel_q = |spec: &str| Selection::parse_arg(spec)?.resolve(Some(&QUOTED), 3);
        assert_eq!(sel_q("a\"b,x"), Ok(vec![0, 1]));
        assert_eq!(sel_q("\"a\"\"b\""), Ok(vec![0]));
        assert_eq!(sel_q("\"\"\"c\",x-\"\"\"c\""), Ok(vec![2, 1, 2]));
        assert_eq!(sel("[1]"), Err("no column named `[1]` in the header row".into()));
    }

    #[test]
    fn names_indices_and_ranges() {
        assert_eq!(sel("id,3"), Ok(vec![0, 2]));
        assert_eq!(sel("2-4"), Ok(vec![1, 2, 3]));
        assert_eq!(sel("4-2"), Ok(vec![3, 2, 1]));
        assert_eq!(sel("first-name"), Ok(vec![1]));
        assert_eq!(sel("id-last"), Ok(vec![0, 1, 2]));
        assert_eq!(sel("first-name-last"), Ok(vec![1, 2]));
        assert_eq!(sel("4-"), Ok(vec![3, 4]));
        assert_eq!(sel("-2"), Ok(vec![0, 1]));
        assert_eq!(sel("\"a,b\""), Ok(vec![3]));
        assert_eq!(
            sel("\"2024\",2024"),
            Err("column 2024 is out of range: there are 5 columns".into())
        );
        assert_eq!(sel("\"2024\""), Ok(vec![4]));
        assert_eq!(sel("\"a,b\"-5"), Ok(vec![3, 4]));
        assert_eq!(sel("1-\"a,b\""), Ok(vec![0, 1, 2, 3]));
        assert_eq!(sel("1,1"), Ok(vec![0, 0]));
    }

    #[test]
    fn negation() {
        assert_eq!(sel("!last"), Ok(vec![0, 1, 3, 4]));
        assert_eq!(sel("!2-3,!5"), Ok(vec![0, 3]));
        // As xsv: the leading `!` leaves out every column the list names.
        assert_eq!(sel("!2-3,5"), Ok(vec![0, 3]));
        assert_eq!(sel("!1,1"), Ok(vec![1, 2, 3, 4]));
        assert_eq!(sel("!3-1"), Ok(vec![3, 4]));
        assert_eq!(sel("1-5,!3"), Ok(vec![0, 1, 3, 4]));
        assert_eq!(sel("5,1,!5"), Ok(vec![0]));
        assert_eq!(sel("!1-5").unwrap_err(), "the selection `!1-5` selects no column");
    }

    #[test]
    fn errors() {
        assert!(Selection::parse_arg("").is_err());
        assert!(Selection::parse_arg("a,,b").is_err());
        assert!(Selection::parse_arg("a,").is_err());
        assert!(Selection::parse_arg("!").is_err());
        assert!(Selection::parse_arg("0").is_err());
        assert!(Selection::parse_arg("\"open").is_err());
        assert!(Selection::parse_arg("\"a\"x").is_err());
        assert_eq!(sel("nope"), Err("no column named `nope` in the header row".into()));
        assert!(sel("9").unwrap_err().contains("out of range"));
        let out_of_range = Err("column 9 is out of range: there are 5 columns".into());
        assert_eq!(sel("1-9"), out_of_range);
        assert_eq!(sel("9-"), out_of_range);
        assert_eq!(sel("id-9"), out_of_range);
        assert_eq!(sel("0-2"), Err("column indices start at 1".into()));
        assert_eq!(sel("2-0"), Err("column indices start at 1".into()));
        assert_eq!(sel("nope-9"), Err("no column named `nope-9` in the header row".into()));
        let no_hdr = Selection::parse_arg("2-9").unwrap().resolve(None, 3);
        assert_eq!(no_hdr, Err("column 9 is out of range: there are 3 columns".into()));
        let no_hdr = Selection::parse_arg("id").unwrap().resolve(None, 3);
        assert!(no_hdr.unwrap_err().contains("--no-headers"));
        let idx = Selection::parse_arg("3,1").unwrap().resolve(None, 3);
        assert_eq!(idx, Ok(vec![2, 0]));
    }
}
