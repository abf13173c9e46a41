//! The hook's own log: JSON lines (`ts`, `level`, `event`, `session`, `message`) appended to
//! `hook.log`, rotated by size (`hook.log.1` … `hook.log.<keep>`) under a lock so parallel hooks
//! neither interleave lines nor rotate twice.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use skein_core::time::{format_ms, unix_ms};

use serde::{Deserialize, Serialize};
use skein_store::{FileLock, LockError};

use crate::config::LogConfig;

/// File name of the current log inside the log directory.
pub const LOG_FILE: &str = "hook.log";

/// Severity, least verbose first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Error,
    #[default]
    Warn,
    Info,
}

/// One log record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogEntry {
    pub ts: String,
    pub level: LogLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub message: String,
}

impl LogEntry {
    /// An entry written at `now`.
    pub fn new(
        now: SystemTime,
        level: LogLevel,
        event: Option<&str>,
        session: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        // Values come from untrusted input: cap their size; JSON encoding escapes the rest.
        let cap = |s: &str| s.chars().take(200).collect::<String>();
        Self {
            ts: format_ms(unix_ms(now)),
            level,
            event: event.map(cap),
            session: session.map(cap),
            message: message.into(),
        }
    }

    /// The entry as one JSON line (with the trailing newline).
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"));
        line.push('\n');
        line
    }
}

/// Why the log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot write log in {dir}: {source}")]
    Io {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Lock(#[from] LockError),
}

/// Appends the entries at or above `cfg.level` to `<dir>/hook.log`, rotating first when the
/// file has reached `cfg.max_bytes`.
pub fn append(
    dir: &Path,
    cfg: &LogConfig,
    entries: &[LogEntry],
    lock_timeout: Duration,
) -> Result<(), LogError> {
    let text: String = entries
        .iter()
        .filter(|e| e.level <= cfg.level)
        .map(LogEntry::to_line)
        .collect();
    if text.is_empty() {
        return Ok(());
    }
    let io_err = |source| LogError::Io {
        dir: dir.to_owned(),
        source,
    };
    skein_store::private::create_dir_all(dir).map_err(io_err)?;
    let _lock = FileLock::acquire(dir.join("hook.log.lock"), lock_timeout)?;
    let path = dir.join(LOG_FILE);
    let len = fs::metadata(&path).map_or(0, |m| m.len());
    if len > 0 && len + text.len() as u64 > cfg.max_bytes {
        rotate(dir, cfg.keep).map_err(io_err)?;
    }
    let mut file = skein_store::private::open_append(&path).map_err(io_err)?;
    file.write_all(text.as_bytes()).map_err(io_err)
}

/// `hook.log.{keep-1}` → `.{keep}`, …, `hook.log` → `.1`; with `keep == 0` the log is dropped.
fn rotate(dir: &Path, keep: u32) -> io::Result<()> {
    let name = |n: u32| dir.join(format!("{LOG_FILE}.{n}"));
    if keep == 0 {
        return remove_if_exists(&dir.join(LOG_FILE));
    }
    remove_if_exists(&name(keep))?;
    for n in (1..keep).rev() {
        rename_if_exists(&name(n), &name(n + 1))?;
    }
    rename_if_exists(&dir.join(LOG_FILE), &name(1))
}

fn remove_if_exists(p: &Path) -> io::Result<()> {
    match fs::remove_file(p) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

fn rename_if_exists(from: &Path, to: &Path) -> io::Result<()> {
    match fs::rename(from, to) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_and_keeps_n_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = LogConfig {
            dir: None,
            max_bytes: 300,
            keep: 2,
            level: LogLevel::Info,
        };
        for i in 0..20 {
            let e = LogEntry::new(
                SystemTime::UNIX_EPOCH,
                LogLevel::Warn,
                Some("Stop"),
                Some("s1"),
                format!("m{i}"),
            );
            append(dir.path(), &cfg, &[e], Duration::from_secs(1)).expect("append");
        }
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["hook.log", "hook.log.1", "hook.log.2", "hook.log.lock"]
        );
        let cur = fs::read_to_string(dir.path().join(LOG_FILE)).expect("read");
        assert!(cur.len() <= 300, "{}", cur.len());
        assert!(cur.trim_end().ends_with(r#""message":"m19"}"#), "{cur}");
        let line: serde_json::Value =
            serde_json::from_str(cur.lines().next().expect("line")).expect("json");
        assert_eq!(line["event"], "Stop");
        assert_eq!(line["session"], "s1");
        assert_eq!(line["level"], "warn");
    }

    #[test]
    fn level_filter_drops_info() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = LogConfig {
            dir: None,
            max_bytes: 1 << 20,
            keep: 1,
            level: LogLevel::Warn,
        };
        let e = LogEntry::new(SystemTime::UNIX_EPOCH, LogLevel::Info, None, None, "chatty");
        append(dir.path(), &cfg, &[e], Duration::from_secs(1)).expect("append");
        assert!(!dir.path().join(LOG_FILE).exists());
    }
}
