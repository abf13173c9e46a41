//! `skein export parquet|jsonl --to DIR [PATHS]`: the sessions as a Hive-partitioned dataset
//! (`skein_export`). See `docs/export.md`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args as ClapArgs, Subcommand};
use skein_export::{Dataset, ExportOptions, Format, Layout, Shard, TextOptions};
use skein_layout::Env;

use super::redaction::RedactFlags;
use crate::output::error_line;
use crate::report::{ReportArgs, exit_status};

#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Examples:\n  skein export parquet --to /data/skein ~/.claude/projects\n  \
                        skein export parquet --to s3-mount/skein --shard 2/8 archive/\n  \
                        skein export jsonl --to share/skein --redact ~/.claude/projects\n  \
                        duckdb -c \"select sum(cost_usd) from '/data/skein/usage/**/*.parquet'\""
)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) format: ExportFormat,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ExportFormat {
    /// Parquet files (zstd), timestamps as Parquet timestamps (UTC, ms).
    Parquet(ExportArgs),
    /// JSONL files with the same tables and columns (timestamps as ISO-8601 UTC strings).
    Jsonl(ExportArgs),
}

#[derive(Debug, ClapArgs)]
pub(crate) struct ExportArgs {
    /// The dataset directory (created if missing; part files this run writes are replaced,
    /// others are kept).
    #[arg(long, value_name = "DIR")]
    pub(crate) to: PathBuf,
    /// Transcript files, directories or skein archives (default: the Claude projects
    /// directories).
    pub(crate) paths: Vec<PathBuf>,
    /// Partition by project too: `month=YYYY-MM/project=NAME/`.
    #[arg(long, value_enum, value_name = "KEY")]
    pub(crate) partition_by: Option<PartitionBy>,
    /// Export only the sessions whose id hashes to shard K of N (0-based), with their
    /// subagents; N workers with K = 0..N-1 together write one complete dataset.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub(crate) shard: Option<Shard>,
    /// Leave `messages.text` empty (null): a much smaller dataset.
    #[arg(long)]
    pub(crate) no_text: bool,
    /// Add thinking blocks to `messages.text`.
    #[arg(long)]
    pub(crate) include_thinking: bool,
    /// Add tool results to `messages.text`, each cut at N bytes.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) tool_output_bytes: usize,
    /// Cut `tool_calls.input_json` at N bytes.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub(crate) tool_input_bytes: usize,
    /// Rows per Parquet row group (at most).
    #[arg(long, value_name = "N", default_value_t = 131_072)]
    pub(crate) row_group_rows: usize,
    /// Deduplicate the usage table in N passes over the input's usage lines, each holding a
    /// share of the requests (default: one pass per 4 GiB of transcript).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) usage_passes: Option<u32>,
    /// A JSON price table whose entries extend or override the embedded one.
    #[arg(long, value_name = "FILE")]
    pub(crate) pricing: Option<PathBuf>,
    /// Only sessions whose project directory name contains this text.
    #[arg(allow_hyphen_values = true, long)]
    pub(crate) project: Option<String>,
    /// Memory-map plain files (archived files only).
    #[arg(long)]
    pub(crate) mmap: bool,
    /// Threads reading sessions (default: all cores); the files do not depend on it.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    pub(crate) threads: usize,
    #[command(flatten)]
    pub(crate) redaction: RedactFlags,
    /// No summary line and no warnings.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}

/// Partition keys beyond the month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PartitionBy {
    Project,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    Shard::parse(s).map_err(|e| e.to_string())
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    let (format, a) = match &args.format {
        ExportFormat::Parquet(a) => (Format::Parquet, a),
        ExportFormat::Jsonl(a) => (Format::Jsonl, a),
    };
    let pricing = super::usage::load_pricing(a.pricing.as_deref())?;
    let redactor = a.redaction.redactor(env)?;
    let report = ReportArgs {
        paths: a.paths.clone(),
        project: a.project.clone(),
        quiet: a.quiet,
        ..ReportArgs::default()
    };
    let (sessions, found_ok) = report.sessions(env)?;
    let shard = a.shard.unwrap_or(Shard::ALL);
    let layout = Layout {
        format,
        by_project: a.partition_by == Some(PartitionBy::Project),
        shard,
        row_group_rows: a.row_group_rows,
    };
    let options = ExportOptions {
        text: TextOptions {
            text: !a.no_text,
            thinking: a.include_thinking,
            tool_output_bytes: a.tool_output_bytes,
            tool_input_bytes: a.tool_input_bytes,
        },
        shard: Some(shard),
        mmap: a.mmap,
        threads: a.threads,
        redactor: redactor.as_ref(),
        usage_passes: a.usage_passes,
    };
    let mut dataset = Dataset::create(&a.to, layout)
        .with_context(|| format!("cannot export to {}", a.to.display()))?;
    let stats = skein_export::export(&sessions, &options, &pricing, &mut dataset)
        .context("export failed; the dataset was not changed")?;
    let written = dataset
        .commit()
        .context("export failed; the dataset was not changed")?;
    if !a.quiet {
        let [s, m, t, u] = written.rows;
        error_line(&format!(
            "exported {} of {} sessions (shard {shard}, {} bytes of transcript) to {}: {s} \
             sessions, {m} messages, {t} tool calls, {u} requests in {} files{}",
            stats.exported,
            stats.sessions,
            stats.bytes,
            a.to.display(),
            written.files.len(),
            if redactor.is_some() { ", redacted" } else { "" }
        ));
    }
    Ok(exit_status(found_ok))
}
