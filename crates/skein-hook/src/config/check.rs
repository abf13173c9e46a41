//! The config checker behind `skein config check` and `skein hooks doctor`: a file's problems
//! (parse errors, unknown keys, unknown event and pass names, bad values), each with
//! `file:line` where it has one. A parse stops at its first error, so a file with a syntax
//! error or an unknown key reports that one problem; a file that parses is checked for
//! everything else.

use std::fmt;
use std::path::{Path, PathBuf};

use super::{Config, ConfigError, Origin, lines};
use crate::names::check_names;

/// What is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// Not TOML.
    Parse,
    /// A key no section has.
    UnknownKey,
    /// A value of the wrong type or out of range, or a key where it may not be.
    BadValue,
    /// An `[events]` key that is not a Claude Code hook event.
    UnknownEvent,
    /// An `[events]` pass no runner knows.
    UnknownPass,
}

impl ProblemKind {
    /// Stable name, for JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Self::Parse => "parse",
            Self::UnknownKey => "unknown-key",
            Self::BadValue => "bad-value",
            Self::UnknownEvent => "unknown-event",
            Self::UnknownPass => "unknown-pass",
        }
    }
}

/// One problem of a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// Whether a value can be used (`Err`: why not).
pub type ValueCheck<T> = fn(&T) -> Result<(), String>;
/// Whether a `[pass.<name>]` table suits pass `name`.
pub type PassOptionsCheck = fn(&str, &toml::Table) -> Result<(), String>;

/// Checks that need what only the caller has: the pass runner's names, the time-zone
/// database (the binary's), the price-file parser and the hook passes' option types
/// (`skein-app`'s). A `None` check is skipped.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    /// Pass names the runner resolves besides the built-in ones.
    pub runner_passes: Vec<String>,
    /// Whether a zone name can be used.
    pub timezone: Option<ValueCheck<str>>,
    /// Whether a price file can be used.
    pub pricing: Option<ValueCheck<Path>>,
    /// Whether a `[pass.<name>]` table suits that pass (`Ok` for passes it does not know).
    pub pass_options: Option<PassOptionsCheck>,
}

/// Whether the file is the user's or a project's (a project may not redirect skein's files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    User,
    Project,
}

/// The problems of the config at `path`. An I/O error (including a missing file) is the
/// caller's to judge: `skein config check` treats a missing file as clean.
pub fn check_file(
    path: &Path,
    layer: Layer,
    home: Option<&Path>,
    checks: &Checks,
) -> std::io::Result<Vec<Problem>> {
    let text = std::fs::read_to_string(path)?;
    Ok(check_text(&text, path, layer, home, checks))
}

/// The problems of one config text (`path` names it in messages and anchors relative paths).
pub fn check_text(
    text: &str,
    path: &Path,
    layer: Layer,
    home: Option<&Path>,
    checks: &Checks,
) -> Vec<Problem> {
    let origin = match layer {
        Layer::User => Origin::User,
        Layer::Project => Origin::Project,
    };
    let mut config = Config::default();
    let problem = |kind, line, message| Problem {
        kind,
        path: path.to_owned(),
        line,
        message,
    };
    if let Err(e) = config.apply_text(text, path, origin, home) {
        let (kind, message) = match &e {
            ConfigError::Parse { message, .. } => (classify(message), message.clone()),
            ConfigError::Value { message, .. } => (ProblemKind::BadValue, message.clone()),
            other => (ProblemKind::BadValue, strip_path(&other.to_string(), path)),
        };
        let line = e.line().or_else(|| match &e {
            ConfigError::NotAllowed { key, .. } | ConfigError::NoHome { key, .. } => {
                lines::key_line(text, key)
            }
            _ => None,
        });
        return vec![problem(kind, line, message)];
    }
    let lines = lines::key_lines(text);
    let mut out = Vec::new();
    let runner: Vec<&str> = checks.runner_passes.iter().map(String::as_str).collect();
    for name in check_names(&config, &runner) {
        let key = format!("events.{}", name.event);
        let Some(&line) = lines.get(&key) else {
            continue; // a default entry, not this file's
        };
        let kind = match name.pass {
            Some(_) => ProblemKind::UnknownPass,
            None => ProblemKind::UnknownEvent,
        };
        out.push(problem(kind, Some(line), name.to_string()));
    }
    let zones = [
        ("reports.timezone", config.reports.timezone.as_deref()),
        ("statusline.timezone", config.statusline.timezone.as_deref()),
    ];
    if let Some(valid) = checks.timezone {
        for (key, zone) in zones {
            if let Some(Err(e)) = zone.map(valid) {
                out.push(problem(
                    ProblemKind::BadValue,
                    lines.get(key).copied(),
                    format!("{key}: {e}"),
                ));
            }
        }
    }
    if let (Some(valid), Some(file)) = (checks.pricing, &config.reports.pricing)
        && let Err(e) = valid(file)
    {
        out.push(problem(
            ProblemKind::BadValue,
            lines.get("reports.pricing").copied(),
            format!("reports.pricing: {e}"),
        ));
    }
    if let Some(valid) = checks.pass_options {
        for (pass, table) in &config.pass_options {
            if let Err(e) = valid(pass, table) {
                out.push(problem(
                    ProblemKind::BadValue,
                    lines.get(&format!("pass.{pass}")).copied(),
                    format!("[pass.{pass}]: {e}"),
                ));
            }
        }
    }
    out
}

