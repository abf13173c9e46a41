//! Atomic file replacement: write to a temp file beside the target, fsync it, rename it over
//! the target, then fsync the directory. A crash at any point leaves the old or the new file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file being written that replaces `target` only when [`AtomicFile::commit`] is called.
/// Dropping it without committing removes the temp file and leaves the target untouched.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: tempfile::NamedTempFile,
}

impl AtomicFile {
    /// Creates a temp file in the target's directory (which must exist).
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let dir = parent_dir(&target);
        let temp = tempfile::Builder::new()
            .prefix(".skein-tmp-")
            .tempfile_in(dir)?;
        Ok(Self { target, temp })
    }

    /// Sets the permission bits the file will have (Unix only; a no-op elsewhere).
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            self.temp
                .as_file()
                .set_permissions(fs::Permissions::from_mode(mode))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        Ok(())
    }

    /// The open temp file.
    pub fn file(&mut self) -> &mut File {
        self.temp.as_file_mut()
    }

    /// Flushes, fsyncs and renames the temp file over the target, then fsyncs the directory.
    pub fn commit(mut self) -> io::Result<()> {
        self.temp.as_file_mut().flush()?;
        self.temp.as_file().sync_all()?;
        self.temp.persist(&self.target).map_err(|e| e.error)?;
        sync_dir(parent_dir(&self.target))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.as_file_mut().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.as_file_mut().flush()
    }
}

/// Replaces `target` with `bytes` atomically.
pub fn write_atomic(target: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(target)?;
    file.write_all(bytes)?;
    file.commit()
}

/// Fsyncs a directory so a rename inside it is durable (a no-op where unsupported).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_and_drop_keeps_old() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("state.json");
        write_atomic(&target, b"old").expect("first write");
        {
            let mut f = AtomicFile::create(&target).expect("create");
            f.write_all(b"half").expect("write");
            // dropped without commit
        }
        assert_eq!(fs::read(&target).expect("read"), b"old");
        write_atomic(&target, b"new").expect("second write");
        assert_eq!(fs::read(&target).expect("read"), b"new");
        let leftovers = fs::read_dir(dir.path())
            .expect("read_dir")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with(".skein-tmp-"))
            })
            .count();
        assert_eq!(leftovers, 0);
    }
}
