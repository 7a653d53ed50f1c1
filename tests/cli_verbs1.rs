//! End-to-end tests of `sort`, `join`, `sample`, `split`, `partition` and
//! `dedup`: outputs compared with those of xsv 0.13 on small samples (the
//! expected bytes are xsv's, committed here: xsv is not needed to run
//! them), every flag, bad input, usage errors and failed writes.

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fastcsv");

/// People: a quoted field, a field with a comma, numbers, a NaN, an empty
/// value and a non-number.
const S: &str = "name,num,city
bob,10,\"New York\"
alice,9,Paris
\"carl\",x,\"Oslo, NO\"
dan,1.5,Paris
eve,,Rome
al,-3,Paris
zed,NaN,Rome
bob,2,Paris
";

/// Cities: a key with spaces around it, one in lower case, an empty one.
const T: &str = "city,country
paris,FR
Rome ,IT
oslo,NO
,XX
Paris,FR2
";

/// A directory with the samples written to it.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        let d = Dir(tempfile::tempdir().unwrap());
        d.write("s.csv", S);
        d.write("t.csv", T);
        d
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn p(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
    fn write(&self, name: &str, data: &str) -> String {
        std::fs::write(self.path(name), data).unwrap();
        self.p(name)
    }
}

fn run_in(d: &Dir, args: &[&str], stdin: &[u8]) -> Output {
    let args: Vec<String> = args
        .iter()
        .map(|a| match *a {
            "S" => d.p("s.csv"),
            "T" => d.p("t.csv"),
            a => a.to_string(),
        })
        .collect();
    let mut cmd = Command::new(BIN);
    cmd.args(&args).current_dir(d.0.path());
    cli_support::feed(cmd, stdin)
}

fn ok(d: &Dir, args: &[&str]) -> String {
    let o = run_in(d, args, b"");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    assert_eq!(err, "", "{args:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// Asserts exit status `code` and one line on standard error holding
/// `needle`.
fn fails(d: &Dir, args: &[&str], code: i32, needle: &str) -> String {
    let o = run_in(d, args, b"");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    if code == 1 {
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("fastcsv: "), "{err}");
    }
    err
}

fn xsv_case(args: &[&str], expected: &str) {
    let d = Dir::new();
    assert_eq!(ok(&d, args), expected, "{args:?}");
}

/// The outputs of xsv 0.13 for the same arguments.
#[test]
fn same_output_as_xsv() {
    xsv_case(
        &["sort", "-s", "name", "S"],
        r#"name,num,city
al,-3,Paris
alice,9,Paris
bob,10,New York
bob,2,Paris
carl,x,"Oslo, NO"
dan,1.5,Paris
eve,,Rome
zed,NaN,Rome
"#,
    );
    xsv_case(
        &["sort", "-N", "-s", "num", "S"],
        r#"name,num,city
carl,x,"Oslo, NO"
eve,,Rome
al,-3,Paris
dan,1.5,Paris
alice,9,Paris
bob,10,New York
zed,NaN,Rome
bob,2,Paris
"#,
    );
    xsv_case(
        &["sort", "-N", "-R", "-s", "num", "S"],
        r#"name,num,city
bob,10,New York
alice,9,Paris
dan,1.5,Paris
al,-3,Paris
zed,NaN,Rome
bob,2,Paris
carl,x,"Oslo, NO"
eve,,Rome
"#,
    );
    xsv_case(
        &["sort", "-R", "-s", "city", "S"],
        r#"name,num,city
eve,,Rome
zed,NaN,Rome
alice,9,Paris
dan,1.5,Paris
al,-3,Paris
bob,2,Paris
carl,x,"Oslo, NO"
bob,10,New York
"#,
    );
    xsv_case(
        &["sort", "S"],
        r#"name,num,city
al,-3,Paris
alice,9,Paris
bob,10,New York
bob,2,Paris
carl,x,"Oslo, NO"
dan,1.5,Paris
eve,,Rome
zed,NaN,Rome
"#,
    );
    xsv_case(
        &["sort", "-s", "city,name", "S"],
        r#"name,num,city
bob,10,New York
carl,x,"Oslo, NO"
al,-3,Paris
alice,9,Paris
bob,2,Paris
dan,1.5,Paris
eve,,Rome
zed,NaN,Rome
"#,
    );
    xsv_case(
        &["sort", "-n", "-s", "1", "S"],
        r#"al,-3,Paris
alice,9,Paris
bob,10,New York
bob,2,Paris
carl,x,"Oslo, NO"
dan,1.5,Paris
eve,,Rome
name,num,city
zed,NaN,Rome
"#,
    );
    xsv_case(
        &["join", "city", "S", "city", "T"],
        r#"name,num,city,city,country
alice,9,Paris,Paris,FR2
dan,1.5,Paris,Paris,FR2
eve,,Rome,Rome ,IT
al,-3,Paris,Paris,FR2
zed,NaN,Rome,Rome ,IT
bob,2,Paris,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "--left", "city", "S", "city", "T"],
        r#"name,num,city,city,country
bob,10,New York,,
alice,9,Paris,Paris,FR2
carl,x,"Oslo, NO",,
dan,1.5,Paris,Paris,FR2
eve,,Rome,Rome ,IT
al,-3,Paris,Paris,FR2
zed,NaN,Rome,Rome ,IT
bob,2,Paris,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "--right", "city", "S", "city", "T"],
        r#"name,num,city,city,country
,,,paris,FR
eve,,Rome,Rome ,IT
zed,NaN,Rome,Rome ,IT
,,,oslo,NO
,,,,XX
alice,9,Paris,Paris,FR2
dan,1.5,Paris,Paris,FR2
al,-3,Paris,Paris,FR2
bob,2,Paris,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "--full", "city", "S", "city", "T"],
        r#"name,num,city,city,country
