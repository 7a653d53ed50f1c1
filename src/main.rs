//! The `fastcsv` command-line tool (placeholder until the CLI lands).

fn main() {}
