//! What skein computes over one transcript: tool pairing ([`tools`]), deduplicated token usage
//! ([`usage`]), and the per-file statistics of `skein stats` ([`stats`]), all fed record by
//! record from the reader ([`collect`]), and which `Task`/`Agent` call spawned which subagent
//! ([`links`]). No I/O here: the caller supplies a line source.

pub mod collect;
pub mod links;
pub mod stats;
pub mod tools;
pub mod usage;

pub use collect::{
    Analysis, AnalysisOptions, NoVisitor, NodeToolTable, RecordVisitor, analyze, analyze_visit,
    analyze_with,
};
pub use links::{Spawn, SpawnLinks};
pub use stats::{ChainStats, FileStats, InvalidSample};
pub use tools::{ToolInput, ToolPairing, ToolResult, ToolStats, ToolUse};
pub use usage::{UsageAccumulator, UsageTotals};
