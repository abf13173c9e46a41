//! `skein prune`, `skein snapshot`, `skein redact`: batch passes over one transcript (a file,
//! `-` for stdin, or a `.jsonl.zst`), chained with `--then PASS [ARGS…]` or by the config's
//! `pipeline`. The result goes to stdout, to `-o FILE` or back into the input (`--in-place`,
//! atomic); each pass's report is one JSON object per line on stderr or in `--report FILE`.
//! The work is in `skein-passes`; see `docs/passes.md`.

mod subagents;
mod summary;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};
use skein_app::snapshot_dir::output_session_id;
use skein_app::sources::{DiffersFrom, FileSource, open_source, temp_spool};
use skein_layout::Env;
use skein_layout::claude::{main_path, subagents_dir};
use skein_passes::{
    Pass, PassKind, PassReport, PassesConfig, Pipeline, Preset, PruneConfig, RedactPass,
    SnapshotConfig, SnapshotOptions, Source, ToolUseResultMode,
};
use skein_store::{InPlaceError, InPlaceOptions, ensure_not_input, rewrite_in_place_streaming};

use super::redaction::{LevelArg, with_flags};
use crate::output::{ReportFormat, stream_output};

/// Where the input comes from and where the output and reports go.
#[derive(Debug, Args)]
pub(crate) struct IoArgs {
    /// Transcript to read: a `.jsonl` or `.jsonl.zst` file, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    input: PathBuf,
    /// Write the result to this file (replaced atomically) instead of standard output.
    #[arg(short = 'o', long, value_name = "OUT", conflicts_with = "in_place")]
    output: Option<PathBuf>,
    /// Replace the input file atomically. Lines a live session appends meanwhile are kept (the
    /// file is processed again if it is otherwise changed); nothing is written when the result
    /// is identical.
    #[arg(long)]
    in_place: bool,
    /// With --in-place: keep the original as FILE.bak (a hard link to the old file where the
    /// file system allows, else a copy).
    #[arg(long, requires = "in_place")]
    backup: bool,
    /// Write the reports (one JSON object per pass and file, one per line) to this file
    /// instead of standard error.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// How reports are written: `summary` (one line per pass for a person; the default when
    /// standard error is a terminal and there is no --report) or `jsonl`.
    #[arg(long, value_enum)]
    format: Option<ReportFormat>,
    /// Pass options from a TOML file: `[prune]`, `[snapshot]`, `[redact]` sections and a
    /// `pipeline = [...]` run when no --then is given. The file overrides the user config's
    /// `[passes.*]` presets; flags override both.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Then run another pass on the output: `--then redact --level standard`, `--then
    /// snapshot --from UUID`. Takes the rest of the command line (put it last); repeat it
    /// inside to chain more passes.
    #[arg(
        long = "then",
        value_name = "PASS [ARGS]",
        num_args = 1..,
        allow_hyphen_values = true
    )]
    then: Vec<String>,
}

