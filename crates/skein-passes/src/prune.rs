//! `prune`: drop what users do not want to keep. Rules (each on or off, from a preset, the
//! config or flags):
//!
//! * record types: `progress`, `file-history-snapshot`, `queue-operation` (steering text
//!   removed from the queue is kept);
//! * content: `thinking` blocks (whole blocks only, so kept signatures stay valid), inline
//!   image and document data (a text placeholder names the media type and size), tool
//!   results longer than N bytes (truncated, with a marker stating the original size), and
//!   the `toolUseResult` copy of tool output (`dedupe`, `slim` or `drop`);
//! * structure: abandoned branches (`off_branch`) and everything before the last
//!   compaction (`before_last_compaction`).
//!
//! Removed chain records hand their children to their nearest kept ancestor (only
//! `parentUuid` changes), tool calls and results are kept or dropped together, the active leaf
//! is never removed, and every untouched line is written back byte for byte.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use skein_core::record::RecordType;
use skein_graph::NodeId;

use crate::content::{self, ContentStats, Outcome};
use crate::edit::{self, LinePlan, NewContent};
use crate::source::{Counting, Source};
use crate::structure::{self, NodeSet};
use crate::transcript::{LineClass, Record, Totals, Transcript};

/// A named set of rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// No rule: a starting point for explicit rules.
    None,
    /// Bookkeeping only: progress, file-history snapshots, queue operations, and the
    /// duplicate copy of tool output in `toolUseResult`. No conversation content is lost.
    #[default]
    Safe,
    /// `safe` plus thinking blocks, image and document data, tool results over 4 KiB, the
    /// whole `toolUseResult` field, and abandoned branches. All user and assistant text of
    /// the conversation history is kept.
    Lean,
}

/// What happens to `toolUseResult` (Claude Code's structured copy of a tool's output, which
/// the model never sees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolUseResultMode {
    #[default]
    Keep,
    /// Strings that repeat the record's `tool_result` text (64 bytes or more) are replaced by
    /// a short marker.
    Dedupe,
    /// `dedupe`, then every string over 1 KiB is replaced by a note of its size; small fields
    /// (paths, ids, counts, flags, `agentId`) stay.
    Slim,
    /// The field is removed.
    Drop,
}

/// Tool results longer than this are truncated by the `lean` preset.
pub const LEAN_MAX_TOOL_RESULT_BYTES: u64 = 4 * 1024;

/// The effective prune rules. Deserialises from a config section (`[prune]`) that names a
/// preset and overrides single rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "PruneConfig")]
pub struct PruneOptions {
    /// Drop `progress` records.
    pub progress: bool,
    /// Drop `file-history-snapshot` records.
    pub file_history_snapshots: bool,
    /// Drop `queue-operation` records, except `remove` operations that carry text.
    pub queue_operations: bool,
    /// Drop `thinking` and `redacted_thinking` blocks.
    pub thinking: bool,
    /// Replace base64 image and document data by a placeholder.
    pub images: bool,
    /// Truncate tool results longer than this many bytes of text.
    pub max_tool_result_bytes: Option<u64>,
    pub tool_use_result: ToolUseResultMode,
    /// Drop abandoned branches (rewinds, edits, retries, compaction replays).
    pub off_branch: bool,
    /// Drop every chain record before the active branch's last compaction.
    pub before_last_compaction: bool,
}

impl Default for PruneOptions {
    fn default() -> Self {
        Self::preset(Preset::default())
    }
}

impl PruneOptions {
    /// No rule at all.
    pub fn none() -> Self {
        Self {
            progress: false,
            file_history_snapshots: false,
            queue_operations: false,
            thinking: false,
            images: false,
            max_tool_result_bytes: None,
            tool_use_result: ToolUseResultMode::Keep,
            off_branch: false,
            before_last_compaction: false,
        }
    }

    /// The rules of a preset.
    pub fn preset(p: Preset) -> Self {
        let none = Self::none();
        let safe = Self {
            progress: true,
            file_history_snapshots: true,
            queue_operations: true,
            tool_use_result: ToolUseResultMode::Dedupe,
            ..none.clone()
        };
        match p {
            Preset::None => none,
            Preset::Safe => safe,
            Preset::Lean => Self {
                thinking: true,
                images: true,
                max_tool_result_bytes: Some(LEAN_MAX_TOOL_RESULT_BYTES),
                tool_use_result: ToolUseResultMode::Drop,
                off_branch: true,
                ..safe
            },
        }
    }

    /// True when no rule is on.
    pub fn is_noop(&self) -> bool {
        *self == Self::none()
    }
}

