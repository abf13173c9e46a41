//! Pricing, and requests given pre-summed: [`Pricer`] prices a request or a row's token sums
//! by model (remembering lookups and unpriced models); a [`RequestGroup`] is requests the
//! catalog summed ahead (by session, 15-minute bucket, model, origin and band), and
//! [`groups_fit`] says whether groups can answer a report exactly.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use super::build::{NO_MODEL, UsageOptions};
use crate::pricing::{ModelPrice, PricingTable};

/// Prices requests by model, remembering each model's lookup and the models without a price.
#[derive(Debug)]
pub struct Pricer<'p> {
    table: &'p PricingTable,
    cache: FxHashMap<Box<str>, Option<(&'p ModelPrice, bool)>>,
    /// Models without a price (their cost counts as 0), sorted.
    pub(super) unpriced: BTreeSet<String>,
}

impl<'p> Pricer<'p> {
    /// A pricer over `table`.
    pub fn new(table: &'p PricingTable) -> Self {
        Self {
            table,
            cache: FxHashMap::default(),
            unpriced: BTreeSet::new(),
        }
    }

    /// The price entry of `model` and whether it is fast mode (`None`: unpriced, which is
    /// remembered).
    fn price(&mut self, model: &str) -> Option<(&'p ModelPrice, bool)> {
        let table = self.table;
        let price = match self.cache.get(model) {
            Some(p) => *p,
            None => *self
                .cache
                .entry(model.into())
                .or_insert_with(|| table.lookup(model)),
        };
        if price.is_none() && !self.unpriced.contains(model) {
            self.unpriced.insert(model.to_owned());
        }
        price
    }

    /// The cost in USD of `tokens` of `model` (0 for an unpriced model, which is remembered).
    pub fn cost(&mut self, model: &str, tokens: &super::Tokens) -> f64 {
        self.price(model)
            .map_or(0.0, |(m, fast)| m.cost(tokens, fast))
    }

    /// Whether a request of `model` with `tokens` is billed at its long-context rates.
    pub(super) fn is_long(&mut self, model: &str, tokens: &super::Tokens) -> bool {
        self.price(model).is_some_and(|(m, _)| m.is_long(tokens))
    }

    /// The cost of requests of `model` from their token sums at the base rates (`[0]`) and
    /// at the long-context rates (`[1]`).
    pub(super) fn cost_of_sums(&mut self, model: &str, tiers: &[super::Tokens; 2]) -> f64 {
        self.price(model).map_or(0.0, |(m, fast)| {
            m.cost_at(&tiers[0], false, fast) + m.cost_at(&tiers[1], true, fast)
        })
    }
}

/// Long-context band threshold the [`RequestGroup::long`] flags were computed with: groups
/// answer only for price tables whose bands (if any) start there.
pub const GROUP_LONG_THRESHOLD: u64 = 200_000;

/// Requests of one session known to be kept by the deduplication (no other copy of their
/// message exists), pre-summed by model, origin and band over a span of time: what the
/// catalog stores so that a report need not read each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestGroup {
    /// Shared: many groups name one model.
    pub model: Option<std::sync::Arc<str>>,
    pub source: super::Source,
    /// The requests' prompts exceed [`GROUP_LONG_THRESHOLD`] tokens.
    pub long: bool,
    pub requests: u64,
    pub tokens: super::Tokens,
    /// The earliest and the latest request's timestamp.
    pub first_ms: i64,
    pub last_ms: i64,
}

/// Whether `groups` can answer `options` with `pricing` exactly: each group's requests fall
/// on one day of the zone, all in or all out of the range, and every model's long-context
/// band (if any) starts where the groups' `long` flags were computed. When not, the caller
/// adds every copy instead.
pub fn groups_fit<'g>(
    groups: impl IntoIterator<Item = &'g RequestGroup>,
    options: &UsageOptions,
    pricing: &PricingTable,
) -> bool {
    groups_fit_with(&mut Pricer::new(pricing), groups, options)
}

/// [`groups_fit`] with the caller's pricer: a report asks it for every session, and one
/// pricer looks each model up once for all of them.
pub fn groups_fit_with<'g>(
    pricer: &mut Pricer<'_>,
    groups: impl IntoIterator<Item = &'g RequestGroup>,
    options: &UsageOptions,
) -> bool {
    let (zone, window) = (&options.zone, options.range.in_zone(&options.zone));
    groups.into_iter().all(|g| {
        let band = pricer
            .price(g.model.as_deref().unwrap_or(NO_MODEL))
            .and_then(|(m, _)| m.long_context);
        band.is_none_or(|b| b.threshold == GROUP_LONG_THRESHOLD)
            && window.contains(g.first_ms) == window.contains(g.last_ms)
            && zone.day_of(g.first_ms) == zone.day_of(g.last_ms)
    })
}
