//! Physical lines with their exact bytes and positions, from a `Read` stream (bounded memory:
//! one buffer that grows only to the largest line, and never past the maximum line length:
//! a longer line is skipped to its end in blocks and reported by its position and length, as
//! ripgrep's line buffer does) or from an in-memory slice (mmap).

use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::page::{PAGE, in_page_start, settle_in_page};

mod matching;

/// The default maximum line length: 256 MiB. Claude Code's longest lines (a large file read,
/// an image) are a few MiB; a line of hundreds of MiB is damage or not a transcript.
pub const DEFAULT_MAX_LINE: usize = 256 << 20;

static MAX_LINE: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_LINE);

/// The maximum line length new readers start with ([`DEFAULT_MAX_LINE`] unless
/// [`set_default_max_line`] changed it).
pub fn default_max_line() -> usize {
    MAX_LINE.load(Ordering::Relaxed)
}

/// Sets the maximum line length of readers created from now on in this process (the `skein`
/// binary does it once, from `--max-line`, before reading anything). At least 1.
pub fn set_default_max_line(max: usize) {
    MAX_LINE.store(max.max(1), Ordering::Relaxed);
}

/// One physical line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based physical line number (blank lines count).
    pub number: u64,
    /// Byte offset of the line's first byte from the start of the input (a BOM counts).
    pub offset: u64,
    /// The line without its terminator (`\n` or `\r\n`).
    pub text: &'a [u8],
    /// The line exactly as in the input, terminator included (a leading BOM excluded).
    pub raw: &'a [u8],
    /// Whether the line ended with `\n` (only the last line of an input may not).
    pub terminated: bool,
    /// Set when the line was longer than the reader's maximum line length: its bytes were
    /// skipped, not kept (`text` and `raw` are empty), and this is its length in bytes,
    /// terminator included.
    pub too_long: Option<u64>,
}

impl Line<'_> {
    /// True when the line holds only spaces, tabs and carriage returns.
    pub fn is_blank(&self) -> bool {
        self.too_long.is_none() && self.text.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
    }

    /// The line's length in the input, terminator included.
    pub fn len(&self) -> u64 {
        self.too_long.unwrap_or(self.raw.len() as u64)
    }

    /// True for an empty last line (never returned by a line source).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A source of lines (a lending iterator: each line borrows the source until the next call).
pub trait LineSource {
    /// Moves to the next line; `false` at the end of input.
    fn advance(&mut self) -> io::Result<bool>;
    /// The current line (valid after `advance` returned `true`, until the next `advance`).
    fn line(&self) -> Line<'_>;
    /// Whether the input started with a UTF-8 byte-order mark (known after the first line).
    fn had_bom(&self) -> bool;
    /// Bytes of input consumed so far (through the end of the current line, BOM included).
    fn consumed(&self) -> u64;
    /// Lines longer than `max` bytes are skipped in bounded memory and returned with
    /// [`Line::too_long`] set (sources that hold the whole input in memory keep them whole;
    /// the [`crate::Reader`] reports them invalid either way).
    fn set_max_line(&mut self, max: usize) {
        let _ = max;
    }
    /// The next line, or `None` at the end of input.
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        if self.advance()? {
            Ok(Some(LineSource::line(self)))
        } else {
            Ok(None)
        }
    }
}

impl<S: LineSource + ?Sized> LineSource for &mut S {
    fn advance(&mut self) -> io::Result<bool> {
        (**self).advance()
    }
    fn line(&self) -> Line<'_> {
        (**self).line()
    }
    fn had_bom(&self) -> bool {
        (**self).had_bom()
    }
    fn consumed(&self) -> u64 {
        (**self).consumed()
    }
    fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        (**self).next_line()
    }
    fn set_max_line(&mut self, max: usize) {
        (**self).set_max_line(max);
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn make_line(number: u64, offset: u64, raw: &[u8]) -> Line<'_> {
    let terminated = raw.last() == Some(&b'\n');
    let mut text = if terminated {
        &raw[..raw.len() - 1]
    } else {
        raw
    };
    if terminated && text.last() == Some(&b'\r') {
        text = &text[..text.len() - 1];
    }
    Line {
        number,
        offset,
        text,
        raw,
        terminated,
        too_long: None,
    }
}

