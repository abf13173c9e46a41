//! Billing blocks: Claude's usage limits are counted in 5-hour windows, and ccusage's
//! `blocks` report defines how requests fall into them. skein uses the same rule, so that the
//! numbers match:
//!
//! * requests are taken in time order (deduplicated and priced first, as every usage report);
//! * a block starts at the first request after a gap, floored to the hour (UTC);
//! * a request belongs to the current block while it is at most `length` after the block's
//!   start **and** at most `length` after the previous request; otherwise it starts a new
//!   block (and when it came more than `length` after the previous request, the time between
//!   the old block's last request + `length` and it is a *gap*);
//! * a block is *active* at `now` when `now` is before its end and less than `length` after
//!   its last request.
//!
//! The burn rate and projection of an active block follow ccusage too: the rate is the
//! block's tokens (and cost) over the time from its first to its last request; the projection
//! adds that rate over the time left until the block's end.

use std::ops::Range;

use serde::Serialize;

use super::Tokens;
use super::rows::round_usd;
use super::scan::Source;

/// Milliseconds in an hour.
pub const MS_PER_HOUR: i64 = 3_600_000;

/// The default block length: 5 hours.
pub const DEFAULT_BLOCK_MS: i64 = 5 * MS_PER_HOUR;

/// A deduplicated request with its cost: what blocks, days and statuses are made of.
#[derive(Debug, Clone, PartialEq)]
pub struct PricedRequest {
    /// The index of its session in the order sessions were added to the builder.
    pub session: u32,
    pub timestamp_ms: i64,
    /// `message.model` (with `-fast` for fast mode), or [`super::NO_MODEL`].
    pub model: Box<str>,
    pub tokens: Tokens,
    /// USD (0 for an unpriced model).
    pub cost: f64,
    /// Where the kept copy was read.
    pub source: Source,
}

/// One block (or one gap between blocks) over a slice of time-ordered requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The block's start (an hour, UTC); for a gap, the previous block's last request +
    /// the block length.
    pub start_ms: i64,
    /// `start + length`; for a gap, the next request.
    pub end_ms: i64,
    /// The requests of the block (indices into the slice given to [`blocks`]); empty for a
    /// gap.
    pub requests: Range<usize>,
    pub gap: bool,
}

impl Block {
    /// The first and last request's instants (`None` for a gap).
    pub fn activity(&self, requests: &[PricedRequest]) -> Option<(i64, i64)> {
        let r = requests.get(self.requests.clone())?;
        Some((r.first()?.timestamp_ms, r.last()?.timestamp_ms))
    }

    /// Is the block active at `now` (before its end and less than `length` after its last
    /// request)?
    pub fn is_active(&self, requests: &[PricedRequest], length_ms: i64, now_ms: i64) -> bool {
        !self.gap
            && now_ms < self.end_ms
            && self
                .activity(requests)
                .is_some_and(|(_, last)| now_ms - last < length_ms)
    }

    /// Tokens and cost of the block's requests.
    pub fn sum(&self, requests: &[PricedRequest]) -> (Tokens, f64) {
        let mut t = Tokens::default();
        let mut cost = 0.0;
        for r in requests.get(self.requests.clone()).unwrap_or(&[]) {
            t.add(&r.tokens);
            cost += r.cost;
        }
        (t, cost)
    }
}

/// The start of the hour (UTC) of an instant.
pub fn floor_to_hour(ms: i64) -> i64 {
    ms.div_euclid(MS_PER_HOUR) * MS_PER_HOUR
}

/// The blocks of `requests`, which must be in time order (see [`sort_by_time`]), with the
/// gaps between them; `length_ms` is the block length (positive).
pub fn blocks(requests: &[PricedRequest], length_ms: i64) -> Vec<Block> {
    let mut out = Vec::new();
    let Some(first) = requests.first() else {
        return out;
    };
    let mut start = floor_to_hour(first.timestamp_ms);
    let mut from = 0;
    for i in 1..requests.len() {
        let ts = requests[i].timestamp_ms;
        let last = requests[i - 1].timestamp_ms;
        let since_last = ts - last;
        if ts - start <= length_ms && since_last <= length_ms {
            continue;
        }
        out.push(Block {
            start_ms: start,
            end_ms: start + length_ms,
            requests: from..i,
            gap: false,
        });
        if since_last > length_ms {
            out.push(Block {
                start_ms: last + length_ms,
                end_ms: ts,
                requests: i..i,
                gap: true,
            });
        }
        start = floor_to_hour(ts);
        from = i;
    }
    out.push(Block {
        start_ms: start,
        end_ms: start + length_ms,
        requests: from..requests.len(),
        gap: false,
    });
    out
}

/// Sorts requests into the order [`blocks`] needs (stable: ties keep their order).
pub fn sort_by_time(requests: &mut [PricedRequest]) {
    requests.sort_by_key(|r| r.timestamp_ms);
}

/// Tokens and dollars per hour.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BurnRate {
    pub tokens_per_hour: f64,
    pub cost_per_hour: f64,
}

/// Where an active block ends up if its burn rate holds until its end.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Projection {
    pub total_tokens: u64,
    pub cost_usd: f64,
}

