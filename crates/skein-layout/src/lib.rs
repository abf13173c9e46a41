//! The one place that knows where Claude Code keeps transcripts and where the skein archive
//! keeps them, both ways. Everything else asks it; nothing else parses a file name.
//!
//! * [`env`]: the environment as a value ([`Env`]: home, `CLAUDE_CONFIG_DIR`, XDG
//!   directories), built once by the binary; the default roots, skein's state and config paths.
//! * [`claude`]: Claude Code's projects tree (format.md §1, §10): transcript stems and ids,
//!   subagent directories, legacy sibling agent files, internal agents, `agent-*.meta.json`
//!   sidecars, the project of a path, the first timestamp of a file.
//! * [`source`]: a [`Source`] is one transcript file with its identity
//!   (`(session_id, agent_id?)`), project and role, live or archived; an archive file's
//!   identity comes from what the archive recorded ([`Source::archived`]), never from its name.
//! * [`discover`](mod@discover): [`sources`] under paths (trees, archives, files),
//!   [`discover`] grouping them into [`SessionFiles`], [`session_of`] a single file.
//! * [`archive`]: the other way, a live source's archive key and recorded origin, and where an
//!   archived source goes back in a projects tree (restore).
//! * [`open`](mod@open): opening any source, archive files included.
//! * [`rebase`]: sessions found under absolute roots, named under the roots as given (the
//!   catalog's sessions for a report given relative paths).
//! * [`teams`]: the agent-team configs under a Claude config directory.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "skein-layout owns walking Claude Code's trees and the archive's: listing \
              directories, reading sidecars and first timestamps"
)]

pub mod archive;
pub mod claude;
pub mod discover;
pub mod env;
pub mod open;
pub mod rebase;
pub mod source;
pub mod teams;

pub use claude::{AgentMeta, is_internal_agent};
pub use discover::{
    AgentFile, Discovery, Listing, SessionFiles, discover, discover_with, group, session_of,
    sources, sources_known,
};
pub use env::Env;
pub use open::open;
pub use rebase::{GivenRoot, rebase_sessions};
pub use source::{AgentInfo, Identity, Role, Source};
pub use teams::{TeamConfig, TeamError, TeamMember, read_team_configs};
