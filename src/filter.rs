//! Non-visible character filtering of field contents.
//!
//! A 256-entry table marks the bytes that may start something to remove.
//! Clean fields pay one table look-up per byte and no copy; only fields that
//! contain a hit are compacted.

use crate::dialect::Filter;

/// Per-filter table: `true` where a byte may begin something to drop.
pub(crate) struct FilterTable {
    level: Filter,
    hit: [bool; 256],
}

impl FilterTable {
    pub(crate) fn new(level: Filter) -> FilterTable {
        let mut hit = [false; 256];
        if level != Filter::Off {
            for (b, h) in hit.iter_mut().enumerate().take(0x20) {
                *h = true;
                let _ = b;
            }
            hit[0x7f] = true;
            if level != Filter::AllControls {
                hit[b'\t' as usize] = false;
                hit[b'\n' as usize] = false;
                hit[b'\r' as usize] = false;
            }
            if level == Filter::Invisible {
                // Lead bytes of U+00AD (C2 AD), U+2xxx (E2 ..) and U+FEFF (EF BB BF).
                hit[0xc2] = true;
                hit[0xe2] = true;
                hit[0xef] = true;
            }
        }
        FilterTable { level, hit }
    }

    /// Is filtering on at all?
    #[inline]
    pub(crate) fn active(&self) -> bool {
        self.level != Filter::Off
    }

    /// Length of the invisible sequence starting at `s[0]`, or 0 to keep it.
    #[inline]
    fn drop_len(&self, s: &[u8]) -> usize {
        let b = s[0];
        if b < 0x20 || b == 0x7f {
            return 1;
        }
        if self.level != Filter::Invisible {
            return 0;
        }
        match (b, s.get(1), s.get(2)) {
            (0xc2, Some(0xad), _) => 2,
            (0xe2, Some(0x80), Some(&c))
                if (0x8b..=0x8f).contains(&c) || (0xaa..=0xae).contains(&c) =>
            {
                3
            }
            (0xe2, Some(0x81), Some(&c))
                if (0xa0..=0xa4).contains(&c) || (0xa6..=0xa9).contains(&c) =>
            {
                3
            }
            (0xef, Some(0xbb), Some(0xbf)) => 3,
            _ => 0,
        }
    }

    /// Offset of the first byte to drop, if any.
    #[inline]
    pub(crate) fn first_hit(&self, s: &[u8]) -> Option<usize> {
        let mut i = 0;
        while i < s.len() {
            if self.hit[s[i] as usize] && self.drop_len(&s[i..]) > 0 {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// Appends `src` to `dst` without the dropped bytes.
    pub(crate) fn copy_filtered(&self, src: &[u8], dst: &mut Vec<u8>) {
        let mut i = 0;
        let mut run = 0;
        while i < src.len() {
            if self.hit[src[i] as usize] {
                let n = self.drop_len(&src[i..]);
                if n > 0 {
                    dst.extend_from_slice(&src[run..i]);
                    i += n;
                    run = i;
                    continue;
                }
            }
            i += 1;
        }
        dst.extend_from_slice(&src[run..]);
    }

    /// Removes dropped bytes from `buf[start..]` in place.
    pub(crate) fn compact_tail(&self, buf: &mut Vec<u8>, start: usize) {
        let mut w = start;
        let mut r = start;
        while r < buf.len() {
            let b = buf[r];
            if self.hit[b as usize] {
                let n = self.drop_len(&buf[r..]);
                if n > 0 {
                    r += n;
                    continue;
                }
            }
            buf[w] = b;
            w += 1;
            r += 1;
        }
        buf.truncate(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filt(level: Filter, s: &[u8]) -> Vec<u8> {
        let t = FilterTable::new(level);
        let mut out = Vec::new();
        t.copy_filtered(s, &mut out);
        let mut inplace = b"xx".to_vec();
        inplace.extend_from_slice(s);
        t.compact_tail(&mut inplace, 2);
        assert_eq!(&inplace[2..], &out[..]);
        out
    }

    #[test]
    fn levels() {
        let s = b"a\x00\tb\r\nc\x7f\x1b";
        assert_eq!(filt(Filter::Off, s), s.to_vec());
        assert_eq!(filt(Filter::Controls, s), b"a\tb\r\nc".to_vec());
        assert_eq!(filt(Filter::AllControls, s), b"abc".to_vec());
        let u =
            "x\u{00ad}y\u{200b}\u{200f}z\u{202a}\u{2060}\u{2066}\u{feff}\u{00e9}\u{2014}\u{2065}!"
                .as_bytes();
        assert_eq!(filt(Filter::Invisible, u), "xyz\u{00e9}\u{2014}\u{2065}!".as_bytes().to_vec());
        assert_eq!(filt(Filter::Controls, u), u.to_vec());
        // truncated sequences are kept
        assert_eq!(filt(Filter::Invisible, b"\xe2\x80"), b"\xe2\x80".to_vec());
    }
}
