//! The Arrow types a column can have: their names (pyarrow's, as
//! `str(pa.int32())` gives them), the names they are read from, and their
//! Arrow C data interface formats.

use std::collections::HashSet;
use std::sync::Mutex;

/// The type of a column.
///
/// The types inference gives are `Utf8`, `Int64`, `Float64`, `Boolean`,
/// `Date32` and `Timestamp`; the others are asked for by name
/// ([`DataType::from_name`]).
///
/// ```
/// use fastcsv::arrow::{DataType, TimeUnit};
/// assert_eq!(DataType::from_name("float64"), Some(DataType::Float64));
/// assert_eq!(DataType::Int64.name(), "int64");
/// let t = DataType::from_name("timestamp[us, tz=UTC]").unwrap();
/// assert!(matches!(t, DataType::TimestampIn { unit: TimeUnit::Microsecond, .. }));
/// assert_eq!(t.name(), "timestamp[us, tz=UTC]");
/// assert_eq!(DataType::from_name("decimal128(10, 2)").unwrap().name(), "decimal128(10, 2)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// Text (Arrow `utf8`): the field's bytes, never null.
    Utf8,
    /// 64-bit signed integers (Arrow `int64`).
    Int64,
    /// 64-bit floats (Arrow `double`).
    Float64,
    /// Booleans (Arrow `bool`).
    Boolean,
    /// Dates (Arrow `date32[day]`: days since 1970-01-01).
    Date32,
    /// Times (Arrow `timestamp`: seconds, or nanoseconds when `nanos`,
    /// since 1970-01-01 00:00:00; in UTC, with the zone `UTC`, when `utc`,
    /// else with no zone).
    Timestamp {
        /// Nanoseconds rather than seconds.
        nanos: bool,
        /// Zoned (`UTC`): the values had a zone (`Z`, `+01:00`).
        utc: bool,
    },
    /// 8-bit signed integers (Arrow `int8`).
    Int8,
    /// 16-bit signed integers (Arrow `int16`).
    Int16,
    /// 32-bit signed integers (Arrow `int32`).
    Int32,
    /// 8-bit unsigned integers (Arrow `uint8`).
    UInt8,
    /// 16-bit unsigned integers (Arrow `uint16`).
    UInt16,
    /// 32-bit unsigned integers (Arrow `uint32`).
    UInt32,
    /// 64-bit unsigned integers (Arrow `uint64`).
    UInt64,
    /// 32-bit floats (Arrow `float`).
    Float32,
    /// Text with 64-bit offsets (Arrow `large_utf8`, pyarrow's
    /// `large_string`).
    LargeUtf8,
    /// Text as views (Arrow `utf8_view`, pyarrow's `string_view`).
    Utf8View,
    /// Text as a dictionary: `int32` indices into the batch's distinct
    /// values (pyarrow's `dictionary<values=string, indices=int32>`, a
    /// categorical in pandas).
    Dictionary,
    /// Decimals (Arrow `decimal128(precision, scale)`): the value times
    /// `10^scale`, as an `i128`.
    Decimal128 {
        /// Digits at most (1 to 38).
        precision: u8,
        /// Digits after the point (may be negative).
        scale: i8,
    },
    /// Times of day (Arrow `time32[s]`, `time32[ms]`, `time64[us]`,
    /// `time64[ns]`): units since midnight.
    Time(TimeUnit),
    /// Times (Arrow `timestamp`) in any unit, with a zone or none. The
    /// four of seconds or nanoseconds with no zone or `UTC` are
    /// [`DataType::Timestamp`] (which [`DataType::from_name`] gives for
    /// them).
    TimestampIn {
        /// The unit.
        unit: TimeUnit,
        /// The zone (`UTC`, `America/New_York`, `+01:00`): values must
        /// then have a zone, and are kept in UTC; `None`: values must not.
        zone: Option<Zone>,
    },
}

/// The unit of a time or timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds (`s`).
    Second,
    /// Milliseconds (`ms`).
    Millisecond,
    /// Microseconds (`us`).
    Microsecond,
    /// Nanoseconds (`ns`).
    Nanosecond,
}

