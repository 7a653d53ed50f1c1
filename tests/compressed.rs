//! Compressed input: gzip, zstd, bzip2 and xz files give the rows of the
//! plain file through `from_path`, `from_reader` and the CLI; damaged ones
//! fail instead of giving fewer rows. The compressed inputs are made here
//! with the same crates' encoders (standard formats: `gzip -dc`,
//! `zstd -dc`, `bzip2 -dc` and `xz -dc` read them).

use std::io::{Read, Write};
use std::path::PathBuf;

use fastcsv::{Codec, Decompress, Dialect, ErrorKind, Reader, ReaderBuilder, SourceReason};

const CODECS: [Codec; 4] = [Codec::Gzip, Codec::Zstd, Codec::Bzip2, Codec::Xz];

/// A few hundred KiB of CSV with quoted fields, doubled quotes, CRLF and
/// newlines inside fields, so records straddle every buffer boundary.
fn plain() -> Vec<u8> {
    let mut out = b"id,name,note\r\n".to_vec();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..12_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let note = match x % 4 {
            0 => format!("\"a, \"\"quoted\"\" {x}\""),
            1 => format!("\"two\nlines {}\"", x % 1000),
            2 => String::new(),
            _ => format!("plain{}", x % 97),
        };
        let end = if i % 3 == 0 { "\r\n" } else { "\n" };
        out.extend_from_slice(format!("{i},n{},{note}{end}", x % 10_000).as_bytes());
    }
    out
}

fn compress(codec: Codec, data: &[u8]) -> Vec<u8> {
    match codec {
        Codec::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Codec::Zstd => {
            // With the checksum, as the `zstd` command writes by default.
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
            e.include_checksum(true).unwrap();
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Codec::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(9));
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Codec::Xz => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        _ => unreachable!("not a codec this test writes"),
    }
}

/// Every row of `rdr` (fields joined by 0x1F, rows by 0x1E) and whether
/// it ended with an error (which is returned).
fn rows(rdr: &mut Reader<'_>) -> (Vec<u8>, Option<fastcsv::Error>) {
    let mut out = Vec::new();
    loop {
        match rdr.read_row() {
            Ok(Some(row)) => {
                for (i, f) in row.iter().enumerate() {
                    if i > 0 {
                        out.push(0x1f);
                    }
                    out.extend_from_slice(f);
                }
                out.push(0x1e);
            }
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn ok_rows(rdr: &mut Reader<'_>) -> Vec<u8> {
    let (out, err) = rows(rdr);
    if let Some(e) = err {
        panic!("unexpected error: {e}");
    }
    out
}

/// A reader that hands out at most 1000 bytes a call, as a pipe does.
struct Trickle<R>(R);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1000);
        self.0.read(&mut buf[..n])
    }
}

fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn builder() -> ReaderBuilder {
    let mut b = ReaderBuilder::new();
    b.buffer_size(4096);
    b
}

#[test]
fn every_codec_gives_the_plain_rows_by_path_and_by_reader() {
    let data = plain();
    let want = ok_rows(&mut Reader::from_slice(&data));
    let dir = tempfile::tempdir().unwrap();
    for codec in CODECS {
        let z = compress(codec, &data);
        let p = write_temp(&dir, "in.csv", &z);
        for ahead in [false, true] {
            let mut rdr = builder().read_ahead(ahead).from_path(&p).unwrap();
            assert_eq!(rdr.source_reason(), SourceReason::Compressed(codec));
            assert_eq!(rdr.source_kind(), fastcsv::SourceKind::Buffered);
            assert_eq!(ok_rows(&mut rdr), want, "{codec}, read-ahead {ahead}");
        }
        let mut rdr = builder().from_reader(Trickle(&z[..]));
        assert_eq!(ok_rows(&mut rdr), want, "{codec} from_reader");
        // The file opened in full with the default buffer, counting.
        let n = Reader::from_path(&p).unwrap().count_rows().unwrap();
        assert_eq!(n, Reader::from_slice(&data).count_rows().unwrap(), "{codec} count");
    }
}

#[test]
fn positions_count_decompressed_bytes() {
    let data = plain();
    let z = compress(Codec::Gzip, &data);
    let mut plain_rdr = Reader::from_slice(&data);
    let mut gz = builder().from_reader(&z[..]);
    loop {
        let a = plain_rdr.read_row().unwrap().map(|r| r.position());
        let b = gz.read_row().unwrap().map(|r| r.position());
        assert_eq!(a, b);
        if a.is_none() {
            break;
        }
    }
}

