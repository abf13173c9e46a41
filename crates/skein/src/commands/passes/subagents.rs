//! `skein snapshot --out-dir DIR`: the snapshot as a session directory in Claude Code's
//! layout, `DIR/<session>.jsonl` plus `DIR/<session>/subagents/agent-<id>.jsonl` (and
//! `.meta.json`) for every subagent spawned inside the snapshot (chosen by
//! `skein_app::snapshot_dir`), each through the same passes except snapshot.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use skein_app::snapshot_dir::snapshot_agents;
use skein_app::sources::{open_source, temp_spool};
use skein_layout::claude::sidecar_path;
use skein_passes::{Pipeline, SnapshotReport};
use skein_store::ensure_not_input;

use super::{Reports, write_file};
use crate::output::stream_output;

/// Writes the subagent transcripts of the snapshot below `sub_dir`, adding each file written
/// to `written`.
pub(super) fn write_agents(
    sub_dir: &Path,
    input_path: &Path,
    snap: Option<&SnapshotReport>,
    sub_pipeline: &Pipeline,
    reports: &mut Reports,
    written: &mut Vec<PathBuf>,
) -> Result<()> {
    let Some(snap) = snap else {
        return Ok(());
    };
    if input_path.as_os_str() == "-" {
        return Ok(());
    }
    for a in snapshot_agents(input_path, snap)? {
        let shown = a.file.path.display();
        let source = open_source(&a.file.path).with_context(|| format!("{shown}"))?;
        let target = sub_dir.join(&a.target);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        ensure_not_input(&target, &[input_path, &a.file.path])?;
        let results = stream_output(&target, |out| {
            sub_pipeline
                .run_source(&*source, out, &mut temp_spool)
                .with_context(|| format!("{shown}"))
        })?;
        for r in &results {
            reports.push(&a.file.path, r, None)?;
        }
        written.push(target.clone());
        if let (Some(meta), Some(dst), Some(src)) =
            (a.sidecar, sidecar_path(&target), sidecar_path(&a.file.path))
        {
            write_file(&dst, &meta, &[&src])?;
            written.push(dst);
        }
    }
    Ok(())
}
