//! Incremental, idempotent, crash-safe ingestion of one source transcript.
//!
//! Under the source's lock: recover (truncate a torn frame, drop an uncommitted new file), check
//! the source is still the file the checkpoint describes (`skein_store::append`: same inode, not shorter,
//! same first and last 4 KiB before the consumed offset), then compress the complete lines past
//! the offset into ONE new zstd frame appended to the archive file, fsync it, and commit the
//! checkpoint (atomic replace). Only then are `.meta.json` and the index brought up to date. A
//! rewritten source starts a new version file; nothing is ever merged into an unrelated file.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::archive::{Archive, DictMode};
use crate::batch::{Batch, Staged};
use crate::checkpoint::{Checkpoint, DictRef, FORMAT, FileState, SourceState, hash_text};
use crate::dict;
use crate::error::{ArchiveError, IoContext, Result};
use crate::layout::{
    Kind, archive_rel_path, create_new_file, ensure_dir_with, meta_rel_path, resolve,
};
use crate::meta::SessionMeta;
use crate::pump::pump;
use crate::settle::Depth;
use skein_core::time::{Civil, unix_ms};
use skein_store::append::{Break, Consumed, FileId, last_line_end};

use crate::archive::timestamp_secs;

/// A per-line rewrite applied on the way in (prune, redact). It gets one complete source line
/// including its `\n` and appends the replacement to the buffer (nothing to drop the line). A
/// replacement without a final `\n` gets one, so the archive always holds complete lines.
pub type Transform<'t> = dyn FnMut(&[u8], &mut Vec<u8>) + 't;

/// Metadata computed while the frame is compressed ([`Batch::ingest_meta_later`]): called at
/// most once, after the frame is written and before anything records metadata (the new file's
/// `.meta.json`, the checkpoint). Its error fails the ingest as a failed write would: nothing
/// is committed. `None` keeps what was stored before.
pub type MetaLater<'m> = dyn FnMut() -> std::result::Result<Option<SessionMeta>, Box<dyn std::error::Error + Send + Sync>>
    + 'm;

/// What to archive.
#[derive(Debug, Clone)]
pub struct IngestRequest<'a> {
    pub source: &'a Path,
    pub kind: Kind,
    /// The session's first timestamp (ISO 8601), which names the file; the source's mtime is
    /// used when it is missing or unparseable. Only read when a new file is started.
    pub first_timestamp: Option<&'a str>,
    /// Metadata to store; `None` keeps what was stored before (or what a [`MetaLater`] gives).
    pub meta: Option<SessionMeta>,
}

/// Why a new archive file was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionReason {
    /// The source was never archived.
    First,
    /// The path now names a different file (inode changed).
    InodeChanged,
    /// The source is shorter than what was already archived.
    Shrunk,
    /// The first 4 KiB changed.
    HeadChanged,
    /// The 4 KiB before the archived offset changed.
    TailChanged,
    /// The archive file is missing or shorter than its checkpoint; it is kept for inspection.
    ArchiveDamaged,
    /// The checkpoint was rebuilt from the archive file's frames, which no longer tells how far
    /// the source was archived; the whole source goes into a new version.
    CheckpointRebuilt,
}

/// What one ingest did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// The archive file written to (or that would have been), if any.
    pub archive_path: Option<PathBuf>,
    pub version: u32,
    /// Set when this call started a new archive file.
    pub new_file: Option<VersionReason>,
    /// A rewrite was detected but the new source holds no complete line yet.
    pub rewrite_pending: Option<VersionReason>,
    pub appended_source_bytes: u64,
    pub appended_source_lines: u64,
    /// Lines and bytes written to the archive (after the transform).
    pub appended_lines: u64,
    pub appended_raw_bytes: u64,
    /// Compressed bytes appended (0 or one frame).
    pub appended_bytes: u64,
    /// An incomplete last line left for the next run.
    pub torn_tail_bytes: u64,
    /// Bytes past the committed length (from an earlier crash) that were cut first.
    pub recovered_bytes: u64,
    /// Copies of cut bytes that held more than a torn frame, under `set-aside/`.
    pub set_aside: Vec<PathBuf>,
    /// Checkpoint entries rebuilt from their frames first (see `Archive::recover_all`).
    pub rebuilt: Vec<crate::Rebuilt>,
    pub dict: Option<DictRef>,
}

impl IngestReport {
    /// Whether the archive file changed.
    pub fn changed(&self) -> bool {
        self.appended_bytes > 0 || self.new_file.is_some()
    }
}

