//! `skein hooks doctor`: checks settings files, the binary, the config and the state dir, and
//! returns findings for the caller to print.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::check::{Checks, Layer, ProblemKind, check_file};
use crate::config::{Config, ConfigFiles};
use crate::settings::{HookSpec, is_skein_handler, load};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// One observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// Stable identifier (`missing-event`, `duplicate-entry`, `unparsable-settings`, …).
    pub code: &'static str,
    pub path: Option<PathBuf>,
    pub message: String,
}

/// What to check. Every path is given by the caller.
#[derive(Debug, Clone, Default)]
pub struct DoctorInput {
    /// Settings files to inspect (user, project, project-local…); skein counts as installed
    /// for an event if any of them has its handler.
    pub settings_files: Vec<PathBuf>,
    /// skein's command string.
    pub command: String,
    /// The entries that should be present.
    pub expected: Vec<HookSpec>,
    /// `PATH` to look the command's program up in; `None` skips the check.
    pub path_env: Option<OsString>,
    /// Config layers to parse, with the directory used for the project lookup.
    pub config: Option<(ConfigFiles, Option<PathBuf>)>,
    pub home: Option<PathBuf>,
    /// State root that must be writable; `None` skips the check.
    pub state_root: Option<PathBuf>,
    /// The config checks (`skein config check`'s): the pass names the binary's runner
    /// resolves (the built-in ones are always known; any other name in `[events]` is an
    /// error), and the value checks only the binary can make.
    pub checks: Checks,
    /// "Now" in milliseconds since the epoch: errors logged in the 24 hours before it are
    /// shown. `None` skips the log.
    pub now_ms: Option<i64>,
}

/// How far back `hooks doctor` looks in `hook.log`.
pub const RECENT_MS: i64 = 24 * 3600 * 1000;

fn finding(severity: Severity, code: &'static str, path: Option<&Path>, msg: String) -> Finding {
    Finding {
        severity,
        code,
        path: path.map(Path::to_path_buf),
        message: msg,
    }
}

/// Runs every check; the findings are ordered as checked.
pub fn doctor(input: &DoctorInput) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut installed: Vec<&str> = Vec::new();
    for file in &input.settings_files {
        check_settings(file, input, &mut out, &mut installed);
    }
    for spec in &input.expected {
        if !installed.contains(&spec.event.as_str()) {
            out.push(finding(
                Severity::Warning,
                "missing-event",
                None,
                format!("no `{}` handler for {}", input.command, spec.event),
            ));
        }
    }
    if let Some(path_env) = &input.path_env {
        check_binary(&input.command, path_env, &mut out);
    }
    if let Some((files, cwd)) = &input.config {
        check_config(input, files, cwd.as_deref(), &mut out);
    }
    if let Some(root) = &input.state_root {
        let probe = std::fs::create_dir_all(root).and_then(|()| tempfile::tempfile_in(root));
        if let Err(e) = probe {
            out.push(finding(
                Severity::Error,
                "state-not-writable",
                Some(root),
                format!("state directory is not writable: {e}"),
            ));
        }
    }
    out
}

/// Each config layer through the one checker (`skein config check`'s), then the layers
/// together, as the hook will read them.
fn check_config(
    input: &DoctorInput,
    files: &ConfigFiles,
    cwd: Option<&Path>,
    out: &mut Vec<Finding>,
) {
    let home = input.home.as_deref();
    let layers = [
        (files.user.clone(), Layer::User, false),
        (files.project_file(cwd, home), Layer::Project, false),
        (files.explicit.clone(), Layer::User, true),
    ];
    let mut reported = false;
    for (path, layer, required) in layers {
        let Some(path) = path else { continue };
        match check_file(&path, layer, home, &input.checks) {
            Ok(problems) => {
                for p in problems {
                    let code = match p.kind {
                        ProblemKind::UnknownPass => "unknown-pass",
                        ProblemKind::UnknownEvent => "unknown-event",
                        _ => "bad-config",
                    };
                    reported = true;
                    out.push(finding(Severity::Error, code, None, p.to_string()));
                }
            }
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                reported = true;
                out.push(finding(
                    Severity::Error,
                    "bad-config",
                    Some(&path),
                    format!("cannot read config {}: {e}", path.display()),
                ));
            }
        }
    }
    match Config::default().load(files, cwd, home) {
        Ok((config, read)) => {
            out.push(finding(
                Severity::Info,
                "config-ok",
                None,
                format!("config parsed ({} file(s) read)", read.len()),
            ));
            if let (Some(now), Some(root)) = (input.now_ms, &input.state_root) {
                let dir = config
                    .log
                    .dir
                    .clone()
                    .unwrap_or_else(|| skein_layout::env::log_dir(root));
                recent_errors(&dir, now, out);
            }
        }
        Err(e) if !reported => {
            out.push(finding(Severity::Error, "bad-config", None, e.to_string()));
        }
        Err(_) => {}
    }
}

