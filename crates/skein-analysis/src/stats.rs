//! The per-file statistics object of `skein stats` (documented in `docs/stats.md`; jq scripts
//! rely on these keys).

use std::collections::BTreeMap;

use serde::Serialize;
use skein_core::TornTail;

use crate::tools::ToolStats;
use crate::usage::UsageTotals;

/// Graph counts plus the active branch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChainStats {
    pub nodes: u64,
    pub duplicate_uuids: u64,
    pub roots: u64,
    pub dangling: u64,
    pub branch_points: u64,
    pub leaves: u64,
    pub compactions: u64,
    pub sidechain: u64,
    pub cycles: u64,
    pub active_leaf: Option<String>,
    pub active_path_len: u64,
    /// Nodes of the whole history from the active leaf ([`skein_graph::Dag::history`]: across
    /// compactions and broken chains).
    pub bridged_path_len: u64,
    /// Where that walk bridged a broken chain, earliest first.
    pub seams: Vec<SeamStats>,
}

/// One seam of the whole-history walk, as `skein stats` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeamStats {
    /// The record without a usable parent (the first after the seam).
    pub uuid: String,
    pub line: u64,
    /// `dangling_parent`, `missing_logical_parent` or `new_root`.
    pub kind: &'static str,
    /// The record the walk continued from.
    pub continues: String,
}

/// One invalid line, for the report (at most [`crate::collect::MAX_INVALID_SAMPLES`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvalidSample {
    pub line: u64,
    pub offset: u64,
    pub bytes: u64,
    pub error: String,
}

/// Statistics of one transcript file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileStats {
    pub path: String,
    pub session_id: Option<String>,
    /// Bytes read (after decompression).
    pub bytes: u64,
    /// Non-blank lines.
    pub lines: u64,
    /// Non-blank lines that are not one JSON object, the torn tail included.
    pub invalid_lines: u64,
    pub torn_tail: Option<TornTail>,
    /// Valid lines that needed invalid-UTF-8 or lone-surrogate replacement.
    pub repaired_lines: u64,
    pub records: BTreeMap<String, u64>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    pub chain: ChainStats,
    pub tools: ToolStats,
    pub usage: UsageTotals,
    /// The first invalid lines (torn tail excluded), with line number and byte offset.
    pub invalid: Vec<InvalidSample>,
}
