//! The [`SessionMeta`] of each file of a session, computed from the transcripts: one read of
//! every file (the reports' `load_session`), with a visitor for what the analysis does not
//! keep (cwd, git branch, models, prompts, API messages).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::Value;
use skein_analysis::{Analysis, RecordVisitor, ToolPairing};
use skein_archive::{SessionMeta, SubagentRef, TokenUsage};
use skein_core::{Content, Envelope, Line};
use skein_graph::NodeId;
use skein_reports::LoadedSession;
use skein_reports::skills::skill_name;
use skein_reports::tools::normalized_input;

use super::source::{AgentIdentity, clean};

/// `extra` key: the source size the metadata was computed from. A later run that finds the
/// source at that size with nothing new to archive skips reading it again.
pub(super) const SOURCE_BYTES: &str = "source_bytes";

/// Tools whose `file_path` (or `notebook_path`) input names a file they modify.
const MODIFYING_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// What the analysis does not keep.
#[derive(Debug, Default)]
pub(super) struct MetaVisitor {
    cwd: Option<String>,
    git_branch: Option<String>,
    models: Vec<String>,
    prompts: u64,
    message_ids: HashSet<String>,
    anonymous_messages: u64,
}

impl RecordVisitor<Value> for MetaVisitor {
    fn record(&mut self, _: &Line<'_>, env: &Envelope<'_, Value>, _: Option<(NodeId, bool)>) {
        if self.cwd.is_none() {
            self.cwd = clean(env.cwd.get());
        }
        if let Some(b) = clean(env.git_branch.get()) {
            self.git_branch = Some(b);
        }
        let Some(message) = env.message.0.as_ref() else {
            return;
        };
        match env.kind.get() {
            Some("assistant") => {
                let model = message.model.get();
                if model == Some("<synthetic>") {
                    return;
                }
                if let Some(m) = model
                    && !self.models.iter().any(|x| x == m)
                {
                    self.models.push(m.to_owned());
                }
                match message.id.get() {
                    Some(id) => {
                        self.message_ids.insert(id.to_owned());
                    }
                    None => self.anonymous_messages += 1,
                }
            }
            Some("user") if !env.is_meta.0 && !env.is_compact_summary.0 => {
                let prompt = match &message.content {
                    Content::Text(t) => t.get().is_some_and(|t| !t.trim().is_empty()),
                    Content::Blocks(b) => b
                        .iter()
                        .any(|b| matches!(b.kind(), Some("text" | "image" | "document"))),
                    Content::None => false,
                };
                self.prompts += u64::from(prompt);
            }
            _ => {}
        }
    }
}

/// Pushes `v` unless present (first-appearance order).
fn push_unique(list: &mut Vec<String>, v: String) {
    if !list.contains(&v) {
        list.push(v);
    }
}

/// The metadata every transcript has: timestamps, counts, tools, usage, models, files, skills.
fn base(analysis: &Analysis, v: &MetaVisitor) -> SessionMeta {
    let stats = &analysis.stats;
    let mut m = SessionMeta {
        cwd: v.cwd.clone(),
        git_branch: v.git_branch.clone(),
        first_timestamp: stats.first_timestamp.clone(),
        last_timestamp: stats.last_timestamp.clone(),
        models: v.models.clone(),
        user_messages: v.prompts,
        assistant_messages: v.message_ids.len() as u64 + v.anonymous_messages,
        ..SessionMeta::default()
    };
    m.message_count = m.user_messages + m.assistant_messages;
    let ms = |t: &Option<String>| t.as_deref().and_then(skein_core::time::parse_ms);
    if let (Some(a), Some(b)) = (ms(&m.first_timestamp), ms(&m.last_timestamp)) {
        m.duration_ms = u64::try_from(b - a).ok();
    }
    let u = analysis.usage.totals();
    m.usage = TokenUsage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
    };
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for call in analysis.tools.uses() {
        let name = call.name.as_deref().unwrap_or("<unknown>");
        *counts.entry(name.to_owned()).or_default() += 1;
        m.tool_calls += 1;
        let Some(input) = call.input.as_ref() else {
            continue;
        };
        let input = normalized_input(input);
        if name == "Skill"
            && let Some(s) = skill_name(&input)
        {
            push_unique(&mut m.skills_used, s);
        }
        if MODIFYING_TOOLS.contains(&name) {
            let path = ["file_path", "notebook_path"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str));
            if let Some(p) = path.filter(|p| !p.is_empty()) {
                push_unique(&mut m.files_modified, p.to_owned());
            }
        }
    }
    m.tool_counts = counts;
    m
}

/// How a spawning call ended, from its `tool_result` in the parent.
fn spawn_outcome(parent: &ToolPairing, tool_use_id: Option<&str>) -> Option<String> {
    let r = parent.result_for(tool_use_id?)?;
    Some(if r.is_error { "error" } else { "completed" }.to_owned())
}

/// A subagent file's identity: the sidecar first, then the spawning call.
pub(super) fn agent_identity(
    s: &LoadedSession<MetaVisitor>,
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
pub(super) fn main_meta(
    s: &LoadedSession<MetaVisitor>,
    agents: &[AgentIdentity],
) -> Option<SessionMeta> {
    let (analysis, v) = s.main.as_ref()?;
    let mut m = base(analysis, v);
    m.session_id = Some(
        analysis
            .stats
            .session_id
            .clone()
            .unwrap_or_else(|| s.files.session_id.clone()),
    );
    m.project = Some(s.files.project());
    let mut seen = BTreeSet::new();
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
pub(super) fn agent_meta(
    s: &LoadedSession<MetaVisitor>,
    i: usize,
    agent: &AgentIdentity,
) -> SessionMeta {
    let run = &s.agents[i];
    let mut m = base(&run.analysis, &run.visitor);
    agent.annotate(&mut m);
    m.project = Some(s.files.project());
    m.outcome = s
        .main
        .as_ref()
        .and_then(|(a, _)| spawn_outcome(&a.tools, agent.tool_use_id.as_deref()));
    m
}

/// Carries over what an earlier run (or the hook) stored and this one cannot know: the
/// outcome (the hook records how the session ended) and extra keys; then records the source
/// size this metadata describes.
pub(super) fn finish(
    mut m: SessionMeta,
    stored: Option<&SessionMeta>,
    source_bytes: u64,
) -> SessionMeta {
    if let Some(old) = stored {
        if m.outcome.is_none() {
            m.outcome.clone_from(&old.outcome);
        }
        for (k, v) in &old.extra {
            m.extra.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    m.extra.insert(SOURCE_BYTES.into(), source_bytes.into());
    m
}
