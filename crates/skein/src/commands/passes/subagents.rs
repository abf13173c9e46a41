//! `skein snapshot --out-dir DIR`: the snapshot as a session directory in Claude Code's
//! layout, `DIR/<session>.jsonl` plus `DIR/<session>/subagents/agent-<id>.jsonl` (and
//! `.meta.json`) for every subagent spawned inside the snapshot, nested spawns included.
//! Agents are linked by their `.meta.json` `toolUseId`, by the agent ids the snapshot's
//! results name, and by `parentAgentId` for agents spawned by an included agent.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use skein_core::Parser;
use skein_passes::{Pipeline, SnapshotReport, Transcript, spawns};
use skein_sessions::{AgentFile, discover};
use skein_store::{safe_component, sanitize_file_name};

use super::{Reports, read_input, write_file};
use crate::inputs::{legacy_agent_files, transcript_stem};

/// The session id of the output: the input file's name, else the first `sessionId` inside.
fn session_id(input_path: &Path, input: &[u8]) -> String {
    let name = input_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(stem) = transcript_stem(&name)
        && safe_component(stem).is_ok()
    {
        return stem.to_owned();
    }
    let mut parser = Parser::new();
    for line in input.split(|&b| b == b'\n').take(1000) {
        if let Ok(p) = parser.parse(line)
            && let Some(s) = p.envelope.session_id.get()
        {
            return sanitize_file_name(s);
        }
    }
    "snapshot".to_owned()
}

/// Every agent file of the session `input_path` belongs to: `<dir>/<sid>/subagents/…` and
/// legacy `<dir>/agent-*.jsonl` files whose records carry the session id.
fn agent_files(input_path: &Path, sid: &str) -> Vec<AgentFile> {
    let dir = match input_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut paths = vec![input_path.to_path_buf()];
    let sub = dir.join(sid).join("subagents");
    if sub.is_dir() {
        paths.push(sub);
    }
    paths.extend(legacy_agent_files(&dir));
    discover(&paths)
        .sessions
        .into_iter()
        .filter(|s| s.session_id == sid || s.main.as_deref() == Some(input_path))
        .flat_map(|s| s.agents)
        .collect()
}

/// Where an agent file goes under `DIR/<sid>/subagents/`.
fn target_name(agent: &AgentFile) -> PathBuf {
    let rel = agent
        .path
        .components()
        .skip_while(|c| c.as_os_str() != "subagents")
        .skip(1)
        .collect::<PathBuf>();
    let rel = if rel.as_os_str().is_empty() {
        PathBuf::from(format!(
            "agent-{}.jsonl",
            sanitize_file_name(&agent.agent_id)
        ))
    } else {
        rel
    };
    let name = rel.to_string_lossy();
    match name.strip_suffix(".zst") {
        Some(plain) => PathBuf::from(plain),
        None => rel,
    }
}

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
    let sid = session_id(input_path, input);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let main = dir.join(format!("{sid}.jsonl"));
    write_file(&main, main_out, &[input_path])?;
    let mut written = vec![main];
    let Some(snap) = snap else {
        return Ok(written);
    };
    if input_path.as_os_str() == "-" {
        return Ok(written);
    }
    let agents = agent_files(input_path, &sid);
    let mut tools: BTreeSet<String> = snap.spawns.iter().cloned().collect();
    let mut ids: BTreeSet<String> = snap.agent_ids.iter().cloned().collect();
    let mut included = vec![false; agents.len()];
    let mut contents: Vec<Option<Vec<u8>>> = vec![None; agents.len()];
    loop {
        let mut grew = false;
        for (i, a) in agents.iter().enumerate() {
            if included[i] {
                continue;
            }
            let meta = a.meta.as_ref();
            let linked = meta
                .and_then(|m| m.tool_use_id.as_ref())
                .is_some_and(|t| tools.contains(t))
                || ids.contains(&a.agent_id)
                || meta
                    .and_then(|m| m.parent_agent_id.as_ref())
                    .is_some_and(|p| ids.contains(p));
            if !linked {
                continue;
            }
            let bytes = read_input(&a.path)?;
            let links = spawns(&Transcript::parse(&bytes));
            tools.extend(links.tool_use_ids);
            ids.extend(links.agent_ids);
            ids.insert(a.agent_id.clone());
            contents[i] = Some(bytes);
            included[i] = true;
            grew = true;
        }
        if !grew {
            break;
        }
    }
    let sub_dir = dir.join(&sid).join("subagents");
    for (a, bytes) in agents.iter().zip(contents) {
        let Some(bytes) = bytes else { continue };
        let out = sub_pipeline
            .run(&bytes)
            .with_context(|| format!("{}", a.path.display()))?;
        let target = sub_dir.join(target_name(a));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_file(&target, &out.bytes, &[input_path, &a.path])?;
        for r in &out.reports {
            reports.push(&a.path, r, None)?;
        }
        written.push(target.clone());
        let meta_src = meta_path(&a.path);
        if let Some(src) = meta_src.filter(|p| p.is_file()) {
            let dst = target.with_file_name(src.file_name().expect("meta file name"));
            let meta = std::fs::read(&src).with_context(|| format!("{}", src.display()))?;
            write_file(&dst, &meta, &[&src])?;
            written.push(dst);
        }
    }
    Ok(written)
}

/// `agent-<id>.meta.json` beside `agent-<id>.jsonl[.zst]`.
fn meta_path(agent: &Path) -> Option<PathBuf> {
    let stem = transcript_stem(agent.file_name()?.to_str()?)?;
    Some(agent.with_file_name(format!("{stem}.meta.json")))
}
