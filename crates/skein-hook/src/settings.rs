//! `skein hooks install` / `uninstall` on one Claude Code `settings.json`.
//!
//! Install appends, per event, one matcher group `{"hooks":[{"type":"command","command":…,
//! "timeout":…}]}` unless the event already has a handler with skein's command; everything
//! else in the file is left as it was (key order included). Uninstall removes exactly the
//! handlers whose `type` is `command` and whose `command` equals skein's command string, then
//! the groups, events and `hooks` object that this left empty. Before any change the old file
//! is copied to `settings.json.skein-backup`; the new file replaces the old atomically.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use skein_store::{AtomicFile, write_atomic};

/// The command written into settings.json by default.
pub const DEFAULT_COMMAND: &str = "skein hook";
/// Appended to the settings file name for the backup.
pub const BACKUP_SUFFIX: &str = ".skein-backup";

/// One hook entry to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    pub event: String,
    pub matcher: Option<String>,
    /// Seconds.
    pub timeout: u32,
}

/// The entries skein installs by default.
pub fn default_hooks() -> Vec<HookSpec> {
    let spec = |event: &str, matcher: Option<&str>, timeout| HookSpec {
        event: event.to_owned(),
        matcher: matcher.map(str::to_owned),
        timeout,
    };
    vec![
        spec("UserPromptSubmit", None, 10),
        spec("Stop", None, 30),
        spec("SubagentStop", None, 30),
        spec("PreCompact", None, 30),
        spec("SessionEnd", None, 10),
        spec("SessionStart", Some("compact"), 10),
    ]
}

/// What to install or remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallOptions {
    /// Identifies skein's handlers (exact string match).
    pub command: String,
    pub hooks: Vec<HookSpec>,
    /// Compute the result without writing anything.
    pub dry_run: bool,
}

impl Default for InstallOptions {
    fn default() -> Self {
        Self {
            command: DEFAULT_COMMAND.to_owned(),
            hooks: default_hooks(),
            dry_run: false,
        }
    }
}

/// Which settings file `--user` / `--project` mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsScope {
    /// `<claude config dir>/settings.json` (normally `~/.claude/settings.json`).
    User,
    /// `<project>/.claude/settings.json` (committed, shared with the team).
    Project,
    /// `<project>/.claude/settings.local.json` (personal).
    ProjectLocal,
}

/// The settings file for `scope`.
pub fn settings_path(scope: SettingsScope, claude_dir: &Path, project_dir: &Path) -> PathBuf {
    match scope {
        SettingsScope::User => claude_dir.join("settings.json"),
        SettingsScope::Project => project_dir.join(".claude").join("settings.json"),
        SettingsScope::ProjectLocal => project_dir.join(".claude").join("settings.local.json"),
    }
}

/// The result of an install or uninstall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsChange {
    pub path: PathBuf,
    /// Events that got (install) or lost (uninstall) a skein handler.
    pub events: Vec<String>,
    /// Whether the file content differs from before.
    pub changed: bool,
    /// Whether the file was written (false for dry runs and no-ops).
    pub written: bool,
    /// Backup written before the change.
    pub backup: Option<PathBuf>,
    /// The (would-be) new file content.
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} is not valid JSON: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {what}")]
    Shape { path: PathBuf, what: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Whether `handler` is one of skein's: `type` `command` with exactly `command`.
pub fn is_skein_handler(handler: &Value, command: &str) -> bool {
    handler["type"] == "command" && handler["command"] == command
}

/// The raw bytes of a settings file and its top-level object.
pub(crate) type Loaded = (Vec<u8>, Map<String, Value>);

/// Reads a settings file: `Ok(None)` if missing; an empty file counts as `{}`.
pub(crate) fn load(path: &Path) -> Result<Option<Loaded>, SettingsError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SettingsError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Some((bytes, Map::new())));
    }
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(Some((bytes, map))),
        Ok(_) => Err(shape(path, "top level is not a JSON object")),
        Err(source) => Err(SettingsError::Parse {
            path: path.to_owned(),
            source,
        }),
    }
}

pub(crate) fn shape(path: &Path, what: &str) -> SettingsError {
    SettingsError::Shape {
        path: path.to_owned(),
        what: what.to_owned(),
    }
}

