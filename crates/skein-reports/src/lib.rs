//! Reports over sessions (a main transcript plus its subagents). [`session`] loads a session
//! in one pass per file with a report's own record visitor; days, zones and timestamps come
//! from `skein_core::time`. Each report is one module and returns plain serializable
//! rows; the binary chooses the output format. [`agents`] says who each subagent is (name,
//! type, team, worktree) and what agents sent each other, for every report that shows agents.

pub mod agents;
pub mod check;
pub mod pricing;
pub mod session;
pub mod show;
pub mod skills;
pub mod statusline;
pub mod tools;
pub mod tree;
pub mod usage;

pub use session::{
    AgentRun, LineMap, LoadedSession, load_session, load_session_mapped, load_session_with,
};
