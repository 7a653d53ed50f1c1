//! Text streams: a text file in a universal-newline mode read as UTF-8
//! (from its characters, or straight from a UTF-8 file's bytes), the map
//! from the text's bytes back to stream positions (so that a reader that
//! stops early leaves the stream where `csv.reader` would), and the
//! calling thread's feeding of a read-ahead thread.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyUnicodeDecodeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::ahead::Msg;
use crate::errors::PyErrStash;
use crate::source::Spill;
use crate::utf8::OneByte;

/// Characters asked of a text stream's `read` at a time. Moderate, so that
/// an exception from the stream (a `UnicodeDecodeError`) comes out close to
/// where `csv` would raise it: the text the failing call had already
/// decoded is lost with it.
const TEXT_CHUNK: usize = 1 << 14;

/// Bytes asked of a text file's binary buffer at a time (see [`RawText`]).
const RAW_CHUNK: usize = 1 << 16;

/// Bytes of a text stream sent to a read-ahead thread at a time ...
const FEED_CHUNK: usize = RAW_CHUNK;

/// ... and chunks sent ahead of it (about four batches).
const FEED_AHEAD: usize = 16;

/// A text stream read through its `read(n)` method, as UTF-8.
///
/// The Python layer uses it only for an `io.TextIOWrapper` or `io.StringIO`
/// in a universal-newline mode (`newline=None` or `''`). There the text that
/// `read` returns is exactly the concatenation of the lines that iterating
/// the stream gives (translated to `\n` with `None`, as they are with
/// `''`), and those lines end at the text's LF, CR and CRLF: the line ends
/// the core finds in stream mode. So the core reader over this text gives
/// `csv.reader`'s rows and `line_num`.
///
/// A `str` with lone surrogates (from `errors='surrogateescape'`, say) is
/// encoded with `surrogatepass`, and fields are decoded back the same way.
///
/// A UTF-8 `io.TextIOWrapper` may instead start in raw mode ([`RawText`]):
/// its bytes are read straight from its binary buffer, which spares
/// decoding the text and encoding it again, for as long as the bytes are
/// exactly the text `read` would return.
pub(crate) struct PyTextStream {
    /// The stream's `read`.
    read: Py<PyAny>,
    /// Raw mode, until it hands over to `read`.
    raw: Option<RawText>,
    /// Whether raw mode is still on (for `Reader._source`).
    raw_on: Arc<AtomicBool>,
    /// UTF-8 not handed out yet.
    spill: Spill,
    stash: PyErrStash,
    /// Where in the stream each part of the text came from.
    pub(crate) origins: Arc<TextOrigins>,
}

/// Raw mode of a [`PyTextStream`]: the bytes of a UTF-8 `io.TextIOWrapper`
/// read from its buffer, from a position where the wrapper has nothing
/// decoded ahead (`tell()` was a plain byte offset).
///
/// Valid UTF-8 decodes to exactly the characters those bytes encode, and
/// with `newline=''` the wrapper returns them unchanged. With
/// `newline=None` it would turn CR and CRLF into LF, and the Python layer
/// cannot tell the two modes apart unless it has seen a CR come out of
/// `read` (then the mode is `''`, `keeps_cr`). So raw mode hands over to
/// the wrapper, by seeking it to that byte, at the first byte that is not
/// valid UTF-8 (the wrapper decodes from there with its own error handler,
/// or raises its own `UnicodeDecodeError`) and, unless `keeps_cr`, at the
/// first CR. Both are character boundaries where the wrapper's decoder
/// starts afresh, exactly as it does after `seek`.
///
/// A Latin-1 or Windows-1252 (`cp1252`) `io.TextIOWrapper` is read the
/// same way, its bytes transcoded to UTF-8 here ([`OneByte`]): each byte
/// is one character, which the wrapper's decoder would give, and any byte
/// offset is a position where it starts afresh. It hands over at the first
/// byte `cp1252` leaves undefined (for the wrapper's error handler, or its
/// `UnicodeDecodeError`) and, unless `keeps_cr`, at the first CR.
pub(crate) struct RawText {
    /// The `io.TextIOWrapper`.
    stream: Py<PyAny>,
    /// Its buffer's `read1`.
    read1: Py<PyAny>,
    /// Offset in the file of the next byte `read1` returns.
    pos: u64,
    /// `read` is known to return CRs as they are (`newline=''`).
    keeps_cr: bool,
    /// The wrapper is known to be at `pos`: checked by the first read, and
    /// again by the first after the end (the caller may have moved it
    /// since, to write more, say, or to read again from elsewhere).
    checked: bool,
    /// An incomplete UTF-8 sequence at the end of the last read.
    tail: Vec<u8>,
    /// The file's one-byte encoding (`None`: UTF-8).
    code: Option<OneByte>,
    /// `utf-8-sig` from the start of the file: a BOM that the first bytes
    /// may be is dropped, as the wrapper's decoder drops it (and the text's
    /// span starts after it).
    bom: bool,
    /// The UTF-8 of a one-byte encoding's chunk.
    utf8: Vec<u8>,
}

