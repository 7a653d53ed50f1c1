//! What the CLI's end-to-end test files share: running the binary with
//! bytes on its standard input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `cmd` (the binary, with its arguments, directory and environment
/// set) with `stdin` as its standard input, written from a thread of its
/// own so that a large input cannot block on a full output pipe, and
/// waits for it. A command that stops reading early is not a failure.
pub fn feed(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().expect("a piped standard input");
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("the binary ends");
    feeder.join().expect("the feeder thread ends");
    out
}

/// Runs `cmd`, reads the first `n` bytes of its standard output and closes
/// it, as `| head -c N` would, then waits for it: for the commands that
/// must then stop quietly. (Not every test file that includes this module
/// uses it.)
#[allow(dead_code)]
pub fn close_after(mut cmd: Command, n: usize) -> Output {
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("the binary runs");
    let mut out = child.stdout.take().expect("a piped standard output");
    let mut first = vec![0u8; n];
    std::io::Read::read_exact(&mut out, &mut first).expect("the first bytes come");
    drop(out);
    child.wait_with_output().expect("the binary ends")
}
