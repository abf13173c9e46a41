//! The `usage/` table: the requests `skein usage` counts (its scanner and its deduplication
//! across the whole input, `skein_reports::usage`), each priced with its price table.

use rustc_hash::FxHashMap;
use skein_layout::SessionFiles;
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{ScanStats, UsageBuilder, UsageScanner};

use crate::error::Error;
use crate::rows::UsageRow;

/// The deduplicated requests of a whole input.
#[derive(Debug, Default)]
pub struct UsageRows {
    /// (index of the session in the input, row), in the deduplication's order.
    pub rows: Vec<(usize, UsageRow)>,
    /// Cost per (session index, agent id).
    pub cost: FxHashMap<(usize, Option<String>), f64>,
    pub stats: ScanStats,
}

/// Scans every session of the input (always the whole input, also for a shard: a request
/// copied into two sessions must be counted once, in the session the deduplication chooses,
/// whichever shard reads it).
pub fn usage_rows(
    sessions: &[SessionFiles],
    pricing: &PricingTable,
    mmap: bool,
) -> Result<UsageRows, Error> {
    let mut scanner = UsageScanner::new();
    let mut builder = UsageBuilder::new();
    for s in sessions {
        let scan = scanner.scan_session(s, mmap)?;
        builder.add(s, scan);
    }
    let (requests, stats) = builder.into_requests();
    let mut out = UsageRows {
        stats,
        ..UsageRows::default()
    };
    for (i, copy) in requests {
        let cost = copy
            .model
            .as_deref()
            .and_then(|m| pricing.lookup(m))
            .map_or(0.0, |(price, fast)| price.cost(&copy.tokens, fast));
        let agent_id = copy.agent_id.as_deref().map(str::to_owned);
        *out.cost.entry((i, agent_id.clone())).or_default() += cost;
        let t = copy.tokens;
        out.rows.push((
            i,
            UsageRow {
                session_id: sessions[i].session_id.clone(),
                agent_id,
                message_id: copy.message_id.as_deref().map(str::to_owned),
                request_id: copy.request_id.as_deref().map(str::to_owned),
                model: copy.model.as_deref().map(str::to_owned),
                timestamp: copy.timestamp_ms,
                input_tokens: crate::rows::int(t.input),
                output_tokens: crate::rows::int(t.output),
                cache_creation_input_tokens: crate::rows::int(t.cache_creation),
                cache_read_input_tokens: crate::rows::int(t.cache_read),
                cost_usd: cost,
            },
        ));
    }
    Ok(out)
}
