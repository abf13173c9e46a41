//! Tracking source files: what the catalog last saw of each (identity, size, the offset indexed
//! so far and hashes of the bytes before it) and what a refresh must do with it now.

use std::fs::File;
use std::io;
use std::path::Path;

use skein_layout::Source;
use twox_hash::XxHash3_64;

/// Bytes hashed at the head of a file and before the indexed offset.
pub(crate) const HASH_WINDOW: u64 = 4096;

/// A file's identity and size now. For an archive file `size` is its committed length (bytes
/// past it are an uncommitted frame, never read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stat {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
}

/// What the catalog recorded about a source.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Stored {
    pub(crate) id: i64,
    pub(crate) stat: Stat,
    /// Content bytes indexed (decompressed bytes for an archive file); just past a `\n`, or
    /// at the end of a last record written without one (see `index::next_chunk`).
    pub(crate) offset: u64,
    /// Compressed bytes indexed (archive files: a frame boundary).
    pub(crate) zst_offset: u64,
    pub(crate) lines: u64,
    pub(crate) head_hash: u64,
    pub(crate) tail_hash: u64,
    /// An archive file (read from its committed frames), not a live transcript.
    pub(crate) archived: bool,
    /// What usage needs of it, read in the same pass (one read of the table serves the
    /// refresh and the report after it).
    pub(crate) facts: Facts,
}

impl Stored {
    /// The session id a live file was catalogued with, which a listing may take instead of
    /// opening a legacy agent file for it again (Claude Code does not rewrite those files with
    /// another id); `None` for an archive file.
    pub(crate) fn live_session_id(&self) -> Option<String> {
        (!self.archived).then(|| self.facts.session_id.clone())
    }
}

/// A source's identity and usage counters, as the last refresh recorded them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Facts {
    pub(crate) session_id: String,
    pub(crate) agent_id: Option<String>,
    /// The last refresh did not read the file to its end (no size recorded).
    pub(crate) unknown_size: bool,
    pub(crate) usage_lines: u64,
    pub(crate) usage_invalid: u64,
    pub(crate) usage_no_timestamp: u64,
}

/// What to do with a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Nothing changed since it was indexed.
    Unchanged,
    /// Grown: index from the stored offset (after checking the hashes, for a live file).
    Append,
    /// New, or rewritten: (re)index from zero.
    Reindex,
}

/// The identity and size of `source` now; `None` when it is gone.
pub(crate) fn stat(source: &Source) -> Option<Stat> {
    let mut s = stat_path(&source.path)?;
    if let Some(a) = &source.archived {
        s.size = a.state.committed_len.min(s.size);
    }
    Some(s)
}

/// The identity and size of the file at `path`.
pub(crate) fn stat_path(path: &Path) -> Option<Stat> {
    stat_at(rustix::fs::CWD, path)
}

/// The identity and size of the file at `path`, relative to the directory `dir` (an absolute
/// `path` ignores it): the one stat every other here goes through, so a file stat'ed from an
/// opened root and by its whole path reads the same.
fn stat_at(dir: impl rustix::fd::AsFd, path: impl rustix::path::Arg) -> Option<Stat> {
    let s = rustix::fs::statat(dir, path, rustix::fs::AtFlags::empty()).ok()?;
    #[allow(
        clippy::cast_sign_loss,
        clippy::cast_possible_wrap,
        clippy::unnecessary_cast,
        clippy::useless_conversion,
        reason = "`struct stat`'s field types differ between platforms; sizes and times are not negative"
    )]
    Some(Stat {
        dev: s.st_dev as u64,
        ino: s.st_ino as u64,
        size: s.st_size as u64,
        mtime_ns: s.st_mtime as i64 * 1_000_000_000 + s.st_mtime_nsec as i64,
    })
}

/// Directories opened once so that a path below one is stat'ed from there: the kernel then
/// walks only the components below it, not every component from `/` again for each of
/// thousands of files (path walks were most of a refresh with nothing new).
#[derive(Debug, Default)]
pub(crate) struct OpenRoots(Vec<(String, rustix::fd::OwnedFd)>);

impl OpenRoots {
    /// `roots` that can be opened as directories (the others are stat'ed by whole paths).
    pub(crate) fn open(roots: &[std::path::PathBuf]) -> Self {
        use rustix::fs::{Mode, OFlags};
        let opened = roots
            .iter()
            .filter_map(|r| {
                let prefix = r.to_str()?.trim_end_matches('/');
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
                let fd = rustix::fs::open(r, flags, Mode::empty()).ok()?;
                Some((prefix.to_owned(), fd))
            })
            .collect();
        Self(opened)
    }

    /// [`stat_path`] of `path`, relative to the root it lies below.
    pub(crate) fn stat(&self, path: &str) -> Option<Stat> {
        let below = self.0.iter().find_map(|(prefix, fd)| {
            let rest = path.strip_prefix(prefix.as_str())?.strip_prefix('/')?;
            (!rest.is_empty()).then_some((fd, rest))
        });
        match below {
            Some((fd, rest)) => stat_at(fd, rest),
            None => stat_path(Path::new(path)),
        }
    }
}

