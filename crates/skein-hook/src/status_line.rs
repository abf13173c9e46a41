//! `skein statusline install` / `uninstall`: the `statusLine` entry of a Claude Code
//! `settings.json`, written the way `hooks install` writes hooks (one code path: backup to
//! `settings.json.skein-backup`, atomic replace, nothing written when nothing changes).
//!
//! Install adds `"statusLine": {"type": "command", "command": …, "padding": 0}`; when the
//! file already has skein's entry it does nothing, and when it has another status line it
//! refuses unless told to replace it. Uninstall removes the entry only when it is skein's
//! (same `type` and `command`).

use std::path::Path;

use serde_json::{Value, json};

use crate::settings::{SettingsChange, SettingsError, finish, load, shape};

/// The command written into settings.json by default.
pub const DEFAULT_STATUS_COMMAND: &str = "skein statusline";

/// The settings key.
pub const KEY: &str = "statusLine";

/// What to install or remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLineOptions {
    /// The command (also how skein's entry is recognised).
    pub command: String,
    /// Replace another status line (the backup keeps it).
    pub replace: bool,
    /// Compute the result without writing anything.
    pub dry_run: bool,
}

impl Default for StatusLineOptions {
    fn default() -> Self {
        Self {
            command: DEFAULT_STATUS_COMMAND.to_owned(),
            replace: false,
            dry_run: false,
        }
    }
}

fn is_ours(entry: &Value, command: &str) -> bool {
    entry["type"] == "command" && entry["command"] == command
}

/// Sets the `statusLine` entry of `path` (created if missing) to skein's.
pub fn install_status_line(
    path: &Path,
    opts: &StatusLineOptions,
) -> Result<SettingsChange, SettingsError> {
    let loaded = load(path)?;
    let mut root = loaded.as_ref().map(|(_, m)| m.clone()).unwrap_or_default();
    let mut changed = Vec::new();
    match root.get(KEY) {
        Some(e) if is_ours(e, &opts.command) => {}
        Some(other) if !opts.replace => {
            let what = other["command"]
                .as_str()
                .map_or_else(|| other.to_string(), |c| format!("`{c}`"));
            return Err(shape(
                path,
                &format!(
                    "already has a status line ({what}); replace it with --force (the old file \
                     is kept as a backup)"
                ),
            ));
        }
        _ => {
            root.insert(
                KEY.into(),
                json!({ "type": "command", "command": opts.command, "padding": 0 }),
            );
            changed.push(KEY.to_owned());
        }
    }
    finish(path, loaded.map(|(b, _)| b), &root, changed, opts.dry_run)
}

/// Removes the `statusLine` entry of `path` when it is skein's.
pub fn uninstall_status_line(
    path: &Path,
    opts: &StatusLineOptions,
) -> Result<SettingsChange, SettingsError> {
    let Some((bytes, mut root)) = load(path)? else {
        return finish(path, None, &serde_json::Map::new(), Vec::new(), true);
    };
    let mut changed = Vec::new();
    if root.get(KEY).is_some_and(|e| is_ours(e, &opts.command)) {
        root.remove(KEY);
        changed.push(KEY.to_owned());
    }
    finish(path, Some(bytes), &root, changed, opts.dry_run)
}
