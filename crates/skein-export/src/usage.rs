//! The `usage/` table: the requests `skein usage` counts (its scanner and its deduplication
//! across the whole input, `skein_reports::usage`), each priced with its price table.

use skein_layout::SessionFiles;
use skein_reports::pricing::PricingTable;
use skein_reports::usage::{
    KeptRequests, NO_MODEL, Pricer, RequestCopy, RequestRef, ScanStats, SessionScan, UsageBuilder,
    UsageScanner,
};

use crate::error::Error;
use crate::rows::UsageRow;

/// Transcript bytes per deduplication pass. The deduplication keeps one slot per distinct
/// request of the whole input (about 175 bytes, roughly one request per 16 KB of transcript);
/// past this size the input is deduplicated in several passes, each over a disjoint share of
/// the message ids, so its memory stays under about 50 MB however large the input.
pub const PASS_BYTES: u64 = 4 << 30;

/// How many passes an input of `bytes` transcript bytes takes (at least one).
pub fn passes_for(bytes: u64) -> u32 {
    u32::try_from(bytes.div_ceil(PASS_BYTES))
        .unwrap_or(u32::MAX)
        .max(1)
}

/// The pass of `copy` out of `passes`: every copy of a message id in the same pass (the
/// deduplication's rules compare copies of one message id), copies without one in the first.
fn pass_of(copy: &RequestCopy, passes: u32) -> u32 {
    use std::hash::{Hash, Hasher};
    match copy.message_id.as_deref() {
        Some(mid) if passes > 1 => {
            // FxHasher: stable across runs and machines (no random seed), so the files are too.
            let mut h = rustc_hash::FxHasher::default();
            mid.hash(&mut h);
            (h.finish() % u64::from(passes)) as u32
        }
        _ => 0,
    }
}

/// What the usage scan of a whole input gives besides the rows.
#[derive(Debug)]
pub struct UsageScan {
    /// Per session (by index), the cost of its own requests per agent id (`None`: the main
    /// transcript), deduplicated within the session as `skein sessions` and `skein usage
    /// session` count them (so a request copied into a resumed session costs in both
    /// sessions; the rows count it once).
    pub cost: Vec<Vec<(Option<String>, f64)>>,
    pub stats: ScanStats,
}

/// Scans every session of the input (always the whole input, also for a shard: a request
/// copied into two sessions must be counted once, in the session the deduplication chooses,
/// whichever shard reads it), in `passes` passes (see [`PASS_BYTES`]). `each` gets each
/// pass's kept requests: (index of the session in the input, request), by session, each
/// session's in the deduplication's order; [`row`] makes each a row.
pub fn usage_passes(
    sessions: &[SessionFiles],
    pricing: &PricingTable,
    mmap: bool,
    passes: u32,
    mut each: impl FnMut(&KeptRequests) -> Result<(), Error>,
) -> Result<UsageScan, Error> {
    let mut pricer = Pricer::new(pricing);
    let mut scanner = UsageScanner::new();
    let mut cost = Vec::with_capacity(sessions.len());
    let mut stats: Option<ScanStats> = None;
    for pass in 0..passes.max(1) {
        let mut builder = UsageBuilder::new();
        for s in sessions {
            let mut scan = scanner.scan_session(s, mmap)?;
            if pass == 0 {
                cost.push(own_cost(s, &scan, &mut pricer));
            }
            if passes > 1 {
                scan.copies.retain(|c| pass_of(c, passes) == pass);
            }
            builder.add(s, scan);
        }
        let (kept, counted) = builder.into_kept();
        each(&kept)?;
        // What was read is the first pass's; the requests' counts add up over the passes.
        let total = stats.get_or_insert(ScanStats {
            copies: 0,
            duplicate_copies: 0,
            sidechain_replays: 0,
            requests: 0,
            ..counted
        });
        total.copies += counted.copies;
        total.duplicate_copies += counted.duplicate_copies;
        total.sidechain_replays += counted.sidechain_replays;
        total.requests += counted.requests;
    }
    let stats = stats.unwrap_or_default();
    Ok(UsageScan { cost, stats })
}

/// The cost of session `s`'s own requests per agent (see [`UsageScan::cost`]).
fn own_cost(
    s: &SessionFiles,
    scan: &SessionScan,
    pricer: &mut Pricer<'_>,
) -> Vec<(Option<String>, f64)> {
    let mut own = UsageBuilder::new();
    own.add(s, scan.clone());
    let mut by_agent: Vec<(Option<String>, f64)> = Vec::new();
    for (_, copy) in own.into_kept().0.iter() {
        let agent = copy.agent_id;
        let c = price(pricer, &copy);
        match by_agent.iter_mut().find(|(a, _)| a.as_deref() == agent) {
            Some((_, sum)) => *sum += c,
            None => by_agent.push((agent.map(str::to_owned), c)),
        }
    }
    by_agent
}

/// The price of `copy` (0 when its model is not priced), as `skein usage` prices it.
fn price(pricer: &mut Pricer<'_>, copy: &RequestRef<'_>) -> f64 {
    pricer.cost(copy.model.unwrap_or(NO_MODEL), &copy.tokens)
}

/// The `usage/` row of `copy`, a request of `session`.
pub fn row(session: &SessionFiles, copy: &RequestRef<'_>, pricer: &mut Pricer<'_>) -> UsageRow {
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
        cost_usd: price(pricer, copy),
    }
}
