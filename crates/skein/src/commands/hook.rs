//! `skein hook` (the Claude Code hook itself) and `skein hooks install|uninstall|doctor`.
//!
//! The work lives in `skein-hook` (the runtime) and `skein-app` (the `snapshot` and `archive`
//! passes); this module collects the environment, stdin and arguments, plugs the passes into
//! the runtime and turns results into output and an exit code.
//!
//! `skein hook` fails open: whatever happens it prints nothing but the runtime's single JSON
//! object on stdout and exits with the runtime's code (0, or 2 when `blocking = true` asked for
//! it). It never returns an error to `main`, and a silent panic hook keeps a panicking pass from
//! writing to stderr.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Result;
use clap::{ArgGroup, Args, Subcommand, ValueEnum};
use skein_hook::{LogEntry, LogLevel, MAX_EVENT_BYTES};

pub(crate) mod env;
mod settings;

pub(crate) use settings::target_path;
use skein_layout::Env;

/// Arguments of `skein hook`.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// A config file applied after the user and project files (it must exist).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
}

/// Arguments of `skein hooks`.
#[derive(Debug, Args)]
pub(crate) struct HooksArgs {
    #[command(subcommand)]
    pub(crate) action: HooksAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksAction {
    /// Add skein's hook entries to a Claude Code settings file (idempotent, with a backup).
    Install(ChangeArgs),
    /// Remove exactly the hook entries `install` added.
    Uninstall(ChangeArgs),
    /// Check the settings files, the binary on PATH, the config and the state directory; exit
    /// status 1 when an error-level problem is found.
    Doctor(DoctorArgs),
}

/// Which settings file to change.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").args(["user", "project", "settings"])))]
pub(crate) struct Target {
    /// The user settings: `$CLAUDE_CONFIG_DIR/settings.json` or `~/.claude/settings.json`
    /// (the default).
    #[arg(long)]
    pub(crate) user: bool,
    /// This project's personal settings: `.claude/settings.local.json` in the current
    /// directory (not committed, so teammates without skein are not affected).
    #[arg(long)]
    pub(crate) project: bool,
    /// Any settings file, e.g. `.claude/settings.json` to share the hooks with the team.
    #[arg(long, value_name = "FILE")]
    pub(crate) settings: Option<PathBuf>,
}

/// Output of `skein hooks …`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum HooksFormat {
    /// A short human-readable summary.
    #[default]
    Text,
    /// One JSON object.
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct ChangeArgs {
    #[command(flatten)]
    pub(crate) target: Target,
    /// Compute the result and print it, write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// The command string of skein's handlers (e.g. an absolute path to the binary followed
    /// by ` hook`); `uninstall` removes handlers with exactly this command.
    #[arg(long, value_name = "CMD", default_value = skein_hook::DEFAULT_COMMAND)]
    pub(crate) command: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub(crate) format: HooksFormat,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// More settings files to inspect, besides the user and project ones.
    #[arg(long, value_name = "FILE")]
    pub(crate) settings: Vec<PathBuf>,
    /// Also parse this config file (as `skein hook --config` would).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The command string skein's handlers use.
    #[arg(long, value_name = "CMD", default_value = skein_hook::DEFAULT_COMMAND)]
    pub(crate) command: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub(crate) format: HooksFormat,
}

/// Whether the command line (without the program name) calls `skein hook`: its first word that
/// is not a global option (`--max-line N`) is `hook`.
pub(crate) fn is_hook_call(mut args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    while let Some(a) = args.next() {
        match a.to_str() {
            Some("--max-line") => {
                args.next();
            }
            Some(s) if s.starts_with("--max-line=") => {}
            Some(s) => return s == "hook",
            None => return false,
        }
    }
    false
}

/// `skein hook` with arguments it cannot parse: the error goes to the hook log, then the hook
/// runs with its default arguments.
pub(crate) fn run_hook_after_bad_arguments(error: &str, env: &Env) -> ExitCode {
    if let Some(ctx) = skein_app::hook::context(env, None, SystemTime::now) {
        let first = error.lines().next().unwrap_or(error);
        log_error(&ctx, format!("skein hook arguments ignored: {first}"));
    }
    run_hook(&HookArgs { config: None }, env)
}

/// Appends one error to the hook log before the runtime runs (best effort: fail open).
fn log_error(ctx: &skein_hook::HookContext, message: String) {
    let entry = LogEntry::new((ctx.clock)(), LogLevel::Error, None, None, message);
    let config = &ctx.base_config;
    let _ = skein_hook::log::append(
        &ctx.log_dir(config),
        &config.log,
        &[entry],
        config.lock_timeout(),
    );
}

/// `skein hook`: never fails; see the module documentation.
pub(crate) fn run_hook(args: &HookArgs, env: &Env) -> ExitCode {
    // A panic in a pass is caught and logged by the runtime; the default hook would also
    // print it on stderr, which Claude Code may show to the user.
    std::panic::set_hook(Box::new(|_| {}));
    let mut input = Vec::new();
    // One byte more than allowed, so that the runtime can tell "too large" from "just fits".
    let read = std::io::stdin()
        .lock()
        .take(MAX_EVENT_BYTES as u64 + 1)
        .read_to_end(&mut input);
    let Some(ctx) = skein_app::hook::context(env, args.config.clone(), SystemTime::now) else {
        // No home and no XDG_STATE_HOME: nowhere to log or keep state. Fail open.
        return ExitCode::SUCCESS;
    };
    if let Err(e) = read {
        log_error(&ctx, format!("reading the hook input failed: {e}"));
    }
    let mut passes = skein_app::hook::Passes::default();
    passes.catalog = skein_catalog::default_path(env);
    if skein_app::hook::will_redact(&input) {
        passes.prepare_redactor();
    }
    let outcome = skein_hook::run(&input, &ctx, &mut passes);
    if let Some(text) = &outcome.stdout {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }
    if let Some(text) = &outcome.stderr {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    }
    ExitCode::from(u8::try_from(outcome.exit_code).unwrap_or(0))
}

/// `skein hooks install|uninstall|doctor`.
pub(crate) fn run_hooks(args: &HooksArgs, env: &Env) -> Result<ExitCode> {
    match &args.action {
        HooksAction::Install(a) => settings::change(env, a, settings::Action::Install),
        HooksAction::Uninstall(a) => settings::change(env, a, settings::Action::Uninstall),
        HooksAction::Doctor(a) => settings::doctor(env, a),
    }
}
