//! `fastcsv`: the command-line tool. Argument parsing lives in
//! `cli::args`, the commands in `cli::commands`; this file only dispatches
//! and turns failures into messages and exit statuses:
//!
//! * 0: success, or standard output was closed early (`| head`);
//! * 1: a data or I/O error (one line on standard error: `fastcsv: ...`),
//!   writing (or closing) standard output failing otherwise (`>/dev/full`,
//!   `>&-`: `fastcsv: <stdout>: ERROR`), or `check` found problems;
//! * 2: a usage error (clap's own, or a bad column or dialect setting).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use cli::args::{Cli, Command};
use cli::{commands, Failure};

fn main() -> ExitCode {
    // Before anything is opened (see `cli::stdout`).
    cli::stdout::init();
    let mut cli = Cli::parse_from(cli::args::headers_jobs(std::env::args_os()));
    cli.command.cap_threads();
    let result = match &cli.command {
        Command::Count(a) => commands::count(a),
        Command::Headers(a) => commands::headers(a),
        Command::Select(a) => commands::select(a),
        Command::Cat(a) => commands::cat(a),
        Command::Slice(a) => commands::slice(a),
        Command::Search(a) => cli::search::search(a),
        Command::Check(a) => commands::check(a),
        Command::Stats(a) => commands::stats(a),
        Command::Frequency(a) => commands::frequency(a),
        Command::Bench(a) => commands::bench(a),
        Command::Parts(a) => commands::parts(a),
        Command::Table(a) => cli::table::run(a),
        Command::Fmt(a) => cli::fmt::run(a),
        Command::Flatten(a) => cli::flatten::run(a),
        Command::Fixlengths(a) => cli::fixlengths::run(a),
        Command::Input(a) => cli::input::run(a),
        Command::Sort(a) => cli::sort::sort(a),
        Command::Join(a) => cli::join::join(a),
        Command::Sample(a) => cli::sample::sample(a),
        Command::Split(a) => cli::split::split(a),
        Command::Partition(a) => cli::partition::partition(a),
        Command::Dedup(a) => cli::dedup::dedup(a),
    };
    // Closing standard output is the last chance for a write error to
    // show (a full disk behind NFS): it fails the command too.
    let result = match result {
        Ok(()) => cli::stdout::close().map_err(Failure::from),
        Err(Failure::Reported) => {
            cli::stdout::close().map_err(Failure::from).and(Err(Failure::Reported))
        }
        other => other,
    };
    let (message, code) = match result {
        Ok(()) | Err(Failure::BrokenPipe) => return ExitCode::SUCCESS,
        Err(Failure::Reported) => return ExitCode::from(1),
        Err(Failure::Fatal(m)) => (m, 1),
        Err(Failure::Usage(m)) => (m, 2),
    };
    // Nothing sensible is left to do if standard error is gone too.
    let _ = writeln!(std::io::stderr().lock(), "fastcsv: {message}");
    ExitCode::from(code)
}
