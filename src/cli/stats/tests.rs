//! Tests of `stats`, with the table, CSV and JSON renderings they
//! compare against.

use super::*;

/// Renders summaries as an aligned text table.
pub fn table(rows: &[Summary]) -> String {
    let mut v = Vec::new();
    write_table(&mut v, rows.len(), |i| rows[i].clone()).expect("a writer to memory");
    String::from_utf8(v).expect("a table built from strings is UTF-8")
}

/// Renders summaries as CSV, one record per column (names as far as they
/// go as in `xsv stats`: `field`, `min_length`, `max_length`); an
/// unknown length is empty.
pub fn csv(rows: &[Summary]) -> String {
    let mut v = Vec::new();
    write_csv(&mut v, rows.len(), |i| rows[i].clone()).expect("a writer to memory");
    String::from_utf8(v).expect("CSV built from strings is UTF-8")
}

/// Renders summaries as a JSON array, one object per column.
pub fn json(rows: &[Summary]) -> String {
    let mut v = Vec::new();
    write_json(&mut v, rows.len(), |i| rows[i].clone()).expect("a writer to memory");
    String::from_utf8(v).expect("JSON built from strings is UTF-8")
}

#[test]
fn hyperloglog_is_within_a_few_percent() {
    for n in [1_000u64, 40_000, 41_500, 43_000, 46_000, 50_000, 80_000, 1_000_000] {
        let mut h = HyperLogLog::default();
        for i in 0..n {
            h.insert(hash64(format!("value-{i}").as_bytes()));
        }
        let err = (h.estimate() as f64 - n as f64).abs() / n as f64;
        assert!(err < 0.03, "n={n}: estimate {} off by {err}", h.estimate());
    }
}

#[test]
fn exact_then_estimated() {
    let mut c = Column::new();
    for i in 0..EXACT_LIMIT as u64 {
        c.add(i.to_string().as_bytes());
        c.add(i.to_string().as_bytes());
    }
    assert_eq!(c.distinct.count(), (EXACT_LIMIT as u64, true));
    for i in 0..EXACT_LIMIT as u64 {
        c.add(format!("x{i}").as_bytes());
    }
    let (n, exact) = c.distinct.count();
    assert!(!exact);
    assert!((n as f64 - 20_000.0).abs() < 600.0, "{n}");
}

#[test]
fn types_lengths_and_counts() {
    let mut s = Stats::default();
    let rows: &[&[&[u8]]] = &[
        &[b"1", b"1.5", b"x", b""],
        &[b"-20", b"2", b"\xc3\xa9t\xc3\xa9", b""],
        &[b"", b"1e3", b"3", b""],
    ];
    for r in rows {
        s.add(r.len(), r.iter().copied());
    }
    let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
    let out = s.finish(&names);
    assert_eq!((out[0].non_empty, out[0].empty, out[0].distinct), (2, 1, 2));
    assert!(out[0].integer && out[0].float);
    assert!(!out[1].integer && out[1].float);
    assert!(!out[2].integer && !out[2].float);
    assert_eq!((out[2].min_len, out[2].max_len), (Some(1), 3));
    assert!(!out[3].integer && out[3].min_len.is_none());
    // Numbers: exact for integers, the population's deviation.
    assert_eq!((out[0].min.as_deref(), out[0].max.as_deref()), (Some("-20"), Some("1")));
    assert_eq!((out[0].sum.as_deref(), out[0].mean), (Some("-19"), Some(-9.5)));
    assert_eq!(out[0].stddev, Some(10.5));
    assert_eq!((out[1].min.as_deref(), out[1].max.as_deref()), (Some("1.5"), Some("1000")));
    assert_eq!(out[1].sum.as_deref(), Some("1003.5"));
    // Text: the order of code points.
    assert_eq!((out[2].min.as_deref(), out[2].max.as_deref()), (Some("3"), Some("été")));
    assert!(out[2].sum.is_none() && out[2].mean.is_none());
    assert!(out[3].min.is_none() && out[3].stddev.is_none());
    let t = table(&out);
    assert!(t.lines().nth(1).unwrap().starts_with("1  a "), "{t}");
    assert!(json(&out).contains("\"column\":\"d\",\"non_empty\":0,\"empty\":3"));
    assert!(json(&out).contains("\"sum\":-19,\"min\":-20,\"max\":1,\"mean\":-9.5,\"stddev\":10.5}"));
    assert!(json(&out).contains("\"sum\":null,\"min\":\"3\",\"max\":\"été\""));
    let c = csv(&out);
    assert!(c.lines().next().unwrap().ends_with(",float,sum,min,max,mean,stddev"), "{c}");
    assert!(c.lines().nth(1).unwrap().ends_with(",true,true,-19,-20,1,-9.5,10.5"), "{c}");
}

