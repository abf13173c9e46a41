//! Sessions, not files. A session is its main transcript plus its subagent transcripts:
//! `<session-id>/subagents/agent-*.jsonl` (with `agent-*.meta.json`), legacy sibling
//! `agent-*.jsonl` files, and inline `isSidechain` records. [`discover`] groups files into
//! sessions; [`SpawnLinks`] finds, while a main transcript is read, which `Task`/`Agent`
//! call spawned which agent; [`teams`] reads the agent-team configs
//! (`<config dir>/teams/<team>/config.json`).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "discovery walks directories until the layout crate (engineer layout, issue 9) takes it over"
)]

pub mod discover;
pub mod links;
pub mod teams;

pub use discover::{AgentFile, AgentMeta, Discovery, SessionFiles, discover, is_internal_agent};
pub use links::{Spawn, SpawnLinks};
pub use teams::{TeamConfig, TeamError, TeamMember, read_team_configs};