/// What is known of an active block at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ActiveFigures {
    /// Whole minutes since the block's start.
    pub elapsed_minutes: i64,
    /// Whole minutes until the block's end (the time left).
    pub remaining_minutes: i64,
    /// Over the time from the block's first to its last request; `None` while that is zero
    /// (a single request).
    pub burn_rate: Option<BurnRate>,
    /// `None` when there is no burn rate.
    pub projection: Option<Projection>,
}

impl ActiveFigures {
    /// The figures of `block` (active at `now`) with `tokens` and `cost` so far.
    pub fn of(
        block: &Block,
        requests: &[PricedRequest],
        tokens: u64,
        cost: f64,
        now_ms: i64,
    ) -> Self {
        let remaining_ms = (block.end_ms - now_ms).max(0);
        let burn_rate = block.activity(requests).and_then(|(first, last)| {
            let hours = (last - first) as f64 / MS_PER_HOUR as f64;
            (hours > 0.0).then(|| BurnRate {
                tokens_per_hour: tokens as f64 / hours,
                cost_per_hour: cost / hours,
            })
        });
        let projection = burn_rate.map(|r| {
            let hours_left = remaining_ms as f64 / MS_PER_HOUR as f64;
            Projection {
                total_tokens: (tokens as f64 + r.tokens_per_hour * hours_left).round() as u64,
                cost_usd: round_usd(cost + r.cost_per_hour * hours_left),
            }
        });
        Self {
            elapsed_minutes: (now_ms - block.start_ms).max(0) / 60_000,
            remaining_minutes: remaining_ms / 60_000,
            burn_rate,
            projection,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = MS_PER_HOUR;
    const M: i64 = 60_000;

    fn at(ms: &[i64]) -> Vec<PricedRequest> {
        ms.iter()
            .map(|&t| PricedRequest {
                session: 0,
                timestamp_ms: t,
                model: "m".into(),
                tokens: Tokens {
                    input: 100,
                    ..Tokens::default()
                },
                cost: 1.0,
                source: Source::Main,
            })
            .collect()
    }

    fn shape(b: &[Block]) -> Vec<(i64, i64, usize, bool)> {
        b.iter()
            .map(|b| (b.start_ms, b.end_ms, b.requests.len(), b.gap))
            .collect()
    }

    #[test]
    fn the_block_rule_at_its_edges() {
        // 10:20 starts a block at 10:00; 15:00 is exactly 5 h after the start (still in);
        // 15:00:00.001 is past it (a new block at 15:00, no gap: 1 ms after the previous).
        let r = at(&[10 * H + 20 * M, 12 * H, 15 * H, 15 * H + 1]);
        assert_eq!(
            shape(&blocks(&r, 5 * H)),
            vec![(10 * H, 15 * H, 3, false), (15 * H, 20 * H, 1, false)]
        );
        // More than 5 h after the previous request: a gap from last + 5 h to the request.
        let r = at(&[H, 6 * H + 30 * M + 1]);
        assert_eq!(
            shape(&blocks(&r, 5 * H)),
            vec![
                (H, 6 * H, 1, false),
                (6 * H, 6 * H + 30 * M + 1, 0, true),
                (6 * H, 11 * H, 1, false),
            ]
        );
        // Exactly 5 h after the previous request (and the start): the same block.
        let r = at(&[2 * H, 7 * H]);
        assert_eq!(shape(&blocks(&r, 5 * H)), vec![(2 * H, 7 * H, 2, false)]);
        // Another length; before 1970 floors down; 1.5 h after 00:30 is a gap from 01:30.
        let r = at(&[-30 * M, 30 * M, 2 * H]);
        assert_eq!(
            shape(&blocks(&r, H)),
            vec![
                (-H, 0, 1, false),
                (0, H, 1, false),
                (H + 30 * M, 2 * H, 0, true),
                (2 * H, 3 * H, 1, false),
            ]
        );
        assert!(blocks(&[], 5 * H).is_empty());
    }

    #[test]
    fn active_block_rate_and_projection() {
        // Requests at 10:00 and 11:00 (100 tokens, $1 each); now 12:00; block 10:00-15:00.
        let r = at(&[10 * H, 11 * H]);
        let b = &blocks(&r, 5 * H)[0];
        assert!(b.is_active(&r, 5 * H, 12 * H));
        assert!(!b.is_active(&r, 5 * H, 15 * H), "at its end");
        assert!(
            !b.is_active(&r, 5 * H, 16 * H + 1),
            "5 h after the last request"
        );
        let (t, cost) = b.sum(&r);
        assert_eq!((t.total(), cost), (200, 2.0));
        let a = ActiveFigures::of(b, &r, t.total(), cost, 12 * H + 30 * M);
        assert_eq!((a.elapsed_minutes, a.remaining_minutes), (150, 150));
        let rate = a.burn_rate.expect("two requests an hour apart");
        assert_eq!((rate.tokens_per_hour, rate.cost_per_hour), (200.0, 2.0));
        // 2.5 h left at 200 tokens / $2 an hour.
        assert_eq!(
            a.projection,
            Some(Projection {
                total_tokens: 700,
                cost_usd: 7.0
            })
        );
        // One request: no rate, no projection.
        let one = at(&[10 * H]);
        let b = &blocks(&one, 5 * H)[0];
        let a = ActiveFigures::of(b, &one, 100, 1.0, 11 * H);
        assert_eq!((a.burn_rate, a.projection), (None, None));
    }
}
