//! Totals per tool name (`skein tools --by name`) and per agent (`--by agent`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::ToolCall;

/// The figures of a group of calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolFigures {
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

/// Totals for one tool name (`skein tools --by name`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolTotals {
    pub tool: String,
    #[serde(flatten)]
    pub figures: ToolFigures,
}

/// Totals for one agent name (`skein tools --by agent`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentTotals {
    /// `main`, the agent's name, or `(type)` for unnamed agents (see
    /// [`crate::agents::AgentLabel::group`]).
    pub agent: String,
    /// Distinct transcripts (main transcripts or agent files) with a call.
    pub transcripts: u64,
    #[serde(flatten)]
    pub figures: ToolFigures,
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
    transcripts: BTreeSet<String>,
    durations: Vec<i64>,
}

impl Acc {
    fn add(&mut self, call: &ToolCall) {
        self.calls += 1;
        self.errors += u64::from(call.is_error == Some(true));
        self.unpaired += u64::from(!call.paired);
        self.result_bytes += call.result_bytes.unwrap_or(0);
        self.media_bytes += call.media_bytes.unwrap_or(0);
        self.images += call.images.unwrap_or(0);
        if !self.sessions.contains(call.session_id.as_str()) {
            self.sessions.insert(call.session_id.clone());
        }
        if !self.transcripts.contains(call.file.as_str()) {
            self.transcripts.insert(call.file.clone());
        }
        if let Some(d) = call.duration_ms {
            self.durations.push(d);
        }
    }

    fn figures(mut self) -> ToolFigures {
        let results = self.calls - self.unpaired;
        self.durations.sort_unstable();
        let p50 =
            (!self.durations.is_empty()).then(|| self.durations[(self.durations.len() - 1) / 2]);
        ToolFigures {
            calls: self.calls,
            sessions: self.sessions.len() as u64,
            errors: self.errors,
            error_rate: (results > 0).then(|| round4(self.errors as f64 / results as f64)),
            unpaired: self.unpaired,
            result_bytes: self.result_bytes,
            avg_result_bytes: (results > 0).then(|| (self.result_bytes + results / 2) / results),
            media_bytes: self.media_bytes,
            images: self.images,
            p50_duration_ms: p50,
            max_duration_ms: self.durations.last().copied(),
        }
    }
}

/// Accumulates calls into [`ToolTotals`] per tool name, or [`AgentTotals`] per agent.
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

    /// Counts one call under its tool name.
    pub fn add(&mut self, call: &ToolCall) {
        self.add_as(&call.tool, call);
    }

    /// Counts one call under `key`.
    pub fn add_as(&mut self, key: &str, call: &ToolCall) {
        match self.by.get_mut(key) {
            Some(a) => a.add(call),
            None => self.by.entry(key.to_owned()).or_default().add(call),
        }
    }

    /// The totals, sorted by tool name.
    pub fn finish(self) -> Vec<ToolTotals> {
        self.by
            .into_iter()
            .map(|(tool, a)| ToolTotals {
                tool,
                figures: a.figures(),
            })
            .collect()
    }

    /// The totals of calls added with [`ToolTotalsBuilder::add_as`] an agent key, sorted by
    /// key.
    pub fn finish_agents(self) -> Vec<AgentTotals> {
        self.by
            .into_iter()
            .map(|(agent, a)| AgentTotals {
                agent,
                transcripts: a.transcripts.len() as u64,
                figures: a.figures(),
            })
            .collect()
    }
}
