//! Files that only grow (transcripts): which file a path names ([`FileId`]), where its last
//! complete line ends ([`last_line_end`]), and whether it still continues what an earlier read
//! consumed ([`Consumed::check`]). The hook's per-pass checkpoints and the archive's ingest
//! both decide "appended or rewritten" here.

use std::fs::{File, Metadata};
use std::io;

/// Bytes hashed at each end of what was consumed.
pub const WINDOW: u64 = 4096;

/// Which file a path names and how long it is: device, inode, size (device and inode are 0
/// where the platform has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
}

impl FileId {
    /// The identity of an open file's metadata.
    pub fn of(md: &Metadata) -> Self {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (md.dev(), md.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Self {
            dev,
            ino,
            size: md.len(),
        }
    }

    /// The same file as `earlier`: the same inode. The device is not compared: its number
    /// may change across reboots or remounts (btrfs, NFS) while the inode and the content
    /// hashes of [`Consumed`] still identify the file.
    pub fn same_file(&self, earlier: &Self) -> bool {
        self.ino == earlier.ino
    }
}

/// What a read consumed: `[0, offset)`, with xxh3-64 hashes of its first and last
/// `min(offset, WINDOW)` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Consumed {
    pub offset: u64,
    pub head_len: u64,
    pub head_hash: u64,
    pub tail_len: u64,
    pub tail_hash: u64,
}

/// Why a file no longer continues what was consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    /// The path names another file (inode changed).
    OtherFile,
    /// The file is shorter than what was consumed.
    Shrunk,
    /// Its first bytes changed.
    HeadChanged,
    /// The bytes just before the consumed offset changed.
    TailChanged,
}

impl Consumed {
    /// The mark for `[0, offset)` of `file`.
    pub fn of(file: &File, offset: u64) -> io::Result<Self> {
        let head_len = offset.min(WINDOW);
        let tail_len = offset.min(WINDOW);
        Ok(Self {
            offset,
            head_len,
            head_hash: hash(&read_at(file, 0, head_len)?),
            tail_len,
            tail_hash: hash(&read_at(file, offset - tail_len, tail_len)?),
        })
    }

    /// `None` when `file` (identity `now`; `was` when this was consumed) is the same file grown
    /// by appending; otherwise why not. A mark whose windows do not fit its offset (a damaged
    /// record) never continues.
    pub fn check(&self, file: &File, was: &FileId, now: &FileId) -> io::Result<Option<Break>> {
        if !now.same_file(was) {
            return Ok(Some(Break::OtherFile));
        }
        if now.size < self.offset {
            return Ok(Some(Break::Shrunk));
        }
        if self.head_len > self.offset || hash(&read_at(file, 0, self.head_len)?) != self.head_hash
        {
            return Ok(Some(Break::HeadChanged));
        }
        if self.tail_len > self.offset
            || hash(&read_at(file, self.offset - self.tail_len, self.tail_len)?) != self.tail_hash
        {
            return Ok(Some(Break::TailChanged));
        }
        Ok(None)
    }
}

/// xxh3-64 (seed 0) of `bytes`: the hash of [`Consumed`].
pub fn hash(bytes: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(bytes)
}

/// The position just past the last `\n` in `[start, size)` of `file` (`start` if none).
pub fn last_line_end(file: &File, start: u64, size: u64) -> io::Result<u64> {
    const BLOCK: u64 = 64 << 10;
    let mut hi = size;
    let mut buf = vec![0u8; BLOCK.min(size.saturating_sub(start)) as usize];
    while hi > start {
        let lo = hi.saturating_sub(BLOCK).max(start);
        let block = &mut buf[..(hi - lo) as usize];
        read_exact_at(file, block, lo)?;
        if let Some(i) = memchr::memrchr(b'\n', block) {
            return Ok(lo + i as u64 + 1);
        }
        hi = lo;
    }
    Ok(start)
}

