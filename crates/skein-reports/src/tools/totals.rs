//! Totals per tool name (`skein tools --by name`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::ToolCall;

/// Totals for one tool name (`skein tools --by name`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolTotals {
    pub tool: String,
    pub calls: u64,
    /// Distinct session ids with a call.
    pub sessions: u64,
    /// Calls whose result was an error.
    pub errors: u64,
    /// `errors / (calls - unpaired)`, rounded to 4 decimals; `None` when no call has a result.
    pub error_rate: Option<f64>,
    /// Calls without a result.
    pub unpaired: u64,
    /// Sum of the results' text bytes.
    pub result_bytes: u64,
    /// `result_bytes / (calls - unpaired)`, rounded to the nearest byte.
    pub avg_result_bytes: Option<u64>,
    /// Sum of the results' base64 image and document bytes.
    pub media_bytes: u64,
    /// Image blocks in the results.
    pub images: u64,
    /// Median duration (nearest rank: the lower middle value for an even count).
    pub p50_duration_ms: Option<i64>,
    pub max_duration_ms: Option<i64>,
}

#[derive(Debug, Default)]
struct Acc {
    calls: u64,
    errors: u64,
    unpaired: u64,
    result_bytes: u64,
    media_bytes: u64,
    images: u64,
    sessions: BTreeSet<String>,
    durations: Vec<i64>,
}

/// Accumulates calls into [`ToolTotals`] per tool name.
#[derive(Debug, Default)]
pub struct ToolTotalsBuilder {
    by: BTreeMap<String, Acc>,
}

/// Rounds to 4 decimals.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

impl ToolTotalsBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one call.
    pub fn add(&mut self, call: &ToolCall) {
        let acc = match self.by.get_mut(call.tool.as_str()) {
            Some(a) => a,
            None => self.by.entry(call.tool.clone()).or_default(),
        };
        acc.calls += 1;
        acc.errors += u64::from(call.is_error == Some(true));
        acc.unpaired += u64::from(!call.paired);
        acc.result_bytes += call.result_bytes.unwrap_or(0);
        acc.media_bytes += call.media_bytes.unwrap_or(0);
        acc.images += call.images.unwrap_or(0);
        if !acc.sessions.contains(call.session_id.as_str()) {
            acc.sessions.insert(call.session_id.clone());
        }
        if let Some(d) = call.duration_ms {
            acc.durations.push(d);
        }
    }

    /// The totals, sorted by tool name.
    pub fn finish(self) -> Vec<ToolTotals> {
        self.by
            .into_iter()
            .map(|(tool, mut a)| {
                let results = a.calls - a.unpaired;
                a.durations.sort_unstable();
                let p50 =
                    (!a.durations.is_empty()).then(|| a.durations[(a.durations.len() - 1) / 2]);
                ToolTotals {
                    tool,
                    calls: a.calls,
                    sessions: a.sessions.len() as u64,
                    errors: a.errors,
                    error_rate: (results > 0).then(|| round4(a.errors as f64 / results as f64)),
                    unpaired: a.unpaired,
                    result_bytes: a.result_bytes,
                    avg_result_bytes: (results > 0)
                        .then(|| (a.result_bytes + results / 2) / results),
                    media_bytes: a.media_bytes,
                    images: a.images,
                    p50_duration_ms: p50,
                    max_duration_ms: a.durations.last().copied(),
                }
            })
            .collect()
    }
}
