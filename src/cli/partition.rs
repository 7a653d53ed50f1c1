//! `fastcsv partition`: one file per value of a column, as
//! `xsv partition`.
//!
//! A value (or its first `--prefix-length` bytes) names its file once
//! every non-word character (regex `\W`, Unicode-aware, as xsv's) is
//! removed: `empty` when nothing is left, and `_1`, `_2`... (one counter
//! for all names) when another value already gave that name. Every file
//! stays open until the end, with a small buffer each.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::io::Write;

use fastcsv::SelectedRow;

use super::args::PartitionArgs;
use super::fmt::one_thread;
use super::frequency::FieldHasher;
use super::output::CsvRewrite;
use super::split::{create, create_dir, file_style, finish, FileWriter, Template};
use super::{path_arg, write_failure, Failure, Input};

/// Gives each value a unique, shell-safe name, as xsv does.
pub struct Names {
    non_word: regex::Regex,
    used: HashSet<String>,
    counter: usize,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            non_word: regex::Regex::new(r"\W").expect("a valid regex"),
            used: HashSet::new(),
            counter: 1,
        }
    }
}

impl Names {
    /// A name for `value` that no value before got.
    pub fn unique(&mut self, value: &[u8]) -> String {
        let text = String::from_utf8_lossy(value);
        let safe = self.non_word.replace_all(&text, "").into_owned();
        let base = if safe.is_empty() { "empty".to_string() } else { safe };
        if self.used.insert(base.clone()) {
            return base;
        }
        loop {
            let candidate = format!("{base}_{}", self.counter);
            self.counter += 1;
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

/// `fastcsv partition`.
pub fn partition(a: &PartitionArgs) -> Result<(), Failure> {
    let template = Template::parse(&a.filename)?;
    let file = path_arg(a.file.as_deref());
    let mut input = Input::open(file, &a.input, false)?;
    let name = input.name.clone();
    let header = input.reader.headers()?.cloned();
    let (cols, first) = super::sort::resolve(&mut input, Some(&a.column), header.as_ref())?;
    let cols = cols.unwrap_or_default();
    if cols.len() > 1 {
        return Err(Failure::Usage(format!(
            "can only partition on one column; `{}` selects {}",
            a.column,
            cols.len()
        )));
    }
    let Some(&col) = cols.first() else { return Ok(()) };
    create_dir(&a.outdir)?;
    let keep = |i: &usize| !a.drop || *i != col;
    let names: Option<Vec<&[u8]>> = header
        .as_ref()
        .map(|h| h.iter().enumerate().filter(|(i, _)| keep(i)).map(|(_, f)| f).collect());
    let mut files: Files = HashMap::default();
    let mut gen = Names::default();
    // The file for a key, opened the first time.
    let mut file = |files: &mut Files, key: &[u8]| -> Result<(), Failure> {
        if !files.contains_key(key) {
            let path = template.path(&a.outdir, &gen.unique(key));
            files.insert(key.to_vec(), create(&path, names.as_deref(), 32 << 10)?);
        }
        Ok(())
    };
    let prefix = |value: &[u8]| match a.prefix_length {
        Some(n) if n < value.len() => n,
        _ => value.len(),
    };
    let mut one = |files: &mut Files, row: &dyn super::sort::RowLike| -> Result<(), Failure> {
        let value = row.field(col);
        let key = &value[..prefix(value)];
        file(files, key)?;
        let w = files.get_mut(key).expect("just opened");
        w.write((0..row.len()).filter(|i| keep(i)).map(|i| row.field(i)))
            .map_err(|e| write_failure(&name, e, row.position(), |f| f))
    };
    if let Some(row) = &first {
        one(&mut files, row)?;
    }
    if !template.fixed_extension() {
        // Whether a file is tab-separated depends on its name: each record
        // goes field by field to its file.
        input.each_row(|row| one(&mut files, row))?;
    } else {
        let style = file_style(&template.path(&a.outdir, "0"));
        let rw = CsvRewrite::new(input.reader.dialect(), style, false);
        let quote = input.reader.dialect().quote();
        input.par_each_batch(
            &rw.selection(),
            &one_thread(),
            Parted::default,
            |b, p: &mut Parted| -> Result<(), Failure> {
                for row in b.iter() {
                    let k = p.keys.len();
                    push_value(&row, col, quote, &mut p.keys);
                    let n = prefix(&p.keys[k..]);
                    p.keys.truncate(k + n);
                    let wrote = if a.drop {
                        rw.line_without(&row, col, &mut p.bytes)
                    } else {
                        rw.line(&row, &mut p.bytes)
                    };
                    rw.end(wrote, &mut p.bytes);
                    p.ends.push((p.keys.len(), p.bytes.len()));
                }
                Ok(())
            },
            |p| {
                let (mut k, mut r) = (0, 0);
                for &(ke, re) in &p.ends {
                    let key = &p.keys[k..ke];
                    let bytes = &p.bytes[r..re];
                    (k, r) = (ke, re);
                    if let Some(w) = files.get_mut(key) {
                        w.get_mut().write_all(bytes)?;
                        continue;
                    }
                    file(&mut files, key)?;
                    files.get_mut(key).expect("just opened").get_mut().write_all(bytes)?;
                }
                p.keys.clear();
                p.bytes.clear();
                p.ends.clear();
                Ok(())
            },
        )?;
    }
    for (_, w) in files {
        finish(w)?;
    }
    Ok(())
}

/// The open files, by key.
type Files = HashMap<Vec<u8>, FileWriter, BuildHasherDefault<FieldHasher>>;

/// Records as CSV with their keys, one after the other.
#[derive(Default)]
struct Parted {
    keys: Vec<u8>,
    bytes: Vec<u8>,
    /// Where each record's key and CSV end in `keys` and `bytes`.
    ends: Vec<(usize, usize)>,
}

/// Appends the value of field `col` of `row` (empty past its end), read
/// with the quote `quote` by `Selection::raw` (or `all`).
fn push_value(row: &SelectedRow<'_>, col: usize, quote: Option<u8>, out: &mut Vec<u8>) {
    if let Some(f) = row.raw_fields() {
        let Some(r) = f.get(col) else { return };
        match &f.record()[r] {
            // Quoted: its quotes doubled.
            [q, inner @ .., _] if Some(*q) == quote => {
                let mut rest = inner;
                while let Some(i) = memchr::memchr(*q, rest) {
                    out.extend_from_slice(&rest[..=i]);
                    rest = &rest[(i + 2).min(rest.len())..];
                }
                out.extend_from_slice(rest);
            }
            raw => out.extend_from_slice(raw),
        }
    } else if col < row.len() {
        out.extend_from_slice(row.get(col));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_xsv() {
        let mut n = Names::default();
        assert_eq!(n.unique(b"x y"), "xy");
        assert_eq!(n.unique(b"xy"), "xy_1");
        assert_eq!(n.unique(b"../"), "empty");
        assert_eq!(n.unique(b""), "empty_2");
        assert_eq!(n.unique("caf\u{e9}!".as_bytes()), "caf\u{e9}");
    }
}
