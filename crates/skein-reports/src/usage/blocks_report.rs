//! `skein usage blocks`: the deduplicated requests in billing blocks (see [`super::blocks`]),
//! one row per block (and per gap with `gaps`), the active block's burn rate, projection and
//! token-limit status, then the totals row every usage report ends with.

use serde::Serialize;
use skein_core::time::{DateRange, Zone, format_ms};

use super::blocks::{ActiveFigures, Block, PricedRequest, blocks, sort_by_time};
use super::build::{NO_MODEL, UsageBuilder};
use super::groups::Pricer;
use super::rows::{Acc, ModelUsage, SourceTokens, TotalsRow};
use crate::pricing::PricingTable;

/// The share of the limit above which a projection is a warning (as ccusage).
const WARNING_SHARE: f64 = 0.8;

/// Options of the blocks report.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockOptions {
    /// The block length (5 hours by default).
    pub length_ms: i64,
    /// The instant taken as now (which block is active, time left, projection, which blocks
    /// are past). Requests after it still count.
    pub now_ms: i64,
    /// Local days (in `zone`) on which a kept block starts.
    pub range: DateRange,
    pub zone: Zone,
    /// Include the gaps between blocks as rows.
    pub gaps: bool,
    /// Only the active block.
    pub active_only: bool,
    /// The token limit the active block's projection is held to.
    pub token_limit: Option<TokenLimit>,
}

/// `--token-limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenLimit {
    Tokens(u64),
    /// The largest total of a past block (one that ended by now).
    Max,
}

/// How the active block's projection stands against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitStatus {
    /// At most 80 % of the limit.
    Ok,
    /// Above 80 %.
    Warning,
    /// Above the limit.
    Exceeds,
}

/// The active block against the token limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LimitFigures {
    pub limit: u64,
    /// Tokens so far, in percent of the limit.
    pub used_percent: f64,
    /// The projection (else the tokens so far), in percent of the limit.
    pub projected_percent: f64,
    pub status: LimitStatus,
}

/// One block or gap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockRow {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
    pub start: String,
    pub end: String,
    /// The last request (`null` for a gap).
    pub last_activity: Option<String>,
    pub active: bool,
    pub gap: bool,
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub total_tokens: u64,
    pub cost_usd: f64,
    /// Models used, sorted.
    pub models: Vec<String>,
    /// Per-model figures, sorted by model.
    pub breakdown: Vec<ModelUsage>,
    /// The active block only: time, burn rate, projection.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub now: Option<ActiveFigures>,
    /// The active block only, with a token limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_limit: Option<LimitFigures>,
    /// Always `false`.
    pub totals: bool,
}

/// The report: rows in time order, then the totals over them.
#[derive(Debug, Clone, PartialEq)]
pub struct BlocksReport {
    pub rows: Vec<BlockRow>,
    pub totals: TotalsRow,
    /// The limit applied (for `Max`: the largest past block; `None` when there is none).
    pub limit: Option<u64>,
}

impl BlocksReport {
    /// The active block's row, if one is shown.
    pub fn active(&self) -> Option<&BlockRow> {
        self.rows.iter().find(|r| r.active)
    }
}

/// The deduplicated requests priced, in time order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PricedRequests {
    pub requests: Vec<PricedRequest>,
    /// Models without a price, sorted.
    pub unpriced: Vec<String>,
    /// The sessions, in the order they were added: (session id, project).
    pub sessions: Vec<(String, String)>,
}

impl UsageBuilder {
    /// The deduplicated requests, priced, in time order (for blocks and status lines).
    pub fn priced(mut self, pricing: &PricingTable) -> (PricedRequests, super::ScanStats) {
        self.settle();
        let mut pricer = Pricer::new(pricing);
        let mut out: Vec<PricedRequest> = self
            .store()
            .kept()
            .map(|(session, copy)| {
                let model: Box<str> = copy.model.unwrap_or(NO_MODEL).into();
                PricedRequest {
                    session,
                    timestamp_ms: copy.timestamp_ms,
                    cost: pricer.cost(&model, &copy.tokens),
                    model,
                    tokens: copy.tokens,
                    source: copy.source,
                }
            })
            .collect();
        sort_by_time(&mut out);
        let priced = PricedRequests {
            requests: out,
            unpriced: pricer.unpriced.into_iter().collect(),
            sessions: self.sessions_taken(),
        };
        (priced, self.stats)
    }

