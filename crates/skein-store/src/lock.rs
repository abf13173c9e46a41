//! Exclusive lock files with a timeout, built on the standard library's advisory file locks.
//! The lock is released when the [`FileLock`] is dropped (or the process dies).

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why a lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot open lock file {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("timed out after {waited:?} waiting for lock {path}")]
    Timeout { path: PathBuf, waited: Duration },
    #[error("cannot lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A held exclusive lock on a lock file.
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Takes an exclusive lock on `path` (created with mode 0600 if missing), retrying until
    /// `timeout`.
    pub fn acquire(path: impl AsRef<Path>, timeout: Duration) -> Result<Self, LockError> {
        let path = path.as_ref().to_path_buf();
        // Mode 0600: lock files live in skein's private state and archive directories.
        let file = crate::private::open_rw(&path).map_err(|source| LockError::Open {
            path: path.clone(),
            source,
        })?;
        let start = Instant::now();
        let mut pause = Duration::from_micros(200);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { file, path }),
                Err(TryLockError::WouldBlock) => {
                    let waited = start.elapsed();
                    if waited >= timeout {
                        return Err(LockError::Timeout { path, waited });
                    }
                    std::thread::sleep(pause.min(timeout.saturating_sub(waited)));
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(TryLockError::Error(source)) => return Err(LockError::Lock { path, source }),
            }
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Closing the file releases the lock as well; unlocking first makes it prompt.
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_times_out_until_first_drops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("x.lock");
        let first = FileLock::acquire(&p, Duration::from_secs(1)).expect("first");
        let err = FileLock::acquire(&p, Duration::from_millis(30)).expect_err("must time out");
        assert!(matches!(err, LockError::Timeout { .. }), "{err}");
        drop(first);
        FileLock::acquire(&p, Duration::from_millis(30)).expect("free again");
    }
}
