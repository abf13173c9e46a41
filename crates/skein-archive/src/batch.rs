//! Bulk ingests committed together: [`Batch`].
//!
//! A single [`Archive::ingest`] makes its own commit durable with about eight fsyncs and a
//! rewrite of the whole index; for a first archive of thousands of files that is most of the
//! time. A batch stages each source instead (its lock held, its frame written without fsync,
//! its new checkpoint kept in memory) and commits all of them at once:
//!
//! 1. one filesystem sync (`syncfs`) makes every staged frame, meta file and new checkpoint
//!    (written to temp files, already recording that the index lists its files) durable;
//! 2. the index gets the new files of all keys in one atomic replace;
//! 3. the temp checkpoints are renamed over the real ones: each is the commit point of its key,
//!    as for a single ingest; a second sync makes the renames durable;
//! 4. the batch's journal is removed and the locks are released.
//!
//! Between 2 and 3 the index names files no checkpoint commits yet; the journal announces them,
//! so `verify` reports them as pending (a warning), and settling the journal of a killed batch
//! syncs the index with the checkpoints. Writing the index first saves a second checkpoint
//! rewrite per key (to record that the index lists its files), and replacing a file by rename
//! is the expensive step on ext4.
//!
//! New archive files are listed in the batch's journal (`batches/batch-*.jsonl`, one JSON line
//! per file, appended before the file is created) instead of each checkpoint's `pending_new`,
//! which would cost two fsyncs per file. After a kill the journal's lock is free: the next
//! batch ([`Archive::batch`]) or [`Archive::recover_all`] removes the files their checkpoint
//! does not commit and brings the index in line with the checkpoints of the others. Appended
//! frames need no journal: a frame past the committed length is cut by the next ingest, as
//! after any crash. A kill at any point therefore leaves every key in its old or its new state.
//! A power loss before the first sync can leave a new file the journal does not list yet: it is
//! an orphan (`verify` warns), never a committed file without its data.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skein_store::{AtomicFile, Durability, FileId, FileLock, sync_filesystem};

use crate::archive::Archive;
use crate::checkpoint::{Checkpoint, FileState, to_json};
use crate::error::{IoContext, Result};
use crate::index;
use crate::layout::{
    Kind, ensure_dir, ensure_dir_with, meta_rel_path, remove_file_durable, resolve, to_rel,
};

/// Where batch journals live, below the archive root.
pub const BATCH_DIR: &str = "batches";

/// One line of a journal: a new archive file of `key` that is not committed yet, or, with
/// `withdrawn`, a name `key` announced but found taken by another key when it created it (a
/// recovery must then leave that file alone: it is the other key's).
#[derive(Debug, Serialize, Deserialize)]
struct JournalLine {
    key: Kind,
    file: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    withdrawn: bool,
}

/// A source staged in a batch: its lock, the checkpoint to commit and, for a new archive file,
/// the journal that announced it.
#[derive(Debug)]
pub(crate) struct Staged {
    /// Held until the commit: no other process touches the key in between.
    pub(crate) _lock: FileLock,
    pub(crate) ck_path: PathBuf,
    pub(crate) ck: Checkpoint,
    pub(crate) journal: Option<Arc<Journal>>,
}

/// A batch journal, locked while any source it announced is in flight. It removes itself
/// when the last of them is gone and every announced file was committed; otherwise it stays
/// for recovery.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    file: Mutex<File>,
    announced: AtomicUsize,
    committed: AtomicUsize,
}

impl Drop for Journal {
    fn drop(&mut self) {
        if self.committed.load(Ordering::SeqCst) == self.announced.load(Ordering::SeqCst) {
            // Not durable, and failure is harmless: a journal of committed files is settled as
            // a no-op.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Ingests committed together (see the module docs). Shared by worker threads: staging takes
/// the batch's mutexes only briefly.
#[derive(Debug)]
pub struct Batch<'a> {
    archive: &'a Archive,
    staged: Mutex<Vec<Staged>>,
    /// The journal new announcements go to (a commit starts a fresh one).
    journal: Mutex<Option<Arc<Journal>>>,
}

/// What [`Batch::commit`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCommit {
    /// Sources whose checkpoint was committed.
    pub sources: usize,
    /// New archive files among them.
    pub new_files: usize,
}

impl Archive {
    /// Starts a batch, first finishing what killed batches left (see the module docs).
    pub fn batch(&self) -> Result<Batch<'_>> {
        self.recover_batches()?;
        Ok(Batch {
            archive: self,
            staged: Mutex::new(Vec::new()),
            journal: Mutex::new(None),
        })
    }

