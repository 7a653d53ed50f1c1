//! The README's Rust API tour, kept compiling and runnable:
//! `cargo run --example tour`.
use fastcsv::{Dialect, Filter, Reader, Selection, SourceChoice};

fn main() -> Result<(), fastcsv::Error> {
    // A path: mapped when it is a regular file, read() otherwise.
    let mut rdr = Reader::from_path("samples/people.csv")?;
    println!("source: {:?} ({})", rdr.source_kind(), rdr.source_reason());
    let headers = rdr.headers()?.cloned().unwrap_or_default();
    println!("columns: {}", headers.len());
    while let Some(row) = rdr.read_row()? {
        // Fields borrow the mapped file unless they needed unescaping.
        let name = row.get_str(1)?;
        println!("{} at line {}", name, row.position().line);
    }

    // Any dialect Python's csv module knows, plus comments, custom
    // terminators, trimming and non-visible character filtering.
    let d =
        Dialect::builder().delimiter(b';').comment(Some(b'#')).filter(Filter::Controls).build()?;
    let mut rdr = Reader::builder()
        .dialect(d)
        .source(SourceChoice::Buffered)
        .buffer_size(64 * 1024)
        .from_path("samples/comments.csv")?;
    for row in rdr.rows() {
        let row = row?;
        println!("{:?}", row);
    }

    // A few columns of a big file: batches of records in which only the
    // chosen columns are located; the fields in between are never built.
    let mut rdr = Reader::from_path("samples/people.csv")?;
    let mut sel = Selection::new([4, 1]);
    while let Some(batch) = rdr.read_batch(&mut sel)? {
        for row in batch.iter() {
            let (amount, name) = (row.get(0), row.get(1));
            println!("{}: {}", String::from_utf8_lossy(name), String::from_utf8_lossy(amount));
        }
    }
    Ok(())
}
