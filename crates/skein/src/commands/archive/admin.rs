//! The archive's maintenance subcommands: `verify`, `restore`, `compact`, `train-dict` and
//! `prune` (retention). Each prints JSON on stdout (one object per line) and, on a terminal, a
//! summary on stderr.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::json;
use skein_app::restore::{RestoreOptions, archived_sessions, restore_session};
use skein_archive::{
    Archive, ArchiveOptions, CompactOptions, RetentionOptions, Severity, TrainOptions, now_unix,
};

use super::{CompactArgs, PruneArgs, RepairArgs, RestoreArgs, TrainDictArgs, VerifyArgs};
use crate::output::error_line;

/// Opens an existing archive (these commands never create one).
fn open(dir: &Path) -> Result<Archive> {
    if !dir.is_dir() {
        bail!("no archive at {}", dir.display());
    }
    Archive::open(dir, ArchiveOptions::default())
        .with_context(|| format!("archive {}", dir.display()))
}

/// Writes values as JSON lines on stdout.
fn print_lines<T: Serialize>(rows: &[T]) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for r in rows {
        serde_json::to_writer(&mut out, r)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

fn summary(quiet: bool, msg: &str) {
    if !quiet && std::io::stderr().is_terminal() {
        error_line(msg);
    }
}

/// `path` relative to the archive root when it is inside it.
fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `Truncated { … }` → `truncated`, `MetaStale` → `meta-stale`.
fn code(debug: &str) -> String {
    let name = debug
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default();
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

pub(super) fn verify(args: &VerifyArgs, dir: &Path) -> Result<ExitCode> {
    if !dir.is_dir() {
        bail!("no archive at {}", dir.display());
    }
    let report =
        skein_archive::verify(dir).with_context(|| format!("verifying {}", dir.display()))?;
    if report.checkpoints == 0 && report.issues.is_empty() {
        bail!(
            "{}: nothing archived there (an empty archive or an empty directory)",
            dir.display()
        );
    }
    let rows: Vec<_> = report
        .issues
        .iter()
        .map(|i| {
            json!({
                "severity": match i.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                },
                "code": code(&format!("{:?}", i.problem)),
                "path": rel(dir, &i.path),
                "problem": i.problem.to_string(),
            })
        })
        .collect();
    print_lines(&rows)?;
    let errors = report.errors().count();
    summary(
        args.quiet,
        &format!(
            "{}: {} checkpoint(s), {} file(s), {} line(s), {} → {} bytes; {} error(s), {} warning(s)",
            dir.display(),
            report.checkpoints,
            report.files,
            report.lines,
            report.raw_bytes,
            report.compressed_bytes,
            errors,
            report.warnings().count()
        ),
    );
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(super) fn restore(args: &RestoreArgs, dir: &Path) -> Result<ExitCode> {
    let archive = open(dir)?;
    let mut archived =
        archived_sessions(archive.root()).with_context(|| format!("listing {}", dir.display()))?;
    let opts = RestoreOptions {
        projects: &args.to,
        project: args.project.as_deref(),
        subagents: !args.no_subagents,
        overwrite: args.overwrite,
    };
    let sessions = if args.sessions.is_empty() {
        archived.keys().cloned().collect()
    } else {
        args.sessions.clone()
    };
    let mut rows = Vec::new();
    let (mut written, mut same, mut failed) = (0, 0, 0);
    for id in &sessions {
        let result = match archived.remove(id) {
            Some(sources) => restore_session(&archive, &sources, &opts).map_err(Into::into),
            None => Err(anyhow::anyhow!("session {id} not found in the archive")),
        };
        match result {
            Ok(r) => {
                let mut row = |path: &PathBuf, status: &str| {
                    rows.push(json!({"session_id": id, "path": path.display().to_string(), "status": status}));
                };
                for p in &r.written {
                    row(p, "written");
                }
                for p in &r.unchanged {
                    row(p, "unchanged");
                }
                written += r.written.len();
                same += r.unchanged.len();
            }
            Err(e) => {
                failed += 1;
                if !args.quiet {
                    error_line(&format!("session {id}: {e:#}"));
                }
                rows.push(json!({"session_id": id, "status": "error", "error": format!("{e:#}")}));
            }
        }
    }
    print_lines(&rows)?;
    summary(
        args.quiet,
        &format!(
            "{} session(s) into {}: {written} file(s) written, {same} unchanged, {failed} session(s) failed",
            sessions.len(),
            args.to.display()
        ),
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

pub(super) fn compact(args: &CompactArgs, dir: &Path) -> Result<ExitCode> {
    let archive = open(dir)?;
    let r = archive
        .compact(&CompactOptions {
            level: args.zstd_level,
            long: (args.long > 0).then_some(args.long),
            threads: args.threads,
            cold_after_days: args.cold_after_days,
            now_unix: now_unix(),
        })
        .with_context(|| format!("compacting {}", dir.display()))?;
    print_lines(&[json!({
        "compacted": r.compacted,
        "skipped": r.skipped,
        "bytes_before": r.bytes_before,
        "bytes_after": r.bytes_after,
    })])?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn train_dict(args: &TrainDictArgs, dir: &Path) -> Result<ExitCode> {
    let archive = open(dir)?;
    let r = archive
        .train_dictionary(&TrainOptions {
            min_gain: args.min_gain,
            ..TrainOptions::default()
        })
        .with_context(|| format!("training a dictionary in {}", dir.display()))?;
    print_lines(&[json!({
        "samples": r.samples,
        "gain": r.gain,
        "installed": r.installed,
        "skipped": r.skipped,
    })])?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn prune(args: &PruneArgs, dir: &Path) -> Result<ExitCode> {
    let archive = open(dir)?;
    let r = archive
        .apply_retention(&RetentionOptions {
            keep_days: args.keep_days,
            now_unix: now_unix(),
            dry_run: args.dry_run,
        })
        .with_context(|| format!("retention in {}", dir.display()))?;
    let action = if args.dry_run {
        "would-delete"
    } else {
        "deleted"
    };
    let root = archive.root();
    let mut rows: Vec<_> = r
        .deleted
        .iter()
        .map(|p| json!({"action": action, "file": rel(root, p)}))
        .collect();
    rows.extend(
        r.kept_only_copy
            .iter()
            .map(|p| json!({"action": "kept-only-copy", "file": rel(root, p)})),
    );
    print_lines(&rows)?;
    summary(
        false,
        &format!(
            "{} file(s) {}, {} bytes freed, {} old file(s) kept as the only copy",
            r.deleted.len(),
            if args.dry_run {
                "would be deleted"
            } else {
                "deleted"
            },
            r.freed_bytes,
            r.kept_only_copy.len()
        ),
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn repair(args: &RepairArgs, dir: &Path) -> Result<ExitCode> {
    let archive = open(dir)?;
    let r = archive
        .recover_all()
        .with_context(|| format!("repairing {}", dir.display()))?;
    let indexed = if args.rebuild_index {
        let n = archive
            .rebuild_index()
            .with_context(|| format!("rebuilding the index of {}", dir.display()))?;
        Some(n)
    } else {
        None
    };
    let root = archive.root();
    let errors: Vec<_> = r
        .errors
        .iter()
        .map(|(p, e)| json!({"checkpoint": rel(root, p), "error": e}))
        .collect();
    let rebuilt: Vec<_> = r
        .rebuilt
        .iter()
        .map(|b| {
            json!({
                "file": b.file,
                "before": {"committed_len": b.before.0, "lines": b.before.1, "raw_bytes": b.before.2},
                "after": {"committed_len": b.after.0, "lines": b.after.1, "raw_bytes": b.after.2},
                "source_kept": b.source_kept,
            })
        })
        .collect();
    let set_aside: Vec<_> = r.set_aside.iter().map(|p| rel(root, p)).collect();
    print_lines(&[json!({
        "checkpoints": r.checkpoints,
        "truncated_bytes": r.truncated_bytes,
        "rebuilt": rebuilt,
        "set_aside": set_aside,
        "index_entries": indexed,
        "errors": errors,
    })])?;
    Ok(if r.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