    /// Processes the journals of batches that are no longer running: removes the new files
    /// their checkpoint does not commit and syncs the index entries of the others. Returns how
    /// many journals were processed.
    pub(crate) fn recover_batches(&self) -> Result<usize> {
        let dir = self.root.join(BATCH_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e).ctx(&dir),
        };
        let mut done = 0;
        for entry in entries {
            let path = entry.ctx(&dir)?.path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            // A live batch holds its journal's lock.
            let Ok(lock) = FileLock::acquire(&path, Duration::ZERO) else {
                continue;
            };
            let bytes = crate::layout::read_optional(&path)?.unwrap_or_default();
            for j in journal_lines(&bytes) {
                self.settle_journaled(&j)?;
            }
            remove_file_durable(&path)?;
            drop(lock);
            done += 1;
        }
        Ok(done)
    }

    /// One journal line of a dead batch, under its key's lock.
    fn settle_journaled(&self, j: &JournalLine) -> Result<()> {
        j.key.validate()?;
        let _lock = self.lock_key(&j.key)?;
        let ck_path = self.checkpoint_path(&j.key);
        let ck = Checkpoint::load(&ck_path)?;
        let committed = ck
            .as_ref()
            .is_some_and(|c| c.files().any(|f| f.file == j.file));
        // A journal written before names were withdrawn may announce a name another key
        // created and committed: that file is the other key's, never ours to remove.
        if !committed && !self.committed_by_other(&j.file, &j.key)? {
            remove_file_durable(&resolve(&self.root, &j.file)?)?;
            remove_file_durable(&resolve(&self.root, &meta_rel_path(&j.file))?)?;
        }
        let ck_rel = to_rel(ck_path.strip_prefix(&self.root).unwrap_or(&ck_path));
        let files: Vec<&FileState> = ck.iter().flat_map(Checkpoint::files).collect();
        index::modify(&self.root, self.opts.lock_timeout, |idx| {
            index::sync_key(idx, &ck_rel, &files);
        })
    }
}

impl Batch<'_> {
    /// The archive this batch writes to.
    pub fn archive(&self) -> &Archive {
        self.archive
    }

    /// Sources staged and not committed yet.
    pub fn len(&self) -> usize {
        self.staged.lock().map_or(0, |s| s.len())
    }

    /// Whether nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records a new archive file of `key` in the journal before it is created; the caller
    /// keeps the journal in its [`Staged`].
    pub(crate) fn announce(&self, key: &Kind, file: &str) -> Result<Arc<Journal>> {
        self.journal_line(key, file, false)
    }

    /// Withdraws an announcement of `key` for `file` (the name was another key's).
    pub(crate) fn withdraw(&self, key: &Kind, file: &str) -> Result<()> {
        self.journal_line(key, file, true).map(drop)
    }

    fn journal_line(&self, key: &Kind, file: &str, withdrawn: bool) -> Result<Arc<Journal>> {
        let journal = {
            let mut guard = self
                .journal
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(j) = guard.as_ref() {
                Arc::clone(j)
            } else {
                let j = Arc::new(self.open_journal()?);
                *guard = Some(Arc::clone(&j));
                j
            }
        };
        let mut line = serde_json::to_vec(&JournalLine {
            key: key.clone(),
            file: file.to_owned(),
            withdrawn,
        })
        .unwrap_or_else(|e| unreachable!("serializing a journal line: {e}"));
        line.push(b'\n');
        if !withdrawn {
            journal.announced.fetch_add(1, Ordering::SeqCst);
        }
        // One write: a kill leaves the line whole or torn, and a torn line announces a file
        // that was never created.
        journal
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .write_all(&line)
            .ctx(&journal.path)?;
        Ok(journal)
    }

    /// A fresh journal, locked; retried if a recovering process removed it in between.
    fn open_journal(&self) -> Result<Journal> {
        let dir = self.archive.root.join(BATCH_DIR);
        ensure_dir(&dir)?;
        loop {
            let temp = tempfile::Builder::new()
                .prefix("batch-")
                .suffix(".jsonl")
                .tempfile_in(&dir)
                .ctx(&dir)?;
            let (file, path) = temp.keep().map_err(|e| e.error).ctx(&dir)?;
            file.lock().ctx(&path)?;
            // Between creating and locking, another process may have taken the empty journal
            // for a dead one and removed it: then our lock guards nothing.
            let ours = FileId::of(&file.metadata().ctx(&path)?);
            if let Ok(md) = std::fs::metadata(&path)
                && FileId::of(&md).same_file(&ours)
            {
                return Ok(Journal {
                    path,
                    file: Mutex::new(file),
                    announced: AtomicUsize::new(0),
                    committed: AtomicUsize::new(0),
                });
            }
        }
    }

    /// Adds a staged source.
    pub(crate) fn stage(&self, s: Staged) {
        self.staged
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(s);
    }

    /// Commits every source staged so far (see the module docs). Sources staged while this
    /// runs belong to the next commit. On error the staged sources are dropped uncommitted
    /// (their locks released): they are in their old state, and the journal stays for the
    /// next batch to settle.
    pub fn commit(&self) -> Result<BatchCommit> {
        let mut staged = std::mem::take(
            &mut *self
                .staged
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if staged.is_empty() {
            return Ok(BatchCommit::default());
        }
        let root = &self.archive.root;
        let mut report = BatchCommit {
            sources: staged.len(),
            new_files: 0,
        };
        // The checkpoints as they will be, the index included: the index is written before
        // them (below), so that replacing a checkpoint stays one rename.
        let unindexed: Vec<bool> = staged.iter().map(|s| !s.ck.indexed).collect();
        for s in &mut staged {
            s.ck.indexed = true;
        }
        let temps = staged
            .iter()
            .map(|s| write_temp(&s.ck_path, &s.ck))
            .collect::<Result<Vec<_>>>()?;
        // Frames, meta files, new directories and the temp checkpoints on disk before the
        // index names a new file or a checkpoint commits one.
        sync_filesystem(root).ctx(root)?;
        // One index update for every key that gained a file. Until the renames below, the
        // index is ahead of the checkpoints for files the journal announces: `verify` calls
        // that pending, and settling a killed batch's journal syncs the index back.
        report.new_files = staged.iter().filter(|s| s.journal.is_some()).count();
        let keys: Vec<(String, Vec<&FileState>)> = staged
            .iter()
            .zip(&unindexed)
            .filter(|(_, u)| **u)
            .map(|(s, _)| {
                let rel = to_rel(s.ck_path.strip_prefix(root).unwrap_or(&s.ck_path));
                (rel, s.ck.files().collect())
            })
            .collect();
        if !keys.is_empty() {
            index::modify(root, self.archive.opts.lock_timeout, |idx| {
                for (rel, files) in &keys {
                    index::sync_key(idx, rel, files);
                }
            })?;
        }
        // Each rename is the commit point of its key.
        for (f, s) in temps.into_iter().zip(&staged) {
            f.commit_with(Durability::RenameOnly).ctx(&s.ck_path)?;
        }
        sync_filesystem(root).ctx(root)?;
        // Meta files: an appended file's, and a superseded one's (a new file got its meta
        // before its frame).
        for s in staged
            .iter()
            .filter(|s| s.journal.is_none() || !s.ck.previous.is_empty())
        {
            self.archive.sync_meta(&s.ck)?;
        }
        // New announcements go to a fresh journal; this one goes when its last source does.
        self.journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        for j in staged.iter().filter_map(|s| s.journal.as_ref()) {
            j.committed.fetch_add(1, Ordering::SeqCst);
        }
        drop(staged);
        Ok(report)
    }
}

