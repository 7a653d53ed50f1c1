//! Typed columns converted as their rows are read (types set before the
//! batches) against the same columns read as text first and converted
//! when their batch is handed out: the same batches, values, nulls and
//! errors, whatever the batch size, spellings and bad values (bad UTF-8,
//! values that do not fit, null spellings that are not UTF-8).

use fastcsv::arrow::{ColumnBatch, Columns, DataType, Spellings};
use fastcsv::Reader;
use proptest::prelude::*;

/// Values of every kind the typed columns read, and bad ones.
const VALUES: &[&[u8]] = &[
    b"1",
    b"-3",
    b"0x1F",
    b" 7\t",
    b"2.5",
    b"1e3",
    b"nan",
    b"NaN",
    b"NAN",
    b"true",
    b"0",
    b"False",
    b"2024-08-18",
    b"2024-08-18T10:10:32",
    b"2024-08-18T10:10:32Z",
    b"2024-08-18 10:10:32.5+01:00",
    b"",
    b"NA",
    b"x",
    b"\xff",
    b"\xc3\xa9",
    b"\xe2\x82",
    b"99999999999999999999",
];

const TYPES: &[DataType] = &[
    DataType::Int64,
    DataType::Float64,
    DataType::Boolean,
    DataType::Date32,
    DataType::Timestamp { nanos: false, utc: false },
    DataType::Timestamp { nanos: true, utc: true },
    DataType::Utf8,
    DataType::Int32,
];

/// Every batch, then the error (as shown), if any.
fn drain(c: &mut Columns<'_>) -> (Vec<ColumnBatch>, Option<String>) {
    let mut out = Vec::new();
    loop {
        match c.next_batch() {
            Ok(Some(b)) => out.push(b),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

fn spellings(custom: bool) -> Spellings {
    if custom {
        Spellings::default()
            .nulls([&b""[..], b"NA", b"\xff", b"nan"])
            .trues([&b"1"[..], b"\xc3\xa9", b"true"])
            .falses([&b"0"[..], b"\xe2\x82"])
    } else {
        Spellings::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn converted_as_read_is_converted_from_text(
        types in prop::collection::vec(0..TYPES.len(), 1..5),
        cells in prop::collection::vec(0..VALUES.len(), 0..160),
        batch in 1usize..7,
        custom in any::<bool>(),
        // Most values of a kind that fits the column, for long runs.
        fitting in any::<bool>(),
    ) {
        let width = types.len();
        let types: Vec<DataType> = types.iter().map(|&t| TYPES[t]).collect();
        let mut data = Vec::new();
        for j in 0..width {
            if j > 0 {
                data.push(b',');
            }
            data.extend_from_slice(format!("c{j}").as_bytes());
        }
        data.push(b'\n');
        for (k, row) in cells.chunks(width).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if j > 0 {
                    data.push(b',');
                }
                let v = if fitting && k % 5 != 4 {
                    match types[j] {
                        DataType::Int64 | DataType::Int32 => VALUES[v % 3],
                        DataType::Float64 => VALUES[4 + v % 5],
                        DataType::Boolean => VALUES[9 + v % 3],
                        _ => VALUES[12 + v % 4],
                    }
                } else {
                    VALUES[v]
                };
                data.extend_from_slice(v);
            }
            data.push(b'\n');
        }
        let open = || {
            let d = fastcsv::Dialect::builder().flexible(true).build().unwrap();
            let mut c = Columns::new(Reader::builder().dialect(d).from_slice(&data)).unwrap();
            c.batch_rows(batch);
            c.set_spellings(spellings(custom));
            c
        };
        let mut direct = open();
        direct.set_types(types.clone()).unwrap();
        let got = drain(&mut direct);
        // Every row read as text first (the whole input as the sample),
        // converted batch by batch as it is handed out.
        let mut text = open();
        text.infer_types(usize::MAX).unwrap();
        text.set_types(types.clone()).unwrap();
        let want = drain(&mut text);
        prop_assert_eq!(got.1, want.1);
        prop_assert_eq!(got.0.len(), want.0.len());
        // (Debug forms: a NaN is not equal to itself.)
        for (g, w) in got.0.iter().zip(&want.0) {
            prop_assert_eq!(format!("{g:?}"), format!("{w:?}"));
        }
    }
}

#[test]
fn batch_sizes_change_after_the_first_batch() {
    let mut text = String::from("n,f\n");
    for i in 0..100 {
        text.push_str(&format!("{i},{}\n", if i % 3 == 0 { "" } else { "1.5" }));
    }
    text.push_str("x,2\n");
    let open = || Columns::new(Reader::from_slice(text.as_bytes())).unwrap();
    let types = vec![DataType::Int64, DataType::Float64];
    let mut direct = open();
    direct.batch_rows(7).set_types(types.clone()).unwrap();
    let first = direct.next_batch().unwrap().unwrap();
    direct.batch_rows(5);
    let mut got = vec![first];
    let (rest, e) = drain(&mut direct);
    got.extend(rest);
    let mut plain = open();
    plain.batch_rows(7).infer_types(usize::MAX).unwrap();
    plain.set_types(types).unwrap();
    let first = plain.next_batch().unwrap().unwrap();
    plain.batch_rows(5);
    let mut want = vec![first];
    let (rest, e2) = drain(&mut plain);
    want.extend(rest);
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
    assert_eq!(e, e2);
    assert!(e.unwrap().contains("field 0 is not a valid int64: \"x\""));
}

#[test]
fn types_change_only_before_the_typed_rows_are_read() {
    let text = b"n\n1\n2\n3\n";
    let mut c = Columns::new(Reader::from_slice(text)).unwrap();
    c.batch_rows(1).set_types(vec![DataType::Int64]).unwrap();
    c.next_batch().unwrap().unwrap();
    // Rows 2 and 3 were read as int64 already.
    let e = c.set_types(vec![DataType::Float64]).map(|_| ()).unwrap_err();
    assert_eq!(e.to_string(), "the types are set before the batches are read");
    let e = c.infer_types(10).unwrap_err();
    assert_eq!(e.to_string(), "the types are inferred before the batches are read");
    // The same types again are no change.
    c.set_types(vec![DataType::Int64]).unwrap();
    assert_eq!(drain(&mut c).0.iter().map(ColumnBatch::rows).sum::<usize>(), 2);
}
