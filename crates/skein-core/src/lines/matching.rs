//! [`ReadLines::advance_to`]: the next line that contains a needle, found with one search
//! over the bytes. Lines without it are passed over unsplit: the search for the needle runs
//! over the whole block, and only the line it lands in is delimited (back to the newline
//! before the match, on to the one after it). `skein usage` reads the fifth of a transcript's
//! lines that mention `"usage"`; a newline search and a needle search over every line were
//! two passes over all the bytes (docs/performance.md, stop 42).

use std::io::{self, Read};

use memchr::memmem::Finder;

use super::{LineSource, ReadLines};

impl<R: Read> ReadLines<R> {
    /// Moves to the next line that contains `finder`'s needle; `false` at the end of input.
    /// The line is what [`super::LineSource::advance`] would give (its offset, text and raw
    /// bytes; CRLF, a BOM and a torn last line alike), except its number: lines passed over
    /// are not counted, so [`super::Line::number`] is 0 from the first call on (a caller that
    /// needs the number of a line counts the newlines before its offset). A line longer than
    /// the maximum line length is passed over whether it holds the needle or not, in bounded
    /// memory.
    pub fn advance_to(&mut self, finder: &Finder<'_>) -> io::Result<bool> {
        if self.first {
            self.skip_bom()?;
        }
        self.skipped = None;
        self.numbered = false;
        let reach = finder.needle().len().saturating_sub(1);
        // Bytes of `buf[start..end]` searched for the needle (a needle can still start in the
        // last `reach` of them).
        let mut searched = 0;
        loop {
            let window = &self.buf[self.start..self.end];
            let Some(hit) = finder.find(&window[searched..]).map(|i| i + searched) else {
                // Every complete line here is passed over; the partial last one is kept.
                if let Some(n) = memchr::memrchr(b'\n', &window[searched..]) {
                    self.pass(searched + n + 1);
                }
                let partial = self.end - self.start;
                searched = partial.saturating_sub(reach);
                if partial > self.max_line {
                    self.skip_long_line()?;
                    self.skipped = None;
                    searched = 0;
                    continue;
                }
                if self.eof {
                    self.pass(partial);
                    return Ok(false);
                }
                self.fill()?;
                continue;
            };
            // The lines before the match's are passed over; its own is read as `advance` reads
            // a line, its end searched for from the match on (one newline search for both).
            let line_start = memchr::memrchr(b'\n', &window[..hit]).map_or(0, |n| n + 1);
            self.pass(line_start);
            self.scanned = hit - line_start;
            if !LineSource::advance(self)? {
                // (Not reached: the match is in the buffer, so a line is there.)
                return Ok(false);
            }
            if self.skipped.is_none() {
                return Ok(true);
            }
            // Too long: passed over like the lines without the needle.
            self.skipped = None;
            searched = 0;
        }
    }

    /// Passes over the next `len` bytes of the buffer (lines not returned).
    fn pass(&mut self, len: usize) {
        self.start += len;
        self.offset += len as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LineSource, ReadLines};
    use memchr::memmem::Finder;
    use proptest::prelude::*;

    /// (offset, raw bytes, text, terminated, too long) of each line `advance_to` gives, and
    /// the bytes consumed at the end.
    type Seen = (Vec<(u64, Vec<u8>, Vec<u8>, bool)>, u64);

    fn matching(input: &[u8], needle: &[u8], block: usize, max: usize) -> Seen {
        let finder = Finder::new(needle);
        let mut lines = ReadLines::with_block_size(input, block).with_max_line(max);
        let mut out = Vec::new();
        while lines.advance_to(&finder).expect("in memory") {
            let l = lines.line();
            assert_eq!(l.number, 0, "lines passed over are not counted");
            assert!(l.too_long.is_none());
            out.push((l.offset, l.raw.to_vec(), l.text.to_vec(), l.terminated));
        }
        (out, lines.consumed())
    }

    /// What `advance_to` must give: the lines `advance` gives (at another block size), not
    /// too long and containing the needle, and the same bytes consumed.
    fn filtered(input: &[u8], needle: &[u8], max: usize) -> Seen {
        let finder = Finder::new(needle);
        let mut lines = ReadLines::with_block_size(input, 3).with_max_line(max);
        let mut out = Vec::new();
        while lines.advance().expect("in memory") {
            let l = lines.line();
            if l.too_long.is_none() && finder.find(l.text).is_some() {
                out.push((l.offset, l.raw.to_vec(), l.text.to_vec(), l.terminated));
            }
        }
        (out, lines.consumed())
    }

    #[test]
    fn finds_the_lines_that_hold_the_needle_at_every_block_size() {
        let input: &[u8] =
            b"\xEF\xBB\xBF{\"usage\":1}\r\nno\n\nxx\"usa\nge\"\n{\"a\":\"usage\"}\n\"usage\"";
        for block in 1..=input.len() + 1 {
            for max in [1, 5, 12, 13, 14, 200] {
                assert_eq!(
                    matching(input, b"\"usage\"", block, max),
                    filtered(input, b"\"usage\"", max),
                    "block {block}, max {max}"
                );
            }
        }
        let (found, consumed) = matching(input, b"\"usage\"", 4, 200);
        let offsets: Vec<u64> = found.iter().map(|l| l.0).collect();
        assert_eq!(offsets, [3, 31, 45]);
        assert_eq!(consumed, input.len() as u64);
        assert_eq!(found[0].2, b"{\"usage\":1}", "CRLF taken off the text");
        assert!(!found[2].3, "a torn last line");
    }

    proptest! {
        /// Lines of needle pieces, newlines and CRs, read at tiny blocks and maximum lengths:
        /// the same lines as `advance` filtered, needles across block ends included.
        #[test]
        fn agrees_with_advance_filtered(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(&b"ab"[..]), Just(&b"a"[..]), Just(&b"b"[..]), Just(&b"x"[..]),
                    Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b"\xEF\xBB\xBF"[..]),
                ],
                0..60,
            ),
            block in 1usize..9,
            max in 1usize..40,
        ) {
            let input = parts.concat();
            prop_assert_eq!(matching(&input, b"ab", block, max), filtered(&input, b"ab", max));
        }
    }
}
