//! `verify`: every archive file decodes up to its committed length with the checksums intact,
//! holds the line and byte counts its checkpoint records, ends with a newline, and agrees with
//! its `.meta.json` and its index entry (`verify_file`); nothing referenced is missing and
//! nothing on disk is unaccounted for. Read-only: it takes no locks and changes nothing, and
//! reads one committed state of each checkpoint even while another process commits.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::checkpoint::{Checkpoint, FileState};
use crate::error::{ArchiveError, IoContext, Result};
use crate::index::{self, Index};
use crate::layout::{
    ARCHIVE_SUFFIX, CHECKPOINT_DIR, INDEX_FILE, MAIN_DIR, META_SUFFIX, SET_ASIDE_DIR, SUBAGENT_DIR,
    meta_rel_path, read_optional, resolve, to_rel,
};
use crate::verify_file::{KeyFindings, check_key};

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
    #[error(
        "{0} bytes past the committed length, left by a crash (the next ingest or repair cuts them; their lines are archived again from the source)"
    )]
    UncommittedTail(u64),
    #[error(
        "the checkpoint's committed length {recorded} is wrong: the frames hold its lines and bytes at byte {found} (repair corrects it)"
    )]
    CommittedLengthWrong { recorded: u64, found: u64 },
    #[error(
        "the checkpoint disagrees with the frames: the complete checksummed frames hold {lines} lines / {bytes} bytes in {len} bytes, {rest} bytes follow (repair rebuilds the checkpoint from the frames and sets the rest aside)"
    )]
    FramesDisagree {
        lines: u64,
        bytes: u64,
        len: u64,
        rest: u64,
    },
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
    #[error(
        "bytes repair removed from an archive file without being able to account for them, kept for inspection"
    )]
    SetAside,
    #[error("the checkpoint kept changing while it was verified; run verify again")]
    Busy,
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

/// How often one checkpoint is checked again when it changed while it was checked.
const TRIES: u32 = 20;

/// The index as last read, with its bytes to notice a newer one.
struct IndexView {
    bytes: Option<Vec<u8>>,
    index: Option<Index>,
    /// What bulk runs announced: index entries ahead of their checkpoint are pending there.
    announced: crate::batch::Announced,
}

impl IndexView {
    fn load(root: &Path, r: &mut VerifyReport) -> Result<Self> {
        let path = root.join(INDEX_FILE);
        let bytes = read_optional(&path)?;
        let index = match index::parse(&path, bytes.as_deref()) {
            Ok(i) => Some(i),
            Err(e) => {
                r.push(
                    Severity::Error,
                    &path,
                    Problem::IndexUnreadable(e.to_string()),
                );
                None
            }
        };
        Ok(Self {
            bytes,
            index,
            announced: crate::batch::announced(root)?,
        })
    }

    /// Reads the index again; `true` if it changed (and parses).
    fn refresh(&mut self, root: &Path) -> Result<bool> {
        self.announced = crate::batch::announced(root)?;
        let path = root.join(INDEX_FILE);
        let bytes = read_optional(&path)?;
        if bytes == self.bytes {
            return Ok(false);
        }
        let Ok(index) = index::parse(&path, bytes.as_deref()) else {
            return Ok(false);
        };
        self.bytes = bytes;
        self.index = Some(index);
        Ok(true)
    }
}

