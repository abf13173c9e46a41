//! `restore`: write archived files back to given paths (the caller, `skein-layout`, knows where
//! in a Claude Code projects tree each one belongs).
//!
//! Each file is restored as archived (after the ingest transform), up to its committed length.
//! Existing files with identical content are left alone; different content is a conflict unless
//! `overwrite` is set. Every target is read and compared before anything is written, so a
//! conflict writes nothing.

use std::path::PathBuf;

use crate::archive::Archive;
use crate::error::{ArchiveError, Result};
use crate::layout::{read_optional, resolve, write_file_atomic};
use crate::reader::read_archived;

/// What goes to one target path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreContent {
    /// An archive file (relative to the archive root), decoded.
    Archived(String),
    /// Literal bytes (e.g. a sidecar file); with `if_missing`, an existing file is kept
    /// whatever it holds.
    Bytes { bytes: Vec<u8>, if_missing: bool },
}

/// One file to restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreItem {
    pub target: PathBuf,
    pub content: RestoreContent,
}

/// What restore wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    pub written: Vec<PathBuf>,
    /// Already present with identical content (or kept, for `if_missing` items).
    pub unchanged: Vec<PathBuf>,
}

impl Archive {
    /// Restores `items`: all or nothing with respect to conflicts (an existing target with
    /// different content fails the call before anything is written, unless `overwrite`).
    /// Files are written atomically with mode 0600, missing directories created with 0700.
    pub fn restore(&self, items: &[RestoreItem], overwrite: bool) -> Result<RestoreReport> {
        let mut report = RestoreReport::default();
        let mut todo = Vec::new();
        for item in items {
            let path = &item.target;
            let existing = read_optional(path)?;
            let content = match &item.content {
                RestoreContent::Bytes {
                    if_missing: true, ..
                } if existing.is_some() => {
                    report.unchanged.push(path.clone());
                    continue;
                }
                RestoreContent::Bytes { bytes, .. } => bytes.clone(),
                RestoreContent::Archived(rel) => read_archived(&resolve(&self.root, rel)?)?,
            };
            match existing {
                Some(e) if e == content => report.unchanged.push(path.clone()),
                Some(_) if !overwrite => {
                    return Err(ArchiveError::Conflict { path: path.clone() });
                }
                _ => todo.push((path, content)),
            }
        }
        for (path, content) in todo {
            write_file_atomic(path, &content)?;
            report.written.push(path.clone());
        }
        Ok(report)
    }
}
