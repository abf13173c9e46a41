//! The [`Archive`] handle, its options, and the per-key machinery shared by every operation:
//! locking, crash recovery and bringing `.meta.json` files and the index in line with the
//! checkpoint.

use std::path::{Path, PathBuf};
use std::time::Duration;

use skein_store::FileLock;

use crate::checkpoint::{Checkpoint, FileState, to_json};
use crate::codec::CodecOptions;
use crate::error::{Result, corrupt};
use crate::index;
use crate::layout::{
    CHECKPOINT_DIR, Kind, LOCK_DIR, ensure_dir, meta_rel_path, read_optional, remove_file_durable,
    resolve, to_rel,
};
use crate::settle::{Depth, Rebuilt, Settled, settle};

/// What [`Archive::recover_all`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoverReport {
    pub checkpoints: usize,
    /// Journals of killed bulk runs settled first (see [`crate::Batch`]).
    pub batches: usize,
    /// Bytes cut from archive files past what their checkpoint commits (torn frames; anything
    /// else among them was set aside first).
    pub truncated_bytes: u64,
    /// Checkpoint entries that disagreed with their file's frames and were rebuilt from them.
    pub rebuilt: Vec<Rebuilt>,
    /// Copies of cut bytes, under `set-aside/`.
    pub set_aside: Vec<PathBuf>,
    /// Checkpoints that could not be processed.
    pub errors: Vec<(PathBuf, String)>,
}

/// When to use a trained dictionary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DictMode {
    /// Never.
    Off,
    /// For new subagent files whose first ingest is at most 1 MiB, if a dictionary is installed
    /// (one is only installed when training measured a gain, see [`crate::TrainOptions`]).
    #[default]
    Auto,
}

/// How an archive writes.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveOptions {
    pub codec: CodecOptions,
    pub dict: DictMode,
    /// How long to wait for another process holding the same session's lock or the index lock.
    pub lock_timeout: Duration,
    /// "Now" in Unix seconds, for the bookkeeping timestamps (`created_unix`, `updated_unix`,
    /// `trained_unix`) and for naming a file whose source has neither a first timestamp nor an
    /// mtime. Default: the system clock ([`crate::now_unix`]); tests inject a fixed one.
    pub clock: fn() -> i64,
}

impl Default for ArchiveOptions {
    fn default() -> Self {
        Self {
            codec: CodecOptions::default(),
            dict: DictMode::Auto,
            lock_timeout: Duration::from_secs(30),
            clock: now_unix,
        }
    }
}

/// The system clock in Unix seconds: the default [`ArchiveOptions::clock`].
pub fn now_unix() -> i64 {
    skein_core::time::unix_ms(std::time::SystemTime::now()).div_euclid(1000)
}

/// Unix seconds of an ISO-8601 timestamp (see [`skein_core::time::parse_ms`]).
pub(crate) fn timestamp_secs(ts: &str) -> Option<i64> {
    skein_core::time::parse_ms(ts).map(|ms| ms.div_euclid(1000))
}

/// `days` in seconds, saturating.
pub(crate) fn days_to_secs(days: u64) -> i64 {
    i64::try_from(days.saturating_mul(86_400)).unwrap_or(i64::MAX)
}

/// An archive directory. Cheap to open (no scan); every operation locks what it touches, so
/// several processes may use the same archive at once.
#[derive(Debug, Clone)]
pub struct Archive {
    pub(crate) root: PathBuf,
    pub(crate) opts: ArchiveOptions,
}

impl Archive {
    /// Opens (creating with mode 0700 if missing) the archive at `dir`.
    pub fn open(dir: impl AsRef<Path>, opts: ArchiveOptions) -> Result<Self> {
        opts.codec.validate()?;
        let root = dir.as_ref().to_path_buf();
        ensure_dir(&root)?;
        Ok(Self { root, opts })
    }

    /// The archive directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The options in use.
    pub fn options(&self) -> &ArchiveOptions {
        &self.opts
    }

    /// The committed checkpoint of a source, if it was ever archived.
    pub fn checkpoint(&self, kind: &Kind) -> Result<Option<Checkpoint>> {
        kind.validate()?;
        Checkpoint::load(&self.checkpoint_path(kind))
    }

    /// The whole-archive index.
    pub fn index(&self) -> Result<index::Index> {
        index::load(&self.root)
    }

    /// Whether the index gives archive file `rel` to a key other than `key`: a name `key`
    /// announced (or marked pending) but another key created and committed. Recovery leaves
    /// such a file alone.
    pub(crate) fn committed_by_other(&self, rel: &str, key: &Kind) -> Result<bool> {
        Ok(index::load(&self.root)?
            .entries
            .get(rel)
            .is_some_and(|e| e.kind != *key))
    }

    pub(crate) fn checkpoint_path(&self, kind: &Kind) -> PathBuf {
        self.root.join(kind.key_path(CHECKPOINT_DIR, "json"))
    }

    /// Takes the per-source lock (`locks/<kind>/.../<id>.lock`).
    pub(crate) fn lock_key(&self, kind: &Kind) -> Result<FileLock> {
        let path = self.root.join(kind.key_path(LOCK_DIR, "lock"));
        crate::layout::lock(&path, self.opts.lock_timeout)
    }

