//! End-to-end tests of the `fastcsv` binary: every command on the samples
//! in `samples/cli_*`, on standard input, and on bad input (exit statuses,
//! messages on standard error, a closed output pipe).

mod cli_support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name).display().to_string()
}

/// Runs `fastcsv ARGS` with `stdin` as standard input.
fn run_with(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    cli_support::feed(cmd, stdin)
}

fn run(args: &[&str]) -> Output {
    run_with(args, b"")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Asserts success and returns standard output.
fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    assert_eq!(stderr(&o), "", "{args:?}");
    stdout(&o)
}

/// Asserts exit status `code` and one `fastcsv: ` line on standard error
/// containing `needle`; returns that line.
fn fails(args: &[&str], code: i32, needle: &str) -> String {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
    if code == 1 {
        assert!(err.starts_with("fastcsv: "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    err
}

fn temp_file(dir: &tempfile::TempDir, name: &str, data: &[u8]) -> String {
    let p: PathBuf = dir.path().join(name);
    std::fs::write(&p, data).unwrap();
    p.display().to_string()
}

#[test]
fn count_one_file_several_files_and_stdin() {
    let people = sample("cli_people.csv");
    // Four data lines, one of them empty: the header and the empty line
    // are not records.
    assert_eq!(ok(&["count", &people]), "3\n");
    assert_eq!(ok(&["count", "--no-headers", &people]), "4\n");
    let two = sample("cli_people2.csv");
    assert_eq!(ok(&["count", &people, &two]), format!("{people}\t3\n{two}\t1\ntotal\t4\n"));
    let data = std::fs::read(&people).unwrap();
    let o = run_with(&["count"], &data);
    assert_eq!(stdout(&o), "3\n");
    let o = run_with(&["count", "-", &two], &data);
    assert_eq!(stdout(&o), format!("<stdin>\t3\n{two}\t1\ntotal\t4\n"));
}

#[test]
fn count_agrees_across_sources_and_buffer_sizes() {
    let people = sample("cli_people.csv");
    for src in ["auto", "mmap", "read"] {
        for size in ["1", "7", "1K", "1M"] {
            let args = ["count", "--source", src, "--buffer-size", size, &people];
            assert_eq!(ok(&args), "3\n", "{args:?}");
        }
    }
}

#[test]
fn count_of_empty_and_header_only_input() {
    let dir = tempfile::tempdir().unwrap();
    let empty = temp_file(&dir, "empty.csv", b"");
    let header = temp_file(&dir, "header.csv", b"a,b\n\n\n");
    assert_eq!(ok(&["count", &empty]), "0\n");
    assert_eq!(ok(&["count", &header]), "0\n");
}

#[test]
fn headers_numbered_and_bare() {
    let people = sample("cli_people.csv");
    assert_eq!(ok(&["headers", &people]), "1   id\n2   name\n3   city\n4   score\n");
    assert_eq!(ok(&["headers", "--just-names", &people]), "id\nname\ncity\nscore\n");
    assert_eq!(ok(&["headers", "--no-headers", &people]), "1\n2\n3\n4\n");
    let wide: String = (1..=12).map(|i| format!("c{i}")).collect::<Vec<_>>().join(",");
    let o = run_with(&["headers", "-"], format!("{wide}\n").as_bytes());
    let out = stdout(&o);
    // As xsv aligns them (a tab writer: cells at least 2 wide, 2 spaces).
    assert!(out.starts_with("1   c1\n"), "{out}");
    assert!(out.ends_with("12  c12\n"), "{out}");
    let o = run_with(&["headers", "-"], format!("{}\n", vec!["x"; 100].join(",")).as_bytes());
    assert!(stdout(&o).ends_with("99   x\n100  x\n"), "{}", stdout(&o));
    // Several files, as xsv: names alone, one file after the other, and
    // each once with --intersect.
    let other = sample("cli_other.csv");
    assert_eq!(ok(&["headers", &people, &other]), "id\nname\ncity\nscore\nid\nemail\n");
    assert_eq!(ok(&["headers", "--intersect", &people, &other]), "id\nname\ncity\nscore\nemail\n");
}

#[test]
fn select_by_name_index_range_and_negation() {
    let people = sample("cli_people.csv");
    assert_eq!(
        ok(&["select", "name,1", &people]),
        "name,id\nAnn,1\nBob,2\n\"C\u{e9} \"\"C\"\"\",3\n"
    );
    let want = "id,name,score\n1,Ann,9.5\n2,Bob,7\n3,\"C\u{e9} \"\"C\"\"\",\n";
    assert_eq!(ok(&["select", "!city", &people]), want);
    assert_eq!(ok(&["select", "1-4,!3", &people]), want);
    // As xsv: a leading `!` leaves out every column the list names.
    assert_eq!(
        ok(&["select", "!city,1", &people]),
        "name,score\nAnn,9.5\nBob,7\n\"C\u{e9} \"\"C\"\"\",\n"
    );
    assert_eq!(ok(&["select", "id-name,score", &people]), want);
    assert_eq!(
        ok(&["select", "3-2", &people]),
        "city,name\n\"Paris, FR\",Ann\nOslo,Bob\nRome,\"C\u{e9} \"\"C\"\"\"\n"
    );
    assert_eq!(
        ok(&["select", "--no-headers", "3-", &people]),
        "city,score\n\"Paris, FR\",9.5\nOslo,7\nRome,\n"
    );
}

#[test]
fn select_repeated_names_by_occurrence() {
    // xsv's `name[N]`: the Nth column (from 0) of those with that name.
    let o = run_with(&["select", "a[1],b,a[0]"], b"a,b,a,c\n1,2,3,4\n");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a,b,a\n3,2,1\n");
    let o = run_with(&["select", "a[2]"], b"a,b,a,c\n1,2,3,4\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("2 column(s) named `a`"), "{}", stderr(&o));
}

#[test]
fn select_formats() {
    let people = sample("cli_people.csv");
    assert_eq!(
        ok(&["select", "name,city", "--to", "tsv", &people]),
        "name\tcity\nAnn\tParis, FR\nBob\tOslo\nC\u{e9} \"C\"\tRome\n"
    );
    assert_eq!(
        ok(&["select", "id,name", "--to", "jsonl", &people]),
        "{\"id\":\"1\",\"name\":\"Ann\"}\n{\"id\":\"2\",\"name\":\"Bob\"}\n\
         {\"id\":\"3\",\"name\":\"C\u{e9} \\\"C\\\"\"}\n"
    );
    assert_eq!(
        ok(&["select", "2", "--to", "jsonl", "--no-headers", &people]),
        "[\"name\"]\n[\"Ann\"]\n[\"Bob\"]\n[\"C\u{e9} \\\"C\\\"\"]\n"
    );
    assert_eq!(
        ok(&["select", "city,id", "--out-delimiter", ";", &people]),
        "city;id\nParis, FR;1\nOslo;2\nRome;3\n"
    );
}

#[test]
fn select_usage_errors_exit_2() {
    let people = sample("cli_people.csv");
    fails(&["select", "nope", &people], 2, "fastcsv: no column named `nope`");
    fails(&["select", "9", &people], 2, "column 9 is out of range: there are 4 columns");
    fails(&["select", "!1-4", &people], 2, "selects no column");
    fails(&["select", "name", "--no-headers", &people], 2, "needs a header row");
    // An empty input has no header row either: the message says so rather
    // than blame a --no-headers that was not given.
    let empty = std::env::temp_dir().join(format!("fastcsv-cli-empty-{}.csv", std::process::id()));
    std::fs::write(&empty, "").unwrap();
    let empty = empty.to_str().unwrap();
    for verb in ["frequency", "stats"] {
        fails(&[verb, "-s", "name", empty], 2, "none with --no-headers or an empty input");
    }
    fails(&["select", "0", &people], 2, "indices start at 1");
    fails(&["select", "a,,b", &people], 2, "empty item");
    fails(&["select", "--to", "xml", "1", &people], 2, "invalid value 'xml'");
}

#[test]
fn slice_writes_a_range_of_records() {
    let people = sample("cli_people.csv");
    let all = ok(&["cat", &people]);
    let lines: Vec<&str> = all.lines().collect();
    let (head, recs) = (lines[0], &lines[1..]);
    let want =
        |r: &[&str]| format!("{head}\n{}", r.iter().map(|l| format!("{l}\n")).collect::<String>());
    assert_eq!(ok(&["slice", &people]), all);
    assert_eq!(ok(&["slice", "--len", "2", &people]), want(&recs[..2]));
    assert_eq!(ok(&["slice", "-s", "1", "-e", "3", &people]), want(&recs[1..3]));
    assert_eq!(ok(&["slice", "-s", "1", "-l", "1", &people]), want(&recs[1..2]));
    assert_eq!(ok(&["slice", "-i", "2", &people]), want(&recs[2..3]));
    assert_eq!(ok(&["slice", "-s", "99", &people]), want(&[]));
    assert_eq!(ok(&["slice", "-e", "0", &people]), want(&[]));
    // Without a header row, the first record is record 0.
    assert_eq!(ok(&["slice", "-n", "-i", "0", &people]), format!("{head}\n"));
    assert_eq!(
        ok(&["slice", "-i", "0", "--to", "jsonl", &people]),
        "{\"id\":\"1\",\"name\":\"Ann\",\"city\":\"Paris, FR\",\"score\":\"9.5\"}\n"
    );
    // A multi-line record is one record; reading stops at the range's end
    // (the ragged row after it is never read).
    let dir = tempfile::tempdir().unwrap();
    let f = temp_file(&dir, "m.csv", b"a,b\n1,\"x\ny\"\n2,z\n3\n");
    assert_eq!(ok(&["slice", "-l", "2", &f]), "a,b\n1,\"x\ny\"\n2,z\n");
    fails(&["slice", "-s", "1", &f], 1, ":5: record 3, byte 16: found record with 1 fields");
    let o = run_with(&["slice", "-s", "1"], b"a\n1\n2\n");
    assert_eq!(stdout(&o), "a\n2\n");
    fails(&["slice", "-e", "1", "-l", "2", &people], 2, "cannot be used with");
    fails(&["slice", "-i", "1", "-s", "2", &people], 2, "cannot be used with");
    fails(&["slice", "-s", "x", &people], 2, "invalid value 'x'");
}

#[test]
fn search_writes_the_records_a_regex_matches() {
    let people = sample("cli_people.csv");
    let head = "id,name,city,score\n";
    assert_eq!(
        ok(&["search", "Oslo|Rome", &people]),
        format!("{head}2,Bob,Oslo,7\n3,\"C\u{e9} \"\"C\"\"\",Rome,\n")
    );
    // Fields are matched as parsed: the doubled quote is one quote.
    assert_eq!(
        ok(&["search", "^C\u{e9} \"C\"$", &people]),
        format!("{head}3,\"C\u{e9} \"\"C\"\"\",Rome,\n")
    );
    assert_eq!(ok(&["search", "-i", "-s", "name", "^b", &people]), format!("{head}2,Bob,Oslo,7\n"));
    // `b` is in "Bob" but not in the city column: no match there.
    assert_eq!(ok(&["search", "-s", "city", "b", &people]), head);
    assert_eq!(
        ok(&["search", "-v", "-s", "score", ".", &people]),
        format!("{head}3,\"C\u{e9} \"\"C\"\"\",Rome,\n")
    );
    assert_eq!(
        ok(&["search", "-s", "1", "^2$", "--to", "jsonl", &people]),
        "{\"id\":\"2\",\"name\":\"Bob\",\"city\":\"Oslo\",\"score\":\"7\"}\n"
    );
    // Without a header row, the first record is searched (and selects by
    // index); a quoted line end is inside one field.
    assert_eq!(ok(&["search", "-n", "-s", "2", "^name$", &people]), head);
    let dir = tempfile::tempdir().unwrap();
    let f = temp_file(&dir, "m.csv", b"a,b\n1,\"x\ny\"\n2,z\n");
    assert_eq!(ok(&["search", "x\ny", &f]), "a,b\n1,\"x\ny\"\n");
    let o = run_with(&["search", "2"], b"a\n1\n2\n");
    assert_eq!(stdout(&o), "a\n2\n");
    fails(&["search", "(", &people], 2, "invalid regular expression");
    fails(&["search", "-s", "nope", "x", &people], 2, "no column named `nope`");
}

#[test]
fn cat_concatenates_and_converts() {
    let (a, b) = (sample("cli_people.csv"), sample("cli_people2.csv"));
    assert_eq!(
        ok(&["cat", &a, &b]),
        "id,name,city,score\n1,Ann,\"Paris, FR\",9.5\n2,Bob,Oslo,7\n\
         3,\"C\u{e9} \"\"C\"\"\",Rome,\n4,Dan,Lima,8\n"
    );
    assert_eq!(
        ok(&["cat", &b, "--to", "jsonl"]),
        "{\"id\":\"4\",\"name\":\"Dan\",\"city\":\"Lima\",\"score\":\"8\"}\n"
    );
    // Tab-separated in, minimal CSV out, and back.
    let tsv = ok(&["cat", &a, "--to", "tsv"]);
    let o = run_with(&["cat", "-d", "tab", "--out-delimiter", ","], tsv.as_bytes());
    assert_eq!(stdout(&o), ok(&["cat", &a]));
    let o = run_with(&["cat", "-d", "\\t", "--to", "tsv"], tsv.as_bytes());
    assert_eq!(stdout(&o), tsv);
}

#[test]
fn cat_quotes_only_what_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = temp_file(
        &dir,
        "q.csv",
        b"a,b,c\n\"plain\",\"has \"\"q\"\"\",\"two\r\nlines\"\n\"\",x,\"semi;colon\"\n",
    );
    assert_eq!(
        ok(&["cat", &f]),
        "a,b,c\nplain,\"has \"\"q\"\"\",\"two\r\nlines\"\n,x,semi;colon\n"
    );
    assert_eq!(
        ok(&["cat", "--out-delimiter", ";", &f]),
        "a;b;c\nplain;\"has \"\"q\"\"\";\"two\r\nlines\"\n;x;\"semi;colon\"\n"
    );
    // A record of one empty field stays a record.
    let one = temp_file(&dir, "one.csv", b"a\n\"\"\nx\n");
    assert_eq!(ok(&["cat", &one]), "a\n\"\"\nx\n");
    assert_eq!(ok(&["count", &one]), "2\n");
}

#[test]
fn cat_rejects_different_headers() {
    let (a, other) = (sample("cli_people.csv"), sample("cli_other.csv"));
    let err = fails(&["cat", &a, &other], 1, "the header row (id,email) differs");
    assert!(err.contains(&format!("{other}:")), "{err}");
    // Nothing is written before the headers are known to agree.
    assert_eq!(run(&["cat", &a, &other]).stdout, b"");
    // Standard input between two files is read once, in its place.
    let two = sample("cli_people2.csv");
    let o = run_with(&["cat", &two, "-", &two], &std::fs::read(&a).unwrap());
    assert_eq!(stdout(&o).lines().count(), 1 + 1 + 3 + 1, "{}", stdout(&o));
    assert!(stdout(&o).starts_with("id,name,city,score\n4,Dan,Lima,8\n1,Ann,"));
    // With --no-headers and --flexible nothing is compared.
    let out = ok(&["cat", "--no-headers", "--flexible", &a, &other]);
    assert_eq!(out.lines().count(), 6);
}

/// An input named by a path that cannot be read twice (here `/dev/stdin`,
/// a pipe; also `<(cmd)` and FIFOs) is kept open from the header pass, so
/// its records are all written.
#[cfg(target_os = "linux")]
#[test]
fn cat_reads_a_pipe_named_by_a_path_once() {
    let (a, two) = (sample("cli_people.csv"), sample("cli_people2.csv"));
    let data = std::fs::read(&a).unwrap();
    let o = run_with(&["cat", "/dev/stdin", &two], &data);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{}4,Dan,Lima,8\n", ok(&["cat", &a])));
    // Many records (more than a pipe's buffer), with the first record read
    // ahead for --no-headers.
    let mut big = String::new();
    for i in 0..50_000 {
        big.push_str(&format!("{i},\"v,{i}\"\n"));
    }
    let o = run_with(&["cat", "-n", "/dev/stdin"], big.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), big);
}

#[test]
fn out_delimiter_is_checked() {
    let a = sample("cli_people.csv");
    fails(&["cat", "--out-delimiter", "\"", &a], 2, "quote");
    fails(&["cat", "--out-delimiter", "\\x0a", &a], 2, "line end");
    fails(&["select", "1", "--out-delimiter", "\\x0d", &a], 2, "line end");
    fails(&["cat", "--out-delimiter", ";", "--to", "tsv", &a], 2, "--out-delimiter is for CSV");
    assert!(ok(&["cat", "--out-delimiter", ";", &a]).starts_with("id;name;city;score\n"));
}

#[test]
fn check_lists_each_problem_with_its_position() {
    let bad = sample("cli_bad.csv");
    let o = run(&["check", &bad]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        format!(
            "{bad}:3: record 2, byte 30: ',' expected after '\"'\n\
             {bad}:4: record 3, byte 49: found record with 2 fields, but the previous record has 3 fields\n\
             {bad}:5: record 4, byte 57: invalid UTF-8 in column 2 (byte 3 of the field)\n\
             {bad}:6: record 5, byte 72: NUL byte in column 2 (byte 3 of the field)\n\
             {bad}:7: record 6, byte 85: unexpected end of data\n\
             {bad}: 5 problems in 6 records\n"
        )
    );
    let o = run(&["check", "--max-errors", "2", &bad]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 3, "{out}");
    // Stopped at the record of the third problem.
    assert!(out.ends_with("2 problems in 4 records (stopped after --max-errors 2)\n"), "{out}");
    // With exactly as many problems as allowed, nothing was skipped.
    let o = run(&["check", "--max-errors", "5", &bad]);
    assert!(stdout(&o).ends_with("5 problems in 6 records\n"), "{}", stdout(&o));
    // --flexible accepts the short row.
    let o = run(&["check", "--flexible", &bad]);
    assert_eq!(stdout(&o).lines().count(), 5);
}

#[test]
fn check_looks_inside_ragged_records() {
    // A short record is one problem, and a NUL or invalid UTF-8 in its
    // fields are more.
    let o = run_with(&["check"], b"a,b,c\n1,\x00\nx,\xff\n");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "<stdin>:2: record 1, byte 6: found record with 2 fields, but the previous record has 3 fields\n\
         <stdin>:2: record 1, byte 6: NUL byte in column 2 (byte 0 of the field)\n\
         <stdin>:3: record 2, byte 10: found record with 2 fields, but the previous record has 3 fields\n\
         <stdin>:3: record 2, byte 10: invalid UTF-8 in column 2 (byte 0 of the field)\n\
         <stdin>: 4 problems in 2 records\n"
    );
}

#[test]
fn check_passes_good_input() {
    let people = sample("cli_people.csv");
    assert_eq!(ok(&["check", &people]), format!("{people}: ok, 3 records\n"));
    let data = std::fs::read(&people).unwrap();
    let o = run_with(&["check"], &data);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "<stdin>: ok, 3 records\n");
}