#[test]
fn several_members_frames_or_streams_read_as_one_input() {
    let data = plain();
    let want = ok_rows(&mut Reader::from_slice(&data));
    let dir = tempfile::tempdir().unwrap();
    // Cut inside a record: the second member continues it.
    let cut = data.len() / 2 + 3;
    for codec in CODECS {
        let mut z = compress(codec, &data[..cut]);
        z.extend(compress(codec, &data[cut..]));
        let p = write_temp(&dir, "multi", &z);
        assert_eq!(ok_rows(&mut builder().from_path(&p).unwrap()), want, "{codec}");
        assert_eq!(ok_rows(&mut builder().from_reader(Trickle(&z[..]))), want, "{codec}");
    }
}

/// A byte at a time: a gzip member's end, its padding and the next
/// member's magic bytes each come in reads of their own.
struct OneByte<R>(R);

impl<R: Read> Read for OneByte<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1);
        self.0.read(&mut buf[..n])
    }
}

#[test]
fn zero_bytes_after_a_gzip_member_are_padding_as_gzip_and_python_read_them() {
    let data = plain();
    let want = ok_rows(&mut Reader::from_slice(&data));
    let dir = tempfile::tempdir().unwrap();
    let cut = data.len() / 3;
    let (a, b) = (compress(Codec::Gzip, &data[..cut]), compress(Codec::Gzip, &data[cut..]));
    let zeros = |n: usize| vec![0u8; n];
    // Padded at the end (to a block, as tape and archive tools pad), and
    // between two members.
    let padded = [a.clone(), b.clone(), zeros(512)].concat();
    let between = [a.clone(), zeros(3), b.clone(), zeros(1)].concat();
    for z in [&padded, &between] {
        let p = write_temp(&dir, "padded.csv.gz", z);
        for ahead in [false, true] {
            let mut rdr = builder().read_ahead(ahead).from_path(&p).unwrap();
            assert_eq!(ok_rows(&mut rdr), want);
        }
        assert_eq!(ok_rows(&mut builder().from_reader(Trickle(&z[..]))), want);
        assert_eq!(ok_rows(&mut builder().from_reader(OneByte(&z[..]))), want);
    }
    // Other bytes after a member are an error at the first of them, after
    // every row of the member.
    let whole = compress(Codec::Gzip, &data);
    for tail in [&b"garbage"[..], b"\x1f", b"\x1f\x8c", b"\x00\x00x"] {
        let z = [whole.clone(), tail.to_vec()].concat();
        let p = write_temp(&dir, "tail.csv.gz", &z);
        let (got, err) = rows(&mut builder().from_path(&p).unwrap());
        let e = err.unwrap_or_else(|| panic!("{tail:?} after the member: no error"));
        assert!(matches!(e.kind(), ErrorKind::Decompress { codec: Codec::Gzip, .. }), "{e}");
        assert_eq!(got, want, "{tail:?}: the member's rows come first");
        assert_eq!(e.path(), Some(p.as_path()));
    }
}

#[test]
fn a_truncated_file_is_an_error_naming_the_path_never_fewer_rows() {
    let data = plain();
    let dir = tempfile::tempdir().unwrap();
    for codec in CODECS {
        let z = compress(codec, &data);
        for keep in [z.len() / 2, z.len() - 1, 12] {
            let p = write_temp(&dir, "cut.csv", &z[..keep]);
            for ahead in [false, true] {
                let mut rdr = builder().read_ahead(ahead).from_path(&p).unwrap();
                let (_, err) = rows(&mut rdr);
                let e = err.unwrap_or_else(|| panic!("{codec} cut at {keep}: no error"));
                match e.kind() {
                    ErrorKind::Decompress { codec: c, offset: Some(at), .. } => {
                        assert_eq!(*c, codec);
                        assert!(*at <= keep as u64, "{codec}: offset {at} past {keep}");
                    }
                    k => panic!("{codec}: {k:?}"),
                }
                assert_eq!(e.path(), Some(p.as_path()));
                assert!(e.to_string().starts_with(&format!("{}:", p.display())), "{e}");
                assert!(e.is_data());
            }
            let (_, err) = rows(&mut builder().from_reader(&z[..keep]));
            assert!(matches!(
                err.map(fastcsv::Error::into_kind),
                Some(ErrorKind::Decompress { .. })
            ));
        }
    }
}