/// A config section or a set of flags: a preset plus single-rule overrides. Later layers
/// override earlier ones with [`PruneConfig::merge`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PruneConfig {
    pub preset: Option<Preset>,
    pub progress: Option<bool>,
    pub file_history_snapshots: Option<bool>,
    pub queue_operations: Option<bool>,
    pub thinking: Option<bool>,
    pub images: Option<bool>,
    /// `0` switches truncation off.
    pub max_tool_result_bytes: Option<u64>,
    pub tool_use_result: Option<ToolUseResultMode>,
    pub off_branch: Option<bool>,
    pub before_last_compaction: Option<bool>,
}

impl PruneConfig {
    /// `self` with every field `over` sets replaced.
    #[must_use]
    pub fn merge(self, over: &PruneConfig) -> PruneConfig {
        PruneConfig {
            preset: over.preset.or(self.preset),
            progress: over.progress.or(self.progress),
            file_history_snapshots: over.file_history_snapshots.or(self.file_history_snapshots),
            queue_operations: over.queue_operations.or(self.queue_operations),
            thinking: over.thinking.or(self.thinking),
            images: over.images.or(self.images),
            max_tool_result_bytes: over.max_tool_result_bytes.or(self.max_tool_result_bytes),
            tool_use_result: over.tool_use_result.or(self.tool_use_result),
            off_branch: over.off_branch.or(self.off_branch),
            before_last_compaction: over.before_last_compaction.or(self.before_last_compaction),
        }
    }

    /// The effective options: the preset (default `safe`) with the overrides applied.
    pub fn resolve(&self) -> PruneOptions {
        let mut o = PruneOptions::preset(self.preset.unwrap_or_default());
        let set = |slot: &mut bool, v: Option<bool>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut o.progress, self.progress);
        set(&mut o.file_history_snapshots, self.file_history_snapshots);
        set(&mut o.queue_operations, self.queue_operations);
        set(&mut o.thinking, self.thinking);
        set(&mut o.images, self.images);
        set(&mut o.off_branch, self.off_branch);
        set(&mut o.before_last_compaction, self.before_last_compaction);
        if let Some(n) = self.max_tool_result_bytes {
            o.max_tool_result_bytes = (n > 0).then_some(n);
        }
        if let Some(m) = self.tool_use_result {
            o.tool_use_result = m;
        }
        o
    }
}

impl From<PruneConfig> for PruneOptions {
    fn from(c: PruneConfig) -> Self {
        c.resolve()
    }
}

/// What one rule removed: records (lines removed, or lines changed for content rules),
/// blocks (content blocks or fields changed) and bytes saved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RuleStats {
    pub records: u64,
    pub blocks: u64,
    pub bytes: u64,
}

impl RuleStats {
    fn add(&mut self, o: &RuleStats) {
        self.records += o.records;
        self.blocks += o.blocks;
        self.bytes += o.bytes;
    }
}

/// Per-rule effect. For removal rules `bytes` are the removed lines' bytes; for content rules
/// they are the serialised size of what was removed minus its placeholder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PruneRules {
    pub progress: RuleStats,
    pub file_history_snapshots: RuleStats,
    pub queue_operations: RuleStats,
    pub thinking: RuleStats,
    pub images: RuleStats,
    pub tool_results: RuleStats,
    pub tool_use_result: RuleStats,
    pub off_branch: RuleStats,
    pub before_last_compaction: RuleStats,
}

/// The report of one prune run (serialised as one JSON object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    pub options: PruneOptions,
    pub input: Totals,
    pub output: Totals,
    pub rules: PruneRules,
    /// Kept records whose `parentUuid` now names their nearest kept ancestor (or `null`).
    pub reparented: u64,
    /// Records a structural rule would have removed, kept because they hold one half of a
    /// tool call whose other half stays.
    pub kept_for_tool_pairs: u64,
    /// Lines written with new bytes (content rules or re-parenting).
    pub rewritten_lines: u64,
    /// Lines that are not JSON, passed through as they were.
    pub invalid_lines: u64,
    /// Lines that needed a change but could not be re-serialised (passed through).
    pub unrewritable_lines: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Progress,
    FileHistory,
    QueueOperation,
    Thinking,
    OffBranch,
    BeforeCompaction,
}

/// The last compaction boundary on the active branch (as it is once `removed` is gone).
fn last_compaction(t: &Transcript, removed: &NodeSet) -> Option<NodeId> {
    let dag = t.dag();
    let leaf = structure::main_leaf(t, removed)?;
    dag.path_to_root(leaf)
        .into_iter()
        .find(|&n| dag.is_compact_boundary(n))
}

