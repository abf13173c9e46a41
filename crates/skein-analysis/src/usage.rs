//! Token usage, deduplicated: Claude Code writes one line per content block of an API
//! response, each with a copy of `message.usage`. Lines are grouped by (`message.id`,
//! `requestId` or empty); a line without `message.id` is its own group; per group each counter
//! is the maximum over its lines; totals are sums over groups. Lines whose model is
//! `<synthetic>` are not API calls and are skipped.

use serde::Serialize;
use skein_core::{Interner, Usage};

/// Token totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UsageTotals {
    /// Number of groups (API messages).
    pub messages: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

/// One group's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl Counters {
    fn from_usage(u: &Usage) -> Self {
        Self {
            input: u.input_tokens.0,
            output: u.output_tokens.0,
            cache_creation: u.cache_creation_input_tokens.0,
            cache_read: u.cache_read_input_tokens.0,
        }
    }

    fn max_with(&mut self, o: &Self) {
        self.input = self.input.max(o.input);
        self.output = self.output.max(o.output);
        self.cache_creation = self.cache_creation.max(o.cache_creation);
        self.cache_read = self.cache_read.max(o.cache_read);
    }
}

/// Accumulates usage groups.
#[derive(Debug, Default)]
pub struct UsageAccumulator {
    /// Group keys (`message.id`, NUL, `requestId`), numbered in order of first appearance:
    /// interned, not keys of a map, which made a `Box<str>` per API message.
    groups: Interner,
    /// By key number: the group's index in `counters`.
    group_at: Vec<usize>,
    counters: Vec<Counters>,
    key: String,
}

impl UsageAccumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every group, keeping the memory for the next pass.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.group_at.clear();
        self.counters.clear();
    }

    /// Adds one assistant line's usage. `model` `<synthetic>` is skipped. Returns the group
    /// index, or `None` when skipped.
    pub fn add(
        &mut self,
        message_id: Option<&str>,
        request_id: Option<&str>,
        model: Option<&str>,
        usage: &Usage,
    ) -> Option<usize> {
        if model == Some("<synthetic>") {
            return None;
        }
        let c = Counters::from_usage(usage);
        let Some(mid) = message_id else {
            self.counters.push(c);
            return Some(self.counters.len() - 1);
        };
        self.key.clear();
        self.key.push_str(mid);
        self.key.push('\0');
        self.key.push_str(request_id.unwrap_or(""));
        let (key, new) = self.groups.insert(&self.key);
        if !new {
            let g = self.group_at[key as usize];
            self.counters[g].max_with(&c);
            return Some(g);
        }
        self.counters.push(c);
        let g = self.counters.len() - 1;
        self.group_at.push(g);
        Some(g)
    }

    /// Each group's counters, in order of first appearance.
    pub fn groups(&self) -> &[Counters] {
        &self.counters
    }

    /// Sums over the groups.
    pub fn totals(&self) -> UsageTotals {
        let mut t = UsageTotals {
            messages: self.counters.len() as u64,
            ..UsageTotals::default()
        };
        for c in &self.counters {
            t.input_tokens += c.input;
            t.output_tokens += c.output;
            t.cache_creation_input_tokens += c.cache_creation;
            t.cache_read_input_tokens += c.cache_read;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skein_core::lenient::Count;

    fn u(i: u64, o: u64) -> Usage {
        Usage {
            input_tokens: Count(i),
            output_tokens: Count(o),
            ..Usage::default()
        }
    }

    #[test]
    fn groups_take_the_max_and_sum() {
        let mut a = UsageAccumulator::new();
        a.add(Some("m1"), Some("r1"), None, &u(3, 1));
        a.add(Some("m1"), Some("r1"), None, &u(3, 90));
        a.add(Some("m1"), Some("r2"), None, &u(1, 1));
        a.add(None, None, None, &u(2, 2));
        a.add(None, None, None, &u(2, 2));
        a.add(Some("m9"), None, Some("<synthetic>"), &u(100, 100));
        let t = a.totals();
        assert_eq!((t.messages, t.input_tokens, t.output_tokens), (4, 8, 95));
    }
}
