//! `skein hooks install|uninstall|doctor`: pick the settings file, call `skein-hook`, print a
//! summary (text or JSON).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::json;
use skein_hook::settings::{SettingsScope, settings_path};
use skein_hook::{DoctorInput, Finding, InstallOptions, SettingsChange, Severity, default_hooks};

use skein_layout::Env;

use skein_app::hook::config_files;

use super::env::absolute_from_cwd;
use super::{ChangeArgs, DoctorArgs, HooksFormat, Target};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    Install,
    Uninstall,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Self::Install => "install",
            Self::Uninstall => "uninstall",
        }
    }
}

fn cwd() -> Result<PathBuf> {
    std::env::current_dir().context("current directory")
}

/// The settings file `target` names.
pub(crate) fn target_path(env: &Env, target: &Target) -> Result<PathBuf> {
    if let Some(file) = &target.settings {
        return Ok(absolute_from_cwd(file));
    }
    if target.project {
        return Ok(settings_path(
            SettingsScope::ProjectLocal,
            Path::new(""),
            &cwd()?,
        ));
    }
    let Some(claude_dir) = env.claude_dir() else {
        bail!("neither CLAUDE_CONFIG_DIR nor HOME is set: use --settings FILE");
    };
    Ok(settings_path(
        SettingsScope::User,
        &claude_dir,
        Path::new(""),
    ))
}

