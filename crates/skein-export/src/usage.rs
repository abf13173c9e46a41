//! The `usage/` table: the requests `skein usage` counts (its scanner and its deduplication
//! across the whole input, `skein_reports::usage`), each priced with its price table.

use skein_layout::SessionFiles;
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{KeptRequests, RequestRef, ScanStats, UsageBuilder, UsageScanner};

use crate::error::Error;
use crate::rows::UsageRow;

/// The deduplicated requests of a whole input.
#[derive(Debug)]
pub struct UsageRows {
    /// (index of the session in the input, request), by session, each session's in the
    /// deduplication's order ([`KeptRequests::iter`]); [`row`] makes each a row. Held
    /// compactly (about 150 bytes a request), so the export's memory does not follow the
    /// input's size the way whole copies would.
    pub requests: KeptRequests,
    /// Per session (by index), the cost of its own requests per agent id (`None`: the main
    /// transcript), deduplicated within the session as `skein sessions` and `skein usage
    /// session` count them (so a request copied into a resumed session costs in both
    /// sessions; `rows` count it once).
    pub cost: Vec<Vec<(Option<String>, f64)>>,
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
    let mut cost = Vec::with_capacity(sessions.len());
    for s in sessions {
        let scan = scanner.scan_session(s, mmap)?;
        let mut own = UsageBuilder::new();
        own.add(s, scan.clone());
        let mut by_agent: Vec<(Option<String>, f64)> = Vec::new();
        for (_, copy) in own.into_kept().0.iter() {
            let agent = copy.agent_id;
            let c = price(pricing, &copy);
            match by_agent.iter_mut().find(|(a, _)| a.as_deref() == agent) {
                Some((_, sum)) => *sum += c,
                None => by_agent.push((agent.map(str::to_owned), c)),
            }
        }
        cost.push(by_agent);
        builder.add(s, scan);
    }
    let (requests, stats) = builder.into_kept();
    let out = UsageRows {
        requests,
        cost,
        stats,
    };
    Ok(out)
}

/// The price of `copy` in `pricing` (0 when its model is not priced).
fn price(pricing: &PricingTable, copy: &RequestRef<'_>) -> f64 {
    copy.model
        .and_then(|m| pricing.lookup(m))
        .map_or(0.0, |(price, fast)| price.cost(&copy.tokens, fast))
}

/// The `usage/` row of `copy`, a request of `session`.
pub fn row(session: &SessionFiles, copy: &RequestRef<'_>, pricing: &PricingTable) -> UsageRow {
    let t = copy.tokens;
    UsageRow {
        session_id: session.session_id.clone(),
        agent_id: copy.agent_id.map(str::to_owned),
        message_id: copy.message_id.map(str::to_owned),
        request_id: copy.request_id.map(str::to_owned),
        model: copy.model.map(str::to_owned),
        timestamp: copy.timestamp_ms,
        input_tokens: crate::rows::int(t.input),
        output_tokens: crate::rows::int(t.output),
        cache_creation_input_tokens: crate::rows::int(t.cache_creation),
        cache_read_input_tokens: crate::rows::int(t.cache_read),
        cost_usd: price(pricing, copy),
    }
}