/// Checks the whole archive at `dir` (read-only, no locks). It may run while `skein archive`
/// or the hook commits: each checkpoint is checked against the files it names and read again
/// afterwards; if it changed meanwhile (a commit) it is checked again, so every finding is
/// about one committed state. An index entry or an orphan that looks wrong is looked at again
/// against the newest index and checkpoint before it is reported.
///
/// `dir` must be an archive: empty, or holding part of the archive layout
/// ([`ArchiveError::NotAnArchive`] otherwise).
pub fn verify(dir: &Path) -> Result<VerifyReport> {
    let root = dir;
    ensure_archive(root)?;
    let mut r = VerifyReport::default();
    let mut idx = IndexView::load(root, &mut r)?;
    let mut referenced = BTreeSet::new();
    let mut paths = Vec::new();
    walk(&root.join(CHECKPOINT_DIR), &mut paths)?;
    paths.retain(|p| crate::layout::is_json_state(p));
    paths.sort();
    for ck_path in paths {
        let Some(found) = check_stable(root, &ck_path, &mut idx)? else {
            continue;
        };
        r.checkpoints += usize::from(found.parsed);
        r.files += found.files;
        r.lines += found.lines;
        r.raw_bytes += found.raw_bytes;
        r.compressed_bytes += found.compressed_bytes;
        r.issues.extend(found.issues);
        referenced.extend(found.referenced);
    }
    if let Some(index) = &idx.index {
        for (path, entry) in index.entries.clone() {
            if !referenced.contains(&path) && !owned_now(root, &path, &entry.checkpoint, &mut idx)?
            {
                // A bulk run writes the index just before its checkpoints.
                let severity = if idx.announced.files.contains(&path) {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                r.push(severity, &root.join(&path), Problem::IndexWithoutFile);
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
        if (name.ends_with(ARCHIVE_SUFFIX) || name.ends_with(META_SUFFIX))
            && path.exists()
            && !claimed_now(root, &rel)?
        {
            r.push(Severity::Warning, &path, Problem::Orphan);
        }
    }
    let mut aside = Vec::new();
    walk(&root.join(SET_ASIDE_DIR), &mut aside)?;
    for path in aside {
        r.push(Severity::Warning, &path, Problem::SetAside);
    }
    Ok(r)
}

/// An empty directory (an archive nothing was archived into yet) or one holding something of an
/// archive's layout.
fn ensure_archive(root: &Path) -> Result<()> {
    let not = |reason| {
        Err(ArchiveError::NotAnArchive {
            path: root.to_path_buf(),
            reason,
        })
    };
    let mut entries = match fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return not("not a directory");
        }
        Err(e) => return Err(e).ctx(root),
    };
    if entries.next().is_none() {
        return Ok(());
    }
    let layout = [
        CHECKPOINT_DIR,
        INDEX_FILE,
        MAIN_DIR,
        SUBAGENT_DIR,
        crate::layout::LOCK_DIR,
        crate::layout::DICT_DIR,
        SET_ASIDE_DIR,
    ];
    if layout.iter().any(|name| root.join(name).exists()) {
        return Ok(());
    }
    not("none of checkpoints/, archive-index.json, main-session/, subagent/ is there")
}

/// Checks one checkpoint until two reads of it around the checks agree (`None`: it is gone).
fn check_stable(root: &Path, ck_path: &Path, idx: &mut IndexView) -> Result<Option<KeyFindings>> {
    let mut pause = std::time::Duration::from_millis(2);
    for attempt in 1..=TRIES {
        let Some(before) = read_optional(ck_path)? else {
            return Ok(None);
        };
        let found = match Checkpoint::parse(ck_path, &before) {
            Ok(ck) => {
                let rel = to_rel(ck_path.strip_prefix(root).unwrap_or(ck_path));
                let pending = idx.announced.checkpoints.contains(&rel);
                check_key(root, ck_path, &ck, idx.index.as_ref(), pending)?
            }
            Err(e) => {
                let mut k = KeyFindings::default();
                k.issues.push(Issue {
                    severity: Severity::Error,
                    path: ck_path.to_path_buf(),
                    problem: Problem::CheckpointUnreadable(e.to_string()),
                });
                k
            }
        };
        let stable = read_optional(ck_path)?.as_deref() == Some(before.as_slice());
        if stable && !(found.index_trouble() && idx.refresh(root)?) {
            return Ok(Some(found));
        }
        if attempt == TRIES {
            let mut found = found;
            found.issues.retain(|i| i.severity == Severity::Warning);
            found.issues.push(Issue {
                severity: Severity::Warning,
                path: ck_path.to_path_buf(),
                problem: Problem::Busy,
            });
            return Ok(Some(found));
        }
        if !stable {
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(100));
        }
    }
    Ok(None)
}

/// Whether the index entry `path` is gone from the newest index or its checkpoint refers to it
/// now (it was created or dropped while the archive was checked).
fn owned_now(root: &Path, path: &str, ck_rel: &str, idx: &mut IndexView) -> Result<bool> {
    idx.refresh(root)?;
    if idx
        .index
        .as_ref()
        .is_some_and(|i| !i.entries.contains_key(path))
    {
        return Ok(true);
    }
    refers(&resolve(root, ck_rel)?, path)
}

/// Whether the checkpoint named by the meta file of `rel` (an archive or meta file) refers to
/// it now.
fn claimed_now(root: &Path, rel: &str) -> Result<bool> {
    let meta_rel = if rel.ends_with(META_SUFFIX) {
        rel.to_owned()
    } else {
        meta_rel_path(rel)
    };
    let Some(bytes) = read_optional(&resolve(root, &meta_rel)?)? else {
        return Ok(false);
    };
    let Ok(state) = serde_json::from_slice::<FileState>(&bytes) else {
        return Ok(false);
    };
    refers(&root.join(state.kind.key_path(CHECKPOINT_DIR, "json")), rel)
}

/// Whether the checkpoint at `ck_path` refers to `rel` now.
fn refers(ck_path: &Path, rel: &str) -> Result<bool> {
    Ok(match read_optional(ck_path)? {
        Some(bytes) => Checkpoint::parse(ck_path, &bytes)
            .is_ok_and(|ck| crate::verify_file::referenced(&ck).iter().any(|r| r == rel)),
        None => false,
    })
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