#[test]
fn stats_table_and_json() {
    let people = sample("cli_people.csv");
    assert_eq!(
        ok(&["stats", "--table", &people]),
        "#  column  non-empty  empty  distinct  min len  max len  integer  float  min   max     mean    stddev\n\
         1  id              3      0         3        1        1  yes      yes    1     3          2  0.816497\n\
         2  name            3      0         3        3        6  no       no     Ann   Cé \"C\"     -         -\n\
         3  city            3      0         3        4        9  no       no     Oslo  Rome       -         -\n\
         4  score           2      1         2        1        3  no       yes    7     9.5     8.25      1.25\n"
    );
    let json = ok(&["stats", "--json", &people]);
    assert!(json.starts_with("[\n  {\"column\":\"id\",\"non_empty\":3,"), "{json}");
    assert!(json.contains(
        "{\"column\":\"score\",\"non_empty\":2,\"empty\":1,\"distinct\":2,\
         \"distinct_exact\":true,\"min_len\":1,\"max_len\":3,\"integer\":false,\"float\":true,\
         \"sum\":16.5,\"min\":7,\"max\":9.5,\"mean\":8.25,\"stddev\":1.25}"
    ));
    assert_eq!(
        ok(&["stats", "--csv", &people]),
        "field,non_empty,empty,distinct,distinct_exact,min_length,max_length,integer,float,\
         sum,min,max,mean,stddev\n\
         id,3,0,3,true,1,1,true,true,6,1,3,2,0.816496580927726\n\
         name,3,0,3,true,3,6,false,false,,Ann,\"Cé \"\"C\"\"\",,\n\
         city,3,0,3,true,4,9,false,false,,Oslo,Rome,,\n\
         score,2,1,2,true,1,3,false,true,16.5,7,9.5,8.25,1.25\n"
    );
    // A column with no value: empty lengths; a name with a comma, quoted.
    let o = run_with(&["stats", "--csv"], "\"a,b\",c\n,1\n".as_bytes());
    assert_eq!(
        stdout(&o),
        "field,non_empty,empty,distinct,distinct_exact,min_length,max_length,integer,float,\
         sum,min,max,mean,stddev\n\
         \"a,b\",0,1,0,true,,,false,false,,,,,\nc,1,0,1,true,1,1,true,true,1,1,1,1,0\n"
    );
    // Wide characters take two cells in the table.
    let o = run_with(&["stats", "--table"], "\u{540d}\u{524d},b\n1,2\n".as_bytes());
    let lines: Vec<&str> = std::str::from_utf8(&o.stdout).unwrap().lines().collect();
    assert_eq!(lines[1].find("  1"), lines[2].find("  1").map(|i| i + 2), "{lines:?}");
}

