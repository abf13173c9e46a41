//! `skein archive` (transcripts into the skein archive, and the archive's maintenance
//! subcommands), `skein compress`, `skein decompress` and `skein cat`. The work is in
//! `skein-archive`; see `docs/archive.md` ("Command line").
//!
//! * [`run`]: `skein archive PATH… --to DIR`: sessions found like the reports find them,
//!   archived by `skein_app::ArchiveJob` (metadata, origin, prune and redact on the way in).
//! * [`admin`]: `verify`, `restore`, `compact`, `train-dict`, `prune` (retention), `repair`.
//! * [`files`]: single files: `compress`, `decompress`, `cat`.

mod admin;
mod files;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};

use super::redaction::RedactFlags;

pub(crate) use files::{CatArgs, CompressArgs, DecompressArgs, cat, compress, decompress};

/// Arguments of `skein archive`.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  skein archive --to ~/skein-archive\n  \
                  skein archive ~/.claude/projects/-home-me-proj --to /backup/claude --redact\n  \
                  skein archive verify ~/skein-archive\n  \
                  skein archive restore ~/skein-archive --to ~/.claude/projects --session 0b4c…"
)]
pub(crate) struct ArchiveArgs {
    #[command(subcommand)]
    action: Option<Action>,
    #[command(flatten)]
    ingest: IngestArgs,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Check every archive file (decodes with checksums, counts, meta, index); one JSON object
    /// per issue on stdout; exit status 1 when an error is found.
    Verify(VerifyArgs),
    /// Write archived sessions back into a Claude projects directory (for `claude --resume`).
    Restore(RestoreArgs),
    /// Recompress cold files (superseded versions, files untouched for 7 days) as one frame.
    Compact(CompactArgs),
    /// Train a zstd dictionary on the archived subagent files (installed only if it helps).
    TrainDict(TrainDictArgs),
    /// Retention: delete superseded versions older than N days whose lines all survive in a
    /// kept version. The current version of a source is never deleted.
    Prune(PruneArgs),
    /// Finish interrupted operations everywhere (torn frames cut back to the last commit,
    /// uncommitted files removed, stale meta and index entries rewritten); never touches
    /// archived content. `--rebuild-index` also regenerates the index from the checkpoints.
    Repair(RepairArgs),
}

/// Prune preset applied on the way in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PrunePresetArg {
    /// Bookkeeping records (progress, file-history snapshots, queue operations) and the
    /// duplicate copy of tool output in `toolUseResult`.
    Safe,
    /// `safe` plus thinking, image and document data, tool results over 4 KiB and the whole
    /// `toolUseResult` (abandoned branches are kept: they are not final while a session runs).
    Lean,
}

/// `skein archive PATH… --to DIR`.
#[derive(Debug, Args)]
struct IngestArgs {
    /// Transcripts or directories (a Claude projects tree; subagents are found next to their
    /// sessions). Default: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects` and
    /// `~/.config/claude/projects`.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The archive directory (created with mode 0700 if missing). Default: the config's
    /// `[archive] dir`, else `$XDG_STATE_HOME/skein/archive` (where the hook archives).
    #[arg(long, value_name = "DIR")]
    to: Option<PathBuf>,
    #[command(flatten)]
    redaction: RedactFlags,
    /// Prune on the way in with this preset (the source is not changed).
    #[arg(long, value_enum, value_name = "PRESET")]
    prune: Option<PrunePresetArg>,
    /// zstd level of the new frames (1..=22, or -7..=-1). Default: the config's `[archive]
    /// level`, else 3.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    zstd_level: Option<i32>,
    /// Long-distance matching with this window log (default 27 when given without a value).
    #[arg(
        long,
        value_name = "N",
        num_args = 0..=1,
        default_missing_value = "27",
        require_equals = true
    )]
    long: Option<u32>,
    /// Do not use a trained dictionary for small new subagent files.
    #[arg(long)]
    no_dict: bool,
    /// Only sessions whose project directory name contains this text.
    #[arg(long, allow_hyphen_values = true)]
    project: Option<String>,
    /// Only files whose path matches one of these globs.
    #[arg(long = "include", value_name = "GLOB", allow_hyphen_values = true)]
    include: Vec<String>,
    /// Skip files whose path matches one of these globs.
    #[arg(long = "exclude", value_name = "GLOB", allow_hyphen_values = true)]
    exclude: Vec<String>,
    /// Seconds to wait for another process (e.g. the hook) archiving the same source.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    lock_timeout: u64,
    /// No progress bar, no summary and no warnings.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Worker threads (default: all cores).
    #[arg(long, short = 'j')]
    threads: Option<usize>,
    /// `summary`: only the one-line summary (the default when standard output is a terminal);
    /// `jsonl`: one JSON object per source on standard output (the default otherwise).
    #[arg(long, value_enum)]
    format: Option<crate::output::ReportFormat>,
}