/// A temp file beside `ck_path` holding `ck` (not synced, not renamed yet; mode 0600, as
/// every temp file is created).
fn write_temp(ck_path: &Path, ck: &Checkpoint) -> Result<AtomicFile> {
    if let Some(dir) = ck_path.parent() {
        ensure_dir_with(dir, false)?;
    }
    let mut f = AtomicFile::create(ck_path).ctx(ck_path)?;
    f.write_all(&to_json(ck)).ctx(ck_path)?;
    Ok(f)
}

/// Files announced by batch journals (live or left by a kill) and the checkpoints of their
/// keys (relative paths): for `verify`, which reports index entries ahead of their checkpoint
/// as pending when a journal covers them.
#[derive(Debug, Default)]
pub(crate) struct Announced {
    pub(crate) files: std::collections::BTreeSet<String>,
    pub(crate) checkpoints: std::collections::BTreeSet<String>,
}

/// Reads every journal under `root` (without locking: a snapshot).
pub(crate) fn announced(root: &Path) -> Result<Announced> {
    let dir = root.join(BATCH_DIR);
    let mut out = Announced::default();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(out);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let Some(bytes) = crate::layout::read_optional(&path)? else {
            continue;
        };
        for j in journal_lines(&bytes) {
            out.checkpoints.insert(to_rel(
                &j.key.key_path(crate::layout::CHECKPOINT_DIR, "json"),
            ));
            out.files.insert(j.file);
        }
    }
    Ok(out)
}

/// The announcements of a journal that stand: whole lines (a torn last line was never followed
/// by the file it announces), less those withdrawn later in the journal.
fn journal_lines(bytes: &[u8]) -> Vec<JournalLine> {
    let lines: Vec<JournalLine> = bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<JournalLine>(l).ok())
        .collect();
    let withdrawn: Vec<(Kind, String)> = lines
        .iter()
        .filter(|j| j.withdrawn)
        .map(|j| (j.key.clone(), j.file.clone()))
        .collect();
    lines
        .into_iter()
        .filter(|j| !j.withdrawn && !withdrawn.iter().any(|(k, f)| *k == j.key && *f == j.file))
        .collect()
}
