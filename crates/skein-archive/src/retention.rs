//! Retention (`--keep-days`) that never deletes the only copy of a session.
//!
//! A **copy** of an archive file is another archive file *of the same source* that is kept and
//! whose decoded content contains every distinct line of it. The live transcript does NOT count
//! as a copy (Claude Code deletes it after `cleanupPeriodDays`), and neither does another session.
//! Consequently the current version of every source is never deleted: only superseded versions
//! (left behind when a transcript was rewritten) whose lines all survive in a kept version of the
//! same source, and whose last activity is older than `keep_days`, are removed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::archive::Archive;
use crate::checkpoint::{Checkpoint, FileState};
use crate::compact::last_activity;
use crate::error::{Result, corrupt};
use crate::layout::{meta_rel_path, remove_file_durable, resolve};
use crate::reader::decode_stats;

/// Retention parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionOptions {
    /// Files whose last activity is older than this many days may go (if another copy exists).
    pub keep_days: u64,
    /// "Now", in Unix seconds.
    pub now_unix: i64,
    /// Report only.
    pub dry_run: bool,
}

/// What retention did (or would do, in a dry run).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionReport {
    /// Deleted archive files.
    pub deleted: Vec<PathBuf>,
    pub freed_bytes: u64,
    /// Old files kept because they are the only copy of some of their lines.
    pub kept_only_copy: Vec<PathBuf>,
}

impl Archive {
    /// Deletes old superseded versions that are fully contained in a kept version.
    pub fn apply_retention(&self, opts: &RetentionOptions) -> Result<RetentionReport> {
        let cutoff = opts
            .now_unix
            .saturating_sub(crate::archive::days_to_secs(opts.keep_days));
        let mut report = RetentionReport::default();
        for (ck_path, ck) in crate::verify::load_all_checkpoints(&self.root)? {
            ck?;
            self.with_key(&ck_path, crate::settle::Depth::Tail, |ck| {
                self.retain_key(&ck_path, ck, cutoff, opts, &mut report)
            })?;
        }
        Ok(report)
    }

    fn retain_key(
        &self,
        ck_path: &Path,
        ck: &mut Checkpoint,
        cutoff: i64,
        opts: &RetentionOptions,
        report: &mut RetentionReport,
    ) -> Result<()> {
        let (candidates, keepers): (Vec<&FileState>, Vec<&FileState>) =
            ck.previous.iter().partition(|f| last_activity(f) < cutoff);
        if candidates.is_empty() {
            return Ok(());
        }
        let mut keeper_lines = Vec::new();
        for f in ck.current.iter().chain(keepers) {
            keeper_lines.push(self.line_hashes(f)?);
        }
        let mut doomed = Vec::new();
        for f in candidates {
            let lines = self.line_hashes(f)?;
            let path = resolve(&self.root, &f.file)?;
            if keeper_lines.iter().any(|k| lines.is_subset(k)) {
                doomed.push((f.file.clone(), path, f.committed_len));
            } else {
                report.kept_only_copy.push(path);
            }
        }
        if doomed.is_empty() || opts.dry_run {
            for (_, path, len) in doomed {
                report.deleted.push(path);
                report.freed_bytes += len;
            }
            return Ok(());
        }
        // Commit the removal first: a crash then leaves an orphan (reported by verify), never a
        // checkpoint pointing at a missing file.
        ck.previous
            .retain(|f| !doomed.iter().any(|d| d.0 == f.file));
        ck.indexed = false;
        ck.save(ck_path)?;
        for (file, path, len) in doomed {
            remove_file_durable(&path)?;
            remove_file_durable(&resolve(&self.root, &meta_rel_path(&file))?)?;
            report.deleted.push(path);
            report.freed_bytes += len;
        }
        self.reconcile(ck_path, ck)
    }

    /// The set of distinct line hashes of a file.
    fn line_hashes(&self, f: &FileState) -> Result<HashSet<(u64, usize)>> {
        let path = resolve(&self.root, &f.file)?;
        let dict = f
            .dict
            .map(|d| crate::dict::load(&self.root, d))
            .transpose()?;
        let mut set = HashSet::new();
        let mut partial = Vec::new();
        decode_stats(&path, f.committed_len, dict.as_deref(), |mut chunk| {
            while let Some(i) = memchr::memchr(b'\n', chunk) {
                let line = &chunk[..=i];
                let h = if partial.is_empty() {
                    key(line)
                } else {
                    partial.extend_from_slice(line);
                    let h = key(&partial);
                    partial.clear();
                    h
                };
                set.insert(h);
                chunk = &chunk[i + 1..];
            }
            partial.extend_from_slice(chunk);
        })
        .map_err(|reason| corrupt(&path, reason))?;
        if !partial.is_empty() {
            set.insert(key(&partial));
        }
        Ok(set)
    }
}

/// A line's identity for containment checks: 64-bit hash plus length.
fn key(line: &[u8]) -> (u64, usize) {
    (twox_hash::XxHash3_64::oneshot(line), line.len())
}