/// Lines of an in-memory slice (a memory-mapped archive, a test buffer).
#[derive(Debug)]
pub struct SliceLines<'a> {
    data: &'a [u8],
    pos: usize,
    number: u64,
    bom: bool,
    current: (usize, usize),
}

impl<'a> SliceLines<'a> {
    /// Lines of `data`; a leading BOM is skipped.
    pub fn new(data: &'a [u8]) -> Self {
        let bom = data.starts_with(BOM);
        Self {
            data,
            pos: if bom { BOM.len() } else { 0 },
            number: 0,
            bom,
            current: (0, 0),
        }
    }
}

impl LineSource for SliceLines<'_> {
    fn advance(&mut self) -> io::Result<bool> {
        if self.pos >= self.data.len() {
            return Ok(false);
        }
        let rest = &self.data[self.pos..];
        let len = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        self.current = (self.pos, len);
        self.pos += len;
        self.number += 1;
        Ok(true)
    }

    fn line(&self) -> Line<'_> {
        let (at, len) = self.current;
        make_line(self.number, at as u64, &self.data[at..at + len])
    }

    fn had_bom(&self) -> bool {
        self.bom
    }

    fn consumed(&self) -> u64 {
        self.pos.min(self.data.len()) as u64
    }
}

/// Lines of a byte stream read in blocks. Memory is bounded by the block size plus the
/// largest line.
pub struct ReadLines<R> {
    src: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes of `buf[start..end]` already searched for a newline.
    scanned: usize,
    /// Bytes read from `src` so far: the input position of `buf[end]`.
    read: u64,
    eof: bool,
    number: u64,
    offset: u64,
    block: usize,
    first: bool,
    bom: bool,
    /// The current line: start in `buf`, length, offset in the input.
    current: (usize, usize, u64),
    max_line: usize,
    /// The current line was skipped for its length: (length, terminated).
    skipped: Option<(u64, bool)>,
    /// Lines are counted: false once [`ReadLines::advance_to`] passed over some uncounted.
    numbered: bool,
}

impl<R> std::fmt::Debug for ReadLines<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadLines")
            .field("number", &self.number)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

/// Default block size for stream reads. In memory 128 KiB blocks read faster than 2 MiB ones
/// (`stats/synthetic_64MiB_stream*`); from the page cache every size from 64 KiB to 2 MiB
/// copied alike once reads landed in their page (docs/performance.md, stop 34).
pub const DEFAULT_BLOCK: usize = 128 << 10;

impl<R: Read> ReadLines<R> {
    /// Lines of `src`, read in blocks of [`DEFAULT_BLOCK`] bytes.
    pub fn new(src: R) -> Self {
        Self::with_block_size(src, DEFAULT_BLOCK)
    }

    /// Lines of `src`, read in blocks of `block` bytes (at least 1).
    pub fn with_block_size(src: R, block: usize) -> Self {
        Self::with_buffer(src, block, Vec::new())
    }

    /// Like [`ReadLines::with_block_size`], reusing `buf` (its contents are ignored; get it
    /// back with [`ReadLines::into_buffer`] to avoid allocating per file).
    pub fn with_buffer(src: R, block: usize, buf: Vec<u8>) -> Self {
        let block = block.max(1);
        Self {
            src,
            buf,
            start: 0,
            end: 0,
            scanned: 0,
            read: 0,
            eof: false,
            number: 0,
            offset: 0,
            block,
            first: true,
            bom: false,
            current: (0, 0, 0),
            max_line: default_max_line(),
            skipped: None,
            numbered: true,
        }
    }

