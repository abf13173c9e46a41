//! The report's rows (what is serialized) and the accumulator behind each.

use serde::Serialize;

use super::Tokens;
use super::build::ScanStats;
use super::scan::Source;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum RowKey {
    Text(String),
    Session(u32),
}

#[derive(Default)]
pub(super) struct Acc {
    messages: u64,
    tokens: Tokens,
    cost: f64,
    pub(super) first_ms: Option<i64>,
    pub(super) last_ms: Option<i64>,
    /// Per model, sorted by name (the figures list them so, and sum their costs in that
    /// order). A handful of models and long runs of one: a vector with the last one used
    /// checked first costs one string compare a request where a `BTreeMap` cost two lookups
    /// (the report's serial tail).
    models: Vec<(String, ModelAcc)>,
    /// Where the last model used is in `models`.
    last: usize,
}

/// One model's share of an [`Acc`].
#[derive(Default)]
struct ModelAcc {
    messages: u64,
    tokens: Tokens,
    /// The requests' costs, when they were given one by one ([`Acc::add`]).
    cost: f64,
    /// Token sums of the requests billed at the base rates (`[0]`) and at the long-context
    /// band's (`[1]`), when they are priced at the end ([`Acc::add_tokens`]).
    tiers: [Tokens; 2],
}

impl Acc {
    fn model(&mut self, model: &str) -> &mut ModelAcc {
        if self.models.get(self.last).is_none_or(|(m, _)| m != model) {
            self.last = match self.models.binary_search_by(|(m, _)| m.as_str().cmp(model)) {
                Ok(at) => at,
                Err(at) => {
                    self.models
                        .insert(at, (model.to_owned(), ModelAcc::default()));
                    at
                }
            };
        }
        &mut self.models[self.last].1
    }

    fn span(&mut self, first: i64, last: i64) {
        self.first_ms = Some(self.first_ms.map_or(first, |f| f.min(first)));
        self.last_ms = Some(self.last_ms.map_or(last, |l| l.max(last)));
    }

    /// Adds one request of known cost (billing blocks price each request).
    pub(super) fn add(&mut self, model: &str, t: &Tokens, cost: f64, ts: i64) {
        self.messages += 1;
        self.tokens.add(t);
        self.cost += cost;
        self.span(ts, ts);
        let m = self.model(model);
        m.messages += 1;
        m.tokens.add(t);
        m.cost += cost;
    }

    /// Adds `n` requests of one model and tier whose tokens sum to `t`, made between `first`
    /// and `last`; they are priced by [`Acc::priced_figures`] from the sums, so the figures do
    /// not depend on the order requests (or pre-summed groups of them) were added in.
    pub(super) fn add_tokens(
        &mut self,
        model: &str,
        long: bool,
        t: &Tokens,
        n: u64,
        (first, last): (i64, i64),
    ) {
        self.messages += n;
        self.tokens.add(t);
        self.span(first, last);
        let m = self.model(model);
        m.messages += n;
        m.tokens.add(t);
        m.tiers[usize::from(long)].add(t);
    }

    /// The figures, each model's cost from its token sums ([`Acc::add_tokens`]).
    pub(super) fn priced_figures(&mut self, pricer: &mut super::groups::Pricer<'_>) -> Figures {
        let mut total = 0.0;
        for (model, m) in &mut self.models {
            m.cost = pricer.cost_of_sums(model, &m.tiers);
            total += m.cost;
        }
        self.cost = total;
        self.figures()
    }

    pub(super) fn figures(&self) -> Figures {
        Figures {
            messages: self.messages,
            input_tokens: self.tokens.input,
            output_tokens: self.tokens.output,
            cache_creation_input_tokens: self.tokens.cache_creation,
            cache_read_input_tokens: self.tokens.cache_read,
            total_tokens: self.tokens.total(),
            cost_usd: round_usd(self.cost),
            models: self.models.iter().map(|(model, _)| model.clone()).collect(),
            breakdown: self
                .models
                .iter()
                .map(|(model, m)| ModelUsage {
                    model: model.clone(),
                    messages: m.messages,
                    input_tokens: m.tokens.input,
                    output_tokens: m.tokens.output,
                    cache_creation_input_tokens: m.tokens.cache_creation,
                    cache_read_input_tokens: m.tokens.cache_read,
                    total_tokens: m.tokens.total(),
                    cost_usd: round_usd(m.cost),
                })
                .collect(),
        }
    }
}

/// Dollars rounded to micro-dollars (sums of floating-point costs print cleanly).
pub fn round_usd(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// One model's share of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelUsage {
    pub model: String,
    pub messages: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub total_tokens: u64,
    pub cost_usd: f64,
}

/// The figures every row has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// Requests (deduplicated API messages).
    pub messages: u64,
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
}

/// One row: a day, week, month, session, model or agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageRow {
    /// `daily`: `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `weekly`: the Monday starting the week, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub week: Option<String>,
    /// `monthly`: `YYYY-MM`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub month: Option<String>,
    /// `session`: the session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `session`: the project directory's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `model`: the model (with `-fast` for fast mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `--by agent`: `main`, the agent's name, `(type)` for unnamed agents, `(internal)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    #[serde(flatten)]
    pub figures: Figures,
    /// Always `false` (the totals line has `true`).
    pub totals: bool,
}

/// Tokens (after deduplication) by where the kept copy was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SourceTokens {
    pub main: u64,
    pub subagents: u64,
    pub internal_agents: u64,
    pub progress: u64,
}

impl SourceTokens {
    /// The counter of `source`.
    /// Adds `tokens` to `source`'s count (saturating, as [`super::Tokens::total`] does).
    pub(super) fn add(&mut self, source: Source, tokens: u64) {
        let n = match source {
            Source::Main => &mut self.main,
            Source::Subagent => &mut self.subagents,
            Source::InternalAgent => &mut self.internal_agents,
            Source::Progress => &mut self.progress,
        };
        *n = n.saturating_add(tokens);
    }
}

/// The last line: figures over all rows, plus what was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TotalsRow {
    /// The report kind (`daily`, …).
    pub report: &'static str,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    #[serde(flatten)]
    pub figures: Figures,
    /// Models without a price (their cost is counted as 0).
    pub unpriced_models: Vec<String>,
    pub sources: SourceTokens,
    pub scan: ScanStats,
    /// Always `true`.
    pub totals: bool,
}

/// The report: rows in order, then the totals.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageReport {
    pub rows: Vec<UsageRow>,
    pub totals: TotalsRow,
}
