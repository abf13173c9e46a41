//! The security audit trail, `<state>/security.jsonl`: one line per write that redacted
//! something (the file, the rule ids and how many secrets of each; never a secret, nor where
//! it was) and one per archive file created (its path and mode). Written once per hook run,
//! under a lock, after the passes (which report their writes in
//! [`crate::PassReport::security`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use skein_store::FileLock;

use crate::state::{StateError, append_bytes, create_dir_all};

/// File name of the trail in the state directory.
pub const SECURITY_FILE: &str = "security.jsonl";

/// Secrets replaced, counted by rule id (skein-redact's audit type).
pub type Counts = skein_redact::RuleCounts;

/// Something the trail records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecurityEvent {
    /// A write that replaced secrets.
    Redacted { file: PathBuf, rules: Counts },
    /// An archive file created, with its permission bits.
    Created { file: PathBuf, mode: Option<u32> },
}

/// Collects the security events of one hook run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecurityLog {
    pub events: Vec<SecurityEvent>,
}

impl SecurityLog {
    /// Records a write to `file` that replaced `rules` (nothing when empty).
    pub fn redacted(&mut self, file: &Path, rules: Counts) {
        if !rules.is_empty() {
            self.events.push(SecurityEvent::Redacted {
                file: file.to_path_buf(),
                rules,
            });
        }
    }

    /// Records a new archive file.
    pub fn created(&mut self, file: &Path, mode: Option<u32>) {
        self.events.push(SecurityEvent::Created {
            file: file.to_path_buf(),
            mode,
        });
    }
}

#[derive(Serialize)]
struct Line<'a> {
    ts: &'a str,
    event: &'a str,
    session: Option<&'a str>,
    action: &'static str,
    /// Relative to the state directory when inside it.
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rules: Option<&'a Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
}

/// Where the lines go and what labels them.
#[derive(Debug, Clone, Copy)]
pub struct Labels<'a> {
    pub ts: &'a str,
    pub event: &'a str,
    pub session: Option<&'a str>,
}

/// Appends `events` to `<state_root>/security.jsonl` (mode 0600) under its lock.
pub fn append(
    state_root: &Path,
    labels: Labels<'_>,
    events: &[SecurityEvent],
    lock_timeout: Duration,
) -> Result<(), StateError> {
    if events.is_empty() {
        return Ok(());
    }
    let rel = |p: &Path| {
        p.strip_prefix(state_root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let mut text = String::new();
    for e in events {
        let line = match e {
            SecurityEvent::Redacted { file, rules } => Line {
                ts: labels.ts,
                event: labels.event,
                session: labels.session,
                action: "redacted",
                file: rel(file),
                rules: Some(rules),
                total: Some(rules.total()),
                mode: None,
            },
            SecurityEvent::Created { file, mode } => Line {
                ts: labels.ts,
                event: labels.event,
                session: labels.session,
                action: "created",
                file: rel(file),
                rules: None,
                total: None,
                mode: mode.map(|m| format!("{m:04o}")),
            },
        };
        if let Ok(s) = serde_json::to_string(&line) {
            text.push_str(&s);
            text.push('\n');
        }
    }
    create_dir_all(state_root)?;
    let _lock = FileLock::acquire(state_root.join("security.lock"), lock_timeout)?;
    append_bytes(&state_root.join(SECURITY_FILE), text.as_bytes())
}
