//! The error type of the compositions.

use std::path::PathBuf;

/// What can go wrong while composing the libraries. Every variant names its file or pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Archive(#[from] skein_archive::ArchiveError),
    #[error(transparent)]
    Load(#[from] skein_reports::session::LoadError),
    #[error(transparent)]
    Restore(#[from] skein_layout::archive::RestoreError),
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("redaction rules do not compile: {0}")]
    Redact(#[from] skein_redact::Error),
    #[error("{0}")]
    Pass(String),
}

/// `e` and its sources, `: `-separated (as `anyhow` shows an error with `{:#}`).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
