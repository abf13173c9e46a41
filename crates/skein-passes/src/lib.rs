//! Batch passes over Claude Code transcripts: each reads a whole transcript and writes a
//! transcript, and passes chain. Every record a pass does not change is written back byte for
//! byte; every line it writes is valid JSON; the uuid graph stays whole (children of removed
//! records are re-parented to their nearest kept ancestor, never left dangling).
//!
//! * [`transcript`]: a transcript indexed: each line's offset and class, the facts the
//!   passes need, and its uuid graph; no text.
//! * [`source`]: what a pass reads ([`Source`], read twice by prune and snapshot: once to
//!   index, once to copy what stays) and where a pipeline keeps what one pass hands the next
//!   ([`Spool`]). Memory follows the number of records, not the size of the file.
//! * [`mod@prune`]: drop bookkeeping records, thinking, media data, long tool output, duplicate
//!   tool output, abandoned branches, history before the last compaction.
//! * [`mod@snapshot`]: the records of one request (from a prompt to the end of the active branch).
//! * [`redact`]: secrets replaced, through `skein-redact`.
//! * [`pipeline`]: passes chained, and the TOML config.
//!
//! No I/O here: the caller opens the input and the output (the `skein` binary uses
//! `skein-store` for files, stdin, `.zst` and atomic replacement) and hands in readers and
//! writers.
//!
//! ```
//! use skein_passes::{Pass, Pipeline, PruneOptions, Preset};
//! let input = concat!(
//!     r#"{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}"#, "\n",
//!     r#"{"type":"progress","uuid":"p1","parentUuid":"u1","data":{"type":"hook_progress"}}"#, "\n",
//!     r#"{"type":"assistant","uuid":"a1","parentUuid":"p1","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}"#, "\n",
//! );
//! let pipeline = Pipeline::new(vec![Pass::Prune(PruneOptions::preset(Preset::Safe))]);
//! let out = pipeline.run(input.as_bytes()).unwrap();
//! let text = String::from_utf8(out.bytes).unwrap();
//! assert!(!text.contains("progress"));
//! assert!(text.contains(r#""uuid":"a1","parentUuid":"u1""#));
//! ```

mod content;
mod edit;
mod facts;
pub mod pipeline;
pub mod prune;
pub mod redact;
pub mod snapshot;
pub mod source;
mod structure;
pub mod transcript;

pub use content::{DEDUPE_MIN_BYTES, DUPLICATE_MARKER, SLIM_MAX_BYTES};
pub use pipeline::{Pass, PassKind, PassReport, PassesConfig, Pipeline, PipelineOutput};
pub use prune::{
    LEAN_MAX_TOOL_RESULT_BYTES, Preset, PruneConfig, PruneOptions, PruneReport, PruneRules,
    RuleStats, ToolUseResultMode, prune, prune_source, prune_transcript,
};
pub use redact::{RedactPass, RedactReport};
pub use skein_redact::{Level as RedactLevel, RedactOptions};
pub use snapshot::{
    SnapshotConfig, SnapshotOptions, SnapshotReport, Spawns, Start, snapshot, snapshot_source,
    snapshot_transcript, spawns,
};
pub use source::{Source, Spool};
pub use transcript::{Record, Totals, Transcript};

/// Why a pass could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("the transcript has no active branch (no user or assistant record)")]
    NoActiveBranch,
    #[error("no user prompt on the active branch")]
    NoPrompt,
    #[error("start record {0} is not on the active branch")]
    StartNotOnBranch(String),
    #[error("no record on the active branch at or after {0}")]
    NothingSince(String),
    #[error("invalid timestamp {0:?} (expected ISO-8601, e.g. 2026-05-01T10:00:00Z)")]
    BadTimestamp(String),
    #[error("snapshot: give at most one of `from` and `since`")]
    StartConflict,
    #[error("redaction rules")]
    Redact(#[from] skein_redact::Error),
    #[error("config: {0}")]
    Config(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
