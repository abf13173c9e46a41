//! The checks `verify` runs on one checkpoint and the files it names: every file decodes, frame
//! by frame with checksums, to the line and byte counts its checkpoint records at exactly its
//! committed length, ends with a newline, and agrees with its `.meta.json` and its index entry.

use std::fs;
use std::path::Path;

use crate::checkpoint::{Checkpoint, FileState};
use crate::error::Result;
use crate::frames::scan_frames;
use crate::index::{Index, IndexEntry};
use crate::layout::{meta_rel_path, read_optional, resolve};
use crate::verify::{Issue, Problem, Severity};

/// What one checkpoint's checks found.
#[derive(Debug, Default)]
pub(crate) struct KeyFindings {
    /// The checkpoint parsed.
    pub(crate) parsed: bool,
    pub(crate) files: usize,
    pub(crate) lines: u64,
    pub(crate) raw_bytes: u64,
    pub(crate) compressed_bytes: u64,
    pub(crate) issues: Vec<Issue>,
    /// Files the checkpoint refers to (archive and meta files, pending files).
    pub(crate) referenced: Vec<String>,
}

impl KeyFindings {
    fn push(&mut self, severity: Severity, path: &Path, problem: Problem) {
        self.issues.push(Issue {
            severity,
            path: path.to_path_buf(),
            problem,
        });
    }

    /// Whether an index entry disagreed (worth a second look at a newer index).
    pub(crate) fn index_trouble(&self) -> bool {
        self.issues
            .iter()
            .any(|i| matches!(i.problem, Problem::NotInIndex | Problem::IndexMismatch))
    }
}

/// Every path a checkpoint refers to.
pub(crate) fn referenced(ck: &Checkpoint) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = &ck.pending_new {
        out.push(p.clone());
        out.push(meta_rel_path(p));
    }
    if let Some(p) = &ck.pending_compaction {
        out.push(p.temp.clone());
    }
    for f in ck.files() {
        out.push(f.file.clone());
        out.push(meta_rel_path(&f.file));
    }
    out
}

/// Checks one checkpoint (already parsed) against its files, meta files and the index.
pub(crate) fn check_key(
    root: &Path,
    ck_path: &Path,
    ck: &Checkpoint,
    idx: Option<&Index>,
    announced: bool,
) -> Result<KeyFindings> {
    let mut k = KeyFindings {
        parsed: true,
        referenced: referenced(ck),
        ..KeyFindings::default()
    };
    if let Some(p) = &ck.pending_new {
        k.push(
            Severity::Warning,
            ck_path,
            Problem::Pending(format!("new file {p}")),
        );
    }
    if let Some(p) = &ck.pending_compaction {
        k.push(
            Severity::Warning,
            ck_path,
            Problem::Pending(format!("compaction of {}", p.file)),
        );
    }
    for f in ck.files() {
        if !check_file(root, f, &mut k)? {
            // A missing file says it all; its meta and index entry are not looked at.
            continue;
        }
        check_meta(root, f, &mut k)?;
        if let Some(idx) = idx {
            // An index update the checkpoint still records as pending is a warning, and so is
            // one a bulk run made ahead of its checkpoints (its journal announces the key).
            let sev = if ck.indexed && !announced {
                Severity::Error
            } else {
                Severity::Warning
            };
            let path = resolve(root, &f.file)?;
            match idx.entries.get(&f.file) {
                None => k.push(sev, &path, Problem::NotInIndex),
                Some(e) if *e != IndexEntry::of(f) => k.push(sev, &path, Problem::IndexMismatch),
                Some(_) => {}
            }
        }
    }
    Ok(k)
}

