//! Command-line arguments (clap derive). Only this crate knows about clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "skein",
    version,
    about = "Toolkit for Claude Code JSONL transcripts"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Statistics per transcript file: lines, records, graph, tools, tokens.
    Stats(StatsArgs),
}

/// Output format of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A readable table (the default on a terminal).
    Table,
    /// One JSON object per line (the default when piped).
    Jsonl,
    /// One JSON document (an array).
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct InputArgs {
    /// Transcript files (`.jsonl`, `.jsonl.zst`), directories (searched recursively), or `-`
    /// for standard input.
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Memory-map plain files instead of reading them in blocks (only for archived files that
    /// nothing writes to any more).
    #[arg(long)]
    pub(crate) mmap: bool,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    pub(crate) threads: Option<usize>,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Output format (default: table on a terminal, jsonl otherwise).
    #[arg(long, value_enum)]
    pub(crate) format: Option<Format>,
    /// Do not warn about invalid lines on stderr.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
}
