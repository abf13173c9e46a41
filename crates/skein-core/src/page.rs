//! Where what is read lands in memory. The kernel copies a read out of the page cache page by
//! page, and on the AMD EPYC machines skein is measured on, that copy took three times as long
//! when its destination sat 1 to 31 bytes past its source within a 4 KiB page (4 KiB aliasing
//! between the copy's loads and stores; `benches/machine_probe.py align` measures it). A heap
//! buffer that comes from `mmap` (128 KiB or more, as a rule) starts 16 bytes into a page, and
//! a file read from its start into one hits exactly that. So the readers of files place their
//! data where it sits in its page of the input: [`crate::ReadLines`] and the archive's pump
//! (half a page off, for zstd's copy after it) through [`settle_in_page`], the rest through
//! [`PageReader`] (docs/performance.md, "Reads that land in their page").

use std::io::{self, BufRead, Read};

/// The page the alignment of reads is reckoned in.
pub const PAGE: usize = 4096;

/// The index in `buf` at which `len` bytes of input that end at input position `read` should
/// start, so that every byte sits at the same place within a 4 KiB page of memory as within a
/// page of the input, and the next read of a file lands page-aligned with the page cache it is
/// copied from.
///
/// Why it matters: the kernel copies a read page by page, and on the AMD EPYC machines skein is
/// measured on, the copy took three times as long when the destination sat 1 to 31 bytes past
/// its source within a page (4 KiB aliasing of the copy's loads and stores). A heap buffer
/// from `mmap` starts 16 bytes into a page, so reading a file from its start into it hit exactly
/// that: over one project directory, two thirds of the bytes the `floor read` example read
/// took the slow copy (`strace` of its reads; docs/performance.md, "Reads that land in their
/// page").
#[must_use]
pub fn in_page_start(buf: &[u8], read: u64, len: usize) -> usize {
    // (The position's low bits are all that count, so a truncating cast is exact here.)
    #[allow(clippy::cast_possible_truncation)]
    let read = read as usize;
    read.wrapping_sub(len).wrapping_sub(buf.as_ptr() as usize) & (PAGE - 1)
}

/// Moves the bytes `buf[data]`, which end at input position `read`, to where
/// [`in_page_start`] puts them, first growing `buf` so that `room` bytes fit after them.
/// Returns their new start.
pub fn settle_in_page(
    buf: &mut Vec<u8>,
    data: std::ops::Range<usize>,
    read: u64,
    room: usize,
) -> usize {
    let len = data.len();
    let need = len + room + PAGE;
    if buf.len() < need {
        // (May move the buffer, which is why the place is worked out after it.)
        buf.resize(need, 0);
    }
    let at = in_page_start(buf, read, len);
    if at != data.start {
        buf.copy_within(data, at);
    }
    at
}

/// A buffered reader (as `std::io::BufReader`) whose reads land where their bytes sit in their
/// page of the input, counting from where `inner` stands when it is wrapped.
pub struct PageReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// What is buffered: `buf[pos..filled]`.
    pos: usize,
    filled: usize,
    /// Bytes read from `inner` so far.
    read: u64,
    block: usize,
}

impl<R> std::fmt::Debug for PageReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageReader")
            .field("read", &self.read)
            .field("block", &self.block)
            .finish_non_exhaustive()
    }
}

impl<R: Read> PageReader<R> {
    /// Reads `inner` a `block` (at least 1 byte) at a time.
    pub fn with_capacity(block: usize, inner: R) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            pos: 0,
            filled: 0,
            read: 0,
            block: block.max(1),
        }
    }
}

impl<R: Read> Read for PageReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let have = self.fill_buf()?;
        let n = have.len().min(out.len());
        out[..n].copy_from_slice(&have[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for PageReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.filled {
            let at = settle_in_page(&mut self.buf, 0..0, self.read, self.block);
            let n = loop {
                match self.inner.read(&mut self.buf[at..at + self.block]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other?,
                }
            };
            self.read += n as u64;
            (self.pos, self.filled) = (at, at + n);
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.filled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settling_keeps_the_data_and_places_it_in_its_page() {
        let mut buf = Vec::new();
        let mut state = 7u64;
        for round in 0..500 {
            // (A small LCG: data lengths, rooms and positions all over the page.)
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let len = (state >> 33) as usize % 9000;
            let room = 1 + (state >> 20) as usize % 70_000;
            let read = len as u64 + (state >> 7) % 1_000_000;
            let start = if buf.len() > len {
                (state >> 40) as usize % (buf.len() - len)
            } else {
                0
            };
            if buf.len() < start + len {
                buf.resize(start + len, 0);
            }
            let data: Vec<u8> = (0..len).map(|i| (i * 31 + round) as u8).collect();
            buf[start..start + len].copy_from_slice(&data);
            let at = settle_in_page(&mut buf, start..start + len, read, room);
            assert_eq!(&buf[at..at + len], &data[..], "round {round}");
            assert!(buf.len() >= at + len + room, "round {round}: no room");
            let end = buf.as_ptr() as usize + at + len;
            assert_eq!(
                end.wrapping_sub(read as usize) & (PAGE - 1),
                0,
                "round {round}"
            );
        }
    }

    #[test]
    fn a_page_reader_reads_everything_and_lands_every_read_in_its_page() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        for (block, most, take) in [(1 << 17, usize::MAX, 4096), (4096, 1000, 7), (7, 3, 5000)] {
            let src = landing::Landing::new(&data[..], most);
            let mut r = PageReader::with_capacity(block, src);
            let mut back = Vec::new();
            let mut chunk = vec![0; take];
            loop {
                let n = r.read(&mut chunk).expect("read");
                if n == 0 {
                    break;
                }
                back.extend_from_slice(&chunk[..n]);
            }
            assert_eq!(back, data, "block {block}");
            assert!(r.inner.off.len() > 2);
            assert!(
                r.inner.off.iter().all(|&d| d == 0),
                "block {block}: reads off their page by {:?}",
                r.inner
                    .off
                    .iter()
                    .filter(|&&d| d != 0)
                    .take(5)
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// A reader for tests that notes where each read landed.
#[cfg(test)]
pub(crate) mod landing {
    use super::PAGE;
    use std::io::{self, Read};

    /// Notes, for every read, how far its destination sits from its input position within a
    /// page (0 when the read lands where its bytes sit in their page of the input) and the
    /// largest read asked of it, and returns at most `most` bytes a read.
    pub(crate) struct Landing<R> {
        pub(crate) inner: R,
        pos: usize,
        pub(crate) off: Vec<usize>,
        pub(crate) widest: usize,
        most: usize,
    }

    impl<R> Landing<R> {
        pub(crate) fn new(inner: R, most: usize) -> Self {
            Self {
                inner,
                pos: 0,
                off: Vec::new(),
                widest: 0,
                most,
            }
        }
    }

    impl<R: Read> Read for Landing<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.off
                .push((buf.as_ptr() as usize).wrapping_sub(self.pos) & (PAGE - 1));
            self.widest = self.widest.max(buf.len());
            let most = buf.len().min(self.most);
            let n = self.inner.read(&mut buf[..most])?;
            self.pos += n;
            Ok(n)
        }
    }
}