    /// Sets the maximum line length (see [`LineSource::set_max_line`]).
    #[must_use]
    pub fn with_max_line(mut self, max: usize) -> Self {
        self.max_line = max.max(1);
        self
    }

    /// Reads more bytes after `end`, compacting or growing the buffer as needed. The buffer's
    /// initialized length is at most one block and a page past the data: its capacity grows by
    /// doubling, but pages beyond what is read are never touched, so a long line costs its own
    /// length in memory, not twice that.
    fn fill(&mut self) -> io::Result<()> {
        let len = self.end - self.start;
        if self.buf.len() - self.end < self.block
            || (len == 0 && self.start != in_page_start(&self.buf, self.read, 0))
        {
            self.settle(len);
        }
        loop {
            // One block at a time even when a long line grew the buffer: what the kernel copies
            // stays small enough to be in cache when the line is parsed (docs/performance.md).
            let upto = self.buf.len().min(self.end + self.block);
            match self.src.read(&mut self.buf[self.end..upto]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    self.read += n as u64;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Makes room for a block after the `len` bytes of data, and moves them to where they sit
    /// in their page of the input.
    fn settle(&mut self, len: usize) {
        self.start = settle_in_page(&mut self.buf, self.start..self.end, self.read, self.block);
        self.end = self.start + len;
    }

    fn skip_bom(&mut self) -> io::Result<()> {
        self.first = false;
        while self.end - self.start < BOM.len() && !self.eof {
            self.fill()?;
        }
        if self.buf[self.start..self.end].starts_with(BOM) {
            self.start += BOM.len();
            self.offset += BOM.len() as u64;
            self.bom = true;
        }
        Ok(())
    }
}

impl<R: Read> ReadLines<R> {
    /// The current line is longer than the maximum: forget what is buffered of it and read on
    /// to its end in blocks, counting bytes. The next line starts in the buffer.
    fn skip_long_line(&mut self) -> io::Result<bool> {
        let mut len = (self.end - self.start) as u64;
        self.start = 0;
        self.end = 0;
        self.scanned = 0;
        // Give back the memory of the long line (keep room for two blocks).
        self.buf.truncate(0);
        self.buf.shrink_to(2 * self.block + PAGE);
        let mut terminated = false;
        while !self.eof {
            self.fill()?;
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                len += i as u64 + 1;
                self.start += i + 1;
                terminated = true;
                break;
            }
            len += (self.end - self.start) as u64;
            self.start = self.end;
        }
        self.current = (self.start, 0, self.offset);
        self.skipped = Some((len, terminated));
        self.number += 1;
        self.offset += len;
        Ok(true)
    }
}

impl<R: Read> LineSource for ReadLines<R> {
    fn advance(&mut self) -> io::Result<bool> {
        if self.first {
            self.skip_bom()?;
        }
        self.skipped = None;
        loop {
            let window = &self.buf[self.start + self.scanned..self.end];
            if let Some(i) = memchr::memchr(b'\n', window) {
                let len = self.scanned + i + 1;
                if len > self.max_line.saturating_add(1) {
                    // Found its end within the last block, but it is too long all the same.
                    self.skipped = Some((len as u64, true));
                    self.current = (self.start + len, 0, self.offset);
                    self.start += len;
                    self.scanned = 0;
                    self.number += 1;
                    self.offset += len as u64;
                    return Ok(true);
                }
                self.take(len);
                return Ok(true);
            }
            self.scanned = self.end - self.start;
            if self.scanned > self.max_line {
                return self.skip_long_line();
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(false);
                }
                self.take(self.end - self.start);
                return Ok(true);
            }
            self.fill()?;
        }
    }

    fn line(&self) -> Line<'_> {
        let (at, len, offset) = self.current;
        let number = if self.numbered { self.number } else { 0 };
        let mut line = make_line(number, offset, &self.buf[at..at + len]);
        if let Some((long, terminated)) = self.skipped {
            line.too_long = Some(long);
            line.terminated = terminated;
        }
        line
    }

    fn had_bom(&self) -> bool {
        self.bom
    }