#[test]
fn a_corrupt_byte_is_an_error() {
    let data = plain();
    let dir = tempfile::tempdir().unwrap();
    for codec in CODECS {
        let mut z = compress(codec, &data);
        let mid = z.len() / 2;
        z[mid] ^= 0x55;
        let p = write_temp(&dir, "bad.csv", &z);
        // The damage may first decode to other bytes (the checksum is
        // checked at the end of a member or block): read them without
        // complaint, and the end must still be the decoder's error.
        let d = Dialect::builder().flexible(true).quote(None).build().unwrap();
        let (_, err) = rows(&mut builder().dialect(d).from_path(&p).unwrap());
        let e = err.unwrap_or_else(|| panic!("{codec}: a corrupt byte gave no error"));
        assert!(matches!(e.kind(), ErrorKind::Decompress { .. }), "{codec}: {e}");
    }
}

#[test]
fn an_empty_compressed_file_has_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    for codec in CODECS {
        let z = compress(codec, b"");
        let p = write_temp(&dir, "empty", &z);
        let mut rdr = builder().from_path(&p).unwrap();
        assert_eq!(rdr.source_reason(), SourceReason::Compressed(codec));
        assert!(rdr.headers().unwrap().is_none());
        assert!(rdr.read_row().unwrap().is_none());
        assert_eq!(builder().from_reader(&z[..]).count_rows().unwrap(), 0);
    }
}

#[test]
fn decompress_off_reads_the_bytes_as_they_are() {
    let z = compress(Codec::Gzip, b"a,b\n1,2\n");
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "raw.gz", &z);
    let d = Dialect::builder().headers(false).quote(None).build().unwrap();
    let mut b = builder();
    b.dialect(d).decompress(Decompress::Off);
    let mut raw = Vec::new();
    let mut rdr = b.from_path(&p).unwrap();
    assert_ne!(rdr.source_reason(), SourceReason::Compressed(Codec::Gzip));
    while let Some(row) = rdr.read_row().unwrap() {
        raw.push(row.get(0).unwrap().to_vec());
    }
    assert!(raw[0].starts_with(b"\x1f\x8b\x08"));
    let first = b.from_reader(&z[..]).read_row().unwrap().unwrap().get(0).unwrap().to_vec();
    assert_eq!(first, raw[0]);
}

#[test]
fn forcing_a_codec_decodes_or_fails() {
    let dir = tempfile::tempdir().unwrap();
    let z = compress(Codec::Zstd, b"a\n1\n");
    let p = write_temp(&dir, "z", &z);
    let mut b = builder();
    b.decompress(Decompress::Force(Codec::Zstd));
    assert_eq!(b.from_path(&p).unwrap().count_rows().unwrap(), 1);
    let plain = write_temp(&dir, "plain.csv", b"a\n1\n");
    let e = b.from_path(&plain).unwrap().count_rows().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Decompress { codec: Codec::Zstd, .. }), "{e}");
    let e = b.from_reader(&b"a\n1\n"[..]).count_rows().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Decompress { codec: Codec::Zstd, .. }), "{e}");
}

#[test]
fn text_that_starts_like_a_magic_number_stays_csv() {
    let dir = tempfile::tempdir().unwrap();
    // Each begins as a format's magic sequence does, but not all of it.
    let inputs: [&[u8]; 6] = [
        b"BZh9,x\n1,2\n",
        b"BZh91AY,x\n1,2\n",
        b"BZh\n1\n",
        b"PK,x\n1,2\n",
        b"\xfd7zX\n1\n",
        b"BZh9",
    ];
    for input in inputs {
        let want = ok_rows(&mut Reader::from_slice(input));
        let p = write_temp(&dir, "text.csv", input);
        let mut rdr = Reader::from_path(&p).unwrap();
        assert!(!matches!(rdr.source_reason(), SourceReason::Compressed(_)));
        assert_eq!(ok_rows(&mut rdr), want);
        assert_eq!(ok_rows(&mut Reader::from_reader(input)), want);
    }
}