#[test]
fn frequency_counts_values_as_xsv() {
    let data = "k,v\nb,1\na,2\nb,\na,3\nb,1\nc\n";
    let o = run_with(&["frequency", "--flexible"], data.as_bytes());
    assert_eq!(
        stdout(&o),
        "field,value,count\nk,b,3\nk,a,2\nk,c,1\nv,1,2\nv,(NULL),1\nv,2,1\nv,3,1\n"
    );
    // A column by name, the least frequent first, without empty values.
    let o =
        run_with(&["frequency", "--flexible", "-s", "v", "--asc", "--no-nulls"], data.as_bytes());
    assert_eq!(stdout(&o), "field,value,count\nv,2,1\nv,3,1\nv,1,2\n");
    let o = run_with(&["frequency", "--flexible", "-s", "2,1", "-l", "1"], data.as_bytes());
    assert_eq!(stdout(&o), "field,value,count\nv,1,2\nk,b,3\n");
    // Without a header row: numbered columns, the header counted.
    let o = run_with(&["frequency", "-n", "--flexible", "-s", "1", "-l", "0"], data.as_bytes());
    assert_eq!(stdout(&o), "field,value,count\n1,b,3\n1,a,2\n1,c,1\n1,k,1\n");
    // On two threads the counts of one.
    let mut big = String::from("n,m\n");
    for i in 0..1_000_000 {
        big.push_str(&format!("{},{}\n", i % 7, i % 1000));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.csv");
    std::fs::write(&p, &big).unwrap();
    let p = p.display().to_string();
    let one = ok(&["frequency", "-j", "1", "-l", "0", &p]);
    assert_eq!(one, ok(&["frequency", "-j", "2", "-l", "0", "--chunk-size", "64K", &p]));
    assert!(one.starts_with("field,value,count\nn,0,142858\nn,1,142857\n"), "{one}");
    assert_eq!(one.lines().count(), 1 + 7 + 1000);
    fails(&["frequency", "-s", "nope", &p], 2, "nope");
}

#[test]
fn stats_of_selected_columns() {
    let people = sample("cli_people.csv");
    let all = ok(&["stats", "--csv", &people]);
    let lines: Vec<&str> = all.lines().collect();
    // The selected columns' lines of all of them, in the order asked for.
    let picked = ok(&["stats", "--csv", "-s", "score,1", &people]);
    assert_eq!(picked, format!("{}\n{}\n{}\n", lines[0], lines[4], lines[1]));
    let o = run_with(&["stats", "--csv", "--flexible", "-s", "b"], b"a,b\n1,x\n2\n");
    assert!(stdout(&o).ends_with("\nb,1,0,1,true,1,1,false,false,,x,x,,\n"), "{}", stdout(&o));
    // Without a header row: by number, against the widest record.
    let o = run_with(&["stats", "--csv", "-n", "--flexible", "-s", "2"], b"1\n2,y\n");
    assert!(stdout(&o).ends_with("\n2,1,0,1,true,1,1,false,false,,y,y,,\n"), "{}", stdout(&o));
    fails(&["stats", "-s", "nope", &people], 2, "no column named `nope`");
}

#[test]
fn stats_estimates_large_distinct_counts() {
    let mut data = String::from("n,k\n");
    for i in 0..30_000 {
        data.push_str(&format!("{i},{}\n", i % 7));
    }
    let o = run_with(&["stats", "--json"], data.as_bytes());
    let out = stdout(&o);
    let n = out.lines().nth(1).unwrap();
    assert!(n.contains("\"distinct_exact\":false"), "{n}");
    let d: f64 =
        n.split("\"distinct\":").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    assert!((d - 30_000.0).abs() < 900.0, "{d}");
    assert!(out.lines().nth(2).unwrap().contains("\"distinct\":7,\"distinct_exact\":true"));
}

#[test]
fn dialect_options() {
    let dir = tempfile::tempdir().unwrap();
    let f = temp_file(&dir, "d.csv", b"# exported\na;b\n'x;1'; \\;y\n\xe2\x80\x8bz\x07;2\n");
    let args = [
        "cat",
        "-d",
        ";",
        "--quote",
        "'",
        "--escape",
        "\\",
        "--comment",
        "#",
        "--skip-initial-space",
        "--filter",
        "invisible",
        "--to",
        "tsv",
        &f,
    ];
    assert_eq!(ok(&args), "a\tb\nx;1\t;y\nz\t2\n");
    let no_quote = temp_file(&dir, "nq.csv", b"a,b\n\"x,y\"\n");
    assert_eq!(ok(&["select", "2", "--no-quote", &no_quote]), "b\n\"y\"\"\"\n");
    let dq = temp_file(&dir, "dq.csv", b"a\n\"x\"\"y\"\n");
    assert_eq!(ok(&["cat", "--no-doublequote", "--to", "tsv", &dq]), "a\nx\"y\"\n");
    let strict = temp_file(&dir, "s.csv", b"a\n\"x\"y\n");
    assert_eq!(ok(&["cat", &strict]), "a\nxy\n");
    fails(&["cat", "--strict", &strict], 1, ":2: record 1, byte 5: ',' expected after '\"'");
}

#[test]
fn data_errors_name_path_line_record_and_byte() {
    let bad = sample("cli_bad.csv");
    let e = fails(&["stats", &bad], 1, "found record with 2 fields");
    assert_eq!(
        e,
        format!("fastcsv: {bad}:4: record 3, byte 49: found record with 2 fields, but the previous record has 3 fields\n")
    );
    fails(
        &["select", "name", "--flexible", "--to", "jsonl", &bad],
        1,
        &format!("{bad}:5: record 4, byte 57: invalid UTF-8 in column 2"),
    );
    // JSON output stops before the bad record: no half-written line.
    let o = run(&["cat", "--flexible", "--to", "jsonl", &bad]);
    assert!(stdout(&o).ends_with("}\n"));
    fails(&["cat", "--strict", "--flexible", &bad], 1, "',' expected after '\"'");
}

#[test]
fn io_errors_are_one_line_with_exit_1() {
    fails(&["count", "/no/such/file.csv"], 1, "fastcsv: /no/such/file.csv: No such file");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    fails(&["count", &d], 1, &format!("fastcsv: {d}: Is a directory"));
    fails(&["cat", &d], 1, "Is a directory");
    fails(&["stats", &d], 1, "Is a directory");
    fails(&["headers", "/no/such/file.csv"], 1, "No such file");
    fails(&["check", "/no/such/file.csv"], 1, "No such file");
    fails(&["select", "1", "/no/such/file.csv"], 1, "No such file");
}

#[cfg(target_os = "linux")]
#[test]
fn write_errors_other_than_a_closed_pipe_fail() {
    let people = sample("cli_people.csv");
    for cmd in ["cat", "count", "stats"] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = Command::new(BIN).args([cmd, &people]).stdout(full).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert_eq!(stderr(&o), "fastcsv: write error: No space left on device (os error 28)\n");
    }
}

