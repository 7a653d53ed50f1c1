//! [`Part`]: one part of a split input. It lives below the reader, which
//! reads parts ([`ReaderBuilder::from_path_part`](crate::ReaderBuilder::from_path_part)),
//! and [`crate::split`], which finds them: neither imports the other for
//! it. It is public as `fastcsv::split::Part`.

/// One part of a split input: the records that start in `start..end`.
///
/// `start` is a record start (or the input's start), and so is `end` (or
/// the input's end); a part can be empty (`start == end`) when no record
/// starts in its range. The parts of one split cover the input, in order.
///
/// ```
/// use fastcsv::split::{Part, Splitter};
/// let parts = Splitter::new(&fastcsv::Dialect::default()).split_slice(b"h\n1\n2\n", 4).unwrap();
/// assert_eq!(
///     parts[1],
///     Part { index: 1, start: 4, end: 6, lines: 2, records: 2, width: Some(1) }
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Part {
    /// Which range this part came from (0-based).
    pub index: usize,
    /// Offset of the part's first byte.
    pub start: u64,
    /// Offset just past its last byte.
    pub end: u64,
    /// Lines before `start` (so the first record's line is `lines + 1`).
    pub lines: u64,
    /// Records before `start` (data errors count as records, as they do
    /// in [`Reader`](crate::Reader) positions; a header row counts too).
    pub records: u64,
    /// For a part after the first, the number of fields every record must
    /// have (the input's first record's), unless the dialect is flexible.
    /// [`Splitter::split_path`](crate::split::Splitter::split_path) and [`Splitter::split_slice`](crate::split::Splitter::split_slice) fill it in;
    /// after [`Splitter::resolve`](crate::split::Splitter::resolve) alone it is `None`.
    pub width: Option<usize>,
}