#[test]
fn integers_past_f64_stay_exact() {
    let mut s = Stats::default();
    for v in ["9007199254740993", "9223372036854775807", "-9223372036854775808"] {
        s.add(1, std::iter::once(v.as_bytes()));
    }
    let out = s.finish(&[]);
    assert_eq!(out[0].max.as_deref(), Some("9223372036854775807"));
    assert_eq!(out[0].min.as_deref(), Some("-9223372036854775808"));
    assert_eq!(out[0].sum.as_deref(), Some("9007199254740992"));
    // Far from 0, no cancellation.
    let mut s = Stats::default();
    for v in ["1000000000.5", "1000000001.5", "1000000002.5"] {
        s.add(1, std::iter::once(v.as_bytes()));
    }
    let out = s.finish(&[]);
    assert_eq!(out[0].mean, Some(1_000_000_001.5));
    assert!((out[0].stddev.unwrap() - (2.0f64 / 3.0).sqrt()).abs() < 1e-9);
    assert_eq!(shorten("abcdef", 4), "abc…");
    assert_eq!(shorten("a\nb", 4), "a?b");
    assert_eq!((short_float(2.0), short_float(1.0 / 3.0)), ("2".into(), "0.333333".into()));
}

/// Statistics merged from parts equal those of the whole, across the
/// switch from exact counting to the sketch (part by part or only
/// after merging) and with ragged widths.
#[test]
fn merged_parts_equal_the_whole() {
    let rows: Vec<Vec<Vec<u8>>> = (0..30_000u64)
        .map(|i| {
            let mut r = vec![
                (i % 7).to_string().into_bytes(),
                i.to_string().into_bytes(),
                // Floats of many magnitudes, whose sums a float addition
                // rounds differently in each grouping.
                format!("{:e}", (i as f64 * 0.7).sin() * 10f64.powi((i % 31) as i32 - 15))
                    .into_bytes(),
                format!("{}.5", i % 9_000).into_bytes(),
                if i % 11 == 0 { Vec::new() } else { format!("w{}", i % 12_000).into_bytes() },
            ];
            r.truncate(3 + (i % 3) as usize);
            r
        })
        .collect();
    let add = |s: &mut Stats, rows: &[Vec<Vec<u8>>]| {
        for r in rows {
            s.add(r.len(), r.iter().map(Vec::as_slice));
        }
    };
    let names = vec!["a".to_string()];
    let mut whole = Stats::default();
    add(&mut whole, &rows);
    let whole = whole.finish(&names);
    let want = json(&whole);
    for parts in [2, 3, 7, 100] {
        let mut merged = Stats::default();
        for part in rows.chunks(rows.len().div_ceil(parts)) {
            let mut s = Stats::default();
            add(&mut s, part);
            merged.merge(s);
        }
        // Means and deviations from exact sums: the same bits.
        assert_eq!(json(&merged.finish(&names)), want, "{parts} parts");
        // Parts started as sketches where the total already is one.
        let mut merged = Stats::default();
        for part in rows.chunks(rows.len().div_ceil(parts)) {
            let mut s = Stats::with_sketches(&merged.sketched());
            add(&mut s, part);
            merged.merge(s);
        }
        assert_eq!(json(&merged.finish(&names)), want, "{parts} parts, sketched");
    }
}

#[test]
fn hash_spreads_short_keys() {
    let a = hash64(b"a");
    assert_ne!(a, hash64(b"a\0"));
    assert_ne!(hash64(b""), hash64(b"\0"));
    assert_ne!(a, hash64(b"b"));
}

/// The prefix words order strings of bytes as the strings do, and
/// `same_prefix_cmp` finishes the comparison where they are equal.
#[test]
fn prefix_words_order_bytes() {
    let vals: Vec<&[u8]> = vec![
        b"",
        b"\0",
        b"a",
        b"a\0",
        b"a\0\0\0\0\0\0\0\0",
        b"ab",
        b"abc",
        b"abcd",
        b"abcd\0",
        b"abcde",
        b"abcdefg",
        b"abcdefgh",
        b"abcdefgh\0",
        b"abcdefghi",
        b"abcdefgz",
        b"b",
        b"\xff",
        b"\xff\xff\xff\xff\xff",
        b"zzzzzzzzzzzz",
        b"item 999999",
        b"item 99",
        b"item 0",
    ];
    for a in &vals {
        for b in &vals {
            let (ka, kb) = (prefix(a), prefix(b));
            let got = ka.cmp(&kb).then_with(|| same_prefix_cmp(a, b));
            assert_eq!(got, a.cmp(b), "{a:?} {b:?}");
        }
    }
    assert_eq!(prefix(b"abcde"), u64::from_be_bytes(*b"abcde\0\0\0"));
    assert_eq!(prefix(b"ab"), u64::from_be_bytes(*b"ab\0\0\0\0\0\0"));
}

