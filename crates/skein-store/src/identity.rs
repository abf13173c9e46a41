//! File identity: the (device, inode) pair that names a file whatever path reaches it (a
//! symlink, a hard link, `./x` or `/abs/x`). Used to refuse writing a command's output over
//! its own input, and to notice that a path was replaced while a file was open.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// The identity of a file: its device and inode (on other systems than Unix, no identity is
/// known and [`FileId::of`] returns `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    /// The identity of the file `path` names, following symlinks; `None` if nothing exists
    /// there (or identities are unknown on this system).
    pub fn of(path: &Path) -> io::Result<Option<Self>> {
        match std::fs::metadata(path) {
            Ok(m) => Ok(Self::of_metadata(&m)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The identity of an open file.
    pub fn of_file(file: &File) -> io::Result<Option<Self>> {
        Ok(Self::of_metadata(&file.metadata()?))
    }

    /// The identity recorded in `metadata`.
    #[cfg(unix)]
    #[allow(clippy::unnecessary_wraps)]
    pub fn of_metadata(metadata: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        Some(Self {
            dev: metadata.dev(),
            ino: metadata.ino(),
        })
    }

    /// The identity recorded in `metadata` (unknown on this system).
    #[cfg(not(unix))]
    pub fn of_metadata(_metadata: &Metadata) -> Option<Self> {
        None
    }
}

/// Whether `a` and `b` name the same existing file (by identity, so through symlinks and hard
/// links). A path that does not exist is never the same as anything.
pub fn same_file(a: &Path, b: &Path) -> io::Result<bool> {
    match (FileId::of(a)?, FileId::of(b)?) {
        (Some(x), Some(y)) => Ok(x == y),
        _ => Ok(false),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn links_and_spellings_are_the_same_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.jsonl");
        std::fs::write(&a, b"{}\n").expect("write");
        let sym = dir.path().join("sym.jsonl");
        std::os::unix::fs::symlink(&a, &sym).expect("symlink");
        let hard = dir.path().join("hard.jsonl");
        std::fs::hard_link(&a, &hard).expect("hard link");
        let dotted = dir.path().join(".").join("a.jsonl");
        for other in [&sym, &hard, &dotted] {
            assert!(same_file(&a, other).expect("stat"), "{}", other.display());
        }
        let b = dir.path().join("b.jsonl");
        std::fs::write(&b, b"{}\n").expect("write");
        assert!(!same_file(&a, &b).expect("stat"));
        assert!(!same_file(&a, &dir.path().join("missing")).expect("stat"));
        let f = File::open(&a).expect("open");
        assert_eq!(
            FileId::of_file(&f).expect("fstat"),
            FileId::of(&a).expect("stat")
        );
    }
}