#[test]
fn a_zip_archive_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "a.csv", b"PK\x03\x04\x14\x00\x00\x00rest of an archive");
    let e = Reader::from_path(&p).err().expect("a zip archive must not open as CSV");
    assert!(matches!(e.kind(), ErrorKind::Decompress { codec: Codec::Zip, .. }));
    assert!(e.to_string().contains("zip archives are not supported; unzip first"), "{e}");
    assert_eq!(e.path(), Some(p.as_path()));
    let e = Reader::from_reader(&b"PK\x03\x04rest"[..]).count_rows().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Decompress { codec: Codec::Zip, .. }));
}

#[test]
fn parts_of_a_compressed_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "x", &compress(Codec::Gzip, b"a\n1\n2\n"));
    let part =
        fastcsv::split::Part { index: 0, start: 0, end: 5, lines: 0, records: 0, width: None };
    let e = builder().from_path_part(&p, &part).err().expect("no parts of a compressed file");
    assert!(e.to_string().contains("gzip-compressed"), "{e}");
}

#[test]
fn codec_of_path_reads_the_first_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for codec in CODECS {
        let p = write_temp(&dir, "f.csv", &compress(codec, b"a\n"));
        assert_eq!(Codec::of_path(&p).unwrap(), Some(codec));
    }
    let p = write_temp(&dir, "f.csv", b"a\n");
    assert_eq!(Codec::of_path(&p).unwrap(), None);
}

/// The CLI on compressed files (needs the binary: `--features cli`).
#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use std::path::Path;
    use std::process::{Command, Output, Stdio};

    const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

    fn run(args: &[&str]) -> Output {
        Command::new(BIN).args(args).output().unwrap()
    }

    fn stdout(args: &[&str]) -> String {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    }

    fn arg(p: &Path) -> &str {
        p.to_str().unwrap()
    }

    #[test]
    fn count_select_and_headers_match_the_plain_file() {
        let data = plain();
        let dir = tempfile::tempdir().unwrap();
        let plain_p = write_temp(&dir, "plain.csv", &data);
        let pp = arg(&plain_p);
        for codec in CODECS {
            let p = write_temp(&dir, &format!("in.{codec}"), &compress(codec, &data));
            let zp = arg(&p);
            for args in [
                vec!["count"],
                vec!["count", "-j", "2", "--chunk-size", "4K"],
                vec!["headers"],
                vec!["select", "note,id"],
                vec!["select", "-j", "2", "name"],
                vec!["check"],
                vec!["frequency", "-s", "name"],
            ] {
                let want = stdout(&[&args[..], &[pp]].concat()).replace(pp, "FILE");
                let got = stdout(&[&args[..], &[zp]].concat()).replace(zp, "FILE");
                assert_eq!(got, want, "{codec} {args:?}");
            }
        }
    }

    #[test]
    fn gzip_on_standard_input_is_decoded() {
        let data = plain();
        let z = compress(Codec::Gzip, &data);
        let mut child = Command::new(BIN)
            .arg("count")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&z).unwrap());
        let o = child.wait_with_output().unwrap();
        writer.join().unwrap();
        assert!(o.status.success());
        let n = Reader::from_slice(&data).count_rows().unwrap();
        assert_eq!(String::from_utf8(o.stdout).unwrap().trim(), n.to_string());
    }

    #[test]
    fn a_truncated_file_exits_1_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        for codec in CODECS {
            let z = compress(codec, &plain());
            let p = write_temp(&dir, "cut.csv", &z[..z.len() / 2]);
            for verb in ["count", "select"] {
                let args: &[&str] = if verb == "count" { &[verb] } else { &[verb, "id"] };
                let o = run(&[args, &[arg(&p)]].concat());
                assert_eq!(o.status.code(), Some(1), "{codec} {verb}");
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(err.contains(&format!("{}:", p.display())), "{err}");
                assert!(err.contains(codec.name()), "{err}");
            }
        }
    }

    #[test]
    fn parts_and_bench_refuse_a_compressed_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = write_temp(&dir, "x.csv", &compress(Codec::Xz, b"a\n1\n"));
        for args in [&["parts"][..], &["bench", "--runs", "1"]] {
            let o = run(&[args, &[arg(&p)]].concat());
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("xz-compressed"), "{err}");
        }
    }
}