impl RawText {
    /// Raw mode for the `io.TextIOWrapper` `stream` in UTF-8 (`code` is
    /// `None`; with `bom`, `utf-8-sig` at the start of the file) or a
    /// one-byte encoding, whose `tell()` was the plain byte offset `pos`.
    pub(crate) fn new(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        pos: u64,
        keeps_cr: bool,
        code: Option<OneByte>,
        bom: bool,
    ) -> PyResult<RawText> {
        Ok(RawText {
            stream: stream.clone().unbind(),
            read1: stream.getattr(intern!(py, "buffer"))?.getattr(intern!(py, "read1"))?.unbind(),
            pos,
            keeps_cr,
            checked: false,
            tail: Vec::new(),
            code,
            bom,
            utf8: Vec::new(),
        })
    }
}

/// Where the text of a [`PyTextStream`] came from in its stream, so that a
/// reader that goes away before the end puts the stream back where
/// `csv.reader` would have left it (see `PyReader`'s `Drop`).
///
/// `csv.reader` takes one line at a time from the stream, so the stream's
/// own position is always right after the last line it consumed: a second
/// reader, `f.read()` or `for line in f` go on at the next row. This reader
/// reads ahead in chunks instead; the byte offsets of the text (the UTF-8
/// fed to the core reader) are mapped back to stream positions here. Byte
/// `t` of the text lies in the last [`Span`] that starts at or before it.
pub(crate) struct TextOrigins {
    /// The stream.
    stream: Py<PyAny>,
    /// Locked by the calling thread only: when it reads a chunk, and when
    /// the reader goes away.
    state: Mutex<Origins>,
    /// The first byte of the text a restore may still need (where the next
    /// record starts): the spans wholly before it are dropped.
    needed: AtomicU64,
}

/// The changing part of [`TextOrigins`].
struct Origins {
    /// Bytes of text read from the stream so far (handed out or not).
    read: u64,
    /// The spans, from the one holding byte `needed` on.
    spans: VecDeque<Span>,
    /// The stream's `tell()` after the last read: where it still is unless
    /// the caller moved it. `None` when not known.
    here: Option<Py<PyAny>>,
    /// The last read returned nothing: the caller may move the stream
    /// before the next one (to read again from elsewhere, as `csv` would),
    /// so the next chunk's position is asked for again.
    ended: bool,
    /// `tell()` failed: positions are unknown from then on.
    lost: bool,
}

/// A stretch of the text, from byte `at` up to the next span's start.
struct Span {
    /// Offset in the text of the span's first byte.
    at: u64,
    /// Where its bytes came from.
    from: SpanFrom,
}

/// Where a [`Span`]'s text came from.
enum SpanFrom {
    /// Raw mode ([`RawText`]): byte `at + i` of the text is byte `file + i`
    /// of the file, a position where the wrapper's `seek` starts its
    /// decoder afresh.
    Raw(u64),
    /// Raw mode in a one-byte encoding: the span's text is the UTF-8 of
    /// `raw`, the file's bytes from `file` on (all or the first of them),
    /// each a character and a position where `seek` starts afresh.
    OneByte { file: u64, raw: Py<PyBytes>, code: OneByte },
    /// A chunk that `read` returned with the stream at `cookie` (its
    /// `tell()`): `text` is the `str`, or for one with lone surrogates its
    /// UTF-8 `bytes` (`surrogatepass`, one sequence per surrogate), as
    /// handed out.
    Chunk { cookie: Py<PyAny>, text: Py<PyAny> },
    /// A chunk read from a position that is not known.
    Unknown,
}

