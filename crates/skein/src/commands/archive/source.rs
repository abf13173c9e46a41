//! What the hook's `archive` pass and `skein archive` share about a source transcript: its
//! project directory, its first timestamp, a subagent's identity (sidecar, archive key, the
//! metadata fields that name it), and the per-line redaction transform.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use skein_archive::{Kind, SessionMeta, UNKNOWN_AGENT_TYPE};
use skein_redact::Redactor;

/// Bytes read from a transcript's start to find its first timestamp.
const HEAD_BYTES: u64 = 64 * 1024;
/// Largest `agent-<id>.meta.json` sidecar read.
const SIDECAR_BYTES: u64 = 64 * 1024;

/// The name of the directory `up` levels above `path` (the Claude project directory name:
/// `<project>/<sid>.jsonl` is 1 level, `<project>/<sid>/subagents/agent-<id>.jsonl` 3).
pub(crate) fn project_of(path: &Path, up: usize) -> Option<String> {
    path.ancestors()
        .nth(up)
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .map(str::to_owned)
}

/// What Claude Code's `agent-<id>.meta.json` says about a subagent.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Sidecar {
    pub(crate) agent_type: Option<String>,
    pub(crate) tool_use_id: Option<String>,
    pub(crate) description: Option<String>,
}

/// A value from a file Claude Code wrote, kept bounded and single-line anyway.
pub(crate) fn clean(v: Option<&str>) -> Option<String> {
    v.map(|s| s.chars().filter(|c| !c.is_control()).take(200).collect())
        .filter(|s: &String| !s.trim().is_empty())
}

/// Reads the sidecar next to an agent transcript; anything unreadable counts as absent.
pub(crate) fn read_sidecar(agent_transcript: &Path) -> Sidecar {
    let path = agent_transcript.with_extension("meta.json");
    let Ok(file) = File::open(&path) else {
        return Sidecar::default();
    };
    let mut bytes = Vec::new();
    if file.take(SIDECAR_BYTES).read_to_end(&mut bytes).is_err() {
        return Sidecar::default();
    }
    let s: Sidecar = serde_json::from_slice(&bytes).unwrap_or_default();
    Sidecar {
        agent_type: clean(s.agent_type.as_deref()),
        tool_use_id: clean(s.tool_use_id.as_deref()),
        description: clean(s.description.as_deref()),
    }
}

/// The first `"timestamp":"…"` value in the first 64 KiB of a transcript (names the archive
/// file; the archive falls back to the file's mtime without it).
pub(crate) fn first_timestamp(path: &Path) -> Option<String> {
    const KEY: &[u8] = b"\"timestamp\":\"";
    let file = File::open(path).ok()?;
    let mut head = Vec::new();
    file.take(HEAD_BYTES).read_to_end(&mut head).ok()?;
    let at = memchr::memmem::find(&head, KEY)? + KEY.len();
    let len = head[at..].iter().take(64).position(|&b| b == b'"')?;
    let ts = std::str::from_utf8(&head[at..at + len]).ok()?;
    skein_core::time::parse_ms(ts).map(|_| ts.to_owned())
}

/// Who a subagent run is: its archive key and the facts its metadata records.
#[derive(Debug, Clone)]
pub(crate) struct AgentIdentity {
    pub(crate) agent_id: String,
    /// Never empty ([`UNKNOWN_AGENT_TYPE`] when nothing names it).
    pub(crate) agent_type: String,
    /// The session that spawned it (part of the archive key).
    pub(crate) parent_session: Option<String>,
    /// The spawning `tool_use` id.
    pub(crate) tool_use_id: Option<String>,
    pub(crate) description: Option<String>,
}

impl AgentIdentity {
    /// `agent_type` is the first non-blank candidate, else [`UNKNOWN_AGENT_TYPE`].
    pub(crate) fn new(
        agent_id: &str,
        agent_types: &[Option<&str>],
        parent_session: Option<&str>,
        tool_use_id: Option<String>,
        description: Option<String>,
    ) -> Self {
        let agent_type = agent_types
            .iter()
            .find_map(|t| clean(*t))
            .unwrap_or_else(|| UNKNOWN_AGENT_TYPE.to_owned());
        Self {
            agent_id: agent_id.to_owned(),
            agent_type,
            parent_session: parent_session.map(str::to_owned),
            tool_use_id,
            description,
        }
    }

    /// The archive key.
    pub(crate) fn kind(&self) -> Kind {
        Kind::Subagent {
            agent_type: self.agent_type.clone(),
            agent_id: self.agent_id.clone(),
            parent_session: self.parent_session.clone(),
            tool_use_id: self.tool_use_id.clone(),
        }
    }

    /// Sets the fields of `meta` that name the run: session and parent session, the spawning
    /// `tool_use`, and `extra.agent_id` / `agent_type` / `description`.
    pub(crate) fn annotate(&self, meta: &mut SessionMeta) {
        meta.session_id.clone_from(&self.parent_session);
        meta.parent_session.clone_from(&self.parent_session);
        meta.tool_use_id.clone_from(&self.tool_use_id);
        meta.extra
            .insert("agent_id".into(), self.agent_id.clone().into());
        meta.extra
            .insert("agent_type".into(), self.agent_type.clone().into());
        if let Some(d) = &self.description {
            meta.extra.insert("description".into(), d.clone().into());
        }
    }
}

/// Redacts one transcript line (with or without its `\n`), appending the result and a `\n`.
pub(crate) fn redact_line(redactor: &Redactor, line: &[u8], out: &mut Vec<u8>) {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    redactor.redact_line(body, out);
    out.push(b'\n');
}