/// Adds skein's hook entries to `path` (created if missing).
pub fn install(path: &Path, opts: &InstallOptions) -> Result<SettingsChange, SettingsError> {
    let loaded = load(path)?;
    let mut root = loaded.as_ref().map(|(_, m)| m.clone()).unwrap_or_default();
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(shape(path, "`hooks` is not an object"));
    };
    let mut events = Vec::new();
    for spec in &opts.hooks {
        let groups = hooks
            .entry(spec.event.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            return Err(shape(
                path,
                &format!("`hooks.{}` is not an array", spec.event),
            ));
        };
        let present = groups.iter().any(|g| {
            g["hooks"]
                .as_array()
                .is_some_and(|hs| hs.iter().any(|h| is_skein_handler(h, &opts.command)))
        });
        if present {
            continue;
        }
        let mut group = Map::new();
        if let Some(m) = &spec.matcher {
            group.insert("matcher".into(), Value::String(m.clone()));
        }
        group.insert(
            "hooks".into(),
            json!([{ "type": "command", "command": opts.command, "timeout": spec.timeout }]),
        );
        groups.push(Value::Object(group));
        events.push(spec.event.clone());
    }
    finish(path, loaded.map(|(b, _)| b), &root, events, opts.dry_run)
}

/// Removes skein's handlers from `path` (nothing to do when the file is missing).
pub fn uninstall(path: &Path, opts: &InstallOptions) -> Result<SettingsChange, SettingsError> {
    let Some((bytes, mut root)) = load(path)? else {
        return Ok(SettingsChange {
            path: path.to_owned(),
            events: Vec::new(),
            changed: false,
            written: false,
            backup: None,
            text: String::new(),
        });
    };
    let mut events = Vec::new();
    if let Some(hooks) = root.get_mut("hooks") {
        let Value::Object(hooks) = hooks else {
            return Err(shape(path, "`hooks` is not an object"));
        };
        hooks.retain(|event, groups| {
            let Value::Array(groups) = groups else {
                return true;
            };
            let mut removed = false;
            groups.retain_mut(|g| {
                let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                    return true;
                };
                let before = hs.len();
                hs.retain(|h| !is_skein_handler(h, &opts.command));
                let here = hs.len() != before;
                removed |= here;
                !(here && hs.is_empty())
            });
            if removed {
                events.push(event.clone());
            }
            !(removed && groups.is_empty())
        });
        if !events.is_empty() && hooks.is_empty() {
            root.retain(|k, _| k != "hooks");
        }
    }
    finish(path, Some(bytes), &root, events, opts.dry_run)
}

/// Writes `root` to `path` when `events` says something changed (and not `dry_run`): the old
/// file is first copied to `<path>.skein-backup`, the new one replaces it atomically with the
/// old file's mode. Every settings change goes through here.
pub(crate) fn finish(
    path: &Path,
    old: Option<Vec<u8>>,
    root: &Map<String, Value>,
    events: Vec<String>,
    dry_run: bool,
) -> Result<SettingsChange, SettingsError> {
    let mut text = serde_json::to_string_pretty(root).map_err(|source| SettingsError::Parse {
        path: path.to_owned(),
        source,
    })?;
    text.push('\n');
    let changed = !events.is_empty();
    let mut change = SettingsChange {
        path: path.to_owned(),
        events,
        changed,
        written: false,
        backup: None,
        text,
    };
    if !changed || dry_run {
        return Ok(change);
    }
    let werr = |source| SettingsError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(werr)?;
    }
    let mode = existing_mode(path).unwrap_or(0o644);
    if let Some(old) = old {
        let mut name = path.as_os_str().to_owned();
        name.push(BACKUP_SUFFIX);
        let backup = PathBuf::from(name);
        write_atomic(&backup, &old).map_err(werr)?;
        change.backup = Some(backup);
    }
    let mut file = AtomicFile::create(path).map_err(werr)?;
    file.set_mode(mode).map_err(werr)?;
    file.write_all(change.text.as_bytes()).map_err(werr)?;
    file.commit().map_err(werr)?;
    change.written = true;
    Ok(change)
}

#[cfg(unix)]
fn existing_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn existing_mode(_path: &Path) -> Option<u32> {
    None
}
