//! `redact`: secrets in JSON string values replaced by `[REDACTED:<rule>]`, through
//! [`skein_redact::Redactor`]. Lines without findings are written back byte for byte; in a
//! changed line only the secret's bytes change, so a valid line stays valid JSON.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use skein_core::{LineSource, SliceLines};
use skein_redact::{RedactOptions, Redactor};

use crate::Error;
use crate::transcript::Totals;

/// Findings listed in a report (the counts cover all of them).
pub const MAX_LOCATIONS: usize = 200;

/// A compiled redaction pass (cheap to clone and share across threads).
#[derive(Debug, Clone)]
pub struct RedactPass {
    redactor: Arc<Redactor>,
    options: RedactOptions,
}

/// Where one secret was (never the secret itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// 1-based line in the pass's input.
    pub line: u64,
    pub uuid: Option<String>,
    pub rule_id: String,
    pub json_path: String,
}

/// The report of one redact run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RedactReport {
    pub options: RedactOptions,
    pub input: Totals,
    pub output: Totals,
    /// Lines with at least one secret replaced.
    pub lines_changed: u64,
    pub findings: u64,
    /// Findings per rule id.
    pub by_rule: BTreeMap<String, u64>,
    /// Changed lines that were not JSON (scanned leniently).
    pub fallback_lines: u64,
    /// The first findings, in line order.
    pub locations: Vec<Location>,
}

impl RedactPass {
    /// Compiles the rules.
    pub fn new(options: &RedactOptions) -> Result<Self, Error> {
        Ok(Self {
            redactor: Arc::new(Redactor::new(options)?),
            options: options.clone(),
        })
    }

    /// The options the pass was built from.
    pub fn options(&self) -> &RedactOptions {
        &self.options
    }

    /// Redacts a transcript held in memory.
    pub fn run(&self, input: &[u8]) -> (Vec<u8>, RedactReport) {
        let mut out = Vec::with_capacity(input.len());
        let mut lines = SliceLines::new(input);
        if input.starts_with(b"\xEF\xBB\xBF") {
            out.extend_from_slice(b"\xEF\xBB\xBF");
        }
        let mut report = RedactReport {
            options: self.options.clone(),
            input: Totals::of(input),
            output: Totals::default(),
            lines_changed: 0,
            findings: 0,
            by_rule: BTreeMap::new(),
            fallback_lines: 0,
            locations: Vec::new(),
        };
        while let Ok(true) = lines.advance() {
            let line = lines.line();
            if line.is_blank() {
                out.extend_from_slice(line.raw);
                continue;
            }
            let before = out.len();
            let outcome = self.redactor.redact_line(line.text, &mut out);
            if !outcome.changed {
                out.truncate(before);
                out.extend_from_slice(line.raw);
                continue;
            }
            out.extend_from_slice(&line.raw[line.text.len()..]);
            report.lines_changed += 1;
            report.fallback_lines += u64::from(outcome.fallback);
            for f in outcome.findings {
                report.findings += 1;
                *report.by_rule.entry(f.rule_id.clone()).or_insert(0) += 1;
                if report.locations.len() < MAX_LOCATIONS {
                    report.locations.push(Location {
                        line: line.number,
                        uuid: f.uuid,
                        rule_id: f.rule_id,
                        json_path: f.json_path,
                    });
                }
            }
        }
        report.output = Totals::of(&out);
        (out, report)
    }
}