impl Archive {
    /// Archives the complete lines of `req.source` that are not archived yet.
    pub fn ingest(
        &self,
        req: &IngestRequest<'_>,
        transform: Option<&mut Transform<'_>>,
    ) -> Result<IngestReport> {
        self.ingest_in(req, transform, None, None)
    }

    /// [`Archive::ingest`], committed on its own (`batch` is `None`) or staged in `batch`: then
    /// the frame is written without fsync, a new file is announced in the batch's journal
    /// instead of the checkpoint, and the checkpoint is committed by [`Batch::commit`].
    pub(crate) fn ingest_in(
        &self,
        req: &IngestRequest<'_>,
        transform: Option<&mut Transform<'_>>,
        batch: Option<&Batch<'_>>,
        mut later: Option<&mut MetaLater<'_>>,
    ) -> Result<IngestReport> {
        req.kind.validate()?;
        let ck_path = self.checkpoint_path(&req.kind);
        let lock = self.lock_key(&req.kind)?;
        let mut ck =
            Checkpoint::load(&ck_path)?.unwrap_or_else(|| Checkpoint::new(req.kind.clone()));
        let settled = self.recover(&ck_path, &mut ck, Depth::Tail)?;
        let mut report = IngestReport {
            recovered_bytes: settled.truncated,
            set_aside: settled.set_aside,
            rebuilt: settled.rebuilt,
            ..IngestReport::default()
        };

        let src_path = req.source;
        let source = File::open(src_path).ctx(src_path)?;
        let md = source.metadata().ctx(src_path)?;
        let id = FileId::of(&md);
        let size = id.size;

        let reason = match &ck.current {
            None => Some(VersionReason::First),
            Some(cur) => self.check_current(cur, &source, src_path, &id)?,
        };
        let start = match (&reason, &ck.current) {
            (None, Some(cur)) => cur.source.offset,
            _ => 0,
        };
        let end = last_line_end(&source, start, size).ctx(src_path)?;
        report.torn_tail_bytes = size - end;
        if let Some(cur) = &ck.current {
            report.archive_path = Some(resolve(&self.root, &cur.file)?);
            report.version = cur.version;
            report.dict = cur.dict;
        }

        if end == start {
            report.rewrite_pending = reason.filter(|r| *r != VersionReason::First);
            if let (None, Some(cur)) = (reason, ck.current.as_mut()) {
                let mut changed = false;
                if let Some(m) = &meta_of(req, &mut later)?
                    && *m != cur.meta
                {
                    cur.meta = m.clone();
                    changed = true;
                }
                let path = display_path(src_path);
                if cur.source.path != path {
                    cur.source.path = path;
                    changed = true;
                }
                if changed {
                    cur.updated_unix = (self.opts.clock)();
                    ck.save(&ck_path)?;
                }
            }
            if ck.current.is_some() {
                self.reconcile(&ck_path, &mut ck)?;
            }
            return Ok(report);
        }

        // Where the frame goes.
        let (mut rel, mut version, dict_ref, base_len) = if let (None, Some(cur)) =
            (&reason, &ck.current)
        {
            (cur.file.clone(), cur.version, cur.dict, cur.committed_len)
        } else {
            let (rel, version) = self.choose_new_path(&ck, &req.kind, req.first_timestamp, &md)?;
            let dict_ref = self.pick_dict(&req.kind, end - start)?;
            (rel, version, dict_ref, 0)
        };
        let dict_bytes = dict_ref.map(|r| dict::load(&self.root, r)).transpose()?;
        let mut path = resolve(&self.root, &rel)?;
        let mut journal = None;
        let out = if reason.is_none() {
            let mut f = OpenOptions::new().write(true).open(&path).ctx(&path)?;
            f.seek(SeekFrom::Start(base_len)).ctx(&path)?;
            f
        } else {
            loop {
                if let Some(b) = batch {
                    journal = Some(b.announce(&req.kind, &rel)?);
                } else {
                    ck.pending_new = Some(rel.clone());
                    ck.save(&ck_path)?;
                }
                if let Some(dir) = path.parent() {
                    ensure_dir_with(dir, batch.is_none())?;
                }
                match create_new_file(&path) {
                    Ok(f) => break f,
                    // Another key (a subagent of another session with the same id and start
                    // second) created this name between the check and the create. The name is
                    // not ours: withdraw the claim, so that no recovery removes the other
                    // key's file, and take the next free name.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        if let Some(b) = batch {
                            b.withdraw(&req.kind, &rel)?;
                        } else {
                            ck.pending_new = None;
                            ck.save(&ck_path)?;
                        }
                        (rel, version) =
                            self.choose_new_path(&ck, &req.kind, req.first_timestamp, &md)?;
                        path = resolve(&self.root, &rel)?;
                    }
                    Err(e) => return Err(e).ctx(&path),
                }
            }
        };

        let stats = pump(
            &source,
            src_path,
            start,
            end,
            (&out, &path),
            &self.opts.codec,
            dict_bytes.as_deref(),
            reason.is_some(),
            transform,
        )?;
        if batch.is_none() {
            out.sync_data().ctx(&path)?;
            if reason.is_some()
                && let Some(dir) = path.parent()
            {
                skein_store::atomic::sync_dir(dir).ctx(dir)?;
            }
        }
        drop(out);
        let req_meta = meta_of(req, &mut later)?;

        // Commit.
        let consumed = Consumed::of(&source, end).ctx(src_path)?;
        let now = (self.opts.clock)();
        let prev_lines = if reason.is_none() {
            ck.current.as_ref().map_or(0, |c| c.source.lines)
        } else {
            0
        };
        let src_state = SourceState {
            path: display_path(src_path),
            dev: id.dev,
            ino: id.ino,
            size,
            offset: end,
            lines: prev_lines + stats.src_lines,
            head_len: consumed.head_len,
            head_hash: hash_text(consumed.head_hash),
            tail_len: consumed.tail_len,
            tail_hash: hash_text(consumed.tail_hash),
            unknown: false,
        };
        match (reason, ck.current.as_mut()) {
            (None, Some(cur)) => {
                cur.committed_len += stats.compressed;
                cur.frames += stats.frames;
                cur.lines += stats.out_lines;
                cur.raw_bytes += stats.out_bytes;
                cur.source = src_state;
                if let Some(m) = req_meta {
                    cur.meta = m;
                }
                if stats.frames > 0 {
                    cur.compacted_level = None;
                }
                cur.updated_unix = now;
            }
            (reason, _) => {
                let old_meta = ck.current.as_ref().map(|c| c.meta.clone());
                let meta = req_meta.or(old_meta).unwrap_or_default();
                let project = meta
                    .project
                    .clone()
                    .or_else(|| ck.current.as_ref().and_then(|c| c.project.clone()));
                let state = FileState {
                    format: FORMAT,
                    file: rel.clone(),
                    version,
                    kind: req.kind.clone(),
                    project,
                    first_timestamp: req.first_timestamp.map(str::to_owned),
                    committed_len: stats.compressed,
                    frames: stats.frames,
                    lines: stats.out_lines,
                    raw_bytes: stats.out_bytes,
                    dict: dict_ref,
                    compacted_level: None,
                    created_unix: now,
                    updated_unix: now,
                    superseded_by: None,
                    source: src_state,
                    meta,
                };
                if let Some(mut old) = ck.current.take() {
                    old.superseded_by = Some(rel.clone());
                    ck.previous.push(old);
                }
                ck.current = Some(state);
                ck.pending_new = None;
                ck.indexed = false;
                report.new_file = reason;
            }
        }
        if reason.is_some()
            && let Some(cur) = &ck.current
        {
            // A new file gets its meta before it is committed: a crash then leaves either an
            // uncommitted file with its meta (both removed by recovery) or a committed file
            // with a meta that is at worst stale, never a committed file without one.
            let meta = resolve(&self.root, &meta_rel_path(&cur.file))?;
            crate::layout::write_file_lazy(&meta, &crate::checkpoint::to_json(cur))?;
        }
        report.archive_path = Some(path);
        report.version = version;
        report.dict = dict_ref;
        report.appended_source_bytes = end - start;
        report.appended_source_lines = stats.src_lines;
        report.appended_lines = stats.out_lines;
        report.appended_raw_bytes = stats.out_bytes;
        report.appended_bytes = stats.compressed;
        if let Some(b) = batch {
            b.stage(Staged {
                _lock: lock,
                ck_path,
                ck,
                journal,
            });
            return Ok(report);
        }
        if reason.is_none() {
            // An append to an existing file: the checkpoint file already exists, so skipping the
            // directory fsync can at worst (power loss) bring back the previous checkpoint,
            // whose archive bytes are all still there; the new frame is then truncated and
            // archived again from the source. One journal commit less on the Stop-time path.
            ck.save_without_dir_sync(&ck_path)?;
        } else {
            ck.save(&ck_path)?;
        }
        self.reconcile(&ck_path, &mut ck)?;
        drop(lock);
        Ok(report)
    }

    /// Is the source still the file the current archive was made from?
    fn check_current(
        &self,
        cur: &FileState,
        source: &File,
        src_path: &Path,
        now: &FileId,
    ) -> Result<Option<VersionReason>> {
        let apath = resolve(&self.root, &cur.file)?;
        match std::fs::metadata(&apath) {
            Ok(m) if m.len() >= cur.committed_len => {}
            Ok(_) => return Ok(Some(VersionReason::ArchiveDamaged)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Some(VersionReason::ArchiveDamaged));
            }
            Err(e) => return Err(e).ctx(&apath),
        }
        if cur.source.unknown {
            return Ok(Some(VersionReason::CheckpointRebuilt));
        }
        // The shared append-only probe (device numbers are not compared: see FileId).
        let Some(consumed) = cur.source.consumed() else {
            return Ok(Some(VersionReason::HeadChanged));
        };
        let broken = consumed
            .check(source, &cur.source.file_id(), now)
            .ctx(src_path)?;
        Ok(broken.map(|b| match b {
            Break::OtherFile => VersionReason::InodeChanged,
            Break::Shrunk => VersionReason::Shrunk,
            Break::HeadChanged => VersionReason::HeadChanged,
            Break::TailChanged => VersionReason::TailChanged,
        }))
    }

    /// A free archive path for a new file of `kind`.
    fn choose_new_path(
        &self,
        ck: &Checkpoint,
        kind: &Kind,
        first_timestamp: Option<&str>,
        md: &std::fs::Metadata,
    ) -> Result<(String, u32)> {
        let secs = first_timestamp
            .and_then(timestamp_secs)
            .or_else(|| md.modified().ok().map(|t| unix_ms(t).div_euclid(1000)))
            .unwrap_or_else(self.opts.clock);
        let civil = Civil::from_ms(secs.saturating_mul(1000));
        let mut version = ck.max_version() + 1;
        loop {
            let rel = archive_rel_path(kind, civil, version);
            let taken = [rel.clone(), meta_rel_path(&rel)]
                .iter()
                .map(|r| resolve(&self.root, r))
                .collect::<Result<Vec<_>>>()?
                .iter()
                .any(|p| p.symlink_metadata().is_ok());
            if !taken {
                return Ok((rel, version));
            }
            version += 1;
            if version > 100_000 {
                return Err(ArchiveError::Option(format!(
                    "no free archive name for {}",
                    kind.id()
                )));
            }
        }
    }

    fn pick_dict(&self, kind: &Kind, len: u64) -> Result<Option<DictRef>> {
        if self.opts.dict == DictMode::Off
            || !matches!(kind, Kind::Subagent { .. })
            || len > dict::DICT_MAX_INPUT
        {
            return Ok(None);
        }
        Ok(dict::latest(&self.root)?.map(|(r, _)| r))
    }
}

