//! The sections the hook does not read itself but owns the parsing of, so that one file,
//! parsed once, serves every command: `[passes.*]`, `[reports]`, `[statusline]`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use skein_passes::{PruneConfig, SnapshotConfig};
use skein_redact::RedactOptions;

/// `[passes.prune]`, `[passes.redact]`, `[passes.snapshot]`: what `skein prune`, `skein
/// redact` and `skein snapshot` start from before their flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PassPresets {
    pub prune: Option<PruneConfig>,
    pub redact: Option<RedactOptions>,
    pub snapshot: Option<SnapshotConfig>,
}

/// `[reports] format`: the output format of reports when `--format` is not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportFormat {
    Table,
    Jsonl,
    Json,
}

/// `[reports]`: what the reports (`usage`, `tools`, `skills`, `sessions`, `search`, …) take when
/// their flags are not given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReportsConfig {
    /// The zone of days, weeks and months (checked by the binary, which owns zone lookup).
    pub timezone: Option<String>,
    /// The format instead of "table on a terminal, jsonl when piped".
    pub format: Option<ReportFormat>,
    /// A price file extending the embedded table (`usage`, `export`).
    pub pricing: Option<PathBuf>,
}

/// `[statusline]`: the defaults of `skein statusline`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatuslineConfig {
    /// The format string (see `skein_reports::statusline::template`).
    pub format: Option<String>,
    /// The zone of "today".
    pub timezone: Option<String>,
    /// `false` turns colour off (as `NO_COLOR` does).
    pub color: Option<bool>,
}
