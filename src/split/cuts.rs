//! Record starts found from the bytes near a cut ([`Splitter::sync_point`]
//! and what builds on it): the cuts a parallel read takes.

use super::*;

/// How far before a cut [`Splitter::guessed_split_path`] looks for a
/// quote, escape or comment byte (at most a quarter of the parts' size):
/// where none lies this close, the cut's state is guessed.
const GUESS_WINDOW: usize = 64 << 10;

impl Splitter {
    /// A record start at or after `at` that nearby bytes alone decide: the
    /// same whatever state a reader is in at `at`, found without reading
    /// from the input's start. `since` is a known record start at or
    /// before `at` (`0`, the input's start, always is). `None` when the
    /// bytes near `at` do not decide it.
    ///
    /// Every state a reader could be in at `at` is simulated over a short
    /// window (growing up to 1 MiB). When all of them end the window in one
    /// state, that is the state there, and the first record start after
    /// the window follows from it (or the input's end, if the window
    /// reaches it first: a record start in any case). In a stretch without
    /// quote, escape or comment bytes, a simulation inside quotes never
    /// meets the others; when no such byte lies between `since` and `at`,
    /// only the states reachable from a record start without them are
    /// simulated.
    ///
    /// ```
    /// use fastcsv::split::Splitter;
    /// let sp = Splitter::new(&fastcsv::Dialect::default());
    /// let mut input = Vec::new();
    /// for i in 0..100 {
    ///     input.extend_from_slice(format!("{i},\"x\ny, \"\"z\"\"\"\n").as_bytes());
    /// }
    /// // Inside the quotes of the tenth record: the next record start that
    /// // does not depend on what came before is a later record's.
    /// let at = input.windows(3).position(|w| w == b"9,\"").unwrap() + 3;
    /// let p = sp.sync_point(&input, at, 0).unwrap() as usize;
    /// assert!(p > at && input[p - 1] == b'\n' && input[p..].starts_with(b"1"));
    /// ```
    pub fn sync_point(&self, input: &[u8], at: usize, since: usize) -> Option<u64> {
        const WINDOW: usize = 64;
        if since > at || at > input.len() {
            return None;
        }
        if let Some(p) = self.meet(input, at, (1 << STATES) - 1, WINDOW) {
            return Some(p);
        }
        let quiet = match self.quiet {
            None => true,
            Some([a, b, c]) => memchr::memchr3(a, b, c, &input[since..at]).is_none(),
        };
        if quiet {
            self.meet(input, at, self.quiet_reach, WINDOW)
        } else {
            None
        }
    }

    /// The parts of `input` in ranges of `chunk` bytes, as
    /// [`Splitter::resolve`] gives them from the ranges' summaries, found
    /// without the summaries where the bytes before each cut decide the
    /// state there (as for [`Splitter::sync_point`]); each part's lines and
    /// records are then counted by a reader of the part (the block
    /// scanner), all on every CPU. `None` where a cut's state is not
    /// decided so.
    pub(super) fn counted_parts(&self, input: &[u8], chunk: usize) -> Result<Option<Vec<Part>>> {
        let Some(bounds) = self.exact_cuts(input, chunk)? else { return Ok(None) };
        let ranges: Vec<(usize, u64, u64)> =
            bounds.windows(2).enumerate().map(|(k, w)| (k, w[0], w[1])).collect();
        // The parts up to the one that reaches the input's end (those after
        // it are empty there) end at record starts: a reader of each counts
        // its lines and records as the state machine does (every record: a
        // field over the limit is not modelled, nor are row widths; past
        // syntax errors).
        let last = ranges.iter().position(|r| r.2 == input.len() as u64).unwrap_or(0);
        let d =
            self.dialect.to_builder().headers(false).flexible(true).field_limit(None).build()?;
        let b = ReaderBuilder::new().dialect(d).clone();
        let counts =
            pool::map_on("split", self.threads, &ranges[..last], |&(index, start, end)| {
                let part = Part { index, start, end, lines: 0, records: 0, width: None };
                let mut rdr = b.from_slice_part(input, &part)?;
                if self.dialect.strict() {
                    loop {
                        match rdr.read_row() {
                            Ok(Some(_)) => {}
                            Ok(None) => break,
                            Err(e) if e.is_data() => {}
                            Err(e) => return Err(e),
                        }
                    }
                } else {
                    rdr.count_rows()?;
                }
                Ok((rdr.line(), rdr.records_read()))
            })?;
        let (mut lines, mut records) = (0, 0);
        let mut parts = Vec::with_capacity(ranges.len());
        for (&(index, start, end), (l, r)) in ranges.iter().zip(counts) {
            parts.push(Part { index, start, end, lines, records, width: None });
            lines += l;
            records += r;
        }
        let (_, start, end) = ranges[last];
        parts.push(Part { index: last, start, end, lines, records, width: None });
        if last + 1 < ranges.len() {
            // The last record may end without a terminator, which a reader
            // counts as a line and a record and the state machine not: the
            // empty parts after it take the summary's counts.
            let s = self.summarize(input, to_usize(start)?..input.len())?;
            lines += s.lines;
            records += s.records[START_RECORD as usize];
            for &(index, start, end) in &ranges[last + 1..] {
                parts.push(Part { index, start, end, lines, records, width: None });
            }
        }
        Ok(Some(parts))
    }

