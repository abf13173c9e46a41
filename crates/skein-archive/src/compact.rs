//! `compact`: recompress cold archive files as one frame at a high level (optionally with a long
//! window), atomically and crash-safely.
//!
//! Under the source's lock: decode the committed content, compress it into
//! `<file>.compact-tmp`, decode that again and compare hashes, fsync, record the compaction in
//! the checkpoint (`pending_compaction`), rename over the archive file, fsync the directory,
//! commit the checkpoint with the new length. After a crash, recovery looks at the temp file:
//! still there → the rename did not happen, delete it; gone → the rename happened, adopt the new
//! length. Either way the archive is whole.

use std::hash::Hasher;
use std::io::Write;
use std::path::Path;

use twox_hash::XxHash3_64;

use crate::archive::Archive;
use crate::archive::{days_to_secs, timestamp_secs};
use crate::checkpoint::{Checkpoint, FileState, PendingCompaction};
use crate::codec::{CodecOptions, CountingWriter, encoder};
use crate::error::{IoContext, Result, corrupt};
use crate::layout::{create_new_file, remove_file_durable, resolve};
use crate::reader::decode_stats;

/// What to compact and how ([`CompactOptions::at`] gives the defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactOptions {
    /// Target level (default 19).
    pub level: i32,
    /// Long-distance window log (default 27).
    pub long: Option<u32>,
    /// Worker threads (0 = auto).
    pub threads: u32,
    /// Files untouched for this many days are cold (superseded versions always are).
    pub cold_after_days: u64,
    /// "Now", in Unix seconds.
    pub now_unix: i64,
}

impl CompactOptions {
    /// Level 19, `--long=27`, automatic threads, cold after 7 days, as seen at `now_unix`.
    pub fn at(now_unix: i64) -> Self {
        Self {
            level: 19,
            long: Some(27),
            threads: 0,
            cold_after_days: 7,
            now_unix,
        }
    }
}

/// What compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactReport {
    pub compacted: usize,
    /// Cold files already at this level, or that would not shrink.
    pub skipped: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

impl Archive {
    /// Recompresses every cold archive file at `opts.level`.
    pub fn compact(&self, opts: &CompactOptions) -> Result<CompactReport> {
        let codec = CodecOptions {
            level: opts.level,
            long: opts.long,
            threads: opts.threads,
        };
        codec.validate()?;
        let cutoff = opts
            .now_unix
            .saturating_sub(days_to_secs(opts.cold_after_days));
        let mut report = CompactReport::default();
        for (ck_path, ck) in crate::verify::load_all_checkpoints(&self.root)? {
            ck?;
            self.with_key(&ck_path, crate::settle::Depth::Tail, |ck| {
                let files: Vec<String> = ck
                    .files()
                    .filter(|f| is_cold(f, ck, cutoff) && f.compacted_level != Some(opts.level))
                    .map(|f| f.file.clone())
                    .collect();
                for file in files {
                    self.compact_one(&ck_path, ck, &file, &codec, &mut report)?;
                }
                Ok(())
            })?;
        }
        Ok(report)
    }

    fn compact_one(
        &self,
        ck_path: &Path,
        ck: &mut Checkpoint,
        file: &str,
        codec: &CodecOptions,
        report: &mut CompactReport,
    ) -> Result<()> {
        let Some(state) = ck.files().find(|f| f.file == file).cloned() else {
            return Ok(());
        };
        let path = resolve(&self.root, file)?;
        let temp_rel = format!("{file}.compact-tmp");
        let temp = resolve(&self.root, &temp_rel)?;
        remove_file_durable(&temp)?;
        let dict = state
            .dict
            .map(|d| crate::dict::load(&self.root, d))
            .transpose()?;

        // Old content → hash + new frame in the temp file.
        let out = create_new_file(&temp).ctx(&temp)?;
        let mut enc = encoder(
            CountingWriter { inner: &out, n: 0 },
            codec,
            (Some(state.raw_bytes), true),
            dict.as_deref(),
        )
        .ctx(&temp)?;
        let mut hasher = XxHash3_64::with_seed(0);
        let mut write_err = None;
        let old = decode_stats(&path, state.committed_len, dict.as_deref(), |chunk| {
            hasher.write(chunk);
            if write_err.is_none()
                && let Err(e) = enc.write_all(chunk)
            {
                write_err = Some(e);
            }
        })
        .map_err(|reason| corrupt(&path, reason))?;
        if let Some(e) = write_err {
            return Err(e).ctx(&temp);
        }
        if old.lines != state.lines || old.raw_bytes != state.raw_bytes {
            remove_file_durable(&temp)?;
            return Err(corrupt(
                &path,
                "content differs from its checkpoint; not compacting",
            ));
        }
        let new_len = enc.finish().ctx(&temp)?.n;
        out.sync_all().ctx(&temp)?;
        drop(out);

        let mut check = XxHash3_64::with_seed(0);
        let new = decode_stats(&temp, new_len, dict.as_deref(), |c| check.write(c))
            .map_err(|reason| corrupt(&temp, reason))?;
        if new != old || check.finish() != hasher.finish() {
            remove_file_durable(&temp)?;
            return Err(corrupt(
                &temp,
                "recompressed content differs; not installed",
            ));
        }
        if new_len >= state.committed_len {
            remove_file_durable(&temp)?;
            report.skipped += 1;
            return Ok(());
        }

        ck.pending_compaction = Some(PendingCompaction {
            file: file.to_owned(),
            temp: temp_rel,
            new_len,
            level: codec.level,
        });
        ck.save(ck_path)?;
        // The temp file is fsynced above and named in the checkpoint (recovery finds it).
        skein_store::install(&temp, &path, skein_store::Durability::Full).ctx(&path)?;
        ck.pending_compaction = None;
        if let Some(f) = ck.files_mut().find(|f| f.file == file) {
            f.committed_len = new_len;
            f.frames = 1;
            f.compacted_level = Some(codec.level);
        }
        ck.save(ck_path)?;
        self.reconcile(ck_path, ck)?;
        report.compacted += 1;
        report.bytes_before += state.committed_len;
        report.bytes_after += new_len;
        Ok(())
    }
}

/// Superseded files are cold; the current one when nothing was appended since `cutoff`.
fn is_cold(f: &FileState, ck: &Checkpoint, cutoff: i64) -> bool {
    let is_current = ck.current.as_ref().is_some_and(|c| c.file == f.file);
    !is_current || last_activity(f) < cutoff
}

/// The later of the last archive update and the session's last timestamp.
pub(crate) fn last_activity(f: &FileState) -> i64 {
    let ts = f
        .meta
        .last_timestamp
        .as_deref()
        .and_then(timestamp_secs)
        .unwrap_or(i64::MIN);
    f.updated_unix.max(ts)
}
