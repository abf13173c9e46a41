//! What the hook's `archive` pass and `skein archive` share about a source transcript: a
//! subagent's identity (sidecar, archive key, the metadata fields that name it), and the
//! per-line redaction transform.

use std::path::Path;

use skein_archive::{Kind, SessionMeta, UNKNOWN_AGENT_TYPE};
use skein_layout::AgentMeta;
use skein_redact::Redactor;

/// A value from a file Claude Code wrote, kept bounded and single-line anyway.
pub(crate) fn clean(v: Option<&str>) -> Option<String> {
    v.map(|s| s.chars().filter(|c| !c.is_control()).take(200).collect())
        .filter(|s: &String| !s.trim().is_empty())
}

/// Reads the sidecar next to an agent transcript, values cleaned; anything unreadable counts
/// as absent.
pub(crate) fn read_sidecar(agent_transcript: &Path) -> AgentMeta {
    let s = skein_layout::claude::read_sidecar(agent_transcript)
        .and_then(|b| AgentMeta::parse(&b))
        .unwrap_or_default();
    AgentMeta {
        agent_type: clean(s.agent_type.as_deref()),
        tool_use_id: clean(s.tool_use_id.as_deref()),
        description: clean(s.description.as_deref()),
        ..AgentMeta::default()
    }
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
        skein_layout::archive::agent_key(
            &self.agent_id,
            Some(&self.agent_type),
            self.parent_session.as_deref(),
            self.tool_use_id.clone(),
        )
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

/// `bytes` (a JSON text) redacted.
pub(crate) fn redacted(redactor: &Redactor, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    redactor.redact_line(bytes, &mut out);
    out
}
