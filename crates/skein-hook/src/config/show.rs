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
/// (`lines` from [`super::lines::key_lines`] of that file), else the default. Tables are listed
/// key by key (`redaction.level`, `pass.archive.zstd_level`); arrays are one value.
pub fn entries(
    config: &Config,
    file: Option<(&Path, &BTreeMap<String, usize>)>,
    defaults: &Defaults,
) -> Vec<Entry> {
    let path = |p: &Option<PathBuf>, default: &Option<PathBuf>| {
        p.as_ref()
            .or(default.as_ref())
            .map_or(Value::Null, |p| Value::String(p.display().to_string()))
    };
    let r = &config.reports;
    let s = &config.statusline;
    // (key, value, keys whose line is the origin: a fallback table's too)
    let mut rows: Vec<(String, Value, Vec<String>)> = Vec::new();
    let mut push = |key: &str, value: Value, also: &[&str]| {
        let mut keys = vec![key.to_owned()];
        keys.extend(also.iter().map(|k| (*k).to_owned()));
        rows.push((key.to_owned(), value, keys));
    };
    push("hook.blocking", json!(config.blocking), &[]);
    push("hook.goal_reminder", json!(config.goal_reminder), &[]);
    push("hook.redact", json!(config.redact), &[]);
    push("hook.compress", json!(config.compress), &[]);
    push("hook.lock_timeout_ms", json!(config.lock_timeout_ms), &[]);
    push(
        "archive.dir",
        path(&config.archive_dir, &defaults.archive_dir),
        &[],
    );
    let level = config.archive_level.unwrap_or(defaults.archive_level);
    push("archive.level", json!(level), &[]);
    push(
        "catalog.path",
        path(&config.catalog_path, &defaults.catalog_path),
        &[],
    );
    push(
        "catalog.inline_max_bytes",
        json!(config.catalog_inline_max_bytes),
        &[],
    );
    push("catalog.background", json!(config.catalog_background), &[]);
    push("log.dir", path(&config.log.dir, &defaults.log_dir), &[]);
    push("log.max_bytes", json!(config.log.max_bytes), &[]);
    push("log.keep", json!(config.log.keep), &[]);
    push("log.level", to(&config.log.level), &[]);
    for (event, passes) in &config.events {
        push(&format!("events.{event}"), json!(passes), &[]);
    }
    for (pass, table) in &config.pass_options {
        push(&format!("pass.{pass}"), to(table), &[]);
    }
    push("redaction", to(&config.redaction), &["passes.redact"]);
    let prune = config.passes.prune.clone().unwrap_or_default();
    push("passes.prune", to(&prune), &[]);
    push(
        "passes.redact",
        to(config.command_redaction()),
        &["redaction"],
    );
    let snapshot = config.passes.snapshot.clone().unwrap_or_default();
    push("passes.snapshot", to(&snapshot), &[]);
    push("reports.timezone", json!(r.timezone), &[]);
    push("reports.format", to(&r.format), &[]);
    push("reports.pricing", path(&r.pricing, &None), &[]);
    push("statusline.format", json!(s.format), &[]);
    push("statusline.timezone", json!(s.timezone), &[]);
    push("statusline.color", json!(s.color.unwrap_or(true)), &[]);

    let origin = |keys: &[String]| -> Origin {
        file.and_then(|(path, lines)| {
            keys.iter()
                .find_map(|k| lines.get(k))
                .map(|&line| Origin::File {
                    path: path.to_owned(),
                    line,
                })
        })
        .unwrap_or(Origin::Default)
    };
    let mut out = Vec::new();
    for (key, value, keys) in rows {
        leaves(key, value, keys, &mut |key, value, keys| {
            out.push(Entry {
                key,
                value,
                origin: origin(&keys),
            });
        });
    }
    out
}

/// `value` as rows: an object key by key (its origin keys extended alike), anything else as
/// itself.
fn leaves(
    key: String,
    value: Value,
    keys: Vec<String>,
    emit: &mut dyn FnMut(String, Value, Vec<String>),
) {
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            for (field, v) in fields {
                let sub: Vec<String> = keys.iter().map(|k| format!("{k}.{field}")).collect();
                leaves(format!("{key}.{field}"), v, sub, emit);
            }
        }
        other => emit(key, other, keys),
    }
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
        // One redaction table serves both when only one is set; tables are listed by key.
        assert_eq!(get("redaction.level").value, json!("standard"));
        assert_eq!(get("redaction.level").origin, at(5));
        assert_eq!(get("redaction.disable").origin, Origin::Default);
        assert_eq!(get("passes.prune.preset").value, Value::Null);
        assert_eq!(get("events.Stop").origin, Origin::Default);
        assert_eq!(at(3).to_string(), "/c/config.toml:3");
    }
}