/// Counting only what the default output shows changes none of its cells;
/// plain and other spellings of numbers mix as the standard parsers read
/// them (`-0` is a negative zero among floats, `+3` and `1e2` numbers).
#[test]
fn xsv_only_changes_no_cell() {
    let rows: &[&[&[u8]]] = &[
        &[b"1", b"1.5", b"x", b"-0", b"7", b"+3"],
        &[b"-20", b"2", b"\xc3\xa9t\xc3\xa9", b"0.25", b"", b"1e2"],
        &[b"", b"-0", b"3", b"-1", b"007", b"-4"],
        &[b"12345678901234567890", b"0.1", b"\xff", b"2", b"-8", b"5"],
    ];
    let which =
        Which { median: true, mode: true, cardinality: true, quartiles: true, nulls: false };
    let cells = |xsv_only: bool, keep: bool| {
        let mut s = Stats::default().keeping_values(keep).xsv_only(xsv_only);
        for r in rows {
            s.add(r.len(), r.iter().copied());
        }
        (0..6).map(|i| s.xsv_cells(i, &which)).collect::<Vec<_>>()
    };
    let want = cells(false, true);
    assert_eq!(cells(true, true), want);
    let t = |i: usize| (want[i][0].as_str(), want[i][1].as_str(), want[i][2].as_str());
    assert_eq!(t(0), ("Float", "12345678901234567000", "-20"));
    assert_eq!(t(1), ("Float", "3.6", "-0"));
    assert_eq!(t(2), ("Unknown", "", "3"));
    assert_eq!(t(3), ("Float", "1.25", "-1"));
    assert_eq!(t(4), ("Integer", "6", "-8"));
    assert_eq!(t(5), ("Float", "104", "-4"));
    // Without the values, the same first cells.
    let lean = cells(true, false);
    for (a, b) in lean.iter().zip(&want) {
        assert_eq!(a[..8], b[..8]);
    }
}

#[test]
fn quartiles_of_small_inputs() {
    let q = |v: &[f64]| quartiles(v);
    assert_eq!(q(&[]), None);
    assert_eq!(q(&[4.0]), Some((4.0, 4.0)));
    assert_eq!(q(&[1.0, 2.0]), Some((1.0, 2.0)));
    assert_eq!(q(&[1.0, 2.0, 3.0]), Some((1.0, 3.0)));
    assert_eq!(q(&[1.0, 2.0, 3.0, 4.0]), Some((1.5, 3.5)));
    assert_eq!(q(&[1.0, 2.0, 3.0, 4.0, 5.0]), Some((1.5, 4.5)));
    assert_eq!(q(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), Some((2.0, 5.0)));
    let seven: Vec<f64> = (1..=7).map(f64::from).collect();
    assert_eq!(q(&seven), Some((2.0, 6.0)));
    let eight: Vec<f64> = (1..=8).map(f64::from).collect();
    assert_eq!(q(&eight), Some((2.5, 6.5)));
    assert_eq!(median(&eight), Some(4.5));
    assert_eq!(median(&[]), None);
}

/// The quartiles in the default output: the last two cells, after xsv's;
/// of the numbers only (empty values ignored), in any input order; empty
/// for text and for a column of empty values, as the median is.
#[test]
fn quartile_cells() {
    let which =
        Which { median: true, mode: false, cardinality: false, quartiles: true, nulls: false };
    assert_eq!(which.header()[9..], ["median", "q1", "q3"]);
    let cells = |col: &[&str]| {
        let mut s = Stats::default().keeping_values(true).xsv_only(true);
        for v in col {
            s.add(1, std::iter::once(v.as_bytes()));
        }
        let c = s.xsv_cells(0, &which);
        (c[0].clone(), c[8].clone(), c[9].clone(), c[10].clone())
    };
    let t = |a: &str, b: &str, c: &str, d: &str| (a.into(), b.into(), c.into(), d.into());
    assert_eq!(cells(&["7"]), t("Integer", "7", "7", "7"));
    assert_eq!(cells(&["9", "", "1"]), t("Integer", "5", "1", "9"));
    assert_eq!(cells(&["3", "1", "2"]), t("Integer", "2", "1", "3"));
    assert_eq!(cells(&["4", "2", "", "3", "1"]), t("Integer", "2.5", "1.5", "3.5"));
    assert_eq!(cells(&["5", "1", "4", "2", "3"]), t("Integer", "3", "1.5", "4.5"));
    assert_eq!(cells(&["0.5", "-1", "2.25", "", "10", "3"]), t("Float", "2.25", "-0.25", "6.5"));
    assert_eq!(cells(&["1.5", "2.5", "3.5", "4.5", "5.5", "6.5"]), t("Float", "4", "2.5", "5.5"));
    assert_eq!(cells(&["1", "x", "3"]), t("Unicode", "", "", ""));
    assert_eq!(cells(&["", ""]), t("NULL", "", "", ""));
    assert_eq!(cells(&["1", "\u{ff}"]).1, "");
}

#[test]
fn ascii_by_words() {
    for n in 0..40 {
        let plain = vec![b'a'; n];
        assert!(ascii(&plain, prefix(&plain)), "{n}");
        for at in 0..n {
            let mut v = plain.clone();
            v[at] = 0xC3;
            assert!(!ascii(&v, prefix(&v)), "{n} {at}");
        }
    }
}