impl TimeUnit {
    /// The unit's name: `s`, `ms`, `us` or `ns`.
    ///
    /// ```
    /// assert_eq!(fastcsv::arrow::TimeUnit::Microsecond.name(), "us");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
        }
    }

    /// Digits of a fraction of a second the unit holds (0, 3, 6, 9).
    pub(crate) fn digits(self) -> u32 {
        match self {
            TimeUnit::Second => 0,
            TimeUnit::Millisecond => 3,
            TimeUnit::Microsecond => 6,
            TimeUnit::Nanosecond => 9,
        }
    }

    /// Units in a second.
    pub(crate) fn per_second(self) -> i64 {
        10i64.pow(self.digits())
    }

    fn from_name(s: &str) -> Option<TimeUnit> {
        Some(match s {
            "s" => TimeUnit::Second,
            "ms" => TimeUnit::Millisecond,
            "us" => TimeUnit::Microsecond,
            "ns" => TimeUnit::Nanosecond,
            _ => return None,
        })
    }

    /// The letter of the unit in format strings.
    fn letter(self) -> char {
        self.name().as_bytes()[0] as char
    }
}

/// A time zone's name, as given (`UTC`, `Europe/Paris`, `+01:00`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Zone(&'static str);

impl Zone {
    /// The zone named `name` (not checked: Arrow's consumers read it).
    ///
    /// ```
    /// assert_eq!(fastcsv::arrow::Zone::new("Europe/Paris").name(), "Europe/Paris");
    /// ```
    pub fn new(name: &str) -> Zone {
        Zone(intern(name.to_owned()))
    }

    /// The zone's name.
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// `s`, kept for the life of the process (once per distinct string): the
/// names and formats of parametrized types, so that [`DataType`] stays
/// `Copy` and its names `&'static str`. The strings are those of the
/// types a process names, few.
fn intern(s: String) -> &'static str {
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let set = seen.get_or_insert_with(HashSet::new);
    if let Some(&t) = set.get(s.as_str()) {
        return t;
    }
    let t: &'static str = Box::leak(s.into_boxed_str());
    set.insert(t);
    t
}

/// The names [`DataType::from_name`] reads, for error messages.
pub const TYPE_NAMES: &str = "int8, int16, int32, int64, uint8, uint16, uint32, uint64, \
     float32 (pyarrow's float), float64 (double), bool, utf8 (string), large_utf8 \
     (large_string), string_view (utf8_view), dictionary<values=string, indices=int32>, \
     decimal128(P, S), date32, time32[s|ms], time64[us|ns], timestamp[s|ms|us|ns] and \
     timestamp[UNIT, tz=ZONE]";

