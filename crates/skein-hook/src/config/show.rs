//! The effective configuration as rows (`skein config show`): every key with its value and
//! where the value comes from. The caller fills in what only it knows (the default paths
//! under the state directory, the archive's default level) and may replace an origin by a
//! flag or an environment variable.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::Config;

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Built in.
    Default,
    /// Set in a file, on this line.
    File { path: PathBuf, line: usize },
    /// An environment variable.
    Env(String),
    /// A command-line flag.
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::File { path, line } => write!(f, "{}:{line}", path.display()),
            Self::Env(name) => write!(f, "env {name}"),
            Self::Flag(name) => write!(f, "flag {name}"),
        }
    }
}

/// One key of the effective configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Dotted key (`reports.timezone`, `events.Stop`).
    pub key: String,
    pub value: Value,
    pub origin: Origin,
}

/// Built-in values the hook crate does not own.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// `<state>/archive`.
    pub archive_dir: Option<PathBuf>,
    /// The archive's default zstd level.
    pub archive_level: i32,
    /// `<state>/catalog.db`.
    pub catalog_path: Option<PathBuf>,
    /// `<state>/logs`.
    pub log_dir: Option<PathBuf>,
}

/// Every key of `config`, in a fixed order, with its origin: the line of `file` that sets it
/// (`lines` from [`super::lines::key_lines`] of that file), else the default.
pub fn entries(
    config: &Config,
    file: Option<(&Path, &BTreeMap<String, usize>)>,
    defaults: &Defaults,
) -> Vec<Entry> {
    let origin = |keys: &[&str]| -> Origin {
        file.and_then(|(path, lines)| {
            keys.iter()
                .find_map(|k| lines.get(*k))
                .map(|&line| Origin::File {
                    path: path.to_owned(),
                    line,
                })
        })
        .unwrap_or(Origin::Default)
    };
    let path = |p: &Option<PathBuf>, default: &Option<PathBuf>| {
        p.as_ref()
            .or(default.as_ref())
            .map_or(Value::Null, |p| Value::String(p.display().to_string()))
    };
    let mut out = Vec::new();
    let mut push = |key: &str, value: Value, origin: Origin| {
        out.push(Entry {
            key: key.to_owned(),
            value,
            origin,
        });
    };
    push(
        "hook.blocking",
        json!(config.blocking),
        origin(&["hook.blocking"]),
    );
    push(
        "hook.goal_reminder",
        json!(config.goal_reminder),
        origin(&["hook.goal_reminder"]),
    );
    push(
        "hook.redact",
        json!(config.redact),
        origin(&["hook.redact"]),
    );
    push(
        "hook.compress",
        json!(config.compress),
        origin(&["hook.compress"]),
    );
    push(
        "hook.lock_timeout_ms",
        json!(config.lock_timeout_ms),
        origin(&["hook.lock_timeout_ms"]),
    );
    push(
        "archive.dir",
        path(&config.archive_dir, &defaults.archive_dir),
        origin(&["archive.dir"]),
    );
    push(
        "archive.level",
        json!(config.archive_level.unwrap_or(defaults.archive_level)),
        origin(&["archive.level"]),
    );
    push(
        "catalog.path",
        path(&config.catalog_path, &defaults.catalog_path),
        origin(&["catalog.path"]),
    );
    push(
        "log.dir",
        path(&config.log.dir, &defaults.log_dir),
        origin(&["log.dir"]),
    );
    push(
        "log.max_bytes",
        json!(config.log.max_bytes),
        origin(&["log.max_bytes"]),
    );
    push("log.keep", json!(config.log.keep), origin(&["log.keep"]));
    push("log.level", to(&config.log.level), origin(&["log.level"]));
    for (event, passes) in &config.events {
        let key = format!("events.{event}");
        push(&key, json!(passes), origin(&[&key]));
    }
    for (pass, table) in &config.pass_options {
        let key = format!("pass.{pass}");
        push(&key, to(table), origin(&[&key]));
    }
    push(
        "redaction",
        to(&config.redaction),
        origin(&["redaction", "passes.redact"]),
    );
    push(
        "passes.prune",
        to(&config.passes.prune.clone().unwrap_or_default()),
        origin(&["passes.prune"]),
    );
    push(
        "passes.redact",
        to(config.command_redaction()),
        origin(&["passes.redact", "redaction"]),
    );
    push(
        "passes.snapshot",
        to(&config.passes.snapshot.clone().unwrap_or_default()),
        origin(&["passes.snapshot"]),
    );
    let r = &config.reports;
    push(
        "reports.timezone",
        json!(r.timezone),
        origin(&["reports.timezone"]),
    );
    push("reports.format", to(&r.format), origin(&["reports.format"]));
    push(
        "reports.pricing",
        path(&r.pricing, &None),
        origin(&["reports.pricing"]),
    );
    let s = &config.statusline;
    push(
        "statusline.format",
        json!(s.format),
        origin(&["statusline.format"]),
    );
    push(
        "statusline.timezone",
        json!(s.timezone),
        origin(&["statusline.timezone"]),
    );
    push(
        "statusline.color",
        json!(s.color),
        origin(&["statusline.color"]),
    );
    out
}

/// A section as JSON (every section serialises; `Null` cannot happen in practice).
fn to<T: Serialize + ?Sized>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl Serialize for Entry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({
            "key": self.key,
            "value": self.value,
            "origin": self.origin.to_string(),
        })
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_carry_their_origin() {
        let text = "redact = false\n[reports]\ntimezone = \"Asia/Tokyo\"\n[passes.redact]\nlevel = \"standard\"\n";
        let path = Path::new("/c/config.toml");
        let mut c = Config::default();
        c.apply_toml(text, path, None).expect("parse");
        let lines = super::super::lines::key_lines(text);
        let defaults = Defaults {
            archive_level: 3,
            archive_dir: Some("/s/archive".into()),
            ..Defaults::default()
        };
        let rows = entries(&c, Some((path, &lines)), &defaults);
        let get = |k: &str| rows.iter().find(|e| e.key == k).expect(k).clone();
        let at = |line| Origin::File {
            path: path.to_owned(),
            line,
        };
        assert_eq!(get("hook.redact").value, json!(false));
        assert_eq!(get("hook.redact").origin, at(1));
        assert_eq!(get("reports.timezone").value, json!("Asia/Tokyo"));
        assert_eq!(get("reports.timezone").origin, at(3));
        assert_eq!(get("archive.dir").value, json!("/s/archive"));
        assert_eq!(get("archive.dir").origin, Origin::Default);
        assert_eq!(get("archive.level").value, json!(3));
        // One redaction table serves both when only one is set.
        assert_eq!(get("redaction").value["level"], json!("standard"));
        assert_eq!(get("redaction").origin, at(4));
        assert_eq!(get("events.Stop").origin, Origin::Default);
        assert_eq!(at(3).to_string(), "/c/config.toml:3");
    }
}
