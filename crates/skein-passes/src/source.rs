//! Where a pass reads from and how its output is counted. A structural pass (prune,
//! snapshot) reads its input twice: once to index it (offsets, kinds, links: a few dozen bytes
//! a record) and once to write it, copying the lines it keeps from the input. So the input is a
//! [`Source`] that can be opened more than once (a file, a memory slice), never held whole in
//! memory by the pass.

use std::io::{self, Read, Write};

/// A transcript that can be read from the start more than once, each time with the same
/// bytes (an immutable file, a file read up to a fixed length, a slice).
pub trait Source {
    /// A reader from the first byte.
    fn open(&self) -> io::Result<Box<dyn Read + '_>>;

    /// A reader from byte `offset`. The default reads and drops what comes before; sources
    /// that can seek do better.
    fn open_at(&self, offset: u64) -> io::Result<Box<dyn Read + '_>> {
        let mut r = self.open()?;
        let skipped = io::copy(&mut (&mut r).take(offset), &mut io::sink())?;
        if skipped < offset {
            return Err(changed());
        }
        Ok(r)
    }
}

impl Source for &[u8] {
    fn open(&self) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(*self))
    }

    fn open_at(&self, offset: u64) -> io::Result<Box<dyn Read + '_>> {
        let at = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        Ok(Box::new(&self[at..]))
    }
}

impl Source for Vec<u8> {
    fn open(&self) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(self.as_slice()))
    }

    fn open_at(&self, offset: u64) -> io::Result<Box<dyn Read + '_>> {
        let at = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        Ok(Box::new(&self[at..]))
    }
}

/// A pass's intermediate output that the next pass reads (a temp file, or memory).
pub trait Spool: Write {
    /// The bytes written, as a source (called once, after the last write).
    fn into_source(self: Box<Self>) -> io::Result<Box<dyn Source>>;
}

impl Spool for Vec<u8> {
    fn into_source(self: Box<Self>) -> io::Result<Box<dyn Source>> {
        Ok(self)
    }
}

/// The error of a source whose bytes are not what an earlier read of it saw.
pub(crate) fn changed() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the input changed while it was processed (it is shorter, or its lines moved)",
    )
}

/// Reads a source again, line by line, by the lengths an earlier scan found: lines are
/// skipped, copied or read whole without looking for newlines again.
pub(crate) struct Replay<'a> {
    src: skein_core::PageReader<Box<dyn Read + 'a>>,
    /// A copy waiting to be done (consecutive copied lines become one copy).
    pending: u64,
}

impl<'a> Replay<'a> {
    pub(crate) fn new(src: Box<dyn Read + 'a>) -> Self {
        Self {
            // (Not a `BufReader`: its buffer's place in its page slows the kernel's copy,
            // `skein_core::page`.)
            src: skein_core::PageReader::with_capacity(256 << 10, src),
            pending: 0,
        }
    }

    /// Skips `n` bytes.
    pub(crate) fn skip(&mut self, n: u64, out: &mut dyn Write) -> io::Result<()> {
        self.flush(out)?;
        let got = io::copy(&mut (&mut self.src).take(n), &mut io::sink())?;
        if got < n {
            return Err(changed());
        }
        Ok(())
    }

    /// Copies the next `n` bytes to `out` (possibly later, together with the next copies).
    pub(crate) fn copy(&mut self, n: u64) {
        self.pending += n;
    }

    /// Reads the next `n` bytes into `buf` (replacing its contents).
    pub(crate) fn read(
        &mut self,
        n: u64,
        buf: &mut Vec<u8>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        self.flush(out)?;
        buf.clear();
        let got = (&mut self.src).take(n).read_to_end(buf)?;
        if (got as u64) < n {
            return Err(changed());
        }
        Ok(())
    }

    /// Does the pending copy.
    pub(crate) fn flush(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let n = std::mem::take(&mut self.pending);
        if n > 0 {
            let got = io::copy(&mut (&mut self.src).take(n), out)?;
            if got < n {
                return Err(changed());
            }
        }
        Ok(())
    }
}

/// Line and byte counts of what passes through, as [`crate::Totals::of`] counts a whole
/// buffer.
pub(crate) struct Counting<'w> {
    inner: &'w mut dyn Write,
    bytes: u64,
    newlines: u64,
    last: Option<u8>,
    bom: u64,
}

impl<'w> Counting<'w> {
    /// Counts what is written to `inner`; `bom` says the output starts with a BOM (written
    /// through this writer too), which no line count includes.
    pub(crate) fn new(inner: &'w mut dyn Write, bom: bool) -> Self {
        Self {
            inner,
            bytes: 0,
            newlines: 0,
            last: None,
            bom: if bom { 3 } else { 0 },
        }
    }

    /// Writes a BOM (the output's first bytes), which no line count includes.
    pub(crate) fn write_bom(&mut self) -> io::Result<()> {
        self.bom = 3;
        self.write_all(b"\xEF\xBB\xBF")
    }

    pub(crate) fn totals(&self) -> crate::Totals {
        let tail = u64::from(self.bytes > self.bom && self.last != Some(b'\n'));
        crate::Totals {
            lines: self.newlines + tail,
            bytes: self.bytes,
        }
    }
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let done = &buf[..n];
        self.bytes += n as u64;
        self.newlines += memchr::memchr_iter(b'\n', done).count() as u64;
        if let Some(&b) = done.last() {
            self.last = Some(b);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_matches_totals_of() {
        for data in [
            &b""[..],
            b"\xEF\xBB\xBF",
            b"\xEF\xBB\xBFa\n",
            b"a\nb",
            b"a\n\n",
        ] {
            let mut sink = Vec::new();
            let mut c = Counting::new(&mut sink, data.starts_with(b"\xEF\xBB\xBF"));
            for chunk in data.chunks(2) {
                c.write_all(chunk).expect("write");
            }
            assert_eq!(c.totals(), crate::Totals::of(data), "{data:?}");
        }
    }

    #[test]
    fn replay_copies_skips_and_reads() {
        let data = b"aa\nbbb\ncc\ndd\n".to_vec();
        let mut r = Replay::new(data.open().expect("open"));
        let mut out = Vec::new();
        let mut buf = Vec::new();
        r.copy(3);
        r.skip(4, &mut out).expect("skip");
        r.read(3, &mut buf, &mut out).expect("read");
        r.copy(3);
        r.flush(&mut out).expect("flush");
        assert_eq!(
            (out.as_slice(), buf.as_slice()),
            (&b"aa\ndd\n"[..], &b"cc\n"[..])
        );
        assert!(r.skip(1, &mut out).is_err());
        let mut at = data.open_at(7).expect("open at");
        let mut rest = Vec::new();
        at.read_to_end(&mut rest).expect("read");
        assert_eq!(rest, b"cc\ndd\n");
    }
}
