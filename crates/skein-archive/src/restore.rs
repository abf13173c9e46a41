//! `restore`: write a session (and its subagents) back into a Claude Code projects layout so
//! `claude --resume` finds it:
//!
//! ```text
//! <projects>/<project>/<session-id>.jsonl
//! <projects>/<project>/<session-id>/subagents/agent-<agent-id>.jsonl   (+ agent-<id>.meta.json)
//! ```
//!
//! The current version of each file is restored (as archived, i.e. after the ingest transform).
//! Existing files with identical content are left alone; different content is a conflict unless
//! `overwrite` is set. All conflicts are checked before anything is written.

use std::path::{Path, PathBuf};

use crate::archive::Archive;
use crate::checkpoint::{Checkpoint, FileState};
use crate::error::{ArchiveError, Result};
use crate::layout::{
    CHECKPOINT_DIR, Kind, SUBAGENT_DIR, read_optional, resolve, write_file_atomic,
};
use crate::reader::read_archived;

/// What to restore.
#[derive(Debug, Clone)]
pub struct RestoreRequest<'a> {
    pub session_id: &'a str,
    /// The Claude projects directory (`~/.claude/projects`).
    pub projects_dir: &'a Path,
    /// The project directory name; default: the one recorded at archive time, else derived
    /// from the recorded `cwd` the way Claude Code does (non-alphanumerics → `-`).
    pub project: Option<&'a str>,
    pub include_subagents: bool,
    pub overwrite: bool,
}

/// What restore wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreReport {
    pub written: Vec<PathBuf>,
    /// Already present with identical content.
    pub unchanged: Vec<PathBuf>,
}

impl Archive {
    /// Restores a main session (and optionally its subagents).
    pub fn restore(&self, req: &RestoreRequest<'_>) -> Result<RestoreReport> {
        let kind = Kind::MainSession {
            session_id: req.session_id.to_owned(),
        };
        kind.validate()?;
        let main = Checkpoint::load(&self.checkpoint_path(&kind))?
            .and_then(|c| c.current)
            .ok_or_else(|| ArchiveError::NotFound(format!("session {}", req.session_id)))?;
        let project = match req.project {
            Some(p) => p.to_owned(),
            None => project_name(&main)
                .ok_or_else(|| ArchiveError::Option("no project recorded; pass one".into()))?,
        };
        check_project(&project)?;
        let dir = req.projects_dir.join(&project);
        let mut plan: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        let content = read_archived(&resolve(&self.root, &main.file)?)?;
        plan.push((dir.join(format!("{}.jsonl", req.session_id)), content));
        if req.include_subagents {
            let sub_dir = dir.join(req.session_id).join("subagents");
            for agent in self.subagents_of(req.session_id)? {
                let Kind::Subagent {
                    agent_type,
                    agent_id,
                    tool_use_id,
                    ..
                } = &agent.kind
                else {
                    continue;
                };
                let content = read_archived(&resolve(&self.root, &agent.file)?)?;
                plan.push((sub_dir.join(format!("agent-{agent_id}.jsonl")), content));
                let side = serde_json::json!({
                    "agentType": agent_type,
                    "toolUseId": tool_use_id.clone().or_else(|| agent.meta.tool_use_id.clone()),
                });
                let side_path = sub_dir.join(format!("agent-{agent_id}.meta.json"));
                if read_optional(&side_path)?.is_none() {
                    plan.push((side_path, crate::checkpoint::to_json(&side)));
                }
            }
        }
        let mut report = RestoreReport::default();
        let mut todo = Vec::new();
        for (path, content) in plan {
            match read_optional(&path)? {
                Some(existing) if existing == content => report.unchanged.push(path),
                Some(_) if !req.overwrite => return Err(ArchiveError::Conflict { path }),
                _ => todo.push((path, content)),
            }
        }
        for (path, content) in todo {
            write_file_atomic(&path, &content)?;
            report.written.push(path);
        }
        Ok(report)
    }

    /// The current files of every subagent archived with `session_id` as parent.
    fn subagents_of(&self, session_id: &str) -> Result<Vec<FileState>> {
        let dir = self
            .root
            .join(CHECKPOINT_DIR)
            .join(SUBAGENT_DIR)
            .join(session_id);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(ArchiveError::Io {
                    path: dir,
                    source: e,
                });
            }
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| crate::layout::is_json_state(p))
            .collect();
        paths.sort();
        let mut out = Vec::new();
        for p in paths {
            if let Some(cur) = Checkpoint::load(&p)?.and_then(|c| c.current) {
                cur.kind.validate()?;
                out.push(cur);
            }
        }
        Ok(out)
    }
}

/// The recorded project directory name, or one derived from the recorded cwd.
fn project_name(f: &FileState) -> Option<String> {
    f.project
        .clone()
        .or_else(|| f.meta.project.clone())
        .or_else(|| {
            let cwd = f.meta.cwd.as_deref()?;
            let name: String = cwd
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            (name.len() <= 200).then_some(name)
        })
}

/// A project directory name must be one plain path component.
fn check_project(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ArchiveError::Option(format!(
            "project directory name {name:?} is not a plain name"
        )))
    }
}
