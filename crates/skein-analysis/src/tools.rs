//! Tool pairing: every `tool_use` block (assistant content) matched by id with its
//! `tool_result` block (user content `tool_use_id`). Results may come before their use in the
//! file, so pairing happens at the end.

use std::collections::BTreeMap;

use serde::Serialize;
use skein_core::Interner;

/// A `tool_use` block (the first one seen with its id).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolUse {
    pub id: String,
    pub name: Option<String>,
    /// The tool input, when the pass read inputs (see [`ToolInput`]).
    pub input: Option<serde_json::Value>,
    pub timestamp: Option<String>,
    pub line: u64,
    /// The record's uuid.
    pub uuid: Option<String>,
    pub sidechain: bool,
}

/// What a pass's tool-input type keeps: nothing for the fast path ([`IgnoredAny`]), the value
/// for `serde_json::Value`.
pub trait ToolInput: for<'a> skein_core::envelope_tape::FromTape<'a> {
    /// The input as a JSON value, if it was read.
    fn to_value(&self) -> Option<serde_json::Value>;
}

impl ToolInput for serde::de::IgnoredAny {
    fn to_value(&self) -> Option<serde_json::Value> {
        None
    }
}

impl ToolInput for serde_json::Value {
    fn to_value(&self) -> Option<serde_json::Value> {
        Some(self.clone())
    }
}

/// A `tool_result` block (the first one seen for its id; `is_error` is true if any is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResult {
    pub tool_use_id: String,
    pub is_error: bool,
    /// UTF-8 bytes of the text in the result's content (string content, or the `text` of
    /// its `text` blocks).
    pub bytes: u64,
    /// Bytes of base64 image and document data in the result's content, as stored.
    pub media_bytes: u64,
    /// Image blocks in the result's content.
    pub images: u64,
    pub timestamp: Option<String>,
    pub line: u64,
    pub uuid: Option<String>,
}

/// Pairing counts for `skein stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ToolStats {
    /// Distinct tool_use ids.
    pub uses: u64,
    /// Distinct tool_use_ids of tool_result blocks.
    pub results: u64,
    pub paired: u64,
    pub unpaired_uses: u64,
    pub orphan_results: u64,
    /// Distinct ids with an `is_error: true` result.
    pub errors: u64,
}

/// Uses and results collected from a transcript: in full ([`ToolPairing::add_use`],
/// [`ToolPairing::add_result`]) or only their ids ([`ToolPairing::count_use`],
/// [`ToolPairing::count_result`]), which is all [`ToolPairing::stats`] needs.
#[derive(Debug, Default)]
pub struct ToolPairing {
    uses: Vec<ToolUse>,
    /// Use ids numbered in order of first appearance: the number is the index into `uses`
    /// when uses are kept. (Interned, not keys of a map: a map made a `Box<str>` per id,
    /// whose allocation and free showed in `skein stats`' profile.)
    use_index: Interner,
    results: Vec<ToolResult>,
    /// Result ids numbered the same way: the index into `errors` (and into `results` when
    /// results are kept).
    result_index: Interner,
    /// Whether any result of the id was an error, by result index.
    errors: Vec<bool>,
}

/// A use with its result, or either alone.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a> {
    pub tool_use: Option<&'a ToolUse>,
    pub result: Option<&'a ToolResult>,
}

impl Pair<'_> {
    /// Milliseconds from the use's to the result's timestamp, when both parse.
    pub fn duration_ms(&self) -> Option<i64> {
        let a = skein_core::time::parse_ms(self.tool_use?.timestamp.as_deref()?)?;
        let b = skein_core::time::parse_ms(self.result?.timestamp.as_deref()?)?;
        Some(b - a)
    }
}

impl ToolPairing {
    /// An empty pairing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every use and result, keeping the memory for the next pass.
    pub fn clear(&mut self) {
        self.uses.clear();
        self.use_index.clear();
        self.results.clear();
        self.result_index.clear();
        self.errors.clear();
    }

    /// Records a `tool_use` (later copies of an id are ignored).
    pub fn add_use(&mut self, tool_use: ToolUse) {
        if self.use_index.insert(&tool_use.id).1 {
            self.uses.push(tool_use);
        }
    }

    /// Records only that a `tool_use` with this id exists (for [`ToolPairing::stats`]; don't mix
    /// with [`ToolPairing::add_use`] in one pairing).
    pub fn count_use(&mut self, id: &str) {
        self.use_index.insert(id);
    }

    /// Records only a `tool_result`'s id and error flag (see [`ToolPairing::count_use`]).
    pub fn count_result(&mut self, tool_use_id: &str, is_error: bool) {
        match self.result_index.insert(tool_use_id) {
            (_, true) => self.errors.push(is_error),
            (i, false) => self.errors[i as usize] |= is_error,
        }
    }