    /// The bounds of the parts of `input` in ranges of `chunk` bytes (the
    /// input's start, the first record start at or after each cut, the
    /// input's end), where the bytes before each cut decide the state
    /// there whatever came earlier; `None` where one does not.
    pub(super) fn exact_cuts(&self, input: &[u8], chunk: usize) -> Result<Option<Vec<u64>>> {
        self.exact_cuts_on(input, chunk, self.threads)
    }

    /// [`Splitter::exact_cuts`] on at most `threads` threads.
    pub(super) fn exact_cuts_on(
        &self,
        input: &[u8],
        chunk: usize,
        threads: usize,
    ) -> Result<Option<Vec<u64>>> {
        self.exact_cuts_from(input, chunk, threads, None)
    }

    /// [`Splitter::exact_cuts_on`] where `input` is the map of `file`:
    /// the ranges before the cuts are searched for quote, escape or
    /// comment bytes in copies read from `file` (`last_loud_read`), so
    /// that the pass maps none of their pages (a large map's pages take a
    /// while to unmap, and a reader's map waits for that).
    fn exact_cuts_from(
        &self,
        input: &[u8],
        chunk: usize,
        threads: usize,
        file: Option<&std::fs::File>,
    ) -> Result<Option<Vec<u64>>> {
        let chunk = chunk.max(1);
        let all = (1 << STATES) - 1;
        let at: Vec<usize> = (1..).map(|k| k * chunk).take_while(|&c| c < input.len()).collect();
        // For each cut: its state when the bytes before it decide it
        // whatever came earlier, or else the last quote, escape or comment
        // byte in the range before it.
        let found = pool::map_on("split", threads, &at, |&c| {
            let loud = match file {
                Some(f) => self.last_loud_read(f, input, c - chunk..c),
                None => self.last_loud(&input[c - chunk..c]).map(|i| c - chunk + i),
            };
            Ok(match loud.and_then(|_| self.state_at(input, c, all, 0)) {
                Some(x) => (Some(x), None),
                None => (None, loud),
            })
        })?;
        // In order: without such a byte between the part's start before it
        // (a record start) and the cut, the states reachable without one
        // decide it; then the first record start at or after the cut.
        let mut bounds = vec![0u64];
        for (&c, (x, loud)) in at.iter().zip(found) {
            let since = *bounds.last().unwrap_or(&0);
            if since >= c as u64 {
                // No record starts between the cut before and this one.
                bounds.push(since);
                continue;
            }
            let x = match x {
                Some(x) => x,
                None if loud.is_none_or(|i| (i as u64) < since) => {
                    match self.state_at(input, c, self.quiet_reach, since as usize) {
                        Some(x) => x,
                        None => return Ok(None),
                    }
                }
                None => return Ok(None),
            };
            bounds.push(self.first_from(input, c, x, 1 << 12).max(since));
        }
        bounds.push(input.len() as u64);
        Ok(Some(bounds))
    }