#[cfg(unix)]
#[test]
fn permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let f = temp_file(&dir, "secret.csv", b"a\n1\n");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads anything: drop to `nobody` with setpriv for this one.
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    let o = if root {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN, "count", &f])
            .output()
            .expect("setpriv (util-linux) is needed to test this as root")
    } else {
        Command::new(BIN).args(["count", &f]).output().unwrap()
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err, format!("fastcsv: {f}: Permission denied (os error 13)\n"));
}

#[test]
fn bad_option_values_are_usage_errors() {
    let people = sample("cli_people.csv");
    fails(&["count", "-d", ";;", &people], 2, "expected one byte");
    fails(&["count", "-d", "", &people], 2, "expected one byte");
    fails(&["count", "--buffer-size", "12X", &people], 2, "unknown unit");
    fails(&["count", "--buffer-size", "0", &people], 2, "at least 1 byte");
    fails(&["count", "--filter", "bogus", &people], 2, "invalid value 'bogus'");
    fails(&["count", "--source", "tape", &people], 2, "invalid value 'tape'");
    fails(&["check", "--max-errors", "0", &people], 2, "--max-errors");
    fails(&["count", "--bogus", &people], 2, "unexpected argument");
    fails(&["count", "--quote", "'", "--no-quote", &people], 2, "cannot be used with");
    fails(&["frobnicate"], 2, "unrecognized subcommand");
    // Valid bytes that make no dialect.
    let e = fails(&["count", "--quote", ",", &people], 2, "delimiter and quote must differ");
    assert_eq!(e, "fastcsv: delimiter and quote must differ\n");
    fails(&["count", "-d", "\\n", &people], 2, "expected one byte");
    fails(&["count", "-d", "\n", &people], 2, "delimiter must not be a record terminator");
}