    /// Finishes or rolls back what a crash interrupted, under the key's lock, then settles each
    /// archive file against its checkpoint (`settle`: proven before anything is cut; with
    /// [`Depth::Full`] every file is decoded). Saves the checkpoint if it changed.
    pub(crate) fn recover(
        &self,
        ck_path: &Path,
        ck: &mut Checkpoint,
        depth: Depth,
    ) -> Result<Settled> {
        let mut changed = false;
        if let Some(rel) = ck.pending_new.take() {
            changed = true;
            let ours = ck.files().any(|f| f.file == rel);
            if !ours && !self.committed_by_other(&rel, &ck.key)? {
                // Created but never committed: nothing refers to it.
                remove_file_durable(&resolve(&self.root, &rel)?)?;
                remove_file_durable(&resolve(&self.root, &meta_rel_path(&rel))?)?;
            }
        }
        if let Some(pc) = ck.pending_compaction.take() {
            changed = true;
            let temp = resolve(&self.root, &pc.temp)?;
            if temp.exists() {
                // The rename never happened: the old file is intact.
                remove_file_durable(&temp)?;
            } else if let Some(f) = ck.files_mut().find(|f| f.file == pc.file) {
                f.committed_len = pc.new_len;
                f.frames = 1;
                f.compacted_level = Some(pc.level);
            }
        }
        if changed {
            ck.save(ck_path)?;
        }
        let mut total = Settled::default();
        for f in ck.files_mut() {
            let s = settle(&self.root, f, depth)?;
            total.truncated += s.truncated;
            total.set_aside.extend(s.set_aside);
            total.rebuilt.extend(s.rebuilt);
        }
        if !total.rebuilt.is_empty() {
            ck.save(ck_path)?;
        }
        Ok(total)
    }

    /// Rewrites `.meta.json` files that disagree with the checkpoint and, if needed, the
    /// index entries of this key (then records that in the checkpoint).
    pub(crate) fn reconcile(&self, ck_path: &Path, ck: &mut Checkpoint) -> Result<()> {
        self.sync_meta(ck)?;
        if !ck.indexed {
            let ck_rel = to_rel(ck_path.strip_prefix(&self.root).unwrap_or(ck_path));
            let files: Vec<&FileState> = ck.files().collect();
            index::modify(&self.root, self.opts.lock_timeout, |idx| {
                index::sync_key(idx, &ck_rel, &files);
            })?;
            ck.indexed = true;
            ck.save(ck_path)?;
        }
        Ok(())
    }

    /// Rewrites the `.meta.json` files of `ck` that disagree with it.
    pub(crate) fn sync_meta(&self, ck: &Checkpoint) -> Result<()> {
        for f in ck.files() {
            let meta = resolve(&self.root, &meta_rel_path(&f.file))?;
            let want = to_json(f);
            if read_optional(&meta)?.as_deref() != Some(want.as_slice()) {
                crate::layout::write_file_lazy(&meta, &want)?;
            }
        }
        Ok(())
    }

    /// Locks, loads, recovers and reconciles one checkpoint file, then calls `f` with it (still
    /// locked). Used by maintenance operations that walk the whole archive.
    pub(crate) fn with_key<T>(
        &self,
        ck_path: &Path,
        depth: Depth,
        f: impl FnOnce(&mut Checkpoint) -> Result<T>,
    ) -> Result<(T, Settled)> {
        let ck0 =
            Checkpoint::load(ck_path)?.ok_or_else(|| corrupt(ck_path, "checkpoint disappeared"))?;
        ck0.key.validate()?;
        let _lock = self.lock_key(&ck0.key)?;
        let mut ck =
            Checkpoint::load(ck_path)?.ok_or_else(|| corrupt(ck_path, "checkpoint disappeared"))?;
        let settled = self.recover(ck_path, &mut ck, depth)?;
        self.reconcile(ck_path, &mut ck)?;
        let out = f(&mut ck)?;
        Ok((out, settled))
    }

    /// Finishes interrupted operations everywhere and checks every archive file against its
    /// checkpoint: decodes each file, cuts what no commit covers (copying anything but a torn
    /// frame under `set-aside/` first), rebuilds checkpoint entries that disagree with their
    /// frames, removes uncommitted files, rewrites stale meta files and index entries. A
    /// checkpoint that cannot be processed is reported and skipped.
    pub fn recover_all(&self) -> Result<RecoverReport> {
        let mut r = RecoverReport {
            batches: self.recover_batches()?,
            ..RecoverReport::default()
        };
        for (path, ck) in crate::verify::load_all_checkpoints(&self.root)? {
            match ck.and_then(|_| self.with_key(&path, Depth::Full, |_| Ok(()))) {
                Ok(((), s)) => {
                    r.checkpoints += 1;
                    r.truncated_bytes += s.truncated;
                    r.rebuilt.extend(s.rebuilt);
                    r.set_aside.extend(s.set_aside);
                }
                Err(e) => r.errors.push((path, e.to_string())),
            }
        }
        Ok(r)
    }

    /// Trains a dictionary on small subagent files and installs it if it measurably helps.
    pub fn train_dictionary(&self, opts: &crate::TrainOptions) -> Result<crate::TrainReport> {
        crate::dict::train(
            &self.root,
            opts,
            self.opts.lock_timeout,
            (self.opts.clock)(),
        )
    }

    /// The installed dictionaries, oldest first.
    pub fn dictionaries(&self) -> Result<Vec<crate::DictInfo>> {
        crate::dict::installed(&self.root)
    }

    /// Rebuilds `archive-index.json` from the checkpoints (under the index lock).
    pub fn rebuild_index(&self) -> Result<usize> {
        let mut fresh = index::Index::default();
        for (path, ck) in crate::verify::load_all_checkpoints(&self.root)? {
            let ck = ck?;
            let rel = to_rel(path.strip_prefix(&self.root).unwrap_or(&path));
            let files: Vec<&FileState> = ck.files().collect();
            index::sync_key(&mut fresh, &rel, &files);
        }
        let n = fresh.entries.len();
        index::modify(&self.root, self.opts.lock_timeout, |idx| *idx = fresh)?;
        Ok(n)
    }
}
