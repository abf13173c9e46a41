//! `skein snapshot --out-dir DIR`: the snapshot as a session directory in Claude Code's
//! layout, `DIR/<session>.jsonl` plus `DIR/<session>/subagents/agent-<id>.jsonl` (and
//! `.meta.json`) for every subagent spawned inside the snapshot (chosen by
//! `skein_app::snapshot_dir`), each through the same passes except snapshot.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use skein_app::snapshot_dir::{output_session_id, snapshot_agents};
use skein_layout::claude::{main_path, sidecar_path, subagents_dir};
use skein_passes::{Pipeline, SnapshotReport};

use super::{Reports, write_file};

/// Writes the session directory; returns the files written.
pub(super) fn write_session(
    dir: &Path,
    input_path: &Path,
    input: &[u8],
    main_out: &[u8],
    snap: Option<&SnapshotReport>,
    sub_pipeline: &Pipeline,
    reports: &mut Reports,
) -> Result<Vec<PathBuf>> {
    let sid = output_session_id(input_path, input);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let main = dir.join(main_path(&sid));
    write_file(&main, main_out, &[input_path])?;
    let mut written = vec![main];
    let Some(snap) = snap else {
        return Ok(written);
    };
    if input_path.as_os_str() == "-" {
        return Ok(written);
    }
    let sub_dir = dir.join(subagents_dir(&sid));
    for a in snapshot_agents(input_path, snap)? {
        let out = sub_pipeline
            .run(&a.bytes)
            .with_context(|| format!("{}", a.file.path.display()))?;
        let target = sub_dir.join(&a.target);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_file(&target, &out.bytes, &[input_path, &a.file.path])?;
        for r in &out.reports {
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
    Ok(written)
}