#[test]
fn broken_pipe_exits_quietly() {
    // Enough output to fill any pipe buffer many times over.
    let mut data = String::from("a,b,c\n");
    for i in 0..200_000 {
        data.push_str(&format!("{i},\"x,{i}\",some text\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let f = temp_file(&dir, "big.csv", data.as_bytes());
    for args in [
        vec!["cat", &f],
        vec!["select", "2,1", &f],
        vec!["cat", "--to", "jsonl", &f],
        vec!["cat", "--to", "tsv", &f],
    ] {
        let mut child = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 100];
        child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
        drop(child.stdout.take()); // like `| head -c 100`
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
    }
}

#[test]
fn progress_bar_only_on_a_terminal() {
    // Over the 64 MiB threshold.
    let dir = tempfile::tempdir().unwrap();
    let line = "0123456789,abcdefghijklmnopqrstuvwxyz,0123456789\n";
    let rows = (65 << 20) / line.len() + 1;
    let f = temp_file(&dir, "big.csv", format!("a,b,c\n{}", line.repeat(rows)).as_bytes());
    // Standard error is a pipe here: no bar.
    let o = run(&["count", &f]);
    assert_eq!(stdout(&o), format!("{rows}\n"));
    assert_eq!(stderr(&o), "");
    // Under a pseudo-terminal (util-linux `script`) the bar is drawn on
    // standard error, with bytes per second and an ETA, unless --quiet.
    let on_tty = |quiet: &str| {
        let cmd = format!("{BIN} count {quiet} {f}");
        let o = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .expect("`script` (util-linux) runs the command on a terminal");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let shown = on_tty("");
    assert!(shown.contains(" MiB ") && shown.contains("/s ETA "), "{shown:?}");
    assert!(shown.contains(&rows.to_string()), "{shown:?}");
    let quiet = on_tty("--quiet");
    assert_eq!(quiet.trim_end(), rows.to_string());
}

#[test]
fn help_has_examples_and_version() {
    for cmd in ["count", "headers", "select", "cat", "check", "stats", "frequency", "bench"] {
        let out = ok(&[cmd, "--help"]);
        assert!(out.contains("Examples:"), "{cmd}: {out}");
        assert!(out.contains(&format!("fastcsv {cmd}")), "{cmd}");
        assert!(out.contains("--delimiter"), "{cmd}");
    }
    let v = ok(&["--version"]);
    assert_eq!(v, format!("fastcsv {}\n", env!("CARGO_PKG_VERSION")));
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bench_table_json_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = String::from("id,name\n");
    for i in 0..3000 {
        data.push_str(&format!("{i},\"n {i}, x\"\n"));
    }
    let file = temp_file(&dir, "bench.csv", data.as_bytes());
    let svg = dir.path().join("plot.svg").display().to_string();

    let table = ok(&["bench", &file, "--sizes", "1K,4K", "--runs", "2", "--plot", &svg]);
    assert!(table.starts_with("bench.csv: "), "{table}");
    assert!(table.contains("3000 rows, work=count,rows, 2 runs each, warm cache, "), "{table}");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if cpus == 1 { "1 thread".to_string() } else { format!("{cpus} threads") };
    assert!(table.lines().next().unwrap().ends_with(&threads), "as `fastcsv count`: {table}");
    for label in ["count  mmap", "count  read 1K", "rows   read 4K", "MB/s", "vs mmap"] {
        assert!(table.contains(label), "{label} in {table}");
    }
    let cmd = format!("(command: fastcsv bench {file} --sizes 1K,4K --runs 2 --plot {svg})");
    assert!(table.contains(&cmd), "{table}");
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("throughput (MB/s)"));
    assert_eq!(svg.matches("class=\"whisker\"").count(), 2 * 3, "{svg}");
    assert_eq!(svg.matches("class=\"cpu-sys\"").count(), 2 * 3, "{svg}");

    let json = ok(&["bench", &file, "--sizes", "64K", "--runs", "1", "--work", "utf8", "--json"]);
    assert!(json.trim_start().starts_with('{') && json.contains("\"work\": \"utf8\""), "{json}");
    assert!(json.contains("\"buffer_size\": 65536"), "{json}");
    assert_eq!(json.matches("\"source\":").count(), 2, "{json}");

    let tsv = temp_file(&dir, "t.tsv", b"a\tb\n1\t2\n");
    let t = ok(&["bench", &tsv, "-d", "tab", "--no-headers", "--sizes", "1K", "--runs", "1"]);
    assert!(t.contains(", 2 rows,"), "{t}");
}

#[test]
fn bench_usage_errors() {
    fails(&["bench", "/dev/null"], 2, "/dev/null: bench needs a regular file");
    fails(&["bench", "/no/such.csv"], 1, "/no/such.csv");
    let o = run(&["bench", "x.csv", "--work", "sing"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["bench", "x.csv", "--runs", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["bench", "x.csv", "--sizes", "1K,huge"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["bench", "x.csv", "--threads", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["bench", "x.csv", "--work", "count,sing"]);
    assert_eq!(o.status.code(), Some(2));
    // No file and no --files.
    let o = run(&["bench"]);
    assert_eq!(o.status.code(), Some(2));
    fails(&["bench", "--files", "/no/such/dir"], 1, "/no/such/dir");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    fails(&["bench", "--files", &d], 2, "no regular files to measure");
    let a = temp_file(&dir, "a.csv", b"x\n1\n");
    let b = temp_file(&dir, "b.csv", b"x\n1\n");
    fails(&["bench", &a, &b, "--threads", "2"], 2, "--threads is for one file");
    fails(&["bench", &a, "-"], 2, "-: bench needs a regular file");
    fails(&["bench", &a, "/dev/null"], 2, "/dev/null: bench needs a regular file");
    // A data error stops `select` (as `fastcsv select`): no figures, exit 1.
    let ragged = temp_file(&dir, "ragged.csv", b"a,b\n1,2\n3\n");
    let e = fails(&["bench", &ragged, "--work", "select", "--runs", "1"], 1, "");
    assert!(e.contains("select stops at a data error") && e.contains("ragged.csv"), "{e}");
    // The row reader skips it and says so; `count` reads flexibly.
    let t = ok(&["bench", &ragged, "--runs", "1", "--sizes", "1K"]);
    assert!(t.contains("(rows: 1 data errors skipped per parse)"), "{t}");
}

#[test]
fn count_counts_ragged_rows() {
    let bad = format!("{}/samples/cli_bad.csv", env!("CARGO_MANIFEST_DIR"));
    let plain = run(&["count", "--flexible", &bad]);
    let o = run(&["count", &bad]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, plain.stdout);
}

/// `cat` copies runs of plain LF records whole and writes the others field
/// by field; `select` of every column always writes field by field. On a
/// file of several batches mixing LF, CRLF, quoted fields, doubled quotes,
/// embedded newlines, empty lines and comments-free text, both agree with
/// each other and with the expected normalisation of a few known records.
#[test]
fn cat_runs_equal_field_by_field_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = b"h1,h2,h3\n".to_vec();
    let mut want = b"h1,h2,h3\n".to_vec();
    for i in 0..5000u32 {
        let (rec, out): (String, String) = match i % 7 {
            0 => (format!("{i},a,b\r\n"), format!("{i},a,b\n")),
            1 => (format!("{i},\"q\",b\n"), format!("{i},q,b\n")),
            2 => (format!("{i},\"x\"\"y\",\"l1\nl2\"\n"), format!("{i},\"x\"\"y\",\"l1\nl2\"\n")),
            3 => (format!("\n{i},,\n"), format!("{i},,\n")),
            _ => (format!("{i},plain,{}\n", i * 3), format!("{i},plain,{}\n", i * 3)),
        };
        data.extend_from_slice(rec.as_bytes());
        want.extend_from_slice(out.as_bytes());
    }
    let f = temp_file(&dir, "mixed.csv", &data);
    let cat = ok(&["cat", &f]);
    assert_eq!(cat.as_bytes(), &want[..]);
    assert_eq!(cat, ok(&["select", "1-3", &f]));
    assert_eq!(cat, ok(&["cat", "--source", "read", "--buffer-size", "4K", &f]));
}

/// A file of quoted line ends, doubled quotes, CRLF and non-ASCII text,
/// read on several threads in chunks of 4 KiB and on one thread: the same
/// output for `count`, `check`, `stats`, `select` and `cat` in every format, and the same
/// failure (message, status, output before it) for a ragged row and for
/// invalid UTF-8 deep in the file.
#[test]
fn several_threads_give_the_same_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = b"id,text,n\n".to_vec();
    for i in 0..20_000 {
        let text = match i % 5 {
            0 => format!("\"a, b\nc {i}\""),
            1 => format!("\"say \"\"{i}\"\"\""),
            2 => format!("plain {i}"),
            3 => "é\u{2028}ü".to_string(),
            _ => String::new(),
        };
        let end = if i % 7 == 0 { "\r\n" } else { "\n" };
        data.extend_from_slice(format!("{i},{text},{}{end}", i * 3).as_bytes());
    }
    let good = temp_file(&dir, "good.csv", &data);
    let at = data.len() * 2 / 3;
    let nl = at + data[at..].iter().position(|&c| c == b'\n').unwrap() + 1;
    let mut ragged = data.clone();
    ragged.splice(nl..nl, b"1,2,3,4\n".iter().copied());
    let ragged = temp_file(&dir, "ragged.csv", &ragged);
    let mut bad_utf8 = data.clone();
    bad_utf8.splice(nl..nl, b"1,\xff,2\n".iter().copied());
    let bad_utf8 = temp_file(&dir, "bad.csv", &bad_utf8);
    let par = ["-j", "3", "--chunk-size", "4K"];
    let cases: Vec<Vec<&str>> = vec![
        vec!["count", &good],
        vec!["count", "--no-headers", &good],
        vec!["select", "text,id", &good],
        vec!["select", "--to", "jsonl", "3,2", &good],
        vec!["select", "--to", "tsv", "!id", &good],
        vec!["cat", &good],
        vec!["cat", "--to", "jsonl", &good],
        vec!["cat", "--to", "tsv", &good, &good],
        vec!["check", &good],
        vec!["check", &ragged],
        vec!["check", "--max-errors", "1", &bad_utf8],
        vec!["stats", &good],
        vec!["stats", "--json", "--no-headers", &good],
        vec!["stats", &ragged],
        vec!["select", "1,2", &ragged],
        vec!["cat", &ragged],
        vec!["cat", "--to", "jsonl", &bad_utf8],
        vec!["select", "--to", "jsonl", "2", &bad_utf8],
    ];
    for case in cases {
        let one = run(&[&case[..1], &["-j", "1"], &case[1..]].concat());
        let many = run(&[&case[..1], &par, &case[1..]].concat());
        assert_eq!(one.status.code(), many.status.code(), "{case:?}");
        assert_eq!(stderr(&one), stderr(&many), "{case:?}");
        assert!(one.stdout == many.stdout, "{case:?}: outputs differ");
        let short = ["count", "stats", "check"].contains(&case[0]);
        assert!(one.stdout.len() > 1000 || short, "{case:?}");
    }
    assert!(stderr(&run(&["select", "1,2", &ragged])).contains("record with 4 fields"));
}

/// Habits xsv users bring: `-n` for `--no-headers`, `headers -j`, `-o FILE`
/// (a tab-separated file by its name), comma-separated CSV output whatever
/// the input delimiter, and `cat rows`.
#[test]
fn xsv_habits() {
    let dir = tempfile::tempdir().unwrap();
    let semi = temp_file(&dir, "semi.csv", b"a;b\n1;\"x,y\"\n2;z\n");
    assert_eq!(ok(&["count", "-n", &semi]), "3\n");
    assert_eq!(ok(&["headers", "-j", &semi]), "a;b\n");
    assert_eq!(ok(&["headers", "-j", "-d", ";", &semi]), "a\nb\n");
    // CSV output is comma-separated, as xsv writes it, unless asked.
    assert_eq!(ok(&["select", "-d", ";", "2,1", &semi]), "b,a\n\"x,y\",1\nz,2\n");
    assert_eq!(
        ok(&["select", "-d", ";", "--out-delimiter", ";", "2,1", &semi]),
        "b;a\nx,y;1\nz;2\n"
    );
    // -o writes the file (a .tsv name gives tabs) and nothing to stdout.
    let out = dir.path().join("out.tsv").display().to_string();
    assert_eq!(ok(&["select", "-d", ";", "2,1", &semi, "-o", &out]), "");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "b\ta\nx,y\t1\nz\t2\n");
    let out = dir.path().join("out.csv").display().to_string();
    assert_eq!(ok(&["cat", "rows", "-d", ";", &semi, &semi, "--output", &out]), "");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a,b\n1,\"x,y\"\n2,z\n1,\"x,y\"\n2,z\n");
    assert_eq!(ok(&["cat", "rows", "-d", ";", &semi]), ok(&["cat", "-d", ";", &semi]));
    assert_eq!(
        ok(&["cat", "columns", "-d", ";", &semi, &semi]),
        "a,b,a,b\n1,\"x,y\",1,\"x,y\"\n2,z,2,z\n"
    );
    // An output that is also an input is refused, and the input kept.
    let err = fails(&["select", "1", &semi, "-o", &semi], 1, "is also an input");
    assert!(err.contains("semi.csv"), "{err}");
    fails(&["cat", &semi, "-o", &semi], 1, "is also an input");
    assert_eq!(std::fs::read(&semi).unwrap(), b"a;b\n1;\"x,y\"\n2;z\n");
    // A misspelt column is a usage error before the output is touched.
    let kept = temp_file(&dir, "kept.csv", b"precious\n");
    fails(&["select", "nope", &semi, "-d", ";", "-o", &kept], 2, "no column named");
    fails(&["select", "9", &semi, "-n", "-o", &kept], 2, "");
    assert_eq!(std::fs::read(&kept).unwrap(), b"precious\n");
    // An output that cannot be created: one line naming it, exit 1.
    let d = dir.path().display().to_string();
    fails(&["select", "1", &semi, "-o", &d], 1, &d);
}

/// `select` of columns in ascending order writes from the bytes the block
/// scanner marks (`Selection::csv_columns`): on a file of several batches
/// with CRLF and LF records, quoted fields that keep their quotes or lose
/// them, doubled quotes, empty and short records (`--flexible`), one
/// thread and several, the output is the `csv` crate's (quoting only
/// where needed) for the same columns of its parsed records.
#[test]
fn select_in_order_equals_a_csv_writer() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = b"a,b,c,d,e\n".to_vec();
    for i in 0..6000u32 {
        let rec = match i % 9 {
            0 => format!("{i},\"q\",,\"x,y\",e{i}\r\n"),
            1 => format!("{i},\"\",\"say \"\"hi\"\"\",,\"\"\n"),
            2 => format!("{i},\"l1\nl2\",plain,\"{}\",z\n", "p".repeat(i as usize % 80)),
            3 => format!("{i},short\n"),
            4 => format!("\"{i}\",b,c,d,e,extra,more\n"),
            _ => format!("{i},{},\"{}\",d{i},\n", "w".repeat(i as usize % 50), i * 7),
        };
        data.extend_from_slice(rec.as_bytes());
    }
    let f = temp_file(&dir, "mixed.csv", &data);
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(&data[..]);
    let records: Vec<csv::ByteRecord> = rdr.byte_records().map(|r| r.unwrap()).collect();
    for cols in [&[0usize][..], &[1], &[4], &[0, 2], &[1, 3, 4], &[0, 1, 2, 3, 4]] {
        let mut w = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::Necessary)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let names = ["a", "b", "c", "d", "e"];
        w.write_record(cols.iter().map(|&c| names[c])).unwrap();
        for r in &records {
            w.write_record(cols.iter().map(|&c| r.get(c).unwrap_or_default())).unwrap();
        }
        let want = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let arg = cols.iter().map(|c| (c + 1).to_string()).collect::<Vec<_>>().join(",");
        assert_eq!(ok(&["select", "--flexible", "-j1", &arg, &f]), want, "{arg}");
        let par = ["select", "--flexible", "-j", "3", "--chunk-size", "4K", &arg, &f];
        assert_eq!(ok(&par), want, "{arg}, 3 threads");
    }
}