/// The archive file against the checkpoint's counts, frame by frame; `false` if it is missing.
fn check_file(root: &Path, f: &FileState, k: &mut KeyFindings) -> Result<bool> {
    use Severity::{Error, Warning};
    k.files += 1;
    let path = resolve(root, &f.file)?;
    let Ok(len) = fs::metadata(&path).map(|m| m.len()) else {
        k.push(Error, &path, Problem::MissingArchive);
        return Ok(false);
    };
    k.compressed_bytes += f.committed_len.min(len);
    let dict = match f.dict.map(|d| crate::dict::load(root, d)).transpose() {
        Ok(d) => d,
        Err(e) => {
            k.push(Error, &path, Problem::MissingDictionary(e.to_string()));
            return Ok(true);
        }
    };
    let scan = match scan_frames(&path, dict.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            k.push(Error, &path, Problem::Undecodable(e.to_string()));
            return Ok(true);
        }
    };
    let trusted_end = scan.trusted().last().map_or(0, |fr| fr.end);
    let at_commit = scan
        .totals_at(f.committed_len)
        .filter(|_| f.committed_len <= trusted_end);
    if at_commit.is_some_and(|(l, b, _)| (l, b) == (f.lines, f.raw_bytes)) {
        // The checkpoint is proven; what follows is a crash's leftover.
        k.lines += f.lines;
        k.raw_bytes += f.raw_bytes;
        if !scan.ends_with_newline_at(f.committed_len) {
            k.push(Error, &path, Problem::NotNewlineTerminated);
        }
        if len > f.committed_len {
            k.push(
                Warning,
                &path,
                Problem::UncommittedTail(len - f.committed_len),
            );
        }
        return Ok(true);
    }
    if len < f.committed_len {
        let p = Problem::Truncated {
            committed: f.committed_len,
            actual: len,
        };
        k.push(Error, &path, p);
    }
    if let Some((lines, bytes, _)) = at_commit {
        let p = Problem::ContentMismatch {
            lines,
            bytes,
            want_lines: f.lines,
            want_bytes: f.raw_bytes,
        };
        k.push(Error, &path, p);
    } else {
        let why = match &scan.stop {
            Some(stop) if f.committed_len > scan.end() => stop.clone(),
            _ => format!(
                "the committed length {} is not the end of a complete checksummed frame",
                f.committed_len
            ),
        };
        k.push(Error, &path, Problem::Undecodable(why));
    }
    let trusted = scan.trusted();
    let (lines, bytes): (u64, u64) = (
        trusted.iter().map(|fr| fr.lines).sum(),
        trusted.iter().map(|fr| fr.raw_bytes).sum(),
    );
    k.lines += lines;
    k.raw_bytes += bytes;
    let p = match scan.boundary_with(f.lines, f.raw_bytes) {
        Some((found, _)) => Problem::CommittedLengthWrong {
            recorded: f.committed_len,
            found,
        },
        None => Problem::FramesDisagree {
            lines,
            bytes,
            len: trusted_end,
            rest: len - trusted_end,
        },
    };
    k.push(Error, &path, p);
    Ok(true)
}

/// The `.meta.json` against the checkpoint.
fn check_meta(root: &Path, f: &FileState, k: &mut KeyFindings) -> Result<()> {
    let meta_path = resolve(root, &meta_rel_path(&f.file))?;
    let problem = match read_optional(&meta_path)? {
        None => Some((Severity::Error, Problem::MissingMeta)),
        Some(bytes) => match serde_json::from_slice::<FileState>(&bytes) {
            Err(e) => Some((Severity::Error, Problem::MetaMismatch(e.to_string()))),
            Ok(m)
                if m.file == f.file
                    && m.version == f.version
                    && m.kind == f.kind
                    && m.lines <= f.lines
                    && m.source.offset <= f.source.offset
                    && m != *f =>
            {
                Some((Severity::Warning, Problem::MetaStale))
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
                Some((Severity::Error, Problem::MetaMismatch(what)))
            }
            Ok(_) => None,
        },
    };
    if let Some((sev, p)) = problem {
        k.push(sev, &meta_path, p);
    }
    Ok(())
}
