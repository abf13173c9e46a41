//! Whether two paths name the same file: the device and inode of [`FileId`], whatever path
//! reaches it (a symlink, a hard link, `./x` or `/abs/x`). Used to refuse writing a command's
//! output over its own input, and to notice that a path was replaced while a file was open.
//! Unlike [`FileId::same_file`] (a transcript across reboots, where device numbers may change)
//! this compares the device too: two files on different file systems may share an inode.

use std::fs::Metadata;
use std::io;
use std::path::Path;

use crate::append::FileId;

/// The (device, inode) of `metadata` (`(0, 0)` where the platform has none).
pub fn key(metadata: &Metadata) -> (u64, u64) {
    let id = FileId::of(metadata);
    (id.dev, id.ino)
}

/// The (device, inode) of the file `path` names, following symlinks; `None` if nothing
/// exists there.
pub fn key_of(path: &Path) -> io::Result<Option<(u64, u64)>> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(Some(key(&m))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether `a` and `b` name the same existing file (by identity, so through symlinks and hard
/// links). A path that does not exist is never the same as anything; where the platform has
/// no inodes, nothing is.
pub fn same_file(a: &Path, b: &Path) -> io::Result<bool> {
    match (key_of(a)?, key_of(b)?) {
        (Some((0, 0)), _) | (_, Some((0, 0))) => Ok(false),
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
        let f = std::fs::File::open(&a).expect("open");
        assert_eq!(
            Some(key(&f.metadata().expect("fstat"))),
            key_of(&a).expect("stat")
        );
    }
}