/// Standard input can be read once: naming it twice would lose its rows
/// without a word, so it is refused before anything is read.
#[test]
fn stdin_named_twice_is_a_usage_error() {
    let two = sample("cli_people2.csv");
    for args in [
        vec!["cat", "-", "-"],
        vec!["cat", "rows", "-", &two, "-"],
        vec!["count", "-", "-"],
        vec!["count", &two, "-", "-"],
    ] {
        let o = run_with(&args, b"a,b\n1,2\n");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("fastcsv: standard input (`-`) is named more than once"), "{err}");
        assert_eq!(o.stdout, b"", "{args:?}");
    }
}

/// A buffer size past 1 GiB is refused when the arguments are parsed
/// (rather than aborting on a failed allocation); 1 GiB itself is fine.
#[test]
fn buffer_sizes_are_bounded() {
    let people = sample("cli_people.csv");
    for size in ["1000G", "1025M", "1073741825"] {
        let args = ["count", "--buffer-size", size, &people];
        fails(&args, 2, "the buffer size must be at most 1G");
    }
    fails(&["bench", &people, "--sizes", "4K,2G"], 2, "at most 1G");
    assert_eq!(ok(&["count", "--source", "read", "--buffer-size", "1G", &people]), "3\n");
}

/// `cat` compares header rows by their fields as parsed, so a byte order
/// mark or quotes around a name make no difference.
#[test]
fn cat_compares_parsed_header_fields() {
    let dir = tempfile::tempdir().unwrap();
    let five = temp_file(&dir, "five.csv", b"a,b,c,d,e\n1,2,3,4,5\n");
    let bom = temp_file(&dir, "bom.csv", b"\xef\xbb\xbfa,b,c,d,e\n6,7,8,9,10\n");
    let quoted = temp_file(&dir, "quoted.csv", b"\"a\",b,\"c\",d,e\r\n11,12,13,14,15\r\n");
    let all = "a,b,c,d,e\n1,2,3,4,5\n6,7,8,9,10\n11,12,13,14,15\n";
    assert_eq!(ok(&["cat", &five, &bom, &quoted]), all);
    assert_eq!(ok(&["cat", &bom, &quoted]), "a,b,c,d,e\n6,7,8,9,10\n11,12,13,14,15\n");
    // Fields that really differ still stop it.
    let other = temp_file(&dir, "other.csv", b"a,b,c,d,f\n");
    fails(&["cat", &bom, &other], 1, "the header row (a,b,c,d,f) differs from");
}

