//! Why an export failed.

use std::path::PathBuf;

/// An export error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A transcript could not be read.
    #[error(transparent)]
    Load(#[from] skein_reports::session::LoadError),
    /// A file of the dataset could not be written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The Parquet writer refused a batch (a bug, or the disk).
    #[error("parquet: {0}")]
    Parquet(String),
}
