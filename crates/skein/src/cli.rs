//! Command-line arguments (clap derive). Only this crate knows about clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::commands;

#[derive(Debug, Parser)]
#[command(
    name = "skein",
    version = concat!(
        env!("CARGO_PKG_VERSION"),
        " (commit ",
        env!("SKEIN_GIT_COMMIT"),
        ", prices as of ",
        env!("SKEIN_PRICES_AS_OF"),
        ")"
    ),
    about = "Toolkit for Claude Code JSONL transcripts"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// Longest line read, in bytes (suffixes K, M, G for KiB, MiB, GiB). A longer line is
    /// reported invalid with its offset and skipped without being held in memory.
    #[arg(long, global = true, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    pub(crate) max_line: usize,
    /// Colour: `auto` (on a terminal, unless `NO_COLOR` is set; `CLICOLOR_FORCE=1` forces it),
    /// `always` or `never`.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub(crate) color: crate::term::ColorChoice,
    /// Tables without their optional columns (models, cache tokens), whatever the width.
    #[arg(long, global = true)]
    pub(crate) compact: bool,
}

/// `1024`, `64K`, `256M`, `1G` (binary units; a trailing `B` or `iB` is accepted).
fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: usize = digits
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 1048576, 64K, 256M, 1G)"))?;
    n.checked_mul(1 << shift)
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("{text:?} is not a size between 1 byte and the address space"))
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Statistics per transcript file: lines, records, graph, tools, tokens.
    Stats(StatsArgs),
    /// Token usage and cost, deduplicated across all input (daily, weekly, monthly, session, model,
    /// 5-hour blocks).
    Usage(commands::usage::Args),
    /// One line per tool call, or totals per tool with `--by name`; flags tool loops.
    Tools(commands::tools::Args),
    /// One compact JSON object per record with the fields named (`--fields`: keys, or paths
    /// like `message.model`), as `jq -c '{type,uuid,parentUuid}'` prints them; only those
    /// fields are parsed.
    Records(commands::records::Args),
    /// Skill invocations per skill: count, sessions, first and last use, success rate.
    Skills(commands::skills::Args),
    /// A session's conversation graph drawn in the terminal (or a node list).
    Tree(commands::tree::Args),
    /// Diagnostics for transcripts; exit status 1 when an error-level problem is found.
    Check(commands::check::Args),
    /// A session's active conversation as Markdown, for sharing.
    Show(commands::show::Args),
    /// The Claude Code hook: reads one hook event (JSON) on stdin and runs the passes configured
    /// for it; fails open (exit 0, nothing on stdout) on any internal error.
    Hook(commands::hook::HookArgs),
    /// Install, uninstall or check skein's entries in Claude Code's settings.json.
    Hooks(commands::hook::HooksArgs),
    /// Drop what you do not want to keep (progress, thinking, media, long tool output,
    /// abandoned branches…), re-parenting so the graph stays whole; untouched lines stay byte-equal.
    Prune(commands::passes::PruneArgs),
    /// Cut one request (from a prompt to the end of the active branch, with its tool results
    /// and subagents) into a self-contained transcript.
    Snapshot(commands::passes::SnapshotArgs),
    /// Replace secrets in a transcript by `[REDACTED:<rule>]`; lines without secrets stay byte-equal.
    Redact(commands::passes::RedactArgs),
    /// Archive transcripts (main sessions and subagents) into a compressed, incremental,
    /// crash-safe archive with metadata; `verify`, `restore`, `compact`, `train-dict`, `prune`.
    Archive(commands::archive::ArchiveArgs),
    /// Compress a file with zstd (atomic output, mode 0600).
    Compress(commands::archive::CompressArgs),
    /// Decompress a `.zst` file (archive files with dictionaries included).
    Decompress(commands::archive::DecompressArgs),
    /// Write files to standard output, decoding zstd and archive files.
    Cat(commands::archive::CatArgs),
    /// Bring the catalog (an incremental index of every session, live and archived) up to
    /// date, or rebuild it.
    Index(commands::index::Args),
    /// One row per main session, newest first: title, times, counts, models, cost.
    Sessions(commands::sessions::Args),
    /// Full-text search over prompts, replies, thinking, tool inputs and results (BM25).
    Search(commands::search::Args),
    /// Export sessions as a Hive-partitioned dataset (Parquet, or JSONL) of four tables:
    /// sessions, messages, tool_calls, usage; for DuckDB, Spark, Polars (see docs/export.md).
    Export(commands::export::Args),
    /// One line for Claude Code's status bar (model, session and today's cost, the active
    /// 5-hour block, context), from its JSON on stdin; `statusline install` sets it up.
    Statusline(commands::statusline::Args),
    /// Where the config file is (`path`), the effective values with their origin (`show`),
    /// and its problems (`check`); see docs/config.md.
    Config(commands::config::Args),
    /// Print a shell completion script: `skein completions bash > ~/.local/share/bash-completion/completions/skein`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `skein man > ~/.local/share/man/man1/skein.1`.
    Man,
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