/// JSON output needs UTF-8 keys as it needs UTF-8 values: a header name
/// that is not UTF-8 stops it with its position, before any output.
#[test]
fn json_output_refuses_header_names_that_are_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let f = temp_file(&dir, "badh.csv", b"a,\xff\xfe,c\n1,2,3\n");
    let want = format!(
        "fastcsv: {f}:1: record 0, byte 0: invalid UTF-8 in the name of column 2 (byte 0 \
         of the name); JSON output needs UTF-8\n"
    );
    for args in [vec!["cat", "--to", "jsonl", &f], vec!["select", "3,2", "--to", "jsonl", &f]] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o), want, "{args:?}");
        assert_eq!(o.stdout, b"", "{args:?}");
    }
    // Columns not written, and other formats, do not need it.
    assert_eq!(ok(&["select", "1,3", "--to", "jsonl", &f]), "{\"a\":\"1\",\"c\":\"3\"}\n");
    assert_eq!(ok(&["select", "3", "--to", "jsonl", "-n", &f]), "[\"c\"]\n[\"3\"]\n");
    assert_eq!(run(&["cat", &f]).status.code(), Some(0));
}

/// Without --flexible, `cat -n` refuses inputs of different widths, as a
/// ragged row inside one input is refused, before anything is written; the
/// first record of standard input, read to compare it, is still written.
#[test]
fn cat_refuses_inputs_of_different_widths() {
    let dir = tempfile::tempdir().unwrap();
    let five = temp_file(&dir, "five.csv", b"a,b,c,d,e\n1,2,3,4,5\n");
    let three = temp_file(&dir, "three.csv", b"a,b,c\n1,2,3\n");
    let o = run(&["cat", "-n", &five, &three]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "fastcsv: {three}:1: record 0, byte 0: found record with 3 fields, but the \
             records of {five} have 5 fields\n"
        )
    );
    assert_eq!(o.stdout, b"");
    let ragged = "a,b,c,d,e\n1,2,3,4,5\na,b,c\n1,2,3\n";
    assert_eq!(ok(&["cat", "-n", "--flexible", &five, &three]), ragged);
    let o = run_with(&["cat", "-n", &five, "-"], b"\n6,7,8,9,10\n11,12,13,14,15\n");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a,b,c,d,e\n1,2,3,4,5\n6,7,8,9,10\n11,12,13,14,15\n");
    let o = run_with(&["cat", "-n", "--to", "jsonl", "-", &five], b"x,\"y\"\"\",z,w,v\n");
    assert_eq!(stdout(&o).lines().next(), Some("[\"x\",\"y\\\"\",\"z\",\"w\",\"v\"]"));
    assert_eq!(stdout(&o).lines().count(), 3);
    let o = run_with(&["cat", "-n", &five, "-"], b"\n1,2\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("fastcsv: <stdin>:2: record 0, byte 1: found record with 2"));
    assert_eq!(o.stdout, b"");
}