bob,10,New York,,
alice,9,Paris,Paris,FR2
carl,x,"Oslo, NO",,
dan,1.5,Paris,Paris,FR2
eve,,Rome,Rome ,IT
al,-3,Paris,Paris,FR2
zed,NaN,Rome,Rome ,IT
bob,2,Paris,Paris,FR2
,,,paris,FR
,,,oslo,NO
,,,,XX
"#,
    );
    xsv_case(
        &["join", "--cross", "city", "S", "city", "T"],
        r#"name,num,city,city,country
bob,10,New York,paris,FR
bob,10,New York,Rome ,IT
bob,10,New York,oslo,NO
bob,10,New York,,XX
bob,10,New York,Paris,FR2
alice,9,Paris,paris,FR
alice,9,Paris,Rome ,IT
alice,9,Paris,oslo,NO
alice,9,Paris,,XX
alice,9,Paris,Paris,FR2
carl,x,"Oslo, NO",paris,FR
carl,x,"Oslo, NO",Rome ,IT
carl,x,"Oslo, NO",oslo,NO
carl,x,"Oslo, NO",,XX
carl,x,"Oslo, NO",Paris,FR2
dan,1.5,Paris,paris,FR
dan,1.5,Paris,Rome ,IT
dan,1.5,Paris,oslo,NO
dan,1.5,Paris,,XX
dan,1.5,Paris,Paris,FR2
eve,,Rome,paris,FR
eve,,Rome,Rome ,IT
eve,,Rome,oslo,NO
eve,,Rome,,XX
eve,,Rome,Paris,FR2
al,-3,Paris,paris,FR
al,-3,Paris,Rome ,IT
al,-3,Paris,oslo,NO
al,-3,Paris,,XX
al,-3,Paris,Paris,FR2
zed,NaN,Rome,paris,FR
zed,NaN,Rome,Rome ,IT
zed,NaN,Rome,oslo,NO
zed,NaN,Rome,,XX
zed,NaN,Rome,Paris,FR2
bob,2,Paris,paris,FR
bob,2,Paris,Rome ,IT
bob,2,Paris,oslo,NO
bob,2,Paris,,XX
bob,2,Paris,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "--no-case", "city", "S", "city", "T"],
        r#"name,num,city,city,country
alice,9,Paris,paris,FR
alice,9,Paris,Paris,FR2
dan,1.5,Paris,paris,FR
dan,1.5,Paris,Paris,FR2
eve,,Rome,Rome ,IT
al,-3,Paris,paris,FR
al,-3,Paris,Paris,FR2
zed,NaN,Rome,Rome ,IT
bob,2,Paris,paris,FR
bob,2,Paris,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "--nulls", "--full", "num", "S", "country", "T"],
        r#"name,num,city,city,country
bob,10,New York,,
alice,9,Paris,,
carl,x,"Oslo, NO",,
dan,1.5,Paris,,
eve,,Rome,,
al,-3,Paris,,
zed,NaN,Rome,,
bob,2,Paris,,
,,,paris,FR
,,,Rome ,IT
,,,oslo,NO
,,,,XX
,,,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "--nulls", "city", "S", "city", "T"],
        r#"name,num,city,city,country