impl DataType {
    /// The type's name: `utf8`, `int64`, `float64`, `float32`, `bool`, and
    /// pyarrow's names of the others (`int8`, `uint32`, `large_string`,
    /// `string_view`, `dictionary<values=string, indices=int32,
    /// ordered=0>`, `decimal128(10, 2)`, `date32[day]`, `time32[ms]`,
    /// `timestamp[s]`, `timestamp[us, tz=Europe/Paris]`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DataType::Utf8 => "utf8",
            DataType::Int64 => "int64",
            DataType::Float64 => "float64",
            DataType::Boolean => "bool",
            DataType::Date32 => "date32[day]",
            DataType::Timestamp { nanos: false, utc: false } => "timestamp[s]",
            DataType::Timestamp { nanos: true, utc: false } => "timestamp[ns]",
            DataType::Timestamp { nanos: false, utc: true } => "timestamp[s, tz=UTC]",
            DataType::Timestamp { nanos: true, utc: true } => "timestamp[ns, tz=UTC]",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Float32 => "float32",
            DataType::LargeUtf8 => "large_string",
            DataType::Utf8View => "string_view",
            DataType::Dictionary => "dictionary<values=string, indices=int32, ordered=0>",
            DataType::Decimal128 { precision, scale } => {
                intern(format!("decimal128({precision}, {scale})"))
            }
            DataType::Time(TimeUnit::Second) => "time32[s]",
            DataType::Time(TimeUnit::Millisecond) => "time32[ms]",
            DataType::Time(TimeUnit::Microsecond) => "time64[us]",
            DataType::Time(TimeUnit::Nanosecond) => "time64[ns]",
            DataType::TimestampIn { unit, zone: None } => {
                intern(format!("timestamp[{}]", unit.name()))
            }
            DataType::TimestampIn { unit, zone: Some(z) } => {
                intern(format!("timestamp[{}, tz={}]", unit.name(), z.name()))
            }
        }
    }

    /// The type named `name`: [`DataType::name`]'s names, pyarrow's (as
    /// `str()` of a pyarrow type gives them: `double`, `float`,
    /// `string`, `large_string`, `dictionary<values=string,
    /// indices=int32, ordered=0>`, ...), Arrow's (`utf8`, `large_utf8`,
    /// `utf8_view`, `float32`) and `str`, `int`, `boolean`, `date32`.
    /// `None` for any other (see [`TYPE_NAMES`]).
    ///
    /// ```
    /// use fastcsv::arrow::DataType;
    /// assert_eq!(DataType::from_name("float"), Some(DataType::Float32));
    /// assert_eq!(DataType::from_name("double"), Some(DataType::Float64));
    /// assert_eq!(
    ///     DataType::from_name("dictionary<values=string, indices=int32, ordered=0>"),
    ///     Some(DataType::Dictionary)
    /// );
    /// assert_eq!(DataType::from_name("decimal256(10, 2)"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<DataType> {
        Some(match name.trim() {
            "utf8" | "str" | "string" => DataType::Utf8,
            "int64" | "int" => DataType::Int64,
            "float64" | "double" => DataType::Float64,
            "bool" | "boolean" => DataType::Boolean,
            "date32" | "date32[day]" => DataType::Date32,
            "int8" => DataType::Int8,
            "int16" => DataType::Int16,
            "int32" => DataType::Int32,
            "uint8" => DataType::UInt8,
            "uint16" => DataType::UInt16,
            "uint32" => DataType::UInt32,
            "uint64" => DataType::UInt64,
            "float32" | "float" => DataType::Float32,
            "large_utf8" | "large_string" => DataType::LargeUtf8,
            "utf8_view" | "string_view" => DataType::Utf8View,
            "time32[s]" => DataType::Time(TimeUnit::Second),
            "time32[ms]" => DataType::Time(TimeUnit::Millisecond),
            "time64[us]" => DataType::Time(TimeUnit::Microsecond),
            "time64[ns]" => DataType::Time(TimeUnit::Nanosecond),
            n if n.starts_with("dictionary<") => return dictionary(n),
            n if n.starts_with("decimal128(") => return decimal(n),
            n if n.starts_with("timestamp[") => return timestamp(n),
            _ => return None,
        })
    }

    /// Whether the type is text of some layout (`utf8`, `large_utf8`,
    /// `utf8_view` or a dictionary of text): values are never null unless
    /// [`super::Spellings::strings_can_be_null`].
    pub fn is_text(self) -> bool {
        matches!(
            self,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary
        )
    }

    /// The Arrow C data interface's format string (for a dictionary, its
    /// indices': the values' is `u`).
    pub(crate) fn format(self) -> &'static str {
        match self {
            DataType::Utf8 => "u",
            DataType::Int64 => "l",
            DataType::Float64 => "g",
            DataType::Boolean => "b",
            DataType::Date32 => "tdD",
            DataType::Timestamp { nanos: false, utc: false } => "tss:",
            DataType::Timestamp { nanos: true, utc: false } => "tsn:",
            DataType::Timestamp { nanos: false, utc: true } => "tss:UTC",
            DataType::Timestamp { nanos: true, utc: true } => "tsn:UTC",
            DataType::Int8 => "c",
            DataType::Int16 => "s",
            DataType::Int32 | DataType::Dictionary => "i",
            DataType::UInt8 => "C",
            DataType::UInt16 => "S",
            DataType::UInt32 => "I",
            DataType::UInt64 => "L",
            DataType::Float32 => "f",
            DataType::LargeUtf8 => "U",
            DataType::Utf8View => "vu",
            DataType::Decimal128 { precision, scale } => intern(format!("d:{precision},{scale}")),
            DataType::Time(u) => match u {
                TimeUnit::Second => "tts",
                TimeUnit::Millisecond => "ttm",
                TimeUnit::Microsecond => "ttu",
                TimeUnit::Nanosecond => "ttn",
            },
            DataType::TimestampIn { unit, zone } => {
                intern(format!("ts{}:{}", unit.letter(), zone.map_or("", Zone::name)))
            }
        }
    }
}

