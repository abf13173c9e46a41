//! The catalog's errors.

use std::path::{Path, PathBuf};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An SQLite error on the catalog at `path`.
    #[error("catalog {path}: {source}")]
    Sql {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// Another process holds the catalog's write lock past the busy timeout.
    #[error("catalog {path} is busy (another skein is writing it)")]
    Busy { path: PathBuf },
    /// The catalog could not be used even after rebuilding it.
    #[error("catalog {path} is unusable: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    /// A search query that cannot be run.
    #[error("{0}")]
    Query(String),
    /// The redaction rules the catalog was asked to apply do not compile.
    #[error("catalog redaction rules: {0}")]
    Redact(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn sql(path: &Path, source: rusqlite::Error) -> Self {
        match source.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                Self::Busy {
                    path: path.to_path_buf(),
                }
            }
            _ => Self::Sql {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The catalog was busy (a writer held it past the timeout).
    pub fn is_busy(&self) -> bool {
        matches!(self, Self::Busy { .. })
    }
}

/// The catalog's result type.
pub type Result<T> = std::result::Result<T, Error>;