/// The records of a boundary's `compactMetadata.preservedSegment` (head to tail), which
/// Claude Code re-links under the summary when it loads the file (the boundary's line is
/// read again from `src`).
fn preserved_segment(t: &Transcript, src: &dyn Source, boundary: NodeId) -> io::Result<NodeSet> {
    let mut set = vec![false; t.dag().len()];
    let text = t.read_text(src, t.node_line(boundary))?;
    let Some(v) = edit::parse_value(&text) else {
        return Ok(set);
    };
    let seg = &v["compactMetadata"]["preservedSegment"];
    let (Some(head), Some(tail)) = (seg["headUuid"].as_str(), seg["tailUuid"].as_str()) else {
        return Ok(set);
    };
    let (Some(head), Some(tail)) = (t.dag().find(head), t.dag().find(tail)) else {
        return Ok(set);
    };
    let mut cur = Some(tail);
    while let Some(n) = cur {
        if set[n.0 as usize] {
            break;
        }
        set[n.0 as usize] = true;
        if n == head {
            break;
        }
        cur = t.dag().parent_node(n);
    }
    Ok(set)
}

/// An assistant record whose content is only thinking blocks.
fn only_thinking(rec: &Record) -> bool {
    rec.kind == RecordType::Assistant && rec.thinking_blocks > 0 && rec.other_blocks == 0
}

/// The nodes all of whose lines `reason` removes.
fn removed_nodes(t: &Transcript, reason: &[Option<Reason>]) -> NodeSet {
    t.dag()
        .nodes()
        .map(|n| t.node_lines(n).all(|l| reason[l].is_some()))
        .collect()
}

/// Gives every line of the nodes in `set` the reason `why` (unless it has one).
fn mark_nodes(t: &Transcript, set: &NodeSet, why: Reason, reason: &mut [Option<Reason>]) {
    for node in t.dag().nodes().filter(|n| set[n.0 as usize]) {
        for l in t.node_lines(node) {
            reason[l].get_or_insert(why);
        }
    }
}

/// Prunes a transcript held in memory.
pub fn prune(input: &[u8], options: &PruneOptions) -> (Vec<u8>, PruneReport) {
    let t = Transcript::parse(input);
    let mut out = Vec::with_capacity(input.len() / 2);
    let report = prune_transcript(&t, &input, options, &mut out).expect("memory I/O does not fail");
    (out, report)
}

/// Prunes the transcript `src` holds, writing the result to `out`: `src` is read twice (to
/// index it, then to copy the lines that stay), never held in memory.
pub fn prune_source(
    src: &dyn Source,
    options: &PruneOptions,
    out: &mut dyn Write,
) -> io::Result<PruneReport> {
    prune_transcript(&Transcript::scan(src)?, src, options, out)
}

/// Which lines the content rules of `o` may change, from the record facts: those that need
/// parsing, and those that only lose `toolUseResult` (cut at the byte level).
fn content_lines(t: &Transcript, o: &PruneOptions, plan: &mut LinePlan) {
    for i in 0..t.len() {
        if plan.removed[i] {
            continue;
        }
        let Some(rec) = t.record(i) else { continue };
        plan.content[i] = (o.thinking && rec.thinking_blocks > 0)
            || (o.images && rec.has_base64())
            || o.max_tool_result_bytes
                .is_some_and(|limit| rec.max_result_bytes > limit)
            || (o.tool_use_result != ToolUseResultMode::Keep && rec.has_tool_use_result());
    }
}

/// The content rules on one line (`text`), adding what they did to `rules`.
fn rewrite_content(
    text: &[u8],
    rec: &Record,
    o: &PruneOptions,
    rules: &mut PruneRules,
) -> Option<NewContent> {
    let parse = (o.thinking && rec.thinking_blocks > 0)
        || (o.images && rec.has_base64())
        || o.max_tool_result_bytes
            .is_some_and(|limit| rec.max_result_bytes > limit)
        || (matches!(
            o.tool_use_result,
            ToolUseResultMode::Dedupe | ToolUseResultMode::Slim
        ) && rec.has_tool_use_result());
    if !parse {
        // Dropping `toolUseResult` alone: cut its bytes out, the rest of the line as is.
        if let Some(cut) = edit::remove_member(text, "toolUseResult") {
            rules.tool_use_result.add(&RuleStats {
                records: 1,
                blocks: 1,
                bytes: (text.len() - cut.len()) as u64,
            });
            return Some(NewContent::Text(cut));
        }
    }
    let mut v = edit::parse_value(text)?;
    let mut st = ContentStats::default();
    match content::transform(&mut v, o, &mut st) {
        Outcome::Changed => {
            rules.thinking.add(&st.thinking);
            rules.images.add(&st.images);
            rules.tool_results.add(&st.tool_results);
            rules.tool_use_result.add(&st.tool_use_result);
            Some(NewContent::Value(v))
        }
        // A record the facts did not show as thinking-only (the decision to remove records
        // is taken before writing): left as it is.
        Outcome::Unchanged | Outcome::OnlyThinking => None,
    }
}