/// The metadata to record: the request's, or what `later` computed meanwhile.
fn meta_of(
    req: &IngestRequest<'_>,
    later: &mut Option<&mut MetaLater<'_>>,
) -> Result<Option<SessionMeta>> {
    match later.take() {
        Some(f) => f().map_err(|source| ArchiveError::Meta {
            path: req.source.to_path_buf(),
            source,
        }),
        None => Ok(req.meta.clone()),
    }
}

/// The source path as recorded: absolute (so relative and absolute spellings of the same path
/// agree), lossy UTF-8.
fn display_path(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

impl Batch<'_> {
    /// Stages an ingest of `req.source` in this batch: like [`Archive::ingest`], but the new
    /// state is committed (and the report's numbers become true) only by [`Batch::commit`].
    /// The source's lock is held until then. A source with nothing new is settled at once.
    pub fn ingest(
        &self,
        req: &IngestRequest<'_>,
        transform: Option<&mut Transform<'_>>,
    ) -> Result<IngestReport> {
        self.archive().ingest_in(req, transform, Some(self), None)
    }

    /// [`Batch::ingest`] with the metadata computed by `later` while the frame is compressed
    /// (`req.meta` is not used): a caller that must read the whole source for its metadata
    /// does that on another thread instead of before the ingest.
    pub fn ingest_meta_later(
        &self,
        req: &IngestRequest<'_>,
        transform: Option<&mut Transform<'_>>,
        later: &mut MetaLater<'_>,
    ) -> Result<IngestReport> {
        self.archive()
            .ingest_in(req, transform, Some(self), Some(later))
    }
}
