//! Files and directories only their owner can read: what skein creates under its state and
//! archive directories (transcripts, prompts, logs) is mode 0600, every directory 0700,
//! whatever the process umask says. (Temp files of [`crate::AtomicFile`] are 0600 already.)

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::path::Path;

/// Mode of every file skein creates under its state and archive directories.
pub const FILE_MODE: u32 = 0o600;
/// Mode of every directory skein creates there.
pub const DIR_MODE: u32 = 0o700;

/// Creates `dir` and its missing parents, each new one with mode 0700 (existing ones are left
/// as they are).
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut b = DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(DIR_MODE);
    }
    b.create(dir)
}

/// Creates the single directory `dir` with mode 0700 (an error if it exists).
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let mut b = DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(DIR_MODE);
    }
    b.create(dir)
}

/// Opens `path` for appending, creating it with mode 0600 when missing.
pub fn open_append(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(FILE_MODE);
    }
    o.open(path)
}

/// Opens `path` for reading and writing without truncating it, creating it with mode 0600
/// when missing (lock files).
pub fn open_rw(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true).truncate(false).read(true).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(FILE_MODE);
    }
    o.open(path)
}

/// Removes group and other permissions from `dir` when it has any (a directory created by an
/// older version, or by hand). Returns whether the mode changed.
pub fn restrict_dir(dir: &Path) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::symlink_metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700 | DIR_MODE))?;
            return Ok(true);
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(false)
}

/// The permission bits of `path` (without following a symlink), `None` where there are none.
pub fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::symlink_metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn modes_ignore_the_umask() {
        let dir = tempfile::tempdir().expect("tempdir");
        let nested = dir.path().join("a/b/c");
        create_dir_all(&nested).expect("mkdir");
        for d in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode_of(&dir.path().join(d)), Some(0o700), "{d}");
        }
        let f = nested.join("log");
        drop(open_append(&f).expect("append"));
        assert_eq!(mode_of(&f), Some(0o600));
        let l = nested.join("x.lock");
        drop(open_rw(&l).expect("rw"));
        assert_eq!(mode_of(&l), Some(0o600));
        let single = dir.path().join("single");
        create_dir(&single).expect("mkdir");
        assert_eq!(mode_of(&single), Some(0o700));
    }

    #[test]
    #[cfg(unix)]
    fn restrict_dir_removes_group_and_other_bits() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().join("old");
        fs::create_dir(&d).expect("mkdir");
        fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).expect("chmod");
        assert!(restrict_dir(&d).expect("restrict"));
        assert_eq!(mode_of(&d), Some(0o700));
        assert!(!restrict_dir(&d).expect("again"));
    }
}
