//! `skein statusline`: the line Claude Code shows in its status bar, from the JSON it passes on
//! stdin and the usage figures of the catalog (brought up to date for the current transcript
//! first). It never spawns a process, holds no lock, and whatever goes wrong it prints a
//! minimal line (model and directory) and exits 0. `install` / `uninstall` edit settings.json.
//! See `docs/statusline.md`.

use std::io::{IsTerminal, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args as ClapArgs, Subcommand};
use skein_reports::statusline::{
    DEFAULT_FORMAT, MINIMAL_FORMAT, StatusFigures, StatusInput, Template, render,
};

use crate::output::error_line;
use skein_layout::Env;

mod install;
mod source;

/// The largest input read from stdin (Claude Code sends about a kilobyte).
const MAX_INPUT: u64 = 1 << 20;

/// Print one status line for Claude Code (reads its JSON on stdin), or install it.
#[derive(Debug, ClapArgs)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) action: Option<Action>,
    /// The format string (default: the config's `[statusline] format`, else the built-in
    /// one); fields: {model} {dir} {session} {today} {block} {left} {burn} {projected}
    /// {context}; `[…]` is left out when a field inside has no value.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) format: Option<String>,
    /// The time zone of "today" (default: the config's `[statusline] timezone`, else its
    /// `[reports] timezone`, else `TZ`, else the system zone).
    #[arg(long, value_name = "ZONE", allow_hyphen_values = true)]
    pub(crate) timezone: Option<String>,
    /// The catalog file (default: the config's `[catalog] path`, else
    /// `$XDG_STATE_HOME/skein/catalog.db`).
    #[arg(long, value_name = "PATH")]
    pub(crate) catalog: Option<PathBuf>,
    /// The instant taken as now (ISO-8601), for reproducible output.
    #[arg(long, value_name = "TIME", hide = true, value_parser = super::usage::parse_now)]
    pub(crate) now: Option<i64>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Action {
    /// Set `statusLine` in Claude Code's settings.json to `skein statusline` (backup, atomic,
    /// idempotent).
    Install(install::InstallArgs),
    /// Remove skein's `statusLine` entry (another tool's is left alone).
    Uninstall(install::InstallArgs),
}

pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    match &args.action {
        Some(Action::Install(a)) => return install::run(a, env, true),
        Some(Action::Uninstall(a)) => return install::run(a, env, false),
        None => {}
    }
    let input = read_input();
    let config = super::config::load(env);
    let color = color_wanted(config.as_ref().ok().and_then(|c| c.statusline.color));
    // Whatever fails (or panics) below, the minimal line is printed and the exit status is 0.
    let line = catch_unwind(AssertUnwindSafe(|| {
        full_line(args, env, &input, &config, color)
    }))
    .unwrap_or_else(|_| Err(anyhow::anyhow!("internal error")))
    .unwrap_or_else(|e| {
        error_line(&format!("statusline: {e:#}"));
        minimal_line(&input, color)
    });
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}

/// The input, or an empty one when stdin is a terminal, unreadable or not a JSON object.
fn read_input() -> Result<StatusInput> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        anyhow::bail!("no status-line JSON on stdin (Claude Code passes it)");
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_INPUT)
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    Ok(StatusInput::parse(&bytes)?)
}

/// Colour unless `--color never`, `NO_COLOR` (to anything but the empty string), `TERM=dumb`
/// or the config says no (the line is shown by Claude Code, not written to a terminal).
fn color_wanted(configured: Option<bool>) -> bool {
    crate::term::get().color_shown && configured.unwrap_or(true)
}

fn full_line(
    args: &Args,
    env: &Env,
    input: &Result<StatusInput>,
    config: &Result<&skein_hook::Config>,
    color: bool,
) -> Result<String> {
    let input = input.as_ref().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let config = config.as_ref().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let format = args
        .format
        .as_deref()
        .or(config.statusline.format.as_deref())
        .unwrap_or(DEFAULT_FORMAT);
    let template = Template::parse(format).context("bad [statusline] format")?;
    let zone = crate::zone::resolve(
        args.timezone
            .as_deref()
            .or(config.statusline.timezone.as_deref())
            .or(config.reports.timezone.as_deref()),
    )?;
    let now = args.now.unwrap_or_else(crate::zone::now_ms);
    let figures: StatusFigures = source::figures(
        env,
        args.catalog.as_deref(),
        config.catalog_path.as_deref(),
        config.redact.then(|| config.redaction.clone()),
        input,
        now,
        &zone,
    )?;
    Ok(render(&template, input, &figures, color))
}

/// The model and the directory (the process's when the input has none).
fn minimal_line(input: &Result<StatusInput>, color: bool) -> String {
    let mut input = input.as_ref().cloned().unwrap_or_default();
    if input.model().is_none() {
        input.model_name = Some("Claude Code".into());
    }
    if input.dir().is_none() {
        input.cwd = std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string());
    }
    let template = Template::parse(MINIMAL_FORMAT).expect("the minimal format is valid");
    render(&template, &input, &StatusFigures::default(), color)
}