/// Where the stream is to be left when a reader over it goes away: where
/// `csv.reader`, which consumes whole lines, would have left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resume {
    /// The next record starts at byte `at` of the text. With `lf`, the last
    /// line ended at a CR that was the last byte the core looked at: an LF
    /// right after it still belongs to that line (`"\r\n"` is one line).
    At { at: u64, lf: bool },
    /// An error was raised at byte `at` of the text: `csv` consumed the
    /// line holding it, its line end included.
    LineOf(u64),
}

/// The number of characters of Python `str` in `b`, UTF-8 in which a lone
/// surrogate is one (`surrogatepass`) sequence: its bytes that do not
/// continue a sequence.
fn char_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c & 0xC0 != 0x80).count()
}

impl TextOrigins {
    /// The origins of a stream read from its position now, which is byte
    /// `raw_offset` of the file in raw mode (in UTF-8, unless `noted`: then
    /// the raw reads note their spans, [`TextOrigins::one_byte_read`] and
    /// [`TextOrigins::raw_from`]).
    pub(crate) fn new(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        raw_offset: Option<u64>,
        noted: bool,
    ) -> TextOrigins {
        let mut spans = VecDeque::new();
        let mut here = None;
        if let Some(file) = raw_offset {
            if !noted {
                spans.push_back(Span { at: 0, from: SpanFrom::Raw(file) });
            }
            here = file.into_pyobject(py).ok().map(|p| p.into_any().unbind());
        }
        TextOrigins {
            stream: stream.clone().unbind(),
            state: Mutex::new(Origins { read: 0, spans, here, ended: false, lost: false }),
            needed: AtomicU64::new(0),
        }
    }

    /// The changing part, locked even when poisoned: nothing done while
    /// it is locked can panic halfway but an allocation failure, which
    /// aborts.
    fn lock(&self) -> std::sync::MutexGuard<'_, Origins> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that the text goes on with `n` more bytes.
    fn got(&self, n: usize) {
        self.lock().read += n as u64;
    }

    /// Raw mode read up to byte `pos` of the file (or moved the wrapper
    /// there): the wrapper's `tell()` is `pos`.
    fn raw_at(&self, py: Python<'_>, pos: u64) {
        let mut st = self.lock();
        st.here = pos.into_pyobject(py).ok().map(|p| p.into_any().unbind());
        st.ended = false;
    }

    /// Raw mode is over (or never began): positions are asked for afresh.
    fn raw_off(&self) {
        self.lock().here = None;
    }

    /// Where the stream is before a chunk is read: `None` if not known.
    fn chunk_start(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let mut st = self.lock();
        if st.lost {
            return None;
        }
        if !st.ended {
            if let Some(here) = &st.here {
                return Some(here.clone_ref(py));
            }
        }
        match self.stream.bind(py).call_method0(intern!(py, "tell")) {
            Ok(t) => Some(t.unbind()),
            Err(_) => {
                st.lost = true;
                st.here = None;
                None
            }
        }
    }

    /// Notes the chunk `text` (`None` when empty: the end of the stream)
    /// read from `cookie`, which starts at the current end of the text
    /// (before [`TextOrigins::got`] counts it), and where the stream is now.
    fn chunk_read(&self, py: Python<'_>, cookie: Option<Py<PyAny>>, text: Option<Py<PyAny>>) {
        let mut st = self.lock();
        let ended = text.is_none();
        if let Some(text) = text {
            let from = match cookie {
                Some(cookie) => SpanFrom::Chunk { cookie, text },
                None => SpanFrom::Unknown,
            };
            self.push_span(&mut st, from);
        }
        st.ended = ended;
        st.here = None;
        if !st.lost {
            match self.stream.bind(py).call_method0(intern!(py, "tell")) {
                Ok(t) => st.here = Some(t.unbind()),
                Err(_) => st.lost = true,
            }
        }
    }

