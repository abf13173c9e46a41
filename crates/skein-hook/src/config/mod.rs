//! skein's configuration: the one owner of the config file (`$XDG_CONFIG_HOME/skein/config.toml`)
//! for the hook and every command. TOML layers (user file, project `.claude/skein.toml`,
//! explicit `--config`) apply in that order over built-in defaults. A later layer overrides only
//! the keys it sets; an `[events]` entry replaces that event's whole pass list. Every section is
//! typed (`file`, applied by `apply`); unknown keys are an error naming the file and line.
//! [`lines`] finds where a key is set, [`show`] lists the effective values with their origin,
//! [`check`] lists the problems of a file (for `skein config check` and `skein hooks doctor`).

mod apply;
pub mod check;
mod file;
pub mod lines;
mod sections;
pub mod show;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skein_redact::RedactOptions;

use crate::log::LogLevel;
pub(crate) use apply::line_at;
pub use sections::{PassPresets, ReportFormat, ReportsConfig, StatuslineConfig};

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
    /// `[archive] dir` (or the older top-level `archive_dir`): the archive root of the hook
    /// and of `skein archive`; default `<state>/archive`.
    pub archive_dir: Option<PathBuf>,
    /// `[archive] level`: zstd level of new archive frames (the hook's `[pass.archive]
    /// zstd_level` and `skein archive --zstd-level` win over it).
    pub archive_level: Option<i32>,
    /// `[catalog] path`: the catalog file; default `<state>/catalog.db`.
    pub catalog_path: Option<PathBuf>,
    /// `[catalog] inline_max_bytes`: the most new bytes `skein usage` indexes before it
    /// answers; with more (a first run over a large history) it scans the transcripts instead.
    pub catalog_inline_max_bytes: u64,
    /// `[catalog] background`: when `skein usage` scanned instead of indexing, it starts
    /// `skein index` in the background so that the next run answers from the catalog.
    pub catalog_background: bool,
    pub log: LogConfig,
    /// Event name → pass names, run in order.
    pub events: BTreeMap<String, Vec<String>>,
    /// `[pass.<name>]` tables, handed to the passes untouched.
    pub pass_options: BTreeMap<String, toml::Table>,
    /// `[redaction]`: the rules for everything the hook writes when `redact = true` and for
    /// the catalog (a pass's own `[pass.<name>.redact]` table replaces them for that pass).
    /// Without a `[redaction]` table, `[passes.redact]` serves here too.
    pub redaction: RedactOptions,
    /// `[passes.*]`: presets of the pass commands.
    pub passes: PassPresets,
    /// `[reports]`.
    pub reports: ReportsConfig,
    /// `[statusline]`.
    pub statusline: StatuslineConfig,
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
            archive_level: None,
            catalog_path: None,
            catalog_inline_max_bytes: 32 << 20,
            catalog_background: true,
            log: LogConfig {
                dir: None,
                max_bytes: 1 << 20,
                keep: 3,
                level: LogLevel::Warn,
            },
            events,
            pass_options: BTreeMap::new(),
            redaction: RedactOptions::default(),
            passes: PassPresets::default(),
            reports: ReportsConfig::default(),
            statusline: StatuslineConfig::default(),
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
    #[error("{path}:{line}: {message}")]
    Value {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

impl ConfigError {
    /// The line the error is on, when it is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Parse { line, .. } | Self::Value { line, .. } => Some(*line),
            _ => None,
        }
    }
}

impl ConfigFiles {
    /// The project layer's file for an event in `cwd`, if there is one to read.
    pub fn project_file(&self, cwd: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
        match &self.project {
            ProjectLookup::Disabled => None,
            ProjectLookup::Dir(dir) => Some(dir.join(".claude").join("skein.toml")),
            ProjectLookup::EventCwd => cwd.and_then(|c| find_project_file(c, home)),
        }
    }
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
        let mut redaction = false;
        if let Some(user) = &files.user
            && self.apply_file(user, Origin::User, home, false, &mut redaction)?
        {
            read.push(user.clone());
        }
        if let Some(p) = files.project_file(cwd, home)
            && self.apply_file(&p, Origin::Project, home, false, &mut redaction)?
        {
            read.push(p);
        }
        if let Some(explicit) = &files.explicit {
            self.apply_file(explicit, Origin::Explicit, home, true, &mut redaction)?;
            read.push(explicit.clone());
        }
        self.fall_back_redaction(redaction);
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
        let set = self.apply_text(text, path, Origin::User, home)?;
        self.fall_back_redaction(set);
        Ok(())
    }

    /// With no `[redaction]` in any layer, `[passes.redact]` is the one set of rules.
    fn fall_back_redaction(&mut self, redaction_set: bool) {
        if !redaction_set && let Some(r) = &self.passes.redact {
            self.redaction = r.clone();
        }
    }

    /// The rules `skein redact` starts from: `[passes.redact]`, else `[redaction]`.
    pub fn command_redaction(&self) -> &RedactOptions {
        self.passes.redact.as_ref().unwrap_or(&self.redaction)
    }

    fn apply_file(
        &mut self,
        path: &Path,
        origin: Origin,
        home: Option<&Path>,
        required: bool,
        redaction: &mut bool,
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
        *redaction |= self.apply_text(&text, path, origin, home)?;
        Ok(true)
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