/// The kind of a toml/serde error message.
fn classify(message: &str) -> ProblemKind {
    if message.starts_with("unknown field") {
        ProblemKind::UnknownKey
    } else if [
        "invalid ",
        "unknown variant",
        "out of range",
        "both set",
        "set both",
    ]
    .iter()
    .any(|m| message.contains(m))
    {
        ProblemKind::BadValue
    } else {
        ProblemKind::Parse
    }
}

/// An error's text without the leading `path: ` it carries (the problem prints it).
fn strip_path(text: &str, path: &Path) -> String {
    let prefix = format!("{}: ", path.display());
    text.strip_prefix(&prefix).unwrap_or(text).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Vec<Problem> {
        let checks = Checks {
            runner_passes: vec!["archive".into(), "snapshot".into(), "index".into()],
            timezone: Some(|z| {
                if z == "UTC" {
                    Ok(())
                } else {
                    Err(format!("unknown zone {z:?}"))
                }
            }),
            pricing: None,
            pass_options: None,
        };
        check_text(
            text,
            Path::new("/c/config.toml"),
            Layer::User,
            None,
            &checks,
        )
    }

    #[test]
    fn a_clean_file_has_no_problems() {
        assert!(run("").is_empty());
        let all = "[hook]\nblocking = true\n[archive]\nlevel = 19\n[reports]\ntimezone = \"UTC\"\n\
                   format = \"json\"\n[passes.prune]\npreset = \"lean\"\n[statusline]\ncolor = false\n";
        assert_eq!(run(all), []);
    }

    #[test]
    fn each_kind_of_problem_is_found_with_its_line() {
        let p = run("[reports]\n\ntimezon = \"UTC\"\n");
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].kind, p[0].line), (ProblemKind::UnknownKey, Some(3)));
        assert!(
            p[0].to_string().starts_with("/c/config.toml:3: "),
            "{}",
            p[0]
        );

        let p = run("[archive]\nlevel = 40\n");
        assert_eq!(
            (p[0].kind, p[0].line),
            (ProblemKind::BadValue, Some(2)),
            "{p:?}"
        );

        let p = run("[reports]\nformat = \"xml\"\n");
        assert_eq!(
            (p[0].kind, p[0].line),
            (ProblemKind::BadValue, Some(2)),
            "{p:?}"
        );

        let p = run("[reports\n");
        assert_eq!(p[0].kind, ProblemKind::Parse, "{p:?}");

        let p = run("blocking = true\n[hook]\nblocking = false\n");
        assert_eq!(
            (p[0].kind, p[0].line),
            (ProblemKind::BadValue, Some(3)),
            "{p:?}"
        );

        let p = run("[events]\nStop = [\"archiv\"]\nStopp = []\n[reports]\ntimezone = \"Mars\"\n");
        let kinds: Vec<_> = p.iter().map(|p| (p.kind, p.line)).collect();
        assert_eq!(
            kinds,
            [
                (ProblemKind::UnknownPass, Some(2)),
                (ProblemKind::UnknownEvent, Some(3)),
                (ProblemKind::BadValue, Some(5)),
            ]
        );

        let p = run("[passes.snapshot]\nfrom = \"u\"\nsince = \"2026-01-01T00:00:00Z\"\n");
        assert_eq!(
            (p[0].kind, p[0].line),
            (ProblemKind::BadValue, Some(1)),
            "{p:?}"
        );
    }

    #[test]
    fn a_project_file_may_not_move_skeins_files() {
        let checks = Checks::default();
        let p = check_text(
            "[archive]\ndir = \"/tmp/x\"\n",
            Path::new("/p/.claude/skein.toml"),
            Layer::Project,
            None,
            &checks,
        );
        assert_eq!(
            (p[0].kind, p[0].line),
            (ProblemKind::BadValue, Some(2)),
            "{p:?}"
        );
    }
}
