//! `skein statusline`: one line for Claude Code's status bar — model, session cost, today's
//! cost, the active 5-hour block (cost, time left, burn rate) and context used — in a
//! configurable order ([`Template`]).
//!
//! * [`input`]: the JSON Claude Code passes on stdin.
//! * [`template`]: the format string (fields, optional groups, colours).
//! * here: the usage figures from deduplicated, priced requests, and the line.
//!
//! Where the requests come from (the catalog, brought up to date for the current transcript)
//! is the caller's business: this module reads nothing.

pub mod input;
pub mod template;

pub use input::{ContextWindow, InputError, StatusInput};
pub use template::{Field, Style, Template, TemplateError, Value};

use skein_core::time::Zone;

use crate::usage::PricedRequests;
use crate::usage::blocks::{ActiveFigures, blocks};

/// The default format string.
pub const DEFAULT_FORMAT: &str = "{model} · {session} session · {today} today[ · {block} block, {left} left[, {burn}/h]][ · ctx {context}]";

/// What the line shows when the figures cannot be had: the model and the directory.
pub const MINIMAL_FORMAT: &str = "{model}[ · {dir}]";

/// The context window assumed when Claude Code does not say (tokens).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// The active block at the time of the line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockStatus {
    pub cost: f64,
    pub tokens: u64,
    pub now: ActiveFigures,
}

/// The usage figures of a line.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatusFigures {
    /// Today's cost over every session (the local day of `now` in the zone).
    pub today_cost: Option<f64>,
    /// The session's cost as skein counts it (used when Claude Code gives none).
    pub session_cost: Option<f64>,
    /// The active block, if any.
    pub block: Option<BlockStatus>,
    /// The prompt tokens of the session's latest request (used when Claude Code does not
    /// report the context window).
    pub context_tokens: Option<u64>,
}

/// Today's cost and the active block over `priced` (in time order), which must hold every
/// request of the local day of `now` and of the latest run of requests without a gap longer
/// than `length_ms`.
pub fn usage_figures(
    priced: &PricedRequests,
    now_ms: i64,
    zone: &Zone,
    length_ms: i64,
) -> (f64, Option<BlockStatus>) {
    let reqs = &priced.requests;
    let today = zone.day_of(now_ms);
    let today_cost = reqs
        .iter()
        .filter(|r| zone.day_of(r.timestamp_ms) == today)
        .map(|r| r.cost)
        .sum();
    let block = blocks(reqs, length_ms)
        .into_iter()
        .rev()
        .find(|b| b.is_active(reqs, length_ms, now_ms))
        .map(|b| {
            let (t, cost) = b.sum(reqs);
            BlockStatus {
                cost,
                tokens: t.total(),
                now: ActiveFigures::of(&b, reqs, t.total(), cost, now_ms),
            }
        });
    (today_cost, block)
}

/// The cost of session `session_id`'s requests in `priced`.
pub fn session_cost(priced: &PricedRequests, session_id: &str) -> f64 {
    priced
        .requests
        .iter()
        .filter(|r| {
            priced
                .sessions
                .get(r.session as usize)
                .is_some_and(|(id, _)| id == session_id)
        })
        .map(|r| r.cost)
        .sum()
}

/// `$1,234.56`.
pub fn dollars(x: f64) -> String {
    let cents = (x.max(0.0) * 100.0).round() as u64;
    let whole = (cents / 100).to_string();
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("${grouped}.{:02}", cents % 100)
}

/// `2h 05m`, `45m`.
pub fn duration(minutes: i64) -> String {
    let m = minutes.max(0);
    if m >= 60 {
        format!("{}h {:02}m", m / 60, m % 60)
    } else {
        format!("{m}m")
    }
}

/// `950`, `12k`, `1.5M`.
pub fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// Context used, in tokens and percent of the window, from Claude Code's figures, else from
/// the session's latest request.
fn context(input: &StatusInput, figures: &StatusFigures) -> Option<(Option<u64>, f64)> {
    let c = input.context.unwrap_or_default();
    let used = c.used_tokens.or(figures.context_tokens);
    let window = c.size.unwrap_or_else(|| {
        let long = input
            .model_id
            .as_deref()
            .is_some_and(|m| m.to_ascii_lowercase().contains("[1m]"));
        if long {
            1_000_000
        } else {
            DEFAULT_CONTEXT_WINDOW
        }
    });
    let percent = c
        .used_percent
        .or_else(|| used.map(|u| u as f64 / window as f64 * 100.0))?;
    Some((used, percent))
}

/// The line for `input` and `figures` in `template`.
pub fn render(
    template: &Template,
    input: &StatusInput,
    figures: &StatusFigures,
    color: bool,
) -> String {
    let value = |f: Field| -> Option<Value> {
        let money = |x: Option<f64>| x.map(|x| Value::new(dollars(x), Style::Plain));
        match f {
            Field::Model => input.model().map(|m| Value::new(m, Style::Cyan)),
            Field::Dir => input.dir().map(|d| {
                let name = d.trim_end_matches('/').rsplit('/').next().unwrap_or(d);
                Value::new(if name.is_empty() { d } else { name }, Style::Blue)
            }),
            Field::Session => money(input.session_cost.or(figures.session_cost)),
            Field::Today => money(figures.today_cost),
            Field::Block => money(figures.block.map(|b| b.cost)),
            Field::Left => figures.block.map(|b| {
                let m = b.now.remaining_minutes;
                Value::new(
                    duration(m),
                    if m < 30 { Style::Yellow } else { Style::Plain },
                )
            }),
            Field::Burn => money(
                figures
                    .block
                    .and_then(|b| b.now.burn_rate)
                    .map(|r| r.cost_per_hour),
            ),
            Field::Projected => money(
                figures
                    .block
                    .and_then(|b| b.now.projection)
                    .map(|p| p.cost_usd),
            ),
            Field::Context => context(input, figures).map(|(used, pct)| {
                let style = if pct >= 80.0 {
                    Style::Red
                } else if pct >= 50.0 {
                    Style::Yellow
                } else {
                    Style::Green
                };
                let text = match used {
                    Some(u) => format!("{} ({:.0}%)", tokens(u), pct),
                    None => format!("{pct:.0}%"),
                };
                Value::new(text, style)
            }),
        }
    };
    template.render(&value, color)
}

#[cfg(test)]
mod tests;