    /// Notes a span that starts at the current end of the text, and drops
    /// those a restore no longer needs.
    fn push_span(&self, st: &mut Origins, from: SpanFrom) {
        st.spans.push_back(Span { at: st.read, from });
        let needed = self.needed.load(Ordering::Relaxed);
        while st.spans.len() >= 2 && st.spans[1].at <= needed {
            st.spans.pop_front();
        }
    }

    /// Notes raw mode's chunk of a one-byte encoding, the bytes `raw` from
    /// byte `file` of the file, whose UTF-8 starts at the current end of
    /// the text (before [`TextOrigins::got`] counts it).
    fn one_byte_read(&self, file: u64, raw: Py<PyBytes>, code: OneByte) {
        let mut st = self.lock();
        self.push_span(&mut st, SpanFrom::OneByte { file, raw, code });
    }

    /// Notes that the text from its current end on is the file's bytes
    /// from byte `file` on (raw mode in UTF-8, once any BOM is dropped).
    fn raw_from(&self, file: u64) {
        let mut st = self.lock();
        self.push_span(&mut st, SpanFrom::Raw(file));
    }

    /// Puts the stream back at `cookie`, where a read that failed began
    /// (an error there is left for the next read to meet).
    fn back_to(&self, py: Python<'_>, cookie: &Py<PyAny>) {
        let mut st = self.lock();
        st.here = None;
        if self.stream.bind(py).call_method1(intern!(py, "seek"), (cookie.bind(py),)).is_err() {
            st.lost = true;
        }
    }

    /// Notes that a restore needs nothing before byte `at` of the text.
    pub(crate) fn need_from(&self, at: u64) {
        self.needed.store(at, Ordering::Relaxed);
    }

    /// Puts the stream where `csv.reader` would have left it (see
    /// [`Resume`]). Nothing is done when the stream is closed, when the
    /// caller moved it since the last read (`tell()` is not where that
    /// read left it), or when the position is not known; errors are the
    /// caller's to swallow.
    pub(crate) fn restore(&self, py: Python<'_>, resume: Resume) -> PyResult<()> {
        let stream = self.stream.bind(py);
        if stream.getattr(intern!(py, "closed"))?.is_truthy()? {
            return Ok(());
        }
        let st = self.lock();
        let Some(here) = &st.here else {
            return Ok(());
        };
        if st.lost {
            return Ok(());
        }
        let (at, lf, line) = match resume {
            Resume::At { at, lf } => (at, lf, false),
            Resume::LineOf(at) => (at, false, true),
        };
        if !stream.call_method0(intern!(py, "tell"))?.eq(here)? {
            return Ok(());
        }
        // Seek even when every byte of the text was consumed (`at == read`):
        // raw mode may have read the first bytes of a character beyond it.
        let Some(span) = st.spans.iter().rev().find(|s| s.at <= at) else {
            return Ok(());
        };
        let off = at - span.at;
        match &span.from {
            SpanFrom::Raw(file) => {
                stream.call_method1(intern!(py, "seek"), (file + off,))?;
            }
            SpanFrom::OneByte { file, raw, code } => {
                // The bytes whose UTF-8 makes up the first `off` bytes of
                // the span's text (a record starts on a character).
                let (mut k, mut len) = (0, 0);
                for &c in raw.bind(py).as_bytes() {
                    if len >= off {
                        break;
                    }
                    len += code.utf8_len(c) as u64;
                    k += 1;
                }
                if len != off {
                    return Ok(());
                }
                stream.call_method1(intern!(py, "seek"), (file + k,))?;
            }
            SpanFrom::Chunk { cookie, text } => {
                let text = text.bind(py);
                let k = match text.downcast::<PyString>() {
                    Ok(s) => s.to_str()?.as_bytes().get(..off as usize).map(char_count),
                    Err(_) => {
                        text.downcast::<PyBytes>()?.as_bytes().get(..off as usize).map(char_count)
                    }
                };
                let Some(k) = k else {
                    return Ok(());
                };
                stream.call_method1(intern!(py, "seek"), (cookie.bind(py),))?;
                if k > 0 {
                    stream.call_method1(intern!(py, "read"), (k,))?;
                }
            }
            SpanFrom::Unknown => return Ok(()),
        }
        if line {
            // The rest of the line, as `csv` took it: the stream's
            // universal newlines end it at LF, CR or CRLF.
            stream.call_method0(intern!(py, "readline"))?;
        } else if lf {
            let p = stream.call_method0(intern!(py, "tell"))?;
            let c = stream.call_method1(intern!(py, "read"), (1,))?;
            if !c.eq("\n")? {
                stream.call_method1(intern!(py, "seek"), (p,))?;
            }
        }
        Ok(())
    }
}

