//! The hook configuration: TOML layers (user file, project `.claude/skein.toml`, explicit
//! `--config`) applied in that order over built-in defaults. A later layer overrides only the
//! keys it sets; an `[events]` entry replaces that event's whole pass list. Unknown keys are an
//! error naming the file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use skein_redact::RedactOptions;

use crate::log::LogLevel;

/// Built-in pass: open a request scope (UserPromptSubmit).
pub const PASS_OPEN_REQUEST: &str = "open-request";
/// Built-in pass: `<context>`/`<work>` extraction from a subagent's final text (SubagentStop).
pub const PASS_EXTRACT: &str = "extract";
/// Built-in pass: block a tool call repeated with the same input (PreToolUse; opt-in).
pub const PASS_LOOP_GUARD: &str = "loop-guard";
/// The passes the runtime implements itself.
pub const BUILTIN_PASSES: [&str; 3] = [PASS_OPEN_REQUEST, PASS_EXTRACT, PASS_LOOP_GUARD];

/// The hook events Claude Code sends (its settings' `hooks` keys). `[events]` may name others
/// (a newer Claude Code); `hooks doctor` reports them, since a typo would make them never run.
pub const KNOWN_EVENTS: [&str; 33] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "PermissionRequest",
    "PermissionDenied",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "Elicitation",
    "ElicitationResult",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Setup",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "SessionStart",
    "SessionEnd",
    "PreModelSwitch",
    "PostModelSwitch",
    "MessageDisplay",
    "DirectoryAdded",
];

/// Log file settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// Directory of `hook.log`; default `<state>/logs`.
    pub dir: Option<PathBuf>,
    /// Rotate when the file reaches this size.
    pub max_bytes: u64,
    /// Rotated files kept (`hook.log.1` … `hook.log.<keep>`).
    pub keep: u32,
    /// Least severe level written to the file.
    pub level: LogLevel,
}

/// Effective configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// On an internal error in Stop/SubagentStop, exit 2 (message on stderr) instead of 0.
    pub blocking: bool,
    /// On SessionStart with `source: compact`, print the request's prompt and open todos.
    pub goal_reminder: bool,
    /// Passed to passes: redact secrets in what they write.
    pub redact: bool,
    /// Passed to passes: compress archives.
    pub compress: bool,
    /// How long to wait for a state lock.
    pub lock_timeout_ms: u64,
    /// Archive root; default `<state>/archive`.
    pub archive_dir: Option<PathBuf>,
    /// `[catalog] path`: the catalog file; default `<state>/catalog.db`.
    pub catalog_path: Option<PathBuf>,
    pub log: LogConfig,
    /// Event name → pass names, run in order.
    pub events: BTreeMap<String, Vec<String>>,
    /// `[pass.<name>]` tables, handed to the passes untouched.
    pub pass_options: BTreeMap<String, toml::Table>,
    /// `[redaction]`: the rules for everything the hook writes when `redact = true` (a pass's
    /// own `[pass.<name>.redact]` table replaces them for that pass).
    pub redaction: RedactOptions,
}

impl Default for Config {
    fn default() -> Self {
        let events = [
            ("UserPromptSubmit", &[PASS_OPEN_REQUEST][..]),
            ("Stop", &["snapshot", "archive", "index"][..]),
            ("SubagentStop", &[PASS_EXTRACT, "archive", "index"][..]),
            ("SessionEnd", &["archive"][..]),
            ("PreCompact", &["archive"][..]),
        ]
        .into_iter()
        .map(|(e, p)| (e.to_owned(), p.iter().map(|s| (*s).to_owned()).collect()))
        .collect();
        Self {
            blocking: false,
            goal_reminder: true,
            redact: true,
            compress: true,
            lock_timeout_ms: 3000,
            archive_dir: None,
            catalog_path: None,
            log: LogConfig {
                dir: None,
                max_bytes: 1 << 20,
                keep: 3,
                level: LogLevel::Warn,
            },
            events,
            pass_options: BTreeMap::new(),
            redaction: RedactOptions::default(),
        }
    }
}

/// Which files to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigFiles {
    /// User file (normally `~/.config/skein/config.toml`); skipped when missing.
    pub user: Option<PathBuf>,
    /// Where to look for the project's `.claude/skein.toml`.
    pub project: ProjectLookup,
    /// `--config`: must exist.
    pub explicit: Option<PathBuf>,
}

