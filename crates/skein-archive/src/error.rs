//! The archive's error type.

use std::io;
use std::path::{Path, PathBuf};

use skein_store::{LockError, NameError, ReplaceError};

/// Everything that can go wrong in the archive. Every variant names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("refusing {what} {id:?} as a path component: {source}")]
    UnsafeId {
        what: &'static str,
        id: String,
        source: NameError,
    },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Replace(#[from] ReplaceError),
    #[error("{path}: unreadable JSON state: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: unsupported format version {found} (this build reads {supported})")]
    Format {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("invalid timestamp {0:?} (expected ISO 8601, e.g. 2026-01-05T14:03:22.123Z)")]
    Timestamp(String),
    #[error("invalid option: {0}")]
    Option(String),
    #[error("{0} not found in the archive")]
    NotFound(String),
    #[error("{path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path} already exists with different content (use overwrite to replace it)")]
    Conflict { path: PathBuf },
    #[error("{path}: metadata: {source}")]
    Meta {
        path: PathBuf,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("dictionary: {0}")]
    Dict(String),
    #[error("{path}: not a skein archive ({reason})")]
    NotAnArchive { path: PathBuf, reason: &'static str },
}

/// Result with [`ArchiveError`].
pub type Result<T, E = ArchiveError> = std::result::Result<T, E>;

/// Attaches a path to an `io::Error`.
pub(crate) trait IoContext<T> {
    fn ctx(self, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn ctx(self, path: &Path) -> Result<T> {
        self.map_err(|source| ArchiveError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

pub(crate) fn corrupt(path: &Path, reason: impl Into<String>) -> ArchiveError {
    ArchiveError::Corrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}
