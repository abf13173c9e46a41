//! The `skein tools` report: one row per tool call of a session (main transcript first, then
//! each subagent transcript, every file in file order), totals per tool name, and tool loops
//! (runs of consecutive calls of one tool with identical input).
//!
//! A tool call is a distinct `tool_use` id of a file, exactly what [`skein_analysis::ToolPairing`]
//! pairs: blocks without an id are not calls, and a later copy of an id is the same call. The
//! result is the `tool_result` with the same id in the same file.
//!
//! Files: this one (calls), `summary` (input summaries, `clip`), `totals` (`--by name`,
//! `--by agent`), `loops` (`--loops`).

mod loops;
mod summary;
mod totals;

pub use loops::{ToolLoop, canonical_input, tool_loops};
pub use summary::{clip, input_summary, normalized_input};
pub use totals::{AgentTotals, ToolFigures, ToolTotals, ToolTotalsBuilder, round4};

use serde::Serialize;
use skein_analysis::ToolPairing;
use skein_analysis::tools::Pair;

use crate::session::LoadedSession;
use skein_core::time::MsRange;

/// Longest `input_summary`, in characters (a longer one ends with `…` at this length).
pub const MAX_SUMMARY_CHARS: usize = 120;

/// Tool name used when a `tool_use` has no `name`.
pub const NO_NAME: &str = "<none>";

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ToolCall {
    pub session_id: String,
    /// The project directory's name (e.g. `-home-me-widgets`).
    pub project: String,
    /// The subagent's id; `None` for calls in the main transcript.
    pub agent_id: Option<String>,
    /// The subagent's type (from its `.meta.json`, else from the spawning call's
    /// `subagent_type`); `None` in the main transcript.
    pub agent_type: Option<String>,
    /// The `tool_use` id of the `Task`/`Agent` call that spawned the subagent, when known.
    pub spawned_by: Option<String>,
    /// The transcript file holding the call.
    pub file: String,
    /// 1-based line of the `tool_use` in `file`.
    pub line: u64,
    /// The record had `isSidechain: true` (always true in agent files; inline sidechains in
    /// old main files).
    pub sidechain: bool,
    pub tool: String,
    /// The `tool_use` id.
    pub id: String,
    /// A short one-line summary of the input (see [`input_summary`]).
    pub input_summary: String,
    /// Whether the result was an error; `None` without a result.
    pub is_error: Option<bool>,
    /// UTF-8 bytes of the result's text; `None` without a result.
    pub result_bytes: Option<u64>,
    /// Bytes of base64 image and document data in the result; `None` without a result.
    pub media_bytes: Option<u64>,
    /// Image blocks in the result; `None` without a result.
    pub images: Option<u64>,
    /// Milliseconds from the call's timestamp to its result's; `None` when either is missing.
    pub duration_ms: Option<i64>,
    /// A `tool_result` with this id exists in the file.
    pub paired: bool,
    /// The call's record timestamp.
    pub timestamp: Option<String>,
}

/// One transcript of a session, as the tool report sees it.
#[derive(Debug, Clone, Copy)]
pub struct FileView<'a> {
    pub file: &'a std::path::Path,
    pub agent_id: Option<&'a str>,
    pub agent_type: Option<&'a str>,
    pub spawned_by: Option<&'a str>,
    pub tools: &'a ToolPairing,
}

/// The session's transcripts in report order: the main file, then each agent file.
pub fn session_files<V>(s: &LoadedSession<V>) -> Vec<FileView<'_>> {
    let mut out = Vec::with_capacity(1 + s.agents.len());
    if let (Some(path), Some((analysis, _))) = (&s.files.main, &s.main) {
        out.push(FileView {
            file: path,
            agent_id: None,
            agent_type: None,
            spawned_by: None,
            tools: &analysis.tools,
        });
    }
    for a in &s.agents {
        let spawned_by = a.spawned_by.as_deref();
        let agent_type = a
            .file
            .meta
            .as_ref()
            .and_then(|m| m.agent_type.as_deref())
            .or_else(|| {
                spawned_by
                    .and_then(|id| s.links.spawn(id))
                    .and_then(|sp| sp.subagent_type.as_deref())
            });
        out.push(FileView {
            file: &a.file.path,
            agent_id: Some(&a.file.agent_id),
            agent_type,
            spawned_by,
            tools: &a.analysis.tools,
        });
    }
    out
}

/// Every tool call of the session, main transcript first, each file in file order. Input
/// summaries are empty when the session was read without inputs (`I = IgnoredAny`).
pub fn tool_calls<V>(s: &LoadedSession<V>) -> Vec<ToolCall> {
    let project = s.files.project();
    let mut out = Vec::new();
    for f in session_files(s) {
        let file = f.file.display().to_string();
        for u in f.tools.uses() {
            let result = f.tools.result_for(&u.id);
            let tool = u.name.as_deref().unwrap_or(NO_NAME);
            out.push(ToolCall {
                session_id: s.files.session_id.clone(),
                project: project.clone(),
                agent_id: f.agent_id.map(str::to_owned),
                agent_type: f.agent_type.map(str::to_owned),
                spawned_by: f.spawned_by.map(str::to_owned),
                file: file.clone(),
                line: u.line,
                sidechain: u.sidechain,
                tool: tool.to_owned(),
                id: u.id.clone(),
                input_summary: input_summary(tool, u.input.as_ref()),
                is_error: result.map(|r| r.is_error),
                result_bytes: result.map(|r| r.bytes),
                media_bytes: result.map(|r| r.media_bytes),
                images: result.map(|r| r.images),
                duration_ms: Pair {
                    tool_use: Some(u),
                    result,
                }
                .duration_ms(),
                paired: result.is_some(),
                timestamp: u.timestamp.clone(),
            });
        }
    }
    out
}

/// Which calls (and loops) a report keeps.
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    /// The days or instants of the call's timestamp (a loop's first call), resolved in the
    /// report's zone once ([`skein_core::time::DateRange::in_zone`]).
    pub window: MsRange,
    /// Tool names to keep (exact match); empty keeps all.
    pub tools: Vec<String>,
}

impl ToolFilter {
    /// True when the tool name passes.
    pub fn keeps_tool(&self, tool: &str) -> bool {
        self.tools.is_empty() || self.tools.iter().any(|t| t == tool)
    }

    /// True when the call passes.
    pub fn keeps(&self, call: &ToolCall) -> bool {
        self.keeps_tool(&call.tool) && self.window.contains_timestamp(call.timestamp.as_deref())
    }

    /// True when the loop passes.
    pub fn keeps_loop(&self, l: &ToolLoop) -> bool {
        self.keeps_tool(&l.tool) && self.window.contains_timestamp(l.first_timestamp.as_deref())
    }
}

#[cfg(test)]
mod tests;

/// Every tool call of the session (as [`tool_calls`]) with the key `--by agent` groups it
/// under: `main` in the main transcript, else the agent's key from
/// [`agent_groups`](crate::agents::agent_groups) (its name, `(type)`, or `(internal)`).
pub fn calls_by_agent<V>(
    s: &LoadedSession<V>,
    links_of: impl Fn(&V) -> &crate::tree::LinkVisitor,
    teams: &[skein_layout::TeamConfig],
) -> Vec<(String, ToolCall)> {
    let key = crate::agents::agent_groups(s, links_of, teams);
    tool_calls(s)
        .into_iter()
        .map(|c| {
            let k = c
                .agent_id
                .as_deref()
                .and_then(|a| key.get(a).cloned())
                .unwrap_or_else(|| crate::agents::MAIN.to_owned());
            (k, c)
        })
        .collect()
}
