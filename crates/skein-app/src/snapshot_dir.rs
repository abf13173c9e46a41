//! `skein snapshot --out-dir DIR`: the snapshot as a session directory in Claude Code's
//! layout. This module decides what goes in it: the output's session id, and every subagent
//! spawned inside the snapshot (nested spawns included), linked by its sidecar's `toolUseId`,
//! by the agent ids the snapshot's results name, and by `parentAgentId` for agents spawned by
//! an included agent. The binary runs the passes over them and writes the files.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use skein_core::{LineSource, Parser, ReadLines};
use skein_layout::claude::{path_in_subagents, read_sidecar, transcript_stem};
use skein_layout::{AgentFile, session_of};
use skein_passes::{SnapshotReport, Source, Transcript, spawns};
use skein_store::{safe_component, sanitize_file_name};

use crate::error::Error;
use crate::sources::open_source;

/// The session id of the output: the input file's name, else the first `sessionId` in its
/// first 1,000 lines.
pub fn output_session_id(input_path: &Path, input: &dyn Source) -> io::Result<String> {
    let name = input_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(stem) = transcript_stem(&name)
        && safe_component(stem).is_ok()
    {
        return Ok(stem.to_owned());
    }
    let mut parser = Parser::new();
    let mut lines = ReadLines::new(input.open()?);
    for _ in 0..1000 {
        if !lines.advance()? {
            break;
        }
        if let Ok(p) = parser.parse(lines.line().text)
            && let Some(s) = p.envelope.session_id.get()
        {
            return Ok(sanitize_file_name(s));
        }
    }
    Ok("snapshot".to_owned())
}

/// A subagent that goes with a snapshot.
#[derive(Debug)]
pub struct SnapshotAgent {
    pub file: AgentFile,
    /// Where it goes below `DIR/<session>/subagents/`.
    pub target: PathBuf,
    /// Its `agent-<id>.meta.json` sidecar, when it has one on disk.
    pub sidecar: Option<Vec<u8>>,
}

/// The subagents of the session `input_path` belongs to that were spawned inside `snap`, in the
/// session's order (each agent file is indexed to follow nested spawns, never held in memory).
pub fn snapshot_agents(
    input_path: &Path,
    snap: &SnapshotReport,
) -> Result<Vec<SnapshotAgent>, Error> {
    let agents = session_of(input_path).map(|s| s.agents).unwrap_or_default();
    let mut tools: BTreeSet<String> = snap.spawns.iter().cloned().collect();
    let mut ids: BTreeSet<String> = snap.agent_ids.iter().cloned().collect();
    let mut included = vec![false; agents.len()];
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
            let io = |error| Error::Io {
                path: a.path.clone(),
                error,
            };
            let src = open_source(&a.path).map_err(io)?;
            let links = spawns(&Transcript::scan(&*src).map_err(io)?);
            tools.extend(links.tool_use_ids);
            ids.extend(links.agent_ids);
            ids.insert(a.agent_id.clone());
            included[i] = true;
            grew = true;
        }
        if !grew {
            break;
        }
    }
    Ok(agents
        .into_iter()
        .zip(included)
        .filter(|(_, inc)| *inc)
        .map(|(file, _)| SnapshotAgent {
            target: path_in_subagents(&file.path, &file.agent_id),
            sidecar: read_sidecar(&file.path),
            file,
        })
        .collect())
}