pub(super) fn change(env: &Env, args: &ChangeArgs, action: Action) -> Result<ExitCode> {
    let path = target_path(env, &args.target)?;
    let opts = InstallOptions {
        command: args.command.clone(),
        hooks: default_hooks(),
        dry_run: args.dry_run,
    };
    let result = match action {
        Action::Install => skein_hook::install(&path, &opts),
        Action::Uninstall => skein_hook::uninstall(&path, &opts),
    };
    let change = result.with_context(|| format!("{} failed", action.name()))?;
    let warning = (action == Action::Install && !args.dry_run)
        .then(|| command_warning(env, &args.command))
        .flatten();
    let text = match args.format {
        HooksFormat::Json => {
            let mut v = json!({
                "action": action.name(),
                "path": change.path,
                "command": args.command,
                "dry_run": args.dry_run,
                "changed": change.changed,
                "written": change.written,
                "events": change.events,
                "backup": change.backup,
            });
            if args.dry_run && change.changed {
                v["text"] = change.text.clone().into();
            }
            if let Some(w) = &warning {
                v["warning"] = w.clone().into();
            }
            let mut s = serde_json::to_string_pretty(&v)?;
            s.push('\n');
            s
        }
        HooksFormat::Text => summary(action, args, &change),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    if let (Some(w), HooksFormat::Text) = (&warning, args.format) {
        crate::output::error_line(&format!("warning: {w}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// Why the installed command may not run this skein: its program is not on PATH, or is
/// another binary. `None` when it resolves to the running executable.
fn command_warning(env: &Env, command: &str) -> Option<String> {
    let path = env.path.clone().unwrap_or_default();
    let me = std::env::current_exe().ok()?;
    let same = |p: &Path| std::fs::canonicalize(p).ok() == std::fs::canonicalize(&me).ok();
    let found = skein_hook::resolve_program(command, &path);
    let problem = match &found {
        Some(p) if same(p) => return None,
        Some(p) => format!(
            "`{command}` runs {}, not this skein ({})",
            p.display(),
            me.display()
        ),
        None => format!("`{command}` does not resolve to a program on PATH"),
    };
    Some(format!(
        "{problem}. Claude Code runs the command with its own PATH; \
         `--command \"$(command -v skein) hook\"` writes the absolute path of the skein your \
         shell finds, `--command \"{} hook\"` this one.",
        me.display()
    ))
}

fn summary(action: Action, args: &ChangeArgs, change: &SettingsChange) -> String {
    let path = change.path.display();
    let events = change.events.join(", ");
    let mut s = match (action, change.changed, args.dry_run) {
        (Action::Install, false, _) => {
            format!("skein hooks already installed in {path}: nothing to do\n")
        }
        (Action::Uninstall, false, _) => {
            format!(
                "no skein hooks (`{}`) in {path}: nothing to do\n",
                args.command
            )
        }
        (Action::Install, true, true) => format!("would add skein hooks to {path}: {events}\n"),
        (Action::Uninstall, true, true) => {
            format!("would remove skein hooks from {path}: {events}\n")
        }
        (Action::Install, true, false) => format!("added skein hooks to {path}: {events}\n"),
        (Action::Uninstall, true, false) => {
            format!("removed skein hooks from {path}: {events}\n")
        }
    };
    if let Some(b) = &change.backup {
        let _ = writeln!(s, "previous file saved as {}", b.display());
    }
    if args.dry_run && change.changed {
        s.push_str("dry run, nothing written; the file would be:\n");
        s.push_str(&change.text);
    }
    s
}

pub(super) fn doctor(env: &Env, args: &DoctorArgs) -> Result<ExitCode> {
    let cwd = cwd()?;
    let mut files: Vec<PathBuf> = env.user_settings().into_iter().collect();
    for scope in [SettingsScope::Project, SettingsScope::ProjectLocal] {
        files.push(settings_path(scope, Path::new(""), &cwd));
    }
    for f in &args.settings {
        let f = absolute_from_cwd(f);
        if !files.contains(&f) {
            files.push(f);
        }
    }
    let state_root = env.state_root();
    let input = DoctorInput {
        settings_files: files.clone(),
        command: args.command.clone(),
        expected: default_hooks(),
        path_env: Some(env.path.clone().unwrap_or_default()),
        config: Some((
            config_files(env, args.config.as_deref().map(absolute_from_cwd)),
            Some(cwd),
        )),
        home: env.home.clone(),
        state_root: state_root.clone(),
        // The checker of `skein config check`, with the same value checks.
        checks: crate::commands::config::checks(),
        now_ms: Some(skein_core::time::unix_ms(std::time::SystemTime::now())),
    };
    let mut findings = skein_hook::doctor(&input);
    if state_root.is_none() {
        findings.push(Finding {
            severity: Severity::Error,
            code: "no-state-dir",
            path: None,
            message: "neither XDG_STATE_HOME nor HOME is set: the hook has no state directory"
                .to_owned(),
        });
    }
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let text = match args.format {
        HooksFormat::Json => {
            let list: Vec<_> = findings
                .iter()
                .map(|f| {
                    json!({
                        "severity": severity_name(f.severity),
                        "code": f.code,
                        "path": f.path,
                        "message": f.message,
                    })
                })
                .collect();
            let v = json!({
                "ok": errors == 0,
                "settings_files": files,
                "state_dir": state_root,
                "user_config": env.user_config(),
                "findings": list,
            });
            let mut s = serde_json::to_string_pretty(&v)?;
            s.push('\n');
            s
        }
        HooksFormat::Text => doctor_text(&files, state_root.as_deref(), &findings),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Error => "error",
    }
}

fn doctor_text(files: &[PathBuf], state_root: Option<&Path>, findings: &[Finding]) -> String {
    let mut s = String::from("settings files checked:\n");
    for f in files {
        let _ = writeln!(s, "  {}", f.display());
    }
    if let Some(root) = state_root {
        let _ = writeln!(s, "state directory: {}", root.display());
    }
    let width = findings.iter().map(|f| f.code.len()).max().unwrap_or(0);
    for f in findings {
        let sev = severity_name(f.severity);
        let code = f.code;
        let _ = match &f.path {
            Some(p) => writeln!(
                s,
                "{sev:<7}  {code:<width$}  {}: {}",
                p.display(),
                f.message
            ),
            None => writeln!(s, "{sev:<7}  {code:<width$}  {}", f.message),
        };
    }
    let count = |sev| findings.iter().filter(|f| f.severity == sev).count();
    let (e, w) = (count(Severity::Error), count(Severity::Warning));
    if e + w == 0 {
        s.push_str("ok: no problems found\n");
    } else {
        let _ = writeln!(s, "{e} error(s), {w} warning(s)");
    }
    s
}
