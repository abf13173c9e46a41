//! `skein config path|show|check`, and the one place the commands load the user config
//! (`$XDG_CONFIG_HOME/skein/config.toml`) from. Parsing, origins and the checker live in
//! `skein_hook::config` (see docs/config.md); this module wires them to flags and output.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use clap::{Args as ClapArgs, Subcommand};
use serde_json::json;
use skein_hook::config::check::{Checks, Layer, check_file};
use skein_hook::config::lines::key_lines;
use skein_hook::config::show::{Defaults, Entry, Origin, entries};
use skein_hook::{Config, ConfigFiles, ProjectLookup, ReportFormat};
use skein_layout::Env;

use crate::cli::{Command, Format};
use crate::output::{Align, aligned_table, choose_format, error_line};

/// `skein config`.
#[derive(Debug, ClapArgs)]
#[command(after_help = "Examples:\n  skein config path\n  skein config show\n  \
                  skein config check && echo clean")]
pub(crate) struct Args {
    #[command(subcommand)]
    action: Action,
    /// Output format (default: table on a terminal, jsonl otherwise).
    #[arg(long, value_enum, global = true)]
    format: Option<Format>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// The config file's path, and whether it exists.
    Path,
    /// The effective values, each with its origin (default, FILE:LINE, env).
    Show,
    /// Problems of the config file: parse errors and unknown keys (with FILE:LINE), unknown
    /// event and pass names, bad values. Exit status 0 clean, 1 problems, 2 unreadable.
    Check {
        /// Check this file instead (a project's `.claude/skein.toml` is checked as a project
        /// file: it may not move skein's files).
        file: Option<PathBuf>,
    },
}

/// The archive a command works on: `given`, else the config's `[archive] dir`, else the
/// hook's default `<state>/archive`; `None` without any (no state directory).
pub(crate) fn archive_dir_or_none(env: &Env, given: Option<&Path>) -> Result<Option<PathBuf>> {
    if let Some(d) = given {
        return Ok(Some(d.to_path_buf()));
    }
    let configured = load(env)?.archive_dir.clone();
    Ok(configured.or_else(|| env.default_archive()))
}

/// [`archive_dir_or_none`] for a command that needs an archive (`flag` names its option).
pub(crate) fn archive_dir(env: &Env, given: Option<&Path>, flag: &str) -> Result<PathBuf> {
    archive_dir_or_none(env, given)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no archive directory: give {flag}, or set [archive] dir in the config \
             (no state directory: neither XDG_STATE_HOME nor HOME is set)"
        )
    })
}

/// The user config, for a command: built-in defaults under the user file (no project layer:
/// a command is not run "in" a project the way a hook event is). Read and parsed once per
/// process (the environment does not change), however many parts of a command ask; they
/// share it, and take copies only of what they keep.
pub(crate) fn load(env: &Env) -> Result<&'static Config> {
    static LOADED: OnceLock<Result<Config, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let files = ConfigFiles {
                user: env.user_config(),
                project: ProjectLookup::Disabled,
                explicit: None,
            };
            Config::default()
                .load(&files, None, env.home.as_deref())
                .map(|(config, _)| config)
                .map_err(|e| {
                    format!("cannot use the config (`skein config check` lists its problems): {e}")
                })
        })
        .as_ref()
        .map_err(|e| anyhow::Error::msg(e.clone()))
}

/// Fills the flags a command was not given from the config (flags win over the config, the
/// config over built-in defaults). Commands without configurable flags do not read the file,
/// so a broken config never stops them.
pub(crate) fn apply(command: &mut Command, env: &Env) -> Result<()> {
    let wants = matches!(
        command,
        Command::Stats(_)
            | Command::Usage(_)
            | Command::Tools(_)
            | Command::Skills(_)
            | Command::Tree(_)
            | Command::Check(_)
            | Command::Sessions(_)
            | Command::Search(_)
            | Command::Export(_)
    );
    if !wants {
        return Ok(());
    }
    let config = load(env)?;
    let r = &config.reports;
    let format = r.format.map(|f| match f {
        ReportFormat::Table => Format::Table,
        ReportFormat::Jsonl => Format::Jsonl,
        ReportFormat::Json => Format::Json,
    });
    let fill = |slot: &mut Option<String>| {
        if slot.is_none() {
            slot.clone_from(&r.timezone);
        }
    };
    let fill_path = |slot: &mut Option<PathBuf>| {
        if slot.is_none() {
            slot.clone_from(&r.pricing);
        }
    };
    let fill_format = |slot: &mut Option<Format>| {
        if slot.is_none() {
            *slot = format;
        }
    };
    match command {
        Command::Stats(a) => fill_format(&mut a.format),
        Command::Usage(a) => {
            fill(&mut a.report.timezone);
            fill_format(&mut a.report.format);
            fill_path(&mut a.pricing);
        }
        Command::Tools(a) => {
            fill(&mut a.report.timezone);
            fill_format(&mut a.report.format);
        }
        Command::Skills(a) => {
            fill(&mut a.report.timezone);
            fill_format(&mut a.report.format);
        }
        // `check` has no days (it refuses --timezone).
        Command::Check(a) => fill_format(&mut a.report.format),
        Command::Tree(a) => fill_format(&mut a.format),
        Command::Sessions(a) => {
            fill(&mut a.query.timezone);
            fill_format(&mut a.query.format);
        }
        Command::Search(a) => {
            fill(&mut a.filters.timezone);
            fill_format(&mut a.filters.format);
        }
        Command::Export(a) => match &mut a.format {
            super::export::ExportFormat::Parquet(e) | super::export::ExportFormat::Jsonl(e) => {
                fill_path(&mut e.pricing);
            }
        },
        _ => {}
    }
    Ok(())
}

