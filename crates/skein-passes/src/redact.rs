//! `redact`: secrets in JSON string values replaced by `[REDACTED:<rule>]`, through
//! [`skein_redact::Redactor`]. Lines without findings are written back byte for byte; in a
//! changed line only the secret's bytes change, so a valid line stays valid JSON.

use std::collections::BTreeMap;
use std::sync::Arc;

use std::io::{self, Read, Write};

use serde::Serialize;
use skein_core::{LineSource, ReadLines};
use skein_redact::{RedactOptions, Redactor};

use crate::Error;
use crate::source::Counting;
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
        let report = self
            .run_stream(&mut &input[..], &mut out)
            .expect("memory I/O does not fail");
        (out, report)
    }

    /// Redacts a transcript line by line from `input` to `out`: memory holds one line (there
    /// is no maximum line length here: a line too long to read would be a line not redacted).
    pub fn run_stream(
        &self,
        input: &mut dyn Read,
        out: &mut dyn Write,
    ) -> io::Result<RedactReport> {
        let mut lines = ReadLines::new(input).with_max_line(usize::MAX);
        let mut report = RedactReport {
            options: self.options.clone(),
            input: Totals::default(),
            output: Totals::default(),
            lines_changed: 0,
            findings: 0,
            by_rule: BTreeMap::new(),
            fallback_lines: 0,
            locations: Vec::new(),
        };
        let mut buf = Vec::new();
        let mut out = Counting::new(out, false);
        let mut started = false;
        while lines.advance()? {
            if !started {
                started = true;
                if lines.had_bom() {
                    out.write_bom()?;
                }
            }
            let line = lines.line();
            report.input.lines += 1;
            if line.is_blank() {
                out.write_all(line.raw)?;
                continue;
            }
            buf.clear();
            let outcome = self.redactor.redact_line(line.text, &mut buf);
            if !outcome.changed {
                out.write_all(line.raw)?;
                continue;
            }
            out.write_all(&buf)?;
            out.write_all(&line.raw[line.text.len()..])?;
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
        if !started && lines.had_bom() {
            // Only a BOM: kept.
            out.write_bom()?;
        }
        report.input.bytes = lines.consumed();
        report.output = out.totals();
        Ok(report)
    }
}
