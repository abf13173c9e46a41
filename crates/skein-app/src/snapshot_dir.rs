//! `skein snapshot --out-dir DIR`: the snapshot as a session directory in Claude Code's
//! layout. This module decides what goes in it: the output's session id, and every subagent
//! spawned inside the snapshot (nested spawns included), linked by its sidecar's `toolUseId`,
//! by the agent ids the snapshot's results name, and by `parentAgentId` for agents spawned by
//! an included agent. The binary runs the passes over them and writes the files.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use skein_core::Parser;
use skein_layout::claude::{path_in_subagents, read_sidecar, transcript_stem};
use skein_layout::{AgentFile, session_of};
use skein_passes::{SnapshotReport, Transcript, spawns};
use skein_store::{Input, InputMode, safe_component, sanitize_file_name};

use crate::error::Error;

/// The session id of the output: the input file's name, else the first `sessionId` inside.
pub fn output_session_id(input_path: &Path, input: &[u8]) -> String {
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

/// A subagent that goes with a snapshot.
#[derive(Debug)]
pub struct SnapshotAgent {
    pub file: AgentFile,
    /// Its transcript.
    pub bytes: Vec<u8>,
    /// Where it goes below `DIR/<session>/subagents/`.
    pub target: PathBuf,
    /// Its `agent-<id>.meta.json` sidecar, when it has one on disk.
    pub sidecar: Option<Vec<u8>>,
}

fn read_all(path: &Path) -> Result<Vec<u8>, Error> {
    let io = |error| Error::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut bytes = Vec::new();
    match skein_layout::open(path, InputMode::Read).map_err(|e| io(e.source))? {
        Input::Stream(mut r) => {
            r.read_to_end(&mut bytes).map_err(io)?;
        }
        Input::Mapped(m) => bytes.extend_from_slice(&m),
    }
    Ok(bytes)
}

/// The subagents of the session `input_path` belongs to that were spawned inside `snap`, in the
/// session's order.
pub fn snapshot_agents(
    input_path: &Path,
    snap: &SnapshotReport,
) -> Result<Vec<SnapshotAgent>, Error> {
    let agents = session_of(input_path).map(|s| s.agents).unwrap_or_default();
    let mut tools: BTreeSet<String> = snap.spawns.iter().cloned().collect();
    let mut ids: BTreeSet<String> = snap.agent_ids.iter().cloned().collect();
    let mut contents: Vec<Option<Vec<u8>>> = vec![None; agents.len()];
    loop {
        let mut grew = false;
        for (i, a) in agents.iter().enumerate() {
            if contents[i].is_some() {
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
            let bytes = read_all(&a.path)?;
            let links = spawns(&Transcript::parse(&bytes));
            tools.extend(links.tool_use_ids);
            ids.extend(links.agent_ids);
            ids.insert(a.agent_id.clone());
            contents[i] = Some(bytes);
            grew = true;
        }
        if !grew {
            break;
        }
    }
    Ok(agents
        .into_iter()
        .zip(contents)
        .filter_map(|(file, bytes)| {
            Some(SnapshotAgent {
                target: path_in_subagents(&file.path, &file.agent_id),
                sidecar: read_sidecar(&file.path),
                bytes: bytes?,
                file,
            })
        })
        .collect())
}
