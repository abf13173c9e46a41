//! Who a subagent run is, as the archive records it: its archive key and the metadata fields
//! that name it. Shared by `skein archive` and the hook's `archive` pass.

use std::path::Path;

use skein_archive::{Kind, SessionMeta, UNKNOWN_AGENT_TYPE};
use skein_layout::AgentMeta;

/// A value from a file Claude Code wrote, kept bounded and single-line anyway.
pub fn clean(v: Option<&str>) -> Option<String> {
    v.map(|s| s.chars().filter(|c| !c.is_control()).take(200).collect())
        .filter(|s: &String| !s.trim().is_empty())
}

/// The sidecar next to an agent transcript, values cleaned; anything unreadable counts as
/// absent.
pub fn read_sidecar(agent_transcript: &Path) -> AgentMeta {
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
pub struct AgentIdentity {
    pub agent_id: String,
    /// Never empty ([`UNKNOWN_AGENT_TYPE`] when nothing names it).
    pub agent_type: String,
    /// The session that spawned it (part of the archive key).
    pub parent_session: Option<String>,
    /// The spawning `tool_use` id.
    pub tool_use_id: Option<String>,
    pub description: Option<String>,
}

impl AgentIdentity {
    /// `agent_type` is the first non-blank candidate, else [`UNKNOWN_AGENT_TYPE`].
    pub fn new(
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
    pub fn kind(&self) -> Kind {
        skein_layout::archive::agent_key(
            &self.agent_id,
            Some(&self.agent_type),
            self.parent_session.as_deref(),
            self.tool_use_id.clone(),
        )
    }

    /// Sets the fields of `meta` that name the run: session and parent session, the spawning
    /// `tool_use`, and `extra.agent_id` / `agent_type` / `description`.
    pub fn annotate(&self, meta: &mut SessionMeta) {
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