/// `len` bytes at `offset` (a positional read: the file's cursor is unchanged on Unix).
pub fn read_at(file: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; usize::try_from(len).map_err(io::Error::other)?];
    read_exact_at(file, &mut buf, offset)?;
    Ok(buf)
}

/// Fills `buf` from `offset` of `file`.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = file;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn open(p: &std::path::Path) -> (File, FileId) {
        let f = File::open(p).expect("open");
        let id = FileId::of(&f.metadata().expect("md"));
        (f, id)
    }

    #[test]
    fn appends_continue_and_rewrites_break() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("t.jsonl");
        let first: Vec<u8> = (0..3000)
            .flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes())
            .collect();
        std::fs::write(&p, &first).expect("write");
        let (f, was) = open(&p);
        assert_eq!(was.size, first.len() as u64);
        let end = last_line_end(&f, 0, was.size).expect("end");
        assert_eq!(end, was.size);
        let mark = Consumed::of(&f, end).expect("mark");
        assert_eq!((mark.head_len, mark.tail_len), (WINDOW, WINDOW));

        // Appending, with a torn last line: continues; the line end ignores the torn part.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .and_then(|mut f| f.write_all(b"{\"n\":\"new\"}\n{\"torn"))
            .expect("append");
        let (f, now) = open(&p);
        assert_eq!(mark.check(&f, &was, &now).expect("check"), None);
        assert_eq!(last_line_end(&f, end, now.size).expect("end"), end + 12);
        assert_eq!(
            last_line_end(&f, now.size - 3, now.size).expect("end"),
            now.size - 3
        );

        // The same length with one byte changed before the offset, at the start, or shorter.
        let mut edited = first.clone();
        edited[first.len() - 3] = b'x';
        std::fs::write(&p, &edited).expect("write");
        let (f, now) = open(&p);
        assert_eq!(
            mark.check(&f, &was, &now).expect("check"),
            Some(Break::TailChanged)
        );
        edited = first.clone();
        edited[1] = b' ';
        std::fs::write(&p, &edited).expect("write");
        let (f, now) = open(&p);
        assert_eq!(
            mark.check(&f, &was, &now).expect("check"),
            Some(Break::HeadChanged)
        );
        std::fs::write(&p, &first[..100]).expect("write");
        let (f, now) = open(&p);
        assert_eq!(
            mark.check(&f, &was, &now).expect("check"),
            Some(Break::Shrunk)
        );

        // Another file at the same path (a new inode), even with the same bytes.
        let q = dir.path().join("t.new");
        std::fs::write(&q, &first).expect("write");
        std::fs::rename(&q, &p).expect("rename");
        let (f, now) = open(&p);
        if cfg!(unix) {
            assert_eq!(
                mark.check(&f, &was, &now).expect("check"),
                Some(Break::OtherFile)
            );
        }
        // A damaged mark never continues (and never panics).
        let bad = Consumed {
            tail_len: mark.offset + 1,
            ..mark
        };
        assert_eq!(
            bad.check(&f, &now, &now).expect("check"),
            Some(Break::TailChanged)
        );
        assert_eq!(Consumed::of(&f, 0).expect("mark").head_len, 0);
    }
}

/// Bytes `start..end` of an open file, read with positional reads: the descriptor's offset is
/// not used, so several readers can share one open file, and bytes appended past `end` while
/// it is read are not seen.
#[derive(Debug)]
pub struct FileRange<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl<'a> FileRange<'a> {
    /// Bytes `start..end` of `file`.
    pub fn new(file: &'a File, start: u64, end: u64) -> Self {
        Self {
            file,
            pos: start,
            end: end.max(start),
        }
    }
}

impl io::Read for FileRange<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = usize::try_from(self.end - self.pos)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        if want == 0 {
            return Ok(0);
        }
        let n = read_some_at(self.file, &mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_some_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_some_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    read_exact_at(file, buf, offset).map(|()| buf.len())
}