/// The errors `hook.log` (and its first rotation) recorded in the last 24 hours, one warning
/// per distinct message with its count, most frequent first.
fn recent_errors(dir: &Path, now_ms: i64, out: &mut Vec<Finding>) {
    let mut counts: std::collections::BTreeMap<String, (u64, String)> =
        std::collections::BTreeMap::new();
    let current = dir.join(crate::log::LOG_FILE);
    for file in [
        dir.join(format!("{}.1", crate::log::LOG_FILE)),
        current.clone(),
    ] {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let ts = v["ts"].as_str().unwrap_or("");
            let recent = skein_core::time::parse_ms(ts).is_some_and(|t| now_ms - t <= RECENT_MS);
            if v["level"] != "error" || !recent {
                continue;
            }
            let message = v["message"].as_str().unwrap_or("").to_owned();
            let e = counts.entry(message).or_default();
            e.0 += 1;
            ts.clone_into(&mut e.1);
        }
    }
    let mut list: Vec<(String, (u64, String))> = counts.into_iter().collect();
    list.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
    for (message, (n, last)) in list {
        out.push(finding(
            Severity::Warning,
            "recent-errors",
            Some(&current),
            format!("{n}× in the last 24 h (last {last}): {message}"),
        ));
    }
}

fn check_settings<'a>(
    file: &Path,
    input: &'a DoctorInput,
    out: &mut Vec<Finding>,
    installed: &mut Vec<&'a str>,
) {
    let root = match load(file) {
        Ok(Some((_, root))) => root,
        Ok(None) => {
            out.push(finding(
                Severity::Info,
                "no-settings",
                Some(file),
                "file does not exist".into(),
            ));
            return;
        }
        Err(e) => {
            out.push(finding(
                Severity::Error,
                "unparsable-settings",
                Some(file),
                e.to_string(),
            ));
            return;
        }
    };
    if root.get("disableAllHooks") == Some(&Value::Bool(true)) {
        out.push(finding(
            Severity::Warning,
            "hooks-disabled",
            Some(file),
            "`disableAllHooks` is true: no hook runs".into(),
        ));
    }
    let hooks = match root.get("hooks") {
        None => return,
        Some(Value::Object(h)) => h,
        Some(_) => {
            out.push(finding(
                Severity::Error,
                "bad-hooks",
                Some(file),
                "`hooks` is not an object".into(),
            ));
            return;
        }
    };
    for spec in &input.expected {
        let Some(groups) = hooks.get(&spec.event).and_then(Value::as_array) else {
            continue;
        };
        let mut count = 0;
        for g in groups {
            let n = g["hooks"].as_array().map_or(0, |hs| {
                hs.iter()
                    .filter(|h| is_skein_handler(h, &input.command))
                    .count()
            });
            count += n;
            if n > 0 && spec.event == "Stop" && g.get("matcher").is_some() {
                out.push(finding(
                    Severity::Info,
                    "stop-matcher",
                    Some(file),
                    "Stop ignores matchers; the handler runs for every stop".into(),
                ));
            }
        }
        if count > 1 {
            out.push(finding(
                Severity::Warning,
                "duplicate-entry",
                Some(file),
                format!("{count} `{}` handlers for {}", input.command, spec.event),
            ));
        }
        if count > 0 && !installed.contains(&spec.event.as_str()) {
            installed.push(&spec.event);
        }
    }
}

fn check_binary(command: &str, path_env: &OsString, out: &mut Vec<Finding>) {
    let Some(program) = command.split_whitespace().next() else {
        out.push(finding(
            Severity::Error,
            "empty-command",
            None,
            "empty command".into(),
        ));
        return;
    };
    if resolve_program(command, path_env).is_none() {
        out.push(finding(
            Severity::Error,
            "binary-not-found",
            None,
            format!("`{program}` is not an executable file on PATH"),
        ));
    }
}

/// The executable file the command's program (its first word) names: itself when it holds a
/// `/`, else the first match on `path_env`, as a shell would find it.
pub fn resolve_program(command: &str, path_env: &OsString) -> Option<PathBuf> {
    let program = command.split_whitespace().next()?;
    if program.contains('/') {
        return is_executable(Path::new(program)).then(|| PathBuf::from(program));
    }
    std::env::split_paths(path_env)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}