    fn consumed(&self) -> u64 {
        self.offset
    }

    fn set_max_line(&mut self, max: usize) {
        self.max_line = max.max(1);
    }
}

impl<R> ReadLines<R> {
    /// The buffer, for reuse by the next reader.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    fn take(&mut self, len: usize) {
        self.current = (self.start, len, self.offset);
        self.start += len;
        self.scanned = 0;
        self.number += 1;
        self.offset += len as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Owned = (u64, u64, Vec<u8>, Vec<u8>, bool);

    /// Every line with its `too_long`.
    fn collect_capped(src: &mut dyn LineSource) -> Vec<(Owned, Option<u64>)> {
        let mut out = Vec::new();
        while let Some(l) = src.next_line().expect("read") {
            let owned = (
                l.number,
                l.offset,
                l.text.to_vec(),
                l.raw.to_vec(),
                l.terminated,
            );
            out.push((owned, l.too_long));
        }
        out
    }

    fn collect(src: &mut dyn LineSource) -> Vec<Owned> {
        collect_capped(src).into_iter().map(|(l, _)| l).collect()
    }

    #[test]
    fn stream_and_slice_agree_at_every_block_size() {
        let inputs: [&[u8]; 7] = [
            b"",
            b"\n",
            b"a\nbb\r\n\nccc",
            b"\xEF\xBB\xBF{\"a\":1}\r\n{}\n",
            b"\xEF\xBB",
            b"no newline at all",
            b"x\n\n\n  \t\r\ny",
        ];
        for input in inputs {
            let want = collect(&mut SliceLines::new(input));
            for block in [1, 2, 3, 7, 64, 1 << 16] {
                let got = collect(&mut ReadLines::with_block_size(input, block));
                assert_eq!(got, want, "block {block} input {input:?}");
            }
        }
    }

    /// What a reader with maximum `max` must return for `input`: every line as a slice reader
    /// sees it, except that lines whose text is longer than `max` come back empty with their
    /// length.
    fn expected_with_max(input: &[u8], max: usize) -> Vec<(Owned, Option<u64>)> {
        collect(&mut SliceLines::new(input))
            .into_iter()
            .map(|(number, offset, text, raw, terminated)| {
                let len = raw.len() as u64;
                if raw.len() - usize::from(terminated) > max {
                    (
                        (number, offset, Vec::new(), Vec::new(), terminated),
                        Some(len),
                    )
                } else {
                    ((number, offset, text, raw, terminated), None)
                }
            })
            .collect()
    }

    #[test]
    fn long_lines_are_skipped_at_every_block_size() {
        let inputs: [&[u8]; 7] = [
            b"abcdefghij\nab\n",
            b"ab\nabcdefghij\nxy",
            b"abcdefghijklmnopqrstuvwxyz",
            b"\xEF\xBB\xBFabcdefgh\r\nabc\r\n\n",
            b"abcde\nabcdef\nabcdefg\n",
            b"\n\n0123456789012345678901234567890123456789\n\n1\n",
            b"short\nlong long long long long long",
        ];
        for input in inputs {
            for max in [1, 3, 5, 6, 100] {
                let want = expected_with_max(input, max);
                for block in [1, 2, 3, 7, 64] {
                    let mut r = ReadLines::with_block_size(input, block).with_max_line(max);
                    let got = collect_capped(&mut r);
                    assert_eq!(got, want, "block {block} max {max} input {input:?}");
                    assert_eq!(r.consumed(), input.len() as u64);
                }
            }
        }
    }

