//! One line per pass report for a person at a terminal; the JSON report is for programs.

use std::path::Path;

use skein_passes::PassReport;

use crate::table::thousands;

/// `12.3 MB`, `456 KB`, `789 B` (decimal units, as `ls -h --si` and disk vendors count).
pub(crate) fn human_bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss, reason = "a rounded figure for display")]
    let f = n as f64;
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} KB", f / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", f / 1e6),
        _ => format!("{:.2} GB", f / 1e9),
    }
}

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
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_500), "1.5 KB");
        assert_eq!(human_bytes(45_600_000), "45.6 MB");
        assert_eq!(human_bytes(2_500_000_000), "2.50 GB");
        assert_eq!(shrink(100, 28), "100 B → 28 B (72% smaller)");
        assert_eq!(shrink(100, 100), "100 B → 100 B (same size)");
        assert_eq!(shrink(100, 150), "100 B → 150 B (50% larger)");
    }
}