/// A range of indices past the last column, or from 0, says so rather
/// than looking for a column of that name.
#[test]
fn select_ranges_out_of_range_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let five = temp_file(&dir, "five.csv", b"a,b,c,d,e\n1,2,3,4,5\n");
    let out_of_range = "fastcsv: column 10 is out of range: there are 5 columns\n";
    assert_eq!(fails(&["select", "1-10", &five], 2, ""), out_of_range);
    assert_eq!(fails(&["select", "b-10", &five], 2, ""), out_of_range);
    assert_eq!(fails(&["select", "-n", "10-1", &five], 2, ""), out_of_range);
    assert_eq!(fails(&["select", "0-2", &five], 2, ""), "fastcsv: column indices start at 1\n");
    assert_eq!(fails(&["select", "3-0", &five], 2, ""), "fastcsv: column indices start at 1\n");
    // A name that is not there is still the error for a range with one.
    fails(&["select", "x-10", &five], 2, "no column named `x-10`");
    assert_eq!(ok(&["select", "4-5", &five]), "d,e\n4,5\n");
}

/// A FILE named `*.tsv` (or `*.tab`) is read as tab-separated when no
/// delimiter is given, as xsv does; `-d` wins; standard input is CSV.
#[test]
fn tsv_files_are_tab_separated_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = temp_file(&dir, "t.tsv", b"a\tb\n1\t\"x,y\"\n");
    let tab = temp_file(&dir, "t.TAB", b"a\tb\n2\t3\n");
    let csv = temp_file(&dir, "c.csv", b"a,b\n4,5\n");
    assert_eq!(ok(&["headers", &tsv]), "1   a\n2   b\n");
    assert_eq!(ok(&["select", "2", &tsv]), "b\n\"x,y\"\n");
    assert_eq!(ok(&["count", &tsv, &tab]), format!("{tsv}\t1\n{tab}\t1\ntotal\t2\n"));
    // Each input by its own name.
    assert_eq!(ok(&["cat", &tsv, &csv, &tab]), "a,b\n1,\"x,y\"\n4,5\n2,3\n");
    assert_eq!(ok(&["headers", "-d", ",", &tsv]), "1   a\tb\n");
    let o = run_with(&["headers", "-"], b"a\tb\n");
    assert_eq!(stdout(&o), "1   a\tb\n");
    let t = ok(&["bench", &tsv, "--sizes", "1K", "--runs", "1", "--json"]);
    assert!(t.contains("\"rows\": 1"), "{t}");
}

/// `select` needs a header row (or, with --no-headers, a first record) to
/// resolve its columns: an input without one is an error, as in xsv.
#[test]
fn select_from_an_input_without_records_fails() {
    let dir = tempfile::tempdir().unwrap();
    let empty = temp_file(&dir, "empty.csv", b"");
    let blank = temp_file(&dir, "blank.csv", b"\n\r\n\n");
    for f in [&empty, &blank] {
        let e = fails(&["select", "1", f], 1, "");
        assert_eq!(e, format!("fastcsv: {f}: no header row to select columns from\n"));
        let e = fails(&["select", "-n", "1", f], 1, "");
        assert_eq!(e, format!("fastcsv: {f}: no record to select columns from\n"));
    }
    let o = run_with(&["select", "a"], b"\n");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "fastcsv: <stdin>: no header row to select columns from\n");
    // The -o file is left alone.
    let kept = temp_file(&dir, "kept.csv", b"precious\n");
    fails(&["select", "1", &empty, "-o", &kept], 1, "no header row");
    assert_eq!(std::fs::read(&kept).unwrap(), b"precious\n");
    // A header row alone selects from it.
    let header = temp_file(&dir, "header.csv", b"a,b\n");
    assert_eq!(ok(&["select", "2", &header]), "b\n");
}

/// `bench -` says bench needs a regular file, not that `-` is missing.
#[test]
fn bench_refuses_standard_input() {
    let e = fails(&["bench", "-"], 2, "");
    assert_eq!(e, "fastcsv: -: bench needs a regular file (it reads the file many times)\n");
}

#[test]
fn parts_start_at_records_and_cover_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = String::from("id,note\n");
    for i in 0..200 {
        data.push_str(&format!("{i},\"two\nlines, \"\"quoted\"\"\"\n"));
    }
    let path = temp_file(&dir, "p.csv", data.as_bytes());
    let out = ok(&["parts", "--size", "1K", &path]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("part,start,end,lines,records"));
    let rows: Vec<Vec<u64>> =
        lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
    assert_eq!(rows.len(), data.len().div_ceil(1024));
    let mut at = 0;
    for (k, r) in rows.iter().enumerate() {
        assert_eq!((r[0], r[1]), (k as u64, at));
        at = r[2];
        // Every part but the first starts after a record: line 1 is the
        // header, then two lines a record.
        if k > 0 && r[1] < data.len() as u64 {
            assert_eq!(&data[r[1] as usize..][..1].parse::<u64>().is_ok(), &true);
            assert_eq!(r[2 + 1], 1 + 2 * (r[4] - 1));
        }
    }
    assert_eq!(at, data.len() as u64);
    let json = ok(&["parts", "-s", "1K", "--json", &path]);
    assert!(json.starts_with("{\"part\":0,\"start\":0,"), "{json}");
    fails(&["parts", "-"], 2, "standard input cannot be cut");
    // A pipe named by a path (`<(cmd)`, `/dev/stdin`) or a device has no
    // byte ranges: not one empty part with exit status 0.
    fails(&["parts", "/dev/stdin"], 2, "/dev/stdin: parts needs a regular file");
    fails(&["parts", "/dev/null"], 2, "/dev/null: parts needs a regular file");
    fails(&["parts", &format!("{path}.missing")], 1, "p.csv.missing");
    fails(&["parts", "--size", "0", &path], 2, "");
}