    /// True if a use with this id was already recorded.
    pub fn has_use(&self, id: &str) -> bool {
        self.use_index.get(id).is_some()
    }

    /// Records a `tool_result` (later copies only add their `is_error`).
    pub fn add_result(&mut self, result: ToolResult) {
        let (i, new) = self.result_index.insert(&result.tool_use_id);
        if new {
            self.errors.push(result.is_error);
            self.results.push(result);
        } else {
            let i = i as usize;
            self.results[i].is_error |= result.is_error;
            self.errors[i] |= result.is_error;
        }
    }

    /// Uses in file order.
    pub fn uses(&self) -> &[ToolUse] {
        &self.uses
    }

    /// Results in file order.
    pub fn results(&self) -> &[ToolResult] {
        &self.results
    }

    /// The result for a use id.
    pub fn result_for(&self, id: &str) -> Option<&ToolResult> {
        self.result_index
            .get(id)
            .and_then(|i| self.results.get(i as usize))
    }

    /// The use for an id.
    pub fn use_for(&self, id: &str) -> Option<&ToolUse> {
        self.use_index
            .get(id)
            .and_then(|i| self.uses.get(i as usize))
    }

    /// Every use with its result (or none), then every orphan result, in file order.
    pub fn pairs(&self) -> Vec<Pair<'_>> {
        let mut out: Vec<Pair<'_>> = self
            .uses
            .iter()
            .map(|u| Pair {
                tool_use: Some(u),
                result: self.result_for(&u.id),
            })
            .collect();
        out.extend(
            self.results
                .iter()
                .filter(|r| self.use_index.get(&r.tool_use_id).is_none())
                .map(|r| Pair {
                    tool_use: None,
                    result: Some(r),
                }),
        );
        out
    }

    /// Counts (from the ids, so the same whether uses and results were kept or counted).
    pub fn stats(&self) -> ToolStats {
        let paired = self
            .use_index
            .iter()
            .filter(|id| self.result_index.get(id).is_some())
            .count() as u64;
        let (uses, results) = (self.use_index.len() as u64, self.result_index.len() as u64);
        ToolStats {
            uses,
            results,
            paired,
            unpaired_uses: uses - paired,
            orphan_results: results - paired,
            errors: self.errors.iter().filter(|&&e| e).count() as u64,
        }
    }

    /// Uses per tool name (name `"<none>"` when missing), sorted by name.
    pub fn count_by_name(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for u in &self.uses {
            *m.entry(u.name.clone().unwrap_or_else(|| "<none>".into()))
                .or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_gives_the_same_stats_as_keeping() {
        let uses = ["a", "b", "a", "c"];
        let results = [
            ("b", false),
            ("b", true),
            ("x", false),
            ("c", false),
            ("x", true),
        ];
        let mut kept = ToolPairing::new();
        let mut counted = ToolPairing::new();
        for (line, id) in uses.iter().enumerate() {
            kept.add_use(ToolUse {
                id: (*id).into(),
                name: None,
                input: None,
                timestamp: None,
                line: line as u64,
                uuid: None,
                sidechain: false,
            });
            counted.count_use(id);
        }
        for (line, (id, is_error)) in results.iter().enumerate() {
            kept.add_result(ToolResult {
                tool_use_id: (*id).into(),
                is_error: *is_error,
                bytes: 0,
                media_bytes: 0,
                images: 0,
                timestamp: None,
                line: line as u64,
                uuid: None,
            });
            counted.count_result(id, *is_error);
        }
        let want = ToolStats {
            uses: 3,
            results: 3,
            paired: 2,
            unpaired_uses: 1,
            orphan_results: 1,
            errors: 2,
        };
        assert_eq!(kept.stats(), want);
        assert_eq!(counted.stats(), want);
        assert!(counted.uses().is_empty() && counted.results().is_empty());
    }

    #[test]
    fn durations_honour_offsets() {
        let tool_use = ToolUse {
            id: "t".into(),
            name: None,
            input: None,
            timestamp: Some("2026-05-01T12:00:02.000+02:00".into()),
            line: 1,
            uuid: None,
            sidechain: false,
        };
        let mut result = ToolResult {
            tool_use_id: "t".into(),
            is_error: false,
            bytes: 0,
            media_bytes: 0,
            images: 0,
            timestamp: Some("2026-05-01T10:00:02.300Z".into()),
            line: 2,
            uuid: None,
        };
        let pair = |r: &ToolResult| {
            Pair {
                tool_use: Some(&tool_use),
                result: Some(r),
            }
            .duration_ms()
        };
        assert_eq!(pair(&result), Some(300));
        result.timestamp = Some("soon".into());
        assert_eq!(pair(&result), None);
    }
}
