//! `fastcsv partition`: one file per value of a column, as
//! `xsv partition`.
//!
//! A value (or its first `--prefix-length` bytes) names its file once
//! every non-word character (regex `\W`, Unicode-aware, as xsv's) is
//! removed: `empty` when nothing is left, and `_1`, `_2`... (one counter
//! for all names) when another value already gave that name. Every file
//! stays open until the end, with a small buffer each.

use std::collections::{HashMap, HashSet};

use super::args::PartitionArgs;
use super::split::{create, create_dir, finish, FileWriter, Template};
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
    let mut files: HashMap<Vec<u8>, FileWriter> = HashMap::new();
    let mut gen = Names::default();
    let mut one = |row: &dyn super::sort::RowLike| -> Result<(), Failure> {
        let value = row.field(col);
        let key = match a.prefix_length {
            Some(n) if n < value.len() => &value[..n],
            _ => value,
        };
        if !files.contains_key(key) {
            let path = template.path(&a.outdir, &gen.unique(key));
            files.insert(key.to_vec(), create(&path, names.as_deref(), 32 << 10)?);
        }
        let w = files.get_mut(key).expect("just inserted");
        w.write((0..row.len()).filter(|i| keep(i)).map(|i| row.field(i)))
            .map_err(|e| write_failure(&name, e, row.position(), |f| f))
    };
    if let Some(row) = &first {
        one(row)?;
    }
    input.each_row(|row| one(row))?;
    for (_, w) in files {
        finish(w)?;
    }
    Ok(())
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
