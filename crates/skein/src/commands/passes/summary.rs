//! One line per pass report for a person at a terminal; the JSON report is for programs.

use std::path::Path;

use skein_passes::PassReport;

use crate::table::{human_bytes, thousands};

/// `45.6 MB → 12.8 MB (72% smaller)`.
fn shrink(from: u64, to: u64) -> String {
    let change = if from == 0 || to == from {
        "same size".to_owned()
    } else if to < from {
        format!("{}% smaller", (from - to) * 100 / from)
    } else {
        format!("{}% larger", (to - from) * 100 / from)
    };
    format!("{} → {} ({change})", human_bytes(from), human_bytes(to))
}

/// The summary of one report about `file`.
pub(crate) fn line(file: &Path, report: &PassReport) -> String {
    let f = file.display();
    match report {
        PassReport::Prune(r) => {
            let reparented = if r.reparented > 0 {
                format!(", {} re-parented", thousands(r.reparented))
            } else {
                String::new()
            };
            format!(
                "prune {f}: {} → {} lines, {}{reparented}",
                thousands(r.input.lines),
                thousands(r.output.lines),
                shrink(r.input.bytes, r.output.bytes)
            )
        }
        PassReport::Snapshot(r) => {
            let agents = match r.agent_ids.len() {
                0 => String::new(),
                1 => ", 1 subagent".to_owned(),
                n => format!(", {n} subagents"),
            };
            format!(
                "snapshot {f}: {} records from line {} ({}){agents}, {}",
                thousands(r.records),
                thousands(r.start.line),
                r.start.timestamp.as_deref().unwrap_or("no time"),
                human_bytes(r.output.bytes)
            )
        }
        PassReport::Redact(r) => {
            if r.findings == 0 {
                return format!(
                    "redact {f}: no secrets found in {} lines",
                    thousands(r.input.lines)
                );
            }
            let rules: Vec<String> = r
                .by_rule
                .iter()
                .map(|(rule, n)| format!("{rule} ×{n}"))
                .collect();
            format!(
                "redact {f}: {} secrets replaced in {} lines ({})",
                thousands(r.findings),
                thousands(r.lines_changed),
                rules.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_changes() {
        assert_eq!(shrink(100, 28), "100 B → 28 B (72% smaller)");
        assert_eq!(shrink(100, 100), "100 B → 100 B (same size)");
        assert_eq!(shrink(100, 150), "100 B → 150 B (50% larger)");
    }
}
