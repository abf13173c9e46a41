//! Session metadata stored with every archive file (`.meta.json`, the checkpoint and, in part,
//! the index). The caller (the CLI or the hook, which already parses the transcript) fills it;
//! the archive stores it verbatim and adds its own bookkeeping ([`crate::FileState`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a session or subagent run was about. Every field is optional so that partial knowledge
/// (e.g. a hook that only knows the session id) can still be recorded; unknown extra facts go
/// in [`SessionMeta::extra`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionMeta {
    /// The `sessionId` inside the records (may differ from the file name, see format.md §1).
    pub session_id: Option<String>,
    /// The Claude projects directory name (`-home-me-proj`), used by restore.
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub duration_ms: Option<u64>,
    /// API messages (assistant lines collapsed by `message.id`) plus human prompts.
    pub message_count: u64,
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tool_calls: u64,
    /// Calls per tool name.
    pub tool_counts: BTreeMap<String, u64>,
    pub usage: TokenUsage,
    pub models: Vec<String>,
    pub files_modified: Vec<String>,
    pub skills_used: Vec<String>,
    /// Subagents this session spawned.
    pub subagents: Vec<SubagentRef>,
    /// For a subagent: the session that spawned it.
    pub parent_session: Option<String>,
    /// For a subagent: the spawning `tool_use` id.
    pub tool_use_id: Option<String>,
    /// How the session ended (e.g. `completed`, `interrupted`, `error`), as the caller sees it.
    pub outcome: Option<String>,
    /// Where the source sat in its Claude projects tree (absent in archives written before
    /// skein recorded it).
    pub origin: Option<Origin>,
    /// Anything else the caller wants to keep.
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Where an archived transcript came from in Claude Code's projects tree, so that it can be put
/// back exactly there and read as the session it was.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Origin {
    /// The transcript's path inside its project directory, `/`-separated: `<sid>.jsonl`,
    /// `<sid>/subagents/agent-<id>.jsonl`, `agent-<id>.jsonl` (legacy sibling file).
    pub path: String,
    /// The subagent's `agent-<id>.meta.json` sidecar as Claude Code wrote it (redacted when
    /// the transcript is), if it had one.
    pub sidecar: Option<String>,
}

/// Token usage, summed once per API message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

/// A subagent spawned by a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SubagentRef {
    pub agent_id: String,
    pub agent_type: Option<String>,
    /// The `tool_use` id of the spawning Agent/Task call.
    pub tool_use_id: Option<String>,
}