impl PyTextStream {
    /// The text of `stream` through its `read` method, or first through
    /// `raw` (raw mode, on while `raw_on` says so).
    pub(crate) fn new(
        py: Python<'_>,
        stream: &Bound<'_, PyAny>,
        raw: Option<RawText>,
        raw_on: Arc<AtomicBool>,
        stash: PyErrStash,
        origins: Arc<TextOrigins>,
    ) -> PyResult<PyTextStream> {
        Ok(PyTextStream {
            read: stream.getattr(intern!(py, "read"))?.unbind(),
            raw,
            raw_on,
            spill: Spill::default(),
            stash,
            origins,
        })
    }

    /// Copies as much of `text` into `buf` as fits and keeps the rest.
    fn hand_out(&mut self, text: &[u8], buf: &mut [u8]) -> usize {
        self.origins.got(text.len());
        self.spill.hand_out(text, buf)
    }

    /// Reads the next chunk of text into `buf` (and `spill`).
    /// Where the stream was before the chunk, and the chunk, are noted in
    /// `origins`.
    fn read_chunk(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<usize> {
        let cookie = self.origins.chunk_start(py);
        let r = match self.read.bind(py).call1((TEXT_CHUNK,)) {
            Ok(r) => r,
            Err(e) => {
                // `TextIOWrapper.read(n)` drops the text it decoded before
                // its buffer's read raised (an `OSError`, a Ctrl-C): the
                // stream goes back to where this read began, so that the
                // next one reads that text again, as `csv`'s `readline`
                // keeps it. (Past bytes it cannot decode, the wrapper goes
                // on after them, as it does for `csv`.)
                if let Some(cookie) = cookie {
                    if !e.is_instance_of::<PyUnicodeDecodeError>(py) {
                        self.origins.back_to(py, &cookie);
                    }
                }
                return Err(e);
            }
        };
        let s = r.downcast::<PyString>().map_err(|_| {
            let name = r.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            PyTypeError::new_err(format!(
                "read() should return str, not {name} (the file should be opened in text mode)"
            ))
        })?;
        let encoded;
        let (text, bytes) = match s.to_str() {
            Ok(t) => (s.as_any(), t.as_bytes()),
            Err(_) => {
                // Lone surrogates: carry them through, as `csv` does.
                encoded = s.call_method1(intern!(py, "encode"), ("utf-8", "surrogatepass"))?;
                (&encoded, encoded.downcast::<PyBytes>()?.as_bytes())
            }
        };
        let kept = (!bytes.is_empty()).then(|| text.clone().unbind());
        self.origins.chunk_read(py, cookie, kept);
        Ok(self.hand_out(bytes, buf))
    }

    /// Reads the next bytes in raw mode, or hands over to `read_chunk`.
    fn read_raw(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<usize> {
        loop {
            let Some(raw) = &mut self.raw else {
                return self.read_chunk(py, buf);
            };
            if !raw.checked {
                // The stream may have been read or moved since the reader
                // was made (or reached the end): then it goes on from where
                // the wrapper is, as `read`.
                raw.checked = true;
                let here = raw.stream.bind(py).call_method0(intern!(py, "tell"));
                if here.and_then(|t| t.extract::<u64>()).ok() != Some(raw.pos) {
                    self.raw = None;
                    self.raw_on.store(false, Ordering::Relaxed);
                    self.origins.raw_off();
                    continue;
                }
            }
            let chunk = raw.read1.bind(py).call1((RAW_CHUNK,))?;
            let chunk = chunk
                .downcast::<PyBytes>()
                .map_err(|_| PyTypeError::new_err("the text file's buffer should return bytes"))?;
            let b = chunk.as_bytes();
            if let Some(code) = raw.code {
                // A one-byte encoding: every byte is a character.
                let start = raw.pos;
                raw.pos += b.len() as u64;
                self.origins.raw_at(py, raw.pos);
                if b.is_empty() {
                    raw.checked = false;
                    return Ok(0);
                }
                let cr = if raw.keeps_cr { None } else { memchr::memchr(b'\r', b) };
                let mut text = std::mem::take(&mut raw.utf8);
                text.clear();
                let taken = code.to_utf8(&b[..cr.unwrap_or(b.len())], &mut text);
                if taken > 0 {
                    self.origins.one_byte_read(start, chunk.clone().unbind(), code);
                }
                let n = if taken < b.len() {
                    // A CR, or a byte the encoding leaves undefined.
                    self.hand_over(py, start + taken as u64, &text, buf)
                } else {
                    Ok(self.hand_out(&text, buf))
                };
                if let Some(raw) = &mut self.raw {
                    raw.utf8 = text;
                }
                return n;
            }
            // `data` is the incomplete sequence left last time, then `b`;
            // `start` is the offset of its first byte.
            let start = raw.pos - raw.tail.len() as u64;
            raw.pos += b.len() as u64;
            self.origins.raw_at(py, raw.pos);
            let joined;
            let data: &[u8] = if raw.tail.is_empty() {
                b
            } else {
                raw.tail.extend_from_slice(b);
                joined = std::mem::take(&mut raw.tail);
                &joined
            };
            if b.is_empty() {
                // End of file. An incomplete sequence left over is the
                // wrapper's to decode (or to raise on).
                if data.is_empty() {
                    raw.checked = false;
                    return Ok(0);
                }
                return self.hand_over(py, start, &[], buf);
            }
            let (data, start) = if std::mem::take(&mut raw.bom) {
                const BOM: &[u8] = b"\xEF\xBB\xBF";
                if data.len() < BOM.len() && BOM.starts_with(data) {
                    // Too few bytes to tell: the wrapper decides.
                    return self.hand_over(py, start, &[], buf);
                }
                let skip = if data.starts_with(BOM) { BOM.len() } else { 0 };
                self.origins.raw_from(start + skip as u64);
                (&data[skip..], start + skip as u64)
            } else {
                (data, start)
            };
            let (valid, bad) = match simdutf8::compat::from_utf8(data) {
                Ok(_) => (data.len(), false),
                Err(e) => (e.valid_up_to(), e.error_len().is_some()),
            };
            let cr = if raw.keeps_cr { None } else { memchr::memchr(b'\r', &data[..valid]) };
            if let Some(k) = cr {
                return self.hand_over(py, start + k as u64, &data[..k], buf);
            }
            if bad {
                return self.hand_over(py, start + valid as u64, &data[..valid], buf);
            }
            raw.tail.clear();
            raw.tail.extend_from_slice(&data[valid..]);
            if valid > 0 {
                return Ok(self.hand_out(&data[..valid], buf));
            }
            // Only the first bytes of a character so far: read on.
        }
    }

    /// Leaves raw mode at byte `at` of the file: the wrapper is moved there
    /// and read as text from then on, after `before` (the bytes up to `at`
    /// not handed out yet).
    fn hand_over(
        &mut self,
        py: Python<'_>,
        at: u64,
        before: &[u8],
        buf: &mut [u8],
    ) -> PyResult<usize> {
        if let Some(raw) = self.raw.take() {
            self.raw_on.store(false, Ordering::Relaxed);
            self.origins.raw_off();
            raw.stream.bind(py).call_method1(intern!(py, "seek"), (at,))?;
            self.origins.raw_at(py, at);
        }
        if before.is_empty() {
            self.read_chunk(py, buf)
        } else {
            Ok(self.hand_out(before, buf))
        }
    }
}

impl PyTextStream {
    /// Bytes of the text handed out so far.
    pub(crate) fn handed_out(&self) -> u64 {
        self.origins.lock().read - self.spill.len() as u64
    }

    /// The next UTF-8 bytes of the text, into `buf`; 0 at the end.
    fn read_some(&mut self, py: Python<'_>, buf: &mut [u8]) -> PyResult<usize> {
        if let Some(n) = self.spill.drain_into(buf) {
            return Ok(n);
        }
        if self.raw.is_some() {
            self.read_raw(py, buf)
        } else {
            self.read_chunk(py, buf)
        }
    }
}

impl Read for PyTextStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::with_gil(|py| {
            self.read_some(py, buf).map_err(|e| {
                self.stash.put(e);
                io::Error::other("exception in read()")
            })
        })
    }
}