#[derive(Debug, Args)]
struct VerifyArgs {
    /// The archive directory (default: `[archive] dir` in the config, else
    /// `$XDG_STATE_HOME/skein/archive`, where the hook archives).
    dir: Option<PathBuf>,
    /// No summary on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Debug, Args)]
struct RestoreArgs {
    /// The archive directory (default: `[archive] dir` in the config, else
    /// `$XDG_STATE_HOME/skein/archive`, where the hook archives).
    dir: Option<PathBuf>,
    /// The Claude projects directory to write into (e.g. `~/.claude/projects`).
    #[arg(long, value_name = "PROJECTS_DIR")]
    to: PathBuf,
    /// Only this session (repeatable; default: every archived main session).
    #[arg(long = "session", value_name = "ID")]
    sessions: Vec<String>,
    /// The project directory name to restore into (default: the one recorded when archiving).
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    project: Option<String>,
    /// Replace existing files whose content differs (default: refuse, writing nothing for
    /// that session).
    #[arg(long)]
    overwrite: bool,
    /// Restore only the main transcripts.
    #[arg(long)]
    no_subagents: bool,
    /// No summary on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

#[derive(Debug, Args)]
struct CompactArgs {
    /// The archive directory (default: `[archive] dir` in the config, else
    /// `$XDG_STATE_HOME/skein/archive`, where the hook archives).
    dir: Option<PathBuf>,
    /// zstd level.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 19,
        allow_negative_numbers = true
    )]
    zstd_level: i32,
    /// Long-distance window log (0: off).
    #[arg(long, value_name = "N", default_value_t = 27)]
    long: u32,
    /// Files untouched for this many days are cold (superseded versions always are).
    #[arg(long, value_name = "DAYS", default_value_t = 7)]
    cold_after_days: u64,
    /// Compression threads (0: automatic).
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: u32,
}

#[derive(Debug, Args)]
struct TrainDictArgs {
    /// The archive directory (default: `[archive] dir` in the config, else
    /// `$XDG_STATE_HOME/skein/archive`, where the hook archives).
    dir: Option<PathBuf>,
    /// Install only if held-out samples shrink by at least this fraction.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05)]
    min_gain: f64,
}

#[derive(Debug, Args)]
struct PruneArgs {
    /// The archive directory (default: `[archive] dir` in the config, else
    /// `$XDG_STATE_HOME/skein/archive`, where the hook archives).
    dir: Option<PathBuf>,
    /// Superseded versions whose last activity is older than this may go.
    #[arg(long, value_name = "N", required = true)]
    keep_days: u64,
    /// Only list what would be deleted.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Args)]
struct RepairArgs {
    /// The archive directory (default: `[archive] dir` in the config, else
    /// `$XDG_STATE_HOME/skein/archive`, where the hook archives).
    dir: Option<PathBuf>,
    /// Also regenerate `archive-index.json` from the checkpoints.
    #[arg(long)]
    rebuild_index: bool,
}

/// `skein archive …`.
pub(crate) fn run(args: &ArchiveArgs, env: &skein_layout::Env) -> Result<ExitCode> {
    // The maintenance commands work on the archive the hook and `skein archive` write to
    // when no directory is given.
    let dir = |given: &Option<PathBuf>| super::config::archive_dir(env, given.as_deref(), "DIR");
    match &args.action {
        None => run::run(&args.ingest, env),
        Some(Action::Verify(a)) => admin::verify(a, &dir(&a.dir)?),
        Some(Action::Restore(a)) => admin::restore(a, &dir(&a.dir)?),
        Some(Action::Compact(a)) => admin::compact(a, &dir(&a.dir)?),
        Some(Action::TrainDict(a)) => admin::train_dict(a, &dir(&a.dir)?),
        Some(Action::Prune(a)) => admin::prune(a, &dir(&a.dir)?),
        Some(Action::Repair(a)) => admin::repair(a, &dir(&a.dir)?),
    }
}