alice,9,Paris,Paris,FR2
dan,1.5,Paris,Paris,FR2
eve,,Rome,Rome ,IT
al,-3,Paris,Paris,FR2
zed,NaN,Rome,Rome ,IT
bob,2,Paris,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "-n", "3", "S", "1", "T"],
        r#"name,num,city,city,country
alice,9,Paris,Paris,FR2
dan,1.5,Paris,Paris,FR2
eve,,Rome,Rome ,IT
al,-3,Paris,Paris,FR2
zed,NaN,Rome,Rome ,IT
bob,2,Paris,Paris,FR2
"#,
    );
    xsv_case(
        &["join", "name,city", "S", "name,city", "S"],
        r#"name,num,city,name,num,city
bob,10,New York,bob,10,New York
alice,9,Paris,alice,9,Paris
carl,x,"Oslo, NO",carl,x,"Oslo, NO"
dan,1.5,Paris,dan,1.5,Paris
eve,,Rome,eve,,Rome
al,-3,Paris,al,-3,Paris
zed,NaN,Rome,zed,NaN,Rome
bob,2,Paris,bob,2,Paris
"#,
    );
    xsv_case(
        &["sample", "100", "S"],
        r#"name,num,city
bob,10,New York
alice,9,Paris
carl,x,"Oslo, NO"
dan,1.5,Paris
eve,,Rome
al,-3,Paris
zed,NaN,Rome
bob,2,Paris
"#,
    );
}

/// A file of `n` records with repeated, quoted, numeric and non-numeric
/// keys, for the external sort.
fn generated(n: usize) -> String {
    let mut s = String::from("id,val,txt\n");
    let mut x: u64 = 12345;
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let r = (x >> 33) as usize;
        let val = match r % 4 {
            0 => format!("{}", (r % 2001) as i64 - 1000),
            1 => format!("{}.{}", r % 100, r % 7),
            2 => "x".to_string(),
            _ => String::new(),
        };
        let txt = ["a", "b b", "c,c", "d\"q"][r % 4];
        s.push_str(&format!("{i},{val},\"{txt}{}\"\n", r % 50));
    }
    s
}

#[test]
fn sort_past_memory_merges_runs_with_the_same_output() {
    let d = Dir::new();
    let f = d.write("g.csv", &generated(20_000));
    let tmp = d.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let tmp = tmp.display().to_string();
    for args in [&["-s", "txt"][..], &["-N", "-s", "val"], &["-N", "-R", "-s", "val,txt"], &[]] {
        let mem: Vec<&str> = [&["sort"][..], args, &[f.as_str()]].concat();
        let ext: Vec<&str> =
            [&["sort", "--memory", "64K", "--tmp-dir", tmp.as_str()][..], args, &[f.as_str()]]
                .concat();
        let one: Vec<&str> = [&["sort", "-j", "1"][..], args, &[f.as_str()]].concat();
        let a = ok(&d, &mem);
        assert_eq!(a.lines().count(), 20_001);
        assert_eq!(a, ok(&d, &ext), "{args:?}");
        assert_eq!(a, ok(&d, &one), "{args:?}");
    }
    // The runs are gone.
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    // Sorted by txt, then stable: ids ascending within equal keys.
    let out = ok(&d, &["sort", "-s", "txt", "--memory", "32K", "--tmp-dir", &tmp, &f]);
    let mut prev: Option<(String, u64)> = None;
    for rec in csv::Reader::from_reader(out.as_bytes()).records() {
        let rec = rec.unwrap();
        let (id, txt) = (rec[0].parse::<u64>().unwrap(), rec[2].to_string());
        if let Some((pt, pid)) = &prev {
            assert!(pt < &txt || (pt == &txt && *pid < id), "{pt} {pid} / {txt} {id}");
        }
        prev = Some((txt, id));
    }
}

