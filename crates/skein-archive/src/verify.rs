//! `verify`: every archive file decodes up to its committed length with the checksums intact,
//! holds the line and byte counts its checkpoint records, ends with a newline, and agrees with
//! its `.meta.json` and its index entry; nothing referenced is missing and nothing on disk is
//! unaccounted for. Read-only: it takes no locks and changes nothing.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::checkpoint::{Checkpoint, FileState};
use crate::error::{IoContext, Result};
use crate::index::{self, IndexEntry};
use crate::layout::{
    ARCHIVE_SUFFIX, CHECKPOINT_DIR, MAIN_DIR, META_SUFFIX, SUBAGENT_DIR, meta_rel_path,
    read_optional, resolve, to_rel,
};
use crate::reader::decode_stats;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Harmless or repaired by the next ingest / [`crate::Archive::recover_all`].
    Warning,
    /// Data is missing, damaged or inconsistent.
    Error,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("checkpoint unreadable: {0}")]
    CheckpointUnreadable(String),
    #[error("index unreadable: {0}")]
    IndexUnreadable(String),
    #[error("interrupted operation pending: {0}")]
    Pending(String),
    #[error("archive file missing")]
    MissingArchive,
    #[error("archive file is {actual} bytes, shorter than the committed {committed}")]
    Truncated { committed: u64, actual: u64 },
    #[error("{0} bytes past the committed length (torn frame from a crash)")]
    UncommittedTail(u64),
    #[error("does not decode: {0}")]
    Undecodable(String),
    #[error("dictionary: {0}")]
    MissingDictionary(String),
    #[error("holds {lines} lines / {bytes} bytes, checkpoint says {want_lines} / {want_bytes}")]
    ContentMismatch {
        lines: u64,
        bytes: u64,
        want_lines: u64,
        want_bytes: u64,
    },
    #[error("last line has no newline")]
    NotNewlineTerminated,
    #[error("meta file missing")]
    MissingMeta,
    #[error("meta file disagrees with the checkpoint: {0}")]
    MetaMismatch(String),
    #[error(
        "meta file describes an earlier committed state (a crash came between the checkpoint and the meta update)"
    )]
    MetaStale,
    #[error("not in the index")]
    NotInIndex,
    #[error("index entry disagrees with the checkpoint")]
    IndexMismatch,
    #[error("index entry for a file no checkpoint owns")]
    IndexWithoutFile,
    #[error("file not referenced by any checkpoint")]
    Orphan,
}

/// A finding about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub severity: Severity,
    pub path: PathBuf,
    pub problem: Problem,
}

/// The outcome of [`verify`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub checkpoints: usize,
    pub files: usize,
    pub lines: u64,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub issues: Vec<Issue>,
}

impl VerifyReport {
    /// No errors (warnings allowed).
    pub fn is_ok(&self) -> bool {
        self.errors().next().is_none()
    }

