//! The `skein usage` report: token usage and cost, deduplicated across the whole input, per
//! day, ISO week, month, session or model.
//!
//! # What is counted
//!
//! Only lines that contain `"usage"` are parsed (a byte search skips the rest). A line counts
//! when it is an `assistant` record with an object `message.usage`, or a `progress` record
//! whose `data.message` is such an assistant record (the `agent_progress` copies of subagent
//! messages that Claude Code 2.1.x wrote into the parent transcript). Lines whose model is
//! `<synthetic>` and lines without a parseable `timestamp` are skipped.
//!
//! Cache creation tokens are `cache_creation.ephemeral_5m_input_tokens +
//! ephemeral_1h_input_tokens` when that breakdown is present, else
//! `cache_creation_input_tokens` (all priced as 5-minute writes).
//!
//! # Deduplication
//!
//! 1. In each file, lines are grouped by (`message.id`, `requestId` or empty, sidechain); a
//!    line without `message.id` is its own group. Each counter of a group is the maximum over
//!    its lines (streaming placeholders carry partial `output_tokens`). Such a per-file group
//!    is a *copy*.
//! 2. Across the whole input, copies with the same (`message.id`, `requestId`) are one
//!    request: the copy kept is the non-sidechain one, then the one with the largest token
//!    total, then the one whose record `sessionId` is its session's id, then the first seen
//!    (sessions in discovery order, main transcript before agent files).
//! 3. A *sidechain* copy is one from an agent file (internal agents included), from a
//!    `progress` record, or with `isSidechain: true`. Sidechain copies replay parent messages
//!    under a new `requestId`, so for each `message.id`: when some request has a
//!    non-sidechain copy, requests known only from sidechain copies are dropped; when all are
//!    sidechain-only, they collapse into one (chosen as in 2).
//!
//! Each request kept is attributed to the session, day and model of its kept copy; its cost
//!
//! Files: `scan` (one session's files → per-file
//! copies), `lines` (the lines that mention `"usage"`, found line by line or by one search
//! over a stream), `store` (the kept copies, compactly: ~200 bytes a request),
//! `groups` (pricing, and requests the catalog pre-summed), `build` (copies of all sessions →
//! deduplicated requests → rows), `rows` (the
//! serialized rows and their accumulator), `blocks` (billing blocks of priced requests) and
//! `blocks_report` (`skein usage blocks`).

pub mod blocks;
mod blocks_report;
mod build;
mod groups;
mod lines;
mod raw;
mod rows;
mod scan;
mod store;

pub use blocks_report::{
    BlockOptions, BlockRow, BlocksReport, LimitFigures, LimitStatus, PricedRequests, TokenLimit,
    blocks_report,
};
pub use build::{KeptRequests, NO_MODEL, ScanStats, UsageBuilder, UsageKind, UsageOptions};
pub use groups::{GROUP_LONG_THRESHOLD, Pricer, RequestGroup, groups_fit, groups_fit_with};
pub use rows::{Figures, ModelUsage, SourceTokens, TotalsRow, UsageReport, UsageRow, round_usd};
pub use scan::{
    RequestCopy, SKIPPED_KEPT, ScanJob, SessionScan, SkippedLine, Source, USAGE_MARK, UsageScanner,
};
pub use store::RequestRef;

/// Token counts of one request or a sum of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// All cache writes (`cache_creation_5m + cache_creation_1h`).
    pub cache_creation: u64,
    pub cache_creation_5m: u64,
    pub cache_creation_1h: u64,
    pub cache_read: u64,
}

impl Tokens {
    /// input + output + cache creation + cache read. Sums saturate: a transcript can hold any
    /// count (a float like 1e30 reads as `u64::MAX`), and a report must not wrap or panic.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_creation)
            .saturating_add(self.cache_read)
    }

    /// Each counter the maximum of both (streaming lines of one request repeat its usage).
    pub fn max_with(&mut self, o: &Self) {
        self.input = self.input.max(o.input);
        self.output = self.output.max(o.output);
        self.cache_creation_5m = self.cache_creation_5m.max(o.cache_creation_5m);
        self.cache_creation_1h = self.cache_creation_1h.max(o.cache_creation_1h);
        self.cache_creation = self.cache_creation.max(o.cache_creation);
        self.cache_read = self.cache_read.max(o.cache_read);
    }

    fn add(&mut self, o: &Self) {
        for (a, b) in [
            (&mut self.input, o.input),
            (&mut self.output, o.output),
            (&mut self.cache_creation, o.cache_creation),
            (&mut self.cache_creation_5m, o.cache_creation_5m),
            (&mut self.cache_creation_1h, o.cache_creation_1h),
            (&mut self.cache_read, o.cache_read),
        ] {
            *a = a.saturating_add(b);
        }
    }
}