/// The plan for a source from its stat alone (a live file that grew is checked later, by
/// [`same_prefix`], before its new bytes are read).
pub(crate) fn plan(source: &Source, now: &Stat, stored: Option<&Stored>) -> Plan {
    let Some(old) = stored else {
        return Plan::Reindex;
    };
    if now.ino != old.stat.ino {
        return Plan::Reindex;
    }
    if source.archived.is_some() {
        return match now.size.cmp(&old.zst_offset) {
            std::cmp::Ordering::Equal => Plan::Unchanged,
            std::cmp::Ordering::Greater => Plan::Append,
            std::cmp::Ordering::Less => Plan::Reindex,
        };
    }
    if now.size < old.offset || is_plain_zst(&source.path) && now.size != old.stat.size {
        return Plan::Reindex;
    }
    if now.size == old.stat.size && now.mtime_ns == old.stat.mtime_ns {
        return Plan::Unchanged;
    }
    Plan::Append
}

/// xxh3 of `len` bytes of `file` at `at`.
/// Positional reads only: the indexer hashes through a handle that shares its file position
/// with the reader of the new lines (`try_clone`), so moving that position would make the
/// reader read bytes again (every offset after the first 8 MiB chunk was off by the length of
/// the line cut at the chunk's end, and each refresh re-indexed the file from its start).
fn hash_at(file: &File, at: u64, len: u64, buf: &mut Vec<u8>) -> io::Result<u64> {
    use std::os::unix::fs::FileExt as _;
    buf.clear();
    buf.resize(usize::try_from(len).unwrap_or(usize::MAX), 0);
    file.read_exact_at(buf, at).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank"),
        _ => e,
    })?;
    Ok(XxHash3_64::oneshot(buf))
}

/// The head and tail hashes of the first `offset` bytes of a live file.
pub(crate) fn hashes(file: &File, offset: u64) -> io::Result<(u64, u64)> {
    let mut buf = Vec::with_capacity(HASH_WINDOW as usize);
    let n = offset.min(HASH_WINDOW);
    let head = hash_at(file, 0, n, &mut buf)?;
    let tail = hash_at(file, offset - n, n, &mut buf)?;
    Ok((head, tail))
}

/// Whether the first `stored.offset` bytes of the file are still the ones indexed.
pub(crate) fn same_prefix(file: &File, stored: &Stored) -> bool {
    hashes(file, stored.offset).is_ok_and(|h| h == (stored.head_hash, stored.tail_hash))
}

/// A `.zst` file outside an archive: read whole (a zstd stream cannot be resumed mid-way).
pub(crate) fn is_plain_zst(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stat'ed from an opened root or by its whole path, a path has the same identity, size and
    /// time: below the root, the root itself, outside it, through a symlink, gone.
    #[test]
    fn a_path_below_an_opened_root_stats_as_by_its_whole_path() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().join("projects");
        let deep = root.join("-p/s1/subagents");
        std::fs::create_dir_all(&deep).expect("mkdir");
        let file = deep.join("agent-a.jsonl");
        std::fs::write(&file, b"{}\n").expect("write");
        let beside = dir.path().join("projects2/-p");
        std::fs::create_dir_all(&beside).expect("mkdir");
        std::fs::write(beside.join("s2.jsonl"), b"{}\n{}\n").expect("write");
        let outside = dir.path().join("elsewhere.jsonl");
        std::fs::write(&outside, b"x").expect("write");
        std::os::unix::fs::symlink(&outside, root.join("-p/link.jsonl")).expect("symlink");
        let with_slash = std::path::PathBuf::from(format!("{}/", root.display()));
        let opened = OpenRoots::open(&[with_slash, dir.path().join("missing")]);
        assert_eq!(opened.0.len(), 1, "a missing root is not opened");
        let paths = [
            file.clone(),
            deep,
            root.clone(),
            beside.join("s2.jsonl"),
            outside,
            root.join("-p/link.jsonl"),
            root.join("-p/gone.jsonl"),
        ];
        for p in &paths {
            let text = p.to_str().expect("utf8");
            assert_eq!(opened.stat(text), stat_path(p), "{text}");
            // And as the standard library reads it.
            let std = std::fs::metadata(p).ok().map(|m| {
                use std::os::unix::fs::MetadataExt;
                Stat {
                    dev: m.dev(),
                    ino: m.ino(),
                    size: m.len(),
                    mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                }
            });
            assert_eq!(opened.stat(text), std, "{text}");
        }
        let found = opened.stat(file.to_str().expect("utf8")).expect("stat");
        assert_eq!(found.size, 3);
        assert!(
            opened
                .stat(root.join("-p/gone.jsonl").to_str().expect("utf8"))
                .is_none()
        );
    }
}