    /// Builds the blocks report.
    pub fn finish_blocks(self, options: &BlockOptions, pricing: &PricingTable) -> BlocksReport {
        let (priced, stats) = self.priced(pricing);
        blocks_report(&priced, stats, options)
    }
}

/// The blocks report over priced requests (in time order).
pub fn blocks_report(
    priced: &PricedRequests,
    stats: super::ScanStats,
    options: &BlockOptions,
) -> BlocksReport {
    let reqs = &priced.requests;
    let all = blocks(reqs, options.length_ms);
    let active = |b: &Block| b.is_active(reqs, options.length_ms, options.now_ms);
    let limit = match options.token_limit {
        None => None,
        Some(TokenLimit::Tokens(n)) => Some(n),
        Some(TokenLimit::Max) => all
            .iter()
            .filter(|b| !b.gap && b.end_ms <= options.now_ms)
            .map(|b| b.sum(reqs).0.total())
            .max(),
    };
    let mut rows = Vec::new();
    let mut totals = Acc::default();
    let mut sources = SourceTokens::default();
    let window = options.range.in_zone(&options.zone);
    for b in &all {
        let is_active = active(b);
        if (b.gap && !options.gaps)
            || (options.active_only && !is_active)
            || !window.contains(b.start_ms)
        {
            continue;
        }
        let mut acc = Acc::default();
        for r in &reqs[b.requests.clone()] {
            acc.add(&r.model, &r.tokens, r.cost, r.timestamp_ms);
            totals.add(&r.model, &r.tokens, r.cost, r.timestamp_ms);
            sources.add(r.source, r.tokens.total());
        }
        let f = acc.figures();
        let now = is_active
            .then(|| ActiveFigures::of(b, reqs, f.total_tokens, f.cost_usd, options.now_ms));
        let token_limit = match (now, limit) {
            (Some(now), Some(limit)) if limit > 0 => {
                let projected = now.projection.map_or(f.total_tokens, |p| p.total_tokens);
                let status = if projected > limit {
                    LimitStatus::Exceeds
                } else if projected as f64 > limit as f64 * WARNING_SHARE {
                    LimitStatus::Warning
                } else {
                    LimitStatus::Ok
                };
                Some(LimitFigures {
                    limit,
                    used_percent: percent(f.total_tokens, limit),
                    projected_percent: percent(projected, limit),
                    status,
                })
            }
            _ => None,
        };
        rows.push(BlockRow {
            start: format_ms(b.start_ms),
            end: format_ms(b.end_ms),
            last_activity: b.activity(reqs).map(|(_, last)| format_ms(last)),
            active: is_active,
            gap: b.gap,
            requests: f.messages,
            input_tokens: f.input_tokens,
            output_tokens: f.output_tokens,
            cache_creation_input_tokens: f.cache_creation_input_tokens,
            cache_read_input_tokens: f.cache_read_input_tokens,
            total_tokens: f.total_tokens,
            cost_usd: f.cost_usd,
            models: f.models,
            breakdown: f.breakdown,
            now,
            token_limit,
            totals: false,
        });
    }
    BlocksReport {
        rows,
        totals: TotalsRow {
            report: "blocks",
            first_timestamp: totals.first_ms.map(format_ms),
            last_timestamp: totals.last_ms.map(format_ms),
            figures: totals.figures(),
            unpriced_models: priced.unpriced.clone(),
            sources,
            scan: stats,
            totals: true,
        },
        limit,
    }
}

/// `n` in percent of `of`, to one decimal.
fn percent(n: u64, of: u64) -> f64 {
    (n as f64 / of as f64 * 1000.0).round() / 10.0
}
