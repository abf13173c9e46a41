//! Recovery of one archive file against its checkpoint, proving before cutting.
//!
//! After a crash an archive file may be longer than its checkpoint's `committed_len`: a torn
//! frame, or a complete frame whose checkpoint was never committed. A checkpoint may also be
//! wrong (bit rot, a botched restore of a backup). So nothing is cut on the checkpoint's word
//! alone: the file is decoded frame by frame ([`crate::frames`]) and
//!
//! 1. if the frames up to `committed_len` decode to the recorded line and byte counts, the
//!    checkpoint stands and what follows is what the commit protocol says it is: a torn frame,
//!    or a complete frame whose checkpoint never committed (its lines are still in the source,
//!    past the recorded offset, and are archived again). It is cut;
//! 2. else, if the recorded counts are reached exactly at another frame boundary, only the
//!    committed length was wrong: it is corrected, and anything past it is set aside before
//!    it is cut (a checkpoint found wrong once is not trusted to say what is a leftover);
//! 3. else the checkpoint and the frames disagree: the checkpoint is rebuilt from the complete
//!    checksummed frames (length, lines, bytes, frames), its source offset is marked unknown so
//!    the next ingest archives the source into a new version instead of appending after a
//!    guess, and everything past those frames is set aside before the file is cut to them.
//!
//! Set-aside copies are written (and fsynced) before the archive file is cut, and are never
//! deleted by skein.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::checkpoint::FileState;
use crate::error::{IoContext, Result};
use crate::frames::{FrameScan, scan_frames};
use crate::layout::{SET_ASIDE_DIR, ensure_dir, resolve};

/// How much of the archive a recovery checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// Only files longer than their committed length (what a crash leaves): every ingest and
    /// maintenance operation, so the common case costs one `stat`.
    Tail,
    /// Every file, decoded in full (`repair`).
    Full,
}

/// A checkpoint entry rebuilt from its file's frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebuilt {
    /// The archive file, relative to the archive root.
    pub file: String,
    /// `committed_len`, `lines`, `raw_bytes` before and after.
    pub before: (u64, u64, u64),
    pub after: (u64, u64, u64),
    /// Whether the recorded source offset still matches the archive (only the committed length
    /// was wrong); when not, the next ingest of the source starts a new version.
    pub source_kept: bool,
}

/// What settling one file did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Settled {
    /// Bytes cut from the end of the file.
    pub(crate) truncated: u64,
    /// Copies made under `set-aside/` before cutting.
    pub(crate) set_aside: Vec<PathBuf>,
    pub(crate) rebuilt: Vec<Rebuilt>,
}

/// Brings `f`'s file and `f` into agreement (module docs). `f` is changed only when it was
/// rebuilt; the caller commits the checkpoint then.
pub(crate) fn settle(root: &Path, f: &mut FileState, depth: Depth) -> Result<Settled> {
    let path = resolve(root, &f.file)?;
    let len = match std::fs::metadata(&path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settled::default()),
        Err(e) => return Err(e).ctx(&path),
    };
    if depth == Depth::Tail && len <= f.committed_len {
        // Shorter than committed: ingest keeps it as damaged and starts a new version.
        return Ok(Settled::default());
    }
    let dict = f.dict.map(|d| crate::dict::load(root, d)).transpose();
    let scan = match dict {
        Ok(d) => Some(scan_frames(&path, d.as_deref()).ctx(&path)?),
        // Without its dictionary nothing can be proven: keep the committed part as it is and
        // set the rest aside.
        Err(_) => None,
    };
    let mut out = Settled::default();
    let (keep, proven) = match &scan {
        None => (f.committed_len.min(len), false),
        Some(scan) => {
            if let Some(at) = agree(scan, f) {
                (at, true)
            } else {
                out.rebuilt.push(rebuild(scan, f));
                (f.committed_len, false)
            }
        }
    };
    if let Some(scan) = scan.as_ref().filter(|_| proven)
        && keep != f.committed_len
    {
        let (_, _, frames) = scan.totals_at(keep).unwrap_or_default();
        let before = (f.committed_len, f.lines, f.raw_bytes);
        f.committed_len = keep;
        f.frames = frames;
        out.rebuilt.push(Rebuilt {
            file: f.file.clone(),
            before,
            after: (keep, f.lines, f.raw_bytes),
            source_kept: true,
        });
    }
    if keep < len {
        // Past a commit proven as recorded: a crash's leftover (a torn frame, or a frame whose
        // checkpoint never committed, whose lines are still in the source and archived again
        // from the committed offset). After a corrected or rebuilt checkpoint, anything cut is
        // kept.
        if !(proven && out.rebuilt.is_empty()) {
            out.set_aside
                .push(set_aside(root, &f.file, &path, keep, len)?);
        }
        let file = OpenOptions::new().write(true).open(&path).ctx(&path)?;
        file.set_len(keep).ctx(&path)?;
        file.sync_all().ctx(&path)?;
        out.truncated = len - keep;
    }
    Ok(out)
}

/// Where the trusted frames hold exactly the recorded lines and bytes: the committed length
/// itself when it agrees, else another frame boundary.
fn agree(scan: &FrameScan, f: &FileState) -> Option<u64> {
    let trusted_end = scan.trusted().last().map_or(0, |fr| fr.end);
    if f.committed_len <= trusted_end
        && let Some((lines, bytes, _)) = scan.totals_at(f.committed_len)
        && (lines, bytes) == (f.lines, f.raw_bytes)
    {
        return Some(f.committed_len);
    }
    scan.boundary_with(f.lines, f.raw_bytes).map(|(at, _)| at)
}

/// Rebuilds `f` from the trusted frames; the source offset becomes unknown.
fn rebuild(scan: &FrameScan, f: &mut FileState) -> Rebuilt {
    let trusted = scan.trusted();
    let before = (f.committed_len, f.lines, f.raw_bytes);
    f.committed_len = trusted.last().map_or(0, |fr| fr.end);
    f.lines = trusted.iter().map(|fr| fr.lines).sum();
    f.raw_bytes = trusted.iter().map(|fr| fr.raw_bytes).sum();
    f.frames = trusted.len() as u64;
    f.compacted_level = None;
    f.source.unknown = true;
    Rebuilt {
        file: f.file.clone(),
        before,
        after: (f.committed_len, f.lines, f.raw_bytes),
        source_kept: false,
    }
}

/// Copies bytes `from..to` of the archive file to `set-aside/<file>.bytes-<from>-<to>.zst`
/// (mode 0600, fsynced with its directory) and returns that path.
fn set_aside(root: &Path, rel: &str, path: &Path, from: u64, to: u64) -> Result<PathBuf> {
    let stem = rel.strip_suffix(".zst").unwrap_or(rel);
    let target = resolve(
        root,
        &format!("{SET_ASIDE_DIR}/{stem}.bytes-{from}-{to}.zst"),
    )?;
    if let Some(dir) = target.parent() {
        ensure_dir(dir)?;
    }
    let mut src = File::open(path).ctx(path)?;
    src.seek(SeekFrom::Start(from)).ctx(path)?;
    let mut out = skein_store::AtomicFile::create(&target).ctx(&target)?;
    out.set_mode(0o600).ctx(&target)?;
    let copied = std::io::copy(&mut src.take(to - from), &mut out).ctx(&target)?;
    if copied != to - from {
        return Err(crate::error::corrupt(path, "shrank while being set aside"));
    }
    out.flush().ctx(&target)?;
    out.commit().ctx(&target)?;
    Ok(target)
}