/// `dictionary<values=string, indices=int32[, ordered=0]>` (`utf8` or
/// `string` values; `int32` indices, the only ones pyarrow's CSV reader
/// makes; not ordered).
fn dictionary(n: &str) -> Option<DataType> {
    let inner = n.strip_prefix("dictionary<")?.strip_suffix('>')?;
    let (mut values, mut indices, mut ordered) = (None, None, "0");
    for part in inner.split(',') {
        let (k, v) = part.trim().split_once('=')?;
        match k.trim() {
            "values" => values = Some(v.trim()),
            "indices" => indices = Some(v.trim()),
            "ordered" => ordered = v.trim(),
            _ => return None,
        }
    }
    let text = matches!(values?, "string" | "utf8");
    (text && indices? == "int32" && matches!(ordered, "0" | "false"))
        .then_some(DataType::Dictionary)
}

/// `decimal128(P, S)`, `1 <= P <= 38`.
fn decimal(n: &str) -> Option<DataType> {
    let inner = n.strip_prefix("decimal128(")?.strip_suffix(')')?;
    let (p, s) = inner.split_once(',')?;
    let (precision, scale) = (p.trim().parse::<u8>().ok()?, s.trim().parse::<i8>().ok()?);
    (1..=38).contains(&precision).then_some(DataType::Decimal128 { precision, scale })
}

/// `timestamp[UNIT]` or `timestamp[UNIT, tz=ZONE]`.
fn timestamp(n: &str) -> Option<DataType> {
    let inner = n.strip_prefix("timestamp[")?.strip_suffix(']')?;
    let (unit, zone) = match inner.split_once(',') {
        Some((u, z)) => {
            let z = z.trim().strip_prefix("tz=")?.trim();
            if z.is_empty() {
                return None;
            }
            (u.trim(), Some(z))
        }
        None => (inner.trim(), None),
    };
    let unit = TimeUnit::from_name(unit)?;
    Some(match (unit, zone) {
        (TimeUnit::Second, None) => DataType::Timestamp { nanos: false, utc: false },
        (TimeUnit::Nanosecond, None) => DataType::Timestamp { nanos: true, utc: false },
        (TimeUnit::Second, Some("UTC")) => DataType::Timestamp { nanos: false, utc: true },
        (TimeUnit::Nanosecond, Some("UTC")) => DataType::Timestamp { nanos: true, utc: true },
        (unit, zone) => DataType::TimestampIn { unit, zone: zone.map(Zone::new) },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for n in [
            "utf8",
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "float32",
            "float64",
            "bool",
            "large_string",
            "string_view",
            "dictionary<values=string, indices=int32, ordered=0>",
            "decimal128(10, 2)",
            "decimal128(38, -3)",
            "date32[day]",
            "time32[s]",
            "time32[ms]",
            "time64[us]",
            "time64[ns]",
            "timestamp[s]",
            "timestamp[ms]",
            "timestamp[us, tz=UTC]",
            "timestamp[ns, tz=UTC]",
            "timestamp[s, tz=Europe/Paris]",
            "timestamp[ms, tz=+01:00]",
        ] {
            let t = DataType::from_name(n).unwrap_or_else(|| panic!("{n}"));
            assert_eq!(t.name(), n);
            assert_eq!(DataType::from_name(t.name()), Some(t));
        }
        for bad in [
            "decimal128(0, 2)",
            "decimal128(39, 2)",
            "decimal128(10)",
            "dictionary<values=string, indices=int8, ordered=0>",
            "dictionary<values=int64, indices=int32, ordered=0>",
            "dictionary<values=string, indices=int32, ordered=1>",
            "timestamp[m]",
            "timestamp[s, tz=]",
            "time32[us]",
            "halffloat",
            "date64[ms]",
            "",
        ] {
            assert_eq!(DataType::from_name(bad), None, "{bad}");
        }
        assert_eq!(DataType::from_name("timestamp[us]").unwrap().format(), "tsu:");
        assert_eq!(
            DataType::from_name("timestamp[ms, tz=Europe/Paris]").unwrap().format(),
            "tsm:Europe/Paris"
        );
        assert_eq!(DataType::from_name("decimal128(10, 2)").unwrap().format(), "d:10,2");
    }
}