    #[test]
    fn a_huge_line_costs_bounded_memory() {
        // 64 MiB without a newline, then a short line; maximum 1 KiB, blocks of 4 KiB.
        let huge = std::io::repeat(b'x').take(64 << 20);
        let tail: &[u8] = b"\n{\"ok\":1}\n";
        let mut r = ReadLines::with_block_size(huge.chain(tail), 4096).with_max_line(1024);
        let first = r.next_line().expect("read").expect("line");
        assert_eq!(
            (first.too_long, first.terminated, first.offset),
            (Some((64 << 20) + 1), true, 0)
        );
        let second = r.next_line().expect("read").expect("line");
        assert_eq!(second.text, b"{\"ok\":1}");
        assert_eq!(second.offset, (64 << 20) + 1);
        assert!(r.next_line().expect("read").is_none());
        let cap = r.into_buffer().capacity();
        assert!(cap <= 16 << 10, "buffer grew to {cap} bytes");
    }

    #[test]
    fn reads_stay_one_block_after_a_long_line_grew_the_buffer() {
        // A 1 MiB line grows the buffer; the short lines after it are still read a block at a
        // time (what the kernel copies should fit in the cache the parse reads it from).
        let mut text = vec![b'y'; 1 << 20];
        text.push(b'\n');
        for i in 0..5000 {
            text.extend_from_slice(format!("{{\"n\":{i}}}\n").as_bytes());
        }
        let src = crate::page::landing::Landing::new(&text[..], usize::MAX);
        let mut r = ReadLines::with_block_size(src, 4096);
        let mut n = 0;
        while r.next_line().expect("read").is_some() {
            n += 1;
        }
        assert_eq!(n, 5001);
        assert!(r.buf.capacity() >= 1 << 20, "the long line was held whole");
        assert_eq!(r.src.widest, 4096);
    }

    #[test]
    fn every_read_lands_where_its_bytes_sit_in_their_page() {
        use crate::page::landing::Landing;

        // A BOM, short lines, a line of many blocks (which grows and moves the buffer), a line
        // over the maximum (skipped), and a last line without its newline; three files through
        // one buffer, as the bulk passes do; reads that return a block, or less.
        let mut text = b"\xEF\xBB\xBF".to_vec();
        for i in 0..3000 {
            text.extend_from_slice(format!("{{\"n\":{i}}}\n").as_bytes());
        }
        text.extend_from_slice(&vec![b'y'; 300_000]);
        text.push(b'\n');
        text.extend_from_slice(&vec![b'z'; 2_000_000]);
        text.extend_from_slice(b"\n{\"after\":1}\n{\"last\":2}");
        for (block, most) in [(DEFAULT_BLOCK, usize::MAX), (4096, 1000), (7, 3)] {
            let mut buf = Vec::new();
            for file in 0..3 {
                let src = Landing::new(&text[..], most);
                let mut r = ReadLines::with_buffer(src, block, buf).with_max_line(1_000_000);
                let (mut n, mut skipped) = (0, 0);
                while let Some(line) = r.next_line().expect("read") {
                    n += 1;
                    skipped += usize::from(line.too_long.is_some());
                }
                assert_eq!((n, skipped), (3004, 1), "block {block}, file {file}");
                assert!(
                    r.src.off.len() > 2,
                    "block {block}: {} reads",
                    r.src.off.len()
                );
                let off = std::mem::take(&mut r.src.off);
                assert!(
                    off.iter().all(|&d| d == 0),
                    "block {block}, file {file}: reads off their page by {:?}",
                    off.iter().filter(|&&d| d != 0).take(5).collect::<Vec<_>>()
                );
                buf = r.into_buffer();
            }
        }
    }

    #[test]
    fn crlf_bom_and_offsets() {
        let mut s = SliceLines::new(b"\xEF\xBB\xBFab\r\ncd");
        let a = s.next_line().expect("io").expect("line");
        assert_eq!(
            (a.number, a.offset, a.text, a.terminated),
            (1, 3, &b"ab"[..], true)
        );
        assert_eq!(a.raw, b"ab\r\n");
        let b = s.next_line().expect("io").expect("line");
        assert_eq!(
            (b.number, b.offset, b.text, b.terminated),
            (2, 7, &b"cd"[..], false)
        );
        assert!(s.next_line().expect("io").is_none());
        assert!(s.had_bom());
    }
}
