//! Findings counted by rule id: what an audit trail (the hook's `security.jsonl`) records for
//! each write that redacted something. Never holds a secret, nor where it was.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Finding, LineOutcome};

/// Number of redacted secrets per rule id, in rule-id order. Serialises as a JSON object
/// (`{"github-token": 2, "email": 1}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RuleCounts(BTreeMap<String, u64>);

impl RuleCounts {
    pub fn new() -> RuleCounts {
        RuleCounts::default()
    }

    /// Counts each finding under its rule id.
    pub fn add(&mut self, findings: &[Finding]) {
        self.extend(findings);
    }

    /// Adds `n` findings of `rule_id`.
    pub fn add_rule(&mut self, rule_id: &str, n: u64) {
        if n > 0 {
            *self.0.entry(rule_id.to_owned()).or_default() += n;
        }
    }

    pub fn merge(&mut self, other: &RuleCounts) {
        for (id, n) in other.iter() {
            self.add_rule(id, n);
        }
    }

    /// Findings of `rule_id` (0 when none).
    pub fn get(&self, rule_id: &str) -> u64 {
        self.0.get(rule_id).copied().unwrap_or(0)
    }

    /// All findings.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// (rule id, count) pairs in rule-id order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

impl<'a> Extend<&'a Finding> for RuleCounts {
    fn extend<I: IntoIterator<Item = &'a Finding>>(&mut self, iter: I) {
        for f in iter {
            self.add_rule(&f.rule_id, 1);
        }
    }
}

impl<'a> FromIterator<&'a Finding> for RuleCounts {
    fn from_iter<I: IntoIterator<Item = &'a Finding>>(iter: I) -> RuleCounts {
        let mut c = RuleCounts::new();
        c.extend(iter);
        c
    }
}

impl LineOutcome {
    /// This line's findings counted by rule id.
    pub fn counts(&self) -> RuleCounts {
        self.findings.iter().collect()
    }
}