/// How the project layer is found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProjectLookup {
    /// No project layer.
    #[default]
    Disabled,
    /// Nearest `.claude/skein.toml` at or above the event's `cwd` (not at or above `home`).
    EventCwd,
    /// `<dir>/.claude/skein.toml` only.
    Dir(PathBuf),
}

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: `{key}` may not be set in a project config (it would redirect skein's files)")]
    NotAllowed { path: PathBuf, key: &'static str },
    #[error("{path}: `{key}` starts with '~' but no home directory is known")]
    NoHome { path: PathBuf, key: &'static str },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    User,
    Project,
    Explicit,
}

impl Config {
    /// The pass names configured for `event` (empty when none).
    pub fn passes_for(&self, event: &str) -> &[String] {
        self.events.get(event).map_or(&[], Vec::as_slice)
    }

    pub fn lock_timeout(&self) -> Duration {
        Duration::from_millis(self.lock_timeout_ms)
    }

    /// Applies the layers of `files` over `self`. `cwd` is the event's working directory (for
    /// [`ProjectLookup::EventCwd`]); `home` expands `~/` in paths. Returns the files read.
    pub fn load(
        mut self,
        files: &ConfigFiles,
        cwd: Option<&Path>,
        home: Option<&Path>,
    ) -> Result<(Self, Vec<PathBuf>), ConfigError> {
        let mut read = Vec::new();
        if let Some(user) = &files.user
            && self.apply_file(user, Origin::User, home, false)?
        {
            read.push(user.clone());
        }
        let project = match &files.project {
            ProjectLookup::Disabled => None,
            ProjectLookup::Dir(dir) => Some(dir.join(".claude").join("skein.toml")),
            ProjectLookup::EventCwd => cwd.and_then(|c| find_project_file(c, home)),
        };
        if let Some(p) = project
            && self.apply_file(&p, Origin::Project, home, false)?
        {
            read.push(p);
        }
        if let Some(explicit) = &files.explicit {
            self.apply_file(explicit, Origin::Explicit, home, true)?;
            read.push(explicit.clone());
        }
        Ok((self, read))
    }

    /// Applies one TOML text as a user-level layer (`path` is used for messages and to
    /// resolve relative paths).
    pub fn apply_toml(
        &mut self,
        text: &str,
        path: &Path,
        home: Option<&Path>,
    ) -> Result<(), ConfigError> {
        self.apply_text(text, path, Origin::User, home)
    }

    fn apply_file(
        &mut self,
        path: &Path,
        origin: Origin,
        home: Option<&Path>,
        required: bool,
    ) -> Result<bool, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        self.apply_text(&text, path, origin, home)?;
        Ok(true)
    }

    fn apply_text(
        &mut self,
        text: &str,
        path: &Path,
        origin: Origin,
        home: Option<&Path>,
    ) -> Result<(), ConfigError> {
        let layer: Layer = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            line: e.span().map_or(1, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            }),
            message: e.message().trim().to_owned(),
        })?;
        let resolve = |key: &'static str, raw: String| -> Result<PathBuf, ConfigError> {
            if origin == Origin::Project {
                return Err(ConfigError::NotAllowed {
                    path: path.to_owned(),
                    key,
                });
            }
            resolve_path(&raw, path, home).ok_or_else(|| ConfigError::NoHome {
                path: path.to_owned(),
                key,
            })
        };
        set(&mut self.blocking, layer.blocking);
        set(&mut self.goal_reminder, layer.goal_reminder);
        set(&mut self.redact, layer.redact);
        set(&mut self.compress, layer.compress);
        set(&mut self.lock_timeout_ms, layer.lock_timeout_ms);
        if let Some(dir) = layer.archive_dir {
            self.archive_dir = Some(resolve("archive_dir", dir)?);
        }
        if let Some(path) = layer.catalog.and_then(|c| c.path) {
            self.catalog_path = Some(resolve("catalog.path", path)?);
        }
        if let Some(log) = layer.log {
            if let Some(dir) = log.dir {
                self.log.dir = Some(resolve("log.dir", dir)?);
            }
            set(&mut self.log.max_bytes, log.max_bytes);
            set(&mut self.log.keep, log.keep);
            set(&mut self.log.level, log.level);
        }
        for (event, passes) in layer.events.unwrap_or_default() {
            self.events
                .insert(event.0, passes.into_iter().map(|p| p.0).collect());
        }
        for (pass, table) in layer.pass.unwrap_or_default() {
            self.pass_options.insert(pass.0, table);
        }
        if let Some(r) = layer.redaction {
            self.redaction = r;
        }
        Ok(())
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// `~/x` → `home/x`; relative paths are taken relative to the config file's directory.
fn resolve_path(raw: &str, config_file: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if raw == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = raw.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let p = Path::new(raw);
    if p.is_absolute() {
        Some(p.to_path_buf())
    } else {
        let base = config_file.parent().unwrap_or(Path::new("."));
        Some(base.join(p))
    }
}

fn find_project_file(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if !cwd.is_absolute() {
        return None;
    }
    for dir in cwd.ancestors() {
        if home.is_some_and(|h| h.starts_with(dir)) {
            return None; // never treat home or anything above it as a project
        }
        let candidate = dir.join(".claude").join("skein.toml");
        if candidate.is_file() {
            return Some(candidate);
        }
    }
    None
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Layer {
    blocking: Option<bool>,
    goal_reminder: Option<bool>,
    redact: Option<bool>,
    compress: Option<bool>,
    lock_timeout_ms: Option<u64>,
    archive_dir: Option<String>,
    catalog: Option<CatalogLayer>,
    log: Option<LogLayer>,
    events: Option<BTreeMap<EventName, Vec<PassName>>>,
    pass: Option<BTreeMap<PassName, toml::Table>>,
    redaction: Option<RedactOptions>,
    /// `[statusline]`: read by `skein statusline`, not by the hook (accepted here so that one
    /// config file serves both).
    #[allow(dead_code, reason = "`skein statusline` reads this table itself")]
    statusline: Option<toml::Table>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogLayer {
    path: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogLayer {
    dir: Option<String>,
    max_bytes: Option<u64>,
    keep: Option<u32>,
    level: Option<LogLevel>,
}

/// An event name: ASCII letters only (`Stop`, `SubagentStop`, …).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "String")]
struct EventName(String);

impl TryFrom<String> for EventName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic()) {
            Ok(Self(s))
        } else {
            Err(format!("invalid event name {s:?} (expected e.g. \"Stop\")"))
        }
    }
}

/// A pass name: lowercase ASCII letters, digits, `-` and `_` (it becomes part of file names).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "String")]
struct PassName(String);

impl TryFrom<String> for PassName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if ok {
            Ok(Self(s))
        } else {
            Err(format!(
                "invalid pass name {s:?} (lowercase letters, digits, '-', '_')"
            ))
        }
    }
}
