//! Placeholder; the criterion benches land with the speed work.
fn main() {}