    /// The bounds of the parts of `input` (which starts at a record start)
    /// in ranges of `chunk` bytes, on at most `threads` threads: the
    /// input's start, the first record start at or after each cut (as
    /// [`Splitter::resolve`] places them), the input's end. Found from the
    /// bytes before each cut where they decide the state there
    /// ([`Splitter::exact_cuts`]), else from every range's summary: exact
    /// either way, never guessed. All at once: a parallel read finds the
    /// same bounds one at a time as its workers need them
    /// ([`Splitter::cut_bound`]); its tests compare the two.
    #[cfg(test)]
    pub(crate) fn record_bounds(
        &self,
        input: &[u8],
        chunk: usize,
        threads: usize,
    ) -> Result<Vec<u64>> {
        if let Some(bounds) = self.exact_cuts_on(input, chunk, threads)? {
            return Ok(bounds);
        }
        self.summary_bounds(input, chunk, threads)
    }

    /// The first record start at or after the cut at `c` (a multiple of
    /// `chunk`, inside `input`, which starts at a record start), where
    /// `since`, at or before it, is the first record start at or after the
    /// cut before (`0` for the first cut); as [`Splitter::exact_cuts`]
    /// places it: from the bytes before the cut where they decide the
    /// state there whatever came earlier, else `None`. One cut of
    /// `Splitter::record_bounds`, for a parallel read that finds its
    /// cuts as it goes: the range before the cut is searched for quote,
    /// escape or comment bytes only when it is needed, by the thread that
    /// parses it next.
    pub(crate) fn cut_bound(
        &self,
        input: &[u8],
        c: usize,
        chunk: usize,
        since: u64,
    ) -> Option<u64> {
        if since >= c as u64 {
            // No record starts between the cut before and this one.
            return Some(since);
        }
        let all = (1 << STATES) - 1;
        let loud = self.last_loud(&input[c.saturating_sub(chunk.max(1))..c]);
        let loud = loud.map(|i| c.saturating_sub(chunk.max(1)) + i);
        let x = match loud.and_then(|_| self.state_at(input, c, all, 0)) {
            Some(x) => x,
            None if loud.is_none_or(|i| (i as u64) < since) => {
                self.state_at(input, c, self.quiet_reach, since as usize)?
            }
            None => return None,
        };
        Some(self.first_from(input, c, x, 1 << 12).max(since))
    }

    /// `Splitter::record_bounds` from every range's summary alone (where
    /// [`Splitter::cut_bound`] leaves a cut undecided).
    pub(crate) fn summary_bounds(
        &self,
        input: &[u8],
        chunk: usize,
        threads: usize,
    ) -> Result<Vec<u64>> {
        let ranges = even_ranges(input.len() as u64, chunk.max(1) as u64);
        let sums = pool::map_on("split", threads, &ranges, |r| {
            self.summarize(input, r.start as usize..r.end as usize)
        })?;
        let parts = self.resolve(&sums)?;
        let mut bounds: Vec<u64> = parts.iter().map(|p| p.start).collect();
        bounds.push(input.len() as u64);
        Ok(bounds)
    }

    /// The last quote, escape or comment byte in `bytes`.
    pub(super) fn last_loud(&self, bytes: &[u8]) -> Option<usize> {
        match self.quiet {
            None => None,
            Some([a, b, q]) if a == b && b == q => memchr::memrchr(a, bytes),
            Some([a, b, q]) if b == q => memchr::memrchr2(a, b, bytes),
            Some([a, b, q]) => memchr::memrchr3(a, b, q, bytes),
        }
    }