    pub fn errors(&self) -> impl Iterator<Item = &Issue> {
        self.issues.iter().filter(|i| i.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Issue> {
        self.issues
            .iter()
            .filter(|i| i.severity == Severity::Warning)
    }

    fn push(&mut self, severity: Severity, path: &Path, problem: Problem) {
        self.issues.push(Issue {
            severity,
            path: path.to_path_buf(),
            problem,
        });
    }
}

/// Checks the whole archive at `dir`.
pub fn verify(dir: &Path) -> Result<VerifyReport> {
    use Severity::{Error, Warning};
    let root = dir;
    let mut r = VerifyReport::default();
    let idx = match index::load(root) {
        Ok(i) => Some(i),
        Err(e) => {
            r.push(
                Error,
                &root.join(crate::layout::INDEX_FILE),
                Problem::IndexUnreadable(e.to_string()),
            );
            None
        }
    };
    let mut referenced = BTreeSet::new();
    for (ck_path, ck) in load_all_checkpoints(root)? {
        let ck = match ck {
            Ok(c) => c,
            Err(e) => {
                r.push(
                    Error,
                    &ck_path,
                    Problem::CheckpointUnreadable(e.to_string()),
                );
                continue;
            }
        };
        r.checkpoints += 1;
        if let Some(p) = &ck.pending_new {
            referenced.insert(p.clone());
            referenced.insert(meta_rel_path(p));
            r.push(Warning, &ck_path, Problem::Pending(format!("new file {p}")));
        }
        if let Some(p) = &ck.pending_compaction {
            referenced.insert(p.temp.clone());
            r.push(
                Warning,
                &ck_path,
                Problem::Pending(format!("compaction of {}", p.file)),
            );
        }
        for f in ck.files() {
            referenced.insert(f.file.clone());
            referenced.insert(meta_rel_path(&f.file));
            verify_file(root, f, (idx.as_ref(), ck.indexed), &mut r)?;
        }
    }
    if let Some(idx) = &idx {
        for path in idx.entries.keys() {
            if !referenced.contains(path) {
                r.push(Error, &root.join(path), Problem::IndexWithoutFile);
            }
        }
    }
    let mut on_disk = Vec::new();
    for top in [MAIN_DIR, SUBAGENT_DIR] {
        walk(&root.join(top), &mut on_disk)?;
    }
    for path in on_disk {
        let rel = to_rel(path.strip_prefix(root).unwrap_or(&path));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with(".skein-tmp-") || referenced.contains(&rel) {
            continue;
        }
        if name.ends_with(ARCHIVE_SUFFIX) || name.ends_with(META_SUFFIX) {
            r.push(Warning, &path, Problem::Orphan);
        }
    }
    Ok(r)
}

fn verify_file(
    root: &Path,
    f: &FileState,
    (idx, indexed): (Option<&index::Index>, bool),
    r: &mut VerifyReport,
) -> Result<()> {
    use Severity::{Error, Warning};
    r.files += 1;
    let path = resolve(root, &f.file)?;
    let Ok(len) = fs::metadata(&path).map(|m| m.len()) else {
        r.push(Error, &path, Problem::MissingArchive);
        return Ok(());
    };
    if len < f.committed_len {
        r.push(
            Error,
            &path,
            Problem::Truncated {
                committed: f.committed_len,
                actual: len,
            },
        );
    } else if len > f.committed_len {
        r.push(
            Warning,
            &path,
            Problem::UncommittedTail(len - f.committed_len),
        );
    }
    r.compressed_bytes += f.committed_len.min(len);
    let dict = match f.dict.map(|d| crate::dict::load(root, d)).transpose() {
        Ok(d) => d,
        Err(e) => {
            r.push(Error, &path, Problem::MissingDictionary(e.to_string()));
            return Ok(());
        }
    };
    match decode_stats(&path, f.committed_len, dict.as_deref(), |_| ()) {
        Err(e) => r.push(Error, &path, Problem::Undecodable(e)),
        Ok(st) => {
            r.lines += st.lines;
            r.raw_bytes += st.raw_bytes;
            if st.lines != f.lines || st.raw_bytes != f.raw_bytes {
                let p = Problem::ContentMismatch {
                    lines: st.lines,
                    bytes: st.raw_bytes,
                    want_lines: f.lines,
                    want_bytes: f.raw_bytes,
                };
                r.push(Error, &path, p);
            }
            if !st.ends_with_newline {
                r.push(Error, &path, Problem::NotNewlineTerminated);
            }
        }
    }
    let meta_path = resolve(root, &meta_rel_path(&f.file))?;
    match read_optional(&meta_path)? {
        None => r.push(Error, &meta_path, Problem::MissingMeta),
        Some(bytes) => match serde_json::from_slice::<FileState>(&bytes) {
            Err(e) => r.push(Error, &meta_path, Problem::MetaMismatch(e.to_string())),
            Ok(m)
                if m.file == f.file
                    && m.version == f.version
                    && m.kind == f.kind
                    && m.lines <= f.lines
                    && m.source.offset <= f.source.offset
                    && m != *f =>
            {
                r.push(Warning, &meta_path, Problem::MetaStale);
            }
            Ok(m) if m != *f => {
                let what = if m.committed_len != f.committed_len || m.lines != f.lines {
                    format!(
                        "lines {} vs {}, length {} vs {}",
                        m.lines, f.lines, m.committed_len, f.committed_len
                    )
                } else {
                    "metadata differs".to_owned()
                };
                r.push(Error, &meta_path, Problem::MetaMismatch(what));
            }
            Ok(_) => {}
        },
    }
    if let Some(idx) = idx {
        // An index update the checkpoint still records as pending is a warning, not an error.
        let sev = if indexed { Error } else { Warning };
        match idx.entries.get(&f.file) {
            None => r.push(sev, &path, Problem::NotInIndex),
            Some(e) if *e != IndexEntry::of(f) => r.push(sev, &path, Problem::IndexMismatch),
            Some(_) => {}
        }
    }
    Ok(())
}

/// Every checkpoint file below `root/checkpoints`, sorted, each loaded or with its error.
pub(crate) fn load_all_checkpoints(root: &Path) -> Result<Vec<(PathBuf, Result<Checkpoint>)>> {
    let mut paths = Vec::new();
    walk(&root.join(CHECKPOINT_DIR), &mut paths)?;
    paths.retain(|p| crate::layout::is_json_state(p));
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|p| {
            let ck = Checkpoint::load(&p)
                .and_then(|c| c.ok_or_else(|| crate::error::corrupt(&p, "disappeared")));
            (p, ck)
        })
        .collect())
}

/// All regular files below `dir` (missing `dir` → nothing).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).ctx(dir),
    };
    for entry in entries {
        let entry = entry.ctx(dir)?;
        let path = entry.path();
        let ty = entry.file_type().ctx(&path)?;
        if ty.is_dir() {
            walk(&path, out)?;
        } else if ty.is_file() {
            out.push(path);
        }
    }
    Ok(())
}