/// A prune rule, for `--drop` and `--keep`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Rule {
    /// `progress` records.
    Progress,
    /// `file-history-snapshot` records.
    FileHistory,
    /// `queue-operation` records (steering text removed from the queue always stays).
    Queue,
    /// `thinking` and `redacted_thinking` blocks (whole blocks).
    Thinking,
    /// Base64 image and document data (replaced by a placeholder).
    Images,
    /// Abandoned branches (rewinds, edits, retries, compaction replays).
    OffBranch,
    /// Every chain record before the active branch's last compaction.
    BeforeCompaction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PresetArg {
    None,
    Safe,
    Lean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ToolUseResultArg {
    Keep,
    Dedupe,
    Slim,
    Drop,
}

/// The rules of `prune`.
#[derive(Debug, Args)]
pub(crate) struct PruneRules {
    /// Starting set of rules: `safe` (bookkeeping only, the default), `lean` (also thinking,
    /// media, tool output over 4 KiB, toolUseResult, abandoned branches) or `none`.
    #[arg(long, value_enum)]
    preset: Option<PresetArg>,
    /// Rules to switch on, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "RULE,…")]
    drop: Vec<Rule>,
    /// Rules to switch off, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "RULE,…")]
    keep: Vec<Rule>,
    /// Truncate tool results longer than N bytes of text, keeping a marker with the original
    /// size (0: never).
    #[arg(long, value_name = "N")]
    max_tool_result_bytes: Option<u64>,
    /// What to do with `toolUseResult`, Claude Code's structured copy of tool output.
    #[arg(long, value_enum, value_name = "MODE")]
    tool_use_result: Option<ToolUseResultArg>,
}

/// Where `snapshot` starts.
#[derive(Debug, Args)]
pub(crate) struct SnapshotRules {
    /// Start at the record with this uuid (default: the last human prompt).
    #[arg(long, value_name = "UUID", conflicts_with = "since")]
    from: Option<String>,
    /// Start at the first record at or after this time (ISO-8601, e.g. 2026-05-01T10:00:00Z).
    #[arg(long, value_name = "TIMESTAMP")]
    since: Option<String>,
}

/// The rules of `redact`.
#[derive(Debug, Args)]
pub(crate) struct RedactRules {
    /// `strict` (default) adds the generic rules (`PASSWORD=…`, …) to the provider tokens and
    /// structured secrets of `standard`.
    #[arg(long, value_enum)]
    level: Option<LevelArg>,
    /// Switch off a rule by id (repeatable).
    #[arg(long = "disable", value_name = "RULE")]
    disable: Vec<String>,
    /// Keep findings whose text matches this regex (repeatable).
    #[arg(long = "allow", value_name = "REGEX")]
    allow: Vec<String>,
}

/// `skein prune`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skein prune --preset lean session.jsonl -o lean.jsonl\n  \
                        skein prune --drop thinking,images --max-tool-result-bytes 8192 s.jsonl\n  \
                        skein prune --preset lean --in-place --backup s.jsonl --then redact"
)]
pub(crate) struct PruneArgs {
    #[command(flatten)]
    rules: PruneRules,
    #[command(flatten)]
    io: IoArgs,
}

/// `skein snapshot`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skein snapshot session.jsonl > request.jsonl\n  \
                        skein snapshot --since 2026-05-01T10:00:00Z session.jsonl --out-dir snap\n  \
                        skein snapshot --from 1f0c… session.jsonl --then redact"
)]
pub(crate) struct SnapshotArgs {
    #[command(flatten)]
    rules: SnapshotRules,
    /// Write the snapshot as a session directory: `DIR/<session>.jsonl` and the subagent
    /// transcripts spawned inside it under `DIR/<session>/subagents/` (with their
    /// `.meta.json`), all through the same passes except snapshot.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["output", "in_place"])]
    out_dir: Option<PathBuf>,
    #[command(flatten)]
    io: IoArgs,
}

/// `skein redact`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skein redact session.jsonl -o clean.jsonl\n  \
                        skein redact --level standard --in-place session.jsonl\n  \
                        skein redact --config skein.toml - < in.jsonl > out.jsonl"
)]
pub(crate) struct RedactArgs {
    #[command(flatten)]
    rules: RedactRules,
    #[command(flatten)]
    io: IoArgs,
}

/// The passes `--then` accepts, parsed from the rest of the command line.
#[derive(Debug, Parser)]
#[command(name = "--then", no_binary_name = true, disable_help_subcommand = true)]
struct ThenCli {
    #[command(subcommand)]
    pass: ThenPass,
}

#[derive(Debug, Subcommand)]
enum ThenPass {
    /// Prune (same rules as `skein prune`).
    Prune {
        #[command(flatten)]
        rules: PruneRules,
        #[arg(long = "then", num_args = 1.., allow_hyphen_values = true)]
        then: Vec<String>,
    },
    /// Snapshot (same options as `skein snapshot`, without --out-dir).
    Snapshot {
        #[command(flatten)]
        rules: SnapshotRules,
        #[arg(long = "then", num_args = 1.., allow_hyphen_values = true)]
        then: Vec<String>,
    },
    /// Redact (same rules as `skein redact`).
    Redact {
        #[command(flatten)]
        rules: RedactRules,
        #[arg(long = "then", num_args = 1.., allow_hyphen_values = true)]
        then: Vec<String>,
    },
}

