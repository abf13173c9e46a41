//! The seam between the runtime and the passes implemented elsewhere (snapshot, archive, …).
//! The binary implements [`PassRunner`] and resolves pass names from the config; the runtime
//! hands each pass a validated transcript path and the byte range that is new for that pass.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::checkpoint::ChangeKind;
use crate::config::Config;
use crate::event::{EventKind, HookEvent};
use crate::redaction::Redactors;
use crate::security::SecurityLog;
use crate::state::{RequestRecord, SNAPSHOT_FILE};

/// Everything a pass gets for one run.
#[derive(Debug, Clone, Copy)]
pub struct PassInput<'a> {
    /// The configured pass name.
    pub pass: &'a str,
    pub kind: &'a EventKind,
    /// The raw event (untrusted strings; use the validated fields below for paths/ids).
    pub event: &'a HookEvent,
    /// Validated session id.
    pub session: &'a str,
    /// Validated agent id (SubagentStop).
    pub agent_id: Option<&'a str>,
    /// The transcript this pass is about: the agent's for SubagentStop, else the main one.
    /// Validated to lie inside the Claude projects directory.
    pub transcript: Option<&'a Path>,
    /// SubagentStop: the parent (main) transcript.
    pub parent_transcript: Option<&'a Path>,
    /// What is new in `transcript` for this pass; `None` when the file does not exist (yet).
    pub change: Option<ChangeKind>,
    /// End of the last complete line: process `[start, end)` where start is `from` for
    /// `Appended`, 0 for `Rewritten`.
    pub end: u64,
    /// The current request, if any.
    pub request: Option<&'a RequestRecord>,
    pub request_dir: Option<&'a Path>,
    /// Root for archives (config `archive_dir` or `<state>/archive`).
    pub archive_dir: &'a Path,
    /// The hook's state directory.
    pub state_root: &'a Path,
    pub config: &'a Config,
    /// What this pass returned in [`PassReport::state`] the last time it succeeded on this
    /// transcript (kept with its checkpoint, so it always describes `[0, start)`); `None` the
    /// first time and whenever the transcript was rewritten.
    pub state: Option<&'a Value>,
}

impl PassInput<'_> {
    /// Where the request's session-log snapshot goes (`<request dir>/session-log.md`).
    pub fn snapshot_path(&self) -> Option<PathBuf> {
        self.request_dir.map(|d| d.join(SNAPSHOT_FILE))
    }

    /// This pass's `[pass.<name>]` table from the config, if any.
    pub fn options(&self) -> Option<&toml::Table> {
        self.config.pass_options.get(self.pass)
    }

    /// The agent type as a safe path component (e.g. `plugin:name` → `plugin_name`).
    pub fn agent_type_component(&self) -> Option<String> {
        self.event
            .agent_type
            .as_deref()
            .map(skein_store::sanitize_file_name)
    }
}

/// What a pass reports back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassReport {
    /// Logged at info level.
    pub summary: Option<String>,
    /// State to carry to the next run on this transcript (stored with the checkpoint and
    /// handed back in [`PassInput::state`]); `None` stores nothing.
    pub state: Option<Value>,
    /// Writes that redacted something and archive files created, for `security.jsonl`.
    pub security: SecurityLog,
}

/// A pass that could not run.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("unknown pass {0:?}")]
    Unknown(String),
    #[error("pass {pass} failed: {source}")]
    Failed {
        pass: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Runs passes by name. On `Ok` the runtime advances the pass's checkpoint to `input.end`;
/// on `Err` it does not, so the same bytes are offered again next time.
pub trait PassRunner {
    fn run_pass(&mut self, input: &PassInput<'_>) -> Result<PassReport, PassError>;

    /// The runner's redactor cache, shared with the runtime so one hook run compiles each rule
    /// set once; `None` lets the runtime keep its own.
    fn redactors(&mut self) -> Option<&mut Redactors> {
        None
    }
}

/// Accepts every pass and does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopPasses;

impl PassRunner for NoopPasses {
    fn run_pass(&mut self, _input: &PassInput<'_>) -> Result<PassReport, PassError> {
        Ok(PassReport::default())
    }
}

/// One call seen by [`RecordingPasses`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassCall {
    pub pass: String,
    pub event: String,
    pub transcript: Option<PathBuf>,
    pub change: Option<ChangeKind>,
    pub end: u64,
    pub request: Option<String>,
}

/// Test helper: records every call; passes named in `fail` return an error.
#[derive(Debug, Clone, Default)]
pub struct RecordingPasses {
    pub calls: Vec<PassCall>,
    pub fail: Vec<String>,
}

impl PassRunner for RecordingPasses {
    fn run_pass(&mut self, input: &PassInput<'_>) -> Result<PassReport, PassError> {
        self.calls.push(PassCall {
            pass: input.pass.to_owned(),
            event: input.kind.name().to_owned(),
            transcript: input.transcript.map(Path::to_path_buf),
            change: input.change,
            end: input.end,
            request: input.request.map(|r| r.id.clone()),
        });
        if self.fail.iter().any(|f| f == input.pass) {
            return Err(PassError::Failed {
                pass: input.pass.to_owned(),
                source: "simulated failure".into(),
            });
        }
        Ok(PassReport::default())
    }
}
