//! `skein statusline install|uninstall`: the settings file is chosen as for `skein hooks
//! install`, and `skein-hook` writes it (backup, atomic, idempotent).

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use skein_hook::{DEFAULT_STATUS_COMMAND, StatusLineOptions};

use super::super::hook::{Target, target_path};
use skein_layout::Env;

#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    pub(crate) target: Target,
    /// The command Claude Code runs (e.g. an absolute path to the binary followed by
    /// ` statusline`); `uninstall` removes the entry only when it has exactly this command.
    #[arg(long, value_name = "CMD", default_value = DEFAULT_STATUS_COMMAND)]
    pub(crate) command: String,
    /// Replace another tool's status line (the old file is kept as settings.json.skein-backup).
    #[arg(long)]
    pub(crate) force: bool,
    /// Say what would change, write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

pub(crate) fn run(args: &InstallArgs, env: &Env, install: bool) -> Result<ExitCode> {
    let path = target_path(env, &args.target)?;
    let opts = StatusLineOptions {
        command: args.command.clone(),
        replace: args.force,
        dry_run: args.dry_run,
    };
    let change = if install {
        skein_hook::install_status_line(&path, &opts)
    } else {
        skein_hook::uninstall_status_line(&path, &opts)
    }
    .with_context(|| {
        format!(
            "statusline {} failed",
            if install { "install" } else { "uninstall" }
        )
    })?;
    let p = path.display();
    let mut s = match (install, change.changed, args.dry_run) {
        (true, false, _) => format!("skein's status line is already set in {p}: nothing to do\n"),
        (false, false, _) => format!(
            "no skein status line (`{}`) in {p}: nothing to do\n",
            args.command
        ),
        (true, true, true) => format!("would set the status line in {p} to `{}`\n", args.command),
        (false, true, true) => format!("would remove skein's status line from {p}\n"),
        (true, true, false) => format!("status line set in {p}: `{}`\n", args.command),
        (false, true, false) => format!("removed skein's status line from {p}\n"),
    };
    if let Some(b) = &change.backup {
        let _ = writeln!(s, "previous file saved as {}", b.display());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