/// The pass options given on the command line, before they meet the config.
enum Flags<'a> {
    Prune(&'a PruneRules),
    Snapshot(&'a SnapshotRules),
    Redact(&'a RedactRules),
}

impl Flags<'_> {
    fn kind(&self) -> PassKind {
        match self {
            Self::Prune(_) => PassKind::Prune,
            Self::Snapshot(_) => PassKind::Snapshot,
            Self::Redact(_) => PassKind::Redact,
        }
    }
}

fn prune_overrides(r: &PruneRules) -> PruneConfig {
    let mut c = PruneConfig {
        preset: r.preset.map(|p| match p {
            PresetArg::None => Preset::None,
            PresetArg::Safe => Preset::Safe,
            PresetArg::Lean => Preset::Lean,
        }),
        max_tool_result_bytes: r.max_tool_result_bytes,
        tool_use_result: r.tool_use_result.map(|m| match m {
            ToolUseResultArg::Keep => ToolUseResultMode::Keep,
            ToolUseResultArg::Dedupe => ToolUseResultMode::Dedupe,
            ToolUseResultArg::Slim => ToolUseResultMode::Slim,
            ToolUseResultArg::Drop => ToolUseResultMode::Drop,
        }),
        ..PruneConfig::default()
    };
    for (rules, on) in [(&r.drop, true), (&r.keep, false)] {
        for rule in rules {
            let slot = match rule {
                Rule::Progress => &mut c.progress,
                Rule::FileHistory => &mut c.file_history_snapshots,
                Rule::Queue => &mut c.queue_operations,
                Rule::Thinking => &mut c.thinking,
                Rule::Images => &mut c.images,
                Rule::OffBranch => &mut c.off_branch,
                Rule::BeforeCompaction => &mut c.before_last_compaction,
            };
            *slot = Some(on);
        }
    }
    c
}

/// A pass from the config's section with the flags on top.
fn build_pass(config: &PassesConfig, flags: &Flags<'_>) -> Result<Pass> {
    Ok(match flags {
        Flags::Prune(r) => Pass::Prune(config.prune.clone().merge(&prune_overrides(r)).resolve()),
        Flags::Snapshot(r) => {
            let mut c = config.snapshot.clone();
            if r.from.is_some() || r.since.is_some() {
                c = SnapshotConfig {
                    from: r.from.clone(),
                    since: r.since.clone(),
                };
            }
            Pass::Snapshot(SnapshotOptions::try_from(c).context("snapshot options")?)
        }
        Flags::Redact(r) => {
            let o = with_flags(config.redact.clone(), r.level, &r.disable, &r.allow);
            Pass::Redact(RedactPass::new(&o).context("redaction rules")?)
        }
    })
}

/// The passes after the command's own: `--then …` if given, else the config's `pipeline`
/// after the command's pass.
fn chain(
    config: &PassesConfig,
    head: PassKind,
    then: &[String],
    out: &mut Vec<Pass>,
) -> Result<()> {
    if then.is_empty() {
        if let Some((first, rest)) = config.pipeline.split_first() {
            if *first != head {
                bail!(
                    "the config's pipeline starts with {}, not {}",
                    first.name(),
                    head.name()
                );
            }
            for &k in rest {
                out.push(config.pass(k)?);
            }
        }
        return Ok(());
    }
    let mut rest = then.to_vec();
    while !rest.is_empty() {
        let parsed = ThenCli::try_parse_from(&rest).map_err(|e| anyhow::anyhow!("--then: {e}"))?;
        let (flags, next) = match &parsed.pass {
            ThenPass::Prune { rules, then } => (Flags::Prune(rules), then),
            ThenPass::Snapshot { rules, then } => (Flags::Snapshot(rules), then),
            ThenPass::Redact { rules, then } => (Flags::Redact(rules), then),
        };
        out.push(build_pass(config, &flags)?);
        rest.clone_from(next);
    }
    Ok(())
}

/// The pass options before the flags: the user config's `[passes.*]` presets, then the
/// sections of `--config FILE` over them.
fn load_config(path: Option<&Path>, env: &Env) -> Result<PassesConfig> {
    let user = super::config::load(env)?;
    let mut config = PassesConfig {
        pipeline: Vec::new(),
        prune: user.passes.prune.clone().unwrap_or_default(),
        snapshot: user.passes.snapshot.clone().unwrap_or_default(),
        redact: user.command_redaction().clone(),
    };
    let Some(path) = path else {
        return Ok(config);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config {}", path.display()))?;
    let file = PassesConfig::from_toml(&text).with_context(|| format!("{}", path.display()))?;
    // Which sections the file has (its parsed form cannot tell an empty one from none).
    let has = |key: &str| {
        text.parse::<toml::Table>()
            .is_ok_and(|t| t.contains_key(key))
    };
    config.prune = config.prune.merge(&file.prune);
    if has("snapshot") {
        config.snapshot = file.snapshot;
    }
    if has("redact") {
        config.redact = file.redact;
    }
    config.pipeline = file.pipeline;
    Ok(config)
}

/// Writes `bytes` to `path`, refusing a path that is one of `inputs` (by identity); see
/// [`crate::output::write_output`].
pub(crate) fn write_file(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<()> {
    ensure_not_input(path, inputs)?;
    crate::output::write_output(path, bytes)
}

/// Collects the report lines and writes them at the end.
pub(crate) struct Reports {
    lines: Vec<u8>,
    summaries: Vec<String>,
}

impl Reports {
    fn new() -> Self {
        Self {
            lines: Vec::new(),
            summaries: Vec::new(),
        }
    }

    /// Adds one report, with the file it is about first.
    pub(crate) fn push(
        &mut self,
        file: &Path,
        report: &PassReport,
        extra: Option<(&str, Value)>,
    ) -> Result<()> {
        let Value::Object(fields) = serde_json::to_value(report)? else {
            bail!("a report is a JSON object");
        };
        let mut obj = Map::new();
        obj.insert("file".into(), Value::String(file.display().to_string()));
        obj.extend(fields);
        if let Some((k, v)) = extra {
            obj.insert(k.into(), v);
        }
        serde_json::to_writer(&mut self.lines, &Value::Object(obj))?;
        self.lines.push(b'\n');
        self.summaries.push(summary::line(file, report));
        Ok(())
    }

    fn append(&mut self, other: Reports) {
        self.lines.extend(other.lines);
        self.summaries.extend(other.summaries);
    }

    /// To `--report FILE`, else to stderr: one summary line per report when asked (or, with no
    /// `--format`, when that is a terminal), else JSONL.
    fn write(&self, io: &IoArgs) -> Result<()> {
        let on_terminal = io.report.is_none() && std::io::stderr().is_terminal();
        let summaries;
        let bytes = if ReportFormat::human(io.format, on_terminal) {
            summaries = self.summaries.join("\n") + "\n";
            summaries.as_bytes()
        } else {
            &self.lines
        };
        if let Some(p) = &io.report {
            return crate::output::write_output(p, bytes);
        }
        let mut err = std::io::stderr().lock();
        err.write_all(bytes)?;
        Ok(err.flush()?)
    }
}

fn run(flags: &Flags<'_>, io: &IoArgs, out_dir: Option<&Path>, env: &Env) -> Result<ExitCode> {
    let config = load_config(io.config.as_deref(), env)?;
    let mut passes = vec![build_pass(&config, flags)?];
    chain(&config, flags.kind(), &io.then, &mut passes)?;
    let pipeline = Pipeline::new(passes);

    let stdin = io.input.as_os_str() == "-";
    if stdin && std::io::stdin().is_terminal() {
        bail!("no input: give a transcript file, or pipe one into standard input");
    }
    if io.in_place {
        if stdin {
            bail!("--in-place needs a file, not standard input");
        }
        if skein_store::is_zstd(&io.input) {
            bail!("--in-place cannot rewrite a compressed file; use -o");
        }
    }
    if let Some(report) = &io.report {
        ensure_not_input(report, &[&io.input]).context("--report")?;
    }
    if io.in_place {
        return run_in_place(&pipeline, io);
    }
    if let Some(out) = &io.output {
        ensure_not_input(out, &[&io.input])
            .context("-o names the input; use --in-place to rewrite it")?;
    }
    let source = open_source(&io.input).with_context(|| format!("{}", io.input.display()))?;
    let run_on = |out: &mut dyn Write| {
        pipeline
            .run_source(&*source, out, &mut temp_spool)
            .with_context(|| format!("{}", io.input.display()))
    };
    let mut reports = Reports::new();

    if let Some(dir) = out_dir {
        let sid = output_session_id(&io.input, &*source)
            .with_context(|| format!("{}", io.input.display()))?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let main = dir.join(main_path(&sid));
        ensure_not_input(&main, &[&io.input])?;
        let results = stream_output(&main, run_on)?;
        let snap = results.iter().find_map(|r| match r {
            PassReport::Snapshot(s) => Some(s),
            _ => None,
        });
        let mut agent_reports = Reports::new();
        let mut files = vec![main];
        subagents::write_agents(
            &dir.join(subagents_dir(&sid)),
            &io.input,
            snap,
            &pipeline.without(PassKind::Snapshot),
            &mut agent_reports,
            &mut files,
        )?;
        for r in &results {
            let extra = matches!(r, PassReport::Snapshot(_)).then(|| {
                (
                    "written",
                    Value::Array(
                        files
                            .iter()
                            .map(|f| Value::String(f.display().to_string()))
                            .collect(),
                    ),
                )
            });
            reports.push(&io.input, r, extra)?;
        }
        reports.append(agent_reports);
        reports.write(io)?;
        return Ok(ExitCode::SUCCESS);
    }

    let target = io.output.clone().unwrap_or_else(|| PathBuf::from("-"));
    ensure_not_input(&target, &[&io.input])?;
    let results = stream_output(&target, run_on)?;
    for r in &results {
        reports.push(&io.input, r, None)?;
    }
    reports.write(io)?;
    Ok(ExitCode::SUCCESS)
}

/// `--in-place`: the input is rewritten through `skein_store::rewrite_in_place_streaming`, so
/// lines a live session appends meanwhile are carried over (or the file is processed again).
/// The passes read the file as it was when opened; nothing is replaced when the result is the
/// same.
fn run_in_place(pipeline: &Pipeline, io: &IoArgs) -> Result<ExitCode> {
    let backup = io.backup.then(|| {
        let mut bak = io.input.clone().into_os_string();
        bak.push(".bak");
        PathBuf::from(bak)
    });
    let options = InPlaceOptions {
        backup,
        ..InPlaceOptions::default()
    };
    let mut last = Vec::new();
    let done = rewrite_in_place_streaming(&io.input, &options, |file, len, out| {
        let source = FileSource::new(file, len);
        let mut compare = DiffersFrom::new(out, source.open()?);
        last = pipeline
            .run_source(&source, &mut compare, &mut temp_spool)
            .with_context(|| format!("{}", io.input.display()))?;
        Ok::<_, anyhow::Error>(compare.differs()?)
    });
    let done = match done {
        Ok(d) => d,
        Err(InPlaceError::Process(e)) => return Err(e),
        Err(InPlaceError::Replace(e)) => return Err(e.into()),
    };
    let kept = done.carried_bytes + done.late_bytes;
    let mut reports = Reports::new();
    for r in &last {
        let extra = (kept > 0).then(|| ("appended_during_rewrite", Value::from(kept)));
        reports.push(&io.input, r, extra)?;
    }
    reports.write(io)?;
    Ok(ExitCode::SUCCESS)
}

/// `skein prune`.
pub(crate) fn prune(args: &PruneArgs, env: &Env) -> Result<ExitCode> {
    run(&Flags::Prune(&args.rules), &args.io, None, env)
}

/// `skein snapshot`.
pub(crate) fn snapshot(args: &SnapshotArgs, env: &Env) -> Result<ExitCode> {
    run(
        &Flags::Snapshot(&args.rules),
        &args.io,
        args.out_dir.as_deref(),
        env,
    )
}

/// `skein redact`.
pub(crate) fn redact(args: &RedactArgs, env: &Env) -> Result<ExitCode> {
    run(&Flags::Redact(&args.rules), &args.io, None, env)
}