#[test]
fn sort_options() {
    let d = Dir::new();
    // Standard input, an output file, JSON lines, --memory units.
    let o = run_in(&d, &["sort", "-s", "num", "-N", "--memory", "1M"], S.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8(o.stdout).unwrap().starts_with("name,num,city\ncarl,x,"));
    ok(&d, &["sort", "-s", "name", "-o", "out.csv", "S"]);
    let out = std::fs::read_to_string(d.path("out.csv")).unwrap();
    assert!(out.starts_with("name,num,city\nal,-3,Paris\n"), "{out}");
    let j = ok(&d, &["sort", "-s", "name", "--to", "jsonl", "S"]);
    assert!(j.starts_with("{\"name\":\"al\",\"num\":\"-3\",\"city\":\"Paris\"}\n"), "{j}");
    let semi = d.write("semi.csv", "a;b\n2;x\n1;y\n");
    assert_eq!(ok(&d, &["sort", "-d", ";", "-s", "a", &semi]), "a,b\n1,y\n2,x\n");
    assert_eq!(
        ok(&d, &["sort", "-d", ";", "-s", "a", "--out-delimiter", ";", &semi]),
        "a;b\n1;y\n2;x\n"
    );
    fails(&d, &["sort", "--memory", "12X", "S"], 2, "unknown unit");
    fails(&d, &["sort", "-s", "nope", "S"], 2, "nope");
    let none = d.p("none");
    fails(&d, &["sort", "--memory", "1K", "--tmp-dir", &none, "S"], 1, "temporary file");
    // An empty input, and one with only a header row.
    let empty = d.write("empty.csv", "");
    assert_eq!(ok(&d, &["sort", "-s", "a", &empty]), "");
    let head = d.write("head.csv", "a,b\n");
    assert_eq!(ok(&d, &["sort", "-s", "b", &head]), "a,b\n");
    assert_eq!(ok(&d, &["sort", "-n", "-s", "2", &empty]), "");
}

#[test]
fn join_options() {
    let d = Dir::new();
    fails(&d, &["join", "name,city", "S", "city", "T"], 2, "same number of columns");
    fails(&d, &["join", "nope", "S", "city", "T"], 2, "nope");
    fails(&d, &["join", "--left", "--right", "city", "S", "city", "T"], 2, "cannot be used");
    fails(&d, &["join", "city", "-", "city", "-"], 2, "more than once");
    // FILE1 on standard input.
    let o = run_in(&d, &["join", "city", "-", "city", "T"], S.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8(o.stdout).unwrap().contains("alice,9,Paris,Paris,FR2\n"));
    ok(&d, &["join", "-o", "j.csv", "city", "S", "city", "T"]);
    let j = std::fs::read_to_string(d.path("j.csv")).unwrap();
    assert_eq!(j.lines().count(), 7);
    let e = ok(&d, &["join", "city", "S", "city", "T", "--to", "jsonl"]);
    assert!(e.starts_with("{\"name\":\"alice\""), "{e}");
}

/// An empty input has no header row and no columns. An inner or cross
/// join with it writes nothing; an outer join writes the other side's
/// records, padded with no field, after that side's header row (it wrote
/// the records without any header row).
#[test]
fn an_outer_join_with_an_empty_input_keeps_the_header_row() {
    let d = Dir::new();
    let a = d.write("a.csv", "k,v\n1,x\n");
    let (empty, blank) = (d.write("empty.csv", ""), d.write("blank.csv", "\n\n"));
    for e in [empty.as_str(), blank.as_str()] {
        let a = a.as_str();
        assert_eq!(ok(&d, &["join", "k", a, "k", e]), "");
        assert_eq!(ok(&d, &["join", "--cross", "k", a, "k", e]), "");
        assert_eq!(ok(&d, &["join", "--left", "k", e, "k", a]), "");
        assert_eq!(ok(&d, &["join", "--right", "k", a, "k", e]), "");
        assert_eq!(ok(&d, &["join", "--full", "k", e, "k", e]), "");
        for args in [
            ["--left", "k", a, "k", e],
            ["--right", "k", e, "k", a],
            ["--full", "k", a, "k", e],
            ["--full", "k", e, "k", a],
        ] {
            let args = [&["join"][..], &args].concat();
            assert_eq!(ok(&d, &args), "k,v\n1,x\n", "{args:?}");
            let json = ok(&d, &[&args[..], &["--to", "jsonl"]].concat());
            assert_eq!(json, "{\"k\":\"1\",\"v\":\"x\"}\n", "{args:?}");
        }
    }
}

