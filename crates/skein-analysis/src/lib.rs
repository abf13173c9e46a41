//! What skein computes over one transcript: tool pairing ([`tools`]), deduplicated token usage
//! ([`usage`]), and the per-file statistics of `skein stats` ([`stats`]), all fed record by
//! record from the reader ([`collect`]); which `Task`/`Agent` call spawned which subagent
//! ([`links`]); the session's task list ([`tasks`]), fed records or lines by whoever has them
//! (`skein show`, the hook). No I/O here: the caller supplies a line source.

pub mod collect;
pub mod links;
pub mod stats;
pub mod tasks;
pub mod tools;
pub mod usage;

pub use collect::{
    Analysis, AnalysisOptions, NoVisitor, NodeToolTable, RecordVisitor, Reuse, analyze,
    analyze_visit, analyze_with, file_stats,
};
pub use links::{Spawn, SpawnLinks};
pub use stats::{ChainStats, FileStats, InvalidSample, SeamStats};
pub use tasks::{TaskItem, TaskList, TaskSource, TaskTracker};
pub use tools::{ToolInput, ToolPairing, ToolResult, ToolStats, ToolUse};
pub use usage::{UsageAccumulator, UsageTotals};