/// Bytes of a text stream on their way to a read-ahead thread (see
/// [`Feeder`]).
enum Feed {
    Chunk(Arc<Vec<u8>>),
    /// The stream ended.
    End,
    /// The stream's `read` raised; the exception is in the reader's stash.
    Failed,
}

/// The [`Feeder`] of a text stream, shared by the reader and, while the
/// batches are scanned on the calling thread, by its [`FedText`]. `None`
/// once a row-by-row reader took the stream. Locked briefly, never while
/// a batch is scanned.
pub(crate) type FeedCell = Arc<Mutex<Option<Feeder>>>;

/// The scanning side of a text stream: a `Read` of the chunks the calling
/// thread reads from the stream (which takes the GIL) and sends. On a
/// read-ahead thread, when no chunk is waiting it asks for more
/// ([`Msg::Need`]) and waits. While `inline` is on, the batches are
/// scanned on the calling thread, which then reads the stream itself
/// (taking the GIL back) when no chunk is waiting.
pub(crate) struct FedText {
    rx: mpsc::Receiver<Feed>,
    need: mpsc::Sender<Msg>,
    /// Chunks taken from `rx` so far.
    taken: Arc<AtomicUsize>,
    cur: Arc<Vec<u8>>,
    off: usize,
    end: bool,
    /// The feeder and whether this side is on the calling thread (turned
    /// off before the reader moves to a read-ahead thread).
    inline: (FeedCell, Arc<AtomicBool>),
}