#[test]
fn sample_options() {
    let d = Dir::new();
    let a = ok(&d, &["sample", "--seed", "7", "3", "S"]);
    assert_eq!(a, ok(&d, &["sample", "--seed", "7", "3", "S"]));
    let lines: Vec<&str> = a.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], "name,num,city");
    assert_eq!(ok(&d, &["sample", "0", "S"]), "name,num,city\n");
    let n = ok(&d, &["sample", "-n", "100", "S"]);
    assert!(n.starts_with("name,num,city\n") && n.lines().count() == 9);
    // Uniform: each of 10 records is drawn about as often.
    let ten = d.write("ten.csv", &(0..10).map(|i| format!("{i}\n")).collect::<String>());
    let mut counts = [0u32; 10];
    for seed in 0..300 {
        for l in ok(&d, &["sample", "-n", "--seed", &seed.to_string(), "2", &ten]).lines() {
            counts[l.parse::<usize>().unwrap()] += 1;
        }
    }
    assert!(counts.iter().all(|&c| (30..=90).contains(&c)), "{counts:?}");
    fails(&d, &["sample", "x", "S"], 2, "invalid");
    // A mapped file (two passes) and a pipe (one) pick the same records.
    let g = generated(20_000);
    let f = d.write("g.csv", &g);
    for seed in ["1", "2", "3"] {
        let o = run_in(&d, &["sample", "--seed", seed, "25"], g.as_bytes());
        assert_eq!(o.status.code(), Some(0));
        let piped = String::from_utf8(o.stdout).unwrap();
        assert_eq!(piped.lines().count(), 26);
        assert_eq!(ok(&d, &["sample", "--seed", seed, "25", &f]), piped);
    }
}

fn files(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn split_as_xsv() {
    let d = Dir::new();
    ok(&d, &["split", "-s", "3", "out", "S"]);
    let h = "name,num,city\n";
    assert_eq!(
        files(&d.path("out")),
        vec![
            ("0.csv".into(), format!("{h}bob,10,New York\nalice,9,Paris\ncarl,x,\"Oslo, NO\"\n")),
            ("3.csv".into(), format!("{h}dan,1.5,Paris\neve,,Rome\nal,-3,Paris\n")),
            ("6.csv".into(), format!("{h}zed,NaN,Rome\nbob,2,Paris\n")),
        ]
    );
    ok(&d, &["split", "-n", "-s", "4", "--filename", "p{}.tsv", "nh", "S"]);
    let f = files(&d.path("nh"));
    assert_eq!(f.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["p0.tsv", "p4.tsv", "p8.tsv"]);
    assert!(f[0].1.starts_with("name\tnum\tcity\nbob\t10\tNew York\n"), "{}", f[0].1);
    // Equal chunks cut at record starts: every record once, in order.
    let g = d.write("g.csv", &generated(1000));
    ok(&d, &["split", "--chunks", "4", "ch", &g]);
    let f = files(&d.path("ch"));
    assert!(f.len() >= 3 && f.len() <= 4, "{:?}", f.iter().map(|x| &x.0).collect::<Vec<_>>());
    let mut starts: Vec<(u64, String)> =
        f.into_iter().map(|(n, c)| (n.trim_end_matches(".csv").parse().unwrap(), c)).collect();
    starts.sort();
    let mut all = String::from("id,val,txt\n");
    let mut next = 0u64;
    for (start, c) in &starts {
        assert_eq!(*start, next);
        let body = c.strip_prefix("id,val,txt\n").unwrap();
        next += body.lines().count() as u64;
        all.push_str(body);
    }
    assert_eq!(all, ok(&d, &["sort", "-s", "id", "-N", &g]));
    // A header row alone still gives 0.csv, as in xsv.
    let head = d.write("head.csv", "a,b\n");
    ok(&d, &["split", "ho", &head]);
    assert_eq!(files(&d.path("ho")), vec![("0.csv".into(), "a,b\n".into())]);
    fails(&d, &["split", "--filename", "x.csv", "o", "S"], 2, "{}");
    fails(&d, &["split", "--chunks", "2", "o"], 2, "standard input");
    fails(&d, &["split", "-s", "0", "o", "S"], 2, "0");
}

#[test]
fn partition_as_xsv() {
    let d = Dir::new();
    ok(&d, &["partition", "city", "out", "S"]);
    let names: Vec<String> = files(&d.path("out")).into_iter().map(|x| x.0).collect();
    assert_eq!(names, ["NewYork.csv", "OsloNO.csv", "Paris.csv", "Rome.csv"]);
    assert_eq!(
        std::fs::read_to_string(d.path("out/Paris.csv")).unwrap(),
        "name,num,city\nalice,9,Paris\ndan,1.5,Paris\nal,-3,Paris\nbob,2,Paris\n"
    );
    ok(&d, &["partition", "-p", "1", "--drop", "--filename", "c-{}.csv", "city", "p1", "S"]);
    let f = files(&d.path("p1"));
    let names: Vec<&str> = f.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["c-N.csv", "c-O.csv", "c-P.csv", "c-R.csv"]);
    assert_eq!(f[3].1, "name,num\neve,\nzed,NaN\n");
    // Collisions and empty values, as xsv names them.
    let c = d.write("c.csv", "k,v\na b,1\nab,2\n,3\n!,4\n");
    ok(&d, &["partition", "k", "col", &c]);
    let names: Vec<String> = files(&d.path("col")).into_iter().map(|x| x.0).collect();
    assert_eq!(names, ["ab.csv", "ab_1.csv", "empty.csv", "empty_2.csv"]);
    ok(&d, &["partition", "-n", "1", "nh", &c]);
    assert_eq!(std::fs::read_to_string(d.path("nh/k.csv")).unwrap(), "k,v\n");
    fails(&d, &["partition", "name,city", "o", "S"], 2, "one column");
    fails(&d, &["partition", "--filename", "{}{}", "city", "o", "S"], 2, "{}");
}