    /// The offset of the last quote, escape or comment byte in `range` of
    /// `input`, the map of `file`, as [`Splitter::last_loud`] finds it in
    /// `input[range]`, but looked for in copies of the range read from
    /// `file`, a block at a time from its end. Where a block cannot be
    /// read whole (the file changed, which the map's check then reports),
    /// that block is looked for in `input`.
    fn last_loud_read(
        &self,
        file: &std::fs::File,
        input: &[u8],
        range: Range<usize>,
    ) -> Option<usize> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            const BLOCK: usize = 256 << 10;
            self.quiet?;
            let mut buf = vec![0u8; BLOCK.min(range.len())];
            let mut end = range.end;
            while end > range.start {
                let start = end.saturating_sub(BLOCK).max(range.start);
                let block = &mut buf[..end - start];
                let found = match file.read_exact_at(block, start as u64) {
                    Ok(()) => self.last_loud(block),
                    Err(_) => self.last_loud(&input[start..end]),
                };
                if let Some(i) = found {
                    return Some(start + i);
                }
                end = start;
            }
            None
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            self.last_loud(&input[range.clone()]).map(|i| range.start + i)
        }
    }

    /// The state at `c` when the entry states `entries` (bits) at an
    /// offset before it, from `lo` on (4 KiB, 64 KiB, 1 MiB back), all
    /// reach one state there.
    pub(super) fn state_at(&self, input: &[u8], c: usize, entries: u16, lo: usize) -> Option<u8> {
        for back in [1usize << 12, 1 << 16, 1 << 20] {
            let from = c.saturating_sub(back).max(lo);
            let s = self.summarize(input, from..c).ok()?;
            let mut exits = (0..STATES).filter(|&e| entries & (1 << e) != 0).map(|e| s.exit[e]);
            let x = exits.next()?;
            if exits.all(|y| y == x) {
                return Some(x);
            }
            if from == lo {
                return None;
            }
        }
        None
    }

    /// The first record start at or after `c` in state `x` there (the
    /// input's end if none), in windows from `window` bytes, each twice
    /// the one before.
    pub(super) fn first_from(&self, input: &[u8], c: usize, x: u8, window: usize) -> u64 {
        let (mut state, mut from, mut w) = (x, c, window.max(1));
        loop {
            let end = from.saturating_add(w).min(input.len());
            let Ok(s) = self.summarize(input, from..end) else { return input.len() as u64 };
            if let Some(f) = s.first[state as usize] {
                return f.at;
            }
            if end == input.len() {
                return end as u64;
            }
            (state, from, w) = (s.exit[state as usize], end, w.saturating_mul(2));
        }
    }

    /// The parts of the file at `path` (ranges of `chunk` bytes) with the
    /// bounds [`Splitter::split_path`] gives, found where the bytes before
    /// each cut decide them, and settled ([`Splitter::settle`]); `None`
    /// where they do not. A later part's `lines` and `records` are not
    /// counted: they are 0, except for parts that start right after the
    /// header row.
    pub(crate) fn quick_split_path(&self, path: &Path, chunk: u64) -> Result<Option<Vec<Part>>> {
        let map = MappedFile::open(path)?;
        // Read where it opens again; else the map alone is searched.
        let file = std::fs::File::open(path).ok();
        let chunk = usize::try_from(chunk).unwrap_or(usize::MAX);
        let bounds = self
            .exact_cuts_from(map.bytes(), chunk, self.threads, file.as_ref())
            .map_err(|e| e.with_path(path));
        let Some(bounds) = map.check(bounds)? else {
            return Ok(None);
        };
        drop(map);
        self.settled_parts(path, &bounds).map(Some)
    }

    /// [`Splitter::quick_split_path`] (but for the last `threads` ranges'
    /// bytes, cut in ranges of half the size) without its search of every range
    /// before a cut for quote, escape or comment bytes (a pass over the
    /// whole file, on every CPU, before any part can be read): where the
    /// [`GUESS_WINDOW`] bytes before a cut hold none, the cut's state is
    /// taken to be one that a record start reaches without them, as if
    /// none came since the part before it started. A bound so placed is a
    /// guess, marked `true` beside its part (the part that ends there):
    /// the reader of that part checks, at its end, that a record ended
    /// there (`part_goes_on` in `ReaderBuilder::from_path_part`), and
    /// fails with [`ErrorKind::FileChanged`] when none did. The
    /// caller then places the bounds again exactly from that record's
    /// start (`ParColumns`). `None` where a cut's state is not decided
    /// either way.
    pub(crate) fn guessed_split_path(
        &self,
        path: &Path,
        chunk: u64,
    ) -> Result<Option<(Vec<Part>, Vec<bool>)>> {
        let map = MappedFile::open(path)?;
        let input = map.bytes();
        let chunk = usize::try_from(chunk).unwrap_or(usize::MAX).max(1);
        let all = (1 << STATES) - 1;
        let mut bounds = vec![0u64];
        let mut guessed = Vec::new();
        // The last `threads` ranges' bytes in ranges of half the size, so
        // that the threads reading the last parts end close together.
        let tail = input.len().saturating_sub(self.threads.saturating_mul(chunk));
        let next = |c: usize| c.saturating_add(if c >= tail { (chunk / 2).max(1) } else { chunk });
        let mut c = chunk;
        let found = loop {
            if c >= input.len() {
                break true;
            }
            let since = *bounds.last().unwrap_or(&0);
            if since >= c as u64 {
                // No record starts between the cut before and this one.
                bounds.push(since);
                c = next(c);
                continue;
            }
            let near = c.saturating_sub(GUESS_WINDOW.min(chunk / 4)).max(since as usize);
            let (x, guess) = match self.last_loud(&input[near..c]) {
                Some(_) => match self.state_at(input, c, all, 0) {
                    Some(x) => (x, false),
                    None => break false,
                },
                // (With no quote, escape or comment byte in the dialect,
                // nothing is guessed.)
                None => match self.state_at(input, c, self.quiet_reach, since as usize) {
                    Some(x) => (x, self.quiet.is_some()),
                    None => break false,
                },
            };
            let bound = self.first_from(input, c, x, 1 << 12).max(since);
            if guess && bound > since && bound < input.len() as u64 {
                guessed.push(bound);
            }
            bounds.push(bound);
            c = next(c);
        };
        bounds.push(input.len() as u64);
        if !map.check(Ok(found))? {
            return Ok(None);
        }
        drop(map);
        let parts = self.settled_parts(path, &bounds)?;
        // A part ends at a guess when the part after it starts there
        // (settling may have moved that start to the header row's end).
        let ends: Vec<bool> = (0..parts.len())
            .map(|k| parts.get(k + 1).is_some_and(|n| guessed.binary_search(&n.start).is_ok()))
            .collect();
        Ok(Some((parts, ends)))
    }

    /// The parts between `bounds` (the first 0, the last the end of the
    /// file at `path`), settled ([`Splitter::settle`]).
    fn settled_parts(&self, path: &Path, bounds: &[u64]) -> Result<Vec<Part>> {
        let parts = bounds
            .windows(2)
            .enumerate()
            .map(|(index, w)| Part {
                index,
                start: w[0],
                end: w[1],
                lines: 0,
                records: 0,
                width: None,
            })
            .collect();
        let rdr = ReaderBuilder::new().dialect(self.dialect.clone()).from_path(path)?;
        self.settle(rdr, parts)
    }

    /// The first record start after the window from `at` where the
    /// simulations of the entry states `entries` (bits) meet, in windows
    /// from `window` bytes, each twice the one before, up to 1 MiB from
    /// `at`; `None` if they do not meet (the input's end, if it comes
    /// first).
    pub(super) fn meet(&self, input: &[u8], at: usize, entries: u16, window: usize) -> Option<u64> {
        // The state each entry state has reached, window after window
        // (each twice as long as the one before).
        let mut reached: [u8; STATES] = std::array::from_fn(|e| e as u8);
        let (mut from, mut w) = (at, window.max(1));
        let x = loop {
            if from == input.len() {
                // The input's end is a record start in any case.
                return Some(from as u64);
            }
            if from - at >= 1 << 20 {
                return None;
            }
            let end = from.saturating_add(w).min(at + (1 << 20)).min(input.len());
            let s = self.summarize(input, from..end).ok()?;
            for r in reached.iter_mut() {
                *r = s.exit[*r as usize];
            }
            (from, w) = (end, w.saturating_mul(2));
            let mut live = (0..STATES).filter(|&e| entries & (1 << e) != 0).map(|e| reached[e]);
            let x = live.next()?;
            if live.all(|y| y == x) {
                break x;
            }
        };
        Some(self.first_from(input, from, x, window))
    }
}