/// The checks only the binary can make: the runner's passes, zone names (the zone database),
/// price files, the hook passes' options.
pub(crate) fn checks() -> Checks {
    Checks {
        runner_passes: skein_app::hook::PASSES
            .iter()
            .map(|p| (*p).to_owned())
            .collect(),
        timezone: Some(|name| {
            crate::zone::resolve(Some(name))
                .map(drop)
                .map_err(|e| format!("{e:#}"))
        }),
        pricing: Some(|path| {
            super::usage::load_pricing(Some(path))
                .map(drop)
                .map_err(|e| format!("{e:#}"))
        }),
        pass_options: Some(skein_app::hook::check_pass_options),
    }
}

/// `skein config …`.
pub(crate) fn run(args: &Args, env: &Env) -> Result<ExitCode> {
    let Some(path) = env.user_config() else {
        bail!("no config path: set HOME or XDG_CONFIG_HOME");
    };
    let format = choose_format(args.format);
    let mut out = std::io::stdout().lock();
    match &args.action {
        Action::Path => {
            let exists = path.is_file();
            if format == Format::Table {
                let note = if exists { "exists" } else { "does not exist" };
                writeln!(out, "{} ({note})", path.display())?;
            } else {
                write_json(&mut out, format, &[json!({"path": path, "exists": exists})])?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Action::Show => {
            show(&mut out, &path, env, format)?;
            Ok(ExitCode::SUCCESS)
        }
        Action::Check { file } => {
            let (path, layer) = match file {
                Some(f) if f.parent().and_then(Path::file_name) == Some(".claude".as_ref()) => {
                    (f.clone(), Layer::Project)
                }
                Some(f) => (f.clone(), Layer::User),
                None => (path, Layer::User),
            };
            check(&mut out, (&path, layer, file.is_some()), env, format)
        }
    }
}

fn show(out: &mut dyn Write, path: &Path, env: &Env, format: Format) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let config = load(env)?;
    let lines = text.as_deref().map(key_lines).unwrap_or_default();
    let defaults = Defaults {
        archive_dir: env.default_archive(),
        archive_level: skein_archive::CodecOptions::default().level,
        catalog_path: skein_catalog::default_path(env),
        log_dir: env.default_log_dir(),
    };
    let file = text.is_some().then_some((path, &lines));
    let mut rows = entries(config, file, &defaults);
    // An unset status-line zone is the reports' one; an unset zone is `TZ`'s, else the system
    // zone ("local"), as the commands resolve them.
    let reports = rows.iter().find(|e| e.key == "reports.timezone").cloned();
    let tz = std::env::var("TZ").ok().filter(|v| !v.is_empty());
    for e in &mut rows {
        if e.key == "statusline.timezone"
            && e.value.is_null()
            && let Some(r) = &reports
        {
            (e.value, e.origin) = (r.value.clone(), r.origin.clone());
        }
        if e.key.ends_with(".timezone") && e.value.is_null() {
            (e.value, e.origin) = match &tz {
                Some(v) => (json!(v), Origin::Env("TZ".into())),
                None => (json!("local"), Origin::Default),
            };
        }
    }
    if format == Format::Table {
        let cells: Vec<Vec<String>> = rows.iter().map(cells).collect();
        let text = aligned_table(&["KEY", "VALUE", "ORIGIN"], &[Align::Left; 3], &cells);
        out.write_all(text.as_bytes())?;
        return Ok(());
    }
    let values: Vec<serde_json::Value> = rows.iter().map(|e| json!(e)).collect();
    write_json(out, format, &values)
}

fn cells(e: &Entry) -> Vec<String> {
    let value = match &e.value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".into(),
        v => v.to_string(),
    };
    vec![e.key.clone(), value, e.origin.to_string()]
}

/// Checks `path`; a missing file is clean unless it was `named` on the command line.
fn check(
    out: &mut dyn Write,
    (path, layer, named): (&Path, Layer, bool),
    env: &Env,
    format: Format,
) -> Result<ExitCode> {
    let problems = match check_file(path, layer, env.home.as_deref(), &checks()) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => {
            error_line(&format!(
                "no config file at {}: the built-in defaults apply",
                path.display()
            ));
            Vec::new()
        }
        Err(e) => {
            error_line(&format!("cannot read {}: {e}", path.display()));
            return Ok(ExitCode::from(2));
        }
    };
    if format == Format::Table {
        for p in &problems {
            writeln!(out, "{p}")?;
        }
    } else {
        let values: Vec<serde_json::Value> = problems
            .iter()
            .map(|p| {
                json!({
                    "path": p.path,
                    "line": p.line,
                    "kind": p.kind.name(),
                    "message": p.message,
                })
            })
            .collect();
        write_json(out, format, &values)?;
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// JSONL (one object per line) or one JSON array.
fn write_json(out: &mut dyn Write, format: Format, values: &[serde_json::Value]) -> Result<()> {
    if format == Format::Json {
        serde_json::to_writer_pretty(&mut *out, values)?;
        writeln!(out)?;
    } else {
        for v in values {
            serde_json::to_writer(&mut *out, v)?;
            writeln!(out)?;
        }
    }
    Ok(())
}