#[test]
fn dedup_keeps_first() {
    let d = Dir::new();
    let f = d.write("d.csv", "a,b\n1,x\n\"1\",x\n2,x\n1,y\n2,x\n");
    assert_eq!(ok(&d, &["dedup", &f]), "a,b\n1,x\n2,x\n1,y\n");
    assert_eq!(ok(&d, &["dedup", "-s", "b", &f]), "a,b\n1,x\n1,y\n");
    assert_eq!(ok(&d, &["dedup", "-n", "-s", "2", &f]), "a,b\n1,x\n1,y\n");
    // Fields are compared as a list: "a,b" and "a","b" differ.
    let g = d.write("g.csv", "x\n\"a,b\"\na\n\"a,b\"\n");
    assert_eq!(ok(&d, &["dedup", &g]), "x\n\"a,b\"\na\n");
    assert_eq!(ok(&d, &["dedup", "S"]).lines().count(), 9);
}

/// Ragged input: one line on standard error with the position, exit 1.
#[test]
fn bad_input_is_reported_with_its_position() {
    let d = Dir::new();
    let bad = d.write("bad.csv", "a,b\n1,2\n3\n");
    let runs: [&[&str]; 7] = [
        &["sort", "BAD"],
        &["join", "a", "BAD", "city", "T"],
        &["sample", "5", "BAD"],
        &["split", "o1", "BAD"],
        &["partition", "a", "o2", "BAD"],
        &["dedup", "BAD"],
        &["split", "--chunks", "2", "o3", "BAD"],
    ];
    for args in runs {
        let args: Vec<&str> =
            args.iter().map(|a| if *a == "BAD" { bad.as_str() } else { a }).collect();
        let e = fails(&d, &args, 1, &format!("{bad}:3: record 2, byte 8"));
        assert!(e.contains("fields"), "{e}");
    }
    fails(&d, &["sort", "missing.csv"], 1, "missing.csv");
}

/// A failed write is an error (exit 1), a closed pipe is not.
#[test]
fn write_failures() {
    let d = Dir::new();
    let g = d.write("g.csv", &generated(20_000));
    let runs: [&[&str]; 5] = [
        &["sort", "-s", "txt", "G"],
        &["join", "--cross", "id", "G", "id", "G"],
        &["sample", "10", "G"],
        &["dedup", "G"],
        &["sort", "--memory", "64K", "G"],
    ];
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    for args in runs {
        let args: Vec<&str> = args.iter().map(|a| if *a == "G" { g.as_str() } else { a }).collect();
        if let Ok(full) = &full {
            let o = Command::new(BIN)
                .args(&args)
                .stdout(full.try_clone().unwrap())
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.starts_with("fastcsv: write error: "), "{err}");
            assert_eq!(err.lines().count(), 1);
        }
        // A reader that stops early: quiet, exit 0.
        let mut cmd = Command::new(BIN);
        cmd.args(&args);
        let o = cli_support::close_after(cmd, 10);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{args:?}");
    }
    // An output directory that cannot be created, a file that cannot be.
    let file = d.write("file", "");
    fails(&d, &["split", &format!("{file}/sub"), "S"], 1, "file/sub");
    fails(&d, &["partition", "city", &format!("{file}/sub"), "S"], 1, "file/sub");
}