/// Prunes an indexed transcript, reading its lines again from `src` (the input it was
/// indexed from) and writing the result to `out`.
pub fn prune_transcript(
    t: &Transcript,
    src: &dyn Source,
    o: &PruneOptions,
    out: &mut dyn Write,
) -> io::Result<PruneReport> {
    let n = t.len();
    let mut reason: Vec<Option<Reason>> = vec![None; n];
    for (i, r) in reason.iter_mut().enumerate() {
        let Some(rec) = t.record(i) else { continue };
        *r = match rec.kind {
            RecordType::Progress if o.progress => Some(Reason::Progress),
            RecordType::FileHistorySnapshot if o.file_history_snapshots => {
                Some(Reason::FileHistory)
            }
            RecordType::QueueOperation if o.queue_operations && !rec.steering() => {
                Some(Reason::QueueOperation)
            }
            _ => None,
        };
    }
    if o.before_last_compaction
        && let Some(b) = last_compaction(t, &removed_nodes(t, &reason))
    {
        let below = structure::descendants(t, b);
        let preserved = preserved_segment(t, src, b)?;
        let b_line = t.dag().line(b);
        let before: NodeSet = t
            .dag()
            .nodes()
            .map(|m| {
                let i = m.0 as usize;
                !below[i] && !preserved[i] && t.dag().line(m) < b_line
            })
            .collect();
        mark_nodes(t, &before, Reason::BeforeCompaction, &mut reason);
    }
    // The leaves as they will be in the output: records removed by the rules above may be the
    // terminals that made a branch active (a trailing `progress` record, say).
    let removed = removed_nodes(t, &reason);
    let leaves = structure::leaves(t, &removed);
    if o.off_branch {
        // Thinking-only records this run removes (the leaves are always kept).
        let leaving: NodeSet = t
            .dag()
            .nodes()
            .map(|n| o.thinking && !leaves.contains(&n) && only_thinking(t.node_record(n)))
            .collect();
        let keep = structure::main_line(t, true, Some(&leaving), &removed);
        let gone = structure::abandoned(t, &keep);
        mark_nodes(t, &gone, Reason::OffBranch, &mut reason);
    }
    let mut plan = LinePlan::new(n);
    for (i, r) in reason.iter().enumerate() {
        plan.removed[i] = r.is_some();
    }
    let kept_for_tool_pairs = structure::restore_tool_pairs(t, &mut plan, &|l| {
        matches!(
            reason[l],
            Some(Reason::OffBranch | Reason::BeforeCompaction)
        )
    });
    for (i, r) in reason.iter_mut().enumerate() {
        if !plan.removed[i] {
            *r = None;
        }
    }

    let mut rules = PruneRules::default();
    let mut invalid_lines = 0;
    for (i, e) in t.entries().iter().enumerate() {
        if matches!(e.class, LineClass::Invalid | LineClass::TornTail) {
            invalid_lines += 1;
        }
        if plan.removed[i] {
            continue;
        }
        let Some(rec) = t.record(i) else { continue };
        let is_leaf = t.node(i).is_some_and(|n| leaves.contains(&n));
        if o.thinking && only_thinking(rec) && !is_leaf {
            reason[i] = Some(Reason::Thinking);
            plan.removed[i] = true;
            rules.thinking.blocks += u64::from(rec.thinking_blocks);
        }
    }
    for (i, r) in reason.iter().enumerate() {
        let Some(r) = r else { continue };
        let slot = match r {
            Reason::Progress => &mut rules.progress,
            Reason::FileHistory => &mut rules.file_history_snapshots,
            Reason::QueueOperation => &mut rules.queue_operations,
            Reason::Thinking => &mut rules.thinking,
            Reason::OffBranch => &mut rules.off_branch,
            Reason::BeforeCompaction => &mut rules.before_last_compaction,
        };
        slot.records += 1;
        slot.bytes += t.line_len(i);
    }
    content_lines(t, o, &mut plan);
    // A thinking-only leaf stays as it is.
    for i in 0..n {
        if plan.content[i] && t.record(i).is_some_and(|r| o.thinking && only_thinking(r)) {
            plan.content[i] = false;
        }
    }

    let reparented = structure::reparent(t, &mut plan);
    let mut counted = Counting::new(out, t.has_bom());
    let ws = edit::write(t, src, &plan, &mut counted, &mut |i, text| {
        let rec = t.record(i).expect("content lines are records");
        rewrite_content(text, rec, o, &mut rules)
    })?;
    let output = counted.totals();
    Ok(PruneReport {
        options: o.clone(),
        input: t.totals(),
        output,
        rules,
        reparented,
        kept_for_tool_pairs,
        rewritten_lines: ws.rewritten,
        invalid_lines,
        unrewritable_lines: ws.unrewritable,
    })
}
