//! Physical lines with their exact bytes and positions, from a `Read` stream (bounded memory:
//! one buffer that grows only to the largest line) or from an in-memory slice (mmap).

use std::io::{self, Read};

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
}

impl Line<'_> {
    /// True when the line holds only spaces, tabs and carriage returns.
    pub fn is_blank(&self) -> bool {
        self.text.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
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
    eof: bool,
    number: u64,
    offset: u64,
    block: usize,
    first: bool,
    bom: bool,
    /// The current line: start in `buf`, length, offset in the input.
    current: (usize, usize, u64),
}

impl<R> std::fmt::Debug for ReadLines<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadLines")
            .field("number", &self.number)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

/// Default block size for stream reads.
pub const DEFAULT_BLOCK: usize = 2 << 20;

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
            eof: false,
            number: 0,
            offset: 0,
            block,
            first: true,
            bom: false,
            current: (0, 0, 0),
        }
    }

    /// Reads more bytes after `end`, compacting or growing the buffer as needed.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 && self.buf.len() - self.end < self.block {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < self.block {
            let new_len = (self.buf.len() * 2).max(self.end + self.block);
            self.buf.resize(new_len, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
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

impl<R: Read> LineSource for ReadLines<R> {
    fn advance(&mut self) -> io::Result<bool> {
        if self.first {
            self.skip_bom()?;
        }
        loop {
            let window = &self.buf[self.start + self.scanned..self.end];
            if let Some(i) = memchr::memchr(b'\n', window) {
                let len = self.scanned + i + 1;
                self.take(len);
                return Ok(true);
            }
            self.scanned = self.end - self.start;
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
        make_line(self.number, offset, &self.buf[at..at + len])
    }

    fn had_bom(&self) -> bool {
        self.bom
    }

    fn consumed(&self) -> u64 {
        self.offset
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

    fn collect(src: &mut dyn LineSource) -> Vec<Owned> {
        let mut out = Vec::new();
        while let Some(l) = src.next_line().expect("read") {
            out.push((
                l.number,
                l.offset,
                l.text.to_vec(),
                l.raw.to_vec(),
                l.terminated,
            ));
        }
        out
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
