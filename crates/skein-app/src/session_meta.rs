//! The metadata of each file of a session: the collector's facts plus what names the file
//! (session, project, the subagents a main session spawned, a subagent's identity and how its
//! spawning call ended). Pure functions of collectors and sidecars, so `skein archive` (which
//! reads the whole session) and the hook (which carries the collectors from turn to turn) call
//! the same code.

use skein_analysis::SpawnLinks;
use skein_archive::{SessionMeta, SubagentRef};
use skein_hook::redaction::redact_str;
use skein_layout::AgentMeta;
use skein_redact::{Redactor, RuleCounts};

use crate::identity::{AgentIdentity, clean};
use crate::meta::MetaCollector;

/// A subagent's identity: its sidecar first, then the event that reported it (the hook's
/// SubagentStop), then the spawning call the parent's `links` name.
pub fn agent_identity(
    agent_id: &str,
    sidecar: Option<&AgentMeta>,
    event_agent_type: Option<&str>,
    links: Option<&SpawnLinks>,
    parent_session: Option<&str>,
) -> AgentIdentity {
    let side_tool = sidecar.and_then(|m| m.tool_use_id.as_deref());
    let spawned_by = match links {
        Some(l) => l.spawner_of(agent_id, side_tool),
        None => side_tool.map(str::to_owned),
    };
    let spawn = spawned_by
        .as_deref()
        .and_then(|id| links.and_then(|l| l.spawn(id)));
    let description = clean(sidecar.and_then(|m| m.description.as_deref()))
        .or_else(|| clean(spawn.and_then(|p| p.description.as_deref())));
    AgentIdentity::new(
        agent_id,
        &[
            sidecar.and_then(|m| m.agent_type.as_deref()),
            event_agent_type,
            spawn.and_then(|p| p.subagent_type.as_deref()),
        ],
        parent_session,
        clean(spawned_by.as_deref()),
        description,
    )
}

/// A main transcript's metadata. `agents` are the identities of the session's subagent files.
pub(crate) fn main_meta(
    c: &MetaCollector,
    file_session: &str,
    project: Option<String>,
    agents: &[AgentIdentity],
) -> SessionMeta {
    let mut m = c.meta();
    m.session_id = Some(c.session_id().unwrap_or(file_session).to_owned());
    m.project = project;
    let mut seen = std::collections::BTreeSet::new();
    m.subagents = agents
        .iter()
        .filter(|a| seen.insert(a.agent_id.clone()))
        .map(|a| SubagentRef {
            agent_id: a.agent_id.clone(),
            agent_type: Some(a.agent_type.clone()),
            tool_use_id: a.tool_use_id.clone(),
        })
        .collect();
    m
}

/// A subagent file's metadata; `main` is the parent transcript's collector (how the spawning
/// call ended), when known.
pub(crate) fn agent_meta(
    c: &MetaCollector,
    agent: &AgentIdentity,
    project: Option<String>,
    main: Option<&MetaCollector>,
) -> SessionMeta {
    let mut m = c.meta();
    agent.annotate(&mut m);
    m.project = project;
    m.outcome = match (main, agent.tool_use_id.as_deref()) {
        (Some(p), Some(id)) => p.outcome_of(id),
        _ => None,
    };
    m
}

/// Redacts the free text of a metadata record (working directory, branch, file paths,
/// skills, description), counting what was replaced; ids, types and counts are left alone.
pub(crate) fn redact_meta(m: &mut SessionMeta, redactor: &Redactor, counts: &mut RuleCounts) {
    let mut r = |s: &str| redact_str(redactor, s, counts);
    for v in [&mut m.cwd, &mut m.git_branch].into_iter().flatten() {
        *v = r(v);
    }
    for list in [&mut m.files_modified, &mut m.skills_used] {
        let mut seen = std::collections::HashSet::new();
        // Two values that differed only by a secret are one value once redacted.
        *list = list
            .iter()
            .map(|v| r(v))
            .filter(|v| seen.insert(v.clone()))
            .collect();
    }
    if let Some(serde_json::Value::String(d)) = m.extra.get_mut("description") {
        *d = r(d);
    }
}
