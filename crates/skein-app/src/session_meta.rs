//! The metadata of each file of a loaded session: the collector's facts plus what names the
//! file (session, project, the subagents a main session spawned, a subagent's identity and how
//! its spawning call ended).

use skein_archive::{SessionMeta, SubagentRef};
use skein_reports::LoadedSession;

use crate::identity::{AgentIdentity, clean};
use crate::meta::MetaCollector;

/// A subagent file's identity: the sidecar first, then the spawning call.
pub(crate) fn agent_identity(
    s: &LoadedSession<MetaCollector>,
    i: usize,
    parent_session: Option<&str>,
) -> AgentIdentity {
    let run = &s.agents[i];
    let side = run.file.meta.as_ref();
    let spawn = run.spawned_by.as_deref().and_then(|id| s.links.spawn(id));
    let description = clean(side.and_then(|m| m.description.as_deref()))
        .or_else(|| clean(spawn.and_then(|p| p.description.as_deref())));
    AgentIdentity::new(
        &run.file.agent_id,
        &[
            side.and_then(|m| m.agent_type.as_deref()),
            spawn.and_then(|p| p.subagent_type.as_deref()),
        ],
        parent_session,
        clean(run.spawned_by.as_deref()),
        description,
    )
}

/// The main transcript's metadata (`None` without a main transcript). `agents` are the
/// identities of the session's subagent files, in the order of `s.agents`.
pub(crate) fn main_meta(
    s: &LoadedSession<MetaCollector>,
    agents: &[AgentIdentity],
) -> Option<SessionMeta> {
    let (_, c) = s.main.as_ref()?;
    let mut m = c.meta();
    m.session_id = Some(
        c.session_id()
            .map_or_else(|| s.files.session_id.clone(), str::to_owned),
    );
    m.project = Some(s.files.project());
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
    Some(m)
}

/// A subagent file's metadata.
pub(crate) fn agent_meta(
    s: &LoadedSession<MetaCollector>,
    i: usize,
    agent: &AgentIdentity,
) -> SessionMeta {
    let mut m = s.agents[i].visitor.meta();
    agent.annotate(&mut m);
    m.project = Some(s.files.project());
    m.outcome = match (&s.main, agent.tool_use_id.as_deref()) {
        (Some((_, c)), Some(id)) => c.outcome_of(id),
        _ => None,
    };
    m
}