impl Read for FedText {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.off < self.cur.len() {
                let n = (self.cur.len() - self.off).min(buf.len());
                buf[..n].copy_from_slice(&self.cur[self.off..self.off + n]);
                self.off += n;
                return Ok(n);
            }
            if self.end {
                return Ok(0);
            }
            let gone = || io::Error::other("the reader was dropped");
            let feed = match self.rx.try_recv() {
                Ok(f) => f,
                Err(mpsc::TryRecvError::Empty) if self.inline.1.load(Ordering::Relaxed) => {
                    // On the calling thread: one more chunk read here.
                    let mut cell = self.inline.0.lock().unwrap_or_else(|e| e.into_inner());
                    let feeder = cell.as_mut().ok_or_else(gone)?;
                    Python::with_gil(|py| feeder.feed_one(py));
                    // It sent a chunk, the end, or a failure (once sent,
                    // the end was taken before this).
                    self.rx.try_recv().map_err(|_| gone())?
                }
                Err(mpsc::TryRecvError::Empty) => {
                    let _ = self.need.send(Msg::Need);
                    self.rx.recv().map_err(|_| gone())?
                }
                Err(mpsc::TryRecvError::Disconnected) => return Err(gone()),
            };
            self.taken.fetch_add(1, Ordering::Relaxed);
            match feed {
                Feed::Chunk(c) => {
                    self.cur = c;
                    self.off = 0;
                }
                Feed::End => self.end = true,
                Feed::Failed => {
                    self.end = true;
                    return Err(io::Error::other("exception in read()"));
                }
            }
        }
    }
}

