//! The inputs and scratch files of the passes ([`skein_passes::Source`], [`Spool`]): a plain
//! file read up to the length it had when opened (a live session may grow meanwhile), a
//! compressed file decoded again for each read, standard input spooled to an unlinked temp
//! file, and temp files between the passes of a pipeline. None is held in memory.

use std::borrow::Borrow;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use skein_passes::{Source, Spool};
use skein_store::{FileRange, Input, InputMode};

/// Bytes `0..len` of an open file (owned, or borrowed: `FileSource<&File>`).
#[derive(Debug)]
pub struct FileSource<F = File> {
    file: F,
    len: u64,
}

impl<F: Borrow<File>> FileSource<F> {
    /// The first `len` bytes of `file`.
    pub fn new(file: F, len: u64) -> Self {
        Self { file, len }
    }

    /// How many bytes it holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<F: Borrow<File>> Source for FileSource<F> {
    fn open(&self) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(FileRange::new(self.file.borrow(), 0, self.len)))
    }

    fn open_at(&self, offset: u64) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(FileRange::new(
            self.file.borrow(),
            offset,
            self.len,
        )))
    }
}

/// A compressed transcript, decoded from the start at every read.
#[derive(Debug)]
struct Reopen(PathBuf);

impl Source for Reopen {
    fn open(&self) -> io::Result<Box<dyn Read + '_>> {
        match skein_layout::open(&self.0, InputMode::Read).map_err(|e| e.source)? {
            Input::Stream(r) => Ok(r),
            Input::Mapped(m) => Ok(Box::new(io::Cursor::new(m))),
        }
    }
}

/// The transcript at `path` as a source: a plain file up to its current length, a `.zst`
/// file decoded on each read, or standard input (`-`) copied into an unlinked temp file.
pub fn open_source(path: &Path) -> io::Result<Box<dyn Source>> {
    if path.as_os_str() == "-" {
        let mut spool = TempSpool::new()?;
        io::copy(&mut io::stdin().lock(), &mut spool)?;
        return Box::new(spool).into_source();
    }
    if skein_store::is_zstd(path) {
        // Fails early (a missing file, a damaged frame header) rather than at the first pass.
        Reopen(path.to_path_buf()).open()?;
        return Ok(Box::new(Reopen(path.to_path_buf())));
    }
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    Ok(Box::new(FileSource::new(file, meta.len())))
}

/// A pass's output kept for the next pass: an unlinked temp file (in `TMPDIR`), written
/// through a buffer.
#[derive(Debug)]
pub struct TempSpool {
    out: io::BufWriter<File>,
    len: u64,
}

impl TempSpool {
    /// A new, empty spool.
    pub fn new() -> io::Result<Self> {
        Ok(Self {
            out: io::BufWriter::with_capacity(256 << 10, tempfile::tempfile()?),
            len: 0,
        })
    }
}

impl Write for TempSpool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Spool for TempSpool {
    fn into_source(self: Box<Self>) -> io::Result<Box<dyn Source>> {
        let len = self.len;
        let file = self
            .out
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        Ok(Box::new(FileSource::new(file, len)))
    }
}

/// A new [`TempSpool`], boxed, for [`skein_passes::Pipeline::run_source`].
pub fn temp_spool() -> io::Result<Box<dyn Spool>> {
    Ok(Box::new(TempSpool::new()?))
}

/// Passes what is written on to `out` and notes whether it differs from the bytes `original`
/// yields (for an in-place rewrite that replaces nothing when the result is the input).
pub struct DiffersFrom<'a> {
    out: &'a mut dyn Write,
    original: io::BufReader<Box<dyn Read + 'a>>,
    differs: bool,
    scratch: Vec<u8>,
}

impl<'a> DiffersFrom<'a> {
    /// Writes to `out`, comparing with `original`.
    pub fn new(out: &'a mut dyn Write, original: Box<dyn Read + 'a>) -> Self {
        Self {
            out,
            original: io::BufReader::with_capacity(256 << 10, original),
            differs: false,
            scratch: Vec::new(),
        }
    }

    /// Whether what was written differs from the original (reads the rest of the original to
    /// know whether it was longer).
    pub fn differs(mut self) -> io::Result<bool> {
        if !self.differs {
            let mut one = [0u8; 1];
            self.differs = self.original.read(&mut one)? > 0;
        }
        Ok(self.differs)
    }
}

impl Write for DiffersFrom<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        if !self.differs {
            self.scratch.clear();
            let got = (&mut self.original)
                .take(n as u64)
                .read_to_end(&mut self.scratch)?;
            self.differs = got < n || self.scratch[..] != buf[..n];
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differs_from_sees_changes_and_lengths() {
        let cases: [(&[u8], &[u8], bool); 4] = [
            (b"abc\n", b"abc\n", false),
            (b"abc\n", b"abd\n", true),
            (b"abc\n", b"abc", true),
            (b"abc", b"abc\n", true),
        ];
        for (original, written, want) in cases {
            let mut sink = Vec::new();
            let mut d = DiffersFrom::new(&mut sink, Box::new(original));
            for b in written.chunks(2) {
                d.write_all(b).expect("write");
            }
            assert_eq!(d.differs().expect("read"), want, "{original:?} {written:?}");
            assert_eq!(sink, written);
        }
    }
}
