//! The `fastcsv` command-line tool (in progress).
fn main() {}