/// The calling thread's side of a text stream read ahead: it reads the
/// stream (under the GIL) and keeps up to [`FEED_AHEAD`] chunks waiting
/// for the read-ahead thread. The chunks of the batch being handed out
/// and after are kept, so that the rows from any of them on can be parsed
/// again by a row-by-row reader (see `TextAheadSource::reparse`).
pub(crate) struct Feeder {
    pub(crate) stream: PyTextStream,
    tx: mpsc::Sender<Feed>,
    taken: Arc<AtomicUsize>,
    sent: usize,
    /// `End` or `Failed` was sent.
    done: bool,
    /// `End` was sent: the stream's `read` returned nothing.
    pub(crate) ended: bool,
    /// The chunks sent, the first beginning at byte `kept_from` of the
    /// text.
    kept: std::collections::VecDeque<Arc<Vec<u8>>>,
    kept_from: u64,
    /// Chunks the thread is done with, to fill again.
    spare: Vec<Vec<u8>>,
}

impl Feeder {
    /// The two sides of `stream` read ahead: the calling thread's (in
    /// the cell), and the scanning side, which sends `need` when it waits
    /// for a chunk on a read-ahead thread, and reads the stream itself
    /// while `inline` is on.
    pub(crate) fn new(
        stream: PyTextStream,
        need: mpsc::Sender<Msg>,
        inline: Arc<AtomicBool>,
    ) -> (FeedCell, FedText) {
        let (tx, rx) = mpsc::channel();
        let taken = Arc::new(AtomicUsize::new(0));
        let cell: FeedCell = Arc::default();
        let fed = FedText {
            rx,
            need,
            taken: taken.clone(),
            cur: Arc::default(),
            off: 0,
            end: false,
            inline: (cell.clone(), inline),
        };
        let feeder = Feeder {
            stream,
            tx,
            taken,
            sent: 0,
            done: false,
            ended: false,
            kept: Default::default(),
            kept_from: 0,
            spare: Vec::new(),
        };
        *cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(feeder);
        (cell, fed)
    }

    /// Reads one chunk of the stream and sends it (or its end).
    fn feed_one(&mut self, py: Python<'_>) {
        if self.done {
            return;
        }
        let mut v = self.spare.pop().unwrap_or_default();
        v.resize(FEED_CHUNK, 0);
        let msg = match self.stream.read_some(py, &mut v) {
            Ok(0) => {
                self.done = true;
                self.ended = true;
                Feed::End
            }
            Ok(n) => {
                v.truncate(n);
                let c = Arc::new(v);
                self.kept.push_back(c.clone());
                Feed::Chunk(c)
            }
            Err(e) => {
                self.stream.stash.put(e);
                self.done = true;
                Feed::Failed
            }
        };
        self.sent += 1;
        let _ = self.tx.send(msg);
    }

    /// Sends chunks until [`FEED_AHEAD`] wait for the thread.
    pub(crate) fn top_up(&mut self, py: Python<'_>) {
        while !self.done && self.sent - self.taken.load(Ordering::Relaxed) < FEED_AHEAD {
            self.feed_one(py);
        }
    }

    /// Drops the kept chunks that end at or before byte `at`.
    pub(crate) fn forget_before(&mut self, at: u64) {
        while let Some(c) = self.kept.front() {
            let end = self.kept_from + c.len() as u64;
            if end > at {
                break;
            }
            self.kept_from = end;
            if let Some(Ok(v)) = self.kept.pop_front().map(Arc::try_unwrap) {
                if self.spare.len() < FEED_AHEAD {
                    self.spare.push(v);
                }
            }
        }
    }

    /// The kept text from byte `at` on, or `None` if it is not kept.
    pub(crate) fn kept_from(&self, at: u64) -> Option<Vec<u8>> {
        let mut skip = usize::try_from(at.checked_sub(self.kept_from)?).ok()?;
        let mut out = Vec::new();
        for c in &self.kept {
            if skip >= c.len() {
                skip -= c.len();
                continue;
            }
            out.extend_from_slice(&c[skip..]);
            skip = 0;
        }
        (skip == 0).then_some(out)
    }
}
